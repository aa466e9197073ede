//! Adjourned games (FIDE Guidelines I; the older Appendix A as a configuration choice):
//! the envelope, the sealed move's commitment and its reading at the opening, and the
//! parts of `Game::decide`/`evolve`/`poll` that sealing and resumption need.
//!
//! Custody (I.3: the arbiter "es el responsable de su custodia"). Events are journaled and
//! published, so no event and no view ever holds a sealed move before its opening. The
//! shell draws a random nonce (16 or more bytes) for every seal and passes it in with the
//! move text; the core records only `commitment = hex(sha256(nonce ‖ text))`. The shell
//! keeps the text and the nonce (encrypted at rest) and gives them back at the opening,
//! where the core checks them against the commitment before it reads the move. A wrong
//! text or nonce is a rejection: nothing is opened.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position, Role};

use super::color::Color;
use super::millis::Millis;

/// Which edition of the adjournment rules applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edition {
    /// Guidelines I of the current Laws (the default): the default time at resumption is
    /// the event's (I.10), and a sealed move that ended the game prevails.
    #[default]
    Guidelines,
    /// Appendix A of the older Laws: one hour of default time at resumption (A10), with
    /// its exceptions only for a late sealer.
    AppendixA,
}

/// The piece letters sealed moves are written with (I.8 is read against these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotationLanguage {
    /// K Q R B N.
    #[default]
    En,
    /// R (rey) D (dama) T (torre) A (alfil) C (caballo).
    Es,
}

/// The event's adjournment rules, fixed before the game is adjourned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AdjournmentRules {
    #[serde(default)]
    pub edition: Edition,
    #[serde(default)]
    pub notation_language: NotationLanguage,
    /// Default time at resumption; `None`: the event's default time (Guidelines, I.10)
    /// or one hour (Appendix A, A10).
    #[serde(default)]
    pub resumption_default_time: Option<Millis>,
}

impl AdjournmentRules {
    pub fn resumption_default(&self, event_default: Millis) -> Millis {
        match (self.resumption_default_time, self.edition) {
            (Some(t), _) => t,
            (None, Edition::Guidelines) => event_default,
            (None, Edition::AppendixA) => Millis::from_mins(60),
        }
    }
}

/// Date, time and place of a resumption session (I.2.7, I.14; A13: its end too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumption {
    pub start: Millis,
    #[serde(default)]
    pub end: Option<Millis>,
    pub place: String,
}

/// A draw offer (9.1), kept across the adjournment (I.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawOffer {
    pub side: Color,
    pub at: Millis,
}

/// One side's time on the envelope (I.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeTime {
    pub used_ms: Millis,
    pub remaining_ms: Millis,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvelopeStatus {
    Sealed,
    Opened,
    /// I.6: the game ended before resumption; the envelope was never opened.
    ArchivedUnopened,
    /// I.12.1.
    Lost,
}

/// The arbiter's check of the envelope (I.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub at: Millis,
    pub arbiter: String,
}

/// The opening: the move as written, the nonce (so anyone can check the commitment) and
/// how the move reads in the position (I.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    pub arbiter: String,
    pub move_text: String,
    pub nonce: String,
    pub verdict: SealedVerdict,
}

/// What is written on an envelope (I.2), and what became of it. Never the move itself
/// before the opening: only its commitment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// 1 for the game's first sealed move; a counter-seal (I.9.3) or a later
    /// adjournment gets the next number.
    pub number: u32,
    /// I.9.3: the responder's reply sealed at resumption.
    pub counter_seal: bool,
    /// I.2.1.
    pub white: String,
    pub black: String,
    /// I.2.2: the position immediately before the sealed move; `None` on a clock-only
    /// board whose moves are not known.
    pub fen: Option<String>,
    /// I.2.3.
    pub white_time: EnvelopeTime,
    pub black_time: EnvelopeTime,
    /// I.2.4.
    pub sealer: Color,
    pub sealer_name: String,
    /// I.2.5: the number of the sealed move (the full-move number; Black's is "N...").
    pub move_number: u32,
    /// I.2.6 (A2f): the draw offer standing when the envelope was sealed.
    pub draw_offer: Option<DrawOffer>,
    /// I.2.7.
    pub resumption: Option<Resumption>,
    pub sealed_at: Millis,
    /// `hex(sha256(nonce ‖ move text))`.
    pub commitment: String,
    pub status: EnvelopeStatus,
    pub verified: Option<Verification>,
    pub opened_at: Option<Millis>,
    pub opened: Option<Opening>,
}

