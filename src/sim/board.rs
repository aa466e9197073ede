//! One simulated DGT e-board with a clock attached, sans-IO: host bytes and script actions
//! in (with the current time), board bytes out, and `next_deadline` for when to call
//! [`SimBoard::poll`] again. Follows the simulator checklist, dgt-protocol.md §10.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::clock::{Button, Hms, Run, Side, SimClock};
use super::square::SimMove;
use super::wire::{self, HostFrame};

/// Which clock hangs off the board's clock port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    /// DGT3000, version 2.0 (clock-version ack2 = 0x20).
    Dgt3000,
    /// DGT XL, version 1.14 (ack2 = 0x1e); no ASCII text command.
    Xl,
    /// No clock: status D5 set, no clock ACKs (§10).
    None,
}

/// Board firmware modes (dgt-protocol.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Bus,
    Idle,
    UpdateBrd,
    Update,
    UpdateNice,
}

/// Everything fixed about one simulated board.
#[derive(Debug, Clone)]
pub struct BoardSpec {
    /// Five ASCII digits (§7.1).
    pub serial: String,
    pub clock: ClockKind,
    /// How long the clock takes to ACK a command (§5.3: "usually within one or two seconds").
    pub ack_delay: Duration,
    /// One full board scan (§4.1: 200–250 ms); field updates leave on scan boundaries,
    /// so a move is reported up to one scan after the pieces were put down, possibly
    /// after the lever frame of a press that followed it.
    pub scan_interval: Duration,
    /// Each scan boundary is moved by up to this much, either way (a seeded random).
    pub scan_jitter: Duration,
    /// DGT3000 mode 25 / XL mode 23: only then is SETNRUN obeyed (§5.1).
    pub computer_mode: bool,
    /// Connector on the right: white's pieces on fields 0..15 (§4.1).
    pub rotated: bool,
}

/// What the clock shows, for tests and the `show` control command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockView {
    pub left: Hms,
    pub right: Hms,
    pub running: Option<Side>,
    pub lever_high: Side,
    pub flagged_left: bool,
    pub flagged_right: bool,
    /// Text on the display instead of the times (ASCII / DISPLAY until END).
    pub text: Option<String>,
    pub beeps: u32,
    pub connected: bool,
    /// The period signs and flag icons the host set with ICONS (DGT3000), until the next
    /// SETNRUN clears them (unless ICONS asked them to stay, `sp` bit 6).
    pub icons: Option<ClockIcons>,
}

/// ICONS' period and flag bytes (i2, i3: period 1–5 as bits 0–4, flag as bit 5), per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockIcons {
    /// 1–5, or 0 when no period sign is lit.
    pub left_period: u8,
    pub right_period: u8,
    pub left_flag: bool,
    pub right_flag: bool,
}

impl ClockIcons {
    fn from_bytes(left: u8, right: u8) -> ClockIcons {
        let period = |b: u8| (0..5).find(|i| b & (1 << i) != 0).map_or(0, |i| i + 1);
        ClockIcons {
            left_period: period(left),
            right_period: period(right),
            left_flag: left & 0x20 != 0,
            right_flag: right & 0x20 != 0,
        }
    }
}

impl std::fmt::Display for ClockView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.connected {
            return write!(f, "no clock");
        }
        if let Some(t) = &self.text {
            return write!(f, "text {t:?}");
        }
        let run = match self.running {
            Some(Side::Left) => "left runs",
            Some(Side::Right) => "right runs",
            None => "stopped",
        };
        write!(f, "left {} right {} ({run})", self.left, self.right)?;
        if self.flagged_left {
            write!(f, " left flag")?;
        }
        if self.flagged_right {
            write!(f, " right flag")?;
        }
        if let Some(i) = self.icons {
            write!(f, " [period {} | {}", i.left_period, i.right_period)?;
            if i.left_flag {
                write!(f, ", flag sign left")?;
            }
            if i.right_flag {
                write!(f, ", flag sign right")?;
            }
            write!(f, "]")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("`{0}` is not a UCI move like e2e4 or e7e8q")]
    NotUci(String),
    #[error("no piece on {square} for the move `{uci}`")]
    EmptySquare { uci: String, square: String },
}

