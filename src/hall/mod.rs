//! The hall: one actor per board (`board/`) and a coordinator for what spans boards —
//! command intake, rounds (start, end, summary), hall-wide pause/resume, moving a game to
//! another board (6.10).
//!
//! This file starts the hall and runs the coordinator's loop, handing each message to the
//! file whose job it is: `commands.rs` (commands through the intake, applied to a board or
//! hall-wide), `round.rs` (starting a round, its summary), `moves.rs` (games that change
//! boards), `session.rs` (the session topic), `nodes.rs` (the hall's other servers and
//! board ids two of them claim). Of their siblings those files import only
//! `board` and `trf_round`, never each other, so the hall's arrows point one way.

mod announce;
pub mod board;
mod commands;
mod forward;
mod moves;
mod nodes;
mod peer_io;
mod peers;
mod pulse;
mod round;
mod server_clock;
mod session;
mod skew;
mod startup;
pub mod trf_round;

pub use startup::start;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::alert::Said;
use crate::intake::auth::Security;
use crate::intake::{Incoming, Intake, Raw};
use crate::link::{LinkConfig, spawn as spawn_link};
use crate::mqtt::client::Publisher;
use crate::mqtt::connect::{MqttError, MqttSettings};
use crate::mqtt::payload::{
    BoardInfo, BoardResult, DefaultsInfo, InfoPayload, NodeInfoPayload, NodeState,
    NodeStatusPayload, RoundInfo, Topics,
};
use crate::rules::Millis;
use crate::rules::game::FlagMode;
use crate::rules::placement::{Placement, Side};
use serde_json::json;

use crate::intake::answers::ReplyTo;
use crate::timebase::Timebase;
use board::{BoardParts, FromBoard, GameSlot, StageNote, ToBoard};

/// One board of the hall.
#[derive(Debug, Clone)]
pub struct BoardSettings {
    pub id: crate::id::Id,
    pub port: PathBuf,
    /// Which side of the clock White sits on (6.4).
    pub white: Side,
    /// The tournament board number played here (rounds started from a TRF).
    pub number: u32,
    /// Whether the daemon drives this board's clock or only reads it.
    pub mode: crate::config::BoardMode,
}

/// The event's defaults for games (overridable per round): the configuration's
/// `[defaults]`, used as they are.
pub use crate::config::EventDefaults as GameDefaults;

/// What the daemon runs.
#[derive(Debug, Clone)]
pub struct HallSettings {
    pub hall: crate::id::Id,
    /// This server's name among the hall's (`[hall] node`): its `node/<node>/…` topics.
    pub node: crate::id::Id,
    pub boards: Vec<BoardSettings>,
    pub defaults: GameDefaults,
    /// Timings for every link; the path is replaced per board.
    pub link: LinkConfig,
    pub mqtt: MqttSettings,
    /// The journal lives in `<state_dir>/journal`.
    pub state_dir: PathBuf,
    /// At most one `fdatasync` per window (group commit).
    pub sync_window: std::time::Duration,
    /// Bytes preallocated per journal segment.
    pub segment_size: u64,
    /// How often every board is asked how it is (the watchdog's proof of progress).
    pub heartbeat: std::time::Duration,
    /// Who may command the hall (`[security]`).
    pub security: Security,
    /// The broadcast feed's delay and push (`[broadcast]`).
    pub broadcast: crate::broadcast::BroadcastSettings,
    /// What the clocks say in words (PAUSE, FLAG…), in the hall's language
    /// (`[web] language`).
    pub clock_texts: board::clock_texts::ClockTexts,
}

