//! FIDE Tournament Report Files (TRF16, TRF26): text to [`Trf`] and back. Pure: no I/O.
//!
//! Lines are decoded to characters first (UTF-8, or Windows-1252 when the bytes are not UTF-8),
//! because columns count characters. We own the header tags (`??2`) and the `001` player
//! records; every other line (teams, byes, JaVaFo's `XX?` extensions, national ratings,
//! `###` comments) is kept as it was. Writing rewrites only the columns we changed, so
//! `write(read(f)) == f` byte for byte. Whole-file checks (both halves of every pairing
//! agree) run after the last line.
//!
//! Files from the wild carry lines that are not records (FIDE's own example file has
//! column rulers between its records) and codes nobody documents. Pairing programs skip
//! them (bbpPairings ignores any code it does not know), so we do too, with a
//! [`TrfWarning`] naming the line; a malformed record of a code we read is still refused.

pub mod error;
pub mod record;
pub mod round;
pub mod tc;
pub mod warning;

pub use error::{Position, TrfError, TrfErrorKind};
pub use round::{Bye, RoundPairing, RoundPlan};
pub use tc::TrfTimeControl;
pub use warning::TrfWarning;

use record::{Cols, Field, player, round_fields};

use hallclock_rules::Color;

/// The result column of a round (TRF16, and TRF26's `X`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ResultCode {
    #[serde(rename = "1")]
    Win,
    #[serde(rename = "=")]
    Draw,
    #[serde(rename = "0")]
    Loss,
    /// Forfeit win.
    #[serde(rename = "+")]
    ForfeitWin,
    /// Forfeit loss.
    #[serde(rename = "-")]
    ForfeitLoss,
    /// Won, drawn, lost in a game that lasted less than one move (not rated).
    #[serde(rename = "W")]
    WinUnrated,
    #[serde(rename = "D")]
    DrawUnrated,
    #[serde(rename = "L")]
    LossUnrated,
    #[serde(rename = "H")]
    HalfPointBye,
    #[serde(rename = "F")]
    FullPointBye,
    /// Pairing-allocated bye.
    #[serde(rename = "U")]
    PairingBye,
    /// Zero-point bye (known absence).
    #[serde(rename = "Z")]
    ZeroPointBye,
    /// TRF26: unknown result, e.g. an adjourned game.
    #[serde(rename = "X")]
    Unknown,
}

impl ResultCode {
    pub fn from_char(c: char) -> Option<ResultCode> {
        use ResultCode::*;
        Some(match c.to_ascii_uppercase() {
            '1' => Win,
            '=' => Draw,
            '0' => Loss,
            '+' => ForfeitWin,
            '-' => ForfeitLoss,
            'W' => WinUnrated,
            'D' => DrawUnrated,
            'L' => LossUnrated,
            'H' => HalfPointBye,
            'F' => FullPointBye,
            'U' => PairingBye,
            'Z' => ZeroPointBye,
            'X' => Unknown,
            _ => return None,
        })
    }

    pub fn as_char(self) -> char {
        use ResultCode::*;
        match self {
            Win => '1',
            Draw => '=',
            Loss => '0',
            ForfeitWin => '+',
            ForfeitLoss => '-',
            WinUnrated => 'W',
            DrawUnrated => 'D',
            LossUnrated => 'L',
            HalfPointBye => 'H',
            FullPointBye => 'F',
            PairingBye => 'U',
            ZeroPointBye => 'Z',
            Unknown => 'X',
        }
    }

    /// Points in tenths under the default scoring of TRF26 tag 162 (W 1, D ½, L 0, A 0,
    /// P as W, X as D).
    pub fn default_points(self) -> u32 {
        use ResultCode::*;
        match self {
            Win | ForfeitWin | WinUnrated | FullPointBye | PairingBye => 10,
            Draw | DrawUnrated | HalfPointBye | Unknown => 5,
            Loss | ForfeitLoss | LossUnrated | ZeroPointBye => 0,
        }
    }

    /// A code only a player without an opponent can have.
    pub fn is_bye(self) -> bool {
        use ResultCode::*;
        matches!(
            self,
            HalfPointBye | FullPointBye | PairingBye | ZeroPointBye
        )
    }

