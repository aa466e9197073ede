//! The other nodes' boards, for this node's dashboard (issue 23: any node's dashboard and
//! `/public` show the whole hall). Sans-IO: the connection task hands it what the broker
//! delivers on the other nodes' retained topics (`node/+/status`, `board/+/state`,
//! `board/+/availability`, `board/+/pgn`) and their boards' events (`board/+/event`), and
//! it says what goes into the local feed, with the same topic and bytes. Nothing here is
//! published to MQTT: every retained topic has one writer, the node owning the board.
//!
//! A peer whose status says `offline` (its last will, or a clean stop) shows its boards
//! offline: a retained `availability` `offline` for each board its status lists goes into
//! the local feed only, and its retained `online` (still on the broker: the dead node cannot
//! clear it) is read as `offline` until the node's next run says `online`. Its last state
//! stays as it was: the game as last known, nothing invented.
//!
//! A board is shown only while some node's status lists it (the statuses are the hall's
//! registry): the texts of a board no status lists wait here until one does, and a board
//! its node took out of its `[[boards]]` leaves the feed, though its copies stay on the
//! broker with nobody to write them.
//!
//! Bounded: a broken or hostile peer can make this node hold at most [`MAX_BOARDS`] foreign
//! boards shown and as many waiting for a list, [`MAX_PEERS`] peers and payloads of
//! [`MAX_PAYLOAD`] bytes (the newest payload per topic, so at most 3 per board); what is
//! beyond is dropped and logged.

use std::collections::{BTreeMap, BTreeSet};

use super::payload::{AlertPayload, BoardTopic, NodeState, NodeStatusPayload};

/// The most boards of other nodes shown: the hall's design size (5000 boards), whoever
/// owns them.
pub const MAX_BOARDS: usize = 5000;
/// The most other nodes remembered.
pub const MAX_PEERS: usize = 256;
/// The most alerts of other nodes shown (a board has a handful at most).
pub const MAX_ALERTS: usize = 2 * MAX_BOARDS;
/// The largest foreign payload taken (a board's state is ~1 KB, a long game's PGN ~20 KB).
pub const MAX_PAYLOAD: usize = 64 * 1024;

/// Where another node's board texts go besides the dashboard's feed: the broadcast
/// (`broadcast::FeedWriter`), so that this node's `/broadcast/…` and lichess push cover the
/// whole hall. Handed only what [`Foreign::board_message`] let through (bounded, not this
/// node's own boards), with the instant it arrived on the hall's clock.
pub trait Copies: Send + Sync {
    fn pgn(&self, board: &str, payload: &[u8], now: crate::rules::Millis);
}

/// Something for the local feed: retained, as `topic` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror {
    pub board: String,
    pub kind: BoardTopic,
    pub payload: Vec<u8>,
}

/// Why a message was not mirrored (for a log line, once in a while).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    TooManyBoards,
    TooManyPeers,
    TooManyAlerts,
    TooLarge,
}

/// The other nodes' boards this node mirrors.
#[derive(Debug)]
pub struct Foreign {
    node: String,
    own: BTreeSet<String>,
    peers: BTreeMap<String, NodeStatusPayload>,
    boards: BTreeSet<String>,
    /// The other nodes' alert ids shown now.
    alerts: BTreeSet<String>,
    /// Every board another node's status lists (online or not): the only boards shown.
    listed: BTreeSet<String>,
    /// Boards no status lists, with their newest retained texts: shown once a status
    /// lists the board (retained copies come in no set order: a board's state may come
    /// before its node's status). A board that only a stale copy names (taken out of
    /// every node's `[[boards]]`, its topics left on the broker with nobody to write
    /// them) is never shown: nothing of it is invented.
    unlisted: BTreeMap<String, Vec<(BoardTopic, Vec<u8>)>>,
}

impl Foreign {
    /// `node` is this node, `own` its boards.
    pub fn new(node: &str, own: impl IntoIterator<Item = String>) -> Foreign {
        Foreign {
            node: node.to_string(),
            own: own.into_iter().collect(),
            peers: BTreeMap::new(),
            boards: BTreeSet::new(),
            alerts: BTreeSet::new(),
            listed: BTreeSet::new(),
            unlisted: BTreeMap::new(),
        }
    }

