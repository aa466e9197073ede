//! Observe mode (issue 24): the arbiters set the clock by hand and the daemon only reads
//! it. The clock's times are the official ones (the core adopts them, `clock_times`), and
//! what does not add up is said in words, never corrected in silence: a clock that adds
//! another increment than the round declares, one that stopped or jumped, a flag it
//! shows, presses the board's moves do not explain. The findings are pure (`Reading`,
//! `jump`, `increment`); the driver below feeds them and raises the alerts.

use super::*;
use crate::alert::Said;
use serde_json::json;

/// One clock reading, in the game's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub at: Millis,
    pub white: Millis,
    pub black: Millis,
    /// Whether the clock was counting.
    pub running: bool,
}

impl Reading {
    pub fn of(reading: &ClockTime, placement: Placement, at: Millis) -> Reading {
        Reading {
            at,
            white: lever::shown(reading, placement, Color::White),
            black: lever::shown(reading, placement, Color::Black),
            running: reading.status.running,
        }
    }

    fn get(&self, c: Color) -> Millis {
        match c {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }
}

/// How far a display may move between two readings beyond what the time between them
/// explains: one second of display rounding and half a second of the frames' travel.
pub const JUMP_SLACK: Millis = Millis(1_500);

/// A clock taken as official outside a press, further than this from the reckoning, is
/// said in words: a clock set by hand to other times than the round's control, or one
/// that stood still. Closer than this it is the arbiter starting it a moment late.
pub const ADOPTION_ALERT: Millis = Millis(5_000);

/// A clock that changed, between two readings with no press between them, by more than
/// the time that passed, or went up: what happened, in words (`None`: nothing odd).
pub fn jump(board: &str, before: &Reading, after: &Reading) -> Option<String> {
    let elapsed = after.at - before.at;
    for c in Color::ALL {
        let (b, a) = (before.get(c), after.get(c));
        if a > b + JUMP_SLACK {
            return Some(format!(
                "board {board}: the clock's time for {c} went up from {} to {} without a press (set by hand?); the clock's time is taken as official",
                crate::pgn::clock(b),
                crate::pgn::clock(a)
            ));
        }
        if b - a > elapsed + JUMP_SLACK {
            return Some(format!(
                "board {board}: the clock's time for {c} jumped from {} to {} in {} s; the clock's time is taken as official",
                crate::pgn::clock(b),
                crate::pgn::clock(a),
                elapsed.0 / 1000
            ));
        }
    }
    None
}

/// After a press: the clock's time for the presser against the reckoning, which was the
/// clock's own a moment before (readings are adopted) and added the round's increment.
/// A difference beyond the display's resolution is the clock adding another increment.
/// How much, the clock's own readings say best: a DGT clock reports each second as its
/// display changes, so the presser's last reading (`before`, at its instant) was exact
/// and the increment is what the display shows after the press beyond it, less the
/// whole seconds run since; without one, the reckoning's difference, rounded.
/// Returns (what the clock adds, what the round adds) in whole seconds.
pub fn increment(
    declared: Millis,
    reckoned: Millis,
    shown: Millis,
    before: Option<(Millis, Millis)>,
    at: Millis,
) -> Option<(i64, i64)> {
    let off = shown - reckoned;
    if off.0.abs() <= JUMP_SLACK.0 {
        return None;
    }
    let secs = match before {
        Some((then, was)) if at >= then => {
            (shown - was).0.div_euclid(1000) + (at - then).0.div_euclid(1000)
        }
        // Rounded to the second: the display has no finer resolution.
        _ => (declared + off).0.saturating_add(500).div_euclid(1000),
    };
    let round = declared.0 / 1000;
    (secs != round).then_some((secs.max(0), round))
}

/// The name the game's pause and resume go under when the hand-set clock stops and runs
/// again: no arbiter acted, the clock did (6.12a's events name who stopped the clocks).
pub const CLOCK: &str = "the hand-set clock";

/// What the driver remembers between readings.
#[derive(Debug, Default)]
pub struct Observed {
    /// The last reading, or the clock's times right after the last press.
    pub last: Option<Reading>,
    /// The `clock_flag` alert carries the flag's 6.9 verdict.
    pub verdict_said: bool,
    /// Since when more presses than one wait for their moves on the board.
    pub unexplained_since: Option<Millis>,
    /// When to ask the board for the clock's reading next, while a game runs.
    pub poll_at: Option<tokio::time::Instant>,
}

/// A DGT clock reports its changes, a running one every second; one that has said nothing
/// this long is asked (a stopped clock has no changes to report).
pub const READING_DUE: Millis = Millis(1_500);

/// How long presses may wait for their moves before it is said: a blitz player presses
/// before the board's scan reports the move (even twice), and the move arrives within
/// the settle time; one that has not in this long is not coming.
pub const PRESSES_WAIT: Millis = Millis(2_000);

impl BoardActor {
    pub(super) fn observing(&self) -> bool {
        self.mode == BoardMode::Observe
    }

