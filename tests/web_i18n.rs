//! The dashboard in Spanish (issue 39), in a real headless Chromium set up in Spanish
//! (`--lang=es-ES`, `Accept-Language: es-ES,es`) against the real daemon: the login page,
//! the hall, a board in each phase (waiting for its start, running, paused, a flag waiting
//! for the arbiter, sealing, adjourned, finished), the round page, the alerts page (a flag
//! fell) and `/public`. No page may show a text of the English catalogue that is not also
//! the Spanish one ("Hall" for "Sala"), a `!es:` missing-key marker, or a sentence that
//! reads as English; `<html lang="es">` throughout. Names, moves, numbers and ids are not
//! words of a catalogue, so they pass. Screenshots of the hall, a board and /public in
//! Spanish at 1366×768 and 390×844 go to target/web-screenshots (look at them).

mod common;
mod webcommon;

use std::collections::BTreeMap;

use common::{Rig, board_id};
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};
use webcommon::{Chrome, dashboard, log_in, press};

/// Every text the page shows a person: each text node (closed `<details>` and options
/// too: a click away), and each aria-label, title and placeholder.
const COLLECT: &str = r#"
const out = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const n = walker.currentNode;
  const p = n.parentElement;
  if (!p || p.closest('script, style')) continue;
  const s = n.textContent.trim();
  if (s) out.push(s);
}
for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
  for (const a of ['aria-label', 'title', 'placeholder']) {
    const v = el.getAttribute(a);
    if (v && v.trim()) out.push(v.trim());
  }
}
out.push(document.title);
return {texts: out, lang: document.documentElement.lang};
"#;

/// The English catalogue's texts that Spanish says otherwise: whole texts, and templates
/// (`{count} running`) as patterns over a whole text.
struct English {
    exact: BTreeMap<String, String>,
    templates: Vec<(String, Template, Template)>,
}

fn catalogue(lang: &str) -> BTreeMap<String, Value> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("src/web/assets/i18n/{lang}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every text of a message (each plural branch).
fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Object(m) => m
            .values()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => vec![],
    }
}

/// A template as a pattern over a whole text: its literal pieces in order, each
/// placeholder at least one character between them.
struct Template(Vec<String>);

fn pattern(template: &str) -> Template {
    let mut parts = vec![String::new()];
    let mut depth = 0;
    for c in template.chars() {
        match c {
            '{' => {
                depth += 1;
                parts.push(String::new());
            }
            '}' => depth -= 1,
            _ if depth == 0 => parts.last_mut().unwrap().push(c),
            _ => {}
        }
    }
    Template(parts)
}

impl Template {
    /// Glob matching, each placeholder taking the leftmost place its next piece allows.
    fn is_match(&self, text: &str) -> bool {
        let parts = &self.0;
        let Some(rest) = text.strip_prefix(parts[0].as_str()) else {
            return false;
        };
        if parts.len() == 1 {
            return rest.is_empty();
        }
        let mut rest = rest;
        for piece in &parts[1..parts.len() - 1] {
            // At least one character for the placeholder before this piece.
            let Some(first) = rest.chars().next() else {
                return false;
            };
            let after = &rest[first.len_utf8()..];
            match after.find(piece.as_str()) {
                Some(i) => rest = &after[i + piece.len()..],
                None => return false,
            }
        }
        let last = &parts[parts.len() - 1];
        rest.len() > last.len() && rest.ends_with(last.as_str())
    }
}

fn english() -> English {
    let (en, es) = (catalogue("en"), catalogue("es"));
    let mut exact = BTreeMap::new();
    let mut templates = Vec::new();
    for (key, v) in en.iter().filter(|(k, _)| *k != "_meta") {
        let spanish: Vec<String> = es.get(key).map(texts).unwrap_or_default();
        for text in texts(v) {
            if spanish.contains(&text) {
                continue; // the same word in both languages ("FEN", "control")
            }
            if text.contains('{') {
                // Only templates with words of their own: "{who} ({side})" says nothing.
                let literal: String = pattern_literal(&text);
                let words = literal
                    .split_whitespace()
                    .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
                    .count();
                if words >= 2 {
                    let es_re = spanish
                        .first()
                        .map(|s| pattern(s))
                        .unwrap_or_else(|| pattern("\u{0}"));
                    templates.push((key.clone(), pattern(&text), es_re));
                }
            } else {
                exact.insert(text, key.clone());
            }
        }
    }
    English { exact, templates }
}

