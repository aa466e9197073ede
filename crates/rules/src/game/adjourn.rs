//! The game's side of the adjournment procedure (Guidelines I): its state, decisions,
//! timers and evolution. A child of `game` so the imports run one way: this file uses the
//! game and the envelope (`rules::adjournment`); the envelope knows nothing of the game.
//! The decisions on the envelope itself (sealing, the commit, the opening, the sealed move
//! played, the counter-seal) are in the sibling `envelope.rs`.

use shakmaty::Position;

use super::super::adjournment::{
    AdjournmentRules, DrawOffer, Edition, Envelope, EnvelopeStatus, Resumption, Stage,
    Verification, check_move_text, commitment,
};
use super::super::color::{ByColor, Color};
use super::super::millis::Millis;
use super::{
    AdjournmentView, Arrival, Event, Game, Input, PausedBy, Phase, Rejection, Score, Termination,
    check_time, fen_of, require_arbiter,
};

/// A sealed move written and not yet committed (I.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSeal {
    pub commitment: String,
    pub on_board: bool,
}

/// The adjournment part of a game's state (all of it the fold of its events).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdjState {
    pub rules: AdjournmentRules,
    /// The nominal end of the current session.
    pub session_end: Option<Millis>,
    pub stage: Option<Stage>,
    /// Who sealed the move of the current adjournment.
    pub sealer: Option<Color>,
    pub pending: Option<PendingSeal>,
    pub envelopes: Vec<Envelope>,
    pub resumption: Option<Resumption>,
    pub draw_offer: Option<DrawOffer>,
    /// I.13: a move was completed since the resumption.
    pub first_move_done: bool,
    /// I.10: default time passed with an envelope unopened.
    pub awaiting_result: Option<Vec<Color>>,
}

impl AdjState {
    /// I.6: a game that ends before resumption keeps its envelope unopened.
    pub fn game_ended(&mut self) {
        for e in &mut self.envelopes {
            if e.status == EnvelopeStatus::Sealed {
                e.status = EnvelopeStatus::ArchivedUnopened;
            }
        }
        self.draw_offer = None;
        self.pending = None;
    }

    pub(super) fn last(&self) -> Option<&Envelope> {
        self.envelopes.last()
    }

    fn last_mut(&mut self) -> Option<&mut Envelope> {
        self.envelopes.last_mut()
    }
}

pub(super) fn not_now(reason: impl Into<String>) -> Rejection {
    Rejection::NotInThisStage {
        reason: reason.into(),
    }
}

fn check_resumption(r: &Resumption) -> Result<(), Rejection> {
    if let Some(end) = r.end
        && end <= r.start
    {
        return Err(Rejection::OutOfRange {
            field: "end",
            value: end.0,
            allowed: format!("after the start ({})", r.start.0),
        });
    }
    Ok(())
}

impl Game {
    /// Timer `SessionEnd`: armed while the game is played (not while sealing or
    /// adjourned) and a session end is known.
    pub(super) fn session_end_deadline(&self) -> Option<Millis> {
        match self.adj.stage {
            None | Some(Stage::Resumed) => self.adj.session_end.map(|t| t.max(self.last_at)),
            _ => None,
        }
    }

    /// Timer `ResumptionStart`.
    pub(super) fn resumption_deadline(&self) -> Option<Millis> {
        match self.adj.stage {
            Some(Stage::Adjourned) => self
                .adj
                .resumption
                .as_ref()
                .map(|r| r.start.max(self.last_at)),
            _ => None,
        }
    }

