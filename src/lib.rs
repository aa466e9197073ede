//! hallclock: the clocks of a chess tournament hall.
//!
//! `rules` is the pure core (time as a value, decide/evolve); `dgt` is the DGT wire
//! protocol without I/O; `link` and `sim` are the serial shell and the simulated board;
//! `cli` holds the command-line seams.

pub mod auth;
pub mod broadcast;
pub mod cli;
pub mod config;
pub mod custody;
pub mod daemon;
pub mod demo;
pub mod dgt;
pub mod hall;
pub mod link;
pub mod mqtt;
pub mod pgn;
pub mod refusal;
pub mod rules;
pub mod script;
pub mod sim;
pub mod store;
pub mod trf;
