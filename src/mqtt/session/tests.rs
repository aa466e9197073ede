//! The connection's policy with time as a value and rumqttc's client replaced by a
//! recorder: what is subscribed and published, in which order, and when.

use std::time::{Duration, Instant};

use rumqttc::QoS;

use super::*;
use crate::mqtt::owned::GAP;
use crate::mqtt::payload::{AlertPayload, NodeState, NodeStatusPayload, Topics};
use crate::mqtt::window::WINDOW;

/// One request as rumqttc's client would have been asked it.
#[derive(Debug, Clone, PartialEq)]
enum Req {
    Publish {
        topic: String,
        retain: bool,
        payload: Vec<u8>,
    },
    Subscribe(String, QoS),
    Unsubscribe(String),
    Disconnect,
}

/// rumqttc's client, recorded; it refuses subscriptions while `refuse_subscribe`.
#[derive(Debug, Default)]
struct Recorder {
    log: Vec<Req>,
    refuse_subscribe: bool,
}

impl Requests for Recorder {
    fn publish(&mut self, topic: String, qos: QoS, retain: bool, payload: Vec<u8>) -> bool {
        assert_eq!(qos, QoS::AtLeastOnce, "every publication at QoS 1");
        self.log.push(Req::Publish {
            topic,
            retain,
            payload,
        });
        true
    }

    fn subscribe(&mut self, filter: String, qos: QoS) -> bool {
        if self.refuse_subscribe {
            return false;
        }
        self.log.push(Req::Subscribe(filter, qos));
        true
    }

    fn unsubscribe(&mut self, filter: String) {
        self.log.push(Req::Unsubscribe(filter));
    }

    fn disconnect(&mut self) {
        self.log.push(Req::Disconnect);
    }
}

fn topics() -> Topics {
    Topics::new("h")
}

fn birth(boards: &[&str]) -> NodeStatusPayload {
    NodeStatusPayload {
        node: "n1".into(),
        state: NodeState::Online,
        boards: boards.iter().map(|b| b.to_string()).collect(),
        version: "0".into(),
        boot: Millis(1),
        defaults: None,
        instance: None,
    }
}

fn session(max_queued: usize) -> Session<Recorder> {
    let t = topics();
    let node = NodeTopic::new(&t, &birth(&["b1", "b2"]), "me".into());
    Session::new(Recorder::default(), t, node, max_queued)
}

/// The clock of a test: `ms(n)` is n ms after its start.
struct Clock(Instant);

impl Clock {
    fn new() -> Clock {
        Clock(Instant::now())
    }

    fn ms(&self, n: u64) -> Now {
        Now {
            at: self.0 + Duration::from_millis(n),
            hall: Millis(1_000_000 + n as i64),
        }
    }
}

/// The requests since the last call.
fn taken(s: &mut Session<Recorder>) -> Vec<Req> {
    std::mem::take(&mut s.requests().log)
}

fn actions(s: &mut Session<Recorder>) -> Vec<Action> {
    std::iter::from_fn(|| s.poll_action()).collect()
}

/// The topics published, in order.
fn published(reqs: &[Req]) -> Vec<(String, bool, Vec<u8>)> {
    reqs.iter()
        .filter_map(|r| match r {
            Req::Publish {
                topic,
                retain,
                payload,
            } => Some((topic.clone(), *retain, payload.clone())),
            _ => None,
        })
        .collect()
}

