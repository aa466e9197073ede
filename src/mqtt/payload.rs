//! What goes over MQTT: the topic scheme of DESIGN.md §5 and every payload, as types.
//! docs/MQTT-API.md documents them; a test parses its examples into these types.

use serde::{Deserialize, Serialize};

use crate::rules::game::{Event, GameResult, PendingFlag, Phase, View};
use crate::rules::placement::Side;
use crate::rules::{Color, Millis};

// Kept here so every payload a subscriber reads is named from one module.
pub use crate::alert::{AlertKind, Severity};
pub use crate::intake::answers::{ResponsePayload, ResponseStatus};

/// Topic names under `hallclock/<hall>/`.
#[derive(Debug, Clone)]
pub struct Topics {
    base: String,
}

impl Topics {
    pub fn new(hall: &str) -> Topics {
        Topics {
            base: format!("hallclock/{hall}"),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn status(&self) -> String {
        format!("{}/status", self.base)
    }

    pub fn info(&self) -> String {
        format!("{}/info", self.base)
    }

    /// Retained, written only by the node `node`: whether it is up (its last will says
    /// `offline`) and which boards it owns.
    pub fn node_status(&self, node: &str) -> String {
        format!("{}/node/{node}/status", self.base)
    }

    /// Retained, written only by the node `node`: its boards, as `info` lists them.
    pub fn node_info(&self, node: &str) -> String {
        format!("{}/node/{node}/info", self.base)
    }

    /// A node's clock reading, not retained (issue 23: clocks more than a second apart).
    pub fn node_clock(&self, node: &str) -> String {
        format!("{}/node/{node}/clock", self.base)
    }

    /// Every node's clock reading.
    pub fn node_clock_filter(&self) -> String {
        format!("{}/node/+/clock", self.base)
    }

    /// The node a `node/<node>/clock` topic is of.
    pub fn node_of_clock_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        let rest = topic.strip_prefix(&self.base)?.strip_prefix("/node/")?;
        rest.strip_suffix("/clock").filter(|n| !n.contains('/'))
    }

    /// Retained, written only by the node `node`: the hall's session as that node derives
    /// it from every node's boards (the local feed has it as `session`).
    pub fn node_session(&self, node: &str) -> String {
        format!("{}/node/{node}/session", self.base)
    }

    /// Every node's status, for the claims of board ids across the hall.
    pub fn node_status_filter(&self) -> String {
        format!("{}/node/+/status", self.base)
    }

    /// The node a `node/<node>/status` topic is of.
    pub fn node_of_status_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        let rest = topic.strip_prefix(&self.base)?.strip_prefix("/node/")?;
        rest.strip_suffix("/status").filter(|n| !n.contains('/'))
    }

    /// Every node's info, for the boards (and their numbers) of the whole hall.
    pub fn node_info_filter(&self) -> String {
        format!("{}/node/+/info", self.base)
    }