/// How a sealed move reads in the position before it (I.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum SealedVerdict {
    Legal {
        uci: String,
        san: String,
    },
    /// I.8.1: more than one legal move fits.
    Ambiguous {
        candidates: Vec<String>,
    },
    /// I.8.2: its meaning cannot be established.
    Meaningless {
        reason: String,
        /// The reason as data (absent in journals written before it was kept); boxed,
        /// as it is rare and verdicts travel inside the board's acts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<Box<SealedWhy>>,
    },
    /// I.8.3.
    Illegal {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<Box<SealedWhy>>,
    },
}

/// Why a sealed move is meaningless or illegal, as data (a code and its parameters) so a
/// page can say it in the arbiter's language; `reason` is its English.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", content = "params", rename_all = "snake_case")]
pub enum SealedWhy {
    /// Nothing but check or annotation marks.
    NothingWritten,
    /// A capital letter that is no piece in the event's letters.
    NotAPieceLetter {
        letter: char,
        letters: String,
    },
    UnexpectedCharacter {
        character: char,
    },
    /// Long algebraic with something after the squares that names no piece.
    NotAPromotionPiece {
        text: String,
    },
    /// Long algebraic naming a piece that is not on the starting square.
    NotThePieceOn {
        square: String,
    },
    NotAMove,
    NotAlgebraic,
    /// SAN that no legal move fits.
    NoLegalMoveFits {
        text: String,
    },
    /// Squares, or castling, that are no legal move here.
    NotLegalHere {
        text: String,
    },
}

impl std::fmt::Display for SealedWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SealedWhy::NothingWritten => f.write_str("nothing is written"),
            SealedWhy::NotAPieceLetter { letter, letters } => {
                write!(f, "'{letter}' is not a piece letter here ({letters})")
            }
            SealedWhy::UnexpectedCharacter { character } => {
                write!(f, "unexpected character {character:?}")
            }
            SealedWhy::NotAPromotionPiece { text } => {
                write!(f, "'{text}' after the squares is not a promotion piece")
            }
            SealedWhy::NotThePieceOn { square } => {
                write!(f, "the piece named is not the one on {square}")
            }
            SealedWhy::NotAMove => f.write_str("not a move"),
            SealedWhy::NotAlgebraic => f.write_str("not a move in algebraic notation"),
            SealedWhy::NoLegalMoveFits { text } => write!(f, "no legal move fits {text}"),
            SealedWhy::NotLegalHere { text } => write!(f, "{text} is not legal here"),
        }
    }
}

impl SealedVerdict {
    /// I.8.2, with its reason as data and in English.
    pub fn meaningless(why: SealedWhy) -> SealedVerdict {
        SealedVerdict::Meaningless {
            reason: why.to_string(),
            why: Some(Box::new(why)),
        }
    }

    /// I.8.3, with its reason as data and in English.
    pub fn illegal(why: SealedWhy) -> SealedVerdict {
        SealedVerdict::Illegal {
            reason: why.to_string(),
            why: Some(Box::new(why)),
        }
    }
}

impl SealedVerdict {
    pub fn describe(&self) -> String {
        match self {
            SealedVerdict::Legal { san, .. } => format!("legal ({san})"),
            SealedVerdict::Ambiguous { candidates } => {
                format!("ambiguous ({})", candidates.join(" or "))
            }
            SealedVerdict::Meaningless { reason, .. } => format!("meaningless ({reason})"),
            SealedVerdict::Illegal { reason, .. } => format!("illegal ({reason})"),
        }
    }
}

/// Where a game is in the adjournment procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// I.1.1: ordered to seal; the sealer's clock runs until the commit.
    Sealing,
    /// Sealed and committed; both clocks stand still (A1a) until the resumption.
    Adjourned,
    /// The resumption session began; the envelope is not open yet (I.7, I.9).
    AwaitingOpening,
    /// The sealed move was played; play goes on.
    Resumed,
    /// I.9.3: the responder sealed a reply; it opens on the sealer's arrival.
    AwaitingCounterOpening,
}

