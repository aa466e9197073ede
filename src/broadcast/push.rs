//! The push to a lichess broadcast round.