    /// The node a `node/<node>/info` topic is of.
    pub fn node_of_info_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        let rest = topic.strip_prefix(&self.base)?.strip_prefix("/node/")?;
        rest.strip_suffix("/info").filter(|n| !n.contains('/'))
    }

    pub fn hall_set(&self) -> String {
        format!("{}/set", self.base)
    }

    pub fn hall_response(&self) -> String {
        format!("{}/response", self.base)
    }

    /// Requests that read (`replay`), for viewers, who may not write `set`.
    pub fn ask(&self) -> String {
        format!("{}/ask", self.base)
    }

    /// Where a replay for the asker `id` goes (its MQTT client id, by the example ACL).
    pub fn reply(&self, id: &str) -> String {
        format!("{}/reply/{id}", self.base)
    }

    pub fn hall_event(&self) -> String {
        format!("{}/event", self.base)
    }

    /// The hall's session clock and where every game is in the adjournment procedure
    /// (docs/ADJOURNMENT.md, "Driving it over MQTT"): in the local feed (the dashboard) only;
    /// on MQTT each node writes its own, [`Topics::node_session`].
    pub fn session(&self) -> String {
        format!("{}/session", self.base)
    }

    /// The hall screens' banner in the local feed (the dashboard and `/public`); on MQTT
    /// each node writes its own, [`Topics::node_announce`].
    pub fn announce(&self) -> String {
        format!("{}/announce", self.base)
    }

    /// Retained, written only by the node `node`: the banner the chief arbiter put on
    /// every hall screen, or its clear.
    pub fn node_announce(&self, node: &str) -> String {
        format!("{}/node/{node}/announce", self.base)
    }

    pub fn board_set_filter(&self) -> String {
        format!("{}/board/+/set", self.base)
    }

    pub fn availability(&self, board: &str) -> String {
        format!("{}/board/{board}/availability", self.base)
    }

    pub fn state(&self, board: &str) -> String {
        format!("{}/board/{board}/state", self.base)
    }

    pub fn event(&self, board: &str) -> String {
        format!("{}/board/{board}/event", self.base)
    }

    /// Retained: the board's game as PGN text (docs/BROADCAST.md), after every change.
    pub fn pgn(&self, board: &str) -> String {
        format!("{}/board/{board}/pgn", self.base)
    }

    pub fn board_response(&self, board: &str) -> String {
        format!("{}/board/{board}/response", self.base)
    }

    pub fn alert(&self, id: &str) -> String {
        format!("{}/alert/{id}", self.base)
    }

    /// `board/+/<kind>`: one retained per-board topic of every node (issue 23, the whole
    /// hall on every dashboard).
    pub fn board_kind_filter(&self, kind: BoardTopic) -> String {
        format!("{}/board/+/{}", self.base, kind.name())
    }

    /// The board and kind of a retained per-board topic (`state`, `availability`, `pgn`).
    /// `board/<b>/<kind>`: one of the board's retained texts a dashboard shows.
    pub fn board_text(&self, board: &str, kind: BoardTopic) -> String {
        format!("{}/board/{board}/{}", self.base, kind.name())
    }

    pub fn board_topic<'a>(&self, topic: &'a str) -> Option<(&'a str, BoardTopic)> {
        let rest = topic.strip_prefix(&self.base)?.strip_prefix("/board/")?;
        let (board, kind) = rest.split_once('/')?;
        let kind = BoardTopic::ALL.into_iter().find(|k| k.name() == kind)?;
        Some((board, kind))
    }

    /// Every board's `event` topic: the other nodes' events, for this node's dashboard.
    pub fn board_event_filter(&self) -> String {
        format!("{}/board/+/event", self.base)
    }

    /// The board of a `board/<b>/event` topic.
    pub fn board_of_event_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        self.board_of(topic, "event")
    }

    /// Every board's answers: a dashboard's board command for another node's board waits
    /// for that node's answer here (hall/forward.rs).
    pub fn board_response_filter(&self) -> String {
        format!("{}/board/+/response", self.base)
    }

    /// The board of a `board/<b>/response` topic.
    pub fn board_of_response_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        self.board_of(topic, "response")
    }

    /// A board's `set` topic, where its commands go.
    pub fn board_set(&self, board: &str) -> String {
        format!("{}/board/{board}/set", self.base)
    }

    /// The board a `board/<b>/set` topic addresses.
    pub fn board_of_set_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        self.board_of(topic, "set")
    }

    /// The board of `board/<b>/<kind>` (one level: what a `board/+/<kind>` filter brings).
    fn board_of<'a>(&self, topic: &'a str, kind: &str) -> Option<&'a str> {
        let rest = topic.strip_prefix(&self.base)?.strip_prefix("/board/")?;
        rest.strip_suffix(kind)?
            .strip_suffix('/')
            .filter(|b| !b.contains('/'))
    }
}

/// The retained per-board topics a dashboard shows, which every node mirrors from the
/// others into its local feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardTopic {
    State,
    Availability,
    Pgn,
}

impl BoardTopic {
    pub const ALL: [BoardTopic; 3] = [BoardTopic::State, BoardTopic::Availability, BoardTopic::Pgn];

