//! How far the other nodes' clocks are from this node's (issue 23, item 4). A round's start
//! instant is absolute: a node whose clock is off starts its games off by as much, so a
//! difference over [`LIMIT`] is an alert. Sans-IO: it takes the other nodes' clock
//! readings (`node/<node>/clock`) with this node's clock at their receipt, and says which
//! alert to raise or clear; the coordinator publishes it.
//!
//! A reading arrives after some latency (the brokers, a bridge), so `their - ours` is the
//! peer's true offset minus that latency: never more than the offset. The largest value
//! over the last [`WINDOW`] readings is the one with the least latency, and the estimate:
//! a late message cannot make a peer look ahead, and makes it look behind only if every
//! reading of the window was late by over a second.
//!
//! One alert per node (`clock-skew-<node>`), written by that node alone, names every peer
//! out of bounds; each node raises its own, so the arbiters see which one differs from
//! all the others.

use std::collections::{BTreeMap, VecDeque};

use crate::alert::{AlertKind, Severity};
use crate::mqtt::payload::AlertPayload;
use crate::rules::Millis;

/// The most two nodes' clocks may differ.
pub const LIMIT: Millis = Millis(1000);
/// How many readings of a peer the estimate looks at (one a heartbeat, a second apart).
pub const WINDOW: usize = 5;
/// The most peers followed (a hostile publisher cannot grow this without bound).
const MAX_PEERS: usize = 256;

/// What the coordinator publishes after a reading.
#[derive(Debug, Clone, PartialEq)]
pub enum SkewChange {
    Raise(AlertPayload),
    /// Clear the alert with this id (its empty retained payload).
    Clear(String),
}

/// The other nodes' clock offsets as this node sees them.
#[derive(Debug)]
pub struct Skew {
    node: String,
    /// Peer → its last readings' `their - ours` (ms), oldest first.
    peers: BTreeMap<String, VecDeque<i64>>,
    /// The message of the alert standing now.
    standing: Option<String>,
}

impl Skew {
    pub fn new(node: &str) -> Skew {
        Skew {
            node: node.to_string(),
            peers: BTreeMap::new(),
            standing: None,
        }
    }

    /// This node's alert id.
    pub fn alert_id(&self) -> String {
        format!("{}-{}", AlertKind::ClockSkew.slug(), self.node)
    }

    /// `peer`'s clock read `their` when it sent, and this node's read `ours` at receipt.
    pub fn observe(
        &mut self,
        peer: &str,
        their: Millis,
        ours: Millis,
        now: Millis,
    ) -> Option<SkewChange> {
        if peer == self.node {
            return None;
        }
        if !self.peers.contains_key(peer) && self.peers.len() >= MAX_PEERS {
            return None;
        }
        let window = self.peers.entry(peer.to_string()).or_default();
        if window.len() >= WINDOW {
            window.pop_front();
        }
        // Saturating: `their` is another program's word, and may be any number.
        window.push_back(their.0.saturating_sub(ours.0));
        self.judge(now)
    }

    /// `peer` went offline, or started again: its readings no longer say anything.
    pub fn forget(&mut self, peer: &str, now: Millis) -> Option<SkewChange> {
        self.peers.remove(peer)?;
        self.judge(now)
    }

    /// Each peer's estimated offset (ms, positive: its clock is ahead), once its window is
    /// full.
    pub fn offsets(&self) -> BTreeMap<&str, i64> {
        self.peers
            .iter()
            .filter(|(_, w)| w.len() >= WINDOW)
            .filter_map(|(p, w)| w.iter().max().map(|m| (p.as_str(), *m)))
            .collect()
    }

