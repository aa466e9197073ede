//! A game under Article 6: players, the clock, the position, the result.
//!
//! `decide(&self, input, now)` validates an input and returns the events it causes, or a
//! [`Rejection`]; `evolve(&mut self, &event)` is the only mutator; `next_deadline()` says
//! when time alone will next cause an event and `poll(now)` returns those events. The
//! state is exactly the fold of the events over [`Game::new`], so replaying a journal
//! rebuilds it exactly.
//!
//! Time-driven events (the scheduled start, default time, flag fall) carry the instant
//! they were due, not the instant they were noticed: a driver that wakes late still
//! records the flag at the millisecond the time ran out.
//!
//! The vocabulary is in child modules, re-exported here, so `game::Event` and the other
//! paths are the same for the rest of the workspace: `setup` (what is fixed before the
//! game), `input` (what comes in), `event` (what happens), `rejection` (why an input is
//! refused), `phase` and `outcome` (where the game stands, how it ended), `view` (what it
//! shows), `timer` (what time alone causes, and when). The behaviour is split by job: this
//! file keeps the state, its accessors, the timers (`next_deadline`, `poll`) and `decide`
//! with its dispatch; `play` holds the players' acts, `arbiter` the arbiter's, `adjourn`
//! and `envelope` the adjournment's, and `evolve` the one mutator.

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Move, Position};

use super::clock::Clock;
use super::color::{ByColor, Color};
use super::dead_position::{self, MateVerdict};
use super::fen::FenError;
use super::millis::Millis;
use super::time_control::{IncrementCredit, Period, PeriodTransition, TimeControl};

mod adjourn;
mod arbiter;
mod envelope;
mod event;
mod evolve;
mod input;
mod outcome;
mod phase;
mod play;
mod rejection;
mod setup;
mod timer;
mod view;

pub use adjourn::{AdjState, PendingSeal};
pub use event::{Arrival, Event};
pub use input::Input;
pub use outcome::{ArbiterResult, GameResult, Score, Termination, describe_result};
pub use phase::{PausedBy, Phase};
pub use rejection::{MoveError, Rejection};
pub use setup::{BothAbsent, FlagMode, PlayerInfo, Setup, SetupError};
pub use timer::Timer;
pub use view::{AdjournmentView, PendingFlag, SideView, View, pending_code};

use input::Who;
use phase::describe_pause;

/// The game. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    pub(super) setup: Setup,
    pub(super) periods: ByColor<Vec<Period>>,
    pub(super) phase: Phase,
    pub(super) clock: Clock,
    /// `None` when the moves are not known (a press without a move, clock-only boards).
    pub(super) position: Option<Chess>,
    /// Zobrist keys of the positions since the last irreversible move (9.6.1).
    pub(super) repetitions: Vec<u64>,
    /// Moves completed by a press that came before the move was read from the board
    /// (an e-board's field updates can arrive after the lever frame): `position` is
    /// unknown until they are attached (`Input::Move` by the side that pressed).
    pub(super) owed: Option<Owed>,
    pub(super) present: ByColor<bool>,
    pub(super) default_done: bool,
    /// Paused time before the default-time deadline; it moves the deadline only with
    /// `Setup::pauses_extend_default_time`.
    pub(super) paused_total: Millis,
    pub(super) paused_since: Option<Millis>,
    pub(super) pending_flag: Option<PendingFlag>,
    pub(super) both_flags_order_unknown: bool,
    pub(super) result: Option<GameResult>,
    /// When default time is measured from (the scheduled start, then the resumption).
    pub(super) default_base: Millis,
    pub(super) default_len: Millis,
    pub(super) adj: AdjState,
    /// The instant of the latest event: a timer that came due while it could not fire
    /// (a session end during a pause) fires then, so events never go back in time.
    pub(super) last_at: Millis,
    /// 6.10: the latest discrepancy reported and not yet settled by the arbiter.
    pub(super) discrepancy: Option<Discrepancy>,
}

