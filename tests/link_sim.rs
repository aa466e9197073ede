//! The serial link against the simulator over real pseudo-terminals.
//!
//! Every wait has a deadline; nothing is proven by sleeping: the tests wait for the
//! link's events (real time passes only while bytes travel and timers of the policy run).

use std::time::{Duration, Instant};

use hallclock::dgt::{BoardEvent, ClockSide};
use hallclock::link::testing::{fast_config, scratch_dir, wait_for};
use hallclock::link::{
    self, ClockCommandError, ClockModel, LinkCommand, LinkError, LinkEvent, Offline, OpenError,
    RunSide,
};
use hallclock::sim::{Button, ClockKind, Side, Sim, SimConfig};

const WAIT: Duration = Duration::from_secs(5);

fn sim_config(name: &str) -> SimConfig {
    let mut c = SimConfig::new(1, scratch_dir(name));
    c.ack_delay = Duration::from_millis(20);
    c.scan_interval = Duration::from_millis(50);
    c
}

/// Sends a command, failing instead of hanging if the link stopped taking them.
async fn send(link: &link::LinkHandle, command: LinkCommand) {
    tokio::time::timeout(WAIT, link.commands.send(command))
        .await
        .expect("link takes the command within the timeout")
        .expect("link task running");
}

/// Unplugs or replugs within the timeout.
async fn within<T, E: std::fmt::Debug>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, E>>,
) -> T {
    tokio::time::timeout(WAIT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} timed out"))
        .unwrap_or_else(|e| panic!("{what}: {e:?}"))
}

async fn online(link: &mut link::LinkHandle) -> link::BoardIdentity {
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Online(id) => Some(id.clone()),
        _ => None,
    })
    .await
    .expect("link comes online")
}

async fn done(link: &mut link::LinkHandle, command: &'static str) {
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::CommandDone { command: c } if *c == command => Some(()),
        LinkEvent::CommandFailed(f) => panic!("{f}"),
        _ => None,
    })
    .await
    .unwrap_or_else(|e| panic!("{command} acknowledged: {e}"));
}

#[tokio::test]
async fn handshake_reports_the_serial_number_and_a_dgt3000() {
    let sim = Sim::start(sim_config("handshake")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    let id = online(&mut link).await;
    assert_eq!(id.serial, "10001");
    assert_eq!(id.version, (3, 10));
    let clock = id.clock.expect("clock answered");
    assert_eq!(clock.model, ClockModel::Dgt3000);
    assert_eq!(clock.version, (2, 0));
    assert_eq!(id.path, sim.board(1).path());
}

/// DGT.md "The settle": a board is given its settle once, after its port appears (it was
/// powered then), not at every open; a restarted daemon finds ports that have been there
/// for hours and talks to them at once.
#[tokio::test]
async fn the_settle_counts_from_when_the_port_appeared_not_from_each_open() {
    let sim = Sim::start(sim_config("settle-age")).await.unwrap();
    let mut cfg = fast_config(sim.board(1).path());
    cfg.settle = Duration::from_secs(3);
    // The port has just appeared: the whole settle first.
    let t = Instant::now();
    let mut link = link::spawn(cfg.clone());
    online(&mut link).await;
    let first = t.elapsed();
    assert!(
        first >= Duration::from_millis(2500),
        "a port that just appeared was talked to after {first:?}, before its settle"
    );
    drop(link.commands);
    drop(link.events);
    link.task.await.expect("link task ends when its handles go");
    // The same port, now older than the settle: opened again (a daemon restarted), the
    // board is asked at once.
    let t = Instant::now();
    let mut link = link::spawn(cfg);
    online(&mut link).await;
    let second = t.elapsed();
    assert!(
        second < Duration::from_secs(2),
        "a port there for {first:?} was settled again: online after {second:?}"
    );
}

#[tokio::test]
async fn an_xl_clock_is_recognised_from_its_version_ack() {
    let mut cfg = sim_config("xl");
    cfg.clock = ClockKind::Xl;
    let sim = Sim::start(cfg).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    let clock = online(&mut link).await.clock.expect("clock answered");
    assert_eq!(clock.model, ClockModel::Xl);
}

#[tokio::test]
async fn a_board_without_clock_comes_online_without_one() {
    let mut cfg = sim_config("noclock");
    cfg.clock = ClockKind::None;
    let sim = Sim::start(cfg).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    assert_eq!(online(&mut link).await.clock, None);
    send(&link, LinkCommand::ShowTimes).await;
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::CommandFailed(ClockCommandError::NoClock { .. }) => Some(()),
        _ => None,
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn setnrun_shows_on_the_simulated_clock_then_end() {
    let sim = Sim::start(sim_config("setnrun")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::Text {
            text: "hello".into(),
            beep: false,
        },
    )
    .await;
    done(&mut link, "text").await;
    assert_eq!(
        sim.board(1).clock_display().text.as_deref(),
        Some("hello   ")
    );
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(5 * 60 + 1),
            right: Duration::from_secs(3 * 60),
            run: RunSide::Left,
        },
    )
    .await;
    done(&mut link, "set-and-run").await;
    // §5.3: END always follows SETNRUN, and brings the times back on the display.
    done(&mut link, "end").await;
    let shown = sim.board(1).clock_display();
    assert_eq!(shown.running, Some(Side::Left));
    assert_eq!(shown.text, None);
    assert_eq!((shown.right.minutes, shown.right.seconds), (3, 0));
    assert!(
        shown.left.minutes == 5 || shown.left.minutes == 4,
        "{shown}"
    );
    assert_eq!(sim.board(1).clock_commands_received(0x03), 1);
}

