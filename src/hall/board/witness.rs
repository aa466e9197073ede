//! A game whose time since the journal's last record is unknown (a reboot: see
//! `timebase::resume`) is witnessed by its clock, or held for the arbiter (6.13).
//!
//! Why: after a reboot of a server without a real-time clock the wall clock can be hours
//! off, so the gap it shows cannot be charged to anyone. A DGT3000 runs on its own
//! battery through the reboot: where its reading agrees with the journal's reckoning at
//! the resumed game time (within the discrepancy margin), the game goes on as after any
//! outage; where it disagrees, or no clock answers within [`WITNESS_WAIT`], the game is
//! paused as of the journal's last record and the arbiter sets the times from the clock.
//! Until then no deadline of the game is acted on: nothing is flagged, defaulted or
//! started from the gap.

use std::time::Duration;

use crate::alert::Said;
use crate::mqtt::payload::{AlertKind, Severity};
use crate::rules::Millis;
use crate::rules::game::{Game, Input};
use serde_json::json;

use super::BoardActor;

/// How long a board has to come back and show its clock's reading after the start.
/// A port's settle, the handshake and the identity check take a few seconds.
pub const WITNESS_WAIT: Duration = Duration::from_secs(15);

/// The arbiter name a hold is journaled under.
pub const HOLDER: &str = "hallclock";

/// Whether an unfinished game's time since `since` needs a witness, at game time `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Nothing of the game depends on the gap: no clock runs and no deadline falls in it.
    Nothing,
    /// Its clock runs: its reading must witness the gap.
    Reading,
    /// No clock runs, but a deadline (a scheduled start or resumption) falls in the gap:
    /// nothing can witness whether it passed, so the arbiter decides.
    Arbiter { deadline: Millis },
}

/// Pure: what a recovered game needs after a start whose gap is unknown from `since`.
pub fn need(game: &Game, now: Millis) -> Need {
    if game.result().is_some() {
        return Need::Nothing;
    }
    if game.clock().running().is_some() {
        return Need::Reading;
    }
    match game.next_deadline() {
        Some(deadline) if deadline <= now => Need::Arbiter { deadline },
        _ => Need::Nothing,
    }
}

/// What is not known of a board's recovered game at start-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Doubt {
    /// After a reboot: the journal's last instant, from which the game's time is unknown
    /// until its clock witnesses it.
    pub unwitnessed: Option<Millis>,
    /// The journal is damaged where this game may have lost events (`store::damage`):
    /// nothing its clock shows can tell which, so it is held for the arbiter at once.
    pub damaged: bool,
}

/// The unwitnessed state of a board's game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unwitnessed {
    /// The journal's last record: the last instant the game's time is known.
    pub since: Millis,
    /// Held for the arbiter (told, and paused where it was running).
    pub held: bool,
    /// When to give up waiting for the clock.
    pub due: tokio::time::Instant,
}

impl BoardActor {
    /// At the actor's start: whether the recovered game must be witnessed, or held.
    pub(super) async fn begin_witness(&mut self, doubt: Doubt) {
        let Some(slot) = &self.slot else { return };
        if doubt.damaged && slot.game.result().is_none() {
            let since = slot.game.last_event_at();
            self.unwitnessed = Some(Unwitnessed {
                since,
                held: false,
                due: tokio::time::Instant::now(),
            });
            return self
                .hold(Said::new(
                    "time_held.journal_damaged",
                    json!({}),
                    "some of its events were lost in a damaged part of the journal (see the journal alert), so what happened after them is not known".into(),
                ))
                .await;
        }
        let Some(since) = doubt.unwitnessed else {
            return;
        };
        if self.observing() {
            // The hand-set clock is the official time: nothing to witness.
            return;
        }
        let now = self.now();
        let need = need(&slot.game, now);
        if need == Need::Nothing {
            return;
        }
        self.unwitnessed = Some(Unwitnessed {
            since,
            held: false,
            due: tokio::time::Instant::now() + WITNESS_WAIT,
        });
        if let Need::Arbiter { deadline } = need {
            let why = Said::new(
                "time_held.deadline",
                json!({ "deadline": deadline.0 }),
                format!(
                    "its scheduled instant {} fell in the time the server was down after a reboot, which cannot be checked",
                    deadline.utc()
                ),
            );
            self.hold(why).await;
        }
    }

