//! Reading the layered configuration into typed values: the `HALLCLOCK__*` environment
//! names, the file's TOML parsed and the environment's overrides merged into it, then the
//! walk over the merged tree: unknown keys, each known key read into its type (strictly
//! for the file, parsed from a string for the environment), every problem with its key
//! path and, for an override, the variable that set it.

use std::collections::HashMap;
use std::path::PathBuf;

use config::{Environment, FileFormat, Format, Map, Source, Value, ValueKind};

use crate::rules::Millis;
use crate::rules::placement::Side;
use crate::rules::time_control::{self, TimeControl};

use super::print::toml_string;
use super::{
    BOTH_ABSENT, BoardConfig, COMMANDS, Config, DELAY_DISPLAYS, DurationError, ENV_PREFIX,
    ENV_SEPARATOR, FLAG_MODES, INCREMENT_CREDITS, MAX_DURATION_SECS, MODES, PERIOD_TRANSITIONS,
    Problem, SIDES, did_you_mean, parse_duration, quoted_list,
};

/// The `config` crate's origin for values that came from the environment.
const ENV_ORIGIN: &str = "the environment";

/// The file's table with the environment's overrides merged in, walked: the typed
/// configuration and the problems found on the way (not yet [`Config::validate`]d), or
/// only the problems when the file is not TOML or the overrides cannot be merged.
pub(super) fn read(
    text: &str,
    env: &[(String, String)],
) -> Result<(Config, Vec<Problem>), Vec<Problem>> {
    let mut walk = Walk::default();
    let mut overrides = HashMap::new();
    for (name, value) in env {
        if !is_ours(name) {
            continue;
        }
        let key = env_key_path(name);
        let suffix = name
            .get(ENV_PREFIX.len() + ENV_SEPARATOR.len()..)
            .unwrap_or("");
        if !suffix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            // Also keeps '[' away from the config crate's key paths, where
            // `x[99999999999]` would allocate that many values.
            walk.error(
                "",
                format!("{name}: not an override; names are HALLCLOCK__SECTION__KEY, letters, digits and '_'"),
            );
        } else if key == "boards" || key.starts_with("boards.") {
            // Not at key "boards": that would hide the problems of the file's boards.
            walk.error(
                "",
                format!("{name}: boards cannot be set from the environment; list them in the file"),
            );
        } else {
            overrides.insert(name.clone(), value.clone());
        }
    }
    // Not `config::Config::builder()`: its build re-reads every top-level key as a key
    // path, so a quoted TOML key "hall.id" would land in [hall] and "x[99999999999]"
    // would allocate that many values. The file's table is taken as parsed, and the
    // environment merged into it the crate's way.
    let file = match FileFormat::Toml.parse(None, text) {
        Ok(table) => table,
        Err(cause) => {
            walk.error("", toml_message(&cause.to_string()));
            return Err(walk.problems);
        }
    };
    let mut merged = Value::new(None, ValueKind::Table(file));
    let environment = Environment::with_prefix(ENV_PREFIX)
        .separator(ENV_SEPARATOR)
        .source(Some(overrides.into_iter().collect()));
    if let Err(e) = environment.collect_to(&mut merged) {
        walk.error("", e.to_string());
        return Err(walk.problems);
    }
    let tree = match merged.kind {
        ValueKind::Table(tree) => tree,
        // collect_to only ever merges into a table.
        _ => Map::new(),
    };
    let config = walk.config(&tree);
    Ok((config, walk.problems))
}

pub(super) fn is_ours(env_name: &str) -> bool {
    let prefix = format!("{ENV_PREFIX}{ENV_SEPARATOR}");
    env_name.len() > prefix.len()
        && env_name.is_char_boundary(prefix.len())
        && env_name[..prefix.len()].eq_ignore_ascii_case(&prefix)
}

