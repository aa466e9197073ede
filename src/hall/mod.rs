//! The hall: one actor per board (`board.rs`) and a coordinator for what spans boards —
//! command intake, rounds (start, end, summary), hall-wide pause/resume, moving a game to
//! another board (6.10).

pub mod board;
pub mod trf_round;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::intake::auth::Security;
use crate::intake::command::{self, BoardAction, Command, HallAction, Pairing, log_safe};
use crate::intake::{Door, Incoming, Intake, Raw, Taken, Target, input};
use crate::link::{LinkConfig, spawn as spawn_link};
use crate::mqtt::client::{self, MqttError, MqttSettings, Publisher};
use crate::mqtt::payload::{
    BoardInfo, BoardResult, DefaultsInfo, HallEvent, InfoPayload, RoundInfo, SessionEvent,
    SessionPayload, Topics,
};
use crate::rules::Millis;
use crate::rules::adjournment::Stage;
use crate::rules::game::{FlagMode, Game, GameResult, Input, Setup, Termination};
use crate::rules::placement::{Placement, Side};

use crate::intake::answers::{self, ReplyTo};
use crate::timebase::Timebase;
use board::{BoardParts, FromBoard, GameSlot, Refusal, StageNote, ToBoard};

/// One board of the hall.
#[derive(Debug, Clone)]
pub struct BoardSettings {
    pub id: String,
    pub port: PathBuf,
    /// Which side of the clock White sits on (6.4).
    pub white: Side,
    /// The tournament board number played here (rounds started from a TRF).
    pub number: u32,
}

/// The event's defaults for games (overridable per round): the configuration's
/// `[defaults]`, used as they are.
pub use crate::config::EventDefaults as GameDefaults;

/// What the daemon runs.
#[derive(Debug, Clone)]
pub struct HallSettings {
    pub hall: String,
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
}

struct Hall {
    settings: HallSettings,
    topics: Topics,
    publisher: Publisher,
    timebase: Timebase,
    boards: BTreeMap<String, BoardEntry>,
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
    session: Session,
    /// The command pipeline: who may command, every transaction's first reply.
    intake: Intake,
    /// The broadcast feed: each round's delay is stored here at its start.
    broadcast: crate::broadcast::FeedWriter,
}

/// What the hall knows of the session, for the retained `session` topic: what each
/// board's game says (its core keeps the session end and the resumption, so this is
/// rebuilt after a restart).
#[derive(Default)]
struct Session {
    boards: BTreeMap<String, StageNote>,
    /// The "all sealed" event was published for the current adjournment.
    all_sealed_told: bool,
    /// The whole hall has reported since the start.
    pictured: bool,
}

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