/// Errors that stop the daemon from starting.
#[derive(Debug, thiserror::Error)]
pub enum HallError {
    #[error(transparent)]
    Mqtt(#[from] MqttError),
    #[error("journal: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("board id '{0}' appears twice")]
    DuplicateBoard(String),
    #[error(transparent)]
    BadId(#[from] crate::id::BadId),
}

struct BoardEntry {
    inbox: mpsc::Sender<ToBoard>,
    pulse: Arc<pulse::Pulse>,
    actor: tokio::task::JoinHandle<()>,
    link: tokio::task::JoinHandle<()>,
}

struct Round {
    number: u32,
    start: Millis,
    time_control: String,
    boards: Vec<String>,
    results: BTreeMap<String, BoardResult>,
    /// Board → (White's, Black's) starting rank, for a round started from a TRF.
    ranks: BTreeMap<String, (u32, u32)>,
    /// The other nodes' boards whose state says they play this round: the round is
    /// finished when these have a result too.
    peer_boards: std::collections::BTreeSet<String>,
}

struct Hall {
    settings: HallSettings,
    topics: Topics,
    publisher: Publisher,
    timebase: Timebase,
    boards: BTreeMap<String, BoardEntry>,
    /// The heartbeat's memory of which boards turned (see `pulse`).
    watch: pulse::Watch,
    round: Option<Round>,
    next_game_id: u64,
    /// Unbounded on purpose: a board actor must never wait for the coordinator, which may
    /// itself be waiting for that actor's answer (500 boards coming online at once).
    from_boards: mpsc::UnboundedSender<FromBoard>,
    /// The port (board id) each DGT board, by serial number, was last seen on.
    seen_on: HashMap<String, String>,
    /// Bounds the 6.9 full searches that run at once (they can take seconds).
    searches: Arc<Semaphore>,
    journal: crate::store::JournalHandle,
    custody: Arc<crate::custody::Custody>,
    /// The playing session: its nominal end, the resumption, and every board's stage.
    session: PlayingSession,
    /// The command pipeline: who may command, every transaction's first reply.
    intake: Intake,
    /// The broadcast feed: each round's delay is stored here at its start.
    broadcast: crate::broadcast::FeedWriter,
    /// The hall's other servers and the board ids claimed twice.
    nodes: nodes::Nodes,
    /// How far the other nodes' clocks are from ours.
    skew: skew::Skew,
    /// The other nodes' infos: their boards and round, for the dashboard's `info`.
    peer_infos: peers::PeerInfos,
    /// When this run started: the `boot` of this node's status.
    boot: Millis,
    /// Watches the wall clock for steps against game time (checked at every beat).
    steps: crate::timebase::StepWatch,
    /// Dashboard hall commands sent to every node, waiting for their answers.
    forwarded: forward::Forwarded,
    /// The message on every hall screen, while it stands (`announce.rs`).
    announcement: Option<announce::Announcement>,
}

/// At most this many more board notes are handled in one turn of the hall's loop.
const NOTE_BATCH: usize = 256;

/// What the hall knows of the session, for the retained `session` topic: what each
/// board's game says (its core keeps the session end and the resumption, so this is
/// rebuilt after a restart).
#[derive(Default)]
struct PlayingSession {
    boards: BTreeMap<String, StageNote>,
    /// The "all sealed" event was published for the current adjournment.
    all_sealed_told: bool,
    /// The whole hall has reported since the start.
    pictured: bool,
    /// A batch of board notes is being handled: a changed stage marks the picture
    /// `stale` and it is published once, after the batch. Each `session` payload lists
    /// every board, so one per stage change made a 5000-board round start publish 5000
    /// payloads of ~100 KB (36 MB queued at the peak, docs/BENCHMARKS.md).
    batch: bool,
    stale: bool,
    /// When the picture was last published, and when it is due again: at most one every
    /// [`SESSION_GAP`]. Why: at 5000 boards each payload is ~100 KB, and games ending a
    /// few a second (a round's flag falls; the load bench's 17 a second) published one each.
    published_at: Option<tokio::time::Instant>,
    due: Option<tokio::time::Instant>,
}

/// The least time between two publications of the session picture.
const SESSION_GAP: std::time::Duration = std::time::Duration::from_millis(250);

/// A running hall: how to reach it, watch it and stop it.
pub struct RunningHall {
    pub publisher: Publisher,
    /// The command intake the MQTT task feeds; the web dashboard's door to the same one.
    pub intake: mpsc::Sender<Incoming>,
    control: mpsc::Sender<Control>,
    /// The latest proof of progress: every board actor and the coordinator answered.
    pub health: tokio::sync::watch::Receiver<Option<Health>>,
    /// The broadcast feed, for the web server's `broadcast::router` and the push.
    pub broadcast: crate::broadcast::BroadcastSource,
    /// This node (`[hall] node`): what its hall-level alerts are scoped by.
    pub node: String,
    /// The hall's clocks: the dashboard shows and schedules on the same civil time.
    pub timebase: Timebase,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

/// Changes made live (SIGHUP).
#[derive(Debug)]
pub enum Control {
    Reload {
        boards: Vec<BoardSettings>,
        defaults: GameDefaults,
        reply: oneshot::Sender<Vec<String>>,
    },
}

/// One heartbeat of the whole hall, for systemd's watchdog and status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub at: Millis,
    pub status: String,
}

impl RunningHall {
    /// Apply a new board list and game defaults; returns what was done, line by line.
    pub async fn reload(&self, boards: Vec<BoardSettings>, defaults: GameDefaults) -> Vec<String> {
        let (reply, rx) = oneshot::channel();
        if self
            .control
            .send(Control::Reload {
                boards,
                defaults,
                reply,
            })
            .await
            .is_err()
        {
            return vec!["the hall has stopped".into()];
        }
        rx.await.unwrap_or_default()
    }

    /// Stop cleanly: `offline` published, links closed. The clocks keep running by
    /// themselves: the hardware keeps time while the daemon is away.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = self.task.await;
    }
}

/// The link settings of one board: the hall's timings, the board's port.
fn link_config(defaults: &LinkConfig, b: &BoardSettings) -> LinkConfig {
    let mut c = defaults.clone();
    c.path = b.port.clone();
    c
}

impl Hall {
    /// An actor for one board, over its link.
    fn spawn_board(
        &mut self,
        b: &BoardSettings,
        recovered: Option<GameSlot>,
        seq: u64,
        link: crate::link::LinkHandle,
        doubt: board::Doubt,
    ) {
        let (inbox_tx, inbox_rx) = mpsc::channel(64);
        let pulse = Arc::new(pulse::Pulse::default());
        let parts = BoardParts {
            id: b.id.to_string(),
            port: b.port.display().to_string(),
            placement: Placement { white: b.white },
            topics: self.topics.clone(),
            publisher: self.publisher.clone(),
            timebase: self.timebase,
            link_commands: link.commands,
            link_events: link.events,
            inbox: inbox_rx,
            hall: self.from_boards.clone(),
            searches: self.searches.clone(),
            journal: self.journal.clone(),
            custody: self.custody.clone(),
            recovered,
            seq,
            feed: self.broadcast.clone(),
            mode: b.mode,
            pulse: pulse.clone(),
            doubt,
            clock_texts: self.settings.clock_texts,
        };
        let actor = tokio::spawn(board::run(parts));
        self.boards.insert(
            b.id.to_string(),
            BoardEntry {
                inbox: inbox_tx,
                pulse,
                actor,
                link: link.task,
            },
        );
    }

