//! What the clock shows: for each of the core's events, whether the clock is programmed
//! again and with which short text, and the program itself (the official times, which
//! side runs). Sans-IO: values in, the clock commands out; the actor sends them.

use std::time::Duration;

use crate::link::{LinkCommand, RunSide};
use crate::rules::Color;
use crate::rules::game::{Event, PausedBy, Phase, Score, View};
use crate::rules::placement::{Placement, Side};

/// What the clock shows when the lever is the wrong way round at a new game: the arbiter
/// turns it over while the clocks stand (before the start, or after `pause`). Until then
/// a press still counts for the player to move.
pub const LEVER_TEXT: &str = "LEVER";

/// How the lever is looked at after a batch of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Realign {
    #[default]
    No,
    /// A game starts again on another clock: a reversed lever says `LEVER`.
    Shown,
    /// At resumption: remembered only, the restored times must stay readable.
    Quiet,
}

/// What a batch of events asks of the display, folded event by event ([`Display::after`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Display {
    /// Program the clock again with the official times.
    pub reprogram: bool,
    /// The short text to show after the times, if any.
    pub text: Option<&'static str>,
    /// The e-board's move reader starts from the game's position again.
    pub new_position: bool,
    pub realign: Realign,
}

impl Display {
    /// Fold one event in: a later event's text replaces an earlier one's.
    pub fn after(&mut self, event: &Event) {
        match event {
            Event::PlayerPresent { .. }
            | Event::MoveMade { .. }
            | Event::Sealed { .. }
            | Event::EnvelopeVerified { .. }
            | Event::DrawOffered { .. }
            | Event::DrawOfferAnswered { .. }
            | Event::ResumptionScheduled { .. }
            | Event::SessionEndSet { .. }
            | Event::AdjournmentRulesSet { .. }
            | Event::EnvelopeOpened { .. }
            | Event::ClockDiscrepancy { .. }
            | Event::DiscrepancyAcknowledged { .. }
            | Event::PositionSet { .. } => {}
            // A1a: both clocks stand still until the resumption; the clock says why.
            Event::SealCommitted { .. } => {
                self.reprogram = true;
                self.text = Some("SEALED");
            }
            // The move reader follows the core: the position before the sealed move at
            // resumption, then the position after it once it is played (the arbiter makes
            // it on the board, I.9.1).
            Event::ResumptionStarted { .. } | Event::SealedMovePlayed { .. } => {
                self.reprogram = true;
                self.text = None;
                self.new_position = true;
                self.realign = Realign::Quiet;
            }
            Event::ClockReplaced { .. } => {
                self.reprogram = true;
                self.realign = Realign::Shown;
            }
            Event::ResultPending { .. } => self.text = Some("ARBITER"),
            Event::PausedByPlayer { .. } | Event::Paused { .. } => {
                self.reprogram = true;
                self.text = Some("PAUSE");
            }
            Event::FlagFell { frozen, .. } => {
                self.reprogram = true;
                if *frozen {
                    self.text = Some("FLAG");
                }
            }
            Event::GameEnded { result, .. } => {
                self.reprogram = true;
                self.text = Some(score_text(result.score));
            }
            Event::Resumed { .. } => {
                self.reprogram = true;
                self.text = None;
            }
            _ => self.reprogram = true,
        }
    }
}

/// What the clock says at the end of a game.
pub fn score_text(score: Score) -> &'static str {
    match score {
        Score::WhiteWins => "1-0",
        Score::BlackWins => "0-1",
        Score::Draw => "DRAW",
        Score::BothLose => "0-0",
        Score::Annulled => "ANNUL",
    }
}

/// The text after a press the rules refused, when the official times go back on.
pub fn after_refused_press(phase: Option<&Phase>) -> Option<&'static str> {
    match phase {
        Some(Phase::Paused(PausedBy::Adjourned)) => None,
        Some(Phase::Paused(_)) => Some("PAUSE"),
        _ => None,
    }
}

