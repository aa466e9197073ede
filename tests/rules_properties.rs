//! Properties of the rules core over random input sequences:
//! - the state is exactly the fold of its events (replay gives an identical game);
//! - no time is created or lost: for each side, remaining = base + credited bonuses +
//!   arbiter changes - time its clock ran;
//! - a flag is never emitted before its deadline and always at it.

use hallclock::rules::game::{BothAbsent, Event, FlagMode, Game, Input, Setup};
use hallclock::rules::time_control::{
    Bonus, ClockOptions, DelayDisplay, IncrementCredit, Period, PeriodTransition, TimeControl,
};
use hallclock::rules::{ByColor, Color, Millis};
use proptest::prelude::*;

const T0: Millis = Millis(1_800_000_000_000);

#[derive(Debug, Clone)]
enum Op {
    Press,
    PressAs(Color),
    Present(Color),
    Pause,
    PlayerPause,
    Resume,
    SetTime(Color, i64),
    AddTime(Color, i64),
    SetMoves(Color, u32),
    Replace(i64, i64),
    Reading(i64, i64),
    Confirm,
    Nothing,
}

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::White), Just(Color::Black)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => Just(Op::Press),
        1 => color().prop_map(Op::PressAs),
        1 => color().prop_map(Op::Present),
        1 => Just(Op::Pause),
        1 => Just(Op::PlayerPause),
        2 => Just(Op::Resume),
        1 => (color(), 0i64..200_000).prop_map(|(c, t)| Op::SetTime(c, t)),
        1 => (color(), -100_000i64..100_000).prop_map(|(c, t)| Op::AddTime(c, t)),
        1 => (color(), 0u32..12).prop_map(|(c, m)| Op::SetMoves(c, m)),
        1 => (0i64..100_000, 0i64..100_000).prop_map(|(w, b)| Op::Replace(w, b)),
        1 => (0i64..3, 0i64..3).prop_map(|(w, b)| Op::Reading(w * 1000, b * 1000)),
        1 => Just(Op::Confirm),
        2 => Just(Op::Nothing),
    ]
}

/// Controls without delay (delay is free time, checked by its own rule tests).
fn tc() -> impl Strategy<Value = TimeControl> {
    let period = |last: bool| {
        let moves = if last {
            proptest::option::of(1u32..4).boxed()
        } else {
            (1u32..4).prop_map(Some).boxed()
        };
        (moves, 1u32..90, 0u32..4).prop_map(|(moves, secs, inc)| Period {
            moves,
            secs,
            bonus: if inc == 0 {
                Bonus::None
            } else {
                Bonus::Increment(inc)
            },
        })
    };
    (proptest::collection::vec(period(false), 0..3), period(true)).prop_map(|(mut v, l)| {
        v.push(l);
        TimeControl::Periods(v)
    })
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        tc(),
        any::<[bool; 5]>(),
        0i64..120_000,
        proptest::option::of(tc()),
    )
        .prop_map(|(tc, b, default_ms, tc_black)| Setup {
            white: "W".into(),
            black: "B".into(),
            tc,
            tc_black,
            start: T0,
            default_time: Millis(default_ms),
            both_absent: if b[0] {
                BothAbsent::BothLose
            } else {
                BothAbsent::Arbiter
            },
            flag_mode: if b[1] {
                FlagMode::Auto
            } else {
                FlagMode::Claim
            },
            clock: ClockOptions {
                period_transition: if b[2] {
                    PeriodTransition::OnMoves
                } else {
                    PeriodTransition::OnFlag
                },
                increment_credit: if b[3] {
                    IncrementCredit::BeforeMove1
                } else {
                    IncrementCredit::AfterPress
                },
                delay_display: DelayDisplay::Countdown,
                freeze_after_last_flag: b[4],
            },
            // Clock-only boards: the position plays no part in these properties.
            fen: None,
            discrepancy_margin: Millis(2000),
        })
}

fn input(op: &Op) -> Option<Input> {
    let a = || "IA".to_string();
    let r = || "test".to_string();
    Some(match op {
        Op::Press => Input::Press {
            side: None,
            mv: None,
        },
        Op::PressAs(c) => Input::Press {
            side: Some(*c),
            mv: None,
        },
        Op::Present(c) => Input::Present {
            side: *c,
            arbiter: a(),
        },
        Op::Pause => Input::Pause {
            arbiter: a(),
            reason: r(),
        },
        Op::PlayerPause => Input::PlayerPause { side: None },
        Op::Resume => Input::Resume { arbiter: a() },
        Op::SetTime(c, t) => Input::SetTime {
            side: *c,
            remaining: Millis(*t),
            arbiter: a(),
            reason: r(),
        },
        Op::AddTime(c, t) => Input::AddTime {
            side: *c,
            delta: Millis(*t),
            arbiter: a(),
            reason: r(),
        },
        Op::SetMoves(c, m) => Input::SetMoves {
            side: *c,
            moves: *m,
            period: None,
            arbiter: a(),
            reason: r(),
        },
        Op::Replace(w, b) => Input::ReplaceClock {
            device: "spare".into(),
            white: Some(Millis(*w)),
            black: Some(Millis(*b)),
            arbiter: a(),
            reason: r(),
        },
        Op::Reading(w, b) => Input::ClockReading {
            white: Millis(*w),
            black: Millis(*b),
        },
        Op::Confirm => Input::ConfirmFlag { arbiter: a() },
        Op::Nothing => return None,
    })
}

/// The test's own bookkeeping of where time went, kept from outside the core.
struct Ledger {
    base: ByColor<Millis>,
    credits: ByColor<Millis>,
    ran: ByColor<Millis>,
    last: Millis,
}

