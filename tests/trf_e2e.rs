//! A full round from a pairing program's file: the TRF goes to `start_round` over MQTT,
//! the games are played on simulated boards, and the results go back into the TRF, which
//! the reader accepts with the right codes (`1 0 + - =`, `X` while a game is unfinished).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Rig, board_id, now_ms};
use hallclock::trf::{ResultCode, Trf};
use serde_json::{Value, json};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/trf")
        .join(name)
}

async fn play(rig: &mut Rig, n: usize, uci: &str) {
    rig.sim
        .board(n)
        .play_move(uci)
        .expect("the simulator plays the move");
    tokio::time::sleep(Duration::from_millis(60)).await;
    rig.sim.board(n).press();
}

fn results(rig: &Rig, summary: Option<&Path>, out: &Path) -> Trf {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hallclock"));
    cmd.args(["trf", "results", "--round", "2", "--in"])
        .arg(data("fide-trf26.trf"))
        .arg("--out")
        .arg(out);
    match summary {
        Some(s) => cmd.arg("--results").arg(s),
        None => cmd.arg("--state-dir").arg(&rig.settings.state_dir),
    };
    let o = cmd.output().expect("hallclock runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Trf::read(&std::fs::read(out).expect("written")).expect("the reader accepts it")
}

fn code(trf: &Trf, rank: u32) -> Option<ResultCode> {
    trf.player(rank)
        .and_then(|p| p.round(2))
        .and_then(|e| e.result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_from_a_trf_is_played_and_its_results_go_back() {
    let mut rig = Rig::start("trf-round", 3).await;
    let mut text = std::fs::read_to_string(data("fide-trf26.trf")).expect("test file");
    // A line no pairing program reads (a note typed into the file): skipped, and the
    // answer says which.
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let junk = text.lines().count() + 1;
    text.push_str("XYZ a note typed into the file\n");
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 2, "trf": text,
            "start": now_ms(), "default_time_ms": 5000}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let warnings = r["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{r}");
    assert!(
        warnings[0]
            .as_str()
            .is_some_and(|w| w.starts_with(&format!("line {junk}:")) && w.contains("skipped")),
        "{r}"
    );
    for n in 1..=3 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    for n in [1, 3] {
        for side in ["white", "black"] {
            let r = rig
                .board_command(&board_id(n), json!({"action": "present", "side": side}))
                .await;
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
    // Board order and players as the file spells them; Armageddon times from tag 222.
    let s = rig.watcher.latest_state(&board_id(1));
    assert_eq!(s["white"]["name"], "Dubois, Céline");
    assert_eq!(s["white"]["fide_id"], 600_200_002u64);
    // The file's title and rating, for the hall screens (issue 40).
    assert_eq!(
        (&s["white"]["title"], &s["white"]["rating"]),
        (&json!("IM"), &json!(2488))
    );
    assert_eq!(
        (&s["black"]["title"], &s["black"]["rating"]),
        (&json!("GM"), &json!(2611))
    );
    assert_eq!(s["black"]["name"], "Arkwright, Tobias");
    assert_eq!(s["round"], 2);
    let (w, b) = (
        s["white"]["remaining_ms"].as_i64().unwrap_or(0),
        s["black"]["remaining_ms"].as_i64().unwrap_or(0),
    );
    // Black's clock does not run yet: 6 min + the increment of move 1; White's runs from 7.
    assert_eq!(b, 362_000, "{s}");
    assert!(w > 362_000 && w <= 422_000, "{s}");
    let s = rig.watcher.latest_state(&board_id(2));
    assert_eq!(
        (s["white"]["name"].as_str(), s["black"]["name"].as_str()),
        (Some("Sato, Hana"), Some("Van der Berg, Pieter"))
    );
    let s = rig.watcher.latest_state(&board_id(3));
    assert_eq!(s["white"]["name"], "Petrov, Nikolai");

    // Board 1: fool's mate. Board 2: Black never comes (a forfeit). Board 3 plays on.
    play(&mut rig, 2, "d2d4").await;
    for mv in ["f2f3", "e7e5", "g2g4"] {
        play(&mut rig, 1, mv).await;
        rig.watcher.event(&board_id(1), "pressed").await;
    }
    rig.sim.board(1).play_move("d8h4").expect("Qh4#");
    let ended = rig.watcher.event(&board_id(1), "game_ended").await;
    assert_eq!(ended["score"], "0-1");
    let ended = rig.watcher.event(&board_id(2), "game_ended").await;
    assert_eq!(ended["termination"], "default");

    let dir = hallclock::link::testing::scratch_dir("trf-round-out");
    let trf = results(&rig, None, &dir.join("from-journal.trf"));
    assert_eq!(
        (code(&trf, 2), code(&trf, 1)),
        (Some(ResultCode::Loss), Some(ResultCode::Win))
    );
    assert_eq!(
        (code(&trf, 8), code(&trf, 9)),
        (Some(ResultCode::ForfeitWin), Some(ResultCode::ForfeitLoss))
    );
    // Still being played: unknown.
    assert_eq!(
        (code(&trf, 7), code(&trf, 3)),
        (Some(ResultCode::Unknown), Some(ResultCode::Unknown))
    );
    // Entered before the round, untouched.
    assert_eq!(
        (code(&trf, 4), code(&trf, 6)),
        (Some(ResultCode::ForfeitWin), Some(ResultCode::ForfeitLoss))
    );

    // Board 3 ends in an agreed draw; the round summary carries the codes and ranks.
    let r = rig
        .board_command(
            &board_id(3),
            json!({"action": "set_result", "result": "agreed_draw", "reason": "9.1"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let topic = rig.topic("event");
    let summary = rig
        .watcher
        .wait("round_finished", |m| {
            m.topic == topic && m.json()["event"] == "round_finished"
        })
        .await
        .json();
    let line = |b: usize| -> Value {
        summary["results"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["board"] == board_id(b).as_str()))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        (line(1)["trf_white"].as_str(), line(1)["trf_black"].as_str()),
        (Some("0"), Some("1"))
    );
    assert_eq!(
        (
            line(1)["white_rank"].as_u64(),
            line(1)["black_rank"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(
        (line(2)["trf_white"].as_str(), line(2)["trf_black"].as_str()),
        (Some("+"), Some("-"))
    );
    assert_eq!(
        (line(3)["trf_white"].as_str(), line(3)["trf_black"].as_str()),
        (Some("="), Some("="))
    );
    let file = dir.join("summary.json");
    std::fs::write(&file, summary.to_string()).expect("write");
    let trf = results(&rig, Some(&file), &dir.join("from-summary.trf"));
    assert_eq!(
        (code(&trf, 7), code(&trf, 3)),
        (Some(ResultCode::Draw), Some(ResultCode::Draw))
    );
    assert_eq!(
        (code(&trf, 2), code(&trf, 1)),
        (Some(ResultCode::Loss), Some(ResultCode::Win))
    );
    assert_eq!(trf.player(1).and_then(|p| p.points), Some(20));
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trf_round_is_refused_whole_when_it_does_not_fit_the_hall() {
    let mut rig = Rig::start("trf-refused", 2).await;
    let text = std::fs::read_to_string(data("fide-trf26.trf")).expect("test file");
    // Three games to play, two boards: nothing starts.
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 2, "trf": text, "start": now_ms()}))
        .await;
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(r["error"], "unknown_board", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or("")
            .contains("tournament board 3"),
        "{r}"
    );
    // A malformed file: the line and column.
    let bad = text.replacen("2488 FRA", "24x8 FRA", 1);
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 2, "trf": bad, "start": now_ms()}))
        .await;
    assert_eq!(r["error"], "bad_value", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or("")
            .contains("line 23, columns 49–52 (FIDE rating)"),
        "{r}"
    );
    // Only this hall's boards: boards 1 and 2 start, board 3 is another hall's.
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 2, "trf": text, "start": now_ms(), "only_our_boards": true}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    assert!(
        r.get("warnings").is_none(),
        "a file read whole warns of nothing: {r}"
    );
    for n in 1..=2 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    rig.stop().await;
}
