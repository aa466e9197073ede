//! PGN for broadcasts: a game's `Setup` and events in, PGN text out. Pure, like `rules/`:
//! no I/O, no clock reads, no async; time is whatever the events say.
//!
//! Two steps, as in scalachess: [`game`] folds the events into a [`PgnGame`] value (tags,
//! moves with SAN, clocks and comments), and [`PgnGame::render`] writes it as text in the
//! export format (python-chess's `StringExporter` layout: lines of at most 80 columns,
//! never splitting a token, and Black's move number repeated after a comment). [`round`]
//! joins a round's games; [`events_until`] cuts the events at an instant, so a broadcast
//! delayed by D shows [`game_at`]`(setup, events, info, now - D)`, which is
//! `game(setup, events_until(events, now - D), info)`: the game exactly as it was then,
//! computed from the journal's own timestamps.
//!
//! What the text says, and why (docs/BROADCAST.md is the reader's version):
//!
//! - **Tags**: the Seven Tag Roster first (`Event`, `Site`, `Date` of the scheduled start
//!   in UTC, `Round "r.b"`, `White`, `Black`, `Result`), then `WhiteFideId`/`BlackFideId`,
//!   `Board`, `TimeControl`, `WhiteClock`/`BlackClock` and `Termination`. `Round "3.5"`
//!   keeps lichess's board order (lichess-org/broadcaster#27). Tag values escape `\` and
//!   `"`.
//! - **`TimeControl`**: our notation is the PGN one plus the delay bonus (`+10d`), which
//!   PGN cannot say: a delay period is written without its bonus (`5400+10d` → `5400`).
//!   When White and Black have different controls (time odds), `TimeControl` is White's
//!   and `WhiteTimeControl`/`BlackTimeControl` give each, in the same notation.
//! - **Clocks**: every move carries `[%clk h:mm:ss]`, the mover's official time after the
//!   press, increment included: `remaining_ms` of the mover's `Pressed`, or of the
//!   `PeriodAdvanced` that follows it at the same instant (6.2b). Nothing is recomputed.
//!   A move that ends the game without a press (mate, stalemate, 6.7a) and a move made but
//!   unpressed when the game ended carry the mover's clock as the game left it (stopped at
//!   the end). Seconds are truncated, as a clock face shows them: a clock at 0.4 s reads
//!   `0:00:00`. `[%emt]` is the main time the move cost (`charged_ms`; in delay mode the
//!   free delay is not counted). `WhiteClock`/`BlackClock` are the clocks as of the last
//!   event shown, so the text only changes when the game does; after the end they are
//!   frozen (lila#3693).
//! - **A move made and not yet pressed is not shown** while the game goes on: it is not
//!   complete (6.7a) and has no official time yet, and lichess drops the clocks of a game
//!   with a move lacking `%clk` (lila#15037).
//! - **Results**: `1-0`, `0-1`, `1/2-1/2`; both lost by default is `Result "0-0"`, which
//!   lichess broadcasts read (lila#16081), with `*` closing the movetext because `0-0` is
//!   not a PGN game termination marker (python-chess would read it as castling). An
//!   annulled game is `*` with `Termination "Unterminated"` and a comment saying so: it
//!   has no score, and pairing programs that import PGN treat `*` as no result. A
//!   forfeit (6.6) is the score with `Termination "Abandoned"`. `Termination` uses the
//!   values lichess writes (`Normal`, `Time forfeit`, `Abandoned`, `Rules infraction`,
//!   `Adjudication`, `Unterminated`); the last comment says how the game ended and under
//!   which rule.
//! - **Adjourned games** end their movetext with a comment naming the sealer and the
//!   Guidelines I rule, `Result "*"` and `Termination "Unterminated"`; at the resumption
//!   the sealed move appears with the sealer's clock as it was committed.
//! - **Arbiter acts** the movetext cannot show (time set or added, move counter set, a
//!   replaced clock, pauses, a position set) become `{ }` comments naming their rule and
//!   the arbiter. The arbiter's free-text reason is left out (the PGN is public). Text
//!   from clients (names, arbiters) is cleaned so it cannot close a comment or forge a
//!   `[%clk]`.
//! - **Unknown moves** (clock-only boards: a press with no move) cannot be written; the
//!   movetext stops at the last known move with a comment counting the unrecorded ones.
//!   When the arbiter then sets the position (`set_position`), the PGN starts from it
//!   (`SetUp`/`FEN` tags) with a comment listing the moves known before it. A position
//!   set that reinstates an earlier position of the game (7.5.1) cuts the movetext back
//!   there, with a comment listing the moves taken back.

mod build;
mod tags;
mod text;

pub use build::{GameInfo, board_number, events_until, game, game_at};
pub use tags::{clock, escape_tag, pgn_time_control, termination};
pub use text::{PgnGame, PgnMove, round};
