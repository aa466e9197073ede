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

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use config::{Environment, FileFormat, Format, Map, Source, Value, ValueKind};

use crate::rules::Millis;
use crate::rules::game::{BothAbsent, FlagMode, Setup};
use crate::rules::placement::{Placement, Side};
use crate::rules::time_control::{
    self, ClockOptions, DelayDisplay, IncrementCredit, PeriodTransition, TimeControl,
};

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

/// The `config` crate's origin for values that came from the environment.
const ENV_ORIGIN: &str = "the environment";

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
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            enabled: true,
            listen: "0.0.0.0:8080".into(),
            secure_cookies: false,
        }
    }
}

/// `[hall]`: who this daemon is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HallConfig {
    /// The `<hall>` of the MQTT topics `hallclock/<hall>/…`; `[a-z0-9-]+`.
    pub id: String,
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
            state_dir: PathBuf::from("/var/lib/hallclock"),
            sync_window_ms: 0,
        }
    }
}

/// `[broker]`: the MQTT broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerConfig {
    pub host: String,
    pub port: u16,
    /// `None`: `hallclock-<hall id>`, see [`BrokerConfig::client_id`].
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
    /// The MQTT client id: the configured one, or `hallclock-<hall id>`.
    pub fn client_id(&self, hall_id: &str) -> String {
        match &self.client_id {
            Some(id) => id.clone(),
            None => format!("hallclock-{hall_id}"),
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
}

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
        }
    }
}

impl EventDefaults {
    /// A game's setup from these defaults; the event may still change any field.
    pub fn setup(&self, white: &str, black: &str, start: Millis) -> Setup {
        Setup {
            default_time: self.default_time,
            both_absent: self.both_absent,
            flag_mode: self.flag_mode,
            pauses_extend_default_time: self.pauses_extend_default_time,
            clock: self.clock,
            discrepancy_margin: self.discrepancy_margin,
            ..Setup::new(white, black, self.time_control.clone(), start)
        }
    }
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

