//! One async task per serial port: open, handshake, liveness, reconnect.

pub mod fd;
pub mod port;
