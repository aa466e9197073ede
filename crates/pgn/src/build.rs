//! Events to a [`PgnGame`]: one pass over the events, beside a `Game` folded over the same
//! events for what the events do not carry themselves (the position, clocks at the end).

use shakmaty::{Chess, Position};

use hallclock_rules::Millis;
use hallclock_rules::color::{ByColor, Color};
use hallclock_rules::game::{Event, Game, GameResult, Setup, fen_of, parse_fen};

use super::tags::{self, clock, comment_text, pgn_time_control};
use super::text::{PgnGame, PgnMove};

/// What the PGN needs besides the setup and the events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameInfo {
    /// `Event`; `?` when `None`.
    pub event: Option<String>,
    /// `Site`; `?` when `None`.
    pub site: Option<String>,
    pub round: Option<u32>,
    /// The board's number in the round (`Round "r.b"`, `Board`).
    pub board: Option<u32>,
    pub white_fide_id: Option<u64>,
    pub black_fide_id: Option<u64>,
}

/// The number in a board id (`board-007` → 7, `12` → 12): the digits it ends with. `None`
/// when it ends with none (or they are all zeros).
pub fn board_number(id: &str) -> Option<u32> {
    let start = id.len() - id.bytes().rev().take_while(u8::is_ascii_digit).count();
    id[start..].parse().ok().filter(|n| *n > 0)
}

/// The events up to and including instant `t`: the game as it was then. Events come in
/// time order (the core never goes back in time), so this is a prefix.
pub fn events_until(events: &[Event], t: Millis) -> &[Event] {
    let n = events.iter().take_while(|e| e.at() <= t).count();
    &events[..n]
}

/// The game as it was at instant `t` (a broadcast delayed by D: `t = now - D`): exactly
/// [`game`] of the events up to `t`, so nothing newer can show.
pub fn game_at(setup: &Setup, events: &[Event], info: &GameInfo, t: Millis) -> PgnGame {
    game(setup, events_until(events, t), info)
}

