#![no_main]
//! See fuzz/doors.rs and docs/RELIABILITY.md.

// Each target calls one door of the shared file.
#[allow(dead_code)]
#[path = "../doors.rs"]
mod doors;

libfuzzer_sys::fuzz_target!(|data: &[u8]| doors::sim_control(data));
