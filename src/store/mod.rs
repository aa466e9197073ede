//! The journal: an append-only log of every core event of every game, so that a power cut
//! or a `kill -9` loses nothing that anyone was told about (DESIGN.md §6).
//!
//! Layout: `<state_dir>/journal/segment-000001.log`, … Each segment is preallocated
//! (zeros); a record is `len: u32 LE | crc32c(payload): u32 LE | payload` with a JSON
//! payload, and a zero length marks the end of the written part.
//!
//! Recovery ([`scan`]) reads every segment in order and every intact record in it. A
//! record that is torn, fails its CRC or does not parse costs only itself: the reading
//! searches the bytes after it for the next intact frame and goes on from there, in the
//! same segment and the later ones. Each damaged span is reported exactly ([`damage`]:
//! segment, bytes, and which boards' seqs are missing around it), and nothing written is
//! ever changed: no zeroing, no renaming; when the last segment ends in damage the next
//! record starts a new segment. No `seq` seen anywhere (damaged bytes included) is used
//! again, and a game that may have lost events is held for the arbiter
//! ([`RecoveredGame::damaged`]). docs/ARCHITECTURE.md, "Recovery after damage", has the
//! rule.

pub mod damage;
pub mod games;
pub mod journal;
pub mod record;
pub mod scan;
pub mod startup;

pub use games::{Folded, JournaledGame, Recovered, RecoveredGame, fold, recover, replay};
pub use journal::{Journal, JournalHandle, JournalSettings, StoreError, open_after};
pub use record::Record;
pub use scan::read_dir;