    fn validate_security(&self, out: &mut Vec<Problem>) {
        let s = &self.security;
        if s.window_secs == 0 || s.window_secs > 600 {
            out.push(Problem::error(
                "security.window_secs",
                format!("{} is out of range (1 to 600 s)", s.window_secs),
            ));
        }
        match s.commands {
            Commands::Open => out.push(Problem::warning(
                "security.commands",
                "\"open\": anyone who can publish on the broker commands the hall, under any name; use \"signed\" outside a lab",
            )),
            Commands::Signed => match crate::intake::auth::Arbiters::load(&s.arbiters) {
                // No file yet (a fresh install): the clocks run, and every command is
                // refused, saying why, until `hallclock arbiter add` makes one; the daemon
                // says so at start. A file that exists must be right.
                Err(crate::intake::auth::ArbitersError::Read { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => out.push(Problem::error("security.arbiters", e.to_string())),
                Ok(a) if a.accounts().next().is_none() => out.push(Problem::warning(
                    "security.arbiters",
                    format!(
                        "{}: no accounts: every command will be refused; add one with `hallclock arbiter add`",
                        s.arbiters.display()
                    ),
                )),
                Ok(_) => {}
            },
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
                    format!(
                        "{name}: boards cannot be set from the environment; list them in the file"
                    ),
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
                return Err(ConfigError {
                    problems: walk.problems,
                });
            }
        };
        let mut merged = Value::new(None, ValueKind::Table(file));
        let environment = Environment::with_prefix(ENV_PREFIX)
            .separator(ENV_SEPARATOR)
            .source(Some(overrides.into_iter().collect()));
        if let Err(e) = environment.collect_to(&mut merged) {
            walk.error("", e.to_string());
            return Err(ConfigError {
                problems: walk.problems,
            });
        }
        let tree = match merged.kind {
            ValueKind::Table(tree) => tree,
            // collect_to only ever merges into a table.
            _ => Map::new(),
        };
        let config = walk.config(&tree);
        // A key whose value could not be read kept its default (a board that is not a
        // table, an empty placeholder); checking that default would only add a second,
        // misleading message about the same key.
        let bad: HashSet<String> = walk
            .problems
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
        let mut problems = walk.problems;
        problems.extend(config.validate().into_iter().filter(|p| !under_bad(&p.key)));
        // In the order of the documented file, whichever pass found them.
        problems.sort_by_key(|p| file_order(&p.key));
        if problems.iter().any(Problem::is_error) {
            Err(ConfigError { problems })
        } else {
            Ok((config, problems))
        }
    }

    /// The MQTT client id: `broker.client_id`, or `hallclock-<hall id>`.
    pub fn client_id(&self) -> String {
        self.broker.client_id(&self.hall.id)
    }

    /// Semantic checks of an already typed configuration, including the file system
    /// (state directory, CA file, serial ports) as seen by the user running this.
    pub fn validate(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        self.validate_hall(&mut out);
        self.validate_broker(&mut out);
        self.validate_defaults(&mut out);
        self.validate_sync_window(&mut out);
        self.validate_link(&mut out);
        self.validate_web(&mut out);
        if !LOG_LEVELS.contains(&self.log.level.as_str()) {
            out.push(Problem::error(
                "log.level",
                format!(
                    "'{}' is not a log level; expected one of {}{}",
                    self.log.level,
                    quoted_list(&LOG_LEVELS),
                    did_you_mean(&self.log.level, LOG_LEVELS.iter().copied()),
                ),
            ));
        }
        self.validate_security(&mut out);
        self.validate_broadcast(&mut out);
        self.validate_boards(&mut out);
        out
    }

    fn validate_broadcast(&self, out: &mut Vec<Problem>) {
        let b = &self.broadcast;
        let max = crate::broadcast::minutes(crate::broadcast::MAX_DELAY_MINUTES);
        if b.delay < Millis::ZERO || b.delay > max {
            out.push(Problem::error(
                "broadcast.delay_minutes",
                format!(
                    "{} is out of range (0 to {})",
                    b.delay.0 / 60_000,
                    crate::broadcast::MAX_DELAY_MINUTES
                ),
            ));
        }
        let Some(l) = &b.lichess else { return };
        if !l.base_url.starts_with("http://") && !l.base_url.starts_with("https://") {
            out.push(Problem::error(
                "broadcast.lichess.base_url",
                format!("'{}' is not an http:// or https:// URL", l.base_url),
            ));
        }
        if l.round_id.is_empty() || !l.round_id.chars().all(|c| c.is_ascii_alphanumeric()) {
            out.push(Problem::error(
                "broadcast.lichess.round_id",
                format!(
                    "'{}' is not a lichess round id (letters and digits, from the round's URL)",
                    l.round_id
                ),
            ));
        }
        if l.token_file.as_os_str().is_empty() {
            out.push(Problem::error(
                "broadcast.lichess.token_file",
                "missing: the file with the organiser's token (scope study:write)",
            ));
        }
    }

    fn validate_hall(&self, out: &mut Vec<Problem>) {
        if let Some(why) = id_problem(&self.hall.id) {
            out.push(Problem::error("hall.id", format!("hall id {why}")));
        }
        let dir = &self.hall.state_dir;
        let key = "hall.state_dir";
        if dir.as_os_str().is_empty() {
            out.push(Problem::error(key, "empty path"));
            return;
        }
        if dir.is_relative() {
            out.push(Problem::warning(
                key,
                format!(
                    "{} is relative: it depends on the working directory (/ under systemd)",
                    dir.display()
                ),
            ));
        }
        match std::fs::metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => out.push(Problem::warning(
                key,
                format!("{} does not exist; it will be created", dir.display()),
            )),
            Err(e) => out.push(Problem::error(
                key,
                format!("{}: cannot inspect: {e}", dir.display()),
            )),
            Ok(meta) if !meta.is_dir() => out.push(Problem::error(
                key,
                format!("{} exists but is not a directory", dir.display()),
            )),
            Ok(_) => {
                // Write to create files, search (X) to open them by name.
                let access = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
                if let Err(e) = nix::unistd::access(dir, access) {
                    out.push(Problem::error(
                        key,
                        format!("{} is not a writable directory ({e})", dir.display()),
                    ));
                }
            }
        }
    }

