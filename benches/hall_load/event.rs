//! A whole event at speed (issue 37, "the card"): `ROUNDS=9` plays that many rounds on
//! every board, one after the other, against the real daemon, and then reports what the
//! daemon left on its disk: the journal's used bytes, the PGN archives, its log at the
//! default level, and its fsyncs over the event.
//!
//! Each board's players are the demo's (`demo::player::choose_move`: a weak, aggressive
//! club player, seeded): a move on the e-board, the press 50–150 ms later, the next move
//! `MOVE_MS` (default 250) after the press. A game ends on the board (mate, stalemate,
//! insufficient material) or after `PLIES` (default 80) half-moves, when the bench's
//! arbiter ends it: every tenth board by a flag (a `set_time` of 0.5 s to the side on
//! move, which then does not move), the others by a resignation or a draw (`set_result`).
//! The next round starts once every game of this one has ended. `DASHBOARDS` and
//! `BROADCAST_POLL_MS` work here too (hall_load/web.rs): the feeds and the broadcast of
//! games with their moves, over the whole event.
//!
//! A game here is shorter than a classical one in time, not in what the daemon writes: its
//! moves, presses, clock states and result are journalled as in the hall, so the card's
//! bytes per game are measured; only the idle board-seconds between moves are fewer.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hallclock::link::testing::scratch_dir;
use hallclock::sim::{BoardHandle, Side, Sim, SimConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::{HALL, Msg, Proc, Subscriber, SyncCounter};

/// How a board's game went on the board.
enum Played {
    /// Mate, stalemate or insufficient material: the daemon ends it by itself.
    OnBoard,
    /// The plies were played; the side to move is the arbiter's to end.
    Plies(Color),
    /// The simulator refused a move or the clock never started (reported).
    Stopped(String),
}

/// One board's game: moves and presses until it ends on the board or `plies` were played.
async fn play(board: BoardHandle, seed: u64, plies: u32, gap: Duration) -> Played {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pos = Chess::default();
    let give_up = Instant::now() + Duration::from_secs(60);
    while board.clock_display().running.is_none() {
        if Instant::now() > give_up {
            return Played::Stopped("the clock never started".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Not every board moves in the same instant (a hall's presses are spread).
    tokio::time::sleep(Duration::from_millis(
        rng.gen_range(0..gap.as_millis().max(1) as u64),
    ))
    .await;
    for _ in 0..plies {
        let Some(m) = hallclock::demo::player::choose_move(&pos, &mut rng) else {
            return Played::OnBoard;
        };
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        if let Err(e) = board.play_move(&uci) {
            return Played::Stopped(format!("the simulator refused {uci}: {e}"));
        }
        pos.play_unchecked(m);
        if pos.is_game_over() {
            // The move ends the game without a press (6.7a).
            return Played::OnBoard;
        }
        tokio::time::sleep(Duration::from_millis(rng.gen_range(50..=150))).await;
        board.press();
        tokio::time::sleep(gap).await;
    }
    Played::Plies(pos.turn())
}

/// Boards (by id) with a `game_ended` event among `seen`.
fn ended(seen: &[Msg]) -> HashSet<&str> {
    seen.iter()
        .filter_map(|m| {
            let (b, k) = m.board_topic()?;
            (k == "event" && m.json()["event"] == "game_ended").then_some(b)
        })
        .collect()
}

/// The bytes of a file up to its last non-zero byte: a journal segment is preallocated
/// (fallocate) and zero beyond its last record, so its size says nothing.
fn used_bytes(path: &Path) -> u64 {
    std::fs::read(path).map_or(0, |b| {
        b.iter().rposition(|&x| x != 0).map_or(0, |p| p as u64 + 1)
    })
}

/// (files, bytes, used bytes) of the files directly in `dir`.
fn files_in(dir: &Path) -> (usize, u64, u64) {
    let mut out = (0, 0, 0);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if meta.is_file() {
            out.0 += 1;
            out.1 += meta.len();
            out.2 += used_bytes(&e.path());
        }
    }
    out
}

/// One round: started, played on every board, ended by the arbiter where the board did
/// not end it, and waited for until every game has ended. Notes what went wrong.
async fn round(
    sub: &mut Subscriber,
    sim: &Sim,
    r: u32,
    plies: u32,
    gap: Duration,
    notes: &mut Vec<String>,
) {
    let n = sim.boards().len();
    // Between rounds the players set the pieces up again, as the demo's do.
    for b in sim.boards() {
        hallclock::demo::player::prepare_board(b, Side::Left, &shakmaty::Board::new());
    }
    let mark = sub.seen.len();
    super::start_round(sub, n, 1, super::wall_us() / 1000 + 3000, r).await;
    let players: Vec<_> = sim
        .boards()
        .iter()
        .map(|b| {
            let seed = (u64::from(r) << 32) | b.number() as u64;
            tokio::spawn(play(b.clone(), seed, plies, gap))
        })
        .collect();
    let (mut on_board, mut flags, mut results) = (0, 0, 0);
    for (i, p) in players.into_iter().enumerate() {
        let id = super::board_id(i + 1);
        let tx = format!("end-{r}-{id}");
        let topic = format!("hallclock/{HALL}/board/{id}/set");
        match p.await {
            Ok(Played::OnBoard) => on_board += 1,
            Ok(Played::Plies(side)) => {
                let side = if side == Color::White {
                    "white"
                } else {
                    "black"
                };
                let body = if (i + 1) % 10 == 0 {
                    flags += 1;
                    json!({"transaction": tx, "arbiter": "IA Bench", "action": "set_time",
                           "side": side, "remaining_ms": 500, "reason": "event benchmark: a flag"})
                } else if i % 2 == 0 {
                    results += 1;
                    json!({"transaction": tx, "arbiter": "IA Bench", "action": "set_result",
                           "result": "resignation", "side": side,
                           "reason": "event benchmark: the game's plies were played"})
                } else {
                    results += 1;
                    json!({"transaction": tx, "arbiter": "IA Bench", "action": "set_result",
                           "result": "agreed_draw",
                           "reason": "event benchmark: the game's plies were played"})
                };
                sub.publish(topic, body).await;
            }
            Ok(Played::Stopped(why)) => notes.push(format!("round {r}, {id}: {why}")),
            Err(e) => notes.push(format!("round {r}, {id}: the player failed: {e}")),
        }
    }
    let all = sub
        .until(
            &format!("round {r}: every game ended"),
            Duration::from_secs(60),
            |seen| ended(&seen[mark..]).len() >= n,
        )
        .await;
    let got = ended(&sub.seen[mark..]).len();
    // A refused command is the bench's mistake or the daemon's: either way, said.
    let refused: Vec<String> = sub.seen[mark..]
        .iter()
        .filter(|m| m.board_topic().is_some_and(|(_, k)| k == "response"))
        .map(Msg::json)
        .filter(|v| v["status"] != "ok")
        .map(|v| v.to_string())
        .collect();
    if let Some(first) = refused.first() {
        notes.push(format!(
            "round {r}: {} command(s) refused, the first: {first}",
            refused.len()
        ));
    }
    println!(
        "   round {r}: {on_board} ended on the board, {flags} by a flag, {results} by the arbiter's result; {got} of {n} `game_ended`"
    );
    if !all {
        notes.push(format!(
            "round {r}: only {got} of {n} games ended within 60 s"
        ));
    }
}

/// `rounds` rounds on `n` boards; prints what the daemon wrote.
pub async fn run(n: usize, rounds: u32, daemon: &Path) {
    let plies: u32 = super::env_num("PLIES").unwrap_or(80);
    let gap = Duration::from_millis(super::env_num("MOVE_MS").unwrap_or(250));
    let dir = scratch_dir(&format!("hall-event-{n}"));
    let (mut broker, port) = super::start_mosquitto(&dir).await;
    let mut cfg = SimConfig::new(n, dir.join("ports"));
    cfg.serial_base = 10000;
    let sim = Sim::start(cfg).await.expect("the simulator starts");
    // DASHBOARDS and BROADCAST_POLL_MS as in a window run: the real games' feeds and PGN.
    let web_load = super::web::WebLoad::from_env();
    let web_port = web_load.on().then(super::free_port);
    let config = super::daemon_config(&dir, port, sim.boards(), None, web_port);
    let mut sub = Subscriber::start(port);
    let log_path = dir.join("daemon.log");
    let log = std::fs::File::create(&log_path).expect("create daemon.log");
    let child = Command::new(daemon)
        .arg("run")
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", daemon.display()));
    let mut proc = Proc { child: Some(child) };
    let pid = proc.pid();
    let online = |seen: &[Msg]| {
        seen.iter()
            .filter(|m| {
                m.board_topic().is_some_and(|(_, k)| k == "availability") && m.payload == b"online"
            })
            .count()
    };
    let setup = Duration::from_secs(20) + Duration::from_millis(20 * n as u64);
    if !sub
        .until("every board online", setup, |s| online(s) >= n)
        .await
    {
        println!("   SETUP: only {} of {n} boards online", online(&sub.seen));
    }
    println!(
        "\n== {n} boards × {rounds} rounds, up to {plies} half-moves a game, a move every {gap:?} + 50–150 ms to the press; load average {}",
        super::loadavg()
    );
    let web = match web_port {
        Some(p) => Some(
            super::web::start(web_load, ([127, 0, 0, 1], p).into(), super::BENCH_ARBITER).await,
        ),
        None => None,
    };
    let web0 = web.as_ref().map(|w| {
        super::web::clear_poll_times(&w.counters);
        w.counters.snapshot()
    });
    let cpu0 = super::cpu_seconds(pid);
    let syncs = SyncCounter::start(pid);
    let t0 = Instant::now();
    let mut notes = Vec::new();
    for r in 1..=rounds {
        round(&mut sub, &sim, r, plies, gap, &mut notes).await;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let fsyncs = syncs.and_then(SyncCounter::stop);
    let cpu = super::cpu_seconds(pid)
        .zip(cpu0)
        .map_or(f64::NAN, |(b, a)| b - a);
    let load_end = super::loadavg();
    if let (Some(w), Some(a)) = (web, web0) {
        let (detail, _) = w.report(&a, &w.counters.snapshot(), elapsed);
        print!("{detail}");
        w.stop();
    }
    // The archive of the last round is written when its last game ends; let it land.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let exit = proc.stop(Duration::from_secs(10));
    sub.drain();
    let seen = std::mem::take(&mut sub.seen);
    drop(sub);
    broker.stop(Duration::from_secs(2));
    drop(sim);
    report(&dir, &seen, elapsed, cpu, fsyncs, &load_end, &exit, &notes);
}

/// What the daemon wrote over the event, and what the subscriber counted.
#[allow(clippy::too_many_arguments)]
fn report(
    dir: &Path,
    seen: &[Msg],
    elapsed: f64,
    cpu: f64,
    fsyncs: Option<u64>,
    load_end: &str,
    exit: &str,
    notes: &[String],
) {
    let mut events: BTreeMap<String, usize> = BTreeMap::new();
    for m in seen.iter().filter(|m| !m.retained) {
        if let Some((_, "event")) = m.board_topic() {
            let name = m.json()["event"].as_str().unwrap_or("?").to_string();
            *events.entry(name).or_default() += 1;
        }
    }
    let state = dir.join("state");
    let journal = state.join("journal");
    let (segments, j_size, j_used) = files_in(&journal);
    let records = hallclock::store::scan::read_dir(&journal).map_or(0, |s| s.records.len());
    let (archives, pgn_bytes, _) = files_in(&state.join("pgn"));
    let mut other = 0;
    for e in std::fs::read_dir(&state).into_iter().flatten().flatten() {
        let p = e.path();
        if p != journal && p != state.join("pgn") {
            other += dir_bytes(&p);
        }
    }
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap_or_default();
    println!(
        "   event: {elapsed:.0} s, load average at the end {load_end}; daemon CPU {cpu:.1} s ({:.1} % of one core); {exit}",
        100.0 * cpu / elapsed
    );
    println!("   events seen on MQTT: {events:?}");
    println!(
        "   journal: {segments} segment(s), {j_size} bytes on disk (preallocated), {j_used} bytes used, {records} records"
    );
    println!("   PGN archives: {archives} file(s), {pgn_bytes} bytes");
    println!("   the rest of the state directory: {other} bytes");
    println!(
        "   daemon log (level info): {} bytes, {} lines",
        log.len(),
        log.lines().count()
    );
    println!(
        "   daemon fsyncs (fdatasync + fsync) over the event: {}",
        fsyncs.map_or("n/a".into(), |f| format!(
            "{f} ({:.1}/s)",
            f as f64 / elapsed
        ))
    );
    print!("{}", super::log_warnings(&dir.join("daemon.log")));
    for note in notes {
        println!("   NOTE: {note}");
    }
    println!("   (folder kept: {})", dir.display());
}

/// Bytes of a file, or of every file under a folder.
fn dir_bytes(p: &Path) -> u64 {
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => m.len(),
        Ok(m) if m.is_dir() => std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| dir_bytes(&e.path()))
            .sum(),
        _ => 0,
    }
}
