//! One actor per board: it owns the board's `Game` and its link, and only translates —
//! link events into rule inputs, the core's events into clock commands, MQTT messages
//! and alerts, and `next_deadline` into one timer. It decides nothing itself.

pub mod alerts;
pub mod battery;
pub mod clock_texts;
mod command;
pub mod display;
pub mod eboard;
mod hardware;
pub mod lever;
pub mod observe;
mod publish;
mod seal;
mod sealed_wait;
mod witness;

pub use witness::Doubt;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::alert::Said;
use crate::config::BoardMode;
use crate::custody::{Custody, Secret};
use crate::dgt::{BoardEvent, ClockButton, ClockSide, ClockTime};
use crate::intake::input::BoardAct;
use crate::link::{ClockCommandError, LinkCommand, LinkEvent};
use crate::mqtt::Publisher;
use crate::mqtt::payload::{
    AlertKind, AlertPayload, EventPayload, OFFLINE, ONLINE, Severity, StatePayload, Topics,
};
use crate::rules::adjournment::{EnvelopeStatus, Stage};
use crate::rules::game::{Event, Game, Input, Phase, Rejection, describe_result};
use crate::rules::placement::Placement;
use crate::rules::{Color, Millis};
use crate::store::{JournalHandle, Record};
use alerts::{Alerts, Stale};

use crate::timebase::Timebase;

pub use display::LEVER_TEXT;
pub use eboard::MOVE_SETTLE;
use eboard::{BoardMove, Settling};
use lever::{CLOCK_RESOLUTION, Lever, LeverPress, Outage};

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
    /// An arbiter's command on this board, with its `ok` answer to store in one journal
    /// batch with its events (issue 36; `command.rs`).
    Command {
        act: BoardAct,
        answer: crate::intake::answers::PreparedAnswer,
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
    /// The hall's heartbeat has not seen this board turn for a while: turn once (its
    /// [`Pulse`](super::pulse::Pulse) proves it is not stuck).
    Ping,
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
    /// Whether the daemon drives the clock or only reads it (issue 24).
    pub mode: BoardMode,
    /// Where the actor shows the heartbeat it is alive, and how it is.
    pub pulse: Arc<super::pulse::Pulse>,
    /// What is not known of the recovered game: its time since a reboot, or events lost
    /// in a damaged journal (`witness`).
    pub doubt: Doubt,
    /// The clock's words in the hall's language.
    pub clock_texts: clock_texts::ClockTexts,
}

