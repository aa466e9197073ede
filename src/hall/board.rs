//! One actor per board: it owns the board's `Game` and its link, and only translates —
//! link events into rule inputs, the core's events into clock commands, MQTT messages
//! and alerts, and `next_deadline` into one timer. It decides nothing itself.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::custody::{Custody, Secret};
use crate::dgt::{BoardEvent, ClockButton, ClockSide, ClockTime};
use crate::intake::input::BoardAct;
use crate::link::{ClockCommandError, LinkCommand, LinkEvent, RunSide};
use crate::mqtt::Publisher;
use crate::mqtt::payload::{
    AlertKind, AlertPayload, EventPayload, OFFLINE, ONLINE, Severity, StatePayload, Topics,
};
use crate::rules::adjournment::{EnvelopeStatus, Stage};
use crate::rules::game::{Event, Game, Input, Phase, Rejection, Score, describe_result};
use crate::rules::placement::{Placement, Side};
use crate::rules::{Color, Millis};
use crate::store::{JournalHandle, Record};

use crate::timebase::Timebase;

/// How long the e-board must be still before a move read from it is taken as final.
/// A sliding piece is reported square by square (a1a2, then a1a3), one board scan apart
/// (dgt-protocol.md §4.1: 200–250 ms; picochess settles after 0.25 s): a press that comes
/// sooner may have overtaken the rest of the slide, so it goes without the move and the
/// move is attached once the board has been still this long.
pub const MOVE_SETTLE: Duration = Duration::from_millis(250);

/// A move read from the e-board: waiting for its press, or owed by a press that came
/// first.
#[derive(Debug, Clone)]
struct BoardMove {
    uci: String,
    /// The move reader's ply number (1 = the first move of the game on the board).
    ply: usize,
}

/// A game on a board, with what the hall knows about it besides the rules.
#[derive(Debug, Clone)]
pub struct GameSlot {
    /// The game's id in the journal (it may move between boards, 6.10).
    pub id: u64,
    pub game: Game,
    pub round: Option<u32>,
    pub fide: (Option<u64>, Option<u64>),
    /// Every event of the game, in order: the PGN is made from them (`board/<b>/pgn`).
    pub events: Vec<Event>,
}

pub use crate::intake::refusal::Refusal;

