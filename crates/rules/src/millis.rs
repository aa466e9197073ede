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

    /// As an instant: displays as `2026-11-30 14:00:00.000 UTC`.
    pub fn utc(self) -> Utc {
        Utc(self)
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

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// An instant shown as a UTC date and time.
#[derive(Debug, Clone, Copy)]
pub struct Utc(pub Millis);

impl fmt::Display for Utc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0.0;
        let (y, m, d) = civil_from_days(t.div_euclid(86_400_000));
        let ms = t.rem_euclid(86_400_000);
        write!(
            f,
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} UTC",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
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
    fn instants_display_as_utc() {
        assert_eq!(
            Millis(1_796_047_200_000).utc().to_string(),
            "2026-11-30 14:00:00.000 UTC"
        );
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Millis(i64::MAX) + Millis(1), Millis(i64::MAX));
        assert_eq!(Millis(-5).non_negative(), Millis::ZERO);
    }
}