#[tokio::test]
async fn a_lever_press_arrives_as_an_event() {
    let sim = Sim::start(sim_config("lever")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(60),
            right: Duration::from_secs(60),
            run: RunSide::Left,
        },
    )
    .await;
    done(&mut link, "set-and-run").await;
    sim.board(1).press();
    let (high, status) = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Lever { high, reading } => Some((*high, reading.status)),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(high, ClockSide::Right);
    // Switch-at-lever (0x08) is always set: the clock itself now runs the right side.
    assert!(status.running && status.right_turn, "{status:?}");
    sim.board(1).press();
    let high = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Lever { high, .. } => Some(*high),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(high, ClockSide::Left);
}

#[tokio::test]
async fn a_button_press_arrives_as_an_event() {
    let sim = Sim::start(sim_config("button")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).button(Button::Ok);
    let b = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Button(b) => Some(*b),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(b, hallclock::dgt::ClockButton::Ok);
}

#[tokio::test]
async fn a_stopped_clock_is_read_on_request_without_a_clock_command() {
    let sim = Sim::start(sim_config("request-clock")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    // Set by hand and stopped: the clock has no change to report by itself.
    sim.board(1).set_clock(
        Duration::from_secs(300),
        Duration::from_secs(270),
        Duration::ZERO,
        hallclock::sim::Run::Paused,
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    while link.events.try_recv().is_ok() {}
    let commands = |sim: &Sim| -> u32 {
        (0u8..=0x0c)
            .filter(|c| *c != 0x09)
            .map(|c| sim.board(1).clock_commands_received(c))
            .sum()
    };
    let before = commands(&sim);
    send(&link, LinkCommand::RequestClock).await;
    let reading = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Clock(r) => Some(*r),
        _ => None,
    })
    .await
    .expect("a reading on request");
    assert_eq!(reading.left.total_seconds(), 300);
    assert_eq!(reading.right.total_seconds(), 270);
    assert!(!reading.status.running);
    assert_eq!(commands(&sim), before, "asking is not a clock command");
}