    /// When the driver must wake to ask for a reading (observe mode, a game running).
    pub(super) fn observe_poll_at(&mut self) -> Option<tokio::time::Instant> {
        if !self.observing() || !self.online || !self.running_game() {
            self.observed.poll_at = None;
            return None;
        }
        Some(
            *self.observed.poll_at.get_or_insert_with(|| {
                tokio::time::Instant::now() + std::time::Duration::from_secs(1)
            }),
        )
    }

    /// Ask for the clock's reading if it has been silent: a stopped hand-set clock must
    /// be seen as stopped, or the reckoning would run on without it.
    pub(super) async fn observe_poll(&mut self) {
        self.observed.poll_at = None;
        let now = self.now();
        let silent = self.observed.last.is_none_or(|r| now - r.at >= READING_DUE);
        if silent {
            let _ = self.link.send(LinkCommand::RequestClock).await;
        }
    }

    /// Paused because the hand-set clock stood still (not by an arbiter or a player).
    fn paused_by_the_clock(&self) -> bool {
        self.slot.as_ref().is_some_and(|s| {
            matches!(
                s.game.phase(),
                Phase::Paused(crate::rules::game::PausedBy::Arbiter { arbiter, .. }) if arbiter == CLOCK
            )
        })
    }

    /// A reading of the hand-set clock: reconcile it with what came before, then take its
    /// times as the official ones.
    pub(super) async fn observe_reading(&mut self, clock: ClockTime) {
        let now = self.now();
        let reading = Reading::of(&clock, self.placement, now);
        let previous = self.observed.last.replace(reading);
        if reading.running && self.paused_by_the_clock() {
            // The hand-set clock runs again: so does the game, from the clock's times.
            let resume = Input::Resume {
                arbiter: CLOCK.into(),
            };
            if let Err(r) = self.decide_at(resume, now).await {
                tracing::info!(board = %self.id, reason = %r, "the hand-set clock runs again; the game stays paused");
            }
        }
        if !self.running_game() {
            return;
        }
        let jumped = previous.and_then(|before| jump(&self.id, &before, &reading));
        if let Some(message) = &jumped {
            self.raise(AlertKind::ClockJump, Severity::Warning, message.clone());
        }
        // A flag is the clock's flag bits, or one side at 0:00; both at 0:00 with no flag
        // is a clock nobody has set yet (it is not running either: said as stopped).
        let flagged = [clock.left, clock.right]
            .iter()
            .any(|s| s.flag || s.final_flag)
            || ((reading.white == Millis::ZERO) != (reading.black == Millis::ZERO));
        if !reading.running && !flagged {
            self.raise(
                AlertKind::ClockStopped,
                Severity::Warning,
                Said::new(
                    "clock_stopped",
                    json!({ "board": self.id, "white_ms": reading.white.0, "black_ms": reading.black.0 }),
                    format!(
                        "board {}: the clock is not running while the game is (stopped by hand, or never started); it stands at White {}, Black {}",
                        self.id,
                        crate::pgn::clock(reading.white),
                        crate::pgn::clock(reading.black)
                    ),
                ),
            );
            // The clock is the official time, and it stands still: so does the game
            // (6.12a, in the clock's name), or the reckoning would run on and flag a
            // player whose clock shows time. It goes on when the clock runs again.
            let pause = Input::Pause {
                arbiter: CLOCK.into(),
                reason: "the hand-set clock stopped".into(),
            };
            if let Err(r) = self.decide_at(pause, now).await {
                tracing::info!(board = %self.id, reason = %r, "the hand-set clock stopped; the game not paused");
            }
            return;
        }
        self.clear(AlertKind::ClockStopped);
        self.press_count(now);
        if let Some((white, black)) = self.adopt(reading).await
            && jumped.is_none()
            && ((white - reading.white).0.abs() > ADOPTION_ALERT.0
                || (black - reading.black).0.abs() > ADOPTION_ALERT.0)
        {
            self.raise(
                AlertKind::ClockJump,
                Severity::Warning,
                Said::new(
                    "clock_jump",
                    json!({
                        "board": self.id,
                        "white_ms": reading.white.0,
                        "black_ms": reading.black.0,
                        "reckoned_white_ms": white.0,
                        "reckoned_black_ms": black.0,
                    }),
                    format!(
                        "board {}: the clock shows White {}, Black {} where the round's control and the presses reckon White {}, Black {}; the clock's times are taken as official",
                        self.id,
                        crate::pgn::clock(reading.white),
                        crate::pgn::clock(reading.black),
                        crate::pgn::clock(white),
                        crate::pgn::clock(black)
                    ),
                ),
            );
        }
        if flagged {
            self.flag_seen(reading).await;
        }
    }

