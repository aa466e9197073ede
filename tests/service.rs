//! The daemon as systemd runs it: READY, STATUS and WATCHDOG on NOTIFY_SOCKET, a wedged
//! main loop that stops the watchdog, SIGHUP reloads, SIGTERM stops cleanly.

mod common;

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Broker, Watcher, board_id};
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Sim, SimConfig};

fn write_config(path: &Path, state: &Path, broker: u16, sim: &Sim, boards: usize, keep_alive: u16) {
    let mut toml = format!(
        "[hall]\nid = \"{}\"\nnode = \"{}\"\nstate_dir = \"{}\"\n\n[broker]\nhost = \"127.0.0.1\"\nport = {broker}\nkeep_alive_secs = {keep_alive}\n",
        common::HALL,
        common::NODE,
        state.display()
    );
    for n in 1..=boards {
        toml.push_str(&format!(
            "\n[[boards]]\nid = \"{}\"\nport = \"{}\"\n",
            board_id(n),
            sim.board(n).path().display()
        ));
    }
    std::fs::write(path, toml).expect("config");
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// As systemd starts it: NOTIFY_SOCKET, and a watchdog of 1 s for this very process
/// (`WATCHDOG_PID` must be the daemon's own pid, or the daemon takes the watchdog as
/// another process's and keeps its own one-second beat: so a shell sets it and `exec`s
/// the daemon in its place). The daemon then beats twice per watchdog period.
fn spawn(config: &Path, socket: &Path, log: &Path, extra: &[(&str, &str)]) -> Daemon {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("WATCHDOG_PID=$$ exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_hallclock"))
        .args(["run", "--config"])
        .arg(config)
        .env("NOTIFY_SOCKET", socket)
        .env("WATCHDOG_USEC", "1000000")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log"));
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Daemon(cmd.spawn().expect("daemon starts"))
}

/// Datagrams received within `within`.
fn receive(sock: &UnixDatagram, within: Duration) -> Vec<String> {
    let end = Instant::now() + within;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        let _ = sock.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match sock.recv(&mut buf) {
            Ok(n) => out.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Err(_) => break,
        }
    }
    out
}

async fn setup(name: &str, boards: usize) -> (Broker, Sim, std::path::PathBuf) {
    let dir = scratch_dir(name);
    let broker = Broker::start(name).await;
    let mut cfg = SimConfig::new(boards, dir.join("ports"));
    cfg.ack_delay = Duration::from_millis(5);
    let sim = Sim::start(cfg).await.expect("sim");
    (broker, sim, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_status_and_watchdog_then_a_wedged_loop_stops_the_watchdog() {
    let (broker, sim, dir) = setup("notify", 2).await;
    let config = dir.join("hallclock.toml");
    write_config(&config, &dir.join("state"), broker.port, &sim, 2, 15);
    let socket = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&socket).expect("bind notify socket");
    let _d = spawn(
        &config,
        &socket,
        &dir.join("daemon.log"),
        &[("HALLCLOCK_TEST_WEDGE_AFTER_MS", "4000")],
    );
    let first = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(3500)));
    let all = first.join("\n");
    assert!(all.contains("READY=1"), "{all}");
    let watchdogs = first.iter().filter(|m| m.contains("WATCHDOG=1")).count();
    assert!(watchdogs >= 5, "WATCHDOG=1 at least every 0.5 s: {first:?}");
    assert!(
        first
            .iter()
            .any(|m| m.contains("STATUS=2 boards, 2 online, 0 running, 0 alerts")),
        "{first:?}"
    );
    // After the wedge (4 s in), no more WATCHDOG=1: systemd would restart the daemon.
    let _ = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(1500)));
    let later = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(2000)));
    assert!(
        !later.iter().any(|m| m.contains("WATCHDOG=1")),
        "a wedged main loop must not feed the watchdog: {later:?}"
    );
}

