//! Hall load: N simulated boards against the real daemon (`hallclock run`, a separate
//! process) and a real Mosquitto, measured at an MQTT subscriber on loopback.
//!
//!     cargo bench --bench hall_load                      (BOARDS=100,500,1000 SECONDS=60)
//!     BOARDS=1000 SECONDS=120 cargo bench --bench hall_load
//!
//! Per board count N:
//! * most boards press about every 10 s (a random phase per board, fixed seed `SEED`);
//!   press -> `state` latency is counted from the instant the simulator started writing
//!   the lever frame to the pseudo-terminal (`BoardHandle::last_bwtime_write`) to the
//!   arrival at the subscriber of the first `board/<b>/state` whose `seq` is at least the
//!   `pressed` event's. The write start, not the `press()` call, is the origin: the time
//!   between the two is the simulator's own task waking up in this (busy) process, which
//!   a real board does not have; it is printed separately ("simulator wake-up").
//! * a subset of boards never press; the arbiter's `set_time` gives White on each of them
//!   just enough time for its flag to fall at a planned instant spread over the window.
//!   flag -> `event` latency is the arrival wall time of `flag_fell` minus its `at` (the
//!   exact instant the time ran out, as the daemon computed it).
//! * the daemon's CPU (utime + stime from /proc/<pid>/stat over the window, % of one core)
//!   and peak RSS (VmHWM) are its own: the simulator and the subscriber live here.
//! * the daemon's fsyncs per second over the window (`fdatasync` + `fsync` system calls,
//!   counted in the kernel by `perf stat` on the syscall tracepoints, which adds no stop
//!   per call as `strace` would); "n/a" where perf or its tracepoints are not available.
//!
//! `NODES=5` (issue 23) splits the boards among that many daemons (hall nodes `node-1` …),
//! each behind its own Mosquitto bridged to a central one with the packaged example
//! `packaging/mosquitto/bridge.conf`; the subscriber and the commands are on the central
//! broker, so press -> `state` crosses a bridge, and `start_round` is answered once the
//! last node has. The CPU is the daemons' sum, the RSS the largest daemon's (each node's
//! in the details); the restart after `kill -9` is measured for one daemon only.
//!
//! Knobs: `HALLCLOCK_BIN` runs another build of the daemon (default: the one cargo just
//! built); `PAIRINGS=0` sends the round's pairings in one command instead of chunks of 100;
//! `BROKER_NODELAY=1` turns Nagle's algorithm off in Mosquitto (it is on by default, and
//! shows in the latency tail); `SYNC_WINDOW_MS` sets the daemons' `hall.sync_window_ms`
//! (default: the daemon's, 0). A board count that fails (e.g. a daemon that cannot keep
//! its MQTT connection) is reported as a failed row and the next count runs.
//!
//! The web side (issue 37; hall_load/web.rs), off by default (the daemon's `[web]` left
//! out of its configuration, as before): `DASHBOARDS=5` logs that many arbiters'
//! dashboard sessions in over HTTP and keeps their SSE streams of `/api/feed` open, read
//! to the end as browsers would; `BROADCAST_POLL_MS=2000` fetches the current round's
//! `games.pgn` that often with `If-None-Match`, as a lichess broadcast polls. Their bytes,
//! answers and errors in the window are in the details and a column of the table.
//!
//! `ROUNDS=9` (hall_load/event.rs) plays a whole event at speed instead of a window:
//! real games (the demo's players) of up to `PLIES` half-moves, `MOVE_MS` apart, round
//! after round, and reports the journal's used bytes, the PGN archives, the log and the
//! fsyncs after it.
//! Under `cargo test --all-targets` (no `--bench`) it is a short smoke run.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hallclock::link::testing::scratch_dir;
use hallclock::sim::{BoardHandle, Sim, SimConfig};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[path = "hall_load/event.rs"]
mod event;
#[path = "hall_load/web.rs"]
mod web;

const HALL: &str = "load";
/// Presses on one board are this far apart (both players together: a move every 10 s).
const PRESS_EVERY: Duration = Duration::from_secs(10);
/// Pairings per `start_round` command by default (see `start_round` for why not all at
/// once); `PAIRINGS=0` sends them all in one command.
const PAIRINGS_PER_COMMAND: usize = 100;

fn main() {
    // `cargo bench` passes `--bench`; under `cargo test --all-targets` this is a smoke run.
    let benching = std::env::args().any(|a| a == "--bench");
    let counts: Vec<usize> = match std::env::var("BOARDS") {
        Ok(s) => s
            .split(',')
            .map(|p| {
                p.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("BOARDS: `{p}` is not a number"))
            })
            .collect(),
        Err(_) if benching => vec![100, 500, 1000],
        Err(_) => vec![12],
    };
    let seconds: u64 = env_num("SECONDS").unwrap_or(if benching { 60 } else { 8 });
    let seed: u64 = env_num("SEED").unwrap_or(0x5eed_ba11);
    let nodes: usize = env_num("NODES").unwrap_or(1).max(1);

    if Command::new("mosquitto")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        println!(
            "hall_load: mosquitto is not installed (apt-get install mosquitto, or ./scripts/test); nothing measured"
        );
        std::process::exit(if benching { 1 } else { 0 });
    }
    let daemon = std::env::var_os("HALLCLOCK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_hallclock")));
    let max = counts.iter().copied().max().unwrap_or(0);
    raise_fd_limit(max);

    println!("hall_load: {}", machine());
    println!(
        "hall_load: boards {counts:?} on {nodes} node(s), {seconds} s window each, a press every {PRESS_EVERY:?} per pressing board, seed {seed:#x}, daemon {}",
        daemon.display()
    );
    // ROUNDS: a whole event at speed instead of a window (hall_load/event.rs).
    if let Some(rounds) = env_num::<u32>("ROUNDS").filter(|r| *r > 0) {
        for &n in &counts {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(event::run(n, rounds, &daemon));
            rt.shutdown_timeout(Duration::from_secs(2));
        }
        return;
    }
    let mut rows = Vec::new();
    for &n in &counts {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        // A board count the daemon cannot serve is a result too: report it and go on.
        let row = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(run(n, nodes, Duration::from_secs(seconds), seed, &daemon))
        }))
        .unwrap_or_else(|panic| failed_row(n, panic));
        println!("{}", row.details);
        rows.push(row);
        // The boards' tasks and pseudo-terminals go with the runtime.
        rt.shutdown_timeout(Duration::from_secs(2));
    }
    println!("\n{}", table(&rows));
}