/// The clock's program for `view` (DESIGN.md §3): SETNRUN with the times the core
/// computed, then a short text when there is one. An adjourned game's clock always says
/// so (also after a reconnection).
pub fn program(
    view: &View,
    placement: Placement,
    text: Option<&str>,
    texts: super::clock_texts::ClockTexts,
) -> Vec<LinkCommand> {
    let text = match (&view.phase, text) {
        (Phase::Paused(PausedBy::Adjourned), None) => Some("SEALED"),
        (_, t) => t,
    };
    let time_of = |side: Side| {
        let ms = match placement.color_at(side) {
            Color::White => view.white.display_ms,
            Color::Black => view.black.display_ms,
        };
        Duration::from_millis(u64::try_from(ms.0).unwrap_or(0))
    };
    let run = match view.running {
        None => RunSide::Paused,
        Some(c) => match placement.side_of(c) {
            Side::Left => RunSide::Left,
            Side::Right => RunSide::Right,
        },
    };
    let mut out = vec![LinkCommand::SetAndRun {
        left: time_of(Side::Left),
        right: time_of(Side::Right),
        run,
    }];
    // FIDE C.02 (e), 6.11: once a side has passed a control (or its flag fell), each
    // side's period and flag are signed on the clock, so who passed first shows there as
    // in the state. Not before: a game in its first period keeps the plain display.
    let side_view = |side: Side| match placement.color_at(side) {
        Color::White => &view.white,
        Color::Black => &view.black,
    };
    let (left, right) = (side_view(Side::Left), side_view(Side::Right));
    if [left, right]
        .iter()
        .any(|s| s.period > 1 || s.flagged_at.is_some())
    {
        let period = |s: &crate::rules::game::SideView| u8::try_from(s.period).unwrap_or(5).min(5);
        out.push(LinkCommand::Icons {
            left_period: period(left),
            right_period: period(right),
            left_flag: left.flagged_at.is_some(),
            right_flag: right.flagged_at.is_some(),
        });
    }
    if let Some(text) = text {
        out.push(LinkCommand::Text {
            text: texts.say(text).to_string(),
            beep: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::game::{Game, GameResult, Input, Termination};
    use crate::rules::{Color, Millis};

    fn shown(events: &[Event]) -> Display {
        let mut d = Display::default();
        for e in events {
            d.after(e);
        }
        d
    }

    #[test]
    fn each_event_says_what_the_clock_shows() {
        let at = Millis(1);
        assert_eq!(shown(&[]), Display::default());
        assert_eq!(
            shown(&[Event::Paused {
                at,
                arbiter: "IA".into(),
                reason: "r".into()
            }]),
            Display {
                reprogram: true,
                text: Some("PAUSE"),
                ..Display::default()
            }
        );
        // The resume after it clears the text; the last event's word stands.
        let d = shown(&[
            Event::Paused {
                at,
                arbiter: "IA".into(),
                reason: "r".into(),
            },
            Event::Resumed {
                at,
                arbiter: "IA".into(),
            },
        ]);
        assert_eq!((d.reprogram, d.text), (true, None));
        let result = GameResult {
            score: Score::BlackWins,
            termination: Termination::Checkmate,
        };
        let d = shown(&[Event::GameEnded {
            at,
            result,
            replaces: None,
            confirmed_by: None,
        }]);
        assert_eq!((d.reprogram, d.text), (true, Some("0-1")));
        // A move made but not pressed changes nothing on the clock.
        assert_eq!(
            shown(&[Event::PlayerPresent {
                at,
                side: Color::White,
                arrival: crate::rules::game::Arrival::Press,
            }]),
            Display::default()
        );
    }

    #[test]
    fn the_scores_and_a_refused_press_have_their_words() {
        assert_eq!(score_text(Score::WhiteWins), "1-0");
        assert_eq!(score_text(Score::Draw), "DRAW");
        assert_eq!(score_text(Score::BothLose), "0-0");
        assert_eq!(score_text(Score::Annulled), "ANNUL");
        assert_eq!(after_refused_press(Some(&Phase::Running)), None);
        assert_eq!(
            after_refused_press(Some(&Phase::Paused(PausedBy::Adjourned))),
            None
        );
        assert_eq!(
            after_refused_press(Some(&Phase::Paused(PausedBy::Player {
                side: Color::Black
            }))),
            Some("PAUSE")
        );
        assert_eq!(after_refused_press(None), None);
    }

    #[test]
    fn the_program_puts_each_colours_time_on_its_side_and_runs_the_side_to_move() {
        let mut setup = crate::config::EventDefaults::default().setup("W", "B", Millis(0));
        setup.tc = "600".parse().expect("a time control");
        let mut g = Game::new(setup).expect("a setup");
        for side in [Color::White, Color::Black] {
            for e in g
                .decide(
                    &Input::Present {
                        side,
                        arbiter: "IA".into(),
                    },
                    Millis(0),
                )
                .expect("present")
            {
                g.evolve(&e);
            }
        }
        for e in g.poll(Millis(0)) {
            g.evolve(&e);
        }
        let view = g.view(Millis(100_000));
        let right_white = Placement { white: Side::Right };
        // LinkCommand has no PartialEq: compared as its Debug text.
        let debug = |c: Vec<LinkCommand>| format!("{c:?}");
        assert_eq!(
            debug(program(
                &view,
                right_white,
                Some("LEVER"),
                Default::default()
            )),
            debug(vec![
                LinkCommand::SetAndRun {
                    left: Duration::from_secs(600),
                    right: Duration::from_secs(500),
                    run: RunSide::Right,
                },
                LinkCommand::Text {
                    text: "LEVER".into(),
                    beep: false
                },
            ])
        );
        assert_eq!(
            program(
                &view,
                Placement { white: Side::Left },
                None,
                Default::default()
            )
            .len(),
            1
        );
    }
}