const START: [u8; 64] = [
    0x08, 0x09, 0x0a, 0x0c, 0x0b, 0x0a, 0x09, 0x08, //
    0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, //
    0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02,
];

/// A small deterministic generator for line noise (no `rand` needed for this).
#[derive(Debug, Clone)]
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 24) as u8
    }
}

#[derive(Debug)]
pub struct SimBoard {
    spec: BoardSpec,
    mode: Mode,
    /// Piece codes by square, a8 = 0 … h1 = 63 (unrotated; `field` maps to the wire).
    squares: [u8; 64],
    clock: SimClock,
    text: Option<String>,
    beeps: u32,
    icons: Option<ClockIcons>,
    /// ICONS asked its signs to stay through the next SETNRUN.
    icons_stay: bool,
    rx: Vec<u8>,
    out: Vec<u8>,
    acks: VecDeque<(Instant, [u8; 4])>,
    /// Physical changes since the last scan, in the order they happened (field, piece).
    fields: VecDeque<(u8, u8)>,
    /// What the last scan saw, by field: a dump reports it, and a scan reports only the
    /// fields that differ from it (a piece lifted and put back between scans is unseen).
    scanned: [u8; 64],
    /// Scans run on a fixed grid from here (`scan_interval` apart, each moved by jitter).
    scan_epoch: Instant,
    next_scan: Option<Instant>,
    last_bwtime: Option<[u8; 7]>,
    last_bwtime_at: Instant,
    drop_acks: bool,
    stalled_until: Option<Instant>,
    noise: Noise,
    /// Clock commands received, by sub-command id (to check a host's resend policy).
    clock_commands: [u32; 256],
    /// Report a plain move's new square before the old one is cleared (§4.1: "updates
    /// can be out of order").
    out_of_order: bool,
    /// The clock's batteries are low: status bit D2 (§4.2), as the clock shows its BAT
    /// sign. Physical, so a replug keeps it.
    battery_low: bool,
}

impl SimBoard {
    /// A board at power-up: bus mode, start position, clock stopped at 0:00.
    pub fn new(spec: BoardSpec, now: Instant) -> SimBoard {
        let seed = spec.serial.bytes().fold(0x9e37_79b9_7f4a_7c15_u64, |a, b| {
            a.rotate_left(5) ^ u64::from(b)
        });
        let mut scanned = [0u8; 64];
        for (sq, &piece) in START.iter().enumerate() {
            let field = if spec.rotated { 63 - sq } else { sq };
            scanned[field] = piece;
        }
        SimBoard {
            spec,
            mode: Mode::Bus,
            squares: START,
            clock: SimClock::new(now),
            text: None,
            beeps: 0,
            icons: None,
            icons_stay: false,
            rx: Vec::new(),
            out: Vec::new(),
            acks: VecDeque::new(),
            fields: VecDeque::new(),
            scanned,
            scan_epoch: now,
            next_scan: None,
            last_bwtime: None,
            last_bwtime_at: now,
            drop_acks: false,
            stalled_until: None,
            noise: Noise(seed | 1),
            clock_commands: [0; 256],
            out_of_order: false,
            battery_low: false,
        }
    }

    pub fn spec(&self) -> &BoardSpec {
        &self.spec
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The board as power cycling leaves it (replug): bus mode, nothing pending. Pieces
    /// and the clock keep their state: they are physical.
    pub fn power_cycle(&mut self) {
        self.mode = Mode::Bus;
        self.rx.clear();
        self.out.clear();
        self.acks.clear();
        self.fields.clear();
        self.next_scan = None;
        self.rescan();
        self.last_bwtime = None;
        self.stalled_until = None;
    }

    fn stalled(&self, now: Instant) -> bool {
        self.stalled_until.is_some_and(|t| now < t)
    }

    fn field(&self, square: u8) -> u8 {
        if self.spec.rotated {
            63 - square
        } else {
            square
        }
    }

    fn has_clock(&self) -> bool {
        self.spec.clock != ClockKind::None
    }

    fn reports_clock(&self) -> bool {
        matches!(self.mode, Mode::Update | Mode::UpdateNice)
    }

    fn reports_fields(&self) -> bool {
        matches!(self.mode, Mode::UpdateBrd | Mode::Update | Mode::UpdateNice)
    }

    // ---- inputs -------------------------------------------------------------------

    /// Bytes from the host.
    pub fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.stalled(now) {
            return;
        }
        self.rx.extend_from_slice(bytes);
        while let Some(frame) = wire::next_host_frame(&mut self.rx) {
            self.handle_frame(frame, now);
        }
        self.poll(now);
    }

