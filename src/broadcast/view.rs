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
    pub body: Body,
    /// A result is in (an adjourned game has none).
    pub finished: bool,
}

/// What a game's text is made of.
#[derive(Debug, Clone)]
pub enum Body {
    /// This node's game: its setup and stored events, so the text at any cut is computed.
    /// (The setup boxed: with the players' titles and ratings it outgrew the other variant.)
    Events {
        setup: Box<Setup>,
        events: Vec<Event>,
    },
    /// Another node's game: the texts its owner published (`copied.rs`).
    Copied(super::copied::Copied),
}

impl FeedGame {
    /// How far the game has come: its events, or its owner's texts. A game republished
    /// with the same revision has not changed.
    pub fn revision(&self) -> usize {
        match &self.body {
            Body::Events { events, .. } => events.len(),
            Body::Copied(c) => c.revision(),
        }
    }

    /// When what is shown after `shown` came to be: until then a delayed feed shows the same.
    pub fn next_at(&self, shown: usize) -> Option<Millis> {
        match &self.body {
            Body::Events { events, .. } => events.get(shown).map(Event::at),
            Body::Copied(c) => c.next_at(shown),
        }
    }

    /// Another node's game none of whose texts a delayed feed may show yet is left out
    /// (its first text may already hold moves); this node's games always have a text.
    pub fn visible(&self, cut: Option<Millis>) -> bool {
        match &self.body {
            Body::Events { .. } => true,
            Body::Copied(c) => c.shown(cut) > 0,
        }
    }
}

/// Where a feed is cut: `None` shows every event (no delay, the live game), `Some(t)` the
/// events at or before `t`.
pub fn cut(now: Millis, delay: Millis) -> Option<Millis> {
    (delay > Millis::ZERO).then(|| now - delay)
}

/// How many of the game's events the feed shows at `cut`. Events come in time order (the
/// core never goes back in time), so this is [`pgn::events_until`]'s prefix, found by
/// bisection: a poll of a 1000-board round counts every game.
/// Another node's game counts its owner's texts instead (`Copied::shown`).
pub fn shown(game: &FeedGame, cut: Option<Millis>) -> usize {
    match (&game.body, cut) {
        (Body::Events { events, .. }, None) => events.len(),
        (Body::Events { events, .. }, Some(t)) => events.partition_point(|e| e.at() <= t),
        (Body::Copied(c), cut) => c.shown(cut),
    }
}

/// The game's PGN with its first `n` events: as it was at the cut, clocks frozen there.
/// Another node's game: its owner's `n`th text, with the round's `Event` and `Site`.
pub fn text(game: &FeedGame, n: usize) -> String {
    match &game.body {
        Body::Events { setup, events } => {
            let n = n.min(events.len());
            pgn::game(setup, &events[..n], &game.info).render()
        }
        Body::Copied(c) => c.text(n, game.info.event.as_deref(), game.info.site.as_deref()),
    }
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
