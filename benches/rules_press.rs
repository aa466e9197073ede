//! decide + evolve of a lever press: the hot path of every board (target: median < 1 µs).
//!
//! `cargo bench --bench rules_press`

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use hallclock::rules::Millis;
use hallclock::rules::game::{Game, Input, Setup};
use hallclock::rules::time_control::parse;

const T0: Millis = Millis(1_800_000_000_000);

fn running_game(tc: &str) -> Game {
    let mut g = Game::new(Setup::new("W", "B", parse(tc).expect("tc"), T0)).expect("setup");
    for e in g.poll(T0) {
        g.evolve(&e);
    }
    g
}

fn press(c: &mut Criterion) {
    // Clock-only board (no move attached): what a hall of DGT clocks does all day.
    let mut g = running_game("40/5400+30:1800+30");
    let mut now = T0;
    let input = Input::Press {
        side: None,
        mv: None,
    };
    c.bench_function("press: decide+evolve, clock only", |b| {
        b.iter(|| {
            now += Millis(1);
            let events = g.decide(black_box(&input), now).expect("press accepted");
            for e in &events {
                g.evolve(e);
            }
            black_box(events.len())
        })
    });

    // With a move in SAN, validated against the position (e-board or arbiter input),
    // including the game-ending checks (mate, stalemate, dead position, 75 moves,
    // fivefold). Each run starts from the same middlegame position.
    let mut setup = Setup::new("W", "B", parse("5400+30").expect("tc"), T0);
    setup.fen = Some("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R1BQK2R w KQ - 0 8".into());
    let mut base = Game::new(setup).expect("setup");
    for e in base.poll(T0) {
        base.evolve(&e);
    }
    let input = Input::Press {
        side: None,
        mv: Some("O-O".into()),
    };
    c.bench_function("press: decide+evolve, with SAN move", |b| {
        b.iter_batched(
            || base.clone(),
            |mut g| {
                let events = g.decide(&input, T0 + Millis(5000)).expect("move accepted");
                for e in &events {
                    g.evolve(e);
                }
                g
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, press);
criterion_main!(benches);
