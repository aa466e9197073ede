//! Issue 23, items 4 and 5: one hall served by three nodes, each `hallclock run` (a child
//! process, so kill -9 is real) with its simulated boards on real pseudo-terminals,
//! connected to its OWN real Mosquitto, each bridged to a central Mosquitto, all on loopback.
//! Between each node's broker and the central one sits a TCP relay of the test's own, so
//! one bridge can be cut (its connections dropped, new ones refused) and healed while both
//! brokers run on, as a cable pulled between two rooms.
//!
//! The bridge is the one `docs/OPERATIONS.md` ("A hall on several servers") gives halls:
//! the packaged `packaging/mosquitto/bridge.conf`, with the hall, node and address put in.

mod common;
mod webcommon;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Broker, Daemon, HALL, Watcher, board_id, feed_until, now_ms};
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Sim, SimConfig};
use serde_json::{Value, json};

fn topic(rest: &str) -> String {
    format!("hallclock/{HALL}/{rest}")
}

/// How long the tests wait for a hall to converge (bridges reconnect every second; a
/// daemon's broker reconnection backs off to 5 s).
const CONVERGE: Duration = Duration::from_secs(40);

/// A TCP relay from a local port to `target`, which the test can cut and heal.
struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(target: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("a local port for the relay");
        let port = listener.local_addr().expect("its address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let (c, o) = (cut.clone(), open.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                // Cut: the connection is closed at once, as a dead link refuses it.
                if c.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                else {
                    continue;
                };
                let task = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                if let Ok(mut list) = o.lock() {
                    list.push(task.abort_handle());
                }
            }
        });
        Relay {
            port,
            cut,
            open,
            accept,
        }
    }

    /// Drop every connection through it and refuse new ones.
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        if let Ok(mut list) = self.open.lock() {
            for t in list.drain(..) {
                t.abort();
            }
        }
    }

    fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

/// A node's bridge to the central broker (reached through `relay`): the packaged example
/// (packaging/mosquitto/bridge.conf) with its hall, node and address put in; the central
/// broker here takes anyone, so the example's account is not checked.
fn bridge_conf(node: &str, relay: u16) -> String {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/mosquitto/bridge.conf"),
    )
    .expect("the packaged bridge example");
    format!(
        "\n{}",
        example
            .replace("hall-a", HALL)
            .replace("room-2", node)
            .replace("central.hall.lan:1883", &format!("127.0.0.1:{relay}"))
    )
}

/// A node's configuration: its broker, its dashboard on `web`, its boards (board id,
/// simulator board number).
fn node_config(
    dir: &Path,
    node: &str,
    broker: u16,
    web: u16,
    sim: &Sim,
    boards: &[usize],
) -> PathBuf {
    let named: Vec<(String, usize)> = boards.iter().map(|n| (board_id(*n), *n)).collect();
    node_config_named(dir, node, broker, web, sim, &named)
}

