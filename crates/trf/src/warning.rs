//! What the reader skipped, and where: lines a pairing program would skip too. Each is
//! kept byte for byte when the file is written back; the warning only tells the arbiter.

use std::fmt;

use super::error::quote;

/// A line the reader skipped. Blank lines and `###` comments are skipped without one.
/// Serialised as data (`{"code", "params"}`) for a page in another language; `Display`
/// is the English.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "code", content = "params", rename_all = "snake_case")]
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
    /// A round paired with an opponent but the colour `-`: how older programs (and FIDE's
    /// own example file) write a game not played over the board. Read as not played on a
    /// board; the round's result and the player's other rounds are kept.
    PairedWithoutColour {
        line: usize,
        /// 1-based round.
        round: usize,
        /// The opponent's starting rank.
        opponent: u32,
    },
}

impl TrfWarning {
    /// The 1-based line the warning is about.
    pub fn line(&self) -> usize {
        match self {
            TrfWarning::NotARecord { line, .. }
            | TrfWarning::UnknownRecord { line, .. }
            | TrfWarning::PairedWithoutColour { line, .. } => *line,
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
            TrfWarning::PairedWithoutColour {
                line,
                round,
                opponent,
            } => write!(
                f,
                "line {line}: round {round} is paired with player {opponent} with the colour '-' (as older programs write a forfeit): read as a game not played on a board, its result kept"
            ),
        }
    }
}
