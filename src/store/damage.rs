//! What a damaged journal lost, worked out from the records around each damaged span
//! (issue 36), and said in words for the `journal` alert and `hallclock journal verify`.
//!
//! - **Which events**: a board's events are numbered without gaps (`seq`), so the events
//!   lost in a span are the gap in a board's numbering between its last intact record
//!   before the span and its first after it. The span's own bytes are searched too for
//!   what is still legible in them (`"board":"…","seq":N`, `"game":N`): that names what a
//!   span at the end of the journal lost, and no `seq` seen there is ever used again.
//! - **Which games must wait for the arbiter** ([`Damage::held`]): a game that may have
//!   lost events and about which no later record settles it. See "Recovery after damage"
//!   in docs/ARCHITECTURE.md for the rule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::record::Record;

/// A damaged span as the scan found it, before it is worked out.
pub(super) struct RawSpan {
    pub segment: PathBuf,
    pub start: u64,
    pub end: u64,
    pub reason: String,
    /// How many intact records come before it in the journal.
    pub before: usize,
    /// Only zeros follow it in its segment: where a write cut by a power cut ends up.
    pub cut: bool,
    pub bytes: Vec<u8>,
}

/// Events of one board lost in a span: `seqs` is the range (both ends included), or `None`
/// when the span names the board but its numbers are not legible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lost {
    pub board: String,
    pub seqs: Option<(u64, u64)>,
}

/// Bytes of a segment that hold no intact record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub segment: PathBuf,
    /// `[start, end)`, byte offsets in the segment.
    pub start: u64,
    pub end: u64,
    /// Why the first frame there failed (torn, CRC, does not parse).
    pub reason: String,
    /// Only zeros follow it in its segment: a write cut by a power cut or a kill (then it
    /// was never acknowledged), or a damaged last record of the segment.
    pub cut: bool,
    /// Nothing intact follows it anywhere: the end of the journal.
    pub tail: bool,
    pub lost: Vec<Lost>,
}

/// What a journal's damage cost, and what recovery does about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Damage {
    pub spans: Vec<Span>,
    /// Segments an earlier version renamed `*.damaged`: not replayed, their `seq`s count.
    pub set_aside: Vec<PathBuf>,
    /// The highest `seq` of each board anywhere: intact records, legible numbers in damaged
    /// spans, segments set aside. The next event of a board is numbered above it.
    pub seqs: BTreeMap<String, u64>,
    /// Games that may have lost events and that no later arbiter's act settles: the board
    /// holding one is given back `damaged` (unless the game has a result).
    pub held: BTreeSet<u64>,
    /// What cannot be rebuilt at all (events of a game whose creation was lost).
    pub problems: Vec<String>,
}

/// What is still legible in damaged bytes.
#[derive(Debug, Default)]
pub(super) struct Legible {
    /// Boards named (`"board":"…"`), each with the `seq` right after the name and the
    /// `game` after that, when they are legible.
    pub(super) boards: Vec<(String, Option<u64>, Option<u64>)>,
    /// `"seq":N` whose board name is not legible, with the `"game":N` after it if it is.
    seqs: Vec<(u64, Option<u64>)>,
    games: Vec<u64>,
}

fn number_after(bytes: &[u8], at: usize) -> Option<u64> {
    let digits: &[u8] = bytes.get(at..)?;
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 19 {
        return None;
    }
    std::str::from_utf8(&digits[..n]).ok()?.parse().ok()
}

fn find_all<'a>(bytes: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    bytes
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(move |(i, _)| i + needle.len())
}

/// The board name that ends right before `"seq":` at `key` (`"board":"NAME",`).
fn name_before(bytes: &[u8], key: usize) -> Option<String> {
    let head = bytes.get(..key.checked_sub(2)?)?;
    if bytes.get(key - 2..key) != Some(b"\",".as_slice()) {
        return None;
    }
    let open = head.iter().rposition(|b| *b == b'"')?;
    let name = &head[open + 1..];
    if !head[..open + 1].ends_with(b"\"board\":\"") || !plausible_name(name) {
        return None;
    }
    std::str::from_utf8(name).ok().map(String::from)
}