/// The same, with the boards' ids given: (board id, simulator board number).
fn node_config_named(
    dir: &Path,
    node: &str,
    broker: u16,
    web: u16,
    sim: &Sim,
    boards: &[(String, usize)],
) -> PathBuf {
    let dir = dir.join(node);
    std::fs::create_dir_all(&dir).expect("node dir");
    let mut toml = format!(
        "[hall]\nid = \"{HALL}\"\nnode = \"{node}\"\nstate_dir = \"{}\"\n\n[broker]\nhost = \"127.0.0.1\"\nport = {broker}\nkeep_alive_secs = 2\n\n[link]\nliveness_timeout_ms = 1500\nack_timeout_ms = 300\nreopen_backoff_max_ms = 300\n\n[web]\nenabled = true\nlisten = \"127.0.0.1:{web}\"\n\n[log]\nlevel = \"debug\"\n\n[security]\narbiters = {:?}\n",
        dir.join("state").display(),
        common::write_arbiters(&dir).display().to_string()
    );
    // The chief can log in to every node's dashboard.
    webcommon::chief_password(&dir.join("arbiters.toml"));
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

/// The nodes and their boards: node-1 has boards 1 and 2, node-2 3 and 4, node-3 5 and 6.
const NODES: [(&str, [usize; 2]); 3] = [("node-1", [1, 2]), ("node-2", [3, 4]), ("node-3", [5, 6])];

/// Three nodes, each behind its own broker bridged to the central one.
struct Hall {
    dir: PathBuf,
    sim: Sim,
    central: Broker,
    /// Each node's own broker, and the relay its bridge goes through.
    locals: Vec<(Broker, Relay)>,
    configs: Vec<PathBuf>,
    daemons: Vec<Option<Daemon>>,
    /// Each node's dashboard port.
    webs: Vec<u16>,
    /// Subscribed to everything on the central broker.
    w: Watcher,
}

impl Hall {
    async fn start(name: &str) -> Hall {
        let dir = scratch_dir(name);
        let central = Broker::start(&format!("{name}-central")).await;
        // Board 7 is no node's: a test gives it to a fourth node.
        let mut cfg = SimConfig::new(7, dir.join("ports"));
        cfg.ack_delay = Duration::from_millis(5);
        let sim = Sim::start(cfg).await.expect("sim");
        let mut w = Watcher::connect(central.port, &format!("{name}-central-watcher")).await;
        let mut locals = Vec::new();
        let mut configs = Vec::new();
        let mut daemons = Vec::new();
        let mut webs = Vec::new();
        for (node, boards) in NODES {
            let relay = Relay::start(central.port).await;
            let local =
                Broker::start_with(&format!("{name}-{node}"), &bridge_conf(node, relay.port)).await;
            let web = common::free_port();
            let config = node_config(&dir, node, local.port, web, &sim, &boards);
            daemons.push(Some(Daemon::spawn(&config)));
            locals.push((local, relay));
            configs.push(config);
            webs.push(web);
        }
        // Seen on the central broker: every node online, every board online.
        for (node, _) in NODES {
            node_status(&mut w, node, &format!("{node} online on central"), |v| {
                v["state"] == "online"
            })
            .await;
        }
        for n in 1..=6 {
            let avail = topic(&format!("board/{}/availability", board_id(n)));
            w.wait(&format!("board {n} online on central"), |m| {
                m.topic == avail && m.text() == "online"
            })
            .await;
        }
        Hall {
            dir,
            sim,
            central,
            locals,
            configs,
            daemons,
            webs,
            w,
        }
    }

    /// Node `i` (1-based)'s broker.
    fn local(&self, i: usize) -> &Broker {
        &self.locals[i - 1].0
    }

    fn relay(&self, i: usize) -> &Relay {
        &self.locals[i - 1].1
    }

    fn web(&self, i: usize) -> u16 {
        self.webs[i - 1]
    }

    fn kill_9(&mut self, i: usize) {
        if let Some(mut d) = self.daemons[i - 1].take() {
            d.kill_9();
        }
    }

    fn restart(&mut self, i: usize) {
        self.restart_env(i, &[]);
    }

    fn restart_env(&mut self, i: usize, env: &[(&str, &str)]) {
        self.daemons[i - 1] = Some(Daemon::spawn_env(&self.configs[i - 1], env));
    }

    /// `hallclock command` on the central broker, signed by the test chief: its exit code
    /// and the answers it printed.
    async fn command(&self, command: Value) -> (Option<i32>, Vec<Value>) {
        common::hall_command_cli(&self.dir, self.central.port, command).await
    }

    /// One round on all six boards, started now, as one command on the central broker.
    async fn start_round(&mut self, round: u32) {
        let pairings: Vec<Value> = (1..=6)
            .map(|n| json!({"board": board_id(n), "white": format!("White {n}"), "black": format!("Black {n}")}))
            .collect();
        let (code, answers) = self
            .command(json!({
                "action": "start_round", "round": round, "time_control": "600+5",
                "start": now_ms(), "pairings": pairings,
            }))
            .await;
        assert_eq!(code, Some(0), "{answers:?}");
        let nodes = by_node(&answers);
        assert_eq!(
            nodes.keys().collect::<Vec<_>>(),
            ["node-1", "node-2", "node-3"],
            "one answer per node: {answers:?}"
        );
        for (node, boards) in NODES {
            let a = &nodes[node];
            assert_eq!(a["status"], "ok", "{a}");
            let want: Vec<String> = boards.iter().map(|n| board_id(*n)).collect();
            assert_eq!(a["boards"], json!(want), "{a}");
        }
        for n in 1..=6 {
            self.w
                .state(
                    &board_id(n),
                    &format!("board {n} running round {round} on central"),
                    |s| s["round"] == round && s["phase"] == "running",
                )
                .await;
        }
    }
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

/// The answers by node id.
fn by_node(answers: &[Value]) -> BTreeMap<String, Value> {
    answers
        .iter()
        .map(|a| (a["node"].as_str().unwrap_or("?").to_string(), a.clone()))
        .collect()
}

fn json_of(snap: &BTreeMap<String, String>, t: &str) -> Value {
    snap.get(t)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null)
}

/// What a broker keeps: every retained topic under the hall and its payload, as a new
/// subscriber gets them.
async fn retained_on(port: u16, name: &str) -> BTreeMap<String, Value> {
    let mut w = Watcher::connect(port, name).await;
    // The broker sends the retained messages right after the subscription.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut out = BTreeMap::new();
    // A cleared alert is kept retained by its writer: no alert stands there.
    for m in w.drain().iter().filter(|m| m.retained && m.raised()) {
        let v = serde_json::from_slice(&m.payload).unwrap_or_else(|_| Value::String(m.text()));
        out.insert(m.topic.clone(), v);
    }
    out
}

/// Polls what `port`'s broker keeps until `want` says nothing is missing (`None`), or
/// panics with the last thing missing.
async fn retained_until(
    port: u16,
    what: &str,
    want: impl Fn(&BTreeMap<String, Value>) -> Option<String>,
) -> BTreeMap<String, Value> {
    let deadline = tokio::time::Instant::now() + CONVERGE;
    let mut round = 0;
    loop {
        round += 1;
        let snap = retained_on(port, &format!("retained-{port}-{round}-{}", now_ms())).await;
        let missing = want(&snap);
        let Some(missing) = missing else {
            return snap;
        };
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}: {missing}");
        }
    }
}

