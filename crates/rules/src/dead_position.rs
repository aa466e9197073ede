//! 6.9 / 5.2.2: can a side still checkmate by any series of legal moves?
//!
//! Rule 6.9 draws a game lost on time when "the opponent cannot checkmate the player's king
//! by any possible series of legal moves"; 5.2.2 ends a game at once when neither side can.
//! Both ask whether a *helpmate* exists (the loser cooperating), which is more than the
//! usual insufficient-material test: locked pawn walls and forced stalemates also count.
//!
//! Three entry points, by cost:
//!
//! - [`is_dead_position`] (5.2.2, after every move) and [`cannot_mate_fast`] use only a
//!   static material test and chasolver's fast check: microseconds, sound (they never call a
//!   winnable position dead), but incomplete.
//! - [`can_mate`] (6.9, on flag fall) adds chasolver's full search, which decides every
//!   position it finishes and gives a verified helpmate as evidence.
//!
//! chasolver works on the `chess` crate's boards; positions cross over as FEN.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

/// chasolver's last search phase stops after this many nodes (hard-coded in chasolver 3.0.0,
/// `winnability/full.rs`); it is quoted in [`Undecided::SearchLimit`].
pub const SEARCH_NODE_LIMIT: u64 = 1 << 24;

/// The answer to "can `winner` still checkmate?" for one position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum MateVerdict {
    /// A helpmate exists: the game is lost on time (6.9). The line is the evidence, already
    /// replayed in shakmaty and ending in checkmate of the loser.
    CanMate {
        /// The helpmate in UCI, from the given position.
        helpmate: Vec<String>,
        /// The same line in SAN, with `+`/`#`.
        helpmate_san: Vec<String>,
    },
    /// No series of legal moves lets `winner` checkmate: the flag fall is a draw (6.9).
    CannotMate {
        /// Which check proved it.
        proof: MateProof,
    },
    /// Not decided by the software; the arbiter must rule.
    Unknown {
        /// Why it was not decided.
        reason: Undecided,
    },
}

/// The check that proved a side cannot mate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MateProof {
    /// Too little material for any mate: the winner has a lone king, or neither side has
    /// mating material (shakmaty's `is_insufficient_material`, e.g. king and knight vs king).
    InsufficientMaterial,
    /// chasolver's fast check (forced lines, shallow exhaustive search, locked pawn walls).
    FastCheck,
    /// chasolver's full search proved that no helpmate exists.
    FullSearch,
}

/// Why [`can_mate`] could not decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Undecided {
    /// chasolver's full search gave up at its node limit.
    #[error("search limit reached ({SEARCH_NODE_LIMIT} nodes)")]
    SearchLimit,
    /// The `chess` crate refused the position shakmaty accepted.
    #[error("the solver cannot represent this position ({fen}): {problem}")]
    NotConvertible { fen: String, problem: String },
    /// The solver's helpmate does not replay as a legal line ending in mate. A solver bug:
    /// reported rather than trusted.
    #[error("the solver's helpmate does not verify at ply {ply} ({uci}): {problem}")]
    HelpmateDoesNotVerify {
        ply: usize,
        uci: String,
        problem: String,
    },
    /// The solver panicked on this position.
    #[error("the solver failed on this position: {0}")]
    SolverPanicked(String),
}

