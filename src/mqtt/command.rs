//! Arbiter commands arriving on `set` topics: JSON turned into typed values once, at the
//! edge, with a reason a person can act on when it is wrong.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::rules::adjournment::{AdjournmentRules, Resumption};
use crate::rules::game::{ArbiterResult, BothAbsent, FlagMode, Score};
use crate::rules::time_control::TimeControl;
use crate::rules::{Color, Millis};
use crate::script::parse_instant;

/// Every command carries who sent it and a transaction id echoed in the response.
#[derive(Debug, Clone, PartialEq)]
pub struct Command<A> {
    pub transaction: String,
    pub arbiter: String,
    /// Why; required by adjustments and results (6.13), optional elsewhere.
    pub reason: String,
    pub action: A,
}

/// A command for one board (`board/<b>/set`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum BoardAction {
    Pause {},
    Resume {},
    Present {
        side: Color,
    },
    SetTime {
        side: Color,
        remaining_ms: Millis,
    },
    AddTime {
        side: Color,
        delta_ms: Millis,
    },
    SetMoves {
        side: Color,
        moves: u32,
        #[serde(default)]
        period: Option<u32>,
    },
    SetResult {
        result: ResultName,
        #[serde(default)]
        side: Option<Color>,
    },
    ConfirmFlag {},
    /// The position, for clock-only boards (FEN).
    SetPosition {
        fen: String,
    },
    /// 6.10: continue the game on another board (`to`), or on this board's replaced
    /// clock, with the arbiter's times (unchanged when omitted).
    ReplaceClock {
        #[serde(default)]
        to: Option<String>,
        #[serde(default)]
        white_ms: Option<Millis>,
        #[serde(default)]
        black_ms: Option<Millis>,
    },
    /// 6.4: the clock was turned round: White now sits on the other side.
    SwapSides {},
    /// I.1.1: the session's nominal end for this game (`null` clears it).
    SetSessionEnd {
        #[serde(default)]
        end: Option<Instant>,
    },
    /// The event's adjournment rules (edition, notation language, default time at
    /// resumption); fixed before the game is first adjourned.
    SetAdjournmentRules {
        rules: AdjournmentRules,
    },
    /// I.1.1: adjourn this game now; the player to move must seal.
    Adjourn {
        #[serde(default)]
        resumption: Option<ResumptionSpec>,
    },
    /// I.2.7, I.14: date, time and place of the resumption.
    ScheduleResumption {
        resumption: ResumptionSpec,
    },
    /// I.1.1: the move the sealer wrote, as written. The daemon draws the nonce itself and
    /// keeps both encrypted; only the commitment is ever published.
    Seal {
        #[serde(default)]
        side: Option<Color>,
        mv: SealText,
    },
    /// I.1.1 / A1a: the arbiter stops the clock for the sealer; the sealed move is final.
    CommitSeal {},
    /// I.3: the arbiter checked the envelope.
    VerifyEnvelope {},
    /// 9.1 / I.4: a draw offer by `side`, recorded.
    DrawOffer {
        side: Color,
    },
    /// The answer to the standing offer (I.6: an accepted one ends the game).
    DrawReply {
        accept: bool,
    },
    /// I.7: open the waiting envelope. No move in the command: the daemon takes it, and
    /// its nonce, from its own custody.
    OpenEnvelope {},
    /// I.9.3: the responder, with the sealer absent, seals the reply.
    CounterSeal {
        mv: SealText,
    },
    /// I.12.1: the envelope is lost (`reason` required).
    EnvelopeLost {},
    /// I.13: a time shown wrong at resumption, before the first move (`reason` required).
    CorrectTime {
        side: Color,
        remaining_ms: Millis,
    },
    /// 6.10: the arbiter has dealt with the alert (only `clock_discrepancy` waits for
    /// this; the others clear when their cause does): the official times stand.
    AcknowledgeAlert {
        alert: crate::mqtt::payload::AlertKind,
    },
}

/// A sealed move's text, kept byte for byte. Its `Debug` never shows it, so no log line
/// made from a command can leak a sealed move before its opening (I.3).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct SealText(pub String);

impl std::fmt::Debug for SealText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealText(<sealed>)")
    }
}

/// A resumption session as commands give it (instants as ms or ISO-8601 text).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumptionSpec {
    pub start: Instant,
    #[serde(default)]
    pub end: Option<Instant>,
    pub place: String,
}

impl ResumptionSpec {
    pub fn to_core(&self) -> Resumption {
        Resumption {
            start: self.start.0,
            end: self.end.map(|e| e.0),
            place: self.place.clone(),
        }
    }
}

