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

// Time as text: the notation of config, scripts, commands, the simulator's control and
// the dashboard (`1:30:00`, `500ms`, `14:00:00`, `2026-11-30 14:00:00`) sits beside the
// calendar arithmetic it is built on, so every door parses and prints time one way. A
// bare number keeps the unit its own door documented (seconds in config and on the
// page, milliseconds in scripts and commands): that is the door's reading, not this one's.

/// What a time text was not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeTextError {
    #[error(
        "'{0}' is not a duration: expected [-]H:MM:SS[.mmm], [-]M:SS[.mmm] or a number with its unit (500ms, 30s, 1.5m, 2h)"
    )]
    Duration(String),
    /// A number alone: which unit it meant depends on the door it came through.
    #[error(
        "'{0}' is a number without a unit: write '{0}s' for seconds or '{0}ms' for milliseconds"
    )]
    NoUnit(String),
    /// Reads as a clock time but a field after a ':' is not 00 to 59.
    #[error("'{0}': minutes and seconds after ':' are two digits from 00 to 59")]
    ClockField(String),
    #[error("'{0}' is not a date: expected YYYY-MM-DD")]
    Date(String),
    #[error("'{0}' is not a time: expected HH:MM:SS[.mmm] or YYYY-MM-DD HH:MM:SS[.mmm]")]
    Instant(String),
}

/// A duration: `1:30:00`, `5:00.5`, `-0:30`, `+2:00`, or a number with its unit:
/// `500ms`, `30s`, `1.5s`, `2m`, `1h` (a fraction of at most three digits, none for `ms`).
pub fn parse_duration(s: &str) -> Result<Millis, TimeTextError> {
    let bad = || TimeTextError::Duration(s.to_string());
    let (sign, body) = match s.as_bytes().first() {
        Some(b'-') => (-1, &s[1..]),
        Some(b'+') => (1, &s[1..]),
        _ => (1, s),
    };
    if !body.contains(':') {
        return with_unit(body)
            .map(|ms| Millis(sign * ms))
            .ok_or_else(|| match digits(body) {
                true => TimeTextError::NoUnit(s.to_string()),
                false => bad(),
            });
    }
    let (clock, frac) = match body.split_once('.') {
        Some((c, f)) => (c, f),
        None => (body, ""),
    };
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let ms_frac = thousandths(frac).ok_or_else(bad)?;
    let parts: Vec<&str> = clock.split(':').collect();
    // Minutes and seconds after a ':' are two digits, as a clock shows them: "1:2" is
    // more likely a slip for "1:20" than a way to write 1:02.
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() > 6 || !digits(p)) {
        return Err(bad());
    }
    let nums: Vec<i64> = parts.iter().filter_map(|p| p.parse().ok()).collect();
    let field = || TimeTextError::ClockField(s.to_string());
    if parts[1..].iter().any(|p| p.len() != 2) || nums[1..].iter().any(|n| *n >= 60) {
        return Err(field());
    }
    let (h, m, sec) = match nums.as_slice() {
        [m, sec] => (0, *m, *sec),
        [h, m, sec] => (*h, *m, *sec),
        _ => return Err(bad()),
    };
    Ok(Millis(sign * (((h * 60 + m) * 60 + sec) * 1000 + ms_frac)))
}

/// One or more ASCII digits.
fn digits(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
}

/// "5" → 500, "05" → 50, "" → 0: the digits are tenths, hundredths, thousandths.
fn thousandths(frac: &str) -> Option<i64> {
    match frac {
        "" => Some(0),
        f => format!("{f:0<3}").parse().ok(),
    }
}

/// `500ms`, `30s`, `1.5s`, `2m`, `1h` in milliseconds; `None` for anything else.
fn with_unit(body: &str) -> Option<i64> {
    let (number, scale) = if let Some(n) = body.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = body.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = body.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = body.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        return None;
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) if scale > 1 && f.len() <= 3 && digits(f) => (w, f),
        Some(_) => return None,
        None => (number, ""),
    };
    // Nine digits of hours is far beyond any clock and far below i64's range.
    if whole.len() > 9 || !digits(whole) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    // The fraction's thousandths of a second, minute or hour are whole milliseconds.
    Some(whole * scale + thousandths(frac)? * scale / 1000)
}