/// Messages from the hall to a board actor.
#[derive(Debug)]
pub enum ToBoard {
    /// A new game (round start). Refused while a game is unfinished.
    StartGame {
        slot: Box<GameSlot>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// An arbiter's command, as the intake mapped it.
    Act {
        act: BoardAct,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// 6.10, source side: hand the unfinished game over (the board becomes idle).
    TakeGame {
        reply: oneshot::Sender<Result<GameSlot, Refusal>>,
    },
    /// 6.10, target side: continue `slot` here with the arbiter's times (`input`), or as
    /// it is (a board that moved to another port).
    AdoptGame {
        slot: Box<GameSlot>,
        from: String,
        input: Option<Input>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Whether this board's game is unfinished (for round start checks).
    Busy { reply: oneshot::Sender<Option<u32>> },
    /// How the board is, for the hall's heartbeat.
    Summary { reply: oneshot::Sender<Summary> },
    /// The hall has seen this board's identity (and moved games if cables were swapped):
    /// the clock's reading can now be reconciled with the game that is here.
    IdentityChecked,
    /// Would the rules accept `input` now? Nothing is applied.
    Check {
        input: Input,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// A retained alert of this board that the broker kept from before this start (the
    /// daemon has not published it since): cleared if the journal says it is resolved.
    StaleAlert { alert: Box<AlertPayload> },
}

/// One board's part of the status line.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub online: bool,
    pub running: bool,
    pub alerts: usize,
}

/// What a board tells the hall.
#[derive(Debug)]
pub enum FromBoard {
    /// The board answered on this board's port (after every connection).
    Identity { board: String, serial: String },
    /// Where the board's game is in the adjournment procedure, after every change.
    Stage { board: String, note: StageNote },
    Finished {
        board: String,
        round: Option<u32>,
        white: String,
        black: String,
        result: crate::rules::game::GameResult,
    },
}

/// A board's part of the hall's session view (the retained `session` topic).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StageNote {
    pub round: Option<u32>,
    /// `None`: never adjourned, or no game.
    pub stage: Option<Stage>,
    /// No game, or a game with a result.
    pub finished: bool,
    /// The game's own session end and resumption, as its core knows them (so the hall's
    /// view survives a restart: it is rebuilt from the journal through the games).
    pub session_end: Option<Millis>,
    pub resumption: Option<crate::rules::adjournment::Resumption>,
}

/// Everything a board actor needs.
pub struct BoardParts {
    pub id: String,
    pub port: String,
    pub placement: Placement,
    pub topics: Topics,
    pub publisher: Publisher,
    pub timebase: Timebase,
    pub link_commands: mpsc::Sender<LinkCommand>,
    pub link_events: mpsc::Receiver<LinkEvent>,
    pub inbox: mpsc::Receiver<ToBoard>,
    pub hall: mpsc::UnboundedSender<FromBoard>,
    /// Bounds the 6.9 full searches that run at once (they can take seconds).
    pub searches: Arc<Semaphore>,
    pub journal: JournalHandle,
    /// Where sealed moves are kept until their opening (I.3).
    pub custody: Arc<Custody>,
    /// What the journal held for this board at start-up.
    pub recovered: Option<GameSlot>,
    pub seq: u64,
    /// The broadcast feed, given each game where `board/<b>/pgn` is published.
    pub feed: crate::broadcast::FeedWriter,
}

struct Actor {
    id: String,
    placement: Placement,
    topics: Topics,
    publisher: Publisher,
    timebase: Timebase,
    link: mpsc::Sender<LinkCommand>,
    hall: mpsc::UnboundedSender<FromBoard>,
    searches: Arc<Semaphore>,
    journal: JournalHandle,
    custody: Arc<Custody>,
    /// The last stage told to the hall: only changes are sent (the hall may be waiting
    /// on this actor, so its channel must not fill with repeats).
    reported: Option<StageNote>,
    /// The commitment of the sealed move written and not yet committed: when another
    /// replaces it (I.1.1), the replaced one's custody record is destroyed once the
    /// replacement is on disk, so a move the player changed their mind about is not kept.
    pending_seal: Option<String>,
    slot: Option<GameSlot>,
    /// The last sequence number given to an event of this board.
    seq: u64,
    /// Events applied in memory but not yet on disk (a storage fault): they are
    /// published only once stored.
    unstored: Vec<(u64, u64, Event)>,
    /// The sequence number of the last event published.
    published_seq: u64,
    retry_storage: Option<tokio::time::Instant>,
    online: bool,
    feed: crate::broadcast::FeedWriter,
    /// What the retained PGN last published shows: (game id, events) or `None` (no game).
    /// It changes only with them, so it is rendered and sent only then.
    pgn_shown: std::cell::Cell<Option<Option<(u64, usize)>>>,
    /// The e-board move waiting for its press (a slide may still be corrected), or owed
    /// by a press that came before it was final.
    pending_move: Option<BoardMove>,
    /// The last field update from the board: a move is final once the board is still.
    last_field_at: Option<tokio::time::Instant>,
    /// When to attach the owed move in `pending_move` (the board has been still since).
    attach_at: Option<tokio::time::Instant>,
    /// The ply the last press carried: a correction of it after the press cannot be
    /// applied (the arbiter is told).
    carried_ply: Option<usize>,
    /// Active alerts and their messages, so each is published once and cleared once.
    alerts: HashMap<AlertKind, String>,
    /// The clock shows what we last programmed (its ACK came back); readings taken
    /// before that are not compared (they miss the increment just credited).
    display_synced: bool,
    /// Back online after an outage: the clock's first reading is the evidence of what
    /// happened meanwhile, compared before the official times are sent again.
    reconcile: bool,
    /// Online, but the hall has not yet checked which board this is (swapped cables):
    /// until then no reading is compared with a game that may not be this board's.
    identity_pending: bool,
    /// The side whose lever end is up, as the clock last reported it.
    lever: Option<ClockSide>,
    /// The lever is the wrong way round for the player to move (left so by the last
    /// game, the sealing, or a press the rules refused): that player's end is already
    /// down, so the press they make is the other end going down.
    lever_reversed: bool,
    /// The clock's reading after an outage could not be explained (several presses):
    /// its times are kept on the display, not overwritten, until the arbiter acts.
    hold_clock: bool,
    /// Alerts this run found resolved while it did not know them as raised: a retained
    /// copy the broker kept from before the start is cleared when it arrives.
    resolved: HashSet<AlertKind>,
}

/// What the clock shows when the lever is the wrong way round at a new game: the arbiter
/// turns it over while the clocks stand (before the start, or after `pause`). Until then
/// a press still counts for the player to move.
pub const LEVER_TEXT: &str = "LEVER";

/// The clock's own resolution: it shows whole seconds, and was programmed with times
/// rounded up to whole seconds.
const CLOCK_RESOLUTION: Millis = Millis(1000);

/// Run a board actor until the hall drops its inbox.
pub async fn run(parts: BoardParts) {
    let BoardParts {
        id,
        port: _,
        placement,
        topics,
        publisher,
        timebase,
        link_commands,
        mut link_events,
        mut inbox,
        hall,
        searches,
        journal,
        custody,
        recovered,
        seq,
        feed,
    } = parts;
    let mut a = Actor {
        id,
        placement,
        topics,
        publisher,
        timebase,
        link: link_commands,
        hall,
        searches,
        journal,
        custody,
        feed,
        reported: None,
        pending_seal: None,
        slot: recovered,
        seq,
        unstored: Vec::new(),
        published_seq: seq,
        retry_storage: None,
        online: false,
        pgn_shown: std::cell::Cell::new(None),
        pending_move: None,
        last_field_at: None,
        attach_at: None,
        carried_ply: None,
        alerts: HashMap::new(),
        display_synced: false,
        reconcile: false,
        identity_pending: false,
        lever: None,
        lever_reversed: false,
        hold_clock: false,
        resolved: HashSet::new(),
    };
    a.publish_availability();
    a.publish_state();
    // The alerts that follow the game are rebuilt from the journal (the recovered game),
    // not remembered: a restart shows the same ones, resolved ones stay resolved.
    a.update_game_alerts();
    // A recovered game: the e-board's move reader starts from its position, or the first
    // move after the restart is read against nothing and lost. (With a move owed the
    // position is unknown: the reader then learns it from the board as before. An
    // adjourned game's position reaches the reader when its envelope is opened.)
    if a.slot.as_ref().is_some_and(|s| {
        s.game.result().is_none()
            && s.game.position().is_some()
            && !matches!(
                s.game.phase(),
                Phase::Paused(crate::rules::game::PausedBy::Adjourned)
            )
    }) {
        a.new_game_on_board().await;
    }
    a.report_stage().await;
    loop {
        let mut deadline = a
            .slot
            .as_ref()
            .and_then(|s| s.game.next_deadline())
            .map(|d| a.timebase.instant_of(d));
        let retry = a.retry_storage;
        let attach = a.attach_at;
        // A flag due while a pressed move is still settling on the board waits for it
        // (at most MOVE_SETTLE): the flag's verdict (6.9) needs the position, and the
        // move, completed before the flag, is the game's. The flag keeps its instant.
        if let (Some(d), Some(at)) = (deadline, attach)
            && a.slot
                .as_ref()
                .is_some_and(|s| s.game.move_owed().is_some())
        {
            deadline = Some(d.max(at));
        }
        tokio::select! {
            () = async {
                if let Some(at) = attach { tokio::time::sleep_until(at).await }
            }, if attach.is_some() => {
                a.attach_at = None;
                a.attach_owed().await;
            },
            () = async {
                if let Some(at) = retry { tokio::time::sleep_until(at).await }
            }, if retry.is_some() => {
                a.retry_storage = None;
                a.flush().await;
            },
            msg = inbox.recv() => match msg {
                Some(msg) => {
                    a.on_message(msg).await;
                    // A game started, moved or adopted changes the hall's session view.
                    a.report_stage().await;
                }
                None => break,
            },
            ev = link_events.recv() => match ev {
                Some(ev) => a.on_link(ev).await,
                // The link task ended (it only does so when we go away).
                None => break,
            },
            () = async {
                if let Some(at) = deadline { tokio::time::sleep_until(at).await }
            }, if deadline.is_some() => a.on_deadline().await,
        }
    }
}

impl Actor {
    fn now(&self) -> Millis {
        self.timebase.now()
    }

    fn alert_id(&self, kind: AlertKind) -> String {
        format!("{}-{}", self.id, kind.slug())
    }

    fn raise(&mut self, kind: AlertKind, severity: Severity, message: String) {
        let now = self.now();
        self.raise_since(kind, severity, message, now);
    }

    /// Raise an alert that dates from `since` (an alert rebuilt from the journal keeps
    /// the instant of the event that caused it).
    fn raise_since(&mut self, kind: AlertKind, severity: Severity, message: String, since: Millis) {
        self.raise_with(kind, severity, message, since, None);
    }

    /// Raise an alert; `error` is the code of the refusal it reports, if any.
    fn raise_with(
        &mut self,
        kind: AlertKind,
        severity: Severity,
        message: String,
        since: Millis,
        error: Option<String>,
    ) {
        self.resolved.remove(&kind);
        if self.alerts.get(&kind) == Some(&message) {
            return;
        }
        match severity {
            Severity::Critical | Severity::Warning => {
                tracing::warn!(board = %self.id, alert = kind.slug(), "{}", crate::intake::command::log_safe(&message))
            }
            Severity::Info => {
                tracing::info!(board = %self.id, alert = kind.slug(), "{}", crate::intake::command::log_safe(&message))
            }
        }
        let payload = AlertPayload {
            id: self.alert_id(kind),
            board: Some(self.id.clone()),
            kind,
            severity,
            message: message.clone(),
            since,
            error,
        };
        self.publisher
            .json_retained(self.topics.alert(&payload.id), &payload);
        self.alerts.insert(kind, message);
    }

    fn clear(&mut self, kind: AlertKind) {
        if self.alerts.remove(&kind).is_some() {
            tracing::info!(board = %self.id, alert = kind.slug(), "resolved");
            self.publisher
                .retained(self.topics.alert(&self.alert_id(kind)), Vec::new());
        } else {
            self.resolved.insert(kind);
        }
    }

    /// A retained alert from before this start. Those that follow the game were rebuilt
    /// from the journal at start: one not raised again is resolved. The others come from
    /// the hardware or a refused press, which the journal does not hold: the alert is
    /// taken over as it is (and cleared when its cause is), unless this run already saw
    /// it resolved.
    fn on_stale_alert(&mut self, alert: AlertPayload) {
        let kind = alert.kind;
        if alert.id != self.alert_id(kind) || self.alerts.contains_key(&kind) {
            return;
        }
        let from_journal = matches!(
            kind,
            AlertKind::ResultPending
                | AlertKind::PlayerPause
                | AlertKind::BothFlags
                | AlertKind::ClockDiscrepancy
                | AlertKind::Storage
        );
        if kind == AlertKind::BoardMoved || kind == AlertKind::OutgoingQueue {
            return;
        }
        if from_journal || self.resolved.contains(&kind) {
            tracing::info!(board = %self.id, alert = kind.slug(), "alert from before the restart is resolved; cleared");
            self.publisher
                .retained(self.topics.alert(&alert.id), Vec::new());
        } else {
            self.alerts.insert(kind, alert.message);
        }
    }

    fn publish_availability(&self) {
        let payload = if self.online { ONLINE } else { OFFLINE };
        self.publisher.retained(
            self.topics.availability(&self.id),
            payload.as_bytes().to_vec(),
        );
    }

    fn state(&self, now: Millis) -> StatePayload {
        match &self.slot {
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
        }
    }

    /// The retained state. Held back while events wait for the disk: a state must not
    /// show what no stored event explains.
    fn publish_state(&self) {
        if !self.unstored.is_empty() {
            return;
        }
        let state = self.state(self.now());
        self.publisher
            .json_retained(self.topics.state(&self.id), &state);
        self.publish_pgn();
    }

    /// The retained PGN of the board's game (empty: no game), when it changed.
    fn publish_pgn(&self) {
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
                            setup: s.game.setup().clone(),
                            events: s.events.clone(),
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
    async fn apply(&mut self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let Some(slot) = self.slot.as_mut() else {
            return;
        };
        let mut reprogram = false;
        let mut text: Option<&'static str> = None;
        let mut finished = None;
        let mut new_position = false;
        let mut replaced_seals = Vec::new();
        let mut realign = false;
        let mut realign_quietly = false;
        for event in events {
            slot.game.evolve(&event);
            slot.events.push(event.clone());
            self.seq += 1;
            // Events never carry a sealed move before its opening (only the commitment),
            // so logging them whole is safe (I.3).
            tracing::debug!(board = %self.id, seq = self.seq, ?event, "event");
            match &event {
                Event::PlayerPresent { .. } | Event::MoveMade { .. } => {}
                Event::Sealed { commitment, .. } => {
                    if let Some(old) = self.pending_seal.replace(commitment.clone()) {
                        replaced_seals.push(old);
                    }
                }
                Event::EnvelopeVerified { .. }
                | Event::DrawOffered { .. }
                | Event::DrawOfferAnswered { .. }
                | Event::ResumptionScheduled { .. }
                | Event::SessionEndSet { .. }
                | Event::AdjournmentRulesSet { .. }
                | Event::EnvelopeOpened { .. } => {}
                // A1a: both clocks stand still until the resumption; the clock says why.
                Event::SealCommitted { .. } => {
                    self.pending_seal = None;
                    reprogram = true;
                    text = Some("SEALED");
                }
                // The move reader follows the core: the position before the sealed move
                // at resumption, then the position after it once it is played (the
                // arbiter makes it on the board, I.9.1).
                Event::ResumptionStarted { .. } | Event::SealedMovePlayed { .. } => {
                    reprogram = true;
                    text = None;
                    new_position = true;
                    // Quietly: the restored times must stay readable on the display.
                    realign_quietly = true;
                }
                Event::ClockReplaced { .. } => {
                    reprogram = true;
                    realign = true;
                }
                Event::ClockDiscrepancy { .. }
                | Event::DiscrepancyAcknowledged { .. }
                | Event::PositionSet { .. } => {}
                Event::ResultPending { .. } => text = Some("ARBITER"),
                Event::PausedByPlayer { .. } | Event::Paused { .. } => {
                    reprogram = true;
                    text = Some("PAUSE");
                }
                Event::FlagFell { frozen, .. } => {
                    reprogram = true;
                    if *frozen {
                        text = Some("FLAG");
                    }
                }
                Event::GameEnded { result, .. } => {
                    reprogram = true;
                    text = Some(match result.score {
                        Score::WhiteWins => "1-0",
                        Score::BlackWins => "0-1",
                        Score::Draw => "DRAW",
                        Score::BothLose => "0-0",
                        Score::Annulled => "ANNUL",
                    });
                    finished = Some(result.clone());
                }
                Event::Resumed { .. } => {
                    reprogram = true;
                    text = None;
                }
                _ => reprogram = true,
            }
            self.unstored.push((self.seq, slot.id, event));
        }
        // The arbiter's times end a hold on the clock's own (outage) times.
        if self.hold_clock
            && self
                .slot
                .as_ref()
                .is_some_and(|s| s.game.discrepancy().is_none())
        {
            self.hold_clock = false;
            reprogram = true;
        }
        // A game that starts again (resumption, another clock) starts with the lever
        // wherever it was left.
        if realign && self.align_lever() && text.is_none() {
            text = Some(LEVER_TEXT);
        } else if realign_quietly {
            self.align_lever();
        }
        // The hardware first: players see the official time even if the disk is slow.
        if reprogram {
            self.program_clock(text).await;
        }
        if new_position {
            self.forget_board_moves();
            self.new_game_on_board().await;
        }
        self.flush().await;
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
    async fn flush(&mut self) {
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
                for (seq, _, event) in std::mem::take(&mut self.unstored) {
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
            Err(e) => {
                self.raise(
                    AlertKind::Storage,
                    Severity::Critical,
                    format!(
                        "cannot store events ({e}); the clocks keep running, {} event(s) wait to be stored and published",
                        self.unstored.len()
                    ),
                );
                self.retry_storage = Some(tokio::time::Instant::now() + Duration::from_secs(1));
            }
        }
    }

    /// Alerts that follow the game's state: a pending flag, a player's pause, 6.11.
    fn update_game_alerts(&mut self) {
        let Some(slot) = &self.slot else {
            for kind in [
                AlertKind::ResultPending,
                AlertKind::PlayerPause,
                AlertKind::BothFlags,
                AlertKind::ClockDiscrepancy,
            ] {
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
                let message = discrepancy_message(&d);
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
                format!("{}'s flag fell: {}", p.side, p.reason),
                p.at,
            ),
            None => self.clear(AlertKind::ResultPending),
        }
        match player_pause {
            Some(side) => self.raise(
                AlertKind::PlayerPause,
                Severity::Critical,
                format!("{side} stopped the clocks and asks for the arbiter (6.12b)"),
            ),
            None => self.clear(AlertKind::PlayerPause),
        }
        if both {
            self.raise(
                AlertKind::BothFlags,
                Severity::Critical,
                "both flags are down and which fell first cannot be established (6.11): the game continues until the arbiter acts".into(),
            );
        } else {
            self.clear(AlertKind::BothFlags);
        }
    }

    /// Tell the hall where this board's game is in the adjournment procedure (for the
    /// hall's session state and its "all sealed" event).
    async fn report_stage(&mut self) {
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

    /// Seal (or counter-seal) `mv`: a fresh nonce from the system's generator, the move
    /// and nonce kept encrypted (and on disk) before the rules see them, so no event
    /// ever names a commitment the custody cannot open. A refused seal is forgotten.
    async fn seal_secret(
        &mut self,
        side: Option<Color>,
        mv: String,
        on_board: bool,
        counter: bool,
    ) -> Result<(), Refusal> {
        let nonce = crate::custody::fresh_nonce();
        let commitment = crate::rules::adjournment::commitment(&nonce, &mv)
            .map_err(|reason| Refusal::Internal { reason })?;
        let secret = Secret {
            mv: mv.clone(),
            nonce: nonce.clone(),
        };
        let custody = self.custody.clone();
        let key = commitment.clone();
        match tokio::task::spawn_blocking(move || custody.keep(&key, &secret)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(Refusal::SealNotKept {
                    reason: e.to_string(),
                });
            }
            Err(_) => return Err(Refusal::CustodyTaskFailed),
        }
        let input = if counter {
            Input::CounterSeal { mv, nonce }
        } else {
            Input::Seal {
                side,
                mv,
                nonce,
                on_board,
            }
        };
        let r = self.decide(input).await;
        if r.is_err() {
            self.custody.discard(&commitment);
        }
        r
    }

    /// I.7: open the waiting envelope with the move and nonce from custody. With no
    /// envelope waiting, the rules say why (an empty opening is refused by them).
    async fn open_envelope(&mut self, arbiter: String) -> Result<(), Refusal> {
        let waiting = self.slot.as_ref().and_then(|s| {
            s.game.view(self.now()).adjournment.and_then(|a| {
                a.envelopes
                    .iter()
                    .rev()
                    .find(|e| e.status == EnvelopeStatus::Sealed)
                    .map(|e| e.commitment.clone())
            })
        });
        let secret = match waiting {
            None => Secret {
                mv: String::new(),
                nonce: String::new(),
            },
            Some(commitment) => {
                let custody = self.custody.clone();
                match tokio::task::spawn_blocking(move || custody.fetch(&commitment)).await {
                    Ok(Ok(secret)) => secret,
                    Ok(Err(e)) => {
                        return Err(Refusal::SealUnreadable {
                            reason: e.to_string(),
                        });
                    }
                    Err(_) => return Err(Refusal::CustodyTaskFailed),
                }
            }
        };
        self.decide(Input::OpenEnvelope {
            mv: secret.mv,
            nonce: secret.nonce,
            arbiter,
        })
        .await
    }

    fn stage(&self) -> Option<Stage> {
        self.slot
            .as_ref()
            .and_then(|s| s.game.view(self.now()).adjournment.map(|a| a.stage))
    }

    /// Program the clock with the official times (DESIGN.md §3): SETNRUN (+END by the
    /// link) with the times the core computed, then a short text when there is one.
    async fn program_clock(&mut self, text: Option<&str>) {
        if self.hold_clock {
            return;
        }
        let Some(slot) = &self.slot else { return };
        let view = slot.game.view(self.now());
        // An adjourned game's clock always says so (also after a reconnection).
        let text = match (&view.phase, text) {
            (Phase::Paused(crate::rules::game::PausedBy::Adjourned), None) => Some("SEALED"),
            (_, t) => t,
        };
        let time_of = |side: Side| {
            let c = self.placement.color_at(side);
            let ms = match c {
                Color::White => view.white.display_ms,
                Color::Black => view.black.display_ms,
            };
            Duration::from_millis(u64::try_from(ms.0).unwrap_or(0))
        };
        let run = match view.running {
            None => RunSide::Paused,
            Some(c) => match self.placement.side_of(c) {
                Side::Left => RunSide::Left,
                Side::Right => RunSide::Right,
            },
        };
        let command = LinkCommand::SetAndRun {
            left: time_of(Side::Left),
            right: time_of(Side::Right),
            run,
        };
        self.display_synced = false;
        if self.link.send(command).await.is_err() {
            return;
        }
        if let Some(text) = text {
            let _ = self
                .link
                .send(LinkCommand::Text {
                    text: text.to_string(),
                    beep: false,
                })
                .await;
        }
    }

    /// A time-driven deadline (start, default time, flag). A flag may need the full 6.9
    /// search, which can take seconds: it runs on a blocking thread, bounded.
    async fn on_deadline(&mut self) {
        let Some(slot) = &self.slot else { return };
        let game = slot.game.clone();
        let now = self.now();
        let permit = self.searches.clone().acquire_owned().await;
        let events = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            game.poll(now)
        })
        .await
        .unwrap_or_default();
        self.apply(events).await;
    }

    /// Decide an input; inputs that may search (6.9) run on a blocking thread.
    async fn decide(&mut self, input: Input) -> Result<(), Refusal> {
        let now = self.now();
        self.decide_at(input, now).await
    }

    /// Decide an input at `now`, which may be earlier than the present (a press placed
    /// from a clock's reading), never earlier than the game's latest event.
    async fn decide_at(&mut self, input: Input, now: Millis) -> Result<(), Refusal> {
        let Some(slot) = &self.slot else {
            return Err(Refusal::NoGame {
                board: self.id.clone(),
            });
        };
        let heavy = matches!(input, Input::ConfirmFlag { .. } | Input::SetResult { .. })
            || slot.game.next_deadline().is_some_and(|d| d <= now);
        let decided = if heavy {
            let game = slot.game.clone();
            let permit = self.searches.clone().acquire_owned().await;
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                game.decide(&input, now)
            })
            .await
            .unwrap_or_else(|_| {
                Err(Rejection::VerdictUnknown {
                    reason: "the 6.9 search failed".into(),
                })
            })
        } else {
            slot.game.decide(&input, now)
        };
        match decided {
            Ok(events) => {
                self.apply(events).await;
                Ok(())
            }
            Err(r) => Err(Refusal::Rejected(r)),
        }
    }

