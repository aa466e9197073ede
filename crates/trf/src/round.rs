//! A round's pairings in board order, and game results as TRF result codes.
//!
//! TRF has no board numbers. The order is the one pairing programs publish, FIDE's rule
//! for sorting pairings before they are made public (C.04.1 F.1 of the Dutch system as
//! published until 2013; bbpPairings' `sortResults` in `src/swisssystems/common.cpp`
//! applies the same keys, JaVaFo prints in that order too):
//!
//! 1. the higher score of the pair's higher player (descending);
//! 2. the sum of the two scores (descending);
//! 3. the starting rank of the higher player (ascending);
//!
//! where "higher player" is the one with more points, or with equal points the lower
//! starting rank (the pairing order), and scores count the rounds before this one with
//! FIDE's default points. Byes come after every board. A pairing engine's own list (the
//! JaVaFo / bbpPairings output: a count, then `white black` per board) or the arbiter's
//! list of players, one per board, overrides it.

use super::error::{Position, TrfError, TrfErrorKind};
use super::{Player, ResultCode, Trf};
use hallclock_rules::Color;
use hallclock_rules::game::{GameResult, Score, Termination};

/// One board of the round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundPairing {
    /// 1-based tournament board number.
    pub board: u32,
    pub white: u32,
    pub black: u32,
    /// The codes already in the file (a forfeit entered before the round, or a result).
    pub white_result: Option<ResultCode>,
    pub black_result: Option<ResultCode>,
}

impl RoundPairing {
    /// A forfeit (`+`/`-`) already entered: nobody plays on this board.
    pub fn is_forfeit(&self) -> bool {
        self.white_result.is_some_and(ResultCode::is_forfeit)
            || self.black_result.is_some_and(ResultCode::is_forfeit)
    }

    /// No result yet: a game to start.
    pub fn to_play(&self) -> bool {
        self.white_result.is_none() && self.black_result.is_none()
    }
}

/// A player without an opponent in the round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bye {
    pub player: u32,
    /// `None` when the file leaves it blank (equivalent to `Z`).
    pub code: Option<ResultCode>,
}

/// Everything a round holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundPlan {
    pub round: usize,
    pub boards: Vec<RoundPairing>,
    pub byes: Vec<Bye>,
}

/// Score before `round`, in tenths, counting the result codes of earlier rounds.
fn score_before(p: &Player, round: usize) -> u32 {
    p.rounds
        .iter()
        .take(round.saturating_sub(1))
        .filter_map(|e| e.result)
        .map(ResultCode::default_points)
        .sum()
}

/// How the order was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order<'a> {
    /// FIDE's publishing order (the module's rule).
    Fide,
    /// These players' games first, one per board, in this order; the rest follow in
    /// FIDE's order.
    Players(&'a [u32]),
}

impl Trf {
    /// Round `round` (1-based): its boards in order, then its byes.
    pub fn round_plan(&self, round: usize, order: Order) -> Result<RoundPlan, TrfError> {
        if round == 0 || round > self.rounds() {
            return Err(TrfError::new(
                TrfErrorKind::NoSuchRound { round },
                Position::line(0),
            ));
        }
        struct Pair<'a> {
            white: &'a Player,
            black: &'a Player,
            key: (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>, u32),
        }
        let mut pairs = Vec::new();
        let mut byes = Vec::new();
        let mut players: Vec<&Player> = self.players.iter().collect();
        players.sort_by_key(|p| p.rank);
        for p in &players {
            let e = p.round(round).copied().unwrap_or_default();
            match (e.opponent, e.colour) {
                (Some(o), Some(Color::White)) => {
                    let Some(black) = self.player(o) else {
                        continue;
                    };
                    let (sw, sb) = (score_before(p, round), score_before(black, round));
                    let white_higher =
                        (std::cmp::Reverse(sw), p.rank) <= (std::cmp::Reverse(sb), black.rank);
                    let (hi, lo, hi_rank) = if white_higher {
                        (sw, sb, p.rank)
                    } else {
                        (sb, sw, black.rank)
                    };
                    pairs.push(Pair {
                        white: p,
                        black,
                        key: (std::cmp::Reverse(hi), std::cmp::Reverse(hi + lo), hi_rank),
                    });
                }
                (Some(_), Some(Color::Black)) => {}
                // Paired but written `-` (an older program's forfeit): nobody plays it on
                // a board, so each player is listed with the round's code, as a bye is.
                (Some(_), None) | (None, _) => byes.push(Bye {
                    player: p.rank,
                    code: e.result,
                }),
            }
        }
        pairs.sort_by_key(|p| p.key);
        if let Order::Players(first) = order {
            let mut front = Vec::new();
            for &rank in first {
                let at = pairs
                    .iter()
                    .position(|p| p.white.rank == rank || p.black.rank == rank);
                match at {
                    Some(i) => front.push(pairs.remove(i)),
                    None if front
                        .iter()
                        .any(|p: &Pair| p.white.rank == rank || p.black.rank == rank) =>
                    {
                        return Err(TrfError::new(
                            TrfErrorKind::OrderedTwice { rank },
                            Position::line(0),
                        ));
                    }
                    None => {
                        return Err(TrfError::new(
                            TrfErrorKind::NotPaired { rank, round },
                            Position::line(0),
                        ));
                    }
                }
            }
            front.append(&mut pairs);
            pairs = front;
        }
        let boards = pairs
            .iter()
            .enumerate()
            .map(|(i, p)| RoundPairing {
                board: i as u32 + 1,
                white: p.white.rank,
                black: p.black.rank,
                white_result: p.white.round(round).and_then(|e| e.result),
                black_result: p.black.round(round).and_then(|e| e.result),
            })
            .collect();
        // Players with no block for this round at all are not in it (withdrawn, or the
        // program wrote nothing); only those with a block are listed as byes.
        byes.retain(|b| {
            self.player(b.player)
                .and_then(|p| p.round(round))
                .is_some_and(|e| *e != super::RoundEntry::default())
        });
        Ok(RoundPlan {
            round,
            boards,
            byes,
        })
    }
}

