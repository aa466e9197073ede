//! The journal: an append-only log of every core event of every game, so that a power cut
//! or a `kill -9` loses nothing that anyone was told about (DESIGN.md §6).
//!
//! Layout: `<state_dir>/journal/segment-000001.log`, … Each segment is preallocated
//! (zeros); a record is `len: u32 LE | crc32c(payload): u32 LE | payload` with a JSON
//! payload, and a zero length marks the end of the written part. Recovery reads segments
//! in order and stops at the first record that is torn or fails its CRC: everything
//! before it is replayed, everything from it on is cut off (and reported).

pub mod damage;
pub mod games;
pub mod journal;
pub mod record;
pub mod scan;
pub mod startup;

pub use games::{Folded, JournaledGame, Recovered, RecoveredGame, fold, recover, replay};
pub use journal::{Journal, JournalHandle, JournalSettings, StoreError, open_after};
pub use record::{Record, read_dir};
