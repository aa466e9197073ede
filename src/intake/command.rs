//! Arbiter commands arriving on `set` topics: JSON turned into typed values once, at the
//! edge, with a reason a person can act on when it is wrong.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::json::StrictError;
use super::refusal::Refusal;
pub use super::refusal::{InstantOutOfRange, NeedsSide, PastStart};
use crate::rules::adjournment::{AdjournmentRules, Resumption};
use crate::rules::game::{ArbiterResult, BothAbsent, FlagMode, Score};
use crate::rules::millis::parse_instant;
use crate::rules::time_control::TimeControl;
use crate::rules::{Color, Millis};

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
        /// A start (`resumption.start`) more than the hall's grace in the past is refused
        /// (`past_start`) unless this says the arbiter means it: every clock would start
        /// already run down by the time since.
        #[serde(default)]
        allow_past_start: bool,
    },
    /// I.2.7, I.14: date, time and place of the resumption.
    ScheduleResumption {
        resumption: ResumptionSpec,
        /// A start (`resumption.start`) more than the hall's grace in the past is refused
        /// (`past_start`) unless this says the arbiter means it: every clock would start
        /// already run down by the time since.
        #[serde(default)]
        allow_past_start: bool,
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
        alert: crate::alert::AlertKind,
    },
    /// Issue 24: drive the board's clock (`control`) or only read a hand-set one
    /// (`observe`); between games only.
    SetMode {
        mode: crate::mode::BoardMode,
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
            BoardAction::SetMode { .. } => "set_mode",
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
    pub fn to_result(self, side: Option<Color>) -> Result<ArbiterResult, NeedsSide> {
        let need = |what: &'static str| side.ok_or(NeedsSide(what));
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
        #[serde(default)]
        pairings: Vec<Pairing>,
        /// A Tournament Report File's text: the round's pairings come from it, in board
        /// order (docs/TOURNAMENT-DATA.md), instead of `pairings`.
        #[serde(default)]
        trf: Option<String>,
        /// With `trf`: the arbiter's board order, one starting rank per board (the rest
        /// follow in the usual order).
        #[serde(default)]
        board_order: Option<Vec<u32>>,
        /// With `trf`: start only the games on this hall's tournament boards.
        #[serde(default)]
        only_our_boards: bool,
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
        /// The round's piece letters (`en`, `es`), instead of `[defaults] piece_letters`:
        /// sealed moves are read in them and the page shows moves in them.
        #[serde(default)]
        piece_letters: Option<crate::rules::adjournment::NotationLanguage>,
        /// I.1.1: the session's nominal end; every unfinished game is ordered to seal then.
        #[serde(default)]
        session_end: Option<Instant>,
        /// The broadcast feed's delay for this round (0 to 60 min), instead of the
        /// event's `[broadcast] delay_minutes`.
        #[serde(default)]
        broadcast_delay_minutes: Option<u32>,
        /// The PGN's `Event` for this round's games, instead of its TRF's name (012) or
        /// the configuration's `[broadcast] event`.
        #[serde(default)]
        event: Option<String>,
        /// The PGN's `Site`, likewise (TRF tag 022, `[broadcast] site`).
        #[serde(default)]
        site: Option<String>,
        /// A `start` more than the hall's grace in the past is refused (`past_start`)
        /// unless this says the arbiter means it: every White would start down by the
        /// time since (6.5 counts from the scheduled start).
        #[serde(default)]
        allow_past_start: bool,
    },
    /// I.1.1: adjourn every running game now ("seal all").
    SealAll {
        #[serde(default)]
        resumption: Option<ResumptionSpec>,
        /// A start (`resumption.start`) more than the hall's grace in the past is refused
        /// (`past_start`) unless this says the arbiter means it: every clock would start
        /// already run down by the time since.
        #[serde(default)]
        allow_past_start: bool,
    },
    /// I.14: the resumption session of every adjourned game.
    ScheduleResumption {
        resumption: ResumptionSpec,
        /// A start (`resumption.start`) more than the hall's grace in the past is refused
        /// (`past_start`) unless this says the arbiter means it: every clock would start
        /// already run down by the time since.
        #[serde(default)]
        allow_past_start: bool,
    },
    /// A message on every hall screen until `until` (docs/DASHBOARD.md, "Hall screens");
    /// `text` null (or absent) takes the standing one down.
    Announce {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        until: Option<Instant>,
    },
    /// 6.12a for every board with a running game.
    Pause {},
    Resume {},
    /// Send `board`'s journaled events from `from_seq` on to the asker, on
    /// `reply/<reply_to>`, so a dashboard that was away can fill its gap without every
    /// other subscriber seeing `seq` jump back on the live `event` topic.
    Replay {
        board: String,
        #[serde(default)]
        from_seq: u64,
        reply_to: String,
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
            HallAction::Announce { .. } => "announce",
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
    /// The players' FIDE titles (`GM`, `WIM`: 1 to 4 letters) and ratings (0 to 4000),
    /// shown on the hall screens.
    #[serde(default)]
    pub white_title: Option<String>,
    #[serde(default)]
    pub black_title: Option<String>,
    #[serde(default)]
    pub white_rating: Option<u32>,
    #[serde(default)]
    pub black_rating: Option<u32>,
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
    pub kind: BadKind,
}

/// Why a command could not be understood; each is its own refusal code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKind {
    /// Not JSON, not an object, a field missing or of the wrong type (`bad_command`).
    Malformed,
    /// Over [`MAX_COMMAND_BYTES`] (`too_large`).
    TooLarge,
    /// A key given twice in one object (`duplicate_key`).
    DuplicateKey,
}