/// Sections in file order, then boards by index; the file as a whole and unknown
/// sections first.
pub(super) fn file_order(key: &str) -> (usize, usize) {
    let section = key.split(['.', '[']).next().unwrap_or("");
    let rank = ROOT_KEYS
        .iter()
        .position(|s| *s == section)
        .map_or(0, |i| i + 1);
    let board = key
        .strip_prefix("boards[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0);
    (rank, board)
}

/// `HALLCLOCK__BROKER__PORT` → `broker.port`, as the `config` crate maps it.
pub(super) fn env_key_path(env_name: &str) -> String {
    let prefix_len = ENV_PREFIX.len() + ENV_SEPARATOR.len();
    env_name
        .get(prefix_len..)
        .unwrap_or("")
        .to_lowercase()
        .replace(ENV_SEPARATOR, ".")
}

/// `broker.port` → `HALLCLOCK__BROKER__PORT`.
fn env_name(key_path: &str) -> String {
    format!(
        "{ENV_PREFIX}{ENV_SEPARATOR}{}",
        key_path.to_uppercase().replace('.', ENV_SEPARATOR)
    )
}

/// The toml crate's message spans several lines (a source excerpt with a caret); a
/// problem is one line, so keep the position and the reason.
fn toml_message(full: &str) -> String {
    let excerpt = |line: &str| {
        let t = line.trim_start();
        t.trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start()
            .starts_with('|')
    };
    let mut lines = full.lines().filter(|l| !l.trim().is_empty() && !excerpt(l));
    let head = lines
        .next()
        .unwrap_or("TOML parse error")
        .trim()
        .to_string();
    let rest: Vec<&str> = lines.map(str::trim).collect();
    if rest.is_empty() {
        head
    } else {
        format!("{head}: {}", rest.join("; "))
    }
}

/// The walk over the merged tree: typed values out, every problem recorded.
#[derive(Default)]
struct Walk {
    problems: Vec<Problem>,
}

const ROOT_KEYS: &[&str] = &[
    "hall",
    "broker",
    "defaults",
    "link",
    "log",
    "security",
    "web",
    "broadcast",
    "boards",
];
const BROADCAST_KEYS: &[&str] = &["delay_minutes", "event", "site", "lichess"];
const LICHESS_KEYS: &[&str] = &["base_url", "round_id", "rounds", "token_file"];
const LICHESS_ROUND_KEYS: &[&str] = &["boards", "round_id"];
const SECURITY_KEYS: &[&str] = &["commands", "arbiters", "window_secs"];
const WEB_KEYS: &[&str] = &[
    "enabled",
    "listen",
    "secure_cookies",
    "trusted_proxy",
    "language",
    "languages_dir",
];
const HALL_KEYS: &[&str] = &["id", "node", "state_dir", "sync_window_ms"];
pub(super) const BROKER_KEYS: &[&str] = &[
    "host",
    "port",
    "client_id",
    "username",
    "password",
    "tls",
    "ca_file",
    "client_cert",
    "client_key",
    "keep_alive_secs",
    "max_queued",
];
const DEFAULTS_KEYS: &[&str] = &[
    "time_control",
    "default_time",
    "flag_mode",
    "both_absent",
    "pauses_extend_default_time",
    "clock",
    "discrepancy_margin",
    "mode",
    "past_start_grace",
];
const CLOCK_KEYS: &[&str] = &[
    "period_transition",
    "increment_credit",
    "delay_display",
    "freeze_after_last_flag",
];
const LINK_KEYS: &[&str] = &[
    "liveness_timeout_ms",
    "ack_timeout_ms",
    "max_resends",
    "reopen_backoff_max_ms",
];
const LOG_KEYS: &[&str] = &["level"];
const BOARD_KEYS: &[&str] = &["id", "port", "white", "number", "mode"];

/// A value read for a key: where it came from decides how strictly it is typed.
struct Got<'a> {
    value: &'a Value,
    from_env: bool,
}

