//! Journal records, their framing, and reading a journal back (recovery, dump, verify,
//! replay).

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rules::game::{Event, Game, Setup};

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
}

impl Record {
    pub fn board(&self) -> &str {
        match self {
            Record::GameCreated { board, .. } | Record::Event { board, .. } => board,
            Record::GameMoved { to, .. } => to,
            Record::Answered { .. } => "",
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

/// A game rebuilt from the journal.
#[derive(Debug, Clone)]
pub struct RecoveredGame {
    pub game_id: u64,
    pub game: Game,
    pub round: Option<u32>,
    pub fide: (Option<u64>, Option<u64>),
    /// The game's events in order (the board's PGN is made from them).
    pub events: Vec<Event>,
}

/// The state of the hall as the journal left it.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The current game of each board (finished or not).
    pub games: BTreeMap<String, RecoveredGame>,
    /// The last event sequence number published for each board.
    pub seqs: BTreeMap<String, u64>,
    pub next_game_id: u64,
    pub records: usize,
    pub damage: Option<Damage>,
    /// Records that could not be applied (a game whose setup no longer validates).
    pub problems: Vec<String>,
    /// Every command's first reply, in order (idempotent transactions).
    pub answered: Vec<Record>,
}

/// Replay the journal: each game is exactly the fold of its events (decide/evolve).
pub fn recover(dir: &Path) -> std::io::Result<Recovered> {
    let scan = read_dir(dir)?;
    Ok(replay(
        scan.records.into_iter().map(|(r, _, _)| r),
        scan.damage,
    ))
}

pub fn replay(records: impl Iterator<Item = Record>, damage: Option<Damage>) -> Recovered {
    let mut out = Recovered {
        damage,
        next_game_id: 1,
        ..Recovered::default()
    };
    // Games by id, and which board holds which game.
    let mut games: BTreeMap<u64, RecoveredGame> = BTreeMap::new();
    let mut boards: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        out.records += 1;
        match r {
            Record::GameCreated {
                board,
                game,
                round,
                fide,
                setup,
            } => {
                out.next_game_id = out.next_game_id.max(game + 1);
                match Game::new(*setup) {
                    Ok(g) => {
                        games.insert(
                            game,
                            RecoveredGame {
                                game_id: game,
                                game: g,
                                round,
                                fide,
                                events: Vec::new(),
                            },
                        );
                        boards.insert(board, game);
                    }
                    Err(e) => out.problems.push(format!(
                        "game {game} on {board}: setup no longer valid: {e}"
                    )),
                }
            }
            Record::GameMoved { game, from, to } => {
                if boards.get(&from) == Some(&game) {
                    boards.remove(&from);
                }
                boards.insert(to, game);
            }
            Record::Event {
                board,
                seq,
                game,
                event,
            } => {
                let s = out.seqs.entry(board).or_insert(0);
                *s = (*s).max(seq);
                if let Some(g) = games.get_mut(&game) {
                    g.game.evolve(&event);
                    g.events.push(event);
                }
            }
            answered @ Record::Answered { .. } => out.answered.push(answered),
        }
    }
    for (board, game) in boards {
        if let Some(g) = games.get(&game) {
            out.games.insert(board, g.clone());
        }
    }
    out
}

/// Compaction: rewrite the journal with only the records of the games that are still
/// current on some board (their creation, moves and events, `seq` numbers unchanged), and
/// move the old segments into `<state_dir>/archive/journal-<suffix>/`. Finished rounds
/// stay readable there (`hallclock journal dump --state-dir` on the archive's parent).
/// Returns how many records were kept, or `None` when there was nothing to compact.
pub fn compact(
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
