//! The board's vocabulary: [`Piece`] codes and [`Field`] numbers as the wire writes them
//! (dgt-protocol.md §4.1), with their serde forms (`"P"`, `"e2"`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A piece code on a DGT square (§4.1, H). Serialised as its FEN letter, `.` for empty,
/// and `draw` / `white_win` / `black_win` for the three "magic" result pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Piece {
    #[default]
    Empty = 0x00,
    WhitePawn = 0x01,
    WhiteRook = 0x02,
    WhiteKnight = 0x03,
    WhiteBishop = 0x04,
    WhiteKing = 0x05,
    WhiteQueen = 0x06,
    BlackPawn = 0x07,
    BlackRook = 0x08,
    BlackKnight = 0x09,
    BlackBishop = 0x0a,
    BlackKing = 0x0b,
    BlackQueen = 0x0c,
    MagicDraw = 0x0d,
    MagicWhiteWin = 0x0e,
    MagicBlackWin = 0x0f,
}

impl Piece {
    const ALL: [Piece; 16] = [
        Piece::Empty,
        Piece::WhitePawn,
        Piece::WhiteRook,
        Piece::WhiteKnight,
        Piece::WhiteBishop,
        Piece::WhiteKing,
        Piece::WhiteQueen,
        Piece::BlackPawn,
        Piece::BlackRook,
        Piece::BlackKnight,
        Piece::BlackBishop,
        Piece::BlackKing,
        Piece::BlackQueen,
        Piece::MagicDraw,
        Piece::MagicWhiteWin,
        Piece::MagicBlackWin,
    ];

    /// The piece for a wire code, `None` for codes above 0x0f.
    pub fn from_code(code: u8) -> Option<Piece> {
        Piece::ALL.get(usize::from(code)).copied()
    }

    /// The wire code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// FEN letter, `.` for empty, a word for the magic pieces.
    pub fn as_str(self) -> &'static str {
        match self {
            Piece::Empty => ".",
            Piece::WhitePawn => "P",
            Piece::WhiteRook => "R",
            Piece::WhiteKnight => "N",
            Piece::WhiteBishop => "B",
            Piece::WhiteKing => "K",
            Piece::WhiteQueen => "Q",
            Piece::BlackPawn => "p",
            Piece::BlackRook => "r",
            Piece::BlackKnight => "n",
            Piece::BlackBishop => "b",
            Piece::BlackKing => "k",
            Piece::BlackQueen => "q",
            Piece::MagicDraw => "draw",
            Piece::MagicWhiteWin => "white_win",
            Piece::MagicBlackWin => "black_win",
        }
    }

    /// Inverse of [`Piece::as_str`].
    pub fn from_name(s: &str) -> Option<Piece> {
        Piece::ALL.iter().copied().find(|p| p.as_str() == s)
    }

    /// The chess piece, `None` for empty and the magic pieces.
    pub fn to_shakmaty(self) -> Option<shakmaty::Piece> {
        use shakmaty::{Color, Role};
        let (color, role) = match self {
            Piece::WhitePawn => (Color::White, Role::Pawn),
            Piece::WhiteRook => (Color::White, Role::Rook),
            Piece::WhiteKnight => (Color::White, Role::Knight),
            Piece::WhiteBishop => (Color::White, Role::Bishop),
            Piece::WhiteKing => (Color::White, Role::King),
            Piece::WhiteQueen => (Color::White, Role::Queen),
            Piece::BlackPawn => (Color::Black, Role::Pawn),
            Piece::BlackRook => (Color::Black, Role::Rook),
            Piece::BlackKnight => (Color::Black, Role::Knight),
            Piece::BlackBishop => (Color::Black, Role::Bishop),
            Piece::BlackKing => (Color::Black, Role::King),
            Piece::BlackQueen => (Color::Black, Role::Queen),
            Piece::Empty | Piece::MagicDraw | Piece::MagicWhiteWin | Piece::MagicBlackWin => {
                return None;
            }
        };
        Some(shakmaty::Piece { color, role })
    }

    /// The DGT code of a chess piece.
    pub fn from_shakmaty(piece: shakmaty::Piece) -> Piece {
        use shakmaty::{Color, Role};
        match (piece.color, piece.role) {
            (Color::White, Role::Pawn) => Piece::WhitePawn,
            (Color::White, Role::Rook) => Piece::WhiteRook,
            (Color::White, Role::Knight) => Piece::WhiteKnight,
            (Color::White, Role::Bishop) => Piece::WhiteBishop,
            (Color::White, Role::King) => Piece::WhiteKing,
            (Color::White, Role::Queen) => Piece::WhiteQueen,
            (Color::Black, Role::Pawn) => Piece::BlackPawn,
            (Color::Black, Role::Rook) => Piece::BlackRook,
            (Color::Black, Role::Knight) => Piece::BlackKnight,
            (Color::Black, Role::Bishop) => Piece::BlackBishop,
            (Color::Black, Role::King) => Piece::BlackKing,
            (Color::Black, Role::Queen) => Piece::BlackQueen,
        }
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Piece {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Piece {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Piece::from_name(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown piece {s:?}")))
    }
}

/// A square as the board numbers it (§4.1, H): 0 = a8, 7 = h8, 8 = a7 … 63 = h1, with the
/// connector on the player's left. The board never renumbers a rotated set-up; the names
/// here are the board's, not the game's (see [`crate::dgt::board_state`] for orientation).
/// Serialised as its name, e.g. `"e2"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Field(u8);

impl Field {
    /// `None` unless `index` is 0..=63.
    pub fn new(index: u8) -> Option<Field> {
        (index < 64).then_some(Field(index))
    }

    /// 0..=63.
    pub fn index(self) -> u8 {
        self.0
    }

    /// All 64 fields in wire order.
    pub fn all() -> impl Iterator<Item = Field> {
        (0..64).map(Field)
    }

    /// The square of the same name, i.e. as seen with white on the board's rows 1 and 2.
    pub fn square(self) -> shakmaty::Square {
        let file = u32::from(self.0 % 8);
        let rank = 7 - u32::from(self.0 / 8);
        shakmaty::Square::from_coords(shakmaty::File::new(file), shakmaty::Rank::new(rank))
    }

    /// The field of the same name as `sq`.
    pub fn from_square(sq: shakmaty::Square) -> Field {
        let file = u8::from(sq.file());
        let rank = u8::from(sq.rank());
        Field((7 - rank) * 8 + file)
    }

    /// The field at the same place on a board turned by 180° (what a rotated set-up
    /// means, §4.1).
    pub fn rotated(self) -> Field {
        Field(63 - self.0)
    }

    /// Name such as `e2`.
    pub fn name(self) -> String {
        self.square().to_string()
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.square(), f)
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let sq: shakmaty::Square = s
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("unknown field {s:?}")))?;
        Ok(Field::from_square(sq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_follow_h_numbering() {
        assert_eq!(Field::new(0).unwrap().name(), "a8");
        assert_eq!(Field::new(52).unwrap().name(), "e2");
        assert_eq!(Field::new(36).unwrap().name(), "e4");
        assert_eq!(Field::new(63).unwrap().name(), "h1");
        assert!(Field::new(64).is_none());
        for f in Field::all() {
            assert_eq!(Field::from_square(f.square()), f);
        }
    }
}
