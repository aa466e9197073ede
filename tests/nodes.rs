//! Issue 23, item 1: one hall, several nodes. Each node publishes its own retained
//! `node/<node>/status` (with its own last will) and `node/<node>/info`; the death of one
//! marks only that node offline; a board claimed by two online nodes is an alert on both,
//! and neither drops its game. Real Mosquitto, the simulator on real pseudo-terminals,
//! each node a `hallclock run` child process (the broker must see a socket die, unclosed,
//! to publish a last will: kill -9, as `outage.rs` does).

mod common;
mod pychess;
mod webcommon;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Broker, Daemon, HALL, Watcher, board_id, feed_until, get_until, http_get, now_ms};
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Sim, SimConfig};
use serde_json::{Value, json};

fn topic(rest: &str) -> String {
    format!("hallclock/{HALL}/{rest}")
}

/// A node's configuration: `boards` are (board id, simulator board number).
fn node_config(
    dir: &Path,
    node: &str,
    broker: u16,
    sim: &Sim,
    boards: &[(&str, usize)],
) -> PathBuf {
    node_config_web(dir, node, broker, sim, boards, None)
}

/// The same, with the dashboard on `web` (a local port) when given.
fn node_config_web(
    dir: &Path,
    node: &str,
    broker: u16,
    sim: &Sim,
    boards: &[(&str, usize)],
    web: Option<u16>,
) -> PathBuf {
    let web = match web {
        Some(port) => format!("enabled = true\nlisten = \"127.0.0.1:{port}\""),
        None => "enabled = false".to_string(),
    };
    let dir = dir.join(node);
    std::fs::create_dir_all(&dir).expect("node dir");
    let mut toml = format!(
        "[hall]\nid = \"{HALL}\"\nnode = \"{node}\"\nstate_dir = \"{}\"\n\n[broker]\nhost = \"127.0.0.1\"\nport = {broker}\nkeep_alive_secs = 2\n\n[link]\nliveness_timeout_ms = 1500\nack_timeout_ms = 300\nreopen_backoff_max_ms = 300\n\n[web]\n{web}\n\n[log]\nlevel = \"debug\"\n\n[security]\narbiters = {:?}\n",
        dir.join("state").display(),
        common::write_arbiters(&dir).display().to_string()
    );
    for (id, n) in boards {
        toml.push_str(&format!(
            "\n[[boards]]\nid = \"{id}\"\nport = \"{}\"\nwhite = \"left\"\n",
            sim.board(*n).path().display()
        ));
    }
    let path = dir.join("hallclock.toml");
    std::fs::write(&path, toml).expect("write config");
    path
}

/// The node's status that `want` accepts.
async fn node_status(
    w: &mut Watcher,
    node: &str,
    what: &str,
    want: impl Fn(&Value) -> bool,
) -> Value {
    let t = topic(&format!("node/{node}/status"));
    w.wait(what, |m| m.topic == t && want(&m.json()))
        .await
        .json()
}

fn boards_of(status: &Value) -> Vec<String> {
    status["boards"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|b| b.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn setup(name: &str, boards: usize) -> (Broker, Sim, Watcher, PathBuf) {
    let dir = scratch_dir(name);
    let broker = Broker::start(name).await;
    let mut cfg = SimConfig::new(boards, dir.join("ports"));
    cfg.ack_delay = Duration::from_millis(5);
    let sim = Sim::start(cfg).await.expect("sim");
    let w = Watcher::connect(broker.port, &format!("{name}-watcher")).await;
    (broker, sim, w, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_node_has_its_own_status_and_a_killed_node_goes_offline_alone() {
    let (broker, sim, mut w, dir) = setup("nodes-death", 3).await;
    let a = node_config(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
    );
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(3), 3)]);
    let before = now_ms();
    let _node_a = Daemon::spawn(&a);
    let mut node_b = Daemon::spawn(&b);
    let sa = node_status(&mut w, "node-a", "node-a online", |v| {
        v["state"] == "online"
    })
    .await;
    assert_eq!(sa["node"], "node-a", "{sa}");
    assert_eq!(boards_of(&sa), [board_id(1), board_id(2)], "{sa}");
    assert_eq!(sa["version"], env!("CARGO_PKG_VERSION"), "{sa}");
    assert!(sa["boot"].as_i64() >= Some(before - 1000), "{sa}");
    let sb = node_status(&mut w, "node-b", "node-b online", |v| {
        v["state"] == "online"
    })
    .await;
    assert_eq!(boards_of(&sb), [board_id(3)], "{sb}");
    // Each node's info, with the ports of its own boards only.
    let ia = topic("node/node-a/info");
    let info = w.wait("node-a info", |m| m.topic == ia).await.json();
    assert_eq!(info["node"], "node-a", "{info}");
    let ids: Vec<&str> = info["boards"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, [board_id(1), board_id(2)], "{info}");
    assert_eq!(
        info["boards"][0]["port"],
        sim.board(1).path().display().to_string(),
        "{info}"
    );
    // No daemon writes the hall's `status`: several would share it (the first to die
    // would mark the hall offline).
    let hall_status = topic("status");
    assert!(
        !w.drain().iter().any(|m| m.topic == hall_status),
        "no node publishes the hall's status"
    );
    // Nor `info` or `session`: one writer per retained topic; each node's are its own, and
    // its info has the defaults and the round `info` had.
    assert_eq!(info["round"], Value::Null, "{info}");
    assert_eq!(info["defaults"]["flag_mode"], "auto", "{info}");
    let shared = [topic("info"), topic("session")];
    assert!(
        !w.drain().iter().any(|m| shared.contains(&m.topic)),
        "no node publishes a shared info or session"
    );

    // kill -9 node-b: its own last will marks it offline, and node-a stays online.
    node_b.kill_9();
    let gone = node_status(&mut w, "node-b", "node-b offline by its last will", |v| {
        v["state"] == "offline"
    })
    .await;
    assert_eq!(gone["node"], "node-b", "{gone}");
    assert_eq!(boards_of(&gone), [board_id(3)], "{gone}");
    // A late subscriber sees the picture the broker keeps: a online, b offline.
    let mut late = Watcher::connect(broker.port, "nodes-death-late").await;
    let a_now = node_status(&mut late, "node-a", "node-a retained", |_| true).await;
    assert_eq!(a_now["state"], "online", "{a_now}");
    let b_now = node_status(&mut late, "node-b", "node-b retained", |_| true).await;
    assert_eq!(b_now["state"], "offline", "{b_now}");
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic == topic("node/node-a/status") && m.json()["state"] == "offline"),
        "node-a was never marked offline"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_claimed_by_two_nodes_is_an_alert_on_both_and_neither_drops_its_game() {
    let (broker, sim, mut w, dir) = setup("nodes-claim", 3).await;
    let shared = board_id(2);
    let a = node_config(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&shared, 2)],
    );
    // node-b names another port board-002: a configuration mistake across two servers.
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&shared, 3)]);
    let _node_a = Daemon::spawn(&a);
    node_status(&mut w, "node-a", "node-a online", |v| {
        v["state"] == "online"
    })
    .await;
    // A game on node-a's board-002, before node-b comes.
    let avail = topic(&format!("board/{shared}/availability"));
    w.wait("board-002 online", |m| {
        m.topic == avail && m.text() == "online"
    })
    .await;
    let tx = format!("claim-{}", now_ms());
    let set = topic("set");
    let cmd = json!({
        "action": "start_round", "round": 1, "time_control": "600", "start": now_ms(),
        "pairings": [{"board": shared, "white": "W", "black": "B"}],
        "transaction": tx,
    });
    w.publish(&set, &common::signed(&set, &cmd)).await;
    let resp = topic("response");
    let r = w
        .wait("start_round answered", |m| {
            m.topic == resp && m.json()["transaction"] == tx.as_str()
        })
        .await
        .json();
    assert_eq!(r["status"], "ok", "{r}");
    let state = topic(&format!("board/{shared}/state"));
    w.wait("board-002 running", |m| {
        m.topic == state && m.json()["phase"] == "running"
    })
    .await;

    let mut node_b = Daemon::spawn(&b);
    node_status(&mut w, "node-b", "node-b online", |v| {
        v["state"] == "online"
    })
    .await;
    // Each node raises its own alert (one writer per retained topic), naming both.
    let mut raised = Vec::new();
    for node in ["node-a", "node-b"] {
        let t = topic(&format!("alert/{shared}-claimed-twice-{node}"));
        let alert = w
            .wait(&format!("claimed-twice alert of {node}"), |m| {
                m.topic == t && m.raised()
            })
            .await
            .json();
        assert_eq!(alert["kind"], "board_claimed_twice", "{alert}");
        assert_eq!(alert["board"], shared.as_str(), "{alert}");
        let text = alert["message"].as_str().unwrap_or("");
        assert!(
            text.contains("node-a") && text.contains("node-b"),
            "{alert}"
        );
        raised.push(t);
    }
    // Neither dropped its game: node-a's game runs on, with no event ending it.
    sim.board(2).press();
    let events = topic(&format!("board/{shared}/event"));
    let pressed = w
        .wait("a press on node-a's board-002 still counts", |m| {
            m.topic == events && m.json()["event"] == "pressed"
        })
        .await
        .json();
    assert_eq!(pressed["board"], shared.as_str(), "{pressed}");
    assert!(
        !w.drain().iter().any(|m| m.topic == events
            && matches!(
                m.json()["event"].as_str(),
                Some("game_ended" | "game_annulled")
            )),
        "no game was ended"
    );

    // node-b's copy of board-002 is written last: its board goes away and comes back, so
    // the broker's retained state is node-b's idle one.
    w.drain();
    for m in &mut w.seen {
        m.used = true;
    }
    sim.board(3).unplug().await.expect("unplug node-b's board");
    w.wait("node-b's board-002 offline", |m| {
        m.topic == state && m.json()["online"] == false
    })
    .await;
    sim.board(3).replug().await.expect("replug node-b's board");
    w.wait("node-b's idle copy of board-002 written last", |m| {
        m.topic == state && m.json()["phase"] == "idle" && m.json()["online"] == true
    })
    .await;
    // node-b dies: node-a's alert clears (node-b's own stays as its last word), and the
    // board's retained state is node-a's game again, though nothing happens on it: node-a
    // is its one writer now, and publishes its topics again.
    node_b.kill_9();
    node_status(&mut w, "node-b", "node-b offline", |v| {
        v["state"] == "offline"
    })
    .await;
    let t = &raised[0];
    w.wait("node-a's alert cleared", |m| m.topic == *t && m.cleared())
        .await;
    w.wait("node-a's state of board-002 again", |m| {
        m.topic == state && m.json()["phase"] == "running"
    })
    .await;
    let mut late = Watcher::connect(broker.port, "nodes-claim-late").await;
    let retained = late
        .wait("board-002's retained state", |m| m.topic == state)
        .await
        .json();
    assert_eq!(retained["phase"], "running", "{retained}");
    let running = w.state_of(&state).unwrap_or(Value::Null);
    assert_eq!(running["phase"], "running", "{running}");
}

