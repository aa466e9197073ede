//! Rounds: starting one (its pairings as given or from a TRF, every board checked before
//! any game starts), the round the journal shows after a restart, and the summary once
//! every game of the round has a result.

use std::collections::{BTreeMap, HashSet};

use super::board::{GameSlot, Refusal, StageNote, ToBoard};
use super::trf_round;
use super::{Hall, Round};
use crate::intake::command::Pairing;
use crate::mqtt::payload::{BoardResult, HallEvent};
use crate::rules::Millis;
use crate::rules::game::{Game, GameResult, Setup, Termination};
use crate::store::RecoveredGame;

impl Round {
    /// The round in progress, as far as the journal shows it: the highest round any
    /// board's current game belongs to.
    pub(super) fn recovered(games: &BTreeMap<String, RecoveredGame>) -> Option<Round> {
        games.values().filter_map(|g| g.round).max().map(|number| {
            let mut r = Round {
                number,
                start: Millis::ZERO,
                time_control: String::new(),
                boards: Vec::new(),
                results: BTreeMap::new(),
                ranks: BTreeMap::new(),
                peer_boards: Default::default(),
            };
            for (board, g) in games {
                if g.round != Some(number) {
                    continue;
                }
                let setup = g.game.setup();
                r.start = setup.start;
                r.time_control = setup.tc.to_string();
                r.boards.push(board.clone());
                if let Some(result) = g.game.result() {
                    r.results.insert(board.clone(), {
                        let mut line = BoardResult::new(
                            board.clone(),
                            setup.white.clone(),
                            setup.black.clone(),
                            result,
                        );
                        line.score = score_text(result);
                        line.termination = termination_text(result);
                        line
                    });
                }
            }
            r
        })
    }
}

impl Hall {
    /// The pairings of a `start_round`: as given, or from its TRF.
    pub(super) fn trf_pairings(
        &self,
        round: u32,
        pairings: Vec<Pairing>,
        trf: Option<&str>,
        order: Option<&[u32]>,
        only_ours: bool,
    ) -> Result<(Vec<Pairing>, Option<trf_round::TrfRound>), Refusal> {
        let Some(text) = trf else {
            if order.is_some() || only_ours {
                return Err(Refusal::BadValue(
                    ("board_order and only_our_boards go with trf").into(),
                ));
            }
            return Ok((pairings, None));
        };
        if !pairings.is_empty() {
            return Err(Refusal::BadValue(
                ("give either pairings or trf, not both").into(),
            ));
        }
        let numbers = self.hall_numbers()?;
        let t = trf_round::from_trf(text, round, order, only_ours, &numbers)?;
        Ok((t.pairings.clone(), Some(t)))
    }

