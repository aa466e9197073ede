//! The PGN end to end: the daemon with simulated boards and a real Mosquitto publishes the
//! retained `board/<b>/pgn`; python-chess reads it, replays it to the board's position,
//! and every `[%clk]` is the time the daemon published in that move's `pressed` event.
//! `hallclock pgn --round 1` prints the same text from the journal.

mod common;
mod pychess;

use std::time::Duration;

use common::{HALL, Rig, Watcher, board_id};
use serde_json::{Value, json};

async fn play(rig: &mut Rig, n: usize, uci: &str) {
    rig.sim
        .board(n)
        .play_move(uci)
        .expect("the simulator plays the move");
    // Let the board's field updates reach the daemon before the press.
    tokio::time::sleep(Duration::from_millis(60)).await;
    rig.sim.board(n).press();
}

/// The `remaining_ms` of every `pressed` event published for `board`, in order.
fn pressed_times(w: &mut Watcher, board: &str) -> Vec<i64> {
    let topic = format!("hallclock/{HALL}/board/{board}/event");
    w.drain()
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.json())
        .filter(|e| e["event"] == "pressed")
        .filter_map(|e| e["remaining_ms"].as_i64())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retained_pgn_replays_in_python_chess_with_the_published_clocks() {
    let mut rig = Rig::start("pgn-e2e", 2).await;
    let pairings: Vec<Value> = (1..=2)
        .map(|n| {
            json!({"board": board_id(n), "white": format!("White \"{n}\""), "black": format!("Black {n}"),
                   "white_fide_id": 1000 + n, "black_fide_id": 2000 + n})
        })
        .collect();
    let r = rig
        .start_round(2, "300+2", 0, json!({ "pairings": pairings }))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=2 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    // Board 1: a game to mate (the last move ends it without a press, 6.7a).
    for mv in ["f2f3", "e7e5", "g2g4"] {
        play(&mut rig, 1, mv).await;
        rig.watcher.event(&board_id(1), "pressed").await;
        // Pressed 60 ms after the move, the move is attached after its press (issue 10 §1).
        rig.watcher.event(&board_id(1), "move_made").await;
    }
    rig.sim.board(1).play_move("d8h4").expect("Qh4#");
    rig.watcher.event(&board_id(1), "game_ended").await;
    // Board 2: two moves, still running.
    for mv in ["e2e4", "c7c5"] {
        play(&mut rig, 2, mv).await;
        rig.watcher.event(&board_id(2), "pressed").await;
        // Pressed 60 ms after the move, the move is attached after its press (issue 10 §1).
        rig.watcher.event(&board_id(2), "move_made").await;
    }
    let states = [
        rig.watcher
            .state(&board_id(1), "finished", |s| s["phase"] == "finished")
            .await,
        rig.watcher
            .state(&board_id(2), "after 1...c5 with its move", |s| {
                // A state while the press waits for its move shows the position before
                // it (`move_pending`); the one after the move is attached has 1...c5.
                s["black"]["moves"] == 1 && s["fen"].is_string() && s["move_pending"] == false
            })
            .await,
    ];
    let pressed: Vec<Vec<i64>> = (1..=2)
        .map(|n| pressed_times(&mut rig.watcher, &board_id(n)))
        .collect();

    // A subscriber that comes later gets the retained PGN of each board.
    let mut late = Watcher::connect(rig.broker.port, "pgn-late").await;
    let mut retained: Vec<String> = Vec::new();
    for n in 1..=2 {
        let topic = rig.topic(&format!("board/{}/pgn", board_id(n)));
        let want_moves = [4usize, 2][n - 1];
        let m = late
            .wait(&format!("retained {topic}"), |m| {
                m.topic == topic && m.retained && m.text().matches("[%clk").count() == want_moves
            })
            .await;
        retained.push(m.text());
    }
    for (i, text) in retained.iter().enumerate() {
        let n = i + 1;
        let g = pychess::check_one(text);
        assert_eq!(Some(g.fen.as_str()), states[i]["fen"].as_str(), "board {n}");
        assert_eq!(g.tags["Round"], format!("1.{n}"));
        assert_eq!(g.tags["Board"], n.to_string());
        assert_eq!(g.tags["WhiteFideId"], (1000 + n).to_string());
        let clocks: Vec<Option<f64>> = g.moves.iter().map(|m| m.clk).collect();
        let mut want: Vec<Option<f64>> = pressed[i]
            .iter()
            .map(|ms| Some(pychess::secs(*ms)))
            .collect();
        if n == 1 {
            assert_eq!(g.tags["Result"], "0-1");
            assert_eq!(g.tags["Termination"], "Normal");
            assert_eq!(g.moves.last().map(|m| m.san.as_str()), Some("Qh4#"));
            // The mate has no press: Black's clock as the end stopped it (the final state).
            let black = states[0]["black"]["remaining_ms"].as_i64().expect("black");
            want.push(Some(pychess::secs(black)));
        } else {
            assert_eq!(g.tags["Result"], "*");
        }
        assert_eq!(
            clocks, want,
            "board {n}: %clk = the published pressed times"
        );
    }

    // After a restart the daemon publishes each board's PGN again, rebuilt from the
    // journal: the whole game, not an empty one.
    rig.watcher.drain();
    for m in rig.watcher.seen.iter_mut() {
        m.used = true;
    }
    rig.restart_daemon().await;
    for (i, text) in retained.iter().enumerate() {
        let topic = rig.topic(&format!("board/{}/pgn", board_id(i + 1)));
        let again = rig
            .watcher
            .wait(&format!("{topic} after the restart"), |m| m.topic == topic)
            .await
            .text();
        assert_eq!(&again, text, "board {}: the PGN after the restart", i + 1);
    }

    // The journal gives the same text, in board order.
    rig.stop().await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["pgn", "--round", "1", "--state-dir"])
        .arg(&rig.settings.state_dir)
        .output()
        .expect("hallclock pgn runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed, format!("{}\n{}", retained[0], retained[1]));
    let one = std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["pgn", "--round", "1", "--board", "board-002", "--state-dir"])
        .arg(&rig.settings.state_dir)
        .output()
        .expect("hallclock pgn runs");
    assert_eq!(String::from_utf8_lossy(&one.stdout), retained[1]);
    let none = std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["pgn", "--round", "7", "--state-dir"])
        .arg(&rig.settings.state_dir)
        .output()
        .expect("hallclock pgn runs");
    assert!(!none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no game of round 7"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}
