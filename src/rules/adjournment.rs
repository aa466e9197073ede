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
    },
    /// I.8.3.
    Illegal {
        reason: String,
    },
}

impl SealedVerdict {
    pub fn describe(&self) -> String {
        match self {
            SealedVerdict::Legal { san, .. } => format!("legal ({san})"),
            SealedVerdict::Ambiguous { candidates } => {
                format!("ambiguous ({})", candidates.join(" or "))
            }
            SealedVerdict::Meaningless { reason } => format!("meaningless ({reason})"),
            SealedVerdict::Illegal { reason } => format!("illegal ({reason})"),
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

/// `hex(sha256(nonce ‖ text))`, the nonce given as hex, the text as UTF-8 exactly as
/// written (not trimmed: the shell must keep it byte for byte).
pub fn commitment(nonce_hex: &str, text: &str) -> Result<String, String> {
    let nonce = decode_hex(nonce_hex)?;
    if nonce.len() < MIN_NONCE_BYTES || nonce.len() > MAX_NONCE_BYTES {
        return Err(format!(
            "the nonce must be {MIN_NONCE_BYTES} to {MAX_NONCE_BYTES} random bytes, got {}",
            nonce.len()
        ));
    }
    let mut h = Sha256::new();
    h.update(&nonce);
    h.update(text.as_bytes());
    Ok(encode_hex(&h.finalize()))
}

pub fn check_move_text(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("the sealed move is empty".into());
    }
    if text.chars().count() > MAX_MOVE_TEXT {
        return Err(format!(
            "a sealed move is at most {MAX_MOVE_TEXT} characters"
        ));
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

pub fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    if !s.len().is_multiple_of(2) {
        return Err("the nonce must be hex with an even number of digits".into());
    }
    s.as_bytes()
        .chunks(2)
        .map(|pair| match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err("the nonce must be hex (0-9, a-f)".to_string()),
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

fn letters(lang: NotationLanguage) -> &'static str {
    match lang {
        NotationLanguage::En => "K Q R B N",
        NotationLanguage::Es => "R D T A C",
    }
}

/// Reads a sealed move as written, in SAN (`Nf3`, `Cf3`; the capture sign is optional,
/// as FIDE Appendix C allows), long algebraic (`Ng1-f3`, `e2-e4`, `e7-e8=Q`) or UCI
/// (`e2e4`), with the event's piece letters. Check and annotation marks are ignored.
pub fn read_sealed_move(pos: &Chess, text: &str, lang: NotationLanguage) -> SealedVerdict {
    let meaningless = |reason: String| SealedVerdict::Meaningless { reason };
    let mut t = text.trim().to_string();
    for suffix in ["e.p.", "ep"] {
        if let Some(s) = t.strip_suffix(suffix) {
            t = s.trim_end().to_string();
        }
    }
    let t = t.trim_end_matches(['+', '#', '!', '?']);
    if t.is_empty() {
        return meaningless("nothing is written".into());
    }
    let castle = t.replace('0', "O").to_ascii_uppercase();
    if castle == "O-O" || castle == "O-O-O" {
        return from_san(pos, &castle);
    }
    // Translate to English letters, refusing letters that are no piece in this language.
    let mut english = String::new();
    for c in t.chars() {
        if c.is_ascii_uppercase() {
            match piece_role(c, lang) {
                Some(role) => english.push(english_letter(role)),
                None => {
                    return meaningless(format!(
                        "'{c}' is not a piece letter here ({})",
                        letters(lang)
                    ));
                }
            }
        } else if c.is_ascii_alphanumeric() || matches!(c, '-' | 'x' | ':' | '=') {
            english.push(c);
        } else {
            return meaningless(format!("unexpected character {c:?}"));
        }
    }
    if let Some(v) = long_algebraic(pos, &english) {
        return v;
    }
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
            return Some(SealedVerdict::Meaningless {
                reason: format!("'{tail}' after the squares is not a promotion piece"),
            });
        }
    };
    let from_sq: shakmaty::Square = from.parse().ok()?;
    if let (Some(p), Some(on)) = (piece, pos.board().piece_at(from_sq))
        && english_letter(on.role) != p
    {
        return Some(SealedVerdict::Meaningless {
            reason: format!("the piece named is not the one on {from}"),
        });
    }
    let uci = format!(
        "{from}{to}{}",
        promotion.map(String::from).unwrap_or_default()
    );
    let parsed: UciMove = match uci.parse() {
        Ok(u) => u,
        Err(_) => {
            return Some(SealedVerdict::Meaningless {
                reason: "not a move".into(),
            });
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
            if promotions.len() > 1 && promotion.is_none() {
                SealedVerdict::Ambiguous {
                    candidates: promotions,
                }
            } else {
                SealedVerdict::Illegal {
                    reason: format!("{from}-{to} is not a legal move here"),
                }
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
            return SealedVerdict::Meaningless {
                reason: "not a move in algebraic notation".into(),
            };
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
                [] => SealedVerdict::Illegal {
                    reason: format!("no legal move fits {t}"),
                },
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
            Err(_) => SealedVerdict::Illegal {
                reason: format!("{t} is not legal here"),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::game::parse_fen;

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

// ---------------------------------------------------------------------------------------
// The game's side of the procedure: state, decisions, timers and evolution.

use super::color::ByColor;
use super::dead_position::{self, MateVerdict};
use super::game::{
    AdjournmentView, Arrival, Event, Game, Input, PausedBy, Phase, Rejection, Score, Termination,
    check_time, fen_of, parse_move, require_arbiter,
};

/// A sealed move written and not yet committed (I.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSeal {
    pub commitment: String,
    pub on_board: bool,
}

/// The adjournment part of a game's state (all of it the fold of its events).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdjState {
    pub rules: AdjournmentRules,
    /// The nominal end of the current session.
    pub session_end: Option<Millis>,
    pub stage: Option<Stage>,
    /// Who sealed the move of the current adjournment.
    pub sealer: Option<Color>,
    pub pending: Option<PendingSeal>,
    pub envelopes: Vec<Envelope>,
    pub resumption: Option<Resumption>,
    pub draw_offer: Option<DrawOffer>,
    /// I.13: a move was completed since the resumption.
    pub first_move_done: bool,
    /// I.10: default time passed with an envelope unopened.
    pub awaiting_result: Option<Vec<Color>>,
}

impl AdjState {
    /// I.6: a game that ends before resumption keeps its envelope unopened.
    pub fn game_ended(&mut self) {
        for e in &mut self.envelopes {
            if e.status == EnvelopeStatus::Sealed {
                e.status = EnvelopeStatus::ArchivedUnopened;
            }
        }
        self.draw_offer = None;
        self.pending = None;
    }

    fn last(&self) -> Option<&Envelope> {
        self.envelopes.last()
    }

    fn last_mut(&mut self) -> Option<&mut Envelope> {
        self.envelopes.last_mut()
    }
}

fn not_now(reason: impl Into<String>) -> Rejection {
    Rejection::NotInThisStage {
        reason: reason.into(),
    }
}

fn check_resumption(r: &Resumption) -> Result<(), Rejection> {
    if let Some(end) = r.end
        && end <= r.start
    {
        return Err(Rejection::OutOfRange {
            field: "end",
            value: end.0,
            allowed: format!("after the start ({})", r.start.0),
        });
    }
    Ok(())
}

impl Game {
    /// Timer `SessionEnd`: armed while the game is played (not while sealing or
    /// adjourned) and a session end is known.
    pub(super) fn session_end_deadline(&self) -> Option<Millis> {
        match self.adj.stage {
            None | Some(Stage::Resumed) => self.adj.session_end.map(|t| t.max(self.last_at)),
            _ => None,
        }
    }

    /// Timer `ResumptionStart`.
    pub(super) fn resumption_deadline(&self) -> Option<Millis> {
        match self.adj.stage {
            Some(Stage::Adjourned) => self
                .adj
                .resumption
                .as_ref()
                .map(|r| r.start.max(self.last_at)),
            _ => None,
        }
    }

    /// Whether the clock of the side to move may run now: not while adjourned, and not
    /// while the player who must respond to an unopened envelope is at the board
    /// (I.9.1: the clock starts when the sealed move is played; I.9.2: on arrival the
    /// responder stops it until then).
    pub(super) fn clock_may_run(&self) -> bool {
        let waiting_for = |stage| {
            self.adj.stage == Some(stage)
                && (self.adj.awaiting_result.is_some()
                    || self
                        .adj
                        .last()
                        .is_some_and(|e| *self.present.get(e.sealer.other())))
        };
        self.adj.stage != Some(Stage::Adjourned)
            && !waiting_for(Stage::AwaitingOpening)
            && !waiting_for(Stage::AwaitingCounterOpening)
    }

    /// The player who must seal: the side to move on the board (a move made and not yet
    /// pressed is completed first), or the clock's side when the position is unknown.
    fn sealer_now(&self) -> Color {
        self.position
            .as_ref()
            .map(|p| Color::from(p.turn()))
            .unwrap_or(self.clock.turn)
    }

    fn order(&self, at: Millis, arbiter: Option<String>) -> Event {
        Event::AdjournmentOrdered {
            at,
            sealer: self.sealer_now(),
            arbiter,
            early: self.adj.session_end.is_some_and(|end| at < end),
        }
    }

    /// I.1.1: at the session end the arbiter requires the player to move to seal.
    pub(super) fn on_session_end(&self, due: Millis) -> Vec<Event> {
        vec![self.order(due, None)]
    }

    /// I.5 / I.9 / I.11: the resumption session begins.
    pub(super) fn on_resumption_start(&self, due: Millis) -> Vec<Event> {
        let (Some(resumption), Some(sealer)) = (self.adj.resumption.clone(), self.adj.sealer)
        else {
            return Vec::new();
        };
        vec![Event::ResumptionStarted {
            at: due,
            resumption,
            responder: sealer.other(),
            white_ms: self.clock.side(Color::White).remaining,
            black_ms: self.clock.side(Color::Black).remaining,
            fen: self.position.as_ref().map(fen_of),
        }]
    }

    /// I.10 / A10 at resumption: when an envelope is still unopened, whether the sealed
    /// move ended the game decides, so the result waits for the opening. `None`: the
    /// ordinary default (6.6) applies.
    pub(super) fn on_resumption_default(&self, at: Millis, absent: &[Color]) -> Option<Vec<Event>> {
        if !matches!(
            self.adj.stage,
            Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening)
        ) || absent.is_empty()
        {
            return None;
        }
        let envelope = self
            .adj
            .last()
            .filter(|e| e.status == EnvelopeStatus::Sealed)?;
        // A10: the exceptions are only for a late sealer; a late responder simply loses.
        if self.adj.rules.edition == Edition::AppendixA && absent.contains(&envelope.sealer.other())
        {
            return None;
        }
        Some(vec![
            Event::DefaultTimePassed {
                at,
                absent: absent.to_vec(),
            },
            Event::ResultAwaitsEnvelope {
                at,
                absent: absent.to_vec(),
                envelope: envelope.number,
            },
        ])
    }

    /// What presses, moves and pauses mean while sealing or adjourned. `None`: the
    /// ordinary rules apply.
    pub(super) fn adjournment_gate(
        &self,
        input: &Input,
        now: Millis,
    ) -> Option<Result<Vec<Event>, Rejection>> {
        let stage = self.adj.stage?;
        if self.result.is_some() {
            return None;
        }
        let adjourned = || {
            Err(Rejection::Adjourned {
                resumes: self.adj.resumption.as_ref().map(|r| r.start),
            })
        };
        match (stage, input) {
            (Stage::Sealing, Input::Move { mv } | Input::Press { mv: Some(mv), .. }) => {
                let sealer = self.adj.sealer?;
                if self.clock.turn != sealer {
                    // The opponent's move is completed first (the press starts the
                    // sealer's clock).
                    return None;
                }
                if let Input::Press {
                    side: Some(side), ..
                } = input
                    && *side != sealer
                {
                    return Some(Err(Rejection::NotYourTurn {
                        side: *side,
                        running: sealer,
                    }));
                }
                Some(Err(Rejection::MoveIsTheSealedMove {
                    side: sealer,
                    mv: mv.clone(),
                }))
            }
            (Stage::Sealing, Input::Press { side, mv: None }) => {
                let sealer = self.adj.sealer?;
                if self.clock.turn != sealer {
                    return None;
                }
                if let Some(side) = side
                    && *side != sealer
                {
                    return Some(Err(Rejection::NotYourTurn {
                        side: *side,
                        running: sealer,
                    }));
                }
                // I.1.1: the sealer stops the clock, which commits the sealed move.
                Some(self.commit(now, None))
            }
            (
                Stage::Adjourned,
                Input::Move { .. }
                | Input::Press { .. }
                | Input::PlayerPause { .. }
                | Input::Pause { .. }
                | Input::Resume { .. },
            ) => Some(adjourned()),
            (
                Stage::AwaitingOpening | Stage::AwaitingCounterOpening,
                Input::Move { mv } | Input::Press { mv: Some(mv), .. },
            ) if self
                .adj
                .last()
                .is_some_and(|e| e.status == EnvelopeStatus::Lost) =>
            {
                Some(self.stated_move(mv, now))
            }
            // I.9.2: "al llegar, el jugador puede detener su reloj": the arriving
            // responder's press stops the clock and records the arrival.
            (
                Stage::AwaitingOpening | Stage::AwaitingCounterOpening,
                Input::Press { side, mv: None },
            ) => {
                let waiting = self.adj.last()?.sealer.other();
                let arriving = !*self.present.get(waiting)
                    && self.clock.running() == Some(waiting)
                    && side.is_none_or(|s| s == waiting);
                Some(if arriving {
                    Ok(vec![Event::PlayerPresent {
                        at: now,
                        side: waiting,
                        arrival: Arrival::Press,
                    }])
                } else {
                    Err(Rejection::EnvelopeNotOpened)
                })
            }
            (
                Stage::AwaitingOpening | Stage::AwaitingCounterOpening,
                Input::Move { .. } | Input::Press { .. },
            ) => Some(Err(Rejection::EnvelopeNotOpened)),
            _ => None,
        }
    }

    /// The inputs of the adjournment procedure.
    pub(super) fn decide_adjournment(
        &self,
        input: &Input,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        match input {
            Input::SetSessionEnd { end, arbiter } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                if self.adj.stage == Some(Stage::Sealing) {
                    return Err(not_now(
                        "the session end cannot change while a move is being sealed (I.1.2 charges up to it)",
                    ));
                }
                Ok(vec![Event::SessionEndSet {
                    at: now,
                    end: *end,
                    arbiter: arbiter.clone(),
                }])
            }
            Input::SetAdjournmentRules { rules, arbiter } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                if self.adj.stage.is_some() {
                    return Err(not_now(
                        "the adjournment rules are fixed before the game is adjourned",
                    ));
                }
                if let Some(t) = rules.resumption_default_time {
                    check_time("resumption_default_time", t)?;
                }
                Ok(vec![Event::AdjournmentRulesSet {
                    at: now,
                    rules: *rules,
                    arbiter: arbiter.clone(),
                }])
            }
            Input::Adjourn {
                arbiter,
                resumption,
            } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                match &self.phase {
                    Phase::Scheduled => {
                        return Err(Rejection::NotStarted {
                            start: self.setup.start,
                        });
                    }
                    Phase::Paused(PausedBy::Adjourned) => {
                        return Err(Rejection::Adjourned {
                            resumes: self.adj.resumption.as_ref().map(|r| r.start),
                        });
                    }
                    _ => {}
                }
                if !matches!(self.adj.stage, None | Some(Stage::Resumed)) {
                    return Err(not_now(
                        "the game is already being adjourned or has not resumed yet",
                    ));
                }
                if let Some(r) = resumption {
                    check_resumption(r)?;
                }
                let mut events = vec![self.order(now, Some(arbiter.clone()))];
                if let Some(r) = resumption {
                    events.push(Event::ResumptionScheduled {
                        at: now,
                        resumption: r.clone(),
                        arbiter: arbiter.clone(),
                    });
                }
                Ok(events)
            }
            Input::ScheduleResumption {
                resumption,
                arbiter,
            } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                if !matches!(self.adj.stage, Some(Stage::Sealing | Stage::Adjourned)) {
                    return Err(not_now(
                        "a resumption is scheduled for a game being adjourned or adjourned",
                    ));
                }
                check_resumption(resumption)?;
                Ok(vec![Event::ResumptionScheduled {
                    at: now,
                    resumption: resumption.clone(),
                    arbiter: arbiter.clone(),
                }])
            }
            Input::Seal {
                side,
                mv,
                nonce,
                on_board,
            } => {
                self.reject_if_over()?;
                let sealer = self.sealing()?;
                if let Some(side) = side
                    && *side != sealer
                {
                    return Err(Rejection::NotTheSealer {
                        side: *side,
                        sealer,
                    });
                }
                if self.adj.pending.as_ref().is_some_and(|p| p.on_board) {
                    return Err(Rejection::SealIsFinal);
                }
                check_move_text(mv).map_err(|reason| Rejection::BadSealText { reason })?;
                let commitment =
                    commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
                Ok(vec![Event::Sealed {
                    at: now,
                    side: sealer,
                    commitment,
                    on_board: *on_board,
                }])
            }
            Input::CommitSeal { arbiter } => {
                self.reject_if_over()?;
                if let Some(a) = arbiter {
                    require_arbiter(a)?;
                }
                let sealer = self.sealing()?;
                if self.clock.turn != sealer {
                    return Err(Rejection::MovePending {
                        side: self.clock.turn,
                    });
                }
                self.commit(now, arbiter.clone())
            }
            Input::VerifyEnvelope { arbiter } => {
                require_arbiter(arbiter)?;
                let envelope = self
                    .adj
                    .envelopes
                    .iter()
                    .rev()
                    .find(|e| e.status == EnvelopeStatus::Sealed)
                    .ok_or_else(|| not_now("no sealed envelope to verify"))?;
                Ok(vec![Event::EnvelopeVerified {
                    at: now,
                    envelope: envelope.number,
                    arbiter: arbiter.clone(),
                }])
            }
            Input::DrawOffer { side, arbiter } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                if self.phase == Phase::Scheduled {
                    return Err(Rejection::NotStarted {
                        start: self.setup.start,
                    });
                }
                match &self.adj.draw_offer {
                    Some(o) if o.side == *side => Ok(Vec::new()),
                    Some(o) => Err(not_now(format!(
                        "{}'s draw offer stands; answer it (draw_reply)",
                        o.side
                    ))),
                    None => Ok(vec![Event::DrawOffered {
                        at: now,
                        side: *side,
                        arbiter: arbiter.clone(),
                    }]),
                }
            }
            Input::DrawReply { accept, arbiter } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                let offer = self.adj.draw_offer.as_ref().ok_or(Rejection::NoDrawOffer)?;
                let side = offer.side.other();
                let mut events = vec![Event::DrawOfferAnswered {
                    at: now,
                    side,
                    accepted: *accept,
                    arbiter: arbiter.clone(),
                }];
                if *accept {
                    // I.6: before resumption this ends the game with the envelope unopened.
                    events.push(self.ended(
                        now,
                        Score::Draw,
                        Termination::Arbiter {
                            kind: super::game::ArbiterResult::AgreedDraw,
                            arbiter: arbiter.clone(),
                            reason: format!("{side} accepted {}'s draw offer", offer.side),
                        },
                    ));
                }
                Ok(events)
            }
            Input::OpenEnvelope { mv, nonce, arbiter } => {
                require_arbiter(arbiter)?;
                self.reject_if_over()?;
                self.open(mv, nonce, arbiter, now)
            }
            Input::CounterSeal { mv, nonce } => self.counter_seal(mv, nonce, now),
            Input::EnvelopeLost { arbiter, reason } => {
                self.check_adjustment(arbiter, reason, "envelope_lost")?;
                let envelope = self
                    .adj
                    .last()
                    .filter(|e| e.status == EnvelopeStatus::Sealed)
                    .ok_or_else(|| not_now("no sealed envelope is in custody"))?;
                Ok(vec![Event::EnvelopeLost {
                    at: now,
                    envelope: envelope.number,
                    arbiter: arbiter.clone(),
                    reason: reason.clone(),
                }])
            }
            Input::CorrectTime {
                side,
                remaining,
                arbiter,
                reason,
            } => {
                self.check_adjustment(arbiter, reason, "correct_time")?;
                check_time("remaining", *remaining)?;
                let open = match self.adj.stage {
                    Some(Stage::Adjourned | Stage::AwaitingOpening) => true,
                    Some(Stage::Resumed | Stage::AwaitingCounterOpening) => {
                        !self.adj.first_move_done
                    }
                    _ => false,
                };
                if !open {
                    return Err(Rejection::CorrectionWindowClosed);
                }
                Ok(vec![Event::TimeCorrected {
                    at: now,
                    side: *side,
                    remaining_ms: *remaining,
                    previous_ms: self.clock.remaining_at(*side, now),
                    arbiter: arbiter.clone(),
                    reason: reason.clone(),
                }])
            }
            _ => Err(not_now("not an adjournment input")),
        }
    }

    /// The player ordered to seal, while sealing.
    fn sealing(&self) -> Result<Color, Rejection> {
        match (self.adj.stage, self.adj.sealer) {
            (Some(Stage::Sealing), Some(sealer)) => Ok(sealer),
            _ => Err(not_now(
                "no move is being sealed (the arbiter orders it: adjourn, or the session end)",
            )),
        }
    }

    fn times(&self, now: Millis) -> ByColor<EnvelopeTime> {
        ByColor::new_with(|c| EnvelopeTime {
            used_ms: self.clock.side(c).used
                + self
                    .clock
                    .charge(now)
                    .main
                    .min(if self.clock.running() == Some(c) {
                        Millis(i64::MAX)
                    } else {
                        Millis::ZERO
                    }),
            remaining_ms: self.clock.remaining_at(c, now),
        })
    }

    fn envelope(
        &self,
        sealer: Color,
        counter_seal: bool,
        commitment: String,
        times: ByColor<EnvelopeTime>,
        now: Millis,
    ) -> Envelope {
        let name = |c: Color| match c {
            Color::White => self.setup.white.clone(),
            Color::Black => self.setup.black.clone(),
        };
        Envelope {
            number: u32::try_from(self.adj.envelopes.len() + 1).unwrap_or(u32::MAX),
            counter_seal,
            white: name(Color::White),
            black: name(Color::Black),
            fen: self.position.as_ref().map(fen_of),
            white_time: times.white,
            black_time: times.black,
            sealer,
            sealer_name: name(sealer),
            move_number: self
                .position
                .as_ref()
                .map(|p| p.fullmoves().get())
                .unwrap_or(self.clock.side(sealer).moves + 1),
            draw_offer: self.adj.draw_offer.clone(),
            resumption: self.adj.resumption.clone(),
            sealed_at: now,
            commitment,
            status: EnvelopeStatus::Sealed,
            verified: None,
            opened_at: None,
            opened: None,
        }
    }

    /// I.1.1 / I.1.2 / A1a: the sealer's clock stops; the move is committed.
    fn commit(&self, now: Millis, arbiter: Option<String>) -> Result<Vec<Event>, Rejection> {
        let sealer = self.sealing()?;
        let pending = self
            .adj
            .pending
            .as_ref()
            .ok_or(Rejection::SealFirst { side: sealer })?;
        // I.1.2: adjourned before the session's end, the sealer is deemed to have sealed
        // at the nominal end time.
        let charged_to = match self.adj.session_end {
            Some(end) if end > now && self.clock.running() == Some(sealer) => end,
            _ => now,
        };
        let charged = self.clock.charge(charged_to).main;
        let done = self.completion(sealer, charged, now);
        let mut times = self.times(now);
        let sealer_time = times.get_mut(sealer);
        sealer_time.used_ms = self.clock.side(sealer).used + charged;
        sealer_time.remaining_ms = match &done.advance {
            Some(Event::PeriodAdvanced { remaining_ms, .. }) => *remaining_ms,
            _ => done.remaining,
        };
        let envelope = self.envelope(sealer, false, pending.commitment.clone(), times, now);
        let mut events = vec![Event::SealCommitted {
            at: now,
            side: sealer,
            charged_ms: charged,
            charged_to,
            increment_ms: done.increment,
            remaining_ms: done.remaining,
            moves: done.moves,
            arbiter,
            envelope: Box::new(envelope),
        }];
        events.extend(done.advance);
        Ok(events)
    }

    /// I.7 / I.8 / I.9: open the envelope waiting to be opened.
    fn open(
        &self,
        mv: &str,
        nonce: &str,
        arbiter: &str,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let envelope = match self.adj.stage {
            Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening) => self
                .adj
                .last()
                .filter(|e| e.status == EnvelopeStatus::Sealed),
            _ => None,
        }
        .ok_or_else(|| {
            not_now("no envelope is waiting to be opened (it opens at the resumption, I.7, I.9)")
        })?;
        let responder = envelope.sealer.other();
        // I.7, except that once default time has passed (I.10) the opening only decides
        // whether the sealed move ended the game.
        if !*self.present.get(responder) && self.adj.awaiting_result.is_none() {
            return Err(Rejection::ResponderAbsent { side: responder });
        }
        let check = commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
        if check != envelope.commitment {
            return Err(Rejection::CommitmentMismatch {
                envelope: envelope.number,
            });
        }
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let verdict = read_sealed_move(pos, mv, self.adj.rules.notation_language);
        let mut events = vec![Event::EnvelopeOpened {
            at: now,
            envelope: envelope.number,
            opening: Opening {
                arbiter: arbiter.to_string(),
                move_text: mv.to_string(),
                nonce: nonce.to_string(),
                verdict: verdict.clone(),
            },
        }];
        match &verdict {
            SealedVerdict::Legal { uci, .. } => {
                events.extend(self.play_sealed(
                    uci,
                    envelope.sealer,
                    Some(envelope.number),
                    now,
                )?);
            }
            _ => {
                // I.8: the sealer loses, except in the cases of Articles 5, 6.9, 9.6 and
                // 9.7. A game already decided by 5 or 9.6 is not adjourned any more; what
                // remains is 6.9: an opponent who could not mate by any series of legal
                // moves only draws.
                let (score, termination) = match dead_position::can_mate(pos, responder.into()) {
                    MateVerdict::CannotMate { .. } => (
                        Score::Draw,
                        Termination::InvalidSealedMoveOpponentCannotMate {
                            side: envelope.sealer,
                            verdict,
                        },
                    ),
                    _ => (
                        Score::win_for(responder),
                        Termination::InvalidSealedMove {
                            side: envelope.sealer,
                            verdict,
                        },
                    ),
                };
                events.push(self.ended(now, score, termination));
            }
        }
        Ok(events)
    }

    /// The sealed (or stated) move is played; a move that ends the game ends it (I.10:
    /// that result prevails); otherwise a default that waited for it applies.
    fn play_sealed(
        &self,
        uci: &str,
        side: Color,
        envelope: Option<u32>,
        now: Millis,
    ) -> Result<Vec<Event>, Rejection> {
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let m = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(pos).ok())
            .ok_or_else(|| Rejection::BadMove {
                mv: uci.to_string(),
                reason: "illegal in this position".into(),
            })?;
        let mut after = pos.clone();
        after.play_unchecked(m);
        let mut events = vec![Event::SealedMovePlayed {
            at: now,
            side,
            uci: uci.to_string(),
            san: San::from_move(pos, m).to_string(),
            fen: fen_of(&after),
            envelope,
        }];
        if let Some((score, termination)) = self.ending_after(&after, pos.is_irreversible(m)) {
            events.push(self.ended(now, score, termination));
        } else if let Some(absent) = &self.adj.awaiting_result {
            events.extend(self.default_result(now, absent.clone()));
        }
        Ok(events)
    }

    /// I.12.1: with the envelope lost, the sealer makes the move they state they sealed.
    fn stated_move(&self, mv: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
        let envelope = self.adj.last().ok_or(Rejection::EnvelopeNotOpened)?;
        let pos = self.position.as_ref().ok_or(Rejection::PositionUnknown)?;
        let m = parse_move(pos, mv).map_err(|reason| Rejection::BadMove {
            mv: mv.to_string(),
            reason,
        })?;
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        self.play_sealed(&uci, envelope.sealer, None, now)
    }

    /// I.9.3: the responder seals the reply for the absent sealer.
    fn counter_seal(&self, mv: &str, nonce: &str, now: Millis) -> Result<Vec<Event>, Rejection> {
        self.reject_unless_playing()?;
        let sealer = self
            .adj
            .sealer
            .ok_or_else(|| not_now("the game was not adjourned"))?;
        let responder = sealer.other();
        let opened_original = self
            .adj
            .last()
            .is_some_and(|e| !e.counter_seal && e.status == EnvelopeStatus::Opened);
        if self.adj.stage != Some(Stage::Resumed)
            || !opened_original
            || self.adj.first_move_done
            || self.clock.turn != responder
        {
            return Err(not_now(
                "I.9.3: a counter-seal is the responder's reply to the opened sealed move",
            ));
        }
        if *self.present.get(sealer) {
            return Err(not_now(format!(
                "I.9.3: only while the player who sealed ({sealer}) is absent"
            )));
        }
        check_move_text(mv).map_err(|reason| Rejection::BadSealText { reason })?;
        let commitment = commitment(nonce, mv).map_err(|reason| Rejection::BadNonce { reason })?;
        let charged = self.clock.charge(now).main;
        let done = self.completion(responder, charged, now);
        let mut times = self.times(now);
        times.get_mut(responder).remaining_ms = match &done.advance {
            Some(Event::PeriodAdvanced { remaining_ms, .. }) => *remaining_ms,
            _ => done.remaining,
        };
        let envelope = self.envelope(responder, true, commitment, times, now);
        let mut events = vec![Event::CounterSealed {
            at: now,
            side: responder,
            charged_ms: charged,
            increment_ms: done.increment,
            remaining_ms: done.remaining,
            moves: done.moves,
            envelope: Box::new(envelope),
        }];
        events.extend(done.advance);
        Ok(events)
    }

    /// The adjournment events. Called by `evolve` only.
    pub(super) fn evolve_adjournment(&mut self, event: &Event) {
        match event {
            Event::SessionEndSet { end, .. } => self.adj.session_end = *end,
            Event::AdjournmentRulesSet { rules, .. } => self.adj.rules = *rules,
            Event::AdjournmentOrdered { sealer, .. } => {
                self.adj.stage = Some(Stage::Sealing);
                self.adj.sealer = Some(*sealer);
                self.adj.pending = None;
                self.adj.resumption = None;
            }
            Event::ResumptionScheduled { resumption, .. } => {
                self.adj.resumption = Some(resumption.clone());
                if let Some(e) = self.adj.last_mut()
                    && e.status == EnvelopeStatus::Sealed
                    && !e.counter_seal
                {
                    e.resumption = Some(resumption.clone());
                }
            }
            Event::Sealed {
                commitment,
                on_board,
                ..
            } => {
                self.adj.pending = Some(PendingSeal {
                    commitment: commitment.clone(),
                    on_board: *on_board,
                });
            }
            Event::SealCommitted {
                side,
                charged_ms,
                remaining_ms,
                moves,
                envelope,
                ..
            } => {
                // A1a: the clock stops without starting the opponent's. The charge (up to
                // the nominal session end, I.1.2) is in the event.
                self.clock.running_since = None;
                self.clock.delay_left = Millis::ZERO;
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                s.used += *charged_ms;
                s.moves = *moves;
                self.clock.pass_turn(side.other());
                self.phase = Phase::Paused(PausedBy::Adjourned);
                self.paused_since = None;
                // No default time between sessions; presence is taken again (I.9).
                self.default_done = true;
                self.present = ByColor::default();
                self.adj.stage = Some(Stage::Adjourned);
                self.adj.pending = None;
                self.adj.first_move_done = false;
                self.adj.awaiting_result = None;
                self.adj.envelopes.push((**envelope).clone());
            }
            Event::EnvelopeVerified {
                at,
                envelope,
                arbiter,
            } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.verified = Some(Verification {
                        at: *at,
                        arbiter: arbiter.clone(),
                    });
                }
            }
            Event::DrawOffered { at, side, .. } => {
                self.adj.draw_offer = Some(DrawOffer {
                    side: *side,
                    at: *at,
                });
            }
            Event::DrawOfferAnswered { .. } => self.adj.draw_offer = None,
            Event::ResumptionStarted {
                at,
                resumption,
                responder,
                ..
            } => {
                self.phase = Phase::Running;
                self.paused_since = None;
                self.paused_total = Millis::ZERO;
                // I.10: default time counts from the resumption.
                self.default_base = *at;
                self.default_len = self.adj.rules.resumption_default(self.setup.default_time);
                self.default_done = false;
                self.adj.session_end = resumption.end;
                self.adj.stage = Some(Stage::AwaitingOpening);
                self.clock.pass_turn(*responder);
                let k = self.clock.side(*responder).period;
                self.clock.delay_left = self.period(*responder, k).delay();
                // I.9.2 / I.11: the responder's clock runs from the resumption time unless
                // the responder is there to see the envelope opened (I.9.1).
                if self.clock_may_run() {
                    self.clock.start(*at);
                }
            }
            Event::EnvelopeOpened {
                at,
                envelope,
                opening,
            } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.status = EnvelopeStatus::Opened;
                    e.opened_at = Some(*at);
                    e.opened = Some(opening.clone());
                }
            }
            Event::SealedMovePlayed { at, side, uci, .. } => {
                self.play_uci(uci);
                self.adj.stage = Some(Stage::Resumed);
                // Already the responder's turn since the resumption: the time its clock ran
                // before the opening (I.9.2) stays part of this turn's cost.
                self.clock.turn = side.other();
                if self.phase == Phase::Running
                    && self.clock.running_since.is_none()
                    && self.adj.awaiting_result.is_none()
                    && !self.frozen()
                {
                    self.clock.start(*at);
                }
            }
            Event::CounterSealed {
                at,
                side,
                remaining_ms,
                moves,
                envelope,
                ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                s.moves = *moves;
                self.clock.pass_turn(side.other());
                self.adj.stage = Some(Stage::AwaitingCounterOpening);
                self.adj.envelopes.push((**envelope).clone());
                self.begin_turn(*at);
                if !self.clock_may_run() {
                    self.clock.stop(*at);
                }
            }
            Event::EnvelopeLost { envelope, .. } => {
                if let Some(e) = self
                    .adj
                    .envelopes
                    .iter_mut()
                    .find(|e| e.number == *envelope)
                {
                    e.status = EnvelopeStatus::Lost;
                }
            }
            Event::TimeCorrected {
                at,
                side,
                remaining_ms,
                ..
            } => {
                self.clock.settle(*at);
                let s = self.clock.side_mut(*side);
                s.remaining = *remaining_ms;
                if *remaining_ms > Millis::ZERO {
                    s.flagged_at = None;
                }
            }
            Event::ResultAwaitsEnvelope { at, absent, .. } => {
                self.adj.awaiting_result = Some(absent.clone());
                self.clock.stop(*at);
            }
            _ => {}
        }
    }

    pub(super) fn adjournment_view(&self) -> Option<AdjournmentView> {
        let stage = self.adj.stage?;
        Some(AdjournmentView {
            stage,
            sealer: self.adj.sealer,
            sealed: self.adj.pending.is_some(),
            resumption: self.adj.resumption.clone(),
            envelopes: self.adj.envelopes.clone(),
            result_awaits_envelope: self.adj.awaiting_result.is_some(),
            correction_window: match stage {
                Stage::Adjourned | Stage::AwaitingOpening => true,
                Stage::Resumed | Stage::AwaitingCounterOpening => !self.adj.first_move_done,
                Stage::Sealing => false,
            },
            rules: self.adj.rules,
        })
    }
}