struct BoardActor {
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
    /// E-board moves between the reader and the rules (settling, owed, carried).
    settling: Settling,
    /// Standing alerts, so each is published once and cleared once.
    alerts: Alerts,
    /// The batteries as last reported (kept while offline: low stays low until read).
    battery: battery::Battery,
    /// The clock shows what we last programmed (its ACK came back); readings taken
    /// before that are not compared (they miss the increment just credited).
    display_synced: bool,
    /// Set-and-runs sent and not yet acknowledged (or failed). The link sends them in
    /// order, one at a time: the clock shows the last programmed times only once every one
    /// is answered. (A round started late programs a board twice in a row; at 5000 boards
    /// the first one's ACK came seconds before the second was applied, and the readings
    /// in between were reported as discrepancies.)
    setnrun_pending: u32,
    /// The setting buttons pressed during the current game, oldest first (at most 8).
    buttons_pressed: Vec<ClockButton>,
    /// Back online after an outage: the clock's first reading is the evidence of what
    /// happened meanwhile, compared before the official times are sent again.
    reconcile: bool,
    /// A game was running when the link last came online: the clock played on by itself
    /// while the board (or the daemon) was away, and its first reading is the evidence of
    /// what happened meanwhile. Why: without a game running then, nothing ran that the
    /// reading could tell of. Found from a CI run under load: a round that started between
    /// a board's handshake and its identity check was judged by the handshake's reading,
    /// 0:00 on both sides from before the clock was programmed (6.11's double flag, since
    /// the 6.11 fix a discrepancy that stopped the clock being programmed).
    ran_while_away: bool,
    /// Online, but the hall has not yet checked which board this is (swapped cables):
    /// until then no reading is compared with a game that may not be this board's.
    identity_pending: bool,
    /// The newest reading that came while the identity was pending: the evidence to
    /// reconcile with once it is checked. Why: the link asks the clock for a reading right
    /// after its handshake, and when the link came online before this actor ran (its port
    /// opened during the journal's replay) that reading was queued ahead of the hall's
    /// answer and dropped; a press then came before any other reading, and was judged
    /// against an unreconciled clock.
    held_reading: Option<ClockTime>,
    /// Where the lever is and whether it is the wrong way round for the player to move.
    lever: Lever,
    /// The clock's reading after an outage could not be explained (several presses):
    /// its times are kept on the display, not overwritten, until the arbiter acts.
    hold_clock: bool,
    /// Control or observe; changed by the arbiter between games (`set_mode`).
    mode: BoardMode,
    /// Observe mode: the clock's last reading, for what the next one is compared with.
    observed: observe::Observed,
    /// Left for the heartbeat at every turn of the loop, with the count of turns.
    pulse: Arc<super::pulse::Pulse>,
    turns: u64,
    /// The game's time since the journal's last record is unknown (a reboot): until its
    /// clock witnesses it, or the arbiter acts, no deadline of the game is acted on.
    unwitnessed: Option<witness::Unwitnessed>,
    /// An e-board has spoken on this board's link (a dump or a square): the sealed move
    /// must then be made on it after an opening (`sealed_wait`).
    eboard: bool,
    /// The sealed move the arbiter has still to make on the e-board after an opening.
    sealed_wait: sealed_wait::SealedWait,
    /// The clock's words in the hall's language (`clock_texts.rs`).
    clock_texts: clock_texts::ClockTexts,
}

/// Run a board actor until the hall drops its inbox.
///
/// Not an `async fn`: its future would keep room for `parts` (1.5 KB) beside the actor
/// made of them, for as long as the board lives. The actor is built here and moved into
/// the loop's future. With the rare paths boxed (see `run_actor`), a board's actor future
/// went from 10 KB to about 3 KB: 35 MB at 5000 boards (docs/BENCHMARKS.md).
pub fn run(parts: BoardParts) -> impl std::future::Future<Output = ()> + Send {
    let BoardParts {
        id,
        port: _,
        placement,
        topics,
        publisher,
        timebase,
        link_commands,
        link_events,
        inbox,
        hall,
        searches,
        journal,
        custody,
        recovered,
        seq,
        feed,
        mode,
        pulse,
        doubt,
        clock_texts,
    } = parts;
    // An unfinished game goes on in the mode it was started in, whatever the
    // configuration says now: the official time cannot change hands mid-game.
    let mode = match &recovered {
        Some(s) if s.game.result().is_none() && s.game.setup().observed => BoardMode::Observe,
        Some(s) if s.game.result().is_none() => BoardMode::Control,
        _ => mode,
    };
    let a = BoardActor {
        alerts: Alerts::new(&id),
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
        settling: Settling::default(),
        battery: battery::Battery::default(),
        display_synced: false,
        setnrun_pending: 0,
        buttons_pressed: Vec::new(),
        reconcile: false,
        ran_while_away: false,
        identity_pending: false,
        held_reading: None,
        lever: Lever::default(),
        hold_clock: false,
        mode,
        observed: observe::Observed::default(),
        pulse,
        turns: 0,
        unwitnessed: None,
        eboard: false,
        sealed_wait: sealed_wait::SealedWait::default(),
        clock_texts,
    };
    // Boxed: an async fn's argument is kept twice in its future (as passed, and as the
    // local it is moved into), and the actor is 2 KB.
    run_actor(Box::new(a), link_events, inbox, doubt)
}