    fn validate_broker(&self, out: &mut Vec<Problem>) {
        let b = &self.broker;
        let host = b.host.trim();
        if host.is_empty() {
            out.push(Problem::error(
                "broker.host",
                "empty; expected a host name or address",
            ));
        } else if host.contains("://") {
            out.push(Problem::error(
                "broker.host",
                format!(
                    "'{}' is a URL; give only the host name or address (port and tls are separate keys)",
                    b.host
                ),
            ));
        } else if host.chars().any(char::is_whitespace) || host != b.host {
            out.push(Problem::error(
                "broker.host",
                format!("'{}' contains white space", b.host),
            ));
        }
        if b.port == 0 {
            out.push(Problem::error(
                "broker.port",
                "0 is not a port; the MQTT default is 1883 (8883 with TLS)",
            ));
        }
        // A derived id is only as good as the hall id, which has its own message.
        if b.client_id.is_some() || id_problem(&self.hall.id).is_none() {
            out.extend(client_id_problems(&self.client_id()));
        }
        if b.username.as_deref() == Some("") {
            out.push(Problem::error(
                "broker.username",
                "empty; remove the key to connect without a user name",
            ));
        }
        if b.password.is_some() && b.username.is_none() {
            // MQTT 3.1.1, 3.1.2.9: the password flag requires the user name flag.
            out.push(Problem::error(
                "broker.password",
                "a password without a username: MQTT 3.1.1 (3.1.2.9) sends a password only with a user name",
            ));
        }
        match (&b.ca_file, b.tls) {
            (Some(ca), true) => {
                if !ca.is_file() {
                    out.push(Problem::error(
                        "broker.ca_file",
                        format!("{} does not exist or is not a file", ca.display()),
                    ));
                }
            }
            (Some(ca), false) => out.push(Problem::warning(
                "broker.ca_file",
                format!("{} is ignored because broker.tls is false", ca.display()),
            )),
            (None, _) => {}
        }
        for (key, file, other) in [
            ("broker.client_cert", &b.client_cert, &b.client_key),
            ("broker.client_key", &b.client_key, &b.client_cert),
        ] {
            let Some(file) = file else { continue };
            if !b.tls {
                out.push(Problem::warning(
                    key,
                    format!("{} is ignored because broker.tls is false", file.display()),
                ));
            } else if !file.is_file() {
                out.push(Problem::error(
                    key,
                    format!("{} does not exist or is not a file", file.display()),
                ));
            } else if let Err(why) = pem_has(file, key.ends_with("key")) {
                out.push(Problem::error(key, format!("{}: {why}", file.display())));
            } else if other.is_none() {
                let missing = if key.ends_with("key") {
                    "broker.client_cert"
                } else {
                    "broker.client_key"
                };
                out.push(Problem::error(
                    key,
                    format!("mutual TLS needs both broker.client_cert and broker.client_key; {missing} is not set"),
                ));
            }
        }
        if b.keep_alive_secs == 0 {
            out.push(Problem::warning(
                "broker.keep_alive_secs",
                "0 disables keep-alive: a dead connection goes unnoticed and the broker never publishes our 'offline' last will",
            ));
        }
        if b.max_queued == 0 {
            out.push(Problem::warning(
                "broker.max_queued",
                "0: every message published while the broker is unreachable is dropped (retained state is republished on reconnection)",
            ));
        }
    }

    fn validate_defaults(&self, out: &mut Vec<Problem>) {
        let d = &self.defaults;
        if let Err(why) = d.time_control.periods() {
            out.push(Problem::error(
                "defaults.time_control",
                format!("'{}': {why}", d.time_control),
            ));
        }
        if d.default_time < Millis::ZERO {
            out.push(Problem::error(
                "defaults.default_time",
                "cannot be negative",
            ));
        }
        if d.discrepancy_margin < Millis::ZERO {
            out.push(Problem::error(
                "defaults.discrepancy_margin",
                "cannot be negative",
            ));
        } else if d.discrepancy_margin < Millis::from_secs(1) {
            out.push(Problem::warning(
                "defaults.discrepancy_margin",
                "under 1 s: DGT clocks report whole seconds, so readings normally differ by up to 1 s and would raise false alerts",
            ));
        }
    }

    fn validate_sync_window(&self, out: &mut Vec<Problem>) {
        if self.hall.sync_window_ms > 1000 {
            out.push(Problem::warning(
                "hall.sync_window_ms",
                format!(
                    "{} ms: events wait up to that long before they are published",
                    self.hall.sync_window_ms
                ),
            ));
        }
    }

