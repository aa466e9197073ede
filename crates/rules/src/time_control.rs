//! Time controls (6.2): periods with move quotas, sudden death, Fischer increment, the
//! time-delay mode; the notation of DESIGN.md §4, a superset of the PGN `TimeControl` tag.
//!
//! ```text
//! tc      = "?" | "-" | "*" secs | period *( ":" period )
//! period  = [ moves "/" ] secs [ "+" secs [ "d" ] ]
//! ```
//!
//! `40/5400+30:1800+30` is the FIDE standard control: 90 min for 40 moves, then 30 min,
//! 30 s added per move from move 1. Numbers have no leading zeros and no signs, so every
//! control has exactly one spelling and `parse(format(tc)) == tc`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::millis::Millis;

/// What a player gets per move in a period, besides the period's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind", content = "secs")]
pub enum Bonus {
    #[default]
    None,
    /// Fischer increment: `+N`, banked.
    Increment(u32),
    /// Time-delay mode of 6.2: `+Nd`, the first N s of each turn are free and never banked.
    Delay(u32),
}

/// One period: `[moves/]secs[+bonus]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Period {
    /// Moves to complete in this period (not cumulative); `None` = the rest of the game.
    pub moves: Option<u32>,
    pub secs: u32,
    pub bonus: Bonus,
}

impl Period {
    pub fn time(&self) -> Millis {
        Millis::from_secs(i64::from(self.secs))
    }

    pub fn increment(&self) -> Millis {
        match self.bonus {
            Bonus::Increment(s) => Millis::from_secs(i64::from(s)),
            _ => Millis::ZERO,
        }
    }

    pub fn delay(&self) -> Millis {
        match self.bonus {
            Bonus::Delay(s) => Millis::from_secs(i64::from(s)),
            _ => Millis::ZERO,
        }
    }
}

/// A whole time control.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TimeControl {
    /// `?`: not known (PGN).
    Unknown,
    /// `-`: no time control (PGN).
    Untimed,
    /// `*secs`: hourglass (PGN). Parsed for PGN round-trips; a game cannot run on it.
    Hourglass(u32),
    /// One or more periods. Only the last may lack a move quota; a last period with a
    /// quota repeats (the PGN rule: `40/7200` is 2 h for every 40 moves).
    Periods(Vec<Period>),
}

impl TimeControl {
    /// The periods, or why a clock cannot run on this control.
    pub fn periods(&self) -> Result<&[Period], &'static str> {
        match self {
            TimeControl::Periods(p) => Ok(p),
            TimeControl::Unknown => {
                Err("the time control is unknown ('?'): a clock cannot run on it")
            }
            TimeControl::Untimed => {
                Err("the game has no time control ('-'): there is no clock to run")
            }
            TimeControl::Hourglass(_) => {
                Err("hourglass time controls ('*secs') are not supported by hallclock")
            }
        }
    }

    /// Period `k` (0-based), repeating the last one beyond the list.
    pub fn period(periods: &[Period], k: usize) -> Option<&Period> {
        periods.get(k).or_else(|| periods.last())
    }

    /// Completed moves at which period `k` (0-based) ends, or `None` if it never ends.
    pub fn period_end(periods: &[Period], k: usize) -> Option<u32> {
        let mut total: u32 = 0;
        for i in 0..=k {
            let moves = Self::period(periods, i)?.moves?;
            total = total.saturating_add(moves);
        }
        Some(total)
    }

    /// A one-line description for people, e.g. for `hallclock tc check`.
    pub fn describe(&self) -> String {
        match self {
            TimeControl::Unknown => "unknown time control".into(),
            TimeControl::Untimed => "no time control".into(),
            TimeControl::Hourglass(s) => format!("hourglass of {}", human(*s)),
            TimeControl::Periods(periods) => {
                let mut parts = Vec::new();
                let mut first_move = 1u32;
                for (i, p) in periods.iter().enumerate() {
                    let last = i + 1 == periods.len();
                    let span = match (p.moves, last) {
                        (Some(m), true) => format!("{} for every {m} moves", human(p.secs)),
                        (Some(m), false) => format!("{} for {m} moves", human(p.secs)),
                        (None, _) if i == 0 => format!("{} for the game", human(p.secs)),
                        (None, _) => format!("{} for the rest of the game", human(p.secs)),
                    };
                    let bonus = match p.bonus {
                        Bonus::None => String::new(),
                        Bonus::Increment(s) => {
                            format!(", +{s} s per move from move {first_move}")
                        }
                        Bonus::Delay(s) => format!(", {s} s delay per move (delay mode)"),
                    };
                    parts.push(format!("{span}{bonus}"));
                    first_move = first_move.saturating_add(p.moves.unwrap_or(0));
                }
                parts.join("; then ")
            }
        }
    }
}

