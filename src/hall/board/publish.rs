//! The board actor's storage and publishing: its alerts (through the book in
//! `alerts.rs`), its retained state and PGN, and the one place where the core's events
//! are applied, journaled and then published.

use super::*;
use crate::alert::Said;
use serde_json::json;

impl BoardActor {
    pub(super) fn now(&self) -> Millis {
        self.timebase.now()
    }

    pub(super) fn raise(&mut self, kind: AlertKind, severity: Severity, message: impl Into<Said>) {
        let now = self.now();
        self.raise_since(kind, severity, message, now);
    }

    /// Raise an alert that dates from `since` (an alert rebuilt from the journal keeps
    /// the instant of the event that caused it).
    pub(super) fn raise_since(
        &mut self,
        kind: AlertKind,
        severity: Severity,
        message: impl Into<Said>,
        since: Millis,
    ) {
        self.raise_with(kind, severity, message, since, None);
    }

    /// Raise an alert; `error` is the code of the refusal it reports, if any.
    pub(super) fn raise_with(
        &mut self,
        kind: AlertKind,
        severity: Severity,
        message: impl Into<Said>,
        since: Millis,
        error: Option<String>,
    ) {
        let Some(payload) = self.alerts.raise(kind, severity, message, since, error) else {
            return;
        };
        let message = &payload.message;
        match severity {
            Severity::Critical | Severity::Warning => {
                tracing::warn!(board = %self.id, alert = kind.slug(), "{}", crate::intake::command::log_safe(message))
            }
            Severity::Info => {
                tracing::info!(board = %self.id, alert = kind.slug(), "{}", crate::intake::command::log_safe(message))
            }
        }
        self.publisher
            .json_retained(self.topics.alert(&payload.id), &payload);
    }

    pub(super) fn clear(&mut self, kind: AlertKind) {
        if let Some(id) = self.alerts.clear(kind) {
            tracing::info!(board = %self.id, alert = kind.slug(), "resolved");
            self.publisher.clear_alert(&self.topics, &id);
        }
    }

    /// A retained alert from before this start: the book decides (`Alerts::stale`).
    pub(super) fn on_stale_alert(&mut self, alert: AlertPayload) {
        if let Stale::Clear(id) = self.alerts.stale(&alert) {
            tracing::info!(board = %self.id, alert = alert.kind.slug(), "alert from before the restart is resolved; cleared");
            self.publisher.clear_alert(&self.topics, &id);
        }
    }

    pub(super) fn publish_availability(&self) {
        let payload = if self.online { ONLINE } else { OFFLINE };
        self.publisher.retained(
            self.topics.availability(&self.id),
            payload.as_bytes().to_vec(),
        );
    }

    pub(super) fn state(&self, now: Millis) -> StatePayload {
        let mut state = match &self.slot {
            None => StatePayload::idle(
                &self.id,
                self.published_seq,
                now,
                self.online,
                self.placement.white,
            ),
            Some(s) => StatePayload::from_view(
                &self.id,
                self.published_seq,
                &s.game.view(now),
                self.online,
                s.round,
                self.placement.white,
                s.fide,
                s.game.setup().tc.to_string(),
            ),
        };
        state.observed = self.observing();
        state
    }

    /// The retained state. Held back while events wait for the disk: a state must not
    /// show what no stored event explains.
    pub(super) fn publish_state(&self) {
        if !self.unstored.is_empty() {
            return;
        }
        let state = self.state(self.now());
        self.publisher
            .json_retained(self.topics.state(&self.id), &state);
        self.publish_pgn();
    }

