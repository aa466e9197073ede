//! The board actor's side facing the board: the clock's program (`display.rs`), the
//! lever (`lever.rs`), readings and the outage verdict, the clock's buttons, and the
//! e-board's moves (`eboard.rs`). The decisions are in those pure rooms; this is their
//! driver.

use super::*;
use crate::alert::Said;
use serde_json::json;

impl BoardActor {
    /// Program the clock with the official times (DESIGN.md §3): SETNRUN (+END by the
    /// link) with the times the core computed, then a short text when there is one.
    pub(super) async fn program_clock(&mut self, text: Option<&str>) {
        // A hand-set clock is never sent a command: the arbiters set it (observe mode).
        if self.hold_clock || self.observing() || self.display_held() {
            return;
        }
        let Some(slot) = &self.slot else { return };
        let view = slot.game.view(self.now());
        self.display_synced = false;
        for command in display::program(&view, self.placement, text, self.clock_texts) {
            let setnrun = matches!(command, LinkCommand::SetAndRun { .. });
            if self.link.send(command).await.is_err() {
                return;
            }
            if setnrun {
                self.setnrun_pending += 1;
            }
        }
    }

    /// Tell the move reader where the game starts.
    pub(super) async fn new_game_on_board(&mut self) {
        let Some(slot) = &self.slot else { return };
        let start = slot.game.position().cloned().unwrap_or_default();
        let _ = self
            .link
            .send(LinkCommand::NewGame {
                start: Box::new(start),
                orientation: None,
            })
            .await;
    }

    pub(super) async fn on_link(&mut self, ev: LinkEvent) {
        match ev {
            LinkEvent::Online(identity) => {
                self.online = true;
                tracing::info!(board = %self.id, serial = %identity.serial, clock = ?identity.clock, "board online");
                let _ = self.hall.send(FromBoard::Identity {
                    board: self.id.clone(),
                    serial: identity.serial.clone(),
                });
                self.publish_availability();
                self.clear(AlertKind::Offline);
                self.clear(AlertKind::Port);
                if identity.clock.is_none() {
                    self.raise(
                        AlertKind::ClockCommand,
                        Severity::Warning,
                        Said::new(
                            "clock_command.no_clock",
                            json!({ "board": self.id, "port": identity.path.display().to_string() }),
                            format!(
                                "board {} ({}): no clock answered; connect a DGT3000 in mode 25",
                                self.id,
                                identity.path.display()
                            ),
                        ),
                    );
                }
                self.publish_state();
                // Reconciliation waits for the hall's identity check (IdentityChecked).
                self.identity_pending = true;
                self.held_reading = None;
                self.ran_while_away = self.running_game();
                self.reconcile = false;
            }
            LinkEvent::Offline(why) => {
                self.online = false;
                self.display_synced = false;
                // The link drops what it had queued: the next session programs anew.
                self.setnrun_pending = 0;
                self.publish_availability();
                let severity = if self.busy().is_some() {
                    Severity::Critical
                } else {
                    Severity::Warning
                };
                let message = format!(
                    "board {} offline: {why} (the clock keeps running by itself)",
                    self.id
                );
                self.raise(
                    AlertKind::Offline,
                    severity,
                    offline_said(&self.id, &why, message),
                );
                self.publish_state();
            }
            LinkEvent::Error(e) => {
                let said = port_said(&self.id, &e);
                self.raise(AlertKind::Port, Severity::Warning, said);
            }
            LinkEvent::CommandDone { command } => {
                if command == "set-and-run" {
                    self.setnrun_pending = self.setnrun_pending.saturating_sub(1);
                    self.display_synced = self.setnrun_pending == 0;
                }
                self.clear(AlertKind::ClockMode);
                if command != "text" && command != "show-times" {
                    self.clear(AlertKind::ClockCommand);
                }
            }
            LinkEvent::CommandFailed(e) => {
                // Answered, if not as hoped: the clock does not show what that one
                // programmed, and display_synced stays false (as since it was sent).
                if e.command() == Some("set-and-run") {
                    self.setnrun_pending = self.setnrun_pending.saturating_sub(1);
                }
                match e {
                    ClockCommandError::NotInComputerMode { ref path, .. } => self.raise(
                        AlertKind::ClockMode,
                        Severity::Critical,
                        Said::new(
                            "clock_mode",
                            json!({ "board": self.id, "port": path.display().to_string() }),
                            format!("{e}: the official time is kept by hallclock, but the clock does not show it"),
                        ),
                    ),
                    // Offline boards get their times again when they come back.
                    ClockCommandError::Offline { .. } => {}
                    other => {
                        let said = clock_command_said(&self.id, &other);
                        self.raise(AlertKind::ClockCommand, Severity::Warning, said)
                    }
                }
            }
            LinkEvent::Lever { high, reading } => self.on_lever(high, reading).await,
            LinkEvent::Clock(reading) => self.on_reading(reading).await,
            LinkEvent::Button(button) => self.on_button(button).await,
            LinkEvent::Game(e) => self.on_board_event(e).await,
            LinkEvent::Field(_) => {
                self.eboard = true;
                // Still moving: an owed move is attached once the board is still.
                self.settling.field_changed(tokio::time::Instant::now());
            }
            // An e-board is there (its dump at the handshake).
            LinkEvent::Board(_) => self.eboard = true,
            LinkEvent::Battery(b) => {
                tracing::info!(board = %self.id, battery = ?b, "battery");
                self.battery.board(&b);
                self.battery_alert();
            }
            LinkEvent::ClockBatteryLow(low) => {
                self.battery.clock(low);
                self.battery_alert();
            }
        }
    }

