//! Observe mode (issue 24) end to end: the simulator's hand-set clocks (set with the
//! `setclock` control, the arbiter's buttons; they run by themselves and switch at the
//! lever), the daemon in-process, a real Mosquitto. An observed board is never sent a
//! clock command, takes the clock's times as official, publishes what a controlled board
//! publishes with `observed: true`, and says in words what does not add up.

mod common;

use std::time::Duration;

use common::{Rig, board_id, now_ms};
use hallclock::config::BoardMode;
use hallclock::hall::GameDefaults;
use hallclock::sim::Run;
use serde_json::{Value, json};

/// Every clock sub-command id but 0x09, the version query the link sends once at the
/// handshake: it changes nothing on the clock (no time, text, beep or run).
const CLOCK_COMMANDS: [u8; 12] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0a, 0x0b, 0x0c,
];

fn clock_commands(rig: &Rig, n: usize) -> u32 {
    CLOCK_COMMANDS
        .iter()
        .map(|c| rig.sim.board(n).clock_commands_received(*c))
        .sum()
}

/// Boards 1..=`observed` observed, the rest controlled; every simulated clock refuses
/// SETNRUN only if `hand_set_only` (a clock out of computer mode, as halls set them).
async fn rig(name: &str, boards: usize, observed: usize) -> Rig {
    Rig::start_sim(
        name,
        boards,
        GameDefaults::default(),
        |_| {},
        |s| {
            for b in s.boards.iter_mut().take(observed) {
                b.mode = BoardMode::Observe;
            }
        },
    )
    .await
}

/// The arbiter sets board 1's clock by hand (`secs` each, `inc` per move, White on the
/// left running) just before the round's start, then the round starts: the clock never
/// stands at 0:00 or stopped while the game runs.
async fn hand_set_round(rig: &mut Rig, tc: &str, secs: u64, inc: u64) {
    rig.sim.board(1).set_clock(
        Duration::from_secs(secs),
        Duration::from_secs(secs),
        Duration::from_secs(inc),
        Run::Left,
    );
    round(rig, 1, tc).await;
}

