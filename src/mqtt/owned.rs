//! The retained topics this node alone writes, and the correction of a copy of one that a
//! broker delivers with another payload (issue 23, item 4: a bridge cut heals to the
//! nodes' truth). Sans-IO: the connection's session (`session`) asks and publishes.
//!
//! Why: after a bridge cut, brokers hold copies of this node's topics from before it. A
//! two-way Mosquitto bridge sends the central broker's retained copies back to this node's
//! broker at every reconnection (mosquitto#3002), and another node's broker can push its
//! own stale copy at its next reconnection: an alert cleared during the cut comes back
//! raised on the central broker (a clear is a retained payload of the writer's,
//! `payload::ClearedAlert`, so it travels, but an echo can overtake it), and a board's
//! state from before the cut
//! overwrites the newer one on this node's own broker, ready to be pushed again at the
//! next reconnection. The one writer of a topic is the one that can tell: it sees the stale
//! copy arrive (its broker forwards it as a live message) and publishes its own payload
//! again, which the healed bridge carries everywhere. Last-writer-wins then ends on the
//! writer.
//!
//! Only topics with one writer are corrected: two writers correcting each other would
//! never stop. A board that an online peer also lists (claimed twice, an alert of its own)
//! has two writers for a while, and the hall-wide topics (`info`, `session`, hall-wide
//! alerts) have one per node; those are left alone. Corrections of one topic are at least
//! [`GAP`] apart, so even a mistake costs one message a second.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::Duration;

use std::time::Instant;

use super::foreign::Foreign;
use super::payload::Topics;

/// The least time between two corrections of one topic.
pub const GAP: Duration = Duration::from_secs(1);

/// Whether `topic` is one this node alone writes: its own status, info, session and hall
/// screens' announcement, the state,
/// availability and PGN of a board of its that no online peer lists, and that board's
/// alerts (`<board>-<kind>`), or its own claim alert (`<board>-claimed-twice-<node>`).
pub fn single_writer(topics: &Topics, node: &str, foreign: &Foreign, topic: &str) -> bool {
    if topic == topics.node_status(node)
        || topic == topics.node_info(node)
        || topic == topics.node_announce(node)
        || topic == topics.node_session(node)
    {
        return true;
    }
    if let Some((board, _)) = topics.board_topic(topic) {
        return foreign.is_own(board) && !foreign.claimed_by_peer(board);
    }
    let Some(id) = topic.strip_prefix(&topics.alert("")) else {
        return false;
    };
    if id.ends_with(&format!("-claimed-twice-{node}")) || id == format!("clock-skew-{node}") {
        return true;
    }
    foreign
        .own()
        .any(|board| crate::alert::is_board_alert_of(id, board) && !foreign.claimed_by_peer(board))
}

/// How many of a topic's publications are remembered until their echo comes back.
const IN_FLIGHT: usize = 8;

/// When to republish this node's topics whose copies came back different.
#[derive(Debug, Default)]
pub struct Corrections {
    /// The last correction of each topic.
    last: HashMap<String, Instant>,
    /// Topics to correct once their gap has passed.
    due: BTreeMap<String, Instant>,
    /// What this node published on each topic whose echo has not come back yet (hashes,
    /// oldest first): a quick second publication overtakes the echo of the first, which
    /// is no stale copy.
    in_flight: HashMap<String, VecDeque<u64>>,
}

fn digest(payload: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    payload.hash(&mut h);
    h.finish()
}

impl Corrections {
    /// This node published `payload` on `topic`.
    pub fn sent(&mut self, topic: &str, payload: &[u8]) {
        let q = self.in_flight.entry(topic.to_string()).or_default();
        if q.len() >= IN_FLIGHT {
            q.pop_front();
        }
        q.push_back(digest(payload));
    }

    /// A new connection: the echoes of the last one will not come.
    pub fn reconnected(&mut self) {
        self.in_flight.clear();
    }

    /// Whether a copy of `topic` with `payload` is the echo of one of this node's own
    /// publications still in flight (then it and those before it have come back).
    pub fn echo(&mut self, topic: &str, payload: &[u8]) -> bool {
        let Some(q) = self.in_flight.get_mut(topic) else {
            return false;
        };
        let d = digest(payload);
        let Some(at) = q.iter().position(|x| *x == d) else {
            return false;
        };
        q.drain(..=at);
        if q.is_empty() {
            self.in_flight.remove(topic);
        }
        true
    }