    async fn on_message(&mut self, msg: ToBoard) {
        match msg {
            ToBoard::StartGame { slot, reply } => {
                let r = self.start_game(*slot).await;
                let _ = reply.send(r);
            }
            ToBoard::Act { act, reply } => {
                let r = self.on_act(act).await;
                let _ = reply.send(r);
            }
            ToBoard::TakeGame { reply } => {
                let r = match self.slot.take() {
                    Some(slot) if slot.game.result().is_none() => {
                        self.forget_board_moves();
                        self.hold_clock = false;
                        self.publish_state();
                        for kind in [
                            AlertKind::ResultPending,
                            AlertKind::PlayerPause,
                            AlertKind::BothFlags,
                            AlertKind::ClockDiscrepancy,
                        ] {
                            self.clear(kind);
                        }
                        let _ = self
                            .link
                            .send(LinkCommand::Text {
                                text: "MOVED".into(),
                                beep: false,
                            })
                            .await;
                        Ok(slot)
                    }
                    other => {
                        self.slot = other;
                        Err(Refusal::NoGameToMove {
                            board: self.id.clone(),
                        })
                    }
                };
                let _ = reply.send(r);
            }
            ToBoard::AdoptGame {
                slot,
                from,
                input,
                reply,
            } => {
                let moved = Record::GameMoved {
                    game: slot.id,
                    from,
                    to: self.id.clone(),
                };
                let r = if let Some(round) = self.busy() {
                    Err(Refusal::BoardBusy {
                        board: self.id.clone(),
                        round,
                    })
                } else if let Err(e) = self.journal.append(vec![moved]).await {
                    Err(Refusal::NotStored {
                        reason: e.to_string(),
                    })
                } else {
                    self.slot = Some(*slot);
                    self.new_game_on_board().await;
                    match input {
                        Some(input) => self.decide(input).await,
                        None => {
                            // The game came with its board: that board's clock is the
                            // evidence of what happened while it was away.
                            self.publish_state();
                            self.update_game_alerts();
                            if self.online && self.running_game() {
                                self.reconcile = true;
                            } else {
                                self.program_clock(None).await;
                            }
                            Ok(())
                        }
                    }
                };
                let _ = reply.send(r);
            }
            ToBoard::Busy { reply } => {
                let _ = reply.send(self.busy());
            }
            ToBoard::IdentityChecked => {
                self.identity_pending = false;
                if self.running_game() {
                    // Wait for the clock's own reading (the link asks for one right after
                    // the handshake) before overwriting it.
                    self.reconcile = true;
                } else if self.slot.is_some() {
                    // The lever may have been left the wrong way round (a press refused
                    // during a pause, before the restart).
                    self.align_lever();
                    self.program_clock(None).await;
                }
            }
            ToBoard::Summary { reply } => {
                let _ = reply.send(Summary {
                    online: self.online,
                    running: self.running_game(),
                    alerts: self.alerts.len(),
                });
            }
            ToBoard::Check { input, reply } => {
                let r = match &self.slot {
                    None => Err(Refusal::NoGame {
                        board: self.id.clone(),
                    }),
                    Some(slot) => slot
                        .game
                        .decide(&input, self.now())
                        .map(|_| ())
                        .map_err(Refusal::Rejected),
                };
                let _ = reply.send(r);
            }
            ToBoard::StaleAlert { alert } => self.on_stale_alert(*alert),
        }
    }