/// A clock reading that disagreed with the reckoning, open until the arbiter sets the
/// time, corrects the clock, acknowledges it or ends the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discrepancy {
    pub at: Millis,
    pub white_ms: Millis,
    pub black_ms: Millis,
    pub reckoned_white_ms: Millis,
    pub reckoned_black_ms: Millis,
}

/// The position before the moves that presses completed without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Owed {
    position: Chess,
    repetitions: Vec<u64>,
    /// Presses since `position` whose moves are not attached yet (1 to `MAX_OWED_PLIES`).
    plies: u8,
}

/// How many presses may come before their moves (players pressing before the board's
/// updates for their moves arrived); beyond that the position is unknown. In a time
/// scramble on a loaded hall server the board's scan was seen to lag three presses (three
/// moves reported 0.2 ms apart, ~400 ms after the first press): two was too few, and the
/// rest of the game was then lost to the record. Eight is about a second and a half of
/// the fastest pressing; a board that stays silent longer has lost its updates, and the
/// arbiter sets the position.
pub const MAX_OWED_PLIES: u8 = 8;

/// Parse a FEN into a legal position, saying what is wrong (see [`super::fen`]).
pub fn parse_fen(fen: &str) -> Result<Chess, FenError> {
    super::fen::parse_position(fen)
}

pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

fn zobrist(pos: &Chess) -> u64 {
    let z: Zobrist64 = pos.zobrist_hash(EnPassantMode::Legal);
    z.0
}

/// Parse a move in UCI (`e2e4`, `e7e8q`) or SAN (`Nf3`, `exd5`, `O-O`, `e8=Q+`).
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move, MoveError> {
    let text = text.trim();
    if let Ok(uci) = text.parse::<UciMove>() {
        return uci.to_move(pos).map_err(|_| MoveError::Illegal);
    }
    let san: San = text.parse().map_err(|_| MoveError::Unreadable)?;
    san.to_move(pos).map_err(|e| match e {
        shakmaty::san::SanError::AmbiguousSan => MoveError::Ambiguous,
        shakmaty::san::SanError::IllegalSan => MoveError::Illegal,
    })
}

