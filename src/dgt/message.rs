//! Typed DGT messages in both directions, with their byte encodings.
//!
//! * [`DgtMessage`]: board → host (dgt-protocol.md §4). [`DgtMessage::from_frame`] turns
//!   one framed message (id + payload) into a value and never fails: a payload that breaks
//!   the spec becomes [`DgtMessage::Invalid`] with the position of the problem, an id we do
//!   not know becomes [`DgtMessage::Unknown`]. [`DgtMessage::encode`] writes the frame back
//!   (the simulator's direction).
//! * [`Command`]: host → board (§3, §5). [`Command::encode`] writes the bytes the host
//!   sends; [`Command::decode`] parses one command from the front of a byte slice (the
//!   simulator's direction).
//!
//! Framing, resynchronisation and chunking live in [`crate::dgt::codec`]; this file only
//! knows single, complete messages.

use std::fmt;

use bytes::{BufMut, BytesMut};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

// ---------------------------------------------------------------------------------------
// Pieces and fields
// ---------------------------------------------------------------------------------------

/// A piece code on a DGT square (§4.1, H). Serialised as its FEN letter, `.` for empty,
/// and `draw` / `white_win` / `black_win` for the three "magic" result pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Piece {
    #[default]
    Empty = 0x00,
    WhitePawn = 0x01,
    WhiteRook = 0x02,
    WhiteKnight = 0x03,
    WhiteBishop = 0x04,
    WhiteKing = 0x05,
    WhiteQueen = 0x06,
    BlackPawn = 0x07,
    BlackRook = 0x08,
    BlackKnight = 0x09,
    BlackBishop = 0x0a,
    BlackKing = 0x0b,
    BlackQueen = 0x0c,
    MagicDraw = 0x0d,
    MagicWhiteWin = 0x0e,
    MagicBlackWin = 0x0f,
}

impl Piece {
    const ALL: [Piece; 16] = [
        Piece::Empty,
        Piece::WhitePawn,
        Piece::WhiteRook,
        Piece::WhiteKnight,
        Piece::WhiteBishop,
        Piece::WhiteKing,
        Piece::WhiteQueen,
        Piece::BlackPawn,
        Piece::BlackRook,
        Piece::BlackKnight,
        Piece::BlackBishop,
        Piece::BlackKing,
        Piece::BlackQueen,
        Piece::MagicDraw,
        Piece::MagicWhiteWin,
        Piece::MagicBlackWin,
    ];

    /// The piece for a wire code, `None` for codes above 0x0f.
    pub fn from_code(code: u8) -> Option<Piece> {
        Piece::ALL.get(usize::from(code)).copied()
    }

