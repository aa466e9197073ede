//! Helpers for tests and benchmarks that run a link against the simulator: waiting for an
//! event with a deadline (a failure is a failure, not a hang) and scratch folders.

use std::path::{Path, PathBuf};
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
    sweep_ended_scratch_dirs();
    let dir = std::env::temp_dir().join(format!("hallclock-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Removes, once per process, the scratch folders (`hallclock-<pid>-<name>`) of test and
/// bench processes that have ended. Why: a test keeps its folder, to be read after a
/// failure, and a machine that ran the suite and the 5000-board bench all day filled its
/// disk with them (44 GB). A folder now lasts until the next run starts; a running
/// process's folders are never touched.
pub fn sweep_ended_scratch_dirs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| sweep_ended_in(&std::env::temp_dir(), Path::new("/proc")));
}

/// [`sweep_ended_scratch_dirs`] in `root`, a process being alive while `/proc/<pid>`
/// (under `proc`) exists.
pub fn sweep_ended_in(root: &Path, proc: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(pid) = scratch_pid(name) else {
            continue;
        };
        // The name once more, whole, from the pid: should the parsing above ever go wrong,
        // this removes nothing but our own folders. (A mutant of `scratch_pid` returning
        // `Some(0)` emptied the whole of /tmp, cargo-mutants' own build folder with it.)
        let ours = name.starts_with(&format!("hallclock-{pid}-"));
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if ours && is_dir && pid != std::process::id() && !proc.join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The pid in a scratch folder's name, `hallclock-<pid>-<name>`.
fn scratch_pid(name: &str) -> Option<u32> {
    let (pid, rest) = name.strip_prefix("hallclock-")?.split_once('-')?;
    if rest.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_names_its_process() {
        assert_eq!(scratch_pid("hallclock-1234-sim-flag"), Some(1234));
        assert_eq!(scratch_pid("hallclock-7-x"), Some(7));
        for not in [
            "hallclock-1234-",
            "hallclock-1234",
            "hallclock-demo-1234",
            "hallclock-+12-x",
            "hallclock--x",
            "hallclock-99999999999-x",
            "other-1234-x",
        ] {
            assert_eq!(scratch_pid(not), None, "{not}");
        }
    }

    #[test]
    fn only_the_folders_of_ended_processes_are_swept() {
        let root = scratch_dir("sweep");
        let proc = root.join("proc");
        let me = std::process::id();
        // Pid 41 is "running" (it has a /proc entry here), 42 has ended.
        for d in [
            "proc/41",
            "hallclock-41-alive",
            "hallclock-42-ended",
            "hallclock-42-ended-too/inside",
            "hallclock-demo-42",
        ] {
            let _ = std::fs::create_dir_all(root.join(d));
        }
        let mine = format!("hallclock-{me}-mine");
        let _ = std::fs::create_dir_all(root.join(&mine));
        let _ = std::fs::write(root.join("hallclock-42-a-file"), b"kept: not a folder");
        sweep_ended_in(&root, &proc);
        let left: std::collections::BTreeSet<String> = std::fs::read_dir(&root)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let expected: std::collections::BTreeSet<String> = [
            "proc",
            "hallclock-41-alive",
            "hallclock-demo-42",
            "hallclock-42-a-file",
            mine.as_str(),
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(left, expected);
        let _ = std::fs::remove_dir_all(&root);
    }
}
