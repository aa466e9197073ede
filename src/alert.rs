//! What an alert is about and how urgent it is: the vocabulary shared by the board actor
//! (which raises them), the intake (`acknowledge_alert` names one), MQTT and the web. A
//! leaf: it imports nothing of the house.

use serde::{Deserialize, Serialize};

/// The id of a hall-level alert (about no board: `journal`, `custody`, `mqtt-queue`,
/// `auth-failures`, `broadcast-push`, `pgn-archive`, …) as node `node` raises it: `<base>-<node>`. Each node
/// writes its own retained topic, so two nodes' alerts never overwrite each other (a
/// shared retained topic is last-writer-wins across a bridge, and one node's clear would
/// erase another's standing alert); a consumer shows the hall's as the union.
pub fn node_alert_id(base: &str, node: &str) -> String {
    format!("{base}-{node}")
}

/// A message as data (docs/MQTT-API.md, "Message codes", issue 39): the stable code a
/// page looks its own words up by, the values those words need, and the same message in
/// English for logs and for subscribers that show it as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    /// Empty: no code of its own (the alert's kind stands for it).
    pub code: &'static str,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub message: String,
}

/// Every alert code the daemon gives, with its parameters (docs/MQTT-API.md, "Message
/// codes"): one list, so that a test holds each shipped catalogue and the docs to it, and
/// a raise anywhere else is caught ([`Said::new`] checks it in debug builds). An alert
/// with no code of its own here has its kind as its code and no parameters.
pub const ALERT_CODES: &[(&str, &[&str])] = &[
    (
        "auth_failures.burst",
        &["account", "client", "failures", "window_ms"],
    ),
    ("auth_failures.locked_account", AUTH_LOCKED),
    ("auth_failures.locked_both", AUTH_LOCKED),
    ("auth_failures.locked_client", AUTH_LOCKED),
    ("board_claimed_twice", &["board", "node", "others"]),
    ("board_moved.games_swapped", &["serial", "board", "other"]),
    (
        "board_moved.one_game",
        &["serial", "board", "other", "game_from", "game_to"],
    ),
    ("board_moved.no_game", &["serial", "board", "other"]),
    (
        "broadcast_push.games_refused",
        &["round_id", "count", "games"],
    ),
    ("broadcast_push.refused", &["round_id", "status", "body"]),
    ("broadcast_push.several", &["count", "text"]),
    ("broadcast_push.source_url", &["round_id"]),
    (
        "broadcast_push.too_many",
        &["round", "round_id", "games", "max"],
    ),
    ("broadcast_push.unplaced", &["round", "boards"]),
    ("broker.mosquitto_clock_steps", &["version"]),
    (
        "broker.twin",
        &["node", "instance", "other", "retry_min_ms", "retry_max_ms"],
    ),
    ("both_flags", &[]),
    ("clock_buttons", &["board", "buttons"]),
    ("clock_command.no_ack", CLOCK_COMMAND),
    ("clock_command.no_clock", &["board", "port"]),
    ("clock_command.no_clock_for", CLOCK_COMMAND),
    ("clock_command.offline", CLOCK_COMMAND),
    ("clock_command.refused", CLOCK_COMMAND),
    ("clock_command.unencodable", CLOCK_COMMAND),
    ("clock_discrepancy", DISCREPANCY),
    ("clock_discrepancy.both_ran", DISCREPANCY),
    ("clock_flag", &["board", "side"]),
    ("clock_flag.undecided", &["board", "side", "result"]),
    ("clock_flag.verdict", &["board", "side", "result"]),
    ("clock_increment", &["board", "clock_ms", "round_ms"]),
    ("clock_skew", &["node", "peers", "limit_ms"]),
    (
        "clock_jump",
        &[
            "board",
            "white_ms",
            "black_ms",
            "reckoned_white_ms",
            "reckoned_black_ms",
        ],
    ),
    ("clock_mode", &["board", "port"]),
    ("clock_presses", &["board", "presses", "moves"]),
    ("clock_stopped", &["board", "white_ms", "black_ms"]),
    (
        "irregular.sealed_move_not_shown",
        &["board", "san", "side", "wait_ms"],
    ),
    (
        "irregular.position",
        &["board", "observed_fen", "expected_fen"],
    ),
    ("low_battery.board", &["board", "percent"]),
    ("low_battery.both", &["board", "percent"]),
    ("low_battery.clock", &["board", "percent"]),
    (
        "move_rejected",
        &["board", "uci", "refusal", "refusal_params"],
    ),
    ("move_rejected.board_differs", &["board", "ply", "uci"]),
    (
        "move_rejected.not_attached",
        &["board", "uci", "side", "refusal", "refusal_params"],
    ),
    (
        "move_rejected.not_sealed",
        &["board", "refusal", "refusal_params"],
    ),
    ("offline.io", &["board", "port", "why"]),
    ("offline.silent", &["board", "port", "silent_ms"]),
    ("offline.unplugged", &["board", "port"]),
    ("offline.write_stalled", &["board", "port", "waited_ms"]),
    ("outgoing_queue", &["max_queued", "dropped"]),
    ("player_pause", &["side"]),
    ("port.busy", &["board", "port"]),
    ("port.io", &["board", "port", "why"]),
    ("port.missing", &["board", "port"]),
    ("port.not_a_dgt_board", &["board", "port"]),
    ("port.not_a_tty", &["board", "port"]),
    ("port.permission", &["board", "port"]),
    ("result_pending.claim", &["side"]),
    ("result_pending.position_unknown", &["side"]),
    ("result_pending.undecided", &["side", "why"]),
    ("result_shown", &["board", "score"]),
    (
        "stray_press",
        &["side", "board", "refusal", "refusal_params"],
    ),
    ("server_clock.behind_journal", &["by_ms"]),
    (
        "server_clock.correction_dropped",
        &["by_ms", "at", "dropped_ms"],
    ),
    ("server_clock.hall_time_ahead", &["arbiter", "now", "by_ms"]),
    (
        "server_clock.hall_time_behind",
        &["arbiter", "now", "by_ms"],
    ),
    ("server_clock.reboot", &["gap_ms"]),
    ("server_clock.signer_ahead", &["signer", "by_ms", "now"]),
    ("server_clock.signer_behind", &["signer", "by_ms", "now"]),
    ("server_clock.step_back", &["by_ms", "at"]),
    ("server_clock.step_forward", &["by_ms", "at"]),
    ("server_clock.stopped_back", &["by_ms"]),
    ("server_clock.stopped_forward", &["by_ms"]),
    ("storage.custody", &["why"]),
    ("storage.events_not_stored", &["board", "why", "waiting"]),
    ("storage.game_not_stored", &["board", "why"]),
    ("storage.journal_damaged", &["why", "held"]),
    ("storage.pgn_archive", &["rounds", "why", "retry_ms"]),
    ("stray_press.no_game", &["board"]),
    (
        "time_held.clock_disagrees",
        &["board", "paused", "last_known", "white_ms", "black_ms"],
    ),
    (
        "time_held.deadline",
        &["board", "paused", "last_known", "deadline"],
    ),
    (
        "time_held.journal_damaged",
        &["board", "paused", "last_known"],
    ),
    (
        "time_held.no_clock",
        &["board", "paused", "last_known", "wait_ms"],
    ),
];

