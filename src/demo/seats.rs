//! The demo's players at every board, for whichever round its game belongs to: a round
//! is followed from the boards' states on MQTT (its game, position, time control and
//! players' sides), as the table is, not from the demo's own `start_round`, so a round an
//! arbiter starts from the dashboard or with `hallclock command` is played like the
//! demo's own. The demo's arbiter also rules on their pending flags.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rumqttc::QoS;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::player::{self, Seat, Temperament};
use super::table::Table;
use super::{Arbiter, DemoOptions, board_id, initial_and_increment};
use crate::mqtt::payload::StatePayload;
use crate::rules::placement::Side;
use crate::sim::{BoardHandle, Sim};

/// The players at one board, for one game of one round.
struct Seated {
    round: u32,
    /// Tells them the daemon published their game's result.
    finished: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Every board's players, whoever started the round they play.
pub(super) struct Players {
    hall: String,
    seed: u64,
    speed: f64,
    seats: BTreeMap<String, Seated>,
    /// Games (board, round) whose pending flag the demo's arbiter has already ruled on.
    ruled: Vec<(String, u32)>,
    /// Pending flags seen, with when: the arbiter walks to the board first (the daemon
    /// may still decide the flag itself, when the pressed move shows on the board).
    pending: Vec<FlagWaiting>,
}

struct FlagWaiting {
    board: String,
    round: u32,
    score: &'static str,
    since: tokio::time::Instant,
}

impl Players {
    pub(super) fn new(opts: &DemoOptions) -> Players {
        Players {
            hall: opts.hall.clone(),
            seed: opts.seed,
            speed: opts.speed,
            seats: Default::default(),
            ruled: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// After any message: seat players at every game of a started round that has none,
    /// tell those whose game has a result, and note the flags waiting for the arbiter.
    pub(super) fn follow(&mut self, table: &Table, sim: &Sim) {
        for b in sim.boards() {
            let id = board_id(b.number());
            let Some(state) = table.state(&id) else {
                continue;
            };
            // Only rounds whose `round_started` this demo saw: a retained state of an
            // older round (an external broker, a journal replayed) is not a game to play.
            let Some(round) = state.round.filter(|r| table.started(*r)) else {
                continue;
            };
            let seated = self.seats.get(&id).is_some_and(|s| s.round == round);
            if !seated && state.result.is_none() && state.phase != "idle" {
                self.seat(b, &id, round, state);
            }
            if let Some(seat) = self.seats.get(&id)
                && seat.round == round
                && state.result.is_some()
            {
                seat.finished
                    .send_if_modified(|over| !std::mem::replace(over, true));
            }
            self.note_pending_flag(&id, round, state);
        }
    }

    /// The players sit down at `board` for its game in `round`, with the position, the
    /// sides and the time control the daemon published for it.
    fn seat(&mut self, board: &BoardHandle, id: &str, round: u32, state: &StatePayload) {
        // A game's start is a state with its whole position; while a move is owed by a
        // press the FEN is the position before it, not where the game stands, and the
        // next state has it.
        if state.move_pending {
            return;
        }
        let Some(start) = state.fen.as_deref().and_then(position) else {
            return;
        };
        let white_side = match state.white_side {
            Side::Left => crate::sim::Side::Left,
            Side::Right => crate::sim::Side::Right,
        };
        // Nothing to do on a board the demo set up after the last round; an arbiter's
        // round may start from a position of its own (a FEN in its pairings).
        player::prepare_board(board, white_side, shakmaty::Position::board(&start));
        let tc = state
            .time_control
            .as_deref()
            .and_then(|t| crate::rules::time_control::parse(t).ok());
        let (initial, increment) = tc.as_ref().map_or(
            (Duration::from_secs(180), Duration::ZERO),
            initial_and_increment,
        );
        // Each game's players come from the seed, the round and the board, not from the
        // order the boards' states happened to arrive in.
        let mut rng = StdRng::seed_from_u64(
            self.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(u64::from(round) << 20)
                .wrapping_add(board.number() as u64),
        );
        let (tx, rx) = watch::channel(false);
        let seat = Seat {
            board: board.clone(),
            white_side,
            white: Temperament::random(&mut rng),
            black: Temperament::random(&mut rng),
            initial,
            increment,
            speed: self.speed,
            finished: rx,
            rng: StdRng::seed_from_u64(rng.r#gen()),
            round,
            start,
        };
        if let Some(old) = self.seats.insert(
            id.to_string(),
            Seated {
                round,
                finished: tx,
                task: tokio::spawn(seat.play()),
            },
        ) {
            // A new game on the board: the last one's players have left.
            old.task.abort();
        }
    }

    /// A round is over: its players leave, and its boards are set up for the next round,
    /// whoever starts it.
    pub(super) fn round_over(&mut self, round: u32, sim: &Sim) {
        for b in sim.boards() {
            let id = board_id(b.number());
            let playing = self
                .seats
                .get(&id)
                .filter(|s| s.round != round && !s.task.is_finished());
            if playing.is_some() {
                // A game of another round goes on there.
                continue;
            }
            if let Some(seat) = self.seats.get(&id) {
                seat.task.abort();
            }
            player::prepare_board(b, crate::sim::Side::Left, &shakmaty::Board::new());
        }
        self.pending.retain(|p| p.round != round);
    }

    pub(super) fn stop(&mut self) {
        for seat in self.seats.values() {
            seat.task.abort();
        }
    }

    /// A board's state with a flag whose result waits for the arbiter (the daemon could
    /// not settle 6.9: the 6.9 search undecided, or the position unknown, a press having
    /// reached it before the move did): noted, for [`Players::rule_on_pending_flags`]. A
    /// state with a result (the daemon decided the flag when the move showed) takes the
    /// board off the list.
    fn note_pending_flag(&mut self, board: &str, round: u32, state: &StatePayload) {
        let score: &'static str = match state.pending_flag.as_ref().map(|f| f.side) {
            Some(crate::rules::Color::White) => "0-1",
            Some(crate::rules::Color::Black) => "1-0",
            None => "",
        };
        if state.result.is_some() || score.is_empty() {
            self.pending
                .retain(|p| p.board != board || p.round != round);
            return;
        }
        if !self
            .pending
            .iter()
            .any(|p| p.board == board && p.round == round)
        {
            self.pending.push(FlagWaiting {
                board: board.to_string(),
                round,
                score,
                since: tokio::time::Instant::now(),
            });
        }
    }

    /// The demo's arbiter rules on the flags pending for a second or more, as a hall's
    /// would once at the board, over MQTT, so that the round can finish.
    pub(super) async fn rule_on_pending_flags(&mut self, arbiter: &Arbiter<'_>) {
        let due: Vec<(String, u32, &'static str)> = self
            .pending
            .iter()
            .filter(|p| {
                p.since.elapsed() >= Duration::from_secs(1)
                    && !self.ruled.contains(&(p.board.clone(), p.round))
            })
            .map(|p| (p.board.clone(), p.round, p.score))
            .collect();
        for (board, round, score) in due {
            self.ruled.push((board.clone(), round));
            let command = json!({
                "transaction": format!("{}-flag-{round}-{board}", arbiter.run),
                "action": "set_result",
                "result": score,
                "reason": "flag fell; the demo's arbiter confirms the loss",
            });
            let topic = format!("hallclock/{}/board/{board}/set", self.hall);
            let signed = arbiter.signer.sign(&topic, command);
            if let Err(e) = arbiter
                .client
                .publish(topic, QoS::AtLeastOnce, false, signed)
                .await
            {
                tracing::warn!("cannot publish set_result: {e}");
            }
        }
    }
}

/// A position from a FEN the daemon published.
fn position(fen: &str) -> Option<shakmaty::Chess> {
    let fen = shakmaty::fen::Fen::from_ascii(fen.as_bytes()).ok()?;
    fen.into_position(shakmaty::CastlingMode::Standard).ok()
}