    /// The retained PGN of the board's game (empty: no game), when it changed.
    pub(super) fn publish_pgn(&self) {
        let shown = self.slot.as_ref().map(|s| (s.id, s.events.len()));
        if self.pgn_shown.get() == Some(shown) {
            return;
        }
        self.pgn_shown.set(Some(shown));
        let text = match &self.slot {
            None => Vec::new(),
            Some(s) => {
                let info = crate::pgn::GameInfo {
                    round: s.round,
                    board: crate::pgn::board_number(&self.id),
                    white_fide_id: s.fide.0,
                    black_fide_id: s.fide.1,
                    ..crate::pgn::GameInfo::default()
                };
                let text = crate::pgn::game(s.game.setup(), &s.events, &info)
                    .render()
                    .into_bytes();
                if let Some(round) = s.round {
                    self.feed.game(
                        crate::broadcast::FeedGame {
                            game_id: s.id,
                            board: self.id.clone(),
                            info,
                            body: crate::broadcast::view::Body::Events {
                                setup: Box::new(s.game.setup().clone()),
                                events: s.events.clone(),
                            },
                            finished: s.game.result().is_some(),
                        },
                        round,
                    );
                }
                text
            }
        };
        self.publisher.retained(self.topics.pgn(&self.id), text);
    }

    /// Evolve, journal, then publish: the only way the game changes. Nobody is told about
    /// an event before it is on disk; if the disk fails, the game goes on in memory (the
    /// clocks must keep running) and the events wait, with a storage alert, until stored.
    pub(super) async fn apply(&mut self, events: Vec<Event>) {
        self.apply_with(events, false).await;
    }

    /// [`Self::apply`] for events the journal holds already (an arbiter's command, stored
    /// with its answer before the game changed: `command.rs`).
    pub(super) async fn apply_stored(&mut self, events: Vec<Event>) {
        self.apply_with(events, true).await;
    }

    async fn apply_with(&mut self, events: Vec<Event>, stored: bool) {
        if events.is_empty() {
            return;
        }
        let Some(slot) = self.slot.as_mut() else {
            return;
        };
        let mut shown = display::Display::default();
        let mut finished = None;
        let mut replaced_seals = Vec::new();
        let mut published = Vec::new();
        // The events the sealed move's wait follows (`sealed_wait`), once the game is
        // borrowed no longer.
        let mut followed = Vec::new();
        for event in events {
            slot.game.evolve(&event);
            slot.events.push(event.clone());
            self.seq += 1;
            // Events never carry a sealed move before its opening (only the commitment),
            // so logging them whole is safe (I.3).
            tracing::debug!(board = %self.id, seq = self.seq, ?event, "event");
            shown.after(&event);
            if matches!(
                event,
                Event::SealedMovePlayed { .. }
                    | Event::GameEnded { .. }
                    | Event::PositionSet { .. }
            ) {
                followed.push(event.clone());
            }
            match &event {
                Event::Sealed { commitment, .. } => {
                    if let Some(old) = self.pending_seal.replace(commitment.clone()) {
                        replaced_seals.push(old);
                    }
                }
                Event::SealCommitted { .. } => self.pending_seal = None,
                Event::GameEnded { result, .. } => finished = Some(result.clone()),
                _ => {}
            }
            if stored {
                published.push((self.seq, slot.id, event));
            } else {
                self.unstored.push((self.seq, slot.id, event));
            }
        }
        for event in &followed {
            self.sealed_move_follows(event);
        }
        // The arbiter's times end a hold on the clock's own (outage) times.
        if self.hold_clock
            && self
                .slot
                .as_ref()
                .is_some_and(|s| s.game.discrepancy().is_none())
        {
            self.hold_clock = false;
            shown.reprogram = true;
        }
        // A game that starts again (resumption, another clock) starts with the lever
        // wherever it was left.
        match shown.realign {
            display::Realign::Shown => {
                if self.align_lever() && shown.text.is_none() {
                    shown.text = Some(LEVER_TEXT);
                }
            }
            display::Realign::Quiet => {
                self.align_lever();
            }
            display::Realign::No => {}
        }
        // The hardware first: players see the official time even if the disk is slow.
        if shown.reprogram {
            self.program_clock(shown.text).await;
        }
        if shown.new_position {
            self.forget_board_moves();
            self.new_game_on_board().await;
        }
        if stored {
            self.published(published);
        } else {
            self.flush().await;
        }
        // Only once the replacing seal is stored: until then a restart would replay the
        // replaced one, and it must still open.
        if self.unstored.is_empty() {
            for old in replaced_seals {
                self.custody.discard(&old);
            }
        }
        self.report_stage().await;
        if finished.is_some() {
            self.clear(AlertKind::ResultShown);
        }
        if let (Some(result), Some(slot)) = (finished, &self.slot) {
            tracing::info!(board = %self.id, result = %describe_result(&result), "game over");
            let setup = slot.game.setup();
            let _ = self.hall.send(FromBoard::Finished {
                board: self.id.clone(),
                round: slot.round,
                white: setup.white.clone(),
                black: setup.black.clone(),
                result,
            });
        }
    }

