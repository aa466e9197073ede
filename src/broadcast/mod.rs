//! The broadcast feed (docs/BROADCAST.md): every round's games as PGN over HTTP, delayed
//! at the source, optionally pushed to a lichess broadcast round, and archived when the
//! round ends.
//!
//! The board actors hand each game to a [`FeedWriter`] where they publish the retained
//! `board/<b>/pgn` (so the feed holds exactly the stored events); it keeps them in a
//! `tokio::sync::watch` of per-round games. [`BroadcastSource`] is the reading end the web
//! server mounts ([`router`]) and the push task watches. What a delayed feed shows is
//! computed from the events' own instants ([`view`]), never stored, so a restart neither
//! leaks nor loses the delay; the round's delay itself is written to
//! `<state_dir>/broadcast/round-N.delay` when the round starts. MQTT stays live.

pub mod archive;
pub mod copied;
mod http;
pub mod push;
pub mod view;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::rules::Millis;

pub use http::router;
pub use view::FeedGame;

/// The longest broadcast delay, in minutes (lichess's own limit is an hour too).
pub const MAX_DELAY_MINUTES: u32 = 60;

/// `[broadcast]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BroadcastSettings {
    /// The event's delay (`delay_minutes`); a round may say otherwise at its start.
    pub delay: Millis,
    /// `event` and `site`: the PGN's `Event` and `Site` tags for every round that does not
    /// bring its own (from `start_round` or its TRF).
    pub tags: RoundTags,
    /// `[broadcast.lichess]`: push every change to a lichess broadcast round.
    pub lichess: Option<LichessSettings>,
}

/// A round's `Event` and `Site` tags; `None` is written `?`. lichess identifies a pushed
/// game by its event, round and players, so these stay the same for the whole round: they
/// are fixed when the round starts and stored with it (`round-N.tags`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundTags {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

impl RoundTags {
    /// Each tag from `self` when it has one, else from `other`.
    pub fn or(self, other: &RoundTags) -> RoundTags {
        RoundTags {
            event: self.event.or_else(|| other.event.clone()),
            site: self.site.or_else(|| other.site.clone()),
        }
    }
}

/// `[broadcast.lichess]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LichessSettings {
    /// `https://lichess.org` unless a test says otherwise.
    pub base_url: String,
    /// The lichess broadcast round's id (8 characters in its URL), for a hall round that
    /// goes whole to one lichess round; empty when `rounds` splits it.
    pub round_id: String,
    /// `rounds`: board ranges, each pushed to its own lichess round (a lichess push takes
    /// at most 100 games). Empty: the whole round goes to `round_id`.
    pub rounds: Vec<LichessRound>,
    /// A file holding the organiser's token (scope `study:write`), root's alone.
    pub token_file: PathBuf,
}

impl LichessSettings {
    /// Where the games go: the ranges of `rounds`, or every board to `round_id`.
    pub fn targets(&self) -> Vec<LichessRound> {
        if self.rounds.is_empty() {
            vec![LichessRound {
                boards: None,
                round_id: self.round_id.clone(),
            }]
        } else {
            self.rounds.clone()
        }
    }
}

/// One lichess round of a hall round: the boards it shows and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LichessRound {
    /// `None`: every board (the plain `round_id`).
    pub boards: Option<BoardRange>,
    pub round_id: String,
}

/// Board numbers `first` to `last`, both included: the numbers the PGN's `Round "r.b"` and
/// `Board` tags show, i.e. the games' order in `games.pgn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardRange {
    pub first: u32,
    pub last: u32,
}

/// Why a board range does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardRangeError {
    #[error(
        "'{0}' is not a board range: write \"1-100\" (boards 1 to 100) or \"7\" (board 7 alone)"
    )]
    Syntax(String),
    #[error("'{0}': boards are numbered from 1")]
    Zero(String),
    #[error("'{0}': the first board comes after the last")]
    Reversed(String),
}

