//! A simulated player pair at one board: they watch the simulated clock, keep the position
//! with shakmaty, think for a human-looking while, move the pieces on the e-board and press
//! the lever. The daemon sees exactly what a real board would send it.
//!
//! The choices are pure functions of the position, the clock and a seeded random source
//! (`choose_move`, `think_time`), so they can be tested without a board.

use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role, Square};
use tokio::sync::watch;

use crate::sim::{BoardHandle, Side};

/// How one player uses the clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Temperament {
    /// Multiplies every think: below 1 a quick player, above 1 a slow one.
    pub tempo: f64,
    /// The chance, per move in time trouble, of freezing over one move anyway; the slow
    /// and nervous ones flag.
    pub nerves: f64,
}

impl Temperament {
    pub fn random(rng: &mut impl Rng) -> Temperament {
        Temperament {
            tempo: rng.gen_range(0.4..1.6),
            nerves: rng.gen_range(0.0..0.25),
        }
    }
}

/// What the clock says to the player about to think.
#[derive(Debug, Clone, Copy)]
pub struct ClockSense {
    pub remaining: Duration,
    /// The control's starting time and increment: think times scale with them, so a 20+1
    /// game is a faster copy of a 3+2 one.
    pub initial: Duration,
    pub increment: Duration,
    /// Half-moves played so far.
    pub ply: u32,
}

/// How long to think before moving. `speed` divides the result (the `--speed` option).
///
/// The unit is what a player can spend per move over a 50-move game (`initial / 50 +
/// increment`: 5.6 s at 3+2), so every control gets the same shape: quick opening moves,
/// most moves around the unit, now and then a long think. In time trouble a player moves on
/// about the increment, and the hand's trip to the clock comes on top, so the clock keeps
/// draining; a nervous player sometimes freezes anyway. That is how flags happen.
pub fn think_time(rng: &mut impl Rng, t: Temperament, c: ClockSense, speed: f64) -> Duration {
    let increment = c.increment.as_secs_f64();
    let unit = c.initial.as_secs_f64() / 50.0 + increment;
    let trouble = c.initial.as_secs_f64() / 6.0;
    let remaining = c.remaining.as_secs_f64();
    let secs = if remaining < trouble {
        if rng.gen_bool(t.nerves.clamp(0.0, 1.0)) {
            rng.gen_range(0.3..1.0) * remaining + increment
        } else {
            rng.gen_range(0.5..1.2) * increment * t.tempo
        }
    } else if c.ply < 8 {
        // Opening moves come from memory.
        rng.gen_range(0.1..0.4) * unit
    } else {
        let base = if rng.gen_bool(0.1) {
            rng.gen_range(2.0..4.0)
        } else {
            rng.gen_range(0.2..1.4)
        };
        // Nobody sensible spends more than a fifth of what is left on one move.
        (base * unit * t.tempo).min(remaining / 5.0 + increment)
    };
    Duration::from_secs_f64((secs / speed.max(0.01)).max(0.05))
}

fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 0,
    }
}

fn distance(a: Square, b: Square) -> i32 {
    // At most 7.
    a.distance(b) as i32
}

/// A legal move as a weak, aggressive club player picks it: mates when it sees one,
/// takes what is offered, likes checks and promotions, walks towards the enemy king, does
/// not always notice that a piece hangs. That bias ends most games in a few dozen moves.
/// `None` when there is no legal move.
pub fn choose_move(pos: &Chess, rng: &mut impl Rng) -> Option<Move> {
    let moves = pos.legal_moves();
    let us = pos.turn();
    let their_king = pos.board().king_of(!us);
    let careful = rng.gen_bool(0.85);
    let mut best: Option<(i32, Move)> = None;
    for m in moves {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let mut score = rng.gen_range(0..60);
        if after.is_checkmate() {
            // One mate in ten is overlooked.
            score += if rng.gen_bool(0.9) { 100_000 } else { 0 };
        }
        if after.is_stalemate() {
            score -= 500;
        }
        if let Some(captured) = m.capture() {
            score += 100 * value(captured);
        }
        if let Some(promoted) = m.promotion() {
            score += 100 * value(promoted);
        }
        if after.is_check() {
            score += 40;
        }
        // Fewer replies for the opponent: the hunt that ends in mate.
        score -= 4 * after.legal_moves().len() as i32;
        let occupied = after.board().occupied();
        if careful && !after.board().attacks_to(m.to(), !us, occupied).is_empty() {
            let defended = !after.board().attacks_to(m.to(), us, occupied).is_empty();
            let loss = value(m.role()) - if defended { 1 } else { 0 };
            score -= 90 * loss.max(0);
        }
        if m.role() == Role::Pawn {
            // Pawns that run become queens, and queens mate.
            let rank = i32::from(u8::from(m.to().rank()));
            score += 10 * if us == Color::White { rank } else { 7 - rank };
        }
        if let (Some(k), Some(from)) = (their_king, m.from())
            && m.role() != Role::King
        {
            score += 8 * (distance(from, k) - distance(m.to(), k));
        }
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, m));
        }
    }
    best.map(|(_, m)| m)
}