impl Game {
    /// A scheduled game, not started. Validates the setup.
    pub fn new(mut setup: Setup) -> Result<Game, SetupError> {
        // A hand-set clock's flag is a verdict the arbiter confirms: a typo in the time
        // set by hand must not decide a game by itself (docs/RULES-COVERAGE.md).
        if setup.observed {
            setup.flag_mode = FlagMode::Claim;
        }
        let periods_of = |tc: &TimeControl, color| {
            tc.periods()
                .map(<[Period]>::to_vec)
                .map_err(|reason| SetupError::TimeControl { color, reason })
        };
        let white = periods_of(&setup.tc, Color::White)?;
        let black = periods_of(setup.tc_black.as_ref().unwrap_or(&setup.tc), Color::Black)?;
        if setup.default_time < Millis::ZERO {
            return Err(SetupError::NegativeDefaultTime);
        }
        let position = match &setup.fen {
            None => Chess::default(),
            Some(fen) => parse_fen(fen).map_err(SetupError::Fen)?,
        };
        let initial = |p: &[Period]| {
            let first = &p[0];
            match setup.clock.increment_credit {
                // DGT and FIDE clocks show 5+3 as 5:03 before move 1.
                IncrementCredit::BeforeMove1 => first.time() + first.increment(),
                IncrementCredit::AfterPress => first.time(),
            }
        };
        let clock = Clock::new(initial(&white), initial(&black), position.turn().into());
        Ok(Game {
            repetitions: vec![zobrist(&position)],
            position: Some(position),
            owed: None,
            periods: ByColor { white, black },
            phase: Phase::Scheduled,
            clock,
            present: ByColor::default(),
            default_done: false,
            paused_total: Millis::ZERO,
            paused_since: None,
            pending_flag: None,
            both_flags_order_unknown: false,
            result: None,
            default_base: setup.start,
            default_len: setup.default_time,
            // The event's letters are the game's from the start (I.8 reads the sealed
            // move in them); `set_adjournment_rules` may still change them.
            adj: AdjState {
                rules: crate::adjournment::AdjournmentRules {
                    notation_language: setup.piece_letters,
                    ..Default::default()
                },
                ..AdjState::default()
            },
            last_at: Millis(i64::MIN),
            discrepancy: None,
            setup,
        })
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn position(&self) -> Option<&Chess> {
        self.position.as_ref()
    }

    /// The side whose move, already completed by its press, the board has not shown yet:
    /// an `Input::Move` by that side attaches it.
    pub fn move_owed(&self) -> Option<Color> {
        self.owed.as_ref().map(|o| o.position.turn().into())
    }

    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// The open 6.10 discrepancy, if any.
    pub fn discrepancy(&self) -> Option<&Discrepancy> {
        self.discrepancy.as_ref()
    }

    /// The instant of the latest event: an input placed at an earlier instant (a press
    /// reconstructed from a clock's reading) must not go before it.
    pub fn last_event_at(&self) -> Millis {
        self.last_at
    }

    pub(super) fn period(&self, side: Color, k: usize) -> &Period {
        let periods = self.periods.get(side);
        // Game::new guarantees at least one period per side.
        TimeControl::period(periods, k).unwrap_or(&periods[0])
    }

    fn period_end(&self, side: Color, k: usize) -> Option<u32> {
        TimeControl::period_end(self.periods.get(side), k)
    }

    /// Default time still matters: it has not passed and someone is not yet present.
    pub(super) fn default_pending(&self) -> bool {
        let everyone_here = self.present.white && self.present.black;
        !self.default_done && !everyone_here
    }

    /// The first instant at which a player still absent is late: 6.6 (and I.10) default
    /// a player who arrives *more than* (after) the default time, so arriving at the
    /// default instant itself is in time and the default passes one millisecond later.
    pub(super) fn default_deadline(&self) -> Millis {
        let paused = if self.setup.pauses_extend_default_time {
            self.paused_total
        } else {
            Millis::ZERO
        };
        self.default_base + self.default_len + paused + Millis(1)
    }

    /// Default time is measured by the hall's clock, not the game's: by 6.6 a pause does
    /// not stop it (unless the event's rules say so, and then it is armed again at the
    /// resumption).
    fn default_deadline_while_paused(&self) -> Option<Millis> {
        (self.default_pending() && !self.setup.pauses_extend_default_time)
            .then(|| self.default_deadline())
    }

    /// When time alone will next cause an event, if ever: the earliest of the armed
    /// [`timers`](Game::timers).
    pub fn next_deadline(&self) -> Option<Millis> {
        self.timers().map(|(_, due)| due).min()
    }

    /// The events time causes up to `now`, each at the instant it was due, in order:
    /// all of them, up to the fixed point where no timer is due.
    ///
    /// Each round fires the earliest due timer, and its events disarm it (the start
    /// changes the phase, the default and a flag happen once, a period advanced at 0:00
    /// has one more quota to meet, the session end and the resumption move the stage
    /// on), so the rounds end: a cascade at one instant is bounded by the periods whose
    /// quotas are already met, and later instants by `now`.
    pub fn poll(&self, now: Millis) -> Vec<Event> {
        let mut events = Vec::new();
        let mut draft: Option<Game> = None;
        loop {
            let game = draft.as_ref().unwrap_or(self);
            let Some((timer, due)) = game.next_timer() else {
                break;
            };
            if due > now {
                break;
            }
            let new = game.on_timer(timer, due);
            if new.is_empty() {
                break;
            }
            let before = game.clone();
            let d = draft.get_or_insert_with(|| self.clone());
            for e in &new {
                d.evolve(e);
            }
            events.extend(new);
            // Events that change nothing would come again for ever: a bug, never a silent
            // stop in a build with debug assertions (every test).
            if *d == before {
                debug_assert!(
                    false,
                    "poll: timer {timer:?} at {due:?} does not move the game on"
                );
                break;
            }
        }
        events
    }

    /// What `timer`, due at `due`, causes.
    fn on_timer(&self, timer: Timer, due: Millis) -> Vec<Event> {
        match timer {
            Timer::Start => vec![Event::ClockStarted {
                at: due,
                side: self.clock.turn,
            }],
            Timer::DefaultTime => self.on_default_time(due),
            Timer::Flag => self.on_zero(due),
            Timer::SessionEnd => self.on_session_end(due),
            // Empty when no resumption or no sealer is known; `poll` stops there.
            Timer::ResumptionStart => self.on_resumption_start(due),
        }
    }

    /// 6.6: who is absent when default time passes loses.
    fn on_default_time(&self, at: Millis) -> Vec<Event> {
        let absent: Vec<Color> = Color::ALL
            .into_iter()
            .filter(|c| !*self.present.get(*c))
            .collect();
        if let Some(events) = self.on_resumption_default(at, &absent) {
            return events;
        }
        let mut events = vec![Event::DefaultTimePassed {
            at,
            absent: absent.clone(),
        }];
        if let Some(ended) = self.default_result(at, absent) {
            events.push(ended);
        }
        events
    }

    /// 6.6 / I.10: who is absent loses; both absent as configured.
    pub(super) fn default_result(&self, at: Millis, absent: Vec<Color>) -> Option<Event> {
        let score = match absent.as_slice() {
            [one] => Some(Score::win_for(one.other())),
            [_, _] => match self.setup.both_absent {
                BothAbsent::BothLose => Some(Score::BothLose),
                BothAbsent::Arbiter => None,
            },
            // Nobody absent: no default.
            _ => None,
        };
        score.map(|score| self.ended(at, score, Termination::Default { absent }))
    }

    /// The running side's time reached 0:00 at `at`.
    fn on_zero(&self, at: Millis) -> Vec<Event> {
        let side = self.clock.turn;
        let s = self.clock.side(side);
        let required = self.period_end(side, s.period);
        if self.setup.clock.period_transition == PeriodTransition::OnFlag
            && let Some(required) = required
            && s.moves >= required
        {
            // DGT "000" mode: the period's quota was completed, so 0:00 only opens the
            // next period (6.3: the requirement is met).
            let next = self.period(side, s.period + 1);
            return vec![Event::PeriodAdvanced {
                at,
                side,
                period: period_number(s.period + 1),
                added_ms: next.time(),
                forfeited_ms: Millis::ZERO,
                remaining_ms: next.time(),
            }];
        }
        let frozen = self.setup.clock.freeze_after_last_flag;
        let mut events = vec![Event::FlagFell {
            at,
            side,
            period: period_number(s.period),
            moves_made: s.moves,
            moves_required: required,
            frozen,
        }];
        // Only the first flag decides (6.11: a daemon-run clock knows the order).
        if self.clock.side(side.other()).flagged_at.is_some() || self.pending_flag.is_some() {
            return events;
        }
        match self.setup.flag_mode {
            FlagMode::Claim => events.push(Event::ResultPending {
                at,
                side,
                reason: "claim mode: the result waits for the arbiter's confirmation (6.8)".into(),
            }),
            FlagMode::Auto => events.push(self.flag_verdict(at, side)),
        }
        events
    }

    /// 6.9: the flagged side loses, unless the opponent cannot mate by any series of
    /// legal moves. The intended winner is always the opponent of the flagged side.
    fn flag_verdict(&self, at: Millis, side: Color) -> Event {
        self.flag_verdict_on(self.position.as_ref(), at, side)
    }

    /// As [`Game::flag_verdict`], in `position` (`None`: not known).
    fn flag_verdict_on(&self, position: Option<&Chess>, at: Millis, side: Color) -> Event {
        let Some(pos) = position else {
            return Event::ResultPending {
                at,
                side,
                reason: "flag fell, result pending arbiter: the position is not known".into(),
            };
        };
        match dead_position::can_mate(pos, side.other().into()) {
            MateVerdict::CanMate { .. } => {
                self.ended(at, Score::win_for(side.other()), Termination::Flag { side })
            }
            MateVerdict::CannotMate { .. } => self.ended(
                at,
                Score::Draw,
                Termination::FlagOpponentCannotMate { side },
            ),
            MateVerdict::Unknown { reason } => Event::ResultPending {
                at,
                side,
                reason: format!("flag fell, result pending arbiter: {reason}"),
            },
        }
    }

    pub(super) fn ended(&self, at: Millis, score: Score, termination: Termination) -> Event {
        Event::GameEnded {
            at,
            result: GameResult { score, termination },
            replaces: self.result.clone(),
            confirmed_by: None,
        }
    }

    pub(super) fn reject_if_over(&self) -> Result<(), Rejection> {
        match &self.result {
            Some(r) => Err(Rejection::GameOver {
                result: describe_result(r),
            }),
            None => Ok(()),
        }
    }

    pub(super) fn reject_unless_playing(&self) -> Result<(), Rejection> {
        self.reject_if_over()?;
        match &self.phase {
            Phase::Scheduled => Err(Rejection::NotStarted {
                start: self.setup.start,
            }),
            Phase::Paused(by) => Err(Rejection::Paused {
                by: describe_pause(by),
            }),
            Phase::Running | Phase::Finished => Ok(()),
        }
    }

    /// Validate `input` at `now` and return the events it causes (after any events time
    /// caused up to `now`, which a driver should have polled already).
    pub fn decide(&self, input: &Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        if self.next_deadline().is_some_and(|d| d <= now) {
            let mut events = self.poll(now);
            let mut draft = self.clone();
            for e in &events {
                draft.evolve(e);
            }
            events.extend(draft.decide_now(input, now)?);
            return Ok(events);
        }
        self.decide_now(input, now)
    }

    fn decide_now(&self, input: &Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        // Sealing and resumption change what presses, moves and pauses mean.
        if let Some(decided) = self.adjournment_gate(input, now) {
            return decided;
        }
        // What the actor's group needs is checked once, here; each act then decides only
        // its own rule.
        match input.actor() {
            Who::Player | Who::Device => {}
            Who::Arbiter(arbiter) => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
            }
            Who::Correction {
                arbiter,
                reason,
                what,
            } => self.check_adjustment(arbiter, reason, what)?,
            Who::Record(arbiter) => require_arbiter(arbiter)?,
        }
        self.dispatch(input, now)
    }

