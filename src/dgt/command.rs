//! Host → board: [`DgtCommand`] (dgt-protocol.md §3, §5), including the clock sub-commands
//! it wraps ([`ClockCommand`], with [`SetTime`], [`RunFlags`] and [`ClockText`]).
//! [`DgtCommand::encode`] writes the bytes the host sends; [`DgtCommand::decode`] parses one
//! command from the front of a byte slice (the simulator's direction) and reports a broken
//! clock frame as a [`CommandError`].
//!
//! [`EncodeError`] is here with the helpers that produce it, and so is the hex serde form
//! of raw bytes; [`crate::dgt::message`] uses both for the board → host direction.

use std::fmt;

use bytes::{BufMut, BytesMut};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::clock::clock_cmd;

/// Why a value cannot be put on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("{what} is {value}, the wire allows at most {max}")]
    OutOfRange {
        what: &'static str,
        value: u32,
        max: u32,
    },
    #[error(
        "{what}: byte {offset} ({value:#04x}) has the high bit set, which the board → host direction forbids (§2.2)"
    )]
    HighBit {
        what: &'static str,
        offset: usize,
        value: u8,
    },
    #[error("{what}: character {offset} is not ASCII")]
    NotAscii { what: &'static str, offset: usize },
    #[error("{what} is {len} bytes, at most {max} fit")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
}

/// Why bytes at the front of a host → board stream are not a valid command.
/// `offset` counts from the command's first byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CommandError {
    #[error("byte {offset}: clock frame must have 0x03 here, found {value:#04x} (§5.1)")]
    ClockMarker { offset: usize, value: u8 },
    #[error("byte {offset}: clock frame must end with 0x00, found {value:#04x} (§5.1)")]
    ClockTerminator { offset: usize, value: u8 },
    #[error("clock length byte {len} is below the minimum 3 (§5.1)")]
    ClockLength { len: u8 },
    #[error("clock sub-command {cmd:#04x} carries {actual} data bytes, it needs {expected} (§5.1)")]
    ClockData {
        cmd: u8,
        expected: usize,
        actual: usize,
    },
    #[error("byte {offset}: {value:#04x} is not a valid binary time field (§5.1 SETNRUN)")]
    SetTime { offset: usize, value: u8 },
    #[error("byte {offset}: clock text character {value:#04x} is not ASCII")]
    Text { offset: usize, value: u8 },
}

/// Single-byte host → board commands (§3).
pub mod cmd {
    pub const RESET: u8 = 0x40;
    pub const SEND_CLOCK: u8 = 0x41;
    pub const SEND_BOARD: u8 = 0x42;
    pub const SEND_UPDATE: u8 = 0x43;
    pub const SEND_UPDATE_BOARD: u8 = 0x44;
    pub const RETURN_SERIAL_NUMBER: u8 = 0x45;
    pub const RETURN_BUS_ADDRESS: u8 = 0x46;
    pub const SEND_TRADEMARK: u8 = 0x47;
    pub const REQUEST_HARDWARE_VERSION: u8 = 0x48;
    pub const SEND_EE_MOVES: u8 = 0x49;
    pub const TO_BUS_MODE: u8 = 0x4a;
    pub const SEND_UPDATE_NICE: u8 = 0x4b;
    pub const SEND_BATTERY_STATUS: u8 = 0x4c;
    pub const SEND_VERSION: u8 = 0x4d;
    pub const START_BOOTLOADER: u8 = 0x4e;
    pub const RETURN_LONG_SERIAL_NUMBER: u8 = 0x55;
    /// `2b LEN 03 CMD data… 00` (§5.1).
    pub const CLOCK_MESSAGE: u8 = 0x2b;
    /// Length-prefixed frames we recognise but do not interpret: P1.0 I2C clock message,
    /// Revelation II LEDs, Pegasus developer key (§2.1, §3).
    pub const I2C_CLOCK_MESSAGE: u8 = 0x2c;
    pub const SET_LEDS: u8 = 0x60;
    pub const DEVELOPER_KEY: u8 = 0x63;
}

