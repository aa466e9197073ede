//! The live feed over Server-Sent Events: exactly the MQTT payloads, from the publisher's
//! own feed (one source of truth). Each SSE message is `<topic>\n<payload>` with the item's
//! id; a snapshot is framed by `snapshot` and `ready` (whose id is where it stands), so a
//! page that reconnects with `Last-Event-ID` resumes, or starts over from a snapshot.
//!
//! The public feed is filtered here, on the server: status, info, availability, board
//! states without adjournment details, the hall's info without its serial ports, and the events a spectator sees (moves, presses,
//! flags, results). No alerts, responses, envelopes or arbiter acts.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use crate::mqtt::feed::{FeedItem, LocalFeed, Start};

use super::AppState;
use super::error::WebError;
use super::session::Arbiter;

/// Board events a spectator may see.
const PUBLIC_EVENTS: &[&str] = &[
    "clock_started",
    "move_made",
    "pressed",
    "period_advanced",
    "flag_fell",
    "game_ended",
    "sealed_move_played",
    "paused",
    "resumed",
];

/// Events kept per board for a page that opens mid-game.
const HISTORY: usize = 2000;

/// Who the feed is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Arbiters,
    Public,
}

/// The payload as `audience` may see it; `None`: not for them.
pub fn filter(audience: Audience, topic: &str, payload: &[u8]) -> Option<Vec<u8>> {
    if audience == Audience::Arbiters {
        return Some(payload.to_vec());
    }
    let level = |n: usize| topic.split('/').nth(n);
    let kind = topic.rsplit('/').next().unwrap_or("");
    let on_board = level(2) == Some("board");
    match kind {
        "status" if !on_board => Some(payload.to_vec()),
        // The chief arbiter's message to the hall screens: for everyone to read.
        "announce" if topic.split('/').count() == 3 => Some(payload.to_vec()),
        // The hall's schedule only (a countdown's next start), not which games are sealed.
        "session" if topic.split('/').count() == 3 => {
            let Ok(Value::Object(mut session)) = serde_json::from_slice::<Value>(payload) else {
                return None;
            };
            session.retain(|k, _| {
                matches!(k.as_str(), "as_of" | "round" | "session_end" | "resumption")
            });
            serde_json::to_vec(&session).ok()
        }
        "info" if !on_board => {
            let Ok(Value::Object(mut info)) = serde_json::from_slice::<Value>(payload) else {
                return None;
            };
            // Where the boards are plugged in is the hall server's business, not a
            // spectator's: the serial-port paths go.
            if let Some(Value::Array(boards)) = info.get_mut("boards") {
                for b in boards.iter_mut() {
                    if let Value::Object(b) = b {
                        b.remove("port");
                    }
                }
            }
            serde_json::to_vec(&info).ok()
        }
        "availability" if on_board => Some(payload.to_vec()),
        "state" if on_board => {
            let Ok(Value::Object(mut state)) = serde_json::from_slice::<Value>(payload) else {
                return None;
            };
            // Only the stage of an adjourned game: its envelopes are the arbiters' business.
            if let Some(adj) = state.remove("adjournment") {
                let stage = adj.get("stage").cloned().unwrap_or(Value::Null);
                state.insert("adjournment".into(), serde_json::json!({ "stage": stage }));
            }
            state.remove("paused_by");
            if let Some(Value::Object(result)) = state.get_mut("result") {
                unnamed(result);
            }
            serde_json::to_vec(&state).ok()
        }
        "event" if on_board => {
            let Value::Object(mut v) = serde_json::from_slice(payload).ok()? else {
                return None;
            };
            let name = v.get("event")?.as_str()?;
            if !PUBLIC_EVENTS.contains(&name) {
                return None;
            }
            // Who paused, resumed or set a result, and why, is the arbiters' business.
            let mut named = unnamed(&mut v);
            if let Some(Value::Object(r)) = v.get_mut("result") {
                named |= unnamed(r);
            }
            if named {
                serde_json::to_vec(&v).ok()
            } else {
                Some(payload.to_vec())
            }
        }
        _ => None,
    }
}

/// Take the arbiter's name and reason out of a public payload (an event, or a result
/// the arbiter set); whether there were any.
fn unnamed(v: &mut serde_json::Map<String, Value>) -> bool {
    let arbiter = v.remove("arbiter").is_some();
    let reason = v.remove("reason").is_some();
    arbiter || reason
}