    /// Store what is not stored yet, then publish it.
    pub(super) async fn flush(&mut self) {
        if self.unstored.is_empty() {
            return;
        }
        let records: Vec<Record> = self
            .unstored
            .iter()
            .map(|(seq, game, event)| Record::Event {
                board: self.id.clone(),
                seq: *seq,
                game: *game,
                event: event.clone(),
            })
            .collect();
        match self.journal.append(records).await {
            Ok(()) => {
                let stored = std::mem::take(&mut self.unstored);
                self.published(stored);
            }
            Err(e) => {
                self.raise(
                    AlertKind::Storage,
                    Severity::Critical,
                    Said::new(
                        "storage.events_not_stored",
                        json!({ "board": self.id, "why": e.to_string(), "waiting": self.unstored.len() }),
                        format!(
                            "cannot store events ({e}); the clocks keep running, {} event(s) wait to be stored and published",
                            self.unstored.len()
                        ),
                    ),
                );
                self.retry_storage = Some(tokio::time::Instant::now() + Duration::from_secs(1));
            }
        }
    }

    /// Publish events now on disk, in order, then the state they lead to.
    fn published(&mut self, stored: Vec<(u64, u64, Event)>) {
        for (seq, _, event) in stored {
            let payload = EventPayload {
                board: self.id.clone(),
                seq,
                event,
            };
            self.publisher
                .json_message(self.topics.event(&self.id), &payload);
            self.published_seq = seq;
        }
        self.clear(AlertKind::Storage);
        self.publish_state();
        self.update_game_alerts();
    }

    /// Alerts that follow the game's state: a pending flag, a player's pause, 6.11.
    pub(super) fn update_game_alerts(&mut self) {
        let Some(slot) = &self.slot else {
            for kind in alerts::FOLLOW_THE_GAME {
                self.clear(kind);
            }
            return;
        };
        let discrepancy = slot.game.discrepancy().cloned();
        let view = slot.game.view(self.now());
        let pending = view.pending_flag.clone();
        let player_pause = match &view.phase {
            Phase::Paused(crate::rules::game::PausedBy::Player { side }) => Some(*side),
            _ => None,
        };
        let both = view.both_flags_order_unknown;
        match discrepancy {
            Some(d) => {
                let message = discrepancy_said(&d);
                self.raise_since(
                    AlertKind::ClockDiscrepancy,
                    Severity::Warning,
                    message,
                    d.at,
                );
            }
            None => self.clear(AlertKind::ClockDiscrepancy),
        }
        match pending {
            Some(p) => self.raise_since(
                AlertKind::ResultPending,
                Severity::Critical,
                pending_said(&p),
                p.at,
            ),
            None => self.clear(AlertKind::ResultPending),
        }
        match player_pause {
            Some(side) => self.raise(
                AlertKind::PlayerPause,
                Severity::Critical,
                Said::new(
                    "player_pause",
                    json!({ "side": side }),
                    format!("{side} stopped the clocks and asks for the arbiter (6.12b)"),
                ),
            ),
            None => self.clear(AlertKind::PlayerPause),
        }
        if both {
            self.raise(
                AlertKind::BothFlags,
                Severity::Critical,
                Said::new(
                    "both_flags",
                    json!({}),
                    "both flags are down and which fell first cannot be established (6.11): the game continues until the arbiter acts".into(),
                ),
            );
        } else {
            self.clear(AlertKind::BothFlags);
        }
    }

