//! Board → host: [`DgtMessage`] (dgt-protocol.md §4), its payload types, the message
//! [`id`]s and frame constants. [`DgtMessage::from_frame`] turns one framed message (id +
//! payload) into a value and never fails: a payload that breaks the spec becomes
//! [`DgtMessage::Invalid`] with the position of the problem (a [`PayloadError`]), an id we
//! do not know becomes [`DgtMessage::Unknown`]. [`DgtMessage::encode`] writes the frame
//! back (the simulator's direction).
//!
//! The pieces and fields are in [`crate::dgt::square`], the clock's readings and ACKs in
//! [`crate::dgt::clock`], host → board commands in [`crate::dgt::command`]. Framing,
//! resynchronisation and chunking live in [`crate::dgt::codec`]; this file only knows
//! single, complete messages.

use bytes::{BufMut, BytesMut};
use serde::{Deserialize, Serialize};

use super::clock::{ClockAck, ClockStatus, ClockTime, SideTime};
use super::command::{EncodeError, ascii_into, hex, range};
use super::square::{Field, Piece};

/// Board → host message ids (§4, H).
pub mod id {
    pub const BOARD_DUMP: u8 = 0x86;
    pub const BWTIME: u8 = 0x8d;
    pub const FIELD_UPDATE: u8 = 0x8e;
    pub const EE_MOVES: u8 = 0x8f;
    pub const BUS_ADDRESS: u8 = 0x90;
    pub const SERIAL_NUMBER: u8 = 0x91;
    pub const TRADEMARK: u8 = 0x92;
    pub const VERSION: u8 = 0x93;
    pub const BATTERY_STATUS: u8 = 0xa0;
    pub const LONG_SERIAL_NUMBER: u8 = 0xa2;
}

/// Total frame length (header included) of the board → host messages whose length is
/// fixed (§4 table). The codec treats any other announced length for these ids as
/// garbage and resynchronises, because a real board never sends them.
pub fn fixed_frame_len(id: u8) -> Option<usize> {
    match id {
        id::BOARD_DUMP => Some(67),
        id::BWTIME => Some(10),
        id::FIELD_UPDATE => Some(5),
        id::BUS_ADDRESS => Some(5),
        id::SERIAL_NUMBER => Some(8),
        id::VERSION => Some(5),
        id::BATTERY_STATUS => Some(12),
        id::LONG_SERIAL_NUMBER => Some(13),
        _ => None,
    }
}

/// Largest total length the 14-bit length header can express (§2.2).
pub const MAX_FRAME_LEN: usize = 0x3fff;

/// Length of the board → host header: id, length high 7 bits, length low 7 bits (§2.2).
pub const HEADER_LEN: usize = 3;

/// Why a framed board → host payload does not mean what its id says. `offset` counts
/// payload bytes from 0 (the message byte is `offset + 3`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PayloadError {
    #[error("payload is {actual} bytes, this message needs {expected}")]
    Length { expected: usize, actual: usize },
    #[error("payload byte {offset}: {value:#04x} has the high bit set (§2.2)")]
    HighBit { offset: usize, value: u8 },
    #[error("payload byte {offset}: piece code {value:#04x} is not 0x00..=0x0f (§4.1)")]
    Piece { offset: usize, value: u8 },
    #[error("payload byte {offset}: field {value} is not 0..=63 (§4.1)")]
    Field { offset: usize, value: u8 },
    #[error("payload byte {offset}: {value:#04x} is not BCD 00..=59 (§4.2)")]
    Bcd { offset: usize, value: u8 },
    #[error("payload byte {offset}: hours nibble {value} is neither 0..=9 nor an ACK (§4.2)")]
    Hours { offset: usize, value: u8 },
}