/// Start the daemon's tasks: the MQTT connection, a link and an actor per board, and the
/// coordinator.
pub fn start(settings: HallSettings) -> Result<RunningHall, HallError> {
    let mut seen = HashMap::new();
    crate::id::Id::parse(&settings.hall)?;
    for b in &settings.boards {
        crate::id::Id::parse(&b.id)?;
        if seen.insert(b.id.clone(), ()).is_some() {
            return Err(HallError::DuplicateBoard(b.id.clone()));
        }
    }
    // Recovery first: the journal is replayed before anything is published.
    let mut journal_settings = crate::store::JournalSettings::new(&settings.state_dir);
    journal_settings.sync_window = settings.sync_window;
    journal_settings.segment_size = settings.segment_size;
    // The hall's one timebase: games, answers and the connection's instants are on it.
    let timebase = Timebase::start();
    let crate::store::startup::Started {
        journal,
        games,
        mut recovered,
    } = crate::store::startup::start(&settings.state_dir, journal_settings, timebase.now())?;
    let damage = recovered.damage.clone();
    // Every round's games, finished ones too, for the broadcast feed.
    let feed = crate::broadcast::FeedWriter::recovered(
        &settings.state_dir,
        settings.broadcast.delay,
        games,
    );
    tracing::info!(
        records = recovered.records,
        games = recovered.games.len(),
        "journal replayed"
    );
    for p in &recovered.problems {
        tracing::warn!("journal: {p}");
    }
    let journal = journal.spawn();
    match &settings.security {
        Security::Open => tracing::warn!(
            "[security] commands = \"open\": anyone who can publish on the broker commands this hall, under any name; use \"signed\" outside a lab (docs/SECURITY.md)"
        ),
        Security::Signed { arbiters, .. } if arbiters.accounts().next().is_none() => {
            tracing::warn!(
                "no arbiter accounts: every command will be refused; add one with `hallclock arbiter add` and restart"
            )
        }
        Security::Signed { arbiters, .. } => tracing::info!(
            accounts = arbiters.accounts().count(),
            "signed commands only"
        ),
    }
    let answers = answers::Answers::recovered(&recovered.answered);
    // The round in progress, as far as the journal shows it.
    let round = recovered
        .games
        .values()
        .filter_map(|g| g.round)
        .max()
        .map(|number| {
            let mut r = Round {
                number,
                start: Millis::ZERO,
                time_control: String::new(),
                boards: Vec::new(),
                results: BTreeMap::new(),
                ranks: BTreeMap::new(),
            };
            for (board, g) in &recovered.games {
                if g.round != Some(number) {
                    continue;
                }
                let setup = g.game.setup();
                r.start = setup.start;
                r.time_control = setup.tc.to_string();
                r.boards.push(board.clone());
                if let Some(result) = g.game.result() {
                    r.results.insert(board.clone(), {
                        let mut line = BoardResult::new(
                            board.clone(),
                            setup.white.clone(),
                            setup.black.clone(),
                            result,
                        );
                        line.score = score_text(result);
                        line.termination = termination_text(result);
                        line
                    });
                }
            }
            r
        });
    let topics = Topics::new(&settings.hall);
    let (incoming_tx, incoming_rx) = mpsc::channel(256);
    let (publisher, mqtt_task) = client::spawn(
        settings.mqtt.clone(),
        topics.clone(),
        incoming_tx.clone(),
        timebase,
    )?;
    let broadcast = feed.source(Arc::new(move || timebase.now()));
    let intake = Intake::new(
        settings.security.clone(),
        answers::Replier {
            answers,
            journal: journal.clone(),
            outbox: Arc::new(publisher.clone()),
        },
    );

    let (from_boards_tx, from_boards_rx) = mpsc::unbounded_channel();
    if let Some(d) = &damage {
        let alert = crate::mqtt::payload::AlertPayload {
            id: "journal".into(),
            board: None,
            kind: crate::mqtt::payload::AlertKind::Storage,
            severity: crate::mqtt::payload::Severity::Critical,
            message: format!(
                "the journal was damaged at {} offset {} ({}): {} byte(s) after the last good record were dropped; every event before it was recovered",
                d.segment.display(),
                d.offset,
                d.reason,
                d.dropped_bytes
            ),
            since: timebase.now(),
            error: None,
        };
        tracing::error!("{}", alert.message);
        publisher.json_retained(topics.alert("journal"), &alert);
    }
    // The envelopes' keeper; its key is made on first start. A damaged key does not stop
    // the hall (the clocks matter more): sealing and opening are refused, and the
    // arbiters are told.
    let custody = match crate::custody::Custody::open(&settings.state_dir) {
        Ok(c) => c,
        Err(e) => {
            let alert = crate::mqtt::payload::AlertPayload {
                id: "custody".into(),
                board: None,
                kind: crate::mqtt::payload::AlertKind::Storage,
                severity: crate::mqtt::payload::Severity::Critical,
                message: format!(
                    "sealed moves cannot be kept or opened ({e}); the games go on, seal and open_envelope are refused until the custody key is restored"
                ),
                since: timebase.now(),
                error: None,
            };
            tracing::error!("{}", alert.message);
            publisher.json_retained(topics.alert("custody"), &alert);
            crate::custody::Custody::unavailable(&settings.state_dir, e.to_string())
        }
    };
    let custody = Arc::new(custody);
    let board_settings = settings.boards.clone();
    let mut hall = Hall {
        settings,
        topics,
        publisher: publisher.clone(),
        timebase,
        boards: BTreeMap::new(),
        round,
        next_game_id: recovered.next_game_id,
        from_boards: from_boards_tx,
        seen_on: HashMap::new(),
        searches: Arc::new(Semaphore::new(2)),
        journal,
        custody,
        session: Session::default(),
        intake,
        broadcast: feed,
    };
    for b in &board_settings {
        let slot = recovered.games.remove(&b.id).map(|g| GameSlot {
            id: g.game_id,
            game: g.game,
            round: g.round,
            fide: g.fide,
            events: g.events,
        });
        let seq = recovered.seqs.get(&b.id).copied().unwrap_or(0);
        hall.spawn_board(b, slot, seq);
    }
    let (stop_tx, stop_rx) = oneshot::channel();
    let (control_tx, control_rx) = mpsc::channel(16);
    let (health_tx, health_rx) = tokio::sync::watch::channel(None);
    let task = tokio::spawn(async move {
        hall.run(incoming_rx, from_boards_rx, control_rx, health_tx, stop_rx)
            .await;
        for entry in hall.boards.values() {
            entry.actor.abort();
            entry.link.abort();
        }
        mqtt_task.abort();
    });
    Ok(RunningHall {
        publisher,
        intake: incoming_tx,
        control: control_tx,
        health: health_rx,
        broadcast,
        stop: Some(stop_tx),
        task,
    })
}

impl Hall {
    /// A link and an actor for one board.
    fn spawn_board(&mut self, b: &BoardSettings, recovered: Option<GameSlot>, seq: u64) {
        let mut link_cfg = self.settings.link.clone();
        link_cfg.path = b.port.clone();
        let link = spawn_link(link_cfg);
        let (inbox_tx, inbox_rx) = mpsc::channel(64);
        let parts = BoardParts {
            id: b.id.clone(),
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
        };
        let actor = tokio::spawn(board::run(parts));
        self.boards.insert(
            b.id.clone(),
            BoardEntry {
                inbox: inbox_tx,
                actor,
                link: link.task,
            },
        );
    }