trait LatestState {
    fn state_of(&mut self, topic: &str) -> Option<Value>;
}

impl LatestState for Watcher {
    fn state_of(&mut self, topic: &str) -> Option<Value> {
        self.drain()
            .iter()
            .rev()
            .find(|m| m.topic == topic)
            .map(common::Msg::json)
    }
}

// Issue 23, item 2: hall commands across nodes. One command on the hall's `set` topic;
// every node applies its part and answers with its node id; `hallclock command` waits for
// every online node's answer and exits 0 only when all said `ok`.

/// Two nodes on one broker: node-a owns board-001 and board-002, node-b board-003. Both
/// online, each having seen the other (its boards on its board topics are online).
async fn two_nodes(name: &str) -> (Broker, Sim, Watcher, PathBuf, Daemon, Daemon) {
    let (broker, sim, mut w, dir) = setup(name, 3).await;
    let a = node_config(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
    );
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(3), 3)]);
    let node_a = Daemon::spawn(&a);
    let node_b = Daemon::spawn(&b);
    for node in ["node-a", "node-b"] {
        node_status(&mut w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
    }
    for n in [1, 2, 3] {
        let avail = topic(&format!("board/{}/availability", board_id(n)));
        w.wait(&format!("board {n} online"), |m| {
            m.topic == avail && m.text() == "online"
        })
        .await;
    }
    (broker, sim, w, dir, node_a, node_b)
}

/// `hallclock command` for the hall, signed by the test chief.
async fn hall_command(dir: &Path, broker: u16, command: Value) -> (Option<i32>, Vec<Value>) {
    common::hall_command_cli(dir, broker, command).await
}

/// The answers by node id.
fn by_node(answers: &[Value]) -> std::collections::BTreeMap<String, Value> {
    answers
        .iter()
        .map(|a| (a["node"].as_str().unwrap_or("?").to_string(), a.clone()))
        .collect()
}

/// Once node-a and node-b are online: round 2 on board-001 (node-a's) and board-003
/// (node-b's), both nodes answering `ok`.
async fn round_2_on_boards_1_and_3(w: &mut Watcher, dir: &Path, broker: u16) {
    for node in ["node-a", "node-b"] {
        node_status(w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
    }
    round_on_boards_1_and_3(dir, broker, 2).await;
}

/// Round `round`, 10 minutes, on board-001 (node-a's) and board-003 (node-b's), started
/// now: every node answers `ok`.
async fn round_on_boards_1_and_3(dir: &Path, broker: u16, round: u32) {
    let (code, answers) = hall_command(
        dir,
        broker,
        json!({
            "action": "start_round", "round": round, "time_control": "600", "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(3), "white": "W3", "black": "B3"},
            ],
        }),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
}

/// Both nodes refused the hall command with `error`, each saying `in_reason`.
fn refused_by_both(code: Option<i32>, answers: &[Value], error: &str, in_reason: &str) {
    assert_ne!(code, Some(0), "{answers:?}");
    let nodes = by_node(answers);
    assert_eq!(
        nodes.keys().collect::<Vec<_>>(),
        ["node-a", "node-b"],
        "{answers:?}"
    );
    for a in nodes.values() {
        assert_eq!(
            (&a["status"], &a["error"]),
            (&json!("error"), &json!(error)),
            "{a}"
        );
        assert!(
            a["reason"].as_str().unwrap_or("").contains(in_reason),
            "{a}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_start_round_runs_on_both_nodes_boards_as_one_round() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-round").await;
    let start = now_ms();
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({
            "action": "start_round", "round": 3, "time_control": "600+5", "start": start,
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(3), "white": "W3", "black": "B3"},
            ],
        }),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
    let nodes = by_node(&answers);
    assert_eq!(
        nodes.keys().collect::<Vec<_>>(),
        ["node-a", "node-b"],
        "{answers:?}"
    );
    for (node, board) in [("node-a", board_id(1)), ("node-b", board_id(3))] {
        let a = &nodes[node];
        assert_eq!(a["status"], "ok", "{a}");
        assert_eq!(a["action"], "start_round", "{a}");
        assert_eq!(a["boards"], json!([board]), "{a}");
    }
    // One round: every node's round_started has its number and start instant, and every
    // board's game its time control.
    let hall_event = topic("event");
    for board in [board_id(1), board_id(3)] {
        let e = w
            .wait(&format!("round_started with {board}"), |m| {
                m.topic == hall_event
                    && m.json()["event"] == "round_started"
                    && m.json()["boards"] == json!([board])
            })
            .await
            .json();
        assert_eq!(
            (e["round"].as_u64(), e["start"].as_i64()),
            (Some(3), Some(start)),
            "{e}"
        );
        let state = topic(&format!("board/{board}/state"));
        let s = w
            .wait(&format!("{board} has its game"), |m| {
                m.topic == state && m.json()["round"] == 3
            })
            .await
            .json();
        assert_eq!(s["time_control"], "600+5", "{s}");
    }
    // board-002 (node-a's, not paired) got nothing.
    let idle = topic(&format!("board/{}/state", board_id(2)));
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic == idle && m.json()["round"] == 3),
        "board-002 was not paired"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_for_a_board_no_node_owns_starts_nothing_anywhere() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-unowned").await;
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({
            "action": "start_round", "round": 1, "time_control": "600", "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(3), "white": "W3", "black": "B3"},
                {"board": "board-009", "white": "W9", "black": "B9"},
            ],
        }),
    )
    .await;
    refused_by_both(code, &answers, "unknown_board", "board-009");
    // Nothing started: no round, no game on any board.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let hall_event = topic("event");
    assert!(
        !w.drain().iter().any(
            |m| (m.topic == hall_event && m.json()["event"] == "round_started")
                || (m.topic.ends_with("/state") && m.json()["round"] == 1)
        ),
        "nothing started"
    );
}