    fn handle_frame(&mut self, frame: HostFrame, now: Instant) {
        // Any single-board command takes the board out of bus mode (§1).
        if self.mode == Mode::Bus && frame != HostFrame::Single(0x4a) {
            self.mode = Mode::Idle;
        }
        match frame {
            HostFrame::Single(cmd) => self.handle_single(cmd, now),
            HostFrame::Clock { cmd, data } => self.handle_clock(cmd, &data, now),
            HostFrame::Other(_) => {}
        }
    }

    fn handle_single(&mut self, cmd: u8, now: Instant) {
        match cmd {
            0x40 => self.mode = Mode::Idle,
            0x41 => {
                let p = self.bwtime_payload(now);
                self.send(wire::MSG_BWTIME, &p);
            }
            // The board as its last scan saw it: a move made just now is not in it yet.
            0x42 => {
                let dump = self.scanned;
                self.send(wire::MSG_BOARD_DUMP, &dump);
            }
            0x43 => self.enter(Mode::Update, now),
            0x44 => self.enter(Mode::UpdateBrd, now),
            0x4b => self.enter(Mode::UpdateNice, now),
            0x45 => {
                let serial = self.serial_bytes();
                self.send(wire::MSG_SERIALNR, &serial);
            }
            0x46 => {
                let n: u32 = self.spec.serial.parse().unwrap_or(0) & 0x3fff;
                self.send(wire::MSG_BUSADRES, &[(n >> 7) as u8, (n & 0x7f) as u8]);
            }
            0x47 => self.send(
                wire::MSG_TRADEMARK,
                b"Digital Game Technology (hallclock sim)",
            ),
            0x49 => self.send(wire::MSG_EE_MOVES, &[0x6b]),
            0x4a => self.mode = Mode::Bus,
            0x4c => self.send(wire::MSG_BATTERY, &[100, 0x7f, 0x7f, 0, 0, 0, 0, 0, 0]),
            0x4d => self.send(wire::MSG_VERSION, &[3, 10]),
            0x55 => {
                let mut long = *b"0000000000";
                for (dst, src) in long[5..].iter_mut().zip(self.serial_bytes()) {
                    *dst = src;
                }
                self.send(wire::MSG_LONG_SERIALNR, &long);
            }
            // Bootloader, draughts, P1.0-only requests: a real classic board stays silent.
            _ => {}
        }
    }

    fn serial_bytes(&self) -> [u8; 5] {
        let mut s = [b'0'; 5];
        for (dst, src) in s.iter_mut().zip(self.spec.serial.bytes()) {
            *dst = src & 0x7f;
        }
        s
    }

    fn enter(&mut self, mode: Mode, now: Instant) {
        self.mode = mode;
        // Entering an update mode sends no BWTIME by itself (§10: send none, hosts send 41).
        self.last_bwtime = Some(self.bwtime_payload(now));
        self.last_bwtime_at = now;
    }

    /// How many clock commands with sub-command id `cmd` the board has received.
    pub fn clock_commands_received(&self, cmd: u8) -> u32 {
        self.clock_commands[cmd as usize]
    }

