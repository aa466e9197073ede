//! The two-sided chess clock (6.1): remaining main time per side, the running side, the
//! unused delay of the running turn. Nothing ticks: remaining time at any instant is
//! computed from the last settled value and when the turn (re)started, as lichess does.
//!
//! The clock only does arithmetic. Which events change it, and why, is `game/evolve.rs`.

use super::color::{ByColor, Color};
use serde::{Deserialize, Serialize};

use super::millis::Millis;

/// One side's display and counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideClock {
    /// Main time left, as of the last settlement (see [`Clock::settle`]).
    pub remaining: Millis,
    /// Moves completed (lever presses that completed a move).
    pub moves: u32,
    /// Current period, 0-based.
    pub period: usize,
    /// When this side's flag fell, if it did.
    pub flagged_at: Option<Millis>,
    /// Main time this side's clock has run (the envelope's "time used", I.2.3).
    #[serde(default)]
    pub used: Millis,
}

/// Both sides, and whose turn it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub sides: ByColor<SideClock>,
    /// The side whose clock runs, or would run if the clock were not stopped.
    pub turn: Color,
    /// When the running side's time was last settled; `None` while the clock is stopped
    /// (before the start, paused, frozen after a flag, game over).
    pub running_since: Option<Millis>,
    /// What is left of the running turn's free delay (6.2 delay mode); 0 without delay.
    pub delay_left: Millis,
    /// Main time the side to move has been charged since its turn began, as of the last
    /// settlement: a press reports what the whole turn cost, also across a pause or an
    /// arbiter's adjustment, which settle the clock part-way.
    #[serde(default)]
    pub turn_charged: Millis,
}

/// What a turn cost, from the last settlement to an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    /// Main time charged (never more than was left).
    pub main: Millis,
    /// Delay consumed (free time).
    pub delay: Millis,
}

impl Clock {
    pub fn new(white: Millis, black: Millis, turn: Color) -> Clock {
        let side = |remaining| SideClock {
            remaining,
            moves: 0,
            period: 0,
            flagged_at: None,
            used: Millis::ZERO,
        };
        Clock {
            sides: ByColor {
                white: side(white),
                black: side(black),
            },
            turn,
            running_since: None,
            delay_left: Millis::ZERO,
            turn_charged: Millis::ZERO,
        }
    }

    /// The turn passes to `to`: its cost is counted afresh.
    pub fn pass_turn(&mut self, to: Color) {
        self.turn = to;
        self.turn_charged = Millis::ZERO;
    }

    /// Main time the running turn has cost from its start up to `now`.
    pub fn turn_cost(&self, now: Millis) -> Millis {
        self.turn_charged + self.charge(now).main
    }

    pub fn side(&self, color: Color) -> &SideClock {
        self.sides.get(color)
    }

    pub fn side_mut(&mut self, color: Color) -> &mut SideClock {
        self.sides.get_mut(color)
    }

    /// The side whose time is running now, if any.
    pub fn running(&self) -> Option<Color> {
        self.running_since.map(|_| self.turn)
    }

    /// What the running turn costs from the last settlement up to `now`: delay first,
    /// then main time (6.2: main time only runs once the delay has elapsed).
    pub fn charge(&self, now: Millis) -> Charge {
        match self.running_since {
            None => Charge {
                main: Millis::ZERO,
                delay: Millis::ZERO,
            },
            Some(since) => {
                let spent = (now - since).non_negative();
                let delay = spent.min(self.delay_left);
                let main = (spent - delay).min(self.side(self.turn).remaining.non_negative());
                Charge { main, delay }
            }
        }
    }

    /// Main time left for `color` at `now`.
    pub fn remaining_at(&self, color: Color, now: Millis) -> Millis {
        let side = self.side(color);
        if self.running() == Some(color) {
            side.remaining - self.charge(now).main
        } else {
            side.remaining
        }
    }

    /// Unused delay of the running turn at `now`.
    pub fn delay_left_at(&self, now: Millis) -> Millis {
        self.delay_left - self.charge(now).delay
    }

    /// The instant the running side's time reaches 0:00, if a side runs and has not
    /// already flagged.
    pub fn zero_at(&self) -> Option<Millis> {
        let since = self.running_since?;
        let side = self.side(self.turn);
        if side.flagged_at.is_some() {
            return None;
        }
        Some(since + self.delay_left + side.remaining.non_negative())
    }

    /// Move the running turn's cost up to `now` into the settled values, so that a
    /// change made at `now` (a press, a pause, an arbiter's correction) starts from the
    /// exact time shown at that instant.
    pub fn settle(&mut self, now: Millis) {
        if let Some(since) = self.running_since {
            let charge = self.charge(now);
            self.delay_left -= charge.delay;
            let turn = self.turn;
            self.side_mut(turn).remaining -= charge.main;
            self.side_mut(turn).used += charge.main;
            self.turn_charged += charge.main;
            self.running_since = Some(since.max(now));
        }
    }

    /// Stop at `now` (pause, freeze, game over), keeping whose turn it is.
    pub fn stop(&mut self, now: Millis) {
        self.settle(now);
        self.running_since = None;
    }

    /// Start (or restart after a pause) the side whose turn it is, at `now`.
    pub fn start(&mut self, now: Millis) {
        self.running_since = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_is_computed_not_ticked() {
        let mut c = Clock::new(Millis(60_000), Millis(60_000), Color::White);
        c.start(Millis(1000));
        assert_eq!(c.remaining_at(Color::White, Millis(11_000)), Millis(50_000));
        assert_eq!(c.remaining_at(Color::Black, Millis(11_000)), Millis(60_000));
        assert_eq!(c.zero_at(), Some(Millis(61_000)));
    }

    #[test]
    fn rule_6_2c_delay_runs_before_main_time() {
        let mut c = Clock::new(Millis(60_000), Millis(60_000), Color::White);
        c.delay_left = Millis(5000);
        c.start(Millis(0));
        assert_eq!(c.remaining_at(Color::White, Millis(4999)), Millis(60_000));
        assert_eq!(c.remaining_at(Color::White, Millis(7000)), Millis(58_000));
        assert_eq!(c.zero_at(), Some(Millis(65_000)));
        // Settling part-way keeps the rest of the delay: a pause does not reset it.
        c.settle(Millis(3000));
        assert_eq!(c.delay_left, Millis(2000));
        assert_eq!(c.zero_at(), Some(Millis(65_000)));
    }

    #[test]
    fn stopped_clock_does_not_run() {
        let mut c = Clock::new(Millis(60_000), Millis(60_000), Color::White);
        c.start(Millis(0));
        c.stop(Millis(10_000));
        assert_eq!(c.remaining_at(Color::White, Millis(99_000)), Millis(50_000));
        assert_eq!(c.zero_at(), None);
    }
}
