//! What a link tells the daemon, and what the daemon asks of it.

use std::path::PathBuf;
use std::time::Duration;

use crate::dgt::{
    BatteryStatus, BoardDump, BoardEvent, ClockButton, ClockSide, ClockTime, FieldUpdate,
    Orientation,
};

use super::port::OpenError;

/// Which clock the board has, from the clock-version ACK (ack2 = major<<4 | minor;
/// major 1 = DGT XL, 2 = DGT3000, dgt-protocol.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockModel {
    Xl,
    Dgt3000,
    Unknown { major: u8 },
}

impl ClockModel {
    pub fn from_major(major: u8) -> ClockModel {
        match major {
            1 => ClockModel::Xl,
            2 => ClockModel::Dgt3000,
            major => ClockModel::Unknown { major },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockInfo {
    pub model: ClockModel,
    /// (major, minor) of the clock firmware.
    pub version: (u8, u8),
}

/// Who answered on the port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardIdentity {
    pub path: PathBuf,
    /// Five ASCII digits (`45` → `91`): the key a replugged board is recognised by.
    pub serial: String,
    /// Board firmware (major, minor).
    pub version: (u8, u8),
    /// `None` when no clock answered the version request (none attached, or the board
    /// does not forward clock ACKs).
    pub clock: Option<ClockInfo>,
}

/// Which side runs after a SETNRUN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSide {
    Left,
    Right,
    Paused,
}

/// A command for the board's clock (each becomes one clock command; SETNRUN is always
/// followed by END, dgt-protocol.md §5.3), or for the move reader.
#[derive(Debug, Clone)]
pub enum LinkCommand {
    /// Program both times and the running side. Always sent with "switch at lever" (0x08)
    /// so the clock keeps working as a plain clock if the daemon goes away (DESIGN.md §3).
    /// Times are shown rounded up to whole seconds, at most 9:59:59.
    SetAndRun {
        left: Duration,
        right: Duration,
        run: RunSide,
    },
    /// Show up to 8 ASCII characters (DGT3000) or 6 (XL, 7-segment); other characters
    /// show as `?`. Stays until [`LinkCommand::ShowTimes`].
    Text { text: String, beep: bool },
    /// Back to the time display (END).
    ShowTimes,
    /// The period signs (1–5, 0 for none) and flag icons per side (DGT3000 ICONS,
    /// dgt-protocol.md §5.1): who passed a control first shows on the clock (FIDE C.02
    /// (e), 6.11). Cleared by the next [`LinkCommand::SetAndRun`]; a DGT XL has no such
    /// command, and the link sends nothing for it there.
    Icons {
        left_period: u8,
        right_period: u8,
        left_flag: bool,
        right_flag: bool,
    },
    /// Beep for about `duration` (64 ms steps).
    Beep { duration: Duration },
    /// Read moves from a new game starting at `start` (the standard position for a new
    /// game, the adjourned position for a resumed one); `orientation` `None` = recognise
    /// it from the first board that shows `start`. A board dump is requested.
    NewGame {
        start: Box<shakmaty::Chess>,
        orientation: Option<Orientation>,
    },
    /// Ask for a board dump (`42`): the daemon expects a move the field updates have not
    /// shown; the dump shows the board as it is.
    RequestBoard,
    /// Ask the board for the clock's reading (`41`, answered with a BWTIME): a board
    /// query, not a clock command. Observe mode asks when a stopped clock has sent
    /// nothing (a DGT clock reports changes, and a stopped one has none).
    RequestClock,
}

impl LinkCommand {
    pub fn name(&self) -> &'static str {
        match self {
            LinkCommand::SetAndRun { .. } => "set-and-run",
            LinkCommand::Text { .. } => "text",
            LinkCommand::ShowTimes => "show-times",
            LinkCommand::Icons { .. } => "icons",
            LinkCommand::Beep { .. } => "beep",
            LinkCommand::NewGame { .. } => "new-game",
            LinkCommand::RequestBoard => "board-dump",
            LinkCommand::RequestClock => "clock-reading",
        }
    }
}