    /// SIGHUP: boards added or removed, new defaults for the next rounds.
    async fn reload(&mut self, boards: Vec<BoardSettings>, defaults: GameDefaults) -> Vec<String> {
        let mut done = Vec::new();
        let wanted: BTreeMap<crate::id::Id, BoardSettings> =
            boards.iter().map(|b| (b.id.clone(), b.clone())).collect();
        let current: Vec<String> = self.boards.keys().cloned().collect();
        for id in current {
            let changed = match (
                wanted.get(id.as_str()),
                self.settings.boards.iter().find(|b| *b.id == *id),
            ) {
                (Some(w), Some(old)) => w.port != old.port || w.white != old.white,
                (Some(_), None) => false,
                (None, _) => true,
            };
            if !changed {
                continue;
            }
            let busy = match self.boards.get(&id) {
                Some(e) => Self::ask(&e.inbox, |reply| ToBoard::Busy { reply })
                    .await
                    .flatten(),
                None => None,
            };
            if let Some(round) = busy {
                done.push(format!(
                    "board {id}: kept as it was: its game (round {round}) is unfinished; apply the change after the game"
                ));
                continue;
            }
            if let Some(e) = self.boards.remove(&id) {
                e.actor.abort();
                e.link.abort();
                self.publisher
                    .retained(self.topics.availability(&id), Vec::new());
                self.publisher.retained(self.topics.state(&id), Vec::new());
                self.settings.boards.retain(|b| *b.id != *id);
                done.push(format!("board {id}: removed"));
            }
        }
        for (id, b) in &wanted {
            if !self.boards.contains_key(id.as_str()) {
                // The journal's last word on this board, if it ever had one.
                let seq = self.journal_seq(id).await;
                let link = spawn_link(link_config(&self.settings.link, b));
                self.spawn_board(b, None, seq, link, board::Doubt::default());
                self.settings.boards.push(b.clone());
                done.push(format!("board {id}: added on {}", b.port.display()));
            }
        }
        if defaults.time_control != self.settings.defaults.time_control
            || defaults.default_time != self.settings.defaults.default_time
            || defaults.flag_mode != self.settings.defaults.flag_mode
            || defaults.both_absent != self.settings.defaults.both_absent
            || defaults.pauses_extend_default_time
                != self.settings.defaults.pauses_extend_default_time
            || defaults.clock != self.settings.defaults.clock
            || defaults.discrepancy_margin != self.settings.defaults.discrepancy_margin
            || defaults.piece_letters != self.settings.defaults.piece_letters
        {
            self.settings.defaults = defaults;
            done.push("event defaults: applied to the next rounds".into());
        }
        // A new mode needs no restart of the board either, but it waits for the game's
        // end as `set_mode` does: the official time cannot change hands mid-game.
        for (id, w) in &wanted {
            let Some(old) = self.settings.boards.iter().find(|b| b.id == *id) else {
                continue;
            };
            if old.mode == w.mode {
                continue;
            }
            let Some(e) = self.boards.get(id.as_str()) else {
                continue;
            };
            let act = crate::intake::input::BoardAct::SetMode {
                mode: w.mode,
                arbiter: "the configuration".into(),
            };
            match Self::ask(&e.inbox, |reply| ToBoard::Act { act, reply }).await {
                Some(Ok(())) => {
                    done.push(format!("board {id}: mode {}", w.mode.name()));
                    if let Some(b) = self.settings.boards.iter_mut().find(|b| b.id == *id) {
                        b.mode = w.mode;
                    }
                }
                Some(Err(r)) => done.push(format!(
                    "board {id}: mode kept as it was ({r}); reload again after the game"
                )),
                None => {}
            }
        }
        // A new tournament number needs no restart of the board.
        for b in &mut self.settings.boards {
            if let Some(w) = wanted.get(&b.id) {
                b.number = w.number;
            }
        }
        self.settings.boards.sort_by(|a, b| a.id.cmp(&b.id));
        self.publish_node();
        done
    }

