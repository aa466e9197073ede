//! Properties of the DGT codecs: no input panics them, they find the next frame after any
//! garbage, and every message and command survives encode → decode (and JSON).

use bytes::BytesMut;
use hallclock::dgt::message::{BoardDump, FieldUpdate, id};
use hallclock::dgt::{
    BatteryStatus, BoardCodec, ClockAck, ClockCommand, ClockStatus, ClockText, ClockTime,
    DgtCommand, DgtMessage, EeMoves, Field, HostCodec, Piece, RunFlags, SetTime, SideTime,
    decode_all,
};
use proptest::collection::vec;
use proptest::prelude::*;
use tokio_util::codec::{Decoder, Encoder};

fn piece() -> impl Strategy<Value = Piece> {
    (0u8..16).prop_map(|c| Piece::from_code(c).expect("0..16 are piece codes"))
}

fn seven_bit() -> impl Strategy<Value = u8> {
    0u8..0x80
}

fn ascii(len: impl Into<proptest::collection::SizeRange>) -> impl Strategy<Value = String> {
    vec(seven_bit(), len).prop_map(|v| v.into_iter().map(char::from).collect())
}

fn side_time() -> impl Strategy<Value = SideTime> {
    (0u8..=9, 0u8..=59, 0u8..=59, any::<[bool; 3]>()).prop_map(|(h, m, s, [a, b, c])| SideTime {
        hours: h,
        minutes: m,
        seconds: s,
        final_flag: a,
        time_per_move: b,
        flag: c,
    })
}

fn clock_time() -> impl Strategy<Value = ClockTime> {
    (side_time(), side_time(), 0u8..0x40)
        .prop_map(|(left, right, s)| ClockTime {
            left,
            right,
            status: ClockStatus::from_byte(s),
        })
        // An all-zero reading is byte for byte the BT dummy frame (§5.2).
        .prop_filter("all-zero reading", |t| *t != ClockTime::default())
}

const KNOWN_IDS: [u8; 10] = [
    id::BOARD_DUMP,
    id::BWTIME,
    id::FIELD_UPDATE,
    id::EE_MOVES,
    id::BUS_ADDRESS,
    id::SERIAL_NUMBER,
    id::TRADEMARK,
    id::VERSION,
    id::BATTERY_STATUS,
    id::LONG_SERIAL_NUMBER,
];

/// Every board → host message a well-behaved board can send (no `Invalid`, no dummy).
fn message() -> impl Strategy<Value = DgtMessage> {
    prop_oneof![
        vec(piece(), 64).prop_map(|v| DgtMessage::BoardDump(BoardDump {
            board: v.try_into().expect("64 squares")
        })),
        (0u8..64, piece()).prop_map(|(f, piece)| DgtMessage::FieldUpdate(FieldUpdate {
            field: Field::new(f).expect("0..64"),
            piece
        })),
        clock_time().prop_map(DgtMessage::ClockTime),
        any::<[u8; 4]>().prop_map(|[a, b, c, d]| DgtMessage::ClockAck(ClockAck {
            ack0: a,
            ack1: b,
            ack2: c,
            ack3: d
        })),
        vec(seven_bit(), 0..300).prop_map(|data| DgtMessage::EeMoves(EeMoves { data })),
        (0u16..0x4000).prop_map(|address| DgtMessage::BusAddress { address }),
        ascii(5).prop_map(|serial| DgtMessage::SerialNumber { serial }),
        ascii(0..40).prop_map(|text| DgtMessage::Trademark { text }),
        (seven_bit(), seven_bit()).prop_map(|(major, minor)| DgtMessage::Version { major, minor }),
        vec(seven_bit(), 9).prop_map(|b| DgtMessage::BatteryStatus(BatteryStatus {
            percent: b[0],
            running_hours: b[1],
            running_minutes: b[2],
            on_hours: b[3],
            on_minutes: b[4],
            standby_days: b[5],
            standby_hours: b[6],
            standby_minutes: b[7],
            status: b[8],
        })),
        ascii(10).prop_map(|serial| DgtMessage::LongSerialNumber { serial }),
        (0x80u8..=0xff, vec(seven_bit(), 0..40))
            .prop_filter("known id", |(i, _)| !KNOWN_IDS.contains(i))
            .prop_map(|(id, payload)| DgtMessage::Unknown { id, payload }),
    ]
}