fn env_num<T: std::str::FromStr>(name: &str) -> Option<T> {
    let s = std::env::var(name).ok()?;
    match s.trim().parse() {
        Ok(v) => Some(v),
        Err(_) => panic!("{name}: `{s}` is not a number"),
    }
}

/// Every board costs this process two descriptors (the pseudo-terminal's master, and the
/// slave it keeps open so the master never hangs up) and the daemon one; the default soft
/// limit on many systems (1024) is too low for 1000 boards. The children inherit it.
fn raise_fd_limit(boards: usize) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let need = (boards * 2 + 256) as u64;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    if soft >= need {
        return;
    }
    if hard < need {
        panic!(
            "{boards} boards need about {need} file descriptors; the hard limit is {hard} (raise it, e.g. in /etc/security/limits.conf)"
        );
    }
    if let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, need.max(soft), hard) {
        panic!("cannot raise the file descriptor limit from {soft} to {need}: {e}");
    }
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("machine: nproc {cpus}, {model}, load average {}", loadavg())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn wall_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn board_id(n: usize) -> String {
    format!("board-{n:03}")
}

/// splitmix64: reproducible phases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, d).
    fn below(&mut self, d: Duration) -> Duration {
        Duration::from_nanos(self.next() % (d.as_nanos().max(1) as u64))
    }
}

// ---------------------------------------------------------------------------------------
// Processes: Mosquitto and the daemon.

