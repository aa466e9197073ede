//! The broadcast feed (`/broadcast/round/N/games.pgn`): a 200- and a 1000-board round
//! built from nothing, the cost of a change (one game gains a move: that game renders
//! again, the round's body is joined and its ETag made), and an unchanged poll (the ETag
//! hit behind a 304: the events shown are counted per game and compared with the cache).
//!
//! `cargo bench --bench broadcast`

use std::sync::Arc;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use hallclock::broadcast::{FeedGame, FeedWriter, Which};
use hallclock::rules::Millis;
use hallclock::rules::game::{Event, Game, Input, Setup};
use hallclock::rules::time_control::parse;
use hallclock::store::JournaledGame;
use shakmaty::Position;

const T0: Millis = Millis(1_800_000_000_000);

/// A game of `moves` full moves (pseudo-random legal moves, none ending the game when
/// another is possible), every one pressed a few seconds after the last.
fn game(seed: u64, moves: usize) -> (Setup, Vec<Event>) {
    let setup = Setup::new(
        "Arias, Eva",
        "Brandt, Ole",
        parse("40/5400+30:1800+30").expect("tc"),
        T0,
    );
    let mut g = Game::new(setup.clone()).expect("setup");
    let mut events = Vec::new();
    let apply = |g: &mut Game, new: Vec<Event>, events: &mut Vec<Event>| {
        for e in &new {
            g.evolve(e);
        }
        events.extend(new);
    };
    let first = g.poll(T0);
    apply(&mut g, first, &mut events);
    let mut rng = seed.wrapping_add(1);
    let mut now = T0;
    for _ in 0..moves * 2 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let Some(pos) = g.position().cloned() else {
            break;
        };
        if g.result().is_some() {
            break;
        }
        let legal = pos.legal_moves();
        // Prefer a move after which the game goes on, so the game is long enough.
        let pick = (0..legal.len())
            .map(|k| legal[(k + (rng >> 33) as usize) % legal.len()])
            .find(|m| {
                let mut after = pos.clone();
                after.play_unchecked(*m);
                !after.is_game_over() && !after.is_insufficient_material()
            })
            .unwrap_or(legal[0]);
        let san = shakmaty::san::San::from_move(&pos, pick).to_string();
        now += Millis(1000 + (rng >> 40) as i64 % 20_000);
        let input = Input::Press {
            side: None,
            mv: Some(san),
        };
        let due = g.poll(now);
        apply(&mut g, due, &mut events);
        match g.decide(&input, now) {
            Ok(new) => apply(&mut g, new, &mut events),
            Err(_) => break,
        }
    }
    (setup, events)
}

fn feed(boards: usize, delay: Millis) -> (FeedWriter, Vec<JournaledGame>) {
    let dir =
        std::env::temp_dir().join(format!("hallclock-bench-broadcast-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let games: Vec<JournaledGame> = (0..boards)
        .map(|i| {
            let (setup, events) = game(i as u64, 20 + i % 41);
            let game = hallclock::rules::game::Game::new(setup.clone())
                .ok()
                .map(|mut g| {
                    for e in &events {
                        g.evolve(e);
                    }
                    g
                });
            JournaledGame {
                board: format!("board-{:03}", i + 1),
                round: Some(3),
                fide: (None, None),
                setup,
                events,
                game,
            }
        })
        .collect();
    let w = FeedWriter::recovered(
        &dir,
        delay,
        Default::default(),
        games
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, g)| (i as u64 + 1, g)),
    );
    (w, games)
}

fn bench(c: &mut Criterion) {
    for boards in [200, 1000] {
        let (w, games) = feed(boards, Millis::ZERO);
        let now: Arc<dyn Fn() -> Millis + Send + Sync> = Arc::new(|| T0 + Millis(86_400_000));
        let mut group = c.benchmark_group(format!("broadcast: {boards}-board round"));
        group.sample_size(10);
        group.bench_function("games.pgn from nothing (every game rendered)", |b| {
            b.iter(|| {
                let source = w.source(now.clone());
                black_box(source.round(Which::Round(3)).expect("round").body.len())
            })
        });
        let source = w.source(now.clone());
        let r = source.round(Which::Round(3)).expect("round");
        eprintln!("{boards} boards: games.pgn is {} bytes", r.body.len());
        group.sample_size(100);
        group.bench_function("unchanged poll (ETag hit)", |b| {
            b.iter(|| {
                let again = source.round(Which::Round(3)).expect("round");
                black_box(again.etag == r.etag)
            })
        });
        // One game changes: board 1 alternates between its last event and the one
        // before, as a press comes in.
        let g = &games[0];
        let full = FeedGame {
            game_id: 1,
            board: g.board.clone(),
            info: hallclock::pgn::GameInfo {
                round: Some(3),
                board: Some(1),
                ..Default::default()
            },
            body: hallclock::broadcast::view::Body::Events {
                setup: Box::new(g.setup.clone()),
                events: g.events.clone(),
            },
            finished: false,
        };
        let mut shorter = full.clone();
        if let hallclock::broadcast::view::Body::Events { events, .. } = &mut shorter.body {
            events.pop();
        }
        let mut flip = false;
        group.bench_function("a change on one board, then the poll", |b| {
            b.iter(|| {
                flip = !flip;
                w.game(if flip { shorter.clone() } else { full.clone() }, 3);
                black_box(source.round(Which::Round(3)).expect("round").body.len())
            })
        });
        group.finish();
        // A delayed feed: the same poll, cut at mid-round.
        let (wd, _) = feed(boards, Millis(600_000));
        let mid: Arc<dyn Fn() -> Millis + Send + Sync> =
            Arc::new(|| T0 + Millis(600_000) + Millis(20 * 11_000));
        let delayed = wd.source(mid);
        let r = delayed.round(Which::Round(3)).expect("round");
        let mut group =
            c.benchmark_group(format!("broadcast: {boards}-board round, delayed 10 min"));
        group.bench_function("unchanged poll (ETag hit)", |b| {
            b.iter(|| black_box(delayed.round(Which::Round(3)).expect("round").etag == r.etag))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
