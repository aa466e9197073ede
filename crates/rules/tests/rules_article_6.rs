//! Article 6, rule by rule, through the pure core. Every test crosses time by passing
//! instants: no sleeping, exact to the millisecond.

use hallclock_rules::game::{
    ArbiterResult, BothAbsent, Event, FlagMode, Game, Input, Phase, Rejection, Score, Setup,
    Termination, fen_of,
};
use hallclock_rules::time_control::{
    DelayDisplay, IncrementCredit, PeriodTransition, TimeControl, parse,
};
use hallclock_rules::{Color, Millis};

const T0: Millis = Millis(1_700_000_000_000);

fn at(secs: f64) -> Millis {
    T0 + Millis((secs * 1000.0).round() as i64)
}

fn setup(tc: &str) -> Setup {
    let mut s = Setup::new("White", "Black", parse(tc).unwrap(), T0);
    s.default_time = Millis::from_mins(60);
    s
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

    /// Started at T0 with both players recorded present.
    fn started(s: Setup) -> Driver {
        let mut d = Driver::new(s);
        d.present(Color::White, T0 - Millis(1));
        d.present(Color::Black, T0 - Millis(1));
        d.advance(T0);
        d
    }

    fn advance(&mut self, now: Millis) -> Vec<Event> {
        let new = self.game.poll(now);
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new.clone());
        new
    }

    fn try_input(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        let mut out = self.advance(now);
        let new = self.game.decide(&input, now)?;
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new.clone());
        out.extend(new);
        Ok(out)
    }

    fn input(&mut self, input: Input, now: Millis) -> Vec<Event> {
        match self.try_input(input.clone(), now) {
            Ok(e) => e,
            Err(r) => panic!("{input:?} at {now:?} rejected: {r}"),
        }
    }

    fn press(&mut self, now: Millis) -> Vec<Event> {
        self.input(
            Input::Press {
                side: None,
                mv: None,
            },
            now,
        )
    }

    fn play(&mut self, mv: &str, now: Millis) -> Vec<Event> {
        self.input(
            Input::Press {
                side: None,
                mv: Some(mv.into()),
            },
            now,
        )
    }

    fn present(&mut self, side: Color, now: Millis) {
        self.input(
            Input::Present {
                side,
                arbiter: "IA".into(),
            },
            now,
        );
    }

    fn remaining(&self, c: Color, now: Millis) -> Millis {
        self.game.clock().remaining_at(c, now)
    }

    fn result(&self) -> Option<(Score, Termination)> {
        self.game.result().map(|r| (r.score, r.termination.clone()))
    }
}

fn flags(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| matches!(e, Event::FlagFell { .. }))
        .collect()
}

// ---- 6.1 -----------------------------------------------------------------------------

#[test]
fn rule_6_1_two_displays_only_one_runs_and_each_has_a_flag() {
    let mut d = Driver::started(setup("300"));
    let v = d.game.view(at(10.0));
    assert_eq!(v.running, Some(Color::White));
    assert_eq!(v.white.remaining_ms, Millis(290_000));
    assert_eq!(v.black.remaining_ms, Millis(300_000));
    d.press(at(10.0));
    let v = d.game.view(at(20.0));
    assert_eq!(v.running, Some(Color::Black));
    assert_eq!(v.white.remaining_ms, Millis(290_000));
    assert_eq!(v.black.remaining_ms, Millis(290_000));
    assert_eq!((v.white.flagged_at, v.black.flagged_at), (None, None));
}

// ---- 6.2 -----------------------------------------------------------------------------

#[test]
fn rule_6_2a_fide_control_adds_the_second_period_after_move_40() {
    let mut d = Driver::started(setup("40/5400+30:1800+30"));
    // 5+3 style: 90:30 before move 1.
    assert_eq!(d.remaining(Color::White, T0), Millis::from_secs(5430));
    let mut t = 0.0;
    for _ in 0..39 {
        t += 60.0;
        d.press(at(t)); // white, 60 s
        t += 60.0;
        d.press(at(t)); // black, 60 s
    }
    // 39 moves each: 5430 - 39*60 + 39*30 = 4260 s.
    assert_eq!(d.remaining(Color::White, at(t)), Millis::from_secs(4260));
    t += 60.0;
    let e = d.press(at(t)); // white's 40th move completes the quota
    assert!(matches!(
        e.as_slice(),
        [
            Event::Pressed { moves: 40, .. },
            Event::PeriodAdvanced {
                period: 2,
                added_ms: Millis(1_800_000),
                forfeited_ms: Millis(0),
                ..
            }
        ]
    ));
    // 4260 - 60 + 30 + 1800 = 6030 s, carried over.
    assert_eq!(d.remaining(Color::White, at(t)), Millis::from_secs(6030));
    assert_eq!(d.game.view(at(t)).white.period, 2);
    assert_eq!(d.game.view(at(t)).black.period, 1);
}

#[test]
fn rule_6_2a_sudden_death_never_adds_time() {
    let mut d = Driver::started(setup("600"));
    let mut t = 0.0;
    for _ in 0..100 {
        t += 1.0;
        d.press(at(t));
    }
    assert!(
        !d.events
            .iter()
            .any(|e| matches!(e, Event::PeriodAdvanced { .. }))
    );
    assert_eq!(d.remaining(Color::White, at(t)), Millis::from_secs(550));
}

#[test]
fn rule_6_2a_repeating_last_period_adds_time_every_quota() {
    let mut d = Driver::started(setup("2/60"));
    let mut t = 0.0;
    let mut periods = Vec::new();
    for _ in 0..6 {
        t += 10.0;
        for e in d.press(at(t)) {
            if let Event::PeriodAdvanced { side, period, .. } = e {
                periods.push((side, period));
            }
        }
    }
    assert_eq!(periods, vec![(Color::White, 2), (Color::Black, 2)]);
}

#[test]
fn rule_6_2a_increment_credited_per_press_and_before_move_1() {
    let mut d = Driver::started(setup("180+2"));
    assert_eq!(d.remaining(Color::White, T0), Millis::from_secs(182));
    assert_eq!(d.remaining(Color::Black, T0), Millis::from_secs(182));
    let e = d.press(at(5.0));
    assert!(matches!(
        e[0],
        Event::Pressed {
            charged_ms: Millis(5000),
            increment_ms: Millis(2000),
            remaining_ms: Millis(179_000),
            ..
        }
    ));
}

#[test]
fn rule_6_2a_increment_after_press_option() {
    let mut s = setup("180+2");
    s.clock.increment_credit = IncrementCredit::AfterPress;
    let mut d = Driver::started(s);
    assert_eq!(d.remaining(Color::White, T0), Millis::from_secs(180));
    d.press(at(5.0));
    assert_eq!(d.remaining(Color::White, at(5.0)), Millis::from_secs(177));
}

#[test]
fn rule_6_2a_increment_only_from_the_period_that_has_it() {
    // WCh 2023: +30 s from move 61 only.
    let mut d = Driver::started(setup("2/7200:1/3600:900+30"));
    let mut t = 0.0;
    let mut incs = Vec::new();
    for _ in 0..8 {
        t += 1.0;
        for e in d.press(at(t)) {
            if let Event::Pressed {
                side: Color::White,
                increment_ms,
                ..
            } = e
            {
                incs.push(increment_ms.0 / 1000);
            }
        }
    }
    // White's moves 1, 2 (period 1), 3 (period 2) earn nothing; after the press that
    // completes move 3, the next move is in period 3: +30.
    assert_eq!(incs, vec![0, 0, 30, 30]);
}

#[test]
fn rule_6_2a_time_odds_per_colour() {
    let mut s = setup("300");
    s.tc_black = Some(parse("240").unwrap());
    let d = Driver::started(s);
    assert_eq!(d.remaining(Color::White, T0), Millis::from_secs(300));
    assert_eq!(d.remaining(Color::Black, T0), Millis::from_secs(240));
}

#[test]
fn rule_6_2a_hourglass_unknown_and_untimed_controls_are_refused_with_the_reason() {
    for (tc, want) in [
        ("*180", "not supported"),
        ("?", "unknown"),
        ("-", "no time control"),
    ] {
        let err = Game::new(setup(tc)).unwrap_err().to_string();
        assert!(err.contains(want), "{tc}: {err}");
    }
}

#[test]
fn rule_6_2b_unused_time_carries_over() {
    let mut d = Driver::started(setup("1/100:50"));
    d.press(at(30.0)); // white used 30 of 100
    assert_eq!(d.remaining(Color::White, at(30.0)), Millis::from_secs(120));
}

#[test]
fn rule_6_2b_delay_mode_does_not_carry_over() {
    let mut d = Driver::started(setup("1/100+5d:50+5d"));
    let e = d.press(at(30.0)); // 5 s free, 25 s charged: 75 s unused are not carried
    assert!(matches!(
        e[1],
        Event::PeriodAdvanced {
            forfeited_ms: Millis(75_000),
            remaining_ms: Millis(50_000),
            ..
        }
    ));
    assert_eq!(d.remaining(Color::White, at(30.0)), Millis::from_secs(50));
}

