//! Start-up recovery, in the order a crash can leave things: a compaction interrupted
//! after its new journal was complete is finished, a long journal is compacted, then the
//! journal is opened and folded once ([`super::games::fold`]) for everything the daemon
//! needs of it: every board's current game, every round's games for the broadcast, the
//! sequence numbers and the answers of idempotent transactions.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::rules::Millis;

use super::games::{JournaledGame, fold};
use super::games::{Recovered, RecoveredGame, replay};
use super::journal::{Journal, JournalSettings, StoreError, io_err};
use super::record::{Record, frame};
use super::scan::{Scan, read_dir};

/// Records from which compacting at start-up is worth its time.
const COMPACT_FROM: usize = 20_000;

/// What the journal held at start-up, and the journal open for appending.
pub struct Started {
    pub journal: Journal,
    /// Every game by id, finished and moved ones too (the broadcast's rounds).
    pub games: BTreeMap<u64, JournaledGame>,
    /// Every board's current game, the sequence numbers, the answers.
    pub recovered: Recovered,
}

/// Recover `state_dir`'s journal (`settings.dir`). `now` names the archive of a compaction.
///
/// The journal is read once and folded once; only a compaction, which rewrites it, reads
/// the new one again. At 5000 boards each reading is a third of the restart (BENCHMARKS).
pub fn start(
    state_dir: &Path,
    settings: JournalSettings,
    now: Millis,
) -> Result<Started, StoreError> {
    // A compaction interrupted by a crash left its new journal complete: use it.
    let interrupted = state_dir.join("journal.compacting");
    if interrupted.exists() && !settings.dir.exists() {
        let _ = std::fs::rename(&interrupted, &settings.dir);
    }
    let read = |dir: &Path| read_dir(dir).map_err(|e| io_err(dir, e));
    let mut scan = read(&settings.dir)?;
    if compact_if_worth_it(state_dir, &settings.dir, &scan, now)? {
        scan = read(&settings.dir)?;
    }
    let journal = Journal::open(settings, &scan)?;
    let folded = fold(scan.records.into_iter().map(|(r, _, _)| r));
    let recovered = Recovered::from_fold(&folded, scan.damage);
    Ok(Started {
        journal,
        games: folded.games,
        recovered,
    })
}

/// How many records of `records` a compaction would move to the archive: those of games
/// no board holds any more, and the answers. The boards' holders are followed as
/// [`fold`] does, without building the games (a setup that no longer validates counts as
/// held here; the compaction itself keeps exactly what the fold holds).
fn droppable(records: &[(Record, std::path::PathBuf, u64)]) -> usize {
    let mut holders: std::collections::HashMap<&str, u64> = Default::default();
    for (r, _, _) in records {
        match r {
            Record::GameCreated { board, game, .. } => {
                holders.insert(board, *game);
            }
            Record::GameMoved { game, from, to } => {
                if holders.get(from.as_str()) == Some(game) {
                    holders.remove(from.as_str());
                }
                holders.insert(to, *game);
            }
            Record::Event { .. } | Record::Answered { .. } | Record::Time(_) => {}
        }
    }
    let live: std::collections::HashSet<u64> = holders.into_values().collect();
    records
        .iter()
        .filter(|(r, _, _)| match r {
            Record::GameCreated { game, .. }
            | Record::GameMoved { game, .. }
            | Record::Event { game, .. } => !live.contains(game),
            Record::Answered { .. } | Record::Time(_) => true,
        })
        .count()
}

