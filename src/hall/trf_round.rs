//! `start_round` with a TRF instead of `pairings`: the round's games in board order, each
//! on the hall board with that tournament number, players as the file spells them.

use std::collections::BTreeMap;

use super::board::Refusal;
use crate::intake::command::Pairing;
use crate::trf::round::Order;
use serde_json::{Value, json};

use crate::trf::{Player, Trf, TrfError, TrfTimeControl};

/// What a TRF gives a round.
#[derive(Debug)]
pub struct TrfRound {
    pub pairings: Vec<Pairing>,
    /// Hall board → (White's, Black's) starting rank, for the round summary.
    pub ranks: BTreeMap<String, (u32, u32)>,
    /// Tag 222, when the file has it.
    pub time_control: Option<TrfTimeControl>,
    /// The tournament's name (tag 012) and place (tag 022): the PGN's `Event` and `Site`.
    pub tags: crate::broadcast::RoundTags,
    /// The lines the reader skipped, each with its line number (the command's answer
    /// says them).
    pub warnings: Vec<String>,
}

/// The pairings of `round` from a TRF's text. `numbers` are the tournament board numbers
/// of the hall's boards: this node's and, in a hall of several nodes, the other online
/// nodes' (their `node/<node>/info` lists them), so that every node reads the same round
/// from the file and each starts its own games (issue 23). With `only_ours`, games on
/// tournament boards the hall does not have are left to other halls; otherwise they are
/// an error (most often a `[[boards]]` entry without its `number`).
pub fn from_trf(
    text: &str,
    round: u32,
    order: Option<&[u32]>,
    only_ours: bool,
    numbers: &BTreeMap<u32, String>,
) -> Result<TrfRound, Refusal> {
    let bad = |e| Refusal::Trf(Box::new(e));
    let trf = Trf::read(text.as_bytes()).map_err(bad)?;
    let order = order.map_or(Order::Fide, Order::Players);
    let plan = trf.round_plan(round as usize, order).map_err(bad)?;
    let mut pairings = Vec::new();
    let mut ranks = BTreeMap::new();
    for p in plan.boards.iter().filter(|p| p.to_play()) {
        let Some(board) = numbers.get(&p.board) else {
            if only_ours {
                continue;
            }
            return Err(Refusal::NoHallBoard(format!(
                "trf: tournament board {} (players {} and {}) has no hall board: give a [[boards]] entry number = {} or send only_our_boards",
                p.board, p.white, p.black, p.board
            )));
        };
        let person = |rank: u32| {
            let player = trf.player(rank);
            match player.and_then(|pl| pl.name.clone()) {
                Some(name) => Ok((name, player)),
                None => Err(Refusal::BadValue(format!(
                    "trf: line {}: player {rank} has no name (columns 15–47)",
                    player.map_or(0, |pl| pl.line)
                ))),
            }
        };
        let (white, w) = person(p.white)?;
        let (black, b) = person(p.black)?;
        pairings.push(Pairing {
            board: board.to_string(),
            white,
            black,
            white_fide_id: w.and_then(|pl| pl.fide_id),
            black_fide_id: b.and_then(|pl| pl.fide_id),
            white_title: w.and_then(|pl| pl.title.clone()),
            black_title: b.and_then(|pl| pl.title.clone()),
            white_rating: w.and_then(|pl| pl.rating),
            black_rating: b.and_then(|pl| pl.rating),
            fen: None,
        });
        ranks.insert(board.to_string(), (p.white, p.black));
    }
    if pairings.is_empty() {
        return Err(Refusal::BadValue(format!(
            "trf: round {round} has no game to play on this hall's boards"
        )));
    }
    let tag = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(String::from);
    Ok(TrfRound {
        pairings,
        ranks,
        time_control: trf.time_control(),
        tags: crate::broadcast::RoundTags {
            event: tag(trf.name()),
            site: tag(trf.tag("022")),
        },
        warnings: trf.warnings.iter().map(|w| w.to_string()).collect(),
    })
}

/// A player as `hallclock trf show` and the dashboard's review print them.
pub fn person(p: Option<&Player>, rank: u32) -> Value {
    json!({
        "name": p.and_then(|p| p.name.clone()),
        "fide_id": p.and_then(|p| p.fide_id),
        "rating": p.and_then(|p| p.rating),
        "rank": rank,
    })
}

/// A round of a TRF as the arbiter reviews it before starting (`hallclock trf show`, the
/// dashboard's round page): one value per board in board order (with its hall board when
/// `halls` knows the number), forfeits and games already decided marked, then the byes.
pub fn review(
    trf: &Trf,
    round: usize,
    order: Order,
    halls: &BTreeMap<u32, String>,
) -> Result<Vec<Value>, TrfError> {
    let plan = trf.round_plan(round, order)?;
    let mut lines = Vec::new();
    for b in &plan.boards {
        let mut v = json!({
            "round": round,
            "board": b.board,
            "white": person(trf.player(b.white), b.white),
            "black": person(trf.player(b.black), b.black),
        });
        if let Some(h) = halls.get(&b.board) {
            v["hall_board"] = json!(h);
        }
        if b.is_forfeit() {
            v["forfeit"] = json!({"white": b.white_result, "black": b.black_result});
        } else if !b.to_play() {
            v["result"] = json!({"white": b.white_result, "black": b.black_result});
        }
        lines.push(v);
    }
    for bye in &plan.byes {
        lines.push(json!({
            "round": round,
            "bye": person(trf.player(bye.player), bye.player),
            "code": bye.code,
        }));
    }
    Ok(lines)
}
