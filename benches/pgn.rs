//! PGN from a game's events: what a change costs per board (the board actor renders its
//! game after every batch of events) and a whole round (`hallclock pgn`, a web poll).
//!
//! `cargo bench --bench pgn`

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use hallclock::pgn::{self, GameInfo};
use hallclock::rules::Millis;
use hallclock::rules::game::{Event, Game, Input, Setup};
use hallclock::rules::time_control::parse;
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

fn bench(c: &mut Criterion) {
    let info = GameInfo {
        round: Some(3),
        board: Some(5),
        ..GameInfo::default()
    };
    let (setup, events) = game(7, 80);
    let moves = events
        .iter()
        .filter(|e| matches!(e, Event::Pressed { .. }))
        .count();
    eprintln!("one game: {moves} plies, {} events", events.len());
    c.bench_function("pgn: one 80-move game, events to text", |b| {
        b.iter(|| black_box(pgn::game(&setup, black_box(&events), &info).render()))
    });
    let value = pgn::game(&setup, &events, &info);
    c.bench_function("pgn: one 80-move game, render only", |b| {
        b.iter(|| black_box(value.render()))
    });
    let half = events[events.len() / 2].at();
    c.bench_function(
        "pgn: one 80-move game, delayed view (events_until + text)",
        |b| {
            b.iter(|| {
                let shown = pgn::events_until(black_box(&events), half);
                black_box(pgn::game(&setup, shown, &info).render())
            })
        },
    );

    // A 1000-board round, 40 moves per game on average.
    let round: Vec<(Setup, Vec<Event>)> =
        (0..1000).map(|i| game(i, 20 + (i % 41) as usize)).collect();
    let mut group = c.benchmark_group("pgn: 1000-board round");
    group.sample_size(10);
    group.bench_function("events to text", |b| {
        b.iter(|| {
            let games: Vec<_> = round
                .iter()
                .enumerate()
                .map(|(i, (s, e))| {
                    let info = GameInfo {
                        round: Some(3),
                        board: Some(i as u32 + 1),
                        ..GameInfo::default()
                    };
                    pgn::game(s, e, &info)
                })
                .collect();
            black_box(pgn::round(&games))
        })
    });
    let values: Vec<_> = round.iter().map(|(s, e)| pgn::game(s, e, &info)).collect();
    eprintln!("round text: {} bytes", pgn::round(&values).len());
    group.bench_function("render only", |b| b.iter(|| black_box(pgn::round(&values))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