/// Records of finished games that no board holds any more are moved to the archive at
/// start-up, so that start-up stays fast however long the event runs: once the journal
/// holds [`COMPACT_FROM`] records and at least half of them would go. Below that half
/// the rewrite costs more than it saves (a restart in the middle of a round would rewrite
/// every record of the round to drop a few), and the journal is never more than twice
/// what the boards' current games hold. Whether the journal must be read again.
fn compact_if_worth_it(
    state_dir: &Path,
    journal: &Path,
    scan: &Scan,
    now: Millis,
) -> Result<bool, StoreError> {
    if scan.damage.is_some() || scan.records.len() < COMPACT_FROM {
        return Ok(false);
    }
    if droppable(&scan.records) * 2 < scan.records.len() {
        return Ok(false);
    }
    let records: Vec<Record> = scan.records.iter().map(|(r, _, _)| r.clone()).collect();
    let recovered = replay(records.iter().cloned(), None);
    match compact(
        state_dir,
        journal,
        &records,
        &recovered.games,
        &now.0.to_string(),
    ) {
        Ok(Some(kept)) => {
            tracing::info!(
                before = records.len(),
                kept,
                "journal compacted: finished games moved to the archive"
            );
            Ok(true)
        }
        Ok(None) => Ok(false),
        Err(e) => {
            tracing::warn!("journal compaction skipped: {e}");
            // Failing between its two renames, it left no journal in place: the complete
            // new one goes there, or the start fails (an empty journal would lose the
            // games the boards hold).
            if !journal.exists() {
                let fresh = state_dir.join("journal.compacting");
                fs::rename(&fresh, journal).map_err(|e| io_err(&fresh, e))?;
            }
            Ok(true)
        }
    }
}

