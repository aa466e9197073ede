//! Squares, pieces and moves as the simulated board reads them: parsed once where they
//! enter (a control line, a test's call), then carried as values. A leaf: it imports
//! nothing of the simulator, so the board and the control channel can both use it.

use std::fmt;

/// A square as the board's field index, a8 = 0 … h1 = 63 (dgt-protocol.md §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Square(u8);

impl Square {
    /// A square name such as `e4` (lowercase).
    pub fn parse(s: &str) -> Option<Square> {
        match s.as_bytes() {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Some(Square((b'8' - r) * 8 + (f - b'a'))),
            _ => None,
        }
    }

    pub fn index(self) -> u8 {
        self.0
    }

    /// 0 = the a-file … 7 = the h-file.
    pub fn file(self) -> u8 {
        self.0 % 8
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = (b'a' + self.0 % 8) as char;
        let rank = (b'8' - self.0 / 8) as char;
        write!(f, "{file}{rank}")
    }
}

/// A piece as its FEN letter (`P`, `n`, …) and its DGT piece code (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    letter: char,
    code: u8,
}

impl Piece {
    pub fn from_fen(letter: char) -> Option<Piece> {
        let white = match letter.to_ascii_lowercase() {
            'p' => 0x01,
            'r' => 0x02,
            'n' => 0x03,
            'b' => 0x04,
            'k' => 0x05,
            'q' => 0x06,
            _ => return None,
        };
        let code = if letter.is_ascii_uppercase() {
            white
        } else {
            white + 6
        };
        Some(Piece { letter, code })
    }

    pub fn letter(self) -> char {
        self.letter
    }

    pub fn code(self) -> u8 {
        self.code
    }
}

/// A move in UCI notation (`e2e4`, `e7e8q`): what a player's hand does on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimMove {
    pub from: Square,
    pub to: Square,
    /// The promotion piece's lowercase letter (`q`, `r`, `b`, `n`).
    pub promotion: Option<char>,
}

impl SimMove {
    /// Case-insensitive, as a script writer types it.
    pub fn parse(uci: &str) -> Option<SimMove> {
        let uci = uci.to_ascii_lowercase();
        if !(4..=5).contains(&uci.len()) || !uci.is_ascii() {
            return None;
        }
        let from = Square::parse(&uci[0..2])?;
        let to = Square::parse(&uci[2..4])?;
        let promotion = match uci.as_bytes().get(4) {
            None => None,
            Some(c @ (b'q' | b'r' | b'b' | b'n')) => Some(*c as char),
            Some(_) => return None,
        };
        Some(SimMove {
            from,
            to,
            promotion,
        })
    }
}

impl fmt::Display for SimMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion {
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_and_moves_read_back_as_they_were_written() {
        for name in ["a8", "h1", "e4", "d5"] {
            assert_eq!(
                Square::parse(name).map(|s| s.to_string()).as_deref(),
                Some(name)
            );
        }
        assert_eq!(Square::parse("a8").map(Square::index), Some(0));
        assert_eq!(Square::parse("h1").map(Square::index), Some(63));
        assert_eq!(Square::parse("e2").map(Square::index), Some(52));
        for bad in ["", "e", "e9", "i1", "e44", "E4"] {
            assert_eq!(Square::parse(bad), None, "{bad}");
        }
        for uci in ["e2e4", "e7e8q", "g1f3"] {
            assert_eq!(
                SimMove::parse(uci).map(|m| m.to_string()).as_deref(),
                Some(uci)
            );
        }
        assert_eq!(
            SimMove::parse("E2E4").map(|m| m.to_string()).as_deref(),
            Some("e2e4")
        );
        for bad in ["e2e", "e2e4k", "e2e4qq", "e2é4", "x2e4"] {
            assert_eq!(SimMove::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn pieces_carry_their_dgt_codes() {
        let code = |c| Piece::from_fen(c).map(Piece::code);
        assert_eq!(code('P'), Some(0x01));
        assert_eq!(code('Q'), Some(0x06));
        assert_eq!(code('p'), Some(0x07));
        assert_eq!(code('k'), Some(0x0b));
        assert_eq!(code('x'), None);
    }
}
