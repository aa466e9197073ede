//! Host decoder throughput over a realistic message mix (`cargo bench --bench dgt_decode`).
//!
//! The mix follows the real captures: mostly one-second BWTIME readings, a few field
//! updates per move, clock ACKs, and an occasional board dump. A hall of 1000 boards
//! produces about 1 MB/s, so the target is ≥ 100 MB/s on one core.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hallclock::dgt::message::{BoardDump, FieldUpdate};
use hallclock::dgt::{
    ClockAck, ClockStatus, ClockTime, DgtMessage, Field, HostCodec, Piece, SideTime,
};
use tokio_util::codec::Decoder;

fn stream() -> Vec<u8> {
    let mut msgs = Vec::new();
    let dump = DgtMessage::BoardDump(BoardDump {
        board: std::array::from_fn(|i| Piece::from_code((i % 13) as u8).unwrap_or(Piece::Empty)),
    });
    for round in 0u32..4000 {
        if round % 50 == 0 {
            msgs.push(dump.clone());
        }
        for s in 0..8 {
            let t = 5400 - (round * 8 + s) % 5400;
            let side = SideTime::from_seconds(t).unwrap_or_default();
            msgs.push(DgtMessage::ClockTime(ClockTime {
                left: side,
                right: SideTime {
                    time_per_move: true,
                    ..side
                },
                status: ClockStatus::from_byte(if round % 2 == 0 { 0x09 } else { 0x13 }),
            }));
        }
        for k in 0..3u8 {
            msgs.push(DgtMessage::FieldUpdate(FieldUpdate {
                field: Field::new(((round as u8).wrapping_mul(7).wrapping_add(k)) % 64)
                    .unwrap_or_else(|| unreachable!()),
                piece: Piece::from_code(k * 3).unwrap_or(Piece::Empty),
            }));
        }
        if round % 4 == 0 {
            msgs.push(DgtMessage::ClockAck(ClockAck {
                ack0: 0x10,
                ack1: 0x0a,
                ack2: 0,
                ack3: 0,
            }));
        }
    }
    let mut out = BytesMut::new();
    for m in &msgs {
        m.encode(&mut out).unwrap_or_else(|e| panic!("{e}"));
    }
    out.to_vec()
}

fn decode_chunks(bytes: &[u8], chunk: usize) -> usize {
    let mut codec = HostCodec::new();
    let mut buf = BytesMut::with_capacity(4096);
    let mut n = 0;
    for c in bytes.chunks(chunk) {
        buf.extend_from_slice(c);
        while let Ok(Some(m)) = codec.decode(&mut buf) {
            black_box(&m);
            n += 1;
        }
    }
    n
}

fn bench(c: &mut Criterion) {
    let bytes = stream();
    let mut g = c.benchmark_group("dgt_decode");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    // 64-byte reads: what a serial port read typically returns.
    g.bench_function("mix_64B_reads", |b| {
        b.iter(|| decode_chunks(black_box(&bytes), 64))
    });
    g.bench_function("mix_whole", |b| {
        b.iter(|| decode_chunks(black_box(&bytes), bytes.len()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
