//! The web side of a hall under load (issue 37): `DASHBOARDS=N` arbiters' dashboards, each
//! a session logged in over HTTP and an SSE stream of `/api/feed` read to the end as a
//! browser reads it, and `BROADCAST_POLL_MS=ms` a broadcast poller that fetches the
//! current round's `games.pgn` as lichess does (every 2 s, with `If-None-Match`). Both off
//! by default: the daemon's configuration is then what it always was.
//!
//! Plain HTTP/1.1 over tokio's TCP, written by hand: the bench needs no HTTP client, and
//! every byte the daemon sends is counted as it arrives.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The dashboard password of the bench's arbiter (`BENCH_ARBITER`).
pub const PASSWORD: &str = "hall load dashboards";

/// What the web side was asked for.
#[derive(Clone, Copy)]
pub struct WebLoad {
    pub dashboards: usize,
    pub poll: Option<Duration>,
}

impl WebLoad {
    pub fn from_env() -> WebLoad {
        WebLoad {
            dashboards: super::env_num("DASHBOARDS").unwrap_or(0),
            poll: super::env_num::<u64>("BROADCAST_POLL_MS")
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis),
        }
    }

    /// Whether the daemon's web server is part of the run.
    pub fn on(&self) -> bool {
        self.dashboards > 0 || self.poll.is_some()
    }
}

/// Counters shared with the readers' and the poller's tasks.
#[derive(Default)]
pub struct Counters {
    /// Bytes of the SSE streams, all dashboards together.
    pub sse_bytes: AtomicU64,
    /// SSE messages (frames ending in a blank line), all dashboards together.
    pub sse_messages: AtomicU64,
    /// Streams that ended or failed before the bench stopped them.
    pub sse_ended: AtomicU64,
    pub polls_200: AtomicU64,
    pub polls_304: AtomicU64,
    pub polls_other: AtomicU64,
    pub poll_errors: AtomicU64,
    pub poll_bytes: AtomicU64,
    /// Each poll's time from connect to the last byte, µs (only the window's are kept).
    pub poll_us: std::sync::Mutex<Vec<u64>>,
}

/// A snapshot of the counters, to subtract the window's start from its end.
#[derive(Clone, Copy, Default)]
pub struct Snapshot {
    sse_bytes: u64,
    sse_messages: u64,
    polls_200: u64,
    polls_304: u64,
    polls_other: u64,
    poll_errors: u64,
    poll_bytes: u64,
}

impl Counters {
    pub fn snapshot(&self) -> Snapshot {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Snapshot {
            sse_bytes: g(&self.sse_bytes),
            sse_messages: g(&self.sse_messages),
            polls_200: g(&self.polls_200),
            polls_304: g(&self.polls_304),
            polls_other: g(&self.polls_other),
            poll_errors: g(&self.poll_errors),
            poll_bytes: g(&self.poll_bytes),
        }
    }
}

/// The running dashboards and poller; their tasks end with `stop`.
pub struct Web {
    pub load: WebLoad,
    pub counters: Arc<Counters>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The first bytes of each stream (the snapshot a page opens with), all together.
    pub opened_bytes: u64,
    pub login_ms: Vec<f64>,
}

/// The `[web]` section for the daemon's configuration on `port` (loopback only).
pub fn config_section(port: u16) -> String {
    format!("\n[web]\nenabled = true\nlisten = \"127.0.0.1:{port}\"\nsecure_cookies = false\n")
}

