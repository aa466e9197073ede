//! One session on an open port, sans-IO: the handshake, the clock command queue with its
//! resend policy, liveness, and turning messages into [`LinkEvent`]s.
//!
//! * inputs: [`Session::handle_message`], [`Session::handle_command`],
//!   [`Session::handle_timeout`] (each with the current time);
//! * outputs: [`Session::poll_transmit`] (commands to write), [`Session::poll_event`],
//!   [`Session::end`] (why the session must close), [`Session::next_deadline`].
//!
//! The async driver in `task.rs` only moves bytes and sleeps.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::dgt::{
    BoardState, ClockAck, ClockCommand, ClockStatus, ClockText, DgtCommand, DgtMessage, RunFlags,
    SetTime,
};

use super::event::{
    BoardIdentity, ClockCommandError, ClockInfo, ClockModel, LinkCommand, LinkError, LinkEvent,
    Offline, RunSide,
};

/// Timing of one link. The defaults follow dgt-protocol.md §1 and §5.3.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// The port, by a stable path (`/dev/serial/by-id/…` or a udev symlink).
    pub path: PathBuf,
    /// Wait after opening before talking (§1: 300–500 ms; boards need it after power-up).
    /// Counted from when the port appeared, not from each open: see [`settle_left`].
    pub settle: Duration,
    /// How long to wait for the serial number and version replies per attempt.
    pub handshake_timeout: Duration,
    /// Attempts before declaring "not a DGT board" (picochess retries every 2 s).
    pub handshake_attempts: u32,
    /// How long to wait for the clock's version ACK before deciding there is no clock.
    pub clock_version_timeout: Duration,
    /// How long to wait for a clock ACK before resending (picochess: 2 s).
    pub ack_timeout: Duration,
    /// Resends after the first try (§5.3: at most 3).
    pub max_resends: u32,
    /// A board silent this long is asked its serial number (`45`, as picochess's watchdog,
    /// issue 150). Only a silent one: a running clock's second (UPDATE_NICE) already
    /// proves the port alive, and probing it anyway doubled every port's traffic. Shorter
    /// than half of `silence_timeout`, so the answer has time to come (the session takes half of
    /// it when this is longer).
    pub probe_interval: Duration,
    /// Silence beyond this means the board is offline.
    pub silence_timeout: Duration,
    /// Reopen backoff after a failure: starts at `min`, doubles up to `max`.
    pub reopen_backoff_min: Duration,
    pub reopen_backoff_max: Duration,
    /// A write that cannot complete within this is a dead port.
    pub write_timeout: Duration,
    /// Quiet time after the last field update before an unrecognised board is called
    /// irregular (§4.1: picochess waits 0.25 s on USB, 0.5 s on Bluetooth).
    pub board_settle: Duration,
    /// A quiet board that differs from the game only by lifted pieces is most likely a
    /// piece in a hand: it is called irregular only after this long (lila holds such
    /// moves 2.5 s).
    pub in_air: Duration,
}

impl LinkConfig {
    pub fn new(path: impl Into<PathBuf>) -> LinkConfig {
        LinkConfig {
            path: path.into(),
            settle: Duration::from_millis(300),
            handshake_timeout: Duration::from_secs(2),
            handshake_attempts: 3,
            clock_version_timeout: Duration::from_secs(2),
            ack_timeout: Duration::from_secs(2),
            max_resends: 3,
            // Above a running clock's one second, so that its time frames keep the probe away.
            probe_interval: Duration::from_millis(1500),
            silence_timeout: Duration::from_secs(3),
            reopen_backoff_min: Duration::from_millis(100),
            reopen_backoff_max: Duration::from_secs(1),
            write_timeout: Duration::from_secs(1),
            board_settle: Duration::from_millis(250),
            in_air: Duration::from_millis(2500),
        }
    }
}

