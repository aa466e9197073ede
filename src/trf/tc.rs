//! TRF26 tag 222, the encoded time control, to and from our notation
//! (`rules::time_control`).
//!
//! TRF26 writes `d[:d]` or, for different controls per colour (Armageddon),
//! `Wd[:d]-Bd[:d]`, where each period `d` is `M/S`, `M/S+I`, `S` or `S+I` (moves,
//! seconds, increment in seconds). That is our period syntax without the delay mode
//! (`+Nd`), so each side is read by our own parser and then checked for what TRF cannot
//! say.

use crate::rules::time_control::{self, Bonus, TimeControl};

/// A control for both colours, or White's and Black's (Armageddon: `W300-B240`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfTimeControl {
    pub white: TimeControl,
    /// `None`: the same as White's.
    pub black: Option<TimeControl>,
}

/// Why a tag 222 value is wrong: the 1-based column inside the value, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcProblem {
    pub column: usize,
    pub why: String,
}

/// Why a control cannot be written as tag 222.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TcWriteError {
    #[error("'{0}': TRF tag 222 has no delay mode (+Nd), only increments")]
    Delay(String),
    #[error("'{0}': TRF tag 222 needs periods (not '?', '-' or an hourglass)")]
    NotPeriods(String),
}

fn side(s: &str, offset: usize) -> Result<TimeControl, TcProblem> {
    let tc = time_control::parse(s).map_err(|e| TcProblem {
        column: offset + e.column,
        why: e.kind.to_string(),
    })?;
    match &tc {
        TimeControl::Periods(periods) => {
            if let Some(at) = s.find('d') {
                return Err(TcProblem {
                    column: offset + at + 1,
                    why: "TRF has no delay mode (+Nd), only increments".into(),
                });
            }
            debug_assert!(periods.iter().all(|p| !matches!(p.bonus, Bonus::Delay(_))));
            Ok(tc)
        }
        _ => Err(TcProblem {
            column: offset + 1,
            why: "expected periods such as 5400+30 or 40/6000+30:900+30".into(),
        }),
    }
}

/// Read a tag 222 value (already trimmed).
pub fn parse(value: &str) -> Result<TrfTimeControl, TcProblem> {
    if let Some(rest) = value.strip_prefix('W') {
        let Some(dash) = rest.find("-B") else {
            return Err(TcProblem {
                column: value.len() + 1,
                why: "a per-colour control needs '-B' and Black's control (W300-B240)".into(),
            });
        };
        let white = side(&rest[..dash], 1)?;
        let black = side(&rest[dash + 2..], dash + 3)?;
        return Ok(TrfTimeControl {
            white,
            black: Some(black),
        });
    }
    Ok(TrfTimeControl {
        white: side(value, 0)?,
        black: None,
    })
}

fn check(tc: &TimeControl) -> Result<String, TcWriteError> {
    let text = tc.to_string();
    match tc {
        TimeControl::Periods(p) if p.iter().any(|p| matches!(p.bonus, Bonus::Delay(_))) => {
            Err(TcWriteError::Delay(text))
        }
        TimeControl::Periods(_) => Ok(text),
        _ => Err(TcWriteError::NotPeriods(text)),
    }
}

/// Write a control as tag 222 expects it.
pub fn format(tc: &TrfTimeControl) -> Result<String, TcWriteError> {
    let white = check(&tc.white)?;
    match &tc.black {
        Some(black) if *black != tc.white => Ok(format!("W{white}-B{}", check(black)?)),
        _ => Ok(white),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(s: &str) -> TrfTimeControl {
        let tc = parse(s).unwrap_or_else(|e| panic!("{s}: {e:?}"));
        assert_eq!(format(&tc).as_deref(), Ok(s));
        tc
    }

    #[test]
    fn multi_period_controls_read_and_write_back() {
        let tc = round_trip("40/6000+30:900+30");
        assert_eq!(tc.white.to_string(), "40/6000+30:900+30");
        assert_eq!(tc.black, None);
        round_trip("5400+30");
        round_trip("40/7200:20/3600:900+30");
        round_trip("40/6000");
        round_trip("300");
    }

    #[test]
    fn armageddon_gives_each_colour_its_control() {
        let tc = round_trip("W300-B240");
        assert_eq!(tc.white.to_string(), "300");
        assert_eq!(tc.black.map(|b| b.to_string()).as_deref(), Some("240"));
        let tc = round_trip("W300+2-B240+2");
        assert_eq!(tc.white.to_string(), "300+2");
        round_trip("W40/6000+30:900+30-B40/5000+30:900+30");
    }

    #[test]
    fn bad_values_say_which_column() {
        let e = parse("40/6000+30:").unwrap_err();
        assert_eq!(e.column, 12, "{e:?}");
        let e = parse("W300-B24x").unwrap_err();
        assert_eq!(e.column, 9, "{e:?}");
        let e = parse("W300").unwrap_err();
        assert!(e.why.contains("-B"), "{e:?}");
        let e = parse("5400+5d").unwrap_err();
        assert_eq!(e.column, 7, "{e:?}");
        assert!(parse("?").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn controls_trf_cannot_say_are_refused() {
        let delay = TrfTimeControl {
            white: time_control::parse("5400+5d").unwrap_or(TimeControl::Unknown),
            black: None,
        };
        assert!(matches!(format(&delay), Err(TcWriteError::Delay(_))));
        let unknown = TrfTimeControl {
            white: TimeControl::Unknown,
            black: None,
        };
        assert!(matches!(format(&unknown), Err(TcWriteError::NotPeriods(_))));
        let same = TrfTimeControl {
            white: time_control::parse("300").unwrap_or(TimeControl::Unknown),
            black: time_control::parse("300").ok(),
        };
        assert_eq!(format(&same).as_deref(), Ok("300"));
    }
}