/// An SSE frame: `data` split into `data:` lines, as the browser joins them again.
fn frame(event: Option<&str>, id: Option<u64>, data: &[&[u8]]) -> Bytes {
    let mut out = Vec::with_capacity(data.iter().map(|d| d.len() + 16).sum::<usize>() + 32);
    if let Some(e) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(e.as_bytes());
        out.push(b'\n');
    }
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    for part in data {
        for line in part.split(|b| *b == b'\n') {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
            out.push(b'\n');
        }
    }
    out.push(b'\n');
    Bytes::from(out)
}

/// What `audience` may see of `item`, worked out once per item (not per open screen).
fn visible(item: &FeedItem, audience: Audience) -> Option<&[u8]> {
    match audience {
        Audience::Arbiters => Some(&item.payload),
        Audience::Public => item
            .public
            .get_or_init(|| filter(Audience::Public, &item.topic, &item.payload))
            .as_deref(),
    }
}

/// `<topic>\n<payload>`; live items carry their id (a reconnection resumes after it),
/// snapshot items none. A live item's frame is made once and shared by all subscribers.
fn message(item: &FeedItem, audience: Audience, with_id: bool) -> Option<Bytes> {
    let make = || {
        let payload = visible(item, audience)?;
        let id = with_id.then_some(item.id);
        Some(frame(None, id, &[item.topic.as_bytes(), payload]))
    };
    if !with_id {
        return make();
    }
    let slot = match audience {
        Audience::Arbiters => &item.frames[0],
        Audience::Public => &item.frames[1],
    };
    slot.get_or_init(make).clone()
}

/// A subscription's start as one chunk: a 1000-board snapshot is a thousand frames, one
/// write instead of a thousand when every hall screen reconnects at once (a Wi-Fi cut).
/// Measured either way at about a millisecond of CPU per snapshot (docs/BENCHMARKS.md):
/// it is fewer wake-ups for the client's task, not a saving that shows in the figures.
fn start_events(start: Start, audience: Audience, out: &mut VecDeque<Bytes>) {
    let frames: Vec<Bytes> = match start {
        Start::Snapshot { items, as_of } => {
            let mut frames = Vec::with_capacity(items.len() + 2);
            frames.push(frame(Some("snapshot"), None, &[b"start"]));
            frames.extend(items.iter().filter_map(|i| message(i, audience, false)));
            frames.push(frame(
                Some("ready"),
                Some(as_of),
                &[as_of.to_string().as_bytes()],
            ));
            frames
        }
        Start::Resume(items) => items
            .iter()
            .filter_map(|i| message(i, audience, true))
            .collect(),
    };
    if !frames.is_empty() {
        out.push_back(Bytes::from(frames.concat()));
    }
}

/// A comment line every so often keeps proxies and browsers from closing an idle feed.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// At most one write to a client per this long: what arrives meanwhile goes out in one
/// write, and a board's state superseded within it is sent once, as its latest. A write
/// and a wake-up per payload per client was what 50 dashboards on a 1000-board hall cost
/// (docs/BENCHMARKS.md); 100 ms is below what an arbiter sees of a clock (the page counts
/// down by itself) and keeps a lever press on the page within a tenth.
const COALESCE: std::time::Duration = std::time::Duration::from_millis(100);

/// The items of one write, in arrival order. A retained topic's older item leaves when a
/// newer one comes (its last word is what a screen shows); events and command answers
/// are each sent.
#[derive(Default)]
struct Batch(Vec<Arc<FeedItem>>);

impl Batch {
    fn push(&mut self, item: Arc<FeedItem>) {
        if item.retained {
            self.0.retain(|i| i.topic != item.topic);
        }
        self.0.push(item);
    }

    /// One chunk of SSE frames (`None`: nothing this audience may see).
    fn chunk(&self, audience: Audience) -> Option<Bytes> {
        let frames: Vec<Bytes> = self
            .0
            .iter()
            .filter_map(|i| message(i, audience, true))
            .collect();
        match frames.len() {
            0 => None,
            1 => frames.into_iter().next(),
            _ => Some(Bytes::from(frames.concat())),
        }
    }
}

