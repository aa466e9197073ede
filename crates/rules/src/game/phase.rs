//! Where a game stands (scheduled, running, paused and by whom, finished): the state's
//! coarsest part, which the view shows and every decision checks first. Its own file
//! rather than `outcome.rs`: a phase is not a result, and a paused game has none.

use serde::{Deserialize, Serialize};

use super::super::color::Color;

/// Who stopped the clocks (6.12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum PausedBy {
    /// 6.12a: the arbiter interrupted the game.
    Arbiter { arbiter: String, reason: String },
    /// 6.12b: a player stopped the clocks to summon the arbiter.
    Player { side: Color },
    /// Guidelines I / A1a: the game is adjourned; both clocks stand still until the
    /// resumption session (the view's `adjournment` says more).
    Adjourned,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Before the scheduled start.
    Scheduled,
    Running,
    Paused(PausedBy),
    Finished,
}

pub(super) fn describe_pause(by: &PausedBy) -> String {
    match by {
        PausedBy::Arbiter { arbiter, reason } => format!("paused by arbiter {arbiter}: {reason}"),
        PausedBy::Player { side } => format!("stopped by {side} to summon the arbiter"),
        PausedBy::Adjourned => "adjourned".to_string(),
    }
}