    /// One method per act, named after it, in the file of its rule: play and devices in
    /// `game/play.rs`, the arbiter's acts in `game/arbiter.rs`, the adjournment's in
    /// `game/adjourn.rs` (the opening and the counter-seal in `game/envelope.rs`).
    fn dispatch(&self, input: &Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        use Input as I;
        match input {
            I::Move { mv } => self.decide_move_input(mv, now),
            I::Press { side, mv } => self.decide_press(*side, mv.as_deref(), now),
            I::PlayerPause { side } => self.decide_player_pause(*side, now),
            I::ClockReading { white, black } => Ok(self.decide_reading(*white, *black, now)),
            I::ClockTimes { white, black } => Ok(self.decide_clock_times(*white, *black, now)),
            I::Present { side, arbiter } => Ok(self.decide_present(*side, arbiter, now)),
            I::Pause { arbiter, reason } => self.decide_pause(arbiter, reason, now),
            I::Resume { arbiter } => self.decide_resume(arbiter, now),
            I::SetTime {
                side,
                remaining,
                arbiter,
                reason,
            } => self.decide_set_time(*side, *remaining, arbiter, reason, now),
            I::AddTime {
                side,
                delta,
                arbiter,
                reason,
            } => self.decide_add_time(*side, *delta, arbiter, reason, now),
            I::SetMoves {
                side,
                moves,
                period,
                arbiter,
                reason,
            } => self.decide_set_moves(*side, *moves, *period, arbiter, reason, now),
            I::SetPosition {
                fen,
                arbiter,
                reason,
            } => self.decide_set_position(fen, arbiter, reason, now),
            I::ReplaceClock {
                device,
                white,
                black,
                arbiter,
                reason,
            } => self.decide_replace_clock(device, *white, *black, arbiter, reason, now),
            I::ConfirmFlag { arbiter } => self.decide_confirm_flag(arbiter, now),
            I::SetResult {
                result,
                arbiter,
                reason,
            } => self.decide_set_result(*result, arbiter, reason, now),
            I::AcknowledgeDiscrepancy { arbiter } => {
                self.decide_acknowledge_discrepancy(arbiter, now)
            }
            I::SetSessionEnd { end, arbiter } => self.decide_set_session_end(*end, arbiter, now),
            I::SetAdjournmentRules { rules, arbiter } => {
                self.decide_set_adjournment_rules(*rules, arbiter, now)
            }
            I::Adjourn {
                arbiter,
                resumption,
            } => self.decide_adjourn(arbiter, resumption.as_ref(), now),
            I::ScheduleResumption {
                resumption,
                arbiter,
            } => self.decide_schedule_resumption(resumption, arbiter, now),
            I::Seal {
                side,
                mv,
                nonce,
                on_board,
            } => self.decide_seal(*side, mv, nonce, *on_board, now),
            I::CommitSeal { arbiter } => self.decide_commit_seal(arbiter.as_deref(), now),
            I::VerifyEnvelope { arbiter } => self.decide_verify_envelope(arbiter, now),
            I::DrawOffer { side, arbiter } => self.decide_draw_offer(*side, arbiter, now),
            I::DrawReply { accept, arbiter } => self.decide_draw_reply(*accept, arbiter, now),
            I::OpenEnvelope { mv, nonce, arbiter } => {
                self.decide_open_envelope(mv, nonce, arbiter, now)
            }
            I::CounterSeal { mv, nonce } => self.decide_counter_seal(mv, nonce, now),
            I::EnvelopeLost { arbiter, reason } => self.decide_envelope_lost(arbiter, reason, now),
            I::CorrectTime {
                side,
                remaining,
                arbiter,
                reason,
            } => self.decide_correct_time(*side, *remaining, arbiter, reason, now),
        }
    }

