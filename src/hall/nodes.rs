//! The other nodes of the hall (issue 23), as their retained `node/<node>/status` tell
//! them, and the board ids this node and another online one both claim. Sans-IO: it
//! takes statuses and this node's boards and says which `board_claimed_twice` alerts to
//! raise and clear; the coordinator publishes them.
//!
//! Each node raises its own alert on a topic only it writes (`<board>-claimed-twice-<node>`),
//! never a shared one: two writers of one retained topic are last-writer-wins on a bridge
//! (../shared/ANCHORS.md). Neither node drops its game: which of the two configurations is
//! wrong is the arbiter's call, and a dropped game cannot be taken back.

use std::collections::{BTreeMap, BTreeSet};

use crate::alert::{AlertKind, Severity};
use crate::mqtt::payload::{AlertPayload, NodeState, NodeStatusPayload};
use crate::rules::Millis;

/// What the coordinator publishes after a change.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimChange {
    Raise(AlertPayload),
    /// Clear the alert with this id (its empty retained payload).
    Clear(String),
}

/// The other nodes and the claims this node shares with them.
#[derive(Debug)]
pub struct Nodes {
    node: String,
    /// Board id → the other online nodes claiming it too, as last alerted.
    standing: BTreeMap<String, BTreeSet<String>>,
    /// The other nodes' newest status (by `boot`, then offline over online).
    peers: BTreeMap<String, NodeStatusPayload>,
    /// Every board their statuses list, kept with them (a status changes seldom; the
    /// hall's conclusions ask at every result).
    listed: BTreeSet<String>,
}

impl Nodes {
    pub fn new(node: &str) -> Nodes {
        Nodes {
            node: node.to_string(),
            standing: BTreeMap::new(),
            peers: BTreeMap::new(),
            listed: BTreeSet::new(),
        }
    }

    /// This node's alert id for `board`.
    pub fn alert_id(&self, board: &str) -> String {
        format!(
            "{board}-{}-{}",
            AlertKind::BoardClaimedTwice.slug(),
            self.node
        )
    }

    /// Whether `id` is one of this node's claim alerts that does not stand now (a retained
    /// copy from an earlier run, to be cleared).
    pub fn is_stale_own(&self, alert: &AlertPayload) -> bool {
        alert.kind == AlertKind::BoardClaimedTwice
            && alert
                .board
                .as_deref()
                .is_some_and(|b| alert.id == self.alert_id(b) && !self.standing.contains_key(b))
    }

    /// Another node's status. A status of an older run than the one known is ignored (a
    /// last will can arrive after the next run's birth: MQTT orders per topic only, and a
    /// bridge may replay). Returns the alerts to raise and clear for `ours`, this node's
    /// boards now.
    pub fn observe(
        &mut self,
        status: NodeStatusPayload,
        ours: &BTreeSet<String>,
        now: Millis,
    ) -> Vec<ClaimChange> {
        if status.node == self.node {
            return Vec::new();
        }
        let newer = self
            .peers
            .get(&status.node)
            .is_none_or(|known| status.supersedes(known));
        if newer {
            self.peers.insert(status.node.clone(), status);
            self.listed = self
                .peers
                .values()
                .flat_map(|p| p.boards.iter().cloned())
                .collect();
        }
        self.reconcile(ours, now)
    }

    /// Whether another node of the hall is online: then a hall command is this node's
    /// part of the hall's, and a node with nothing to do for it answers `ok` for no board.
    pub fn any_online(&self) -> bool {
        self.peers.values().any(|p| p.state == NodeState::Online)
    }

    /// The boards every other node lists, online or not (a dead node's boards keep their
    /// last state, which the hall's conclusions still count).
    pub fn listed_boards(&self) -> &BTreeSet<String> {
        &self.listed
    }

    /// The boards of the other online nodes, as their retained statuses list them: with
    /// this node's own, the registry a hall command's boards are checked against. Every
    /// node reads the same statuses, so every node decides the same way.
    pub fn online_boards(&self) -> BTreeSet<String> {
        self.peers
            .values()
            .filter(|p| p.state == NodeState::Online)
            .flat_map(|p| p.boards.iter().cloned())
            .collect()
    }