    /// Tell the hall where this board's game is in the adjournment procedure (for the
    /// hall's session state and its "all sealed" event).
    pub(super) async fn report_stage(&mut self) {
        let note = match &self.slot {
            None => StageNote {
                finished: true,
                ..StageNote::default()
            },
            Some(s) => {
                let view = s.game.view(self.now());
                StageNote {
                    round: s.round,
                    stage: view.adjournment.as_ref().map(|a| a.stage),
                    finished: s.game.result().is_some(),
                    session_end: view.session_end,
                    resumption: view.adjournment.and_then(|a| a.resumption),
                }
            }
        };
        if self.reported.as_ref() == Some(&note) {
            return;
        }
        self.reported = Some(note.clone());
        let _ = self.hall.send(FromBoard::Stage {
            board: self.id.clone(),
            note,
        });
    }
}

/// The clock_discrepancy alert's text, from the journaled event alone (so the alert
/// rebuilt after a restart says the same).
/// A flag's result that waits for the arbiter, by why it waits: the core's reason is
/// journaled as words, and these are its three forms (`Game::flag_fell`).
fn pending_said(p: &crate::rules::game::PendingFlag) -> Said {
    let message = format!("{}'s flag fell: {}", p.side, p.reason);
    let code = crate::rules::game::pending_code(&p.reason);
    if code == "claim" {
        Said::new("result_pending.claim", json!({ "side": p.side }), message)
    } else if code == "position_unknown" {
        Said::new(
            "result_pending.position_unknown",
            json!({ "side": p.side }),
            message,
        )
    } else {
        // The dead-position search's own words (it gave up): shown as they are.
        let why = p
            .reason
            .strip_prefix("flag fell, result pending arbiter: ")
            .unwrap_or(&p.reason);
        Said::new(
            "result_pending.undecided",
            json!({ "side": p.side, "why": why }),
            message,
        )
    }
}

/// A clock's reading that disagrees with the official time (6.10), as data: the four
/// times, and whether both clocks moved (several presses unseen) or one.
pub(super) fn discrepancy_said(d: &crate::rules::game::Discrepancy) -> Said {
    let both = (d.white_ms - d.reckoned_white_ms).0.abs() > CLOCK_RESOLUTION.0
        && (d.black_ms - d.reckoned_black_ms).0.abs() > CLOCK_RESOLUTION.0;
    Said::new(
        if both {
            "clock_discrepancy.both_ran"
        } else {
            "clock_discrepancy"
        },
        json!({
            "white_ms": d.white_ms.0,
            "black_ms": d.black_ms.0,
            "official_white_ms": d.reckoned_white_ms.0,
            "official_black_ms": d.reckoned_black_ms.0,
        }),
        discrepancy_message(d),
    )
}

pub(super) fn discrepancy_message(d: &crate::rules::game::Discrepancy) -> String {
    let diff = |shown: Millis, official: Millis| {
        let s = (shown - official).0 / 1000;
        if s >= 0 {
            format!("+{s} s")
        } else {
            format!("{s} s")
        }
    };
    let both = (d.white_ms - d.reckoned_white_ms).0.abs() > CLOCK_RESOLUTION.0
        && (d.black_ms - d.reckoned_black_ms).0.abs() > CLOCK_RESOLUTION.0;
    let what = if both {
        "both clocks ran while hallclock was not watching: more than one press was made, which the clock's reading cannot place; the clock keeps its times"
    } else {
        "the clock disagrees with the official time"
    };
    format!(
        "clock shows white {} black {}, official time is white {} black {} (white {}, black {}): {what}; set_time to correct the official time, or acknowledge_alert to keep it (6.10)",
        d.white_ms,
        d.black_ms,
        d.reckoned_white_ms,
        d.reckoned_black_ms,
        diff(d.white_ms, d.reckoned_white_ms),
        diff(d.black_ms, d.reckoned_black_ms),
    )
}
