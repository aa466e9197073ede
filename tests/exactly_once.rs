//! Exactly once at the edges (issue 20): a command sent again — a client that lost the
//! reply and re-signs its retry, a QoS 1 redelivery, a dashboard request repeated — is
//! applied once and answered with its first reply, through either door (signed MQTT, a
//! dashboard session), against a real Mosquitto; and a command refused after its
//! transaction was claimed answers its resend instead of leaving it waiting.

mod common;
mod webcommon;

use std::time::Duration;

use common::{HALL, Rig, board_id, key_of, now_ms};
use hallclock::intake::auth::envelope;
use hallclock::web::AppState;
use serde_json::{Value, json};
use webcommon::{PASSWORD, http, login};

/// `command` with `ts`, signed by the chief arbiter for `topic`: what a client sends,
/// and sends again with a later `ts` when it retries.
fn signed_at(topic: &str, command: &Value, ts: i64) -> Vec<u8> {
    let mut c = command.clone();
    c["ts"] = Value::from(ts);
    envelope("chief", &key_of("chief"), topic, &c.to_string())
}

/// The next response on `topic` to `transaction` (each response is taken once).
async fn response(rig: &mut Rig, topic: &str, transaction: &str) -> Value {
    rig.watcher
        .wait(&format!("response {transaction} on {topic}"), |m| {
            m.topic == topic && m.json()["transaction"] == transaction
        })
        .await
        .json()
}

/// How many events of `kind` `board` has published so far.
fn events(rig: &mut Rig, board: &str, kind: &str) -> usize {
    let topic = format!("hallclock/{HALL}/board/{board}/event");
    rig.watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic && m.json()["event"] == kind)
        .count()
}

