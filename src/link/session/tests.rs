//! The policies with time as a value: no sleeping, exact deadlines.
use super::*;
use crate::dgt::{BoardDump, ClockSide, ClockTime, Piece};

fn cfg() -> LinkConfig {
    LinkConfig::new("/dev/test-board")
}

fn ack(id: u8) -> DgtMessage {
    DgtMessage::ClockAck(ClockAck {
        ack0: 0x10,
        ack1: id,
        ack2: 0,
        ack3: 0,
    })
}

fn drain(s: &mut Session) -> Vec<DgtCommand> {
    std::iter::from_fn(|| s.poll_transmit()).collect()
}

fn events(s: &mut Session) -> Vec<LinkEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

/// A session taken through the handshake with a DGT3000 at `t0`.
fn online(t0: Instant) -> Session {
    let mut s = Session::new(cfg(), BoardState::new(), t0);
    s.handle_timeout(t0 + cfg().settle);
    assert_eq!(
        drain(&mut s),
        [
            DgtCommand::Reset,
            DgtCommand::ReturnSerialNumber,
            DgtCommand::SendVersion
        ]
    );
    s.handle_message(
        DgtMessage::SerialNumber {
            serial: "01025".into(),
        },
        t0,
    );
    s.handle_message(
        DgtMessage::Version {
            major: 3,
            minor: 10,
        },
        t0,
    );
    assert_eq!(
        drain(&mut s),
        [
            DgtCommand::SendBoard,
            DgtCommand::SendUpdateNice,
            DgtCommand::clock(ClockCommand::Version)
        ]
    );
    s.handle_message(
        DgtMessage::ClockAck(ClockAck {
            ack0: 0x10,
            ack1: 0x09,
            ack2: 0x20,
            ack3: 0,
        }),
        t0,
    );
    assert_eq!(drain(&mut s), [DgtCommand::SendClock]);
    s
}

fn setnrun() -> LinkCommand {
    LinkCommand::SetAndRun {
        left: Duration::from_millis(5_400_000),
        right: Duration::from_millis(5_399_001),
        run: RunSide::Left,
    }
}

/// The one clock command sent since the last drain, which must be a SETNRUN (other
/// commands, such as probes, are let through).
fn sent_setnrun(s: &mut Session) -> (SetTime, SetTime, RunFlags) {
    let sent: Vec<_> = drain(s)
        .into_iter()
        .filter(|c| matches!(c, DgtCommand::Clock { .. }))
        .collect();
    match &sent[..] {
        [
            DgtCommand::Clock {
                command: ClockCommand::SetAndRun { left, right, flags },
            },
        ] => (*left, *right, *flags),
        _ => panic!("one SETNRUN expected: {sent:?}"),
    }
}

#[test]
fn the_handshake_identifies_board_and_clock() {
    let t0 = Instant::now();
    let mut s = online(t0);
    let ev = events(&mut s);
    let [LinkEvent::Online(id)] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(id.serial, "01025");
    assert_eq!(id.version, (3, 10));
    assert_eq!(
        id.clock,
        Some(ClockInfo {
            model: ClockModel::Dgt3000,
            version: (2, 0)
        })
    );
}

#[test]
fn setnrun_waits_for_its_ack_then_end_follows() {
    let t0 = Instant::now();
    let mut s = online(t0);
    s.handle_command(setnrun(), t0);
    s.handle_command(LinkCommand::ShowTimes, t0);
    let sent = drain(&mut s);
    let [
        DgtCommand::Clock {
            command: ClockCommand::SetAndRun { left, right, flags },
        },
    ] = &sent[..]
    else {
        panic!("{sent:?}")
    };
    assert_eq!((left.hours, left.minutes, left.seconds), (1, 30, 0));
    // 1:29:59.001 left shows as 1:30:00 (rounded up, as the clock displays).
    assert_eq!((right.hours, right.minutes, right.seconds), (1, 30, 0));
    assert_eq!(flags.to_byte(), 0x09, "left runs, switch at lever");
    // One command in flight: nothing more until the ACK.
    assert!(drain(&mut s).is_empty());
    s.handle_message(ack(0x0a), t0);
    assert_eq!(drain(&mut s), [DgtCommand::clock(ClockCommand::End)]);
    s.handle_message(ack(0x03), t0);
    assert_eq!(drain(&mut s), [DgtCommand::clock(ClockCommand::End)]);
}