    fn handle_clock(&mut self, cmd: u8, data: &[u8], now: Instant) {
        self.clock_commands[cmd as usize] += 1;
        if !self.has_clock() {
            return;
        }
        const OK: u8 = 0x10;
        const ERROR: u8 = 0x40;
        let mut ack = [OK, cmd, 0, 0];
        match cmd {
            0x0a => match (self.spec.computer_mode, parse_setnrun(data)) {
                (true, Some((left, right, run, switch))) => {
                    self.clock.set_and_run(left, right, run, switch, now);
                    if !self.icons_stay {
                        self.icons = None;
                    }
                }
                _ => ack[0] = ERROR,
            },
            0x03 => self.text = None,
            0x09 => {
                ack[2] = match self.spec.clock {
                    ClockKind::Xl => 0x1e,
                    _ => 0x20,
                }
            }
            0x0b => self.beeps += 1,
            0x02 if self.spec.clock == ClockKind::Dgt3000 && data.len() >= 5 => {
                // i0 i1 (mode icons, not shown here) i2 i3 (period + flag) sp.
                let (i2, i3, sp) = (data[2], data[3], data[4]);
                self.icons = (sp & 0x01 == 0).then(|| ClockIcons::from_bytes(i2, i3));
                self.icons_stay = sp & 0x40 != 0;
            }
            0x0c if self.spec.clock == ClockKind::Dgt3000 && data.len() >= 8 => {
                self.text = Some(data[..8].iter().map(|&b| char::from(b & 0x7f)).collect());
                if data.get(8).is_some_and(|&b| b != 0) {
                    self.beeps += 1;
                }
            }
            0x01 if data.len() >= 6 => {
                // DISPLAY sends C B A F E D; show it as A..F.
                let order = [2, 1, 0, 5, 4, 3];
                self.text = Some(order.iter().map(|&i| seven_segment_char(data[i])).collect());
                if data.get(7).is_some_and(|&b| b == 0x03) {
                    self.beeps += 1;
                }
            }
            0x02 | 0x08 => {}
            _ => ack[0] = ERROR,
        }
        if self.reports_clock() && !self.drop_acks {
            self.acks.push_back((now + self.spec.ack_delay, ack));
        }
    }

    /// The arbiter's buttons set the clock (a hand-set clock); reported like any change.
    pub fn hand_set_clock(
        &mut self,
        left: Duration,
        right: Duration,
        increment: Duration,
        run: Run,
        now: Instant,
    ) {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self.clock
            .hand_set(ms(left), ms(right), ms(increment), run, now);
        self.poll(now);
    }

    /// The player whose lever is up presses it; whether a clock was running then.
    pub fn press(&mut self, now: Instant) -> bool {
        let running = self.clock.press(now);
        self.poll(now);
        running
    }

    /// A clock button: an unsolicited ACK (ack1 = 88) in the update modes (§6).
    pub fn button(&mut self, button: Button, now: Instant) {
        if self.has_clock() && self.reports_clock() && !self.stalled(now) {
            let (held, code) = button.ack_bytes();
            let p = wire::ack_payload([0x10, 0x88, held, code]);
            self.send(wire::MSG_BWTIME, &p);
        }
    }

    /// Physically plays a move: lift (and capture), place; castling also moves the rook,
    /// en passant lifts the taken pawn. Reported on the next scan (§4.1).
    pub fn play_move(&mut self, mv: SimMove, now: Instant) -> Result<(), MoveError> {
        let (from, to, promo) = (mv.from.index(), mv.to.index(), mv.promotion);
        let piece = self.squares[from as usize];
        if piece == 0 {
            return Err(MoveError::EmptySquare {
                uci: mv.to_string(),
                square: mv.from.to_string(),
            });
        }
        let white = piece <= 0x06;
        let mut changes: Vec<(u8, u8)> = Vec::new();
        if self.squares[to as usize] != 0 {
            changes.push((to, 0));
        }
        changes.push((from, 0));
        let placed = match promo {
            Some(c) => {
                let w = match c {
                    'r' => 0x02,
                    'n' => 0x03,
                    'b' => 0x04,
                    _ => 0x06,
                };
                if white { w } else { w + 6 }
            }
            None => piece,
        };
        changes.push((to, placed));
        if self.out_of_order && changes.len() == 2 {
            changes.swap(0, 1);
        }
        let (ff, tf) = (from % 8, to % 8);
        let is_king = piece == 0x05 || piece == 0x0b;
        let is_pawn = piece == 0x01 || piece == 0x07;
        if is_king && ff.abs_diff(tf) == 2 {
            let row = from - ff;
            let (rook_from, rook_to) = if tf > ff {
                (row + 7, row + 5)
            } else {
                (row, row + 3)
            };
            let rook = self.squares[rook_from as usize];
            changes.push((rook_from, 0));
            changes.push((rook_to, rook));
        } else if is_pawn && ff != tf && self.squares[to as usize] == 0 {
            // En passant: the taken pawn stands beside the mover's start square.
            changes.push((from - ff + tf, 0));
        }
        for &(sq, p) in &changes {
            self.squares[sq as usize] = p;
            let field = self.field(sq);
            self.fields.push_back((field, p));
        }
        self.schedule_scan(now);
        Ok(())
    }

