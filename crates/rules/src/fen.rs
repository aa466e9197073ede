//! FEN for standard chess, parsed strictly: an error names the field (and, in the piece
//! placement, the rank and the character) that is wrong, because arbiters type these.

use shakmaty::fen::{Fen, ParseFenError};
use shakmaty::{CastlingMode, Chess, PositionErrorKinds};

/// What is wrong with a FEN. A value (`Clone`, `Eq`), so a refusal can carry it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// A field does not parse; `detail` names the offending part.
    #[error("{field}: {detail}")]
    Syntax { field: &'static str, detail: String },
    /// Parses, but uses a variant's notation (pockets, promoted pieces, check counters).
    #[error("{0} are not standard chess")]
    NotStandardChess(&'static str),
    /// Parses, but is not a legal position: shakmaty's reasons (e.g. "opposite check"),
    /// said as shakmaty says them.
    #[error("illegal position: {}", illegal_reasons(*.0))]
    Illegal(PositionErrorKinds),
}

/// shakmaty's `PositionError` text after its "illegal position: ", from its kinds alone
/// (the error itself holds the position, which is neither `Eq` nor needed to say why).
fn illegal_reasons(kinds: PositionErrorKinds) -> String {
    const REASONS: [(PositionErrorKinds, &str); 10] = [
        (PositionErrorKinds::EMPTY_BOARD, "empty board"),
        (PositionErrorKinds::MISSING_KING, "missing king"),
        (PositionErrorKinds::TOO_MANY_KINGS, "too many kings"),
        (PositionErrorKinds::PAWNS_ON_BACKRANK, "pawns on backrank"),
        (
            PositionErrorKinds::INVALID_CASTLING_RIGHTS,
            "invalid castling rights",
        ),
        (PositionErrorKinds::INVALID_EP_SQUARE, "invalid ep square"),
        (PositionErrorKinds::OPPOSITE_CHECK, "opposite check"),
        (PositionErrorKinds::IMPOSSIBLE_CHECK, "impossible check"),
        (PositionErrorKinds::TOO_MUCH_MATERIAL, "too much material"),
        (PositionErrorKinds::VARIANT, "variant rule violated"),
    ];
    let named: Vec<&str> = REASONS
        .iter()
        .filter(|(kind, _)| kinds.contains(*kind))
        .map(|(_, reason)| *reason)
        .collect();
    if named.is_empty() {
        "unknown reason".to_owned()
    } else {
        named.join(", ")
    }
}

/// Parses a standard-chess FEN strictly, naming the field (and for the board, the rank and
/// character) that is wrong.
pub fn parse_position(text: &str) -> Result<Chess, FenError> {
    let fen: Fen = text.parse().map_err(|e| syntax_error(text, e))?;
    let setup = fen.as_setup();
    // shakmaty reads variant FENs too and the standard-chess position silently drops the
    // extras; an arbiter who typed them meant something else.
    if setup.pockets.is_some() {
        return Err(FenError::NotStandardChess("pockets"));
    }
    if setup.remaining_checks.is_some() {
        return Err(FenError::NotStandardChess("remaining-check counters"));
    }
    if setup.promoted.any() {
        return Err(FenError::NotStandardChess("promoted-piece marks (~)"));
    }
    fen.into_position(CastlingMode::Standard)
        .map_err(|e| FenError::Illegal(e.kinds()))
}

fn syntax_error(text: &str, error: ParseFenError) -> FenError {
    // shakmaty splits fields on spaces and underscores; so do we, to quote the same field.
    let fields: Vec<&str> = text
        .split([' ', '_'])
        .filter(|field| !field.is_empty())
        .collect();
    let quoted = |index: usize| fields.get(index).copied().unwrap_or("").to_owned();
    let (field, detail) = match error {
        ParseFenError::InvalidBoard => ("piece placement (field 1)", diagnose_board(&quoted(0))),
        ParseFenError::InvalidTurn => (
            "side to move (field 2)",
            format!("expected w or b, got {:?}", quoted(1)),
        ),
        ParseFenError::InvalidCastling => (
            "castling (field 3)",
            format!("expected - or letters from KQkq, got {:?}", quoted(2)),
        ),
        ParseFenError::InvalidEpSquare => (
            "en passant (field 4)",
            format!("expected - or a square such as e3, got {:?}", quoted(3)),
        ),
        ParseFenError::InvalidHalfmoveClock => (
            "halfmove clock (field 5)",
            format!("expected a number, got {:?}", quoted(4)),
        ),
        ParseFenError::InvalidFullmoves => (
            "fullmove number (field 6)",
            format!("expected a number, got {:?}", quoted(5)),
        ),
        ParseFenError::InvalidFen if fields.is_empty() => ("FEN", "it is empty".to_owned()),
        ParseFenError::InvalidFen => (
            "FEN",
            format!("{} fields, at most 6 expected", fields.len()),
        ),
        // shakmaty reads a ninth "rank" as a crazyhouse pocket.
        ParseFenError::InvalidPocket if quoted(0).matches('/').count() >= 8 => {
            ("piece placement (field 1)", diagnose_board(&quoted(0)))
        }
        ParseFenError::InvalidPocket | ParseFenError::InvalidRemainingChecks => {
            ("FEN", format!("{error} (variant notation)"))
        }
    };
    FenError::Syntax { field, detail }
}

/// Says where a piece-placement field goes wrong: a stray character, or a rank that does
/// not hold eight squares, or a wrong number of ranks.
fn diagnose_board(board: &str) -> String {
    let ranks: Vec<&str> = board.split('/').collect();
    for (index, rank_text) in ranks.iter().enumerate().take(8) {
        let rank = 8 - index as i64;
        let mut squares = 0u32;
        for c in rank_text.chars() {
            match c {
                '1'..='8' => squares += c.to_digit(10).unwrap_or(0),
                'p' | 'n' | 'b' | 'r' | 'q' | 'k' | 'P' | 'N' | 'B' | 'R' | 'Q' | 'K' => {
                    squares += 1
                }
                _ => return format!("unexpected character {c:?} in rank {rank} ({rank_text:?})"),
            }
        }
        if squares != 8 {
            return format!("rank {rank} ({rank_text:?}) covers {squares} squares, not 8");
        }
    }
    if ranks.len() != 8 {
        return format!("{} ranks, not 8", ranks.len());
    }
    "not a piece placement".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(fen: &str) -> String {
        match parse_position(fen) {
            Ok(_) => panic!("{fen:?} should be rejected"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn board_errors_name_the_rank_and_character() {
        assert_eq!(
            error("8/8/8/8/8/4k3/8/4K1X1 w - - 0 1"),
            "piece placement (field 1): unexpected character 'X' in rank 1 (\"4K1X1\")"
        );
        assert_eq!(
            error("8/8/8/8/8/4k4/8/4K1N1 w - - 0 1"),
            "piece placement (field 1): rank 3 (\"4k4\") covers 9 squares, not 8"
        );
        assert_eq!(
            error("8/8/8/8/4k3/8/4K1N1 w - - 0 1"),
            "piece placement (field 1): 7 ranks, not 8"
        );
        assert_eq!(
            error("8/8/8/8/8/4k3/8/4K1N1/8 w - - 0 1"),
            "piece placement (field 1): 9 ranks, not 8"
        );
    }

    #[test]
    fn other_fields_are_named() {
        assert!(error("8/8/8/8/8/4k3/8/4K1N1 x - - 0 1").starts_with("side to move (field 2)"));
        assert!(error("8/8/8/8/8/4k3/8/4K1N1 w - z9 0 1").starts_with("en passant (field 4)"));
        assert!(error("8/8/8/8/8/4k3/8/4K1N1 w - - x 1").starts_with("halfmove clock (field 5)"));
    }

    #[test]
    fn illegal_positions_give_shakmaty_reasons() {
        assert_eq!(
            error("8/8/8/8/8/8/8/4K1N1 w - - 0 1"),
            "illegal position: missing king"
        );
    }

    #[test]
    fn illegal_positions_are_said_as_shakmaty_says_them() {
        // One reason, several, and each kind the standard position can have.
        for fen in [
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "8/8/8/8/8/8/8/4K1N1 w - - 0 1",
            "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
            "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - e6 0 1",
            "4k3/8/8/8/8/8/4R3/K7 w - - 0 1",
            "4k3/8/8/8/8/3n1n2/8/4K3 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/QQQQKQQQ w - - 0 1",
            "8/8/8/8/8/8/8/3KK1P1 w KQ - 0 1",
        ] {
            let shakmaty: Fen = fen.parse().unwrap();
            let Err(theirs) = shakmaty.into_position::<Chess>(CastlingMode::Standard) else {
                panic!("{fen:?} should be illegal");
            };
            assert_eq!(error(fen), theirs.to_string(), "{fen}");
        }
        assert_eq!(
            FenError::Illegal(PositionErrorKinds::empty()).to_string(),
            "illegal position: unknown reason"
        );
    }

    #[test]
    fn an_empty_fen_a_seventh_field_and_a_ninth_rank_are_named() {
        assert_eq!(error(""), "FEN: it is empty");
        assert_eq!(
            error("8/8/8/8/8/4k3/8/4K1N1 w - - 0 1 x"),
            "FEN: 7 fields, at most 6 expected"
        );
        // shakmaty reads a ninth rank as a pocket: said as the ranks it is.
        assert_eq!(
            error("8/8/8/8/8/4k3/8/4K1N1/8 w - - 0 1"),
            "piece placement (field 1): 9 ranks, not 8"
        );
    }

    #[test]
    fn a_malformed_pocket_is_named_as_variant_notation() {
        // Seven slashes: a pocket, not a ninth rank.
        let e = error("8/8/8/8/8/4k3/8/4K1N1[Qx] w - - 0 1");
        assert!(
            e.starts_with("FEN: ") && e.ends_with(" (variant notation)"),
            "{e}"
        );
    }

    #[test]
    fn variant_notation_is_refused() {
        assert_eq!(
            error("8/8/8/8/8/4k3/8/4K1N1[Qq] w - - 0 1"),
            "pockets are not standard chess"
        );
    }
}
