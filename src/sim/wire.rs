//! The board's side of the wire: splitting host bytes into commands, and framing the
//! board's replies (dgt-protocol.md §2–§5). A device has to be lenient where a host is
//! strict: unknown bytes are ignored, as a real board does.
//!
//! This is deliberately written apart from `dgt::BoardCodec`: the simulator is the other
//! end that the link and `dgt::HostCodec` are tested against, so sharing their code would
//! let one misreading of the spec pass on both sides. It is checked against real traffic
//! instead (tests/sim_captures.rs).

/// A host command as the board receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostFrame {
    /// A one-byte command 0x40–0x58 (§3).
    Single(u8),
    /// `2b LEN 03 CMD data… 00`: the clock sub-command and its data (§5.1).
    Clock { cmd: u8, data: Vec<u8> },
    /// Any other length-prefixed frame (`60` LEDs, `63` Pegasus key): read and ignored.
    Other(u8),
}

/// Takes the next complete command off the front of `buf`; `None` while incomplete.
pub fn next_host_frame(buf: &mut Vec<u8>) -> Option<HostFrame> {
    loop {
        let &first = buf.first()?;
        match first {
            0x2b | 0x60 | 0x63 => {
                let &len = buf.get(1)?;
                let total = 2 + len as usize;
                if buf.len() < total {
                    return None;
                }
                let frame: Vec<u8> = buf.drain(..total).collect();
                if first != 0x2b {
                    return Some(HostFrame::Other(first));
                }
                // frame = 2b LEN 03 CMD data… 00
                if frame.len() < 5 {
                    continue;
                }
                let cmd = frame[3];
                let data = frame[4..frame.len() - 1].to_vec();
                return Some(HostFrame::Clock { cmd, data });
            }
            0x40..=0x58 => {
                buf.remove(0);
                return Some(HostFrame::Single(first));
            }
            _ => {
                buf.remove(0);
            }
        }
    }
}

/// `ID LEN_HI LEN_LO payload…`, the length counting the header (§2.2).
pub fn message(id: u8, payload: &[u8]) -> Vec<u8> {
    let total = payload.len() + 3;
    let mut out = Vec::with_capacity(total);
    out.push(id);
    out.push(((total >> 7) & 0x7f) as u8);
    out.push((total & 0x7f) as u8);
    out.extend_from_slice(payload);
    out
}

pub fn bcd(v: u8) -> u8 {
    ((v / 10) << 4) | (v % 10)
}

/// The 7-byte BWTIME payload of a clock ACK (§5.2 encoder; p6 = 00 as CENT sends).
pub fn ack_payload(ack: [u8; 4]) -> [u8; 7] {
    let [a0, a1, a2, a3] = ack;
    [
        0x0a | ((a2 & 0x80) >> 3) | ((a3 & 0x80) >> 2),
        a0 & 0x7f,
        a1 & 0x7f,
        0x0a | ((a0 & 0x80) >> 3) | ((a1 & 0x80) >> 2),
        a2 & 0x7f,
        a3 & 0x7f,
        0x00,
    ]
}

pub const MSG_BOARD_DUMP: u8 = 0x86;
pub const MSG_BWTIME: u8 = 0x8d;
pub const MSG_FIELD_UPDATE: u8 = 0x8e;
pub const MSG_EE_MOVES: u8 = 0x8f;
pub const MSG_BUSADRES: u8 = 0x90;
pub const MSG_SERIALNR: u8 = 0x91;
pub const MSG_TRADEMARK: u8 = 0x92;
pub const MSG_VERSION: u8 = 0x93;
pub const MSG_BATTERY: u8 = 0xa0;
pub const MSG_LONG_SERIALNR: u8 = 0xa2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_encoding_matches_the_worked_examples() {
        // §9.3: SETNRUN ack and button OK.
        assert_eq!(
            message(MSG_BWTIME, &ack_payload([0x10, 0x0a, 0, 0])),
            [0x8d, 0x00, 0x0a, 0x0a, 0x10, 0x0a, 0x0a, 0, 0, 0]
        );
        assert_eq!(
            message(MSG_BWTIME, &ack_payload([0x10, 0x88, 0x41, 0x35])),
            [0x8d, 0x00, 0x0a, 0x0a, 0x10, 0x08, 0x2a, 0x41, 0x35, 0]
        );
    }

    #[test]
    fn host_frames_split_across_reads() {
        let mut buf = vec![0x40, 0x2b, 0x0a, 0x03, 0x0a, 1, 0x1e];
        assert_eq!(next_host_frame(&mut buf), Some(HostFrame::Single(0x40)));
        assert_eq!(next_host_frame(&mut buf), None);
        buf.extend_from_slice(&[0, 0, 0x3b, 0x3b, 1, 0, 0x45]);
        assert_eq!(
            next_host_frame(&mut buf),
            Some(HostFrame::Clock {
                cmd: 0x0a,
                data: vec![1, 0x1e, 0, 0, 0x3b, 0x3b, 1]
            })
        );
        assert_eq!(next_host_frame(&mut buf), Some(HostFrame::Single(0x45)));
        assert!(buf.is_empty());
    }
}