    /// Puts `piece` (a DGT piece code, 0 = empty) on `square` (a8 = 0 … h1 = 63) by
    /// hand: a piece lifted, dropped, or swept off the board.
    pub fn set_square(&mut self, square: u8, piece: u8, now: Instant) {
        let (square, piece) = (square.min(63), piece.min(0x0f));
        self.squares[square as usize] = piece;
        let field = self.field(square);
        self.fields.push_back((field, piece));
        self.schedule_scan(now);
    }

    /// The first scan boundary after `now` that will see the change.
    fn schedule_scan(&mut self, now: Instant) {
        if self.next_scan.is_some() {
            return;
        }
        let interval = self.spec.scan_interval.max(Duration::from_millis(1));
        let since = now.saturating_duration_since(self.scan_epoch);
        let k = since.as_nanos() / interval.as_nanos() + 1;
        let boundary = self.scan_epoch + interval.mul_f64(k as f64);
        let jitter = self.spec.scan_jitter.min(interval / 2);
        let at = if jitter.is_zero() {
            boundary
        } else {
            let span = 2 * jitter.as_micros().max(1) as u64;
            let r = (u64::from(self.noise.next()) << 8 | u64::from(self.noise.next())) % span;
            (boundary - jitter + Duration::from_micros(r)).max(now)
        };
        self.next_scan = Some(at);
    }

    /// A scan: the fields whose piece differs from the last scan, in the order they
    /// changed. With the board not reporting fields the scan still happens (a later dump
    /// shows it), it is just not sent.
    fn scan(&mut self) -> Vec<(u8, u8)> {
        let mut order: Vec<u8> = Vec::new();
        let mut last = [None::<u8>; 64];
        for (field, piece) in self.fields.drain(..) {
            if last[field as usize].is_none() {
                order.push(field);
            }
            last[field as usize] = Some(piece);
        }
        let mut out = Vec::new();
        for field in order {
            if let Some(piece) = last[field as usize]
                && self.scanned[field as usize] != piece
            {
                self.scanned[field as usize] = piece;
                out.push((field, piece));
            }
        }
        out
    }

    /// After a power cycle the board scans afresh: the first dump shows the pieces.
    fn rescan(&mut self) {
        for (sq, &piece) in self.squares.iter().enumerate() {
            let field = self.field(sq as u8) as usize;
            self.scanned[field] = piece;
        }
    }

    /// `count` bytes of line noise, never forming a valid message header: no two
    /// consecutive bytes have MSB 0, so every header fails the length check (§2.2).
    pub fn garbage(&mut self, count: usize) {
        for i in 0..count {
            let b = self.noise.next();
            self.out.push(if i % 2 == 0 { b | 0x80 } else { b });
        }
    }

    pub fn stall(&mut self, duration: Duration, now: Instant) {
        self.stalled_until = Some(now + duration);
        self.acks.clear();
    }

    pub fn set_out_of_order(&mut self, on: bool) {
        self.out_of_order = on;
    }

    /// The clock's batteries run low (on) or are changed (off); the next BWTIME carries
    /// the status bit D2 (UPDATE_NICE sends one at once: the status byte changed).
    pub fn set_battery_low(&mut self, on: bool) {
        self.battery_low = on;
    }

    pub fn set_drop_acks(&mut self, on: bool) {
        self.drop_acks = on;
        if on {
            self.acks.clear();
        }
    }

    // ---- outputs ------------------------------------------------------------------

    fn send(&mut self, id: u8, payload: &[u8]) {
        self.out.extend_from_slice(&wire::message(id, payload));
    }

