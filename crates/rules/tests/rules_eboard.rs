//! 6.7a with an e-board: the press may reach the core before the move it completes (the
//! board's field updates arrive after the lever frame). The move is owed by the presser
//! and attached when the board shows it; the position is never lost. Pure core, instants
//! passed as arguments.

use hallclock_rules::game::{
    ArbiterResult, Event, FlagMode, Game, Input, Rejection, Score, Setup, Termination,
};
use hallclock_rules::time_control::parse;
use hallclock_rules::{Color, Millis};

const T0: Millis = Millis(1_700_000_000_000);

fn at(ms: i64) -> Millis {
    T0 + Millis(ms)
}

fn setup(fen: Option<&str>) -> Setup {
    let mut s = Setup::new("White", "Black", parse("300").unwrap(), T0);
    s.default_time = Millis::from_mins(60);
    s.fen = fen.map(String::from);
    s
}

fn started(fen: Option<&str>) -> Game {
    started_from(setup(fen))
}

/// Both players present, started at T0.
fn started_from(s: Setup) -> Game {
    let mut g = Game::new(s).unwrap();
    for side in Color::ALL {
        let present = Input::Present {
            side,
            arbiter: "IA".into(),
        };
        apply(&mut g, &present, T0 - Millis(1)).unwrap();
    }
    for e in g.poll(T0) {
        g.evolve(&e);
    }
    g
}

fn apply(g: &mut Game, input: &Input, now: Millis) -> Result<Vec<Event>, Rejection> {
    let events = g.decide(input, now)?;
    for e in &events {
        g.evolve(e);
    }
    Ok(events)
}

fn press(g: &mut Game, side: Color, mv: Option<&str>, now: Millis) -> Vec<Event> {
    let input = Input::Press {
        side: Some(side),
        mv: mv.map(String::from),
    };
    apply(g, &input, now).unwrap_or_else(|r| panic!("{input:?} rejected: {r}"))
}

fn late(g: &mut Game, mv: &str, now: Millis) -> Vec<Event> {
    let input = Input::Move { mv: mv.into() };
    apply(g, &input, now).unwrap_or_else(|r| panic!("{input:?} rejected: {r}"))
}

fn at_ms(ms: i64) -> Millis {
    at(ms)
}

/// Black's owed 1... e5 is read at `now`: attached alone, and the position is known again.
fn attach_black_e7e5(g: &mut Game, now: Millis) {
    let e = late(g, "e7e5", now);
    assert!(
        matches!(
            e.as_slice(),
            [Event::MoveMade {
                side: Color::Black,
                ..
            }]
        ),
        "{e:?}"
    );
    assert_eq!(g.move_owed(), None);
    assert!(fen(g, now).is_some_and(|f| f.contains("4p3/4P3")));
}

