//! Why `decide` refuses an input (`Rejection`): each reason a sender must read, typed,
//! so the shell can answer it without parsing strings.

use serde::{Serialize, Serializer};

use super::super::adjournment::{NonceError, SealTextError};
use super::super::color::Color;
use super::super::fen::FenError;
use super::super::millis::Millis;

/// Why a move's text is not a move in the position (`parse_move`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// A move, but not a legal one here.
    #[error("illegal in this position")]
    Illegal,
    /// Neither notation reads it.
    #[error("neither SAN (e.g. Nf3) nor UCI (e.g. g1f3)")]
    Unreadable,
    /// SAN that fits more than one legal move.
    #[error("ambiguous")]
    Ambiguous,
}

/// A typed reason serialised as the sentence it displays: senders read the text (the
/// JSON is the same as when the reasons were strings).
fn as_text<S: Serializer>(reason: &impl std::fmt::Display, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(reason)
}

/// Why an input was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "rejection", rename_all = "snake_case")]
pub enum Rejection {
    #[error("the game has not started yet (scheduled start {})", start.utc())]
    NotStarted { start: Millis },
    #[error("the game is over ({result})")]
    GameOver { result: String },
    #[error("the clocks are stopped ({by}); only the arbiter restarts them (6.12c)")]
    Paused { by: String },
    #[error("the clocks are not stopped")]
    NotPaused,
    #[error("{side}'s clock is not running; it is {running}'s turn")]
    NotYourTurn { side: Color, running: Color },
    #[error(
        "the clock is stopped after a flag; the arbiter decides (confirm_flag, set_time or set_result)"
    )]
    Frozen,
    #[error("the position is not known; the arbiter can set it (set_position)")]
    PositionUnknown,
    #[error("'{mv}' is not a move in this position: {reason}")]
    BadMove {
        mv: String,
        #[serde(serialize_with = "as_text")]
        reason: MoveError,
    },
    #[error("{side} has made a move that is not completed yet; press the clock first")]
    MovePending { side: Color },
    #[error("no flag is waiting for the arbiter")]
    NoPendingFlag,
    #[error("no clock discrepancy is open on this game")]
    NoDiscrepancy,
    #[error("6.9 cannot be decided here: {reason}; set the position or the result")]
    VerdictUnknown { reason: String },
    #[error("{field}: {value} is out of range ({allowed})")]
    OutOfRange {
        field: &'static str,
        value: i64,
        allowed: String,
    },
    #[error("fen: {reason}")]
    BadFen {
        #[serde(serialize_with = "as_text")]
        reason: FenError,
    },
    #[error("{what} requires a reason")]
    ReasonRequired { what: &'static str },
    #[error("the arbiter's id is required")]
    ArbiterRequired,
    #[error("the game is adjourned (A1a: both clocks stand still until the resumption{})", resumes.map(|t| format!(" at {}", t.utc())).unwrap_or_default())]
    Adjourned { resumes: Option<Millis> },
    #[error(
        "I.1.1: after the order to seal, a move made on the board is {side}'s sealed move; it is not played but sealed (seal with on_board)"
    )]
    MoveIsTheSealedMove {
        side: Color,
        /// For the shell to seal; never serialised (rejections go back to senders).
        #[serde(skip_serializing)]
        mv: String,
    },
    #[error("I.1.1: {side} must seal a move (seal) before stopping the clock")]
    SealFirst { side: Color },
    #[error(
        "I.1.1: the move made on the board after the order is the sealed move; it cannot be replaced"
    )]
    SealIsFinal,
    #[error("{side} is not the player who must seal ({sealer})")]
    NotTheSealer { side: Color, sealer: Color },
    #[error("nonce: {reason}")]
    BadNonce {
        #[serde(serialize_with = "as_text")]
        reason: NonceError,
    },
    #[error("sealed move: {reason}")]
    BadSealText {
        #[serde(serialize_with = "as_text")]
        reason: SealTextError,
    },
    #[error(
        "I.7: the envelope opens only when {side}, who must respond to the sealed move, is present"
    )]
    ResponderAbsent { side: Color },
    #[error("the move and nonce do not match envelope {envelope}'s commitment; it stays sealed")]
    CommitmentMismatch { envelope: u32 },
    #[error("{reason}")]
    NotInThisStage { reason: String },
    #[error(
        "the sealed move has not been played yet: the envelope must be opened first (I.7, I.9)"
    )]
    EnvelopeNotOpened,
    #[error(
        "I.13: times are corrected this way only before the first move after resumption; use set_time or add_time with a reason (6.13)"
    )]
    CorrectionWindowClosed,
    #[error("no draw offer stands")]
    NoDrawOffer,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_reasons_are_sent_as_their_sentences() {
        let cases = [
            (
                Rejection::BadMove {
                    mv: "e2e5".into(),
                    reason: MoveError::Illegal,
                },
                json!({"rejection": "bad_move", "mv": "e2e5", "reason": "illegal in this position"}),
            ),
            (
                Rejection::BadFen {
                    reason: FenError::Syntax {
                        field: "piece placement (field 1)",
                        detail: "3 ranks, not 8".into(),
                    },
                },
                json!({"rejection": "bad_fen", "reason": "piece placement (field 1): 3 ranks, not 8"}),
            ),
            (
                Rejection::BadNonce {
                    reason: NonceError::Length(8),
                },
                json!({"rejection": "bad_nonce", "reason": "the nonce must be 16 to 64 random bytes, got 8"}),
            ),
            (
                Rejection::BadSealText {
                    reason: SealTextError::Empty,
                },
                json!({"rejection": "bad_seal_text", "reason": "the sealed move is empty"}),
            ),
        ];
        for (rejection, want) in cases {
            assert_eq!(serde_json::to_value(&rejection).ok(), Some(want));
        }
        assert_eq!(
            Rejection::BadMove {
                mv: "Nd2".into(),
                reason: MoveError::Ambiguous,
            }
            .to_string(),
            "'Nd2' is not a move in this position: ambiguous"
        );
    }
}
