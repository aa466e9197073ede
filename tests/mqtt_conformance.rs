//! The MQTT contract checked against real traffic (issue 41): a hall of three nodes (three
//! daemons on one real Mosquitto, the simulator's boards on pseudo-terminals) plays a round
//! with as many kinds of event, alert and refusal as the simulator and the arbiters'
//! commands provoke, an adjournment and its resumption included, while an MQTT 5
//! subscriber on `hallclock/#` records every message with its publisher's own retain flag
//! ("retain as published"). Then every message — the daemons', the clients' commands, the
//! broker's last wills — is judged against docs/asyncapi.yaml by a third-party JSON Schema
//! validator (python-jsonschema in the test venv, tests/mqtt_conformance.py): an undeclared
//! topic, a payload no message of its channel takes, or a retain flag or QoS other than
//! the channel's operation says fails the test.
//!
//! Coverage: the kinds of board event, alert and refusal the run did not produce must be
//! among those MQTT-API.md names as not produced by it ("Conformance"), so neither the
//! document nor the run can drift without the test saying so.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use common::{Rig, Watcher, board_id, mqtt_settings, now_ms, signed_as};
use hallclock::hall::{self, BoardSettings, GameDefaults, RunningHall};
use hallclock::link::testing::scratch_dir;
use hallclock::rules::placement::Side;
use hallclock::sim::{Button, Sim, SimConfig};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::mqttbytes::v5::{Filter, Packet};
use rumqttc::v5::{AsyncClient, Event, MqttOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// One message as the recorder got it.
struct Recorded {
    topic: String,
    retain: bool,
    qos: u8,
    payload: Vec<u8>,
}

/// An MQTT 5 client on `hallclock/#` with "retain as published": a live message keeps the
/// retain flag its publisher gave it (MQTT 3.1.1 clears it on every live delivery).
struct Recorder {
    rx: mpsc::UnboundedReceiver<Recorded>,
    seen: Vec<Recorded>,
    _client: AsyncClient,
}

impl Recorder {
    async fn connect(port: u16) -> Recorder {
        let mut opts = MqttOptions::new("conformance-recorder", "127.0.0.1", port);
        opts.set_keep_alive(Duration::from_secs(5));
        opts.set_max_packet_size(Some(64 << 20));
        let (client, mut eventloop) = AsyncClient::new(opts, 1024);
        let (tx, rx) = mpsc::unbounded_channel();
        let (subscribed_tx, subscribed) = tokio::sync::oneshot::channel();
        let sub = client.clone();
        tokio::spawn(async move {
            let mut subscribed_tx = Some(subscribed_tx);
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        let mut filter = Filter::new("hallclock/#", QoS::AtLeastOnce);
                        filter.preserve_retain = true;
                        let _ = sub.subscribe_many([filter]).await;
                    }
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        if let Some(t) = subscribed_tx.take() {
                            let _ = t.send(());
                        }
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let qos = match p.qos {
                            QoS::AtMostOnce => 0,
                            QoS::AtLeastOnce => 1,
                            QoS::ExactlyOnce => 2,
                        };
                        let m = Recorded {
                            topic: String::from_utf8_lossy(&p.topic).into_owned(),
                            retain: p.retain,
                            qos,
                            payload: p.payload.to_vec(),
                        };
                        if tx.send(m).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        });
        tokio::time::timeout(common::WAIT, subscribed)
            .await
            .expect("the recorder subscribes")
            .expect("the recorder's task runs");
        Recorder {
            rx,
            seen: Vec::new(),
            _client: client,
        }
    }

    fn drain(&mut self) -> &[Recorded] {
        while let Ok(m) = self.rx.try_recv() {
            self.seen.push(m);
        }
        &self.seen
    }
}

/// Another node of the hall: a daemon with one board of a simulator of its own.
struct Node {
    hall: Option<RunningHall>,
    sim: Sim,
}