    /// The clock's reading explained the gap: the game goes on.
    pub(super) fn witnessed(&mut self) {
        if let Some(u) = self.unwitnessed.take() {
            tracing::info!(board = %self.id, since = %u.since.utc(), "the clock's reading witnesses the time since the journal's last record: the game goes on");
        }
    }

    /// Nothing witnesses the gap: pause a running game as of the journal's last record
    /// (charging nothing of the gap), keep the clock's display, and tell the arbiter.
    pub(super) async fn hold(&mut self, why: Said) {
        let Some(u) = self.unwitnessed.as_mut() else {
            return;
        };
        if u.held {
            return;
        }
        u.held = true;
        let since = u.since;
        let mut paused = false;
        if self.running_game() {
            let at = self
                .slot
                .as_ref()
                .map_or(since, |s| since.max(s.game.last_event_at()));
            let pause = Input::Pause {
                arbiter: HOLDER.into(),
                reason: "time unknown after a reboot (6.13)".into(),
            };
            // Held (above) before the pause applies: the clock keeps showing its own
            // times, which the arbiter reads to set the official ones.
            paused = self.decide_at(pause, at).await.is_ok();
        }
        let what = if paused {
            "the game is paused as of the journal's last record: read the clock, set the times (set_time) and resume"
        } else {
            "nothing is started, flagged or defaulted from that time: check the game, then act (any command on this board ends the hold)"
        };
        let message = format!(
            "{}: {}; {what} (6.13). The last known time is {}",
            self.id,
            why.message,
            since.utc()
        );
        tracing::error!("{message}");
        let mut params = why.params;
        params.insert("board".into(), json!(self.id));
        params.insert("paused".into(), json!(paused));
        params.insert("last_known".into(), json!(since.0));
        let said = Said {
            code: why.code,
            params,
            message,
        };
        self.raise(AlertKind::TimeHeld, Severity::Critical, said);
    }

    /// An arbiter acted on the board: the hold is theirs now, and the clock shows the
    /// official times again.
    pub(super) async fn arbiter_acted(&mut self) {
        if let Some(u) = self.unwitnessed.take() {
            self.clear(AlertKind::TimeHeld);
            if u.held {
                self.program_clock(None).await;
            }
        }
    }

    /// While a hold stands the clock is not programmed: its display is the evidence.
    pub(super) fn display_held(&self) -> bool {
        self.unwitnessed.is_some_and(|u| u.held)
    }

    /// No clock reading came in time.
    pub(super) async fn witness_overdue(&mut self) {
        self.hold(Said::new(
            "time_held.no_clock",
            json!({ "wait_ms": WITNESS_WAIT.as_millis() as u64 }),
            format!(
                "the server restarted after a reboot and no clock answered within {} s to witness the time since the journal's last record",
                WITNESS_WAIT.as_secs()
            ),
        ))
        .await;
    }

    /// When the actor stops waiting for a witness.
    pub(super) fn witness_due(&self) -> Option<tokio::time::Instant> {
        self.unwitnessed.filter(|u| !u.held).map(|u| u.due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(start: i64) -> Game {
        let mut setup = crate::config::EventDefaults::default().setup("W", "B", Millis(start));
        setup.tc = "600".parse().expect("a time control");
        Game::new(setup).expect("a valid setup")
    }

    #[test]
    fn a_scheduled_start_in_the_gap_needs_the_arbiter_one_after_it_nothing() {
        assert_eq!(
            need(&game(5_000), Millis(9_000)),
            Need::Arbiter {
                deadline: Millis(5_000)
            }
        );
        assert_eq!(need(&game(50_000), Millis(9_000)), Need::Nothing);
    }

    #[test]
    fn a_running_clock_needs_its_reading() {
        let mut g = game(0);
        for side in [crate::rules::Color::White, crate::rules::Color::Black] {
            let input = Input::Present {
                side,
                arbiter: "IA".into(),
            };
            for e in g.decide(&input, Millis(0)).expect("present") {
                g.evolve(&e);
            }
        }
        for e in g.poll(Millis(10)) {
            g.evolve(&e);
        }
        assert!(g.clock().running().is_some());
        assert_eq!(need(&g, Millis(20)), Need::Reading);
    }
}