/// `2026-11-30` -> midnight UTC.
pub fn parse_date(s: &str) -> Result<Millis, TimeTextError> {
    let bad = || TimeTextError::Date(s.to_string());
    let p: Vec<&str> = s.split('-').collect();
    let [y, m, d] = p.as_slice() else {
        return Err(bad());
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || civil_from_days(days_from_civil(y, m, d)) != (y, m, d)
    {
        return Err(bad());
    }
    Ok(Millis(days_from_civil(y, m, d) * 86_400_000))
}

/// An instant: `HH:MM:SS[.mmm]` on the script's date, or `YYYY-MM-DD HH:MM:SS[.mmm]`
/// (also with `T` and a trailing `Z`), UTC.
pub fn parse_instant(s: &str, date: Millis) -> Result<Millis, TimeTextError> {
    let bad = || TimeTextError::Instant(s.to_string());
    let s2 = s.strip_suffix('Z').unwrap_or(s);
    let (day, time) = match s2.split_once([' ', 'T']) {
        Some((d, t)) => (parse_date(d)?, t),
        None => (date, s2),
    };
    if time.split(':').count() != 3 || time.starts_with(['+', '-']) {
        return Err(bad());
    }
    let t = parse_duration(time).map_err(|_| bad())?;
    if t >= Millis(86_400_000) {
        return Err(bad());
    }
    Ok(day + t)
}

/// `14:03:12.345`, with the date when it is not the script's date.
pub fn format_instant(t: Millis, date: Millis) -> String {
    let day = t.0.div_euclid(86_400_000);
    let ms = t.0.rem_euclid(86_400_000);
    let clock = format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    );
    if day * 86_400_000 == date.0 {
        clock
    } else {
        let (y, m, d) = civil_from_days(day);
        format!("{y:04}-{m:02}-{d:02} {clock}")
    }
}