fn human(secs: u32) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = Vec::new();
    if h > 0 {
        out.push(format!("{h} h"));
    }
    if m > 0 {
        out.push(format!("{m} min"));
    }
    if s > 0 || out.is_empty() {
        out.push(format!("{s} s"));
    }
    out.join(" ")
}

impl fmt::Display for TimeControl {
    /// The canonical form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Unknown => f.write_str("?"),
            TimeControl::Untimed => f.write_str("-"),
            TimeControl::Hourglass(s) => write!(f, "*{s}"),
            TimeControl::Periods(periods) => {
                for (i, p) in periods.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    if let Some(m) = p.moves {
                        write!(f, "{m}/")?;
                    }
                    write!(f, "{}", p.secs)?;
                    match p.bonus {
                        Bonus::None => {}
                        Bonus::Increment(s) => write!(f, "+{s}")?,
                        Bonus::Delay(s) => write!(f, "+{s}d")?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// A time-control string that does not parse: what was expected, and at which column
/// (1-based; one past the end when the string stopped too early).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at column {column}")]
pub struct TcError {
    pub column: usize,
    pub kind: TcErrorKind,
}

/// As data (`code` and `params`, with the column beside it), for a page that says it in
/// its own language; `Display` is the English.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "code", content = "params", rename_all = "snake_case")]
pub enum TcErrorKind {
    #[error("expected a time control ('?', '-', '*secs' or periods such as 40/5400+30:1800+30)")]
    Empty,
    #[error("expected a period after ':'")]
    PeriodAfterColon,
    #[error("expected {what}, found '{found}'")]
    Expected { what: TcExpected, found: char },
    #[error("expected {what}")]
    ExpectedAtEnd { what: TcExpected },
    #[error("numbers have no leading zeros")]
    LeadingZero,
    #[error("number too large (at most {max})")]
    TooLarge { max: u32 },
    #[error("a period's move quota must be at least 1")]
    ZeroMoves,
    #[error("only the last period may omit the move quota 'moves/'")]
    QuotaMissing,
}

/// What the reader expected where it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcExpected {
    SecondsOrMoves,
    SecondsAfterSlash,
    SecondsAfterPlus,
    SecondsAfterStar,
    PeriodAfterColon,
    ColonPlusOrEnd,
    End,
}

impl std::fmt::Display for TcExpected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TcExpected::SecondsOrMoves => "a number of seconds or moves",
            TcExpected::SecondsAfterSlash => "a number of seconds after '/'",
            TcExpected::SecondsAfterPlus => "a number of seconds after '+'",
            TcExpected::SecondsAfterStar => "a number of seconds after '*'",
            TcExpected::PeriodAfterColon => "a period after ':'",
            TcExpected::ColonPlusOrEnd => "':' between periods, '+' or the end",
            TcExpected::End => "the end of the time control",
        })
    }
}