struct Subscriber {
    feed: LocalFeed,
    audience: Audience,
    pending: VecDeque<Bytes>,
    rx: broadcast::Receiver<Arc<FeedItem>>,
    closed: watch::Receiver<bool>,
    /// When the last live write went out (COALESCE is counted from it).
    last_write: Option<tokio::time::Instant>,
}

enum Next {
    Item(Arc<FeedItem>),
    Lagged,
    Idle,
    End,
}

impl Subscriber {
    fn new(feed: LocalFeed, audience: Audience, after: Option<u64>) -> Subscriber {
        let (start, rx) = feed.subscribe(after);
        let mut pending = VecDeque::new();
        start_events(start, audience, &mut pending);
        Subscriber {
            closed: feed.closed(),
            feed,
            audience,
            pending,
            rx,
            last_write: None,
        }
    }

    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Subscriber)> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some((Ok(e), self));
            }
            let next = tokio::select! {
                _ = self.closed.wait_for(|c| *c) => Next::End,
                r = self.rx.recv() => match r {
                    Ok(item) => Next::Item(item),
                    Err(broadcast::error::RecvError::Lagged(_)) => Next::Lagged,
                    Err(broadcast::error::RecvError::Closed) => Next::End,
                },
                _ = tokio::time::sleep(KEEP_ALIVE) => Next::Idle,
            };
            match next {
                Next::End => return None,
                Next::Idle => self.pending.push_back(Bytes::from_static(b":\n\n")),
                Next::Item(item) => {
                    let mut batch = Batch::default();
                    batch.push(item);
                    match self.gather(&mut batch).await {
                        Gathered::Lagged => {
                            // The snapshot supersedes the batch.
                            let (start, rx) = self.feed.subscribe(None);
                            self.rx = rx;
                            start_events(start, self.audience, &mut self.pending);
                        }
                        Gathered::Batch | Gathered::End => {
                            if let Some(e) = batch.chunk(self.audience) {
                                self.pending.push_back(e);
                            }
                        }
                    }
                    self.last_write = Some(tokio::time::Instant::now());
                }
                // Behind the broadcast: a fresh snapshot, never a silent gap.
                Next::Lagged => {
                    let (start, rx) = self.feed.subscribe(None);
                    self.rx = rx;
                    start_events(start, self.audience, &mut self.pending);
                }
            }
        }
    }
}

enum Gathered {
    Batch,
    Lagged,
    End,
}

impl Subscriber {
    /// Add to `batch` what is already queued and, when the last write was less than
    /// COALESCE ago, what arrives until then: the first payload after a quiet spell goes
    /// out at once.
    async fn gather(&mut self, batch: &mut Batch) -> Gathered {
        let due = self.last_write.map(|t| t + COALESCE);
        loop {
            match self.rx.try_recv() {
                Ok(item) => {
                    batch.push(item);
                    continue;
                }
                Err(broadcast::error::TryRecvError::Lagged(_)) => return Gathered::Lagged,
                Err(broadcast::error::TryRecvError::Closed) => return Gathered::End,
                Err(broadcast::error::TryRecvError::Empty) => {}
            }
            let Some(due) = due.filter(|d| *d > tokio::time::Instant::now()) else {
                return Gathered::Batch;
            };
            tokio::select! {
                _ = tokio::time::sleep_until(due) => return Gathered::Batch,
                r = self.rx.recv() => match r {
                    Ok(item) => batch.push(item),
                    Err(broadcast::error::RecvError::Lagged(_)) => return Gathered::Lagged,
                    Err(broadcast::error::RecvError::Closed) => return Gathered::End,
                },
            }
        }
    }
}

fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

