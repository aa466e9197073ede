//! The MQTT connection's policy, sans-IO: what to subscribe and when, what to publish next
//! (the window, the retained topics republished at every ConnAck, the queue of messages
//! and its bound, beacons dropped offline), the clears of retained commands, the
//! corrections of stale copies of our own topics (`owned`), the other nodes' topics for the
//! local feed (`foreign`), and what the connection learns of the broker (`twin`).
//!
//! * inputs: what the publisher hands over ([`Session::retained`], [`Session::message`],
//!   [`Session::beacon`], [`Session::shutdown`]), what rumqttc's event loop says
//!   ([`Session::handle_connack`], [`Session::handle_puback`], [`Session::handle_publish`],
//!   [`Session::handle_disconnect_sent`], [`Session::handle_lost`]) and the timers
//!   ([`Session::handle_tick`], [`Session::handle_timeout`]), each with the time as a value;
//! * outputs: rumqttc's requests, through [`Requests`] (they answer at once, and the window
//!   counts only what was taken), and [`Action`]s for everything else
//!   ([`Session::poll_action`]); [`Session::wants_tick`] and [`Session::next_deadline`] say
//!   when to call again.
//!
//! The async driver in `client.rs` only moves events, publications and timers.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use rumqttc::QoS;

use super::foreign::Foreign;
use super::mirror::{correct, mirror_status, refused, republish_boards};
use super::owned::Corrections;
use super::payload::{BoardTopic, NodeState, NodeStatusPayload, Topics};
use super::twin::{Say, Twin};
use super::window::{Keyed, Requests, Window, flush, order_key};
use crate::intake::Incoming;
use crate::rules::Millis;

/// How the connection to the broker is, for the log and systemd's STATUS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerState {
    /// No attempt has an outcome yet.
    Connecting,
    Connected,
    /// The last attempt failed; why, in words an operator can act on.
    Trouble(String),
}

/// The time an input came at: the monotonic instant (timers, gaps) and the hall's game
/// time (the instants the connection publishes and hands on).
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub at: Instant,
    pub hall: Millis,
}

/// What the driver does for the session, in this order.
#[derive(Debug)]
pub enum Action {
    /// Into the local feed (the dashboards').
    Feed {
        topic: String,
        payload: Vec<u8>,
        retained: bool,
    },
    /// To the hall's intake, waiting for room there; the task ends if it is gone.
    Deliver(Incoming),
    /// To the hall's intake only if there is room now: a clock reading, whose next one
    /// comes in a second (waiting for the coordinator would count as latency).
    Offer(Incoming),
    /// Another node's PGN, for the broadcast's copies.
    Pgn {
        board: String,
        payload: Vec<u8>,
        at: Millis,
    },
    /// The connection's state, changed.
    Broker(BrokerState),
    /// A connection attempt has an outcome (either way).
    Attempted,
    /// The least wait before the next reconnection (`twin`).
    Floor(Duration),
    /// Stopped: answer the shutdown and end the task.
    End,
}

/// This node's status as the connection publishes it: `online` (`birth`) at every
/// connection, `offline` as its last will and at a clean stop. The hall's own `status` is
/// not published: several nodes would share it, and the first to die would mark the whole
/// hall offline (docs/ARCHITECTURE.md, "One hall, several servers").
#[derive(Debug, Clone)]
pub struct NodeTopic {
    pub topic: String,
    pub online: Vec<u8>,
    pub offline: Vec<u8>,
    /// This process's random id, in both payloads (`twin`).
    pub instance: String,
}

impl NodeTopic {
    /// This node's name, as its topic has it.
    fn topic_node<'a>(&'a self, topics: &Topics) -> &'a str {
        topics.node_of_status_topic(&self.topic).unwrap_or("")
    }

    pub fn new(topics: &Topics, birth: &NodeStatusPayload, instance: String) -> NodeTopic {
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
    stale: BTreeSet<String>,
    /// When `$SYS/broker/version` was asked for on this connection and not yet answered.
    version_asked: Option<Instant>,
    /// The broker closed the connection right after that subscription (rumqttd, the
    /// demo's embedded broker, does): not asked again in this run.
    version_refused: bool,
}

impl BrokerNotes {
    /// Whether to ask for the broker's version on a new connection (then remembered).
    fn ask_version(&mut self, now: Instant) -> bool {
        if self.version_refused {
            return false;
        }
        self.version_asked = Some(now);
        true
    }