/// One board → host message (§4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DgtMessage {
    /// `86`: all 64 squares.
    BoardDump(BoardDump),
    /// `8e`: one square changed.
    FieldUpdate(FieldUpdate),
    /// `8d` carrying the clock's times and status (§4.2).
    ClockTime(ClockTime),
    /// `8d` carrying a clock ACK (§5.2).
    ClockAck(ClockAck),
    /// `8d` with seven zero bytes: a dummy the BT 2.10 firmware sends (§5.2). The host
    /// codec drops it; it exists so the simulator can send one.
    ClockNull,
    /// `8f`: the EEPROM event stream, kept raw (§4.3); see [`EeMoves::events`].
    EeMoves(EeMoves),
    /// `90`: the bus address (§7.1), a 14-bit number.
    BusAddress { address: u16 },
    /// `91`: five ASCII digits, last = least significant.
    SerialNumber { serial: String },
    /// `92`: free ASCII text.
    Trademark { text: String },
    /// `93`: board firmware version, binary (`03 0a` = 3.10).
    Version { major: u8, minor: u8 },
    /// `a0`: battery status of BT boards.
    BatteryStatus(BatteryStatus),
    /// `a2`: ten ASCII characters.
    LongSerialNumber { serial: String },
    /// A well-framed message with an id we do not interpret (e.g. `94`/`95` draughts dumps).
    Unknown {
        id: u8,
        #[serde(with = "hex")]
        payload: Vec<u8>,
    },
    /// A well-framed message of a known id whose payload breaks the spec.
    Invalid {
        id: u8,
        #[serde(with = "hex")]
        payload: Vec<u8>,
        error: PayloadError,
    },
}

/// `86`: the piece on every field, in wire order (field 0 = a8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardDump {
    #[serde(with = "board64")]
    pub board: [Piece; 64],
}

impl BoardDump {
    /// The piece on `field`.
    pub fn get(&self, field: Field) -> Piece {
        self.board[usize::from(field.index())]
    }
}

/// `8e`: `field` now holds `piece` ([`Piece::Empty`] when a piece was lifted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldUpdate {
    pub field: Field,
    pub piece: Piece,
}

/// `a0` battery status (§4, H): nine bytes, 0x7f = not available for the times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BatteryStatus {
    pub percent: u8,
    pub running_hours: u8,
    pub running_minutes: u8,
    pub on_hours: u8,
    pub on_minutes: u8,
    pub standby_days: u8,
    pub standby_hours: u8,
    pub standby_minutes: u8,
    /// b0 charging, b1 discharging.
    pub status: u8,
}

impl BatteryStatus {
    /// Status bit 0.
    pub fn charging(&self) -> bool {
        self.status & 0x01 != 0
    }
    /// Status bit 1.
    pub fn discharging(&self) -> bool {
        self.status & 0x02 != 0
    }
    fn to_bytes(self) -> [u8; 9] {
        [
            self.percent,
            self.running_hours,
            self.running_minutes,
            self.on_hours,
            self.on_minutes,
            self.standby_days,
            self.standby_hours,
            self.standby_minutes,
            self.status,
        ]
    }
}

/// `8f` EEPROM dump, kept as bytes: the daemon only drains it (§5.3: an unexpected dump
/// is most likely a mis-framed clock command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EeMoves {
    #[serde(with = "hex")]
    pub data: Vec<u8>,
}

/// One entry of the EEPROM stream (§4.3). Only what H documents is interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tag", rename_all = "snake_case")]
pub enum EeEvent {
    /// `40–5f` + field: a piece event; `quick` = less than ≈250 ms after the previous tag.
    Piece {
        piece: Piece,
        field: Field,
        quick: bool,
    },
    /// `60–7f` (except the one-byte tags) + BCD minutes + BCD seconds: the time of the side
    /// that was just halted, written on lever change.
    ClockTime {
        left_display: bool,
        hours: u8,
        minutes: u8,
        seconds: u8,
    },
    /// A one-byte tag (`6a` power-up, `6b` EOF, `6c`–`6f`, `7a`–`7f`, `00`).
    Tag { code: u8 },
    /// A byte that starts no documented entry, or an entry cut off by the end of data.
    Undocumented { offset: usize, code: u8 },
}