/// The part of `settle` a freshly opened port still owes, given how long ago its device
/// node appeared (`None`: unknown, the whole settle).
///
/// Why: the settle is for a board that has just been powered (dgt-protocol.md §1), and a
/// USB board is powered when its port appears. A daemon restarted under a hall of boards
/// that have been on for hours need not wait 300 ms at every port before its handshake
/// (at 5000 boards that was most of a restart). Stale bytes are not the reason: the open
/// flushes the input and the codec resynchronises on a frame cut in half. Should a board
/// still be waking up (a Bluetooth node bound long before the board was switched on), it
/// misses the first identification and answers the next one, `handshake_timeout` later.
pub fn settle_left(settle: Duration, port_age: Option<Duration>) -> Duration {
    port_age.map_or(settle, |age| settle.saturating_sub(age))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Just opened; bytes that arrive now are left-overs and are ignored.
    Settling {
        until: Instant,
    },
    /// `40 45 4d` sent; waiting for `91` and `93`.
    Identifying {
        attempt: u32,
        until: Instant,
    },
    /// Clock version requested; waiting for its ACK.
    ClockVersion {
        until: Instant,
    },
    Online,
}

#[derive(Debug)]
struct InFlight {
    command: Pending,
    name: &'static str,
    sent_at: Instant,
    sends: u32,
}

/// A clock command as the link holds it until its ACK: what goes out is built at each
/// send ([`Pending::at`]).
#[derive(Debug)]
enum Pending {
    Plain(ClockCommand),
    SetAndRun(SetAndRunAt),
}

impl Pending {
    fn at(&self, now: Instant) -> ClockCommand {
        match self {
            Pending::Plain(c) => c.clone(),
            Pending::SetAndRun(t) => t.command(now),
        }
    }

    fn id(&self) -> u8 {
        match self {
            Pending::Plain(c) => c.id(),
            Pending::SetAndRun(_) => crate::dgt::clock::clock_cmd::SET_AND_RUN,
        }
    }
}

/// A SETNRUN's times, exact and as of when the link was handed them. Each transmission,
/// the first or a resend, carries the running side's time as of then. Why: the link
/// sends one clock command at a time and resends an unanswered one after `ack_timeout`,
/// so a SETNRUN sent as built could wait behind another command or be resent seconds
/// later, and set the clock back by every wait: 3 s after three resends at the defaults,
/// beyond the discrepancy margin, and a clock that shows a player more time than they
/// have. (Whether the first one was taken with only its ACK lost, or lost, the clock then
/// shows the time as of the resend.)
#[derive(Debug, Clone, Copy)]
struct SetAndRunAt {
    left: Duration,
    right: Duration,
    run: RunSide,
    at: Instant,
}

impl SetAndRunAt {
    fn command(&self, now: Instant) -> ClockCommand {
        let elapsed = now.saturating_duration_since(self.at);
        let ran = |side: RunSide, t: Duration| {
            if self.run == side {
                t.saturating_sub(elapsed)
            } else {
                t
            }
        };
        ClockCommand::SetAndRun {
            left: set_time(ran(RunSide::Left, self.left)),
            right: set_time(ran(RunSide::Right, self.right)),
            flags: RunFlags {
                left_runs: self.run == RunSide::Left,
                right_runs: self.run == RunSide::Right,
                pause: self.run == RunSide::Paused,
                toggle_on_lever: true,
            },
        }
    }
}

/// Why a session ended (the driver closes the port and reports it).
#[derive(Debug)]
pub enum SessionEnd {
    /// After `Online`: report offline.
    Offline(Offline),
    /// Before `Online`: report an error once, then retry.
    Failed(LinkError),
}

