//! The MQTT connection's async driver: one task owns the rumqttc event loop (polled
//! continuously, with backoff while the broker is away) and runs a [`Session`] over it,
//! which keeps the latest retained message of every topic and on every ConnAck
//! resubscribes and republishes them (rumqttc does neither itself). The task only moves
//! publications, events and timers; the decisions are the session's (`session.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rumqttc::{AsyncClient, ConnectionError, Event, EventLoop, LastWill, MqttOptions, Packet, QoS};
use tokio::sync::{mpsc, oneshot, watch};

use super::payload::{NodeStatusPayload, Topics};
use crate::intake::Incoming;

use super::connect::{MqttError, MqttSettings, options, trouble};
use super::session::{Action, NodeTopic, Now, Session};
use super::window::Requests;
use crate::timebase::Timebase;

pub use super::session::BrokerState;

/// Something to publish.
#[derive(Debug)]
pub enum Outgoing {
    /// Retained: remembered and republished after every reconnection. An empty payload
    /// clears the topic (a resolved alert).
    Retained { topic: String, payload: Vec<u8> },
    /// Not retained (events, responses).
    Message { topic: String, payload: Vec<u8> },
    /// Not retained, and dropped while the broker is away: a reading that is only
    /// true now (a clock), which a late delivery would make false.
    Beacon { topic: String, payload: Vec<u8> },
    /// Publish the node's `offline` status, disconnect cleanly, then answer.
    Shutdown(oneshot::Sender<()>),
}

/// Answers go out on the publisher, whatever door their command came in by.
impl crate::intake::Outbox for Publisher {
    fn message(&self, topic: String, payload: Vec<u8>) {
        Publisher::message(self, topic, payload);
    }
}

/// The daemon's handle for publishing; cheap to clone.
#[derive(Debug, Clone)]
pub struct Publisher {
    tx: mpsc::UnboundedSender<Outgoing>,
    /// Becomes true once the first connection attempt has an outcome (either way).
    attempted: tokio::sync::watch::Receiver<bool>,
    /// Everything published also goes here, for the web dashboard: one source of truth.
    feed: super::feed::LocalFeed,
    broker: tokio::sync::watch::Receiver<BrokerState>,
}

impl Publisher {
    pub fn retained(&self, topic: String, payload: Vec<u8>) {
        self.feed.push(&topic, &payload, true);
        // A closed channel means the daemon is stopping: nothing to tell anyone.
        let _ = self.tx.send(Outgoing::Retained { topic, payload });
    }

    pub fn message(&self, topic: String, payload: Vec<u8>) {
        self.feed.push(&topic, &payload, false);
        let _ = self.tx.send(Outgoing::Message { topic, payload });
    }

    /// A message for the other nodes only (a clock reading every second): not in the
    /// dashboards' feed, which would carry it to every open page.
    pub fn beacon(&self, topic: String, payload: Vec<u8>) {
        let _ = self.tx.send(Outgoing::Beacon { topic, payload });
    }

    /// What this publisher publishes, as a local stream with its retained snapshot.
    pub fn feed(&self) -> &super::feed::LocalFeed {
        &self.feed
    }

    /// Clear alert `id`: its topic gets the writer's own cleared payload
    /// ([`super::payload::ClearedAlert`]), never only a deletion, which a bridge cut at the
    /// time would never carry.
    pub fn clear_alert(&self, topics: &super::payload::Topics, id: &str) {
        self.retained(topics.alert(id), super::payload::cleared_alert(id));
    }

    pub fn json_retained<T: serde::Serialize>(&self, topic: String, value: &T) {
        if let Ok(payload) = serde_json::to_vec(value) {
            self.retained(topic, payload);
        }
    }

    pub fn json_message<T: serde::Serialize>(&self, topic: String, value: &T) {
        if let Ok(payload) = serde_json::to_vec(value) {
            self.message(topic, payload);
        }
    }

    /// Wait until the first connection attempt has an outcome (connected or refused).
    pub async fn first_attempt(&self) {
        let mut rx = self.attempted.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// How the connection is now, and its changes.
    pub fn broker_state(&self) -> tokio::sync::watch::Receiver<BrokerState> {
        self.broker.clone()
    }

    /// Publish the node's `offline` status and disconnect; waits at most `timeout`.
    pub async fn shutdown(&self, timeout: Duration) {
        // The dashboards' streams end with the daemon, or they would hold the web server.
        self.feed.close();
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Outgoing::Shutdown(tx)).is_ok() {
            let _ = tokio::time::timeout(timeout, rx).await;
        }
    }
}

/// A publisher with no broker behind it, for tests of the parts above it.
pub fn detached() -> (Publisher, mpsc::UnboundedReceiver<Outgoing>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (_, attempted) = tokio::sync::watch::channel(true);
    let (_, broker) = tokio::sync::watch::channel(BrokerState::Connected);
    (
        Publisher {
            tx,
            attempted,
            broker,
            feed: super::feed::LocalFeed::new(),
        },
        rx,
    )
}