impl Ledger {
    /// Time between the previous event and `t` ran on the side the game says runs
    /// (and has not flagged: a flagged clock stays at 0:00).
    fn run_to(&mut self, game: &Game, t: Millis) {
        if let Some(c) = game.clock().running()
            && game.clock().side(c).flagged_at.is_none()
        {
            *self.ran.get_mut(c) += t - self.last;
        }
        self.last = self.last.max(t);
    }

    fn expected(&self, c: Color) -> Millis {
        *self.base.get(c) + *self.credits.get(c) - *self.ran.get(c)
    }

    fn apply(&mut self, game: &mut Game, e: &Event) -> Result<(), TestCaseError> {
        self.run_to(game, e.at());
        match e {
            Event::Pressed {
                side, increment_ms, ..
            } => *self.credits.get_mut(*side) += *increment_ms,
            Event::PeriodAdvanced {
                side,
                added_ms,
                forfeited_ms,
                ..
            } => *self.credits.get_mut(*side) += *added_ms - *forfeited_ms,
            Event::TimeSet {
                side,
                remaining_ms,
                previous_ms,
                ..
            } => *self.credits.get_mut(*side) += *remaining_ms - *previous_ms,
            Event::TimeAdded { side, delta_ms, .. } => *self.credits.get_mut(*side) += *delta_ms,
            Event::ClockReplaced {
                at,
                white_ms,
                black_ms,
                ..
            } => {
                for (c, new) in [(Color::White, *white_ms), (Color::Black, *black_ms)] {
                    *self.credits.get_mut(c) += new - game.clock().remaining_at(c, *at);
                }
            }
            Event::BothFlagsOrderUnknown { at } => {
                for c in Color::ALL {
                    *self.credits.get_mut(c) -= game.clock().remaining_at(c, *at);
                }
            }
            Event::FlagFell { side, at, .. } => {
                // Never early, never late: the time ran out exactly now.
                prop_assert_eq!(
                    self.expected(*side),
                    Millis::ZERO,
                    "flag of {} at {:?}",
                    side,
                    at
                );
                prop_assert_eq!(game.clock().zero_at(), Some(*at));
            }
            _ => {}
        }
        game.evolve(e);
        Ok(())
    }

    fn check(&self, game: &Game, now: Millis) -> Result<(), TestCaseError> {
        for c in Color::ALL {
            let mut ran = *self.ran.get(c);
            if game.clock().running() == Some(c) && game.clock().side(c).flagged_at.is_none() {
                ran += now - self.last;
            }
            let expected = *self.base.get(c) + *self.credits.get(c) - ran;
            let actual = game.clock().remaining_at(c, now);
            if game.clock().side(c).flagged_at.is_some() {
                prop_assert_eq!(actual, Millis::ZERO);
            } else {
                prop_assert_eq!(actual, expected, "{} at {:?}", c, now);
                prop_assert!(actual >= Millis::ZERO);
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn replay_conservation_and_exact_flags(
        setup in setup(),
        steps in proptest::collection::vec((0i64..30_000, op()), 1..60),
    ) {
        let fresh = Game::new(setup.clone()).unwrap();
        let mut game = fresh.clone();
        let mut all = Vec::new();
        let mut ledger = Ledger {
            base: ByColor {
                white: game.clock().remaining_at(Color::White, T0),
                black: game.clock().remaining_at(Color::Black, T0),
            },
            credits: ByColor::default(),
            ran: ByColor::default(),
            last: T0,
        };
        let mut now = T0 - Millis(10_000);
        for (dt, op) in &steps {
            now += Millis(*dt);
            for e in game.poll(now) {
                prop_assert!(e.at() <= now);
                ledger.apply(&mut game, &e)?;
                all.push(e);
            }
            // Nothing is overdue after a poll.
            prop_assert!(game.next_deadline().is_none_or(|d| d > now));
            if let Some(input) = input(op) {
                let before = game.clone();
                let decided = game.decide(&input, now);
                prop_assert_eq!(&game, &before, "decide must not change the game");
                prop_assert_eq!(&decided, &game.decide(&input, now), "decide is deterministic");
                if let Ok(events) = decided {
                    for e in events {
                        prop_assert_eq!(e.at(), now);
                        ledger.apply(&mut game, &e)?;
                        all.push(e);
                    }
                }
            }
            ledger.run_to(&game, now);
            ledger.check(&game, now)?;
        }
        let mut replayed = fresh;
        for e in &all {
            replayed.evolve(e);
        }
        prop_assert_eq!(replayed, game);
    }

    #[test]
    fn events_round_trip_through_json(
        setup in setup(),
        steps in proptest::collection::vec((0i64..30_000, op()), 1..30),
    ) {
        let mut game = Game::new(setup).unwrap();
        let mut now = T0 - Millis(5_000);
        for (dt, op) in &steps {
            now += Millis(*dt);
            let mut events = game.poll(now);
            for e in &events { game.evolve(e); }
            if let Some(input) = input(op) {
                let json = serde_json::to_string(&input).unwrap();
                prop_assert_eq!(serde_json::from_str::<Input>(&json).unwrap(), input.clone());
                if let Ok(more) = game.decide(&input, now) {
                    for e in &more { game.evolve(e); }
                    events.extend(more);
                }
            }
            for e in events {
                let json = serde_json::to_string(&e).unwrap();
                let back: Event = serde_json::from_str(&json).map_err(|err| TestCaseError::fail(format!("{json}: {err}")))?;
                prop_assert_eq!(back, e);
            }
        }
    }
}
