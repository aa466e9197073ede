//! The command intake against a real Mosquitto (issue 11, points 5 and 7): what a client
//! sends cannot take the daemon off the broker, malformed commands get a precise refusal,
//! and a replay goes to the one who asked.

mod common;

use std::time::Duration;

use common::{HALL, Rig, Watcher, board_id, now_ms};
use rand::{Rng, SeedableRng, rngs::StdRng};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::{Value, json};

const MB: usize = 1_000_000;

/// The daemon went offline at some point: its last will, or its own `offline`.
fn went_offline(w: &mut Watcher) -> bool {
    w.drain()
        .iter()
        .any(|m| common::node_state(m, common::NODE).as_deref() == Some("offline"))
}

/// A command of about `size` bytes: valid JSON, its bulk in `reason`.
fn big_command(transaction: &str, size: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"transaction":"{transaction}","arbiter":"IA Big","action":"pause","reason":""#
    );
    let mut v = head.into_bytes();
    v.resize(size, b'x');
    v.extend_from_slice(b"\"}");
    v
}

/// The response on `topic` to `transaction`.
async fn response(w: &mut Watcher, topic: &str, transaction: &str) -> Value {
    w.wait(&format!("response {transaction}"), |m| {
        m.topic == topic && m.json()["transaction"] == transaction
    })
    .await
    .json()
}