impl Serialize for Undecided {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// 6.9: can `winner` checkmate the other side by any series of legal moves?
///
/// `winner` is the opponent of the player whose flag fell, passed explicitly: a player who
/// moved but did not press leaves the opponent to move, so the side to move says nothing.
///
/// Runs the cheap checks of [`cannot_mate_fast`] first, then chasolver's full search. The
/// full search takes about a millisecond on game positions, but hundreds of milliseconds on
/// constructed ones and, on the slowest position of chasolver's own corpus, seconds (see
/// `benches/can_mate.rs`; a Raspberry Pi is slower still). So the shell must run it on a
/// blocking worker thread, never on the task that handles lever presses; the core calls it
/// only on flag fall.
///
/// chasolver 3.0.0 takes no node limit and cannot be cancelled: its last phase stops at
/// [`SEARCH_NODE_LIMIT`] nodes, which bounds the time but cannot be lowered from here. That
/// outcome is [`Undecided::SearchLimit`]. A shell that wants a shorter deadline can stop
/// waiting and report unknown, but the worker thread runs on to the end.
pub fn can_mate(pos: &Chess, winner: Color) -> MateVerdict {
    if insufficient_material(pos, winner) {
        return cannot(MateProof::InsufficientMaterial);
    }
    let board = match to_chess_board(pos) {
        Ok(board) => board,
        Err(reason) => return MateVerdict::Unknown { reason },
    };
    let chess_winner = to_chess_color(winner);
    match guarded(|| chasolver::is_unwinnable_fast(&board, chess_winner)) {
        Ok(true) => return cannot(MateProof::FastCheck),
        Ok(false) => {}
        Err(reason) => return MateVerdict::Unknown { reason },
    }
    match guarded(|| chasolver::winnability(&board, chess_winner)) {
        Ok(Some(chasolver::Winnability::Winnable { helpmate })) => {
            match verify_helpmate(pos, winner, &helpmate) {
                Ok(verdict) => verdict,
                Err(reason) => MateVerdict::Unknown { reason },
            }
        }
        Ok(Some(chasolver::Winnability::Unwinnable)) => cannot(MateProof::FullSearch),
        Ok(None) => MateVerdict::Unknown {
            reason: Undecided::SearchLimit,
        },
        Err(reason) => MateVerdict::Unknown { reason },
    }
}

/// The cheap, sound part of [`can_mate`]: `true` only if `winner` provably cannot mate.
///
/// A static material test, then chasolver's fast check; microseconds, so it may run on
/// hot paths. `false` means "not proven", not "can mate". A position the solver cannot
/// represent gives `false`, which keeps the answer sound.
pub fn cannot_mate_fast(pos: &Chess, winner: Color) -> bool {
    insufficient_material(pos, winner)
        || to_chess_board(pos).is_ok_and(|board| fast_check(&board, winner))
}

/// 5.2.2: is the position dead, i.e. can neither side checkmate by any series of legal moves?
///
/// Decided with the cheap checks of [`cannot_mate_fast`] only, because it runs after every
/// move. Sound but incomplete: `true` is a proof; `false` may miss a dead position that only
/// the full search would recognise. Checkmate and stalemate (5.1.1, 5.2.1) are the caller's
/// to detect first; a stalemate also counts as dead here.
pub fn is_dead_position(pos: &Chess) -> bool {
    if pos.is_insufficient_material() {
        return true;
    }
    let Ok(board) = to_chess_board(pos) else {
        return false;
    };
    Color::ALL
        .into_iter()
        .all(|side| insufficient_material(pos, side) || fast_check(&board, side))
}

/// A static test that is sound for the helpmate question, unlike shakmaty's per-side
/// `has_insufficient_material`: that one calls same-coloured bishops insufficient against
/// rooks or queens, even when the bishops have already given mate (chasolver's corpus has
/// such positions, e.g. `8/8/8/8/8/1k6/b1b5/RKR5 w - -`). Those cases go to chasolver's fast
/// check, which looks at the position before the material. When *both* sides are
/// insufficient (K vs K, K+N vs K, only same-coloured bishops), no mate exists anywhere in the
/// game tree, so shakmaty's two-sided test is sound.
fn insufficient_material(pos: &Chess, winner: Color) -> bool {
    let lone_king = (pos.board().by_color(winner) & !pos.board().kings()).is_empty();
    lone_king || pos.is_insufficient_material()
}

fn cannot(proof: MateProof) -> MateVerdict {
    MateVerdict::CannotMate { proof }
}

fn fast_check(board: &chess::Board, winner: Color) -> bool {
    // A panic counts as "not proven": the hot path must stay sound and must not fail.
    guarded(|| chasolver::is_unwinnable_fast(board, to_chess_color(winner))).unwrap_or(false)
}

/// Runs a solver call so that a panic inside it becomes an [`Undecided`] instead of taking
/// the game's actor down at a flag fall. (Has no effect if the binary is built with
/// `panic = "abort"`.)
fn guarded<T>(solve: impl FnOnce() -> T) -> Result<T, Undecided> {
    catch_unwind(AssertUnwindSafe(solve)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic without a message".to_owned());
        Undecided::SolverPanicked(message)
    })
}

