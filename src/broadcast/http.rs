//! The feed over HTTP: `/broadcast/round/{n}/games.pgn`, `/broadcast/round/{n}/game-{b}.pgn`
//! and the same under `/broadcast/current/`. Public and read-only. Strong ETags, so
//! lichess's polling every 2 s costs a comparison while nothing changed.
//!
//! The texts are cached per game (by the number of events shown) and per round (by the
//! list of games and counts), so a change renders only the game that changed, and an
//! unchanged poll renders nothing. The round's ETag is a hash over its games' hashes in
//! board order: the body is exactly those texts joined, so it names the body without
//! hashing a megabyte on every change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use super::view::{self, FeedGame};
use super::{BroadcastSource, NotInFeed, Rendered, Which};
use crate::rules::Millis;

pub const CONTENT_TYPE: &str = "application/x-chess-pgn; charset=utf-8";

pub(super) struct GameText {
    shown: usize,
    text: Arc<str>,
    hash: [u8; 32],
}

/// What a round's body was made of: each game's id, board number and events shown.
type RoundKey = Vec<(u64, Option<u32>, usize)>;

/// A round's body as last rendered, and how long it stays right without looking at the
/// games' events again.
pub(super) struct RoundEntry {
    key: RoundKey,
    /// The games it was made of: a game that changes is a new `Arc` in the feed.
    games: Vec<Arc<FeedGame>>,
    /// The cut it was made at, and the first instant after it at which any game has an
    /// event not yet shown: a later poll with a cut in `[cut, until)` shows the same body.
    cut: Option<Millis>,
    until: Option<Millis>,
    rendered: Rendered,
}

/// The texts already rendered.
#[derive(Default)]
pub struct Cache {
    /// By game id and board (a game moved to another board renders anew).
    pub(super) games: HashMap<(u64, String), GameText>,
    /// By round.
    pub(super) rounds: HashMap<u32, RoundEntry>,
    /// How many rounds the feed had evicted when this cache last let go of their texts.
    pub(super) evicted_seen: usize,
}