fn plausible_name(name: &[u8]) -> bool {
    (1..=64).contains(&name.len())
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
}

pub(super) fn legible(bytes: &[u8]) -> Legible {
    let mut out = Legible::default();
    for at in find_all(bytes, b"\"board\":\"") {
        let rest = &bytes[at..];
        let Some(n) = rest.iter().position(|b| *b == b'"') else {
            continue;
        };
        let name = &rest[..n];
        let Some(name) = std::str::from_utf8(name)
            .ok()
            .filter(|_| plausible_name(name))
        else {
            continue;
        };
        let after_seq = rest[n + 1..].strip_prefix(b",\"seq\":");
        let seq = after_seq.and_then(|s| number_after(s, 0));
        let game = after_seq
            .zip(seq)
            .and_then(|(s, q)| s.get(q.to_string().len()..))
            .and_then(|r| r.strip_prefix(b",\"game\":"))
            .and_then(|r| number_after(r, 0));
        out.boards.push((name.to_string(), seq, game));
    }
    // A seq whose board name is damaged is still a number that was used: whose it was,
    // the game after it says.
    for at in find_all(bytes, b"\"seq\":") {
        let key = at - b"\"seq\":".len();
        if name_before(bytes, key).is_some() {
            continue;
        }
        let Some(seq) = number_after(bytes, at) else {
            continue;
        };
        let digits = seq.to_string().len();
        let game = bytes
            .get(at + digits..)
            .and_then(|r| r.strip_prefix(b",\"game\":"))
            .and_then(|r| number_after(r, 0));
        out.seqs.push((seq, game));
    }
    for at in find_all(bytes, b"\"game\":") {
        if let Some(g) = number_after(bytes, at) {
            out.games.push(g);
        }
    }
    out
}

/// One board's intact events in journal order: (record index, seq, game).
type Timeline = Vec<(usize, u64, u64)>;

fn timelines(records: &[(Record, PathBuf, u64)]) -> BTreeMap<&str, Timeline> {
    let mut out: BTreeMap<&str, Timeline> = BTreeMap::new();
    for (i, (r, _, _)) in records.iter().enumerate() {
        if let Record::Event {
            board, seq, game, ..
        } = r
        {
            out.entry(board.as_str())
                .or_default()
                .push((i, *seq, *game));
        }
    }
    out
}

/// An event an arbiter made (every such event names them): the arbiter has seen the game
/// since, so a loss before it is settled.
fn by_arbiter(r: &Record) -> Option<u64> {
    let Record::Event { game, event, .. } = r else {
        return None;
    };
    let v = serde_json::to_value(event).ok()?;
    v.get("arbiter")
        .is_some_and(serde_json::Value::is_string)
        .then_some(*game)
}

/// What the intact records say, for working out each span.
struct Analysis<'a> {
    lines: BTreeMap<&'a str, Timeline>,
    /// The board each game is on (after its moves).
    boards_of_games: BTreeMap<u64, &'a str>,
    created: BTreeSet<u64>,
    /// The highest seq of each board seen so far.
    seqs: BTreeMap<String, u64>,
    /// Games that may have lost events, with the first record after their last loss.
    touched: BTreeMap<u64, usize>,
}

