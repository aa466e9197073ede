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
//! shows), `timer` (what time alone causes, and when). This file keeps the behaviour.

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::adjournment::Stage;
use super::clock::Clock;
use super::color::{ByColor, Color};
use super::dead_position::{self, MateVerdict};
use super::fen::FenError;
use super::millis::Millis;
use super::time_control::{IncrementCredit, Period, PeriodTransition, TimeControl};

mod adjourn;
mod arbiter;
mod event;
mod input;
mod outcome;
mod phase;
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
pub use setup::{BothAbsent, FlagMode, Setup, SetupError};
pub use timer::Timer;
pub use view::{AdjournmentView, PendingFlag, SideView, View};

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
    pub fn new(setup: Setup) -> Result<Game, SetupError> {
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
            adj: AdjState::default(),
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

    /// One method per act, named after it, in the file of its rule: play and devices
    /// here, the arbiter's acts in `game/arbiter.rs`, the adjournment's in
    /// `game/adjourn.rs`.
    fn dispatch(&self, input: &Input, now: Millis) -> Result<Vec<Event>, Rejection> {
        use Input as I;
        match input {
            I::Move { mv } => self.decide_move_input(mv, now),
            I::Press { side, mv } => self.decide_press(*side, mv.as_deref(), now),
            I::PlayerPause { side } => self.decide_player_pause(*side, now),
            I::ClockReading { white, black } => Ok(self.decide_reading(*white, *black, now)),
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
            I::ConfirmFlag { .. } => self.decide_confirm_flag(now),
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

    /// 6.7a: a move made on the board, also one owed to a press that came first.
    fn decide_move_input(&self, mv: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
        // An owed move always has the position unknown (`Owed` holds it; `evolve` keeps
        // the two exclusive). The press that completed it came before whatever happened
        // since (a flag, a result set meanwhile, a pause): the move is the game's (6.7a).
        if let Some(owed) = &self.owed {
            return self.decide_late_move(owed, mv, now);
        }
        self.reject_unless_playing()?;
        self.decide_move(mv, now)
    }

    /// 6.12b: a player stopped the clocks to summon the arbiter.
    fn decide_player_pause(
        &self,
        side: Option<Color>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_unless_playing()?;
        let side = side.unwrap_or(self.clock.turn);
        Ok(vec![Event::PausedByPlayer { at: now, side }])
    }

    /// 7.5.5: the offender loses, but it is a draw when the opponent cannot mate.
    fn illegal_moves_score(&self, offender: Color) -> Score {
        match &self.position {
            Some(pos) => match dead_position::can_mate(pos, offender.other().into()) {
                MateVerdict::CannotMate { .. } => Score::Draw,
                _ => Score::win_for(offender.other()),
            },
            None => Score::win_for(offender.other()),
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

    /// The first period whose quota is not met after `moves` completed moves.
    fn period_for_moves(&self, side: Color, moves: u32) -> usize {
        let periods = self.periods.get(side);
        let mut end: u32 = 0;
        let mut k = 0;
        // Quotas are at least 1 (the notation refuses 0), so this stops by `k == moves`.
        while let Some(quota) = TimeControl::period(periods, k).and_then(|p| p.moves) {
            end = end.saturating_add(quota.max(1));
            if moves < end {
                break;
            }
            k += 1;
        }
        k
    }

    fn decide_reading(&self, white: Millis, black: Millis, now: Millis) -> Vec<Event> {
        let flagged = |c: Color| self.clock.side(c).flagged_at.is_some();
        if white <= Millis::ZERO
            && black <= Millis::ZERO
            && !flagged(Color::White)
            && !flagged(Color::Black)
            && self.result.is_none()
        {
            return vec![Event::BothFlagsOrderUnknown { at: now }];
        }
        let reckoned_white = self.clock.remaining_at(Color::White, now);
        let reckoned_black = self.clock.remaining_at(Color::Black, now);
        // abs_diff: a hostile reading (i64::MIN) has no i64 absolute value.
        let off = |a: Millis, b: Millis| {
            a.0.abs_diff(b.0) > self.setup.discrepancy_margin.0.unsigned_abs()
        };
        if off(white, reckoned_white) || off(black, reckoned_black) {
            return vec![Event::ClockDiscrepancy {
                at: now,
                white_ms: white,
                black_ms: black,
                reckoned_white_ms: reckoned_white,
                reckoned_black_ms: reckoned_black,
            }];
        }
        Vec::new()
    }

    /// A move made on the board by the side whose clock runs.
    fn decide_move(&self, text: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let mover: Color = pos.turn().into();
        if mover != self.clock.turn {
            return Err(Rejection::MovePending {
                side: self.clock.turn,
            });
        }
        if self.clock.running_since.is_none() {
            return Err(Rejection::Frozen);
        }
        let m = parse_move(pos, text).map_err(|reason| Rejection::BadMove {
            mv: text.to_string(),
            reason,
        })?;
        let san = San::from_move(pos, m).to_string();
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let mut after = pos.clone();
        after.play_unchecked(m);
        let mut events = vec![Event::MoveMade {
            at: now,
            side: mover,
            uci,
            san,
            fen: fen_of(&after),
        }];
        if let Some((score, termination)) = self.ending_after(&after, pos.is_irreversible(m)) {
            // 6.7a: a move that ends the game is complete without a press.
            events.push(self.ended(now, score, termination));
        }
        Ok(events)
    }

    /// A move whose press came first: it is the owing side's, in the position before it.
    fn decide_late_move(
        &self,
        owed: &Owed,
        text: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let pos = &owed.position;
        let m = parse_move(pos, text).map_err(|reason| Rejection::BadMove {
            mv: text.to_string(),
            reason,
        })?;
        let mut after = pos.clone();
        after.play_unchecked(m);
        let mut events = vec![Event::MoveMade {
            at: now,
            side: pos.turn().into(),
            uci: m.to_uci(CastlingMode::Standard).to_string(),
            san: San::from_move(pos, m).to_string(),
            fen: fen_of(&after),
        }];
        // Only the last owed move leads to the current position; a mate or a draw there
        // ends the game now (6.7a), as it would have at the press.
        if owed.plies == 1 && self.result.is_none() {
            let seen = if pos.is_irreversible(m) {
                0
            } else {
                let key = zobrist(&after);
                owed.repetitions.iter().filter(|k| **k == key).count()
            };
            if let Some((score, termination)) = self.ending_after_seen(&after, seen) {
                events.push(self.ended(now, score, termination));
            } else if let Some(verdict) = self.flag_verdict_when_known(&after, now) {
                events.push(verdict);
            }
        }
        Ok(events)
    }

    /// 6.9 for a flag that fell while this move was owed: its verdict waited for the
    /// position ("result pending: the position is not known"), and the move just read
    /// gives the position the flag fell in. Decided now, as the arbiter's `confirm_flag`
    /// would; a verdict still unknown there leaves the flag pending. Not in claim mode
    /// (the arbiter decides there). A pending flag always fell after the owed press: it
    /// stops the clock and presses are refused until the arbiter acts (`set_time` of
    /// the flagged side clears it, a result ends the game).
    fn flag_verdict_when_known(&self, after: &Chess, now: Millis) -> Option<Event> {
        let pending = self.pending_flag.as_ref()?;
        if self.setup.flag_mode != FlagMode::Auto {
            return None;
        }
        match self.flag_verdict_on(Some(after), now, pending.side) {
            ended @ Event::GameEnded { .. } => Some(ended),
            _ => None,
        }
    }

    /// 5.1, 5.2.2, 9.6: does the position after a move end the game?
    pub(super) fn ending_after(
        &self,
        after: &Chess,
        irreversible: bool,
    ) -> Option<(Score, Termination)> {
        let seen = if irreversible {
            0
        } else {
            let key = zobrist(after);
            self.repetitions.iter().filter(|k| **k == key).count()
        };
        self.ending_after_seen(after, seen)
    }

    /// As [`Game::ending_after`], with `seen` earlier occurrences of `after` (9.6.1).
    fn ending_after_seen(&self, after: &Chess, seen: usize) -> Option<(Score, Termination)> {
        if after.is_checkmate() {
            let winner: Color = after.turn().other().into();
            return Some((Score::win_for(winner), Termination::Checkmate));
        }
        if after.is_stalemate() {
            return Some((Score::Draw, Termination::Stalemate));
        }
        if dead_position::is_dead_position(after) {
            return Some((Score::Draw, Termination::DeadPosition));
        }
        if after.halfmoves() >= 150 {
            return Some((Score::Draw, Termination::SeventyFiveMoves));
        }
        if seen + 1 >= 5 {
            return Some((Score::Draw, Termination::FivefoldRepetition));
        }
        None
    }

    fn decide_press(
        &self,
        side: Option<Color>,
        mv: Option<&str>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_unless_playing()?;
        let turn = self.clock.turn;
        if let Some(side) = side
            && side != turn
        {
            return Err(Rejection::NotYourTurn {
                side,
                running: turn,
            });
        }
        if self.clock.running_since.is_none() {
            return Err(Rejection::Frozen);
        }
        let mut events = Vec::new();
        if !*self.present.get(turn) {
            events.push(Event::PlayerPresent {
                at: now,
                side: turn,
                arrival: Arrival::Press,
            });
        }
        if let Some(text) = mv {
            let mut made = self.decide_move(text, now)?;
            let ended = matches!(made.last(), Some(Event::GameEnded { .. }));
            events.append(&mut made);
            if ended {
                return Ok(events);
            }
        }
        let charge = self.clock.charge(now);
        let done = self.completion(turn, charge.main, now);
        events.push(Event::Pressed {
            at: now,
            side: turn,
            charged_ms: self.clock.turn_cost(now),
            increment_ms: done.increment,
            remaining_ms: done.remaining,
            moves: done.moves,
        });
        events.extend(done.advance);
        Ok(events)
    }

    /// What completing `side`'s move costs and earns (6.7a, 6.2a, 6.2b): a press, and
    /// also the stop of the clock that commits a sealed move (I.1.1) or a counter-seal.
    pub(super) fn completion(&self, side: Color, charged: Millis, at: Millis) -> Completion {
        let s = self.clock.side(side);
        let after_charge = s.remaining - charged;
        let flagged = s.flagged_at.is_some();
        let moves = s.moves.saturating_add(1);
        let completed_in = self.period(side, s.period);
        let advances = !flagged
            && self.setup.clock.period_transition == PeriodTransition::OnMoves
            && self.period_end(side, s.period) == Some(moves);
        let period = if advances { s.period + 1 } else { s.period };
        // No increment after a flag (FIDE equipment rules; lichess does the same).
        let increment = match (flagged, self.setup.clock.increment_credit) {
            (true, _) => Millis::ZERO,
            (false, IncrementCredit::BeforeMove1) => self.period(side, period).increment(),
            (false, IncrementCredit::AfterPress) => completed_in.increment(),
        };
        let advance = advances.then(|| {
            // 6.2b: unused time carries over, except in delay mode.
            let forfeited = if completed_in.delay() > Millis::ZERO {
                after_charge
            } else {
                Millis::ZERO
            };
            let next = self.period(side, period);
            Event::PeriodAdvanced {
                at,
                side,
                period: period_number(period),
                added_ms: next.time(),
                forfeited_ms: forfeited,
                remaining_ms: after_charge + increment - forfeited + next.time(),
            }
        });
        Completion {
            increment,
            remaining: after_charge + increment,
            moves,
            advance,
        }
    }

    /// Apply an event. The only mutator.
    pub fn evolve(&mut self, event: &Event) {
        self.last_at = self.last_at.max(event.at());
        // The arbiter's own times settle an open discrepancy, and so does the end.
        if matches!(
            event,
            Event::TimeSet { .. }
                | Event::TimeAdded { .. }
                | Event::ClockReplaced { .. }
                | Event::TimeCorrected { .. }
                | Event::GameEnded { .. }
        ) {
            self.discrepancy = None;
        }
        match event {
            Event::ClockStarted { at, side } => {
                self.phase = Phase::Running;
                self.clock.pass_turn(*side);
                self.begin_turn(*at);
            }
            Event::PlayerPresent { at, side, .. } => {
                *self.present.get_mut(*side) = true;
                // I.9.2: on arrival the responder stops the clock until the envelope is
                // opened (and the sealer likewise for a counter-seal, I.9.3).
                if !self.clock_may_run() {
                    self.clock.stop(*at);
                }
            }
            Event::DefaultTimePassed { .. } => self.default_done = true,
            Event::MoveMade { uci, side, .. } => {
                // 9.1: a move by the player offered a draw declines it.
                if self
                    .adj
                    .draw_offer
                    .as_ref()
                    .is_some_and(|o| o.side != *side)
                {
                    self.adj.draw_offer = None;
                }
                match self.owed.take() {
                    // A move attached after its press: played on the position it was
                    // made in; the position is known again once nothing is owed.
                    // (`owed` is only ever held while the position is unknown.)
                    Some(o) => {
                        self.position = Some(o.position);
                        self.repetitions = o.repetitions;
                        self.play_uci(uci);
                        if o.plies > 1
                            && let Some(position) = self.position.take()
                        {
                            self.owed = Some(Owed {
                                position,
                                repetitions: std::mem::take(&mut self.repetitions),
                                plies: o.plies - 1,
                            });
                        }
                    }
                    None => self.play_uci(uci),
                }
            }
            Event::Pressed {
                at,
                side,
                remaining_ms,
                moves,
                ..
            } => {
                self.clock.settle(*at);
                *self.present.get_mut(*side) = true;
                // A press without a recorded move: the move is owed until the board shows
                // it (its updates may come after the lever frame); the position is not
                // known meanwhile.
                if self
                    .position
                    .as_ref()
                    .is_some_and(|p| Color::from(p.turn()) == *side)
                {
                    if let Some(position) = self.position.take() {
                        self.owed = Some(Owed {
                            position,
                            repetitions: std::mem::take(&mut self.repetitions),
                            plies: 1,
                        });
                    }
                } else if self.position.is_none() {
                    match self.owed.as_mut() {
                        Some(o) if o.plies < MAX_OWED_PLIES => o.plies += 1,
                        _ => self.forget_position(),
                    }
                }
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                s.moves = *moves;
                self.clock.pass_turn(side.other());
                if self.clock.running_since.is_some() {
                    self.begin_turn(*at);
                }
                // I.13: the first move after resumption closes the correction window.
                if self.adj.stage == Some(Stage::Resumed) {
                    self.adj.first_move_done = true;
                }
            }
            Event::PeriodAdvanced {
                at,
                side,
                period,
                remaining_ms,
                ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.period = period_index(*period);
                s.remaining = *remaining_ms;
            }
            Event::FlagFell {
                at, side, frozen, ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.remaining = Millis::ZERO;
                s.flagged_at.get_or_insert(*at);
                if *frozen {
                    self.clock.stop(*at);
                }
            }
            Event::ResultPending { at, side, reason } => {
                self.pending_flag = Some(PendingFlag {
                    side: *side,
                    at: *at,
                    reason: reason.clone(),
                });
            }
            Event::BothFlagsOrderUnknown { at } => {
                self.clock.settle(*at);
                for c in Color::ALL {
                    let s = self.clock.side_mut(c);
                    s.remaining = Millis::ZERO;
                    s.flagged_at.get_or_insert(*at);
                }
                self.both_flags_order_unknown = true;
            }
            Event::ClockDiscrepancy {
                at,
                white_ms,
                black_ms,
                reckoned_white_ms,
                reckoned_black_ms,
            } => {
                self.discrepancy = Some(Discrepancy {
                    at: *at,
                    white_ms: *white_ms,
                    black_ms: *black_ms,
                    reckoned_white_ms: *reckoned_white_ms,
                    reckoned_black_ms: *reckoned_black_ms,
                });
            }
            Event::DiscrepancyAcknowledged { .. } => self.discrepancy = None,
            Event::PausedByPlayer { at, side } => self.pause(*at, PausedBy::Player { side: *side }),
            Event::Paused {
                at,
                arbiter,
                reason,
            } => self.pause(
                *at,
                PausedBy::Arbiter {
                    arbiter: arbiter.clone(),
                    reason: reason.clone(),
                },
            ),
            Event::Resumed { at, .. } => {
                if let Some(since) = self.paused_since.take()
                    && !self.default_done
                {
                    self.paused_total += *at - since;
                }
                self.phase = Phase::Running;
                if !self.frozen() && self.clock_may_run() {
                    self.clock.start(*at);
                }
            }
            Event::TimeSet {
                at,
                side,
                remaining_ms,
                ..
            }
            | Event::TimeAdded {
                at,
                side,
                remaining_ms,
                ..
            } => {
                self.clock.settle(*at);
                self.set_remaining(*side, *remaining_ms, *at);
            }
            Event::MovesSet {
                at,
                side,
                moves,
                period,
                ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.moves = *moves;
                s.period = period_index(*period);
            }
            Event::PositionSet { fen, .. } => match parse_fen(fen) {
                Ok(pos) => {
                    self.repetitions = vec![zobrist(&pos)];
                    self.position = Some(pos);
                    self.owed = None;
                }
                Err(_) => self.forget_position(),
            },
            Event::ClockReplaced {
                at,
                white_ms,
                black_ms,
                ..
            } => {
                self.clock.settle(*at);
                self.set_remaining(Color::White, *white_ms, *at);
                self.set_remaining(Color::Black, *black_ms, *at);
            }
            Event::GameEnded { at, result, .. } => {
                self.clock.stop(*at);
                self.phase = Phase::Finished;
                self.pending_flag = None;
                self.both_flags_order_unknown = false;
                self.result = Some(result.clone());
                self.adj.game_ended();
            }
            Event::SessionEndSet { .. }
            | Event::AdjournmentRulesSet { .. }
            | Event::AdjournmentOrdered { .. }
            | Event::ResumptionScheduled { .. }
            | Event::Sealed { .. }
            | Event::SealCommitted { .. }
            | Event::EnvelopeVerified { .. }
            | Event::DrawOffered { .. }
            | Event::DrawOfferAnswered { .. }
            | Event::ResumptionStarted { .. }
            | Event::EnvelopeOpened { .. }
            | Event::SealedMovePlayed { .. }
            | Event::CounterSealed { .. }
            | Event::EnvelopeLost { .. }
            | Event::TimeCorrected { .. }
            | Event::ResultAwaitsEnvelope { .. } => self.evolve_adjournment(event),
        }
    }

    /// Play a journaled move on the position.
    pub(super) fn play_uci(&mut self, uci: &str) {
        let played = self.position.as_ref().and_then(|pos| {
            let m = uci.parse::<UciMove>().ok()?.to_move(pos).ok()?;
            let irreversible = pos.is_irreversible(m);
            let mut after = pos.clone();
            after.play_unchecked(m);
            Some((after, irreversible))
        });
        match played {
            Some((after, irreversible)) => {
                if irreversible {
                    self.repetitions.clear();
                }
                self.repetitions.push(zobrist(&after));
                self.position = Some(after);
            }
            // Only a corrupt journal gets here: forget the position rather than keep a
            // wrong one.
            None => self.forget_position(),
        }
    }

    pub(super) fn forget_position(&mut self) {
        self.position = None;
        self.owed = None;
        self.repetitions.clear();
    }

    /// An arbiter's time (6.13): giving time back lifts a flag, and a clock frozen by
    /// the flag runs again.
    fn set_remaining(&mut self, side: Color, remaining: Millis, at: Millis) {
        let s = self.clock.side_mut(side);
        s.remaining = remaining;
        if remaining > Millis::ZERO {
            s.flagged_at = None;
            if self.pending_flag.as_ref().is_some_and(|p| p.side == side) {
                self.pending_flag = None;
            }
            self.both_flags_order_unknown = false;
            if self.phase == Phase::Running
                && self.clock.running_since.is_none()
                && !self.frozen()
                && self.clock_may_run()
            {
                self.clock.start(at);
            }
        }
    }

    pub(super) fn frozen(&self) -> bool {
        self.setup.clock.freeze_after_last_flag
            && Color::ALL
                .iter()
                .any(|c| self.clock.side(*c).flagged_at.is_some())
    }

    fn pause(&mut self, at: Millis, by: PausedBy) {
        if !matches!(self.phase, Phase::Paused(_)) {
            self.paused_since = Some(at);
        }
        self.clock.stop(at);
        self.phase = Phase::Paused(by);
    }

    /// The side to move starts thinking: its clock runs from `at`, with a fresh delay.
    pub(super) fn begin_turn(&mut self, at: Millis) {
        let side = self.clock.turn;
        let k = self.clock.side(side).period;
        self.clock.delay_left = self.period(side, k).delay();
        self.clock.start(at);
    }
}

/// See [`Game::completion`].
pub(super) struct Completion {
    pub increment: Millis,
    /// Remaining main time after the charge and the increment (before any period time).
    pub remaining: Millis,
    pub moves: u32,
    pub advance: Option<Event>,
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
