//! The node's connection under a burst: thousands of retained topics waiting when the
//! broker comes (a 5000-board restart, a broker back after an outage) reach it whole,
//! newest payload each, on one connection, through the publication window
//! (src/mqtt/window.rs). The window came after a 5000-board restart stalled on a rumqttc
//! packet-id collision; these tests do not reproduce that stall (they pass without the
//! window too): they hold the window to what it must not break. Real Mosquitto on a
//! free port; the node's connection task as the daemon runs it.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{Broker, Watcher, mqtt_settings};
use hallclock::mqtt::Topics;
use hallclock::mqtt::client::BrokerState;
use hallclock::mqtt::payload::{NodeState, NodeStatusPayload};
use hallclock::rules::Millis;
use hallclock::timebase::Timebase;
use tokio::sync::mpsc;

const BOARDS: usize = 4000;

/// The watcher subscribes to everything at QoS 1 and gets 12,000 retained messages at
/// once: Mosquitto's default queue of 1000 QoS 1 messages per client (beyond 20 in
/// flight) would drop the rest. A limit of the watcher's subscription, not of the node
/// (docs/OPERATIONS.md, "A hall on several servers", says the same of halls that size).
const UNQUEUED: &str = "max_queued_messages 0\n";

/// A node connected to a broker that holds its previous run's copies (which it receives
/// again at its subscriptions) publishes every board's state twice in one go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_retained_topics_while_the_broker_sends_the_old_copies_arrives_whole() {
    let broker = Broker::start_with("burst-live", UNQUEUED).await;
    let port = broker.port;
    let topics = Topics::new("burst");
    let boards: Vec<String> = (1..=BOARDS).map(|i| format!("b{i:04}")).collect();
    let mut copies = Vec::new();
    for b in &boards {
        let old = format!("{{\"board\":\"{b}\",\"online\":true,\"run\":\"old\"}}");
        copies.push((topics.state(b), old.into_bytes()));
        copies.push((topics.availability(b), b"online".to_vec()));
        copies.push((topics.pgn(b), vec![b'x'; 2000]));
    }
    previous_run(port, copies).await;
    let (publisher, mut state) = node(port, &topics, &boards);
    connected(&mut state).await;
    publish_twice(&publisher, &topics, &boards);
    arrives_whole(port, &topics, &boards, &state).await;
}

/// The node's topics pile up while the broker is down: they all go at its connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_retained_topics_at_connection_arrives_whole_on_one_connection() {
    let mut broker = Broker::start_with("burst", UNQUEUED).await;
    let port = broker.port;
    broker.kill();
    let topics = Topics::new("burst");
    let boards: Vec<String> = (1..=BOARDS).map(|i| format!("b{i:04}")).collect();
    let (publisher, mut state) = node(port, &topics, &boards);
    publish_twice(&publisher, &topics, &boards);
    broker.start_again().await;
    connected(&mut state).await;
    arrives_whole(port, &topics, &boards, &state).await;
}

/// Wait for the node's connection; from then on `state` sees only later changes.
async fn connected(state: &mut tokio::sync::watch::Receiver<BrokerState>) {
    tokio::time::timeout(
        Duration::from_secs(20),
        state.wait_for(|s| *s == BrokerState::Connected),
    )
    .await
    .expect("connected within 20 s")
    .expect("the connection task runs");
    state.mark_unchanged();
}

/// A previous run's retained copies on the broker, by a client that only publishes.
async fn previous_run(port: u16, copies: Vec<(String, Vec<u8>)>) {
    let mut opts = rumqttc::MqttOptions::new("burst-previous", "127.0.0.1", port);
    opts.set_keep_alive(Duration::from_secs(5));
    let (client, mut eventloop) = rumqttc::AsyncClient::new(opts, 64);
    let n = copies.len();
    let feeder = tokio::spawn(async move {
        for (topic, payload) in copies {
            let _ = client
                .publish(topic, rumqttc::QoS::AtLeastOnce, true, payload)
                .await;
        }
    });
    let mut acked = 0;
    while acked < n {
        match tokio::time::timeout(Duration::from_secs(20), eventloop.poll()).await {
            Ok(Ok(rumqttc::Event::Incoming(rumqttc::Packet::PubAck(_)))) => acked += 1,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("the previous run's copies: {e}"),
            Err(_) => panic!("the previous run's copies: {acked} of {n} acknowledged in 20 s"),
        }
    }
    let _ = feeder.await;
}

fn node(
    port: u16,
    topics: &Topics,
    boards: &[String],
) -> (
    hallclock::mqtt::Publisher,
    tokio::sync::watch::Receiver<BrokerState>,
) {
    let birth = NodeStatusPayload {
        node: "n1".into(),
        state: NodeState::Online,
        boards: boards.to_vec(),
        version: "test".into(),
        boot: Millis(1),
        defaults: None,
        instance: None,
    };
    let (incoming, mut commands) = mpsc::channel(256);
    tokio::spawn(async move { while commands.recv().await.is_some() {} });
    let (publisher, _task) = hallclock::mqtt::client::spawn(
        mqtt_settings(port, "burst-n1"),
        topics.clone(),
        birth,
        incoming,
        Timebase::start(),
        None,
    )
    .expect("the connection task");
    let state = publisher.broker_state();
    (publisher, state)
}

/// Each board offline, then online: only the second is the board's state.
fn publish_twice(publisher: &hallclock::mqtt::Publisher, topics: &Topics, boards: &[String]) {
    for b in boards {
        for online in [false, true] {
            let state = format!("{{\"board\":\"{b}\",\"online\":{online}}}");
            publisher.retained(topics.state(b), state.into_bytes());
            let availability = if online { "online" } else { "offline" };
            publisher.retained(topics.availability(b), availability.into());
        }
    }
}

/// Every board's newest state and availability reach a fresh subscriber within 8 s, and
/// the connection did not change meanwhile.
async fn arrives_whole(
    port: u16,
    topics: &Topics,
    boards: &[String],
    state: &tokio::sync::watch::Receiver<BrokerState>,
) {
    let mut w = Watcher::connect(port, "burst-watcher").await;
    let mut last: HashMap<String, String> = HashMap::new();
    let online = |last: &HashMap<String, String>| {
        boards
            .iter()
            .filter(|b| {
                last.get(&topics.state(b))
                    .is_some_and(|p| p == &format!("{{\"board\":\"{b}\",\"online\":true}}"))
            })
            .count()
    };
    // Well within the test's two keep-alives of 5 s (a stall's length).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(8);
    while online(&last) < BOARDS && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        w.drain();
        for m in w.seen.drain(..) {
            last.insert(m.topic.clone(), m.text());
        }
    }
    assert_eq!(
        online(&last),
        BOARDS,
        "every board's newest state on the broker within 8 s"
    );
    let availabilities = boards
        .iter()
        .filter(|b| last.get(&topics.availability(b)).map(String::as_str) == Some("online"))
        .count();
    assert_eq!(availabilities, BOARDS, "every board's newest availability");
    assert!(
        !state.has_changed().unwrap_or(true),
        "the connection changed during the burst: {:?}",
        *state.borrow()
    );
}