/// One host → board command (§3, §5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DgtCommand {
    /// `40`: → IDLE, no reply.
    Reset,
    /// `41`: one BWTIME.
    SendClock,
    /// `42`: a board dump.
    SendBoard,
    /// `43`: mode UPDATE (field updates + BWTIME at least every second).
    SendUpdate,
    /// `44`: mode UPDATE_BRD (field updates only, no clock data, no ACKs).
    SendUpdateBoard,
    /// `45`: serial number.
    ReturnSerialNumber,
    /// `46`: bus address.
    ReturnBusAddress,
    /// `47`: trademark text.
    SendTrademark,
    /// `48` (P1.0 only, UNCONFIRMED).
    RequestHardwareVersion,
    /// `49`: the ≈8 KB EEPROM dump — never send by accident (§8).
    SendEeMoves,
    /// `4a`: back to bus mode.
    ToBusMode,
    /// `4b`: mode UPDATE_NICE (field updates + BWTIME when time info changes).
    SendUpdateNice,
    /// `4c`: battery status (BT boards).
    SendBatteryStatus,
    /// `4d`: firmware version.
    SendVersion,
    /// `4e`: never send.
    StartBootloader,
    /// `55`: long serial number.
    ReturnLongSerialNumber,
    /// `2b …`: a clock command.
    Clock { command: ClockCommand },
    /// `2c`, `60`, `63`: a length-prefixed frame we recognise but do not interpret;
    /// `data` is everything after the length byte.
    Framed {
        id: u8,
        #[serde(with = "hex")]
        data: Vec<u8>,
    },
    /// Any other single byte (draughts `50`–`54`, P1.0 `56`–`58`, bus-mode bytes, noise).
    Other { byte: u8 },
    /// A `2b` frame whose structure breaks §5.1; `bytes` is the whole frame.
    Invalid {
        #[serde(with = "hex")]
        bytes: Vec<u8>,
        error: CommandError,
    },
}

/// A side's time in a SETNRUN command (§5.1): binary, not BCD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetTime {
    /// 0..=9.
    pub hours: u8,
    /// 0..=59.
    pub minutes: u8,
    /// 0..=59.
    pub seconds: u8,
    /// Hours byte bit 4: this side counts up (not on XL ≤ 1.14).
    pub count_up: bool,
}

impl SetTime {
    /// `seconds` (at most 9:59:59) counting down.
    pub fn from_seconds(seconds: u32) -> Option<SetTime> {
        (seconds < 10 * 3600).then_some(SetTime {
            hours: (seconds / 3600) as u8,
            minutes: (seconds / 60 % 60) as u8,
            seconds: (seconds % 60) as u8,
            count_up: false,
        })
    }

    /// The time in seconds.
    pub fn total_seconds(&self) -> u32 {
        u32::from(self.hours) * 3600 + u32::from(self.minutes) * 60 + u32::from(self.seconds)
    }
}

/// SETNRUN flags (§5.1, H): which side counts down, pause, toggle at lever change.
/// Picochess sends exactly one of left / right / pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunFlags {
    /// 0x01.
    pub left_runs: bool,
    /// 0x02.
    pub right_runs: bool,
    /// 0x04.
    pub pause: bool,
    /// 0x08: the clock itself switches sides on a lever press.
    pub toggle_on_lever: bool,
}

impl RunFlags {
    /// Only the left side counts down.
    pub const LEFT: RunFlags = RunFlags {
        left_runs: true,
        right_runs: false,
        pause: false,
        toggle_on_lever: false,
    };
    /// Only the right side counts down.
    pub const RIGHT: RunFlags = RunFlags {
        left_runs: false,
        right_runs: true,
        pause: false,
        toggle_on_lever: false,
    };
    /// Both sides stopped (picochess `stop_clock`).
    pub const PAUSE: RunFlags = RunFlags {
        left_runs: false,
        right_runs: false,
        pause: true,
        toggle_on_lever: false,
    };

    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        u8::from(self.left_runs)
            | u8::from(self.right_runs) << 1
            | u8::from(self.pause) << 2
            | u8::from(self.toggle_on_lever) << 3
    }

    /// Bits above 0x08 are not documented and are dropped.
    pub fn from_byte(b: u8) -> RunFlags {
        RunFlags {
            left_runs: b & 0x01 != 0,
            right_runs: b & 0x02 != 0,
            pause: b & 0x04 != 0,
            toggle_on_lever: b & 0x08 != 0,
        }
    }
}

/// Eight ASCII characters for the DGT3000 text display (§5.1 ASCII). Serialised as a
/// string of exactly eight characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockText([u8; 8]);

