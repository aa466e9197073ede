//! [`Config::validate`]: the checks of an already typed configuration, its values against
//! each other and against the file system as the user running this sees it (state
//! directory, TLS files, serial ports), each problem with its key path and message.

use std::collections::HashMap;
use std::path::Path;

use crate::rules::Millis;

use super::{Commands, Config, LOG_LEVELS, Problem, board_numbers, did_you_mean, quoted_list};

/// From this many boards on one node, a sync window of 0 is a warning.
const BOARDS_FOR_A_SYNC_WINDOW: usize = 2000;

/// A day's journal for one board, at the most a hall plays: 207 bytes per event
/// (measured, docs/BENCHMARKS.md "The journal"), a press every 5 s (blitz: 720 events an
/// hour, moves and commands included), 12 hours of play: 207 × 720 × 12 ≈ 1.8 MB. A
/// classical round is a tenth of that (28 KB per board and round, measured).
pub const DAY_JOURNAL_BYTES_PER_BOARD: u64 = 207 * 720 * 12;

/// Room for a day's journal of `boards` boards: their events and the segment the journal
/// preallocates ahead (`segment_size`, 16 MiB).
pub fn day_journal_bytes(boards: usize) -> u64 {
    boards as u64 * DAY_JOURNAL_BYTES_PER_BOARD + (16 << 20)
}

