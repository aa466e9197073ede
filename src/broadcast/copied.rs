//! Another node's game in this node's broadcast (issue 23: any node's `/broadcast/…` and
//! its lichess push cover the whole hall). Pure, like `view.rs`: the shell hands in the
//! owner's retained `board/<b>/pgn` texts and the instant each arrived.
//!
//! The owner's text is the record: it is shown as the owner wrote it (only its `Event` and
//! `Site`, which the owner leaves `?` on MQTT, take the round's), never re-derived and never
//! extended, so a dead node's game stays exactly as its last retained text. A delayed
//! round cannot cut a text at an instant (its events are not here), so each text is kept
//! with the instant it **arrived**, and the feed shows the newest that arrived at or before
//! `now - D`: never earlier than the owner published it, so the delay is never shortened.
//! A game none of whose texts is old enough is not shown at all (its first text may already
//! hold moves: a node that starts late sees the game mid-way).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::rules::Millis;

/// The most texts kept of one game while a delay holds them back (a move a minute for an
/// hour's delay is 60). Beyond it the oldest goes: the game is then shown only once the
/// oldest kept text is old enough. Each text is at most `mqtt::foreign::MAX_PAYLOAD`.
pub const MAX_VERSIONS: usize = 128;

/// One text of the game as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    /// Counts the game's texts from 0: what the HTTP cache keys a text by, so a text let go
    /// of never shifts the number of another.
    seq: usize,
    at: Millis,
    text: Arc<str>,
}

/// Another node's game: its texts still needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    versions: VecDeque<Version>,
    next: usize,
}

/// Where the next copy's numbering starts: the HTTP cache keys a game's texts by its id
/// and this number, so a copy made anew for the same board and round (its game taken out
/// by an empty text, then back) must not number its texts as the old one did.
static NEXT_BASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Default for Copied {
    fn default() -> Copied {
        // 65536 texts per copy before two copies' numbers could meet (a game has a few
        // hundred), and it wraps on a 32-bit target after 65536 copies.
        let base = NEXT_BASE.fetch_add(1 << 16, std::sync::atomic::Ordering::Relaxed);
        Copied {
            versions: VecDeque::new(),
            next: base,
        }
    }
}

/// What the feed needs of an owner's text: the round and board it is in and whether it
/// has a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heading {
    pub round: u32,
    pub finished: bool,
}

/// Why an owner's text is not taken into the broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotAGame {
    #[error("not UTF-8")]
    NotText,
    #[error("not a PGN game (no tag section)")]
    NoTags,
    #[error("no round (`Round` tag): not a game of the broadcast")]
    NoRound,
    #[error("more than one game: a board's text is its one game")]
    SeveralGames,
    #[error("not a whole game (it must end with a newline)")]
    Unfinished,
}

/// The round and result of an owner's `board/<b>/pgn` text (its tag section only).
pub fn heading(payload: &[u8]) -> Result<(Heading, &str), NotAGame> {
    let text = std::str::from_utf8(payload).map_err(|_| NotAGame::NotText)?;
    if !text.starts_with("[Event \"") {
        return Err(NotAGame::NoTags);
    }
    // It goes into a multi-game PGN as it is: one game, ending as the owner's renderer
    // ends it, or it would add games no board plays, or run into the next one.
    if text.lines().filter(|l| l.starts_with("[Event ")).count() > 1 {
        return Err(NotAGame::SeveralGames);
    }
    if !text.ends_with('\n') {
        return Err(NotAGame::Unfinished);
    }
    let mut round = None;
    let mut finished = false;
    for line in text.lines().take_while(|l| l.starts_with('[')) {
        if let Some(v) = tag_value(line, "Round") {
            // `r.b` (a board's game) or `r`.
            round = v.split('.').next().and_then(|r| r.parse::<u32>().ok());
        } else if let Some(v) = tag_value(line, "Result") {
            finished = v != "*";
        }
    }
    let round = round.filter(|r| *r > 0).ok_or(NotAGame::NoRound)?;
    Ok((Heading { round, finished }, text))
}

