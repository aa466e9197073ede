//! The clock's low battery, end to end (FIDE C.02 (f), C.02.03 3.1.1–3.1.2): the simulator's
//! clock sets status bit D2 on a real pty, the daemon raises the retained `low_battery`
//! alert on a real Mosquitto, at set-up as well as during a game, and clears it when the
//! batteries are changed; across a restart and an unplugged board as the other hardware
//! alerts.

mod common;

use std::time::Duration;

use common::{Rig, board_id};
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};

fn message(board: &str) -> String {
    format!(
        "{board}: the clock's battery is low: change it before the next round (FIDE C.02: at least 10 h remain after the warning)"
    )
}

fn topic(rig: &Rig, board: &str) -> String {
    rig.topic(&format!("alert/{board}-low-battery"))
}

/// A rig whose board 1's clock is low on battery before the daemon starts.
async fn low_at_start(name: &str, boards: usize) -> Rig {
    Rig::start_prepared(
        name,
        boards,
        GameDefaults::default(),
        |_| {},
        |sim| sim.board(1).battery_low(true),
        |_| {},
    )
    .await
}

/// Waits for the low-battery alert of `board` and checks what it says.
async fn raised(rig: &mut Rig, board: &str) -> Value {
    let t = topic(rig, board);
    let alert = rig
        .watcher
        .wait(&format!("low_battery on {board}"), |m| {
            m.topic == t && m.raised()
        })
        .await;
    let a = alert.json();
    assert_eq!(a["kind"], "low_battery", "{a}");
    assert_eq!(a["severity"], "warning", "{a}");
    assert_eq!(a["board"], board, "{a}");
    assert_eq!(a["id"], format!("{board}-low-battery"), "{a}");
    assert_eq!(a["message"], message(board), "{a}");
    a
}

async fn cleared(rig: &mut Rig, board: &str) {
    let t = topic(rig, board);
    rig.watcher
        .wait(&format!("low_battery on {board} cleared"), |m| {
            m.topic == t && m.cleared()
        })
        .await;
}

/// The newest message on each alert topic, those that stand.
fn standing(rig: &mut Rig) -> Vec<Value> {
    let prefix = format!("hallclock/{}/alert/", common::HALL);
    let mut latest: std::collections::BTreeMap<String, Vec<u8>> = Default::default();
    for m in rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.starts_with(&prefix))
    {
        latest.insert(m.topic.clone(), m.payload.clone());
    }
    latest
        .values()
        .filter(|p| !p.is_empty())
        .filter_map(|p| serde_json::from_slice::<Value>(p).ok())
        .collect()
}

/// No message on `board`'s low-battery topic clears it for `quiet`.
async fn stays(rig: &mut Rig, board: &str, quiet: Duration) {
    tokio::time::sleep(quiet).await;
    let t = topic(rig, board);
    let last = rig
        .watcher
        .drain()
        .iter()
        .rev()
        .find(|m| m.topic == t)
        .map(|m| m.payload.clone());
    assert!(
        last.is_some_and(|p| !p.is_empty()),
        "the low_battery alert of {board} still stands"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_low_before_the_daemon_starts_is_alerted_at_set_up_and_cleared_by_new_batteries() {
    let mut rig = low_at_start("battery-setup", 2).await;
    // No round, no command: the first reading after set-up is the warning (3.1.2).
    raised(&mut rig, &board_id(1)).await;
    // The other board's clock is fine: nothing for it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let others: Vec<Value> = standing(&mut rig)
        .into_iter()
        .filter(|a| a["kind"] == "low_battery" && a["board"] != board_id(1).as_str())
        .collect();
    assert!(others.is_empty(), "{others:?}");
    rig.sim.board(1).battery_low(false);
    cleared(&mut rig, &board_id(1)).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_battery_running_low_during_a_game_is_alerted_and_the_game_goes_on() {
    let mut rig = Rig::start("battery-game", 1).await;
    let b = board_id(1);
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "clock_started").await;
    let game = ["e2e4", "e7e5", "g1f3", "b8c6"];
    for (ply, mv) in game.iter().enumerate() {
        if ply == 1 {
            rig.sim.board(1).battery_low(true);
            raised(&mut rig, &b).await;
        }
        rig.sim
            .board(1)
            .play_move(mv)
            .expect("the simulator plays it");
        tokio::time::sleep(Duration::from_millis(150)).await;
        rig.sim.board(1).press();
        rig.watcher
            .wait(&format!("press {}", ply + 1), |m| {
                m.topic.ends_with(&format!("{b}/event"))
                    && m.json()["event"] == "pressed"
                    && m.json()["side"] == if ply % 2 == 0 { "white" } else { "black" }
                    && m.json()["moves"].as_u64() == Some(ply as u64 / 2 + 1)
            })
            .await;
    }
    // The game is untouched: every move recorded, the clock running, nothing else raised.
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let s = rig
        .watcher
        .state(&b, "the game after 4 plies", |s| s["fen"] == fen)
        .await;
    assert_eq!(s["phase"], "running", "{s}");
    assert_eq!(s["running"], "white", "{s}");
    let made: Vec<String> = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.ends_with(&format!("{b}/event")))
        .map(|m| m.json())
        .filter(|e| e["event"] == "move_made")
        .filter_map(|e| e["uci"].as_str().map(String::from))
        .collect();
    assert_eq!(made, game);
    let kinds: Vec<Value> = standing(&mut rig)
        .into_iter()
        .map(|a| a["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [json!("low_battery")],
        "only the battery alert stands"
    );
    rig.sim.board(1).battery_low(false);
    cleared(&mut rig, &b).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_battery_alert_stands_across_a_restart_and_one_left_by_an_earlier_run_is_cleared() {
    let mut rig = low_at_start("battery-restart", 1).await;
    let b = board_id(1);
    raised(&mut rig, &b).await;
    // Still low after a restart: the retained alert is not cleared (taken over or raised
    // again with the same words).
    rig.restart_daemon().await;
    stays(&mut rig, &b, Duration::from_millis(1500)).await;
    // The batteries are changed while the daemon is down: the alert the earlier run left
    // on the broker is stale, and cleared at the first reading.
    rig.stop().await;
    rig.sim.board(1).battery_low(false);
    rig.restart_daemon().await;
    cleared(&mut rig, &b).await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplugged_board_keeps_its_low_battery_alert_until_its_clock_is_read_again() {
    let mut rig = low_at_start("battery-offline", 1).await;
    let b = board_id(1);
    raised(&mut rig, &b).await;
    rig.sim.board(1).unplug().await.expect("unplug");
    let offline = rig.topic(&format!("alert/{b}-offline"));
    rig.watcher
        .wait("offline alert", |m| m.topic == offline && m.raised())
        .await;
    // Unread is not fine: the alert stands while the board is away.
    stays(&mut rig, &b, Duration::from_millis(500)).await;
    rig.sim.board(1).battery_low(false);
    rig.sim.board(1).replug().await.expect("replug");
    cleared(&mut rig, &b).await;
    rig.stop().await;
}
