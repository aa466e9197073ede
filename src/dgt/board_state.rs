//! E-board squares → chess moves, sans-IO.
//!
//! The board reports squares, not moves: a board dump, then one field update per square
//! that changed (dgt-protocol.md §4.1). A move therefore arrives as several updates, and
//! the intermediate states are not always harmless: a sliding piece produces a burst
//! (a1 empty, b1 R, b1 empty, c1 R …), updates can come out of order (new square before the
//! old one is cleared), and a castling player may move the rook first. [`BoardState`]
//! follows the observed board and, after every change, looks for the game position it
//! now shows:
//!
//! 1. the current position → nothing happened (a piece lifted and put back), or the
//!    board is regular again after an irregularity ([`BoardEvent::Restored`]);
//! 2. the position after one legal move → [`BoardEvent::Move`];
//! 3. the position before the last move → [`BoardEvent::TakeBack`];
//! 4. the position after a different legal move from the previous position → the last
//!    move was an intermediate reading (a1–b1 on the way to c1, or the rook half of a
//!    castling) and is replaced: [`BoardEvent::Corrected`].
//!
//! A board that shows none of these is usually a move in progress, so it is only called
//! irregular when the caller says the board has settled: a board dump (picochess asks
//! for one after 0.25 s USB / 0.5 s BT without updates, §4.1) or [`BoardState::settle`].
//! Then earlier positions are tried too (a takeback of several moves), and otherwise
//! [`BoardEvent::Irregular`] carries the observed board for the arbiter.
//!
//! Orientation: the board never renumbers its fields; a set-up with white on fields 0..15
//! (capture 2) is the board turned by 180°. It is recognised from the start position.

use shakmaty::{
    Board, CastlingMode, Chess, EnPassantMode, Move, Position, Square, fen::Fen, san::SanPlus,
};

use super::message::{BoardDump, DgtMessage, FieldUpdate};
use super::square::{Field, Piece};

/// How the board lies relative to the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    /// White on fields 48..63 (the board's rows 1 and 2).
    Normal,
    /// White on fields 0..15: the board is turned by 180°.
    Rotated,
}

impl Orientation {
    /// The game square shown by board field `f`.
    pub fn square(self, f: Field) -> Square {
        match self {
            Orientation::Normal => f.square(),
            Orientation::Rotated => f.rotated().square(),
        }
    }
}

/// What a change of the observed board meant. Serialised with an `"event"` tag; the
/// shakmaty `mv` is left out of JSON (`uci` and `san` carry it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BoardEvent {
    /// The board shows the start position (`fen`): the game begins, read in this
    /// orientation. The position is said because a reader started again (a resumption,
    /// then an opening's sealed move) can report a start after the next one was asked for.
    Started {
        orientation: Orientation,
        fen: String,
    },
    /// Move number `ply` (1 = white's first) was made.
    Move {
        ply: usize,
        #[serde(skip)]
        mv: Move,
        uci: String,
        san: String,
        fen: String,
    },
    /// Move `ply` reported earlier was an intermediate reading; this is the move.
    Corrected {
        ply: usize,
        #[serde(skip)]
        mv: Move,
        uci: String,
        san: String,
        fen: String,
    },
    /// The board went back to the position after move `ply` (0 = the start position).
    TakeBack { ply: usize, fen: String },
    /// A settled board that matches no legal continuation. `observed` is in board
    /// numbering (field 0 = a8 as the board counts), `observed_fen` the same pieces as a
    /// board FEN in game orientation (magic pieces left out), `expected_fen` the current
    /// game position.
    Irregular {
        observed: BoardDump,
        observed_fen: String,
        expected_fen: String,
        /// Every difference from the current position is a piece missing: most likely a
        /// piece held in a hand, so a consumer may wait longer before alarming anyone.
        only_missing: bool,
    },
    /// After an irregularity the board shows the current position again.
    Restored { fen: String },
    /// Both kings stand on the centre squares (d4 d5 e4 e5): DGT's way for players to
    /// show the result on the board, never a move. Both on dark squares (d4 e5) = 0-1,
    /// both on light (d5 e4) = 1-0, one of each = draw. A king move that was only the
    /// first half of the gesture is taken back first (`TakeBack`).
    ResultShown { score: ShownScore },
}

/// The result shown with the kings (DGT's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ShownScore {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl std::fmt::Display for ShownScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShownScore::WhiteWins => "1-0",
            ShownScore::BlackWins => "0-1",
            ShownScore::Draw => "1/2-1/2",
        })
    }
}