    fn validate_link(&self, out: &mut Vec<Problem>) {
        let l = &self.link;
        for (key, value) in [
            ("link.liveness_timeout_ms", l.liveness_timeout_ms),
            ("link.ack_timeout_ms", l.ack_timeout_ms),
            ("link.reopen_backoff_max_ms", l.reopen_backoff_max_ms),
        ] {
            if value == 0 {
                out.push(Problem::error(key, "must be at least 1"));
            }
        }
        if l.ack_timeout_ms > 0 && l.ack_timeout_ms >= l.liveness_timeout_ms {
            out.push(Problem::warning(
                "link.ack_timeout_ms",
                format!(
                    "{} ms is not below link.liveness_timeout_ms ({} ms): the board is declared offline before a resend",
                    l.ack_timeout_ms, l.liveness_timeout_ms
                ),
            ));
        }
    }

    fn validate_web(&self, out: &mut Vec<Problem>) {
        let w = &self.web;
        if !w.enabled {
            return;
        }
        if w.listen.parse::<std::net::SocketAddr>().is_err() {
            out.push(Problem::error(
                "web.listen",
                format!(
                    "'{}' is not an address:port (e.g. \"0.0.0.0:8080\", \"[::]:8080\", \"127.0.0.1:8080\" behind a proxy)",
                    w.listen
                ),
            ));
        }
    }

    fn validate_boards(&self, out: &mut Vec<Problem>) {
        if self.boards.is_empty() {
            out.push(Problem::warning(
                "boards",
                "no boards: add a [[boards]] entry per serial port",
            ));
        }
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut ports: HashMap<&Path, usize> = HashMap::new();
        let mut numbers: HashMap<u32, usize> = HashMap::new();
        for (i, n) in board_numbers(&self.boards).into_iter().enumerate() {
            if let Some(first) = numbers.insert(n, i) {
                out.push(Problem::error(
                    format!("boards[{i}].number"),
                    format!(
                        "tournament board {n} is already boards[{first}] (an entry without 'number' follows the one before it)"
                    ),
                ));
            }
        }
        for (i, board) in self.boards.iter().enumerate() {
            let key = format!("boards[{i}]");
            if let Some(why) = id_problem(&board.id) {
                out.push(Problem::error(
                    format!("{key}.id"),
                    format!("board id {why}"),
                ));
            } else if let Some(first) = ids.get(board.id.as_str()) {
                out.push(Problem::error(
                    format!("{key}.id"),
                    format!(
                        "duplicate board id '{}' (also boards[{first}].id)",
                        board.id
                    ),
                ));
            } else {
                ids.insert(&board.id, i);
            }
            let port_key = format!("{key}.port");
            if board.port.as_os_str().is_empty() {
                out.push(Problem::error(port_key, "empty path"));
                continue;
            }
            if let Some(first) = ports.get(board.port.as_path()) {
                out.push(Problem::error(
                    port_key,
                    format!(
                        "{} is already the port of boards[{first}]: one serial port serves one board",
                        board.port.display()
                    ),
                ));
                continue;
            }
            ports.insert(&board.port, i);
            out.extend(port_warning(&board.port).map(|m| Problem::warning(port_key, m)));
        }
    }

