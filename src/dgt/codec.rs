//! tokio_util codecs for the DGT serial stream, in both roles.
//!
//! * [`HostCodec`] (the daemon's side): decodes board → host [`DgtMessage`]s, encodes
//!   host → board [`DgtCommand`]s.
//! * [`BoardCodec`] (the simulator's side): decodes [`DgtCommand`]s, encodes [`DgtMessage`]s.
//!
//! Both tolerate any chunking of the input. [`HostCodec`] resynchronises after garbage by
//! the rule every robust client uses (§2.2): a byte with the high bit set starts a
//! message; if a length byte or a payload byte has the high bit set, the bytes before it
//! are dropped and scanning restarts at that byte. Data problems never end the stream:
//! the decoders' only error is I/O.

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::command::{CommandDecode, DgtCommand, EncodeError};
use super::message::{DgtMessage, HEADER_LEN, MAX_FRAME_LEN, fixed_frame_len};

/// The error of both codecs: I/O from the transport, or a value that cannot be encoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("DGT link I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot encode: {0}")]
    Encode(#[from] EncodeError),
}

/// Counters a link can log or publish to spot a bad cable (picochess#218 saw >1k bad
/// messages before play halted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DecodeStats {
    /// Messages returned.
    pub messages: u64,
    /// Bytes thrown away while resynchronising (including a truncated tail at EOF).
    pub skipped_bytes: u64,
    /// All-zero BWTIME dummies dropped (§5.2).
    pub null_clock: u64,
}

/// The daemon's codec: board → host messages in, host → board commands out.
#[derive(Debug, Default)]
pub struct HostCodec {
    /// Payload bytes of the frame at the front of the buffer already checked for a high
    /// bit, so a large `8f` dump arriving in small reads is scanned once, not quadratically.
    checked: usize,
    stats: DecodeStats,
    keep_null_clock: bool,
}

impl HostCodec {
    /// A decoder at the start of a stream.
    pub fn new() -> HostCodec {
        HostCodec::default()
    }

    /// Also return the all-zero BWTIME dummy as [`DgtMessage::ClockNull`] instead of
    /// dropping it (for tools that want to see every frame).
    pub fn keep_null_clock(mut self, keep: bool) -> HostCodec {
        self.keep_null_clock = keep;
        self
    }

    /// Counters since creation.
    pub fn stats(&self) -> DecodeStats {
        self.stats
    }

    fn skip(&mut self, src: &mut BytesMut, n: usize) {
        src.advance(n);
        self.checked = 0;
        self.stats.skipped_bytes += n as u64;
    }

    /// One step of the frame scanner: `Ok(Some)` a message, `Ok(None)` need more bytes.
    fn next_frame(&mut self, src: &mut BytesMut) -> Option<DgtMessage> {
        loop {
            // Everything before the first high-bit byte is garbage.
            let start = src.iter().position(|b| b & 0x80 != 0);
            match start {
                None => {
                    let n = src.len();
                    self.skip(src, n);
                    return None;
                }
                Some(0) => {}
                Some(n) => self.skip(src, n),
            }
            if src.len() < HEADER_LEN {
                return None;
            }
            let (msg_id, hi, lo) = (src[0], src[1], src[2]);
            if hi & 0x80 != 0 || lo & 0x80 != 0 {
                self.skip(src, 1);
                continue;
            }
            let len = usize::from(hi) << 7 | usize::from(lo);
            let plausible = (HEADER_LEN..=MAX_FRAME_LEN).contains(&len)
                && fixed_frame_len(msg_id).is_none_or(|fixed| fixed == len);
            if !plausible {
                self.skip(src, 1);
                continue;
            }
            let have = src.len().min(len);
            let from = HEADER_LEN + self.checked;
            if let Some(bad) = src[from.min(have)..have].iter().position(|b| b & 0x80 != 0) {
                // Restart at the high-bit byte: it is most likely the next real header.
                self.skip(src, from + bad);
                continue;
            }
            if src.len() < len {
                self.checked = have - HEADER_LEN;
                src.reserve(len - src.len());
                return None;
            }
            self.checked = 0;
            // Parse in place and then advance: `split_to` would cost a reference-counted
            // handle per message.
            let msg = DgtMessage::from_frame(msg_id, &src[HEADER_LEN..len]);
            src.advance(len);
            if msg == DgtMessage::ClockNull && !self.keep_null_clock {
                // §5.2: BT 2.10 firmware sends it after clock commands; it means nothing.
                self.stats.null_clock += 1;
                continue;
            }
            self.stats.messages += 1;
            return Some(msg);
        }
    }
}