    /// SIGHUP: boards added or removed, new defaults for the next rounds.
    async fn reload(&mut self, boards: Vec<BoardSettings>, defaults: GameDefaults) -> Vec<String> {
        let mut done = Vec::new();
        let wanted: BTreeMap<String, BoardSettings> =
            boards.iter().map(|b| (b.id.clone(), b.clone())).collect();
        let current: Vec<String> = self.boards.keys().cloned().collect();
        for id in current {
            let changed = match (
                wanted.get(&id),
                self.settings.boards.iter().find(|b| b.id == id),
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
                self.settings.boards.retain(|b| b.id != id);
                done.push(format!("board {id}: removed"));
            }
        }
        for (id, b) in &wanted {
            if !self.boards.contains_key(id) {
                // The journal's last word on this board, if it ever had one.
                let seq = self.journal_seq(id).await;
                self.spawn_board(b, None, seq);
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
        {
            self.settings.defaults = defaults;
            done.push("event defaults: applied to the next rounds".into());
        }
        // A new tournament number needs no restart of the board.
        for b in &mut self.settings.boards {
            if let Some(w) = wanted.get(&b.id) {
                b.number = w.number;
            }
        }
        self.settings.boards.sort_by(|a, b| a.id.cmp(&b.id));
        self.publish_info();
        done
    }

    async fn journal_seq(&self, board: &str) -> u64 {
        let dir = self.settings.state_dir.join("journal");
        let board = board.to_string();
        tokio::task::spawn_blocking(move || {
            crate::store::read_dir(&dir)
                .map(|scan| {
                    scan.records
                        .iter()
                        .filter_map(|(r, _, _)| match r {
                            crate::store::Record::Event { board: b, seq, .. } if *b == board => {
                                Some(*seq)
                            }
                            _ => None,
                        })
                        .max()
                        .unwrap_or(0)
                })
                .unwrap_or(0)
        })
        .await
        .unwrap_or(0)
    }

    /// Ask every board how it is: proof that the coordinator and every actor make
    /// progress (systemd's watchdog), and the status line.
    async fn heartbeat(&self) -> Option<Health> {
        let mut online = 0;
        let mut running = 0;
        let mut alerts = 0;
        for entry in self.boards.values() {
            let (tx, rx) = oneshot::channel();
            entry.inbox.try_send(ToBoard::Summary { reply: tx }).ok()?;
            let s = tokio::time::timeout(std::time::Duration::from_secs(2), rx)
                .await
                .ok()?
                .ok()?;
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
        self.publish_info();
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
                    if let Some(h) = self.heartbeat().await {
                        let _ = health.send(Some(h));
                    }
                },
                msg = control.recv() => if let Some(Control::Reload { boards, defaults, reply }) = msg {
                    let done = self.reload(boards, defaults).await;
                    let _ = reply.send(done);
                },
                msg = incoming.recv() => match msg {
                    Some(Incoming::Hall(payload)) => self.on_command(None, Raw::Mqtt(payload), None).await,
                    Some(Incoming::Board { board, payload }) => self.on_command(Some(board), Raw::Mqtt(payload), None).await,
                    Some(Incoming::Web { board, payload, identity, reply }) => {
                        self.on_command(board, Raw::Session { payload, identity }, Some(reply)).await;
                    }
                    Some(Incoming::Ask(payload)) => self.on_ask(&payload).await,
                    Some(Incoming::TooLarge { response, bad }) => self.intake.refuse_bad(ReplyTo::Topic(response), bad),
                    Some(Incoming::StaleAlert { payload }) => self.on_stale_alert(&payload).await,
                    None => break,
                },
                note = from_boards.recv() => if let Some(note) = note {
                    self.on_board_note(note).await;
                },
                _ = &mut stop => break,
            }
        }
        self.publisher
            .shutdown(std::time::Duration::from_secs(3))
            .await;
    }

    fn publish_info(&self) {
        let info = InfoPayload {
            version: env!("CARGO_PKG_VERSION").to_string(),
            hall: self.settings.hall.clone(),
            boards: self
                .settings
                .boards
                .iter()
                .map(|b| BoardInfo {
                    id: b.id.clone(),
                    port: b.port.display().to_string(),
                    white_side: b.white,
                })
                .collect(),
            defaults: DefaultsInfo {
                time_control: self.settings.defaults.time_control.to_string(),
                default_time_ms: self.settings.defaults.default_time,
                flag_mode: match self.settings.defaults.flag_mode {
                    FlagMode::Auto => "auto".into(),
                    FlagMode::Claim => "claim".into(),
                },
            },
            round: self.round.as_ref().map(|r| RoundInfo {
                round: r.number,
                start: r.start,
                time_control: r.time_control.clone(),
                boards: r.boards.clone(),
            }),
        };
        self.publisher.json_retained(self.topics.info(), &info);
    }

