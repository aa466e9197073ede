//! The daemon's start, in named steps (`start` reads as their list): the boards' links,
//! the journal's replay and game time, the MQTT connection, the start's own alerts, the
//! envelopes' keeper, an actor per board, then the coordinator.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::json;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::{
    GameSlot, Hall, HallError, HallSettings, Round, RunningHall, board, forward, link_config,
    nodes, peers, pulse, server_clock, skew,
};
use crate::alert::Said;
use crate::intake::auth::Security;
use crate::intake::{Intake, answers};
use crate::link::{LinkHandle, spawn as spawn_link};
use crate::mqtt::client;
use crate::mqtt::payload::{
    AlertKind, AlertPayload, NodeState, NodeStatusPayload, Severity, Topics,
};
use crate::rules::Millis;
use crate::timebase::Timebase;

/// Start the daemon's tasks: the MQTT connection, a link and an actor per board, and the
/// coordinator.
pub fn start(settings: HallSettings) -> Result<RunningHall, HallError> {
    refuse_duplicate_boards(&settings)?;
    let links = open_links(&settings);
    let mut recovery = recover(&settings)?;
    say_security(&settings.security);
    let timebase = recovery.timebase;
    let topics = Topics::new(&settings.hall);
    let (incoming_tx, incoming_rx) = mpsc::channel(256);
    let boot = timebase.now();
    let (publisher, mqtt_task) = client::spawn(
        settings.mqtt.clone(),
        topics.clone(),
        birth(&settings, boot),
        incoming_tx.clone(),
        timebase,
        Some(Arc::new(recovery.feed.clone())),
    )?;
    let broadcast = recovery.feed.source(Arc::new(move || timebase.now()));
    // A round's archive that cannot be written is alerted and retried (issue 36).
    recovery.feed.alert_through(
        crate::broadcast::push::AlertSink {
            publisher: publisher.clone(),
            topics: topics.clone(),
            node: settings.node.to_string(),
        },
        timebase.now(),
    );
    let intake = Intake::new(
        settings.security.clone(),
        answers::Replier {
            answers: answers::Answers::recovered(&recovery.recovered.answered),
            node: settings.node.to_string(),
            journal: recovery.journal.clone(),
            outbox: Arc::new(publisher.clone()),
        },
    )
    .with_past_start_grace(settings.defaults.past_start_grace);
    let raise = |id: &str, kind, severity, said: Said| {
        let id = crate::alert::node_alert_id(id, &settings.node);
        let alert = AlertPayload::said(id, None, kind, severity, said, timebase.now());
        tracing::warn!("{}", alert.message);
        publisher.json_retained(topics.alert(&alert.id), &alert);
    };
    say_start_alerts(&recovery, raise);
    let custody = Arc::new(open_custody(&settings, raise));
    let (from_boards_tx, from_boards_rx) = mpsc::unbounded_channel();
    let board_settings = settings.boards.clone();
    let node = settings.node.to_string();
    let mut hall = Hall {
        nodes: nodes::Nodes::new(&settings.node),
        skew: skew::Skew::new(&settings.node),
        settings,
        topics,
        publisher: publisher.clone(),
        timebase,
        boards: BTreeMap::new(),
        watch: pulse::Watch::default(),
        // The round in progress, as far as the journal shows it.
        round: Round::recovered(&recovery.recovered.games),
        next_game_id: recovery.recovered.next_game_id,
        from_boards: from_boards_tx,
        seen_on: HashMap::new(),
        searches: Arc::new(Semaphore::new(2)),
        journal: recovery.journal.clone(),
        custody,
        session: super::PlayingSession::default(),
        intake,
        broadcast: recovery.feed.clone(),
        peer_infos: peers::PeerInfos::default(),
        boot,
        forwarded: forward::Forwarded::default(),
        announcement: None,
        // Exact by construction (a live reading differs by a millisecond of clock reads).
        steps: crate::timebase::StepWatch::new(recovery.civil_start),
    };
    spawn_boards(&mut hall, &board_settings, &mut recovery, links);
    say_games_without_board(&recovery.recovered.games);
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
        timebase,
        publisher,
        intake: incoming_tx,
        control: control_tx,
        health: health_rx,
        broadcast,
        node,
        stop: Some(stop_tx),
        task,
    })
}

