//! The shell's clocks (DESIGN.md §1, ARCHITECTURE.md "Where game time comes from").
//!
//! Two times, kept apart on purpose:
//! - **game time** ([`Timebase::now`]): the timeline every game, journal record and
//!   published instant is on. Within a run it is a monotonic clock from an anchor, so a
//!   wall-clock step never moves a running chess clock; across a restart it goes on from
//!   where the journal left it ([`resume`]), never from the wall clock alone.
//! - **civil time** ([`Timebase::civil`]): the server's wall clock as it is now. What
//!   people and other machines say is civil: a signed command's `ts`, a round's `start`.
//!   The offset between the two ([`Timebase::offset`]) is zero unless the wall clock was
//!   stepped while games were live; commands' instants are mapped through it.
//!
//! The decision at start-up is pure ([`resume`]): what the journal's last time anchor
//! says, what this boot's clocks say, and whether games are live, in; game time now and
//! whether the live games need a witness, out.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::rules::Millis;

#[derive(Debug, Clone, Copy)]
pub struct Timebase {
    game0: Millis,
    t0: Instant,
    /// Added to the system clock's reading: the test hook `HALLCLOCK_TEST_CLOCK_OFFSET_MS`
    /// (a node whose clock is off). Zero in a hall.
    wall_shift: Millis,
    /// The hall's time as the chief arbiter set it, minus the server's clock (ms): zero
    /// unless set from the dashboard (`Hall::set_hall_time`). Shared by every copy of this
    /// hall's timebase (the board actors, MQTT, the web), so one hall, one civil time:
    /// leaked once per hall start (8 bytes), which keeps the timebase `Copy`.
    correction: &'static AtomicI64,
}

/// The system's wall clock, in ms since the Unix epoch.
pub fn system_wall() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| Millis(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
        .unwrap_or(Millis::ZERO)
}

impl Timebase {
    /// Anchored now, game time = the wall clock. (tokio's `Instant`, so tests with paused
    /// time control it.)
    pub fn start() -> Timebase {
        Timebase::at_game(system_wall())
    }

    /// Anchored now, with game time `game` now.
    pub fn at_game(game: Millis) -> Timebase {
        Timebase {
            game0: game,
            t0: Instant::now(),
            wall_shift: Millis::ZERO,
            correction: Box::leak(Box::new(AtomicI64::new(0))),
        }
    }

    /// Anchored now with game time `game`, the wall clock read `wall_shift` off (the test
    /// hook; zero in a hall): a start that goes on from the journal ([`resume`]).
    pub fn resumed(game: Millis, wall_shift: Millis) -> Timebase {
        Timebase {
            wall_shift,
            ..Timebase::at_game(game)
        }
    }

    /// The same clocks with the wall clock read `by` off: a node whose wall clock is off
    /// (the test hook `HALLCLOCK_TEST_CLOCK_OFFSET_MS` of `hall::start`). Game time moves
    /// with it, as it would have had the daemon started on that clock.
    pub fn shifted(self, by: Millis) -> Timebase {
        Timebase {
            game0: self.game0 + by,
            wall_shift: self.wall_shift + by,
            ..self
        }
    }

    /// Game time now.
    pub fn now(&self) -> Millis {
        self.at(Instant::now())
    }

    /// Civil time now: the wall clock as it reads at this moment, with the hall's time
    /// correction if the chief arbiter set one.
    pub fn civil(&self) -> Millis {
        self.wall() + self.correction()
    }

    /// The server's own wall clock, without the hall's correction.
    pub fn wall(&self) -> Millis {
        system_wall() + self.wall_shift
    }

    /// The hall's time correction (see the field).
    pub fn correction(&self) -> Millis {
        Millis(self.correction.load(Ordering::Relaxed))
    }

    /// Set the hall's time correction: civil time moves, game time does not.
    pub fn set_correction(&self, c: Millis) {
        self.correction.store(c.0, Ordering::Relaxed);
    }