/// The least nonce length: 16 bytes (128 bits), so the commitment cannot be inverted by
/// trying the few dozen legal moves with guessed nonces.
pub const MIN_NONCE_BYTES: usize = 16;
pub const MAX_NONCE_BYTES: usize = 64;
/// A sealed move as written is short; more is a mistake, not a move.
pub const MAX_MOVE_TEXT: usize = 32;

/// Why a nonce is refused (`commitment`, `decode_hex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NonceError {
    #[error("the nonce must be hex with an even number of digits")]
    OddDigits,
    #[error("the nonce must be hex (0-9, a-f)")]
    NotHex,
    /// The number of bytes it decodes to, outside `MIN_NONCE_BYTES..=MAX_NONCE_BYTES`.
    #[error("the nonce must be {MIN_NONCE_BYTES} to {MAX_NONCE_BYTES} random bytes, got {0}")]
    Length(usize),
}

/// Why a sealed move's text is refused (`check_move_text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SealTextError {
    #[error("the sealed move is empty")]
    Empty,
    #[error("a sealed move is at most {MAX_MOVE_TEXT} characters")]
    TooLong,
}

/// `hex(sha256(nonce ‖ text))`, the nonce given as hex, the text as UTF-8 exactly as
/// written (not trimmed: the shell must keep it byte for byte).
pub fn commitment(nonce_hex: &str, text: &str) -> Result<String, NonceError> {
    let nonce = decode_hex(nonce_hex)?;
    if nonce.len() < MIN_NONCE_BYTES || nonce.len() > MAX_NONCE_BYTES {
        return Err(NonceError::Length(nonce.len()));
    }
    let mut h = Sha256::new();
    h.update(&nonce);
    h.update(text.as_bytes());
    Ok(encode_hex(&h.finalize()))
}

pub fn check_move_text(text: &str) -> Result<(), SealTextError> {
    if text.trim().is_empty() {
        return Err(SealTextError::Empty);
    }
    if text.chars().count() > MAX_MOVE_TEXT {
        return Err(SealTextError::TooLong);
    }
    Ok(())
}

pub fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// A nonce's hex digits as bytes (either case); never `NonceError::Length`.
pub fn decode_hex(s: &str) -> Result<Vec<u8>, NonceError> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    if !s.len().is_multiple_of(2) {
        return Err(NonceError::OddDigits);
    }
    s.as_bytes()
        .chunks(2)
        .map(|pair| match (digit(pair[0]), digit(pair[1])) {
            // `+`, not `|`: the two digits' bits never overlap, so `|`, `^` and `+` all
            // agree and a test could not tell a swap of them apart.
            (Some(h), Some(l)) => Ok(h * 16 + l),
            _ => Err(NonceError::NotHex),
        })
        .collect()
}

fn piece_role(c: char, lang: NotationLanguage) -> Option<Role> {
    match (lang, c) {
        (NotationLanguage::En, 'K') | (NotationLanguage::Es, 'R') => Some(Role::King),
        (NotationLanguage::En, 'Q') | (NotationLanguage::Es, 'D') => Some(Role::Queen),
        (NotationLanguage::En, 'R') | (NotationLanguage::Es, 'T') => Some(Role::Rook),
        (NotationLanguage::En, 'B') | (NotationLanguage::Es, 'A') => Some(Role::Bishop),
        (NotationLanguage::En, 'N') | (NotationLanguage::Es, 'C') => Some(Role::Knight),
        // P: pawn, peón (usually left out, sometimes written: Pe4, Pe2-e4).
        (_, 'P') => Some(Role::Pawn),
        _ => None,
    }
}

/// A figurine (U+2654..U+265F, white or black) names the same piece in every language.
fn figurine_role(c: char) -> Option<Role> {
    match c {
        '\u{2654}' | '\u{265A}' => Some(Role::King),
        '\u{2655}' | '\u{265B}' => Some(Role::Queen),
        '\u{2656}' | '\u{265C}' => Some(Role::Rook),
        '\u{2657}' | '\u{265D}' => Some(Role::Bishop),
        '\u{2658}' | '\u{265E}' => Some(Role::Knight),
        '\u{2659}' | '\u{265F}' => Some(Role::Pawn),
        _ => None,
    }
}

fn english_letter(role: Role) -> char {
    match role {
        Role::King => 'K',
        Role::Queen => 'Q',
        Role::Rook => 'R',
        Role::Bishop => 'B',
        Role::Knight => 'N',
        Role::Pawn => 'P',
    }
}