async fn other_node(rig: &Rig, name: &str, board: usize) -> Node {
    let dir = scratch_dir(&format!("sim-conform-{name}"));
    let mut cfg = SimConfig::new(1, &dir);
    cfg.ack_delay = Duration::from_millis(5);
    cfg.scan_interval = Duration::from_millis(20);
    cfg.scan_jitter = Duration::ZERO;
    let sim = Sim::start(cfg).await.expect("simulator starts");
    let mut settings = rig.settings.clone();
    settings.node = hallclock::id::Id::parse(name).expect("a node id");
    settings.boards = vec![BoardSettings {
        id: hallclock::id::Id::parse(&board_id(board)).expect("a board id"),
        port: sim.board(1).path().to_path_buf(),
        white: Side::Left,
        number: board as u32,
        mode: Default::default(),
    }];
    settings.state_dir = scratch_dir(&format!("state-conform-{name}"));
    settings.mqtt = mqtt_settings(rig.broker.port, &format!("hallclock-conform-{name}"));
    let hall = hall::start(settings).expect("the node starts");
    Node {
        hall: Some(hall),
        sim,
    }
}

/// A raw message on a board's `set` and the response with `transaction` (or, for one
/// that cannot be read, the next response with `error`).
async fn raw_board(rig: &mut Rig, board: &str, payload: &[u8], want: &str) -> Value {
    let topic = rig.topic(&format!("board/{board}/set"));
    rig.watcher.publish(&topic, payload).await;
    let resp = rig.topic(&format!("board/{board}/response"));
    rig.watcher
        .wait(&format!("{want} on {board}"), |m| {
            m.topic == resp && m.json()["error"] == want
        })
        .await
        .json()
}

async fn ok(rig: &mut Rig, board: &str, cmd: Value) -> Value {
    let r = rig.board_command(board, cmd.clone()).await;
    assert_eq!(r["status"], "ok", "{cmd} on {board}: {r}");
    r
}

async fn refused(rig: &mut Rig, arbiter: &str, board: &str, cmd: Value, error: &str) {
    let r = rig.board_command_as(arbiter, board, cmd.clone()).await;
    assert_eq!(r["error"], error, "{cmd} on {board}: {r}");
}

/// Play a move on a simulated e-board and press the lever; then wait until the state
/// has the position again (a press before the board's report leaves it unknown until the
/// report comes, and an envelope is not opened on an unknown position).
async fn play(watcher: &mut Watcher, sim: &Sim, n: usize, board: &str, uci: &str) {
    let before = watcher.latest_state(board)["fen"].clone();
    sim.board(n).play_move(uci).expect("the simulator plays it");
    tokio::time::sleep(Duration::from_millis(60)).await;
    sim.board(n).press();
    watcher.event(board, "pressed").await;
    watcher
        .state(board, &format!("the position after {uci}"), |s| {
            s["move_pending"] == false && s["fen"].is_string() && s["fen"] != before
        })
        .await;
}

/// The refusals a client meets before a round, each through the real door.
async fn refusals(rig: &mut Rig) {
    let b1 = board_id(1);
    // Unsigned, not JSON, too large, expired.
    let bare = json!({"transaction": "c-bare", "arbiter": "IA Test", "action": "pause"});
    raw_board(rig, &b1, bare.to_string().as_bytes(), "unauthenticated").await;
    raw_board(rig, &b1, b"{not json", "bad_command").await;
    let big = vec![b'x'; (1 << 20) + 10];
    raw_board(rig, &b1, &big, "too_large").await;
    let topic = rig.topic(&format!("board/{b1}/set"));
    let old = hallclock::intake::auth::sign_now(
        "chief",
        &common::key_of("chief"),
        &topic,
        json!({"transaction": "c-old", "action": "pause"}),
        hallclock::rules::Millis(now_ms() - 600_000),
    );
    let expired = raw_board(rig, &b1, &old, "expired").await;
    // Both clocks said as instants (UTC dates), never as a duration since 1970.
    let reason = expired["reason"].as_str().unwrap_or_default();
    assert_eq!(reason.matches(" UTC").count(), 2, "{expired}");
    assert!(!reason.contains("499"), "{expired}");
    // Signed, and refused for what it asks.
    refused(rig, "viewer", &b1, json!({"action": "pause"}), "forbidden").await;
    refused(
        rig,
        "ia-one",
        &board_id(2),
        json!({"action": "pause"}),
        "forbidden",
    )
    .await;
    refused(
        rig,
        "chief",
        "board-999",
        json!({"action": "pause"}),
        "unknown_board",
    )
    .await;
    refused(rig, "chief", &b1, json!({"action": "pause"}), "no_game").await;
    let topic = rig.topic(&format!("board/{b1}/set"));
    let fly = json!({"transaction": "bad-fly", "action": "fly"});
    raw_board(rig, &b1, &signed_as("chief", &topic, &fly), "bad_command").await;
    // `null` counts as absent: these are read as their forms without the field (and
    // refused only for want of a game), and the spec takes them.
    refused(
        rig,
        "chief",
        &b1,
        json!({"action": "pause", "reason": null}),
        "no_game",
    )
    .await;
    refused(
        rig,
        "chief",
        &b1,
        json!({"action": "set_session_end", "end": null}),
        "no_game",
    )
    .await;
    // A command on `ask` is not a request.
    let ask = rig.topic("ask");
    let cmd = json!({"transaction": "bad-ask-pause", "action": "pause"});
    rig.watcher
        .publish(&ask, &signed_as("chief", &ask, &cmd))
        .await;
    let resp = rig.topic("response");
    rig.watcher
        .wait("not_a_request", |m| {
            m.topic == resp
                && m.json()["transaction"] == "bad-ask-pause"
                && m.json()["error"] == "not_a_request"
        })
        .await;
}

