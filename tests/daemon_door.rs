//! The daemon binary at the door (issue 11, points 5 and 6): broker trouble is in the log
//! and in systemd's STATUS from the first attempt on (no listener, TLS failures, refused
//! credentials), mutual TLS works, and what clients send cannot forge log lines.
//!
//! Needs Mosquitto with mosquitto_passwd, and openssl (for the test certificates).

mod common;

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Watcher, board_id, free_port};
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Sim, SimConfig};
use serde_json::json;

/// Generous: the machine is shared; the daemon itself reports within a second or two.
const WITHIN: Duration = Duration::from_secs(15);

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A Mosquitto with `extra` configuration lines, on a free port.
fn mosquitto(dir: &Path, name: &str, extra: &str) -> (Proc, u16) {
    let port = free_port();
    let mut conf = format!("listener {port} 127.0.0.1\npersistence false\n{extra}\n");
    // As root, Mosquitto drops to the `mosquitto` user, which could not read these files.
    if is_root() {
        conf.push_str("user root\n");
    }
    let path = dir.join(format!("{name}.conf"));
    std::fs::write(&path, conf).expect("mosquitto conf");
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log");
    let child = Command::new("mosquitto")
        .arg("-c")
        .arg(&path)
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("mosquitto is installed (./scripts/test installs it)");
    let p = Proc(child);
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < WITHIN,
            "mosquitto {name} did not start: {}",
            std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    (p, port)
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate signed by it, and a
/// second, unrelated CA.
struct Pki {
    ca: PathBuf,
    other_ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn pki(dir: &Path) -> Pki {
    let ossl = || {
        let mut c = Command::new("openssl");
        c.current_dir(dir);
        c
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other-ca"] {
        run(ossl()
            .args(["req", "-x509"])
            .args(ec)
            .args([
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ])
            .args(["-days", "2", "-subj", &format!("/CN=hallclock test {ca}")]));
    }
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\n").expect("ext");
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").expect("ext");
    for (name, cn) in [("server", "127.0.0.1"), ("client", "hallclock-daemon")] {
        run(ossl()
            .arg("req")
            .args(ec)
            .args([
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
            ])
            .args(["-subj", &format!("/CN={cn}")]));
        run(ossl()
            .args(["x509", "-req", "-in", &format!("{name}.csr")])
            .args(["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"])
            .args(["-out", &format!("{name}.pem"), "-days", "2"])
            .args(["-extfile", &format!("{name}.ext")]));
    }
    Pki {
        ca: dir.join("ca.pem"),
        other_ca: dir.join("other-ca.pem"),
        server_cert: dir.join("server.pem"),
        server_key: dir.join("server.key"),
        client_cert: dir.join("client.pem"),
        client_key: dir.join("client.key"),
    }
}

fn tls_listener(pki: &Pki, require_certificate: bool) -> String {
    format!(
        "allow_anonymous true\ncafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate {require_certificate}\n",
        pki.ca.display(),
        pki.server_cert.display(),
        pki.server_key.display()
    )
}

/// The daemon, one simulated board, a notify socket, and its log.
struct Daemon {
    _proc: Proc,
    _sim: Sim,
    sock: UnixDatagram,
    log: PathBuf,
    datagrams: Vec<String>,
}

impl Daemon {
    async fn start(dir: &Path, port: u16, broker: &str) -> Daemon {
        let mut cfg = SimConfig::new(1, dir.join("ports"));
        cfg.ack_delay = Duration::from_millis(5);
        let sim = Sim::start(cfg).await.expect("sim");
        let config = dir.join("hallclock.toml");
        std::fs::write(
            &config,
            format!(
                "[hall]\nid = \"{}\"\nstate_dir = \"{}\"\n\n[broker]\nhost = \"127.0.0.1\"\nport = {port}\nkeep_alive_secs = 5\n{broker}\n\n[[boards]]\nid = \"{}\"\nport = \"{}\"\n",
                common::HALL,
                dir.join("state").display(),
                board_id(1),
                sim.board(1).path().display()
            ),
        )
        .expect("config");
        let socket = dir.join("notify.sock");
        let sock = UnixDatagram::bind(&socket).expect("bind notify socket");
        let log = dir.join("daemon.log");
        let child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
            .args(["run", "--config"])
            .arg(&config)
            .env("NOTIFY_SOCKET", &socket)
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("daemon starts");
        Daemon {
            _proc: Proc(child),
            _sim: sim,
            sock,
            log,
            datagrams: Vec::new(),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait until the log has a line containing `want` and a STATUS= datagram contains
    /// `status`; both, with what was seen, in the panic otherwise.
    fn expect(&mut self, want: &str, status: &str) {
        let end = Instant::now() + WITHIN;
        let mut buf = [0u8; 4096];
        loop {
            let _ = self.sock.set_read_timeout(Some(Duration::from_millis(100)));
            if let Ok(n) = self.sock.recv(&mut buf) {
                self.datagrams
                    .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
            let in_status = self.datagrams.iter().any(|d| {
                d.lines()
                    .any(|l| l.starts_with("STATUS=") && l.contains(status))
            });
            if in_status && self.log().contains(want) {
                return;
            }
            assert!(
                Instant::now() < end,
                "waited {WITHIN:?} for {want:?} in the log and {status:?} in STATUS\nlog:\n{}\nnotify: {:?}",
                self.log(),
                self.datagrams
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_listener_is_reported_at_start_up_in_the_log_and_status() {
    let dir = scratch_dir("door-no-listener");
    let mut d = Daemon::start(&dir, free_port(), "").await;
    d.expect(
        "cannot connect to the MQTT broker: unreachable: nothing listens there (connection refused); retrying",
        "STATUS=MQTT broker: unreachable: nothing listens there",
    );
    // READY (and STATUS) is notified just before this line is logged: wait for it too.
    d.expect(
        "ready, but without the MQTT broker",
        "STATUS=MQTT broker: unreachable: nothing listens there",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_are_reported_at_start_up() {
    let dir = scratch_dir("door-credentials");
    let passwd = dir.join("passwd");
    std::fs::File::create(&passwd).expect("passwd");
    run(Command::new("mosquitto_passwd")
        .arg("-b")
        .arg(&passwd)
        .args(["hallclock", "right-password"]));
    let (_broker, port) = mosquitto(
        &dir,
        "auth",
        &format!("allow_anonymous false\npassword_file {}", passwd.display()),
    );
    let mut d = Daemon::start(
        &dir,
        port,
        "username = \"hallclock\"\npassword = \"wrong-password\"",
    )
    .await;
    d.expect(
        "the broker refused the credentials",
        "STATUS=MQTT broker: the broker refused the credentials",
    );
    assert!(
        d.log()
            .contains("check broker.username and broker.password")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_a_plain_port_is_reported_at_start_up() {
    let dir = scratch_dir("door-tls-plain");
    let pki = pki(&dir);
    let (_broker, port) = mosquitto(&dir, "plain", "allow_anonymous true");
    let mut d = Daemon::start(
        &dir,
        port,
        &format!("tls = true\nca_file = \"{}\"", pki.ca.display()),
    )
    .await;
    d.expect(
        "cannot connect to the MQTT broker: TLS failed",
        "STATUS=MQTT broker: TLS failed",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_ca_is_reported_at_start_up() {
    let dir = scratch_dir("door-tls-ca");
    let pki = pki(&dir);
    let (_broker, port) = mosquitto(&dir, "tls", &tls_listener(&pki, false));
    let mut d = Daemon::start(
        &dir,
        port,
        &format!("tls = true\nca_file = \"{}\"", pki.other_ca.display()),
    )
    .await;
    d.expect(
        "cannot connect to the MQTT broker: TLS failed",
        "STATUS=MQTT broker: TLS failed",
    );
    assert!(d.log().contains("UnknownIssuer"), "{}", d.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_connects_with_the_client_certificate_and_is_refused_without() {
    let dir = scratch_dir("door-mtls");
    let pki = pki(&dir);
    let (_broker, port) = mosquitto(&dir, "mtls", &tls_listener(&pki, true));
    let with = dir.join("with");
    std::fs::create_dir_all(&with).expect("dir");
    let mut d = Daemon::start(
        &with,
        port,
        &format!(
            "tls = true\nca_file = \"{}\"\nclient_cert = \"{}\"\nclient_key = \"{}\"",
            pki.ca.display(),
            pki.client_cert.display(),
            pki.client_key.display()
        ),
    )
    .await;
    d.expect("connected to the MQTT broker", "STATUS=1 boards");
    assert!(!d.log().contains("cannot connect"), "{}", d.log());
    drop(d);

    let without = dir.join("without");
    std::fs::create_dir_all(&without).expect("dir");
    let mut d = Daemon::start(
        &without,
        port,
        &format!("tls = true\nca_file = \"{}\"", pki.ca.display()),
    )
    .await;
    d.expect(
        "cannot connect to the MQTT broker: TLS failed",
        "STATUS=MQTT broker: TLS failed",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_strings_cannot_forge_or_colour_log_lines() {
    let dir = scratch_dir("door-log");
    let (_broker, port) = mosquitto(&dir, "plain", "allow_anonymous true");
    let mut d = Daemon::start(&dir, port, "").await;
    d.expect("connected to the MQTT broker", "STATUS=1 boards");
    let mut w = Watcher::connect(port, "door-log-watcher").await;
    // The daemon subscribes before it publishes its status on the same connection, so its
    // status on the broker means its subscriptions stand: a command sent earlier (right
    // after "connected", on a loaded CI machine) could reach nobody.
    w.wait("the daemon's node status", |m| {
        m.topic.contains("/node/") && m.topic.ends_with("/status")
    })
    .await;
    let forged = "2026-12-01T10:00:00.000000Z  WARN hallclock: FORGED";
    let evil = format!("t-1\n{forged}\u{1b}[2J");
    // In the transaction, the arbiter, the reason, and a parse error.
    let board = format!("hallclock/{}/board/{}/set", common::HALL, board_id(1));
    w.publish(
        &board,
        json!({"transaction": evil, "arbiter": evil, "reason": evil, "action": "pause"})
            .to_string()
            .as_bytes(),
    )
    .await;
    w.publish(
        &board,
        json!({"transaction": evil, "arbiter": "IA", "action": format!("x\n{forged}")})
            .to_string()
            .as_bytes(),
    )
    .await;
    // The last of them was logged (refused), so all three were.
    d.expect("command refused", "STATUS=1 boards");
    let log = d.log();
    assert!(log.contains("FORGED"), "the strings reached the log: {log}");
    for line in log.lines() {
        assert!(
            !line.starts_with(forged.split(' ').next().unwrap_or_default()),
            "a client forged a log line: {line:?}\n{log}"
        );
    }
    assert!(
        !log.contains('\u{1b}'),
        "an ANSI escape reached the log: {log:?}"
    );
}
