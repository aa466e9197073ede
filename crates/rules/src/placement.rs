//! 6.4: the arbiter decides where the clock is placed. A board's clock has a left and a
//! right side; which colour sits at which is per-board configuration, swappable.

use serde::{Deserialize, Serialize};

use super::color::Color;

/// A physical side of the clock, as the DGT protocol reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// Where White sits. The one place where `Side` and `Color` meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Placement {
    pub white: Side,
}

impl Default for Placement {
    /// DGT's own convention: White on the left.
    fn default() -> Self {
        Placement { white: Side::Left }
    }
}

impl Placement {
    pub fn color_at(self, side: Side) -> Color {
        if side == self.white {
            Color::White
        } else {
            Color::Black
        }
    }

    pub fn side_of(self, color: Color) -> Side {
        match color {
            Color::White => self.white,
            Color::Black => self.white.other(),
        }
    }

    /// The arbiter turned the clock round (6.4).
    pub fn swapped(self) -> Placement {
        Placement {
            white: self.white.other(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_6_4_arbiter_places_the_clock_and_may_swap_it() {
        let p = Placement { white: Side::Right };
        assert_eq!(p.color_at(Side::Right), Color::White);
        assert_eq!(p.color_at(Side::Left), Color::Black);
        assert_eq!(p.side_of(Color::Black), Side::Left);
        let q = p.swapped();
        assert_eq!(q.color_at(Side::Right), Color::Black);
        assert_eq!(q.side_of(Color::White), Side::Left);
        assert_eq!(Placement::default().side_of(Color::White), Side::Left);
    }
}