impl ClockText {
    /// `text` (at most 8 ASCII characters) padded with spaces on the right.
    pub fn new(text: &str) -> Result<ClockText, EncodeError> {
        Self::padded(text, false)
    }

    /// `text` padded with spaces on the left, as picochess shows the right player's text.
    pub fn right_aligned(text: &str) -> Result<ClockText, EncodeError> {
        Self::padded(text, true)
    }

    /// The raw eight bytes; `None` if any is not ASCII.
    pub fn from_bytes(bytes: [u8; 8]) -> Option<ClockText> {
        bytes.iter().all(u8::is_ascii).then_some(ClockText(bytes))
    }

    /// The eight bytes as sent.
    pub fn as_bytes(&self) -> &[u8; 8] {
        &self.0
    }

    /// The eight characters.
    pub fn as_str(&self) -> &str {
        // Always ASCII by construction.
        std::str::from_utf8(&self.0).unwrap_or("")
    }

    fn padded(text: &str, right: bool) -> Result<ClockText, EncodeError> {
        let mut v = Vec::with_capacity(8);
        let len = ascii_into(&mut v, "clock text", text)?;
        if len > 8 {
            return Err(EncodeError::TooLong {
                what: "clock text",
                len,
                max: 8,
            });
        }
        let mut out = [b' '; 8];
        let start = if right { 8 - len } else { 0 };
        out[start..start + len].copy_from_slice(&v);
        Ok(ClockText(out))
    }
}

impl fmt::Display for ClockText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ClockText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ClockText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let b: [u8; 8] = s.as_bytes().try_into().map_err(|_| {
            serde::de::Error::custom("clock text must be exactly 8 ASCII characters")
        })?;
        ClockText::from_bytes(b).ok_or_else(|| serde::de::Error::custom("clock text must be ASCII"))
    }
}

/// A clock sub-command, sent as `2b LEN 03 CMD data… 00` (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "clock", rename_all = "snake_case")]
pub enum ClockCommand {
    /// `01` (XL 7-segment). `segments` in wire order C, B, A, F, E, D of the layout
    /// "1A:BC 1D:EF"; `icons` dots/colons/ones; `beep` per H 03 = beep, 01 = none.
    Display {
        segments: [u8; 6],
        icons: u8,
        beep: u8,
    },
    /// `02`: icon bytes (§5.1 ICONS); three zero bytes follow on the wire.
    Icons {
        left: u8,
        right: u8,
        left_period: u8,
        right_period: u8,
        special: u8,
    },
    /// `03`: back to the time display. Picochess sends it after every SETNRUN.
    End,
    /// `08`: button query (the reply carries no button info, §6).
    Button,
    /// `09`: firmware version; the ACK's ack2 is major<<4 | minor.
    Version,
    /// `0a`: set both times and which side runs.
    SetAndRun {
        left: SetTime,
        right: SetTime,
        flags: RunFlags,
    },
    /// `0b`: beep for `duration` × 64 ms.
    Beep { duration: u8 },
    /// `0c` (DGT3000): eight characters; `beep` 0 = none, else 62.5 ms + value/16 s.
    Ascii { text: ClockText, beep: u8 },
    /// A well-framed sub-command we do not interpret (e.g. `0d` Revelation II text).
    Other {
        cmd: u8,
        #[serde(with = "hex")]
        data: Vec<u8>,
    },
}

impl ClockCommand {
    /// The sub-command id (what `ack1` of the reply will be).
    pub fn id(&self) -> u8 {
        match self {
            ClockCommand::Display { .. } => clock_cmd::DISPLAY,
            ClockCommand::Icons { .. } => clock_cmd::ICONS,
            ClockCommand::End => clock_cmd::END,
            ClockCommand::Button => clock_cmd::BUTTON,
            ClockCommand::Version => clock_cmd::VERSION,
            ClockCommand::SetAndRun { .. } => clock_cmd::SET_AND_RUN,
            ClockCommand::Beep { .. } => clock_cmd::BEEP,
            ClockCommand::Ascii { .. } => clock_cmd::ASCII,
            ClockCommand::Other { cmd, .. } => *cmd,
        }
    }