impl BoardRange {
    pub fn parse(text: &str) -> Result<BoardRange, BoardRangeError> {
        let number = |t: &str| {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(BoardRangeError::Syntax(text.to_string()));
            }
            t.parse::<u32>()
                .map_err(|_| BoardRangeError::Syntax(text.to_string()))
        };
        let (first, last) = match text.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(text)?;
                (n, n)
            }
        };
        if first == 0 {
            return Err(BoardRangeError::Zero(text.to_string()));
        }
        if first > last {
            return Err(BoardRangeError::Reversed(text.to_string()));
        }
        Ok(BoardRange { first, last })
    }

    pub fn contains(&self, board: u32) -> bool {
        (self.first..=self.last).contains(&board)
    }

    pub fn overlaps(&self, other: &BoardRange) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    /// How many boards it holds.
    pub fn len(&self) -> u64 {
        u64::from(self.last - self.first) + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl std::fmt::Display for BoardRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

/// A delay in minutes as the feed keeps it.
pub fn minutes(m: u32) -> Millis {
    Millis(i64::from(m) * 60_000)
}

/// One round of the feed: its delay, its tags and its games by board (board number, then id).
#[derive(Debug, Clone, Default)]
pub struct FeedRound {
    pub delay: Millis,
    /// `Event` and `Site` of every game of the round.
    pub tags: RoundTags,
    pub games: BTreeMap<(u32, String), Arc<FeedGame>>,
}

impl FeedRound {
    /// A game's newest picture, at its board. Usually it replaces its own older picture
    /// there; only a game that has left another board (6.10) is searched for elsewhere.
    /// That search walks every game of the round, so doing it on every update cost a
    /// 5000-board hall a sixth of the daemon's CPU (docs/BENCHMARKS.md).
    fn put(&mut self, game: FeedGame) {
        let key = board_key(&game.board);
        if self
            .games
            .get(&key)
            .is_none_or(|old| old.game_id != game.game_id)
        {
            self.games.retain(|_, old| old.game_id != game.game_id);
        }
        self.games.insert(key, Arc::new(game));
    }

    /// Every game has a result (and there is one).
    pub fn finished(&self) -> bool {
        !self.games.is_empty() && self.games.values().all(|g| g.finished)
    }
}

/// Every round the daemon holds, the current one, and the rounds let go.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    pub current: Option<u32>,
    pub rounds: BTreeMap<u32, FeedRound>,
    /// Rounds older than the current and the previous one, evicted so that a long event
    /// does not keep every game's events in memory: each game's id and the number of
    /// events it had then (to tell a later correction from a board republishing its last
    /// game). Read again from the journal when asked for.
    pub evicted: BTreeMap<u32, HashMap<u64, usize>>,
}

impl Feed {
    /// Let go of the rounds older than the current one and the one before it.
    fn evict(&mut self) {
        let Some(current) = self.current else { return };
        let Some(previous) = self.rounds.range(..current).next_back().map(|(n, _)| *n) else {
            return;
        };
        let old: Vec<u32> = self.rounds.range(..previous).map(|(n, _)| *n).collect();
        for n in old {
            if let Some(r) = self.rounds.remove(&n) {
                let seen = r
                    .games
                    .values()
                    .map(|g| (g.game_id, g.revision()))
                    .collect();
                tracing::debug!(round = n, "broadcast: round evicted from memory");
                self.evicted.insert(n, seen);
            }
        }
    }
}

/// The board order key: the number in the board id, then the id.
fn board_key(board: &str) -> (u32, String) {
    (
        crate::pgn::board_number(board).unwrap_or(u32::MAX),
        board.to_string(),
    )
}

/// Why a round's delay could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DelayError {
    #[error("broadcast_delay_minutes: {0} is out of range (0 to 60)")]
    TooLong(u32),
    #[error("the round's broadcast delay could not be stored in {path}: {source}")]
    NotStored {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The writing end, held by the hall and every board actor.
#[derive(Debug, Clone)]
pub struct FeedWriter {
    tx: Arc<watch::Sender<Feed>>,
    state_dir: PathBuf,
    /// The event's delay, for rounds that started without one written.
    default_delay: Millis,
    /// The event's tags (`[broadcast] event`, `site`), likewise.
    default_tags: RoundTags,
    /// Archives that could not be written, retried until they are.
    archives: Arc<Mutex<Archives>>,
}

/// Write `bytes` to `path` so that a reader sees the old file or the new one, never a
/// part: a temporary file, synced, renamed over it, then the directory synced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        // A full disk leaves a created but empty (or short) file: never kept (issue 36).
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::File::open(dir)?.sync_all()
}

