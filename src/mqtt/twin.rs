//! What the connection learns about the broker and about itself there (issue 36), sans-IO:
//! the connection's session (`session`) hands it what it sees and publishes what it says.
//!
//! - **Another daemon under this node's id.** Two hall servers left with the default host
//!   name get one node id, hence one MQTT client id: the broker throws the older connection
//!   off at each connection of the other ("client-id takeover"), and the two reconnect into
//!   each other several times a second. rumqttc only sees "connection closed by peer". Each
//!   process puts a random `instance` in its retained node status (and its last will); a
//!   connection that finds another instance under its own node's status (the other's
//!   `online`, or its last will when the broker published it at the takeover) and is then
//!   closed within [`SHORT`] of its start, twice in a row, is such a twin. The status an
//!   earlier run left is seen too, but then the connection stays. A connection that lasts
//!   [`ALONE_AGAIN`] clears the alert: with a twin none does, since the other reconnects
//!   (and throws this one off) within [`TWIN_BACKOFF`] + [`JITTER`].
//! - **The broker's version** (`$SYS/broker/version`, read once per connection). Mosquitto
//!   2.0.19 to 2.0.21 time keep-alives on the wall clock, so a forward step of the server's
//!   clock disconnects every client (eclipse-mosquitto/mosquitto#3238, fixed in 2.0.22):
//!   since the CLOCK_BOOTTIME probing of mosquitto#3090 (merged 2024-07, so in 2.0.19) the
//!   broker's clock id is left at 0, CLOCK_REALTIME; mosquitto#3250 reports 2.0.18 fine and
//!   2.0.20 affected. Older ones are not: 2.0.11 (Debian 12, Raspberry Pi OS bookworm)
//!   initialises it to CLOCK_MONOTONIC, and keeps every client through a two-hour step of
//!   its wall clock (tests/broker_e2e.rs, measured with libfaketime).

use std::time::Duration;

use std::time::Instant;

use super::payload::NodeStatusPayload;

/// A connection closed within this long of its start counts as thrown off.
pub const SHORT: Duration = Duration::from_secs(10);
/// Short connections in a row, each with another instance seen, that make a twin.
const IN_A_ROW: u32 = 2;
/// Once a twin is seen, at least this long (plus up to [`JITTER`]) between reconnections, so
/// the two take turns on the broker instead of flapping several times a second.
pub const TWIN_BACKOFF: Duration = Duration::from_secs(20);
const JITTER: Duration = Duration::from_secs(20);
/// A connection that lasts this long without a twin clears the alert.
pub const ALONE_AGAIN: Duration = Duration::from_secs(60);

/// The alert ids' bases (`<base>-<node>`, `crate::alert::HALL_ALERTS`).
pub const TWIN_ALERT: &str = "node-twin";
pub const VERSION_ALERT: &str = "broker-version";

/// The Mosquitto versions whose keep-alives follow the wall clock: from `BROKEN` up to,
/// not including, `FIXED`.
const BROKEN: (u32, u32, u32) = (2, 0, 19);
const FIXED: (u32, u32, u32) = (2, 0, 22);

/// What the connection says after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Say {
    /// Raise (or keep) the alert with this message.
    Raise(crate::alert::Said),
    /// Clear it.
    Clear,
}

/// Twin detection for one process.
#[derive(Debug)]
pub struct Twin {
    node: String,
    /// This process's instance id.
    pub instance: String,
    connected_at: Option<Instant>,
    /// Another instance seen online during this connection (the latest one).
    other: Option<String>,
    short_in_a_row: u32,
    detected: bool,
    /// This connection was judged by [`Twin::alone_again`] already.
    judged: bool,
    /// The first reconnection after the detection is not held back: it carries the alert
    /// to the broker; the spacing starts after it.
    announce: bool,
}

impl Twin {
    pub fn new(node: &str, instance: String) -> Twin {
        Twin {
            node: node.to_string(),
            instance,
            connected_at: None,
            other: None,
            short_in_a_row: 0,
            detected: false,
            judged: false,
            announce: false,
        }
    }

    pub fn connected(&mut self, now: Instant) {
        self.connected_at = Some(now);
        self.other = None;
        self.judged = false;
    }

