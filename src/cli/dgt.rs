//! `hallclock dgt decode`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum DgtCmd {
    /// Decode raw DGT board->host bytes into one JSON line per message.
    Decode {
        /// Input file, or `-` / nothing for standard input.
        file: Option<String>,
    },
}

pub fn run(cmd: DgtCmd) -> ExitCode {
    eprintln!("hallclock dgt: not implemented yet ({cmd:?})");
    ExitCode::FAILURE
}
