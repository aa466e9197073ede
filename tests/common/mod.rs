//! End-to-end test harness: a real Mosquitto started by the test on a free port, the
//! simulator on real pseudo-terminals, the daemon in-process, and an MQTT subscriber that
//! records everything it receives.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hallclock::hall::{self, BoardSettings, GameDefaults, HallSettings, RunningHall};
use hallclock::intake::auth::{Arbiters, Key, Role, Security};
use hallclock::link::testing::{fast_config, scratch_dir};
use hallclock::mqtt::MqttSettings;
use hallclock::rules::placement::Side;
use hallclock::sim::{Sim, SimConfig};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;
use tokio::sync::mpsc;

pub const HALL: &str = "test-hall";
/// The node the in-process daemon of a [`Rig`] is (its `node/<node>/status`).
pub const NODE: &str = "test-node";
pub const WAIT: Duration = Duration::from_secs(15);

/// The test arbiters: (id, name, role, boards, key). Every Rig and every daemon a test
/// starts has them; the harness signs as `chief`, whose name the events record.
pub const ARBITERS: [(&str, &str, Role, Option<&str>, &str); 3] = [
    (
        "chief",
        "IA Test",
        Role::Chief,
        None,
        "6368696566206b6579206f662074686520746573742068616c6c2c20333221",
    ),
    (
        "ia-one",
        "IA Board One",
        Role::Arbiter,
        Some("board-001"),
        "6172626974657220666f7220626f617264203120616e64206e6f7468696e67",
    ),
    (
        "viewer",
        "A Viewer",
        Role::Viewer,
        None,
        "76696577657220736565732c206e657665722073657473206120636c6f636b",
    ),
];

pub fn key_of(id: &str) -> Key {
    let hex = ARBITERS
        .iter()
        .find(|a| a.0 == id)
        .map(|a| a.4)
        .expect("a test arbiter");
    Key::from_hex(hex).expect("a test key")
}

/// The test arbiters' file (mode 0600) in `dir`.
pub fn write_arbiters(dir: &std::path::Path) -> PathBuf {
    let mut text = String::new();
    for (id, name, role, boards, key) in ARBITERS {
        text.push_str(&format!(
            "[[arbiter]]\nid = \"{id}\"\nname = \"{name}\"\nrole = \"{}\"\nkey = \"{key}\"\n",
            role.name()
        ));
        if let Some(b) = boards {
            text.push_str(&format!("boards = [\"{b}\"]\n"));
        }
    }
    let path = dir.join("arbiters.toml");
    let arbiters = Arbiters::parse(&text).expect("the test arbiters parse");
    arbiters.save(&path).expect("write the arbiters file");
    path
}

/// The hall's security as the tests run it: signed, with the test arbiters.
pub fn test_security() -> Security {
    let text = ARBITERS
        .iter()
        .map(|(id, name, role, boards, key)| {
            let boards = boards
                .map(|b| format!("boards = [\"{b}\"]\n"))
                .unwrap_or_default();
            format!(
                "[[arbiter]]\nid = \"{id}\"\nname = \"{name}\"\nrole = \"{}\"\n{boards}key = \"{key}\"\n",
                role.name()
            )
        })
        .collect::<String>();
    Security::Signed {
        arbiters: Arbiters::parse(&text).expect("the test arbiters parse"),
        window: hallclock::intake::auth::DEFAULT_WINDOW,
    }
}

/// `command` for `topic` as `arbiter` signs it now.
pub fn signed_as(arbiter: &str, topic: &str, command: &Value) -> Vec<u8> {
    hallclock::intake::auth::sign_now(
        arbiter,
        &key_of(arbiter),
        topic,
        command.clone(),
        hallclock::rules::Millis(now_ms()),
    )
}