/// Start the connection task. Commands arriving on `set` topics go to `incoming`, and
/// other nodes' statuses too. `birth` is this node's status (its `state` is ignored).
pub fn spawn(
    settings: MqttSettings,
    topics: Topics,
    birth: NodeStatusPayload,
    incoming: mpsc::Sender<Incoming>,
    timebase: Timebase,
    copies: Option<std::sync::Arc<dyn super::foreign::Copies>>,
) -> Result<(Publisher, tokio::task::JoinHandle<()>), MqttError> {
    let node = NodeTopic::new(&topics, &birth, super::twin::new_instance());
    let mut opts = options(&settings)?;
    // QoS 1 publishes awaiting their PUBACK: rumqttc's default of 100 made a restart's
    // republication of a 5000-board hall wait on round trips (docs/BENCHMARKS.md).
    opts.set_inflight(1000);
    // Durability comes from the journal and per-board seq, not from the broker's session.
    opts.set_clean_session(true);
    // The node's own topic, so that this node's death marks only its boards offline.
    opts.set_last_will(LastWill::new(
        node.topic.clone(),
        node.offline.clone(),
        QoS::AtLeastOnce,
        true,
    ));
    let (tx, rx) = mpsc::unbounded_channel();
    let (attempted_tx, attempted) = tokio::sync::watch::channel(false);
    let feed = super::feed::LocalFeed::new();
    // The daemon is up for the local feed whether or not the broker is.
    feed.push(&node.topic, &node.online, true);
    let (broker_tx, broker) = tokio::sync::watch::channel(BrokerState::Connecting);
    let ends = Ends {
        rx,
        incoming,
        attempted: attempted_tx,
        broker: broker_tx,
        feed: feed.clone(),
        timebase,
        copies,
        floor: Arc::new(AtomicU64::new(0)),
    };
    let session = (settings.max_queued, topics, node);
    let connection = run(opts, session, ends);
    let task = on_own_thread(connection).map_err(MqttError::Thread)?;
    Ok((
        Publisher {
            tx,
            attempted,
            feed,
            broker,
        },
        task,
    ))
}

/// Runs the connection on a thread of its own, with a runtime of its own; the handle
/// ends when it does. Why: the connection carries every board's publications and every
/// command, and on the hall's runtime it waited its turn behind thousands of board tasks.
/// At a 5000-board restart it was connected only 0.59 s after the start, when every board
/// was already online, and its first publications waited with it (docs/BENCHMARKS.md).
/// The thread also ends when the hall's runtime goes away (a test's, say), as a task of
/// it would: the keeper below is one of its tasks.
fn on_own_thread(
    connection: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let (keeper_tx, keeper_rx) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("hallclock-mqtt".into())
        .spawn(move || {
            runtime.block_on(async move {
                tokio::select! {
                    () = connection => {}
                    _ = keeper_rx => {}
                }
            });
            // Its own tasks (the event loop's poller) end with it.
            drop(runtime);
            let _ = done_tx.send(());
        })?;
    Ok(tokio::spawn(async move {
        let _keeper = keeper_tx;
        let _ = done_rx.await;
    }))
}

/// rumqttc's client answers the session's requests at once (its request channel).
impl Requests for AsyncClient {
    fn publish(&mut self, topic: String, qos: QoS, retain: bool, payload: Vec<u8>) -> bool {
        self.try_publish(topic, qos, retain, payload).is_ok()
    }

    fn subscribe(&mut self, filter: String, qos: QoS) -> bool {
        self.try_subscribe(filter, qos).is_ok()
    }

    fn unsubscribe(&mut self, filter: String) {
        let _ = self.try_unsubscribe(filter);
    }

    fn disconnect(&mut self) {
        let _ = self.try_disconnect();
    }
}

/// The driver's ends: what it reads, and whom it tells what the session says.
struct Ends {
    rx: mpsc::UnboundedReceiver<Outgoing>,
    incoming: mpsc::Sender<Incoming>,
    attempted: watch::Sender<bool>,
    broker: watch::Sender<BrokerState>,
    /// The local feed, for the web dashboards.
    feed: super::feed::LocalFeed,
    /// The hall's clock, for the instants the session is handed.
    timebase: Timebase,
    /// Where the other nodes' games go for the broadcast.
    copies: Option<Arc<dyn super::foreign::Copies>>,
    /// The least wait before a reconnection, in ms: raised while another daemon uses this
    /// node's client id (`twin`), so the two take turns instead of flapping.
    floor: Arc<AtomicU64>,
}

impl Ends {
    fn now(&self) -> Now {
        let at = tokio::time::Instant::now();
        Now {
            at: at.into_std(),
            hall: self.timebase.at(at),
        }
    }