/// node-b is restarted without board-003, which played round 2 (taken out of its
/// `[[boards]]`, say a broken board): its retained topics stay on the broker with nobody
/// to write them. node-a's dashboard stops showing board-003 (it showed it `online` and
/// running for ever), and its round finishes with board-001's result instead of waiting
/// for a game no node serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_taken_out_of_its_nodes_boards_leaves_every_dashboard_and_holds_nothing_back() {
    let (broker, sim, mut w, dir) = setup("nodes-retired", 4).await;
    let web_a = common::free_port();
    let a = node_config_web(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
        Some(web_a),
    );
    let b_boards =
        |ns: &[usize]| -> Vec<(String, usize)> { ns.iter().map(|n| (board_id(*n), *n)).collect() };
    let b_config = |ns: &[usize]| {
        let boards = b_boards(ns);
        let refs: Vec<(&str, usize)> = boards.iter().map(|(b, n)| (b.as_str(), *n)).collect();
        node_config_web(&dir, "node-b", broker.port, &sim, &refs, None)
    };
    let _node_a = Daemon::spawn(&a);
    let mut node_b = Daemon::spawn(&b_config(&[3, 4]));
    round_2_on_boards_1_and_3(&mut w, &dir, broker.port).await;
    let state3 = topic(&format!("board/{}/state", board_id(3)));
    let state4 = topic(&format!("board/{}/state", board_id(4)));
    feed_until(
        web_a,
        "board-003 playing round 2 on node-a's dashboard",
        |s| s.get(&state3).is_some_and(|t| t.contains("\"round\":2")),
    )
    .await;

    node_b.kill_9();
    let _node_b = Daemon::spawn(&b_config(&[4]));
    node_status(&mut w, "node-b", "node-b back with board-004 only", |v| {
        v["state"] == "online" && v["boards"] == json!([board_id(4)])
    })
    .await;
    let board3 = format!("/board/{}/", board_id(3));
    feed_until(web_a, "board-003 gone from node-a's dashboard", |s| {
        s.contains_key(&state4) && !s.keys().any(|t| t.contains(&board3))
    })
    .await;
    // node-b says why board-003's game is out of reach (and keeps it in its journal).
    let log = std::fs::read_to_string(dir.join("node-b").join("daemon.log")).unwrap_or_default();
    assert!(
        log.contains(
            "the journal holds an unfinished game on board-003, which is not in [[boards]]"
        ),
        "node-b's log says so"
    );
    // Its stale copies are still on the broker: only the readers' rule keeps them out.
    let still = topic(&format!("board/{}/availability", board_id(3)));
    w.wait("board-003's stale availability still retained", |m| {
        m.topic == still
    })
    .await;

    let r = board_cmd(
        &mut w,
        &board_id(1),
        json!({"action": "set_result", "result": "1-0", "reason": "arbiter"}),
    )
    .await;
    assert_eq!(r["status"], "ok", "{r}");
    let hall_event = topic("event");
    let e = w
        .wait("node-a's round 2 finished", |m| {
            m.topic == hall_event && m.json()["event"] == "round_finished"
        })
        .await
        .json();
    let boards: Vec<&str> = e["results"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["board"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(boards, [board_id(1)], "{e}");
}

/// Round 1 is over on node-a's board but still played on node-b's; round 2 paired on
/// both is refused by both nodes, naming node-b's board, and node-a starts nothing: a
/// round is one round, as on a node alone (which refuses it whole). Before, node-a
/// started its game and node-b refused, and no resend could mend the half-started round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_pairing_another_nodes_busy_board_starts_nothing_anywhere() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-busy").await;
    let round = |n: u32| {
        json!({
            "action": "start_round", "round": n, "time_control": "600", "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(3), "white": "W3", "black": "B3"},
            ],
        })
    };
    let (code, answers) = hall_command(&dir, broker.port, round(1)).await;
    assert_eq!(code, Some(0), "{answers:?}");
    let r = board_cmd(
        &mut w,
        &board_id(1),
        json!({"action": "set_result", "result": "1-0", "reason": "arbiter"}),
    )
    .await;
    assert_eq!(r["status"], "ok", "{r}");
    // node-a has seen node-b's board playing round 1 (its retained state).
    let b3 = topic(&format!("board/{}/state", board_id(3)));
    w.wait("board-003 playing round 1", |m| {
        m.topic == b3 && m.json()["round"] == 1 && m.json()["result"].is_null()
    })
    .await;
    let (code, answers) = hall_command(&dir, broker.port, round(2)).await;
    refused_by_both(code, &answers, "board_busy", "board-003");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic.ends_with("/state") && m.json()["round"] == 2),
        "no game of round 2 anywhere"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_pause_pauses_both_nodes_and_its_resend_is_idempotent_on_each() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-pause").await;
    round_on_boards_1_and_3(&dir, broker.port, 1).await;
    let pause = json!({"action": "pause", "transaction": format!("pause-{}", now_ms())});
    let (code, first) = hall_command(&dir, broker.port, pause.clone()).await;
    assert_eq!(code, Some(0), "{first:?}");
    let first = by_node(&first);
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(first["node-a"]["boards"], json!([board_id(1)]), "{first:?}");
    assert_eq!(first["node-b"]["boards"], json!([board_id(3)]), "{first:?}");
    for board in [board_id(1), board_id(3)] {
        let state = topic(&format!("board/{board}/state"));
        w.wait(&format!("{board} paused"), |m| {
            m.topic == state && m.json()["phase"] == "paused"
        })
        .await;
    }
    // The same transaction again: each node gives its first answer, nothing applied twice.
    let (code, again) = hall_command(&dir, broker.port, pause).await;
    assert_eq!(code, Some(0), "{again:?}");
    assert_eq!(by_node(&again), first, "the first answers again");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let paused: usize = w
        .drain()
        .iter()
        .filter(|m| m.topic.ends_with("/event") && m.json()["event"] == "paused")
        .count();
    assert_eq!(paused, 2, "one paused event per board, not per resend");
}