/// `command` for `topic`, signed by the chief arbiter.
pub fn signed(topic: &str, command: &Value) -> Vec<u8> {
    signed_as("chief", topic, command)
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// A Mosquitto of the test's own.
pub struct Broker {
    pub port: u16,
    dir: PathBuf,
    /// Lines added to the configuration (a bridge), kept for a restart.
    extra: String,
    /// Environment of the broker's process (libfaketime), kept for a restart.
    env: Vec<(String, String)>,
    child: Option<Child>,
}

impl Broker {
    pub async fn start(name: &str) -> Broker {
        Self::start_with(name, "").await
    }

    /// A Mosquitto with `extra` lines in its configuration (a bridge to another one).
    pub async fn start_with(name: &str, extra: &str) -> Broker {
        Self::start_env(name, extra, &[]).await
    }

    /// A Mosquitto with `env` in its process's environment (libfaketime's variables).
    pub async fn start_env(name: &str, extra: &str, env: &[(&str, &str)]) -> Broker {
        let mut b = Broker {
            port: free_port(),
            dir: scratch_dir(&format!("mosquitto-{name}")),
            extra: extra.to_string(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            child: None,
        };
        b.launch().await;
        b
    }

    /// Start it again on its port after a `kill` (the end of an outage).
    pub async fn start_again(&mut self) {
        self.launch().await;
    }

    async fn launch(&mut self) {
        let conf = self.dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {} 127.0.0.1\nallow_anonymous true\npersistence false\n{}",
                self.port, self.extra
            ),
        )
        .expect("write mosquitto.conf");
        let child = Command::new("mosquitto")
            .arg("-c")
            .arg(&conf)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mosquitto is installed (./scripts/test installs it)");
        self.child = Some(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("mosquitto did not start on port {}", self.port);
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub async fn restart(&mut self) {
        self.kill();
        self.launch().await;
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn mqtt_settings(port: u16, client_id: &str) -> MqttSettings {
    MqttSettings {
        host: "127.0.0.1".into(),
        port,
        client_id: client_id.into(),
        username: None,
        password: None,
        tls: false,
        tls_ca: None,
        client_cert: None,
        keep_alive: Duration::from_secs(5),
        max_queued: 10_000,
    }
}

/// The simulator with `n` boards, and the daemon driving them.
pub struct Rig {
    pub broker: Broker,
    pub sim: Sim,
    pub hall: Option<RunningHall>,
    pub watcher: Watcher,
    /// What the daemon was started with (for a restart on the same state directory).
    pub settings: HallSettings,
}

pub fn board_id(n: usize) -> String {
    format!("board-{n:03}")
}

/// Wait (generously) until the simulated clock shows what `want` accepts.
pub async fn clock_until(
    sim: &Sim,
    n: usize,
    what: &str,
    want: impl Fn(&hallclock::sim::ClockView) -> bool,
) {
    for _ in 0..300 {
        if want(&sim.board(n).clock_display()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "clock of board {n}: {what}; it shows {}",
        sim.board(n).clock_display()
    );
}

impl Rig {
    pub async fn start(name: &str, boards: usize) -> Rig {
        Self::start_with(name, boards, GameDefaults::default()).await
    }

    pub async fn start_with(name: &str, boards: usize, defaults: GameDefaults) -> Rig {
        Self::start_custom(name, boards, defaults, |_| {}).await
    }

    /// As `start_with`, with a last say on the daemon's settings.
    pub async fn start_custom(
        name: &str,
        boards: usize,
        defaults: GameDefaults,
        adjust: impl FnOnce(&mut HallSettings),
    ) -> Rig {
        Self::start_sim(name, boards, defaults, |_| {}, adjust).await
    }

    /// As `start_custom`, with a say on the simulator's settings too (scan timing).
    pub async fn start_sim(
        name: &str,
        boards: usize,
        defaults: GameDefaults,
        adjust_sim: impl FnOnce(&mut SimConfig),
        adjust: impl FnOnce(&mut HallSettings),
    ) -> Rig {
        Self::start_prepared(name, boards, defaults, adjust_sim, |_| {}, adjust).await
    }

    /// As `start_sim`, with `prepare` run on the simulator's boards before the daemon
    /// starts (what the hall looks like when the daemon first reads it: a clock already
    /// low on battery, ...).
    pub async fn start_prepared(
        name: &str,
        boards: usize,
        defaults: GameDefaults,
        adjust_sim: impl FnOnce(&mut SimConfig),
        prepare: impl FnOnce(&Sim),
        adjust: impl FnOnce(&mut HallSettings),
    ) -> Rig {
        let broker = Broker::start(name).await;
        let dir = scratch_dir(&format!("sim-{name}"));
        let mut cfg = SimConfig::new(boards, &dir);
        cfg.ack_delay = Duration::from_millis(5);
        cfg.scan_interval = Duration::from_millis(20);
        cfg.scan_jitter = Duration::ZERO;
        adjust_sim(&mut cfg);
        let sim = Sim::start(cfg).await.expect("simulator starts");
        prepare(&sim);
        let watcher = Watcher::connect(broker.port, &format!("watcher-{name}")).await;
        let settings = HallSettings {
            hall: hallclock::id::Id::parse(HALL).expect("a valid hall id"),
            node: hallclock::id::Id::parse(NODE).expect("a valid node id"),
            boards: (1..=boards)
                .map(|n| BoardSettings {
                    id: hallclock::id::Id::parse(&board_id(n)).expect("a valid board id"),
                    port: sim.board(n).path().to_path_buf(),
                    white: Side::Left,
                    number: n as u32,
                    mode: Default::default(),
                })
                .collect(),
            defaults,
            link: fast_config(""),
            mqtt: mqtt_settings(broker.port, &format!("hallclock-{name}")),
            state_dir: scratch_dir(&format!("state-{name}")),
            sync_window: Duration::from_millis(5),
            segment_size: 1 << 20,
            heartbeat: Duration::from_secs(1),
            security: test_security(),
            broadcast: Default::default(),
            clock_texts: Default::default(),
        };
        let mut settings = settings;
        adjust(&mut settings);
        let hall = hall::start(settings.clone()).expect("the daemon starts");
        let mut rig = Rig {
            broker,
            sim,
            hall: Some(hall),
            watcher,
            settings,
        };
        for n in 1..=boards {
            let topic = rig.topic(&format!("board/{}/availability", board_id(n)));
            rig.watcher
                .wait(&format!("{topic} online"), |m| {
                    m.topic == topic && m.text() == "online"
                })
                .await;
        }
        rig
    }

    pub fn topic(&self, rest: &str) -> String {
        format!("hallclock/{HALL}/{rest}")
    }

    /// Send a board command, signed by the chief arbiter, and wait for its response.
    pub async fn board_command(&mut self, board: &str, cmd: Value) -> Value {
        self.board_command_as("chief", board, cmd).await
    }

    /// Send a board command signed by `arbiter` (a test account) and wait for its response.
    pub async fn board_command_as(&mut self, arbiter: &str, board: &str, mut cmd: Value) -> Value {
        let tx = format!("t-{}", rand_id());
        cmd["transaction"] = Value::String(tx.clone());
        let topic = self.topic(&format!("board/{board}/set"));
        self.watcher
            .publish(&topic, &signed_as(arbiter, &topic, &cmd))
            .await;
        let resp = self.topic(&format!("board/{board}/response"));
        self.watcher
            .wait(&format!("response {tx}"), |m| {
                m.topic == resp && m.json()["transaction"] == tx.as_str()
            })
            .await
            .json()
    }

    /// Send a hall command, signed by the chief arbiter, and wait for its response.
    pub async fn hall_command(&mut self, mut cmd: Value) -> Value {
        let tx = format!("t-{}", rand_id());
        cmd["transaction"] = Value::String(tx.clone());
        let topic = self.topic("set");
        self.watcher.publish(&topic, &signed(&topic, &cmd)).await;
        let resp = self.topic("response");
        self.watcher
            .wait(&format!("hall response {tx}"), |m| {
                m.topic == resp && m.json()["transaction"] == tx.as_str()
            })
            .await
            .json()
    }

    /// Start a round on boards 1..=n with the given control, starting `in_ms` from now.
    pub async fn start_round(
        &mut self,
        boards: usize,
        tc: &str,
        in_ms: i64,
        extra: Value,
    ) -> Value {
        let now = now_ms();
        let pairings: Vec<Value> = (1..=boards)
            .map(|n| {
                serde_json::json!({"board": board_id(n), "white": format!("White {n}"), "black": format!("Black {n}")})
            })
            .collect();
        let mut cmd = serde_json::json!({
            "action": "start_round", "round": 1, "time_control": tc,
            "start": now + in_ms, "pairings": pairings,
        });
        if let (Value::Object(c), Value::Object(e)) = (&mut cmd, extra) {
            c.extend(e);
        }
        self.hall_command(cmd).await
    }

    /// Stop the daemon and start it again with the same settings and state directory, as
    /// a restart does; returns once every board is back online.
    pub async fn restart_daemon(&mut self) {
        self.stop().await;
        self.hall = Some(hall::start(self.settings.clone()).expect("the daemon restarts"));
        for b in &self.settings.boards {
            let topic = self.topic(&format!("board/{}/availability", b.id));
            self.watcher
                .wait(&format!("{topic} online again"), |m| {
                    m.topic == topic && m.text() == "online"
                })
                .await;
        }
    }

    pub async fn stop(&mut self) {
        if let Some(h) = self.hall.take() {
            h.stop().await;
        }
    }
}

/// The `state` (`online`, `offline`) of `node`'s status, when `m` is that status.
pub fn node_state(m: &Msg, node: &str) -> Option<String> {
    (m.topic == format!("hallclock/{HALL}/node/{node}/status"))
        .then(|| m.json()["state"].as_str().unwrap_or("").to_string())
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A `pressed` event by `side`, placed within `within_ms` of the real press (the clock's
/// resolution is a second).
pub fn assert_press_placed(p: &Value, side: &str, pressed_at: i64, within_ms: i64) {
    assert_eq!(p["side"], side, "{p}");
    let at = p["at"].as_i64().expect("at");
    assert!(
        (at - pressed_at).abs() <= within_ms,
        "the press is placed {} ms from the real one ({p})",
        at - pressed_at
    );
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    N.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Clone)]
pub struct Msg {
    pub topic: String,
    pub payload: Vec<u8>,
    pub retained: bool,
    /// Already returned by a `wait`: each message satisfies one wait at most.
    pub used: bool,
}

impl Msg {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.payload).unwrap_or(Value::Null)
    }

    /// Nothing stands on the topic: an empty payload, or a cleared alert
    /// (`{"cleared":true,"id":…}`, what the daemon publishes when an alert is resolved).
    pub fn cleared(&self) -> bool {
        cleared(&self.payload)
    }

    /// Something stands on the topic: not [`Msg::cleared`].
    pub fn raised(&self) -> bool {
        !self.cleared()
    }
}

/// Whether a payload on an alert topic says that no alert stands: empty or a cleared alert.
pub fn cleared(payload: &[u8]) -> bool {
    payload.is_empty()
        || serde_json::from_slice::<Value>(payload).is_ok_and(|v| v["cleared"] == true)
}

/// An MQTT client subscribed to `hallclock/#`, keeping every message it receives.
pub struct Watcher {
    client: AsyncClient,
    rx: mpsc::UnboundedReceiver<Msg>,
    pub seen: Vec<Msg>,
}

impl Watcher {
    pub async fn connect(port: u16, id: &str) -> Watcher {
        let mut opts = MqttOptions::new(id, "127.0.0.1", port);
        opts.set_keep_alive(Duration::from_secs(5));
        // Large both ways: tests send (and so receive back) commands of up to 10 MB.
        opts.set_max_packet_size(268_435_455, 64 << 20);
        let (client, mut eventloop) = AsyncClient::new(opts, 1024);
        let (tx, rx) = mpsc::unbounded_channel();
        let sub = client.clone();
        tokio::spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        let _ = sub.subscribe("hallclock/#", QoS::AtLeastOnce).await;
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        if tx
                            .send(Msg {
                                topic: p.topic.clone(),
                                payload: p.payload.to_vec(),
                                retained: p.retain,
                                used: false,
                            })
                            .is_err()
                        {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        });
        Watcher {
            client,
            rx,
            seen: Vec::new(),
        }
    }

    pub async fn publish(&self, topic: &str, payload: &[u8]) {
        self.client
            .publish(topic, QoS::AtLeastOnce, false, payload.to_vec())
            .await
            .expect("publish");
    }

    /// A retained message, as a run before this one would have left on the broker.
    pub async fn publish_retained(&self, topic: &str, payload: &[u8]) {
        self.client
            .publish(topic, QoS::AtLeastOnce, true, payload.to_vec())
            .await
            .expect("publish");
    }

    /// The first message not yet used by a wait that `want` accepts (already received or
    /// arriving within `WAIT`); panics after `WAIT` with what was seen instead (a failure
    /// is a failure, not a hang).
    pub async fn wait(&mut self, what: &str, mut want: impl FnMut(&Msg) -> bool) -> Msg {
        self.drain();
        if let Some(m) = self.seen.iter_mut().find(|m| !m.used && want(m)) {
            m.used = true;
            return m.clone();
        }
        let deadline = tokio::time::Instant::now() + WAIT;
        let start = self.seen.len();
        loop {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(mut m)) => {
                    if want(&m) {
                        m.used = true;
                        self.seen.push(m.clone());
                        return m;
                    }
                    self.seen.push(m);
                }
                _ => {
                    let tail: Vec<String> = self.seen[start.saturating_sub(10)..]
                        .iter()
                        .rev()
                        .take(40)
                        .map(|m| format!("{} {}", m.topic, m.text()))
                        .collect();
                    panic!(
                        "waited {WAIT:?} for {what}; last messages seen:\n{}",
                        tail.join("\n")
                    );
                }
            }
        }
    }

    /// The newest state of `board` received so far.
    pub fn latest_state(&mut self, board: &str) -> Value {
        let topic = format!("hallclock/{HALL}/board/{board}/state");
        self.drain()
            .iter()
            .rev()
            .find(|m| m.topic == topic)
            .map(Msg::json)
            .unwrap_or(Value::Null)
    }

    /// Wait for an event of `kind` on `board`'s event topic.
    pub async fn event(&mut self, board: &str, kind: &str) -> Value {
        let topic = format!("hallclock/{HALL}/board/{board}/event");
        self.wait(&format!("{kind} on {board}"), |m| {
            m.topic == topic && m.json()["event"] == kind
        })
        .await
        .json()
    }

    /// Wait for a state of `board` that `want` accepts.
    pub async fn state(
        &mut self,
        board: &str,
        what: &str,
        mut want: impl FnMut(&Value) -> bool,
    ) -> Value {
        let topic = format!("hallclock/{HALL}/board/{board}/state");
        self.wait(what, |m| m.topic == topic && want(&m.json()))
            .await
            .json()
    }

    /// Everything received so far (and drain what is queued).
    pub fn drain(&mut self) -> &[Msg] {
        while let Ok(m) = self.rx.try_recv() {
            self.seen.push(m);
        }
        &self.seen
    }
}

/// `hallclock run` as a child process (so that kill -9 is real and the broker publishes
/// its last will), its log beside its configuration; killed when dropped.
pub struct Daemon(pub Child);

impl Daemon {
    pub fn spawn(config: &std::path::Path) -> Daemon {
        Self::spawn_env(config, &[])
    }

    /// With environment variables (the test hook that moves a node's clock).
    pub fn spawn_env(config: &std::path::Path, env: &[(&str, &str)]) -> Daemon {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(config.with_file_name("daemon.log"))
            .expect("log file");
        Self::spawn_logged(config, env, log)
    }

    /// Its log (stderr) into `log`.
    pub fn spawn_logged(
        config: &std::path::Path,
        env: &[(&str, &str)],
        log: std::fs::File,
    ) -> Daemon {
        Daemon(
            Command::new(env!("CARGO_BIN_EXE_hallclock"))
                .args(["run", "--config"])
                .arg(config)
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("the daemon starts"),
        )
    }

    /// SIGKILL: no clean stop, nothing published by the daemon itself.
    pub fn kill_9(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill_9();
    }
}

/// `hallclock command` for the hall on the broker at `broker`, signed by the test chief
/// (its key written into `dir`): its exit code and the JSON lines it printed.
pub async fn hall_command_cli(
    dir: &std::path::Path,
    broker: u16,
    command: Value,
) -> (Option<i32>, Vec<Value>) {
    let key = dir.join("chief.key");
    std::fs::write(&key, format!("{}\n", key_of("chief").to_hex())).expect("key");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_hallclock"))
            .args([
                "command",
                "--hall",
                HALL,
                "--arbiter",
                "chief",
                "--key-file",
            ])
            .arg(&key)
            .args(["--broker", &format!("127.0.0.1:{broker}")])
            .arg(command.to_string())
            .output()
            .expect("the binary runs")
    })
    .await
    .expect("joined");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "not JSON ({e}): {l}\nstderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect();
    (out.status.code(), lines)
}

