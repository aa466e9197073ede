//! Helpers for tests and benchmarks that run a link against the simulator: waiting for an
//! event with a deadline (a failure is a failure, not a hang) and scratch folders.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use super::event::LinkEvent;
use super::session::LinkConfig;

/// Waits up to `timeout` for the first event that `want` accepts, skipping the others.
/// On timeout (or a closed channel) the error lists what was seen instead.
pub async fn wait_for<T>(
    events: &mut mpsc::Receiver<LinkEvent>,
    timeout: Duration,
    mut want: impl FnMut(&LinkEvent) -> Option<T>,
) -> Result<T, String> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(ev)) => {
                if let Some(t) = want(&ev) {
                    return Ok(t);
                }
                if seen.len() < 40 {
                    seen.push(format!("{ev:?}"));
                }
            }
            Ok(None) => return Err(format!("event channel closed; seen: {seen:#?}")),
            Err(_) => {
                return Err(format!(
                    "no matching event within {timeout:?}; seen: {seen:#?}"
                ));
            }
        }
    }
}

/// A fresh, empty folder under the system temp dir, unique per process and `name`.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hallclock-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Link timings shrunk for tests against the simulator (same policies, shorter waits).
pub fn fast_config(path: impl Into<PathBuf>) -> LinkConfig {
    let mut c = LinkConfig::new(path);
    c.settle = Duration::from_millis(30);
    c.handshake_timeout = Duration::from_millis(500);
    c.handshake_attempts = 2;
    c.clock_version_timeout = Duration::from_millis(500);
    c.ack_timeout = Duration::from_millis(250);
    c.probe_interval = Duration::from_millis(200);
    c.silence_timeout = Duration::from_millis(1000);
    c.reopen_backoff_min = Duration::from_millis(20);
    c.reopen_backoff_max = Duration::from_millis(200);
    c
}
