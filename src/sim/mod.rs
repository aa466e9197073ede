//! Simulated DGT e-boards with a DGT3000 (or XL) clock, each behind a pseudo-terminal
//! reachable at a stable symlink `DIR/board-001`, … that the daemon opens like a real port.
//!
//! Tests drive it through [`Sim`] and [`BoardHandle`]; scripts through the control lines
//! of [`control`] (stdin or a Unix socket, see `hallclock sim`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), hallclock::sim::SimError> {
//! use hallclock::sim::{Sim, SimConfig};
//! let sim = Sim::start(SimConfig::new(2, "/tmp/hall")).await?;
//! sim.board(1).play_move("e2e4")?;
//! sim.board(1).press();
//! println!("{}", sim.board(1).clock_display());
//! # Ok(()) }
//! ```

pub mod board;
pub mod clock;
pub mod control;
pub mod pty;
pub mod square;
mod task;
pub mod wire;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc, oneshot};

pub use board::{BoardSpec, ClockIcons, ClockKind, ClockView, MoveError, SimBoard};
pub use clock::{Button, Hms, Run, Side};
pub use control::{Control, ControlError};
pub use pty::PtyError;
pub use square::{Piece, SimMove, Square};

/// How to build the simulated hall.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub boards: usize,
    /// Folder for the symlinks `board-001`, … (created when missing).
    pub dir: PathBuf,
    pub clock: ClockKind,
    pub ack_delay: Duration,
    pub scan_interval: Duration,
    /// Each scan boundary moves by up to this much either way.
    pub scan_jitter: Duration,
    /// Board n gets serial number `serial_base + n` (five digits).
    pub serial_base: u32,
    pub computer_mode: bool,
    pub rotated: bool,
}