    /// Raise or clear `low_battery` from what the batteries last reported. A clear with
    /// nothing standing still counts: a retained copy from before a restart is then
    /// cleared on arrival (the batteries were changed meanwhile).
    fn battery_alert(&mut self) {
        match self.battery.alert(&self.id) {
            Some(message) => self.raise(AlertKind::LowBattery, Severity::Warning, message),
            None => self.clear(AlertKind::LowBattery),
        }
    }

    /// A lever press: the lever went down on the presser's side, so the side now high
    /// is the opponent's (dgt-protocol.md §6).
    pub(super) async fn on_lever(&mut self, high: ClockSide, reading: ClockTime) {
        self.display_synced = false;
        let standing = self
            .slot
            .as_ref()
            .is_some_and(|s| s.game.clock().running().is_none() && s.game.result().is_none());
        let presser = match self.lever.pressed(high, self.placement, standing) {
            LeverPress::By(presser) => presser,
            LeverPress::TurnedRightWay => {
                tracing::info!(board = %self.id, "lever turned the right way round");
                self.program_clock(None).await;
                return;
            }
        };
        let Some(slot) = &self.slot else {
            self.raise(
                AlertKind::StrayPress,
                Severity::Info,
                Said::new(
                    "stray_press.no_game",
                    json!({ "board": self.id }),
                    format!("lever pressed on board {} which has no game", self.id),
                ),
            );
            return;
        };
        let due = slot.game.next_deadline().is_some_and(|d| d <= self.now());
        // The opponent's move, owed by their press, is final now that this side pressed;
        // it came before any deadline now due (attached at the press that completed it).
        self.attach_owed().await;
        // A deadline due now (a flag) comes before this press.
        if due {
            self.on_deadline().await;
        }
        let mv = self.move_for_press();
        let press = Input::Press {
            side: Some(presser),
            mv: mv.clone(),
        };
        let before = self.slot.as_ref().map_or(0, |s| s.events.len());
        match self.decide(press).await {
            Ok(()) => self.clear(AlertKind::MoveRejected),
            // The move was made on the board just before the order to seal and pressed
            // after it: the rules make it the sealed move (I.1.1). Seal it, then this
            // press stops the clock, as the sealer's press does.
            Err(Refusal::Rejected(Rejection::MoveIsTheSealedMove { .. })) => {
                let Some(mv) = mv else { return };
                let sealed = match self.seal_secret(Some(presser), mv, true, false).await {
                    Ok(()) => {
                        self.decide(Input::Press {
                            side: Some(presser),
                            mv: None,
                        })
                        .await
                    }
                    Err(e) => Err(e),
                };
                if let Err(r) = sealed {
                    self.stray_press(presser, &r).await;
                }
            }
            Err(
                r @ Refusal::Rejected(
                    Rejection::BadMove { .. }
                    | Rejection::PositionUnknown
                    | Rejection::MovePending { .. },
                ),
            ) if mv.is_some() => {
                // The press is a physical fact and its time counts: record it without the
                // move and let the arbiter sort the position out.
                self.raise(
                    AlertKind::MoveRejected,
                    Severity::Warning,
                    refusal_said(
                        "move_rejected",
                        json!({ "board": self.id, "uci": mv.clone().unwrap_or_default() }),
                        &r,
                        format!(
                            "e-board move {} not accepted ({}); the press was recorded without it",
                            mv.unwrap_or_default(),
                            r
                        ),
                    ),
                );
                let retry = Input::Press {
                    side: Some(presser),
                    mv: None,
                };
                if let Err(r) = self.decide(retry).await {
                    self.stray_press(presser, &r).await;
                }
            }
            Err(r) => self.stray_press(presser, &r).await,
        }
        // Observe mode: a press the rules took (with its move, without it, or as the
        // sealer's) is compared with what the clock did at it, and the clock's times taken.
        let took = self.slot.as_ref().is_some_and(|s| {
            s.events
                .get(before..)
                .unwrap_or_default()
                .iter()
                .any(|e| matches!(e, Event::Pressed { .. }))
        });
        if self.observing() && took {
            self.observe_press(reading, before).await;
        }
    }

