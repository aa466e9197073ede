//! The clock's lever, and what its reading says after an outage. Sans-IO: the lever's
//! position and orientation are values; the verdict on an outage is a pure function of
//! the game, the placement and the clock's reading, so the rule-like decisions of the
//! board actor (which player pressed, where a press made while nobody watched goes) are
//! tested here without a runtime.

use crate::dgt::{ClockSide, ClockTime};
use crate::rules::game::Game;
use crate::rules::placement::{Placement, Side};
use crate::rules::{Color, Millis};

/// The clock's own resolution: it shows whole seconds, and was programmed with times
/// rounded up to whole seconds.
pub const CLOCK_RESOLUTION: Millis = Millis(1000);

pub fn side(side: ClockSide) -> Side {
    match side {
        ClockSide::Left => Side::Left,
        ClockSide::Right => Side::Right,
    }
}

/// What a lever going down means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeverPress {
    /// A press by this player.
    By(Color),
    /// The clocks stand and the lever was the wrong way round: the arbiter (or a player)
    /// turned it the right way round. Not a move.
    TurnedRightWay,
}

/// Where the lever is, and whether it is the wrong way round for the player to move.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Lever {
    /// The side whose lever end is up, as the clock last reported it.
    high: Option<ClockSide>,
    /// The lever is the wrong way round for the player to move (left so by the last
    /// game, the sealing, or a press the rules refused): that player's end is already
    /// down, so the press they make is the other end going down.
    reversed: bool,
}

impl Lever {
    /// A reading showed the lever with `high` up.
    pub fn seen(&mut self, high: ClockSide) {
        self.high = Some(high);
    }

    pub fn is_reversed(&self) -> bool {
        self.reversed
    }

    /// The lever went down; `high` is up now (dgt-protocol.md §6). `standing`: the clocks
    /// stand and the game is not over (before the start, or paused).
    pub fn pressed(&mut self, high: ClockSide, placement: Placement, standing: bool) -> LeverPress {
        self.high = Some(high);
        if self.reversed && standing {
            self.reversed = false;
            return LeverPress::TurnedRightWay;
        }
        // The usual case: the player to move's end was up and went down. With the lever
        // the wrong way round, that end was already down: the end that went down is the
        // opponent's, pushed by the player to move to complete the move.
        LeverPress::By(if self.reversed {
            placement.color_at(side(high))
        } else {
            placement.color_at(side(high).other())
        })
    }

    /// A press the rules refused: the lever moved and the turn did not, so it is now the
    /// other way round.
    pub fn refused(&mut self) {
        self.reversed = !self.reversed;
    }

    /// Whether the lever is the wrong way round for `mover` (none: no game); remembered,
    /// so a press counts for the right player wherever the lever was left.
    pub fn align(&mut self, placement: Placement, mover: Option<Color>) -> bool {
        self.reversed = match (self.high, mover) {
            (Some(high), Some(mover)) => side(high) != placement.side_of(mover),
            _ => false,
        };
        self.reversed
    }
}

/// What the clock's first reading after an outage (the daemon restarted, or the link was
/// away) says happened meanwhile: the clock kept playing at the lever, so its reading is
/// the evidence (DESIGN.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// No clock was running: the clock needs the official times again.
    NothingRan,
    /// The player to move pressed once, when their official time came down to what their
    /// clock froze at (to the clock's resolution): place that press at `at`.
    PressAt { side: Color, at: Millis },
    /// The same side still runs and the other's time did not move: no press.
    NoPress,
    /// No single press explains the reading (several presses, a stopped clock, times
    /// that moved otherwise): a discrepancy the arbiter settles; the clock keeps its times.
    Unexplained,
}

/// The clock's time for `color` in `reading`, in ms.
pub fn shown(reading: &ClockTime, placement: Placement, color: Color) -> Millis {
    let t = match placement.side_of(color) {
        Side::Left => reading.left,
        Side::Right => reading.right,
    };
    Millis(i64::from(t.total_seconds()) * 1000)
}

/// Whether the clock's reading shows both sides' official times at `now`, within the
/// discrepancy margin and the clock's resolution: the witness of a gap nobody else can
/// vouch for (a reboot). Stricter than [`after_outage`], which trusts the running side's
/// time to have run as reckoned.
pub fn reading_agrees(game: &Game, placement: Placement, reading: &ClockTime, now: Millis) -> bool {
    let tolerance = game.setup().discrepancy_margin + CLOCK_RESOLUTION;
    [Color::White, Color::Black].into_iter().all(|c| {
        let official = game.clock().remaining_at(c, now);
        (shown(reading, placement, c) - official).0.abs() <= tolerance.0
    })
}

