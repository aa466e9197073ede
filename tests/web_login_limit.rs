//! Login rate limiting over real HTTP (docs/SECURITY.md, "Over the web"): after a burst of
//! wrong passwords the right one is refused with 429 and `Retry-After` without being
//! checked, another client and another account are not held up, the client is the TCP
//! peer unless `web.trusted_proxy` names it, and the lockout raises the hall's
//! `auth_failures` alert over a real Mosquitto, naming the account and the client and
//! never the password. The limiter's timing (1 s, 2 s, 4 s …, 15 minutes) is proven in
//! `web::limiter`'s unit tests with explicit instants; nothing here waits on the clock.

mod common;
mod webcommon;

use common::{HALL, Rig};
use hallclock::rules::Millis;
use hallclock::web::AppState;
use hallclock::web::limiter::{BURST_FAILURES, FREE_FAILURES, LOCKOUT, LOCKOUT_FAILURES};
use serde_json::{Value, json};
use webcommon::{PASSWORD, http};

const WRONG: &str = "not-the-password-42";

/// One login from `client` (sent as the proxy's `X-Forwarded-For`): (status, head, body).
async fn login_from(
    addr: std::net::SocketAddr,
    client: &str,
    id: &str,
    password: &str,
) -> (u16, String, Value) {
    let (status, head, body) = http(
        addr,
        "POST",
        "/api/login",
        &[
            ("Content-Type", "application/json"),
            ("X-Forwarded-For", client),
        ],
        &json!({"id": id, "password": password}).to_string(),
    )
    .await;
    (
        status,
        head.to_ascii_lowercase(),
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// A daemon with its dashboard, whose logins come through a proxy on this machine (so
/// the test names each client in `X-Forwarded-For`), and whose alerts reach Mosquitto.
async fn behind_the_proxy(name: &str) -> (Rig, AppState) {
    let rig = Rig::start(name, 1).await;
    let state = AppState::for_hall(
        HALL,
        rig.hall.as_ref().expect("the daemon runs"),
        webcommon::accounts(),
        false,
    );
    state.trust_proxy("127.0.0.1".parse().expect("an address"));
    (rig, state)
}

fn retry_after(head: &str) -> Option<u64> {
    head.lines()
        .find_map(|l| l.strip_prefix("retry-after: "))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_wrong_passwords_the_right_one_waits_with_429_for_that_client_and_account() {
    let detached = webcommon::detached(HALL);
    let state = detached.state.clone();
    state.trust_proxy("127.0.0.1".parse().expect("an address"));
    let web = webcommon::serve(state).await;
    let a = "198.51.100.7";
    for n in 0..FREE_FAILURES {
        let (status, _, body) = login_from(web.addr, a, "arb", WRONG).await;
        assert_eq!((status, &body["error"]), (401, &json!("bad_login")), "{n}");
    }
    // The right password now: refused, unchecked, with when to come back.
    let (status, head, body) = login_from(web.addr, a, "arb", PASSWORD).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"], "too_many_attempts", "{body}");
    assert_eq!(retry_after(&head), Some(1), "{head}");
    // Another account from the same client waits too (the client is held)…
    let (status, _, _) = login_from(web.addr, a, "viewer", PASSWORD).await;
    assert_eq!(status, 429);
    // … and the same account from another client (the account is held) …
    let b = "198.51.100.8";
    let (status, _, _) = login_from(web.addr, b, "arb", PASSWORD).await;
    assert_eq!(status, 429);
    // … but another client with another account logs in.
    let (status, _, body) = login_from(web.addr, b, "viewer", PASSWORD).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_trusted_proxy_x_forwarded_for_does_not_make_a_new_client() {
    let detached = webcommon::detached(HALL);
    let state = detached.state.clone();
    let web = webcommon::serve(state).await;
    for n in 0..FREE_FAILURES {
        let (status, _, _) = login_from(web.addr, &format!("192.0.2.{n}"), "arb", WRONG).await;
        assert_eq!(status, 401);
    }
    // The header claims a fresh address, but the peer is the same 127.0.0.1.
    let (status, head, _) = login_from(web.addr, "192.0.2.99", "viewer", PASSWORD).await;
    assert_eq!(status, 429);
    assert_eq!(retry_after(&head), Some(1), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lockout_refuses_the_right_password_and_raises_auth_failures_over_mqtt() {
    let (mut rig, state) = behind_the_proxy("login-limit").await;
    let attacker = "203.0.113.9";
    // Nine failures long enough ago that their back-off (64 s at most) is over: the
    // burst without the waiting, which the limiter's unit tests prove.
    {
        let then = state.timebase().now() - Millis(200_000);
        let mut limiter = state.limiter();
        for _ in 1..LOCKOUT_FAILURES {
            limiter.record_failure(attacker.parse().expect("an address"), "chief", then);
        }
    }
    let web = webcommon::serve(state).await;
    let (status, _, body) = login_from(web.addr, attacker, "chief", WRONG).await;
    assert_eq!(status, 401, "the tenth wrong password is checked: {body}");

    let topic = rig.topic(&format!("alert/auth-failures-{}", common::NODE));
    let alert = rig
        .watcher
        .wait("the auth_failures alert", |m| {
            m.topic == topic && m.raised()
        })
        .await;
    let text = String::from_utf8_lossy(&alert.payload).into_owned();
    let alert = alert.json();
    assert_eq!(alert["kind"], "auth_failures", "{alert}");
    assert_eq!(
        alert["id"],
        format!("auth-failures-{}", common::NODE),
        "{alert}"
    );
    assert_eq!(alert["board"], Value::Null, "{alert}");
    let message = alert["message"].as_str().unwrap_or("");
    assert!(message.contains("'chief'"), "names the account: {message}");
    assert!(message.contains(attacker), "names the client: {message}");
    assert!(!text.contains(WRONG), "never the password: {text}");

    // Locked out: the right password is refused for the lockout's length.
    let (status, head, body) = login_from(web.addr, attacker, "chief", PASSWORD).await;
    assert_eq!(status, 429, "{body}");
    let secs = retry_after(&head).unwrap_or(0);
    let lockout = u64::try_from(LOCKOUT.0 / 1000).unwrap_or(0);
    assert!(secs > lockout - 60 && secs <= lockout, "{head}");
    // The chief from the hall's own machine, and others, are not the attacker: the
    // account is locked for everyone, the other accounts for nobody.
    let (status, _, _) = login_from(web.addr, "10.0.0.5", "chief", PASSWORD).await;
    assert_eq!(status, 429, "the account itself is locked");
    let (status, _, body) = login_from(web.addr, "10.0.0.5", "arb", PASSWORD).await;
    assert_eq!(status, 200, "{body}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spray_from_many_addresses_at_many_accounts_raises_auth_failures_over_mqtt() {
    // One wrong password each from 20 addresses at 20 account names: no address and no
    // account is held up, but the hall has seen a burst, and the arbiters are told.
    let (mut rig, state) = behind_the_proxy("login-spray").await;
    let web = webcommon::serve(state).await;
    let topic = rig.topic(&format!("alert/auth-failures-{}", common::NODE));
    for n in 0..BURST_FAILURES {
        let (status, _, body) = login_from(
            web.addr,
            &format!("198.18.0.{n}"),
            &format!("guess-{n}"),
            WRONG,
        )
        .await;
        assert_eq!(status, 401, "{n}: {body}");
        if n + 1 < BURST_FAILURES {
            assert!(
                rig.watcher
                    .drain()
                    .iter()
                    .all(|m| m.topic != topic || m.cleared()),
                "no alert before the burst ({n})"
            );
        }
    }
    let alert = rig
        .watcher
        .wait("the auth_failures alert of the burst", |m| {
            m.topic == topic && m.raised()
        })
        .await;
    let text = String::from_utf8_lossy(&alert.payload).into_owned();
    let alert = alert.json();
    assert_eq!(alert["kind"], "auth_failures", "{alert}");
    let message = alert["message"].as_str().unwrap_or("");
    assert!(
        message.contains(&format!("{BURST_FAILURES} failed passwords in the hall")),
        "{message}"
    );
    assert!(
        message.contains("198.18.0.19"),
        "the last client: {message}"
    );
    assert!(!text.contains(WRONG), "never the password: {text}");
    // Nobody is locked out by it: the chief logs in from a fresh address.
    let (status, _, body) = login_from(web.addr, "10.0.0.5", "chief", PASSWORD).await;
    assert_eq!(status, 200, "{body}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_login_page_says_how_long_a_locked_out_arbiter_waits() {
    // The viewer's account was guessed at ten times (from elsewhere): in Chromium, the
    // right password is refused, and the page says so in words with the wait.
    let detached = webcommon::detached(HALL);
    let state = detached.state.clone();
    {
        let now = state.timebase().now();
        let mut limiter = state.limiter();
        for _ in 0..LOCKOUT_FAILURES {
            limiter.record_failure("203.0.113.50".parse().expect("an address"), "viewer", now);
        }
    }
    let web = webcommon::serve(state).await;
    let chrome = webcommon::Chrome::start("login-limit", 1000, 700).await;
    let c = &chrome.client;
    c.goto(&format!("http://{}/login", web.addr))
        .await
        .expect("the login page");
    chrome
        .until(
            "the login form",
            "document.querySelector('#login input[name=id]')",
        )
        .await;
    c.find(fantoccini::Locator::Css("#login input[name=id]"))
        .await
        .expect("the id field")
        .send_keys("viewer")
        .await
        .expect("typed");
    c.find(fantoccini::Locator::Css("#login input[name=password]"))
        .await
        .expect("the password field")
        .send_keys(PASSWORD)
        .await
        .expect("typed");
    c.find(fantoccini::Locator::Css("#login button"))
        .await
        .expect("the button")
        .click()
        .await
        .expect("clicked");
    let said = chrome
        .until(
            "the refusal",
            "document.getElementById('login-reply').textContent",
        )
        .await;
    let said = said.as_str().unwrap_or("");
    assert!(
        said.contains("too many failed logins: try again in"),
        "{said}"
    );
    // A lockout's wait in minutes, as a person reads it.
    assert!(
        said.ends_with(&format!("try again in {} min", LOCKOUT.0 / 60_000)),
        "{said}"
    );
    let path = chrome.js("return location.pathname;").await;
    assert_eq!(path, "/login", "still on the login page");
    let _ = chrome.shot("login-locked").await;
    chrome.close().await;
}