/// What `w` received so far satisfies no later wait (those wait for what comes next).
fn forget(w: &mut Watcher) {
    w.drain();
    for m in w.seen.iter_mut() {
        m.used = true;
    }
}

fn state_topic(n: usize) -> String {
    topic(&format!("board/{}/state", board_id(n)))
}

fn avail_topic(n: usize) -> String {
    topic(&format!("board/{}/availability", board_id(n)))
}

fn battery_topic(n: usize) -> String {
    topic(&format!("alert/{}-low-battery", board_id(n)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_round_on_three_bridged_nodes_survives_a_kill_9_and_shows_on_every_dashboard() {
    let mut hall = Hall::start("many-round").await;

    // A pairing for a board no node owns: refused by every node, nothing started anywhere.
    let (code, answers) = hall
        .command(json!({
            "action": "start_round", "round": 1, "time_control": "600", "start": now_ms(),
            "pairings": [
                {"board": board_id(1), "white": "W1", "black": "B1"},
                {"board": board_id(5), "white": "W5", "black": "B5"},
                {"board": "board-009", "white": "W9", "black": "B9"},
            ],
        }))
        .await;
    assert_ne!(code, Some(0), "{answers:?}");
    let nodes = by_node(&answers);
    assert_eq!(nodes.len(), 3, "every node answers: {answers:?}");
    for a in nodes.values() {
        assert_eq!(a["status"], "error", "{a}");
        assert_eq!(a["error"], "unknown_board", "{a}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !hall.w.drain().iter().any(|m| (m.topic == topic("event")
            && m.json()["event"] == "round_started")
            || (m.topic.ends_with("/state") && m.json()["round"] == 1)),
        "nothing started"
    );

    // One start_round, sent once on the central broker, runs on every board of every node.
    hall.start_round(1).await;

    // node-1's dashboard shows node-3's boards with their games.
    let on_1 = feed_until(hall.web(1), "node-3's boards on node-1's dashboard", |s| {
        [5, 6]
            .iter()
            .all(|n| json_of(s, &state_topic(*n))["round"] == 1)
    })
    .await;
    assert_eq!(json_of(&on_1, &state_topic(5))["white"]["name"], "White 5");
    assert_eq!(
        on_1.get(&avail_topic(6)).map(String::as_str),
        Some("online")
    );

    // A press on node-2's board shows on node-1's dashboard.
    hall.sim.board(3).press();
    hall.w
        .state(&board_id(3), "board-003 pressed, on central", |s| {
            s["running"] == "black"
        })
        .await;
    feed_until(hall.web(1), "node-2's press on node-1's dashboard", |s| {
        json_of(s, &state_topic(3))["running"] == "black"
    })
    .await;
    let before = hall.w.latest_state(&board_id(3));

    // kill -9 node-2: its boards go offline on node-1's dashboard; nodes 1 and 3 play on.
    hall.kill_9(2);
    node_status(
        &mut hall.w,
        "node-2",
        "node-2's last will on central",
        |v| v["state"] == "offline",
    )
    .await;
    let after = feed_until(hall.web(1), "node-2's boards offline on node-1", |s| {
        [3, 4]
            .iter()
            .all(|n| s.get(&avail_topic(*n)).map(String::as_str) == Some("offline"))
    })
    .await;
    assert_eq!(
        json_of(&after, &state_topic(3))["white"]["name"],
        "White 3",
        "the last known game stays"
    );
    for n in [1, 5] {
        hall.sim.board(n).press();
        hall.w
            .state(
                &board_id(n),
                &format!("board {n} plays on while node-2 is dead"),
                |s| s["running"] == "black",
            )
            .await;
    }

    // node-2 comes back with its journal: the same game, the press before the kill kept,
    // nothing started again, and play goes on.
    forget(&mut hall.w);
    hall.restart(2);
    node_status(&mut hall.w, "node-2", "node-2 online again", |v| {
        v["state"] == "online"
    })
    .await;
    let back = hall
        .w
        .state(&board_id(3), "board-003 back, online", |s| {
            s["online"] == true && s["round"] == 1
        })
        .await;
    assert_eq!(
        back["running"], "black",
        "the press before the kill: {back}"
    );
    assert_eq!(back["white"]["name"], "White 3", "{back}");
    assert!(
        back["seq"].as_u64() >= before["seq"].as_u64(),
        "the journal's sequence goes on: {before} then {back}"
    );
    hall.sim.board(3).press();
    hall.w
        .state(&board_id(3), "board-003 pressed after the restart", |s| {
            s["running"] == "white"
        })
        .await;
    feed_until(hall.web(1), "node-2's boards online again on node-1", |s| {
        [3, 4]
            .iter()
            .all(|n| s.get(&avail_topic(*n)).map(String::as_str) == Some("online"))
            && json_of(s, &state_topic(3))["running"] == "white"
    })
    .await;
    // Nothing doubled: board-003 had two presses and one game, as central saw them.
    let events = topic(&format!("board/{}/event", board_id(3)));
    let seen: Vec<Value> = hall
        .w
        .drain()
        .iter()
        .filter(|m| m.topic == events)
        .map(common::Msg::json)
        .collect();
    let count = |kind: &str| seen.iter().filter(|e| e["event"] == kind).count();
    assert_eq!(count("pressed"), 2, "{seen:#?}");
    assert_eq!(count("clock_started"), 1, "{seen:#?}");

    // A move and press on node-2's other board reach node-1's broadcast, over the bridges:
    // node-1's games.pgn is the whole hall's, every game once.
    hall.sim.board(4).play_move("e2e4").expect("a legal move");
    hall.sim.board(4).press();
    let pgn = common::get_until(
        hall.web(1),
        "/broadcast/round/1/games.pgn",
        "node-2's move in node-1's games.pgn",
        |b| {
            b.split("\n\n[Event ")
                .any(|g| g.contains("[Round \"1.4\"]") && g.contains("1. e4"))
        },
    )
    .await;
    for n in 1..=6 {
        assert_eq!(
            pgn.matches(&format!("[Round \"1.{n}\"]")).count(),
            1,
            "board {n} once in node-1's games.pgn:\n{pgn}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_bridge_heals_and_every_broker_converges_to_the_nodes_truth() {
    let mut hall = Hall::start("many-cut").await;
    hall.start_round(1).await;
    let mut w3 = Watcher::connect(hall.local(3).port, "many-cut-w3").await;

    // Before the cut: a low battery on node-3's board-005 is known everywhere.
    hall.sim.board(5).battery_low(true);
    let t5 = battery_topic(5);
    hall.w
        .wait("board-005's low battery on central", |m| {
            m.topic == t5 && m.raised()
        })
        .await;
    retained_until(hall.local(1).port, "the alert on node-1's broker", |s| {
        (!s.contains_key(&t5)).then(|| format!("no {t5} yet"))
    })
    .await;

    // And an announcement on every hall screen, from every node.
    let ann3 = topic("node/node-3/announce");
    let (code, answers) = hall
        .command(
            json!({"action": "announce", "text": "Mobile phones off", "until": now_ms() + 600_000}),
        )
        .await;
    assert_eq!(code, Some(0), "{answers:?}");
    retained_until(hall.central.port, "node-3's announcement on central", |s| {
        (!s.contains_key(&ann3)).then(|| format!("no {ann3} yet"))
    })
    .await;

    // Cut node-3's bridge: node-3 and its broker run on, alone.
    hall.relay(3).cut();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Node-3's arbiter takes its screens' announcement down on its own broker: central
    // keeps the standing copy, which the heal brings back to node-3's broker (a retained
    // copy sent through the bridge): node-3 writes that topic alone and corrects it.
    let (_, answers) = common::hall_command_cli(
        &hall.dir,
        hall.local(3).port,
        json!({"action": "announce", "text": null}),
    )
    .await;
    let node3 = by_node(&answers);
    assert_eq!(
        node3.get("node-3").map(|a| &a["status"]),
        Some(&json!("ok")),
        "{answers:?}"
    );
    hall.sim.board(5).battery_low(false);
    hall.sim.board(6).battery_low(true);
    hall.sim.board(5).press();
    hall.sim.board(1).press();
    let t6 = battery_topic(6);
    w3.wait("board-005's alert cleared on node-3's broker", |m| {
        m.topic == t5 && m.cleared()
    })
    .await;
    w3.wait("board-006's alert on node-3's broker", |m| {
        m.topic == t6 && m.raised()
    })
    .await;
    w3.state(&board_id(5), "node-3 plays on during the cut", |s| {
        s["running"] == "black"
    })
    .await;
    hall.w
        .state(&board_id(1), "node-1 plays on during the cut", |s| {
            s["running"] == "black"
        })
        .await;
    // The cut is real: central did not hear of node-3's changes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let central = retained_on(hall.central.port, "many-cut-during").await;
    assert!(
        central.contains_key(&t5) && !central.contains_key(&t6),
        "central is cut off from node-3: {:?}",
        central
            .keys()
            .filter(|t| t.contains("alert"))
            .collect::<Vec<_>>()
    );

    // Heal: every broker converges to what node-3 knows, nothing stale left anywhere.
    hall.relay(3).heal();
    let truth = feed_until(hall.web(3), "node-3's own picture", |s| {
        json_of(s, &state_topic(5))["running"] == "black"
    })
    .await;
    let converged = |s: &BTreeMap<String, Value>| -> Option<String> {
        if s.contains_key(&t5) {
            return Some(format!("{t5} still there: {}", s[&t5]));
        }
        if let Some(stale) = s.get(&ann3) {
            return Some(format!(
                "node-3's announcement taken down, still there: {stale}"
            ));
        }
        if !s.contains_key(&t6) {
            return Some(format!("{t6} missing"));
        }
        for n in [5, 6] {
            let want = json_of(&truth, &state_topic(n));
            let got = s.get(&state_topic(n)).cloned().unwrap_or(Value::Null);
            if got != want {
                return Some(format!("board {n}: {got} instead of node-3's {want}"));
            }
        }
        let one = s.get(&state_topic(1)).cloned().unwrap_or(Value::Null);
        (one["running"] != "black").then(|| format!("node-1's board-001 is {one}"))
    };
    for (name, port) in [
        ("central", hall.central.port),
        ("node-1's broker", hall.local(1).port),
        ("node-3's broker", hall.local(3).port),
    ] {
        retained_until(port, &format!("{name} converged after the heal"), converged).await;
    }
    // And it stays so (nothing echoes a stale copy back later).
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (name, port) in [
        ("central", hall.central.port),
        ("node-3's broker", hall.local(3).port),
    ] {
        let snap = retained_on(
            port,
            &format!("many-cut-after-{name}").replace(['\'', ' '], "-"),
        )
        .await;
        assert_eq!(converged(&snap), None, "{name} went stale again");
    }

    // Stop node-3's own broker for a while: node-3 plays on (and journals); when its broker
    // is back, the central picture converges again.
    hall.locals[2].0.kill();
    hall.sim.board(6).battery_low(false);
    hall.sim.board(6).press();
    tokio::time::sleep(Duration::from_secs(2)).await;
    hall.locals[2].0.start_again().await;
    let truth = feed_until(hall.web(3), "node-3's own picture", |s| {
        json_of(s, &state_topic(6))["running"] == "black"
    })
    .await;
    retained_until(
        hall.central.port,
        "central converged after node-3's broker came back",
        |s| {
            if s.contains_key(&t6) {
                return Some(format!("{t6} still there: {}", s[&t6]));
            }
            let want = json_of(&truth, &state_topic(6));
            let got = s.get(&state_topic(6)).cloned().unwrap_or(Value::Null);
            (got != want).then(|| format!("board 6: {got} instead of node-3's {want}"))
        },
    )
    .await;
}

/// A round sent while node-3's bridge is cut reaches node-1 and node-2 only, and the
/// answer names node-3 as silent. Sent again after the heal with the same transaction,
/// node-1 and node-2 give their first answers and node-3 starts its part of the same
/// round, though the others' boards already play it: they play *this* round, which is
/// not a busy board (`Hall::check_round`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_sent_during_a_cut_is_completed_by_its_resend_after_the_heal() {
    let mut hall = Hall::start("many-resend").await;
    let bridge = topic("bridge/node-3");
    hall.relay(3).cut();
    hall.w
        .wait("node-3's bridge down on central", |m| {
            m.topic == bridge && m.text() == "0"
        })
        .await;
    let pairings: Vec<Value> = (1..=6)
        .map(|n| json!({"board": board_id(n), "white": format!("White {n}"), "black": format!("Black {n}")}))
        .collect();
    // Sent where a cut may delay some node: its resend after the heal comes after the
    // start, so the command says from the first send that a past start is meant (the
    // resend must be the same command; OPERATIONS, "What happens in a cut").
    let round = json!({
        "action": "start_round", "round": 1, "time_control": "600+5", "start": now_ms(),
        "allow_past_start": true,
        "pairings": pairings, "transaction": "many-resend-round-1",
    });
    let (code, answers) = hall.command(round.clone()).await;
    assert_ne!(code, Some(0), "node-3 did not answer: {answers:?}");
    let first = by_node(&answers);
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["node-1", "node-2"],
        "{answers:?}"
    );
    for n in 1..=4 {
        hall.w
            .state(&board_id(n), &format!("board {n} in round 1"), |s| {
                s["round"] == 1
            })
            .await;
    }

    // The bridge's `1` from before the cut is not the one to wait for.
    forget(&mut hall.w);
    hall.relay(3).heal();
    hall.w
        .wait("node-3's bridge back on central", |m| {
            m.topic == bridge && m.text() == "1"
        })
        .await;
    let (code, answers) = hall.command(round).await;
    assert_eq!(code, Some(0), "{answers:?}");
    let again = by_node(&answers);
    for node in ["node-1", "node-2"] {
        assert_eq!(again[node], first[node], "{node}'s first answer again");
    }
    assert_eq!(again["node-3"]["status"], "ok", "{answers:?}");
    assert_eq!(
        again["node-3"]["boards"],
        json!([board_id(5), board_id(6)]),
        "{answers:?}"
    );
    for n in [5, 6] {
        hall.w
            .state(&board_id(n), &format!("board {n} in round 1"), |s| {
                s["round"] == 1 && s["phase"] == "running"
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleared_alert_reaches_a_node_cut_off_at_the_time_though_its_writer_died_meanwhile() {
    // A clear must travel by itself, as a retained message of its writer's. An empty
    // retained message is a deletion, and a deletion reaches nobody who was cut off when
    // it was made: a healed bridge (a clean session on the central broker) gets only what
    // is retained there. With the writer alive, its correction (mqtt/owned.rs) would hide
    // that; with the writer dead, only the clear's own payload is left to say it.
    let mut hall = Hall::start("many-cleared").await;
    let cookie = webcommon::chief_cookie(hall.web(1)).await;
    let t5 = battery_topic(5);
    hall.sim.board(5).battery_low(true);
    retained_until(hall.local(1).port, "the alert on node-1's broker", |s| {
        (!s.contains_key(&t5)).then(|| "not raised yet".to_string())
    })
    .await;
    webcommon::arbiter_feed_until(
        hall.web(1),
        &cookie,
        "node-1's dashboard shows node-3's alert",
        |s| s.contains_key(&t5),
    )
    .await;

    // node-1 is cut off; node-3 clears its alert, and dies.
    hall.relay(1).cut();
    tokio::time::sleep(Duration::from_millis(300)).await;
    hall.sim.board(5).battery_low(false);
    let clear = hall
        .w
        .wait("board-005's alert cleared on central", |m| {
            m.topic == t5 && m.cleared()
        })
        .await;
    assert_eq!(
        clear.json(),
        json!({"cleared": true, "id": format!("{}-low-battery", board_id(5))}),
        "cleared by a payload of the writer's, not only by an empty retain"
    );
    hall.kill_9(3);
    node_status(&mut hall.w, "node-3", "node-3 offline on central", |v| {
        v["state"] == "offline"
    })
    .await;

    // node-1's bridge heals: its broker and its dashboard learn of the clear.
    hall.relay(1).heal();
    retained_until(
        hall.local(1).port,
        "the alert cleared on node-1's broker",
        |s| {
            s.contains_key(&t5)
                .then(|| format!("{t5} still raised on node-1's broker: {}", s[&t5]))
        },
    )
    .await;
    webcommon::arbiter_feed_until(
        hall.web(1),
        &cookie,
        "node-1's dashboard without node-3's alert",
        |s| !s.contains_key(&t5),
    )
    .await;

    // node-3 back: whatever copy a healed bridge pushed back meanwhile (mosquitto#3002),
    // its writer puts its own picture back, and every broker ends cleared.
    hall.restart(3);
    node_status(&mut hall.w, "node-3", "node-3 back on central", |v| {
        v["state"] == "online"
    })
    .await;
    for (name, port) in [
        ("central", hall.central.port),
        ("node-1's broker", hall.local(1).port),
        ("node-3's broker", hall.local(3).port),
    ] {
        retained_until(
            port,
            &format!("the alert cleared on {name} after the restart"),
            |s| {
                s.contains_key(&t5)
                    .then(|| format!("{t5} raised on {name}: {}", s[&t5]))
            },
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_clock_is_off_by_more_than_a_second_is_an_alert_naming_both_nodes() {
    let mut hall = Hall::start("many-skew").await;
    // node-2 comes back with its clock 3 s ahead (the test hook of `hall::start`).
    hall.kill_9(2);
    node_status(&mut hall.w, "node-2", "node-2 killed", |v| {
        v["state"] == "offline"
    })
    .await;
    hall.restart_env(2, &[("HALLCLOCK_TEST_CLOCK_OFFSET_MS", "3000")]);
    node_status(&mut hall.w, "node-2", "node-2 online, 3 s ahead", |v| {
        v["state"] == "online"
    })
    .await;
    // Every node raises its own alert, naming the nodes and the difference (3 s less the
    // few ms a reading takes to arrive: 2.9 or 3.0 s).
    for (node, says) in [
        (
            "node-1",
            ["the clock of node node-2 is ", " s ahead of node node-1's"],
        ),
        (
            "node-3",
            ["the clock of node node-2 is ", " s ahead of node node-3's"],
        ),
        (
            "node-2",
            [
                "the clock of node node-1 is ",
                "the clock of node node-3 is ",
            ],
        ),
    ] {
        let t = topic(&format!("alert/clock-skew-{node}"));
        let alert = hall
            .w
            .wait(&format!("{node}'s clock_skew alert saying {says:?}"), |m| {
                let text = m.json()["message"].as_str().unwrap_or("").to_string();
                m.topic == t && says.iter().all(|s| text.contains(s))
            })
            .await
            .json();
        assert_eq!(alert["kind"], "clock_skew", "{alert}");
        assert_eq!(alert["board"], Value::Null, "{alert}");
        let text = alert["message"].as_str().unwrap_or("");
        let near_3 = ["2.9 s", "3.0 s"];
        assert!(near_3.iter().any(|d| text.contains(d)), "{text}");
        if node == "node-2" {
            assert!(text.contains("s behind node node-2's"), "{text}");
        }
    }
    // Its clock set right (an honest restart): every alert is cleared, and stays so.
    forget(&mut hall.w);
    hall.kill_9(2);
    hall.restart(2);
    for node in ["node-1", "node-2", "node-3"] {
        let t = topic(&format!("alert/clock-skew-{node}"));
        hall.w
            .wait(&format!("{node}'s clock_skew alert cleared"), |m| {
                m.topic == t && m.cleared()
            })
            .await;
    }
    node_status(&mut hall.w, "node-2", "node-2 online, on time", |v| {
        v["state"] == "online"
    })
    .await;
    // Long enough for a whole window of readings of the honest clock.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let central = retained_on(hall.central.port, "many-skew-after").await;
    let left: Vec<&String> = central
        .keys()
        .filter(|t| t.contains("clock-skew"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_claimed_by_two_bridged_nodes_is_an_alert_on_both_and_neither_drops_its_game() {
    let mut hall = Hall::start("many-claim").await;
    hall.start_round(1).await;
    // A fourth server, behind its own bridged broker, names its board board-005 too (a
    // configuration mistake across two servers).
    let relay = Relay::start(hall.central.port).await;
    let local = Broker::start_with("many-claim-node-4", &bridge_conf("node-4", relay.port)).await;
    let config = node_config_named(
        &hall.dir,
        "node-4",
        local.port,
        common::free_port(),
        &hall.sim,
        &[(board_id(5), 7)],
    );
    let mut node_4 = Daemon::spawn(&config);
    node_status(&mut hall.w, "node-4", "node-4 online", |v| {
        v["state"] == "online"
    })
    .await;
    for node in ["node-3", "node-4"] {
        let t = topic(&format!("alert/{}-claimed-twice-{node}", board_id(5)));
        let alert = hall
            .w
            .wait(&format!("{node}'s claim alert on central"), |m| {
                m.topic == t && m.raised()
            })
            .await
            .json();
        assert_eq!(alert["kind"], "board_claimed_twice", "{alert}");
        let text = alert["message"].as_str().unwrap_or("");
        assert!(
            text.contains("node-3") && text.contains("node-4"),
            "{alert}"
        );
    }
    // node-3's game goes on: a press counts.
    hall.sim.board(5).press();
    let events = topic(&format!("board/{}/event", board_id(5)));
    hall.w
        .wait("a press on node-3's board-005 still counts", |m| {
            m.topic == events && m.json()["event"] == "pressed"
        })
        .await;
    // Two writers of one board's topics do not correct each other (they would for ever):
    // quiet, nothing comes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let state = state_topic(5);
    let before = hall.w.drain().iter().filter(|m| m.topic == state).count();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = hall.w.drain().iter().filter(|m| m.topic == state).count();
    assert!(
        after - before <= 1,
        "{} states of a contested board in 3 s of quiet",
        after - before
    );
    assert!(
        !hall.w.drain().iter().any(|m| m.topic == events
            && matches!(
                m.json()["event"].as_str(),
                Some("game_ended" | "game_annulled")
            )),
        "no game was ended"
    );
    // node-4 goes: node-3's alert clears.
    node_4.kill_9();
    let t = topic(&format!("alert/{}-claimed-twice-node-3", board_id(5)));
    hall.w
        .wait("node-3's claim alert cleared", |m| {
            m.topic == t && m.cleared()
        })
        .await;
    drop(relay);
}
