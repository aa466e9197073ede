//! The arbiter's acts on a game in play (Article 6: 6.6, 6.8, 6.10, 6.12, 6.13; 7.1, 7.5):
//! one method each. What every act of a group needs (a named arbiter, a reason, a game not
//! over) was checked before dispatch (`Game::decide_now`, `Who`).

use super::super::color::Color;
use super::super::millis::Millis;
use super::{
    ArbiterResult, Arrival, Event, Game, MAX_CLOCK, Phase, Rejection, Score, Termination,
    check_time, fen_of, parse_fen, period_number,
};

impl Game {
    /// 6.6: the arbiter records a player present (the game may not have started yet).
    pub(super) fn decide_present(&self, side: Color, arbiter: &str, now: Millis) -> Vec<Event> {
        if *self.present.get(side) {
            return Vec::new();
        }
        vec![Event::PlayerPresent {
            at: now,
            side,
            arrival: Arrival::Arbiter {
                arbiter: arbiter.to_string(),
            },
        }]
    }

    /// 6.12a: the arbiter stops the clocks; they may take over a pause a player started
    /// (6.12b -> 6.12a).
    pub(super) fn decide_pause(
        &self,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        match &self.phase {
            Phase::Scheduled => Err(Rejection::NotStarted {
                start: self.setup.start,
            }),
            _ => Ok(vec![Event::Paused {
                at: now,
                arbiter: arbiter.to_string(),
                reason: reason.to_string(),
            }]),
        }
    }

    /// 6.12c: only the arbiter restarts the clocks.
    pub(super) fn decide_resume(
        &self,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        match self.phase {
            Phase::Paused(_) => Ok(vec![Event::Resumed {
                at: now,
                arbiter: arbiter.to_string(),
            }]),
            _ => Err(Rejection::NotPaused),
        }
    }

    /// 6.13 / 7.5: a side's remaining time, set.
    pub(super) fn decide_set_time(
        &self,
        side: Color,
        remaining: Millis,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        check_time("remaining", remaining)?;
        Ok(vec![Event::TimeSet {
            at: now,
            side,
            remaining_ms: remaining,
            previous_ms: self.clock.remaining_at(side, now),
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// 6.13 / 7.5 / 12.9: time added, or (negative) taken off.
    pub(super) fn decide_add_time(
        &self,
        side: Color,
        delta: Millis,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let before = self.clock.remaining_at(side, now);
        let after = before + delta;
        // A control may give more than the cap (up to 240 h): time can always be taken
        // off such a clock, only not added to it.
        let ceiling = MAX_CLOCK.max(before);
        if after < Millis::ZERO || after > ceiling {
            return Err(Rejection::OutOfRange {
                field: "delta",
                value: delta.0,
                allowed: format!("-{} to +{} with {} left", before, ceiling - before, before),
            });
        }
        Ok(vec![Event::TimeAdded {
            at: now,
            side,
            delta_ms: delta,
            remaining_ms: after,
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// 6.10.2 / 7.1: the move counter, and the period (derived from it when absent).
    pub(super) fn decide_set_moves(
        &self,
        side: Color,
        moves: u32,
        period: Option<u32>,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if moves > 10_000 {
            return Err(Rejection::OutOfRange {
                field: "moves",
                value: i64::from(moves),
                allowed: "0 to 10000".into(),
            });
        }
        let period = match period {
            Some(0) | Some(1001..) => {
                return Err(Rejection::OutOfRange {
                    field: "period",
                    value: i64::from(period.unwrap_or(0)),
                    allowed: "1 to 1000".into(),
                });
            }
            Some(p) => p,
            None => period_number(self.period_for_moves(side, moves)),
        };
        Ok(vec![Event::MovesSet {
            at: now,
            side,
            moves,
            period,
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// 7.1: the position, for clock-only boards or after an irregularity.
    pub(super) fn decide_set_position(
        &self,
        fen: &str,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let pos = parse_fen(fen).map_err(|reason| Rejection::BadFen { reason })?;
        Ok(vec![Event::PositionSet {
            at: now,
            fen: fen_of(&pos),
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// 6.10: the game continues on another device, with times set by the arbiter
    /// (unchanged when omitted).
    pub(super) fn decide_replace_clock(
        &self,
        device: &str,
        white: Option<Millis>,
        black: Option<Millis>,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        // Only the arbiter's times are checked: a time kept may exceed the cap when the
        // control gives more.
        if let Some(t) = white {
            check_time("white", t)?;
        }
        if let Some(t) = black {
            check_time("black", t)?;
        }
        let white = white.unwrap_or(self.clock.remaining_at(Color::White, now));
        let black = black.unwrap_or(self.clock.remaining_at(Color::Black, now));
        Ok(vec![Event::ClockReplaced {
            at: now,
            device: device.to_string(),
            white_ms: white,
            black_ms: black,
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// 6.8 in claim mode, or after a flag whose 6.9 verdict was pending.
    pub(super) fn decide_confirm_flag(
        &self,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let Some(pending) = &self.pending_flag else {
            return Err(Rejection::NoPendingFlag);
        };
        match self.flag_verdict(now, pending.side) {
            Event::GameEnded {
                result, replaces, ..
            } => Ok(vec![Event::GameEnded {
                at: now,
                result,
                replaces,
                confirmed_by: Some(arbiter.to_string()),
            }]),
            Event::ResultPending { reason, .. } => Err(Rejection::VerdictUnknown { reason }),
            _ => Err(Rejection::NoPendingFlag),
        }
    }

    /// The arbiter's result (9.1, 5.1b resignation, 7.5.5, an annulment); it may replace
    /// a result already recorded.
    pub(super) fn decide_set_result(
        &self,
        result: ArbiterResult,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if reason.trim().is_empty() {
            return Err(Rejection::ReasonRequired { what: "set_result" });
        }
        let score = match result {
            ArbiterResult::AgreedDraw => Score::Draw,
            ArbiterResult::Resignation { side } => Score::win_for(side.other()),
            ArbiterResult::IllegalMoves { side } => self.illegal_moves_score(side),
            ArbiterResult::Annulled => Score::Annulled,
            ArbiterResult::Score { score } => score,
        };
        Ok(vec![self.ended(
            now,
            score,
            Termination::Arbiter {
                kind: result,
                arbiter: arbiter.to_string(),
                reason: reason.to_string(),
            },
        )])
    }

    /// 6.10: the arbiter has seen the open clock discrepancy and keeps the official times.
    pub(super) fn decide_acknowledge_discrepancy(
        &self,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if self.discrepancy.is_none() {
            return Err(Rejection::NoDiscrepancy);
        }
        Ok(vec![Event::DiscrepancyAcknowledged {
            at: now,
            arbiter: arbiter.to_string(),
        }])
    }
}
