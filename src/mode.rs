//! How the daemon treats a board's clock (issue 24, docs/OPERATIONS.md "Control or
//! observe"): a leaf, so the configuration, the intake's `set_mode` command and the board
//! actor share one vocabulary.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardMode {
    /// The daemon sets and runs the clock; its reckoning is the official time.
    #[default]
    Control,
    /// The arbiters set the clock by hand; the daemon never sends it a command and takes
    /// its times as the official ones, reporting what does not add up.
    Observe,
}

impl BoardMode {
    pub fn name(self) -> &'static str {
        match self {
            BoardMode::Control => "control",
            BoardMode::Observe => "observe",
        }
    }
}
