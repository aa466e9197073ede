//! Only arbiters command the hall (issue 11): every refusal over a real Mosquitto, a
//! captured command replayed, idempotent transactions (also across a restart), and the
//! `hallclock command` / `hallclock arbiter` seams through the binary.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

use common::{Rig, board_id, key_of, now_ms, signed, signed_as};
use hallclock::intake::auth::{Arbiters, Security, envelope, sign_now};
use hallclock::link::testing::scratch_dir;
use hallclock::rules::Millis;
use serde_json::{Value, json};

/// Publish raw bytes on `board`'s set topic and wait for the response to `tx`.
async fn raw(rig: &mut Rig, board: &str, tx: &str, payload: &[u8]) -> Value {
    let topic = rig.topic(&format!("board/{board}/set"));
    rig.watcher.publish(&topic, payload).await;
    let resp = rig.topic(&format!("board/{board}/response"));
    rig.watcher
        .wait(&format!("response {tx}"), |m| {
            m.topic == resp && m.json()["transaction"] == tx
        })
        .await
        .json()
}

fn time_added(rig: &mut Rig, board: &str) -> usize {
    let topic = rig.topic(&format!("board/{board}/event"));
    rig.watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic && m.json()["event"] == "time_added")
        .count()
}

fn add_time(tx: &str, ms: i64) -> Value {
    json!({"transaction": tx, "action": "add_time", "side": "white", "delta_ms": ms, "reason": "test"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_over_mqtt_changes_nothing() {
    let mut rig = Rig::start("auth-refusals", 2).await;
    let r = rig.start_round(2, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b1 = board_id(1);
    let set = rig.topic(&format!("board/{b1}/set"));
    let chief = key_of("chief");
    let now = || Millis(now_ms());

    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "unsigned",
            add_time("unsigned", 1000).to_string().into_bytes(),
            "unauthenticated",
            "unsigned command",
        ),
        (
            "unknown",
            sign_now("nobody", &chief, &set, add_time("unknown", 1000), now()),
            "unauthenticated",
            "unknown arbiter 'nobody'",
        ),
        (
            "badsig",
            envelope("chief", &key_of("viewer"), &set, &{
                let mut c = add_time("badsig", 1000);
                c["ts"] = json!(now_ms());
                c.to_string()
            }),
            "unauthenticated",
            "bad signature for arbiter 'chief'",
        ),
        (
            "altered",
            {
                let good: Value =
                    serde_json::from_slice(&signed(&set, &add_time("altered", 1000))).unwrap();
                let payload = good["payload"].as_str().unwrap().replace("1000", "900000");
                json!({"arbiter": "chief", "payload": payload, "sig": good["sig"]})
                    .to_string()
                    .into_bytes()
            },
            "unauthenticated",
            "bad signature",
        ),
        (
            "other-topic",
            signed(
                &rig.topic(&format!("board/{}/set", board_id(2))),
                &add_time("other-topic", 1000),
            ),
            "unauthenticated",
            "signed for another topic",
        ),
        (
            "expired",
            sign_now(
                "chief",
                &chief,
                &set,
                add_time("expired", 1000),
                Millis(now_ms() - 10 * 60_000),
            ),
            "expired",
            "the hall server's clock reads",
        ),
        (
            "viewer",
            signed_as("viewer", &set, &add_time("viewer", 1000)),
            "forbidden",
            "'viewer' is a viewer",
        ),
        (
            "not-the-signer",
            signed(&set, &{
                let mut c = add_time("not-the-signer", 1000);
                c["arbiter"] = json!("IA Schmid (not really)");
                c
            }),
            "bad_command",
            "is not the signer 'chief'",
        ),
    ];
    for (tx, payload, error, reason) in cases {
        let r = raw(&mut rig, &b1, tx, &payload).await;
        assert_eq!(r["status"], "error", "{tx}: {r}");
        assert_eq!(r["error"], error, "{tx}: {r}");
        assert!(
            r["reason"].as_str().unwrap_or("").contains(reason),
            "{tx}: {r}"
        );
    }
    // An arbiter of board-001 only: not board-002, not hall-wide.
    let b2 = board_id(2);
    let r = rig
        .board_command_as("ia-one", &b2, add_time("x", 1000))
        .await;
    assert_eq!(r["error"], "forbidden", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or("")
            .contains("'ia-one' may command board-001 only, not board-002"),
        "{r}"
    );
    let hall_set = rig.topic("set");
    rig.watcher
        .publish(
            &hall_set,
            &signed_as(
                "ia-one",
                &hall_set,
                &json!({"transaction": "ia-pause", "action": "pause"}),
            ),
        )
        .await;
    let resp = rig.topic("response");
    let r = rig
        .watcher
        .wait("ia-one's hall pause", |m| {
            m.topic == resp && m.json()["transaction"] == "ia-pause"
        })
        .await
        .json();
    assert_eq!(r["error"], "forbidden", "{r}");
    // A viewer may still ask for a replay (a read).
    rig.watcher
        .publish(
            &hall_set,
            &signed_as(
                "viewer",
                &hall_set,
                &json!({"transaction": "v-replay", "action": "replay", "board": b1, "reply_to": "viewer-replay"}),
            ),
        )
        .await;
    let r = rig
        .watcher
        .wait("the viewer's replay", |m| {
            m.topic == resp && m.json()["transaction"] == "v-replay"
        })
        .await
        .json();
    assert_eq!(r["status"], "ok", "{r}");
    // Nothing above changed a clock; the one arbiter of board-001 may.
    assert_eq!(time_added(&mut rig, &b1) + time_added(&mut rig, &b2), 0);
    let r = rig
        .board_command_as("ia-one", &b1, add_time("ia-ok", 1000))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let e = rig.watcher.event(&b1, "time_added").await;
    assert_eq!(
        e["arbiter"], "IA Board One",
        "the proven name is recorded: {e}"
    );
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_transaction_is_applied_once_and_answered_the_same_also_after_a_restart() {
    let mut rig = Rig::start_custom("auth-idem", 1, Default::default(), |s| {
        // Room for a restart between the first and the last copy of the same bytes.
        if let Security::Signed { window, .. } = &mut s.security {
            *window = Millis(10 * 60_000);
        }
    })
    .await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    let set = rig.topic(&format!("board/{b}/set"));
    // A dashboard's command, as an eavesdropper on the broker records it.
    let capture = signed(&set, &add_time("dup-1", 10_000));
    let first = raw(&mut rig, &b, "dup-1", &capture).await;
    assert_eq!(first["status"], "ok", "{first}");
    rig.watcher.event(&b, "time_added").await;
    let again = raw(&mut rig, &b, "dup-1", &capture).await;
    assert_eq!(again, first, "the first reply, again");
    // The same transaction id for another command: refused as a replay.
    let reused = raw(
        &mut rig,
        &b,
        "dup-1",
        &signed(&set, &add_time("dup-1", 20_000)),
    )
    .await;
    assert_eq!(reused["error"], "replayed", "{reused}");
    // A later command is answered after the repeats: nothing of theirs was pending.
    let r = rig
        .board_command(&b, json!({"action": "present", "side": "white"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(time_added(&mut rig, &b), 1, "+10 s once, not twice");

    rig.restart_daemon().await;
    let after = raw(&mut rig, &b, "dup-1", &capture).await;
    assert_eq!(after, first, "the journal remembers the first reply");
    let r = rig
        .board_command(&b, json!({"action": "present", "side": "black"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        time_added(&mut rig, &b),
        1,
        "not applied again after the restart"
    );
    rig.stop().await;
}

fn hallclock(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_client_signs_waits_and_exits_by_the_answer() {
    let mut rig = Rig::start("auth-cli", 1).await;
    let r = rig.start_round(1, "600", 60_000, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let dir = scratch_dir("auth-cli-keys");
    let write = |id: &str| {
        let p = dir.join(format!("{id}.key"));
        std::fs::write(&p, format!("{}\n", key_of(id).to_hex())).unwrap();
        p.display().to_string()
    };
    let (chief, viewer) = (write("chief"), write("viewer"));
    let broker = format!("127.0.0.1:{}", rig.broker.port);
    let run = |id: &'static str, key: String, command: &'static str| {
        let broker = broker.clone();
        tokio::task::spawn_blocking(move || {
            hallclock(&[
                "command",
                "--hall",
                common::HALL,
                "--board",
                "board-001",
                "--arbiter",
                id,
                "--key-file",
                &key,
                "--broker",
                &broker,
                command,
            ])
        })
    };
    let out = run("chief", chief, r#"{"action": "present", "side": "white"}"#)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["action"].as_str()),
        (Some("ok"), Some("present"))
    );
    rig.watcher.event(&board_id(1), "player_present").await;
    let out = run(
        "viewer",
        viewer,
        r#"{"action": "present", "side": "black"}"#,
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{text}");
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["error"], "forbidden", "{v}");
    rig.stop().await;
}

#[test]
fn the_arbiter_cli_keeps_the_file_root_only_and_shows_a_key_once() {
    let dir = scratch_dir("auth-arbiter-cli");
    let file = dir.join("arbiters.toml");
    let key_file = dir.join("ia.key");
    let f = file.display().to_string();
    let out = hallclock(&[
        "arbiter",
        "add",
        "ia-meyer",
        "--name",
        "IA Meyer",
        "--role",
        "arbiter",
        "--boards",
        "board-001,board-01*",
        "--file",
        &f,
        "--key-file",
        &key_file.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(key.len(), 64, "{key}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&key_file), 0o600);
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), key);
    let a = Arbiters::load(&file).unwrap();
    let acc = a.get("ia-meyer").unwrap();
    assert_eq!(acc.key.to_hex(), key);
    assert_eq!(acc.name, "IA Meyer");
    // The same id twice is refused; a list never shows a key.
    let out = hallclock(&["arbiter", "add", "ia-meyer", "--name", "X", "--file", &f]);
    assert_eq!(out.status.code(), Some(1));
    let out = hallclock(&["arbiter", "list", "--file", &f]);
    let list = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(list, "ia-meyer\tarbiter\tboard-001,board-01*\tIA Meyer\n");
    assert!(!list.contains(&key));
    // reset: a new key, printed once; the old one is gone.
    let out = hallclock(&["arbiter", "reset", "ia-meyer", "--file", &f]);
    let new = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(out.status.success() && new.len() == 64 && new != key);
    assert_eq!(
        Arbiters::load(&file)
            .unwrap()
            .get("ia-meyer")
            .unwrap()
            .key
            .to_hex(),
        new
    );
    // A file others can read is refused: it holds the keys.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = hallclock(&["arbiter", "list", "--file", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 600"));
    // The daemon's group may read it; a rewrite keeps that.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = hallclock(&["arbiter", "reset", "ia-meyer", "--file", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&file), 0o640);
    let out = hallclock(&["arbiter", "remove", "ia-meyer", "--file", &f]);
    assert!(out.status.success());
    assert!(Arbiters::load(&file).unwrap().get("ia-meyer").is_none());
}

/// `hallclock arbiter … --password` with the password on standard input (a script's way;
/// a terminal is asked twice without echo).
fn hallclock_with_stdin(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).expect("stdin");
    }
    child.wait_with_output().expect("the binary ends")
}

#[test]
fn the_arbiter_cli_sets_a_dashboard_password_read_from_stdin_and_keeps_the_key() {
    let dir = scratch_dir("auth-arbiter-password");
    let file = dir.join("arbiters.toml");
    let f = file.display().to_string();
    let add = [
        "arbiter",
        "add",
        "ia-rossi",
        "--name",
        "IA Rossi",
        "--role",
        "chief",
        "--file",
        &f,
        "--password",
    ];
    // Too short: refused, and no file is written.
    let out = hallclock_with_stdin(&add, "short\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at least 8 characters"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!file.exists());
    let out = hallclock_with_stdin(&add, "first password\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("first password"),
        "only a hash is stored: {text}"
    );
    assert!(text.contains("password = \"pbkdf2-sha256$"), "{text}");
    let a = Arbiters::load(&file).unwrap();
    assert_eq!(
        a.login("ia-rossi", "first password").map(|i| i.name),
        Some("IA Rossi".into())
    );
    // reset --password: a new password, the same key.
    let out = hallclock_with_stdin(
        &["arbiter", "reset", "ia-rossi", "--file", &f, "--password"],
        "second password\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = Arbiters::load(&file).unwrap();
    assert!(a.login("ia-rossi", "first password").is_none());
    assert!(a.login("ia-rossi", "second password").is_some());
    assert_eq!(a.get("ia-rossi").unwrap().key.to_hex(), key);
    // A key reset keeps the password.
    let out = hallclock(&["arbiter", "reset", "ia-rossi", "--file", &f]);
    assert!(out.status.success());
    assert!(
        Arbiters::load(&file)
            .unwrap()
            .login("ia-rossi", "second password")
            .is_some()
    );
}
