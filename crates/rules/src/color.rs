//! `Color` (white/black, the game) and `ByColor`, with the serde forms the API uses.
//!
//! shakmaty has the same two types without serde; these convert to and from them where
//! the chess position is involved. (`Side`, left/right on the physical clock, is another
//! type, mapped once per board: rule 6.4.)

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    White,
    Black,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl std::fmt::Display for Color {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A text that names no side; holds the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a side: expected 'white' or 'black'")]
pub struct NotASide(pub String);

impl std::str::FromStr for Color {
    type Err = NotASide;
    fn from_str(s: &str) -> Result<Color, NotASide> {
        match s {
            "white" | "w" => Ok(Color::White),
            "black" | "b" => Ok(Color::Black),
            _ => Err(NotASide(s.to_owned())),
        }
    }
}

impl From<shakmaty::Color> for Color {
    fn from(c: shakmaty::Color) -> Color {
        match c {
            shakmaty::Color::White => Color::White,
            shakmaty::Color::Black => Color::Black,
        }
    }
}

impl From<Color> for shakmaty::Color {
    fn from(c: Color) -> shakmaty::Color {
        match c {
            Color::White => shakmaty::Color::White,
            Color::Black => shakmaty::Color::Black,
        }
    }
}

/// One value per colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ByColor<T> {
    pub white: T,
    pub black: T,
}

impl<T> ByColor<T> {
    pub fn new_with(mut f: impl FnMut(Color) -> T) -> ByColor<T> {
        ByColor {
            white: f(Color::White),
            black: f(Color::Black),
        }
    }

    pub fn get(&self, c: Color) -> &T {
        match c {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    pub fn get_mut(&mut self, c: Color) -> &mut T {
        match c {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_read_as_scripts_and_commands_write_them() {
        for (text, side) in [
            ("white", Color::White),
            ("w", Color::White),
            ("black", Color::Black),
            ("b", Color::Black),
        ] {
            assert_eq!(text.parse::<Color>(), Ok(side), "{text}");
        }
        assert_eq!("White".parse::<Color>(), Err(NotASide("White".to_string())));
        assert_eq!(
            NotASide("White".to_string()).to_string(),
            "'White' is not a side: expected 'white' or 'black'"
        );
    }
}