/// A child process killed when dropped (a panicking bench leaves nothing behind).
struct Proc {
    child: Option<Child>,
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM, then SIGKILL after `patience`; returns how it ended.
    fn stop(&mut self, patience: Duration) -> String {
        let Some(mut c) = self.child.take() else {
            return "not running".into();
        };
        if let Ok(Some(status)) = c.try_wait() {
            return format!("had already exited ({status})");
        }
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(c.id().to_string())
            .status();
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = c.try_wait() {
                return format!("stopped on SIGTERM ({status})");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
        format!("did not stop within {patience:?} of SIGTERM; killed")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

async fn start_mosquitto(dir: &Path) -> (Proc, u16) {
    start_mosquitto_with(dir, "").await
}

async fn start_mosquitto_with(dir: &Path, extra: &str) -> (Proc, u16) {
    std::fs::create_dir_all(dir).expect("the broker's directory");
    let port = free_port();
    let conf = dir.join("mosquitto.conf");
    // Mosquitto leaves Nagle's algorithm on by default; BROKER_NODELAY=1 turns it off on
    // its sockets (to see what it costs the latency tail).
    let nodelay = if std::env::var("BROKER_NODELAY").is_ok_and(|v| v == "1") {
        "set_tcp_nodelay true\n"
    } else {
        ""
    };
    // No limit to what the broker queues for one client: the bench's subscriber takes
    // everything at QoS 1, and Mosquitto's default (1000 beyond 20 in flight) dropped most
    // of a 5000-board restart's 15,000 publications on their way to it, so the restart
    // was never seen whole (docs/BENCHMARKS.md). A limit of the rig's subscriber, not of
    // the daemon; docs/OPERATIONS.md says what a hall that size sets.
    std::fs::write(
        &conf,
        format!(
            "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\n{nodelay}{extra}"
        ),
    )
    .expect("write mosquitto.conf");
    let child = Command::new("mosquitto")
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto");
    let proc = Proc { child: Some(child) };
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (proc, port);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("mosquitto did not start on port {port}");
}

/// A node's own Mosquitto, bridged to the central one at `central` with the packaged
/// example (hall, node and address substituted; the bench's brokers take anyone, so the
/// example's account is not checked).
async fn start_bridged_mosquitto(dir: &Path, node: &str, central: u16) -> (Proc, u16) {
    let bridge = include_str!("../packaging/mosquitto/bridge.conf")
        .replace("hall-a", HALL)
        .replace("room-2", node)
        .replace("central.hall.lan:1883", &format!("127.0.0.1:{central}"));
    start_mosquitto_with(dir, &bridge).await
}

/// The bench's arbiter (a chief), so that the commands measured take the signed path
/// every hall takes.
const BENCH_ARBITER: &str = "bench";
const BENCH_KEY: &str = "62656e6368206b65793a207468652068616c6c2773206c6f6164206d65617375";

fn bench_key() -> hallclock::intake::auth::Key {
    hallclock::intake::auth::Key::from_hex(BENCH_KEY).expect("the bench key")
}

/// `web`: the port of the daemon's web server (dashboard and broadcast), loopback only;
/// `None` leaves `[web]` out, as the bench always did (the daemon's default).
fn daemon_config(
    dir: &Path,
    port: u16,
    boards: &[BoardHandle],
    node: Option<&str>,
    web: Option<u16>,
) -> PathBuf {
    std::fs::create_dir_all(dir).expect("the node's directory");
    let arbiters = dir.join("arbiters.toml");
    web::arbiters(BENCH_ARBITER, BENCH_KEY, web.is_some())
        .save(&arbiters)
        .expect("write the bench's arbiters file");
    let mut toml = format!(
        "[hall]\nid = \"{HALL}\"\n{}{}state_dir = \"{}\"\n\n[broker]\nhost = \"127.0.0.1\"\nport = {port}\n\n[log]\nlevel = \"info\"\n\n[security]\narbiters = \"{}\"\n",
        node.map(|n| format!("node = \"{n}\"\n"))
            .unwrap_or_default(),
        env_num::<u64>("SYNC_WINDOW_MS")
            .map(|ms| format!("sync_window_ms = {ms}\n"))
            .unwrap_or_default(),
        dir.join("state").display(),
        arbiters.display()
    );
    if let Some(p) = web {
        toml.push_str(&web::config_section(p));
    }
    for b in boards {
        let _ = write!(
            toml,
            "\n[[boards]]\nid = \"{}\"\nport = \"{}\"\nwhite = \"left\"\n",
            board_id(b.number()),
            b.path().display()
        );
    }
    let path = dir.join("hallclock.toml");
    std::fs::write(&path, toml).expect("write hallclock.toml");
    path
}

/// CPU seconds (user + system, all threads) of a process so far.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / clock_ticks())
}

/// The machine's CPU time by kind, from the first line of /proc/stat (all CPUs summed).
#[derive(Clone, Copy)]
struct MachineTicks {
    busy: f64,
    steal: f64,
    idle: f64,
}

impl MachineTicks {
    fn now() -> Option<MachineTicks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let f: Vec<f64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .map_while(|v| v.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        let get = |i: usize| f.get(i).copied().unwrap_or(0.0);
        let hz = clock_ticks();
        Some(MachineTicks {
            busy: (get(0) + get(1) + get(2) + get(5) + get(6)) / hz,
            steal: get(7) / hz,
            idle: (get(3) + get(4)) / hz,
        })
    }

    /// Core-seconds busy, stolen by the hypervisor and idle since `earlier`.
    fn since(&self, earlier: &MachineTicks) -> (f64, f64, f64) {
        (
            self.busy - earlier.busy,
            self.steal - earlier.steal,
            self.idle - earlier.idle,
        )
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Summed over a process's threads (/proc/<pid>/task/*/schedstat): ns on a CPU, ns waiting
/// in a run queue (runnable, but the CPU busy with something else), timeslices. The wait
/// is what a busy machine adds to every latency.
#[derive(Clone, Copy, Default)]
struct Sched {
    run_ns: u64,
    wait_ns: u64,
    slices: u64,
}

fn schedstat(pid: u32) -> Option<Sched> {
    let mut total = Sched::default();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        let f: Vec<u64> = s
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if let [run, wait, slices] = f[..] {
            total.run_ns += run;
            total.wait_ns += wait;
            total.slices += slices;
        }
    }
    Some(total)
}

fn sched_text(a: Option<Sched>, b: Option<Sched>, seconds: f64) -> String {
    let (Some(a), Some(b)) = (a, b) else {
        return "no schedstat".into();
    };
    let wait = b.wait_ns.saturating_sub(a.wait_ns) as f64;
    let slices = b.slices.saturating_sub(a.slices).max(1) as f64;
    format!(
        "{:.1} ms/s runnable but waiting for a CPU, {:.0} µs per wake-up on average ({:.0} wake-ups/s)",
        wait / 1e6 / seconds,
        wait / 1e3 / slices,
        slices / seconds
    )
}

/// A `VmXxx:` line of /proc/<pid>/status, in MB.
fn vm_mb(pid: u32, key: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

// ---------------------------------------------------------------------------------------
// The subscriber.

/// One message as the subscriber received it.
struct Msg {
    topic: String,
    payload: Vec<u8>,
    retained: bool,
    at: Instant,
    wall_us: i64,
}

impl Msg {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.payload).unwrap_or(Value::Null)
    }

    /// `board-007` of `hallclock/load/board/board-007/state`, and `state`.
    fn board_topic(&self) -> Option<(&str, &str)> {
        let rest = self.topic.strip_prefix("hallclock/")?;
        let rest = rest.strip_prefix(HALL)?.strip_prefix("/board/")?;
        rest.split_once('/')
    }
}

/// Subscribed to `hallclock/<hall>/#` on a thread and runtime of its own, so that arrival
/// times are not delayed behind the simulator's thousand tasks.
struct Subscriber {
    client: AsyncClient,
    rx: mpsc::UnboundedReceiver<Msg>,
    seen: Vec<Msg>,
}

impl Subscriber {
    fn start(port: u16) -> Subscriber {
        let mut opts = MqttOptions::new("hall-load-watcher", "127.0.0.1", port);
        opts.set_keep_alive(Duration::from_secs(30));
        opts.set_max_packet_size(1 << 22, 1 << 22);
        let (client, mut eventloop) = AsyncClient::new(opts, 4096);
        let (tx, rx) = mpsc::unbounded_channel();
        let sub = client.clone();
        std::thread::Builder::new()
            .name("subscriber".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("subscriber runtime");
                rt.block_on(async move {
                    loop {
                        match eventloop.poll().await {
                            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                                let _ = sub
                                    .subscribe(format!("hallclock/{HALL}/#"), QoS::AtLeastOnce)
                                    .await;
                            }
                            Ok(Event::Incoming(Packet::Publish(p))) => {
                                let m = Msg {
                                    at: Instant::now(),
                                    wall_us: wall_us(),
                                    topic: p.topic,
                                    payload: p.payload.to_vec(),
                                    retained: p.retain,
                                };
                                if tx.send(m).is_err() {
                                    return;
                                }
                            }
                            Ok(_) => {}
                            Err(e) => {
                                if tx.is_closed() {
                                    return;
                                }
                                eprintln!("hall_load: subscriber: {e}");
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                        }
                    }
                });
            })
            .expect("subscriber thread");
        Subscriber {
            client,
            rx,
            seen: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(m) = self.rx.try_recv() {
            self.seen.push(m);
        }
    }

    /// A command, signed as the bench's arbiter.
    async fn publish(&self, topic: String, payload: Value) {
        let signed = hallclock::intake::auth::sign_now(
            BENCH_ARBITER,
            &bench_key(),
            &topic,
            payload,
            hallclock::rules::Millis(wall_us() / 1000),
        );
        self.client
            .publish(topic, QoS::AtLeastOnce, false, signed)
            .await
            .expect("the subscriber's client is running");
    }

    /// Waits until `done` holds for what has been received, at most `timeout`; whether it
    /// did (a failure is reported, not a hang).
    async fn until(
        &mut self,
        what: &str,
        timeout: Duration,
        mut done: impl FnMut(&[Msg]) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            self.drain();
            if done(&self.seen) {
                return true;
            }
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(m)) => self.seen.push(m),
                Ok(None) => panic!("the subscriber stopped while waiting for {what}"),
                Err(_) => return false,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// One run.

struct Press {
    board: String,
    call: Instant,
    write: Option<Instant>,
}

struct Row {
    boards: usize,
    presses: usize,
    press: Option<Stats>,
    flags: usize,
    flag: Option<Stats>,
    cpu_pct: f64,
    rss_mb: f64,
    syncs_per_s: Option<f64>,
    /// The dashboards' and the broadcast poll's cell, when they were on.
    web: Option<String>,
    details: String,
}

#[derive(Clone, Copy)]
struct Stats {
    p50: f64,
    p99: f64,
    max: f64,
}

/// p50/p99/max of values in ms.
fn stats(mut v: Vec<f64>) -> Option<Stats> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pct = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    Some(Stats {
        p50: pct(0.50),
        p99: pct(0.99),
        max: v[v.len() - 1],
    })
}

fn fmt_stats(s: Option<Stats>) -> String {
    match s {
        Some(s) => format!("{:.2} / {:.2} / {:.2}", s.p50, s.p99, s.max),
        None => "—".into(),
    }
}

async fn run(n: usize, nodes: usize, window: Duration, seed: u64, daemon: &Path) -> Row {
    let mut rng = Rng(seed ^ n as u64);
    let dir = scratch_dir(&format!("hall-load-{n}"));
    // The central broker (the only one for one node): the subscriber and the commands.
    let (mut broker, port) = start_mosquitto(&dir).await;

    let mut cfg = SimConfig::new(n, dir.join("ports"));
    cfg.serial_base = 10000;
    let sim = Sim::start(cfg).await.expect("the simulator starts");
    // One node: the daemon on the central broker, as before. Several: each node's boards
    // (consecutive numbers) behind its own bridged broker.
    let mut local_brokers: Vec<Proc> = Vec::new();
    let mut configs: Vec<PathBuf> = Vec::new();
    // The web side (DASHBOARDS, BROADCAST_POLL_MS) on the first daemon only.
    let web_load = web::WebLoad::from_env();
    let web_port = web_load.on().then(free_port);
    if nodes == 1 {
        configs.push(daemon_config(&dir, port, sim.boards(), None, web_port));
    } else {
        for (i, boards) in sim.boards().chunks(n.div_ceil(nodes)).enumerate() {
            let node = format!("node-{}", i + 1);
            let node_dir = dir.join(&node);
            let (b, local) = start_bridged_mosquitto(&node_dir.join("broker"), &node, port).await;
            local_brokers.push(b);
            let web = if i == 0 { web_port } else { None };
            configs.push(daemon_config(&node_dir, local, boards, Some(&node), web));
        }
    }
    let config = configs[0].clone();

    let mut sub = Subscriber::start(port);
    let log_path = dir.join("daemon.log");
    let mut procs: Vec<Proc> = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        let path = if i == 0 {
            log_path.clone()
        } else {
            dir.join(format!("daemon-{}.log", i + 1))
        };
        let log = std::fs::File::create(&path).expect("create daemon.log");
        let child = Command::new(daemon)
            .arg("run")
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", daemon.display()));
        procs.push(Proc { child: Some(child) });
    }
    let pids: Vec<u32> = procs.iter().map(Proc::pid).collect();
    let pid = pids[0];
    let t_spawn = Instant::now();

    // Every board online, as the daemon says over MQTT. A shortfall is a finding (lost
    // messages), not a reason to stop: the run goes on and reports it.
    let mut notes: Vec<String> = Vec::new();
    let setup_wait = Duration::from_secs(20) + Duration::from_millis(20 * n as u64);
    let avail = |m: &Msg| m.board_topic().is_some_and(|(_, k)| k == "availability");
    let online_count = |seen: &[Msg]| {
        let mut online: HashMap<&str, bool> = HashMap::new();
        for m in seen.iter().filter(|m| avail(m)) {
            if let Some((b, _)) = m.board_topic() {
                online.insert(b, m.payload == b"online");
            }
        }
        online.values().filter(|o| **o).count()
    };
    if !sub
        .until("every board online", setup_wait, |seen| {
            online_count(seen) == n
        })
        .await
    {
        notes.push(format!(
            "only {} of {n} boards were ever seen `online` on their availability topic within {setup_wait:?}",
            online_count(&sub.seen)
        ));
        notes.push(retained_online(port, n));
    }
    let online_after = t_spawn.elapsed();
    let web = match web_port {
        Some(p) => Some(web::start(web_load, ([127, 0, 0, 1], p).into(), BENCH_ARBITER).await),
        None => None,
    };

    // The round: scheduled 3 s ahead, so every game exists before the clocks start.
    let start_ms = wall_us() / 1000 + 3000;
    let commands = start_round(&mut sub, n, nodes, start_ms, 1).await;
    let started = |seen: &[Msg]| {
        seen.iter()
            .filter(|m| {
                m.board_topic().is_some_and(|(_, k)| k == "event")
                    && m.json()["event"] == "clock_started"
            })
            .count()
    };
    if !sub
        .until("clock_started on every board", setup_wait, |seen| {
            started(seen) >= n
        })
        .await
    {
        notes.push(format!(
            "only {} of {n} `clock_started` events arrived within {setup_wait:?}",
            started(&sub.seen)
        ));
    }

    // The flag boards: evenly spread, a tenth of the hall (at least 20, at most half), each
    // flag planned at an instant spread over the window.
    let flag_count = (n / 10).max(20).min(n / 2);
    let flag_boards: Vec<usize> = (0..flag_count).map(|i| 1 + i * n / flag_count).collect();
    let warmup = Duration::from_secs(3);
    let window_start = Instant::now() + warmup + Duration::from_millis(500);
    let window_start_wall_ms =
        wall_us() / 1000 + (window_start - Instant::now()).as_millis() as i64;
    let margin = Duration::from_secs(1).min(window / 4);
    for (i, &b) in flag_boards.iter().enumerate() {
        let offset = margin + (window - 2 * margin) * i as u32 / flag_count as u32;
        let flag_ms = window_start_wall_ms + offset.as_millis() as i64;
        let remaining = flag_ms - wall_us() / 1000;
        let id = board_id(b);
        let tx = format!("flag-{id}");
        sub.publish(
            format!("hallclock/{HALL}/board/{id}/set"),
            json!({"transaction": tx, "arbiter": "IA Bench", "action": "set_time",
                   "side": "white", "remaining_ms": remaining, "reason": "load benchmark: a planned flag"}),
        )
        .await;
    }
    let resp = |m: &Msg| m.board_topic().is_some_and(|(_, k)| k == "response");
    if !sub
        .until("set_time responses", setup_wait, |seen| {
            seen.iter().filter(|m| resp(m)).count() >= flag_count
        })
        .await
    {
        notes.push(format!(
            "only {} of {flag_count} set_time responses arrived",
            sub.seen.iter().filter(|m| resp(m)).count()
        ));
    }
    let refused: Vec<String> = sub
        .seen
        .iter()
        .filter(|m| resp(m) && m.json()["status"] != "ok")
        .map(|m| String::from_utf8_lossy(&m.payload).into_owned())
        .collect();
    assert!(refused.is_empty(), "set_time refused: {refused:?}");

    // The presses: every other board, a random phase each.
    let mut schedule: Vec<(Instant, usize)> = Vec::new();
    for b in (1..=n).filter(|b| !flag_boards.contains(b)) {
        let mut t = window_start + rng.below(PRESS_EVERY);
        while t < window_start + window {
            schedule.push((t, b));
            t += PRESS_EVERY;
        }
    }
    schedule.sort();
    let presses: Arc<Mutex<Vec<Press>>> = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<BoardHandle> = sim.boards().to_vec();
    let recorder = presses.clone();
    let presser = tokio::spawn(async move {
        let mut spinners = Vec::new();
        for (at, b) in schedule {
            tokio::time::sleep_until(at.into()).await;
            let board = handles[b - 1].clone();
            let recorder = recorder.clone();
            let call = Instant::now();
            board.press();
            // The lever frame is the first BWTIME written after the press; the simulator
            // records a write's start once the write returned, so watch for it.
            spinners.push(tokio::spawn(async move {
                let give_up = Instant::now() + Duration::from_secs(1);
                let write = loop {
                    match board.last_bwtime_write() {
                        Some(w) if w >= call => break Some(w),
                        _ if Instant::now() > give_up => break None,
                        _ => tokio::task::yield_now().await,
                    }
                };
                if let Ok(mut v) = recorder.lock() {
                    v.push(Press {
                        board: board_id(board.number()),
                        call,
                        write,
                    });
                }
            }));
        }
        for s in spinners {
            let _ = s.await;
        }
    });

    tokio::time::sleep_until(window_start.into()).await;
    let load_start = loadavg();
    let cpus =
        |pids: &[u32]| -> Vec<Option<f64>> { pids.iter().map(|p| cpu_seconds(*p)).collect() };
    let cpu0 = cpus(&pids);
    let (sched0, broker_sched0) = (schedstat(pid), schedstat(broker.pid()));
    let me = std::process::id();
    let (bench0, broker0) = (cpu_seconds(me), cpu_seconds(broker.pid()));
    let syncs = SyncCounter::start(pid);
    let web0 = web.as_ref().map(|w| {
        web::clear_poll_times(&w.counters);
        w.counters.snapshot()
    });
    let t0 = Instant::now();
    tokio::time::sleep_until((window_start + window).into()).await;
    let elapsed = t0.elapsed().as_secs_f64();
    let web_report = web.as_ref().zip(web0).map(|(w, a)| {
        let b = w.counters.snapshot();
        w.report(&a, &b, elapsed)
    });
    if let Some(w) = web {
        w.stop();
    }
    let syncs_per_s = syncs
        .and_then(SyncCounter::stop)
        .map(|n| n as f64 / elapsed);
    let pct = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => 100.0 * (b - a) / elapsed,
        _ => f64::NAN,
    };
    let per_node_cpu: Vec<f64> = cpu0
        .iter()
        .zip(cpus(&pids))
        .map(|(a, b)| pct(*a, b))
        .collect();
    let cpu_pct: f64 = per_node_cpu.iter().sum();
    let sched = sched_text(sched0, schedstat(pid), elapsed);
    let broker_sched = sched_text(broker_sched0, schedstat(broker.pid()), elapsed);
    let bench_pct = pct(bench0, cpu_seconds(me));
    let broker_pct = pct(broker0, cpu_seconds(broker.pid()));
    let load_end = loadavg();
    let _ = presser.await;
    // Stragglers.
    tokio::time::sleep(Duration::from_secs(2)).await;
    sub.drain();
    let per_node_rss: Vec<f64> = pids
        .iter()
        .map(|p| vm_mb(*p, "VmHWM:").unwrap_or(f64::NAN))
        .collect();
    let rss_mb = per_node_rss.iter().copied().fold(f64::NAN, f64::max);
    if nodes > 1 {
        let list = |v: &[f64], unit: &str| {
            v.iter()
                .map(|x| format!("{x:.1}{unit}"))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        notes.push(format!(
            "{nodes} nodes, each behind its own bridged Mosquitto: CPU per node {} of one core (the table has their sum), peak RSS per node {} (the table has the largest); the fsyncs, threads and scheduling are node-1's",
            list(&per_node_cpu, " %"),
            list(&per_node_rss, " MB")
        ));
    }
    let rss_now = vm_mb(pid, "VmRSS:").unwrap_or(f64::NAN);
    let threads = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Threads:"))
                .map(|l| l[8..].trim().to_string())
        })
        .unwrap_or_default();
    // Restart after `kill -9` (issue 6's figure): the journal of the whole window is
    // replayed, every board reopened, reconciled and re-programmed. Measured until every
    // board has published a state `online` again. RESTART=0 skips it.
    let mut proc = procs.remove(0);
    if nodes == 1 && env_num::<u8>("RESTART").unwrap_or(1) != 0 {
        if let Some(c) = proc.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let mark = sub.seen.len();
        let t_kill = Instant::now();
        // Who spends the machine's two cores during the restart: the daemon is only one of
        // the parties (the simulated boards answer 5000 handshakes, Mosquitto carries the
        // republication to the subscriber), so the figure has a floor the daemon cannot move.
        let (bench_k, broker_k, machine_k) = (
            cpu_seconds(me),
            cpu_seconds(broker.pid()),
            MachineTicks::now(),
        );
        let log = std::fs::File::create(dir.join("daemon-restart.log")).expect("restart log");
        let child = Command::new(daemon)
            .arg("run")
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot restart {}: {e}", daemon.display()));
        proc = Proc { child: Some(child) };
        // Each board's first `online` state after the kill, with the subscriber's arrival
        // instant: the figure is when the last of them arrived, not when this loop looked
        // (it parses every message, on the cores the daemon uses).
        let mut back: std::collections::HashMap<String, Instant> = Default::default();
        let mut looked = mark;
        let mut first: Option<Instant> = None;
        let ok = sub
            .until(
                "every board back after kill -9",
                Duration::from_secs(60),
                |seen| {
                    for m in &seen[looked..] {
                        first.get_or_insert(m.at);
                        if let Some((b, k)) = m.board_topic()
                            && k == "state"
                            && !back.contains_key(b)
                            && m.json()["online"] == true
                        {
                            back.insert(b.to_string(), m.at);
                        }
                    }
                    looked = seen.len();
                    back.len() == n
                },
            )
            .await;
        let census_at = Instant::now();
        let (bench_b, broker_b, machine_b) = (
            cpu_seconds(me),
            cpu_seconds(broker.pid()),
            MachineTicks::now(),
        );
        let daemon_b = cpu_seconds(proc.pid());
        let spent = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", b - a),
            _ => "n/a".into(),
        };
        let (busy, steal, idle) = machine_k
            .zip(machine_b)
            .map_or((f64::NAN, f64::NAN, f64::NAN), |(a, b)| b.since(&a));
        println!(
            "   restart's CPU, kill -> every board back ({:.2} s, {} cores = {:.2} core-seconds): daemon {} s, bench process (simulator + subscriber) {} s, mosquitto {} s; whole machine busy {busy:.2}, stolen {steal:.2}, idle {idle:.2} core-seconds",
            (census_at - t_kill).as_secs_f64(),
            cores(),
            (census_at - t_kill).as_secs_f64() * cores() as f64,
            daemon_b.map_or("n/a".into(), |d| format!("{d:.2}")),
            spent(bench_k, bench_b),
            spent(broker_k, broker_b),
        );
        let mut arrivals: Vec<Duration> = back.values().map(|at| *at - t_kill).collect();
        arrivals.sort();
        let nth = |q: f64| {
            arrivals
                .get(((arrivals.len() as f64 * q) as usize).min(arrivals.len().saturating_sub(1)))
                .map_or(f64::NAN, |d| d.as_secs_f64())
        };
        println!(
            "   restart after kill -9: {} of {n} boards online with their state republished after {:.2} s (first message {:.2} s; half the boards {:.2} s, 90 % {:.2} s; {} messages)",
            back.len(),
            nth(1.0),
            first.map_or(f64::NAN, |f| (f - t_kill).as_secs_f64()),
            nth(0.5),
            nth(0.9),
            sub.seen.len() - mark,
        );
        // What the restart published, by kind (`state`, `availability`, `alert`, …).
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for m in &sub.seen[mark..] {
            let kind = match m.board_topic() {
                Some((_, k)) => k,
                None => m
                    .topic
                    .strip_prefix(&format!("hallclock/{HALL}/"))
                    .and_then(|r| r.split('/').next())
                    .unwrap_or("other"),
            };
            *kinds.entry(kind).or_default() += 1;
        }
        println!("   restart's messages by kind: {kinds:?}");
        // Boards whose availability went out more than once, by what it said in turn.
        let mut said: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for m in &sub.seen[mark..] {
            if let Some((b, "availability")) = m.board_topic() {
                said.entry(b)
                    .or_default()
                    .push(String::from_utf8_lossy(&m.payload).into_owned());
            }
        }
        let mut twice: std::collections::BTreeMap<String, usize> = Default::default();
        for seq in said.values().filter(|s| s.len() > 1) {
            *twice.entry(seq.join(",")).or_default() += 1;
        }
        println!("   restart's boards with their availability sent more than once: {twice:?}");
        // When they came, by tenth of a second after the kill: whether the daemon sent
        // them late or they queued on the way.
        let mut tenths: std::collections::BTreeMap<u64, [usize; 4]> = Default::default();
        for m in &sub.seen[mark..] {
            let slot = match m.board_topic() {
                Some((_, "availability")) => 0,
                Some((_, "state")) => 1,
                Some((_, "pgn")) => 2,
                _ => 3,
            };
            let tenth = ((m.at - t_kill).as_millis() / 100) as u64;
            tenths.entry(tenth).or_default()[slot] += 1;
        }
        let line: Vec<String> = tenths
            .iter()
            .map(|(t, c)| {
                format!(
                    "{:.1}: {}/{}/{}/{}",
                    *t as f64 / 10.0,
                    c[0],
                    c[1],
                    c[2],
                    c[3]
                )
            })
            .collect();
        println!(
            "   restart's arrivals per 0.1 s after the kill (availability/state/pgn/other): {}",
            line.join(", ")
        );
        if !ok {
            println!("   restart: not every board came back within 60 s");
        }
    }
    let exit = proc.stop(Duration::from_secs(5));
    for mut p in procs {
        p.stop(Duration::from_secs(5));
    }
    // Closing the channel first lets the subscriber's thread end quietly when the broker goes.
    let seen = std::mem::take(&mut sub.seen);
    drop(sub);
    broker.stop(Duration::from_secs(2));
    for mut b in local_brokers {
        b.stop(Duration::from_secs(2));
    }
    drop(sim);

    let presses = std::mem::take(&mut *presses.lock().unwrap_or_else(|e| e.into_inner()));
    let mut row = analyse(Analysis {
        n,
        window,
        presses,
        flag_boards: flag_boards.iter().map(|b| board_id(*b)).collect(),
        seen: &seen,
        window_start,
        cpu_pct,
        bench_pct,
        broker_pct,
        sched,
        broker_sched,
        rss_mb,
        rss_now,
        threads,
        exit,
        load: (load_start, load_end),
        syncs_per_s,
        online_after,
        commands,
        notes,
        log_path: &log_path,
    });
    if let Some((detail, cell)) = web_report {
        row.details.push_str(&detail);
        row.web = Some(cell);
    }
    row
}

