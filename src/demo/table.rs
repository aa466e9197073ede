//! The demo's live table, built only from what a dashboard receives over MQTT: retained
//! `state` per board (clocks counted down from `as_of` while a side runs), `event` per
//! board for the last move, and the hall's round events. Nothing here reads the daemon's
//! memory, so the table proves the published API is enough to show a hall.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::mqtt::payload::{HallEvent, StatePayload};
use crate::rules::game::{GameResult, Score, Termination, describe_result};
use crate::rules::{Color, Millis};

#[derive(Debug, Default)]
struct Row {
    state: Option<StatePayload>,
    online: bool,
    /// The last move in SAN with its number (`12... Nf6`), or the last clock event.
    last: String,
    /// A move or an ending arrived since the last line printed for this board.
    changed: bool,
    /// The move number of the last `move_made` (`12` for `12... Nf6`): shown while the
    /// position waits for a move owed by a press (the state's FEN is null then).
    last_number: String,
    /// The `seq` of the last event taken: a copy delivered again (QoS 1 is at least once,
    /// and a bridge that reconnects resends what was in flight) is not a second move.
    event_seq: u64,
    /// What the board's last line said (`last`): a press whose move has not arrived yet
    /// (the move is read when the board is still, after the press) would say it again.
    printed: String,
}

/// One game (board and round) as the events told it.
#[derive(Debug, Default, Clone)]
struct GameEvents {
    move_made: u64,
    /// The first `flag_fell` or `game_ended`: moves completed later are not the game's.
    ended_at: Option<Millis>,
    /// That end in words (`black's flag fell`, `checkmate`), for the demo's account of a
    /// game whose counts differ.
    ended_how: String,
    /// A press the daemon refused because the game was over: the player pressed as the
    /// flag fell, and the lever frame reached the daemon after the flag's instant.
    press_after_end: bool,
    /// The game ended on the board (mate, stalemate, a dead position, 9.6): by the move
    /// itself, without a press (6.7a), whatever the player then did with the lever.
    ended_by_move: bool,
}

/// What the subscriber has learnt so far.
#[derive(Debug)]
pub struct Table {
    prefix: String,
    rows: BTreeMap<String, Row>,
    /// Each node's `state` (`online`, `offline`), from its `node/<node>/status`: the hall
    /// is up while any node is (no daemon publishes a hall-wide status).
    nodes: BTreeMap<String, String>,
    round: Option<u32>,
    /// The rounds whose `round_started` arrived, whoever started them.
    started: Vec<u32>,
    /// The boards of the round started last, over every node's `round_started` (in a hall
    /// of several nodes each node announces its own boards of the one round).
    round_boards: std::collections::BTreeSet<String>,
    /// Each online node's boards, from its status: a round announced on all of them is
    /// announced whole.
    node_boards: BTreeMap<String, Vec<String>>,
    /// The line of a round whose announcements are still coming, one per node: said
    /// once every online node's boards are in it, or before any other line, so it names
    /// the whole hall's count and still comes before its boards' lines.
    round_line: Option<u32>,
    /// The highest round number seen, in a round's start or a board's state.
    highest_round: u32,
    /// The rounds whose `round_finished` arrived.
    pub finished_rounds: Vec<u32>,
    /// The latest hall-level news (round started or finished), for the footer.
    pub news: String,
    /// `move_made` events seen (every move the players made must show up here).
    pub moves_published: u64,
    games: BTreeMap<(String, u32), GameEvents>,
}

impl Table {
    pub fn new(hall: &str) -> Table {
        Table {
            prefix: format!("hallclock/{hall}/"),
            rows: BTreeMap::new(),
            nodes: BTreeMap::new(),
            round: None,
            started: Vec::new(),
            round_boards: std::collections::BTreeSet::new(),
            node_boards: BTreeMap::new(),
            round_line: None,
            highest_round: 0,
            finished_rounds: Vec::new(),
            news: String::new(),
            moves_published: 0,
            games: BTreeMap::new(),
        }
    }

    /// When the game on `board` in `round` ended (its first flag or its end), if it did.
    pub fn game_end(&self, board: &str, round: u32) -> Option<Millis> {
        self.games
            .get(&(board.to_string(), round))
            .and_then(|g| g.ended_at)
    }