/// A template's own words (its placeholders left out).
fn pattern_literal(template: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in template.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Words that only English uses; a text with two of them reads as an English sentence
/// (the daemon's messages that have no code yet show up here).
const ENGLISH_WORDS: [&str; 14] = [
    "the", "and", "is", "of", "to", "was", "with", "for", "on", "by", "not", "this", "has", "are",
];

fn reads_english(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words
        .iter()
        .filter(|w| ENGLISH_WORDS.contains(&w.as_str()))
        .count()
        >= 2
}

/// What is English on the page shown: (text, why), one per text.
async fn english_on(chrome: &Chrome, en: &English) -> (Vec<String>, String) {
    let got = chrome.js(COLLECT).await;
    let lang = got["lang"].as_str().unwrap_or("").to_string();
    let mut found = Vec::new();
    for text in got["texts"].as_array().into_iter().flatten() {
        let text = text.as_str().unwrap_or("");
        // A status line joins its parts with " · ": each part is a text of its own.
        for part in std::iter::once(text).chain(text.split(" · ")) {
            let part = part.trim();
            if part.contains("!es:") || part.contains("!en:") {
                found.push(format!("{part:?}: a key missing from the catalogue"));
            } else if let Some(key) = en.exact.get(part) {
                found.push(format!("{part:?}: English (en.json {key})"));
            } else if let Some((key, _, _)) = en
                .templates
                .iter()
                .find(|(_, re, es)| re.is_match(part) && !es.is_match(part))
            {
                found.push(format!("{part:?}: English (en.json {key})"));
            } else if reads_english(part) {
                found.push(format!(
                    "{part:?}: reads as English (no catalogue key: the server's words?)"
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    (found, lang)
}

/// A hall of seven boards with a round starting `in_ms` from now on boards 1–6 (board 7
/// has no game), and its dashboard.
async fn hall(name: &str) -> (Rig, hallclock::web::RunningWeb) {
    let mut rig = Rig::start_with(name, 7, GameDefaults::default()).await;
    let web = dashboard(&rig).await;
    let r = rig
        .start_round(6, "600", 15_000, json!({"flag_mode": "claim"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    (rig, web)
}

/// Once the round has started: 1 running, 2 paused, 3 a flag waiting (claim mode), 4
/// ordered to seal, 5 adjourned, 6 finished with a result.
async fn every_phase(rig: &mut Rig) {
    for n in 1..=6 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    let commands = [
        (2, json!({"action": "pause", "reason": "ruido"})),
        (
            3,
            json!({"action": "set_time", "side": "white", "remaining_ms": 1500, "reason": "prueba"}),
        ),
        (4, json!({"action": "adjourn"})),
        (5, json!({"action": "adjourn"})),
        (5, json!({"action": "seal", "mv": "e4"})),
        (5, json!({"action": "commit_seal"})),
        (
            6,
            json!({"action": "set_result", "result": "resignation", "side": "black", "reason": "abandono"}),
        ),
        (
            1,
            json!({"action": "add_time", "side": "black", "delta_ms": 30000, "reason": "7.5.5"}),
        ),
    ];
    for (n, cmd) in commands {
        let r = rig.board_command(&board_id(n), cmd.clone()).await;
        assert_eq!(r["status"], "ok", "board {n}, {cmd}: {r}");
    }
    rig.watcher.event(&board_id(3), "result_pending").await;
}

/// The pages after the round started: (name, path, what says it is drawn).
fn pages() -> Vec<(String, String, String)> {
    let phases = [
        (1, "running", "pause"),
        (2, "paused", "resume"),
        (3, "flag", "confirm_flag"),
        (4, "sealing", "seal"),
        (5, "adjourned", "verify_envelope"),
        (6, "finished", "set_result"),
        (7, "idle", "set_position"),
    ];
    let mut out = vec![(
        "hall".to_string(),
        "/".to_string(),
        "document.querySelectorAll('#tiles .tile').length === 7 && [...store.boards.values()].every(b => b.state)".to_string(),
    )];
    for (n, phase, act) in phases {
        out.push((
            format!("board {phase}"),
            format!("/board/{}", board_id(n)),
            format!(
                "document.querySelector('#acts-now form:first-child[data-action={act}]') && document.querySelector('#log .ev, #moves td') !== undefined"
            ),
        ));
    }
    out.push((
        "round".into(),
        "/round".into(),
        "document.querySelector('#round-summary tr[data-board]') && document.getElementById('tc-desc').textContent".into(),
    ));
    out.push((
        "alerts".into(),
        "/alerts".into(),
        "document.querySelector('#alerts .alert[data-kind=result_pending]')".into(),
    ));
    out
}

/// Look at one page: its language and what of it is English.
async fn look(chrome: &Chrome, en: &English, name: &str, failures: &mut Vec<String>) {
    let (found, lang) = english_on(chrome, en).await;
    if lang != "es" {
        failures.push(format!("{name}: <html lang={lang:?}>, not \"es\""));
    }
    for f in found {
        failures.push(format!("{name}: {f}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_is_spanish_in_a_spanish_browser() {
    let en = english();
    let (mut rig, web) = hall("web-i18n").await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start_with_lang("web-i18n", 1366, 768, "es-ES").await;
    let mut failures = Vec::new();
    // The login page, before any session: the browser's language alone.
    chrome.client.goto(&format!("{base}/login")).await.unwrap();
    chrome
        .until("the login form", "document.querySelector('#login h1')")
        .await;
    look(&chrome, &en, "login", &mut failures).await;
    log_in(&chrome, &base, "chief").await;
    // Before the round's start: a board waiting for it (6.5), and the hall.
    let waiting = format!(
        "location.pathname === '/board/{}' && store.boards.get('{}').state && store.boards.get('{}').state.phase === 'scheduled' && document.querySelector('#acts-now form')",
        board_id(1),
        board_id(1),
        board_id(1)
    );
    chrome
        .client
        .goto(&format!("{base}/board/{}", board_id(1)))
        .await
        .unwrap();
    chrome
        .until("board 1 waiting for its start", &waiting)
        .await;
    look(&chrome, &en, "board waiting", &mut failures).await;
    // The round's start (the rig waits for each board's clock_started from here).
    chrome
        .until(
            "the round's start",
            &format!(
                "store.boards.get('{}').state.phase === 'running'",
                board_id(6)
            ),
        )
        .await;
    every_phase(&mut rig).await;
    for (name, path, ready) in pages() {
        chrome.client.goto(&format!("{base}{path}")).await.unwrap();
        chrome.until(&name, &ready).await;
        // The feed's later messages (a log line, the banner) come within a moment.
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        look(&chrome, &en, &name, &mut failures).await;
        if name == "hall" || name == "board running" {
            chrome
                .shot(&format!("es-{}-1366", name.replace(' ', "-")))
                .await;
        }
        if name == "board sealing" {
            seal_read_back(&chrome, &mut failures).await;
        }
        if name == "alerts" {
            every_alert_code_said(&chrome, &mut failures).await;
        }
        if name == "round" {
            time_control_said(&chrome, &mut failures).await;
            pairing_refused(&chrome, &mut failures).await;
            trf_review_said(&chrome, &mut failures).await;
        }
        // Every act's form, opened: the rarely used ones are words too.
        if name.starts_with("board") {
            chrome
                .js("document.querySelectorAll('details').forEach(d => d.open = true); return true;")
                .await;
            look(&chrome, &en, &format!("{name} (every act)"), &mut failures).await;
        }
    }
    // The public screen: no session needed, the browser's language.
    chrome.client.goto(&format!("{base}/public")).await.unwrap();
    chrome
        .until(
            "the public screen",
            "document.querySelectorAll('#tiles .tile').length >= 6 && document.querySelector('.pubtitle').textContent",
        )
        .await;
    look(&chrome, &en, "public", &mut failures).await;
    chrome.shot("es-public-1366").await;
    chrome.close().await;
    failures.extend(narrow_shots(&base).await);
    assert!(
        failures.is_empty(),
        "English on the Spanish pages, or a page too wide for them ({}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The seal's reading back (I.8), in Spanish: a letter of another language refused in
/// words, and a move said back with its piece's name, from the server's data.
async fn seal_read_back(chrome: &Chrome, failures: &mut Vec<String>) {
    let form = "#acts-now form[data-action=seal]";
    for (mv, wanted, shown) in [
        ("Cf3", "no es una letra de pieza de este torneo", ".reply"),
        (
            "Nf3",
            "Blancas: caballo de g1 a f3 — Caballo g1–f3",
            ".confirm",
        ),
        (
            "Nf5",
            "no se puede jugar aquí: ninguna jugada legal corresponde a Nf5",
            ".confirm",
        ),
    ] {
        chrome
            .js(&format!(
                "const f = document.querySelector('{form}'); f.querySelector('.confirm').hidden = true; f.querySelector('.reply').textContent = ''; f.querySelector('input[name=mv]').value = {mv:?}; return true;"
            ))
            .await;
        press(
            chrome,
            &format!("{form} button[type=submit]"),
            "the seal button",
        )
        .await;
        let said = chrome
            .until(
                &format!("the reading of {mv}"),
                &format!(
                    "(e => e && !e.hidden && e.textContent)(document.querySelector('{form} {shown}'))"
                ),
            )
            .await;
        let said = said.as_str().unwrap_or("");
        if mv == "Nf3" {
            chrome.shot("es-seal-confirm-1366").await;
        }
        if !said.contains(wanted) {
            failures.push(format!("the seal of {mv:?} reads {said:?}, not {wanted:?}"));
        }
    }
    // Nothing sealed: the confirmation is cancelled.
    press(
        chrome,
        &format!("{form} .confirm button:not(.primary)"),
        "cancel",
    )
    .await;
}

/// Every alert code the daemon gives (hall-level ones included: a walk raises only some),
/// said by the page itself from sample parameters: Spanish words for each, every
/// placeholder filled, nothing thrown.
async fn every_alert_code_said(chrome: &Chrome, failures: &mut Vec<String>) {
    let codes: Vec<Value> = hallclock::alert::ALERT_CODES
        .iter()
        .map(|(code, params)| {
            let params: serde_json::Map<String, Value> = params
                .iter()
                .map(|p| {
                    let v = match *p {
                        p if p.ends_with("_ms") => json!(90_000),
                        "at" | "now" | "since" | "last_known" | "deadline" => {
                            json!(1_796_047_200_000_i64)
                        }
                        "side" | "running" | "sealer" | "responder" => json!("white"),
                        "count" | "failures" | "round" | "games" | "max" | "status" => json!(2),
                        _ => json!(format!("x-{p}")),
                    };
                    (p.to_string(), v)
                })
                .collect();
            json!({"code": code, "params": params})
        })
        .collect();
    let said = chrome
        .js(&format!(
            "return {}.map(a => {{ try {{ return [a.code, alertMessage({{...a, kind: a.code.split('.')[0], message: 'ENGLISH'}})]; }} catch (e) {{ return [a.code, 'threw ' + e]; }} }});",
            Value::Array(codes)
        ))
        .await;
    let said = said.as_array().cloned().unwrap_or_default();
    if said.len() < 80 {
        failures.push(format!("only {} alert codes said on the page", said.len()));
    }
    for pair in said {
        let code = pair[0].as_str().unwrap_or("?");
        let text = pair[1].as_str().unwrap_or("");
        if text == "ENGLISH"
            || text.starts_with("!es")
            || text.starts_with("threw")
            || text.contains('{')
        {
            failures.push(format!("alert {code} reads {text:?} on the Spanish page"));
        }
    }
}

/// The round's time control checked as it is typed: the reader's complaint and a note on
/// a control no clock runs on, in Spanish from their codes.
async fn time_control_said(chrome: &Chrome, failures: &mut Vec<String>) {
    for (tc, wanted) in [
        (
            "40/",
            "se esperaba un número de segundos tras '/' en el carácter 4",
        ),
        ("?", "el ritmo es desconocido"),
        (
            "90x",
            "se esperaba ':' entre periodos, '+' o el final y hay «x» en el carácter 3",
        ),
    ] {
        chrome
            .js(&format!(
                "document.getElementById('tc-desc').textContent = ''; const i = document.getElementById('round-tc'); i.value = {tc:?}; i.dispatchEvent(new Event('input')); return true;"
            ))
            .await;
        let said = chrome
            .until(
                &format!("the time control {tc:?} said"),
                "document.getElementById('tc-desc').textContent",
            )
            .await;
        let said = said.as_str().unwrap_or("");
        if !said.contains(wanted) {
            failures.push(format!(
                "the time control {tc:?} reads {said:?}, not {wanted:?}"
            ));
        }
    }
    chrome
        .js("const i = document.getElementById('round-tc'); i.value = '600'; i.dispatchEvent(new Event('input')); return true;")
        .await;
}

/// A pairing program's file reviewed: the lines the reader skipped, in Spanish from their
/// codes (FIDE's example layout, with rulers and its format line).
async fn trf_review_said(chrome: &Chrome, failures: &mut Vec<String>) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/trf/fide-example-rulers.trf");
    chrome
        .js("const n = document.querySelector('#start-round [name=round]'); n.value = '2'; n.dispatchEvent(new Event('input', { bubbles: true })); return true;")
        .await;
    let input = chrome
        .client
        .find(fantoccini::Locator::Css("#trf-file"))
        .await
        .expect("the TRF field");
    input
        .send_keys(&file.display().to_string())
        .await
        .expect("choose the file");
    let skipped = chrome
        .until(
            "the lines the reader skipped",
            "document.querySelector('#trf-review .trf-warnings') && document.querySelector('#trf-review .trf-warnings').textContent",
        )
        .await;
    let skipped = skipped.as_str().unwrap_or("");
    for wanted in [
        "línea 13: no es un registro TRF",
        "línea 12: código de registro desconocido «DDD»",
    ] {
        if !skipped.contains(wanted) {
            failures.push(format!("the TRF review says {skipped:?}, not {wanted:?}"));
        }
    }
}

/// A round refused for one of its pairings: the pairing counted as the arbiter counts,
/// in Spanish (the refusal's `at`, the daemon's 0-based `pairings[1]`).
async fn pairing_refused(chrome: &Chrome, failures: &mut Vec<String>) {
    let json = r#"[{"board":"board-001","white":"A","black":"B"},{"board":"board-009","white":"C","black":"D"}]"#;
    chrome
        .js(&format!(
            "document.querySelector('#start-round [name=pairings_json]').value = {json:?}; document.getElementById('round-reply').textContent = ''; return true;"
        ))
        .await;
    press(chrome, "#start-round button[type=submit]", "Start round").await;
    let reply = chrome
        .until(
            "the pasted pairings' refusal",
            "(t => t && t !== '…' && t)(document.getElementById('round-reply').textContent)",
        )
        .await;
    let reply = reply.as_str().unwrap_or("");
    let wanted = "emparejamiento 2: tablero desconocido 'board-009'";
    if !reply.contains(wanted) {
        failures.push(format!("a refused pairing reads {reply:?}, not {wanted:?}"));
    }
    chrome
        .js("document.querySelector('#start-round [name=pairings_json]').value = ''; return true;")
        .await;
}

/// The hall, a board and /public on a phone in Spanish (longer words): screenshots, no
/// page wider than the screen, a one-line header.
async fn narrow_shots(base: &str) -> Vec<String> {
    let chrome = Chrome::start_with_lang("web-i18n-phone", 1366, 768, "es-ES").await;
    // Chromium's window does not start narrower than 500 px: made so after the start.
    chrome.client.set_window_size(390, 844).await.unwrap();
    log_in(&chrome, base, "chief").await;
    let mut wide = Vec::new();
    for (name, path, ready) in [
        (
            "hall",
            "/".to_string(),
            "document.querySelectorAll('#tiles .tile').length === 7",
        ),
        (
            "board",
            format!("/board/{}", board_id(3)),
            "document.querySelector('#acts-now form')",
        ),
        (
            "public",
            "/public".to_string(),
            "document.querySelectorAll('#tiles .tile').length >= 6",
        ),
    ] {
        chrome.client.goto(&format!("{base}{path}")).await.unwrap();
        chrome.until(name, ready).await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        chrome.shot(&format!("es-{name}-390")).await;
        let w = chrome
            .js("return document.documentElement.scrollWidth - window.innerWidth;")
            .await;
        if w.as_i64().unwrap_or(0) > 0 {
            wide.push(format!("{name} at 390 px: {w} px wider than the screen"));
        }
        // The header stays one line with the longer Spanish words (web_axe's 56 px).
        let head = chrome
            .js("return document.getElementById('top').getBoundingClientRect().height;")
            .await;
        if head.as_f64().unwrap_or(0.0) > 56.0 {
            wide.push(format!(
                "{name}: the header is {head} px high (more than one line)"
            ));
        }
    }
    chrome.close().await;
    wide
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_selector_keeps_the_choice_in_the_session() {
    let rig = Rig::start_with("web-i18n-choice", 1, GameDefaults::default()).await;
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start_with_lang("web-i18n-choice", 1366, 768, "es-ES").await;
    // On the login page (no session) the choice is the address's ?lang=.
    chrome.client.goto(&format!("{base}/login")).await.unwrap();
    chrome
        .until(
            "the selector",
            "document.querySelector('#lang-box:not([hidden]) #lang')",
        )
        .await;
    chrome
        .js("const s = document.getElementById('lang'); s.value = 'en'; s.dispatchEvent(new Event('change')); return true;")
        .await;
    chrome
        .until(
            "the login page in English",
            "location.search === '?lang=en' && document.documentElement.lang === 'en' && document.querySelector('#login h1')",
        )
        .await;
    let h1 = chrome
        .js("return document.querySelector('#login h1').textContent;")
        .await;
    assert_eq!(h1, json!("Arbiter login"));
    // Logged in from there, the session keeps English, whatever the browser says.
    for (field, text) in [("id", "chief"), ("password", webcommon::PASSWORD)] {
        chrome
            .client
            .find(fantoccini::Locator::Css(&format!(
                "#login input[name={field}]"
            )))
            .await
            .unwrap()
            .send_keys(text)
            .await
            .unwrap();
    }
    webcommon::press(&chrome, "#login button", "log in").await;
    chrome
        .until(
            "the hall in English",
            // On the hall page itself (the login page has the same nav words and its own
            // selector, and stays a moment after the login), once /api/me has answered
            // (who is logged in is shown) and the selector's handler is on.
            "location.pathname === '/' && document.getElementById('who').textContent !== '' && document.documentElement.lang === 'en' && document.querySelector('[data-nav=hall]').textContent === 'Hall' && document.querySelector('#lang-box:not([hidden]) #lang')",
        )
        .await;
    // The arbiter chooses Spanish in the header: kept in the session, the page reloads.
    chrome
        .js("const s = document.getElementById('lang'); s.value = 'es'; s.dispatchEvent(new Event('change')); return true;")
        .await;
    chrome
        .until(
            "the hall in Spanish",
            "document.documentElement.lang === 'es' && document.querySelector('[data-nav=hall]').textContent === 'Sala'",
        )
        .await;
    // Moves in a Spanish event's letters, from the server's table: the English SAN the
    // feed carries, said with R D T A C ("Ke2" is "Re2", the king's move).
    let moves = chrome
        .js("return ['Ke2', 'Re2', 'Nxf3+', 'exd8=Q#', 'O-O-O', 'Bb5'].map(m => sanIn(m, 'es')).concat([sanIn('Qh5', 'en')]);")
        .await;
    assert_eq!(
        moves,
        json!(["Re2", "Te2", "Cxf3+", "exd8=D#", "O-O-O", "Ab5", "Qh5"])
    );
    chrome.client.goto(&format!("{base}/round")).await.unwrap();
    chrome
        .until(
            "another page in Spanish",
            "document.documentElement.lang === 'es' && document.title === 'Ronda · hallclock'",
        )
        .await;
    chrome.close().await;
}