#[test]
fn rule_6_2c_delay_main_time_unchanged_if_pressed_within_the_delay() {
    let mut d = Driver::started(setup("300+5d"));
    d.press(at(4.999));
    assert_eq!(d.remaining(Color::White, at(4.999)), Millis::from_secs(300));
    // Black uses 8 s: 3 s of main time.
    d.press(at(12.999));
    assert_eq!(
        d.remaining(Color::Black, at(12.999)),
        Millis::from_secs(297)
    );
    // The delay is never banked: white starts with 5 s again, not 5 + 0.001.
    assert_eq!(
        d.game.view(at(12.999)).white.delay_left_ms,
        Millis::from_secs(5)
    );
}

#[test]
fn rule_6_2c_delay_flag_falls_after_delay_plus_main_time() {
    let mut d = Driver::started(setup("10+5d"));
    assert_eq!(d.game.next_deadline(), Some(at(15.0)));
    assert!(flags(&d.advance(at(14.999))).is_empty());
    let e = d.advance(at(15.0));
    assert!(matches!(
        flags(&e)[..],
        [Event::FlagFell {
            side: Color::White,
            ..
        }]
    ));
    assert_eq!(e[0].at(), at(15.0));
}

#[test]
fn rule_6_2c_bronstein_display_shows_main_plus_unused_delay_same_flag() {
    let mut s = setup("10+5d");
    s.clock.delay_display = DelayDisplay::Bronstein;
    let d = Driver::started(s);
    let v = d.game.view(at(2.0));
    assert_eq!(v.white.display_ms, Millis::from_secs(13));
    assert_eq!(v.white.remaining_ms, Millis::from_secs(10));
    assert_eq!(d.game.next_deadline(), Some(at(15.0)));
}

// ---- 6.3 -----------------------------------------------------------------------------

#[test]
fn rule_6_3_flag_carries_period_and_moves_required_and_made() {
    let mut d = Driver::started(setup("3/10:60"));
    d.press(at(1.0));
    d.press(at(2.0));
    d.press(at(3.0));
    d.press(at(4.0)); // white has completed 2 of 3 moves, 8 s left
    let e = d.advance(at(100.0));
    match flags(&e)[..] {
        [
            Event::FlagFell {
                side,
                at: when,
                period,
                moves_made,
                moves_required,
                ..
            },
        ] => {
            assert_eq!(*side, Color::White);
            assert_eq!(*when, at(12.0));
            assert_eq!((*period, *moves_made, *moves_required), (1, 2, Some(3)));
        }
        _ => panic!("{e:?}"),
    }
}

#[test]
fn rule_6_3_on_flag_transition_quota_completed_opens_next_period() {
    let mut s = setup("2/10:60");
    s.clock.period_transition = PeriodTransition::OnFlag;
    let mut d = Driver::started(s);
    for t in 1..=4 {
        d.press(at(f64::from(t)));
    }
    // White completed the 2-move quota with 8 s left: no time added yet (DGT 000 mode).
    assert_eq!(d.remaining(Color::White, at(4.0)), Millis::from_secs(8));
    let e = d.advance(at(12.0));
    assert!(matches!(
        e[..],
        [Event::PeriodAdvanced {
            side: Color::White,
            period: 2,
            added_ms: Millis(60_000),
            ..
        }]
    ));
    assert!(flags(&d.events).is_empty());
    assert_eq!(d.remaining(Color::White, at(12.0)), Millis::from_secs(60));
}

#[test]
fn rule_6_3_on_flag_transition_quota_not_completed_loses() {
    let mut s = setup("3/10:60");
    s.clock.period_transition = PeriodTransition::OnFlag;
    let mut d = Driver::started(s);
    d.play("e4", at(1.0));
    d.play("e5", at(2.0));
    d.advance(at(100.0));
    assert_eq!(
        d.result(),
        Some((Score::BlackWins, Termination::Flag { side: Color::White }))
    );
}

// ---- 6.4 is the clock's placement: rules::placement (unit test there). -----------------

// ---- 6.5 -----------------------------------------------------------------------------

#[test]
fn rule_6_5_whites_clock_starts_at_the_scheduled_time_with_nobody_present() {
    let mut d = Driver::new(setup("300"));
    assert_eq!(d.game.next_deadline(), Some(T0));
    assert!(d.advance(T0 - Millis(1)).is_empty());
    let e = d.advance(at(7.0)); // the driver woke late: the start is still T0
    assert_eq!(
        e[0],
        Event::ClockStarted {
            at: T0,
            side: Color::White
        }
    );
    assert_eq!(d.remaining(Color::White, at(7.0)), Millis::from_secs(293));
    assert_eq!(*d.game.phase(), Phase::Running);
}

#[test]
fn rule_6_5_press_before_the_start_is_refused() {
    let mut d = Driver::new(setup("300"));
    let r = d
        .try_input(
            Input::Press {
                side: None,
                mv: None,
            },
            T0 - Millis(5),
        )
        .unwrap_err();
    assert!(matches!(r, Rejection::NotStarted { .. }));
}

// ---- 6.6 -----------------------------------------------------------------------------

#[test]
fn rule_6_6_absent_player_loses_when_default_time_passes() {
    let mut s = setup("5400");
    s.default_time = Millis::from_mins(60);
    let mut d = Driver::new(s);
    d.advance(T0);
    d.press(at(30.0)); // white arrives and plays: present by the press
    // "More than" the default time: it passes 1 ms after the default instant.
    assert!(d.advance(at(3600.0)).is_empty());
    let e = d.advance(at(3600.0) + Millis(1));
    assert_eq!(
        e[0],
        Event::DefaultTimePassed {
            at: at(3600.0) + Millis(1),
            absent: vec![Color::Black]
        }
    );
    assert_eq!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::Default {
                absent: vec![Color::Black]
            }
        ))
    );
}

#[test]
fn rule_6_6_player_recorded_present_by_the_arbiter_is_not_defaulted() {
    let mut d = Driver::new(setup("5400"));
    d.advance(T0);
    d.present(Color::White, at(10.0));
    d.present(Color::Black, at(3599.999));
    assert!(d.advance(at(3700.0)).is_empty());
    assert_eq!(d.game.result(), None);
    assert_eq!(d.game.next_deadline(), Some(at(5400.0)));
}

#[test]
fn rule_6_6_both_absent_both_lose_or_arbiter_decides() {
    let mut d = Driver::new(setup("5400"));
    d.advance(at(4000.0));
    assert_eq!(
        d.result(),
        Some((
            Score::BothLose,
            Termination::Default {
                absent: vec![Color::White, Color::Black]
            }
        ))
    );
    let mut s = setup("5400");
    s.both_absent = BothAbsent::Arbiter;
    let mut d = Driver::new(s);
    d.advance(at(4000.0));
    assert_eq!(d.game.result(), None);
    assert!(matches!(d.events[1], Event::DefaultTimePassed { .. }));
    // White's clock ran all the time (6.7.2 of 2023: White loses the time until arrival).
    assert_eq!(
        d.remaining(Color::White, at(4000.0)),
        Millis::from_secs(1400)
    );
}

#[test]
fn rule_6_6_zero_default_time_defaults_anyone_absent_at_the_start() {
    let mut s = setup("5400");
    s.default_time = Millis::ZERO;
    let mut d = Driver::new(s);
    d.present(Color::White, T0 - Millis(60_000));
    d.advance(T0 + Millis(1));
    assert_eq!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::Default {
                absent: vec![Color::Black]
            }
        ))
    );
}

#[test]
fn rule_6_6_paused_time_does_not_count_towards_default_time_when_the_event_says_so() {
    let mut s = setup("5400");
    s.default_time = Millis::from_mins(10);
    s.pauses_extend_default_time = true;
    let mut d = Driver::new(s);
    d.present(Color::White, T0);
    d.advance(T0);
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "fire alarm".into(),
        },
        at(60.0),
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(360.0),
    );
    assert!(d.advance(at(900.0)).is_empty());
    d.advance(at(900.0) + Millis(1));
    assert!(matches!(
        d.result(),
        Some((Score::WhiteWins, Termination::Default { .. }))
    ));
}

#[test]
fn rule_6_6_arbiter_may_decide_otherwise_after_a_default() {
    let mut d = Driver::new(setup("5400"));
    d.present(Color::White, T0);
    d.advance(at(3600.0) + Millis(1));
    let e = d.input(
        Input::SetResult {
            result: ArbiterResult::Score { score: Score::Draw },
            arbiter: "IA".into(),
            reason: "black was delayed by the organiser's bus".into(),
        },
        at(3700.0),
    );
    match &e[0] {
        Event::GameEnded {
            result, replaces, ..
        } => {
            assert_eq!(result.score, Score::Draw);
            assert_eq!(replaces.as_ref().map(|r| r.score), Some(Score::WhiteWins));
        }
        other => panic!("{other:?}"),
    }
}

// ---- 6.7a ----------------------------------------------------------------------------

