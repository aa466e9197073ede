//! examples/mqtt-client/hall_client.py, the client written from the documents alone
//! (issue 41), against a real daemon on a real Mosquitto: it rebuilds the hall's picture
//! from the retained messages, signs a hall command and a board command as SECURITY.md
//! says, and reads their answers; a command signed with the wrong key is refused.
//! Its Python and paho-mqtt are the test venv's (./scripts/test installs them).

mod common;

use std::path::PathBuf;

use common::{Rig, board_id, key_of, now_ms};
use serde_json::{Value, json};

fn python() -> PathBuf {
    std::env::var_os("HALLCLOCK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/venv/bin/python3")
        })
}

/// Run the example with `args`; its exit code and the JSON it printed.
async fn client(port: u16, args: Vec<String>) -> (Option<i32>, Value) {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/mqtt-client/hall_client.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python())
            .arg(script)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--hall", common::HALL])
            .args(args)
            .output()
            .expect("python runs (./scripts/test installs the venv with paho-mqtt)")
    })
    .await
    .expect("joined");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "the example printed no JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

fn signer(dir: &std::path::Path, arbiter: &str, key_of_account: &str) -> Vec<String> {
    let key = dir.join(format!("{key_of_account}.key"));
    std::fs::write(&key, format!("{}\n", key_of(key_of_account).to_hex())).expect("key file");
    vec![
        "--arbiter".into(),
        arbiter.into(),
        "--key-file".into(),
        key.display().to_string(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_client_signs_commands_and_rebuilds_the_hall() {
    let mut rig = Rig::start("example-client", 2).await;
    let port = rig.broker.port;
    let dir = hallclock::link::testing::scratch_dir("example-client-keys");

    // The picture from the retained messages alone: one node, two idle boards.
    let (code, v) = client(port, vec![]).await;
    assert_eq!(code, Some(0), "{v}");
    let p = &v["picture"];
    assert_eq!(p["nodes"][common::NODE], "online", "{v}");
    for n in 1..=2 {
        let b = &p["boards"][board_id(n)];
        assert_eq!(b["availability"], "online", "{v}");
        assert_eq!(b["phase"], "idle", "{v}");
        assert_eq!(b["node"], common::NODE, "{v}");
    }

    // A hall command, signed by the chief: every online node answers ok.
    let pairings: Vec<Value> = (1..=2)
        .map(|n| json!({"board": board_id(n), "white": format!("White {n}"), "black": format!("Black {n}")}))
        .collect();
    let start = json!({"action": "start_round", "round": 1, "time_control": "600+5",
        "start": now_ms(), "pairings": pairings});
    let mut args = signer(&dir, "chief", "chief");
    args.push(start.to_string());
    let (code, v) = client(port, args).await;
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["done"], true, "{v}");
    assert_eq!(v["responses"][0]["status"], "ok", "{v}");
    assert_eq!(v["responses"][0]["node"], common::NODE, "{v}");
    for n in 1..=2 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }

    // A board command, signed by the board's own arbiter; the picture follows.
    let mut args = signer(&dir, "ia-one", "ia-one");
    args.extend(["--board".to_string(), board_id(1)]);
    args.push(json!({"action": "pause", "reason": "a phone rang"}).to_string());
    let (code, v) = client(port, args).await;
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["responses"][0]["status"], "ok", "{v}");
    let b1 = &v["picture"]["boards"][board_id(1)];
    assert_eq!(b1["phase"], "paused", "{v}");
    assert_eq!(
        (b1["white"].as_str(), b1["black"].as_str()),
        (Some("White 1"), Some("Black 1")),
        "{v}"
    );
    assert_eq!(
        v["picture"]["boards"][board_id(2)]["phase"],
        "running",
        "{v}"
    );

    // Signed with another account's key: refused, and the client says so.
    let mut args = signer(&dir, "chief", "viewer");
    args.extend(["--board".to_string(), board_id(1)]);
    args.push(json!({"action": "resume"}).to_string());
    let (code, v) = client(port, args).await;
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["responses"][0]["error"], "unauthenticated", "{v}");
    rig.stop().await;
}
