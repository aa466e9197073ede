//! Conformance against real DGT traffic (shared/reference/dgt-captures, see its README).
//!
//! The captures are AGPL-licensed and must not be copied into this repository; they are
//! read from the `shared/` folder that sits beside the repository (CI puts a copy there).
//! When it is absent every test here says so and passes.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use bytes::BytesMut;
use hallclock::dgt::{DgtMessage, HostCodec, SideTime, decode_all};
use serde_json::Value;
use tokio_util::codec::Decoder as _;

const CAPTURES: [&str; 3] = ["1", "2", "johan"];

/// `shared/reference/dgt-captures` beside the repository. A git worktree can sit one level
/// deeper than the main checkout, so the ancestors are searched; `HALLCLOCK_DGT_CAPTURES`
/// overrides.
fn captures_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HALLCLOCK_DGT_CAPTURES") {
        return Some(PathBuf::from(p)).filter(|p| p.is_dir());
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .skip(1)
        .take(3)
        .map(|a| a.join("shared/reference/dgt-captures"))
        .find(|p| p.is_dir())
}

fn with_captures(test: &str, f: impl FnOnce(&Path)) {
    match captures_dir() {
        Some(dir) => f(&dir),
        None => eprintln!(
            "SKIPPED {test}: no ../shared/reference/dgt-captures beside the repository \
             (the real DGT captures are not part of the repository)"
        ),
    }
}

/// The lines of `N.inbytes`, each one received message, base64-decoded.
fn inbytes(dir: &Path, name: &str) -> Vec<Vec<u8>> {
    let path = dir.join(format!("{name}.inbytes"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            base64::engine::general_purpose::STANDARD
                .decode(l.trim())
                .unwrap_or_else(|e| panic!("{name}.inbytes line {}: {e}", i + 1))
        })
        .collect()
}

fn expected(dir: &Path, name: &str) -> Vec<Value> {
    let path = dir.join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path:?}: {e}")))
        .collect()
}

fn side_matches(ours: &SideTime, theirs: &Value) -> bool {
    theirs["hours"] == u64::from(ours.hours)
        && theirs["minutes"] == u64::from(ours.minutes)
        && theirs["seconds"] == u64::from(ours.seconds)
        && theirs["final_flag"] == ours.final_flag
        && theirs["flag"] == ours.flag
        && theirs["time_per_move"] == ours.time_per_move
}

/// Field-by-field comparison with the Java driver's JSON (arnsholt/dgtdriver).
fn assert_same(name: &str, line: usize, ours: &DgtMessage, theirs: &Value) {
    let ok = match ours {
        DgtMessage::BoardDump(d) => {
            let squares: Vec<String> = d.board.iter().map(|p| p.as_str().to_owned()).collect();
            theirs.as_object().map(|o| o.len()) == Some(1)
                && theirs["board"] == serde_json::json!(squares)
        }
        DgtMessage::FieldUpdate(u) => {
            theirs["field"] == u.field.name().as_str() && theirs["piece"] == u.piece.as_str()
        }
        DgtMessage::ClockTime(t) => {
            side_matches(&t.left, &theirs["left_clock"])
                && side_matches(&t.right, &theirs["right_clock"])
                && theirs["clock_running"] == t.status.running
                && theirs["right_high"] == t.status.right_high
                && theirs["battery_indicator"] == t.status.battery_low
                && theirs["left_turn"] == t.status.left_turn
                && theirs["right_turn"] == t.status.right_turn
                && theirs["no_clock"] == t.status.no_clock
        }
        _ => false,
    };
    assert!(
        ok,
        "{name} line {line}: we decoded {} but the reference says {theirs}",
        serde_json::to_string(ours).unwrap_or_default()
    );
}

fn check(name: &str, how: &str, got: &[DgtMessage], want: &[Value]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_same(name, i + 1, g, w);
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{name} fed {how}: {} messages decoded, the reference has {}",
        got.len(),
        want.len()
    );
}

fn drain(codec: &mut HostCodec, buf: &mut BytesMut, out: &mut Vec<DgtMessage>) {
    while let Some(m) = codec.decode(buf).expect("host codec never fails on data") {
        out.push(m);
    }
}