    /// Civil minus game time now: zero unless the wall clock was stepped while games were
    /// live (or the daemon went on from a journal across such a step).
    pub fn offset(&self) -> Millis {
        self.civil() - self.now()
    }

    pub fn at(&self, t: Instant) -> Millis {
        let since = t.saturating_duration_since(self.t0);
        self.game0 + Millis(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }

    /// The monotonic instant of a game time (past instants map to the anchor or later).
    pub fn instant_of(&self, t: Millis) -> Instant {
        let after = (t - self.game0).non_negative();
        self.t0 + std::time::Duration::from_millis(u64::try_from(after.0).unwrap_or(0))
    }
}

/// Where game time stood against this boot's clocks: journaled at every start and at every
/// wall-clock step, so that a restart in the same boot knows exactly how much time passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    /// `/proc/sys/kernel/random/boot_id`: a restart in the same boot has the same.
    pub boot: String,
    /// Time since boot, suspend included (CLOCK_BOOTTIME, `/proc/uptime`), in ms.
    pub boottime: Millis,
    /// Game time at that moment.
    pub at: Millis,
    /// Civil time at that moment (the wall clock plus `correction`).
    pub civil: Millis,
    /// The hall's time correction then (set by the chief arbiter; 0 unless set).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub correction: Millis,
}

fn is_zero(m: &Millis) -> bool {
    m.0 == 0
}

/// This boot's clocks, read at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    pub boot: String,
    pub boottime: Millis,
    pub wall: Millis,
}

/// What the journal says of time: its last anchor, its latest instant, and whether it
/// holds a live (unfinished) game.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalTime {
    pub anchor: Option<Anchor>,
    pub latest: Option<Millis>,
    pub live: bool,
}

/// How game time goes on after a start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    /// Game time now.
    pub game: Millis,
    /// The live games' time since the journal's latest record is not known (a reboot, or
    /// a journal without an anchor): each must be witnessed by its clock's reading, or is
    /// held for the arbiter from `since`.
    pub unwitnessed: Option<Millis>,
    /// What to tell the arbiters, if anything.
    pub note: Option<TimeNote>,
    /// The hall's time correction that still holds (same boot, server clock not set
    /// meanwhile), else zero.
    pub correction: Millis,
}

/// Something about time at start-up that the arbiters are told (a `server_clock` alert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeNote {
    /// Same boot: the wall clock moved by `by` more than the boot clock while the daemon
    /// was stopped; game time went on from the boot clock.
    SteppedWhileStopped { by: Millis },
    /// After a reboot the wall clock reads `by` before the journal's latest record: game
    /// time goes on from that record.
    BehindJournal { by: Millis },
    /// After a reboot with live games: the wall clock says `gap` passed since the
    /// journal's latest record; each game is checked against its clock.
    Reboot { gap: Millis },
}

/// Beyond this a wall-clock movement is a step, not a slew (NTP slews at most 0.5 ms/s).
pub const STEP: Millis = Millis(2_000);

/// Game time after a start (pure; see the module's docs and ARCHITECTURE.md).
///
/// - Same boot as the last anchor: game time is the anchor's plus the boot clock's
///   advance, exactly, whatever the wall clock did. With nothing live, game time comes
///   back to the wall clock when that does not run it backwards.
/// - Otherwise (a reboot, or no anchor): the wall clock, never before the journal's
///   latest instant; live games are unwitnessed from that instant.
pub fn resume(journal: &JournalTime, here: &Here) -> Resumed {
    let floor = match (&journal.anchor, journal.latest) {
        (Some(a), Some(l)) => Some(a.at.max(l)),
        (Some(a), None) => Some(a.at),
        (None, l) => l,
    };
    let at_least = |t: Millis| floor.map_or(t, |f| t.max(f));
    let same_boot = journal
        .anchor
        .as_ref()
        .filter(|a| a.boot == here.boot && here.boottime >= a.boottime);
    if let Some(a) = same_boot {
        let passed = here.boottime - a.boottime;
        let exact = at_least(a.at + passed);
        let stepped = here.wall + a.correction - (a.civil + passed);
        let still = stepped.0.abs() <= STEP.0;
        let note = (!still).then_some(TimeNote::SteppedWhileStopped { by: stepped });
        // A correction set by the chief arbiter holds while the server's clock keeps the
        // same error; once that clock was set, it is trusted again.
        let correction = if still { a.correction } else { Millis::ZERO };
        let game = if journal.live {
            exact
        } else {
            at_least(here.wall + correction)
        };
        return Resumed {
            game,
            unwitnessed: None,
            note,
            correction,
        };
    }
    let game = at_least(here.wall);
    let Some(floor) = floor else {
        return Resumed {
            game,
            unwitnessed: None,
            note: None,
            correction: Millis::ZERO,
        };
    };
    let note = if here.wall < floor {
        Some(TimeNote::BehindJournal {
            by: floor - here.wall,
        })
    } else if journal.live {
        Some(TimeNote::Reboot {
            gap: here.wall - floor,
        })
    } else {
        None
    };
    Resumed {
        game,
        unwitnessed: journal.live.then_some(floor),
        note,
        correction: Millis::ZERO,
    }
}