impl Walk {
    fn error(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem::error(key, message));
    }

    fn config(&mut self, root: &Map<String, Value>) -> Config {
        let mut c = Config::default();
        self.unknown_keys("", root, ROOT_KEYS);

        if let Some(t) = self.table(root, "", "hall") {
            self.field(t, "hall", "id", &mut c.hall.id, string);
            self.field(t, "hall", "node", &mut c.hall.node, string);
            self.field(t, "hall", "state_dir", &mut c.hall.state_dir, path);
            self.field(
                t,
                "hall",
                "sync_window_ms",
                &mut c.hall.sync_window_ms,
                integer::<u64>,
            );
        }

        if let Some(t) = self.table(root, "", "broker") {
            let b = &mut c.broker;
            let s = "broker";
            self.field(t, s, "host", &mut b.host, string);
            self.field(t, s, "port", &mut b.port, integer::<u16>);
            self.field(t, s, "client_id", &mut b.client_id, optional(string));
            self.field(t, s, "username", &mut b.username, optional(string));
            self.field(t, s, "password", &mut b.password, optional(string));
            self.field(t, s, "tls", &mut b.tls, boolean);
            self.field(t, s, "ca_file", &mut b.ca_file, optional(path));
            self.field(t, s, "client_cert", &mut b.client_cert, optional(path));
            self.field(t, s, "client_key", &mut b.client_key, optional(path));
            self.field(
                t,
                s,
                "keep_alive_secs",
                &mut b.keep_alive_secs,
                integer::<u16>,
            );
            self.field(t, s, "max_queued", &mut b.max_queued, integer::<usize>);
        }

        if let Some(t) = self.table(root, "", "defaults") {
            let d = &mut c.defaults;
            let s = "defaults";
            self.field(
                t,
                s,
                "time_control",
                &mut d.time_control,
                time_control_value,
            );
            self.field(t, s, "default_time", &mut d.default_time, duration);
            self.field(t, s, "flag_mode", &mut d.flag_mode, one_of(FLAG_MODES));
            self.field(t, s, "mode", &mut d.mode, one_of(MODES));
            self.field(t, s, "both_absent", &mut d.both_absent, one_of(BOTH_ABSENT));
            self.field(
                t,
                s,
                "pauses_extend_default_time",
                &mut d.pauses_extend_default_time,
                boolean,
            );
            self.field(
                t,
                s,
                "discrepancy_margin",
                &mut d.discrepancy_margin,
                duration,
            );
            self.field(t, s, "past_start_grace", &mut d.past_start_grace, duration);
            if let Some(t) = self.table(t, s, "clock") {
                let c = &mut d.clock;
                let s = "defaults.clock";
                self.field(
                    t,
                    s,
                    "period_transition",
                    &mut c.period_transition,
                    one_of(PERIOD_TRANSITIONS),
                );
                self.field(
                    t,
                    s,
                    "increment_credit",
                    &mut c.increment_credit,
                    one_of(INCREMENT_CREDITS),
                );
                self.field(
                    t,
                    s,
                    "delay_display",
                    &mut c.delay_display,
                    one_of(DELAY_DISPLAYS),
                );
                self.field(
                    t,
                    s,
                    "freeze_after_last_flag",
                    &mut c.freeze_after_last_flag,
                    boolean,
                );
            }
        }

        if let Some(t) = self.table(root, "", "link") {
            let l = &mut c.link;
            let s = "link";
            self.field(
                t,
                s,
                "liveness_timeout_ms",
                &mut l.liveness_timeout_ms,
                integer::<u64>,
            );
            self.field(
                t,
                s,
                "ack_timeout_ms",
                &mut l.ack_timeout_ms,
                integer::<u64>,
            );
            self.field(t, s, "max_resends", &mut l.max_resends, integer::<u32>);
            self.field(
                t,
                s,
                "reopen_backoff_max_ms",
                &mut l.reopen_backoff_max_ms,
                integer::<u64>,
            );
        }

        if let Some(t) = self.table(root, "", "log") {
            self.field(t, "log", "level", &mut c.log.level, string);
        }

        if let Some(t) = self.table(root, "", "security") {
            let sec = &mut c.security;
            let s = "security";
            self.field(t, s, "commands", &mut sec.commands, one_of(COMMANDS));
            self.field(t, s, "arbiters", &mut sec.arbiters, path);
            self.field(t, s, "window_secs", &mut sec.window_secs, integer::<u32>);
        }
        if let Some(t) = self.table(root, "", "web") {
            let w = &mut c.web;
            self.field(t, "web", "enabled", &mut w.enabled, boolean);
            self.field(t, "web", "listen", &mut w.listen, string);
            self.field(t, "web", "secure_cookies", &mut w.secure_cookies, boolean);
            self.field(t, "web", "trusted_proxy", &mut w.trusted_proxy, string);
            self.field(t, "web", "language", &mut w.language, string);
            self.field(t, "web", "languages_dir", &mut w.languages_dir, path);
        }

        if let Some(t) = self.table(root, "", "broadcast") {
            let b = &mut c.broadcast;
            self.field(t, "broadcast", "delay_minutes", &mut b.delay, |g| {
                integer::<u32>(g).map(crate::broadcast::minutes)
            });
            // An empty string is no tag (`?`), as when the key is absent.
            let tag = |g: &Got| string(g).map(|s| Some(s).filter(|s| !s.trim().is_empty()));
            self.field(t, "broadcast", "event", &mut b.tags.event, tag);
            self.field(t, "broadcast", "site", &mut b.tags.site, tag);
            if let Some(l) = self.table(t, "broadcast", "lichess") {
                let s = "broadcast.lichess";
                let mut lichess = crate::broadcast::LichessSettings {
                    base_url: "https://lichess.org".into(),
                    round_id: String::new(),
                    rounds: Vec::new(),
                    token_file: PathBuf::new(),
                };
                self.field(l, s, "base_url", &mut lichess.base_url, string);
                self.field(l, s, "round_id", &mut lichess.round_id, string);
                self.field(l, s, "token_file", &mut lichess.token_file, path);
                lichess.rounds = self.lichess_rounds(l);
                b.lichess = Some(lichess);
            }
        }

        c.boards = self.boards(root);
        c
    }

    /// `broadcast.lichess.rounds`: an array of `{ boards = "1-100", round_id = "…" }`. A
    /// bad entry is reported and left out (the problems stop the start anyway).
    fn lichess_rounds(&mut self, l: &Map<String, Value>) -> Vec<crate::broadcast::LichessRound> {
        let key = "broadcast.lichess.rounds";
        let Some(value) = l.get("rounds") else {
            return Vec::new();
        };
        let ValueKind::Array(items) = &value.kind else {
            self.error(
                key,
                format!(
                    "expected an array of tables ([{{ boards = \"1-100\", round_id = \"…\" }}, …]), found {}",
                    kind_name(&value.kind)
                ),
            );
            return Vec::new();
        };
        let mut rounds = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let s = format!("{key}[{i}]");
            let ValueKind::Table(t) = &item.kind else {
                self.error(
                    s,
                    format!(
                        "expected a table ({{ boards = \"1-100\", round_id = \"…\" }}), found {}",
                        kind_name(&item.kind)
                    ),
                );
                rounds.push(crate::broadcast::LichessRound {
                    boards: None,
                    round_id: String::new(),
                });
                continue;
            };
            self.unknown_keys(&s, t, LICHESS_ROUND_KEYS);
            let mut missing = false;
            for required in ["boards", "round_id"] {
                if !t.contains_key(required) {
                    missing = true;
                    self.error(
                        format!("{s}.{required}"),
                        format!("missing; every lichess round needs '{required}'"),
                    );
                }
            }
            let mut boards = None;
            let mut round_id = String::new();
            self.field(t, &s, "boards", &mut boards, |g| {
                let text = string(g)?;
                crate::broadcast::BoardRange::parse(&text)
                    .map(Some)
                    .map_err(BadValue::BoardRange)
            });
            self.field(t, &s, "round_id", &mut round_id, string);
            // A bad entry stays as a placeholder (no boards) so that rounds[i] keeps naming
            // the file's i-th entry; its problem is reported and stops the start.
            rounds.push(crate::broadcast::LichessRound {
                boards: boards.filter(|_| !missing),
                round_id,
            });
        }
        rounds
    }

    fn boards(&mut self, root: &Map<String, Value>) -> Vec<BoardConfig> {
        let Some(value) = root.get("boards") else {
            return Vec::new();
        };
        let ValueKind::Array(items) = &value.kind else {
            self.error(
                "boards",
                format!(
                    "expected an array of tables ([[boards]]), found {}",
                    kind_name(&value.kind)
                ),
            );
            return Vec::new();
        };
        let mut boards = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let s = format!("boards[{i}]");
            let ValueKind::Table(t) = &item.kind else {
                self.error(
                    s,
                    format!(
                        "expected a table ([[boards]]), found {}",
                        kind_name(&item.kind)
                    ),
                );
                // A placeholder keeps boards[i] naming the i-th entry of the file.
                boards.push(BoardConfig {
                    id: String::new(),
                    port: PathBuf::new(),
                    white: Side::Left,
                    number: None,
                    mode: None,
                });
                continue;
            };
            self.unknown_keys(&s, t, BOARD_KEYS);
            let mut board = BoardConfig {
                id: String::new(),
                port: PathBuf::new(),
                white: Side::Left,
                number: None,
                mode: None,
            };
            for required in ["id", "port"] {
                if !t.contains_key(required) {
                    self.error(
                        format!("{s}.{required}"),
                        format!("missing; every board needs '{required}'"),
                    );
                }
            }
            self.field(t, &s, "id", &mut board.id, string);
            self.field(t, &s, "port", &mut board.port, path);
            self.field(t, &s, "white", &mut board.white, one_of(SIDES));
            self.field(t, &s, "mode", &mut board.mode, |g| {
                one_of(MODES)(g).map(Some)
            });
            self.field(t, &s, "number", &mut board.number, |g| {
                match integer::<u32>(g)? {
                    0 => Err(BadValue::BoardNumberZero),
                    n => Ok(Some(n)),
                }
            });
            boards.push(board);
        }
        boards
    }

    /// The table at `parent.key`, if present and a table; unknown keys in it reported.
    fn table<'t>(
        &mut self,
        parent: &'t Map<String, Value>,
        parent_path: &str,
        key: &str,
    ) -> Option<&'t Map<String, Value>> {
        let path = join(parent_path, key);
        let value = parent.get(key)?;
        match &value.kind {
            ValueKind::Table(t) => {
                let known = match path.as_str() {
                    "hall" => HALL_KEYS,
                    "broker" => BROKER_KEYS,
                    "defaults" => DEFAULTS_KEYS,
                    "defaults.clock" => CLOCK_KEYS,
                    "link" => LINK_KEYS,
                    "log" => LOG_KEYS,
                    "web" => WEB_KEYS,
                    "security" => SECURITY_KEYS,
                    "broadcast" => BROADCAST_KEYS,
                    "broadcast.lichess" => LICHESS_KEYS,
                    _ => &[],
                };
                self.unknown_keys(&path, t, known);
                Some(t)
            }
            other => {
                self.error(
                    path.clone(),
                    format!(
                        "expected a table ([{path}]), found {}{}",
                        kind_name(other),
                        env_note(value, &path)
                    ),
                );
                None
            }
        }
    }

    fn unknown_keys(&mut self, path: &str, table: &Map<String, Value>, known: &[&str]) {
        let mut unknown: Vec<&String> = table
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let full = join(path, key);
            let mut env_vars = Vec::new();
            env_leaves(&table[key], &full, &mut env_vars);
            let from = if env_vars.is_empty() {
                String::new()
            } else {
                format!(" (set by {})", env_vars.join(", "))
            };
            let where_ = if path.is_empty() {
                "at the top level".to_string()
            } else {
                format!("in [{path}]")
            };
            let hint = if key.contains('.') {
                format!("; a quoted key is one key: write {key} without quotes for a dotted key")
            } else {
                did_you_mean(key, known.iter().copied())
            };
            self.error(full, format!("unknown key{from} {where_}{hint}"));
        }
    }

    /// Read `table.key` into `slot` when present; on a bad value record the problem and
    /// leave the default.
    fn field<T>(
        &mut self,
        table: &Map<String, Value>,
        path: &str,
        key: &str,
        slot: &mut T,
        read: impl Fn(&Got) -> Result<T, BadValue>,
    ) {
        let Some(value) = table.get(key) else { return };
        let full = join(path, key);
        let got = Got {
            value,
            from_env: value.origin() == Some(ENV_ORIGIN),
        };
        match read(&got) {
            Ok(v) => *slot = v,
            Err(message) => {
                let note = env_note(value, &full);
                self.error(full, format!("{message}{note}"));
            }
        }
    }
}

