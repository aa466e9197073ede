//! The hall page's own cost with 200 running boards (docs/BENCHMARKS.md): the real page in
//! headless Chromium, the real web server, fed through a publisher's feed with the payloads
//! the daemon publishes (200 running states; a move and a press on some board every 100 ms,
//! as a rapid round has). The page counts the time spent in its own script (feed handling,
//! rendering, the clocks on every animation frame) with `performance.now()`; the figure is
//! printed. No daemon or simulator here: 200 simulated boards would measure the shared
//! machine, not the page.

mod common;
mod webcommon;

use std::time::Duration;

use hallclock::web::AppState;
use serde_json::json;
use webcommon::{Chrome, PASSWORD};

const BOARDS: usize = 200;
const HALL: &str = "bench";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn state(n: usize, seq: u64, running: &str, white_ms: i64, black_ms: i64, moves: u32) -> Vec<u8> {
    let side = |name: String, ms: i64| {
        json!({"name": name, "remaining_ms": ms, "display_ms": ms, "delay_left_ms": 0,
               "moves": moves, "period": 1, "flagged_at": null, "present": true})
    };
    json!({
        "board": format!("board-{n:03}"), "seq": seq, "as_of": now_ms(), "phase": "running",
        "online": true, "round": 1, "running": running, "turn": running, "white_side": "left",
        "white": side(format!("White Player {n}"), white_ms),
        "black": side(format!("Black Player {n}"), black_ms),
        "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "result": null, "pending_flag": null, "both_flags_order_unknown": false,
        "time_control": "180+2", "authoritative": false
    })
    .to_string()
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_script_time_with_200_running_boards() {
    let (publisher, _out) = hallclock::mqtt::client::detached();
    let (intake, _rx) = tokio::sync::mpsc::channel(8);
    let base = format!("hallclock/{HALL}");
    publisher.retained(format!("{base}/status"), b"online".to_vec());
    for n in 1..=BOARDS {
        publisher.retained(
            format!("{base}/board/board-{n:03}/availability"),
            b"online".to_vec(),
        );
        publisher.retained(
            format!("{base}/board/board-{n:03}/state"),
            state(n, 1, "white", 180_000, 180_000, 0),
        );
    }
    let state_ = AppState::new(
        HALL,
        publisher.feed().clone(),
        intake,
        webcommon::accounts(),
        false,
    );
    let web = webcommon::serve(state_).await;
    let base_url = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-page-load", 1600, 1000).await;
    chrome
        .client
        .goto(&format!("{base_url}/login"))
        .await
        .unwrap();
    chrome
        .until(
            "login form",
            "document.querySelector('#login input[name=id]')",
        )
        .await;
    chrome
        .js(&format!("document.querySelector('#login input[name=id]').value='chief'; document.querySelector('#login input[name=password]').value='{PASSWORD}'; document.querySelector('#login button').click(); return true;"))
        .await;
    chrome
        .until("200 tiles", &format!("document.querySelectorAll('.tile').length === {BOARDS} && document.getElementById('conn').textContent === 'live'"))
        .await;
    // A move somewhere in the hall every 100 ms while the page is measured.
    let feeder = {
        let publisher = publisher.clone();
        let base = base.clone();
        tokio::spawn(async move {
            let mut seq = 2u64;
            let mut n = 0usize;
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                n = n % BOARDS + 1;
                seq += 1;
                let topic = format!("{base}/board/board-{n:03}");
                publisher.message(
                    format!("{topic}/event"),
                    json!({"board": format!("board-{n:03}"), "seq": seq, "event": "move_made", "at": now_ms(), "side": "white", "uci": "e2e4", "san": "e4", "fen": ""}).to_string().into_bytes(),
                );
                publisher.retained(
                    format!("{topic}/state"),
                    state(
                        n,
                        seq,
                        if seq.is_multiple_of(2) {
                            "white"
                        } else {
                            "black"
                        },
                        170_000,
                        175_000,
                        1,
                    ),
                );
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let start = chrome
        .js("const p = window.__hallclockPerf; return [p.scriptMs, p.frames, performance.now()];")
        .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let end = chrome
        .js("const p = window.__hallclockPerf; return [p.scriptMs, p.frames, performance.now()];")
        .await;
    feeder.abort();
    let f = |v: &serde_json::Value, i: usize| v[i].as_f64().unwrap_or(0.0);
    let seconds = (f(&end, 2) - f(&start, 2)) / 1000.0;
    let script_per_s = (f(&end, 0) - f(&start, 0)) / seconds;
    let frames_per_s = (f(&end, 1) - f(&start, 1)) / seconds;
    // Long Animation Frames, where the browser has them: script time the page's own
    // counters might miss (style and layout the script caused are outside both).
    let _ = chrome.shot("hall-200").await;
    println!(
        "hall page, {BOARDS} running boards, a move every 100 ms: {script_per_s:.1} ms of script per second, {frames_per_s:.0} frames per second, over {seconds:.1} s"
    );
    assert!(frames_per_s > 1.0, "the page keeps drawing");
    // A page opened mid-round shows the last moves (from the boards' recent events).
    chrome.client.goto(&format!("{base_url}/")).await.unwrap();
    chrome
        .until("a last move after a reload", "Array.from(document.querySelectorAll('.tile .lastmove')).some(e => e.textContent === 'last 1. e4')")
        .await;
    assert!(script_per_s > 0.0, "the page's counters work");
    chrome.close().await;
    publisher.feed().close();
    let _ = tokio::time::timeout(Duration::from_secs(5), web.task).await;
}
