//! Adjourned games, Guidelines I (and the older Appendix A), rule by rule, through the
//! pure core: decide/evolve/poll with instants passed in, exact to the millisecond.

use hallclock_rules::adjournment::{
    AdjournmentRules, Edition, EnvelopeStatus, NotationLanguage, Resumption, SealedVerdict, Stage,
    commitment,
};
use hallclock_rules::game::{
    ArbiterResult, Event, FlagMode, Game, Input, PausedBy, Phase, Rejection, Score, Setup,
    Termination,
};
use hallclock_rules::time_control::parse;
use hallclock_rules::{Color, Millis};

const T0: Millis = Millis(1_800_000_000_000);
/// The resumption session, the next day.
const R0: Millis = Millis(1_800_000_000_000 + 86_400_000);

fn at(secs: i64) -> Millis {
    T0 + Millis(secs * 1000)
}

fn rat(secs: i64) -> Millis {
    R0 + Millis(secs * 1000)
}

fn s(secs: i64) -> Millis {
    Millis(secs * 1000)
}

fn nonce(b: u8) -> String {
    format!("{b:02x}").repeat(16)
}

/// No increment, so the arithmetic reads plainly: 2 h for 40 moves, then 1 h.
fn setup(fen: Option<&str>) -> Setup {
    let mut s = Setup::new(
        "Arias, Eva",
        "Brandt, Ole",
        parse("40/7200:3600").unwrap(),
        T0,
    );
    s.fen = fen.map(String::from);
    s
}

/// A driver like the daemon's, which also keeps the shell's secrets (text + nonce).
struct Driver {
    game: Game,
    events: Vec<Event>,
    views: Vec<String>,
}

impl Driver {
    fn new(s: Setup) -> Driver {
        Driver {
            game: Game::new(s).unwrap(),
            events: Vec::new(),
            views: Vec::new(),
        }
    }

    fn advance(&mut self, now: Millis) -> Vec<Event> {
        let new = self.game.poll(now);
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new.clone());
        self.views
            .push(serde_json::to_string(&self.game.view(now)).unwrap());
        new
    }

    fn try_input(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        let mut out = self.advance(now);
        let new = self.game.decide(&input, now)?;
        for e in &new {
            self.game.evolve(e);
        }
        self.events.extend(new.clone());
        self.views
            .push(serde_json::to_string(&self.game.view(now)).unwrap());
        out.extend(new);
        Ok(out)
    }

    fn input(&mut self, input: Input, now: Millis) -> Vec<Event> {
        match self.try_input(input.clone(), now) {
            Ok(e) => e,
            Err(r) => panic!("{input:?} at {now:?} rejected: {r}"),
        }
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

    fn present(&mut self, side: Color, now: Millis) -> Vec<Event> {
        self.input(
            Input::Present {
                side,
                arbiter: "IA".into(),
            },
            now,
        )
    }

    fn seal(&mut self, mv: &str, n: u8, now: Millis) -> Vec<Event> {
        self.input(
            Input::Seal {
                side: None,
                mv: mv.into(),
                nonce: nonce(n),
                on_board: false,
            },
            now,
        )
    }

    fn commit(&mut self, now: Millis) -> Vec<Event> {
        self.input(Input::CommitSeal { arbiter: None }, now)
    }

    fn open(&mut self, mv: &str, n: u8, now: Millis) -> Result<Vec<Event>, Rejection> {
        self.try_input(
            Input::OpenEnvelope {
                mv: mv.into(),
                nonce: nonce(n),
                arbiter: "IA".into(),
            },
            now,
        )
    }

    fn schedule(&mut self, now: Millis) {
        self.input(
            Input::ScheduleResumption {
                resumption: Resumption {
                    start: R0,
                    end: Some(rat(4 * 3600)),
                    place: "Hall B".into(),
                },
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

    fn stage(&self, now: Millis) -> Option<Stage> {
        self.game.view(now).adjournment.map(|a| a.stage)
    }

    /// 1. e4 e5 2. Nf3 with both present; session end at 1 h: Black must seal.
    fn to_the_session_end(fen: Option<&str>) -> Driver {
        Driver::to_the_session_end_from(Driver::new(setup(fen)))
    }

    /// As [`Driver::to_the_session_end`], from a driver set up by the test (its own
    /// control, the event's adjournment rules) before anything was played.
    fn to_the_session_end_from(mut d: Driver) -> Driver {
        let fen = d.game.setup().fen.clone();
        d.input(
            Input::SetSessionEnd {
                end: Some(at(3600)),
                arbiter: "schedule".into(),
            },
            at(-60),
        );
        d.present(Color::White, at(-30));
        d.present(Color::Black, at(-30));
        if fen.is_none() {
            d.play("e4", at(10));
            d.play("e5", at(30));
            d.play("Nf3", at(60));
        }
        d.advance(at(3600));
        d
    }

    /// Black seals 2...Nc6 (nonce 7) at 3700 s and stops the clock at 3720 s; the
    /// resumption is the next day at R0.
    fn adjourned() -> Driver {
        Driver::adjourned_from(Driver::new(setup(None)))
    }

    /// The arbiter announces (at 3900 s) a resumption session from R0 to `end` in Hall B,
    /// and both players are there a minute early.
    fn resumption_ending(&mut self, end: Millis) {
        self.input(
            Input::ScheduleResumption {
                resumption: Resumption {
                    start: R0,
                    end: Some(end),
                    place: "Hall B".into(),
                },
                arbiter: "IA".into(),
            },
            at(3900),
        );
        self.present(Color::White, rat(-60));
        self.present(Color::Black, rat(-60));
    }

    /// As [`Driver::adjourned`], from a driver set up by the test.
    fn adjourned_from(d: Driver) -> Driver {
        let mut d = Driver::to_the_session_end_from(d);
        d.seal("Nc6", 7, at(3700));
        d.commit(at(3720));
        d.schedule(at(3800));
        d
    }
}

fn named<'a>(events: &'a [Event], name: &str) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| serde_json::to_value(e).unwrap()["event"] == name)
        .collect()
}

// --- I.1.1 / I.1.2 / A1a: sealing --------------------------------------------------------

#[test]
fn rule_i_1_1_session_end_orders_the_player_to_move_to_seal() {
    let mut d = Driver::new(setup(None));
    d.input(
        Input::SetSessionEnd {
            end: Some(at(3600)),
            arbiter: "schedule".into(),
        },
        at(-60),
    );
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    assert_eq!(
        d.game.next_deadline(),
        Some(at(3600)),
        "SessionEnd is a timer"
    );
    assert!(d.advance(at(3600) - Millis(1)).is_empty());
    // Polled late, the order still carries the nominal end.
    let ev = d.advance(at(3700));
    assert_eq!(
        ev,
        [Event::AdjournmentOrdered {
            at: at(3600),
            sealer: Color::Black,
            arbiter: None,
            early: false,
        }]
    );
    assert_eq!(d.stage(at(3700)), Some(Stage::Sealing));
}

#[test]
fn rule_i_1_1_sealer_clock_runs_until_the_commit() {
    let mut d = Driver::to_the_session_end(None);
    // Black's turn started at 30 s (after White's press at 60 s: Black has 7200-20).
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    d.seal("Nc6", 7, at(3700));
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    let ev = d.commit(at(3720));
    let Event::SealCommitted {
        charged_ms,
        charged_to,
        remaining_ms,
        moves,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*charged_to, at(3720));
    assert_eq!(*charged_ms, s(3720 - 60));
    assert_eq!(*remaining_ms, s(7200 - 20 - 3660));
    assert_eq!(*moves, 2, "the sealed move completes Black's second move");
}