/// The heartbeat does not ask every board every beat (it reads what each actor leaves at
/// every turn, and pings only a quiet one), so this is what proves a stuck actor is still
/// found: a board actor that stops turning stops the watchdog, and the log names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_board_actor_stops_the_watchdog_and_the_log_names_it() {
    let (broker, sim, dir) = setup("notify-board", 2).await;
    let config = dir.join("hallclock.toml");
    write_config(&config, &dir.join("state"), broker.port, &sim, 2, 15);
    let socket = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&socket).expect("bind notify socket");
    let log = dir.join("daemon.log");
    let wedge = format!("{}@6000", board_id(2));
    let _d = spawn(
        &config,
        &socket,
        &log,
        &[("HALLCLOCK_TEST_WEDGE_BOARD", wedge.as_str())],
    );
    let mut seen = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    while !seen.iter().any(|m: &String| m.contains("READY=1")) && Instant::now() < end {
        seen.extend(tokio::task::block_in_place(|| {
            receive(&sock, Duration::from_millis(100))
        }));
    }
    assert!(seen.iter().any(|m| m.contains("READY=1")), "{seen:?}");
    // Idle boards (no clock running): each is pinged now and then, and turns, so the
    // watchdog is fed, twice a second.
    let fed = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(3000)));
    assert!(
        fed.iter().filter(|m| m.contains("WATCHDOG=1")).count() >= 5,
        "WATCHDOG=1 at least every 0.5 s: {fed:?}"
    );
    // Board 2's actor stops turning 6 s after it started; within QUIET_BEATS +
    // GRACE_BEATS beats of 0.5 s (and one for the phase) it is found, and said once.
    let stuck_line = |text: &str| text.contains("has not turned since it was pinged");
    let end = Instant::now() + Duration::from_secs(20);
    while !stuck_line(&std::fs::read_to_string(&log).unwrap_or_default()) && Instant::now() < end {
        let _ = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(100)));
    }
    let _ = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(300)));
    let later = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(2000)));
    assert!(
        !later.iter().any(|m| m.contains("WATCHDOG=1")),
        "a stuck board actor must not let the watchdog be fed: {later:?}"
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let names = |l: &str, n: usize| {
        l.split_whitespace()
            .any(|w| w == format!("board={}", board_id(n)))
    };
    assert!(
        text.lines()
            .any(|l| l.contains("has not turned since it was pinged") && names(l, 2)),
        "the log names the stuck board:\n{text}"
    );
    assert!(
        text.lines()
            .filter(|l| l.contains("has not turned since it was pinged"))
            .all(|l| names(l, 2) && !names(l, 1)),
        "only the stuck board is named:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_adds_a_board_and_says_what_needs_a_restart_sigterm_stops_cleanly() {
    let (broker, sim, dir) = setup("sighup", 2).await;
    let config = dir.join("hallclock.toml");
    write_config(&config, &dir.join("state"), broker.port, &sim, 1, 15);
    let socket = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&socket).expect("bind");
    let log = dir.join("daemon.log");
    let d = spawn(&config, &socket, &log, &[]);
    let mut w = Watcher::connect(broker.port, "sighup-watcher").await;
    let a1 = format!(
        "hallclock/{}/board/{}/availability",
        common::HALL,
        board_id(1)
    );
    w.wait("board 1 online", |m| m.topic == a1 && m.text() == "online")
        .await;
    let _ = tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(300)));
    // Add board 2 and change the keep-alive (a [broker] change: needs a restart).
    write_config(&config, &dir.join("state"), broker.port, &sim, 2, 20);
    let pid = d.0.id().to_string();
    let signal = |sig: &str| {
        let ok = Command::new("kill")
            .args([sig, &pid])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "kill {sig} {pid}");
    };
    signal("-HUP");
    let a2 = format!(
        "hallclock/{}/board/{}/availability",
        common::HALL,
        board_id(2)
    );
    w.wait("board 2 online after SIGHUP", |m| {
        m.topic == a2 && m.text() == "online"
    })
    .await;
    let notes =
        tokio::task::block_in_place(|| receive(&sock, Duration::from_millis(500))).join("\n");
    assert!(
        notes.contains("RELOADING=1") && notes.contains("READY=1"),
        "{notes}"
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("reload: board board-002: added"), "{text}");
    assert!(text.contains("[broker] need a restart"), "{text}");
    // SIGTERM: offline published, exit 0.
    signal("-TERM");
    w.wait("offline", |m| {
        common::node_state(m, common::NODE).as_deref() == Some("offline")
    })
    .await;
    let mut d = d;
    let code = tokio::task::block_in_place(|| d.0.wait()).expect("exit");
    assert!(code.success(), "{code:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ports_lists_the_boards_with_their_serial_numbers() {
    let (_broker, sim, _dir) = setup("ports", 2).await;
    let dir = sim.board(1).path().parent().expect("folder").to_path_buf();
    let out = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_hallclock"))
            .args(["ports", "--scan"])
            .arg(&dir)
            .output()
            .expect("runs")
    });
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for n in 1..=2 {
        assert!(
            text.contains(&format!("DGT board, serial {}", 10000 + n)),
            "{text}"
        );
        assert!(
            text.contains(&format!("{}", sim.board(n).path().display())),
            "{text}"
        );
    }
    assert!(text.contains("[[boards]]"), "{text}");
}
