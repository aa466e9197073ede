//! `hallclock rules run` and `hallclock rules can-mate`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum RulesCmd {
    /// Drive a JSON-lines script of timed inputs through the rules core (docs/RULES-SCRIPT.md).
    Run {
        /// Script file, or `-` for standard input.
        script: String,
    },
    /// The 6.9 verdict: can SIDE still checkmate in this position by any series of legal moves?
    CanMate(super::can_mate::CanMateArgs),
}

pub fn run(cmd: RulesCmd) -> ExitCode {
    match cmd {
        RulesCmd::Run { script } => {
            eprintln!("hallclock rules run: not implemented yet ({script})");
            ExitCode::FAILURE
        }
        RulesCmd::CanMate(args) => super::can_mate::run(args),
    }
}