/// Logs in `load.dashboards` sessions (retried while the daemon starts its server), opens
/// their feeds and starts the poller. Before the round: the streams see it start.
pub async fn start(load: WebLoad, addr: SocketAddr, arbiter: &str) -> Web {
    let counters = Arc::new(Counters::default());
    let mut tasks = Vec::new();
    let mut login_ms = Vec::new();
    for i in 0..load.dashboards {
        let t = Instant::now();
        let cookie = login(addr, arbiter).await;
        login_ms.push(t.elapsed().as_secs_f64() * 1e3);
        tasks.push(tokio::spawn(read_feed(addr, cookie, counters.clone(), i)));
    }
    if let Some(every) = load.poll {
        tasks.push(tokio::spawn(poll_broadcast(addr, every, counters.clone())));
    }
    // The snapshot each stream opens with: what a page loads before the live items.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let opened_bytes = counters.snapshot().sse_bytes;
    Web {
        load,
        counters,
        tasks,
        opened_bytes,
        login_ms,
    }
}

impl Web {
    pub fn stop(self) {
        for t in self.tasks {
            t.abort();
        }
    }

    /// What the window saw, for the run's details and the table.
    pub fn report(&self, a: &Snapshot, b: &Snapshot, seconds: f64) -> (String, String) {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        let polls_ok = d(a.polls_200, b.polls_200);
        let polls_304 = d(a.polls_304, b.polls_304);
        let polls_other = d(a.polls_other, b.polls_other);
        let errors = d(a.poll_errors, b.poll_errors);
        let ended = self.counters.sse_ended.load(Ordering::Relaxed);
        let sse = d(a.sse_bytes, b.sse_bytes) as f64;
        let per_dash = sse / seconds / self.load.dashboards.max(1) as f64 / 1e3;
        let poll_ms: Vec<f64> = self
            .counters
            .poll_us
            .lock()
            .map(|v| v.iter().map(|us| *us as f64 / 1e3).collect())
            .unwrap_or_default();
        let poll_stats = super::fmt_stats(super::stats(poll_ms));
        let logins: Vec<String> = self.login_ms.iter().map(|m| format!("{m:.0}")).collect();
        let detail = format!(
            "   dashboards: {} sessions (logins {} ms), opened with {} bytes of snapshot together; in the window {:.0} bytes of SSE ({:.1} kB/s per dashboard), {} messages, {} streams ended early\n   broadcast polls{}: {} answered 200, {} answered 304, {} other, {} errors; {} bytes in the window; poll time (ms, p50 / p99 / max) {}\n",
            self.load.dashboards,
            logins.join(", "),
            self.opened_bytes,
            sse,
            per_dash,
            d(a.sse_messages, b.sse_messages),
            ended,
            self.load
                .poll
                .map_or(" (off)".to_string(), |p| format!(" every {p:?}")),
            polls_ok,
            polls_304,
            polls_other,
            errors,
            d(a.poll_bytes, b.poll_bytes),
            poll_stats
        );
        let cell = format!(
            "{} × {:.1} kB/s, {} ended; polls {}/{}/{} (200/304/failed), {:.0} kB",
            self.load.dashboards,
            per_dash,
            ended,
            polls_ok,
            polls_304,
            polls_other + errors,
            d(a.poll_bytes, b.poll_bytes) as f64 / 1e3
        );
        (detail, cell)
    }
}

/// A session cookie of `arbiter`; panics after a minute of refusals (the server not up,
/// or the password hash taking that long under the quota).
async fn login(addr: SocketAddr, arbiter: &str) -> String {
    let body = json!({"id": arbiter, "password": PASSWORD}).to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = String::new();
    while Instant::now() < deadline {
        match request(
            addr,
            "POST",
            "/api/login",
            &[("Content-Type", "application/json")],
            &body,
        )
        .await
        {
            Ok((200, head, _)) => {
                let cookie = head
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("set-cookie: ")
                            .or_else(|| l.strip_prefix("Set-Cookie: "))
                    })
                    .and_then(|c| c.split(';').next())
                    .unwrap_or("")
                    .to_string();
                if !cookie.is_empty() {
                    return cookie;
                }
                last = "a 200 without a cookie".into();
            }
            Ok((status, _, body)) => last = format!("{status}: {}", String::from_utf8_lossy(&body)),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no dashboard session at {addr}: {last}");
}