fn refuse_duplicate_boards(settings: &HallSettings) -> Result<(), HallError> {
    let mut seen = std::collections::HashSet::new();
    for b in &settings.boards {
        if !seen.insert(b.id.clone()) {
            return Err(HallError::DuplicateBoard(b.id.to_string()));
        }
    }
    Ok(())
}

/// The ports before the journal: each link opens its port and waits out its settle
/// (300 ms for a port that just appeared) while the journal is replayed, instead of after
/// it; that was most of a restart's time (docs/BENCHMARKS.md). A link only talks to its
/// board's actor, which starts after the replay: until then its events wait in its
/// channel. Should the start fail later, dropping the handles ends the links.
fn open_links(settings: &HallSettings) -> HashMap<crate::id::Id, LinkHandle> {
    settings
        .boards
        .iter()
        .map(|b| (b.id.clone(), spawn_link(link_config(&settings.link, b))))
        .collect()
}

/// A test hook (tests/hall_of_many.rs): this node's clock off by so many ms, as a server
/// whose clock was never set would be, so that the other nodes' clock_skew alert can be
/// seen end to end. Said loudly: a hall never sets it.
fn test_clock_shift() -> Millis {
    match std::env::var("HALLCLOCK_TEST_CLOCK_OFFSET_MS")
        .ok()
        .and_then(|v| v.parse::<i64>().ok())
    {
        Some(ms) => {
            tracing::warn!(
                offset_ms = ms,
                "HALLCLOCK_TEST_CLOCK_OFFSET_MS: this node's clock is moved (a test hook)"
            );
            Millis(ms)
        }
        None => Millis::ZERO,
    }
}

/// What the journal gave back, and game time going on from it.
struct Recovery {
    journal: crate::store::JournalHandle,
    recovered: crate::store::Recovered,
    timebase: Timebase,
    resumed: crate::timebase::Resumed,
    /// The civil time of game time zero for this run (the step watch's reference).
    civil_start: Millis,
    /// Every round's games, finished ones too, for the broadcast feed.
    feed: crate::broadcast::FeedWriter,
    /// Games that may have lost events and that no result or arbiter's act settles: their
    /// boards hold them for the arbiter (`RecoveredGame::damaged`).
    held: Vec<String>,
}

