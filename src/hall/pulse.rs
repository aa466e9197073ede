//! How the hall's heartbeat knows that every board actor makes progress, without asking
//! each one every beat.
//!
//! Why: the heartbeat used to send every board a question and wait for its answer, one
//! board after another, every second: at 5000 boards that was 5000 wake-ups of the actors
//! and 5000 of the coordinator a second, and the coordinator busy with it instead of with
//! commands. A running board turns its loop every second anyway (the clock's reading), so
//! the question proved nothing the board was not already showing. Now each actor leaves
//! its [`Pulse`] at every turn of its loop (a counter and its summary, in atomics), and
//! the heartbeat reads them; only a board quiet for [`QUIET_BEATS`] beats is sent a
//! `ToBoard::Ping`, which makes it turn once. A board still quiet
//! [`GRACE_BEATS`] beats after its ping is stuck, and then the watchdog is not fed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Beats a board may go without turning before it is pinged.
pub const QUIET_BEATS: u32 = 2;
/// Beats a pinged board has to turn before it counts as stuck.
pub const GRACE_BEATS: u32 = 2;

/// One board's part of the status line.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub online: bool,
    pub running: bool,
    pub alerts: usize,
}

/// What a board actor leaves for the heartbeat at every turn of its loop. Relaxed
/// atomics: each field is read on its own, and a status line a turn old is fine.
#[derive(Debug, Default)]
pub struct Pulse {
    turns: AtomicU64,
    online: AtomicBool,
    running: AtomicBool,
    alerts: AtomicUsize,
}

impl Pulse {
    /// The actor's `turn`-th turn, and how the board is as it waits for its next input.
    pub fn beat(&self, turn: u64, s: Summary) {
        self.online.store(s.online, Ordering::Relaxed);
        self.running.store(s.running, Ordering::Relaxed);
        self.alerts.store(s.alerts, Ordering::Relaxed);
        self.turns.store(turn, Ordering::Relaxed);
    }

    pub fn turns(&self) -> u64 {
        self.turns.load(Ordering::Relaxed)
    }

    pub fn summary(&self) -> Summary {
        Summary {
            online: self.online.load(Ordering::Relaxed),
            running: self.running.load(Ordering::Relaxed),
            alerts: self.alerts.load(Ordering::Relaxed),
        }
    }
}

/// What one beat found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Quiet boards to ping now.
    pub ping: Vec<String>,
    /// Boards that did not turn within their grace after a ping, each with the beats
    /// since it last turned.
    pub stuck: Vec<(String, u32)>,
}

/// The heartbeat's memory of every board: its count of turns at the last beat, for how
/// many beats it has not turned, and how many beats ago it was pinged.
#[derive(Debug, Default)]
pub struct Watch {
    boards: BTreeMap<String, Seen>,
    beat: u64,
}

#[derive(Debug)]
struct Seen {
    turns: u64,
    quiet: u32,
    pinged: Option<u32>,
    /// The beat this board was last listed at (a board removed by a reload is forgotten).
    listed: u64,
}