    fn data(&self) -> Result<Vec<u8>, EncodeError> {
        Ok(match self {
            ClockCommand::Display {
                segments,
                icons,
                beep,
            } => {
                let mut v = segments.to_vec();
                v.extend([*icons, *beep]);
                v
            }
            ClockCommand::Icons {
                left,
                right,
                left_period,
                right_period,
                special,
            } => vec![
                *left,
                *right,
                *left_period,
                *right_period,
                *special,
                0,
                0,
                0,
            ],
            ClockCommand::End | ClockCommand::Button | ClockCommand::Version => Vec::new(),
            ClockCommand::SetAndRun { left, right, flags } => {
                let side = |t: &SetTime, what: &'static str| -> Result<[u8; 3], EncodeError> {
                    range(what, t.hours, 9)?;
                    range(what, t.minutes, 59)?;
                    range(what, t.seconds, 59)?;
                    Ok([t.hours | u8::from(t.count_up) << 4, t.minutes, t.seconds])
                };
                let mut v = side(left, "left SETNRUN time")?.to_vec();
                v.extend(side(right, "right SETNRUN time")?);
                v.push(flags.to_byte());
                v
            }
            ClockCommand::Beep { duration } => vec![*duration],
            ClockCommand::Ascii { text, beep } => {
                let mut v = text.as_bytes().to_vec();
                v.push(*beep);
                v
            }
            ClockCommand::Other { data, .. } => data.clone(),
        })
    }

    /// Number of data bytes (between CMD and the final 00) of the known sub-commands.
    fn data_len(cmd: u8) -> Option<usize> {
        match cmd {
            clock_cmd::DISPLAY | clock_cmd::ICONS => Some(8),
            clock_cmd::END | clock_cmd::BUTTON | clock_cmd::VERSION => Some(0),
            clock_cmd::SET_AND_RUN => Some(7),
            clock_cmd::BEEP => Some(1),
            clock_cmd::ASCII => Some(9),
            _ => None,
        }
    }

    fn parse(c: u8, d: &[u8]) -> Result<ClockCommand, CommandError> {
        if let Some(expected) = Self::data_len(c)
            && d.len() != expected
        {
            return Err(CommandError::ClockData {
                cmd: c,
                expected,
                actual: d.len(),
            });
        }
        // Offsets in errors count from the 2b byte: data starts at byte 4.
        Ok(match c {
            clock_cmd::DISPLAY => ClockCommand::Display {
                segments: [d[0], d[1], d[2], d[3], d[4], d[5]],
                icons: d[6],
                beep: d[7],
            },
            clock_cmd::ICONS => ClockCommand::Icons {
                left: d[0],
                right: d[1],
                left_period: d[2],
                right_period: d[3],
                special: d[4],
            },
            clock_cmd::END => ClockCommand::End,
            clock_cmd::BUTTON => ClockCommand::Button,
            clock_cmd::VERSION => ClockCommand::Version,
            clock_cmd::SET_AND_RUN => {
                let side = |o: usize| -> Result<SetTime, CommandError> {
                    let bad = |i: usize| CommandError::SetTime {
                        offset: 4 + i,
                        value: d[i],
                    };
                    let hours = d[o] & 0x0f;
                    if hours > 9 || d[o] & 0xe0 != 0 {
                        return Err(bad(o));
                    }
                    if d[o + 1] > 59 {
                        return Err(bad(o + 1));
                    }
                    if d[o + 2] > 59 {
                        return Err(bad(o + 2));
                    }
                    Ok(SetTime {
                        hours,
                        minutes: d[o + 1],
                        seconds: d[o + 2],
                        count_up: d[o] & 0x10 != 0,
                    })
                };
                ClockCommand::SetAndRun {
                    left: side(0)?,
                    right: side(3)?,
                    flags: RunFlags::from_byte(d[6]),
                }
            }
            clock_cmd::BEEP => ClockCommand::Beep { duration: d[0] },
            clock_cmd::ASCII => {
                let mut t = [0u8; 8];
                t.copy_from_slice(&d[..8]);
                let text = ClockText::from_bytes(t).ok_or_else(|| {
                    let i = t.iter().position(|b| !b.is_ascii()).unwrap_or(0);
                    CommandError::Text {
                        offset: 4 + i,
                        value: t[i],
                    }
                })?;
                ClockCommand::Ascii { text, beep: d[8] }
            }
            _ => ClockCommand::Other {
                cmd: c,
                data: d.to_vec(),
            },
        })
    }
}

/// What [`DgtCommand::decode`] found at the front of a byte slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandDecode {
    /// A command and the number of bytes it used.
    Command(DgtCommand, usize),
    /// The slice ends inside a length-prefixed frame; wait for more bytes.
    Incomplete,
}

