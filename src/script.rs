//! Rules scripts: JSON lines of timed inputs driven through the pure core, for tests, for
//! demonstrations and for arbiters reconstructing a disputed clock history
//! (`hallclock rules run`, documented in docs/RULES-SCRIPT.md).
//!
//! The whole script is parsed and checked before anything runs, so a malformed script
//! produces one error naming its line and nothing else.

use serde::Deserialize;

use crate::intake::command::ResultName;
use crate::intake::json::StrictError;
use serde_json::{Map, Value};

use crate::rules::adjournment::{
    AdjournmentRules, Edition, NotationLanguage, Resumption, encode_hex,
};
use crate::rules::game::{
    BothAbsent, Event, FlagMode, Game, Input, Rejection, Setup, describe_result,
};
use crate::rules::millis::{format_instant, parse_date, parse_duration, parse_instant};
use crate::rules::time_control::{ClockOptions, TimeControl};
use crate::rules::{Color, Millis};

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

/// A duration: integer milliseconds, or `[-|+]H:MM:SS[.mmm]` / `[-|+]M:SS[.mmm]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duration(pub Millis);

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

/// Says what was wrong with a duration: a fraction, a huge number, a bad text.
struct DurationVisitor;

impl serde::de::Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a duration: whole milliseconds or text such as \"1:30:00\" or \"4:05.5\"")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Duration, E> {
        Ok(Duration(Millis(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Duration, E> {
        i64::try_from(v)
            .map(|v| Duration(Millis(v)))
            .map_err(|_| E::custom(format!("{v} ms is too large a duration")))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Duration, E> {
        Err(E::custom(format!(
            "{v} is not a whole number of milliseconds (a duration is integer milliseconds \
             or a text such as \"0:01.5\")"
        )))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v).map(Duration).map_err(E::custom)
    }
}

fn default_hour() -> Duration {
    Duration(Millis::from_mins(60))
}

fn default_margin() -> Duration {
    Duration(Millis(2000))
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
    default_time: Duration,
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
    discrepancy_margin: Duration,
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
    resumption_default_time: Option<Duration>,
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

/// A script's stand-in for the nonce the daemon draws at random: derived from the line,
/// so outputs are reproducible. It is NOT secret; real envelopes need random nonces.
pub fn script_nonce(line: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!(
        "hallclock rules run: demonstration nonce, line {line}"
    ));
    encode_hex(&digest[..16])
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
        remaining: Duration,
        arbiter: String,
        reason: String,
    },
    AddTime {
        side: Color,
        delta: Duration,
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
        white: Option<Duration>,
        #[serde(default)]
        black: Option<Duration>,
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
        white: Duration,
        black: Duration,
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
        resumption_default_time: Option<Duration>,
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
        remaining: Duration,
        arbiter: String,
        reason: String,
    },
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
        let text = std::str::from_utf8(raw).map_err(|e| ScriptError {
            line,
            column: Some(e.valid_up_to() + 1),
            message: format!(
                "not UTF-8 (byte 0x{:02x}): a script is UTF-8 text",
                raw.get(e.valid_up_to()).copied().unwrap_or(0)
            ),
        })?;
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("//") {
            return Ok(Vec::new());
        }
        let mut steps = Vec::new();
        let last = self.last.unwrap_or(Millis(i64::MIN));
        let mut obj: Map<String, Value> = match crate::intake::json::read(text.as_bytes()) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return Err(err(line, "expected a JSON object")),
            Err(StrictError::Duplicate { key, column, .. }) => {
                return Err(ScriptError {
                    line,
                    column: Some(column),
                    message: format!("\"{key}\" is given twice"),
                });
            }
            Err(StrictError::Syntax(e)) => {
                // The position is given as the script's line and column, not serde's.
                let message = e.to_string();
                let message = message
                    .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
                    .unwrap_or(&message);
                return Err(ScriptError {
                    line,
                    column: Some(e.column()),
                    message: if e.is_data() {
                        message.to_string()
                    } else {
                        format!("not JSON: {message}")
                    },
                });
            }
        };
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
                let date = match date_value {
                    None => Millis::ZERO,
                    Some(Value::String(d)) => parse_date(&d).map_err(|e| err(line, e))?,
                    Some(other) => {
                        return Err(err(
                            line,
                            format!("\"date\" must be \"YYYY-MM-DD\", not {other}"),
                        ));
                    }
                };
                let at = parse_instant(&at_text, date).map_err(|e| err(line, e))?;
                let start =
                    parse_instant(&s.start, date).map_err(|e| err(line, format!("start: {e}")))?;
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
                };
                Game::new(game_setup.clone()).map_err(|e| err(line, format!("setup: {e}")))?;
                self.setup = Some((game_setup, date));
                at
            }
            (None, _) => return Err(err(line, "the first input must be \"setup\"")),
            (Some((_, date)), parsed) => {
                if date_value.is_some() {
                    return Err(err(line, "\"date\" belongs on the setup line"));
                }
                let at = parse_instant(&at_text, *date).map_err(|e| err(line, e))?;
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

    /// The end of the script: it must have had its setup.
    pub fn finish(self) -> Result<(Setup, Millis), ScriptError> {
        self.setup
            .ok_or_else(|| err(1, "the script is empty: it needs a \"setup\" line"))
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

/// One line of output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Event {
        line: usize,
        event: Event,
    },
    Rejected {
        line: usize,
        at: Millis,
        input: &'static str,
        reason: String,
        kind: Value,
    },
    Final {
        view: Value,
        summary: String,
    },
}

