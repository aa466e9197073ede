//! `Millis`: time as a value, in whole milliseconds.
//!
//! One integer type for instants (ms since the Unix epoch, UTC) and durations, as in
//! lichess's `Centis`: never floats, so no rounding can move a flag. The shell derives
//! instants from a monotonic clock anchored to UTC; the core never reads a clock.

use std::fmt;
use std::ops::{Add, AddAssign, Neg, Sub, SubAssign};

use serde::{Deserialize, Serialize};

/// Milliseconds: an instant (since the Unix epoch) or a duration.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub i64);

impl Millis {
    pub const ZERO: Millis = Millis(0);

    pub const fn from_secs(secs: i64) -> Millis {
        Millis(secs.saturating_mul(1000))
    }

    pub const fn from_mins(mins: i64) -> Millis {
        Millis(mins.saturating_mul(60_000))
    }

    pub const fn as_i64(self) -> i64 {
        self.0
    }

    pub fn max(self, other: Millis) -> Millis {
        Millis(self.0.max(other.0))
    }

    pub fn min(self, other: Millis) -> Millis {
        Millis(self.0.min(other.0))
    }

    /// Never below zero: a clock shows 0:00, not a negative time.
    pub fn non_negative(self) -> Millis {
        self.max(Millis::ZERO)
    }
}

impl Add for Millis {
    type Output = Millis;
    fn add(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Millis {
    type Output = Millis;
    fn sub(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_sub(rhs.0))
    }
}

impl AddAssign for Millis {
    fn add_assign(&mut self, rhs: Millis) {
        *self = *self + rhs;
    }
}

impl SubAssign for Millis {
    fn sub_assign(&mut self, rhs: Millis) {
        *self = *self - rhs;
    }
}

impl Neg for Millis {
    type Output = Millis;
    fn neg(self) -> Millis {
        Millis(self.0.saturating_neg())
    }
}

/// As a clock duration: `1:29:59.500`, `4:05.000`, `-0:02.000`.
impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let ms = self.0.unsigned_abs();
        let (h, m, s, frac) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        if h > 0 {
            write!(f, "{sign}{h}:{m:02}:{s:02}.{frac:03}")
        } else {
            write!(f, "{sign}{m}:{s:02}.{frac:03}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_a_clock() {
        assert_eq!(Millis::from_secs(5400).to_string(), "1:30:00.000");
        assert_eq!(Millis(245_000).to_string(), "4:05.000");
        assert_eq!(Millis(-2000).to_string(), "-0:02.000");
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Millis(i64::MAX) + Millis(1), Millis(i64::MAX));
        assert_eq!(Millis(-5).non_negative(), Millis::ZERO);
    }
}
