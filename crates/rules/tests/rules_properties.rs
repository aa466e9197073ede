//! Properties of the rules core over random input sequences:
//! - the state is exactly the fold of its events (replay gives an identical game);
//! - no time is created or lost: for each side, remaining = base + credited bonuses +
//!   arbiter changes - time its clock ran;
//! - a flag is never emitted before its deadline and always at it;
//! - all of it also through adjournments: session ends, sealing, commits, resumptions,
//!   openings (right and wrong), counter-seals, draw offers, time corrections.

use hallclock_rules::adjournment::Resumption;
use hallclock_rules::game::{BothAbsent, Event, FlagMode, Game, Input, Setup};
use hallclock_rules::time_control::{
    Bonus, ClockOptions, DelayDisplay, IncrementCredit, Period, PeriodTransition, TimeControl,
};
use hallclock_rules::{ByColor, Color, Millis};
use proptest::prelude::*;
use shakmaty::Position;

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
    /// Observe mode: what a hand-set clock shows (whole seconds).
    Shown(i64, i64),
    Confirm,
    Nothing,
    /// A legal move with its press (keeps the position known).
    Play(u8),
    SessionEnd(i64),
    Adjourn,
    Seal(u8),
    Commit,
    Schedule(i64),
    OpenRight,
    OpenWrong,
    CounterSeal(u8),
    DrawOffer(Color),
    DrawReply(bool),
    CorrectTime(Color, i64),
    EnvelopeLost,
    Verify,
}

const SEALS: [&str; 6] = ["e5", "Nf6", "Nc6", "d5", "Qh4", "Nd7"];

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::White), Just(Color::Black)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => Just(Op::Press),
        1 => color().prop_map(Op::PressAs),
        4 => color().prop_map(Op::Present),
        1 => Just(Op::Pause),
        1 => Just(Op::PlayerPause),
        2 => Just(Op::Resume),
        1 => (color(), 0i64..200_000).prop_map(|(c, t)| Op::SetTime(c, t)),
        1 => (color(), -100_000i64..100_000).prop_map(|(c, t)| Op::AddTime(c, t)),
        1 => (color(), 0u32..12).prop_map(|(c, m)| Op::SetMoves(c, m)),
        1 => (0i64..100_000, 0i64..100_000).prop_map(|(w, b)| Op::Replace(w, b)),
        1 => (0i64..3, 0i64..3).prop_map(|(w, b)| Op::Reading(w * 1000, b * 1000)),
        2 => (0i64..200, 0i64..200).prop_map(|(w, b)| Op::Shown(w * 1000, b * 1000)),
        1 => Just(Op::Confirm),
        2 => Just(Op::Nothing),
        6 => any::<u8>().prop_map(Op::Play),
        1 => (0i64..60_000).prop_map(Op::SessionEnd),
        1 => Just(Op::Adjourn),
        2 => any::<u8>().prop_map(Op::Seal),
        2 => Just(Op::Commit),
        2 => (0i64..60_000).prop_map(Op::Schedule),
        5 => Just(Op::OpenRight),
        1 => Just(Op::OpenWrong),
        3 => any::<u8>().prop_map(Op::CounterSeal),
        1 => color().prop_map(Op::DrawOffer),
        1 => any::<bool>().prop_map(Op::DrawReply),
        1 => (color(), 0i64..200_000).prop_map(|(c, t)| Op::CorrectTime(c, t)),
        1 => Just(Op::EnvelopeLost),
        1 => Just(Op::Verify),
    ]
}

/// What the shell keeps: the text and nonce behind each commitment.
#[derive(Default)]
struct Secrets(Vec<(String, String, String)>);

impl Secrets {
    fn keep(&mut self, input: &Input, events: &[Event]) {
        let (Input::Seal { mv, nonce, .. } | Input::CounterSeal { mv, nonce }) = input else {
            return;
        };
        for e in events {
            let c = match e {
                Event::Sealed { commitment, .. } => commitment.clone(),
                Event::CounterSealed { envelope, .. } => envelope.commitment.clone(),
                _ => continue,
            };
            self.0.push((c, mv.clone(), nonce.clone()));
        }
    }

