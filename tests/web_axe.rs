//! The dashboard for everyone and on a phone (issue 38), in a real headless Chromium
//! against the real daemon with a game in every phase: axe-core, the accessibility judge,
//! finds no critical or serious violation on any page, and each page has one h1; at
//! 360 and 390 px wide no page is wider than the screen, the header is one line that
//! scrolls away, every control of the common acts is a thumb's size (44 × 44 CSS px) and
//! the tiles are readable.
//!
//! axe-core is not vendored: ./scripts/test installs it, pinned, into target/axe (npm);
//! `HALLCLOCK_AXE` names another axe.min.js. Without it the axe test fails, loudly, unless
//! `HALLCLOCK_SKIP_AXE=1` says to skip it (said as loudly).

mod common;
mod webcommon;

use std::path::PathBuf;

use common::{Rig, board_id};
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};
use webcommon::{Chrome, dashboard, log_in};

/// axe.min.js: `$HALLCLOCK_AXE`, else where ./scripts/test installs it.
fn axe_path() -> PathBuf {
    std::env::var_os("HALLCLOCK_AXE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/axe/node_modules/axe-core/axe.min.js")
        })
}

/// A hall of six boards with a game in each phase an arbiter meets: 1 running, 2 paused,
/// 3 a flag waiting for the arbiter (claim mode), 4 ordered to seal, 5 adjourned (sealed
/// and committed), 6 finished; and its dashboard, up before the round as with the daemon
/// (the boards' logs have what happened since the dashboard started).
async fn hall_in_every_phase(name: &str) -> (Rig, hallclock::web::RunningWeb) {
    let mut rig = Rig::start_with(name, 6, GameDefaults::default()).await;
    let web = dashboard(&rig).await;
    let r = rig
        .start_round(6, "600", 0, json!({"flag_mode": "claim"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=6 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    let commands = [
        (2, json!({"action": "pause", "reason": "noise"})),
        (
            3,
            json!({"action": "set_time", "side": "white", "remaining_ms": 1500, "reason": "test"}),
        ),
        (4, json!({"action": "adjourn"})),
        (5, json!({"action": "adjourn"})),
        (5, json!({"action": "seal", "mv": "e4"})),
        (5, json!({"action": "commit_seal"})),
        (
            6,
            json!({"action": "set_result", "result": "1-0", "reason": "test"}),
        ),
    ];
    for (n, cmd) in commands {
        let r = rig.board_command(&board_id(n), cmd.clone()).await;
        assert_eq!(r["status"], "ok", "board {n}, {cmd}: {r}");
    }
    // Enough of a log on board 1 that its box scrolls: a scrolled box must take the focus
    // (axe's scrollable-region-focusable).
    for n in 1..=24 {
        let r = rig
            .board_command(
                &board_id(1),
                json!({"action": "add_time", "side": "black", "delta_ms": 1000, "reason": format!("test {n}")}),
            )
            .await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    rig.watcher.event(&board_id(3), "result_pending").await;
    (rig, web)
}

/// Each board of `hall_in_every_phase` and its phase.
const PHASES: [(usize, &str); 6] = [
    (1, "running"),
    (2, "paused"),
    (3, "flag"),
    (4, "sealing"),
    (5, "adjourned"),
    (6, "finished"),
];

/// The board page is drawn for `phase`: "Now" starts with the act the phase calls for
/// (the forms are drawn again when the state comes, after the page).
fn drawn_for(phase: &str) -> &'static str {
    match phase {
        "running" => {
            "document.querySelector('#acts-now form:first-child[data-action=pause]') && document.getElementById('log').scrollHeight > document.getElementById('log').clientHeight"
        }
        "paused" => "document.querySelector('#acts-now form:first-child[data-action=resume]')",
        "flag" => "document.querySelector('#acts-now form:first-child[data-action=confirm_flag]')",
        "sealing" => "document.querySelector('#acts-now form:first-child[data-action=seal]')",
        "adjourned" => {
            "document.querySelector('#acts-now form:first-child[data-action=verify_envelope]')"
        }
        _ => {
            "document.querySelector('#acts-now form:first-child[data-action=set_result]') && !document.getElementById('quick-acts')"
        }
    }
}

/// The pages an arbiter uses, each with what says it is drawn: (name, path, ready).
fn pages() -> Vec<(String, String, String)> {
    let mut out = vec![(
        "hall".to_string(),
        "/".to_string(),
        "document.querySelectorAll('#tiles .tile').length === 6 && [...store.boards.values()].every(b => b.state)".to_string(),
    )];
    for (n, phase) in PHASES {
        out.push((
            format!("board {phase}"),
            format!("/board/{}", board_id(n)),
            drawn_for(phase).to_string(),
        ));
    }
    out.push((
        "round".into(),
        "/round".into(),
        "document.querySelectorAll('#pairing-rows tr').length === 6 && document.querySelector('#round-summary tr[data-board]')".into(),
    ));
    out.push((
        "alerts".into(),
        "/alerts".into(),
        "document.querySelector('#alerts .alert')".into(),
    ));
    out
}

/// axe-core's critical and serious violations on the page shown, one line each (rule,
/// impact, what it says, the elements by their selectors), and the number of h1s.
async fn judge(chrome: &Chrome, axe: &str) -> (Vec<String>, i64) {
    // Injected into the page itself (never served by the daemon); every rule axe runs
    // by default, the forms behind "Every act on this board" opened so they are judged.
    chrome
        .js(&format!(
            "{axe}\n;document.querySelectorAll('details').forEach(d => d.open = true); return typeof axe;"
        ))
        .await;
    let found = chrome
        .js("return axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
               .filter(v => v.impact === 'critical' || v.impact === 'serious')
               .map(v => `${v.id} (${v.impact}, ${v.nodes.length} elements): ${v.help} — ${v.nodes.map(n => n.target.join(' ')).join(', ')}`));")
        .await;
    let h1s = chrome
        .js("return document.querySelectorAll('h1').length;")
        .await
        .as_i64()
        .unwrap_or(-1);
    let list = found
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_else(|| vec![format!("axe did not answer: {found}")]);
    (list, h1s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axe_finds_no_critical_or_serious_violation_on_any_page() {
    let path = axe_path();
    let axe = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if std::env::var("HALLCLOCK_SKIP_AXE").as_deref() == Ok("1") => {
            eprintln!(
                "\n################################################################\n\
                 ## SKIPPED: the accessibility check (axe-core), because\n\
                 ## HALLCLOCK_SKIP_AXE=1 and {} is not readable ({e}).\n\
                 ################################################################\n",
                path.display()
            );
            return;
        }
        Err(e) => panic!(
            "axe-core is not installed at {} ({e}): run ./scripts/test (it installs it into \
             target/axe), or set HALLCLOCK_AXE to an axe.min.js, or HALLCLOCK_SKIP_AXE=1 to \
             skip the accessibility check",
            path.display()
        ),
    };
    let (mut rig, web) = hall_in_every_phase("web-axe").await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-axe", 1366, 768).await;
    let mut failures = Vec::new();
    let mut report = Vec::new();
    // The login page, before any session.
    chrome
        .client
        .goto(&format!("{base}/login"))
        .await
        .expect("the login page");
    chrome
        .until("the login form", "document.getElementById('login')")
        .await;
    let mut judged = vec![("login".to_string(), judge(&chrome, &axe).await)];
    log_in(&chrome, &base, "chief").await;
    for (name, path, ready) in pages() {
        chrome
            .client
            .goto(&format!("{base}{path}"))
            .await
            .expect("the page");
        chrome.until(&format!("the {name} page"), &ready).await;
        judged.push((name, judge(&chrome, &axe).await));
    }
    // The hall's screen, without a session.
    chrome
        .client
        .goto(&format!("{base}/public"))
        .await
        .expect("/public");
    chrome
        .until(
            "the public screen",
            "document.querySelectorAll('.tile').length === 6 && document.querySelector('.pubtitle').textContent",
        )
        .await;
    judged.push(("public".to_string(), judge(&chrome, &axe).await));
    // The other hall screens (issue 40), in the light theme too.
    for (name, path, ready) in [
        (
            "public/players",
            "/public/players",
            "document.querySelectorAll('.player').length === 12",
        ),
        (
            "public/results",
            "/public/results?theme=light",
            "document.querySelector('.pubtitle').textContent",
        ),
        (
            "public/clock",
            "/public/clock",
            "document.getElementById('hall-time').textContent",
        ),
        (
            "public light",
            "/public?theme=light&from=1",
            "document.getElementById('opt-note').textContent && document.querySelectorAll('.tile').length === 6",
        ),
    ] {
        chrome
            .client
            .goto(&format!("{base}{path}"))
            .await
            .expect("a hall screen");
        chrome.until(&format!("the {name} screen"), ready).await;
        judged.push((name.to_string(), judge(&chrome, &axe).await));
    }
    for (name, (violations, h1s)) in judged {
        report.push(format!(
            "{name}: {} critical/serious, {h1s} h1",
            violations.len()
        ));
        failures.extend(violations.into_iter().map(|v| format!("{name}: {v}")));
        if h1s != 1 {
            failures.push(format!("{name}: {h1s} h1 elements, not one"));
        }
    }
    println!("axe-core ({}):\n{}", path.display(), report.join("\n"));
    assert!(
        failures.is_empty(),
        "{} accessibility failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    chrome.close().await;
    rig.stop().await;
}

/// What is wrong with the page shown at a phone's width: wider than the screen, a
/// header taller than one line or pinned, and controls under 44 × 44 CSS px in `controls`
/// (a checkbox by its label, the target a thumb taps). Empty: nothing.
async fn phone_faults(chrome: &Chrome, controls: &str) -> Value {
    chrome
        .js(&format!(
            r#"const faults = [];
            const root = document.documentElement;
            if (root.scrollWidth > innerWidth) faults.push(`page ${{root.scrollWidth}} px wide in ${{innerWidth}}`);
            const top = document.getElementById('top');
            const head = top.getBoundingClientRect().height;
            if (head > 56) faults.push(`header ${{head}} px high`);
            const pos = getComputedStyle(top).position;
            if (pos === 'sticky' || pos === 'fixed') faults.push(`header pinned (${{pos}})`);
            for (const el of document.querySelectorAll({controls:?})) {{
              if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
              const target = (el.type === 'checkbox' || el.type === 'radio') && el.closest('label') ? el.closest('label') : el;
              const r = target.getBoundingClientRect();
              if (r.width < 44 || r.height < 44) faults.push(`${{el.tagName.toLowerCase()}}[name=${{el.name || ''}}] "${{(el.textContent || el.value || '').trim().slice(0, 30)}}" ${{Math.round(r.width)}}×${{Math.round(r.height)}}`);
            }}
            return faults;"#
        ))
        .await
}

/// Tile text under 14 px, or a badge under 12 px, on the hall page shown.
async fn small_tile_text(chrome: &Chrome) -> Value {
    chrome
        .js(r#"const small = [];
            for (const el of document.querySelectorAll('#tiles .tile *')) {
              const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
              if (!own || !el.getClientRects().length) continue;
              const px = parseFloat(getComputedStyle(el).fontSize);
              const least = el.classList.contains('badge') ? 12 : 14;
              if (px < least) small.push(`${el.className || el.tagName}: ${px} px`);
            }
            return [...new Set(small)];"#)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_nothing_is_wider_than_the_screen_and_every_act_is_thumb_sized() {
    let (mut rig, web) = hall_in_every_phase("web-phone").await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-phone", 1366, 768).await;
    let c = &chrome.client;
    let mut faults = Vec::new();
    for (width, height) in [(360, 780), (390, 844)] {
        // Chromium's window does not start narrower than 500 px: made so after the start.
        c.set_window_size(width, height).await.expect("a phone");
        c.goto(&format!("{base}/login")).await.expect("login");
        chrome
            .until("the login form", "document.getElementById('login')")
            .await;
        let inner = chrome.js("return innerWidth;").await;
        assert_eq!(inner, json!(width), "the page is as wide as the phone");
        let f = phone_faults(&chrome, "#login input, #login button").await;
        faults.push((format!("{width}: login"), f));
        log_in(&chrome, &base, "chief").await;
        chrome
            .until("the tiles", "document.querySelectorAll('#tiles .tile').length === 6 && [...store.boards.values()].every(b => b.state)")
            .await;
        faults.push((
            format!("{width}: hall"),
            phone_faults(&chrome, "#main .toolbar input, #main .toolbar select").await,
        ));
        faults.push((
            format!("{width}: hall tile text"),
            small_tile_text(&chrome).await,
        ));
        if width == 390 {
            let _ = chrome
                .shot_for_docs("hall-phone", "screenshots/hall-phone.png")
                .await;
        }
        for (n, phase) in PHASES {
            c.goto(&format!("{base}/board/{}", board_id(n)))
                .await
                .expect("a board");
            chrome
                .until(&format!("board {n}'s acts"), drawn_for(phase))
                .await;
            let f = phone_faults(
                &chrome,
                "#quick-acts button, #acts-now button, #acts-now input, #acts-now select",
            )
            .await;
            faults.push((format!("{width}: board {phase}"), f));
            if width == 390 && phase == "flag" {
                let _ = chrome
                    .shot_for_docs("board-phone", "screenshots/board-phone.png")
                    .await;
            }
        }
        c.goto(&format!("{base}/round")).await.expect("round");
        chrome
            .until("the round form", "document.querySelectorAll('#pairing-rows tr').length === 6 && document.querySelector('#round-summary tr[data-board]')")
            .await;
        let f = phone_faults(
            &chrome,
            "#start-round button, #start-round input, #start-round select, #start-round textarea",
        )
        .await;
        faults.push((format!("{width}: round"), f));
        if width == 390 {
            let _ = chrome
                .shot_for_docs("round-phone", "screenshots/round-phone.png")
                .await;
        }
        c.goto(&format!("{base}/alerts")).await.expect("alerts");
        chrome
            .until("the alerts", "document.querySelector('#alerts .alert')")
            .await;
        faults.push((
            format!("{width}: alerts"),
            phone_faults(&chrome, "#alerts button").await,
        ));
    }
    // The laptop: the same pages, one line of header, pinned as before, nothing too wide.
    c.set_window_size(1366, 768).await.expect("a laptop");
    for (name, path, ready) in [
        (
            "hall",
            "/".to_string(),
            "document.querySelectorAll('#tiles .tile').length === 6",
        ),
        (
            "board",
            format!("/board/{}", board_id(3)),
            "document.querySelector('#acts-now form')",
        ),
        (
            "round",
            "/round".to_string(),
            "document.querySelector('#round-summary tr[data-board]')",
        ),
    ] {
        c.goto(&format!("{base}{path}")).await.expect("a page");
        chrome.until(name, ready).await;
        let laptop = chrome
            .js("const top = document.getElementById('top'); return {wide: document.documentElement.scrollWidth > innerWidth, head: top.getBoundingClientRect().height <= 56, pinned: getComputedStyle(top).position};")
            .await;
        faults.push((
            format!("1366: {name}"),
            if laptop == json!({"wide": false, "head": true, "pinned": "sticky"}) {
                json!([])
            } else {
                json!([laptop])
            },
        ));
        let _ = chrome
            .shot_for_docs(
                &format!("{name}-laptop"),
                &format!("screenshots/{name}-laptop.png"),
            )
            .await;
    }
    let bad: Vec<String> = faults
        .iter()
        .filter(|(_, f)| f.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(page, f)| format!("{page}: {f}"))
        .collect();
    assert!(bad.is_empty(), "on a phone:\n{}", bad.join("\n"));
    chrome.close().await;
    rig.stop().await;
}