    /// A new game or position on the board: nothing read before it belongs to it.
    pub(super) fn forget_board_moves(&mut self) {
        self.settling.forget();
    }

    pub(super) fn move_for_press(&mut self) -> Option<String> {
        self.settling.for_press(tokio::time::Instant::now())
    }

    /// Attach the move a press completed before the board showed it (6.7a: the press
    /// counted at its instant; the move is recorded now).
    pub(super) async fn attach_owed(&mut self) {
        let Some(side) = self.slot.as_ref().and_then(|s| s.game.move_owed()) else {
            self.settling.stop_waiting();
            return;
        };
        let Some(mv) = self.settling.take_owed() else {
            // The press came and the board has shown no move since: perhaps an update
            // was missed. The dump shows the board; the move reader finds the move(s).
            let _ = self.link.send(LinkCommand::RequestBoard).await;
            return;
        };
        // The press completed the move before a flag now due: the move goes in at the
        // game's latest event, so the flag that follows is decided on the position.
        let now = self.now();
        let at = match self.slot.as_ref().map(|s| &s.game) {
            Some(g) if g.next_deadline().is_some_and(|d| d <= now) => g.last_event_at(),
            _ => now,
        };
        if let Err(r) = self.decide_at(Input::Move { mv: mv.uci.clone() }, at).await {
            self.raise(
                AlertKind::MoveRejected,
                Severity::Warning,
                refusal_said(
                    "move_rejected.not_attached",
                    json!({ "board": self.id, "uci": mv.uci, "side": side }),
                    &r,
                    format!(
                        "e-board move {} by {side} could not be attached to the press that completed it: {}; the arbiter can set the position (set_position)",
                        mv.uci, r
                    ),
                ),
            );
        } else {
            self.settling.attached(mv.ply);
        }
    }

