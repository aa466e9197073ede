//! E-board move settling: a move read from the board waits for its press (a slide may
//! still be corrected), and is final once the board has been still for [`MOVE_SETTLE`].
//! A press that comes before that goes without the move, which is then owed and attached
//! when the board is still. Sans-IO: instants are passed in; the actor reads the clock.

use std::time::Duration;

use tokio::time::Instant;

/// How long the board must be still before a move read from it is final.
pub const MOVE_SETTLE: Duration = Duration::from_millis(250);

/// A move read from the e-board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardMove {
    pub uci: String,
    /// The move reader's ply number (1 = the first move of the game on the board).
    pub ply: usize,
}

/// The board's moves between the reader and the rules.
#[derive(Debug, Default)]
pub struct Settling {
    /// The e-board move waiting for its press, or owed by a press that came before it was
    /// final.
    pending: Option<BoardMove>,
    /// The last field update from the board: a move is final once the board is still.
    last_field_at: Option<Instant>,
    /// When to attach the owed move (the board has been still since).
    attach_at: Option<Instant>,
    /// The ply the last press carried: a correction of it after the press cannot be
    /// applied (the arbiter is told).
    carried: Option<usize>,
}

impl Settling {
    /// A new game or position on the board: nothing read before it belongs to it.
    pub fn forget(&mut self) {
        self.pending = None;
        self.attach_at = None;
        self.carried = None;
    }

    pub fn attach_at(&self) -> Option<Instant> {
        self.attach_at
    }

    pub fn pending(&self) -> Option<&BoardMove> {
        self.pending.as_ref()
    }

    /// A field changed at `now`: an attachment waiting for stillness waits again.
    pub fn field_changed(&mut self, now: Instant) {
        self.last_field_at = Some(now);
        if self.attach_at.is_some() {
            self.attach_at = Some(now + MOVE_SETTLE);
        }
    }

    /// The move a press at `now` carries: the pending move if the board has been still
    /// long enough; otherwise none, the move is owed and attached once the board is still
    /// (and if nothing was read, a board dump is asked for after twice the settling time).
    pub fn for_press(&mut self, now: Instant) -> Option<String> {
        let Some(pending) = self.pending.as_ref() else {
            self.attach_at = Some(now + 2 * MOVE_SETTLE);
            return None;
        };
        let still_since = self
            .last_field_at
            .unwrap_or_else(|| now.checked_sub(MOVE_SETTLE).unwrap_or(now));
        if now.saturating_duration_since(still_since) >= MOVE_SETTLE {
            self.carried = Some(pending.ply);
            return self.pending.take().map(|m| m.uci);
        }
        self.attach_at = Some(still_since + MOVE_SETTLE);
        None
    }

    /// Nothing is owed any more: no attachment waits.
    pub fn stop_waiting(&mut self) {
        self.attach_at = None;
    }

    /// The owed move, to attach now (`None`: the board showed none since the press).
    pub fn take_owed(&mut self) -> Option<BoardMove> {
        self.attach_at = None;
        self.pending.take()
    }

    /// The pending move, taken for a press placed by other means (after an outage).
    pub fn take_pending(&mut self) -> Option<String> {
        self.pending.take().map(|m| m.uci)
    }

    /// An owed move was attached: it is the one the press carried.
    pub fn attached(&mut self, ply: usize) {
        self.carried = Some(ply);
    }

    /// A move read while one is owed: wait for stillness before attaching it.
    pub fn owed_read(&mut self, mv: BoardMove, now: Instant) {
        self.pending = Some(mv);
        let still = self.last_field_at.unwrap_or(now);
        self.attach_at = Some(still + MOVE_SETTLE);
    }

    /// A move read that waits for its press (or a move that ended the game: `None`).
    pub fn read(&mut self, mv: Option<BoardMove>) {
        self.pending = mv;
    }

    /// Whether `ply` is the move the last press carried (a later reading of it is a
    /// correction the record cannot take).
    pub fn carried(&self, ply: usize) -> bool {
        self.carried == Some(ply)
    }

    /// The players took back to `ply`.
    pub fn took_back(&mut self, ply: usize) {
        self.pending = None;
        self.attach_at = None;
        if self.carried.is_some_and(|c| c > ply) {
            self.carried = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(uci: &str, ply: usize) -> BoardMove {
        BoardMove {
            uci: uci.into(),
            ply,
        }
    }

    #[test]
    fn a_move_the_board_has_been_still_on_goes_with_the_press() {
        let t0 = Instant::now();
        let mut s = Settling::default();
        s.field_changed(t0);
        s.read(Some(mv("e2e4", 1)));
        assert_eq!(s.for_press(t0 + MOVE_SETTLE).as_deref(), Some("e2e4"));
        assert!(s.pending().is_none());
        assert!(s.carried(1) && !s.carried(2));
        assert_eq!(s.attach_at(), None);
    }

    #[test]
    fn a_press_before_the_board_is_still_owes_the_move_until_it_is() {
        let t0 = Instant::now();
        let mut s = Settling::default();
        s.field_changed(t0);
        s.read(Some(mv("e2e4", 1)));
        let early = t0 + Duration::from_millis(100);
        assert_eq!(s.for_press(early), None);
        assert_eq!(s.attach_at(), Some(t0 + MOVE_SETTLE));
        // The slide goes on: the attachment waits again.
        s.field_changed(t0 + Duration::from_millis(200));
        assert_eq!(
            s.attach_at(),
            Some(t0 + Duration::from_millis(200) + MOVE_SETTLE)
        );
        assert_eq!(s.take_owed(), Some(mv("e2e4", 1)));
        assert_eq!(s.attach_at(), None);
        s.attached(1);
        assert!(s.carried(1));
    }

    #[test]
    fn a_press_with_nothing_read_asks_for_the_board_after_twice_the_settling_time() {
        let t0 = Instant::now();
        let mut s = Settling::default();
        assert_eq!(s.for_press(t0), None);
        assert_eq!(s.attach_at(), Some(t0 + 2 * MOVE_SETTLE));
        // With no field update ever seen, a pending move counts as still already.
        s.read(Some(mv("d2d4", 1)));
        assert_eq!(s.for_press(t0).as_deref(), Some("d2d4"));
        // A move read while one is owed waits for stillness from the last update.
        s.owed_read(mv("d7d5", 2), t0);
        assert_eq!(s.attach_at(), Some(t0 + MOVE_SETTLE));
        assert_eq!(s.take_pending().as_deref(), Some("d7d5"));
    }

    #[test]
    fn a_take_back_forgets_the_pending_move_and_the_carried_ply_beyond_it() {
        let t0 = Instant::now();
        let mut s = Settling::default();
        s.read(Some(mv("e2e4", 3)));
        assert!(s.for_press(t0).is_some());
        s.read(Some(mv("e7e5", 4)));
        s.took_back(3);
        assert!(s.pending().is_none());
        assert!(s.carried(3), "the take-back to ply 3 keeps ply 3");
        s.took_back(2);
        assert!(!s.carried(3));
        s.read(Some(mv("a2a3", 1)));
        s.forget();
        assert!(s.pending().is_none() && s.attach_at().is_none());
    }
}