impl BadCommand {
    /// The refusal the response carries.
    pub fn refusal(&self) -> Refusal {
        let reason = self.reason.clone();
        match self.kind {
            BadKind::Malformed => Refusal::BadCommand(reason),
            BadKind::TooLarge => Refusal::TooLarge(reason),
            BadKind::DuplicateKey => Refusal::DuplicateKey(reason),
        }
    }
}

/// The largest command accepted, in bytes. A 1000-board `start_round` with names and FIDE
/// ids is about 140 KB (docs/MQTT-API.md), so this leaves room for seven times that.
pub const MAX_COMMAND_BYTES: usize = 1 << 20;

/// The answer to a payload over [`MAX_COMMAND_BYTES`]: nothing of it is parsed but its
/// `transaction`, when that comes before anything malformed.
pub fn too_large(payload: &[u8]) -> BadCommand {
    BadCommand {
        transaction: peek_transaction(payload),
        action: String::new(),
        reason: format!(
            "the command is {} bytes; the limit is {MAX_COMMAND_BYTES} bytes (1 MiB)",
            payload.len()
        ),
        kind: BadKind::TooLarge,
    }
}

/// The top-level `"transaction"` string of a JSON object, read without building the rest:
/// the scan stops at that key, so a huge command costs only what precedes it.
pub fn peek_transaction(payload: &[u8]) -> String {
    struct Peek<'a>(&'a mut Option<String>);
    impl<'de> serde::de::Visitor<'de> for Peek<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "transaction" {
                    if let Ok(t) = map.next_value::<String>() {
                        *self.0 = Some(t);
                    }
                    // Stop here: the error serde_json gives for the unread rest is ignored.
                    return Err(serde::de::Error::custom("found"));
                }
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(payload);
    let _ = serde::Deserializer::deserialize_map(&mut de, Peek(&mut found));
    found.unwrap_or_default()
}

/// A client's text made safe for one log line: control characters (newlines, ANSI
/// escapes) and backslashes escaped, so a command cannot forge or colour log lines.
pub fn log_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // U+2028/2029 end lines in some log viewers.
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)))
            }
            c => out.push(c),
        }
    }
    out
}

/// How far from now a command's instants may be: a round starts today or in the coming
/// days, a resumption within a week or two; anything else is a typo or an attack on the
/// arithmetic (2^63-1 ms is the year 292278994).
pub const INSTANTS_BACK: Millis = Millis(86_400_000);
pub const INSTANTS_AHEAD: Millis = Millis(14 * 86_400_000);