#[test]
fn a_missing_ack_is_resent_three_times_then_reported() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    s.handle_command(setnrun(), t0);
    let first = drain(&mut s);
    let timeout = cfg().ack_timeout;
    let mut now = t0;
    let alive = || DgtMessage::SerialNumber {
        serial: "01025".into(),
    };
    let [DgtCommand::Clock { command: first }] = &first[..] else {
        panic!("{first:?}")
    };
    for k in 1..=3 {
        assert!(s.next_deadline() <= now + timeout);
        // Not a millisecond early.
        s.handle_timeout(now + timeout - Duration::from_millis(1));
        assert!(
            !drain(&mut s)
                .iter()
                .any(|c| matches!(c, DgtCommand::Clock { .. })),
            "resent before its ack_timeout"
        );
        now += timeout;
        // The board answers its probes; only the clock is mute.
        s.handle_message(alive(), now);
        s.handle_timeout(now);
        let (left, right, flags) = sent_setnrun(&mut s);
        // The same command, with the running side's time as of this send: the clock is
        // not set back by the wait, whether the first one was lost or only its ACK.
        let ran = (timeout * k).as_secs() as u32;
        assert_eq!(left.total_seconds(), 5400 - ran, "resend {k}");
        let ClockCommand::SetAndRun {
            right: first_right,
            flags: first_flags,
            ..
        } = first
        else {
            panic!("{first:?}")
        };
        assert_eq!((&right, &flags), (first_right, first_flags), "resend {k}");
    }
    now += timeout;
    s.handle_message(alive(), now);
    s.handle_timeout(now);
    let failed: Vec<_> = events(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            LinkEvent::CommandFailed(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        [ClockCommandError::NoAck {
            path: "/dev/test-board".into(),
            command: "set-and-run",
            attempts: 4
        }]
    );
    // END still follows the SETNRUN whose ACK may merely have been lost.
    let next: Vec<_> = drain(&mut s)
        .into_iter()
        .filter(|c| matches!(c, DgtCommand::Clock { .. }))
        .collect();
    assert_eq!(next, [DgtCommand::clock(ClockCommand::End)]);
}

/// A SETNRUN that waited behind another command carries the running side's time as of
/// its own send, not as of when it was handed over.
#[test]
fn a_setnrun_that_waited_its_turn_is_sent_with_the_time_run_meanwhile() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    s.handle_command(
        LinkCommand::Text {
            text: "ROUND 1".into(),
            beep: false,
        },
        t0,
    );
    s.handle_command(setnrun(), t0);
    assert_eq!(drain(&mut s).len(), 1, "the text alone, in flight");
    // The text's ACK comes 1.5 s later: the SETNRUN goes then.
    s.handle_message(ack(0x0c), t0 + Duration::from_millis(1500));
    let (left, right, _) = sent_setnrun(&mut s);
    // Left ran 1.5 s: 1:29:58.5 shows as 1:29:59; right, stopped, keeps its time.
    assert_eq!(left.total_seconds(), 5399);
    assert_eq!(right.total_seconds(), 5400);
    // A paused clock's times do not run.
    s.handle_message(ack(0x0a), t0 + Duration::from_millis(1600));
    s.handle_message(ack(0x03), t0 + Duration::from_millis(1600));
    drain(&mut s);
    s.handle_command(
        LinkCommand::SetAndRun {
            left: Duration::from_secs(60),
            right: Duration::from_secs(30),
            run: RunSide::Paused,
        },
        t0 + Duration::from_millis(1600),
    );
    drain(&mut s);
    s.handle_timeout(t0 + Duration::from_millis(1600) + cfg().ack_timeout);
    let (left, right, _) = sent_setnrun(&mut s);
    assert_eq!((left.total_seconds(), right.total_seconds()), (60, 30));
}

#[test]
fn an_error_ack_to_setnrun_means_not_in_computer_mode() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    s.handle_command(setnrun(), t0);
    drain(&mut s);
    s.handle_message(
        DgtMessage::ClockAck(ClockAck {
            ack0: 0x40,
            ack1: 0x0a,
            ack2: 0,
            ack3: 0,
        }),
        t0,
    );
    let ev = events(&mut s);
    assert!(
        matches!(
            &ev[..],
            [LinkEvent::CommandFailed(
                ClockCommandError::NotInComputerMode { .. }
            )]
        ),
        "{ev:?}"
    );
}

