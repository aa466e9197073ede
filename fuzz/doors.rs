//! The fuzzed doors: one function per target, each feeding the bytes to the project's real
//! entry point. Shared, not copied: the fuzz targets (nightly, libFuzzer) and the stable
//! replay of the committed corpus (tests/fuzz_corpus.rs) both include this file, so the
//! corpus is replayed through exactly what was fuzzed. A door's only verdict is a panic
//! (an `assert!` here is a property the fuzzer checks beside "does not crash").

use bytes::BytesMut;
use hallclock::config::Config;
use hallclock::dgt::{BoardCodec, BoardState, HostCodec, decode_all};
use hallclock::intake::auth::Security;
use hallclock::intake::command::{self, BoardAction, HallAction};
use hallclock::intake::{input, json};
use hallclock::rules::Millis;
use hallclock::sim::control;
use hallclock::trf::Trf;
use tokio_util::codec::Decoder;

/// The DGT wire, board → host, as the daemon's link and `hallclock dgt decode --moves`
/// read it: the bytes whole, and again in chunks (the first byte picks the chunk size),
/// which must give the same messages; every message also goes through the move tracker.
/// The same bytes also go through the simulator's decoder of host → board commands.
pub fn dgt_decode(data: &[u8]) {
    let whole = decode_all(data);
    let chunk = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut codec = HostCodec::new();
    let mut buf = BytesMut::new();
    let mut chunked = Vec::new();
    for piece in data.chunks(chunk) {
        buf.extend_from_slice(piece);
        while let Ok(Some(m)) = codec.decode(&mut buf) {
            chunked.push(m);
        }
    }
    while let Ok(Some(m)) = codec.decode_eof(&mut buf) {
        chunked.push(m);
    }
    assert_eq!(whole, chunked, "chunks of {chunk} bytes decode differently");
    let mut game = BoardState::new();
    for m in &whole {
        let _ = game.on_message(m);
    }
    let mut board = BoardCodec::new();
    let mut buf = BytesMut::from(data);
    while let Ok(Some(_)) = board.decode_eof(&mut buf) {}
}

/// A command payload as it comes in on an MQTT `set` topic (or from the dashboard):
/// `Intake::take` admits it (`Security::admit`), then `command::parse_as` (which reads it
/// with the strict `json::read`), then bounds its instants and maps a board command to
/// its input (`input::board_act`).
pub fn intake_command(data: &[u8]) {
    let now = Millis(1_764_936_000_000);
    let _ = json::read(data);
    let _ = command::peek_transaction(data);
    let _ = command::log_safe(&String::from_utf8_lossy(data));
    let admitted = match Security::Open.admit("hall/h/board/1/set", data, now) {
        Ok(a) => a.command,
        Err(_) => return,
    };
    for signer in [None, Some(("a1", "Ann Arbiter"))] {
        if let Ok(mut c) = command::parse_as::<BoardAction>(&admitted, signer) {
            let _ = command::check_instants(&c.action.instants(), now);
            let _ = command::check_past_start(c.action.start_to_check(), now, Millis(60_000));
            c.action.map_instants(&|t| t - Millis(1_000));
            let _ = input::board_act(c, "1");
        }
        if let Ok(mut c) = command::parse_as::<HallAction>(&admitted, signer) {
            let _ = command::check_instants(&c.action.instants(), now);
            let _ = command::check_past_start(c.action.start_to_check(), now, Millis(60_000));
            c.action.map_instants(&|t| t - Millis(1_000));
        }
    }
}

/// A Tournament Report File: `Trf::read`, and for every file it accepts, `write` gives
/// back the very bytes read (hallclock writes results into the arbiter's own file).
pub fn trf_round_trip(data: &[u8]) {
    if let Ok(trf) = Trf::read(data) {
        let _ = trf.time_control();
        let _ = trf.rounds();
        assert!(trf.write() == data, "read → write changed the bytes");
    }
}

/// A rules script (`hallclock rules run`): JSON lines, parsed and checked.
pub fn rules_script(data: &[u8]) {
    let _ = hallclock::script::parse_bytes(data);
}

/// The configuration file's text (it is read with `read_to_string`, so only UTF-8 gets
/// here) and, after a NUL byte, `NAME=value` lines as the process environment.
pub fn config_toml(data: &[u8]) {
    let (text, env) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let env: Vec<(String, String)> = String::from_utf8_lossy(env)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let _ = Config::from_toml_str(text, &env);
}

/// The simulator's control lines (its stdin or control socket), one at a time.
pub fn sim_control(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines() {
        let _ = control::parse_line(line);
    }
}