fn set_time() -> impl Strategy<Value = SetTime> {
    (0u8..=9, 0u8..=59, 0u8..=59, any::<bool>()).prop_map(|(hours, minutes, seconds, count_up)| {
        SetTime {
            hours,
            minutes,
            seconds,
            count_up,
        }
    })
}

fn clock_command() -> impl Strategy<Value = ClockCommand> {
    prop_oneof![
        (any::<[u8; 6]>(), any::<u8>(), any::<u8>()).prop_map(|(segments, icons, beep)| {
            ClockCommand::Display {
                segments,
                icons,
                beep,
            }
        }),
        any::<[u8; 5]>().prop_map(|[a, b, c, d, e]| ClockCommand::Icons {
            left: a,
            right: b,
            left_period: c,
            right_period: d,
            special: e
        }),
        Just(ClockCommand::End),
        Just(ClockCommand::Button),
        Just(ClockCommand::Version),
        (set_time(), set_time(), 0u8..16).prop_map(|(left, right, f)| ClockCommand::SetAndRun {
            left,
            right,
            flags: RunFlags::from_byte(f)
        }),
        any::<u8>().prop_map(|duration| ClockCommand::Beep { duration }),
        (vec(seven_bit(), 8), any::<u8>()).prop_map(|(t, beep)| ClockCommand::Ascii {
            text: ClockText::from_bytes(t.try_into().expect("8 bytes")).expect("ASCII"),
            beep
        }),
        (any::<u8>(), vec(any::<u8>(), 0..30))
            .prop_filter("known sub-command", |(c, _)| {
                !matches!(c, 0x01 | 0x02 | 0x03 | 0x08 | 0x09 | 0x0a | 0x0b | 0x0c)
            })
            .prop_map(|(cmd, data)| ClockCommand::Other { cmd, data }),
    ]
}

fn command() -> impl Strategy<Value = DgtCommand> {
    let simple: Vec<DgtCommand> = (0x40u8..=0x4e)
        .chain([0x55])
        .filter_map(|b| match DgtCommand::decode(&[b]) {
            Some(hallclock::dgt::CommandDecode::Command(c, 1)) => Some(c),
            _ => None,
        })
        .collect();
    prop_oneof![
        proptest::sample::select(simple),
        clock_command().prop_map(DgtCommand::clock),
        (
            proptest::sample::select(vec![0x2cu8, 0x60, 0x63]),
            vec(any::<u8>(), 0..30)
        )
            .prop_map(|(id, data)| DgtCommand::Framed { id, data }),
        any::<u8>()
            .prop_filter("a command byte", |b| {
                !matches!(b, 0x40..=0x4e | 0x55 | 0x2b | 0x2c | 0x60 | 0x63)
            })
            .prop_map(|byte| DgtCommand::Other { byte }),
    ]
}

