//! Unit tests of `board_state.rs`, in a file of their own to keep the code readable.

use super::*;

fn start_dump(orientation: Orientation) -> BoardDump {
    let mut board = [Piece::Empty; 64];
    for (sq, p) in Chess::default().board().clone() {
        let f = Field::from_square(sq);
        let f = match orientation {
            Orientation::Normal => f,
            Orientation::Rotated => f.rotated(),
        };
        board[usize::from(f.index())] = Piece::from_shakmaty(p);
    }
    BoardDump { board }
}

fn upd(st: &mut BoardState, o: Orientation, sq: &str, piece: Piece) -> Vec<BoardEvent> {
    let sq: Square = sq.parse().unwrap();
    let f = Field::from_square(sq);
    let field = match o {
        Orientation::Normal => f,
        Orientation::Rotated => f.rotated(),
    };
    st.on_field_update(&FieldUpdate { field, piece })
}

fn started(o: Orientation) -> BoardState {
    let mut st = BoardState::new();
    assert_eq!(
        st.on_dump(&start_dump(o)),
        vec![BoardEvent::Started {
            orientation: o,
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into()
        }]
    );
    st
}

fn ucis(st: &BoardState) -> Vec<String> {
    st.moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

fn play(st: &mut BoardState, o: Orientation, steps: &[(&str, Piece)]) -> Vec<BoardEvent> {
    steps
        .iter()
        .flat_map(|(sq, p)| upd(st, o, sq, *p))
        .collect()
}

use Piece::*;

#[test]
fn out_of_order_pawn_move_and_rotated_board() {
    for o in [Orientation::Normal, Orientation::Rotated] {
        let mut st = started(o);
        // new square before the old one is cleared (§4.1)
        let ev = play(&mut st, o, &[("e4", WhitePawn), ("e2", Empty)]);
        assert!(matches!(&ev[..], [BoardEvent::Move { ply: 1, uci, .. }] if uci == "e2e4"));
        assert_eq!(st.orientation(), Some(o));
    }
}

#[test]
fn lifted_and_put_back_is_no_move() {
    let o = Orientation::Normal;
    let mut st = started(o);
    assert!(play(&mut st, o, &[("g1", Empty), ("g1", WhiteKnight)]).is_empty());
    assert!(st.moves().is_empty());
}

#[test]
fn sliding_burst_is_corrected_to_the_final_square() {
    let o = Orientation::Normal;
    let mut st = started(o);
    play(
        &mut st,
        o,
        &[
            ("a2", Empty),
            ("a4", WhitePawn),
            ("h7", Empty),
            ("h5", BlackPawn),
        ],
    );
    // Ra1-a3 slides over a2: a2 R alone is a legal move, then the rook goes on.
    let ev = play(
        &mut st,
        o,
        &[
            ("a1", Empty),
            ("a2", WhiteRook),
            ("a3", WhiteRook),
            ("a2", Empty),
        ],
    );
    assert!(matches!(&ev[0], BoardEvent::Move { uci, .. } if uci == "a1a2"));
    assert!(matches!(&ev[1], BoardEvent::Corrected { ply: 3, uci, .. } if uci == "a1a3"));
    assert_eq!(ucis(&st), ["a2a4", "h7h5", "a1a3"]);
}

#[test]
fn castling_rook_first_and_king_first() {
    let o = Orientation::Normal;
    let mut st = started(o);
    let setup = [
        ("e2", Empty),
        ("e4", WhitePawn),
        ("e7", Empty),
        ("e5", BlackPawn),
        ("g1", Empty),
        ("f3", WhiteKnight),
        ("g8", Empty),
        ("f6", BlackKnight),
        ("f1", Empty),
        ("c4", WhiteBishop),
        ("f8", Empty),
        ("c5", BlackBishop),
    ];
    play(&mut st, o, &setup);
    assert_eq!(st.moves().len(), 6);
    // white: rook first (h1-f1 is itself legal), then the king
    let ev = play(
        &mut st,
        o,
        &[
            ("h1", Empty),
            ("f1", WhiteRook),
            ("e1", Empty),
            ("g1", WhiteKing),
        ],
    );
    assert!(matches!(ev.last(), Some(BoardEvent::Corrected { san, .. }) if san == "O-O"));
    // black: king first
    let ev = play(
        &mut st,
        o,
        &[
            ("e8", Empty),
            ("g8", BlackKing),
            ("h8", Empty),
            ("f8", BlackRook),
        ],
    );
    assert!(matches!(&ev[..], [BoardEvent::Move { san, .. }] if san == "O-O"));
    assert_eq!(&ucis(&st)[6..], ["e1g1", "e8g8"]);
}

#[test]
fn en_passant_capture_either_order_and_promotion() {
    let o = Orientation::Normal;
    let pos: Chess = "4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 2"
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let dump = {
        let mut board = [Piece::Empty; 64];
        for (sq, p) in pos.board().clone() {
            board[usize::from(Field::from_square(sq).index())] = Piece::from_shakmaty(p);
        }
        BoardDump { board }
    };
    for captured_first in [true, false] {
        let mut st = BoardState::from_position(pos.clone(), Some(o));
        assert!(matches!(
            &st.on_dump(&dump)[..],
            [BoardEvent::Started { .. }]
        ));
        let steps: &[(&str, Piece)] = if captured_first {
            &[("d5", Empty), ("e5", Empty), ("d6", WhitePawn)]
        } else {
            &[("e5", Empty), ("d6", WhitePawn), ("d5", Empty)]
        };
        let ev = play(&mut st, o, steps);
        assert!(
            matches!(&ev[..], [BoardEvent::Move { uci, .. }] if uci == "e5d6"),
            "{ev:?}"
        );
    }
    let mut st = BoardState::from_position(pos.clone(), Some(o));
    st.on_dump(&dump);
    // the pawn is put on b8 first, then swapped for a knight
    let ev = play(
        &mut st,
        o,
        &[
            ("b7", Empty),
            ("b8", WhitePawn),
            ("b8", Empty),
            ("b8", WhiteKnight),
        ],
    );
    assert!(
        matches!(&ev[..], [BoardEvent::Move { uci, .. }] if uci == "b7b8n"),
        "{ev:?}"
    );
}

#[test]
fn capture_and_take_back() {
    let o = Orientation::Normal;
    let mut st = started(o);
    play(
        &mut st,
        o,
        &[
            ("e2", Empty),
            ("e4", WhitePawn),
            ("d7", Empty),
            ("d5", BlackPawn),
        ],
    );
    let ev = play(
        &mut st,
        o,
        &[("d5", Empty), ("e4", Empty), ("d5", WhitePawn)],
    );
    assert!(matches!(&ev[..], [BoardEvent::Move { san, .. }] if san == "exd5"));
    let ev = play(&mut st, o, &[("e4", WhitePawn), ("d5", BlackPawn)]);
    assert!(
        matches!(&ev[..], [BoardEvent::TakeBack { ply: 2, .. }]),
        "{ev:?}"
    );
    assert_eq!(st.moves().len(), 2);
}

#[test]
fn unmatched_settled_board_is_irregular_then_restored() {
    let o = Orientation::Normal;
    let mut st = started(o);
    // a pawn knocked off the board: mid-move until the board is declared quiet
    assert!(play(&mut st, o, &[("a2", Empty)]).is_empty());
    let ev = st.settle();
    let [
        BoardEvent::Irregular {
            observed,
            observed_fen,
            only_missing: true,
            ..
        },
    ] = &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(observed.get(Field::from_square(Square::A2)), Empty);
    assert!(
        observed_fen.ends_with("/1PPPPPPP/RNBQKBNR"),
        "{observed_fen}"
    );
    assert!(st.is_irregular());
    // the same board again is not news; a different wrong board is
    assert!(st.settle().is_empty());
    play(&mut st, o, &[("b2", Empty)]);
    assert!(matches!(&st.settle()[..], [BoardEvent::Irregular { .. }]));
    // a pawn put where none can go is more than a piece in hand
    play(&mut st, o, &[("b5", WhitePawn)]);
    assert!(matches!(
        &st.settle()[..],
        [BoardEvent::Irregular {
            only_missing: false,
            ..
        }]
    ));
    play(&mut st, o, &[("b5", Empty), ("b2", WhitePawn)]);
    let ev = play(&mut st, o, &[("a2", WhitePawn)]);
    assert!(matches!(&ev[..], [BoardEvent::Restored { .. }]));
}

fn dump_of(pos: &Chess) -> BoardDump {
    let mut board = [Piece::Empty; 64];
    for (sq, p) in pos.board().clone() {
        board[usize::from(Field::from_square(sq).index())] = Piece::from_shakmaty(p);
    }
    BoardDump { board }
}

fn after(ucis: &[&str]) -> Chess {
    let mut pos = Chess::default();
    for u in ucis {
        let m = u
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        pos.play_unchecked(m);
    }
    pos
}

#[test]
fn a_dump_two_plies_ahead_is_explained_by_the_moves_that_reach_it() {
    let o = Orientation::Normal;
    let mut st = started(o);
    // Both moves' updates were missed; the dump shows the board after them.
    let ev = st.on_dump(&dump_of(&after(&["e2e4", "c7c5"])));
    assert!(
        matches!(&ev[..], [BoardEvent::Move { ply: 1, uci: a, .. }, BoardEvent::Move { ply: 2, uci: b, .. }] if a == "e2e4" && b == "c7c5"),
        "{ev:?}"
    );
    assert_eq!(ucis(&st), ["e2e4", "c7c5"]);
    // Three plies, with a capture, also on a quiet board after field updates.
    let target = after(&["e2e4", "c7c5", "g1f3", "d7d5", "e4d5"]);
    let ev = st.on_dump(&dump_of(&target));
    assert_eq!(ev.len(), 3, "{ev:?}");
    assert_eq!(st.position().board(), target.board());
    // Four plies ahead is more than a resynchronisation: irregular.
    let far = after(&[
        "e2e4", "c7c5", "g1f3", "d7d5", "e4d5", "d8d5", "b1c3", "d5d8", "a2a3",
    ]);
    assert!(matches!(
        &st.on_dump(&dump_of(&far))[..],
        [BoardEvent::Irregular { .. }]
    ));
}

#[test]
fn a_missed_field_update_is_repaired_by_the_dump() {
    let o = Orientation::Normal;
    let mut st = started(o);
    // e2e4: only "e2 empty" arrives; then black's reply arrives in full.
    play(
        &mut st,
        o,
        &[("e2", Empty), ("e7", Empty), ("e5", BlackPawn)],
    );
    assert!(matches!(&st.settle()[..], [BoardEvent::Irregular { .. }]));
    let ev = st.on_dump(&dump_of(&after(&["e2e4", "e7e5"])));
    assert!(
        matches!(
            &ev[..],
            [
                BoardEvent::Move { ply: 1, .. },
                BoardEvent::Move { ply: 2, .. }
            ]
        ),
        "{ev:?}"
    );
    assert!(!st.is_irregular());
}

#[test]
fn a_move_out_of_turn_is_not_explained_by_a_piece_going_there_and_back() {
    let o = Orientation::Normal;
    let mut st = started(o);
    // Black moves first: Na3 e5 Nb1 would reach it, but nobody played that.
    play(&mut st, o, &[("e7", Empty), ("e5", BlackPawn)]);
    assert!(matches!(&st.settle()[..], [BoardEvent::Irregular { .. }]));
    // A pawn that moves twice (e4, then takes on d5) is a real line.
    let mut st = started(o);
    let ev = st.on_dump(&dump_of(&after(&["e2e4", "d7d5", "e4d5"])));
    assert_eq!(ev.len(), 3, "{ev:?}");
}

#[test]
fn kings_on_the_centre_squares_show_the_result_and_are_no_move() {
    let o = Orientation::Normal;
    // White Ke3, black Kd6: white to move. White steps Ke3-e4 (legal), then black's
    // king goes to d5: both on light squares = 1-0.
    let pos: Chess = "8/8/3k4/8/8/4K3/8/8 w - - 0 60"
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let mut st = BoardState::from_position(pos.clone(), Some(o));
    st.on_dump(&dump_of(&pos));
    let ev = play(&mut st, o, &[("e3", Empty), ("e4", WhiteKing)]);
    assert!(matches!(&ev[..], [BoardEvent::Move { uci, .. }] if uci == "e3e4"));
    let ev = play(&mut st, o, &[("d6", Empty), ("d5", BlackKing)]);
    assert_eq!(
        ev,
        vec![
            BoardEvent::TakeBack {
                ply: 0,
                fen: "8/8/3k4/8/8/4K3/8/8 w - - 0 60".into()
            },
            BoardEvent::ResultShown {
                score: ShownScore::WhiteWins
            }
        ]
    );
    assert!(st.moves().is_empty());
    // Settling it reports nothing more (not irregular).
    assert!(st.settle().is_empty());
    // Kings back where they were: the game position again.
    play(
        &mut st,
        o,
        &[("e4", Empty), ("e3", WhiteKing), ("d5", Empty)],
    );
    let ev = play(&mut st, o, &[("d6", BlackKing)]);
    assert!(matches!(&ev[..], [BoardEvent::Restored { .. }]), "{ev:?}");
    // Dark squares: 0-1; one of each: a draw.
    for (w, b, score) in [
        ("e5", "d4", ShownScore::BlackWins),
        ("e4", "d4", ShownScore::Draw),
    ] {
        let mut st = BoardState::from_position(pos.clone(), Some(o));
        st.on_dump(&dump_of(&pos));
        let ev = play(
            &mut st,
            o,
            &[("d6", Empty), ("e3", Empty), (w, WhiteKing), (b, BlackKing)],
        );
        assert_eq!(
            ev.last(),
            Some(&BoardEvent::ResultShown { score }),
            "{ev:?}"
        );
    }
}

#[test]
fn a_lifted_piece_is_told_apart_from_other_wrong_boards() {
    let o = Orientation::Normal;
    let mut st = started(o);
    assert!(!st.only_pieces_lifted());
    play(&mut st, o, &[("g1", Empty)]);
    assert!(st.only_pieces_lifted());
    play(&mut st, o, &[("g3", WhiteKnight)]);
    assert!(!st.only_pieces_lifted());
}

#[test]
fn settled_board_may_take_back_several_moves() {
    let o = Orientation::Normal;
    let mut st = started(o);
    play(
        &mut st,
        o,
        &[
            ("e2", Empty),
            ("e4", WhitePawn),
            ("e7", Empty),
            ("e5", BlackPawn),
        ],
    );
    st.on_dump(&start_dump(o));
    assert!(st.moves().is_empty());
}
