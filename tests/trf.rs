//! The TRF room through its files and its command-line seams: round-trips on files in the
//! layouts real pairing programs write (tests/data/trf/README.md says which), malformed
//! files named by line and column, the board order, and results written back.

use std::path::{Path, PathBuf};
use std::process::Command;

use hallclock::rules::Color;
use hallclock::trf::round::Order;
use hallclock::trf::{ResultCode, Trf, TrfErrorKind};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/trf")
        .join(name)
}

fn read(name: &str) -> Trf {
    let bytes = std::fs::read(data(name)).expect("test file");
    Trf::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every TRF of a folder: ours, and the real files the project keeps beside the shared
/// references when that folder exists.
fn trf_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/trf");
    for dir in [data(""), shared] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| e.eq_ignore_ascii_case("trf") || e.eq_ignore_ascii_case("txt"))
            })
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

#[test]
fn every_file_round_trips_byte_for_byte() {
    let files = trf_files();
    assert!(files.len() >= 5, "{files:?}");
    for path in files {
        let bytes = std::fs::read(&path).expect("readable");
        let trf = Trf::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let written = trf.write();
        assert!(written == bytes, "{}: write(read(f)) != f", path.display());
        let again = Trf::read(&written).expect("reads again");
        assert_eq!(again, trf, "{}", path.display());
    }
}

#[test]
fn the_fide_layout_reads_every_field() {
    let trf = read("fide-trf26.trf");
    assert_eq!(trf.name(), Some("Hallclock Autumn Open 2026"));
    assert_eq!(trf.tag("142"), Some("5"));
    let tc = trf.time_control().expect("tag 222");
    assert_eq!(tc.white.to_string(), "420+2");
    assert_eq!(tc.black.map(|b| b.to_string()).as_deref(), Some("360+2"));
    let p = trf.player(2).expect("player 2");
    assert_eq!(p.name.as_deref(), Some("Dubois, Céline"));
    assert_eq!(p.sex, Some('w'));
    assert_eq!(p.title.as_deref(), Some("IM"));
    // Columns count characters: the é does not shift the rating.
    assert_eq!(p.rating, Some(2488));
    assert_eq!(p.federation.as_deref(), Some("FRA"));
    assert_eq!(p.fide_id, Some(600_200_002));
    assert_eq!(p.birth.as_deref(), Some("1998/11/03"));
    assert_eq!(p.points, Some(10));
    assert_eq!(p.place, Some(2));
    assert_eq!(p.rounds.len(), 2);
    assert_eq!(p.rounds[0].opponent, Some(6));
    assert_eq!(p.rounds[0].colour, Some(Color::Black));
    assert_eq!(p.rounds[0].result, Some(ResultCode::Win));
    assert_eq!(p.rounds[1].result, None);
    let bye = trf.player(5).expect("player 5");
    assert_eq!(bye.rounds[1].opponent, None);
    assert_eq!(bye.rounds[1].result, Some(ResultCode::PairingBye));
    assert_eq!(trf.player(5).and_then(|p| p.title.as_deref()), Some("WFM"));
}

#[test]
fn other_layouts_read_their_fields() {
    let bbp = read("bbppairings.trf");
    assert_eq!(bbp.players.len(), 6);
    let d = bbp.player(4).expect("4");
    assert_eq!(
        (d.name.as_deref(), d.rating, d.fide_id),
        (Some("Delta Dora"), Some(2490), None)
    );
    assert_eq!(d.rounds[2].result, Some(ResultCode::ZeroPointBye));
    let li = read("lichess.trf");
    let k = li.player(1).expect("1");
    assert_eq!(k.name.as_deref(), Some("kingscrusher99"));
    assert_eq!((k.points, k.place), (Some(20), None));
    // lichess writes Z for a game still being played: no result yet.
    assert_eq!(k.rounds[2].opponent, Some(4));
    assert_eq!(k.rounds[2].result, None);
    let old = read("fide-trf16.trf");
    let l = read("latin1-trf16.trf");
    assert_eq!(l.encoding, hallclock::trf::Encoding::Windows1252);
    assert_eq!(
        l.player(1).and_then(|p| p.name.clone()),
        old.player(1).and_then(|p| p.name.clone())
    );
    assert_eq!(l.player(1).and_then(|p| p.rating), Some(2405));
}

