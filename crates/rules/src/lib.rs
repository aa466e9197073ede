//! The pure rules core: FIDE logic only. No I/O, no clock reads, no async: inputs and the
//! current time in, events out (`decide`), events folded into state (`evolve`).

pub mod adjournment;
pub mod clock;
pub mod color;
pub mod dead_position;
pub mod fen;
pub mod game;
pub mod millis;
pub mod placement;
pub mod time_control;

pub use color::{ByColor, Color};
pub use millis::Millis;
