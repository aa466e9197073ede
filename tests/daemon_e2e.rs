//! The daemon end to end: a real Mosquitto, simulated boards on pseudo-terminals, and
//! what an MQTT subscriber receives. Rules are proven in the pure core; these tests
//! prove the daemon carries them to the hardware and to the dashboards.

mod common;

use std::time::Duration;

use common::{Rig, Watcher, board_id, now_ms};
use serde_json::{Value, json};

/// Play a move on the simulated e-board and press the lever, as a player does.
async fn play(rig: &mut Rig, n: usize, uci: &str) {
    rig.sim
        .board(n)
        .play_move(uci)
        .expect("the simulator plays the move");
    // Let the board's field updates reach the daemon before the press.
    tokio::time::sleep(Duration::from_millis(60)).await;
    rig.sim.board(n).press();
}

async fn started(rig: &mut Rig, boards: usize, tc: &str, extra: Value) {
    let r = rig.start_round(boards, tc, 0, extra).await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=boards {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_game_to_checkmate_through_the_e_board() {
    let mut rig = Rig::start("mate", 1).await;
    started(&mut rig, 1, "300+2", json!({})).await;
    let b = board_id(1);
    for mv in ["f2f3", "e7e5", "g2g4"] {
        play(&mut rig, 1, mv).await;
        let e = rig.watcher.event(&b, "pressed").await;
        assert!(e["seq"].as_u64().is_some());
    }
    // The mating move ends the game without a press (6.7a).
    rig.sim.board(1).play_move("d8h4").expect("Qh4#");
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "0-1");
    assert_eq!(ended["termination"], "checkmate");
    let state = rig
        .watcher
        .state(&b, "finished state", |s| s["phase"] == "finished")
        .await;
    assert_eq!(
        state["fen"],
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
    );
    assert_eq!(state["white"]["moves"], 2);
    assert_eq!(state["authoritative"], false);
    // Every event carries the board's sequence number, gapless from 1.
    let seqs: Vec<u64> = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.ends_with(&format!("{b}/event")))
        .filter_map(|m| m.json()["seq"].as_u64())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    // The round summary follows the last result.
    let topic = rig.topic("event");
    let summary = rig
        .watcher
        .wait("round_finished", |m| {
            m.topic == topic && m.json()["event"] == "round_finished"
        })
        .await
        .json();
    assert_eq!(summary["results"][0]["score"], "0-1");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flag_fall_loses_and_the_clock_shows_it() {
    let mut rig = Rig::start("flag", 1).await;
    started(&mut rig, 1, "2", json!({})).await;
    let b = board_id(1);
    play(&mut rig, 1, "e2e4").await;
    let flag = rig.watcher.event(&b, "flag_fell").await;
    assert_eq!(flag["side"], "black");
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "1-0");
    assert_eq!(ended["termination"], "flag");
    // The DGT3000 shows the result text.
    let mut shown = String::new();
    for _ in 0..100 {
        shown = rig.sim.board(1).clock_display().to_string();
        if shown.contains("1-0") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(shown.contains("1-0"), "clock shows {shown}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flag_fall_draws_when_the_opponent_cannot_mate() {
    let mut rig = Rig::start("flagdraw", 1).await;
    // White: lone king. Black to move with a queen; Black's flag falls.
    let r = rig
        .hall_command(json!({
            "action": "start_round", "round": 1, "time_control": "2", "start": now_ms(),
            "pairings": [{"board": board_id(1), "white": "W", "black": "B",
                          "fen": "8/8/8/4k3/8/8/q7/7K b - - 0 60"}],
        }))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    let flag = rig.watcher.event(&b, "flag_fell").await;
    assert_eq!(flag["side"], "black");
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "1/2-1/2");
    assert_eq!(ended["termination"], "flag_opponent_cannot_mate");
    // FIDE C.02 (e): the fallen flag is signed on the clock, on Black's side (right).
    common::clock_until(&rig.sim, 1, "the flag sign on the right", |v| {
        v.icons.is_some_and(|i| i.right_flag && !i.left_flag)
    })
    .await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_forfeit_with_a_short_default_time() {
    let mut rig = Rig::start("default", 1).await;
    started(&mut rig, 1, "600", json!({"default_time_ms": 1500})).await;
    let b = board_id(1);
    play(&mut rig, 1, "d2d4").await; // White arrives and plays; Black never comes.
    let passed = rig.watcher.event(&b, "default_time_passed").await;
    assert_eq!(passed["absent"], json!(["black"]));
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "1-0");
    assert_eq!(ended["termination"], "default");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_resume_and_presses_during_a_pause_are_alerts() {
    let mut rig = Rig::start("pause", 1).await;
    started(&mut rig, 1, "600", json!({})).await;
    let b = board_id(1);
    let r = rig
        .board_command(
            &b,
            json!({"action": "pause", "reason": "noise in the hall"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "paused").await;
    let s = rig
        .watcher
        .state(&b, "paused", |s| s["phase"] == "paused")
        .await;
    assert_eq!(s["running"], Value::Null);
    // A press while paused changes nothing official and becomes an alert.
    rig.sim.board(1).press();
    let alert_topic = rig.topic(&format!("alert/{b}-stray-press"));
    let alert = rig
        .watcher
        .wait("stray press alert", |m| {
            m.topic == alert_topic && m.raised()
        })
        .await
        .json();
    assert!(
        alert["message"]
            .as_str()
            .unwrap_or("")
            .contains("not accepted"),
        "{alert}"
    );
    // The refusal's kind for programs, as a response's `error`.
    assert_eq!(alert["error"], "paused", "{alert}");
    let r = rig.board_command(&b, json!({"action": "resume"})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let s = rig
        .watcher
        .state(&b, "running", |s| s["phase"] == "running")
        .await;
    assert_eq!(s["running"], "white");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_time_and_add_time_reach_the_state_and_the_clock() {
    let mut rig = Rig::start("settime", 1).await;
    started(&mut rig, 1, "600", json!({})).await;
    let b = board_id(1);
    let r = rig
        .board_command(
            &b,
            json!({"action": "add_time", "side": "black", "delta_ms": 120000, "reason": "7.5.5 illegal move by white"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let s = rig
        .watcher
        .state(&b, "black 12:00", |s| s["black"]["remaining_ms"] == 720_000)
        .await;
    assert_eq!(s["black"]["remaining_ms"], 720_000);
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_time", "side": "white", "remaining_ms": 300000, "reason": "restored position"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "time_set").await;
    // The clock is re-programmed: left (White) shows about 5:00, right (Black) 12:00.
    let mut shown = String::new();
    for _ in 0..100 {
        let v = rig.sim.board(1).clock_display();
        shown = v.to_string();
        if shown.contains("0:12:00") && (shown.contains("0:05:00") || shown.contains("0:04:59")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(shown.contains("0:12:00"), "clock shows {shown}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_clock_moves_the_game_to_another_board() {
    let mut rig = Rig::start("replace", 2).await;
    let r = rig
        .hall_command(json!({
            "action": "start_round", "round": 1, "time_control": "600", "start": now_ms(),
            "pairings": [{"board": board_id(1), "white": "W", "black": "B"}],
        }))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    play(&mut rig, 1, "e2e4").await;
    rig.watcher.event(&board_id(1), "pressed").await;
    let r = rig
        .board_command(
            &board_id(1),
            json!({"action": "replace_clock", "to": board_id(2), "white_ms": 590000, "black_ms": 595000, "reason": "display defective"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let e = rig.watcher.event(&board_id(2), "clock_replaced").await;
    assert_eq!(e["white_ms"], 590_000);
    let s = rig
        .watcher
        .state(&board_id(2), "game on board 2", |s| s["phase"] == "running")
        .await;
    assert_eq!(s["running"], "black");
    assert_eq!(s["white"]["moves"], 1);
    rig.watcher
        .state(&board_id(1), "board 1 idle", |s| s["phase"] == "idle")
        .await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_pause_raises_an_alert_cleared_on_resume() {
    let mut rig = Rig::start("playerpause", 1).await;
    started(&mut rig, 1, "600", json!({})).await;
    let b = board_id(1);
    rig.sim.board(1).button(hallclock::sim::Button::RunPause);
    rig.watcher.event(&b, "paused_by_player").await;
    let topic = rig.topic(&format!("alert/{b}-player-pause"));
    let alert = rig
        .watcher
        .wait("player pause alert", |m| m.topic == topic && m.raised())
        .await;
    assert!(alert.retained || alert.json()["kind"] == "player_pause");
    assert_eq!(alert.json()["severity"], "critical");
    rig.board_command(&b, json!({"action": "resume"})).await;
    rig.watcher
        .wait("alert cleared", |m| m.topic == topic && m.cleared())
        .await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clock_display_is_reprogrammed_after_every_press() {
    let mut rig = Rig::start("display", 1).await;
    started(&mut rig, 1, "180+2", json!({})).await;
    let before = rig.sim.board(1).clock_commands_received(0x0a);
    play(&mut rig, 1, "e2e4").await;
    rig.watcher.event(&board_id(1), "pressed").await;
    play(&mut rig, 1, "e7e5").await;
    rig.watcher.event(&board_id(1), "pressed").await;
    let mut after = before;
    for _ in 0..100 {
        after = rig.sim.board(1).clock_commands_received(0x0a);
        if after >= before + 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        after >= before + 2,
        "SETNRUN after each press: {before} -> {after}"
    );
    // The increment credited by the daemon shows on the clock: White ~3:03 - think time.
    let v = rig.sim.board(1).clock_display();
    assert!(v.left.to_millis() > 180_000, "left shows {}", v.left);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_commands_are_answered_with_errors_and_change_nothing() {
    let mut rig = Rig::start("badcmd", 1).await;
    started(&mut rig, 1, "600", json!({})).await;
    let b = board_id(1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rig.watcher.latest_state(&b);
    // Malformed JSON: answered on the response topic, transaction unknown.
    let set = rig.topic(&format!("board/{b}/set"));
    rig.watcher.publish(&set, b"{not json").await;
    let resp_topic = rig.topic(&format!("board/{b}/response"));
    let r = rig
        .watcher
        .wait("error response", |m| {
            m.topic == resp_topic && m.json()["status"] == "error"
        })
        .await
        .json();
    assert!(
        r["reason"].as_str().unwrap_or("").starts_with("not JSON"),
        "{r}"
    );
    let cases = [
        (json!({"action": "fly"}), "unknown variant `fly`"),
        (
            json!({"action": "set_time", "side": "white", "remaining_ms": -5, "reason": "x"}),
            "out of range",
        ),
        (
            json!({"action": "add_time", "side": "white", "delta_ms": 99999999999i64, "reason": "x"}),
            "out of range",
        ),
        (
            json!({"action": "set_time", "side": "white", "remaining_ms": 5000}),
            "requires a reason",
        ),
        (json!({"action": "resume"}), "not stopped"),
        (json!({"action": "confirm_flag"}), "no flag"),
        (
            json!({"action": "set_position", "fen": "8/8/8 w - - 0 1", "reason": "x"}),
            "piece placement",
        ),
        (
            json!({"action": "replace_clock", "to": "board-999", "reason": "x"}),
            "unknown target board",
        ),
    ];
    for (cmd, want) in cases {
        let r = rig.board_command(&b, cmd.clone()).await;
        assert_eq!(r["status"], "error", "{cmd}");
        assert!(
            r["reason"].as_str().unwrap_or("").contains(want),
            "{cmd}: {r}"
        );
    }
    let r = rig
        .board_command("board-404", json!({"action": "pause"}))
        .await;
    assert_eq!(r["error"], "unknown_board");
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 2, "start": now_ms(),
        "pairings": [{"board": "board-001", "white": "A", "black": "B"}]}),
        )
        .await;
    assert_eq!(r["error"], "board_busy", "{r}");
    // Nothing changed: no event was published and the state is the same game.
    let events: Vec<String> = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.ends_with("/event") && m.topic.contains(&b))
        .map(|m| m.json()["event"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(events, ["clock_started"], "only the start happened");
    let after = rig.watcher.latest_state(&b);
    assert_eq!(after["seq"], before["seq"]);
    assert_eq!(after["phase"], "running");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_subscriber_receives_every_retained_state() {
    let mut rig = Rig::start("late", 3).await;
    started(&mut rig, 2, "600", json!({})).await;
    let mut late = Watcher::connect(rig.broker.port, "late-subscriber").await;
    for n in 1..=3 {
        let b = board_id(n);
        let state = late
            .state(&b, &format!("{b} retained state"), |_| true)
            .await;
        let want = if n <= 2 { "running" } else { "idle" };
        assert_eq!(state["phase"], want, "{b}");
    }
    let st = late
        .wait("node status", |m| {
            common::node_state(m, common::NODE).is_some()
        })
        .await;
    assert_eq!(st.json()["state"], "online", "{}", st.text());
    assert!(st.retained);
    let info_topic = rig.topic(&format!("node/{}/info", common::NODE));
    let info = late.wait("info", |m| m.topic == info_topic).await.json();
    assert_eq!(info["boards"].as_array().map(Vec::len), Some(3));
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_restart_republishes_status_info_availability_and_states() {
    let mut rig = Rig::start("restart", 2).await;
    started(&mut rig, 1, "600", json!({})).await;
    rig.broker.restart().await; // a fresh Mosquitto: no retained messages survive
    let mut fresh = Watcher::connect(rig.broker.port, "after-restart").await;
    fresh
        .wait("node status online", |m| {
            common::node_state(m, common::NODE).as_deref() == Some("online")
        })
        .await;
    let info_topic = rig.topic(&format!("node/{}/info", common::NODE));
    fresh.wait("info", |m| m.topic == info_topic).await;
    for n in 1..=2 {
        let b = board_id(n);
        let topic = rig.topic(&format!("board/{b}/availability"));
        fresh
            .wait(&format!("{b} availability"), |m| {
                m.topic == topic && m.text() == "online"
            })
            .await;
        fresh.state(&b, &format!("{b} state"), |_| true).await;
    }
    // Commands work again after the reconnection.
    rig.watcher = fresh;
    let r = rig
        .board_command(
            &board_id(1),
            json!({"action": "pause", "reason": "after restart"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_daemon_publishes_offline() {
    let mut rig = Rig::start("stop", 1).await;
    rig.stop().await;
    rig.watcher
        .wait("node status offline", |m| {
            common::node_state(m, common::NODE).as_deref() == Some("offline")
        })
        .await;
}