#[test]
fn a_lever_change_is_read_from_status_bit_d1() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    let reading = |status: u8| {
        DgtMessage::ClockTime(ClockTime {
            status: ClockStatus::from_byte(status),
            ..ClockTime::default()
        })
    };
    s.handle_message(reading(0x09), t0);
    s.handle_message(reading(0x09), t0);
    // The first reading also reports the battery (fine here); no lever change yet.
    assert!(
        events(&mut s)
            .iter()
            .all(|e| matches!(e, LinkEvent::Clock(_) | LinkEvent::ClockBatteryLow(false)))
    );
    s.handle_message(reading(0x13), t0);
    let ev = events(&mut s);
    assert!(
        matches!(
            &ev[..],
            [
                LinkEvent::Lever {
                    high: ClockSide::Right,
                    ..
                },
                LinkEvent::Clock(_)
            ]
        ),
        "{ev:?}"
    );
}

fn reading(status: u8) -> DgtMessage {
    DgtMessage::ClockTime(ClockTime {
        status: ClockStatus::from_byte(status),
        ..ClockTime::default()
    })
}

fn battery_reports(events: &[LinkEvent]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|e| match e {
            LinkEvent::ClockBatteryLow(low) => Some(*low),
            _ => None,
        })
        .collect()
}

#[test]
fn a_clock_already_low_at_its_first_reading_is_reported_then_every_change() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    // FIDE C.02.03 3.1.2: a warning at set-up. The first reading is low (D2 = 0x04).
    s.handle_message(reading(0x0d), t0);
    let ev = events(&mut s);
    assert!(
        matches!(
            &ev[..],
            [LinkEvent::ClockBatteryLow(true), LinkEvent::Clock(_)]
        ),
        "{ev:?}"
    );
    // Unchanged: nothing more.
    s.handle_message(reading(0x0d), t0);
    s.handle_message(reading(0x0c), t0);
    assert_eq!(battery_reports(&events(&mut s)), [] as [bool; 0]);
    // Batteries changed, then low again.
    s.handle_message(reading(0x09), t0);
    s.handle_message(reading(0x09), t0);
    s.handle_message(reading(0x0d), t0);
    assert_eq!(battery_reports(&events(&mut s)), [false, true]);
}

#[test]
fn a_clock_fine_at_its_first_reading_is_reported_fine_and_each_session_reports_again() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    s.handle_message(reading(0x09), t0);
    assert_eq!(battery_reports(&events(&mut s)), [false]);
    // A new session (the board came back, or the daemon restarted) knows nothing: its
    // first reading reports again, so a stale alert is settled either way.
    let mut again = online(t0);
    events(&mut again);
    again.handle_message(reading(0x0d), t0);
    assert_eq!(battery_reports(&events(&mut again)), [true]);
}

#[test]
fn a_reading_without_a_clock_says_nothing_about_its_battery() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    // D5: no clock connected; the other bits mean nothing (§4.2).
    s.handle_message(reading(0x24), t0);
    assert_eq!(battery_reports(&events(&mut s)), [] as [bool; 0]);
    // The clock is plugged in, low: its first real reading is the report.
    s.handle_message(reading(0x0d), t0);
    assert_eq!(battery_reports(&events(&mut s)), [true]);
}

#[test]
fn silence_beyond_the_timeout_ends_the_session_and_probes_keep_it_alive() {
    let t0 = Instant::now();
    let mut s = online(t0);
    let probe = cfg().probe_interval;
    s.handle_timeout(t0 + probe);
    assert_eq!(drain(&mut s), [DgtCommand::ReturnSerialNumber]);
    s.handle_message(
        DgtMessage::SerialNumber {
            serial: "01025".into(),
        },
        t0 + probe,
    );
    let silent_until = t0 + probe + cfg().silence_timeout;
    s.handle_timeout(silent_until - Duration::from_millis(1));
    assert!(s.end().is_none());
    s.handle_timeout(silent_until);
    assert!(matches!(
        s.end(),
        Some(SessionEnd::Offline(Offline::Silent { .. }))
    ));
}