// Issue 23, item 3 (the dashboard's part): any node's dashboard shows the whole hall,
// from the other nodes' retained per-board topics; a node that dies shows its boards
// offline there; nothing of theirs is invented.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_dashboard_shows_the_other_nodes_boards_and_a_dead_nodes_boards_offline() {
    let (broker, sim, mut w, dir) = setup("nodes-view", 3).await;
    let (web_a, web_b) = (common::free_port(), common::free_port());
    let a = node_config_web(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
        Some(web_a),
    );
    let b = node_config_web(
        &dir,
        "node-b",
        broker.port,
        &sim,
        &[(&board_id(3), 3)],
        Some(web_b),
    );
    let _node_a = Daemon::spawn(&a);
    let mut node_b = Daemon::spawn(&b);
    round_2_on_boards_1_and_3(&mut w, &dir, broker.port).await;
    let state = |n: usize| topic(&format!("board/{}/state", board_id(n)));
    let avail = |n: usize| topic(&format!("board/{}/availability", board_id(n)));
    let round_of = |snap: &std::collections::BTreeMap<String, String>, n: usize| {
        snap.get(&state(n))
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
            .and_then(|v| v["round"].as_u64())
    };
    // Each dashboard has the other's boards, with the game the other node runs.
    let on_a = feed_until(web_a, "node-b's board-003 on node-a's dashboard", |s| {
        round_of(s, 3) == Some(2) && round_of(s, 1) == Some(2)
    })
    .await;
    // As a hall screen shows it: node-a's `/public` in Chromium has node-b's board with its
    // players, online.
    let chrome = webcommon::Chrome::start("nodes-public", 1400, 900).await;
    chrome
        .client
        .goto(&format!("http://127.0.0.1:{web_a}/public"))
        .await
        .expect("node-a's /public");
    let tile = "document.querySelector('.tile[data-board=\"board-003\"]')";
    chrome
        .until(
            "node-b's board on node-a's hall screen",
            &format!("{tile} && {tile}.textContent.includes('W3') && !{tile}.classList.contains('offline')"),
        )
        .await;
    assert_eq!(on_a.get(&avail(3)).map(String::as_str), Some("online"));
    feed_until(web_b, "node-a's boards on node-b's dashboard", |s| {
        round_of(s, 1) == Some(2) && s.contains_key(&state(2)) && round_of(s, 3) == Some(2)
    })
    .await;
    // Nothing invented: no board that no node has.
    assert!(!on_a.keys().any(|t| t.contains("board-004")), "{on_a:#?}");

    // kill -9 node-b: node-a's dashboard shows board-003 offline (its game as last known),
    // its own boards still online.
    node_b.kill_9();
    node_status(&mut w, "node-b", "node-b offline", |v| {
        v["state"] == "offline"
    })
    .await;
    let after = feed_until(web_a, "board-003 offline on node-a's dashboard", |s| {
        s.get(&avail(3)).map(String::as_str) == Some("offline")
    })
    .await;
    assert_eq!(round_of(&after, 3), Some(2), "the last known game stays");
    assert_eq!(after.get(&avail(1)).map(String::as_str), Some("online"));
    assert_eq!(after.get(&avail(2)).map(String::as_str), Some("online"));
    // The open hall screen marks it offline, its players still there; node-a's own stays.
    chrome
        .until(
            "node-b's board offline on node-a's hall screen",
            &format!("{tile}.classList.contains('offline') && {tile}.textContent.includes('W3')"),
        )
        .await;
    let own = chrome
        .js("return document.querySelector('.tile[data-board=\"board-001\"]').classList.contains('offline');")
        .await;
    assert_eq!(own, Value::Bool(false), "node-a's own board stays online");
    let _ = chrome.shot("nodes-public-offline").await;
    chrome.close().await;
}

// Issue 23, item 3 (the broadcast's part): any node's `/broadcast/…` serves the whole hall,
// from the other nodes' retained `board/<b>/pgn`; a dead node's games stay as their last
// retained text, once.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_nodes_broadcast_has_every_nodes_games_and_a_dead_nodes_games_once() {
    let (broker, sim, mut w, dir) = setup("nodes-bcast", 3).await;
    let web_a = common::free_port();
    let a = node_config_web(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
        Some(web_a),
    );
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(3), 3)]);
    let _node_a = Daemon::spawn(&a);
    let mut node_b = Daemon::spawn(&b);
    for node in ["node-a", "node-b"] {
        node_status(&mut w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
    }
    for n in [1, 3] {
        let avail = topic(&format!("board/{}/availability", board_id(n)));
        w.wait(&format!("board {n} online"), |m| {
            m.topic == avail && m.text() == "online"
        })
        .await;
    }
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({
            "action": "start_round", "round": 4, "time_control": "600", "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "Alpha, A", "black": "Beta, B"},
                {"board": board_id(3), "white": "Gamma, C", "black": "Delta, D"},
            ],
            "broadcast_delay_minutes": 0,
        }),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
    // A move and its press on node-b's board.
    let events = topic(&format!("board/{}/event", board_id(3)));
    w.wait("node-b's clock started", |m| {
        m.topic == events && m.json()["event"] == "clock_started"
    })
    .await;
    sim.board(3)
        .play_move("e2e4")
        .expect("the simulator plays e4");
    tokio::time::sleep(Duration::from_millis(60)).await;
    sim.board(3).press();
    w.wait("e4 on node-b's board", |m| {
        m.topic == events && m.json()["event"] == "move_made"
    })
    .await;

    // node-a's dashboard has node-b's board's events too (its tiles' last move, its board
    // page's moves and log): the other nodes' events are mirrored into the local feed.
    let history = format!("/api/public/board/{}/events", board_id(3));
    let body = get_until(web_a, &history, "node-b's e4 in node-a's history", |b| {
        b.contains("move_made")
    })
    .await;
    let events: Vec<Value> = serde_json::from_str(&body).unwrap_or_default();
    let made: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "move_made")
        .collect();
    assert_eq!(made.len(), 1, "once, not twice: {body}");
    assert_eq!(made[0]["san"], "e4", "{body}");
    assert!(
        events.iter().any(|e| e["event"] == "clock_started"),
        "{body}"
    );

    // node-a's broadcast: both games, in board order, node-b's with its move and clock.
    let path = "/broadcast/round/4/games.pgn";
    let body = get_until(web_a, path, "node-b's move in node-a's games.pgn", |b| {
        b.contains("Gamma, C") && b.contains("1. e4")
    })
    .await;
    let games = pychess::check(&body);
    assert_eq!(games.len(), 2, "{body}");
    for g in &games {
        assert!(g.errors.is_empty(), "{:?}\n{body}", g.errors);
    }
    assert_eq!(games[0].tags["White"], "Alpha, A", "board 1 first: {body}");
    assert_eq!(games[1].tags["White"], "Gamma, C", "{body}");
    assert_eq!(games[1].tags["Round"], "4.3", "{body}");
    assert_eq!(games[1].moves.len(), 1, "{body}");
    assert_eq!(games[1].moves[0].san, "e4");
    assert!(games[1].moves[0].clk.is_some(), "{body}");
    // node-a's dashboard's `info` is the hall's: node-b's board with its number, in the
    // round's boards.
    let info_topic = topic("info");
    let snap = feed_until(web_a, "node-b's board in node-a's info", |s| {
        s.get(&info_topic)
            .is_some_and(|i| i.contains(&board_id(3)) && i.contains("\"round\":4"))
    })
    .await;
    let info: Value = serde_json::from_str(&snap[&info_topic]).unwrap_or(Value::Null);
    let ids: Vec<&str> = info["boards"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, [board_id(1), board_id(2), board_id(3)], "{info}");
    assert_eq!(
        info["boards"][2]["number"], 1,
        "node-b's own numbering: {info}"
    );
    assert_eq!(
        info["boards"][2]["port"],
        Value::Null,
        "no port on /public: {info}"
    );
    assert_eq!(
        info["round"]["boards"],
        json!([board_id(1), board_id(3)]),
        "{info}"
    );
    // The same game on its own, by its board number.
    let (status, one) = http_get(web_a, "/broadcast/round/4/game-3.pgn").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(pychess::check_one(&one).tags["Black"], "Delta, D");

    // kill -9 node-b: its game stays in node-a's broadcast as last published, once; its
    // board goes offline on node-a's dashboard.
    node_b.kill_9();
    node_status(&mut w, "node-b", "node-b offline", |v| {
        v["state"] == "offline"
    })
    .await;
    let avail = topic(&format!("board/{}/availability", board_id(3)));
    feed_until(web_a, "board-003 offline on node-a's dashboard", |s| {
        s.get(&avail).map(String::as_str) == Some("offline")
    })
    .await;
    let (status, after) = http_get(web_a, path).await;
    assert_eq!(status, 200, "{after}");
    let games = pychess::check(&after);
    assert_eq!(games.len(), 2, "nothing doubled, nothing lost: {after}");
    assert_eq!(
        after.matches("Gamma, C").count(),
        1,
        "node-b's game once: {after}"
    );
    assert_eq!(games[1].moves.len(), 1, "as last published: {after}");

    // node-b comes back with its journal: its game goes on, still once in node-a's feed.
    let _node_b = Daemon::spawn(&b);
    node_status(&mut w, "node-b", "node-b online again", |v| {
        v["state"] == "online"
    })
    .await;
    w.wait("board-003 online again", |m| {
        m.topic == avail && m.text() == "online"
    })
    .await;
    sim.board(3)
        .play_move("e7e5")
        .expect("the simulator plays e5");
    tokio::time::sleep(Duration::from_millis(60)).await;
    sim.board(3).press();
    let body = get_until(web_a, path, "e5 after node-b's restart", |b| {
        b.contains("1. e4") && b.contains("e5")
    })
    .await;
    let games = pychess::check(&body);
    assert_eq!(games.len(), 2, "nothing doubled after the restart: {body}");
    assert_eq!(body.matches("Gamma, C").count(), 1, "{body}");
    let sans: Vec<&str> = games[1].moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(sans, ["e4", "e5"], "{body}");
}