/// The largest number of seconds accepted: 10 days, far beyond any real control, and
/// small enough that no sum of periods can overflow `Millis`.
pub const MAX_SECS: u32 = 864_000;
/// The largest move quota accepted.
pub const MAX_MOVES: u32 = 1000;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn err(&self, kind: TcErrorKind) -> TcError {
        TcError {
            column: self.i + 1,
            kind,
        }
    }

    fn expected(&self, what: TcExpected) -> TcError {
        match self.found() {
            Some(found) => self.err(TcErrorKind::Expected { what, found }),
            None => self.err(TcErrorKind::ExpectedAtEnd { what }),
        }
    }

    fn found(&self) -> Option<char> {
        // The input is a &str, so decode the char at this byte for the message.
        std::str::from_utf8(&self.s[self.i.min(self.s.len())..])
            .ok()
            .and_then(|rest| rest.chars().next())
    }

    fn number(&mut self, what: TcExpected, max: u32) -> Result<u32, TcError> {
        let start = self.i;
        let mut value: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            if self.i > start && self.s[start] == b'0' {
                self.i = start;
                return Err(self.err(TcErrorKind::LeadingZero));
            }
            value = value * 10 + u64::from(c - b'0');
            if value > u64::from(max) {
                self.i = start;
                return Err(self.err(TcErrorKind::TooLarge { max }));
            }
            self.i += 1;
        }
        if self.i == start {
            return Err(self.expected(what));
        }
        // value <= max <= u32::MAX, checked in the loop.
        Ok(value as u32)
    }

    fn period(&mut self) -> Result<Period, TcError> {
        let start = self.i;
        let first = self.number(TcExpected::SecondsOrMoves, MAX_SECS.max(MAX_MOVES))?;
        let (moves, secs) = if self.peek() == Some(b'/') {
            if first == 0 {
                self.i = start;
                return Err(self.err(TcErrorKind::ZeroMoves));
            }
            if first > MAX_MOVES {
                self.i = start;
                return Err(self.err(TcErrorKind::TooLarge { max: MAX_MOVES }));
            }
            self.i += 1;
            (
                Some(first),
                self.number(TcExpected::SecondsAfterSlash, MAX_SECS)?,
            )
        } else {
            if first > MAX_SECS {
                self.i = start;
                return Err(self.err(TcErrorKind::TooLarge { max: MAX_SECS }));
            }
            (None, first)
        };
        let bonus = if self.peek() == Some(b'+') {
            self.i += 1;
            let s = self.number(TcExpected::SecondsAfterPlus, MAX_SECS)?;
            if self.peek() == Some(b'd') {
                self.i += 1;
                Bonus::Delay(s)
            } else {
                Bonus::Increment(s)
            }
        } else {
            Bonus::None
        };
        Ok(Period { moves, secs, bonus })
    }
}

/// Parse the notation; see the module documentation.
pub fn parse(s: &str) -> Result<TimeControl, TcError> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
    };
    let tc = match p.peek() {
        None => return Err(p.err(TcErrorKind::Empty)),
        Some(b'?') => {
            p.i += 1;
            TimeControl::Unknown
        }
        Some(b'-') => {
            p.i += 1;
            TimeControl::Untimed
        }
        Some(b'*') => {
            p.i += 1;
            TimeControl::Hourglass(p.number(TcExpected::SecondsAfterStar, MAX_SECS)?)
        }
        Some(b'0'..=b'9') => {
            let mut periods = Vec::new();
            let mut starts = Vec::new();
            loop {
                starts.push(p.i);
                periods.push(p.period()?);
                match p.peek() {
                    Some(b':') => {
                        p.i += 1;
                        if !matches!(p.peek(), Some(b'0'..=b'9')) {
                            return Err(match p.peek() {
                                None => p.err(TcErrorKind::PeriodAfterColon),
                                Some(_) => p.expected(TcExpected::PeriodAfterColon),
                            });
                        }
                    }
                    None => break,
                    Some(_) => {
                        return Err(p.expected(TcExpected::ColonPlusOrEnd));
                    }
                }
            }
            // A period without a quota never ends, so nothing may follow it.
            if let Some(k) = periods[..periods.len() - 1]
                .iter()
                .position(|q| q.moves.is_none())
            {
                return Err(TcError {
                    column: starts[k] + 1,
                    kind: TcErrorKind::QuotaMissing,
                });
            }
            TimeControl::Periods(periods)
        }
        Some(_) => return Err(p.err(TcErrorKind::Empty)),
    };
    if p.peek().is_some() {
        return Err(p.expected(TcExpected::End));
    }
    Ok(tc)
}

impl FromStr for TimeControl {
    type Err = TcError;
    fn from_str(s: &str) -> Result<Self, TcError> {
        parse(s)
    }
}

impl Serialize for TimeControl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeControl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse(&s).map_err(|e| serde::de::Error::custom(format!("time control '{s}': {e}")))
    }
}

/// When the next period's time is added (not part of the string: per event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeriodTransition {
    /// As soon as the player completes the period's move quota (FIDE practice; DGT with a
    /// move count set).
    #[default]
    OnMoves,
    /// When the player's time reaches 0:00 with the quota completed, as DGT clocks do
    /// with the move field set to 000; a flag with the quota not completed still loses (6.3).
    OnFlag,
}

/// When Fischer increment is credited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IncrementCredit {
    /// Once before move 1 and then after each press for the next move: FIDE and DGT
    /// clocks show 5+3 as 5:03 at the start.
    #[default]
    BeforeMove1,
    /// After each press, for the move just completed (online-server style).
    AfterPress,
}