/// What a new subscriber finds retained on `topic` (None: nothing within a second).
async fn retained_on(port: u16, topic: &str) -> Option<Vec<u8>> {
    let mut opts = MqttOptions::new(format!("probe-{}", now_ms()), "127.0.0.1", port);
    opts.set_max_packet_size(268_435_455, 1 << 20);
    let (client, mut eventloop) = AsyncClient::new(opts, 16);
    let end = tokio::time::Instant::now() + Duration::from_secs(1);
    let mut subscribed = false;
    loop {
        match tokio::time::timeout_at(end, eventloop.poll()).await {
            Err(_) => return None,
            Ok(Ok(Event::Incoming(Packet::ConnAck(_)))) if !subscribed => {
                subscribed = true;
                client.subscribe(topic, QoS::AtLeastOnce).await.ok()?;
            }
            Ok(Ok(Event::Incoming(Packet::Publish(p)))) if p.retain => {
                return Some(p.payload.to_vec());
            }
            Ok(Ok(_)) => {}
            Ok(Err(_)) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Still answering: a hall command gets its response (no game: `no_game`).
async fn still_answers(rig: &mut Rig) {
    let r = rig.hall_command(json!({"action": "pause"})).await;
    assert_eq!(r["error"], "no_game", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mb_command_plain_or_retained_is_too_large_and_the_daemon_stays_online() {
    let mut rig = Rig::start("too-large", 1).await;
    let set = rig.topic("set");
    let board_set = rig.topic(&format!("board/{}/set", board_id(1)));

    rig.watcher
        .publish(&set, &big_command("big-hall", 5 * MB))
        .await;
    let r = response(
        &mut rig.watcher,
        &format!("hallclock/{HALL}/response"),
        "big-hall",
    )
    .await;
    assert_eq!(r["status"], "error");
    assert_eq!(r["error"], "too_large", "{r}");
    assert_eq!(
        r["reason"],
        "the command is 5000002 bytes; the limit is 1048576 bytes (1 MiB)"
    );

    rig.watcher
        .publish(&board_set, &big_command("big-board", 5 * MB))
        .await;
    let resp = rig.topic(&format!("board/{}/response", board_id(1)));
    let r = response(&mut rig.watcher, &resp, "big-board").await;
    assert_eq!(r["error"], "too_large", "{r}");

    // Retained while the daemon is subscribed: the broker delivers it as a plain message
    // (MQTT 3.1.1), so it is answered once, and the topic is cleared.
    rig.watcher
        .publish_retained(&board_set, &big_command("big-live-retained", 5 * MB))
        .await;
    let r = response(&mut rig.watcher, &resp, "big-live-retained").await;
    assert_eq!(r["error"], "too_large", "{r}");
    rig.watcher
        .wait("the retained command cleared", |m| {
            m.topic == board_set && m.cleared()
        })
        .await;
    assert_eq!(retained_on(rig.broker.port, &board_set).await, None);

    assert!(
        !went_offline(&mut rig.watcher),
        "the daemon dropped off the broker"
    );

    // Retained while the daemon is away (issue 11: it kept the daemon off the broker, 46
    // reconnections in 10 s): delivered at the subscription, ignored, cleared.
    rig.stop().await;
    rig.watcher
        .publish_retained(&board_set, &big_command("big-retained", 5 * MB))
        .await;
    rig.watcher
        .publish_retained(&set, &big_command("big-retained-hall", 5 * MB))
        .await;
    assert!(retained_on(rig.broker.port, &board_set).await.is_some());
    // Only what follows the restart counts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    rig.watcher.drain();
    for m in &mut rig.watcher.seen {
        m.used = true;
    }
    rig.hall = Some(hallclock::hall::start(rig.settings.clone()).expect("the daemon restarts"));
    rig.watcher
        .wait("online again", |m| {
            common::node_state(m, common::NODE).as_deref() == Some("online")
        })
        .await;
    for topic in [&board_set, &set] {
        rig.watcher
            .wait("the retained command cleared", |m| {
                m.topic == *topic && m.cleared()
            })
            .await;
        assert_eq!(retained_on(rig.broker.port, topic).await, None);
    }
    // Mark the offline of the stop above as seen: only what follows counts.
    let seen_before = rig.watcher.drain().len();
    still_answers(&mut rig).await;
    let status_msgs: Vec<String> = rig.watcher.drain()[seen_before..]
        .iter()
        .filter_map(|m| common::node_state(m, common::NODE))
        .collect();
    assert!(
        !status_msgs.iter().any(|s| s == "offline"),
        "the daemon dropped off the broker after its restart: {status_msgs:?}"
    );
    assert!(
        !rig.watcher
            .drain()
            .iter()
            .filter(|m| m.topic.ends_with("/response"))
            .any(|m| m.json()["transaction"] == "big-retained"
                || m.json()["transaction"] == "big-retained-hall"),
        "a command delivered as retained was answered"
    );
    rig.stop().await;
}

/// Random bytes or random JSON, seeded, mostly small, some up to 10 MB.
fn fuzz_payload(rng: &mut StdRng) -> Vec<u8> {
    let size = match rng.gen_range(0..20) {
        0 => rng.gen_range(2 * MB..=10 * MB),
        1..=2 => rng.gen_range(900_000..1_200_000),
        _ => rng.gen_range(0..4096),
    };
    if rng.gen_bool(0.4) {
        let mut v = vec![0u8; size];
        rng.fill(&mut v[..]);
        return v;
    }
    let actions = [
        "pause",
        "resume",
        "start_round",
        "replay",
        "add_time",
        "set_result",
        "seal",
        "open_envelope",
        "set_time",
        "adjourn",
        "\u{1b}[31m",
        "",
    ];
    let mut obj = serde_json::Map::new();
    for _ in 0..rng.gen_range(0..8) {
        let key = match rng.gen_range(0..6) {
            0 => "transaction".to_string(),
            1 => "action".to_string(),
            2 => "arbiter".to_string(),
            3 => "start".to_string(),
            _ => format!("k{}", rng.gen_range(0..100)),
        };
        let value = match rng.gen_range(0..7) {
            0 => json!(actions[rng.gen_range(0..actions.len())]),
            1 => json!(rng.r#gen::<i64>()),
            2 => json!(null),
            3 => json!([1, "two", {"three": 3}]),
            4 => json!({"board": board_id(1), "white": "\n", "black": ""}),
            5 => json!(rng.r#gen::<f64>()),
            _ => json!("x\ny\u{1b}[0m"),
        };
        obj.insert(key, value);
    }
    let mut v = serde_json::to_vec(&Value::Object(obj)).unwrap_or_default();
    if v.len() < size {
        // Padding inside the object, so that large payloads stay JSON.
        v.pop();
        let pad = format!(r#"{}"pad":""#, if v.len() > 1 { "," } else { "" });
        v.extend_from_slice(pad.as_bytes());
        v.resize(size.max(v.len()), b'p');
        v.extend_from_slice(b"\"}");
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fuzz_of_the_intake_leaves_the_daemon_online_and_answering() {
    let mut rig = Rig::start("intake-fuzz", 1).await;
    let seed = 11;
    let mut rng = StdRng::seed_from_u64(seed);
    let topics = [
        rig.topic("set"),
        rig.topic("ask"),
        rig.topic(&format!("board/{}/set", board_id(1))),
        rig.topic("board/no-such-board/set"),
    ];
    let mut retained_topics = std::collections::BTreeSet::new();
    for _ in 0..80 {
        let payload = fuzz_payload(&mut rng);
        let topic = &topics[rng.gen_range(0..topics.len())];
        if rng.gen_bool(0.2) {
            rig.watcher.publish_retained(topic, &payload).await;
            if !payload.is_empty() {
                retained_topics.insert(topic.clone());
            }
        } else {
            rig.watcher.publish(topic, &payload).await;
        }
    }
    // Every message above was delivered before this one, and is handled in order.
    still_answers(&mut rig).await;
    assert!(
        !went_offline(&mut rig.watcher),
        "seed {seed}: the daemon dropped off the broker"
    );
    for topic in &retained_topics {
        assert_eq!(
            retained_on(rig.broker.port, topic).await,
            None,
            "seed {seed}: a retained command stays on {topic}"
        );
    }
    let s = rig.watcher.latest_state(&board_id(1));
    assert!(s.is_object(), "the board still has its state: {s}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_keys_and_far_instants_are_refused_and_change_nothing() {
    let mut rig = Rig::start("door-refusals", 1).await;
    let set = rig.topic("set");
    let resp = rig.topic("response");
    // As sent: serde_json would keep the second `start` silently.
    let dup = format!(
        r#"{{"transaction":"dup-1","action":"start_round","round":1,"start":{},"start":{},"pairings":[{{"board":"{}","white":"A","black":"B"}}],"ts":{}}}"#,
        now_ms(),
        now_ms() + 60_000,
        board_id(1),
        now_ms()
    );
    // Signed as sent, so the signature is good and the parser sees the duplicate.
    let signed = hallclock::intake::auth::envelope("chief", &common::key_of("chief"), &set, &dup);
    rig.watcher.publish(&set, &signed).await;
    let r = response(&mut rig.watcher, &resp, "dup-1").await;
    assert_eq!(r["error"], "duplicate_key", "{r}");
    assert_eq!(
        r["reason"],
        "start: the key appears twice; give each key once"
    );

    let pairings = json!([{"board": board_id(1), "white": "A", "black": "B"}]);
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 1, "start": i64::MAX, "pairings": pairings}),
        )
        .await;
    assert_eq!(r["error"], "out_of_range", "{r}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("start: 9223372036854775807 ms is out of range: allowed from ")
            && reason.ends_with("(1 day back, 14 days ahead)"),
        "{reason}"
    );
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 1, "start": "1999-01-01T00:00:00Z", "pairings": pairings}))
        .await;
    assert_eq!(r["error"], "out_of_range", "{r}");
    let r = rig
        .board_command(
            &board_id(1),
            json!({"action": "set_session_end", "end": now_ms() + 30 * 86_400_000i64}),
        )
        .await;
    assert_eq!(r["error"], "out_of_range", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("end: "),
        "{r}"
    );
    // Nothing was started by any of them.
    let info = rig
        .watcher
        .wait("info", |m| {
            m.topic == format!("hallclock/{HALL}/node/{}/info", common::NODE)
        })
        .await
        .json();
    assert_eq!(info["round"], Value::Null, "{info}");
    // Within the bounds, the same round starts.
    let r = rig.start_round(1, "600", 1000, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewers_replay_goes_to_the_asker_not_to_the_live_event_topic() {
    let mut rig = Rig::start("replay-asker", 1).await;
    let b = board_id(1);
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let live = format!("hallclock/{HALL}/board/{b}/event");
    let first = rig
        .watcher
        .wait("event 1", |m| m.topic == live && m.json()["seq"] == 1)
        .await
        .json();
    let reply = format!("hallclock/{HALL}/reply/viewer-7");
    // Settle: what the start published has arrived.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let live_before = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic == live)
        .count();

    // On `ask`, where a viewer may write (it may not write `set`): signed with the viewer
    // account's key like any command (docs/SECURITY.md). Unsigned, it is refused and
    // nothing is sent: `ask` used to take it and believe its `arbiter` (issue 41).
    let ask = rig.topic("ask");
    rig.watcher
        .publish(
            &ask,
            json!({"transaction": "rp-0", "arbiter": "viewer", "action": "replay",
                   "board": b, "from_seq": 1, "reply_to": "viewer-7"})
            .to_string()
            .as_bytes(),
        )
        .await;
    let r = response(
        &mut rig.watcher,
        &format!("hallclock/{HALL}/response"),
        "rp-0",
    )
    .await;
    assert_eq!(r["error"], "unauthenticated", "{r}");
    let request = json!({"transaction": "rp-1", "action": "replay",
                   "board": b, "from_seq": 1, "reply_to": "viewer-7"});
    rig.watcher
        .publish(&ask, &common::signed_as("viewer", &ask, &request))
        .await;
    let r = response(
        &mut rig.watcher,
        &format!("hallclock/{HALL}/response"),
        "rp-1",
    )
    .await;
    assert_eq!(r["status"], "ok", "{r}");
    let replayed = rig
        .watcher
        .wait("the replayed event 1", |m| {
            m.topic == reply && m.json()["seq"] == 1
        })
        .await
        .json();
    assert_eq!(replayed, first, "replayed exactly as first published");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let live_after = rig
        .watcher
        .drain()
        .iter()
        .filter(|m| m.topic == live)
        .count();
    assert_eq!(
        live_after, live_before,
        "the replay reached every subscriber of the live event topic"
    );

    // `ask` reads only: a command there is refused and does nothing.
    let command = json!({"transaction": "rp-2", "action": "pause"});
    rig.watcher
        .publish(&ask, &common::signed_as("viewer", &ask, &command))
        .await;
    let r = response(
        &mut rig.watcher,
        &format!("hallclock/{HALL}/response"),
        "rp-2",
    )
    .await;
    assert_eq!(r["error"], "not_a_request", "{r}");
    // A reply topic must be one topic level.
    let r = rig
        .hall_command(json!({"action": "replay", "board": b, "reply_to": "a/#"}))
        .await;
    assert_eq!(r["error"], "bad_value", "{r}");
    let s = rig.watcher.latest_state(&b);
    assert_ne!(s["phase"], "paused", "{s}");
    rig.stop().await;
}