#[test]
fn a_board_that_speaks_is_not_probed_only_a_silent_one_is() {
    // A running clock sends its time every second (UPDATE_NICE): that is proof of life,
    // and a probe on top of it doubled the traffic of every port (5000 boards: 5000
    // writes and 5000 replies a second for nothing).
    let t0 = Instant::now();
    let mut s = online(t0);
    drain(&mut s);
    let probe = cfg().probe_interval;
    let tick = Duration::from_millis(1000);
    assert!(tick < probe, "a clock's second must come before the probe");
    let mut now = t0;
    for _ in 0..10 {
        now += tick;
        s.handle_message(reading(0x09), now);
        s.handle_timeout(now);
        assert_eq!(drain(&mut s), [], "probed a board heard {tick:?} ago");
        assert!(s.end().is_none());
    }
    // The clock stops: after `probe_interval` of silence the board is asked who it is.
    s.handle_timeout(now + probe - Duration::from_millis(1));
    assert_eq!(drain(&mut s), []);
    assert_eq!(s.next_deadline(), now + probe);
    s.handle_timeout(now + probe);
    assert_eq!(drain(&mut s), [DgtCommand::ReturnSerialNumber]);
    // Still silent: offline at the timeout, which leaves the probe time to be answered.
    assert!(probe * 2 <= cfg().silence_timeout);
    s.handle_timeout(now + cfg().silence_timeout - Duration::from_millis(1));
    assert!(s.end().is_none());
    s.handle_timeout(now + cfg().silence_timeout);
    assert!(matches!(
        s.end(),
        Some(SessionEnd::Offline(Offline::Silent { .. }))
    ));
}

#[test]
fn no_answer_to_the_identification_means_not_a_dgt_board() {
    let t0 = Instant::now();
    let c = cfg();
    let mut s = Session::new(c.clone(), BoardState::new(), t0);
    let mut now = t0 + c.settle;
    s.handle_timeout(now);
    for _ in 0..c.handshake_attempts {
        assert!(s.end().is_none());
        now += c.handshake_timeout;
        s.handle_timeout(now);
    }
    let Some(SessionEnd::Failed(e)) = s.end() else {
        panic!("expected a failure")
    };
    assert!(
        e.to_string()
            .starts_with("/dev/test-board: not a DGT board"),
        "{e}"
    );
}

#[test]
fn board_updates_become_moves() {
    let t0 = Instant::now();
    let mut s = online(t0);
    events(&mut s);
    let mut board = [Piece::Empty; 64];
    let start = "rnbqkbnrpppppppp                                PPPPPPPPRNBQKBNR";
    for (dst, c) in board.iter_mut().zip(start.chars()) {
        *dst = Piece::from_name(&c.to_string()).unwrap_or(Piece::Empty);
    }
    s.handle_message(DgtMessage::BoardDump(BoardDump { board }), t0);
    let update = |field: u8, piece: Piece| {
        DgtMessage::FieldUpdate(crate::dgt::FieldUpdate {
            field: crate::dgt::Field::new(field).unwrap(),
            piece,
        })
    };
    s.handle_message(update(52, Piece::Empty), t0);
    s.handle_message(update(36, Piece::from_name("P").unwrap()), t0);
    let moves: Vec<String> = events(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            LinkEvent::Game(crate::dgt::BoardEvent::Move { uci, .. }) => Some(uci),
            _ => None,
        })
        .collect();
    assert_eq!(moves, ["e2e4"]);
}

fn start_board() -> [Piece; 64] {
    let mut board = [Piece::Empty; 64];
    let start = "rnbqkbnrpppppppp                                PPPPPPPPRNBQKBNR";
    for (dst, c) in board.iter_mut().zip(start.chars()) {
        *dst = Piece::from_name(&c.to_string()).unwrap_or(Piece::Empty);
    }
    board
}

fn update(field: u8, piece: &str) -> DgtMessage {
    DgtMessage::FieldUpdate(crate::dgt::FieldUpdate {
        field: crate::dgt::Field::new(field).unwrap(),
        piece: Piece::from_name(piece).unwrap_or(Piece::Empty),
    })
}

fn irregular(events: &[LinkEvent]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, LinkEvent::Game(crate::dgt::BoardEvent::Irregular { .. })))
}

#[test]
fn a_piece_held_in_the_air_is_waited_for_before_a_dump_and_a_verdict() {
    let t0 = Instant::now();
    let c = cfg();
    let mut s = online(t0);
    s.handle_message(
        DgtMessage::BoardDump(BoardDump {
            board: start_board(),
        }),
        t0,
    );
    drain(&mut s);
    events(&mut s);
    // g1 lifted and held: nothing after the usual quiet spell.
    s.handle_message(update(62, "."), t0);
    let t = t0 + c.board_settle;
    s.handle_timeout(t);
    assert!(!irregular(&events(&mut s)));
    assert!(!drain(&mut s).contains(&DgtCommand::SendBoard));
    // Still in the air after `in_air`: a dump is asked for; it shows the same board
    // and that is the verdict (info: only missing).
    s.handle_timeout(t0 + c.in_air);
    assert!(drain(&mut s).contains(&DgtCommand::SendBoard));
    let mut held = start_board();
    held[62] = Piece::Empty;
    s.handle_message(
        DgtMessage::BoardDump(BoardDump { board: held }),
        t0 + c.in_air,
    );
    assert!(irregular(&events(&mut s)));
}