/// Everything a board's players need.
pub struct Seat {
    pub board: BoardHandle,
    /// The clock side White sits on (6.4); the demo puts White on the left.
    pub white_side: Side,
    pub white: Temperament,
    pub black: Temperament,
    pub initial: Duration,
    pub increment: Duration,
    pub speed: f64,
    /// True once the daemon has published this game as finished.
    pub finished: watch::Receiver<bool>,
    pub rng: StdRng,
    /// The round, for the count of moves made against moves published.
    pub round: u32,
    /// The position the game starts from, as the daemon published it: the initial
    /// position, or the pairing's FEN when the arbiter gave one.
    pub start: Chess,
}

const LOOK: Duration = Duration::from_millis(100);

impl Seat {
    fn side_of(&self, c: Color) -> Side {
        match c {
            Color::White => self.white_side,
            Color::Black => self.white_side.other(),
        }
    }

    fn over(&self) -> bool {
        *self.finished.borrow()
    }

    /// Sleep, waking early when the game is declared over.
    async fn wait(&mut self, d: Duration) {
        let _ = tokio::time::timeout(d, self.finished.wait_for(|f| *f)).await;
    }

    /// Play one game from the initial position until it is over.
    pub async fn play(mut self) {
        let mut pos = self.start.clone();
        let mut ply = 0u32;
        // Until the daemon starts this game, the clock may still show the last one's flag.
        let mut started = false;
        loop {
            if self.over() {
                return;
            }
            let view = self.board.clock_display();
            started |= view.running.is_some();
            if !started {
                self.wait(LOOK).await;
                continue;
            }
            if view.flagged_left || view.flagged_right {
                // A flag: the daemon decides the result (6.9); the players wait for it.
                self.wait(Duration::from_secs(3600)).await;
                return;
            }
            let side = self.side_of(pos.turn());
            if view.running != Some(side) {
                self.wait(LOOK).await;
                continue;
            }
            let remaining = Duration::from_millis(match side {
                Side::Left => view.left.to_millis(),
                Side::Right => view.right.to_millis(),
            });
            let temperament = match pos.turn() {
                Color::White => self.white,
                Color::Black => self.black,
            };
            let sense = ClockSense {
                remaining,
                initial: self.initial,
                increment: self.increment,
                ply,
            };
            let think = think_time(&mut self.rng, temperament, sense, self.speed);
            self.wait(think).await;
            let view = self.board.clock_display();
            if self.over() || view.flagged_left || view.flagged_right {
                continue;
            }
            let Some(m) = choose_move(&pos, &mut self.rng) else {
                // Mate or stalemate on the board: the daemon ended the game at the move.
                self.wait(Duration::from_secs(3600)).await;
                return;
            };
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            // The instant the piece lands, taken before the board can report it: a scan
            // right after `play_move` must not see the move before it was "made".
            let put_down = super::now_ms();
            if let Err(e) = self.board.play_move(&uci) {
                tracing::warn!(board = self.board.number(), %uci, "the simulated board refused a move: {e}");
                return;
            }
            let made = record_move(&self.board, self.round, put_down);
            pos.play_unchecked(m);
            ply += 1;
            if pos.is_game_over() {
                // Mate or stalemate: the move is complete as it is made (6.7a).
                complete_move(made, super::now_ms());
            }
            // The hand travels to the clock: 50–300 ms, as blitz players press, often
            // before the board's next scan (200 ms) has reported the move. Physical
            // time, not scaled by the demo's speed.
            let reach = Duration::from_millis(self.rng.gen_range(50..=300));
            self.wait(reach).await;
            // A move that ends the game ends it without a press (6.7a).
            if self.over() || pos.is_game_over() {
                self.wait(Duration::from_secs(3600)).await;
                return;
            }
            // The press completes the move only on a clock still running: one that has
            // already shown this player's flag (its own reckoning, to the display's
            // resolution, can be ahead of the daemon's official time) stopped at 0:00,
            // and the lever does nothing there. The simulated clock says which, at the
            // press itself (a look at the display first would race the flag).
            let at = super::now_ms();
            if self.board.press() {
                complete_move(made, at);
            }
        }
    }
}

/// A move a simulated player made, and when the press completed it (or the move itself,
/// when it ended the game); `None` when it was never completed (the game ended first).
#[derive(Debug, Clone)]
pub struct MadeMove {
    pub board: String,
    pub round: u32,
    /// When the piece was put down.
    pub made_at: crate::rules::Millis,
    pub completed_at: Option<crate::rules::Millis>,
}

