//! After an envelope's opening the daemon plays the sealed move itself (I.9.1) and the
//! e-board's move reader starts again from the position after it. The board still shows
//! the position before it until the arbiter makes the move there, and until then no move
//! made on the board is read (the reader waits for its start position). So the page asks
//! for the sealed move at once, and if the board does not show it within
//! [`SEALED_MOVE_WAIT`] a critical position alert says so (docs/ADJOURNMENT.md): moves
//! played meanwhile are lost to the record. Sans-IO: the actor arms it, tells it when the
//! board shows the position, and asks it what to raise when it is due.

use std::time::Duration;

use tokio::time::Instant;

use crate::alert::Said;
use crate::mqtt::payload::{AlertKind, Severity};
use crate::rules::Color;
use crate::rules::game::Event;
use serde_json::json;
use shakmaty::EnPassantMode;
use shakmaty::fen::Fen;

use super::BoardActor;

/// How long the arbiter has to make the sealed move on the e-board before the critical
/// alert. Long enough to walk to the board, open the envelope and make one move; short
/// enough that the responder has rarely moved yet.
pub const SEALED_MOVE_WAIT: Duration = Duration::from_secs(20);

/// The sealed move still to be made on the board, if any.
#[derive(Debug, Default)]
pub struct SealedWait {
    /// When the alert is due, the sealed move (SAN) and who made it; `due` is `None`
    /// once raised.
    waiting: Option<(Option<Instant>, Box<str>, Color)>,
}

impl SealedWait {
    /// The daemon played `san`, `side`'s sealed move, at `now`.
    pub fn arm(&mut self, now: Instant, san: &str, side: Color) {
        self.waiting = Some((Some(now + SEALED_MOVE_WAIT), san.into(), side));
    }

    /// The board shows the position after the sealed move (or the game is over, or has
    /// another position): nothing to wait for. True when an alert was raised (to clear).
    pub fn done(&mut self) -> bool {
        matches!(self.waiting.take(), Some((None, _, _)))
    }

    /// When the alert is due, while it is not raised.
    pub fn due(&self) -> Option<Instant> {
        self.waiting.as_ref().and_then(|(due, _, _)| *due)
    }

    /// Due: the alert's message, once.
    pub fn overdue(&mut self, board: &str) -> Option<Said> {
        let (due, san, side) = self.waiting.as_mut()?;
        due.take()?;
        let who = match side {
            Color::White => "White",
            Color::Black => "Black",
        };
        Some(Said::new(
            "irregular.sealed_move_not_shown",
            json!({ "board": board, "san": san, "side": side, "wait_ms": SEALED_MOVE_WAIT.as_millis() as u64 }),
            format!(
                "board {board}: play the sealed move {san} ({who}'s move, from the envelope) on the board — after {} s the e-board still shows the position before it, and no move made on it is recorded until it shows the sealed move",
                SEALED_MOVE_WAIT.as_secs()
            ),
        ))
    }
}

impl BoardActor {
    /// After each applied event: an opening's sealed move is to be made on the e-board;
    /// a game over, or a position set by the arbiter, leaves nothing to wait for.
    pub(super) fn sealed_move_follows(&mut self, event: &Event) {
        match event {
            Event::SealedMovePlayed { side, san, .. } if self.eboard => {
                self.sealed_wait.arm(Instant::now(), san, *side);
            }
            Event::GameEnded { .. } | Event::PositionSet { .. } => self.sealed_move_shown(),
            _ => {}
        }
    }

    /// The board shows the game's position (its reader started from it, or read a move
    /// from it): the sealed move is on the board.
    pub(super) fn sealed_move_shown(&mut self) {
        if self.sealed_wait.done() {
            self.clear(AlertKind::Irregular);
        }
    }

    /// The move reader found its start position (`fen`) on the board. Only the game's
    /// own position shows the sealed move: a reader started at the resumption (the
    /// position before it) can still report its start after the envelope's opening
    /// started the next one, and that must not end the wait.
    pub(super) fn reader_started(&mut self, fen: &str) {
        let current = self
            .slot
            .as_ref()
            .and_then(|slot| slot.game.position())
            .map(|p| Fen::from_position(p, EnPassantMode::Legal).to_string());
        if current.is_none_or(|c| same_position(&c, fen)) {
            self.sealed_move_shown();
        }
    }

    /// The wait is over and the board still does not show the sealed move.
    pub(super) fn sealed_move_overdue(&mut self) {
        if let Some(message) = self.sealed_wait.overdue(&self.id) {
            self.raise(AlertKind::Irregular, Severity::Critical, message);
        }
    }
}

/// Two FENs show the same position to a reader: the same pieces and the same side to
/// move (the counters and castling rights are not on the board).
fn same_position(a: &str, b: &str) -> bool {
    a.split(' ').take(2).eq(b.split(' ').take(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_i_9_1_a_stale_start_before_the_sealed_move_is_not_the_sealed_move_shown() {
        let before = "4k3/8/8/8/8/8/8/4K3 w - - 0 40";
        let after = "4k3/8/8/8/8/8/2K5/8 b - - 1 40";
        assert!(same_position(after, "4k3/8/8/8/8/8/2K5/8 b - - 0 1"));
        assert!(
            !same_position(after, before),
            "the position before the sealed move"
        );
        assert!(
            !same_position(after, "4k3/8/8/8/8/8/2K5/8 w - - 1 40"),
            "the other side to move"
        );
    }

    #[test]
    fn rule_i_9_1_the_alert_comes_once_after_the_wait_and_is_cleared_when_the_board_shows_it() {
        let t0 = Instant::now();
        let mut w = SealedWait::default();
        assert_eq!(w.due(), None);
        assert!(w.overdue("b1").is_none(), "nothing armed, nothing raised");
        w.arm(t0, "Kc2", Color::White);
        assert_eq!(w.due(), Some(t0 + SEALED_MOVE_WAIT));
        let m = w
            .overdue("b1")
            .map(|s| (s.code, s.message))
            .unwrap_or_default();
        assert!(
            m.1.contains("play the sealed move Kc2 (White's move"),
            "{m:?}"
        );
        assert_eq!(m.0, "irregular.sealed_move_not_shown");
        assert_eq!(w.due(), None, "raised: no longer due");
        assert!(w.overdue("b1").is_none(), "raised once");
        assert!(w.done(), "raised, so cleared");
        assert!(!w.done(), "cleared once");
    }

    #[test]
    fn rule_i_9_1_a_board_that_shows_the_move_in_time_raises_nothing() {
        let t0 = Instant::now();
        let mut w = SealedWait::default();
        w.arm(t0, "Kc2", Color::White);
        assert!(!w.done(), "shown in time: nothing to clear");
        assert_eq!(w.due(), None);
        assert!(w.overdue("b1").is_none());
    }
}