impl RoundEntry {
    /// The delayed poll's fast path (the ETag hit behind a 304): the same games, and the
    /// cut has not reached any game's next event, so nothing shown can have changed.
    fn still_right(&self, games: &[Arc<FeedGame>], cut: Option<Millis>) -> bool {
        let (Some(then), Some(now)) = (self.cut, cut) else {
            return false;
        };
        then <= now
            && self.until.is_none_or(|u| now < u)
            && self.games.len() == games.len()
            && self.games.iter().zip(games).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(super) fn lock(cache: &Mutex<Cache>) -> std::sync::MutexGuard<'_, Cache> {
    // A panic elsewhere left only a cache behind: its texts are still right.
    cache.lock().unwrap_or_else(|p| p.into_inner())
}

/// The game's text with `shown` events, from the cache or rendered now.
fn game_text(cache: &mut Cache, g: &FeedGame, shown: usize) -> (Arc<str>, [u8; 32]) {
    let key = (g.game_id, g.board.clone());
    if let Some(t) = cache.games.get(&key)
        && t.shown == shown
    {
        return (t.text.clone(), t.hash);
    }
    let text: Arc<str> = view::text(g, shown).into();
    let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    cache.games.insert(
        key,
        GameText {
            shown,
            text: text.clone(),
            hash,
        },
    );
    (text, hash)
}

/// The round's multi-game PGN at `cut`.
pub fn render_round(
    cache: &Mutex<Cache>,
    round: u32,
    games: &[Arc<FeedGame>],
    cut: Option<Millis>,
) -> Rendered {
    let mut cache = lock(cache);
    if let Some(e) = cache.rounds.get(&round)
        && e.still_right(games, cut)
    {
        return e.rendered.clone();
    }
    let key: RoundKey = games
        .iter()
        .map(|g| (g.game_id, g.info.board, view::shown(g, cut)))
        .collect();
    // The earliest event any game has after the cut: until then this body stands.
    let until = cut.and_then(|_| {
        games
            .iter()
            .zip(&key)
            .filter_map(|(g, (_, _, shown))| g.next_at(*shown))
            .min()
    });
    if let Some(e) = cache.rounds.get_mut(&round)
        && e.key == key
    {
        e.games = games.to_vec();
        e.cut = cut;
        e.until = until;
        return e.rendered.clone();
    }
    let mut texts = Vec::with_capacity(games.len());
    let mut hasher = Sha256::new();
    for (g, (_, _, shown)) in games.iter().zip(&key) {
        let (text, hash) = game_text(&mut cache, g, *shown);
        hasher.update(hash);
        texts.push(text);
    }
    let body = view::round_text(texts.iter().map(|t| &**t));
    let r = Rendered {
        body: bytes::Bytes::from(body),
        etag: format!("\"{}\"", hex(&hasher.finalize()[..16])),
    };
    cache.rounds.insert(
        round,
        RoundEntry {
            key,
            games: games.to_vec(),
            cut,
            until,
            rendered: r.clone(),
        },
    );
    r
}

/// Some games' multi-game PGN at `cut`, without a round entry: the texts come from (and
/// go to) the per-game cache, the ETag is the hash of their hashes as for a round.
pub fn render_games(
    cache: &Mutex<Cache>,
    games: &[Arc<FeedGame>],
    cut: Option<Millis>,
) -> Rendered {
    let mut cache = lock(cache);
    let mut texts = Vec::with_capacity(games.len());
    let mut hasher = Sha256::new();
    for g in games {
        let (text, hash) = game_text(&mut cache, g, view::shown(g, cut));
        hasher.update(hash);
        texts.push(text);
    }
    let body = view::round_text(texts.iter().map(|t| &**t));
    Rendered {
        body: bytes::Bytes::from(body),
        etag: format!("\"{}\"", hex(&hasher.finalize()[..16])),
    }
}

/// One game's PGN at `cut`.
pub fn render_game(cache: &Mutex<Cache>, g: &FeedGame, cut: Option<Millis>) -> Rendered {
    let mut cache = lock(cache);
    let (text, hash) = game_text(&mut cache, g, view::shown(g, cut));
    Rendered {
        body: bytes::Bytes::copy_from_slice(text.as_bytes()),
        etag: format!("\"{}\"", hex(&hash[..16])),
    }
}

/// The broadcast routes, to be merged into the daemon's web server.
pub fn router(source: BroadcastSource) -> Router {
    Router::new()
        .route("/broadcast/round/{round}/{file}", get(round_file))
        .route("/broadcast/current/{file}", get(current_file))
        .with_state(source)
}

async fn round_file(
    State(source): State<BroadcastSource>,
    Path((round, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    match round.parse::<u32>() {
        // An evicted round is read from the journal: off the async workers.
        Ok(n) if n > 0 && source.is_evicted(n) => {
            let answered = tokio::task::spawn_blocking(move || {
                answer(&source, Which::Round(n), &file, &headers)
            })
            .await;
            answered.unwrap_or_else(|_| {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the round could not be read from the journal\n",
                )
                    .into_response()
            })
        }
        Ok(n) if n > 0 => answer(&source, Which::Round(n), &file, &headers),
        _ => not_found(format!(
            "'{}' is not a round number (1, 2, …)",
            round.escape_debug()
        )),
    }
}

async fn current_file(
    State(source): State<BroadcastSource>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    answer(&source, Which::Current, &file, &headers)
}

/// `games.pgn` or `game-B.pgn` (LiveChess's layout).
fn answer(source: &BroadcastSource, which: Which, file: &str, headers: &HeaderMap) -> Response {
    let rendered = if file == "games.pgn" {
        source.round(which)
    } else if let Some(b) = file
        .strip_prefix("game-")
        .and_then(|f| f.strip_suffix(".pgn"))
        .and_then(|b| b.parse::<u32>().ok())
    {
        source.board(which, b)
    } else {
        return not_found(format!(
            "no file '{}' here: games.pgn (the round) or game-B.pgn (board B)",
            file.escape_debug()
        ));
    };
    match rendered {
        Ok(r) => pgn_response(r, headers),
        Err(
            e @ (NotInFeed::NoCurrentRound | NotInFeed::NoRound(_) | NotInFeed::NoBoard { .. }),
        ) => not_found(e.to_string()),
    }
}

/// `If-None-Match` lists the tag (weak comparison, RFC 9110 §13.1.2) or is `*`.
fn matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag)
}

fn pgn_response(r: Rendered, headers: &HeaderMap) -> Response {
    let etag = HeaderValue::from_str(&r.etag).unwrap_or(HeaderValue::from_static("\"\""));
    // Every poll asks again: the answer changes with the game (and with the delay).
    let cache = HeaderValue::from_static("no-cache");
    if matches(headers, &r.etag) {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, etag), (header::CACHE_CONTROL, cache)],
        )
            .into_response();
    }
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)),
            (header::ETAG, etag),
            (header::CACHE_CONTROL, cache),
        ],
        r.body,
    )
        .into_response()
}

fn not_found(text: String) -> Response {
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        format!("{text}\n"),
    )
        .into_response()
}