#[test]
fn rule_i_1_1_sealed_move_may_be_replaced_until_the_commit() {
    let mut d = Driver::to_the_session_end(None);
    let first = d.seal("Nc6", 1, at(3700));
    let second = d.seal("Nf6", 2, at(3710));
    let commitment_of = |ev: &[Event]| match &ev[0] {
        Event::Sealed { commitment, .. } => commitment.clone(),
        other => panic!("{other:?}"),
    };
    assert_ne!(commitment_of(&first), commitment_of(&second));
    d.commit(at(3720));
    let envelope = &d.game.view(at(3720)).adjournment.unwrap().envelopes[0];
    assert_eq!(
        envelope.commitment,
        commitment_of(&second),
        "the last one counts"
    );
    // After the commit it can no longer change.
    let late = d.try_input(
        Input::Seal {
            side: None,
            mv: "d6".into(),
            nonce: nonce(3),
            on_board: false,
        },
        at(3730),
    );
    assert!(matches!(late, Err(Rejection::NotInThisStage { .. })));
}

#[test]
fn rule_i_1_1_move_played_after_the_order_is_the_sealed_move() {
    let mut d = Driver::to_the_session_end(None);
    let fen_before = d.game.view(at(3650)).fen.clone();
    // The board reports the move: it is not played, it is the sealed move.
    let r = d.try_input(Input::Move { mv: "Nc6".into() }, at(3650));
    assert_eq!(
        r,
        Err(Rejection::MoveIsTheSealedMove {
            side: Color::Black,
            mv: "Nc6".into()
        })
    );
    // The shell seals it (with a nonce), marked as made on the board.
    d.input(
        Input::Seal {
            side: Some(Color::Black),
            mv: "Nc6".into(),
            nonce: nonce(9),
            on_board: true,
        },
        at(3650),
    );
    assert_eq!(
        d.game.view(at(3650)).fen,
        fen_before,
        "the board position stays"
    );
    // It cannot be replaced by another written move.
    let r = d.try_input(
        Input::Seal {
            side: None,
            mv: "Nf6".into(),
            nonce: nonce(10),
            on_board: false,
        },
        at(3660),
    );
    assert_eq!(r, Err(Rejection::SealIsFinal));
    // A press with a move is the same thing; the press then stops the clock.
    let r = d.try_input(
        Input::Press {
            side: None,
            mv: Some("Nc6".into()),
        },
        at(3670),
    );
    assert!(matches!(r, Err(Rejection::MoveIsTheSealedMove { .. })));
    d.commit(at(3680));
    assert_eq!(d.stage(at(3680)), Some(Stage::Adjourned));
}

#[test]
fn rule_i_1_1_stopping_the_clock_without_a_sealed_move_is_refused() {
    let mut d = Driver::to_the_session_end(None);
    let press = Input::Press {
        side: None,
        mv: None,
    };
    assert_eq!(
        d.try_input(press.clone(), at(3650)),
        Err(Rejection::SealFirst { side: Color::Black })
    );
    d.seal("Nc6", 7, at(3700));
    // With a sealed move, the sealer's press is the stop that commits it.
    let ev = d.input(press, at(3710));
    assert!(matches!(ev[0], Event::SealCommitted { .. }));
}

#[test]
fn rule_i_1_1_a_move_made_and_not_pressed_is_completed_before_the_opponent_seals() {
    let mut d = Driver::new(setup(None));
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.input(Input::Move { mv: "e4".into() }, at(10));
    let ev = d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: None,
        },
        at(20),
    );
    assert!(matches!(
        ev[0],
        Event::AdjournmentOrdered {
            sealer: Color::Black,
            ..
        }
    ));
    // White completes the move; Black's clock starts and runs until Black's commit.
    d.input(
        Input::Press {
            side: None,
            mv: None,
        },
        at(25),
    );
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    d.seal("e5", 1, at(40));
    d.commit(at(45));
    assert_eq!(d.remaining(Color::Black, at(45)), s(7200 - 20));
}

#[test]
fn rule_i_1_2_early_adjournment_is_charged_to_the_nominal_session_end() {
    let mut d = Driver::new(setup(None));
    d.input(
        Input::SetSessionEnd {
            end: Some(at(3600)),
            arbiter: "schedule".into(),
        },
        at(-60),
    );
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    let ev = d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: None,
        },
        at(1000),
    );
    assert!(matches!(
        ev[0],
        Event::AdjournmentOrdered { early: true, .. }
    ));
    d.seal("e5", 1, at(1100));
    let ev = d.commit(at(1200));
    let Event::SealCommitted {
        charged_to,
        charged_ms,
        remaining_ms,
        ..
    } = &ev[0]
    else {
        panic!()
    };
    assert_eq!(*charged_to, at(3600), "deemed sealed at the nominal end");
    assert_eq!(*charged_ms, s(3600 - 10));
    assert_eq!(*remaining_ms, s(7200 - 3590));
    let envelope = &d.game.view(at(1200)).adjournment.unwrap().envelopes[0];
    assert_eq!(envelope.black_time.remaining_ms, s(7200 - 3590));
    assert_eq!(envelope.black_time.used_ms, s(3590));
}

#[test]
fn rule_a1a_after_the_commit_both_clocks_stand_still() {
    let mut d = Driver::adjourned();
    let view = d.game.view(at(3720));
    assert_eq!(view.running, None);
    assert_eq!(view.phase, Phase::Paused(PausedBy::Adjourned));
    let (w, b) = (
        d.remaining(Color::White, at(3720)),
        d.remaining(Color::Black, at(3720)),
    );
    // Hours later, nothing ran, no timer but the resumption.
    assert_eq!(d.game.next_deadline(), Some(R0));
    assert!(d.advance(R0 - Millis(1)).is_empty());
    assert_eq!(d.remaining(Color::White, R0 - Millis(1)), w);
    assert_eq!(d.remaining(Color::Black, R0 - Millis(1)), b);
    // Presses, moves, pauses and resumes are refused while adjourned.
    for input in [
        Input::Press {
            side: None,
            mv: None,
        },
        Input::Move { mv: "Bb5".into() },
        Input::Resume {
            arbiter: "IA".into(),
        },
    ] {
        assert_eq!(
            d.try_input(input, at(4000)),
            Err(Rejection::Adjourned { resumes: Some(R0) })
        );
    }
}

// --- I.2 / A2f / I.3: the envelope ----------------------------------------------------------