    /// Takes the bytes the board has to send now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    fn status(&self, now: Instant) -> u8 {
        if !self.has_clock() {
            return 0x20;
        }
        let mut s = 0;
        let running = self.clock.running();
        if running.is_some() {
            s |= 0x01;
        }
        if self.clock.lever_high() == Side::Right {
            s |= 0x02;
        }
        if self.battery_low {
            s |= 0x04;
        }
        let _ = now;
        // D3 = left's turn, D4 = right's turn: as the real captures show (§4.2 CONFLICT).
        s |= match self.clock.turn() {
            Side::Left => 0x08,
            Side::Right => 0x10,
        };
        s
    }

    fn bwtime_payload(&self, now: Instant) -> [u8; 7] {
        if !self.has_clock() {
            return [0, 0, 0, 0, 0, 0, 0x20];
        }
        let side = |s: Side| {
            let t = self.clock.display(s, now);
            let flag = if self.clock.flagged(s) { 0x10 } else { 0 };
            [t.hours | flag, wire::bcd(t.minutes), wire::bcd(t.seconds)]
        };
        let r = side(Side::Right);
        let l = side(Side::Left);
        [r[0], r[1], r[2], l[0], l[1], l[2], self.status(now)]
    }

    /// Advances to `now`: due ACKs, the scan's field updates, a BWTIME when the display or
    /// status changed (UPDATE_NICE) or at least every second (UPDATE).
    pub fn poll(&mut self, now: Instant) {
        self.clock.poll(now);
        let stalled = self.stalled(now);
        if !stalled {
            self.stalled_until = None;
        }
        if self.next_scan.is_some_and(|t| t <= now) {
            self.next_scan = None;
            let fields = self.scan();
            if !stalled && self.reports_fields() {
                for (field, piece) in fields {
                    self.send(wire::MSG_FIELD_UPDATE, &[field, piece]);
                }
            }
        }
        // The clock answers a command before it reports what the command changed: a
        // host that takes the next BWTIME as the ACK (as third-party DGT hosts do) must
        // not see the new times first and log "ACK out of sync".
        while self.acks.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((_, ack)) = self.acks.pop_front()
                && !stalled
            {
                let p = wire::ack_payload(ack);
                self.send(wire::MSG_BWTIME, &p);
            }
        }
        if self.has_clock() && self.reports_clock() && !stalled {
            let p = self.bwtime_payload(now);
            let changed = self.last_bwtime != Some(p);
            let second_due = self.mode == Mode::Update
                && now.saturating_duration_since(self.last_bwtime_at) >= Duration::from_secs(1);
            // A lever press is reported at once, ACK pending or not (status bit D1).
            let lever = self
                .last_bwtime
                .is_none_or(|last| (last[6] ^ p[6]) & 0x02 != 0);
            let held = !self.acks.is_empty() && !lever;
            if (changed || second_due) && !held {
                self.send(wire::MSG_BWTIME, &p);
                self.last_bwtime = Some(p);
                self.last_bwtime_at = now;
            }
        }
    }

    /// When [`SimBoard::poll`] must run next.
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n: Instant| n.min(t)));
            }
        };
        consider(self.next_scan);
        consider(self.acks.front().map(|(t, _)| *t));
        consider(self.stalled_until);
        if self.has_clock() && self.reports_clock() {
            consider(self.clock.next_change(now));
            if self.mode == Mode::Update {
                consider(Some(self.last_bwtime_at + Duration::from_secs(1)));
            }
        }
        next
    }

    pub fn view(&self, now: Instant) -> ClockView {
        ClockView {
            left: self.clock.display(Side::Left, now),
            right: self.clock.display(Side::Right, now),
            running: self.clock.running(),
            lever_high: self.clock.lever_high(),
            flagged_left: self.clock.flagged(Side::Left),
            flagged_right: self.clock.flagged(Side::Right),
            text: self.text.clone(),
            beeps: self.beeps,
            connected: self.has_clock(),
            icons: self.icons,
        }
    }

    /// The position as piece codes in a8 … h1 order (unrotated).
    pub fn squares(&self) -> [u8; 64] {
        self.squares
    }
}