    /// How the game on `board` in `round` ended, in words; empty while it goes on.
    pub fn ended_how(&self, board: &str, round: u32) -> &str {
        self.games
            .get(&(board.to_string(), round))
            .map_or("", |g| g.ended_how.as_str())
    }

    /// Whether the game on `board` in `round` ended by a move on the board.
    pub fn ended_by_move(&self, board: &str, round: u32) -> bool {
        self.games
            .get(&(board.to_string(), round))
            .is_some_and(|g| g.ended_by_move)
    }

    /// Whether the daemon refused a press on `board` in `round` because its game was over.
    pub fn press_after_end(&self, board: &str, round: u32) -> bool {
        self.games
            .get(&(board.to_string(), round))
            .is_some_and(|g| g.press_after_end)
    }

    fn alert(&mut self, payload: &[u8]) {
        let Ok(alert) = serde_json::from_slice::<Value>(payload) else {
            return;
        };
        let (Some("stray_press"), Some(board), Some(message)) = (
            alert["kind"].as_str(),
            alert["board"].as_str(),
            alert["message"].as_str(),
        ) else {
            return;
        };
        if !message.contains("the game is over") {
            return;
        }
        let round = self
            .rows
            .get(board)
            .and_then(|r| r.state.as_ref())
            .and_then(|s| s.round)
            .unwrap_or(0);
        self.games
            .entry((board.to_string(), round))
            .or_default()
            .press_after_end = true;
    }

    /// The `move_made` events of the game on `board` in `round`.
    pub fn published_in(&self, board: &str, round: u32) -> u64 {
        self.games
            .get(&(board.to_string(), round))
            .map_or(0, |g| g.move_made)
    }

    /// Take in one MQTT message; returns the lines worth printing when the output is not
    /// a terminal (one per move, ending or round change).
    pub fn apply(&mut self, topic: &str, payload: &[u8], now: Millis) -> Vec<String> {
        let lines = self.take(topic, payload, now);
        let Some(round) = self.round_line else {
            return lines;
        };
        let whole = self
            .node_boards
            .iter()
            .filter(|(node, _)| self.nodes.get(*node).map(String::as_str) == Some("online"))
            .flat_map(|(_, boards)| boards)
            .all(|b| self.round_boards.contains(b));
        if lines.is_empty() && !whole {
            return lines;
        }
        self.round_line = None;
        let mut out = vec![format!(
            "round {round} started on {}",
            boards_word(self.round_boards.len())
        )];
        out.extend(lines);
        out
    }

