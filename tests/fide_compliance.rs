//! The FIDE clock standards (Handbook C.02 (a)–(l), C.02.03 3.1.x) that are the software's
//! and that no other test proved: each test is named in docs/FIDE-COMPLIANCE.md. A real
//! Mosquitto, the simulated boards on pseudo-terminals, the daemon, and for (j) the
//! `hallclock command` binary and the dashboard over plain HTTP.
//!
//! The (j) tests measure and print how long a correction takes to reach the clock display;
//! they assert only what the display shows, never a duration (tests never fail on timing).
//! The numbers are recorded in docs/BENCHMARKS.md.

mod common;
mod webcommon;

use std::time::{Duration, Instant};

use common::{Rig, board_id, clock_until, key_of};
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Button, Hms};
use hallclock::web::AppState;
use serde_json::json;

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

fn secs(hms: Hms) -> u32 {
    u32::from(hms.hours) * 3600 + u32::from(hms.minutes) * 60 + u32::from(hms.seconds)
}

/// Poll the simulated clock until its display says `want` (e.g. "right 0:20:34"), or
/// give up after `common::WAIT`: (what it showed last, when it first showed `want`).
async fn display_until(rig: &Rig, n: usize, want: &str) -> (String, Option<Instant>) {
    let give_up = Instant::now() + common::WAIT;
    let mut shown = String::new();
    while Instant::now() < give_up {
        shown = rig.sim.board(n).clock_display().to_string();
        if shown.contains(want) {
            return (shown, Some(Instant::now()));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    (shown, None)
}

/// (e), (h), 6.11: White passes the first control, then Black. Each passage is announced
/// (`period_advanced`, with its instant), the state shows who is in the next period
/// while only one is, and the clock display shows the time the control added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fide_e_h_passing_a_control_is_announced_and_the_state_shows_who_passed_first() {
    let mut rig = Rig::start("fide-control", 1).await;
    // Two moves in 10 minutes, then 5 minutes for the rest of the game.
    let r = rig.start_round(1, "2/600:300", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    rig.watcher.event(&b, "clock_started").await;
    for mv in ["e2e4", "e7e5", "g1f3"] {
        play(&mut rig, 1, mv).await;
        rig.watcher.event(&b, "pressed").await;
    }
    // White's second press (the third above) passed the control first.
    let white = rig.watcher.event(&b, "period_advanced").await;
    assert_eq!(
        (white["side"].as_str(), white["period"].as_u64()),
        (Some("white"), Some(2)),
        "{white}"
    );
    assert_eq!(white["added_ms"], 300_000, "{white}");
    // (e) on the clock: White (left) shows period 2, Black period 1 (ICONS).
    clock_until(&rig.sim, 1, "period signs 2 | 1", |v| {
        v.icons
            .is_some_and(|i| (i.left_period, i.right_period) == (2, 1) && !i.left_flag)
    })
    .await;
    play(&mut rig, 1, "b8c6").await;
    let black = rig
        .watcher
        .wait("black's period_advanced", |m| {
            m.json()["event"] == "period_advanced" && m.json()["side"] == "black"
        })
        .await
        .json();
    assert!(
        white["at"].as_i64() < black["at"].as_i64(),
        "the events say who passed first: {white} {black}"
    );
    // While only White had passed, the state said so.
    let topic = rig.topic(&format!("board/{b}/state"));
    let white_first = rig.watcher.drain().iter().any(|m| {
        let s = m.json();
        m.topic == topic && s["white"]["period"] == 2 && s["black"]["period"] == 1
    });
    assert!(white_first, "a state with White in period 2, Black in 1");
    let s = rig
        .watcher
        .state(&b, "both in period 2", |s| {
            s["white"]["period"] == 2 && s["black"]["period"] == 2
        })
        .await;
    assert_eq!(s["running"], "white", "{s}");
    // C.02.03 3.1.5: hallclock itself never sounds the clock (no beep command, texts
    // without their beep byte), so there is no alarm of ours to switch off.
    assert_eq!(rig.sim.board(1).clock_display().beeps, 0);
    // The clock shows the added time: each side has 10 min + 5 min less what its two
    // moves cost (a few seconds at most), White (left) runs.
    clock_until(&rig.sim, 1, "period signs 2 | 2", |v| {
        v.icons
            .is_some_and(|i| (i.left_period, i.right_period) == (2, 2))
    })
    .await;
    let (shown, _) = display_until(&rig, 1, "(left runs)").await;
    let v = rig.sim.board(1).clock_display();
    for (side, hms) in [("left", v.left), ("right", v.right)] {
        assert!(
            (14 * 60..=15 * 60).contains(&secs(hms)),
            "{side} shows {hms}, not 10:00 + 5:00 less two moves: {shown}"
        );
    }
    rig.stop().await;
}

/// (k): the DGT3000's front buttons other than run/pause, pressed during a game, change
/// neither the official times nor what the clock shows (the daemon programs the clock,
/// the buttons only report presses); the sequence pressed is reported to the arbiter
/// (`clock_buttons`), and a new game clears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fide_k_front_buttons_during_a_game_change_no_time_and_no_state() {
    let mut rig = Rig::start("fide-buttons", 1).await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    rig.watcher.event(&b, "clock_started").await;
    play(&mut rig, 1, "e2e4").await;
    rig.watcher.event(&b, "pressed").await;
    let before = rig
        .watcher
        .state(&b, "black to move", |s| s["running"] == "black")
        .await;
    // Let the press's own messages arrive; only what comes after the buttons counts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mark = rig.watcher.drain().len();
    let shown_before = rig.sim.board(1).clock_display();
    for button in [
        Button::Plus,
        Button::Minus,
        Button::Back,
        Button::Ok,
        Button::Plus,
    ] {
        rig.sim.board(1).button(button);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    // Let anything the buttons could cause arrive, then look.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let topic = rig.topic(&format!("board/{b}/event"));
    let events: Vec<String> = rig.watcher.drain()[mark..]
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.text())
        .collect();
    assert!(events.is_empty(), "no event: {events:?}");
    let now = rig.watcher.latest_state(&b);
    for side in ["white", "black"] {
        assert_eq!(now[side]["moves"], before[side]["moves"], "{now}");
        assert_eq!(now[side]["period"], before[side]["period"], "{now}");
    }
    assert_eq!(now["running"], "black", "{now}");
    assert_eq!(now["phase"], "running", "{now}");
    // White's stopped clock (left) shows what it showed, Black's (right) ran on from it.
    let shown = rig.sim.board(1).clock_display();
    assert_eq!(shown.left, shown_before.left, "{shown_before} then {shown}");
    assert!(
        secs(shown.right) <= secs(shown_before.right),
        "{shown_before} then {shown}"
    );
    assert!(shown.to_string().contains("(right runs)"), "{shown}");
    // Reported, in order: someone is handling the clock.
    let alert_topic = rig.topic(&format!("alert/{b}-clock-buttons"));
    let alert = rig
        .watcher
        .wait("the clock_buttons alert with the whole sequence", |m| {
            m.topic == alert_topic && m.text().contains("plus, minus, back, OK, plus")
        })
        .await
        .json();
    assert_eq!(alert["kind"], "clock_buttons", "{alert}");
    assert_eq!(alert["severity"], "warning", "{alert}");
    // It stands while the game goes on; a new game on the board ends it.
    let r = rig
        .board_command(
            &b,
            json!({"action": "set_result", "result": "1-0", "reason": "test"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let r = rig.start_round(1, "600", 0, json!({"round": 2})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher
        .wait("clock_buttons cleared by the new game", |m| {
            m.topic == alert_topic && m.cleared()
        })
        .await;
    rig.stop().await;
}

/// (j), measured: a signed `hallclock command` (`set_time`, over MQTT) until the simulated
/// clock shows the corrected time. Prints the latency; asserts the displayed time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fide_j_a_time_correction_from_hallclock_command_reaches_the_clock_display() {
    let mut rig = Rig::start("fide-j-cli", 1).await;
    let r = rig.start_round(1, "5400", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    rig.watcher.event(&b, "clock_started").await;
    let dir = scratch_dir("fide-j-cli-keys");
    let key = dir.join("chief.key");
    std::fs::write(&key, format!("{}\n", key_of("chief").to_hex())).expect("write the key");
    let broker = format!("127.0.0.1:{}", rig.broker.port);
    // Black's clock (right) stands while White thinks: the corrected time stays exact.
    let command = r#"{"action": "set_time", "side": "black", "remaining_ms": 1234000, "reason": "FIDE (j) measurement"}"#;
    let sent = Instant::now();
    let cli = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"))
            .args([
                "command",
                "--hall",
                common::HALL,
                "--board",
                "board-001",
                "--arbiter",
                "chief",
                "--key-file",
                &key.display().to_string(),
                "--broker",
                &broker,
                command,
            ])
            .output()
            .expect("the binary runs")
    });
    let (shown, at) = display_until(&rig, 1, "right 0:20:34").await;
    let out = cli.await.expect("the command client ran");
    let answered = sent.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let at = at.unwrap_or_else(|| panic!("the clock never showed 0:20:34 on the right: {shown}"));
    println!(
        "FIDE (j) hallclock command -> clock display: {} ms (the client exited after {} ms)",
        at.duration_since(sent).as_millis(),
        answered.as_millis()
    );
    let e = rig.watcher.event(&b, "time_set").await;
    assert_eq!(e["remaining_ms"], 1_234_000, "{e}");
    rig.stop().await;
}

/// (j), measured: a logged-in dashboard POST (`set_time`) until the simulated clock shows
/// the corrected time. Prints the latency; asserts the displayed time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fide_j_a_time_correction_from_the_dashboard_reaches_the_clock_display() {
    let mut rig = Rig::start("fide-j-web", 1).await;
    let web = webcommon::serve(AppState::for_hall(
        common::HALL,
        rig.hall.as_ref().expect("the daemon runs"),
        webcommon::accounts(),
        false,
    ))
    .await;
    let r = rig.start_round(1, "5400", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    rig.watcher.event(&b, "clock_started").await;
    let (status, cookie, csrf) = webcommon::login(web.addr, "chief", webcommon::PASSWORD).await;
    assert_eq!(status, 200);
    let path = format!("/api/board/{b}/command");
    let body = r#"{"action":"set_time","side":"black","remaining_ms":1234000,"reason":"FIDE (j) measurement"}"#;
    let sent = Instant::now();
    let addr = web.addr;
    let post = tokio::spawn(async move {
        webcommon::http(
            addr,
            "POST",
            &path,
            &[
                ("Cookie", &cookie),
                ("x-csrf-token", &csrf),
                ("Content-Type", "application/json"),
            ],
            body,
        )
        .await
    });
    let (shown, at) = display_until(&rig, 1, "right 0:20:34").await;
    let (status, _, reply) = post.await.expect("the POST ran");
    let answered = sent.elapsed();
    assert_eq!(status, 200, "{reply}");
    let at = at.unwrap_or_else(|| panic!("the clock never showed 0:20:34 on the right: {shown}"));
    println!(
        "FIDE (j) dashboard POST -> clock display: {} ms (answered after {} ms)",
        at.duration_since(sent).as_millis(),
        answered.as_millis()
    );
    let e = rig.watcher.event(&b, "time_set").await;
    assert_eq!(e["remaining_ms"], 1_234_000, "{e}");
    rig.stop().await;
}