/// Recovery first: the journal is replayed before anything is published, then game time
/// is anchored and the anchor stored before any event of this run.
fn recover(settings: &HallSettings) -> Result<Recovery, HallError> {
    let mut journal_settings = crate::store::JournalSettings::new(&settings.state_dir);
    journal_settings.sync_window = settings.sync_window;
    journal_settings.segment_size = settings.segment_size;
    let wall_shift = test_clock_shift();
    let wall = crate::timebase::system_wall() + wall_shift;
    let crate::store::startup::Started {
        mut journal,
        games,
        recovered,
    } = crate::store::startup::start(&settings.state_dir, journal_settings, wall)?;
    // The hall's one timebase: games, answers and the connection's instants are on it.
    // Game time goes on from the journal, never from the wall clock alone
    // (ARCHITECTURE.md, "Where game time comes from").
    // Read now, not before the replay: game time is anchored right after (a replay under
    // load took most of a second, and game time lagged the wall clock by it).
    let here = crate::timebase::here(crate::timebase::system_wall() + wall_shift);
    let resumed = crate::timebase::resume(&recovered.time, &here);
    let timebase = Timebase::resumed(resumed.game, wall_shift);
    timebase.set_correction(resumed.correction);
    let anchor = crate::timebase::Anchor {
        boot: here.boot.clone(),
        boottime: here.boottime,
        at: resumed.game,
        civil: here.wall + resumed.correction,
        correction: resumed.correction,
    };
    let held = recovered
        .games
        .iter()
        .filter(|(_, g)| g.damaged)
        .map(|(b, g)| format!("{b}'s game {}", g.game_id))
        .collect();
    let feed = crate::broadcast::FeedWriter::recovered(
        &settings.state_dir,
        settings.broadcast.delay,
        settings.broadcast.tags.clone(),
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
    // This start's anchor: a restart in this boot goes on from it exactly. Not stored, a
    // restart would guess from the wall clock (said).
    if let Err(e) = journal.write(&[crate::store::Record::Time(anchor)]) {
        tracing::error!(
            "the journal cannot store this start's time anchor ({e}): a restart will check running games against their clocks"
        );
    }
    Ok(Recovery {
        journal: journal.spawn(),
        civil_start: here.wall + resumed.correction - resumed.game,
        recovered,
        timebase,
        resumed,
        feed,
        held,
    })
}

fn say_security(security: &Security) {
    match security {
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
}

/// This node's status as the connection announces it (its `state` is set there).
fn birth(settings: &HallSettings, boot: Millis) -> NodeStatusPayload {
    let mut boards: Vec<String> = settings.boards.iter().map(|b| b.id.to_string()).collect();
    boards.sort();
    NodeStatusPayload {
        node: settings.node.to_string(),
        state: NodeState::Online,
        boards,
        version: env!("CARGO_PKG_VERSION").to_string(),
        boot,
        defaults: Some(settings.defaults.as_value()),
        instance: None,
    }
}

/// What the start found and the arbiters must know: a damaged journal (with the games
/// held for them) and the server's clock against the journal's.
fn say_start_alerts(recovery: &Recovery, raise: impl Fn(&str, AlertKind, Severity, Said)) {
    if let Some(d) = &recovery.recovered.damage {
        let held = &recovery.held;
        let message = if held.is_empty() {
            d.words()
        } else {
            format!(
                "{}; held for the arbiter (it may have lost events, and no later record says how it stands): {}",
                d.words(),
                held.join(", ")
            )
        };
        // The damage is said in the operating system's and the scan's words (`why`); the
        // boards held for the arbiter are data.
        let said = Said::new(
            "storage.journal_damaged",
            json!({ "why": d.words(), "held": held }),
            message,
        );
        raise("journal", AlertKind::Storage, Severity::Critical, said);
    }
    if let Some(note) = &recovery.resumed.note {
        let said = server_clock::note_said(note);
        raise(
            "server-clock",
            AlertKind::ServerClock,
            Severity::Warning,
            said,
        );
    }
}

/// The envelopes' keeper; its key is made on first start. A damaged key does not stop the
/// hall (the clocks matter more): sealing and opening are refused, and the arbiters are
/// told.
fn open_custody(
    settings: &HallSettings,
    raise: impl Fn(&str, AlertKind, Severity, Said),
) -> crate::custody::Custody {
    match crate::custody::Custody::open(&settings.state_dir) {
        Ok(c) => c,
        Err(e) => {
            let said = Said::new(
                "storage.custody",
                json!({ "why": e.to_string() }),
                format!(
                    "sealed moves cannot be kept or opened ({e}); the games go on, seal and open_envelope are refused until the custody key is restored"
                ),
            );
            raise("custody", AlertKind::Storage, Severity::Critical, said);
            crate::custody::Custody::unavailable(&settings.state_dir, e)
        }
    }
}

/// An actor per board, each with its recovered game, sequence number and link.
fn spawn_boards(
    hall: &mut Hall,
    boards: &[super::BoardSettings],
    recovery: &mut Recovery,
    mut links: HashMap<crate::id::Id, LinkHandle>,
) {
    for b in boards {
        let mut damaged = false;
        let slot = recovery.recovered.games.remove(b.id.as_str()).map(|g| {
            damaged = g.damaged;
            GameSlot {
                id: g.game_id,
                game: g.game,
                round: g.round,
                fide: g.fide,
                events: g.events,
            }
        });
        let seq = recovery
            .recovered
            .seqs
            .get(b.id.as_str())
            .copied()
            .unwrap_or(0);
        let link = links
            .remove(&b.id)
            .unwrap_or_else(|| spawn_link(link_config(&hall.settings.link, b)));
        let doubt = board::Doubt {
            unwitnessed: recovery.resumed.unwitnessed,
            damaged,
        };
        hall.spawn_board(b, slot, seq, link, doubt);
    }
}

/// What is left is the games of boards this configuration no longer has. They stay in the
/// journal (a board put back takes its game up again); an unfinished one is said, since no
/// dashboard can reach it now (its board's commands are `unknown_board`).
fn say_games_without_board(games: &BTreeMap<String, crate::store::RecoveredGame>) {
    for (board, g) in games {
        if g.game.result().is_none() {
            tracing::warn!(
                board = %board,
                round = ?g.round,
                "the journal holds an unfinished game on {board}, which is not in [[boards]]: nobody can play or command it; put the board back to take the game up again (it stays in the journal)"
            );
        }
    }
}