impl SimConfig {
    /// `boards` DGT3000 boards in computer mode, 100 ms ACK delay, 200 ms scans ± 30 ms.
    pub fn new(boards: usize, dir: impl Into<PathBuf>) -> SimConfig {
        SimConfig {
            boards,
            dir: dir.into(),
            clock: ClockKind::Dgt3000,
            ack_delay: Duration::from_millis(100),
            scan_interval: Duration::from_millis(200),
            scan_jitter: Duration::from_millis(30),
            serial_base: 10000,
            computer_mode: true,
            rotated: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Pty(#[from] PtyError),
    #[error("cannot create the folder {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no board {board}: the simulator has boards 1 to {count}")]
    NoSuchBoard { board: usize, count: usize },
    #[error("board {board}: {source}")]
    Move { board: usize, source: MoveError },
    #[error("board {board}: `{square}` is not a square like e4")]
    Square { board: usize, square: String },
    #[error("board {board}: `{piece}` is not a piece letter (PNBRQK, lowercase for black)")]
    Piece { board: usize, piece: char },
    #[error("board {board}: the simulator task has stopped")]
    Stopped { board: usize },
    #[error("serial base {0} leaves five digits for too few boards")]
    SerialBase(u32),
}

/// State shared between a board's task and its handle.
#[derive(Debug)]
struct Shared {
    board: SimBoard,
    /// When the last write containing a BWTIME frame started (for latency measurements).
    last_bwtime_write: Option<Instant>,
    plugged: bool,
}

#[derive(Debug)]
enum Op {
    Unplug(oneshot::Sender<()>),
    Replug(oneshot::Sender<Result<(), PtyError>>),
}

/// Test and script control of one simulated board. Actions take effect at once; the
/// board's task sends the resulting bytes.
#[derive(Debug, Clone)]
pub struct BoardHandle {
    number: usize,
    path: PathBuf,
    shared: Arc<Mutex<Shared>>,
    wake: Arc<Notify>,
    ops: mpsc::UnboundedSender<Op>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic elsewhere must not take the simulator down with it; the state stays usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl BoardHandle {
    pub fn number(&self) -> usize {
        self.number
    }

    /// The stable path the daemon opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn serial(&self) -> String {
        lock(&self.shared).board.spec().serial.clone()
    }

    fn with<R>(&self, f: impl FnOnce(&mut SimBoard, Instant) -> R) -> R {
        let r = f(&mut lock(&self.shared).board, Instant::now());
        self.wake.notify_one();
        r
    }

    /// The player whose lever is up presses it; whether the clock was running then (a
    /// clock stopped at a flag or by the host takes no press).
    pub fn press(&self) -> bool {
        self.with(|b, now| b.press(now))
    }

    /// Plays a move given in UCI (`e2e4`): parsed here, once.
    pub fn play_move(&self, uci: &str) -> Result<(), SimError> {
        let mv = SimMove::parse(uci).ok_or_else(|| SimError::Move {
            board: self.number,
            source: MoveError::NotUci(uci.to_string()),
        })?;
        self.play(mv)
    }

    pub fn play(&self, mv: SimMove) -> Result<(), SimError> {
        self.with(|b, now| b.play_move(mv, now))
            .map_err(|source| SimError::Move {
                board: self.number,
                source,
            })
    }

    /// Lifts whatever stands on `square` (e.g. `e4`).
    pub fn lift(&self, square: &str) -> Result<(), SimError> {
        let sq = self.square(square)?;
        self.lift_at(sq);
        Ok(())
    }

    pub fn lift_at(&self, square: Square) {
        self.with(|b, now| b.set_square(square.index(), 0, now));
    }

    /// Puts `piece` (FEN letter: `Q` white queen, `n` black knight) on `square`.
    pub fn place(&self, square: &str, piece: char) -> Result<(), SimError> {
        let sq = self.square(square)?;
        let piece = Piece::from_fen(piece).ok_or(SimError::Piece {
            board: self.number,
            piece,
        })?;
        self.place_at(sq, piece);
        Ok(())
    }

    pub fn place_at(&self, square: Square, piece: Piece) {
        self.with(|b, now| b.set_square(square.index(), piece.code(), now));
    }

    fn square(&self, square: &str) -> Result<Square, SimError> {
        Square::parse(square).ok_or_else(|| SimError::Square {
            board: self.number,
            square: square.to_string(),
        })
    }

    pub fn button(&self, button: Button) {
        self.with(|b, now| b.button(button, now));
    }

    pub fn garbage(&self, count: usize) {
        self.with(|b, _| b.garbage(count));
    }

    /// The board ignores the host and sends nothing for `duration`.
    pub fn stall(&self, duration: Duration) {
        self.with(|b, now| b.stall(duration, now));
    }

    /// The clock stops answering clock commands (on) or answers again (off).
    pub fn drop_acks(&self, on: bool) {
        self.with(|b, _| b.set_drop_acks(on));
    }

    /// The arbiter sets the clock with its buttons (a hand-set clock): it then runs by
    /// itself, adds `increment` at each press and switches at the lever.
    pub fn set_clock(&self, left: Duration, right: Duration, increment: Duration, run: Run) {
        self.with(|b, now| b.hand_set_clock(left, right, increment, run, now));
    }

    /// The clock's batteries run low (status bit D2) or are changed.
    pub fn battery_low(&self, on: bool) {
        self.with(|b, _| b.set_battery_low(on));
    }

    /// Plain moves are reported new square first, old square second (on) or in the
    /// natural order (off).
    pub fn out_of_order(&self, on: bool) {
        self.with(|b, _| b.set_out_of_order(on));
    }

    /// What the clock shows now.
    pub fn clock_display(&self) -> ClockView {
        self.with(|b, now| b.view(now))
    }

    /// The pieces by square, a8 = 0 … h1 = 63 (DGT piece codes).
    pub fn squares(&self) -> [u8; 64] {
        self.with(|b, _| b.squares())
    }

    /// How many clock commands with sub-command id `cmd` (e.g. 0x0a SETNRUN) arrived.
    pub fn clock_commands_received(&self, cmd: u8) -> u32 {
        lock(&self.shared).board.clock_commands_received(cmd)
    }

    /// When the last write of a BWTIME frame (lever, time, ACK) to the port started.
    pub fn last_bwtime_write(&self) -> Option<Instant> {
        lock(&self.shared).last_bwtime_write
    }

    pub fn is_plugged(&self) -> bool {
        lock(&self.shared).plugged
    }

    /// Unplugs the board: its port hangs up (the daemon reads EIO) and the symlink goes
    /// away. Returns when both have happened.
    pub async fn unplug(&self) -> Result<(), SimError> {
        let (tx, rx) = oneshot::channel();
        self.ops
            .send(Op::Unplug(tx))
            .map_err(|_| SimError::Stopped { board: self.number })?;
        rx.await
            .map_err(|_| SimError::Stopped { board: self.number })
    }

    /// Plugs the board back in: a new pseudo-terminal behind the same symlink, the board
    /// powered up again (bus mode) with its pieces and clock as they were.
    pub async fn replug(&self) -> Result<(), SimError> {
        let (tx, rx) = oneshot::channel();
        self.ops
            .send(Op::Replug(tx))
            .map_err(|_| SimError::Stopped { board: self.number })?;
        Ok(rx
            .await
            .map_err(|_| SimError::Stopped { board: self.number })??)
    }
}

/// A running simulated hall. Dropping it stops the boards and removes the symlinks.
#[derive(Debug)]
pub struct Sim {
    boards: Vec<BoardHandle>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Sim {
    /// Creates the pseudo-terminals and symlinks and starts one task per board.
    pub async fn start(config: SimConfig) -> Result<Sim, SimError> {
        std::fs::create_dir_all(&config.dir).map_err(|source| SimError::Dir {
            path: config.dir.clone(),
            source,
        })?;
        if config.serial_base as usize + config.boards > 99_999 {
            return Err(SimError::SerialBase(config.serial_base));
        }
        let mut sim = Sim {
            boards: Vec::new(),
            tasks: Vec::new(),
        };
        for n in 1..=config.boards {
            let spec = BoardSpec {
                serial: format!("{:05}", config.serial_base as usize + n),
                clock: config.clock,
                ack_delay: config.ack_delay,
                scan_interval: config.scan_interval,
                scan_jitter: config.scan_jitter,
                computer_mode: config.computer_mode,
                rotated: config.rotated,
            };
            let path = config.dir.join(format!("board-{n:03}"));
            let pty = pty::Pty::open()?;
            pty::place_symlink(&pty.slave_path, &path)?;
            let shared = Arc::new(Mutex::new(Shared {
                board: SimBoard::new(spec, Instant::now()),
                last_bwtime_write: None,
                plugged: true,
            }));
            let wake = Arc::new(Notify::new());
            let (ops_tx, ops_rx) = mpsc::unbounded_channel();
            let handle = BoardHandle {
                number: n,
                path: path.clone(),
                shared: shared.clone(),
                wake: wake.clone(),
                ops: ops_tx,
            };
            sim.tasks.push(tokio::spawn(task::run(task::BoardTask {
                path,
                pty: Some(pty),
                shared,
                wake,
                ops: ops_rx,
            })));
            sim.boards.push(handle);
        }
        Ok(sim)
    }

    /// Board `n` (1-based). Panics on a number outside 1..=boards: a bug in the test.
    pub fn board(&self, n: usize) -> &BoardHandle {
        match self.get(n) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        }
    }

    pub fn get(&self, n: usize) -> Result<&BoardHandle, SimError> {
        n.checked_sub(1)
            .and_then(|i| self.boards.get(i))
            .ok_or(SimError::NoSuchBoard {
                board: n,
                count: self.boards.len(),
            })
    }

    pub fn boards(&self) -> &[BoardHandle] {
        &self.boards
    }

    /// Carries out one control command; the text is the reply for the script.
    pub async fn apply(&self, control: &Control) -> Result<String, SimError> {
        let Some(n) = control.board() else {
            return Ok(control::HELP.to_string());
        };
        let b = self.get(n)?;
        Ok(match control {
            Control::Press { .. } => {
                b.press();
                format!("board {n}: pressed ({})", b.clock_display())
            }
            Control::Move { mv, .. } => {
                b.play(*mv)?;
                format!("board {n}: played {mv}")
            }
            Control::Lift { square, .. } => {
                b.lift_at(*square);
                format!("board {n}: lifted {square}")
            }
            Control::Place { square, piece, .. } => {
                b.place_at(*square, *piece);
                format!("board {n}: placed {} on {square}", piece.letter())
            }
            Control::Button { button, .. } => {
                b.button(*button);
                format!("board {n}: button {button:?}")
            }
            Control::Unplug { .. } => {
                b.unplug().await?;
                format!("board {n}: unplugged")
            }
            Control::Replug { .. } => {
                b.replug().await?;
                format!("board {n}: replugged at {}", b.path().display())
            }
            Control::Garbage { count, .. } => {
                b.garbage(*count);
                format!("board {n}: sent {count} garbage bytes")
            }
            Control::Stall { duration, .. } => {
                b.stall(*duration);
                format!("board {n}: stalled for {duration:?}")
            }
            Control::DropAcks { on, .. } => {
                b.drop_acks(*on);
                format!("board {n}: drop-acks {}", if *on { "on" } else { "off" })
            }
            Control::OutOfOrder { on, .. } => {
                b.out_of_order(*on);
                format!("board {n}: out-of-order {}", if *on { "on" } else { "off" })
            }
            Control::Battery { low, .. } => {
                b.battery_low(*low);
                format!(
                    "board {n}: clock battery {}",
                    if *low { "low" } else { "ok" }
                )
            }
            Control::SetClock {
                left,
                right,
                increment,
                run,
                ..
            } => {
                b.set_clock(*left, *right, *increment, *run);
                format!(
                    "board {n}: clock set by hand, +{} s per move ({})",
                    increment.as_secs(),
                    b.clock_display()
                )
            }
            Control::Show { .. } => format!("board {n}: {}", b.clock_display()),
            Control::Help | Control::Quit => control::HELP.to_string(),
        })
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        for b in &self.boards {
            pty::remove_symlink(&b.path);
        }
    }
}
