//! The simulator against real traffic: replaying the moves and lever presses of a capture
//! recorded from real DGT hardware must make the simulator send the same sequence of
//! message kinds — the board dump, board updates (one run per move, leaving the same
//! position), and BWTIME with the same status byte transitions — times and clock ACKs
//! aside.
//!
//! The captures are read from `../shared/reference/dgt-captures` (never copied into the
//! repository, see its README); without them the test says so and passes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use bytes::BytesMut;
use hallclock::dgt::{
    ClockCommand, ClockTime, DgtCommand, DgtMessage, HostCodec, RunFlags, SetTime, decode_all,
};
use hallclock::link::port;
use hallclock::link::testing::scratch_dir;
use hallclock::sim::{Sim, SimConfig};
use hallclock::tty::FdStream;
use shakmaty::{Chess, Position, san::San, uci::UciMove};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::{Decoder, Encoder};

const WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Dump,
    /// A run of field updates between two status changes.
    Board,
    /// A BWTIME whose status byte differs from the previous one.
    Status(u8),
}

/// Tokens and, per Board token, the position (field-indexed piece codes) it left.
#[derive(Debug)]
struct Tokens {
    tokens: Vec<Token>,
    board: [u8; 64],
    boards_after_run: Vec<[u8; 64]>,
    last_status: Option<u8>,
    acks: Vec<u8>,
    last_time: Option<ClockTime>,
}

impl Default for Tokens {
    fn default() -> Self {
        Tokens {
            tokens: Vec::new(),
            board: [0; 64],
            boards_after_run: Vec::new(),
            last_status: None,
            acks: Vec::new(),
            last_time: None,
        }
    }
}

impl Tokens {
    fn push(&mut self, msg: &DgtMessage) {
        match msg {
            DgtMessage::BoardDump(d) => {
                self.tokens.push(Token::Dump);
                for (dst, p) in self.board.iter_mut().zip(d.board.iter()) {
                    *dst = p.code();
                }
            }
            DgtMessage::FieldUpdate(f) => {
                if self.tokens.last() != Some(&Token::Board) {
                    self.tokens.push(Token::Board);
                    self.boards_after_run.push(self.board);
                }
                self.board[usize::from(f.field.index())] = f.piece.code();
                if let Some(last) = self.boards_after_run.last_mut() {
                    *last = self.board;
                }
            }
            DgtMessage::ClockTime(t) => {
                self.last_time = Some(*t);
                let s = t.status.to_byte();
                if self.last_status != Some(s) {
                    self.last_status = Some(s);
                    self.tokens.push(Token::Status(s));
                }
            }
            DgtMessage::ClockAck(a) => {
                if let Some(id) = a.reply_to() {
                    self.acks.push(id);
                }
            }
            _ => {}
        }
    }
}

/// `shared/reference/dgt-captures` beside the repository (searched up a few levels, as a
/// git worktree sits deeper than the main checkout; same rule as tests/dgt_captures.rs);
/// `HALLCLOCK_DGT_CAPTURES` overrides.
fn captures_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HALLCLOCK_DGT_CAPTURES") {
        return Some(PathBuf::from(p)).filter(|p| p.is_dir());
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .skip(1)
        .take(3)
        .map(|a| a.join("shared/reference/dgt-captures"))
        .find(|p| p.is_dir())
}

fn capture_tokens(dir: &Path, name: &str) -> Option<Tokens> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.inbytes"))).ok()?;
    let mut bytes = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let b = base64::engine::general_purpose::STANDARD
            .decode(line.trim())
            .unwrap_or_else(|e| panic!("{name}.inbytes: bad base64 line {line:?}: {e}"));
        bytes.extend(b);
    }
    let mut t = Tokens::default();
    for m in decode_all(&bytes) {
        t.push(&m);
    }
    Some(t)
}

