//! Reading a journal back: every intact record of every segment, in order, and every
//! damaged span between them (issue 36).
//!
//! A record that is torn, fails its CRC or does not parse does not end the reading: the
//! bytes after it are searched, byte by byte, for the next frame that is whole, whose CRC
//! matches and whose JSON parses, and the reading goes on from there, in the same segment
//! and in the later ones. So one flipped byte costs the one record it is in, not the rest
//! of the journal. What the damaged bytes were is worked out in [`super::damage`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::damage::{Damage, RawSpan};
use super::record::{HEADER, Record};

/// Every intact record, in order, with the segment and offset where it starts.
#[derive(Debug, Default)]
pub struct Scan {
    pub records: Vec<(Record, PathBuf, u64)>,
    /// Every damaged span, and what is lost with it; `None` when the journal is whole.
    pub damage: Option<Damage>,
    pub segments: Vec<PathBuf>,
    /// Where the next record may go: the last segment and the end of its last record, when
    /// only zeros follow that. `None` with segments: the last segment ends in damaged bytes,
    /// so appends start a new segment and never land beside (or inside) old data.
    pub end: Option<(PathBuf, u64)>,
}

impl Scan {
    /// The highest `seq` `board` has anywhere in the journal (damaged spans and segments
    /// set aside by earlier versions included): the next event is numbered above it.
    pub fn last_seq(&self, board: &str) -> u64 {
        let intact = self
            .records
            .iter()
            .filter_map(|(r, _, _)| match r {
                Record::Event { board: b, seq, .. } if b == board => Some(*seq),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let seen = self
            .damage
            .as_ref()
            .and_then(|d| d.seqs.get(board).copied())
            .unwrap_or(0);
        intact.max(seen)
    }
}

fn named(dir: &Path, suffix: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("segment-") && n.ends_with(suffix))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    out.sort();
    Ok(out)
}

/// The journal's segments in order.
pub fn segments(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    named(dir, ".log")
}

/// Segments an earlier version renamed `*.damaged` after a damaged one. They are not
/// replayed (their place among the later records is unknown), but their `seq`s count.
pub fn set_aside(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    named(dir, ".log.damaged")
}

pub(super) fn non_zero_len(bytes: &[u8]) -> usize {
    // Preallocated zeros after the end are not data.
    bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1)
}

/// How every payload our writer frames begins (serde writes an enum's tag first). Looking
/// for it first makes the byte-by-byte search after damage cheap, and a frame that only
/// happens to have a matching CRC in random bytes cannot pass.
const PAYLOAD_START: &[u8] = b"{\"record\":\"";

/// The record framed at `at`, and where the next one starts; or why there is none.
fn frame_at(bytes: &[u8], at: usize, searching: bool) -> Result<(Record, usize), String> {
    let Some(header) = bytes.get(at..at + HEADER) else {
        return Err("a torn record header".into());
    };
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if len == 0 {
        return Err("zeros inside the written data".into());
    }
    let Some(payload) = bytes.get(at + HEADER..at + HEADER + len) else {
        return Err(format!("a torn record ({len} bytes announced)"));
    };
    if searching && !payload.starts_with(PAYLOAD_START) {
        return Err("not a record".into());
    }
    if crc32c::crc32c(payload) != crc {
        return Err("a record that fails its CRC".into());
    }
    match serde_json::from_slice::<Record>(payload) {
        Ok(r) => Ok((r, at + HEADER + len)),
        Err(e) => Err(format!("a record that does not parse: {e}")),
    }
}

/// What one segment holds, in order.
pub(super) enum Piece {
    Record(Record, u64),
    /// `[start, end)` holds no intact record; `reason` is why the first frame there failed.
    Bad {
        start: u64,
        end: u64,
        reason: String,
    },
}

/// Read one segment's bytes: its records and the damaged spans between them.
pub(super) fn scan_segment(bytes: &[u8]) -> Vec<Piece> {
    let data_end = non_zero_len(bytes);
    let mut pieces = Vec::new();
    let mut at = 0usize;
    let mut bad: Option<(usize, String)> = None;
    while at < data_end {
        match frame_at(bytes, at, bad.is_some()) {
            Ok((record, next)) => {
                if let Some((start, reason)) = bad.take() {
                    pieces.push(Piece::Bad {
                        start: start as u64,
                        end: at as u64,
                        reason,
                    });
                }
                pieces.push(Piece::Record(record, at as u64));
                at = next;
            }
            Err(reason) => {
                if bad.is_none() {
                    bad = Some((at, reason));
                }
                at += 1;
            }
        }
    }
    if let Some((start, reason)) = bad {
        pieces.push(Piece::Bad {
            start: start as u64,
            end: data_end as u64,
            reason,
        });
    }
    pieces
}

