//! Everything that happens to a game (`Event`): what `decide` and `poll` return, what
//! `evolve` folds, what the journal keeps. `Arrival` lives here, not with `Input`: it is
//! how `PlayerPresent` says a presence became known, and no input carries it.

use serde::{Deserialize, Serialize};

use super::super::adjournment::{AdjournmentRules, Envelope, Opening, Resumption};
use super::super::color::Color;
use super::super::millis::Millis;
use super::GameResult;

/// How a player's presence became known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Arrival {
    Press,
    Arbiter { arbiter: String },
}

/// Everything that happens to a game. Each carries the instant it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// 6.5: at the scheduled start the clock of the side to move (White) starts.
    ClockStarted { at: Millis, side: Color },
    PlayerPresent {
        at: Millis,
        side: Color,
        #[serde(flatten)]
        arrival: Arrival,
    },
    /// 6.6: default time passed with these players absent.
    DefaultTimePassed { at: Millis, absent: Vec<Color> },
    /// A legal move on the board (not yet completed by a press).
    MoveMade {
        at: Millis,
        side: Color,
        uci: String,
        san: String,
        fen: String,
    },
    /// 6.7a: a press completed `side`'s move.
    Pressed {
        at: Millis,
        side: Color,
        /// Main time the whole turn cost, from its start: also across a pause, an
        /// `add_time` or a `set_time` in it.
        charged_ms: Millis,
        /// Fischer increment credited by this press.
        increment_ms: Millis,
        /// Remaining main time after the press, increment included.
        remaining_ms: Millis,
        /// Moves now completed by `side`.
        moves: u32,
    },
    /// 6.2b: `side` entered `period` (1-based) and got its time.
    PeriodAdvanced {
        at: Millis,
        side: Color,
        period: u32,
        added_ms: Millis,
        /// Unused time not carried over (6.2b: delay mode).
        forfeited_ms: Millis,
        remaining_ms: Millis,
    },
    /// 6.3 / 6.8: `side`'s time reached 0:00.
    FlagFell {
        at: Millis,
        side: Color,
        /// 1-based.
        period: u32,
        moves_made: u32,
        /// Moves that had to be completed by the end of this period; `None` in a
        /// period for the rest of the game.
        moves_required: Option<u32>,
        /// Both clocks stopped (freeze after the last flag).
        frozen: bool,
    },
    /// The flag's result waits for the arbiter (claim mode, unknown position, or a 6.9
    /// search that could not decide).
    ResultPending {
        at: Millis,
        side: Color,
        reason: String,
    },
    /// 6.11: both flags down and which fell first cannot be established; play goes on.
    BothFlagsOrderUnknown { at: Millis },
    /// 6.10: a clock shows times that disagree with the reckoning.
    ClockDiscrepancy {
        at: Millis,
        white_ms: Millis,
        black_ms: Millis,
        reckoned_white_ms: Millis,
        reckoned_black_ms: Millis,
    },
    /// Observe mode: the hand-set clock, which is the official time there, shows times
    /// the reckoning cannot explain (a wrong increment, a clock set or stopped by hand):
    /// its times are taken. The reckoned ones are kept so the difference is on record.
    ClockTimesAdopted {
        at: Millis,
        white_ms: Millis,
        black_ms: Millis,
        reckoned_white_ms: Millis,
        reckoned_black_ms: Millis,
    },
    /// 6.10: the arbiter acknowledged the open discrepancy; the official times stand.
    DiscrepancyAcknowledged { at: Millis, arbiter: String },
    /// 6.12b.
    PausedByPlayer { at: Millis, side: Color },
    /// 6.12a.
    Paused {
        at: Millis,
        arbiter: String,
        reason: String,
    },
    /// 6.12c.
    Resumed { at: Millis, arbiter: String },
    /// 6.13.
    TimeSet {
        at: Millis,
        side: Color,
        remaining_ms: Millis,
        previous_ms: Millis,
        arbiter: String,
        reason: String,
    },
    /// 6.13.
    TimeAdded {
        at: Millis,
        side: Color,
        delta_ms: Millis,
        remaining_ms: Millis,
        arbiter: String,
        reason: String,
    },
    /// 6.10.2 / 7.1.
    MovesSet {
        at: Millis,
        side: Color,
        moves: u32,
        /// 1-based.
        period: u32,
        arbiter: String,
        reason: String,
    },
    PositionSet {
        at: Millis,
        fen: String,
        arbiter: String,
        reason: String,
    },
    /// 6.10.
    ClockReplaced {
        at: Millis,
        device: String,
        white_ms: Millis,
        black_ms: Millis,
        arbiter: String,
        reason: String,
    },
    SessionEndSet {
        at: Millis,
        end: Option<Millis>,
        arbiter: String,
    },
    AdjournmentRulesSet {
        at: Millis,
        rules: AdjournmentRules,
        arbiter: String,
    },
    /// I.1.1: `sealer` must seal. `arbiter: None` = the session end (timer `SessionEnd`).
    /// `early`: ordered before the session's nominal end (I.1.2).
    AdjournmentOrdered {
        at: Millis,
        sealer: Color,
        arbiter: Option<String>,
        early: bool,
    },
    ResumptionScheduled {
        at: Millis,
        #[serde(flatten)]
        resumption: Resumption,
        arbiter: String,
    },
    /// I.1.1: a sealed move was written (or replaced). Only its commitment.
    Sealed {
        at: Millis,
        side: Color,
        commitment: String,
        on_board: bool,
    },
    /// I.1.1 / I.1.2 / A1a: the sealer's clock stopped, charged up to `charged_to`
    /// (the nominal session end when adjourned early); both clocks stand still.
    SealCommitted {
        at: Millis,
        side: Color,
        charged_ms: Millis,
        charged_to: Millis,
        increment_ms: Millis,
        remaining_ms: Millis,
        moves: u32,
        arbiter: Option<String>,
        envelope: Box<Envelope>,
    },
    EnvelopeVerified {
        at: Millis,
        envelope: u32,
        arbiter: String,
    },
    DrawOffered {
        at: Millis,
        side: Color,
        arbiter: String,
    },
    /// `side` answered the standing offer.
    DrawOfferAnswered {
        at: Millis,
        side: Color,
        accepted: bool,
        arbiter: String,
    },
    /// I.5 / I.9 / I.11: the resumption session began; the position before the sealed
    /// move and the adjourned times are restored; the responder's clock runs unless the
    /// responder is present (then it starts when the move is played).
    ResumptionStarted {
        at: Millis,
        #[serde(flatten)]
        resumption: Resumption,
        responder: Color,
        white_ms: Millis,
        black_ms: Millis,
        fen: Option<String>,
    },
    /// I.7 / I.8: an envelope was opened; the text and nonce match its commitment.
    EnvelopeOpened {
        at: Millis,
        envelope: u32,
        #[serde(flatten)]
        opening: Opening,
    },
    /// I.9: the sealed move (or, I.12.1, the move the sealer states) is played; the
    /// opponent's clock runs.
    SealedMovePlayed {
        at: Millis,
        side: Color,
        uci: String,
        san: String,
        fen: String,
        /// `None`: stated by the sealer after the envelope was lost (I.12.1).
        envelope: Option<u32>,
    },
    /// I.9.3: the responder sealed the reply; the responder's clock stopped and the
    /// absent sealer's started.
    CounterSealed {
        at: Millis,
        side: Color,
        charged_ms: Millis,
        increment_ms: Millis,
        remaining_ms: Millis,
        moves: u32,
        envelope: Box<Envelope>,
    },
    EnvelopeLost {
        at: Millis,
        envelope: u32,
        arbiter: String,
        reason: String,
    },
    /// I.13.
    TimeCorrected {
        at: Millis,
        side: Color,
        remaining_ms: Millis,
        previous_ms: Millis,
        arbiter: String,
        reason: String,
    },
    /// I.10: default time passed while an envelope is unopened; whether the sealed move
    /// ended the game decides, so the result waits for the opening (`open_envelope`).
    ResultAwaitsEnvelope {
        at: Millis,
        absent: Vec<Color>,
        envelope: u32,
    },
    GameEnded {
        at: Millis,
        #[serde(flatten)]
        result: GameResult,
        /// The result this one replaces, when the arbiter overrules an earlier one.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        replaces: Option<GameResult>,
        /// The arbiter who confirmed the flag (6.8, `confirm_flag`): a flag result says
        /// whose decision it was as an arbiter's result does. Not `arbiter`: an arbiter's
        /// result (`termination: arbiter`) has that field already, flattened beside this.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        confirmed_by: Option<String>,
    },
}