async fn round(rig: &mut Rig, boards: usize, tc: &str) {
    let r = rig.start_round(boards, tc, 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=boards {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
}

/// The active alerts of `kind` for `board` (newest message on each alert topic).
fn alert(rig: &mut Rig, board: &str, slug: &str) -> Option<Value> {
    let topic = rig.topic(&format!("alert/{board}-{slug}"));
    rig.watcher
        .drain()
        .iter()
        .rev()
        .find(|m| m.topic == topic)
        .filter(|m| m.raised())
        .map(|m| m.json())
}

async fn wait_alert(rig: &mut Rig, board: &str, slug: &str) -> Value {
    let topic = rig.topic(&format!("alert/{board}-{slug}"));
    rig.watcher
        .wait(&format!("alert {slug} on {board}"), |m| {
            m.topic == topic && m.raised()
        })
        .await
        .json()
}

/// Play `mv` on board `n` and press; wait until the press is published.
async fn play(rig: &mut Rig, n: usize, mv: &str, ply: usize) {
    let b = board_id(n);
    rig.sim
        .board(n)
        .play_move(mv)
        .expect("the simulator plays it");
    // The move is read before the press (no owed move): the board scans every 20 ms.
    tokio::time::sleep(Duration::from_millis(250)).await;
    rig.sim.board(n).press();
    rig.watcher
        .wait(&format!("press {} on {b}", ply + 1), |m| {
            m.topic.ends_with(&format!("{b}/event"))
                && m.json()["event"] == "pressed"
                && m.json()["moves"].as_u64() == Some(ply as u64 / 2 + 1)
        })
        .await;
}

fn event_kinds(rig: &mut Rig, board: &str) -> Vec<String> {
    let topic = rig.topic(&format!("board/{board}/event"));
    rig.watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic)
        .filter_map(|m| m.json()["event"].as_str().map(String::from))
        .collect()
}

fn latest(rig: &mut Rig, rest: &str) -> String {
    let topic = rig.topic(rest);
    rig.watcher
        .drain()
        .iter()
        .rev()
        .find(|m| m.topic == topic)
        .map(|m| m.text())
        .unwrap_or_default()
}

const GAME: [&str; 6] = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observed_board_plays_like_a_controlled_one_and_its_clock_is_never_commanded() {
    let mut rig = rig("observe-round", 2, 1).await;
    // The arbiter sets board 1's clock by hand, as the round's control says, and starts
    // it at the round's start (White, on the left, runs).
    rig.sim.board(1).set_clock(
        Duration::from_secs(303),
        Duration::from_secs(303),
        Duration::from_secs(3),
        Run::Left,
    );
    round(&mut rig, 2, "300+3").await;
    for (ply, mv) in GAME.iter().enumerate() {
        for n in 1..=2 {
            play(&mut rig, n, mv, ply).await;
        }
    }
    let (observed, controlled) = (board_id(1), board_id(2));
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let s1 = rig
        .watcher
        .state(&observed, "the observed board's position", |s| {
            s["fen"] == fen
        })
        .await;
    let s2 = rig
        .watcher
        .state(&controlled, "the controlled board's position", |s| {
            s["fen"] == fen
        })
        .await;
    assert_eq!(s1["observed"], true, "{s1}");
    assert_eq!(s2.get("observed"), None, "{s2}");
    // The same state but for the flag and the times.
    let keys = |s: &Value| -> Vec<String> {
        let mut k: Vec<String> = s
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        k.retain(|k| k != "observed");
        k
    };
    assert_eq!(keys(&s1), keys(&s2));
    assert_eq!(s1["phase"], "running");
    // The official times are the clock's: Black's (standing, on the right) within the
    // display's second and a frame.
    let shown = rig.sim.board(1).clock_display();
    let black_ms = s1["black"]["remaining_ms"].as_i64().unwrap_or(-1);
    let clock_black =
        i64::from(shown.right.minutes) * 60_000 + i64::from(shown.right.seconds) * 1000;
    assert!(
        (black_ms - clock_black).abs() <= 1_500,
        "the state's {black_ms} ms against the clock's {shown}"
    );
    // The same events, but the clock's times taken where they differed (a press may
    // come before or after its move is read, on either board: compared as sets).
    let mut k1 = event_kinds(&mut rig, &observed);
    k1.retain(|k| k != "clock_times_adopted");
    k1.sort();
    let mut k2 = event_kinds(&mut rig, &controlled);
    k2.sort();
    assert_eq!(k1, k2);
    // The PGN has the moves and the clock times.
    let pgn = latest(&mut rig, &format!("board/{observed}/pgn"));
    let mut movetext = String::new();
    let mut depth = 0;
    for c in pgn.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => movetext.push(c),
            _ => {}
        }
    }
    let movetext = movetext.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        movetext.contains("1. e4 1... e5 2. Nf3 2... Nc6 3. Bc4 3... Nf6 *"),
        "{movetext}"
    );
    assert_eq!(pgn.matches("[%clk ").count(), 6, "{pgn}");
    // Not one clock command: no times, no text, no beep, no SETNRUN.
    assert_eq!(
        clock_commands(&rig, 1),
        0,
        "the observed clock was commanded"
    );
    assert!(
        clock_commands(&rig, 2) > 0,
        "the controlled clock was driven"
    );
    // A clock set right raises nothing.
    for slug in [
        "clock-increment",
        "clock-jump",
        "clock-presses",
        "clock-flag",
    ] {
        assert_eq!(alert(&mut rig, &observed, slug), None, "{slug}");
    }
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_set_clock_with_the_wrong_increment_is_an_alert_in_words() {
    let mut rig = rig("observe-increment", 1, 1).await;
    // The arbiter typed 5:30 +0 where the round says 5:00 +30 (30 s before move 1).
    hand_set_round(&mut rig, "300+30", 330, 0).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    play(&mut rig, 1, "e2e4", 0).await;
    let a = wait_alert(&mut rig, &board_id(1), "clock-increment").await;
    assert_eq!(
        a["message"], "board board-001: the clock adds 0 s per move, the round's control adds 30 s",
        "{a}"
    );
    // The clock's time is the official one: White has no increment (the reckoning's
    // 5:58 is on record in the event, not in the state).
    let adopted = rig.watcher.event(&board_id(1), "clock_times_adopted").await;
    assert!(
        adopted["reckoned_white_ms"].as_i64() > adopted["white_ms"].as_i64(),
        "{adopted}"
    );
    rig.watcher
        .state(&board_id(1), "White's time without the increment", |s| {
            s["white"]["moves"] == 1
                && s["white"]["remaining_ms"]
                    .as_i64()
                    .is_some_and(|w| (325_000..=330_000).contains(&w))
        })
        .await;
    assert_eq!(clock_commands(&rig, 1), 0);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_on_the_hand_set_clock_is_a_6_9_verdict_the_arbiter_confirms() {
    let mut rig = rig("observe-flag", 1, 1).await;
    hand_set_round(&mut rig, "300", 300, 0).await;
    play(&mut rig, 1, "e2e4", 0).await;
    // Black's clock was set wrong mid-game: 3 seconds left (the arbiter's buttons).
    let shown = rig.sim.board(1).clock_display();
    let white_left = u64::from(shown.left.minutes) * 60 + u64::from(shown.left.seconds);
    rig.sim.board(1).set_clock(
        Duration::from_secs(white_left),
        Duration::from_secs(3),
        Duration::ZERO,
        Run::Right,
    );
    let b = board_id(1);
    rig.watcher.event(&b, "flag_fell").await;
    let pending = rig.watcher.event(&b, "result_pending").await;
    assert_eq!(pending["side"], "black", "{pending}");
    let a = wait_alert(&mut rig, &b, "clock-flag").await;
    let message = a["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the clock shows black's flag")
            && message.contains("confirm_flag records 1-0")
            && message.contains("waits for the arbiter's confirmation"),
        "{a}"
    );
    // Nothing decided until the arbiter confirms.
    let s = rig.watcher.latest_state(&b);
    assert_eq!(s["result"], Value::Null, "{s}");
    let r = rig
        .board_command(&b, json!({"action": "confirm_flag"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "1-0", "{ended}");
    assert_eq!(clock_commands(&rig, 1), 0);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_set_clock_that_jumps_or_stops_is_an_alert() {
    let mut rig = rig("observe-jump", 1, 1).await;
    hand_set_round(&mut rig, "300", 300, 0).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let b = board_id(1);
    // Someone sets Black's clock up by a minute, without a press.
    let shown = rig.sim.board(1).clock_display();
    let white_left = u64::from(shown.left.minutes) * 60 + u64::from(shown.left.seconds);
    rig.sim.board(1).set_clock(
        Duration::from_secs(white_left),
        Duration::from_secs(360),
        Duration::ZERO,
        Run::Left,
    );
    let a = wait_alert(&mut rig, &b, "clock-jump").await;
    assert!(
        a["message"]
            .as_str()
            .unwrap_or_default()
            .contains("black went up from 0:05:00 to 0:06:00 without a press"),
        "{a}"
    );
    // And it is taken as official.
    rig.watcher
        .state(&b, "Black's 6 minutes", |s| {
            s["black"]["remaining_ms"].as_i64() == Some(360_000)
        })
        .await;
    // Then the clock is stopped by hand.
    rig.sim.board(1).set_clock(
        Duration::from_secs(white_left.saturating_sub(5)),
        Duration::from_secs(360),
        Duration::ZERO,
        Run::Paused,
    );
    let a = wait_alert(&mut rig, &b, "clock-stopped").await;
    assert!(
        a["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the clock is not running while the game is"),
        "{a}"
    );
    // The game stands still with the clock (the reckoning does not run on), in the
    // clock's name, and goes on when the clock runs again.
    let paused = rig.watcher.event(&b, "paused").await;
    assert_eq!(paused["arbiter"], "the hand-set clock", "{paused}");
    let shown = rig.sim.board(1).clock_display();
    let white_left = u64::from(shown.left.minutes) * 60 + u64::from(shown.left.seconds);
    rig.sim.board(1).set_clock(
        Duration::from_secs(white_left),
        Duration::from_secs(360),
        Duration::ZERO,
        Run::Left,
    );
    let resumed = rig.watcher.event(&b, "resumed").await;
    assert_eq!(resumed["arbiter"], "the hand-set clock", "{resumed}");
    rig.watcher
        .wait("the clock-stopped alert cleared", |m| {
            m.topic.ends_with(&format!("alert/{b}-clock-stopped")) && m.cleared()
        })
        .await;
    assert_eq!(clock_commands(&rig, 1), 0);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presses_the_board_does_not_explain_are_an_alert() {
    let mut rig = rig("observe-presses", 1, 1).await;
    hand_set_round(&mut rig, "300", 300, 0).await;
    play(&mut rig, 1, "e2e4", 0).await;
    // Black presses twice without a move on the board (a knock, a slip).
    let b = board_id(1);
    for moves in [1u64, 2] {
        rig.sim.board(1).press();
        rig.watcher
            .wait(&format!("press {moves}"), |m| {
                m.topic.ends_with(&format!("{b}/event"))
                    && m.json()["event"] == "pressed"
                    && m.json()["side"] == if moves == 1 { "black" } else { "white" }
            })
            .await;
    }
    let a = wait_alert(&mut rig, &b, "clock-presses").await;
    assert_eq!(
        a["message"], "board board-001: the clock was pressed 3 times, the board shows 1 moves",
        "{a}"
    );
    let _ = now_ms();
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_is_switched_between_games_and_refused_during_one() {
    let mut rig = rig("observe-switch", 1, 0).await;
    let b = board_id(1);
    round(&mut rig, 1, "300").await;
    play(&mut rig, 1, "e2e4", 0).await;
    let r = rig
        .board_command(&b, json!({"action": "set_mode", "mode": "observe"}))
        .await;
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(r["error"], "board_busy", "{r}");
    assert_eq!(
        r["reason"], "board board-001 has an unfinished game (round 1); finish it first",
        "{r}"
    );
    assert_eq!(rig.watcher.latest_state(&b).get("observed"), None);
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_result", "result": "agreed_draw", "reason": "agreed"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "game_ended").await;
    let r = rig
        .board_command(&b, json!({"action": "set_mode", "mode": "observe"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher
        .state(&b, "observed after the switch", |s| s["observed"] == true)
        .await;
    // The next game is observed: its clock is never commanded. The pieces go back.
    rig.sim
        .board(1)
        .play_move("e4e2")
        .expect("the pawn goes back");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = clock_commands(&rig, 1);
    rig.sim.board(1).set_clock(
        Duration::from_secs(300),
        Duration::from_secs(300),
        Duration::ZERO,
        Run::Paused,
    );
    let r = rig
        .hall_command(json!({
            "action": "start_round", "round": 2, "time_control": "300",
            "start": now_ms(), "pairings": [{"board": b, "white": "W", "black": "B"}],
        }))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "clock_started").await;
    rig.sim.board(1).set_clock(
        Duration::from_secs(300),
        Duration::from_secs(300),
        Duration::ZERO,
        Run::Left,
    );
    play(&mut rig, 1, "e2e4", 0).await;
    rig.watcher
        .state(&b, "round 2 observed", |s| {
            s["round"] == 2 && s["observed"] == true && s["white"]["moves"] == 1
        })
        .await;
    assert_eq!(
        clock_commands(&rig, 1),
        before,
        "the observed clock was commanded"
    );
    // And back to control between games.
    let r = rig
        .board_command(&b, json!({"action": "set_mode", "mode": "control"}))
        .await;
    assert_eq!(r["error"], "board_busy", "{r}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_6_6_on_an_observed_board_default_time_runs_from_the_rounds_start_and_the_first_press_is_presence()
 {
    let defaults = GameDefaults {
        default_time: hallclock::rules::Millis::from_secs(3),
        ..GameDefaults::default()
    };
    let mut rig = Rig::start_sim(
        "observe-default",
        1,
        defaults,
        |_| {},
        |s| {
            s.boards[0].mode = BoardMode::Observe;
        },
    )
    .await;
    let b = board_id(1);
    hand_set_round(&mut rig, "300", 300, 0).await;
    // White's first press is White's presence; Black never comes.
    play(&mut rig, 1, "e2e4", 0).await;
    let present = rig.watcher.event(&b, "player_present").await;
    assert_eq!(present["side"], "white", "{present}");
    let passed = rig.watcher.event(&b, "default_time_passed").await;
    assert_eq!(passed["absent"], json!(["black"]), "{passed}");
    let ended = rig.watcher.event(&b, "game_ended").await;
    assert_eq!(ended["score"], "1-0", "{ended}");
    assert_eq!(clock_commands(&rig, 1), 0);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blitz_presses_before_the_board_reports_their_moves_are_no_alert() {
    // Boards that scan like real ones: the press overtakes the move's report.
    let mut rig = Rig::start_sim(
        "observe-blitz",
        1,
        GameDefaults::default(),
        |sim| {
            sim.scan_interval = Duration::from_millis(100);
            sim.scan_jitter = Duration::from_millis(20);
        },
        |s| s.boards[0].mode = BoardMode::Observe,
    )
    .await;
    hand_set_round(&mut rig, "300", 300, 0).await;
    let b = board_id(1);
    let board = rig.sim.board(1);
    for mv in ["e2e4", "e7e5", "g1f3", "b8c6"] {
        board.play_move(mv).expect("the simulator plays it");
        board.press();
    }
    rig.watcher
        .state(&b, "all four moves read", |s| {
            s["fen"] == "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        })
        .await;
    // Longer than the presses may wait for their moves.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(alert(&mut rig, &b, "clock-presses"), None);
    assert_eq!(alert(&mut rig, &b, "clock-jump"), None);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_observed_game_stays_observed_across_a_restart_whatever_the_configuration_says()
 {
    let mut rig = rig("observe-restart", 1, 1).await;
    let b = board_id(1);
    hand_set_round(&mut rig, "300", 300, 0).await;
    play(&mut rig, 1, "e2e4", 0).await;
    // The configuration now says control; the game was started observed.
    rig.settings.boards[0].mode = BoardMode::Control;
    rig.restart_daemon().await;
    rig.watcher
        .state(&b, "the game observed after the restart", |s| {
            s["observed"] == true && s["white"]["moves"] == 1 && s["online"] == true
        })
        .await;
    play(&mut rig, 1, "e7e5", 1).await;
    // Still never commanded, before or after the restart.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(clock_commands(&rig, 1), 0);
    let pgn = latest(&mut rig, &format!("board/{b}/pgn"));
    assert!(pgn.contains("[ClockMode \"observe\"]"), "{pgn}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_not_yet_set_at_the_start_is_stopped_not_flagged_and_the_game_waits_for_it() {
    let mut rig = rig("observe-unset", 1, 1).await;
    let b = board_id(1);
    // The simulated clock powers up at 0:00 on both sides, stopped: nobody set it.
    round(&mut rig, 1, "300").await;
    let a = wait_alert(&mut rig, &b, "clock-stopped").await;
    assert!(
        a["message"]
            .as_str()
            .unwrap_or_default()
            .contains("it stands at White 0:00:00, Black 0:00:00"),
        "{a}"
    );
    let paused = rig.watcher.event(&b, "paused").await;
    assert_eq!(paused["arbiter"], "the hand-set clock", "{paused}");
    // The arbiter sets it and starts it: the game goes on from the clock's times.
    rig.sim.board(1).set_clock(
        Duration::from_secs(300),
        Duration::from_secs(300),
        Duration::ZERO,
        Run::Left,
    );
    rig.watcher.event(&b, "resumed").await;
    play(&mut rig, 1, "e2e4", 0).await;
    let kinds = event_kinds(&mut rig, &b);
    assert!(!kinds.iter().any(|k| k == "flag_fell"), "{kinds:?}");
    assert_eq!(alert(&mut rig, &b, "clock-flag"), None);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_configuration_switches_the_mode_between_games_only() {
    let mut rig = rig("observe-reload", 1, 0).await;
    let b = board_id(1);
    let mut boards = rig.settings.boards.clone();
    boards[0].mode = BoardMode::Observe;
    let defaults = rig.settings.defaults.clone();
    round(&mut rig, 1, "300").await;
    let hall = rig.hall.as_ref().expect("the daemon runs");
    let said = hall.reload(boards.clone(), defaults.clone()).await;
    assert!(
        said.iter()
            .any(|l| l.starts_with("board board-001: mode kept as it was")
                && l.contains("unfinished game")),
        "{said:?}"
    );
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_result", "result": "agreed_draw", "reason": "agreed"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let hall = rig.hall.as_ref().expect("the daemon runs");
    let said = hall.reload(boards, defaults).await;
    assert!(
        said.iter().any(|l| l == "board board-001: mode observe"),
        "{said:?}"
    );
    rig.watcher
        .state(&b, "observed after the reload", |s| s["observed"] == true)
        .await;
    rig.stop().await;
}
