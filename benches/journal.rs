//! The journal's figures (docs/BENCHMARKS.md): bytes per event, syncs per second with a
//! hall of 1000 boards pressing, and start-up replay time for a full round.
//!
//! `cargo bench --bench journal` (BOARDS=1000 by default; BENCH_SECONDS=10 for the sync run,
//! WINDOW_MS the minimum spacing of syncs, default 0 as in the daemon).

use std::time::{Duration, Instant};

use hallclock::rules::Millis;
use hallclock::rules::game::{Game, Input, Setup};
use hallclock::rules::time_control::parse;
use hallclock::store::read_dir;
use hallclock::store::recover;
use hallclock::store::{JournalSettings, Record, open_after};

const T0: Millis = Millis(1_800_000_000_000);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A full game's records for `board`: created, started, `moves` moves per side with real
/// SAN moves when possible (a knight shuffle) and presses.
fn game(board: usize, presses: usize) -> Vec<Record> {
    let id = format!("board-{board:04}");
    let setup = Setup::new(
        "White Player",
        "Black Player",
        parse("40/5400+30:1800+30").expect("tc"),
        T0,
    );
    let mut g = Game::new(setup.clone()).expect("setup");
    let mut out = vec![Record::GameCreated {
        board: id.clone(),
        game: board as u64,
        round: Some(1),
        fide: (Some(1_503_014), Some(8_603_677)),
        setup: Box::new(setup),
    }];
    let mut seq = 0;
    let mut push =
        |g: &mut Game, events: Vec<hallclock::rules::game::Event>, out: &mut Vec<Record>| {
            for e in events {
                g.evolve(&e);
                seq += 1;
                out.push(Record::Event {
                    board: id.clone(),
                    seq,
                    game: board as u64,
                    event: e,
                });
            }
        };
    let started = g.poll(T0);
    push(&mut g, started, &mut out);
    for p in 0..presses {
        let now = T0 + Millis(10_000 * (p as i64 + 1));
        let mv = ["Nf3", "Nf6", "Ng1", "Ng8"][p % 4];
        let input = Input::Press {
            side: None,
            mv: if p < 12 { Some(mv.to_string()) } else { None },
        };
        if let Ok(events) = g.decide(&input, now) {
            push(&mut g, events, &mut out);
        }
    }
    out
}

fn main() {
    // `cargo test --all-targets` runs bench targets too, without `--bench`: then only a
    // quick smoke run, so the test suite stays fast.
    let measuring = std::env::args().any(|a| a == "--bench");
    let (boards, seconds) = if measuring {
        (env_usize("BOARDS", 1000), env_usize("BENCH_SECONDS", 10))
    } else {
        (10, 1)
    };
    let dir = std::env::temp_dir().join(format!("hallclock-bench-journal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    // 1. A full round: every board plays 120 presses (60 moves a side).
    let mut settings = JournalSettings::new(&dir);
    settings.sync_window = Duration::from_millis(env_usize("WINDOW_MS", 0) as u64);
    let (mut j, _) = open_after(settings.clone()).expect("journal");
    let mut events = 0u64;
    let mut batch = Vec::new();
    for b in 1..=boards {
        let recs = game(b, 120);
        events += recs
            .iter()
            .filter(|r| matches!(r, Record::Event { .. }))
            .count() as u64;
        batch.extend(recs);
        if batch.len() > 5000 {
            j.write(&batch).expect("write");
            batch.clear();
        }
    }
    j.write(&batch).expect("write");
    let bytes = j.stats.bytes;
    println!(
        "round: {boards} boards, {events} events, {} records, {bytes} bytes on disk (framed)",
        j.stats.records
    );
    println!(
        "bytes per event (incl. game records and framing): {:.0}",
        bytes as f64 / events as f64
    );

    // 2. Start-up: read, check and replay the whole round.
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = recover(&settings.dir).expect("recover");
        times.push(t.elapsed());
        assert_eq!(r.games.len(), boards);
    }
    times.sort();
    println!(
        "replay of the round at start-up: median {:?}, max {:?} (5 runs)",
        times[2], times[4]
    );
    let scan = read_dir(&settings.dir).expect("scan");
    println!("segments: {}", scan.segments.len());

    // 3. Group commit: `boards` boards pressing about every 10 s for `seconds` s.
    let _ = std::fs::remove_dir_all(&dir);
    let (j, _) = open_after(settings.clone()).expect("journal");
    let handle = j.spawn();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sample = game(1, 40);
    let counter = handle.clone();
    let (appends, syncs_elapsed, latencies) = rt.block_on(async move {
        let start = Instant::now();
        let mut tasks = Vec::new();
        for b in 0..boards {
            let h = handle.clone();
            let rec = sample[5].clone();
            tasks.push(tokio::spawn(async move {
                // Random phase within the 10 s period.
                let phase = Duration::from_millis((b as u64 * 7919) % 10_000);
                tokio::time::sleep(phase).await;
                let mut lat = Vec::new();
                let mut n = 0u64;
                while start.elapsed() < Duration::from_secs(seconds as u64) {
                    let t = Instant::now();
                    if h.append(vec![rec.clone()]).await.is_ok() {
                        n += 1;
                        lat.push(t.elapsed());
                    }
                    tokio::time::sleep(Duration::from_secs(10)).await;
                }
                (n, lat)
            }));
        }
        let mut total = 0;
        let mut lat = Vec::new();
        for t in tasks {
            if let Ok((n, l)) = t.await {
                total += n;
                lat.extend(l);
            }
        }
        (total, start.elapsed(), lat)
    });
    let mut lat = latencies;
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    println!(
        "group commit: {appends} appends in {:.1} s = {:.0} appends/s; append->durable p50 {:?} p99 {:?} max {:?}",
        syncs_elapsed.as_secs_f64(),
        appends as f64 / syncs_elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
        lat.last().copied().unwrap_or_default()
    );
    println!(
        "fdatasync calls: {} in {:.1} s = {:.1} syncs/s (sync window {:?})",
        counter.syncs(),
        syncs_elapsed.as_secs_f64(),
        counter.syncs() as f64 / syncs_elapsed.as_secs_f64(),
        settings.sync_window
    );
    let _ = std::fs::remove_dir_all(&dir);
}
