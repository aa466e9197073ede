//! What comes into a game from outside the core (`Input`), and who each input is from
//! (`Who`), which decides what `Game::decide_now` checks before the act itself.

use serde::{Deserialize, Serialize};

use super::super::adjournment::{AdjournmentRules, Resumption};
use super::super::color::Color;
use super::super::millis::Millis;
use super::ArbiterResult;

/// A fact from outside the core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// The arbiter records a player present (6.6).
    Present { side: Color, arbiter: String },
    /// A move made on the board, not yet completed by a press (6.7a). A move that ends
    /// the game (mate, stalemate, dead position) ends it here.
    Move { mv: String },
    /// A lever press: completes the move (6.7a). `side`, when given, must be the side
    /// whose clock runs; `mv`, when given, is the move it completes (SAN or UCI).
    Press {
        side: Option<Color>,
        mv: Option<String>,
    },
    /// 6.12b: a player stopped the clocks to summon the arbiter.
    PlayerPause { side: Option<Color> },
    /// 6.12a.
    Pause { arbiter: String, reason: String },
    /// 6.12c: only the arbiter restarts.
    Resume { arbiter: String },
    /// 6.13 / 7.5: set a side's remaining time.
    SetTime {
        side: Color,
        remaining: Millis,
        arbiter: String,
        reason: String,
    },
    /// 6.13 / 7.5 / 12.9: add (or, negative, subtract) time.
    AddTime {
        side: Color,
        delta: Millis,
        arbiter: String,
        reason: String,
    },
    /// 6.10.2 / 7.1: set the move counter, and the period (derived from it when absent;
    /// 1-based when given).
    SetMoves {
        side: Color,
        moves: u32,
        period: Option<u32>,
        arbiter: String,
        reason: String,
    },
    /// The position, for clock-only boards or after an irregularity (7.1).
    SetPosition {
        fen: String,
        arbiter: String,
        reason: String,
    },
    /// 6.10: the game continues on another device, with times set by the arbiter
    /// (unchanged when omitted).
    ReplaceClock {
        device: String,
        white: Option<Millis>,
        black: Option<Millis>,
        arbiter: String,
        reason: String,
    },
    /// 6.8 in claim mode, or after a flag whose 6.9 verdict was pending.
    ConfirmFlag { arbiter: String },
    SetResult {
        result: ArbiterResult,
        arbiter: String,
        reason: String,
    },
    /// What a hardware clock shows; compared with the reckoning (6.10), and the evidence
    /// when both flags fell without a known order (6.11).
    ClockReading { white: Millis, black: Millis },
    /// Observe mode: what a hand-set clock shows, in whole seconds as displayed. The
    /// clock is the official time there, so a side whose reckoning is outside what the
    /// display can mean is set to it (`ClockTimesAdopted`); a flagged side keeps its flag.
    ClockTimes { white: Millis, black: Millis },
    /// 6.10: the arbiter has seen the open clock discrepancy and keeps the official
    /// times as they are (`set_time` and the other corrections also close it).
    AcknowledgeDiscrepancy { arbiter: String },
    /// The nominal end of the playing session (I.1.1, I.1.2): at that instant the core
    /// orders the player to move to seal (timer `SessionEnd`). `None` clears it.
    SetSessionEnd {
        end: Option<Millis>,
        arbiter: String,
    },
    /// The event's adjournment rules (edition, notation language, default time at
    /// resumption); fixed before the game is adjourned.
    SetAdjournmentRules {
        rules: AdjournmentRules,
        arbiter: String,
    },
    /// I.1.1: the arbiter orders this game adjourned; the player to move must seal.
    Adjourn {
        arbiter: String,
        resumption: Option<Resumption>,
    },
    /// I.2.7, I.14: date, time and place of the resumption session.
    ScheduleResumption {
        resumption: Resumption,
        arbiter: String,
    },
    /// I.1.1: the sealer writes the move. `mv` is the text as written and `nonce` fresh
    /// random bytes (hex, 16 to 64 bytes) from the shell; only their commitment enters
    /// the events. Replaceable until the commit, unless `on_board` (the move was made on
    /// the board after the order: it is the sealed move).
    Seal {
        side: Option<Color>,
        mv: String,
        nonce: String,
        on_board: bool,
    },
    /// I.1.1 / A1a: the sealer stops the clock (`arbiter: None`) or the arbiter does;
    /// the sealed move is committed and both clocks stand still.
    CommitSeal { arbiter: Option<String> },
    /// I.3: the arbiter checked the envelope.
    VerifyEnvelope { arbiter: String },
    /// 9.1 / I.4: a draw offer, recorded.
    DrawOffer { side: Color, arbiter: String },
    /// 9.1 / I.4 / I.6: the answer to the standing offer.
    DrawReply { accept: bool, arbiter: String },
    /// I.7 / I.9 / I.9.3: open the envelope waiting to be opened, with the move text and
    /// nonce the shell kept; checked against the commitment.
    OpenEnvelope {
        mv: String,
        nonce: String,
        arbiter: String,
    },
    /// I.9.3: the responder, with the sealer absent, seals the reply instead of playing it.
    CounterSeal { mv: String, nonce: String },
    /// I.12.1: the envelope is lost; the sealer states the move and makes it on the board.
    EnvelopeLost { arbiter: String, reason: String },
    /// I.13: a clock time shown wrong at resumption, before the first move, is corrected.
    CorrectTime {
        side: Color,
        remaining: Millis,
        arbiter: String,
        reason: String,
    },
}

