//! Why a command was refused: one typed set for every door (MQTT, the web, scripts).
//! Call sites build and match variants; the `error` code a program reads is written once,
//! by [`Refusal::code`], where the response is built. Nothing was changed by a refused
//! command.

use crate::rules::Millis;
use crate::rules::game::Rejection;

/// A refused command. `Display` is the reason people read; [`Refusal::said`] the same as
/// data (its code and parameters: the variant's name and fields, through serde).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "code", content = "params", rename_all = "snake_case")]
pub enum Refusal {
    /// The rules core refused the input (its own kind and message).
    #[error("{0}")]
    Rejected(Rejection),
    /// Not a command: the parser's message, which says what and where.
    #[error("{0}")]
    BadCommand(String),
    /// Refused at the door (issue 11): over the size limit, a key given twice, an instant
    /// outside the allowed range. The message names the limit or the key.
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    DuplicateKey(String),
    #[error(transparent)]
    #[serde(rename = "instant_out_of_range")]
    OutOfRange(InstantOutOfRange),
    /// A round's (or a resumption's) start already past by more than the grace: the
    /// clocks would start run down by the time since.
    #[error(transparent)]
    PastStart(PastStart),
    /// A command sent to `ask`, which takes only requests that read.
    #[error("'{action}' is a command: send it to the hall's set topic; ask takes only replay")]
    NotARequest { action: &'static str },
    /// A value that is well-formed JSON but not usable (a TRF, a reply topic, a combination
    /// of fields); the message says which and where.
    #[error("{0}")]
    BadValue(String),
    /// A hall screens' announcement that cannot be shown (hall/announce.rs): which field
    /// and why; its `code` is `announce_<kind>`.
    #[error(transparent)]
    Announce(AnnounceError),
    /// A round's TRF does not read: the reader's own error (record, line and columns),
    /// carried as a value to the reply.
    #[error("trf: {0}")]
    Trf(#[serde(serialize_with = "as_words")] Box<crate::trf::TrfError>),
    /// A TRF round names a tournament board that no hall board plays.
    #[error("{0}")]
    NoHallBoard(String),

    // --- who sent it (docs/SECURITY.md) ---
    #[error(
        "unsigned command: this hall takes only signed commands, envelopes with \"arbiter\", \"payload\" and \"sig\" (docs/MQTT-API.md, Signing){missing}"
    )]
    Unsigned { missing: String },
    #[error("unknown arbiter '{arbiter}': no account with this id in the hall's arbiters file")]
    UnknownArbiter { arbiter: String },
    #[error(
        "bad signature for arbiter '{arbiter}': not HMAC-SHA256 of this topic and payload with this arbiter's key (altered, or signed for another topic)"
    )]
    BadSignature { arbiter: String },
    #[error("{field}: {problem}")]
    BadSignedField {
        field: &'static str,
        problem: String,
    },
    /// Said in both clocks' words: a wrong server clock (a Pi without a real-time clock)
    /// and a wrong laptop clock look alike from here, and the arbiter must see which.
    #[error(
        "the command was signed at {} by its signer's clock, and the hall server's clock reads {}: {} {} (allowed: {} either way); a command is valid only when just signed: sign it again, and if this repeats, one of the two clocks is wrong",
        ts.utc(),
        hall.utc(),
        crate::timebase::words(*ts - *hall),
        if ts > hall { "ahead" } else { "behind" },
        crate::timebase::words(Millis(*window_ms))
    )]
    Expired {
        ts: Millis,
        hall: Millis,
        window_ms: i64,
    },
    #[error(
        "transaction '{transaction}' was already used by '{arbiter}' for another command; every command needs a new transaction id"
    )]
    Replayed {
        transaction: String,
        arbiter: String,
    },
    #[error("'{arbiter}' is a viewer: viewers read and ask for replays, they command nothing")]
    ViewerCommand { arbiter: String },
    #[error("'{arbiter}' may command {scope} only, not {board}")]
    OutOfScope {
        arbiter: String,
        scope: String,
        board: String,
    },
    #[error("hall-wide {action} needs the chief role; '{arbiter}' is an arbiter")]
    ChiefOnly {
        action: &'static str,
        arbiter: String,
    },

    // --- which board ---
    #[error("unknown board '{board}'; this hall has {known}")]
    UnknownBoard { board: String, known: String },
    #[error("unknown board '{board}'")]
    NotABoard { board: String },
    #[error("unknown target board '{board}'")]
    UnknownTarget { board: String },
    /// 6.10's move onto a board of another node of the hall: the game's clock, journal and
    /// e-board are this node's, so it moves only among this node's boards.
    #[error(
        "board {board} is on hall server {node}: a game moves (6.10) only onto a free board of the hall server it is on"
    )]
    TargetOnAnotherNode { board: String, node: String },
    #[error("{at}.board: unknown board '{board}'")]
    UnknownPairedBoard { at: String, board: String },
    #[error(
        "tournament board {number} is numbered on more than one hall server ({boards}): a TRF's board {number} would start on each. Give each server's [[boards]] its own numbers (number = …) and reload"
    )]
    BoardNumberTwice { number: u32, boards: String },
    #[error(
        "the hall's nodes do not agree on [defaults], so this round would play under different rules on different servers: this node ({node}) has {ours}; {theirs}. Make [defaults] the same on every node (hallclock print-config on each) and reload"
    )]
    DefaultsDiffer {
        node: String,
        // Boxed: a refusal travels in results everywhere, and two more Strings made it
        // too large for clippy's `result_large_err`.
        ours: Box<str>,
        theirs: Box<str>,
    },
    /// A hall command from a dashboard while other nodes are online that could not be
    /// forwarded to them (hall/forward.rs: it did not read as a command, or its account is
    /// gone): applied here alone, it would act on part of the hall and say `ok`. Likewise a
    /// dashboard's command for an online node's board that could not be sent on.
    #[error(
        "this hall has other nodes online ({nodes}) and this command could not be sent on to them from the dashboard; send it with `hallclock command` (MQTT), which every node applies"
    )]
    HallOfSeveralNodes { nodes: String },
    /// A dashboard's command for a board of another node that is down (issue 23).
    #[error(
        "board {board} is on hall server {node}, which is offline: nothing was done; send the command again once {node} is back"
    )]
    BoardNodeOffline { board: String, node: String },
    /// A dashboard's command sent on to the board's node, which did not answer in time.
    #[error(
        "board {board} is on hall server {node}, which did not answer within {secs} s; it may still apply the command: send it again as it is (the same transaction is never applied twice) to learn its answer"
    )]
    BoardNodeSilent {
        board: String,
        node: String,
        secs: u64,
    },
    /// A hall command every node answered `ok` for none of its boards: what a node alone
    /// refuses as [`Refusal::NoBoardApplied`], said for the hall.
    #[error("no board of any node has a game to {action} ({nodes} applied it to no board)")]
    NoBoardOfAnyNode { action: String, nodes: String },

    // --- the board's game ---
    #[error("board {board} has no game")]
    NoGame { board: String },
    #[error("board {board} has no unfinished game to move")]
    NoGameToMove { board: String },
    #[error("no board has a game to {action}")]
    NoBoardApplied { action: &'static str },
    #[error("board {board} has an unfinished game (round {round}); finish it first")]
    BoardBusy { board: String, round: u32 },
    #[error("target board {board} has an unfinished game (round {round})")]
    TargetBusy { board: String, round: u32 },
    #[error("{at}.board: board '{board}' has an unfinished game (round {round})")]
    PairedBoardBusy {
        at: String,
        board: String,
        round: u32,
    },

    // --- values ---
    #[error("round: 0 is out of range (1 or more)")]
    RoundZero,
    #[error("broadcast_delay_minutes: {minutes} is out of range (0 to 60)")]
    BroadcastDelayTooLong { minutes: u32 },
    #[error("pairings: at least one board is needed")]
    NoPairings,
    #[error("{at}.board: board '{board}' is paired twice")]
    PairedTwice { at: String, board: String },
    #[error("{at}: both players need a name")]
    NameMissing { at: String },
    #[error("{at}: {reason}")]
    BadSetup { at: String, reason: String },
    #[error("the target board is this board")]
    SameBoard,
    /// A result name the core cannot take as it is (`resignation` without `side`).
    #[error(transparent)]
    BadResult(NeedsSide),

    // --- the disk ---
    #[error("board {board}: the game could not be stored: {reason}")]
    GameNotStored { board: String, reason: String },
    #[error("not stored: {reason}")]
    NotStored { reason: String },
    /// Issue 36: a command whose record (its events and its answer, one journal batch)
    /// could not be written is applied nowhere; `reason` names the file and the error.
    #[error(
        "board {board}: {action} was not applied: its record could not be written to the journal ({reason}); nothing changed. Free space in the state directory and send the command again"
    )]
    CommandNotStored {
        board: String,
        // Boxed, as in `DefaultsDiffer`: clippy's `result_large_err`.
        action: Box<str>,
        reason: Box<str>,
    },
    #[error("the sealed move could not be kept: {reason}")]
    SealNotKept { reason: String },
    #[error("the sealed move cannot be read from custody: {reason}")]
    SealUnreadable { reason: String },
    #[error("cannot read the journal: {reason}")]
    JournalUnreadable { reason: String },

    // --- bugs (see the log) ---
    #[error("the board stopped")]
    BoardStopped,
    #[error("the custody task failed")]
    CustodyTaskFailed,
    #[error("{reason}")]
    Internal { reason: String },
}