/// A command answered after the ones before it: what they published has arrived.
async fn barrier(rig: &mut Rig, board: &str) {
    let r = rig
        .board_command(board, json!({"action": "present", "side": "white"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_signed_retry_gets_the_first_reply_and_is_applied_once() {
    let mut rig = Rig::start("resigned-retry", 1).await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let b = board_id(1);
    let set = rig.topic(&format!("board/{b}/set"));
    let resp = rig.topic(&format!("board/{b}/response"));

    // A board command; its reply is lost, so the client signs it again a second later.
    let add = json!({"transaction": "retry-1", "action": "add_time", "side": "black",
                     "delta_ms": 30_000, "reason": "7.5.5"});
    let t0 = now_ms();
    rig.watcher.publish(&set, &signed_at(&set, &add, t0)).await;
    let first = response(&mut rig, &resp, "retry-1").await;
    assert_eq!(first["status"], "ok", "{first}");
    rig.watcher
        .publish(&set, &signed_at(&set, &add, t0 + 1000))
        .await;
    let again = response(&mut rig, &resp, "retry-1").await;
    assert_eq!(again, first, "a re-signed retry gets the first reply");
    // The same fields in another order, signed later still: the same command.
    let reordered = format!(
        r#"{{"reason":"7.5.5","delta_ms":30000,"side":"black","action":"add_time","transaction":"retry-1","ts":{}}}"#,
        t0 + 2000
    );
    rig.watcher
        .publish(&set, &envelope("chief", &key_of("chief"), &set, &reordered))
        .await;
    let third = response(&mut rig, &resp, "retry-1").await;
    assert_eq!(third, first, "key order is not a different command");
    // Another command under the used transaction is a replay, whatever its `ts`.
    let other = json!({"transaction": "retry-1", "action": "add_time", "side": "black",
                       "delta_ms": 60_000, "reason": "7.5.5"});
    rig.watcher
        .publish(&set, &signed_at(&set, &other, t0 + 3000))
        .await;
    let replayed = response(&mut rig, &resp, "retry-1").await;
    assert_eq!(replayed["error"], "replayed", "{replayed}");
    barrier(&mut rig, &b).await;
    assert_eq!(events(&mut rig, &b, "time_added"), 1, "+30 s once");

    // The hall's door takes the same path: a hall-wide pause, retried re-signed.
    let hall_set = rig.topic("set");
    let hall_resp = rig.topic("response");
    let pause = json!({"transaction": "retry-2", "action": "pause", "reason": "light failure"});
    let t1 = now_ms();
    rig.watcher
        .publish(&hall_set, &signed_at(&hall_set, &pause, t1))
        .await;
    let first = response(&mut rig, &hall_resp, "retry-2").await;
    assert_eq!(first["status"], "ok", "{first}");
    rig.watcher
        .publish(&hall_set, &signed_at(&hall_set, &pause, t1 + 1500))
        .await;
    let again = response(&mut rig, &hall_resp, "retry-2").await;
    assert_eq!(
        again, first,
        "the hall's first reply, not a second pause's refusal"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(events(&mut rig, &b, "paused"), 1, "paused once");
    rig.stop().await;
}

/// A `start_round` whose TRF does not read, with its transaction.
fn bad_trf_round(transaction: &str) -> Value {
    json!({"transaction": transaction, "action": "start_round", "round": 1,
           "start": now_ms() + 60_000, "trf": "012 not a tournament report\n001 nonsense"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_start_round_answers_its_resend() {
    let mut rig = Rig::start("refused-resend", 1).await;
    let set = rig.topic("set");
    let resp = rig.topic("response");
    // Byte for byte the same twice, as a QoS 1 redelivery is.
    let bytes = signed_at(&set, &bad_trf_round("trf-1"), now_ms());
    rig.watcher.publish(&set, &bytes).await;
    let first = response(&mut rig, &resp, "trf-1").await;
    assert_eq!(first["error"], "bad_value", "{first}");
    assert!(
        first["reason"].as_str().unwrap_or("").starts_with("trf: "),
        "the TRF's own refusal: {first}"
    );
    rig.watcher.publish(&set, &bytes).await;
    let again = response(&mut rig, &resp, "trf-1").await;
    assert_eq!(again, first, "the resend is answered with the refusal");
    // And answered again after a restart: the refusal was journaled as the answer.
    rig.restart_daemon().await;
    rig.watcher.publish(&set, &bytes).await;
    let after = response(&mut rig, &resp, "trf-1").await;
    assert_eq!(after, first);
    // Nothing was started.
    let r = rig.start_round(1, "600", 1000, json!({})).await;
    assert_eq!(r["status"], "ok", "a round still starts: {r}");
    rig.stop().await;
}

/// The rig's hall on a dashboard of its own.
async fn dashboard(rig: &Rig) -> hallclock::web::RunningWeb {
    let state = AppState::for_hall(
        HALL,
        rig.hall.as_ref().expect("the daemon runs"),
        webcommon::accounts(),
        false,
    );
    webcommon::serve(state).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_dashboard_request_is_applied_once_and_its_reply_is_on_mqtt_too() {
    let mut rig = Rig::start("web-once", 1).await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let web = dashboard(&rig).await;
    let b = board_id(1);
    let (status, cookie, csrf) = login(web.addr, "chief", PASSWORD).await;
    assert_eq!(status, 200);
    let headers = [
        ("Cookie", cookie.as_str()),
        ("x-csrf-token", csrf.as_str()),
        ("Content-Type", "application/json"),
    ];
    let path = format!("/api/board/{b}/command");
    let body = json!({"transaction": "web-once-1", "action": "add_time", "side": "white",
                      "delta_ms": 30_000, "reason": "7.5.5"})
    .to_string();
    let (s1, _, first) = http(web.addr, "POST", &path, &headers, &body).await;
    assert_eq!(s1, 200, "{first}");
    let (s2, _, again) = http(web.addr, "POST", &path, &headers, &body).await;
    assert_eq!((s2, &again), (200, &first), "the first reply again");
    // The reply is on the board's response topic as well, for a program that watches it.
    let resp = rig.topic(&format!("board/{b}/response"));
    let on_mqtt = response(&mut rig, &resp, "web-once-1").await;
    assert_eq!(
        on_mqtt,
        serde_json::from_str::<Value>(&first).unwrap_or_default()
    );
    barrier(&mut rig, &b).await;
    assert_eq!(events(&mut rig, &b, "time_added"), 1, "+30 s once");

    // A refused round from the round page, sent twice: answered twice, the same.
    let body = bad_trf_round("web-trf-1").to_string();
    let (s1, _, first) = http(web.addr, "POST", "/api/hall/command", &headers, &body).await;
    assert_ne!(s1, 200, "{first}");
    let (s2, _, again) = http(web.addr, "POST", "/api/hall/command", &headers, &body).await;
    assert_eq!((s2, &again), (s1, &first), "the refusal, not a wait");
    rig.stop().await;
}

/// Issue 23: beside another online node, the dashboard's hall command goes to every node
/// (signed as the logged-in arbiter, on the hall's `set` topic) and its answer is every
/// node's: `ok` when all said ok, else the partial failure in words (which node, which
/// boards); a resend gets the same answer and applies nothing twice. The other node here
/// is played by the test: its retained status, and its answers on `response`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_another_node_the_dashboards_hall_command_is_every_nodes() {
    let mut rig = Rig::start("web-nodes", 1).await;
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let web = dashboard(&rig).await;
    let (status, cookie, csrf) = login(web.addr, "chief", PASSWORD).await;
    assert_eq!(status, 200);
    let headers = [
        ("Cookie", cookie.as_str()),
        ("x-csrf-token", csrf.as_str()),
        ("Content-Type", "application/json"),
    ];
    // A second hall server comes online. It also claims board-001, so this node's
    // `board_claimed_twice` alert shows when the daemon has read the peer's status.
    let b = board_id(1);
    let peer = |state: &str| {
        json!({"node": "node-b", "state": state, "boards": [b.clone(), "board-009"],
               "version": "0.1.0", "boot": 1})
        .to_string()
    };
    let topic = rig.topic("node/node-b/status");
    let claimed = rig.topic(&format!("alert/{b}-claimed-twice-{}", common::NODE));
    rig.watcher
        .publish_retained(&topic, peer("online").as_bytes())
        .await;
    rig.watcher
        .wait("the daemon sees the other node", |m| {
            m.topic == claimed && m.raised()
        })
        .await;
    let set = rig.topic("set");
    let response = rig.topic("response");
    let addr = web.addr;
    let post = |body: String| {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        tokio::spawn(async move {
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            http(addr, "POST", "/api/hall/command", &h, &body).await
        })
    };
    // node-b answers `outcome` for `tx` once the command reaches the hall's topic.
    async fn node_b_answers(rig: &mut Rig, set: &str, response: &str, tx: &str, outcome: Value) {
        let sent = rig
            .watcher
            .wait(&format!("{tx} signed on the hall's set topic"), |m| {
                m.topic == set && m.text().contains(tx)
            })
            .await;
        let envelope = sent.json();
        assert!(envelope["sig"].is_string(), "signed: {envelope}");
        let mut answer = json!({"transaction": tx, "action": "pause", "node": "node-b",
                                "boards": ["board-009"]});
        if let (Value::Object(a), Value::Object(o)) = (&mut answer, outcome) {
            a.extend(o);
        }
        rig.watcher
            .publish(response, answer.to_string().as_bytes())
            .await;
    }

    let body =
        json!({"transaction": "web-nodes-1", "action": "pause", "reason": "noise"}).to_string();
    let asked = post(body.clone());
    node_b_answers(
        &mut rig,
        &set,
        &response,
        "web-nodes-1",
        json!({"status": "ok"}),
    )
    .await;
    let (s1, _, first) = asked.await.expect("joined");
    assert_eq!(s1, 200, "{first}");
    let v: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(v["boards"], json!([b.clone(), "board-009"]), "{v}");
    let nodes: Vec<&str> = v["nodes"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n["node"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(nodes, ["node-b", common::NODE], "{v}");
    rig.watcher
        .state(&b, "paused by the forwarded command", |s| {
            s["phase"] == "paused"
        })
        .await;
    // The same transaction again (a double click): every node's first answer, once more.
    let asked = post(body);
    node_b_answers(
        &mut rig,
        &set,
        &response,
        "web-nodes-1",
        json!({"status": "ok"}),
    )
    .await;
    let (s2, _, again) = asked.await.expect("joined");
    assert_eq!((s2, &again), (s1, &first), "the same answer");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let paused = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic.ends_with("/event") && m.json()["event"] == "paused")
        .count();
    assert_eq!(paused, 1, "paused once");

    // A partial failure: this node resumes, node-b refuses; the answer says who and where.
    let body = json!({"transaction": "web-nodes-2", "action": "resume"}).to_string();
    let asked = post(body);
    node_b_answers(
        &mut rig,
        &set,
        &response,
        "web-nodes-2",
        json!({"status": "error", "error": "not_paused", "reason": "board-009 is not paused"}),
    )
    .await;
    let (s3, _, text) = asked.await.expect("joined");
    assert_eq!(s3, 409, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["error"], "not_paused", "{v}");
    let reason = v["reason"].as_str().unwrap_or("");
    assert!(
        reason.starts_with("partial failure")
            && reason.contains(common::NODE)
            && reason.contains("node node-b: not_paused (boards board-009)"),
        "{reason}"
    );
    rig.watcher
        .state(&b, "resumed here", |s| s["phase"] == "running")
        .await;

    // Resume again: no board of either node is paused, and each says ok for none. That
    // is what a node alone refuses (`no_game`), not "done".
    let asked = post(json!({"transaction": "web-nodes-2b", "action": "resume"}).to_string());
    node_b_answers(
        &mut rig,
        &set,
        &response,
        "web-nodes-2b",
        json!({"status": "ok", "boards": []}),
    )
    .await;
    let (s, _, text) = asked.await.expect("joined");
    assert_eq!(s, 404, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["error"], "no_game", "{v}");
    assert_eq!(
        v["reason"],
        format!(
            "no board of any node has a game to resume (node-b, {} applied it to no board)",
            common::NODE
        ),
        "{v}"
    );
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(2), "{v}");

    // The other server goes (its last will): the dashboard commands this node alone again.
    rig.watcher
        .publish_retained(&topic, peer("offline").as_bytes())
        .await;
    rig.watcher
        .wait("the daemon sees the other node go", |m| {
            m.topic == claimed && m.cleared()
        })
        .await;
    let body =
        json!({"transaction": "web-nodes-3", "action": "pause", "reason": "noise"}).to_string();
    let (s4, _, text) = http(web.addr, "POST", "/api/hall/command", &headers, &body).await;
    assert_eq!(s4, 200, "{text}");
    rig.watcher
        .state(&b, "paused", |s| s["phase"] == "paused")
        .await;
    rig.watcher.publish_retained(&topic, b"").await;
    rig.stop().await;
}