impl EeMoves {
    /// Splits the stream into entries (§4.3); never fails, undocumented bytes are reported
    /// in place.
    pub fn events(&self) -> Vec<EeEvent> {
        let d = &self.data;
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(&b) = d.get(i) {
            let one_byte = matches!(b, 0x00 | 0x6a..=0x6f | 0x7a..=0x7f);
            if one_byte {
                out.push(EeEvent::Tag { code: b });
                i += 1;
                continue;
            }
            match b {
                0x40..=0x5f => match (
                    d.get(i + 1).and_then(|&f| Field::new(f)),
                    Piece::from_code(b & 0x0f),
                ) {
                    (Some(field), Some(piece)) => {
                        out.push(EeEvent::Piece {
                            piece,
                            field,
                            quick: b & 0x10 != 0,
                        });
                        i += 2;
                    }
                    _ => {
                        out.push(EeEvent::Undocumented { offset: i, code: b });
                        i += 1;
                    }
                },
                0x60..=0x7f => match (d.get(i + 1), d.get(i + 2)) {
                    (Some(&m), Some(&s)) if bcd_decode(m).is_some() && bcd_decode(s).is_some() => {
                        out.push(EeEvent::ClockTime {
                            left_display: b & 0x10 != 0,
                            hours: b & 0x0f,
                            minutes: bcd_decode(m).unwrap_or(0),
                            seconds: bcd_decode(s).unwrap_or(0),
                        });
                        i += 3;
                    }
                    _ => {
                        out.push(EeEvent::Undocumented { offset: i, code: b });
                        i += 1;
                    }
                },
                _ => {
                    out.push(EeEvent::Undocumented { offset: i, code: b });
                    i += 1;
                }
            }
        }
        out
    }
}

fn bcd_decode(b: u8) -> Option<u8> {
    let (hi, lo) = (b >> 4, b & 0x0f);
    (hi <= 5 && lo <= 9).then_some(hi * 10 + lo)
}

fn bcd_encode(v: u8) -> u8 {
    (v / 10) << 4 | (v % 10)
}

fn ascii_string(payload: &[u8]) -> String {
    // Payload bytes are < 0x80 (checked before), so every byte is one ASCII char.
    payload.iter().map(|&b| char::from(b)).collect()
}

impl DgtMessage {
    /// The wire id of this message.
    pub fn id(&self) -> u8 {
        match self {
            DgtMessage::BoardDump(_) => id::BOARD_DUMP,
            DgtMessage::FieldUpdate(_) => id::FIELD_UPDATE,
            DgtMessage::ClockTime(_) | DgtMessage::ClockAck(_) | DgtMessage::ClockNull => {
                id::BWTIME
            }
            DgtMessage::EeMoves(_) => id::EE_MOVES,
            DgtMessage::BusAddress { .. } => id::BUS_ADDRESS,
            DgtMessage::SerialNumber { .. } => id::SERIAL_NUMBER,
            DgtMessage::Trademark { .. } => id::TRADEMARK,
            DgtMessage::Version { .. } => id::VERSION,
            DgtMessage::BatteryStatus(_) => id::BATTERY_STATUS,
            DgtMessage::LongSerialNumber { .. } => id::LONG_SERIAL_NUMBER,
            DgtMessage::Unknown { id, .. } | DgtMessage::Invalid { id, .. } => *id,
        }
    }

    /// Interprets one complete frame: `id` (high bit set) and the payload after the
    /// three header bytes. Never fails; see [`DgtMessage::Invalid`] and
    /// [`DgtMessage::Unknown`].
    pub fn from_frame(id: u8, payload: &[u8]) -> DgtMessage {
        match Self::parse(id, payload) {
            Ok(m) => m,
            Err(error) => DgtMessage::Invalid {
                id,
                payload: payload.to_vec(),
                error,
            },
        }
    }