impl Refusal {
    /// The kind of refusal, for programs: the response's `error` field
    /// (docs/MQTT-API.md "Error kinds").
    pub fn code(&self) -> String {
        let code = match self {
            Refusal::Rejected(r) => return rejection_code(r),
            Refusal::BadCommand(_) => "bad_command",
            Refusal::TooLarge(_) => "too_large",
            Refusal::DuplicateKey(_) => "duplicate_key",
            Refusal::OutOfRange(_) => "out_of_range",
            Refusal::PastStart(_) => "past_start",
            Refusal::NotARequest { .. } => "not_a_request",
            Refusal::BadValue(_) | Refusal::Trf(_) | Refusal::Announce(_) => "bad_value",
            Refusal::NoHallBoard(_) => "unknown_board",
            Refusal::Unsigned { .. }
            | Refusal::UnknownArbiter { .. }
            | Refusal::BadSignature { .. }
            | Refusal::BadSignedField { .. } => "unauthenticated",
            Refusal::Expired { .. } => "expired",
            Refusal::Replayed { .. } => "replayed",
            Refusal::ViewerCommand { .. }
            | Refusal::OutOfScope { .. }
            | Refusal::ChiefOnly { .. }
            | Refusal::HallOfSeveralNodes { .. } => "forbidden",
            Refusal::BoardNodeOffline { .. } => "node_offline",
            Refusal::BoardNodeSilent { .. } => "no_answer",
            Refusal::DefaultsDiffer { .. } | Refusal::BoardNumberTwice { .. } => "nodes_disagree",
            Refusal::UnknownBoard { .. }
            | Refusal::NotABoard { .. }
            | Refusal::UnknownTarget { .. }
            | Refusal::UnknownPairedBoard { .. } => "unknown_board",
            Refusal::NoGame { .. }
            | Refusal::NoGameToMove { .. }
            | Refusal::NoBoardApplied { .. }
            | Refusal::NoBoardOfAnyNode { .. } => "no_game",
            Refusal::BoardBusy { .. }
            | Refusal::TargetBusy { .. }
            | Refusal::PairedBoardBusy { .. } => "board_busy",
            Refusal::RoundZero | Refusal::BroadcastDelayTooLong { .. } => "out_of_range",
            Refusal::NoPairings
            | Refusal::PairedTwice { .. }
            | Refusal::NameMissing { .. }
            | Refusal::BadSetup { .. }
            | Refusal::SameBoard
            | Refusal::TargetOnAnotherNode { .. }
            | Refusal::BadResult(_) => "bad_value",
            Refusal::GameNotStored { .. }
            | Refusal::NotStored { .. }
            | Refusal::CommandNotStored { .. }
            | Refusal::SealNotKept { .. }
            | Refusal::SealUnreadable { .. }
            | Refusal::JournalUnreadable { .. } => "storage",
            Refusal::BoardStopped | Refusal::CustodyTaskFailed | Refusal::Internal { .. } => {
                "internal"
            }
        };
        code.to_string()
    }
}