/// `path.key`, with `key` quoted as TOML would need it (`"hall.id"` is one key).
fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_string()
    } else {
        toml_string(key)
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

fn env_note(value: &Value, path: &str) -> String {
    if value.origin() == Some(ENV_ORIGIN) {
        format!(" (from {})", env_name(path))
    } else {
        String::new()
    }
}

fn env_leaves(value: &Value, path: &str, out: &mut Vec<String>) {
    match &value.kind {
        ValueKind::Table(t) => {
            let mut keys: Vec<&String> = t.keys().collect();
            keys.sort();
            for k in keys {
                env_leaves(&t[k], &join(path, k), out);
            }
        }
        _ if value.origin() == Some(ENV_ORIGIN) => out.push(env_name(path)),
        _ => {}
    }
}

fn kind_name(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Nil => "nothing".into(),
        ValueKind::Boolean(b) => format!("a boolean ({b})"),
        ValueKind::I64(n) => format!("an integer ({n})"),
        ValueKind::I128(n) => format!("an integer ({n})"),
        ValueKind::U64(n) => format!("an integer ({n})"),
        ValueKind::U128(n) => format!("an integer ({n})"),
        ValueKind::Float(x) => format!("a float ({x})"),
        ValueKind::String(s) => format!("a string (\"{s}\")"),
        ValueKind::Table(_) => "a table".into(),
        ValueKind::Array(_) => "an array".into(),
    }
}

