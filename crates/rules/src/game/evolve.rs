//! `evolve`, the game's only mutator, and the helpers it folds events with. Another
//! `impl Game` block, split from `game.rs` by job; the adjournment's events are folded
//! in `adjourn.rs` (`evolve_adjournment`).

use shakmaty::Position;
use shakmaty::uci::UciMove;

use super::super::adjournment::Stage;
use super::super::color::Color;
use super::super::millis::Millis;
use super::{
    Discrepancy, Event, Game, MAX_OWED_PLIES, Owed, PausedBy, PendingFlag, Phase, parse_fen,
    period_index, zobrist,
};

impl Game {
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
                    code: super::view::pending_code(reason).to_string(),
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
            Event::ClockTimesAdopted {
                at,
                white_ms,
                black_ms,
                ..
            } => {
                self.clock.settle(*at);
                self.set_remaining(Color::White, *white_ms, *at);
                self.set_remaining(Color::Black, *black_ms, *at);
            }
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

    fn forget_position(&mut self) {
        self.position = None;
        self.owed = None;
        self.repetitions.clear();
    }

    /// An arbiter's time (6.13): giving time back lifts a flag, and a clock frozen by
    /// the flag runs again.
    pub(super) fn set_remaining(&mut self, side: Color, remaining: Millis, at: Millis) {
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