impl BoardAction {
    pub fn name(&self) -> &'static str {
        match self {
            BoardAction::Pause {} => "pause",
            BoardAction::Resume {} => "resume",
            BoardAction::Present { .. } => "present",
            BoardAction::SetTime { .. } => "set_time",
            BoardAction::AddTime { .. } => "add_time",
            BoardAction::SetMoves { .. } => "set_moves",
            BoardAction::SetResult { .. } => "set_result",
            BoardAction::ConfirmFlag {} => "confirm_flag",
            BoardAction::SetPosition { .. } => "set_position",
            BoardAction::ReplaceClock { .. } => "replace_clock",
            BoardAction::SwapSides {} => "swap_sides",
            BoardAction::SetSessionEnd { .. } => "set_session_end",
            BoardAction::SetAdjournmentRules { .. } => "set_adjournment_rules",
            BoardAction::Adjourn { .. } => "adjourn",
            BoardAction::ScheduleResumption { .. } => "schedule_resumption",
            BoardAction::Seal { .. } => "seal",
            BoardAction::CommitSeal {} => "commit_seal",
            BoardAction::VerifyEnvelope {} => "verify_envelope",
            BoardAction::DrawOffer { .. } => "draw_offer",
            BoardAction::DrawReply { .. } => "draw_reply",
            BoardAction::OpenEnvelope {} => "open_envelope",
            BoardAction::CounterSeal { .. } => "counter_seal",
            BoardAction::EnvelopeLost {} => "envelope_lost",
            BoardAction::CorrectTime { .. } => "correct_time",
            BoardAction::AcknowledgeAlert { .. } => "acknowledge_alert",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultName {
    AgreedDraw,
    Resignation,
    IllegalMoves,
    Annulled,
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
    #[serde(rename = "0-0")]
    BothLose,
}

impl ResultName {
    /// The core's result; `side` is who resigned or made the illegal moves.
    pub fn to_result(self, side: Option<Color>) -> Result<ArbiterResult, String> {
        let need = |what: &str| side.ok_or_else(|| format!("'{what}' needs \"side\""));
        Ok(match self {
            ResultName::AgreedDraw => ArbiterResult::AgreedDraw,
            ResultName::Resignation => ArbiterResult::Resignation {
                side: need("resignation")?,
            },
            ResultName::IllegalMoves => ArbiterResult::IllegalMoves {
                side: need("illegal_moves")?,
            },
            ResultName::Annulled => ArbiterResult::Annulled,
            ResultName::WhiteWins => ArbiterResult::Score {
                score: Score::WhiteWins,
            },
            ResultName::BlackWins => ArbiterResult::Score {
                score: Score::BlackWins,
            },
            ResultName::Draw => ArbiterResult::Score { score: Score::Draw },
            ResultName::BothLose => ArbiterResult::Score {
                score: Score::BothLose,
            },
        })
    }
}

/// A command for the whole hall (`set`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum HallAction {
    /// Start a round: at `start`, White's clock starts on every paired board (6.5).
    StartRound {
        round: u32,
        pairings: Vec<Pairing>,
        /// Scheduled start: ms since the Unix epoch, or `"YYYY-MM-DDTHH:MM:SS[.mmm]Z"`.
        start: Instant,
        #[serde(default)]
        time_control: Option<TimeControl>,
        #[serde(default)]
        time_control_black: Option<TimeControl>,
        #[serde(default)]
        default_time_ms: Option<Millis>,
        #[serde(default)]
        flag_mode: Option<FlagMode>,
        #[serde(default)]
        both_absent: Option<BothAbsent>,
        /// I.1.1: the session's nominal end; every unfinished game is ordered to seal then.
        #[serde(default)]
        session_end: Option<Instant>,
    },
    /// I.1.1: adjourn every running game now ("seal all").
    SealAll {
        #[serde(default)]
        resumption: Option<ResumptionSpec>,
    },
    /// I.14: the resumption session of every adjourned game.
    ScheduleResumption {
        resumption: ResumptionSpec,
    },
    /// 6.12a for every board with a running game.
    Pause {},
    Resume {},
    /// Republish `board`'s journaled events from `from_seq` on, so a dashboard that was
    /// away can fill its gap.
    Replay {
        board: String,
        #[serde(default)]
        from_seq: u64,
    },
}

impl HallAction {
    pub fn name(&self) -> &'static str {
        match self {
            HallAction::StartRound { .. } => "start_round",
            HallAction::Pause {} => "pause",
            HallAction::Resume {} => "resume",
            HallAction::Replay { .. } => "replay",
            HallAction::SealAll { .. } => "seal_all",
            HallAction::ScheduleResumption { .. } => "schedule_resumption",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pairing {
    pub board: String,
    pub white: String,
    pub black: String,
    #[serde(default)]
    pub white_fide_id: Option<u64>,
    #[serde(default)]
    pub black_fide_id: Option<u64>,
    /// A starting position other than the initial one.
    #[serde(default)]
    pub fen: Option<String>,
}

/// An instant: integer ms since the Unix epoch, or an ISO-8601 UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instant(pub Millis);

impl<'de> Deserialize<'de> for Instant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Ms(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Ms(ms) => Ok(Instant(Millis(ms))),
            Raw::Text(s) => {
                if !s.contains(['T', ' ']) {
                    return Err(serde::de::Error::custom(format!(
                        "'{s}' is not an instant: expected ms since the Unix epoch or YYYY-MM-DDTHH:MM:SS[.mmm]Z"
                    )));
                }
                parse_instant(&s, Millis::ZERO)
                    .map(Instant)
                    .map_err(serde::de::Error::custom)
            }
        }
    }
}

/// A command that could not be understood. `transaction` is echoed when it was readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCommand {
    pub transaction: String,
    pub action: String,
    pub reason: String,
}

