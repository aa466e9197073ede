//! Crash consistency, in the SQLite manner (issue 36): a small real journal (four games,
//! three decided, one running, answers between them, several small segments) is damaged
//! at a seeded sample of several hundred offsets, one copy each, two ways: cut short
//! there (the journal as a power cut left it: later segments gone) and one byte flipped
//! there (a failing card). Each copy is recovered as the daemon does at start-up, then
//! again, then one more event is appended and it is recovered once more. Every time:
//!
//! - every record whose bytes are untouched comes back, in order, and nothing else;
//! - no decided game is reopened or given another result: it is decided as before, or
//!   (its result record lost) held for the arbiter (`damaged`), never resumed as running;
//! - a game neither decided nor held lost nothing;
//! - no `seq` is used again after appending;
//! - recovering twice gives the same, and appending does not move the damage;
//! - nothing panics.

mod journal_hall;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hallclock::rules::Millis;
use hallclock::rules::game::Event;
use hallclock::store::read_dir;
use hallclock::store::record::HEADER;
use hallclock::store::startup::{Started, start};
use hallclock::store::{JournalSettings, Record, fold};

const SEGMENT: u64 = 2048;

/// The pristine journal: its records with where each is, and its segments' bytes.
struct Pristine {
    records: Vec<Record>,
    /// (segment index, offset, framed length) of each record.
    at: Vec<(usize, u64, u64)>,
    segments: Vec<(String, Vec<u8>)>,
}

fn pristine(state: &Path) -> Pristine {
    let records = journal_hall::hall_records(4);
    let settings = journal_hall::write_journal(state, &records, SEGMENT);
    let scan = read_dir(&settings.dir).expect("read");
    assert!(scan.damage.is_none());
    assert!(scan.segments.len() >= 3, "{} segments", scan.segments.len());
    let segments: Vec<(String, Vec<u8>)> = scan
        .segments
        .iter()
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(p).expect("segment"))
        })
        .collect();
    let at = scan
        .records
        .iter()
        .map(|(_, seg, off)| {
            let k = scan
                .segments
                .iter()
                .position(|s| s == seg)
                .expect("segment");
            let b = &segments[k].1[*off as usize..];
            let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
            (k, *off, HEADER as u64 + len)
        })
        .collect();
    assert_eq!(scan.records.len(), records.len());
    Pristine {
        records,
        at,
        segments,
    }
}

/// A small deterministic generator (no dependency, the same sample every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[derive(Debug, Clone, Copy)]
enum Harm {
    /// The journal ends at this byte of this segment.
    Cut(usize, u64),
    /// This byte of this segment is XORed with the mask.
    Flip(usize, u64, u8),
}

fn data_len(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rposition(|b| *b != 0)
        .map_or(0, |i| i as u64 + 1)
}

/// The damaged copy, and the records it still holds intact.
fn harmed(p: &Pristine, harm: Harm, state: &Path) -> Vec<Record> {
    let dir = state.join("journal");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut kept = Vec::new();
    for (k, (name, bytes)) in p.segments.iter().enumerate() {
        let mut bytes = bytes.clone();
        match harm {
            Harm::Cut(s, _) if k > s => continue,
            Harm::Cut(s, x) if k == s => bytes.truncate(x as usize),
            Harm::Flip(s, x, mask) if k == s => bytes[x as usize] ^= mask,
            _ => {}
        }
        std::fs::write(dir.join(name), &bytes).expect("copy");
    }
    for (r, &(k, off, len)) in p.records.iter().zip(&p.at) {
        let untouched = match harm {
            Harm::Cut(s, x) => k < s || (k == s && off + len <= x),
            Harm::Flip(s, x, _) => k != s || x < off || x >= off + len,
        };
        if untouched {
            kept.push(r.clone());
        }
    }
    kept
}

/// What a recovery gave, in a form two recoveries can be compared by.
#[derive(Debug, PartialEq)]
struct Outcome {
    records: Vec<Record>,
    /// Board → (game id, result, events, damaged).
    games: BTreeMap<String, (u64, Option<String>, usize, bool)>,
    seqs: BTreeMap<String, u64>,
    /// (segment, start, end) of every damaged span.
    spans: Vec<(PathBuf, u64, u64)>,
}

fn recover(state: &Path) -> (Started, Outcome) {
    let mut settings = JournalSettings::new(state);
    // Small segments: a new one is not 16 MiB to read back in every case.
    settings.segment_size = SEGMENT;
    let started = start(state, settings.clone(), Millis(1)).expect("recovered");
    let scan = read_dir(&settings.dir).expect("read");
    let r = &started.recovered;
    let games = r
        .games
        .iter()
        .map(|(b, g)| {
            let result = g.game.result().map(|r| format!("{:?}", r.score));
            (b.clone(), (g.game_id, result, g.events.len(), g.damaged))
        })
        .collect();
    let spans = r
        .damage
        .iter()
        .flat_map(|d| d.spans.iter())
        .map(|s| (s.segment.clone(), s.start, s.end))
        .collect();
    let outcome = Outcome {
        records: scan.records.into_iter().map(|(r, _, _)| r).collect(),
        games,
        seqs: r.seqs.clone(),
        spans,
    };
    (started, outcome)
}

fn max_seqs(records: &[Record]) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        if let Record::Event { board, seq, .. } = r {
            let top = out.entry(board.clone()).or_insert(0);
            *top = (*top).max(*seq);
        }
    }
    out
}

/// Every board's game as `records` fold: (game id, result, events).
fn folded(records: &[Record]) -> BTreeMap<String, (u64, Option<String>, usize)> {
    let f = fold(records.iter().cloned());
    f.holders
        .iter()
        .filter_map(|(b, id)| {
            let g = f.games.get(id)?;
            let result = g
                .game
                .as_ref()
                .and_then(|g| g.result())
                .map(|r| format!("{:?}", r.score));
            Some((b.clone(), (*id, result, g.events.len())))
        })
        .collect()
}