/// Read every intact record of the journal in `dir`, going on after damage.
pub fn read_dir(dir: &Path) -> std::io::Result<Scan> {
    let mut scan = Scan {
        segments: segments(dir)?,
        ..Scan::default()
    };
    let mut raw: Vec<RawSpan> = Vec::new();
    for seg in &scan.segments {
        let bytes = fs::read(seg)?;
        let data_end = non_zero_len(&bytes) as u64;
        let mut clean_end = Some(0u64);
        for piece in scan_segment(&bytes) {
            match piece {
                Piece::Record(r, at) => {
                    let framed_end = at + HEADER as u64 + record_len(&bytes, at);
                    scan.records.push((r, seg.clone(), at));
                    clean_end = Some(framed_end);
                }
                Piece::Bad { start, end, reason } => {
                    raw.push(RawSpan {
                        segment: seg.clone(),
                        start,
                        end,
                        reason,
                        before: scan.records.len(),
                        cut: end == data_end,
                        bytes: bytes[start as usize..end as usize].to_vec(),
                    });
                    clean_end = None;
                }
            }
        }
        scan.end = clean_end.map(|e| (seg.clone(), e));
    }
    let set_aside = set_aside(dir)?;
    if !raw.is_empty() || !set_aside.is_empty() {
        let set_aside: Vec<(PathBuf, BTreeMap<String, u64>)> = set_aside
            .into_iter()
            .map(|p| {
                let seqs = seqs_in(&p);
                (p, seqs)
            })
            .collect();
        scan.damage = Some(Damage::analyse(&scan.records, raw, &set_aside));
    }
    Ok(scan)
}

fn record_len(bytes: &[u8], at: u64) -> u64 {
    let at = at as usize;
    bytes
        .get(at..at + 4)
        .map_or(0, |h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as u64)
}

/// The highest seq of each board in a file (intact records and legible damaged bytes).
pub(super) fn seqs_in(path: &Path) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let Ok(bytes) = std::fs::read(path) else {
        return out;
    };
    let mut note = |b: &str, s: u64| {
        let top = out.entry(b.to_string()).or_insert(0);
        *top = (*top).max(s);
    };
    for piece in scan_segment(&bytes) {
        match piece {
            Piece::Record(Record::Event { board, seq, .. }, _) => note(&board, seq),
            Piece::Record(..) => {}
            Piece::Bad { start, end, .. } => {
                let found = super::damage::legible(&bytes[start as usize..end as usize]);
                for (b, s, _) in found.boards {
                    if let Some(s) = s {
                        note(&b, s);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::record::frame;

    fn rec(k: u64) -> Vec<u8> {
        let r = Record::GameMoved {
            game: k,
            from: "a".into(),
            to: "b".into(),
        };
        frame(&serde_json::to_vec(&r).unwrap_or_default())
    }

    fn kinds(pieces: &[Piece]) -> Vec<String> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Record(Record::GameMoved { game, .. }, at) => format!("r{game}@{at}"),
                Piece::Record(..) => "other".into(),
                Piece::Bad { start, end, .. } => format!("bad {start}..{end}"),
            })
            .collect()
    }

    /// A flipped byte in the middle costs the record it is in; the search finds the next.
    #[test]
    fn the_reading_goes_on_after_a_damaged_record() {
        let (a, b, c) = (rec(1), rec(2), rec(3));
        let mut bytes = [a.clone(), b.clone(), c.clone(), vec![0; 64]].concat();
        bytes[a.len() + 12] ^= 1;
        let got = kinds(&scan_segment(&bytes));
        let b_start = a.len();
        let c_start = a.len() + b.len();
        assert_eq!(
            got,
            vec![
                "r1@0".to_string(),
                format!("bad {b_start}..{c_start}"),
                format!("r3@{c_start}")
            ]
        );
    }

    /// Zeros where a record was (a sector lost) and garbage at the end are spans too; the
    /// end is where the written data ends, not the preallocated zeros.
    #[test]
    fn zeroed_records_and_a_torn_tail_are_spans() {
        let (a, b, c) = (rec(1), rec(2), rec(3));
        let mut bytes = [a.clone(), b.clone(), c.clone(), vec![0; 64]].concat();
        bytes[a.len()..a.len() + b.len()].fill(0);
        let end = a.len() + b.len() + c.len();
        bytes[end] = 7;
        bytes[end + 3] = 9;
        let got = kinds(&scan_segment(&bytes));
        let c_start = a.len() + b.len();
        assert_eq!(
            got,
            vec![
                "r1@0".to_string(),
                format!("bad {}..{c_start}", a.len()),
                format!("r3@{c_start}"),
                format!("bad {end}..{}", end + 4)
            ]
        );
    }
}
