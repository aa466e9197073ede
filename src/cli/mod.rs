//! Command-line seams. Each subcommand lives in its own file and returns an exit code.

pub mod arbiter;
pub mod can_mate;
pub mod command;
pub mod config;
pub mod demo;
pub mod dgt;
pub mod journal;
pub mod pgn;
pub mod ports;
pub mod rules;
pub mod run;
pub mod sim;
pub mod tc;
pub mod trf;
