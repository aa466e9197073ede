//! `hallclock trf show|results`: a pairing program's Tournament Report File in (players and
//! a round's boards as JSON lines) and out (the round's results filled in).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use crate::hall::trf_round::person;
use crate::mqtt::payload::{BoardResult, StatePayload};
use crate::trf::round::{Order, codes, read_engine_pairs};
use crate::trf::{Player, ResultCode, Trf};

/// Bad input (a file that is not a TRF, a round it does not have): exit 2.
const BAD_INPUT: u8 = 2;

#[derive(Debug, clap::Subcommand)]
pub enum TrfCmd {
    /// The tournament, its players and a round's boards in board order, as JSON lines.
    Show {
        /// The TRF (TRF16 or TRF26) the pairing program exported.
        file: PathBuf,
        #[command(flatten)]
        round: RoundArgs,
        /// Also name the hall board of each tournament board (from `[[boards]]`).
        #[arg(long, short = 'c', value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Write the TRF back with a round's results filled in (`1 = 0 + -`, `X` while a game
    /// is adjourned or still being played).
    Results {
        #[command(flatten)]
        round: RoundArgs,
        /// The TRF the round was started from.
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        /// Where to write it (may be the same file).
        #[arg(long = "out", value_name = "FILE")]
        output: PathBuf,
        /// The round summary (the `round_finished` hall event, as JSON) instead of the
        /// journal.
        #[arg(long, value_name = "FILE")]
        results: Option<PathBuf>,
        /// The state directory whose journal has the games. Default: from --config.
        #[arg(long)]
        state_dir: Option<PathBuf>,
        /// A hall on several servers: also the other nodes' games, read from their boards'
        /// retained states on the broker of --config (this node's journal has only its
        /// own). A board whose next round has begun no longer shows this round's game.
        #[arg(long, conflicts_with = "results")]
        hall: bool,
        /// The configuration naming the state directory.
        #[arg(long, short = 'c', default_value = crate::config::DEFAULT_PATH)]
        config: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
pub struct RoundArgs {
    /// The round (default: the last one the file pairs).
    #[arg(long)]
    round: Option<usize>,
    /// The board order of a pairing engine's output (JaVaFo, bbpPairings: a count, then
    /// `white black` per board).
    #[arg(long, value_name = "FILE", conflicts_with = "board_order")]
    pairs: Option<PathBuf>,
    /// The arbiter's board order: starting ranks, one player per board, e.g. `12,3,7`;
    /// the other games follow in the usual order.
    #[arg(long, value_delimiter = ',')]
    board_order: Option<Vec<u32>>,
}

fn fail(what: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("hallclock trf: {what}");
    ExitCode::from(code)
}

/// Read a TRF, telling on stderr each line skipped (a pairing program skips them too, so
/// they are no reason to fail; the arbiter should still know).
fn read_trf(path: &Path) -> Result<Trf, ExitCode> {
    let bytes =
        std::fs::read(path).map_err(|e| fail(format!("cannot read {}: {e}", path.display()), 1))?;
    let trf = Trf::read(&bytes).map_err(|e| fail(format!("{}: {e}", path.display()), BAD_INPUT))?;
    for w in &trf.warnings {
        eprintln!("hallclock trf: warning: {}: {w}", path.display());
    }
    Ok(trf)
}

impl RoundArgs {
    /// The round and its order, from the flags.
    fn resolve(&self, trf: &Trf) -> Result<(usize, Vec<u32>), ExitCode> {
        let round = self.round.unwrap_or_else(|| trf.rounds());
        let order = match (&self.pairs, &self.board_order) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), 1))?;
                let pairs = read_engine_pairs(&text)
                    .map_err(|e| fail(format!("{}: {e}", path.display()), BAD_INPUT))?;
                pairs
                    .into_iter()
                    .filter(|p| p.1 != 0)
                    .map(|p| p.0)
                    .collect()
            }
            (None, Some(ranks)) => ranks.clone(),
            (None, None) => Vec::new(),
        };
        Ok((round, order))
    }
}