impl Watch {
    /// One beat over every board's count of turns.
    pub fn beat<'a>(&mut self, boards: impl IntoIterator<Item = (&'a str, u64)>) -> Verdict {
        self.beat += 1;
        let mut verdict = Verdict::default();
        for (id, turns) in boards {
            let seen = match self.boards.get_mut(id) {
                Some(s) => s,
                None => {
                    // First seen: it counts from here.
                    self.boards.insert(
                        id.to_string(),
                        Seen {
                            turns,
                            quiet: 0,
                            pinged: None,
                            listed: self.beat,
                        },
                    );
                    continue;
                }
            };
            seen.listed = self.beat;
            if seen.turns != turns {
                seen.turns = turns;
                seen.quiet = 0;
                seen.pinged = None;
                continue;
            }
            seen.quiet += 1;
            match &mut seen.pinged {
                Some(since) => {
                    *since += 1;
                    if *since >= GRACE_BEATS {
                        verdict.stuck.push((id.to_string(), seen.quiet));
                    }
                }
                None if seen.quiet >= QUIET_BEATS => {
                    seen.pinged = Some(0);
                    verdict.ping.push(id.to_string());
                }
                None => {}
            }
        }
        let now = self.beat;
        self.boards.retain(|_, s| s.listed == now);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(w: &mut Watch, boards: &[(&str, u64)]) -> Verdict {
        w.beat(boards.iter().copied())
    }

    #[test]
    fn a_board_that_turns_between_beats_is_never_pinged() {
        let mut w = Watch::default();
        for turn in 1..20 {
            assert_eq!(beat(&mut w, &[("b1", turn)]), Verdict::default());
        }
    }

    #[test]
    fn a_quiet_board_is_pinged_once_and_is_well_when_it_turns() {
        let mut w = Watch::default();
        assert_eq!(beat(&mut w, &[("b1", 5)]), Verdict::default());
        // Quiet for one beat: nothing yet.
        assert_eq!(beat(&mut w, &[("b1", 5)]), Verdict::default());
        // Quiet for QUIET_BEATS: pinged.
        let v = beat(&mut w, &[("b1", 5)]);
        assert_eq!(v.ping, vec!["b1".to_string()]);
        assert!(v.stuck.is_empty());
        // Not pinged again while the ping is pending.
        assert_eq!(beat(&mut w, &[("b1", 5)]), Verdict::default());
        // It turned (the ping): well again, and quiet counts from zero.
        assert_eq!(beat(&mut w, &[("b1", 6)]), Verdict::default());
        assert_eq!(beat(&mut w, &[("b1", 6)]), Verdict::default());
        assert_eq!(beat(&mut w, &[("b1", 6)]).ping, vec!["b1".to_string()]);
    }

    #[test]
    fn a_pinged_board_that_does_not_turn_is_stuck_until_it_does() {
        let mut w = Watch::default();
        let quiet = |w: &mut Watch| beat(w, &[("b1", 1), ("b2", 0)]);
        beat(&mut w, &[("b1", 1), ("b2", 0)]);
        quiet(&mut w);
        assert_eq!(quiet(&mut w).ping.len(), 2);
        // One beat of grace.
        let v = beat(&mut w, &[("b1", 1), ("b2", 1)]);
        assert!(v.stuck.is_empty() && v.ping.is_empty(), "{v:?}");
        // b2 turned; b1 is stuck, quiet for QUIET_BEATS + GRACE_BEATS beats.
        let v = beat(&mut w, &[("b1", 1), ("b2", 1)]);
        assert_eq!(v.stuck, vec![("b1".to_string(), QUIET_BEATS + GRACE_BEATS)]);
        assert!(v.ping.is_empty());
        // Still stuck at the next beat, one beat quieter.
        let v = beat(&mut w, &[("b1", 1), ("b2", 2)]);
        assert_eq!(
            v.stuck,
            vec![("b1".to_string(), QUIET_BEATS + GRACE_BEATS + 1)]
        );
        // It turns: well again.
        assert_eq!(beat(&mut w, &[("b1", 2), ("b2", 3)]), Verdict::default());
    }

    #[test]
    fn a_board_removed_and_added_again_counts_afresh() {
        let mut w = Watch::default();
        beat(&mut w, &[("b1", 1)]);
        beat(&mut w, &[("b1", 1)]);
        assert_eq!(beat(&mut w, &[("b1", 1)]).ping.len(), 1);
        // Removed by a reload while its ping was pending: forgotten, named nowhere.
        assert_eq!(beat(&mut w, &[]), Verdict::default());
        // Back, with the same count of turns (a new actor that happens to be there): first
        // seen, nothing owed. Remembered, it would be stuck at the second beat.
        assert_eq!(beat(&mut w, &[("b1", 1)]), Verdict::default());
        assert_eq!(beat(&mut w, &[("b1", 1)]), Verdict::default());
        assert_eq!(beat(&mut w, &[("b1", 1)]).ping.len(), 1);
    }

    #[test]
    fn the_pulse_gives_back_what_the_actor_left() {
        let p = Pulse::default();
        assert_eq!(p.turns(), 0);
        p.beat(
            7,
            Summary {
                online: true,
                running: true,
                alerts: 3,
            },
        );
        assert_eq!(p.turns(), 7);
        let s = p.summary();
        assert!(s.online && s.running);
        assert_eq!(s.alerts, 3);
        p.beat(
            8,
            Summary {
                online: false,
                running: false,
                alerts: 0,
            },
        );
        let s = p.summary();
        assert!(!s.online && !s.running);
        assert_eq!((p.turns(), s.alerts), (8, 0));
    }
}
