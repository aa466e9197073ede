//! The `server_clock` alert's words as data (issue 39): a step of the server's clock
//! while running, and what the start found of it (`timebase`'s notes), each with its code.

use serde_json::json;

use crate::alert::Said;

/// A step of the server's clock while running, as data (`server_clock.step_*`).
pub(super) fn step_said(step: &crate::timebase::Step) -> Said {
    let code = if step.by.0 > 0 {
        "server_clock.step_forward"
    } else {
        "server_clock.step_back"
    };
    Said::new(
        code,
        json!({ "by_ms": step.by.0.abs(), "at": step.civil.0 }),
        step.message(),
    )
}

/// What the start found of the server's clock, as data (`server_clock.*`).
pub(super) fn note_said(note: &crate::timebase::TimeNote) -> Said {
    use crate::timebase::TimeNote;
    let (code, params) = match note {
        TimeNote::SteppedWhileStopped { by } if by.0 > 0 => {
            ("server_clock.stopped_forward", json!({ "by_ms": by.0 }))
        }
        TimeNote::SteppedWhileStopped { by } => {
            ("server_clock.stopped_back", json!({ "by_ms": by.0.abs() }))
        }
        TimeNote::BehindJournal { by } => (
            "server_clock.behind_journal",
            json!({ "by_ms": by.0.abs() }),
        ),
        TimeNote::Reboot { gap } => ("server_clock.reboot", json!({ "gap_ms": gap.0 })),
    };
    Said::new(code, params, note.message())
}