impl Config {
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
        let bad_id = |id: &str| id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric());
        let not_an_id = |id: &str| {
            format!("'{id}' is not a lichess round id (letters and digits, from the round's URL)")
        };
        if l.rounds.is_empty() {
            if bad_id(&l.round_id) {
                out.push(Problem::error(
                    "broadcast.lichess.round_id",
                    not_an_id(&l.round_id),
                ));
            }
        } else if !l.round_id.is_empty() {
            out.push(Problem::error(
                "broadcast.lichess.round_id",
                "give round_id (the whole round to one lichess round) or rounds (board ranges to several), not both",
            ));
        }
        for (i, r) in l.rounds.iter().enumerate() {
            let at = format!("broadcast.lichess.rounds[{i}]");
            // An entry the walker could not read: its problem is reported already.
            let Some(boards) = r.boards else { continue };
            if bad_id(&r.round_id) {
                out.push(Problem::error(
                    format!("{at}.round_id"),
                    not_an_id(&r.round_id),
                ));
            }
            // A lichess push takes at most 100 games: a wider range could need more.
            if boards.len() > crate::broadcast::push::MAX_GAMES as u64 {
                out.push(Problem::error(
                    format!("{at}.boards"),
                    format!(
                        "\"{boards}\" is {} boards: a lichess round takes at most {} games a push; split it into several rounds",
                        boards.len(),
                        crate::broadcast::push::MAX_GAMES
                    ),
                ));
            }
            for (j, earlier) in l.rounds[..i].iter().enumerate() {
                if let Some(e) = earlier.boards
                    && e.overlaps(&boards)
                {
                    out.push(Problem::error(
                        format!("{at}.boards"),
                        format!(
                            "\"{boards}\" overlaps rounds[{j}] (\"{e}\"): a board goes to one lichess round"
                        ),
                    ));
                }
            }
            if let Some(j) = l.rounds[..i]
                .iter()
                .position(|e| e.boards.is_some() && e.round_id == r.round_id)
            {
                out.push(Problem::error(
                    format!("{at}.round_id"),
                    format!(
                        "'{}' is rounds[{j}]'s too: each board range needs its own lichess round (a push replaces the round's games)",
                        r.round_id
                    ),
                ));
            }
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
        if let Some(why) = id_problem(&self.hall.node) {
            out.push(Problem::error("hall.node", format!("node id {why}")));
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
        self.validate_free_space(out);
    }

    /// Issue 36: a full disk refuses commands (`storage`) and holds events back, so a
    /// state directory without room for a day's journal is said before the event.
    fn validate_free_space(&self, out: &mut Vec<Problem>) {
        // The directory, or (not created yet) the nearest folder above it that exists.
        let Some(existing) = self.hall.state_dir.ancestors().find(|d| d.is_dir()) else {
            return;
        };
        let Ok(fs) = nix::sys::statvfs::statvfs(existing) else {
            return;
        };
        // The casts are no-ops on 64-bit Linux, not on a 32-bit Pi OS (c_ulong).
        #[allow(clippy::unnecessary_cast)]
        let free = (fs.blocks_available() as u64).saturating_mul(fs.fragment_size() as u64);
        let need = day_journal_bytes(self.boards.len());
        if free < need {
            let mb = |b: u64| b.div_ceil(1_000_000);
            out.push(Problem::warning(
                "hall.state_dir",
                format!(
                    "{} is on a file system with {} MB free; a day's journal for {} board(s) may take up to {} MB (about {:.1} MB per board and day of blitz, docs/BENCHMARKS.md): free space or move state_dir. When the disk is full, commands are refused (storage) and events wait to be stored",
                    self.hall.state_dir.display(),
                    mb(free),
                    self.boards.len(),
                    mb(need),
                    DAY_JOURNAL_BYTES_PER_BOARD as f64 / 1e6,
                ),
            ));
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
        // A derived id is only as good as the hall and node ids, which have their own
        // messages; its length is ours, not the operator's doing, and every broker a hall
        // runs accepts it (an operator whose broker insists on 23 bytes sets client_id).
        if b.client_id.is_some() {
            out.extend(client_id_problems(&self.client_id(), true));
        } else if id_problem(&self.hall.id).is_none() && id_problem(&self.hall.node).is_none() {
            out.extend(client_id_problems(&self.client_id(), false));
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
        if d.past_start_grace < Millis::ZERO {
            out.push(Problem::error(
                "defaults.past_start_grace",
                "cannot be negative",
            ));
        } else if d.past_start_grace > Millis::from_mins(10) {
            out.push(Problem::error(
                "defaults.past_start_grace",
                "at most 0:10:00: a start further in the past than that needs the arbiter's \"allow_past_start\", it is never the network's delay",
            ));
        }
    }

    fn validate_sync_window(&self, out: &mut Vec<Problem>) {
        // Measured (docs/BENCHMARKS.md, 5000 boards on two cores): 0 costs about 400
        // fdatasyncs a second and a third of the daemon's CPU, 50 about 20 a second.
        if self.hall.sync_window_ms == 0 && self.boards.len() >= BOARDS_FOR_A_SYNC_WINDOW {
            out.push(Problem::warning(
                "hall.sync_window_ms",
                format!(
                    "0 with {} boards: every press waits for an fdatasync of its own (about 400 a second at 5000 boards, a third of the daemon's CPU); a hall of thousands of boards sets 50, so that the presses of 50 ms share one (docs/OPERATIONS.md)",
                    self.boards.len()
                ),
            ));
        }
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
        if !w.trusted_proxy.is_empty() && w.trusted_proxy.parse::<std::net::IpAddr>().is_err() {
            out.push(Problem::error(
                "web.trusted_proxy",
                format!(
                    "'{}' is not an IP address (the reverse proxy's, e.g. \"127.0.0.1\"; empty: no proxy is trusted)",
                    w.trusted_proxy
                ),
            ));
        }
        self.validate_languages(out);
    }

    /// `web.language` must be served, and every operator catalogue must read: a bad file
    /// is left out at start, so say it here first.
    fn validate_languages(&self, out: &mut Vec<Problem>) {
        let w = &self.web;
        let (languages, errors) = crate::i18n::Languages::load(&w.languages_dir, None);
        for e in errors {
            out.push(Problem::error("web.languages_dir", e.to_string()));
        }
        if !w.language.is_empty() && languages.get(&w.language).is_none() {
            let served: Vec<&str> = languages.codes().collect();
            out.push(Problem::error(
                "web.language",
                format!(
                    "'{}' is not a language this hall serves ({}); add {}/{}.json to serve it",
                    w.language.escape_debug(),
                    served.join(", "),
                    w.languages_dir.display(),
                    w.language.escape_debug()
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

/// Why an id is not `[a-z0-9-]+`, or `None` when it is.
fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("is empty; expected lowercase letters, digits and '-'".into());
    }
    let bad: Vec<char> = id.chars().filter(|c| !crate::id::allowed(*c)).collect();
    if bad.is_empty() {
        return None;
    }
    let mut why = format!(
        "'{id}' may contain only lowercase letters, digits and '-' (it is part of MQTT topics), not {}",
        quoted_chars(&bad)
    );
    let lower = id.to_lowercase().replace(['_', ' ', '.'], "-");
    if crate::id::valid(&lower) {
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
fn pem_has(file: &Path, private_key: bool) -> Result<(), PemError> {
    let text = std::fs::read(file).map_err(PemError::Unreadable)?;
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
        Err(PemError::NoPrivateKey)
    } else {
        Err(PemError::NoCertificate)
    }
}

/// What a TLS file named in the config does not hold.
#[derive(Debug, thiserror::Error)]
enum PemError {
    #[error("cannot be read ({0})")]
    Unreadable(std::io::Error),
    #[error(
        "no unencrypted PEM private key in it (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)"
    )]
    NoPrivateKey,
    #[error("no PEM certificate in it (BEGIN CERTIFICATE)")]
    NoCertificate,
}

/// MQTT 3.1.1 (3.1.3.1) makes a broker accept only 1–23 characters of `[0-9a-zA-Z]`; real
/// brokers (Mosquitto, EMQX, HiveMQ) accept longer UTF-8 ids, but not these.
fn client_id_problems(id: &str, explicit: bool) -> Vec<Problem> {
    let key = "broker.client_id";
    let mut out = Vec::new();
    if id.is_empty() {
        out.push(Problem::error(
            key,
            "empty; remove the key to use the default hallclock-<hall id>-<node>",
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
    } else if explicit && id.len() > 23 {
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
