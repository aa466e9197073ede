//! `hallclock pgn --round N [--board B]`: a round's PGN from the journal, in board order.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use crate::pgn::{self, GameInfo, PgnGame};
use crate::store::JournaledGame;
use crate::store::games::games;

use super::journal::JournalAt;

#[derive(Debug, clap::Args)]
pub struct PgnArgs {
    /// The round.
    #[arg(long)]
    pub round: u32,
    /// Only this board's game (its id, e.g. `board-007`).
    #[arg(long)]
    pub board: Option<String>,
    /// The `Event` tag (default: the round's as broadcast — its `start_round`'s, its
    /// TRF's or `[broadcast] event` — else `?`).
    #[arg(long)]
    pub event: Option<String>,
    /// The `Site` tag (default: the round's as broadcast, else `?`).
    #[arg(long)]
    pub site: Option<String>,
    #[command(flatten)]
    pub at: JournalAt,
}

/// Round `round`'s games (or one board's), in board order: by the number in the board id,
/// then by id. Each with `event` and `site` as tags.
pub fn round_games(
    games: &BTreeMap<u64, JournaledGame>,
    round: u32,
    board: Option<&str>,
    event: Option<&str>,
    site: Option<&str>,
) -> Vec<PgnGame> {
    let mut chosen: Vec<(&u64, &JournaledGame)> = games
        .iter()
        .filter(|(_, g)| g.round == Some(round))
        .filter(|(_, g)| board.is_none_or(|b| g.board == b))
        .collect();
    chosen.sort_by(|(ia, a), (ib, b)| {
        let key = |g: &JournaledGame| {
            (
                pgn::board_number(&g.board).unwrap_or(u32::MAX),
                g.board.clone(),
            )
        };
        key(a).cmp(&key(b)).then(ia.cmp(ib))
    });
    chosen
        .into_iter()
        .map(|(_, g)| {
            let info = GameInfo {
                event: event.map(String::from),
                site: site.map(String::from),
                round: g.round,
                board: pgn::board_number(&g.board),
                white_fide_id: g.fide.0,
                black_fide_id: g.fide.1,
            };
            pgn::game(&g.setup, &g.events, &info)
        })
        .collect()
}

pub fn run(args: PgnArgs) -> ExitCode {
    let (dir, scan) = match args.at.scan() {
        Ok(found) => found,
        Err(code) => return code,
    };
    if let Some(d) = &scan.damage {
        eprintln!(
            "hallclock pgn: {}; the games are shown as their intact records have them",
            d.words()
        );
    }
    let all = games(scan.records.into_iter().map(|(r, _, _)| r));
    // The tags the round was broadcast with (stored beside the journal at its start), so
    // this PGN and the live one name the games alike; the options override them.
    let stored = dir
        .parent()
        .and_then(|state| crate::broadcast::read_tags(state, args.round))
        .unwrap_or_default();
    let event = args.event.or(stored.event);
    let site = args.site.or(stored.site);
    let chosen = round_games(
        &all,
        args.round,
        args.board.as_deref(),
        event.as_deref(),
        site.as_deref(),
    );
    if chosen.is_empty() {
        let which = match &args.board {
            Some(b) => format!("round {} on board '{}'", args.round, b.escape_debug()),
            None => format!("round {}", args.round),
        };
        eprintln!(
            "hallclock pgn: no game of {which} in the journal at {}",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let text = pgn::round(&chosen);
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error.
    let _ = out.write_all(text.as_bytes());
    ExitCode::SUCCESS
}
