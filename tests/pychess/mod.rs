//! python-chess as the independent reader of the PGN we write: tests/pgn_check.py parses
//! it, replays the moves and reports tags, final FEN and every move's clock as JSON.
//!
//! The interpreter is `$HALLCLOCK_PYTHON`, else `target/venv/bin/python3` in the crate.
//! Without the `chess` package the test fails (never skips): ./scripts/test makes the venv.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

#[derive(Debug, serde::Deserialize)]
pub struct Move {
    pub san: String,
    pub clk: Option<f64>,
    pub emt: Option<f64>,
    pub comment: String,
}

#[derive(Debug, serde::Deserialize)]
pub struct Checked {
    pub errors: Vec<String>,
    pub tags: BTreeMap<String, String>,
    pub fen: String,
    pub intro: String,
    pub moves: Vec<Move>,
}

fn python() -> PathBuf {
    let candidate = match std::env::var_os("HALLCLOCK_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/venv/bin/python3"),
    };
    let ok = Command::new(&candidate)
        .args(["-c", "import chess.pgn"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python-chess not found at {} (or $HALLCLOCK_PYTHON): run ./scripts/test, which creates \
         the venv (python3 -m venv target/venv && target/venv/bin/pip install chess)",
        candidate.display()
    );
    candidate
}

/// Every game of `pgn` as python-chess reads it.
pub fn check(pgn: &str) -> Vec<Checked> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pgn_check.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(pgn.as_bytes())
        .expect("write pgn");
    let out = child.wait_with_output().expect("python runs");
    assert!(
        out.status.success(),
        "pgn_check.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("pgn_check.py prints JSON")
}

/// One game, which must parse without errors.
pub fn check_one(pgn: &str) -> Checked {
    let mut games = check(pgn);
    assert_eq!(games.len(), 1, "one game expected in:\n{pgn}");
    let g = games.remove(0);
    assert!(
        g.errors.is_empty(),
        "python-chess errors {:?} in:\n{pgn}",
        g.errors
    );
    g
}

/// A clock in whole seconds, as `[%clk]` carries it (truncated).
pub fn secs(ms: i64) -> f64 {
    (ms.max(0) / 1000) as f64
}
