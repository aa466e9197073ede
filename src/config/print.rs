//! [`Config::effective_toml`]: the effective configuration written out as TOML, every key
//! in the documented file's order (`hallclock print-config`).

use std::fmt;
use std::path::Path;

use super::{
    BOTH_ABSENT, COMMANDS, Config, DELAY_DISPLAYS, FLAG_MODES, INCREMENT_CREDITS,
    PERIOD_TRANSITIONS, SIDES, format_duration,
};

impl Config {
    /// The effective configuration as TOML, every key written out (`print-config`).
    /// With `mask_secrets`, the password is shown as `"********"`.
    pub fn effective_toml(&self, mask_secrets: bool) -> String {
        let mut t = TomlOut::default();
        t.line("# hallclock: effective configuration (defaults, then the file, then HALLCLOCK__* environment variables)");
        t.section("hall");
        t.string("id", &self.hall.id);
        t.string("node", &self.hall.node);
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
        t.string("mode", d.mode.name());
        t.raw("pauses_extend_default_time", d.pauses_extend_default_time);
        t.string("discrepancy_margin", &format_duration(d.discrepancy_margin));
        t.string("past_start_grace", &format_duration(d.past_start_grace));
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
        t.string("trusted_proxy", &w.trusted_proxy);
        t.string("language", &w.language);
        t.string("languages_dir", &w.languages_dir.display().to_string());
        t.section("security");
        t.string("commands", name_of(COMMANDS, self.security.commands));
        t.path("arbiters", &self.security.arbiters);
        t.raw("window_secs", self.security.window_secs);

        t.section("broadcast");
        t.raw("delay_minutes", self.broadcast.delay.0 / 60_000);
        t.string("event", self.broadcast.tags.event.as_deref().unwrap_or(""));
        t.string("site", self.broadcast.tags.site.as_deref().unwrap_or(""));
        match &self.broadcast.lichess {
            None => t.line("# [broadcast.lichess]: not set (no push)"),
            Some(l) => {
                t.section("broadcast.lichess");
                t.string("base_url", &l.base_url);
                t.string("round_id", &l.round_id);
                let rounds: Vec<String> = l
                    .rounds
                    .iter()
                    .map(|r| {
                        let boards = r.boards.map(|b| b.to_string()).unwrap_or_default();
                        format!(
                            "{{ boards = {}, round_id = {} }}",
                            toml_string(&boards),
                            toml_string(&r.round_id)
                        )
                    })
                    .collect();
                t.raw("rounds", format!("[{}]", rounds.join(", ")));
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
            if let Some(m) = board.mode {
                t.string("mode", m.name());
            }
        }
        t.out
    }
}

fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("?", |(name, _)| name)
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
pub(super) fn toml_string(s: &str) -> String {
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
