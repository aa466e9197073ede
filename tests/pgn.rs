//! The PGN room: games driven through the real rules core, written as PGN, compared with
//! golden files (tests/data/pgn/*.pgn) and read back by python-chess: no parse errors,
//! the moves replay to the core's position, and every `[%clk]` is the official time of
//! the press (`Pressed`/`PeriodAdvanced` `remaining_ms`, whole seconds).
//!
//! `HALLCLOCK_BLESS=1 cargo test --test pgn` rewrites the golden files; read the diff.

mod pychess;

use hallclock::pgn::{self, GameInfo, PgnGame};
use hallclock::rules::adjournment::Resumption;
use hallclock::rules::game::{ArbiterResult, BothAbsent, Event, Game, Input, Rejection, Setup};
use hallclock::rules::time_control::parse;
use hallclock::rules::{Color, Millis};
use proptest::prelude::*;
use shakmaty::Position;

/// 2026-11-30 14:00:00 UTC.
const T0: Millis = Millis(1_796_047_200_000);

fn at(secs: i64) -> Millis {
    T0 + Millis(secs * 1000)
}

fn ms(secs: f64) -> Millis {
    T0 + Millis((secs * 1000.0).round() as i64)
}

fn setup(tc: &str) -> Setup {
    Setup::new("Arias, Eva", "Brandt, Ole", parse(tc).unwrap(), T0)
}

fn info() -> GameInfo {
    GameInfo {
        event: Some("Hall Open 2026".into()),
        site: Some("Lisbon POR".into()),
        round: Some(3),
        board: Some(5),
        white_fide_id: Some(1503014),
        black_fide_id: Some(24116068),
    }
}

/// A driver like the daemon's: poll due deadlines, then decide and evolve.
struct Driver {
    game: Game,
    events: Vec<Event>,
}

impl Driver {
    fn new(s: Setup) -> Driver {
        Driver {
            game: Game::new(s).unwrap(),
            events: Vec::new(),
        }
    }

    /// Both present before the start, clocks started at T0.
    fn started(s: Setup) -> Driver {
        let mut d = Driver::new(s);
        for c in Color::ALL {
            d.input(
                Input::Present {
                    side: c,
                    arbiter: "IA".into(),
                },
                T0 - Millis(1),
            );
        }
        d.advance(T0);
        d
    }

    fn advance(&mut self, now: Millis) {
        let new = self.game.poll(now);
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new);
    }

    fn try_input(&mut self, input: Input, now: Millis) -> Result<(), Rejection> {
        self.advance(now);
        let new = self.game.decide(&input, now)?;
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new);
        Ok(())
    }

    fn input(&mut self, input: Input, now: Millis) {
        if let Err(r) = self.try_input(input.clone(), now) {
            panic!("{input:?} at {now:?} rejected: {r}");
        }
    }

    fn play(&mut self, mv: &str, now: Millis) {
        self.input(
            Input::Press {
                side: None,
                mv: Some(mv.into()),
            },
            now,
        );
    }

    fn press(&mut self, now: Millis) {
        self.input(
            Input::Press {
                side: None,
                mv: None,
            },
            now,
        );
    }

    fn pgn(&self, info: &GameInfo) -> PgnGame {
        pgn::game(self.game.setup(), &self.events, info)
    }

    /// The official time of each completed move, in order: the mover's `remaining_ms` of
    /// the press, or of the period change at that instant.
    fn official_clocks(&self) -> Vec<Millis> {
        let mut out: Vec<(Millis, Color, Millis)> = Vec::new();
        for e in &self.events {
            match e {
                Event::Pressed {
                    at,
                    side,
                    remaining_ms,
                    ..
                } => out.push((*at, *side, *remaining_ms)),
                Event::PeriodAdvanced {
                    at,
                    side,
                    remaining_ms,
                    ..
                } => {
                    if let Some(last) = out.last_mut()
                        && last.0 == *at
                        && last.1 == *side
                    {
                        last.2 = *remaining_ms;
                    }
                }
                _ => {}
            }
        }
        out.into_iter().map(|(_, _, r)| r).collect()
    }

    fn fen(&self) -> String {
        hallclock::rules::game::fen_of(self.game.position().expect("position known"))
    }
}

