//! The command-line seams of the rules core, through the real binary: the example
//! scripts, `tc check`, and every kind of malformed input (an error naming the place,
//! exit code 2, never a panic).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn hallclock(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hallclock binary runs");
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or("").as_bytes())
            .expect("stdin accepts the script");
    }
    child.wait_with_output().expect("hallclock finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn events(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect()
}

fn final_view(o: &Output) -> serde_json::Value {
    events(o).last().expect("a final line")["final"].clone()
}

fn named<'a>(evs: &'a [serde_json::Value], name: &str) -> Vec<&'a serde_json::Value> {
    evs.iter().filter(|e| e["event"] == name).collect()
}

#[test]
fn example_fide_classical_goes_through_the_first_control() {
    let o = hallclock(&["rules", "run", "examples/fide-classical.jsonl"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    let periods = named(&evs, "period_advanced");
    assert_eq!(periods.len(), 2, "both players reach the second period");
    assert!(
        periods
            .iter()
            .all(|e| e["period"] == 2 && e["added_ms"] == 1_800_000)
    );
    assert_eq!(named(&evs, "pressed").len(), 81);
    assert!(!stdout(&o).contains("\"rejected\""), "every move is legal");
    let v = final_view(&o);
    assert_eq!(v["result"]["score"], "1-0");
    assert_eq!(v["white"]["period"], 2);
}

#[test]
fn example_flag_where_the_opponent_cannot_mate_is_a_draw() {
    let o = hallclock(&["rules", "run", "examples/flag-cannot-mate.jsonl"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    let flag = named(&evs, "flag_fell");
    assert_eq!(flag.len(), 1);
    assert_eq!(flag[0]["side"], "black");
    assert_eq!(flag[0]["time"], "19:03:06.000");
    let ended = named(&evs, "game_ended");
    assert_eq!(ended[0]["score"], "1/2-1/2");
    assert_eq!(ended[0]["termination"], "flag_opponent_cannot_mate");
}

#[test]
fn example_default_forfeit() {
    let o = hallclock(&["rules", "run", "examples/default-forfeit.jsonl"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    assert_eq!(named(&evs, "clock_started")[0]["time"], "16:00:00.000");
    let passed = named(&evs, "default_time_passed");
    assert_eq!(passed[0]["time"], "16:30:00.001");
    assert_eq!(passed[0]["absent"], serde_json::json!(["black"]));
    assert_eq!(final_view(&o)["result"]["score"], "1-0");
    // The press after the forfeit is refused and says why.
    let rejected: Vec<_> = evs.iter().filter(|e| e.get("rejected").is_some()).collect();
    assert_eq!(rejected[0]["rejection"], "game_over");
}

#[test]
fn example_delay_mode() {
    let o = hallclock(&["rules", "run", "examples/delay-mode.jsonl"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    let presses = named(&evs, "pressed");
    let charged: Vec<_> = presses.iter().map(|e| e["charged_ms"].as_i64()).collect();
    assert_eq!(charged, [Some(0), Some(3000), Some(0)]);
    assert_eq!(named(&evs, "flag_fell")[0]["time"], "10:05:15.000");
}

#[test]
fn example_adjourn_session_end_seals_at_the_session_end() {
    let o = hallclock(
        &["rules", "run", "examples/adjourn-session-end.jsonl"],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    let order = named(&evs, "adjournment_ordered");
    assert_eq!(order[0]["time"], "16:00:00.000");
    assert_eq!(order[0]["sealer"], "black");
    assert_eq!(named(&evs, "sealed").len(), 2, "the move was changed once");
    let commit = named(&evs, "seal_committed");
    assert_eq!(commit[0]["charged_ms"], 27 * 60_000);
    assert_eq!(commit[0]["envelope"]["move_number"], 42);
    let v = final_view(&o);
    assert_eq!(v["phase"], "paused");
    assert_eq!(v["by"], "adjourned");
    assert_eq!(v["adjournment"]["stage"], "adjourned");
    assert!(v["adjournment"]["envelopes"][0]["verified"].is_object());
    // Custody through the command line too: neither written move is printed.
    let out = stdout(&o);
    let sealed_lines: String = out
        .lines()
        .filter(|l| !l.contains("\"rejected\""))
        .collect();
    assert!(!sealed_lines.contains("Rb3") && !sealed_lines.contains("Ke5"));
}

#[test]
fn example_resume_counter_seal() {
    let o = hallclock(
        &["rules", "run", "examples/resume-counter-seal.jsonl"],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let evs = events(&o);
    let rejected: Vec<_> = evs.iter().filter(|e| e.get("rejected").is_some()).collect();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["rejection"], "responder_absent");
    let played = named(&evs, "sealed_move_played");
    assert_eq!(played.len(), 2);
    assert_eq!(
        (played[0]["san"].as_str(), played[0]["envelope"].as_i64()),
        (Some("Ra2"), Some(1))
    );
    assert_eq!(
        (played[1]["san"].as_str(), played[1]["envelope"].as_i64()),
        (Some("Ra5"), Some(2))
    );
    // I.9.2 / I.11: White lost 12 min before arriving, then 8 min to the counter-seal.
    assert_eq!(
        named(&evs, "counter_sealed")[0]["remaining_ms"],
        100 * 60_000
    );
    let v = final_view(&o);
    assert_eq!(v["adjournment"]["stage"], "resumed");
    assert_eq!(v["black"]["remaining_ms"], 67 * 60_000);
}

#[test]
fn text_output_is_readable() {
    let o = hallclock(
        &["rules", "run", "--text", "examples/delay-mode.jsonl"],
        None,
    );
    let out = stdout(&o);
    assert!(
        out.contains(
            "10:00:12.500  line 8   pressed                side=black charged_ms=0:03.000"
        ),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .unwrap_or("")
            .starts_with("final at 10:05:20.000: 1-0, black's flag fell")
    );
}

#[test]
fn script_from_stdin_and_malformed_scripts() {
    let setup =
        r#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00"}"#;
    let o = hallclock(&["rules", "run", "-"], Some(setup));
    assert!(o.status.success());
    assert_eq!(final_view(&o)["phase"], "running");

    let cases = [
        (format!("{setup}\n{{\"at\":\"09:00:01\",\"input\":\"press\""), "<stdin>: line 2, column "),
        (format!("{setup}\n{{\"at\":\"09:00:01\",\"input\":\"jump\"}}"), "<stdin>: line 2: jump: unknown variant `jump`"),
        (format!("{setup}\n{{\"input\":\"press\"}}"), "<stdin>: line 2: missing \"at\""),
        (r#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00","fen":"rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}"#.to_string(), "<stdin>: line 1: setup: fen: piece placement (field 1): unexpected character 'x' in rank 7 (\"ppppxppp\")"),
        (r#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"}"#.to_string(), "<stdin>: line 1: setup: fen: side to move (field 2): expected w or b, got \"x\""),
        (r#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00","fen":"8/8/8/8/8/8/8/8 w - - 0 1"}"#.to_string(), "<stdin>: line 1: setup: fen: illegal position"),
        (r#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"90m","start":"09:00:00"}"#.to_string(), "<stdin>: line 1: setup: time control '90m': expected ':' between periods, '+' or the end, found 'm' at column 3"),
        ("\u{0}\u{1}binary".to_string(), "<stdin>: line 1, column 1: not JSON"),
    ];
    for (script, want) in cases {
        let o = hallclock(&["rules", "run", "-"], Some(&script));
        assert_eq!(o.status.code(), Some(2), "{script}");
        assert!(stderr(&o).starts_with(want), "{script}\n{}", stderr(&o));
        assert!(
            stdout(&o).is_empty(),
            "nothing runs from a malformed script"
        );
        assert!(!stderr(&o).contains("panicked"));
    }
    let o = hallclock(&["rules", "run", "no/such/file.jsonl"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read no/such/file.jsonl"));
}

#[test]
fn tc_check_prints_canonical_form_and_description_or_the_error() {
    let o = hallclock(&["tc", "check", "40/5400+30:1800+30"], None);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "40/5400+30:1800+30\n1 h 30 min for 40 moves, +30 s per move from move 1; then 30 min for the rest of the game, +30 s per move from move 41\n"
    );
    let o = hallclock(&["tc", "check", "40/5400+30:"], None);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "'40/5400+30:': expected a period after ':' at column 12\n  40/5400+30:\n             ^\n"
    );
    let o = hallclock(&["tc", "check", "*180"], None);
    assert!(stdout(&o).contains("note: hourglass time controls ('*secs') are not supported"));
}

/// docs/RULES-SCRIPT.md shows the real output of each example; keep it so.
#[test]
fn rules_script_doc_shows_the_real_output_of_each_example() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/RULES-SCRIPT.md"))
        .expect("docs/RULES-SCRIPT.md exists");
    let mut checked = 0;
    for part in doc.split("<!-- output: ").skip(1) {
        let (path, rest) = part.split_once(" -->").expect("marker closes");
        let block = rest
            .split_once("```text\n")
            .and_then(|(_, b)| b.split_once("```"))
            .map(|(b, _)| b)
            .expect("a text block follows the marker");
        let o = hallclock(&["rules", "run", "--text", path], None);
        assert_eq!(
            stdout(&o),
            block,
            "docs/RULES-SCRIPT.md output of {path} is stale"
        );
        checked += 1;
    }
    assert!(checked >= 6, "the six examples are shown");
}

/// docs/RULES-COVERAGE.md names only tests that exist, and has a row per Article 6 and
/// adjournment ID.
#[test]
fn rules_coverage_names_only_real_tests() {
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/docs/RULES-COVERAGE.md"))
        .expect("docs/RULES-COVERAGE.md exists");
    let mut sources = String::new();
    for dir in ["src", "tests", "crates"] {
        let mut stack = vec![std::path::PathBuf::from(format!("{root}/{dir}"))];
        while let Some(p) = stack.pop() {
            for entry in std::fs::read_dir(&p)
                .expect("readable source folder")
                .flatten()
            {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
    }
    let mut named = 0;
    for row in doc.lines().filter(|l| l.starts_with("| ")) {
        // The tests are in the last column.
        let tests = row.trim_end_matches('|').rsplit('|').next().unwrap_or("");
        for name in tests.split('`').skip(1).step_by(2) {
            if name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && name.contains('_')
            {
                assert!(
                    sources.contains(&format!("fn {name}(")),
                    "RULES-COVERAGE.md names `{name}`, which is not a test"
                );
                named += 1;
            }
        }
    }
    assert!(named > 50);
    for id in [
        "6.1", "6.2a", "6.2b", "6.2c", "6.3", "6.4", "6.5", "6.6", "6.7a", "6.7b/c", "6.8", "6.9",
        "6.10", "6.11", "6.12a", "6.12b", "6.12c", "6.13", "6.14", "I.1.1", "I.1.2", "A1a", "I.2",
        "A2f", "I.3", "I.4", "I.5", "I.6", "I.7", "I.8", "A8", "I.9.1", "I.9.2", "I.9.3", "I.10",
        "A10", "I.11", "I.12.1", "I.12.2", "I.13", "A12", "I.14", "A13",
    ] {
        assert!(doc.contains(&format!("\n| {id} |")), "no row for {id}");
    }
}

/// A script file of these bytes, for inputs a `&str` cannot hold.
fn script_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    // In a folder named as `link::testing::scratch_dir`'s are, so that a later run's sweep
    // removes it once this process has ended.
    let dir = std::env::temp_dir().join(format!("hallclock-{}-rules-cli", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temporary folder is made");
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, bytes).expect("the temporary script is written");
    path
}

#[test]
fn rules_run_names_the_line_of_bad_bytes_a_bom_a_fraction_and_a_field_given_twice() {
    let setup = br#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00"}"#;
    let with = |line2: &[u8]| [setup.as_slice(), b"\n", line2, b"\n"].concat();
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "latin1",
            with(b"{\"at\":\"09:00:01\",\"input\":\"present\",\"side\":\"white\",\"arbiter\":\"P\xe9rez\"}"),
            "line 2, column 63: not UTF-8 (byte 0xe9): a script is UTF-8 text",
        ),
        (
            "bom",
            [b"\xef\xbb\xbf".as_slice(), &with(b"{\"at\":\"09:00:01\",\"input\":\"advance\"}")].concat(),
            "line 1, column 1: a byte-order mark (U+FEFF) starts the line",
        ),
        (
            "fraction",
            with(br#"{"at":"09:00:01","input":"add_time","side":"white","delta":1500.5,"arbiter":"IA","reason":"r"}"#),
            "line 2: add_time: 1500.5 is not a whole number of milliseconds",
        ),
        (
            "huge",
            with(br#"{"at":"09:00:01","input":"set_time","side":"white","remaining":18446744073709551615,"arbiter":"IA","reason":"r"}"#),
            "line 2: set_time: 18446744073709551615 ms is too large a duration",
        ),
        (
            "twice",
            with(br#"{"at":"09:00:01","input":"press","side":"white","side":"black"}"#),
            "\"side\" is given twice",
        ),
        (
            "nested-twice",
            [&br#"{"at":"09:00:00","input":"setup","white":"A","black":"B","tc":"60","start":"09:00:00","clock":{"delay_display":"bronstein","delay_display":"countdown"}}"#[..], b"\n"].concat(),
            "\"delay_display\" is given twice",
        ),
    ];
    for (name, bytes, want) in cases {
        let path = script_file(name, &bytes);
        let o = hallclock(
            &["rules", "run", path.to_str().expect("a UTF-8 temp path")],
            None,
        );
        let _ = std::fs::remove_file(&path);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(stdout(&o).is_empty(), "{name}: nothing runs");
        if name.ends_with("twice") {
            let line = if name == "twice" { 2 } else { 1 };
            assert!(err.contains(&format!(": line {line}, column ")), "{err}");
            assert!(err.contains("given twice"), "{err}");
        }
    }
    // The same from standard input.
    let o = hallclock(
        &["rules", "run", "-"],
        Some("\u{feff}{\"at\":\"09:00:00\",\"input\":\"setup\"}"),
    );
    assert!(stderr(&o).starts_with("<stdin>: line 1, column 1: a byte-order mark"));
}

#[test]
fn rules_run_streams_its_output_in_bounded_memory() {
    use nix::sys::resource::{UsageWho, getrusage};
    // 50,000 presses: holding every output to the end peaked at 35 MB (debug build),
    // streaming them at 16 MB, about what a one-line script takes.
    let mut script = String::from(
        r#"{"at":"13:55:00","date":"2026-11-30","input":"setup","white":"A","black":"B","tc":"60+1","start":"14:00:00"}"#,
    );
    script.push('\n');
    for i in 1..=50_000u64 {
        let t = 14 * 3_600_000 + i * 500;
        let date = ["2026-11-30", "2026-12-01", "2026-12-02"][(t / 86_400_000) as usize];
        script.push_str(&format!(
            "{{\"at\":\"{date} {:02}:{:02}:{:02}.{:03}\",\"input\":\"press\"}}\n",
            t / 3_600_000 % 24,
            t / 60_000 % 60,
            t / 1000 % 60,
            t % 1000
        ));
    }
    let path = script_file("presses", script.as_bytes());
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["rules", "run", path.to_str().expect("a UTF-8 temp path")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the hallclock binary runs");
    // Count the lines as they come, never holding them.
    let mut lines = 0u64;
    let mut bytes = 0usize;
    let mut reader = std::io::BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut reader, &mut line).expect("readable") > 0 {
        lines += 1;
        bytes += line.len();
        line.clear();
    }
    let status = child.wait().expect("hallclock finishes");
    let _ = std::fs::remove_file(&path);
    assert!(status.success());
    assert_eq!(
        lines,
        1 + 2 + 50_000 + 1,
        "started, present x2, presses, final"
    );
    // The largest child this test process has waited for (all others are small).
    let max_kb = getrusage(UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage")
        .max_rss();
    // A debug binary's own pages are 20 to 25.6 MB here (they grow with the binary: the
    // page's catalogues are compiled in; 25 MB was once too little in CI); the 8 MB of
    // output held instead of streamed would put it past 32 MB.
    println!("peak of the largest child: {max_kb} kB, for {bytes} bytes of output");
    assert!(max_kb < 30_000, "peak {max_kb} kB");
}