    pub fn name(self) -> &'static str {
        match self {
            BoardTopic::State => "state",
            BoardTopic::Availability => "availability",
            BoardTopic::Pgn => "pgn",
        }
    }
}

/// `board/<b>/state`, retained: everything a display needs to show the board and count
/// down by itself (`remaining_ms` as of `as_of`, and which side runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatePayload {
    pub board: String,
    /// The board's event sequence number this state follows.
    pub seq: u64,
    pub as_of: Millis,
    /// `idle` (no game), `scheduled`, `running`, `paused`, `finished`.
    pub phase: String,
    /// Who stopped the clocks, when paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<serde_json::Value>,
    pub online: bool,
    pub round: Option<u32>,
    pub running: Option<Color>,
    pub turn: Option<Color>,
    /// Which side of the clock White sits on (6.4).
    pub white_side: Side,
    pub white: Option<SideState>,
    pub black: Option<SideState>,
    /// The position; while `move_pending`, the last known one (before the owed moves).
    /// `null` only when the position is not known at all.
    pub fen: Option<String>,
    /// 6.7a with an e-board: presses came before the board showed their moves; `fen` is
    /// the position before them until the moves are read.
    #[serde(default)]
    pub move_pending: bool,
    /// The side whose move is owed first, while `move_pending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_side: Option<Color>,
    /// How many presses wait for their moves, while `move_pending`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending_plies: u8,
    pub result: Option<GameResult>,
    pub pending_flag: Option<PendingFlag>,
    pub both_flags_order_unknown: bool,
    pub time_control: Option<String>,
    /// 6.14: displays are not evidence; claims go through the arbiter.
    pub authoritative: bool,
    /// 9.1 / I.4: the standing draw offer (`{side, at}`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_offer: Option<serde_json::Value>,
    /// The nominal end of the current session (I.1.2, I.14), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_end: Option<Millis>,
    /// Guidelines I: the game's stage in sealing and resumption and its envelopes, as the
    /// core's view has it: commitments only, never a sealed move before its opening.
    /// Absent for a game never adjourned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjournment: Option<serde_json::Value>,
    /// Observe mode (issue 24): the board's clock is set by hand and only read; its
    /// times are the official ones. Absent (false) on a board the daemon drives.
    #[serde(default, skip_serializing_if = "is_false")]
    pub observed: bool,
    /// The game's piece letters (`[defaults] piece_letters`, a round's, or the
    /// arbiter's): a display shows moves in them. Absent for English.
    #[serde(default, skip_serializing_if = "is_english")]
    pub piece_letters: crate::rules::adjournment::NotationLanguage,
}