/// Compare with tests/data/pgn/NAME.pgn (rewritten when HALLCLOCK_BLESS is set).
fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pgn")
        .join(format!("{name}.pgn"));
    if std::env::var_os("HALLCLOCK_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; HALLCLOCK_BLESS=1 cargo test --test pgn writes it",
            path.display()
        )
    });
    assert_eq!(text, want, "{name}.pgn differs; the new text:\n{text}");
}

/// The text with every run of whitespace one space: wrapping may break a sentence.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lines of at most 80 columns, except a single token longer than that.
fn assert_wrapped(text: &str) {
    let mut in_tags = true;
    for line in text.lines() {
        if line.is_empty() {
            in_tags = false;
            continue;
        }
        if in_tags && line.starts_with('[') {
            continue;
        }
        in_tags = false;
        assert!(
            line.chars().count() <= 80 || !line.contains(' '),
            "line over 80 columns: {line:?}"
        );
    }
}

fn clock_secs(moves: &[pychess::Move]) -> Vec<Option<f64>> {
    moves.iter().map(|m| m.clk).collect()
}

fn official_secs(d: &Driver) -> Vec<Option<f64>> {
    d.official_clocks()
        .into_iter()
        .map(|m| Some(pychess::secs(m.0)))
        .collect()
}

#[test]
fn pgn_a_game_to_mate_carries_every_clock_and_the_seven_tags_first() {
    let mut d = Driver::started(setup("180+2"));
    let moves = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"];
    for (i, mv) in moves.iter().enumerate() {
        d.play(mv, ms(3.5 + 4.25 * i as f64));
    }
    // 4. Qxf7# ends the game at the move, without a press (6.7a).
    d.input(Input::Move { mv: "Qxf7#".into() }, ms(40.7));
    let g = d.pgn(&info());
    let text = g.render();
    golden("mate", &text);
    assert_wrapped(&text);
    let names: Vec<&str> = g.tags.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        &names[..7],
        ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    );
    assert_eq!(g.tag("Round"), Some("3.5"));
    assert_eq!(g.tag("Date"), Some("2026.11.30"));
    assert_eq!(g.tag("Termination"), Some("Normal"));
    let py = pychess::check_one(&text);
    assert_eq!(py.fen, d.fen());
    assert_eq!(py.tags["Result"], "1-0");
    assert_eq!(py.tags["WhiteFideId"], "1503014");
    assert_eq!(py.moves.len(), 7);
    // Six pressed moves: their official times; the mate: White's clock, stopped at the
    // move (no increment: no press).
    let mut want = official_secs(&d);
    let white_left = d.game.clock().remaining_at(Color::White, ms(40.7));
    want.push(Some(pychess::secs(white_left.0)));
    assert_eq!(clock_secs(&py.moves), want);
    assert!(py.moves.iter().all(|m| m.emt.is_some()));
    // The clocks are frozen at the end: the tags do not move with time.
    assert_eq!(g.tag("WhiteClock"), Some(pgn::clock(white_left).as_str()));
}

#[test]
fn pgn_rule_6_2b_the_clock_after_a_period_change_includes_the_new_period() {
    // 2 moves in 60 s, then 30 s + 1 s per move: the second press enters period 2.
    let mut d = Driver::started(setup("2/60:30+1"));
    d.play("d4", at(5));
    d.play("d5", at(8));
    d.play("c4", at(20));
    d.play("e6", at(25));
    d.play("Nc3", at(40));
    let g = d.pgn(&info());
    let py = pychess::check_one(&g.render());
    let official = official_secs(&d);
    assert_eq!(clock_secs(&py.moves), official);
    // White: 60 - 5 - 12 = 43 s after move 2, plus the 30 s of period 2 and its +1.
    assert_eq!(py.moves[2].clk, Some(74.0));
    golden("period", &g.render());
}

#[test]
fn pgn_rule_6_9_flag_ends_the_game_with_the_clocks_frozen() {
    let mut d = Driver::started(setup("60"));
    d.play("e4", at(10));
    d.play("c5", at(12));
    // White's flag at 10 + 50 s = 60 s.
    d.advance(at(120));
    let g = d.pgn(&info());
    let text = g.render();
    golden("flag", &text);
    let py = pychess::check_one(&text);
    assert_eq!(py.tags["Result"], "0-1");
    assert_eq!(py.tags["Termination"], "Time forfeit");
    assert_eq!(py.tags["WhiteClock"], "0:00:00");
    assert_eq!(py.tags["BlackClock"], "0:00:58");
    assert!(
        flat(&text).contains("White's flag fell (Article 6.9)"),
        "{text}"
    );
}

