//! How many publications the connection hands to rumqttc at once, and what waits
//! meanwhile (the session's flow control: `session.rs` decides, `client.rs` drives).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rumqttc::QoS;

use super::payload::Topics;

/// A retained topic as the connection's session keeps it: in publishing order (`order_key`).
pub(super) type Keyed = (u8, String);

/// QoS 1 publications handed to rumqttc and not acknowledged yet are at most this many;
/// the rest wait in `pending` (retained: newest payload only) and `queued` (messages, in
/// order), and go as the acknowledgements come back.
///
/// Why: before it, every publication went straight into rumqttc's request channel, so a
/// burst (a 5000-board restart: two or three payloads per topic in a second) was sent
/// whole, superseded payloads and all, at the pace of rumqttc's 1000 in flight. One such
/// restart stalled: rumqttc logged "Collision on packet id = 12", stopped sending, and
/// dropped the connection two keep-alives later (50 s; docs/BENCHMARKS.md). rumqttc 0.24
/// numbers publications 1..=`inflight` and its subscriptions take numbers from the same
/// sequence, so near 1000 in flight the next number can be one still unacknowledged.
/// Far below that, a collision needs a broker that leaves one publication unacknowledged
/// while it acknowledges the next 744.
pub(super) const WINDOW: usize = 256;

/// What the session asks of rumqttc's client: its `try_*` calls, which answer at once
/// (rumqttc's request channel takes the request or refuses it). An answer, not a queued
/// action: the window counts only what was taken, and a subscription refused is tried
/// again (`client.rs` implements it on `AsyncClient`; the session's tests record).
pub(super) trait Requests {
    /// A publication at `qos`; false when refused.
    fn publish(&mut self, topic: String, qos: QoS, retain: bool, payload: Vec<u8>) -> bool;
    /// A subscription; false when refused.
    fn subscribe(&mut self, filter: String, qos: QoS) -> bool;
    fn unsubscribe(&mut self, filter: String);
    fn disconnect(&mut self);
}

/// rumqttc's client with the count of publications it has not seen acknowledged.
pub(super) struct Window<R> {
    requests: R,
    unacked: usize,
}

impl<R: Requests> Window<R> {
    pub(super) fn new(requests: R) -> Window<R> {
        Window {
            requests,
            unacked: 0,
        }
    }

    /// The client, for the requests that are not publications.
    pub(super) fn requests(&mut self) -> &mut R {
        &mut self.requests
    }

    pub(super) fn room(&self) -> bool {
        self.unacked < WINDOW
    }

    /// Hand a QoS 1 publication over. Called past the window only for the few that must
    /// not wait (the clearing of a command, our `offline` when stopping); they count too.
    pub(super) fn publish(&mut self, topic: String, retain: bool, payload: Vec<u8>) {
        // Refused only when the event loop is gone (the task is ending) or its channel is
        // full, which the window keeps it from being.
        if self
            .requests
            .publish(topic, QoS::AtLeastOnce, retain, payload)
        {
            self.unacked += 1;
        }
    }

    pub(super) fn acked(&mut self) {
        self.unacked = self.unacked.saturating_sub(1);
    }

    /// The connection is gone: nothing of it will be acknowledged. (rumqttc sends what it
    /// had in flight again on the next one; their acknowledgements then only make the
    /// count low for a while, never high.)
    pub(super) fn lost(&mut self) {
        self.unacked = 0;
    }
}

/// Publish what waits, as far as the window goes: the retained topics first (they are
/// state, newest payload), then the messages in their order.
pub(super) fn flush<R: Requests>(
    out: &mut Window<R>,
    (pending, retained): (&mut BTreeSet<Keyed>, &BTreeMap<Keyed, Vec<u8>>),
    queued: &mut VecDeque<(String, Vec<u8>)>,
    corrections: &mut super::owned::Corrections,
) {
    while out.room()
        && let Some(key) = pending.pop_first()
    {
        let payload = retained.get(&key).cloned().unwrap_or_default();
        corrections.sent(&key.1, &payload);
        out.publish(key.1, true, payload);
    }
    while out.room()
        && let Some((topic, payload)) = queued.pop_front()
    {
        out.publish(topic, false, payload);
    }
}

/// The order retained topics wait in when they cannot all go at once (a connection's
/// republication, a restart's burst): status first, then info, then every board's
/// availability, then every board's state and the alerts, then the rest (the PGNs, the
/// session). A dashboard learns the node is up before it learns the boards, and a hall
/// screen has every clock back before the games' texts, which seldom changed meanwhile
/// (a restart at 5000 boards sends 5000 of each; docs/BENCHMARKS.md).
pub(super) fn order_key(topics: &Topics, topic: &str) -> (u8, String) {
    let rank = if topics.node_of_status_topic(topic).is_some() {
        0
    } else if topic == topics.info() || topic.ends_with("/info") {
        1
    } else if topic.ends_with("/availability") {
        2
    } else if topic.ends_with("/state") || topic.contains("/alert/") {
        3
    } else {
        4
    };
    (rank, topic.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_goes_status_info_availability_then_states_and_alerts_then_the_rest() {
        let topics = Topics::new(&crate::id::Id::parse("h").expect("id"));
        let mut keys: std::collections::BTreeSet<Keyed> = Default::default();
        for topic in [
            topics.pgn("b1"),
            topics.state("b2"),
            topics.session(),
            topics.availability("b2"),
            topics.alert("b1-clock-discrepancy"),
            topics.state("b1"),
            topics.info(),
            topics.node_status("n1"),
            topics.pgn("b2"),
            topics.availability("b1"),
        ] {
            keys.insert(order_key(&topics, &topic));
        }
        let order: Vec<String> = keys.into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            order,
            vec![
                topics.node_status("n1"),
                topics.info(),
                topics.availability("b1"),
                topics.availability("b2"),
                topics.alert("b1-clock-discrepancy"),
                topics.state("b1"),
                topics.state("b2"),
                topics.pgn("b1"),
                topics.pgn("b2"),
                topics.session(),
            ]
        );
    }
}