    /// Whether another online node lists `board` among its own: a command for that board
    /// is that node's to apply and to answer, not this one's (`board/<b>/response` has one
    /// writer, the board's node).
    pub fn peer_serves(&self, board: &str) -> bool {
        self.owner_of(board).is_some_and(|(_, online)| online)
    }

    /// The other node whose status lists `board`, and whether it is online: an online one
    /// first (a board moved to a node that is up is that node's now), else the first by
    /// name of those that are down.
    pub fn owner_of(&self, board: &str) -> Option<(&str, bool)> {
        let mut listing = self
            .peers
            .iter()
            .filter(|(_, p)| p.boards.iter().any(|b| b == board));
        let first = listing.clone().next();
        listing
            .find(|(_, p)| p.state == NodeState::Online)
            .or(first)
            .map(|(name, p)| (name.as_str(), p.state == NodeState::Online))
    }

    /// Whether this node is the one that answers a board command no online node serves
    /// (`unknown_board`): the first online node by name. Every node reads the same statuses,
    /// so exactly one answers, where each answering would say the same refusal N times.
    pub fn answers_for_unserved(&self) -> bool {
        self.peers
            .iter()
            .filter(|(_, p)| p.state == NodeState::Online)
            .all(|(name, _)| self.node < *name)
    }

    /// The online nodes whose `[defaults]` differ from `ours` (as their statuses say),
    /// with theirs in words; a node too old to say them as data is not counted.
    pub fn defaults_differ(&self, ours: &serde_json::Value) -> Vec<(String, String)> {
        self.peers
            .iter()
            .filter(|(_, p)| p.state == NodeState::Online)
            .filter_map(|(name, p)| {
                let theirs = p.defaults.as_ref().filter(|d| d.is_object())?;
                (theirs != ours).then(|| (name.clone(), crate::config::defaults_words(theirs)))
            })
            .collect()
    }