    /// A press the rules refused: tell the arbiters, and put the official times back on
    /// the clock (it switched by itself at the lever).
    pub(super) async fn stray_press(&mut self, presser: Color, r: &Refusal) {
        // The lever moved and the turn did not: it is now the other way round.
        self.lever.refused();
        let now = self.now();
        self.raise_with(
            AlertKind::StrayPress,
            Severity::Info,
            {
                let (refusal, refusal_params) = r.said();
                Said::new(
                    "stray_press",
                    json!({ "side": presser, "board": self.id, "refusal": refusal, "refusal_params": refusal_params }),
                    format!(
                        "lever press by {presser} on board {} not accepted: {}",
                        self.id, r
                    ),
                )
            },
            now,
            Some(r.code()),
        );
        let text = display::after_refused_press(self.slot.as_ref().map(|s| s.game.phase()));
        self.program_clock(text).await;
    }

    pub(super) fn running_game(&self) -> bool {
        self.slot
            .as_ref()
            .is_some_and(|s| *s.game.phase() == Phase::Running)
    }

    /// Whether the lever is the wrong way round for the player to move; remembered, so a
    /// press counts for the right player wherever the lever was left.
    pub(super) fn align_lever(&mut self) -> bool {
        let mover = self.slot.as_ref().map(|s| s.game.clock().turn);
        self.lever.align(self.placement, mover)
    }

    /// After an outage (the daemon restarted, or the link was away): the clock kept
    /// playing at the lever, so its reading is the evidence of what happened meanwhile
    /// (DESIGN.md §3). One press by the player to move is placed at the instant the
    /// clock's frozen time for that player implies (to the clock's resolution), so
    /// nobody is charged for the outage; a reading no single press explains (several
    /// presses) is a discrepancy the arbiter settles, and the clock keeps its times until
    /// then.
    pub(super) async fn reconcile_after_outage(&mut self, reading: ClockTime) {
        self.reconcile = false;
        let Some(slot) = &self.slot else { return };
        let now = self.now();
        let placement = self.placement;
        let explained = match lever::after_outage(&slot.game, placement, &reading, now) {
            Outage::NothingRan | Outage::NoPress => true,
            Outage::Unexplained => false,
            Outage::PressAt { side, at } => {
                self.attach_owed().await;
                let mv = self.settling.take_pending();
                let press = Input::Press {
                    side: Some(side),
                    mv,
                };
                match self.decide_at(press, at).await {
                    Ok(()) => {
                        tracing::info!(board = %self.id, %side, at = %at.utc(), "press made while the board was away placed from the clock's reading");
                        true
                    }
                    Err(e) => {
                        tracing::warn!(board = %self.id, reason = %e, "press made while the board was away not accepted");
                        false
                    }
                }
            }
        };
        let shown = move |c: Color| lever::shown(&reading, placement, c);
        if self.unwitnessed.is_some_and(|u| !u.held) {
            let agrees = self
                .slot
                .as_ref()
                .is_some_and(|s| lever::reading_agrees(&s.game, placement, &reading, self.now()));
            if explained && agrees {
                self.witnessed();
            } else {
                // After a reboot the reckoning's gap is a guess: a reading that
                // disagrees with it holds the game; it is never a flag or a charge.
                let why = Said::new(
                    "time_held.clock_disagrees",
                    json!({ "white_ms": shown(Color::White).0, "black_ms": shown(Color::Black).0 }),
                    format!(
                        "after a reboot its clock shows White {} Black {}, which the journal's time plus the server clock's gap does not explain",
                        shown(Color::White),
                        shown(Color::Black)
                    ),
                );
                self.hold(why).await;
                self.align_lever();
                return;
            }
        }
        if explained {
            self.align_lever();
            return self.program_clock(None).await;
        }
        // The reading cannot tell what happened: report it (once), keep the clock's times.
        let Some(slot) = &self.slot else { return };
        if slot.game.discrepancy().is_none() {
            let (white, black) = (shown(Color::White), shown(Color::Black));
            match slot.game.decide(&Input::ClockReading { white, black }, now) {
                Ok(events)
                    if events
                        .iter()
                        .any(|e| matches!(e, Event::ClockDiscrepancy { .. })) =>
                {
                    self.hold_clock = true;
                    self.apply(events).await;
                }
                Ok(events) => {
                    self.apply(events).await;
                    self.align_lever();
                    return self.program_clock(None).await;
                }
                Err(_) => {
                    self.align_lever();
                    return self.program_clock(None).await;
                }
            }
        } else {
            self.hold_clock = true;
        }
        self.align_lever();
    }