    /// A copy of this node's own status arrived (retained or live, online or a last will).
    pub fn own_status(&mut self, payload: &[u8]) {
        let Ok(s) = serde_json::from_slice::<NodeStatusPayload>(payload) else {
            return;
        };
        if let Some(i) = s.instance.filter(|i| *i != self.instance) {
            self.other = Some(i);
        }
    }

    /// The connection was lost at `now`: a twin, when it is the news.
    pub fn lost(&mut self, now: Instant) -> Option<Say> {
        let started = self.connected_at.take()?;
        let short = now.saturating_duration_since(started) < SHORT;
        let other = self.other.take();
        match other {
            Some(_) if short => self.short_in_a_row += 1,
            _ => {
                self.short_in_a_row = 0;
                return None;
            }
        }
        if self.short_in_a_row < IN_A_ROW || self.detected {
            return None;
        }
        self.detected = true;
        self.announce = true;
        Some(Say::Raise(self.message(other.as_deref())))
    }

    fn message(&self, other: Option<&str>) -> crate::alert::Said {
        let text = format!(
            "another hallclock is connected to the broker as node {node} (the broker's client-id takeover: each connection throws the other off; this process is instance {me}, the other {other}): give each hall server its own [hall] node / hostname. Until then this one reconnects only every {lo}-{hi} s",
            node = self.node,
            me = self.instance,
            other = other.unwrap_or("?"),
            lo = TWIN_BACKOFF.as_secs(),
            hi = (TWIN_BACKOFF + JITTER).as_secs(),
        );
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        crate::alert::Said::new(
            "broker.twin",
            serde_json::json!({
                "node": self.node,
                "instance": self.instance,
                "other": other.unwrap_or("?"),
                "retry_min_ms": ms(TWIN_BACKOFF),
                "retry_max_ms": ms(TWIN_BACKOFF + JITTER),
            }),
            text,
        )
    }

    /// How long to wait at least before the next reconnection.
    pub fn backoff_floor(&mut self) -> Duration {
        if !self.detected || std::mem::take(&mut self.announce) {
            return Duration::ZERO;
        }
        // Random, so two twins fall out of step and each holds the broker a while.
        TWIN_BACKOFF + JITTER.mul_f64(rand::random::<f64>())
    }

    /// When the alert can be cleared: a connection that has lasted [`ALONE_AGAIN`].
    pub fn clear_at(&self) -> Option<Instant> {
        (self.detected && !self.judged)
            .then_some(self.connected_at)
            .flatten()
            .map(|t| t + ALONE_AGAIN)
    }

    /// The connection lasted [`ALONE_AGAIN`]: the other is gone (or renamed).
    pub fn alone_again(&mut self) -> Option<Say> {
        self.judged = true;
        if !self.detected {
            return None;
        }
        self.detected = false;
        self.short_in_a_row = 0;
        Some(Say::Clear)
    }
}

/// `$SYS/broker/version`, where Mosquitto says what it is.
pub const VERSION_TOPIC: &str = "$SYS/broker/version";

/// What the broker's version means for the hall: an alert for a Mosquitto whose
/// keep-alives follow the wall clock, else a clear.
pub fn judge_version(payload: &[u8]) -> Say {
    let text = String::from_utf8_lossy(payload);
    let text = text.trim();
    match mosquitto_version(text) {
        Some(v @ (a, b, c)) if (BROKEN..FIXED).contains(&v) => Say::Raise(crate::alert::Said::new(
            "broker.mosquitto_clock_steps",
            serde_json::json!({ "version": format!("{a}.{b}.{c}") }),
            format!(
                "Mosquitto {a}.{b}.{c} disconnects every client when the server's clock steps forward (2.0.19 to 2.0.21; fixed in 2.0.22, eclipse-mosquitto/mosquitto#3238); the daemon reconnects and republishes, but dashboards blink and commands in flight must be resent. Upgrade Mosquitto (2.0.22 or later), or keep the broker's clock from stepping while it runs: run chrony so that steps happen at boot, before Mosquitto starts (order mosquitto after time-set.target), and set the clock before the event (docs/OPERATIONS.md, \"Mosquitto and a clock that steps\")"
            ),
        )),
        _ => Say::Clear,
    }
}