/// Compaction: rewrite the journal with only the records of the games that are still
/// current on some board (their creation, moves and events, `seq` numbers unchanged), and
/// move the old segments into `<state_dir>/archive/journal-<suffix>/`. Finished rounds
/// stay readable there (`hallclock journal dump --state-dir` on the archive's parent).
/// Returns how many records were kept, or `None` when there was nothing to compact.
fn compact(
    state_dir: &Path,
    journal: &Path,
    records: &[Record],
    current: &BTreeMap<String, RecoveredGame>,
    suffix: &str,
) -> std::io::Result<Option<usize>> {
    let live: std::collections::BTreeSet<u64> = current.values().map(|g| g.game_id).collect();
    let keep: Vec<&Record> = records
        .iter()
        .filter(|r| match r {
            Record::GameCreated { game, .. }
            | Record::GameMoved { game, .. }
            | Record::Event { game, .. } => live.contains(game),
            // The journal's horizon for repeated transactions ends at a compaction.
            Record::Answered { .. } => false,
            // Time is kept below, as one anchor.
            Record::Time(_) => false,
        })
        .collect();
    if keep.len() == records.len() {
        return Ok(None);
    }
    // Game time must not run back across a compaction: the last anchor, carried forward
    // to the latest instant of any record (the dropped games' too). Within a run game
    // time and the boot clock advance together, so the carried anchor is as exact.
    let time = fold(records.iter().cloned()).time;
    let carried = time.anchor.map(|a| {
        let ahead = time
            .latest
            .map_or(Millis::ZERO, |l| (l - a.at).non_negative());
        Record::Time(crate::timebase::Anchor {
            boottime: a.boottime + ahead,
            at: a.at + ahead,
            civil: a.civil + ahead,
            correction: a.correction,
            boot: a.boot,
        })
    });
    let keep: Vec<&Record> = carried.iter().chain(keep).collect();
    let fresh = state_dir.join("journal.compacting");
    let _ = fs::remove_dir_all(&fresh);
    fs::create_dir_all(&fresh)?;
    let mut bytes = Vec::new();
    for r in &keep {
        let payload = serde_json::to_vec(r).map_err(std::io::Error::other)?;
        bytes.extend_from_slice(&frame(&payload));
    }
    let seg = fresh.join("segment-000001.log");
    fs::write(&seg, &bytes)?;
    fs::File::open(&seg)?.sync_all()?;
    let archive = state_dir.join("archive");
    fs::create_dir_all(&archive)?;
    // Two renames: the old journal into the archive, the new one into place. A crash in
    // between leaves no `journal/`, and the next start finds `journal.compacting` whole.
    fs::rename(journal, archive.join(format!("journal-{suffix}")))?;
    fs::rename(&fresh, journal)?;
    fs::File::open(state_dir)?.sync_all()?;
    Ok(Some(keep.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::game::{Event, Setup};
    use crate::rules::time_control::parse;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hallclock-{}-su-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn created(board: &str, game: u64) -> Record {
        Record::GameCreated {
            board: board.into(),
            game,
            round: Some(1),
            fide: (None, None),
            setup: Box::new(Setup::new(
                "White",
                "Black",
                parse("90+30").expect("a time control"),
                Millis(0),
            )),
        }
    }

    fn events(board: &str, game: u64, seqs: std::ops::RangeInclusive<u64>) -> Vec<Record> {
        seqs.map(|seq| Record::Event {
            board: board.into(),
            seq,
            game,
            event: Event::Resumed {
                at: Millis(seq as i64),
                arbiter: "ia".into(),
            },
        })
        .collect()
    }

    /// A state dir whose journal holds `records`, written in one go.
    fn journal_of(name: &str, records: &[Record]) -> (std::path::PathBuf, JournalSettings) {
        let state = dir(name);
        let settings = JournalSettings::new(&state);
        let (mut j, _) = super::super::open_after(settings.clone()).expect("a new journal");
        j.write(records).expect("written");
        (state, settings)
    }

    fn archived(state: &Path) -> usize {
        fs::read_dir(state.join("archive")).map_or(0, |d| d.count())
    }

    /// Board b1's first game (no board holds it any more) is most of the journal: the
    /// start moves it to the archive, and the board's current game, its sequence numbers
    /// and the next game id come through unchanged.
    #[test]
    fn a_journal_mostly_of_games_no_board_holds_is_compacted_at_start_up() {
        let old = COMPACT_FROM as u64;
        let mut records = vec![created("b1", 1)];
        records.extend(events("b1", 1, 1..=old));
        records.push(created("b1", 2));
        records.extend(events("b1", 2, old + 1..=old + 10));
        let (state, settings) = journal_of("compacted", &records);

        let s = start(&state, settings.clone(), Millis(7)).expect("started");
        assert_eq!(archived(&state), 1, "the old journal is in the archive");
        assert!(state.join("archive/journal-7").is_dir());
        assert_eq!(s.recovered.records, 11, "only game 2's records were kept");
        let g = &s.recovered.games["b1"];
        assert_eq!((g.game_id, g.events.len()), (2, 10));
        assert_eq!(s.recovered.seqs["b1"], old + 10);
        assert_eq!(s.recovered.next_game_id, 3);
        assert!(!s.games.contains_key(&1), "game 1 is the archive's now");
        drop(s);
        // The next start reads the compacted journal as it was left.
        let again = start(&state, settings, Millis(8)).expect("started again");
        assert_eq!(again.recovered.records, 11);
        assert_eq!(archived(&state), 1, "nothing left to compact");
        let _ = fs::remove_dir_all(&state);
    }

    /// A restart in the middle of a long round: the journal is over the threshold, but
    /// nearly all of it is the games the boards hold now. It is not rewritten to drop a
    /// few records (at 5000 boards that rewrite was a third of the restart).
    #[test]
    fn a_journal_mostly_of_current_games_is_not_rewritten_at_start_up() {
        let live = COMPACT_FROM as u64;
        let mut records = vec![created("b1", 1)];
        records.extend(events("b1", 1, 1..=100));
        records.push(created("b1", 2));
        records.extend(events("b1", 2, 101..=100 + live));
        let (state, settings) = journal_of("kept", &records);

        let s = start(&state, settings, Millis(7)).expect("started");
        assert_eq!(archived(&state), 0, "no compaction");
        assert_eq!(s.recovered.records, records.len());
        assert_eq!(s.recovered.games["b1"].game_id, 2);
        assert_eq!(s.recovered.seqs["b1"], 100 + live);
        assert!(
            s.games.contains_key(&1),
            "the finished game is still served"
        );
        let _ = fs::remove_dir_all(&state);
    }

    /// What a compaction would drop: games no board holds (also after a 6.10 move, which
    /// keeps the moved game live on its new board) and the answers.
    #[test]
    fn droppable_follows_the_boards_holders_as_the_fold_does() {
        let answered = Record::Answered {
            arbiter: "ia".into(),
            transaction: "t".into(),
            digest: "d".into(),
            topic: "x".into(),
            response: serde_json::Value::Null,
        };
        let mut records = vec![created("b1", 1), created("b2", 2)];
        records.extend(events("b1", 1, 1..=3));
        records.push(Record::GameMoved {
            game: 1,
            from: "b1".into(),
            to: "b3".into(),
        });
        records.push(created("b2", 4)); // game 2 is no board's now
        records.extend(events("b2", 2, 1..=2));
        records.push(answered);
        let scan: Vec<_> = records
            .into_iter()
            .map(|r| (r, std::path::PathBuf::new(), 0))
            .collect();
        // Game 2's creation and two events, and the answer.
        assert_eq!(droppable(&scan), 4);
    }
}