    fn for_last_envelope(&self, game: &Game, now: Millis) -> Option<(String, String)> {
        let adj = game.view(now).adjournment?;
        let last = adj.envelopes.last()?;
        self.0
            .iter()
            .find(|(c, ..)| *c == last.commitment)
            .map(|(_, m, n)| (m.clone(), n.clone()))
    }
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
        any::<[bool; 7]>(),
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
            pauses_extend_default_time: b[5],
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
            observed: b[6],
            piece_letters: Default::default(),
            white_info: Default::default(),
            black_info: Default::default(),
        })
}

/// The `i`-th legal move of the position, in SAN.
fn legal_san(game: &Game, i: u8) -> Option<String> {
    let pos = game.position()?;
    let legal = pos.legal_moves();
    let m = legal.get(usize::from(i) % legal.len().max(1))?;
    Some(shakmaty::san::San::from_move(pos, *m).to_string())
}

fn input(op: &Op, game: &Game, secrets: &Secrets, now: Millis) -> Option<Input> {
    let a = || "IA".to_string();
    let r = || "test".to_string();
    let nonce = |b: u8| format!("{b:02x}").repeat(16);
    Some(match op {
        Op::Play(i) => {
            let pos = game.position();
            let mv = pos
                .filter(|p| game.clock().turn == hallclock_rules::Color::from(p.turn()))
                .and_then(|p| {
                    let legal = p.legal_moves();
                    let m = legal.get(usize::from(*i) % legal.len().max(1))?;
                    Some(m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                });
            Input::Press { side: None, mv }
        }
        Op::SessionEnd(dt) => Input::SetSessionEnd {
            end: Some(now + Millis(*dt)),
            arbiter: a(),
        },
        Op::Adjourn => Input::Adjourn {
            arbiter: a(),
            resumption: None,
        },
        Op::Seal(i) => Input::Seal {
            side: None,
            mv: legal_san(game, *i)
                .filter(|_| i % 3 != 0)
                .unwrap_or_else(|| SEALS[usize::from(*i) % SEALS.len()].into()),
            nonce: nonce(*i),
            on_board: i % 7 == 0,
        },
        Op::Commit => Input::CommitSeal { arbiter: None },
        Op::Schedule(dt) => Input::ScheduleResumption {
            resumption: Resumption {
                start: now + Millis(*dt),
                end: (dt % 2 == 0).then(|| now + Millis(*dt) + Millis(40_000)),
                place: "B".into(),
            },
            arbiter: a(),
        },
        Op::OpenRight | Op::OpenWrong => {
            let (mv, n) = secrets
                .for_last_envelope(game, now)
                .unwrap_or_else(|| ("e5".into(), nonce(1)));
            Input::OpenEnvelope {
                mv: if matches!(op, Op::OpenWrong) {
                    format!("{mv}x")
                } else {
                    mv
                },
                nonce: n,
                arbiter: a(),
            }
        }
        Op::CounterSeal(i) => Input::CounterSeal {
            mv: legal_san(game, *i).unwrap_or_else(|| SEALS[usize::from(*i) % SEALS.len()].into()),
            nonce: nonce(i.wrapping_add(100)),
        },
        Op::DrawOffer(c) => Input::DrawOffer {
            side: *c,
            arbiter: a(),
        },
        Op::DrawReply(accept) => Input::DrawReply {
            accept: *accept,
            arbiter: a(),
        },
        Op::CorrectTime(c, t) => Input::CorrectTime {
            side: *c,
            remaining: Millis(*t),
            arbiter: a(),
            reason: r(),
        },
        Op::EnvelopeLost => Input::EnvelopeLost {
            arbiter: a(),
            reason: r(),
        },
        Op::Verify => Input::VerifyEnvelope { arbiter: a() },
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
        Op::Shown(w, b) => Input::ClockTimes {
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
            Event::TimeCorrected {
                side,
                remaining_ms,
                previous_ms,
                ..
            } => *self.credits.get_mut(*side) += *remaining_ms - *previous_ms,
            Event::CounterSealed {
                side, increment_ms, ..
            } => *self.credits.get_mut(*side) += *increment_ms,
            Event::SealCommitted {
                at,
                side,
                charged_ms,
                increment_ms,
                ..
            } => {
                *self.credits.get_mut(*side) += *increment_ms;
                // I.1.2: charged up to the nominal session end, beyond the time that ran.
                let ran_until_now = game.clock().charge(*at).main;
                *self.ran.get_mut(*side) += *charged_ms - ran_until_now;
            }
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
            // Observe mode: the hand-set clock's times replace the reckoning (the
            // difference is the event's to explain, as with a replaced clock).
            Event::ClockTimesAdopted {
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

/// Drive `steps` through a game, checking the ledger, exact flags, purity and
/// determinism of decide, and finally that replaying the events rebuilds the game.
fn check_replay(setup: Setup, steps: &[(i64, Op)]) -> Result<(), TestCaseError> {
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
    let mut secrets = Secrets::default();
    for (dt, op) in steps {
        now += Millis(*dt);
        for e in game.poll(now) {
            prop_assert!(e.at() <= now);
            ledger.apply(&mut game, &e)?;
            all.push(e);
        }
        // Nothing is overdue after a poll.
        prop_assert!(game.next_deadline().is_none_or(|d| d > now));
        if let Some(input) = input(op, &game, &secrets, now) {
            let before = game.clone();
            let decided = game.decide(&input, now);
            prop_assert_eq!(&game, &before, "decide must not change the game");
            prop_assert_eq!(
                &decided,
                &game.decide(&input, now),
                "decide is deterministic"
            );
            if let Ok(events) = decided {
                secrets.keep(&input, &events);
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
    Ok(())
}

fn adjournment_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u8>().prop_map(Op::Play),
        3 => color().prop_map(Op::Present),
        1 => (0i64..60_000).prop_map(Op::SessionEnd),
        2 => Just(Op::Adjourn),
        3 => any::<u8>().prop_map(Op::Seal),
        3 => Just(Op::Commit),
        3 => (0i64..60_000).prop_map(Op::Schedule),
        4 => Just(Op::OpenRight),
        1 => Just(Op::OpenWrong),
        2 => any::<u8>().prop_map(Op::CounterSeal),
        1 => color().prop_map(Op::DrawOffer),
        1 => any::<bool>().prop_map(Op::DrawReply),
        1 => (color(), 0i64..4_000_000).prop_map(|(c, t)| Op::CorrectTime(c, t)),
        1 => Just(Op::EnvelopeLost),
        1 => Just(Op::Verify),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        2 => Just(Op::Nothing),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn replay_conservation_and_exact_flags(
        setup in setup(),
        steps in proptest::collection::vec((0i64..30_000, op()), 1..60),
    ) {
        check_replay(setup, &steps)?;
    }

    /// Long controls and present players, so that sealing, resumption, openings and
    /// counter-seals happen often; the same properties must hold.
    #[test]
    fn adjournment_flows_replay_exactly(
        steps in proptest::collection::vec((0i64..20_000, adjournment_op()), 1..80),
        default_ms in 0i64..600_000,
    ) {
        let mut setup = Setup::new("W", "B", TimeControl::Periods(vec![Period {
            moves: Some(40),
            secs: 3600,
            bonus: Bonus::Increment(5),
        }, Period { moves: None, secs: 1800, bonus: Bonus::None }]), T0);
        setup.default_time = Millis(default_ms);
        check_replay(setup, &steps)?;
    }

    #[test]
    fn events_round_trip_through_json(
        setup in setup(),
        steps in proptest::collection::vec((0i64..30_000, op()), 1..30),
    ) {
        let mut game = Game::new(setup).unwrap();
        let mut now = T0 - Millis(5_000);
        let mut secrets = Secrets::default();
        for (dt, op) in &steps {
            now += Millis(*dt);
            let mut events = game.poll(now);
            for e in &events { game.evolve(e); }
            if let Some(input) = input(op, &game, &secrets, now) {
                let json = serde_json::to_string(&input).unwrap();
                prop_assert_eq!(serde_json::from_str::<Input>(&json).unwrap(), input.clone());
                if let Ok(more) = game.decide(&input, now) {
                    secrets.keep(&input, &more);
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
