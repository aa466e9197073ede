//! What a broadcast shows at a cut: pure, like `pgn/` (no I/O, no clock reads). The shell
//! hands in the games with their events and the instant `now - D`; out come the counts of
//! events shown and the text.

use crate::pgn::{self, GameInfo};
use crate::rules::Millis;
use crate::rules::game::{Event, Setup};

/// One game as the feed holds it: everything its PGN is made of.
#[derive(Debug, Clone)]
pub struct FeedGame {
    pub game_id: u64,
    pub board: String,
    pub info: GameInfo,
    pub setup: Setup,
    pub events: Vec<Event>,
    /// A result is in (an adjourned game has none).
    pub finished: bool,
}

/// Where a feed is cut: `None` shows every event (no delay, the live game), `Some(t)` the
/// events at or before `t`.
pub fn cut(now: Millis, delay: Millis) -> Option<Millis> {
    (delay > Millis::ZERO).then(|| now - delay)
}

/// How many of the game's events the feed shows at `cut`. Events come in time order (the
/// core never goes back in time), so this is [`pgn::events_until`]'s prefix, found by
/// bisection: a poll of a 1000-board round counts every game.
pub fn shown(game: &FeedGame, cut: Option<Millis>) -> usize {
    match cut {
        None => game.events.len(),
        Some(t) => game.events.partition_point(|e| e.at() <= t),
    }
}

/// The game's PGN with its first `n` events: as it was at the cut, clocks frozen there.
pub fn text(game: &FeedGame, n: usize) -> String {
    let n = n.min(game.events.len());
    pgn::game(&game.setup, &game.events[..n], &game.info).render()
}

/// A round's games as one multi-game PGN, as [`pgn::round`] joins them.
pub fn round_text<'a>(games: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, g) in games.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(g);
    }
    out
}