/// One request with `Connection: close`, read to the end: (status, head, body).
async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String, Vec<u8>)> {
    let mut s = TcpStream::connect(addr).await?;
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await?;
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut out))
        .await
        .map_err(|_| std::io::Error::other("no complete answer within 30 s"))??;
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(out.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, head, out[split..].to_vec()))
}

/// One dashboard's feed, read until the bench aborts the task; every byte counted.
async fn read_feed(addr: SocketAddr, cookie: String, c: Arc<Counters>, i: usize) {
    let run = async {
        let mut s = TcpStream::connect(addr).await?;
        let req = format!(
            "GET /api/feed HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await?;
        let mut buf = vec![0u8; 64 * 1024];
        // The last byte of the previous read: a blank line split across two reads.
        let mut prev = 0u8;
        loop {
            let n = s.read(&mut buf).await?;
            if n == 0 {
                return Ok::<(), std::io::Error>(());
            }
            c.sse_bytes.fetch_add(n as u64, Ordering::Relaxed);
            let mut frames = 0;
            for &b in &buf[..n] {
                if b == b'\n' && prev == b'\n' {
                    frames += 1;
                }
                prev = b;
            }
            c.sse_messages.fetch_add(frames, Ordering::Relaxed);
        }
    };
    if let Err(e) = run.await {
        eprintln!("hall_load: dashboard {i}'s feed: {e}");
    }
    c.sse_ended.fetch_add(1, Ordering::Relaxed);
}

/// The broadcast as lichess polls it: the current round's `games.pgn` every `every`,
/// with the last ETag in `If-None-Match`. A poll is started on schedule even when the
/// previous one is late (lichess does not wait for a slow source either).
async fn poll_broadcast(addr: SocketAddr, every: Duration, c: Arc<Counters>) {
    let etag: Arc<std::sync::Mutex<String>> = Arc::default();
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (c, etag) = (c.clone(), etag.clone());
        tokio::spawn(async move {
            let known = etag.lock().map(|e| e.clone()).unwrap_or_default();
            let mut headers = Vec::new();
            if !known.is_empty() {
                headers.push(("If-None-Match", known.as_str()));
            }
            let t = Instant::now();
            match request(addr, "GET", "/broadcast/current/games.pgn", &headers, "").await {
                Ok((status, head, body)) => {
                    if let Ok(mut v) = c.poll_us.lock() {
                        v.push(t.elapsed().as_micros() as u64);
                    }
                    c.poll_bytes
                        .fetch_add((head.len() + body.len()) as u64, Ordering::Relaxed);
                    let counter = match status {
                        200 => &c.polls_200,
                        304 => &c.polls_304,
                        _ => &c.polls_other,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    if status == 200
                        && let Some(tag) = head.lines().find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("etag").then(|| v.trim().to_string())
                        })
                        && let Ok(mut e) = etag.lock()
                    {
                        *e = tag;
                    }
                }
                Err(_) => {
                    c.poll_errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
}

/// Polls before the window are not the window's: their times are dropped.
pub fn clear_poll_times(c: &Counters) {
    if let Ok(mut v) = c.poll_us.lock() {
        v.clear();
    }
}

/// The arbiters file's entry for the bench's arbiter, with a dashboard password when the
/// web side is on (hashed as `hallclock arbiter` hashes it, the daemon's own cost).
pub fn arbiters(id: &str, key_hex: &str, web: bool) -> hallclock::intake::auth::Arbiters {
    let mut a = hallclock::intake::auth::Arbiters::parse(&format!(
        "[[arbiter]]\nid = \"{id}\"\nname = \"IA Bench\"\nrole = \"chief\"\nkey = \"{key_hex}\"\n"
    ))
    .expect("the bench's arbiter parses");
    if web {
        a.set_password(id, PASSWORD)
            .expect("the bench's dashboard password");
    }
    a
}