/// `value` of `[name "value"]` (unescaped values are all this needs: numbers and results).
fn tag_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.strip_prefix('[')?
        .strip_prefix(name)?
        .strip_prefix(" \"")?
        .strip_suffix("\"]")
}

impl Copied {
    /// A new text arrived at `at`. `cut` is where the feed cuts the round now (`None`:
    /// undelayed, only the newest text is ever shown): texts that no later cut can show
    /// are let go of.
    pub fn push(&mut self, at: Millis, text: Arc<str>, cut: Option<Millis>) {
        if self.versions.back().is_some_and(|v| v.text == text) {
            return;
        }
        self.versions.push_back(Version {
            seq: self.next,
            at,
            text,
        });
        self.next = self.next.wrapping_add(1);
        match cut {
            None => {
                while self.versions.len() > 1 {
                    self.versions.pop_front();
                }
            }
            // Cuts only move forward: a text followed by one already shown is done with.
            Some(cut) => {
                while self.versions.len() > 1 && self.versions[1].at <= cut {
                    self.versions.pop_front();
                }
            }
        }
        while self.versions.len() > MAX_VERSIONS {
            self.versions.pop_front();
        }
    }

    /// Which text the feed shows at `cut`: its `seq + 1`, or 0 for none (nothing old
    /// enough yet).
    pub fn shown(&self, cut: Option<Millis>) -> usize {
        let v = match cut {
            None => self.versions.back(),
            Some(t) => self.versions.iter().rev().find(|v| v.at <= t),
        };
        v.map_or(0, |v| v.seq.wrapping_add(1))
    }

    /// Changes when a new text arrives (the number the next text will have).
    pub fn revision(&self) -> usize {
        self.next
    }

    /// When the text after `shown` arrived: until then a delayed feed shows the same.
    pub fn next_at(&self, shown: usize) -> Option<Millis> {
        self.versions.iter().find(|v| v.seq >= shown).map(|v| v.at)
    }

    /// The text `shown` names, with the round's `Event` and `Site` (`None`: as the owner
    /// wrote them); empty when it names none.
    pub fn text(&self, shown: usize, event: Option<&str>, site: Option<&str>) -> String {
        let Some(v) = shown
            .checked_sub(1)
            .and_then(|seq| self.versions.iter().find(|v| v.seq == seq))
        else {
            return String::new();
        };
        retag(&v.text, event, site)
    }
}