/// What the broker itself holds: a fresh `mosquitto_sub` reads the retained availability
/// of every board (tells a message the daemon never sent from one this subscriber missed).
fn retained_online(port: u16, n: usize) -> String {
    let out = Command::new("mosquitto_sub")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-t"])
        .arg(format!("hallclock/{HALL}/board/+/availability"))
        .args(["--retained-only", "-W", "3"])
        .stderr(Stdio::null())
        .output();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            format!(
                "the broker's retained availability: {} of {n} boards `online`, {} `offline`",
                text.lines().filter(|l| *l == "online").count(),
                text.lines().filter(|l| *l == "offline").count()
            )
        }
        Err(e) => {
            format!("mosquitto_sub not available to check the broker's retained availability: {e}")
        }
    }
}

/// `start_round` for every board. In chunks: the daemon's MQTT client keeps rumqttc's
/// default 10 KiB limit on incoming packets, and the pairings of more than about 130 boards
/// exceed it (the daemon then loses its connection). Each chunk is round 1 for its boards.
/// Sends the round (in chunks) on the central broker; each chunk counts once every node has
/// answered it, and every node must say `ok`.
async fn start_round(
    sub: &mut Subscriber,
    n: usize,
    nodes: usize,
    start_ms: i64,
    round: u32,
) -> (usize, Duration) {
    let began = Instant::now();
    // A daemon that journals each game before answering takes a while for a big hall.
    let patience = Duration::from_secs(30) + Duration::from_millis(100 * n as u64);
    let boards: Vec<usize> = (1..=n).collect();
    let per = match env_num::<usize>("PAIRINGS").unwrap_or(PAIRINGS_PER_COMMAND) {
        0 => n.max(1),
        p => p,
    };
    let chunks: Vec<&[usize]> = boards.chunks(per).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let pairings: Vec<Value> = chunk
            .iter()
            .map(|b| json!({"board": board_id(*b), "white": format!("White {b}"), "black": format!("Black {b}")}))
            .collect();
        let tx = format!("round-{round}-{i}");
        sub.publish(
            format!("hallclock/{HALL}/set"),
            json!({"transaction": tx, "arbiter": "IA Bench", "action": "start_round",
                   "round": round, "start": start_ms, "pairings": pairings}),
        )
        .await;
        let topic = format!("hallclock/{HALL}/response");
        let mut answers: Vec<Value> = Vec::new();
        let what = format!("start_round {tx} answered by {nodes} node(s)");
        let answered = sub
            .until(&what, patience, |seen| {
                answers = seen
                    .iter()
                    .filter(|m| m.topic == topic && m.json()["transaction"] == tx.as_str())
                    .map(Msg::json)
                    .collect();
                answers.len() >= nodes
            })
            .await;
        assert!(
            answered,
            "no answer to {what} within {patience:?}: {answers:?}"
        );
        for answer in &answers {
            assert_eq!(answer["status"], "ok", "start_round refused: {answer}");
        }
    }
    (chunks.len(), began.elapsed())
}