/// The piece letters of `lang`, king first, as the page says them beside a move field.
pub fn piece_letters(lang: NotationLanguage) -> &'static str {
    letters(lang)
}

fn letters(lang: NotationLanguage) -> &'static str {
    match lang {
        NotationLanguage::En => "K Q R B N",
        NotationLanguage::Es => "R D T A C",
    }
}

/// Reads a sealed move as written, in SAN (`Nf3`, `Cf3`; the capture sign is optional,
/// as FIDE Appendix C allows), long algebraic (`Ng1-f3`, `e2-e4`, `e7-e8=Q`) or UCI
/// (`e2e4`), with the event's piece letters or figurines (♔♕♖♗♘, white or black, in
/// every language). Check and annotation marks are ignored.
pub fn read_sealed_move(pos: &Chess, text: &str, lang: NotationLanguage) -> SealedVerdict {
    let meaningless = SealedVerdict::meaningless;
    let mut t = text.trim().to_string();
    for suffix in ["e.p.", "ep"] {
        if let Some(s) = t.strip_suffix(suffix) {
            t = s.trim_end().to_string();
        }
    }
    let t = t.trim_end_matches(['+', '#', '!', '?']);
    if t.is_empty() {
        return meaningless(SealedWhy::NothingWritten);
    }
    let castle = t.replace('0', "O").to_ascii_uppercase();
    if castle == "O-O" || castle == "O-O-O" {
        return from_san(pos, &castle);
    }
    // Translate to English letters, refusing letters that are no piece in this language.
    let mut english = String::new();
    for c in t.chars() {
        if let Some(role) = figurine_role(c) {
            english.push(english_letter(role));
        } else if c.is_ascii_uppercase() {
            match piece_role(c, lang) {
                Some(role) => english.push(english_letter(role)),
                None => {
                    return meaningless(SealedWhy::NotAPieceLetter {
                        letter: c,
                        letters: letters(lang).to_string(),
                    });
                }
            }
        } else if c.is_ascii_alphanumeric() || matches!(c, '-' | 'x' | ':' | '=') {
            english.push(c);
        } else {
            return meaningless(SealedWhy::UnexpectedCharacter { character: c });
        }
    }
    if let Some(v) = long_algebraic(pos, &english) {
        return v;
    }
    // A pawn's P (`Pe4`, `Pexd5`) is SAN's own: shakmaty reads it as the pawn.
    from_san(pos, &english.replace(':', "x"))
}

/// `[piece]from[-x:]to[[=]promotion]`, or `None` when the text is not of that form.
fn long_algebraic(pos: &Chess, t: &str) -> Option<SealedVerdict> {
    let b = t.as_bytes();
    let (piece, rest) = match b.first() {
        Some(c) if c.is_ascii_uppercase() => (Some(char::from(*c)), &t[1..]),
        _ => (None, t),
    };
    let r = rest.as_bytes();
    let square = |i: usize| {
        r.get(i).is_some_and(|f| (b'a'..=b'h').contains(f))
            && r.get(i + 1).is_some_and(|k| (b'1'..=b'8').contains(k))
    };
    if !square(0) {
        return None;
    }
    let mut i = 2;
    if matches!(r.get(i), Some(b'-' | b'x' | b':')) {
        i += 1;
    }
    if !square(i) {
        return None;
    }
    let (from, to) = (&rest[..2], &rest[i..i + 2]);
    let mut tail = &rest[i + 2..];
    if let Some(s) = tail.strip_prefix('=') {
        tail = s;
    }
    let promotion = match tail {
        "" => None,
        "Q" | "q" => Some('q'),
        "R" | "r" => Some('r'),
        "B" | "b" => Some('b'),
        "N" | "n" => Some('n'),
        _ => {
            return Some(SealedVerdict::meaningless(SealedWhy::NotAPromotionPiece {
                text: tail.to_string(),
            }));
        }
    };
    let from_sq: shakmaty::Square = from.parse().ok()?;
    if let (Some(p), Some(on)) = (piece, pos.board().piece_at(from_sq))
        && english_letter(on.role) != p
    {
        return Some(SealedVerdict::meaningless(SealedWhy::NotThePieceOn {
            square: from.to_string(),
        }));
    }
    let uci = format!(
        "{from}{to}{}",
        promotion.map(String::from).unwrap_or_default()
    );
    let parsed: UciMove = match uci.parse() {
        Ok(u) => u,
        Err(_) => {
            return Some(SealedVerdict::meaningless(SealedWhy::NotAMove));
        }
    };
    Some(match parsed.to_move(pos) {
        Ok(m) => legal(pos, m),
        Err(_) => {
            // A pawn reaching the last rank with no piece named: four moves fit.
            let promotions: Vec<String> = pos
                .legal_moves()
                .iter()
                .filter(|m| {
                    m.promotion().is_some()
                        && m.from().map(|f| f.to_string()) == Some(from.to_string())
                        && m.to().to_string() == to
                })
                .map(|m| San::from_move(pos, *m).to_string())
                .collect();
            // Promotions come four at a time (Q, R, B, N), so any fit is four of them.
            if !promotions.is_empty() && promotion.is_none() {
                SealedVerdict::Ambiguous {
                    candidates: promotions,
                }
            } else {
                SealedVerdict::illegal(SealedWhy::NotLegalHere {
                    text: format!("{from}-{to}"),
                })
            }
        }
    })
}