/// How many plies a settled board may be ahead of the game and still be explained by
/// legal moves (two quick moves, or a move whose field updates were missed).
pub const MAX_RESYNC_PLIES: usize = 3;

/// The game on one e-board, driven by board messages. No I/O, no clock reads.
#[derive(Debug, Clone)]
pub struct BoardState {
    /// Board numbering, as reported.
    observed: [Piece; 64],
    /// A dump arrived, so `observed` is the real board.
    seen_dump: bool,
    orientation: Option<Orientation>,
    /// Fixed orientation given by the caller (for a game resumed from a position).
    fixed_orientation: Option<Orientation>,
    /// `positions[0]` is the start; `positions[i]` follows `moves[i - 1]`.
    positions: Vec<Chess>,
    moves: Vec<Move>,
    /// The board last reported as irregular, until the board is regular again.
    irregular: Option<[Piece; 64]>,
    /// The result gesture last reported, so it is reported once.
    shown: Option<[Piece; 64]>,
}

impl Default for BoardState {
    fn default() -> Self {
        BoardState::new()
    }
}

impl BoardState {
    /// A game from the standard start position; the orientation is taken from the first
    /// board that shows it either way round.
    pub fn new() -> BoardState {
        BoardState::from_position(Chess::default(), None)
    }

    /// A game from `start` (e.g. a resumed adjourned game). With `orientation = None` it is
    /// recognised from the first board that shows `start` either way round.
    pub fn from_position(start: Chess, orientation: Option<Orientation>) -> BoardState {
        BoardState {
            observed: [Piece::Empty; 64],
            seen_dump: false,
            orientation: None,
            fixed_orientation: orientation,
            positions: vec![start],
            moves: Vec::new(),
            irregular: None,
            shown: None,
        }
    }

    /// `Some` once the board has shown the start position.
    pub fn orientation(&self) -> Option<Orientation> {
        self.orientation
    }

    /// The moves recognised so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The current game position.
    pub fn position(&self) -> &Chess {
        // `positions` always holds at least the start position.
        &self.positions[self.positions.len() - 1]
    }

    /// The board as last reported, in board numbering.
    pub fn observed(&self) -> &[Piece; 64] {
        &self.observed
    }

    /// An irregularity was reported and the board has not come back since.
    pub fn is_irregular(&self) -> bool {
        self.irregular.is_some()
    }

    /// The board differs from the current position only by pieces missing from it: most
    /// likely a piece in a player's hand (a move being thought over, touch-move), so a
    /// caller waits longer before calling it irregular (lila holds such boards 2.5 s).
    pub fn only_pieces_lifted(&self) -> bool {
        self.orientation.is_some_and(|o| {
            self.only_missing(o) && self.observed_board(o).as_ref() != Some(self.position().board())
        })
    }

    /// Feeds a decoded message: dumps and field updates are used, the rest ignored.
    pub fn on_message(&mut self, msg: &DgtMessage) -> Vec<BoardEvent> {
        match msg {
            DgtMessage::BoardDump(d) => self.on_dump(d),
            DgtMessage::FieldUpdate(u) => self.on_field_update(u),
            _ => Vec::new(),
        }
    }

    /// A full board dump (`86`). The board is settled, so an unmatched board is reported
    /// as irregular.
    pub fn on_dump(&mut self, dump: &BoardDump) -> Vec<BoardEvent> {
        self.observed = dump.board;
        self.seen_dump = true;
        self.evaluate(true)
    }

    /// One field update (`8e`). Updates before the first dump are ignored: the rest of
    /// the board is unknown.
    pub fn on_field_update(&mut self, update: &FieldUpdate) -> Vec<BoardEvent> {
        if !self.seen_dump {
            return Vec::new();
        }
        self.observed[usize::from(update.field.index())] = update.piece;
        self.evaluate(false)
    }

    /// The caller decided the board is quiet (no update for a while, or the clock was
    /// pressed): report an irregularity if it matches nothing.
    pub fn settle(&mut self) -> Vec<BoardEvent> {
        if !self.seen_dump {
            return Vec::new();
        }
        self.evaluate(true)
    }

