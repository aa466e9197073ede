//! E-board moves at real timing, end to end: the simulator's boards scan on a grid (field
//! updates can leave after the lever frame of the press that followed the move), the
//! daemon, a real Mosquitto. Every move made must be published, and the position must be
//! known once the board is still.

mod common;

use std::time::Duration;

use common::{Rig, board_id, now_ms};
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen, uci::UciMove};

/// Boards that scan like real ones: every 100 ms ± 20 ms.
async fn rig(name: &str, boards: usize) -> Rig {
    Rig::start_sim(
        name,
        boards,
        GameDefaults::default(),
        |sim| {
            sim.scan_interval = Duration::from_millis(100);
            sim.scan_jitter = Duration::from_millis(20);
        },
        |_| {},
    )
    .await
}

async fn round(rig: &mut Rig, boards: usize, fen: Option<&str>) {
    round_tc(rig, boards, fen, "300+2").await
}

async fn round_tc(rig: &mut Rig, boards: usize, fen: Option<&str>, tc: &str) {
    let pairings: Vec<Value> = (1..=boards)
        .map(|n| {
            let mut p =
                json!({"board": board_id(n), "white": format!("W{n}"), "black": format!("B{n}")});
            if let Some(f) = fen {
                p["fen"] = json!(f);
            }
            p
        })
        .collect();
    let r = rig
        .hall_command(json!({
            "action": "start_round", "round": 1, "time_control": tc,
            "start": now_ms(), "pairings": pairings,
        }))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=boards {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
}

fn fen_after(ucis: &[&str]) -> String {
    let mut pos = Chess::default();
    for u in ucis {
        let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    Fen::from_position(&pos, EnPassantMode::Legal).to_string()
}

/// The events of `kind` published for `board` so far.
fn events(rig: &mut Rig, board: &str, kind: &str) -> Vec<Value> {
    let topic = format!("hallclock/{}/board/{board}/event", common::HALL);
    rig.watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.json())
        .filter(|e| e["event"] == kind)
        .collect()
}

/// The alerts of `kind` active now (the newest message on each alert topic).
fn alerts(rig: &mut Rig, kind: &str) -> Vec<Value> {
    let prefix = format!("hallclock/{}/alert/", common::HALL);
    let mut latest: std::collections::BTreeMap<String, String> = Default::default();
    for m in rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.starts_with(&prefix))
    {
        latest.insert(m.topic.clone(), m.text());
    }
    latest
        .values()
        .filter(|t| !t.is_empty())
        .filter_map(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|a| a["kind"] == kind)
        .collect()
}

/// Waits until the board's state shows `fen`, then checks that exactly `ucis` were
/// published as moves, in order, and that nothing was rejected.
async fn assert_game(rig: &mut Rig, n: usize, ucis: &[&str]) {
    let b = board_id(n);
    let want = fen_after(ucis);
    rig.watcher
        .state(&b, &format!("fen {want}"), |s| s["fen"] == want.as_str())
        .await;
    let made: Vec<String> = events(rig, &b, "move_made")
        .iter()
        .filter_map(|e| e["uci"].as_str().map(String::from))
        .collect();
    assert_eq!(made, ucis, "board {b}: the moves published");
    assert_eq!(
        events(rig, &b, "pressed").len(),
        ucis.len(),
        "one press per move"
    );
    assert!(
        alerts(rig, "move_rejected").is_empty(),
        "{:?}",
        alerts(rig, "move_rejected")
    );
    assert!(
        alerts(rig, "irregular").is_empty(),
        "{:?}",
        alerts(rig, "irregular")
    );
    assert_position_never_vanished(rig, &b);
}

/// Every state of the board's game carried a position: a press before its move was read
/// shows the position before it with `move_pending`, never `"fen": null`.
fn assert_position_never_vanished(rig: &mut Rig, board: &str) {
    let topic = format!("hallclock/{}/board/{board}/state", common::HALL);
    let states: Vec<Value> = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.json())
        .filter(|s| s["phase"] != "idle")
        .collect();
    assert!(!states.is_empty(), "board {board}: no state of its game");
    for s in &states {
        assert!(
            s["fen"].is_string(),
            "board {board}: a state without its position: {s}"
        );
        if s["move_pending"] == true {
            assert!(s["pending_side"].is_string(), "{s}");
        }
    }
}