/// A value a page shows as words (the TRF reader's own message, which names the line).
fn as_words<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl Refusal {
    /// The refusal as data (docs/MQTT-API.md, "Message codes"): a rules core rejection by
    /// its own kind, any other by its variant, with their fields as parameters (a bare
    /// text as `{"text": …}`; an announcement's by `announce_<kind>`).
    pub fn said(&self) -> (String, serde_json::Map<String, serde_json::Value>) {
        use serde_json::Value;
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut code = v
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("internal")
            .to_string();
        let mut params = match v.get_mut("params").map(Value::take) {
            Some(Value::Object(m)) => m,
            Some(Value::Null) | None => serde_json::Map::new(),
            Some(other) => serde_json::Map::from_iter([("text".to_string(), other)]),
        };
        if let Some(Value::String(kind)) = params.remove("rejection") {
            code = kind;
        }
        if code == "announce"
            && let Some(Value::String(kind)) = params.remove("kind")
        {
            code = format!("announce_{kind}");
        }
        (code, params)
    }
}

/// The rejection's serde tag: the rules core names its kinds once, there.
fn rejection_code(r: &Rejection) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| {
            v.get("rejection")
                .and_then(|k| k.as_str())
                .map(String::from)
        })
        .unwrap_or_else(|| "rejected".into())
}

