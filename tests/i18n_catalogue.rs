//! The dashboard's catalogues (`src/web/assets/i18n/*.json`, issue 39): every shipped
//! language has every key and no other, with the same placeholders (each plural branch
//! too); every key is used by the page, literally (`t("key"`, `data-i18n="key"`, a key in
//! an act's table) or as a member of a family the page builds (`t("phase." + x)`), whose
//! values are checked against the Rust types that produce them; and every key the page
//! names literally is in the English catalogue. No browser: the files are read from disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn assets() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/web/assets")
}

/// The shipped languages: every `i18n/<lang>.json`.
fn catalogues() -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(assets().join("i18n")).expect("src/web/assets/i18n") {
        let path = entry.expect("a catalogue").path();
        let lang = path.file_stem().unwrap().to_string_lossy().into_owned();
        // messages.<lang>.json are the daemon's codes (the server side's own files).
        if path.extension().is_some_and(|e| e == "json") && !lang.contains('.') {
            let text = std::fs::read_to_string(&path).unwrap();
            let map: BTreeMap<String, Value> = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not a JSON object: {e}", path.display()));
            out.insert(lang, map);
        }
    }
    assert!(
        out.contains_key("en") && out.contains_key("es"),
        "en and es ship"
    );
    out
}

/// The page's code, by file name: the places a key can be used.
fn code() -> Vec<(&'static str, String)> {
    ["app.js", "board.js", "public.js", "index.html"]
        .into_iter()
        .map(|f| (f, std::fs::read_to_string(assets().join(f)).unwrap()))
        .collect()
}

