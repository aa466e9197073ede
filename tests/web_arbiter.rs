//! The arbiters' screen as arbiters work it, in a real headless Chromium (WebDriver)
//! against the real daemon, the simulator on pseudo-terminals and a real Mosquitto: ten
//! tabs of one browser stay live and each gets its answer; a double click applies once;
//! a refused seal leaves no text behind; an alert resolved in one browser is gone in
//! another; the board page shows first the acts the game's phase calls for; the round
//! page and the hall say what an arbiter needs in an arbiter's words; a press before its
//! move is read shows the position before it, dimmed.
//! Screenshots go to target/web-screenshots/ and, with HALLCLOCK_UPDATE_SCREENSHOTS set,
//! to docs/screenshots/.

mod common;
mod webcommon;

use std::time::Duration;

use common::{Rig, board_id};
use fantoccini::Locator;
use fantoccini::actions::InputSource;
use hallclock::hall::GameDefaults;
use serde_json::{Value, json};
use webcommon::{Chrome, dashboard, log_in, press};

/// How many events of `kind` `board` has published so far.
fn events(rig: &mut Rig, board: &str, kind: &str) -> usize {
    let topic = rig.topic(&format!("board/{board}/event"));
    rig.watcher
        .drain()
        .iter()
        .filter(|m| m.topic == topic && m.json()["event"] == kind)
        .count()
}