    /// A copy of `topic` with another payload than this node's arrived at `now`: whether
    /// to republish it now (else it is due when the gap has passed).
    pub fn differs(&mut self, topic: &str, now: Instant) -> bool {
        match self.last.get(topic) {
            Some(last) if now < *last + GAP => {
                self.due.insert(topic.to_string(), *last + GAP);
                false
            }
            _ => {
                self.last.insert(topic.to_string(), now);
                self.due.remove(topic);
                true
            }
        }
    }

    /// Whether any correction waits.
    pub fn waiting(&self) -> bool {
        !self.due.is_empty()
    }

    /// The topics whose correction is due at `now` (each counts as corrected now).
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        let ready: Vec<String> = self
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(t, _)| t.clone())
            .collect();
        for t in &ready {
            self.due.remove(t);
            self.last.insert(t.clone(), now);
        }
        // Bounded by the topics this node writes: old entries are of no use after a gap.
        if self.last.len() > 4 * 5000 {
            self.last.retain(|_, at| now < *at + GAP);
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mqtt::payload::{NodeState, NodeStatusPayload};
    use crate::rules::Millis;

    fn foreign() -> Foreign {
        let mut f = Foreign::new("n1", ["b1".to_string(), "b2".to_string()]);
        let peer = NodeStatusPayload {
            node: "n2".into(),
            state: NodeState::Online,
            boards: vec!["b2".into(), "b3".into()],
            version: "0".into(),
            boot: Millis(1),
            defaults: None,
            instance: None,
        };
        let _ = f.peer_status(peer);
        f
    }

    #[test]
    fn only_topics_this_node_alone_writes_are_its_own() {
        let t = Topics::new("h");
        let f = foreign();
        let own = |topic: &str| single_writer(&t, "n1", &f, topic);
        assert!(own("hallclock/h/node/n1/status"));
        assert!(own("hallclock/h/node/n1/info"));
        assert!(!own("hallclock/h/node/n2/status"), "a peer's");
        assert!(own("hallclock/h/board/b1/state"));
        assert!(own("hallclock/h/board/b1/pgn"));
        assert!(own("hallclock/h/alert/b1-low-battery"));
        // b2 is claimed by n2 too: two writers, no correction, except this node's claim.
        assert!(!own("hallclock/h/board/b2/state"));
        assert!(!own("hallclock/h/alert/b2-offline"));
        assert!(own("hallclock/h/alert/b2-claimed-twice-n1"));
        assert!(!own("hallclock/h/alert/b2-claimed-twice-n2"));
        // Another node's board, the hall-wide topics and alerts: not this node's alone.
        assert!(!own("hallclock/h/board/b3/state"));
        assert!(!own("hallclock/h/info"));
        assert!(!own("hallclock/h/session"));
        assert!(!own("hallclock/h/alert/auth-failures"));
        assert!(own("hallclock/h/alert/clock-skew-n1"));
        assert!(!own("hallclock/h/alert/clock-skew-n2"));
        assert!(!own("hallclock/h/alert/b1"), "no kind after the board");
        assert!(
            !own("hallclock/h/alert/b10-offline"),
            "another board's prefix"
        );
    }

    #[test]
    fn the_echo_of_an_overtaken_publication_is_no_stale_copy() {
        let mut c = Corrections::default();
        c.sent("a", b"v1");
        c.sent("a", b"v2");
        assert!(c.echo("a", b"v1"), "our own, overtaken by v2");
        assert!(c.echo("a", b"v2"));
        // Both came back: the same v1 again is a stale copy (a bridge's echo after a cut).
        assert!(!c.echo("a", b"v1"));
        assert!(!c.echo("b", b"v1"), "never published there");
        c.sent("a", b"v3");
        c.reconnected();
        assert!(!c.echo("a", b"v3"), "the connection it went out on is gone");
    }

    #[test]
    fn a_topic_is_corrected_at_once_then_at_most_once_a_gap() {
        let mut c = Corrections::default();
        let t0 = Instant::now();
        assert!(c.differs("a", t0));
        assert!(!c.waiting());
        // Within the gap: due at its end, not now.
        assert!(!c.differs("a", t0 + Duration::from_millis(300)));
        assert!(c.waiting());
        assert!(c.due(t0 + Duration::from_millis(900)).is_empty());
        assert_eq!(c.due(t0 + GAP), ["a"]);
        assert!(!c.waiting());
        // Another topic is not held back by the first.
        assert!(c.differs("b", t0 + GAP));
        // After the gap: at once again.
        assert!(c.differs("a", t0 + GAP * 3));
    }
}