/// How often a round's archive that could not be written is tried again.
const ARCHIVE_RETRY: Duration = Duration::from_secs(5);

/// The archives that could not be written, and where their alert goes (issue 36).
#[derive(Default)]
struct Archives {
    /// Round -> why its archive is not written (the file and the error).
    failed: BTreeMap<u32, String>,
    sink: Option<crate::broadcast::push::AlertSink>,
    /// A retry task runs.
    retrying: bool,
    since: Option<Millis>,
}

impl std::fmt::Debug for Archives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archives")
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// The hall-level alert's base id: `alert/pgn-archive-<node>` (`board: null`, kind `storage`).
pub const ARCHIVE_ALERT: &str = "pgn-archive";

impl Archives {
    /// Raise the alert for what failed, or clear it when nothing is left.
    fn tell(&mut self, now: Millis) {
        let Some(sink) = &self.sink else { return };
        let id = crate::alert::node_alert_id(ARCHIVE_ALERT, &sink.node);
        if self.failed.is_empty() {
            if self.since.take().is_some() {
                sink.publisher.clear_alert(&sink.topics, &id);
            }
            return;
        }
        let since = *self.since.get_or_insert(now);
        let message = self
            .failed
            .iter()
            .map(|(round, why)| format!("round {round}: {why}"))
            .collect::<Vec<_>>()
            .join("; ");
        sink.publisher.json_retained(
            sink.topics.alert(&id),
            &crate::mqtt::payload::AlertPayload {
                id: id.clone(),
                board: None,
                kind: crate::mqtt::payload::AlertKind::Storage,
                // The rounds as data; why each failed is the operating system's words.
                code: "storage.pgn_archive".into(),
                params: serde_json::Map::from_iter([
                    (
                        "rounds".to_string(),
                        serde_json::json!(self.failed.keys().copied().collect::<Vec<_>>()),
                    ),
                    (
                        "why".to_string(),
                        serde_json::json!(
                            self.failed
                                .values()
                                .collect::<std::collections::BTreeSet<_>>()
                                .into_iter()
                                .map(String::as_str)
                                .collect::<Vec<_>>()
                                .join("; ")
                        ),
                    ),
                    ("retry_ms".to_string(), serde_json::json!(ARCHIVE_RETRY.as_millis() as u64)),
                ]),
                severity: crate::mqtt::payload::Severity::Warning,
                message: format!(
                    "the round's PGN archive could not be written ({message}); tried again every {} s. Free space in the state directory; `hallclock pgn --round N` prints a round from the journal meanwhile",
                    ARCHIVE_RETRY.as_secs()
                ),
                since,
                error: None,
            },
        );
    }
}

impl FeedWriter {
    /// The feed as the journal left it: every game of every round (`games` from the
    /// journal's records), each round's stored delay, the latest round as the current one.
    /// A finished round whose archive is missing (a crash in between) is archived now.
    pub fn recovered(
        state_dir: &Path,
        default_delay: Millis,
        default_tags: RoundTags,
        games: impl IntoIterator<Item = (u64, crate::store::JournaledGame)>,
    ) -> FeedWriter {
        let mut feed = Feed::default();
        let mut tags: BTreeMap<u32, RoundTags> = BTreeMap::new();
        for (id, g) in games {
            let Some(round) = g.round else { continue };
            let t = tags
                .entry(round)
                .or_insert_with(|| read_tags(state_dir, round).unwrap_or(default_tags.clone()));
            let fg = journaled(id, g, t);
            feed.rounds.entry(round).or_default().put(fg);
        }
        for (n, r) in &mut feed.rounds {
            r.delay = read_delay(state_dir, *n).unwrap_or(default_delay);
            r.tags = tags.remove(n).unwrap_or_default();
        }
        feed.current = feed.rounds.keys().next_back().copied();
        let w = FeedWriter {
            tx: Arc::new(watch::Sender::new(feed)),
            state_dir: state_dir.to_path_buf(),
            default_delay,
            default_tags,
            archives: Arc::default(),
        };
        let missing: Vec<u32> =
            w.tx.borrow()
                .rounds
                .iter()
                .filter(|(n, r)| r.finished() && !archive_path(state_dir, **n).exists())
                .map(|(n, _)| *n)
                .collect();
        for n in missing {
            w.archive(n);
        }
        // Only then: a round archived above may be one to let go of.
        w.tx.send_modify(Feed::evict);
        w
    }