#[test]
fn rule_6_7a_time_between_move_and_press_counts_against_the_mover() {
    let mut d = Driver::started(setup("300"));
    d.input(Input::Move { mv: "e4".into() }, at(3.0));
    // Moved, not pressed: white's clock still runs.
    assert_eq!(d.game.view(at(8.0)).running, Some(Color::White));
    d.press(at(8.0));
    assert_eq!(d.remaining(Color::White, at(8.0)), Millis::from_secs(292));
    assert_eq!(d.game.view(at(8.0)).white.moves, 1);
}

#[test]
fn rule_6_7a_illegal_move_attached_to_a_press_is_rejected_not_accepted() {
    let mut d = Driver::started(setup("300"));
    let before = d.game.clone();
    let r = d
        .try_input(
            Input::Press {
                side: None,
                mv: Some("e5".into()),
            },
            at(3.0),
        )
        .unwrap_err();
    assert_eq!(
        r.to_string(),
        "'e5' is not a move in this position: illegal in this position"
    );
    let r = d
        .try_input(
            Input::Press {
                side: None,
                mv: Some("hello".into()),
            },
            at(3.0),
        )
        .unwrap_err();
    assert!(r.to_string().contains("neither SAN"));
    assert_eq!(d.game, before, "a rejected input changes nothing");
}

#[test]
fn rule_6_7a_san_and_uci_both_accepted() {
    let mut d = Driver::started(setup("300"));
    d.play("e2e4", at(1.0));
    d.play("c5", at(2.0));
    d.play("Nf3", at(3.0));
    d.play("d7d6", at(4.0));
    assert_eq!(
        d.game.view(at(4.0)).fen.as_deref(),
        Some("rnbqkbnr/pp2pppp/3p4/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3")
    );
}

#[test]
fn rule_6_7a_press_by_the_side_whose_clock_is_not_running_is_refused() {
    let mut d = Driver::started(setup("300"));
    let r = d
        .try_input(
            Input::Press {
                side: Some(Color::Black),
                mv: None,
            },
            at(1.0),
        )
        .unwrap_err();
    assert_eq!(
        r,
        Rejection::NotYourTurn {
            side: Color::Black,
            running: Color::White
        }
    );
}

#[test]
fn rule_6_7a_checkmate_ends_the_game_without_a_press() {
    let mut d = Driver::started(setup("300"));
    d.play("f3", at(1.0));
    d.play("e5", at(2.0));
    d.play("g4", at(3.0));
    let e = d.input(Input::Move { mv: "Qh4#".into() }, at(4.0));
    assert!(matches!(e.last(), Some(Event::GameEnded { .. })));
    assert_eq!(d.result(), Some((Score::BlackWins, Termination::Checkmate)));
    // The clock stopped at the mate: nothing is charged afterwards and no flag follows.
    assert_eq!(d.remaining(Color::Black, at(999.0)), Millis::from_secs(298));
    assert!(d.advance(at(9999.0)).is_empty());
}

#[test]
fn rule_6_7a_stalemate_ends_the_game() {
    let mut s = setup("300");
    s.fen = Some("k7/8/1Q6/8/8/8/8/7K w - - 0 1".into());
    let mut d = Driver::started(s);
    d.play("Qc7", at(1.0));
    assert_eq!(d.result(), Some((Score::Draw, Termination::Stalemate)));
}

#[test]
fn rule_6_7a_dead_position_ends_the_game() {
    let mut s = setup("300");
    s.fen = Some("8/8/8/4k3/8/8/3r4/4K3 w - - 0 1".into());
    let mut d = Driver::started(s);
    d.play("Kxd2", at(1.0));
    assert_eq!(d.result(), Some((Score::Draw, Termination::DeadPosition)));
}

#[test]
fn rule_6_7a_seventy_five_move_rule_ends_the_game() {
    let mut s = setup("300");
    s.fen = Some("7k/8/8/8/8/8/R7/K7 w - - 149 100".into());
    let mut d = Driver::started(s);
    d.play("Rb2", at(1.0));
    assert_eq!(
        d.result(),
        Some((Score::Draw, Termination::SeventyFiveMoves))
    );
}

#[test]
fn rule_6_7a_fivefold_repetition_ends_the_game() {
    let mut d = Driver::started(setup("600"));
    let mut t = 0.0;
    for _ in 0..4 {
        for mv in ["Nf3", "Nf6", "Ng1", "Ng8"] {
            t += 1.0;
            assert_eq!(d.game.result(), None);
            d.play(mv, at(t));
        }
    }
    assert_eq!(
        d.result(),
        Some((Score::Draw, Termination::FivefoldRepetition))
    );
}

#[test]
fn rule_6_7a_mate_pre_empts_a_flag_that_would_fall_later() {
    let mut s = setup("10");
    s.fen = Some("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1".into());
    let mut d = Driver::started(s);
    d.play("Ra8#", at(9.999));
    assert_eq!(d.result(), Some((Score::WhiteWins, Termination::Checkmate)));
    assert!(flags(&d.advance(at(60.0))).is_empty());
}

// ---- 6.8 -----------------------------------------------------------------------------

#[test]
fn rule_6_8_flag_is_observed_at_the_exact_instant_even_when_polled_late() {
    let mut d = Driver::started(setup("60"));
    d.play("d4", at(10.0));
    d.play("d5", at(20.5));
    // White has 50 s from 20.5: zero at 70.5.
    assert_eq!(d.game.next_deadline(), Some(at(70.5)));
    let e = d.advance(at(75.0));
    assert_eq!(flags(&e)[0].at(), at(70.5));
    assert!(matches!(e.last(), Some(Event::GameEnded { at: t, .. }) if *t == at(70.5)));
}

#[test]
fn rule_6_8_a_press_after_the_flag_is_too_late() {
    let mut d = Driver::started(setup("60"));
    let out = d.try_input(
        Input::Press {
            side: None,
            mv: None,
        },
        at(60.001),
    );
    assert!(matches!(out, Err(Rejection::GameOver { .. })), "{out:?}");
    // The flag was still recorded by the driver's poll before the press.
    assert_eq!(flags(&d.events).len(), 1);
}

#[test]
fn rule_6_8_press_at_the_last_millisecond_is_in_time() {
    let mut d = Driver::started(setup("60"));
    d.press(at(59.999));
    assert_eq!(d.game.result(), None);
    assert_eq!(d.remaining(Color::White, at(59.999)), Millis(1));
}

