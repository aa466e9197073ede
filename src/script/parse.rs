//! Reading a script: each line's JSON checked against the script vocabulary (the setup,
//! the timed inputs) and turned into the core's inputs, line by line, as it is read.

use serde::Deserialize;

use super::{Script, ScriptError, Step, err, script_nonce};
use crate::intake::command::ResultName;
use crate::intake::json::StrictError;
use serde_json::{Map, Value};

use crate::rules::adjournment::{AdjournmentRules, Edition, NotationLanguage, Resumption};
use crate::rules::game::{BothAbsent, FlagMode, Game, Input, Setup};
use crate::rules::millis::{parse_date, parse_duration, parse_instant};
use crate::rules::time_control::{ClockOptions, TimeControl};
use crate::rules::{Color, Millis};

/// A duration: integer milliseconds, or `[-|+]H:MM:SS[.mmm]` / `[-|+]M:SS[.mmm]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptDuration(pub Millis);

impl<'de> Deserialize<'de> for ScriptDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

/// Says what was wrong with a duration: a fraction, a huge number, a bad text.
struct DurationVisitor;

impl serde::de::Visitor<'_> for DurationVisitor {
    type Value = ScriptDuration;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a duration: whole milliseconds or text such as \"1:30:00\" or \"4:05.5\"")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ScriptDuration, E> {
        Ok(ScriptDuration(Millis(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ScriptDuration, E> {
        i64::try_from(v)
            .map(|v| ScriptDuration(Millis(v)))
            .map_err(|_| E::custom(format!("{v} ms is too large a duration")))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ScriptDuration, E> {
        Err(E::custom(format!(
            "{v} is not a whole number of milliseconds (a duration is integer milliseconds \
             or a text such as \"0:01.5\")"
        )))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ScriptDuration, E> {
        parse_duration(v).map(ScriptDuration).map_err(E::custom)
    }
}

fn default_hour() -> ScriptDuration {
    ScriptDuration(Millis::from_mins(60))
}

fn default_margin() -> ScriptDuration {
    ScriptDuration(Millis(2000))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptSetup {
    white: String,
    black: String,
    tc: TimeControl,
    #[serde(default)]
    tc_black: Option<TimeControl>,
    start: String,
    #[serde(default = "default_hour")]
    default_time: ScriptDuration,
    #[serde(default)]
    pauses_extend_default_time: bool,
    #[serde(default)]
    both_absent: BothAbsent,
    #[serde(default)]
    flag_mode: FlagMode,
    #[serde(default)]
    clock: ClockOptions,
    #[serde(default)]
    fen: Option<String>,
    #[serde(default = "default_margin")]
    discrepancy_margin: ScriptDuration,
    /// The nominal end of the session (I.1.1): becomes a `set_session_end` input.
    #[serde(default)]
    session_end: Option<String>,
    /// The event's adjournment rules: becomes a `set_adjournment_rules` input.
    #[serde(default)]
    adjournment: Option<ScriptRules>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptRules {
    #[serde(default)]
    edition: Edition,
    #[serde(default)]
    notation_language: NotationLanguage,
    #[serde(default)]
    resumption_default_time: Option<ScriptDuration>,
}

impl ScriptRules {
    fn rules(&self) -> AdjournmentRules {
        AdjournmentRules {
            edition: self.edition,
            notation_language: self.notation_language,
            resumption_default_time: self.resumption_default_time.map(|d| d.0),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptResumption {
    start: String,
    #[serde(default)]
    end: Option<String>,
    place: String,
}

impl ScriptResumption {
    fn resumption(&self, line: usize, date: Millis) -> Result<Resumption, ScriptError> {
        let at = |field: &str, t: &str| {
            parse_instant(t, date).map_err(|e| err(line, format!("{field}: {e}")))
        };
        Ok(Resumption {
            start: at("start", &self.start)?,
            end: self.end.as_deref().map(|e| at("end", e)).transpose()?,
            place: self.place.clone(),
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Accept,
    Decline,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case", deny_unknown_fields)]
enum ScriptInput {
    Setup(Box<ScriptSetup>),
    Advance {},
    Present {
        side: Color,
        arbiter: String,
    },
    Move {
        #[serde(rename = "move")]
        mv: String,
    },
    Press {
        #[serde(default)]
        side: Option<Color>,
        #[serde(default, rename = "move")]
        mv: Option<String>,
    },
    PlayerPause {
        #[serde(default)]
        side: Option<Color>,
    },
    Pause {
        arbiter: String,
        reason: String,
    },
    Resume {
        arbiter: String,
    },
    SetTime {
        side: Color,
        remaining: ScriptDuration,
        arbiter: String,
        reason: String,
    },
    AddTime {
        side: Color,
        delta: ScriptDuration,
        arbiter: String,
        reason: String,
    },
    SetMoves {
        side: Color,
        moves: u32,
        #[serde(default)]
        period: Option<u32>,
        arbiter: String,
        reason: String,
    },
    SetPosition {
        fen: String,
        arbiter: String,
        reason: String,
    },
    ReplaceClock {
        device: String,
        #[serde(default)]
        white: Option<ScriptDuration>,
        #[serde(default)]
        black: Option<ScriptDuration>,
        arbiter: String,
        reason: String,
    },
    ConfirmFlag {
        arbiter: String,
    },
    SetResult {
        result: ResultName,
        #[serde(default)]
        side: Option<Color>,
        arbiter: String,
        reason: String,
    },
    ClockReading {
        white: ScriptDuration,
        black: ScriptDuration,
    },
    AcknowledgeDiscrepancy {
        arbiter: String,
    },
    SetSessionEnd {
        end: Option<String>,
        arbiter: String,
    },
    SetAdjournmentRules {
        #[serde(default)]
        edition: Edition,
        #[serde(default)]
        notation_language: NotationLanguage,
        #[serde(default)]
        resumption_default_time: Option<ScriptDuration>,
        arbiter: String,
    },
    Adjourn {
        arbiter: String,
        #[serde(default)]
        resumption: Option<ScriptResumption>,
    },
    ScheduleResumption {
        start: String,
        #[serde(default)]
        end: Option<String>,
        place: String,
        arbiter: String,
    },
    Seal {
        #[serde(default)]
        side: Option<Color>,
        #[serde(rename = "move")]
        mv: String,
        #[serde(default)]
        nonce: Option<String>,
    },
    CommitSeal {
        #[serde(default)]
        arbiter: Option<String>,
    },
    VerifyEnvelope {
        arbiter: String,
    },
    DrawOffer {
        side: Color,
        arbiter: String,
    },
    DrawReply {
        reply: Reply,
        arbiter: String,
    },
    OpenEnvelope {
        #[serde(default, rename = "move")]
        mv: Option<String>,
        #[serde(default)]
        nonce: Option<String>,
        arbiter: String,
    },
    CounterSeal {
        #[serde(rename = "move")]
        mv: String,
        #[serde(default)]
        nonce: Option<String>,
    },
    EnvelopeLost {
        arbiter: String,
        reason: String,
    },
    CorrectTime {
        side: Color,
        remaining: ScriptDuration,
        arbiter: String,
        reason: String,
    },
}

fn to_input(line: usize, s: ScriptInput, date: Millis) -> Result<Option<Input>, ScriptError> {
    let instant = |field: &str, t: &str| {
        parse_instant(t, date).map_err(|e| err(line, format!("{field}: {e}")))
    };
    Ok(Some(match s {
        ScriptInput::Setup(_) => {
            return Err(err(line, "a script has one setup, on its first line"));
        }
        ScriptInput::Advance {} => return Ok(None),
        ScriptInput::Present { side, arbiter } => Input::Present { side, arbiter },
        ScriptInput::Move { mv } => Input::Move { mv },
        ScriptInput::Press { side, mv } => Input::Press { side, mv },
        ScriptInput::PlayerPause { side } => Input::PlayerPause { side },
        ScriptInput::Pause { arbiter, reason } => Input::Pause { arbiter, reason },
        ScriptInput::Resume { arbiter } => Input::Resume { arbiter },
        ScriptInput::SetTime {
            side,
            remaining,
            arbiter,
            reason,
        } => Input::SetTime {
            side,
            remaining: remaining.0,
            arbiter,
            reason,
        },
        ScriptInput::AddTime {
            side,
            delta,
            arbiter,
            reason,
        } => Input::AddTime {
            side,
            delta: delta.0,
            arbiter,
            reason,
        },
        ScriptInput::SetMoves {
            side,
            moves,
            period,
            arbiter,
            reason,
        } => Input::SetMoves {
            side,
            moves,
            period,
            arbiter,
            reason,
        },
        ScriptInput::SetPosition {
            fen,
            arbiter,
            reason,
        } => Input::SetPosition {
            fen,
            arbiter,
            reason,
        },
        ScriptInput::ReplaceClock {
            device,
            white,
            black,
            arbiter,
            reason,
        } => Input::ReplaceClock {
            device,
            white: white.map(|d| d.0),
            black: black.map(|d| d.0),
            arbiter,
            reason,
        },
        ScriptInput::ConfirmFlag { arbiter } => Input::ConfirmFlag { arbiter },
        ScriptInput::SetResult {
            result,
            side,
            arbiter,
            reason,
        } => {
            // The same names and rules as the MQTT command: one parser for both.
            let result = result
                .to_result(side)
                .map_err(|e| err(line, format!("set_result {e}: the offending side")))?;
            Input::SetResult {
                result,
                arbiter,
                reason,
            }
        }
        ScriptInput::ClockReading { white, black } => Input::ClockReading {
            white: white.0,
            black: black.0,
        },
        ScriptInput::AcknowledgeDiscrepancy { arbiter } => {
            Input::AcknowledgeDiscrepancy { arbiter }
        }
        ScriptInput::SetSessionEnd { end, arbiter } => Input::SetSessionEnd {
            end: end.as_deref().map(|e| instant("end", e)).transpose()?,
            arbiter,
        },
        ScriptInput::SetAdjournmentRules {
            edition,
            notation_language,
            resumption_default_time,
            arbiter,
        } => Input::SetAdjournmentRules {
            rules: AdjournmentRules {
                edition,
                notation_language,
                resumption_default_time: resumption_default_time.map(|d| d.0),
            },
            arbiter,
        },
        ScriptInput::Adjourn {
            arbiter,
            resumption,
        } => Input::Adjourn {
            arbiter,
            resumption: resumption.map(|r| r.resumption(line, date)).transpose()?,
        },
        ScriptInput::ScheduleResumption {
            start,
            end,
            place,
            arbiter,
        } => Input::ScheduleResumption {
            resumption: ScriptResumption { start, end, place }.resumption(line, date)?,
            arbiter,
        },
        ScriptInput::Seal { side, mv, nonce } => Input::Seal {
            side,
            mv,
            nonce: nonce.unwrap_or_else(|| script_nonce(line)),
            on_board: false,
        },
        ScriptInput::CommitSeal { arbiter } => Input::CommitSeal { arbiter },
        ScriptInput::VerifyEnvelope { arbiter } => Input::VerifyEnvelope { arbiter },
        ScriptInput::DrawOffer { side, arbiter } => Input::DrawOffer { side, arbiter },
        ScriptInput::DrawReply { reply, arbiter } => Input::DrawReply {
            accept: matches!(reply, Reply::Accept),
            arbiter,
        },
        // Without the move and nonce, the runner gives back what it kept, as the daemon
        // will from its store.
        ScriptInput::OpenEnvelope { mv, nonce, arbiter } => Input::OpenEnvelope {
            mv: mv.unwrap_or_default(),
            nonce: nonce.unwrap_or_default(),
            arbiter,
        },
        ScriptInput::CounterSeal { mv, nonce } => Input::CounterSeal {
            mv,
            nonce: nonce.unwrap_or_else(|| script_nonce(line)),
        },
        ScriptInput::EnvelopeLost { arbiter, reason } => Input::EnvelopeLost { arbiter, reason },
        ScriptInput::CorrectTime {
            side,
            remaining,
            arbiter,
            reason,
        } => Input::CorrectTime {
            side,
            remaining: remaining.0,
            arbiter,
            reason,
        },
    }))
}

/// A script checked line by line, as it is read: the lines need not be held. Blank lines
/// and lines starting with `#` or `//` are comments.
#[derive(Debug, Default)]
pub struct Parser {
    setup: Option<(Setup, Millis)>,
    last: Option<Millis>,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// The setup and the script's date, once the setup line has been read.
    pub fn setup(&self) -> Option<&(Setup, Millis)> {
        self.setup.as_ref()
    }

    /// Check line number `line` (1-based, without its line break) and return the steps
    /// it makes: none for a comment, up to three for the setup line.
    pub fn line(&mut self, line: usize, raw: &[u8]) -> Result<Vec<Step>, ScriptError> {
        let text = line_text(line, raw)?;
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("//") {
            return Ok(Vec::new());
        }
        let mut steps = Vec::new();
        let last = self.last.unwrap_or(Millis(i64::MIN));
        let mut obj = line_object(line, text)?;
        let date_value = obj.remove("date");
        let at_text = match obj.remove("at") {
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(err(
                    line,
                    format!("\"at\" must be a time string such as \"14:00:00\", not {other}"),
                ));
            }
            None => {
                return Err(err(
                    line,
                    "missing \"at\": when this input happens, e.g. \"14:00:00\"",
                ));
            }
        };
        let input_name = obj
            .get("input")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let parsed: ScriptInput = serde_json::from_value(Value::Object(obj)).map_err(|e| {
            let what = if input_name.is_empty() {
                String::new()
            } else {
                format!("{input_name}: ")
            };
            err(line, format!("{what}{e}"))
        })?;
        let at = match (&self.setup, parsed) {
            (None, ScriptInput::Setup(s)) => {
                self.setup_line(line, *s, date_value, &at_text, &mut steps)?
            }
            (None, _) => return Err(err(line, "the first input must be \"setup\"")),
            (Some((_, date)), parsed) => {
                if date_value.is_some() {
                    return Err(err(line, "\"date\" belongs on the setup line"));
                }
                let at = parse_instant(&at_text, *date).map_err(|e| err(line, e.to_string()))?;
                let input = to_input(line, parsed, *date)?;
                steps.push(Step { line, at, input });
                at
            }
        };
        if at < last {
            return Err(err(
                line,
                format!("time goes backwards: {at_text} is before the previous line"),
            ));
        }
        self.last = Some(at);
        Ok(steps)
    }

    /// The setup line: the game checked as the core would start it, its date kept for
    /// every later line; its adjournment rules and session end as steps of their own.
    /// Returns the line's instant.
    fn setup_line(
        &mut self,
        line: usize,
        s: ScriptSetup,
        date_value: Option<Value>,
        at_text: &str,
        steps: &mut Vec<Step>,
    ) -> Result<Millis, ScriptError> {
        let date = match date_value {
            None => Millis::ZERO,
            Some(Value::String(d)) => parse_date(&d).map_err(|e| err(line, e.to_string()))?,
            Some(other) => {
                return Err(err(
                    line,
                    format!("\"date\" must be \"YYYY-MM-DD\", not {other}"),
                ));
            }
        };
        let at = parse_instant(at_text, date).map_err(|e| err(line, e.to_string()))?;
        let start = parse_instant(&s.start, date).map_err(|e| err(line, format!("start: {e}")))?;
        let session_end = s
            .session_end
            .as_deref()
            .map(|t| parse_instant(t, date))
            .transpose()
            .map_err(|e| err(line, format!("session_end: {e}")))?;
        if let Some(rules) = &s.adjournment {
            steps.push(Step {
                line,
                at,
                input: Some(Input::SetAdjournmentRules {
                    rules: rules.rules(),
                    arbiter: "setup".into(),
                }),
            });
        }
        if session_end.is_some() {
            steps.push(Step {
                line,
                at,
                input: Some(Input::SetSessionEnd {
                    end: session_end,
                    arbiter: "setup".into(),
                }),
            });
        }
        let game_setup = Setup {
            white: s.white,
            black: s.black,
            tc: s.tc,
            tc_black: s.tc_black,
            start,
            default_time: s.default_time.0,
            pauses_extend_default_time: s.pauses_extend_default_time,
            both_absent: s.both_absent,
            flag_mode: s.flag_mode,
            clock: s.clock,
            fen: s.fen,
            discrepancy_margin: s.discrepancy_margin.0,
            observed: false,
            piece_letters: Default::default(),
            white_info: Default::default(),
            black_info: Default::default(),
        };
        Game::new(game_setup.clone()).map_err(|e| err(line, format!("setup: {e}")))?;
        self.setup = Some((game_setup, date));
        Ok(at)
    }

    /// The end of the script: it must have had its setup.
    pub fn finish(self) -> Result<(Setup, Millis), ScriptError> {
        self.setup
            .ok_or_else(|| err(1, "the script is empty: it needs a \"setup\" line"))
    }
}

/// A line's text: UTF-8 without a byte-order mark, its `\r` dropped.
fn line_text(line: usize, raw: &[u8]) -> Result<&str, ScriptError> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if raw.starts_with("\u{feff}".as_bytes()) {
        return Err(ScriptError {
            line,
            column: Some(1),
            message: "a byte-order mark (U+FEFF) starts the line: save the script as UTF-8 \
                      without one"
                .into(),
        });
    }
    std::str::from_utf8(raw).map_err(|e| ScriptError {
        line,
        column: Some(e.valid_up_to() + 1),
        message: format!(
            "not UTF-8 (byte 0x{:02x}): a script is UTF-8 text",
            raw.get(e.valid_up_to()).copied().unwrap_or(0)
        ),
    })
}

/// A line's JSON object, read strictly (a key given twice is an error), its errors at the
/// script's line and column.
fn line_object(line: usize, text: &str) -> Result<Map<String, Value>, ScriptError> {
    match crate::intake::json::read(text.as_bytes()) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(err(line, "expected a JSON object")),
        Err(StrictError::Duplicate { key, column, .. }) => Err(ScriptError {
            line,
            column: Some(column),
            message: format!("\"{key}\" is given twice"),
        }),
        Err(StrictError::Syntax(e)) => {
            // The position is given as the script's line and column, not serde's.
            let message = e.to_string();
            let message = message
                .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
                .unwrap_or(&message);
            Err(ScriptError {
                line,
                column: Some(e.column()),
                message: if e.is_data() {
                    message.to_string()
                } else {
                    format!("not JSON: {message}")
                },
            })
        }
    }
}

/// The lines of a script: split at `\n` (a `\r` before it is dropped by [`Parser::line`]),
/// numbered from 1.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
}

/// Parse and check a whole script.
pub fn parse(text: &str) -> Result<Script, ScriptError> {
    parse_bytes(text.as_bytes())
}

/// Parse and check a whole script given as bytes (not necessarily UTF-8: a line that is
/// not is an error naming it).
pub fn parse_bytes(bytes: &[u8]) -> Result<Script, ScriptError> {
    let mut parser = Parser::new();
    let mut steps = Vec::new();
    for (line, raw) in lines(bytes) {
        steps.extend(parser.line(line, raw)?);
    }
    let (setup, date) = parser.finish()?;
    Ok(Script { setup, date, steps })
}