    /// The reading end; `now` is the daemon's clock (the hall's timebase).
    pub fn source(&self, now: Arc<dyn Fn() -> Millis + Send + Sync>) -> BroadcastSource {
        BroadcastSource {
            feed: self.tx.subscribe(),
            now,
            cache: Arc::new(Mutex::new(http::Cache::default())),
            journal: Arc::new(JournalRounds {
                state_dir: self.state_dir.clone(),
                default_delay: self.default_delay,
                default_tags: self.default_tags.clone(),
            }),
        }
    }

    fn journal(&self) -> JournalRounds {
        JournalRounds {
            state_dir: self.state_dir.clone(),
            default_delay: self.default_delay,
            default_tags: self.default_tags.clone(),
        }
    }

    /// A round starts with `delay_minutes` (or the event's delay) and `tags` (each tag it
    /// lacks from the event's): stored before any of its games is, so no game of the round
    /// is ever shown without its delay, and its tags survive a restart (lichess identifies
    /// a pushed game by them: they must not change under it).
    pub fn start_round(
        &self,
        round: u32,
        delay_minutes: Option<u32>,
        tags: RoundTags,
    ) -> Result<(), DelayError> {
        let delay = match delay_minutes {
            Some(m) if m > MAX_DELAY_MINUTES => return Err(DelayError::TooLong(m)),
            Some(m) => minutes(m),
            None => self.default_delay,
        };
        let tags = tags.or(&self.default_tags);
        let path = delay_path(&self.state_dir, round);
        write_atomically(&path, format!("{}\n", delay.0).as_bytes())
            .map_err(|source| DelayError::NotStored { path, source })?;
        let path = tags_path(&self.state_dir, round);
        let text = serde_json::to_vec(&tags).unwrap_or_default();
        write_atomically(&path, &text).map_err(|source| DelayError::NotStored { path, source })?;
        self.tx.send_modify(|f| {
            let r = f.rounds.entry(round).or_default();
            r.delay = delay;
            r.tags = tags;
            f.current = Some(round);
            f.evict();
        });
        Ok(())
    }

    /// The round's `Event` and `Site` as its games carry them (its own, its TRF's or the
    /// event's), for the hall's `info` and the `/public` heading.
    pub fn round_tags(&self, round: u32) -> RoundTags {
        if let Some(r) = self.tx.borrow().rounds.get(&round) {
            return r.tags.clone();
        }
        read_tags(&self.state_dir, round).unwrap_or_else(|| self.default_tags.clone())
    }

    /// A board's game as it now stands (called where `board/<b>/pgn` is published).
    pub fn game(&self, game: FeedGame, round: u32) {
        if let Some(seen) = self.tx.borrow().evicted.get(&round) {
            // A board republishing the game it held when the round was evicted changes
            // nothing; a change (a result corrected later) is in the journal already, so
            // the archive is rewritten from there and the round stays out of memory.
            if seen.get(&game.game_id) == Some(&game.revision()) {
                return;
            }
        } else {
            return self.live_game(game, round);
        }
        self.tx.send_modify(|f| {
            if let Some(seen) = f.evicted.get_mut(&round) {
                seen.insert(game.game_id, game.revision());
            }
        });
        if let Some(r) = self.journal().round(round)
            && r.finished()
        {
            self.write_archive(round, r.games.values());
        }
    }