/// Feeds `bytes` to a host codec in the given chunk sizes (cycled).
fn decode_chunked(bytes: &[u8], chunks: &[usize]) -> Vec<DgtMessage> {
    let mut codec = HostCodec::new();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut sizes = chunks.iter().cycle();
    while !rest.is_empty() {
        let n = sizes.next().copied().unwrap_or(1).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        while let Some(m) = codec.decode(&mut buf).expect("no I/O here") {
            out.push(m);
        }
    }
    while let Some(m) = codec.decode_eof(&mut buf).expect("no I/O here") {
        out.push(m);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic_either_codec(
        bytes in vec(any::<u8>(), 0..2000),
        chunks in vec(1usize..40, 1..8),
    ) {
        let whole = decode_all(&bytes);
        // Chunking must not change what is decoded.
        prop_assert_eq!(decode_chunked(&bytes, &chunks), whole);

        let mut board = BoardCodec::new();
        let mut buf = BytesMut::from(&bytes[..]);
        while let Some(_c) = board.decode_eof(&mut buf).expect("no I/O here") {}
        prop_assert!(buf.is_empty());
    }

    #[test]
    fn after_any_garbage_the_next_valid_frame_decodes(
        garbage in vec(any::<u8>(), 0..200),
        msg in message(),
        chunks in vec(1usize..20, 1..5),
    ) {
        let mut bytes = garbage;
        bytes.extend(msg.to_bytes().expect("valid message encodes"));
        let got = decode_chunked(&bytes, &chunks);
        prop_assert_eq!(got.last(), Some(&msg));
    }

    #[test]
    fn messages_round_trip(msgs in vec(message(), 1..8), chunks in vec(1usize..30, 1..5)) {
        let mut board = BoardCodec::new();
        let mut bytes = BytesMut::new();
        for m in &msgs {
            board.encode(m, &mut bytes).expect("valid message encodes");
        }
        prop_assert_eq!(&decode_chunked(&bytes, &chunks), &msgs);
        for m in &msgs {
            let json = serde_json::to_string(m).expect("serialises");
            let back: DgtMessage = serde_json::from_str(&json).expect("deserialises");
            prop_assert_eq!(&back, m);
        }
    }

    #[test]
    fn commands_round_trip(cmds in vec(command(), 1..8), split in 0usize..200) {
        let mut host = HostCodec::new();
        let mut bytes = BytesMut::new();
        for c in &cmds {
            host.encode(c, &mut bytes).expect("valid command encodes");
        }
        // Any split point: the board codec waits for the rest of a frame.
        let split = split.min(bytes.len());
        let tail = bytes.split_off(split);
        let mut board = BoardCodec::new();
        let mut got = Vec::new();
        while let Some(c) = board.decode(&mut bytes).expect("no I/O here") {
            got.push(c);
        }
        bytes.extend_from_slice(&tail);
        while let Some(c) = board.decode(&mut bytes).expect("no I/O here") {
            got.push(c);
        }
        prop_assert!(bytes.is_empty());
        prop_assert_eq!(&got, &cmds);
        for c in &cmds {
            let json = serde_json::to_string(c).expect("serialises");
            let back: DgtCommand = serde_json::from_str(&json).expect("deserialises");
            prop_assert_eq!(&back, c);
        }
    }
}

#[test]
fn null_clock_is_encodable_and_only_kept_on_request() {
    let bytes = DgtMessage::ClockNull.to_bytes().expect("encodes");
    assert_eq!(bytes, [0x8d, 0x00, 0x0a, 0, 0, 0, 0, 0, 0, 0]);
    assert!(decode_all(&bytes).is_empty());
    let mut keep = HostCodec::new().keep_null_clock(true);
    let mut buf = BytesMut::from(&bytes[..]);
    assert_eq!(
        keep.decode(&mut buf).expect("no I/O"),
        Some(DgtMessage::ClockNull)
    );
}

#[test]
fn out_of_range_values_do_not_encode() {
    let mut t = ClockTime::default();
    t.left.minutes = 60;
    assert!(DgtMessage::ClockTime(t).to_bytes().is_err());
    assert!(
        DgtMessage::Version {
            major: 0x80,
            minor: 0
        }
        .to_bytes()
        .is_err()
    );
    assert!(
        DgtMessage::SerialNumber {
            serial: "1234".into()
        }
        .to_bytes()
        .is_err()
    );
    let c = DgtCommand::clock(ClockCommand::SetAndRun {
        left: SetTime {
            hours: 10,
            ..SetTime::default()
        },
        right: SetTime::default(),
        flags: RunFlags::PAUSE,
    });
    assert!(c.to_bytes().is_err());
    assert!(ClockText::new("too long text").is_err());
}