/// Whether a decided game came back held (the sweep must reach that case).
fn check(p: &Pristine, harm: Harm, state: &Path) -> bool {
    let mut held = false;
    let kept = harmed(p, harm, state);
    let (started, first) = recover(state);
    let what = format!("{harm:?}");
    // Every untouched record, in order, and nothing else.
    assert_eq!(first.records, kept, "{what}: the intact records");
    let before = folded(&p.records);
    let now = folded(&kept);
    for (board, (id, result, events)) in &before {
        let got = first.games.get(board);
        match (result, got) {
            // A decided game is decided as before, or held: never running again.
            (Some(r), Some((gid, Some(gr), _, _))) if gid == id => {
                assert_eq!(gr, r, "{what}: {board}'s result changed")
            }
            (Some(_), Some((gid, None, _, damaged))) if gid == id => {
                let cut_off = matches!(harm, Harm::Cut(..)) && now[board].1.is_none();
                assert!(
                    *damaged || cut_off,
                    "{what}: {board}'s decided game came back undecided and not held"
                );
                held |= *damaged;
            }
            _ => {}
        }
        // A game neither decided nor held lost nothing (but what a cut took away).
        if let Some((gid, None, n, false)) = got
            && gid == id
        {
            let expected = match harm {
                Harm::Cut(..) => now[board].2,
                Harm::Flip(..) => *events,
            };
            assert_eq!(*n, expected, "{what}: {board}'s running game lost events");
        }
        if got.is_none() {
            // Only a lost creation takes a board's game away, and it is said.
            let problems = started
                .recovered
                .damage
                .as_ref()
                .map_or(0, |d| d.problems.len());
            assert!(
                !now.contains_key(board) && (problems > 0 || matches!(harm, Harm::Cut(..))),
                "{what}: {board}'s game is gone"
            );
        }
    }
    // No seq used again: above every one of the intact records; after a flip, above every
    // one the journal ever had (a flipped record was acknowledged and published).
    let floor = match harm {
        Harm::Cut(..) => max_seqs(&kept),
        Harm::Flip(..) => max_seqs(&p.records),
    };
    for (b, top) in &floor {
        let got = first.seqs.get(b).copied().unwrap_or(0);
        assert!(got >= *top, "{what}: {b}'s next seq would be {}", got + 1);
    }
    drop(started);
    // Recovering again gives the same.
    let (started, second) = recover(state);
    assert_eq!(second, first, "{what}: a second recovery differs");
    // One more event, numbered as the daemon numbers it; then recover once more.
    let board = journal_hall::board(3);
    let seq = second.seqs.get(&board).copied().unwrap_or(0) + 1;
    let game = second.games.get(&board).map_or(3, |g| g.0);
    let appended = Record::Event {
        board: board.clone(),
        seq,
        game,
        event: Event::Paused {
            at: journal_hall::T0 + Millis(3_600_000),
            arbiter: "IA Ada".into(),
            reason: "after the restart".into(),
        },
    };
    let mut journal = started.journal;
    journal
        .write(std::slice::from_ref(&appended))
        .expect("appended");
    drop(journal);
    let (_, third) = recover(state);
    let mut expected = kept.clone();
    expected.push(appended);
    assert_eq!(third.records, expected, "{what}: after appending");
    assert_eq!(third.spans, first.spans, "{what}: the damage moved");
    assert_eq!(third.seqs.get(&board), Some(&seq), "{what}");
    for (b, (id, result, _, _)) in &first.games {
        if result.is_some() {
            let again = third.games.get(b).map(|g| (g.0, g.1.clone()));
            assert_eq!(
                again,
                Some((*id, result.clone())),
                "{what}: {b} after appending"
            );
        }
    }
    held
}

#[test]
fn a_journal_cut_or_flipped_anywhere_recovers_what_is_intact_and_decides_nothing_again() {
    let base = journal_hall::scratch("crash-base");
    let p = pristine(&base);
    let mut rng = Lcg(0x36_2026);
    let mut cases = Vec::new();
    // Every record boundary and a byte either side of it: where cuts matter most.
    for &(k, off, len) in &p.at {
        for x in [off, off + 1, off + HEADER as u64, off + len - 1] {
            cases.push(Harm::Cut(k, x));
        }
    }
    while cases.len() < 450 {
        let k = (rng.next() as usize) % p.segments.len();
        // The written data and a little of the zeros after it.
        let span = data_len(&p.segments[k].1) + 16;
        let x = rng.next() % span;
        if cases.len() % 2 == 0 {
            cases.push(Harm::Cut(k, x));
        } else {
            let mask = (rng.next() % 255 + 1) as u8;
            cases.push(Harm::Flip(k, x, mask));
        }
    }
    // Four at a time: each case waits on an fdatasync (its append) far more than it computes.
    let cases: Vec<(usize, Harm)> = cases.into_iter().enumerate().collect();
    let held: usize = std::thread::scope(|s| {
        let workers: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| {
                let p = &p;
                s.spawn(move || {
                    let mut held = 0;
                    for (i, harm) in chunk {
                        let state = journal_hall::scratch(&format!("crash-{i}"));
                        held += usize::from(check(p, *harm, &state));
                        let _ = std::fs::remove_dir_all(&state);
                    }
                    held
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked (its case says why)"))
            .sum()
    });
    assert!(
        held > 0,
        "no case lost a result record: the sample misses the hard case"
    );
    let _ = std::fs::remove_dir_all(&base);
}
