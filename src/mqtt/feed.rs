//! The publisher's local feed: every payload the daemon publishes over MQTT, with the same
//! topic and bytes, for the web dashboard. A subscriber first gets the retained snapshot
//! (as a reconnecting MQTT client gets it from the broker), then the stream; one that was
//! away briefly resumes from the recent ring instead, so nothing is missed or doubled.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{broadcast, watch};

/// How many recent items a reconnecting page can resume from without a snapshot.
const RING: usize = 4096;
/// How far a slow subscriber may fall behind before it gets the snapshot again.
const BROADCAST: usize = 8192;

/// One published payload. `id` counts every item of this daemon's life, so a page can
/// say where it stopped (SSE `Last-Event-ID`).
#[derive(Debug)]
pub struct FeedItem {
    pub id: u64,
    pub topic: String,
    pub payload: Vec<u8>,
    pub retained: bool,
    /// What the public may see of it, worked out once for every subscriber (the web's
    /// filter; `None` inside: nothing).
    pub public: std::sync::OnceLock<Option<Vec<u8>>>,
    /// The web's live SSE frame of it, per audience (arbiters, public), made once and
    /// shared by every open screen: 50 dashboards cost one formatting, not 50.
    pub frames: [std::sync::OnceLock<Option<bytes::Bytes>>; 2],
}

/// Where a subscription starts.
#[derive(Debug)]
pub enum Start {
    /// Every retained payload (status first, then info, availability, the rest), as of
    /// `as_of`: the subscriber should forget what it had (cleared alerts are absent).
    Snapshot {
        items: Vec<Arc<FeedItem>>,
        as_of: u64,
    },
    /// The items published after the id the subscriber gave, in order.
    Resume(Vec<Arc<FeedItem>>),
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    retained: BTreeMap<(u8, String), Arc<FeedItem>>,
    ring: VecDeque<Arc<FeedItem>>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    tx: broadcast::Sender<Arc<FeedItem>>,
    closed: watch::Sender<bool>,
}

/// Cheap to clone; all clones are the same feed.
#[derive(Debug, Clone)]
pub struct LocalFeed {
    inner: Arc<Inner>,
}

impl Default for LocalFeed {
    fn default() -> Self {
        LocalFeed::new()
    }
}

/// Whether `topic` is an alert's (`hallclock/<hall>/alert/<id>`).
fn is_alert_topic(topic: &str) -> bool {
    topic
        .rsplit_once('/')
        .is_some_and(|(head, _)| head.ends_with("/alert"))
}

/// Status first, then info, then availability, then the rest: a page learns that the
/// daemon is up before it learns the boards (as the MQTT task republishes them).
fn rank(topic: &str) -> u8 {
    if topic.ends_with("/status") {
        0
    } else if topic.ends_with("/info") {
        1
    } else if topic.ends_with("/availability") {
        2
    } else {
        3
    }
}