#[test]
fn captures_decode_like_the_reference_driver() {
    with_captures("captures_decode_like_the_reference_driver", |dir| {
        for name in CAPTURES {
            let lines = inbytes(dir, name);
            let want = expected(dir, name);
            assert_eq!(
                lines.len(),
                want.len(),
                "{name}: inbytes and json disagree in length"
            );

            let whole: Vec<u8> = lines.concat();
            check(name, "whole", &decode_all(&whole), &want);

            let mut codec = HostCodec::new();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for l in &lines {
                buf.extend_from_slice(l);
                drain(&mut codec, &mut buf, &mut got);
            }
            check(name, "line by line", &got, &want);
            assert_eq!(
                codec.stats().skipped_bytes,
                0,
                "{name}: the captures hold no garbage"
            );

            let mut codec = HostCodec::new();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for &b in &whole {
                buf.extend_from_slice(&[b]);
                drain(&mut codec, &mut buf, &mut got);
            }
            check(name, "one byte at a time", &got, &want);
        }
    });
}

#[test]
fn captures_survive_garbage_between_messages() {
    with_captures("captures_survive_garbage_between_messages", |dir| {
        for name in CAPTURES {
            let lines = inbytes(dir, name);
            let want = expected(dir, name);
            // 7-bit noise cannot start a frame; a stray high byte followed by the next
            // message's header must be dropped by the §2.2 rule.
            let mut noisy = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                noisy.extend_from_slice(&[0x00, 0x7f, (i % 0x80) as u8]);
                if i % 3 == 0 {
                    noisy.push(0xc1);
                }
                noisy.extend_from_slice(l);
            }
            check(name, "with garbage", &decode_all(&noisy), &want);
        }
    });
}

/// The moves of `N.uci` (`1. e2e4 e7e5` lines) or `johan.pgn` (SAN), without move numbers
/// and result.
fn game_moves(dir: &Path, name: &str) -> (Vec<String>, bool) {
    let (file, is_san) = if name == "johan" {
        ("johan.pgn", true)
    } else {
        (&*format!("{name}.uci"), false)
    };
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let moves = text
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && !matches!(*t, "*" | "1-0" | "0-1" | "1/2-1/2"))
        .map(|t| t.trim_end_matches(['+', '#']).to_owned())
        .collect();
    (moves, is_san)
}

#[test]
fn captures_replay_the_games_that_were_played() {
    use hallclock::dgt::{BoardEvent, BoardState, Orientation};
    use shakmaty::{CastlingMode, Chess, Position, san::San};

    with_captures("captures_replay_the_games_that_were_played", |dir| {
        for name in CAPTURES {
            let whole: Vec<u8> = inbytes(dir, name).concat();
            let mut st = BoardState::new();
            let mut events = Vec::new();
            for m in decode_all(&whole) {
                match m {
                    DgtMessage::BoardDump(d) => events.extend(st.on_dump(&d)),
                    DgtMessage::FieldUpdate(u) => events.extend(st.on_field_update(&u)),
                    _ => {}
                }
            }
            let want_orientation = if name == "2" {
                Orientation::Rotated
            } else {
                Orientation::Normal
            };
            assert_eq!(
                st.orientation(),
                Some(want_orientation),
                "{name}: orientation"
            );
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, BoardEvent::Irregular { .. })),
                "{name}: irregularity reported: {events:?}"
            );

            let (want, is_san) = game_moves(dir, name);
            let mut pos = Chess::default();
            let got: Vec<String> = st
                .moves()
                .iter()
                .map(|&m| {
                    let s = if is_san {
                        San::from_move(&pos, m).to_string()
                    } else {
                        m.to_uci(CastlingMode::Standard).to_string()
                    };
                    pos.play_unchecked(m);
                    s
                })
                .collect();
            assert_eq!(
                got, want,
                "{name}: the recognised game differs from the played one"
            );
            let count = |f: fn(&BoardEvent) -> bool| events.iter().filter(|e| f(e)).count();
            eprintln!(
                "{name}: {} moves, {} corrected intermediate readings, {} take-backs",
                got.len(),
                count(|e| matches!(e, BoardEvent::Corrected { .. })),
                count(|e| matches!(e, BoardEvent::TakeBack { .. })),
            );
        }
    });
}