    /// Compare the clock's own reading with the official time (6.10); both at zero
    /// without a known order is 6.11.
    pub(super) async fn on_reading(&mut self, reading: ClockTime) {
        self.lever.seen(reading.status.high_side());
        if self.identity_pending {
            self.held_reading = Some(reading);
            return;
        }
        // Unwitnessed time: only the reconciliation reads the clock (a reading decided at
        // a `now` past a deadline would flag from the gap).
        if self.unwitnessed.is_some() && !self.reconcile {
            return;
        }
        // Every running board's second comes here: what may follow is boxed, so that the
        // actor's future does not keep room for it (see `board::run`).
        if self.reconcile {
            return Box::pin(self.reconcile_after_outage(reading)).await;
        }
        if self.observing() {
            return Box::pin(self.observe_reading(reading)).await;
        }
        if !self.display_synced || self.hold_clock {
            return;
        }
        let Some(slot) = &self.slot else { return };
        if *slot.game.phase() != Phase::Running {
            return;
        }
        let white = lever::shown(&reading, self.placement, Color::White);
        let black = lever::shown(&reading, self.placement, Color::Black);
        let now = self.now();
        match slot.game.decide(&Input::ClockReading { white, black }, now) {
            // The alert stays until the arbiter acts (set_time, acknowledge_alert): a
            // clock that agrees again does not explain what it showed.
            Ok(events) if events.is_empty() => {}
            Ok(events) => {
                let discrepancy = events.iter().find_map(|e| match e {
                    Event::ClockDiscrepancy {
                        reckoned_white_ms,
                        reckoned_black_ms,
                        ..
                    } => Some((*reckoned_white_ms, *reckoned_black_ms)),
                    _ => None,
                });
                if discrepancy.is_some() {
                    // Reported, never adopted; the event is published once per episode (the
                    // alert follows it, from the game).
                    if slot.game.discrepancy().is_none() {
                        Box::pin(self.apply(events)).await;
                    }
                } else {
                    Box::pin(self.apply(events)).await;
                }
            }
            Err(_) => {}
        }
    }

    pub(super) async fn on_button(&mut self, button: ClockButton) {
        if button != ClockButton::RunPause {
            return self.on_setting_button(button);
        }
        // I.1.1: while sealing, stopping the clock is the sealer's commit, not a 6.12b
        // pause.
        if self.stage() == Some(Stage::Sealing) {
            if let Err(r) = self.decide(Input::CommitSeal { arbiter: None }).await {
                tracing::info!(board = %self.id, reason = %r, "pause button while sealing ignored");
                self.program_clock(None).await;
            }
            return;
        }
        if let Err(r) = self.decide(Input::PlayerPause { side: None }).await {
            tracing::info!(board = %self.id, reason = %r, "pause button ignored");
        }
    }

    /// FIDE C.02 (k): back, plus, minus and OK are how a DGT3000 is set by hand. In
    /// computer mode they change neither the times nor the display (the daemon programs
    /// the clock), but pressed during a game they mean someone is handling the clock: the
    /// arbiter is told which buttons, in order (the last eight), until a new game starts.
    fn on_setting_button(&mut self, button: ClockButton) {
        let in_game = self
            .slot
            .as_ref()
            .is_some_and(|s| s.game.result().is_none());
        if !in_game {
            return;
        }
        if self.buttons_pressed.len() == 8 {
            self.buttons_pressed.remove(0);
        }
        self.buttons_pressed.push(button);
        let names: Vec<&str> = self
            .buttons_pressed
            .iter()
            .map(|b| match b {
                ClockButton::Back => "back",
                ClockButton::Plus => "plus",
                ClockButton::Minus => "minus",
                ClockButton::Ok => "OK",
                ClockButton::RunPause => "run/pause",
            })
            .collect();
        self.raise(
            AlertKind::ClockButtons,
            Severity::Warning,
            Said::new(
                "clock_buttons",
                json!({ "board": self.id, "buttons": names }),
                format!(
                    "board {}: the clock's buttons were pressed during the game ({}): hallclock drives the clock, so neither the times nor the display changed, but someone is handling the clock",
                    self.id,
                    names.join(", ")
                ),
            ),
        );
    }