/// What a shell keeps of each sealed move: the text and nonce behind a commitment.
/// (The daemon keeps them encrypted at rest; a script keeps them in memory.)
#[derive(Default)]
struct Secrets(Vec<(String, String, String)>);

impl Secrets {
    fn keep(&mut self, input: &Input, events: &[Event], line: usize) {
        let (mv, nonce) = match input {
            Input::Seal { mv, nonce, .. } | Input::CounterSeal { mv, nonce } => {
                (mv.clone(), nonce.clone())
            }
            // Sealed from the board (see `seal_board_move`).
            Input::Move { mv } | Input::Press { mv: Some(mv), .. } => {
                (mv.clone(), script_nonce(line))
            }
            _ => return,
        };
        for e in events {
            let commitment = match e {
                Event::Sealed { commitment, .. } => commitment,
                Event::CounterSealed { envelope, .. } => &envelope.commitment,
                _ => continue,
            };
            self.0.push((commitment.clone(), mv.clone(), nonce.clone()));
        }
    }

    /// `open_envelope` without a move and nonce: give back the ones kept for the
    /// envelope waiting to be opened.
    fn fill(&self, game: &Game, input: &Input, now: Millis) -> Input {
        if let Input::OpenEnvelope { mv, nonce, arbiter } = input
            && mv.is_empty()
            && nonce.is_empty()
            && let Some(adj) = game.view(now).adjournment
            && let Some(envelope) = adj.envelopes.last()
            && let Some((_, mv, nonce)) = self.0.iter().find(|(c, ..)| *c == envelope.commitment)
        {
            return Input::OpenEnvelope {
                mv: mv.clone(),
                nonce: nonce.clone(),
                arbiter: arbiter.clone(),
            };
        }
        input.clone()
    }
}

/// I.1.1: seal a move made on the board after the order; a press with it also stops the
/// clock, which commits it.
fn seal_board_move(
    game: &Game,
    input: &Input,
    side: Color,
    mv: String,
    line: usize,
    now: Millis,
) -> Result<Vec<Event>, Rejection> {
    let seal = Input::Seal {
        side: Some(side),
        mv,
        nonce: script_nonce(line),
        on_board: true,
    };
    let mut events = game.decide(&seal, now)?;
    if matches!(input, Input::Press { .. }) {
        let mut draft = game.clone();
        for e in &events {
            draft.evolve(e);
        }
        events.extend(draft.decide(&Input::CommitSeal { arbiter: None }, now)?);
    }
    Ok(events)
}