impl DgtCommand {
    const SIMPLE: [(u8, DgtCommand); 16] = [
        (cmd::RESET, DgtCommand::Reset),
        (cmd::SEND_CLOCK, DgtCommand::SendClock),
        (cmd::SEND_BOARD, DgtCommand::SendBoard),
        (cmd::SEND_UPDATE, DgtCommand::SendUpdate),
        (cmd::SEND_UPDATE_BOARD, DgtCommand::SendUpdateBoard),
        (cmd::RETURN_SERIAL_NUMBER, DgtCommand::ReturnSerialNumber),
        (cmd::RETURN_BUS_ADDRESS, DgtCommand::ReturnBusAddress),
        (cmd::SEND_TRADEMARK, DgtCommand::SendTrademark),
        (
            cmd::REQUEST_HARDWARE_VERSION,
            DgtCommand::RequestHardwareVersion,
        ),
        (cmd::SEND_EE_MOVES, DgtCommand::SendEeMoves),
        (cmd::TO_BUS_MODE, DgtCommand::ToBusMode),
        (cmd::SEND_UPDATE_NICE, DgtCommand::SendUpdateNice),
        (cmd::SEND_BATTERY_STATUS, DgtCommand::SendBatteryStatus),
        (cmd::SEND_VERSION, DgtCommand::SendVersion),
        (cmd::START_BOOTLOADER, DgtCommand::StartBootloader),
        (
            cmd::RETURN_LONG_SERIAL_NUMBER,
            DgtCommand::ReturnLongSerialNumber,
        ),
    ];

    /// Shorthand for `DgtCommand::Clock { command }`.
    pub fn clock(command: ClockCommand) -> DgtCommand {
        DgtCommand::Clock { command }
    }

    /// Appends the command's bytes to `dst`. On error nothing is written.
    pub fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        let simple = DgtCommand::SIMPLE
            .iter()
            .find(|(_, c)| c == self)
            .map(|(b, _)| *b);
        if let Some(b) = simple {
            dst.put_u8(b);
            return Ok(());
        }
        match self {
            DgtCommand::Clock { command } => {
                let data = command.data()?;
                // LEN counts 03, CMD, the data and the final 00 (§5.1).
                let len = data.len() + 3;
                if len > 0xff {
                    return Err(EncodeError::TooLong {
                        what: "clock command data",
                        len: data.len(),
                        max: 0xff - 3,
                    });
                }
                dst.reserve(len + 2);
                dst.put_slice(&[cmd::CLOCK_MESSAGE, len as u8, 0x03, command.id()]);
                dst.put_slice(&data);
                dst.put_u8(0x00);
            }
            DgtCommand::Framed { id, data } => {
                if data.len() > 0xff {
                    return Err(EncodeError::TooLong {
                        what: "framed command data",
                        len: data.len(),
                        max: 0xff,
                    });
                }
                dst.put_slice(&[*id, data.len() as u8]);
                dst.put_slice(data);
            }
            DgtCommand::Other { byte } => dst.put_u8(*byte),
            DgtCommand::Invalid { bytes, .. } => dst.put_slice(bytes),
            _ => {}
        }
        Ok(())
    }

    /// The command's bytes as a new vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut b = BytesMut::new();
        self.encode(&mut b)?;
        Ok(b.to_vec())
    }

    /// Parses one command from the front of `src` (what a board does with its input).
    /// Never fails: malformed clock frames become [`DgtCommand::Invalid`], unknown bytes
    /// [`DgtCommand::Other`]. `None` for an empty slice.
    pub fn decode(src: &[u8]) -> Option<CommandDecode> {
        let &first = src.first()?;
        if let Some((_, c)) = DgtCommand::SIMPLE.iter().find(|(b, _)| *b == first) {
            return Some(CommandDecode::Command(c.clone(), 1));
        }
        let framed = matches!(
            first,
            cmd::CLOCK_MESSAGE | cmd::I2C_CLOCK_MESSAGE | cmd::SET_LEDS | cmd::DEVELOPER_KEY
        );
        if !framed {
            return Some(CommandDecode::Command(DgtCommand::Other { byte: first }, 1));
        }
        let Some(&len) = src.get(1) else {
            return Some(CommandDecode::Incomplete);
        };
        let total = 2 + usize::from(len);
        let Some(frame) = src.get(..total) else {
            return Some(CommandDecode::Incomplete);
        };
        let command = if first == cmd::CLOCK_MESSAGE {
            match Self::parse_clock(frame) {
                Ok(command) => DgtCommand::Clock { command },
                Err(error) => DgtCommand::Invalid {
                    bytes: frame.to_vec(),
                    error,
                },
            }
        } else {
            DgtCommand::Framed {
                id: first,
                data: frame[2..].to_vec(),
            }
        };
        Some(CommandDecode::Command(command, total))
    }

    fn parse_clock(frame: &[u8]) -> Result<ClockCommand, CommandError> {
        let len = frame[1];
        if len < 3 {
            return Err(CommandError::ClockLength { len });
        }
        if frame[2] != 0x03 {
            return Err(CommandError::ClockMarker {
                offset: 2,
                value: frame[2],
            });
        }
        let last = frame.len() - 1;
        if frame[last] != 0x00 {
            return Err(CommandError::ClockTerminator {
                offset: last,
                value: frame[last],
            });
        }
        ClockCommand::parse(frame[3], &frame[4..last])
    }
}