    /// Whether the clock of the side to move may run now: not while adjourned, and not
    /// while the player who must respond to an unopened envelope is at the board
    /// (I.9.1: the clock starts when the sealed move is played; I.9.2: on arrival the
    /// responder stops it until then).
    pub(super) fn clock_may_run(&self) -> bool {
        let waiting_for = |stage| {
            self.adj.stage == Some(stage)
                && (self.adj.awaiting_result.is_some()
                    || self
                        .adj
                        .last()
                        .is_some_and(|e| *self.present.get(e.sealer.other())))
        };
        self.adj.stage != Some(Stage::Adjourned)
            && !waiting_for(Stage::AwaitingOpening)
            && !waiting_for(Stage::AwaitingCounterOpening)
    }

    /// The player who must seal: the side to move on the board (a move made and not yet
    /// pressed is completed first), or the clock's side when the position is unknown.
    fn sealer_now(&self) -> Color {
        self.position
            .as_ref()
            .map(|p| Color::from(p.turn()))
            .unwrap_or(self.clock.turn)
    }

    fn order(&self, at: Millis, arbiter: Option<String>) -> Event {
        Event::AdjournmentOrdered {
            at,
            sealer: self.sealer_now(),
            arbiter,
            early: self.adj.session_end.is_some_and(|end| at < end),
        }
    }

    /// I.1.1: at the session end the arbiter requires the player to move to seal.
    pub(super) fn on_session_end(&self, due: Millis) -> Vec<Event> {
        vec![self.order(due, None)]
    }

    /// I.5 / I.9 / I.11: the resumption session begins.
    pub(super) fn on_resumption_start(&self, due: Millis) -> Vec<Event> {
        let (Some(resumption), Some(sealer)) = (self.adj.resumption.clone(), self.adj.sealer)
        else {
            return Vec::new();
        };
        vec![Event::ResumptionStarted {
            at: due,
            resumption,
            responder: sealer.other(),
            white_ms: self.clock.side(Color::White).remaining,
            black_ms: self.clock.side(Color::Black).remaining,
            fen: self.position.as_ref().map(fen_of),
        }]
    }