/// node-a (boards 1 and 2, its dashboard on the returned port, the chief with a password)
/// and node-b (board 3), both online with board 3; `prepare` sees their folders first.
async fn nodes_with_a_dashboard(
    name: &str,
    prepare: impl FnOnce(&Path),
) -> (Broker, Sim, Watcher, PathBuf, u16, Daemon, Daemon) {
    let (broker, sim, mut w, dir) = setup(name, 3).await;
    let web_a = common::free_port();
    let a = node_config_web(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
        Some(web_a),
    );
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(3), 3)]);
    webcommon::chief_password(&dir.join("node-a").join("arbiters.toml"));
    prepare(&dir);
    let node_a = Daemon::spawn(&a);
    let node_b = Daemon::spawn(&b);
    for node in ["node-a", "node-b"] {
        node_status(&mut w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
    }
    let avail = topic(&format!("board/{}/availability", board_id(3)));
    w.wait("board-003 online", |m| {
        m.topic == avail && m.text() == "online"
    })
    .await;
    (broker, sim, w, dir, web_a, node_a, node_b)
}

// Issue 23, one writer per retained topic: each node's hall-level alerts are its own
// (`<base>-<node>`), and every node's dashboard shows the other nodes' alerts too.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_nodes_hall_alert_is_its_own_and_every_dashboard_shows_the_others_alerts() {
    // A damaged custody key on both nodes: each raises a hall-level `custody` alert.
    let (broker, sim, mut w, _dir, web_a, _node_a, _node_b) =
        nodes_with_a_dashboard("nodes-alerts", |dir| {
            for node in ["node-a", "node-b"] {
                let state = dir.join(node).join("state");
                std::fs::create_dir_all(&state).expect("state dir");
                std::fs::write(state.join("custody.key"), b"truncated").expect("a bad key");
            }
        })
        .await;
    // A board alert on node-b's board.
    sim.board(3).battery_low(true);
    let low = topic(&format!("alert/{}-low-battery", board_id(3)));
    w.wait("node-b's low_battery alert", |m| {
        m.topic == low && m.raised()
    })
    .await;

    // What the broker keeps: both nodes' alerts, each on its own topic.
    let mut late = Watcher::connect(broker.port, "nodes-alerts-late").await;
    for node in ["node-a", "node-b"] {
        let t = topic(&format!("alert/custody-{node}"));
        let alert = late
            .wait(&format!("{node}'s custody alert, retained"), |m| {
                m.topic == t && m.raised()
            })
            .await
            .json();
        assert_eq!(alert["id"], format!("custody-{node}"), "{alert}");
        assert_eq!(alert["board"], Value::Null, "{alert}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !late
            .drain()
            .iter()
            .any(|m| m.topic == topic("alert/custody") && m.raised()),
        "no shared hall-level alert topic"
    );

    // node-a's dashboard (the arbiters' feed) shows node-b's alerts beside its own.
    let cookie = webcommon::chief_cookie(web_a).await;
    let want = [
        topic("alert/custody-node-a"),
        topic("alert/custody-node-b"),
        low.clone(),
    ];
    let snap =
        webcommon::arbiter_feed_until(web_a, &cookie, "node-a's dashboard with every alert", |s| {
            want.iter().all(|t| s.contains_key(t))
        })
        .await;
    let b = serde_json::from_str::<Value>(&snap[&low]).unwrap_or(Value::Null);
    assert_eq!(b["kind"], "low_battery", "{b}");
    // Cleared on node-b: gone from node-a's dashboard too.
    sim.board(3).battery_low(false);
    w.wait("node-b's low_battery alert cleared", |m| {
        m.topic == low && m.cleared()
    })
    .await;
    webcommon::arbiter_feed_until(
        web_a,
        &cookie,
        "the cleared alert gone from node-a's dashboard",
        |s| !s.contains_key(&low),
    )
    .await;
}

// Issue 23, item 3 (the hall's conclusions): the session, `all_sealed` and the round
// summary are computed by every node from every node's boards.