    pub fn is_forfeit(self) -> bool {
        matches!(self, ResultCode::ForfeitWin | ResultCode::ForfeitLoss)
    }

    /// What the opponent's column may say when this one says `self`.
    fn agrees_with(self, other: ResultCode) -> bool {
        use ResultCode::*;
        matches!(
            (self, other),
            (Win, Loss)
                | (Loss, Win)
                | (Draw, Draw)
                | (Loss, Loss)
                | (Draw, Loss)
                | (Loss, Draw)
                | (ForfeitWin, ForfeitLoss)
                | (ForfeitLoss, ForfeitWin)
                | (ForfeitLoss, ForfeitLoss)
                | (WinUnrated, LossUnrated)
                | (LossUnrated, WinUnrated)
                | (DrawUnrated, DrawUnrated)
                | (Unknown, Unknown)
        )
    }
}

impl std::fmt::Display for ResultCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// One round of one player: the 10-character block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundEntry {
    /// The scheduled opponent's starting rank; `None` for `0000` or blank (bye, absent).
    pub opponent: Option<u32>,
    /// `w` / `b`; `None` for `-` or blank.
    pub colour: Option<Color>,
    /// `None` while blank (not played yet, or not paired).
    pub result: Option<ResultCode>,
}

/// A `001` record. Blank fields are `None`; text fields are trimmed of the padding and
/// otherwise exactly as the file spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// 1-based line number in the file.
    pub line: usize,
    pub rank: u32,
    pub sex: Option<char>,
    pub title: Option<String>,
    pub name: Option<String>,
    pub rating: Option<u32>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    pub birth: Option<String>,
    /// In tenths (`11.5` = 115).
    pub points: Option<u32>,
    /// The standings rank (columns 86–89).
    pub place: Option<u32>,
    /// Round 1 first.
    pub rounds: Vec<RoundEntry>,
}

impl Player {
    pub fn round(&self, round: usize) -> Option<&RoundEntry> {
        round.checked_sub(1).and_then(|i| self.rounds.get(i))
    }
}

/// A header tag (`012`, `222`, …): its code and trimmed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub line: usize,
    pub code: String,
    pub value: String,
}

/// How the file's bytes were decoded, so that writing gives them back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8 {
        bom: bool,
    },
    /// Not UTF-8: each byte is one character, as Windows programs save "ANSI" text
    /// (Windows-1252, which is ISO 8859-1 plus letters such as `Š`, `ž`, `Œ` at
    /// 0x80–0x9F; the five bytes it leaves undefined stand for themselves, as in the
    /// WHATWG decoder, so every byte comes back).
    Windows1252,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    text: String,
    ending: &'static str,
}

/// A Tournament Report File.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trf {
    pub encoding: Encoding,
    lines: Vec<Line>,
    pub tags: Vec<Tag>,
    /// In file order.
    pub players: Vec<Player>,
    /// The lines skipped with a warning, in file order.
    pub warnings: Vec<TrfWarning>,
    /// How many team records (`013`, `310`, …) the file has: kept, not read.
    pub team_records: usize,
    /// The file replaces FIDE's default scoring (tag 162, `XXS`, `BB?`).
    own_scoring: bool,
}

const SEXES: &str = "MWF";
const COLOURS: &str = "WB-";

fn decode(bytes: &[u8]) -> (Encoding, String) {
    match std::str::from_utf8(bytes) {
        Ok(s) => match s.strip_prefix('\u{feff}') {
            Some(rest) => (Encoding::Utf8 { bom: true }, rest.to_string()),
            None => (Encoding::Utf8 { bom: false }, s.to_string()),
        },
        Err(_) => (
            Encoding::Windows1252,
            bytes.iter().map(|b| cp1252_char(*b)).collect(),
        ),
    }
}

/// Windows-1252's characters for the bytes 0x80–0x9F (0x81, 0x8D, 0x8F, 0x90 and 0x9D are
/// undefined and stand for themselves).
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