fn subscribed(reqs: &[Req]) -> Vec<String> {
    reqs.iter()
        .filter_map(|r| match r {
            Req::Subscribe(f, _) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

fn board_filters(t: &Topics) -> Vec<String> {
    BoardTopic::ALL
        .iter()
        .map(|k| t.board_kind_filter(*k))
        .collect()
}

fn live(topic: &str, payload: &[u8]) -> rumqttc::Publish {
    rumqttc::Publish::new(topic, QoS::AtLeastOnce, payload.to_vec())
}

fn kept(topic: &str, payload: &[u8]) -> rumqttc::Publish {
    let mut p = live(topic, payload);
    p.retain = true;
    p
}

#[test]
fn subscriptions_are_taken_at_the_connack_and_the_board_topics_after_the_republication() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    assert!(taken(&mut s).is_empty(), "nothing before a connection");
    s.handle_connack(clock.ms(0));
    let reqs = taken(&mut s);
    let subs = subscribed(&reqs);
    let mut want = vec![
        crate::mqtt::twin::VERSION_TOPIC.to_string(),
        t.hall_set(),
        t.board_set_filter(),
        t.ask(),
        t.hall_response(),
        t.board_response_filter(),
        t.node_status_filter(),
        t.node_info_filter(),
        t.node_clock_filter(),
        t.node_announce("n1"),
        t.node_session("n1"),
        t.alert("+"),
    ];
    want.extend(board_filters(&t));
    assert_eq!(subs, want);
    // The board topics after our status went out.
    let status_at = reqs
        .iter()
        .position(|r| matches!(r, Req::Publish { topic, .. } if *topic == t.node_status("n1")));
    let boards_at = reqs
        .iter()
        .position(|r| matches!(r, Req::Subscribe(f, _) if *f == board_filters(&t)[0]));
    assert!(status_at < boards_at, "{reqs:?}");
    let a = actions(&mut s);
    assert!(matches!(a[0], Action::Attempted), "{a:?}");
    assert!(
        matches!(&a[1], Action::Broker(BrokerState::Connected)),
        "{a:?}"
    );
}

#[test]
fn the_board_topics_wait_for_a_republication_larger_than_the_window() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    for i in 0..WINDOW + 10 {
        s.retained(t.state(&format!("x{i}")), b"{}".to_vec());
    }
    assert!(taken(&mut s).is_empty(), "offline: kept, not published");
    s.handle_connack(clock.ms(0));
    let reqs = taken(&mut s);
    assert_eq!(published(&reqs).len(), WINDOW);
    assert!(!subscribed(&reqs).contains(&board_filters(&t)[0]));
    assert!(s.wants_tick());
    // Each acknowledgement lets one more go (the 10 states and our status, which went
    // first); the last one then brings the subscription.
    for _ in 0..10 {
        s.handle_puback();
    }
    assert!(subscribed(&taken(&mut s)).is_empty(), "one still waits");
    s.handle_puback();
    let reqs = taken(&mut s);
    assert_eq!(published(&reqs).len(), 1);
    assert_eq!(subscribed(&reqs), board_filters(&t));
    s.handle_puback();
    assert!(taken(&mut s).is_empty(), "subscribed once a connection");
    assert!(!s.wants_tick());
}

#[test]
fn a_refused_board_subscription_is_tried_again_at_the_next_puback() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.requests().refuse_subscribe = true;
    s.handle_connack(clock.ms(0));
    assert!(subscribed(&taken(&mut s)).is_empty());
    s.requests().refuse_subscribe = false;
    s.handle_puback();
    assert_eq!(subscribed(&taken(&mut s)), board_filters(&t));
}

#[test]
fn every_connack_republishes_the_newest_retained_payloads_in_order() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.handle_connack(clock.ms(0));
    s.retained(t.pgn("b1"), b"1. e4".to_vec());
    s.retained(t.state("b1"), b"s1".to_vec());
    s.retained(t.availability("b1"), b"online".to_vec());
    taken(&mut s);
    s.handle_lost("unreachable".into(), clock.ms(100));
    let a = actions(&mut s);
    assert!(
        a.iter()
            .any(|a| matches!(a, Action::Broker(BrokerState::Trouble(w)) if w == "unreachable")),
        "{a:?}"
    );
    // Offline: remembered, newest payload only, nothing handed to rumqttc.
    s.retained(t.state("b1"), b"s2".to_vec());
    s.retained(t.state("b1"), b"s3".to_vec());
    assert!(taken(&mut s).is_empty());
    s.handle_connack(clock.ms(5_000));
    let order: Vec<(String, Vec<u8>)> = published(&taken(&mut s))
        .into_iter()
        .filter(|(_, retain, _)| *retain)
        .map(|(topic, _, payload)| (topic, payload))
        .collect();
    let status = order[0].clone();
    assert_eq!(status.0, t.node_status("n1"));
    let mine: NodeStatusPayload = serde_json::from_slice(&status.1).expect("status");
    assert_eq!(mine.state, NodeState::Online);
    assert_eq!(mine.instance.as_deref(), Some("me"));
    assert_eq!(
        order[1..],
        [
            (t.availability("b1"), b"online".to_vec()),
            (t.state("b1"), b"s3".to_vec()),
            (t.pgn("b1"), b"1. e4".to_vec()),
        ]
    );
}

