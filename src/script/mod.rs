//! Rules scripts: JSON lines of timed inputs driven through the pure core, for tests, for
//! demonstrations and for arbiters reconstructing a disputed clock history
//! (`hallclock rules run`, documented in docs/RULES-SCRIPT.md).
//!
//! The whole script is parsed and checked before anything runs, so a malformed script
//! produces one error naming its line and nothing else.
//!
//! By job: `parse.rs` reads and checks the lines, `run.rs` drives the checked steps
//! through the core, `output.rs` writes what came out. This file holds what they share
//! (the checked script, its error, the stand-in nonce) and re-exports the public names, so
//! `crate::script::…` paths stay as they were. Of its siblings only `run.rs` imports one
//! (`output.rs`). Everything here is pure: no I/O, no tasks.

mod output;
mod parse;
mod run;

pub use output::Output;
pub use parse::{Parser, ScriptDuration, lines, parse, parse_bytes};
pub use run::{Runner, run};

use crate::rules::Millis;
use crate::rules::adjournment::encode_hex;
use crate::rules::game::{Input, Setup};

/// A script that cannot run: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {message}", column.map(|c| format!(", column {c}")).unwrap_or_default())]
pub struct ScriptError {
    pub line: usize,
    pub column: Option<usize>,
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> ScriptError {
    ScriptError {
        line,
        column: None,
        message: message.into(),
    }
}

/// A script's stand-in for the nonce the daemon draws at random: derived from the line,
/// so outputs are reproducible. It is NOT secret; real envelopes need random nonces.
pub fn script_nonce(line: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!(
        "hallclock rules run: demonstration nonce, line {line}"
    ));
    encode_hex(&digest[..16])
}

/// One checked line of a script.
#[derive(Debug, Clone)]
pub struct Step {
    pub line: usize,
    pub at: Millis,
    /// `None`: only let time pass (`advance`).
    pub input: Option<Input>,
}

/// A checked script: the game's setup, its date, and the timed steps.
#[derive(Debug, Clone)]
pub struct Script {
    pub setup: Setup,
    pub date: Millis,
    pub steps: Vec<Step>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::millis::{format_instant, parse_date, parse_duration, parse_instant};

    #[test]
    fn durations_and_instants() {
        assert_eq!(parse_duration("1:30:00"), Ok(Millis(5_400_000)));
        assert_eq!(parse_duration("-0:30"), Ok(Millis(-30_000)));
        assert_eq!(parse_duration("+2:00.5"), Ok(Millis(120_500)));
        assert!(parse_duration("90").is_err());
        assert!(parse_duration("1:75:00").is_err());
        let d = parse_date("2026-11-30").unwrap();
        assert_eq!(format_instant(d, Millis::ZERO), "2026-11-30 00:00:00.000");
        let t = parse_instant("14:05:01.250", d).unwrap();
        assert_eq!(format_instant(t, d), "14:05:01.250");
        assert_eq!(
            parse_instant("2026-12-01T09:00:00Z", d).map(|t| format_instant(t, d)),
            Ok("2026-12-01 09:00:00.000".to_string())
        );
        assert!(parse_date("2026-02-30").is_err());
        assert!(parse_instant("25:00:00", d).is_err());
        assert!(parse_instant("14:00", d).is_err());
    }

    fn script_err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    const SETUP: &str = r#"{"at":"13:55:00","input":"setup","white":"A","black":"B","tc":"300","start":"14:00:00"}"#;