    /// The hall's tournament board numbers: this node's boards and the other online
    /// nodes' (as their infos list them), so that every node maps a TRF alike (issue 23).
    /// A number on two boards would start a TRF game twice: every node sees the same
    /// infos, so every node refuses.
    fn hall_numbers(&self) -> Result<BTreeMap<u32, String>, Refusal> {
        let online = self.nodes.online_boards();
        let this = self.settings.node.to_string();
        let mut by_number: BTreeMap<u32, BTreeMap<String, String>> = BTreeMap::new();
        let own = self
            .settings
            .boards
            .iter()
            .map(|b| (this.clone(), b.number, b.id.to_string()));
        let theirs = self
            .peer_infos
            .boards_by_node()
            .into_iter()
            .filter(|(_, b)| online.contains(&b.id) && !self.boards.contains_key(&b.id))
            .map(|(node, b)| (node, b.number, b.id));
        for (node, number, id) in own.chain(theirs) {
            by_number.entry(number).or_default().insert(id, node);
        }
        let mut numbers = BTreeMap::new();
        for (number, boards) in by_number {
            if boards.len() > 1 {
                return Err(Refusal::BoardNumberTwice {
                    number,
                    boards: boards
                        .iter()
                        .map(|(id, node)| format!("{id} on {node}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            if let Some((id, _)) = boards.into_iter().next() {
                numbers.insert(number, id);
            }
        }
        Ok(numbers)
    }

    /// What every node of the hall can check of a round alike, from the command and the
    /// registry (this node's boards and those the other online nodes' retained statuses
    /// list): every node that receives the command refuses the same round for the same
    /// reason, so none starts a game of it. What only a board's owner knows (a game still
    /// running there) is checked by [`Hall::start_round`] on that node.
    pub(super) fn check_round(
        &self,
        number: u32,
        pairings: &[Pairing],
        template: &Setup,
        broadcast_delay_minutes: Option<u32>,
    ) -> Result<(), Refusal> {
        if number == 0 {
            return Err(Refusal::RoundZero);
        }
        if let Some(m) = broadcast_delay_minutes
            && m > crate::broadcast::MAX_DELAY_MINUTES
        {
            return Err(Refusal::BroadcastDelayTooLong { minutes: m });
        }
        if pairings.is_empty() {
            return Err(Refusal::NoPairings);
        }
        // Issue 23: a round is one round. Where its command is silent each node fills in
        // its own `[defaults]`, so they must agree; every node sees the same statuses, and
        // each refuses (the node that differs and the nodes it differs from alike).
        let differ = self
            .nodes
            .defaults_differ(&self.settings.defaults.as_value());
        let ours = self.settings.defaults.summary();
        if !differ.is_empty() {
            return Err(Refusal::DefaultsDiffer {
                node: self.settings.node.to_string(),
                ours: ours.into(),
                theirs: differ
                    .iter()
                    .map(|(node, d)| format!("node {node} has {d}"))
                    .collect::<Vec<_>>()
                    .join("; ")
                    .into(),
            });
        }
        let others = self.nodes.online_boards();
        let mut seen = HashSet::new();
        for (i, p) in pairings.iter().enumerate() {
            let at = format!("pairings[{i}]");
            if !self.boards.contains_key(&p.board) && !others.contains(&p.board) {
                return Err(Refusal::UnknownPairedBoard {
                    at,
                    board: p.board.clone(),
                });
            }
            // Another node's board still playing an earlier game, as its node's retained
            // state says: every node reads the same, so each refuses the round whole
            // before any game starts anywhere, as a node alone refuses a round on one of
            // its busy boards. (Its node asks the board itself when starting, in case the
            // state is a moment old; our own boards are asked there too.)
            if !self.boards.contains_key(&p.board)
                && let Some(round) = self
                    .session
                    .boards
                    .get(&p.board)
                    .and_then(|note| busy_with_another_round(note, number))
            {
                return Err(Refusal::PairedBoardBusy {
                    at,
                    board: p.board.clone(),
                    round,
                });
            }
            if !seen.insert(p.board.as_str()) {
                return Err(Refusal::PairedTwice {
                    at,
                    board: p.board.clone(),
                });
            }
            if p.white.trim().is_empty() || p.black.trim().is_empty() {
                return Err(Refusal::NameMissing { at });
            }
            let mut setup = template.clone();
            seat(&mut setup, p, &at)?;
            Game::new(setup).map_err(|e| Refusal::BadSetup {
                at,
                reason: e.to_string(),
            })?;
        }
        Ok(())
    }

    /// Validate every pairing of this node's boards before starting any game: a rejected
    /// round changes nothing. The others are other nodes' ([`Hall::check_round`] first).
    pub(super) async fn start_round(
        &mut self,
        number: u32,
        pairings: &[Pairing],
        template: Setup,
        broadcast_delay_minutes: Option<u32>,
        tags: crate::broadcast::RoundTags,
        arbiter: &str,
    ) -> Result<(), Refusal> {
        // The round as a whole (its number, delay, boards, names, setups) passed
        // `check_round`, its only caller's first step; what is left is what only this
        // node knows: whether its boards are free.
        let mut slots = Vec::new();
        for (i, p) in pairings.iter().enumerate() {
            let at = format!("pairings[{i}]");
            // Another node's board ([`Hall::check_round`] found it in the registry): that
            // node starts its game. Skipped here, so `at` still counts the command's list.
            let Some(entry) = self.boards.get(&p.board) else {
                continue;
            };
            if let Some(round) = Self::ask(&entry.inbox, |reply| ToBoard::Busy { reply })
                .await
                .flatten()
            {
                return Err(Refusal::PairedBoardBusy {
                    at,
                    board: p.board.clone(),
                    round,
                });
            }
            let mut setup = template.clone();
            seat(&mut setup, p, &at)?;
            let game = Game::new(setup).map_err(|e| Refusal::BadSetup {
                at,
                reason: e.to_string(),
            })?;
            slots.push((
                p.board.clone(),
                GameSlot {
                    id: {
                        self.next_game_id += 1;
                        self.next_game_id - 1
                    },
                    game,
                    round: Some(number),
                    fide: (p.white_fide_id, p.black_fide_id),
                    events: Vec::new(),
                },
            ));
        }
        // The round's broadcast delay is on disk before any of its games: none is ever
        // shown undelayed, even across a restart.
        self.broadcast
            .start_round(number, broadcast_delay_minutes, tags)
            .map_err(|e| Refusal::NotStored {
                reason: e.to_string(),
            })?;
        // Every board stores its new game at once: the journal groups them into one sync
        // instead of one sync window per board.
        let mut starting = tokio::task::JoinSet::new();
        for (board, slot) in slots {
            if let Some(entry) = self.boards.get(&board) {
                let inbox = entry.inbox.clone();
                starting.spawn(async move {
                    let r = Self::ask(&inbox, |reply| ToBoard::StartGame {
                        slot: Box::new(slot),
                        reply,
                    })
                    .await
                    .unwrap_or(Err(Refusal::BoardStopped));
                    (board, r)
                });
            }
        }
        let mut boards = Vec::new();
        let mut failed = None;
        while let Some(done) = starting.join_next().await {
            match done {
                Ok((board, Ok(()))) => boards.push(board),
                Ok((_, Err(e))) => failed = Some(e),
                Err(e) => {
                    failed = Some(Refusal::Internal {
                        reason: e.to_string(),
                    })
                }
            }
        }
        boards.sort();
        if let Some(e) = failed {
            return Err(e);
        }
        let now = self.timebase.now();
        self.round = Some(Round {
            number,
            start: template.start,
            time_control: template.tc.to_string(),
            boards: boards.clone(),
            results: BTreeMap::new(),
            ranks: BTreeMap::new(),
            peer_boards: Default::default(),
        });
        self.publish_info();
        self.publisher.json_message(
            self.topics.hall_event(),
            &HallEvent::RoundStarted {
                at: now,
                round: number,
                start: template.start,
                boards,
                arbiter: arbiter.to_string(),
            },
        );
        Ok(())
    }

    /// A board's game has a result: into the round's summary, and the summary published
    /// once every board of the round has one: this node's and the other nodes' (their
    /// states say which play the round: `Round::peer_boards`), so the summary is the
    /// whole hall's. Each node publishes it when it sees the last result; an unchanged
    /// line (another node's state republished) publishes nothing again.
    pub(super) fn on_finished(
        &mut self,
        board: String,
        round: Option<u32>,
        white: String,
        black: String,
        result: GameResult,
    ) {
        // After a restart the other nodes' states arrive one by one: the summary waits for
        // all of them (their boards of the round are known only then).
        let reported = self.peers_reported();
        let listed = self.nodes.listed_boards();
        let Some(r) = &mut self.round else { return };
        if round != Some(r.number) {
            return;
        }
        let ranks = r.ranks.get(&board).copied();
        let mut line = BoardResult::new(board.clone(), white, black, &result);
        (line.white_rank, line.black_rank) = (ranks.map(|r| r.0), ranks.map(|r| r.1));
        line.score = score_text(&result);
        line.termination = termination_text(&result);
        if r.results.get(&board) == Some(&line) {
            return;
        }
        r.results.insert(board, line);
        if reported
            && r.boards
                .iter()
                .chain(r.peer_boards.iter().filter(|b| listed.contains(*b)))
                .all(|b| r.results.contains_key(b))
        {
            let summary = HallEvent::RoundFinished {
                at: self.timebase.now(),
                round: r.number,
                results: r.results.values().cloned().collect(),
            };
            tracing::info!(round = r.number, "round finished: every game has a result");
            self.publisher
                .json_message(self.topics.hall_event(), &summary);
        }
    }
}

fn score_text(r: &GameResult) -> String {
    serde_json::to_value(r.score)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn termination_text(r: &GameResult) -> String {
    match &r.termination {
        Termination::Arbiter { .. } => "arbiter".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| {
                v.get("termination")
                    .and_then(|t| t.as_str())
                    .map(String::from)
            })
            .unwrap_or_default(),
    }
}

/// The round of another node's board's unfinished game, when it is not `round`: a game of
/// this same round there is this round's, started by an earlier send of it (a node that
/// missed the command in a bridge cut gets it again with the same transaction, and must
/// start its part though the others' boards already play it).
fn busy_with_another_round(note: &StageNote, round: u32) -> Option<u32> {
    if note.finished || note.round == Some(round) {
        return None;
    }
    Some(note.round.unwrap_or(0))
}

/// A pairing's players in a game's setup: names, position, titles and ratings (shown on
/// the hall screens), each checked with where it is in the command.
fn seat(setup: &mut Setup, p: &Pairing, at: &str) -> Result<(), Refusal> {
    let title = |key: &str, t: &Option<String>| match t.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) if (1..=4).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_alphabetic()) => {
            Ok(Some(t.to_string()))
        }
        Some(t) => Err(Refusal::BadValue(format!(
            "{at}.{key}: '{}' is not a title: 1 to 4 letters, such as GM or WIM",
            crate::intake::command::log_safe(t)
        ))),
    };
    let rating = |key: &str, r: Option<u32>| match r {
        Some(r) if r > 4000 => Err(Refusal::BadValue(format!(
            "{at}.{key}: {r} is not a rating: 0 to 4000"
        ))),
        r => Ok(r.filter(|r| *r > 0)),
    };
    setup.white = p.white.clone();
    setup.black = p.black.clone();
    setup.fen = p.fen.clone();
    setup.white_info = crate::rules::game::PlayerInfo {
        title: title("white_title", &p.white_title)?,
        rating: rating("white_rating", p.white_rating)?,
    };
    setup.black_info = crate::rules::game::PlayerInfo {
        title: title("black_title", &p.black_title)?,
        rating: rating("black_rating", p.black_rating)?,
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(round: Option<u32>, finished: bool) -> StageNote {
        StageNote {
            round,
            stage: None,
            finished,
            session_end: None,
            resumption: None,
        }
    }

    /// Another node's board blocks a round only with an unfinished game of another round
    /// (or of none); its game of this very round is this round's, sent before.
    #[test]
    fn another_node_s_board_is_busy_only_with_another_round_s_unfinished_game() {
        assert_eq!(busy_with_another_round(&note(Some(1), false), 2), Some(1));
        assert_eq!(busy_with_another_round(&note(None, false), 2), Some(0));
        assert_eq!(busy_with_another_round(&note(Some(2), false), 2), None);
        assert_eq!(busy_with_another_round(&note(Some(1), true), 2), None);
        assert_eq!(busy_with_another_round(&note(None, true), 2), None);
    }

    /// Titles and ratings are shown, never ruled on: a pairing's are checked for what a
    /// screen can show, and each refusal says where.
    #[test]
    fn a_pairing_s_titles_and_ratings_are_checked_and_seated() {
        let tc = crate::rules::time_control::parse("5400+30")
            .unwrap_or(crate::rules::time_control::TimeControl::Unknown);
        let mut setup = Setup::new("", "", tc, Millis::ZERO);
        let pairing = |json: serde_json::Value| -> Pairing {
            serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"))
        };
        let p = pairing(serde_json::json!({"board": "b", "white": "A", "black": "B",
            "white_title": " GM ", "white_rating": 2700, "black_rating": 0}));
        assert_eq!(seat(&mut setup, &p, "pairings[0]"), Ok(()));
        assert_eq!((setup.white.as_str(), setup.black.as_str()), ("A", "B"));
        assert_eq!(setup.white_info.title.as_deref(), Some("GM"));
        assert_eq!(setup.white_info.rating, Some(2700));
        assert!(setup.black_info.is_blank(), "a rating of 0 is none");
        for (field, value, said) in [
            (
                "black_title",
                serde_json::json!("G M"),
                "pairings[0].black_title: 'G M' is not a title",
            ),
            (
                "white_title",
                serde_json::json!("GMIMX"),
                "pairings[0].white_title: 'GMIMX'",
            ),
            (
                "white_rating",
                serde_json::json!(4001),
                "pairings[0].white_rating: 4001 is not a rating",
            ),
        ] {
            let mut json = serde_json::json!({"board": "b", "white": "A", "black": "B"});
            json[field] = value;
            let r = seat(&mut setup, &pairing(json), "pairings[0]");
            assert!(
                matches!(&r, Err(Refusal::BadValue(m)) if m.starts_with(said)),
                "{field}: {r:?}"
            );
        }
    }
}