fn legal(pos: &Chess, m: Move) -> SealedVerdict {
    SealedVerdict::Legal {
        uci: m.to_uci(CastlingMode::Standard).to_string(),
        san: San::from_move(pos, m).to_string(),
    }
}

fn from_san(pos: &Chess, t: &str) -> SealedVerdict {
    let san: San = match t.parse() {
        Ok(s) => s,
        Err(_) => {
            return SealedVerdict::meaningless(SealedWhy::NotAlgebraic);
        }
    };
    match san {
        San::Normal {
            role,
            file,
            rank,
            to,
            promotion,
            ..
        } => {
            // The capture sign is optional (FIDE Appendix C), so it does not select.
            let fits: Vec<Move> = pos
                .legal_moves()
                .into_iter()
                .filter(|m| {
                    m.role() == role
                        && m.to() == to
                        && m.from().is_some_and(|f| file.is_none_or(|x| x == f.file()))
                        && m.from().is_some_and(|f| rank.is_none_or(|x| x == f.rank()))
                        && promotion.is_none_or(|p| m.promotion() == Some(p))
                })
                .collect();
            match fits.as_slice() {
                [] => SealedVerdict::illegal(SealedWhy::NoLegalMoveFits {
                    text: t.to_string(),
                }),
                [m] => legal(pos, *m),
                many => SealedVerdict::Ambiguous {
                    candidates: many
                        .iter()
                        .map(|m| San::from_move(pos, *m).to_string())
                        .collect(),
                },
            }
        }
        other => match other.to_move(pos) {
            Ok(m) => legal(pos, m),
            Err(_) => SealedVerdict::illegal(SealedWhy::NotLegalHere {
                text: t.to_string(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_fen;

    fn read(fen: Option<&str>, text: &str, lang: NotationLanguage) -> SealedVerdict {
        let pos = fen.map(|f| parse_fen(f).unwrap()).unwrap_or_default();
        read_sealed_move(&pos, text, lang)
    }

    fn san(v: &SealedVerdict) -> &str {
        match v {
            SealedVerdict::Legal { san, .. } => san,
            other => panic!("not legal: {other:?}"),
        }
    }

    #[test]
    fn rule_i_8_notations_san_long_uci_and_spanish_letters() {
        use NotationLanguage::{En, Es};
        assert_eq!(san(&read(None, "Nf3", En)), "Nf3");
        assert_eq!(san(&read(None, "Ng1-f3", En)), "Nf3");
        assert_eq!(san(&read(None, "g1f3", En)), "Nf3");
        assert_eq!(san(&read(None, "e2-e4", En)), "e4");
        assert_eq!(san(&read(None, "e4+!?", En)), "e4");
        assert_eq!(san(&read(None, "Cf3", Es)), "Nf3");
        assert_eq!(san(&read(None, "Cg1-f3", Es)), "Nf3");
        // In Spanish R is the king, so Rf3 is meaningless here as a rook move would be
        // illegal: the king cannot go to f3.
        assert!(matches!(
            read(None, "Rf3", Es),
            SealedVerdict::Illegal { .. }
        ));
        assert!(matches!(
            read(None, "Nf3", Es),
            SealedVerdict::Meaningless { .. }
        ));
        let castles = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(san(&read(Some(castles), "0-0-0", En)), "O-O-O");
        assert_eq!(san(&read(Some(castles), "e1-g1", En)), "O-O");
    }

    #[test]
    fn rule_i_8_1_two_knights_can_reach_d2_is_ambiguous() {
        let fen = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
        let v = read(Some(fen), "Nd2", NotationLanguage::En);
        assert_eq!(
            v,
            SealedVerdict::Ambiguous {
                candidates: vec!["Nbd2".into(), "Nfd2".into()]
            }
        );
        assert_eq!(san(&read(Some(fen), "Nbd2", NotationLanguage::En)), "Nbd2");
        // A pawn reaching the last rank without the piece named.
        let promo = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        assert!(matches!(
            read(Some(promo), "a7-a8", NotationLanguage::En),
            SealedVerdict::Ambiguous { .. }
        ));
        assert_eq!(
            san(&read(Some(promo), "a8=D", NotationLanguage::Es)),
            "a8=Q"
        );
    }

    #[test]
    fn rule_i_8_2_and_i_8_3_meaningless_and_illegal() {
        use NotationLanguage::En;
        assert!(matches!(
            read(None, "the horse jumps", En),
            SealedVerdict::Meaningless { .. }
        ));
        assert!(matches!(
            read(None, "", En),
            SealedVerdict::Meaningless { .. }
        ));
        assert!(matches!(
            read(None, "Nf5", En),
            SealedVerdict::Illegal { .. }
        ));
        assert!(matches!(
            read(None, "e2-e5", En),
            SealedVerdict::Illegal { .. }
        ));
        // The piece named is not the one on the square.
        assert!(matches!(
            read(None, "Bg1-f3", En),
            SealedVerdict::Meaningless { .. }
        ));
    }

    #[test]
    fn rule_i_8_verdicts_describe_themselves() {
        let legal = SealedVerdict::Legal {
            uci: "g1f3".into(),
            san: "Nf3".into(),
        };
        assert_eq!(legal.describe(), "legal (Nf3)");
        let ambiguous = SealedVerdict::Ambiguous {
            candidates: vec!["Nbd2".into(), "Nfd2".into()],
        };
        assert_eq!(ambiguous.describe(), "ambiguous (Nbd2 or Nfd2)");
        let meaningless = SealedVerdict::meaningless(SealedWhy::NothingWritten);
        assert_eq!(meaningless.describe(), "meaningless (nothing is written)");
        let illegal = SealedVerdict::illegal(SealedWhy::NoLegalMoveFits { text: "Nf5".into() });
        assert_eq!(illegal.describe(), "illegal (no legal move fits Nf5)");
        // The reason as data beside its English; a journal from before it reads without.
        let v = serde_json::to_value(&illegal).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({"verdict": "illegal", "reason": "no legal move fits Nf5",
                "why": {"code": "no_legal_move_fits", "params": {"text": "Nf5"}}})
        );
        let old: SealedVerdict = serde_json::from_value(
            serde_json::json!({"verdict": "meaningless", "reason": "not a move"}),
        )
        .unwrap_or(legal);
        assert_eq!(
            old,
            SealedVerdict::Meaningless {
                reason: "not a move".into(),
                why: None
            }
        );
    }

    #[test]
    fn rule_i_8_figurines_and_spanish_letters_name_the_same_pieces() {
        use NotationLanguage::{En, Es};
        // Black to move with the king on d1's mirror: Re2 in Spanish is the king (rey).
        let fen = Some("8/8/8/8/8/8/r7/3k2K1 b - - 0 1");
        assert_eq!(san(&read(fen, "Re2", Es)), "Ke2");
        assert_eq!(
            san(&read(fen, "Re2", En)),
            "Re2",
            "in English R is the rook"
        );
        assert_eq!(san(&read(fen, "\u{265A}e2", Es)), "Ke2");
        assert_eq!(san(&read(fen, "\u{2654}e2", En)), "Ke2");
        assert_eq!(san(&read(fen, "\u{265C}e2", Es)), "Re2");
        assert_eq!(san(&read(None, "\u{2658}f3", Es)), "Nf3");
        assert_eq!(san(&read(None, "\u{265E}g1-f3", En)), "Nf3");
        assert!(matches!(
            read(None, "\u{2657}b5", En),
            SealedVerdict::Illegal { .. }
        ));
    }

    #[test]
    fn rule_i_8_spanish_promotion_and_pieces() {
        use NotationLanguage::Es;
        let promo = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        assert_eq!(san(&read(Some(promo), "a8=D", Es)), "a8=Q");
        assert_eq!(san(&read(Some(promo), "a7-a8=T", Es)), "a8=R");
        assert_eq!(san(&read(Some(promo), "a8=C", Es)), "a8=N");
        let open = Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1");
        assert_eq!(san(&read(open, "Af1-c4", Es)), "Bc4");
        assert_eq!(san(&read(open, "Dh5", Es)), "Qh5");
        assert_eq!(san(&read(open, "Re2", Es)), "Ke2");
        assert_eq!(san(&read(open, "\u{2655}h5", Es)), "Qh5");
        assert_eq!(
            san(&read(open, "\u{265B}d1-h5", NotationLanguage::En)),
            "Qh5"
        );
    }

    #[test]
    fn rule_i_8_a_pawn_may_be_named_p_or_by_its_figurine() {
        use NotationLanguage::{En, Es};
        assert_eq!(san(&read(None, "Pe4", Es)), "e4");
        assert_eq!(san(&read(None, "Pe2-e4", En)), "e4");
        assert_eq!(san(&read(None, "\u{2659}e4", Es)), "e4");
        assert_eq!(san(&read(None, "\u{265F}e2-e4", En)), "e4");
        // A P before a square that holds no pawn names the wrong piece.
        assert!(matches!(
            read(None, "Pg1-f3", En),
            SealedVerdict::Meaningless { .. }
        ));
        let take = Some("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        assert_eq!(san(&read(take, "Pexd5", Es)), "exd5");
    }

    #[test]
    fn rule_i_8_the_letters_in_force_are_named_king_first() {
        assert_eq!(piece_letters(NotationLanguage::En), "K Q R B N");
        assert_eq!(piece_letters(NotationLanguage::Es), "R D T A C");
    }

    #[test]
    fn rule_i_8_2_a_wrong_letter_names_the_event_letters() {
        assert_eq!(
            read(None, "Nf3", NotationLanguage::Es),
            SealedVerdict::Meaningless {
                reason: "'N' is not a piece letter here (R D T A C)".into(),
                why: Some(Box::new(SealedWhy::NotAPieceLetter {
                    letter: 'N',
                    letters: "R D T A C".into()
                }))
            }
        );
        assert_eq!(
            read(None, "Xf3", NotationLanguage::En),
            SealedVerdict::Meaningless {
                reason: "'X' is not a piece letter here (K Q R B N)".into(),
                why: Some(Box::new(SealedWhy::NotAPieceLetter {
                    letter: 'X',
                    letters: "K Q R B N".into()
                }))
            }
        );
    }

    #[test]
    fn rule_i_8_2_a_long_move_cut_short_is_meaningless() {
        // A square cut after its file must not be read as a square.
        for text in ["e2e", "e2-e", "Ng1-f"] {
            assert!(
                matches!(
                    read(None, text, NotationLanguage::En),
                    SealedVerdict::Meaningless { .. }
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn rule_i_8_long_algebraic_promotion_to_each_piece() {
        let promo = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        for (text, want) in [
            ("a7-a8=Q", "a8=Q"),
            ("a7a8q", "a8=Q"),
            ("a7-a8R", "a8=R"),
            ("a7a8r", "a8=R"),
            ("a7-a8=B", "a8=B"),
            ("a7a8b", "a8=B"),
            ("a7-a8N", "a8=N"),
            ("a7a8=n", "a8=N"),
        ] {
            assert_eq!(san(&read(Some(promo), text, NotationLanguage::En)), want);
        }
    }

    #[test]
    fn rule_i_8_1_an_unnamed_promotion_lists_only_that_pawn_s_four_moves() {
        // Another pawn can promote (h7) and another piece can reach a8 (the knight on
        // b6): neither is a candidate for a7-a8.
        let fen = "4k3/P6P/1N6/8/8/8/8/4K3 w - - 0 1";
        assert_eq!(
            read(Some(fen), "a7-a8", NotationLanguage::En),
            SealedVerdict::Ambiguous {
                candidates: vec!["a8=Q".into(), "a8=R".into(), "a8=B".into(), "a8=N".into()]
            }
        );
    }

    #[test]
    fn rule_i_8_1_a_rank_names_the_knight() {
        let fen = "4k3/8/8/8/8/1N6/8/1N2K3 w - - 0 1";
        assert_eq!(san(&read(Some(fen), "N1d2", NotationLanguage::En)), "N1d2");
        assert_eq!(san(&read(Some(fen), "N3d2", NotationLanguage::En)), "N3d2");
    }

    #[test]
    fn rule_i_2_the_nonce_is_16_to_64_bytes() {
        assert!(commitment(&"00".repeat(MIN_NONCE_BYTES), "e4").is_ok());
        assert!(commitment(&"00".repeat(MIN_NONCE_BYTES - 1), "e4").is_err());
        assert!(commitment(&"00".repeat(MAX_NONCE_BYTES), "e4").is_ok());
        assert!(commitment(&"00".repeat(MAX_NONCE_BYTES + 1), "e4").is_err());
        assert!(commitment(&"00".repeat(MAX_NONCE_BYTES * 2), "e4").is_err());
    }

    #[test]
    fn rule_i_2_the_nonce_may_be_upper_case_hex() {
        assert_eq!(
            decode_hex("ABCDEF0aFf").unwrap(),
            [0xab, 0xcd, 0xef, 0x0a, 0xff]
        );
        assert_eq!(
            decode_hex("0123456789").unwrap(),
            [0x01, 0x23, 0x45, 0x67, 0x89]
        );
        assert!(decode_hex("0G").is_err());
    }

    #[test]
    fn rule_i_2_the_sealed_text_is_1_to_32_characters() {
        assert_eq!(check_move_text(""), Err(SealTextError::Empty));
        assert_eq!(SealTextError::Empty.to_string(), "the sealed move is empty");
        assert!(check_move_text("  ").is_err());
        assert_eq!(check_move_text("e4"), Ok(()));
        // Characters, not bytes: 32 two-byte letters are still a move's length.
        assert_eq!(check_move_text(&"é".repeat(MAX_MOVE_TEXT)), Ok(()));
        assert_eq!(check_move_text(&"x".repeat(MAX_MOVE_TEXT)), Ok(()));
        assert_eq!(
            check_move_text(&"x".repeat(MAX_MOVE_TEXT + 1)),
            Err(SealTextError::TooLong)
        );
        assert_eq!(
            check_move_text(&"x".repeat(MAX_MOVE_TEXT * 2)),
            Err(SealTextError::TooLong)
        );
        assert_eq!(
            SealTextError::TooLong.to_string(),
            format!("a sealed move is at most {MAX_MOVE_TEXT} characters")
        );
    }

    #[test]
    fn nonce_errors_say_what_is_wrong() {
        assert_eq!(
            commitment(&"00".repeat(8), "e4"),
            Err(NonceError::Length(8))
        );
        assert_eq!(
            NonceError::Length(8).to_string(),
            "the nonce must be 16 to 64 random bytes, got 8"
        );
        assert_eq!(commitment("abc", "e4"), Err(NonceError::OddDigits));
        assert_eq!(
            NonceError::OddDigits.to_string(),
            "the nonce must be hex with an even number of digits"
        );
        assert_eq!(decode_hex("0G"), Err(NonceError::NotHex));
        assert_eq!(
            NonceError::NotHex.to_string(),
            "the nonce must be hex (0-9, a-f)"
        );
    }

    #[test]
    fn commitments_are_sha256_of_nonce_and_text() {
        // `(head -c 16 /dev/zero; printf e4) | sha256sum`
        let zero = "00".repeat(16);
        let c = commitment(&zero, "e4").unwrap();
        assert_eq!(
            c,
            "0b45bc0eb4fa8876b387d4d79be0cffc037f28f2a654e9a570e4b2c308599f6a"
        );
        assert_ne!(c, commitment(&zero, "e4 ").unwrap());
        assert_ne!(c, commitment(&"01".repeat(16), "e4").unwrap());
        assert!(commitment("abc", "e4").is_err());
        assert!(commitment(&"00".repeat(8), "e4").is_err());
        assert!(commitment(&"zz".repeat(16), "e4").is_err());
        assert_eq!(
            decode_hex(&encode_hex(&[0, 1, 254, 255])).unwrap(),
            [0, 1, 254, 255]
        );
    }
}