/// How long a board actor waits for its link's first word (online, or why not) before it
/// publishes the board's first picture as offline. Covers a fresh port's settle (300 ms)
/// and a handshake; a port that cannot be opened says so at once.
const FIRST_PICTURE_WAIT: Duration = Duration::from_secs(1);

/// Whether `ev` says how the link is (up, or why it is not), which the board's first
/// picture waits for. A board dump, say, comes during the handshake, before `Online`: at a
/// 5000-board restart 350 boards were published `offline` on it and `online` just after.
fn says_how_the_link_is(ev: &LinkEvent) -> bool {
    matches!(
        ev,
        LinkEvent::Online(_) | LinkEvent::Offline(_) | LinkEvent::Error(_)
    )
}

async fn run_actor(
    mut a: Box<BoardActor>,
    mut link_events: mpsc::Receiver<LinkEvent>,
    mut inbox: mpsc::Receiver<ToBoard>,
    doubt: Doubt,
) {
    // Before anything can act on the game's deadlines.
    Box::pin(a.begin_witness(doubt)).await;
    // The board's first picture: offline until its link says otherwise. The links open
    // their ports while the journal is replayed, so after a restart most boards' `Online`
    // is already waiting: publishing `offline` first would be two retained payloads per
    // board that the next instant replaces (10,000 of a 5000-board restart's messages).
    // A link still handshaking gets FIRST_PICTURE_WAIT to say how it went: at a restart
    // at 5000 boards with the connection up sooner, 2890 actors started before their
    // link's `Online` and published `offline` first (4,600 of the restart's 19,300
    // messages, on the two cores the handshakes needed). Meanwhile the broker keeps the
    // board's picture from before.
    let first = link_events.try_recv().ok();
    let mut picture_due = match &first {
        Some(LinkEvent::Online(_)) => None,
        Some(ev) if says_how_the_link_is(ev) => {
            a.publish_availability();
            a.publish_state();
            None
        }
        // Nothing yet, or the handshake's board dump (it comes before `Online`).
        _ => Some(tokio::time::Instant::now() + FIRST_PICTURE_WAIT),
    };
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
        Box::pin(a.new_game_on_board()).await;
    }
    Box::pin(a.report_stage()).await;
    if let Some(ev) = first {
        Box::pin(a.on_link(ev)).await;
    }
    // The game's deadline timer, reset only when the deadline changes: it stays the same
    // between presses, and a new timer on every clock frame (5000 boards: 5000 a second)
    // was timer-wheel work under the time driver's lock for nothing.
    let deadline_sleep = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(deadline_sleep);
    let mut armed: Option<tokio::time::Instant> = None;
    let wedge_at = test_wedge(&a.id);
    loop {
        if wedge_at.is_some_and(|at| tokio::time::Instant::now() >= at) {
            // The fault-injection hook: an actor stuck on an await that never ends.
            std::future::pending::<()>().await;
        }
        // How the board is as it waits, for the heartbeat (see `hall::pulse`).
        a.turns += 1;
        a.pulse.beat(a.turns, a.summary());
        let deadline = a.deadline_timer();
        let retry = a.retry_storage;
        let attach = a.settling.attach_at();
        let witness_due = a.witness_due();
        let sealed_due = a.sealed_wait.due();
        let poll = a.observe_poll_at();
        if deadline != armed {
            if let Some(d) = deadline {
                deadline_sleep.as_mut().reset(d);
            }
            armed = deadline;
        }
        tokio::select! {
            () = async {
                if let Some(at) = attach { tokio::time::sleep_until(at).await }
            }, if attach.is_some() => {
                Box::pin(a.attach_owed()).await;
            },
            () = async {
                if let Some(at) = poll { tokio::time::sleep_until(at).await }
            }, if poll.is_some() => Box::pin(a.observe_poll()).await,
            () = async {
                if let Some(at) = witness_due { tokio::time::sleep_until(at).await }
            }, if witness_due.is_some() => Box::pin(a.witness_overdue()).await,
            () = async {
                if let Some(at) = sealed_due { tokio::time::sleep_until(at).await }
            }, if sealed_due.is_some() => a.sealed_move_overdue(),
            () = async {
                if let Some(at) = retry { tokio::time::sleep_until(at).await }
            }, if retry.is_some() => {
                a.retry_storage = None;
                Box::pin(a.flush()).await;
            },
            // What comes often is handled in place; the rest is boxed, so that this
            // future, which lives as long as the board, does not keep room for the largest
            // of them all the time (a `Box` for the moment it runs costs nothing next to a
            // command or a press).
            msg = inbox.recv() => match msg {
                // The heartbeat's ping of a quiet board: the turn is the answer.
                Some(ToBoard::Ping) => {}
                Some(msg) => {
                    Box::pin(a.on_message(msg)).await;
                    // A game started, moved or adopted changes the hall's session view.
                    Box::pin(a.report_stage()).await;
                }
                None => break,
            },
            () = async {
                if let Some(at) = picture_due { tokio::time::sleep_until(at).await }
            }, if picture_due.is_some() => {
                picture_due = None;
                a.publish_availability();
                a.publish_state();
            },
            ev = link_events.recv() => match ev {
                // The clock's second, from every running board.
                Some(LinkEvent::Clock(reading)) => a.on_reading(reading).await,
                Some(ev) => {
                    // The link's first word: `Online` publishes the picture itself.
                    if picture_due.is_some() && says_how_the_link_is(&ev) {
                        picture_due = None;
                        if !matches!(ev, LinkEvent::Online(_)) {
                            a.publish_availability();
                            a.publish_state();
                        }
                    }
                    Box::pin(a.on_link(ev)).await
                }
                // The link task ended (it only does so when we go away).
                None => break,
            },
            () = &mut deadline_sleep, if armed.is_some() => {
                // Fired: armed again at the next turn, even for the same instant (as a
                // deadline still due is polled again).
                armed = None;
                Box::pin(a.on_deadline()).await;
            }
        }
    }
}