    /// Another node's retained `board/<b>/pgn`, as it arrived at `now` (the MQTT task hands
    /// it over: `mqtt::foreign::Copies`). Its game joins its round in board order, beside
    /// this node's, so `games.pgn` and the lichess push are the whole hall's. A board of
    /// this node's is never replaced by a copy; an empty text (the board has no game now:
    /// its game moved away, 6.10) takes out that board's unfinished copy, while a finished
    /// one stays the record; a round let go of from memory is not changed by copies.
    pub fn copied(&self, board: &str, payload: &[u8], now: Millis) {
        if payload.is_empty() {
            self.tx.send_if_modified(|f| {
                let mut changed = false;
                for r in f.rounds.values_mut() {
                    let key = board_key(board);
                    if r.games
                        .get(&key)
                        .is_some_and(|g| matches!(g.body, view::Body::Copied(_)) && !g.finished)
                    {
                        r.games.remove(&key);
                        changed = true;
                    }
                }
                changed
            });
            return;
        }
        let (heading, text) = match copied::heading(payload) {
            Ok(h) => h,
            Err(why) => {
                tracing::debug!(
                    board = %crate::intake::command::log_safe(board),
                    "another node's PGN not taken into the broadcast: {why}"
                );
                return;
            }
        };
        let round = heading.round;
        if self.tx.borrow().evicted.contains_key(&round) {
            return;
        }
        let default_delay = self.default_delay;
        let default_tags = self.default_tags.clone();
        let state_dir = self.state_dir.clone();
        let text: Arc<str> = text.into();
        let mut finished = false;
        self.tx.send_if_modified(|f| {
            let fresh = !f.rounds.contains_key(&round);
            let r = f.rounds.entry(round).or_default();
            if fresh {
                // A round this node did not start (it came up later): as it would read it.
                r.delay = read_delay(&state_dir, round).unwrap_or(default_delay);
                r.tags = read_tags(&state_dir, round).unwrap_or(default_tags);
            }
            let key = board_key(board);
            let mut copy = match r.games.get(&key).map(|g| &g.body) {
                Some(view::Body::Events { .. }) => return false,
                Some(view::Body::Copied(c)) => c.clone(),
                None => copied::Copied::default(),
            };
            let before = copy.revision();
            copy.push(now, text, view::cut(now, r.delay));
            if copy.revision() == before {
                return false;
            }
            let game = FeedGame {
                game_id: copied_id(board, round),
                board: board.to_string(),
                info: crate::pgn::GameInfo {
                    event: r.tags.event.clone(),
                    site: r.tags.site.clone(),
                    round: Some(round),
                    board: crate::pgn::board_number(board),
                    ..crate::pgn::GameInfo::default()
                },
                body: view::Body::Copied(copy),
                finished: heading.finished,
            };
            r.games.insert(key, Arc::new(game));
            finished = r.finished();
            if f.current.is_none_or(|c| c < round) {
                f.current = Some(round);
                f.evict();
            }
            true
        });
        if finished {
            self.archive(round);
        }
    }

    fn live_game(&self, mut game: FeedGame, round: u32) {
        let mut finished = false;
        self.tx.send_modify(|f| {
            let r = f.rounds.entry(round).or_default();
            game.info.event.clone_from(&r.tags.event);
            game.info.site.clone_from(&r.tags.site);
            r.put(game);
            finished = r.finished();
        });
        // Every result is in: the archive is (re)written, so a score the arbiter corrects
        // after the end reaches it too.
        if finished {
            self.archive(round);
        }
    }

    /// Write the round's whole (undelayed) PGN to `<state_dir>/pgn/round-N.pgn`.
    fn archive(&self, round: u32) {
        let games: Vec<Arc<FeedGame>> = match self.tx.borrow().rounds.get(&round) {
            Some(r) => r.games.values().cloned().collect(),
            None => Vec::new(),
        };
        if !games.is_empty() {
            return self.write_archive(round, games.iter());
        }
        // Let go of from memory meanwhile (a retry long after): read again.
        if let Some(r) = self.journal().round(round)
            && r.finished()
        {
            self.write_archive(round, r.games.values());
        }
    }

    /// Raise the archive alert through `sink` (the hall's publisher), for what failed
    /// before it was there too (a start-up's archiving).
    pub fn alert_through(&self, sink: crate::broadcast::push::AlertSink, now: Millis) {
        let mut a = self.archives.lock().unwrap_or_else(|p| p.into_inner());
        a.sink = Some(sink);
        a.tell(now);
    }