/// The commands the test sends knowing they break the contract: not JSON, over 1 MiB, and
/// the signed ones whose transaction starts `bad-` (an action that does not exist, a
/// command on `ask`, a `set_time` without its reason).
fn deliberately_bad(m: &Recorded) -> bool {
    if !m.topic.ends_with("/set") && !m.topic.ends_with("/ask") {
        return false;
    }
    let inner = serde_json::from_slice::<Value>(&m.payload)
        .ok()
        .and_then(|v| v["payload"].as_str().map(str::to_string))
        .and_then(|p| serde_json::from_str::<Value>(&p).ok());
    m.payload == b"{not json"
        || m.payload.len() > 1 << 20
        || inner.is_some_and(|c| {
            c["transaction"]
                .as_str()
                .is_some_and(|t| t.starts_with("bad-"))
        })
}

/// What a running game refuses (black to move, not paused).
async fn running_refusals(rig: &mut Rig, b: &str) {
    let topic = rig.topic(&format!("board/{b}/set"));
    let no_reason = json!({"transaction": "bad-no-reason", "action": "set_time", "side": "white", "remaining_ms": 1000});
    raw_board(
        rig,
        b,
        &signed_as("chief", &topic, &no_reason),
        "reason_required",
    )
    .await;
    for (cmd, error) in [
        (json!({"action": "resume"}), "not_paused"),
        (
            json!({"action": "set_position", "fen": "not a position", "reason": "x"}),
            "bad_fen",
        ),
        (json!({"action": "confirm_flag"}), "no_pending_flag"),
        (
            json!({"action": "acknowledge_alert", "alert": "clock_discrepancy"}),
            "no_discrepancy",
        ),
        (
            json!({"action": "draw_reply", "accept": true}),
            "no_draw_offer",
        ),
        (
            json!({"action": "add_time", "side": "white", "delta_ms": 100_000_000_000i64, "reason": "x"}),
            "out_of_range",
        ),
    ] {
        refused(rig, "chief", b, cmd, error).await;
    }
}

/// What a finished game refuses, and a transaction used again for another command.
async fn finished_refusals(rig: &mut Rig, b: &str) {
    refused(rig, "chief", b, json!({"action": "pause"}), "game_over").await;
    let topic = rig.topic(&format!("board/{b}/set"));
    let again = |action: &str| {
        signed_as(
            "chief",
            &topic,
            &json!({"transaction": "c-same", "action": action}),
        )
    };
    let (first, second) = (again("pause"), again("swap_sides"));
    raw_board(rig, b, &first, "game_over").await;
    raw_board(rig, b, &second, "replayed").await;
    let now = now_ms();
    let dup = hallclock::intake::auth::envelope(
        "chief",
        &common::key_of("chief"),
        &topic,
        &format!(r#"{{"transaction":"c-dup","action":"pause","action":"resume","ts":{now}}}"#),
    );
    raw_board(rig, b, &dup, "duplicate_key").await;
    // Hall commands: a start long past, a replay to a topic level that is not one.
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 2, "start": now - 3_600_000,
            "pairings": [{"board": b, "white": "W", "black": "B"}]}),
        )
        .await;
    assert_eq!(r["error"], "past_start", "{r}");
    let r = rig
        .hall_command(json!({"action": "replay", "board": b, "reply_to": "not/a/level"}))
        .await;
    assert_eq!(r["error"], "bad_value", "{r}");
}

