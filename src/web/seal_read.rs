//! `POST /api/seal/read`: a sealed move as written, read before it is sealed exactly as the
//! rules will read it at the opening (`rules::adjournment::read_sealed_move`, with the
//! event's piece letters), and said back in words: "Black's king from d1 to e2 — Rey
//! d1–e2". Nothing is sealed or kept; the page shows the reading in the seal's
//! confirmation and as an arrow on the diagram, so that a Spanish `R` (rey) is never taken
//! for a rook unseen, and a move that cannot be played is said so before it is sealed
//! (I.8). The move is not logged: until its opening it is the players' secret (I.3).

use axum::Json;
use serde::Deserialize;
use serde_json::{Value, json};
use shakmaty::{Chess, Color, Move, Position, Role, Square};

use crate::rules::adjournment::{NotationLanguage, SealedVerdict, piece_letters, read_sealed_move};

use super::error::WebError;
use super::session::Arbiter;

#[derive(Debug, Deserialize)]
pub struct SealRead {
    /// The position the move is sealed in (the board's state's `fen`).
    fen: String,
    /// The move as written on the scoresheet.
    mv: String,
    /// The event's piece letters (the board's `adjournment.rules.notation_language`).
    #[serde(default)]
    letters: NotationLanguage,
}

pub async fn read(_who: Arbiter, Json(q): Json<SealRead>) -> Result<Json<Value>, WebError> {
    let pos = crate::rules::game::parse_fen(q.fen.trim())
        .map_err(|e| WebError::BadRequest(format!("fen: {e}")))?;
    Ok(Json(reading(&pos, &q.mv, q.letters)))
}

/// The reading of `text` in `pos`, with what the page says of it.
pub fn reading(pos: &Chess, text: &str, lang: NotationLanguage) -> Value {
    let letters = json!({
        "language": lang,
        "letters": piece_letters(lang),
        "names": names(lang),
    });
    match read_sealed_move(pos, text, lang) {
        SealedVerdict::Legal { uci, san } => {
            let mv = pos
                .legal_moves()
                .into_iter()
                .find(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string() == uci);
            let (words, written, from, to, said) = match mv {
                Some(m) => (
                    in_words(pos.turn(), &m),
                    as_written(&m, lang),
                    m.from().map(|s| s.to_string()),
                    Some(arrow_to(&m).to_string()),
                    as_data(pos.turn(), &m),
                ),
                None => (san.clone(), san.clone(), None, None, Value::Null),
            };
            json!({"verdict": "legal", "san": san, "uci": uci, "words": words,
                   "written": written, "from": from, "to": to, "letters": letters,
                   "move": said})
        }
        SealedVerdict::Ambiguous { candidates } => json!({
            "verdict": "ambiguous",
            "candidates": candidates,
            "words": format!("ambiguous: it could be {} (I.8.1)", candidates.join(" or ")),
            "letters": letters,
        }),
        SealedVerdict::Meaningless { reason, why } => json!({
            "verdict": "meaningless",
            "words": format!("cannot be read: {reason} (I.8.2)"),
            "why": why,
            "refuse": foreign_letter(text, lang).map(|c| format!(
                "'{c}' is not a piece letter of this event ({}): write the move with the event's letters",
                piece_letters(lang)
            )),
            "refuse_letter": foreign_letter(text, lang),
            "letters": letters,
        }),
        SealedVerdict::Illegal { reason, why } => json!({
            "verdict": "illegal",
            "words": format!("cannot be played here: {reason} (I.8.3)"),
            "why": why,
            "letters": letters,
        }),
    }
}

/// A capital letter that is no piece letter of the event (castling's O and the pawn's P,
/// optional in both languages, aside): most
/// likely the move was typed in another language's letters, so the page does not seal it.
fn foreign_letter(text: &str, lang: NotationLanguage) -> Option<char> {
    let own = piece_letters(lang);
    text.chars()
        .find(|c| c.is_ascii_uppercase() && !matches!(c, 'O' | 'P') && !own.contains(*c))
}

