//! One async task per serial port: open, handshake, liveness, reconnect.
