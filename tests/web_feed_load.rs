//! What 50 open dashboards cost the daemon (docs/BENCHMARKS.md): a 1000-board hall's
//! traffic pushed through the publisher's feed (every board a move every 10 s: an event and
//! a state, 200 payloads a second), the real web server, and 50 SSE clients that are
//! separate `curl` processes (so their reading is not counted). The figure is this
//! process's CPU time (getrusage) with 50 clients minus with none, over the same traffic.
//! The same with 200 `/public` hall screens. Ignored by default (each takes ~30 s of a
//! shared machine): run with `cargo test --release --test web_feed_load -- --ignored
//! --nocapture --test-threads 1` (one at a time: they measure this process's CPU).

mod common;
mod webcommon;

use std::process::{Command, Stdio};
use std::time::Duration;

use hallclock::web::AppState;
use serde_json::json;

const BOARDS: usize = 1000;
const CLIENTS: usize = 50;
const SECONDS: u64 = 10;

fn cpu_seconds() -> f64 {
    let u = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    t(u.user_time()) + t(u.system_time())
}

fn state(n: usize, seq: u64) -> Vec<u8> {
    let side = |name: String| {
        json!({"name": name, "remaining_ms": 170000, "display_ms": 170000, "delay_left_ms": 0,
               "moves": seq / 2, "period": 1, "flagged_at": null, "present": true})
    };
    json!({"board": format!("board-{n:04}"), "seq": seq, "as_of": 1_796_047_200_000i64 + seq as i64,
           "phase": "running", "online": true, "round": 1, "running": "black", "turn": "black",
           "white_side": "left", "white": side(format!("White {n}")), "black": side(format!("Black {n}")),
           "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "result": null,
           "pending_flag": null, "both_flags_order_unknown": false, "time_control": "180+2",
           "authoritative": false})
    .to_string()
    .into_bytes()
}

async fn traffic(publisher: &hallclock::mqtt::Publisher, seconds: u64, seq: &mut u64) {
    // 200 payloads a second, in ticks of 10 ms.
    let ticks = seconds * 100;
    let mut interval = tokio::time::interval(Duration::from_millis(10));
    for t in 0..ticks {
        interval.tick().await;
        let n = (t as usize % BOARDS) + 1;
        *seq += 1;
        let topic = format!("hallclock/load/board/board-{n:04}");
        publisher.message(
            format!("{topic}/event"),
            json!({"board": format!("board-{n:04}"), "seq": *seq, "event": "move_made", "at": 0, "side": "white", "uci": "e2e4", "san": "e4", "fen": ""}).to_string().into_bytes(),
        );
        publisher.retained(format!("{topic}/state"), state(n, *seq));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored"]
async fn fifty_dashboards_on_a_1000_board_hall() {
    measure(CLIENTS, "dashboards").await;
}

/// The hall screens of a big venue: 200 `/public` pages on the same traffic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored"]
async fn two_hundred_public_screens_on_a_1000_board_hall() {
    measure(200, "/public screens").await;
}

async fn measure(clients: usize, what: &str) {
    let (publisher, mut out) = hallclock::mqtt::client::detached();
    // The MQTT side's queue: drained, as the connection task would.
    tokio::spawn(async move { while out.recv().await.is_some() {} });
    let (intake, _rx) = tokio::sync::mpsc::channel(8);
    for n in 1..=BOARDS {
        publisher.retained(
            format!("hallclock/load/board/board-{n:04}/state"),
            state(n, 1),
        );
    }
    let app = AppState::new(
        "load",
        publisher.feed().clone(),
        intake,
        std::sync::Arc::new(hallclock::intake::auth::Arbiters::default()),
        false,
    );
    let web = webcommon::serve(app).await;
    let mut seq = 1;
    traffic(&publisher, 2, &mut seq).await;
    let c0 = cpu_seconds();
    traffic(&publisher, SECONDS, &mut seq).await;
    let base = cpu_seconds() - c0;

    const STORM: u64 = 5;
    let c_storm = cpu_seconds();
    let url = format!("http://{}/api/public/feed", web.addr);
    let mut clients: Vec<_> = (0..clients)
        .map(|_| {
            Command::new("curl")
                .args(["-sN", &url])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("curl")
        })
        .collect();
    // Every client takes its 1000-state snapshot first (all at once, as screens do when
    // the hall's Wi-Fi comes back): what that costs beyond the traffic is the storm.
    traffic(&publisher, STORM, &mut seq).await;
    let storm = cpu_seconds() - c_storm;
    let c1 = cpu_seconds();
    traffic(&publisher, SECONDS, &mut seq).await;
    let with = cpu_seconds() - c1;
    let n = clients.len();
    for c in &mut clients {
        let _ = c.kill();
        let _ = c.wait();
    }
    let added = (with - base) / SECONDS as f64 * 100.0;
    println!(
        "{BOARDS} boards, 200 payloads/s: {:.1} % of a core without {what}, {:.1} % with {n} (public feed); added {added:.1} % of a core",
        base / SECONDS as f64 * 100.0,
        with / SECONDS as f64 * 100.0
    );
    // The storm's window also carried STORM seconds of the traffic, to n clients.
    let snapshots = (storm - with / SECONDS as f64 * STORM as f64).max(0.0);
    println!(
        "  the {n} snapshots on connecting (all within {STORM} s): {snapshots:.2} s of CPU, {:.1} ms each",
        snapshots * 1000.0 / n as f64
    );
    publisher.feed().close();
}
