//! How long the 6.9 / 5.2.2 checks take: `cargo bench --bench can_mate`.
//!
//! Part 1 (criterion): the cheap checks that may run after every move, on endgame positions.
//! Part 2 (printed table): p50/p99/max of `can_mate` end to end (what a flag fall costs),
//! over repeated runs, on positions that need the full search, locked pawn chains and the
//! hard constructed one among them. Criterion reports means and confidence intervals, not
//! tails, so part 2 times each call itself.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use hallclock::rules::dead_position::{MateVerdict, can_mate, cannot_mate_fast, is_dead_position};
use hallclock::rules::fen::parse_position;
use shakmaty::{Chess, Color};

const KN_VS_K: &str = "8/8/8/8/8/4k3/8/4K1N1 w - - 0 1";
const KR_VS_K: &str = "4k3/8/8/8/8/8/8/R3K3 b - - 0 1";
const KB_VS_KB_OPPOSITE: &str = "8/8/3b4/8/8/4k3/8/4KB2 w - - 0 1";
const KN_VS_KP: &str = "8/8/8/8/8/1p6/8/k1K1N3 w - - 0 1";
/// lichess ijyj0mHa: Black cannot mate, White can.
const LICHESS_WALL: &str = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1";
const BISHOPS_WALL: &str = "2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1";
const CONSTRUCTED_HARD: &str = "7b/1k5B/7b/8/1p1p1p1p/1PpP1P1P/2P3K1/N7 b - - 0 1";

/// (name, FEN, intended winner) for the cheap checks.
const ENDGAMES: &[(&str, &str, Color)] = &[
    ("kn_vs_k", KN_VS_K, Color::White),
    ("kr_vs_k", KR_VS_K, Color::White),
    ("kr_vs_k_defender", KR_VS_K, Color::Black),
    (
        "kb_vs_kb_same",
        "8/8/4b3/8/8/4k3/8/4KB2 w - - 0 1",
        Color::White,
    ),
    ("kb_vs_kb_opposite", KB_VS_KB_OPPOSITE, Color::White),
    ("kn_vs_kp", KN_VS_KP, Color::White),
    ("kp_vs_k", "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", Color::White),
    ("lichess_wall_black", LICHESS_WALL, Color::Black),
    ("lichess_wall_white", LICHESS_WALL, Color::White),
    ("bishops_wall", BISHOPS_WALL, Color::White),
    (
        "rook_cage",
        "2k5/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1",
        Color::White,
    ),
    (
        "kqp_vs_kp",
        "8/5k2/8/3p4/3P4/8/2Q5/4K3 w - - 0 1",
        Color::Black,
    ),
];

/// (name, FEN) for `is_dead_position`, which runs after every move: mostly live positions.
const AFTER_A_MOVE: &[(&str, &str)] = &[
    (
        "opening",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    ),
    (
        "middlegame",
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R1BQKB1R w KQ - 0 8",
    ),
    ("kr_vs_k", KR_VS_K),
    ("kn_vs_k", KN_VS_K),
    ("kb_vs_kb_opposite", KB_VS_KB_OPPOSITE),
    ("lichess_wall", LICHESS_WALL),
    ("bishops_wall", BISHOPS_WALL),
];

/// (name, FEN, intended winner) for the full search. Besides the above, positions from
/// chasolver's `tests/positions.txt` (community queries).
const HARD: &[(&str, &str, Color)] = &[
    ("lichess_wall_black", LICHESS_WALL, Color::Black),
    ("lichess_wall_white", LICHESS_WALL, Color::White),
    ("kn_vs_kp", KN_VS_KP, Color::White),
    ("bishops_wall", BISHOPS_WALL, Color::White),
    (
        "caged_kings",
        "Bb1k1b2/bKp1p1p1/1pP1P1P1/1P6/p5P1/P7/8/8 w - - 0 1",
        Color::White,
    ),
    (
        "caged_kings_a5",
        "Bb1k1b2/bKp1p1p1/1pP1P1P1/pP6/6P1/P7/8/8 w - - 0 1",
        Color::White,
    ),
    (
        "chains_kings_in",
        "k1bK4/1p1p4/1PpPp3/2P1Pp2/2p1pP2/2p1P3/2P5/8 w - - 0 1",
        Color::White,
    ),
    (
        "chains_bishop",
        "8/1p4p1/1Pp3p1/k1P3p1/1pP3Pb/1P4p1/6P1/7K w - - 0 1",
        Color::Black,
    ),
    (
        "full_board_locked",
        "bqn1KN2/rrk1pB2/nb1pPp1p/p1pP1PpP/PpP3P1/1P2N1R1/4Q3/1R4B1 w - - 0 1",
        Color::White,
    ),
    ("constructed_hard_white", CONSTRUCTED_HARD, Color::White),
    // The slowest of chasolver's tests/positions.txt here (seconds).
    (
        "corpus_slowest",
        "BbK1kb2/b1p1p1p1/1pP1P1P1/1P6/8/8/8/1B2b2B b - - 0 1",
        Color::White,
    ),
    ("constructed_hard_black", CONSTRUCTED_HARD, Color::Black),
];

