//! Lever latency: from the simulator starting to write the BWTIME frame of a lever press
//! to the daemon side receiving the link's `Lever` event (through the event channel).
//! Pseudo-terminals deliver at once, so this is all software; the serial line adds
//! ~10.4 ms for the 10 bytes at 9600 baud on real hardware.
//!
//!     cargo bench --bench link_latency            (PRESSES=5000 to change the count)

use std::time::{Duration, Instant};

use hallclock::link::testing::{fast_config, scratch_dir, wait_for};
use hallclock::link::{self, LinkCommand, LinkEvent, RunSide};
use hallclock::sim::{Sim, SimConfig};

fn main() {
    // `cargo bench` passes `--bench`; under `cargo test --all-targets` this is a smoke run.
    let benching = std::env::args().any(|a| a == "--bench");
    let presses: usize = std::env::var("PRESSES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if benching { 2000 } else { 200 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut lat = rt.block_on(measure(presses));
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 - 1.0) * p).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "link_latency: {} presses; lever frame written -> Lever event: p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        lat.len(),
        us(pct(0.50)),
        us(pct(0.90)),
        us(pct(0.99)),
        us(lat[lat.len() - 1]),
    );
}

async fn measure(presses: usize) -> Vec<Duration> {
    let mut cfg = SimConfig::new(1, scratch_dir("bench-latency"));
    cfg.ack_delay = Duration::from_millis(1);
    let sim = Sim::start(cfg).await.expect("simulator");
    let board = sim.board(1);
    let mut link = link::spawn(fast_config(board.path()));
    const WAIT: Duration = Duration::from_secs(5);
    wait_for(&mut link.events, WAIT, |e| {
        matches!(e, LinkEvent::Online(_)).then_some(())
    })
    .await
    .expect("online");
    // Clock paused: the only BWTIME frames are the presses (probe replies are `91`).
    link.commands
        .send(LinkCommand::SetAndRun {
            left: Duration::from_secs(600),
            right: Duration::from_secs(600),
            run: RunSide::Paused,
        })
        .await
        .expect("link running");
    wait_for(&mut link.events, WAIT, |e| {
        matches!(e, LinkEvent::CommandDone { command: "end" }).then_some(())
    })
    .await
    .expect("set-and-run and end acknowledged");

    let mut out = Vec::with_capacity(presses);
    for i in 0..presses + 50 {
        let before = board.last_bwtime_write();
        board.press();
        wait_for(&mut link.events, WAIT, |e| {
            matches!(e, LinkEvent::Lever { .. }).then_some(())
        })
        .await
        .expect("lever event");
        let received = Instant::now();
        // The simulator records the write's start after the write returns; wait for it.
        let written = loop {
            match board.last_bwtime_write() {
                Some(w) if Some(w) != before => break w,
                _ => tokio::task::yield_now().await,
            }
        };
        if i >= 50 {
            out.push(received.saturating_duration_since(written));
        }
    }
    out
}