impl<'a> Analysis<'a> {
    fn new(records: &'a [(Record, PathBuf, u64)]) -> Analysis<'a> {
        let lines = timelines(records);
        let seqs = lines
            .iter()
            .map(|(b, line)| {
                let top = line.iter().map(|(_, s, _)| *s).max().unwrap_or(0);
                (b.to_string(), top)
            })
            .collect();
        let mut boards_of_games: BTreeMap<u64, &str> = BTreeMap::new();
        let mut created: BTreeSet<u64> = BTreeSet::new();
        for (r, _, _) in records {
            match r {
                Record::GameCreated { board, game, .. } => {
                    boards_of_games.insert(*game, board);
                    created.insert(*game);
                }
                Record::GameMoved { game, to, .. } => {
                    boards_of_games.insert(*game, to);
                }
                _ => {}
            }
        }
        Analysis {
            lines,
            boards_of_games,
            created,
            seqs,
            touched: BTreeMap::new(),
        }
    }

    fn saw(&mut self, board: &str, seq: u64) {
        let top = self.seqs.entry(board.to_string()).or_insert(0);
        *top = (*top).max(seq);
    }

    /// The boards (and seqs) the legible bytes name, each credited to the right board: a
    /// name damaged into another plausible one is credited to its game's board too (a seq
    /// credited to a board that does not have it only leaves a gap there), and a name no
    /// intact record has is dropped for the game's board.
    fn attribute(&self, mut found: Legible) -> Legible {
        for (name, seq, game) in std::mem::take(&mut found.boards) {
            let known = self.lines.contains_key(name.as_str());
            match game.and_then(|g| self.boards_of_games.get(&g)) {
                Some(b) if *b != name => {
                    found.boards.push((b.to_string(), seq, game));
                    if known {
                        found.boards.push((name, seq, game));
                    }
                }
                _ => found.boards.push((name, seq, game)),
            }
        }
        for (seq, game) in std::mem::take(&mut found.seqs) {
            if let Some(b) = game.and_then(|g| self.boards_of_games.get(&g)) {
                found.boards.push((b.to_string(), Some(seq), game));
            }
        }
        found
    }

    /// Work out one span: what each board lost in it, which games it touched.
    fn span(&mut self, s: RawSpan, records: usize) -> Span {
        let found = self.attribute(legible(&s.bytes));
        for (b, seq, _) in &found.boards {
            if let Some(seq) = seq {
                self.saw(b, *seq);
            }
        }
        let mut lost = Vec::new();
        let mut names: BTreeSet<String> = self.lines.keys().map(|b| b.to_string()).collect();
        names.extend(found.boards.iter().map(|(b, _, _)| b.clone()));
        for board in names {
            let line = self
                .lines
                .get(board.as_str())
                .map_or(&[][..], Vec::as_slice);
            let k = line.partition_point(|(i, _, _)| *i < s.before);
            let (prev, next) = (k.checked_sub(1).map(|p| line[p]), line.get(k).copied());
            let named: Vec<Option<u64>> = found
                .boards
                .iter()
                .filter(|(b, _, _)| *b == board)
                .map(|(_, q, _)| *q)
                .collect();
            let seen: Vec<u64> = named.iter().flatten().copied().collect();
            let gap = lost_range(prev.map(|p| p.1), next.map(|n| n.1), &seen);
            if next.is_none() && !named.is_empty() {
                // Each record naming the board used a number above its last intact one,
                // legible or not: none of them is used again.
                self.saw(&board, prev.map_or(0, |p| p.1) + named.len() as u64);
            }
            if gap.is_none() && named.is_empty() {
                // A span in the middle of a segment is no cut write: a board whose game
                // has no intact record after it may have lost its last events.
                if !s.cut
                    && next.is_none()
                    && let Some(p) = prev
                {
                    self.touched.insert(p.2, s.before);
                }
                continue;
            }
            for g in [prev, next].into_iter().flatten() {
                self.touched.insert(g.2, s.before);
            }
            lost.push(Lost { board, seqs: gap });
        }
        for g in &found.games {
            if self.boards_of_games.contains_key(g) {
                self.touched.insert(*g, s.before);
            }
        }
        Span {
            segment: s.segment,
            start: s.start,
            end: s.end,
            reason: s.reason,
            cut: s.cut,
            tail: s.before == records,
            lost,
        }
    }

    /// The touched games no arbiter's act after their loss settles (the arbiter has seen
    /// the game since: its hold is not repeated at every start).
    fn held(&self, records: &[(Record, PathBuf, u64)]) -> BTreeSet<u64> {
        // One pass over the records after the first loss, looking only at touched games'
        // events: a damaged card early in a long event must not make this quadratic.
        let first = self
            .touched
            .values()
            .min()
            .copied()
            .unwrap_or(records.len());
        let mut last_act: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, (r, _, _)) in records.iter().enumerate().skip(first) {
            if let Record::Event { game, .. } = r
                && self.touched.contains_key(game)
                && by_arbiter(r).is_some()
            {
                last_act.insert(*game, i);
            }
        }
        self.touched
            .iter()
            .filter(|(g, after)| last_act.get(g).is_none_or(|act| act < after))
            .map(|(g, _)| *g)
            .collect()
    }