/// A fault-injection hook for the watchdog test (`HALLCLOCK_TEST_WEDGE_BOARD=<board>@<ms>`):
/// this board's actor stops turning that many ms after it starts, as one stuck on an
/// await would.
fn test_wedge(board: &str) -> Option<tokio::time::Instant> {
    let v = std::env::var("HALLCLOCK_TEST_WEDGE_BOARD").ok()?;
    let (id, ms) = v.split_once('@')?;
    let ms: u64 = ms.parse().ok()?;
    (id == board).then(|| tokio::time::Instant::now() + Duration::from_millis(ms))
}

impl BoardActor {
    /// When the game's next deadline is to be acted on, if at all.
    fn deadline_timer(&self) -> Option<tokio::time::Instant> {
        let deadline = self
            .slot
            .as_ref()
            .and_then(|s| s.game.next_deadline())
            .map(|d| self.timebase.instant_of(d));
        // Unwitnessed time: no deadline is acted on (nothing flagged, defaulted or
        // started from a gap that nobody can vouch for).
        if self.unwitnessed.is_some() {
            return None;
        }
        // A flag due while a pressed move is still settling on the board waits for it
        // (at most MOVE_SETTLE): the flag's verdict (6.9) needs the position, and the
        // move, completed before the flag, is the game's. The flag keeps its instant.
        match (deadline, self.settling.attach_at()) {
            (Some(d), Some(at))
                if self
                    .slot
                    .as_ref()
                    .is_some_and(|s| s.game.move_owed().is_some()) =>
            {
                Some(d.max(at))
            }
            _ => deadline,
        }
    }