    pub(super) async fn on_board_event(&mut self, e: BoardEvent) {
        if matches!(
            e,
            BoardEvent::Move { .. } | BoardEvent::Corrected { .. } | BoardEvent::TakeBack { .. }
        ) {
            self.clear(AlertKind::ResultShown);
        }
        if matches!(e, BoardEvent::Move { .. } | BoardEvent::Restored { .. }) {
            self.sealed_move_shown();
        }
        match e {
            BoardEvent::Move { uci, ply, .. } | BoardEvent::Corrected { uci, ply, .. } => {
                let Some(slot) = &self.slot else { return };
                if slot.game.move_owed().is_some() {
                    // A later move means the owed one is final: attach it first.
                    if self.settling.pending().is_some_and(|m| m.ply < ply) {
                        self.attach_owed().await;
                    }
                    if self
                        .slot
                        .as_ref()
                        .and_then(|s| s.game.move_owed())
                        .is_some()
                    {
                        let now = tokio::time::Instant::now();
                        self.settling.owed_read(BoardMove { uci, ply }, now);
                        return;
                    }
                }
                if self.settling.carried(ply) {
                    // The press carried an intermediate reading of this move (it overtook
                    // the rest of a slide): the record and the board now disagree.
                    self.raise(
                        AlertKind::MoveRejected,
                        Severity::Warning,
                        Said::new(
                            "move_rejected.board_differs",
                            json!({ "board": self.id, "ply": ply, "uci": uci }),
                            format!(
                                "board {}: move {ply} was recorded at its press, but the board now shows {uci} instead; check the position (set_position)",
                                self.id
                            ),
                        ),
                    );
                    return;
                }
                let Some(slot) = &self.slot else { return };
                // A move that ends the game ends it at once, without a press (6.7a);
                // any other waits for the press (a slide may still be corrected).
                let now = self.now();
                match slot.game.decide(&Input::Move { mv: uci.clone() }, now) {
                    Ok(events) if events.iter().any(|e| matches!(e, Event::GameEnded { .. })) => {
                        self.settling.read(None);
                        self.apply(events).await;
                        return;
                    }
                    // I.1.1: after the order, the sealer's move on the board is the sealed
                    // move: sealed at once (never played, never logged); the press or the
                    // pause button then commits it.
                    Err(Rejection::MoveIsTheSealedMove { side, mv }) => {
                        self.settling.read(None);
                        if let Err(r) = self.seal_secret(Some(side), mv, true, false).await {
                            self.raise(
                                AlertKind::MoveRejected,
                                Severity::Warning,
                                refusal_said(
                                    "move_rejected.not_sealed",
                                    json!({ "board": self.id }),
                                    &r,
                                    format!(
                                        "the move made on board {} after the order to seal could not be sealed: {}",
                                        self.id, r
                                    ),
                                ),
                            );
                        }
                        return;
                    }
                    _ => {}
                }
                self.settling.read(Some(BoardMove { uci, ply }));
            }
            BoardEvent::TakeBack { ply, .. } => self.settling.took_back(ply),
            BoardEvent::Irregular {
                observed_fen,
                expected_fen,
                only_missing,
                ..
            } => {
                let severity = if only_missing {
                    Severity::Info
                } else {
                    Severity::Warning
                };
                self.raise(
                    AlertKind::Irregular,
                    severity,
                    Said::new(
                        "irregular.position",
                        json!({ "board": self.id, "observed_fen": observed_fen, "expected_fen": expected_fen }),
                        format!("the board shows {observed_fen}, which no legal move from {expected_fen} explains"),
                    ),
                );
            }
            BoardEvent::Restored { .. } => {
                self.clear(AlertKind::Irregular);
                self.clear(AlertKind::ResultShown);
            }
            BoardEvent::ResultShown { score } => self.raise(
                AlertKind::ResultShown,
                Severity::Info,
                Said::new(
                    "result_shown",
                    json!({ "board": self.id, "score": score.to_string() }),
                    format!(
                        "board {}: the players show {score} with the kings on the centre squares; record it with set_result",
                        self.id
                    ),
                ),
            ),
            // The reader found its start position: after an opening, the sealed move —
            // unless it is a stale start from the reader before the opening.
            BoardEvent::Started { fen, .. } => self.reader_started(&fen),
        }
    }
}