    /// I.10 / A10 at resumption: when an envelope is still unopened, whether the sealed
    /// move ended the game decides, so the result waits for the opening. `None`: the
    /// ordinary default (6.6) applies.
    ///
    /// Default time passes only with someone absent (`default_pending`), so `absent` is
    /// never empty here and is not tested for it: no input could reach that branch.
    pub(super) fn on_resumption_default(&self, at: Millis, absent: &[Color]) -> Option<Vec<Event>> {
        if !matches!(
            self.adj.stage,
            Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening)
        ) {
            return None;
        }
        let envelope = self
            .adj
            .last()
            .filter(|e| e.status == EnvelopeStatus::Sealed)?;
        // A10: the exceptions are only for a late sealer; a late responder simply loses.
        if self.adj.rules.edition == Edition::AppendixA && absent.contains(&envelope.sealer.other())
        {
            return None;
        }
        Some(vec![
            Event::DefaultTimePassed {
                at,
                absent: absent.to_vec(),
            },
            Event::ResultAwaitsEnvelope {
                at,
                absent: absent.to_vec(),
                envelope: envelope.number,
            },
        ])
    }

    /// What presses, moves and pauses mean while sealing or adjourned. `None`: the
    /// ordinary rules apply.
    pub(super) fn adjournment_gate(
        &self,
        input: &Input,
        now: Millis,
    ) -> Option<Result<Vec<Event>, Rejection>> {
        let stage = self.adj.stage?;
        if self.result.is_some() {
            return None;
        }
        match stage {
            Stage::Sealing => self.gate_sealing(input, now),
            Stage::Adjourned => match input {
                Input::Move { .. }
                | Input::Press { .. }
                | Input::PlayerPause { .. }
                | Input::Pause { .. }
                | Input::Resume { .. } => Some(Err(Rejection::Adjourned {
                    resumes: self.adj.resumption.as_ref().map(|r| r.start),
                })),
                _ => None,
            },
            Stage::AwaitingOpening | Stage::AwaitingCounterOpening => {
                self.gate_awaiting_opening(input, now)
            }
            Stage::Resumed => None,
        }
    }

    /// I.1.1: while the sealer seals, a move on the board is the sealed move, and the
    /// sealer's press commits it. The opponent's move is completed first (its press
    /// starts the sealer's clock): the ordinary rules.
    fn gate_sealing(&self, input: &Input, now: Millis) -> Option<Result<Vec<Event>, Rejection>> {
        let (side, mv) = match input {
            Input::Move { mv } => (None, Some(mv)),
            Input::Press { side, mv } => (*side, mv.as_ref()),
            _ => return None,
        };
        let sealer = self.adj.sealer?;
        if self.clock.turn != sealer {
            return None;
        }
        if let Some(side) = side
            && side != sealer
        {
            return Some(Err(Rejection::NotYourTurn {
                side,
                running: sealer,
            }));
        }
        Some(match mv {
            Some(mv) => Err(Rejection::MoveIsTheSealedMove {
                side: sealer,
                mv: mv.clone(),
            }),
            None => self.commit(now, None),
        })
    }

    /// I.7 / I.9 / I.12: before the envelope is opened no move counts, unless it is the
    /// stated move of a lost envelope; the arriving responder's press records the arrival.
    fn gate_awaiting_opening(
        &self,
        input: &Input,
        now: Millis,
    ) -> Option<Result<Vec<Event>, Rejection>> {
        match input {
            Input::Move { mv } | Input::Press { mv: Some(mv), .. }
                if self
                    .adj
                    .last()
                    .is_some_and(|e| e.status == EnvelopeStatus::Lost) =>
            {
                Some(self.stated_move(mv, now))
            }
            // I.9.2: "al llegar, el jugador puede detener su reloj": the arriving
            // responder's press stops the clock and records the arrival.
            Input::Press { side, mv: None } => {
                let waiting = self.adj.last()?.sealer.other();
                let arriving = !*self.present.get(waiting)
                    && self.clock.running() == Some(waiting)
                    && side.is_none_or(|s| s == waiting);
                Some(if arriving {
                    Ok(vec![Event::PlayerPresent {
                        at: now,
                        side: waiting,
                        arrival: Arrival::Press,
                    }])
                } else {
                    Err(Rejection::EnvelopeNotOpened)
                })
            }
            Input::Move { .. } | Input::Press { .. } => Some(Err(Rejection::EnvelopeNotOpened)),
            _ => None,
        }
    }

    /// I.1.1, I.1.2: the nominal end of the playing session (`None` clears it).
    pub(super) fn decide_set_session_end(
        &self,
        end: Option<Millis>,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if self.adj.stage == Some(Stage::Sealing) {
            return Err(not_now(
                "the session end cannot change while a move is being sealed (I.1.2 charges up to it)",
            ));
        }
        Ok(vec![Event::SessionEndSet {
            at: now,
            end,
            arbiter: arbiter.to_string(),
        }])
    }

    /// The event's adjournment rules, fixed before the game is adjourned.
    pub(super) fn decide_set_adjournment_rules(
        &self,
        rules: AdjournmentRules,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if self.adj.stage.is_some() {
            return Err(not_now(
                "the adjournment rules are fixed before the game is adjourned",
            ));
        }
        if let Some(t) = rules.resumption_default_time {
            check_time("resumption_default_time", t)?;
        }
        Ok(vec![Event::AdjournmentRulesSet {
            at: now,
            rules,
            arbiter: arbiter.to_string(),
        }])
    }

    /// I.1.1: the arbiter orders the game adjourned; the player to move must seal.
    pub(super) fn decide_adjourn(
        &self,
        arbiter: &str,
        resumption: Option<&Resumption>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        match &self.phase {
            Phase::Scheduled => {
                return Err(Rejection::NotStarted {
                    start: self.setup.start,
                });
            }
            Phase::Paused(PausedBy::Adjourned) => {
                return Err(Rejection::Adjourned {
                    resumes: self.adj.resumption.as_ref().map(|r| r.start),
                });
            }
            _ => {}
        }
        if !matches!(self.adj.stage, None | Some(Stage::Resumed)) {
            return Err(not_now(
                "the game is already being adjourned or has not resumed yet",
            ));
        }
        if let Some(r) = resumption {
            check_resumption(r)?;
        }
        let mut events = vec![self.order(now, Some(arbiter.to_string()))];
        if let Some(r) = resumption {
            events.push(Event::ResumptionScheduled {
                at: now,
                resumption: r.clone(),
                arbiter: arbiter.to_string(),
            });
        }
        Ok(events)
    }

    /// I.2.7, I.14: date, time and place of the resumption session.
    pub(super) fn decide_schedule_resumption(
        &self,
        resumption: &Resumption,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if !matches!(self.adj.stage, Some(Stage::Sealing | Stage::Adjourned)) {
            return Err(not_now(
                "a resumption is scheduled for a game being adjourned or adjourned",
            ));
        }
        check_resumption(resumption)?;
        Ok(vec![Event::ResumptionScheduled {
            at: now,
            resumption: resumption.clone(),
            arbiter: arbiter.to_string(),
        }])
    }

    /// I.1.1: the sealer writes the move; only its commitment enters the events.
    pub(super) fn decide_seal(
        &self,
        side: Option<Color>,
        mv: &str,
        nonce: &str,
        on_board: bool,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_if_over()?;
        let sealer = self.sealing()?;
        if let Some(side) = side
            && side != sealer
        {
            return Err(Rejection::NotTheSealer { side, sealer });
        }
        if self.adj.pending.as_ref().is_some_and(|p| p.on_board) {
            return Err(Rejection::SealIsFinal);
        }
        check_move_text(mv).map_err(|reason| Rejection::BadSealText { reason })?;
        let commitment = commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
        Ok(vec![Event::Sealed {
            at: now,
            side: sealer,
            commitment,
            on_board,
        }])
    }

    /// I.1.1 / A1a: the sealer (`arbiter: None`) or the arbiter stops the clock; the
    /// sealed move is committed.
    pub(super) fn decide_commit_seal(
        &self,
        arbiter: Option<&str>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_if_over()?;
        if let Some(a) = arbiter {
            require_arbiter(a)?;
        }
        let sealer = self.sealing()?;
        if self.clock.turn != sealer {
            return Err(Rejection::MovePending {
                side: self.clock.turn,
            });
        }
        self.commit(now, arbiter.map(str::to_string))
    }

    /// I.3: the arbiter checked the envelope.
    pub(super) fn decide_verify_envelope(
        &self,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let envelope = self
            .adj
            .envelopes
            .iter()
            .rev()
            .find(|e| e.status == EnvelopeStatus::Sealed)
            .ok_or_else(|| not_now("no sealed envelope to verify"))?;
        Ok(vec![Event::EnvelopeVerified {
            at: now,
            envelope: envelope.number,
            arbiter: arbiter.to_string(),
        }])
    }

    /// 9.1 / I.4: a draw offer, recorded.
    pub(super) fn decide_draw_offer(
        &self,
        side: Color,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        if self.phase == Phase::Scheduled {
            return Err(Rejection::NotStarted {
                start: self.setup.start,
            });
        }
        match &self.adj.draw_offer {
            Some(o) if o.side == side => Ok(Vec::new()),
            Some(o) => Err(not_now(format!(
                "{}'s draw offer stands; answer it (draw_reply)",
                o.side
            ))),
            None => Ok(vec![Event::DrawOffered {
                at: now,
                side,
                arbiter: arbiter.to_string(),
            }]),
        }
    }

    /// 9.1 / I.4 / I.6: the answer to the standing offer.
    pub(super) fn decide_draw_reply(
        &self,
        accept: bool,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let offer = self.adj.draw_offer.as_ref().ok_or(Rejection::NoDrawOffer)?;
        let side = offer.side.other();
        let mut events = vec![Event::DrawOfferAnswered {
            at: now,
            side,
            accepted: accept,
            arbiter: arbiter.to_string(),
        }];
        if accept {
            // I.6: before resumption this ends the game with the envelope unopened.
            events.push(self.ended(
                now,
                Score::Draw,
                Termination::Arbiter {
                    kind: super::ArbiterResult::AgreedDraw,
                    arbiter: arbiter.to_string(),
                    reason: format!("{side} accepted {}'s draw offer", offer.side),
                },
            ));
        }
        Ok(events)
    }

    /// I.12.1: the envelope is lost; the sealer states the move and makes it on the board.
    pub(super) fn decide_envelope_lost(
        &self,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let envelope = self
            .adj
            .last()
            .filter(|e| e.status == EnvelopeStatus::Sealed)
            .ok_or_else(|| not_now("no sealed envelope is in custody"))?;
        Ok(vec![Event::EnvelopeLost {
            at: now,
            envelope: envelope.number,
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// I.13: a clock time shown wrong at resumption, before the first move, is corrected.
    pub(super) fn decide_correct_time(
        &self,
        side: Color,
        remaining: Millis,
        arbiter: &str,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        check_time("remaining", remaining)?;
        let open = match self.adj.stage {
            Some(Stage::Adjourned | Stage::AwaitingOpening) => true,
            Some(Stage::Resumed | Stage::AwaitingCounterOpening) => !self.adj.first_move_done,
            _ => false,
        };
        if !open {
            return Err(Rejection::CorrectionWindowClosed);
        }
        Ok(vec![Event::TimeCorrected {
            at: now,
            side,
            remaining_ms: remaining,
            previous_ms: self.clock.remaining_at(side, now),
            arbiter: arbiter.to_string(),
            reason: reason.to_string(),
        }])
    }

    /// The adjournment events. Called by `evolve` only.
    pub(super) fn evolve_adjournment(&mut self, event: &Event) {
        match event {
            Event::SessionEndSet { end, .. } => self.adj.session_end = *end,
            Event::AdjournmentRulesSet { rules, .. } => self.adj.rules = *rules,
            Event::AdjournmentOrdered { sealer, .. } => {
                self.adj.stage = Some(Stage::Sealing);
                self.adj.sealer = Some(*sealer);
                self.adj.pending = None;
                self.adj.resumption = None;
            }
            Event::ResumptionScheduled { resumption, .. } => {
                self.adj.resumption = Some(resumption.clone());
                if let Some(e) = self.adj.last_mut()
                    && e.status == EnvelopeStatus::Sealed
                    && !e.counter_seal
                {
                    e.resumption = Some(resumption.clone());
                }
            }
            Event::Sealed {
                commitment,
                on_board,
                ..
            } => {
                self.adj.pending = Some(PendingSeal {
                    commitment: commitment.clone(),
                    on_board: *on_board,
                });
            }
            Event::SealCommitted {
                side,
                charged_ms,
                remaining_ms,
                moves,
                envelope,
                ..
            } => {
                // A1a: the clock stops without starting the opponent's. The charge (up to
                // the nominal session end, I.1.2) is in the event.
                self.clock.running_since = None;
                self.clock.delay_left = Millis::ZERO;
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                s.used += *charged_ms;
                s.moves = *moves;
                self.clock.pass_turn(side.other());
                self.phase = Phase::Paused(PausedBy::Adjourned);
                self.paused_since = None;
                // No default time between sessions; presence is taken again (I.9).
                self.default_done = true;
                self.present = ByColor::default();
                self.adj.stage = Some(Stage::Adjourned);
                self.adj.pending = None;
                self.adj.first_move_done = false;
                self.adj.awaiting_result = None;
                self.adj.envelopes.push((**envelope).clone());
            }
            Event::EnvelopeVerified {
                at,
                envelope,
                arbiter,
            } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.verified = Some(Verification {
                        at: *at,
                        arbiter: arbiter.clone(),
                    });
                }
            }
            Event::DrawOffered { at, side, .. } => {
                self.adj.draw_offer = Some(DrawOffer {
                    side: *side,
                    at: *at,
                });
            }
            Event::DrawOfferAnswered { .. } => self.adj.draw_offer = None,
            Event::ResumptionStarted {
                at,
                resumption,
                responder,
                ..
            } => {
                self.phase = Phase::Running;
                self.paused_since = None;
                self.paused_total = Millis::ZERO;
                // I.10: default time counts from the resumption.
                self.default_base = *at;
                self.default_len = self.adj.rules.resumption_default(self.setup.default_time);
                self.default_done = false;
                self.adj.session_end = resumption.end;
                self.adj.stage = Some(Stage::AwaitingOpening);
                self.clock.pass_turn(*responder);
                let k = self.clock.side(*responder).period;
                self.clock.delay_left = self.period(*responder, k).delay();
                // I.9.2 / I.11: the responder's clock runs from the resumption time unless
                // the responder is there to see the envelope opened (I.9.1).
                if self.clock_may_run() {
                    self.clock.start(*at);
                }
            }
            Event::EnvelopeOpened {
                at,
                envelope,
                opening,
            } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.status = EnvelopeStatus::Opened;
                    e.opened_at = Some(*at);
                    e.opened = Some(opening.clone());
                }
            }
            Event::SealedMovePlayed { at, side, uci, .. } => {
                self.play_uci(uci);
                self.adj.stage = Some(Stage::Resumed);
                // Already the responder's turn since the resumption: the time its clock ran
                // before the opening (I.9.2) stays part of this turn's cost.
                self.clock.turn = side.other();
                if self.phase == Phase::Running
                    && self.clock.running_since.is_none()
                    && self.adj.awaiting_result.is_none()
                    && !self.frozen()
                {
                    self.clock.start(*at);
                }
            }
            Event::CounterSealed {
                at,
                side,
                remaining_ms,
                moves,
                envelope,
                ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                s.moves = *moves;
                self.clock.pass_turn(side.other());
                self.adj.stage = Some(Stage::AwaitingCounterOpening);
                self.adj.envelopes.push((**envelope).clone());
                self.begin_turn(*at);
                if !self.clock_may_run() {
                    self.clock.stop(*at);
                }
            }
            Event::EnvelopeLost { envelope, .. } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.status = EnvelopeStatus::Lost;
                }
            }
            // As 6.13's arbiter times: a time above zero lifts the flag and its pending
            // claim (a flag the wrong time caused must not be confirmed after the
            // correction), and a clock frozen by it runs again.
            Event::TimeCorrected {
                at,
                side,
                remaining_ms,
                ..
            } => {
                self.clock.settle(*at);
                self.set_remaining(*side, *remaining_ms, *at);
            }
            Event::ResultAwaitsEnvelope { at, absent, .. } => {
                self.adj.awaiting_result = Some(absent.clone());
                self.clock.stop(*at);
            }
            _ => {}
        }
    }

    pub(super) fn adjournment_view(&self) -> Option<AdjournmentView> {
        let stage = self.adj.stage?;
        Some(AdjournmentView {
            stage,
            sealer: self.adj.sealer,
            sealed: self.adj.pending.is_some(),
            resumption: self.adj.resumption.clone(),
            envelopes: self.adj.envelopes.clone(),
            result_awaits_envelope: self.adj.awaiting_result.is_some(),
            correction_window: match stage {
                Stage::Adjourned | Stage::AwaitingOpening => true,
                Stage::Resumed | Stage::AwaitingCounterOpening => !self.adj.first_move_done,
                Stage::Sealing => false,
            },
            rules: self.adj.rules,
        })
    }
}