    /// Note how writing round `round`'s archive went; a failure is retried periodically
    /// until it is written (when a tokio runtime is there to do it).
    fn archived(&self, round: u32, outcome: Result<(), String>) {
        let now = crate::rules::Millis(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
        );
        let mut a = self.archives.lock().unwrap_or_else(|p| p.into_inner());
        let changed = match outcome {
            Ok(()) => a.failed.remove(&round).is_some(),
            Err(why) => a.failed.insert(round, why.clone()).as_ref() != Some(&why),
        };
        if changed {
            a.tell(now);
        }
        if a.failed.is_empty() || a.retrying {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        a.retrying = true;
        let w = self.clone();
        rt.spawn(async move {
            loop {
                tokio::time::sleep(ARCHIVE_RETRY).await;
                let rounds: Vec<u32> = {
                    let mut a = w.archives.lock().unwrap_or_else(|p| p.into_inner());
                    if a.failed.is_empty() {
                        a.retrying = false;
                        return;
                    }
                    a.failed.keys().copied().collect()
                };
                for round in rounds {
                    w.archive(round);
                }
            }
        });
    }

    fn write_archive<'a>(&self, round: u32, games: impl Iterator<Item = &'a Arc<FeedGame>>) {
        let games: Vec<&Arc<FeedGame>> = games.collect();
        let path = archive_path(&self.state_dir, round);
        let texts: Vec<String> = games
            .iter()
            .map(|g| view::text(g, view::shown(g, None)))
            .collect();
        let body = view::round_text(texts.iter().map(String::as_str));
        match archive::write(&path, &body) {
            Ok(archive::Written::Archived) => {
                tracing::info!(round, path = %path.display(), "round archived as PGN");
                self.archived(round, Ok(()));
            }
            Ok(archive::Written::Beside(beside, why)) => {
                tracing::warn!(
                    round,
                    "round {round}'s PGN archive {} was kept: the new text {why}; the new text is beside it at {} for the arbiter to compare",
                    path.display(),
                    beside.display()
                );
                self.archived(round, Ok(()));
            }
            Err(e) => {
                let first = !self
                    .archives
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .failed
                    .contains_key(&round);
                if first {
                    tracing::error!(
                        round,
                        "the round's PGN could not be archived at {}: {e}; tried again every {} s; `hallclock pgn --round {round}` prints it from the journal",
                        path.display(),
                        ARCHIVE_RETRY.as_secs()
                    );
                }
                self.archived(round, Err(format!("{}: {e}", path.display())));
            }
        }
    }
}

/// The other nodes' games, as the MQTT task receives them.
impl crate::mqtt::foreign::Copies for FeedWriter {
    fn pgn(&self, board: &str, payload: &[u8], now: Millis) {
        self.copied(board, payload, now);
    }
}

/// Where an evicted round is read again: the journal, with the round's stored delay and
/// tags (or the event's), exactly as [`FeedWriter::recovered`] reads it at a start, so
/// the text served again is the text served before.
#[derive(Debug, Clone)]
struct JournalRounds {
    state_dir: PathBuf,
    default_delay: Millis,
    default_tags: RoundTags,
}

impl JournalRounds {
    /// Round `n` from the journal; `None` when it cannot be read or has no game there.
    fn round(&self, n: u32) -> Option<FeedRound> {
        let dir = self.state_dir.join("journal");
        let scan = match crate::store::read_dir(&dir) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(
                    round = n,
                    "broadcast: cannot read the journal at {}: {e}",
                    dir.display()
                );
                return None;
            }
        };
        let tags = read_tags(&self.state_dir, n).unwrap_or(self.default_tags.clone());
        let mut round = FeedRound {
            delay: read_delay(&self.state_dir, n).unwrap_or(self.default_delay),
            tags,
            games: BTreeMap::new(),
        };
        let games = crate::store::games::games(scan.records.into_iter().map(|(r, _, _)| r));
        for (id, g) in games {
            if g.round != Some(n) {
                continue;
            }
            let fg = journaled(id, g, &round.tags);
            round.put(fg);
        }
        (!round.games.is_empty()).then_some(round)
    }
}

