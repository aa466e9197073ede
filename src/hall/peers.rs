//! The other nodes' boards as the hall's conclusions need them (issue 23: `all_sealed`,
//! the session and the round summary are the whole hall's). Sans-IO: it reads another
//! node's retained `board/<b>/state` (its owner's own words) into what this node keeps of
//! its own boards: the stage note the session is made of, and the result the round summary
//! lists. Nothing is invented: a board of a node that died keeps its last state, so a game
//! that was being played there still holds `all_sealed` and the round's end back.

use std::collections::{BTreeMap, BTreeSet};

use super::board::StageNote;
use crate::mqtt::payload::{BoardInfo, NodeInfoPayload, StatePayload};
use crate::rules::adjournment::{Resumption, Stage};
use crate::rules::game::GameResult;

/// Another node's board, as its last state says.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PeerBoard {
    pub note: StageNote,
    /// White's and Black's names and the result, once the game has one.
    pub result: Option<(String, String, GameResult)>,
}

/// What another node's state says of its board's game.
pub(super) fn read(state: &StatePayload) -> PeerBoard {
    let adjournment = state.adjournment.as_ref();
    let stage = adjournment
        .and_then(|a| a.get("stage"))
        .and_then(|s| serde_json::from_value::<Stage>(s.clone()).ok());
    let resumption = adjournment
        .and_then(|a| a.get("resumption"))
        .and_then(|r| serde_json::from_value::<Resumption>(r.clone()).ok());
    let names = state
        .white
        .as_ref()
        .zip(state.black.as_ref())
        .map(|(w, b)| (w.name.clone(), b.name.clone()));
    let result = state.result.clone().zip(names).map(|(r, (w, b))| (w, b, r));
    PeerBoard {
        note: StageNote {
            round: state.round,
            stage,
            // As this node's boards say it: no game, or a game with a result.
            finished: state.phase == "idle" || state.result.is_some(),
            session_end: state.session_end,
            resumption,
        },
        result,
    }
}

/// The other nodes' `node/<node>/info`: their boards (with their tournament numbers) and
/// their round, for the `info` this node's dashboard reads, so the hall's tiles have their
/// numbers whichever node serves the page. Bounded like the mirror of their boards: at most
/// `mqtt::foreign::MAX_PEERS` nodes and `mqtt::foreign::MAX_BOARDS` boards in all.
#[derive(Debug, Default)]
pub(super) struct PeerInfos {
    infos: BTreeMap<String, NodeInfoPayload>,
}

impl PeerInfos {
    /// Every other node's boards with their node, as their infos list them (bounded like
    /// [`PeerInfos::boards`]).
    pub fn boards_by_node(&self) -> Vec<(String, BoardInfo)> {
        self.infos
            .iter()
            .flat_map(|(node, i)| i.boards.iter().map(move |b| (node.clone(), b.clone())))
            .take(crate::mqtt::foreign::MAX_BOARDS)
            .collect()
    }

    /// Another node's info; `false` when it changes nothing (an older run's, ours, too
    /// many nodes, or the same again).
    pub fn observe(&mut self, node: &str, info: NodeInfoPayload) -> bool {
        if info.node != node {
            return false;
        }
        match self.infos.get(node) {
            Some(known) if known.boot > info.boot || *known == info => return false,
            None if self.infos.len() >= crate::mqtt::foreign::MAX_PEERS => return false,
            _ => {}
        }
        self.infos.insert(node.to_string(), info);
        true
    }

    /// The other nodes' boards that are not in `own`, each once (the first node naming it),
    /// at most `MAX_BOARDS`.
    pub fn boards(&self, own: &BTreeSet<String>) -> Vec<BoardInfo> {
        let mut seen = own.clone();
        let mut out = Vec::new();
        for b in self.infos.values().flat_map(|i| i.boards.iter()) {
            if out.len() >= crate::mqtt::foreign::MAX_BOARDS {
                break;
            }
            if seen.insert(b.id.clone()) {
                out.push(b.clone());
            }
        }
        out
    }