/// What was wrong with one key's value; the walker adds the key and where it was set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum BadValue {
    /// A value of the wrong kind: what the key takes, and what it got.
    #[error("expected {expected}, found {found}")]
    Expected { expected: String, found: String },
    #[error("expected a path, found an empty string")]
    EmptyPath,
    #[error("{n} is out of range: expected {range}")]
    OutOfRange { n: i64, range: String },
    #[error("0 is out of range: tournament boards are numbered from 1")]
    BoardNumberZero,
    #[error(transparent)]
    BoardRange(crate::broadcast::BoardRangeError),
    #[error("{0}: a duration cannot be negative")]
    NegativeSeconds(i64),
    #[error("{0} s is too long: at most 10 days")]
    TooManySeconds(i64),
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error(
        "time control '{text}': {error} (e.g. \"40/5400+30:1800+30\", see `hallclock tc check`)"
    )]
    TimeControl {
        text: String,
        error: time_control::TcError,
    },
    /// A name outside its table: the names, and a suggestion when one is close.
    #[error("'{got}' is not one of {names}{hint}")]
    NotOneOf {
        got: String,
        names: String,
        hint: String,
    },
}

/// `Expected` with the found value's kind in words.
fn expected(what: impl Into<String>, found: &ValueKind) -> BadValue {
    BadValue::Expected {
        expected: what.into(),
        found: kind_name(found),
    }
}