/// Who acts, and so what is checked before an act is decided: once, for the whole group
/// (`Game::decide_now`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Who<'a> {
    /// A player at the board (or the board for them): each act checks the phase itself.
    Player,
    /// What a device reports.
    Device,
    /// An arbiter's decision in a game not over: a named arbiter, then the result.
    Arbiter(&'a str),
    /// An arbiter's correction (6.13, 7.5, I.12, I.13): a named arbiter, a reason, and a
    /// game not over.
    Correction {
        arbiter: &'a str,
        reason: &'a str,
        what: &'static str,
    },
    /// An arbiter's act that also stands after the game (a result, an acknowledgement, a
    /// check of the envelope): a named arbiter only.
    Record(&'a str),
}

impl Input {
    pub(super) fn actor(&self) -> Who<'_> {
        use Input as I;
        let what = self.name();
        match self {
            I::Move { .. }
            | I::Press { .. }
            | I::PlayerPause { .. }
            | I::Seal { .. }
            | I::CommitSeal { .. }
            | I::CounterSeal { .. } => Who::Player,
            I::ClockReading { .. } | I::ClockTimes { .. } => Who::Device,
            I::Present { arbiter, .. }
            | I::Pause { arbiter, .. }
            | I::Resume { arbiter }
            | I::ConfirmFlag { arbiter }
            | I::SetSessionEnd { arbiter, .. }
            | I::SetAdjournmentRules { arbiter, .. }
            | I::Adjourn { arbiter, .. }
            | I::ScheduleResumption { arbiter, .. }
            | I::DrawOffer { arbiter, .. }
            | I::DrawReply { arbiter, .. }
            | I::OpenEnvelope { arbiter, .. } => Who::Arbiter(arbiter),
            I::SetTime {
                arbiter, reason, ..
            }
            | I::AddTime {
                arbiter, reason, ..
            }
            | I::SetMoves {
                arbiter, reason, ..
            }
            | I::SetPosition {
                arbiter, reason, ..
            }
            | I::ReplaceClock {
                arbiter, reason, ..
            }
            | I::EnvelopeLost { arbiter, reason }
            | I::CorrectTime {
                arbiter, reason, ..
            } => Who::Correction {
                arbiter,
                reason,
                what,
            },
            I::SetResult { arbiter, .. }
            | I::AcknowledgeDiscrepancy { arbiter }
            | I::VerifyEnvelope { arbiter } => Who::Record(arbiter),
        }
    }
}

impl Input {
    pub fn name(&self) -> &'static str {
        match self {
            Input::Present { .. } => "present",
            Input::Move { .. } => "move",
            Input::Press { .. } => "press",
            Input::PlayerPause { .. } => "player_pause",
            Input::Pause { .. } => "pause",
            Input::Resume { .. } => "resume",
            Input::SetTime { .. } => "set_time",
            Input::AddTime { .. } => "add_time",
            Input::SetMoves { .. } => "set_moves",
            Input::SetPosition { .. } => "set_position",
            Input::ReplaceClock { .. } => "replace_clock",
            Input::ConfirmFlag { .. } => "confirm_flag",
            Input::SetResult { .. } => "set_result",
            Input::ClockReading { .. } => "clock_reading",
            Input::ClockTimes { .. } => "clock_times",
            Input::AcknowledgeDiscrepancy { .. } => "acknowledge_discrepancy",
            Input::SetSessionEnd { .. } => "set_session_end",
            Input::SetAdjournmentRules { .. } => "set_adjournment_rules",
            Input::Adjourn { .. } => "adjourn",
            Input::ScheduleResumption { .. } => "schedule_resumption",
            Input::Seal { .. } => "seal",
            Input::CommitSeal { .. } => "commit_seal",
            Input::VerifyEnvelope { .. } => "verify_envelope",
            Input::DrawOffer { .. } => "draw_offer",
            Input::DrawReply { .. } => "draw_reply",
            Input::OpenEnvelope { .. } => "open_envelope",
            Input::CounterSeal { .. } => "counter_seal",
            Input::EnvelopeLost { .. } => "envelope_lost",
            Input::CorrectTime { .. } => "correct_time",
        }
    }
}
