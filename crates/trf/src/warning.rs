//! What the reader skipped, and where: lines a pairing program would skip too. Each is
//! kept byte for byte when the file is written back; the warning only tells the arbiter.

use std::fmt;

use super::error::quote;

/// A line the reader skipped. Blank lines and `###` comments are skipped without one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrfWarning {
    /// A line that does not start with a record code: a column ruler such as
    /// `1234567890…` in FIDE's own example file, or a program's note.
    NotARecord {
        /// 1-based line number.
        line: usize,
        /// The line as found.
        text: String,
    },
    /// A record code that neither FIDE's TRF nor the pairing engines define: a program's
    /// own record, or one from a later TRF.
    UnknownRecord { line: usize, code: String },
}

impl TrfWarning {
    /// The 1-based line the warning is about.
    pub fn line(&self) -> usize {
        match self {
            TrfWarning::NotARecord { line, .. } | TrfWarning::UnknownRecord { line, .. } => *line,
        }
    }
}

impl fmt::Display for TrfWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrfWarning::NotARecord { line, text } => write!(
                f,
                "line {line}: not a TRF record, skipped (kept as it is): '{}'",
                quote(text)
            ),
            TrfWarning::UnknownRecord { line, code } => write!(
                f,
                "line {line}: unknown record code '{}', skipped (kept as it is)",
                quote(code)
            ),
        }
    }
}
