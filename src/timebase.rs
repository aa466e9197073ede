//! The shell's clock: `Millis` (UTC) derived from a monotonic clock anchored to UTC at
//! start-up, so an NTP step never moves a running chess clock (DESIGN.md §1).

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::rules::Millis;

#[derive(Debug, Clone, Copy)]
pub struct Timebase {
    utc0: Millis,
    t0: Instant,
}

impl Timebase {
    /// Anchored now. (tokio's `Instant`, so tests with paused time control it.)
    pub fn start() -> Timebase {
        let utc0 = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| Millis(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
            .unwrap_or(Millis::ZERO);
        Timebase {
            utc0,
            t0: Instant::now(),
        }
    }

    /// The same clock moved by `by`: a node whose wall clock is off (the test hook
    /// `HALLCLOCK_TEST_CLOCK_OFFSET_MS` of `hall::start`).
    pub fn shifted(self, by: Millis) -> Timebase {
        Timebase {
            utc0: self.utc0 + by,
            t0: self.t0,
        }
    }

    pub fn now(&self) -> Millis {
        self.at(Instant::now())
    }

    pub fn at(&self, t: Instant) -> Millis {
        let since = t.saturating_duration_since(self.t0);
        self.utc0 + Millis(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }

    /// The monotonic instant of a UTC time (past instants map to the anchor or later).
    pub fn instant_of(&self, t: Millis) -> Instant {
        let after = (t - self.utc0).non_negative();
        self.t0 + std::time::Duration::from_millis(u64::try_from(after.0).unwrap_or(0))
    }
}
