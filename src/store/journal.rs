//! The journal writer: one thread owns the files. Appends from every board are grouped
//! (leader/follower group commit): an append that finds no sync in flight is written and
//! `fdatasync`ed at once; appends that arrive while a sync is in flight wait for it and
//! then share the next one. So a quiet hall syncs each event at once and a busy one never
//! waits longer than one sync for its batch, with the sync rate bounded by the disk's own
//! sync latency. An optional sync window (`hall.sync_window_ms`) also spaces syncs at least
//! that far apart, for media where each sync wears (SD cards), at the price of latency.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::record::{Record, frame};
use super::scan::{Scan, read_dir};

/// Where and how the journal writes.
#[derive(Debug, Clone)]
pub struct JournalSettings {
    /// `<state_dir>/journal`.
    pub dir: PathBuf,
    /// Bytes preallocated per segment.
    pub segment_size: u64,
    /// At least this long between two `fdatasync`s; appends arriving meanwhile share the
    /// next one. Zero (the default): a sync starts as soon as the previous one ends.
    pub sync_window: Duration,
}

impl JournalSettings {
    pub fn new(state_dir: &Path) -> JournalSettings {
        JournalSettings {
            dir: state_dir.join("journal"),
            segment_size: 16 << 20,
            sync_window: Duration::ZERO,
        }
    }
}

/// Why an append was not stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("the journal has stopped")]
    Stopped,
}