#[derive(Debug)]
pub struct Session {
    cfg: LinkConfig,
    phase: Phase,
    transmit: VecDeque<DgtCommand>,
    events: VecDeque<LinkEvent>,
    serial: Option<String>,
    version: Option<(u8, u8)>,
    clock: Option<ClockInfo>,
    /// Clock commands waiting for the one in flight (§5.3: one at a time).
    queue: VecDeque<(Pending, &'static str)>,
    in_flight: Option<InFlight>,
    last_heard: Instant,
    next_probe: Instant,
    last_status: Option<ClockStatus>,
    /// The clock's low-battery bit as last reported (`None`: not yet this session).
    reported_battery: Option<bool>,
    end: Option<SessionEnd>,
    /// The game on the board; it outlives the session (see [`Session::into_board`]).
    board: BoardState,
    /// When to call the board settled, after the last field update.
    board_settle_at: Option<Instant>,
    /// Where the settling of an unrecognised board is: waiting out a lifted piece, then
    /// a board dump (it repairs missed field updates), then the verdict.
    board_settle_stage: SettleStage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SettleStage {
    /// Quiet for `board_settle` since the last update.
    Quiet,
    /// Only lifted pieces: waited `in_air` more.
    InAir,
    /// A dump was asked for; no answer within `board_settle` → judge the board as is.
    DumpAsked,
}

impl Session {
    /// A session on a freshly opened port; `board` is the game so far (a replugged board
    /// continues its game: the handshake's board dump shows what happened meanwhile).
    pub fn new(cfg: LinkConfig, board: BoardState, now: Instant) -> Session {
        let settle = cfg.settle;
        Session {
            cfg,
            phase: Phase::Settling {
                until: now + settle,
            },
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            serial: None,
            version: None,
            clock: None,
            queue: VecDeque::new(),
            in_flight: None,
            last_heard: now,
            next_probe: now,
            last_status: None,
            reported_battery: None,
            end: None,
            board,
            board_settle_at: None,
            board_settle_stage: SettleStage::Quiet,
        }
    }

    /// Silence after which the board is probed: `probe_interval`, but never more than half
    /// the silence timeout (a hall may shorten `link.liveness_timeout_ms`), so that a quiet
    /// board's answer always comes before it is called offline.
    fn probe_after(&self) -> Duration {
        self.cfg.probe_interval.min(self.cfg.silence_timeout / 2)
    }

    /// The game on the board, to hand to the next session.
    pub fn into_board(self) -> BoardState {
        self.board
    }

    pub fn is_online(&self) -> bool {
        self.phase == Phase::Online
    }

    pub fn poll_transmit(&mut self) -> Option<DgtCommand> {
        self.transmit.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    /// Why the session must close, once it must.
    pub fn end(&mut self) -> Option<SessionEnd> {
        self.end.take()
    }

    pub fn next_deadline(&self) -> Instant {
        let mut next = match self.phase {
            Phase::Settling { until }
            | Phase::Identifying { until, .. }
            | Phase::ClockVersion { until } => until,
            Phase::Online => self
                .next_probe
                .min(self.last_heard + self.cfg.silence_timeout),
        };
        // Before `Online` the only command in flight is the version request, whose wait
        // is the phase's own deadline.
        if let Some(f) = &self.in_flight
            && self.phase == Phase::Online
        {
            next = next.min(f.sent_at + self.cfg.ack_timeout);
        }
        if let Some(t) = self.board_settle_at {
            next = next.min(t);
        }
        next
    }

    // ---- time ---------------------------------------------------------------------

    pub fn handle_timeout(&mut self, now: Instant) {
        if self.board_settle_at.is_some_and(|t| now >= t) {
            self.board_settle_at = None;
            match self.board_settle_stage {
                SettleStage::Quiet
                    if self.board.only_pieces_lifted() && !self.board.is_irregular() =>
                {
                    self.board_settle_stage = SettleStage::InAir;
                    self.board_settle_at =
                        Some(now + self.cfg.in_air.saturating_sub(self.cfg.board_settle));
                }
                SettleStage::Quiet | SettleStage::InAir if self.phase == Phase::Online => {
                    // The field updates may have missed a change: the dump shows the board
                    // as it is, and a dump is judged as settled.
                    self.board_settle_stage = SettleStage::DumpAsked;
                    self.transmit.push_back(DgtCommand::SendBoard);
                    self.board_settle_at = Some(now + self.cfg.board_settle);
                }
                _ => {
                    self.board_settle_stage = SettleStage::Quiet;
                    let events = self.board.settle();
                    self.events.extend(events.into_iter().map(LinkEvent::Game));
                }
            }
        }
        match self.phase {
            Phase::Settling { until } if now >= until => self.identify(1, now),
            Phase::Identifying { attempt, until } if now >= until => {
                if attempt >= self.cfg.handshake_attempts {
                    self.end = Some(SessionEnd::Failed(LinkError::NotADgtBoard {
                        path: self.cfg.path.clone(),
                        attempts: attempt,
                        timeout: self.cfg.handshake_timeout,
                    }));
                } else {
                    self.identify(attempt + 1, now);
                }
            }
            Phase::ClockVersion { until } if now >= until => {
                // No version ACK: no clock attached (or it is not forwarding ACKs).
                self.in_flight = None;
                self.go_online(now);
            }
            Phase::Online => {
                let silent = now.saturating_duration_since(self.last_heard);
                if silent >= self.cfg.silence_timeout {
                    self.end = Some(SessionEnd::Offline(Offline::Silent {
                        path: self.cfg.path.clone(),
                        silent,
                    }));
                    return;
                }
                if now >= self.next_probe {
                    self.transmit.push_back(DgtCommand::ReturnSerialNumber);
                    self.next_probe = now + self.probe_after();
                }
            }
            _ => {}
        }
        if self.phase == Phase::Online {
            self.check_ack_timeout(now);
        }
    }

    fn identify(&mut self, attempt: u32, now: Instant) {
        // §1 recommended order: reset to single-board IDLE, then ask who it is.
        self.transmit.extend([
            DgtCommand::Reset,
            DgtCommand::ReturnSerialNumber,
            DgtCommand::SendVersion,
        ]);
        self.phase = Phase::Identifying {
            attempt,
            until: now + self.cfg.handshake_timeout,
        };
    }

    fn after_identified(&mut self, now: Instant) {
        self.transmit
            .extend([DgtCommand::SendBoard, DgtCommand::SendUpdateNice]);
        // The version request is a clock command: it is answered only in UPDATE(_NICE),
        // which `4b` has just selected.
        self.transmit
            .push_back(DgtCommand::clock(ClockCommand::Version));
        self.in_flight = Some(InFlight {
            command: Pending::Plain(ClockCommand::Version),
            name: "version",
            sent_at: now,
            sends: 1,
        });
        self.phase = Phase::ClockVersion {
            until: now + self.cfg.clock_version_timeout,
        };
    }

    fn go_online(&mut self, now: Instant) {
        self.phase = Phase::Online;
        self.next_probe = now + self.probe_after();
        self.transmit.push_back(DgtCommand::SendClock);
        self.events.push_back(LinkEvent::Online(BoardIdentity {
            path: self.cfg.path.clone(),
            serial: self.serial.clone().unwrap_or_default(),
            version: self.version.unwrap_or_default(),
            clock: self.clock,
        }));
        if self.clock.is_none() {
            // Commands queued during the handshake have no clock to go to.
            for (_, name) in self.queue.drain(..) {
                self.events
                    .push_back(LinkEvent::CommandFailed(ClockCommandError::NoClock {
                        path: self.cfg.path.clone(),
                        command: name,
                    }));
            }
        }
        self.send_next_clock_command(now);
    }

    fn check_ack_timeout(&mut self, now: Instant) {
        let Some(f) = &mut self.in_flight else { return };
        if now < f.sent_at + self.cfg.ack_timeout {
            return;
        }
        if f.sends <= self.cfg.max_resends {
            f.sends += 1;
            f.sent_at = now;
            self.transmit
                .push_back(DgtCommand::clock(f.command.at(now)));
            return;
        }
        let attempts = f.sends;
        let name = f.name;
        let was_setnrun = matches!(f.command, Pending::SetAndRun(_));
        self.in_flight = None;
        self.events
            .push_back(LinkEvent::CommandFailed(ClockCommandError::NoAck {
                path: self.cfg.path.clone(),
                command: name,
                attempts,
            }));
        if was_setnrun {
            // The SETNRUN may have arrived with only its ACK lost: END regardless (§5.3).
            self.queue
                .push_front((Pending::Plain(ClockCommand::End), "end"));
        }
        self.send_next_clock_command(now);
    }

    // ---- commands -----------------------------------------------------------------

    pub fn handle_command(&mut self, command: LinkCommand, now: Instant) {
        let name = command.name();
        if let LinkCommand::RequestBoard = command {
            self.transmit.push_back(DgtCommand::SendBoard);
            return;
        }
        if let LinkCommand::RequestClock = command {
            self.transmit.push_back(DgtCommand::SendClock);
            return;
        }
        if let LinkCommand::NewGame { start, orientation } = command {
            self.board = BoardState::from_position(*start, orientation);
            self.board_settle_at = None;
            self.board_settle_stage = SettleStage::Quiet;
            // The new game reads moves only after a full dump (field updates need a base).
            self.transmit.push_back(DgtCommand::SendBoard);
            return;
        }
        if self.phase == Phase::Online && self.clock.is_none() {
            self.events
                .push_back(LinkEvent::CommandFailed(ClockCommandError::NoClock {
                    path: self.cfg.path.clone(),
                    command: name,
                }));
            return;
        }
        let xl = self.clock.is_some_and(|c| c.model == ClockModel::Xl);
        let pending = match command {
            LinkCommand::SetAndRun { left, right, run } => Pending::SetAndRun(SetAndRunAt {
                left,
                right,
                run,
                at: now,
            }),
            LinkCommand::Text { text, beep } if xl => Pending::Plain(ClockCommand::Display {
                segments: seven_segment(&text),
                icons: 0,
                beep: if beep { 0x03 } else { 0x01 },
            }),
            LinkCommand::Text { text, beep } => match ascii_text(&text) {
                Some(text) => Pending::Plain(ClockCommand::Ascii {
                    text,
                    beep: if beep { 0x03 } else { 0x00 },
                }),
                None => {
                    self.events.push_back(LinkEvent::CommandFailed(
                        ClockCommandError::Unencodable {
                            path: self.cfg.path.clone(),
                            reason: format!("clock text {text:?}"),
                        },
                    ));
                    return;
                }
            },
            LinkCommand::ShowTimes => Pending::Plain(ClockCommand::End),
            LinkCommand::Icons { .. } if xl => return,
            LinkCommand::Icons {
                left_period,
                right_period,
                left_flag,
                right_flag,
            } => {
                // Period n lights bit n-1 (1–5), the flag bit 5; `sp` 0: the signs go with
                // the next SETNRUN, which is always followed by ICONS again when due.
                let byte = |period: u8, flag: bool| {
                    let p = match period {
                        1..=5 => 1 << (period - 1),
                        _ => 0,
                    };
                    p | if flag { 0x20 } else { 0 }
                };
                Pending::Plain(ClockCommand::Icons {
                    left: 0,
                    right: 0,
                    left_period: byte(left_period, left_flag),
                    right_period: byte(right_period, right_flag),
                    special: 0,
                })
            }
            LinkCommand::NewGame { .. } | LinkCommand::RequestBoard | LinkCommand::RequestClock => {
                return;
            }
            LinkCommand::Beep { duration } => Pending::Plain(ClockCommand::Beep {
                duration: (duration.as_millis() / 64).clamp(1, 0x7f) as u8,
            }),
        };
        self.queue.push_back((pending, name));
        if self.phase == Phase::Online {
            self.send_next_clock_command(now);
        }
    }

    fn send_next_clock_command(&mut self, now: Instant) {
        if self.in_flight.is_some() {
            return;
        }
        let Some((command, name)) = self.queue.pop_front() else {
            return;
        };
        self.transmit.push_back(DgtCommand::clock(command.at(now)));
        self.in_flight = Some(InFlight {
            command,
            name,
            sent_at: now,
            sends: 1,
        });
    }

    // ---- messages -----------------------------------------------------------------

    pub fn handle_message(&mut self, msg: DgtMessage, now: Instant) {
        if matches!(self.phase, Phase::Settling { .. }) {
            return;
        }
        self.last_heard = now;
        if self.phase == Phase::Online {
            // Heard: the probe waits for the next silence.
            self.next_probe = now + self.probe_after();
        }
        match msg {
            DgtMessage::SerialNumber { serial } => {
                self.serial = Some(serial);
                self.maybe_identified(now);
            }
            DgtMessage::Version { major, minor } => {
                self.version = Some((major, minor));
                self.maybe_identified(now);
            }
            DgtMessage::ClockAck(ack) => self.handle_ack(ack, now),
            DgtMessage::ClockTime(reading) if self.phase == Phase::Online => {
                self.handle_reading(reading)
            }
            DgtMessage::BoardDump(dump) => {
                self.board_settle_at = None;
                self.board_settle_stage = SettleStage::Quiet;
                let events = self.board.on_dump(&dump);
                self.events.push_back(LinkEvent::Board(dump));
                self.events.extend(events.into_iter().map(LinkEvent::Game));
            }
            DgtMessage::FieldUpdate(f) if self.phase == Phase::Online => {
                let events = self.board.on_field_update(&f);
                self.events.push_back(LinkEvent::Field(f));
                // A recognised move needs no settling; anything else may be a move in
                // progress, called irregular only after a quiet spell.
                self.board_settle_stage = SettleStage::Quiet;
                self.board_settle_at = if events.is_empty() || self.board.is_irregular() {
                    Some(now + self.cfg.board_settle)
                } else {
                    None
                };
                self.events.extend(events.into_iter().map(LinkEvent::Game));
            }
            DgtMessage::BatteryStatus(b) => self.events.push_back(LinkEvent::Battery(b)),
            _ => {}
        }
    }

    fn maybe_identified(&mut self, now: Instant) {
        if matches!(self.phase, Phase::Identifying { .. })
            && self.serial.is_some()
            && self.version.is_some()
        {
            self.after_identified(now);
        }
    }

    fn handle_reading(&mut self, reading: crate::dgt::ClockTime) {
        let status = reading.status;
        if let Some(prev) = self.last_status
            && prev.right_high != status.right_high
        {
            self.events.push_back(LinkEvent::Lever {
                high: status.high_side(),
                reading,
            });
        }
        // The battery is reported at the session's first reading with a clock (FIDE
        // C.02.03 3.1.2: a warning at set-up, so a clock already low is never silent) and
        // on every change; a reading without a clock (D5) carries no battery state.
        if !status.no_clock && self.reported_battery != Some(status.battery_low) {
            self.reported_battery = Some(status.battery_low);
            self.events
                .push_back(LinkEvent::ClockBatteryLow(status.battery_low));
        }
        self.last_status = Some(status);
        self.events.push_back(LinkEvent::Clock(reading));
    }

    fn handle_ack(&mut self, ack: ClockAck, now: Instant) {
        if let Some((button, _held)) = ack.button() {
            self.events.push_back(LinkEvent::Button(button));
            return;
        }
        if ack.ack1 == ClockAck::NOT_IN_MODE_23 {
            if let Some(f) = self.in_flight.take() {
                self.events.push_back(LinkEvent::CommandFailed(
                    ClockCommandError::NotInComputerMode {
                        path: self.cfg.path.clone(),
                        command: f.name,
                    },
                ));
                self.send_next_clock_command(now);
            }
            return;
        }
        let Some(id) = ack.reply_to() else { return };
        let Some(f) = &self.in_flight else { return };
        if f.command.id() != id {
            // Out of sync (§5.3): an ACK for something else, e.g. a late one for a resent
            // command. Keep waiting for ours.
            return;
        }
        let Some(f) = self.in_flight.take() else {
            return;
        };
        let is_setnrun = matches!(f.command, Pending::SetAndRun(_));
        if self.phase != Phase::Online {
            if let Some((major, minor)) = ack.version() {
                self.clock = Some(ClockInfo {
                    model: ClockModel::from_major(major),
                    version: (major, minor),
                });
            }
            self.go_online(now);
            return;
        }
        if ack.is_ok() {
            self.events
                .push_back(LinkEvent::CommandDone { command: f.name });
        } else {
            let error = if is_setnrun && ack.ack0 == 0x40 {
                // §3: SETNRUN refused = the clock is not in computer mode.
                ClockCommandError::NotInComputerMode {
                    path: self.cfg.path.clone(),
                    command: f.name,
                }
            } else {
                ClockCommandError::Refused {
                    path: self.cfg.path.clone(),
                    command: f.name,
                    ack0: ack.ack0,
                }
            };
            self.events.push_back(LinkEvent::CommandFailed(error));
        }
        if is_setnrun {
            // §5.3: "after SETNRUN always send END … needed for some(!) clocks".
            self.queue
                .push_front((Pending::Plain(ClockCommand::End), "end"));
        }
        self.send_next_clock_command(now);
    }
}

fn set_time(d: Duration) -> SetTime {
    // Round up, as the clock displays (a side with 0.4 s left is not yet at 0:00).
    let secs = d.as_millis().div_ceil(1000).min(10 * 3600 - 1) as u32;
    SetTime::from_seconds(secs).unwrap_or(SetTime {
        hours: 9,
        minutes: 59,
        seconds: 59,
        count_up: false,
    })
}

/// Up to 8 printable ASCII characters, padded with spaces; anything else shows as `?`.
fn ascii_text(text: &str) -> Option<ClockText> {
    let mut bytes = [b' '; 8];
    for (dst, c) in bytes.iter_mut().zip(text.chars()) {
        *dst = if c.is_ascii() && !c.is_ascii_control() {
            c as u8
        } else {
            b'?'
        };
    }
    // All eight bytes are ASCII by construction, so this is always `Some`.
    ClockText::from_bytes(bytes)
}

/// 6 characters as XL 7-segment bytes in wire order C, B, A, F, E, D (dgt-protocol.md
/// §5.1, picochess's `char_to_xl` table).
fn seven_segment(text: &str) -> [u8; 6] {
    fn seg(c: char) -> u8 {
        match c.to_ascii_lowercase() {
            '0' => 0x3f,
            '1' => 0x06,
            '2' => 0x5b,
            '3' => 0x4f,
            '4' => 0x66,
            '5' => 0x6d,
            '6' => 0x7d,
            '7' => 0x07,
            '8' => 0x7f,
            '9' => 0x6f,
            'a' => 0x5f,
            'b' => 0x7c,
            'c' => 0x58,
            'd' => 0x5e,
            'e' => 0x7b,
            'f' => 0x71,
            'g' => 0x3d,
            'h' => 0x74,
            'i' => 0x10,
            'j' => 0x1e,
            'k' => 0x75,
            'l' => 0x38,
            'm' => 0x55,
            'n' => 0x54,
            'o' => 0x5c,
            'p' => 0x73,
            'q' => 0x67,
            'r' => 0x50,
            's' => 0x6d,
            't' => 0x78,
            'u' => 0x3e,
            'v' => 0x2a,
            'w' => 0x7e,
            'x' => 0x64,
            'y' => 0x6e,
            'z' => 0x5b,
            '-' => 0x40,
            '/' => 0x52,
            '|' => 0x36,
            '=' => 0x48,
            '_' => 0x08,
            ' ' => 0x00,
            _ => 0x53, // '?'
        }
    }
    let mut chars = [' '; 6];
    for (dst, c) in chars.iter_mut().zip(text.chars()) {
        *dst = c;
    }
    let [a, b, c, d, e, f] = chars.map(seg);
    [c, b, a, f, e, d]
}

#[cfg(test)]
mod tests;