impl LocalFeed {
    pub fn new() -> LocalFeed {
        let (tx, _) = broadcast::channel(BROADCAST);
        let (closed, _) = watch::channel(false);
        LocalFeed {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    next_id: 1,
                    ..State::default()
                }),
                tx,
                closed,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding it cannot leave the maps half-updated (each update is one
        // insert), so a poisoned lock is still good.
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Record and send one payload. Under the lock, so that a subscriber's snapshot and its
    /// stream meet exactly: nothing between them is lost or sent twice.
    pub fn push(&self, topic: &str, payload: &[u8], retained: bool) {
        // A cleared alert reaches the pages as the empty payload they know: no alert stands.
        let payload = if retained && is_alert_topic(topic) && super::payload::alert_cleared(payload)
        {
            &[]
        } else {
            payload
        };
        let mut s = self.lock();
        let item = Arc::new(FeedItem {
            id: s.next_id,
            topic: topic.to_string(),
            payload: payload.to_vec(),
            retained,
            public: std::sync::OnceLock::new(),
            frames: Default::default(),
        });
        s.next_id += 1;
        if retained {
            let key = (rank(topic), topic.to_string());
            // An empty retained payload clears the topic (a resolved alert).
            if payload.is_empty() {
                s.retained.remove(&key);
            } else {
                s.retained.insert(key, item.clone());
            }
        }
        if s.ring.len() == RING {
            s.ring.pop_front();
        }
        s.ring.push_back(item.clone());
        // No receiver is not an error: nobody is watching.
        let _ = self.inner.tx.send(item);
    }

    /// Subscribe. `after`: the last item id the subscriber saw (resumes from the ring when
    /// it still holds everything after it; otherwise a snapshot).
    pub fn subscribe(&self, after: Option<u64>) -> (Start, broadcast::Receiver<Arc<FeedItem>>) {
        let s = self.lock();
        let rx = self.inner.tx.subscribe();
        if let Some(after) = after
            && after < s.next_id
            && s.ring.front().is_some_and(|first| first.id <= after + 1)
        {
            let items = s.ring.iter().filter(|i| i.id > after).cloned().collect();
            return (Start::Resume(items), rx);
        }
        (self.snapshot_locked(&s), rx)
    }

    /// The retained payloads now, for a subscriber that fell behind.
    pub fn snapshot(&self) -> Start {
        let s = self.lock();
        self.snapshot_locked(&s)
    }

    fn snapshot_locked(&self, s: &State) -> Start {
        Start::Snapshot {
            items: s.retained.values().cloned().collect(),
            as_of: s.next_id - 1,
        }
    }

    /// Whether `topic` holds a retained payload now.
    pub fn snapshot_has(&self, topic: &str) -> bool {
        self.lock()
            .retained
            .contains_key(&(rank(topic), topic.to_string()))
    }

    /// The daemon is stopping: every stream should end.
    pub fn close(&self) {
        let _ = self.inner.closed.send(true);
    }

    /// Becomes true when the daemon stops.
    pub fn closed(&self) -> watch::Receiver<bool> {
        self.inner.closed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics(start: &Start) -> Vec<String> {
        match start {
            Start::Snapshot { items, .. } | Start::Resume(items) => {
                items.iter().map(|i| i.topic.clone()).collect()
            }
        }
    }

    #[test]
    fn snapshot_is_ordered_and_forgets_cleared_topics() {
        let f = LocalFeed::new();
        f.push("h/board/b1/state", b"{}", true);
        f.push("h/alert/a", b"{}", true);
        f.push("h/board/b1/availability", b"online", true);
        f.push("h/info", b"{}", true);
        f.push("h/status", b"online", true);
        f.push("h/board/b1/event", b"{}", false);
        f.push("h/alert/a", b"", true);
        let (start, _) = f.subscribe(None);
        assert_eq!(
            topics(&start),
            [
                "h/status",
                "h/info",
                "h/board/b1/availability",
                "h/board/b1/state"
            ]
        );
        let Start::Snapshot { as_of, .. } = start else {
            panic!("a first subscription is a snapshot")
        };
        assert_eq!(as_of, 7);
    }

    #[test]
    fn a_cleared_alert_is_forgotten_and_reaches_the_pages_as_an_empty_payload() {
        let f = LocalFeed::new();
        let (_, mut rx) = f.subscribe(None);
        f.push(
            "h/alert/b1-low-battery",
            b"{\"id\":\"b1-low-battery\"}",
            true,
        );
        f.push(
            "h/alert/b1-low-battery",
            &crate::mqtt::payload::cleared_alert("b1-low-battery"),
            true,
        );
        // Not an alert topic: a payload that looks like one is left as it is.
        f.push("h/board/b1/state", b"{\"cleared\":true,\"id\":\"x\"}", true);
        let (start, _) = f.subscribe(None);
        assert_eq!(topics(&start), ["h/board/b1/state"]);
        let first = rx.try_recv().expect("the alert");
        assert!(!first.payload.is_empty());
        let cleared = rx.try_recv().expect("its clear");
        assert_eq!(
            cleared.payload, b"",
            "the pages know an empty payload as cleared"
        );
    }

    #[test]
    fn a_subscriber_resumes_after_its_last_id_and_the_stream_follows() {
        let f = LocalFeed::new();
        for n in 0..5 {
            f.push("h/board/b1/event", format!("{n}").as_bytes(), false);
        }
        let (start, mut rx) = f.subscribe(Some(3));
        let Start::Resume(items) = start else {
            panic!("within the ring: a resume")
        };
        assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), [4, 5]);
        f.push("h/board/b1/event", b"5", false);
        assert_eq!(rx.try_recv().map(|i| i.id).ok(), Some(6));
        // Beyond the ring, or from the future: a snapshot.
        for n in 0..RING {
            f.push("h/x/event", format!("{n}").as_bytes(), false);
        }
        assert!(matches!(f.subscribe(Some(1)).0, Start::Snapshot { .. }));
        assert!(matches!(
            f.subscribe(Some(1 << 40)).0,
            Start::Snapshot { .. }
        ));
    }
}