#[test]
fn a_missed_update_is_repaired_by_the_dump_asked_for_before_any_verdict() {
    let t0 = Instant::now();
    let c = cfg();
    let mut s = online(t0);
    s.handle_message(
        DgtMessage::BoardDump(BoardDump {
            board: start_board(),
        }),
        t0,
    );
    drain(&mut s);
    events(&mut s);
    // e2e4's "e4 P" is lost; black's e7e5 arrives.
    s.handle_message(update(52, "."), t0);
    s.handle_message(update(12, "."), t0);
    s.handle_message(update(28, "p"), t0);
    s.handle_timeout(t0 + c.board_settle);
    assert!(!irregular(&events(&mut s)), "no verdict before the dump");
    assert!(drain(&mut s).contains(&DgtCommand::SendBoard));
    let mut real = start_board();
    real[52] = Piece::Empty;
    real[36] = Piece::from_name("P").unwrap();
    real[12] = Piece::Empty;
    real[28] = Piece::from_name("p").unwrap();
    s.handle_message(
        DgtMessage::BoardDump(BoardDump { board: real }),
        t0 + c.board_settle,
    );
    let moves: Vec<String> = events(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            LinkEvent::Game(crate::dgt::BoardEvent::Move { uci, .. }) => Some(uci),
            _ => None,
        })
        .collect();
    assert_eq!(moves, ["e2e4", "e7e5"]);
}

#[test]
fn the_settle_is_owed_once_from_when_the_port_appeared() {
    let settle = Duration::from_millis(300);
    // Unknown age: the whole settle.
    assert_eq!(settle_left(settle, None), settle);
    // Just appeared: the whole settle; 100 ms ago: the rest of it.
    assert_eq!(settle_left(settle, Some(Duration::ZERO)), settle);
    assert_eq!(
        settle_left(settle, Some(Duration::from_millis(100))),
        Duration::from_millis(200)
    );
    // There since before: none.
    assert_eq!(settle_left(settle, Some(settle)), Duration::ZERO);
    assert_eq!(
        settle_left(settle, Some(Duration::from_secs(3600))),
        Duration::ZERO
    );
    // A session with no settle left starts with the identification.
    let t0 = Instant::now();
    let mut c = cfg();
    c.settle = settle_left(settle, Some(Duration::from_secs(3600)));
    let mut s = Session::new(c, BoardState::new(), t0);
    assert_eq!(s.next_deadline(), t0);
    s.handle_timeout(t0);
    assert_eq!(
        drain(&mut s),
        [
            DgtCommand::Reset,
            DgtCommand::ReturnSerialNumber,
            DgtCommand::SendVersion
        ]
    );
}

#[test]
fn a_short_liveness_timeout_brings_the_probe_forward() {
    // `link.liveness_timeout_ms = 1500`: a probe after 1.5 s of silence would come with
    // the verdict, and every quiet board would flap offline.
    let t0 = Instant::now();
    let mut c = cfg();
    c.silence_timeout = Duration::from_millis(1500);
    let mut s = Session::new(c.clone(), BoardState::new(), t0);
    s.handle_timeout(t0 + c.settle);
    drain(&mut s);
    let t = t0 + c.settle;
    s.handle_message(
        DgtMessage::SerialNumber {
            serial: "01025".into(),
        },
        t,
    );
    s.handle_message(
        DgtMessage::Version {
            major: 3,
            minor: 10,
        },
        t,
    );
    s.handle_message(ack(0x09), t);
    drain(&mut s);
    assert!(s.is_online());
    let heard = t;
    s.handle_timeout(heard + Duration::from_millis(749));
    assert_eq!(drain(&mut s), []);
    s.handle_timeout(heard + Duration::from_millis(750));
    assert_eq!(drain(&mut s), [DgtCommand::ReturnSerialNumber]);
    s.handle_message(
        DgtMessage::SerialNumber {
            serial: "01025".into(),
        },
        heard + Duration::from_millis(760),
    );
    s.handle_timeout(heard + Duration::from_millis(1500));
    assert!(
        s.end().is_none(),
        "a board that answered its probe is online"
    );
}
