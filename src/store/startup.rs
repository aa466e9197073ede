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
use super::journal::{Journal, JournalSettings, StoreError, open_after};
use super::record::{Record, frame, read_dir};

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
    compact_if_worth_it(state_dir, &settings.dir, now);
    let (journal, scan) = open_after(settings)?;
    let folded = fold(scan.records.into_iter().map(|(r, _, _)| r));
    let recovered = Recovered::from_fold(&folded, scan.damage);
    Ok(Started {
        journal,
        games: folded.games,
        recovered,
    })
}

/// Records of finished games that no board holds any more are moved to the archive at
/// start-up, so that start-up stays fast however long the event runs.
fn compact_if_worth_it(state_dir: &Path, journal: &Path, now: Millis) {
    let Ok(scan) = read_dir(journal) else {
        return;
    };
    if scan.damage.is_some() || scan.records.len() < COMPACT_FROM {
        return;
    }
    let records: Vec<Record> = scan.records.into_iter().map(|(r, _, _)| r).collect();
    let recovered = replay(records.iter().cloned(), None);
    match compact(state_dir, &records, &recovered.games, &now.0.to_string()) {
        Ok(Some(kept)) => tracing::info!(
            before = records.len(),
            kept,
            "journal compacted: finished games moved to the archive"
        ),
        Ok(None) => {}
        Err(e) => tracing::warn!("journal compaction skipped: {e}"),
    }
}

/// Compaction: rewrite the journal with only the records of the games that are still
/// current on some board (their creation, moves and events, `seq` numbers unchanged), and
/// move the old segments into `<state_dir>/archive/journal-<suffix>/`. Finished rounds
/// stay readable there (`hallclock journal dump --state-dir` on the archive's parent).
/// Returns how many records were kept, or `None` when there was nothing to compact.
fn compact(
    state_dir: &Path,
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
        })
        .collect();
    if keep.len() == records.len() {
        return Ok(None);
    }
    let journal = state_dir.join("journal");
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
    fs::rename(&journal, archive.join(format!("journal-{suffix}")))?;
    fs::rename(&fresh, &journal)?;
    fs::File::open(state_dir)?.sync_all()?;
    Ok(Some(keep.len()))
}
