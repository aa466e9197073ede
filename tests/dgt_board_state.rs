//! Property: whatever order the squares of each move change in (§4.1: out-of-order
//! updates, sliding bursts, captured piece removed first or replaced in one step, castling
//! king or rook first, pieces lifted and put back), `BoardState` recognises exactly the
//! game that was played, on a normal and on a rotated board.

use hallclock::dgt::{BoardDump, BoardEvent, BoardState, Field, FieldUpdate, Orientation, Piece};
use proptest::collection::vec;
use proptest::prelude::*;
use shakmaty::{Bitboard, Chess, Move, Position, Role, Square};

const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Small deterministic shuffler, so proptest's shrinking stays meaningful.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn field(o: Orientation, sq: Square) -> Field {
    let f = Field::from_square(sq);
    match o {
        Orientation::Normal => f,
        Orientation::Rotated => f.rotated(),
    }
}

fn dump(o: Orientation, pos: &Chess) -> BoardDump {
    let mut board = [Piece::Empty; 64];
    for (sq, p) in pos.board().clone() {
        board[usize::from(field(o, sq).index())] = Piece::from_shakmaty(p);
    }
    BoardDump { board }
}

fn piece_at(pos: &Chess, sq: Square) -> Piece {
    pos.board()
        .piece_at(sq)
        .map_or(Piece::Empty, Piece::from_shakmaty)
}

/// The squares a sliding move passes over (excluding both ends).
fn between(m: &Move) -> Vec<Square> {
    match m {
        Move::Normal {
            role: Role::Bishop | Role::Rook | Role::Queen,
            from,
            to,
            ..
        } => shakmaty::attacks::between(*from, *to).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The field updates a player's hands could produce for `m`.
fn updates_for(before: &Chess, m: &Move, rng: &mut Rng, fidget: bool) -> Vec<(Square, Piece)> {
    let mut after = before.clone();
    after.play_unchecked(*m);
    let changed: Bitboard = Bitboard::FULL
        .into_iter()
        .filter(|&sq| before.board().piece_at(sq) != after.board().piece_at(sq))
        .collect();
    let mut ups: Vec<(Square, Piece)> = Vec::new();
    if fidget {
        // Touch one of the mover's pieces that does not move, and put it back.
        let own: Vec<Square> = (before.us() & !changed).into_iter().collect();
        if !own.is_empty() {
            let sq = own[rng.below(own.len())];
            ups.push((sq, Piece::Empty));
            ups.push((sq, piece_at(before, sq)));
        }
    }
    let path = between(m);
    if !path.is_empty() && rng.below(2) == 0 {
        // A slide: lift, pass over the path, land (capturing what is there).
        if let Move::Normal { from, to, .. } = m {
            ups.push((*from, Piece::Empty));
            let mover = piece_at(before, *from);
            for &sq in &path {
                ups.push((sq, mover));
                ups.push((sq, Piece::Empty));
            }
            ups.push((*to, piece_at(&after, *to)));
            return ups;
        }
    }
    let mut flat: Vec<(Square, Piece)> = Vec::new();
    for sq in changed {
        let (b, a) = (piece_at(before, sq), piece_at(&after, sq));
        if b != Piece::Empty && a != Piece::Empty && rng.below(2) == 0 {
            // The captured piece is taken off first, the capturer put down later.
            flat.push((sq, Piece::Empty));
        }
        flat.push((sq, a));
    }
    // Shuffle, then restore "taken off before put down" on a capture square.
    for i in (1..flat.len()).rev() {
        let j = rng.below(i + 1);
        flat.swap(i, j);
    }
    for sq in changed {
        let idx: Vec<usize> = (0..flat.len()).filter(|&i| flat[i].0 == sq).collect();
        if let [i, j] = idx[..]
            && flat[i].1 != Piece::Empty
        {
            flat.swap(i, j);
        }
    }
    ups.extend(flat);
    ups
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_update_order_gives_the_played_game(
        choices in vec((any::<u16>(), any::<bool>()), 1..80),
        seed in 1u64..,
        rotated in any::<bool>(),
    ) {
        let o = if rotated { Orientation::Rotated } else { Orientation::Normal };
        let mut rng = Rng(seed);
        let mut pos = Chess::default();
        let mut st = BoardState::new();
        prop_assert_eq!(st.on_dump(&dump(o, &pos)), vec![BoardEvent::Started { orientation: o, fen: START_FEN.into() }]);
        let mut played = Vec::new();
        for (choice, fidget) in choices {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[usize::from(choice) % legal.len()];
            for (sq, piece) in updates_for(&pos, &m, &mut rng, fidget) {
                let events = st.on_field_update(&FieldUpdate { field: field(o, sq), piece });
                prop_assert!(
                    !events.iter().any(|e| matches!(e, BoardEvent::Irregular { .. })),
                    "unsettled updates never report irregular: {:?}", events
                );
            }
            pos.play_unchecked(m);
            played.push(m);
            prop_assert_eq!(st.moves(), &played[..], "after {:?}", m);
            // A dump of the quiet board changes nothing.
            prop_assert!(st.on_dump(&dump(o, &pos)).is_empty());
        }
    }
}