#[test]
fn rule_6_8_claim_mode_waits_for_the_arbiter() {
    let mut s = setup("60");
    s.flag_mode = FlagMode::Claim;
    let mut d = Driver::started(s);
    let e = d.advance(at(61.0));
    assert!(matches!(
        e[1],
        Event::ResultPending {
            side: Color::White,
            ..
        }
    ));
    assert_eq!(d.game.result(), None);
    // Why it waits, as a code a page says in its own words (issue 39).
    let pending = d.game.view(at(61.0)).pending_flag;
    assert_eq!(pending.map(|p| p.code).as_deref(), Some("claim"));
    let e = d.input(
        Input::ConfirmFlag {
            arbiter: "IA".into(),
        },
        at(90.0),
    );
    assert_eq!(
        d.result(),
        Some((Score::BlackWins, Termination::Flag { side: Color::White }))
    );
    // Whose decision the flag's result was is recorded, as for an arbiter's result.
    match &e[..] {
        [Event::GameEnded { confirmed_by, .. }] => {
            assert_eq!(confirmed_by.as_deref(), Some("IA"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rule_6_8_confirm_without_a_pending_flag_is_refused() {
    let mut d = Driver::started(setup("60"));
    let r = d
        .try_input(
            Input::ConfirmFlag {
                arbiter: "IA".into(),
            },
            at(1.0),
        )
        .unwrap_err();
    assert_eq!(r, Rejection::NoPendingFlag);
}

#[test]
fn rule_6_8_frozen_clock_refuses_presses_until_the_arbiter_acts() {
    let mut s = setup("60");
    s.flag_mode = FlagMode::Claim;
    let mut d = Driver::started(s);
    d.advance(at(61.0));
    assert_eq!(d.game.view(at(61.0)).running, None);
    assert_eq!(
        d.try_input(
            Input::Press {
                side: None,
                mv: None
            },
            at(62.0)
        ),
        Err(Rejection::Frozen)
    );
    // The arbiter gives time back (e.g. a wrongly set clock, 6.10.2): play resumes.
    d.input(
        Input::SetTime {
            side: Color::White,
            remaining: Millis::from_secs(30),
            arbiter: "IA".into(),
            reason: "clock set without the increment".into(),
        },
        at(70.0),
    );
    assert_eq!(d.game.view(at(80.0)).running, Some(Color::White));
    assert_eq!(d.remaining(Color::White, at(80.0)), Millis::from_secs(20));
    assert_eq!(d.game.view(at(80.0)).pending_flag, None);
}

// ---- 6.9 -----------------------------------------------------------------------------

#[test]
fn rule_6_9_flag_loses_when_the_opponent_can_mate() {
    let mut d = Driver::started(setup("60"));
    d.advance(at(60.0));
    assert_eq!(
        d.result(),
        Some((Score::BlackWins, Termination::Flag { side: Color::White }))
    );
}

#[test]
fn rule_6_9_flag_but_opponent_has_only_king_and_knight_is_draw() {
    let mut s = setup("60");
    s.fen = Some("8/8/8/8/8/4k3/8/4K1N1 b - - 0 1".into());
    let mut d = Driver::started(s);
    d.advance(at(60.0));
    assert_eq!(
        d.result(),
        Some((
            Score::Draw,
            Termination::FlagOpponentCannotMate { side: Color::Black }
        ))
    );
}

#[test]
fn rule_6_9_flag_with_unknown_position_is_pending_arbiter() {
    let mut d = Driver::started(setup("60"));
    d.press(at(1.0)); // a press without a move: the moves are no longer known
    d.press(at(2.0));
    let e = d.advance(at(100.0));
    match &e[1] {
        Event::ResultPending { side, reason, .. } => {
            assert_eq!(*side, Color::White);
            assert!(reason.contains("position is not known"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(d.game.result(), None);
    // The arbiter establishes the position; the confirmation applies 6.9 to it.
    d.input(
        Input::SetPosition {
            fen: "8/8/8/8/8/4k3/8/4K1N1 w - - 0 1".into(),
            arbiter: "IA".into(),
            reason: "from the scoresheets".into(),
        },
        at(120.0),
    );
    // White flagged; black, the intended winner, has a lone king: a draw.
    d.input(
        Input::ConfirmFlag {
            arbiter: "IA".into(),
        },
        at(121.0),
    );
    assert_eq!(
        d.result(),
        Some((
            Score::Draw,
            Termination::FlagOpponentCannotMate { side: Color::White }
        ))
    );
}

#[test]
fn rule_6_9_confirming_a_flag_whose_verdict_is_unknown_says_why() {
    let mut d = Driver::started(setup("60"));
    d.press(at(1.0));
    d.press(at(2.0));
    d.advance(at(100.0));
    // The position is still unknown: the confirmation cannot apply 6.9 yet.
    match d.try_input(
        Input::ConfirmFlag {
            arbiter: "IA".into(),
        },
        at(101.0),
    ) {
        Err(Rejection::VerdictUnknown { reason }) => {
            assert!(reason.contains("position is not known"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(d.game.result(), None);
    assert!(d.game.view(at(101.0)).pending_flag.is_some());
}

#[test]
fn rule_6_9_intended_winner_is_the_opponent_even_when_a_move_is_pending() {
    // White moved but did not press: the board has black to move while white's clock
    // runs out. The intended winner is black (lone king: cannot mate), not the side to
    // move.
    let mut s = setup("60");
    s.fen = Some("4k3/8/8/8/8/8/4P3/4K2N w - - 0 1".into());
    let mut d = Driver::started(s);
    d.input(Input::Move { mv: "e3".into() }, at(10.0));
    d.advance(at(60.0));
    assert_eq!(
        d.result(),
        Some((
            Score::Draw,
            Termination::FlagOpponentCannotMate { side: Color::White }
        ))
    );
}

// ---- 6.10 ----------------------------------------------------------------------------

#[test]
fn rule_6_10_replacement_clock_continues_with_the_arbiters_times() {
    let mut d = Driver::started(setup("300"));
    d.press(at(10.0));
    let e = d.input(
        Input::ReplaceClock {
            device: "board-007".into(),
            white: Some(Millis::from_secs(280)),
            black: Some(Millis::from_secs(285)),
            arbiter: "IA".into(),
            reason: "display dead".into(),
        },
        at(20.0),
    );
    assert!(matches!(e[0], Event::ClockReplaced { .. }));
    assert_eq!(d.game.view(at(25.0)).running, Some(Color::Black));
    assert_eq!(d.remaining(Color::Black, at(25.0)), Millis::from_secs(280));
    assert_eq!(d.remaining(Color::White, at(25.0)), Millis::from_secs(280));
}

#[test]
fn rule_6_10_clock_reading_far_from_the_reckoning_is_reported_not_adopted() {
    let mut d = Driver::started(setup("300"));
    let reading = |white: Millis| Input::ClockReading {
        white,
        black: Millis::from_secs(300),
    };
    let e = d.input(reading(Millis::from_secs(280)), at(10.0));
    assert!(matches!(e[0], Event::ClockDiscrepancy { .. }));
    assert_eq!(d.remaining(Color::White, at(10.0)), Millis::from_secs(290));
    let e = d.input(reading(Millis(289_000)), at(10.0));
    assert!(e.is_empty(), "within the 2 s margin: {e:?}");
    // Exactly the margin off is still within it; a millisecond more is not.
    let e = d.input(reading(Millis(288_000)), at(10.0));
    assert!(e.is_empty(), "2 s off, the margin itself: {e:?}");
    let e = d.input(reading(Millis(287_999)), at(10.0));
    assert!(matches!(e[0], Event::ClockDiscrepancy { .. }), "{e:?}");
}

#[test]
fn rule_6_10_a_discrepancy_stays_open_until_the_arbiter_acts() {
    let mut d = Driver::started(setup("300"));
    let reading = |white| Input::ClockReading {
        white,
        black: Millis::from_secs(300),
    };
    d.input(reading(Millis::from_secs(280)), at(10.0));
    let open = d.game.discrepancy().cloned().expect("open");
    assert_eq!(open.at, at(10.0));
    assert_eq!(open.white_ms, Millis::from_secs(280));
    assert_eq!(open.reckoned_white_ms, Millis::from_secs(290));
    // A reading that agrees again explains nothing: still open.
    assert!(
        d.input(reading(Millis::from_secs(289)), at(11.0))
            .is_empty()
    );
    assert!(d.game.discrepancy().is_some());
    d.press(at(12.0));
    assert!(d.game.discrepancy().is_some(), "a press is not the arbiter");
    let ack = Input::AcknowledgeDiscrepancy {
        arbiter: "IA".into(),
    };
    let e = d.input(ack.clone(), at(13.0));
    assert_eq!(
        e,
        vec![Event::DiscrepancyAcknowledged {
            at: at(13.0),
            arbiter: "IA".into()
        }]
    );
    assert_eq!(d.game.discrepancy(), None);
    assert_eq!(
        d.try_input(ack.clone(), at(14.0)),
        Err(Rejection::NoDiscrepancy)
    );
    assert_eq!(
        d.try_input(
            Input::AcknowledgeDiscrepancy {
                arbiter: String::new()
            },
            at(14.0)
        ),
        Err(Rejection::ArbiterRequired)
    );
    // set_time settles one too; the fold over the events gives the same game.
    d.input(reading(Millis::from_secs(200)), at(15.0));
    assert!(d.game.discrepancy().is_some());
    d.input(
        Input::SetTime {
            side: Color::White,
            remaining: Millis::from_secs(200),
            arbiter: "IA".into(),
            reason: "the clock was right".into(),
        },
        at(16.0),
    );
    assert_eq!(d.game.discrepancy(), None);
}

// ---- 6.11 ----------------------------------------------------------------------------

/// Both sides within a second and a half of 0:00 by the reckoning, neither flagged:
/// White pressed with 1.5 s left, Black has run down to 1.0 s at 597.5 s.
fn both_nearly_out() -> Driver {
    let mut d = Driver::started(setup("300"));
    d.press(at(298.5));
    d
}

fn both_at_zero() -> Input {
    Input::ClockReading {
        white: Millis::ZERO,
        black: Millis::ZERO,
    }
}

#[test]
fn rule_6_11_both_flags_order_unknown_game_continues() {
    // The clock shows both at 0:00 where the reckoning has both within the margin of it
    // (an outage in which both ran out): which fell first cannot be known.
    let mut d = both_nearly_out();
    let e = d.input(both_at_zero(), at(597.5));
    assert_eq!(e, vec![Event::BothFlagsOrderUnknown { at: at(597.5) }]);
    assert_eq!(d.game.result(), None);
    assert!(d.game.view(at(597.5)).both_flags_order_unknown);
    // Play continues; no flag falls by itself.
    d.press(at(598.0));
    assert!(d.advance(at(999.0)).is_empty());
}

#[test]
fn rule_6_11_a_clock_at_zero_against_minutes_reckoned_is_a_discrepancy_not_a_double_flag() {
    // 10 s into a 5-minute game the clock shows 0:00 on both sides (it lost its time: a
    // reset, a swap, a time never set). Neither flag fell: a discrepancy for the
    // arbiter, and the reckoning goes on, so White's flag still falls on time.
    let mut d = Driver::started(setup("300"));
    let e = d.input(both_at_zero(), at(10.0));
    assert!(
        matches!(
            e.as_slice(),
            [Event::ClockDiscrepancy { white_ms, black_ms, reckoned_white_ms, reckoned_black_ms, .. }]
                if *white_ms == Millis::ZERO
                    && *black_ms == Millis::ZERO
                    && *reckoned_white_ms == Millis::from_secs(290)
                    && *reckoned_black_ms == Millis::from_secs(300)
        ),
        "{e:?}"
    );
    let v = d.game.view(at(10.0));
    assert!(!v.both_flags_order_unknown);
    assert!(v.white.flagged_at.is_none() && v.black.flagged_at.is_none());
    let e = d.advance(at(301.0));
    assert!(
        e.iter().any(|e| matches!(
            e,
            Event::FlagFell {
                side: Color::White,
                ..
            }
        )),
        "{e:?}"
    );
    // Just outside the margin on one side is a discrepancy too (White 2.5 s reckoned).
    let mut d = Driver::started(setup("300"));
    d.press(at(297.5));
    let e = d.input(both_at_zero(), at(597.0));
    assert!(
        matches!(e.as_slice(), [Event::ClockDiscrepancy { .. }]),
        "{e:?}"
    );
}

#[test]
fn rule_6_13_setting_a_flagged_clock_to_zero_leaves_the_flag() {
    // 6.11's double flag, then the arbiter sets White's clock to 0:00 (in range): no
    // time was given back, so neither the flags nor the order question go away.
    let mut d = both_nearly_out();
    d.input(both_at_zero(), at(597.5));
    d.input(arbiter_input("set", Color::White, 0), at(598.0));
    let v = d.game.view(at(598.0));
    assert!(v.both_flags_order_unknown);
    assert!(v.white.flagged_at.is_some());
    // A second given back lifts White's flag.
    d.input(arbiter_input("set", Color::White, 1000), at(598.5));
    let v = d.game.view(at(598.5));
    assert!(!v.both_flags_order_unknown);
    assert!(v.white.flagged_at.is_none());
}

#[test]
fn rule_6_11_one_clock_at_zero_is_no_double_flag() {
    // Only White's display at 0:00 (Black has 5:00): not 6.11's case, a reading the
    // reckoning (4:50 for White) does not explain.
    let mut d = Driver::started(setup("300"));
    let e = d.input(
        Input::ClockReading {
            white: Millis::ZERO,
            black: Millis::from_secs(300),
        },
        at(10.0),
    );
    assert!(
        matches!(e.as_slice(), [Event::ClockDiscrepancy { .. }]),
        "{e:?}"
    );
    assert!(!d.game.view(at(10.0)).both_flags_order_unknown);
}

#[test]
fn rule_6_11_daemon_knows_which_flag_fell_first() {
    let mut s = setup("60");
    s.flag_mode = FlagMode::Claim;
    s.clock.freeze_after_last_flag = false;
    let mut d = Driver::started(s);
    d.play("e4", at(1.0));
    d.advance(at(62.0)); // black flags first at 61
    d.play("e5", at(70.0)); // black plays on
    d.advance(at(200.0)); // white flags at 70 + 59
    let f = flags(&d.events);
    assert_eq!(f.len(), 2);
    assert!(matches!(
        f[0],
        Event::FlagFell {
            side: Color::Black,
            ..
        }
    ));
    assert!(matches!(
        f[1],
        Event::FlagFell {
            side: Color::White,
            ..
        }
    ));
    d.input(
        Input::ConfirmFlag {
            arbiter: "IA".into(),
        },
        at(201.0),
    );
    assert_eq!(
        d.result(),
        Some((Score::WhiteWins, Termination::Flag { side: Color::Black }))
    );
}

#[test]
fn rule_6_11_no_increment_after_a_flag() {
    let mut s = setup("60+5");
    s.flag_mode = FlagMode::Claim;
    s.clock.freeze_after_last_flag = false;
    let mut d = Driver::started(s);
    d.advance(at(66.0));
    let e = d.press(at(70.0));
    assert!(matches!(
        e[0],
        Event::Pressed {
            increment_ms: Millis(0),
            remaining_ms: Millis(0),
            ..
        }
    ));
}

// ---- 6.12 ----------------------------------------------------------------------------

#[test]
fn rule_6_12a_arbiter_pause_stops_the_clock_and_paused_time_never_counts() {
    let mut d = Driver::started(setup("300"));
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "dispute".into(),
        },
        at(10.0),
    );
    assert_eq!(d.game.next_deadline(), None);
    assert!(d.advance(at(10_000.0)).is_empty());
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(10_000.0),
    );
    assert_eq!(
        d.remaining(Color::White, at(10_005.0)),
        Millis::from_secs(285)
    );
}

#[test]
fn rule_6_12a_pause_keeps_the_unused_delay() {
    let mut d = Driver::started(setup("300+5d"));
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "noise".into(),
        },
        at(3.0),
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(100.0),
    );
    assert_eq!(d.remaining(Color::White, at(102.0)), Millis::from_secs(300));
    assert_eq!(d.remaining(Color::White, at(103.0)), Millis::from_secs(299));
}

#[test]
fn rule_6_12b_player_stops_the_clock_to_summon_the_arbiter() {
    let mut d = Driver::started(setup("300"));
    let e = d.input(Input::PlayerPause { side: None }, at(5.0));
    assert_eq!(
        e,
        vec![Event::PausedByPlayer {
            at: at(5.0),
            side: Color::White
        }]
    );
    assert!(matches!(d.game.phase(), Phase::Paused(_)));
    assert!(matches!(
        d.try_input(
            Input::Press {
                side: None,
                mv: None
            },
            at(6.0)
        ),
        Err(Rejection::Paused { .. })
    ));
}

#[test]
fn rule_6_12_a_press_while_paused_says_who_stopped_the_clocks_and_why() {
    let press = Input::Press {
        side: None,
        mv: None,
    };
    let mut d = Driver::started(setup("300"));
    d.input(Input::PlayerPause { side: None }, at(5.0));
    let r = d.try_input(press.clone(), at(6.0)).unwrap_err();
    assert_eq!(
        r,
        Rejection::Paused {
            by: "stopped by white to summon the arbiter".into()
        }
    );
    let mut d = Driver::started(setup("300"));
    d.input(
        Input::Pause {
            arbiter: "IA Schmid".into(),
            reason: "noise in the hall".into(),
        },
        at(5.0),
    );
    let r = d.try_input(press, at(6.0)).unwrap_err();
    assert_eq!(
        r.to_string(),
        "the clocks are stopped (paused by arbiter IA Schmid: noise in the hall); only the arbiter restarts them (6.12c)"
    );
}

#[test]
fn rule_6_12c_only_the_arbiter_resumes() {
    let mut d = Driver::started(setup("300"));
    d.input(Input::PlayerPause { side: None }, at(5.0));
    assert_eq!(
        d.try_input(
            Input::Resume {
                arbiter: " ".into()
            },
            at(6.0)
        ),
        Err(Rejection::ArbiterRequired)
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(60.0),
    );
    assert_eq!(d.remaining(Color::White, at(60.0)), Millis::from_secs(295));
    assert_eq!(
        d.try_input(
            Input::Resume {
                arbiter: "IA".into()
            },
            at(61.0)
        ),
        Err(Rejection::NotPaused)
    );
}

// ---- 6.13 ----------------------------------------------------------------------------

#[test]
fn rule_6_13_set_time_and_add_time_are_journaled_with_reason_and_arbiter() {
    let mut d = Driver::started(setup("300"));
    let e = d.input(
        Input::AddTime {
            side: Color::Black,
            delta: Millis::from_secs(120),
            arbiter: "IA Pérez".into(),
            reason: "7.5.5 illegal move by white".into(),
        },
        at(10.0),
    );
    assert_eq!(
        e,
        vec![Event::TimeAdded {
            at: at(10.0),
            side: Color::Black,
            delta_ms: Millis(120_000),
            remaining_ms: Millis(420_000),
            arbiter: "IA Pérez".into(),
            reason: "7.5.5 illegal move by white".into(),
        }]
    );
    // Setting the running side's time mid-turn starts from the exact time shown.
    let e = d.input(
        Input::SetTime {
            side: Color::White,
            remaining: Millis::from_secs(200),
            arbiter: "IA".into(),
            reason: "restored position".into(),
        },
        at(20.0),
    );
    assert!(matches!(
        e[0],
        Event::TimeSet {
            previous_ms: Millis(280_000),
            ..
        }
    ));
    assert_eq!(d.remaining(Color::White, at(30.0)), Millis::from_secs(190));
}

#[test]
fn rule_6_13_adjustments_need_a_reason_and_stay_in_range() {
    let mut d = Driver::started(setup("300"));
    let before = d.game.clone();
    let r = d.try_input(
        Input::AddTime {
            side: Color::Black,
            delta: Millis::from_secs(-400),
            arbiter: "IA".into(),
            reason: "12.9".into(),
        },
        at(1.0),
    );
    assert_eq!(
        r.unwrap_err().to_string(),
        "delta: -400000 is out of range (-5:00.000 to +23:55:00.000 with 5:00.000 left)"
    );
    let r = d.try_input(
        Input::SetTime {
            side: Color::Black,
            remaining: Millis::from_secs(10),
            arbiter: "IA".into(),
            reason: "".into(),
        },
        at(1.0),
    );
    assert_eq!(r, Err(Rejection::ReasonRequired { what: "set_time" }));
    assert_eq!(d.game, before);
}

#[test]
fn rule_6_13_set_moves_derives_the_period() {
    let mut d = Driver::started(setup("40/5400:1800"));
    d.input(
        Input::SetMoves {
            side: Color::White,
            moves: 40,
            period: None,
            arbiter: "IA".into(),
            reason: "move counter missed a press".into(),
        },
        at(1.0),
    );
    assert_eq!(d.game.view(at(1.0)).white.period, 2);
    assert_eq!(d.game.view(at(1.0)).white.moves, 40);
}

// ---- 6.14 ----------------------------------------------------------------------------

#[test]
fn rule_6_14_published_view_is_not_authoritative() {
    let d = Driver::started(setup("300"));
    let v = serde_json::to_value(d.game.view(at(1.0))).unwrap();
    assert_eq!(v["authoritative"], false);
}

// ---- results set by the arbiter -----------------------------------------------------

#[test]
fn arbiter_results_agreed_draw_resignation_illegal_moves_annulment() {
    let cases = [
        (ArbiterResult::AgreedDraw, Score::Draw),
        (
            ArbiterResult::Resignation { side: Color::White },
            Score::BlackWins,
        ),
        (
            ArbiterResult::IllegalMoves { side: Color::Black },
            Score::WhiteWins,
        ),
        (ArbiterResult::Annulled, Score::Annulled),
    ];
    for (result, score) in cases {
        let mut d = Driver::started(setup("300"));
        d.input(
            Input::SetResult {
                result,
                arbiter: "IA".into(),
                reason: "scoresheets signed".into(),
            },
            at(5.0),
        );
        assert_eq!(d.game.result().map(|r| r.score), Some(score));
        assert_eq!(d.game.next_deadline(), None);
    }
}

#[test]
fn rule_7_5_5_second_illegal_move_is_a_draw_when_the_opponent_cannot_mate() {
    let mut s = setup("300");
    s.fen = Some("8/8/8/8/8/4k3/8/4K1N1 b - - 0 1".into());
    let mut d = Driver::started(s);
    d.input(
        Input::SetResult {
            result: ArbiterResult::IllegalMoves { side: Color::Black },
            arbiter: "IA".into(),
            reason: "second illegal move".into(),
        },
        at(5.0),
    );
    assert_eq!(d.game.result().map(|r| r.score), Some(Score::Draw));
}

#[test]
fn time_control_string_reaches_the_game_unchanged() {
    let s = setup("40/5400+30:1800+30");
    assert_eq!(s.tc.to_string(), "40/5400+30:1800+30");
    assert_eq!(s.tc, "40/5400+30:1800+30".parse::<TimeControl>().unwrap());
}

// ---- the rule edges (issue 10) --------------------------------------------------------

fn arbiter_input(kind: &str, side: Color, ms: i64) -> Input {
    match kind {
        "add" => Input::AddTime {
            side,
            delta: Millis(ms),
            arbiter: "IA".into(),
            reason: "test".into(),
        },
        _ => Input::SetTime {
            side,
            remaining: Millis(ms),
            arbiter: "IA".into(),
            reason: "test".into(),
        },
    }
}

#[test]
fn rule_6_7a_pressed_charges_the_whole_turn_across_a_pause_and_adjustments() {
    let mut d = Driver::started(setup("300"));
    d.play("e4", at(10.0));
    // Black thinks 10 s, the arbiter pauses for 30 s, adds 60 s, sets the time: 10 s
    // before the pause and 30 s after it are the turn's cost, whatever was adjusted.
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "noise".into(),
        },
        at(20.0),
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(50.0),
    );
    d.input(arbiter_input("add", Color::Black, 60_000), at(60.0));
    d.input(arbiter_input("set", Color::Black, 200_000), at(70.0));
    let e = d.play("e5", at(80.0));
    assert!(
        matches!(
            e.last(),
            Some(Event::Pressed {
                side: Color::Black,
                charged_ms: Millis(40_000),
                remaining_ms: Millis(190_000),
                ..
            })
        ),
        "{e:?}"
    );
    // The next turn counts afresh.
    let e = d.play("Nf3", at(85.0));
    assert!(matches!(
        e.last(),
        Some(Event::Pressed {
            charged_ms: Millis(5_000),
            ..
        })
    ));
}

#[test]
fn rule_6_6_arriving_exactly_at_the_default_instant_is_in_time() {
    // By a press: White plays, Black's first press comes at 60:00.000 sharp.
    let mut d = Driver::new(setup("5400"));
    d.advance(T0);
    d.play("e4", at(30.0));
    let e = d.play("e5", at(3600.0));
    assert!(matches!(e.last(), Some(Event::Pressed { .. })), "{e:?}");
    assert!(d.advance(at(3700.0)).is_empty());
    assert_eq!(d.game.result(), None);
    // By the arbiter's record, at the same instant.
    let mut d = Driver::new(setup("5400"));
    d.present(Color::White, T0);
    d.advance(T0);
    d.present(Color::Black, at(3600.0));
    assert!(d.advance(at(3700.0)).is_empty());
    assert_eq!(d.game.result(), None);
    // Zero tolerance: present at the start instant is in time, a millisecond later not.
    let mut s = setup("300");
    s.default_time = Millis::ZERO;
    let mut d = Driver::new(s);
    d.present(Color::White, T0);
    d.present(Color::Black, T0);
    assert!(
        d.advance(T0 + Millis(1))
            .iter()
            .all(|e| !matches!(e, Event::DefaultTimePassed { .. } | Event::GameEnded { .. }))
    );
}

#[test]
fn rule_6_6_a_pause_does_not_move_the_default_instant() {
    let mut s = setup("5400");
    s.default_time = Millis::from_mins(10);
    let mut d = Driver::new(s.clone());
    d.present(Color::White, T0);
    d.advance(T0);
    let pause = |d: &mut Driver, t: f64| {
        d.input(
            Input::Pause {
                arbiter: "IA".into(),
                reason: "fire alarm".into(),
            },
            at(t),
        )
    };
    let resume = |d: &mut Driver, t: f64| {
        d.try_input(
            Input::Resume {
                arbiter: "IA".into(),
            },
            at(t),
        )
    };
    pause(&mut d, 60.0);
    resume(&mut d, 360.0).unwrap();
    // 6.6 counts from the scheduled start: still 10 min after it, not 15.
    assert!(d.advance(at(600.0)).is_empty());
    let e = d.advance(at(600.0) + Millis(1));
    assert_eq!(
        e[0],
        Event::DefaultTimePassed {
            at: at(600.0) + Millis(1),
            absent: vec![Color::Black]
        }
    );
    assert!(matches!(
        d.result(),
        Some((Score::WhiteWins, Termination::Default { .. }))
    ));

    // A pause over the default instant: the default passes during it, at that instant.
    let mut d = Driver::new(s.clone());
    d.present(Color::White, T0);
    d.advance(T0);
    pause(&mut d, 500.0);
    assert_eq!(d.game.next_deadline(), Some(at(600.0) + Millis(1)));
    let e = d.advance(at(700.0));
    assert!(matches!(e[0], Event::DefaultTimePassed { at: t, .. } if t == at(600.0) + Millis(1)));
    assert!(matches!(
        resume(&mut d, 800.0),
        Err(Rejection::GameOver { .. })
    ));

    // With the event's option, the pause moves it and no deadline is armed while paused.
    s.pauses_extend_default_time = true;
    let mut d = Driver::new(s);
    d.present(Color::White, T0);
    d.advance(T0);
    pause(&mut d, 500.0);
    assert_eq!(d.game.next_deadline(), None);
    assert!(d.advance(at(700.0)).is_empty());
    resume(&mut d, 800.0).unwrap();
    assert_eq!(d.game.next_deadline(), Some(at(900.0) + Millis(1)));
}

#[test]
fn rule_6_6_flag_and_default_due_at_the_same_instant_the_default_decides() {
    // Black, absent, has a lone-king opponent: Black's flag would be a draw (6.9), but
    // Black is later than the default time at that instant and loses by default.
    let mut s = setup("3600");
    s.fen = Some("k7/q7/8/8/8/8/8/7K w - - 0 1".into());
    let mut d = Driver::new(s);
    d.advance(T0);
    d.play("Kh2", T0 + Millis(1)); // Black's 60:00 now ends at the default instant
    assert_eq!(d.game.clock().zero_at(), Some(at(3600.0) + Millis(1)));
    let e = d.advance(at(3601.0));
    assert!(flags(&e).is_empty(), "{e:?}");
    assert_eq!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::Default {
                absent: vec![Color::Black]
            }
        ))
    );
    // Both absent, White's flag at the default instant: 0-0, not a win for absent Black.
    let mut d = Driver::new(setup("3600"));
    d.advance(T0);
    d.input(arbiter_input("add", Color::White, 1), at(1.0));
    let e = d.advance(at(3601.0));
    assert!(flags(&e).is_empty(), "{e:?}");
    assert_eq!(d.result().map(|r| r.0), Some(Score::BothLose));
}

#[test]
fn rule_6_6_an_absent_players_flag_before_the_default_time_is_a_flag() {
    // 3:00 on the clock and an hour of default time: absent White's flag falls at 3:00,
    // long before the default instant, and that flag (6.9) ends the game, not a default.
    let mut s = setup("180");
    s.default_time = Millis::from_mins(60);
    let mut d = Driver::new(s);
    d.present(Color::Black, T0 - Millis(1));
    d.advance(T0);
    let e = d.advance(at(181.0));
    assert_eq!(flags(&e).len(), 1, "{e:?}");
    assert!(
        !e.iter()
            .any(|e| matches!(e, Event::DefaultTimePassed { .. })),
        "{e:?}"
    );
    assert_eq!(
        d.result(),
        Some((Score::BlackWins, Termination::Flag { side: Color::White }))
    );
}

#[test]
fn rule_6_13_time_can_always_be_taken_off_a_clock_above_the_24_h_cap() {
    // 48 h: more than an arbiter may set, but a control may give it.
    let mut d = Driver::started(setup("172800"));
    let e = d.input(arbiter_input("add", Color::Black, -1000), at(1.0));
    assert!(matches!(
        e[0],
        Event::TimeAdded {
            remaining_ms: Millis(172_799_000),
            ..
        }
    ));
    let r = d.try_input(arbiter_input("add", Color::Black, 1000), at(2.0));
    assert_eq!(
        r.unwrap_err().to_string(),
        "delta: 1000 is out of range (-47:59:59.000 to +0:00.000 with 47:59:59.000 left)"
    );
    // Down to exactly zero is allowed; one more millisecond is not.
    let r = d.try_input(arbiter_input("add", Color::Black, -172_799_001), at(2.0));
    assert!(matches!(r, Err(Rejection::OutOfRange { .. })));
    d.input(arbiter_input("add", Color::Black, -172_799_000), at(2.0));
    assert_eq!(d.remaining(Color::Black, at(3.0)), Millis::ZERO);
    // Replacing the clock keeps the times not given, even above the cap.
    let mut d = Driver::started(setup("172800"));
    d.input(
        Input::ReplaceClock {
            device: "spare".into(),
            white: None,
            black: Some(Millis::from_secs(60)),
            arbiter: "IA".into(),
            reason: "display dead".into(),
        },
        at(1.0),
    );
    assert_eq!(
        d.remaining(Color::White, at(1.0)),
        Millis::from_secs(172_799)
    );
}

#[test]
fn rule_6_13_arbiter_times_stay_within_0_and_24_h_inclusive() {
    let max = 24 * 3_600_000;
    for (kind, ms, ok) in [
        ("set", 0, true),
        ("set", max, true),
        ("set", max + 1, false),
        ("set", -1, false),
        ("add", -300_000, true),
        ("add", -300_001, false),
        ("add", max - 300_000, true),
        ("add", max - 300_000 + 1, false),
    ] {
        let mut d = Driver::started(setup("300"));
        let r = d.try_input(arbiter_input(kind, Color::Black, ms), at(1.0));
        assert_eq!(r.is_ok(), ok, "{kind} {ms}: {r:?}");
    }
    assert_eq!(
        Driver::started(setup("300"))
            .try_input(arbiter_input("set", Color::Black, max + 1), at(1.0))
            .unwrap_err()
            .to_string(),
        "remaining: 86400001 is out of range (0 to 86400000 ms (24 h))"
    );
    for (white, black, ok) in [
        (Some(max), Some(0), true),
        (Some(max + 1), None, false),
        (None, Some(-1), false),
    ] {
        let mut d = Driver::started(setup("300"));
        let r = d.try_input(
            Input::ReplaceClock {
                device: "spare".into(),
                white: white.map(Millis),
                black: black.map(Millis),
                arbiter: "IA".into(),
                reason: "defective".into(),
            },
            at(1.0),
        );
        assert_eq!(r.is_ok(), ok, "{white:?} {black:?}: {r:?}");
    }
}

fn set_moves(moves: u32, period: Option<u32>) -> Input {
    Input::SetMoves {
        side: Color::White,
        moves,
        period,
        arbiter: "IA".into(),
        reason: "counter".into(),
    }
}

#[test]
fn rule_6_13_set_moves_range_and_the_derived_period() {
    for (moves, period, ok) in [
        (10_000, None, true),
        (10_001, None, false),
        (0, Some(1), true),
        (0, Some(1000), true),
        (0, Some(1001), false),
        (0, Some(0), false),
    ] {
        let mut d = Driver::started(setup("40/5400:1800"));
        let r = d.try_input(set_moves(moves, period), at(1.0));
        assert_eq!(r.is_ok(), ok, "{moves} {period:?}: {r:?}");
    }
    // Derived: the first period whose quota is not yet met.
    for (tc, moves, period) in [
        ("40/5400:1800", 39, 1),
        ("40/5400:1800", 40, 2),
        ("40/5400:1800", 300, 2),
        ("40/7200", 79, 2),
        ("40/7200", 80, 3),
        ("40/5400:20/1800:900", 59, 2),
        ("40/5400:20/1800:900", 60, 3),
    ] {
        let mut d = Driver::started(setup(tc));
        d.input(set_moves(moves, None), at(1.0));
        assert_eq!(d.game.view(at(1.0)).white.period, period, "{tc} {moves}");
    }
}

#[test]
fn rule_6_5_decide_catches_up_a_deadline_due_at_that_instant() {
    // Nothing polled: a press at the start instant first starts the clock.
    let game = Game::new(setup("300")).unwrap();
    let e = game
        .decide(
            &Input::Press {
                side: None,
                mv: None,
            },
            T0,
        )
        .unwrap();
    assert!(matches!(e[0], Event::ClockStarted { at, .. } if at == T0));
    assert!(matches!(e.last(), Some(Event::Pressed { .. })));
}

#[test]
fn rule_6_12a_the_clocks_cannot_be_paused_before_the_start() {
    let mut d = Driver::new(setup("300"));
    let r = d.try_input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "early".into(),
        },
        T0 - Millis(1),
    );
    assert!(matches!(r, Err(Rejection::NotStarted { .. })), "{r:?}");
}

#[test]
fn rule_6_8_a_frozen_clock_stays_frozen_through_a_pause_and_the_other_sides_time() {
    let mut s = setup("60");
    s.flag_mode = FlagMode::Claim;
    let mut d = Driver::started(s);
    d.advance(at(61.0));
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "claim".into(),
        },
        at(62.0),
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        at(63.0),
    );
    assert_eq!(d.game.view(at(64.0)).running, None);
    d.input(arbiter_input("add", Color::Black, 10_000), at(65.0));
    assert_eq!(d.game.view(at(66.0)).running, None);
}