    #[test]
    fn malformed_scripts_name_the_line_and_what_is_wrong() {
        assert_eq!(
            script_err(""),
            "line 1: the script is empty: it needs a \"setup\" line"
        );
        assert_eq!(
            script_err(r#"{"at":"14:00:00","input":"press"}"#),
            "line 1: the first input must be \"setup\""
        );
        assert!(
            script_err(&format!(
                "{SETUP}\n{{\"at\": \"14:00:01\", \"input\": \"press\",}}"
            ))
            .starts_with("line 2, column ")
        );
        assert_eq!(
            script_err(&format!(
                "{SETUP}\n\n{{\"at\":\"14:00:01\",\"input\":\"prss\"}}"
            )),
            "line 3: prss: unknown variant `prss`, expected one of `setup`, `advance`, `present`, `move`, `press`, `player_pause`, `pause`, `resume`, `set_time`, `add_time`, `set_moves`, `set_position`, `replace_clock`, `confirm_flag`, `set_result`, `clock_reading`, `acknowledge_discrepancy`, `set_session_end`, `set_adjournment_rules`, `adjourn`, `schedule_resumption`, `seal`, `commit_seal`, `verify_envelope`, `draw_offer`, `draw_reply`, `open_envelope`, `counter_seal`, `envelope_lost`, `correct_time`"
        );
        assert_eq!(
            script_err(&format!(
                "{SETUP}\n{{\"at\":\"14:00:01\",\"input\":\"press\",\"sid\":\"white\"}}"
            )),
            "line 2: press: unknown field `sid`, expected `side` or `move`"
        );
        assert_eq!(
            script_err(&format!(
                "{SETUP}\n{{\"at\":\"14:00:01\",\"input\":\"set_time\",\"side\":\"white\",\"remaining\":\"5 min\",\"arbiter\":\"a\",\"reason\":\"r\"}}"
            )),
            "line 2: set_time: '5 min' is not a duration: expected [-]H:MM:SS[.mmm], [-]M:SS[.mmm] or a number with its unit (500ms, 30s, 1.5m, 2h)"
        );
        assert_eq!(
            script_err(&format!(
                "{SETUP}\n{{\"at\":\"13:00:00\",\"input\":\"advance\"}}"
            )),
            "line 2: time goes backwards: 13:00:00 is before the previous line"
        );
        assert_eq!(
            script_err(
                r#"{"at":"13:55:00","input":"setup","white":"A","black":"B","tc":"40/5400+30:","start":"14:00:00"}"#
            ),
            "line 1: setup: time control '40/5400+30:': expected a period after ':' at column 12"
        );
        assert_eq!(
            script_err(
                r#"{"at":"13:55:00","input":"setup","white":"A","black":"B","tc":"300","start":"14:00:00","fen":"8/8/8 w - - 0 1"}"#
            ),
            "line 1: setup: fen: piece placement (field 1): 3 ranks, not 8"
        );
        assert_eq!(script_err("[1,2]"), "line 1: expected a JSON object");
    }

    #[test]
    fn rule_i_1_1_a_board_move_after_the_order_is_sealed_by_the_runner_and_kept_for_the_opening() {
        let text = format!(
            "{SETUP}\n{{\"at\":\"14:00:05\",\"input\":\"press\",\"move\":\"e4\"}}\n{{\"at\":\"14:00:06\",\"input\":\"adjourn\",\"arbiter\":\"IA\",\"resumption\":{{\"start\":\"15:00:00\",\"place\":\"B\"}}}}\n{{\"at\":\"14:00:07\",\"input\":\"press\",\"move\":\"e5\"}}\n{{\"at\":\"14:59:00\",\"input\":\"present\",\"side\":\"white\",\"arbiter\":\"IA\"}}\n{{\"at\":\"15:00:01\",\"input\":\"open_envelope\",\"arbiter\":\"IA\"}}"
        );
        let out = run(&parse(&text).unwrap()).unwrap();
        let names: Vec<String> = out
            .iter()
            .filter_map(|o| match o {
                Output::Event { event, .. } => Some(
                    serde_json::to_value(event).unwrap()["event"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                ),
                Output::Rejected { input, .. } => Some(format!("rejected {input}")),
                Output::Final { .. } => None,
            })
            .collect();
        assert_eq!(
            names[4..],
            [
                "adjournment_ordered",
                "resumption_scheduled",
                "sealed",
                "seal_committed",
                "player_present",
                "resumption_started",
                "envelope_opened",
                "sealed_move_played"
            ]
        );
    }

    #[test]
    fn a_script_runs_and_rejections_are_output_not_errors() {
        let text = format!(
            "{SETUP}\n# comment\n{{\"at\":\"14:00:05\",\"input\":\"press\",\"move\":\"e4\"}}\n{{\"at\":\"14:00:06\",\"input\":\"press\",\"move\":\"e4\"}}\n{{\"at\":\"14:20:00\",\"input\":\"advance\"}}"
        );
        let script = parse(&text).unwrap();
        let out = run(&script).unwrap();
        let kinds: Vec<String> = out
            .iter()
            .map(|o| match o {
                Output::Event { event, .. } => serde_json::to_value(event).unwrap()["event"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                Output::Rejected { input, .. } => format!("rejected {input}"),
                Output::Final { .. } => "final".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "clock_started",
                "player_present",
                "move_made",
                "pressed",
                "rejected press",
                "flag_fell",
                "game_ended",
                "final"
            ]
        );
        let Output::Final { summary, .. } = out.last().unwrap() else {
            panic!()
        };
        assert_eq!(summary, "1-0, black's flag fell");
    }
}