/// Drive a checked script through the core, as the daemon would: time-driven events are
/// polled up to each line's instant before its input is decided.
pub fn run(script: &Script) -> Result<Vec<Output>, ScriptError> {
    let mut out = Vec::new();
    let first = script.steps.first().map(|s| s.at);
    let mut runner = Runner::new(&script.setup, first)?;
    for step in &script.steps {
        runner.step(step, &mut |o| out.push(o));
    }
    runner.finish(&mut |o| out.push(o));
    Ok(out)
}

/// A script being run step by step: each output is handed on as it is produced, so a
/// long script needs no more memory than a short one.
pub struct Runner {
    game: Game,
    secrets: Secrets,
    now: Millis,
    last_line: usize,
}

impl Runner {
    /// `first`: the instant of the first step, if any (a script without steps still
    /// shows what its start time did).
    pub fn new(setup: &Setup, first: Option<Millis>) -> Result<Runner, ScriptError> {
        let game = Game::new(setup.clone()).map_err(|e| err(1, format!("setup: {e}")))?;
        Ok(Runner {
            game,
            secrets: Secrets::default(),
            now: first.unwrap_or(setup.start),
            last_line: 1,
        })
    }

    pub fn step(&mut self, step: &Step, out: &mut dyn FnMut(Output)) {
        let game = &mut self.game;
        self.now = step.at;
        self.last_line = step.line;
        let now = self.now;
        for event in game.poll(now) {
            game.evolve(&event);
            out(Output::Event {
                line: step.line,
                event,
            });
        }
        let Some(input) = &step.input else { return };
        let input = self.secrets.fill(game, input, now);
        let decided = match game.decide(&input, now) {
            // I.1.1: a move made on the board after the order to seal is the sealed move.
            // The daemon seals it with a random nonce; the script with its stand-in.
            Err(Rejection::MoveIsTheSealedMove { side, mv }) => {
                seal_board_move(game, &input, side, mv, step.line, now)
            }
            other => other,
        };
        match decided {
            Ok(events) => {
                self.secrets.keep(&input, &events, step.line);
                for event in events {
                    game.evolve(&event);
                    out(Output::Event {
                        line: step.line,
                        event,
                    });
                }
            }
            Err(rejection) => out(Output::Rejected {
                line: step.line,
                at: now,
                input: input.name(),
                reason: rejection.to_string(),
                kind: serde_json::to_value(&rejection).unwrap_or(Value::Null),
            }),
        }
    }

    /// What time did after the last step, and the final state.
    pub fn finish(mut self, out: &mut dyn FnMut(Output)) {
        let now = self.now;
        for event in self.game.poll(now) {
            self.game.evolve(&event);
            out(Output::Event {
                line: self.last_line,
                event,
            });
        }
        let view = serde_json::to_value(self.game.view(now)).unwrap_or(Value::Null);
        let summary = match self.game.result() {
            Some(r) => describe_result(r),
            None => "no result".to_string(),
        };
        out(Output::Final { view, summary });
    }
}