fn cp1252_char(b: u8) -> char {
    match b {
        0x80..=0x9f => CP1252_HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The byte of a character read by [`cp1252_char`], or written by us in ASCII.
fn cp1252_byte(c: char) -> u8 {
    match CP1252_HIGH.iter().position(|h| *h == c) {
        Some(i) => 0x80 + i as u8,
        // Every other character came from one byte below 0x80 or above 0x9f.
        None => u32::from(c) as u8,
    }
}

fn split_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (text, ending, next) = match rest.find(['\r', '\n']) {
            None => (rest, "", ""),
            Some(i) if rest[i..].starts_with("\r\n") => (&rest[..i], "\r\n", &rest[i + 2..]),
            Some(i) if rest[i..].starts_with('\r') => (&rest[..i], "\r", &rest[i + 1..]),
            Some(i) => (&rest[..i], "\n", &rest[i + 1..]),
        };
        out.push(Line {
            text: text.to_string(),
            ending,
        });
        rest = next;
    }
    out
}

/// What a line is, by its first columns.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Player,
    Tag,
    /// Skipped silently: blank lines, `###` comments (TRF26 remark 1), national rating
    /// records and the records of [`record::OTHER_RECORDS`].
    Kept,
    Team,
    /// A three-character code nobody defines.
    Unknown(String),
    /// Not a record at all.
    NotARecord,
}

fn kind(chars: &[char]) -> Kind {
    // Control characters count as blank: DOS programs end a file with Ctrl-Z.
    if chars.iter().all(|c| c.is_whitespace() || c.is_control()) {
        return Kind::Kept;
    }
    let code: String = chars.iter().take(3).collect();
    if code == "###" {
        return Kind::Kept;
    }
    let separated = chars.get(3).is_none_or(|c| *c == ' ');
    let letters = code.chars().all(|c| c.is_ascii_uppercase());
    let alphanumeric = code
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase());
    if chars.len() < 3 || !separated || !alphanumeric {
        return Kind::NotARecord;
    }
    if code == "001" {
        return Kind::Player;
    }
    if record::tag_name(&code).is_some() {
        return Kind::Tag;
    }
    if record::TEAM_RECORDS.contains(&code.as_str()) {
        return Kind::Team;
    }
    // National rating records: a federation's three letters, then the starting rank of
    // the 001 record they belong to (TRF26, "National Rating Support"). FIDE's format
    // line `DDD SSSS …` has letters there, so it stays unknown.
    let national = letters
        && Cols { line: 0, chars }
            .number(record::player::RANK, 1, 9999)
            .is_ok_and(|r| r.is_some());
    if national || record::OTHER_RECORDS.contains(&code.as_str()) {
        return Kind::Kept;
    }
    Kind::Unknown(code)
}