    async fn journal_seq(&self, board: &str) -> u64 {
        let dir = self.settings.state_dir.join("journal");
        let board = board.to_string();
        tokio::task::spawn_blocking(move || {
            // Above every seq the journal has for the board, damaged spans included.
            crate::store::read_dir(&dir)
                .map(|scan| scan.last_seq(&board))
                .unwrap_or(0)
        })
        .await
        .unwrap_or(0)
    }

    /// Proof that the coordinator and every actor make progress (systemd's watchdog), and
    /// the status line. The actors are not asked: each leaves its pulse at every turn, and
    /// only a board that has not turned for a while is pinged (see `pulse`). `None` while
    /// a board is stuck.
    fn heartbeat(&mut self) -> Option<Health> {
        let verdict = self.watch.beat(
            self.boards
                .iter()
                .map(|(id, e)| (id.as_str(), e.pulse.turns())),
        );
        let mut well = verdict.stuck.is_empty();
        for id in &verdict.ping {
            if let Some(entry) = self.boards.get(id) {
                match entry.inbox.try_send(ToBoard::Ping) {
                    // A full inbox: a live actor turns as it drains it.
                    Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
                    Err(mpsc::error::TrySendError::Closed(_)) => {
                        tracing::error!(board = %id, "the board's actor has ended: the watchdog is no longer fed");
                        well = false;
                    }
                }
            }
        }
        for (id, quiet) in &verdict.stuck {
            // Said once, as it becomes stuck; the watchdog then stops being fed.
            if *quiet == pulse::QUIET_BEATS + pulse::GRACE_BEATS {
                tracing::error!(board = %id, beats = quiet, "the board's actor has not turned since it was pinged: the watchdog is no longer fed");
            }
        }
        if !well {
            return None;
        }
        let (mut online, mut running, mut alerts) = (0, 0, 0);
        for entry in self.boards.values() {
            let s = entry.pulse.summary();
            online += usize::from(s.online);
            running += usize::from(s.running);
            alerts += s.alerts;
        }
        let round = match &self.round {
            Some(r) => format!("round {}: ", r.number),
            None => String::new(),
        };
        Some(Health {
            at: self.timebase.now(),
            status: format!(
                "{round}{} boards, {online} online, {running} running, {alerts} alerts",
                self.boards.len()
            ),
        })
    }

