//! What the clock says, inside board → host `8d` messages: readings ([`ClockTime`],
//! dgt-protocol.md §4.2), ACKs ([`ClockAck`], §5.2) and DGT3000 buttons ([`ClockButton`],
//! §6); and the clock sub-command ids ([`clock_cmd`], §5.1), which are also the `ack1` of
//! their replies. The commands the host sends the clock are in [`crate::dgt::command`];
//! the `8d` framing is in [`crate::dgt::message`].

use serde::{Deserialize, Serialize};

/// Clock sub-command ids (§5.1); also the `ack1` of their replies (§5.2).
pub mod clock_cmd {
    pub const DISPLAY: u8 = 0x01;
    pub const ICONS: u8 = 0x02;
    pub const END: u8 = 0x03;
    pub const BUTTON: u8 = 0x08;
    pub const VERSION: u8 = 0x09;
    pub const SET_AND_RUN: u8 = 0x0a;
    pub const BEEP: u8 = 0x0b;
    pub const ASCII: u8 = 0x0c;
}

/// One side of a clock reading (§4.2). Resolution is one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SideTime {
    /// 0..=9.
    pub hours: u8,
    /// 0..=59.
    pub minutes: u8,
    /// 0..=59.
    pub seconds: u8,
    /// Flag fallen and the clock blocked at zero (hours byte bit 4).
    pub final_flag: bool,
    /// Fischer/Bronstein time-per-move indicator (bit 5).
    pub time_per_move: bool,
    /// Flag shown on the display; the clock may still run, e.g. into the next period (bit 6).
    pub flag: bool,
}

impl SideTime {
    /// The reading in seconds.
    pub fn total_seconds(&self) -> u32 {
        u32::from(self.hours) * 3600 + u32::from(self.minutes) * 60 + u32::from(self.seconds)
    }

    /// A reading of `seconds` (at most 9:59:59) with no flags.
    pub fn from_seconds(seconds: u32) -> Option<SideTime> {
        (seconds < 10 * 3600).then(|| SideTime {
            hours: (seconds / 3600) as u8,
            minutes: (seconds / 60 % 60) as u8,
            seconds: (seconds % 60) as u8,
            ..SideTime::default()
        })
    }
}

/// Which side of the clock, as seen from its front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSide {
    Left,
    Right,
}

/// The BWTIME status byte (§4.2), with the turn bits as the real captures resolve them:
/// 0x08 = left's turn, 0x10 = right's turn (H's 2015 text says the opposite; see the
/// CONFLICT note in §4.2). Bits 6 and 7 are always 0 and are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClockStatus {
    /// D0: the clock is counting.
    pub running: bool,
    /// D1: the lever is high on the right side (so the right player's time runs on a
    /// standalone clock).
    pub right_high: bool,
    /// D2: battery low shown on the display.
    pub battery_low: bool,
    /// D3: left player's turn.
    pub left_turn: bool,
    /// D4: right player's turn.
    pub right_turn: bool,
    /// D5: no clock connected; the times are not valid.
    pub no_clock: bool,
}

impl ClockStatus {
    /// Reads the status byte p6.
    pub fn from_byte(b: u8) -> ClockStatus {
        ClockStatus {
            running: b & 0x01 != 0,
            right_high: b & 0x02 != 0,
            battery_low: b & 0x04 != 0,
            left_turn: b & 0x08 != 0,
            right_turn: b & 0x10 != 0,
            no_clock: b & 0x20 != 0,
        }
    }

    /// The status byte p6 (bits 6 and 7 zero).
    pub fn to_byte(self) -> u8 {
        u8::from(self.running)
            | u8::from(self.right_high) << 1
            | u8::from(self.battery_low) << 2
            | u8::from(self.left_turn) << 3
            | u8::from(self.right_turn) << 4
            | u8::from(self.no_clock) << 5
    }

    /// Whose turn the clock says it is (D3/D4), `None` if neither or both bits are set.
    pub fn turn(self) -> Option<ClockSide> {
        match (self.left_turn, self.right_turn) {
            (true, false) => Some(ClockSide::Left),
            (false, true) => Some(ClockSide::Right),
            _ => None,
        }
    }

    /// The side whose lever end is up (D1).
    pub fn high_side(self) -> ClockSide {
        if self.right_high {
            ClockSide::Right
        } else {
            ClockSide::Left
        }
    }
}

/// `8d` as a clock reading (§4.2). On the wire the right side comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClockTime {
    pub left: SideTime,
    pub right: SideTime,
    #[serde(flatten)]
    pub status: ClockStatus,
}

/// `8d` as a clock ACK (§5.2): four bytes reassembled from the 7-bit payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClockAck {
    /// 0x10 normal, 0x40 error; anything but 0x10 is a failure (PC resends once).
    pub ack0: u8,
    /// < 0x80: the clock sub-command answered; ≥ 0x80: unsolicited (0x81 ready,
    /// 0x88 button, 0x8a mode, 0x90 not in mode 23).
    pub ack1: u8,
    pub ack2: u8,
    pub ack3: u8,
}

/// A DGT3000 button (§6), numbered by its `ack3` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockButton {
    Back,
    Plus,
    RunPause,
    Minus,
    Ok,
}

impl ClockAck {
    /// ack1 of a spontaneous "ready" ACK.
    pub const READY: u8 = 0x81;
    /// ack1 of a button ACK.
    pub const BUTTON: u8 = 0x88;
    /// ack1 of a mode report.
    pub const MODE: u8 = 0x8a;
    /// ack1 when a command needed mode 23.
    pub const NOT_IN_MODE_23: u8 = 0x90;

    /// ack0 is the normal 0x10.
    pub fn is_ok(&self) -> bool {
        self.ack0 == 0x10
    }

    /// The clock sub-command id this ACK answers, `None` for unsolicited ACKs.
    pub fn reply_to(&self) -> Option<u8> {
        (self.ack1 < 0x80).then_some(self.ack1)
    }

    /// Clock firmware `(major, minor)` from a version reply; major 1 = XL, 2 = DGT3000 (§1).
    pub fn version(&self) -> Option<(u8, u8)> {
        (self.ack1 == clock_cmd::VERSION).then_some((self.ack2 >> 4, self.ack2 & 0x0f))
    }

    /// The last pressed button of a button ACK, with ack2 as the mask of held buttons.
    pub fn button(&self) -> Option<(ClockButton, u8)> {
        if self.ack1 != ClockAck::BUTTON {
            return None;
        }
        let b = match self.ack3 {
            0x31 => ClockButton::Back,
            0x32 => ClockButton::Plus,
            0x33 => ClockButton::RunPause,
            0x34 => ClockButton::Minus,
            0x35 => ClockButton::Ok,
            _ => return None,
        };
        Some((b, self.ack2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_status_bytes_resolve_turn_bits_per_captures() {
        // §4.2: 09 = left running, 13 = right running (D0|D1|D4), 08 paused left to move.
        assert_eq!(ClockStatus::from_byte(0x09).turn(), Some(ClockSide::Left));
        let s = ClockStatus::from_byte(0x13);
        assert!(s.running && s.right_high && s.right_turn && !s.left_turn);
        assert_eq!(ClockStatus::from_byte(0x08).turn(), Some(ClockSide::Left));
        assert!(ClockStatus::from_byte(0x20).no_clock);
        for b in 0..0x40 {
            assert_eq!(ClockStatus::from_byte(b).to_byte(), b);
        }
    }
}