/// Why a clock command did not take effect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockCommandError {
    #[error("{path}: the clock did not acknowledge {command} after {attempts} attempts")]
    NoAck {
        path: PathBuf,
        command: &'static str,
        attempts: u32,
    },
    #[error(
        "{path}: the clock refused {command}: set the clock to computer mode (DGT3000 mode 25, DGT XL option 23)"
    )]
    NotInComputerMode {
        path: PathBuf,
        command: &'static str,
    },
    #[error("{path}: the clock answered {command} with an error (ack0 {ack0:#04x})")]
    Refused {
        path: PathBuf,
        command: &'static str,
        ack0: u8,
    },
    #[error("{path}: {command} not sent: the board is offline")]
    Offline {
        path: PathBuf,
        command: &'static str,
    },
    #[error("{path}: a clock command could not be encoded: {reason}")]
    Unencodable { path: PathBuf, reason: String },
    #[error("{path}: {command} not sent: the board has no clock")]
    NoClock {
        path: PathBuf,
        command: &'static str,
    },
}

impl ClockCommandError {
    /// The command that failed (`None` for one that could not even be encoded).
    pub fn command(&self) -> Option<&'static str> {
        match self {
            ClockCommandError::NoAck { command, .. }
            | ClockCommandError::NotInComputerMode { command, .. }
            | ClockCommandError::Refused { command, .. }
            | ClockCommandError::Offline { command, .. }
            | ClockCommandError::NoClock { command, .. } => Some(command),
            ClockCommandError::Unencodable { .. } => None,
        }
    }
}

/// Why an online (or handshaking) link went offline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Offline {
    #[error("{path}: unplugged")]
    Unplugged { path: PathBuf },
    #[error("{path}: the board has been silent for {silent:?}")]
    Silent { path: PathBuf, silent: Duration },
    #[error("{path}: a write to the port did not complete within {waited:?}")]
    WriteStalled { path: PathBuf, waited: Duration },
    #[error("{path}: serial I/O error: {message}")]
    Io { path: PathBuf, message: String },
}

/// Problems a user can meet that keep a board from coming online.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(
        "{path}: not a DGT board (no serial number and version reply after {attempts} attempts of {timeout:?}; is this the right port, and is the board switched on?)"
    )]
    NotADgtBoard {
        path: PathBuf,
        attempts: u32,
        timeout: Duration,
    },
}

/// One thing that happened on a link.
#[derive(Debug)]
pub enum LinkEvent {
    /// Handshake done: the board (and clock) answered. Also after every reconnection.
    Online(BoardIdentity),
    /// The port closed; the link reopens it when the path comes back.
    Offline(Offline),
    /// Why the port cannot be brought online; reported once per distinct problem while
    /// the link keeps retrying.
    Error(LinkError),
    /// Every clock reading (BWTIME with times, dgt-protocol.md §4.2).
    Clock(ClockTime),
    /// The lever changed sides (status D1, §6); `high` is the side now up, whose time
    /// runs on a clock switching at the lever. Sent before the [`LinkEvent::Clock`] of
    /// the same reading.
    Lever { high: ClockSide, reading: ClockTime },
    /// A clock button was pressed (unsolicited ACK 0x88, §6).
    Button(ClockButton),
    /// The clock acknowledged a command.
    CommandDone { command: &'static str },
    /// A clock command failed for good (after the resend policy, or refused).
    CommandFailed(ClockCommandError),
    /// A move, takeback, correction or irregularity read from the board (dgt board_state).
    Game(BoardEvent),
    /// A full board dump (at connection, and whenever the board sends one).
    Board(BoardDump),
    /// One square changed.
    Field(FieldUpdate),
    /// Battery status of a BT board (its answer to `4c`, or sent by itself).
    Battery(BatteryStatus),
    /// The clock's low-battery bit (status D2, §4.2): at the session's first reading with
    /// a clock, then at every change. Sent before the [`LinkEvent::Clock`] of the reading.
    ClockBatteryLow(bool),
}
