//! docs/MQTT-API.md and docs/asyncapi.yaml checked against the daemon's own types, so that
//! neither can drift from the code:
//!
//! - every example payload in the document parses into the type the daemon publishes or
//!   reads (commands with the daemon's own command parser) and serialises back to the same
//!   JSON;
//! - every event, hall event, command, alert kind and error kind the daemon has is shown
//!   by an example (the lists below are checked against the enums by exhaustive matches,
//!   so a new variant does not compile until it is listed here, and then fails until it
//!   is documented);
//! - the AsyncAPI document has the same channels (direction, retained flag, QoS) as the
//!   topic table, and its message schemas name the same events, actions, alert kinds and
//!   error kinds.

use std::collections::{BTreeMap, BTreeSet};

use hallclock::intake::command::{
    BoardAction, HallAction, Instant, ResultName, check_instants, parse,
};
use hallclock::intake::refusal::Refusal;
use hallclock::mqtt::payload::{
    AlertKind, AlertPayload, BoardResult, EventPayload, HallEvent, InfoPayload, OFFLINE, ONLINE,
    ResponsePayload, ResponseStatus, StatePayload,
};
use hallclock::rules::adjournment::{
    AdjournmentRules, DrawOffer, Edition, Envelope, EnvelopeStatus, EnvelopeTime, NonceError,
    NotationLanguage, Opening, Resumption, SealTextError, SealedVerdict, Stage, commitment,
};
use hallclock::rules::fen::FenError;
use hallclock::rules::game::{
    ArbiterResult, Arrival, Event, Game, GameResult, Input, MoveError, Rejection, Score,
    Termination, describe_result,
};
use hallclock::rules::placement::Side;
use hallclock::rules::{Color, Millis};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const DOC: &str = include_str!("../docs/MQTT-API.md");
const ASYNCAPI: &str = include_str!("../docs/asyncapi.yaml");
/// The daemon's refusals: each variant's `#[error("template")]` is its reason.
const REFUSAL_SOURCE: &str = include_str!("../src/intake/refusal.rs");

// ---------------------------------------------------------------------------------------
// The examples of the document
// ---------------------------------------------------------------------------------------

/// A fenced code block preceded by `<!-- example: MARKER -->`.
#[derive(Debug)]
struct Example {
    marker: String,
    body: String,
    line: usize,
}

fn examples_of(doc: &str) -> Vec<Example> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if let Some(marker) = t
            .strip_prefix("<!-- example:")
            .and_then(|r| r.strip_suffix("-->"))
        {
            let line = i + 1;
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            assert!(
                j < lines.len() && lines[j].trim_start().starts_with("```"),
                "MQTT-API.md:{line}: the example marker is not followed by a code block"
            );
            let mut body = String::new();
            j += 1;
            while j < lines.len() && lines[j].trim() != "```" {
                body.push_str(lines[j]);
                body.push('\n');
                j += 1;
            }
            assert!(
                j < lines.len(),
                "MQTT-API.md:{line}: the code block never ends"
            );
            out.push(Example {
                marker: marker.trim().to_string(),
                body,
                line,
            });
            i = j;
        }
        i += 1;
    }
    out
}

fn examples() -> Vec<Example> {
    examples_of(DOC)
}

/// The examples whose marker is `prefix` + something; that something with each.
fn with_prefix<'a>(all: &'a [Example], prefix: &str) -> Vec<(&'a str, &'a Example)> {
    all.iter()
        .filter_map(|e| e.marker.strip_prefix(prefix).map(|rest| (rest, e)))
        .collect()
}

fn markers() -> BTreeSet<String> {
    examples().into_iter().map(|e| e.marker).collect()
}

/// Parse `e` as a `T`, serialise it again and compare: the example has exactly the
/// fields the daemon writes, with the values it writes.
fn round_trip<T: DeserializeOwned + Serialize>(e: &Example) -> T {
    let value: T = serde_json::from_str(&e.body).unwrap_or_else(|err| {
        panic!(
            "MQTT-API.md:{} ({}): does not parse as {}: {err}",
            e.line,
            e.marker,
            std::any::type_name::<T>()
        )
    });
    let again = serde_json::to_value(&value).unwrap();
    let written: Value = serde_json::from_str(&e.body).unwrap();
    assert_eq!(
        again, written,
        "MQTT-API.md:{} ({}): the daemon would write this differently",
        e.line, e.marker
    );
    value
}

fn tag(value: &impl Serialize, key: &str) -> String {
    serde_json::to_value(value).unwrap()[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} tag"))
        .to_string()
}