fn journaled(id: u64, g: crate::store::JournaledGame, tags: &RoundTags) -> FeedGame {
    let info = crate::pgn::GameInfo {
        event: tags.event.clone(),
        site: tags.site.clone(),
        round: g.round,
        board: crate::pgn::board_number(&g.board),
        white_fide_id: g.fide.0,
        black_fide_id: g.fide.1,
    };
    FeedGame {
        game_id: id,
        finished: g.finished(),
        board: g.board,
        info,
        body: view::Body::Events {
            setup: Box::new(g.setup),
            events: g.events,
        },
    }
}

/// A copied game's id in the feed: from its board and round, with the top bit set so it
/// never meets one of this node's game ids (a counter from 0).
fn copied_id(board: &str, round: u32) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same id for the same game in every run.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    board.hash(&mut h);
    round.hash(&mut h);
    h.finish() | (1 << 63)
}

/// `<state_dir>/broadcast/round-N.delay`: the round's delay in ms.
fn delay_path(state_dir: &Path, round: u32) -> PathBuf {
    state_dir
        .join("broadcast")
        .join(format!("round-{round}.delay"))
}

/// `<state_dir>/broadcast/round-N.tags`: the round's `Event` and `Site`, as JSON.
fn tags_path(state_dir: &Path, round: u32) -> PathBuf {
    state_dir
        .join("broadcast")
        .join(format!("round-{round}.tags"))
}

/// The `Event` and `Site` a round's games were broadcast with, as stored at its start
/// (`hallclock pgn` gives its games the same tags).
pub fn read_tags(state_dir: &Path, round: u32) -> Option<RoundTags> {
    let text = std::fs::read(tags_path(state_dir, round)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// `<state_dir>/pgn/round-N.pgn`: a finished round's PGN.
pub fn archive_path(state_dir: &Path, round: u32) -> PathBuf {
    state_dir.join("pgn").join(format!("round-{round}.pgn"))
}

fn read_delay(state_dir: &Path, round: u32) -> Option<Millis> {
    let text = std::fs::read_to_string(delay_path(state_dir, round)).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|ms| (0..=minutes(MAX_DELAY_MINUTES).0).contains(ms))
        .map(Millis)
}

/// What the daemon hands the web server and the push task: the feed, its clock, and the
/// rendered texts (shared by every request, so a poll of an unchanged round renders
/// nothing).
#[derive(Clone)]
pub struct BroadcastSource {
    feed: watch::Receiver<Feed>,
    now: Arc<dyn Fn() -> Millis + Send + Sync>,
    cache: Arc<Mutex<http::Cache>>,
    /// Where an evicted round is read again.
    journal: Arc<JournalRounds>,
}

impl std::fmt::Debug for BroadcastSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BroadcastSource").finish_non_exhaustive()
    }
}

/// A rendered answer: the body and its strong ETag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: bytes::Bytes,
    /// `"…"`, quotes included: the hash of the body.
    pub etag: String,
}

/// A round's number, delay, games, and whether it was read from the journal.
type RoundGames = (u32, Millis, Vec<Arc<FeedGame>>, bool);

/// A round as the feed shows it now: see [`BroadcastSource::round_at`].
#[derive(Debug, Clone)]
pub struct RoundAt {
    pub number: u32,
    pub cut: Option<Millis>,
    pub games: Vec<Arc<FeedGame>>,
}

/// Which round a request means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Round(u32),
    Current,
}

/// Why a feed has nothing to answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotInFeed {
    #[error("no round has started yet")]
    NoCurrentRound,
    #[error("round {0} has no game in this hall's broadcast")]
    NoRound(u32),
    #[error("round {round} has no game on board {board}")]
    NoBoard { round: u32, board: u32 },
}

impl BroadcastSource {
    /// A change in the feed (a new event stored, a round started).
    pub async fn changed(&mut self) -> bool {
        self.feed.changed().await.is_ok()
    }

    pub fn now(&self) -> Millis {
        (self.now)()
    }

