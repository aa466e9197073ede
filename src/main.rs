use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hallclock::cli;

/// hallclock: the clocks of a chess tournament hall.
#[derive(Debug, Parser)]
#[command(name = "hallclock", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Time-control notation.
    Tc {
        #[command(subcommand)]
        cmd: cli::tc::TcCmd,
    },
    /// The pure rules core: scripts and the 6.9 verdict.
    Rules {
        #[command(subcommand)]
        cmd: cli::rules::RulesCmd,
    },
    /// The DGT wire protocol.
    Dgt {
        #[command(subcommand)]
        cmd: cli::dgt::DgtCmd,
    },
    /// Simulated DGT boards with DGT3000 clocks on pseudo-terminals.
    Sim(cli::sim::SimArgs),
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Tc { cmd } => cli::tc::run(cmd),
        Cmd::Rules { cmd } => cli::rules::run(cmd),
        Cmd::Dgt { cmd } => cli::dgt::run(cmd),
        Cmd::Sim(args) => cli::sim::run(args),
    }
}