    /// The effective configuration as TOML, every key written out (`print-config`).
    /// With `mask_secrets`, the password is shown as `"********"`.
    pub fn effective_toml(&self, mask_secrets: bool) -> String {
        let mut t = TomlOut::default();
        t.line("# hallclock: effective configuration (defaults, then the file, then HALLCLOCK__* environment variables)");
        t.section("hall");
        t.string("id", &self.hall.id);
        t.path("state_dir", &self.hall.state_dir);
        t.raw("sync_window_ms", self.hall.sync_window_ms);

        let b = &self.broker;
        t.section("broker");
        t.string("host", &b.host);
        t.raw("port", b.port);
        t.string("client_id", &self.client_id());
        t.opt_string("username", b.username.as_deref());
        let password = match (&b.password, mask_secrets) {
            (Some(_), true) => Some("********"),
            (p, _) => p.as_deref(),
        };
        t.opt_string("password", password);
        t.raw("tls", b.tls);
        match &b.ca_file {
            Some(ca) => t.path("ca_file", ca),
            None => t.opt_string("ca_file", None),
        }
        for (key, file) in [
            ("client_cert", &b.client_cert),
            ("client_key", &b.client_key),
        ] {
            match file {
                Some(f) => t.path(key, f),
                None => t.opt_string(key, None),
            }
        }
        t.raw("keep_alive_secs", b.keep_alive_secs);
        t.raw("max_queued", b.max_queued);

        let d = &self.defaults;
        t.section("defaults");
        t.string("time_control", &d.time_control.to_string());
        t.string("default_time", &format_duration(d.default_time));
        t.string("flag_mode", name_of(FLAG_MODES, d.flag_mode));
        t.string("both_absent", name_of(BOTH_ABSENT, d.both_absent));
        t.raw("pauses_extend_default_time", d.pauses_extend_default_time);
        t.string("discrepancy_margin", &format_duration(d.discrepancy_margin));
        t.section("defaults.clock");
        let c = &d.clock;
        t.string(
            "period_transition",
            name_of(PERIOD_TRANSITIONS, c.period_transition),
        );
        t.string(
            "increment_credit",
            name_of(INCREMENT_CREDITS, c.increment_credit),
        );
        t.string("delay_display", name_of(DELAY_DISPLAYS, c.delay_display));
        t.raw("freeze_after_last_flag", c.freeze_after_last_flag);

        let l = &self.link;
        t.section("link");
        t.raw("liveness_timeout_ms", l.liveness_timeout_ms);
        t.raw("ack_timeout_ms", l.ack_timeout_ms);
        t.raw("max_resends", l.max_resends);
        t.raw("reopen_backoff_max_ms", l.reopen_backoff_max_ms);

        t.section("log");
        t.string("level", &self.log.level);

        let w = &self.web;
        t.section("web");
        t.raw("enabled", w.enabled);
        t.string("listen", &w.listen);
        t.raw("secure_cookies", w.secure_cookies);
        t.section("security");
        t.string("commands", name_of(COMMANDS, self.security.commands));
        t.path("arbiters", &self.security.arbiters);
        t.raw("window_secs", self.security.window_secs);

        t.section("broadcast");
        t.raw("delay_minutes", self.broadcast.delay.0 / 60_000);
        match &self.broadcast.lichess {
            None => t.line("# [broadcast.lichess]: not set (no push)"),
            Some(l) => {
                t.section("broadcast.lichess");
                t.string("base_url", &l.base_url);
                t.string("round_id", &l.round_id);
                t.path("token_file", &l.token_file);
            }
        }

        if self.boards.is_empty() {
            t.line("");
            t.line("# no [[boards]]");
        }
        for board in &self.boards {
            t.line("");
            t.line("[[boards]]");
            t.string("id", &board.id);
            t.path("port", &board.port);
            t.string("white", name_of(SIDES, board.white));
            if let Some(n) = board.number {
                t.raw("number", n);
            }
        }
        t.out
    }
}

fn is_ours(env_name: &str) -> bool {
    let prefix = format!("{ENV_PREFIX}{ENV_SEPARATOR}");
    env_name.len() > prefix.len()
        && env_name.is_char_boundary(prefix.len())
        && env_name[..prefix.len()].eq_ignore_ascii_case(&prefix)
}

/// Sections in file order, then boards by index; the file as a whole and unknown
/// sections first.
fn file_order(key: &str) -> (usize, usize) {
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
fn env_key_path(env_name: &str) -> String {
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

/// Why an id is not `[a-z0-9-]+`, or `None` when it is.
fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("is empty; expected lowercase letters, digits and '-'".into());
    }
    let bad: Vec<char> = id
        .chars()
        .filter(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        .collect();
    if bad.is_empty() {
        return None;
    }
    let mut why = format!(
        "'{id}' may contain only lowercase letters, digits and '-' (it is part of MQTT topics), not {}",
        quoted_chars(&bad)
    );
    let lower = id.to_lowercase().replace(['_', ' ', '.'], "-");
    if lower
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        why.push_str(&format!("; did you mean '{lower}'?"));
    }
    Some(why)
}