#[test]
fn rule_i_2_envelope_records_names_position_times_sealer_move_number_offer_and_resumption() {
    let mut d = Driver::to_the_session_end(None);
    // A2f: an offer made before the adjournment, still standing, goes on the envelope.
    d.input(
        Input::DrawOffer {
            side: Color::White,
            arbiter: "IA".into(),
        },
        at(3605),
    );
    d.seal("Nc6", 7, at(3700));
    d.commit(at(3720));
    d.schedule(at(3800));
    let e = d.game.view(at(3800)).adjournment.unwrap().envelopes[0].clone();
    assert_eq!(
        (e.white.as_str(), e.black.as_str()),
        ("Arias, Eva", "Brandt, Ole")
    );
    assert_eq!(
        e.fen.as_deref(),
        Some("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    );
    assert_eq!(e.white_time.used_ms, s(40));
    assert_eq!(e.white_time.remaining_ms, s(7160));
    assert_eq!(e.black_time.used_ms, s(3680));
    assert_eq!(e.black_time.remaining_ms, s(3520));
    assert_eq!(
        (e.sealer, e.sealer_name.as_str()),
        (Color::Black, "Brandt, Ole")
    );
    assert_eq!(e.move_number, 2);
    assert_eq!(e.draw_offer.map(|o| o.side), Some(Color::White));
    let r = e.resumption.unwrap();
    assert_eq!(
        (r.start, r.end, r.place.as_str()),
        (R0, Some(rat(14_400)), "Hall B")
    );
    assert_eq!(e.commitment, commitment(&nonce(7), "Nc6").unwrap());
    assert_eq!(e.status, EnvelopeStatus::Sealed);
}

#[test]
fn rule_a2f_the_offer_on_the_envelope_is_the_one_made_before_the_adjournment() {
    let mut d = Driver::adjourned();
    // Made after the commit: recorded and standing (I.4), not written on the envelope.
    d.input(
        Input::DrawOffer {
            side: Color::White,
            arbiter: "IA".into(),
        },
        at(4000),
    );
    let view = d.game.view(at(4000));
    assert_eq!(view.adjournment.unwrap().envelopes[0].draw_offer, None);
    assert_eq!(view.draw_offer.map(|o| o.side), Some(Color::White));
}

#[test]
fn rule_i_3_arbiter_verifies_the_envelope() {
    let mut d = Driver::adjourned();
    d.input(
        Input::VerifyEnvelope {
            arbiter: "IA-2".into(),
        },
        at(3900),
    );
    let e = &d.game.view(at(3900)).adjournment.unwrap().envelopes[0];
    let v = e.verified.clone().unwrap();
    assert_eq!((v.at, v.arbiter.as_str()), (at(3900), "IA-2"));
}

/// Custody: across a whole flow, no event and no view carries the sealed move (or the
/// counter-sealed reply) before its opening; after it, the commitment verifies.
#[test]
fn rule_i_3_sealed_move_never_leaks_into_events_or_views() {
    // Unusual texts, so that a leak cannot hide behind an ordinary word.
    let sealed = "Nb8-c6";
    let reply = "Bf1-b5";
    let mut d = Driver::to_the_session_end(None);
    d.seal("Ng8-h6", 3, at(3650));
    d.seal(sealed, 7, at(3700));
    d.commit(at(3720));
    d.schedule(at(3800));
    d.input(
        Input::VerifyEnvelope {
            arbiter: "IA".into(),
        },
        at(3900),
    );
    d.present(Color::White, rat(-60));
    d.advance(R0);
    let before_opening = (d.events.len(), d.views.len());
    d.open(sealed, 7, rat(30)).unwrap();
    d.input(
        Input::CounterSeal {
            mv: reply.into(),
            nonce: nonce(11),
        },
        rat(60),
    );
    let before_counter_opening = (d.events.len(), d.views.len());
    d.present(Color::Black, rat(600));
    d.open(reply, 11, rat(610)).unwrap();

    let texts = |upto: (usize, usize)| -> Vec<String> {
        d.events[..upto.0]
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .chain(d.views[..upto.1].iter().cloned())
            .collect()
    };
    for t in texts(before_opening) {
        for secret in [sealed, reply, "Ng8-h6", &nonce(7), &nonce(3)] {
            assert!(!t.contains(secret), "{secret} leaked: {t}");
        }
    }
    for t in texts(before_counter_opening) {
        assert!(!t.contains(reply) && !t.contains(&nonce(11)), "{t}");
    }
    // After the opening, anyone can check the commitment from the published opening.
    let opened: Vec<_> = named(&d.events, "envelope_opened");
    assert_eq!(opened.len(), 2);
    let view = d.game.view(rat(610)).adjournment.unwrap();
    for e in &view.envelopes {
        let o = e.opened.as_ref().unwrap();
        assert_eq!(commitment(&o.nonce, &o.move_text).unwrap(), e.commitment);
    }
}

// --- I.4 / I.6: draw offers and the end before resumption -----------------------------------

#[test]
fn rule_i_4_draw_offer_after_the_seal_stands_until_answered() {
    let mut d = Driver::adjourned();
    d.input(
        Input::DrawOffer {
            side: Color::White,
            arbiter: "IA".into(),
        },
        at(4000),
    );
    d.present(Color::White, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(30)).unwrap();
    // The sealed move is Black's, and does not decline the offer.
    assert_eq!(
        d.game.view(rat(30)).draw_offer.map(|o| o.side),
        Some(Color::White)
    );
    let ev = d.input(
        Input::DrawReply {
            accept: false,
            arbiter: "IA".into(),
        },
        rat(40),
    );
    assert!(matches!(
        ev[0],
        Event::DrawOfferAnswered {
            side: Color::Black,
            accepted: false,
            ..
        }
    ));
    assert_eq!(d.game.view(rat(40)).draw_offer, None);
    assert_eq!(
        d.try_input(
            Input::DrawReply {
                accept: true,
                arbiter: "IA".into()
            },
            rat(50)
        ),
        Err(Rejection::NoDrawOffer)
    );
}

#[test]
fn rule_i_6_agreed_draw_before_resumption_archives_the_envelope_unopened() {
    let mut d = Driver::adjourned();
    d.input(
        Input::DrawOffer {
            side: Color::Black,
            arbiter: "IA".into(),
        },
        at(5000),
    );
    d.input(
        Input::DrawReply {
            accept: true,
            arbiter: "IA".into(),
        },
        at(6000),
    );
    assert_eq!(d.result().map(|r| r.0), Some(Score::Draw));
    let e = &d.game.view(at(6000)).adjournment.unwrap().envelopes[0];
    assert_eq!(e.status, EnvelopeStatus::ArchivedUnopened);
    assert!(e.opened.is_none());
    assert_eq!(d.game.next_deadline(), None, "no resumption any more");
}

#[test]
fn rule_i_6_resignation_before_resumption_ends_the_game() {
    let mut d = Driver::adjourned();
    d.input(
        Input::SetResult {
            result: ArbiterResult::Resignation { side: Color::White },
            arbiter: "IA".into(),
            reason: "White resigned by telephone".into(),
        },
        at(7000),
    );
    assert_eq!(d.result().map(|r| r.0), Some(Score::BlackWins));
    let e = &d.game.view(at(7000)).adjournment.unwrap().envelopes[0];
    assert_eq!(e.status, EnvelopeStatus::ArchivedUnopened);
    assert_eq!(
        d.open("Nc6", 7, at(7100)).map(|_| ()),
        Err(Rejection::GameOver {
            result: "0-1, arbiter: White resigned by telephone".into()
        })
    );
}

// --- I.5, I.7, I.9: resumption --------------------------------------------------------------

#[test]
fn rule_i_5_resumption_restores_the_position_and_the_times() {
    let mut d = Driver::adjourned();
    let ev = d.advance(R0);
    let Event::ResumptionStarted {
        white_ms,
        black_ms,
        fen,
        responder,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!((*white_ms, *black_ms), (s(7160), s(3520)));
    assert_eq!(*responder, Color::White);
    assert_eq!(
        fen.as_deref(),
        Some("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    );
    assert_eq!(d.game.view(R0).fen, *fen);
}

#[test]
fn rule_i_7_envelope_opens_only_with_the_responder_present() {
    let mut d = Driver::adjourned();
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    assert_eq!(
        d.open("Nc6", 7, rat(10)),
        Err(Rejection::ResponderAbsent { side: Color::White })
    );
    // Not before the resumption either.
    let mut early = Driver::adjourned();
    early.present(Color::White, at(5000));
    assert!(matches!(
        early.open("Nc6", 7, at(5000)),
        Err(Rejection::NotInThisStage { .. })
    ));
}

#[test]
fn rule_i_7_a_wrong_move_or_nonce_does_not_open_the_envelope() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    assert_eq!(
        d.open("Nf6", 7, rat(10)),
        Err(Rejection::CommitmentMismatch { envelope: 1 })
    );
    assert_eq!(
        d.open("Nc6", 8, rat(10)),
        Err(Rejection::CommitmentMismatch { envelope: 1 })
    );
    assert!(matches!(
        d.try_input(
            Input::OpenEnvelope {
                mv: "Nc6".into(),
                nonce: "not hex".into(),
                arbiter: "IA".into()
            },
            rat(10)
        ),
        Err(Rejection::BadNonce { .. })
    ));
    assert_eq!(d.stage(rat(10)), Some(Stage::AwaitingOpening));
    d.open("Nc6", 7, rat(20)).unwrap();
}

#[test]
fn rule_i_9_1_responder_present_open_play_the_sealed_move_start_the_clock() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    // Present at the start: the clock waits for the opening.
    assert_eq!(d.game.clock().running(), None);
    let ev = d.open("Nc6", 7, rat(30)).unwrap();
    assert!(
        matches!(&ev[1], Event::SealedMovePlayed { side: Color::Black, san, envelope: Some(1), .. } if san == "Nc6")
    );
    assert_eq!(d.game.clock().running(), Some(Color::White));
    assert_eq!(d.remaining(Color::White, rat(90)), s(7160 - 60));
    // Play goes on normally.
    d.play("Bb5", rat(90));
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    assert_eq!(d.stage(rat(90)), Some(Stage::Resumed));
}

#[test]
fn rule_i_9_2_responder_absent_clock_runs_and_stops_on_arrival() {
    let mut d = Driver::adjourned();
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    assert_eq!(d.game.clock().running(), Some(Color::White));
    d.present(Color::White, rat(600));
    // Arrived: the clock stops for the opening, 10 minutes charged.
    assert_eq!(d.game.clock().running(), None);
    assert_eq!(d.remaining(Color::White, rat(700)), s(7160 - 600));
    d.open("Nc6", 7, rat(700)).unwrap();
    assert_eq!(d.game.clock().running(), Some(Color::White));
    assert_eq!(d.remaining(Color::White, rat(760)), s(7160 - 660));
}

#[test]
fn rule_i_9_2_the_arriving_responder_may_stop_the_clock_with_the_lever() {
    let mut d = Driver::adjourned();
    d.advance(R0);
    let press = Input::Press {
        side: None,
        mv: None,
    };
    let ev = d.input(press.clone(), rat(300));
    assert!(matches!(
        ev[0],
        Event::PlayerPresent {
            side: Color::White,
            ..
        }
    ));
    assert_eq!(d.game.clock().running(), None);
    assert_eq!(d.remaining(Color::White, rat(400)), s(7160 - 300));
    // A second press does not complete any move: the envelope is not open.
    assert_eq!(
        d.try_input(press, rat(310)),
        Err(Rejection::EnvelopeNotOpened)
    );
}

#[test]
fn rule_i_9_3_counter_seal() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(30)).unwrap();
    // Black (the sealer) is absent: White seals the reply instead of playing it.
    let ev = d.input(
        Input::CounterSeal {
            mv: "Bb5".into(),
            nonce: nonce(21),
        },
        rat(90),
    );
    let Event::CounterSealed {
        side,
        charged_ms,
        envelope,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!((*side, *charged_ms), (Color::White, s(60)));
    assert!(envelope.counter_seal);
    assert_eq!(envelope.number, 2);
    assert_eq!(
        d.game.clock().running(),
        Some(Color::Black),
        "the absent sealer's clock runs"
    );
    assert_eq!(d.stage(rat(90)), Some(Stage::AwaitingCounterOpening));
    // The reply is not on the board, and Black cannot move before it is opened.
    assert_eq!(
        d.try_input(Input::Move { mv: "a6".into() }, rat(100)),
        Err(Rejection::EnvelopeNotOpened)
    );
    // It opens on Black's arrival.
    assert_eq!(
        d.open("Bb5", 21, rat(200)),
        Err(Rejection::ResponderAbsent { side: Color::Black })
    );
    d.present(Color::Black, rat(1290));
    let ev = d.open("Bb5", 21, rat(1300)).unwrap();
    assert!(matches!(
        &ev[1],
        Event::SealedMovePlayed {
            side: Color::White,
            envelope: Some(2),
            ..
        }
    ));
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    // Black's clock ran from the counter-seal to the arrival, and runs again now.
    assert_eq!(d.remaining(Color::Black, rat(1300)), s(3520 - 1200));
    d.play("a6", rat(1310));
    // A counter-seal needs the sealer absent.
    let mut present = Driver::adjourned();
    present.present(Color::White, rat(-60));
    present.present(Color::Black, rat(-60));
    present.advance(R0);
    present.open("Nc6", 7, rat(30)).unwrap();
    assert!(matches!(
        present.try_input(
            Input::CounterSeal {
                mv: "Bb5".into(),
                nonce: nonce(21)
            },
            rat(60)
        ),
        Err(Rejection::NotInThisStage { .. })
    ));
}

// --- I.8 / A8: validity of the sealed move -----------------------------------------------------

/// Seals `text` in `fen` (Black to move), resumes with White present and opens it.
fn open_sealed(fen: &str, text: &str, lang: NotationLanguage) -> Driver {
    let mut d = Driver::new(setup(Some(fen)));
    d.input(
        Input::SetAdjournmentRules {
            rules: AdjournmentRules {
                notation_language: lang,
                ..AdjournmentRules::default()
            },
            arbiter: "IA".into(),
        },
        at(-100),
    );
    seal_and_open(d, text)
}

/// As [`open_sealed`], with the letters the event's (`Setup::piece_letters`, from
/// `[defaults] piece_letters` or the round's) and no act of the arbiter.
fn open_sealed_in_event(fen: &str, text: &str, lang: NotationLanguage) -> Driver {
    let mut s = setup(Some(fen));
    s.piece_letters = lang;
    seal_and_open(Driver::new(s), text)
}

fn seal_and_open(mut d: Driver, text: &str) -> Driver {
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.advance(at(0));
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: Some(Resumption {
                start: R0,
                end: None,
                place: "Hall B".into(),
            }),
        },
        at(100),
    );
    d.seal(text, 5, at(200));
    d.commit(at(210));
    d.present(Color::White, rat(-10));
    d.advance(R0);
    d.open(text, 5, rat(10)).unwrap();
    d
}