fn sse(feed: LocalFeed, audience: Audience, after: Option<u64>) -> Response {
    let sub = Subscriber::new(feed, audience, after);
    let stream: std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, Infallible>> + Send>> =
        Box::pin(futures_util::stream::unfold(sub, Subscriber::next));
    let mut r = Body::from_stream(stream).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // nginx buffers proxied responses unless told not to; a feed must not be buffered.
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// `GET /api/feed`: everything, for a logged-in arbiter (viewers included).
pub async fn arbiters(
    State(state): State<AppState>,
    _who: Arbiter,
    headers: HeaderMap,
) -> Response {
    sse(
        state.feed().clone(),
        Audience::Arbiters,
        last_event_id(&headers),
    )
}

/// `GET /api/public/feed`: the spectators' feed, no login.
pub async fn public(State(state): State<AppState>, headers: HeaderMap) -> Response {
    sse(
        state.feed().clone(),
        Audience::Public,
        last_event_id(&headers),
    )
}

/// Each board's recent events (raw payloads), for a page that opens mid-game: kept from
/// the feed since the daemon started; a new round on the board starts its list afresh.
#[derive(Debug, Clone, Default)]
pub struct History {
    inner: Arc<Mutex<HashMap<String, BoardHistory>>>,
}

/// A board state's `round`, the only field [`History`] reads of it.
#[derive(Deserialize)]
struct RoundOf {
    #[serde(default)]
    round: Option<Value>,
}

#[derive(Debug, Default)]
struct BoardHistory {
    round: Option<Value>,
    events: VecDeque<Arc<FeedItem>>,
}

impl History {
    /// Follow `feed` until the daemon stops.
    pub fn follow(&self, feed: &LocalFeed) -> tokio::task::JoinHandle<()> {
        let (start, mut rx) = feed.subscribe(None);
        let mut closed = feed.closed();
        let me = self.clone();
        if let Start::Snapshot { items, .. } = start {
            for i in items {
                me.note(&i);
            }
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = closed.wait_for(|c| *c) => return,
                    r = rx.recv() => match r {
                        Ok(item) => me.note(&item),
                        // Missed some: what follows is still worth keeping.
                        Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                }
            }
        })
    }

    fn note(&self, item: &Arc<FeedItem>) {
        let mut parts = item.topic.rsplit('/');
        let kind = parts.next().unwrap_or("");
        let board = parts.next().unwrap_or("");
        if parts.next() != Some("board") || !matches!(kind, "event" | "state") {
            return;
        }
        // Only the state's `round` is read, the rest skipped unbuilt: every press's state
        // comes here, and building the whole of it as a `Value` was 3 % of a 5000-board
        // daemon's time (docs/BENCHMARKS.md).
        let round = if kind == "state" {
            serde_json::from_slice::<RoundOf>(&item.payload)
                .ok()
                // `null` (no game yet) reads as no round: only a new round number starts
                // afresh.
                .and_then(|r| r.round)
        } else {
            None
        };
        let mut map = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The board's name is copied once, not at every message.
        if !map.contains_key(board) {
            map.insert(board.to_string(), BoardHistory::default());
        }
        let Some(h) = map.get_mut(board) else { return };
        if kind == "state" {
            if round.is_some() && round != h.round {
                if h.round.is_some() {
                    h.events.clear();
                }
                h.round = round;
            }
            return;
        }
        if h.events.len() == HISTORY {
            h.events.pop_front();
        }
        h.events.push_back(item.clone());
    }

    /// Every board's events: `{board: [event, …]}`.
    fn all(&self, audience: Audience) -> Value {
        let boards: Vec<String> = {
            let map = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            map.keys().cloned().collect()
        };
        let mut out = serde_json::Map::new();
        for b in boards {
            if let Some(e) = self.events(&b, audience) {
                out.insert(b, Value::Array(e));
            }
        }
        Value::Object(out)
    }

    fn events(&self, board: &str, audience: Audience) -> Option<Vec<Value>> {
        let map = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let h = map.get(board)?;
        Some(
            h.events
                .iter()
                .filter_map(|i| filter(audience, &i.topic, &i.payload))
                .filter_map(|p| serde_json::from_slice(&p).ok())
                .collect(),
        )
    }
}

fn board_events(
    state: &AppState,
    board: &str,
    audience: Audience,
) -> Result<Json<Value>, WebError> {
    // Any board the hall has answers, even with no events yet.
    let known = state
        .feed()
        .snapshot_has(&format!("hallclock/{}/board/{board}/state", state.hall()));
    let events = state.history().events(board, audience);
    match events {
        Some(e) => Ok(Json(Value::Array(e))),
        None if known => Ok(Json(Value::Array(Vec::new()))),
        None => Err(WebError::NotFound(format!("unknown board '{board}'"))),
    }
}

/// `GET /api/board/{board}/events`.
pub async fn history(
    State(state): State<AppState>,
    _who: Arbiter,
    Path(board): Path<String>,
) -> Result<Json<Value>, WebError> {
    board_events(&state, &board, Audience::Arbiters)
}