#[test]
fn pgn_an_observed_game_says_so_and_carries_the_hand_set_clocks_times() {
    let mut s = setup("300+30");
    s.observed = true;
    let mut d = Driver::started(s);
    d.play("e4", at(10));
    // The clock was set to 5:00 +0: White shows 5:20 where the round's control reckons
    // 5:50; the clock's time is the official one.
    d.input(
        Input::ClockTimes {
            white: Millis::from_secs(320),
            black: Millis::from_secs(330),
        },
        at(10),
    );
    d.play("e5", at(15));
    // Later the clock is set by hand: a note, not a move's clock.
    d.input(
        Input::ClockTimes {
            white: Millis::from_secs(200),
            black: Millis::from_secs(355),
        },
        at(20),
    );
    let text = d.pgn(&info()).render();
    let py = pychess::check_one(&text);
    assert_eq!(py.tags["ClockMode"], "observe");
    assert_eq!(py.moves[0].clk, Some(320.0), "{text}");
    assert!(
        flat(&text).contains(
            "The hand-set clock showed White 0:03:20, Black 0:05:55; reckoned from the presses: White 0:05:15, Black 0:05:55."
        ),
        "{text}"
    );
}

#[test]
fn pgn_a_move_made_but_not_pressed_waits_for_its_press() {
    let mut d = Driver::started(setup("300+3"));
    d.play("e4", at(2));
    d.input(Input::Move { mv: "c5".into() }, at(9));
    let g = d.pgn(&info());
    assert_eq!(
        g.moves.len(),
        1,
        "the unpressed c5 has no official time yet"
    );
    d.press(at(10));
    let g = d.pgn(&info());
    assert_eq!(g.moves.len(), 2);
    assert_eq!(g.moves[1].clk, d.official_clocks()[1]);
}