    /// This node's boards changed (a reload): a board now ours is no longer mirrored.
    pub fn set_own(&mut self, own: impl IntoIterator<Item = String>) {
        self.own = own.into_iter().collect();
        let own = &self.own;
        self.boards.retain(|b| !own.contains(b));
        // A board's texts held while it was another's are not ours to show later.
        self.unlisted.retain(|b, _| !own.contains(b));
    }

    /// Whether `board` is this node's.
    pub fn is_own(&self, board: &str) -> bool {
        self.own.contains(board)
    }

    /// This node's boards.
    pub fn own(&self) -> impl Iterator<Item = &str> {
        self.own.iter().map(String::as_str)
    }

    /// This node's boards that `peer`, online, lists too (what its status changes can
    /// free). Walks that peer's list once: cheap for a status of 1000 boards.
    pub fn shared_with(&self, peer: &str) -> Vec<String> {
        self.peers
            .get(peer)
            .filter(|p| p.state == NodeState::Online)
            .map(|p| {
                p.boards
                    .iter()
                    .filter(|b| self.own.contains(b.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether another node is online now.
    pub fn has_online_peer(&self) -> bool {
        self.peers.values().any(|p| p.state == NodeState::Online)
    }

    /// Whether an online peer lists `board` too (a board claimed twice: two writers).
    pub fn claimed_by_peer(&self, board: &str) -> bool {
        self.peers
            .values()
            .any(|p| p.state == NodeState::Online && p.boards.iter().any(|b| b == board))
    }

    /// Whether the node that lists `board` is offline (and no online node lists it).
    fn owner_offline(&self, board: &str) -> bool {
        let mut listed = self
            .peers
            .values()
            .filter(|p| p.boards.iter().any(|b| b == board))
            .peekable();
        listed.peek().is_some() && listed.all(|p| p.state == NodeState::Offline)
    }

    /// Room for `board`: already mirrored, or under the cap.
    fn admit(&mut self, board: &str) -> Result<(), Dropped> {
        if self.boards.contains(board) {
            return Ok(());
        }
        if self.boards.len() >= MAX_BOARDS {
            return Err(Dropped::TooManyBoards);
        }
        self.boards.insert(board.to_string());
        Ok(())
    }

    /// Keeps the newest `kind` text of a board no status lists yet, under the same cap as
    /// the boards shown.
    fn hold(&mut self, board: &str, kind: BoardTopic, payload: &[u8]) -> Result<(), Dropped> {
        if !self.unlisted.contains_key(board) && self.unlisted.len() >= MAX_BOARDS {
            return Err(Dropped::TooManyBoards);
        }
        let texts = self.unlisted.entry(board.to_string()).or_default();
        texts.retain(|(k, _)| *k != kind);
        texts.push((kind, payload.to_vec()));
        Ok(())
    }

    /// A message on another node's retained board topic: what goes into the local feed.
    /// This node's own boards (echoes from the broker) give nothing.
    pub fn board_message(
        &mut self,
        board: &str,
        kind: BoardTopic,
        payload: &[u8],
    ) -> Result<Option<Mirror>, Dropped> {
        if self.is_own(board) {
            return Ok(None);
        }
        if payload.len() > MAX_PAYLOAD {
            return Err(Dropped::TooLarge);
        }
        // A cleared topic of a board never shown adds nothing.
        if payload.is_empty() && !self.boards.contains(board) {
            if let Some(texts) = self.unlisted.get_mut(board) {
                texts.retain(|(k, _)| *k != kind);
            }
            return Ok(None);
        }
        if !self.listed.contains(board) {
            return self.hold(board, kind, payload).map(|()| None);
        }
        self.admit(board)?;
        let payload = if kind == BoardTopic::Availability && self.owner_offline(board) {
            b"offline".to_vec()
        } else {
            payload.to_vec()
        };
        Ok(Some(Mirror {
            board: board.to_string(),
            kind,
            payload,
        }))
    }

    /// An event of another node's board (not retained): whether it goes into the local
    /// feed, for the board's tile (its last move) and page (its moves and log). This
    /// node's own (echoes from the broker) do not: the feed has them already.
    pub fn board_event(&mut self, board: &str, payload: &[u8]) -> Result<bool, Dropped> {
        if self.is_own(board) || payload.is_empty() || !self.listed.contains(board) {
            return Ok(false);
        }
        if payload.len() > MAX_PAYLOAD {
            return Err(Dropped::TooLarge);
        }
        self.admit(board)?;
        Ok(true)
    }

    /// A message on `alert/<id>` that this run did not publish: what goes into the local
    /// feed, so an arbiter on this node's dashboard sees the other nodes' alerts too. This
    /// node's own alerts (about its boards, or its hall-level ones, `<base>-<node>`) give
    /// nothing: a copy an earlier run left is the hall's to judge, not the feed's. An
    /// alert that does not read, or whose id is not its topic's, is not shown (nothing is
    /// invented); a cleared one is taken out.
    pub fn alert_message(&mut self, id: &str, payload: &[u8]) -> Result<Option<Vec<u8>>, Dropped> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Dropped::TooLarge);
        }
        if super::payload::alert_cleared(payload) {
            return Ok(self.alerts.remove(id).then(Vec::new));
        }
        let Ok(alert) = serde_json::from_slice::<AlertPayload>(payload) else {
            return Ok(None);
        };
        let ours = match &alert.board {
            Some(board) => self.is_own(board),
            None => crate::alert::is_node_alert_of(id, &self.node),
        };
        if alert.id != id || ours {
            return Ok(None);
        }
        if !self.alerts.contains(id) {
            if self.alerts.len() >= MAX_ALERTS {
                return Err(Dropped::TooManyAlerts);
            }
            self.alerts.insert(id.to_string());
        }
        Ok(Some(payload.to_vec()))
    }

    /// The statuses' board lists changed: the boards they list now are the ones shown.
    /// What waited for a list comes out (with `availability` `offline` where its node is
    /// down); a board no list names any more (its node took it out of its `[[boards]]`)
    /// leaves the feed, every text of it cleared.
    fn relisted(&mut self) -> Vec<Mirror> {
        self.listed = self
            .peers
            .values()
            .flat_map(|p| p.boards.iter())
            .filter(|b| !self.own.contains(*b))
            .cloned()
            .collect();
        let mut out = Vec::new();
        let gone: Vec<String> = self
            .boards
            .iter()
            .filter(|b| !self.listed.contains(*b))
            .cloned()
            .collect();
        for board in gone {
            self.boards.remove(&board);
            for kind in [BoardTopic::State, BoardTopic::Availability, BoardTopic::Pgn] {
                out.push(Mirror {
                    board: board.clone(),
                    kind,
                    payload: Vec::new(),
                });
            }
        }
        let ready: Vec<String> = self
            .unlisted
            .keys()
            .filter(|b| self.listed.contains(*b))
            .cloned()
            .collect();
        for board in ready {
            let texts = self.unlisted.remove(&board).unwrap_or_default();
            if self.admit(&board).is_err() {
                continue;
            }
            for (kind, payload) in texts {
                let payload = if kind == BoardTopic::Availability && self.owner_offline(&board) {
                    b"offline".to_vec()
                } else {
                    payload
                };
                out.push(Mirror {
                    board: board.clone(),
                    kind,
                    payload,
                });
            }
        }
        out
    }

    /// Another node's status: `None` when it is stale (an older run's, or ours), else what
    /// goes into the local feed besides the status itself: the texts of boards it now
    /// lists that waited for a list, clears for boards no status lists any more
    /// ([`Foreign::relisted`]), and, when it says `offline`, its boards' `availability`
    /// `offline`.
    pub fn peer_status(
        &mut self,
        status: NodeStatusPayload,
    ) -> Result<Option<Vec<Mirror>>, Dropped> {
        if status.node == self.node {
            return Ok(None);
        }
        match self.peers.get(&status.node) {
            Some(known) if !status.supersedes(known) => return Ok(None),
            None if self.peers.len() >= MAX_PEERS => return Err(Dropped::TooManyPeers),
            _ => {}
        }
        let offline = status.state == NodeState::Offline;
        let boards = status.boards.clone();
        let relist = self
            .peers
            .get(&status.node)
            .is_none_or(|known| known.boards != status.boards);
        self.peers.insert(status.node.clone(), status);
        let mut out = if relist { self.relisted() } else { Vec::new() };
        if !offline {
            return Ok(Some(out));
        }
        for board in boards {
            // Beyond the cap a board is not shown at all, offline or not.
            if self.is_own(&board) || !self.owner_offline(&board) || self.admit(&board).is_err() {
                continue;
            }
            out.push(Mirror {
                board,
                kind: BoardTopic::Availability,
                payload: b"offline".to_vec(),
            });
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Millis;

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

    fn mine() -> Foreign {
        Foreign::new("a", ["b1".to_string()])
    }

    /// `mine()` beside node b, online, serving `boards`.
    fn beside(boards: &[&str]) -> Foreign {
        let mut f = mine();
        let _ = f.peer_status(status("b", NodeState::Online, boards, 1));
        f
    }

    #[test]
    fn another_node_s_board_events_go_into_the_feed_and_our_echoes_do_not() {
        let mut f = beside(&["b2"]);
        assert_eq!(f.board_event("b2", br#"{"event":"move_made"}"#), Ok(true));
        assert_eq!(
            f.board_event("b1", br#"{"event":"move_made"}"#),
            Ok(false),
            "ours"
        );
        assert_eq!(f.board_event("b2", b""), Ok(false), "nothing to show");
        let big = vec![b' '; MAX_PAYLOAD + 1];
        assert_eq!(f.board_event("b2", &big), Err(Dropped::TooLarge));
        assert_eq!(
            f.board_event("b2", &big[1..]),
            Ok(true),
            "the limit itself is taken"
        );
        assert_eq!(f.board_event("b9", b"{}"), Ok(false), "no node lists b9");
        // Events count as a board shown, under the same cap.
        let many: Vec<String> = (0..=MAX_BOARDS).map(|n| format!("x{n}")).collect();
        let mut f = mine();
        let _ = f.peer_status(NodeStatusPayload {
            boards: many.clone(),
            ..status("b", NodeState::Online, &[], 1)
        });
        for n in 0..MAX_BOARDS {
            assert_eq!(f.board_event(&format!("x{n}"), b"{}"), Ok(true));
        }
        assert_eq!(
            f.board_event(&many[MAX_BOARDS], b"{}"),
            Err(Dropped::TooManyBoards)
        );
        assert_eq!(f.board_event("x1", b"{}"), Ok(true));
    }

    #[test]
    fn a_peer_counts_as_online_while_its_newest_status_says_so() {
        let mut f = mine();
        assert!(!f.has_online_peer());
        let _ = f.peer_status(status("a", NodeState::Online, &["b1"], 1));
        assert!(!f.has_online_peer(), "this node is no peer");
        let _ = f.peer_status(status("old", NodeState::Offline, &["b9"], 1));
        assert!(!f.has_online_peer(), "a node long gone");
        let _ = f.peer_status(status("b", NodeState::Online, &["b2"], 5));
        assert!(f.has_online_peer());
        let _ = f.peer_status(status("b", NodeState::Offline, &["b2"], 5));
        assert!(!f.has_online_peer());
    }

    #[test]
    fn an_event_topic_names_its_board() {
        let t = crate::mqtt::payload::Topics::new("h");
        assert_eq!(t.board_of_event_topic(&t.event("b-7")), Some("b-7"));
        assert_eq!(t.board_of_event_topic(&t.state("b-7")), None);
        assert_eq!(t.board_of_event_topic("hallclock/h/board/a/b/event"), None);
        assert_eq!(
            t.board_of_event_topic("hallclock/other/board/b/event"),
            None
        );
        assert_eq!(
            t.board_event_filter(),
            "hallclock/h/board/+/event",
            "the filter matches what the parser takes"
        );
    }

    #[test]
    fn a_response_topic_names_its_board() {
        let t = crate::mqtt::payload::Topics::new("h");
        assert_eq!(
            t.board_of_response_topic(&t.board_response("b-7")),
            Some("b-7")
        );
        assert_eq!(t.board_of_response_topic(&t.hall_response()), None);
        assert_eq!(t.board_of_response_topic(&t.event("b-7")), None);
        assert_eq!(
            t.board_of_response_topic("hallclock/h/board/a/b/response"),
            None
        );
        assert_eq!(
            t.board_of_response_topic("hallclock/other/board/b/response"),
            None
        );
        assert_eq!(t.board_response_filter(), "hallclock/h/board/+/response");
    }

    #[test]
    fn the_boards_shared_with_a_peer_are_those_it_lists_while_online() {
        let mut f = Foreign::new("a", ["b1".to_string(), "b2".to_string()]);
        assert_eq!(f.shared_with("b"), Vec::<String>::new());
        let _ = f.peer_status(status("b", NodeState::Online, &["b2", "b3"], 10));
        assert_eq!(f.shared_with("b"), ["b2"]);
        assert!(f.claimed_by_peer("b2") && !f.claimed_by_peer("b1"));
        // Its death frees the board: no longer shared, no longer claimed.
        let _ = f.peer_status(status("b", NodeState::Offline, &["b2", "b3"], 10));
        assert_eq!(f.shared_with("b"), Vec::<String>::new());
        assert!(!f.claimed_by_peer("b2"));
    }

    #[test]
    fn other_boards_are_mirrored_as_they_are_and_own_echoes_are_not() {
        let mut f = beside(&["b2"]);
        assert_eq!(f.board_message("b1", BoardTopic::State, b"{}"), Ok(None));
        let m = f.board_message("b2", BoardTopic::State, b"{\"seq\":1}");
        assert_eq!(
            m,
            Ok(Some(Mirror {
                board: "b2".into(),
                kind: BoardTopic::State,
                payload: b"{\"seq\":1}".to_vec()
            }))
        );
        // A cleared topic of a board never shown: nothing.
        assert_eq!(f.board_message("b9", BoardTopic::Pgn, b""), Ok(None));
    }

    #[test]
    fn a_dead_nodes_listed_boards_go_offline_and_its_stale_online_is_read_as_offline() {
        let mut f = mine();
        assert_eq!(
            f.peer_status(status("b", NodeState::Online, &["b2", "b3"], 10)),
            Ok(Some(vec![]))
        );
        let out = f
            .peer_status(status("b", NodeState::Offline, &["b2", "b3", "b1"], 10))
            .ok()
            .flatten()
            .unwrap_or_default();
        let boards: Vec<&str> = out.iter().map(|m| m.board.as_str()).collect();
        assert_eq!(boards, ["b2", "b3"], "not ours, only what the status lists");
        assert!(out.iter().all(|m| m.payload == b"offline"));
        let m = f.board_message("b2", BoardTopic::Availability, b"online");
        assert_eq!(
            m.map(|m| m.map(|m| m.payload)),
            Ok(Some(b"offline".to_vec()))
        );
        // Its last will replayed after its next run's birth changes nothing.
        assert_eq!(
            f.peer_status(status("b", NodeState::Online, &["b2", "b3"], 20)),
            Ok(Some(vec![]))
        );
        assert_eq!(
            f.peer_status(status("b", NodeState::Offline, &["b2", "b3"], 10)),
            Ok(None)
        );
        let m = f.board_message("b2", BoardTopic::Availability, b"online");
        assert_eq!(
            m.map(|m| m.map(|m| m.payload)),
            Ok(Some(b"online".to_vec()))
        );
    }

    /// A board's texts are shown only while some node's status lists it: one that came
    /// before its node's status waits for it; one that a node took out of its
    /// `[[boards]]` leaves the feed; one only a stale copy names is never shown.
    #[test]
    fn a_board_is_shown_only_while_a_node_s_status_lists_it() {
        let mut f = mine();
        // Before any status: held, not shown.
        assert_eq!(
            f.board_message("b2", BoardTopic::State, b"{\"seq\":1}"),
            Ok(None)
        );
        assert_eq!(
            f.board_message("b2", BoardTopic::State, b"{\"seq\":2}"),
            Ok(None)
        );
        assert_eq!(
            f.board_message("b2", BoardTopic::Availability, b"online"),
            Ok(None)
        );
        assert_eq!(f.board_message("b2", BoardTopic::Pgn, b"pgn"), Ok(None));
        assert_eq!(
            f.board_message("b2", BoardTopic::Pgn, b""),
            Ok(None),
            "cleared"
        );
        assert_eq!(f.board_message("b7", BoardTopic::State, b"{}"), Ok(None));
        // Node b lists b2: its newest held texts come out; b7 (nobody's) stays hidden.
        let out = f
            .peer_status(status("b", NodeState::Online, &["b2"], 1))
            .ok()
            .flatten()
            .unwrap_or_default();
        let texts: Vec<(&str, BoardTopic, &[u8])> = out
            .iter()
            .map(|m| (m.board.as_str(), m.kind, m.payload.as_slice()))
            .collect();
        assert_eq!(
            texts,
            [
                ("b2", BoardTopic::State, &b"{\"seq\":2}"[..]),
                ("b2", BoardTopic::Availability, &b"online"[..]),
            ]
        );
        assert_eq!(
            f.board_message("b2", BoardTopic::State, b"{\"seq\":3}")
                .map(|m| m.is_some()),
            Ok(true),
            "listed: shown at once"
        );
        // The same list again: nothing to do.
        assert_eq!(
            f.peer_status(status("b", NodeState::Online, &["b2"], 2)),
            Ok(Some(vec![]))
        );
        // Node b takes b2 out of its boards: every text of b2 cleared from the feed.
        let out = f
            .peer_status(status("b", NodeState::Online, &["b3"], 3))
            .ok()
            .flatten()
            .unwrap_or_default();
        let cleared: Vec<(&str, BoardTopic, bool)> = out
            .iter()
            .map(|m| (m.board.as_str(), m.kind, m.payload.is_empty()))
            .collect();
        assert_eq!(
            cleared,
            [
                ("b2", BoardTopic::State, true),
                ("b2", BoardTopic::Availability, true),
                ("b2", BoardTopic::Pgn, true),
            ]
        );
        assert_eq!(f.board_message("b2", BoardTopic::State, b"{}"), Ok(None));
        assert_eq!(f.board_event("b2", b"{}"), Ok(false));
        // A held board of a node that is down comes out offline.
        let mut f = mine();
        assert_eq!(
            f.board_message("b4", BoardTopic::Availability, b"online"),
            Ok(None)
        );
        let out = f
            .peer_status(status("c", NodeState::Offline, &["b4"], 1))
            .ok()
            .flatten()
            .unwrap_or_default();
        assert!(
            !out.is_empty()
                && out
                    .iter()
                    .all(|m| m.board == "b4" && m.payload == b"offline"),
            "{out:?}"
        );
        // Held boards count under the cap like shown ones.
        let mut f = mine();
        for n in 0..MAX_BOARDS {
            assert_eq!(
                f.board_message(&format!("y{n}"), BoardTopic::State, b"{}"),
                Ok(None)
            );
        }
        assert_eq!(
            f.board_message("one-more", BoardTopic::State, b"{}"),
            Err(Dropped::TooManyBoards)
        );
        assert_eq!(f.board_message("y1", BoardTopic::Pgn, b"p"), Ok(None));
    }

    /// A board that becomes ours (a reload) is no longer mirrored: a later change of the
    /// other node's list clears nothing of it from the feed, and what was held of it
    /// before is not shown should it become another's again.
    #[test]
    fn a_board_that_becomes_ours_is_no_longer_another_node_s() {
        let mut f = beside(&["b2"]);
        assert!(
            f.board_message("b2", BoardTopic::State, b"{}")
                .is_ok_and(|m| m.is_some())
        );
        assert_eq!(f.board_message("b4", BoardTopic::State, b"old"), Ok(None));
        f.set_own(["b1", "b2", "b4"].map(String::from));
        let changed = |f: &mut Foreign, boards: &[&str], boot: i64| {
            f.peer_status(status("b", NodeState::Online, boards, boot))
                .ok()
                .flatten()
                .unwrap_or_default()
        };
        assert_eq!(changed(&mut f, &["b2", "b3"], 2), vec![]);
        f.set_own(["b1".to_string()]);
        assert_eq!(changed(&mut f, &["b4"], 3), vec![]);
    }

    fn alert(id: &str, board: Option<&str>) -> Vec<u8> {
        serde_json::to_vec(&AlertPayload {
            id: id.into(),
            board: board.map(str::to_string),
            kind: crate::alert::AlertKind::Storage,
            code: crate::alert::AlertKind::Storage.slug().to_string(),
            params: Default::default(),
            severity: crate::alert::Severity::Critical,
            message: "m".into(),
            since: Millis(1),
            error: None,
        })
        .unwrap_or_default()
    }

    #[test]
    fn other_nodes_alerts_are_shown_and_cleared_and_ours_are_not() {
        let mut f = mine();
        let theirs = alert("b2-storage", Some("b2"));
        assert_eq!(
            f.alert_message("b2-storage", &theirs),
            Ok(Some(theirs.clone()))
        );
        let hall = alert("journal-b", None);
        assert_eq!(f.alert_message("journal-b", &hall), Ok(Some(hall.clone())));
        // Ours: about our board, or our own hall-level alert.
        let own = alert("b1-storage", Some("b1"));
        assert_eq!(f.alert_message("b1-storage", &own), Ok(None));
        let own_hall = alert("journal-a", None);
        assert_eq!(f.alert_message("journal-a", &own_hall), Ok(None));
        // Nothing invented: a payload that does not read, or names another id.
        assert_eq!(f.alert_message("x", b"not json"), Ok(None));
        assert_eq!(f.alert_message("other-id", &theirs), Ok(None));
        // Cleared: taken out once; a clear of what was never shown gives nothing.
        assert_eq!(f.alert_message("b2-storage", b""), Ok(Some(Vec::new())));
        assert_eq!(f.alert_message("b2-storage", b""), Ok(None));
        // A cleared alert, as a writer publishes it: taken out the same way.
        assert_eq!(
            f.alert_message("b2-storage", &theirs),
            Ok(Some(theirs.clone()))
        );
        let cleared = crate::mqtt::payload::cleared_alert("b2-storage");
        assert_eq!(
            f.alert_message("b2-storage", &cleared),
            Ok(Some(Vec::new()))
        );
        assert_eq!(f.alert_message("b2-storage", &cleared), Ok(None));
        for n in 0..(MAX_ALERTS - 1) {
            let id = format!("x{n}-storage");
            assert!(f.alert_message(&id, &alert(&id, None)).is_ok());
        }
        assert_eq!(
            f.alert_message("late", &alert("late", None)),
            Err(Dropped::TooManyAlerts)
        );
        assert_eq!(
            f.alert_message("journal-b", &hall),
            Ok(Some(hall.clone())),
            "already shown"
        );
    }

    #[test]
    fn a_hostile_peer_cannot_grow_it_without_bound() {
        let mut f = mine();
        for n in 0..MAX_BOARDS {
            assert!(
                f.board_message(&format!("x{n}"), BoardTopic::State, b"{}")
                    .is_ok()
            );
        }
        assert_eq!(
            f.board_message("one-more", BoardTopic::State, b"{}"),
            Err(Dropped::TooManyBoards)
        );
        assert!(f.board_message("x1", BoardTopic::State, b"{}").is_ok());
        let big = vec![b'x'; MAX_PAYLOAD + 1];
        assert_eq!(
            f.board_message("x1", BoardTopic::Pgn, &big),
            Err(Dropped::TooLarge)
        );
        for n in 0..MAX_PEERS {
            assert!(
                f.peer_status(status(&format!("n{n}"), NodeState::Online, &[], 1))
                    .is_ok()
            );
        }
        assert_eq!(
            f.peer_status(status("late", NodeState::Online, &[], 1)),
            Err(Dropped::TooManyPeers)
        );
    }
}