#[test]
fn a_beacon_is_dropped_offline_and_behind_queued_messages() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.beacon(t.node_clock("n1"), b"t0".to_vec());
    s.message(t.event("b1"), b"e1".to_vec());
    s.handle_connack(clock.ms(0));
    let first: Vec<String> = published(&taken(&mut s))
        .into_iter()
        .map(|(topic, _, _)| topic)
        .collect();
    assert_eq!(first, [t.node_status("n1"), t.event("b1")], "no beacon");
    s.beacon(t.node_clock("n1"), b"t1".to_vec());
    assert_eq!(
        published(&taken(&mut s)),
        [(t.node_clock("n1"), false, b"t1".to_vec())]
    );
    // The window full: a message waits, and a beacon behind it is dropped.
    for _ in 0..WINDOW {
        s.message(t.event("b1"), b"e".to_vec());
    }
    taken(&mut s);
    s.beacon(t.node_clock("n1"), b"t2".to_vec());
    s.handle_puback();
    s.handle_puback();
    let after: Vec<String> = published(&taken(&mut s))
        .into_iter()
        .map(|(topic, _, _)| topic)
        .collect();
    assert!(!after.contains(&t.node_clock("n1")), "{after:?}");
}

/// The payloads published on `topic`, in order.
fn payloads_on<'a>(published: &'a [(String, bool, Vec<u8>)], topic: &str) -> Vec<&'a Vec<u8>> {
    published
        .iter()
        .filter(|(t, _, _)| t == topic)
        .map(|(_, _, p)| p)
        .collect()
}

#[test]
fn the_queue_drops_its_oldest_beyond_max_queued_and_says_so_at_the_next_connection() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(3);
    for i in 1..=5 {
        s.message(t.event("b1"), format!("e{i}").into_bytes());
    }
    s.handle_connack(clock.ms(0));
    let reqs = published(&taken(&mut s));
    let alert_topic = t.alert(&crate::alert::node_alert_id("mqtt-queue", "n1"));
    let events: Vec<Vec<u8>> = reqs
        .iter()
        .filter(|(topic, _, _)| *topic == t.event("b1"))
        .map(|(_, _, p)| p.clone())
        .collect();
    assert_eq!(events, [b"e3".to_vec(), b"e4".to_vec(), b"e5".to_vec()]);
    let (_, retain, payload) = reqs
        .iter()
        .find(|(topic, _, _)| *topic == alert_topic)
        .expect("the queue alert");
    assert!(retain);
    let alert: AlertPayload = serde_json::from_slice(payload).expect("alert");
    assert_eq!(alert.code, "outgoing_queue");
    assert_eq!(alert.params["dropped"], 2);
    assert_eq!(alert.params["max_queued"], 3);
    assert_eq!(alert.since, clock.ms(0).hall);
    let a = actions(&mut s);
    assert!(
        a.iter().any(
            |a| matches!(a, Action::Feed { topic, retained: true, .. } if *topic == alert_topic)
        ),
        "in the local feed too: {a:?}"
    );
    // A connection without losses clears it (the writer's cleared payload).
    s.handle_lost("gone".into(), clock.ms(1_000));
    s.handle_connack(clock.ms(2_000));
    let again = published(&taken(&mut s));
    let cleared = payloads_on(&again, &alert_topic);
    // The raised one with every retained topic, then its clear, which stays.
    assert_eq!(cleared.len(), 2, "{again:?}");
    assert!(crate::mqtt::payload::alert_cleared(cleared[1]));
    // Cleared already: republished as such at the next connection.
    s.handle_lost("gone".into(), clock.ms(3_000));
    s.handle_connack(clock.ms(4_000));
    let third = published(&taken(&mut s));
    let alerts = payloads_on(&third, &alert_topic);
    assert_eq!(alerts.len(), 2, "{third:?}");
    assert!(
        alerts
            .iter()
            .all(|p| crate::mqtt::payload::alert_cleared(p))
    );
}