    fn parse(msg_id: u8, p: &[u8]) -> Result<DgtMessage, PayloadError> {
        if let Some((offset, &value)) = p.iter().enumerate().find(|(_, b)| **b & 0x80 != 0) {
            return Err(PayloadError::HighBit { offset, value });
        }
        let need = |n: usize| {
            if p.len() == n {
                Ok(())
            } else {
                Err(PayloadError::Length {
                    expected: n,
                    actual: p.len(),
                })
            }
        };
        Ok(match msg_id {
            id::BOARD_DUMP => {
                need(64)?;
                let mut board = [Piece::Empty; 64];
                for (offset, (slot, &value)) in board.iter_mut().zip(p).enumerate() {
                    *slot = Piece::from_code(value).ok_or(PayloadError::Piece { offset, value })?;
                }
                DgtMessage::BoardDump(BoardDump { board })
            }
            id::FIELD_UPDATE => {
                need(2)?;
                let field = Field::new(p[0]).ok_or(PayloadError::Field {
                    offset: 0,
                    value: p[0],
                })?;
                let piece = Piece::from_code(p[1]).ok_or(PayloadError::Piece {
                    offset: 1,
                    value: p[1],
                })?;
                DgtMessage::FieldUpdate(FieldUpdate { field, piece })
            }
            id::BWTIME => {
                need(7)?;
                parse_bwtime(p)?
            }
            id::EE_MOVES => DgtMessage::EeMoves(EeMoves { data: p.to_vec() }),
            id::BUS_ADDRESS => {
                need(2)?;
                DgtMessage::BusAddress {
                    address: u16::from(p[0]) << 7 | u16::from(p[1]),
                }
            }
            id::SERIAL_NUMBER => {
                need(5)?;
                DgtMessage::SerialNumber {
                    serial: ascii_string(p),
                }
            }
            id::TRADEMARK => DgtMessage::Trademark {
                text: ascii_string(p),
            },
            id::VERSION => {
                need(2)?;
                DgtMessage::Version {
                    major: p[0],
                    minor: p[1],
                }
            }
            id::BATTERY_STATUS => {
                need(9)?;
                DgtMessage::BatteryStatus(BatteryStatus {
                    percent: p[0],
                    running_hours: p[1],
                    running_minutes: p[2],
                    on_hours: p[3],
                    on_minutes: p[4],
                    standby_days: p[5],
                    standby_hours: p[6],
                    standby_minutes: p[7],
                    status: p[8],
                })
            }
            id::LONG_SERIAL_NUMBER => {
                need(10)?;
                DgtMessage::LongSerialNumber {
                    serial: ascii_string(p),
                }
            }
            _ => DgtMessage::Unknown {
                id: msg_id,
                payload: p.to_vec(),
            },
        })
    }