fn read_player(cols: &Cols, warnings: &mut Vec<TrfWarning>) -> Result<Player, TrfError> {
    let rank = cols
        .number(player::RANK, 1, 9999)?
        .ok_or_else(|| TrfError::new(TrfErrorKind::Missing, cols.at(player::RANK)))?;
    let mut p = Player {
        line: cols.line,
        rank: rank as u32,
        sex: cols.one_of(player::SEX, SEXES, "m, w")?,
        title: cols.text(player::TITLE),
        name: cols.text(player::NAME),
        rating: cols.number(player::RATING, 0, 9999)?.map(|n| n as u32),
        federation: cols.text(player::FEDERATION),
        // Programs write 0 for a player without a FIDE id: no id, as a blank.
        fide_id: cols
            .number(player::FIDE_ID, 0, 99_999_999_999)?
            .filter(|id| *id != 0),
        birth: cols.text(player::BIRTH),
        points: cols.points(player::POINTS)?,
        // 0 is no rank, as for the FIDE id. Pairing programs do not read this column
        // (bbpPairings reads the starting rank, rating, points and rounds), so a file
        // they take may have anything the format allows here.
        place: cols
            .number(player::PLACE, 0, 9999)?
            .filter(|n| *n != 0)
            .map(|n| n as u32),
        rounds: Vec::new(),
    };
    let mut round = 1;
    while cols.chars.len() >= round_fields(round)[0].first {
        let [opp, colour, result] = round_fields(round);
        let opponent = match cols.text(opp) {
            Some(t) if t.chars().all(|c| c == '0') => None,
            Some(_) => cols.number(opp, 1, 9999)?.map(|n| n as u32),
            None => None,
        };
        let colour_char = cols.one_of(colour, COLOURS, "w, b, -")?;
        let colour_value = match colour_char.map(|c| c.to_ascii_lowercase()) {
            Some('w') => Some(Color::White),
            Some('b') => Some(Color::Black),
            _ => None,
        };
        let result_value = match cols.text(result) {
            None => None,
            Some(t) => Some(
                t.chars()
                    .next()
                    .and_then(ResultCode::from_char)
                    .filter(|_| t.chars().count() == 1)
                    .ok_or_else(|| {
                        TrfError::new(
                            TrfErrorKind::NotOneOf {
                                value: t.clone(),
                                expected: "1 = 0 + - W D L H F U Z X",
                            },
                            cols.at(result),
                        )
                    })?,
            ),
        };
        // lichess's Swiss export writes Z for a game still being played (SwissTrf.scala,
        // `Ongoing`): with an opponent it means "no result yet".
        let result_value = match (opponent, result_value) {
            (Some(_), Some(ResultCode::ZeroPointBye)) => None,
            (_, r) => r,
        };
        let whole = Position::field(cols.line, opp.first, result.last, "round");
        let inconsistent = |why| TrfError::new(TrfErrorKind::Inconsistent { why }, whole.clone());
        if opponent == Some(p.rank) {
            return Err(TrfError::new(TrfErrorKind::PlaysItself, cols.at(opp)));
        }
        match (opponent, colour_value, result_value) {
            // Older programs write a game not played over the board (a forfeit, or a bye
            // given against a named opponent) with the colour `-`, as in FIDE's own
            // example file: read as not played on a board, said once, the rest kept.
            (Some(o), None, _) if colour_char == Some('-') => {
                warnings.push(TrfWarning::PairedWithoutColour {
                    line: cols.line,
                    round,
                    opponent: o,
                });
            }
            (Some(_), None, _) => {
                return Err(inconsistent("a paired round needs the colour w or b"));
            }
            (None, Some(_), _) => {
                return Err(inconsistent("a colour without an opponent (0000 is a bye)"));
            }
            (Some(_), _, Some(r)) if r.is_bye() => {
                return Err(inconsistent("a bye code (H F U Z) with an opponent"));
            }
            (None, None, Some(r)) if !(r.is_bye() || r.is_forfeit() || r == ResultCode::Draw) => {
                return Err(inconsistent("a game result without an opponent"));
            }
            _ => {}
        }
        p.rounds.push(RoundEntry {
            opponent,
            colour: colour_value,
            result: result_value,
        });
        round += 1;
    }
    // Trailing blank blocks say nothing.
    while p.rounds.last() == Some(&RoundEntry::default()) {
        p.rounds.pop();
    }
    Ok(p)
}

impl Trf {
    /// Read a file's bytes.
    pub fn read(bytes: &[u8]) -> Result<Trf, TrfError> {
        let (encoding, text) = decode(bytes);
        let lines = split_lines(&text);
        let mut trf = Trf {
            encoding,
            lines,
            tags: Vec::new(),
            players: Vec::new(),
            warnings: Vec::new(),
            team_records: 0,
            own_scoring: false,
        };
        for (i, line) in trf.lines.iter().enumerate() {
            let number = i + 1;
            let chars: Vec<char> = line.text.chars().collect();
            let cols = Cols {
                line: number,
                chars: &chars,
            };
            let code: String = chars.iter().take(3).collect();
            let k = kind(&chars);
            if matches!(k, Kind::Tag | Kind::Kept)
                && record::SCORING_RECORDS.contains(&code.as_str())
            {
                trf.own_scoring = true;
            }
            match k {
                Kind::Player => trf.players.push(read_player(&cols, &mut trf.warnings)?),
                Kind::Tag => {
                    let value = cols.text(record::tag_value(&code)).unwrap_or_default();
                    trf.tags.push(Tag {
                        line: number,
                        code,
                        value,
                    });
                }
                Kind::Team => trf.team_records += 1,
                Kind::Kept => {}
                Kind::Unknown(code) => trf
                    .warnings
                    .push(TrfWarning::UnknownRecord { line: number, code }),
                Kind::NotARecord => trf.warnings.push(TrfWarning::NotARecord {
                    line: number,
                    text: line.text.clone(),
                }),
            }
        }
        if trf.players.is_empty() {
            return Err(TrfError::new(
                TrfErrorKind::NotATrf {
                    why: "it has no player records (001)",
                },
                Position::line(0),
            ));
        }
        trf.check_tags()?;
        trf.check_pairings()?;
        Ok(trf)
    }

