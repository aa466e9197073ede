//! 6.9 / 5.2.2: can a side still checkmate by any series of legal moves?