    /// The clock's times become the official ones where the reckoning cannot mean them;
    /// the reckoning they replaced, when they did.
    async fn adopt(&mut self, reading: Reading) -> Option<(Millis, Millis)> {
        let input = Input::ClockTimes {
            white: reading.white,
            black: reading.black,
        };
        let before = self.slot.as_ref().map_or(0, |s| s.events.len());
        let _ = self.decide_at(input, reading.at).await;
        let adopted = self.slot.as_ref().and_then(|s| {
            s.events[before.min(s.events.len())..]
                .iter()
                .find_map(|e| match e {
                    Event::ClockTimesAdopted {
                        reckoned_white_ms,
                        reckoned_black_ms,
                        ..
                    } => Some((*reckoned_white_ms, *reckoned_black_ms)),
                    _ => None,
                })
        });
        // A clock at 0:00 is a flag due now: record it at once.
        if self
            .slot
            .as_ref()
            .and_then(|s| s.game.next_deadline())
            .is_some_and(|d| d <= self.now())
        {
            self.on_deadline().await;
        }
        adopted
    }

    /// The clock shows a flag: say whose, and what the arbiter's confirmation would decide
    /// (6.9 from the board's position). Claim mode holds the result until then.
    async fn flag_seen(&mut self, reading: Reading) {
        // Said once with its verdict: the 6.9 search is not run again at every reading
        // of the same flag.
        if self.observed.verdict_said {
            return;
        }
        let Some(slot) = &self.slot else { return };
        let side = if reading.white <= reading.black {
            Color::White
        } else {
            Color::Black
        };
        let Some(pending) = slot.game.view(self.now()).pending_flag else {
            self.raise(
                AlertKind::ClockFlag,
                Severity::Critical,
                Said::new(
                    "clock_flag",
                    json!({ "board": self.id, "side": side }),
                    format!("board {}: the clock shows {side}'s flag", self.id),
                ),
            );
            return;
        };
        // What `confirm_flag` would decide, asked now and applied only by the arbiter.
        let game = slot.game.clone();
        let now = self.now();
        let permit = self.searches.clone().acquire_owned().await;
        let preview = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            game.decide(
                &Input::ConfirmFlag {
                    arbiter: "preview".into(),
                },
                now,
            )
        })
        .await;
        let ended = match &preview {
            Ok(Ok(events)) => events.iter().find_map(|e| match e {
                Event::GameEnded { result, .. } => Some(result.clone()),
                _ => None,
            }),
            _ => None,
        };
        let verdict = match preview {
            Ok(Ok(_)) => ended.as_ref().map_or_else(
                || "the arbiter decides".to_string(),
                |r| format!("confirm_flag records {}", describe_result(r)),
            ),
            Ok(Err(r)) => format!("the arbiter decides: {r}"),
            Err(_) => "the arbiter decides: the 6.9 search failed".to_string(),
        };
        self.observed.verdict_said = true;
        self.raise_since(
            AlertKind::ClockFlag,
            Severity::Critical,
            Said::new(
                if ended.is_some() {
                    "clock_flag.verdict"
                } else {
                    "clock_flag.undecided"
                },
                json!({ "board": self.id, "side": pending.side, "result": ended }),
                format!(
                    "board {}: the clock shows {}'s flag; 6.9 from the board's position: {verdict}; the result waits for the arbiter's confirmation (hand-set clock)",
                    self.id, pending.side
                ),
            ),
            pending.at,
        );
    }

    /// A press on the hand-set clock, accepted by the rules: compare what the clock
    /// added with the round's increment, and take the clock's times.
    /// `before`: how many events the game had before the press, so only its own are read.
    pub(super) async fn observe_press(&mut self, clock: ClockTime, before: usize) {
        let now = self.now();
        let reading = Reading::of(&clock, self.placement, now);
        let previous = self.observed.last.replace(reading);
        let Some(slot) = &self.slot else { return };
        let new = slot.events.get(before..).unwrap_or_default();
        let pressed = new.iter().find_map(|e| match e {
            Event::Pressed {
                side,
                increment_ms,
                remaining_ms,
                ..
            } => Some((*side, *increment_ms, *remaining_ms)),
            _ => None,
        });
        // A new period's time: the clock may add it otherwise (DGT "000"); not an
        // increment to compare.
        let advanced = new
            .iter()
            .any(|e| matches!(e, Event::PeriodAdvanced { .. }));
        if let Some((side, declared, reckoned)) = pressed
            && !advanced
            && let Some((applied, round)) = increment(
                declared,
                reckoned,
                reading.get(side),
                previous.map(|p| (p.at, p.get(side))),
                now,
            )
        {
            self.raise(
                AlertKind::ClockIncrement,
                Severity::Warning,
                Said::new(
                    "clock_increment",
                    json!({ "board": self.id, "clock_ms": applied * 1000, "round_ms": round * 1000 }),
                    format!(
                        "board {}: the clock adds {applied} s per move, the round's control adds {round} s",
                        self.id
                    ),
                ),
            );
        }
        let _ = self.adopt(reading).await;
    }

    /// The presses the clock saw against the moves the board showed: more than one press
    /// waiting for its move for `PRESSES_WAIT` means presses the board does not explain
    /// (a knock on the lever, a move not made on the board).
    fn press_count(&mut self, now: Millis) {
        let Some(slot) = &self.slot else { return };
        let presses = slot
            .events
            .iter()
            .filter(|e| matches!(e, Event::Pressed { .. }))
            .count();
        let moves = slot
            .events
            .iter()
            .filter(|e| matches!(e, Event::MoveMade { .. }))
            .count();
        if presses <= moves + 1 {
            self.observed.unexplained_since = None;
            return;
        }
        let since = *self.observed.unexplained_since.get_or_insert(now);
        if now - since >= PRESSES_WAIT {
            let message = format!(
                "board {}: the clock was pressed {presses} times, the board shows {moves} moves",
                self.id
            );
            let params = json!({ "board": self.id, "presses": presses, "moves": moves });
            self.raise(
                AlertKind::ClockPresses,
                Severity::Warning,
                Said::new("clock_presses", params, message),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(at: i64, white: i64, black: i64) -> Reading {
        Reading {
            at: Millis(at * 1000),
            white: Millis(white * 1000),
            black: Millis(black * 1000),
            running: true,
        }
    }

    #[test]
    fn a_clock_that_runs_as_time_passes_has_not_jumped() {
        assert_eq!(jump("b", &r(0, 300, 300), &r(1, 299, 300)), None);
        // Display rounding: a reading late by a frame.
        assert_eq!(jump("b", &r(0, 300, 300), &r(1, 298, 300)), None);
        assert_eq!(
            jump("b", &r(0, 300, 300), &r(5, 300, 300)),
            None,
            "stopped is not a jump"
        );
    }

    #[test]
    fn a_clock_that_went_up_or_fell_faster_than_time_has_jumped() {
        let up = jump("b-1", &r(0, 300, 300), &r(1, 299, 360)).unwrap_or_default();
        assert!(up.contains("black went up from 0:05:00 to 0:06:00"), "{up}");
        let down = jump("b-1", &r(0, 300, 300), &r(1, 240, 300)).unwrap_or_default();
        assert!(
            down.contains("white jumped from 0:05:00 to 0:04:00 in 1 s"),
            "{down}"
        );
    }

    #[test]
    fn an_increment_within_the_display_resolution_agrees() {
        let s = |x: i64| Millis(x * 1000);
        assert_eq!(increment(s(30), s(330), s(331), None, s(0)), None);
        assert_eq!(increment(s(30), Millis(330_400), s(329), None, s(0)), None);
        assert_eq!(increment(s(30), s(330), s(300), None, s(0)), Some((0, 30)));
        assert_eq!(increment(s(0), s(300), s(310), None, s(0)), Some((10, 0)));
    }

    #[test]
    fn the_clocks_own_readings_say_what_it_added() {
        let s = |x: i64| Millis(x * 1000);
        // Last reading 300 at 10 s; pressed at 10.9 s: 299.1 s, shown 300 (+0: the
        // display rounds up). The reckoning, a second off, would say +1.
        assert_eq!(
            increment(
                s(30),
                Millis(328_600),
                s(300),
                Some((s(10), s(300))),
                Millis(10_900)
            ),
            Some((0, 30))
        );
        // Pressed 2.5 s after the last reading, +5 on the clock.
        assert_eq!(
            increment(s(30), s(330), s(303), Some((s(10), s(300))), Millis(12_500)),
            Some((5, 30))
        );
    }
}