#[test]
fn pgn_rule_6_13_arbiter_acts_become_comments_naming_their_rule() {
    let mut s = setup("5400+30");
    s.white = "O'Neil \"Bo\" \\ Jr".into();
    let mut d = Driver::started(s);
    d.play("Nf3", at(30));
    d.input(
        Input::Pause {
            arbiter: "IA Stein".into(),
            reason: "light failure".into(),
        },
        at(40),
    );
    d.input(
        Input::Resume {
            arbiter: "IA Stein".into(),
        },
        at(100),
    );
    d.input(
        Input::AddTime {
            side: Color::White,
            delta: Millis::from_mins(2),
            arbiter: "IA } [%clk 9:59:59] {".into(),
            reason: "7.5.2 two minutes".into(),
        },
        at(110),
    );
    d.play("d5", at(120));
    d.input(
        Input::SetTime {
            side: Color::Black,
            remaining: Millis::from_mins(80),
            arbiter: "IA Stein".into(),
            reason: "clock set wrong".into(),
        },
        at(130),
    );
    d.play("g3", at(150));
    let g = d.pgn(&info());
    let text = g.render();
    golden("arbiter", &text);
    assert_wrapped(&text);
    assert!(
        flat(&text).contains(r#"[White "O'Neil \"Bo\" \\ Jr"]"#),
        "{text}"
    );
    assert!(flat(&text).contains("(Article 6.12a)") && flat(&text).contains("(Article 6.13)"));
    assert!(
        !flat(&text).contains("light failure"),
        "reasons stay out of the public PGN"
    );
    let py = pychess::check_one(&text);
    // python-chess keeps tag values as written (it does not unescape): one whole tag.
    assert_eq!(py.tags["White"], r#"O'Neil \"Bo\" \\ Jr"#);
    // The arbiter's name cannot forge a clock.
    assert_eq!(clock_secs(&py.moves), official_secs(&d));
    assert_eq!(py.fen, d.fen());
}

#[test]
fn pgn_rule_7_1_clock_only_board_moves_as_far_as_known_then_from_the_set_position() {
    let mut d = Driver::started(setup("900+10"));
    d.play("e4", at(5));
    d.play("e5", at(9));
    d.press(at(20));
    d.press(at(31));
    // Unknown moves: the movetext stops at the last known one.
    let g = d.pgn(&info());
    let text = g.render();
    let py = pychess::check_one(&text);
    assert_eq!(py.moves.len(), 2);
    assert!(flat(&text).contains("2 move(s) not recorded"), "{text}");
    // The arbiter enters the position: the PGN starts from it.
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    d.input(
        Input::SetPosition {
            fen: fen.into(),
            arbiter: "IA".into(),
            reason: "clock-only board".into(),
        },
        at(40),
    );
    d.play("Bb5", at(45));
    d.play("a6", at(50));
    let g = d.pgn(&info());
    let text = g.render();
    golden("clock_only", &text);
    assert_eq!(g.tag("FEN"), Some(fen));
    let py = pychess::check_one(&text);
    assert_eq!(py.fen, d.fen());
    assert_eq!(py.moves.len(), 2);
    assert!(py.intro.contains("1. e4 e5"), "{}", py.intro);
    let official = official_secs(&d);
    assert_eq!(clock_secs(&py.moves), official[official.len() - 2..]);
}

#[test]
fn pgn_rule_7_5_1_reinstated_position_takes_the_moves_back() {
    let mut d = Driver::started(setup("900+10"));
    d.play("e4", at(5));
    d.play("e5", at(9));
    d.play("Nf3", at(12));
    d.play("Nc6", at(15));
    let after_e5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    d.input(
        Input::SetPosition {
            fen: after_e5.into(),
            arbiter: "IA".into(),
            reason: "irregularity".into(),
        },
        at(20),
    );
    d.play("Nc3", at(25));
    let g = d.pgn(&info());
    let text = g.render();
    let py = pychess::check_one(&text);
    assert_eq!(
        py.moves.iter().map(|m| m.san.as_str()).collect::<Vec<_>>(),
        ["e4", "e5", "Nc3"]
    );
    assert_eq!(py.fen, d.fen());
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("(Article 7.5.1); moves taken back: Nf3 Nc6"),
        "{text}"
    );
}

#[test]
fn pgn_rule_6_6_forfeits_and_annulments_as_lichess_and_pairing_programs_read_them() {
    // One absent: a forfeit win.
    let mut s = setup("5400+30");
    s.default_time = Millis::from_mins(30);
    let mut d = Driver::new(s.clone());
    d.input(
        Input::Present {
            side: Color::White,
            arbiter: "IA".into(),
        },
        at(60),
    );
    d.advance(at(3600));
    let text = d.pgn(&info()).render();
    let py = pychess::check_one(&text);
    assert_eq!(py.tags["Result"], "1-0");
    assert_eq!(py.tags["Termination"], "Abandoned");
    assert!(flat(&text).contains("Black was absent when default time passed (Article 6.6)"));
    // Both absent: 0-0, and `*` closes the movetext (0-0 would read as castling).
    s.both_absent = BothAbsent::BothLose;
    let mut d = Driver::new(s);
    d.advance(at(3600));
    let text = d.pgn(&info()).render();
    golden("double_forfeit", &text);
    let py = pychess::check_one(&text);
    assert_eq!(py.tags["Result"], "0-0");
    assert!(text.trim_end().ends_with('*'));
    // Annulled: no result.
    let mut d = Driver::started(setup("5400+30"));
    d.play("e4", at(5));
    d.input(
        Input::SetResult {
            result: ArbiterResult::Annulled,
            arbiter: "CA".into(),
            reason: "wrong pairing".into(),
        },
        at(60),
    );
    let text = d.pgn(&info()).render();
    let py = pychess::check_one(&text);
    assert_eq!(py.tags["Result"], "*");
    assert_eq!(py.tags["Termination"], "Unterminated");
    assert!(flat(&text).contains("annulled by arbiter CA"), "{text}");
}

fn nonce(b: u8) -> String {
    format!("{b:02x}").repeat(16)
}

#[test]
fn pgn_rule_i_1_1_adjourned_game_says_so_and_the_sealed_move_keeps_its_clock() {
    let mut s = setup("40/7200:3600");
    s.start = T0;
    let mut d = Driver::started(s);
    d.input(
        Input::SetSessionEnd {
            end: Some(at(3600)),
            arbiter: "schedule".into(),
        },
        at(1),
    );
    d.play("e4", at(10));
    d.play("e5", at(30));
    d.play("Nf3", at(60));
    d.advance(at(3600));
    d.input(
        Input::Seal {
            side: None,
            mv: "Nc6".into(),
            nonce: nonce(7),
            on_board: false,
        },
        at(3700),
    );
    d.input(Input::CommitSeal { arbiter: None }, at(3720));
    let resumes = at(86_400);
    d.input(
        Input::ScheduleResumption {
            resumption: Resumption {
                start: resumes,
                end: None,
                place: "Hall B".into(),
            },
            arbiter: "IA".into(),
        },
        at(3800),
    );
    let g = d.pgn(&info());
    let text = g.render();
    golden("adjourned", &text);
    assert_eq!(g.tag("Result"), Some("*"));
    assert_eq!(g.tag("Termination"), Some("Unterminated"));
    assert!(
        flat(&text).contains("Black's move is sealed (Guidelines I.1.1)"),
        "{text}"
    );
    let py = pychess::check_one(&text);
    assert_eq!(py.moves.len(), 3, "the sealed move stays secret");
    let sealed_clock = d
        .events
        .iter()
        .find_map(|e| match e {
            Event::SealCommitted { remaining_ms, .. } => Some(*remaining_ms),
            _ => None,
        })
        .unwrap();
    // The resumption: the envelope is opened and the sealed move played.
    d.input(
        Input::Present {
            side: Color::White,
            arbiter: "IA".into(),
        },
        resumes - Millis(60_000),
    );
    d.advance(resumes);
    d.input(
        Input::OpenEnvelope {
            mv: "Nc6".into(),
            nonce: nonce(7),
            arbiter: "IA".into(),
        },
        resumes + Millis(30_000),
    );
    d.play("Bb5", resumes + Millis(90_000));
    let text = d.pgn(&info()).render();
    let py = pychess::check_one(&text);
    assert_eq!(py.fen, d.fen());
    assert_eq!(py.moves[3].san, "Nc6");
    assert_eq!(py.moves[3].clk, Some(pychess::secs(sealed_clock.0)));
    assert_eq!(py.tags["Result"], "*");
    assert!(!py.tags.contains_key("Termination"));
}

#[test]
fn pgn_time_odds_give_each_colour_its_control() {
    let mut s = setup("300");
    s.tc_black = Some(parse("240+2d").unwrap());
    let d = Driver::started(s);
    let g = d.pgn(&info());
    assert_eq!(g.tag("TimeControl"), Some("300"));
    assert_eq!(g.tag("WhiteTimeControl"), Some("300"));
    assert_eq!(g.tag("BlackTimeControl"), Some("240"));
    pychess::check_one(&g.render());
}

#[test]
fn pgn_round_is_every_game_in_the_order_given() {
    let mut games = Vec::new();
    for b in 1..=3u32 {
        let mut d = Driver::started(setup("180+2"));
        d.play("e4", at(i64::from(b)));
        games.push(d.pgn(&GameInfo {
            board: Some(b),
            ..info()
        }));
    }
    let py = pychess::check(&pgn::round(&games));
    let rounds: Vec<&str> = py.iter().map(|g| g.tags["Round"].as_str()).collect();
    assert_eq!(rounds, ["3.1", "3.2", "3.3"]);
    assert!(py.iter().all(|g| g.errors.is_empty()));
}

#[test]
fn pgn_board_numbers_come_from_the_board_id() {
    assert_eq!(pgn::board_number("board-007"), Some(7));
    assert_eq!(pgn::board_number("12"), Some(12));
    assert_eq!(pgn::board_number("b3x"), None);
    assert_eq!(pgn::board_number("table"), None);
    assert_eq!(pgn::board_number("board-000"), None);
}

#[test]
fn pgn_comment_longer_than_a_line_wraps_between_words() {
    let mut d = Driver::started(setup("180+2"));
    d.play("e4", at(2));
    d.input(
        Input::Pause {
            arbiter: "International Arbiter Maria-Theresa of the Very Long Surname Federation"
                .into(),
            reason: "x".into(),
        },
        at(3),
    );
    let text = d.pgn(&info()).render();
    assert_wrapped(&text);
    pychess::check_one(&text);
}

/// A random legal game: each step a legal move pressed after 0.1–20 s, sometimes an
/// unpressed move or a pause; the clock is 3+2 or 2 moves in 60 s then 30+1.
fn random_game(seed: u64, steps: usize, tc: &str) -> Driver {
    let mut rng = seed;
    let mut next = move |n: u64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % n.max(1)
    };
    let mut d = Driver::started(setup(tc));
    let mut now = T0;
    for _ in 0..steps {
        if d.game.result().is_some() {
            break;
        }
        now += Millis(100 + next(20_000) as i64);
        let Some(pos) = d.game.position().cloned() else {
            break;
        };
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[next(legal.len() as u64) as usize];
        let san = shakmaty::san::San::from_move(&pos, m).to_string();
        if next(10) == 0 {
            let _ = d.try_input(Input::Move { mv: san }, now);
            now += Millis(300);
            let _ = d.try_input(
                Input::Press {
                    side: None,
                    mv: None,
                },
                now,
            );
        } else {
            let _ = d.try_input(
                Input::Press {
                    side: None,
                    mv: Some(san),
                },
                now,
            );
        }
    }
    d
}

