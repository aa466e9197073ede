//! The MQTT connection: one task owns the rumqttc event loop (polled continuously, with
//! backoff while the broker is away), keeps the latest retained message of every topic,
//! and on every ConnAck resubscribes and republishes them (rumqttc does neither itself).

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use rumqttc::{AsyncClient, Event, LastWill, MqttOptions, Packet, QoS};
use tokio::sync::{mpsc, oneshot};

use super::payload::{BoardTopic, NodeState, NodeStatusPayload, Topics};
use crate::intake::Incoming;

use super::connect::{MqttError, MqttSettings, options, trouble};
use super::mirror::{correct, mirror_status, refused, republish_boards};
use super::window::{Keyed, Window, flush, order_key};
use crate::timebase::Timebase;

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

/// How the connection to the broker is, for the log and systemd's STATUS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerState {
    /// No attempt has an outcome yet.
    Connecting,
    Connected,
    /// The last attempt failed; why, in words an operator can act on.
    Trouble(String),
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

/// This node's status as the connection task publishes it: `online` (`birth`) at every
/// connection, `offline` as its last will and at a clean stop. The hall's own `status` is
/// not published: several nodes would share it, and the first to die would mark the whole
/// hall offline (docs/ARCHITECTURE.md, "One hall, several servers").
#[derive(Debug, Clone)]
struct NodeTopic {
    topic: String,
    online: Vec<u8>,
    offline: Vec<u8>,
    /// This process's random id, in both payloads (`twin`).
    instance: String,
}

impl NodeTopic {
    /// This node's name, as its topic has it.
    fn topic_node<'a>(&'a self, topics: &Topics) -> &'a str {
        topics.node_of_status_topic(&self.topic).unwrap_or("")
    }

    fn new(topics: &Topics, birth: &NodeStatusPayload) -> NodeTopic {
        let instance = super::twin::new_instance();
        let with = |state| {
            serde_json::to_vec(&NodeStatusPayload {
                state,
                instance: Some(instance.clone()),
                ..birth.clone()
            })
            .unwrap_or_default()
        };
        NodeTopic {
            topic: topics.node_status(&birth.node),
            online: with(NodeState::Online),
            offline: with(NodeState::Offline),
            instance,
        }
    }
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
    let node = NodeTopic::new(&topics, &birth);
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
    let connection = run(
        opts,
        settings.max_queued,
        (topics, node),
        rx,
        incoming,
        (attempted_tx, broker_tx),
        (feed.clone(), timebase, copies),
    );
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

/// Every node's board topics: the other nodes' boards, for this dashboard, and the
/// copies of ours that `correct` checks. Subscribed only once a connection's republication
/// has all been handed to the window, so after the node statuses (a dead node's retained
/// `online` is read as the `offline` it is) and after our own boards' topics. Why: the
/// broker answers a subscription with every retained copy it matches, in one go and ahead
/// of anything else for us, ours included. Subscribed at the ConnAck, at 5000 boards the
/// acknowledgements of our first publications waited behind 15,000 retained copies, and
/// nothing else of ours reached a subscriber for half a second of a restart
/// (docs/BENCHMARKS.md). What a peer published meanwhile comes with them: these topics are
/// retained states, newest wins.
///
/// At QoS 0: these filters also bring back every publication of our own boards (MQTT
/// 3.1.1 has no "no local"), and at QoS 1 each echo cost a PUBACK. Those small writes, on a
/// socket rumqttc leaves with Nagle's algorithm on, held our next publications back: at
/// 5000 boards press -> state was 15 ms at the median, 0.7 ms at QoS 0. A delivery lost
/// with a connection comes back as the retained copy when we subscribe again.
fn subscribe_boards(
    client: &rumqttc::AsyncClient,
    topics: &Topics,
    pending: &std::collections::BTreeSet<Keyed>,
    done: &mut bool,
) {
    if *done || !pending.is_empty() {
        return;
    }
    // Marked done only when every filter was taken: otherwise the next PUBACK tries again.
    let mut all = true;
    for kind in BoardTopic::ALL {
        all &= client
            .try_subscribe(topics.board_kind_filter(kind), QoS::AtMostOnce)
            .is_ok();
    }
    *done = all;
}