pub(super) fn range(what: &'static str, v: u8, max: u8) -> Result<(), EncodeError> {
    if v > max {
        Err(EncodeError::OutOfRange {
            what,
            value: u32::from(v),
            max: u32::from(max),
        })
    } else {
        Ok(())
    }
}

pub(super) fn ascii_into(
    dst: &mut Vec<u8>,
    what: &'static str,
    s: &str,
) -> Result<usize, EncodeError> {
    let mut n = 0;
    for (offset, c) in s.chars().enumerate() {
        if !c.is_ascii() {
            return Err(EncodeError::NotAscii { what, offset });
        }
        dst.push(c as u8);
        n += 1;
    }
    Ok(n)
}

/// Bytes as a lowercase hex string, as dgt-protocol.md writes them.
pub(super) mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(v.len() * 2);
        for b in v {
            out.push_str(&format!("{b:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() % 2 != 0 {
            return Err(serde::de::Error::custom("hex string of odd length"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| {
                s.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| serde::de::Error::custom(format!("bad hex at {i}")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setnrun_worked_example_9_2() {
        let c = DgtCommand::clock(ClockCommand::SetAndRun {
            left: SetTime::from_seconds(5400).unwrap(),
            right: SetTime::from_seconds(3599).unwrap(),
            flags: RunFlags::LEFT,
        });
        assert_eq!(
            c.to_bytes().unwrap(),
            [
                0x2b, 0x0a, 0x03, 0x0a, 0x01, 0x1e, 0x00, 0x00, 0x3b, 0x3b, 0x01, 0x00
            ]
        );
    }

    #[test]
    fn other_host_frames_9_3() {
        let text = ClockText::new("e2e4").unwrap();
        let c = DgtCommand::clock(ClockCommand::Ascii { text, beep: 3 });
        assert_eq!(
            c.to_bytes().unwrap(),
            [
                0x2b, 0x0c, 0x03, 0x0c, 0x65, 0x32, 0x65, 0x34, 0x20, 0x20, 0x20, 0x20, 0x03, 0x00
            ]
        );
        let c = DgtCommand::clock(ClockCommand::Beep { duration: 0x10 });
        assert_eq!(c.to_bytes().unwrap(), [0x2b, 0x04, 0x03, 0x0b, 0x10, 0x00]);
        let c = DgtCommand::clock(ClockCommand::Display {
            segments: [0x3f; 6],
            icons: 0,
            beep: 1,
        });
        assert_eq!(
            c.to_bytes().unwrap(),
            [
                0x2b, 0x0b, 0x03, 0x01, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x00, 0x01, 0x00
            ]
        );
    }

    #[test]
    fn clock_frame_decode_reports_structure_errors() {
        let got = DgtCommand::decode(&[0x2b, 0x03, 0x04, 0x03, 0x00]);
        assert!(matches!(
            got,
            Some(CommandDecode::Command(
                DgtCommand::Invalid {
                    error: CommandError::ClockMarker { offset: 2, .. },
                    ..
                },
                5
            ))
        ));
        assert_eq!(
            DgtCommand::decode(&[0x2b, 0x03, 0x03]),
            Some(CommandDecode::Incomplete)
        );
    }
}
