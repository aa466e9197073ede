//! The DGT board and clock wire protocol, sans-IO: bytes in, typed messages out, and back.
