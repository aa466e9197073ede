//! The board's batteries as the link last reported them, and the words of the
//! `low_battery` alert (FIDE C.02 (f), C.02.03 3.1.1–3.1.2). Sans-IO: the actor raises or
//! clears what [`Battery::alert`] says.
//!
//! * The clock (DGT3000/XL): only its low-battery bit (status D2, dgt-protocol.md §4.2),
//!   reported by the link at the first reading of each session and on every change.
//! * A Bluetooth board: a percentage, when it sends `a0` (§4). It is low below
//!   [`BOARD_LOW_PERCENT`] while it is not charging.
//!
//! Nothing is forgotten when the board goes offline: a battery that was low is still low
//! as far as anyone knows, and the next session's first reading settles it.

use crate::dgt::BatteryStatus;

/// A Bluetooth board below this percentage (and not charging) is called low. DGT states
/// no figure; 20 % leaves a round's worth on a board that runs for days on a charge.
pub const BOARD_LOW_PERCENT: u8 = 20;

/// What the link last said about the batteries.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Battery {
    /// The clock's low-battery bit; `None` before the first reading.
    clock_low: Option<bool>,
    /// The Bluetooth board's percentage (0–100); `None` when it never reported one.
    board_percent: Option<u8>,
    board_charging: bool,
}

impl Battery {
    pub fn clock(&mut self, low: bool) {
        self.clock_low = Some(low);
    }

    pub fn board(&mut self, status: &BatteryStatus) {
        // Above 100 is no percentage (0x7f stands for "not available" in `a0`).
        self.board_percent = (status.percent <= 100).then_some(status.percent);
        self.board_charging = status.charging();
    }

    /// The board's percentage when it is low enough to say.
    fn board_low(&self) -> Option<u8> {
        self.board_percent
            .filter(|p| *p < BOARD_LOW_PERCENT && !self.board_charging)
    }

    /// The alert's message while a battery is low, `None` when all reported are fine (or
    /// nothing was reported yet).
    pub fn alert(&self, board: &str) -> Option<crate::alert::Said> {
        use serde_json::json;
        let clock = self.clock_low == Some(true);
        let said = |code, message: String| {
            let percent = self.board_low();
            crate::alert::Said::new(code, json!({ "board": board, "percent": percent }), message)
        };
        let message = self.alert_message(board)?;
        Some(match (clock, self.board_low()) {
            (true, None) => said("low_battery.clock", message),
            (true, Some(_)) => said("low_battery.both", message),
            _ => said("low_battery.board", message),
        })
    }

    fn alert_message(&self, board: &str) -> Option<String> {
        let clock = self.clock_low == Some(true);
        match (clock, self.board_low()) {
            (true, None) => Some(format!(
                "{board}: the clock's battery is low: change it before the next round (FIDE C.02: at least 10 h remain after the warning)"
            )),
            (true, Some(p)) => Some(format!(
                "{board}: the clock's battery is low: change it before the next round (FIDE C.02: at least 10 h remain after the warning); the board's battery is at {p} %: charge it too"
            )),
            (false, Some(p)) => Some(format!(
                "{board}: the board's battery is at {p} %: charge it before the next round"
            )),
            (false, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bt(percent: u8, status: u8) -> BatteryStatus {
        BatteryStatus {
            percent,
            status,
            ..BatteryStatus::default()
        }
    }

    #[test]
    fn the_clock_bit_raises_and_clears_in_words_naming_the_board() {
        let mut b = Battery::default();
        assert_eq!(b.alert_message("board-007"), None, "nothing read yet");
        b.clock(true);
        assert_eq!(
            b.alert_message("board-007").as_deref(),
            Some(
                "board-007: the clock's battery is low: change it before the next round (FIDE C.02: at least 10 h remain after the warning)"
            )
        );
        b.clock(false);
        assert_eq!(b.alert_message("board-007"), None);
    }

    #[test]
    fn a_bluetooth_board_below_the_threshold_and_not_charging_is_low_too() {
        let mut b = Battery::default();
        b.board(&bt(BOARD_LOW_PERCENT, 0x02));
        assert_eq!(b.alert_message("b1"), None, "at the threshold: fine");
        b.board(&bt(15, 0x02));
        assert_eq!(
            b.alert_message("b1").as_deref(),
            Some("b1: the board's battery is at 15 %: charge it before the next round")
        );
        b.clock(true);
        let both = b.alert_message("b1").unwrap_or_default();
        assert!(both.starts_with("b1: the clock's battery is low"), "{both}");
        assert!(
            both.ends_with("the board's battery is at 15 %: charge it too"),
            "{both}"
        );
        // Charging: being dealt with.
        b.clock(false);
        b.board(&bt(15, 0x01));
        assert_eq!(b.alert_message("b1"), None);
        // 0x7f: no percentage.
        b.board(&bt(0x7f, 0x02));
        assert_eq!(b.alert_message("b1"), None);
    }
}