    /// Every command, from every door, takes the intake's one pipeline (read, admit,
    /// parse, bound, claim, authorize); what passes is applied here and answered through
    /// its claim.
    async fn on_command(
        &mut self,
        board: Option<String>,
        raw: Raw,
        asker: Option<oneshot::Sender<Vec<u8>>>,
    ) {
        let (target, set_topic, response) = match board {
            Some(b) => (
                Target::Board(b.clone()),
                self.board_set_topic(&b),
                self.topics.board_response(&b),
            ),
            None => (
                Target::Hall,
                self.topics.hall_set(),
                self.topics.hall_response(),
            ),
        };
        let reply_to = match asker {
            Some(tx) => ReplyTo::Asker {
                topic: response,
                tx,
            },
            None => ReplyTo::Topic(response),
        };
        let door = Door {
            target: target.clone(),
            set_topic,
            reply_to,
        };
        let now = self.timebase.now();
        match target {
            Target::Board(board) => {
                if let Some(taken) = self.intake.take::<BoardAction>(door, raw, now) {
                    self.apply_board(board, taken).await;
                }
            }
            Target::Hall => {
                if let Some(taken) = self.intake.take::<HallAction>(door, raw, now) {
                    self.apply_hall(taken).await;
                }
            }
        }
    }

    fn board_set_topic(&self, board: &str) -> String {
        format!("{}/board/{board}/set", self.topics.base())
    }

    /// A board command that passed the intake: to its board (or, for 6.10 onto another
    /// board, moved by the hall), answered through its claim.
    async fn apply_board(&mut self, board: String, taken: Taken<BoardAction>) {
        let Taken { command, claim } = taken;
        let Some(entry) = self.boards.get(&board) else {
            let known = self.boards.keys().cloned().collect::<Vec<_>>().join(", ");
            return claim.answer_soon(Err(Refusal::UnknownBoard { board, known }));
        };
        let inbox = entry.inbox.clone();
        tracing::info!(board = %log_safe(&board), transaction = %log_safe(&command.transaction), action = claim.action(), arbiter = %log_safe(&command.arbiter), "arbiter command");
        if let BoardAction::ReplaceClock {
            to: Some(to),
            white_ms,
            black_ms,
        } = &command.action
        {
            let r = self
                .move_game(&board, to, *white_ms, *black_ms, &command)
                .await;
            return claim.answer_soon(r);
        }
        let act = match input::board_act(command, &board) {
            Ok(act) => act,
            Err(e) => return claim.answer_soon(Err(e)),
        };
        // A command may wait on a 6.9 search; don't hold up the other boards.
        tokio::spawn(async move {
            let (reply, rx) = oneshot::channel();
            let r = match inbox.send(ToBoard::Act { act, reply }).await {
                Ok(()) => rx.await.unwrap_or(Err(Refusal::BoardStopped)),
                Err(_) => Err(Refusal::BoardStopped),
            };
            claim.answer(r).await;
        });
    }

    async fn ask<T>(
        inbox: &mpsc::Sender<ToBoard>,
        make: impl FnOnce(oneshot::Sender<T>) -> ToBoard,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        inbox.send(make(tx)).await.ok()?;
        rx.await.ok()
    }

    /// 6.10: the game continues on another board with the arbiter's times.
    async fn move_game(
        &mut self,
        from: &str,
        to: &str,
        white: Option<Millis>,
        black: Option<Millis>,
        command: &Command<BoardAction>,
    ) -> Result<(), Refusal> {
        let target = self
            .boards
            .get(to)
            .map(|e| e.inbox.clone())
            .ok_or_else(|| Refusal::UnknownTarget { board: to.into() })?;
        let source = self
            .boards
            .get(from)
            .map(|e| e.inbox.clone())
            .ok_or_else(|| Refusal::NotABoard { board: from.into() })?;
        if from == to {
            return Err(Refusal::SameBoard);
        }
        if let Some(round) = Self::ask(&target, |reply| ToBoard::Busy { reply })
            .await
            .flatten()
        {
            return Err(Refusal::TargetBusy {
                board: to.into(),
                round,
            });
        }
        let input = Input::ReplaceClock {
            device: to.to_string(),
            white,
            black,
            arbiter: command.arbiter.clone(),
            reason: command.reason.clone(),
        };
        // The rules check the command before anything moves: a refused move changes nothing.
        let check = input.clone();
        Self::ask(&source, |reply| ToBoard::Check {
            input: check,
            reply,
        })
        .await
        .unwrap_or(Err(Refusal::BoardStopped))?;
        let slot = Self::ask(&source, |reply| ToBoard::TakeGame { reply })
            .await
            .unwrap_or(Err(Refusal::BoardStopped))?;
        let r = Self::ask(&target, |reply| ToBoard::AdoptGame {
            slot: Box::new(slot),
            from: from.to_string(),
            input: Some(input),
            reply,
        })
        .await
        .unwrap_or(Err(Refusal::BoardStopped));
        if r.is_ok()
            && let Some(round) = &mut self.round
        {
            for b in &mut round.boards {
                if b == from {
                    *b = to.to_string();
                }
            }
            self.publish_info();
        }
        r
    }

