//! The one fold of the journal: every game it holds (by id, following 6.10 moves to the
//! board that has it now), each with its setup, its events and the game they fold into,
//! and what the journal says besides (sequence numbers, answers). Start-up recovery, the
//! broadcast feed and `hallclock pgn` all read the journal through it.

use std::collections::BTreeMap;

use crate::rules::game::{Event, Game, Setup};

use std::path::Path;

use super::damage::Damage;
use super::record::Record;

/// A game as the journal has it: the board it is on now, its setup and its events.
#[derive(Debug, Clone)]
pub struct JournaledGame {
    pub board: String,
    pub round: Option<u32>,
    pub fide: (Option<u64>, Option<u64>),
    pub setup: Setup,
    pub events: Vec<Event>,
    /// The game its events fold into (`Game::evolve` from `Game::new(setup)`); `None`
    /// when the setup no longer validates (a journal from a laxer version).
    pub game: Option<Game>,
}

impl JournaledGame {
    /// The game has a result.
    pub fn finished(&self) -> bool {
        self.game.as_ref().is_some_and(|g| g.result().is_some())
    }
}

/// The journal folded.
#[derive(Debug, Default)]
pub struct Folded {
    /// Every game by id, finished ones and those no board holds any more too.
    pub games: BTreeMap<u64, JournaledGame>,
    /// The game each board holds now (only games whose setup validates).
    pub holders: BTreeMap<String, u64>,
    /// The last event sequence number published for each board.
    pub seqs: BTreeMap<String, u64>,
    pub next_game_id: u64,
    /// How many records were read.
    pub records: usize,
    /// Records that could not be applied (a game whose setup no longer validates).
    pub problems: Vec<String>,
    /// Every command's first reply, in order (idempotent transactions).
    pub answered: Vec<Record>,
    /// The last time anchor and the latest instant of any event.
    pub time: crate::timebase::JournalTime,
}

/// Fold `records`, in journal order.
pub fn fold(records: impl IntoIterator<Item = Record>) -> Folded {
    let mut out = Folded {
        next_game_id: 1,
        ..Folded::default()
    };
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
                let folded = match Game::new((*setup).clone()) {
                    Ok(g) => {
                        out.holders.insert(board.clone(), game);
                        Some(g)
                    }
                    Err(e) => {
                        out.problems.push(format!(
                            "game {game} on {board}: setup no longer valid: {e}"
                        ));
                        None
                    }
                };
                out.games.insert(
                    game,
                    JournaledGame {
                        board,
                        round,
                        fide,
                        setup: *setup,
                        events: Vec::new(),
                        game: folded,
                    },
                );
            }
            Record::GameMoved { game, from, to } => {
                if out.holders.get(&from) == Some(&game) {
                    out.holders.remove(&from);
                }
                if let Some(g) = out.games.get_mut(&game) {
                    g.board = to.clone();
                }
                out.holders.insert(to, game);
            }
            Record::Event {
                board,
                seq,
                game,
                event,
            } => {
                let s = out.seqs.entry(board).or_insert(0);
                *s = (*s).max(seq);
                let at = event.at();
                out.time.latest = Some(out.time.latest.map_or(at, |l| l.max(at)));
                if let Some(g) = out.games.get_mut(&game) {
                    if let Some(core) = &mut g.game {
                        core.evolve(&event);
                    }
                    g.events.push(event);
                }
            }
            answered @ Record::Answered { .. } => out.answered.push(answered),
            Record::Time(anchor) => out.time.anchor = Some(anchor),
        }
    }
    out.time.live = out.holders.values().any(|id| {
        out.games
            .get(id)
            .and_then(|g| g.game.as_ref())
            .is_some_and(|g| g.result().is_none())
    });
    out
}

/// Every game of the journal by id (see [`fold`]).
pub fn games(records: impl IntoIterator<Item = Record>) -> BTreeMap<u64, JournaledGame> {
    fold(records).games
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
    /// The journal is damaged where this game may have lost events, the game has no
    /// result, and no arbiter has acted on it since: what it shows is the fold of the
    /// events that survived, which may not be where the game stands. The board must hold
    /// it (no clock started or resumed, no flag or default decided by the daemon) until
    /// the arbiter acts (docs/ARCHITECTURE.md, "Recovery after damage").
    pub damaged: bool,
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
    /// What the journal says of time (its last anchor, its latest instant, live games).
    pub time: crate::timebase::JournalTime,
}

/// Replay the journal: each game is exactly the fold of its events (decide/evolve).
pub fn recover(dir: &Path) -> std::io::Result<Recovered> {
    let scan = super::scan::read_dir(dir)?;
    Ok(replay(
        scan.records.into_iter().map(|(r, _, _)| r),
        scan.damage,
    ))
}

pub fn replay(records: impl Iterator<Item = Record>, damage: Option<Damage>) -> Recovered {
    Recovered::from_fold(&fold(records), damage)
}

impl Recovered {
    /// What start-up needs of the journal's fold: the game each board holds now.
    pub fn from_fold(folded: &Folded, damage: Option<Damage>) -> Recovered {
        let games = &folded.games;
        let held = |id: u64| damage.as_ref().is_some_and(|d| d.held.contains(&id));
        let mut current = BTreeMap::new();
        for (board, &id) in &folded.holders {
            if let Some(g) = games.get(&id)
                && let Some(game) = &g.game
            {
                current.insert(
                    board.clone(),
                    RecoveredGame {
                        game_id: id,
                        game: game.clone(),
                        round: g.round,
                        fide: g.fide,
                        events: g.events.clone(),
                        // A game whose result survived stays decided with it.
                        damaged: held(id) && game.result().is_none(),
                    },
                );
            }
        }
        // No seq is used twice: damaged bytes and set-aside segments count too.
        let mut seqs = folded.seqs.clone();
        for (b, s) in damage.iter().flat_map(|d| d.seqs.iter()) {
            let top = seqs.entry(b.clone()).or_insert(0);
            *top = (*top).max(*s);
        }
        Recovered {
            games: current,
            seqs,
            next_game_id: folded.next_game_id,
            records: folded.records,
            damage,
            problems: folded.problems.clone(),
            answered: folded.answered.clone(),
            time: folded.time.clone(),
        }
    }
}