/// Black to move with two knights able to go to d7.
const TWO_KNIGHTS: &str = "4k3/8/8/1n3n2/8/8/4P3/R3K3 b - - 0 40";

#[test]
fn rule_i_8_1_ambiguous_sealed_move_loses() {
    let d = open_sealed(TWO_KNIGHTS, "Nd6", NotationLanguage::En);
    let (score, termination) = d.result().unwrap();
    assert_eq!(score, Score::WhiteWins);
    assert!(matches!(
        termination,
        Termination::InvalidSealedMove {
            side: Color::Black,
            verdict: SealedVerdict::Ambiguous { .. }
        }
    ));
    // Disambiguated, it is played.
    let d = open_sealed(TWO_KNIGHTS, "Nbd6", NotationLanguage::En);
    assert_eq!(d.result(), None);
}

#[test]
fn rule_i_8_2_meaningless_sealed_move_loses() {
    let d = open_sealed(TWO_KNIGHTS, "knight forward", NotationLanguage::En);
    assert!(matches!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::InvalidSealedMove {
                verdict: SealedVerdict::Meaningless { .. },
                ..
            }
        ))
    ));
}

#[test]
fn rule_i_8_3_illegal_sealed_move_loses() {
    let d = open_sealed(TWO_KNIGHTS, "Nd2", NotationLanguage::En);
    assert!(matches!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::InvalidSealedMove {
                verdict: SealedVerdict::Illegal { .. },
                ..
            }
        ))
    ));
}

#[test]
fn rule_i_8_invalid_sealed_move_is_a_draw_when_the_opponent_cannot_mate() {
    // White has a lone king: whatever Black sealed, White cannot mate (6.9 exception).
    let d = open_sealed(
        "4k3/8/8/8/8/8/4p3/4K3 b - - 0 60",
        "Qe2",
        NotationLanguage::En,
    );
    assert!(matches!(
        d.result(),
        Some((
            Score::Draw,
            Termination::InvalidSealedMoveOpponentCannotMate {
                side: Color::Black,
                ..
            }
        ))
    ));
}