fn fen(g: &Game, now: Millis) -> Option<String> {
    g.view(now).fen
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// What a display sees while presses wait for their moves: the last known position, the
/// side whose move is owed first and how many are owed.
fn pending(g: &Game, now: Millis) -> (Option<String>, bool, Option<Color>, u8) {
    let v = g.view(now);
    (v.fen, v.move_pending, v.pending_side, v.pending_plies)
}

#[test]
fn rule_6_7a_a_move_read_after_its_press_is_attached_to_it() {
    let mut g = started(None);
    press(&mut g, Color::White, None, at(1000));
    assert_eq!(g.move_owed(), Some(Color::White));
    // The press counted at once: black's clock runs, white's time stopped at the press.
    assert_eq!(g.view(at(1500)).running, Some(Color::Black));
    // The position is not forgotten meanwhile: the one before the owed move is shown.
    assert_eq!(
        pending(&g, at(1100)),
        (Some(START.into()), true, Some(Color::White), 1)
    );
    let e = late(&mut g, "e2e4", at(1200));
    assert!(
        matches!(&e[..], [Event::MoveMade { side: Color::White, uci, san, .. }] if uci == "e2e4" && san == "e4"),
        "{e:?}"
    );
    assert_eq!(g.move_owed(), None);
    assert_eq!(
        pending(&g, at(1200)),
        (
            Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into()),
            false,
            None,
            0
        )
    );
    // The game goes on normally: black's move with its press.
    press(&mut g, Color::Black, Some("e7e5"), at(3000));
    assert_eq!(g.view(at(3000)).white.moves, 1);
    assert_eq!(g.view(at(3000)).black.moves, 1);
    assert!(fen(&g, at(3000)).is_some_and(|f| f.starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/")));
}

#[test]
fn rule_6_7a_both_presses_before_either_move_is_read() {
    let mut g = started(None);
    press(&mut g, Color::White, None, at(1000));
    press(&mut g, Color::Black, None, at(1100));
    assert_eq!(g.move_owed(), Some(Color::White));
    assert_eq!(
        pending(&g, at(1100)),
        (Some(START.into()), true, Some(Color::White), 2),
        "the last known position until both moves are attached"
    );
    late(&mut g, "e2e4", at(1150));
    assert_eq!(g.move_owed(), Some(Color::Black));
    assert_eq!(
        pending(&g, at(1150)),
        (
            Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into()),
            true,
            Some(Color::Black),
            1
        )
    );
    // Black's owed move is checked in the position after white's.
    let r = g
        .decide(&Input::Move { mv: "e2e4".into() }, at(1160))
        .unwrap_err();
    assert!(matches!(r, Rejection::BadMove { .. }), "{r:?}");
    late(&mut g, "c5", at(1170));
    assert_eq!(g.move_owed(), None);
    assert!(fen(&g, at(1170)).is_some_and(|f| f.ends_with(" w KQkq - 0 2")));
    press(&mut g, Color::White, Some("Nf3"), at(2000));
}

#[test]
fn rule_6_7a_an_owed_move_that_mates_ends_the_game_when_attached() {
    let mut g = started(Some(
        "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
    ));
    press(&mut g, Color::Black, None, at(1000));
    let e = late(&mut g, "d8h4", at(1100));
    assert!(matches!(e.last(), Some(Event::GameEnded { .. })), "{e:?}");
    let r = g.result().map(|r| (r.score, r.termination.clone()));
    assert_eq!(r, Some((Score::BlackWins, Termination::Checkmate)));
}

#[test]
fn rule_6_7a_an_owed_move_is_attached_after_the_game_ended_meanwhile() {
    // Black moved and pressed (its move not read yet); White's flag fell before the
    // board showed Black's move, and the arbiter ruled at once. The press completed the
    // move before the end, so the move is the game's and the result stays as it is.
    let mut g = started(None);
    press(&mut g, Color::White, Some("e2e4"), at(1000));
    press(&mut g, Color::Black, None, at(2000));
    assert_eq!(g.move_owed(), Some(Color::Black));
    for e in g.poll(at(302_000)) {
        g.evolve(&e);
    }
    let ruling = Input::SetResult {
        result: ArbiterResult::Score {
            score: Score::BlackWins,
        },
        arbiter: "IA".into(),
        reason: "white's flag fell".into(),
    };
    apply(&mut g, &ruling, at(302_100)).unwrap();
    let before = g.result().cloned();
    assert!(before.is_some());
    attach_black_e7e5(&mut g, at(302_200));
    assert_eq!(g.result().cloned(), before);
    // Nothing else is owed: a move after the end is refused as before.
    let r = g
        .decide(&Input::Move { mv: "g1f3".into() }, at(302_300))
        .unwrap_err();
    assert!(matches!(r, Rejection::GameOver { .. }), "{r:?}");
}

#[test]
fn rule_6_9_a_flag_while_the_pressed_move_is_unread_is_decided_when_the_move_is_read() {
    // Black pressed (its move not read yet) and White's flag fell: the position is not
    // known, so 6.9 waits. When the board shows Black's move, the flag is decided in
    // the position it fell in: Black can mate, Black wins.
    let mut g = started(None);
    press(&mut g, Color::White, Some("e2e4"), at(1000));
    press(&mut g, Color::Black, None, at(2000));
    let flag = g.poll(at(302_000));
    for e in &flag {
        g.evolve(e);
    }
    assert!(
        matches!(
            flag.last(),
            Some(Event::ResultPending {
                side: Color::White,
                ..
            })
        ),
        "{flag:?}"
    );
    assert_eq!(g.result(), None);
    let e = late(&mut g, "e7e5", at(302_100));
    assert!(
        matches!(
            e[0],
            Event::MoveMade {
                side: Color::Black,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        matches!(e.get(1), Some(Event::GameEnded { at, .. }) if *at == at_ms(302_100)),
        "{e:?}"
    );
    assert_eq!(
        g.result().map(|r| (r.score, r.termination.clone())),
        Some((Score::BlackWins, Termination::Flag { side: Color::White }))
    );
    assert!(g.view(at(302_100)).pending_flag.is_none());

    // The same with a lone king for Black after its move: Black cannot mate, a draw.
    let mut g = started(Some("k7/8/8/8/8/8/8/KQ6 b - - 0 1"));
    press(&mut g, Color::Black, None, at(1000));
    for e in g.poll(at(302_000)) {
        g.evolve(&e);
    }
    assert_eq!(g.result(), None);
    late(&mut g, "a8a7", at(302_100));
    assert_eq!(
        g.result().map(|r| (r.score, r.termination.clone())),
        Some((
            Score::Draw,
            Termination::FlagOpponentCannotMate { side: Color::White }
        ))
    );
}

#[test]
fn rule_6_8_in_claim_mode_a_flag_while_the_move_is_unread_stays_for_the_arbiter() {
    let mut claim = setup(None);
    claim.flag_mode = FlagMode::Claim;
    let mut g = started_from(claim);
    press(&mut g, Color::White, Some("e2e4"), at(1000));
    press(&mut g, Color::Black, None, at(2000));
    for e in g.poll(at(302_000)) {
        g.evolve(&e);
    }
    let e = late(&mut g, "e7e5", at(302_100));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(g.result(), None);
    assert!(g.view(at(302_100)).pending_flag.is_some());
}

#[test]
fn rule_9_6_1_an_owed_move_counts_only_its_own_repetitions() {
    // Five different positions since the last pawn move, then a late knight move that
    // repeats none of them: no fivefold repetition, the game goes on.
    let mut g = started(None);
    for (i, mv) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]
        .iter()
        .enumerate()
    {
        let side = if i % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        press(&mut g, side, Some(mv), at(1000 * (i as i64 + 1)));
    }
    press(&mut g, Color::White, None, at(7000));
    let e = late(&mut g, "f3g5", at(7100));
    assert!(matches!(e.as_slice(), [Event::MoveMade { .. }]), "{e:?}");
    assert_eq!(g.result(), None);
}

#[test]
fn rule_6_7a_an_owed_move_read_during_a_pause_is_attached() {
    // Black pressed (its move not read yet) and the arbiter stopped the clocks at once:
    // the press completed the move before the pause, so the move is the game's.
    let mut g = started(None);
    press(&mut g, Color::White, Some("e2e4"), at(1000));
    press(&mut g, Color::Black, None, at(2000));
    let pause = Input::Pause {
        arbiter: "IA".into(),
        reason: "a dispute on board 1".into(),
    };
    apply(&mut g, &pause, at(2050)).unwrap();
    attach_black_e7e5(&mut g, at(2200));
}

#[test]
fn rule_9_1_a_move_by_the_offering_side_keeps_its_draw_offer_the_opponents_declines_it() {
    // 9.1.2.2: White offers after moving and before pressing; White's own move does not
    // touch the offer, Black's move instead of an answer declines it.
    let mut g = started(None);
    let offer = Input::DrawOffer {
        side: Color::White,
        arbiter: "IA".into(),
    };
    apply(&mut g, &offer, at(500)).unwrap();
    press(&mut g, Color::White, Some("e2e4"), at(1000));
    assert_eq!(
        g.view(at(1000)).draw_offer.map(|o| o.side),
        Some(Color::White)
    );
    press(&mut g, Color::Black, Some("e7e5"), at(2000));
    assert_eq!(g.view(at(2000)).draw_offer, None);
}

#[test]
fn rule_6_7a_an_owed_mate_attached_after_the_end_does_not_end_the_game_again() {
    let mut g = started(Some(
        "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
    ));
    press(&mut g, Color::Black, None, at(1000));
    let ruling = Input::SetResult {
        result: ArbiterResult::AgreedDraw,
        arbiter: "IA".into(),
        reason: "agreed".into(),
    };
    apply(&mut g, &ruling, at(1050)).unwrap();
    let e = late(&mut g, "d8h4", at(1100));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(g.result().map(|r| r.score), Some(Score::Draw));
}

#[test]
fn rule_6_7a_three_presses_before_their_moves_are_read_keep_the_position() {
    // The demo's time scramble on a loaded server: black, white and black pressed, then
    // the board reported the three moves within a millisecond. Each is attached to its
    // press, in order, and the position is known again after the last.
    let mut g = started(None);
    press(&mut g, Color::White, None, at(1000));
    press(&mut g, Color::Black, None, at(1200));
    press(&mut g, Color::White, None, at(1400));
    assert_eq!(g.move_owed(), Some(Color::White));
    assert_eq!(
        pending(&g, at(1400)),
        (Some(START.into()), true, Some(Color::White), 3)
    );
    late(&mut g, "e2e4", at(1600));
    assert_eq!(g.move_owed(), Some(Color::Black));
    late(&mut g, "e7e5", at(1600));
    assert_eq!(g.move_owed(), Some(Color::White));
    let (shown, owed, side, plies) = pending(&g, at(1600));
    assert!(
        shown.is_some_and(|f| f.starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/") && f.contains(" w ")),
        "one move still owed: the position after 1. e4 e5"
    );
    assert_eq!((owed, side, plies), (true, Some(Color::White), 1));
    late(&mut g, "g1f3", at(1601));
    assert_eq!(g.move_owed(), None);
    assert!(!g.view(at(1601)).move_pending);
    assert!(
        fen(&g, at(1601)).is_some_and(|f| f.starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/")),
        "{:?}",
        fen(&g, at(1601))
    );
    // Black's clock runs: the next press is black's with its move.
    press(&mut g, Color::Black, Some("Nc6"), at(2000));
}

#[test]
fn rule_6_7a_more_presses_without_moves_than_the_board_can_owe_leave_the_position_unknown() {
    let mut g = started(None);
    let sides = [Color::White, Color::Black];
    for i in 0..usize::from(hallclock_rules::game::MAX_OWED_PLIES) {
        press(&mut g, sides[i % 2], None, at(1000 + 100 * i as i64));
        assert_eq!(g.move_owed(), Some(Color::White), "press {}", i + 1);
    }
    let over = usize::from(hallclock_rules::game::MAX_OWED_PLIES);
    assert_eq!(
        pending(&g, at(2999)),
        (
            Some(START.into()),
            true,
            Some(Color::White),
            hallclock_rules::game::MAX_OWED_PLIES
        )
    );
    press(&mut g, sides[over % 2], None, at(3000));
    assert_eq!(g.move_owed(), None);
    // Truly unknown now: no position, and nothing pending to wait for.
    assert_eq!(pending(&g, at(3000)), (None, false, None, 0));
    let r = g
        .decide(&Input::Move { mv: "e2e4".into() }, at(3100))
        .unwrap_err();
    assert_eq!(r, Rejection::PositionUnknown);
    // An arbiter's position ends it.
    let turn = if over % 2 == 0 { "b" } else { "w" };
    let set = Input::SetPosition {
        fen: format!("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR {turn} KQkq - 0 1"),
        arbiter: "IA".into(),
        reason: "clock-only board".into(),
    };
    apply(&mut g, &set, at(3200)).unwrap();
    assert!(fen(&g, at(3200)).is_some());
}

#[test]
fn rule_6_7a_the_state_is_the_fold_of_its_events_with_an_owed_move() {
    let mut g = started(None);
    let mut all = Vec::new();
    all.extend(press(&mut g, Color::White, None, at(1000)));
    all.extend(late(&mut g, "g1f3", at(1100)));
    all.extend(press(&mut g, Color::Black, None, at(2000)));
    all.extend(press(&mut g, Color::White, None, at(3000)));
    let mut replay = started(None);
    for e in &all {
        replay.evolve(e);
    }
    assert_eq!(replay, g);
}
