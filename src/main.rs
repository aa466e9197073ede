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
    /// A whole hall in one process: embedded broker, simulated boards and players, the
    /// daemon, and a live table from MQTT. Ctrl-C stops it.
    Demo(cli::demo::DemoArgs),
    /// Run the hall daemon (configuration: --config, default /etc/hallclock/hallclock.toml).
    Run(cli::config::ConfigArgs),
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
    /// The event journal: dump it as JSON lines, or verify it.
    Journal {
        #[command(subcommand)]
        cmd: cli::journal::JournalCmd,
    },
    /// A round's PGN (board order) from the journal, or one board's game.
    Pgn(cli::pgn::PgnArgs),
    /// Tournament Report Files: a round's pairings in board order; results back in.
    Trf {
        #[command(subcommand)]
        cmd: cli::trf::TrfCmd,
    },
    /// Candidate serial ports, their stable names and the DGT board answering on each.
    Ports(cli::ports::PortsArgs),
    /// Simulated DGT boards with DGT3000 clocks on pseudo-terminals.
    Sim(cli::sim::SimArgs),
    /// Check the configuration: every problem with its key path; exit 78 when invalid.
    CheckConfig(cli::config::ConfigArgs),
    /// The effective configuration (file + HALLCLOCK__* environment) as TOML, secrets masked.
    PrintConfig(cli::config::ConfigArgs),
    /// The arbiters' accounts: add (prints the new key once), list, remove, reset.
    Arbiter {
        #[command(subcommand)]
        cmd: cli::arbiter::ArbiterCmd,
    },
    /// Send one signed command and print the response; exit 0 when it is `ok`.
    Command(cli::command::CommandArgs),
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Demo(args) => cli::demo::run(args),
        Cmd::Run(args) => cli::run::run(args),
        Cmd::Journal { cmd } => cli::journal::run(cmd),
        Cmd::Pgn(args) => cli::pgn::run(args),
        Cmd::Ports(args) => cli::ports::run(args),
        Cmd::Tc { cmd } => cli::tc::run(cmd),
        Cmd::Trf { cmd } => cli::trf::run(cmd),
        Cmd::Rules { cmd } => cli::rules::run(cmd),
        Cmd::Dgt { cmd } => cli::dgt::run(cmd),
        Cmd::Sim(args) => cli::sim::run(args),
        Cmd::CheckConfig(args) => cli::config::check(args),
        Cmd::PrintConfig(args) => cli::config::print(args),
        Cmd::Arbiter { cmd } => cli::arbiter::run(cmd),
        Cmd::Command(args) => cli::command::run(args),
    }
}