#[test]
fn rule_i_8_in_a_spanish_event_re7_is_the_kings_move_without_any_act_of_the_arbiter() {
    let d = open_sealed_in_event(TWO_KNIGHTS, "Re7", NotationLanguage::Es);
    assert_eq!(d.result(), None, "R is the rey");
    assert_eq!(
        d.game.view(rat(10)).fen.as_deref(),
        Some("8/4k3/8/1n3n2/8/8/4P3/R3K3 w - - 1 41")
    );
    assert_eq!(d.game.view(rat(10)).piece_letters, NotationLanguage::Es);
    // The same text in an English event is a rook's move Black has no rook for.
    let d = open_sealed_in_event(TWO_KNIGHTS, "Re7", NotationLanguage::En);
    assert!(matches!(
        d.result(),
        Some((_, Termination::InvalidSealedMove { .. }))
    ));
}

#[test]
fn rule_a8_spanish_piece_letters_and_long_notation() {
    let d = open_sealed(TWO_KNIGHTS, "Cbd6", NotationLanguage::Es);
    assert_eq!(d.result(), None);
    assert_eq!(
        d.game.view(rat(10)).fen.as_deref(),
        Some("4k3/8/3n4/5n2/8/8/4P3/R3K3 w - - 1 41")
    );
    let d = open_sealed(TWO_KNIGHTS, "Cb5-d6", NotationLanguage::Es);
    assert_eq!(d.result(), None);
    // English letters under Spanish rules: N is no piece there.
    let d = open_sealed(TWO_KNIGHTS, "Nbd6", NotationLanguage::Es);
    assert!(matches!(
        d.result(),
        Some((_, Termination::InvalidSealedMove { .. }))
    ));
}

#[test]
fn rule_i_8_the_sealed_move_own_result_prevails() {
    // Black mates with the sealed move: the game ends at the opening (Article 5).
    let d = open_sealed(
        "r5k1/8/8/8/8/8/1r6/4K3 b - - 0 50",
        "Ra8-a1",
        NotationLanguage::En,
    );
    assert_eq!(d.result(), Some((Score::BlackWins, Termination::Checkmate)));
}

// --- I.10 / A10 / I.11: default time at resumption -------------------------------------------

#[test]
fn rule_i_10_late_sealer_loses_at_default_time() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(30)).unwrap();
    d.play("Bb5", rat(90));
    // The event's default time (60 min) counts from the resumption.
    // I.10: "after" the default time: at the default instant itself the player is in time.
    assert!(d.advance(rat(3600)).is_empty());
    d.advance(rat(3600) + Millis(1));
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
fn rule_i_10_late_responder_loses_unless_the_sealed_move_ended_the_game() {
    // Black's sealed move mates; White never comes.
    let mate = "r5k1/8/8/8/8/8/1r6/4K3 b - - 0 50";
    let mut d = Driver::new(setup(Some(mate)));
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.advance(at(0));
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: Some(Resumption {
                start: R0,
                end: None,
                place: "Hall B".into(),
            }),
        },
        at(100),
    );
    d.seal("Ra1", 5, at(200));
    d.commit(at(210));
    d.present(Color::Black, rat(-10));
    let ev = d.advance(rat(3600) + Millis(1));
    assert!(
        matches!(
            ev.last(),
            Some(Event::ResultAwaitsEnvelope { envelope: 1, .. })
        ),
        "{ev:?}"
    );
    assert_eq!(d.result(), None, "the sealed move may have ended the game");
    // Opened without the (defaulted) responder: the mate prevails.
    d.open("Ra1", 5, rat(3700)).unwrap();
    assert_eq!(d.result(), Some((Score::BlackWins, Termination::Checkmate)));

    // The same with an ordinary sealed move: the default applies.
    let mut d = Driver::adjourned();
    d.present(Color::Black, rat(-10));
    d.advance(rat(3600));
    assert_eq!(d.result(), None);
    d.open("Nc6", 7, rat(3700)).unwrap();
    assert_eq!(
        d.result().map(|r| r.0),
        Some(Score::BlackWins),
        "White defaulted"
    );
}

#[test]
fn rule_i_10_an_invalid_sealed_move_opened_after_default_time_loses_for_the_sealer() {
    // White (the responder) never comes; Black's sealed move turns out illegal. The sealed
    // move's own result (I.8) is what prevails over the default (I.10).
    let mut d = Driver::to_the_session_end(None);
    d.seal("Nf5", 7, at(3700));
    d.commit(at(3720));
    d.schedule(at(3800));
    d.present(Color::Black, rat(-10));
    d.advance(rat(3600));
    assert_eq!(d.result(), None);
    d.open("Nf5", 7, rat(3700)).unwrap();
    assert!(matches!(
        d.result(),
        Some((
            Score::WhiteWins,
            Termination::InvalidSealedMove {
                side: Color::Black,
                verdict: SealedVerdict::Illegal { .. }
            }
        ))
    ));
}

#[test]
fn adjournment_rules_and_session_end_are_fixed_while_it_matters() {
    let mut d = Driver::to_the_session_end(None);
    assert!(matches!(
        d.try_input(
            Input::SetSessionEnd {
                end: Some(at(7200)),
                arbiter: "IA".into()
            },
            at(3650)
        ),
        Err(Rejection::NotInThisStage { .. })
    ));
    assert!(matches!(
        d.try_input(
            Input::SetAdjournmentRules {
                rules: AdjournmentRules::default(),
                arbiter: "IA".into()
            },
            at(3650)
        ),
        Err(Rejection::NotInThisStage { .. })
    ));
    // The board-move rejection never carries the move when serialised.
    let r = d.try_input(Input::Move { mv: "Nc6".into() }, at(3660));
    let json = serde_json::to_string(&r.unwrap_err()).unwrap();
    assert!(!json.contains("Nc6"), "{json}");
}

#[test]
fn rule_a10_one_hour_default_with_exceptions() {
    let a10 = |d: &mut Driver| {
        d.input(
            Input::SetAdjournmentRules {
                rules: AdjournmentRules {
                    edition: Edition::AppendixA,
                    ..AdjournmentRules::default()
                },
                arbiter: "IA".into(),
            },
            at(-90),
        );
    };
    // The late player is the responder: no exception, no opening needed.
    let mut d = Driver::new(setup(None));
    a10(&mut d);
    let mut d = Driver::adjourned_from(d);
    d.present(Color::Black, rat(-10));
    d.advance(R0);
    // I.10: "after" the default time: at the default instant itself the player is in time.
    assert!(d.advance(rat(3600)).is_empty());
    d.advance(rat(3600) + Millis(1));
    assert_eq!(
        d.result(),
        Some((
            Score::BlackWins,
            Termination::Default {
                absent: vec![Color::White]
            }
        ))
    );

    // The late player is the sealer and the sealed move mates: A10a, the sealer wins.
    let mate = "r5k1/8/8/8/8/8/1r6/4K3 b - - 0 50";
    let mut d = Driver::new(setup(Some(mate)));
    a10(&mut d);
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.advance(at(0));
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: Some(Resumption {
                start: R0,
                end: None,
                place: "Hall B".into(),
            }),
        },
        at(100),
    );
    d.seal("Ra1", 5, at(200));
    d.commit(at(210));
    d.present(Color::White, rat(-10));
    // The responder is present but the arbiter has not opened yet; the sealer is late.
    let ev = d.advance(rat(3600) + Millis(1));
    assert!(matches!(
        ev.last(),
        Some(Event::ResultAwaitsEnvelope { .. })
    ));
    d.open("Ra1", 5, rat(3610)).unwrap();
    assert_eq!(d.result(), Some((Score::BlackWins, Termination::Checkmate)));
}

#[test]
fn rule_a10_resumption_default_is_one_hour_whatever_the_event_default() {
    let mut s = setup(None);
    s.default_time = Millis::from_mins(15);
    let mut d = Driver::new(s);
    d.input(
        Input::SetAdjournmentRules {
            rules: AdjournmentRules {
                edition: Edition::AppendixA,
                ..AdjournmentRules::default()
            },
            arbiter: "IA".into(),
        },
        at(-90),
    );
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: Some(Resumption {
                start: R0,
                end: None,
                place: "Hall B".into(),
            }),
        },
        at(100),
    );
    d.seal("e5", 5, at(200));
    d.commit(at(210));
    d.present(Color::Black, rat(-10));
    d.advance(rat(900));
    assert_eq!(d.result(), None, "15 min is the event's default, not A10's");
    d.advance(rat(3600) + Millis(1));
    assert_eq!(d.result().map(|r| r.0), Some(Score::BlackWins));
}