const CLOCK_COMMAND: &[&str] = &["board", "command"];
const AUTH_LOCKED: &[&str] = &["account", "client", "failures", "lockout_ms"];
const DISCREPANCY: &[&str] = &[
    "white_ms",
    "black_ms",
    "official_white_ms",
    "official_black_ms",
];

/// The parameters alert `code` is listed with.
pub fn alert_params(code: &str) -> Option<&'static [&'static str]> {
    ALERT_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, p)| *p)
}

impl Said {
    /// `params` is a JSON object (anything else is taken as none).
    pub fn new(code: &'static str, params: serde_json::Value, message: String) -> Said {
        debug_assert!(
            alert_params(code).is_some(),
            "alert code '{code}' is not in ALERT_CODES"
        );
        let params = match params {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        Said {
            code,
            params,
            message,
        }
    }

    /// Whether the parameters are those `ALERT_CODES` lists for the code (a hold adds its
    /// own to its cause's: checked where the alert is raised, in debug builds).
    pub fn listed(&self) -> bool {
        alert_params(self.code).is_some_and(|listed| {
            self.params.len() == listed.len() && listed.iter().all(|k| self.params.contains_key(*k))
        })
    }
}

/// A message without a code of its own yet: the English words only.
impl From<String> for Said {
    fn from(message: String) -> Said {
        Said {
            code: "",
            params: serde_json::Map::new(),
            message,
        }
    }
}

/// The base ids of the hall-level alerts, each raised per node by [`node_alert_id`].
pub const HALL_ALERTS: [&str; 9] = [
    "journal",
    "server-clock",
    "custody",
    "mqtt-queue",
    "auth-failures",
    "broadcast-push",
    // A round's PGN archive that could not be written (issue 36).
    "pgn-archive",
    // The connection's own (issue 36): another daemon under this node's id, an old broker.
    "node-twin",
    "broker-version",
];

/// Whether `id` is one of node `node`'s hall-level alerts.
pub fn is_node_alert_of(id: &str, node: &str) -> bool {
    HALL_ALERTS.iter().any(|b| id == node_alert_id(b, node))
}

/// Whether `id` is an alert of board `board`: `<board>-<kind>` (its claim alerts too).
pub fn is_board_alert_of(id: &str, board: &str) -> bool {
    id.strip_prefix(board)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|kind| !kind.is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// The board's port is gone or silent (6.10).
    Offline,
    /// The port cannot be opened, or is not a DGT board.
    Port,
    /// The clock refuses commands: not in computer mode (DGT3000 mode 25).
    ClockMode,
    /// A clock command failed (no ACK after the resends).
    ClockCommand,
    /// The clock shows times that disagree with the official time (6.10).
    ClockDiscrepancy,
    /// A player stopped the clocks to summon the arbiter (6.12b).
    PlayerPause,
    /// A lever press that the rules did not accept (no game running, paused, ...).
    StrayPress,
    /// A flag fell and the result waits for the arbiter (6.8 claim mode, 6.9 unknown).
    ResultPending,
    /// Both flags down, order unknown (6.11).
    BothFlags,
    /// The e-board shows a position no legal move explains.
    Irregular,
    /// An e-board move the rules refused; the press was recorded without it.
    MoveRejected,
    /// The journal cannot be written (disk full, I/O error), or was found damaged.
    Storage,
    /// A DGT board (known by its serial number) came up on another board's port: its
    /// game followed it.
    BoardMoved,
    /// The broker was unreachable so long that the bounded outgoing queue overflowed:
    /// the oldest events were dropped from it (they are in the journal: `replay`).
    OutgoingQueue,
    /// The players show a result with the kings on the centre squares (DGT's gesture):
    /// not a move; the arbiter records the result (`set_result`).
    ResultShown,
    /// Dashboard logins were locked out after a burst of wrong passwords (hall-wide, id
    /// `auth-failures`): the account and the client address, never a password.
    AuthFailures,
    /// The push to lichess cannot deliver every game (hall-wide, id `broadcast-push`):
    /// games lichess refused, a lichess round with a source URL, a lichess round given more
    /// games than a push takes, boards in no configured range.
    BroadcastPush,
    /// Two online nodes of the hall (servers, issue 23) both claim a board id: each node
    /// raises its own (id `<board>-claimed-twice-<node>`) and keeps its game.
    BoardClaimedTwice,
    /// The clock reports its battery low (status bit D2), or a Bluetooth board reports
    /// a low percentage (FIDE C.02 (f), C.02.03 3.1.2): at set-up as during a game,
    /// cleared when the batteries are changed.
    LowBattery,
    /// The clock's buttons other than run/pause were pressed during a game: the daemon
    /// drives the clock, so nothing changed, but someone is handling it (FIDE C.02 (k)).
    ClockButtons,
    /// Another node's clock differs from this node's by more than a second (issue 23): a
    /// round's start instant is absolute. Each node raises its own (id
    /// `clock-skew-<node>`), naming the nodes and the differences.
    ClockSkew,
    /// Observe mode: the hand-set clock adds another increment per move than the round's
    /// control declares.
    ClockIncrement,
    /// Observe mode: the hand-set clock's time went up without a press, or fell faster
    /// than time passed (set by hand, or a fault).
    ClockJump,
    /// Observe mode: the hand-set clock is not running while the game is.
    ClockStopped,
    /// Observe mode: the hand-set clock shows a flag; the 6.9 verdict waits for the
    /// arbiter's confirmation (claim mode).
    ClockFlag,
    /// Observe mode: the clock was pressed more often than the board shows moves.
    ClockPresses,
    /// The server's wall clock was stepped (while running, or while the daemon was
    /// stopped), or after a reboot it cannot be checked against the journal (hall-wide, id
    /// `server-clock-<node>`): no game clock moved; what happened, in words.
    ServerClock,
    /// After a reboot (or a journal without time anchors) the game's time since the
    /// journal's last record is unknown, and its clock's reading does not witness it (it
    /// disagrees, or no clock answered): the game is held for the arbiter (6.13), never
    /// flagged, defaulted or charged from the gap.
    TimeHeld,
    /// The MQTT broker or this node's place on it (hall-wide, issue 36): another daemon
    /// connected under this node's id (id `node-twin-<node>`), or a Mosquitto that drops
    /// every client when its clock steps forward (id `broker-version-<node>`).
    Broker,
}

impl AlertKind {
    pub fn slug(self) -> &'static str {
        match self {
            AlertKind::Offline => "offline",
            AlertKind::Port => "port",
            AlertKind::ClockMode => "clock-mode",
            AlertKind::ClockCommand => "clock-command",
            AlertKind::ClockDiscrepancy => "clock-discrepancy",
            AlertKind::PlayerPause => "player-pause",
            AlertKind::StrayPress => "stray-press",
            AlertKind::ResultPending => "result-pending",
            AlertKind::BothFlags => "both-flags",
            AlertKind::Irregular => "irregular",
            AlertKind::MoveRejected => "move-rejected",
            AlertKind::Storage => "storage",
            AlertKind::BoardMoved => "board-moved",
            AlertKind::OutgoingQueue => "outgoing-queue",
            AlertKind::ResultShown => "result-shown",
            AlertKind::AuthFailures => "auth-failures",
            AlertKind::BroadcastPush => "broadcast-push",
            AlertKind::BoardClaimedTwice => "claimed-twice",
            AlertKind::LowBattery => "low-battery",
            AlertKind::ClockButtons => "clock-buttons",
            AlertKind::ClockSkew => "clock-skew",
            AlertKind::ClockIncrement => "clock-increment",
            AlertKind::ClockJump => "clock-jump",
            AlertKind::ClockStopped => "clock-stopped",
            AlertKind::ClockFlag => "clock-flag",
            AlertKind::ClockPresses => "clock-presses",
            AlertKind::ServerClock => "server-clock",
            AlertKind::TimeHeld => "time-held",
            AlertKind::Broker => "broker",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_alert_is_the_board_a_dash_and_a_kind() {
        assert!(is_board_alert_of("b1-offline", "b1"));
        assert!(is_board_alert_of("b1-claimed-twice-n2", "b1"));
        assert!(!is_board_alert_of("b1-", "b1"));
        assert!(!is_board_alert_of("b1", "b1"));
        assert!(!is_board_alert_of("b12-offline", "b1"));
        assert!(!is_board_alert_of("journal-n1", "b1"));
    }
}