    fn judge(&mut self, now: Millis) -> Option<SkewChange> {
        let peers: Vec<String> = self
            .offsets()
            .into_iter()
            .filter(|(_, off)| off.unsigned_abs() > LIMIT.0.unsigned_abs())
            .map(|(peer, _)| peer.to_string())
            .collect();
        let out: Vec<String> = self
            .offsets()
            .into_iter()
            .filter(|(_, off)| off.unsigned_abs() > LIMIT.0.unsigned_abs())
            .map(|(peer, off)| {
                let way = if off > 0 { "ahead of" } else { "behind" };
                let size = off.unsigned_abs();
                format!(
                    "the clock of node {peer} is {}.{} s {way} node {}'s",
                    size / 1000,
                    size % 1000 / 100,
                    self.node
                )
            })
            .collect();
        if out.is_empty() {
            return self
                .standing
                .take()
                .map(|_| SkewChange::Clear(self.alert_id()));
        }
        let message = format!(
            "{} (more than {} s): a round starts at one instant on every node, so their games would start that far apart; set the servers' clocks by NTP (timedatectl) and restart the node that is off",
            out.join("; "),
            LIMIT.0 / 1000
        );
        if self.standing.as_deref() == Some(message.as_str()) {
            return None;
        }
        self.standing = Some(message.clone());
        Some(SkewChange::Raise(AlertPayload {
            id: self.alert_id(),
            board: None,
            kind: AlertKind::ClockSkew,
            code: "clock_skew".into(),
            params: serde_json::Map::from_iter([
                ("node".to_string(), serde_json::json!(self.node)),
                ("peers".to_string(), serde_json::json!(peers)),
                ("limit_ms".to_string(), serde_json::json!(LIMIT.0)),
            ]),
            severity: Severity::Critical,
            message,
            since: now,
            error: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` readings of `peer`, `offset` ahead, each arriving after `latency[i]`.
    fn feed(s: &mut Skew, peer: &str, offset: i64, latencies: &[i64]) -> Vec<SkewChange> {
        let mut out = Vec::new();
        for (i, lat) in latencies.iter().enumerate() {
            let sent = 1_000_000 + 1000 * i as i64;
            let ours = Millis(sent + lat);
            if let Some(c) = s.observe(peer, Millis(sent + offset), ours, ours) {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn clocks_within_a_second_raise_nothing_even_with_a_slow_broker() {
        let mut s = Skew::new("a");
        // 0.8 s ahead, a few ms of latency, one reading held up 1.5 s by a bridge.
        let out = feed(&mut s, "b", 800, &[3, 5, 1500, 4, 2, 6, 3]);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(s.offsets().get("b"), Some(&798));
    }

    #[test]
    fn a_peer_ahead_by_more_than_a_second_is_named_with_both_nodes_and_the_difference() {
        let mut s = Skew::new("a");
        // Not before the window is full: one reading is no estimate.
        assert!(feed(&mut s, "b", 2500, &[3, 3, 3, 3]).is_empty());
        let out = feed(&mut s, "b", 2500, &[3]);
        let [SkewChange::Raise(alert)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert_eq!(alert.id, "clock-skew-a");
        assert_eq!(alert.kind, AlertKind::ClockSkew);
        assert_eq!(alert.board, None);
        assert!(
            alert
                .message
                .starts_with("the clock of node b is 2.4 s ahead of node a's"),
            "{}",
            alert.message
        );
        // The same again: nothing new to publish.
        assert!(feed(&mut s, "b", 2500, &[3, 3]).is_empty());
    }

    #[test]
    fn a_peer_behind_is_said_so_and_cleared_when_back_within_bounds() {
        let mut s = Skew::new("a");
        let out = feed(&mut s, "c", -3000, &[2, 2, 2, 2, 2]);
        let [SkewChange::Raise(alert)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert!(
            alert.message.contains("node c is 3.0 s behind node a's"),
            "{}",
            alert.message
        );
        // Its clock is set: the first good reading is the window's best, and clears it.
        let out = feed(&mut s, "c", 100, &[2]);
        assert_eq!(out, [SkewChange::Clear("clock-skew-a".into())]);
        assert!(feed(&mut s, "c", 100, &[2, 2]).is_empty());
    }

    #[test]
    fn any_number_a_peer_sends_is_taken_without_overflow() {
        let mut s = Skew::new("a");
        let changes: Vec<SkewChange> = [i64::MIN, i64::MAX, i64::MIN, i64::MIN, i64::MIN, 5]
            .into_iter()
            .filter_map(|at| s.observe("b", Millis(at), Millis(1_000), Millis(1_000)))
            .collect();
        let [SkewChange::Raise(alert)] = changes.as_slice() else {
            panic!("{changes:?}");
        };
        assert!(
            alert.message.contains("ahead of node a's"),
            "{}",
            alert.message
        );
    }

    #[test]
    fn a_peer_that_goes_away_takes_its_part_of_the_alert_with_it() {
        let mut s = Skew::new("a");
        feed(&mut s, "b", 2000, &[1, 1, 1, 1, 1]);
        let out = feed(&mut s, "c", -2000, &[1, 1, 1, 1, 1]);
        let [SkewChange::Raise(both)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert!(
            both.message.contains("node b is 1.9 s ahead")
                && both.message.contains("node c is 2.0 s behind"),
            "{}",
            both.message
        );
        let Some(SkewChange::Raise(one)) = s.forget("b", Millis(5)) else {
            panic!("c still stands");
        };
        assert!(!one.message.contains("node b"), "{}", one.message);
        assert_eq!(
            s.forget("c", Millis(6)),
            Some(SkewChange::Clear("clock-skew-a".into()))
        );
        assert_eq!(s.forget("c", Millis(7)), None);
        // Its own readings (an echo) are not a peer's.
        assert!(feed(&mut s, "a", 5000, &[1, 1, 1, 1, 1]).is_empty());
    }
}