impl Decoder for HostCodec {
    type Item = DgtMessage;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<DgtMessage>, CodecError> {
        Ok(self.next_frame(src))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<DgtMessage>, CodecError> {
        let m = self.next_frame(src);
        if m.is_none() && !src.is_empty() {
            // A message cut off by the end of input is garbage, not an error.
            let n = src.len();
            self.skip(src, n);
        }
        Ok(m)
    }
}

impl Encoder<DgtCommand> for HostCodec {
    type Error = CodecError;
    fn encode(&mut self, item: DgtCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        Ok(item.encode(dst)?)
    }
}

impl Encoder<&DgtCommand> for HostCodec {
    type Error = CodecError;
    fn encode(&mut self, item: &DgtCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        Ok(item.encode(dst)?)
    }
}

/// The simulator's codec: host → board commands in, board → host messages out.
/// Host → board bytes have no resynchronisation marker; like a real board it takes the
/// stream byte by byte, and bytes that are no command come out as [`DgtCommand::Other`].
#[derive(Debug, Default)]
pub struct BoardCodec;

impl BoardCodec {
    /// A board-side codec.
    pub fn new() -> BoardCodec {
        BoardCodec
    }
}

impl Decoder for BoardCodec {
    type Item = DgtCommand;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<DgtCommand>, CodecError> {
        match DgtCommand::decode(src) {
            Some(CommandDecode::Command(c, used)) => {
                src.advance(used);
                Ok(Some(c))
            }
            Some(CommandDecode::Incomplete) | None => Ok(None),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<DgtCommand>, CodecError> {
        let c = self.decode(src)?;
        if c.is_none() {
            src.clear();
        }
        Ok(c)
    }
}

impl Encoder<DgtMessage> for BoardCodec {
    type Error = CodecError;
    fn encode(&mut self, item: DgtMessage, dst: &mut BytesMut) -> Result<(), CodecError> {
        Ok(item.encode(dst)?)
    }
}

impl Encoder<&DgtMessage> for BoardCodec {
    type Error = CodecError;
    fn encode(&mut self, item: &DgtMessage, dst: &mut BytesMut) -> Result<(), CodecError> {
        Ok(item.encode(dst)?)
    }
}

/// Decodes a complete byte string as the host would (EOF at the end).
pub fn decode_all(bytes: &[u8]) -> Vec<DgtMessage> {
    let mut codec = HostCodec::new();
    let mut buf = BytesMut::from(bytes);
    let mut out = Vec::new();
    while let Ok(Some(m)) = codec.decode_eof(&mut buf) {
        out.push(m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::message::FieldUpdate;
    use crate::dgt::square::Piece;

    fn e2_empty() -> DgtMessage {
        DgtMessage::FieldUpdate(FieldUpdate {
            field: crate::dgt::square::Field::new(52).unwrap(),
            piece: Piece::Empty,
        })
    }

    #[test]
    fn resyncs_after_garbage_and_bad_header() {
        // garbage, a header whose length byte has the high bit, a truncated frame, then a
        // real one
        let bytes = [
            0x01, 0x02, 0x8e, 0x80, 0x05, 0x8e, 0x00, 0x05, 0x34, 0x8e, 0x00, 0x05, 0x34, 0x00,
        ];
        let mut c = HostCodec::new();
        let mut buf = BytesMut::from(&bytes[..]);
        assert_eq!(c.decode(&mut buf).unwrap(), Some(e2_empty()));
        assert_eq!(c.decode(&mut buf).unwrap(), None);
        assert_eq!(c.stats().skipped_bytes, 9);
    }

    #[test]
    fn null_bwtime_is_dropped() {
        let bytes = [
            0x8d, 0x00, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0x8e, 0x00, 0x05, 0x34, 0x00,
        ];
        assert_eq!(decode_all(&bytes), vec![e2_empty()]);
    }

    #[test]
    fn wrong_length_for_fixed_id_resyncs() {
        // 8e announcing 6 bytes is not a field update; the real frame after it decodes.
        let bytes = [
            0x8e, 0x00, 0x06, 0x34, 0x00, 0x00, 0x8e, 0x00, 0x05, 0x34, 0x00,
        ];
        assert_eq!(decode_all(&bytes), vec![e2_empty()]);
    }

    #[test]
    fn unknown_id_is_reported() {
        let bytes = [0xb7, 0x00, 0x05, 0x01, 0x02];
        assert_eq!(
            decode_all(&bytes),
            vec![DgtMessage::Unknown {
                id: 0xb7,
                payload: vec![1, 2]
            }]
        );
    }

    #[test]
    fn board_codec_splits_commands() {
        let mut c = BoardCodec::new();
        let mut buf = BytesMut::from(&[0x40u8, 0x2b, 0x03, 0x03, 0x09][..]);
        assert_eq!(c.decode(&mut buf).unwrap(), Some(DgtCommand::Reset));
        assert_eq!(c.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(&[0x00]);
        assert_eq!(
            c.decode(&mut buf).unwrap(),
            Some(DgtCommand::clock(
                crate::dgt::command::ClockCommand::Version
            ))
        );
    }
}