#[tokio::test]
async fn unplug_goes_offline_and_replug_comes_back_with_the_same_serial_within_2s() {
    let sim = Sim::start(sim_config("replug")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    let first = online(&mut link).await;
    within("unplug", sim.board(1).unplug()).await;
    let why = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Offline(o) => Some(o.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(
        why,
        Offline::Unplugged {
            path: sim.board(1).path().to_path_buf()
        }
    );
    let replugged = Instant::now();
    within("replug", sim.board(1).replug()).await;
    let again = wait_for(&mut link.events, Duration::from_secs(2), |e| match e {
        LinkEvent::Online(id) => Some(id.clone()),
        _ => None,
    })
    .await
    .expect("online again within 2 s of the replug");
    assert_eq!(again.serial, first.serial);
    assert!(replugged.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_thousand_garbage_bytes_mid_session_do_not_end_it() {
    let sim = Sim::start(sim_config("garbage")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(60),
            right: Duration::from_secs(60),
            run: RunSide::Left,
        },
    )
    .await;
    done(&mut link, "set-and-run").await;
    sim.board(1).garbage(1000);
    sim.board(1).press();
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Lever { high, .. } => Some(*high),
        LinkEvent::Offline(o) => panic!("went offline: {o}"),
        _ => None,
    })
    .await
    .unwrap();
    send(
        &link,
        LinkCommand::Beep {
            duration: Duration::from_millis(200),
        },
    )
    .await;
    done(&mut link, "beep").await;
}

#[tokio::test]
async fn a_clock_that_never_acks_gets_three_resends_then_an_error() {
    let sim = Sim::start(sim_config("noack")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).drop_acks(true);
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(60),
            right: Duration::from_secs(60),
            run: RunSide::Left,
        },
    )
    .await;
    let failure = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::CommandFailed(f) => Some(f.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(
        failure,
        ClockCommandError::NoAck {
            path: sim.board(1).path().to_path_buf(),
            command: "set-and-run",
            attempts: 4,
        }
    );
    assert_eq!(sim.board(1).clock_commands_received(0x0a), 4);
    // The link is not wedged: with ACKs back, the next command goes through.
    sim.board(1).drop_acks(false);
    send(
        &link,
        LinkCommand::Beep {
            duration: Duration::from_millis(100),
        },
    )
    .await;
    done(&mut link, "beep").await;
}

#[tokio::test]
async fn a_clock_not_in_computer_mode_is_reported_as_such() {
    let mut cfg = sim_config("manual");
    cfg.computer_mode = false;
    let sim = Sim::start(cfg).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(60),
            right: Duration::from_secs(60),
            run: RunSide::Left,
        },
    )
    .await;
    let failure = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::CommandFailed(f) => Some(f.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert!(
        matches!(failure, ClockCommandError::NotInComputerMode { .. }),
        "{failure}"
    );
    assert!(failure.to_string().contains("mode 25"), "{failure}");
}

#[tokio::test]
async fn a_stalled_board_goes_offline_and_comes_back() {
    let sim = Sim::start(sim_config("stall")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).stall(Duration::from_millis(1500));
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Offline(Offline::Silent { .. }) => Some(()),
        _ => None,
    })
    .await
    .unwrap();
    let id = online(&mut link).await;
    assert_eq!(id.serial, "10001");
}

#[tokio::test]
async fn the_flag_falls_at_zero() {
    let sim = Sim::start(sim_config("flag")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::SetAndRun {
            left: Duration::from_secs(1),
            right: Duration::from_secs(60),
            run: RunSide::Left,
        },
    )
    .await;
    let reading = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Clock(r) if r.left.final_flag => Some(*r),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(reading.left.total_seconds(), 0);
    assert!(!reading.status.running);
}

#[tokio::test]
async fn a_missing_port_is_a_clear_error_naming_the_path() {
    let dir = scratch_dir("missing");
    let path = dir.join("board-404");
    let mut link = link::spawn(fast_config(&path));
    let msg = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Error(LinkError::Open(e @ OpenError::Missing { .. })) => Some(e.to_string()),
        _ => None,
    })
    .await
    .unwrap();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("no such serial port"), "{msg}");
}

#[tokio::test]
async fn a_busy_port_is_a_clear_error_naming_the_path() {
    let sim = Sim::start(sim_config("busy")).await.unwrap();
    let mut first = link::spawn(fast_config(sim.board(1).path()));
    online(&mut first).await;
    let mut second = link::spawn(fast_config(sim.board(1).path()));
    let msg = wait_for(&mut second.events, WAIT, |e| match e {
        LinkEvent::Error(LinkError::Open(e @ OpenError::Busy { .. })) => Some(e.to_string()),
        _ => None,
    })
    .await
    .unwrap();
    assert!(msg.contains("board-001: port busy"), "{msg}");
}

#[tokio::test]
async fn a_file_that_is_not_a_tty_is_a_clear_error() {
    let dir = scratch_dir("notatty");
    let path = dir.join("plain-file");
    std::fs::write(&path, b"").unwrap();
    let mut link = link::spawn(fast_config(&path));
    let msg = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Error(e) => Some(e.to_string()),
        _ => None,
    })
    .await
    .unwrap();
    assert!(msg.contains("plain-file: not a serial port"), "{msg}");
}