fn render_value(key: &str, v: &Value, date: Millis) -> String {
    match v {
        Value::Number(n)
            if matches!(
                key,
                "at" | "as_of"
                    | "flagged_at"
                    | "next_deadline"
                    | "charged_to"
                    | "start"
                    | "end"
                    | "session_end"
            ) =>
        {
            n.as_i64()
                .map(|t| format_instant(Millis(t), date))
                .unwrap_or_else(|| n.to_string())
        }
        Value::Number(n) if key.ends_with("_ms") => n
            .as_i64()
            .map(|t| Millis(t).to_string())
            .unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        // The envelope is in the JSON output; a readable line names it.
        Value::Object(o) if key == "envelope" => {
            format!("#{}", o.get("number").unwrap_or(&Value::Null))
        }
        Value::Object(o) if key == "verdict" => {
            let field = |k: &str| o.get(k).cloned().unwrap_or(Value::Null);
            match (field("verdict"), field("san"), field("reason")) {
                (Value::String(v), Value::String(san), _) => format!("{v}:{san}"),
                (Value::String(v), _, Value::String(reason)) => format!("{v}:\"{reason}\""),
                (Value::String(v), _, _) => format!("{v}:{}", field("candidates")),
                _ => Value::Object(o.clone()).to_string(),
            }
        }
        other => other.to_string(),
    }
}

impl Output {
    /// One JSON object per line; instants also given as readable times.
    pub fn to_json(&self, date: Millis) -> Value {
        let mut m = Map::new();
        match self {
            Output::Event { line, event } => {
                m.insert("line".into(), (*line).into());
                m.insert("time".into(), format_instant(event.at(), date).into());
                if let Ok(Value::Object(e)) = serde_json::to_value(event) {
                    m.extend(e);
                }
            }
            Output::Rejected {
                line,
                at,
                input,
                reason,
                kind,
            } => {
                m.insert("line".into(), (*line).into());
                m.insert("time".into(), format_instant(*at, date).into());
                m.insert("rejected".into(), (*input).into());
                m.insert("reason".into(), reason.clone().into());
                if let Some(k) = kind.get("rejection") {
                    m.insert("rejection".into(), k.clone());
                }
            }
            Output::Final { view, summary } => {
                m.insert("final".into(), view.clone());
                m.insert("summary".into(), summary.clone().into());
            }
        }
        Value::Object(m)
    }

    /// One readable line: `14:00:00.000  line 3  pressed  side=white remaining_ms=1:29:58.000`.
    pub fn to_text(&self, date: Millis) -> String {
        let fields = |v: &Value, skip: &[&str]| -> String {
            match v {
                Value::Object(o) => o
                    .iter()
                    .filter(|(k, _)| !skip.contains(&k.as_str()))
                    .map(|(k, v)| format!("{k}={}", render_value(k, v, date)))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            }
        };
        match self {
            Output::Event { line, event } => {
                let v = serde_json::to_value(event).unwrap_or(Value::Null);
                let name = v.get("event").and_then(Value::as_str).unwrap_or("?");
                format!(
                    "{}  line {line:<3} {name:<22} {}",
                    format_instant(event.at(), date),
                    fields(&v, &["event", "at"])
                )
            }
            Output::Rejected {
                line,
                at,
                input,
                reason,
                ..
            } => format!(
                "{}  line {line:<3} REJECTED {input}: {reason}",
                format_instant(*at, date)
            ),
            Output::Final { view, summary } => {
                let side = |c: &str| {
                    let s = &view[c];
                    format!(
                        "{c} {} {} moves {} period {}{}",
                        s["name"].as_str().unwrap_or(""),
                        render_value("remaining_ms", &s["display_ms"], date),
                        s["moves"],
                        s["period"],
                        if s["flagged_at"].is_null() {
                            ""
                        } else {
                            " FLAG"
                        }
                    )
                };
                let stage = match view["adjournment"]["stage"].as_str() {
                    Some(stage) => format!(" (adjournment: {stage})"),
                    None => String::new(),
                };
                format!(
                    "final at {}: {}; {} | {}; phase {}{stage}",
                    render_value("as_of", &view["as_of"], date),
                    summary,
                    side("white"),
                    side("black"),
                    view["phase"].as_str().unwrap_or("?"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "line 2: set_time: '5 min' is not a duration: expected milliseconds or [-]H:MM:SS[.mmm] or [-]M:SS[.mmm]"
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
