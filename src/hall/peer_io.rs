//! The coordinator's side of the hall's other nodes (issue 23): this node's own status,
//! the other nodes' statuses (claims), infos (their numbered boards), clocks (skew) and
//! board states (the hall-wide session and round summary). What to conclude is decided in
//! the sans-IO rooms (`nodes.rs`, `skew.rs`, `peers.rs`); this publishes it.

use super::*;

impl Hall {
    /// This node's retained status (`online`, its boards now) and info; after a reload the
    /// claims of other nodes are judged against the new boards.
    pub(super) fn publish_node(&mut self) {
        let node = self.settings.node.to_string();
        let status = NodeStatusPayload {
            node: node.clone(),
            state: NodeState::Online,
            boards: self.own_boards().into_iter().collect(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            boot: self.boot,
            defaults: Some(self.settings.defaults.as_value()),
            instance: None,
        };
        self.publisher
            .json_retained(self.topics.node_status(&node), &status);
        self.publish_info();
        let changes = self
            .nodes
            .reconcile(&self.own_boards(), self.timebase.now());
        self.publish_claims(changes);
    }

    /// Another node's status: the board ids both claim are alerts on this node (the other
    /// raises its own).
    pub(super) fn on_node_status(&mut self, node: &str, payload: &[u8]) {
        // An empty payload is a topic cleared by hand: no status, nothing to judge.
        if payload.is_empty() {
            return;
        }
        let status = match serde_json::from_slice::<NodeStatusPayload>(payload) {
            Ok(s) if s.node == node => s,
            Ok(_) | Err(_) => {
                tracing::warn!(
                    node = %crate::intake::command::log_safe(node),
                    "a node status that is not one (bad JSON, or another node's name inside); ignored"
                );
                return;
            }
        };
        // A node that stopped has no clock to compare; its next run's readings start over.
        if status.state == NodeState::Offline {
            let change = self.skew.forget(node, self.timebase.now());
            self.publish_skew(change);
        }
        let changes = self
            .nodes
            .observe(status, &self.own_boards(), self.timebase.now());
        self.publish_claims(changes);
    }

    /// This node's clock, for the other nodes to compare (not retained, not in the feed).
    pub(super) fn publish_clock(&self) {
        let node = self.settings.node.to_string();
        let reading = crate::mqtt::payload::NodeClockPayload {
            node: node.clone(),
            // Civil: what the nodes must agree on is the instant a round's `start` names,
            // which each maps through its own wall clock.
            at: self.timebase.civil(),
        };
        if let Ok(payload) = serde_json::to_vec(&reading) {
            self.publisher
                .beacon(self.topics.node_clock(&node), payload);
        }
    }

    /// Another node's clock reading, `received` by our clock.
    pub(super) fn on_node_clock(&mut self, node: &str, payload: &[u8], received: Millis) {
        let Ok(reading) = serde_json::from_slice::<crate::mqtt::payload::NodeClockPayload>(payload)
        else {
            return;
        };
        if reading.node != node {
            return;
        }
        // `received` is on game time; the reading is civil.
        let offset = self.steps.settled();
        let change = self
            .skew
            .observe(node, reading.at, received + offset, self.timebase.now());
        self.publish_skew(change);
    }

    pub(super) fn publish_skew(&self, change: Option<skew::SkewChange>) {
        match change {
            Some(skew::SkewChange::Raise(alert)) => {
                tracing::error!("{}", crate::intake::command::log_safe(&alert.message));
                self.publisher
                    .json_retained(self.topics.alert(&alert.id), &alert);
            }
            Some(skew::SkewChange::Clear(id)) => {
                tracing::info!(alert = %id, "resolved: the other nodes' clocks are within a second of ours");
                self.publisher.clear_alert(&self.topics, &id);
            }
            None => {}
        }
    }

    /// Whether every board of the hall has said where its game is: this node's, and every
    /// board the other nodes' statuses list (their states arrive just after the statuses).
    /// Until then no hall-wide conclusion is drawn: the first of many states to arrive is
    /// not the hall (one sealed board reporting first is not "all sealed").
    pub(super) fn hall_reported(&self) -> bool {
        all_among(self.boards.keys(), &self.session.boards) && self.peers_reported()
    }

    /// Whether every board the other nodes' statuses list has said where its game is.
    pub(super) fn peers_reported(&self) -> bool {
        all_among(self.nodes.listed_boards().iter(), &self.session.boards)
    }

    /// Another node's info: its boards join the `info` of this node's dashboard.
    pub(super) fn on_node_info(&mut self, node: &str, payload: &[u8]) {
        let Ok(info) = serde_json::from_slice::<NodeInfoPayload>(payload) else {
            return;
        };
        if self.peer_infos.observe(node, info) {
            self.publish_info();
        }
    }

    /// Another node's board state: its game's stage into the session, its result into the
    /// round's summary, so both are the whole hall's (`peers.rs`).
    pub(super) fn on_peer_state(&mut self, board: String, payload: &[u8]) {
        if self.settings.boards.iter().any(|b| *b.id == *board) {
            return;
        }
        let Ok(state) = serde_json::from_slice::<crate::mqtt::payload::StatePayload>(payload)
        else {
            return;
        };
        if state.board != board {
            return;
        }
        let peer = peers::read(&state);
        if let Some(r) = &mut self.round {
            if state.round == Some(r.number) {
                r.peer_boards.insert(board.clone());
            } else {
                r.peer_boards.remove(&board);
            }
        }
        let round = peer.note.round;
        self.on_stage(board.clone(), peer.note);
        if let Some((white, black, result)) = peer.result {
            self.on_finished(board, round, white, black, result);
        }
    }

    pub(super) fn publish_claims(&self, changes: Vec<nodes::ClaimChange>) {
        for change in changes {
            match change {
                nodes::ClaimChange::Raise(alert) => {
                    tracing::error!(
                        board = alert.board.as_deref().unwrap_or(""),
                        "{}",
                        crate::intake::command::log_safe(&alert.message)
                    );
                    self.publisher
                        .json_retained(self.topics.alert(&alert.id), &alert);
                }
                nodes::ClaimChange::Clear(id) => {
                    tracing::info!(alert = %id, "resolved: the board is claimed by this node alone");
                    self.publisher.clear_alert(&self.topics, &id);
                }
            }
        }
    }
}

/// Whether every one of `wanted` (in ascending order, as a `BTreeMap`'s or `BTreeSet`'s
/// keys come) is a key of `have`: one walk through both in step. Why: the session is
/// published up to four times a second, and a search of `have` per board (5000 boards,
/// a dozen string comparisons each) was 40 % of building it (docs/BENCHMARKS.md).
fn all_among<'a, V>(
    mut wanted: impl Iterator<Item = &'a String>,
    have: &BTreeMap<String, V>,
) -> bool {
    let mut have = have.keys();
    wanted.all(|w| {
        // `have` is sorted too: skip what comes before `w`; the next one is `w` or it is
        // missing.
        have.by_ref().find(|h| *h >= w) == Some(w)
    })
}

#[cfg(test)]
mod all_among_tests {
    use super::*;

    fn have(keys: &[&str]) -> BTreeMap<String, ()> {
        keys.iter().map(|k| (k.to_string(), ())).collect()
    }

    fn wanted(keys: &[&str]) -> std::collections::BTreeSet<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn every_wanted_key_must_be_had() {
        let h = have(&["b01", "b02", "b03", "b10", "p1"]);
        for (w, expected) in [
            (&[][..], true),
            (&["b01"][..], true),
            (&["b03", "p1"][..], true),
            (&["b01", "b02", "b03", "b10", "p1"][..], true),
            (&["b00"][..], false),
            (&["b04"][..], false),
            (&["b01", "b04"][..], false),
            (&["b10", "z"][..], false),
            (&["p1", "p2"][..], false),
            (&["a", "b01"][..], false),
        ] {
            assert_eq!(all_among(wanted(w).iter(), &h), expected, "{w:?}");
        }
        assert!(!all_among(wanted(&["b01"]).iter(), &have(&[])));
        assert!(all_among(wanted(&[]).iter(), &have(&[])));
    }
}