    fn take(&mut self, topic: &str, payload: &[u8], now: Millis) -> Vec<String> {
        let Some(rest) = topic.strip_prefix(&self.prefix) else {
            return Vec::new();
        };
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            ["node", node, "status"] => {
                let status: serde_json::Value = serde_json::from_slice(payload).unwrap_or_default();
                let state = status["state"].as_str().unwrap_or("unknown").to_string();
                let boards = status["boards"]
                    .as_array()
                    .map(|b| {
                        b.iter()
                            .filter_map(|b| b.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                self.node_boards.insert((*node).to_string(), boards);
                let line = format!(
                    "node {} {}",
                    crate::intake::command::log_safe(node),
                    crate::intake::command::log_safe(&state)
                );
                // A status is republished on every connection (and, over bridges, may
                // come back as a copy): a line only when the node's state changes.
                match self.nodes.insert((*node).to_string(), state.clone()) {
                    Some(before) if before == state => Vec::new(),
                    _ => vec![line],
                }
            }
            ["event"] => self.hall_event(payload),
            ["alert", _] => {
                self.alert(payload);
                Vec::new()
            }
            ["board", b, "availability"] => {
                self.rows.entry((*b).to_string()).or_default().online = payload == b"online";
                Vec::new()
            }
            ["board", b, "state"] => {
                let Ok(state) = serde_json::from_slice::<StatePayload>(payload) else {
                    return Vec::new();
                };
                self.highest_round = self.highest_round.max(state.round.unwrap_or(0));
                let row = self.rows.entry((*b).to_string()).or_default();
                row.state = Some(state);
                if row.changed {
                    row.changed = false;
                    if row.printed == row.last {
                        return Vec::new();
                    }
                    row.printed = row.last.clone();
                    return vec![self.line(b, now)];
                }
                Vec::new()
            }
            ["board", b, "event"] => {
                let Ok(event) = serde_json::from_slice::<Value>(payload) else {
                    return Vec::new();
                };
                let row = self.rows.entry((*b).to_string()).or_default();
                if let Some(seq) = event["seq"].as_u64() {
                    if seq <= row.event_seq {
                        return Vec::new();
                    }
                    row.event_seq = seq;
                }
                let round = row.state.as_ref().and_then(|s| s.round).unwrap_or(0);
                let game = self.games.entry(((*b).to_string(), round)).or_default();
                let kind = event["event"].as_str().unwrap_or("");
                if matches!(kind, "flag_fell" | "game_ended") && game.ended_at.is_none() {
                    game.ended_at = event["at"].as_i64().map(Millis);
                    game.ended_how = match kind {
                        "flag_fell" => {
                            format!("{}'s flag fell", event["side"].as_str().unwrap_or("?"))
                        }
                        _ => event["termination"].as_str().unwrap_or("ended").to_string(),
                    };
                    game.ended_by_move = kind == "game_ended"
                        && matches!(
                            event["termination"].as_str(),
                            Some(
                                "checkmate"
                                    | "stalemate"
                                    | "dead_position"
                                    | "seventy_five_moves"
                                    | "fivefold_repetition"
                            )
                        );
                }
                match kind {
                    "move_made" => {
                        self.moves_published += 1;
                        game.move_made += 1;
                        row.last = numbered_san(&event);
                        row.last_number = row
                            .last
                            .split_once(' ')
                            .map_or(String::new(), |(n, _)| n.trim_end_matches('.').to_string());
                    }
                    "pressed" => row.changed = true,
                    "clock_started" => {
                        row.last = "started".into();
                        row.changed = true;
                    }
                    "flag_fell" => {
                        row.last = format!("{} flag", event["side"].as_str().unwrap_or("?"));
                        row.changed = true;
                    }
                    "game_ended" => {
                        // The result is news though the last move was said already.
                        row.printed.clear();
                        row.changed = true;
                    }
                    _ => {}
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn hall_event(&mut self, payload: &[u8]) -> Vec<String> {
        let Ok(event) = serde_json::from_slice::<HallEvent>(payload) else {
            return Vec::new();
        };
        self.news = match event {
            // Another node's part of a round already announced: the footer counts its
            // boards, the log does not say it again.
            HallEvent::RoundStarted { round, boards, .. }
                if self.started.last() == Some(&round) && self.round == Some(round) =>
            {
                self.round_boards.extend(boards);
                self.news = format!(
                    "round {round} started on {}",
                    boards_word(self.round_boards.len())
                );
                return Vec::new();
            }
            HallEvent::RoundFinished { round, .. } if self.finished_rounds.contains(&round) => {
                return Vec::new();
            }
            HallEvent::RoundStarted { round, boards, .. } => {
                self.round = Some(round);
                self.round_boards = boards.iter().cloned().collect();
                self.started.push(round);
                self.highest_round = self.highest_round.max(round);
                for b in &boards {
                    let row = self.rows.entry(b.clone()).or_default();
                    row.last.clear();
                    row.last_number.clear();
                    row.printed.clear();
                    row.changed = false;
                }
                // Said when the other nodes' parts are in, or before the next line.
                self.round_line = Some(round);
                self.news = format!("round {round} started on {}", boards_word(boards.len()));
                return Vec::new();
            }
            HallEvent::RoundFinished { round, results, .. } => {
                self.finished_rounds.push(round);
                let scores: Vec<String> = results
                    .iter()
                    .map(|r| format!("{} {}", r.board, r.score))
                    .collect();
                format!(
                    "round {round} finished: every game has a result ({})",
                    scores.join(", ")
                )
            }
        };
        vec![self.news.clone()]
    }

    /// The games of the current round that have a result, and how many it has.
    pub fn results(&self) -> (usize, usize) {
        let games = self
            .rows
            .values()
            .filter_map(|r| r.state.as_ref())
            .filter(|s| s.round.is_some() && s.round == self.round);
        let (mut done, mut all) = (0, 0);
        for s in games {
            all += 1;
            if s.result.is_some() {
                done += 1;
            }
        }
        (done, all)
    }

    /// One board as a line for a log.
    fn line(&self, board: &str, now: Millis) -> String {
        let Some(row) = self.rows.get(board) else {
            return String::new();
        };
        let Some(s) = &row.state else {
            return format!("{board} no state yet");
        };
        let names = match (&s.white, &s.black) {
            (Some(w), Some(b)) => format!("{} - {}", w.name, b.name),
            _ => "no game".into(),
        };
        match &s.result {
            Some(r) => format!(
                "{board} game over: {} ({names}, {} moves)",
                describe_result(r),
                s.white.as_ref().map_or(0, |w| w.moves)
            ),
            None => format!(
                "{board} {:<14} white {:>7} black {:>7} ({names})",
                row.last,
                clock(s, Color::White, now),
                clock(s, Color::Black, now)
            ),
        }
    }

    /// The whole table for a terminal, one line per board.
    pub fn render(&self, now: Millis) -> Vec<String> {
        let mut out = vec![format!(
            "{:<10} {:<16} {:<16} {:>7} {:>7} {:>4}  {:<14} {}",
            "BOARD", "WHITE", "BLACK", "WHITE", "BLACK", "MOVE", "LAST", "RESULT"
        )];
        for (id, row) in &self.rows {
            let Some(s) = &row.state else {
                out.push(format!("{id:<10} (waiting for the daemon)"));
                continue;
            };
            let name = |side: &Option<crate::mqtt::payload::SideState>| {
                side.as_ref()
                    .map_or(String::new(), |x| truncate(&x.name, 16))
            };
            let mark = |c: Color| {
                let t = clock(s, c, now);
                if s.running == Some(c) {
                    format!("*{t}")
                } else {
                    t
                }
            };
            let result = match (&s.result, s.phase.as_str(), row.online) {
                (Some(r), _, _) => short_result(r),
                (None, _, false) => "board offline".into(),
                (None, "idle", _) => "no game".into(),
                (None, phase, _) => phase.to_string(),
            };
            let has_game = s.white.is_some();
            out.push(format!(
                "{:<10} {:<16} {:<16} {:>7} {:>7} {:>4}  {:<14} {}",
                id,
                name(&s.white),
                name(&s.black),
                if has_game {
                    mark(Color::White)
                } else {
                    String::new()
                },
                if has_game {
                    mark(Color::Black)
                } else {
                    String::new()
                },
                move_number(s, row),
                truncate(&row.last, 14),
                result
            ));
        }
        out
    }

    /// Boards whose availability is `online`.
    pub fn online_boards(&self) -> usize {
        self.rows.values().filter(|r| r.online).count()
    }

    /// `online` while any node is, `offline` when every node known is not, `unknown`
    /// before any node is heard of.
    pub fn status(&self) -> &str {
        if self.nodes.values().any(|s| s == "online") {
            "online"
        } else if self.nodes.is_empty() {
            "unknown"
        } else {
            "offline"
        }
    }

    /// The round started last.
    pub fn round(&self) -> Option<u32> {
        self.round
    }

    /// Whether `round`'s `round_started` arrived.
    pub fn started(&self, round: u32) -> bool {
        self.started.contains(&round)
    }

    /// The highest round number seen: the demo's next round comes after it, whoever
    /// started the rounds so far.
    pub fn highest_round(&self) -> u32 {
        self.highest_round
    }

    /// The board's latest state.
    pub fn state(&self, board: &str) -> Option<&StatePayload> {
        self.rows.get(board).and_then(|r| r.state.as_ref())
    }
}

/// A result in a table cell: `1-0 mate`, `0-1 flag`, `1/2 dead position`.
fn short_result(r: &GameResult) -> String {
    let score = match r.score {
        Score::WhiteWins => "1-0",
        Score::BlackWins => "0-1",
        Score::Draw => "1/2",
        Score::BothLose => "0-0",
        Score::Annulled => "annulled",
    };
    let why = match &r.termination {
        Termination::Checkmate => "mate",
        Termination::Stalemate => "stalemate",
        Termination::DeadPosition => "dead position",
        Termination::SeventyFiveMoves => "75 moves",
        Termination::FivefoldRepetition => "repetition",
        Termination::Flag { .. } => "flag",
        Termination::FlagOpponentCannotMate { .. } => "flag, no mate",
        Termination::Default { .. } => "default",
        Termination::Arbiter { .. } => "arbiter",
        Termination::InvalidSealedMove { .. }
        | Termination::InvalidSealedMoveOpponentCannotMate { .. } => "sealed move",
    };
    format!("{score} {why}")
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// `12. Nf3` or `12... Nf6` from a `move_made` event (its FEN is the position after).
fn numbered_san(event: &Value) -> String {
    let san = event["san"].as_str().unwrap_or("?");
    let full: u32 = event["fen"]
        .as_str()
        .and_then(|f| f.split(' ').nth(5))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    match event["side"].as_str() {
        Some("black") => format!("{}... {san}", full.saturating_sub(1).max(1)),
        _ => format!("{full}. {san}"),
    }
}

/// The move number from the position; while a move is owed by a press (`move_pending`:
/// the FEN is the position before it), that number and `…` for the move the board has
/// yet to show; with no position at all, the last move seen and `…`.
fn move_number(s: &StatePayload, row: &Row) -> String {
    match s.fen.as_deref() {
        Some(f) => {
            let n = f.split(' ').nth(5).unwrap_or_default();
            if s.move_pending {
                format!("{n}…")
            } else {
                n.to_string()
            }
        }
        None if s.white.is_some() && s.result.is_none() => format!("{}…", row.last_number),
        None => String::new(),
    }
}

/// What a dashboard shows: the published remaining time, less what has run since `as_of`
/// on the running side.
pub fn remaining(s: &StatePayload, c: Color, now: Millis) -> Option<Millis> {
    let side = match c {
        Color::White => s.white.as_ref()?,
        Color::Black => s.black.as_ref()?,
    };
    let mut ms = side.remaining_ms.0;
    if s.running == Some(c) && s.result.is_none() {
        ms -= (now.0 - s.as_of.0).max(0);
    }
    Some(Millis(ms.max(0)))
}

/// `2:41` as a clock shows it (whole seconds rounded up), tenths under ten seconds.
fn clock(s: &StatePayload, c: Color, now: Millis) -> String {
    let Some(Millis(ms)) = remaining(s, c, now) else {
        return String::new();
    };
    if ms < 10_000 {
        format!("{}.{}", ms / 1000, ms % 1000 / 100)
    } else {
        let secs = (ms + 999) / 1000;
        format!("{}:{:02}", secs / 60, secs % 60)
    }
}

/// "1 board", "3 boards".
fn boards_word(n: usize) -> String {
    if n == 1 {
        "1 board".to_string()
    } else {
        format!("{n} boards")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = r#"{"board":"board-001","seq":7,"as_of":1000000,"phase":"running","online":true,"round":1,
        "running":"black","turn":"black","white_side":"left",
        "white":{"name":"Ada Morozova","remaining_ms":161000,"display_ms":161000,"delay_left_ms":0,"moves":2,"period":1,"flagged_at":null,"present":true},
        "black":{"name":"Lev Sands","remaining_ms":170500,"display_ms":170500,"delay_left_ms":0,"moves":1,"period":1,"flagged_at":null,"present":true},
        "fen":"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2","result":null,"pending_flag":null,
        "both_flags_order_unknown":false,"time_control":"180+2","authoritative":false}"#;

    #[test]
    fn a_node_status_is_a_line_only_when_its_state_changes() {
        let mut t = Table::new("demo");
        let status = |state: &str| format!(r#"{{"node":"demo-1","state":"{state}"}}"#);
        let topic = "hallclock/demo/node/demo-1/status";
        let online = status("online");
        let offline = status("offline");
        assert_eq!(
            t.apply(topic, online.as_bytes(), Millis(0)),
            ["node demo-1 online"]
        );
        assert!(t.apply(topic, online.as_bytes(), Millis(1)).is_empty());
        assert_eq!(
            t.apply(topic, offline.as_bytes(), Millis(2)),
            ["node demo-1 offline"]
        );
    }

    #[test]
    fn an_event_delivered_twice_is_taken_once() {
        let mut t = Table::new("demo");
        let topic = "hallclock/demo/board/board-001/event";
        let mv = r#"{"event":"move_made","seq":4,"at":1,"san":"e4","ply":1,"side":"white"}"#;
        t.apply(topic, mv.as_bytes(), Millis(0));
        t.apply(topic, mv.as_bytes(), Millis(1));
        assert_eq!(t.moves_published, 1, "the copy is not a second move");
        let next = r#"{"event":"move_made","seq":5,"at":2,"san":"e5","ply":2,"side":"black"}"#;
        t.apply(topic, next.as_bytes(), Millis(2));
        assert_eq!(t.moves_published, 2);
    }

    #[test]
    fn a_round_announced_by_every_node_is_one_line_and_counts_every_board() {
        let mut t = Table::new("demo");
        let topic = "hallclock/demo/event";
        let started = |boards: &str| {
            format!(
                r#"{{"event":"round_started","at":1,"round":2,"start":1,"boards":{boards},"arbiter":"a"}}"#
            )
        };
        let first = started(r#"["board-001","board-002"]"#);
        let second = started(r#"["board-003"]"#);
        assert_eq!(
            t.apply(topic, first.as_bytes(), Millis(0)),
            ["round 2 started on 2 boards"]
        );
        assert!(t.apply(topic, second.as_bytes(), Millis(1)).is_empty());
        assert_eq!(t.news, "round 2 started on 3 boards");
        let finished = r#"{"event":"round_finished","at":2,"round":2,"results":[]}"#;
        assert_eq!(t.apply(topic, finished.as_bytes(), Millis(2)).len(), 1);
        assert!(t.apply(topic, finished.as_bytes(), Millis(3)).is_empty());
        // The next round is news again.
        let third = r#"{"event":"round_started","at":4,"round":3,"start":4,"boards":["board-001"],"arbiter":"a"}"#;
        assert_eq!(
            t.apply(topic, third.as_bytes(), Millis(4)),
            ["round 3 started on 1 board"]
        );
    }

    /// Three nodes each announce their part of one round: one line, when the last part
    /// is in, with the whole hall's count (not the first node's). A round on some of the
    /// boards only is said before the next line.
    #[test]
    fn a_round_line_waits_for_every_online_node_s_part() {
        let mut t = Table::new("demo");
        let status = |node: &str, boards: &str| {
            let topic = format!("hallclock/demo/node/{node}/status");
            let payload = format!(
                r#"{{"node":"{node}","state":"online","boards":{boards},"version":"0","boot":1}}"#
            );
            (topic, payload)
        };
        for (node, boards) in [
            ("n1", r#"["board-001","board-002"]"#),
            ("n2", r#"["board-003"]"#),
            ("n3", r#"["board-004"]"#),
        ] {
            let (topic, payload) = status(node, boards);
            assert_eq!(t.apply(&topic, payload.as_bytes(), Millis(0)).len(), 1);
        }
        // n3 goes away: its boards are not waited for.
        let (topic, _) = status("n3", "[]");
        let gone =
            r#"{"node":"n3","state":"offline","boards":["board-004"],"version":"0","boot":1}"#;
        assert_eq!(
            t.apply(&topic, gone.as_bytes(), Millis(0)),
            ["node n3 offline"]
        );
        let topic = "hallclock/demo/event";
        let started = |round: u32, boards: &str| {
            format!(
                r#"{{"event":"round_started","at":1,"round":{round},"start":1,"boards":{boards},"arbiter":"a"}}"#
            )
        };
        let first = started(2, r#"["board-001","board-002"]"#);
        assert!(t.apply(topic, first.as_bytes(), Millis(1)).is_empty());
        assert_eq!(t.news, "round 2 started on 2 boards");
        let second = started(2, r#"["board-003"]"#);
        assert_eq!(
            t.apply(topic, second.as_bytes(), Millis(2)),
            ["round 2 started on 3 boards"]
        );
        // Said once: a copy of an announcement (a bridge's resend) says nothing.
        assert!(t.apply(topic, second.as_bytes(), Millis(3)).is_empty());
        // An arbiter's round on one board: said before the next line, whatever it is.
        let third = started(3, r#"["board-001"]"#);
        assert!(t.apply(topic, third.as_bytes(), Millis(4)).is_empty());
        let finished = r#"{"event":"round_finished","at":5,"round":3,"results":[]}"#;
        let lines = t.apply(topic, finished.as_bytes(), Millis(5));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], "round 3 started on 1 board");
        assert!(lines[1].starts_with("round 3 finished"), "{lines:?}");
    }

    #[test]
    fn the_running_side_counts_down_from_as_of() {
        let mut t = Table::new("demo");
        t.apply(
            "hallclock/demo/board/board-001/state",
            STATE.as_bytes(),
            Millis(1_000_000),
        );
        let s = t.rows["board-001"].state.clone().unwrap();
        assert_eq!(
            remaining(&s, Color::Black, Millis(1_003_000)),
            Some(Millis(167_500))
        );
        assert_eq!(
            remaining(&s, Color::White, Millis(1_003_000)),
            Some(Millis(161_000))
        );
        let lines = t.render(Millis(1_003_000));
        assert!(lines[1].contains("Ada Morozova"), "{}", lines[1]);
        assert!(lines[1].contains("2:41"), "{}", lines[1]);
        assert!(lines[1].contains("*2:48"), "{}", lines[1]);
    }

    #[test]
    fn a_press_whose_move_is_not_read_yet_does_not_repeat_the_last_line() {
        let mut t = Table::new("demo");
        let event = |seq: u32, body: &str| {
            format!(r#"{{"board":"board-001","seq":{seq},"at":999000,{body}}}"#)
        };
        let apply = |t: &mut Table, kind: &str, payload: &str| {
            t.apply(
                &format!("hallclock/demo/board/board-001/{kind}"),
                payload.as_bytes(),
                Millis(1_000_000),
            )
        };
        apply(
            &mut t,
            "event",
            &event(1, r#""event":"clock_started","side":"white""#),
        );
        assert_eq!(
            apply(&mut t, "state", STATE).len(),
            1,
            "the start is a line"
        );
        // White pressed; the move is read once the board is still, after the press.
        apply(
            &mut t,
            "event",
            &event(2, r#""event":"pressed","side":"white""#),
        );
        assert!(
            apply(&mut t, "state", STATE).is_empty(),
            "\"started\" said twice"
        );
        apply(
            &mut t,
            "event",
            &event(
                3,
                r#""event":"move_made","side":"white","uci":"g1f3","san":"Nf3","fen":null"#,
            ),
        );
        apply(
            &mut t,
            "event",
            &event(4, r#""event":"pressed","side":"black""#),
        );
        let lines = apply(&mut t, "state", STATE);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("Nf3"), "{}", lines[0]);
        // A game ended with no new move (an arbiter's result) is still a line.
        apply(
            &mut t,
            "event",
            &event(
                5,
                r#""event":"game_ended","result":"1-0","termination":"arbiter""#,
            ),
        );
        assert_eq!(apply(&mut t, "state", STATE).len(), 1, "the end is a line");
    }

    #[test]
    fn while_a_move_is_owed_the_move_column_shows_the_last_move_and_an_ellipsis() {
        let mut t = Table::new("demo");
        let ev = r#"{"board":"board-001","seq":6,"event":"move_made","at":999000,"side":"white","uci":"g1f3","san":"Nf3",
            "fen":"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"}"#;
        t.apply(
            "hallclock/demo/board/board-001/event",
            ev.as_bytes(),
            Millis(0),
        );
        let owed = STATE.replace(
            r#""fen":"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2""#,
            r#""fen":null"#,
        );
        assert_ne!(owed, STATE);
        t.apply(
            "hallclock/demo/board/board-001/state",
            owed.as_bytes(),
            Millis(1_000_000),
        );
        let lines = t.render(Millis(1_000_000));
        assert!(lines[1].contains("   2…  2. Nf3"), "{}", lines[1]);
        // Black pressed before the board showed the move: the position before it, pending.
        let pending = STATE.replace(
            r#""fen":"#,
            r#""move_pending":true,"pending_side":"black","fen":"#,
        );
        assert_ne!(pending, STATE);
        t.apply(
            "hallclock/demo/board/board-001/state",
            pending.as_bytes(),
            Millis(1_000_000),
        );
        let lines = t.render(Millis(1_000_000));
        assert!(lines[1].contains("   2…  2. Nf3"), "{}", lines[1]);
        // With the position known, the number comes from it.
        t.apply(
            "hallclock/demo/board/board-001/state",
            STATE.as_bytes(),
            Millis(1_000_000),
        );
        let lines = t.render(Millis(1_000_000));
        assert!(lines[1].contains("    2  2. Nf3"), "{}", lines[1]);
    }

    #[test]
    fn moves_are_counted_per_game_and_those_completed_after_its_end_apart() {
        use crate::demo::player::MadeMove;
        let mut t = Table::new("demo");
        t.apply(
            "hallclock/demo/board/board-001/state",
            STATE.as_bytes(),
            Millis(0),
        );
        let ev = r#"{"board":"board-001","seq":6,"event":"move_made","at":999000,"side":"white","uci":"g1f3","san":"Nf3","fen":null}"#;
        t.apply(
            "hallclock/demo/board/board-001/event",
            ev.as_bytes(),
            Millis(0),
        );
        let flag =
            r#"{"board":"board-001","seq":7,"event":"flag_fell","at":1001000,"side":"black"}"#;
        t.apply(
            "hallclock/demo/board/board-001/event",
            flag.as_bytes(),
            Millis(0),
        );
        let m = |at: Option<i64>| MadeMove {
            board: "board-001".into(),
            round: 1,
            made_at: Millis(at.unwrap_or(1_000_000) - 100),
            completed_at: at.map(Millis),
        };
        let made = [
            m(Some(998_000)),
            m(Some(1_000_000)),
            m(Some(1_002_000)),
            m(None),
        ];
        let count = crate::demo::count_moves(&made, &t);
        assert_eq!(
            count,
            crate::demo::MoveCount {
                made: 2,
                published: 1,
                lost: 1,
                after_end: 2,
                at_the_flag: 0,
                odd_games: vec![
                    "board-001 round 1: 2 moves completed, 1 move_made; its last completed \
                     1000 ms before the end (black's flag fell); no press refused"
                        .into()
                ],
            }
        );
        assert!(count.line().ends_with("lost: 1"), "{}", count.line());
        // A press 50 ms before the flag that the daemon refused as after it (its alert
        // says so): that move is not the game's; it excuses that one move only.
        let alert = r#"{"id":"board-001-stray-press","board":"board-001","kind":"stray_press","severity":"info",
            "message":"lever press by black on board board-001 not accepted: the game is over (1-0, black's flag fell)","since":1001001,"error":"game_over"}"#;
        t.apply(
            "hallclock/demo/alert/board-001-stray-press",
            alert.as_bytes(),
            Millis(0),
        );
        let raced = [m(Some(998_000)), m(Some(1_000_000)), m(Some(1_000_950))];
        let count = crate::demo::count_moves(&raced, &t);
        assert_eq!((count.made, count.at_the_flag, count.lost), (2, 1, 1));
        // Without the refusal on MQTT, the same move is lost.
        let mut quiet = Table::new("demo");
        quiet.apply(
            "hallclock/demo/board/board-001/state",
            STATE.as_bytes(),
            Millis(0),
        );
        quiet.apply(
            "hallclock/demo/board/board-001/event",
            flag.as_bytes(),
            Millis(0),
        );
        let count = crate::demo::count_moves(&raced, &quiet);
        assert_eq!((count.made, count.at_the_flag, count.lost), (3, 0, 3));
    }

    #[test]
    fn a_move_then_a_press_prints_one_line_with_the_move() {
        let mut t = Table::new("demo");
        let ev = r#"{"board":"board-001","seq":6,"event":"move_made","at":999000,"side":"white","uci":"g1f3","san":"Nf3",
            "fen":"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"}"#;
        let topic = "hallclock/demo/board/board-001/event";
        assert!(t.apply(topic, ev.as_bytes(), Millis(0)).is_empty());
        let pressed = r#"{"board":"board-001","seq":7,"event":"pressed","at":1000000,"side":"white","charged_ms":3000,"increment_ms":2000,"remaining_ms":161000,"moves":2}"#;
        assert!(t.apply(topic, pressed.as_bytes(), Millis(0)).is_empty());
        let lines = t.apply(
            "hallclock/demo/board/board-001/state",
            STATE.as_bytes(),
            Millis(1_000_000),
        );
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("board-001 2. Nf3"), "{}", lines[0]);
        assert!(lines[0].contains("black    2:51"), "{}", lines[0]);
    }
}