fn string(got: &Got) -> Result<String, BadValue> {
    match &got.value.kind {
        ValueKind::String(s) => Ok(s.clone()),
        other => Err(expected("a string", other)),
    }
}

fn path(got: &Got) -> Result<PathBuf, BadValue> {
    match &got.value.kind {
        ValueKind::String(s) if s.is_empty() => Err(BadValue::EmptyPath),
        ValueKind::String(s) => Ok(PathBuf::from(s)),
        other => Err(expected("a path (a string)", other)),
    }
}

/// An optional key: an empty environment variable unsets it, since the environment has
/// no other way to say "none".
fn optional<T>(
    read: impl Fn(&Got) -> Result<T, BadValue>,
) -> impl Fn(&Got) -> Result<Option<T>, BadValue> {
    move |got| match &got.value.kind {
        ValueKind::String(s) if got.from_env && s.is_empty() => Ok(None),
        _ => read(got).map(Some),
    }
}

fn integer<T: TryFrom<i64> + Bounded>(got: &Got) -> Result<T, BadValue> {
    let range = || format!("an integer from {} to {}", T::MIN_I64, T::MAX_TEXT);
    let n: i64 = match &got.value.kind {
        ValueKind::I64(n) => *n,
        ValueKind::String(s) if got.from_env => {
            s.trim().parse().map_err(|_| BadValue::Expected {
                expected: range(),
                found: format!("\"{s}\""),
            })?
        }
        other => return Err(expected(range(), other)),
    };
    T::try_from(n).map_err(|_| BadValue::OutOfRange { n, range: range() })
}