/// SETNRUN data `lh lm ls rh rm rs flags`, binary (§5.1). Hours bit 4 (count up) is not
/// simulated; out-of-range minutes/seconds are refused.
fn parse_setnrun(data: &[u8]) -> Option<(Hms, Hms, Run, bool)> {
    let [lh, lm, ls, rh, rm, rs, flags, ..] = *data else {
        return None;
    };
    let hms = |h: u8, m: u8, s: u8| {
        (m < 60 && s < 60).then_some(Hms {
            hours: (h & 0x0f).min(9),
            minutes: m,
            seconds: s,
        })
    };
    let run = if flags & 0x04 != 0 {
        Run::Paused
    } else if flags & 0x01 != 0 {
        Run::Left
    } else if flags & 0x02 != 0 {
        Run::Right
    } else {
        Run::Paused
    };
    Some((hms(lh, lm, ls)?, hms(rh, rm, rs)?, run, flags & 0x08 != 0))
}

/// PC's ASCII→7-segment table (§5.1), read backwards.
fn seven_segment_char(seg: u8) -> char {
    const TABLE: &[(u8, char)] = &[
        (0x3f, '0'),
        (0x06, '1'),
        (0x5b, '2'),
        (0x4f, '3'),
        (0x66, '4'),
        (0x6d, '5'),
        (0x7d, '6'),
        (0x07, '7'),
        (0x7f, '8'),
        (0x6f, '9'),
        (0x5f, 'a'),
        (0x7c, 'b'),
        (0x58, 'c'),
        (0x5e, 'd'),
        (0x7b, 'e'),
        (0x71, 'f'),
        (0x74, 'h'),
        (0x38, 'l'),
        (0x54, 'n'),
        (0x5c, 'o'),
        (0x73, 'p'),
        (0x50, 'r'),
        (0x78, 't'),
        (0x3e, 'u'),
        (0x00, ' '),
        (0x40, '-'),
    ];
    TABLE
        .iter()
        .find(|(s, _)| *s == seg & 0x7f)
        .map_or('?', |(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uci(s: &str) -> SimMove {
        SimMove::parse(s).unwrap()
    }

    fn spec() -> BoardSpec {
        BoardSpec {
            serial: "10001".into(),
            clock: ClockKind::Dgt3000,
            ack_delay: Duration::from_millis(100),
            scan_interval: Duration::from_millis(200),
            scan_jitter: Duration::ZERO,
            computer_mode: true,
            rotated: false,
        }
    }

    #[test]
    fn serial_and_version_replies() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x40, 0x45, 0x4d], t0);
        assert_eq!(
            b.take_output(),
            [0x91, 0, 8, b'1', b'0', b'0', b'0', b'1', 0x93, 0, 5, 3, 10]
        );
    }

    #[test]
    fn setnrun_is_acknowledged_before_the_status_frame_it_causes() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x4b], t0);
        b.handle_bytes(&[0x2b, 0x0a, 0x03, 0x0a, 0, 3, 2, 0, 3, 2, 0x09, 0x00], t0);
        // Nothing before the ACK (a host that takes the next frame as the ACK is right).
        assert!(b.take_output().is_empty());
        assert_eq!(b.next_deadline(t0), Some(t0 + Duration::from_millis(100)));
        b.poll(t0 + Duration::from_millis(100));
        // The ACK, then the status: left running, left's turn, left lever up.
        assert_eq!(
            b.take_output(),
            [
                0x8d, 0, 10, 0x0a, 0x10, 0x0a, 0x0a, 0, 0, 0, //
                0x8d, 0, 10, 0, 3, 2, 0, 3, 2, 0x09
            ]
        );
        b.poll(t0 + Duration::from_millis(1000));
        assert_eq!(b.take_output(), [0x8d, 0, 10, 0, 3, 2, 0, 3, 1, 0x09]);
        b.press(t0 + Duration::from_millis(1500));
        assert_eq!(b.take_output(), [0x8d, 0, 10, 0, 3, 2, 0, 3, 1, 0x13]);
    }

    #[test]
    fn a_low_battery_sets_status_bit_d2_at_once_and_a_change_of_batteries_clears_it() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x4b], t0);
        b.poll(t0);
        let before = b.take_output();
        let status = |out: &[u8]| out.last().copied().unwrap_or(0xff);
        b.set_battery_low(true);
        b.poll(t0);
        let low = b.take_output();
        assert_eq!(
            low.first(),
            Some(&0x8d),
            "a BWTIME at once (UPDATE_NICE): {low:x?}"
        );
        assert_eq!(status(&low) & 0x04, 0x04, "{low:x?}");
        b.set_battery_low(false);
        b.poll(t0);
        let fine = b.take_output();
        assert_eq!(status(&fine) & 0x04, 0, "{fine:x?}");
        if !before.is_empty() {
            assert_eq!(status(&before) & 0x04, 0);
        }
    }

    #[test]
    fn a_lever_press_is_reported_at_once_even_with_an_ack_pending() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x4b], t0);
        b.handle_bytes(&[0x2b, 0x0a, 0x03, 0x0a, 0, 3, 2, 0, 3, 2, 0x09, 0x00], t0);
        b.poll(t0 + Duration::from_millis(100));
        b.take_output();
        b.handle_bytes(
            &[0x2b, 0x03, 0x03, 0x03, 0x00],
            t0 + Duration::from_millis(150),
        );
        b.press(t0 + Duration::from_millis(160));
        let out = b.take_output();
        assert_eq!(out.len(), 10, "{out:x?}");
        assert_eq!(out[9] & 0x02, 0x02, "right lever up: {out:x?}");
    }

    #[test]
    fn scans_run_on_a_grid_so_a_press_can_overtake_the_move() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x4b], t0);
        // A move 150 ms into a scan is reported at the 200 ms boundary, not 200 ms later.
        let t = t0 + Duration::from_millis(150);
        b.play_move(uci("e2e4"), t).unwrap();
        assert_eq!(b.next_deadline(t), Some(t0 + Duration::from_millis(200)));
        // Before that the board's dump still shows the last scan: the start position.
        b.handle_bytes(&[0x42], t);
        let dump = b.take_output();
        assert_eq!((dump[3 + 52], dump[3 + 36]), (0x01, 0x00));
        b.poll(t0 + Duration::from_millis(200));
        assert_eq!(b.take_output(), [0x8e, 0, 5, 52, 0, 0x8e, 0, 5, 36, 1]);
        // Lifted and put back between two scans: no scan sees it.
        b.set_square(62, 0, t0 + Duration::from_millis(210));
        b.set_square(62, 0x03, t0 + Duration::from_millis(250));
        b.poll(t0 + Duration::from_millis(400));
        assert!(b.take_output().is_empty());
    }

    #[test]
    fn scan_jitter_stays_within_its_bound() {
        let t0 = Instant::now();
        let mut sp = spec();
        sp.scan_jitter = Duration::from_millis(30);
        let mut b = SimBoard::new(sp, t0);
        b.handle_bytes(&[0x4b], t0);
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..40u32 {
            let t = t0 + Duration::from_millis(200) * k + Duration::from_millis(100);
            let (sq, piece) = if k % 2 == 0 { (62, 0) } else { (62, 0x03) };
            b.set_square(sq, piece, t);
            let at = b.next_deadline(t).unwrap();
            let boundary = t0 + Duration::from_millis(200) * (k + 1);
            assert!(
                at + Duration::from_millis(30) >= boundary
                    && at <= boundary + Duration::from_millis(30)
            );
            seen.insert(at.duration_since(t).as_millis());
            b.poll(at);
            b.take_output();
        }
        assert!(seen.len() > 5, "the jitter varies: {seen:?}");
    }

    #[test]
    fn a_move_is_reported_on_the_next_scan() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x44], t0);
        b.play_move(uci("e2e4"), t0).unwrap();
        assert!(b.take_output().is_empty());
        b.poll(t0 + Duration::from_millis(200));
        assert_eq!(b.take_output(), [0x8e, 0, 5, 52, 0, 0x8e, 0, 5, 36, 1]);
        assert_eq!(
            b.play_move(uci("e2e4"), t0),
            Err(MoveError::EmptySquare {
                uci: "e2e4".into(),
                square: "e2".into()
            })
        );
    }

    #[test]
    fn no_acks_outside_the_update_modes() {
        let t0 = Instant::now();
        let mut b = SimBoard::new(spec(), t0);
        b.handle_bytes(&[0x40, 0x2b, 0x03, 0x03, 0x09, 0x00], t0);
        b.poll(t0 + Duration::from_secs(5));
        assert!(b.take_output().is_empty());
    }
}
