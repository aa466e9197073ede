//! A simulated DGT board with a DGT3000 clock behind a pseudo-terminal.