fn quoted_chars(chars: &[char]) -> String {
    let mut seen = Vec::new();
    for c in chars {
        if !seen.contains(c) {
            seen.push(*c);
        }
    }
    seen.iter()
        .map(|c| format!("{:?}", c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a PEM file holds what its key says (a certificate, or a private key), so a
/// swapped or wrong file is found by check-config and not at the first TLS handshake.
fn pem_has(file: &Path, private_key: bool) -> Result<(), String> {
    let text = std::fs::read(file).map_err(|e| format!("cannot be read ({e})"))?;
    let text = String::from_utf8_lossy(&text);
    let found = text.lines().any(|l| {
        l.strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
            .is_some_and(|label| {
                if private_key {
                    label.ends_with("PRIVATE KEY") && !label.contains("ENCRYPTED")
                } else {
                    label == "CERTIFICATE"
                }
            })
    });
    if found {
        Ok(())
    } else if private_key {
        Err("no unencrypted PEM private key in it (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)".into())
    } else {
        Err("no PEM certificate in it (BEGIN CERTIFICATE)".into())
    }
}

/// MQTT 3.1.1 (3.1.3.1) makes a broker accept only 1–23 characters of `[0-9a-zA-Z]`; real
/// brokers (Mosquitto, EMQX, HiveMQ) accept longer UTF-8 ids, but not these.
fn client_id_problems(id: &str) -> Vec<Problem> {
    let key = "broker.client_id";
    let mut out = Vec::new();
    if id.is_empty() {
        out.push(Problem::error(
            key,
            "empty; remove the key to use the default hallclock-<hall id>",
        ));
        return out;
    }
    let control: Vec<char> = id.chars().filter(|c| c.is_control()).collect();
    if !control.is_empty() {
        out.push(Problem::error(
            key,
            format!(
                "contains control characters ({}), which brokers refuse (MQTT 3.1.1, 1.5.3)",
                quoted_chars(&control)
            ),
        ));
    }
    let special: Vec<char> = id
        .chars()
        .filter(|c| matches!(c, '+' | '#' | '/') || c.is_whitespace() && !c.is_control())
        .collect();
    if !special.is_empty() {
        out.push(Problem::error(
            key,
            format!(
                "'{id}' contains {}: wildcards, '/' and spaces break brokers' per-client ACL patterns (Mosquitto's %c) and are refused by some brokers",
                quoted_chars(&special)
            ),
        ));
    }
    if id.len() > 65_535 {
        out.push(Problem::error(
            key,
            "longer than 65535 bytes, the MQTT string limit",
        ));
    } else if id.len() > 23 {
        out.push(Problem::warning(
            key,
            format!(
                "'{id}' is {} bytes: MQTT 3.1.1 only guarantees 23 (Mosquitto, EMQX and HiveMQ accept more)",
                id.len()
            ),
        ));
    }
    out
}

fn port_warning(port: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let shown = port.display();
    let name = port.to_string_lossy();
    let unstable = if name.starts_with("/dev/ttyUSB") || name.starts_with("/dev/ttyACM") {
        "; ttyUSB/ttyACM numbers follow plug order and may name another board after a reboot: prefer /dev/serial/by-id/…"
    } else {
        ""
    };
    match std::fs::metadata(port) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "{shown} does not exist (yet); the board may be unplugged, the daemon keeps trying to open it{unstable}"
        )),
        Err(e) => Some(format!("{shown}: cannot inspect: {e}")),
        Ok(meta) if !meta.file_type().is_char_device() => {
            Some(format!("{shown} is not a serial device (character device)"))
        }
        Ok(_) if !unstable.is_empty() => Some(format!("{shown} exists{unstable}")),
        Ok(_) => None,
    }
}

/// Enum spellings, the same as the rules core's serde names (a test checks).
const FLAG_MODES: &[(&str, FlagMode)] = &[("auto", FlagMode::Auto), ("claim", FlagMode::Claim)];
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

fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("?", |(name, _)| name)
}

