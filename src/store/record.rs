//! Journal records and their framing. Reading a journal back (recovery, dump, verify,
//! replay) is [`super::scan`]; what damage cost is [`super::damage`].

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
