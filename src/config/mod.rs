//! The daemon's configuration: TOML, layered as defaults ← file ← environment
//! (`HALLCLOCK__SECTION__KEY`, e.g. `HALLCLOCK__BROKER__PORT=1884`).
//!
//! The `config` crate parses the TOML and merges the environment into it; its typed
//! deserialisation stops at the first bad value and its messages do not always carry the
//! key, so the merged tree is walked here instead.
//! The walk reports every problem at once, each with its key path (`boards[2].id`,
//! `broker.port`), then [`Config::validate`] adds the semantic checks. A load that finds
//! any error returns [`ConfigError`] with all problems; otherwise the warnings travel
//! alongside the configuration.
//!
//! Values from the file must have their TOML type (`port = "1883"` is an error: a quoted
//! number is usually a mistake elsewhere too). Values from the environment are always
//! strings, so they are parsed into the key's type.
//!
//! The files, by job:
//!
//! * this file: the settings types and their defaults, [`Problem`] and [`ConfigError`],
//!   [`Config::load`] and its core [`Config::from_toml_str`] (walk, then validate, then
//!   all problems in the documented file's order), and what the other files share: the
//!   spellings of enum values, durations as text, "did you mean" suggestions.
//! * `walk.rs`: reading the layered file + environment into typed values: the
//!   `HALLCLOCK__*` names, the TOML parse and the merge, the known keys of each section,
//!   each value read into its key's type, every problem with its key path.
//! * `validate.rs`: [`Config::validate`], the checks of the typed values against each
//!   other and the file system (ids, broker and TLS files, ranges, serial ports), with
//!   their messages.
//! * `print.rs`: [`Config::effective_toml`], the effective configuration as TOML
//!   (`hallclock print-config`).

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::rules::Millis;
use crate::rules::game::{BothAbsent, FlagMode, Setup};
use crate::rules::placement::{Placement, Side};
use crate::rules::time_control::{
    self, ClockOptions, DelayDisplay, IncrementCredit, PeriodTransition, TimeControl,
};

mod print;
mod validate;
mod walk;

use walk::{env_key_path, is_ours};

/// `EX_CONFIG` of sysexits.h: a systemd unit can say `RestartPreventExitStatus=78`, since
/// restarting never fixes a configuration.
pub const EXIT_CONFIG: u8 = 78;

/// Where `hallclock run`, `check-config` and `print-config` look without `--config`.
pub const DEFAULT_PATH: &str = "/etc/hallclock/hallclock.toml";

/// Environment variables `HALLCLOCK__SECTION__KEY` override `[section] key`.
pub const ENV_PREFIX: &str = "HALLCLOCK";
/// Between the prefix and the section, and between section and key. A double underscore,
/// because single underscores occur in key names (`state_dir`).
pub const ENV_SEPARATOR: &str = "__";

/// The default time control: the FIDE standard control (90 min for 40 moves, then 30 min,
/// 30 s per move from move 1).
pub const DEFAULT_TIME_CONTROL: &str = "40/5400+30:1800+30";

/// The longest duration accepted (10 days), as for time controls: far beyond any real
/// setting, and no sum of them can overflow `Millis`.
const MAX_DURATION_SECS: i64 = time_control::MAX_SECS as i64;

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub hall: HallConfig,
    pub broker: BrokerConfig,
    pub defaults: EventDefaults,
    pub link: LinkSettings,
    pub log: LogConfig,
    pub web: WebConfig,
    pub security: SecurityConfig,
    /// `[broadcast]` and `[broadcast.lichess]` (docs/BROADCAST.md).
    pub broadcast: crate::broadcast::BroadcastSettings,
    pub boards: Vec<BoardConfig>,
}

/// `[web]`: the arbiters' dashboard (docs/DASHBOARD.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    pub enabled: bool,
    /// `address:port`; the default listens on every interface (the hall's LAN).
    pub listen: String,
    /// Mark the session cookie `Secure` (behind a TLS proxy that does not send
    /// `X-Forwarded-Proto`).
    pub secure_cookies: bool,
    /// The reverse proxy's address (`"127.0.0.1"` with the proxy on the same machine):
    /// logins from it are counted under the client its `X-Forwarded-For` names. Empty:
    /// the header is never read, every client is its TCP peer.
    pub trusted_proxy: String,
    /// The hall screens' language (`/public`), and the dashboard's when the browser asks
    /// for none the hall has (docs/DASHBOARD.md, "Languages"). Empty: the browser's.
    pub language: String,
    /// The operator's catalogues, `<code>.json`: a file overrides a shipped language's
    /// texts or adds a language, read at start (no rebuild).
    pub languages_dir: PathBuf,
}