#[test]
fn rule_6_11_a_later_flag_does_not_decide_when_the_other_flag_is_already_down() {
    let mut s = setup("300");
    s.clock.freeze_after_last_flag = false;
    let mut d = Driver::started(s);
    d.press(at(298.5));
    d.input(both_at_zero(), at(597.5));
    // The arbiter gives Black (to move) time; White's flag stays down, and fell first.
    d.input(arbiter_input("set", Color::Black, 30_000), at(598.0));
    let e = d.advance(at(700.0));
    assert_eq!(flags(&e).len(), 1, "{e:?}");
    assert_eq!(d.game.result(), None);
    assert_eq!(d.game.view(at(700.0)).pending_flag, None);
}

#[test]
fn rule_6_10_hostile_readings_and_times_do_not_overflow() {
    let mut d = Driver::started(setup("300"));
    for (w, b) in [
        (i64::MIN, i64::MAX),
        (i64::MAX, i64::MIN),
        (i64::MIN, i64::MIN),
        (i64::MAX, i64::MAX),
    ] {
        let r = d.try_input(
            Input::ClockReading {
                white: Millis(w),
                black: Millis(b),
            },
            at(1.0),
        );
        assert!(r.is_ok(), "{r:?}");
    }
    for ms in [i64::MIN, i64::MAX] {
        for kind in ["set", "add"] {
            let r = d.try_input(arbiter_input(kind, Color::Black, ms), at(1.0));
            let message = r.unwrap_err().to_string();
            assert!(
                !message.contains("+-") && !message.contains("--"),
                "{message}"
            );
        }
    }
    // Hostile instants: the game's far future and a start at the end of time.
    let far = Driver::started(setup("300")).game.poll(Millis(i64::MAX));
    assert!(
        matches!(far.last(), Some(Event::GameEnded { .. })),
        "{far:?}"
    );
    let mut late = setup("300");
    late.start = Millis(i64::MAX - 1);
    let mut d = Driver::new(late);
    d.advance(Millis(i64::MAX));
    assert!(
        d.game
            .decide(
                &Input::ClockReading {
                    white: Millis(i64::MIN),
                    black: Millis(i64::MIN),
                },
                Millis(i64::MAX),
            )
            .is_ok()
    );
    let early = Game::new(Setup {
        start: Millis(i64::MIN),
        ..setup("300")
    })
    .unwrap();
    assert!(!early.poll(Millis(i64::MIN)).is_empty());
}

