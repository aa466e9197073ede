//! Copies of retained topics as the broker delivers them: another node's status and
//! boards into the local feed, and our own topics when a copy of them comes back with
//! another payload (`owned`). Helpers of the connection's session (`session`).

use std::collections::BTreeMap;

use super::payload::{NodeStatusPayload, Topics};
use super::window::{Keyed, order_key};

/// Another node's retained status into the local feed (through `feed`, retained) (the page derives the hall's status
/// and its boards' liveness from every node's), with its boards `offline` when it says so,
/// and the boards its list lets in or takes out (`Foreign::peer_status`). A stale status
/// (an older run's) is not shown: it would hide the newer one. Returns the board texts
/// that went into the feed, for the caller to hand on as it does a board's own message
/// (a PGN to the broadcast, a state to the hall).
pub(super) fn mirror_status(
    foreign: &mut super::foreign::Foreign,
    feed: &mut dyn FnMut(&str, &[u8]),
    topics: &Topics,
    (node, topic, payload): (&str, &str, &[u8]),
) -> Vec<super::foreign::Mirror> {
    let Ok(status) = serde_json::from_slice::<NodeStatusPayload>(payload) else {
        return Vec::new();
    };
    if status.node != node {
        return Vec::new();
    }
    match foreign.peer_status(status) {
        Ok(Some(boards)) => {
            feed(topic, payload);
            for m in &boards {
                feed(&topics.board_text(&m.board, m.kind), &m.payload);
            }
            boards
        }
        Ok(None) => Vec::new(),
        Err(why) => {
            tracing::warn!(
                node = %crate::intake::command::log_safe(node),
                "another node's status not shown on this dashboard: {why:?}"
            );
            Vec::new()
        }
    }
}

/// A foreign board message dropped by the bounds of `Foreign`: logged at the first and at
/// every power of two, so a hostile peer cannot flood the log either.
pub(super) fn refused(count: &mut u64, why: super::foreign::Dropped, board: &str) {
    *count += 1;
    if count.is_power_of_two() {
        tracing::warn!(
            board = %crate::intake::command::log_safe(board),
            dropped = *count,
            "another node's board or alert not shown on this dashboard: {why:?} (at most {} boards of {} bytes)",
            super::foreign::MAX_BOARDS,
            super::foreign::MAX_PAYLOAD
        );
    }
}

/// A copy of one of this node's retained topics, as the broker delivered it: when it is a
/// live message (not the retained copy our own subscription brings, which the
/// republication after every connection overwrites anyway) with another payload than
/// ours, on a topic only we write, ours is published again (`owned`). `now`: when it came.
pub(super) fn correct(
    retained: &BTreeMap<Keyed, Vec<u8>>,
    (pending, corrections): (
        &mut std::collections::BTreeSet<Keyed>,
        &mut super::owned::Corrections,
    ),
    (topics, me, foreign): (&Topics, &str, &super::foreign::Foreign),
    p: &rumqttc::Publish,
    now: std::time::Instant,
) {
    if p.retain || corrections.echo(&p.topic, &p.payload) {
        return;
    }
    let key = order_key(topics, &p.topic);
    let differs = retained
        .get(&key)
        .is_some_and(|mine| mine.as_slice() != p.payload.as_ref());
    if differs
        && super::owned::single_writer(topics, me, foreign, &p.topic)
        && corrections.differs(&p.topic, now)
    {
        tracing::debug!(
            topic = %crate::intake::command::log_safe(&p.topic),
            "a copy of our retained topic came back with another payload (a bridge's echo of an older one, or our own overtaken): published ours again"
        );
        pending.insert(key);
    }
}

/// Queues this node's retained topics of `boards` (their state, availability and PGN, and
/// the alerts of each board) for publishing again.
pub(super) fn republish_boards(
    retained: &BTreeMap<Keyed, Vec<u8>>,
    pending: &mut std::collections::BTreeSet<Keyed>,
    topics: &Topics,
    boards: &[String],
) {
    let alerts = topics.alert("");
    for key in retained.keys() {
        let of_board = match topics.board_topic(&key.1) {
            Some((board, _)) => boards.iter().any(|b| b == board),
            None => key.1.strip_prefix(&alerts).is_some_and(|id| {
                boards
                    .iter()
                    .any(|b| crate::alert::is_board_alert_of(id, b))
            }),
        };
        if of_board {
            pending.insert(key.clone());
        }
    }
}