/// The game's moves as UCI: `N.uci` (`1. e2e4 e7e5` lines) or `N.pgn` (SAN).
fn capture_moves(dir: &Path, name: &str) -> Vec<String> {
    let words = |text: String| -> Vec<String> {
        text.split_whitespace()
            .filter(|w| !w.ends_with('.') && !["*", "1-0", "0-1", "1/2-1/2"].contains(w))
            .map(str::to_string)
            .collect()
    };
    if let Ok(text) = std::fs::read_to_string(dir.join(format!("{name}.uci"))) {
        return words(text);
    }
    let text = std::fs::read_to_string(dir.join(format!("{name}.pgn")))
        .unwrap_or_else(|e| panic!("{name}: no .uci or .pgn: {e}"));
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for san in words(text) {
        let m = San::from_ascii(san.as_bytes())
            .ok()
            .and_then(|s| s.to_move(&pos).ok())
            .unwrap_or_else(|| panic!("{name}.pgn: `{san}` is not a legal move here"));
        out.push(UciMove::from_standard(m).to_string());
        pos.play_unchecked(m);
    }
    out
}

struct Host {
    stream: FdStream,
    codec: HostCodec,
    rx: BytesMut,
    seen: Tokens,
}

impl Host {
    async fn send(&mut self, cmd: DgtCommand) {
        let mut out = BytesMut::new();
        self.codec.encode(cmd, &mut out).unwrap();
        tokio::time::timeout(WAIT, self.stream.write_all(&out))
            .await
            .expect("the simulator reads its port")
            .expect("write to the simulated port");
    }

    /// Reads until `done` holds, failing after `WAIT`.
    async fn until(&mut self, what: &str, mut done: impl FnMut(&Tokens) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(&self.seen) {
            match tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.rx)).await {
                Ok(Ok(n)) if n > 0 => {
                    while let Ok(Some(m)) = self.codec.decode(&mut self.rx) {
                        self.seen.push(&m);
                    }
                }
                other => panic!(
                    "waiting for {what}: {other:?}; tokens so far {:?}",
                    self.seen.tokens
                ),
            }
        }
    }

    async fn clock(&mut self, left: u32, right: u32, flags: RunFlags) {
        let acks = self.seen.acks.len();
        self.send(DgtCommand::clock(ClockCommand::SetAndRun {
            left: SetTime::from_seconds(left).unwrap(),
            right: SetTime::from_seconds(right).unwrap(),
            flags,
        }))
        .await;
        self.until("SETNRUN ack", |t| t.acks.len() > acks).await;
        self.send(DgtCommand::clock(ClockCommand::End)).await;
        self.until("END ack", |t| t.acks.len() > acks + 1).await;
    }
}