#[test]
fn a_stale_copy_of_our_own_topic_is_corrected_at_most_once_a_gap() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.handle_connack(clock.ms(0));
    s.retained(t.state("b1"), b"new".to_vec());
    taken(&mut s);
    // Our own publication's echo is no stale copy, nor is the broker's retained copy.
    s.handle_publish(&live(&t.state("b1"), b"new"), clock.ms(10));
    s.handle_publish(&kept(&t.state("b1"), b"old"), clock.ms(20));
    assert!(!s.wants_tick());
    // A live copy with another payload (a bridge's echo of an older one): ours again.
    s.handle_publish(&live(&t.state("b1"), b"old"), clock.ms(30));
    assert!(s.wants_tick());
    s.handle_tick(clock.ms(50).at);
    assert_eq!(
        published(&taken(&mut s)),
        [(t.state("b1"), true, b"new".to_vec())]
    );
    // Again within the gap: due at its end, not before.
    s.handle_publish(&live(&t.state("b1"), b"old"), clock.ms(300));
    s.handle_tick(clock.ms(320).at);
    assert!(published(&taken(&mut s)).is_empty());
    assert!(s.wants_tick());
    let gap = u64::try_from(GAP.as_millis()).expect("ms");
    s.handle_tick(clock.ms(30 + gap).at);
    assert_eq!(
        published(&taken(&mut s)),
        [(t.state("b1"), true, b"new".to_vec())]
    );
    // Another node's board is never ours to correct: into the local feed only.
    s.handle_publish(&kept(&t.state("b9"), b"theirs"), clock.ms(5_000));
    assert!(!s.wants_tick());
    assert!(taken(&mut s).is_empty());
}