fn to_chess_color(color: Color) -> chess::Color {
    match color {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    }
}

fn to_chess_board(pos: &Chess) -> Result<chess::Board, Undecided> {
    // Legal mode: the `chess` crate keeps an en passant square only when a capture is
    // possible, so both sides then agree on which position (and repetition) this is.
    let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
    // The `chess` crate reads only K, Q, k and q and silently drops any other castling
    // letter (Chess960 file letters), which would remove moves and could make a winnable
    // position look unwinnable.
    let castling = fen.split(' ').nth(2).unwrap_or("-");
    if !castling.chars().all(|c| "KQkq-".contains(c)) {
        return Err(Undecided::NotConvertible {
            problem: format!("castling rights {castling} are not standard"),
            fen,
        });
    }
    chess::Board::from_str(&fen).map_err(|e| Undecided::NotConvertible {
        problem: e.to_string(),
        fen,
    })
}

/// Replays chasolver's helpmate in shakmaty: every move must be legal there and the line must
/// end with the loser checkmated. Gives the line in UCI and SAN.
fn verify_helpmate(
    pos: &Chess,
    winner: Color,
    helpmate: &[chess::ChessMove],
) -> Result<MateVerdict, Undecided> {
    let mut line = pos.clone();
    let mut uci_line = Vec::with_capacity(helpmate.len());
    let mut san_line = Vec::with_capacity(helpmate.len());
    for (ply, chess_move) in helpmate.iter().enumerate() {
        let uci = chess_move.to_string();
        let rejected = |problem: String| Undecided::HelpmateDoesNotVerify {
            ply: ply + 1,
            uci: uci.clone(),
            problem,
        };
        let m = UciMove::from_str(&uci)
            .map_err(|e| rejected(e.to_string()))?
            .to_move(&line)
            .map_err(|e| rejected(e.to_string()))?;
        san_line.push(SanPlus::from_move_and_play_unchecked(&mut line, m).to_string());
        // Standard mode: the `chess` crate writes castling as the king's two-square step.
        uci_line.push(UciMove::from_move(m, CastlingMode::Standard).to_string());
    }
    if line.is_checkmate() && line.turn() == !winner {
        Ok(MateVerdict::CanMate {
            helpmate: uci_line,
            helpmate_san: san_line,
        })
    } else {
        Err(Undecided::HelpmateDoesNotVerify {
            ply: helpmate.len(),
            uci: helpmate.last().map(ToString::to_string).unwrap_or_default(),
            problem: format!("the line does not end with {winner:?} giving checkmate"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("test FEN parses")
            .into_position(CastlingMode::Standard)
            .expect("test FEN is a legal position")
    }

    fn assert_cannot(fen: &str, winner: Color) -> MateProof {
        match can_mate(&position(fen), winner) {
            MateVerdict::CannotMate { proof } => proof,
            other => panic!("{fen} {winner:?}: expected cannot_mate, got {other:?}"),
        }
    }

    fn assert_can(fen: &str, winner: Color) -> Vec<String> {
        match can_mate(&position(fen), winner) {
            MateVerdict::CanMate { helpmate, .. } => helpmate,
            other => panic!("{fen} {winner:?}: expected can_mate, got {other:?}"),
        }
    }

    const LOCKED_WALL: &str = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1";

    #[test]
    fn rule_6_9_the_static_test_alone_proves_a_lone_king_cannot_mate() {
        // The shortcut before chasolver: a lone king (whatever the other side has) or
        // material that cannot mate on both sides; nothing else is proven by it.
        let lone = position("4k3/8/8/8/8/8/8/QQ2K3 w - - 0 1");
        assert!(insufficient_material(&lone, Color::Black));
        assert!(!insufficient_material(&lone, Color::White));
        let bare = position("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1");
        assert!(insufficient_material(&bare, Color::White));
        assert!(!insufficient_material(&position(LOCKED_WALL), Color::Black));
    }

    #[test]
    fn rule_6_9_a_helpmate_that_does_not_replay_is_not_trusted() {
        // The solver's line is checked move by move in shakmaty: an illegal move is named
        // with its ply, and a mate by the wrong side is no proof that `winner` can mate.
        let start = Chess::default();
        let line = |ucis: &[&str]| -> Vec<chess::ChessMove> {
            ucis.iter()
                .map(|u| chess::ChessMove::from_str(u).expect("test move"))
                .collect()
        };
        match verify_helpmate(&start, Color::White, &line(&["e2e4", "e2e4"])) {
            Err(Undecided::HelpmateDoesNotVerify { ply, uci, .. }) => {
                assert_eq!((ply, uci.as_str()), (2, "e2e4"));
            }
            other => panic!("{other:?}"),
        }
        // Fool's mate: Black mates, so it proves nothing for White.
        let fools = line(&["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert!(matches!(
            verify_helpmate(&start, Color::White, &fools),
            Err(Undecided::HelpmateDoesNotVerify { ply: 4, .. })
        ));
        assert!(matches!(
            verify_helpmate(&start, Color::Black, &fools),
            Ok(MateVerdict::CanMate { .. })
        ));
    }

    #[test]
    fn rule_5_2_2_a_locked_wall_across_the_board_is_dead_after_the_move() {
        // Every pawn blocked, no capture anywhere, each king kept off the wall's squares
        // by the other side's pawns: neither side can ever mate. Not insufficient
        // material, so only chasolver's fast check proves it (after every move).
        let wall = position("4k3/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/8/4K3 w - - 0 1");
        assert!(!insufficient_material(&wall, Color::White));
        assert!(is_dead_position(&wall));
        assert!(cannot_mate_fast(&wall, Color::White));
    }

    #[test]
    fn rule_6_9_king_and_knight_cannot_mate_a_bare_king() {
        let proof = assert_cannot("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1", Color::White);
        assert_eq!(proof, MateProof::InsufficientMaterial);
    }

    #[test]
    fn rule_6_9_locked_pawn_wall_black_cannot_mate_but_white_can() {
        assert_cannot(LOCKED_WALL, Color::Black);
        assert!(!assert_can(LOCKED_WALL, Color::White).is_empty());
    }

    #[test]
    fn rule_6_9_rook_caged_by_its_own_pawns_cannot_mate_by_full_search() {
        // White's rook and king are walled in on the g and h files; the fast check misses it.
        // (From chasolver's tests/positions.txt.)
        let fen = "2k5/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1";
        assert!(!cannot_mate_fast(&position(fen), Color::White));
        assert_eq!(assert_cannot(fen, Color::White), MateProof::FullSearch);
    }

    #[test]
    fn rule_6_9_king_and_knight_can_mate_a_king_with_a_pawn() {
        // The pawn can block its own king's flight square.
        assert_can("8/8/8/8/8/1p6/8/k1K1N3 w - - 0 1", Color::White);
    }

    #[test]
    fn rule_6_9_winner_is_not_taken_from_the_side_to_move() {
        // Same position, either side to move: only White has mating material.
        for fen in [
            "4k3/8/8/8/8/8/8/R3K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/R3K3 b - - 0 1",
        ] {
            assert_can(fen, Color::White);
            assert_cannot(fen, Color::Black);
        }
    }

    #[test]
    fn rule_6_9_helpmate_is_given_in_uci_and_san() {
        match can_mate(&position("4k3/8/4K3/8/8/8/8/R7 w - - 0 1"), Color::White) {
            MateVerdict::CanMate {
                helpmate,
                helpmate_san,
            } => {
                assert_eq!(helpmate.len(), helpmate_san.len());
                assert!(helpmate_san.last().is_some_and(|san| san.ends_with('#')));
            }
            other => panic!("expected can_mate, got {other:?}"),
        }
    }

    #[test]
    fn rule_6_9_mate_already_given_by_a_bishop_is_not_insufficient_material() {
        // White is mated by the bishops; shakmaty alone would call Black's bishops
        // insufficient against rooks.
        let pos = position("8/8/8/8/8/1k6/b1b5/RKR5 w - - 0 1");
        assert!(
            pos.has_insufficient_material(Color::Black),
            "the trap this avoids"
        );
        assert!(!cannot_mate_fast(&pos, Color::Black));
        assert_eq!(
            can_mate(&pos, Color::Black),
            MateVerdict::CanMate {
                helpmate: vec![],
                helpmate_san: vec![]
            }
        );
    }

    #[test]
    fn rule_5_2_2_bare_kings_and_lone_minor_pieces_are_dead() {
        assert!(is_dead_position(&position("8/8/8/8/8/4k3/8/4K3 w - - 0 1")));
        assert!(is_dead_position(&position(
            "8/8/8/8/8/4k3/8/4KB2 b - - 0 1"
        )));
        // Both bishops on light squares (e6, f1).
        assert!(is_dead_position(&position(
            "8/8/4b3/8/8/4k3/8/4KB2 w - - 0 1"
        )));
    }

    #[test]
    fn rule_5_2_2_locked_pawn_wall_is_not_dead_while_one_side_can_mate() {
        assert!(!is_dead_position(&position(LOCKED_WALL)));
    }

    #[test]
    fn rule_5_2_2_live_positions_are_not_dead() {
        assert!(!is_dead_position(&Chess::default()));
        assert!(!is_dead_position(&position(
            "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"
        )));
        // Opposite-coloured bishops: a corner mate is possible with help.
        assert!(!is_dead_position(&position(
            "8/8/3b4/8/8/4k3/8/4KB2 w - - 0 1"
        )));
    }

    #[test]
    fn rule_5_2_2_checkmate_is_not_reported_as_dead() {
        // Black is mated; White could mate, so the position is not dead (5.1.1 decides it).
        assert!(!is_dead_position(&position(
            "R3k3/8/4K3/8/8/8/8/8 b - - 0 1"
        )));
    }

    #[test]
    fn fast_check_never_claims_a_mate_with_material() {
        let pos = position("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        assert!(!cannot_mate_fast(&pos, Color::White));
        assert!(cannot_mate_fast(&pos, Color::Black));
    }

    #[test]
    fn chess960_castling_rights_are_not_silently_dropped() {
        // The castling rook on g1 is not the outermost one, so shakmaty writes the right as
        // a file letter, which the `chess` crate would ignore.
        let pos: Chess = "4k3/8/8/8/8/8/8/4K1RR w G - 0 1"
            .parse::<Fen>()
            .expect("test FEN parses")
            .into_position(CastlingMode::Chess960)
            .expect("test FEN is a legal Chess960 position");
        match can_mate(&pos, Color::White) {
            MateVerdict::Unknown {
                reason: Undecided::NotConvertible { problem, .. },
            } => assert!(problem.contains("castling"), "{problem}"),
            other => panic!("expected unknown, got {other:?}"),
        }
        assert!(!is_dead_position(&pos));
    }

    #[test]
    fn unknown_reason_serialises_as_its_message() {
        let json = serde_json::to_value(MateVerdict::Unknown {
            reason: Undecided::SearchLimit,
        })
        .expect("serialises");
        assert_eq!(json["verdict"], "unknown");
        assert_eq!(json["reason"], "search limit reached (16777216 nodes)");
    }
}