/// `{name}` placeholders of one message text.
fn placeholders(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(close) = rest.find('}') {
            let name = &rest[..close];
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.insert(name.to_string());
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

/// Each branch of a message (a plain text is the branch "text") with its placeholders.
fn branches(key: &str, lang: &str, v: &Value) -> Vec<(String, BTreeSet<String>)> {
    match v {
        Value::String(s) => vec![("text".to_string(), placeholders(s))],
        Value::Object(m) => {
            assert!(
                m.contains_key("other"),
                "{lang}.json, key {key}: a plural without its `other` branch (Intl.PluralRules falls back to it)"
            );
            m.iter()
                .map(|(cat, t)| {
                    let s = t.as_str().unwrap_or_else(|| {
                        panic!("{lang}.json, key {key}: plural branch {cat} is not a text")
                    });
                    (cat.clone(), placeholders(s))
                })
                .collect()
        }
        _ => panic!("{lang}.json, key {key}: neither a text nor a plural object"),
    }
}

#[test]
fn every_language_has_every_key_and_no_other() {
    let cats = catalogues();
    let en = &cats["en"];
    let mut wrong = Vec::new();
    for (lang, cat) in &cats {
        for key in en.keys().filter(|k| !cat.contains_key(*k)) {
            wrong.push(format!("{lang}.json lacks key {key} (it is in en.json)"));
        }
        for key in cat.keys().filter(|k| !en.contains_key(*k)) {
            wrong.push(format!("{lang}.json has key {key}, which en.json lacks"));
        }
        let name = cat
            .get("_meta")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str);
        if name.is_none_or(str::is_empty) {
            wrong.push(format!(
                "{lang}.json: `_meta.name` (the language's own name) is missing"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn placeholders_are_the_same_in_every_language_and_branch() {
    let cats = catalogues();
    let mut wrong = Vec::new();
    for (key, v) in cats["en"].iter().filter(|(k, _)| *k != "_meta") {
        // The English `other` (or only) text names the parameters the page passes.
        let want = branches(key, "en", v)
            .into_iter()
            .find(|(c, _)| c == "other" || c == "text")
            .map(|(_, p)| p)
            .unwrap_or_default();
        for (lang, cat) in &cats {
            let Some(v) = cat.get(key) else { continue };
            for (branch, got) in branches(key, lang, v) {
                if got != want {
                    wrong.push(format!(
                        "{lang}.json, key {key} ({branch}): placeholders {got:?}, but English has {want:?}"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whether `name` is a variant of `T` as serde names it: a unit enum is a string; an
/// internally tagged one is an object with its `tag` (a variant with fields then fails on a
/// missing field, never on an unknown variant).
fn is_variant<T: DeserializeOwned>(tag: Option<&str>, name: &str) -> bool {
    let v = match tag {
        None => json!(name),
        Some(tag) => json!({ tag: name }),
    };
    match serde_json::from_value::<T>(v) {
        Ok(_) => true,
        Err(e) => !e.to_string().contains("unknown variant"),
    }
}

/// A family of keys the page builds from data (`t("phase." + x)`): its prefix, the values
/// it takes, and where those come from.
struct Family {
    prefix: &'static str,
    values: Vec<&'static str>,
    /// Checks one value against the Rust type that produces it (None: the page's own list).
    check: Option<fn(&str) -> bool>,
    source: &'static str,
    /// Every value must have its key (a value without one would show English or a marker).
    complete: bool,
}

fn families() -> Vec<Family> {
    use hallclock::alert::{AlertKind, Severity};
    use hallclock::intake::auth::Role;
    use hallclock::intake::command::{BoardAction, HallAction};
    use hallclock::rules::Color;
    use hallclock::rules::adjournment::{
        Edition, NotationLanguage, SealedVerdict, SealedWhy, Stage,
    };
    use hallclock::rules::game::{Event, Phase, Termination};
    vec![
        Family {
            prefix: "side.",
            values: vec!["white", "black"],
            check: Some(|v| is_variant::<Color>(None, v)),
            source: "rules::Color",
            complete: true,
        },
        Family {
            prefix: "phase.",
            // "idle" is the payload's board without a game (mqtt/payload.rs), "none" the
            // page's board whose state has not come yet.
            values: vec!["scheduled", "running", "paused", "finished", "idle", "none"],
            check: Some(|v| v == "idle" || v == "none" || is_variant::<Phase>(Some("phase"), v)),
            source: "rules::game::Phase, plus idle (payload) and none (the page)",
            complete: true,
        },
        Family {
            prefix: "stage.",
            values: stages(),
            check: Some(|v| is_variant::<Stage>(None, v)),
            source: "rules::adjournment::Stage",
            complete: true,
        },
        Family {
            prefix: "term.",
            // `arbiter` is said by its kind (res.*), not by a term.* key.
            values: vec![
                "checkmate",
                "stalemate",
                "dead_position",
                "seventy_five_moves",
                "fivefold_repetition",
                "flag",
                "flag_opponent_cannot_mate",
                "default",
                "invalid_sealed_move",
                "invalid_sealed_move_opponent_cannot_mate",
            ],
            check: Some(|v| is_variant::<Termination>(Some("termination"), v)),
            source: "rules::game::Termination",
            complete: true,
        },
        Family {
            prefix: "ev.",
            values: EVENTS.to_vec(),
            check: Some(|v| is_variant::<Event>(Some("event"), v)),
            source: "rules::game::Event",
            complete: true,
        },
        Family {
            prefix: "evf.",
            values: EVENT_FIELDS.to_vec(),
            check: None,
            source: "the fields of rules::game::Event (crates/rules/src/game/event.rs) and what they flatten",
            complete: false,
        },
        Family {
            prefix: "evv.",
            values: vec![
                "how.press",
                "how.arbiter",
                "edition.guidelines",
                "edition.appendix_a",
                "notation_language.en",
                "notation_language.es",
            ],
            check: Some(|v| match v.split_once('.') {
                Some(("how", x)) => x == "press" || x == "arbiter",
                Some(("edition", x)) => is_variant::<Edition>(None, x),
                Some(("notation_language", x)) => is_variant::<NotationLanguage>(None, x),
                _ => false,
            }),
            source: "rules::game::Arrival's `how`, rules::adjournment::{Edition, NotationLanguage}",
            complete: true,
        },
        Family {
            prefix: "verdict.",
            values: vec!["legal", "ambiguous", "meaningless", "illegal"],
            check: Some(|v| is_variant::<SealedVerdict>(Some("verdict"), v)),
            source: "rules::adjournment::SealedVerdict",
            complete: true,
        },
        Family {
            prefix: "trfwarn.",
            values: vec!["not_a_record", "unknown_record", "paired_without_colour"],
            check: Some(|v| {
                // Serialize-only: a sample of each variant says its code.
                let all = [
                    hallclock::trf::TrfWarning::NotARecord {
                        line: 1,
                        text: String::new(),
                    },
                    hallclock::trf::TrfWarning::UnknownRecord {
                        line: 1,
                        code: String::new(),
                    },
                    hallclock::trf::TrfWarning::PairedWithoutColour {
                        line: 1,
                        round: 1,
                        opponent: 1,
                    },
                ];
                all.iter()
                    .any(|w| serde_json::to_value(w).is_ok_and(|j| j["code"] == v))
            }),
            source: "trf::TrfWarning (the TRF review's warning_codes)",
            complete: true,
        },
        Family {
            prefix: "tcwhat.",
            values: vec![
                "seconds_or_moves",
                "seconds_after_slash",
                "seconds_after_plus",
                "seconds_after_star",
                "period_after_colon",
                "colon_plus_or_end",
                "end",
            ],
            check: Some(|v| is_variant::<hallclock::rules::time_control::TcExpected>(None, v)),
            source: "rules::time_control::TcExpected",
            complete: true,
        },
        Family {
            prefix: "tcnote.",
            values: vec!["unknown", "untimed", "hourglass"],
            check: None,
            source: "/api/tc's parts of a control without periods (web/commands.rs, tc_parts)",
            complete: true,
        },
        Family {
            prefix: "sealwhy.",
            values: vec![
                "nothing_written",
                "not_a_piece_letter",
                "unexpected_character",
                "not_a_promotion_piece",
                "not_the_piece_on",
                "not_a_move",
                "not_algebraic",
                "no_legal_move_fits",
                "not_legal_here",
            ],
            check: Some(|v| is_variant::<SealedWhy>(Some("code"), v)),
            source: "rules::adjournment::SealedWhy",
            complete: true,
        },
        // The seal's reading (web/seal_read.rs `as_data`): the moving and taken piece,
        // the promotion piece, the castling wing.
        Family {
            prefix: "seal.piece.",
            values: vec!["king", "queen", "rook", "bishop", "knight", "pawn"],
            check: None,
            source: "web::seal_read::as_data's `role`",
            complete: true,
        },
        Family {
            prefix: "seal.the.",
            values: vec!["king", "queen", "rook", "bishop", "knight", "pawn"],
            check: None,
            source: "web::seal_read::as_data's `capture`",
            complete: true,
        },
        Family {
            prefix: "seal.a.",
            values: vec!["queen", "rook", "bishop", "knight"],
            check: None,
            source: "web::seal_read::as_data's `promotion`",
            complete: true,
        },
        Family {
            prefix: "seal.words.castle.",
            values: vec!["kingside", "queenside"],
            check: None,
            source: "web::seal_read::as_data's `castle`",
            complete: true,
        },
        Family {
            prefix: "letters.table.",
            values: vec!["en", "es"],
            check: Some(|v| is_variant::<NotationLanguage>(None, v)),
            source: "rules::adjournment::NotationLanguage",
            complete: true,
        },
        Family {
            prefix: "kind.",
            values: alert_kinds(),
            check: Some(|v| is_variant::<AlertKind>(None, v)),
            source: "alert::AlertKind",
            complete: true,
        },
        Family {
            prefix: "sev.",
            values: vec!["info", "warning", "critical"],
            check: Some(|v| is_variant::<Severity>(None, v)),
            source: "alert::Severity",
            complete: true,
        },
        Family {
            prefix: "role.",
            values: vec!["chief", "arbiter", "viewer"],
            check: Some(|v| is_variant::<Role>(None, v)),
            source: "intake::auth::Role",
            complete: true,
        },
        Family {
            prefix: "done.",
            values: DONE.to_vec(),
            check: Some(|v| {
                is_variant::<BoardAction>(Some("action"), v)
                    || is_variant::<HallAction>(Some("action"), v)
            }),
            source: "the actions the page sends: intake::command::{BoardAction, HallAction}",
            complete: true,
        },
        Family {
            prefix: "count.",
            values: vec![
                "running",
                "flag",
                "paused",
                "sealing",
                "adjourned",
                "scheduled",
                "finished",
                "idle",
                "none",
            ],
            check: None,
            source: "app.js's phaseKey (COUNT_ORDER)",
            complete: true,
        },
        Family {
            prefix: "show.",
            values: vec![
                "all",
                "running",
                "paused",
                "scheduled",
                "finished",
                "alerts",
                "offline",
            ],
            check: None,
            source: "the hall's filter (app.js, hallView)",
            complete: true,
        },
        Family {
            prefix: "tc.",
            values: vec![
                "game",
                "rest",
                "moves",
                "every",
                "hourglass",
                "untimed",
                "unknown",
            ],
            check: None,
            source: "/api/tc's parts (web/commands.rs, tc_parts)",
            complete: true,
        },
    ]
}

/// Every adjournment stage; the match fails to compile when one is added (say it, then).
fn stages() -> Vec<&'static str> {
    use hallclock::rules::adjournment::Stage::*;
    [
        Sealing,
        Adjourned,
        AwaitingOpening,
        AwaitingCounterOpening,
        Resumed,
    ]
    .into_iter()
    .map(|s| match s {
        Sealing => "sealing",
        Adjourned => "adjourned",
        AwaitingOpening => "awaiting_opening",
        AwaitingCounterOpening => "awaiting_counter_opening",
        Resumed => "resumed",
    })
    .collect()
}

/// Every alert kind; the match fails to compile when one is added (give it its words).
fn alert_kinds() -> Vec<&'static str> {
    use hallclock::alert::AlertKind::{self, *};
    let name = |k: AlertKind| match k {
        Offline => "offline",
        Port => "port",
        ClockMode => "clock_mode",
        ClockCommand => "clock_command",
        ClockDiscrepancy => "clock_discrepancy",
        PlayerPause => "player_pause",
        StrayPress => "stray_press",
        ResultPending => "result_pending",
        BothFlags => "both_flags",
        Irregular => "irregular",
        MoveRejected => "move_rejected",
        Storage => "storage",
        BoardMoved => "board_moved",
        OutgoingQueue => "outgoing_queue",
        ResultShown => "result_shown",
        AuthFailures => "auth_failures",
        BroadcastPush => "broadcast_push",
        BoardClaimedTwice => "board_claimed_twice",
        LowBattery => "low_battery",
        ClockButtons => "clock_buttons",
        ClockSkew => "clock_skew",
        ClockIncrement => "clock_increment",
        ClockJump => "clock_jump",
        ClockStopped => "clock_stopped",
        ClockFlag => "clock_flag",
        ClockPresses => "clock_presses",
        ServerClock => "server_clock",
        TimeHeld => "time_held",
        Broker => "broker",
    };
    let all = [
        Offline,
        Port,
        ClockMode,
        ClockCommand,
        ClockDiscrepancy,
        PlayerPause,
        StrayPress,
        ResultPending,
        BothFlags,
        Irregular,
        MoveRejected,
        Storage,
        BoardMoved,
        OutgoingQueue,
        ResultShown,
        AuthFailures,
        BroadcastPush,
        BoardClaimedTwice,
        LowBattery,
        ClockButtons,
        ClockSkew,
        ClockIncrement,
        ClockJump,
        ClockStopped,
        ClockFlag,
        ClockPresses,
        ServerClock,
        TimeHeld,
        Broker,
    ];
    // The name written here is serde's (a typo would be another kind's words).
    for k in all {
        assert_eq!(
            serde_json::to_value(k).unwrap(),
            json!(name(k)),
            "kind.* names"
        );
    }
    all.into_iter().map(name).collect()
}

/// The events the rules publish (rules::game::Event's tags).
const EVENTS: [&str; 37] = [
    "clock_started",
    "player_present",
    "default_time_passed",
    "move_made",
    "pressed",
    "period_advanced",
    "flag_fell",
    "result_pending",
    "both_flags_order_unknown",
    "clock_discrepancy",
    "clock_times_adopted",
    "discrepancy_acknowledged",
    "paused_by_player",
    "paused",
    "resumed",
    "time_set",
    "time_added",
    "moves_set",
    "position_set",
    "clock_replaced",
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
    "game_ended",
];

/// The fields an event's log line names (those app.js's eventText does not skip).
const EVENT_FIELDS: [&str; 43] = [
    "side",
    "charged_ms",
    "increment_ms",
    "remaining_ms",
    "moves",
    "period",
    "added_ms",
    "forfeited_ms",
    "moves_made",
    "moves_required",
    "frozen",
    "reason",
    "white_ms",
    "black_ms",
    "reckoned_white_ms",
    "reckoned_black_ms",
    "arbiter",
    "previous_ms",
    "delta_ms",
    "device",
    "end",
    "rules",
    "edition",
    "notation_language",
    "resumption_default_time",
    "sealer",
    "early",
    "start",
    "place",
    "on_board",
    "charged_to",
    "accepted",
    "responder",
    "move_text",
    "verdict",
    "how",
    "absent",
    "san",
    "replaces",
    "confirmed_by",
    "score",
    "termination",
    "kind",
];

/// The actions the page sends (its act tables, its alerts' buttons, the round form).
const DONE: [&str; 29] = [
    "pause",
    "resume",
    "present",
    "add_time",
    "set_time",
    "set_moves",
    "replace_clock",
    "swap_sides",
    "set_mode",
    "confirm_flag",
    "set_result",
    "set_position",
    "adjourn",
    "seal",
    "commit_seal",
    "verify_envelope",
    "schedule_resumption",
    "set_session_end",
    "draw_offer",
    "draw_reply",
    "open_envelope",
    "set_adjournment_rules",
    "counter_seal",
    "envelope_lost",
    "correct_time",
    "acknowledge_alert",
    "seal_all",
    "start_round",
    "announce",
];

/// Key namespaces the server's own messages hold (messages.<lang>.json): the page asks for
/// them when the daemon sends a code, and they are not in the page's catalogues.
const SERVER_FAMILIES: [&str; 3] = ["alert.", "error.", "flag."];

#[test]
fn family_values_are_what_the_rust_types_produce() {
    let mut wrong = Vec::new();
    for f in families() {
        if let Some(check) = f.check {
            for v in &f.values {
                if !check(v) {
                    wrong.push(format!(
                        "family {}: value {v} is not produced by {} (renamed or gone?)",
                        f.prefix, f.source
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Keys the code names literally: `t("key"`, `data-i18n…="key"`, and any quoted text
/// shaped like a key of one of the catalogue's namespaces (the act tables hold keys).
fn literal_keys(
    code: &[(&'static str, String)],
    namespaces: &BTreeSet<String>,
) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (file, text) in code {
        for piece in text.split('"').skip(1).step_by(2) {
            let Some((ns, rest)) = piece.split_once('.') else {
                continue;
            };
            let shaped = !rest.is_empty()
                && !rest.ends_with('.')
                && piece
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
            if shaped && namespaces.contains(ns) && !rest.ends_with("js") && !rest.ends_with("css")
            {
                out.push((piece.to_string(), *file));
            }
        }
    }
    out
}

#[test]
fn every_key_is_used_and_every_used_key_exists() {
    let cats = catalogues();
    let en = &cats["en"];
    let code = code();
    let families = families();
    let namespaces: BTreeSet<String> = en
        .keys()
        .filter_map(|k| k.split_once('.').map(|(ns, _)| ns.to_string()))
        .collect();
    let literal = literal_keys(&code, &namespaces);
    let literal_set: BTreeSet<&str> = literal.iter().map(|(k, _)| k.as_str()).collect();
    let mut wrong = Vec::new();
    for key in en.keys().filter(|k| *k != "_meta") {
        if literal_set.contains(key.as_str()) {
            continue;
        }
        match families.iter().find(|f| key.starts_with(f.prefix)) {
            Some(f) if f.values.contains(&&key[f.prefix.len()..]) => {}
            Some(f) => wrong.push(format!(
                "en.json, key {key}: in family {} but {} is not one of its values ({}); the page never asks for it",
                f.prefix,
                &key[f.prefix.len()..],
                f.source
            )),
            None => wrong.push(format!(
                "en.json, key {key}: no code uses it (not in app.js, board.js or index.html, nor a family's)"
            )),
        }
    }
    for f in families.iter().filter(|f| f.complete) {
        for v in &f.values {
            let key = format!("{}{v}", f.prefix);
            if !en.contains_key(&key) {
                wrong.push(format!(
                    "en.json lacks key {key}: {} takes the value {v} ({}) and the page would show it untranslated",
                    f.prefix, f.source
                ));
            }
        }
    }
    for (key, file) in &literal {
        if !en.contains_key(key) && !SERVER_FAMILIES.iter().any(|p| key.starts_with(p)) {
            wrong.push(format!(
                "{file} uses key {key}, which en.json lacks (the page would show `!en: {key}`)"
            ));
        }
    }
    // The page's own `t(…)` calls with a literal key, whatever its namespace.
    for (file, text) in &code {
        for piece in text.split("t(\"").skip(1) {
            let key = piece.split('"').next().unwrap_or("");
            let is_key = key.contains('.') && !key.ends_with('.');
            if is_key
                && !en.contains_key(key)
                && !SERVER_FAMILIES.iter().any(|p| key.starts_with(p))
            {
                wrong.push(format!("{file} calls t(\"{key}\"), which en.json lacks"));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