    /// The connection was lost: soon after asking, with no answer, the broker refused the
    /// question (a `$` topic it does not serve), and it is not asked again.
    fn lost_after_asking(&mut self, now: Instant) {
        if let Some(at) = self.version_asked.take()
            && now.saturating_duration_since(at) < Duration::from_secs(3)
        {
            self.version_refused = true;
            tracing::info!(
                "the MQTT broker closed the connection on a subscription to $SYS/broker/version: its version is not asked again"
            );
        }
    }

    /// A retained alert from before this start: one of ours?
    fn stale(&mut self, topics: &Topics, me: &str, topic: &str) {
        for base in [super::twin::TWIN_ALERT, super::twin::VERSION_ALERT] {
            if topic == topics.alert(&crate::alert::node_alert_id(base, me)) {
                self.stale.insert(topic.to_string());
            }
        }
    }
}

/// One connection's policy, across its reconnections (see the module's doc).
pub struct Session<R> {
    window: Window<R>,
    topics: Topics,
    node: NodeTopic,
    /// This node's name.
    me: String,
    max_queued: usize,
    /// The other nodes' boards in the local feed (issue 23).
    foreign: Foreign,
    foreign_refused: u64,
    retained: Retained,
    /// Messages waiting for the connection or for room in the window, in order.
    queued: VecDeque<(String, Vec<u8>)>,
    /// Retained topics whose newest payload is not handed over yet (offline, or the window
    /// was full), newest payload only.
    pending: BTreeSet<Keyed>,
    /// Messages dropped by the `max_queued` bound since the last alert.
    dropped: u64,
    connected: bool,
    /// Whether this connection has subscribed to every node's board topics yet.
    boards_subscribed: bool,
    /// The board events are subscribed once another node is seen online: alone, a node
    /// would only get its own back (at 5000 boards a thousand a second, for nothing).
    events_subscribed: bool,
    /// Our `offline` is out and the disconnection asked: waiting for it to be sent.
    shutting_down: bool,
    /// Copies of this node's own topics that came back different (`owned`): republished.
    corrections: Corrections,
    /// Issue 36: another daemon under this node's id.
    twin: Twin,
    notes: BrokerNotes,
    /// The broker's state as last told.
    broker: BrokerState,
    actions: VecDeque<Action>,
}

impl<R: Requests> Session<R> {
    pub fn new(requests: R, topics: Topics, node: NodeTopic, max_queued: usize) -> Session<R> {
        let me = node.topic_node(&topics).to_string();
        // This node's boards are those of its status.
        let foreign = Foreign::new(
            &me,
            serde_json::from_slice::<NodeStatusPayload>(&node.online)
                .map(|s| s.boards)
                .unwrap_or_default(),
        );
        let mut retained = Retained::new();
        retained.insert(order_key(&topics, &node.topic), node.online.clone());
        let twin = Twin::new(&me, node.instance.clone());
        Session {
            window: Window::new(requests),
            topics,
            node,
            me,
            max_queued,
            foreign,
            foreign_refused: 0,
            retained,
            queued: VecDeque::new(),
            pending: BTreeSet::new(),
            dropped: 0,
            connected: false,
            boards_subscribed: false,
            events_subscribed: false,
            shutting_down: false,
            corrections: Corrections::default(),
            twin,
            notes: BrokerNotes::default(),
            broker: BrokerState::Connecting,
            actions: VecDeque::new(),
        }
    }

    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Stopping: the publisher is not listened to any more.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Whether something waits for room while connected: then [`Session::handle_tick`]
    /// every 20 ms, besides every PUBACK.
    pub fn wants_tick(&self) -> bool {
        self.connected
            && (!self.pending.is_empty() || !self.queued.is_empty() || self.corrections.waiting())
    }

