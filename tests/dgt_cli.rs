//! `hallclock dgt decode` end to end: bytes on stdin, JSON lines on stdout.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn decode(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["dgt", "decode"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hallclock runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input)
        .expect("stdin accepts the input");
    child.wait_with_output().expect("hallclock finishes")
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect()
}

#[test]
fn raw_bytes_become_one_json_line_per_message() {
    // §9.1 clock reading, garbage, §9.3 version ACK, e2 emptied (§4.1)
    let input = [
        0x8d, 0x00, 0x0a, 0x00, 0x59, 0x59, 0x01, 0x30, 0x00, 0x09, 0x11, 0x22, 0x8d, 0x00, 0x0a,
        0x0a, 0x10, 0x09, 0x0a, 0x20, 0x00, 0x00, 0x8e, 0x00, 0x05, 0x34, 0x00,
    ];
    let out = decode(&[], &input);
    assert!(out.status.success());
    let v = lines(&out);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0]["type"], "clock_time");
    assert_eq!(v[0]["left"]["hours"], 1);
    assert_eq!(v[0]["left"]["minutes"], 30);
    assert_eq!(v[0]["right"]["seconds"], 59);
    assert_eq!(v[0]["left_turn"], true);
    assert_eq!(v[1]["type"], "clock_ack");
    assert_eq!(v[1]["ack1"], 9);
    assert_eq!(v[1]["ack2"], 0x20);
    assert_eq!(
        v[2],
        serde_json::json!({"type": "field_update", "field": "e2", "piece": "."})
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 garbage bytes skipped"));
}

#[test]
fn base64_lines_may_split_messages_and_bad_lines_are_named() {
    // 8e 00 05 34 00 split over two lines
    let out = decode(&["--input", "base64-lines"], b"jgAF\nNAA=\n");
    assert!(out.status.success());
    assert_eq!(lines(&out)[0]["field"], "e2");

    let out = decode(&["--input", "base64-lines", "-"], b"jgAFNAA=\n***\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
}

#[test]
fn moves_prints_the_game() {
    let mut input = vec![0x86, 0x00, 0x43];
    input.extend([8, 9, 10, 12, 11, 10, 9, 8]);
    input.extend([7; 8]);
    input.extend([0; 32]);
    input.extend([1; 8]);
    input.extend([2, 3, 4, 6, 5, 4, 3, 2]);
    // e2-e4 with the new square first (§4.1)
    input.extend([0x8e, 0x00, 0x05, 36, 1, 0x8e, 0x00, 0x05, 52, 0]);
    let out = decode(&["--moves"], &input);
    assert!(out.status.success());
    let v = lines(&out);
    assert_eq!(
        v[0],
        serde_json::json!({"event": "started", "orientation": "normal",
            "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"})
    );
    assert_eq!(v[1]["event"], "move");
    assert_eq!(v[1]["uci"], "e2e4");
    assert_eq!(v[1]["san"], "e4");
    assert_eq!(v.len(), 2);
}