    /// Appends the complete frame (header included) to `dst`. On error nothing is written.
    pub fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        let start = dst.len();
        let r = self.encode_inner(dst);
        if r.is_err() {
            dst.truncate(start);
        }
        r
    }

    /// The complete frame as a new vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut b = BytesMut::new();
        self.encode(&mut b)?;
        Ok(b.to_vec())
    }

    fn encode_inner(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        let mut payload: Vec<u8> = Vec::new();
        let what = "payload";
        match self {
            DgtMessage::BoardDump(d) => payload.extend(d.board.iter().map(|p| p.code())),
            DgtMessage::FieldUpdate(u) => payload.extend([u.field.index(), u.piece.code()]),
            DgtMessage::ClockTime(t) => {
                let side = |s: &SideTime, what: &'static str| -> Result<[u8; 3], EncodeError> {
                    range(what, s.hours, 9)?;
                    range(what, s.minutes, 59)?;
                    range(what, s.seconds, 59)?;
                    Ok([
                        s.hours
                            | u8::from(s.final_flag) << 4
                            | u8::from(s.time_per_move) << 5
                            | u8::from(s.flag) << 6,
                        bcd_encode(s.minutes),
                        bcd_encode(s.seconds),
                    ])
                };
                payload.extend(side(&t.right, "right clock time")?);
                payload.extend(side(&t.left, "left clock time")?);
                payload.push(t.status.to_byte());
            }
            DgtMessage::ClockAck(a) => {
                // §5.2 encoder (the one CENT uses and apps accept); p6 = 0 is UNCONFIRMED.
                payload.extend([
                    0x0a | (a.ack2 & 0x80) >> 3 | (a.ack3 & 0x80) >> 2,
                    a.ack0 & 0x7f,
                    a.ack1 & 0x7f,
                    0x0a | (a.ack0 & 0x80) >> 3 | (a.ack1 & 0x80) >> 2,
                    a.ack2 & 0x7f,
                    a.ack3 & 0x7f,
                    0x00,
                ]);
            }
            DgtMessage::ClockNull => payload.extend([0u8; 7]),
            DgtMessage::EeMoves(e) => payload.extend(&e.data),
            DgtMessage::BusAddress { address } => {
                if *address > 0x3fff {
                    return Err(EncodeError::OutOfRange {
                        what: "bus address",
                        value: u32::from(*address),
                        max: 0x3fff,
                    });
                }
                payload.extend([(address >> 7) as u8, (address & 0x7f) as u8]);
            }
            DgtMessage::SerialNumber { serial } => {
                fixed_ascii(&mut payload, "serial number", serial, 5)?
            }
            DgtMessage::Trademark { text } => {
                ascii_into(&mut payload, "trademark", text)?;
            }
            DgtMessage::Version { major, minor } => payload.extend([*major, *minor]),
            DgtMessage::BatteryStatus(b) => payload.extend(b.to_bytes()),
            DgtMessage::LongSerialNumber { serial } => {
                fixed_ascii(&mut payload, "long serial number", serial, 10)?
            }
            DgtMessage::Unknown { payload: p, .. } | DgtMessage::Invalid { payload: p, .. } => {
                payload.extend(p)
            }
        }
        let msg_id = self.id();
        if msg_id & 0x80 == 0 {
            return Err(EncodeError::OutOfRange {
                what: "message id (needs the high bit)",
                value: u32::from(msg_id),
                max: 0xff,
            });
        }
        // Invalid frames are written as they are (the simulator uses them to test hosts);
        // everything else must keep the §2.2 rule that payload bytes are 7-bit.
        if !matches!(self, DgtMessage::Invalid { .. })
            && let Some((offset, &value)) =
                payload.iter().enumerate().find(|(_, b)| **b & 0x80 != 0)
        {
            return Err(EncodeError::HighBit {
                what,
                offset,
                value,
            });
        }
        let total = payload.len() + HEADER_LEN;
        if total > MAX_FRAME_LEN {
            return Err(EncodeError::TooLong {
                what: "frame",
                len: total,
                max: MAX_FRAME_LEN,
            });
        }
        dst.reserve(total);
        dst.put_u8(msg_id);
        dst.put_u8((total >> 7) as u8 & 0x7f);
        dst.put_u8(total as u8 & 0x7f);
        dst.put_slice(&payload);
        Ok(())
    }
}

fn fixed_ascii(
    dst: &mut Vec<u8>,
    what: &'static str,
    s: &str,
    n: usize,
) -> Result<(), EncodeError> {
    let len = ascii_into(dst, what, s)?;
    if len != n {
        return Err(EncodeError::TooLong { what, len, max: n });
    }
    Ok(())
}

fn parse_bwtime(p: &[u8]) -> Result<DgtMessage, PayloadError> {
    if p.iter().all(|&b| b == 0) {
        return Ok(DgtMessage::ClockNull);
    }
    // §5.2: the hours nibble of a time can never be 10, so 0x0a marks an ACK.
    if p[0] & 0x0f == 0x0a || p[3] & 0x0f == 0x0a {
        return Ok(DgtMessage::ClockAck(ClockAck {
            ack0: (p[1] & 0x7f) | ((p[3] << 3) & 0x80),
            ack1: (p[2] & 0x7f) | ((p[3] << 2) & 0x80),
            ack2: (p[4] & 0x7f) | ((p[0] << 3) & 0x80),
            ack3: (p[5] & 0x7f) | ((p[0] << 2) & 0x80),
        }));
    }
    let side = |o: usize| -> Result<SideTime, PayloadError> {
        let h = p[o] & 0x0f;
        if h > 9 {
            return Err(PayloadError::Hours {
                offset: o,
                value: h,
            });
        }
        let bcd = |i: usize| {
            bcd_decode(p[i]).ok_or(PayloadError::Bcd {
                offset: i,
                value: p[i],
            })
        };
        Ok(SideTime {
            hours: h,
            minutes: bcd(o + 1)?,
            seconds: bcd(o + 2)?,
            final_flag: p[o] & 0x10 != 0,
            time_per_move: p[o] & 0x20 != 0,
            flag: p[o] & 0x40 != 0,
        })
    };
    // §4.2: bytes 0..2 are the RIGHT side, 3..5 the left.
    Ok(DgtMessage::ClockTime(ClockTime {
        right: side(0)?,
        left: side(3)?,
        status: ClockStatus::from_byte(p[6]),
    }))
}

