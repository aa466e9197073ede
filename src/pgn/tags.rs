//! The small translations: clock times, time controls, results and terminations, and the
//! cleaning of client text.

use crate::rules::Millis;
use crate::rules::color::Color;
use crate::rules::game::{ArbiterResult, Score, Termination};
use crate::rules::time_control::{Bonus, Period, TimeControl};

/// `h:mm:ss`, whole seconds truncated (what a clock face shows); never negative.
pub fn clock(t: Millis) -> String {
    let s = t.non_negative().0 / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A tag value with `\` and `"` escaped (PGN standard 8.1.1), and line breaks and other
/// control characters made spaces: a tag is one line.
pub fn escape_tag(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Client text for a comment: braces would end it and brackets could forge a `[%clk]`
/// command that lichess and python-chess would read as the clock, so both become
/// parentheses; control characters become spaces.
pub fn comment_text(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '{' | '[' => '(',
            '}' | ']' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// Our time control in PGN notation: the same, except that a delay bonus (`+10d`), which
/// PGN cannot express, is left out.
pub fn pgn_time_control(tc: &TimeControl) -> String {
    match tc {
        TimeControl::Periods(periods) => TimeControl::Periods(
            periods
                .iter()
                .map(|p| Period {
                    bonus: match p.bonus {
                        Bonus::Delay(_) => Bonus::None,
                        b => b,
                    },
                    ..*p
                })
                .collect(),
        )
        .to_string(),
        other => other.to_string(),
    }
}

/// The `Result` tag, and the game termination marker that closes the movetext.
pub fn result(score: Option<Score>) -> (&'static str, &'static str) {
    match score {
        None => ("*", "*"),
        Some(Score::WhiteWins) => ("1-0", "1-0"),
        Some(Score::BlackWins) => ("0-1", "0-1"),
        Some(Score::Draw) => ("1/2-1/2", "1/2-1/2"),
        // lichess broadcasts read "0-0" (lila#16081); it is no termination marker.
        Some(Score::BothLose) => ("0-0", "*"),
        Some(Score::Annulled) => ("*", "*"),
    }
}

fn who(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// How the game ended: the `Termination` tag (lichess's values) and the sentence for the
/// closing comment, naming the rule. One match over every [`Termination`].
pub fn termination(score: Score, t: &Termination) -> (&'static str, String) {
    let annulled = score == Score::Annulled;
    match t {
        Termination::Checkmate => ("Normal", "checkmate (Article 5.1.1)".into()),
        Termination::Stalemate => ("Normal", "stalemate (Article 5.2.1)".into()),
        Termination::DeadPosition => ("Normal", "dead position (Article 5.2.2)".into()),
        Termination::SeventyFiveMoves => ("Normal", "75-move rule (Article 9.6.2)".into()),
        Termination::FivefoldRepetition => ("Normal", "fivefold repetition (Article 9.6.1)".into()),
        Termination::Flag { side } => (
            "Time forfeit",
            format!("{}'s flag fell (Article 6.9)", who(*side)),
        ),
        Termination::FlagOpponentCannotMate { side } => (
            "Time forfeit",
            format!(
                "{}'s flag fell, but {} cannot mate: draw (Article 6.9)",
                who(*side),
                who(side.other())
            ),
        ),
        Termination::Default { absent } => {
            let names: Vec<&str> = absent.iter().map(|c| who(*c)).collect();
            let verb = if names.len() > 1 { "were" } else { "was" };
            (
                "Abandoned",
                format!(
                    "forfeit: {} {verb} absent when default time passed (Article 6.6)",
                    names.join(" and ")
                ),
            )
        }
        Termination::InvalidSealedMove { side, verdict } => (
            "Rules infraction",
            format!(
                "{}'s sealed move is {} (Guidelines I.8)",
                who(*side),
                comment_text(&verdict.describe())
            ),
        ),
        Termination::InvalidSealedMoveOpponentCannotMate { side, verdict } => (
            "Rules infraction",
            format!(
                "{}'s sealed move is {}, but {} cannot mate: draw (Guidelines I.8, Article 6.9)",
                who(*side),
                comment_text(&verdict.describe()),
                who(side.other())
            ),
        ),
        Termination::Arbiter { kind, arbiter, .. } => {
            let by = comment_text(arbiter);
            match kind {
                ArbiterResult::AgreedDraw => {
                    ("Normal", format!("draw agreed (Article 9.1; arbiter {by})"))
                }
                ArbiterResult::Resignation { side } => (
                    "Normal",
                    format!("{} resigned (Article 5.1.2; arbiter {by})", who(*side)),
                ),
                ArbiterResult::IllegalMoves { side } => (
                    "Rules infraction",
                    format!(
                        "{}'s second illegal move (Article 7.5.5; arbiter {by})",
                        who(*side)
                    ),
                ),
                ArbiterResult::Annulled => (
                    "Unterminated",
                    format!("the game was annulled by arbiter {by}; it has no result"),
                ),
                ArbiterResult::Score { .. } if annulled => (
                    "Unterminated",
                    format!("the game was annulled by arbiter {by}; it has no result"),
                ),
                ArbiterResult::Score { .. } => {
                    ("Adjudication", format!("result set by arbiter {by}"))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::time_control::parse;

    #[test]
    fn clocks_are_whole_seconds_truncated() {
        assert_eq!(clock(Millis(0)), "0:00:00");
        assert_eq!(clock(Millis(999)), "0:00:00");
        assert_eq!(clock(Millis(5_400_000)), "1:30:00");
        assert_eq!(clock(Millis(3_599_999)), "0:59:59");
        assert_eq!(clock(Millis(36_000_000 + 61_000)), "10:01:01");
        assert_eq!(clock(Millis(-5)), "0:00:00");
    }

    #[test]
    fn tags_escape_backslash_and_quote() {
        assert_eq!(escape_tag(r#"a "b" \c"#), r#"a \"b\" \\c"#);
        assert_eq!(escape_tag("two\nlines"), "two lines");
    }

    #[test]
    fn comments_cannot_be_closed_or_forge_a_clock() {
        assert_eq!(comment_text("x } [%clk 9:00:00] {"), "x ) (%clk 9:00:00) (");
    }

    #[test]
    fn time_controls_in_pgn_notation() {
        let pgn = |s: &str| pgn_time_control(&parse(s).unwrap_or(TimeControl::Unknown));
        assert_eq!(pgn("40/5400+30:1800+30"), "40/5400+30:1800+30");
        assert_eq!(pgn("180+2"), "180+2");
        assert_eq!(pgn("5400+10d"), "5400");
        assert_eq!(pgn("40/7200:3600+5d"), "40/7200:3600");
        assert_eq!(pgn("?"), "?");
        assert_eq!(pgn("-"), "-");
    }

    #[test]
    fn results_and_markers() {
        assert_eq!(result(None), ("*", "*"));
        assert_eq!(result(Some(Score::BothLose)), ("0-0", "*"));
        assert_eq!(result(Some(Score::Annulled)), ("*", "*"));
        assert_eq!(result(Some(Score::Draw)), ("1/2-1/2", "1/2-1/2"));
    }
}