/// Every move the simulated players of the process made; the demo compares them with
/// the `move_made` events it saw on MQTT.
pub static MOVES_MADE: std::sync::Mutex<Vec<MadeMove>> = std::sync::Mutex::new(Vec::new());

fn record_move(board: &BoardHandle, round: u32, made_at: crate::rules::Millis) -> usize {
    let mut moves = MOVES_MADE.lock().unwrap_or_else(|e| e.into_inner());
    moves.push(MadeMove {
        board: super::board_id(board.number()),
        round,
        made_at,
        completed_at: None,
    });
    moves.len() - 1
}

fn complete_move(index: usize, at: crate::rules::Millis) {
    let mut moves = MOVES_MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = moves.get_mut(index) {
        m.completed_at = Some(at);
    }
}

/// Between rounds, as players do: the pieces set up for the next game (`pieces`: the
/// initial position, or the one an arbiter's pairing gave), square by square, and the
/// clock's levers set so that White's is up (the side that will run; the last game may
/// have ended with the other lever up). Only what differs is touched, so a board already
/// set up is left alone, even under a game in play.
pub fn prepare_board(board: &BoardHandle, white_side: Side, pieces: &shakmaty::Board) {
    set_up_pieces(board, pieces);
    let clock = board.clock_display();
    if clock.running.is_none() && clock.lever_high != white_side {
        board.press();
    }
}

fn set_up_pieces(board: &BoardHandle, pieces: &shakmaty::Board) {
    let now = board.squares();
    // The simulator's squares run from a8 to h1, row by row, as a DGT board's fields do
    // with White at the bottom.
    for (index, have) in now.iter().enumerate() {
        let (row, file) = (index / 8, index % 8);
        let square = Square::from_coords(
            shakmaty::File::new(file as u32),
            shakmaty::Rank::new(7 - row as u32),
        );
        let piece = pieces.piece_at(square).map(shakmaty::Piece::char);
        let want = piece
            .and_then(crate::sim::Piece::from_fen)
            .map_or(0, crate::sim::Piece::code);
        if *have == want {
            continue;
        }
        let name = square.to_string();
        let r = match piece {
            Some(letter) if want != 0 => board.place(&name, letter),
            _ => board.lift(&name),
        };
        if let Err(e) = r {
            tracing::warn!(board = board.number(), square = %name, "cannot set up the pieces: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use shakmaty::fen::Fen;

    fn position(fen: &str) -> Chess {
        let fen: Fen = fen.parse().unwrap();
        fen.into_position(CastlingMode::Standard).unwrap()
    }

    #[test]
    fn a_mate_in_one_is_usually_played() {
        // White mates with Qxf7# (Scholar's mate).
        let pos = position("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4");
        let mut rng = StdRng::seed_from_u64(7);
        let mates = (0..100)
            .filter_map(|_| choose_move(&pos, &mut rng))
            .filter(|m| m.to_uci(CastlingMode::Standard).to_string() == "f3f7")
            .count();
        assert!((75..=100).contains(&mates), "mated {mates} times in 100");
    }

    #[test]
    fn random_games_are_legal_and_mostly_decisive_within_a_blitz_game() {
        let mut rng = StdRng::seed_from_u64(2026);
        let (mut mates, mut long) = (0, 0);
        for _ in 0..100 {
            let mut pos = Chess::default();
            let mut plies = 0;
            while !pos.is_game_over() && plies < 400 {
                let m = choose_move(&pos, &mut rng).unwrap();
                assert!(pos.is_legal(m));
                pos.play_unchecked(m);
                plies += 1;
            }
            if pos.is_checkmate() {
                mates += 1;
            }
            if plies > 200 {
                long += 1;
            }
        }
        assert!(mates >= 60, "{mates} mates in 100 games");
        assert!(long <= 5, "{long} games longer than 200 plies");
    }

    #[test]
    fn think_times_shrink_in_time_trouble_and_with_speed() {
        let mut rng = StdRng::seed_from_u64(1);
        let calm = Temperament {
            tempo: 1.0,
            nerves: 0.0,
        };
        let sense = |remaining: u64| ClockSense {
            remaining: Duration::from_secs(remaining),
            initial: Duration::from_secs(180),
            increment: Duration::from_secs(2),
            ply: 20,
        };
        for _ in 0..200 {
            // 5.6 s per move is the unit at 3+2; a long think is at most 4 units.
            let relaxed = think_time(&mut rng, calm, sense(170), 1.0);
            assert!(relaxed <= Duration::from_millis(22_400), "{relaxed:?}");
            let hurried = think_time(&mut rng, calm, sense(10), 1.0);
            assert!(hurried <= Duration::from_millis(2400), "{hurried:?}");
            let fast = think_time(&mut rng, calm, sense(170), 4.0);
            assert!(fast <= Duration::from_millis(5600), "{fast:?}");
        }
    }
}
