//! What is wrong with a TRF, and where: the line, the columns (numbered as in FIDE's TRF
//! document, 1-based, counting characters) and the field's name.

use std::fmt;

/// Where a problem is. `columns` and `field` are absent for whole-line or whole-file
/// problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// 1-based line number; 0 for the file as a whole.
    pub line: usize,
    /// First and last column (inclusive).
    pub columns: Option<(usize, usize)>,
    pub field: Option<&'static str>,
}

impl Position {
    pub fn line(line: usize) -> Position {
        Position {
            line,
            columns: None,
            field: None,
        }
    }

    pub fn field(line: usize, first: usize, last: usize, field: &'static str) -> Position {
        Position {
            line,
            columns: Some((first, last)),
            field: Some(field),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str("the file")?;
        } else {
            write!(f, "line {}", self.line)?;
        }
        match self.columns {
            Some((a, b)) if a == b => write!(f, ", column {a}")?,
            Some((a, b)) => write!(f, ", columns {a}–{b}")?,
            None => {}
        }
        if let Some(name) = self.field {
            write!(f, " ({name})")?;
        }
        Ok(())
    }
}

/// The kinds of problem. Values are quoted as the file has them (escaped for logs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrfErrorKind {
    /// The file is not a Tournament Report File at all.
    NotATrf {
        why: &'static str,
    },
    /// A required field left blank.
    Missing,
    NotANumber {
        value: String,
    },
    OutOfRange {
        value: String,
        min: u64,
        max: u64,
    },
    /// A one-of field (sex, colour, result) with a value outside its set.
    NotOneOf {
        value: String,
        expected: &'static str,
    },
    /// Points not in the `11.5` format.
    BadPoints {
        value: String,
    },
    /// Tag 222 that is not a TRF26 encoded time control.
    BadTimeControl {
        value: String,
        why: String,
    },
    /// Text after the last round block.
    TrailingText {
        value: String,
    },
    DuplicateRank {
        rank: u32,
        first_line: usize,
    },
    UnknownOpponent {
        rank: u32,
    },
    PlaysItself,
    /// A round entry that contradicts itself (an opponent with no colour, …).
    Inconsistent {
        why: &'static str,
    },
    /// The two halves of a pairing disagree.
    PairingDisagrees {
        round: usize,
        opponent: u32,
        opponent_line: usize,
        why: &'static str,
    },
    /// A value to write that does not fit its columns (never truncated).
    DoesNotFit {
        value: String,
    },
    /// A round or player asked for that the file does not have.
    NoSuchRound {
        round: usize,
    },
    NoSuchPlayer {
        rank: u32,
    },
    /// A board order that names a player without a game in the round.
    NotPaired {
        rank: u32,
        round: usize,
    },
    /// A board order that names the same game twice.
    OrderedTwice {
        rank: u32,
    },
}

/// A problem in a TRF: what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfError {
    pub kind: TrfErrorKind,
    pub position: Position,
}

impl TrfError {
    pub fn new(kind: TrfErrorKind, position: Position) -> TrfError {
        TrfError { kind, position }
    }

    pub fn position(&self) -> &Position {
        &self.position
    }
}

/// A value from the file as it may appear in a message or a log line: control characters
/// and quotes escaped, long values cut.
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 60 {
            out.push('…');
            break;
        }
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&c.escape_default().to_string()),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for TrfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TrfErrorKind as K;
        if let K::NotATrf { why } = &self.kind {
            return write!(f, "not a Tournament Report File (TRF): {why}");
        }
        write!(f, "{}: ", self.position)?;
        match &self.kind {
            K::NotATrf { .. } => Ok(()),
            K::Missing => f.write_str("missing (this field is required)"),
            K::NotANumber { value } => write!(f, "'{}' is not a number", quote(value)),
            K::OutOfRange { value, min, max } => {
                write!(f, "'{}' is out of range ({min} to {max})", quote(value))
            }
            K::NotOneOf { value, expected } => {
                write!(f, "'{}' is not one of {expected}", quote(value))
            }
            K::BadPoints { value } => write!(
                f,
                "'{}' is not a score in the format 11.5 (halves only)",
                quote(value)
            ),
            K::BadTimeControl { value, why } => write!(
                f,
                "'{}' is not an encoded time control (e.g. 40/6000+30:900+30 or W300-B240): {why}",
                quote(value)
            ),
            K::TrailingText { value } => write!(
                f,
                "'{}' after the last round (round blocks are 10 columns wide from column 92)",
                quote(value)
            ),
            K::DuplicateRank { rank, first_line } => write!(
                f,
                "starting rank {rank} is already used on line {first_line}"
            ),
            K::UnknownOpponent { rank } => {
                write!(f, "opponent {rank} has no player line (001)")
            }
            K::PlaysItself => f.write_str("a player cannot be paired with himself"),
            K::Inconsistent { why } => f.write_str(why),
            K::PairingDisagrees {
                round,
                opponent,
                opponent_line,
                why,
            } => write!(
                f,
                "round {round}: the pairing with {opponent} (line {opponent_line}) disagrees: {why}"
            ),
            K::DoesNotFit { value } => {
                write!(
                    f,
                    "'{}' does not fit (values are never truncated)",
                    quote(value)
                )
            }
            K::NoSuchRound { round } => write!(f, "round {round} is not in the file"),
            K::NoSuchPlayer { rank } => write!(f, "no player with starting rank {rank}"),
            K::NotPaired { rank, round } => {
                write!(f, "player {rank} has no game to play in round {round}")
            }
            K::OrderedTwice { rank } => write!(
                f,
                "player {rank}'s game is already placed on an earlier board"
            ),
        }
    }
}

impl std::error::Error for TrfError {}