    /// Events of games whose creation was lost, in words.
    fn orphans(&self) -> Vec<String> {
        let mut orphans: BTreeMap<u64, (&str, usize)> = BTreeMap::new();
        for (b, line) in &self.lines {
            for (_, _, g) in line.iter().filter(|(_, _, g)| !self.created.contains(g)) {
                orphans.entry(*g).or_insert((b, 0)).1 += 1;
            }
        }
        orphans
            .into_iter()
            .map(|(g, (b, n))| {
                format!(
                    "{b}: {n} event(s) of game {g} survive but its creation was lost: that game cannot be rebuilt"
                )
            })
            .collect()
    }
}

impl Damage {
    pub(super) fn analyse(
        records: &[(Record, PathBuf, u64)],
        raw: Vec<RawSpan>,
        set_aside: &[(PathBuf, BTreeMap<String, u64>)],
    ) -> Damage {
        let mut a = Analysis::new(records);
        let spans = raw.into_iter().map(|s| a.span(s, records.len())).collect();
        for (_, seqs) in set_aside {
            for (b, s) in seqs {
                a.saw(b, *s);
            }
        }
        Damage {
            spans,
            set_aside: set_aside.iter().map(|(p, _)| p.clone()).collect(),
            held: a.held(records),
            problems: a.orphans(),
            seqs: a.seqs,
        }
    }
}

