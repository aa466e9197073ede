//! `hallclock demo` as a user runs it: the real binary, its embedded broker or a real
//! Mosquitto, simulated players, games that end with results.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Watcher, free_port};
use hallclock::link::testing::scratch_dir;

/// A Mosquitto of the test's own. Unlike `common::Broker`, it checks that its own process
/// is the one listening: between `free_port` and Mosquitto's bind another program (another
/// test, another worktree's tests) can take the port, and connecting would then reach
/// their broker, whose traffic and lifetime are not ours.
struct Mosquitto {
    port: u16,
    child: std::process::Child,
}

impl Mosquitto {
    async fn start(name: &str) -> Mosquitto {
        let dir = scratch_dir(&format!("mosquitto-{name}"));
        for _ in 0..5 {
            let port = free_port();
            let conf = dir.join("mosquitto.conf");
            std::fs::write(
                &conf,
                format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"),
            )
            .expect("write mosquitto.conf");
            let mut child = Command::new("mosquitto")
                .arg("-c")
                .arg(&conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("mosquitto is installed (./scripts/test installs it)");
            for _ in 0..200 {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // Listening, and still ours a moment later (a failed bind exits).
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if child.try_wait().ok().flatten().is_none() {
                        return Mosquitto { port, child };
                    }
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("mosquitto did not start on a port of its own in 5 attempts");
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a finished run of the binary left.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Run `hallclock demo ARGS` to its end; kill it and fail after `limit`.
fn demo(name: &str, args: &[&str], limit: Duration) -> Run {
    let dir = scratch_dir(&format!("demo-{name}"));
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .arg("demo")
        .args(args)
        .arg("--dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the demo") {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let run = Run {
        code: status.and_then(|s| s.code()),
        stdout: reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        took: started.elapsed(),
    };
    let log = std::fs::read_to_string(dir.join("hallclock.log")).unwrap_or_default();
    assert!(
        status.is_some(),
        "the demo did not end within {limit:?}; output:\n{}\nlog:\n{log}",
        run.stdout
    );
    run
}

/// The `game over` lines of a run: (board, result text).
fn results(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once(' ')?;
            let (board, result) = rest.split_once(" game over: ")?;
            Some((board.to_string(), result.to_string()))
        })
        .collect()
}

/// Players press 50–300 ms after moving, often before the board's scan reported the
/// move; the demo counts, game by game, the moves completed before the game ended against
/// the move_made events on MQTT. Seed 3 has a press whose move was still settling on the
/// board when the opponent's flag fell, and a move made after that flag.
fn fast_pressing_players_lose_no_move(seed: &str) {
    let run = demo(
        &format!("no-move-lost-{seed}"),
        &[
            "--boards", "4", "--rounds", "1", "--tc", "20", "--seed", seed,
        ],
        Duration::from_secs(120),
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("moves made by the players: "))
        .unwrap_or_else(|| panic!("no count line:\n{}", run.stdout));
    let played: u64 = line
        .trim_start_matches("moves made by the players: ")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(played > 20, "{line}");
    assert!(line.ends_with("lost: 0"), "{line}");
}

#[test]
fn fast_pressing_players_lose_no_move_seed_3() {
    fast_pressing_players_lose_no_move("3");
}

#[test]
fn fast_pressing_players_lose_no_move_seed_5() {
    fast_pressing_players_lose_no_move("5");
}

#[test]
fn one_round_with_the_embedded_broker_ends_with_every_game_decided() {
    let run = demo(
        "embedded",
        &[
            "--boards", "3", "--rounds", "1", "--tc", "15", "--seed", "7",
        ],
        Duration::from_secs(90),
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("embedded broker on 127.0.0.1:"),
        "no broker line:\n{out}"
    );
    assert!(
        out.contains("mosquitto_sub -h 127.0.0.1 -p ") && out.contains("-t 'hallclock/#' -v"),
        "no mosquitto_sub hint:\n{out}"
    );
    assert!(out.contains("round 1 started on 3 boards"), "{out}");
    // Moves went through the e-boards, the daemon and MQTT to the table.
    for b in ["board-001", "board-002", "board-003"] {
        let moves = out
            .lines()
            .filter(|l| l.contains(&format!(" {b} ")) && l.contains(". "))
            .count();
        assert!(moves >= 4, "{b}: {moves} move lines\n{out}");
    }
    let mut decided = results(out);
    decided.sort();
    let boards: Vec<&str> = decided.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(boards, ["board-001", "board-002", "board-003"], "{out}");
    for (board, result) in &decided {
        assert!(
            ["1-0, ", "0-1, ", "1/2-1/2, "]
                .iter()
                .any(|s| result.starts_with(s)),
            "{board}: {result}"
        );
    }
    assert!(
        out.contains("round 1 finished: every game has a result"),
        "{out}"
    );
    assert!(out.contains("demo stopped"), "{out}");
    assert!(run.took < Duration::from_secs(60), "took {:?}", run.took);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_external_mosquitto_a_subscriber_sees_the_whole_round() {
    let broker = Mosquitto::start("demo-external").await;
    let mut watcher = Watcher::connect(broker.port, "demo-watcher").await;
    // The watcher must be subscribed before the demo starts: it subscribes on its
    // ConnAck, so round-trip messages of its own until one comes back.
    for _ in 0..50 {
        watcher.publish("hallclock/probe", b"x").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        if watcher.drain().iter().any(|m| m.topic == "hallclock/probe") {
            break;
        }
    }
    let address = format!("127.0.0.1:{}", broker.port);
    let run = tokio::task::spawn_blocking(move || {
        demo(
            "external",
            &[
                "--boards", "2", "--rounds", "1", "--tc", "15", "--seed", "11", "--hall",
                "demo-ext", "--broker", &address,
            ],
            Duration::from_secs(90),
        )
    })
    .await
    .expect("the demo's runner");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("external broker on 127.0.0.1:"));

    watcher
        .wait("status offline", |m| {
            m.topic == "hallclock/demo-ext/status" && m.text() == "offline"
        })
        .await;
    let seen = watcher.drain().to_vec();
    let on = |topic: &str| -> Vec<serde_json::Value> {
        seen.iter()
            // The daemon clears `set` after each command (an empty retained publish).
            .filter(|m| m.topic == topic && !m.text().is_empty())
            .map(common::Msg::json)
            .collect()
    };
    // The arbiter's command went over MQTT, and the daemon accepted it.
    // It is signed (issue 11): an envelope from the demo's arbiter around the command.
    let set = on("hallclock/demo-ext/set");
    assert_eq!(set.len(), 1, "{set:?}");
    assert_eq!(set[0]["arbiter"], "demo-chief");
    let command: serde_json::Value =
        serde_json::from_str(set[0]["payload"].as_str().unwrap_or("")).unwrap_or_default();
    assert_eq!(command["action"], "start_round");
    assert_eq!(command["pairings"].as_array().map(Vec::len), Some(2));
    let responses = on("hallclock/demo-ext/response");
    assert!(
        responses
            .iter()
            .any(|r| r["transaction"] == command["transaction"] && r["status"] == "ok"),
        "{responses:?}"
    );
    for b in ["board-001", "board-002"] {
        let states = on(&format!("hallclock/demo-ext/board/{b}/state"));
        assert!(
            states.iter().any(|s| s["phase"] == "running"),
            "{b}: no running state"
        );
        let last = states.last().expect("states");
        assert_eq!(last["phase"], "finished", "{b}: {last}");
        assert!(last["result"]["score"].is_string(), "{b}: {last}");
        assert!(last["white"]["moves"].as_u64() >= Some(2), "{b}: {last}");
        let events = on(&format!("hallclock/demo-ext/board/{b}/event"));
        let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
        for kind in ["clock_started", "move_made", "pressed", "game_ended"] {
            assert!(kinds.contains(&kind), "{b}: no {kind} in {kinds:?}");
        }
    }
    let hall_events = on("hallclock/demo-ext/event");
    assert!(
        hall_events.iter().any(|e| e["event"] == "round_finished"),
        "{hall_events:?}"
    );
    // Stopping publishes `offline` (retained), not just the broker's last will.
    let status: Vec<String> = seen
        .iter()
        .filter(|m| m.topic == "hallclock/demo-ext/status")
        .map(common::Msg::text)
        .collect();
    // Not necessarily first: under load the daemon's client can drop its first
    // connection while it is being made, and the broker then publishes the last will.
    assert!(status.iter().any(|s| s == "online"), "{status:?}");
    assert_eq!(
        status.last().map(String::as_str),
        Some("offline"),
        "{status:?}"
    );
}

#[test]
fn a_broker_that_does_not_answer_is_named_in_the_error() {
    // Port 1 on localhost: nothing listens there.
    let run = demo(
        "unreachable",
        &["--boards", "1", "--broker", "127.0.0.1:1"],
        Duration::from_secs(40),
    );
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("no answer from the MQTT broker at 127.0.0.1:1"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_broker_without_a_port_is_refused_before_anything_starts() {
    let run = demo(
        "badbroker",
        &["--broker", "localhost"],
        Duration::from_secs(20),
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("expected HOST:PORT"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_mid_round_stops_cleanly_and_the_daemon_says_offline() {
    use std::io::BufRead;
    let broker = Mosquitto::start("demo-sigint").await;
    let mut watcher = Watcher::connect(broker.port, "demo-sigint-watcher").await;
    let dir = scratch_dir("demo-sigint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args([
            "demo",
            "--boards",
            "2",
            "--tc",
            "60+1",
            "--hall",
            "demo-sigint",
            "--broker",
        ])
        .arg(format!("127.0.0.1:{}", broker.port))
        .arg("--dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let out = child.stdout.take().expect("piped stdout");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Wait for the first moves, then interrupt as a user's Ctrl-C does.
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !seen.iter().any(|l: &String| l.contains(" 2. ")) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(line)) => seen.push(line),
            _ => {
                let _ = child.kill();
                panic!("no second move within 30 s:\n{}", seen.join("\n"));
            }
        }
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("the demo did not stop within 15 s of SIGINT");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0));
    while let Some(line) = rx.recv().await {
        seen.push(line);
    }
    assert!(
        seen.last().is_some_and(|l| l.starts_with("demo stopped")),
        "{}",
        seen.join("\n")
    );
    watcher
        .wait("status offline", |m| {
            m.topic == "hallclock/demo-sigint/status"
                && m.text() == "offline"
                && !m.payload.is_empty()
        })
        .await;
}
