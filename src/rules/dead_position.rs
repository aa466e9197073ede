//! 6.9 / 5.2.2: can a side still checkmate by any series of legal moves?
//! (Interim: static material only; replaced by the chasolver-backed version.)

use serde::Serialize;
use shakmaty::{Chess, Position};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum MateVerdict {
    CanMate {
        helpmate: Vec<String>,
        helpmate_san: Vec<String>,
    },
    CannotMate {
        proof: String,
    },
    Unknown {
        reason: String,
    },
}

pub fn can_mate(pos: &Chess, winner: shakmaty::Color) -> MateVerdict {
    if pos.has_insufficient_material(winner) {
        MateVerdict::CannotMate {
            proof: "insufficient_material".into(),
        }
    } else {
        MateVerdict::Unknown {
            reason: "interim".into(),
        }
    }
}

pub fn is_dead_position(pos: &Chess) -> bool {
    pos.is_insufficient_material()
}