/// King, queen, rook, bishop, knight, pawn: the order of [`names`] and of the event's
/// letters (`piece_letters`, king first).
fn index(role: Role) -> usize {
    match role {
        Role::King => 0,
        Role::Queen => 1,
        Role::Rook => 2,
        Role::Bishop => 3,
        Role::Knight => 4,
        Role::Pawn => 5,
    }
}

/// The pieces' names in a language, in [`index`] order.
fn names(lang: NotationLanguage) -> [&'static str; 6] {
    match lang {
        NotationLanguage::En => ["King", "Queen", "Rook", "Bishop", "Knight", "Pawn"],
        NotationLanguage::Es => ["Rey", "Dama", "Torre", "Alfil", "Caballo", "Peón"],
    }
}

/// A piece in the page's words (English, lower case).
fn role_word(role: Role) -> String {
    names(NotationLanguage::En)[index(role)].to_lowercase()
}

/// Castling with the rook on the king's right: kingside.
fn kingside(king: Square, rook: Square) -> bool {
    rook.file() > king.file()
}

/// Where the moving piece goes: for castling the king's square, not the rook's.
fn arrow_to(m: &Move) -> Square {
    match m {
        Move::Castle { king, rook } => {
            let file = if kingside(*king, *rook) {
                shakmaty::File::G
            } else {
                shakmaty::File::C
            };
            Square::from_coords(file, king.rank())
        }
        other => other.to(),
    }
}

/// "Black's king from d1 to e2, taking the rook", "White castles kingside".
fn in_words(side: Color, m: &Move) -> String {
    let who = match side {
        Color::White => "White",
        Color::Black => "Black",
    };
    if let Move::Castle { king, rook } = m {
        let wing = if kingside(*king, *rook) {
            "kingside"
        } else {
            "queenside"
        };
        return format!("{who} castles {wing} (king {king} to {})", arrow_to(m));
    }
    let from = m.from().map(|s| s.to_string()).unwrap_or_default();
    let mut words = format!("{who}'s {} from {from} to {}", role_word(m.role()), m.to());
    if let Some(taken) = m.capture() {
        words.push_str(&format!(", taking the {}", role_word(taken)));
    }
    if matches!(m, Move::EnPassant { .. }) {
        words.push_str(" en passant");
    }
    if let Some(p) = m.promotion() {
        words.push_str(&format!(", promoting to a {}", role_word(p)));
    }
    words
}

/// The move as data, for a page that says it in its own language: who, which piece
/// (`king` … `pawn`), from and to, what it takes, en passant, the promotion piece, or the
/// castling wing. [`in_words`] is its English.
fn as_data(side: Color, m: &Move) -> Value {
    let side = match side {
        Color::White => "white",
        Color::Black => "black",
    };
    let role = |r: Role| names(NotationLanguage::En)[index(r)].to_lowercase();
    if let Move::Castle { king, rook } = m {
        let wing = if kingside(*king, *rook) {
            "kingside"
        } else {
            "queenside"
        };
        return json!({"side": side, "castle": wing, "king": king.to_string(), "to": arrow_to(m).to_string()});
    }
    json!({
        "side": side,
        "role": role(m.role()),
        "from": m.from().map(|s| s.to_string()),
        "to": m.to().to_string(),
        "capture": m.capture().map(role),
        "en_passant": matches!(m, Move::EnPassant { .. }),
        "promotion": m.promotion().map(role),
    })
}