#[test]
fn pgn_random_games_replay_in_python_chess_with_every_official_clock() {
    let mut games = Vec::new();
    let mut drivers = Vec::new();
    for seed in 0..24u64 {
        let tc = if seed % 2 == 0 { "180+2" } else { "2/60:30+1" };
        let d = random_game(seed, 40 + (seed as usize * 7) % 90, tc);
        games.push(d.pgn(&info()));
        drivers.push(d);
    }
    let text = pgn::round(&games);
    assert_wrapped(&text);
    let py = pychess::check(&text);
    assert_eq!(py.len(), drivers.len());
    for (i, (g, d)) in py.iter().zip(&drivers).enumerate() {
        assert!(g.errors.is_empty(), "game {i}: {:?}", g.errors);
        if let Some(pos) = d.game.position() {
            assert_eq!(g.fen, hallclock::rules::game::fen_of(pos), "game {i}");
        }
        let shown = g.moves.len();
        let official = official_secs(d);
        // Every pressed move, in order; a final unpressed move (the game ended on it)
        // has the stopped clock.
        assert!(shown >= official.len(), "game {i}");
        assert_eq!(
            clock_secs(&g.moves)[..official.len()],
            official[..],
            "game {i}"
        );
        assert!(g.moves.iter().all(|m| m.clk.is_some() && m.emt.is_some()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The delayed view never shows anything newer than its instant, and is exactly the
    /// game as it was: the same as the PGN of the events up to then.
    #[test]
    fn pgn_delayed_view_shows_the_game_as_it_was(seed in 0u64..1000, cut in 0i64..900) {
        let d = random_game(seed, 60, "180+2");
        let t = T0 + Millis(cut * 1000);
        let shown = pgn::game_at(d.game.setup(), &d.events, &info(), t);
        prop_assert_eq!(&shown, &pgn::game(d.game.setup(), pgn::events_until(&d.events, t), &info()));
        let newest = pgn::events_until(&d.events, t).last().map(|e| e.at());
        prop_assert!(newest.is_none_or(|at| at <= t));
        let presses_by_t = d.events.iter().filter(|e| matches!(e, Event::Pressed { at, .. } if *at <= t)).count();
        let ended_by_t = d.events.iter().any(|e| matches!(e, Event::GameEnded { at, .. } if *at <= t));
        if !ended_by_t && d.game.position().is_some() {
            // Exactly the moves completed by a press at or before t.
            prop_assert_eq!(shown.moves.len(), presses_by_t);
        }
        // A prefix of the full game's moves, with the same clocks.
        let full = d.pgn(&info());
        prop_assert!(shown.moves.len() <= full.moves.len());
        for (a, b) in shown.moves.iter().zip(&full.moves) {
            prop_assert_eq!(&a.san, &b.san);
            prop_assert_eq!(a.clk, b.clk);
        }
    }
}
