//! `hallclock sim`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// Number of simulated boards.
    #[arg(long, default_value_t = 1)]
    pub boards: u32,
    /// Folder for the stable symlinks `board-001`, ...
    #[arg(long)]
    pub dir: String,
}

pub fn run(args: SimArgs) -> ExitCode {
    eprintln!("hallclock sim: not implemented yet ({args:?})");
    ExitCode::FAILURE
}