    async fn run(
        &mut self,
        mut incoming: mpsc::Receiver<Incoming>,
        mut from_boards: mpsc::UnboundedReceiver<FromBoard>,
        mut control: mpsc::Receiver<Control>,
        health: tokio::sync::watch::Sender<Option<Health>>,
        mut stop: oneshot::Receiver<()>,
    ) {
        self.publish_node();
        self.restore_announcement();
        let mut beat = tokio::time::interval(self.settings.heartbeat);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // A fault-injection hook for the watchdog test: the coordinator's thread blocks
        // after this many ms, as a wedged main loop would.
        let wedge_at = std::env::var("HALLCLOCK_TEST_WEDGE_AFTER_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(|ms| tokio::time::Instant::now() + std::time::Duration::from_millis(ms));
        loop {
            tokio::select! {
                _ = beat.tick() => {
                    if wedge_at.is_some_and(|at| tokio::time::Instant::now() >= at) {
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    }
                    self.watch_wall_clock().await;
                    self.publish_clock();
                    self.expire_announcement();
                    if let Some(h) = self.heartbeat() {
                        let _ = health.send(Some(h));
                    }
                    self.settle_forwarded(true);
                },
                msg = control.recv() => if let Some(Control::Reload { boards, defaults, reply }) = msg {
                    let done = self.reload(boards, defaults).await;
                    let _ = reply.send(done);
                },
                msg = incoming.recv() => match msg {
                    Some(Incoming::Hall(payload)) => self.on_command(None, Raw::Mqtt(payload), None).await,
                    Some(Incoming::HallResponse(payload)) => self.on_hall_response(&payload),
                    Some(Incoming::BoardResponse { board, payload }) => self.on_board_response(&board, &payload),
                    Some(Incoming::Board { board, payload }) => self.on_command(Some(board), Raw::Mqtt(payload), None).await,
                    Some(Incoming::Web { board, payload, identity, reply }) => {
                        self.on_command(board, Raw::Dashboard { payload, identity }, Some(reply)).await;
                    }
                    Some(Incoming::Ask(payload)) => self.on_ask(&payload).await,
                    Some(Incoming::TooLarge { response, bad }) => self.intake.refuse_bad(ReplyTo::Topic(response), bad),
                    Some(Incoming::StaleAlert { payload }) => self.on_stale_alert(&payload).await,
                    Some(Incoming::NodeStatus { node, payload }) => self.on_node_status(&node, &payload),
                    Some(Incoming::NodeClock { node, payload, received }) => self.on_node_clock(&node, &payload, received),
                    Some(Incoming::PeerState { board, payload }) => self.on_peer_state(board, &payload),
                    Some(Incoming::NodeInfo { node, payload }) => self.on_node_info(&node, &payload),
                    Some(Incoming::SetHallTime { civil, identity, reply }) => {
                        let r = self.set_hall_time(civil, &identity.name).await;
                        let _ = reply.send(r);
                    }
                    None => break,
                },
                note = from_boards.recv() => if let Some(note) = note {
                    // What is already waiting is handled with it (a bounded batch, so
                    // the other inputs are not starved), and the session told once.
                    self.session.batch = true;
                    self.on_board_note(note).await;
                    for _ in 0..NOTE_BATCH {
                        let Ok(note) = from_boards.try_recv() else { break };
                        self.on_board_note(note).await;
                    }
                    self.session.batch = false;
                    if std::mem::take(&mut self.session.stale) {
                        self.session_changed();
                    }
                },
                () = async {
                    if let Some(at) = self.session.due { tokio::time::sleep_until(at).await }
                }, if self.session.due.is_some() => self.publish_session_now(),
                _ = &mut stop => break,
            }
        }
        self.publisher
            .shutdown(std::time::Duration::from_secs(3))
            .await;
    }

    /// A wall-clock step since the last beat: no game clock moves (game time is
    /// monotonic); civil time follows the wall clock at once. The step is journaled as a
    /// new anchor (so a restart in this boot still goes on exactly) and said in words.
    async fn watch_wall_clock(&mut self) {
        let Some(step) = self
            .steps
            .check(self.timebase.offset(), self.timebase.civil())
        else {
            return;
        };
        // The server's clock was set: a hall's time set by the chief arbiter while it was
        // wrong gives way to it.
        let dropped = self.timebase.correction();
        let mut message = step.message();
        let mut said = server_clock::step_said(&step);
        if dropped != Millis::ZERO {
            self.timebase.set_correction(Millis::ZERO);
            self.steps.settle(self.timebase.offset());
            message.push_str(&format!(
                "; the hall's time set from the dashboard ({} {}) is dropped: the server's clock is trusted again",
                crate::timebase::words(dropped),
                if dropped.0 > 0 { "ahead" } else { "behind" }
            ));
            said = Said::new(
                "server_clock.correction_dropped",
                json!({ "by_ms": step.by.0.abs(), "at": step.civil.0, "dropped_ms": dropped.0.abs() }),
                String::new(),
            );
        }
        said.message = message;
        if let Err(e) = self.journal_anchor().await {
            tracing::error!("the journal cannot store the wall clock's step ({e})");
        }
        self.say_server_clock(said);
    }

    /// A signed command whose `ts` was far from this server's clock: one of the two clocks
    /// is wrong, and a hall of one server has no other node to compare with.
    fn say_far_clock(&self) {
        let Some((signer, off)) = self.intake.take_far_clock() else {
            return;
        };
        let message = format!(
            "a command signed by '{signer}' was {} {} this server's clock ({}): either the server's clock or that device's is wrong; check the server's (timedatectl), or set the hall's time from the dashboard",
            crate::timebase::words(off),
            if off.0 > 0 { "ahead of" } else { "behind" },
            self.timebase.civil().utc()
        );
        let code = if off.0 > 0 {
            "server_clock.signer_ahead"
        } else {
            "server_clock.signer_behind"
        };
        let params =
            json!({ "signer": signer, "by_ms": off.0.abs(), "now": self.timebase.civil().0 });
        self.say_server_clock(Said::new(code, params, message));
    }

    /// A time anchor of now into the journal (ARCHITECTURE.md, "Where game time comes
    /// from").
    async fn journal_anchor(&self) -> Result<(), crate::store::StoreError> {
        let here = crate::timebase::here(self.timebase.wall());
        let anchor = crate::timebase::Anchor {
            boot: here.boot,
            boottime: here.boottime,
            at: self.timebase.now(),
            civil: self.timebase.civil(),
            correction: self.timebase.correction(),
        };
        self.journal
            .append(vec![crate::store::Record::Time(anchor)])
            .await
    }

    /// The `server_clock` alert (this node's), in words.
    fn say_server_clock(&self, said: Said) {
        let alert = crate::mqtt::payload::AlertPayload::said(
            crate::alert::node_alert_id("server-clock", &self.settings.node),
            None,
            crate::mqtt::payload::AlertKind::ServerClock,
            crate::mqtt::payload::Severity::Warning,
            said,
            self.timebase.now(),
        );
        tracing::warn!("{}", crate::intake::command::log_safe(&alert.message));
        self.publisher
            .json_retained(self.topics.alert(&alert.id), &alert);
    }

    /// The chief arbiter sets the hall's time from the dashboard (a server without a
    /// real-time clock, no NTP): civil time moves (signatures' `ts`, scheduled starts),
    /// no game clock does. Bounded (`timebase::correction_for`), journaled before it
    /// applies, said in words. The server's own clock is left alone: setting it needs
    /// privileges a service should not hold, and the operator's tools (chronyc settime)
    /// do it properly.
    async fn set_hall_time(&mut self, wanted: Millis, arbiter: &str) -> Result<Millis, String> {
        let wall = self.timebase.wall();
        let correction =
            crate::timebase::correction_for(wanted, wall).map_err(|e| e.to_string())?;
        let before = self.timebase.correction();
        self.timebase.set_correction(correction);
        if let Err(e) = self.journal_anchor().await {
            self.timebase.set_correction(before);
            return Err(format!(
                "the hall's time was not set: the journal cannot store it ({e})"
            ));
        }
        self.steps
            .settle(self.steps.settled() + correction - before);
        let message = format!(
            "the chief arbiter {arbiter} set the hall's time to {} ({} {} the server's own clock, which is left as it is: set it with chronyc settime or timedatectl); no game clock moved; signed commands and scheduled starts use the hall's time now",
            self.timebase.civil().utc(),
            crate::timebase::words(correction),
            if correction.0 > 0 {
                "ahead of"
            } else {
                "behind"
            }
        );
        let code = if correction.0 > 0 {
            "server_clock.hall_time_ahead"
        } else {
            "server_clock.hall_time_behind"
        };
        let params = json!({ "arbiter": arbiter, "now": self.timebase.civil().0, "by_ms": correction.0.abs() });
        self.say_server_clock(Said::new(code, params, message));
        Ok(self.timebase.civil())
    }

    /// This node's boards, as `info` lists them.
    fn board_infos(&self) -> Vec<BoardInfo> {
        self.settings
            .boards
            .iter()
            .map(|b| BoardInfo {
                id: b.id.to_string(),
                port: b.port.display().to_string(),
                white_side: b.white,
                number: b.number,
            })
            .collect()
    }

    fn own_boards(&self) -> std::collections::BTreeSet<String> {
        self.settings
            .boards
            .iter()
            .map(|b| b.id.to_string())
            .collect()
    }

    /// What this node serves: `node/<node>/info` on MQTT (one writer per retained topic:
    /// with several nodes a shared `info` would be each node's in turn), and `info` in the
    /// local feed, which the dashboard reads as with one node.
    fn publish_info(&self) {
        let info = InfoPayload {
            version: env!("CARGO_PKG_VERSION").to_string(),
            hall: self.settings.hall.to_string(),
            boards: self.board_infos(),
            defaults: DefaultsInfo {
                time_control: self.settings.defaults.time_control.to_string(),
                default_time_ms: self.settings.defaults.default_time,
                flag_mode: match self.settings.defaults.flag_mode {
                    FlagMode::Auto => "auto".into(),
                    FlagMode::Claim => "claim".into(),
                },
            },
            round: self.round.as_ref().map(|r| {
                let tags = self.broadcast.round_tags(r.number);
                RoundInfo {
                    round: r.number,
                    start: r.start,
                    time_control: r.time_control.clone(),
                    boards: r.boards.clone(),
                    event: tags.event,
                    site: tags.site,
                }
            }),
        };
        let node = NodeInfoPayload {
            version: info.version.clone(),
            hall: info.hall.clone(),
            node: self.settings.node.to_string(),
            boot: self.boot,
            boards: info.boards.clone(),
            defaults: Some(info.defaults.clone()),
            round: info.round.clone(),
        };
        self.publisher
            .json_retained(self.topics.node_info(&self.settings.node), &node);
        // The dashboard's `info` is the hall's: the other nodes' boards (with their
        // numbers) and their boards of the same round join this node's.
        let mut info = info;
        let own = self.own_boards();
        let theirs = self.peer_infos.boards(&own);
        if !theirs.is_empty() {
            info.boards.extend(theirs);
            info.boards.sort_by(|a, b| a.id.cmp(&b.id));
        }
        if let Some(r) = &mut info.round {
            for b in self.peer_infos.round_boards(r.round) {
                if !r.boards.contains(&b) {
                    r.boards.push(b);
                }
            }
        }
        if let Ok(bytes) = serde_json::to_vec(&info) {
            self.publisher
                .feed()
                .push(&self.topics.info(), &bytes, true);
        }
    }

    async fn ask<T>(
        inbox: &mpsc::Sender<ToBoard>,
        make: impl FnOnce(oneshot::Sender<T>) -> ToBoard,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        inbox.send(make(tx)).await.ok()?;
        rx.await.ok()
    }

    /// A retained alert the broker kept from before this start: its board decides whether
    /// it still stands. Alerts of boards that are not this daemon's (several daemons in a
    /// hall, DESIGN.md §7) and hall-wide ones are left alone.
    async fn on_stale_alert(&self, payload: &[u8]) {
        let Ok(alert) = serde_json::from_slice::<crate::mqtt::payload::AlertPayload>(payload)
        else {
            return;
        };
        // This node's claim alert from an earlier run that no claim raised again (the
        // other nodes' statuses came first: see the subscriptions in `mqtt::client`).
        // This node's clock alert from an earlier run: this run judges the clocks afresh
        // (a window of readings) and raises it again if they still differ.
        // An earlier run's word on the server's clock: history once this start found time
        // whole (had it not, this run raised its own, and this copy is not stale).
        if alert.id == crate::alert::node_alert_id("server-clock", &self.settings.node) {
            tracing::info!(alert = %alert.id, "server clock alert from before the restart; cleared");
            self.publisher.clear_alert(&self.topics, &alert.id);
            return;
        }
        if alert.id == self.skew.alert_id() {
            tracing::info!(alert = %alert.id, "clock alert from before the restart; cleared until the clocks are compared again");
            self.publisher.clear_alert(&self.topics, &alert.id);
            return;
        }
        if self.nodes.is_stale_own(&alert) {
            tracing::info!(alert = %alert.id, "claim alert from before the restart is resolved; cleared");
            self.publisher.clear_alert(&self.topics, &alert.id);
            return;
        }
        let Some(entry) = alert.board.as_ref().and_then(|b| self.boards.get(b)) else {
            return;
        };
        let _ = entry
            .inbox
            .send(ToBoard::StaleAlert {
                alert: Box::new(alert),
            })
            .await;
    }

    async fn on_board_note(&mut self, note: FromBoard) {
        match note {
            FromBoard::Identity { board, serial } => self.on_identity(board, serial).await,
            FromBoard::Stage { board, note } => self.on_stage(board, note),
            FromBoard::Finished {
                board,
                round,
                white,
                black,
                result,
            } => self.on_finished(board, round, white, black, result),
        }
    }
}
