//! The simulated DGT3000 / XL clock: remaining time computed on demand from the time left
//! at the last change and when the running side started (nothing ticks; STYLE.md).
//!
//! Display semantics follow the real clock: a side set to 3:02 shows 3:02 until a full
//! second has run, and the flag falls the instant the time reaches 0:00 (the display is
//! the remaining time rounded up to whole seconds; BWTIME has no sub-second field,
//! dgt-protocol.md §6).

use std::time::{Duration, Instant};

/// A physical side of the clock, as seen from its front (dgt-protocol.md §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    fn idx(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
}

/// Hours, minutes, seconds as the display shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hms {
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
}

impl Hms {
    pub fn from_millis_ceil(ms: u64) -> Hms {
        // The display holds at most 9:59:59 (one hours digit).
        let secs = ms.div_ceil(1000).min(9 * 3600 + 59 * 60 + 59);
        Hms {
            hours: (secs / 3600) as u8,
            minutes: ((secs / 60) % 60) as u8,
            seconds: (secs % 60) as u8,
        }
    }

    pub fn to_millis(self) -> u64 {
        (u64::from(self.hours) * 3600 + u64::from(self.minutes) * 60 + u64::from(self.seconds))
            * 1000
    }
}

impl std::fmt::Display for Hms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:02}:{:02}", self.hours, self.minutes, self.seconds)
    }
}

/// Which side SETNRUN starts (flags 01 / 02 / 04, dgt-protocol.md §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Paused,
    Left,
    Right,
}

#[derive(Debug, Clone)]
pub struct SimClock {
    /// Time left per side at `since`.
    left_ms: [u64; 2],
    running: Option<Side>,
    since: Instant,
    lever_high: Side,
    switch_at_lever: bool,
    flagged: [bool; 2],
    /// Added to the presser's time at each press: a clock set by hand (the arbiter's
    /// buttons) counts its own increment; one the host sets leaves that to the host.
    increment_ms: u64,
}

impl SimClock {
    /// A clock at 0:00:00 both sides, stopped, left lever up (what a freshly powered clock
    /// in computer mode shows before the host sets it).
    pub fn new(now: Instant) -> SimClock {
        SimClock {
            left_ms: [0, 0],
            running: None,
            since: now,
            lever_high: Side::Left,
            switch_at_lever: false,
            flagged: [false, false],
            increment_ms: 0,
        }
    }

    pub fn remaining_ms(&self, side: Side, now: Instant) -> u64 {
        let base = self.left_ms[side.idx()];
        if self.running == Some(side) {
            let ran = now.saturating_duration_since(self.since).as_millis() as u64;
            base.saturating_sub(ran)
        } else {
            base
        }
    }

    pub fn running(&self) -> Option<Side> {
        self.running
    }

    pub fn lever_high(&self) -> Side {
        self.lever_high
    }

    pub fn flagged(&self, side: Side) -> bool {
        self.flagged[side.idx()]
    }

    /// Whose turn the status byte reports: the running side, else the side whose lever is
    /// up (captures: `08` paused + left high + left's turn, `12` stopped + right high +
    /// right's turn).
    pub fn turn(&self) -> Side {
        self.running.unwrap_or(self.lever_high)
    }

    fn settle(&mut self, now: Instant) {
        if let Some(side) = self.running {
            self.left_ms[side.idx()] = self.remaining_ms(side, now);
        }
        self.since = now;
    }

    /// SETNRUN: absolute times, which side runs, and whether the lever switches sides.
    pub fn set_and_run(
        &mut self,
        left: Hms,
        right: Hms,
        run: Run,
        switch_at_lever: bool,
        now: Instant,
    ) {
        self.since = now;
        self.left_ms = [left.to_millis(), right.to_millis()];
        self.flagged = [false, false];
        self.switch_at_lever = switch_at_lever;
        self.increment_ms = 0;
        self.running = match run {
            Run::Paused => None,
            Run::Left => Some(Side::Left),
            Run::Right => Some(Side::Right),
        };
        self.poll(now);
    }

    /// The arbiter sets the clock with its buttons (a hand-set clock, observe mode): the
    /// times, the increment the clock adds at each press (right or wrong), and which side
    /// runs; it then runs by itself and switches at the lever.
    pub fn hand_set(
        &mut self,
        left_ms: u64,
        right_ms: u64,
        increment_ms: u64,
        run: Run,
        now: Instant,
    ) {
        self.since = now;
        self.left_ms = [left_ms, right_ms];
        self.flagged = [false, false];
        self.switch_at_lever = true;
        self.increment_ms = increment_ms;
        self.running = match run {
            Run::Paused => None,
            Run::Left => Some(Side::Left),
            Run::Right => Some(Side::Right),
        };
        if let Some(side) = self.running {
            self.lever_high = side;
        }
        self.poll(now);
    }