    /// When to call [`Session::handle_timeout`]: a connection that lasts long enough
    /// clears the twin alert.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.connected {
            self.twin.clear_at()
        } else {
            None
        }
    }

    #[cfg(test)]
    pub(super) fn requests(&mut self) -> &mut R {
        self.window.requests()
    }

    fn feed(&mut self, topic: &str, payload: &[u8], retained: bool) {
        self.actions.push_back(Action::Feed {
            topic: topic.to_string(),
            payload: payload.to_vec(),
            retained,
        });
    }

    fn subscribe(&mut self, filter: impl Into<String>, qos: QoS) -> bool {
        self.window.requests().subscribe(filter.into(), qos)
    }

    fn flush(&mut self) {
        flush(
            &mut self.window,
            (&mut self.pending, &self.retained),
            &mut self.queued,
            &mut self.corrections,
        );
    }

    /// A retained copy of ours came back: republished if stale (`mirror::correct`).
    fn correct(&mut self, p: &rumqttc::Publish, now: Instant) {
        correct(
            &self.retained,
            (&mut self.pending, &mut self.corrections),
            (&self.topics, &self.me, &self.foreign),
            p,
            now,
        );
    }

    // ---- what the publisher hands over ----

    /// A retained publication: remembered and republished after every reconnection. An
    /// empty payload clears the topic (a resolved alert).
    pub fn retained(&mut self, topic: String, mut payload: Vec<u8>) {
        if topic == self.node.topic
            && let Ok(mut status) = serde_json::from_slice::<NodeStatusPayload>(&payload)
        {
            // A reload changed our boards: a board now ours is not mirrored.
            self.foreign.set_own(status.boards.clone());
            // Always with this process's instance (`twin`).
            status.instance = Some(self.node.instance.clone());
            payload = serde_json::to_vec(&status).unwrap_or(payload);
        }
        // A cleared alert keeps its payload (`ClearedAlert`), so a broker that kept the old
        // message while we were away gets it cleared on reconnection.
        let key = order_key(&self.topics, &topic);
        self.retained.insert(key.clone(), payload.clone());
        // Offline: the map holds it and the reconnection republishes it. With the window
        // full it waits in `pending`, newest payload only.
        if self.connected && self.pending.is_empty() && self.window.room() {
            self.corrections.sent(&topic, &payload);
            self.window.publish(topic, true, payload);
        } else if self.connected {
            self.pending.insert(key);
        }
    }

    /// A message (an event, a response): in order, queued while it cannot go, up to
    /// `max_queued`, the oldest dropped first (the alert says so at the next connection).
    pub fn message(&mut self, topic: String, payload: Vec<u8>) {
        // In order: nothing overtakes what is already waiting.
        if self.connected && self.pending.is_empty() && self.queued.is_empty() && self.window.room()
        {
            self.window.publish(topic, false, payload);
            return;
        }
        if self.queued.len() >= self.max_queued {
            self.queued.pop_front();
            self.dropped += 1;
            let (dropped, max_queued) = (self.dropped, self.max_queued);
            if dropped == 1 || dropped.is_power_of_two() {
                tracing::warn!(
                    dropped,
                    max_queued,
                    "broker unreachable: outgoing queue full, oldest events dropped"
                );
            }
        }
        self.queued.push_back((topic, payload));
    }

    /// A reading that is only true now (a clock): published at once or not at all.
    pub fn beacon(&mut self, topic: String, payload: Vec<u8>) {
        // Behind queued messages it would arrive late: dropped, as offline.
        if self.connected && self.queued.is_empty() && self.window.room() {
            self.window.publish(topic, false, payload);
        }
    }

    /// Stop: connected, our `offline` goes out and the disconnection is asked (the end
    /// comes when rumqttc has sent it); offline, at once.
    pub fn shutdown(&mut self) {
        if self.connected {
            let (topic, offline) = (self.node.topic.clone(), self.node.offline.clone());
            self.window.publish(topic, true, offline);
            self.window.requests().disconnect();
            self.shutting_down = true;
        } else {
            self.actions.push_back(Action::End);
        }
    }

    // ---- the timers ----

    /// The 20 ms tick while something waits: corrections due, then what fits the window.
    pub fn handle_tick(&mut self, now: Instant) {
        for topic in self.corrections.due(now) {
            self.pending.insert(order_key(&self.topics, &topic));
        }
        self.flush();
    }

    /// [`Session::next_deadline`] has come: a connection that lasted clears the twin alert.
    pub fn handle_timeout(&mut self, now: Now) {
        let due = self.connected && self.twin.clear_at().is_some_and(|at| at <= now.at);
        if !due {
            return;
        }
        if let Some(say) = self.twin.alone_again() {
            tracing::info!(
                "no other hallclock with node id {} on the broker any more: the alert is cleared",
                self.me
            );
            self.actions.push_back(Action::Floor(Duration::ZERO));
            self.own_alert(super::twin::TWIN_ALERT, say, now.hall);
        }
    }

    // ---- what rumqttc's event loop says ----

    /// Connected (again): subscribe, and republish every retained topic through the window.
    pub fn handle_connack(&mut self, now: Now) {
        self.connected = true;
        self.twin.connected(now.at);
        // What the broker is (read once, then unsubscribed): a Mosquitto that drops every
        // client when its clock steps is said at once.
        if self.notes.ask_version(now.at) {
            self.subscribe(super::twin::VERSION_TOPIC, QoS::AtMostOnce);
        }
        self.actions.push_back(Action::Attempted);
        self.broker = BrokerState::Connected;
        self.actions
            .push_back(Action::Broker(BrokerState::Connected));
        tracing::info!("connected to the MQTT broker");
        self.subscribe_commands();
        // The board topics are subscribed once the republication below has been handed
        // over (`subscribe_boards`).
        self.boards_subscribed = false;
        // Again at the first online peer's status, which the broker sends now.
        self.events_subscribed = false;
        // The broker answers with the retained alerts: those an earlier run left are
        // rebuilt or cleared (a restart changes nothing a dashboard sees).
        self.subscribe(self.topics.alert("+"), QoS::AtLeastOnce);
        // Everything again, through the window: what does not fit waits in `pending` and
        // follows the acknowledgements.
        self.window.lost();
        self.corrections.reconnected();
        self.pending = self.retained.keys().cloned().collect();
        self.flush();
        self.subscribe_boards();
        self.queue_alert(now.hall);
    }

    /// The commands, the answers and the other nodes' statuses, infos and clocks.
    fn subscribe_commands(&mut self) {
        let t = self.topics.clone();
        self.subscribe(t.hall_set(), QoS::AtLeastOnce);
        self.subscribe(t.board_set_filter(), QoS::AtLeastOnce);
        self.subscribe(t.ask(), QoS::AtLeastOnce);
        // Every node's answers to hall commands: a dashboard's hall command, sent to every
        // node, waits for them (hall/forward.rs).
        self.subscribe(t.hall_response(), QoS::AtLeastOnce);
        // And every board's: a dashboard's command for another node's board waits for that
        // node's answer. Commands come at an arbiter's pace, so our own answers coming back
        // cost nothing worth a condition.
        self.subscribe(t.board_response_filter(), QoS::AtLeastOnce);
        // Before the alerts: the retained statuses of the other nodes come first, so claims
        // stand again before our retained alerts are judged.
        self.subscribe(t.node_status_filter(), QoS::AtLeastOnce);
        self.subscribe(t.node_info_filter(), QoS::AtLeastOnce);
        // The other nodes' clocks, to compare with ours.
        self.subscribe(t.node_clock_filter(), QoS::AtLeastOnce);
        // Our own announcement and session only (each node's screens show their own
        // daemon's): a stale copy a healed bridge brings back is corrected, as our info is.
        self.subscribe(t.node_announce(&self.me), QoS::AtLeastOnce);
        self.subscribe(t.node_session(&self.me), QoS::AtLeastOnce);
    }

    /// Every node's board topics: the other nodes' boards, for this dashboard, and the
    /// copies of ours that `correct` checks. Subscribed only once a connection's
    /// republication has all been handed to the window, so after the node statuses (a dead
    /// node's retained `online` is read as the `offline` it is) and after our own boards'
    /// topics. Why: the broker answers a subscription with every retained copy it matches,
    /// in one go and ahead of anything else for us, ours included. Subscribed at the
    /// ConnAck, at 5000 boards the acknowledgements of our first publications waited behind
    /// 15,000 retained copies, and nothing else of ours reached a subscriber for half a
    /// second of a restart (docs/BENCHMARKS.md). What a peer published meanwhile comes with
    /// them: these topics are retained states, newest wins.
    ///
    /// At QoS 0: these filters also bring back every publication of our own boards (MQTT
    /// 3.1.1 has no "no local"), and at QoS 1 each echo cost a PUBACK. Those small writes,
    /// on a socket rumqttc leaves with Nagle's algorithm on, held our next publications
    /// back: at 5000 boards press -> state was 15 ms at the median, 0.7 ms at QoS 0. A
    /// delivery lost with a connection comes back as the retained copy when we subscribe
    /// again.
    fn subscribe_boards(&mut self) {
        if self.boards_subscribed || !self.pending.is_empty() {
            return;
        }
        // Marked done only when every filter was taken: otherwise the next PUBACK tries
        // again.
        let mut all = true;
        for kind in BoardTopic::ALL {
            let filter = self.topics.board_kind_filter(kind);
            all &= self.subscribe(filter, QoS::AtMostOnce);
        }
        self.boards_subscribed = all;
    }

    /// Tell the dashboards (retained, so late ones see it too) that the queue overflowed
    /// and they should ask for a replay; cleared at the next reconnection without losses.
    fn queue_alert(&mut self, now: Millis) {
        let queue_id = crate::alert::node_alert_id("mqtt-queue", &self.me);
        let alert_topic = self.topics.alert(&queue_id);
        let raised = self.dropped > 0;
        let payload = if raised {
            let (dropped, max_queued) = (self.dropped, self.max_queued);
            tracing::warn!(
                dropped,
                "events dropped while the broker was unreachable (replay them from the journal)"
            );
            let said = crate::alert::Said::new(
                "outgoing_queue",
                serde_json::json!({"max_queued": max_queued, "dropped": dropped}),
                format!(
                    "the broker was unreachable and the outgoing queue ({max_queued} messages) overflowed: {dropped} event(s) were not published; dashboards should ask for a replay (every event is in the journal)"
                ),
            );
            let alert = super::payload::AlertPayload::said(
                queue_id.clone(),
                None,
                super::payload::AlertKind::OutgoingQueue,
                super::payload::Severity::Warning,
                said,
                now,
            );
            self.dropped = 0;
            serde_json::to_vec(&alert).unwrap_or_default()
        } else {
            super::payload::cleared_alert(&queue_id)
        };
        // Cleared only when it was raised (or is cleared already: republished).
        let key = order_key(&self.topics, &alert_topic);
        if raised || self.retained.contains_key(&key) {
            self.retained.insert(key, payload.clone());
            self.feed(&alert_topic, &payload, true);
            self.corrections.sent(&alert_topic, &payload);
            self.window.publish(alert_topic, true, payload);
        }
    }

    /// A publication of ours was acknowledged: what waits goes on.
    pub fn handle_puback(&mut self) {
        self.window.acked();
        if self.connected {
            self.flush();
            self.subscribe_boards();
        }
    }

    /// rumqttc has sent our DISCONNECT: when stopping, the end.
    pub fn handle_disconnect_sent(&mut self) {
        if self.shutting_down {
            self.actions.push_back(Action::End);
        }
    }

    /// The connection failed or was lost (`why`: in an operator's words, `connect::trouble`).
    pub fn handle_lost(&mut self, why: String, now: Now) {
        if self.shutting_down {
            self.actions.push_back(Action::End);
            return;
        }
        self.notes.lost_after_asking(now.at);
        if self.connected
            && let Some(say) = self.twin.lost(now.at)
        {
            if let Say::Raise(m) = &say {
                tracing::error!("{}", m.message);
            }
            self.own_alert(super::twin::TWIN_ALERT, say, now.hall);
        }
        let least = self.twin.backoff_floor();
        self.actions.push_back(Action::Floor(least));
        // Said at once, from the first attempt on, and again whenever the reason changes;
        // the retries in between (every 5 s) only at debug level.
        if self.connected && self.notes.old_mosquitto {
            tracing::warn!(
                "lost the MQTT broker: {why}; reconnecting (this Mosquitto drops every client when its server's clock steps forward: if the clock was just set, that is why)"
            );
        } else if self.connected {
            tracing::warn!("lost the MQTT broker: {why}; reconnecting");
        } else if self.broker != BrokerState::Trouble(why.clone()) {
            tracing::warn!("cannot connect to the MQTT broker: {why}; retrying");
        } else {
            tracing::debug!("MQTT broker still unreachable: {why}");
        }
        self.connected = false;
        self.window.lost();
        let new = BrokerState::Trouble(why);
        if self.broker != new {
            self.broker = new.clone();
            self.actions.push_back(Action::Broker(new));
        }
        self.actions.push_back(Action::Attempted);
    }

    /// A publication from the broker, by its topic.
    pub fn handle_publish(&mut self, p: &rumqttc::Publish, now: Now) {
        let t = &self.topics;
        if p.topic == super::twin::VERSION_TOPIC {
            self.broker_version(p, now);
        } else if p.topic.starts_with(&t.alert("")) {
            self.alert_copy(p, now);
        } else if t.node_of_clock_topic(&p.topic).is_some() {
            self.node_clock(p, now);
        } else if p.topic == t.node_info(&self.me)
            || p.topic == t.node_announce(&self.me)
            || p.topic == t.node_session(&self.me)
        {
            if !self.shutting_down {
                self.correct(p, now.at);
            }
        } else if t.node_of_status_topic(&p.topic).is_some() {
            self.node_status(p, now);
        } else if t.node_of_info_topic(&p.topic).is_some() {
            self.node_info(p);
        } else if t.board_topic(&p.topic).is_some() {
            self.board_copy(p, now);
        } else if t.board_of_event_topic(&p.topic).is_some() {
            self.board_event(p);
        } else if p.topic == t.hall_response() {
            if !p.payload.is_empty() {
                let msg = Incoming::HallResponse(p.payload.to_vec());
                self.actions.push_back(Action::Deliver(msg));
            }
        } else if let Some(board) = t.board_of_response_topic(&p.topic) {
            if !p.payload.is_empty() {
                let msg = Incoming::BoardResponse {
                    board: board.to_string(),
                    payload: p.payload.to_vec(),
                };
                self.actions.push_back(Action::Deliver(msg));
            }
        } else {
            self.command(p);
        }
    }

    /// `$SYS/broker/version`: logged once, judged (`twin::judge_version`), unsubscribed.
    fn broker_version(&mut self, p: &rumqttc::Publish, now: Now) {
        self.window
            .requests()
            .unsubscribe(super::twin::VERSION_TOPIC.to_string());
        self.notes.version_asked = None;
        if !self.notes.version_logged {
            let text = String::from_utf8_lossy(&p.payload);
            tracing::info!(
                "the MQTT broker is {}",
                crate::intake::command::log_safe(text.trim())
            );
            self.notes.version_logged = true;
        }
        let say = super::twin::judge_version(&p.payload);
        self.notes.old_mosquitto = matches!(say, Say::Raise(_));
        if let Say::Raise(m) = &say
            && self.notes.version_said.as_deref() != Some(m.message.as_str())
        {
            tracing::warn!("{}", m.message);
            self.notes.version_said = Some(m.message.clone());
        }
        self.own_alert(super::twin::VERSION_ALERT, say, now.hall);
    }

    /// An alert's copy: another node's for the feed, one an earlier run left for the hall
    /// to judge, ours to correct when stale.
    fn alert_copy(&mut self, p: &rumqttc::Publish, now: Now) {
        // Only what the broker kept from before: our own alerts (in `retained`) and live
        // copies of publishes (not retained) are not news.
        let ours = self
            .retained
            .contains_key(&order_key(&self.topics, &p.topic));
        // Another node's alert, for this node's dashboard (never republished).
        let prefix = self.topics.alert("");
        if let Some(id) = p.topic.strip_prefix(&prefix).filter(|_| !ours) {
            match self.foreign.alert_message(id, &p.payload) {
                Ok(Some(payload)) => self.feed(&p.topic, &payload, true),
                Ok(None) => {}
                Err(why) => refused(&mut self.foreign_refused, why, id),
            }
        }
        if p.retain && !ours && !super::payload::alert_cleared(&p.payload) {
            self.notes.stale(&self.topics, &self.me, &p.topic);
            let msg = Incoming::StaleAlert {
                payload: p.payload.to_vec(),
            };
            self.actions.push_back(Action::Deliver(msg));
        }
        if ours && !self.shutting_down {
            self.correct(p, now.at);
        }
    }

    /// Another node's clock reading, as it came (`now.hall`: read at once, since the time
    /// it waits in our queues would count as latency).
    fn node_clock(&mut self, p: &rumqttc::Publish, now: Now) {
        let other = self
            .topics
            .node_of_clock_topic(&p.topic)
            .filter(|n| *n != self.me && !p.retain && p.payload.len() <= 1024)
            .map(str::to_string);
        if let Some(node) = other {
            let msg = Incoming::NodeClock {
                node,
                payload: p.payload.to_vec(),
                received: now.hall,
            };
            self.actions.push_back(Action::Offer(msg));
        }
    }

    /// A node's status: ours (twin, correction) or another's (the hall, the feed, the
    /// boards its list lets in or out, and ours it frees).
    fn node_status(&mut self, p: &rumqttc::Publish, now: Now) {
        // Another node's status (ours comes back too, and is not news). Never cleared as a
        // retained command would be: it is that node's record.
        let other = self
            .topics
            .node_of_status_topic(&p.topic)
            .filter(|n| *n != self.me)
            .map(str::to_string);
        let Some(other) = other else {
            self.twin.own_status(&p.payload);
            // Ours: not while stopping (our `offline` comes back then).
            if !self.shutting_down {
                self.correct(p, now.at);
            }
            return;
        };
        // Only what this peer shared with us can be freed by its status (not every own
        // board against every peer's list: 5000 boards and five nodes of 1000 would be 25
        // million comparisons a status).
        let contested = self.foreign.shared_with(&other);
        // The hall first, then the dashboards: a dashboard that shows a node down is
        // answered by a hall that knows it (a command for that node's board is refused as
        // such, not sent on to wait for it).
        let msg = Incoming::NodeStatus {
            node: other.clone(),
            payload: p.payload.to_vec(),
        };
        self.actions.push_back(Action::Deliver(msg));
        // The boards its list let in or took out: on to the broadcast and the hall as their
        // own messages would go (the feed has them).
        let actions = &mut self.actions;
        let mut feed = |topic: &str, payload: &[u8]| {
            actions.push_back(Action::Feed {
                topic: topic.to_string(),
                payload: payload.to_vec(),
                retained: true,
            });
        };
        let mirrored = mirror_status(
            &mut self.foreign,
            &mut feed,
            &self.topics,
            (&other, &p.topic, &p.payload),
        );
        for m in mirrored {
            self.board_mirrored(m.board, m.kind, m.payload, now.hall);
        }
        // Another node online: its boards' events, for this node's dashboard (not for a
        // node long gone whose `offline` stays).
        if !self.events_subscribed && self.foreign.has_online_peer() {
            let filter = self.topics.board_event_filter();
            self.events_subscribed = self.subscribe(filter, QoS::AtMostOnce);
        }
        // A board no longer claimed twice (the other claimant died, or let it go): the
        // brokers may hold that node's copy of its topics, written last, and nothing of
        // ours may come for a while (a game between moves). Ours are published again: this
        // node is their one writer.
        let freed: Vec<String> = contested
            .into_iter()
            .filter(|b| !self.foreign.claimed_by_peer(b))
            .collect();
        if !freed.is_empty() {
            republish_boards(&self.retained, &mut self.pending, &self.topics, &freed);
        }
    }

    /// Another node's board text now in the feed: a PGN on to the broadcast's copies, a
    /// state to the hall.
    fn board_mirrored(&mut self, board: String, kind: BoardTopic, payload: Vec<u8>, at: Millis) {
        if kind == BoardTopic::Pgn {
            let pgn = Action::Pgn {
                board: board.clone(),
                payload: payload.clone(),
                at,
            };
            self.actions.push_back(pgn);
        }
        if kind == BoardTopic::State && !payload.is_empty() {
            let msg = Incoming::PeerState { board, payload };
            self.actions.push_back(Action::Deliver(msg));
        }
    }

    /// Another node's info, for the boards the dashboard lists (ours comes back too, and
    /// is not news). The hall bounds what it keeps of it.
    fn node_info(&mut self, p: &rumqttc::Publish) {
        let other = self
            .topics
            .node_of_info_topic(&p.topic)
            .filter(|n| *n != self.me)
            .map(str::to_string);
        if let Some(other) = other {
            let msg = Incoming::NodeInfo {
                node: other,
                payload: p.payload.to_vec(),
            };
            self.actions.push_back(Action::Deliver(msg));
        }
    }

    /// A board topic's copy: ours to correct when stale; another node's board into the
    /// local feed only (never published: its owner is the one writer).
    fn board_copy(&mut self, p: &rumqttc::Publish, now: Now) {
        // Ours coming back from the broker is not news, nor is a live copy of what we
        // published (retain flag cleared).
        let ours = self
            .retained
            .contains_key(&order_key(&self.topics, &p.topic));
        if ours && !self.shutting_down {
            self.correct(p, now.at);
        }
        if ours {
            return;
        }
        let Some((board, kind)) = self.topics.board_topic(&p.topic) else {
            return;
        };
        let board = board.to_string();
        match self.foreign.board_message(&board, kind, &p.payload) {
            Ok(Some(m)) => {
                self.feed(&p.topic, &m.payload, true);
                self.board_mirrored(board, kind, m.payload, now.hall);
            }
            Ok(None) => {}
            Err(why) => refused(&mut self.foreign_refused, why, &board),
        }
    }

    /// Another node's board's event, into the local feed only: its tile's last move, its
    /// page's moves and log (ours coming back is not news).
    fn board_event(&mut self, p: &rumqttc::Publish) {
        let Some(board) = self.topics.board_of_event_topic(&p.topic) else {
            return;
        };
        match self.foreign.board_event(board, &p.payload) {
            Ok(true) => {
                let topic = p.topic.clone();
                self.feed(&topic, &p.payload, false);
            }
            Ok(false) => {}
            Err(why) => refused(&mut self.foreign_refused, why, board),
        }
    }

    /// A publication on a command topic: to the intake, and the topic cleared.
    fn command(&mut self, p: &rumqttc::Publish) {
        if p.retain {
            // A retained command would be replayed at every reconnection and act twice:
            // commands are never retained. It is cleared, so that it does not come back
            // with every subscription (ours and the next daemon's).
            tracing::warn!(
                topic = %crate::intake::command::log_safe(&p.topic),
                bytes = p.payload.len(),
                "retained command ignored and cleared (commands must not be retained)"
            );
            if !p.payload.is_empty() {
                self.window.publish(p.topic.clone(), true, Vec::new());
            }
            return;
        }
        // An empty payload is a retained message being cleared (by us, above), not a
        // command.
        if p.payload.is_empty() {
            return;
        }
        let t = &self.topics;
        let board = t.board_of_set_topic(&p.topic).map(str::to_string);
        let hall = p.topic == t.hall_set() || p.topic == t.ask();
        let msg = if p.payload.len() > crate::intake::command::MAX_COMMAND_BYTES {
            let response = match &board {
                Some(b) => Some(t.board_response(b)),
                None => hall.then(|| t.hall_response()),
            };
            response.map(|response| Incoming::TooLarge {
                response,
                bad: crate::intake::command::too_large(&p.payload),
            })
        } else if p.topic == t.hall_set() {
            Some(Incoming::Hall(p.payload.to_vec()))
        } else if p.topic == t.ask() {
            Some(Incoming::Ask(p.payload.to_vec()))
        } else {
            board.map(|board| Incoming::Board {
                board,
                payload: p.payload.to_vec(),
            })
        };
        // MQTT 3.1.1 brokers deliver a retained message to a client already subscribed
        // with the retain flag cleared, so we cannot tell it from a plain command: clear the
        // topic after every command (a no-op at the broker when nothing is retained), so
        // that none comes back as retained at the next subscription.
        if let Some(msg) = msg {
            self.window.publish(p.topic.clone(), true, Vec::new());
            self.actions.push_back(Action::Deliver(msg));
        }
    }

    /// Raise or clear one of the connection's own hall-level alerts (`node-twin-<node>`,
    /// `broker-version-<node>`): kept with the retained topics (so every reconnection
    /// republishes it, and a raise while offline goes out at the next connection), in the
    /// local feed, and published with the next flush. A clear is published only where
    /// there is something to clear.
    fn own_alert(&mut self, base: &str, say: Say, now: Millis) {
        let id = crate::alert::node_alert_id(base, &self.me);
        let topic = self.topics.alert(&id);
        let key = order_key(&self.topics, &topic);
        let payload = match say {
            Say::Raise(said) => {
                let since = self
                    .retained
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
            Say::Clear => {
                let raised = self
                    .retained
                    .get(&key)
                    .is_some_and(|p| !super::payload::alert_cleared(p));
                if !raised && !self.notes.stale.remove(&topic) {
                    return;
                }
                super::payload::cleared_alert(&id)
            }
        };
        if self.retained.get(&key) == Some(&payload) {
            return;
        }
        self.retained.insert(key.clone(), payload.clone());
        self.feed(&topic, &payload, true);
        // Published by the next tick when connected; otherwise at the next connection, with
        // every retained topic.
        self.pending.insert(key);
    }
}

#[cfg(test)]
mod tests;