/// `mosquitto version 2.0.11` → (2, 0, 11); anything else (another broker) → None.
fn mosquitto_version(text: &str) -> Option<(u32, u32, u32)> {
    let v = text.strip_prefix("mosquitto version ")?;
    let mut parts = v
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// A random instance id: 16 hex digits.
pub fn new_instance() -> String {
    format!("{:016x}", rand::random::<u64>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mqtt::payload::NodeState;

    fn status(instance: &str, state: NodeState) -> Vec<u8> {
        serde_json::to_vec(&NodeStatusPayload {
            node: "n".into(),
            state,
            boards: vec![],
            version: "0".into(),
            boot: crate::rules::Millis(1),
            defaults: None,
            instance: Some(instance.into()),
        })
        .unwrap_or_default()
    }

    #[test]
    fn a_twin_is_two_short_connections_that_saw_another_instance() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut t = Twin::new("n", "me".into());
        // A stale status of an earlier run, then a connection that stays: nothing.
        t.connected(ms(0));
        t.own_status(&status("old", NodeState::Online));
        t.own_status(&status("me", NodeState::Online));
        assert_eq!(t.lost(ms(60_000)), None);
        // Another instance, then thrown off at once: once is not yet a twin.
        t.connected(ms(60_200));
        t.own_status(&status("other", NodeState::Online));
        assert_eq!(t.lost(ms(60_400)), None);
        assert_eq!(t.backoff_floor(), Duration::ZERO);
        t.connected(ms(60_600));
        t.own_status(&status("other", NodeState::Online));
        let Some(Say::Raise(said)) = t.lost(ms(60_800)) else {
            panic!("a twin");
        };
        assert_eq!(said.code, "broker.twin");
        assert!(said.listed(), "{said:?}");
        let m = said.message;
        assert!(
            m.contains("another hallclock is connected to the broker as node n"),
            "{m}"
        );
        assert!(m.contains("instance me, the other other"), "{m}");
        assert_eq!(
            t.backoff_floor(),
            Duration::ZERO,
            "the alert goes out first"
        );
        assert!(t.backoff_floor() >= TWIN_BACKOFF);
        // Said once.
        t.connected(ms(90_000));
        t.own_status(&status("other", NodeState::Online));
        assert_eq!(t.lost(ms(90_100)), None);
        // The other's last will (offline) is another instance too.
        t.connected(ms(120_000));
        t.own_status(&status("other", NodeState::Offline));
        assert_eq!(t.lost(ms(120_100)), None, "said once");
        // The other is gone: a connection lasts, and that clears it (its last will stays).
        t.connected(ms(150_000));
        t.own_status(&status("other", NodeState::Offline));
        assert_eq!(t.clear_at(), Some(ms(150_000) + ALONE_AGAIN));
        assert_eq!(t.alone_again(), Some(Say::Clear));
        assert_eq!(t.clear_at(), None, "judged once");
        assert_eq!(t.backoff_floor(), Duration::ZERO);
        assert_eq!(t.lost(ms(150_000) + ALONE_AGAIN * 2), None);
    }

    #[test]
    fn mosquitto_2_0_19_to_2_0_21_is_warned_about() {
        let raise = |v: &str| matches!(judge_version(v.as_bytes()), Say::Raise(_));
        assert!(raise("mosquitto version 2.0.19"));
        assert!(raise("mosquitto version 2.0.20"));
        assert!(raise("mosquitto version 2.0.21\n"));
        // Before 2.0.19 the broker's keep-alives were on CLOCK_MONOTONIC (Debian 12's 2.0.11
        // keeps its clients through a step: tests/broker_e2e.rs).
        assert!(!raise("mosquitto version 2.0.11"));
        assert!(!raise("mosquitto version 2.0.18"));
        assert!(!raise("mosquitto version 1.6.9"));
        assert!(!raise("mosquitto version 2.0.22"));
        assert!(!raise("mosquitto version 2.1.0"));
        assert!(!raise("mosquitto version 3"));
        assert!(!raise("EMQX 5.1"));
        let Say::Raise(said) = judge_version(b"mosquitto version 2.0.20") else {
            panic!()
        };
        assert_eq!(said.code, "broker.mosquitto_clock_steps");
        assert_eq!(said.params["version"], "2.0.20");
        let m = said.message;
        assert!(
            m.starts_with(
                "Mosquitto 2.0.20 disconnects every client when the server's clock steps forward"
            ),
            "{m}"
        );
    }
}
