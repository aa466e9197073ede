//! What is fixed before a game (6.2a: "specified in advance"): the setup `Game::new`
//! validates, and how it refuses one. Apart from the game's behaviour so that the shell,
//! which reads setups from the event's configuration, depends on these types alone.

use serde::{Deserialize, Serialize};

use super::super::color::Color;
use super::super::fen::FenError;
use super::super::millis::Millis;
use super::super::time_control::{ClockOptions, TimeControl};

/// How a flag becomes a result (6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagMode {
    /// The daemon is the arbiter's instrument: the flag is observed the instant the time
    /// runs out and the result is applied at once.
    #[default]
    Auto,
    /// The flag is published; the result waits for the arbiter's `confirm_flag`.
    Claim,
}

/// What happens when default time passes with both players absent (6.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BothAbsent {
    /// Both lose (0-0).
    #[default]
    BothLose,
    /// The arbiter decides (`set_result`).
    Arbiter,
}

/// A player's FIDE title and rating as the pairing gave them: shown on the hall screens,
/// never ruled on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<u32>,
}

impl PlayerInfo {
    pub fn is_blank(&self) -> bool {
        self.title.is_none() && self.rating.is_none()
    }
}

/// Everything fixed before the game (6.2a: "specified in advance").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub white: String,
    pub black: String,
    /// The control for both colours, or White's when `tc_black` is set (time odds).
    pub tc: TimeControl,
    pub tc_black: Option<TimeControl>,
    /// Scheduled start (6.5).
    pub start: Millis,
    /// Default time (6.6), measured from the scheduled start; 0 = zero tolerance. A
    /// player who arrives at the default instant itself is in time ("more than").
    pub default_time: Millis,
    /// Whether the clocks' pauses (6.12) before a player's arrival move the default
    /// instant back. 6.6 measures lateness from the scheduled start, so by default they
    /// do not; an event's rules may say otherwise (6.6: "unless the regulations ...").
    #[serde(default)]
    pub pauses_extend_default_time: bool,
    pub both_absent: BothAbsent,
    pub flag_mode: FlagMode,
    pub clock: ClockOptions,
    /// Starting position; `None` = the standard initial position.
    pub fen: Option<String>,
    /// A clock reading further than this from the reckoning is reported (6.10).
    pub discrepancy_margin: Millis,
    /// Observe mode (issue 24): the clock is set by hand and only read, its times are the
    /// official ones (`clock_times`), and flags are claimed (`Game::new` forces
    /// `FlagMode::Claim`: the software cannot know the clock was set right). Kept with
    /// the game, so a restart, the journal's PGN and the broadcast know it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub observed: bool,
    /// The event's piece letters (`[defaults] piece_letters`): sealed moves are read in
    /// them (I.8) unless the arbiter sets the game's adjournment rules otherwise. English
    /// (the default) is not written, so older journals read the same.
    #[serde(default, skip_serializing_if = "is_english")]
    pub piece_letters: crate::adjournment::NotationLanguage,
    /// The players' titles and ratings, when the pairing has them (not written when
    /// blank, so older journals read the same).
    #[serde(default, skip_serializing_if = "PlayerInfo::is_blank")]
    pub white_info: PlayerInfo,
    #[serde(default, skip_serializing_if = "PlayerInfo::is_blank")]
    pub black_info: PlayerInfo,
}

fn is_english(l: &crate::adjournment::NotationLanguage) -> bool {
    *l == crate::adjournment::NotationLanguage::En
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Setup {
    /// A FIDE-default setup: 60 min default time (the text of 6.6), automatic flags,
    /// DGT-style clock options.
    pub fn new(white: &str, black: &str, tc: TimeControl, start: Millis) -> Setup {
        Setup {
            white: white.into(),
            black: black.into(),
            tc,
            tc_black: None,
            start,
            default_time: Millis::from_mins(60),
            pauses_extend_default_time: false,
            both_absent: BothAbsent::BothLose,
            flag_mode: FlagMode::Auto,
            clock: ClockOptions::default(),
            fen: None,
            discrepancy_margin: Millis(2000),
            observed: false,
            piece_letters: crate::adjournment::NotationLanguage::En,
            white_info: PlayerInfo::default(),
            black_info: PlayerInfo::default(),
        }
    }
}

/// A setup that cannot start a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("{color}'s time control: {reason}")]
    TimeControl { color: Color, reason: &'static str },
    #[error("fen: {0}")]
    Fen(FenError),
    #[error("default time cannot be negative")]
    NegativeDefaultTime,
}