#[test]
fn every_example_parses_into_the_daemons_own_types() {
    let all = examples();
    assert!(all.len() > 50, "found only {} examples", all.len());
    for e in &all {
        let m = e.marker.as_str();
        let at = format!("MQTT-API.md:{} ({m})", e.line);
        if m == "node_status" {
            round_trip::<hallclock::mqtt::payload::NodeStatusPayload>(e);
        } else if m == "node_info" {
            round_trip::<hallclock::mqtt::payload::NodeInfoPayload>(e);
        } else if m == "node_clock" {
            round_trip::<hallclock::mqtt::payload::NodeClockPayload>(e);
        } else if m == "announce" {
            round_trip::<hallclock::mqtt::payload::AnnouncePayload>(e);
        } else if m == "availability" {
            let text = e.body.trim();
            assert!(text == ONLINE || text == OFFLINE, "{at}: {text}");
        } else if m == "info" {
            round_trip::<InfoPayload>(e);
        } else if m == "state" {
            let s: StatePayload = round_trip(e);
            assert!(!s.authoritative, "{at}: states are never authoritative");
        } else if let Some(name) = m.strip_prefix("event:") {
            let p: EventPayload = round_trip(e);
            assert_eq!(tag(&p.event, "event"), name, "{at}");
        } else if m == "hall_event:all_sealed" {
            let h: hallclock::mqtt::payload::SessionEvent = round_trip(e);
            assert_eq!(tag(&h, "event"), "all_sealed", "{at}");
        } else if let Some(name) = m.strip_prefix("hall_event:") {
            let h: HallEvent = round_trip(e);
            assert_eq!(tag(&h, "event"), name, "{at}");
        } else if let Some(name) = m.strip_prefix("command:board:") {
            let c = parse::<BoardAction>(e.body.as_bytes())
                .unwrap_or_else(|bad| panic!("{at}: refused: {}", bad.reason));
            assert_eq!(c.action.name(), name, "{at}");
            if let BoardAction::SetResult { result, side } = c.action {
                assert!(result.to_result(side).is_ok(), "{at}: incomplete result");
            }
        } else if let Some(name) = m.strip_prefix("command:hall:") {
            let c = parse::<HallAction>(e.body.as_bytes())
                .unwrap_or_else(|bad| panic!("{at}: refused: {}", bad.reason));
            assert_eq!(c.action.name(), name, "{at}");
        } else if let Some(kind) = m.strip_prefix("response:") {
            let r: ResponsePayload = round_trip(e);
            if kind == "ok" {
                assert_eq!(r.status, ResponseStatus::Ok, "{at}");
                assert_eq!((&r.reason, &r.error), (&None, &None), "{at}");
            } else {
                assert_eq!(r.status, ResponseStatus::Error, "{at}");
                assert_eq!(r.error.as_deref(), Some(kind), "{at}");
                assert!(r.reason.is_some(), "{at}: an error has a reason");
            }
        } else if let Some(rest) = m.strip_prefix("alert:") {
            let a: AlertPayload = round_trip(e);
            if !rest.starts_with("rejection:") {
                assert_eq!(serde_json::to_value(a.kind).unwrap(), json!(rest), "{at}");
            }
            match a.board.as_deref() {
                // One per node that raises it: the node's name ends the id.
                Some(board) if a.kind == AlertKind::BoardClaimedTwice => assert!(
                    a.id.starts_with(&format!("{board}-{}-", a.kind.slug())),
                    "{at}: alert id"
                ),
                Some(board) => {
                    assert_eq!(a.id, format!("{board}-{}", a.kind.slug()), "{at}: alert id")
                }
                // A node's own, one per node: the node's name ends the id.
                None if a.kind == AlertKind::ClockSkew => assert!(
                    a.id.starts_with(&format!("{}-", a.kind.slug())),
                    "{at}: alert id"
                ),
                // Hall-level alerts (a journal found damaged at start-up, a queue overflow,
                // a dashboard login locked out, …), each node's own: `<base>-<node>`.
                None => assert!(
                    hallclock::alert::HALL_ALERTS.iter().any(|b| a
                        .id
                        .strip_prefix(&format!("{b}-"))
                        .is_some_and(|n| !n.is_empty())),
                    "{at}: hall-level alert id"
                ),
            }
        } else if m == "view" {
            // The core's view fields for adjourned games (checked against a played game
            // in `the_adjournment_examples_are_real`).
            let v: Value = serde_json::from_str(&e.body).expect("JSON");
            let keys: BTreeSet<&str> = v
                .as_object()
                .expect("an object")
                .keys()
                .map(String::as_str)
                .collect();
            let fields = BTreeSet::from(["adjournment", "draw_offer", "session_end"]);
            assert_eq!(keys, fields, "{at}");
        } else if let Some(kind) = m.strip_prefix("rejection:") {
            let v: Value = serde_json::from_str(&e.body).expect("JSON");
            assert_eq!(v["rejection"], kind, "{at}");
        } else {
            panic!("{at}: unknown example marker (the test would not check it)");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Everything the daemon has, listed; exhaustive matches keep the lists complete
// ---------------------------------------------------------------------------------------

/// Checks that `items` has one value of each of the `count` variants `index` tells apart.
fn covers_every_variant<T: std::fmt::Debug>(items: &[T], index: fn(&T) -> usize, count: usize) {
    let seen: BTreeSet<usize> = items.iter().map(index).collect();
    let missing: Vec<usize> = (0..count).filter(|i| !seen.contains(i)).collect();
    assert!(
        missing.is_empty(),
        "variants {missing:?} have no value in the list: add one"
    );
}

const T0: Millis = Millis(1_796_047_200_000);

fn resumption() -> Resumption {
    Resumption {
        start: T0,
        end: None,
        place: "Sala 2".into(),
    }
}

/// An envelope as `seal_committed` and `counter_sealed` carry it.
fn envelope() -> Envelope {
    let time = EnvelopeTime {
        used_ms: Millis(1),
        remaining_ms: Millis(2),
    };
    Envelope {
        number: 1,
        counter_seal: false,
        white: "A".into(),
        black: "B".into(),
        fen: None,
        white_time: time,
        black_time: time,
        sealer: Color::Black,
        sealer_name: "B".into(),
        move_number: 42,
        draw_offer: Some(DrawOffer {
            side: Color::White,
            at: T0,
        }),
        resumption: Some(resumption()),
        sealed_at: T0,
        commitment: "c0ffee".into(),
        status: EnvelopeStatus::Sealed,
        verified: None,
        opened_at: None,
        opened: None,
    }
}

/// One value of every event the rules core can emit.
fn all_events() -> Vec<Event> {
    let s = || "IA Schmid".to_string();
    let r = || "a reason".to_string();
    let events = vec![
        Event::ClockStarted {
            at: T0,
            side: Color::White,
        },
        Event::PlayerPresent {
            at: T0,
            side: Color::Black,
            arrival: Arrival::Press,
        },
        Event::DefaultTimePassed {
            at: T0,
            absent: vec![Color::Black],
        },
        Event::MoveMade {
            at: T0,
            side: Color::White,
            uci: "e2e4".into(),
            san: "e4".into(),
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
        },
        Event::Pressed {
            at: T0,
            side: Color::White,
            charged_ms: Millis(4250),
            increment_ms: Millis(30_000),
            remaining_ms: Millis(5_455_750),
            moves: 1,
        },
        Event::PeriodAdvanced {
            at: T0,
            side: Color::White,
            period: 2,
            added_ms: Millis(1_800_000),
            forfeited_ms: Millis::ZERO,
            remaining_ms: Millis(2_100_000),
        },
        Event::FlagFell {
            at: T0,
            side: Color::Black,
            period: 1,
            moves_made: 0,
            moves_required: None,
            frozen: true,
        },
        Event::ResultPending {
            at: T0,
            side: Color::White,
            reason: r(),
        },
        Event::BothFlagsOrderUnknown { at: T0 },
        Event::ClockDiscrepancy {
            at: T0,
            white_ms: Millis(1),
            black_ms: Millis(2),
            reckoned_white_ms: Millis(3),
            reckoned_black_ms: Millis(4),
        },
        Event::PausedByPlayer {
            at: T0,
            side: Color::Black,
        },
        Event::Paused {
            at: T0,
            arbiter: s(),
            reason: r(),
        },
        Event::Resumed {
            at: T0,
            arbiter: s(),
        },
        Event::TimeSet {
            at: T0,
            side: Color::White,
            remaining_ms: Millis(1),
            previous_ms: Millis(2),
            arbiter: s(),
            reason: r(),
        },
        Event::TimeAdded {
            at: T0,
            side: Color::White,
            delta_ms: Millis(1),
            remaining_ms: Millis(2),
            arbiter: s(),
            reason: r(),
        },
        Event::MovesSet {
            at: T0,
            side: Color::White,
            moves: 20,
            period: 1,
            arbiter: s(),
            reason: r(),
        },
        Event::PositionSet {
            at: T0,
            fen: "8/8/8/4k3/8/8/8/4K3 w - - 0 1".into(),
            arbiter: s(),
            reason: r(),
        },
        Event::ClockReplaced {
            at: T0,
            device: "board-002".into(),
            white_ms: Millis(1),
            black_ms: Millis(2),
            arbiter: s(),
            reason: r(),
        },
        Event::GameEnded {
            at: T0,
            result: GameResult {
                score: Score::BlackWins,
                termination: Termination::Checkmate,
            },
            replaces: None,
            confirmed_by: None,
        },
        Event::SessionEndSet {
            at: T0,
            end: Some(T0),
            arbiter: s(),
        },
        Event::AdjournmentRulesSet {
            at: T0,
            rules: AdjournmentRules::default(),
            arbiter: s(),
        },
        Event::AdjournmentOrdered {
            at: T0,
            sealer: Color::Black,
            arbiter: None,
            early: false,
        },
        Event::ResumptionScheduled {
            at: T0,
            resumption: resumption(),
            arbiter: s(),
        },
        Event::Sealed {
            at: T0,
            side: Color::Black,
            commitment: "c0ffee".into(),
            on_board: false,
        },
        Event::SealCommitted {
            at: T0,
            side: Color::Black,
            charged_ms: Millis(1),
            charged_to: T0,
            increment_ms: Millis::ZERO,
            remaining_ms: Millis(2),
            moves: 2,
            arbiter: None,
            envelope: Box::new(envelope()),
        },
        Event::EnvelopeVerified {
            at: T0,
            envelope: 1,
            arbiter: s(),
        },
        Event::DrawOffered {
            at: T0,
            side: Color::White,
            arbiter: s(),
        },
        Event::DrawOfferAnswered {
            at: T0,
            side: Color::Black,
            accepted: false,
            arbiter: s(),
        },
        Event::ResumptionStarted {
            at: T0,
            resumption: resumption(),
            responder: Color::White,
            white_ms: Millis(1),
            black_ms: Millis(2),
            fen: None,
        },
        Event::EnvelopeOpened {
            at: T0,
            envelope: 1,
            opening: Opening {
                arbiter: s(),
                move_text: "Rb3".into(),
                nonce: "00".repeat(16),
                verdict: SealedVerdict::Meaningless {
                    reason: r(),
                    why: None,
                },
            },
        },
        Event::SealedMovePlayed {
            at: T0,
            side: Color::Black,
            uci: "a3b3".into(),
            san: "Rb3".into(),
            fen: "8/8/8/4k3/8/8/8/4K3 w - - 0 1".into(),
            envelope: Some(1),
        },
        Event::CounterSealed {
            at: T0,
            side: Color::White,
            charged_ms: Millis(1),
            increment_ms: Millis::ZERO,
            remaining_ms: Millis(2),
            moves: 1,
            envelope: Box::new(envelope()),
        },
        Event::EnvelopeLost {
            at: T0,
            envelope: 1,
            arbiter: s(),
            reason: r(),
        },
        Event::TimeCorrected {
            at: T0,
            side: Color::Black,
            remaining_ms: Millis(1),
            previous_ms: Millis(2),
            arbiter: s(),
            reason: r(),
        },
        Event::ResultAwaitsEnvelope {
            at: T0,
            absent: vec![Color::White],
            envelope: 1,
        },
        Event::DiscrepancyAcknowledged {
            at: T0,
            arbiter: s(),
        },
        Event::ClockTimesAdopted {
            at: T0,
            white_ms: Millis(1),
            black_ms: Millis(2),
            reckoned_white_ms: Millis(3),
            reckoned_black_ms: Millis(4),
        },
    ];
    covers_every_variant(
        &events,
        |e| match e {
            Event::ClockStarted { .. } => 0,
            Event::PlayerPresent { .. } => 1,
            Event::DefaultTimePassed { .. } => 2,
            Event::MoveMade { .. } => 3,
            Event::Pressed { .. } => 4,
            Event::PeriodAdvanced { .. } => 5,
            Event::FlagFell { .. } => 6,
            Event::ResultPending { .. } => 7,
            Event::BothFlagsOrderUnknown { .. } => 8,
            Event::ClockDiscrepancy { .. } => 9,
            Event::PausedByPlayer { .. } => 10,
            Event::Paused { .. } => 11,
            Event::Resumed { .. } => 12,
            Event::TimeSet { .. } => 13,
            Event::TimeAdded { .. } => 14,
            Event::MovesSet { .. } => 15,
            Event::PositionSet { .. } => 16,
            Event::ClockReplaced { .. } => 17,
            Event::GameEnded { .. } => 18,
            Event::SessionEndSet { .. } => 19,
            Event::AdjournmentRulesSet { .. } => 20,
            Event::AdjournmentOrdered { .. } => 21,
            Event::ResumptionScheduled { .. } => 22,
            Event::Sealed { .. } => 23,
            Event::SealCommitted { .. } => 24,
            Event::EnvelopeVerified { .. } => 25,
            Event::DrawOffered { .. } => 26,
            Event::DrawOfferAnswered { .. } => 27,
            Event::ResumptionStarted { .. } => 28,
            Event::EnvelopeOpened { .. } => 29,
            Event::SealedMovePlayed { .. } => 30,
            Event::CounterSealed { .. } => 31,
            Event::EnvelopeLost { .. } => 32,
            Event::TimeCorrected { .. } => 33,
            Event::ResultAwaitsEnvelope { .. } => 34,
            Event::DiscrepancyAcknowledged { .. } => 35,
            Event::ClockTimesAdopted { .. } => 36,
        },
        37,
    );
    events
}

fn event_names() -> BTreeSet<String> {
    all_events().iter().map(|e| tag(e, "event")).collect()
}

fn all_hall_events() -> Vec<HallEvent> {
    let events = vec![
        HallEvent::RoundStarted {
            at: T0,
            round: 1,
            start: T0,
            boards: vec!["board-001".into()],
            arbiter: "CA".into(),
        },
        HallEvent::RoundFinished {
            at: T0,
            round: 1,
            results: vec![BoardResult {
                board: "board-001".into(),
                white: "A".into(),
                black: "B".into(),
                score: "1-0".into(),
                termination: "flag".into(),
                trf_white: Some(hallclock::trf::ResultCode::Win),
                trf_black: Some(hallclock::trf::ResultCode::Loss),
                white_rank: Some(1),
                black_rank: Some(2),
            }],
        },
    ];
    covers_every_variant(
        &events,
        |e| match e {
            HallEvent::RoundStarted { .. } => 0,
            HallEvent::RoundFinished { .. } => 1,
        },
        2,
    );
    events
}

fn hall_event_names() -> BTreeSet<String> {
    let mut names: BTreeSet<String> = all_hall_events().iter().map(|e| tag(e, "event")).collect();
    // The session's event goes on the same topic with its own type.
    let all_sealed = hallclock::mqtt::payload::SessionEvent::AllSealed {
        at: T0,
        round: Some(1),
        boards: vec!["board-001".into()],
    };
    match &all_sealed {
        hallclock::mqtt::payload::SessionEvent::AllSealed { .. } => {}
    }
    names.insert(tag(&all_sealed, "event"));
    names
}

fn all_board_actions() -> Vec<BoardAction> {
    let actions = vec![
        BoardAction::Pause {},
        BoardAction::Resume {},
        BoardAction::Present { side: Color::White },
        BoardAction::SetTime {
            side: Color::White,
            remaining_ms: Millis(1),
        },
        BoardAction::AddTime {
            side: Color::White,
            delta_ms: Millis(1),
        },
        BoardAction::SetMoves {
            side: Color::White,
            moves: 1,
            period: None,
        },
        BoardAction::SetResult {
            result: ResultName::AgreedDraw,
            side: None,
        },
        BoardAction::ConfirmFlag {},
        BoardAction::SetPosition { fen: String::new() },
        BoardAction::ReplaceClock {
            to: None,
            white_ms: None,
            black_ms: None,
        },
        BoardAction::SwapSides {},
    ];
    // The adjournment commands (issue 5), parsed from their JSON.
    let board = |json: Value| {
        let mut c = json;
        c["transaction"] = json!("t");
        c["arbiter"] = json!("a");
        parse::<BoardAction>(c.to_string().as_bytes())
            .unwrap()
            .action
    };
    let resumption = json!({"start": 0, "place": "hall"});
    let mut actions = actions;
    actions.extend([
        board(json!({"action": "set_session_end", "end": 0})),
        board(json!({"action": "set_adjournment_rules", "rules": {}})),
        board(json!({"action": "adjourn"})),
        board(json!({"action": "schedule_resumption", "resumption": resumption})),
        board(json!({"action": "seal", "mv": "e4"})),
        board(json!({"action": "commit_seal"})),
        board(json!({"action": "verify_envelope"})),
        board(json!({"action": "draw_offer", "side": "white"})),
        board(json!({"action": "draw_reply", "accept": false})),
        board(json!({"action": "open_envelope"})),
        board(json!({"action": "counter_seal", "mv": "e5"})),
        board(json!({"action": "envelope_lost"})),
        board(json!({"action": "correct_time", "side": "white", "remaining_ms": 1})),
        board(json!({"action": "acknowledge_alert", "alert": "clock_discrepancy"})),
        board(json!({"action": "set_mode", "mode": "observe"})),
    ]);
    covers_every_variant(
        &actions,
        |a| match a {
            BoardAction::Pause {} => 0,
            BoardAction::Resume {} => 1,
            BoardAction::Present { .. } => 2,
            BoardAction::SetTime { .. } => 3,
            BoardAction::AddTime { .. } => 4,
            BoardAction::SetMoves { .. } => 5,
            BoardAction::SetResult { .. } => 6,
            BoardAction::ConfirmFlag {} => 7,
            BoardAction::SetPosition { .. } => 8,
            BoardAction::ReplaceClock { .. } => 9,
            BoardAction::SwapSides {} => 10,
            BoardAction::SetSessionEnd { .. } => 11,
            BoardAction::SetAdjournmentRules { .. } => 12,
            BoardAction::Adjourn { .. } => 13,
            BoardAction::ScheduleResumption { .. } => 14,
            BoardAction::Seal { .. } => 15,
            BoardAction::CommitSeal {} => 16,
            BoardAction::VerifyEnvelope {} => 17,
            BoardAction::DrawOffer { .. } => 18,
            BoardAction::DrawReply { .. } => 19,
            BoardAction::OpenEnvelope {} => 20,
            BoardAction::CounterSeal { .. } => 21,
            BoardAction::EnvelopeLost {} => 22,
            BoardAction::CorrectTime { .. } => 23,
            BoardAction::AcknowledgeAlert { .. } => 24,
            BoardAction::SetMode { .. } => 25,
        },
        26,
    );
    actions
}

fn all_hall_actions() -> Vec<HallAction> {
    let start: Value = json!({"transaction": "t", "arbiter": "a", "action": "start_round",
        "round": 1, "start": 0, "pairings": []});
    let actions = vec![
        parse::<HallAction>(start.to_string().as_bytes())
            .unwrap()
            .action,
        HallAction::Pause {},
        HallAction::Resume {},
        HallAction::Replay {
            board: "board-001".into(),
            from_seq: 1,
            reply_to: "dashboard-2".into(),
        },
        parse::<HallAction>(
            br#"{"transaction":"t","arbiter":"a","action":"seal_all"}"#,
        )
        .unwrap()
        .action,
        parse::<HallAction>(
            br#"{"transaction":"t","arbiter":"a","action":"schedule_resumption","resumption":{"start":0,"place":"hall"}}"#,
        )
        .unwrap()
        .action,
        parse::<HallAction>(
            br#"{"transaction":"t","arbiter":"a","action":"announce","text":"Round 4 at 15:00","until":0}"#,
        )
        .unwrap()
        .action,
    ];
    covers_every_variant(
        &actions,
        |a| match a {
            HallAction::StartRound { .. } => 0,
            HallAction::Pause {} => 1,
            HallAction::Resume {} => 2,
            HallAction::Replay { .. } => 3,
            HallAction::SealAll { .. } => 4,
            HallAction::ScheduleResumption { .. } => 5,
            HallAction::Announce { .. } => 6,
        },
        7,
    );
    actions
}

/// `set_result`'s `result` values, as the parser reads them.
fn all_result_names() -> Vec<&'static str> {
    let names = vec![
        "agreed_draw",
        "resignation",
        "illegal_moves",
        "annulled",
        "1-0",
        "0-1",
        "1/2-1/2",
        "0-0",
    ];
    let parsed: Vec<ResultName> = names
        .iter()
        .map(|n| serde_json::from_value(json!(n)).unwrap())
        .collect();
    covers_every_variant(
        &parsed,
        |r| match r {
            ResultName::AgreedDraw => 0,
            ResultName::Resignation => 1,
            ResultName::IllegalMoves => 2,
            ResultName::Annulled => 3,
            ResultName::WhiteWins => 4,
            ResultName::BlackWins => 5,
            ResultName::Draw => 6,
            ResultName::BothLose => 7,
        },
        8,
    );
    names
}

fn all_alert_kinds() -> Vec<AlertKind> {
    let kinds = vec![
        AlertKind::Offline,
        AlertKind::Port,
        AlertKind::ClockMode,
        AlertKind::ClockCommand,
        AlertKind::ClockDiscrepancy,
        AlertKind::PlayerPause,
        AlertKind::StrayPress,
        AlertKind::ResultPending,
        AlertKind::BothFlags,
        AlertKind::Irregular,
        AlertKind::MoveRejected,
        AlertKind::Storage,
        AlertKind::BoardMoved,
        AlertKind::OutgoingQueue,
        AlertKind::ResultShown,
        AlertKind::AuthFailures,
        AlertKind::BroadcastPush,
        AlertKind::BoardClaimedTwice,
        AlertKind::LowBattery,
        AlertKind::ClockButtons,
        AlertKind::ClockSkew,
        AlertKind::ClockIncrement,
        AlertKind::ClockJump,
        AlertKind::ClockStopped,
        AlertKind::ClockFlag,
        AlertKind::ClockPresses,
        AlertKind::ServerClock,
        AlertKind::TimeHeld,
        AlertKind::Broker,
    ];
    covers_every_variant(
        &kinds,
        |k| match k {
            AlertKind::Offline => 0,
            AlertKind::Port => 1,
            AlertKind::ClockMode => 2,
            AlertKind::ClockCommand => 3,
            AlertKind::ClockDiscrepancy => 4,
            AlertKind::PlayerPause => 5,
            AlertKind::StrayPress => 6,
            AlertKind::ResultPending => 7,
            AlertKind::BothFlags => 8,
            AlertKind::Irregular => 9,
            AlertKind::MoveRejected => 10,
            AlertKind::Storage => 11,
            AlertKind::BoardMoved => 12,
            AlertKind::OutgoingQueue => 13,
            AlertKind::ResultShown => 14,
            AlertKind::AuthFailures => 15,
            AlertKind::BroadcastPush => 16,
            AlertKind::BoardClaimedTwice => 17,
            AlertKind::LowBattery => 18,
            AlertKind::ClockButtons => 19,
            AlertKind::ClockSkew => 20,
            AlertKind::ClockIncrement => 21,
            AlertKind::ClockJump => 22,
            AlertKind::ClockStopped => 23,
            AlertKind::ClockFlag => 24,
            AlertKind::ClockPresses => 25,
            AlertKind::ServerClock => 26,
            AlertKind::TimeHeld => 27,
            AlertKind::Broker => 28,
        },
        29,
    );
    kinds
}

fn alert_kind_names() -> BTreeSet<String> {
    all_alert_kinds()
        .iter()
        .map(|k| {
            serde_json::to_value(k)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// One value of every rejection of the rules core, with the values the document's
/// examples show (their messages are compared).
fn all_rejections() -> Vec<Rejection> {
    let mate = GameResult {
        score: Score::BlackWins,
        termination: Termination::Checkmate,
    };
    let rejections = vec![
        Rejection::NotStarted { start: T0 },
        Rejection::GameOver {
            result: describe_result(&mate),
        },
        Rejection::Paused {
            by: "paused by arbiter IA Schmid: noise in the hall".into(),
        },
        Rejection::NotPaused,
        Rejection::NotYourTurn {
            side: Color::Black,
            running: Color::White,
        },
        Rejection::Frozen,
        Rejection::PositionUnknown,
        Rejection::BadMove {
            mv: "e2e5".into(),
            reason: MoveError::Illegal,
        },
        Rejection::MovePending { side: Color::Black },
        Rejection::NoPendingFlag,
        Rejection::VerdictUnknown {
            reason: "flag fell, result pending arbiter: the position is not known".into(),
        },
        Rejection::OutOfRange {
            field: "remaining",
            value: -5,
            allowed: "0 to 86400000 ms (24 h)".into(),
        },
        Rejection::BadFen {
            reason: FenError::Syntax {
                field: "piece placement (field 1)",
                detail: "3 ranks, not 8".into(),
            },
        },
        Rejection::ReasonRequired { what: "set_time" },
        Rejection::ArbiterRequired,
        Rejection::Adjourned {
            resumes: Some(Millis(1_796_119_200_000)),
        },
        Rejection::MoveIsTheSealedMove {
            side: Color::Black,
            mv: "Rb3".into(),
        },
        Rejection::SealFirst { side: Color::Black },
        Rejection::SealIsFinal,
        Rejection::NotTheSealer {
            side: Color::White,
            sealer: Color::Black,
        },
        Rejection::BadNonce {
            reason: NonceError::Length(8),
        },
        Rejection::BadSealText {
            reason: SealTextError::TooLong,
        },
        Rejection::ResponderAbsent { side: Color::White },
        Rejection::CommitmentMismatch { envelope: 1 },
        Rejection::NotInThisStage {
            reason: "no move is being sealed (the arbiter orders it: adjourn, or the session end)"
                .into(),
        },
        Rejection::EnvelopeNotOpened,
        Rejection::CorrectionWindowClosed,
        Rejection::NoDrawOffer,
        Rejection::NoDiscrepancy,
    ];
    covers_every_variant(
        &rejections,
        |r| match r {
            Rejection::NotStarted { .. } => 0,
            Rejection::GameOver { .. } => 1,
            Rejection::Paused { .. } => 2,
            Rejection::NotPaused => 3,
            Rejection::NotYourTurn { .. } => 4,
            Rejection::Frozen => 5,
            Rejection::PositionUnknown => 6,
            Rejection::BadMove { .. } => 7,
            Rejection::MovePending { .. } => 8,
            Rejection::NoPendingFlag => 9,
            Rejection::VerdictUnknown { .. } => 10,
            Rejection::OutOfRange { .. } => 11,
            Rejection::BadFen { .. } => 12,
            Rejection::ReasonRequired { .. } => 13,
            Rejection::ArbiterRequired => 14,
            Rejection::Adjourned { .. } => 15,
            Rejection::MoveIsTheSealedMove { .. } => 16,
            Rejection::SealFirst { .. } => 17,
            Rejection::SealIsFinal => 18,
            Rejection::NotTheSealer { .. } => 19,
            Rejection::BadNonce { .. } => 20,
            Rejection::BadSealText { .. } => 21,
            Rejection::ResponderAbsent { .. } => 22,
            Rejection::CommitmentMismatch { .. } => 23,
            Rejection::NotInThisStage { .. } => 24,
            Rejection::EnvelopeNotOpened => 25,
            Rejection::CorrectionWindowClosed => 26,
            Rejection::NoDrawOffer => 27,
            Rejection::NoDiscrepancy => 28,
        },
        29,
    );
    rejections
}

/// One value of every refusal of the daemon's own (not the rules core's).
fn all_refusals() -> Vec<Refusal> {
    let t = || "x".to_string();
    let refusals = vec![
        Refusal::Rejected(Rejection::NotPaused),
        Refusal::BadCommand(t()),
        Refusal::Unsigned { missing: t() },
        Refusal::UnknownArbiter { arbiter: t() },
        Refusal::BadSignature { arbiter: t() },
        Refusal::BadSignedField {
            field: "ts",
            problem: t(),
        },
        Refusal::Expired {
            ts: Millis(T0.0 - 60_000),
            hall: T0,
            window_ms: 30_000,
        },
        Refusal::Replayed {
            transaction: t(),
            arbiter: t(),
        },
        Refusal::ViewerCommand { arbiter: t() },
        Refusal::OutOfScope {
            arbiter: t(),
            scope: t(),
            board: t(),
        },
        Refusal::ChiefOnly {
            action: "pause",
            arbiter: t(),
        },
        Refusal::UnknownBoard {
            board: t(),
            known: t(),
        },
        Refusal::NotABoard { board: t() },
        Refusal::UnknownTarget { board: t() },
        Refusal::UnknownPairedBoard {
            at: t(),
            board: t(),
        },
        Refusal::NoGame { board: t() },
        Refusal::NoGameToMove { board: t() },
        Refusal::NoBoardApplied { action: "pause" },
        Refusal::BoardBusy {
            board: t(),
            round: 1,
        },
        Refusal::TargetBusy {
            board: t(),
            round: 1,
        },
        Refusal::PairedBoardBusy {
            at: t(),
            board: t(),
            round: 1,
        },
        Refusal::RoundZero,
        Refusal::NoPairings,
        Refusal::PairedTwice {
            at: t(),
            board: t(),
        },
        Refusal::NameMissing { at: t() },
        Refusal::BadSetup {
            at: t(),
            reason: t(),
        },
        Refusal::SameBoard,
        Refusal::BadResult(hallclock::intake::command::NeedsSide("resignation")),
        Refusal::GameNotStored {
            board: t(),
            reason: t(),
        },
        Refusal::NotStored { reason: t() },
        Refusal::CommandNotStored {
            board: t(),
            action: t().into(),
            reason: t().into(),
        },
        Refusal::SealNotKept { reason: t() },
        Refusal::SealUnreadable { reason: t() },
        Refusal::JournalUnreadable { reason: t() },
        Refusal::BoardStopped,
        Refusal::CustodyTaskFailed,
        Refusal::Internal { reason: t() },
        Refusal::TooLarge(t()),
        Refusal::DuplicateKey(t()),
        Refusal::OutOfRange(hallclock::intake::command::InstantOutOfRange {
            key: "start",
            at: Millis(0),
            from: Millis(0),
            to: Millis(0),
        }),
        Refusal::NotARequest { action: "pause" },
        Refusal::PastStart(hallclock::intake::command::PastStart {
            key: "start",
            at: Millis(0),
            now: Millis(205_000),
            grace: Millis(10_000),
        }),
        Refusal::BadValue(t()),
        Refusal::Trf(Box::new(
            hallclock::trf::Trf::read(b"012 x\n001 nonsense")
                .expect_err("a TRF that does not read"),
        )),
        Refusal::NoHallBoard(t()),
        Refusal::BroadcastDelayTooLong { minutes: 61 },
        Refusal::HallOfSeveralNodes { nodes: t() },
        Refusal::BoardNodeOffline {
            board: t(),
            node: t(),
        },
        Refusal::BoardNodeSilent {
            board: t(),
            node: t(),
            secs: 10,
        },
        Refusal::TargetOnAnotherNode {
            board: t(),
            node: t(),
        },
        Refusal::NoBoardOfAnyNode {
            action: t(),
            nodes: t(),
        },
        Refusal::DefaultsDiffer {
            node: t(),
            ours: t().into(),
            theirs: t().into(),
        },
        Refusal::BoardNumberTwice {
            number: 7,
            boards: t(),
        },
    ];
    use hallclock::intake::refusal::AnnounceError;
    let refusals: Vec<Refusal> = refusals
        .into_iter()
        .chain(
            [
                AnnounceError::Blank,
                AnnounceError::TooLong {
                    chars: 281,
                    max: 280,
                },
                AnnounceError::Control { at: 3, code: 10 },
                AnnounceError::NoUntil,
                AnnounceError::Past {
                    until: Millis(0),
                    now: Millis(1000),
                },
                AnnounceError::UntilWithoutText,
            ]
            .map(Refusal::Announce),
        )
        .collect();
    covers_every_variant(
        &refusals,
        |r| match r {
            Refusal::Rejected(_) => 0,
            Refusal::BadCommand(_) => 1,
            Refusal::Unsigned { .. } => 2,
            Refusal::UnknownArbiter { .. } => 3,
            Refusal::BadSignature { .. } => 4,
            Refusal::BadSignedField { .. } => 5,
            Refusal::Expired { .. } => 6,
            Refusal::Replayed { .. } => 7,
            Refusal::ViewerCommand { .. } => 8,
            Refusal::OutOfScope { .. } => 9,
            Refusal::ChiefOnly { .. } => 10,
            Refusal::UnknownBoard { .. } => 11,
            Refusal::NotABoard { .. } => 12,
            Refusal::UnknownTarget { .. } => 13,
            Refusal::UnknownPairedBoard { .. } => 14,
            Refusal::NoGame { .. } => 15,
            Refusal::NoGameToMove { .. } => 16,
            Refusal::NoBoardApplied { .. } => 17,
            Refusal::BoardBusy { .. } => 18,
            Refusal::TargetBusy { .. } => 19,
            Refusal::PairedBoardBusy { .. } => 20,
            Refusal::RoundZero => 21,
            Refusal::NoPairings => 22,
            Refusal::PairedTwice { .. } => 23,
            Refusal::NameMissing { .. } => 24,
            Refusal::BadSetup { .. } => 25,
            Refusal::SameBoard => 26,
            Refusal::BadResult(_) => 27,
            Refusal::GameNotStored { .. } => 28,
            Refusal::NotStored { .. } => 29,
            Refusal::SealNotKept { .. } => 30,
            Refusal::SealUnreadable { .. } => 31,
            Refusal::JournalUnreadable { .. } => 32,
            Refusal::BoardStopped => 33,
            Refusal::CustodyTaskFailed => 34,
            Refusal::Internal { .. } => 35,
            Refusal::TooLarge(_) => 36,
            Refusal::DuplicateKey(_) => 37,
            Refusal::OutOfRange(_) => 38,
            Refusal::NotARequest { .. } => 39,
            Refusal::BadValue(_) => 40,
            Refusal::NoHallBoard(_) => 41,
            Refusal::BroadcastDelayTooLong { .. } => 42,
            Refusal::Trf(_) => 43,
            Refusal::HallOfSeveralNodes { .. } => 44,
            Refusal::DefaultsDiffer { .. } => 45,
            Refusal::BoardNumberTwice { .. } => 46,
            Refusal::BoardNodeOffline { .. } => 47,
            Refusal::BoardNodeSilent { .. } => 48,
            Refusal::TargetOnAnotherNode { .. } => 49,
            Refusal::NoBoardOfAnyNode { .. } => 50,
            Refusal::CommandNotStored { .. } => 51,
            Refusal::PastStart(_) => 52,
            Refusal::Announce(_) => 53,
        },
        54,
    );
    refusals
}

/// The codes the daemon gives itself (the rules core's are [`rejection_kinds`]).
fn daemon_error_kinds() -> BTreeSet<String> {
    all_refusals()
        .iter()
        .filter(|r| !matches!(r, Refusal::Rejected(_)))
        .map(Refusal::code)
        .collect()
}

fn rejection_kinds() -> BTreeSet<String> {
    all_rejections()
        .iter()
        .map(|r| tag(r, "rejection"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Everything the daemon has is documented
// ---------------------------------------------------------------------------------------

fn assert_documented(what: &str, names: impl IntoIterator<Item = String>, prefix: &str) {
    let markers = markers();
    let missing: Vec<String> = names
        .into_iter()
        .filter(|n| !markers.contains(&format!("{prefix}{n}")))
        .collect();
    assert!(
        missing.is_empty(),
        "MQTT-API.md has no example for the {what} {missing:?} (marker `<!-- example: {prefix}NAME -->`)"
    );
}

#[test]
fn every_board_event_is_documented() {
    assert_documented("event", event_names(), "event:");
    // And under a heading of its own.
    for name in event_names() {
        assert!(
            DOC.contains(&format!("### `{name}`\n")),
            "MQTT-API.md has no section for the event `{name}`"
        );
    }
}

#[test]
fn the_rules_script_doc_lists_the_same_events() {
    let script = include_str!("../docs/RULES-SCRIPT.md");
    for name in event_names() {
        assert!(
            script.contains(&format!("`{name}`")),
            "RULES-SCRIPT.md does not name the event `{name}`"
        );
    }
}

#[test]
fn every_hall_event_is_documented() {
    assert_documented("hall event", hall_event_names(), "hall_event:");
}

#[test]
fn every_command_is_documented() {
    assert_documented(
        "board command",
        all_board_actions().iter().map(|a| a.name().to_string()),
        "command:board:",
    );
    assert_documented(
        "hall command",
        all_hall_actions().iter().map(|a| a.name().to_string()),
        "command:hall:",
    );
    for a in all_board_actions() {
        assert!(
            DOC.contains(&format!("| `{}` |", a.name())),
            "MQTT-API.md's board command table has no row for `{}`",
            a.name()
        );
    }
    for r in all_result_names() {
        assert!(
            DOC.contains(&format!("`\"{r}\"`")),
            "MQTT-API.md does not list the result `\"{r}\"`"
        );
    }
}

#[test]
fn every_alert_kind_is_documented() {
    assert_documented("alert kind", alert_kind_names(), "alert:");
    for kind in alert_kind_names() {
        assert!(
            DOC.contains(&format!("| `{kind}` |")),
            "MQTT-API.md's alert table has no row for `{kind}`"
        );
    }
}

#[test]
fn every_error_kind_is_documented() {
    let all = examples();
    for kind in daemon_error_kinds() {
        assert!(
            markers().contains(&format!("response:{kind}")),
            "MQTT-API.md has no example response with the error `{kind}`"
        );
        assert!(
            DOC.contains(&format!("| `{kind}` |")),
            "MQTT-API.md's error tables have no row for `{kind}`"
        );
    }
    for r in all_rejections() {
        let kind = tag(&r, "rejection");
        let message = r.to_string();
        assert!(
            DOC.contains(&format!("| `{kind}` |")),
            "MQTT-API.md's error tables have no row for `{kind}`"
        );
        let responses = with_prefix(&all, &format!("response:{kind}"));
        let alerts = with_prefix(&all, &format!("alert:rejection:{kind}"));
        let core = with_prefix(&all, &format!("rejection:{kind}"));
        if !responses.is_empty() {
            let reasons: Vec<String> = responses
                .iter()
                .map(|(_, e)| serde_json::from_str::<ResponsePayload>(&e.body).unwrap())
                .filter_map(|r| r.reason)
                .collect();
            assert!(
                reasons.contains(&message),
                "no example response for `{kind}` has the core's message {message:?}; they have {reasons:?}"
            );
        } else if !alerts.is_empty() {
            for (_, e) in alerts {
                let a: AlertPayload = serde_json::from_str(&e.body).unwrap();
                assert!(
                    a.message.contains(&message),
                    "MQTT-API.md:{}: the alert does not carry the core's message {message:?}",
                    e.line
                );
            }
        } else if !core.is_empty() {
            for (_, e) in core {
                let v: Value = serde_json::from_str(&e.body).unwrap();
                assert_eq!(
                    v,
                    serde_json::to_value(&r).unwrap(),
                    "MQTT-API.md:{}",
                    e.line
                );
            }
        } else {
            panic!("MQTT-API.md has no example for the rejection `{kind}`");
        }
    }
}

#[test]
fn documented_parse_errors_are_the_parsers_own() {
    // The payloads behind the `bad_command` examples, and what the parser answers.
    let payloads: [&[u8]; 4] = [
        br#"{"transaction":"t-0120","arbiter":"IA Schmid","action":"fly"}"#,
        br#"{"transaction":"t-0121","arbiter":"IA Schmid","action":"set_time","side":"white","remaining":300000}"#,
        b"{not json",
        br#"{"transaction":"t-0138","action":"pause"}"#,
    ];
    let produced: Vec<(String, String, String)> = payloads
        .iter()
        .map(|p| {
            let bad = parse::<BoardAction>(p).unwrap_err();
            (bad.transaction, bad.action, bad.reason)
        })
        .collect();
    let all = examples();
    let documented = with_prefix(&all, "response:bad_command");
    assert!(!documented.is_empty());
    for (_, e) in documented {
        let r: ResponsePayload = serde_json::from_str(&e.body).unwrap();
        let key = (r.transaction, r.action, r.reason.unwrap_or_default());
        assert!(
            produced.contains(&key),
            "MQTT-API.md:{}: the parser does not answer this; it answers {produced:#?}",
            e.line
        );
    }
}

// ---------------------------------------------------------------------------------------
// The AsyncAPI document
// ---------------------------------------------------------------------------------------

fn yaml_to_json(y: &yaml_rust::Yaml) -> Value {
    use yaml_rust::Yaml;
    match y {
        Yaml::Real(s) => json!(s.parse::<f64>().unwrap()),
        Yaml::Integer(i) => json!(i),
        Yaml::String(s) => json!(s),
        Yaml::Boolean(b) => json!(b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        Yaml::Integer(i) => i.to_string(),
                        other => panic!("asyncapi.yaml: a key that is not a string: {other:?}"),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("asyncapi.yaml: unexpected YAML {other:?}"),
    }
}

fn asyncapi() -> Value {
    let docs = yaml_rust::YamlLoader::load_from_str(ASYNCAPI)
        .unwrap_or_else(|e| panic!("asyncapi.yaml is not valid YAML: {e}"));
    assert_eq!(docs.len(), 1, "asyncapi.yaml holds one document");
    yaml_to_json(&docs[0])
}

/// Follow a local `$ref` (`#/components/...`).
fn resolve<'a>(root: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let path = r.strip_prefix("#/").expect("local $ref");
            let target = root.pointer(&format!("/{path}"));
            resolve(root, target.unwrap_or_else(|| panic!("dangling $ref {r}")))
        }
        None => v,
    }
}

/// The rows of the document's topic table: topic -> (dir, retained).
fn doc_topics() -> BTreeMap<String, (String, bool)> {
    let section = DOC.split("\n## Topics\n").nth(1).expect("a Topics section");
    let mut topics = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let Some(topic) = cells[1].strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
            assert_eq!(cells[4], "1", "{topic}: QoS");
            topics.insert(topic.to_string(), (cells[2].to_string(), cells[3] == "yes"));
        }
    }
    topics
}

/// `hallclock/{hall}/board/{board}/state` -> `board/<b>/state`.
fn channel_topic(channel: &str) -> String {
    channel
        .strip_prefix("hallclock/{hall}/")
        .unwrap_or_else(|| panic!("channel {channel} is not under hallclock/{{hall}}/"))
        .replace("{board}", "<b>")
        .replace("{node}", "<node>")
        .replace("{id}", "<id>")
}

#[test]
fn asyncapi_channels_are_the_documented_topics() {
    let api = asyncapi();
    assert_eq!(api["asyncapi"], "2.6.0");
    let channels = api["channels"].as_object().expect("channels");
    let doc = doc_topics();
    let mut seen = BTreeSet::new();
    for (name, channel) in channels {
        let topic = channel_topic(name);
        let (dir, retained) = doc.get(&topic).unwrap_or_else(|| {
            panic!("asyncapi.yaml channel {name}: no row `{topic}` in MQTT-API.md's topic table")
        });
        // AsyncAPI 2: `subscribe` = what the daemon (or, for `bridge`, Mosquitto)
        // publishes, `publish` = what the daemon reads. A command topic has both: the
        // clients' commands, and the daemon's empty retained message that clears it.
        let op = if dir == "in" { "publish" } else { "subscribe" };
        let other = if dir == "in" { "subscribe" } else { "publish" };
        let operation = channel
            .get(op)
            .unwrap_or_else(|| panic!("{name}: MQTT-API.md says `{dir}`, so a `{op}` operation"));
        if let Some(clear) = channel.get(other) {
            assert_eq!(dir, "in", "{name}: only `{op}`");
            let m = resolve(&api, &clear["message"]);
            assert_eq!(
                resolve(&api, &m["payload"]),
                resolve(&api, &api["components"]["schemas"]["empty"]),
                "{name}: the `subscribe` of a command topic is its empty clear"
            );
            assert_eq!(
                clear["bindings"]["mqtt"]["retain"],
                json!(true),
                "{name}: clear"
            );
        }
        let mqtt = &operation["bindings"]["mqtt"];
        assert_eq!(mqtt["qos"], 1, "{name}: QoS");
        assert_eq!(mqtt["retain"], json!(retained), "{name}: retained");
        for param in ["hall", "node", "board", "id"] {
            if name.contains(&format!("{{{param}}}")) {
                let p = resolve(&api, &channel["parameters"][param]);
                assert!(p.get("schema").is_some(), "{name}: parameter {param}");
            }
        }
        let message = resolve(&api, &operation["message"]);
        assert!(message.is_object(), "{name}: message");
        // A command topic takes the signed envelope (the default) or the bare command.
        if dir == "in" {
            let names: Vec<String> = message["oneOf"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: signed or open"))
                .iter()
                .map(|m| {
                    resolve(&api, m)["messageId"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                })
                .collect();
            assert!(
                names.len() == 2 && names[0].starts_with("signed") && names[1].starts_with("open"),
                "{name}: {names:?}"
            );
        }
        seen.insert(topic);
    }
    let missing: Vec<&String> = doc.keys().filter(|t| !seen.contains(*t)).collect();
    assert!(
        missing.is_empty(),
        "topics of MQTT-API.md with no channel in asyncapi.yaml: {missing:?}"
    );
}

/// The `const` of `property` in each alternative of the `oneOf` of the message's payload.
fn one_of_consts(api: &Value, message: &str, property: &str) -> BTreeSet<String> {
    let m = resolve(api, &api["components"]["messages"][message]);
    let payload = resolve(api, &m["payload"]);
    let alternatives = payload["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{message}: payload.oneOf"));
    alternatives
        .iter()
        .map(|alt| {
            const_of(api, resolve(api, alt), property)
                .unwrap_or_else(|| panic!("{message}: an alternative without {property}.const"))
        })
        .collect()
}

/// The `const` of `property` in each alternative of the `oneOf` of a schema.
fn schema_one_of_consts(api: &Value, schema: &str, property: &str) -> BTreeSet<String> {
    let s = resolve(api, &api["components"]["schemas"][schema]);
    s["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{schema}: oneOf"))
        .iter()
        .map(|alt| {
            const_of(api, resolve(api, alt), property)
                .unwrap_or_else(|| panic!("{schema}: an alternative without {property}.const"))
        })
        .collect()
}

/// The `const` of a property of a schema, also when it comes from an `allOf` part.
fn const_of(api: &Value, schema: &Value, property: &str) -> Option<String> {
    if let Some(c) = schema["properties"][property]["const"].as_str() {
        return Some(c.to_string());
    }
    schema["allOf"]
        .as_array()?
        .iter()
        .find_map(|part| const_of(api, resolve(api, part), property))
}

fn enum_of(api: &Value, schema: &str) -> BTreeSet<String> {
    let s = resolve(api, &api["components"]["schemas"][schema]);
    s["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("components.schemas.{schema}.enum"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn asyncapi_messages_name_what_the_daemon_has() {
    let api = asyncapi();
    assert_eq!(one_of_consts(&api, "boardEvent", "event"), event_names());
    assert_eq!(
        one_of_consts(&api, "hallEvent", "event"),
        hall_event_names()
    );
    let board_actions: BTreeSet<String> = all_board_actions()
        .iter()
        .map(|a| a.name().to_string())
        .collect();
    assert_eq!(
        schema_one_of_consts(&api, "boardCommand", "action"),
        board_actions
    );
    let hall_actions: BTreeSet<String> = all_hall_actions()
        .iter()
        .map(|a| a.name().to_string())
        .collect();
    assert_eq!(
        schema_one_of_consts(&api, "hallCommand", "action"),
        hall_actions
    );
    assert_eq!(enum_of(&api, "alertKind"), alert_kind_names());
    let mut errors = daemon_error_kinds();
    errors.extend(rejection_kinds());
    assert_eq!(enum_of(&api, "errorKind"), errors);
    let results: BTreeSet<String> = all_result_names().iter().map(|s| s.to_string()).collect();
    assert_eq!(enum_of(&api, "resultName"), results);
}

#[test]
fn asyncapi_messages_are_in_the_document() {
    let api = asyncapi();
    let messages = api["components"]["messages"]
        .as_object()
        .expect("components.messages");
    // Each message of the AsyncAPI document is a section of MQTT-API.md (by its title).
    for (name, m) in messages {
        let title = m["title"]
            .as_str()
            .unwrap_or_else(|| panic!("message {name}: title"));
        let heading = DOC.lines().any(|l| {
            l.starts_with('#') && l.trim_start_matches('#').trim().eq_ignore_ascii_case(title)
        });
        assert!(
            heading,
            "message {name}: MQTT-API.md has no section `{title}`"
        );
    }
}

#[test]
fn the_example_scanner_finds_missing_examples() {
    // The checks above rely on the scanner; make sure it sees a removed example.
    let without = DOC.replace("<!-- example: event:pressed -->", "");
    let markers: BTreeSet<String> = examples_of(&without)
        .into_iter()
        .map(|e| e.marker)
        .collect();
    assert!(!markers.contains("event:pressed"));
    assert!(markers.contains("event:clock_started"));
}

#[test]
fn every_termination_and_arbiter_result_is_documented() {
    let side = Color::White;
    let terminations = vec![
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::DeadPosition,
        Termination::SeventyFiveMoves,
        Termination::FivefoldRepetition,
        Termination::Flag { side },
        Termination::FlagOpponentCannotMate { side },
        Termination::Default { absent: vec![side] },
        Termination::InvalidSealedMove {
            side,
            verdict: SealedVerdict::illegal(hallclock::rules::adjournment::SealedWhy::NotAMove),
        },
        Termination::InvalidSealedMoveOpponentCannotMate {
            side,
            verdict: SealedVerdict::illegal(hallclock::rules::adjournment::SealedWhy::NotAMove),
        },
        Termination::Arbiter {
            kind: ArbiterResult::AgreedDraw,
            arbiter: "IA".into(),
            reason: "r".into(),
        },
    ];
    covers_every_variant(
        &terminations,
        |t| match t {
            Termination::Checkmate => 0,
            Termination::Stalemate => 1,
            Termination::DeadPosition => 2,
            Termination::SeventyFiveMoves => 3,
            Termination::FivefoldRepetition => 4,
            Termination::Flag { .. } => 5,
            Termination::FlagOpponentCannotMate { .. } => 6,
            Termination::Default { .. } => 7,
            Termination::Arbiter { .. } => 8,
            Termination::InvalidSealedMove { .. } => 9,
            Termination::InvalidSealedMoveOpponentCannotMate { .. } => 10,
        },
        11,
    );
    let api = asyncapi();
    let in_api = enum_of(&api, "termination");
    for t in &terminations {
        let name = tag(t, "termination");
        assert!(
            DOC.contains(&format!("| `{name}` |")),
            "MQTT-API.md's termination table has no row for `{name}`"
        );
        assert!(in_api.contains(&name), "asyncapi.yaml: termination {name}");
    }
    let kinds = vec![
        ArbiterResult::AgreedDraw,
        ArbiterResult::Resignation { side },
        ArbiterResult::IllegalMoves { side },
        ArbiterResult::Annulled,
        ArbiterResult::Score { score: Score::Draw },
    ];
    covers_every_variant(
        &kinds,
        |k| match k {
            ArbiterResult::AgreedDraw => 0,
            ArbiterResult::Resignation { .. } => 1,
            ArbiterResult::IllegalMoves { .. } => 2,
            ArbiterResult::Annulled => 3,
            ArbiterResult::Score { .. } => 4,
        },
        5,
    );
    let api_kinds = &resolve(&api, &api["components"]["schemas"]["arbiterResult"])["properties"]["kind"]
        ["enum"];
    for k in &kinds {
        let name = tag(k, "kind");
        assert!(
            DOC.contains(&format!("{{\"kind\": \"{name}\"")),
            "MQTT-API.md does not show the arbiter's result kind `{name}`"
        );
        assert!(
            api_kinds.as_array().unwrap().contains(&json!(name)),
            "asyncapi.yaml: arbiterResult kind {name}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The AsyncAPI schemas accept the document's examples
// ---------------------------------------------------------------------------------------

/// A small JSON Schema validator: the keywords asyncapi.yaml uses, and nothing else (an
/// unknown keyword fails, so the schema cannot grow beyond what is checked).
fn validate(api: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let schema = resolve(api, schema);
    let Some(obj) = schema.as_object() else {
        return Err(format!("{at}: schema is not an object"));
    };
    for (key, rule) in obj {
        match key.as_str() {
            "$ref" | "description" | "discriminator" | "title" | "default" | "contentMediaType" => {
            }
            // A signed envelope's `payload`: JSON text whose content has this schema.
            "contentSchema" => {
                if let Some(text) = v.as_str() {
                    let inner: Value = serde_json::from_str(text)
                        .map_err(|e| format!("{at}: {v} is not JSON text: {e}"))?;
                    validate(api, rule, &inner, &format!("{at} (content)"))?;
                }
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => return Err(format!("{at}: bad type {rule}")),
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    "string" => v.is_string(),
                    "integer" => v.is_i64() || v.is_u64(),
                    "number" => v.is_number(),
                    "boolean" => v.is_boolean(),
                    "null" => v.is_null(),
                    _ => false,
                });
                if !ok {
                    return Err(format!("{at}: {v} is not of type {rule}"));
                }
            }
            "enum" => {
                if !rule.as_array().is_some_and(|a| a.contains(v)) {
                    return Err(format!("{at}: {v} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != v {
                    return Err(format!("{at}: {v} is not {rule}"));
                }
            }
            "required" => {
                for name in rule.as_array().into_iter().flatten() {
                    let name = name.as_str().unwrap_or_default();
                    if v.is_object() && v.get(name).is_none() {
                        return Err(format!("{at}: `{name}` is missing"));
                    }
                }
            }
            "properties" => {
                for (name, sub) in rule.as_object().into_iter().flatten() {
                    if let Some(value) = v.get(name) {
                        validate(api, sub, value, &format!("{at}.{name}"))?;
                    }
                }
            }
            "additionalProperties" => {
                let known = obj.get("properties").and_then(Value::as_object);
                if rule == &json!(false)
                    && let Some(fields) = v.as_object()
                {
                    for name in fields.keys() {
                        if !known.is_some_and(|k| k.contains_key(name)) {
                            return Err(format!("{at}: unexpected `{name}`"));
                        }
                    }
                }
            }
            "items" => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    validate(api, rule, item, &format!("{at}[{i}]"))?;
                }
            }
            "anyOf" => {
                let alternatives = rule.as_array().cloned().unwrap_or_default();
                let errors: Vec<String> = alternatives
                    .iter()
                    .filter_map(|alt| validate(api, alt, v, at).err())
                    .collect();
                if errors.len() == alternatives.len() {
                    return Err(format!(
                        "{at}: {v} matches none of the anyOf alternatives: {errors:#?}"
                    ));
                }
            }
            "allOf" => {
                for part in rule.as_array().into_iter().flatten() {
                    validate(api, part, v, at)?;
                }
            }
            "oneOf" => {
                let alternatives = rule.as_array().cloned().unwrap_or_default();
                let errors: Vec<String> = alternatives
                    .iter()
                    .filter_map(|alt| validate(api, alt, v, at).err())
                    .collect();
                let matched = alternatives.len() - errors.len();
                if matched != 1 {
                    return Err(format!(
                        "{at}: {v} matches {matched} of the oneOf alternatives, not 1: {errors:#?}"
                    ));
                }
            }
            "minimum" | "maximum" => {
                if let (Some(n), Some(bound)) = (v.as_i64(), rule.as_i64())
                    && ((key == "minimum" && n < bound) || (key == "maximum" && n > bound))
                {
                    return Err(format!("{at}: {n} is beyond the {key} {bound}"));
                }
            }
            "minLength" | "maxLength" => {
                if let (Some(s), Some(bound)) = (v.as_str(), rule.as_u64()) {
                    let n = s.chars().count() as u64;
                    if (key == "minLength" && n < bound) || (key == "maxLength" && n > bound) {
                        return Err(format!("{at}: {v} is beyond the {key} {bound}"));
                    }
                }
            }
            "minItems" => {
                if let (Some(a), Some(bound)) = (v.as_array(), rule.as_u64())
                    && (a.len() as u64) < bound
                {
                    return Err(format!("{at}: fewer than {bound} items"));
                }
            }
            "pattern" => {
                // The two patterns in use: ids, and a signature's 64 lowercase hex digits.
                let ok = |s: &str| match rule.as_str() {
                    Some("^[a-z0-9-]+$") => hallclock::id::valid(s),
                    Some("^[0-9a-f]{64}$") => {
                        s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                    }
                    _ => panic!("{at}: unsupported pattern {rule}"),
                };
                if let Some(s) = v.as_str()
                    && !ok(s)
                {
                    return Err(format!("{at}: {v} does not match {rule}"));
                }
            }
            other => panic!("{at}: the test's validator does not know the keyword `{other}`"),
        }
    }
    Ok(())
}

fn message_payload<'a>(api: &'a Value, message: &str) -> &'a Value {
    let m = resolve(api, &api["components"]["messages"][message]);
    &m["payload"]
}

fn schema<'a>(api: &'a Value, name: &str) -> &'a Value {
    let s = &api["components"]["schemas"][name];
    assert!(s.is_object(), "asyncapi.yaml: no components.schemas.{name}");
    s
}

#[test]
fn asyncapi_schemas_accept_every_example() {
    let api = asyncapi();
    for e in examples() {
        let m = e.marker.as_str();
        let (message, value) = match m.split(':').next().unwrap_or_default() {
            "node_status" => ("nodeStatus", serde_json::from_str(&e.body).unwrap()),
            "node_info" => ("nodeInfo", serde_json::from_str(&e.body).unwrap()),
            "node_clock" => ("nodeClock", serde_json::from_str(&e.body).unwrap()),
            "announce" => ("announce", serde_json::from_str(&e.body).unwrap()),
            "availability" => ("availability", json!(e.body.trim())),
            // The dashboard feed's `info` is not on MQTT: it is a node's info without the
            // node's name and boot.
            "info" => {
                let mut v: Value = serde_json::from_str(&e.body).unwrap();
                v["node"] = json!("hall-server-1");
                v["boot"] = json!(T0.0);
                ("nodeInfo", v)
            }
            "state" => ("state", serde_json::from_str(&e.body).unwrap()),
            "event" => ("boardEvent", serde_json::from_str(&e.body).unwrap()),
            "hall_event" => ("hallEvent", serde_json::from_str(&e.body).unwrap()),
            "response" => ("boardResponse", serde_json::from_str(&e.body).unwrap()),
            "alert" => ("alert", serde_json::from_str(&e.body).unwrap()),
            "command" if m.starts_with("command:board:") => {
                let v: Value = serde_json::from_str(&e.body).unwrap();
                let at = format!(
                    "MQTT-API.md:{} ({m}) against asyncapi.yaml boardCommand",
                    e.line
                );
                validate(&api, schema(&api, "boardCommand"), &v, &at)
                    .unwrap_or_else(|w| panic!("{w}"));
                continue;
            }
            "command" => {
                let v: Value = serde_json::from_str(&e.body).unwrap();
                let at = format!(
                    "MQTT-API.md:{} ({m}) against asyncapi.yaml hallCommand",
                    e.line
                );
                validate(&api, schema(&api, "hallCommand"), &v, &at)
                    .unwrap_or_else(|w| panic!("{w}"));
                continue;
            }
            // The core's own form, not an MQTT message.
            "rejection" => continue,
            // Fields of the state schema (not yet in the daemon's state).
            "view" => {
                let state = resolve(&api, &api["components"]["schemas"]["state"]);
                let v: Value = serde_json::from_str(&e.body).unwrap();
                for (field, value) in v.as_object().unwrap() {
                    let at = format!("MQTT-API.md:{} (view) against asyncapi.yaml state", e.line);
                    if let Err(why) = validate(&api, &state["properties"][field], value, &at) {
                        panic!("{why}");
                    }
                }
                continue;
            }
            other => panic!("MQTT-API.md:{}: unknown marker {other}", e.line),
        };
        let at = format!(
            "MQTT-API.md:{} ({m}) against asyncapi.yaml {message}",
            e.line
        );
        if let Err(why) = validate(&api, message_payload(&api, message), &value, &at) {
            panic!("{why}");
        }
    }
    // A cleared alert is an empty message.
    validate(
        &api,
        message_payload(&api, "alert"),
        &json!(""),
        "cleared alert",
    )
    .unwrap();
    // And the schemas refuse what the daemon refuses or never writes.
    let refused = [
        (
            "openBoardCommand",
            json!({"transaction": "t", "arbiter": "a", "action": "fly"}),
        ),
        (
            "openBoardCommand",
            json!({"transaction": "t", "arbiter": "a", "action": "set_time", "side": "white"}),
        ),
        (
            "boardEvent",
            json!({"board": "b", "seq": 1, "event": "exploded", "at": 0}),
        ),
        (
            "alert",
            json!({"id": "x", "board": null, "kind": "fire", "severity": "info", "message": "", "since": 0}),
        ),
        ("availability", json!("maybe")),
        ("bridgeState", json!("2")),
        ("boardCommandClear", json!(" ")),
        // A signed envelope whose command lacks its `ts`, or is no command.
        (
            "signedBoardCommand",
            json!({"arbiter": "chief", "payload": "{\"transaction\":\"t\",\"action\":\"pause\"}", "sig": "0".repeat(64)}),
        ),
        (
            "signedBoardCommand",
            json!({"arbiter": "chief", "payload": "{\"ts\":1,\"transaction\":\"t\",\"action\":\"fly\"}", "sig": "0".repeat(64)}),
        ),
        (
            "signedHallRequest",
            json!({"arbiter": "viewer", "payload": "{\"ts\":1,\"transaction\":\"t\",\"action\":\"pause\"}", "sig": "0".repeat(64)}),
        ),
    ];
    for (message, value) in refused {
        assert!(
            validate(&api, message_payload(&api, message), &value, message).is_err(),
            "asyncapi.yaml {message} accepts {value}"
        );
    }
}

/// `(kind, template)` of every refusal: its code and its `#[error("template")]` in
/// src/refusal.rs; `None` when the reason is passed on whole (`"{0}"`, `"{reason}"`).
fn daemon_reason_templates() -> Vec<(String, Option<String>)> {
    fn string_literal(s: &str) -> Option<String> {
        let body = s.strip_prefix('"')?;
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Some(out),
                '\\' => out.push(chars.next()?),
                c => out.push(c),
            }
        }
        None
    }
    let mut by_variant = BTreeMap::new();
    for (i, _) in REFUSAL_SOURCE.match_indices("#[error(") {
        let rest = REFUSAL_SOURCE[i + "#[error(".len()..].trim_start();
        let Some(template) = string_literal(rest) else {
            continue;
        };
        // The variant is the first identifier after the attribute.
        let after = &rest[rest.find(")]").unwrap() + 2..];
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        by_variant.insert(name, template);
    }
    all_refusals()
        .iter()
        .map(|r| {
            let name: String = format!("{r:?}")
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .collect();
            let template = by_variant
                .get(&name)
                .filter(|t| {
                    !(t.starts_with('{') && t.ends_with('}') && t.matches('{').count() == 1)
                })
                .cloned();
            (r.code(), template)
        })
        .collect()
}