#[test]
fn stale_copies_of_our_announcement_and_session_are_corrected_and_another_node_s_are_not_ours() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.handle_connack(clock.ms(0));
    let ours = t.node_announce("n1");
    assert!(
        subscribed(&taken(&mut s)).contains(&ours),
        "our announcement is subscribed, to be corrected"
    );
    s.retained(ours.clone(), br#"{"cleared":true}"#.to_vec());
    taken(&mut s);
    // A healed bridge brings back the standing one we took down: ours again.
    s.handle_publish(&live(&ours, br#"{"text":"old"}"#), clock.ms(10));
    s.handle_tick(clock.ms(30).at);
    assert_eq!(
        published(&taken(&mut s)),
        [(ours, true, br#"{"cleared":true}"#.to_vec())]
    );
    // Another node's announcement is its own.
    s.handle_publish(&live(&t.node_announce("n2"), b"{}"), clock.ms(5_000));
    assert!(!s.wants_tick());
    // Our session's schedule likewise.
    let session_topic = t.node_session("n1");
    s.retained(session_topic.clone(), br#"{"new":1}"#.to_vec());
    taken(&mut s);
    s.handle_publish(&live(&session_topic, br#"{"old":1}"#), clock.ms(6_000));
    s.handle_tick(clock.ms(6_020).at);
    assert_eq!(
        published(&taken(&mut s)),
        [(session_topic, true, br#"{"new":1}"#.to_vec())]
    );
}

#[test]
fn shutdown_publishes_offline_then_disconnects_and_ends_once_it_is_sent() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.handle_connack(clock.ms(0));
    taken(&mut s);
    actions(&mut s);
    s.shutdown();
    let reqs = taken(&mut s);
    let [
        Req::Publish {
            topic,
            retain: true,
            payload,
        },
        Req::Disconnect,
    ] = reqs.as_slice()
    else {
        panic!("offline, then disconnect: {reqs:?}");
    };
    assert_eq!(*topic, t.node_status("n1"));
    let status: NodeStatusPayload = serde_json::from_slice(payload).expect("status");
    assert_eq!(status.state, NodeState::Offline);
    assert!(s.shutting_down());
    assert!(actions(&mut s).is_empty(), "not before it is sent");
    // Our `offline` coming back is not corrected.
    s.handle_publish(&live(&t.node_status("n1"), payload), clock.ms(10));
    assert!(!s.wants_tick());
    s.handle_disconnect_sent();
    assert!(matches!(actions(&mut s)[..], [Action::End]));

    // Offline, the end comes at once.
    let mut s = session(10);
    s.shutdown();
    assert!(taken(&mut s).is_empty());
    assert!(matches!(actions(&mut s)[..], [Action::End]));
}

#[test]
fn a_command_goes_to_the_intake_and_its_topic_is_cleared() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    s.handle_connack(clock.ms(0));
    taken(&mut s);
    actions(&mut s);
    s.handle_publish(
        &live(&t.board_set("b1"), b"{\"cmd\":\"pause\"}"),
        clock.ms(5),
    );
    assert_eq!(
        published(&taken(&mut s)),
        [(t.board_set("b1"), true, Vec::new())]
    );
    let a = actions(&mut s);
    assert!(
        matches!(&a[..], [Action::Deliver(Incoming::Board { board, .. })] if board == "b1"),
        "{a:?}"
    );
    // A retained command is cleared and not acted on; its clearing is no command.
    s.handle_publish(&kept(&t.hall_set(), b"{\"cmd\":\"pause\"}"), clock.ms(6));
    assert_eq!(
        published(&taken(&mut s)),
        [(t.hall_set(), true, Vec::new())]
    );
    s.handle_publish(&live(&t.hall_set(), b""), clock.ms(7));
    assert!(taken(&mut s).is_empty());
    assert!(actions(&mut s).is_empty());
}

#[test]
fn a_twin_raises_its_alert_slows_reconnection_and_a_lasting_connection_clears_it() {
    let t = topics();
    let clock = Clock::new();
    let mut s = session(10);
    let mut other = birth(&["b1"]);
    other.instance = Some("other".into());
    let other = serde_json::to_vec(&other).expect("status");
    let twin_topic = t.alert(&crate::alert::node_alert_id("node-twin", "n1"));
    let floors = |a: &[Action]| -> Vec<Duration> {
        a.iter()
            .filter_map(|a| match a {
                Action::Floor(d) => Some(*d),
                _ => None,
            })
            .collect()
    };
    // Two short connections, each seeing another instance under our status.
    for start in [0, 1_000] {
        s.handle_connack(clock.ms(start));
        s.handle_publish(&kept(&t.node_status("n1"), &other), clock.ms(start + 10));
        s.handle_lost("closed by peer".into(), clock.ms(start + 200));
    }
    let a = actions(&mut s);
    assert!(
        a.iter()
            .any(|a| matches!(a, Action::Feed { topic, .. } if *topic == twin_topic)),
        "{a:?}"
    );
    // The first reconnection carries the alert; the next ones are held back.
    assert_eq!(floors(&a), [Duration::ZERO, Duration::ZERO]);
    s.handle_connack(clock.ms(2_000));
    let out = published(&taken(&mut s));
    assert!(
        out.iter().any(|(topic, _, _)| *topic == twin_topic),
        "{out:?}"
    );
    let deadline = s
        .next_deadline()
        .expect("clears after a lasting connection");
    assert_eq!(
        deadline,
        clock.ms(2_000).at + crate::mqtt::twin::ALONE_AGAIN
    );
    s.handle_lost("closed by peer".into(), clock.ms(2_100));
    let a = actions(&mut s);
    assert!(floors(&a)[0] >= crate::mqtt::twin::TWIN_BACKOFF, "{a:?}");
    // The other is gone: a connection lasts, and its deadline clears the alert.
    s.handle_connack(clock.ms(30_000));
    actions(&mut s);
    taken(&mut s);
    let at = s.next_deadline().expect("deadline");
    s.handle_timeout(clock.ms(30_000 + 1_000));
    assert!(actions(&mut s).is_empty(), "not before its deadline");
    let late = Now {
        at,
        hall: clock.ms(90_000).hall,
    };
    s.handle_timeout(late);
    let a = actions(&mut s);
    assert_eq!(floors(&a), [Duration::ZERO]);
    s.handle_tick(at);
    let out = published(&taken(&mut s));
    let (_, _, cleared) = out
        .iter()
        .find(|(topic, _, _)| *topic == twin_topic)
        .expect("the clear goes out");
    assert!(crate::mqtt::payload::alert_cleared(cleared));
    assert_eq!(s.next_deadline(), None);
}
