//! A full disk under the daemon's state directory (issue 36), on a real filesystem that
//! fills: a small tmpfs mounted by the test. A command whose record cannot be stored is
//! refused `storage` and applied nowhere; sent again once there is room, it is applied
//! once, and after a restart its resend gets that answer again without applying it twice.
//! A round's PGN archive that cannot be written raises a `storage` alert naming the file,
//! leaves no `.tmp` behind, and is written when space returns.
//!
//! Mounting needs root (CAP_SYS_ADMIN): without it the tests say so and skip.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{NODE, Rig, board_id, signed};
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};

/// A tmpfs of its own, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// `None` (said on stderr) where this process may not mount.
    fn mount(name: &str, size: &str) -> Option<Tmpfs> {
        let dir =
            std::env::temp_dir().join(format!("hallclock-{}-tmpfs-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                eprintln!(
                    "SKIPPED: cannot mount a tmpfs for a full disk ({}); run as root",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED: cannot run mount ({e})");
                None
            }
        }
    }

    /// Fill what is left with a file; returns it (remove it to free the space).
    fn fill(&self) -> PathBuf {
        let path = self.dir.join("filler");
        let mut f = std::fs::File::create(&path).expect("filler");
        let chunk = vec![0xa5u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        // A last partial page: nothing is left at all.
        while f.write_all(&[0xa5]).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a file the daemon still holds open must not keep the mount.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn black_ms(state: &Value) -> i64 {
    state["black"]["remaining_ms"].as_i64().unwrap_or(-1)
}

/// Send `cmd` (a fixed transaction) to `board` and wait for its answer.
async fn send(rig: &mut Rig, board: &str, cmd: &Value) -> Value {
    let topic = rig.topic(&format!("board/{board}/set"));
    let resp = rig.topic(&format!("board/{board}/response"));
    let tx = cmd["transaction"].as_str().unwrap_or("").to_string();
    rig.watcher.publish(&topic, &signed(&topic, cmd)).await;
    rig.watcher
        .wait(&format!("response {tx}"), |m| {
            m.topic == resp && m.json()["transaction"] == tx.as_str()
        })
        .await
        .json()
}

/// Wait until black's time on `board` is `want` in a published state.
async fn black_is(rig: &mut Rig, board: &str, want: i64, what: &str) {
    rig.watcher
        .state(board, what, |s| black_ms(s) == want)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_cannot_be_stored_is_refused_and_applied_nowhere() {
    let Some(fs) = Tmpfs::mount("commands", "2m") else {
        return;
    };
    let state_dir = fs.dir.join("state");
    let mut rig = Rig::start_custom("disk-full-commands", 1, GameDefaults::default(), |s| {
        s.state_dir = state_dir.clone();
        // Small segments: the disk shows full when the next one is allocated.
        s.segment_size = 32 << 10;
    })
    .await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    black_is(&mut rig, &b, 600_000, "black has 10 minutes").await;
    let filler = fs.fill();

    // Until the current segment is used up, commands are stored; then one is refused.
    let mut added = 0;
    let mut refused = None;
    for n in 0..400 {
        let cmd = json!({"transaction": format!("add-{n}"), "action": "add_time",
                         "side": "black", "delta_ms": 1000, "reason": "7.5.5"});
        let r = send(&mut rig, &b, &cmd).await;
        match r["status"].as_str() {
            Some("ok") => added += 1000,
            _ => {
                refused = Some((cmd, r));
                break;
            }
        }
    }
    let Some((cmd, r)) = refused else {
        panic!("400 add_time on a full disk were all answered ok");
    };
    assert_eq!(r["error"], "storage", "{r}");
    let reason = r["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("add_time was not applied")
            && reason.contains("journal/segment-")
            && reason.contains("No space left on device"),
        "the reason says what could not be written and where: {reason}"
    );
    // Applied nowhere: black has what the stored commands gave, not one second more.
    black_is(&mut rig, &b, 600_000 + added, "the stored additions only").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(black_ms(&rig.watcher.latest_state(&b)), 600_000 + added);

    // Still full: the resend is refused again (the refusal is not its answer for good).
    let again = send(&mut rig, &b, &cmd).await;
    assert_eq!(again["error"], "storage", "{again}");

    // Room again: the same transaction is applied, once.
    std::fs::remove_file(&filler).expect("free the space");
    let ok = send(&mut rig, &b, &cmd).await;
    assert_eq!(ok["status"], "ok", "{ok}");
    black_is(&mut rig, &b, 600_000 + added + 1000, "the resend applied").await;

    // After a restart the journal has its answer: a resend is answered, not applied.
    rig.restart_daemon().await;
    let repeat = send(&mut rig, &b, &cmd).await;
    assert_eq!(repeat, ok, "the first ok again");
    let first = send(
        &mut rig,
        &b,
        &json!({"transaction": "add-0", "action": "add_time",
                   "side": "black", "delta_ms": 1000, "reason": "7.5.5"}),
    )
    .await;
    assert_eq!(first["status"], "ok", "{first}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let state = rig.watcher.latest_state(&b);
    assert_eq!(
        black_ms(&state),
        600_000 + added + 1000,
        "no command applied twice: {state}"
    );
    rig.stop().await;
}

/// The files whose name ends in `.tmp` under `dir`, with their sizes.
fn tmp_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(tmp_files(&p));
        } else if p.extension().is_some_and(|x| x == "tmp") {
            out.push((p.clone(), e.metadata().map(|m| m.len()).unwrap_or(0)));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_archive_that_cannot_be_written_is_alerted_and_written_later() {
    let Some(fs) = Tmpfs::mount("archive", "2m") else {
        return;
    };
    let state_dir = fs.dir.join("state");
    let mut rig = Rig::start_custom("disk-full-archive", 1, GameDefaults::default(), |s| {
        s.state_dir = state_dir.clone();
        // One segment holds the whole game: the journal has room, the archive has none.
        s.segment_size = 256 << 10;
    })
    .await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    rig.watcher
        .state(&b, "running", |s| s["phase"] == "running")
        .await;
    let filler = fs.fill();

    let r = rig
        .board_command(
            &b,
            json!({"action": "set_result", "result": "1-0", "reason": "arbiter"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let archive = state_dir.join("pgn/round-1.pgn");
    let topic = rig.topic(&format!("alert/pgn-archive-{NODE}"));
    let alert = rig
        .watcher
        .wait("the archive's storage alert", |m| {
            m.topic == topic && m.raised()
        })
        .await
        .json();
    assert_eq!(alert["kind"], "storage", "{alert}");
    assert_eq!(alert["board"], Value::Null, "{alert}");
    let message = alert["message"].as_str().unwrap_or("");
    assert!(
        message.contains(&archive.display().to_string()) && message.contains("round 1"),
        "the alert names the round and the file: {message}"
    );
    assert!(!archive.exists());
    assert_eq!(tmp_files(&state_dir), vec![], "no .tmp left behind");

    // Room again: the next retry writes it and clears the alert.
    std::fs::remove_file(&filler).expect("free the space");
    let cleared = rig.watcher.wait("the archive's alert cleared", |m| {
        m.topic == topic && m.cleared()
    });
    tokio::time::timeout(Duration::from_secs(20), cleared)
        .await
        .expect("cleared within a retry period");
    let text = std::fs::read_to_string(&archive).expect("the round is archived");
    assert!(text.contains("[Result \"1-0\"]"), "{text}");
    assert_eq!(tmp_files(&state_dir), vec![]);
    rig.stop().await;
}
