//! `hallclock journal dump|verify`: the journal for arbiters and support.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::store::replay;
use crate::store::scan::read_dir;

#[derive(Debug, clap::Subcommand)]
pub enum JournalCmd {
    /// Print every record as one JSON line (optionally one board's).
    Dump {
        #[command(flatten)]
        at: JournalAt,
        /// Only this board's records.
        #[arg(long)]
        board: Option<String>,
    },
    /// Check every record (framing, CRC, JSON), that each board's seqs run on without gaps
    /// or repeats and each game's instants never go back, and that the games replay; exit 1
    /// if anything is wrong, saying where.
    Verify {
        #[command(flatten)]
        at: JournalAt,
    },
}

#[derive(Debug, clap::Args)]
pub struct JournalAt {
    /// The state directory (the journal is its `journal/` folder). Default: from --config.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// The configuration naming the state directory.
    #[arg(long, short = 'c', default_value = crate::config::DEFAULT_PATH)]
    pub config: PathBuf,
}

impl JournalAt {
    fn dir(&self) -> Result<PathBuf, ExitCode> {
        let state = match &self.state_dir {
            Some(d) => d.clone(),
            None => super::config::load(&self.config)?.hall.state_dir,
        };
        Ok(state.join("journal"))
    }

    /// The journal's folder and every good record in it, or the exit code of the failure.
    pub(super) fn scan(&self) -> Result<(PathBuf, crate::store::scan::Scan), ExitCode> {
        let dir = self.dir()?;
        match read_dir(&dir) {
            Ok(s) => Ok((dir, s)),
            Err(e) => {
                eprintln!("hallclock journal: cannot read {}: {e}", dir.display());
                Err(ExitCode::FAILURE)
            }
        }
    }
}

pub fn run(cmd: JournalCmd) -> ExitCode {
    match cmd {
        JournalCmd::Dump { at, board } => {
            let scan = match at.scan() {
                Ok((_, s)) => s,
                Err(code) => return code,
            };
            let mut out = std::io::stdout().lock();
            for (record, _, _) in &scan.records {
                if board.as_deref().is_some_and(|b| b != record.board()) {
                    continue;
                }
                let line = serde_json::to_string(record).unwrap_or_default();
                if writeln!(out, "{line}").is_err() {
                    return ExitCode::SUCCESS;
                }
            }
            if let Some(d) = &scan.damage {
                eprintln!(
                    "hallclock journal: {} (the damaged bytes are not shown)",
                    d.words()
                );
            }
            ExitCode::SUCCESS
        }
        JournalCmd::Verify { at } => {
            let (dir, scan) = match at.scan() {
                Ok(found) => found,
                Err(code) => return code,
            };
            let segments = scan.segments.len();
            let damage = scan.damage.clone();
            let disorder = crate::store::damage::disorder(&scan.records);
            let r = replay(scan.records.into_iter().map(|(r, _, _)| r), scan.damage);
            println!(
                "{}: {segments} segment(s), {} record(s), {} game(s) on {} board(s)",
                dir.display(),
                r.records,
                r.next_game_id.saturating_sub(1),
                r.games.len()
            );
            for p in &r.problems {
                println!("problem: {p}");
            }
            // The same words as the `journal` alert the daemon raises at its next start.
            if let Some(d) = &damage {
                println!("DAMAGED: {}", d.words());
                for (board, g) in r.games.iter().filter(|(_, g)| g.damaged) {
                    println!(
                        "held: {board}'s game {} would be held for the arbiter at the next start",
                        g.game_id
                    );
                }
            }
            for d in &disorder {
                println!("order: {d}");
            }
            if damage.is_none() && disorder.is_empty() && r.problems.is_empty() {
                println!("ok");
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
