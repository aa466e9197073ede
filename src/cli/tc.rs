//! `hallclock tc check STRING`.

use std::process::ExitCode;

use crate::rules::time_control;

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
        TcCmd::Check { tc } => match time_control::parse(&tc) {
            Ok(parsed) => {
                println!("{parsed}");
                println!("{}", parsed.describe());
                if let Err(why) = parsed.periods() {
                    println!("note: {why}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("'{tc}': {e}");
                eprintln!("  {tc}");
                let before = tc.get(..e.column.saturating_sub(1)).unwrap_or(&tc);
                eprintln!("  {}^", " ".repeat(before.chars().count()));
                ExitCode::from(2)
            }
        },
    }
}