fn is_english(l: &crate::rules::adjournment::NotationLanguage) -> bool {
    *l == crate::rules::adjournment::NotationLanguage::En
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideState {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fide_id: Option<u64>,
    /// The FIDE title the pairing gave (`GM`, `WIM`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The rating the pairing gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<u32>,
    pub remaining_ms: Millis,
    pub display_ms: Millis,
    pub delay_left_ms: Millis,
    pub moves: u32,
    pub period: u32,
    pub flagged_at: Option<Millis>,
    pub present: bool,
}

impl StatePayload {
    /// A board with no game.
    pub fn idle(board: &str, seq: u64, as_of: Millis, online: bool, white_side: Side) -> Self {
        StatePayload {
            board: board.to_string(),
            seq,
            as_of,
            phase: "idle".into(),
            paused_by: None,
            online,
            round: None,
            running: None,
            turn: None,
            white_side,
            white: None,
            black: None,
            fen: None,
            move_pending: false,
            pending_side: None,
            pending_plies: 0,
            result: None,
            pending_flag: None,
            both_flags_order_unknown: false,
            time_control: None,
            authoritative: false,
            draw_offer: None,
            session_end: None,
            adjournment: None,
            observed: false,
            piece_letters: Default::default(),
        }
    }

    /// A board's game, from the core's view.
    #[allow(clippy::too_many_arguments)]
    pub fn from_view(
        board: &str,
        seq: u64,
        view: &View,
        online: bool,
        round: Option<u32>,
        white_side: Side,
        fide: (Option<u64>, Option<u64>),
        time_control: String,
    ) -> Self {
        let side = |s: &crate::rules::game::SideView, fide_id| SideState {
            name: s.name.clone(),
            fide_id,
            title: s.info.title.clone(),
            rating: s.info.rating,
            remaining_ms: s.remaining_ms,
            display_ms: s.display_ms,
            delay_left_ms: s.delay_left_ms,
            moves: s.moves,
            period: s.period,
            flagged_at: s.flagged_at,
            present: s.present,
        };
        let (phase, paused_by) = match &view.phase {
            Phase::Scheduled => ("scheduled", None),
            Phase::Running => ("running", None),
            Phase::Paused(by) => ("paused", serde_json::to_value(by).ok()),
            Phase::Finished => ("finished", None),
        };
        StatePayload {
            board: board.to_string(),
            seq,
            as_of: view.as_of,
            phase: phase.into(),
            paused_by,
            online,
            round,
            running: view.running,
            turn: Some(view.turn),
            white_side,
            white: Some(side(&view.white, fide.0)),
            black: Some(side(&view.black, fide.1)),
            fen: view.fen.clone(),
            move_pending: view.move_pending,
            pending_side: view.pending_side,
            pending_plies: view.pending_plies,
            result: view.result.clone(),
            pending_flag: view.pending_flag.clone(),
            both_flags_order_unknown: view.both_flags_order_unknown,
            time_control: Some(time_control),
            authoritative: false,
            draw_offer: view
                .draw_offer
                .as_ref()
                .and_then(|d| serde_json::to_value(d).ok()),
            session_end: view.session_end,
            adjournment: view
                .adjournment
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
            observed: false,
            piece_letters: view.piece_letters,
        }
    }
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `board/<b>/event`: one core event with the board's sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventPayload {
    pub board: String,
    pub seq: u64,
    #[serde(flatten)]
    pub event: Event,
}

/// `event` (hall level): round lifecycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HallEvent {
    RoundStarted {
        at: Millis,
        round: u32,
        start: Millis,
        boards: Vec<String>,
        arbiter: String,
    },
    /// Every game of the round has a result.
    RoundFinished {
        at: Millis,
        round: u32,
        results: Vec<BoardResult>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardResult {
    pub board: String,
    pub white: String,
    pub black: String,
    pub score: String,
    pub termination: String,
    /// The result as TRF codes (`1 = 0 + -`), for the pairing program; absent for an
    /// annulled game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trf_white: Option<crate::trf::ResultCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trf_black: Option<crate::trf::ResultCode>,
    /// The players' starting ranks, when the round was started from a TRF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_rank: Option<u32>,
}

impl BoardResult {
    /// A result line with its TRF codes; score and termination texts are the caller's.
    pub fn new(
        board: String,
        white: String,
        black: String,
        result: &crate::rules::game::GameResult,
    ) -> BoardResult {
        let codes = crate::trf::round::codes(result);
        BoardResult {
            board,
            white,
            black,
            score: String::new(),
            termination: String::new(),
            trf_white: codes.map(|c| c.0),
            trf_black: codes.map(|c| c.1),
            white_rank: None,
            black_rank: None,
        }
    }
}

/// `info`, retained: what this daemon serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InfoPayload {
    pub version: String,
    pub hall: String,
    pub boards: Vec<BoardInfo>,
    pub defaults: DefaultsInfo,
    pub round: Option<RoundInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardInfo {
    pub id: String,
    pub port: String,
    pub white_side: Side,
    /// The tournament board number played here (the `Board` tag, `game-B.pgn`).
    pub number: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefaultsInfo {
    pub time_control: String,
    pub default_time_ms: Millis,
    pub flag_mode: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundInfo {
    pub round: u32,
    pub start: Millis,
    pub time_control: String,
    pub boards: Vec<String>,
    /// The round's event (the PGN's `Event`: its `start_round`'s, its TRF's name or
    /// `[broadcast] event`), the `/public` heading; absent when none is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Its place (`Site`), likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// `node/<node>/status`, retained: one hall server's birth and death (Sparkplug B's
/// shape: each node its own topic and last will; the hall is derived from them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatusPayload {
    pub node: String,
    pub state: NodeState,
    /// The board ids this node owns (the last will: those it owned when it connected).
    pub boards: Vec<String>,
    pub version: String,
    /// When this run of the node started (epoch ms): a newer `boot` is a newer run, so a
    /// last will that arrives after the next run's `online` is told apart.
    pub boot: Millis,
    /// The node's `[defaults]` as data (`EventDefaults::as_value`): what a round takes
    /// where its command says nothing. Every node of a hall must agree, or one round would
    /// play under different rules on different servers. Absent from older daemons (and a
    /// string, Rust's `Debug` text, from those before issue 41: not compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<serde_json::Value>,
    /// A random id of this process, made by its MQTT connection (issue 36): two daemons
    /// with the same node id (two Pis left with the default host name) throw each other
    /// off the broker (one client id); each notices the other's instance under its own
    /// node's status (`mqtt::twin`). Absent from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl NodeStatusPayload {
    /// Whether this status replaces `known` (same node): a newer run, or the same run's
    /// news. An older run's status is stale (a last will can arrive after the next run's
    /// birth: MQTT orders per topic only, and a bridge may replay), and so is `online`
    /// after the same run's `offline`.
    pub fn supersedes(&self, known: &NodeStatusPayload) -> bool {
        self.boot > known.boot
            || (self.boot == known.boot
                && !(known.state == NodeState::Offline && self.state == NodeState::Online))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    Online,
    Offline,
}

/// `node/<node>/clock`, not retained: the node's clock as it sends this, once a heartbeat
/// (every second), for the other nodes to compare with theirs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeClockPayload {
    pub node: String,
    /// The node's clock (epoch ms) when it published this.
    pub at: Millis,
}

/// `node/<node>/info`, retained: the boards one node serves, each as `info` has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeInfoPayload {
    pub version: String,
    pub hall: String,
    pub node: String,
    pub boot: Millis,
    pub boards: Vec<BoardInfo>,
    /// The event's defaults for games, as this node has them (`info`'s).
    #[serde(default)]
    pub defaults: Option<DefaultsInfo>,
    /// The latest round this node started (`info`'s; `null` before the first).
    #[serde(default)]
    pub round: Option<RoundInfo>,
}

/// `board/<b>/availability`, retained.
pub const ONLINE: &str = "online";
pub const OFFLINE: &str = "offline";

/// `alert/<id>`, retained until resolved (then an empty retained message clears it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertPayload {
    pub id: String,
    pub board: Option<String>,
    pub kind: AlertKind,
    pub severity: Severity,
    /// The message as data (docs/MQTT-API.md, "Message codes"): a page shows `code` and
    /// `params` in its reader's language; `message` is the same in English. The code is
    /// the alert's kind when the message has no code of its own. (Empty only in an alert
    /// retained by an older hallclock.)
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code: String,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub params: serde_json::Map<String, serde_json::Value>,
    pub message: String,
    pub since: Millis,
    /// A `stray_press` alert's refusal, as a program reads it: the same code as a
    /// response's `error` (`game_over`, `frozen`, `not_your_turn`, …). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl AlertPayload {
    /// An alert said as data (`said`'s code, parameters and English), raised `since`;
    /// a `said` without a code of its own takes the kind's.
    pub fn said(
        id: String,
        board: Option<String>,
        kind: AlertKind,
        severity: Severity,
        said: crate::alert::Said,
        since: Millis,
    ) -> AlertPayload {
        let code = if said.code.is_empty() {
            kind.slug().to_string()
        } else {
            said.code.to_string()
        };
        AlertPayload {
            id,
            board,
            kind,
            severity,
            code,
            params: said.params,
            message: said.message,
            since,
            error: None,
        }
    }
}

/// A cleared alert, retained on the alert's topic by its one writer in place of the alert.
///
/// Why not only the empty retained payload MQTT offers for deleting a topic: an empty
/// retained message published while a bridge is down is never forwarded when it heals
/// (mosquitto#1040), and deletions are the most fragile retained messages on clustered
/// brokers. A cleared alert is an ordinary retained message, queued and forwarded like any
/// other, so the central broker learns of the clear even when the writer is dead by the
/// time the bridge heals. `cleared` comes first so that a reader can tell it from an alert
/// without parsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearedAlert {
    /// Always `true`: what tells it from an alert.
    pub cleared: bool,
    pub id: String,
}

/// The payload that clears alert `id` on its topic.
pub fn cleared_alert(id: &str) -> Vec<u8> {
    serde_json::to_vec(&ClearedAlert {
        cleared: true,
        id: id.to_string(),
    })
    .unwrap_or_default()
}

/// Whether a payload on an alert topic says that no alert stands there: a
/// [`ClearedAlert`], or an empty payload (a topic cleared by hand, or by an older
/// hallclock).
pub fn alert_cleared(payload: &[u8]) -> bool {
    payload.is_empty() || serde_json::from_slice::<ClearedAlert>(payload).is_ok_and(|c| c.cleared)
}

/// `announce` / `node/<node>/announce`, retained: the message on every hall screen until
/// `until` (civil ms), or, once it ended or was taken down, its writer's clear (as an
/// alert's: a deletion made during a bridge cut would never reach the other side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnnouncePayload {
    Standing {
        /// Plain text, one line, at most 280 characters; the screens escape it.
        text: String,
        /// When it was sent (the hall's civil clock).
        since: Millis,
        /// When it goes from the screens (the hall's civil clock).
        until: Millis,
    },
    Cleared {
        /// Always `true`: what tells it from a standing message.
        cleared: bool,
    },
}