fn spec_as_json() -> Value {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/asyncapi.yaml"),
    )
    .expect("docs/asyncapi.yaml");
    let docs = yaml_rust::YamlLoader::load_from_str(&text).expect("asyncapi.yaml is YAML");
    yaml_to_json(&docs[0])
}

fn yaml_to_json(y: &yaml_rust::Yaml) -> Value {
    use yaml_rust::Yaml;
    match y {
        Yaml::Real(s) => s.parse::<f64>().map(Value::from).unwrap_or(Value::Null),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Boolean(b) => Value::from(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        other => panic!("asyncapi.yaml: a key that is not a string: {other:?}"),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("asyncapi.yaml: unexpected YAML {other:?}"),
    }
}

fn python() -> PathBuf {
    std::env::var_os("HALLCLOCK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/venv/bin/python3")
        })
}

/// The validator's verdict on `messages` (see tests/mqtt_conformance.py).
fn judge(messages: &[Recorded], name: &str) -> Value {
    let dir = scratch_dir(&format!("conformance-{name}"));
    let spec = dir.join("asyncapi.json");
    std::fs::write(&spec, spec_as_json().to_string()).expect("write the spec");
    let lines: String = messages
        .iter()
        .map(|m| {
            let hex: String = m.payload.iter().map(|b| format!("{b:02x}")).collect();
            json!({"topic": m.topic, "retain": m.retain, "qos": m.qos, "payload_hex": hex})
                .to_string()
                + "\n"
        })
        .collect();
    let recorded = dir.join("messages.jsonl");
    std::fs::write(&recorded, lines).expect("write the messages");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mqtt_conformance.py");
    let out = std::process::Command::new(python())
        .arg(&script)
        .arg(&spec)
        .arg(&recorded)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "python with jsonschema not found at {} ({e}): run ./scripts/test, which \
                 installs it into target/venv, or set HALLCLOCK_PYTHON",
                python().display()
            )
        });
    assert!(
        out.status.success(),
        "the validator failed (is jsonschema installed in {}? ./scripts/test installs it): {}",
        python().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the validator prints JSON")
}