/// `GET /api/boards/events`: every board's recent events in one answer, for the hall
/// page. One request, not one per board: a browser opens at most six connections to a
/// host and the feed holds one, so 200 requests queued behind each other and the tiles
/// of a reloaded page waited (or, a connection stalled, never got their last move).
pub async fn all_history(State(state): State<AppState>, _who: Arbiter) -> Json<Value> {
    Json(state.history().all(Audience::Arbiters))
}

/// `GET /api/public/boards/events`: filtered as the public feed is.
pub async fn public_all_history(State(state): State<AppState>) -> Json<Value> {
    Json(state.history().all(Audience::Public))
}

/// `GET /api/public/board/{board}/events`: filtered as the public feed is.
pub async fn public_history(
    State(state): State<AppState>,
    Path(board): Path<String>,
) -> Result<Json<Value>, WebError> {
    board_events(&state, &board, Audience::Public)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_sees_no_alerts_envelopes_or_arbiter_acts() {
        let p = Audience::Public;
        assert!(filter(p, "hallclock/h/alert/x", b"{}").is_none());
        assert!(filter(p, "hallclock/h/response", b"{}").is_none());
        assert!(filter(p, "hallclock/h/board/b/response", b"{}").is_none());
        let session = br#"{"as_of":1,"round":3,"resumption":{"start":9,"place":"Hall B"},"sealed":["b"],"all_sealed":true}"#;
        let out = filter(p, "hallclock/h/session", session).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("\"start\":9") && !text.contains("sealed"),
            "{text}"
        );
        assert!(filter(p, "hallclock/h/node/n/session", session).is_none());
        let announce = br#"{"text":"Round 4 at 15:00","since":1,"until":2}"#;
        assert!(filter(p, "hallclock/h/announce", announce).is_some());
        assert!(filter(p, "hallclock/h/node/n/announce", announce).is_none());
        assert!(filter(p, "hallclock/h/status", b"online").is_some());
        let sealed = br#"{"board":"b","seq":3,"event":"sealed","at":1,"side":"white","commitment":"ab","on_board":false}"#;
        assert!(filter(p, "hallclock/h/board/b/event", sealed).is_none());
        let added = br#"{"board":"b","seq":4,"event":"time_added","at":1}"#;
        assert!(filter(p, "hallclock/h/board/b/event", added).is_none());
        let mv = br#"{"board":"b","seq":5,"event":"move_made","at":1,"san":"e4"}"#;
        assert_eq!(
            filter(p, "hallclock/h/board/b/event", mv).as_deref(),
            Some(&mv[..])
        );
        // Who paused and why, who set a result: not for the hall.
        let paused = br#"{"board":"b","seq":6,"event":"paused","at":1,"arbiter":"IA Meyer","reason":"phone rang"}"#;
        let out = filter(p, "hallclock/h/board/b/event", paused).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("\"paused\"") && !text.contains("Meyer") && !text.contains("phone"),
            "{text}"
        );
        let ended = br#"{"board":"b","seq":7,"event":"game_ended","at":1,"result":{"score":"1-0","termination":"arbiter","kind":{"kind":"resignation","side":"black"},"arbiter":"IA Meyer","reason":"said so"}}"#;
        let out = filter(p, "hallclock/h/board/b/event", ended).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("resignation") && !text.contains("Meyer") && !text.contains("said so"),
            "{text}"
        );
        let over = br#"{"board":"b","result":{"score":"1-0","termination":"arbiter","kind":{"kind":"resignation","side":"black"},"arbiter":"IA Meyer"}}"#;
        let out = filter(p, "hallclock/h/board/b/state", over).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&out).contains("Meyer"));
        let state =
            br#"{"board":"b","adjournment":{"stage":"sealed","envelopes":[{"commitment":"ab"}]}}"#;
        let out = filter(p, "hallclock/h/board/b/state", state).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("\"stage\":\"sealed\""), "{text}");
        assert!(!text.contains("commitment"), "{text}");
        let info = br#"{"version":"0.1.0","hall":"h","boards":[{"id":"b","port":"/dev/ttyACM0","white_side":"left","number":1}]}"#;
        let out = filter(p, "hallclock/h/info", info).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(
            !text.contains("ttyACM0") && !text.contains("port"),
            "{text}"
        );
        assert!(text.contains("\"number\":1"), "the rest stays: {text}");
        // Arbiters get the bytes as published.
        assert_eq!(
            filter(Audience::Arbiters, "hallclock/h/board/b/state", state).as_deref(),
            Some(&state[..])
        );
    }

    fn item(id: u64, topic: &str, payload: &str, retained: bool) -> Arc<FeedItem> {
        Arc::new(FeedItem {
            id,
            topic: topic.into(),
            payload: payload.as_bytes().to_vec(),
            retained,
            public: Default::default(),
            frames: Default::default(),
        })
    }

    #[test]
    fn a_batch_sends_a_boards_latest_state_once_and_every_event_in_order() {
        let mut b = Batch::default();
        let state = "hallclock/h/board/b/state";
        let event = "hallclock/h/board/b/event";
        b.push(item(1, state, r#"{"seq":1}"#, true));
        b.push(item(2, event, r#"{"seq":2,"event":"pressed"}"#, false));
        b.push(item(3, state, r#"{"seq":2}"#, true));
        b.push(item(4, event, r#"{"seq":3,"event":"move_made"}"#, false));
        b.push(item(5, "hallclock/h/board/c/state", r#"{"seq":9}"#, true));
        let ids: Vec<u64> = b.0.iter().map(|i| i.id).collect();
        assert_eq!(
            ids,
            [2, 3, 4, 5],
            "the older state of b is gone, the rest in order"
        );
        let chunk = b.chunk(Audience::Arbiters).unwrap_or_default();
        let text = String::from_utf8_lossy(&chunk);
        assert_eq!(
            text.matches("\n\n").count(),
            4,
            "four SSE messages in one write: {text}"
        );
        assert!(!text.contains(r#"{"seq":1}"#), "{text}");
        let first_event = text.find("pressed").unwrap_or(usize::MAX);
        let new_state = text.find(r#"{"seq":2}"#).unwrap_or(0);
        assert!(first_event < new_state, "arrival order kept: {text}");
        assert!(Batch::default().chunk(Audience::Arbiters).is_none());
    }

    #[test]
    fn a_board_s_history_starts_afresh_only_at_a_new_round_number() {
        let h = History::default();
        let state = "hallclock/h/board/b/state";
        let event = "hallclock/h/board/b/event";
        let count = || h.events("b", Audience::Arbiters).map_or(0, |e| e.len());
        h.note(&item(
            1,
            state,
            r#"{"round":1,"clock":{"white_ms":5}}"#,
            true,
        ));
        h.note(&item(2, event, r#"{"event":"pressed"}"#, false));
        h.note(&item(3, event, r#"{"event":"move_made"}"#, false));
        assert_eq!(count(), 2);
        // The same round again, a state with no game, one with no round field, and
        // another board's new round: none of them clears b's events.
        h.note(&item(4, state, r#"{"clock":{},"round":1}"#, true));
        h.note(&item(5, state, r#"{"round":null}"#, true));
        h.note(&item(6, state, r#"{"online":false}"#, true));
        h.note(&item(
            7,
            "hallclock/h/board/c/state",
            r#"{"round":2}"#,
            true,
        ));
        assert_eq!(count(), 2, "b's round is still 1");
        // Only a board's `event` and `state` count: not its PGN, nor the hall's events.
        h.note(&item(12, "hallclock/h/board/b/pgn", "[Round \"1\"]", true));
        h.note(&item(
            13,
            "hallclock/h/event",
            r#"{"event":"all_sealed"}"#,
            false,
        ));
        assert_eq!(count(), 2, "b's PGN is no event");
        assert!(h.events("h", Audience::Arbiters).is_none(), "no board `h`");
        h.note(&item(8, state, r#"{"round":2,"result":null}"#, true));
        assert_eq!(count(), 0, "round 2 starts afresh");
        h.note(&item(9, event, r#"{"event":"pressed"}"#, false));
        assert_eq!(count(), 1);
        // A first round seen on a board with events (the daemon started mid-round) keeps
        // them: only a change of round clears.
        h.note(&item(
            10,
            "hallclock/h/board/d/event",
            r#"{"event":"pressed"}"#,
            false,
        ));
        h.note(&item(
            11,
            "hallclock/h/board/d/state",
            r#"{"round":3}"#,
            true,
        ));
        assert_eq!(h.events("d", Audience::Arbiters).map_or(0, |e| e.len()), 1);
    }
}