/// A board command signed by the chief, on the board's own topic: the owning node's answer
/// (the others answer `unknown_board` for now: board commands are not hall commands).
async fn board_cmd(w: &mut Watcher, board: &str, mut cmd: Value) -> Value {
    let owner = if board == board_id(3) {
        "node-b"
    } else {
        "node-a"
    };
    let tx = format!("b-{board}-{}", now_ms());
    cmd["transaction"] = Value::String(tx.clone());
    let set = topic(&format!("board/{board}/set"));
    w.publish(&set, &common::signed(&set, &cmd)).await;
    let resp = topic(&format!("board/{board}/response"));
    w.wait(&format!("{owner} answers {cmd}"), |m| {
        m.topic == resp && m.json()["transaction"] == tx.as_str() && m.json()["node"] == owner
    })
    .await
    .json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_sealed_and_the_session_are_the_whole_halls_on_every_node() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-sealed").await;
    let session_end = now_ms() + 2500;
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({
            "action": "start_round", "round": 5, "time_control": "3600", "start": now_ms(),
            "session_end": session_end,
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(3), "white": "W3", "black": "B3"},
            ],
        }),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
    for n in [1, 3] {
        let events = topic(&format!("board/{}/event", board_id(n)));
        w.wait(&format!("board {n} ordered to seal"), |m| {
            m.topic == events && m.json()["event"] == "adjournment_ordered"
        })
        .await;
    }
    // node-a's board sealed, node-b's not yet: the hall is not all sealed.
    for cmd in [
        json!({"action": "seal", "mv": "Nb1-c3"}),
        json!({"action": "commit_seal"}),
    ] {
        let r = board_cmd(&mut w, &board_id(1), cmd).await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    let sa = topic("node/node-a/session");
    let s = w
        .wait("node-a's session: board-001 sealed", |m| {
            m.topic == sa && m.json()["sealed"] == json!([board_id(1)])
        })
        .await
        .json();
    assert_eq!(s["round"], 5, "{s}");
    assert_eq!(s["sealing"], json!([board_id(3)]), "node-b's board: {s}");
    assert_eq!(s["all_sealed"], false, "{s}");
    let hall_event = topic("event");
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic == hall_event && m.json()["event"] == "all_sealed"),
        "no all_sealed while node-b's game is still sealing"
    );
    // node-b's board sealed too: every node says all sealed, with both boards.
    for cmd in [
        json!({"action": "seal", "mv": "Ng1-f3"}),
        json!({"action": "commit_seal"}),
    ] {
        let r = board_cmd(&mut w, &board_id(3), cmd).await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    for node in ["node-a", "node-b"] {
        let t = topic(&format!("node/{node}/session"));
        let s = w
            .wait(&format!("{node}'s session: all sealed"), |m| {
                m.topic == t && m.json()["all_sealed"] == true
            })
            .await
            .json();
        assert_eq!(s["sealed"], json!([board_id(1), board_id(3)]), "{s}");
    }
    let e = w
        .wait("all_sealed", |m| {
            m.topic == hall_event && m.json()["event"] == "all_sealed"
        })
        .await
        .json();
    assert_eq!(e["boards"], json!([board_id(1), board_id(3)]), "{e}");
    // No daemon writes a shared `session` topic any more.
    assert!(
        !w.drain().iter().any(|m| m.topic == topic("session")),
        "one writer per retained topic"
    );

    // I.14 across the hall: one `schedule_resumption`, answered by both nodes for their
    // own adjourned game; both games resume at the one instant, and node-b's envelope is
    // opened on node-b.
    let start = now_ms() + 2000;
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({"action": "schedule_resumption",
               "resumption": {"start": start, "place": "Hall B"}}),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
    let answers = by_node(&answers);
    assert_eq!(
        answers["node-a"]["boards"],
        json!([board_id(1)]),
        "{answers:?}"
    );
    assert_eq!(
        answers["node-b"]["boards"],
        json!([board_id(3)]),
        "{answers:?}"
    );
    for n in [1, 3] {
        let events = topic(&format!("board/{}/event", board_id(n)));
        let e = w
            .wait(&format!("board {n}: resumption scheduled"), |m| {
                m.topic == events && m.json()["event"] == "resumption_scheduled"
            })
            .await
            .json();
        assert_eq!(e["place"], "Hall B", "{e}");
    }
    let mut started = Vec::new();
    for n in [1, 3] {
        let events = topic(&format!("board/{}/event", board_id(n)));
        let e = w
            .wait(&format!("board {n}: resumption started"), |m| {
                m.topic == events && m.json()["event"] == "resumption_started"
            })
            .await
            .json();
        started.push(e["at"].as_i64().unwrap_or(-1));
    }
    assert_eq!(started, [start, start], "one instant for the hall");
    for cmd in [
        json!({"action": "present", "side": "black"}),
        json!({"action": "open_envelope"}),
    ] {
        let r = board_cmd(&mut w, &board_id(3), cmd).await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    let events = topic(&format!("board/{}/event", board_id(3)));
    let o = w
        .wait("node-b's envelope opened", |m| {
            m.topic == events && m.json()["event"] == "envelope_opened"
        })
        .await
        .json();
    assert_eq!(o["move_text"], "Ng1-f3", "{o}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_summary_waits_for_every_nodes_games_and_lists_them_all() {
    let (broker, _sim, mut w, dir, _a, _b) = two_nodes("nodes-summary").await;
    round_on_boards_1_and_3(&dir, broker.port, 6).await;
    for n in [1, 3] {
        let state = topic(&format!("board/{}/state", board_id(n)));
        w.wait(&format!("board {n} running"), |m| {
            m.topic == state && m.json()["round"] == 6
        })
        .await;
    }
    let result = json!({"action": "set_result", "result": "1-0", "reason": "arbiter"});
    let r = board_cmd(&mut w, &board_id(1), result.clone()).await;
    assert_eq!(r["status"], "ok", "{r}");
    let hall_event = topic("event");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic == hall_event && m.json()["event"] == "round_finished"),
        "no summary while node-b's game is being played"
    );
    let r = board_cmd(&mut w, &board_id(3), result).await;
    assert_eq!(r["status"], "ok", "{r}");
    let e = w
        .wait("round_finished", |m| {
            m.topic == hall_event && m.json()["event"] == "round_finished"
        })
        .await
        .json();
    let boards = |e: &Value| -> Vec<String> {
        e["results"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r["board"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(boards(&e), [board_id(1), board_id(3)], "{e}");
    assert_eq!(e["results"][1]["white"], "W3", "{e}");
    assert_eq!(e["results"][1]["score"], "1-0", "{e}");
    // Each node says it once, with the whole hall's results.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let all: Vec<Value> = w
        .drain()
        .iter()
        .filter(|m| m.topic == hall_event && m.json()["event"] == "round_finished")
        .map(common::Msg::json)
        .collect();
    assert_eq!(all.len(), 2, "once per node: {all:?}");
    for e in &all {
        assert_eq!(boards(e), [board_id(1), board_id(3)], "{e}");
    }
}

/// A board command reaches every node; only the board's node answers it, and a command for
/// a board no node serves is refused once (by the first node by name), not once per node.
/// (Found by the 5-node bench: every node answered `unknown_board` on the owner's topic.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_command_is_answered_once_by_the_boards_node() {
    let (_broker, _sim, mut w, _dir, _a, _b) = two_nodes("nodes-board-cmd").await;
    // No game on the boards: their nodes refuse `set_time` (no_game); what counts is who.
    for (board, node) in [
        (board_id(3), "node-b"),
        (board_id(1), "node-a"),
        ("board-009".to_string(), "node-a"),
    ] {
        let tx = format!("present-{board}-{}", now_ms());
        let set = topic(&format!("board/{board}/set"));
        let cmd = json!({"transaction": tx, "arbiter": "chief", "action": "set_time",
                         "side": "white", "remaining_ms": 1000});
        w.publish(&set, &common::signed(&set, &cmd)).await;
        let response = topic(&format!("board/{board}/response"));
        let first = w
            .wait(&format!("the answer for {board}"), |m| {
                m.topic == response && m.json()["transaction"] == tx.as_str()
            })
            .await
            .json();
        assert_eq!(first["node"], node, "{first}");
        assert_eq!(first["status"], "error", "{first}");
        assert_eq!(
            first["error"] == "unknown_board",
            board == "board-009",
            "{first}"
        );
        tokio::time::sleep(Duration::from_millis(700)).await;
        let answers: Vec<Value> = w
            .drain()
            .iter()
            .filter(|m| m.topic == response && m.json()["transaction"] == tx.as_str())
            .map(|m| m.json())
            .collect();
        assert_eq!(
            answers.len(),
            1,
            "{board}: answered more than once: {answers:?}"
        );
    }
}

/// A round is one round: where its command is silent, each node fills in its own
/// `[defaults]`, so nodes that disagree on them refuse it, all of them, and nothing starts.
/// (The rule is the plain one an organiser can check with `print-config`: one `[defaults]`
/// for the hall, even where a command happens to give what differs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_whose_defaults_differ_refuse_a_round_and_start_nothing() {
    let (broker, sim, mut w, dir) = setup("nodes-defaults", 2).await;
    let a = node_config(&dir, "node-a", broker.port, &sim, &[(&board_id(1), 1)]);
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(2), 2)]);
    // node-b's organiser typed another default time control.
    let mut text = std::fs::read_to_string(&b).expect("read config");
    text.push_str("\n[defaults]\ntime_control = \"5400\"\n");
    std::fs::write(&b, text).expect("write config");
    let _node_a = Daemon::spawn(&a);
    let _node_b = Daemon::spawn(&b);
    for node in ["node-a", "node-b"] {
        let s = node_status(&mut w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
        // Data in the configuration's spellings, not Rust's Debug text (issue 41).
        assert!(s["defaults"]["time_control"].is_string(), "{s}");
        assert_eq!(
            s["defaults"]["clock"]["period_transition"], "on_moves",
            "{s}"
        );
    }
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({
            "action": "start_round", "round": 1, "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(2), "white": "W2", "black": "B2"},
            ],
        }),
    )
    .await;
    refused_by_both(code, &answers, "nodes_disagree", "time_control=5400 ");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !w.drain()
            .iter()
            .any(|m| m.topic.ends_with("/state") && m.json()["round"] == 1),
        "nothing started"
    );
}