    /// The observed board in game orientation; `None` if it holds a magic piece.
    fn observed_board(&self, orientation: Orientation) -> Option<Board> {
        let mut b = Board::empty();
        for f in Field::all() {
            let p = self.observed[usize::from(f.index())];
            if p == Piece::Empty {
                continue;
            }
            b.set_piece_at(orientation.square(f), p.to_shakmaty()?);
        }
        Some(b)
    }

    fn observed_fen(&self, orientation: Orientation) -> String {
        let mut b = Board::empty();
        for f in Field::all() {
            if let Some(p) = self.observed[usize::from(f.index())].to_shakmaty() {
                b.set_piece_at(orientation.square(f), p);
            }
        }
        b.to_string()
    }

    fn only_missing(&self, orientation: Orientation) -> bool {
        let current = self.position().board();
        Field::all().all(|f| {
            let seen = self.observed[usize::from(f.index())];
            seen == Piece::Empty || current.piece_at(orientation.square(f)) == seen.to_shakmaty()
        })
    }

    fn evaluate(&mut self, settled: bool) -> Vec<BoardEvent> {
        let orientation = match self.orientation {
            Some(o) => o,
            None => {
                let start = self.positions[0].board().clone();
                let candidates: &[Orientation] = match self.fixed_orientation {
                    Some(ref o) => std::slice::from_ref(o),
                    None => &[Orientation::Normal, Orientation::Rotated],
                };
                let found = candidates
                    .iter()
                    .copied()
                    .find(|&o| self.observed_board(o).as_ref() == Some(&start));
                return match found {
                    Some(o) => {
                        self.orientation = Some(o);
                        vec![BoardEvent::Started {
                            orientation: o,
                            fen: fen(&self.positions[0]),
                        }]
                    }
                    // Still being set up; nothing to say until it shows the start.
                    None => Vec::new(),
                };
            }
        };
        let observed = self.observed_board(orientation);
        if let Some(obs) = &observed {
            if let Some(ev) = self.result_gesture(obs) {
                return ev;
            }
            if let Some(ev) = self.match_position(obs, settled) {
                return ev;
            }
        }
        // Report each distinct irregular board once, not on every quiet period.
        if settled && self.irregular != Some(self.observed) {
            self.irregular = Some(self.observed);
            return vec![BoardEvent::Irregular {
                observed: BoardDump {
                    board: self.observed,
                },
                observed_fen: self.observed_fen(orientation),
                expected_fen: fen(self.position()),
                only_missing: self.only_missing(orientation),
            }];
        }
        Vec::new()
    }

    fn match_position(&mut self, obs: &Board, settled: bool) -> Option<Vec<BoardEvent>> {
        let n = self.positions.len();
        let current = self.position().clone();
        if current.board() == obs {
            return Some(if self.irregular.take().is_some() {
                vec![BoardEvent::Restored { fen: fen(&current) }]
            } else {
                Vec::new()
            });
        }
        if let Some((mv, after)) = successor(&current, obs, None) {
            self.irregular = None;
            let ev = move_event(&current, mv, &after, n, false);
            self.moves.push(mv);
            self.positions.push(after);
            return Some(vec![ev]);
        }
        if n >= 2 {
            let previous = self.positions[n - 2].clone();
            if previous.board() == obs {
                self.irregular = None;
                self.moves.pop();
                self.positions.pop();
                return Some(vec![BoardEvent::TakeBack {
                    ply: n - 2,
                    fen: fen(&previous),
                }]);
            }
            let last = self.moves.last().copied();
            if let Some((mv, after)) = successor(&previous, obs, last) {
                self.irregular = None;
                let ev = move_event(&previous, mv, &after, n - 1, true);
                self.moves.pop();
                self.positions.pop();
                self.moves.push(mv);
                self.positions.push(after);
                return Some(vec![ev]);
            }
        }
        if settled {
            // A quiet board a few plies ahead: two quick moves, or updates that were
            // missed (a dump shows what the field updates did not).
            if let Some(line) = continuation(&current, obs, MAX_RESYNC_PLIES) {
                self.irregular = None;
                let mut events = Vec::new();
                let mut pos = current;
                for mv in line {
                    let mut after = pos.clone();
                    after.play_unchecked(mv);
                    events.push(move_event(&pos, mv, &after, self.positions.len(), false));
                    self.moves.push(mv);
                    self.positions.push(after.clone());
                    pos = after;
                }
                return Some(events);
            }
            // Only a quiet board may jump back several moves: mid-move states of a
            // normal move must not be mistaken for an old position.
            let back = (0..n.saturating_sub(2))
                .rev()
                .find(|&i| self.positions[i].board() == obs)?;
            self.irregular = None;
            self.positions.truncate(back + 1);
            self.moves.truncate(back);
            return Some(vec![BoardEvent::TakeBack {
                ply: back,
                fen: fen(self.position()),
            }]);
        }
        None
    }
}

