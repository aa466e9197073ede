//! The DGT board and clock wire protocol, sans-IO: bytes in, typed messages out, and back
//! (dgt-protocol.md is the reference; section numbers in comments point into it).
//!
//! * [`square`]: [`Piece`] and [`Field`], the board's codes for pieces and squares.
//! * [`message`]: [`DgtMessage`] (board → host), its payload types and frame constants,
//!   with the encoding and decoding of one complete message ([`PayloadError`]).
//! * [`clock`]: what the clock reports inside those messages: readings ([`ClockTime`]),
//!   ACKs ([`ClockAck`]), buttons; and the clock sub-command ids.
//! * [`command`]: [`DgtCommand`] (host → board) and the clock sub-commands it carries
//!   ([`ClockCommand`]), encoded and decoded ([`EncodeError`], [`CommandError`]).
//! * [`codec`]: tokio_util codecs over the byte stream, [`HostCodec`] for the daemon and
//!   [`BoardCodec`] for the simulator; resynchronisation after garbage.
//! * [`board_state`]: [`BoardState`], board dump + field updates → legal moves
//!   ([`BoardEvent`]), for one e-board.
//!
//! `hallclock dgt decode` is the command-line seam.

pub mod board_state;
pub mod clock;
pub mod codec;
pub mod command;
pub mod message;
pub mod square;

pub use board_state::{BoardEvent, BoardState, Orientation};
pub use clock::{ClockAck, ClockButton, ClockSide, ClockStatus, ClockTime, SideTime};
pub use codec::{BoardCodec, CodecError, DecodeStats, HostCodec, decode_all};
pub use command::{
    ClockCommand, ClockText, CommandDecode, CommandError, DgtCommand, EncodeError, RunFlags,
    SetTime,
};
pub use message::{
    BatteryStatus, BoardDump, DgtMessage, EeEvent, EeMoves, FieldUpdate, PayloadError,
};
pub use square::{Field, Piece};