/// One HTTP/1.1 GET to a node's web server: status and body.
pub async fn http_get(port: u16, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return (0, String::new());
    };
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return (0, String::new());
    }
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut raw)).await;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let Some((head, body)) = raw.split_once("\r\n\r\n") else {
        return (0, raw);
    };
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

/// Polls `path` on `port` until its body satisfies `want`.
pub async fn get_until(port: u16, path: &str, what: &str, want: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = http_get(port, path).await;
        if status == 200 && want(&body) {
            return body;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}; {path} answered {status}:\n{body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The retained picture a page gets first from `/api/public/feed` on `port`: topic →
/// payload, as of the snapshot's `ready`.
pub async fn public_snapshot(port: u16) -> std::collections::BTreeMap<String, String> {
    feed_snapshot(port, "/api/public/feed", None).await
}

/// The same of the feed at `path`, with a session `cookie` (the arbiters' `/api/feed`).
pub async fn feed_snapshot(
    port: u16,
    path: &str,
    cookie: Option<&str>,
) -> std::collections::BTreeMap<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut out = std::collections::BTreeMap::new();
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return out;
    };
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{cookie}\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return out;
    }
    let mut text = Vec::new();
    let mut buf = [0u8; 16384];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !String::from_utf8_lossy(&text).contains("event: ready") {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => text.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&text).into_owned();
    // Chunked transfer: frames are still whole lines of `data: `; a chunk size line between
    // them is not one.
    for frame in text.split("\n\n") {
        let data: Vec<&str> = frame
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        if frame.lines().any(|l| l.starts_with("event: ")) || data.len() < 2 {
            continue;
        }
        out.insert(data[0].to_string(), data[1..].join("\n"));
    }
    out
}

/// Polls the dashboard on `port` (its public feed) until `want` holds of its snapshot.
pub async fn feed_until(
    port: u16,
    what: &str,
    want: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
) -> std::collections::BTreeMap<String, String> {
    // Generous: over bridges a picture converges within seconds, not at once.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    loop {
        let snap = public_snapshot(port).await;
        if want(&snap) {
            return snap;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}; the feed had {snap:#?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