#[test]
fn rule_6_3_a_cascade_at_one_instant_reaches_its_fixed_point_in_one_poll() {
    // DGT "000" mode with periods of no time: 100 quotas already met open 100 periods at
    // the same instant, then the flag falls. One poll must deliver all of it.
    let mut s = setup("1/0");
    s.clock.period_transition = PeriodTransition::OnFlag;
    let mut d = Driver::new(s);
    d.present(Color::White, T0 - Millis(2));
    d.present(Color::Black, T0 - Millis(2));
    d.input(set_moves(100, Some(1)), T0 - Millis(1));
    let e = d.advance(T0);
    let advanced = e
        .iter()
        .filter(|e| matches!(e, Event::PeriodAdvanced { .. }))
        .count();
    assert_eq!(advanced, 100, "{e:?}");
    assert_eq!(flags(&e).len(), 1);
    assert!(d.game.poll(T0).is_empty(), "poll reached its fixed point");
    assert_eq!(d.game.view(T0).white.period, 101);
}

/// The board actor shows `Game::position` (and PGN starts from it): the start position
/// until a move is completed by its press (6.7a), then the position after it.
#[test]
fn rule_6_7a_the_position_is_the_start_then_each_completed_move() {
    let mut d = Driver::started(setup("300"));
    let fen = |d: &Driver| d.game.position().map(fen_of);
    assert_eq!(
        fen(&d).as_deref(),
        Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    );
    d.play("e2e4", at(5.0));
    assert_eq!(
        fen(&d).as_deref(),
        Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    );
}