    /// The wire code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// FEN letter, `.` for empty, a word for the magic pieces.
    pub fn as_str(self) -> &'static str {
        match self {
            Piece::Empty => ".",
            Piece::WhitePawn => "P",
            Piece::WhiteRook => "R",
            Piece::WhiteKnight => "N",
            Piece::WhiteBishop => "B",
            Piece::WhiteKing => "K",
            Piece::WhiteQueen => "Q",
            Piece::BlackPawn => "p",
            Piece::BlackRook => "r",
            Piece::BlackKnight => "n",
            Piece::BlackBishop => "b",
            Piece::BlackKing => "k",
            Piece::BlackQueen => "q",
            Piece::MagicDraw => "draw",
            Piece::MagicWhiteWin => "white_win",
            Piece::MagicBlackWin => "black_win",
        }
    }

    /// Inverse of [`Piece::as_str`].
    pub fn from_name(s: &str) -> Option<Piece> {
        Piece::ALL.iter().copied().find(|p| p.as_str() == s)
    }

    /// The chess piece, `None` for empty and the magic pieces.
    pub fn to_shakmaty(self) -> Option<shakmaty::Piece> {
        use shakmaty::{Color, Role};
        let (color, role) = match self {
            Piece::WhitePawn => (Color::White, Role::Pawn),
            Piece::WhiteRook => (Color::White, Role::Rook),
            Piece::WhiteKnight => (Color::White, Role::Knight),
            Piece::WhiteBishop => (Color::White, Role::Bishop),
            Piece::WhiteKing => (Color::White, Role::King),
            Piece::WhiteQueen => (Color::White, Role::Queen),
            Piece::BlackPawn => (Color::Black, Role::Pawn),
            Piece::BlackRook => (Color::Black, Role::Rook),
            Piece::BlackKnight => (Color::Black, Role::Knight),
            Piece::BlackBishop => (Color::Black, Role::Bishop),
            Piece::BlackKing => (Color::Black, Role::King),
            Piece::BlackQueen => (Color::Black, Role::Queen),
            Piece::Empty | Piece::MagicDraw | Piece::MagicWhiteWin | Piece::MagicBlackWin => {
                return None;
            }
        };
        Some(shakmaty::Piece { color, role })
    }

    /// The DGT code of a chess piece.
    pub fn from_shakmaty(piece: shakmaty::Piece) -> Piece {
        use shakmaty::{Color, Role};
        match (piece.color, piece.role) {
            (Color::White, Role::Pawn) => Piece::WhitePawn,
            (Color::White, Role::Rook) => Piece::WhiteRook,
            (Color::White, Role::Knight) => Piece::WhiteKnight,
            (Color::White, Role::Bishop) => Piece::WhiteBishop,
            (Color::White, Role::King) => Piece::WhiteKing,
            (Color::White, Role::Queen) => Piece::WhiteQueen,
            (Color::Black, Role::Pawn) => Piece::BlackPawn,
            (Color::Black, Role::Rook) => Piece::BlackRook,
            (Color::Black, Role::Knight) => Piece::BlackKnight,
            (Color::Black, Role::Bishop) => Piece::BlackBishop,
            (Color::Black, Role::King) => Piece::BlackKing,
            (Color::Black, Role::Queen) => Piece::BlackQueen,
        }
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Piece {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Piece {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Piece::from_name(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown piece {s:?}")))
    }
}

/// A square as the board numbers it (§4.1, H): 0 = a8, 7 = h8, 8 = a7 … 63 = h1, with the
/// connector on the player's left. The board never renumbers a rotated set-up; the names
/// here are the board's, not the game's (see [`crate::dgt::board_state`] for orientation).
/// Serialised as its name, e.g. `"e2"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Field(u8);

impl Field {
    /// `None` unless `index` is 0..=63.
    pub fn new(index: u8) -> Option<Field> {
        (index < 64).then_some(Field(index))
    }

    /// 0..=63.
    pub fn index(self) -> u8 {
        self.0
    }

    /// All 64 fields in wire order.
    pub fn all() -> impl Iterator<Item = Field> {
        (0..64).map(Field)
    }

    /// The square of the same name, i.e. as seen with white on the board's rows 1 and 2.
    pub fn square(self) -> shakmaty::Square {
        let file = u32::from(self.0 % 8);
        let rank = 7 - u32::from(self.0 / 8);
        shakmaty::Square::from_coords(shakmaty::File::new(file), shakmaty::Rank::new(rank))
    }

    /// The field of the same name as `sq`.
    pub fn from_square(sq: shakmaty::Square) -> Field {
        let file = u8::from(sq.file());
        let rank = u8::from(sq.rank());
        Field((7 - rank) * 8 + file)
    }

    /// The field at the same place on a board turned by 180° (what a rotated set-up
    /// means, §4.1).
    pub fn rotated(self) -> Field {
        Field(63 - self.0)
    }

    /// Name such as `e2`.
    pub fn name(self) -> String {
        self.square().to_string()
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.square(), f)
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let sq: shakmaty::Square = s
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("unknown field {s:?}")))?;
        Ok(Field::from_square(sq))
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Board → host
// ---------------------------------------------------------------------------------------

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

fn range(what: &'static str, v: u8, max: u8) -> Result<(), EncodeError> {
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

fn ascii_into(dst: &mut Vec<u8>, what: &'static str, s: &str) -> Result<usize, EncodeError> {
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

// ---------------------------------------------------------------------------------------
// Host → board
// ---------------------------------------------------------------------------------------

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

/// One host → board command (§3, §5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
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

/// What [`Command::decode`] found at the front of a byte slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandDecode {
    /// A command and the number of bytes it used.
    Command(Command, usize),
    /// The slice ends inside a length-prefixed frame; wait for more bytes.
    Incomplete,
}

impl Command {
    const SIMPLE: [(u8, Command); 16] = [
        (cmd::RESET, Command::Reset),
        (cmd::SEND_CLOCK, Command::SendClock),
        (cmd::SEND_BOARD, Command::SendBoard),
        (cmd::SEND_UPDATE, Command::SendUpdate),
        (cmd::SEND_UPDATE_BOARD, Command::SendUpdateBoard),
        (cmd::RETURN_SERIAL_NUMBER, Command::ReturnSerialNumber),
        (cmd::RETURN_BUS_ADDRESS, Command::ReturnBusAddress),
        (cmd::SEND_TRADEMARK, Command::SendTrademark),
        (
            cmd::REQUEST_HARDWARE_VERSION,
            Command::RequestHardwareVersion,
        ),
        (cmd::SEND_EE_MOVES, Command::SendEeMoves),
        (cmd::TO_BUS_MODE, Command::ToBusMode),
        (cmd::SEND_UPDATE_NICE, Command::SendUpdateNice),
        (cmd::SEND_BATTERY_STATUS, Command::SendBatteryStatus),
        (cmd::SEND_VERSION, Command::SendVersion),
        (cmd::START_BOOTLOADER, Command::StartBootloader),
        (
            cmd::RETURN_LONG_SERIAL_NUMBER,
            Command::ReturnLongSerialNumber,
        ),
    ];

    /// Shorthand for `Command::Clock { command }`.
    pub fn clock(command: ClockCommand) -> Command {
        Command::Clock { command }
    }

    /// Appends the command's bytes to `dst`. On error nothing is written.
    pub fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        let simple = Command::SIMPLE
            .iter()
            .find(|(_, c)| c == self)
            .map(|(b, _)| *b);
        if let Some(b) = simple {
            dst.put_u8(b);
            return Ok(());
        }
        match self {
            Command::Clock { command } => {
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
            Command::Framed { id, data } => {
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
            Command::Other { byte } => dst.put_u8(*byte),
            Command::Invalid { bytes, .. } => dst.put_slice(bytes),
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
    /// Never fails: malformed clock frames become [`Command::Invalid`], unknown bytes
    /// [`Command::Other`]. `None` for an empty slice.
    pub fn decode(src: &[u8]) -> Option<CommandDecode> {
        let &first = src.first()?;
        if let Some((_, c)) = Command::SIMPLE.iter().find(|(b, _)| *b == first) {
            return Some(CommandDecode::Command(c.clone(), 1));
        }
        let framed = matches!(
            first,
            cmd::CLOCK_MESSAGE | cmd::I2C_CLOCK_MESSAGE | cmd::SET_LEDS | cmd::DEVELOPER_KEY
        );
        if !framed {
            return Some(CommandDecode::Command(Command::Other { byte: first }, 1));
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
                Ok(command) => Command::Clock { command },
                Err(error) => Command::Invalid {
                    bytes: frame.to_vec(),
                    error,
                },
            }
        } else {
            Command::Framed {
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

// ---------------------------------------------------------------------------------------
// serde helpers
// ---------------------------------------------------------------------------------------

/// Bytes as a lowercase hex string, as dgt-protocol.md writes them.
mod hex {
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
    fn setnrun_worked_example_9_2() {
        let c = Command::clock(ClockCommand::SetAndRun {
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
        let c = Command::clock(ClockCommand::Ascii { text, beep: 3 });
        assert_eq!(
            c.to_bytes().unwrap(),
            [
                0x2b, 0x0c, 0x03, 0x0c, 0x65, 0x32, 0x65, 0x34, 0x20, 0x20, 0x20, 0x20, 0x03, 0x00
            ]
        );
        let c = Command::clock(ClockCommand::Beep { duration: 0x10 });
        assert_eq!(c.to_bytes().unwrap(), [0x2b, 0x04, 0x03, 0x0b, 0x10, 0x00]);
        let c = Command::clock(ClockCommand::Display {
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
    fn field_names_follow_h_numbering() {
        assert_eq!(Field::new(0).unwrap().name(), "a8");
        assert_eq!(Field::new(52).unwrap().name(), "e2");
        assert_eq!(Field::new(36).unwrap().name(), "e4");
        assert_eq!(Field::new(63).unwrap().name(), "h1");
        assert!(Field::new(64).is_none());
        for f in Field::all() {
            assert_eq!(Field::from_square(f.square()), f);
        }
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

    #[test]
    fn clock_frame_decode_reports_structure_errors() {
        let got = Command::decode(&[0x2b, 0x03, 0x04, 0x03, 0x00]);
        assert!(matches!(
            got,
            Some(CommandDecode::Command(
                Command::Invalid {
                    error: CommandError::ClockMarker { offset: 2, .. },
                    ..
                },
                5
            ))
        ));
        assert_eq!(
            Command::decode(&[0x2b, 0x03, 0x03]),
            Some(CommandDecode::Incomplete)
        );
    }
}