/// Where the operator's catalogues are looked for unless `web.languages_dir` says.
pub const DEFAULT_LANGUAGES_DIR: &str = "/etc/hallclock/i18n";

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            enabled: true,
            listen: "0.0.0.0:8080".into(),
            secure_cookies: false,
            trusted_proxy: String::new(),
            language: String::new(),
            languages_dir: PathBuf::from(DEFAULT_LANGUAGES_DIR),
        }
    }
}

/// `[hall]`: who this daemon is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HallConfig {
    /// The `<hall>` of the MQTT topics `hallclock/<hall>/…`; `[a-z0-9-]+`.
    pub id: String,
    /// This hall server's name among the hall's servers (issue 23): the `<node>` of
    /// `hallclock/<hall>/node/<node>/…`; `[a-z0-9-]+`. Default: the host name, made an id
    /// ([`crate::id::from_host_name`]), so servers of one hall differ without a setting.
    pub node: String,
    /// The journal and snapshots.
    pub state_dir: PathBuf,
    /// Group commit: at least this many ms between two `fdatasync`s of the journal
    /// (0: each sync starts when the previous one ends, taking all that arrived meanwhile).
    pub sync_window_ms: u64,
}

impl Default for HallConfig {
    fn default() -> Self {
        HallConfig {
            id: "hall".into(),
            node: default_node(),
            state_dir: PathBuf::from("/var/lib/hallclock"),
            sync_window_ms: 0,
        }
    }
}

/// The host name as a node id: read from the kernel (hallclock runs on Linux), `node`
/// when it cannot be read or has no usable character.
pub fn default_node() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    crate::id::from_host_name(&host).to_string()
}

/// `[broker]`: the MQTT broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerConfig {
    pub host: String,
    pub port: u16,
    /// `None`: `hallclock-<hall id>-<node>`, see [`BrokerConfig::client_id`].
    pub client_id: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub tls: bool,
    /// CA certificate(s) to trust for TLS; `None` = the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Mutual TLS: the daemon's certificate chain and private key (PEM), both or neither.
    pub client_cert: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
    /// 0 disables keep-alive.
    pub keep_alive_secs: u16,
    /// Outgoing messages queued while the broker is unreachable.
    pub max_queued: usize,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            host: "localhost".into(),
            port: 1883,
            client_id: None,
            username: None,
            password: None,
            tls: false,
            ca_file: None,
            client_cert: None,
            client_key: None,
            keep_alive_secs: 15,
            max_queued: 10_000,
        }
    }
}

impl BrokerConfig {
    /// The MQTT client id: the configured one, or `hallclock-<hall id>-<node>`. The node is
    /// in it because a broker disconnects a client when another connects with its id: two
    /// servers of one hall with `hallclock-<hall id>` would throw each other off for ever.
    pub fn client_id(&self, hall_id: &str, node: &str) -> String {
        match &self.client_id {
            Some(id) => id.clone(),
            None => format!("hallclock-{hall_id}-{node}"),
        }
    }
}

/// `[defaults]`: per-event settings used for every game unless the event says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDefaults {
    pub time_control: TimeControl,
    /// Default time (6.6), from the scheduled start; 0 = zero tolerance.
    pub default_time: Millis,
    pub flag_mode: FlagMode,
    pub both_absent: BothAbsent,
    /// 6.6 "unless the rules of the competition say otherwise": paused time before an
    /// absent player arrives does not count towards the default time. Off by default: the
    /// text measures lateness from the scheduled start, pauses or not.
    pub pauses_extend_default_time: bool,
    pub clock: ClockOptions,
    /// A clock reading further than this from the daemon's reckoning raises an alert (6.10).
    pub discrepancy_margin: Millis,
    /// Whether the daemon drives the boards' clocks or only reads them (a board's own
    /// `mode` overrides it).
    pub mode: BoardMode,
    /// How far in the past a round's (or a resumption's) start may be without the
    /// command's `allow_past_start`: a form's "now" arrives a little late, a start typed
    /// minutes ago is refused (`past_start`) so nobody starts run down unseen.
    pub past_start_grace: Millis,
    /// The event's piece letters (issue 39): sealed moves are read in them and the page
    /// shows moves in them. English SAN stays the wire and PGN format.
    pub piece_letters: crate::rules::adjournment::NotationLanguage,
}