/// A duration in words: "6 h 0 min 12 s", "10 min 0 s", "3.5 s".
pub fn words(d: Millis) -> String {
    let ms = d.0.unsigned_abs();
    let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
    if h > 0 {
        format!("{h} h {m} min {s} s")
    } else if m > 0 {
        format!("{m} min {s} s")
    } else if ms % 1000 / 100 == 0 {
        format!("{s} s")
    } else {
        format!("{}.{} s", s, ms % 1000 / 100)
    }
}

impl TimeNote {
    /// The alert's words.
    pub fn message(&self) -> String {
        match self {
            TimeNote::SteppedWhileStopped { by } => format!(
                "the server's clock moved {} {} while hallclock was stopped (NTP, or set by hand?): game clocks went on from the server's boot clock and lost nothing; signed commands and scheduled starts use the new time",
                if by.0 > 0 { "forward" } else { "back" },
                words(*by)
            ),
            TimeNote::BehindJournal { by } => format!(
                "the server's clock reads {} before the journal's last record (a reboot without a real-time clock?): game time goes on from the journal; every game that was running is checked against its clock and held for the arbiter where they disagree; set the server's clock (chrony, timedatectl) — game clocks will not move",
                words(*by)
            ),
            TimeNote::Reboot { gap } => format!(
                "the server restarted after a reboot; its clock says {} passed since the journal's last record, which cannot be checked: every game that was running is checked against its clock's own reading and held for the arbiter where they disagree or no clock answers",
                words(*gap)
            ),
        }
    }
}

/// Why the hall's time cannot be set to `wanted`, given the server's own clock `wall`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetTimeError {
    #[error(
        "the server's clock already reads {} ({} from the time asked): there is nothing to set",
        wall.utc(),
        words(*wanted - *wall)
    )]
    Agrees { wanted: Millis, wall: Millis },
    #[error(
        "{} is {} from the server's clock ({}): more than a day; set the server's clock itself (chronyc settime, timedatectl set-time)",
        wanted.utc(),
        words(*wanted - *wall),
        wall.utc()
    )]
    TooFar { wanted: Millis, wall: Millis },
}

/// Within a minute there is nothing to mend; beyond a day it is not a clock that drifted
/// or lost a night, but a typo or a wrong device: the server's clock is set by hand then.
pub const SET_AT_LEAST: Millis = Millis(60_000);
pub const SET_AT_MOST: Millis = Millis(24 * 3_600_000);

/// The correction that makes civil time `wanted` on a server whose own clock reads `wall`.
pub fn correction_for(wanted: Millis, wall: Millis) -> Result<Millis, SetTimeError> {
    let c = wanted - wall;
    if c.0.abs() < SET_AT_LEAST.0 {
        return Err(SetTimeError::Agrees { wanted, wall });
    }
    if c.0.abs() > SET_AT_MOST.0 {
        return Err(SetTimeError::TooFar { wanted, wall });
    }
    Ok(c)
}

