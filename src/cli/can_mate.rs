//! `hallclock rules can-mate --fen FEN --side white|black`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CanMateArgs {
    /// The position, as FEN.
    #[arg(long)]
    pub fen: String,
    /// The side whose mating chances are asked about (the intended winner).
    #[arg(long)]
    pub side: String,
}

pub fn run(args: CanMateArgs) -> ExitCode {
    eprintln!("hallclock rules can-mate: not implemented yet ({args:?})");
    ExitCode::FAILURE
}