fn who(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The first four FEN fields: the position without its move counters.
fn position_key(fen: &str) -> String {
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

/// A move made on the board and not yet completed by a press.
struct Pending {
    side: Color,
    san: String,
    fen: String,
}

struct Builder {
    shadow: Option<Game>,
    start: Chess,
    start_fen: Option<String>,
    moves: Vec<PgnMove>,
    /// The position key after each shown move (index 0: the start).
    keys: Vec<String>,
    intro: Vec<String>,
    pending: Option<Pending>,
    /// The last move completed by a press, and when: a `PeriodAdvanced` at that instant
    /// for that side replaces its clock (6.2b).
    last_press: Option<(Millis, Color, usize)>,
    /// A committed sealed move's clock (the sealer's, or the counter-sealer's), until the
    /// move is played at the resumption.
    sealed: ByColor<Option<(Millis, Millis, Millis)>>,
    /// Presses with no move since the position was last known.
    unrecorded: u32,
    /// A press with no move, until the shadow game says whether it owes its move.
    press_without_move: Option<(Color, Millis, Millis, Millis)>,
    /// Presses that came before their e-board move (issue 10 §1): the core keeps the
    /// position and the `move_made` that follows is the move they completed, with their
    /// clocks. Oldest first.
    owed: Vec<(Color, Millis, Millis, Millis)>,
    result: Option<GameResult>,
    adjourned: bool,
    last_at: Option<Millis>,
}

impl Builder {
    /// Where a comment about what just happened goes: after the last shown move, or
    /// before the first.
    fn note(&mut self, text: String) {
        match self.moves.last_mut() {
            Some(m) => m.comments.push(text),
            None => self.intro.push(text),
        }
    }

    fn known(&self) -> bool {
        self.unrecorded == 0
    }

    fn push(&mut self, san: String, fen: &str, clk: Millis, emt: Millis) {
        self.moves.push(PgnMove {
            san,
            clk,
            emt,
            comments: Vec::new(),
        });
        self.keys.push(position_key(fen));
    }

    /// The mover's clock as the shadow game has it now (stopped at the end).
    fn clock_now(&self, side: Color, at: Millis) -> Millis {
        self.shadow
            .as_ref()
            .map_or(Millis::ZERO, |g| g.clock().remaining_at(side, at))
    }

    /// The pending move, shown with the clock the game left it (the game is over).
    fn flush_pending(&mut self, at: Millis, emt: Millis) {
        if let Some(p) = self.pending.take() {
            let clk = self.clock_now(p.side, at);
            self.push(p.san, &p.fen, clk, emt);
        }
    }

    fn san_list(&self) -> String {
        let mut out = Vec::new();
        let mut number = self.start.fullmoves().get();
        let mut turn: Color = self.start.turn().into();
        for (i, m) in self.moves.iter().enumerate() {
            match turn {
                Color::White => out.push(format!("{number}. {}", m.san)),
                Color::Black if i == 0 => out.push(format!("{number}... {}", m.san)),
                Color::Black => out.push(m.san.clone()),
            }
            if turn == Color::Black {
                number += 1;
            }
            turn = turn.other();
        }
        out.join(" ")
    }

    /// Restart the movetext from `fen` (after a gap in the known moves, or a position the
    /// game never had).
    fn restart_from(&mut self, pos: Chess, by: &str) {
        let before = if self.moves.is_empty() {
            String::new()
        } else {
            format!(" Moves known before it: {}.", self.san_list())
        };
        let gap = if self.unrecorded > 0 {
            format!(
                " {} move(s) before it were not recorded (clock-only board).",
                self.unrecorded
            )
        } else {
            String::new()
        };
        self.moves.clear();
        self.intro.clear();
        self.start_fen = Some(fen_of(&pos));
        self.keys = vec![position_key(&fen_of(&pos))];
        self.start = pos;
        self.unrecorded = 0;
        self.last_press = None;
        self.intro.push(format!(
            "Position set by arbiter {by} (Article 7.1).{before}{gap}"
        ));
    }

    fn on_position_set(&mut self, fen: &str, arbiter: &str) {
        // A position set by the arbiter ends any owed move (as in the core).
        self.give_up_owed();
        let by = comment_text(arbiter);
        let Ok(pos) = parse_fen(fen) else {
            // The core forgets the position on a FEN it cannot read; so do we.
            self.unrecorded = self.unrecorded.max(1);
            self.note(format!(
                "Arbiter {by} set a position that cannot be read (Article 7.1)."
            ));
            return;
        };
        let key = position_key(&fen_of(&pos));
        if !self.known() {
            self.restart_from(pos, &by);
            return;
        }
        if self.keys.last() == Some(&key) {
            self.note(format!("Position confirmed by arbiter {by} (Article 7.1)."));
            return;
        }
        // 7.5.1: the position before an irregularity is reinstated; the moves after it
        // are taken back.
        if let Some(k) = self.keys.iter().rposition(|k| *k == key) {
            let taken: Vec<String> = self.moves[k..].iter().map(|m| m.san.clone()).collect();
            self.moves.truncate(k);
            self.keys.truncate(k + 1);
            self.last_press = None;
            self.note(format!(
                "Arbiter {by} reinstated the position before the irregularity (Article 7.5.1); moves taken back: {}.",
                taken.join(" ")
            ));
            return;
        }
        self.restart_from(pos, &by);
    }

    /// One event; the shadow game has seen the events before it, not this one.
    fn on_event(&mut self, e: &Event) {
        match e {
            Event::ClockStarted { .. }
            | Event::DefaultTimePassed { .. }
            | Event::ClockDiscrepancy { .. }
            | Event::DiscrepancyAcknowledged { .. }
            | Event::SessionEndSet { .. }
            | Event::AdjournmentRulesSet { .. }
            | Event::ResumptionScheduled { .. }
            | Event::Sealed { .. }
            | Event::EnvelopeVerified { .. }
            | Event::EnvelopeOpened { .. }
            | Event::DrawOfferAnswered { .. }
            // Presence is routine before the start; a forfeit shows in the result.
            | Event::PlayerPresent { .. } => {}
            Event::MoveMade { side, san, fen, .. } => {
                if self.owed.first().is_some_and(|o| o.0 == *side) {
                    let (_, clk, emt, at) = self.owed.remove(0);
                    self.push(san.clone(), fen, clk, emt);
                    self.last_press = Some((at, *side, self.moves.len() - 1));
                } else if self.known() {
                    self.pending = Some(Pending {
                        side: *side,
                        san: san.clone(),
                        fen: fen.clone(),
                    });
                }
            }
            Event::Pressed {
                at,
                side,
                charged_ms,
                remaining_ms,
                ..
            } => match self.pending.take() {
                Some(p) if p.side == *side => {
                    self.push(p.san, &p.fen, *remaining_ms, *charged_ms);
                    self.last_press = Some((*at, *side, self.moves.len() - 1));
                }
                other => {
                    self.pending = other;
                    // Decided once the shadow game has folded the press: see `after`.
                    self.press_without_move = Some((*side, *remaining_ms, *charged_ms, *at));
                }
            },
            Event::PeriodAdvanced {
                at,
                side,
                period,
                remaining_ms,
                ..
            } => {
                if let Some((t, s, i)) = self.last_press
                    && t == *at
                    && s == *side
                    && let Some(m) = self.moves.get_mut(i)
                {
                    m.clk = *remaining_ms;
                }
                if let Some((clk, _, t)) = self.sealed.get_mut(*side)
                    && *t == *at
                {
                    *clk = *remaining_ms;
                }
                let _ = period;
            }
            // Observe mode: at a press, the hand-set clock's time is the mover's official
            // one (a clock set with another increment than the round's); at any other
            // instant the clock was stopped, set or jumped, and the note says so.
            Event::ClockTimesAdopted {
                at,
                white_ms,
                black_ms,
                reckoned_white_ms,
                reckoned_black_ms,
            } => {
                let shown = |c: Color| match c {
                    Color::White => *white_ms,
                    Color::Black => *black_ms,
                };
                if let Some((t, s, i)) = self.last_press
                    && t == *at
                    && let Some(m) = self.moves.get_mut(i)
                {
                    m.clk = shown(s);
                } else if let Some(o) = self.owed.last_mut()
                    && o.3 == *at
                {
                    o.1 = shown(o.0);
                } else {
                    self.note(format!(
                        "The hand-set clock showed White {}, Black {}; reckoned from the presses: White {}, Black {}.",
                        clock(*white_ms),
                        clock(*black_ms),
                        clock(*reckoned_white_ms),
                        clock(*reckoned_black_ms)
                    ));
                }
            }
            Event::FlagFell { side, .. } => {
                self.note(format!("{}'s flag fell (Article 6.8).", who(*side)));
            }
            Event::ResultPending { side, .. } => {
                self.note(format!(
                    "The result after {}'s flag waits for the arbiter (Article 6.8).",
                    who(*side)
                ));
            }
            Event::BothFlagsOrderUnknown { .. } => {
                self.note("Both flags fell; which fell first is unknown, play goes on (Article 6.11).".into());
            }
            Event::PausedByPlayer { side, .. } => {
                self.note(format!(
                    "{} stopped the clocks to summon the arbiter (Article 6.12b).",
                    who(*side)
                ));
            }
            Event::Paused { arbiter, .. } => {
                self.note(format!(
                    "Clocks stopped by arbiter {} (Article 6.12a).",
                    comment_text(arbiter)
                ));
            }
            Event::Resumed { arbiter, .. } => {
                self.note(format!(
                    "Clocks restarted by arbiter {} (Article 6.12c).",
                    comment_text(arbiter)
                ));
            }
            Event::TimeSet {
                side,
                remaining_ms,
                arbiter,
                ..
            } => self.note(format!(
                "Arbiter {} set {}'s clock to {} (Article 6.13).",
                comment_text(arbiter),
                who(*side),
                clock(*remaining_ms)
            )),
            Event::TimeAdded {
                side,
                delta_ms,
                remaining_ms,
                arbiter,
                ..
            } => {
                let (verb, d) = if delta_ms.0 < 0 {
                    ("took", -*delta_ms)
                } else {
                    ("gave", *delta_ms)
                };
                let whom = match verb {
                    "took" => "from",
                    _ => "to",
                };
                self.note(format!(
                    "Arbiter {} {verb} {} {whom} {}: now {} (Article 6.13).",
                    comment_text(arbiter),
                    clock(d),
                    who(*side),
                    clock(*remaining_ms)
                ));
            }
            Event::MovesSet {
                side,
                moves,
                arbiter,
                ..
            } => self.note(format!(
                "Arbiter {} set {}'s move counter to {moves} (Article 6.10.2).",
                comment_text(arbiter),
                who(*side)
            )),
            Event::PositionSet { fen, arbiter, .. } => {
                self.pending = None;
                self.on_position_set(fen, arbiter);
            }
            Event::ClockReplaced {
                white_ms,
                black_ms,
                arbiter,
                ..
            } => self.note(format!(
                "Clock replaced by arbiter {} (Article 6.10): White {}, Black {}.",
                comment_text(arbiter),
                clock(*white_ms),
                clock(*black_ms)
            )),
            Event::AdjournmentOrdered { sealer, .. } => {
                self.note(format!(
                    "Adjournment: {} to seal the next move (Guidelines I.1.1).",
                    who(*sealer)
                ));
            }
            Event::SealCommitted {
                at,
                side,
                charged_ms,
                remaining_ms,
                ..
            } => {
                // The move made on the board after the order is the sealed move (I.1.1):
                // it stays secret until the envelope is opened.
                self.pending = None;
                *self.sealed.get_mut(*side) = Some((*remaining_ms, *charged_ms, *at));
                self.adjourned = true;
                self.note(format!(
                    "Adjourned: {}'s move is sealed (Guidelines I.1.1).",
                    who(*side)
                ));
            }
            Event::CounterSealed {
                at,
                side,
                charged_ms,
                remaining_ms,
                ..
            } => {
                self.pending = None;
                *self.sealed.get_mut(*side) = Some((*remaining_ms, *charged_ms, *at));
                self.note(format!(
                    "{} sealed the reply for the absent opponent (Guidelines I.9.3).",
                    who(*side)
                ));
            }
            Event::DrawOffered { side, .. } => {
                self.note(format!("{} offered a draw (Article 9.1).", who(*side)));
            }
            Event::ResumptionStarted { .. } => {
                self.adjourned = false;
                self.note("The adjourned game resumed (Guidelines I.5).".into());
            }
            Event::SealedMovePlayed {
                at,
                side,
                san,
                fen,
                envelope,
                ..
            } => {
                let (clk, emt) = match self.sealed.get_mut(*side).take() {
                    Some((clk, emt, _)) => (clk, emt),
                    None => (self.clock_now(*side, *at), Millis::ZERO),
                };
                if self.known() {
                    self.push(san.clone(), fen, clk, emt);
                    let why = match envelope {
                        Some(_) => "the sealed move (Guidelines I.9)",
                        None => "the move stated after the envelope was lost (Guidelines I.12.1)",
                    };
                    self.note(format!("{} played {why}.", who(*side)));
                }
            }
            Event::EnvelopeLost { .. } => {
                self.note("The envelope was lost (Guidelines I.12).".into());
            }
            Event::TimeCorrected {
                side,
                remaining_ms,
                arbiter,
                ..
            } => self.note(format!(
                "Arbiter {} corrected {}'s clock to {} (Guidelines I.13).",
                comment_text(arbiter),
                who(*side),
                clock(*remaining_ms)
            )),
            Event::ResultAwaitsEnvelope { .. } => {
                self.note(
                    "Default time passed; the result waits for the envelope (Guidelines I.10)."
                        .into(),
                );
            }
            Event::GameEnded {
                at,
                result,
                replaces,
                ..
            } => {
                // The shadow has not seen the end yet: its clock, read at the end's instant,
                // is the one the end stops.
                let emt = self
                    .shadow
                    .as_ref()
                    .map_or(Millis::ZERO, |g| g.clock().charge(*at).main);
                self.flush_pending(*at, emt);
                if replaces.is_some() {
                    self.note("The arbiter corrected the result.".into());
                }
                self.adjourned = false;
                self.result = Some(result.clone());
            }
        }
    }
}

/// The PGN value of a game: its setup, its events in order (all of them, or
/// [`events_until`] an instant), and what the hall knows about it besides.
pub fn game(setup: &Setup, events: &[Event], info: &GameInfo) -> PgnGame {
    let start = setup
        .fen
        .as_deref()
        .and_then(|f| parse_fen(f).ok())
        .unwrap_or_default();
    let mut b = Builder {
        keys: vec![position_key(&fen_of(&start))],
        start,
        start_fen: setup.fen.clone(),
        shadow: Game::new(setup.clone()).ok(),
        moves: Vec::new(),
        intro: Vec::new(),
        pending: None,
        last_press: None,
        sealed: ByColor::default(),
        unrecorded: 0,
        press_without_move: None,
        owed: Vec::new(),
        result: None,
        adjourned: false,
        last_at: None,
    };
    for e in events {
        b.on_event(e);
        if let Some(g) = b.shadow.as_mut() {
            g.evolve(e);
        }
        b.after_press_without_move();
        if matches!(e, Event::MoveMade { .. } | Event::SealedMovePlayed { .. }) {
            b.mark_check(matches!(e, Event::MoveMade { .. }));
        }
        b.last_at = Some(e.at());
    }
    b.give_up_owed();
    b.finish(setup, info)
}

impl Builder {
    /// A press with no move either owes its move (the core kept the position, and the
    /// `move_made` comes next) or leaves the moves unrecorded (a clock-only board).
    fn after_press_without_move(&mut self) {
        let Some(press) = self.press_without_move.take() else {
            return;
        };
        let owes = self
            .shadow
            .as_ref()
            .is_some_and(|g| g.move_owed().is_some());
        if owes && self.known() {
            self.owed.push(press);
            return;
        }
        self.give_up_owed();
        if self.known() {
            self.note("From here the moves were not recorded (clock-only board).".into());
        }
        self.unrecorded += 1;
        self.last_press = None;
    }

    /// Owed moves that never came (the core gave up, or the events end here): those
    /// presses are moves not recorded. A live game's next rendering attaches them.
    fn give_up_owed(&mut self) {
        if self.owed.is_empty() {
            return;
        }
        if self.known() {
            self.note("From here the moves were not recorded (clock-only board).".into());
        }
        self.unrecorded += self.owed.len() as u32;
        self.owed.clear();
        self.last_press = None;
    }

    /// The events' SAN has no check suffix; the PGN's does (`+`, `#`), read from the
    /// shadow game's position after the move.
    fn mark_check(&mut self, pending: bool) {
        let Some(pos) = self.shadow.as_ref().and_then(Game::position) else {
            return;
        };
        let suffix = if pos.is_checkmate() {
            "#"
        } else if pos.is_check() {
            "+"
        } else {
            return;
        };
        let san = if pending {
            self.pending.as_mut().map(|p| &mut p.san)
        } else {
            self.moves.last_mut().map(|m| &mut m.san)
        };
        if let Some(san) = san
            && !san.ends_with(['+', '#'])
        {
            san.push_str(suffix);
        }
    }

    fn finish(mut self, setup: &Setup, info: &GameInfo) -> PgnGame {
        let score = self.result.as_ref().map(|r| r.score);
        let (result_tag, marker) = tags::result(score);
        let termination = match &self.result {
            Some(r) => {
                let (tag, why) = tags::termination(r.score, &r.termination);
                self.note(format!("{result_tag}: {why}."));
                Some(tag)
            }
            None if self.adjourned => Some("Unterminated"),
            None => None,
        };
        if self.result.is_none() && !self.known() {
            self.note(format!(
                "{} move(s) not recorded since (clock-only board).",
                self.unrecorded
            ));
        }
        let round = match (info.round, info.board) {
            (Some(r), Some(b)) => format!("{r}.{b}"),
            (Some(r), None) => r.to_string(),
            (None, _) => "?".into(),
        };
        let (y, m, d) =
            hallclock_rules::millis::civil_from_days(setup.start.0.div_euclid(86_400_000));
        let mut tags: Vec<(String, String)> = vec![
            (
                "Event".into(),
                info.event.clone().unwrap_or_else(|| "?".into()),
            ),
            (
                "Site".into(),
                info.site.clone().unwrap_or_else(|| "?".into()),
            ),
            ("Date".into(), format!("{y:04}.{m:02}.{d:02}")),
            ("Round".into(), round),
            ("White".into(), setup.white.clone()),
            ("Black".into(), setup.black.clone()),
            ("Result".into(), result_tag.into()),
        ];
        if let Some(id) = info.white_fide_id {
            tags.push(("WhiteFideId".into(), id.to_string()));
        }
        if let Some(id) = info.black_fide_id {
            tags.push(("BlackFideId".into(), id.to_string()));
        }
        if let Some(b) = info.board {
            tags.push(("Board".into(), b.to_string()));
        }
        tags.push(("TimeControl".into(), pgn_time_control(&setup.tc)));
        // Observe mode: the clocks below were set by hand and read, not run by hallclock.
        if setup.observed {
            tags.push(("ClockMode".into(), "observe".into()));
        }
        if let Some(black) = setup.tc_black.as_ref().filter(|b| **b != setup.tc) {
            tags.push(("WhiteTimeControl".into(), pgn_time_control(&setup.tc)));
            tags.push(("BlackTimeControl".into(), pgn_time_control(black)));
        }
        if let (Some(g), Some(at)) = (&self.shadow, self.last_at) {
            let c = g.clock();
            tags.push(("WhiteClock".into(), clock(c.remaining_at(Color::White, at))));
            tags.push(("BlackClock".into(), clock(c.remaining_at(Color::Black, at))));
        }
        if let Some(t) = termination {
            tags.push(("Termination".into(), t.into()));
        }
        if let Some(fen) = &self.start_fen {
            tags.push(("SetUp".into(), "1".into()));
            tags.push(("FEN".into(), fen.clone()));
        }
        PgnGame {
            tags,
            intro: self.intro,
            start_fullmove: self.start.fullmoves().get(),
            start_turn: self.start.turn().into(),
            moves: self.moves,
            marker: marker.into(),
        }
    }
}
