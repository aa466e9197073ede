//! The envelope side of the adjournment (Guidelines I): who seals, the envelope and the
//! times written on it, the commit that stops the sealer's clock, the opening and the
//! sealed (or stated) move played, and the counter-seal. Another `impl Game` block, split
//! from `adjourn.rs` (which keeps the adjournment's state, gates, timers and evolution).

use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Position};

use super::super::adjournment::{
    Envelope, EnvelopeStatus, EnvelopeTime, Opening, SealedVerdict, Stage, check_move_text,
    commitment, read_sealed_move,
};
use super::super::color::{ByColor, Color};
use super::super::dead_position::{self, MateVerdict};
use super::super::millis::Millis;
use super::adjourn::not_now;
use super::{Event, Game, MoveError, Rejection, Score, Termination, fen_of, parse_move};

impl Game {
    /// The player ordered to seal, while sealing.
    pub(super) fn sealing(&self) -> Result<Color, Rejection> {
        match (self.adj.stage, self.adj.sealer) {
            (Some(Stage::Sealing), Some(sealer)) => Ok(sealer),
            _ => Err(not_now(
                "no move is being sealed (the arbiter orders it: adjourn, or the session end)",
            )),
        }
    }

    fn times(&self, now: Millis) -> ByColor<EnvelopeTime> {
        ByColor::new_with(|c| EnvelopeTime {
            used_ms: self.clock.side(c).used
                + self
                    .clock
                    .charge(now)
                    .main
                    .min(if self.clock.running() == Some(c) {
                        Millis(i64::MAX)
                    } else {
                        Millis::ZERO
                    }),
            remaining_ms: self.clock.remaining_at(c, now),
        })
    }

    fn envelope(
        &self,
        sealer: Color,
        counter_seal: bool,
        commitment: String,
        times: ByColor<EnvelopeTime>,
        now: Millis,
    ) -> Envelope {
        let name = |c: Color| match c {
            Color::White => self.setup.white.clone(),
            Color::Black => self.setup.black.clone(),
        };
        Envelope {
            number: u32::try_from(self.adj.envelopes.len() + 1).unwrap_or(u32::MAX),
            counter_seal,
            white: name(Color::White),
            black: name(Color::Black),
            fen: self.position.as_ref().map(fen_of),
            white_time: times.white,
            black_time: times.black,
            sealer,
            sealer_name: name(sealer),
            move_number: self
                .position
                .as_ref()
                .map(|p| p.fullmoves().get())
                .unwrap_or(self.clock.side(sealer).moves + 1),
            draw_offer: self.adj.draw_offer.clone(),
            resumption: self.adj.resumption.clone(),
            sealed_at: now,
            commitment,
            status: EnvelopeStatus::Sealed,
            verified: None,
            opened_at: None,
            opened: None,
        }
    }

    /// I.1.1 / I.1.2 / A1a: the sealer's clock stops; the move is committed.
    pub(super) fn commit(
        &self,
        now: Millis,
        arbiter: Option<String>,
    ) -> Result<Vec<Event>, Rejection> {
        let sealer = self.sealing()?;
        let pending = self
            .adj
            .pending
            .as_ref()
            .ok_or(Rejection::SealFirst { side: sealer })?;
        // I.1.2: adjourned before the session's end, the sealer is deemed to have sealed
        // at the nominal end time; at or after it, the charge runs to now. `max` rather
        // than a test `end > now`, whose boundary (`end == now`) no input can tell apart.
        let charged_to = match self.adj.session_end {
            Some(end) if self.clock.running() == Some(sealer) => end.max(now),
            _ => now,
        };
        let charged = self.clock.charge(charged_to).main;
        let done = self.completion(sealer, charged, now);
        let mut times = self.times(now);
        let sealer_time = times.get_mut(sealer);
        sealer_time.used_ms = self.clock.side(sealer).used + charged;
        sealer_time.remaining_ms = match &done.advance {
            Some(Event::PeriodAdvanced { remaining_ms, .. }) => *remaining_ms,
            _ => done.remaining,
        };
        let envelope = self.envelope(sealer, false, pending.commitment.clone(), times, now);
        let mut events = vec![Event::SealCommitted {
            at: now,
            side: sealer,
            charged_ms: charged,
            charged_to,
            increment_ms: done.increment,
            remaining_ms: done.remaining,
            moves: done.moves,
            arbiter,
            envelope: Box::new(envelope),
        }];
        events.extend(done.advance);
        Ok(events)
    }