/// A pairing engine's output (JaVaFo, bbpPairings `--pairings FILE`): the number of pairs,
/// then `white black` per line in board order (`N 0` is a bye). Returns the pairs.
pub fn read_engine_pairs(text: &str) -> Result<Vec<(u32, u32)>, TrfError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let number = |line: usize, s: &str, field: &'static str| {
        s.parse::<u32>().map_err(|_| {
            TrfError::new(
                TrfErrorKind::NotANumber { value: s.into() },
                Position {
                    line,
                    columns: None,
                    field: Some(field),
                },
            )
        })
    };
    let Some((i, first)) = lines.next() else {
        return Err(TrfError::new(
            TrfErrorKind::Missing,
            Position {
                line: 1,
                columns: None,
                field: Some("number of pairs"),
            },
        ));
    };
    let count = number(i + 1, first.trim(), "number of pairs")?;
    let mut out = Vec::new();
    for (i, l) in lines {
        let mut it = l.split_whitespace();
        let (Some(w), Some(b), None) = (it.next(), it.next(), it.next()) else {
            return Err(TrfError::new(
                TrfErrorKind::Inconsistent {
                    why: "expected two starting ranks: white black",
                },
                Position::line(i + 1),
            ));
        };
        out.push((number(i + 1, w, "white")?, number(i + 1, b, "black")?));
    }
    if out.len() != count as usize {
        return Err(TrfError::new(
            TrfErrorKind::Inconsistent {
                why: "the number of pairs on the first line does not match the pairs listed",
            },
            Position::line(1),
        ));
    }
    Ok(out)
}

/// The TRF result codes (White's, Black's) of a game's result; `None` while there is
/// none yet (adjourned, or still playing: `X` is what the file gets then) or when the
/// game was annulled (no code says that: the arbiter decides).
pub fn codes(result: &GameResult) -> Option<(ResultCode, ResultCode)> {
    use ResultCode::*;
    // 6.6: a player absent at default time loses by forfeit.
    let absent: &[Color] = match &result.termination {
        Termination::Default { absent } => absent,
        _ => &[],
    };
    let code = |side: Color, points: u32| -> ResultCode {
        match (absent.is_empty(), absent.contains(&side), points) {
            (true, _, 10) => Win,
            (true, _, 5) => Draw,
            (true, _, _) => Loss,
            (false, true, _) => ForfeitLoss,
            (false, false, 10) => ForfeitWin,
            (false, false, 5) => Draw,
            (false, false, _) => ForfeitLoss,
        }
    };
    let (w, b) = match result.score {
        Score::WhiteWins => (10, 0),
        Score::BlackWins => (0, 10),
        Score::Draw => (5, 5),
        Score::BothLose => (0, 0),
        Score::Annulled => return None,
    };
    Some((code(Color::White, w), code(Color::Black, b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hallclock_rules::game::ArbiterResult;

    fn result(score: Score, termination: Termination) -> GameResult {
        GameResult { score, termination }
    }

    #[test]
    fn results_become_trf_codes() {
        use ResultCode::*;
        let mate = |s| result(s, Termination::Checkmate);
        assert_eq!(codes(&mate(Score::WhiteWins)), Some((Win, Loss)));
        assert_eq!(codes(&mate(Score::BlackWins)), Some((Loss, Win)));
        assert_eq!(codes(&mate(Score::Draw)), Some((Draw, Draw)));
        let default = |s, absent: Vec<Color>| result(s, Termination::Default { absent });
        assert_eq!(
            codes(&default(Score::WhiteWins, vec![Color::Black])),
            Some((ForfeitWin, ForfeitLoss))
        );
        assert_eq!(
            codes(&default(Score::BlackWins, vec![Color::White])),
            Some((ForfeitLoss, ForfeitWin))
        );
        assert_eq!(
            codes(&default(Score::BothLose, vec![Color::White, Color::Black])),
            Some((ForfeitLoss, ForfeitLoss))
        );
        let annulled = result(
            Score::Annulled,
            Termination::Arbiter {
                kind: ArbiterResult::Annulled,
                arbiter: "IA".into(),
                reason: "r".into(),
            },
        );
        assert_eq!(codes(&annulled), None);
        assert_eq!(codes(&mate(Score::BothLose)), Some((Loss, Loss)));
    }

    #[test]
    fn engine_output_reads_in_board_order() {
        assert_eq!(
            read_engine_pairs("3\n1 5\n3 2\n6 0\n"),
            Ok(vec![(1, 5), (3, 2), (6, 0)])
        );
        let e = read_engine_pairs("2\n1 5\n3 x\n").unwrap_err();
        assert_eq!(e.position.line, 3);
        let e = read_engine_pairs("3\n1 5\n").unwrap_err();
        assert!(e.to_string().contains("number of pairs"), "{e}");
    }
}
