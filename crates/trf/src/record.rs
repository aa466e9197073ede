//! The records we own, each with one field table (columns as in FIDE's TRF document,
//! 1-based, inclusive, counting characters), and the small readers of their fields.

use super::error::{Position, TrfError, TrfErrorKind};

/// One fixed-width field of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub first: usize,
    pub last: usize,
}

const fn field(name: &'static str, first: usize, last: usize) -> Field {
    Field { name, first, last }
}

/// The `001` player record: its fixed part.
pub mod player {
    use super::{Field, field};
    pub const CODE: Field = field("record code", 1, 3);
    pub const RANK: Field = field("starting rank", 5, 8);
    pub const SEX: Field = field("sex", 10, 10);
    pub const TITLE: Field = field("title", 11, 13);
    pub const NAME: Field = field("name", 15, 47);
    pub const RATING: Field = field("FIDE rating", 49, 52);
    pub const FEDERATION: Field = field("federation", 54, 56);
    pub const FIDE_ID: Field = field("FIDE id", 58, 68);
    pub const BIRTH: Field = field("birth date", 70, 79);
    pub const POINTS: Field = field("points", 81, 84);
    pub const PLACE: Field = field("rank", 86, 89);
    /// Round 1's block starts here; each round takes 10 columns.
    pub const ROUNDS_FROM: usize = 92;
    pub const ROUND_WIDTH: usize = 10;
}

/// The three fields of round `round` (1-based) of a player record.
pub fn round_fields(round: usize) -> [Field; 3] {
    let at = player::ROUNDS_FROM + (round - 1) * player::ROUND_WIDTH;
    [
        field("opponent", at, at + 3),
        field("colour", at + 5, at + 5),
        field("result", at + 7, at + 7),
    ]
}

/// The header tags (`??2` records) with their names; the value starts at column 5.
pub const TAGS: &[(&str, &str)] = &[
    ("012", "tournament name"),
    ("022", "city"),
    ("032", "federation"),
    ("042", "date of start"),
    ("052", "date of end"),
    ("062", "number of players"),
    ("072", "number of rated players"),
    ("082", "number of teams"),
    ("092", "type of tournament"),
    ("102", "chief arbiter"),
    ("112", "deputy chief arbiter"),
    ("122", "allotted times per moves/game"),
    ("132", "dates of the rounds"),
    ("142", "number of rounds"),
    ("152", "initial colour"),
    ("162", "scoring point system"),
    ("172", "encoded starting rank method"),
    ("182", "pairing controller identifier"),
    ("192", "encoded type of tournament"),
    ("202", "tie-breaks"),
    ("212", "tie-breaks for standings"),
    ("222", "encoded time control"),
    ("352", "team colour sequence"),
    ("362", "team scoring point system"),
];

/// Team records (TRF16's `013`; TRF26's team section). The hall plays individual games,
/// so it keeps them as they are and only counts them.
pub const TEAM_RECORDS: &[&str] = &["013", "300", "310", "320", "330", "801", "802"];

/// Other records that FIDE's TRF16/TRF26 or the pairing engines define, kept as they are
/// without being read: TRF26's byes, accelerations, prohibited pairings and abnormal
/// points (`240`–`299`); JaVaFo's extensions (`XXR` rounds, `XXC` configuration, `XXA`
/// accelerations, `XXP` forbidden pairs, `XXS` scoring); bbpPairings' point system
/// (`BBW`…`BBU`, `src/fileformats/trf.cpp`).
pub const OTHER_RECORDS: &[&str] = &[
    "240", "250", "260", "299", "XXR", "XXC", "XXA", "XXP", "XXS", "BBW", "BBD", "BBL", "BBZ",
    "BBF", "BBU",
];

/// Records that replace FIDE's default scoring: with one of them, the points column is
/// the file's, not ours to recompute (tag 162; JaVaFo's `XXS`; bbpPairings' `BB?`).
pub const SCORING_RECORDS: &[&str] = &["162", "XXS", "BBW", "BBD", "BBL", "BBZ", "BBF", "BBU"];

pub fn tag_name(code: &str) -> Option<&'static str> {
    TAGS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// A tag's value field.
pub fn tag_value(code: &str) -> Field {
    field(tag_name(code).unwrap_or("value"), 5, usize::MAX)
}