    fn check_tags(&self) -> Result<(), TrfError> {
        for t in &self.tags {
            let at = |first: usize, last: usize| {
                Position::field(t.line, first, last, record::tag_name(&t.code).unwrap_or(""))
            };
            // The value's last column, after any spaces between the code and the value.
            let end = self.value_column(t) + t.value.chars().count() - 1;
            let number = t.value.chars().all(|c| c.is_ascii_digit());
            match t.code.as_str() {
                // A blank value says nothing.
                _ if t.value.is_empty() => {}
                "142" if !number => {
                    return Err(TrfError::new(
                        TrfErrorKind::NotANumber {
                            value: t.value.clone(),
                        },
                        at(end + 1 - t.value.chars().count(), end),
                    ));
                }
                "222" => {
                    if let Err(p) = tc::parse(&t.value) {
                        let col = self.value_column(t) + p.column - 1;
                        return Err(TrfError::new(
                            TrfErrorKind::BadTimeControl {
                                value: t.value.clone(),
                                why: p.why,
                            },
                            at(col, col),
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The column where a tag's trimmed value starts.
    fn value_column(&self, t: &Tag) -> usize {
        let text = &self.lines[t.line - 1].text;
        let lead = text
            .chars()
            .skip(4)
            .take_while(|c| c.is_whitespace())
            .count();
        5 + lead
    }

    fn check_pairings(&self) -> Result<(), TrfError> {
        let mut by_rank = std::collections::HashMap::new();
        for p in &self.players {
            if let Some(first) = by_rank.insert(p.rank, p) {
                return Err(TrfError::new(
                    TrfErrorKind::DuplicateRank {
                        rank: p.rank,
                        first_line: first.line,
                    },
                    Position::field(
                        p.line,
                        player::RANK.first,
                        player::RANK.last,
                        "starting rank",
                    ),
                ));
            }
        }
        for p in &self.players {
            for (i, e) in p.rounds.iter().enumerate() {
                let round = i + 1;
                let Some(o) = e.opponent else { continue };
                let [opp_f, colour_f, result_f] = round_fields(round);
                let here = |f: Field| Position::field(p.line, f.first, f.last, f.name);
                let Some(other) = by_rank.get(&o) else {
                    return Err(TrfError::new(
                        TrfErrorKind::UnknownOpponent { rank: o },
                        here(opp_f),
                    ));
                };
                let theirs = other.round(round).copied().unwrap_or_default();
                let disagree = |f: Field, why| {
                    TrfError::new(
                        TrfErrorKind::PairingDisagrees {
                            round,
                            opponent: o,
                            opponent_line: other.line,
                            why,
                        },
                        here(f),
                    )
                };
                if theirs.opponent != Some(p.rank) {
                    return Err(disagree(
                        opp_f,
                        "the opponent's line names another opponent",
                    ));
                }
                match (e.colour, theirs.colour) {
                    // Both written `-`: a game not played on a board (a warning says so).
                    (None, None) => {}
                    (None, Some(_)) | (Some(_), None) => {
                        return Err(disagree(
                            colour_f,
                            "one line gives a colour and the other '-' (not played)",
                        ));
                    }
                    (mine, other) if mine == other => {
                        return Err(disagree(colour_f, "both players have the same colour"));
                    }
                    _ => {}
                }
                let agree = match (e.result, theirs.result) {
                    (None, None) => true,
                    (Some(a), Some(b)) => a.agrees_with(b),
                    _ => false,
                };
                if !agree {
                    return Err(disagree(result_f, "the two results do not go together"));
                }
            }
        }
        Ok(())
    }

    /// The file's bytes: unchanged lines exactly as read.
    pub fn write(&self) -> Vec<u8> {
        let mut text = String::new();
        if self.encoding == (Encoding::Utf8 { bom: true }) {
            text.push('\u{feff}');
        }
        for l in &self.lines {
            text.push_str(&l.text);
            text.push_str(l.ending);
        }
        match self.encoding {
            Encoding::Utf8 { .. } => text.into_bytes(),
            // Every character came from one byte, or was written by us in ASCII.
            Encoding::Windows1252 => text.chars().map(cp1252_byte).collect(),
        }
    }

    pub fn tag(&self, code: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|t| t.code == code)
            .map(|t| t.value.as_str())
    }

    /// Tag 012.
    pub fn name(&self) -> Option<&str> {
        self.tag("012")
    }

    /// Tag 222, TRF26's encoded time control (checked when read).
    pub fn time_control(&self) -> Option<TrfTimeControl> {
        self.tag("222").and_then(|v| tc::parse(v).ok())
    }

    /// The number of round blocks any player has.
    pub fn rounds(&self) -> usize {
        self.players
            .iter()
            .map(|p| p.rounds.len())
            .max()
            .unwrap_or(0)
    }

    pub fn player(&self, rank: u32) -> Option<&Player> {
        self.players.iter().find(|p| p.rank == rank)
    }

    /// Fill in results: `(starting rank, round, code)` for each player. Either every change
    /// is applied, or none (the error says which would not fit). The points column follows
    /// (FIDE's default scoring) unless the file declares its own scoring (tag 162, JaVaFo's
    /// `XXS`, bbpPairings' `BB?`) or leaves points blank.
    pub fn set_results(&mut self, changes: &[(u32, usize, ResultCode)]) -> Result<(), TrfError> {
        let adjust_points = !self.own_scoring;
        let mut edits: Vec<(usize, usize, ResultCode, Option<u32>)> = Vec::new();
        let mut points: std::collections::HashMap<usize, Option<u32>> = Default::default();
        for &(rank, round, code) in changes {
            let Some(pi) = self.players.iter().position(|p| p.rank == rank) else {
                return Err(TrfError::new(
                    TrfErrorKind::NoSuchPlayer { rank },
                    Position::line(0),
                ));
            };
            let p = &self.players[pi];
            let Some(entry) = p.round(round) else {
                return Err(TrfError::new(
                    TrfErrorKind::NoSuchRound { round },
                    Position::line(p.line),
                ));
            };
            let before = points.get(&pi).copied().unwrap_or(p.points);
            let after = if adjust_points {
                before.map(|t| {
                    (t + code.default_points())
                        .saturating_sub(entry.result.map_or(0, |r| r.default_points()))
                })
            } else {
                before
            };
            if let Some(t) = after {
                let text = record::format_points(t);
                if text.chars().count() > player::POINTS.last - player::POINTS.first + 1 {
                    return Err(TrfError::new(
                        TrfErrorKind::DoesNotFit { value: text },
                        Position::field(
                            p.line,
                            player::POINTS.first,
                            player::POINTS.last,
                            "points",
                        ),
                    ));
                }
            }
            points.insert(pi, after);
            edits.push((pi, round, code, after));
        }
        for (pi, round, code, after) in edits {
            let p = &mut self.players[pi];
            if let Some(e) = p.rounds.get_mut(round - 1) {
                e.result = Some(code);
            }
            p.points = after;
            let line = &mut self.lines[p.line - 1];
            let mut chars: Vec<char> = line.text.chars().collect();
            let [_, _, result] = round_fields(round);
            put(&mut chars, result, &code.as_char().to_string());
            if let Some(t) = after {
                put(&mut chars, player::POINTS, &record::format_points(t));
            }
            line.text = chars.into_iter().collect();
        }
        Ok(())
    }
}

/// Write `value` right-aligned into a field, padding the line with spaces if it is
/// shorter. The caller made sure it fits.
fn put(chars: &mut Vec<char>, f: Field, value: &str) {
    if chars.len() < f.last {
        chars.resize(f.last, ' ');
    }
    let width = f.last - f.first + 1;
    let padded = format!("{value:>width$}");
    for (k, c) in padded.chars().enumerate() {
        chars[f.first - 1 + k] = c;
    }
}
