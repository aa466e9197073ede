//! The hall screens' banner (issue 40): a message the chief arbiter puts on every hall
//! screen until an end time (`announce`). Each node writes its own retained
//! `node/<node>/announce` (one writer per retained topic) and the local feed's `announce`
//! (the dashboard and `/public`); at its end, or when the chief takes it down, the writer
//! replaces it with its clear, as an alert is cleared.
//!
//! The message is kept in `<state_dir>/announcement.json` before it is published, so a
//! restart puts it back on the screens until its end: an accepted command is never lost.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Hall;
use super::board::Refusal;
use crate::intake::refusal::{AnnounceError, MAX_ANNOUNCE_CHARS as MAX_CHARS};
use crate::mqtt::payload::AnnouncePayload;
use crate::rules::Millis;

/// A standing message, as kept on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    pub text: String,
    pub since: Millis,
    pub until: Millis,
}

/// The command's fields, read on the hall's civil clock `now`: `Some` to show, `None` to
/// take down.
pub fn read(
    text: Option<&str>,
    until: Option<Millis>,
    now: Millis,
) -> Result<Option<Announcement>, AnnounceError> {
    let Some(text) = text else {
        return match until {
            Some(_) => Err(AnnounceError::UntilWithoutText),
            None => Ok(None),
        };
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(AnnounceError::Blank);
    }
    let chars = text.chars().count();
    if chars > MAX_CHARS {
        return Err(AnnounceError::TooLong {
            chars,
            max: MAX_CHARS,
        });
    }
    if let Some((i, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(AnnounceError::Control {
            at: i + 1,
            code: u32::from(c),
        });
    }
    let until = until.ok_or(AnnounceError::NoUntil)?;
    if until <= now {
        return Err(AnnounceError::Past { until, now });
    }
    Ok(Some(Announcement {
        text: text.to_string(),
        since: now,
        until,
    }))
}

/// Where the standing message is kept.
pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("announcement.json")
}

/// Write (or, with `None`, remove) the kept message: a new file synced, then renamed over
/// the old, so a crash leaves one or the other whole.
pub fn store(state_dir: &Path, a: Option<&Announcement>) -> std::io::Result<()> {
    let path = file(state_dir);
    let Some(a) = a else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    let tmp = state_dir.join("announcement.json.new");
    let bytes = serde_json::to_vec(a).map_err(std::io::Error::other)?;
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    if let Ok(dir) = std::fs::File::open(state_dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The kept message, if one is there and reads; a damaged file is said and set aside.
pub fn load(state_dir: &Path) -> Option<Announcement> {
    let path = file(state_dir);
    let bytes = std::fs::read(&path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::warn!(file = %path.display(), "the hall screens' announcement does not read ({e}); it is left out");
            None
        }
    }
}

impl Hall {
    /// `announce`: kept, then on every screen; `text: null` takes it down.
    pub(super) fn announce(
        &mut self,
        text: Option<&str>,
        until: Option<Millis>,
    ) -> Result<(), Refusal> {
        let a = read(text, until, self.timebase.civil()).map_err(Refusal::Announce)?;
        store(&self.settings.state_dir, a.as_ref()).map_err(|e| Refusal::NotStored {
            reason: format!("{}: {e}", file(&self.settings.state_dir).display()),
        })?;
        match &a {
            Some(a) => tracing::info!(
                until = a.until.0,
                chars = a.text.chars().count(),
                "hall screens' announcement"
            ),
            None => tracing::info!("hall screens' announcement taken down"),
        }
        self.announcement = a;
        self.publish_announcement();
        Ok(())
    }

    /// At start: the kept message back on the screens while it stands; else the clear
    /// (a copy the broker kept from an earlier run goes).
    pub(super) fn restore_announcement(&mut self) {
        self.announcement =
            load(&self.settings.state_dir).filter(|a| a.until > self.timebase.civil());
        if self.announcement.is_none() {
            let _ = store(&self.settings.state_dir, None);
        }
        self.publish_announcement();
    }

    /// At every beat: a message past its end is cleared (the screens hide it at its end
    /// by themselves; this is for the retained topic and a screen that opens later).
    pub(super) fn expire_announcement(&mut self) {
        if self
            .announcement
            .as_ref()
            .is_some_and(|a| a.until <= self.timebase.civil())
        {
            if let Err(e) = store(&self.settings.state_dir, None) {
                tracing::warn!("the ended announcement's file stays: {e}");
            }
            self.announcement = None;
            self.publish_announcement();
        }
    }

    fn publish_announcement(&self) {
        let p = match &self.announcement {
            Some(a) => AnnouncePayload::Standing {
                text: a.text.clone(),
                since: a.since,
                until: a.until,
            },
            None => AnnouncePayload::Cleared { cleared: true },
        };
        let Ok(bytes) = serde_json::to_vec(&p) else {
            return;
        };
        self.publisher.retained(
            self.topics.node_announce(&self.settings.node),
            bytes.clone(),
        );
        self.publisher
            .feed()
            .push(&self.topics.announce(), &bytes, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = Millis(1_796_047_200_000);

    #[test]
    fn an_announcement_is_one_line_of_text_with_an_end_after_now() {
        let later = Some(Millis(NOW.0 + 60_000));
        let a = read(Some("  Round 3 starts at 15:00 <b>  "), later, NOW);
        assert_eq!(
            a,
            Ok(Some(Announcement {
                text: "Round 3 starts at 15:00 <b>".into(),
                since: NOW,
                until: Millis(NOW.0 + 60_000),
            }))
        );
        assert_eq!(read(None, None, NOW), Ok(None), "null takes it down");
        assert_eq!(read(None, later, NOW), Err(AnnounceError::UntilWithoutText));
        assert_eq!(read(Some(" "), later, NOW), Err(AnnounceError::Blank));
        assert_eq!(read(Some("x"), None, NOW), Err(AnnounceError::NoUntil));
        assert_eq!(
            read(Some("x"), Some(NOW), NOW),
            Err(AnnounceError::Past {
                until: NOW,
                now: NOW
            })
        );
        let long = "é".repeat(MAX_CHARS + 1);
        assert_eq!(
            read(Some(&long), later, NOW),
            Err(AnnounceError::TooLong {
                chars: MAX_CHARS + 1,
                max: MAX_CHARS
            })
        );
        assert!(
            read(Some(&"é".repeat(MAX_CHARS)), later, NOW).is_ok(),
            "characters, not bytes"
        );
        let e = read(Some("ab\ncd"), later, NOW).unwrap_err();
        assert_eq!(e, AnnounceError::Control { at: 3, code: 10 });
        assert!(e.to_string().contains("character 3"), "{e}");
        let e = read(Some("x"), Some(Millis(NOW.0 - 1000)), NOW).unwrap_err();
        assert!(e.to_string().starts_with("until: 2026-"), "{e}");
    }

    #[test]
    fn the_kept_announcement_survives_a_restart_and_goes_when_taken_down() {
        let dir = crate::link::testing::scratch_dir("announce-store");
        let a = Announcement {
            text: "Silence, please".into(),
            since: NOW,
            until: Millis(NOW.0 + 1),
        };
        store(&dir, Some(&a)).unwrap();
        assert_eq!(load(&dir), Some(a));
        store(&dir, None).unwrap();
        assert_eq!(load(&dir), None);
        store(&dir, None).unwrap();
        std::fs::write(file(&dir), b"{not json").unwrap();
        assert_eq!(load(&dir), None, "a damaged file is left out, not a panic");
    }
}