/// A command answered after the ones before it: what they published has arrived.
async fn barrier(rig: &mut Rig, board: &str) {
    let r = rig
        .board_command(board, json!({"action": "present", "side": "white"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// The actions of the forms the board page offers first ("Now").
async fn acts_now(chrome: &Chrome) -> Vec<String> {
    let v = chrome
        .js("return [...document.querySelectorAll('#acts-now form')].map(f => f.dataset.action);")
        .await;
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Wait until the board page's first acts are `want` (the feed brought the new phase).
async fn until_acts(chrome: &Chrome, what: &str, want: &[&str]) -> Vec<String> {
    let list = want
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(",");
    chrome
        .until(
            what,
            &format!(
                "JSON.stringify([...document.querySelectorAll('#acts-now form')].map(f => f.dataset.action)) === JSON.stringify([{list}])"
            ),
        )
        .await;
    acts_now(chrome).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_tabs_of_one_browser_stay_live_and_a_command_from_each_is_answered() {
    let mut rig = Rig::start_with("web-tabs", 6, GameDefaults::default()).await;
    let r = rig.start_round(6, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-tabs", 1200, 900).await;
    log_in(&chrome, &base, "chief").await;
    let c = &chrome.client;
    // The hall, five board pages, the alerts, the round page and two more boards: more
    // pages than the six connections a browser holds to one host over HTTP/1.1.
    let pages: Vec<String> = vec![
        "/".into(),
        format!("/board/{}", board_id(1)),
        format!("/board/{}", board_id(2)),
        format!("/board/{}", board_id(3)),
        format!("/board/{}", board_id(4)),
        format!("/board/{}", board_id(5)),
        "/alerts".into(),
        "/round".into(),
        format!("/board/{}", board_id(6)),
        format!("/board/{}", board_id(1)),
    ];
    let mut tabs = vec![c.window().await.expect("the first tab")];
    c.goto(&format!("{base}{}", pages[0]))
        .await
        .expect("the hall");
    for page in &pages[1..] {
        let w = c.new_window(true).await.expect("a new tab");
        c.switch_to_window(w.handle.clone())
            .await
            .expect("switch to it");
        c.goto(&format!("{base}{page}"))
            .await
            .expect("open the page");
        tabs.push(w.handle);
    }
    // Every tab is drawn and live: the feed reached it.
    for (i, tab) in tabs.iter().enumerate() {
        c.switch_to_window(tab.clone()).await.expect("switch");
        chrome
            .until(
                &format!("tab {} live ({})", i + 1, pages[i]),
                "document.querySelector('#conn.live') && store.boards.size === 6 && [...store.boards.values()].every(b => b.state)",
            )
            .await;
    }
    // A command from each tab within the same second: each is answered, none waits for
    // a feed to let go of a connection.
    let at: i64 = chrome
        .js("return Date.now() + 2500;")
        .await
        .as_i64()
        .unwrap_or(0);
    for (i, tab) in tabs.iter().enumerate() {
        c.switch_to_window(tab.clone()).await.expect("switch");
        let board = board_id(i % 6 + 1);
        chrome
            .js(&format!(
                "window.__sent = null; window.__outcome = null;
                 setTimeout(() => {{
                   window.__sent = Date.now();
                   post('{board}', {{action: 'add_time', side: 'black', delta_ms: 1000, reason: 'tab {n}'}})
                     .then(o => {{ window.__outcome = o; window.__took = Date.now() - window.__sent; }});
                 }}, Math.max(0, {at} - Date.now()));
                 return true;",
                n = i + 1
            ))
            .await;
    }
    let mut took = Vec::new();
    for (i, tab) in tabs.iter().enumerate() {
        c.switch_to_window(tab.clone()).await.expect("switch");
        let outcome = chrome
            .until(&format!("tab {}'s answer", i + 1), "window.__outcome")
            .await;
        assert_eq!(outcome, "ok", "tab {} ({})", i + 1, pages[i]);
        took.push(chrome.js("return window.__took;").await);
    }
    println!("ten tabs, one command each: answered in {took:?} ms");
    // Each applied once: ten time_added events in all.
    for n in 1..=6 {
        barrier(&mut rig, &board_id(n)).await;
    }
    let added: usize = (1..=6)
        .map(|n| events(&mut rig, &board_id(n), "time_added"))
        .sum();
    assert_eq!(added, 10, "one add_time per tab");
    // Still live after all that: the last tab's clocks follow the game.
    chrome
        .until(
            "the last tab still live",
            "document.querySelector('#conn.live')",
        )
        .await;
    chrome.close().await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_page_offers_the_acts_of_each_phase_and_a_click_is_one_command() {
    let mut rig = Rig::start_with("web-acts", 2, GameDefaults::default()).await;
    // Up before the round, as with the daemon: the board page's log has the whole game.
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let r = rig
        .start_round(
            2,
            "600",
            0,
            json!({"flag_mode": "claim", "event": "Hall Open 2026", "site": "Leipzig GER"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let b1 = board_id(1);
    let b2 = board_id(2);
    rig.watcher.event(&b1, "clock_started").await;
    let chrome = Chrome::start("web-acts", 1400, 1000).await;
    log_in(&chrome, &base, "chief").await;
    let c = &chrome.client;

    // --- running: pause and the time corrections first ---
    c.goto(&format!("{base}/board/{b1}"))
        .await
        .expect("board 1");
    let now = until_acts(
        &chrome,
        "a running game's acts",
        &["pause", "add_time", "set_time", "adjourn"],
    )
    .await;
    assert_eq!(now[0], "pause");
    let title = chrome.js("return document.title;").await;
    assert_eq!(title, format!("{b1} · hallclock"), "the tab says the board");
    let danger_first = chrome
        .js("return [...document.querySelectorAll('#acts-now button.danger')].length;")
        .await;
    assert_eq!(danger_first, 0, "no danger act among the first ones");
    let _ = chrome
        .shot_for_docs("board-running", "screenshots/board-running.png")
        .await;

    // --- a double click on "Add time" applies it once ---
    chrome
        .js(r#"
            const f = document.querySelector('#acts-now form[data-action=add_time]');
            f.querySelector('[name=side]').value = 'black';
            f.querySelector('[name=delta_ms]').value = '30';
            f.querySelector('[name=reason]').value = '7.5.5: illegal move by White';
            f.dispatchEvent(new Event('input'));
            const b = f.querySelector('button[type=submit]');
            b.click(); b.click();
            return true;"#)
        .await;
    let reply = chrome
        .until(
            "the add_time reply",
            "(t => t.startsWith('done') || t.startsWith('refused') ? t : '')(document.querySelector('#acts-now form[data-action=add_time] .reply').textContent)",
        )
        .await;
    assert_eq!(reply, "done: add time");
    // A third click right after the answer is still the same command (a double click
    // whose second half came late): the first reply again, nothing applied.
    press(
        &chrome,
        "#acts-now form[data-action=add_time] button[type=submit]",
        "the button",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    barrier(&mut rig, &b1).await;
    assert_eq!(
        events(&mut rig, &b1, "time_added"),
        1,
        "+30 s once, for a double click and a late third click"
    );

    // --- a refused seal leaves no text in the masked field ---
    chrome
        .js("document.querySelector('details.every').open = true; return true;")
        .await;
    let mv = c
        .find(Locator::Css(
            "#acts-all form[data-action=seal] input[name=mv]",
        ))
        .await
        .expect("the seal's masked field");
    mv.send_keys("Nh3").await.expect("type a move");
    press(
        &chrome,
        "#acts-all form[data-action=seal] button[type=submit]",
        "the seal button",
    )
    .await;
    // Said back before it is sent.
    let ask = chrome
        .until(
            "the seal's confirmation",
            "(b => b && !b.hidden && b.textContent)(document.querySelector('#acts-all form[data-action=seal] .confirm'))",
        )
        .await;
    assert!(
        ask.as_str().unwrap_or("").contains("\"Nh3\""),
        "the move is echoed: {ask}"
    );
    press(
        &chrome,
        "#acts-all form[data-action=seal] .confirm button.primary",
        "confirm",
    )
    .await;
    let refused = chrome
        .until(
            "the seal's refusal",
            "(t => t.startsWith('refused') ? t : '')(document.querySelector('#acts-all form[data-action=seal] .reply').textContent)",
        )
        .await;
    println!("a seal before the adjournment: {refused}");
    let left = chrome
        .js("return document.querySelector('#acts-all form[data-action=seal] input[name=mv]').value;")
        .await;
    assert_eq!(left, "", "the refused move is not kept in the masked field");
    // Not a move as written: said so before anything is sealed (read as the opening
    // will read it), and cancelled it leaves nothing behind either.
    let mv = c
        .find(Locator::Css(
            "#acts-all form[data-action=seal] input[name=mv]",
        ))
        .await
        .expect("the field");
    mv.send_keys("Nh3Nh3").await.expect("type");
    press(
        &chrome,
        "#acts-all form[data-action=seal] button[type=submit]",
        "the seal button",
    )
    .await;
    let said = chrome
        .until(
            "the reading of a move that is none",
            "(b => b && !b.hidden && b.textContent.includes('cannot be read') && b.textContent)(document.querySelector('#acts-all form[data-action=seal] .confirm'))",
        )
        .await;
    assert!(
        said.as_str()
            .unwrap_or("")
            .contains("\"Nh3Nh3\" cannot be read"),
        "{said}"
    );
    press(
        &chrome,
        "#acts-all form[data-action=seal] .confirm button:not(.primary)",
        "cancel",
    )
    .await;
    let left = chrome
        .js("return document.querySelector('#acts-all form[data-action=seal] input[name=mv]').value;")
        .await;
    assert_eq!(left, "");

    // --- paused: resume first, and the marker says so ---
    let r = rig
        .board_command(&b1, json!({"action": "pause", "reason": "noise"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let now = until_acts(
        &chrome,
        "a paused game's acts",
        &["resume", "add_time", "set_time"],
    )
    .await;
    assert_eq!(now[0], "resume");
    let marker = chrome
        .until(
            "the PAUSED marker",
            "(m => !m.hidden && m.textContent)(document.querySelector('.marker'))",
        )
        .await;
    assert_eq!(marker, "PAUSED");
    // The seal's check above left the page scrolled down to "Every act on this board";
    // the picture is of what an arbiter sees on coming to a paused board.
    chrome
        .js("document.querySelector('details.every').open = false; window.scrollTo(0, 0); return true;")
        .await;
    let _ = chrome
        .shot_for_docs("board-paused", "screenshots/board-paused.png")
        .await;
    let r = rig
        .board_command(&b1, json!({"action": "resume", "reason": "quiet again"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");

    // --- the adjournment as one guided flow, from the page ---
    until_acts(
        &chrome,
        "running again",
        &["pause", "add_time", "set_time", "adjourn"],
    )
    .await;
    press(
        &chrome,
        "#acts-now form[data-action=adjourn] button[type=submit]",
        "adjourn",
    )
    .await;
    until_acts(&chrome, "ordered to seal: the seal", &["seal"]).await;
    let mv = c
        .find(Locator::Css(
            "#acts-now form[data-action=seal] input[name=mv]",
        ))
        .await
        .expect("the seal's field");
    mv.send_keys("Nf3").await.expect("type the sealed move");
    press(
        &chrome,
        "#acts-now form[data-action=seal] button[type=submit]",
        "seal",
    )
    .await;
    // The confirmation comes with the server's reading of the move (`/api/seal/read`):
    // on a loaded machine it is not there at once (seen in a full run).
    chrome
        .until(
            "the seal's confirmation",
            "document.querySelector('#acts-now form[data-action=seal] .confirm:not([hidden]) button.primary')",
        )
        .await;
    press(
        &chrome,
        "#acts-now form[data-action=seal] .confirm button.primary",
        "confirm the seal",
    )
    .await;
    until_acts(&chrome, "sealed: commit it", &["commit_seal"]).await;
    press(
        &chrome,
        "#acts-now form[data-action=commit_seal] button[type=submit]",
        "commit",
    )
    .await;
    let now = until_acts(
        &chrome,
        "adjourned: verify and schedule",
        &["verify_envelope", "schedule_resumption", "draw_offer"],
    )
    .await;
    assert_eq!(now[0], "verify_envelope");
    let marker = chrome
        .until(
            "the ADJOURNED marker",
            "(m => !m.hidden && m.textContent)(document.querySelector('.marker'))",
        )
        .await;
    assert_eq!(marker, "ADJOURNED");
    // Nothing sealed was sent twice and the sealed move is the one typed once.
    let sealed = events(&mut rig, &b1, "sealed");
    assert_eq!(sealed, 1, "one seal");
    let overflow = chrome
        .js("return document.documentElement.scrollWidth <= window.innerWidth + 1;")
        .await;
    assert_eq!(overflow, true, "the page does not overflow after a seal");
    let _ = chrome
        .shot_for_docs("board-adjourned", "screenshots/board-adjourned.png")
        .await;

    // --- a flag waiting for the arbiter: confirm it or set the result ---
    let r = rig
        .board_command(
            &b2,
            json!({"action": "set_time", "side": "white", "remaining_ms": 1500, "reason": "test"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    c.goto(&format!("{base}/board/{b2}"))
        .await
        .expect("board 2");
    let now = until_acts(
        &chrome,
        "a pending flag's acts",
        &["confirm_flag", "set_result"],
    )
    .await;
    assert_eq!(now[0], "confirm_flag");
    let marker = chrome
        .until(
            "the FLAG marker",
            "(m => !m.hidden && m.textContent)(document.querySelector('.marker'))",
        )
        .await;
    assert!(
        marker.as_str().unwrap_or("").starts_with("FLAG"),
        "{marker}"
    );
    let note = chrome
        .js("return document.getElementById('now-note').textContent;")
        .await;
    assert!(
        note.as_str().unwrap_or("").contains("White 2 (White)"),
        "the note names the player: {note}"
    );
    let _ = chrome
        .shot_for_docs("board-flag", "screenshots/board-flag.png")
        .await;
    // Set result is a danger act: it says what will happen before it is sent.
    chrome
        .js("const f = document.querySelector('#acts-now form[data-action=set_result]'); f.querySelector('[name=result]').value = 'resignation'; f.querySelector('[name=side]').value = 'black'; f.querySelector('[name=reason]').value = 'test'; f.querySelector('button[type=submit]').click(); return true;")
        .await;
    let ask = chrome
        .until(
            "the result's confirmation",
            "(b => b && !b.hidden && b.textContent)(document.querySelector('#acts-now form[data-action=set_result] .confirm'))",
        )
        .await;
    assert!(
        ask.as_str()
            .unwrap_or("")
            .contains("Black 2 (Black) resigns"),
        "{ask}"
    );
    assert_eq!(
        events(&mut rig, &b2, "game_ended"),
        0,
        "nothing sent before the confirmation"
    );

    // --- the hall: big markers, and the public screen without server paths ---
    c.goto(&format!("{base}/")).await.expect("the hall");
    chrome
        .until(
            "the hall's markers",
            "document.querySelector('.tile .badge.phase-adjourned') && document.querySelector('.tile .badge.phase-flag')",
        )
        .await;
    let _ = chrome
        .shot_for_docs("hall-markers", "screenshots/hall-markers.png")
        .await;
    c.goto(&format!("{base}/public")).await.expect("public");
    let heading = chrome
        .until(
            "the public heading",
            "document.querySelector('.pubtitle').textContent",
        )
        .await;
    // The event and the round, as the round's PGN names them.
    assert_eq!(
        heading.as_str().unwrap_or(""),
        "Hall Open 2026 — Round 1",
        "{heading}"
    );
    let title = chrome.js("return document.title;").await;
    assert_eq!(title.as_str().unwrap_or(""), "Hall Open 2026 — Round 1");
    let info = chrome.js("return JSON.stringify(store.info);").await;
    assert!(
        !info.as_str().unwrap_or("").contains("/dev/")
            && !info.as_str().unwrap_or("").contains("\"port\""),
        "no serial port on /public: {info}"
    );
    let _ = chrome
        .shot_for_docs("public", "screenshots/public.png")
        .await;
    chrome.close().await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alert_resolved_in_one_browser_is_gone_in_another() {
    use hallclock::sim::Side;
    let mut rig = Rig::start("web-ack", 1).await;
    let b = board_id(1);
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "clock_started").await;
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let one = Chrome::start("web-ack-1", 1200, 800).await;
    let two = Chrome::start("web-ack-2", 1200, 800).await;
    log_in(&one, &base, "chief").await;
    log_in(&two, &base, "chief").await;
    // A clock that disagrees with the official time: two presses during an outage.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rig.sim.board(1).clock_display().running != Some(Side::Left) {
        assert!(tokio::time::Instant::now() < deadline, "White's clock runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // As tests/outage.rs provokes it.
    rig.sim.board(1).unplug().await.expect("unplug");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    rig.sim.board(1).press(); // White
    tokio::time::sleep(Duration::from_millis(6000)).await;
    rig.sim.board(1).press(); // Black: White's clock runs again, as the journal says
    tokio::time::sleep(Duration::from_millis(500)).await;
    rig.sim.board(1).replug().await.expect("replug");
    rig.watcher.event(&b, "clock_discrepancy").await;
    let row = "document.querySelector('#alerts .alert[data-kind=clock_discrepancy]')";
    for chrome in [&one, &two] {
        chrome
            .client
            .goto(&format!("{base}/alerts"))
            .await
            .expect("alerts");
        chrome.until("the discrepancy's alert", row).await;
    }
    let _ = one
        .shot_for_docs("alerts-discrepancy", "screenshots/alerts-discrepancy.png")
        .await;
    let count_before = two
        .js("return document.getElementById('alert-count').textContent;")
        .await;
    one.client
        .find(Locator::Css(
            "#alerts .alert[data-kind=clock_discrepancy] button.primary",
        ))
        .await
        .expect("Keep the official times")
        .click()
        .await
        .expect("click");
    one.until("gone in the first browser", &format!("!{row}"))
        .await;
    two.until("gone in the other browser", &format!("!{row}"))
        .await;
    let acked = rig.watcher.event(&b, "discrepancy_acknowledged").await;
    assert_eq!(acked["arbiter"], "IA Chief Test", "{acked}");
    let count_after = two
        .js("return document.getElementById('alert-count').textContent;")
        .await;
    assert_ne!(
        count_before, count_after,
        "the badge counts it no more: {count_before} → {count_after}"
    );
    let _: Value = two.js("return true;").await;
    one.close().await;
    two.close().await;
    rig.stop().await;
}

/// The text of `css` on the page, or "" while it is not there.
async fn text_of(chrome: &Chrome, css: &str) -> String {
    chrome
        .js(&format!(
            "return (e => e ? e.textContent : '')(document.querySelector({css:?}));"
        ))
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Issue 21's smaller problems, each seen in the browser: the round page's errors in an
/// arbiter's words and on the row (a time control with an example in the hall's notation,
/// "Black is missing on row 3", a refused pasted pairing counted from 1); a finished game's
/// result with its reason; "by time left" with finished games last; the round summary with
/// an earlier round's game still on; full names; one round per public screen; a favicon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_page_and_the_hall_say_what_an_arbiter_needs() {
    let mut rig = Rig::start_with("web-words", 4, GameDefaults::default()).await;
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-words", 1400, 1000).await;
    log_in(&chrome, &base, "chief").await;
    let c = &chrome.client;

    // --- the round page, before any round ---
    c.goto(&format!("{base}/round"))
        .await
        .expect("the round page");
    chrome
        .until(
            "the round form filled from the feed",
            "document.querySelectorAll('#pairing-rows tr').length === 4",
        )
        .await;
    // "90 min" is no time control; the example says how the hall writes one (seconds:
    // its "90+30" would be a minute and a half).
    let tc = c
        .find(Locator::Css("#start-round [name=time_control]"))
        .await
        .expect("the time control field");
    tc.clear().await.expect("clear it");
    tc.send_keys("90 min").await.expect("type a control");
    let said = chrome
        .until(
            "the time control's error",
            "(d => d.classList.contains('err') && d.textContent)(document.getElementById('tc-desc'))",
        )
        .await;
    let said = said.as_str().unwrap_or("").to_string();
    println!("a bad time control: {said}");
    assert!(said.contains("5400+30 (90 min, +30 s a move)"), "{said}");
    assert!(!said.contains("90+30 (90 min"), "{said}");
    assert!(
        !said.contains("*secs"),
        "PGN's grammar is not an arbiter's: {said}"
    );
    tc.clear().await.expect("clear it");
    tc.send_keys("600").await.expect("type a control");
    chrome
        .until(
            "a good time control",
            "document.getElementById('tc-desc').textContent.includes('10 min')",
        )
        .await;
    // A pairing without Black: said on its row, counted as the arbiter counts.
    chrome
        .js(r#"
            const rows = document.querySelectorAll('#pairing-rows tr');
            const names = [['Ding', 'So'], ['Giri', 'Caruana'], ['Gukesh', '']];
            names.forEach(([w, b], i) => {
              rows[i].querySelector('[name=white]').value = w;
              rows[i].querySelector('[name=black]').value = b;
            });
            return true;"#)
        .await;
    press(&chrome, "#start-round button[type=submit]", "Start round").await;
    let row = chrome
        .until(
            "the row's error",
            "(e => e && e.previousElementSibling === document.querySelectorAll('#pairing-rows tr')[2] && e.textContent)(document.querySelector('#pairing-rows tr.row-error'))",
        )
        .await;
    assert!(
        row.as_str()
            .unwrap_or("")
            .starts_with("Black is missing on row 3"),
        "{row}"
    );
    // Pasted JSON the daemon refuses: its 0-based pairings[1] is the arbiter's pairing 2.
    for (json, want) in [
        (
            r#"[{"board":"board-001","white":"A","black":"B"},{"board":"board-009","white":"C","black":"D"}]"#,
            "refused: pairing 2 (board): unknown board 'board-009'",
        ),
        (
            r#"[{"board":"board-001","white":"A","black":"B"},{"board":"board-002","white":"C"}]"#,
            "pasted JSON, pairing 2 (board-002): Black is missing",
        ),
    ] {
        chrome
            .js(&format!(
                "document.querySelector('#start-round [name=pairings_json]').value = {json:?}; document.getElementById('round-reply').textContent = ''; return true;"
            ))
            .await;
        press(&chrome, "#start-round button[type=submit]", "Start round").await;
        let reply = chrome
            .until(
                "the pasted pairings' refusal",
                "(t => (t.startsWith('refused') || t.startsWith('pasted')) && t)(document.getElementById('round-reply').textContent)",
            )
            .await;
        let reply = reply.as_str().unwrap_or("").to_string();
        println!("pasted pairings: {reply}");
        assert_eq!(reply, want);
    }

    // --- round 1 on every board; boards 1-3 end and play round 2, board 4 plays on ---
    let long = "Abdusattorov, Nodirbek Kobiljonovich";
    let pairings: Vec<Value> = (1..=4)
        .map(|n| json!({"board": board_id(n), "white": if n == 4 { long.to_string() } else { format!("White {n}") }, "black": format!("Black {n}")}))
        .collect();
    let r = rig
        .start_round(
            4,
            "600",
            0,
            json!({"pairings": pairings, "flag_mode": "auto"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    for n in 1..=4 {
        rig.watcher.event(&board_id(n), "clock_started").await;
    }
    for n in 1..=3 {
        let r = rig
            .board_command(
                &board_id(n),
                json!({"action": "set_result", "result": "1/2-1/2", "reason": "test"}),
            )
            .await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    let r = rig
        .start_round(
            3,
            "600",
            0,
            json!({"round": 2, "flag_mode": "auto", "event": "Hall Open 2026"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    // Board 1's game of round 2 ends on time: the least time left, and finished.
    let b1 = board_id(1);
    let r = rig
        .board_command(
            &b1,
            json!({"action": "set_time", "side": "white", "remaining_ms": 1000, "reason": "test"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let topic = rig.topic(&format!("board/{b1}/event"));
    rig.watcher
        .wait("board 1's flag in round 2", |m| {
            m.topic == topic
                && m.json()["event"] == "game_ended"
                && m.json()["termination"] == "flag"
        })
        .await;

    // Board 3's ends by resignation, set by the arbiter.
    let r = rig
        .board_command(
            &board_id(3),
            json!({"action": "set_result", "result": "resignation", "side": "black", "reason": "test"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");

    // --- the hall: by time left, the finished games come last ---
    c.goto(&format!("{base}/")).await.expect("the hall");
    chrome
        .until(
            "the finished game on its tile",
            &format!("document.querySelector('.tile[data-board=\"{b1}\"] .result').textContent"),
        )
        .await;
    chrome
        .js("const s = document.querySelector('select[aria-label=sort]'); s.value = 'time'; s.dispatchEvent(new Event('change')); return true;")
        .await;
    let order = chrome
        .until(
            "the tiles by time left",
            "(o => o.length === 4 && o[3] === 'board-003' && o)([...document.querySelectorAll('#tiles .tile')].map(t => t.dataset.board))",
        )
        .await;
    println!("by time left: {order}");
    // Still on: board 4 (round 1, its clock has run longest), then board 2.
    assert_eq!(order, json!([board_id(4), board_id(2), b1, board_id(3)]));
    // The result with its reason, one hover away on the tile.
    let why = chrome
        .js(&format!(
            "return document.querySelector('.tile[data-board=\"{b1}\"] .result').title;"
        ))
        .await;
    assert_eq!(why, "0-1 · White lost on time", "{why}");
    let why = chrome
        .js("return document.querySelector('.tile[data-board=\"board-003\"] .result').title;")
        .await;
    assert_eq!(why, "1-0 · Black resigned", "{why}");
    // A long name cut on a tile is whole in its tooltip.
    let b4 = board_id(4);
    let title = chrome
        .js(&format!(
            "return document.querySelector('.tile[data-board=\"{b4}\"] .side.white .name').title;"
        ))
        .await;
    assert_eq!(title, long);
    // And on the board page, written out whole: the result with its reason too.
    c.goto(&format!("{base}/board/{b4}"))
        .await
        .expect("board 4");
    let whole = chrome
        .until(
            "the long name on the board page",
            &format!("(n => n && n.textContent.includes({long:?}) && n.scrollWidth <= n.clientWidth)([...document.querySelectorAll('.bigclocks .side .name')].find(n => n.textContent.includes('Abdusattorov')))"),
        )
        .await;
    assert_eq!(whole, true);
    c.goto(&format!("{base}/board/{b1}"))
        .await
        .expect("board 1");
    chrome
        .until(
            "the result and why on the board page",
            "document.getElementById('main').textContent.includes('0-1 · White lost on time')",
        )
        .await;

    // --- the round summary keeps round 1's game still on ---
    c.goto(&format!("{base}/round"))
        .await
        .expect("the round page");
    let earlier = chrome
        .until(
            "board 4 in round 2's summary",
            &format!("(r => r && r.classList.contains('earlier') && r.textContent)(document.querySelector('#round-summary tr[data-board=\"{b4}\"]'))"),
        )
        .await;
    assert!(
        earlier.as_str().unwrap_or("").contains("(round 1)"),
        "{earlier}"
    );
    let summary = text_of(&chrome, "#round-summary").await;
    println!("round summary: {summary}");
    assert!(summary.contains("Round 2"), "{summary}");

    // --- one round per public screen ---
    c.goto(&format!("{base}/public?round=1"))
        .await
        .expect("public, round 1");
    let shown = chrome
        .until(
            "round 1 alone on the public screen",
            "(t => t.length === 1 && t)([...document.querySelectorAll('.tile')].map(t => t.dataset.board))",
        )
        .await;
    assert_eq!(shown, json!([b4]));
    let heading = text_of(&chrome, ".pubtitle").await;
    assert!(heading.ends_with("Round 1"), "{heading}");
    c.goto(&format!("{base}/public")).await.expect("public");
    let shown = chrome
        .until(
            "the current round on the public screen",
            "(t => t.length === 3 && t)([...document.querySelectorAll('.tile')].map(t => t.dataset.board))",
        )
        .await;
    assert_eq!(shown, json!([b1, board_id(2), board_id(3)]));
    let heading = text_of(&chrome, ".pubtitle").await;
    assert_eq!(heading, "Hall Open 2026 — Round 2");

    // --- a favicon, not a 404 ---
    let (status, head, _) = webcommon::http(web.addr, "GET", "/favicon.ico", &[], "").await;
    assert_eq!(status, 200, "{head}");
    assert!(head.to_lowercase().contains("image/"), "{head}");
    chrome.close().await;
    rig.stop().await;
}

/// Issue 22 on the board page: a press before the e-board shows its move leaves the state
/// on the position before it (`move_pending`); the page keeps that diagram, dimmed, and
/// says whose press is waiting, until the move is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_before_its_move_is_read_dims_the_diagram_and_says_so() {
    let mut rig = Rig::start("web-pending", 1).await;
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let b = board_id(1);
    let r = rig.start_round(1, "600", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b, "clock_started").await;
    let chrome = Chrome::start("web-pending", 1400, 1000).await;
    log_in(&chrome, &base, "chief").await;
    chrome
        .client
        .goto(&format!("{base}/board/{b}"))
        .await
        .expect("the board page");
    // 1. e4, read and pressed; then Black presses with the pawn still in the hand.
    rig.sim.board(1).play_move("e2e4").expect("1. e4");
    tokio::time::sleep(Duration::from_millis(400)).await;
    rig.sim.board(1).press();
    rig.watcher.event(&b, "pressed").await;
    chrome
        .until(
            "1. e4 on the page",
            "document.querySelector('.status') && !document.querySelector('.diagram.pending') && document.getElementById('main').textContent.includes('e4')",
        )
        .await;
    rig.sim.board(1).lift("e7").expect("lift the pawn");
    rig.sim.board(1).press();
    let said = chrome
        .until(
            "the pending press on the page",
            "document.querySelector('.diagram.pending') && document.querySelector('.status').textContent",
        )
        .await;
    assert!(
        said.as_str()
            .unwrap_or("")
            .contains("Black pressed; waiting for the board to show the move"),
        "{said}"
    );
    let _ = chrome.shot("board-move-pending").await;
    // The pawn lands: the move is read, the diagram is whole again.
    rig.sim.board(1).place("e5", 'p').expect("place the pawn");
    chrome
        .until(
            "1... e5 read",
            "!document.querySelector('.diagram.pending') && !document.querySelector('.status').textContent.includes('waiting for the board')",
        )
        .await;
    chrome.close().await;
    rig.stop().await;
}

/// Issue 38, item 1: a round form left open follows the clock, and a start that has
/// passed is said in words, with its cost, and sent only as the arbiter chooses; the
/// daemon refuses a stale start that comes without `allow_past_start`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_start_that_has_passed_is_said_in_words_and_sent_only_as_chosen() {
    let mut rig = Rig::start_with("web-past-start", 2, GameDefaults::default()).await;
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-past-start", 1366, 768).await;
    log_in(&chrome, &base, "chief").await;
    chrome
        .client
        .goto(&format!("{base}/round"))
        .await
        .expect("the round page");
    chrome
        .until(
            "the round form",
            "document.querySelectorAll('#pairing-rows tr').length === 2",
        )
        .await;

    // Five minutes pass on the server's clock while the form is open: the proposal follows.
    chrome.js("store.civilOffset += 300000; return true;").await;
    chrome
        .until(
            "the proposed start to follow the clock",
            "parseLocal(document.getElementById('round-start').value) > serverCivilNow() + 30000",
        )
        .await;
    let hidden = chrome
        .js("return document.getElementById('start-past').hidden;")
        .await;
    assert_eq!(
        hidden,
        Value::Bool(true),
        "a proposal that follows is never past"
    );
    chrome.js("store.civilOffset -= 300000; return true;").await;
    chrome
        .until(
            "the proposal back on the clock",
            "Math.abs(parseLocal(document.getElementById('round-start').value) - serverCivilNow() - 60000) < 3000",
        )
        .await;

    // The daemon: a start typed 3 min 25 s ago is refused in words, nothing starts.
    let answer = chrome
        .js(
            r#"return fetch('/api/hall/command', {method: 'POST', credentials: 'same-origin',
              headers: {'content-type': 'application/json', 'x-csrf-token': store.me.csrf},
              body: JSON.stringify({transaction: 'stale-1', action: 'start_round', round: 1,
                start: Math.round(serverCivilNow()) - 205000,
                pairings: [{board: 'board-001', white: 'A', black: 'B'}]})}).then(r => r.json());"#,
        )
        .await;
    assert_eq!(answer["error"], "past_start", "{answer}");
    let why = answer["reason"].as_str().unwrap_or("");
    assert!(
        why.contains("3 min 2") && why.contains("ago") && why.contains("allow_past_start"),
        "{why}"
    );

    // The arbiter types a start that has passed: said at once, with the cost to White.
    chrome
        .js(r#"
            const rows = document.querySelectorAll('#pairing-rows tr');
            rows.forEach((tr, i) => {
              tr.querySelector('[name=white]').value = ['Martínez', 'Kc Player'][i];
              tr.querySelector('[name=black]').value = ['Ortega', 'Other'][i];
            });
            const f = document.getElementById('round-start');
            f.value = localInput(serverCivilNow() - 205000);
            f.dispatchEvent(new Event('input', {bubbles: true}));
            return true;"#)
        .await;
    let said = chrome
        .until(
            "the passed start in words",
            "!document.getElementById('start-past').hidden && document.getElementById('start-past-words').textContent",
        )
        .await;
    let said = said.as_str().unwrap_or("").to_string();
    assert!(
        said.starts_with("This start was 3 min 2")
            && said.contains("ago: every White would start 3:2")
            && said.ends_with("down."),
        "{said}"
    );
    // Start round with it: not sent.
    press(&chrome, "#start-round button[type=submit]", "Start round").await;
    let reply = chrome
        .until(
            "the page's refusal",
            "document.getElementById('round-reply').textContent",
        )
        .await;
    assert!(
        reply
            .as_str()
            .unwrap_or("")
            .starts_with("not sent: the start has passed"),
        "{reply}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        events(&mut rig, &board_id(1), "clock_started"),
        0,
        "nothing was started"
    );
    chrome
        .js("document.getElementById('start-past').scrollIntoView({block: 'center'}); return true;")
        .await;
    let _ = chrome
        .shot_for_docs(
            "round-past-start-laptop",
            "screenshots/round-past-start-laptop.png",
        )
        .await;
    chrome
        .client
        .set_window_size(390, 844)
        .await
        .expect("a phone's window");
    chrome
        .js("document.getElementById('start-past').scrollIntoView({block: 'center'}); return true;")
        .await;
    let _ = chrome
        .shot_for_docs(
            "round-past-start-phone",
            "screenshots/round-past-start-phone.png",
        )
        .await;
    chrome
        .client
        .set_window_size(1366, 768)
        .await
        .expect("a laptop's window");

    // A resumption whose start has passed is asked about the same way, before sending.
    chrome
        .js(r#"
            const f = document.querySelector('form[data-action=schedule_resumption]');
            f.querySelector('[name=start]').value = localInput(serverCivilNow() - 125000);
            f.querySelector('[name=place]').value = 'Hall B';
            return true;"#)
        .await;
    press(
        &chrome,
        "form[data-action=schedule_resumption] button[type=submit]",
        "Schedule resumption",
    )
    .await;
    let asked = chrome
        .until(
            "the resumption's question",
            "(b => !b.hidden && b.textContent)(document.querySelector('form[data-action=schedule_resumption] .confirm'))",
        )
        .await;
    let asked = asked.as_str().unwrap_or("").to_string();
    assert!(
        asked.starts_with("This start was 2 min ")
            && asked.contains("the player to move would start 2:0")
            && asked.contains("Keep this start"),
        "{asked}"
    );
    press(
        &chrome,
        "form[data-action=schedule_resumption] .confirm button:not(.primary)",
        "Cancel",
    )
    .await;

    // Keep it: sent as meant, and White starts that far down.
    press(&chrome, "#start-keep", "Keep this start").await;
    let reply = chrome
        .until(
            "the start_round answer",
            "/^(done|refused)/.test(document.getElementById('round-reply').textContent) && document.getElementById('round-reply').textContent",
        )
        .await;
    assert_eq!(reply, "done: start round", "{reply}");
    let white = chrome
        .until(
            "White's clock",
            "board('board-001').state && board('board-001').state.running === 'white' && clockMs(board('board-001').state, 'white')",
        )
        .await;
    let white = white.as_f64().unwrap_or(0.0);
    // 40/5400+30: 90 min, and the first move's 30 s credited at the start.
    let full = 5_430_000.0;
    assert!(
        white < full - 200_000.0 && white > full - 215_000.0,
        "White starts 3:25 down: {white} ms"
    );
    chrome.close().await;
}

/// Issue 38, item 4: on a phone, a game in play's common ends and 7.5.5 are the first
/// thing on its board page, above the diagram, in words, thumb-sized; a result is two
/// taps; the full Set result form never confirms what the daemon would refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_is_two_taps_on_a_phone_in_words() {
    let mut rig = Rig::start_with("web-quick", 2, GameDefaults::default()).await;
    let r = rig.start_round(2, "5400+30", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-quick", 1366, 768).await;
    // A phone's width: Chromium's window does not start narrower than 500 px.
    chrome
        .client
        .set_window_size(390, 844)
        .await
        .expect("a phone's window");
    log_in(&chrome, &base, "chief").await;
    let b1 = board_id(1);
    chrome
        .client
        .goto(&format!("{base}/board/{b1}"))
        .await
        .expect("the board page");
    chrome
        .until(
            "the quick acts",
            "document.querySelector('[data-quick=black-resigns]') && board('board-001').state.phase === 'running'",
        )
        .await;
    // First on the phone's screen, above the diagram, every button a thumb's size.
    let layout = chrome
        .js(r#"
            const q = document.getElementById('quick-acts').getBoundingClientRect();
            const d = document.querySelector('.diagram').getBoundingClientRect();
            const last = document.querySelector('[data-quick=black-resigns]').getBoundingClientRect();
            const small = [...document.querySelectorAll('#quick-acts button')]
              .map(b => b.getBoundingClientRect()).filter(r => r.height < 44 || r.width < 44).length;
            return {above: q.bottom <= d.top, inView: last.bottom <= innerHeight, small};"#)
        .await;
    assert_eq!(
        layout,
        json!({"above": true, "inView": true, "small": 0}),
        "{layout}"
    );
    // In words, never the daemon's values.
    let words = chrome
        .js(r#"return [...document.querySelectorAll('#quick-acts button, #acts-all select[name=result] option')].map(e => e.textContent).join(' | ');"#)
        .await;
    let words = words.as_str().unwrap_or("").to_string();
    assert!(
        words.contains("White resigns")
            && words.contains("Draw agreed")
            && words.contains("+2 min to Black")
            && words.contains("½-½"),
        "{words}"
    );
    assert!(
        !words.contains('_'),
        "a raw value among the choices: {words}"
    );
    let _ = chrome
        .shot_for_docs("board-quick-phone", "screenshots/board-quick-phone.png")
        .await;

    // The full form: a resignation without a side is said at once, never confirmed.
    chrome
        .js(r#"
            document.querySelector('details.every').open = true;
            const f = document.querySelector('#acts-all form[data-action=set_result]');
            f.querySelector('[name=result]').value = 'resignation';
            f.querySelector('[name=reason]').value = 'resigned';
            return true;"#)
        .await;
    press(
        &chrome,
        "#acts-all form[data-action=set_result] button[type=submit]",
        "Set result",
    )
    .await;
    let said = chrome
        .js(r#"const f = document.querySelector('#acts-all form[data-action=set_result]');
              return {reply: f.querySelector('.reply').textContent, confirm: !f.querySelector('.confirm').hidden};"#)
        .await;
    assert_eq!(
        said,
        json!({"reply": "A resignation: say who (White or Black)", "confirm": false}),
        "{said}"
    );

    // Two taps: "Black resigns", then Confirm, after the act in words.
    press(&chrome, "[data-quick=black-resigns]", "Black resigns").await;
    let words = chrome
        .until(
            "the confirmation",
            "!document.getElementById('quick-confirm').hidden && document.getElementById('quick-confirm').textContent",
        )
        .await;
    assert!(
        words
            .as_str()
            .unwrap_or("")
            .starts_with("board-001: Black 1 (Black) resigns and loses: 1-0."),
        "{words}"
    );
    press(&chrome, "#quick-yes", "Confirm").await;
    let ended = rig.watcher.event(&b1, "game_ended").await;
    assert_eq!(ended["score"], "1-0", "{ended}");

    // 7.5.5 on the other board, on a laptop: +2 min to Black for White's illegal move.
    chrome
        .client
        .set_window_size(1366, 768)
        .await
        .expect("a laptop's window");
    let b2 = board_id(2);
    chrome
        .client
        .goto(&format!("{base}/board/{b2}"))
        .await
        .expect("the board page");
    chrome
        .until(
            "the quick acts",
            "document.querySelector('[data-quick=plus2-black]')",
        )
        .await;
    press(&chrome, "[data-quick=plus2-black]", "+2 min to Black").await;
    let words = chrome
        .until(
            "the confirmation",
            "!document.getElementById('quick-confirm').hidden && document.getElementById('quick-confirm').textContent",
        )
        .await;
    assert!(
        words.as_str().unwrap_or("").contains(
            "2 minutes added to Black 2 (Black): White 2 (White) made an illegal move (7.5.5)"
        ),
        "{words}"
    );
    let _ = chrome
        .shot_for_docs("board-quick-laptop", "screenshots/board-quick-laptop.png")
        .await;
    press(&chrome, "#quick-yes", "Confirm").await;
    let added = rig.watcher.event(&b2, "time_added").await;
    assert_eq!(
        (added["side"].clone(), added["delta_ms"].clone()),
        (json!("black"), json!(120_000)),
        "{added}"
    );
    chrome.close().await;
}

/// The tiles' order, as shown.
async fn tile_order(chrome: &Chrome) -> Vec<String> {
    let v = chrome
        .js("return [...document.querySelectorAll('#tiles .tile')].map(t => t.dataset.board);")
        .await;
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Issue 38, items 5 and 7: sorted by time left, no tile moves while the pointer is over
/// the tiles (the new order waits behind "re-sort"); "4" and "board 4" find board 4, and
/// "martinez" finds Martínez.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiles_hold_still_under_the_pointer_and_boards_are_found_by_number_and_plain_name() {
    let mut rig = Rig::start_with("web-tiles", 6, GameDefaults::default()).await;
    let pairings: Vec<Value> = (1..=6)
        .map(|n| {
            let white = if n == 3 {
                "Martínez, José".to_string()
            } else {
                format!("White {n}")
            };
            json!({"board": board_id(n), "white": white, "black": format!("Black {n}")})
        })
        .collect();
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 1, "time_control": "5400+30",
            "start": common::now_ms(), "pairings": pairings}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    // Distinct times, in board order: board n has n × 100 s.
    for n in 1..=6 {
        let r = rig
            .board_command(
                &board_id(n),
                json!({"action": "set_time", "side": "white", "remaining_ms": n as i64 * 100_000, "reason": "test"}),
            )
            .await;
        assert_eq!(r["status"], "ok", "{r}");
    }
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-tiles", 1366, 768).await;
    log_in(&chrome, &base, "chief").await;
    chrome
        .until(
            "six tiles",
            "document.querySelectorAll('#tiles .tile').length === 6",
        )
        .await;
    chrome
        .js("const s = document.querySelector('select[aria-label=sort]'); s.value = 'time'; s.dispatchEvent(new Event('change')); return true;")
        .await;
    let sorted: Vec<String> = (1..=6).map(board_id).collect();
    chrome
        .until(
            "sorted by time left",
            &format!(
                "[...document.querySelectorAll('#tiles .tile')].map(t => t.dataset.board).join() === {:?}",
                sorted.join(",")
            ),
        )
        .await;

    // The pointer on the first tile; board 6 falls to 10 s: it would sort first.
    let first = chrome
        .client
        .find(Locator::Css("#tiles .tile"))
        .await
        .expect("a tile");
    chrome
        .client
        .perform_actions(fantoccini::actions::MouseActions::new("mouse".into()).then(
            fantoccini::actions::PointerAction::MoveToElement {
                element: first,
                duration: None,
                x: 0.0,
                y: 0.0,
            },
        ))
        .await
        .expect("the pointer over the tiles");
    let r = rig
        .board_command(
            &board_id(6),
            json!({"action": "set_time", "side": "white", "remaining_ms": 10_000, "reason": "test"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    // The feed has brought board 6's time (its clock shows under 0:11)...
    chrome
        .until(
            "board 6's new time",
            "clockMs(board('board-006').state, 'white') < 11000",
        )
        .await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // ...and no tile moved under the pointer; the new order is offered.
    assert_eq!(
        tile_order(&chrome).await,
        sorted,
        "no tile moved under the pointer"
    );
    chrome
        .until(
            "the re-sort offer",
            "!document.getElementById('resort').hidden",
        )
        .await;
    let _ = chrome
        .shot_for_docs("hall-resort-laptop", "screenshots/hall-resort-laptop.png")
        .await;
    press(&chrome, "#resort", "Re-sort").await;
    chrome
        .until(
            "the new order",
            "document.querySelector('#tiles .tile').dataset.board === 'board-006'",
        )
        .await;

    // Found by number and by name without accents.
    for (query, want) in [
        ("4", vec![board_id(4)]),
        ("board 4", vec![board_id(4)]),
        ("martinez", vec![board_id(3)]),
        ("MARTÍNEZ", vec![board_id(3)]),
    ] {
        chrome
            .js(&format!(
                "const q = document.getElementById('hall-find'); q.value = {query:?}; q.dispatchEvent(new Event('input')); return true;"
            ))
            .await;
        chrome
            .until(
                &format!("the boards found by {query:?}"),
                &format!(
                    "[...document.querySelectorAll('#tiles .tile')].map(t => t.dataset.board).join() === {:?}",
                    want.join(",")
                ),
            )
            .await;
    }
    chrome.close().await;
}

/// How many pieces the board page's diagram draws.
const PIECES: &str = "[...document.querySelectorAll('.diagram text.piece')].filter(t => t.textContent.trim()).length";

/// Issue 38, item 3: after the envelope is opened, the board page asks, in the banner and
/// in "Now", for the sealed move to be made on the board until play goes on from it; the
/// diagram keeps the known position (never blank) even when a state comes without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_opening_the_page_asks_for_the_sealed_move_on_the_board() {
    let mut rig = Rig::start_with("web-resume", 1, GameDefaults::default()).await;
    let b1 = board_id(1);
    let r = rig.start_round(1, "5400+30", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b1, "clock_started").await;
    for cmd in [
        json!({"action": "adjourn"}),
        json!({"action": "seal", "mv": "e4"}),
        json!({"action": "commit_seal"}),
        json!({"action": "schedule_resumption", "resumption": {"start": common::now_ms() + 1500, "place": "hall"}}),
    ] {
        let r = rig.board_command(&b1, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    rig.watcher.event(&b1, "resumption_started").await;
    for cmd in [
        json!({"action": "present", "side": "white"}),
        json!({"action": "present", "side": "black"}),
        json!({"action": "open_envelope"}),
    ] {
        let r = rig.board_command(&b1, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    let played = rig.watcher.event(&b1, "sealed_move_played").await;
    assert_eq!(played["san"], "e4", "{played}");

    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-resume", 1366, 768).await;
    log_in(&chrome, &base, "chief").await;
    // On every page, the banner says it; on the board page, "Now" too.
    let banner = chrome
        .until(
            "the banner",
            "!document.getElementById('banner').hidden && document.getElementById('banner').textContent",
        )
        .await;
    assert!(
        banner.as_str().unwrap_or("").contains(
            "board-001: play the sealed move e4 on the board (White's move, from the envelope)"
        ),
        "{banner}"
    );
    chrome
        .client
        .goto(&format!("{base}/board/{b1}"))
        .await
        .expect("the board page");
    let now = chrome
        .until(
            "the sealed move in Now",
            "document.getElementById('now-note').textContent.includes('sealed move') && document.getElementById('now-note').textContent",
        )
        .await;
    assert!(
        now.as_str()
            .unwrap_or("")
            .starts_with("Now play the sealed move e4 on the board"),
        "{now}"
    );
    let pieces = chrome.js(&format!("return {PIECES};")).await;
    assert_eq!(pieces, json!(32), "the position after e4 is drawn");
    let _ = chrome
        .shot_for_docs(
            "board-sealed-move-laptop",
            "screenshots/board-sealed-move-laptop.png",
        )
        .await;
    chrome
        .client
        .set_window_size(390, 844)
        .await
        .expect("a phone's window");
    let _ = chrome
        .shot_for_docs(
            "board-sealed-move-phone",
            "screenshots/board-sealed-move-phone.png",
        )
        .await;
    chrome
        .client
        .set_window_size(1366, 768)
        .await
        .expect("a laptop's window");

    // A state without a position (a resynchronisation that failed): the diagram keeps
    // the last known one, dimmed, and says so.
    chrome
        .js("const b = board('board-001'); b.state = Object.assign({}, b.state, {fen: null}); dirty.boards.add('board-001'); renderSoon(); return true;")
        .await;
    let status = chrome
        .until(
            "the stale position said",
            "document.querySelector('.status').textContent.includes('not read') && document.querySelector('.status').textContent",
        )
        .await;
    assert!(
        status
            .as_str()
            .unwrap_or("")
            .contains("the last known position is shown"),
        "{status}"
    );
    let pieces = chrome.js(&format!("return {PIECES};")).await;
    assert_eq!(pieces, json!(32), "never blank while the position is known");

    // The arbiter makes the sealed move on the board; Black replies: play goes on, and
    // the request is gone from "Now" and the banner.
    rig.sim.board(1).play_move("e2e4").expect("e4 on the board");
    tokio::time::sleep(Duration::from_millis(500)).await;
    rig.sim.board(1).play_move("e7e5").expect("e5 on the board");
    tokio::time::sleep(Duration::from_millis(100)).await;
    rig.sim.board(1).press();
    rig.watcher.event(&b1, "move_made").await;
    chrome
        .until(
            "the request gone",
            "!document.getElementById('now-note').textContent.includes('sealed move') && (document.getElementById('banner').hidden || !document.getElementById('banner').textContent.includes('sealed move'))",
        )
        .await;
    chrome.close().await;
}

/// The seal field's text, typed as an arbiter does.
async fn type_seal(chrome: &Chrome, text: &str) {
    let mv = chrome
        .client
        .find(Locator::Css(
            "#acts-now form[data-action=seal] input[name=mv]",
        ))
        .await
        .expect("the seal's field");
    mv.clear().await.expect("clear the field");
    mv.send_keys(text).await.expect("type the sealed move");
    press(
        chrome,
        "#acts-now form[data-action=seal] button[type=submit]",
        "seal",
    )
    .await;
}

/// Issue 38 §2: in a Spanish event `Re2` is the king's move (R = rey). The seal field says
/// which letters are in force; an English letter is refused before anything is sealed; a
/// move that cannot be played is said so; the confirmation says the move in words and
/// draws it on the diagram; and the envelope opens to the king's move. (On the old code
/// `Re2` was read as a rook and the confirmation only repeated "Re2".)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_i_8_a_spanish_re2_is_sealed_as_the_king_and_said_so() {
    let mut rig = Rig::start_with("web-seal-es", 1, GameDefaults::default()).await;
    let b1 = board_id(1);
    let r = rig.start_round(1, "5400+30", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&b1, "clock_started").await;
    for mv in ["e2e4", "e7e5"] {
        rig.sim
            .board(1)
            .play_move(mv)
            .expect("the move on the board");
        tokio::time::sleep(Duration::from_millis(60)).await;
        rig.sim.board(1).press();
        rig.watcher.event(&b1, "move_made").await;
    }
    for cmd in [
        json!({"action": "set_adjournment_rules", "rules": {"notation_language": "es"}}),
        json!({"action": "adjourn"}),
    ] {
        let r = rig.board_command(&b1, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }

    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-seal-es", 1366, 768).await;
    log_in(&chrome, &base, "chief").await;
    chrome
        .client
        .goto(&format!("{base}/board/{b1}"))
        .await
        .expect("the board page");
    until_acts(&chrome, "ordered to seal", &["seal"]).await;
    let hint = text_of(&chrome, "#acts-now form[data-action=seal] .letters").await;
    assert!(
        hint.contains("Spanish letters: R rey (king), D dama, T torre, A alfil, C caballo"),
        "{hint}"
    );

    // An English knight in a Spanish event: refused by the page, nothing to confirm.
    type_seal(&chrome, "Nf3").await;
    let refused = chrome
        .until(
            "the foreign letter refused",
            "(t => t.includes('not a piece letter') && t)(document.querySelector('#acts-now form[data-action=seal] .reply').textContent)",
        )
        .await;
    assert!(
        refused.as_str().unwrap_or("").contains("(R D T A C)"),
        "{refused}"
    );
    // A rook (torre) that cannot reach e2: said before it is sealed, sealable only as such.
    type_seal(&chrome, "Te2").await;
    let illegal = chrome
        .until(
            "the illegal move said",
            "(b => b && !b.hidden && b.textContent)(document.querySelector('#acts-now form[data-action=seal] .confirm'))",
        )
        .await;
    let illegal = illegal.as_str().unwrap_or("").to_string();
    assert!(
        illegal.contains("\"Te2\" cannot be played here") && illegal.contains("Seal it as written"),
        "{illegal}"
    );
    // Re2: the king, in words and as an arrow from e1 to e2.
    type_seal(&chrome, "Re2").await;
    let ask = chrome
        .until(
            "the king's move said",
            "(b => b && !b.hidden && b.textContent.includes('king') && b.textContent)(document.querySelector('#acts-now form[data-action=seal] .confirm'))",
        )
        .await;
    assert!(
        ask.as_str().unwrap_or("").contains(
            "seals White's king from e1 to e2 — Rey e1–e2 (written \"Re2\", Ke2 in English)"
        ),
        "{ask}"
    );
    let arrow = chrome
        .js("const a = document.querySelector('svg.board .arrow'); return a.getAttribute('visibility') + ' ' + a.querySelector('line').getAttribute('x1') + ',' + a.querySelector('line').getAttribute('y1');")
        .await;
    // e1's centre: file e (x 45), rank 1 (y 75), White at the bottom.
    assert_eq!(arrow, "visible 45.00,75.00", "the arrow starts on e1");
    let _ = chrome
        .shot_for_docs(
            "board-seal-es-laptop",
            "screenshots/board-seal-es-laptop.png",
        )
        .await;
    press(
        &chrome,
        "#acts-now form[data-action=seal] .confirm button.primary",
        "confirm the seal",
    )
    .await;
    rig.watcher.event(&b1, "sealed").await;
    // The page's answer may come just after the event: waited for, not raced.
    chrome
        .until(
            "the arrow gone with the confirmation",
            "document.querySelector('svg.board .arrow').getAttribute('visibility') === 'hidden'",
        )
        .await;

    // The opening reads the same text the same way: the king's move.
    for cmd in [
        json!({"action": "commit_seal"}),
        json!({"action": "schedule_resumption", "resumption": {"start": common::now_ms() + 1500, "place": "hall"}}),
    ] {
        let r = rig.board_command(&b1, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    rig.watcher.event(&b1, "resumption_started").await;
    for cmd in [
        json!({"action": "present", "side": "white"}),
        json!({"action": "present", "side": "black"}),
        json!({"action": "open_envelope"}),
    ] {
        let r = rig.board_command(&b1, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    let opened = rig.watcher.event(&b1, "envelope_opened").await;
    assert_eq!(opened["move_text"], "Re2");
    let played = rig.watcher.event(&b1, "sealed_move_played").await;
    assert_eq!(played["san"], "Ke2", "{played}");
    chrome.close().await;
}

/// The text of the board page's event log.
async fn log_text(chrome: &Chrome) -> String {
    text_of(chrome, "#log").await
}

/// Issue 38, item 11: the page's words. The login page offers no pages and no feed before
/// the login; the hall's count line counts every board, paused ones included; the board
/// log says who confirmed a flag (the daemon's `game_ended` carries it) and an envelope's
/// verdict without saying "verdict" twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_words_count_every_board_and_say_who_confirmed_a_flag() {
    let mut rig = Rig::start_with("web-words-11", 4, GameDefaults::default()).await;
    let r = rig
        .start_round(4, "600", 0, json!({"flag_mode": "claim"}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    let (b1, b2, b3, b4) = (board_id(1), board_id(2), board_id(3), board_id(4));
    for b in [&b1, &b2, &b3, &b4] {
        rig.watcher.event(b, "clock_started").await;
    }
    let web = dashboard(&rig).await;
    let base = format!("http://{}", web.addr);
    let chrome = Chrome::start("web-words-11", 1366, 768).await;
    let c = &chrome.client;

    // --- the login page: no navigation, no "connecting…" ---
    c.goto(&format!("{base}/login")).await.expect("login");
    chrome
        .until("the login form", "document.getElementById('login')")
        .await;
    let shown = chrome
        .js("const seen = id => { const e = document.getElementById(id); return !!e && e.getClientRects().length > 0; };
             return {nav: seen('nav'), conn: seen('conn'), text: document.getElementById('top').innerText};")
        .await;
    assert_eq!(shown["nav"], false, "{shown}");
    assert_eq!(shown["conn"], false, "{shown}");
    assert!(
        !shown["text"].as_str().unwrap_or("").contains("connecting"),
        "{shown}"
    );
    log_in(&chrome, &base, "chief").await;
    chrome
        .until(
            "the pages and the feed after the login",
            "document.getElementById('nav').getClientRects().length && document.querySelector('#conn.live')",
        )
        .await;

    // --- every board counted: 1 paused, 1 finished, 1 a flag waiting, 1 running ---
    for (b, cmd) in [
        (&b1, json!({"action": "pause", "reason": "noise"})),
        (
            &b2,
            json!({"action": "set_result", "result": "1-0", "reason": "test"}),
        ),
        (
            &b3,
            json!({"action": "set_time", "side": "white", "remaining_ms": 1000, "reason": "test"}),
        ),
    ] {
        let r = rig.board_command(b, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    rig.watcher.event(&b3, "result_pending").await;
    let line = chrome
        .until(
            "the count line with the flag",
            "(t => t.includes('flag waiting') && t)(document.querySelector('.summary').textContent)",
        )
        .await;
    let line = line.as_str().unwrap_or("").to_string();
    println!("the hall's count line: {line}");
    assert!(
        line.starts_with("4 boards · 1 running · 1 flag waiting · 1 paused · 1 finished · "),
        "{line}"
    );

    // --- the flag confirmed from the board page: who confirmed it is in the log ---
    c.goto(&format!("{base}/board/{b3}"))
        .await
        .expect("board 3");
    chrome
        .until(
            "the confirm flag act",
            "document.querySelector('[data-quick=confirm-flag]')",
        )
        .await;
    press(&chrome, "[data-quick=confirm-flag]", "Confirm flag").await;
    press(&chrome, "#quick-yes", "Confirm").await;
    let ended = rig.watcher.event(&b3, "game_ended").await;
    assert_eq!(ended["confirmed_by"], "IA Chief Test", "{ended}");
    let log = chrome
        .until(
            "the confirmation in the log",
            "(t => t.includes('game ended') && t)(document.getElementById('log').textContent)",
        )
        .await;
    let log = log.as_str().unwrap_or("").to_string();
    assert!(
        log.contains("game ended: 0-1 · White lost on time — confirmed by: IA Chief Test"),
        "{log}"
    );

    // --- an envelope opened: its verdict said once ---
    for cmd in [
        json!({"action": "adjourn"}),
        json!({"action": "seal", "mv": "e4"}),
        json!({"action": "commit_seal"}),
        json!({"action": "schedule_resumption", "resumption": {"start": common::now_ms() + 1500, "place": "hall"}}),
    ] {
        let r = rig.board_command(&b4, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    rig.watcher.event(&b4, "resumption_started").await;
    for cmd in [
        json!({"action": "present", "side": "white"}),
        json!({"action": "present", "side": "black"}),
        json!({"action": "open_envelope"}),
    ] {
        let r = rig.board_command(&b4, cmd.clone()).await;
        assert_eq!(r["status"], "ok", "{cmd}: {r}");
    }
    rig.watcher.event(&b4, "envelope_opened").await;
    c.goto(&format!("{base}/board/{b4}"))
        .await
        .expect("board 4");
    chrome
        .until(
            "the opening in the log",
            "document.getElementById('log').textContent.includes('envelope opened')",
        )
        .await;
    let log = log_text(&chrome).await;
    assert!(log.contains("verdict: legal (e4)"), "{log}");
    assert!(!log.contains("verdict verdict"), "{log}");
    chrome.close().await;
    rig.stop().await;
}