    /// The heartbeat's view of this board.
    fn summary(&self) -> super::pulse::Summary {
        super::pulse::Summary {
            online: self.online,
            running: self.running_game(),
            alerts: self.alerts.count(),
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
        let events = self.decide_events(input, now).await?;
        self.apply(events).await;
        Ok(())
    }

    /// The events `input` at `now` would make; the game is not changed yet.
    async fn decide_events(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, Refusal> {
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
        decided.map_err(Refusal::Rejected)
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
            ToBoard::Command { act, answer, reply } => {
                let r = self.on_command(act, answer).await;
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
                        // A hand-set clock is never sent anything (observe mode).
                        if !self.observing() {
                            let _ = self
                                .link
                                .send(LinkCommand::Text {
                                    text: "MOVED".into(),
                                    beep: false,
                                })
                                .await;
                        }
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
                    // A game that moves keeps its mode (6.10: another clock, set as the
                    // game was played).
                    self.mode = if slot.game.setup().observed {
                        BoardMode::Observe
                    } else {
                        BoardMode::Control
                    };
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
                                self.ran_while_away = true;
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
                let held = self.held_reading.take();
                if self.running_game() && self.ran_while_away {
                    // The clock's own reading (the link asks for one right after the
                    // handshake) is compared before it is overwritten: the one that came
                    // while the identity was pending, or else the next.
                    self.reconcile = true;
                    if let Some(reading) = held {
                        self.reconcile_after_outage(reading).await;
                    }
                } else if self.slot.is_some() {
                    // The lever may have been left the wrong way round (a press refused
                    // during a pause, before the restart). A game that started or resumed
                    // while the identity was checked comes here too: the reading held is
                    // from before it, and says nothing of it.
                    self.align_lever();
                    self.program_clock(None).await;
                }
            }
            ToBoard::Ping => {}
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

    async fn start_game(&mut self, mut slot: GameSlot) -> Result<(), Refusal> {
        if let Some(round) = self.busy() {
            return Err(Refusal::BoardBusy {
                board: self.id.clone(),
                round,
            });
        }
        // The game is played in the board's mode, and keeps it (its setup is journaled):
        // an observed game's core forces claim mode (docs/RULES-COVERAGE.md).
        if slot.game.setup().observed != self.observing() {
            let mut setup = slot.game.setup().clone();
            setup.observed = self.observing();
            // The same setup but the mode: it was valid, so it still is.
            if let Ok(game) = Game::new(setup) {
                slot.game = game;
            }
        }
        self.observed = observe::Observed::default();
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
                Said::new(
                    "storage.game_not_stored",
                    serde_json::json!({ "board": self.id, "why": e.to_string() }),
                    format!("cannot store the new game ({e})"),
                ),
            );
            return Err(Refusal::GameNotStored {
                board: self.id.clone(),
                reason: e.to_string(),
            });
        }
        self.slot = Some(slot);
        self.forget_board_moves();
        self.buttons_pressed.clear();
        // The move reader starts afresh: what the old game's board showed is moot.
        for kind in alerts::FOLLOW_THE_GAME
            .into_iter()
            .chain(alerts::ENDED_BY_A_NEW_GAME)
        {
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

    /// Control or observe the clock: between games only. Mid-game the official time
    /// would change hands (the daemon's reckoning or the hand-set clock) with nobody
    /// having set the other one for this game.
    async fn set_mode(&mut self, mode: BoardMode, arbiter: &str) -> Result<(), Refusal> {
        if let Some(round) = self.busy() {
            return Err(Refusal::BoardBusy {
                board: self.id.clone(),
                round,
            });
        }
        if mode != self.mode {
            tracing::info!(board = %self.id, mode = mode.name(), arbiter = %crate::intake::command::log_safe(arbiter), "board mode switched");
        }
        self.mode = mode;
        self.observed = observe::Observed::default();
        self.publish_state();
        Ok(())
    }

    pub(super) async fn on_act(&mut self, act: BoardAct) -> Result<(), Refusal> {
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
            BoardAct::SetMode { mode, arbiter } => return self.set_mode(mode, &arbiter).await,
            BoardAct::Rules(input) => input,
        };
        let r = self.decide(input).await;
        if r.is_ok() {
            self.arbiter_acted().await;
            // A new position for the move reader, or a resumed clock: keep the board in step.
            self.clear(AlertKind::StrayPress);
        }
        r
    }
}
