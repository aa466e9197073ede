//! The pure rules core: FIDE logic only. No I/O, no clock reads, no async.

pub mod dead_position;
pub mod time_control;