    /// The round's number, delay and games, and whether it came from the journal (an
    /// evicted round: its texts are not kept in the cache).
    fn round_games(&self, which: Which) -> Result<RoundGames, NotInFeed> {
        let n = {
            let feed = self.feed.borrow();
            self.forget_evicted(&feed);
            let n = match which {
                Which::Round(n) => n,
                Which::Current => feed.current.ok_or(NotInFeed::NoCurrentRound)?,
            };
            if let Some(r) = feed.rounds.get(&n) {
                if r.games.is_empty() {
                    return Err(NotInFeed::NoRound(n));
                }
                return Ok((n, r.delay, r.games.values().cloned().collect(), false));
            }
            if !feed.evicted.contains_key(&n) {
                return Err(NotInFeed::NoRound(n));
            }
            n
        };
        // Read outside the feed's lock: the board actors keep publishing meanwhile.
        let r = self.journal.round(n).ok_or(NotInFeed::NoRound(n))?;
        Ok((n, r.delay, r.games.values().cloned().collect(), true))
    }

    /// The cache lets go of the texts of evicted rounds (once per eviction).
    fn forget_evicted(&self, feed: &Feed) {
        let mut cache = http::lock(&self.cache);
        if cache.evicted_seen == feed.evicted.len() {
            return;
        }
        cache.evicted_seen = feed.evicted.len();
        cache.rounds.retain(|n, _| !feed.evicted.contains_key(n));
        let live: std::collections::HashSet<u64> = feed
            .rounds
            .values()
            .flat_map(|r| r.games.values().map(|g| g.game_id))
            .collect();
        cache.games.retain(|(id, _), _| live.contains(id));
    }

    /// Whether round `n` is read from the journal when asked for (evicted from memory).
    pub fn is_evicted(&self, n: u32) -> bool {
        self.feed.borrow().evicted.contains_key(&n)
    }

    /// The round's number, where the feed cuts it now (its delay) and its games in board
    /// order: what the push splits between lichess rounds.
    pub fn round_at(&self, which: Which) -> Result<RoundAt, NotInFeed> {
        let (number, delay, mut games, _) = self.round_games(which)?;
        let cut = view::cut(self.now(), delay);
        games.retain(|g| g.visible(cut));
        Ok(RoundAt { number, cut, games })
    }

    /// Some of a round's games at `cut`, as one multi-game PGN (each game's text from the
    /// shared cache): one lichess round's push.
    pub fn render_games(&self, games: &[Arc<FeedGame>], cut: Option<Millis>) -> Rendered {
        http::render_games(&self.cache, games, cut)
    }

    /// The round's games in board order, as the feed shows them now (delayed).
    pub fn round(&self, which: Which) -> Result<Rendered, NotInFeed> {
        let (n, delay, mut games, from_journal) = self.round_games(which)?;
        let cut = view::cut(self.now(), delay);
        games.retain(|g| g.visible(cut));
        if games.is_empty() {
            return Err(NotInFeed::NoRound(n));
        }
        if from_journal {
            // Rendered aside: an evicted round stays out of memory once answered.
            let aside = Mutex::new(http::Cache::default());
            return Ok(http::render_round(&aside, n, &games, cut));
        }
        Ok(http::render_round(&self.cache, n, &games, cut))
    }

    /// One board's game (by its number), as the feed shows it now (delayed).
    pub fn board(&self, which: Which, board: u32) -> Result<Rendered, NotInFeed> {
        let (n, delay, games, from_journal) = self.round_games(which)?;
        let cut = view::cut(self.now(), delay);
        let g = games
            .iter()
            .find(|g| g.info.board == Some(board) && g.visible(cut))
            .ok_or(NotInFeed::NoBoard { round: n, board })?;
        if from_journal {
            return Ok(http::render_game(
                &Mutex::new(http::Cache::default()),
                g,
                cut,
            ));
        }
        Ok(http::render_game(&self.cache, g, cut))
    }

    /// The current round's number and delay.
    pub fn current(&self) -> Option<(u32, Millis)> {
        let feed = self.feed.borrow();
        let n = feed.current?;
        Some((n, feed.rounds.get(&n).map_or(Millis::ZERO, |r| r.delay)))
    }
}

#[cfg(test)]
mod tests;