pub fn run(cmd: TrfCmd) -> ExitCode {
    match cmd {
        TrfCmd::Show {
            file,
            round,
            config,
        } => match show(&file, &round, config.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(code) => code,
        },
        TrfCmd::Results {
            round,
            input,
            output,
            results,
            state_dir,
            hall,
            config,
        } => {
            let from = match results {
                Some(path) => From::Summary(path),
                None => From::Journal {
                    state_dir,
                    config,
                    hall,
                },
            };
            match fill(&input, &output, &round, from) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
    }
}

fn show(file: &Path, args: &RoundArgs, config: Option<&Path>) -> Result<(), ExitCode> {
    let trf = read_trf(file)?;
    let (round, order) = args.resolve(&trf)?;
    let halls = match config {
        Some(path) => {
            let c = super::config::load(path)?;
            crate::config::board_numbers(&c.boards)
                .into_iter()
                .zip(c.boards.iter().map(|b| b.id.clone()))
                .collect()
        }
        None => std::collections::BTreeMap::new(),
    };
    let tc = trf.time_control();
    let mut lines = vec![json!({"tournament": {
        "name": trf.name(),
        "rounds": trf.tag("142").and_then(|r| r.parse::<u32>().ok()),
        "time_control": tc.as_ref().map(|t| t.white.to_string()),
        "time_control_black": tc.as_ref().and_then(|t| t.black.as_ref()).map(|b| b.to_string()),
        "team_records": trf.team_records,
    }})];
    let mut players: Vec<&Player> = trf.players.iter().collect();
    players.sort_by_key(|p| p.rank);
    for p in &players {
        let mut v = person(Some(p), p.rank);
        v["title"] = json!(p.title);
        v["federation"] = json!(p.federation);
        v["points"] = json!(p.points.map(|t| f64::from(t) / 10.0));
        lines.push(json!({ "player": v }));
    }
    if round > 0 {
        let order = if order.is_empty() {
            Order::Fide
        } else {
            Order::Players(&order)
        };
        let round_lines = crate::hall::trf_round::review(&trf, round, order, &halls)
            .map_err(|e| fail(format!("{}: {e}", file.display()), BAD_INPUT))?;
        lines.extend(round_lines);
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

enum From {
    Summary(PathBuf),
    Journal {
        state_dir: Option<PathBuf>,
        config: PathBuf,
        /// Also the other nodes' games, from the broker.
        hall: bool,
    },
}

/// A game's outcome as the hall knows it: who played, and the codes (`None`: no result
/// yet, written `X`; `Some(None)`: annulled, left blank).
struct Outcome {
    white: String,
    black: String,
    fide: (Option<u64>, Option<u64>),
    ranks: Option<(u32, u32)>,
    codes: Option<Option<(ResultCode, ResultCode)>>,
}

fn outcomes(round: usize, from: &From) -> Result<Vec<Outcome>, ExitCode> {
    match from {
        From::Summary(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), 1))?;
            #[derive(serde::Deserialize)]
            struct Summary {
                round: usize,
                results: Vec<BoardResult>,
            }
            let s: Summary = serde_json::from_str(&text).map_err(|e| {
                fail(
                    format!(
                        "{}: not a round summary (round_finished): {e}",
                        path.display()
                    ),
                    BAD_INPUT,
                )
            })?;
            if s.round != round {
                return Err(fail(
                    format!(
                        "{}: the summary is of round {}, not {round}",
                        path.display(),
                        s.round
                    ),
                    BAD_INPUT,
                ));
            }
            Ok(s.results
                .into_iter()
                .map(|r| Outcome {
                    ranks: r.white_rank.zip(r.black_rank),
                    codes: Some(r.trf_white.zip(r.trf_black)),
                    white: r.white,
                    black: r.black,
                    fide: (None, None),
                })
                .collect())
        }
        From::Journal {
            state_dir,
            config,
            hall,
        } => {
            let state = match state_dir {
                Some(d) => d.clone(),
                None => super::config::load(config)?.hall.state_dir,
            };
            let dir = state.join("journal");
            let r = crate::store::recover(&dir)
                .map_err(|e| fail(format!("cannot read {}: {e}", dir.display()), 1))?;
            let mut games: Vec<Outcome> = r
                .games
                .values()
                .filter(|g| g.round == Some(round as u32))
                .map(|g| {
                    let setup = g.game.setup();
                    Outcome {
                        white: setup.white.clone(),
                        black: setup.black.clone(),
                        fide: g.fide,
                        ranks: None,
                        codes: g.game.result().map(codes),
                    }
                })
                .collect();
            if *hall {
                // This node's journal first: its own games as it recorded them.
                games.extend(hall_games(round, config)?);
            }
            Ok(games)
        }
    }
}