fn error_of(text: &str) -> String {
    match Trf::read(text.as_bytes()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// A small valid file with one line changed by `edit`.
fn with(line: usize, edit: impl Fn(&str) -> String) -> String {
    let text =
        String::from_utf8(std::fs::read(data("fide-trf26.trf")).expect("file")).expect("utf-8");
    text.split("\r\n")
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                edit(l)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\r\n")
}

fn replace_cols(l: &str, first: usize, value: &str) -> String {
    let mut cs: Vec<char> = l.chars().collect();
    for (k, c) in value.chars().enumerate() {
        cs[first - 1 + k] = c;
    }
    cs.into_iter().collect()
}

#[test]
fn malformed_files_are_named_by_line_and_column() {
    // Line 22 is player 1, line 23 player 2 (with a non-ASCII name).
    assert_eq!(
        error_of(&with(23, |l| replace_cols(l, 49, "abcd"))),
        "line 23, columns 49–52 (FIDE rating): 'abcd' is not a number"
    );
    assert_eq!(
        error_of(&with(22, |l| replace_cols(l, 81, "1,5 "))),
        "line 22, columns 81–84 (points): '1,5' is not a score in the format 11.5 (halves only)"
    );
    assert_eq!(
        error_of(&with(22, |l| replace_cols(l, 97, "x"))),
        "line 22, column 97 (colour): 'x' is not one of w, b, -"
    );
    assert_eq!(
        error_of(&with(22, |l| replace_cols(l, 99, "?"))),
        "line 22, column 99 (result): '?' is not one of 1 = 0 + - W D L H F U Z X"
    );
    assert_eq!(
        error_of(&with(22, |l| replace_cols(l, 99, "W"))),
        "line 22, column 99 (result): round 1: the pairing with 5 (line 26) disagrees: the two results do not go together"
    );
    assert_eq!(
        error_of(&with(22, |l| replace_cols(l, 94, "12"))),
        "line 22, columns 92–95 (opponent): opponent 12 has no player line (001)"
    );
    assert_eq!(
        error_of(&with(24, |l| replace_cols(l, 8, "2"))),
        "line 24, columns 5–8 (starting rank): starting rank 2 is already used on line 23"
    );
    assert_eq!(
        error_of(&with(17, |_| "222 40/6000+30:".into())),
        "line 17, column 16 (encoded time control): '40/6000+30:' is not an encoded time control (e.g. 40/6000+30:900+30 or W300-B240): expected a period after ':'"
    );
    // A line that is not a record is skipped with a warning, as pairing programs skip it.
    let trf = Trf::read(with(10, |_| "11 Deputy".into()).as_bytes()).expect("skipped");
    assert_eq!(
        trf.warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>(),
        vec!["line 10: not a TRF record, skipped (kept as it is): '11 Deputy'"]
    );
    // Client text reaches messages (and logs) escaped.
    assert!(error_of(&with(23, |l| replace_cols(l, 49, "\u{1b}[2J"))).contains("'\\u{1b}[2J'"),);
}

#[test]
fn a_file_that_is_not_a_trf_says_so() {
    for text in [
        "[Event \"x\"]\n1. e4 e5\n",
        "{\"action\": \"start_round\"}",
        "012 only a name\n",
    ] {
        let e = Trf::read(text.as_bytes()).expect_err(text);
        assert!(
            matches!(e.kind, TrfErrorKind::NotATrf { .. }),
            "{text}: {e}"
        );
        assert!(
            e.to_string()
                .starts_with("not a Tournament Report File (TRF): "),
            "{e}"
        );
    }
}

#[test]
fn boards_follow_the_publishing_order() {
    let trf = read("fide-trf26.trf");
    let plan = trf.round_plan(2, Order::Fide).expect("round 2");
    let boards: Vec<(u32, u32, u32)> = plan
        .boards
        .iter()
        .map(|b| (b.board, b.white, b.black))
        .collect();
    // 2-1: the higher player (1) has 1 point, sum 2, rank 1; 8-9: 1 point, sum 2, rank 8;
    // 7-3: ½, sum 1; 4-6 (a forfeit already entered): 0. The bye last.
    assert_eq!(boards, vec![(1, 2, 1), (2, 8, 9), (3, 7, 3), (4, 4, 6)]);
    assert!(plan.boards[3].is_forfeit() && !plan.boards[3].to_play());
    assert!(plan.boards[..3].iter().all(|b| b.to_play()));
    assert_eq!(plan.byes.len(), 1);
    assert_eq!(
        (plan.byes[0].player, plan.byes[0].code),
        (5, Some(ResultCode::PairingBye))
    );
    // The arbiter overrides: player 3's game first.
    let plan = trf.round_plan(2, Order::Players(&[3])).expect("round 2");
    let whites: Vec<u32> = plan.boards.iter().map(|b| b.white).collect();
    assert_eq!(whites, vec![7, 2, 8, 4]);
    let e = trf
        .round_plan(2, Order::Players(&[5]))
        .expect_err("5 has a bye");
    assert_eq!(
        e.to_string(),
        "the file: player 5 has no game to play in round 2"
    );
    let e = trf
        .round_plan(2, Order::Players(&[3, 7]))
        .expect_err("twice");
    assert!(
        matches!(e.kind, TrfErrorKind::OrderedTwice { rank: 7 }),
        "{e}"
    );
    // bbpPairings' own layout: 1-5 before 3-2 (equal scores, rank 1 < 3), byes last.
    let lichess = read("lichess.trf");
    let plan = lichess.round_plan(3, Order::Fide).expect("round 3");
    let boards: Vec<(u32, u32)> = plan.boards.iter().map(|b| (b.white, b.black)).collect();
    assert_eq!(boards, vec![(1, 4), (3, 2)]);
}

fn hallclock() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hallclock"))
}

fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn trf_show_prints_players_and_boards_as_json_lines() {
    let out = hallclock()
        .args(["trf", "show"])
        .arg(data("fide-trf26.trf"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines[0]["tournament"]["time_control"], "420+2");
    assert_eq!(lines[0]["tournament"]["time_control_black"], "360+2");
    assert_eq!(lines[2]["player"]["name"], "Dubois, Céline");
    let boards: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("board").is_some()).collect();
    assert_eq!(boards.len(), 4);
    assert_eq!(
        boards[0],
        &serde_json::json!({"round": 2, "board": 1,
            "white": {"name": "Dubois, Céline", "fide_id": 600200002u64, "rating": 2488, "rank": 2},
            "black": {"name": "Arkwright, Tobias", "fide_id": 400100001u64, "rating": 2611, "rank": 1}})
    );
    assert_eq!(
        boards[3]["forfeit"],
        serde_json::json!({"white": "+", "black": "-"})
    );
    let bye = lines
        .iter()
        .find(|l| l.get("bye").is_some())
        .expect("a bye line");
    assert_eq!(
        (bye["bye"]["rank"].as_u64(), bye["code"].as_str()),
        (Some(5), Some("U"))
    );
    // A pairing engine's output gives the order.
    let out = hallclock()
        .args(["trf", "show"])
        .arg(data("fide-trf26.trf"))
        .arg("--pairs")
        .arg(data("fide-trf26-round2.pairs"))
        .output()
        .expect("runs");
    let whites: Vec<u64> = json_lines(&out.stdout)
        .iter()
        .filter(|l| l.get("board").is_some())
        .filter_map(|l| l["white"]["rank"].as_u64())
        .collect();
    assert_eq!(whites, vec![2, 7, 8, 4]);
    // Bad input: the line and column, exit 2.
    let dir = std::env::temp_dir().join(format!("hallclock-{}-trf-cli", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("bad.trf");
    std::fs::write(&bad, with(23, |l| replace_cols(l, 49, "abcd"))).expect("write");
    let out = hallclock()
        .args(["trf", "show"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("line 23, columns 49–52 (FIDE rating): 'abcd' is not a number"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn trf_results_from_a_round_summary_fill_in_the_codes() {
    let dir = std::env::temp_dir().join(format!("hallclock-{}-trf-results", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let summary = dir.join("summary.json");
    std::fs::write(
        &summary,
        serde_json::json!({"event": "round_finished", "at": 0, "round": 2, "results": [
            {"board": "board-001", "white": "Dubois, Céline", "black": "Arkwright, Tobias", "score": "0-1", "termination": "checkmate", "trf_white": "0", "trf_black": "1", "white_rank": 2, "black_rank": 1},
            {"board": "board-002", "white": "Sato, Hana", "black": "Van der Berg, Pieter", "score": "1-0", "termination": "default", "trf_white": "+", "trf_black": "-"},
            {"board": "board-003", "white": "Petrov, Nikolai", "black": "Kowalczyk, Jan", "score": "1/2-1/2", "termination": "arbiter", "trf_white": "=", "trf_black": "="}
        ]})
        .to_string(),
    )
    .expect("write");
    let out_file = dir.join("out.trf");
    let out = hallclock()
        .args(["trf", "results", "--round", "2", "--in"])
        .arg(data("fide-trf26.trf"))
        .arg("--out")
        .arg(&out_file)
        .arg("--results")
        .arg(&summary)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = std::fs::read(data("fide-trf26.trf")).expect("in");
    let after = std::fs::read(&out_file).expect("out");
    let trf = Trf::read(&after).expect("the reader accepts what we wrote");
    let code = |rank: u32| trf.player(rank).and_then(|p| p.rounds[1].result);
    assert_eq!(code(2), Some(ResultCode::Loss));
    assert_eq!(code(1), Some(ResultCode::Win));
    assert_eq!(code(8), Some(ResultCode::ForfeitWin));
    assert_eq!(code(9), Some(ResultCode::ForfeitLoss));
    assert_eq!(
        (code(7), code(3)),
        (Some(ResultCode::Draw), Some(ResultCode::Draw))
    );
    // The forfeit entered before the round stays; points follow the results.
    assert_eq!(code(4), Some(ResultCode::ForfeitWin));
    assert_eq!(trf.player(1).and_then(|p| p.points), Some(20));
    assert_eq!(trf.player(3).and_then(|p| p.points), Some(10));
    // Only the result and points columns of the player lines changed.
    let (b, a) = (
        String::from_utf8_lossy(&before),
        String::from_utf8_lossy(&after),
    );
    let changed: Vec<usize> = b
        .split("\r\n")
        .zip(a.split("\r\n"))
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(changed, vec![22, 23, 24, 28, 29, 30]);
    for (x, y) in b.split("\r\n").zip(a.split("\r\n")) {
        let diff: Vec<usize> = x
            .chars()
            .zip(y.chars())
            .enumerate()
            .filter(|(_, (p, q))| p != q)
            .map(|(i, _)| i + 1)
            .collect();
        assert!(
            diff.iter().all(|c| (81..=84).contains(c) || *c == 109),
            "{diff:?}\n{x}\n{y}"
        );
    }
}

/// `hallclock ARGS…`: exit code, stdout, stderr.
fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, Vec<u8>, String) {
    let out = hallclock().args(args).output().expect("runs");
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The warnings `hallclock trf` printed, as (line, the rest).
fn warnings(stderr: &str) -> Vec<(usize, String)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hallclock trf: warning: "))
        .map(|l| {
            let (_, rest) = l.split_once(": line ").expect("names the line");
            let (n, what) = rest.split_once(": ").expect("then says what");
            (n.parse().expect("a line number"), what.to_string())
        })
        .collect()
}

fn show(name: &str) -> (Vec<serde_json::Value>, Vec<(usize, String)>) {
    let path = data(name);
    let (code, out, err) = run(&["trf".as_ref(), "show".as_ref(), path.as_os_str()]);
    assert_eq!(code, Some(0), "{name}: {err}");
    (json_lines(&out), warnings(&err))
}

/// The real binary's `trf show` over every file this repository keeps for the TRF room:
/// each TRF is read (exit 0, JSON lines on stdout) and everything on stderr is a warning
/// that names its line; the other files of the folder (its README, a pairing engine's
/// `.pairs`) are refused with exit 2 and one line naming the file, never a panic.
#[test]
fn trf_show_reads_every_test_file_and_every_warning_names_its_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [data(""), root.join("crates/trf/tests/data")] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("test data folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        here.sort();
        files.extend(here);
    }
    let shared: Vec<PathBuf> = trf_files()
        .into_iter()
        .filter(|p| !files.contains(p))
        .collect();
    files.extend(shared);
    let is_trf = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("trf") || e.eq_ignore_ascii_case("txt"))
    };
    let trfs = files.iter().filter(|p| is_trf(p)).count();
    assert!(trfs >= 10, "{files:?}");
    for path in &files {
        let (code, out, err) = run(&["trf".as_ref(), "show".as_ref(), path.as_os_str()]);
        let name = path.display();
        if !is_trf(path) {
            assert_eq!(code, Some(2), "{name}: {err}");
            assert_eq!(err.lines().count(), 1, "{name}: {err}");
            assert!(
                err.starts_with(&format!("hallclock trf: {name}: ")),
                "{err}"
            );
            continue;
        }
        assert_eq!(code, Some(0), "{name}: {err}");
        let lines = json_lines(&out);
        assert!(lines[0].get("tournament").is_some(), "{name}: {lines:?}");
        assert!(lines.iter().any(|l| l.get("player").is_some()), "{name}");
        // Every line of stderr is a warning, and `warnings` finds its line number in each.
        let warned = warnings(&err);
        assert_eq!(warned.len(), err.lines().count(), "{name}: {err}");
        assert!(warned.iter().all(|w| w.0 >= 1), "{name}: {warned:?}");
    }
}

#[test]
fn trf_show_reads_the_fide_example_layout_with_rulers_and_names_each_skipped_line() {
    let (lines, warned) = show("fide-example-rulers.trf");
    assert_eq!(
        warned.iter().map(|w| w.0).collect::<Vec<_>>(),
        vec![12, 13, 14, 24],
        "{warned:?}"
    );
    assert_eq!(
        warned[0].1,
        "unknown record code 'DDD', skipped (kept as it is)"
    );
    assert!(
        warned[2]
            .1
            .starts_with("not a TRF record, skipped (kept as it is): '1234567890"),
        "{warned:?}"
    );
    assert_eq!(
        warned[3].1,
        "not a TRF record, skipped (kept as it is): 'Exported for testing - end of file'"
    );
    let players = lines.iter().filter(|l| l.get("player").is_some()).count();
    assert_eq!(players, 6);
    let boards = lines.iter().filter(|l| l.get("board").is_some()).count();
    assert_eq!(boards, 3);
}

#[test]
fn trf_show_reads_a_swiss_manager_file_with_a_bom_crlf_utf8_names_and_fide_id_0() {
    let (lines, warned) = show("swiss-manager-utf8-bom.trf");
    assert_eq!(warned, vec![]);
    assert_eq!(lines[0]["tournament"]["name"], "Café Open 2026 – Ronde");
    let player = |rank: u64| {
        lines
            .iter()
            .find(|l| l["player"]["rank"].as_u64() == Some(rank))
            .map(|l| l["player"].clone())
            .expect("player")
    };
    assert_eq!(player(1)["name"], "Müller-Lüdenscheidt, Jörg");
    assert_eq!(player(1)["fide_id"], 4600123);
    assert_eq!(player(2)["name"], "Dvořáková, Zuzana");
    assert_eq!(player(2)["rating"], 2188);
    for rank in [2, 4, 5, 6] {
        assert!(
            player(rank)["fide_id"].is_null(),
            "{rank}: {}",
            player(rank)
        );
    }
    assert_eq!(player(4)["name"], "Şahin, Çağrı");
    assert_eq!(player(4)["points"], 1.0);
    let boards: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("board").is_some()).collect();
    assert_eq!(boards.len(), 3);
    assert_eq!(boards[0]["round"], 3);
}

#[test]
fn trf_show_skips_unknown_codes_and_counts_team_records_in_a_cr_file() {
    let (lines, warned) = show("engine-extensions-teams-cr.trf");
    assert_eq!(
        warned,
        vec![
            (
                15,
                "unknown record code 'ZZQ', skipped (kept as it is)".to_string()
            ),
            (
                16,
                "unknown record code '777', skipped (kept as it is)".to_string()
            ),
        ]
    );
    assert_eq!(lines[0]["tournament"]["team_records"], 4);
    let boards = lines.iter().filter(|l| l.get("board").is_some()).count();
    assert_eq!(boards, 2);
}

#[test]
fn trf_show_reads_x_and_an_xxr_of_more_rounds_than_played() {
    let (lines, warned) = show("adjourned-x-xxr.trf");
    assert_eq!(warned, vec![]);
    assert_eq!(lines[0]["tournament"]["rounds"], 7);
    let boards: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("board").is_some()).collect();
    // The last round in the file is 3, though 7 are announced.
    assert_eq!(boards.len(), 3);
    assert!(boards.iter().all(|b| b["round"] == 3));
    let trf = read("adjourned-x-xxr.trf");
    let code = |rank: u32| trf.player(rank).and_then(|p| p.round(3)?.result);
    assert_eq!(
        (code(1), code(2)),
        (Some(ResultCode::Unknown), Some(ResultCode::Unknown))
    );
}

/// `trf results` on a file, from a round summary: the written bytes.
fn results(name: &str, round: usize, games: serde_json::Value) -> (Vec<u8>, String) {
    let dir =
        std::env::temp_dir().join(format!("hallclock-{}-trf-wild-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let summary = dir.join("summary.json");
    std::fs::write(
        &summary,
        serde_json::json!({"event": "round_finished", "at": 0, "round": round, "results": games})
            .to_string(),
    )
    .expect("write");
    let out_file = dir.join("out.trf");
    let (input, round) = (data(name), round.to_string());
    let (code, _, err) = run(&[
        "trf".as_ref(),
        "results".as_ref(),
        "--round".as_ref(),
        round.as_ref(),
        "--in".as_ref(),
        input.as_os_str(),
        "--out".as_ref(),
        out_file.as_os_str(),
        "--results".as_ref(),
        summary.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    (std::fs::read(&out_file).expect("written"), err)
}

fn game(white: (&str, u32), black: (&str, u32), codes: (&str, &str)) -> serde_json::Value {
    serde_json::json!({"board": "board-001", "white": white.0, "black": black.0,
        "score": "1/2-1/2", "termination": "arbiter", "trf_white": codes.0,
        "trf_black": codes.1, "white_rank": white.1, "black_rank": black.1})
}

/// The numbers of the lines that differ, splitting on `ending`.
fn changed_lines(before: &[u8], after: &[u8], ending: &str) -> Vec<usize> {
    let (b, a) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    let (b, a): (Vec<&str>, Vec<&str>) = (b.split(ending).collect(), a.split(ending).collect());
    assert_eq!(b.len(), a.len(), "the same lines, the same endings");
    b.iter()
        .zip(&a)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn trf_results_keep_unknown_and_team_lines_byte_for_byte() {
    let name = "engine-extensions-teams-cr.trf";
    let (after, err) = results(
        name,
        2,
        serde_json::json!([
            game(("Bravo, Berta", 2), ("Alpha, Aaron", 1), ("=", "=")),
            game(("Charlie, Cem", 3), ("Delta, Dora", 4), ("1", "0")),
        ]),
    );
    // The warnings are printed by `trf results` too.
    assert_eq!(
        warnings(&err).iter().map(|w| w.0).collect::<Vec<_>>(),
        vec![15, 16]
    );
    let before = std::fs::read(data(name)).expect("in");
    // Only the four player lines change; CR endings, 310/013/802, ZZQ and 777 stay.
    assert_eq!(changed_lines(&before, &after, "\r"), vec![17, 18, 19, 20]);
    assert!(!after.contains(&b'\n'));
    let trf = Trf::read(&after).expect("reads again");
    let code = |rank: u32| trf.player(rank).and_then(|p| p.round(2)?.result);
    assert_eq!(code(3), Some(ResultCode::Win));
    // BBW/BBD: the file's own scoring, so its points column is left alone.
    assert_eq!(trf.player(3).and_then(|p| p.points), Some(0));
}

#[test]
fn trf_results_replace_an_x_and_keep_a_bom_and_crlf() {
    let name = "adjourned-x-xxr.trf";
    let (after, _) = results(
        name,
        3,
        serde_json::json!([game(
            ("Arnarsson, Einar", 1),
            ("Bakker, Joost", 2),
            ("0", "1")
        )]),
    );
    let before = std::fs::read(data(name)).expect("in");
    assert_eq!(changed_lines(&before, &after, "\n"), vec![10, 11]);
    let trf = Trf::read(&after).expect("reads again");
    assert_eq!(trf.player(1).and_then(|p| p.points), Some(20));
    assert_eq!(trf.player(2).and_then(|p| p.points), Some(30));

    let name = "swiss-manager-utf8-bom.trf";
    let (after, _) = results(
        name,
        3,
        serde_json::json!([
            game(
                ("Müller-Lüdenscheidt, Jörg", 1),
                ("Dvořáková, Zuzana", 2),
                ("=", "=")
            ),
            game(("Şahin, Çağrı", 4), ("Ødegård, Pål Åsmund", 3), ("1", "0")),
            game(
                ("Lefèvre, Stéphane", 6),
                ("Ní Bhriain, Órla", 5),
                ("0", "1")
            ),
        ]),
    );
    let before = std::fs::read(data(name)).expect("in");
    assert!(after.starts_with(b"\xef\xbb\xbf012 "));
    assert_eq!(
        changed_lines(&before, &after, "\r\n"),
        vec![13, 14, 15, 16, 17, 18]
    );
    let trf = Trf::read(&after).expect("reads again");
    assert_eq!(trf.player(4).and_then(|p| p.points), Some(20));
    assert_eq!(trf.player(2).and_then(|p| p.fide_id), None);
}
