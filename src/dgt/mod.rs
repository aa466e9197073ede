//! The DGT board and clock wire protocol, sans-IO: bytes in, typed messages out, and back
//! (dgt-protocol.md is the reference; section numbers in comments point into it).
//!
//! * [`message`]: [`DgtMessage`] (board → host) and [`Command`] (host → board), each with
//!   its encoding and decoding of one complete message.
//! * [`codec`]: tokio_util codecs over the byte stream, [`HostCodec`] for the daemon and
//!   [`BoardCodec`] for the simulator; resynchronisation after garbage.
//! * [`board_state`]: [`BoardState`], board dump + field updates → legal moves
//!   ([`BoardEvent`]), for one e-board.
//!
//! `hallclock dgt decode` is the command-line seam.

pub mod board_state;
pub mod codec;
pub mod message;

pub use board_state::{BoardEvent, BoardState, Orientation};
pub use codec::{BoardCodec, CodecError, DecodeStats, HostCodec, decode_all};
pub use message::{
    BatteryStatus, BoardDump, ClockAck, ClockButton, ClockCommand, ClockSide, ClockStatus,
    ClockText, ClockTime, Command, CommandDecode, CommandError, DgtMessage, EeEvent, EeMoves,
    EncodeError, Field, FieldUpdate, PayloadError, Piece, RunFlags, SetTime, SideTime,
};