/// Parse a duration: integer seconds, or `H:MM:SS` / `M:SS` with an optional `.mmm`.
pub fn parse_duration(s: &str) -> Result<Millis, String> {
    let expected = || {
        format!(
            "expected a duration such as \"1:00:00\", \"2:30\", \"0:01.500\" or a number of seconds, found \"{s}\""
        )
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) if digits(f) && f.len() <= 3 => (w, f),
        Some(_) => return Err(expected()),
        None => (s, ""),
    };
    let parts: Vec<&str> = whole.split(':').collect();
    if parts.len() > 3 || !parts.iter().all(|p| digits(p)) {
        return Err(expected());
    }
    if parts[0].len() > 7 {
        return Err(format!("\"{s}\" is too long: at most 10 days"));
    }
    let mut secs: i64 = 0;
    for (i, p) in parts.iter().enumerate() {
        // parts are 1–7 ASCII digits (first) or checked to be 2 (later): no overflow.
        let n: i64 = p.parse().map_err(|_| expected())?;
        if i > 0 && (p.len() != 2 || n >= 60) {
            return Err(format!(
                "\"{s}\": minutes and seconds after ':' are two digits from 00 to 59"
            ));
        }
        secs = secs * 60 + n;
    }
    let ms: i64 = if frac.is_empty() {
        0
    } else {
        // Pad "5" to "500": the digits are tenths, hundredths, thousandths.
        format!("{frac:0<3}").parse().map_err(|_| expected())?
    };
    if secs > MAX_DURATION_SECS {
        return Err(format!("\"{s}\" is too long: at most 10 days"));
    }
    Ok(Millis(secs * 1000 + ms))
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
const BROADCAST_KEYS: &[&str] = &["delay_minutes", "lichess"];
const LICHESS_KEYS: &[&str] = &["base_url", "round_id", "token_file"];
const SECURITY_KEYS: &[&str] = &["commands", "arbiters", "window_secs"];
const WEB_KEYS: &[&str] = &["enabled", "listen", "secure_cookies"];
const HALL_KEYS: &[&str] = &["id", "state_dir", "sync_window_ms"];
const BROKER_KEYS: &[&str] = &[
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
const BOARD_KEYS: &[&str] = &["id", "port", "white", "number"];

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
        }

        if let Some(t) = self.table(root, "", "broadcast") {
            let b = &mut c.broadcast;
            self.field(t, "broadcast", "delay_minutes", &mut b.delay, |g| {
                integer::<u32>(g).map(crate::broadcast::minutes)
            });
            if let Some(l) = self.table(t, "broadcast", "lichess") {
                let s = "broadcast.lichess";
                let mut lichess = crate::broadcast::LichessSettings {
                    base_url: "https://lichess.org".into(),
                    round_id: String::new(),
                    token_file: PathBuf::new(),
                };
                self.field(l, s, "base_url", &mut lichess.base_url, string);
                self.field(l, s, "round_id", &mut lichess.round_id, string);
                self.field(l, s, "token_file", &mut lichess.token_file, path);
                b.lichess = Some(lichess);
            }
        }

        c.boards = self.boards(root);
        c
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
                });
                continue;
            };
            self.unknown_keys(&s, t, BOARD_KEYS);
            let mut board = BoardConfig {
                id: String::new(),
                port: PathBuf::new(),
                white: Side::Left,
                number: None,
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
            self.field(t, &s, "number", &mut board.number, |g| {
                match integer::<u32>(g)? {
                    0 => Err("0 is out of range: tournament boards are numbered from 1".into()),
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
        read: impl Fn(&Got) -> Result<T, String>,
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

fn string(got: &Got) -> Result<String, String> {
    match &got.value.kind {
        ValueKind::String(s) => Ok(s.clone()),
        other => Err(format!("expected a string, found {}", kind_name(other))),
    }
}

fn path(got: &Got) -> Result<PathBuf, String> {
    match &got.value.kind {
        ValueKind::String(s) if s.is_empty() => {
            Err("expected a path, found an empty string".into())
        }
        ValueKind::String(s) => Ok(PathBuf::from(s)),
        other => Err(format!(
            "expected a path (a string), found {}",
            kind_name(other)
        )),
    }
}

/// An optional key: an empty environment variable unsets it, since the environment has
/// no other way to say "none".
fn optional<T>(
    read: impl Fn(&Got) -> Result<T, String>,
) -> impl Fn(&Got) -> Result<Option<T>, String> {
    move |got| match &got.value.kind {
        ValueKind::String(s) if got.from_env && s.is_empty() => Ok(None),
        _ => read(got).map(Some),
    }
}

fn integer<T: TryFrom<i64> + Bounded>(got: &Got) -> Result<T, String> {
    let range = || format!("an integer from {} to {}", T::MIN_I64, T::MAX_TEXT);
    let n: i64 = match &got.value.kind {
        ValueKind::I64(n) => *n,
        ValueKind::String(s) if got.from_env => s
            .trim()
            .parse()
            .map_err(|_| format!("expected {}, found \"{s}\"", range()))?,
        other => return Err(format!("expected {}, found {}", range(), kind_name(other))),
    };
    T::try_from(n).map_err(|_| format!("{n} is out of range: expected {}", range()))
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

fn boolean(got: &Got) -> Result<bool, String> {
    match &got.value.kind {
        ValueKind::Boolean(b) => Ok(*b),
        ValueKind::String(s) if got.from_env => match s.trim().to_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("expected true or false, found \"{s}\"")),
        },
        other => Err(format!(
            "expected true or false, found {}",
            kind_name(other)
        )),
    }
}

fn duration(got: &Got) -> Result<Millis, String> {
    match &got.value.kind {
        ValueKind::I64(n) if *n < 0 => Err(format!("{n}: a duration cannot be negative")),
        ValueKind::I64(n) if *n > MAX_DURATION_SECS => {
            Err(format!("{n} s is too long: at most 10 days"))
        }
        ValueKind::I64(n) => Ok(Millis::from_secs(*n)),
        ValueKind::String(s) => parse_duration(s.trim()),
        other => Err(format!(
            "expected a duration (\"1:00:00\" or a number of seconds), found {}",
            kind_name(other)
        )),
    }
}

fn time_control_value(got: &Got) -> Result<TimeControl, String> {
    match &got.value.kind {
        ValueKind::String(s) => time_control::parse(s).map_err(|e| {
            format!(
                "time control '{s}': {e} (e.g. \"40/5400+30:1800+30\", see `hallclock tc check`)"
            )
        }),
        other => Err(format!(
            "expected a time control string such as \"40/5400+30:1800+30\", found {}",
            kind_name(other)
        )),
    }
}

fn one_of<T: Copy + PartialEq>(
    table: &'static [(&'static str, T)],
) -> impl Fn(&Got) -> Result<T, String> {
    move |got| {
        let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        match &got.value.kind {
            ValueKind::String(s) => table
                .iter()
                .find(|(n, _)| n == s)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    format!(
                        "'{s}' is not one of {}{}",
                        quoted_list(&names),
                        did_you_mean(s, names.iter().copied())
                    )
                }),
            other => Err(format!(
                "expected one of {}, found {}",
                quoted_list(&names),
                kind_name(other)
            )),
        }
    }
}

