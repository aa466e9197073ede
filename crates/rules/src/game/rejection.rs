//! Why `decide` refuses an input (`Rejection`): each reason a sender must read, typed,
//! so the shell can answer it without parsing strings.

use serde::Serialize;

use super::super::color::Color;
use super::super::millis::Millis;

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
    BadMove { mv: String, reason: String },
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
    BadFen { reason: String },
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
    BadNonce { reason: String },
    #[error("sealed move: {reason}")]
    BadSealText { reason: String },
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
