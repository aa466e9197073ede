//! How a game ended: the score, why (`Termination`), and the results only the arbiter
//! records. Its own file rather than `event.rs`: the result is carried by an event
//! (`GameEnded`), by an input (`SetResult`), by the view and by the PGN and TRF exports,
//! so it is vocabulary of its own, not a part of the event log.

use serde::{Deserialize, Serialize};

use super::super::adjournment::SealedVerdict;
use super::super::color::Color;

/// The score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
    /// Both lose (double default).
    #[serde(rename = "0-0")]
    BothLose,
    #[serde(rename = "annulled")]
    Annulled,
}

impl Score {
    pub fn win_for(c: Color) -> Score {
        match c {
            Color::White => Score::WhiteWins,
            Color::Black => Score::BlackWins,
        }
    }
}

/// Why the game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "termination", rename_all = "snake_case")]
pub enum Termination {
    /// 5.1: the move that ended the game, without a press (6.7a).
    Checkmate,
    Stalemate,
    /// 5.2.2 / 9.6: neither side can mate any more.
    DeadPosition,
    /// 9.6.2.
    SeventyFiveMoves,
    /// 9.6.1.
    FivefoldRepetition,
    /// 6.9: the flagged side loses.
    Flag {
        side: Color,
    },
    /// 6.9: flag, but the opponent cannot mate by any series of legal moves.
    FlagOpponentCannotMate {
        side: Color,
    },
    /// 6.6: absent when default time passed.
    Default {
        absent: Vec<Color>,
    },
    /// I.8: the sealed move was ambiguous, meaningless or illegal; `side` sealed it.
    InvalidSealedMove {
        side: Color,
        verdict: SealedVerdict,
    },
    /// I.8 with the exception of 6.9: the sealed move was invalid, but the opponent could
    /// not mate by any series of legal moves.
    InvalidSealedMoveOpponentCannotMate {
        side: Color,
        verdict: SealedVerdict,
    },
    /// Set by the arbiter: agreed draw, resignation, illegal moves, annulment, other.
    Arbiter {
        kind: ArbiterResult,
        arbiter: String,
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    pub score: Score,
    #[serde(flatten)]
    pub termination: Termination,
}

/// Results only the arbiter records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArbiterResult {
    AgreedDraw,
    Resignation {
        side: Color,
    },
    /// 7.5.5: the offender loses, unless the opponent cannot mate (draw).
    IllegalMoves {
        side: Color,
    },
    Annulled,
    /// Any other decision, stated as a score (e.g. 6.6 "unless the arbiter decides
    /// otherwise").
    Score {
        score: Score,
    },
}

/// `1-0 (flag: black)`, for messages.
pub fn describe_result(r: &GameResult) -> String {
    let score = match r.score {
        Score::WhiteWins => "1-0",
        Score::BlackWins => "0-1",
        Score::Draw => "1/2-1/2",
        Score::BothLose => "0-0",
        Score::Annulled => "annulled",
    };
    let why = match &r.termination {
        Termination::Checkmate => "checkmate".to_string(),
        Termination::Stalemate => "stalemate".to_string(),
        Termination::DeadPosition => "dead position".to_string(),
        Termination::SeventyFiveMoves => "75-move rule".to_string(),
        Termination::FivefoldRepetition => "fivefold repetition".to_string(),
        Termination::Flag { side } => format!("{side}'s flag fell"),
        Termination::FlagOpponentCannotMate { side } => {
            format!("{side}'s flag fell, opponent cannot mate")
        }
        Termination::Default { absent } => format!(
            "default: {} absent",
            absent
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Termination::InvalidSealedMove { side, verdict } => {
            format!("{side}'s sealed move is {}", verdict.describe())
        }
        Termination::InvalidSealedMoveOpponentCannotMate { side, verdict } => format!(
            "{side}'s sealed move is {}, opponent cannot mate",
            verdict.describe()
        ),
        Termination::Arbiter { reason, .. } => format!("arbiter: {reason}"),
    };
    format!("{score}, {why}")
}
