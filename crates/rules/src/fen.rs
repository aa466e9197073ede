//! FEN for standard chess, parsed strictly: an error names the field (and, in the piece
//! placement, the rank and the character) that is wrong, because arbiters type these.

use shakmaty::fen::{Fen, ParseFenError};
use shakmaty::{CastlingMode, Chess, PositionError};

/// What is wrong with a FEN.
#[derive(Debug, thiserror::Error)]
pub enum FenError {
    /// A field does not parse; `detail` names the offending part.
    #[error("{field}: {detail}")]
    Syntax { field: &'static str, detail: String },
    /// Parses, but uses a variant's notation (pockets, promoted pieces, check counters).
    #[error("{0} are not standard chess")]
    NotStandardChess(&'static str),
    /// Parses, but is not a legal position (shakmaty's reasons, e.g. "opposite check").
    #[error("{0}")]
    Illegal(Box<PositionError<Chess>>),
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
        .map_err(|e| FenError::Illegal(Box::new(e)))
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