fn take_string(obj: &mut Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("\"{key}\" must be a string, not {other}")),
    }
}

/// Parse a command payload.
pub fn parse<A: for<'de> Deserialize<'de>>(payload: &[u8]) -> Result<Command<A>, BadCommand> {
    let bad = |transaction: &str, action: &str, reason: String| BadCommand {
        transaction: transaction.to_string(),
        action: action.to_string(),
        reason,
    };
    let value: Value =
        serde_json::from_slice(payload).map_err(|e| bad("", "", format!("not JSON: {e}")))?;
    let Value::Object(mut obj) = value else {
        return Err(bad("", "", "expected a JSON object".into()));
    };
    let transaction = take_string(&mut obj, "transaction")
        .map_err(|e| bad("", "", e))?
        .unwrap_or_default();
    let action = obj
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if transaction.trim().is_empty() {
        return Err(bad(
            "",
            &action,
            "missing \"transaction\": an id echoed in the response".into(),
        ));
    }
    let arbiter = take_string(&mut obj, "arbiter")
        .map_err(|e| bad(&transaction, &action, e))?
        .unwrap_or_default();
    if arbiter.trim().is_empty() {
        return Err(bad(
            &transaction,
            &action,
            "missing \"arbiter\": who gives this command".into(),
        ));
    }
    let reason = take_string(&mut obj, "reason")
        .map_err(|e| bad(&transaction, &action, e))?
        .unwrap_or_default();
    if action.is_empty() {
        return Err(bad(&transaction, "", "missing \"action\"".into()));
    }
    let parsed: A = serde_json::from_value(Value::Object(obj))
        .map_err(|e| bad(&transaction, &action, e.to_string()))?;
    Ok(Command {
        transaction,
        arbiter,
        reason,
        action: parsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(json: &str) -> Result<Command<BoardAction>, BadCommand> {
        parse(json.as_bytes())
    }

    #[test]
    fn board_commands_parse() {
        let c = board(r#"{"transaction":"t1","arbiter":"IA","action":"add_time","side":"black","delta_ms":120000,"reason":"7.5.5"}"#)
            .unwrap();
        assert_eq!(
            c.action,
            BoardAction::AddTime {
                side: Color::Black,
                delta_ms: Millis(120_000)
            }
        );
        assert_eq!((c.transaction.as_str(), c.reason.as_str()), ("t1", "7.5.5"));
    }

    #[test]
    fn bad_commands_say_what_is_wrong() {
        let e = board(r#"{"transaction":"t1","arbiter":"IA","action":"add_tme"}"#).unwrap_err();
        assert_eq!(e.transaction, "t1");
        assert!(
            e.reason.starts_with("unknown variant `add_tme`"),
            "{}",
            e.reason
        );
        let e = board(r#"{"transaction":"t1","arbiter":"IA","action":"set_time","side":"white","remaining":5}"#)
            .unwrap_err();
        assert!(
            e.reason.contains("unknown field `remaining`"),
            "{}",
            e.reason
        );
        let e = board(r#"{"arbiter":"IA","action":"pause"}"#).unwrap_err();
        assert!(e.reason.starts_with("missing \"transaction\""));
        let e = board(r#"{"transaction":"t","action":"pause"}"#).unwrap_err();
        assert!(e.reason.starts_with("missing \"arbiter\""));
        let e = board("{not json").unwrap_err();
        assert!(
            e.reason
                .starts_with("not JSON: key must be a string at line 1 column 2")
        );
        let e = board(r#"{"transaction":"t","arbiter":"a","action":"set_time","side":"green","remaining_ms":1}"#)
            .unwrap_err();
        assert!(e.reason.contains("unknown variant `green`"), "{}", e.reason);
    }

    #[test]
    fn start_round_parses_instants_and_time_controls() {
        let c: Command<HallAction> = parse(
            br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":"2026-11-30T14:00:00Z","time_control":"40/5400+30:1800+30","pairings":[{"board":"board-001","white":"A","black":"B"}]}"#,
        )
        .unwrap();
        let HallAction::StartRound {
            start,
            time_control,
            ..
        } = c.action
        else {
            panic!()
        };
        assert_eq!(start.0, Millis(1_796_047_200_000));
        assert_eq!(time_control.unwrap().to_string(), "40/5400+30:1800+30");
        let e = parse::<HallAction>(
            br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":"14:00","pairings":[]}"#,
        )
        .unwrap_err();
        assert!(e.reason.contains("not an instant"), "{}", e.reason);
        let e = parse::<HallAction>(
            br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":0,"time_control":"40/5400+30:","pairings":[]}"#,
        )
        .unwrap_err();
        assert!(
            e.reason
                .contains("expected a period after ':' at column 12"),
            "{}",
            e.reason
        );
    }
}