/// The events lost between a board's last intact seq before a span and its first after,
/// with the seqs still legible in the span.
fn lost_range(prev: Option<u64>, next: Option<u64>, seen: &[u64]) -> Option<(u64, u64)> {
    let (lo, hi) = (seen.iter().min().copied(), seen.iter().max().copied());
    match (prev, next) {
        (Some(p), Some(n)) => (n > p + 1).then_some((p + 1, n - 1)),
        (Some(p), None) => hi.filter(|h| *h > p).map(|h| (p + 1, h)),
        (None, Some(n)) => lo.filter(|l| *l < n).map(|l| (l, n - 1)),
        (None, None) => lo.zip(hi),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
}

impl Lost {
    fn words(&self) -> String {
        match self.seqs {
            Some((a, b)) if a == b => format!("{}'s event {a}", self.board),
            Some((a, b)) => format!("{}'s events {a}–{b}", self.board),
            None => format!("{}'s events (numbers unreadable)", self.board),
        }
    }

    fn count(&self) -> u64 {
        self.seqs.map_or(2, |(a, b)| b - a + 1)
    }
}

impl Span {
    /// e.g. "a damaged span in segment-000001.log bytes 4120–4388 (a record that fails its
    /// CRC): board-001's events 21–23 are lost".
    pub fn words(&self) -> String {
        let place = format!(
            "{} bytes {}–{}",
            file_name(&self.segment),
            self.start,
            self.end.saturating_sub(1)
        );
        let what = if self.cut {
            format!(
                "the end of {place} is unreadable ({}; a write cut by a power cut or a kill, never acknowledged then, or a damaged last record)",
                self.reason
            )
        } else {
            format!("a damaged span in {place} ({})", self.reason)
        };
        let lost: Vec<String> = self.lost.iter().map(Lost::words).collect();
        let count: u64 = self.lost.iter().map(Lost::count).sum();
        match lost.len() {
            0 => format!("{what}: no board's event numbers have a gap around it"),
            _ => format!(
                "{what}: {} {} lost",
                lost.join(", "),
                if count == 1 { "is" } else { "are" }
            ),
        }
    }
}

impl Damage {
    /// The damage in words, every span exactly, e.g. "the journal has a damaged span in
    /// segment-000001.log bytes 4120–4388 (…): board-001's events 21–23 are lost; every
    /// other record was recovered".
    pub fn words(&self) -> String {
        let mut parts: Vec<String> = self.spans.iter().map(Span::words).collect();
        for p in &self.set_aside {
            parts.push(format!(
                "{} was set aside by an earlier version and is not replayed (its event numbers are not reused)",
                file_name(p)
            ));
        }
        parts.extend(self.problems.iter().cloned());
        let n = self.spans.len();
        let head = match n {
            0 => "the journal:".to_string(),
            1 => "the journal has".to_string(),
            _ => format!("the journal has {n} damaged spans:"),
        };
        format!(
            "{head} {}; every other record was recovered",
            parts.join("; ")
        )
    }
}

/// What `hallclock journal verify` finds wrong in the order of the intact records: a
/// board whose `seq`s have a gap or go back (a repeat), and a game whose events' instants
/// run backwards on a board (the core never goes back in time). Each in words, with the
/// board and the seqs.
pub fn disorder(records: &[(Record, PathBuf, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut last: BTreeMap<&str, (u64, u64, crate::rules::Millis)> = BTreeMap::new();
    for (r, seg, off) in records {
        let Record::Event {
            board,
            seq,
            game,
            event,
        } = r
        else {
            continue;
        };
        let at = event.at();
        if let Some((p, pgame, pat)) = last.get(board.as_str()).copied() {
            let place = format!("{} offset {off}", file_name(seg));
            if *seq <= p {
                out.push(format!(
                    "{board}: seq {seq} comes after seq {p} ({place}): a number used again"
                ));
            } else if *seq > p + 1 {
                let missing = if *seq == p + 2 {
                    format!("{} is", p + 1)
                } else {
                    format!("{}–{} are", p + 1, seq - 1)
                };
                out.push(format!(
                    "{board}: seq {seq} follows seq {p} ({place}): {missing} missing"
                ));
            }
            if *game == pgame && at < pat {
                out.push(format!(
                    "{board}: game {game}'s seq {seq} happened at {} ms, before seq {p}'s {} ms ({place}): its instants run backwards",
                    at.0, pat.0
                ));
            }
        }
        last.insert(board, (*seq, *game, at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legible_names_boards_seqs_and_games() {
        let bytes = br#"xx{"record":"event","board":"board-001","seq":21,"game":3,"event":{"#;
        let l = legible(bytes);
        assert_eq!(l.boards, vec![("board-001".to_string(), Some(21), Some(3))]);
        assert_eq!(l.games, vec![3]);
        let torn = br#"{"record":"event","board":"board-0"#;
        assert!(
            legible(torn).boards.is_empty(),
            "a name cut short is no name"
        );
    }

    #[test]
    fn the_gap_is_what_is_lost() {
        assert_eq!(lost_range(Some(20), Some(24), &[]), Some((21, 23)));
        assert_eq!(lost_range(Some(20), Some(21), &[]), None);
        assert_eq!(lost_range(Some(20), None, &[21, 22]), Some((21, 22)));
        assert_eq!(lost_range(Some(20), None, &[]), None);
        assert_eq!(lost_range(None, Some(5), &[3]), Some((3, 4)));
        assert_eq!(lost_range(None, None, &[7]), Some((7, 7)));
    }

    #[test]
    fn the_words_say_where_and_what() {
        let d = Damage {
            spans: vec![Span {
                segment: PathBuf::from("/x/segment-000001.log"),
                start: 4120,
                end: 4389,
                reason: "a record that fails its CRC".into(),
                cut: false,
                tail: false,
                lost: vec![Lost {
                    board: "board-001".into(),
                    seqs: Some((21, 23)),
                }],
            }],
            ..Damage::default()
        };
        assert_eq!(
            d.words(),
            "the journal has a damaged span in segment-000001.log bytes 4120–4388 (a record that fails its CRC): board-001's events 21–23 are lost; every other record was recovered"
        );
    }
}