async fn run(
    opts: MqttOptions,
    max_queued: usize,
    (topics, node): (Topics, NodeTopic),
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    incoming: mpsc::Sender<Incoming>,
    (attempted, broker): (
        tokio::sync::watch::Sender<bool>,
        tokio::sync::watch::Sender<BrokerState>,
    ),
    // The local feed, the hall's clock for the instants this task reports, and where the
    // other nodes' games go for the broadcast.
    (feed, timebase, copies): (
        super::feed::LocalFeed,
        Timebase,
        Option<std::sync::Arc<dyn super::foreign::Copies>>,
    ),
) {
    // rumqttc's request channel; we never let it fill (we do not send while offline).
    let (client, mut eventloop) = AsyncClient::new(opts, 16_384);
    let mut window = Window::new(client.clone());
    // rumqttc's `poll` is not cancel-safe while it connects: polled from a `select!` that
    // another branch wins, a half-made connection is dropped (and the broker publishes our
    // last will). So the event loop runs in its own task, never cancelled, with its own
    // backoff, and hands every outcome over.
    let (events_tx, mut events) = mpsc::channel(1024);
    // The least wait before a reconnection, in ms: raised while another daemon uses this
    // node's client id (`twin`), so the two take turns instead of flapping.
    let floor = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let poller_floor = floor.clone();
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
                let least = poller_floor.load(std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(backoff.max(Duration::from_millis(least))).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    });
    // The other nodes' boards in the local feed (issue 23): this node's boards are those of
    // its status.
    let mut foreign = super::foreign::Foreign::new(
        node.topic_node(&topics),
        serde_json::from_slice::<NodeStatusPayload>(&node.online)
            .map(|s| s.boards)
            .unwrap_or_default(),
    );
    let mut foreign_refused: u64 = 0;
    let mut retained: BTreeMap<(u8, String), Vec<u8>> = BTreeMap::new();
    retained.insert(order_key(&topics, &node.topic), node.online.clone());
    let mut queued: VecDeque<(String, Vec<u8>)> = VecDeque::new();
    // Retained topics whose newest payload rumqttc has not taken yet (its request channel
    // was full): retried on the next tick, newest payload only.
    let mut pending: std::collections::BTreeSet<(u8, String)> = Default::default();
    let mut dropped: u64 = 0;
    let mut connected = false;
    // Whether this connection has subscribed to every node's board topics yet.
    let mut boards_subscribed = false;
    // The board events are subscribed once another node is seen online: alone, a node
    // would only get its own back (at 5000 boards a thousand a second, for nothing).
    let mut events_subscribed = false;
    let mut shutting_down: Option<oneshot::Sender<()>> = None;
    // Copies of this node's own topics that came back different (`owned`): republished.
    let mut corrections = super::owned::Corrections::default();
    let me = node.topic_node(&topics).to_string();
    // Issue 36: another daemon under this node's id, and the broker's version.
    let mut twin = super::twin::Twin::new(&me, node.instance.clone());
    let mut broker_notes = BrokerNotes::default();
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick(), if connected && (!pending.is_empty() || !queued.is_empty() || corrections.waiting()) => {
                for topic in corrections.due(tokio::time::Instant::now()) {
                    pending.insert(order_key(&topics, &topic));
                }
                flush(&mut window, (&mut pending, &retained), &mut queued, &mut corrections);
            }
            () = async {
                match twin.clear_at() {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            }, if connected && twin.clear_at().is_some() => {
                if let Some(say) = twin.alone_again() {
                    tracing::info!("no other hallclock with node id {me} on the broker any more: the alert is cleared");
                    floor.store(0, std::sync::atomic::Ordering::Relaxed);
                    let own = (&mut retained, &mut pending, &mut broker_notes);
                    own_alert(own, (&feed, &topics, &me), super::twin::TWIN_ALERT, say, timebase.now());
                }
            }
            out = rx.recv(), if shutting_down.is_none() => {
                let Some(out) = out else { break };
                match out {
                    Outgoing::Retained { topic, mut payload } => {
                        if topic == node.topic
                            && let Ok(mut status) = serde_json::from_slice::<NodeStatusPayload>(&payload)
                        {
                            // A reload changed our boards: a board now ours is not mirrored.
                            foreign.set_own(status.boards.clone());
                            // Always with this process's instance (`twin`).
                            status.instance = Some(node.instance.clone());
                            payload = serde_json::to_vec(&status).unwrap_or(payload);
                        }
                        // A cleared alert keeps its payload (`ClearedAlert`), so a broker that
                        // kept the old message while we were away gets it cleared on
                        // reconnection.
                        let key = order_key(&topics, &topic);
                        retained.insert(key.clone(), payload.clone());
                        // Offline: the map holds it and the reconnection republishes it. With
                        // the window full it waits in `pending`, newest payload only.
                        if connected && pending.is_empty() && window.room() {
                            corrections.sent(&topic, &payload);
                            window.publish(topic, true, payload);
                        } else if connected {
                            pending.insert(key);
                        }
                    }
                    Outgoing::Message { topic, payload } => {
                        // In order: nothing overtakes what is already waiting.
                        if connected && pending.is_empty() && queued.is_empty() && window.room() {
                            window.publish(topic, false, payload);
                            continue;
                        }
                        if queued.len() >= max_queued {
                            queued.pop_front();
                            dropped += 1;
                            if dropped == 1 || dropped.is_power_of_two() {
                                tracing::warn!(dropped, max_queued, "broker unreachable: outgoing queue full, oldest events dropped");
                            }
                        }
                        queued.push_back((topic, payload));
                    }
                    Outgoing::Beacon { topic, payload } => {
                        // Behind queued messages it would arrive late: dropped, as offline.
                        if connected && queued.is_empty() && window.room() {
                            window.publish(topic, false, payload);
                        }
                    }
                    Outgoing::Shutdown(done) => {
                        if connected {
                            window.publish(node.topic.clone(), true, node.offline.clone());
                            let _ = client.try_disconnect();
                            shutting_down = Some(done);
                        } else {
                            let _ = done.send(());
                            break;
                        }
                    }
                }
            }
            ev = events.recv() => match ev {
                None => break,
                Some(ev) => match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected = true;
                    twin.connected(tokio::time::Instant::now());
                    // What the broker is (read once, then unsubscribed): a Mosquitto that
                    // drops every client when its clock steps is said at once.
                    if broker_notes.ask_version() {
                        let _ = client.try_subscribe(super::twin::VERSION_TOPIC, QoS::AtMostOnce);
                    }
                    let _ = attempted.send(true);
                    let _ = broker.send(BrokerState::Connected);
                    tracing::info!("connected to the MQTT broker");
                    let _ = client.try_subscribe(topics.hall_set(), QoS::AtLeastOnce);
                    let _ = client.try_subscribe(topics.board_set_filter(), QoS::AtLeastOnce);
                    let _ = client.try_subscribe(topics.ask(), QoS::AtLeastOnce);
                    // Every node's answers to hall commands: a dashboard's hall command,
                    // sent to every node, waits for them (hall/forward.rs).
                    let _ = client.try_subscribe(topics.hall_response(), QoS::AtLeastOnce);
                    // And every board's: a dashboard's command for another node's board
                    // waits for that node's answer. Commands come at an arbiter's pace, so
                    // our own answers coming back cost nothing worth a condition.
                    let _ = client.try_subscribe(topics.board_response_filter(), QoS::AtLeastOnce);
                    // Before the alerts: the retained statuses of the other nodes come
                    // first, so claims stand again before our retained alerts are judged.
                    let _ = client.try_subscribe(topics.node_status_filter(), QoS::AtLeastOnce);
                    let _ = client.try_subscribe(topics.node_info_filter(), QoS::AtLeastOnce);
                    // The other nodes' clocks, to compare with ours.
                    let _ = client.try_subscribe(topics.node_clock_filter(), QoS::AtLeastOnce);
                    // The board topics are subscribed once the republication below has
                    // been handed over (`subscribe_boards`).
                    boards_subscribed = false;
                    // Again at the first online peer's status, which the broker sends now.
                    events_subscribed = false;
                    // The broker answers with the retained alerts: those an earlier run
                    // left are rebuilt or cleared (a restart changes nothing a dashboard sees).
                    let _ = client.try_subscribe(topics.alert("+"), QoS::AtLeastOnce);
                    // Everything again, through the window: what does not fit waits in
                    // `pending` and follows the acknowledgements.
                    window.lost();
                    corrections.reconnected();
                    pending = retained.keys().cloned().collect();
                    flush(&mut window, (&mut pending, &retained), &mut queued, &mut corrections);
                    subscribe_boards(&client, &topics, &pending, &mut boards_subscribed);
                    // Tell the dashboards (retained, so late ones see it too) that the queue
                    // overflowed and they should ask for a replay; cleared at the next
                    // reconnection without losses.
                    let queue_id = crate::alert::node_alert_id("mqtt-queue", node.topic_node(&topics));
                    let alert_topic = topics.alert(&queue_id);
                    let raised = dropped > 0;
                    let payload = if raised {
                        tracing::warn!(dropped, "events dropped while the broker was unreachable (replay them from the journal)");
                        let alert = super::payload::AlertPayload {
                            id: queue_id.clone(),
                            board: None,
                            kind: super::payload::AlertKind::OutgoingQueue,
                            code: "outgoing_queue".into(),
                            params: serde_json::Map::from_iter([
                                ("max_queued".to_string(), serde_json::json!(max_queued)),
                                ("dropped".to_string(), serde_json::json!(dropped)),
                            ]),
                            severity: super::payload::Severity::Warning,
                            message: format!(
                                "the broker was unreachable and the outgoing queue ({max_queued} messages) overflowed: {dropped} event(s) were not published; dashboards should ask for a replay (every event is in the journal)"
                            ),
                            since: timebase.now(),
                            error: None,
                        };
                        dropped = 0;
                        serde_json::to_vec(&alert).unwrap_or_default()
                    } else {
                        super::payload::cleared_alert(&queue_id)
                    };
                    // Cleared only when it was raised (or is cleared already: republished).
                    if raised || retained.contains_key(&order_key(&topics, &alert_topic)) {
                        retained.insert(order_key(&topics, &alert_topic), payload.clone());
                        feed.push(&alert_topic, &payload, true);
                        corrections.sent(&alert_topic, &payload);
                        window.publish(alert_topic, true, payload);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.topic == super::twin::VERSION_TOPIC => {
                    let _ = client.try_unsubscribe(super::twin::VERSION_TOPIC);
                    broker_notes.version_asked = None;
                    if !broker_notes.version_logged {
                        let text = String::from_utf8_lossy(&p.payload);
                        tracing::info!("the MQTT broker is {}", crate::intake::command::log_safe(text.trim()));
                        broker_notes.version_logged = true;
                    }
                    let say = super::twin::judge_version(&p.payload);
                    broker_notes.old_mosquitto = matches!(say, super::twin::Say::Raise(_));
                    if let super::twin::Say::Raise(m) = &say
                        && broker_notes.version_said.as_deref() != Some(m.message.as_str())
                    {
                        tracing::warn!("{}", m.message);
                        broker_notes.version_said = Some(m.message.clone());
                    }
                    let own = (&mut retained, &mut pending, &mut broker_notes);
                    own_alert(own, (&feed, &topics, &me), super::twin::VERSION_ALERT, say, timebase.now());
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if p.topic.starts_with(&topics.alert("")) =>
                {
                    // Only what the broker kept from before: our own alerts (in `retained`)
                    // and live copies of publishes (not retained) are not news.
                    let ours = retained.contains_key(&order_key(&topics, &p.topic));
                    // Another node's alert, for this node's dashboard (never republished).
                    if let Some(id) = p.topic.strip_prefix(&topics.alert("")).filter(|_| !ours) {
                        match foreign.alert_message(id, &p.payload) {
                            Ok(Some(payload)) => feed.push(&p.topic, &payload, true),
                            Ok(None) => {}
                            Err(why) => refused(&mut foreign_refused, why, id),
                        }
                    }
                    if p.retain && !ours && !super::payload::alert_cleared(&p.payload) {
                        broker_notes.stale(&topics, &me, &p.topic);
                        let msg = Incoming::StaleAlert { payload: p.payload.to_vec() };
                        if incoming.send(msg).await.is_err() {
                            break;
                        }
                    }
                    if ours && shutting_down.is_none() {
                        correct(&retained, (&mut pending, &mut corrections), (&topics, &me, &foreign), &p);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.node_of_clock_topic(&p.topic).is_some() =>
                {
                    // Read at once: the time it waits in our queues would count as latency.
                    let received = timebase.now();
                    let other = topics
                        .node_of_clock_topic(&p.topic)
                        .filter(|n| *n != me && !p.retain && p.payload.len() <= 1024)
                        .map(str::to_string);
                    if let Some(node) = other {
                        let msg = Incoming::NodeClock { node, payload: p.payload.to_vec(), received };
                        // Never wait for the coordinator for a clock reading: the next one
                        // comes in a second.
                        let _ = incoming.try_send(msg);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.topic == topics.node_info(&me) => {
                    if shutting_down.is_none() {
                        correct(&retained, (&mut pending, &mut corrections), (&topics, &me, &foreign), &p);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.node_of_status_topic(&p.topic).is_some() =>
                {
                    // Another node's status (ours comes back too, and is not news). Never
                    // cleared as a retained command would be: it is that node's record.
                    let other = topics
                        .node_of_status_topic(&p.topic)
                        .filter(|n| *n != node.topic_node(&topics))
                        .map(str::to_string);
                    if other.is_none() {
                        twin.own_status(&p.payload);
                    }
                    // Ours: not while stopping (our `offline` comes back then).
                    if other.is_none() && shutting_down.is_none() {
                        correct(&retained, (&mut pending, &mut corrections), (&topics, &me, &foreign), &p);
                    }
                    if let Some(other) = other {
                        // Only what this peer shared with us can be freed by its status
                        // (not every own board against every peer's list: 5000 boards and
                        // five nodes of 1000 would be 25 million comparisons a status).
                        let contested = foreign.shared_with(&other);
                        // The hall first, then the dashboards: a dashboard that shows a
                        // node down is answered by a hall that knows it (a command for that
                        // node's board is refused as such, not sent on to wait for it).
                        let msg = Incoming::NodeStatus { node: other.clone(), payload: p.payload.to_vec() };
                        if incoming.send(msg).await.is_err() {
                            break;
                        }
                        // The boards its list let in or took out: on to the broadcast and
                        // the hall as their own messages would go (the feed has them).
                        let mut closed = false;
                        for m in mirror_status((&mut foreign, &feed, &topics), &other, &p.topic, &p.payload) {
                            if let (BoardTopic::Pgn, Some(c)) = (m.kind, &copies) {
                                c.pgn(&m.board, &m.payload, timebase.now());
                            }
                            if m.kind == BoardTopic::State && !m.payload.is_empty() {
                                let msg = Incoming::PeerState { board: m.board, payload: m.payload };
                                closed = closed || incoming.send(msg).await.is_err();
                            }
                        }
                        if closed {
                            break;
                        }
                        // Another node online: its boards' events, for this node's
                        // dashboard (not for a node long gone whose `offline` stays).
                        if !events_subscribed && foreign.has_online_peer() {
                            events_subscribed = client
                                .try_subscribe(topics.board_event_filter(), QoS::AtMostOnce)
                                .is_ok();
                        }
                        // A board no longer claimed twice (the other claimant died, or let it
                        // go): the brokers may hold that node's copy of its topics, written
                        // last, and nothing of ours may come for a while (a game between
                        // moves). Ours are published again: this node is their one writer.
                        let freed: Vec<String> = contested
                            .into_iter()
                            .filter(|b| !foreign.claimed_by_peer(b))
                            .collect();
                        if !freed.is_empty() {
                            republish_boards(&retained, &mut pending, &topics, &freed);
                        }
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.node_of_info_topic(&p.topic).is_some() =>
                {
                    // Another node's info, for the boards the dashboard lists (ours comes back
                    // too, and is not news). The hall bounds what it keeps of it.
                    let other = topics
                        .node_of_info_topic(&p.topic)
                        .filter(|n| *n != node.topic_node(&topics))
                        .map(str::to_string);
                    if let Some(other) = other {
                        let msg = Incoming::NodeInfo { node: other, payload: p.payload.to_vec() };
                        if incoming.send(msg).await.is_err() {
                            break;
                        }
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.board_topic(&p.topic).is_some() =>
                {
                    // Another node's board, into the local feed only (never published: its
                    // owner is the one writer). Ours coming back from the broker is not news,
                    // nor is a live copy of what we published (retain flag cleared).
                    let ours = retained.contains_key(&order_key(&topics, &p.topic));
                    if ours && shutting_down.is_none() {
                        correct(&retained, (&mut pending, &mut corrections), (&topics, &me, &foreign), &p);
                    }
                    if let Some((board, kind)) = topics.board_topic(&p.topic).filter(|_| !ours) {
                        match foreign.board_message(board, kind, &p.payload) {
                            Ok(Some(m)) => {
                                feed.push(&p.topic, &m.payload, true);
                                if let (BoardTopic::Pgn, Some(c)) = (kind, &copies) {
                                    c.pgn(board, &m.payload, timebase.now());
                                }
                                if kind == BoardTopic::State && !m.payload.is_empty() {
                                    let msg = Incoming::PeerState { board: board.to_string(), payload: m.payload };
                                    if incoming.send(msg).await.is_err() {
                                        break;
                                    }
                                }
                            }
                            Ok(None) => {}
                            Err(why) => refused(&mut foreign_refused, why, board),
                        }
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.board_of_event_topic(&p.topic).is_some() =>
                {
                    // Another node's board's event, into the local feed only: its tile's
                    // last move, its page's moves and log (ours coming back is not news).
                    if let Some(board) = topics.board_of_event_topic(&p.topic) {
                        match foreign.board_event(board, &p.payload) {
                            Ok(true) => feed.push(&p.topic, &p.payload, false),
                            Ok(false) => {}
                            Err(why) => refused(&mut foreign_refused, why, board),
                        }
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.topic == topics.hall_response() => {
                    if !p.payload.is_empty()
                        && incoming.send(Incoming::HallResponse(p.payload.to_vec())).await.is_err()
                    {
                        break;
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p)))
                    if topics.board_of_response_topic(&p.topic).is_some() =>
                {
                    if let Some(board) = topics.board_of_response_topic(&p.topic)
                        && !p.payload.is_empty()
                        && incoming
                            .send(Incoming::BoardResponse {
                                board: board.to_string(),
                                payload: p.payload.to_vec(),
                            })
                            .await
                            .is_err()
                    {
                        break;
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.retain => {
                    // A retained command would be replayed at every reconnection and act
                    // twice: commands are never retained. It is cleared, so that it does
                    // not come back with every subscription (ours and the next daemon's).
                    tracing::warn!(
                        topic = %crate::intake::command::log_safe(&p.topic),
                        bytes = p.payload.len(),
                        "retained command ignored and cleared (commands must not be retained)"
                    );
                    if !p.payload.is_empty() {
                        window.publish(p.topic.clone(), true, Vec::new());
                    }
                }
                // An empty payload is a retained message being cleared (by us, above), not
                // a command.
                Ok(Event::Incoming(Packet::Publish(p))) if p.payload.is_empty() => {}
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let board = topics.board_of_set_topic(&p.topic).map(str::to_string);
                    let hall = p.topic == topics.hall_set() || p.topic == topics.ask();
                    let msg = if p.payload.len() > crate::intake::command::MAX_COMMAND_BYTES {
                        let response = match &board {
                            Some(b) => Some(topics.board_response(b)),
                            None => hall.then(|| topics.hall_response()),
                        };
                        response.map(|response| Incoming::TooLarge {
                            response,
                            bad: crate::intake::command::too_large(&p.payload),
                        })
                    } else if p.topic == topics.hall_set() {
                        Some(Incoming::Hall(p.payload.to_vec()))
                    } else if p.topic == topics.ask() {
                        Some(Incoming::Ask(p.payload.to_vec()))
                    } else {
                        board.map(|board| Incoming::Board {
                            board,
                            payload: p.payload.to_vec(),
                        })
                    };
                    // MQTT 3.1.1 brokers deliver a retained message to a client already
                    // subscribed with the retain flag cleared, so we cannot tell it from a
                    // plain command: clear the topic after every command (a no-op at the
                    // broker when nothing is retained), so that none comes back as retained
                    // at the next subscription.
                    if msg.is_some() {
                        window.publish(p.topic.clone(), true, Vec::new());
                    }
                    if let Some(msg) = msg
                        && incoming.send(msg).await.is_err()
                    {
                        break;
                    }
                }
                Ok(Event::Incoming(Packet::PubAck(_))) => {
                    window.acked();
                    if connected {
                        flush(&mut window, (&mut pending, &retained), &mut queued, &mut corrections);
                        subscribe_boards(&client, &topics, &pending, &mut boards_subscribed);
                    }
                }
                Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) => {
                    if let Some(done) = shutting_down.take() {
                        let _ = done.send(());
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    if let Some(done) = shutting_down.take() {
                        let _ = done.send(());
                        break;
                    }
                    let why = trouble(&e);
                    broker_notes.lost_after_asking();
                    if connected && let Some(say) = twin.lost(tokio::time::Instant::now()) {
                        if let super::twin::Say::Raise(m) = &say {
                            tracing::error!("{}", m.message);
                        }
                        let own = (&mut retained, &mut pending, &mut broker_notes);
                        own_alert(own, (&feed, &topics, &me), super::twin::TWIN_ALERT, say, timebase.now());
                    }
                    let least = twin.backoff_floor().as_millis() as u64;
                    floor.store(least, std::sync::atomic::Ordering::Relaxed);
                    // Said at once, from the first attempt on, and again whenever the reason
                    // changes; the retries in between (every 5 s) only at debug level.
                    if connected && broker_notes.old_mosquitto {
                        tracing::warn!("lost the MQTT broker: {why}; reconnecting (this Mosquitto drops every client when its server's clock steps forward: if the clock was just set, that is why)");
                    } else if connected {
                        tracing::warn!("lost the MQTT broker: {why}; reconnecting");
                    } else if *broker.borrow() != BrokerState::Trouble(why.clone()) {
                        tracing::warn!("cannot connect to the MQTT broker: {why}; retrying");
                    } else {
                        tracing::debug!("MQTT broker still unreachable: {why}");
                    }
                    connected = false;
                    window.lost();
                    broker.send_if_modified(|s| {
                        let new = BrokerState::Trouble(why);
                        let changed = *s != new;
                        *s = new;
                        changed
                    });
                    let _ = attempted.send(true);
                }
            }},
        }
    }
    poller.abort();
}

/// The newest payload of every retained topic of ours, in republication order.
type Retained = BTreeMap<Keyed, Vec<u8>>;

/// What the connection knows about the broker and its own hall-level alerts (issue 36).
#[derive(Debug, Default)]
struct BrokerNotes {
    /// The broker is a Mosquitto that drops every client at a forward clock step.
    old_mosquitto: bool,
    /// The version warning as last logged (logged again only when it changes).
    version_said: Option<String>,
    /// The broker's version was logged (once a run).
    version_logged: bool,
    /// This node's alerts of this kind that an earlier run left retained: cleared when
    /// their cause is not found again.
    stale: std::collections::BTreeSet<String>,
    /// When `$SYS/broker/version` was asked for on this connection and not yet answered.
    version_asked: Option<tokio::time::Instant>,
    /// The broker closed the connection right after that subscription (rumqttd, the
    /// demo's embedded broker, does): not asked again in this run.
    version_refused: bool,
}

impl BrokerNotes {
    /// Whether to ask for the broker's version on a new connection (then remembered).
    fn ask_version(&mut self) -> bool {
        if self.version_refused {
            return false;
        }
        self.version_asked = Some(tokio::time::Instant::now());
        true
    }

    /// The connection was lost: soon after asking, with no answer, the broker refused the
    /// question (a `$` topic it does not serve), and it is not asked again.
    fn lost_after_asking(&mut self) {
        if let Some(at) = self.version_asked.take()
            && at.elapsed() < std::time::Duration::from_secs(3)
        {
            self.version_refused = true;
            tracing::info!(
                "the MQTT broker closed the connection on a subscription to $SYS/broker/version: its version is not asked again"
            );
        }
    }
}

impl BrokerNotes {
    /// A retained alert from before this start: one of ours?
    fn stale(&mut self, topics: &Topics, me: &str, topic: &str) {
        for base in [super::twin::TWIN_ALERT, super::twin::VERSION_ALERT] {
            if topic == topics.alert(&crate::alert::node_alert_id(base, me)) {
                self.stale.insert(topic.to_string());
            }
        }
    }
}

/// Raise or clear one of the connection's own hall-level alerts (`node-twin-<node>`,
/// `broker-version-<node>`): kept with the retained topics (so every reconnection
/// republishes it, and a raise while offline goes out at the next connection), in the local
/// feed, and published with the next flush. A clear is published only where there is
/// something to clear.
fn own_alert(
    (retained, pending, notes): (
        &mut Retained,
        &mut std::collections::BTreeSet<Keyed>,
        &mut BrokerNotes,
    ),
    (feed, topics, me): (&super::feed::LocalFeed, &Topics, &str),
    base: &str,
    say: super::twin::Say,
    now: crate::rules::Millis,
) {
    let id = crate::alert::node_alert_id(base, me);
    let topic = topics.alert(&id);
    let key = order_key(topics, &topic);
    let payload = match say {
        super::twin::Say::Raise(said) => {
            let since = retained
                .get(&key)
                .and_then(|p| serde_json::from_slice::<super::payload::AlertPayload>(p).ok())
                .map_or(now, |a| a.since);
            let alert = super::payload::AlertPayload::said(
                id,
                None,
                super::payload::AlertKind::Broker,
                super::payload::Severity::Warning,
                said,
                since,
            );
            serde_json::to_vec(&alert).unwrap_or_default()
        }
        super::twin::Say::Clear => {
            let raised = retained
                .get(&key)
                .is_some_and(|p| !super::payload::alert_cleared(p));
            if !raised && !notes.stale.remove(&topic) {
                return;
            }
            super::payload::cleared_alert(&id)
        }
    };
    if retained.get(&key) == Some(&payload) {
        return;
    }
    retained.insert(key.clone(), payload.clone());
    feed.push(&topic, &payload, true);
    // Published by the next tick when connected; otherwise at the next connection, with
    // every retained topic.
    pending.insert(key);
}