/// A wall-clock step seen while running: civil time moved by `by` against game time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub by: Millis,
    /// Civil time after the step.
    pub civil: Millis,
}

impl Step {
    /// The alert's words: "the server's clock moved forward 6 h 0 min 12 s at 14:03 …".
    pub fn message(&self) -> String {
        format!(
            "the server's clock moved {} {} at {} (NTP, or set by hand?): no game clock moved; signed commands and scheduled starts use the new time",
            if self.by.0 > 0 { "forward" } else { "back" },
            words(self.by),
            self.civil.utc()
        )
    }
}

/// Watches the offset between civil and game time for steps (sans-IO: the hall's loop
/// gives it the offset once a second).
///
/// It also keeps the **settled** offset, the one commands' instants are mapped through: it
/// moves at a step, or quietly once a slew has moved the live offset by a second. Why not
/// the live offset: two clock reads a few microseconds apart differ by a millisecond now
/// and then, and a round's `start` must come out exactly as it was sent.
#[derive(Debug, Clone, Copy)]
pub struct StepWatch {
    last: Millis,
    settled: Millis,
}

/// How far a slew may move the live offset before the settled one follows.
pub const SLEW_FOLLOWED: Millis = Millis(1_000);

impl StepWatch {
    /// An offset within [`SLEW_FOLLOWED`] of zero settles at zero: the boot clock's
    /// 10 ms and the moment between two clock reads are not a step, and a command's
    /// instants then come out exactly as sent.
    pub fn new(offset: Millis) -> StepWatch {
        let settled = if offset.0.abs() <= SLEW_FOLLOWED.0 {
            Millis::ZERO
        } else {
            offset
        };
        StepWatch {
            last: offset,
            settled,
        }
    }

    /// The offset commands' instants are mapped through (civil minus game time).
    pub fn settled(&self) -> Millis {
        self.settled
    }

    /// The offset is now `offset`, by a decision (the hall's time set): no step.
    pub fn settle(&mut self, offset: Millis) {
        self.last = offset;
        self.settled = offset;
    }