    /// Does what the session said, in order. False: the task ends (stopped, or the hall's
    /// intake is gone).
    async fn act<R: Requests>(
        &self,
        session: &mut Session<R>,
        done: &mut Option<oneshot::Sender<()>>,
    ) -> bool {
        while let Some(action) = session.poll_action() {
            match action {
                Action::Feed {
                    topic,
                    payload,
                    retained,
                } => self.feed.push(&topic, &payload, retained),
                Action::Deliver(msg) => {
                    if self.incoming.send(msg).await.is_err() {
                        return false;
                    }
                }
                Action::Offer(msg) => {
                    let _ = self.incoming.try_send(msg);
                }
                Action::Pgn { board, payload, at } => {
                    if let Some(c) = &self.copies {
                        c.pgn(&board, &payload, at);
                    }
                }
                Action::Broker(state) => {
                    self.broker.send_replace(state);
                }
                Action::Attempted => {
                    let _ = self.attempted.send(true);
                }
                Action::Floor(least) => {
                    let ms = u64::try_from(least.as_millis()).unwrap_or(u64::MAX);
                    self.floor.store(ms, Ordering::Relaxed);
                }
                Action::End => {
                    if let Some(done) = done.take() {
                        let _ = done.send(());
                    }
                    return false;
                }
            }
        }
        true
    }
}

/// Runs the event loop in a task of its own, never cancelled, with its own backoff, and
/// hands every outcome over. Why: rumqttc's `poll` is not cancel-safe while it connects:
/// polled from a `select!` that another branch wins, a half-made connection is dropped (and
/// the broker publishes our last will).
fn poll_apart(
    mut eventloop: EventLoop,
    floor: Arc<AtomicU64>,
) -> (
    tokio::task::JoinHandle<()>,
    mpsc::Receiver<Result<Event, ConnectionError>>,
) {
    let (events_tx, events) = mpsc::channel(1024);
    let poller = tokio::spawn(async move {
        let mut backoff = Duration::from_millis(200);
        loop {
            let ev = eventloop.poll().await;
            let failed = ev.is_err();
            if matches!(ev, Ok(Event::Incoming(Packet::ConnAck(_)))) {
                backoff = Duration::from_millis(200);
            }
            if events_tx.send(ev).await.is_err() {
                return;
            }
            if failed {
                let least = floor.load(Ordering::Relaxed);
                tokio::time::sleep(backoff.max(Duration::from_millis(least))).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    });
    (poller, events)
}

/// One outcome of the event loop, to the session.
fn on_event<R: Requests>(session: &mut Session<R>, ev: Result<Event, ConnectionError>, now: Now) {
    match ev {
        Ok(Event::Incoming(Packet::ConnAck(_))) => session.handle_connack(now),
        Ok(Event::Incoming(Packet::Publish(p))) => session.handle_publish(&p, now),
        Ok(Event::Incoming(Packet::PubAck(_))) => session.handle_puback(),
        Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) => session.handle_disconnect_sent(),
        Ok(_) => {}
        Err(e) => session.handle_lost(trouble(&e), now),
    }
}

/// One publication from the daemon, to the session (a shutdown's answer is kept until the
/// session ends).
fn hand_over<R: Requests>(
    session: &mut Session<R>,
    out: Outgoing,
    done: &mut Option<oneshot::Sender<()>>,
) {
    match out {
        Outgoing::Retained { topic, payload } => session.retained(topic, payload),
        Outgoing::Message { topic, payload } => session.message(topic, payload),
        Outgoing::Beacon { topic, payload } => session.beacon(topic, payload),
        Outgoing::Shutdown(answer) => {
            *done = Some(answer);
            session.shutdown();
        }
    }
}

/// The connection's task: the session over rumqttc's event loop, until the daemon stops
/// it or is gone.
async fn run(
    opts: MqttOptions,
    (max_queued, topics, node): (usize, Topics, NodeTopic),
    mut ends: Ends,
) {
    // rumqttc's request channel; we never let it fill (we do not send while offline).
    let (client, eventloop) = AsyncClient::new(opts, 16_384);
    let mut session = Session::new(client, topics, node, max_queued);
    let (poller, mut events) = poll_apart(eventloop, ends.floor.clone());
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut done: Option<oneshot::Sender<()>> = None;
    loop {
        let deadline = session.next_deadline();
        tokio::select! {
            _ = tick.tick(), if session.wants_tick() => {
                session.handle_tick(tokio::time::Instant::now().into_std());
            }
            () = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            }, if deadline.is_some() => session.handle_timeout(ends.now()),
            out = ends.rx.recv(), if !session.shutting_down() => match out {
                None => break,
                Some(out) => hand_over(&mut session, out, &mut done),
            },
            ev = events.recv() => match ev {
                None => break,
                Some(ev) => on_event(&mut session, ev, ends.now()),
            },
        }
        if !ends.act(&mut session, &mut done).await {
            break;
        }
    }
    poller.abort();
}