pub use crate::mode::BoardMode;

impl Default for EventDefaults {
    fn default() -> Self {
        EventDefaults {
            time_control: default_time_control(),
            default_time: Millis::from_mins(60),
            flag_mode: FlagMode::Auto,
            both_absent: BothAbsent::BothLose,
            pauses_extend_default_time: false,
            clock: ClockOptions::default(),
            discrepancy_margin: Millis::from_secs(2),
            mode: BoardMode::Control,
            past_start_grace: crate::intake::command::DEFAULT_PAST_START_GRACE,
            piece_letters: crate::rules::adjournment::NotationLanguage::En,
        }
    }
}

impl EventDefaults {
    /// Every field a round takes from `[defaults]`, as data: the node's status carries
    /// it (MQTT-API.md, node status) and the hall's nodes compare it before a round. The
    /// values are the configuration's own spellings, never Rust's `Debug` text.
    pub fn as_value(&self) -> serde_json::Value {
        serde_json::json!({
            "time_control": self.time_control.to_string(),
            "default_time_ms": self.default_time.0,
            "flag_mode": self.flag_mode,
            "both_absent": self.both_absent,
            "pauses_extend_default_time": self.pauses_extend_default_time,
            "clock": self.clock,
            "discrepancy_margin_ms": self.discrepancy_margin.0,
            "piece_letters": self.piece_letters,
        })
    }

    /// [`EventDefaults::as_value`] as one line of words, for saying what differs.
    pub fn summary(&self) -> String {
        defaults_words(&self.as_value())
    }

    /// A game's setup from these defaults; the event may still change any field.
    pub fn setup(&self, white: &str, black: &str, start: Millis) -> Setup {
        Setup {
            default_time: self.default_time,
            both_absent: self.both_absent,
            flag_mode: self.flag_mode,
            pauses_extend_default_time: self.pauses_extend_default_time,
            clock: self.clock,
            discrepancy_margin: self.discrepancy_margin,
            piece_letters: self.piece_letters,
            ..Setup::new(white, black, self.time_control.clone(), start)
        }
    }
}

/// A node's `[defaults]` (its status's `defaults`) as one line: `key=value`, a table's
/// fields as `table.key=value`, in the order given.
pub fn defaults_words(v: &serde_json::Value) -> String {
    fn word(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    let Some(fields) = v.as_object() else {
        return word(v);
    };
    let mut out = Vec::new();
    for (key, value) in fields {
        match value.as_object() {
            Some(table) => out.extend(table.iter().map(|(k, v)| format!("{key}.{k}={}", word(v)))),
            None => out.push(format!("{key}={}", word(value))),
        }
    }
    out.join(" ")
}

fn default_time_control() -> TimeControl {
    // A constant that does not parse is a bug caught by the tests; falling back to "?"
    // keeps this total and `validate` would then report it.
    time_control::parse(DEFAULT_TIME_CONTROL).unwrap_or(TimeControl::Unknown)
}

/// `[link]`: the serial link to each board and clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSettings {
    /// A board silent this long is offline.
    pub liveness_timeout_ms: u64,
    /// How long to wait for a clock's acknowledgement before resending.
    pub ack_timeout_ms: u64,
    pub max_resends: u32,
    /// The longest wait between attempts to reopen a lost port.
    pub reopen_backoff_max_ms: u64,
}

impl Default for LinkSettings {
    fn default() -> Self {
        LinkSettings {
            liveness_timeout_ms: 3000,
            ack_timeout_ms: 1000,
            max_resends: 3,
            reopen_backoff_max_ms: 5000,
        }
    }
}

/// `[log]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// One of [`LOG_LEVELS`].
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "info".into(),
        }
    }
}

/// `[security]`: who may command the hall (docs/SECURITY.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityConfig {
    pub commands: Commands,
    /// The arbiters' accounts and keys (root's alone, 0600).
    pub arbiters: PathBuf,
    /// A signed command's `ts` may be this far from the daemon's clock, either way.
    pub window_secs: u32,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            commands: Commands::Signed,
            arbiters: PathBuf::from(crate::intake::auth::DEFAULT_ARBITERS),
            window_secs: (crate::intake::auth::DEFAULT_WINDOW.0 / 1000) as u32,
        }
    }
}

