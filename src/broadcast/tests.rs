//! The feed's rounds: games replaced at their board, and other nodes' games joined in.

use super::*;

fn game(id: u64, board: &str, finished: bool) -> FeedGame {
    FeedGame {
        game_id: id,
        board: board.into(),
        info: crate::pgn::GameInfo::default(),
        body: view::Body::Events {
            setup: Box::new(crate::rules::game::Setup::new(
                "W",
                "B",
                "600".parse().unwrap_or_else(|e| panic!("{e:?}")),
                Millis::ZERO,
            )),
            events: Vec::new(),
        },
        finished,
    }
}

#[test]
fn a_game_is_replaced_at_its_board_and_leaves_the_board_it_moved_from() {
    let mut r = FeedRound::default();
    r.put(game(1, "board-001", false));
    r.put(game(2, "board-002", false));
    r.put(game(1, "board-001", true));
    assert_eq!(r.games.len(), 2);
    assert!(
        r.games[&board_key("board-001")].finished,
        "replaced in place"
    );
    // 6.10: game 1 goes on at board 3; board 1 no longer shows it.
    r.put(game(1, "board-003", true));
    let at: Vec<(String, u64)> = r
        .games
        .values()
        .map(|g| (g.board.clone(), g.game_id))
        .collect();
    assert_eq!(at, [("board-002".into(), 2), ("board-003".into(), 1)]);
    // A new game on a board replaces the old one there, and only there.
    r.put(game(4, "board-002", false));
    assert_eq!(r.games.len(), 2);
    assert_eq!(r.games[&board_key("board-002")].game_id, 4);
    assert!(!r.finished());
}

fn text(round: u32, board: u32, result: &str, moves: &str) -> String {
    format!(
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"2026.11.30\"]\n[Round \"{round}.{board}\"]\n[White \"W{board}\"]\n[Black \"B{board}\"]\n[Result \"{result}\"]\n[Board \"{board}\"]\n\n{moves} {result}\n"
    )
}

fn own(board: u32) -> FeedGame {
    // A setup of the core's own (the broadcast room stands below config).
    let setup = crate::rules::game::Setup::new(
        "Own W",
        "Own B",
        "5400+30".parse().unwrap_or_else(|e| panic!("{e:?}")),
        Millis(0),
    );
    FeedGame {
        game_id: u64::from(board),
        board: format!("board-{board:03}"),
        info: crate::pgn::GameInfo {
            round: Some(1),
            board: Some(board),
            ..Default::default()
        },
        body: view::Body::Events {
            setup: Box::new(setup),
            events: Vec::new(),
        },
        finished: false,
    }
}

fn writer(name: &str, delay: Millis) -> (FeedWriter, BroadcastSource) {
    let dir = crate::link::testing::scratch_dir(name);
    let tags = RoundTags {
        event: Some("Hall Open".into()),
        site: None,
    };
    let w = FeedWriter::recovered(&dir, delay, tags, std::iter::empty());
    let s = w.source(Arc::new(|| Millis(1_000_000)));
    (w, s)
}

fn body(s: &BroadcastSource, n: u32) -> String {
    s.round(Which::Round(n))
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .unwrap_or_default()
}

#[test]
fn another_nodes_games_join_the_round_in_board_order_with_the_rounds_event() {
    let (w, s) = writer("bcast-copied-order", Millis::ZERO);
    w.start_round(1, None, RoundTags::default()).expect("round");
    w.game(own(2), 1);
    w.copied("board-003", text(1, 3, "*", "1. e4").as_bytes(), Millis(10));
    w.copied("board-001", text(1, 1, "*", "1. d4").as_bytes(), Millis(10));
    let b = body(&s, 1);
    let (p1, p2, p3) = (
        b.find("[Board \"1\"]"),
        b.find("Own W"),
        b.find("[Board \"3\"]"),
    );
    assert!(p1 < p2 && p2 < p3 && p1.is_some(), "{b}");
    assert_eq!(b.matches("[Event \"Hall Open\"]").count(), 3, "{b}");
    // What the lichess push splits and sends: the whole hall's round, in board order.
    let at = s.round_at(Which::Round(1)).expect("round");
    let boards: Vec<Option<u32>> = at.games.iter().map(|g| g.info.board).collect();
    assert_eq!(boards, [Some(1), Some(2), Some(3)]);
    // A newer text replaces the copy: the game once, as its owner now has it.
    w.copied(
        "board-003",
        text(1, 3, "*", "1. e4 e5").as_bytes(),
        Millis(20),
    );
    let b = body(&s, 1);
    assert_eq!(b.matches("[Board \"3\"]").count(), 1, "{b}");
    assert!(b.contains("1. e4 e5 *"), "{b}");
    // Never a copy over this node's own board.
    w.copied("board-002", text(1, 2, "*", "1. c4").as_bytes(), Millis(30));
    assert!(!body(&s, 1).contains("1. c4"));
    // Not a game of the broadcast: nothing.
    w.copied("board-004", b"hello", Millis(30));
    assert!(!body(&s, 1).contains("board-004"));
}

#[test]
fn an_empty_text_takes_out_an_unfinished_copy_but_a_finished_game_stays_the_record() {
    let (w, s) = writer("bcast-copied-empty", Millis::ZERO);
    w.copied("board-001", text(2, 1, "*", "1. d4").as_bytes(), Millis(10));
    w.copied(
        "board-003",
        text(2, 3, "1-0", "1. e4").as_bytes(),
        Millis(10),
    );
    assert_eq!(
        s.current().map(|c| c.0),
        Some(2),
        "a round seen only in copies"
    );
    w.copied("board-001", b"", Millis(20));
    w.copied("board-003", b"", Millis(20));
    let b = body(&s, 2);
    assert!(!b.contains("1. d4"), "{b}");
    assert!(b.contains("1. e4 1-0"), "{b}");
}

#[test]
fn a_delayed_round_shows_a_copy_only_once_it_arrived_before_the_cut() {
    // The source's clock is at 1_000_000; a delay of 1000 cuts at 999_000.
    let (w, s) = writer("bcast-copied-delay", Millis(1000));
    w.copied(
        "board-001",
        text(1, 1, "*", "1. d4").as_bytes(),
        Millis(998_000),
    );
    w.copied(
        "board-001",
        text(1, 1, "*", "1. d4 d5").as_bytes(),
        Millis(999_500),
    );
    w.copied(
        "board-003",
        text(1, 3, "*", "1. e4").as_bytes(),
        Millis(999_900),
    );
    let b = body(&s, 1);
    assert!(b.contains("1. d4 *"), "the text before the cut: {b}");
    assert!(!b.contains("d5") && !b.contains("e4"), "nothing newer: {b}");
    assert!(s.board(Which::Round(1), 3).is_err(), "not yet shown");
    let at = s.round_at(Which::Round(1)).expect("round");
    assert_eq!(at.games.len(), 1, "the push leaves it out too");
}
