//! Journal records, their framing, and reading a journal back (recovery, dump, verify,
//! replay).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rules::game::{Event, Setup};

/// One journaled fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    /// A game begins on `board` (round start); `game` is its id across boards.
    GameCreated {
        board: String,
        game: u64,
        round: Option<u32>,
        fide: (Option<u64>, Option<u64>),
        setup: Box<Setup>,
    },
    /// A game continues on another board (6.10 replacement).
    GameMoved { game: u64, from: String, to: String },
    /// A core event of `game`, the `seq`-th event published for `board`.
    Event {
        board: String,
        seq: u64,
        game: u64,
        event: Event,
    },
    /// The first reply to a command, so that the same transaction sent again gets it
    /// again and is not applied twice (also after a restart). `arbiter` is the proven
    /// account id (or `open:` and the claimed name with `commands = "open"`); `digest`
    /// is sha256 of the topic and the command's bytes.
    Answered {
        arbiter: String,
        transaction: String,
        digest: String,
        topic: String,
        response: serde_json::Value,
    },
    /// Where game time stood against the boot's clocks: at every start and at every
    /// wall-clock step (ARCHITECTURE.md, "Where game time comes from"). A restart in the
    /// same boot goes on from the last one exactly; `hallclock journal verify` reads
    /// instants against them.
    Time(crate::timebase::Anchor),
}

impl Record {
    pub fn board(&self) -> &str {
        match self {
            Record::GameCreated { board, .. } | Record::Event { board, .. } => board,
            Record::GameMoved { to, .. } => to,
            Record::Answered { .. } | Record::Time(_) => "",
        }
    }
}

pub const HEADER: usize = 8;

/// `len | crc32c | payload`.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Where reading a journal stopped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Damage {
    pub segment: PathBuf,
    /// Byte offset of the first bad record in that segment.
    pub offset: u64,
    pub reason: String,
    /// Bytes of written (non-zero) data dropped from that point on, in every segment.
    pub dropped_bytes: u64,
}

/// Every good record, in order, with the segment and offset where it starts.
#[derive(Debug, Default)]
pub struct Scan {
    pub records: Vec<(Record, PathBuf, u64)>,
    pub damage: Option<Damage>,
    pub segments: Vec<PathBuf>,
    /// Where the next record goes: the last segment and the end of its good data.
    pub end: Option<(PathBuf, u64)>,
}

pub fn segments(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("segment-") && n.ends_with(".log"))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    out.sort();
    Ok(out)
}

fn non_zero_len(bytes: &[u8]) -> u64 {
    // Preallocated zeros after the end are not data.
    bytes
        .iter()
        .rposition(|b| *b != 0)
        .map_or(0, |i| i as u64 + 1)
}

/// Read every record of the journal in `dir`, stopping at the first damage.
pub fn read_dir(dir: &Path) -> std::io::Result<Scan> {
    let mut scan = Scan {
        segments: segments(dir)?,
        ..Scan::default()
    };
    let segs = scan.segments.clone();
    for (k, seg) in segs.iter().enumerate() {
        let mut bytes = Vec::new();
        fs::File::open(seg)?.read_to_end(&mut bytes)?;
        let mut at = 0usize;
        let bad = loop {
            if at + HEADER > bytes.len() {
                if bytes[at..].iter().any(|b| *b != 0) {
                    break Some("a torn record header".to_string());
                }
                break None;
            }
            let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
                as usize;
            let crc =
                u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]);
            if len == 0 {
                if crc != 0 || bytes[at..].iter().any(|b| *b != 0) {
                    break Some("data after the end marker".to_string());
                }
                break None;
            }
            let Some(payload) = bytes.get(at + HEADER..at + HEADER + len) else {
                break Some(format!("a torn record ({len} bytes announced)"));
            };
            if crc32c::crc32c(payload) != crc {
                break Some("a record that fails its CRC".to_string());
            }
            match serde_json::from_slice::<Record>(payload) {
                Ok(r) => scan.records.push((r, seg.clone(), at as u64)),
                Err(e) => break Some(format!("a record that does not parse: {e}")),
            }
            at += HEADER + len;
        };
        if let Some(reason) = bad {
            let mut dropped = non_zero_len(&bytes).saturating_sub(at as u64);
            for later in &segs[k + 1..] {
                dropped += fs::read(later).map(|b| non_zero_len(&b)).unwrap_or(0);
            }
            scan.damage = Some(Damage {
                segment: seg.clone(),
                offset: at as u64,
                reason,
                dropped_bytes: dropped,
            });
            scan.end = Some((seg.clone(), at as u64));
            return Ok(scan);
        }
        scan.end = Some((seg.clone(), at as u64));
    }
    Ok(scan)
}