struct Analysis<'a> {
    n: usize,
    window: Duration,
    presses: Vec<Press>,
    flag_boards: Vec<String>,
    seen: &'a [Msg],
    window_start: Instant,
    cpu_pct: f64,
    bench_pct: f64,
    broker_pct: f64,
    sched: String,
    broker_sched: String,
    rss_mb: f64,
    rss_now: f64,
    threads: String,
    exit: String,
    load: (String, String),
    syncs_per_s: Option<f64>,
    online_after: Duration,
    commands: (usize, Duration),
    notes: Vec<String>,
    log_path: &'a Path,
}

/// What the subscriber saw of one board, in arrival order.
#[derive(Default)]
struct BoardSeen<'a> {
    /// (arrival, seq) of `pressed` events.
    pressed: Vec<(Instant, u64)>,
    /// (arrival, seq) of states.
    states: Vec<(Instant, u64)>,
    /// (arrival wall µs, at ms, seq) of `flag_fell` events.
    flags: Vec<(i64, i64, u64)>,
    /// (seq, as_of ms) of states.
    as_of: Vec<(u64, i64)>,
    _m: std::marker::PhantomData<&'a ()>,
}

fn analyse(a: Analysis<'_>) -> Row {
    let mut boards: HashMap<&str, BoardSeen<'_>> = HashMap::new();
    let mut alerts: BTreeMap<String, usize> = BTreeMap::new();
    let mut events: BTreeMap<String, usize> = BTreeMap::new();
    for m in a.seen.iter().filter(|m| !m.retained) {
        if let Some(rest) = m.topic.strip_prefix(&format!("hallclock/{HALL}/alert/")) {
            if m.at >= a.window_start && !hallclock::mqtt::payload::alert_cleared(&m.payload) {
                // `board-007-stray-press` -> `stray-press`
                let kind = rest.splitn(3, '-').nth(2).unwrap_or(rest).to_string();
                *alerts.entry(kind).or_default() += 1;
            }
            continue;
        }
        let Some((b, kind)) = m.board_topic() else {
            continue;
        };
        let s = boards.entry(b).or_default();
        match kind {
            "state" => {
                let v = m.json();
                if let Some(seq) = v["seq"].as_u64() {
                    s.states.push((m.at, seq));
                    s.as_of.push((seq, v["as_of"].as_i64().unwrap_or(0)));
                }
            }
            "event" => {
                let v = m.json();
                let name = v["event"].as_str().unwrap_or("?").to_string();
                if m.at >= a.window_start {
                    *events.entry(name.clone()).or_default() += 1;
                }
                match name.as_str() {
                    "pressed" => {
                        if let Some(seq) = v["seq"].as_u64() {
                            s.pressed.push((m.at, seq));
                        }
                    }
                    "flag_fell" => {
                        if let (Some(at), Some(seq)) = (v["at"].as_i64(), v["seq"].as_u64()) {
                            s.flags.push((m.wall_us, at, seq));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut lat = Vec::new();
    let mut lat_call = Vec::new();
    let mut wake = Vec::new();
    let (mut no_write, mut no_event, mut no_state) = (0, 0, 0);
    let mut by_board: HashMap<&str, Vec<&Press>> = HashMap::new();
    for p in &a.presses {
        by_board.entry(p.board.as_str()).or_default().push(p);
    }
    for (b, mut ps) in by_board {
        ps.sort_by_key(|p| p.call);
        let empty = BoardSeen::default();
        let s = boards.get(b).unwrap_or(&empty);
        let mut ev = s.pressed.iter().peekable();
        for p in ps {
            // The press's event: the first `pressed` on this board arriving after it.
            while ev.peek().is_some_and(|(t, _)| *t < p.call) {
                ev.next();
            }
            let Some(&(_, seq)) = ev.next() else {
                no_event += 1;
                continue;
            };
            let Some(&(arrival, _)) = s.states.iter().find(|(t, sq)| *sq >= seq && *t >= p.call)
            else {
                no_state += 1;
                continue;
            };
            lat_call.push(ms(arrival - p.call));
            match p.write {
                Some(w) => {
                    wake.push(ms(w - p.call));
                    lat.push(ms(arrival.saturating_duration_since(w)));
                }
                None => no_write += 1,
            }
        }
    }
    let mut flag_lat = Vec::new();
    // The daemon's own share: `as_of` of the state published with the flag (its clock, in
    // whole ms) minus the flag's `at`.
    let mut flag_inside = Vec::new();
    let mut flags_missing = 0;
    for b in &a.flag_boards {
        let Some(s) = boards.get(b.as_str()) else {
            flags_missing += 1;
            continue;
        };
        match s.flags.first() {
            Some(&(arrival_us, at_ms, seq)) => {
                flag_lat.push((arrival_us - at_ms * 1000) as f64 / 1e3);
                if let Some(&(_, as_of)) = s.as_of.iter().find(|(sq, _)| *sq >= seq) {
                    flag_inside.push((as_of - at_ms) as f64);
                }
            }
            None => flags_missing += 1,
        }
    }

    let log_summary = log_warnings(a.log_path);

    let press_stats = stats(lat.clone());
    let flag_stats = stats(flag_lat.clone());
    let mut d = String::new();
    let _ = writeln!(
        d,
        "\n== {} boards, {:.0} s window: {} pressing, {} flag boards",
        a.n,
        a.window.as_secs_f64(),
        a.n - a.flag_boards.len(),
        a.flag_boards.len()
    );
    let _ = writeln!(
        d,
        "   all boards online {:.1} s after the daemon started; start_round in {} command(s), answered after {:.1} s",
        a.online_after.as_secs_f64(),
        a.commands.0,
        a.commands.1.as_secs_f64()
    );
    for note in &a.notes {
        let _ = writeln!(d, "   SETUP: {note}");
    }
    let _ = writeln!(
        d,
        "   load average at window start {} / end {}",
        a.load.0, a.load.1
    );
    let _ = writeln!(
        d,
        "   presses: {} made, {} measured; lost: {} without a `pressed` event, {} without a state, {} lever writes not seen",
        a.presses.len(),
        lat.len(),
        no_event,
        no_state,
        no_write
    );
    let _ = writeln!(
        d,
        "   press -> state (ms, p50 / p99 / max): from the lever write {}; from the press() call {}; simulator wake-up (call -> write) {}",
        fmt_stats(press_stats),
        fmt_stats(stats(lat_call)),
        fmt_stats(stats(wake))
    );
    let _ = writeln!(
        d,
        "   flags: {} planned, {} measured, {} missing; flag instant -> flag_fell (ms, p50 / p99 / max) {}",
        a.flag_boards.len(),
        flag_lat.len(),
        flags_missing,
        fmt_stats(flag_stats)
    );
    let _ = writeln!(
        d,
        "   of which inside the daemon (its state's as_of - at, whole ms, p50 / p99 / max): {}",
        fmt_stats(stats(flag_inside))
    );
    let _ = writeln!(
        d,
        "   CPU (% of one core over the window): daemon {:.1}, bench process (simulator + subscriber) {:.1}, mosquitto {:.1}",
        a.cpu_pct, a.bench_pct, a.broker_pct
    );
    let _ = writeln!(
        d,
        "   daemon fsyncs (fdatasync + fsync) over the window: {}",
        fmt_rate(a.syncs_per_s)
    );
    let _ = writeln!(d, "   daemon scheduling: {}", a.sched);
    let _ = writeln!(d, "   mosquitto scheduling: {}", a.broker_sched);
    let _ = writeln!(
        d,
        "   daemon memory: peak RSS (VmHWM) {:.1} MB, RSS at the end {:.1} MB, {} threads; {}",
        a.rss_mb, a.rss_now, a.threads, a.exit
    );
    let _ = writeln!(d, "   events in the window: {events:?}");
    let _ = writeln!(d, "   alerts raised in the window: {alerts:?}");
    d.push_str(&log_summary);
    Row {
        boards: a.n,
        presses: lat.len(),
        press: press_stats,
        flags: flag_lat.len(),
        flag: flag_stats,
        cpu_pct: a.cpu_pct,
        rss_mb: a.rss_mb,
        syncs_per_s: a.syncs_per_s,
        web: None,
        details: d,
    }
}

/// The daemon log's size and its warnings and errors, similar lines grouped.
fn log_warnings(path: &Path) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let warn_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for l in &warn_lines {
        // The message without the timestamp and numbers: group similar lines.
        let key: String = l
            .split_once(": ")
            .map_or(*l, |(_, m)| m)
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .take(160)
            .collect();
        *kinds.entry(key).or_default() += 1;
    }
    let mut out = format!(
        "   daemon log: {} lines, {} WARN/ERROR ({})\n",
        log.lines().count(),
        warn_lines.len(),
        path.display()
    );
    for (k, c) in kinds.iter().take(8) {
        let _ = writeln!(out, "     {c:>6} × {k}");
    }
    out
}

fn failed_row(n: usize, panic: Box<dyn std::any::Any + Send>) -> Row {
    let why = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    let log = scratch_dir_path(&format!("hall-load-{n}")).join("daemon.log");
    Row {
        boards: n,
        presses: 0,
        press: None,
        flags: 0,
        flag: None,
        cpu_pct: f64::NAN,
        rss_mb: f64::NAN,
        syncs_per_s: None,
        web: None,
        details: format!("\n== {n} boards: FAILED: {why}\n{}", log_warnings(&log)),
    }
}

/// Where `scratch_dir(name)` put its folder (without emptying it again).
fn scratch_dir_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hallclock-{}-{name}", std::process::id()))
}

fn table(rows: &[Row]) -> String {
    // The web column only when a run had dashboards or a broadcast poll.
    let web = rows.iter().any(|r| r.web.is_some());
    let mut t = String::from(
        "| boards | presses measured | press→state p50 / p99 / max (ms) | flags measured | flag→event p50 / p99 / max (ms) | daemon CPU % of one core | peak RSS (MB) | fsyncs/s |",
    );
    t.push_str(if web {
        " dashboards (SSE per dashboard), broadcast polls |\n|---|---|---|---|---|---|---|---|---|\n"
    } else {
        "\n|---|---|---|---|---|---|---|---|\n"
    });
    for r in rows {
        let _ = write!(
            t,
            "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {} |",
            r.boards,
            r.presses,
            fmt_stats(r.press),
            r.flags,
            fmt_stats(r.flag),
            r.cpu_pct,
            r.rss_mb,
            fmt_rate(r.syncs_per_s)
        );
        if web {
            let _ = write!(t, " {} |", r.web.as_deref().unwrap_or("—"));
        }
        t.push('\n');
    }
    t
}

fn fmt_rate(r: Option<f64>) -> String {
    r.map_or("n/a".to_string(), |r| format!("{r:.1}/s"))
}

/// `perf stat` counting the daemon's fdatasync and fsync calls (in the kernel, on the
/// syscall tracepoints) until `stop`.
struct SyncCounter {
    child: Child,
}

impl SyncCounter {
    fn start(pid: u32) -> Option<SyncCounter> {
        let child = Command::new("perf")
            .args([
                "stat",
                "-x",
                ",",
                "-e",
                "syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync",
                "-p",
            ])
            .arg(pid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        Some(SyncCounter { child })
    }

    /// The calls counted; `None` if perf could not count them.
    fn stop(self) -> Option<u64> {
        // perf prints its counts on SIGINT.
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let out = self.child.wait_with_output().ok()?;
        let text = String::from_utf8_lossy(&out.stderr);
        let counts: Vec<u64> = text
            .lines()
            .filter(|l| l.contains("syscalls:sys_enter_"))
            .filter_map(|l| l.split(',').next()?.trim().parse().ok())
            .collect();
        (counts.len() == 2).then(|| counts.iter().sum())
    }
}