// Observe mode (issue 24): a hand-set clock is the official time (6.10: its indication
// is conclusive); the reckoning follows it where the display cannot mean the reckoning.

fn shown(white: i64, black: i64) -> Input {
    Input::ClockTimes {
        white: Millis::from_secs(white),
        black: Millis::from_secs(black),
    }
}

#[test]
fn rule_6_10_observed_clock_within_its_display_is_not_adopted() {
    let mut d = Driver::started(setup("300"));
    // At 10.3 s White has 289.7 s: the display rounds it up to 290.
    assert!(d.input(shown(290, 300), at(10.3)).is_empty());
    // Slack for the rounding and the frame's travel: 289.2 s shown as 289, 289.6 s
    // shown as 291.
    assert!(d.input(shown(289, 300), at(10.8)).is_empty());
    assert!(d.input(shown(291, 300), at(10.4)).is_empty());
    // Beyond it, the clock's time is taken: 1.7 s above the display.
    assert!(!d.input(shown(288, 300), at(10.3)).is_empty());
    assert_eq!(d.remaining(Color::White, at(10.3)), Millis(288_000));
    // And a clock at 0:00 always: its flag is the official one.
    let e = d.input(shown(0, 300), at(297.5));
    assert!(matches!(e[..], [Event::ClockTimesAdopted { .. }]), "{e:?}");
}