/// The owner's text with its `Event` and `Site` replaced (lichess identifies a pushed game
/// by its event tags, so every game of a round must carry the same).
fn retag(text: &str, event: Option<&str>, site: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut in_tags = true;
    for line in text.split_inclusive('\n') {
        if in_tags && !line.starts_with('[') {
            in_tags = false;
        }
        let new = match (in_tags, event, site) {
            (true, Some(e), _) if line.starts_with("[Event \"") => Some(("Event", e)),
            (true, _, Some(s)) if line.starts_with("[Site \"") => Some(("Site", s)),
            _ => None,
        };
        match new {
            Some((name, value)) => {
                out.push_str(&format!("[{name} \"{}\"]\n", crate::pgn::escape_tag(value)));
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &str = "[Event \"?\"]\n[Site \"?\"]\n[Date \"2026.11.30\"]\n[Round \"3.7\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n[Board \"7\"]\n\n1. e4 { [%clk 0:09:58] [%emt 0:00:02] } *\n";

    #[test]
    fn the_heading_gives_the_round_and_whether_there_is_a_result() {
        let (h, _) = heading(GAME.as_bytes()).expect("a game");
        assert_eq!(
            h,
            Heading {
                round: 3,
                finished: false
            }
        );
        let done = GAME.replace("[Result \"*\"]", "[Result \"1-0\"]");
        assert!(heading(done.as_bytes()).is_ok_and(|(h, _)| h.finished));
        assert_eq!(heading(b"\xff\xfe").err(), Some(NotAGame::NotText));
        assert_eq!(heading(b"1. e4 *").err(), Some(NotAGame::NoTags));
        let no_round = GAME.replace("[Round \"3.7\"]", "[Round \"?\"]");
        assert_eq!(heading(no_round.as_bytes()).err(), Some(NotAGame::NoRound));
        let two = format!("{GAME}\n{GAME}");
        assert_eq!(heading(two.as_bytes()).err(), Some(NotAGame::SeveralGames));
        let cut = GAME.trim_end();
        assert_eq!(heading(cut.as_bytes()).err(), Some(NotAGame::Unfinished));
    }

    /// A copy and the number its first text has (`shown` of it is `b + 1`).
    fn copy() -> (Copied, usize) {
        let c = Copied::default();
        let b = c.next;
        (c, b)
    }

    #[test]
    fn undelayed_it_keeps_and_shows_only_the_newest_text() {
        let (mut c, b) = copy();
        c.push(Millis(10), "one".into(), None);
        c.push(Millis(20), "two".into(), None);
        assert_eq!(c.versions.len(), 1);
        assert_eq!(c.shown(None), b + 2);
        assert_eq!(c.text(b + 2, None, None), "two");
        // The same text again (a reconnection's retained copy) is no new version.
        c.push(Millis(30), "two".into(), None);
        assert_eq!(c.revision(), b + 2);
    }

    #[test]
    fn a_copy_made_anew_never_numbers_its_texts_as_an_earlier_one() {
        let (mut one, _) = copy();
        let (mut two, _) = copy();
        one.push(Millis(1), "a".into(), None);
        two.push(Millis(1), "b".into(), None);
        assert_ne!(one.shown(None), two.shown(None));
    }

    #[test]
    fn delayed_it_shows_the_newest_text_that_arrived_before_the_cut_and_nothing_earlier() {
        let (mut c, b) = copy();
        c.push(Millis(100), "a".into(), Some(Millis(0)));
        c.push(Millis(200), "b".into(), Some(Millis(50)));
        c.push(Millis(300), "c".into(), Some(Millis(150)));
        // Nothing arrived before the cut: not shown at all (not even its first text).
        assert_eq!(c.shown(Some(Millis(99))), 0);
        assert_eq!(c.text(0, None, None), "");
        assert_eq!(c.shown(Some(Millis(150))), b + 1);
        assert_eq!(c.text(b + 1, None, None), "a");
        assert_eq!(c.next_at(b + 1), Some(Millis(200)));
        assert_eq!(c.shown(Some(Millis(250))), b + 2);
        // Once "b" is shown, "a" can never be again.
        c.push(Millis(400), "d".into(), Some(Millis(250)));
        assert_eq!(c.shown(Some(Millis(250))), b + 2);
        assert_eq!(c.text(b + 2, None, None), "b");
        assert_eq!(c.text(b + 1, None, None), "", "let go of");
        assert_eq!(c.shown(None), b + 4);
    }

    #[test]
    fn a_flood_of_texts_keeps_at_most_the_bound() {
        let (mut c, b) = copy();
        for i in 0..(MAX_VERSIONS as i64 * 3) {
            c.push(Millis(1000 + i), format!("t{i}").into(), Some(Millis(0)));
        }
        assert_eq!(c.versions.len(), MAX_VERSIONS);
        assert_eq!(c.revision(), b + MAX_VERSIONS * 3);
        assert_eq!(c.shown(Some(Millis(999))), 0);
    }

    #[test]
    fn the_rounds_event_and_site_replace_the_owners_question_marks_in_the_tags_only() {
        let text = GAME.to_string();
        let out = retag(&text, Some("Open \"A\""), Some("Leipzig"));
        assert!(out.starts_with("[Event \"Open \\\"A\\\"\"]\n[Site \"Leipzig\"]\n[Date"));
        assert!(out.ends_with("1. e4 { [%clk 0:09:58] [%emt 0:00:02] } *\n"));
        assert_eq!(retag(&text, None, None), text);
    }
}