#[test]
fn rule_i_11_neither_present_the_responder_loses_the_time_until_arrival() {
    let mut d = Driver::adjourned();
    d.advance(R0);
    assert_eq!(d.game.clock().running(), Some(Color::White));
    d.present(Color::White, rat(1200));
    d.present(Color::Black, rat(1300));
    d.open("Nc6", 7, rat(1300)).unwrap();
    assert_eq!(d.remaining(Color::White, rat(1300)), s(7160 - 1200));
}

// --- I.12, I.13, I.14 ---------------------------------------------------------------------------

#[test]
fn rule_i_12_1_envelope_lost_the_sealer_states_the_move() {
    let mut d = Driver::adjourned();
    d.input(
        Input::EnvelopeLost {
            arbiter: "IA".into(),
            reason: "not in the safe".into(),
        },
        at(9000),
    );
    d.present(Color::White, rat(-60));
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    // No envelope to open; the sealer makes the move they state they sealed.
    assert!(d.open("Nc6", 7, rat(10)).is_err());
    let ev = d.input(Input::Move { mv: "Nc6".into() }, rat(20));
    assert!(matches!(
        &ev[0],
        Event::SealedMovePlayed {
            side: Color::Black,
            envelope: None,
            ..
        }
    ));
    assert_eq!(d.game.clock().running(), Some(Color::White));
    let e = &d.game.view(rat(20)).adjournment.unwrap().envelopes[0];
    assert_eq!(e.status, EnvelopeStatus::Lost);
}

#[test]
fn rule_i_12_1_times_not_re_established_are_set_by_the_arbiter() {
    let mut d = Driver::adjourned();
    d.input(
        Input::SetTime {
            side: Color::Black,
            remaining: s(3000),
            arbiter: "IA".into(),
            reason: "I.12.1: times lost with the envelope".into(),
        },
        at(9000),
    );
    assert_eq!(d.remaining(Color::Black, at(9000)), s(3000));
    assert_eq!(d.game.clock().running(), None, "still adjourned");
}

#[test]
fn rule_i_12_2_position_not_re_established_the_game_is_annulled() {
    let mut d = Driver::adjourned();
    d.input(
        Input::SetResult {
            result: ArbiterResult::Annulled,
            arbiter: "IA".into(),
            reason: "I.12.2: position cannot be re-established".into(),
        },
        at(9000),
    );
    assert_eq!(d.result().map(|r| r.0), Some(Score::Annulled));
}

#[test]
fn rule_i_13_time_corrected_before_the_first_move_only() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    let correct = |remaining| Input::CorrectTime {
        side: Color::Black,
        remaining,
        arbiter: "IA".into(),
        reason: "scoresheet shows 58:40 left".into(),
    };
    d.input(correct(s(3520)), rat(5));
    d.open("Nc6", 7, rat(10)).unwrap();
    let ev = d.input(correct(s(3520)), rat(20));
    assert!(matches!(ev[0], Event::TimeCorrected { previous_ms, .. } if previous_ms == s(3520)));
    d.play("Bb5", rat(30));
    assert_eq!(
        d.try_input(correct(s(3600)), rat(40)),
        Err(Rejection::CorrectionWindowClosed)
    );
}

#[test]
fn rule_a12_afterwards_only_as_an_arbiter_adjustment() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(10)).unwrap();
    d.play("Bb5", rat(30));
    // A12: "unless the consequences are too severe": the arbiter's 6.13 adjustment.
    d.input(
        Input::AddTime {
            side: Color::Black,
            delta: s(600),
            arbiter: "IA".into(),
            reason: "A12: wrong time at resumption, consequences too severe".into(),
        },
        rat(40),
    );
    assert_eq!(d.remaining(Color::Black, rat(40)), s(3520 - 10 + 600));
}

#[test]
fn rule_i_14_resumption_session_has_a_start_and_an_end() {
    let mut d = Driver::adjourned();
    // A shorter session than the default schedule's, announced in advance.
    d.resumption_ending(rat(1800));
    assert_eq!(d.game.next_deadline(), Some(R0), "timer ResumptionStart");
    d.advance(R0);
    d.open("Nc6", 7, rat(10)).unwrap();
    assert_eq!(d.game.view(rat(10)).session_end, Some(rat(1800)));
    d.play("Bb5", rat(30));
    // A13: the announced end adjourns the game again.
    assert!(d.advance(rat(1800) - Millis(1)).is_empty());
    let ev = d.advance(rat(1800));
    assert!(matches!(
        ev[0],
        Event::AdjournmentOrdered {
            sealer: Color::Black,
            arbiter: None,
            ..
        }
    ));
}

#[test]
fn rule_a13_start_and_end_are_announced_on_the_envelope() {
    let d = Driver::adjourned();
    let v = d.game.view(at(3800)).adjournment.unwrap();
    let r = v.resumption.unwrap();
    assert_eq!((r.start, r.end), (R0, Some(rat(14_400))));
    assert_eq!(
        v.envelopes[0].resumption.as_ref().map(|r| r.end),
        Some(Some(rat(14_400)))
    );
}

#[test]
fn replay_of_a_whole_adjournment_is_exact() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(30)).unwrap();
    d.input(
        Input::CounterSeal {
            mv: "Bb5".into(),
            nonce: nonce(21),
        },
        rat(90),
    );
    d.present(Color::Black, rat(500));
    d.open("Bb5", 21, rat(510)).unwrap();
    let mut replayed = Game::new(setup(None)).unwrap();
    for e in &d.events {
        replayed.evolve(e);
    }
    assert_eq!(replayed, d.game);
    for e in &d.events {
        let json = serde_json::to_string(e).unwrap();
        assert_eq!(&serde_json::from_str::<Event>(&json).unwrap(), e, "{json}");
    }
}

// --- Edges the mutation run found untested (docs/RULES-COVERAGE.md, "Mutation testing") ---

#[test]
fn rule_i_1_1_only_a_game_in_play_is_adjourned() {
    let adjourn = Input::Adjourn {
        arbiter: "IA".into(),
        resumption: None,
    };
    let mut d = Driver::new(setup(None));
    assert_eq!(
        d.try_input(adjourn.clone(), at(-10)),
        Err(Rejection::NotStarted { start: T0 })
    );
    assert_eq!(d.stage(at(-10)), None);
    // Adjourned already: the refusal says when the game resumes.
    let mut d = Driver::adjourned();
    assert_eq!(
        d.try_input(adjourn, at(4000)),
        Err(Rejection::Adjourned { resumes: Some(R0) })
    );
}

#[test]
fn rule_i_1_1_only_the_sealers_press_commits_the_sealed_move() {
    let mut d = Driver::to_the_session_end(None);
    d.seal("Nc6", 7, at(3700));
    let press = |side| Input::Press {
        side: Some(side),
        mv: None,
    };
    assert_eq!(
        d.try_input(press(Color::White), at(3710)),
        Err(Rejection::NotYourTurn {
            side: Color::White,
            running: Color::Black
        })
    );
    assert_eq!(d.stage(at(3710)), Some(Stage::Sealing));
    let ev = d.input(press(Color::Black), at(3720));
    assert!(
        matches!(
            ev[0],
            Event::SealCommitted {
                side: Color::Black,
                ..
            }
        ),
        "{ev:?}"
    );
    assert_eq!(d.stage(at(3720)), Some(Stage::Adjourned));
}