    /// The offset now and civil time now: a step when the offset moved beyond [`STEP`]
    /// since the last call (a slew is followed quietly).
    pub fn check(&mut self, offset: Millis, civil: Millis) -> Option<Step> {
        let by = offset - self.last;
        self.last = offset;
        if by.0.abs() > STEP.0 || (offset - self.settled).0.abs() > SLEW_FOLLOWED.0 {
            self.settled = offset;
        }
        (by.0.abs() > STEP.0).then_some(Step { by, civil })
    }
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), or the test hook
/// `HALLCLOCK_TEST_BOOT_ID` (a reboot seen from a test, which cannot reboot the machine).
pub fn boot_id() -> String {
    if let Ok(id) = std::env::var("HALLCLOCK_TEST_BOOT_ID") {
        return id;
    }
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Time since boot with suspend (CLOCK_BOOTTIME), from `/proc/uptime` (10 ms): a file the
/// kernel writes, so no wall-clock faking reaches it.
pub fn boottime() -> Millis {
    let text = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    let first = text.split_whitespace().next().unwrap_or("0");
    let (s, frac) = first.split_once('.').unwrap_or((first, "0"));
    let s: i64 = s.parse().unwrap_or(0);
    let cs: i64 = format!("{frac:0<2}")[..2].parse().unwrap_or(0);
    Millis(s * 1000 + cs * 10)
}

/// This boot's clocks now.
pub fn here(wall: Millis) -> Here {
    Here {
        boot: boot_id(),
        boottime: boottime(),
        wall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn anchor(boot: &str, boottime: i64, at: i64) -> Anchor {
        Anchor {
            boot: boot.into(),
            boottime: Millis(boottime),
            at: Millis(at),
            civil: Millis(at),
            correction: Millis::ZERO,
        }
    }

    fn here(boot: &str, boottime: i64, wall: i64) -> Here {
        Here {
            boot: boot.into(),
            boottime: Millis(boottime),
            wall: Millis(wall),
        }
    }

    fn live(a: Anchor, latest: i64) -> JournalTime {
        JournalTime {
            anchor: Some(a),
            latest: Some(Millis(latest)),
            live: true,
        }
    }

    /// Finding 1 of issue 36: started 6 h behind, corrected, restarted in the same boot:
    /// game time is the boot clock's, not the corrected wall clock's.
    #[test]
    fn same_boot_game_time_comes_from_the_boot_clock_whatever_the_wall_clock_did() {
        let t0 = 1_000 * H;
        let j = live(anchor("b1", 50_000, t0), t0 + 40_000);
        for step in [-24 * H, -6 * H, -600_000, 0, 6 * H, 24 * H] {
            let r = resume(&j, &here("b1", 110_000, t0 + 60_000 + step));
            assert_eq!(r.game, Millis(t0 + 60_000), "step {step}");
            assert_eq!(r.unwitnessed, None);
            assert_eq!(
                r.note.is_some(),
                step != 0,
                "a step is said, none is not: {step}"
            );
        }
    }

    #[test]
    fn same_boot_never_goes_back_before_the_journals_latest_record() {
        let j = live(anchor("b1", 50_000, 1_000), 90_000);
        assert_eq!(resume(&j, &here("b1", 60_000, 11_000)).game, Millis(90_000));
    }

    #[test]
    fn with_nothing_live_game_time_comes_back_to_the_wall_clock_unless_it_would_run_back() {
        let mut j = live(anchor("b1", 0, 10 * H), 10 * H);
        j.live = false;
        assert_eq!(resume(&j, &here("b1", 1_000, 16 * H)).game, Millis(16 * H));
        assert_eq!(resume(&j, &here("b1", 1_000, 4 * H)).game, Millis(10 * H));
        assert_eq!(resume(&j, &here("b2", 1_000, 4 * H)).unwitnessed, None);
    }

    /// Finding 2 and the reboot: the wall clock is a guess, never behind the journal, and
    /// the live games are unwitnessed from the journal's latest instant.
    #[test]
    fn after_a_reboot_live_games_are_unwitnessed_from_the_journals_latest_instant() {
        let t0 = 1_000 * H;
        let j = live(anchor("b1", 50_000, t0), t0 + 40_000);
        for step in [-24 * H, -6 * H, -600_000, 6 * H, 24 * H] {
            let r = resume(&j, &here("b2", 20_000, t0 + 100_000 + step));
            assert!(r.game >= Millis(t0 + 40_000), "never backwards: {step}");
            assert_eq!(r.unwitnessed, Some(Millis(t0 + 40_000)));
            let behind = matches!(r.note, Some(TimeNote::BehindJournal { .. }));
            assert_eq!(behind, step < 0, "{step}");
        }
    }

    #[test]
    fn a_boot_clock_that_went_back_is_another_boot() {
        let j = live(anchor("b1", 50_000, 1_000), 1_000);
        assert_eq!(
            resume(&j, &here("b1", 10, 5_000)).unwitnessed,
            Some(Millis(1_000))
        );
    }

    #[test]
    fn a_journal_without_anchor_and_live_games_needs_witnesses_an_empty_one_does_not() {
        let old = JournalTime {
            anchor: None,
            latest: Some(Millis(7_000)),
            live: true,
        };
        assert_eq!(
            resume(&old, &here("b", 1, 9_000)).unwitnessed,
            Some(Millis(7_000))
        );
        let empty = JournalTime::default();
        let r = resume(&empty, &here("b", 1, 9_000));
        assert_eq!((r.game, r.unwitnessed, r.note), (Millis(9_000), None, None));
    }

    /// The hall's time set by the chief arbiter (the server 6 h behind) survives a
    /// restart in the same boot while the server's clock keeps its error, not once it is
    /// set, nor a reboot.
    #[test]
    fn a_correction_holds_while_the_servers_clock_keeps_its_error() {
        let t0 = 1_000 * H;
        let mut a = anchor("b1", 50_000, t0);
        a.correction = Millis(6 * H);
        a.civil = Millis(t0 + 6 * H);
        let j = live(a, t0);
        let kept = resume(&j, &here("b1", 60_000, t0 + 10_000));
        assert_eq!((kept.correction, kept.note), (Millis(6 * H), None));
        let set = resume(&j, &here("b1", 60_000, t0 + 6 * H + 10_000));
        assert_eq!(set.correction, Millis::ZERO);
        assert!(set.note.is_some());
        assert_eq!(resume(&j, &here("b2", 60_000, t0)).correction, Millis::ZERO);
    }

    #[test]
    fn a_step_is_beyond_two_seconds_and_a_slew_is_followed_quietly() {
        let mut w = StepWatch::new(Millis(0));
        assert_eq!(w.check(Millis(400), Millis(1)), None);
        assert_eq!(w.check(Millis(2_400), Millis(1)), None);
        let s = w.check(Millis(2_400 + 6 * H + 12_000), Millis(1));
        assert_eq!(s.map(|s| s.by), Some(Millis(6 * H + 12_000)));
        assert_eq!(w.check(Millis(2_400 + 6 * H + 12_000), Millis(1)), None);
        let back = w.check(Millis(0), Millis(1)).map(|s| s.by);
        assert_eq!(back, Some(Millis(-(2_400 + 6 * H + 12_000))));
    }

    #[test]
    fn the_settled_offset_ignores_milliseconds_follows_a_slew_by_the_second_and_a_step_at_once() {
        assert_eq!(StepWatch::new(Millis(-30)).settled(), Millis(0));
        assert_eq!(StepWatch::new(Millis(6 * H)).settled(), Millis(6 * H));
        let mut w = StepWatch::new(Millis(0));
        w.check(Millis(1), Millis(0));
        w.check(Millis(-1), Millis(0));
        assert_eq!(w.settled(), Millis(0));
        for ms in (0..=1_000).step_by(100) {
            w.check(Millis(ms), Millis(0));
        }
        assert_eq!(
            w.settled(),
            Millis(0),
            "a second of slew is not yet followed"
        );
        w.check(Millis(1_100), Millis(0));
        assert_eq!(w.settled(), Millis(1_100));
        w.check(Millis(6 * H), Millis(0));
        assert_eq!(w.settled(), Millis(6 * H));
        w.settle(Millis(42));
        assert_eq!(
            (w.settled(), w.check(Millis(42), Millis(0))),
            (Millis(42), None)
        );
    }

    #[test]
    fn the_halls_time_is_set_only_between_a_minute_and_a_day_off() {
        let wall = Millis(1_000 * H);
        assert_eq!(
            correction_for(wall + Millis(6 * H), wall),
            Ok(Millis(6 * H))
        );
        assert_eq!(
            correction_for(wall - Millis(61_000), wall),
            Ok(Millis(-61_000))
        );
        assert!(matches!(
            correction_for(wall + Millis(59_000), wall),
            Err(SetTimeError::Agrees { .. })
        ));
        assert!(matches!(
            correction_for(wall - Millis(25 * H), wall),
            Err(SetTimeError::TooFar { .. })
        ));
        assert_eq!(correction_for(wall + SET_AT_MOST, wall), Ok(SET_AT_MOST));
    }

    #[test]
    fn durations_are_in_words() {
        assert_eq!(words(Millis(6 * H + 12_000)), "6 h 0 min 12 s");
        assert_eq!(words(Millis(-600_000)), "10 min 0 s");
        assert_eq!(words(Millis(3_500)), "3.5 s");
        let s = Step {
            by: Millis(6 * H + 12_000),
            civil: Millis(0),
        };
        assert!(
            s.message()
                .starts_with("the server's clock moved forward 6 h 0 min 12 s at 1970-01-01")
        );
    }

    #[test]
    fn boottime_reads_the_kernels_uptime() {
        let a = boottime();
        assert!(a > Millis::ZERO);
        assert!(boottime() >= a);
    }
}