/// The verdict on an outage, from the game as the journal left it, at `now`.
pub fn after_outage(game: &Game, placement: Placement, reading: &ClockTime, now: Millis) -> Outage {
    let (Some(runner), Some(zero_at)) = (game.clock().running(), game.clock().zero_at()) else {
        return Outage::NothingRan;
    };
    let other = runner.other();
    let hardware = if reading.status.running {
        reading.status.turn().map(|s| placement.color_at(side(s)))
    } else {
        None
    };
    let tolerance = game.setup().discrepancy_margin + CLOCK_RESOLUTION;
    let other_official = game.clock().remaining_at(other, now);
    let shown = |c: Color| shown(reading, placement, c);
    if hardware == Some(other) {
        // The player to move pressed (once, as far as a reading can tell): when their
        // official time came down to what their clock froze at.
        let at = (zero_at - shown(runner)).max(game.last_event_at()).min(now);
        let expected = other_official - (now - at);
        if (shown(other) - expected).0.abs() <= tolerance.0 {
            Outage::PressAt { side: runner, at }
        } else {
            Outage::Unexplained
        }
    } else if hardware.is_some() && (shown(other) - other_official).0.abs() <= tolerance.0 {
        // Same side running: no press, unless the other side's time moved too.
        Outage::NoPress
    } else {
        Outage::Unexplained
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::{ClockStatus, SideTime};
    use crate::rules::game::Input;

    const LEFT_WHITE: Placement = Placement { white: Side::Left };
    const RIGHT_WHITE: Placement = Placement { white: Side::Right };

    #[test]
    fn a_press_is_the_player_whose_end_went_down_or_with_the_lever_reversed_the_player_to_move() {
        let mut l = Lever::default();
        // White on the left pressed: the right end is up now.
        assert_eq!(
            l.pressed(ClockSide::Right, LEFT_WHITE, false),
            LeverPress::By(Color::White)
        );
        assert_eq!(
            l.pressed(ClockSide::Left, LEFT_WHITE, false),
            LeverPress::By(Color::Black)
        );
        assert_eq!(
            l.pressed(ClockSide::Left, RIGHT_WHITE, false),
            LeverPress::By(Color::White)
        );
        // The left end is up and White on the left is to move: the right way round.
        assert!(!l.align(LEFT_WHITE, Some(Color::White)));
        // Left with the right end up and White to move: White's end is already down, so
        // the lever is reversed for White.
        l.seen(ClockSide::Right);
        assert!(l.align(LEFT_WHITE, Some(Color::White)));
        assert!(l.is_reversed());
        // White completes the move by pushing the other end: the left end comes up.
        assert_eq!(
            l.pressed(ClockSide::Left, LEFT_WHITE, false),
            LeverPress::By(Color::White)
        );
        // No game: never reversed.
        assert!(!l.align(LEFT_WHITE, None));
    }

    #[test]
    fn a_reversed_lever_turned_while_the_clocks_stand_is_no_move_and_a_refused_press_reverses_it() {
        let mut l = Lever::default();
        l.seen(ClockSide::Right);
        assert!(l.align(LEFT_WHITE, Some(Color::White)));
        assert_eq!(
            l.pressed(ClockSide::Left, LEFT_WHITE, true),
            LeverPress::TurnedRightWay
        );
        assert!(!l.is_reversed());
        // Standing clocks with the lever the right way round: an ordinary press.
        assert_eq!(
            l.pressed(ClockSide::Right, LEFT_WHITE, true),
            LeverPress::By(Color::White)
        );
        l.refused();
        assert!(l.is_reversed());
        l.refused();
        assert!(!l.is_reversed());
    }

    /// A game started at 0 with 10 minutes each, White to move since `white_since`.
    fn running_game(white_since: i64) -> Game {
        let mut setup = crate::config::EventDefaults::default().setup("W", "B", Millis(0));
        setup.tc = "600".parse().expect("a time control");
        let mut g = Game::new(setup).expect("a valid setup");
        for side in [Color::White, Color::Black] {
            let input = Input::Present {
                side,
                arbiter: "IA".into(),
            };
            for e in g.decide(&input, Millis(0)).expect("present") {
                g.evolve(&e);
            }
        }
        for e in g.poll(Millis(0)) {
            g.evolve(&e);
        }
        if white_since > 0 {
            // White moves at 10 s, Black at `white_since`: White to move from there.
            for (side, at) in [(Color::White, 10_000), (Color::Black, white_since)] {
                let press = Input::Press {
                    side: Some(side),
                    mv: None,
                };
                for e in g.decide(&press, Millis(at)).expect("press") {
                    g.evolve(&e);
                }
            }
        }
        assert_eq!(g.clock().running(), Some(Color::White));
        g
    }

    fn reading(left_s: u32, right_s: u32, running: bool, turn: Option<ClockSide>) -> ClockTime {
        ClockTime {
            left: SideTime::from_seconds(left_s).expect("a time"),
            right: SideTime::from_seconds(right_s).expect("a time"),
            status: ClockStatus {
                running,
                left_turn: turn == Some(ClockSide::Left),
                right_turn: turn == Some(ClockSide::Right),
                ..ClockStatus::default()
            },
        }
    }

    #[test]
    fn rule_6_10_one_press_during_an_outage_is_placed_where_the_clock_froze_the_presser() {
        let g = running_game(0);
        // White (left) ran from 0 with 600 s; the clock froze White at 590 s (a press at
        // 10 s), and Black has run since: at 40 s Black shows 570 s.
        let r = reading(590, 570, true, Some(ClockSide::Right));
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::PressAt {
                side: Color::White,
                at: Millis(10_000)
            }
        );
        // The same, with White sitting on the right.
        let r = reading(570, 590, true, Some(ClockSide::Left));
        assert!(matches!(
            after_outage(&g, RIGHT_WHITE, &r, Millis(40_000)),
            Outage::PressAt {
                side: Color::White,
                at: Millis(10_000)
            }
        ));
        // Black's time off by more than the margin (2 s) and the resolution: several
        // presses, not one.
        let r = reading(590, 560, true, Some(ClockSide::Right));
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::Unexplained
        );
        // Within margin + resolution (3 s): still one press.
        let r = reading(590, 567, true, Some(ClockSide::Right));
        assert!(matches!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::PressAt { .. }
        ));
    }

    #[test]
    fn rule_6_10_a_press_is_never_placed_before_the_games_last_event_nor_after_now() {
        // White to move since 30 s: a frozen time that would date the press earlier is
        // placed at the last event.
        let g = running_game(30_000);
        let white_left = g.clock().remaining_at(Color::White, Millis(30_000)).0 / 1000;
        let frozen = u32::try_from(white_left + 5).expect("seconds");
        let r = reading(frozen, 550, true, Some(ClockSide::Right));
        match after_outage(&g, LEFT_WHITE, &r, Millis(60_000)) {
            Outage::PressAt { at, .. } => assert_eq!(at, g.last_event_at()),
            other => panic!("{other:?}"),
        }
        // A frozen time below what is left now would date it in the future: now.
        let g = running_game(0);
        let r = reading(100, 598, true, Some(ClockSide::Right));
        assert!(matches!(
            after_outage(&g, LEFT_WHITE, &r, Millis(2_000)),
            Outage::PressAt {
                at: Millis(2_000),
                ..
            }
        ));
    }

    #[test]
    fn rule_6_10_the_same_side_running_is_no_press_and_a_stopped_clock_is_unexplained() {
        let g = running_game(0);
        // White still runs at 40 s, Black untouched at 600 s.
        let r = reading(560, 600, true, Some(ClockSide::Left));
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::NoPress
        );
        // But Black's time moved too: more than the reading can place.
        let r = reading(560, 590, true, Some(ClockSide::Left));
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::Unexplained
        );
        // A clock that stopped tells nothing of whose turn it is.
        let r = reading(560, 600, false, None);
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(40_000)),
            Outage::Unexplained
        );
    }

    #[test]
    fn nothing_ran_when_no_clock_runs() {
        let setup = crate::config::EventDefaults::default().setup("W", "B", Millis(60_000));
        let g = Game::new(setup).expect("a valid setup");
        let r = reading(600, 600, false, None);
        assert_eq!(
            after_outage(&g, LEFT_WHITE, &r, Millis(0)),
            Outage::NothingRan
        );
        assert_eq!(shown(&r, LEFT_WHITE, Color::Black), Millis(600_000));
    }
}