#[test]
fn rule_i_2_without_a_known_position_the_move_number_is_the_clocks() {
    let mut d = Driver::new(setup(None));
    d.input(
        Input::SetSessionEnd {
            end: Some(at(3600)),
            arbiter: "schedule".into(),
        },
        at(-60),
    );
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    // A clock without an e-board: the presses carry no moves.
    for t in [10, 30, 60] {
        d.input(
            Input::Press {
                side: None,
                mv: None,
            },
            at(t),
        );
    }
    d.advance(at(3600));
    d.seal("Nc6", 7, at(3700));
    d.commit(at(3720));
    let e = d.game.view(at(3720)).adjournment.unwrap().envelopes[0].clone();
    assert_eq!(e.fen, None);
    assert_eq!(e.sealer, Color::Black);
    assert_eq!(e.move_number, 2, "Black has completed one move");
}

/// The sealed move (Black's 2nd) completes Black's period of `quota` moves, or the
/// counter-sealed reply (White's 3rd) White's.
fn adjourned_with_quota(quota: u32) -> Driver {
    let mut st = setup(None);
    st.tc = parse(&format!("{quota}/7200:3600")).unwrap();
    Driver::adjourned_from(Driver::new(st))
}

#[test]
fn rule_i_2_a_sealed_move_that_completes_the_period_records_the_time_it_adds() {
    let mut d = adjourned_with_quota(2);
    let e = d.game.view(at(3800)).adjournment.unwrap().envelopes[0].clone();
    // 7200 - 20 - 3660 left after the seal, and the next period's hour (6.2b).
    assert_eq!(e.black_time.remaining_ms, s(3520 + 3600));
    // I.5: the times on the envelope are the ones the resumption restores.
    let ev = d.advance(R0);
    let Event::ResumptionStarted { black_ms, .. } = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(*black_ms, e.black_time.remaining_ms);
}

#[test]
fn rule_i_9_3_the_counter_seal_envelope_records_the_times_at_the_counter_seal() {
    let counter_sealed = |quota| {
        let mut d = adjourned_with_quota(quota);
        d.present(Color::White, rat(-60));
        d.advance(R0);
        d.open("Nc6", 7, rat(30)).unwrap();
        d.input(
            Input::CounterSeal {
                mv: "Bb5".into(),
                nonce: nonce(21),
            },
            rat(90),
        );
        let e = d.game.view(rat(90)).adjournment.unwrap().envelopes[1].clone();
        (d, e)
    };
    let (_, e) = counter_sealed(40);
    assert_eq!(e.sealer, Color::White);
    // White used 10 + 30 s in the first session and 60 s from the opening to the
    // counter-seal.
    assert_eq!(e.white_time.used_ms, s(100));
    assert_eq!(e.white_time.remaining_ms, s(7100));
    assert_eq!(e.black_time.used_ms, s(3680));
    assert_eq!(e.black_time.remaining_ms, s(3520));
    // The reply completes White's period of 3 moves: the envelope has the hour it adds.
    let (d, e) = counter_sealed(3);
    assert_eq!(e.white_time.remaining_ms, s(7100 + 3600));
    assert_eq!(
        d.remaining(Color::White, rat(90)),
        e.white_time.remaining_ms
    );
}

#[test]
fn rule_i_4_a_standing_offer_is_answered_not_countered() {
    let mut d = Driver::adjourned();
    let offer = |side| Input::DrawOffer {
        side,
        arbiter: "IA".into(),
    };
    d.input(offer(Color::White), at(4000));
    // Made again by the same player: it is the same offer.
    assert_eq!(d.try_input(offer(Color::White), at(4100)), Ok(Vec::new()));
    // The opponent answers it (draw_reply) rather than offering in turn.
    let r = d.try_input(offer(Color::Black), at(4200));
    assert!(
        matches!(&r, Err(Rejection::NotInThisStage { reason }) if reason.contains("draw_reply")),
        "{r:?}"
    );
    let standing = d.game.view(at(4200)).draw_offer.map(|o| (o.side, o.at));
    assert_eq!(standing, Some((Color::White, at(4000))));
}

#[test]
fn rule_i_9_2_only_the_responders_lever_records_the_arrival() {
    let mut d = Driver::adjourned();
    d.advance(R0);
    let press = |side| Input::Press {
        side: Some(side),
        mv: None,
    };
    // The sealer's side of the lever: no arrival of the responder, the clock runs on.
    assert_eq!(
        d.try_input(press(Color::Black), rat(200)),
        Err(Rejection::EnvelopeNotOpened)
    );
    assert_eq!(d.game.clock().running(), Some(Color::White));
    let ev = d.input(press(Color::White), rat(300));
    assert!(
        matches!(
            ev[0],
            Event::PlayerPresent {
                side: Color::White,
                ..
            }
        ),
        "{ev:?}"
    );
    assert_eq!(d.game.clock().running(), None);
}

#[test]
fn rule_i_9_3_a_reply_played_on_the_board_runs_the_absent_sealers_clock_as_usual() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    d.open("Nc6", 7, rat(30)).unwrap();
    // White plays the reply instead of counter-sealing it; Black arrives later.
    d.play("Bb5", rat(90));
    d.present(Color::Black, rat(600));
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    assert_eq!(d.remaining(Color::Black, rat(700)), s(3520 - 610));
    // 6.12a: after a pause the clock runs again.
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "light".into(),
        },
        rat(700),
    );
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        rat(800),
    );
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    assert_eq!(d.remaining(Color::Black, rat(900)), s(3520 - 710));
}

#[test]
fn rule_i_10_a_press_after_the_default_time_is_no_arrival() {
    let mut d = Driver::adjourned();
    d.present(Color::Black, rat(-10));
    let ev = d.advance(rat(3600) + Millis(1));
    assert!(
        matches!(ev.last(), Some(Event::ResultAwaitsEnvelope { .. })),
        "{ev:?}"
    );
    assert_eq!(d.game.clock().running(), None);
    // The late responder's lever, with the clocks already stopped: too late to arrive.
    assert_eq!(
        d.try_input(
            Input::Press {
                side: None,
                mv: None
            },
            rat(3700)
        ),
        Err(Rejection::EnvelopeNotOpened)
    );
    d.open("Nc6", 7, rat(3710)).unwrap();
    assert_eq!(
        d.result(),
        Some((
            Score::BlackWins,
            Termination::Default {
                absent: vec![Color::White]
            }
        ))
    );
}

#[test]
fn rule_i_14_the_resumption_session_ends_after_it_starts() {
    let refused = Err(Rejection::OutOfRange {
        field: "end",
        value: R0.0,
        allowed: format!("after the start ({})", R0.0),
    });
    let resumption = |end| Resumption {
        start: R0,
        end: Some(end),
        place: "Hall B".into(),
    };
    let mut d = Driver::new(setup(None));
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    // With the order: refused whole, the game is not adjourned.
    let adjourn = |r| Input::Adjourn {
        arbiter: "IA".into(),
        resumption: Some(r),
    };
    assert_eq!(d.try_input(adjourn(resumption(R0)), at(100)), refused);
    assert_eq!(d.stage(at(100)), None);
    // Scheduled on its own: refused, nothing scheduled.
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: None,
        },
        at(100),
    );
    let schedule = |r| Input::ScheduleResumption {
        resumption: r,
        arbiter: "IA".into(),
    };
    assert_eq!(d.try_input(schedule(resumption(R0)), at(110)), refused);
    assert_eq!(d.game.view(at(110)).adjournment.unwrap().resumption, None);
    // One millisecond is a session.
    d.input(schedule(resumption(R0 + Millis(1))), at(120));
    let r = d
        .game
        .view(at(120))
        .adjournment
        .unwrap()
        .resumption
        .unwrap();
    assert_eq!(r.end, Some(R0 + Millis(1)));
}

