//! Replays the committed fuzz corpus (fuzz/corpus/<target>/) on stable, without nightly or
//! libFuzzer: every file through the same door the fuzz target feeds (fuzz/doors.rs, shared
//! by both), so an input the fuzzer once found interesting — or a crash it found, kept
//! after its fix — is checked by every `cargo test`. A door fails by panicking; the TRF
//! door also asserts that read → write gives back the bytes read. docs/RELIABILITY.md.

#[path = "../fuzz/doors.rs"]
mod doors;

use std::path::Path;

/// Feeds every file of fuzz/corpus/<target>/ to `door`; returns how many there were.
fn replay(target: &str, door: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a corpus directory entry").path();
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| door(&bytes));
        assert!(outcome.is_ok(), "{target}: {} panics", path.display());
        n += 1;
    }
    n
}

/// Each corpus must be there and not trivially small: an emptied directory would make
/// its replay pass while checking nothing.
fn replay_some(target: &str, door: fn(&[u8])) {
    let n = replay(target, door);
    assert!(n >= 5, "{target}: only {n} corpus files");
}

#[test]
fn dgt_wire_corpus_decodes_alike_whole_and_in_chunks() {
    replay_some("dgt_decode", doors::dgt_decode);
}

#[test]
fn command_payload_corpus_is_read_or_refused_without_panic() {
    replay_some("intake_command", doors::intake_command);
}

#[test]
fn trf_corpus_reads_and_writes_back_the_same_bytes() {
    replay_some("trf_round_trip", doors::trf_round_trip);
}

#[test]
fn rules_script_corpus_parses_or_errs_without_panic() {
    replay_some("rules_script", doors::rules_script);
}

#[test]
fn config_corpus_loads_or_errs_without_panic() {
    replay_some("config_toml", doors::config_toml);
}

#[test]
fn sim_control_corpus_parses_or_errs_without_panic() {
    replay_some("sim_control", doors::sim_control);
}