/// The range of an integer key, for messages.
trait Bounded {
    const MIN_I64: i64;
    const MAX_TEXT: &'static str;
}

impl Bounded for u16 {
    const MIN_I64: i64 = 0;
    const MAX_TEXT: &'static str = "65535";
}

impl Bounded for u32 {
    const MIN_I64: i64 = 0;
    const MAX_TEXT: &'static str = "4294967295";
}

impl Bounded for u64 {
    const MIN_I64: i64 = 0;
    // TOML integers are i64, so that is the real upper bound here.
    const MAX_TEXT: &'static str = "9223372036854775807";
}

impl Bounded for usize {
    const MIN_I64: i64 = 0;
    const MAX_TEXT: &'static str = "9223372036854775807";
}

fn boolean(got: &Got) -> Result<bool, BadValue> {
    match &got.value.kind {
        ValueKind::Boolean(b) => Ok(*b),
        ValueKind::String(s) if got.from_env => match s.trim().to_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(BadValue::Expected {
                expected: "true or false".into(),
                found: format!("\"{s}\""),
            }),
        },
        other => Err(expected("true or false", other)),
    }
}

fn duration(got: &Got) -> Result<Millis, BadValue> {
    match &got.value.kind {
        ValueKind::I64(n) if *n < 0 => Err(BadValue::NegativeSeconds(*n)),
        ValueKind::I64(n) if *n > MAX_DURATION_SECS => Err(BadValue::TooManySeconds(*n)),
        ValueKind::I64(n) => Ok(Millis::from_secs(*n)),
        ValueKind::String(s) => Ok(parse_duration(s.trim())?),
        other => Err(expected(
            "a duration (\"1:00:00\", \"90s\" or a number of seconds)",
            other,
        )),
    }
}

fn time_control_value(got: &Got) -> Result<TimeControl, BadValue> {
    match &got.value.kind {
        ValueKind::String(s) => time_control::parse(s).map_err(|error| BadValue::TimeControl {
            text: s.clone(),
            error,
        }),
        other => Err(expected(
            "a time control string such as \"40/5400+30:1800+30\"",
            other,
        )),
    }
}

fn one_of<T: Copy + PartialEq>(
    table: &'static [(&'static str, T)],
) -> impl Fn(&Got) -> Result<T, BadValue> {
    move |got| {
        let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        match &got.value.kind {
            ValueKind::String(s) => table
                .iter()
                .find(|(n, _)| n == s)
                .map(|(_, v)| *v)
                .ok_or_else(|| BadValue::NotOneOf {
                    got: s.clone(),
                    names: quoted_list(&names),
                    hint: did_you_mean(s, names.iter().copied()),
                }),
            other => Err(expected(format!("one of {}", quoted_list(&names)), other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_errors_become_one_line_with_the_position() {
        let full = "TOML parse error at line 2, column 8\n  |\n2 | port = \n  |        ^\nstring values must be quoted, expected literal string\n";
        assert_eq!(
            toml_message(full),
            "TOML parse error at line 2, column 8: string values must be quoted, expected literal string"
        );
    }

    #[test]
    fn env_names_map_to_key_paths_and_back() {
        assert_eq!(env_key_path("HALLCLOCK__BROKER__PORT"), "broker.port");
        assert_eq!(
            env_name("defaults.clock.delay_display"),
            "HALLCLOCK__DEFAULTS__CLOCK__DELAY_DISPLAY"
        );
        assert!(is_ours("hallclock__log__level"));
        assert!(!is_ours("HALLCLOCK_LOG"));
        assert!(!is_ours("HALLCLOCK__"));
    }
}
