//! The command reader's tests (kept beside it, out of its file).

use super::*;

fn board(json: &str) -> Result<Command<BoardAction>, BadCommand> {
    parse(json.as_bytes())
}

#[test]
fn board_commands_parse() {
    let c = board(r#"{"transaction":"t1","arbiter":"IA","action":"add_time","side":"black","delta_ms":120000,"reason":"7.5.5"}"#)
        .unwrap();
    assert_eq!(
        c.action,
        BoardAction::AddTime {
            side: Color::Black,
            delta_ms: Millis(120_000)
        }
    );
    assert_eq!((c.transaction.as_str(), c.reason.as_str()), ("t1", "7.5.5"));
}

#[test]
fn null_counts_as_absent_for_every_field() {
    let c = board(r#"{"transaction":"t1","arbiter":"IA","action":"pause","reason":null}"#).unwrap();
    assert_eq!((c.action, c.reason.as_str()), (BoardAction::Pause {}, ""));
    let c = board(r#"{"transaction":"t1","arbiter":"IA","action":"set_session_end","end":null}"#)
        .unwrap();
    assert_eq!(c.action, BoardAction::SetSessionEnd { end: None });
    let c = board(
        r#"{"transaction":"t1","arbiter":"IA","action":"adjourn","resumption":null,"allow_past_start":null}"#,
    )
    .unwrap();
    assert_eq!(
        c.action,
        BoardAction::Adjourn {
            resumption: None,
            allow_past_start: false
        }
    );
    // A required field sent as null is missing, and said so.
    let e = board(r#"{"transaction":"t1","arbiter":"IA","action":"seal","mv":null}"#).unwrap_err();
    assert!(e.reason.contains("missing field `mv`"), "{}", e.reason);
}

#[test]
fn bad_commands_say_what_is_wrong() {
    let e = board(r#"{"transaction":"t1","arbiter":"IA","action":"add_tme"}"#).unwrap_err();
    assert_eq!(e.transaction, "t1");
    assert!(
        e.reason.starts_with("unknown variant `add_tme`"),
        "{}",
        e.reason
    );
    let e = board(
        r#"{"transaction":"t1","arbiter":"IA","action":"set_time","side":"white","remaining":5}"#,
    )
    .unwrap_err();
    assert!(
        e.reason.contains("unknown field `remaining`"),
        "{}",
        e.reason
    );
    let e = board(r#"{"arbiter":"IA","action":"pause"}"#).unwrap_err();
    assert!(e.reason.starts_with("missing \"transaction\""));
    let e = board(r#"{"transaction":"t","action":"pause"}"#).unwrap_err();
    assert!(e.reason.starts_with("missing \"arbiter\""));
    let e = board("{not json").unwrap_err();
    assert!(
        e.reason
            .starts_with("not JSON: key must be a string at line 1 column 2")
    );
    let e = board(
        r#"{"transaction":"t","arbiter":"a","action":"set_time","side":"green","remaining_ms":1}"#,
    )
    .unwrap_err();
    assert!(e.reason.contains("unknown variant `green`"), "{}", e.reason);
}

#[test]
fn start_round_parses_instants_and_time_controls() {
    let c: Command<HallAction> = parse(
        br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":"2026-11-30T14:00:00Z","time_control":"40/5400+30:1800+30","pairings":[{"board":"board-001","white":"A","black":"B"}]}"#,
    )
    .unwrap();
    let HallAction::StartRound {
        start,
        time_control,
        ..
    } = c.action
    else {
        panic!()
    };
    assert_eq!(start.0, Millis(1_796_047_200_000));
    assert_eq!(time_control.unwrap().to_string(), "40/5400+30:1800+30");
    let e = parse::<HallAction>(
        br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":"14:00","pairings":[]}"#,
    )
    .unwrap_err();
    assert!(e.reason.contains("not an instant"), "{}", e.reason);
    let e = parse::<HallAction>(
        br#"{"transaction":"r3","arbiter":"CA","action":"start_round","round":3,"start":0,"time_control":"40/5400+30:","pairings":[]}"#,
    )
    .unwrap_err();
    assert!(
        e.reason
            .contains("expected a period after ':' at column 12"),
        "{}",
        e.reason
    );
}

#[test]
fn duplicate_keys_are_refused_with_where_they_repeat() {
    let e = board(r#"{"transaction":"t1","arbiter":"IA","action":"add_time","side":"white","side":"black","delta_ms":1}"#)
        .unwrap_err();
    assert_eq!(
        (e.kind, e.transaction.as_str()),
        (BadKind::DuplicateKey, "t1")
    );
    assert!(
        e.reason.starts_with("side: the key appears twice"),
        "{}",
        e.reason
    );
    let e = parse::<HallAction>(
        br#"{"transaction":"r","arbiter":"CA","action":"start_round","round":1,"start":0,"pairings":[{"board":"b","white":"A","black":"B"},{"board":"c","white":"A","white":"C","black":"B"}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.kind, BadKind::DuplicateKey);
    assert!(e.reason.starts_with("pairings[1].white:"), "{}", e.reason);
    // The same key in two objects is not a duplicate.
    assert!(parse::<HallAction>(
        br#"{"transaction":"r","arbiter":"CA","action":"start_round","round":1,"start":0,"pairings":[{"board":"b","white":"A","black":"B"},{"board":"c","white":"C","black":"D"}]}"#,
    )
    .is_ok());
}

#[test]
fn a_command_over_1_mib_is_too_large_and_keeps_its_transaction() {
    let mut big = br#"{"transaction":"big-1","arbiter":"CA","action":"pause","reason":""#.to_vec();
    big.resize(MAX_COMMAND_BYTES + 10, b'x');
    big.extend_from_slice(b"\"}");
    let e = parse::<HallAction>(&big).unwrap_err();
    assert_eq!(
        (e.kind, e.transaction.as_str()),
        (BadKind::TooLarge, "big-1")
    );
    assert!(
        e.reason.contains("the limit is 1048576 bytes"),
        "{}",
        e.reason
    );
    // Cut off (not JSON at all after the transaction): still found.
    assert_eq!(peek_transaction(&big[..200]), "big-1");
    assert_eq!(peek_transaction(b"\x00\xff garbage"), "");
    assert_eq!(peek_transaction(br#"{"a":{"transaction":"inner"}}"#), "");
}

#[test]
fn instants_are_bounded_around_now() {
    let now = Millis(1_796_047_200_000);
    let at = |ms: i64| [("start", Instant(Millis(ms)))];
    assert!(check_instants(&at(now.0 + 3_600_000), now).is_ok());
    assert!(check_instants(&at(now.0 - 3_600_000), now).is_ok());
    let e = check_instants(&at(i64::MAX), now).unwrap_err();
    assert_eq!(e.key, "start");
    assert_eq!(
        e.to_string(),
        "start: 9223372036854775807 ms is out of range: allowed from 2026-11-29T14:00:00.000Z to 2026-12-14T14:00:00.000Z (1 day back, 14 days ahead)"
    );
    assert!(
        check_instants(&at(0), now)
            .unwrap_err()
            .to_string()
            .contains("1970-01-01T00:00:00.000Z is out of range")
    );
    assert!(check_instants(&at(i64::MIN), now).is_err());
}

#[test]
fn a_start_past_by_more_than_the_grace_is_refused_unless_allowed() {
    let now = Millis(1_796_047_200_000);
    let grace = DEFAULT_PAST_START_GRACE;
    let round = |start: i64, allow: bool| {
        parse::<HallAction>(
            format!(r#"{{"transaction":"r","arbiter":"CA","action":"start_round","round":1,"start":{start},"allow_past_start":{allow},"pairings":[]}}"#)
                .as_bytes(),
        )
        .map(|c| c.action)
    };
    // "Now" from a form arrives a little late: within the grace.
    let late = round(now.0 - 300, false).unwrap();
    assert!(check_past_start(late.start_to_check(), now, grace).is_ok());
    // Typed 3 min 25 s ago: refused, in words.
    let stale = round(now.0 - 205_000, false).unwrap();
    let e = check_past_start(stale.start_to_check(), now, grace).unwrap_err();
    assert_eq!(
        e.to_string(),
        "start: 2026-11-30T13:56:35.000Z was 3 min 25 s ago by the hall's clock (2026-11-30T14:00:00.000Z): every clock would start 3 min 25 s down. Send a start in the future, or add \"allow_past_start\": true to start it as of then (a start up to 10 s in the past is taken as it is)"
    );
    assert_eq!(Refusal::PastStart(e).code(), "past_start");
    // The arbiter means it.
    let meant = round(now.0 - 205_000, true).unwrap();
    assert_eq!(meant.start_to_check(), None);
    // A resumption likewise, on a board and for the hall.
    let board = parse::<BoardAction>(
        format!(r#"{{"transaction":"s","arbiter":"CA","action":"schedule_resumption","resumption":{{"start":{},"place":"hall"}}}}"#, now.0 - 60_000).as_bytes(),
    )
    .unwrap()
    .action;
    let e = check_past_start(board.start_to_check(), now, grace).unwrap_err();
    assert_eq!(e.key, "resumption.start");
    let hall = parse::<HallAction>(
        format!(r#"{{"transaction":"s","arbiter":"CA","action":"seal_all","allow_past_start":true,"resumption":{{"start":{},"place":"hall"}}}}"#, now.0 - 60_000).as_bytes(),
    )
    .unwrap()
    .action;
    assert!(check_past_start(hall.start_to_check(), now, grace).is_ok());
}

#[test]
fn client_text_cannot_forge_log_lines() {
    assert_eq!(
        log_safe("t1\n2026-12-01T10:00:00Z INFO forged \u{1b}[31mred\\"),
        "t1\\n2026-12-01T10:00:00Z INFO forged \\u{1b}[31mred\\\\"
    );
    assert_eq!(log_safe("Schmid, IA"), "Schmid, IA");
}

/// The figure MQTT-API.md gives: a 1000-board round, with 40-character names and FIDE
/// ids, pretty-printed, fits the limit with room to spare.
#[test]
fn a_1000_board_start_round_fits_the_limit() {
    let pairings: Vec<Value> = (1..=1000)
        .map(|n| {
            serde_json::json!({"board": format!("board-{n:04}"), "white": "W".repeat(40),
                "black": "B".repeat(40), "white_fide_id": 12_345_678, "black_fide_id": 87_654_321})
        })
        .collect();
    let cmd = serde_json::json!({"transaction": "round-7", "arbiter": "IA Schmid",
        "action": "start_round", "round": 7, "start": "2026-11-30T14:00:00Z",
        "time_control": "40/5400+30:1800+30", "default_time_ms": 3_600_000, "pairings": pairings});
    let pretty = serde_json::to_vec_pretty(&cmd).unwrap();
    let compact = serde_json::to_vec(&cmd).unwrap();
    assert!(pretty.len() < MAX_COMMAND_BYTES / 4, "{}", pretty.len());
    assert!(parse::<HallAction>(&pretty).is_ok());
    assert!(parse::<HallAction>(&compact).is_ok());
}