#[test]
fn rule_i_12_1_a_stated_move_is_not_counter_sealed() {
    let mut d = Driver::adjourned();
    d.input(
        Input::EnvelopeLost {
            arbiter: "IA".into(),
            reason: "not in the safe".into(),
        },
        at(9000),
    );
    d.present(Color::White, rat(-60));
    d.advance(R0);
    // The stated move comes from the e-board; nothing recorded Black's presence.
    d.input(Input::Move { mv: "Nc6".into() }, rat(20));
    assert_eq!(d.stage(rat(20)), Some(Stage::Resumed));
    // I.9.3's counter-seal answers an opened envelope; White replies on the board.
    let r = d.try_input(
        Input::CounterSeal {
            mv: "Bb5".into(),
            nonce: nonce(21),
        },
        rat(60),
    );
    assert!(
        matches!(&r, Err(Rejection::NotInThisStage { reason }) if reason.contains("opened sealed move")),
        "{r:?}"
    );
    assert_eq!(d.stage(rat(60)), Some(Stage::Resumed));
    assert_eq!(d.game.clock().running(), Some(Color::White));
}

#[test]
fn rule_i_1_2_a_seal_committed_while_the_clocks_are_stopped_charges_no_more_time() {
    let mut d = Driver::new(setup(None));
    d.input(
        Input::SetSessionEnd {
            end: Some(at(3600)),
            arbiter: "schedule".into(),
        },
        at(-60),
    );
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: None,
        },
        at(1000),
    );
    d.seal("e5", 1, at(1100));
    // 6.12a: the arbiter stops the clocks; paused time never counts, not even the time
    // I.1.2 would charge up to the nominal end.
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "dispute".into(),
        },
        at(1150),
    );
    let ev = d.commit(at(1200));
    let Event::SealCommitted {
        charged_to,
        charged_ms,
        remaining_ms,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*charged_to, at(1200));
    assert_eq!(*charged_ms, Millis::ZERO);
    assert_eq!(*remaining_ms, s(7200 - 1140));
}

#[test]
fn rule_i_13_the_corrected_time_is_the_clocks_from_then_on() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    let correct = |side, remaining| Input::CorrectTime {
        side,
        remaining,
        arbiter: "IA".into(),
        reason: "scoresheet".into(),
    };
    let window = |d: &Driver, t| d.game.view(t).adjournment.unwrap().correction_window;
    assert!(window(&d, R0));
    // A clock standing still (Black's, before the opening)...
    let ev = d.input(correct(Color::Black, s(3000)), rat(5));
    assert!(
        matches!(ev[0], Event::TimeCorrected { previous_ms, .. } if previous_ms == s(3520)),
        "{ev:?}"
    );
    assert_eq!(d.remaining(Color::Black, rat(5)), s(3000));
    // ...and the running one (White's, after it): the time it ran so far is replaced.
    d.open("Nc6", 7, rat(10)).unwrap();
    assert!(window(&d, rat(10)), "open until the first move");
    d.input(correct(Color::White, s(7000)), rat(20));
    assert_eq!(d.remaining(Color::White, rat(30)), s(7000 - 10));
    d.play("Bb5", rat(30));
    assert!(!window(&d, rat(30)));
    assert_eq!(d.remaining(Color::Black, rat(90)), s(3000 - 60));
}

#[test]
fn rule_i_2_a_second_envelope_records_the_time_used_in_every_session() {
    let mut d = Driver::adjourned();
    d.resumption_ending(rat(600));
    d.advance(R0);
    d.open("Nc6", 7, rat(10)).unwrap();
    d.play("Bb5", rat(30));
    // The second session ends: Black seals again.
    d.advance(rat(600));
    d.seal("a6", 8, rat(610));
    d.commit(rat(620));
    let e = d.game.view(rat(620)).adjournment.unwrap().envelopes[1].clone();
    assert_eq!((e.sealer, e.counter_seal), (Color::Black, false));
    // 3680 s in the first session, 590 s in the second.
    assert_eq!(e.black_time.used_ms, s(3680 + 590));
    assert_eq!(e.black_time.remaining_ms, s(3520 - 590));
    assert_eq!(e.white_time.used_ms, s(40 + 20));
}

#[test]
fn rule_i_13_a_time_corrected_above_zero_lifts_the_flag_it_caused() {
    let mut st = setup(None);
    st.flag_mode = FlagMode::Claim;
    let mut d = Driver::new(st);
    d.present(Color::White, at(-30));
    d.present(Color::Black, at(-30));
    d.play("e4", at(10));
    // Black's clock set wrong (100 s instead of 7190 s): it falls while Black seals.
    d.input(
        Input::SetTime {
            side: Color::Black,
            remaining: s(100),
            arbiter: "IA".into(),
            reason: "clock set by hand".into(),
        },
        at(20),
    );
    d.input(
        Input::Adjourn {
            arbiter: "IA".into(),
            resumption: Some(Resumption {
                start: R0,
                end: None,
                place: "Hall B".into(),
            }),
        },
        at(30),
    );
    d.advance(at(200));
    assert!(d.game.view(at(200)).pending_flag.is_some());
    d.seal("e5", 1, at(210));
    d.commit(at(220));
    d.present(Color::White, rat(-60));
    d.present(Color::Black, rat(-60));
    d.advance(R0);
    let correct = |remaining| Input::CorrectTime {
        side: Color::Black,
        remaining,
        arbiter: "IA".into(),
        reason: "scoresheet shows 1:58 used".into(),
    };
    // Corrected to 0:00 the flag stands...
    d.input(correct(Millis::ZERO), rat(5));
    let v = d.game.view(rat(5));
    assert!(v.black.flagged_at.is_some() && v.pending_flag.is_some());
    // ...above it, it is lifted with the claim it was waiting for (as 6.13's set_time).
    d.input(correct(s(7082)), rat(6));
    let v = d.game.view(rat(6));
    assert_eq!((v.black.flagged_at, v.pending_flag), (None, None));
    assert_eq!(
        d.try_input(
            Input::ConfirmFlag {
                arbiter: "IA".into()
            },
            rat(7)
        ),
        Err(Rejection::NoPendingFlag)
    );
    d.open("e5", 1, rat(10)).unwrap();
    d.play("Nf3", rat(20));
    assert_eq!(d.game.clock().running(), Some(Color::Black));
    assert_eq!(d.remaining(Color::Black, rat(30)), s(7082 - 10));
}

#[test]
fn rule_i_9_1_an_envelope_opened_while_the_clocks_are_stopped_starts_no_clock() {
    let mut d = Driver::adjourned();
    d.present(Color::White, rat(-60));
    d.advance(R0);
    // 6.12a: the arbiter has stopped the clocks; the opening does not start them.
    d.input(
        Input::Pause {
            arbiter: "IA".into(),
            reason: "light".into(),
        },
        rat(10),
    );
    d.open("Nc6", 7, rat(20)).unwrap();
    assert_eq!(d.game.clock().running(), None);
    assert_eq!(d.remaining(Color::White, rat(100)), s(7160));
    // 6.12c: the resume does.
    d.input(
        Input::Resume {
            arbiter: "IA".into(),
        },
        rat(100),
    );
    assert_eq!(d.game.clock().running(), Some(Color::White));
    assert_eq!(d.remaining(Color::White, rat(160)), s(7160 - 60));
}

#[test]
fn rule_i_12_1_the_stated_move_keeps_the_absent_responders_clock_running() {
    let mut d = Driver::adjourned();
    d.input(
        Input::EnvelopeLost {
            arbiter: "IA".into(),
            reason: "not in the safe".into(),
        },
        at(9000),
    );
    // I.11: White is not there; White's clock runs from the resumption.
    d.advance(R0);
    assert_eq!(d.game.clock().running(), Some(Color::White));
    d.input(Input::Move { mv: "Nc6".into() }, rat(300));
    assert_eq!(d.game.clock().running(), Some(Color::White));
    assert_eq!(d.remaining(Color::White, rat(400)), s(7160 - 400));
}