/// The move in the event's language, long form: "Rey d1–e2", "Peón a7–a8=D".
fn as_written(m: &Move, lang: NotationLanguage) -> String {
    if let Move::Castle { king, rook } = m {
        return if kingside(*king, *rook) {
            "O-O".into()
        } else {
            "O-O-O".into()
        };
    }
    let from = m.from().map(|s| s.to_string()).unwrap_or_default();
    let sep = if m.is_capture() { "x" } else { "–" };
    let mut text = format!("{} {from}{sep}{}", names(lang)[index(m.role())], m.to());
    if let Some(p) = m.promotion() {
        let letter = piece_letters(lang).split(' ').nth(index(p)).unwrap_or("?");
        text.push_str(&format!("={letter}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Chess {
        crate::rules::game::parse_fen(fen).unwrap_or_default()
    }

    #[test]
    fn rule_i_8_a_spanish_r_is_read_and_said_as_the_king() {
        let p = pos("8/8/8/8/8/8/r7/3k2K1 b - - 0 1");
        let r = reading(&p, "Re2", NotationLanguage::Es);
        assert_eq!(r["verdict"], "legal");
        assert_eq!(r["san"], "Ke2");
        assert_eq!(r["words"], "Black's king from d1 to e2");
        assert_eq!(
            r["move"],
            json!({"side": "black", "role": "king", "from": "d1", "to": "e2",
                   "capture": null, "en_passant": false, "promotion": null})
        );
        assert_eq!(r["written"], "Rey d1–e2");
        assert_eq!(
            (r["from"].as_str(), r["to"].as_str()),
            (Some("d1"), Some("e2"))
        );
        assert_eq!(r["letters"]["letters"], "R D T A C");
        let en = reading(&p, "Re2", NotationLanguage::En);
        assert_eq!(en["words"], "Black's rook from a2 to e2");
        assert_eq!(en["written"], "Rook a2–e2");
    }

    #[test]
    fn rule_i_8_what_cannot_be_played_is_said_before_it_is_sealed() {
        let start = Chess::default();
        let r = reading(&start, "Nf3", NotationLanguage::Es);
        assert_eq!(r["verdict"], "meaningless");
        assert_eq!(
            r["refuse"],
            "'N' is not a piece letter of this event (R D T A C): write the move with the event's letters"
        );
        assert_eq!(
            r["words"],
            "cannot be read: 'N' is not a piece letter here (R D T A C) (I.8.2)"
        );
        assert_eq!(r["refuse_letter"], "N");
        assert_eq!(
            r["why"],
            json!({"code": "not_a_piece_letter", "params": {"letter": "N", "letters": "R D T A C"}})
        );
        let pawn = reading(&start, "Pe4", NotationLanguage::Es);
        assert_eq!(
            pawn["verdict"], "legal",
            "P (peón) is no foreign letter: {pawn}"
        );
        assert_eq!(pawn["written"], "Peón e2–e4");
        let junk = reading(&start, "e2e4junk", NotationLanguage::Es);
        assert_eq!(junk["verdict"], "meaningless", "{junk}");
        assert_eq!(junk["refuse"], Value::Null, "{junk}");
        let r = reading(&start, "Cf4", NotationLanguage::Es);
        assert_eq!(r["verdict"], "illegal", "{r}");
        assert_eq!(r["why"]["code"], "no_legal_move_fits", "{r}");
        let amb = pos("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1");
        let r = reading(&amb, "Cd2", NotationLanguage::Es);
        assert_eq!(r["verdict"], "ambiguous", "{r}");
        assert_eq!(r["candidates"], json!(["Nbd2", "Nfd2"]));
    }

    #[test]
    fn castling_captures_and_promotions_in_words() {
        let p = pos("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let r = reading(&p, "O-O", NotationLanguage::En);
        assert_eq!(r["words"], "White castles kingside (king e1 to g1)");
        assert_eq!(
            r["move"],
            json!({"side": "white", "castle": "kingside", "king": "e1", "to": "g1"})
        );
        assert_eq!(r["to"], "g1");
        let r = reading(&p, "bxa8=D", NotationLanguage::Es);
        assert_eq!(
            r["words"],
            "White's pawn from b7 to a8, taking the rook, promoting to a queen"
        );
        assert_eq!(r["written"], "Peón b7xa8=D");
        assert_eq!(
            (&r["move"]["capture"], &r["move"]["promotion"]),
            (&json!("rook"), &json!("queen"))
        );
    }
}