/// `Err` naming the first instant outside [`now - INSTANTS_BACK`, `now + INSTANTS_AHEAD`]
/// and the allowed range.
pub fn check_instants(
    instants: &[(&'static str, Instant)],
    now: Millis,
) -> Result<(), InstantOutOfRange> {
    let (from, to) = (
        Millis(now.0.saturating_sub(INSTANTS_BACK.0)),
        Millis(now.0.saturating_add(INSTANTS_AHEAD.0)),
    );
    for (key, at) in instants {
        if at.0 < from || at.0 > to {
            return Err(InstantOutOfRange {
                key,
                at: at.0,
                from,
                to,
            });
        }
    }
    Ok(())
}

impl HallAction {
    /// The instants this command names, with their keys, for [`check_instants`].
    pub fn instants(&self) -> Vec<(&'static str, Instant)> {
        let mut out = Vec::new();
        match self {
            HallAction::StartRound {
                start, session_end, ..
            } => {
                out.push(("start", *start));
                out.extend(session_end.map(|e| ("session_end", e)));
            }
            HallAction::SealAll {
                resumption: Some(r),
                ..
            }
            | HallAction::ScheduleResumption { resumption: r, .. } => r.instants(&mut out),
            HallAction::Announce { until: Some(u), .. } => out.push(("until", *u)),
            _ => {}
        }
        out
    }
}

impl BoardAction {
    /// The instants this command names, with their keys, for [`check_instants`].
    pub fn instants(&self) -> Vec<(&'static str, Instant)> {
        let mut out = Vec::new();
        match self {
            BoardAction::SetSessionEnd { end: Some(e) } => out.push(("end", *e)),
            BoardAction::Adjourn {
                resumption: Some(r),
                ..
            }
            | BoardAction::ScheduleResumption { resumption: r, .. } => r.instants(&mut out),
            _ => {}
        }
        out
    }
}

impl HallAction {
    /// The start this command schedules that must not lie in the past unseen (6.5: a
    /// round's clocks count from it; I.14: so do a resumption's), unless the command
    /// says `allow_past_start`.
    pub fn start_to_check(&self) -> Option<(&'static str, Instant)> {
        match self {
            HallAction::StartRound {
                start,
                allow_past_start: false,
                ..
            } => Some(("start", *start)),
            HallAction::SealAll {
                resumption: Some(r),
                allow_past_start: false,
            }
            | HallAction::ScheduleResumption {
                resumption: r,
                allow_past_start: false,
            } => Some(("resumption.start", r.start)),
            _ => None,
        }
    }
}

impl BoardAction {
    /// As [`HallAction::start_to_check`]: a resumption's start.
    pub fn start_to_check(&self) -> Option<(&'static str, Instant)> {
        match self {
            BoardAction::Adjourn {
                resumption: Some(r),
                allow_past_start: false,
            }
            | BoardAction::ScheduleResumption {
                resumption: r,
                allow_past_start: false,
            } => Some(("resumption.start", r.start)),
            _ => None,
        }
    }
}

/// How far in the past a start may be without `allow_past_start`: a start of "now" sent
/// from a form takes some milliseconds to arrive, and a round typed minutes ago does not.
pub const DEFAULT_PAST_START_GRACE: Millis = Millis(10_000);

/// `Err` when `start` lies more than `grace` before `now` (both civil time).
pub fn check_past_start(
    start: Option<(&'static str, Instant)>,
    now: Millis,
    grace: Millis,
) -> Result<(), PastStart> {
    match start {
        Some((key, at)) if at.0.0 < now.0.saturating_sub(grace.0) => Err(PastStart {
            key,
            at: at.0,
            now,
            grace,
        }),
        _ => Ok(()),
    }
}

impl HallAction {
    /// Every instant this command names, mapped by `f` (civil time to game time).
    pub fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis) {
        match self {
            HallAction::StartRound {
                start, session_end, ..
            } => {
                start.0 = f(start.0);
                if let Some(e) = session_end {
                    e.0 = f(e.0);
                }
            }
            HallAction::SealAll {
                resumption: Some(r),
                ..
            }
            | HallAction::ScheduleResumption { resumption: r, .. } => r.map_instants(f),
            // The hall screens read an announcement's end on the civil clock they show:
            // it stays as sent.
            HallAction::Announce { .. } => {}
            _ => {}
        }
    }
}

impl BoardAction {
    /// Every instant this command names, mapped by `f` (civil time to game time).
    pub fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis) {
        match self {
            BoardAction::SetSessionEnd { end: Some(e) } => e.0 = f(e.0),
            BoardAction::Adjourn {
                resumption: Some(r),
                ..
            }
            | BoardAction::ScheduleResumption { resumption: r, .. } => r.map_instants(f),
            _ => {}
        }
    }
}

impl ResumptionSpec {
    fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis) {
        self.start.0 = f(self.start.0);
        if let Some(e) = &mut self.end {
            e.0 = f(e.0);
        }
    }

    fn instants(&self, out: &mut Vec<(&'static str, Instant)>) {
        out.push(("resumption.start", self.start));
        out.extend(self.end.map(|e| ("resumption.end", e)));
    }
}

/// A command's common field (`transaction`, `arbiter`, `reason`) that is not a string.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("\"{key}\" must be a string, not {found}")]
struct NotAString {
    key: &'static str,
    found: Value,
}

fn take_string(
    obj: &mut Map<String, Value>,
    key: &'static str,
) -> Result<Option<String>, NotAString> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(found) => Err(NotAString { key, found }),
    }
}