fn position(fen: &str) -> Chess {
    parse_position(fen).unwrap_or_else(|e| panic!("benchmark FEN {fen}: {e}"))
}

fn fast_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("fast");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for &(name, fen, winner) in ENDGAMES {
        let pos = position(fen);
        group.bench_function(format!("cannot_mate_fast/{name}"), |b| {
            b.iter(|| cannot_mate_fast(black_box(&pos), black_box(winner)))
        });
    }
    for &(name, fen) in AFTER_A_MOVE {
        let pos = position(fen);
        group.bench_function(format!("is_dead_position/{name}"), |b| {
            b.iter(|| is_dead_position(black_box(&pos)))
        });
    }
    group.finish();
}

/// Times `f` one call at a time, `runs` times (fewer if the budget runs out).
fn sample(runs: usize, budget: Duration, mut f: impl FnMut()) -> Vec<Duration> {
    let started = Instant::now();
    let mut times = Vec::with_capacity(runs);
    while times.len() < runs && (times.is_empty() || started.elapsed() < budget) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times
}

/// Nearest-rank percentile of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn print_row(label: &str, outcome: &str, times: &[Duration]) {
    println!(
        "{label:<40} {outcome:<24} {:>6} {:>12.1?} {:>12.1?} {:>12.1?}",
        times.len(),
        percentile(times, 50.0),
        percentile(times, 99.0),
        times[times.len() - 1],
    );
}

fn outcome(verdict: &MateVerdict) -> String {
    match verdict {
        MateVerdict::CanMate { helpmate, .. } => format!("can_mate ({} plies)", helpmate.len()),
        MateVerdict::CannotMate { proof } => format!("cannot_mate ({proof:?})"),
        MateVerdict::Unknown { reason } => format!("unknown ({reason})"),
    }
}

fn header(title: &str) {
    println!("\n{title}");
    println!(
        "{:<40} {:<24} {:>6} {:>12} {:>12} {:>12}",
        "position / winner", "outcome", "runs", "p50", "p99", "max"
    );
}

fn tails() {
    header("cannot_mate_fast, per call (1000 runs each)");
    let mut all = Vec::new();
    for &(name, fen, winner) in ENDGAMES {
        let pos = position(fen);
        let proven = cannot_mate_fast(&pos, winner);
        let times = sample(1000, Duration::from_secs(2), || {
            black_box(cannot_mate_fast(black_box(&pos), winner));
        });
        print_row(
            &format!("{name} / {winner}"),
            &format!("proven={proven}"),
            &times,
        );
        all.extend(times);
    }
    all.sort();
    print_row("ALL", "", &all);

    header("can_mate (fast check, then full search), per call");
    let mut all = Vec::new();
    for &(name, fen, winner) in HARD {
        let pos = position(fen);
        let verdict = can_mate(&pos, winner);
        let times = sample(100, Duration::from_secs(10), || {
            black_box(can_mate(black_box(&pos), winner));
        });
        print_row(&format!("{name} / {winner}"), &outcome(&verdict), &times);
        all.extend(times);
    }
    all.sort();
    print_row("ALL", "", &all);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    fast_path(&mut c);
    c.final_summary();
    // `cargo test --all-targets` (scripts/test) runs this binary too, unoptimised and without
    // `--bench`; criterion then runs each benchmark once, and the tails, which take seconds
    // per call in a debug build, are left out.
    if std::env::args().any(|arg| arg == "--bench") {
        tails();
    }
}