    /// The player whose lever is up presses it: the other lever goes up. A running clock
    /// switches sides only when the host allowed it (SETNRUN flag 08); otherwise the host
    /// decides and the lever only reports (dgt-protocol.md §6). Returns whether a clock
    /// was running at the press (not stopped, not at 0:00): a press on a stopped clock
    /// completes nothing the player can see.
    pub fn press(&mut self, now: Instant) -> bool {
        self.poll(now);
        self.lever_high = self.lever_high.other();
        let running = self.running.is_some();
        if running && self.switch_at_lever {
            self.settle(now);
            if let Some(presser) = self.running {
                let t = &mut self.left_ms[presser.idx()];
                *t = t.saturating_add(self.increment_ms);
            }
            self.running = Some(self.lever_high);
        }
        running
    }

    /// Applies a flag fall that happened by `now`: the side blocks at 0:00 and the clock
    /// stops (captured `johan`: `30 00 00 … 12`).
    pub fn poll(&mut self, now: Instant) {
        if let Some(side) = self.running
            && self.remaining_ms(side, now) == 0
        {
            self.settle(now);
            self.flagged[side.idx()] = true;
            self.running = None;
        }
    }

    /// When the display next changes (a second ticks over, or the flag falls).
    pub fn next_change(&self, now: Instant) -> Option<Instant> {
        let side = self.running?;
        let r = self.remaining_ms(side, now);
        if r == 0 {
            return Some(now);
        }
        Some(now + Duration::from_millis((r - 1) % 1000 + 1))
    }

    pub fn display(&self, side: Side, now: Instant) -> Hms {
        Hms::from_millis_ceil(self.remaining_ms(side, now))
    }
}

/// A DGT3000 front button (dgt-protocol.md §6: ack3 = last pressed, ack2 = held mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    Back,
    Plus,
    RunPause,
    Minus,
    Ok,
}

impl Button {
    /// (ack2 held mask, ack3 button code) for a single press.
    pub fn ack_bytes(self) -> (u8, u8) {
        // 01 is always set in the held mask (PC's table `05-49 33-52 17-51 09-50 65-53`).
        match self {
            Button::Back => (0x05, 0x31),
            Button::Plus => (0x09, 0x32),
            Button::RunPause => (0x11, 0x33),
            Button::Minus => (0x21, 0x34),
            Button::Ok => (0x41, 0x35),
        }
    }

    pub fn parse(s: &str) -> Option<Button> {
        match s.to_ascii_lowercase().as_str() {
            "back" => Some(Button::Back),
            "plus" | "+" => Some(Button::Plus),
            "run" | "pause" | "run-pause" => Some(Button::RunPause),
            "minus" | "-" => Some(Button::Minus),
            "ok" => Some(Button::Ok),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hms(h: u8, m: u8, s: u8) -> Hms {
        Hms {
            hours: h,
            minutes: m,
            seconds: s,
        }
    }

    #[test]
    fn a_running_side_shows_the_set_time_until_a_full_second_has_run() {
        let t0 = Instant::now();
        let mut c = SimClock::new(t0);
        c.set_and_run(hms(0, 3, 2), hms(0, 3, 2), Run::Left, true, t0);
        assert_eq!(
            c.display(Side::Left, t0 + Duration::from_millis(999)),
            hms(0, 3, 2)
        );
        assert_eq!(
            c.display(Side::Left, t0 + Duration::from_millis(1000)),
            hms(0, 3, 1)
        );
        assert_eq!(
            c.display(Side::Right, t0 + Duration::from_secs(10)),
            hms(0, 3, 2)
        );
        assert_eq!(c.next_change(t0), Some(t0 + Duration::from_millis(1000)));
    }

    #[test]
    fn a_press_with_switch_at_lever_stops_the_presser_and_starts_the_opponent() {
        let t0 = Instant::now();
        let mut c = SimClock::new(t0);
        c.set_and_run(hms(0, 3, 0), hms(0, 3, 0), Run::Left, true, t0);
        c.press(t0 + Duration::from_millis(2500));
        assert_eq!(c.running(), Some(Side::Right));
        assert_eq!(c.lever_high(), Side::Right);
        assert_eq!(
            c.remaining_ms(Side::Left, t0 + Duration::from_secs(60)),
            177_500
        );
    }

    #[test]
    fn without_switch_at_lever_a_press_only_moves_the_lever() {
        let t0 = Instant::now();
        let mut c = SimClock::new(t0);
        c.set_and_run(hms(0, 3, 0), hms(0, 3, 0), Run::Left, false, t0);
        c.press(t0);
        assert_eq!(c.running(), Some(Side::Left));
        assert_eq!(c.turn(), Side::Left);
        assert_eq!(c.lever_high(), Side::Right);
    }

    #[test]
    fn the_flag_falls_at_zero_and_stops_the_clock() {
        let t0 = Instant::now();
        let mut c = SimClock::new(t0);
        c.set_and_run(hms(0, 0, 2), hms(0, 1, 0), Run::Left, true, t0);
        c.poll(t0 + Duration::from_millis(2000));
        assert!(c.flagged(Side::Left));
        assert_eq!(c.running(), None);
        assert_eq!(
            c.display(Side::Left, t0 + Duration::from_secs(5)),
            hms(0, 0, 0)
        );
    }
}
