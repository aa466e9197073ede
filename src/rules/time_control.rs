//! Time controls: periods, increment, delay; the notation of DESIGN.md §4.