/// `session`, retained: the playing session's clock and the adjournment of the hall's
/// games. Never a sealed move: boards and stages only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionPayload {
    /// When it was computed.
    pub as_of: Millis,
    pub round: Option<u32>,
    /// The session's nominal end: at that instant every unfinished game is ordered to
    /// seal (I.1.1). `null`: none set by the hall.
    pub session_end: Option<Millis>,
    /// The resumption session scheduled for the adjourned games (I.14), if any.
    pub resumption: Option<crate::rules::adjournment::Resumption>,
    /// Boards whose player to move must still seal (ordered, not yet committed).
    pub sealing: Vec<String>,
    /// Boards whose envelope is sealed and committed (clocks stopped until resumption).
    pub sealed: Vec<String>,
    /// Boards resumed whose envelope is not yet opened (I.7, I.9.3).
    pub awaiting_opening: Vec<String>,
    /// Boards of the round still playing (never adjourned, or resumed and opened).
    pub playing: Vec<String>,
    /// Boards of the round with a result.
    pub finished: Vec<String>,
    /// Every unfinished game of the round is sealed (and at least one is).
    pub all_sealed: bool,
}

/// A hall event of the session, on the hall's `event` topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The last unfinished game of the round was sealed: the session can close.
    AllSealed {
        at: Millis,
        round: Option<u32>,
        boards: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleared_alert_is_told_from_an_alert_and_from_other_json() {
        let c = cleared_alert("b1-low-battery");
        assert_eq!(c, br#"{"cleared":true,"id":"b1-low-battery"}"#);
        assert!(alert_cleared(&c));
        assert!(alert_cleared(b""));
        assert!(!alert_cleared(br#"{"cleared":false,"id":"x"}"#));
        assert!(!alert_cleared(br#"{"id":"x","kind":"low_battery"}"#));
        assert!(!alert_cleared(b"not json"));
        // An alert does not read as a cleared one, nor a cleared one as an alert.
        assert!(serde_json::from_slice::<AlertPayload>(&c).is_err());
    }
}