#[tokio::test]
async fn silence_on_the_port_means_not_a_dgt_board() {
    let dir = scratch_dir("silent");
    let pty = hallclock::sim::pty::Pty::open().unwrap();
    let path = dir.join("mute");
    hallclock::sim::pty::place_symlink(&pty.slave_path, &path).unwrap();
    let mut link = link::spawn(fast_config(&path));
    let msg = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Error(e @ LinkError::NotADgtBoard { .. }) => Some(e.to_string()),
        LinkEvent::Online(id) => panic!("online with {id:?}"),
        _ => None,
    })
    .await
    .unwrap();
    assert!(msg.contains("mute: not a DGT board"), "{msg}");
    drop(pty);
}

#[tokio::test]
async fn a_move_on_the_board_arrives_as_a_game_move() {
    let sim = Sim::start(sim_config("move")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).play_move("e2e4").unwrap();
    let uci = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Game(BoardEvent::Move { uci, .. }) => Some(uci.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(uci, "e2e4");
    // An illegal reply on the board is an irregularity once the board is quiet.
    sim.board(1).play_move("d7d4").unwrap();
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Game(BoardEvent::Irregular { .. }) => Some(()),
        LinkEvent::Game(BoardEvent::Move { uci, .. }) => panic!("read {uci} as a move"),
        _ => None,
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_replugged_board_continues_its_game() {
    let sim = Sim::start(sim_config("replug-game")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).play_move("e2e4").unwrap();
    wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Game(BoardEvent::Move { .. }) => Some(()),
        _ => None,
    })
    .await
    .unwrap();
    within("unplug", sim.board(1).unplug()).await;
    // Played while the cable was out: seen in the dump of the next handshake.
    sim.board(1).play_move("e7e5").unwrap();
    within("replug", sim.board(1).replug()).await;
    let (ply, uci) = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Game(BoardEvent::Move { ply, uci, .. }) => Some((*ply, uci.clone())),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!((ply, uci.as_str()), (2, "e7e5"));
}

#[tokio::test]
async fn a_move_reported_new_square_first_is_still_read() {
    let sim = Sim::start(sim_config("out-of-order")).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    sim.board(1).out_of_order(true);
    sim.board(1).play_move("g1f3").unwrap();
    let uci = wait_for(&mut link.events, WAIT, |e| match e {
        LinkEvent::Game(BoardEvent::Move { uci, .. }) => Some(uci.clone()),
        LinkEvent::Game(BoardEvent::Irregular { .. }) => panic!("called irregular"),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(uci, "g1f3");
}

#[tokio::test]
async fn text_on_an_xl_goes_out_as_seven_segments() {
    let mut cfg = sim_config("xl-text");
    cfg.clock = ClockKind::Xl;
    let sim = Sim::start(cfg).await.unwrap();
    let mut link = link::spawn(fast_config(sim.board(1).path()));
    online(&mut link).await;
    send(
        &link,
        LinkCommand::Text {
            text: "e2e4".into(),
            beep: true,
        },
    )
    .await;
    done(&mut link, "text").await;
    let shown = sim.board(1).clock_display();
    assert_eq!(shown.text.as_deref(), Some("e2e4  "));
    assert_eq!(shown.beeps, 1);
    assert_eq!(sim.board(1).clock_commands_received(0x01), 1);
}

#[tokio::test]
async fn each_board_of_a_hall_is_its_own_link() {
    let mut cfg = sim_config("hall");
    cfg.boards = 3;
    let sim = Sim::start(cfg).await.unwrap();
    let mut links: Vec<_> = (1..=3)
        .map(|n| link::spawn(fast_config(sim.board(n).path())))
        .collect();
    for (i, l) in links.iter_mut().enumerate() {
        assert_eq!(online(l).await.serial, format!("1000{}", i + 1));
        // The first reading is the baseline a press is seen against.
        wait_for(&mut l.events, WAIT, |e| {
            matches!(e, LinkEvent::Clock(_)).then_some(())
        })
        .await
        .unwrap();
    }
    sim.board(2).press();
    let high = wait_for(&mut links[1].events, WAIT, |e| match e {
        LinkEvent::Lever { high, .. } => Some(*high),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(high, ClockSide::Right);
}