    /// The round of an unfinished game on this board, if any (0 when it has no round).
    fn busy(&self) -> Option<u32> {
        self.slot
            .as_ref()
            .filter(|s| s.game.result().is_none())
            .map(|s| s.round.unwrap_or(0))
    }

    async fn start_game(&mut self, slot: GameSlot) -> Result<(), Refusal> {
        if let Some(round) = self.busy() {
            return Err(Refusal::BoardBusy {
                board: self.id.clone(),
                round,
            });
        }
        let created = Record::GameCreated {
            board: self.id.clone(),
            game: slot.id,
            round: slot.round,
            fide: slot.fide,
            setup: Box::new(slot.game.setup().clone()),
        };
        if let Err(e) = self.journal.append(vec![created]).await {
            self.raise(
                AlertKind::Storage,
                Severity::Critical,
                format!("cannot store the new game ({e})"),
            );
            return Err(Refusal::GameNotStored {
                board: self.id.clone(),
                reason: e.to_string(),
            });
        }
        self.slot = Some(slot);
        self.forget_board_moves();
        for kind in [
            AlertKind::ResultPending,
            AlertKind::PlayerPause,
            AlertKind::BothFlags,
            AlertKind::StrayPress,
            AlertKind::ClockDiscrepancy,
            AlertKind::MoveRejected,
            AlertKind::ResultShown,
            // The move reader starts afresh: what the old game's board showed is moot.
            AlertKind::Irregular,
        ] {
            self.clear(kind);
        }
        self.new_game_on_board().await;
        self.publish_state();
        self.hold_clock = false;
        // The lever is wherever the last game left it.
        let text = self.align_lever().then_some(LEVER_TEXT);
        self.program_clock(text).await;
        Ok(())
    }