/// Parse a command payload (`commands = "open"`: the arbiter is whoever the payload says).
pub fn parse<A: for<'de> Deserialize<'de>>(payload: &[u8]) -> Result<Command<A>, BadCommand> {
    parse_as(payload, None)
}

/// Parse a command whose sender is proven (`signer`: the account's id and name). The
/// name is recorded as the arbiter; a payload's own `arbiter`, if any, must be the signer.
/// `ts` was checked with the signature and is not part of the action.
pub fn parse_as<A: for<'de> Deserialize<'de>>(
    payload: &[u8],
    signer: Option<(&str, &str)>,
) -> Result<Command<A>, BadCommand> {
    let bad = |transaction: &str, action: &str, reason: String| BadCommand {
        transaction: transaction.to_string(),
        action: action.to_string(),
        reason,
        kind: BadKind::Malformed,
    };
    if payload.len() > MAX_COMMAND_BYTES {
        return Err(too_large(payload));
    }
    let value = match super::json::read(payload) {
        Ok(v) => v,
        Err(e @ StrictError::Duplicate { .. }) => {
            // Which command it was, for the response: serde's lenient reading (the last
            // of the two keys) is good enough to echo the transaction and the action.
            let lenient: Value = serde_json::from_slice(payload).unwrap_or_default();
            let transaction = lenient
                .get("transaction")
                .and_then(Value::as_str)
                .unwrap_or("");
            let action = lenient.get("action").and_then(Value::as_str).unwrap_or("");
            return Err(BadCommand {
                kind: BadKind::DuplicateKey,
                ..bad(transaction, action, e.to_string())
            });
        }
        Err(StrictError::Syntax(e)) => return Err(bad("", "", format!("not JSON: {e}"))),
    };
    let Value::Object(mut obj) = value else {
        return Err(bad("", "", "expected a JSON object".into()));
    };
    let transaction = take_string(&mut obj, "transaction")
        .map_err(|e| bad("", "", e.to_string()))?
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
    let given =
        take_string(&mut obj, "arbiter").map_err(|e| bad(&transaction, &action, e.to_string()))?;
    let arbiter = match (signer, given) {
        (None, given) => given.unwrap_or_default(),
        (Some((_, name)), None) => name.to_string(),
        (Some((id, name)), Some(given)) if given == id || given == name => name.to_string(),
        (Some((id, _)), Some(given)) => {
            return Err(bad(
                &transaction,
                &action,
                format!(
                    "\"arbiter\": {given:?} is not the signer '{id}' (leave it out: the signer is recorded)"
                ),
            ));
        }
    };
    // When it was signed: checked with the signature, not part of the action.
    obj.remove("ts");
    if arbiter.trim().is_empty() {
        return Err(bad(
            &transaction,
            &action,
            "missing \"arbiter\": who gives this command".into(),
        ));
    }
    let reason = take_string(&mut obj, "reason")
        .map_err(|e| bad(&transaction, &action, e.to_string()))?
        .unwrap_or_default();
    if action.is_empty() {
        return Err(bad(&transaction, "", "missing \"action\"".into()));
    }
    // `null` counts as absent (MQTT-API.md, docs/asyncapi.yaml): for every field, not
    // only those read as an Option (`"allow_past_start": null` is `false`, as when left
    // out); a required field sent as `null` is missing.
    obj.retain(|_, v| !v.is_null());
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
mod tests;