impl From<Rejection> for Refusal {
    fn from(r: Rejection) -> Refusal {
        Refusal::Rejected(r)
    }
}

/// A result that names a side (`resignation`, `illegal_moves`) sent without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("'{0}' needs \"side\"")]
pub struct NeedsSide(pub &'static str);

/// An instant of a command outside the range around now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error(
    "{key}: {} is out of range: allowed from {} to {} (1 day back, 14 days ahead)",
    crate::rules::millis::format_iso(*at),
    crate::rules::millis::format_iso(*from),
    crate::rules::millis::format_iso(*to)
)]
pub struct InstantOutOfRange {
    pub key: &'static str,
    pub at: Millis,
    pub from: Millis,
    pub to: Millis,
}

/// A start more than the grace before the hall's clock, without `allow_past_start`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error(
    "{key}: {} was {} ago by the hall's clock ({}): every clock would start {} down. Send a start in the future, or add \"allow_past_start\": true to start it as of then (a start up to {} in the past is taken as it is)",
    crate::rules::millis::format_iso(*at),
    crate::timebase::words(*now - *at),
    crate::rules::millis::format_iso(*now),
    crate::timebase::words(*now - *at),
    crate::timebase::words(*grace)
)]
pub struct PastStart {
    pub key: &'static str,
    pub at: Millis,
    pub now: Millis,
    pub grace: Millis,
}

/// The most a banner may say: two lines on a 1280-pixel projector at a readable size.
pub const MAX_ANNOUNCE_CHARS: usize = 280;

/// Why an `announce` cannot be shown; each says which field and what to send instead.
/// As data (a refusal's `code` `announce_<kind>` and its fields as `params`), so a page
/// says it in its own language (docs/MQTT-API.md, "Message codes").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnnounceError {
    #[error(
        "text: blank; say what the hall should read, or send \"text\": null to take the announcement down"
    )]
    Blank,
    #[error("text: {chars} characters; a hall screen shows at most {max}")]
    TooLong { chars: usize, max: usize },
    #[error(
        "text: character {at} is a control character (U+{code:04X}); an announcement is one line of plain text"
    )]
    Control {
        at: usize,
        #[serde(rename = "unicode", serialize_with = "as_unicode")]
        code: u32,
    },
    #[error(
        "until: missing; an announcement needs its end time (an instant), e.g. \"until\": \"2026-11-30T14:05:00Z\""
    )]
    NoUntil,
    #[error(
        "until: {} is not after the hall's clock ({}): the announcement would never show",
        crate::rules::millis::format_iso(*until),
        crate::rules::millis::format_iso(*now)
    )]
    Past { until: Millis, now: Millis },
    #[error("until: given without a text; to take the announcement down send \"text\": null alone")]
    UntilWithoutText,
}

/// A character's code point as people write it (`U+000A`).
fn as_unicode<S: serde::Serializer>(code: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("U+{code:04X}"))
}