    /// Tell the move reader where the game starts.
    async fn new_game_on_board(&mut self) {
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

    async fn on_act(&mut self, act: BoardAct) -> Result<(), Refusal> {
        let input = match act {
            BoardAct::SwapSides { arbiter } => {
                self.placement = self.placement.swapped();
                tracing::info!(board = %self.id, white = ?self.placement.white, arbiter = %crate::intake::command::log_safe(&arbiter), "clock turned round (6.4)");
                self.publish_state();
                self.program_clock(None).await;
                return Ok(());
            }
            BoardAct::Seal {
                side,
                text,
                counter,
            } => return self.seal_secret(side, text, false, counter).await,
            BoardAct::OpenEnvelope { arbiter } => return self.open_envelope(arbiter).await,
            BoardAct::Rules(input) => input,
        };
        let r = self.decide(input).await;
        if r.is_ok() {
            // A new position for the move reader, or a resumed clock: keep the board in step.
            self.clear(AlertKind::StrayPress);
        }
        r
    }

    async fn on_link(&mut self, ev: LinkEvent) {
        match ev {
            LinkEvent::Online(identity) => {
                self.online = true;
                tracing::info!(board = %self.id, serial = %identity.serial, clock = ?identity.clock, "board online");
                let _ = self
                    .hall
                    .send(FromBoard::Identity {
                        board: self.id.clone(),
                        serial: identity.serial.clone(),
                    })
                    ;
                self.publish_availability();
                self.clear(AlertKind::Offline);
                self.clear(AlertKind::Port);
                if identity.clock.is_none() {
                    self.raise(
                        AlertKind::ClockCommand,
                        Severity::Warning,
                        format!(
                            "board {} ({}): no clock answered; connect a DGT3000 in mode 25",
                            self.id,
                            identity.path.display()
                        ),
                    );
                }
                self.publish_state();
                // Reconciliation waits for the hall's identity check (IdentityChecked).
                self.identity_pending = true;
                self.reconcile = false;
            }
            LinkEvent::Offline(why) => {
                self.online = false;
                self.display_synced = false;
                self.publish_availability();
                let severity = if self.busy().is_some() {
                    Severity::Critical
                } else {
                    Severity::Warning
                };
                self.raise(
                    AlertKind::Offline,
                    severity,
                    format!("board {} offline: {why} (the clock keeps running by itself)", self.id),
                );
                self.publish_state();
            }
            LinkEvent::Error(e) => {
                self.raise(AlertKind::Port, Severity::Warning, e.to_string());
            }
            LinkEvent::CommandDone { command } => {
                if command == "set-and-run" {
                    self.display_synced = true;
                }
                self.clear(AlertKind::ClockMode);
                if command != "text" && command != "show-times" {
                    self.clear(AlertKind::ClockCommand);
                }
            }
            LinkEvent::CommandFailed(e) => match e {
                ClockCommandError::NotInComputerMode { .. } => self.raise(
                    AlertKind::ClockMode,
                    Severity::Critical,
                    format!("{e}: the official time is kept by hallclock, but the clock does not show it"),
                ),
                // Offline boards get their times again when they come back.
                ClockCommandError::Offline { .. } => {}
                other => self.raise(AlertKind::ClockCommand, Severity::Warning, other.to_string()),
            },
            LinkEvent::Lever { high, reading } => self.on_lever(high, reading).await,
            LinkEvent::Clock(reading) => self.on_reading(reading).await,
            LinkEvent::Button(button) => self.on_button(button).await,
            LinkEvent::Game(e) => self.on_board_event(e).await,
            LinkEvent::Field(_) => {
                let now = tokio::time::Instant::now();
                self.last_field_at = Some(now);
                // Still moving: the owed move is attached once the board is still.
                if self.attach_at.is_some() {
                    self.attach_at = Some(now + MOVE_SETTLE);
                }
            }
            LinkEvent::Board(_) => {}
            LinkEvent::Battery(b) => tracing::info!(board = %self.id, battery = ?b, "battery"),
            LinkEvent::ClockBatteryLow(low) => {
                if low {
                    tracing::warn!(board = %self.id, "clock battery low");
                }
            }
        }
    }

    fn side(side: ClockSide) -> Side {
        match side {
            ClockSide::Left => Side::Left,
            ClockSide::Right => Side::Right,
        }
    }

    /// A lever press: the lever went down on the presser's side, so the side now high
    /// is the opponent's (dgt-protocol.md §6).
    async fn on_lever(&mut self, high: ClockSide, _reading: ClockTime) {
        self.display_synced = false;
        self.lever = Some(high);
        // The usual case: the player to move's end was up and went down. With the lever
        // the wrong way round, that end was already down: the end that went down is the
        // opponent's, pushed by the player to move to complete the move.
        let presser = if self.lever_reversed {
            self.placement.color_at(Self::side(high))
        } else {
            self.placement.color_at(Self::side(high).other())
        };
        if self.lever_reversed
            && self
                .slot
                .as_ref()
                .is_some_and(|s| s.game.clock().running().is_none() && s.game.result().is_none())
        {
            // The clocks stand (before the start, or paused): this is the lever being
            // turned the right way round, not a move.
            self.lever_reversed = false;
            tracing::info!(board = %self.id, "lever turned the right way round");
            self.program_clock(None).await;
            return;
        }
        let Some(slot) = &self.slot else {
            self.raise(
                AlertKind::StrayPress,
                Severity::Info,
                format!("lever pressed on board {} which has no game", self.id),
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
                    format!(
                        "e-board move {} not accepted ({}); the press was recorded without it",
                        mv.unwrap_or_default(),
                        r
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
    }

    /// A new game or position on the board: nothing read before it belongs to it.
    fn forget_board_moves(&mut self) {
        self.pending_move = None;
        self.attach_at = None;
        self.carried_ply = None;
    }

    /// The pending move if the board has been still long enough for it to be final;
    /// otherwise the press goes without it, the move is owed, and it is attached once
    /// the board is still (`attach_at`).
    fn move_for_press(&mut self) -> Option<String> {
        let now = tokio::time::Instant::now();
        let Some(pending) = self.pending_move.as_ref() else {
            // Nothing read yet: if the updates do not come, a board dump is asked for.
            self.attach_at = Some(now + 2 * MOVE_SETTLE);
            return None;
        };
        let still_since = self.last_field_at.unwrap_or(now - MOVE_SETTLE);
        if now.saturating_duration_since(still_since) >= MOVE_SETTLE {
            self.carried_ply = Some(pending.ply);
            return self.pending_move.take().map(|m| m.uci);
        }
        self.attach_at = Some(still_since + MOVE_SETTLE);
        None
    }

    /// Attach the move a press completed before the board showed it (6.7a: the press
    /// counted at its instant; the move is recorded now).
    async fn attach_owed(&mut self) {
        self.attach_at = None;
        let Some(side) = self.slot.as_ref().and_then(|s| s.game.move_owed()) else {
            return;
        };
        let Some(mv) = self.pending_move.take() else {
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
                format!(
                    "e-board move {} by {side} could not be attached to the press that completed it: {}; the arbiter can set the position (set_position)",
                    mv.uci, r
                ),
            );
        } else {
            self.carried_ply = Some(mv.ply);
        }
    }

    /// A press the rules refused: tell the arbiters, and put the official times back on
    /// the clock (it switched by itself at the lever).
    async fn stray_press(&mut self, presser: Color, r: &Refusal) {
        // The lever moved and the turn did not: it is now the other way round.
        self.lever_reversed = !self.lever_reversed;
        let now = self.now();
        self.raise_with(
            AlertKind::StrayPress,
            Severity::Info,
            format!(
                "lever press by {presser} on board {} not accepted: {}",
                self.id, r
            ),
            now,
            Some(r.code()),
        );
        let text = match self.slot.as_ref().map(|s| s.game.phase()) {
            Some(Phase::Paused(crate::rules::game::PausedBy::Adjourned)) => None,
            Some(Phase::Paused(_)) => Some("PAUSE"),
            _ => None,
        };
        self.program_clock(text).await;
    }

    fn running_game(&self) -> bool {
        self.slot
            .as_ref()
            .is_some_and(|s| *s.game.phase() == Phase::Running)
    }

    /// Whether the lever is the wrong way round for the player to move; remembered, so a
    /// press counts for the right player wherever the lever was left.
    fn align_lever(&mut self) -> bool {
        let mover = self.slot.as_ref().map(|s| s.game.clock().turn);
        self.lever_reversed = match (self.lever, mover) {
            (Some(high), Some(mover)) => Self::side(high) != self.placement.side_of(mover),
            _ => false,
        };
        self.lever_reversed
    }

    /// After an outage (the daemon restarted, or the link was away): the clock kept
    /// playing at the lever, so its reading is the evidence of what happened meanwhile
    /// (DESIGN.md §3). One press by the player to move is placed at the instant the
    /// clock's frozen time for that player implies (to the clock's resolution), so
    /// nobody is charged for the outage; a reading no single press explains (several
    /// presses) is a discrepancy the arbiter settles, and the clock keeps its times until
    /// then.
    async fn reconcile_after_outage(&mut self, reading: ClockTime) {
        self.reconcile = false;
        let Some(slot) = &self.slot else { return };
        let game = &slot.game;
        let now = self.now();
        let placement = self.placement;
        let shown = move |c: Color| {
            let t = match placement.side_of(c) {
                Side::Left => reading.left,
                Side::Right => reading.right,
            };
            Millis(i64::from(t.total_seconds()) * 1000)
        };
        let (Some(runner), Some(zero_at)) = (game.clock().running(), game.clock().zero_at()) else {
            // Nothing ran: the clock only needs the official times again.
            self.align_lever();
            return self.program_clock(None).await;
        };
        let other = runner.other();
        let hardware = if reading.status.running {
            reading
                .status
                .turn()
                .map(|s| self.placement.color_at(Self::side(s)))
        } else {
            None
        };
        let tolerance = game.setup().discrepancy_margin + CLOCK_RESOLUTION;
        let other_official = game.clock().remaining_at(other, now);
        let explained = if hardware == Some(other) {
            // The player to move pressed (once, as far as a reading can tell): when their
            // official time came down to what their clock froze at.
            let at = (zero_at - shown(runner)).max(game.last_event_at()).min(now);
            let expected = other_official - (now - at);
            if (shown(other) - expected).0.abs() <= tolerance.0 {
                self.attach_owed().await;
                let mv = self.pending_move.take().map(|m| m.uci);
                let r = self
                    .decide_at(
                        Input::Press {
                            side: Some(runner),
                            mv,
                        },
                        at,
                    )
                    .await;
                match r {
                    Ok(()) => {
                        tracing::info!(board = %self.id, side = %runner, at = %at.utc(), "press made while the board was away placed from the clock's reading");
                        true
                    }
                    Err(e) => {
                        tracing::warn!(board = %self.id, reason = %e, "press made while the board was away not accepted");
                        false
                    }
                }
            } else {
                false
            }
        } else {
            // Same side running (or stopped): no press, unless the other side's time
            // moved too (then there were several).
            hardware.is_some() && (shown(other) - other_official).0.abs() <= tolerance.0
        };
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
    async fn on_reading(&mut self, reading: ClockTime) {
        self.lever = Some(reading.status.high_side());
        if self.identity_pending {
            return;
        }
        if self.reconcile {
            return self.reconcile_after_outage(reading).await;
        }
        if !self.display_synced || self.hold_clock {
            return;
        }
        let Some(slot) = &self.slot else { return };
        if *slot.game.phase() != Phase::Running {
            return;
        }
        let ms = |side: Side| {
            let t = match side {
                Side::Left => reading.left,
                Side::Right => reading.right,
            };
            Millis(i64::from(t.total_seconds()) * 1000)
        };
        let white = ms(self.placement.side_of(Color::White));
        let black = ms(self.placement.side_of(Color::Black));
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
                        self.apply(events).await;
                    }
                } else {
                    self.apply(events).await;
                }
            }
            Err(_) => {}
        }
    }