/// How a delay is shown; the flag falls at the same instant either way (6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayDisplay {
    /// The main time is shown and stands still while the delay runs (US delay).
    #[default]
    Countdown,
    /// Main time plus the unused delay is shown, counting down from the start of the turn.
    Bronstein,
}

/// Per-event clock options that the notation deliberately does not carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockOptions {
    pub period_transition: PeriodTransition,
    pub increment_credit: IncrementCredit,
    pub delay_display: DelayDisplay,
    /// Stop both clocks when a flag falls in the last period (FIDE equipment rule: the
    /// other clock freezes so the first flag is unambiguous).
    pub freeze_after_last_flag: bool,
}

impl Default for ClockOptions {
    fn default() -> Self {
        ClockOptions {
            period_transition: PeriodTransition::OnMoves,
            increment_credit: IncrementCredit::BeforeMove1,
            delay_display: DelayDisplay::Countdown,
            freeze_after_last_flag: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(moves: Option<u32>, secs: u32, bonus: Bonus) -> Period {
        Period { moves, secs, bonus }
    }

    #[test]
    fn rule_6_2a_fide_standard_control() {
        let tc = parse("40/5400+30:1800+30").unwrap();
        assert_eq!(
            tc,
            TimeControl::Periods(vec![
                p(Some(40), 5400, Bonus::Increment(30)),
                p(None, 1800, Bonus::Increment(30)),
            ])
        );
        assert_eq!(
            tc.describe(),
            "1 h 30 min for 40 moves, +30 s per move from move 1; then 30 min for the rest of the game, +30 s per move from move 41"
        );
    }

    #[test]
    fn rule_6_2a_world_championship_control_with_increment_from_move_61() {
        let tc = parse("40/7200:20/3600:900+30").unwrap();
        assert_eq!(
            tc,
            TimeControl::Periods(vec![
                p(Some(40), 7200, Bonus::None),
                p(Some(20), 3600, Bonus::None),
                p(None, 900, Bonus::Increment(30)),
            ])
        );
        assert!(tc.describe().ends_with("+30 s per move from move 61"));
    }

    #[test]
    fn rule_6_2a_describe_says_for_the_game_or_for_every_quota() {
        assert_eq!(parse("5400").unwrap().describe(), "1 h 30 min for the game");
        assert_eq!(
            parse("40/7200").unwrap().describe(),
            "2 h for every 40 moves"
        );
        assert_eq!(
            parse("40/7200:20/3600").unwrap().describe(),
            "2 h for 40 moves; then 1 h for every 20 moves"
        );
    }

    #[test]
    fn rule_6_2a_describe_names_only_the_units_that_are_there() {
        assert_eq!(human(0), "0 s");
        assert_eq!(human(5), "5 s");
        assert_eq!(human(60), "1 min");
        assert_eq!(human(65), "1 min 5 s");
        assert_eq!(human(3600), "1 h");
        assert_eq!(human(3605), "1 h 5 s");
        assert_eq!(human(3665), "1 h 1 min 5 s");
        assert_eq!(parse("*65").unwrap().describe(), "hourglass of 1 min 5 s");
    }

    #[test]
    fn rule_6_2a_the_largest_numbers_are_accepted_and_one_more_is_not() {
        assert_eq!(parse("*864000").unwrap(), TimeControl::Hourglass(MAX_SECS));
        assert_eq!(
            parse("864000").unwrap(),
            TimeControl::Periods(vec![p(None, MAX_SECS, Bonus::None)])
        );
        assert_eq!(
            parse("1000/864000+864000d").unwrap(),
            TimeControl::Periods(vec![p(Some(MAX_MOVES), MAX_SECS, Bonus::Delay(MAX_SECS))])
        );
        assert_eq!(
            err("*864001"),
            "number too large (at most 864000) at column 2"
        );
        assert_eq!(
            err("864001"),
            "number too large (at most 864000) at column 1"
        );
        assert_eq!(
            err("40/864001"),
            "number too large (at most 864000) at column 4"
        );
        assert_eq!(
            err("300+864001"),
            "number too large (at most 864000) at column 5"
        );
        assert_eq!(
            err("1001/300"),
            "number too large (at most 1000) at column 1"
        );
    }

    #[test]
    fn rule_6_2c_delay_mode() {
        assert_eq!(
            parse("5400+5d").unwrap(),
            TimeControl::Periods(vec![p(None, 5400, Bonus::Delay(5))])
        );
    }

    #[test]
    fn pgn_kinds() {
        assert_eq!(parse("?").unwrap(), TimeControl::Unknown);
        assert_eq!(parse("-").unwrap(), TimeControl::Untimed);
        assert_eq!(parse("*180").unwrap(), TimeControl::Hourglass(180));
        assert_eq!(
            parse("40/7200").unwrap(),
            TimeControl::Periods(vec![p(Some(40), 7200, Bonus::None)])
        );
        assert!(
            parse("*180")
                .unwrap()
                .periods()
                .unwrap_err()
                .contains("not supported")
        );
    }

    #[test]
    fn repeating_last_period_ends_every_quota() {
        let tc = parse("40/7200").unwrap();
        let periods = tc.periods().unwrap();
        assert_eq!(TimeControl::period_end(periods, 0), Some(40));
        assert_eq!(TimeControl::period_end(periods, 2), Some(120));
        let tc = parse("40/5400:1800").unwrap();
        assert_eq!(TimeControl::period_end(tc.periods().unwrap(), 1), None);
    }

    fn err(s: &str) -> String {
        parse(s).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_column_and_what_was_expected() {
        assert_eq!(
            err("40/5400+30:"),
            "expected a period after ':' at column 12"
        );
        assert_eq!(
            err(""),
            "expected a time control ('?', '-', '*secs' or periods such as 40/5400+30:1800+30) at column 1"
        );
        assert_eq!(
            err("40/"),
            "expected a number of seconds after '/' at column 4"
        );
        assert_eq!(
            err("5400+"),
            "expected a number of seconds after '+' at column 6"
        );
        assert_eq!(
            err("90m"),
            "expected ':' between periods, '+' or the end, found 'm' at column 3"
        );
        assert_eq!(
            err("5400:40/1800"),
            "only the last period may omit the move quota 'moves/' at column 1"
        );
        assert_eq!(err("40/05400"), "numbers have no leading zeros at column 4");
        assert_eq!(
            err("0/300"),
            "a period's move quota must be at least 1 at column 1"
        );
        assert_eq!(
            err("99999999999"),
            "number too large (at most 864000) at column 1"
        );
        assert_eq!(
            err("300+5x"),
            "expected ':' between periods, '+' or the end, found 'x' at column 6"
        );
        assert_eq!(
            err("?x"),
            "expected the end of the time control, found 'x' at column 2"
        );
        assert_eq!(
            err("40/5400:é"),
            "expected a period after ':', found 'é' at column 9"
        );
        assert_eq!(err(" 300"), err("")); // no spaces, as in PGN
    }

    fn arb_period(last: bool) -> impl Strategy<Value = Period> {
        let moves = if last {
            proptest::option::of(1..=MAX_MOVES).boxed()
        } else {
            (1..=MAX_MOVES).prop_map(Some).boxed()
        };
        let bonus = prop_oneof![
            Just(Bonus::None),
            (0..=MAX_SECS).prop_map(Bonus::Increment),
            (0..=MAX_SECS).prop_map(Bonus::Delay),
        ];
        (moves, 0..=MAX_SECS, bonus).prop_map(|(moves, secs, bonus)| Period { moves, secs, bonus })
    }

    fn arb_tc() -> impl Strategy<Value = TimeControl> {
        prop_oneof![
            Just(TimeControl::Unknown),
            Just(TimeControl::Untimed),
            (0..=MAX_SECS).prop_map(TimeControl::Hourglass),
            (
                proptest::collection::vec(arb_period(false), 0..4),
                arb_period(true)
            )
                .prop_map(|(mut v, last)| {
                    v.push(last);
                    TimeControl::Periods(v)
                }),
        ]
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(tc in arb_tc()) {
            prop_assert_eq!(parse(&tc.to_string()).unwrap(), tc);
        }

        #[test]
        fn parse_then_format_is_canonical(s in "[0-9/:+d?*-]{0,16}") {
            if let Ok(tc) = parse(&s) {
                let canonical = tc.to_string();
                prop_assert_eq!(&canonical, &s, "only one spelling per control");
                prop_assert_eq!(parse(&canonical).unwrap(), tc);
            }
        }

        #[test]
        fn errors_point_inside_or_just_past_the_string(s in "\\PC{0,20}") {
            if let Err(e) = parse(&s) {
                prop_assert!(e.column >= 1 && e.column <= s.len() + 1);
            }
        }
    }
}