pub(super) fn io_err(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

struct Append {
    records: Vec<Record>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The daemon's handle on the journal; cheap to clone.
#[derive(Debug, Clone)]
pub struct JournalHandle {
    tx: std_mpsc::Sender<Append>,
    syncs: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl JournalHandle {
    /// `fdatasync`s done so far (for measurements).
    pub fn syncs(&self) -> u64 {
        self.syncs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Returns once the records are on disk (`fdatasync`ed), or why they are not.
    pub async fn append(&self, records: Vec<Record>) -> Result<(), StoreError> {
        let (done, rx) = oneshot::channel();
        self.tx
            .send(Append { records, done })
            .map_err(|_| StoreError::Stopped)?;
        rx.await.unwrap_or(Err(StoreError::Stopped))
    }
}

/// Counters for measurements.
#[derive(Debug, Default, Clone, Copy)]
pub struct JournalStats {
    pub syncs: u64,
    pub records: u64,
    pub bytes: u64,
}

pub struct Journal {
    settings: JournalSettings,
    file: Option<(PathBuf, File)>,
    offset: u64,
    next_segment: u32,
    pub stats: JournalStats,
}

fn segment_name(n: u32) -> String {
    format!("segment-{n:06}.log")
}

/// `segment-000042.log` → 42 (a name that is not one counts as 1, as the first segment).
fn segment_number(path: &Path) -> u32 {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("segment-"))
        .and_then(|n| n.strip_suffix(".log"))
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1)
}

impl Journal {
    /// Open for appending after `scan` (from [`read_dir`]). Nothing already written is
    /// changed, damaged bytes included: when the last segment ends in damage
    /// (`scan.end` is `None`) the next record starts a new segment after it, so new data
    /// never lands beside old bytes it could be confused with, and the next reading finds
    /// the same damage again and steps over it the same way.
    pub fn open(settings: JournalSettings, scan: &Scan) -> Result<Journal, StoreError> {
        std::fs::create_dir_all(&settings.dir).map_err(|e| io_err(&settings.dir, e))?;
        let last = scan.segments.last().map_or(0, |s| segment_number(s));
        let mut j = Journal {
            next_segment: last + 1,
            settings,
            file: None,
            offset: 0,
            stats: JournalStats::default(),
        };
        if let Some((seg, end)) = &scan.end {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(seg)
                .map_err(|e| io_err(seg, e))?;
            j.file = Some((seg.clone(), file));
            j.offset = *end;
        }
        Ok(j)
    }

    /// Create and preallocate segment `n`: where a full disk shows first (fallocate says
    /// ENOSPC), before any byte of a batch is written.
    fn allocate(&self, n: u32) -> Result<(PathBuf, File), StoreError> {
        let path = self.settings.dir.join(segment_name(n));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        // Preallocate so that appends do not grow the file (and its metadata) every time.
        nix::fcntl::fallocate(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            nix::fcntl::FallocateFlags::empty(),
            0,
            self.settings.segment_size as i64,
        )
        .map_err(|e| {
            let _ = std::fs::remove_file(&path);
            io_err(&path, e)
        })?;
        // The directory entry must survive a power cut too.
        if let Ok(d) = File::open(&self.settings.dir) {
            let _ = d.sync_all();
        }
        Ok((path, file))
    }

    /// Write and sync `records`, all or none: on failure nothing of the batch is read back
    /// by a recovery, and the next attempt writes at the same place. Why all or none: a
    /// command's events and its answer are one batch (intake/answers.rs); a recovery that
    /// found the events without the answer would apply a resend of the command twice.
    pub fn write(&mut self, records: &[Record]) -> Result<(), StoreError> {
        let mut frames = Vec::with_capacity(records.len());
        for r in records {
            let payload = serde_json::to_vec(r).map_err(|e| io_err(&self.settings.dir, e))?;
            frames.push(frame(&payload));
        }
        let start = (self.offset, self.next_segment);
        let mut written = Vec::new();
        let r = self.write_frames(&frames, &mut written);
        if r.is_err() {
            self.undo(start, written);
        }
        r
    }

    /// Every segment the batch needs is allocated first, so a full disk refuses the batch
    /// before any of it is written. `written`: the ranges written so far, for [`Self::undo`].
    fn write_frames(
        &mut self,
        frames: &[Vec<u8>],
        written: &mut Vec<(PathBuf, File, u64, u64)>,
    ) -> Result<(), StoreError> {
        // Keep an 8-byte zero end marker inside the segment.
        let size = self.settings.segment_size;
        let mut needed = 0u32;
        let mut at = if self.file.is_some() {
            self.offset
        } else {
            size
        };
        for f in frames {
            if at + f.len() as u64 + 8 > size {
                needed += 1;
                at = 0;
            }
            at += f.len() as u64;
        }
        let mut spare = std::collections::VecDeque::new();
        for k in 0..needed {
            spare.push_back(self.allocate(self.next_segment + k)?);
        }
        let mut synced_files: Vec<File> = Vec::new();
        for framed in frames {
            let fits = self.offset + framed.len() as u64 + 8 <= size;
            if self.file.is_none() || !fits {
                let Some(next) = spare.pop_front() else {
                    return Err(StoreError::Stopped);
                };
                if let Some((_, f)) = self.file.replace(next) {
                    synced_files.push(f);
                }
                self.offset = 0;
                self.next_segment += 1;
            }
            let Some((path, file)) = &self.file else {
                return Err(StoreError::Stopped);
            };
            if let Ok(f) = file.try_clone() {
                written.push((
                    path.clone(),
                    f,
                    self.offset,
                    self.offset + framed.len() as u64,
                ));
            }
            file.write_all_at(framed, self.offset)
                .map_err(|e| io_err(path, e))?;
            self.offset += framed.len() as u64;
            self.stats.records += 1;
            self.stats.bytes += framed.len() as u64;
        }
        for f in &synced_files {
            f.sync_data().map_err(|e| io_err(&self.settings.dir, e))?;
        }
        if let Some((path, file)) = &self.file {
            file.sync_data().map_err(|e| io_err(path, e))?;
        }
        self.stats.syncs += 1;
        Ok(())
    }

    /// After a failed batch: what it wrote is zeroed (inside preallocated space, so this
    /// needs no free space), the segments it began are removed, and the journal goes on
    /// from where the batch started.
    fn undo(
        &mut self,
        (offset, next_segment): (u64, u32),
        written: Vec<(PathBuf, File, u64, u64)>,
    ) {
        for (path, file, from, to) in &written {
            let zeros = vec![0u8; (to - from) as usize];
            if file
                .write_all_at(&zeros, *from)
                .and_then(|()| file.sync_data())
                .is_err()
            {
                tracing::error!(path = %path.display(), from, to, "a failed journal write could not be undone: a restart may read part of it");
            }
        }
        for n in next_segment..self.next_segment {
            let path = self.settings.dir.join(segment_name(n));
            let _ = std::fs::remove_file(&path);
        }
        if self.next_segment != next_segment {
            // Back to the segment the batch started in (none: the next batch allocates).
            let path = self
                .settings
                .dir
                .join(segment_name(next_segment.saturating_sub(1)));
            self.file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .ok()
                .map(|f| (path, f));
            self.next_segment = next_segment;
        }
        self.offset = offset;
    }

    /// Run the writer on its own thread.
    pub fn spawn(mut self) -> JournalHandle {
        let (tx, rx) = std_mpsc::channel::<Append>();
        let window = self.settings.sync_window;
        let syncs = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = syncs.clone();
        let spawned = std::thread::Builder::new()
            .name("journal".into())
            .spawn(move || {
                let mut last_sync: Option<Instant> = None;
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    // With a window, wait out the rest of it since the last sync, collecting.
                    // Without one (the default) nothing waits: whatever queued up while the
                    // previous sync was in flight is drained below and shares this one.
                    if let Some(due) = collect_until(last_sync, window) {
                        while let Some(left) = due.checked_duration_since(Instant::now()) {
                            match rx.recv_timeout(left) {
                                Ok(a) => batch.push(a),
                                Err(std_mpsc::RecvTimeoutError::Timeout) => break,
                                Err(std_mpsc::RecvTimeoutError::Disconnected) => break,
                            }
                        }
                    }
                    while let Ok(a) = rx.try_recv() {
                        batch.push(a);
                    }
                    let records: Vec<Record> = batch
                        .iter()
                        .flat_map(|a| a.records.iter().cloned())
                        .collect();
                    let r = self.write(&records);
                    counter.store(self.stats.syncs, std::sync::atomic::Ordering::Relaxed);
                    last_sync = Some(Instant::now());
                    for a in batch {
                        let _ = a.done.send(r.clone());
                    }
                }
            });
        if spawned.is_err() {
            // Without a thread every append fails with `Stopped`: loud, not silent.
            let (dead_tx, _) = std_mpsc::channel();
            return JournalHandle { tx: dead_tx, syncs };
        }
        JournalHandle { tx, syncs }
    }
}

/// Until when a batch that has its first append keeps collecting before it is synced:
/// `None` means sync at once (no window, or the window since the last sync is over).
fn collect_until(last_sync: Option<Instant>, window: Duration) -> Option<Instant> {
    let due = last_sync? + window;
    (due > Instant::now()).then_some(due)
}

/// Open the journal in `settings.dir` for appending, after recovery read it.
pub fn open_after(settings: JournalSettings) -> Result<(Journal, Scan), StoreError> {
    let scan = read_dir(&settings.dir).map_err(|e| io_err(&settings.dir, e))?;
    let j = Journal::open(settings, &scan)?;
    Ok((j, scan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Millis;
    use crate::rules::game::Event;

    fn ev(seq: u64) -> Record {
        Record::Event {
            board: "b".into(),
            seq,
            game: 1,
            event: Event::Resumed {
                at: Millis(seq as i64),
                arbiter: "a".into(),
            },
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hallclock-{}-j-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Issue 10 §7: by default an append right after a sync is synced at once, not held for
    /// a window; a configured window still spaces syncs.
    #[test]
    fn group_commit_waits_only_with_a_window() {
        let d = dir("window");
        let just_synced = Some(Instant::now());
        assert_eq!(JournalSettings::new(&d).sync_window, Duration::ZERO);
        assert_eq!(collect_until(just_synced, Duration::ZERO), None);
        assert_eq!(collect_until(None, Duration::from_millis(50)), None);
        let due = collect_until(just_synced, Duration::from_secs(60));
        assert!(due.is_some_and(|d| d > Instant::now()));
        let long_ago = Instant::now().checked_sub(Duration::from_secs(1));
        assert_eq!(collect_until(long_ago, Duration::from_millis(50)), None);
    }

    /// Issue 36: a batch that cannot be stored whole (the next segment cannot be made:
    /// here the directory is gone, on a hall server the disk is full) leaves none of its
    /// records readable, though the first ones fitted in the current segment; the next
    /// batch goes where it would have gone.
    #[test]
    fn a_batch_that_fails_leaves_nothing_behind() {
        let d = dir("all-or-none");
        let mut s = JournalSettings::new(&d);
        s.dir = d.clone();
        s.segment_size = 300;
        let (mut j, _) = open_after(s).unwrap();
        j.write(&[ev(1)]).unwrap();
        let aside = d.with_extension("aside");
        let _ = std::fs::remove_dir_all(&aside);
        std::fs::rename(&d, &aside).unwrap();
        // Three records: the first fits after ev(1), the others need a second segment.
        assert!(j.write(&[ev(2), ev(3), ev(4)]).is_err());
        std::fs::rename(&aside, &d).unwrap();
        let scan = read_dir(&d).unwrap();
        assert_eq!(scan.records.len(), 1, "only what was stored before");
        assert!(scan.damage.is_none(), "{:?}", scan.damage);
        j.write(&[ev(2)]).unwrap();
        let scan = read_dir(&d).unwrap();
        assert_eq!(scan.records.len(), 2);
        assert!(scan.damage.is_none(), "{:?}", scan.damage);
    }

    #[test]
    fn writes_are_read_back_across_segments() {
        let d = dir("segments");
        let mut s = JournalSettings::new(&d);
        s.dir = d.clone();
        s.segment_size = 300;
        let (mut j, _) = open_after(s.clone()).unwrap();
        for i in 1..=10 {
            j.write(&[ev(i)]).unwrap();
        }
        let scan = read_dir(&d).unwrap();
        assert!(scan.segments.len() > 2);
        assert_eq!(scan.records.len(), 10);
        assert!(scan.damage.is_none());
        // Reopening continues after the last record.
        let (mut j, _) = open_after(s).unwrap();
        j.write(&[ev(11)]).unwrap();
        assert_eq!(read_dir(&d).unwrap().records.len(), 11);
    }
}