/// Whether `text` is what `format!(template, ..)` can write.
fn matches_template(template: &str, text: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        parts.push(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        rest = &rest[close..];
    }
    parts.push(rest);
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return text == first;
    }
    let Some(mut tail) = text.strip_prefix(first) else {
        return false;
    };
    for middle in &parts[1..parts.len() - 1] {
        match tail.find(middle) {
            Some(at) => tail = &tail[at + middle.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

#[test]
fn documented_daemon_reasons_are_the_daemons_own() {
    let templates = daemon_reason_templates();
    let rejections: BTreeMap<String, String> = all_rejections()
        .iter()
        .map(|r| (tag(r, "rejection"), r.to_string()))
        .collect();
    // Reasons the hall passes on from elsewhere (`Refusal::BadResult(e)`).
    // And the parser's refusals at the door (issue 11): a 5 MB command, a duplicated key,
    // an instant out of range, as the examples show them.
    let mut big = br#"{"transaction":"big-1","arbiter":"IA","action":"pause","reason":""#.to_vec();
    big.resize(5_000_000, b'x');
    big.extend_from_slice(b"\"}");
    let passed_on = [
        (
            "bad_value",
            ResultName::Resignation
                .to_result(None)
                .unwrap_err()
                .to_string(),
        ),
        ("too_large", parse::<HallAction>(&big).unwrap_err().reason),
        (
            "duplicate_key",
            parse::<BoardAction>(
                br#"{"transaction":"t-0126","arbiter":"IA","action":"add_time","side":"white","side":"black","delta_ms":1}"#,
            )
            .unwrap_err()
            .reason,
        ),
        (
            "out_of_range",
            check_instants(
                &[("start", Instant(Millis(i64::MAX)))],
                Millis(1_796_047_200_000),
            )
            .unwrap_err()
            .to_string(),
        ),
        (
            "past_start",
            hallclock::intake::command::check_past_start(
                Some(("start", Instant(Millis(1_796_047_200_000 - 205_000)))),
                Millis(1_796_047_200_000),
                hallclock::intake::command::DEFAULT_PAST_START_GRACE,
            )
            .unwrap_err()
            .to_string(),
        ),
    ];
    let all = examples();
    for (kind, e) in with_prefix(&all, "response:") {
        if kind == "ok" || kind == "bad_command" {
            continue; // no reason / the parser's, checked above
        }
        let reason = serde_json::from_str::<ResponsePayload>(&e.body)
            .unwrap()
            .reason
            .unwrap_or_default();
        let from_hall = templates
            .iter()
            .any(|(k, t)| k == kind && t.as_deref().is_some_and(|t| matches_template(t, &reason)));
        let from_rules = rejections.get(kind) == Some(&reason);
        let from_elsewhere = passed_on.iter().any(|(k, r)| *k == kind && *r == reason);
        assert!(
            from_hall || from_rules || from_elsewhere,
            "MQTT-API.md:{}: no `{kind}` refusal of the daemon writes {reason:?}",
            e.line
        );
    }
}

// ---------------------------------------------------------------------------------------
// The adjourned games the document's examples come from
// ---------------------------------------------------------------------------------------

/// board-003: a seal at the session end with a draw offer standing, the envelope checked,
/// the resumption with both players present, a declined offer, a time corrected (I.13),
/// the opening.
const BOARD_003: &str = r#"{"at": "13:55:00", "date": "2026-11-30", "input": "setup", "white": "Arias, Eva", "black": "Brandt, Ole", "tc": "40/7200:3600", "start": "14:00:00", "fen": "8/5pk1/6p1/3R4/p7/r5P1/5PK1/8 w - - 0 41"}
{"at": "13:55:00", "input": "set_adjournment_rules", "edition": "guidelines", "notation_language": "en", "resumption_default_time": "1:00:00", "arbiter": "IA Pérez"}
{"at": "13:55:00", "input": "set_session_end", "end": "16:00:00", "arbiter": "IA Pérez"}
{"at": "13:58:00", "input": "present", "side": "white", "arbiter": "IA Pérez"}
{"at": "13:59:00", "input": "present", "side": "black", "arbiter": "IA Pérez"}
{"at": "14:20:00", "input": "press", "move": "Rd7"}
{"at": "15:05:00", "input": "press", "move": "Kf6"}
{"at": "15:40:00", "input": "press", "move": "Rd4"}
{"at": "15:41:00", "input": "draw_offer", "side": "white", "arbiter": "IA Pérez"}
{"at": "16:00:00", "input": "advance"}
{"at": "16:04:00", "input": "seal", "move": "Ke5"}
{"at": "16:06:30", "input": "seal", "move": "Rb3"}
{"at": "16:07:00", "input": "press"}
{"at": "16:07:30", "input": "press", "move": "Rb3"}
{"at": "16:10:00", "input": "schedule_resumption", "start": "2026-12-01 10:00:00", "end": "2026-12-01 14:00:00", "place": "Sala 2", "arbiter": "IA Pérez"}
{"at": "16:12:00", "input": "verify_envelope", "arbiter": "IA Pérez"}
{"at": "2026-12-01 09:55:00", "input": "present", "side": "white", "arbiter": "IA Pérez"}
{"at": "2026-12-01 09:58:00", "input": "present", "side": "black", "arbiter": "IA Pérez"}
{"at": "2026-12-01 10:01:00", "input": "draw_reply", "reply": "decline", "arbiter": "IA Pérez"}
{"at": "2026-12-01 10:02:00", "input": "correct_time", "side": "black", "remaining": "49:00", "arbiter": "IA Pérez", "reason": "I.13: Black's time shown wrong at the resumption"}
{"at": "2026-12-01 10:03:00", "input": "open_envelope", "arbiter": "IA Pérez"}
{"at": "2026-12-01 10:09:00", "input": "press", "move": "Rd6+"}
"#;

/// board-004: adjourned early by the arbiter (I.1.2), the responder absent at the
/// resumption until default time (I.10), an ambiguous sealed move (I.8.1).
const BOARD_004: &str = r#"{"at": "13:55:00", "date": "2026-11-30", "input": "setup", "white": "Weber, Jonas", "black": "Sato, Yuki", "tc": "40/7200:3600", "start": "14:00:00", "fen": "r3k3/8/8/8/8/8/8/1N2KN2 w - - 0 40", "session_end": "16:00:00"}
{"at": "13:55:00", "input": "present", "side": "white", "arbiter": "IA Schmid"}
{"at": "13:55:00", "input": "present", "side": "black", "arbiter": "IA Schmid"}
{"at": "14:30:00", "input": "press", "move": "Kd1"}
{"at": "15:00:00", "input": "press", "move": "Ke7"}
{"at": "15:30:00", "input": "adjourn", "arbiter": "IA Schmid", "resumption": {"start": "2026-12-01 10:00:00", "end": "2026-12-01 14:00:00", "place": "Sala 2"}}
{"at": "15:36:00", "input": "seal", "move": "Nd2"}
{"at": "15:37:00", "input": "commit_seal", "arbiter": "IA Schmid"}
{"at": "2026-12-01 09:58:00", "input": "present", "side": "white", "arbiter": "IA Schmid"}
{"at": "2026-12-01 11:00:00", "input": "advance"}
{"at": "2026-12-01 11:02:00", "input": "open_envelope", "arbiter": "IA Schmid"}
"#;

/// board-005: a lost envelope; the sealer makes the stated move on the board (I.12.1).
const BOARD_005: &str = r#"{"at": "13:55:00", "date": "2026-11-30", "input": "setup", "white": "Novak, Jan", "black": "Ibáñez, Sara", "tc": "40/7200:3600", "start": "14:00:00"}
{"at": "13:58:00", "input": "present", "side": "white", "arbiter": "IA Schmid"}
{"at": "13:59:00", "input": "present", "side": "black", "arbiter": "IA Schmid"}
{"at": "14:05:00", "input": "press", "move": "d4"}
{"at": "14:10:00", "input": "press", "move": "Nf6"}
{"at": "14:20:00", "input": "adjourn", "arbiter": "IA Schmid", "resumption": {"start": "2026-12-01 10:00:00", "place": "Sala 2"}}
{"at": "14:25:00", "input": "seal", "move": "c4"}
{"at": "14:26:00", "input": "press"}
{"at": "2026-12-01 09:30:00", "input": "envelope_lost", "arbiter": "IA Schmid", "reason": "envelope not found in the arbiters' safe"}
{"at": "2026-12-01 09:59:00", "input": "present", "side": "white", "arbiter": "IA Schmid"}
{"at": "2026-12-01 09:59:30", "input": "present", "side": "black", "arbiter": "IA Schmid"}
{"at": "2026-12-01 10:01:00", "input": "move", "move": "c4"}
"#;

/// The boards whose event examples are checked against a game played through the rules
/// core; board-006 is `examples/resume-counter-seal.jsonl` (a counter-seal, I.9.3).
const SCENARIOS: [(&str, &str); 4] = [
    ("board-003", BOARD_003),
    ("board-004", BOARD_004),
    ("board-005", BOARD_005),
    (
        "board-006",
        include_str!("../examples/resume-counter-seal.jsonl"),
    ),
];

/// A scenario played through the rules core as the daemon and `hallclock rules run` play
/// it: time-driven events first, then the line's input; the sealed moves kept and given
/// back at the opening. Steps after `until` are left out; the game is polled up to it.
struct Played {
    events: Vec<Event>,
    game: Game,
}

fn play(script: &str, until: Option<Millis>) -> Played {
    let script = hallclock::script::parse(script).expect("a valid scenario");
    let mut game = Game::new(script.setup.clone()).expect("a valid setup");
    let mut events = Vec::new();
    // commitment, move text, nonce: what the shell keeps of each sealed move
    let mut kept: Vec<(String, String, String)> = Vec::new();
    for step in &script.steps {
        if until.is_some_and(|u| step.at > u) {
            break;
        }
        for e in game.poll(step.at) {
            game.evolve(&e);
            events.push(e);
        }
        let Some(input) = &step.input else { continue };
        let input = match input {
            Input::OpenEnvelope { mv, nonce, arbiter } if mv.is_empty() && nonce.is_empty() => {
                let waiting = game
                    .view(step.at)
                    .adjournment
                    .and_then(|a| a.envelopes.last().map(|e| e.commitment.clone()))
                    .expect("an envelope");
                let (_, mv, nonce) = kept
                    .iter()
                    .find(|k| k.0 == waiting)
                    .expect("a kept seal")
                    .clone();
                Input::OpenEnvelope {
                    mv,
                    nonce,
                    arbiter: arbiter.clone(),
                }
            }
            other => other.clone(),
        };
        if let Input::Seal { mv, nonce, .. } | Input::CounterSeal { mv, nonce } = &input {
            kept.push((commitment(nonce, mv).unwrap(), mv.clone(), nonce.clone()));
        }
        if let Ok(new) = game.decide(&input, step.at) {
            for e in new {
                game.evolve(&e);
                events.push(e);
            }
        }
    }
    if let Some(u) = until {
        for e in game.poll(u) {
            game.evolve(&e);
            events.push(e);
        }
    }
    Played { events, game }
}

/// The adjournment events: each is shown from one of the scenarios.
const ADJOURNMENT_EVENTS: [&str; 16] = [
    "session_end_set",
    "adjournment_rules_set",
    "adjournment_ordered",
    "resumption_scheduled",
    "sealed",
    "seal_committed",
    "envelope_verified",
    "draw_offered",
    "draw_offer_answered",
    "resumption_started",
    "envelope_opened",
    "sealed_move_played",
    "counter_sealed",
    "envelope_lost",
    "time_corrected",
    "result_awaits_envelope",
];

#[test]
fn the_adjournment_examples_are_real() {
    let all = examples();
    let mut shown = BTreeSet::new();
    for (board, script) in SCENARIOS {
        let played = play(script, None);
        for (name, e) in with_prefix(&all, "event:") {
            let p: EventPayload = serde_json::from_str(&e.body).unwrap();
            if p.board != board {
                continue;
            }
            let real = usize::try_from(p.seq)
                .ok()
                .and_then(|seq| played.events.get(seq.wrapping_sub(1)));
            assert_eq!(
                Some(&p.event),
                real,
                "MQTT-API.md:{} ({name}): not the event {board}'s game has at seq {}",
                e.line,
                p.seq
            );
            shown.insert(name.to_string());
        }
    }
    for name in ADJOURNMENT_EVENTS {
        assert!(
            shown.contains(name),
            "MQTT-API.md shows `{name}` from none of the played games {:?}",
            SCENARIOS.map(|s| s.0)
        );
    }
    // The adjourned board's state, and the core's view of it, at the same instant.
    let (_, e) = with_prefix(&all, "state")
        .into_iter()
        .find(|(_, e)| e.body.contains("\"board-003\""))
        .expect("a state of the adjourned board-003");
    let state: StatePayload = serde_json::from_str(&e.body).unwrap();
    let played = play(BOARD_003, Some(state.as_of));
    let view = played.game.view(state.as_of);
    let expected = StatePayload::from_view(
        "board-003",
        played.events.len() as u64,
        &view,
        true,
        Some(3),
        Side::Left,
        (None, None),
        "40/7200:3600".into(),
    );
    assert_eq!(
        state, expected,
        "MQTT-API.md:{}: not board-003's state",
        e.line
    );
    let (_, e) = with_prefix(&all, "view")[0];
    let shown: Value = serde_json::from_str(&e.body).unwrap();
    let full = serde_json::to_value(&view).unwrap();
    let real = json!({
        "draw_offer": full["draw_offer"],
        "session_end": full["session_end"],
        "adjournment": full["adjournment"],
    });
    assert_eq!(
        shown, real,
        "MQTT-API.md:{}: not board-003's view at {}",
        e.line, state.as_of.0
    );
}

/// How each value serialises: its string, or the `verdict` tag of a sealed move's verdict.
fn names<T: Serialize>(values: &[T]) -> Vec<String> {
    values
        .iter()
        .map(|v| match serde_json::to_value(v).unwrap() {
            Value::String(s) => s,
            other => other["verdict"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// The values of the adjournment's enums, each named in the document and in asyncapi.yaml.
#[test]
fn every_adjournment_value_is_documented() {
    let api = asyncapi();
    let verdicts = vec![
        SealedVerdict::Legal {
            uci: "g1f3".into(),
            san: "Nf3".into(),
        },
        SealedVerdict::Ambiguous { candidates: vec![] },
        SealedVerdict::meaningless(hallclock::rules::adjournment::SealedWhy::NotAMove),
        SealedVerdict::illegal(hallclock::rules::adjournment::SealedWhy::NotAMove),
    ];
    covers_every_variant(
        &verdicts,
        |v| match v {
            SealedVerdict::Legal { .. } => 0,
            SealedVerdict::Ambiguous { .. } => 1,
            SealedVerdict::Meaningless { .. } => 2,
            SealedVerdict::Illegal { .. } => 3,
        },
        4,
    );
    let stages = vec![
        Stage::Sealing,
        Stage::Adjourned,
        Stage::AwaitingOpening,
        Stage::Resumed,
        Stage::AwaitingCounterOpening,
    ];
    covers_every_variant(
        &stages,
        |s| match s {
            Stage::Sealing => 0,
            Stage::Adjourned => 1,
            Stage::AwaitingOpening => 2,
            Stage::Resumed => 3,
            Stage::AwaitingCounterOpening => 4,
        },
        5,
    );
    let statuses = vec![
        EnvelopeStatus::Sealed,
        EnvelopeStatus::Opened,
        EnvelopeStatus::ArchivedUnopened,
        EnvelopeStatus::Lost,
    ];
    covers_every_variant(
        &statuses,
        |s| match s {
            EnvelopeStatus::Sealed => 0,
            EnvelopeStatus::Opened => 1,
            EnvelopeStatus::ArchivedUnopened => 2,
            EnvelopeStatus::Lost => 3,
        },
        4,
    );
    let editions = vec![Edition::Guidelines, Edition::AppendixA];
    covers_every_variant(
        &editions,
        |e| match e {
            Edition::Guidelines => 0,
            Edition::AppendixA => 1,
        },
        2,
    );
    let languages = vec![NotationLanguage::En, NotationLanguage::Es];
    covers_every_variant(
        &languages,
        |l| match l {
            NotationLanguage::En => 0,
            NotationLanguage::Es => 1,
        },
        2,
    );
    let lists = [
        ("sealedVerdictKind", names(&verdicts)),
        ("adjournmentStage", names(&stages)),
        ("envelopeStatus", names(&statuses)),
        ("edition", names(&editions)),
        ("notationLanguage", names(&languages)),
    ];
    for (schema, values) in lists {
        let in_api = enum_of(&api, schema);
        let ours: BTreeSet<String> = values.iter().cloned().collect();
        assert_eq!(in_api, ours, "asyncapi.yaml: components.schemas.{schema}");
        for v in values {
            assert!(
                DOC.contains(&format!("`{v}`")),
                "MQTT-API.md does not name the {schema} `{v}`"
            );
        }
    }
}

#[test]
fn the_round_examples_agree_on_the_start() {
    // The first start_round example gives the start as text; the round_started and info
    // examples show it in ms. They describe the same round.
    let all = examples();
    let (_, cmd) = with_prefix(&all, "command:hall:start_round")[0];
    let HallAction::StartRound { start, round, .. } =
        parse::<HallAction>(cmd.body.as_bytes()).unwrap().action
    else {
        panic!("not a start_round")
    };
    let (_, started) = with_prefix(&all, "hall_event:round_started")[0];
    let HallEvent::RoundStarted {
        start: published,
        round: r,
        ..
    } = serde_json::from_str(&started.body).unwrap()
    else {
        panic!("not round_started")
    };
    assert_eq!((published, r), (start.0, round));
    let (_, info) = with_prefix(&all, "info")[0];
    let info: InfoPayload = serde_json::from_str(&info.body).unwrap();
    let ri = info.round.expect("the info example has a round");
    assert_eq!((ri.start, ri.round), (start.0, round));
    assert_eq!(start.0, T0, "the examples' round starts at T0");
}

#[test]
fn the_documented_signature_is_the_daemons() {
    let block = DOC
        .split("<!-- signed envelope -->\n```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("MQTT-API.md shows a signed envelope");
    let v: Value = serde_json::from_str(block).unwrap();
    // The spec's envelope takes it, the command inside included.
    let api = asyncapi();
    validate(
        &api,
        message_payload(&api, "signedBoardCommand"),
        &v,
        "the signed example",
    )
    .unwrap_or_else(|w| panic!("{w}"));
    let key = hallclock::intake::auth::Key::from_hex(
        "8f2c1e5b7a9d3f60c4e8b2a1d7f5c3e9a0b6d4f2e8c1a7b5d3f9e0c2a4b6d8f1",
    )
    .unwrap();
    assert!(DOC.contains(&key.to_hex()), "the key shown is this one");
    let topic = "hallclock/hall-a/board/board-007/set";
    let payload = v["payload"].as_str().unwrap();
    assert_eq!(
        v["sig"].as_str().unwrap(),
        key.sign(topic, payload.as_bytes())
    );
    // And the daemon lets it in at the instant it was signed.
    let mut arbiters = hallclock::intake::auth::Arbiters::default();
    arbiters
        .add(
            "ia-schmid",
            "IA Schmid",
            hallclock::intake::auth::Role::Chief,
            None,
        )
        .unwrap();
    let text = arbiters.to_toml().replace(
        &arbiters.get("ia-schmid").unwrap().key.to_hex(),
        &key.to_hex(),
    );
    let security = hallclock::intake::auth::Security::Signed {
        arbiters: hallclock::intake::auth::Arbiters::parse(&text).unwrap(),
        window: Millis(30_000),
    };
    let admitted = security
        .admit(topic, block.as_bytes(), Millis(1_796_047_200_000))
        .unwrap();
    let c = hallclock::intake::command::parse_as::<BoardAction>(
        &admitted.command,
        Some(("ia-schmid", "IA Schmid")),
    )
    .unwrap();
    assert_eq!(c.arbiter, "IA Schmid");
}

// ---------------------------------------------------------------------------------------
// Message codes (issue 39): every refusal and every coded alert has its words in each
// shipped language, with no placeholder its parameters do not fill
// ---------------------------------------------------------------------------------------

const MESSAGE_CATALOGUES: [(&str, &str); 2] = [
    (
        "en",
        include_str!("../src/web/assets/i18n/messages.en.json"),
    ),
    (
        "es",
        include_str!("../src/web/assets/i18n/messages.es.json"),
    ),
];

fn message_catalogue(text: &str) -> BTreeMap<String, Value> {
    serde_json::from_str(text).expect("a message catalogue is a JSON object")
}

/// `{name}` placeholders of a text, or of every branch of a plural.
fn placeholders(v: &Value) -> BTreeSet<String> {
    let texts: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Object(o) => o.values().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    texts
        .iter()
        .flat_map(|t| t.split('{').skip(1))
        .filter_map(|s| s.split('}').next())
        .map(str::to_string)
        .collect()
}

/// Every refusal the daemon can give, rules core rejections included, one of each.
fn every_refusal() -> Vec<Refusal> {
    let mut all = all_refusals();
    all.extend(all_rejections().into_iter().map(Refusal::Rejected));
    all
}

/// The alert codes the daemon gives: its one list, which `Said::new` holds every raise to.
fn alert_codes_in_source() -> BTreeSet<String> {
    hallclock::alert::ALERT_CODES
        .iter()
        .map(|(c, _)| c.to_string())
        .collect()
}

/// Every code written as `Said::new("…"` in the source is in the list (a raise that no
/// test reaches is caught here, not in a hall).
#[test]
fn every_alert_code_in_the_source_is_listed() {
    fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("src readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                for part in text.split("Said::new(").skip(1) {
                    let part = part.trim_start();
                    // The literal, or the literals of an `if … { "a" } else { "b" }`.
                    let head: &str = part.split(",\n").next().unwrap_or("");
                    let head = if part.starts_with('"') {
                        part.split(',').next().unwrap_or("")
                    } else if part.starts_with("if ") {
                        head
                    } else {
                        ""
                    };
                    out.extend(head.split('"').skip(1).step_by(2).map(str::to_string));
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    let listed = alert_codes_in_source();
    assert!(found.len() > 20, "{found:?}");
    let missing: Vec<&String> = found.iter().filter(|c| !listed.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "alert codes raised but not in ALERT_CODES: {missing:?}"
    );
}

#[test]
fn every_refusal_has_its_words_in_every_shipped_language() {
    let mut problems = Vec::new();
    for (lang, text) in MESSAGE_CATALOGUES {
        let cat = message_catalogue(text);
        for r in every_refusal() {
            let (code, params) = r.said();
            let key = format!("error.{code}");
            match cat.get(&key) {
                None => problems.push(format!(
                    "messages.{lang}.json: no \"{key}\" (params {:?}; English: {r})",
                    params.keys().collect::<Vec<_>>()
                )),
                Some(v) => {
                    for p in placeholders(v) {
                        if !params.contains_key(p.split(',').next().unwrap_or("")) {
                            problems.push(format!(
                                "messages.{lang}.json: \"{key}\" uses {{{p}}}, which this refusal does not give (it gives {:?})",
                                params.keys().collect::<Vec<_>>()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_message_key_is_a_code_the_daemon_gives_and_every_language_has_the_same() {
    let refusals: BTreeSet<String> = every_refusal().iter().map(|r| r.said().0).collect();
    let alerts = alert_codes_in_source();
    assert!(
        alerts.contains("clock_increment") && alerts.contains("time_held.no_clock"),
        "{alerts:?}"
    );
    let (_, en) = MESSAGE_CATALOGUES[0];
    let en = message_catalogue(en);
    let mut problems = Vec::new();
    for key in en.keys().filter(|k| *k != "_meta") {
        let used = match key.split_once('.') {
            Some(("error", code)) => {
                refusals.contains(code) || hallclock::web::error::WEB_ERROR_CODES.contains(&code)
            }
            Some(("alert", code)) => alerts.contains(code),
            // A pending flag's reason (the state's `pending_flag.code`, `pending_code`).
            Some(("flag", code)) => ["claim", "position_unknown", "undecided"].contains(&code),
            _ => false,
        };
        if !used {
            problems.push(format!("messages.en.json: \"{key}\" is no code the daemon gives (alert.<code> or error.<code>)"));
        }
    }
    for code in &alerts {
        if !en.contains_key(&format!("alert.{code}")) {
            problems.push(format!(
                "messages.en.json: no \"alert.{code}\" (the daemon raises it)"
            ));
        }
    }
    for (lang, text) in MESSAGE_CATALOGUES {
        for (key, v) in message_catalogue(text) {
            let Some(code) = key.strip_prefix("alert.") else {
                continue;
            };
            let listed = hallclock::alert::alert_params(code).unwrap_or(&[]);
            for p in placeholders(&v) {
                if !listed.contains(&p.as_str()) {
                    problems.push(format!("messages.{lang}.json: \"{key}\" uses {{{p}}}, which the alert does not give (it gives {listed:?})"));
                }
            }
        }
    }
    for (lang, text) in MESSAGE_CATALOGUES.iter().skip(1) {
        let other = message_catalogue(text);
        for (key, v) in &en {
            match other.get(key) {
                None => problems.push(format!(
                    "messages.{lang}.json: no \"{key}\" (English has it)"
                )),
                Some(o) if placeholders(o) != placeholders(v) => problems.push(format!(
                    "messages.{lang}.json: \"{key}\" has placeholders {:?}, English {:?}",
                    placeholders(o),
                    placeholders(v)
                )),
                _ => {}
            }
        }
        for key in other.keys() {
            if !en.contains_key(key) {
                problems.push(format!("messages.{lang}.json: \"{key}\" is not in English"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The table of message codes in MQTT-API.md, as the daemon has them: every alert code
/// and every refusal code with its parameters, between the markers
/// `<!-- message-codes -->` and `<!-- /message-codes -->`.
fn message_codes_table() -> String {
    let mut rows = vec![
        "| code | on | parameters |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for (code, params) in hallclock::alert::ALERT_CODES {
        rows.push(format!(
            "| `{code}` | alert | {} |",
            param_list(params.iter().copied())
        ));
    }
    let mut refusals: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in every_refusal() {
        let (code, params) = r.said();
        refusals
            .entry(code)
            .or_default()
            .extend(params.keys().cloned());
    }
    for (code, params) in refusals {
        rows.push(format!(
            "| `{code}` | response | {} |",
            param_list(params.iter().map(String::as_str))
        ));
    }
    rows.join("\n")
}

fn param_list<'a>(params: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = params.map(|p| format!("`{p}`")).collect();
    if v.is_empty() {
        "—".into()
    } else {
        v.join(", ")
    }
}

#[test]
fn mqtt_api_lists_every_message_code_with_its_parameters() {
    let doc = include_str!("../docs/MQTT-API.md");
    let table = message_codes_table();
    let between = doc
        .split("<!-- message-codes -->")
        .nth(1)
        .and_then(|s| s.split("<!-- /message-codes -->").next())
        .map(str::trim);
    assert_eq!(
        between,
        Some(table.as_str()),
        "MQTT-API.md's table of message codes is not the daemon's; put this between <!-- message-codes --> and <!-- /message-codes -->:\n{table}"
    );
}