impl BoardState {
    /// Both kings on the centre squares is the result gesture, never a position (kings
    /// there always touch). If the last move was a king's step onto a centre square and
    /// the rest of the board is the position before it, that step was the gesture's
    /// first half: it is taken back.
    fn result_gesture(&mut self, obs: &Board) -> Option<Vec<BoardEvent>> {
        const CENTRE: [Square; 4] = [Square::D4, Square::D5, Square::E4, Square::E5];
        let kings: Vec<Square> = obs.kings().into_iter().collect();
        if kings.len() != 2 || !kings.iter().all(|k| CENTRE.contains(k)) {
            self.shown = None;
            return None;
        }
        if self.shown == Some(self.observed) {
            return Some(Vec::new());
        }
        self.shown = Some(self.observed);
        // Not a position: when the kings go back, `Restored` says so.
        self.irregular = Some(self.observed);
        let dark = |sq: &Square| sq.is_dark();
        let score = match kings.iter().filter(|k| dark(k)).count() {
            2 => ShownScore::BlackWins,
            0 => ShownScore::WhiteWins,
            _ => ShownScore::Draw,
        };
        let mut events = Vec::new();
        let n = self.positions.len();
        if let (Some(last), true) = (self.moves.last(), n >= 2)
            && last.role() == shakmaty::Role::King
            && CENTRE.contains(&last.to())
        {
            let without_kings = |b: &Board| {
                let mut b = b.clone();
                for k in b.kings() {
                    b.discard_piece_at(k);
                }
                b
            };
            if without_kings(self.positions[n - 2].board()) == without_kings(obs) {
                self.moves.pop();
                self.positions.pop();
                events.push(BoardEvent::TakeBack {
                    ply: n - 2,
                    fen: fen(self.position()),
                });
            }
        }
        events.push(BoardEvent::ResultShown { score });
        Some(events)
    }
}

/// The shortest line of at most `plies` legal moves from `pos` that leads to `obs` (two
/// or more plies: one ply is [`successor`]'s). Transpositions reach the same board; the
/// first line found is taken, and lines that reach it with a different position (castling
/// rights, en passant) are rare enough to leave to the arbiter.
fn continuation(pos: &Chess, obs: &Board, plies: usize) -> Option<Vec<Move>> {
    fn search(pos: &Chess, obs: &Board, depth: usize, line: &mut Vec<Move>) -> bool {
        for m in pos.legal_moves() {
            // A piece going back where it came from explains nothing (Na3 … Nb1 would
            // "explain" a move made out of turn).
            if line
                .iter()
                .any(|p| p.to() == m.from().unwrap_or(m.to()) && p.from() == Some(m.to()))
            {
                continue;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            line.push(m);
            if depth == 1 {
                if after.board() == obs {
                    return true;
                }
            } else if search(&after, obs, depth - 1, line) {
                return true;
            }
            line.pop();
        }
        false
    }
    (2..=plies).find_map(|depth| {
        let mut line = Vec::new();
        search(pos, obs, depth, &mut line).then_some(line)
    })
}

/// The legal move from `pos` (other than `except`) whose result shows `obs`.
fn successor(pos: &Chess, obs: &Board, except: Option<Move>) -> Option<(Move, Chess)> {
    // Field updates are rare (a few per move), so trying every legal move is cheap enough.
    pos.legal_moves()
        .into_iter()
        .filter(|m| Some(*m) != except)
        .find_map(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            (after.board() == obs).then_some((m, after))
        })
}

fn move_event(before: &Chess, mv: Move, after: &Chess, ply: usize, corrected: bool) -> BoardEvent {
    let uci = mv.to_uci(CastlingMode::Standard).to_string();
    let san = SanPlus::from_move(before.clone(), mv).to_string();
    let fen = fen(after);
    if corrected {
        BoardEvent::Corrected {
            ply,
            mv,
            uci,
            san,
            fen,
        }
    } else {
        BoardEvent::Move {
            ply,
            mv,
            uci,
            san,
            fen,
        }
    }
}

fn fen(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

#[cfg(test)]
mod tests;