    pub(super) fn check_adjustment(
        &self,
        arbiter: &str,
        reason: &str,
        what: &'static str,
    ) -> Result<(), Rejection> {
        require_arbiter(arbiter)?;
        if reason.trim().is_empty() {
            return Err(Rejection::ReasonRequired { what });
        }
        self.reject_if_over()
    }
}

/// The largest time an arbiter may put on a clock: 24 h.
pub const MAX_CLOCK: Millis = Millis(24 * 3_600_000);

pub(super) fn check_time(field: &'static str, t: Millis) -> Result<(), Rejection> {
    if t < Millis::ZERO || t > MAX_CLOCK {
        return Err(Rejection::OutOfRange {
            field,
            value: t.0,
            allowed: format!("0 to {} ms (24 h)", MAX_CLOCK.0),
        });
    }
    Ok(())
}

pub(super) fn require_arbiter(arbiter: &str) -> Result<(), Rejection> {
    if arbiter.trim().is_empty() {
        Err(Rejection::ArbiterRequired)
    } else {
        Ok(())
    }
}

pub(super) fn period_number(index: usize) -> u32 {
    u32::try_from(index.saturating_add(1)).unwrap_or(u32::MAX)
}

pub(super) fn period_index(number: u32) -> usize {
    usize::try_from(number.saturating_sub(1)).unwrap_or(0)
}