    /// The other nodes online now, by name.
    pub fn online_peers(&self) -> Vec<String> {
        self.peers
            .iter()
            .filter(|(_, p)| p.state == NodeState::Online)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// This node's boards changed (a reload): claims follow.
    pub fn reconcile(&mut self, ours: &BTreeSet<String>, now: Millis) -> Vec<ClaimChange> {
        let mut claims: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for peer in self.peers.values() {
            if peer.state != NodeState::Online {
                continue;
            }
            for b in peer.boards.iter().filter(|b| ours.contains(*b)) {
                claims
                    .entry(b.clone())
                    .or_default()
                    .insert(peer.node.clone());
            }
        }
        let mut out = Vec::new();
        let gone: Vec<String> = self
            .standing
            .keys()
            .filter(|b| !claims.contains_key(*b))
            .cloned()
            .collect();
        for b in gone {
            self.standing.remove(&b);
            out.push(ClaimChange::Clear(self.alert_id(&b)));
        }
        for (board, others) in claims {
            if self.standing.get(&board) == Some(&others) {
                continue;
            }
            let names: Vec<&str> = others.iter().map(String::as_str).collect();
            let message = format!(
                "board {board} is claimed by node {} and by node {}: a board id belongs to one hall server; both keep their game, fix the [[boards]] of one and restart it",
                self.node,
                names.join(" and node ")
            );
            out.push(ClaimChange::Raise(AlertPayload {
                id: self.alert_id(&board),
                board: Some(board.clone()),
                kind: AlertKind::BoardClaimedTwice,
                code: "board_claimed_twice".into(),
                params: serde_json::Map::from_iter([
                    ("board".to_string(), serde_json::json!(board)),
                    ("node".to_string(), serde_json::json!(self.node)),
                    ("others".to_string(), serde_json::json!(names)),
                ]),
                severity: Severity::Critical,
                message,
                since: now,
                error: None,
            }));
            self.standing.insert(board, others);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(node: &str, state: NodeState, boards: &[&str], boot: i64) -> NodeStatusPayload {
        NodeStatusPayload {
            node: node.into(),
            state,
            boards: boards.iter().map(|b| b.to_string()).collect(),
            version: "0".into(),
            boot: Millis(boot),
            defaults: None,
            instance: None,
        }
    }

    fn ours(boards: &[&str]) -> BTreeSet<String> {
        boards.iter().map(|b| b.to_string()).collect()
    }

    /// A dashboard's command for another node's board goes to the node that lists it:
    /// the online one when a board moved, else the one that is down (the command is then
    /// refused as such, not as an unknown board).
    #[test]
    fn a_board_s_owner_is_the_node_that_lists_it_an_online_one_first() {
        let mut n = Nodes::new("a");
        let t = Millis(0);
        assert_eq!(n.owner_of("b3"), None);
        let _ = n.observe(status("c", NodeState::Offline, &["b3"], 1), &ours(&[]), t);
        assert_eq!(n.owner_of("b3"), Some(("c", false)));
        let _ = n.observe(status("d", NodeState::Offline, &["b3"], 1), &ours(&[]), t);
        assert_eq!(n.owner_of("b3"), Some(("c", false)), "the first by name");
        let _ = n.observe(status("d", NodeState::Online, &["b3"], 2), &ours(&[]), t);
        assert_eq!(n.owner_of("b3"), Some(("d", true)));
        let _ = n.observe(status("b", NodeState::Online, &["b4"], 1), &ours(&[]), t);
        assert_eq!(n.owner_of("b3"), Some(("d", true)));
        assert_eq!(n.owner_of("b4"), Some(("b", true)));
        assert_eq!(n.owner_of("b5"), None);
    }

    #[test]
    fn a_board_command_is_the_serving_nodes_and_the_first_node_answers_for_nobody() {
        let mine = ours(&["b1"]);
        let mut a = Nodes::new("a");
        let mut c = Nodes::new("c");
        assert!(
            a.answers_for_unserved() && c.answers_for_unserved(),
            "alone"
        );
        a.observe(status("c", NodeState::Online, &["b3"], 1), &mine, Millis(1));
        c.observe(
            status("a", NodeState::Online, &["b1"], 1),
            &ours(&["b3"]),
            Millis(1),
        );
        assert!(a.peer_serves("b3") && !a.peer_serves("b1") && !a.peer_serves("b9"));
        assert!(c.peer_serves("b1") && !c.peer_serves("b3"));
        assert!(a.answers_for_unserved(), "a is first by name");
        assert!(!c.answers_for_unserved(), "c leaves it to a");
        // An offline node serves nothing: its boards become nobody's, and a is gone for c.
        a.observe(
            status("c", NodeState::Offline, &["b3"], 1),
            &mine,
            Millis(2),
        );
        assert!(!a.peer_serves("b3"));
        c.observe(
            status("a", NodeState::Offline, &["b1"], 1),
            &ours(&["b3"]),
            Millis(2),
        );
        assert!(c.answers_for_unserved() && !c.peer_serves("b1"));
    }

    #[test]
    fn a_dead_nodes_boards_stay_listed_for_the_halls_conclusions_but_not_in_the_registry() {
        let mut n = Nodes::new("a");
        let _ = n.observe(
            status("b", NodeState::Online, &["b2"], 1),
            &ours(&["b1"]),
            Millis(0),
        );
        let _ = n.observe(
            status("c", NodeState::Offline, &["b3"], 1),
            &ours(&["b1"]),
            Millis(0),
        );
        assert_eq!(n.listed_boards(), &ours(&["b2", "b3"]));
        assert_eq!(n.online_boards(), ours(&["b2"]));
    }

    #[test]
    fn a_board_claimed_by_another_online_node_is_raised_once_and_cleared_when_it_goes() {
        let mut n = Nodes::new("a");
        let mine = ours(&["b1", "b2"]);
        let out = n.observe(
            status("b", NodeState::Online, &["b2", "b3"], 10),
            &mine,
            Millis(5),
        );
        let [ClaimChange::Raise(alert)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert_eq!(alert.id, "b2-claimed-twice-a");
        assert_eq!(alert.board.as_deref(), Some("b2"));
        assert_eq!(alert.kind, AlertKind::BoardClaimedTwice);
        assert!(alert.message.contains("node a") && alert.message.contains("node b"));
        // The same status again (a reconnection): nothing new.
        let again = n.observe(
            status("b", NodeState::Online, &["b2", "b3"], 10),
            &mine,
            Millis(6),
        );
        assert!(again.is_empty(), "{again:?}");
        // Its last will: cleared.
        let out = n.observe(
            status("b", NodeState::Offline, &["b2", "b3"], 10),
            &mine,
            Millis(7),
        );
        assert_eq!(out, [ClaimChange::Clear("b2-claimed-twice-a".into())]);
    }

    #[test]
    fn a_late_last_will_of_an_older_run_does_not_hide_the_newer_run() {
        let mut n = Nodes::new("a");
        let mine = ours(&["b1"]);
        assert_eq!(
            n.observe(
                status("b", NodeState::Online, &["b1"], 20),
                &mine,
                Millis(1)
            )
            .len(),
            1
        );
        let out = n.observe(
            status("b", NodeState::Offline, &["b1"], 10),
            &mine,
            Millis(2),
        );
        assert!(out.is_empty(), "{out:?}");
        // At one boot, offline is the last word (online does not come back after it).
        assert_eq!(
            n.observe(
                status("b", NodeState::Offline, &["b1"], 20),
                &mine,
                Millis(3)
            )
            .len(),
            1
        );
        assert!(
            n.observe(
                status("b", NodeState::Online, &["b1"], 20),
                &mine,
                Millis(4)
            )
            .is_empty()
        );
    }

    #[test]
    fn a_node_that_stops_claiming_or_a_board_this_node_lets_go_of_clears_the_alert() {
        let mut n = Nodes::new("a");
        let mine = ours(&["b1"]);
        n.observe(status("b", NodeState::Online, &["b1"], 1), &mine, Millis(1));
        let out = n.observe(status("b", NodeState::Online, &["b9"], 1), &mine, Millis(2));
        assert_eq!(out, [ClaimChange::Clear("b1-claimed-twice-a".into())]);
        n.observe(status("b", NodeState::Online, &["b1"], 1), &mine, Millis(3));
        let out = n.reconcile(&ours(&["b2"]), Millis(4));
        assert_eq!(out, [ClaimChange::Clear("b1-claimed-twice-a".into())]);
        // Its own status is never a claim.
        assert!(
            n.observe(
                status("a", NodeState::Online, &["b2"], 1),
                &ours(&["b2"]),
                Millis(5)
            )
            .is_empty()
        );
    }

    #[test]
    fn the_registry_is_the_online_peers_boards() {
        let mut n = Nodes::new("a");
        let mine = ours(&["b1"]);
        assert!(!n.any_online());
        n.observe(status("b", NodeState::Online, &["b2"], 1), &mine, Millis(1));
        n.observe(
            status("c", NodeState::Online, &["b3", "b4"], 1),
            &mine,
            Millis(1),
        );
        assert!(n.any_online());
        assert_eq!(n.online_boards(), ours(&["b2", "b3", "b4"]));
        // A node that died takes its boards out of the registry.
        n.observe(
            status("c", NodeState::Offline, &["b3", "b4"], 1),
            &mine,
            Millis(2),
        );
        assert_eq!(n.online_boards(), ours(&["b2"]));
        n.observe(
            status("b", NodeState::Offline, &["b2"], 1),
            &mine,
            Millis(3),
        );
        assert!(!n.any_online());
    }

    #[test]
    fn a_third_claimant_is_news_and_a_stale_own_alert_is_recognised() {
        let mut n = Nodes::new("a");
        let mine = ours(&["b1"]);
        n.observe(status("b", NodeState::Online, &["b1"], 1), &mine, Millis(1));
        let out = n.observe(status("c", NodeState::Online, &["b1"], 1), &mine, Millis(2));
        let [ClaimChange::Raise(alert)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert!(
            alert.message.contains("node b and node c"),
            "{}",
            alert.message
        );
        let mut old = alert.clone();
        assert!(!n.is_stale_own(&old), "it stands");
        old.board = Some("b7".into());
        old.id = n.alert_id("b7");
        assert!(n.is_stale_own(&old));
        old.id = "b7-claimed-twice-z".into();
        assert!(!n.is_stale_own(&old), "another node's");
    }
}
