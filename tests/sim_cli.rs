//! `hallclock sim` as scripts use it: symlinks appear, control lines on standard input
//! and on the Unix socket are answered, bad lines get an error naming the line, and the
//! link can use the simulated port.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hallclock::link::testing::{fast_config, scratch_dir, wait_for};
use hallclock::link::{self, LinkEvent};

struct Killer(Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sim_cli_serves_ports_and_answers_control_lines() {
    let dir = scratch_dir("cli");
    let sock = dir.join("control.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args([
            "sim",
            "--boards",
            "2",
            "--hand-set",
            "--ack-delay",
            "10ms",
            "--dir",
        ])
        .arg(&dir)
        .arg("--control-socket")
        .arg(&sock)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start hallclock sim");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let _kill = Killer(child);
    let (out_tx, out_rx) = std::sync::mpsc::channel::<String>();
    let err_tx = out_tx.clone();
    std::thread::spawn(move || {
        stdout
            .lines()
            .map_while(Result::ok)
            .for_each(|l| drop(out_tx.send(l)))
    });
    std::thread::spawn(move || {
        stderr
            .lines()
            .map_while(Result::ok)
            .for_each(|l| drop(err_tx.send(format!("stderr: {l}"))))
    });
    let next_line = |what: &str| {
        out_rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no output line for {what}"))
    };

    assert_eq!(
        next_line("board 1"),
        format!(
            "board 1 serial 10001 at {}",
            dir.join("board-001").display()
        )
    );
    next_line("board 2");
    assert!(next_line("ready").starts_with("ready"));
    assert!(dir.join("board-002").exists());

    // The link opens the simulated port like a real one.
    let mut link = link::spawn(fast_config(dir.join("board-002")));
    let id = wait_for(&mut link.events, Duration::from_secs(5), |e| match e {
        LinkEvent::Online(id) => Some(id.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(id.serial, "10002");

    writeln!(stdin, "press x").unwrap();
    assert_eq!(
        next_line("bad line"),
        "stderr: error: bad control line `press x`: board number (1, 2, ...) expected, got `x`"
    );
    writeln!(stdin, "move 7 e2e4").unwrap();
    assert_eq!(
        next_line("no such board"),
        "stderr: error: `move 7 e2e4`: no board 7: the simulator has boards 1 to 2"
    );
    writeln!(stdin, "move 2 e2e4").unwrap();
    assert_eq!(next_line("move"), "board 2: played e2e4");
    // The arbiter's buttons: a hand-set clock (observe mode), running on the left.
    writeln!(stdin, "setclock 1 5:00 4:30 +3 left").unwrap();
    let set = next_line("setclock");
    assert!(
        set.starts_with("board 1: clock set by hand, +3 s per move"),
        "{set}"
    );
    writeln!(stdin, "setclock 1 5:00").unwrap();
    assert_eq!(
        next_line("bad setclock"),
        "stderr: error: bad control line `setclock 1 5:00`: usage: setclock N LEFT RIGHT [+INC] [left|right|paused]"
    );

    wait_until("control socket", || sock.exists());
    let mut s = UnixStream::connect(&sock).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut replies = BufReader::new(s.try_clone().unwrap());
    writeln!(s, "unplug 2").unwrap();
    let mut line = String::new();
    replies.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "board 2: unplugged");
    assert!(!dir.join("board-002").exists());
    let offline = wait_for(&mut link.events, Duration::from_secs(5), |e| match e {
        LinkEvent::Offline(o) => Some(o.to_string()),
        _ => None,
    })
    .await
    .unwrap();
    assert!(offline.ends_with("board-002: unplugged"), "{offline}");

    writeln!(s, "replug 2").unwrap();
    line.clear();
    replies.read_line(&mut line).unwrap();
    assert!(line.starts_with("board 2: replugged"), "{line}");
    let again = wait_for(&mut link.events, Duration::from_secs(5), |e| match e {
        LinkEvent::Online(id) => Some(id.serial.clone()),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(again, "10002");

    writeln!(s, "quit").unwrap();
    line.clear();
    replies.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "bye");
    wait_until("symlinks removed at exit", || {
        !dir.join("board-001").exists()
    });
}