async fn replay(name: &str) {
    let Some(dir) = captures_dir() else {
        println!("SKIPPED capture {name}: no shared/reference/dgt-captures beside the repository");
        return;
    };
    let Some(capture) = capture_tokens(&dir, name) else {
        println!(
            "SKIPPED capture {name}: no {name}.inbytes in {}",
            dir.display()
        );
        return;
    };
    let moves = capture_moves(&dir, name);
    let c = &capture.tokens;
    assert_eq!(c[0], Token::Dump, "{name}: starts with a board dump");
    let Token::Status(first) = c[1] else {
        panic!("{name}: second message is not a clock reading: {:?}", c[1])
    };
    // Capture 2 was played with white on fields 0..15 (the board turned round).
    let mut cfg = SimConfig::new(1, scratch_dir(&format!("capture-{name}")));
    cfg.rotated = rotated(&capture);
    cfg.ack_delay = Duration::from_millis(1);
    cfg.scan_interval = Duration::from_millis(5);
    let sim = Sim::start(cfg).await.unwrap();
    let board = sim.board(1);
    let mut host = Host {
        stream: port::open(board.path()).unwrap(),
        codec: HostCodec::new(),
        rx: BytesMut::new(),
        seen: Tokens::default(),
    };
    host.send(DgtCommand::Reset).await;
    if first & 0x02 != 0 {
        // The capture starts with the right lever up; the players set it so before.
        board.press();
    }
    host.send(DgtCommand::SendBoard).await;
    host.until("board dump", |t| !t.tokens.is_empty()).await;
    host.send(DgtCommand::SendUpdateNice).await;
    // The capture's starting clock: 3:02 both sides, stopped (times do not matter).
    host.clock(182, 182, RunFlags::PAUSE).await;

    let mut next_move = moves.iter();
    let mut runs = 0;
    for (i, tok) in c.iter().enumerate().skip(2) {
        match *tok {
            Token::Board => {
                let target = capture.boards_after_run[runs];
                runs += 1;
                let uci = match next_move.next() {
                    Some(uci) => {
                        board.play_move(uci).unwrap();
                        uci.clone()
                    }
                    None => {
                        // Past the last move (johan: pieces moved after the flag fell):
                        // make the same changes by hand.
                        assert_eq!(i, c.len() - 1, "{name}: more board runs than moves");
                        let rot = rotated(&capture);
                        for (field, &piece) in target.iter().enumerate() {
                            if host.seen.board[field] != piece {
                                let sq = if rot { 63 - field } else { field };
                                let name =
                                    format!("{}{}", (b'a' + (sq % 8) as u8) as char, 8 - sq / 8);
                                match piece_letter(piece) {
                                    Some(p) => board.place(&name, p).unwrap(),
                                    None => board.lift(&name).unwrap(),
                                }
                            }
                        }
                        "the pieces moved by hand".to_string()
                    }
                };
                let uci = uci.as_str();
                let want = runs;
                host.until(&format!("board updates of {uci}"), |t| {
                    t.boards_after_run.len() >= want
                        && t.tokens.last() == Some(&Token::Board)
                        && sim_position_reached(t, board.squares(), rotated(&capture))
                })
                .await;
                assert_eq!(
                    host.seen.board, target,
                    "{name}: after {uci} (board run {runs}) the simulator's board differs from the capture's"
                );
            }
            Token::Status(s) => {
                let prev = host.seen.last_status.unwrap_or(first);
                let t = host.seen.last_time.unwrap_or_default();
                let (l, r) = (t.left.total_seconds(), t.right.total_seconds());
                if (s ^ prev) & 0x02 != 0 {
                    board.press();
                } else if s & 0x01 != 0 {
                    let mut flags = if s & 0x08 != 0 {
                        RunFlags::LEFT
                    } else {
                        RunFlags::RIGHT
                    };
                    flags.toggle_on_lever = true;
                    host.clock(l, r, flags).await;
                } else {
                    host.clock(l, r, RunFlags::PAUSE).await;
                }
                host.until(&format!("status {s:02x}"), |t| t.last_status != Some(prev))
                    .await;
            }
            Token::Dump => panic!("{name}: unexpected second dump at token {i}"),
        }
    }
    assert_eq!(
        host.seen.tokens, capture.tokens,
        "{name}: the simulator's message kinds differ from the capture"
    );
    println!(
        "{name}: {} message kinds match ({runs} board runs, {} status changes)",
        c.len(),
        c.iter().filter(|t| matches!(t, Token::Status(_))).count(),
    );
}

fn piece_letter(code: u8) -> Option<char> {
    " PRNBKQprnbkq"
        .chars()
        .nth(usize::from(code))
        .filter(|c| *c != ' ')
}

fn rotated(capture: &Tokens) -> bool {
    capture
        .boards_after_run
        .first()
        .is_some_and(|b| (1..=6).contains(&b[8]))
}

/// The host's board equals the simulator's position (square order → field order).
fn sim_position_reached(t: &Tokens, squares: [u8; 64], rotated: bool) -> bool {
    (0..64).all(|sq| {
        let field = if rotated { 63 - sq } else { sq };
        t.board[field] == squares[sq]
    })
}

#[tokio::test]
async fn capture_1_replays_with_the_same_message_kinds() {
    replay("1").await;
}

#[tokio::test]
async fn capture_2_rotated_board_replays_with_the_same_message_kinds() {
    replay("2").await;
}

#[tokio::test]
async fn capture_johan_replays_with_the_same_message_kinds() {
    replay("johan").await;
}