#[test]
fn rule_6_10_observed_clock_that_disagrees_is_adopted_with_the_reckoning_on_record() {
    let mut d = Driver::started(setup("300+30"));
    d.press(at(10.0));
    // The clock was set to 5:00 without the increment: White shows 290, Black 300;
    // the reckoning (30 s credited before move 1 and at the press) 350 and 330.
    let e = d.input(shown(290, 300), at(10.0));
    assert_eq!(
        e,
        vec![Event::ClockTimesAdopted {
            at: at(10.0),
            white_ms: Millis::from_secs(290),
            black_ms: Millis::from_secs(300),
            reckoned_white_ms: Millis::from_secs(350),
            reckoned_black_ms: Millis::from_secs(330),
        }]
    );
    assert_eq!(d.remaining(Color::White, at(20.0)), Millis::from_secs(290));
    // The running side is settled at the reading and runs on from the clock's time.
    assert_eq!(d.remaining(Color::Black, at(20.0)), Millis::from_secs(290));
    // A clock that went up by itself (set by hand) is adopted as well.
    let e = d.input(shown(290, 400), at(20.0));
    assert!(matches!(e[0], Event::ClockTimesAdopted { .. }), "{e:?}");
    assert_eq!(d.remaining(Color::Black, at(30.0)), Millis::from_secs(390));
}

#[test]
fn rule_6_9_observed_clock_at_zero_is_a_flag_and_a_flag_is_never_lifted_by_a_reading() {
    let mut s = setup("300");
    s.flag_mode = FlagMode::Claim;
    let mut d = Driver::started(s);
    // The clock shows 0:00 for White at 30.5 s (set wrong by hand), when the round's
    // control still has 4.5 minutes: the clock is the official time.
    let e = d.input(shown(0, 300), at(30.5));
    assert!(matches!(e[..], [Event::ClockTimesAdopted { .. }]), "{e:?}");
    let e = d.input(shown(0, 300), at(31.0));
    assert!(
        e.iter().any(
            |e| matches!(e, Event::FlagFell { side: Color::White, at: t, .. } if *t == at(30.5))
        ),
        "{e:?}"
    );
    // Claim mode: the verdict waits for the arbiter.
    assert_eq!(d.game.result(), None);
    assert!(
        d.input(shown(1, 300), at(32.0)).is_empty(),
        "a flagged side keeps its flag"
    );
    assert!(d.game.clock().side(Color::White).flagged_at.is_some());
}

#[test]
fn rule_6_10_observed_clock_is_not_read_before_the_start_or_after_the_result() {
    let mut d = Driver::new(setup("300"));
    assert!(d.input(shown(100, 100), at(-5.0)).is_empty());
    let mut d = Driver::started(setup("300"));
    d.input(
        Input::SetResult {
            result: ArbiterResult::AgreedDraw,
            arbiter: "IA".into(),
            reason: "agreed".into(),
        },
        at(5.0),
    );
    assert!(d.input(shown(100, 100), at(6.0)).is_empty());
}

#[test]
fn rule_6_8_an_observed_game_claims_its_flags_whatever_the_setup_says() {
    let mut s = setup("60");
    s.flag_mode = FlagMode::Auto;
    s.observed = true;
    let mut d = Driver::started(s);
    assert_eq!(d.game.setup().flag_mode, FlagMode::Claim);
    let e = d.input(shown(0, 60), at(30.0));
    assert!(matches!(e[..], [Event::ClockTimesAdopted { .. }]), "{e:?}");
    let e = d.input(shown(0, 60), at(31.0));
    assert!(
        e.iter().any(|e| matches!(e, Event::ResultPending { .. })),
        "{e:?}"
    );
    assert_eq!(d.game.result(), None, "the arbiter confirms");
    let e = d.input(
        Input::ConfirmFlag {
            arbiter: "IA".into(),
        },
        at(40.0),
    );
    assert!(matches!(e[..], [Event::GameEnded { .. }]), "{e:?}");
    assert_eq!(d.result().map(|r| r.0), Some(Score::BlackWins));
}

#[test]
fn rule_6_10_observed_clock_boundaries_are_exact() {
    let mut d = Driver::started(setup("300"));
    let times = |white: i64, black: i64| Input::ClockTimes {
        white: Millis(white),
        black: Millis(black),
    };
    // At 10 s White reckons 290 s: exactly 1.2 s above a display of 288.8 s agrees…
    assert!(d.input(times(288_800, 300_000), at(10.0)).is_empty());
    // …one millisecond more does not.
    assert!(!d.input(times(288_799, 300_000), at(10.0)).is_empty());
    // A side already at 0:00 that the clock shows at 0:00 is nothing to take (Black,
    // set to zero while White runs: no flag until it runs).
    d.input(
        Input::SetTime {
            side: Color::Black,
            remaining: Millis::ZERO,
            arbiter: "IA".into(),
            reason: "test".into(),
        },
        at(11.0),
    );
    assert!(d.input(times(287_000, 0), at(12.0)).is_empty());
}

/// A pending flag's reason has three forms, journaled as words; each has its code.
#[test]
fn rule_6_9_a_pending_flags_reason_has_a_code_for_each_of_its_three_forms() {
    use hallclock_rules::game::pending_code;
    assert_eq!(
        pending_code("claim mode: the result waits for the arbiter's confirmation (6.8)"),
        "claim"
    );
    assert_eq!(
        pending_code("flag fell, result pending arbiter: the position is not known"),
        "position_unknown"
    );
    assert_eq!(
        pending_code("flag fell, result pending arbiter: the search gave up"),
        "undecided"
    );
}

/// The event's piece letters are kept with the game's setup; English, the default, is not
/// written, so a journal from before them reads the same.
#[test]
fn the_setups_piece_letters_are_written_only_when_not_english() {
    use hallclock_rules::adjournment::NotationLanguage;
    let s = setup("60");
    let written = serde_json::to_value(&s).unwrap();
    assert!(written.get("piece_letters").is_none(), "{written}");
    let mut es = setup("60");
    es.piece_letters = NotationLanguage::Es;
    let written = serde_json::to_value(&es).unwrap();
    assert_eq!(written["piece_letters"], "es");
    let back: Setup = serde_json::from_value(written).unwrap();
    assert_eq!(back.piece_letters, NotationLanguage::Es);
}
