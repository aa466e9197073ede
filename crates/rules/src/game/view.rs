//! What a game shows at an instant (`View` and its parts), for displays and dashboards
//! (6.14: not evidence). Serialised as it is by the shell, so its shape is the published
//! state's.

use serde::{Deserialize, Serialize};

use super::super::adjournment::{AdjournmentRules, DrawOffer, Envelope, Resumption, Stage};
use super::super::color::Color;
use super::super::millis::Millis;
use super::super::time_control::DelayDisplay;
use super::{Game, GameResult, Phase, fen_of, period_number};

/// A flag whose result waits for the arbiter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingFlag {
    pub side: Color,
    pub at: Millis,
    pub reason: String,
    /// Why it waits, as a code a page says in its own words (issue 39): `claim` (claim
    /// mode, 6.8), `position_unknown`, or `undecided` (the 6.9 search gave up; `reason`
    /// says why). Absent in states written before codes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code: String,
}

/// The code of a pending flag's reason: the core's three forms of it (`Game::flag_fell`,
/// `Game::flag_verdict_on`), which the journal keeps as words.
pub fn pending_code(reason: &str) -> &'static str {
    if reason.starts_with("claim mode") {
        "claim"
    } else if reason.ends_with("the position is not known") {
        "position_unknown"
    } else {
        "undecided"
    }
}

/// The serialisable view of a game at an instant, for displays and dashboards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct View {
    pub as_of: Millis,
    #[serde(flatten)]
    pub phase: Phase,
    /// The side whose clock runs now, if any.
    pub running: Option<Color>,
    /// Whose turn it is on the clock.
    pub turn: Color,
    pub white: SideView,
    pub black: SideView,
    /// The position on the board. While presses wait for their moves (6.7a with an
    /// e-board: the lever frame came before the board's scan), this is the position before
    /// the first owed move, the last one known, and `move_pending` says so: displays keep
    /// showing a board rather than nothing. `None` only when the position is not known at
    /// all (a clock-only board, or more presses than moves the board can owe).
    pub fen: Option<String>,
    /// Presses came before the board showed their moves: `fen` is the position before them.
    pub move_pending: bool,
    /// The side whose move is owed first (the side to move in `fen`), while one is.
    pub pending_side: Option<Color>,
    /// How many presses wait for their moves (0 when none; at most `MAX_OWED_PLIES`).
    pub pending_plies: u8,
    pub result: Option<GameResult>,
    pub pending_flag: Option<PendingFlag>,
    pub both_flags_order_unknown: bool,
    pub next_deadline: Option<Millis>,
    /// 6.14: displays are not evidence; claims go through the arbiter.
    pub authoritative: bool,
    /// 9.1 / I.4: the standing draw offer.
    pub draw_offer: Option<DrawOffer>,
    /// The nominal end of the current session, when known (I.1.2, I.14).
    pub session_end: Option<Millis>,
    /// Guidelines I: where the game is in sealing and resumption, and its envelopes
    /// (never a sealed move before its opening). `None` for a game never adjourned.
    pub adjournment: Option<AdjournmentView>,
    /// The game's piece letters (the event's, or what the arbiter set): sealed moves
    /// are read in them, and displays show moves in them.
    pub piece_letters: crate::adjournment::NotationLanguage,
}

/// The adjournment part of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdjournmentView {
    pub stage: Stage,
    pub sealer: Option<Color>,
    /// A sealed move has been written and not yet committed (I.1.1).
    pub sealed: bool,
    pub resumption: Option<Resumption>,
    pub envelopes: Vec<Envelope>,
    /// I.10: default time passed and the result waits for the envelope's opening.
    pub result_awaits_envelope: bool,
    /// I.13: a time correction is still accepted without further ado.
    pub correction_window: bool,
    pub rules: AdjournmentRules,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SideView {
    pub name: String,
    /// The title and rating the pairing gave (shown, never ruled on).
    pub info: super::setup::PlayerInfo,
    pub remaining_ms: Millis,
    /// What the clock face shows (main time; plus the unused delay in Bronstein mode).
    pub display_ms: Millis,
    pub delay_left_ms: Millis,
    pub moves: u32,
    /// 1-based.
    pub period: u32,
    pub flagged_at: Option<Millis>,
    pub present: bool,
}

impl Game {
    /// The view at `now`.
    pub fn view(&self, now: Millis) -> View {
        let side_view = |c: Color| {
            let s = self.clock.side(c);
            let remaining = self.clock.remaining_at(c, now);
            let delay_left = if self.clock.turn == c {
                self.clock.delay_left_at(now)
            } else {
                Millis::ZERO
            };
            let display = match self.setup.clock.delay_display {
                DelayDisplay::Countdown => remaining,
                DelayDisplay::Bronstein => remaining + delay_left,
            };
            SideView {
                name: match c {
                    Color::White => self.setup.white.clone(),
                    Color::Black => self.setup.black.clone(),
                },
                info: match c {
                    Color::White => self.setup.white_info.clone(),
                    Color::Black => self.setup.black_info.clone(),
                },
                remaining_ms: remaining,
                display_ms: display,
                delay_left_ms: delay_left,
                moves: s.moves,
                period: period_number(s.period),
                flagged_at: s.flagged_at,
                present: *self.present.get(c),
            }
        };
        View {
            as_of: now,
            phase: self.phase.clone(),
            running: self.clock.running(),
            turn: self.clock.turn,
            white: side_view(Color::White),
            black: side_view(Color::Black),
            fen: self
                .position
                .as_ref()
                .or(self.owed.as_ref().map(|o| &o.position))
                .map(fen_of),
            move_pending: self.owed.is_some(),
            pending_side: self.move_owed(),
            pending_plies: self.owed.as_ref().map_or(0, |o| o.plies),
            result: self.result.clone(),
            pending_flag: self.pending_flag.clone(),
            both_flags_order_unknown: self.both_flags_order_unknown,
            next_deadline: self.next_deadline(),
            authoritative: false,
            draw_offer: self.adj.draw_offer.clone(),
            session_end: self.adj.session_end,
            adjournment: self.adjournment_view(),
            piece_letters: self.adj.rules.notation_language,
        }
    }
}