const GAME: [&str; 7] = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_then_press_0_50_80_300_ms_later_loses_no_move() {
    let delays = [0u64, 50, 80, 300];
    let mut rig = rig("blitz", delays.len()).await;
    round(&mut rig, delays.len(), None).await;
    for (i, delay) in delays.iter().enumerate() {
        let n = i + 1;
        let b = board_id(n);
        for (ply, mv) in GAME.iter().enumerate() {
            // Blitz: the reply comes 120 ms after the opponent's press, faster than a
            // scan can report the move before it.
            if ply > 0 {
                tokio::time::sleep(Duration::from_millis(120)).await;
            }
            rig.sim
                .board(n)
                .play_move(mv)
                .expect("the simulator plays it");
            tokio::time::sleep(Duration::from_millis(*delay)).await;
            rig.sim.board(n).press();
            // The opponent thinks until the press is on the clock.
            rig.watcher
                .wait(&format!("press {} on {b}", ply + 1), |m| {
                    m.topic.ends_with(&format!("{b}/event"))
                        && m.json()["event"] == "pressed"
                        && m.json()["seq"].as_u64().is_some()
                        && m.json()["moves"].as_u64() == Some(ply as u64 / 2 + 1)
                        && m.json()["side"] == if ply % 2 == 0 { "white" } else { "black" }
                })
                .await;
        }
    }
    for n in 1..=delays.len() {
        assert_game(&mut rig, n, &GAME).await;
    }
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_quick_moves_pressed_before_either_is_read() {
    let mut rig = rig("quick", 1).await;
    round(&mut rig, 1, None).await;
    let board = rig.sim.board(1);
    // White moves and presses; Black replies and presses before any scan reported it.
    board.play_move("e2e4").unwrap();
    board.press();
    tokio::time::sleep(Duration::from_millis(5)).await;
    board.play_move("c7c5").unwrap();
    board.press();
    assert_game(&mut rig, 1, &["e2e4", "c7c5"]).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lever_frame_before_the_update_that_completes_the_move() {
    let mut rig = rig("lever-first", 1).await;
    round(&mut rig, 1, None).await;
    let board = rig.sim.board(1);
    board.lift("e2").unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    // The press reaches the daemon while the board shows only the empty e2.
    board.press();
    tokio::time::sleep(Duration::from_millis(30)).await;
    board.place("e4", 'P').unwrap();
    assert_game(&mut rig, 1, &["e2e4"]).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slide_overtaken_by_the_press_records_the_final_square() {
    let mut rig = rig("slide", 1).await;
    round(&mut rig, 1, None).await;
    let b = board_id(1);
    for mv in ["a2a4", "h7h5"] {
        rig.sim.board(1).play_move(mv).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        rig.sim.board(1).press();
        rig.watcher.event(&b, "pressed").await;
    }
    let board = rig.sim.board(1);
    // Ra1 slides to a3; a scan sees it on a2 (a legal move by itself), the press comes
    // right after that scan, the rest of the slide after the press.
    board.lift("a1").unwrap();
    board.place("a2", 'R').unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    board.press();
    board.place("a3", 'R').unwrap();
    board.lift("a2").unwrap();
    assert_game(&mut rig, 1, &["a2a4", "h7h5", "a1a3"]).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_field_update_is_repaired_by_a_board_dump() {
    let mut rig = rig("missed", 1).await;
    round(&mut rig, 1, None).await;
    let board = rig.sim.board(1);
    // The board is deaf and mute while it scans the move: its updates are lost.
    board.stall(Duration::from_millis(250));
    board.play_move("d2d4").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    board.press();
    assert_game(&mut rig, 1, &["d2d4"]).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kings_on_the_centre_squares_show_the_result_and_are_no_move() {
    let mut rig = rig("kings", 1).await;
    let start = "8/p7/3k4/8/8/4K3/P7/8 w - - 0 40";
    let b = board_id(1);
    // The arbiter sets the position up on the board.
    for rank in ['1', '2', '7', '8'] {
        for file in 'a'..='h' {
            rig.sim.board(1).lift(&format!("{file}{rank}")).unwrap();
        }
    }
    for (sq, piece) in [("a7", 'p'), ("d6", 'k'), ("e3", 'K'), ("a2", 'P')] {
        rig.sim.board(1).place(sq, piece).unwrap();
    }
    // (Before the game the move reader calls that board irregular; let it.)
    tokio::time::sleep(Duration::from_millis(1000)).await;
    round(&mut rig, 1, Some(start)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Ke3-e4 is legal on its own: the first half of the gesture.
    rig.sim.board(1).lift("e3").unwrap();
    rig.sim.board(1).place("e4", 'K').unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    rig.sim.board(1).lift("d6").unwrap();
    rig.sim.board(1).place("d5", 'k').unwrap();
    let topic = rig.topic(&format!("alert/{b}-result-shown"));
    let a = rig
        .watcher
        .wait("result_shown alert", |m| m.topic == topic && m.raised())
        .await
        .json();
    assert_eq!(a["severity"], "info");
    assert!(
        a["message"].as_str().is_some_and(|m| m.contains("1-0")),
        "{a}"
    );
    // White presses (the gesture done): no move, and no irregular alert.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(events(&mut rig, &b, "move_made").is_empty());
    let irregular = alerts(&mut rig, "irregular");
    assert!(irregular.is_empty(), "{irregular:?}");
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_result", "result": "1-0", "reason": "kings"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher
        .wait("result_shown cleared", |m| m.topic == topic && m.cleared())
        .await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piece_lifted_and_held_is_no_alert_until_it_stays_in_the_air() {
    let mut rig = rig("in-air", 1).await;
    round(&mut rig, 1, None).await;
    let b = board_id(1);
    // Held 1.2 s (well past the 250 ms quiet spell), then played: no alert at all.
    rig.sim.board(1).lift("g1").unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(
        alerts(&mut rig, "irregular").is_empty(),
        "{:?}",
        alerts(&mut rig, "irregular")
    );
    rig.sim.board(1).place("f3", 'N').unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    rig.sim.board(1).press();
    assert_game(&mut rig, 1, &["g1f3"]).await;
    // Held longer than the in-air grace (2.5 s): an info alert, cleared when it is back.
    rig.sim.board(1).lift("g8").unwrap();
    let topic = rig.topic(&format!("alert/{b}-irregular"));
    let a = rig
        .watcher
        .wait("irregular alert", |m| m.topic == topic && m.raised())
        .await
        .json();
    assert_eq!(a["severity"], "info");
    rig.sim.board(1).place("g8", 'n').unwrap();
    rig.watcher
        .wait("irregular cleared", |m| m.topic == topic && m.cleared())
        .await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_before_its_move_is_read_shows_the_position_before_it_as_pending() {
    // Black presses with the pawn still in the hand: the state keeps the position after
    // 1. e4 (Black to move) with `move_pending`, and has 1... e5 once the pawn lands.
    let mut rig = rig("move-pending", 1).await;
    round(&mut rig, 1, None).await;
    let b = board_id(1);
    rig.sim.board(1).play_move("e2e4").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await; // read and settled
    rig.sim.board(1).press();
    rig.watcher.event(&b, "pressed").await;
    rig.sim.board(1).lift("e7").unwrap();
    rig.sim.board(1).press();
    let after_e4 = fen_after(&["e2e4"]);
    let pending = rig
        .watcher
        .state(&b, "a pending move", |s| s["move_pending"] == true)
        .await;
    assert_eq!(pending["fen"], after_e4.as_str(), "{pending}");
    assert_eq!(pending["pending_side"], "black", "{pending}");
    assert_eq!(pending["pending_plies"], 1, "{pending}");
    assert_eq!(pending["running"], "white", "the press counted: {pending}");
    rig.sim.board(1).place("e5", 'p').unwrap();
    let after_e5 = fen_after(&["e2e4", "e7e5"]);
    let known = rig
        .watcher
        .state(&b, "1... e5 on the board", |s| {
            s["fen"] == after_e5.as_str()
        })
        .await;
    assert_eq!(known["move_pending"], false, "{known}");
    assert!(known.get("pending_side").is_none(), "{known}");
    assert_position_never_vanished(&mut rig, &b);
    rig.stop().await;
}

/// Issue 22: `"fen": null` only when the position is truly unknown. Presses with no move on
/// the board (a clock-only board: the pieces are not on a DGT board, or it reports
/// nothing) owe their moves, and the state keeps the last known position with
/// `move_pending` for up to `MAX_OWED_PLIES` of them (the board's dumps, asked for after
/// each, show no move); the press after that leaves the position unknown: the game runs on
/// and its state says `"fen": null`, nothing pending, until the arbiter sets a position.
/// Press board `n`'s lever once its clock runs (the daemon's `clock_started` goes out
/// before the clock has taken its command).
async fn press_running(rig: &Rig, n: usize) {
    for _ in 0..250 {
        if rig.sim.board(n).clock_display().running.is_some() {
            assert!(rig.sim.board(n).press(), "the clock took the press");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("board {n}: the clock did not run within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presses_beyond_what_the_board_can_owe_publish_fen_null_while_the_game_runs() {
    let mut rig = rig("fen-unknown", 1).await;
    round(&mut rig, 1, None).await;
    let b = board_id(1);
    let start = Chess::default();
    let start = Fen::from_position(&start, EnPassantMode::Legal).to_string();
    let owe = usize::from(hallclock::rules::game::MAX_OWED_PLIES);
    for n in 1..=owe {
        press_running(&rig, 1).await;
        rig.watcher.event(&b, "pressed").await;
        let s = rig
            .watcher
            .state(&b, &format!("{n} presses owed"), |s| {
                s["pending_plies"] == n
            })
            .await;
        assert_eq!(s["fen"], start.as_str(), "press {n}: {s}");
        assert_eq!(s["move_pending"], true, "{s}");
        assert_eq!(s["pending_side"], "white", "{s}");
    }
    assert_position_never_vanished(&mut rig, &b);
    press_running(&rig, 1).await;
    rig.watcher.event(&b, "pressed").await;
    let unknown = rig
        .watcher
        .state(&b, "the position unknown", |s| {
            s["phase"] == "running" && s["fen"].is_null()
        })
        .await;
    assert_eq!(unknown["move_pending"], false, "{unknown}");
    assert!(unknown.get("pending_side").is_none(), "{unknown}");
    assert!(unknown.get("pending_plies").is_none(), "{unknown}");
    assert!(
        unknown["running"].is_string(),
        "the clocks run on: {unknown}"
    );
    // The arbiter's position ends it.
    let turn = if (owe + 1) % 2 == 0 { "w" } else { "b" };
    let fen = format!("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR {turn} KQkq - 0 1");
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_position", "fen": fen, "reason": "clock-only board"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let set = rig
        .watcher
        .state(&b, "the arbiter's position", |s| s["fen"] == fen.as_str())
        .await;
    assert_eq!(set["move_pending"], false, "{set}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_before_the_pressed_move_is_read_is_decided_when_the_board_shows_it() {
    // 3 s a side. Black lifts its pawn and presses with it in the hand (the board shows
    // no move yet); White's flag falls 2.7 s later with Black's move unread: "result
    // pending: the position is not known". When the pawn lands on e5 the move is the
    // game's, and the flag is decided in that position (6.9): 0-1, the alert cleared.
    let mut rig = rig("flag-unread", 1).await;
    round_tc(&mut rig, 1, None, "3").await;
    let b = board_id(1);
    rig.sim.board(1).play_move("e2e4").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await; // read and settled
    rig.sim.board(1).press();
    let white = rig.watcher.event(&b, "move_made").await;
    assert_eq!(white["uci"], "e2e4", "{white}");
    rig.watcher.event(&b, "pressed").await;
    rig.sim.board(1).lift("e7").unwrap();
    rig.sim.board(1).press();
    let flag = rig.watcher.event(&b, "flag_fell").await;
    assert_eq!(flag["side"], "white", "{flag}");
    let pending = rig.watcher.event(&b, "result_pending").await;
    assert!(
        pending["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not known")),
        "{pending}"
    );
    let topic = rig.topic(&format!("alert/{b}-result-pending"));
    rig.watcher
        .wait("result-pending alert", |m| m.topic == topic && m.raised())
        .await;
    rig.sim.board(1).place("e5", 'p').unwrap();
    let mv = rig.watcher.event(&b, "move_made").await;
    assert_eq!(
        (mv["side"].as_str(), mv["uci"].as_str()),
        (Some("black"), Some("e7e5"))
    );
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(
        (
            ended["score"].as_str(),
            ended["termination"].as_str(),
            ended["side"].as_str()
        ),
        (Some("0-1"), Some("flag"), Some("white")),
        "{ended}"
    );
    rig.watcher
        .wait("result-pending alert cleared", |m| {
            m.topic == topic && m.cleared()
        })
        .await;
    rig.watcher
        .state(&b, "the result 0-1", |s| s["result"]["score"] == "0-1")
        .await;
    rig.stop().await;
}