/// `security.commands`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commands {
    /// Every command signed by an arbiter's key.
    Signed,
    /// A lab: anyone who can publish commands, under any name.
    Open,
}

const COMMANDS: &[(&str, Commands)] = &[("signed", Commands::Signed), ("open", Commands::Open)];

impl Config {
    /// What the hall is started with: the accounts read from `security.arbiters`.
    pub fn security(
        &self,
    ) -> Result<crate::intake::auth::Security, crate::intake::auth::ArbitersError> {
        match self.security.commands {
            Commands::Open => Ok(crate::intake::auth::Security::Open),
            Commands::Signed => Ok(crate::intake::auth::Security::Signed {
                arbiters: crate::intake::auth::Arbiters::load(&self.security.arbiters)?,
                window: Millis(i64::from(self.security.window_secs) * 1000),
            }),
        }
    }
}

/// The accepted `log.level` values.
pub const LOG_LEVELS: [&str; 5] = ["error", "warn", "info", "debug", "trace"];

/// `[[boards]]`: one board (and its clock) on one serial port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardConfig {
    /// The `<b>` of `board/<b>/…`; `[a-z0-9-]+`, unique in the hall.
    pub id: String,
    pub port: PathBuf,
    /// Which side of the clock White sits on (6.4).
    pub white: Side,
    /// The tournament board number played here (TRF rounds); `None`: the previous
    /// entry's number + 1 (the first entry: 1). See [`board_numbers`].
    pub number: Option<u32>,
    /// `None`: `[defaults] mode`.
    pub mode: Option<BoardMode>,
}

/// The tournament board number of each `[[boards]]` entry, in file order: its `number`,
/// or one more than the entry before it, so `number = 17` on the first entry of a hall
/// that plays boards 17 to 40 numbers them all.
pub fn board_numbers(boards: &[BoardConfig]) -> Vec<u32> {
    let mut next = 1u32;
    boards
        .iter()
        .map(|b| {
            let n = b.number.unwrap_or(next);
            next = n.saturating_add(1);
            n
        })
        .collect()
}

impl BoardConfig {
    /// Where White sits on this board's clock (6.4).
    pub fn placement(&self) -> Placement {
        Placement { white: self.white }
    }
}

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The daemon will not start.
    Error,
    /// The daemon starts; someone should look.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One thing wrong with a configuration, at a key path (`boards[2].id`, `broker.port`;
/// empty for the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub message: String,
    pub severity: Severity,
}

impl Problem {
    pub fn error(key: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            key: key.into(),
            message: message.into(),
            severity: Severity::Error,
        }
    }

    pub fn warning(key: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            key: key.into(),
            message: message.into(),
            severity: Severity::Warning,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `error: boards[1].id: duplicate board id 'board-001' (also boards[0].id)`.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.severity, self.message)
        } else {
            write!(f, "{}: {}: {}", self.severity, self.key, self.message)
        }
    }
}

/// A configuration the daemon cannot run with: every problem found (errors and warnings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<Problem>,
}

impl ConfigError {
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(|p| p.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(|p| !p.is_error())
    }
}

/// One problem per line.
impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl Config {
    /// Read the file (when given; `None` = defaults and environment only) and the
    /// `HALLCLOCK__*` environment variables of this process.
    pub fn load(path: Option<&Path>) -> Result<(Config, Vec<Problem>), ConfigError> {
        let text = match path {
            None => String::new(),
            Some(path) => std::fs::read_to_string(path).map_err(|e| ConfigError {
                problems: vec![Problem::error(
                    "",
                    format!("cannot read {}: {e}", path.display()),
                )],
            })?,
        };
        let mut problems = Vec::new();
        let mut env = Vec::new();
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            if !is_ours(name) {
                continue;
            }
            match value.into_string() {
                Ok(value) => env.push((name.to_string(), value)),
                Err(_) => problems.push(Problem::error(
                    env_key_path(name),
                    format!("{name} is not valid UTF-8"),
                )),
            }
        }
        let loaded = Config::from_toml_str(&text, &env);
        if problems.is_empty() {
            return loaded;
        }
        match loaded {
            Ok((_, warnings)) => problems.extend(warnings),
            Err(e) => problems.extend(e.problems),
        }
        Err(ConfigError { problems })
    }

    /// The testable core of [`Config::load`]: the file's text and the environment passed
    /// in (variables not starting with `HALLCLOCK__` are ignored).
    pub fn from_toml_str(
        text: &str,
        env: &[(String, String)],
    ) -> Result<(Config, Vec<Problem>), ConfigError> {
        let (config, walked) =
            walk::read(text, env).map_err(|problems| ConfigError { problems })?;
        // A key whose value could not be read kept its default (a board that is not a
        // table, an empty placeholder); checking that default would only add a second,
        // misleading message about the same key.
        let bad: HashSet<String> = walked
            .iter()
            .map(|p| p.key.clone())
            .filter(|k| !k.is_empty())
            .collect();
        let under_bad = |key: &str| {
            bad.iter().any(|b| {
                key.strip_prefix(b.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            })
        };
        let mut problems = walked;
        problems.extend(config.validate().into_iter().filter(|p| !under_bad(&p.key)));
        // In the order of the documented file, whichever pass found them.
        problems.sort_by_key(|p| walk::file_order(&p.key));
        if problems.iter().any(Problem::is_error) {
            Err(ConfigError { problems })
        } else {
            Ok((config, problems))
        }
    }

    /// The MQTT client id: `broker.client_id`, or `hallclock-<hall id>-<node>`.
    pub fn client_id(&self) -> String {
        self.broker.client_id(&self.hall.id, &self.hall.node)
    }
}