    /// I.7 / I.8 / I.9: open the envelope waiting to be opened.
    pub(super) fn decide_open_envelope(
        &self,
        mv: &str,
        nonce: &str,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let envelope = match self.adj.stage {
            Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening) => self
                .adj
                .last()
                .filter(|e| e.status == EnvelopeStatus::Sealed),
            _ => None,
        }
        .ok_or_else(|| {
            not_now("no envelope is waiting to be opened (it opens at the resumption, I.7, I.9)")
        })?;
        let responder = envelope.sealer.other();
        // I.7, except that once default time has passed (I.10) the opening only decides
        // whether the sealed move ended the game.
        if !*self.present.get(responder) && self.adj.awaiting_result.is_none() {
            return Err(Rejection::ResponderAbsent { side: responder });
        }
        let check = commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
        if check != envelope.commitment {
            return Err(Rejection::CommitmentMismatch {
                envelope: envelope.number,
            });
        }
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let verdict = read_sealed_move(pos, mv, self.adj.rules.notation_language);
        let mut events = vec![Event::EnvelopeOpened {
            at: now,
            envelope: envelope.number,
            opening: Opening {
                arbiter: arbiter.to_string(),
                move_text: mv.to_string(),
                nonce: nonce.to_string(),
                verdict: verdict.clone(),
            },
        }];
        match &verdict {
            SealedVerdict::Legal { uci, .. } => {
                events.extend(self.play_sealed(
                    uci,
                    envelope.sealer,
                    Some(envelope.number),
                    now,
                )?);
            }
            _ => {
                // I.8: the sealer loses, except in the cases of Articles 5, 6.9, 9.6 and
                // 9.7. A game already decided by 5 or 9.6 is not adjourned any more; what
                // remains is 6.9: an opponent who could not mate by any series of legal
                // moves only draws.
                let (score, termination) = match dead_position::can_mate(pos, responder.into()) {
                    MateVerdict::CannotMate { .. } => (
                        Score::Draw,
                        Termination::InvalidSealedMoveOpponentCannotMate {
                            side: envelope.sealer,
                            verdict,
                        },
                    ),
                    _ => (
                        Score::win_for(responder),
                        Termination::InvalidSealedMove {
                            side: envelope.sealer,
                            verdict,
                        },
                    ),
                };
                events.push(self.ended(now, score, termination));
            }
        }
        Ok(events)
    }

    /// The sealed (or stated) move is played; a move that ends the game ends it (I.10:
    /// that result prevails); otherwise a default that waited for it applies.
    fn play_sealed(
        &self,
        uci: &str,
        side: Color,
        envelope: Option<u32>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let m = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(pos).ok())
            .ok_or_else(|| Rejection::BadMove {
                mv: uci.to_string(),
                reason: MoveError::Illegal,
            })?;
        let mut after = pos.clone();
        after.play_unchecked(m);
        let mut events = vec![Event::SealedMovePlayed {
            at: now,
            side,
            uci: uci.to_string(),
            san: San::from_move(pos, m).to_string(),
            fen: fen_of(&after),
            envelope,
        }];
        if let Some((score, termination)) = self.ending_after(&after, pos.is_irreversible(m)) {
            events.push(self.ended(now, score, termination));
        } else if let Some(absent) = &self.adj.awaiting_result {
            events.extend(self.default_result(now, absent.clone()));
        }
        Ok(events)
    }

    /// I.12.1: with the envelope lost, the sealer makes the move they state they sealed.
    pub(super) fn stated_move(&self, mv: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
        let envelope = self.adj.last().ok_or(Rejection::EnvelopeNotOpened)?;
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let m = parse_move(pos, mv).map_err(|reason| Rejection::BadMove {
            mv: mv.to_string(),
            reason,
        })?;
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        self.play_sealed(&uci, envelope.sealer, None, now)
    }

    /// I.9.3: the responder seals the reply for the absent sealer.
    pub(super) fn decide_counter_seal(
        &self,
        mv: &str,
        nonce: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        self.reject_unless_playing()?;
        let sealer = self
            .adj
            .sealer
            .ok_or_else(|| not_now("the game was not adjourned"))?;
        let responder = sealer.other();
        let opened_original = self
            .adj
            .last()
            .is_some_and(|e| !e.counter_seal && e.status == EnvelopeStatus::Opened);
        if self.adj.stage != Some(Stage::Resumed)
            || !opened_original
            || self.adj.first_move_done
            || self.clock.turn != responder
        {
            return Err(not_now(
                "I.9.3: a counter-seal is the responder's reply to the opened sealed move",
            ));
        }
        if *self.present.get(sealer) {
            return Err(not_now(format!(
                "I.9.3: only while the player who sealed ({sealer}) is absent"
            )));
        }
        check_move_text(mv).map_err(|reason| Rejection::BadSealText { reason })?;
        let commitment = commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
        let charged = self.clock.charge(now).main;
        let done = self.completion(responder, charged, now);
        let mut times = self.times(now);
        times.get_mut(responder).remaining_ms = match &done.advance {
            Some(Event::PeriodAdvanced { remaining_ms, .. }) => *remaining_ms,
            _ => done.remaining,
        };
        let envelope = self.envelope(responder, true, commitment, times, now);
        let mut events = vec![Event::CounterSealed {
            at: now,
            side: responder,
            charged_ms: charged,
            increment_ms: done.increment,
            remaining_ms: done.remaining,
            moves: done.moves,
            envelope: Box::new(envelope),
        }];
        events.extend(done.advance);
        Ok(events)
    }
}