/// `number = N` for each listed board of a node's configuration.
fn number_boards(config: &Path, numbers: &[(&str, u32)]) {
    let mut text = std::fs::read_to_string(config).expect("read config");
    for (id, n) in numbers {
        let line = format!("id = \"{id}\"\n");
        assert!(text.contains(&line), "{id} in {}", config.display());
        text = text.replacen(&line, &format!("{line}number = {n}\n"), 1);
    }
    std::fs::write(config, text).expect("write config");
}

/// A TRF round sent to the hall once: every node maps the file's tournament boards over
/// the whole hall (its boards and the other online nodes', as their infos number them),
/// so no node needs `only_our_boards`, each starts its own games, and a board number two
/// servers both use is refused by every node before anything starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trf_round_is_mapped_over_every_nodes_boards() {
    let (broker, sim, mut w, dir) = setup("nodes-trf", 3).await;
    let a = node_config(
        &dir,
        "node-a",
        broker.port,
        &sim,
        &[(&board_id(1), 1), (&board_id(2), 2)],
    );
    let b = node_config(&dir, "node-b", broker.port, &sim, &[(&board_id(3), 3)]);
    number_boards(&a, &[(&board_id(1), 1), (&board_id(2), 2)]);
    // node-b's only board is left to the default numbering: 1, as node-a's first.
    let mut node_a = Daemon::spawn(&a);
    let node_b = Daemon::spawn(&b);
    for node in ["node-a", "node-b"] {
        node_status(&mut w, node, &format!("{node} online"), |v| {
            v["state"] == "online"
        })
        .await;
        let info = topic(&format!("node/{node}/info"));
        w.wait(&format!("{node}'s info"), |m| m.topic == info).await;
    }
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trf/fide-trf26.trf"),
    )
    .expect("test file");
    let round = |tx: &str| {
        json!({"action": "start_round", "round": 2, "trf": text, "start": now_ms(),
               "transaction": tx})
    };
    let (code, answers) = hall_command(&dir, broker.port, round("trf-twice")).await;
    assert_ne!(code, Some(0), "{answers:?}");
    for a in by_node(&answers).values() {
        assert_eq!(a["error"], "nodes_disagree", "{a}");
        let reason = a["reason"].as_str().unwrap_or("");
        assert!(
            reason.contains("tournament board 1")
                && reason.contains("board-001 on node-a")
                && reason.contains("board-003 on node-b"),
            "{a}"
        );
    }
    // node-b is given its own number (3) and restarted; the same file now starts games on
    // both nodes, each its own, without only_our_boards.
    drop(node_b);
    number_boards(&b, &[(&board_id(3), 3)]);
    let _node_b = Daemon::spawn(&b);
    node_status(&mut w, "node-b", "node-b back", |v| v["state"] == "online").await;
    let info_b = topic("node/node-b/info");
    w.wait("node-b's info with board 3", |m| {
        m.topic == info_b && m.text().contains("\"number\":3")
    })
    .await;
    let (code, answers) = hall_command(&dir, broker.port, round("trf-hall")).await;
    assert_eq!(code, Some(0), "{answers:?}");
    let nodes = by_node(&answers);
    assert_eq!(
        nodes["node-a"]["boards"],
        json!([board_id(1), board_id(2)]),
        "{answers:?}"
    );
    assert_eq!(
        nodes["node-b"]["boards"],
        json!([board_id(3)]),
        "{answers:?}"
    );
    let state = topic(&format!("board/{}/state", board_id(1)));
    let s = w
        .wait("board 1 has the file's game", |m| {
            m.topic == state && m.json()["round"] == 2
        })
        .await
        .json();
    assert_eq!(s["white"]["name"], "Dubois, Céline", "{s}");
    let state = topic(&format!("board/{}/state", board_id(3)));
    w.wait("board 3 (node-b's) has the file's game", |m| {
        m.topic == state && m.json()["round"] == 2
    })
    .await;

    // The results back into the file, from node-a: its journal has its own games only;
    // with --hall node-b's game comes from its retained state on the broker.
    for n in [1, 3] {
        let result = json!({"action": "set_result", "result": "1-0", "reason": "arbiter"});
        let r = board_cmd(&mut w, &board_id(n), result).await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    let state = topic(&format!("board/{}/state", board_id(3)));
    w.wait("board 3's result retained", |m| {
        m.topic == state && m.json()["result"].is_object()
    })
    .await;
    let results = |hall: bool| {
        let out = dir.join(format!("results-{hall}.trf"));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"));
        cmd.args(["trf", "results", "--round", "2", "--in"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trf/fide-trf26.trf"))
            .arg("--out")
            .arg(&out)
            .arg("-c")
            .arg(&a);
        if hall {
            cmd.arg("--hall");
        }
        let o = cmd.output().expect("hallclock runs");
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{stderr}");
        stderr
    };
    let alone = results(false);
    assert!(
        alone.contains("1 result(s) filled in") && alone.contains("left blank: board 3"),
        "node-a's journal alone: {alone}"
    );
    let hall = results(true);
    assert!(
        hall.contains("2 result(s) filled in") && !hall.contains("left blank: board 3"),
        "the whole hall: {hall}"
    );
    node_a.kill_9();
}

/// Board 3's `time_added` events for `side` so far, after a barrier: a command to the board
/// sent now is answered after anything an earlier one did.
async fn time_added_on_3(w: &mut Watcher, side: &str) -> Vec<Value> {
    let probe = board_cmd(
        w,
        &board_id(3),
        json!({"arbiter": "chief", "action": "set_time", "side": "white", "remaining_ms": 0}),
    )
    .await;
    assert_eq!(probe["node"], "node-b", "{probe}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let events = topic(&format!("board/{}/event", board_id(3)));
    // (`drain` is every message seen since the watcher connected.)
    w.drain()
        .iter()
        .filter(|m| {
            m.topic == events && m.json()["event"] == "time_added" && m.json()["side"] == side
        })
        .map(|m| m.json())
        .collect()
}

// Issue 23, item 3, as an arbiter expects it: any node's dashboard shows every board, so
// it acts on every board. A command for another node's board is signed as the logged-in
// arbiter and sent to that node, whose answer the dashboard gives; a resend applies
// nothing twice; a board no node has is refused with the whole hall's boards named; a
// board whose node is down is refused as such, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_nodes_dashboard_acts_on_another_nodes_board_once() {
    let (broker, _sim, mut w, dir, web_a, _node_a, mut node_b) =
        nodes_with_a_dashboard("nodes-web-board", |_| {}).await;
    let (code, answers) = hall_command(
        &dir,
        broker.port,
        json!({"action": "start_round", "round": 1, "time_control": "600+5", "start": now_ms(),
               "pairings": [{"board": board_id(3), "white": "W3", "black": "B3"}]}),
    )
    .await;
    assert_eq!(code, Some(0), "{answers:?}");
    let state = topic(&format!("board/{}/state", board_id(3)));
    w.wait("board-003's game", |m| {
        m.topic == state && m.json()["round"] == 1
    })
    .await;

    // node-a's dashboard: +30 s for White on node-b's board, sent twice (a retry).
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], web_a).into();
    let (status, cookie, csrf) = webcommon::login(addr, "chief", webcommon::PASSWORD).await;
    assert_eq!(status, 200);
    let headers = [
        ("Cookie", cookie.as_str()),
        ("x-csrf-token", csrf.as_str()),
        ("Content-Type", "application/json"),
    ];
    let path = format!("/api/board/{}/command", board_id(3));
    let body = json!({"transaction": "web-remote-1", "action": "add_time", "side": "white",
                      "delta_ms": 30_000, "reason": "7.5.5"})
    .to_string();
    let (s1, _, first) = webcommon::http(addr, "POST", &path, &headers, &body).await;
    assert_eq!(s1, 200, "{first}");
    let answer: Value = serde_json::from_str(&first).unwrap_or_default();
    assert_eq!(
        (&answer["status"], &answer["node"], &answer["action"]),
        (&json!("ok"), &json!("node-b"), &json!("add_time")),
        "node-b's own answer: {answer}"
    );
    let (s2, _, again) = webcommon::http(addr, "POST", &path, &headers, &body).await;
    assert_eq!((s2, &again), (200, &first), "the first answer again");
    // Applied once, by node-b, with the dashboard's arbiter as its author.
    let events = topic(&format!("board/{}/event", board_id(3)));
    let added = w
        .wait("board-003's time_added", |m| {
            m.topic == events && m.json()["event"] == "time_added"
        })
        .await
        .json();
    assert_eq!(added["arbiter"], "IA Test", "the chief, by name: {added}");
    let added = time_added_on_3(&mut w, "white").await;
    assert_eq!(added.len(), 1, "+30 s applied once: {added:?}");

    // The same from the page, as an arbiter does it: node-b's board on node-a's dashboard
    // says whose board it is, and a double click on its form adds the time once.
    let chrome = webcommon::Chrome::start("nodes-web-board", 1280, 900).await;
    let c = &chrome.client;
    let base = format!("http://127.0.0.1:{web_a}");
    c.goto(&format!("{base}/login"))
        .await
        .expect("the login page");
    for (field, text) in [("id", "chief"), ("password", webcommon::PASSWORD)] {
        c.find(fantoccini::Locator::Css(&format!(
            "#login input[name={field}]"
        )))
        .await
        .expect("the login form")
        .send_keys(text)
        .await
        .expect("typed");
    }
    c.find(fantoccini::Locator::Css("#login button"))
        .await
        .expect("the login button")
        .click()
        .await
        .expect("clicked");
    chrome
        .until(
            "the hall view",
            "location.pathname === '/' && document.querySelectorAll('.tile').length === 3",
        )
        .await;
    c.goto(&format!("{base}/board/{}", board_id(3)))
        .await
        .expect("the board page");
    let note = chrome
        .until(
            "node-b's board's page, with its forms",
            "document.querySelector('form[data-action=add_time]') && (document.getElementById('other-node') || {}).textContent",
        )
        .await;
    assert!(
        note.as_str().is_some_and(|t| t.contains("node-b")),
        "{note}"
    );
    chrome
        .js(r#"
            const f = document.querySelector('form[data-action=add_time]');
            f.querySelector('[name=side]').value = 'black';
            f.querySelector('[name=delta_ms]').value = '45';
            f.querySelector('[name=reason]').value = '7.5.5';
            const b = f.querySelector('button');
            b.click();
            b.click();
            return true;"#)
        .await;
    let reply = chrome
        .until(
            "the add_time reply",
            "(document.querySelector('form[data-action=add_time] .reply') || {}).textContent.length > 2 && document.querySelector('form[data-action=add_time] .reply').textContent",
        )
        .await;
    assert_eq!(reply, "done: add time");
    let _ = chrome.shot("nodes-remote-board").await;
    chrome.close().await;
    let black = time_added_on_3(&mut w, "black").await;
    assert_eq!(black.len(), 1, "a double click adds 45 s once: {black:?}");
    assert_eq!(black[0]["delta_ms"], 45_000, "{black:?}");

    // 6.10 onto a board of another node: refused by the game's node, naming the target's.
    let (s5, _, across) = webcommon::http(
        addr,
        "POST",
        &path,
        &headers,
        &json!({"transaction": "web-remote-4", "action": "replace_clock", "to": board_id(1),
                "reason": "6.10"})
        .to_string(),
    )
    .await;
    assert_eq!(s5, 400, "{across}");
    let across: Value = serde_json::from_str(&across).unwrap_or_default();
    assert_eq!(
        (&across["error"], &across["node"]),
        (&json!("bad_value"), &json!("node-b")),
        "{across}"
    );
    assert!(
        across["reason"]
            .as_str()
            .is_some_and(|r| r.contains(&board_id(1)) && r.contains("node-a")),
        "{across}"
    );

    // A board no node has: refused, naming the whole hall's boards.
    let (s3, _, unknown) = webcommon::http(
        addr,
        "POST",
        "/api/board/board-009/command",
        &headers,
        &json!({"transaction": "web-remote-2", "action": "pause", "reason": "x"}).to_string(),
    )
    .await;
    assert_eq!(s3, 404, "{unknown}");
    let unknown: Value = serde_json::from_str(&unknown).unwrap_or_default();
    assert_eq!(unknown["error"], "unknown_board", "{unknown}");
    let reason = unknown["reason"].as_str().unwrap_or_default();
    for n in [1, 2, 3] {
        assert!(reason.contains(&board_id(n)), "{reason}");
    }

    // node-b killed: its board's command is refused at once, as its node's being down.
    node_b.kill_9();
    node_status(&mut w, "node-b", "node-b offline", |v| {
        v["state"] == "offline"
    })
    .await;
    // What the arbiter sees before acting: the board offline on this dashboard.
    let offline = topic(&format!("board/{}/availability", board_id(3)));
    feed_until(web_a, "board-003 offline on node-a's dashboard", |s| {
        s.get(&offline).map(String::as_str) == Some("offline")
    })
    .await;
    let (s4, _, down) = webcommon::http(
        addr,
        "POST",
        &path,
        &headers,
        &json!({"transaction": "web-remote-3", "action": "pause", "reason": "x"}).to_string(),
    )
    .await;
    assert_eq!(s4, 409, "{down}");
    let down: Value = serde_json::from_str(&down).unwrap_or_default();
    assert_eq!(down["error"], "node_offline", "{down}");
    assert!(
        down["reason"]
            .as_str()
            .is_some_and(|r| r.contains("node-b") && r.contains(&board_id(3))),
        "{down}"
    );
}