impl Event {
    pub fn at(&self) -> Millis {
        match self {
            Event::ClockStarted { at, .. }
            | Event::PlayerPresent { at, .. }
            | Event::DefaultTimePassed { at, .. }
            | Event::MoveMade { at, .. }
            | Event::Pressed { at, .. }
            | Event::PeriodAdvanced { at, .. }
            | Event::FlagFell { at, .. }
            | Event::ResultPending { at, .. }
            | Event::BothFlagsOrderUnknown { at }
            | Event::ClockDiscrepancy { at, .. }
            | Event::ClockTimesAdopted { at, .. }
            | Event::DiscrepancyAcknowledged { at, .. }
            | Event::PausedByPlayer { at, .. }
            | Event::Paused { at, .. }
            | Event::Resumed { at, .. }
            | Event::TimeSet { at, .. }
            | Event::TimeAdded { at, .. }
            | Event::MovesSet { at, .. }
            | Event::PositionSet { at, .. }
            | Event::ClockReplaced { at, .. }
            | Event::SessionEndSet { at, .. }
            | Event::AdjournmentRulesSet { at, .. }
            | Event::AdjournmentOrdered { at, .. }
            | Event::ResumptionScheduled { at, .. }
            | Event::Sealed { at, .. }
            | Event::SealCommitted { at, .. }
            | Event::EnvelopeVerified { at, .. }
            | Event::DrawOffered { at, .. }
            | Event::DrawOfferAnswered { at, .. }
            | Event::ResumptionStarted { at, .. }
            | Event::EnvelopeOpened { at, .. }
            | Event::SealedMovePlayed { at, .. }
            | Event::CounterSealed { at, .. }
            | Event::EnvelopeLost { at, .. }
            | Event::TimeCorrected { at, .. }
            | Event::ResultAwaitsEnvelope { at, .. }
            | Event::GameEnded { at, .. } => *at,
        }
    }
}
