//! Rule 6.9 ("can the opponent still checkmate?") and 5.2.2 (dead position), through the real
//! `hallclock rules can-mate` binary and through the library the game core calls.

use std::process::{Command, Output};
use std::str::FromStr;

use hallclock::rules::dead_position::{MateVerdict, can_mate, is_dead_position};
use proptest::prelude::*;
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Position};

/// lichess ijyj0mHa: White lost on time, but Black's pieces cannot get past the locked wall.
const LOCKED_WALL: &str = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1";

fn can_mate_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hallclock"))
        .args(["rules", "can-mate"])
        .args(args)
        .output()
        .expect("the hallclock binary runs")
}

/// Runs the CLI on a valid position and returns its one JSON object.
fn verdict(fen: &str, side: &str) -> Value {
    let out = can_mate_cli(&["--fen", fen, "--side", side]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{fen} --side {side}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let json: Value = serde_json::from_str(&stdout).expect("the output is JSON");
    assert_eq!(json["side"], side, "{json}");
    json
}

/// Runs the CLI on malformed input and returns its stderr.
fn rejection(fen: &str, side: &str) -> String {
    let out = can_mate_cli(&["--fen", fen, "--side", side]);
    assert_eq!(out.status.code(), Some(2), "{fen:?} --side {side:?}");
    assert!(out.stdout.is_empty(), "no verdict on stdout");
    let stderr = String::from_utf8(out.stderr).expect("UTF-8 stderr");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn position(fen: &str) -> Chess {
    Fen::from_str(fen)
        .expect("test FEN parses")
        .into_position(CastlingMode::Standard)
        .expect("test FEN is legal")
}

/// Replays a helpmate independently of the code under test: every UCI move must be legal,
/// the SAN must name the same move, and the line must end with the loser checkmated.
fn assert_helpmate(fen: &str, winner: Color, uci: &[String], san: &[String]) {
    assert_eq!(uci.len(), san.len(), "UCI and SAN lines differ in length");
    let mut pos = position(fen);
    for (ply, (u, s)) in uci.iter().zip(san).enumerate() {
        let m = UciMove::from_str(u)
            .unwrap_or_else(|_| panic!("ply {ply}: {u} is not UCI"))
            .to_move(&pos)
            .unwrap_or_else(|_| panic!("ply {ply}: {u} is illegal in {fen}"));
        let named = SanPlus::from_str(s)
            .unwrap_or_else(|_| panic!("ply {ply}: {s} is not SAN"))
            .san
            .to_move(&pos)
            .unwrap_or_else(|_| panic!("ply {ply}: {s} is not a move here"));
        assert_eq!(named, m, "ply {ply}: {s} and {u} differ");
        pos.play_unchecked(m);
    }
    assert!(
        pos.is_checkmate(),
        "{fen}: the helpmate does not end in mate"
    );
    assert_eq!(pos.turn(), !winner, "{fen}: the wrong side is mated");
}

fn strings(json: &Value, key: &str) -> Vec<String> {
    json[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is an array: {json}"))
        .iter()
        .map(|v| v.as_str().expect("moves are strings").to_owned())
        .collect()
}

fn assert_cli_can_mate(fen: &str, side: &str, winner: Color) {
    let json = verdict(fen, side);
    assert_eq!(json["verdict"], "can_mate", "{json}");
    let uci = strings(&json, "helpmate");
    assert!(!uci.is_empty(), "{json}");
    assert_helpmate(fen, winner, &uci, &strings(&json, "helpmate_san"));
}

fn assert_cli_cannot_mate(fen: &str, side: &str) {
    let json = verdict(fen, side);
    assert_eq!(json["verdict"], "cannot_mate", "{json}");
    assert!(json["proof"].is_string(), "{json}");
}

#[test]
fn rule_6_9_king_and_knight_cannot_mate() {
    assert_cli_cannot_mate("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1", "white");
}

#[test]
fn rule_6_9_locked_pawn_wall_black_cannot_mate() {
    assert_cli_cannot_mate(LOCKED_WALL, "black");
}

#[test]
fn rule_6_9_locked_pawn_wall_white_can_mate() {
    assert_cli_can_mate(LOCKED_WALL, "white", Color::White);
}

#[test]
fn rule_6_9_king_and_rook_can_mate() {
    assert_cli_can_mate("4k3/8/8/8/8/8/8/R3K3 b - - 0 1", "white", Color::White);
}

#[test]
fn rule_6_9_king_and_rook_side_is_the_winner_not_the_side_to_move() {
    // White to move: Black moved, then flagged before pressing. White is still the winner.
    assert_cli_can_mate("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "white", Color::White);
    assert_cli_cannot_mate("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "black");
}

#[test]
fn rule_6_9_rook_caged_by_its_own_pawns_cannot_mate() {
    // Needs the full search: the static and fast checks do not see the cage.
    let json = verdict("2k5/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1", "white");
    assert_eq!(json["verdict"], "cannot_mate", "{json}");
    assert_eq!(json["proof"], "full_search", "{json}");
}

#[test]
fn rule_6_9_same_coloured_bishops_cannot_mate() {
    // e6 and f1 are both light squares.
    let fen = "8/8/4b3/8/8/4k3/8/4KB2 w - - 0 1";
    assert_cli_cannot_mate(fen, "white");
    assert_cli_cannot_mate(fen, "black");
}

#[test]
fn rule_6_9_king_and_knight_can_mate_king_and_pawn() {
    // The pawn (or what it promotes to) can take its own king's last flight square.
    assert_cli_can_mate("8/8/8/8/8/1p6/8/k1K1N3 w - - 0 1", "white", Color::White);
}

#[test]
fn rule_6_9_mate_already_given_with_same_coloured_bishops_is_can_mate() {
    // Same-coloured bishops against rooks: "insufficient" by the usual static test, yet the
    // rooks box their own king in. (From chasolver's tests/positions.txt.)
    let json = verdict("5B2/7r/5K1k/7r/8/4B3/8/8 b - - 0 1", "white");
    assert_eq!(json["verdict"], "can_mate", "{json}");
    assert_eq!(
        json["helpmate"],
        serde_json::json!([]),
        "already mate: {json}"
    );
}

#[test]
fn rule_6_9_side_accepts_short_forms() {
    let json = verdict("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1", "white");
    let out = can_mate_cli(&["--fen", "8/8/8/8/8/4k3/8/4K1N1 w - - 0 1", "--side", "w"]);
    assert_eq!(out.status.code(), Some(0));
    let short: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(short, json);
}

#[test]
fn rule_6_9_malformed_fen_is_rejected_naming_the_problem() {
    let cases = [
        (
            "8/8/8/8/8/4k3/8/4K1X1 w - - 0 1",
            "unexpected character 'X' in rank 1",
        ),
        (
            "8/8/8/8/8/4k4/8/4K1N1 w - - 0 1",
            "rank 3 (\"4k4\") covers 9 squares",
        ),
        ("8/8/8/8/4k3/8/4K1N1 w - - 0 1", "7 ranks, not 8"),
        (
            "8/8/8/8/8/4k3/8/4K1N1 white - - 0 1",
            "side to move (field 2)",
        ),
        ("8/8/8/8/8/4k3/8/4K1N1 w - e9 0 1", "en passant (field 4)"),
        ("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1 extra", "7 fields"),
        ("8/8/8/8/8/8/8/4K1N1 w - - 0 1", "missing king"),
        ("8/8/8/8/8/4k3/8/r3K3 b - - 0 1", "opposite check"),
        ("8/8/8/8/8/4k3/8/4K1N1 w K - 0 1", "invalid castling rights"),
        ("", "empty"),
    ];
    for (fen, expected) in cases {
        let stderr = rejection(fen, "white");
        assert!(stderr.contains(expected), "{fen:?}: {stderr}");
        assert!(stderr.contains("--fen"), "{fen:?}: {stderr}");
    }
}

#[test]
fn rule_6_9_malformed_side_is_rejected() {
    for side in ["purple", "", "WHITE!"] {
        let stderr = rejection("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1", side);
        assert!(stderr.contains("--side"), "{side:?}: {stderr}");
    }
    let out = can_mate_cli(&["--fen", "8/8/8/8/8/4k3/8/4K1N1 w - - 0 1"]);
    assert_eq!(out.status.code(), Some(2), "--side is required");
}

#[test]
fn rule_5_2_2_dead_positions() {
    for fen in [
        "8/8/8/8/8/4k3/8/4K3 w - - 0 1",
        "8/8/8/8/8/4k3/8/4KB2 b - - 0 1",
        "8/8/4b3/8/8/4k3/8/4KB2 w - - 0 1",
    ] {
        assert!(is_dead_position(&position(fen)), "{fen} is dead");
    }
}

#[test]
fn rule_5_2_2_live_positions() {
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "4k3/8/8/8/8/8/8/R3K3 w - - 0 1",
        LOCKED_WALL,
    ] {
        assert!(!is_dead_position(&position(fen)), "{fen} is not dead");
    }
}

/// Plays a game from the start: each choice picks a move, preferring captures on one choice
/// in three so that games thin out into the endgames where dead positions live.
fn random_game(choices: &[u32]) -> Chess {
    let mut pos = Chess::default();
    for &choice in choices {
        if pos.is_game_over() {
            break;
        }
        let captures = pos.capture_moves();
        let moves = if choice % 3 == 0 && !captures.is_empty() {
            captures
        } else {
            pos.legal_moves()
        };
        let m = moves[(choice / 3) as usize % moves.len()];
        pos.play_unchecked(m);
    }
    pos
}

proptest! {
    // About a second in a debug build.
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn rule_5_2_2_dead_position_implies_neither_side_can_mate(
        choices in prop::collection::vec(any::<u32>(), 0..400)
    ) {
        let pos = random_game(&choices);
        let fen = Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string();
        let dead = is_dead_position(&pos);
        for winner in Color::ALL {
            match can_mate(&pos, winner) {
                MateVerdict::CanMate { helpmate, helpmate_san } => {
                    prop_assert!(!dead, "{} dead but {:?} can mate", fen, winner);
                    assert_helpmate(&fen, winner, &helpmate, &helpmate_san);
                }
                MateVerdict::CannotMate { .. } => {}
                MateVerdict::Unknown { reason } => {
                    prop_assert!(!dead, "{} dead but {:?} unknown: {}", fen, winner, reason);
                }
            }
            if dead {
                // can_mate runs the same fast check first, so ask the full search directly:
                // it must not find a helpmate in a position called dead.
                let board = chess::Board::from_str(&fen).expect("the chess crate reads it");
                let side = winner.fold_wb(chess::Color::White, chess::Color::Black);
                let full = chasolver::winnability(&board, side);
                prop_assert!(
                    !matches!(full, Some(chasolver::Winnability::Winnable { .. })),
                    "{} called dead but {:?} has a helpmate: {:?}", fen, winner, full
                );
            }
        }
    }
}
