//! How many publications the connection task hands to rumqttc at once, and what waits
//! meanwhile (`client.rs` holds the task; this is its flow control).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rumqttc::{AsyncClient, QoS};

/// A retained topic as the connection task keeps it: in publishing order (`order_key`).
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
const WINDOW: usize = 256;

/// rumqttc's client with the count of publications it has not seen acknowledged.
pub(super) struct Window {
    client: AsyncClient,
    unacked: usize,
}

impl Window {
    pub(super) fn new(client: AsyncClient) -> Window {
        Window { client, unacked: 0 }
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
            .client
            .try_publish(topic, QoS::AtLeastOnce, retain, payload)
            .is_ok()
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
pub(super) fn flush(
    out: &mut Window,
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