    /// A request on `ask`: only what reads (`replay`); commands go to `set`, which viewers
    /// may not write (packaging/mosquitto/acl).
    async fn on_ask(&mut self, payload: &[u8]) {
        let topic = ReplyTo::Topic(self.topics.hall_response());
        let command = match command::parse::<HallAction>(payload) {
            Ok(c) => c,
            Err(bad) => return self.intake.refuse_bad(topic, bad),
        };
        let action = command.action.name();
        tracing::info!(transaction = %log_safe(&command.transaction), action, arbiter = %log_safe(&command.arbiter), "request");
        let r = match &command.action {
            HallAction::Replay {
                board,
                from_seq,
                reply_to,
            } => self.replay(board, *from_seq, reply_to).await,
            _ => Err(Refusal::NotARequest { action }),
        };
        self.intake.respond(topic, &command.transaction, action, r);
    }

    /// A hall command that passed the intake, answered through its claim.
    async fn apply_hall(&mut self, taken: Taken<HallAction>) {
        let Taken { command, claim } = taken;
        let (transaction, action) = (command.transaction.clone(), claim.action());
        tracing::info!(transaction = %log_safe(&transaction), action, arbiter = %log_safe(&command.arbiter), "hall command");
        let r = match command.action.clone() {
            HallAction::StartRound {
                round,
                pairings,
                trf,
                board_order,
                only_our_boards,
                start,
                time_control,
                time_control_black,
                default_time_ms,
                flag_mode,
                both_absent,
                session_end,
                broadcast_delay_minutes,
            } => {
                let (pairings, from_trf) = match self.trf_pairings(
                    round,
                    pairings,
                    trf.as_deref(),
                    board_order.as_deref(),
                    only_our_boards,
                ) {
                    Ok(p) => p,
                    // The claim is answered like any outcome: a resend gets this refusal.
                    Err(e) => return claim.answer_soon(Err(e)),
                };
                // The event's defaults, with what this round (or its TRF) says otherwise.
                let d = &self.settings.defaults;
                let mut template = d.setup("", "", start.0);
                let file_tc = from_trf.as_ref().and_then(|t| t.time_control.clone());
                if let Some(tc) = time_control.or_else(|| file_tc.as_ref().map(|t| t.white.clone()))
                {
                    template.tc = tc;
                }
                template.tc_black = time_control_black.or_else(|| file_tc.and_then(|t| t.black));
                template.default_time = default_time_ms.unwrap_or(d.default_time);
                template.both_absent = both_absent.unwrap_or(d.both_absent);
                template.flag_mode = flag_mode.unwrap_or(d.flag_mode);
                let r = self
                    .start_round(
                        round,
                        &pairings,
                        template,
                        broadcast_delay_minutes,
                        &command.arbiter,
                    )
                    .await;
                if r.is_ok()
                    && let (Some(t), Some(current)) = (from_trf, &mut self.round)
                {
                    current.ranks = t.ranks;
                }
                if r.is_ok()
                    && let Some(end) = session_end
                {
                    // The core's `SessionEnd` timer of every game orders the seal.
                    let boards: Vec<String> = pairings.iter().map(|p| p.board.clone()).collect();
                    self.on_boards(&boards, &command, |_| BoardAction::SetSessionEnd {
                        end: Some(end),
                    })
                    .await;
                }
                r
            }
            HallAction::SealAll { resumption } => {
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| BoardAction::Adjourn {
                        resumption: resumption.clone(),
                    })
                    .await;
                tracing::info!(applied, "seal all");
                applied_somewhere(applied, action)
            }
            HallAction::ScheduleResumption { resumption } => {
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| BoardAction::ScheduleResumption {
                        resumption: resumption.clone(),
                    })
                    .await;
                tracing::info!(applied, "resumption scheduled");
                applied_somewhere(applied, action)
            }
            HallAction::Replay {
                board,
                from_seq,
                reply_to,
            } => self.replay(&board, from_seq, &reply_to).await,
            HallAction::Pause {} | HallAction::Resume {} => {
                let board_action = match command.action {
                    HallAction::Pause {} => BoardAction::Pause {},
                    _ => BoardAction::Resume {},
                };
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| board_action.clone())
                    .await;
                tracing::info!(applied, action, "hall-wide");
                applied_somewhere(applied, action)
            }
        };
        claim.answer_soon(r);
    }

    /// Send a board's journaled events from `from_seq` to the asker's `reply/<id>` topic,
    /// in order, as they were first published.
    async fn replay(&self, board: &str, from_seq: u64, reply_to: &str) -> Result<(), Refusal> {
        if !valid_reply_id(reply_to) {
            return Err(Refusal::BadValue(format!(
                "reply_to: '{reply_to}' is not a topic level; give your MQTT client id (1-64 of A-Z a-z 0-9 - _): the events go to {}",
                self.topics.reply("<reply_to>")
            )));
        }
        if !self.boards.contains_key(board) {
            return Err(Refusal::NotABoard {
                board: board.into(),
            });
        }
        let dir = self.settings.state_dir.join("journal");
        let scan = tokio::task::spawn_blocking(move || crate::store::read_dir(&dir))
            .await
            .map_err(|e| Refusal::Internal {
                reason: e.to_string(),
            })?
            .map_err(|e| Refusal::JournalUnreadable {
                reason: e.to_string(),
            })?;
        let topic = self.topics.reply(reply_to);
        let mut n = 0;
        for (record, _, _) in scan.records {
            if let crate::store::Record::Event {
                board: b,
                seq,
                event,
                ..
            } = record
                && b == board
                && seq >= from_seq
            {
                self.publisher.json_message(
                    topic.clone(),
                    &crate::mqtt::payload::EventPayload {
                        board: b,
                        seq,
                        event,
                    },
                );
                n += 1;
            }
        }
        tracing::info!(board, from_seq, events = n, reply_to, "replayed");
        Ok(())
    }

    /// The pairings of a `start_round`: as given, or from its TRF.
    fn trf_pairings(
        &self,
        round: u32,
        pairings: Vec<Pairing>,
        trf: Option<&str>,
        order: Option<&[u32]>,
        only_ours: bool,
    ) -> Result<(Vec<Pairing>, Option<trf_round::TrfRound>), Refusal> {
        let Some(text) = trf else {
            if order.is_some() || only_ours {
                return Err(Refusal::BadValue(
                    ("board_order and only_our_boards go with trf").into(),
                ));
            }
            return Ok((pairings, None));
        };
        if !pairings.is_empty() {
            return Err(Refusal::BadValue(
                ("give either pairings or trf, not both").into(),
            ));
        }
        let t = trf_round::from_trf(text, round, order, only_ours, &self.settings.boards)?;
        Ok((t.pairings.clone(), Some(t)))
    }

    /// Validate every pairing before starting any game: a rejected round changes nothing.
    async fn start_round(
        &mut self,
        number: u32,
        pairings: &[Pairing],
        template: Setup,
        broadcast_delay_minutes: Option<u32>,
        arbiter: &str,
    ) -> Result<(), Refusal> {
        if number == 0 {
            return Err(Refusal::RoundZero);
        }
        if let Some(m) = broadcast_delay_minutes
            && m > crate::broadcast::MAX_DELAY_MINUTES
        {
            return Err(Refusal::BroadcastDelayTooLong { minutes: m });
        }
        if pairings.is_empty() {
            return Err(Refusal::NoPairings);
        }
        let mut slots = Vec::new();
        let mut seen = HashMap::new();
        for (i, p) in pairings.iter().enumerate() {
            let at = format!("pairings[{i}]");
            let entry = self
                .boards
                .get(&p.board)
                .ok_or_else(|| Refusal::UnknownPairedBoard {
                    at: at.clone(),
                    board: p.board.clone(),
                })?;
            if seen.insert(p.board.clone(), i).is_some() {
                return Err(Refusal::PairedTwice {
                    at,
                    board: p.board.clone(),
                });
            }
            if p.white.trim().is_empty() || p.black.trim().is_empty() {
                return Err(Refusal::NameMissing { at });
            }
            if let Some(round) = Self::ask(&entry.inbox, |reply| ToBoard::Busy { reply })
                .await
                .flatten()
            {
                return Err(Refusal::PairedBoardBusy {
                    at,
                    board: p.board.clone(),
                    round,
                });
            }
            let mut setup = template.clone();
            setup.white = p.white.clone();
            setup.black = p.black.clone();
            setup.fen = p.fen.clone();
            let game = Game::new(setup).map_err(|e| Refusal::BadSetup {
                at,
                reason: e.to_string(),
            })?;
            slots.push((
                p.board.clone(),
                GameSlot {
                    id: {
                        self.next_game_id += 1;
                        self.next_game_id - 1
                    },
                    game,
                    round: Some(number),
                    fide: (p.white_fide_id, p.black_fide_id),
                    events: Vec::new(),
                },
            ));
        }
        // The round's broadcast delay is on disk before any of its games: none is ever
        // shown undelayed, even across a restart.
        self.broadcast
            .start_round(number, broadcast_delay_minutes)
            .map_err(|e| Refusal::NotStored {
                reason: e.to_string(),
            })?;
        // Every board stores its new game at once: the journal groups them into one sync
        // instead of one sync window per board.
        let mut starting = tokio::task::JoinSet::new();
        for (board, slot) in slots {
            if let Some(entry) = self.boards.get(&board) {
                let inbox = entry.inbox.clone();
                starting.spawn(async move {
                    let r = Self::ask(&inbox, |reply| ToBoard::StartGame {
                        slot: Box::new(slot),
                        reply,
                    })
                    .await
                    .unwrap_or(Err(Refusal::BoardStopped));
                    (board, r)
                });
            }
        }
        let mut boards = Vec::new();
        let mut failed = None;
        while let Some(done) = starting.join_next().await {
            match done {
                Ok((board, Ok(()))) => boards.push(board),
                Ok((_, Err(e))) => failed = Some(e),
                Err(e) => {
                    failed = Some(Refusal::Internal {
                        reason: e.to_string(),
                    })
                }
            }
        }
        boards.sort();
        if let Some(e) = failed {
            return Err(e);
        }
        let now = self.timebase.now();
        self.round = Some(Round {
            number,
            start: template.start,
            time_control: template.tc.to_string(),
            boards: boards.clone(),
            results: BTreeMap::new(),
            ranks: BTreeMap::new(),
        });
        self.publish_info();
        self.publisher.json_message(
            self.topics.hall_event(),
            &HallEvent::RoundStarted {
                at: now,
                round: number,
                start: template.start,
                boards,
                arbiter: arbiter.to_string(),
            },
        );
        Ok(())
    }

    /// A DGT board known by its serial number answered on `board`'s port. If it used to be
    /// on another port, the cables were swapped: the games follow the boards (the clock and
    /// the e-board position are on the board, not on the port).
    async fn on_identity(&mut self, board: String, serial: String) {
        self.check_identity(&board, serial).await;
        if let Some(e) = self.boards.get(&board) {
            let _ = e.inbox.send(ToBoard::IdentityChecked).await;
        }
    }

    async fn check_identity(&mut self, board: &str, serial: String) {
        let board = board.to_string();
        let before = self.seen_on.get(&serial).cloned();
        let Some(other) = before.filter(|b| *b != board && self.boards.contains_key(b)) else {
            self.seen_on.insert(serial, board);
            return;
        };
        // The board that was on this port, if any, now answers on the other port.
        let displaced = self
            .seen_on
            .iter()
            .find(|(s, b)| **b == board && **s != serial)
            .map(|(s, _)| s.clone());
        let (Some(here), Some(there)) = (
            self.boards.get(&board).map(|e| e.inbox.clone()),
            self.boards.get(&other).map(|e| e.inbox.clone()),
        ) else {
            return;
        };
        let game_there = Self::ask(&there, |reply| ToBoard::TakeGame { reply })
            .await
            .and_then(Result::ok);
        let game_here = Self::ask(&here, |reply| ToBoard::TakeGame { reply })
            .await
            .and_then(Result::ok);
        let mut moved = Vec::new();
        if let Some(slot) = game_there {
            let r = Self::ask(&here, |reply| ToBoard::AdoptGame {
                slot: Box::new(slot),
                from: other.clone(),
                input: None,
                reply,
            })
            .await;
            if matches!(r, Some(Ok(()))) {
                moved.push(format!("the game of {other} followed its board to {board}"));
            }
        }
        if let Some(slot) = game_here {
            let r = Self::ask(&there, |reply| ToBoard::AdoptGame {
                slot: Box::new(slot),
                from: board.clone(),
                input: None,
                reply,
            })
            .await;
            if matches!(r, Some(Ok(()))) {
                moved.push(format!("the game of {board} followed its board to {other}"));
            }
        }
        self.seen_on.insert(serial.clone(), board.clone());
        if let Some(d) = displaced {
            self.seen_on.insert(d, other.clone());
        }
        if let Some(round) = &mut self.round {
            for b in &mut round.boards {
                if *b == board {
                    *b = other.clone();
                } else if *b == other {
                    *b = board.clone();
                }
            }
        }
        let message = format!(
            "DGT board {serial} (was on {other}'s port) now answers on {board}'s port: {}; check the cables",
            if moved.is_empty() {
                "no game had to move".to_string()
            } else {
                moved.join("; ")
            }
        );
        tracing::warn!("{message}");
        let alert = crate::mqtt::payload::AlertPayload {
            id: format!("{board}-board-moved"),
            board: Some(board.clone()),
            kind: crate::mqtt::payload::AlertKind::BoardMoved,
            severity: crate::mqtt::payload::Severity::Warning,
            message,
            since: self.timebase.now(),
            error: None,
        };
        self.publisher
            .json_retained(self.topics.alert(&alert.id), &alert);
        self.publish_info();
    }

    /// Send the same kind of command to `boards`, as one arbiter's; how many took it.
    async fn on_boards(
        &self,
        boards: &[String],
        command: &Command<HallAction>,
        make: impl Fn(&str) -> BoardAction,
    ) -> usize {
        let mut applied = 0;
        for board in boards {
            let Some(entry) = self.boards.get(board) else {
                continue;
            };
            let act = match input::board_act(input::for_board(command, make(board)), board) {
                Ok(act) => act,
                Err(r) => {
                    tracing::info!(%board, error = %r.code(), reason = %log_safe(&r.to_string()), "hall command not applied to this board");
                    continue;
                }
            };
            match Self::ask(&entry.inbox, |reply| ToBoard::Act { act, reply }).await {
                Some(Ok(())) => applied += 1,
                Some(Err(r)) => {
                    tracing::info!(%board, error = %r.code(), reason = %log_safe(&r.to_string()), "hall command not applied to this board")
                }
                None => {}
            }
        }
        applied
    }

    /// A retained alert the broker kept from before this start: its board decides whether
    /// it still stands. Alerts of boards that are not this daemon's (several daemons in a
    /// hall, DESIGN.md §7) and hall-wide ones are left alone.
    async fn on_stale_alert(&self, payload: &[u8]) {
        let Ok(alert) = serde_json::from_slice::<crate::mqtt::payload::AlertPayload>(payload)
        else {
            return;
        };
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

    /// The retained `session` topic, and `all_sealed` once every unfinished game of the
    /// round is sealed.
    fn publish_session(&mut self) {
        // The hall's picture is of the whole hall: after a start, not before every board
        // has said where its game is (one sealed board reporting first is not "all
        // sealed").
        if !self
            .boards
            .keys()
            .all(|b| self.session.boards.contains_key(b))
        {
            return;
        }
        let round = self.round.as_ref().map(|r| r.number);
        let mut p = SessionPayload {
            as_of: self.timebase.now(),
            round,
            session_end: None,
            resumption: None,
            sealing: Vec::new(),
            sealed: Vec::new(),
            awaiting_opening: Vec::new(),
            playing: Vec::new(),
            finished: Vec::new(),
            all_sealed: false,
        };
        for (board, note) in &self.session.boards {
            if round.is_none() || note.round != round {
                continue;
            }
            if !note.finished {
                // The hall's session: the earliest end and resumption of its games (one
                // schedule for the hall is the normal case).
                if let Some(end) = note.session_end {
                    p.session_end = Some(p.session_end.map_or(end, |e: Millis| e.min(end)));
                }
                if let Some(r) = &note.resumption
                    && p.resumption.as_ref().is_none_or(|c| r.start < c.start)
                {
                    p.resumption = Some(r.clone());
                }
            }
            let list = match (note.finished, note.stage) {
                (true, _) => &mut p.finished,
                (false, Some(Stage::Sealing)) => &mut p.sealing,
                (false, Some(Stage::Adjourned)) => &mut p.sealed,
                (false, Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening)) => {
                    &mut p.awaiting_opening
                }
                (false, Some(Stage::Resumed) | None) => &mut p.playing,
            };
            list.push(board.clone());
        }
        p.all_sealed = !p.sealed.is_empty()
            && p.sealing.is_empty()
            && p.playing.is_empty()
            && p.awaiting_opening.is_empty();
        // The first picture after a start was told before it (it is in the journal).
        if !self.session.pictured {
            self.session.pictured = true;
            self.session.all_sealed_told = p.all_sealed;
        }
        if p.all_sealed && !self.session.all_sealed_told {
            tracing::info!(boards = p.sealed.len(), "every unfinished game is sealed");
            self.publisher.json_message(
                self.topics.hall_event(),
                &SessionEvent::AllSealed {
                    at: p.as_of,
                    round,
                    boards: p.sealed.clone(),
                },
            );
        }
        self.session.all_sealed_told = p.all_sealed;
        self.publisher.json_retained(self.topics.session(), &p);
    }

    async fn on_board_note(&mut self, note: FromBoard) {
        let (board, round, white, black, result) = match note {
            FromBoard::Identity { board, serial } => return self.on_identity(board, serial).await,
            FromBoard::Stage { board, note } => {
                if self.session.boards.get(&board) != Some(&note) {
                    self.session.boards.insert(board, note);
                    self.publish_session();
                }
                return;
            }
            FromBoard::Finished {
                board,
                round,
                white,
                black,
                result,
            } => (board, round, white, black, result),
        };
        let Some(r) = &mut self.round else { return };
        if round != Some(r.number) {
            return;
        }
        let ranks = r.ranks.get(&board).copied();
        let mut line = BoardResult::new(board.clone(), white, black, &result);
        (line.white_rank, line.black_rank) = (ranks.map(|r| r.0), ranks.map(|r| r.1));
        line.score = score_text(&result);
        line.termination = termination_text(&result);
        r.results.insert(board, line);
        if r.boards.iter().all(|b| r.results.contains_key(b)) {
            let summary = HallEvent::RoundFinished {
                at: self.timebase.now(),
                round: r.number,
                results: r.results.values().cloned().collect(),
            };
            tracing::info!(round = r.number, "round finished: every game has a result");
            self.publisher
                .json_message(self.topics.hall_event(), &summary);
        }
    }
}

/// A reply topic's last level: what the example ACL's `%c` pattern can match (client ids
/// as `broker.client_id` allows them), and nothing that changes the topic's shape.
fn valid_reply_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A hall-wide command succeeds when at least one board applied it.
fn applied_somewhere(applied: usize, action: &'static str) -> Result<(), Refusal> {
    if applied == 0 {
        Err(Refusal::NoBoardApplied { action })
    } else {
        Ok(())
    }
}

fn score_text(r: &GameResult) -> String {
    serde_json::to_value(r.score)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn termination_text(r: &GameResult) -> String {
    match &r.termination {
        Termination::Arbiter { .. } => "arbiter".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| {
                v.get("termination")
                    .and_then(|t| t.as_str())
                    .map(String::from)
            })
            .unwrap_or_default(),
    }
}