    /// The boards the other nodes play in round `round` (their `round.boards`).
    pub fn round_boards(&self, round: u32) -> BTreeSet<String> {
        self.infos
            .values()
            .filter_map(|i| i.round.as_ref())
            .filter(|r| r.round == round)
            .flat_map(|r| r.boards.iter().cloned())
            .take(crate::mqtt::foreign::MAX_BOARDS)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Millis;
    use serde_json::json;

    fn state(extra: serde_json::Value) -> StatePayload {
        let side = |name: &str| {
            json!({"name": name, "remaining_ms": 1000, "display_ms": 1000, "delay_left_ms": 0,
                   "moves": 1, "period": 1, "flagged_at": null, "present": true})
        };
        let mut v = json!({
            "board": "board-003", "seq": 4, "as_of": 1, "phase": "running", "online": true,
            "round": 2, "running": "white", "turn": "white", "white_side": "left",
            "white": side("W3"), "black": side("B3"), "fen": null, "result": null,
            "pending_flag": null, "both_flags_order_unknown": false, "time_control": "600",
            "authoritative": false
        });
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            for (k, x) in extra {
                v.insert(k.clone(), x.clone());
            }
        }
        serde_json::from_value(v).expect("a state")
    }

    fn info(
        node: &str,
        boot: i64,
        boards: &[(&str, u32)],
        round: Option<(u32, &[&str])>,
    ) -> NodeInfoPayload {
        NodeInfoPayload {
            version: "0".into(),
            hall: "h".into(),
            node: node.into(),
            boot: Millis(boot),
            boards: boards
                .iter()
                .map(|(id, n)| BoardInfo {
                    id: id.to_string(),
                    port: format!("/dev/{id}"),
                    white_side: crate::rules::placement::Side::Left,
                    number: *n,
                })
                .collect(),
            defaults: None,
            round: round.map(|(n, b)| crate::mqtt::payload::RoundInfo {
                round: n,
                start: Millis(0),
                time_control: "600".into(),
                boards: b.iter().map(|s| s.to_string()).collect(),
                event: None,
                site: None,
            }),
        }
    }

    #[test]
    fn the_other_nodes_boards_and_round_join_ours_once_and_an_older_run_changes_nothing() {
        let mut p = PeerInfos::default();
        assert!(p.observe(
            "b",
            info("b", 10, &[("b3", 3), ("b1", 9)], Some((2, &["b3"])))
        ));
        assert!(!p.observe(
            "b",
            info("b", 10, &[("b3", 3), ("b1", 9)], Some((2, &["b3"])))
        ));
        assert!(!p.observe("b", info("b", 5, &[], None)), "an older run's");
        assert!(
            !p.observe("c", info("x", 10, &[], None)),
            "another node's name inside"
        );
        let own: BTreeSet<String> = ["b1".to_string()].into();
        let ids: Vec<(String, u32)> = p
            .boards(&own)
            .into_iter()
            .map(|b| (b.id, b.number))
            .collect();
        assert_eq!(ids, [("b3".to_string(), 3)], "a board of ours is ours");
        assert_eq!(p.round_boards(2), ["b3".to_string()].into());
        assert!(p.round_boards(1).is_empty());
    }

    #[test]
    fn a_game_being_played_is_neither_finished_nor_sealed() {
        let p = read(&state(json!({})));
        assert_eq!(p.note.round, Some(2));
        assert!(!p.note.finished);
        assert_eq!(p.note.stage, None);
        assert_eq!(p.result, None);
    }

    #[test]
    fn an_adjourned_game_gives_its_stage_session_end_and_resumption() {
        let p = read(&state(json!({
            "phase": "paused", "session_end": 5000,
            "adjournment": {"stage": "adjourned", "sealer": "white", "sealed": false,
                            "resumption": {"start": 9000, "end": 12000, "place": "Sala 2"},
                            "envelopes": []}
        })));
        assert_eq!(p.note.stage, Some(Stage::Adjourned));
        assert_eq!(p.note.session_end, Some(Millis(5000)));
        assert_eq!(p.note.resumption.map(|r| r.start), Some(Millis(9000)));
        assert!(!p.note.finished);
    }

    #[test]
    fn a_result_finishes_it_with_the_players_names() {
        let p = read(&state(json!({
            "phase": "finished",
            "result": {"score": "1-0", "termination": "checkmate"}
        })));
        assert!(p.note.finished);
        let (w, b, r) = p.result.expect("a result");
        assert_eq!((w.as_str(), b.as_str()), ("W3", "B3"));
        assert_eq!(serde_json::to_value(r.score).ok(), Some(json!("1-0")));
        // An idle board has no game: nothing holds the session back.
        let idle = read(&state(
            json!({"phase": "idle", "round": null, "white": null, "black": null}),
        ));
        assert!(idle.note.finished);
        assert_eq!(idle.note.round, None);
    }
}