/// The names MQTT-API.md's "Conformance" section lists as not produced by the run, by kind.
fn documented_gaps(kind: &str) -> BTreeSet<String> {
    let doc = include_str!("../docs/MQTT-API.md");
    let section = doc
        .split("\n## Conformance\n")
        .nth(1)
        .expect("MQTT-API.md has a Conformance section");
    let marker = format!("<!-- not produced: {kind} -->");
    let line = section
        .lines()
        .skip_while(|l| !l.contains(&marker))
        .nth(1)
        .unwrap_or_else(|| panic!("MQTT-API.md Conformance: no list after {marker}"));
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn names(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn spec_enum(spec: &Value, path: &str) -> BTreeSet<String> {
    names(
        spec.pointer(path)
            .unwrap_or_else(|| panic!("asyncapi.yaml {path}")),
    )
}

/// The `const` of `property` in every alternative of a schema's `oneOf`.
fn spec_consts(spec: &Value, schema: &str, property: &str) -> BTreeSet<String> {
    let one_of = spec["components"]["schemas"][schema]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{schema}.oneOf"));
    one_of
        .iter()
        .filter_map(|r| r["$ref"].as_str())
        .filter_map(|r| spec.pointer(&r[1..]))
        .filter_map(|s| {
            s["properties"][property]["const"].as_str().or_else(|| {
                s["allOf"]
                    .as_array()?
                    .iter()
                    .find_map(|p| p["properties"][property]["const"].as_str())
            })
        })
        .map(str::to_string)
        .collect()
}

/// Three nodes on one Mosquitto (boards 1 and 2 on the rig's node, 3 and 4 on two more),
/// each online and seen by the others, and the recorder subscribed before anything else.
async fn three_nodes() -> (Rig, Recorder, Node, Node) {
    let mut rig = Rig::start_with("conform", 2, GameDefaults::default()).await;
    let recorder = Recorder::connect(rig.broker.port).await;
    let node2 = other_node(&rig, "test-node-2", 3).await;
    let node3 = other_node(&rig, "test-node-3", 4).await;
    let (b3, b4) = (board_id(3), board_id(4));
    for b in [&b3, &b4] {
        let topic = rig.topic(&format!("board/{b}/availability"));
        rig.watcher
            .wait(&format!("{b} online"), |m| {
                m.topic == topic && m.text() == "online"
            })
            .await;
    }
    // Every node sees the other two online before the round (a hall command is each
    // node's for its boards).
    for node in ["test-node-2", "test-node-3"] {
        let topic = rig.topic(&format!("node/{node}/status"));
        rig.watcher
            .wait(&format!("{node} online"), |m| {
                m.topic == topic && m.json()["state"] == "online"
            })
            .await;
    }

    (rig, recorder, node2, node3)
}

/// The refusals at the door, a low battery, and the round: scheduled, then started.
async fn round_starts(rig: &mut Rig) {
    let (b1, b2, b3, b4) = (board_id(1), board_id(2), board_id(3), board_id(4));
    refusals(rig).await;

    // A clock's battery runs low: an alert, cleared when it is changed.
    rig.sim.board(2).battery_low(true);

    // The round starts in 8 s: meanwhile its games are scheduled, and refuse a pause. Its
    // control has a period by moves, so that one ends on board 1.
    let r = rig.start_round(4, "2/300+2:300+2", 8000, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    refused(rig, "chief", &b1, json!({"action": "pause"}), "not_started").await;
    for b in [&b1, &b2, &b3, &b4] {
        rig.watcher.event(b, "clock_started").await;
    }
    let alert = rig.topic(&format!("alert/{b2}-low-battery"));
    rig.watcher
        .wait("the low battery alert", |m| m.topic == alert && m.raised())
        .await;
    rig.sim.board(2).battery_low(false);
}

/// Board 1 (node 1): the arbiter's corrections, a stray press, a mate, then refusals.
async fn board_one(rig: &mut Rig) {
    let b1 = board_id(1);
    // Board 1 (node 1): the arbiter's corrections, then a mate on the e-board.
    ok(rig, &b1, json!({"action": "pause", "reason": "7.5.2"})).await;
    // A player presses while the arbiter has stopped the clocks: not accepted (6.12c),
    // an alert says so; the second press puts the lever back.
    rig.sim.board(1).press();
    let stray = rig.topic(&format!("alert/{b1}-stray-press"));
    rig.watcher
        .wait("the stray press alert", |m| m.topic == stray && m.raised())
        .await;
    rig.sim.board(1).press();
    tokio::time::sleep(Duration::from_millis(200)).await;
    ok(
        rig,
        &b1,
        json!({"action": "add_time", "side": "black", "delta_ms": 120_000, "reason": "7.5.5"}),
    )
    .await;
    ok(
        rig,
        &b1,
        json!({"action": "set_time", "side": "white", "remaining_ms": 290_000, "reason": "6.10"}),
    )
    .await;
    ok(
        rig,
        &b1,
        json!({"action": "set_moves", "side": "white", "moves": 0, "reason": "check"}),
    )
    .await;
    ok(rig, &b1, json!({"action": "resume"})).await;
    for mv in ["f2f3", "e7e5", "g2g4"] {
        play(&mut rig.watcher, &rig.sim, 1, &b1, mv).await;
    }
    // White's second move ends its first period (2 moves in 5 min, then 5 min).
    rig.watcher.event(&b1, "period_advanced").await;
    rig.sim.board(1).play_move("d8h4").expect("Qh4#");
    rig.watcher.event(&b1, "game_ended").await;
    finished_refusals(rig, &b1).await;
}

/// Board 2 (node 1): a flag before the move is read, then a clock gone silent.
async fn board_two(rig: &mut Rig) {
    let b2 = board_id(2);
    // Board 2 (node 1): Black presses with its pawn still in the hand and White's flag
    // falls before the board shows the move: the result waits (6.9) until it lands.
    play(&mut rig.watcher, &rig.sim, 2, &b2, "e2e4").await;
    ok(
        rig,
        &b2,
        json!({"action": "set_time", "side": "white", "remaining_ms": 1500, "reason": "test"}),
    )
    .await;
    rig.sim.board(2).lift("e7").expect("a pawn on e7");
    tokio::time::sleep(Duration::from_millis(100)).await;
    rig.sim.board(2).press();
    rig.watcher.event(&b2, "flag_fell").await;
    rig.watcher.event(&b2, "result_pending").await;
    rig.sim.board(2).place("e5", 'p').expect("the pawn lands");
    rig.watcher.event(&b2, "game_ended").await;
    // Board 2's clock stops answering for a while: offline, an alert, then back.
    rig.sim.board(2).stall(Duration::from_secs(3));
    let avail2 = rig.topic(&format!("board/{b2}/availability"));
    rig.watcher
        .wait("board 2 offline", |m| {
            m.topic == avail2 && m.text() == "offline"
        })
        .await;
    let offline = rig.topic(&format!("alert/{b2}-offline"));
    rig.watcher
        .wait("the offline alert", |m| m.topic == offline && m.raised())
        .await;
    // Meanwhile the link's handshakes go unanswered: a port alert.
    let port_alert = rig.topic(&format!("alert/{b2}-port"));
    rig.watcher
        .wait("the port alert", |m| m.topic == port_alert && m.raised())
        .await;
    rig.watcher
        .wait("board 2 back", |m| {
            m.topic == avail2 && m.text() == "online"
        })
        .await;
}

/// Board 4 (node 3): refusals of a running game, a player's pause, a position set, a
/// clock replaced, a draw offer declined and a result set.
async fn board_four(rig: &mut Rig, node3: &Node) {
    let b4 = board_id(4);
    running_refusals(rig, &b4).await;
    // Board 4 (node 3): a draw offer answered, then a result the arbiter sets.
    play(&mut rig.watcher, &node3.sim, 1, &b4, "d2d4").await;
    // A player stops the clock (6.12b); the arbiter lets the game go on.
    node3.sim.board(1).button(Button::RunPause);
    rig.watcher.event(&b4, "paused_by_player").await;
    let pause_alert = rig.topic(&format!("alert/{b4}-player-pause"));
    rig.watcher
        .wait("the player pause alert", |m| {
            m.topic == pause_alert && m.raised()
        })
        .await;
    ok(rig, &b4, json!({"action": "resume"})).await;
    // The arbiter sets the position as it stands, and replaces the clock (6.10).
    let fen4 = rig.watcher.latest_state(&b4)["fen"].clone();
    ok(
        rig,
        &b4,
        json!({"action": "set_position", "fen": fen4, "reason": "checked"}),
    )
    .await;
    rig.watcher.event(&b4, "position_set").await;
    ok(
        rig,
        &b4,
        json!({"action": "replace_clock", "reason": "the clock failed"}),
    )
    .await;
    rig.watcher.event(&b4, "clock_replaced").await;
    ok(rig, &b4, json!({"action": "draw_offer", "side": "white"})).await;
    ok(rig, &b4, json!({"action": "draw_reply", "accept": false})).await;
    ok(
        rig,
        &b4,
        json!({"action": "set_result", "result": "agreed_draw", "reason": "the players agreed"}),
    )
    .await;
    rig.watcher.event(&b4, "game_ended").await;
}

/// Board 3 (node 2): adjourned, sealed, verified, corrected, resumed and opened; then
/// the round is finished.
async fn board_three(rig: &mut Rig, node2: &Node) {
    let b3 = board_id(3);
    // Board 3 (node 2): adjourned, sealed, verified, resumed, opened.
    play(&mut rig.watcher, &node2.sim, 1, &b3, "e2e4").await;
    ok(rig, &b3, json!({"action": "set_adjournment_rules", "rules": {"edition": "guidelines", "notation_language": "en"}})).await;
    rig.watcher.event(&b3, "adjournment_rules_set").await;
    ok(
        rig,
        &b3,
        json!({"action": "set_session_end", "end": now_ms() + 3_600_000}),
    )
    .await;
    rig.watcher.event(&b3, "session_end_set").await;
    ok(rig, &b3, json!({"action": "adjourn"})).await;
    rig.watcher.event(&b3, "adjournment_ordered").await;
    for (cmd, error) in [
        (json!({"action": "commit_seal"}), "seal_first"),
        (
            json!({"action": "seal", "mv": "Nb8-c6", "side": "white"}),
            "not_the_sealer",
        ),
        (json!({"action": "seal", "mv": "  "}), "bad_seal_text"),
    ] {
        refused(rig, "chief", &b3, cmd, error).await;
    }
    ok(rig, &b3, json!({"action": "seal", "mv": "Nb8-c6"})).await;
    rig.watcher.event(&b3, "sealed").await;
    ok(rig, &b3, json!({"action": "commit_seal"})).await;
    rig.watcher.event(&b3, "seal_committed").await;
    refused(
        rig,
        "chief",
        &b3,
        json!({"action": "seal", "mv": "Ng8-f6"}),
        "not_in_this_stage",
    )
    .await;
    refused(rig, "chief", &b3, json!({"action": "pause"}), "adjourned").await;
    let hall_event = rig.topic("event");
    rig.watcher
        .wait("all_sealed", |m| {
            m.topic == hall_event && m.json()["event"] == "all_sealed"
        })
        .await;
    ok(rig, &b3, json!({"action": "verify_envelope"})).await;
    rig.watcher.event(&b3, "envelope_verified").await;
    let sealed = rig.watcher.latest_state(&b3);
    let white_left = sealed["adjournment"]["envelopes"][0]["white_time"]["remaining_ms"]
        .as_i64()
        .expect("the envelope's time for White");
    ok(rig, &b3, json!({"action": "correct_time", "side": "white", "remaining_ms": white_left - 1000, "reason": "I.13: written wrong"})).await;
    rig.watcher.event(&b3, "time_corrected").await;
    // Both players there when the session starts (I.9.1): opened at once.
    ok(rig, &b3, json!({"action": "present", "side": "white"})).await;
    ok(rig, &b3, json!({"action": "present", "side": "black"})).await;
    let start = now_ms() + 2500;
    let r = rig
        .hall_command(json!({"action": "schedule_resumption",
            "resumption": {"start": start, "end": start + 3_600_000, "place": "Hall B"}}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b3, "resumption_started").await;
    ok(rig, &b3, json!({"action": "open_envelope"})).await;
    rig.watcher.event(&b3, "envelope_opened").await;

    ok(rig, &b3, json!({"action": "set_result", "result": "resignation", "side": "black", "reason": "Black resigned"})).await;
    rig.watcher.event(&b3, "game_ended").await;
    rig.watcher
        .wait("round_finished", |m| {
            m.topic == hall_event && m.json()["event"] == "round_finished"
        })
        .await;
}

/// Replays on `set` and `ask`, every node answering; then node 3 stops and a replay of
/// its board is `node_offline`; then every node stops.
async fn replays_and_stops(rig: &mut Rig, mut node2: Node, mut node3: Node) {
    let (b3, b4) = (board_id(3), board_id(4));
    // Replays: by the chief on `set`, by a viewer on `ask`, each signed.
    for (door, arbiter, reply_to) in [
        ("set", "chief", "conform-chief"),
        ("ask", "viewer", "conform-viewer"),
    ] {
        let topic = rig.topic(door);
        let tx = format!("c-replay-{door}");
        let cmd = json!({"transaction": tx, "action": "replay", "board": b3, "from_seq": 1, "reply_to": reply_to});
        rig.watcher
            .publish(&topic, &signed_as(arbiter, &topic, &cmd))
            .await;
        let resp = rig.topic("response");
        for _ in 0..3 {
            let r = rig
                .watcher
                .wait(&format!("{door} replay answers"), |m| {
                    m.topic == resp && m.json()["transaction"] == tx.as_str()
                })
                .await
                .json();
            assert_eq!(r["status"], "ok", "every node answers a replay ok: {r}");
        }
        let reply = rig.topic(&format!("reply/{reply_to}"));
        rig.watcher
            .wait("the replayed events", |m| m.topic == reply)
            .await;
    }

    // A node stops: the others say so for its board (and answer for their own).
    if let Some(h) = node3.hall.take() {
        h.stop().await;
    }
    let status3 = rig.topic("node/test-node-3/status");
    rig.watcher
        .wait("node 3 offline", |m| {
            m.topic == status3 && m.json()["state"] == "offline"
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = rig
        .hall_command(json!({"action": "replay", "board": b4, "reply_to": "conform-chief"}))
        .await;
    assert_eq!(r["error"], "node_offline", "{r}");

    // Let the last messages arrive, then stop every node: their offline statuses too.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for node in [&mut node2, &mut node3] {
        if let Some(h) = node.hall.take() {
            h.stop().await;
        }
    }
    rig.stop().await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    drop(node2.sim);
    drop(node3.sim);
}

/// Every message taken by the spec but the test's deliberately bad ones, each refused.
fn assert_conforms(messages: &[Recorded]) -> Value {
    assert!(
        messages.len() > 100,
        "only {} messages recorded",
        messages.len()
    );
    let verdict = judge(messages, "three-nodes");
    let covered = &verdict["covered"];
    println!(
        "{} messages checked, {} failed; covered: {covered:#}",
        verdict["checked"], verdict["failed"]
    );
    // The only messages the spec refuses are the test's own deliberately bad commands,
    // and it refuses every one of them.
    let failures = verdict["failures"].as_array().cloned().unwrap_or_default();
    let refused: BTreeSet<usize> = failures
        .iter()
        .filter_map(|f| f["index"].as_u64())
        .map(|i| i as usize)
        .collect();
    let unexpected: Vec<&Value> = failures
        .iter()
        .filter(|f| {
            let i = f["index"].as_u64().unwrap_or(u64::MAX) as usize;
            !messages.get(i).is_some_and(deliberately_bad)
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "messages docs/asyncapi.yaml does not take: {unexpected:#?}"
    );
    let bad_sent: Vec<usize> = (0..messages.len())
        .filter(|i| deliberately_bad(&messages[*i]))
        .collect();
    assert_eq!(bad_sent.len(), 5, "the five bad commands were recorded");
    for i in bad_sent {
        assert!(
            refused.contains(&i),
            "the spec takes a bad command: {} {}",
            messages[i].topic,
            String::from_utf8_lossy(&messages[i].payload[..messages[i].payload.len().min(200)])
        );
    }
    assert_eq!(verdict["checked"].as_u64(), Some(messages.len() as u64));

    verdict
}

/// What the run did not produce is what MQTT-API.md names, kind by kind.
fn assert_coverage(covered: &Value) {
    // Coverage: what the run did not produce is named in MQTT-API.md.
    let spec = spec_as_json();
    let mut wrong = Vec::new();
    for (kind, all, seen) in [
        (
            "events",
            spec_consts(&spec, "boardEvent", "event"),
            names(&covered["events"]),
        ),
        (
            "alerts",
            spec_enum(&spec, "/components/schemas/alertKind/enum"),
            names(&covered["alerts"]),
        ),
        (
            "errors",
            spec_enum(&spec, "/components/schemas/errorKind/enum"),
            names(&covered["errors"]),
        ),
    ] {
        let missing: BTreeSet<String> = all.difference(&seen).cloned().collect();
        let line: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
        println!(
            "{kind} not produced by the run ({}): {}",
            missing.len(),
            line.join(", ")
        );
        let named = documented_gaps(kind);
        for m in missing.difference(&named) {
            wrong.push(format!("{kind}: the run did not produce `{m}`, which MQTT-API.md (Conformance) does not name"));
        }
        for m in named.intersection(&seen) {
            wrong.push(format!(
                "{kind}: MQTT-API.md (Conformance) names `{m}`, which the run produced"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Round 2 on board 1 alone, with a default time of a second, and nobody comes (6.7):
/// both lose by default.
async fn nobody_comes(rig: &mut Rig) {
    let b1 = board_id(1);
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 2, "start": now_ms(),
            "time_control": "600", "default_time_ms": 1000,
            "pairings": [{"board": b1, "white": "White 2", "black": "Black 2"}]}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b1, "default_time_passed").await;
    let ended = rig.watcher.event(&b1, "game_ended").await;
    assert_eq!(ended["termination"], "default", "{ended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_of_a_three_node_hall_is_what_the_spec_says() {
    let (mut rig, mut recorder, node2, node3) = three_nodes().await;
    round_starts(&mut rig).await;
    board_one(&mut rig).await;
    board_two(&mut rig).await;
    board_four(&mut rig, &node3).await;
    board_three(&mut rig, &node2).await;
    nobody_comes(&mut rig).await;
    replays_and_stops(&mut rig, node2, node3).await;
    let messages = recorder.drain();
    let verdict = assert_conforms(messages);
    assert_coverage(&verdict["covered"]);
}