/// Enum spellings, the same as the rules core's serde names (a test checks).
const FLAG_MODES: &[(&str, FlagMode)] = &[("auto", FlagMode::Auto), ("claim", FlagMode::Claim)];
const PIECE_LETTERS: &[(&str, crate::rules::adjournment::NotationLanguage)] = &[
    ("en", crate::rules::adjournment::NotationLanguage::En),
    ("es", crate::rules::adjournment::NotationLanguage::Es),
];
const BOTH_ABSENT: &[(&str, BothAbsent)] = &[
    ("both_lose", BothAbsent::BothLose),
    ("arbiter", BothAbsent::Arbiter),
];
const PERIOD_TRANSITIONS: &[(&str, PeriodTransition)] = &[
    ("on_moves", PeriodTransition::OnMoves),
    ("on_flag", PeriodTransition::OnFlag),
];
const INCREMENT_CREDITS: &[(&str, IncrementCredit)] = &[
    ("before_move1", IncrementCredit::BeforeMove1),
    ("after_press", IncrementCredit::AfterPress),
];
const DELAY_DISPLAYS: &[(&str, DelayDisplay)] = &[
    ("countdown", DelayDisplay::Countdown),
    ("bronstein", DelayDisplay::Bronstein),
];
const SIDES: &[(&str, Side)] = &[("left", Side::Left), ("right", Side::Right)];
pub(crate) const MODES: &[(&str, BoardMode)] = &[
    ("control", BoardMode::Control),
    ("observe", BoardMode::Observe),
];

/// What a config duration was not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error(
        "expected a duration such as \"1:00:00\", \"2:30\", \"0:01.500\", \"90s\", \"500ms\" or a number of seconds, found \"{0}\""
    )]
    Unreadable(String),
    /// A clock time with a field after ':' that is not 00 to 59.
    #[error(transparent)]
    Clock(crate::rules::millis::TimeTextError),
    #[error("\"{0}\": a duration cannot be negative")]
    Negative(String),
    #[error("\"{0}\" is too long: at most 10 days")]
    TooLong(String),
}

/// A config duration: the house notation (`rules::millis::parse_duration`: `1:00:00`,
/// `2:30`, `0:01.500`, `90s`, `500ms`, `2m`, `1h`), or digits alone, which config has
/// always read as seconds (`"3600"`, as a TOML integer or an environment variable gives).
/// Never negative, at most 10 days.
pub fn parse_duration(s: &str) -> Result<Millis, DurationError> {
    let unreadable = || DurationError::Unreadable(s.to_string());
    let bare_seconds = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let d = if bare_seconds {
        if s.len() > 7 {
            return Err(DurationError::TooLong(s.to_string()));
        }
        Millis::from_secs(s.parse().map_err(|_| unreadable())?)
    } else {
        use crate::rules::millis::TimeTextError;
        crate::rules::millis::parse_duration(s).map_err(|e| match e {
            e @ TimeTextError::ClockField(_) => DurationError::Clock(e),
            _ => unreadable(),
        })?
    };
    if d < Millis::ZERO {
        return Err(DurationError::Negative(s.to_string()));
    }
    if d > Millis::from_secs(MAX_DURATION_SECS) {
        return Err(DurationError::TooLong(s.to_string()));
    }
    Ok(d)
}