/// Writes TOML by hand: the output is small and fixed, and hand-writing keeps the key
/// order of the documented file.
#[derive(Default)]
struct TomlOut {
    out: String,
}

impl TomlOut {
    fn line(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn section(&mut self, name: &str) {
        self.line("");
        self.line(&format!("[{name}]"));
    }

    fn raw(&mut self, key: &str, value: impl fmt::Display) {
        self.line(&format!("{key} = {value}"));
    }

    fn string(&mut self, key: &str, value: &str) {
        self.line(&format!("{key} = {}", toml_string(value)));
    }

    fn path(&mut self, key: &str, value: &Path) {
        self.string(key, &value.to_string_lossy());
    }

    fn opt_string(&mut self, key: &str, value: Option<&str>) {
        match value {
            Some(v) => self.string(key, v),
            None => self.line(&format!("# {key}: not set")),
        }
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_spellings_match_the_rules_core_serde_names() {
        fn check<T: serde::Serialize + Copy>(table: &[(&str, T)]) {
            for (name, value) in table {
                assert_eq!(serde_json::to_value(value).unwrap(), *name);
            }
        }
        check(FLAG_MODES);
        check(BOTH_ABSENT);
        check(PERIOD_TRANSITIONS);
        check(INCREMENT_CREDITS);
        check(DELAY_DISPLAYS);
        check(SIDES);
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
            "1h",
            "1:00:00:00",
            "-5",
            "1.2345",
            "99999999",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
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