/// One line decoded to characters, with its number, for the field readers.
pub struct Cols<'a> {
    pub line: usize,
    pub chars: &'a [char],
}

impl Cols<'_> {
    /// The field's text as written (possibly shorter than the field at the end of a line).
    pub fn raw(&self, f: Field) -> String {
        let from = (f.first - 1).min(self.chars.len());
        let to = f.last.min(self.chars.len());
        self.chars[from..to].iter().collect()
    }

    /// The trimmed text; a blank field is `None`.
    pub fn text(&self, f: Field) -> Option<String> {
        let raw = self.raw(f);
        let t = raw.trim();
        (!t.is_empty()).then(|| t.to_string())
    }

    pub fn at(&self, f: Field) -> Position {
        Position::field(
            self.line,
            f.first,
            f.last.min(self.chars.len().max(f.first)),
            f.name,
        )
    }

    fn error(&self, f: Field, kind: TrfErrorKind) -> TrfError {
        TrfError::new(kind, Position::field(self.line, f.first, f.last, f.name))
    }

    /// A number in `min..=max`; blank is `None`.
    pub fn number(&self, f: Field, min: u64, max: u64) -> Result<Option<u64>, TrfError> {
        let Some(t) = self.text(f) else {
            return Ok(None);
        };
        if !t.chars().all(|c| c.is_ascii_digit()) {
            return Err(self.error(f, TrfErrorKind::NotANumber { value: t }));
        }
        match t.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.error(f, TrfErrorKind::OutOfRange { value: t, min, max })),
        }
    }

    /// Points in the `11.5` format, as tenths; blank is `None`.
    pub fn points(&self, f: Field) -> Result<Option<u32>, TrfError> {
        let Some(t) = self.text(f) else {
            return Ok(None);
        };
        parse_points(&t)
            .map(Some)
            .ok_or_else(|| self.error(f, TrfErrorKind::BadPoints { value: t }))
    }

    /// One character out of `allowed` (compared case-insensitively); blank is `None`.
    pub fn one_of(
        &self,
        f: Field,
        allowed: &str,
        expected: &'static str,
    ) -> Result<Option<char>, TrfError> {
        let Some(t) = self.text(f) else {
            return Ok(None);
        };
        let mut cs = t.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if allowed.contains(c.to_ascii_uppercase()) => Ok(Some(c)),
            _ => Err(self.error(f, TrfErrorKind::NotOneOf { value: t, expected })),
        }
    }
}

/// `11.5`, `2`, `0.0` → tenths. Only whole tenths; at most 9999.9.
pub fn parse_points(t: &str) -> Option<u32> {
    let (whole, frac) = match t.split_once('.') {
        Some((w, f)) => (w, f),
        None => (t, "0"),
    };
    if whole.is_empty()
        || whole.len() > 4
        || frac.len() != 1
        || !whole.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    Some(whole.parse::<u32>().ok()? * 10 + frac.parse::<u32>().ok()?)
}

/// Tenths as the points field writes them: `2.5`, `11.0`.
pub fn format_points(tenths: u32) -> String {
    format!("{}.{}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_read_in_tenths() {
        assert_eq!(parse_points("11.5"), Some(115));
        assert_eq!(parse_points("0.0"), Some(0));
        assert_eq!(parse_points("3"), Some(30));
        assert_eq!(parse_points("1.25"), None);
        assert_eq!(parse_points(".5"), None);
        assert_eq!(parse_points("1,5"), None);
        // Whole points up to four digits; one digit of tenths; digits only.
        assert_eq!(parse_points("9999.5"), Some(99995));
        assert_eq!(parse_points("12345.0"), None);
        assert_eq!(parse_points("1."), None);
        assert_eq!(parse_points("a.5"), None);
        // Rust's integer parser takes a sign; the points column does not.
        assert_eq!(parse_points("+1.5"), None);
        assert_eq!(parse_points("1.x"), None);
        assert_eq!(format_points(115), "11.5");
        assert_eq!(format_points(0), "0.0");
    }

    #[test]
    fn round_blocks_are_ten_columns_from_92() {
        let [o, c, r] = round_fields(1);
        assert_eq!((o.first, o.last, c.first, r.first), (92, 95, 97, 99));
        let [o, c, r] = round_fields(3);
        assert_eq!((o.first, o.last, c.first, r.first), (112, 115, 117, 119));
    }
}
