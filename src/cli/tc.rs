//! `hallclock tc check STRING`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum TcCmd {
    /// Print the canonical form and a one-line description of a time control, or the error.
    Check {
        /// e.g. `40/5400+30:1800+30`
        tc: String,
    },
}

pub fn run(cmd: TcCmd) -> ExitCode {
    match cmd {
        TcCmd::Check { tc } => {
            eprintln!("hallclock tc check: not implemented yet ({tc})");
            ExitCode::FAILURE
        }
    }
}
