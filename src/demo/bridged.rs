//! `hallclock demo --nodes N` with Mosquitto installed: a hall as several servers run it
//! (docs/ARCHITECTURE.md, "One hall, several servers"): each node's own Mosquitto,
//! bridged to a central one, all on this machine. The brokers are child processes of the
//! demo, stopped with it.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Why the bridged brokers did not start.
#[derive(Debug, thiserror::Error)]
pub enum BridgedError {
    #[error("no free local port for a broker: {0}")]
    NoPort(std::io::Error),
    #[error("cannot write {path}: {source}")]
    Conf {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start mosquitto: {0}")]
    Spawn(std::io::Error),
    #[error("mosquitto did not come up on 127.0.0.1:{0} within 5 s")]
    NotUp(u16),
}

/// Whether a `mosquitto` can be started from the PATH.
pub fn mosquitto_installed() -> bool {
    Command::new("mosquitto")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The central broker and each node's own, bridged to it.
#[derive(Debug)]
pub struct Bridged {
    pub central: u16,
    /// Node i's broker (0-based).
    pub locals: Vec<u16>,
    children: Vec<Child>,
}

impl Drop for Bridged {
    fn drop(&mut self) {
        // Closing each holder's stdin stops its broker (see `launch`).
        for c in &mut self.children {
            drop(c.stdin.take());
        }
        for c in &mut self.children {
            let _ = c.wait();
        }
    }
}

fn free_port() -> Result<u16, BridgedError> {
    TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(BridgedError::NoPort)
}

/// The bridge of node `node`'s broker to the central one on `central`: the packaged
/// example (packaging/mosquitto/bridge.conf, what docs/OPERATIONS.md gives halls) with
/// the hall, the node and the address put in. The demo's brokers take anyone, so the
/// example's account is not checked.
pub fn bridge_conf(hall: &str, node: &str, central: u16) -> String {
    include_str!("../../packaging/mosquitto/bridge.conf")
        .replace("hall-a", hall)
        .replace("room-2", node)
        .replace("central.hall.lan:1883", &format!("127.0.0.1:{central}"))
}

fn launch(dir: &Path, name: &str, port: u16, extra: &str) -> Result<Child, BridgedError> {
    let path = dir.join(format!("mosquitto-{name}.conf"));
    let text =
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n{extra}");
    std::fs::write(&path, text).map_err(|source| BridgedError::Conf {
        path: path.clone(),
        source,
    })?;
    // The brokers die with the demo, even when it is killed (SIGKILL runs no Drop): a
    // shell holds the broker and stops it when its stdin, a pipe from the demo, closes,
    // which the kernel does when the demo goes. (A parent-death signal would not do:
    // Mosquitto started as root changes user, which clears it.) The shell ignores the
    // terminal's signals: a closed terminal's SIGHUP (and Ctrl-C's SIGINT) reach the
    // whole process group, and a shell killed by SIGHUP left its broker running (a broker
    // takes SIGHUP as "reload"; tests/demo.rs); the demo's end closes the pipe instead.
    // SIGTERM stops the broker with it.
    Command::new("sh")
        .arg("-c")
        .arg("trap '' INT HUP; mosquitto -c \"$1\" & broker=$!; trap 'kill $broker; exit' TERM; read _; kill $broker; wait $broker")
        .arg("sh")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(BridgedError::Spawn)
}

fn wait_up(port: u16) -> Result<(), BridgedError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(BridgedError::NotUp(port))
}

/// Start the central broker and `nodes` brokers bridged to it; their configurations go to
/// `dir`.
pub fn start(hall: &str, nodes: &[String], dir: &Path) -> Result<Bridged, BridgedError> {
    let central = free_port()?;
    let mut b = Bridged {
        central,
        locals: Vec::new(),
        children: Vec::new(),
    };
    b.children.push(launch(dir, "central", central, "")?);
    wait_up(central)?;
    for node in nodes {
        let port = free_port()?;
        b.children
            .push(launch(dir, node, port, &bridge_conf(hall, node, central))?);
        wait_up(port)?;
        b.locals.push(port);
    }
    Ok(b)
}
