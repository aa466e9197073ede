//! hallclock: the clocks of a chess tournament hall.
//!
//! `rules` is the pure core (time as a value, decide/evolve); `dgt` is the DGT wire
//! protocol without I/O; `link` and `sim` are the serial shell and the simulated board;
//! `cli` holds the command-line seams.

pub mod alert;
pub mod broadcast;
pub mod cli;
pub mod config;
pub mod custody;
pub mod daemon;
pub mod demo;
pub mod dgt;
pub mod hall;
pub mod i18n;
pub mod id;
pub mod intake;
pub mod link;
pub mod mode;
pub mod mqtt;
pub mod script;
pub mod sim;
pub mod store;
pub mod timebase;
pub mod tty;
pub mod web;

// The pure rooms are workspace crates (crates/); these names keep every `crate::rules::…`
// and `hallclock::rules::…` path working.
pub use hallclock_pgn as pgn;
pub use hallclock_rules as rules;
pub use hallclock_trf as trf;
