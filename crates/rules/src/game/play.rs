//! The players' acts (Article 6): a move, a press, a player's pause, a clock reading,
//! and what a completed move costs and earns. Another `impl Game` block, split from
//! `game.rs` by job; `decide` dispatches here.

use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Position};

use super::super::color::Color;
use super::super::dead_position::{self, MateVerdict};
use super::super::millis::Millis;
use super::super::time_control::{IncrementCredit, PeriodTransition, TimeControl};
use super::{
    Arrival, Event, FlagMode, Game, Owed, Phase, Rejection, Score, Termination, fen_of, parse_move,
    period_number, zobrist,
};

/// How far the reckoning may run above a hand-set clock's display: the second the display
/// rounds up, taken as shown, and a fifth of a second for the frame's travel.
pub const OBSERVE_ABOVE: Millis = Millis(1_200);
/// How far it may run below it: the second of rounding and half a second of travel.
pub const OBSERVE_BELOW: Millis = Millis(1_500);

impl Game {
    /// 6.7a: a move made on the board, also one owed to a press that came first.
    pub(super) fn decide_move_input(&self, mv: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
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
    pub(super) fn decide_player_pause(
        &self,
        side: Option<Color>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_unless_playing()?;
        let side = side.unwrap_or(self.clock.turn);
        Ok(vec![Event::PausedByPlayer { at: now, side }])
    }

    /// 7.5.5: the offender loses, but it is a draw when the opponent cannot mate.
    pub(super) fn illegal_moves_score(&self, offender: Color) -> Score {
        match &self.position {
            Some(pos) => match dead_position::can_mate(pos, offender.other().into()) {
                MateVerdict::CannotMate { .. } => Score::Draw,
                _ => Score::win_for(offender.other()),
            },
            None => Score::win_for(offender.other()),
        }
    }

    /// The first period whose quota is not met after `moves` completed moves.
    pub(super) fn period_for_moves(&self, side: Color, moves: u32) -> usize {
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

    pub(super) fn decide_reading(&self, white: Millis, black: Millis, now: Millis) -> Vec<Event> {
        let flagged = |c: Color| self.clock.side(c).flagged_at.is_some();
        let reckoned_white = self.clock.remaining_at(Color::White, now);
        let reckoned_black = self.clock.remaining_at(Color::Black, now);
        // abs_diff: a hostile reading (i64::MIN) has no i64 absolute value.
        let off = |a: Millis, b: Millis| {
            a.0.abs_diff(b.0) > self.setup.discrepancy_margin.0.unsigned_abs()
        };
        // 6.11 from a display: both at 0:00 is a double flag only where the reckoning
        // agrees, both sides within the margin of 0:00 (an outage in which both ran out).
        // A clock that shows 0:00 against minutes of reckoned time has lost its time (a
        // reset, a swap, a time never set): a discrepancy for the arbiter, not two flags
        // that would stop the reckoning of a game still on.
        if white <= Millis::ZERO
            && black <= Millis::ZERO
            && !off(white, reckoned_white)
            && !off(black, reckoned_black)
            && !flagged(Color::White)
            && !flagged(Color::Black)
            && self.result.is_none()
        {
            return vec![Event::BothFlagsOrderUnknown { at: now }];
        }
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

    /// Observe mode: a hand-set clock's display (whole seconds, rounded up as a DGT
    /// clock shows them) against the reckoning. The reckoning follows the display: taken
    /// as shown, it runs up to a second ahead of the clock's true time, and a frame
    /// arrives a little late, so a reckoning `r` agrees with a display `d` when
    /// `d - OBSERVE_BELOW < r <= d + OBSERVE_ABOVE`; a side outside that is set to what
    /// the clock shows, and a clock at 0:00 is always taken (its flag is the official
    /// one). A flagged side keeps its flag (its clock may still show a second the
    /// reckoning has spent), and nothing is adopted before the clock starts or after the
    /// result.
    pub(super) fn decide_clock_times(
        &self,
        white: Millis,
        black: Millis,
        now: Millis,
    ) -> Vec<Event> {
        if self.phase != Phase::Running || self.result.is_some() {
            return Vec::new();
        }
        let reckoned_white = self.clock.remaining_at(Color::White, now);
        let reckoned_black = self.clock.remaining_at(Color::Black, now);
        let adopt = |c: Color, shown: Millis, reckoned: Millis| {
            self.clock.side(c).flagged_at.is_none()
                && (reckoned > shown + OBSERVE_ABOVE
                    || reckoned + OBSERVE_BELOW <= shown
                    || (shown <= Millis::ZERO && reckoned > Millis::ZERO))
        };
        let (aw, ab) = (
            adopt(Color::White, white, reckoned_white),
            adopt(Color::Black, black, reckoned_black),
        );
        if !aw && !ab {
            return Vec::new();
        }
        vec![Event::ClockTimesAdopted {
            at: now,
            white_ms: if aw { white } else { reckoned_white },
            black_ms: if ab { black } else { reckoned_black },
            reckoned_white_ms: reckoned_white,
            reckoned_black_ms: reckoned_black,
        }]
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

    pub(super) fn decide_press(
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
}

/// See [`Game::completion`].
pub(super) struct Completion {
    pub increment: Millis,
    /// Remaining main time after the charge and the increment (before any period time).
    pub remaining: Millis,
    pub moves: u32,
    pub advance: Option<Event>,
}