/// `2026-11-30T14:00:00.000Z`; ms when the year would not fit in four digits.
pub fn format_iso(t: Millis) -> String {
    if !(-62_135_596_800_000..253_402_300_800_000).contains(&t.0) {
        return format!("{} ms", t.0);
    }
    format_instant(t, Millis(i64::MIN)).replacen(' ', "T", 1) + "Z"
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
        // A hostile i64::MIN has no negation: it saturates (issue 10's overflow edge).
        assert_eq!(-Millis(5), Millis(-5));
        assert_eq!(-Millis(i64::MIN), Millis(i64::MAX));
    }

    #[test]
    fn day_numbers_and_dates_agree_day_by_day_for_eight_centuries() {
        // An independent calendar: step one day at a time with the Gregorian leap rule
        // (1600 and 2000 leap, 1700/1800/1900/2100 not), from 1600-01-01 (day -135140,
        // as Python's datetime counts it) to 2400-12-31 (day 157419).
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_days = |y: i64, m: i64| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let (mut y, mut m, mut d) = (1600, 1, 1);
        for z in -135_140..=157_419 {
            assert_eq!(civil_from_days(z), (y, m, d), "day {z}");
            assert_eq!(days_from_civil(y, m, d), z, "{y}-{m}-{d}");
            d += 1;
            if d > month_days(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
        assert_eq!((y, m, d), (2401, 1, 1));
    }

    #[test]
    fn durations_read_as_scripts_and_commands_write_them() {
        let ok = [
            ("1:30:00", 5_400_000),
            ("5:00.5", 300_500),
            ("0:00.123", 123),
            ("0:00.05", 50),
            ("-0:30", -30_000),
            ("+2:00", 120_000),
            ("-1:00:00.250", -3_600_250),
            // M:SS takes any minutes; H:MM:SS wants the minutes below 60.
            ("90:00", 5_400_000),
            ("1:59:59.999", 7_199_999),
            ("123456:00", 7_407_360_000),
        ];
        for (text, ms) in ok {
            assert_eq!(parse_duration(text), Ok(Millis(ms)), "{text}");
        }
        let bad = [
            "",
            "-",
            "1",
            "1:2:3:4",
            "1::00",
            ":00",
            "1234567:00",
            "1:60:00",
            "0:60",
            "a:00",
            "0:00.1234",
            "0:00.1a",
            "--0:30",
            "+-0:30",
            "0:-30",
            "1:30:00 ",
            "1:2",
            "1:5:00",
            "1:05:0",
            "0:005",
        ];
        for text in bad {
            assert!(parse_duration(text).is_err(), "{text:?} was accepted");
        }
        assert_eq!(
            parse_duration("0:60").unwrap_err().to_string(),
            "'0:60': minutes and seconds after ':' are two digits from 00 to 59"
        );
        assert_eq!(
            parse_duration("1:5:00"),
            Err(TimeTextError::ClockField("1:5:00".into()))
        );
        assert_eq!(
            parse_duration("0:6o").unwrap_err().to_string(),
            "'0:6o' is not a duration: expected [-]H:MM:SS[.mmm], [-]M:SS[.mmm] or a number with its unit (500ms, 30s, 1.5m, 2h)"
        );
        assert_eq!(
            parse_duration("90"),
            Err(TimeTextError::NoUnit("90".into()))
        );
    }

    #[test]
    fn durations_with_a_unit_read_as_the_simulator_and_config_write_them() {
        let ok = [
            ("500ms", 500),
            ("0ms", 0),
            ("30s", 30_000),
            ("1.5s", 1_500),
            ("0.001s", 1),
            ("2m", 120_000),
            ("1.25m", 75_000),
            ("1h", 3_600_000),
            ("0.5h", 1_800_000),
            ("1.001h", 3_603_600),
            ("-30s", -30_000),
            ("+2m", 120_000),
            ("999999999h", 999_999_999 * 3_600_000),
        ];
        for (text, ms) in ok {
            assert_eq!(parse_duration(text), Ok(Millis(ms)), "{text}");
        }
        for text in [
            "ms",
            "s",
            "1.5ms",
            "1.0001s",
            "1.s",
            ".5s",
            "1e3ms",
            "5 s",
            "5sec",
            "5S",
            "1000000000h",
            "--5s",
            "5d",
            "0x10s",
        ] {
            assert_eq!(
                parse_duration(text),
                Err(TimeTextError::Duration(text.into())),
                "{text:?}"
            );
        }
        for text in ["90", "-90", "+0"] {
            assert_eq!(
                parse_duration(text),
                Err(TimeTextError::NoUnit(text.into())),
                "{text:?}"
            );
        }
        assert_eq!(
            parse_duration("90").unwrap_err().to_string(),
            "'90' is a number without a unit: write '90s' for seconds or '90ms' for milliseconds"
        );
        // The unit forms are durations only: never an instant's time of day.
        assert!(parse_instant("30s", Millis::ZERO).is_err());
    }

    #[test]
    fn dates_and_instants_read_and_print_one_way() {
        // The values are Python's datetime (UTC) for the same texts.
        const DAY: Millis = Millis(1_795_996_800_000); // 2026-11-30
        assert_eq!(parse_date("2026-11-30"), Ok(DAY));
        assert_eq!(parse_date("2024-02-29"), Ok(Millis(1_709_164_800_000)));
        for text in [
            "",
            "2026-11",
            "2026-11-30-1",
            "26-11-30",
            "2026-1-30",
            "2026-11-3",
            "2026-13-01",
            "2026-00-10",
            "2026-11-00",
            "2026-11-32",
            "2025-02-29",
            "2026-11-3x",
            "x026-11-30",
        ] {
            assert!(parse_date(text).is_err(), "{text:?} was accepted");
        }
        assert_eq!(
            parse_date("2026-13-01").unwrap_err().to_string(),
            "'2026-13-01' is not a date: expected YYYY-MM-DD"
        );
        let t = Millis(1_796_047_392_345); // 2026-11-30 14:03:12.345
        for text in [
            "14:03:12.345",
            "2026-11-30 14:03:12.345",
            "2026-11-30T14:03:12.345Z",
        ] {
            assert_eq!(parse_instant(text, DAY), Ok(t), "{text}");
        }
        assert_eq!(parse_instant("00:00:00", DAY), Ok(DAY));
        assert_eq!(
            parse_instant("23:59:59.999", DAY),
            Ok(DAY + Millis(86_399_999))
        );
        for text in [
            "24:00:00",
            "14:03",
            "-14:03:12",
            "+14:03:12",
            "14:60:00",
            "2026-11-31 10:00:00",
            "14:03:12.3456",
        ] {
            assert!(parse_instant(text, DAY).is_err(), "{text:?} was accepted");
        }
        assert_eq!(format_instant(t, DAY), "14:03:12.345");
        assert_eq!(
            format_instant(t, DAY - Millis(86_400_000)),
            "2026-11-30 14:03:12.345"
        );
        assert_eq!(format_iso(t), "2026-11-30T14:03:12.345Z");
        assert_eq!(
            format_iso(Millis(-62_135_596_800_000)),
            "0001-01-01T00:00:00.000Z"
        );
        assert_eq!(
            format_iso(Millis(253_402_300_799_999)),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            format_iso(Millis(253_402_300_800_000)),
            "253402300800000 ms"
        );
        assert_eq!(
            format_iso(Millis(-62_135_596_800_001)),
            "-62135596800001 ms"
        );
    }

    #[test]
    fn as_i64_is_the_milliseconds() {
        assert_eq!(Millis(-1_234).as_i64(), -1_234);
        assert_eq!(Millis::from_mins(2).as_i64(), 120_000);
    }
}