/// Why a board went offline, as data: `offline.<cause>` with the port and the measure.
fn offline_said(board: &str, why: &crate::link::Offline, message: String) -> Said {
    use crate::link::Offline;
    let ms = |d: &std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let (code, params) = match why {
        Offline::Unplugged { path } => (
            "offline.unplugged",
            json!({ "port": path.display().to_string() }),
        ),
        Offline::Silent { path, silent } => (
            "offline.silent",
            json!({ "port": path.display().to_string(), "silent_ms": ms(silent) }),
        ),
        Offline::WriteStalled { path, waited } => (
            "offline.write_stalled",
            json!({ "port": path.display().to_string(), "waited_ms": ms(waited) }),
        ),
        Offline::Io { path, message } => (
            "offline.io",
            json!({ "port": path.display().to_string(), "why": message }),
        ),
    };
    let mut params = params;
    params["board"] = json!(board);
    Said::new(code, params, message)
}

/// An alert that reports a refusal: the refusal's own code and parameters among its own.
fn refusal_said(
    code: &'static str,
    params: serde_json::Value,
    r: &Refusal,
    message: String,
) -> Said {
    let (refusal, refusal_params) = r.said();
    let mut params = params;
    params["refusal"] = json!(refusal);
    params["refusal_params"] = json!(refusal_params);
    Said::new(code, params, message)
}

/// Why a board's port does not serve, as data: `port.<cause>` with the port (and the
/// operating system's words for an error it alone names).
fn port_said(board: &str, e: &crate::link::LinkError) -> Said {
    use crate::link::{LinkError, OpenError};
    let message = e.to_string();
    let (code, port, why) = match e {
        LinkError::Open(OpenError::Missing { path }) => ("port.missing", path, None),
        LinkError::Open(OpenError::PermissionDenied { path }) => ("port.permission", path, None),
        LinkError::Open(OpenError::Busy { path }) => ("port.busy", path, None),
        LinkError::Open(OpenError::NotATty { path }) => ("port.not_a_tty", path, None),
        LinkError::Open(OpenError::Io { path, source }) => {
            ("port.io", path, Some(source.to_string()))
        }
        LinkError::NotADgtBoard { path, .. } => ("port.not_a_dgt_board", path, None),
    };
    let mut params = json!({ "board": board, "port": port.display().to_string() });
    if code == "port.io" {
        params["why"] = json!(why.unwrap_or_default());
    }
    Said::new(code, params, message)
}

/// A clock command that failed, as data: `clock_command.<cause>` with the command's name.
fn clock_command_said(board: &str, e: &ClockCommandError) -> Said {
    let message = e.to_string();
    let (code, command) = match e {
        ClockCommandError::NoAck { command, .. } => ("clock_command.no_ack", *command),
        ClockCommandError::Refused { command, .. } => ("clock_command.refused", *command),
        ClockCommandError::NoClock { command, .. } => ("clock_command.no_clock_for", *command),
        ClockCommandError::NotInComputerMode { command, .. } => ("clock_command.refused", *command),
        ClockCommandError::Offline { command, .. } => ("clock_command.offline", *command),
        ClockCommandError::Unencodable { .. } => ("clock_command.unencodable", ""),
    };
    Said::new(code, json!({ "board": board, "command": command }), message)
}