/// Serde derives arrays only up to 32 elements.
mod board64 {
    use super::Piece;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[Piece; 64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[Piece; 64], D::Error> {
        let v = Vec::<Piece>::deserialize(d)?;
        let n = v.len();
        v.try_into()
            .map_err(|_| serde::de::Error::custom(format!("board needs 64 squares, got {n}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::clock::{ClockButton, ClockSide, clock_cmd};

    #[test]
    fn bwtime_worked_example_9_1() {
        let m = DgtMessage::from_frame(0x8d, &[0x00, 0x59, 0x59, 0x01, 0x30, 0x00, 0x09]);
        let DgtMessage::ClockTime(t) = m else {
            panic!("not a clock time: {m:?}")
        };
        assert_eq!(t.left.total_seconds(), 5400);
        assert_eq!(t.right.total_seconds(), 3599);
        assert!(t.status.running && t.status.left_turn && !t.status.right_high);
        assert_eq!(t.status.turn(), Some(ClockSide::Left));
    }

    #[test]
    fn flag_fall_from_johan_capture_9_4() {
        // 8d 00 0a 30 00 00 20 00 16 12: right 0:00:00 fallen (+Fischer), stopped,
        // right high and right's turn.
        let m = DgtMessage::from_frame(0x8d, &[0x30, 0x00, 0x00, 0x20, 0x00, 0x16, 0x12]);
        let DgtMessage::ClockTime(t) = m else {
            panic!("not a clock time: {m:?}")
        };
        assert!(t.right.final_flag && t.right.time_per_move && !t.right.flag);
        assert_eq!(t.right.total_seconds(), 0);
        assert_eq!(t.left.total_seconds(), 16);
        assert!(!t.status.running);
        assert_eq!(t.status.high_side(), ClockSide::Right);
        assert_eq!(t.status.turn(), Some(ClockSide::Right));
    }

    #[test]
    fn ack_examples_9_3() {
        let ack = |p: [u8; 7]| match DgtMessage::from_frame(0x8d, &p) {
            DgtMessage::ClockAck(a) => a,
            other => panic!("not an ack: {other:?}"),
        };
        let a = ack([0x0a, 0x10, 0x09, 0x0a, 0x20, 0x00, 0x00]);
        assert_eq!(a.version(), Some((2, 0)));
        let a = ack([0x0a, 0x10, 0x08, 0x2a, 0x41, 0x35, 0x00]);
        assert_eq!(a.ack1, 0x88);
        assert_eq!(a.button(), Some((ClockButton::Ok, 0x41)));
        let a = ack([0x0a, 0x40, 0x0a, 0x0a, 0x00, 0x00, 0x00]);
        assert!(!a.is_ok());
        assert_eq!(a.reply_to(), Some(clock_cmd::SET_AND_RUN));
    }

    #[test]
    fn bad_bcd_is_invalid_with_position() {
        let m = DgtMessage::from_frame(0x8d, &[0x00, 0x5a, 0x00, 0x00, 0x00, 0x00, 0x00]);
        assert_eq!(
            m,
            DgtMessage::Invalid {
                id: 0x8d,
                payload: vec![0x00, 0x5a, 0x00, 0x00, 0x00, 0x00, 0x00],
                error: PayloadError::Bcd {
                    offset: 1,
                    value: 0x5a
                }
            }
        );
    }
}