/// The inverse of [`parse_duration`]: `1:00:00`, `0:02`, `0:01.500`.
pub fn format_duration(d: Millis) -> String {
    let ms = d.as_i64();
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    let (h, m, s, frac) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let mut out = if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}")
    } else {
        format!("{sign}{m}:{s:02}")
    };
    if frac > 0 {
        out.push_str(&format!(".{frac:03}"));
    }
    out
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `; did you mean 'port'?` when one candidate is close (case, '-' for '_', or a small
/// edit distance with transpositions), else nothing.
fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let w = norm(word);
    let best = candidates
        .into_iter()
        .map(|c| {
            let d = if norm(c) == w {
                0
            } else {
                edit_distance(&w, &norm(c))
            };
            (d, c)
        })
        .filter(|(d, c)| *d <= (c.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!("; did you mean '{c}'?"),
        None => String::new(),
    }
}

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions
/// (`prot` → `port` is one edit).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    /// Two nodes whose `[defaults]` differ in any field have different summaries (the
    /// hall compares them before a round, issue 23).
    #[test]
    fn the_defaults_summary_tells_every_field_apart() {
        let d = EventDefaults::default();
        println!("{}", d.summary());
        let changed = [
            EventDefaults {
                time_control: time_control::parse("600+5").unwrap_or(TimeControl::Unknown),
                ..d.clone()
            },
            EventDefaults {
                default_time: Millis(1),
                ..d.clone()
            },
            EventDefaults {
                flag_mode: FlagMode::Claim,
                ..d.clone()
            },
            EventDefaults {
                pauses_extend_default_time: true,
                ..d.clone()
            },
            EventDefaults {
                discrepancy_margin: Millis(1),
                ..d.clone()
            },
        ];
        for c in changed {
            assert_ne!(c.summary(), d.summary());
        }
        assert_eq!(d.summary(), EventDefaults::default().summary());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::walk::BROKER_KEYS;

    #[test]
    fn enum_spellings_match_the_rules_core_serde_names() {
        fn check<T: serde::Serialize + Copy>(table: &[(&str, T)]) {
            for (name, value) in table {
                assert_eq!(serde_json::to_value(value).unwrap(), *name);
            }
        }
        check(FLAG_MODES);
        check(PIECE_LETTERS);
        check(BOTH_ABSENT);
        check(PERIOD_TRANSITIONS);
        check(INCREMENT_CREDITS);
        check(DELAY_DISPLAYS);
        check(SIDES);
        check(MODES);
    }

    #[test]
    fn default_time_control_parses() {
        assert_eq!(
            time_control::parse(DEFAULT_TIME_CONTROL).unwrap(),
            EventDefaults::default().time_control
        );
    }

    #[test]
    fn durations_round_trip() {
        for (text, ms) in [
            ("1:00:00", 3_600_000),
            ("0:02", 2000),
            ("0:01.500", 1500),
            ("90:00", 5_400_000),
            ("3600", 3_600_000),
            ("0:00.05", 50),
            ("90s", 90_000),
            ("500ms", 500),
            ("1h", 3_600_000),
            ("1.5m", 90_000),
            ("240h", 864_000_000),
        ] {
            assert_eq!(parse_duration(text), Ok(Millis(ms)), "{text}");
        }
        for ms in [0, 2000, 1500, 3_600_000, 5_400_000, 86_399_999] {
            assert_eq!(parse_duration(&format_duration(Millis(ms))), Ok(Millis(ms)));
        }
        for bad in [
            "",
            "1:2",
            "1:60",
            "1 h",
            "1:00:00:00",
            "-5",
            "-5s",
            "1.2345",
            "99999999",
            "241h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_duration("-5s"),
            Err(DurationError::Negative("-5s".into()))
        );
        assert_eq!(
            parse_duration("241h"),
            Err(DurationError::TooLong("241h".into()))
        );
    }

    #[test]
    fn suggestions_catch_transpositions_and_case() {
        assert_eq!(
            did_you_mean("prot", BROKER_KEYS.iter().copied()),
            "; did you mean 'port'?"
        );
        assert_eq!(
            did_you_mean("Host", BROKER_KEYS.iter().copied()),
            "; did you mean 'host'?"
        );
        assert_eq!(did_you_mean("zzz", BROKER_KEYS.iter().copied()), "");
    }
}