    async fn on_button(&mut self, button: ClockButton) {
        if button != ClockButton::RunPause {
            return;
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

    async fn on_board_event(&mut self, e: BoardEvent) {
        if matches!(
            e,
            BoardEvent::Move { .. } | BoardEvent::Corrected { .. } | BoardEvent::TakeBack { .. }
        ) {
            self.clear(AlertKind::ResultShown);
        }
        match e {
            BoardEvent::Move { uci, ply, .. } | BoardEvent::Corrected { uci, ply, .. } => {
                let Some(slot) = &self.slot else { return };
                if slot.game.move_owed().is_some() {
                    // A later move means the owed one is final: attach it first.
                    if self.pending_move.as_ref().is_some_and(|m| m.ply < ply) {
                        self.attach_owed().await;
                    }
                    if self
                        .slot
                        .as_ref()
                        .and_then(|s| s.game.move_owed())
                        .is_some()
                    {
                        self.pending_move = Some(BoardMove { uci, ply });
                        let still = self.last_field_at.unwrap_or_else(tokio::time::Instant::now);
                        self.attach_at = Some(still + MOVE_SETTLE);
                        return;
                    }
                }
                if self.carried_ply == Some(ply) {
                    // The press carried an intermediate reading of this move (it overtook
                    // the rest of a slide): the record and the board now disagree.
                    self.raise(
                        AlertKind::MoveRejected,
                        Severity::Warning,
                        format!(
                            "board {}: move {ply} was recorded at its press, but the board now shows {uci} instead; check the position (set_position)",
                            self.id
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
                        self.pending_move = None;
                        self.apply(events).await;
                        return;
                    }
                    // I.1.1: after the order, the sealer's move on the board is the sealed
                    // move: sealed at once (never played, never logged); the press or the
                    // pause button then commits it.
                    Err(Rejection::MoveIsTheSealedMove { side, mv }) => {
                        self.pending_move = None;
                        if let Err(r) = self.seal_secret(Some(side), mv, true, false).await {
                            self.raise(
                                AlertKind::MoveRejected,
                                Severity::Warning,
                                format!(
                                    "the move made on board {} after the order to seal could not be sealed: {}",
                                    self.id, r
                                ),
                            );
                        }
                        return;
                    }
                    _ => {}
                }
                self.pending_move = Some(BoardMove { uci, ply });
            }
            BoardEvent::TakeBack { ply, .. } => {
                self.pending_move = None;
                self.attach_at = None;
                if self.carried_ply.is_some_and(|c| c > ply) {
                    self.carried_ply = None;
                }
            }
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
                    format!("the board shows {observed_fen}, which no legal move from {expected_fen} explains"),
                );
            }
            BoardEvent::Restored { .. } => {
                self.clear(AlertKind::Irregular);
                self.clear(AlertKind::ResultShown);
            }
            BoardEvent::ResultShown { score } => self.raise(
                AlertKind::ResultShown,
                Severity::Info,
                format!(
                    "board {}: the players show {score} with the kings on the centre squares; record it with set_result",
                    self.id
                ),
            ),
            BoardEvent::Started { .. } => {}
        }
    }
}

/// The clock_discrepancy alert's text, from the journaled event alone (so the alert
/// rebuilt after a restart says the same).
fn discrepancy_message(d: &crate::rules::game::Discrepancy) -> String {
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