/// The games of `round` on the other nodes' boards, as their retained states on the broker
/// of `config` say (players, FIDE ids, result; no result yet is `X`).
fn hall_games(round: usize, config: &Path) -> Result<Vec<Outcome>, ExitCode> {
    let c = super::config::load(config)?;
    let mut settings = crate::daemon::settings(&c)
        .map_err(|e| fail(format!("{}: {e}", config.display()), BAD_INPUT))?;
    // Its own client id: the daemon's would disconnect the daemon.
    settings.mqtt.client_id = format!("hallclock-trf-{}", std::process::id());
    let own: std::collections::BTreeSet<String> = c.boards.iter().map(|b| b.id.clone()).collect();
    let filter = crate::mqtt::payload::Topics::new(&c.hall.id)
        .board_kind_filter(crate::mqtt::payload::BoardTopic::State);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(e, 1))?;
    let states = runtime
        .block_on(crate::mqtt::connect::read_retained(&settings.mqtt, &filter))
        .map_err(|e| {
            fail(
                format!(
                    "the other nodes' games from the broker {}:{}: {e}",
                    settings.mqtt.host, settings.mqtt.port
                ),
                1,
            )
        })?;
    let mut out = Vec::new();
    for (topic, payload) in states {
        let Ok(state) = serde_json::from_slice::<StatePayload>(&payload) else {
            eprintln!(
                "hallclock trf: warning: {}: not a board state; skipped",
                crate::intake::command::log_safe(&topic)
            );
            continue;
        };
        if own.contains(&state.board) || state.round != Some(round as u32) {
            continue;
        }
        let (Some(white), Some(black)) = (state.white, state.black) else {
            continue;
        };
        out.push(Outcome {
            white: white.name,
            black: black.name,
            fide: (white.fide_id, black.fide_id),
            ranks: None,
            codes: state.result.as_ref().map(codes),
        });
    }
    Ok(out)
}

/// The hall's game of this pairing: by starting ranks when known, else by FIDE ids where
/// both sides have them and by the names as the TRF spells them.
fn matches(o: &Outcome, white: &Player, black: &Player) -> bool {
    if let Some((w, b)) = o.ranks {
        return (w, b) == (white.rank, black.rank);
    }
    let same = |name: &str, fide: Option<u64>, p: &Player| match (fide, p.fide_id) {
        (Some(a), Some(b)) => a == b,
        _ => p.name.as_deref() == Some(name),
    };
    same(&o.white, o.fide.0, white) && same(&o.black, o.fide.1, black)
}

fn fill(input: &Path, output: &Path, args: &RoundArgs, from: From) -> Result<(), ExitCode> {
    let mut trf = read_trf(input)?;
    let (round, _) = args.resolve(&trf)?;
    let plan = trf
        .round_plan(round, Order::Fide)
        .map_err(|e| fail(format!("{}: {e}", input.display()), BAD_INPUT))?;
    let games = outcomes(round, &from)?;
    let mut changes = Vec::new();
    let (mut filled, mut unknown, mut missing) = (0, 0, Vec::new());
    for b in &plan.boards {
        // Forfeits entered before the round and results already in the file stay.
        let open = b.to_play()
            || (b.white_result == Some(ResultCode::Unknown)
                && b.black_result == Some(ResultCode::Unknown));
        if !open {
            continue;
        }
        let (Some(white), Some(black)) = (trf.player(b.white), trf.player(b.black)) else {
            continue;
        };
        match games.iter().find(|o| matches(o, white, black)) {
            None => missing.push(format!("board {} ({} - {})", b.board, b.white, b.black)),
            Some(o) => match o.codes {
                Some(Some((w, k))) => {
                    filled += 1;
                    changes.push((b.white, round, w));
                    changes.push((b.black, round, k));
                }
                Some(None) => missing.push(format!(
                    "board {} ({} - {}): annulled, no TRF code says that",
                    b.board, b.white, b.black
                )),
                None => {
                    unknown += 1;
                    changes.push((b.white, round, ResultCode::Unknown));
                    changes.push((b.black, round, ResultCode::Unknown));
                }
            },
        }
    }
    trf.set_results(&changes)
        .map_err(|e| fail(format!("{}: {e}", input.display()), BAD_INPUT))?;
    std::fs::write(output, trf.write())
        .map_err(|e| fail(format!("cannot write {}: {e}", output.display()), 1))?;
    eprintln!(
        "round {round}: {filled} result(s) filled in, {unknown} unknown (X), {} left blank",
        missing.len()
    );
    for m in &missing {
        eprintln!("  left blank: {m}");
    }
    Ok(())
}
