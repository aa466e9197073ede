//! The dashboard's router, driven with `oneshot` (no port): assets and their ETags, login,
//! and every refusal that must come from the server, not only from the page. The feed is
//! the real publisher's (detached from any broker).

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode, header};
use hallclock::intake::Incoming;
use hallclock::intake::auth::{Arbiters, Role};
use hallclock::web::{AppState, router};
use tokio::sync::mpsc;
use tower::ServiceExt;

fn accounts() -> Arc<Arbiters> {
    let mut a = Arbiters::default();
    for (id, role, boards) in [
        ("chief", Role::Chief, None),
        ("arb", Role::Arbiter, Some(vec!["board-002".to_string()])),
        ("view", Role::Viewer, None),
        ("keyonly", Role::Chief, None),
    ] {
        a.add(id, &format!("IA {id}"), role, boards).unwrap();
        if id != "keyonly" {
            a.set_password_with(id, "secret-enough", 10).unwrap();
        }
    }
    Arc::new(a)
}

struct App {
    state: AppState,
    intake: mpsc::Receiver<Incoming>,
    publisher: hallclock::mqtt::Publisher,
}

fn app() -> App {
    let (publisher, _rx) = hallclock::mqtt::client::detached();
    let (tx, intake) = mpsc::channel(8);
    let state = AppState::new("h", publisher.feed().clone(), tx, accounts(), false);
    App {
        state,
        intake,
        publisher,
    }
}

async fn send(state: &AppState, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, String) {
    let r = router(state.clone())
        .oneshot(req)
        .await
        .expect("the router answers");
    let status = r.status();
    let headers = r.headers().clone();
    let body = to_bytes(r.into_body(), 1 << 20).await.unwrap_or_default();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// Log in; (cookie header value, csrf token).
async fn login(state: &AppState, id: &str) -> (String, String) {
    let req = Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(format!(
            r#"{{"id":"{id}","password":"secret-enough"}}"#
        )))
        .unwrap();
    let (status, headers, body) = send(state, req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let cookie = headers
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    (
        cookie.split(';').next().unwrap_or("").to_string(),
        v["csrf"].as_str().unwrap_or("").to_string(),
    )
}

fn command(board: &str, cookie: Option<&str>, csrf: Option<&str>, body: &str) -> Request<Body> {
    let mut b = Request::post(format!("/api/board/{board}/command"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::HOST, "hall.local:8080");
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    if let Some(t) = csrf {
        b = b.header("x-csrf-token", t);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

const ADD_TIME: &str = r#"{"action":"add_time","side":"white","delta_ms":60000,"reason":"t"}"#;

#[tokio::test]
async fn assets_have_hashed_urls_and_etags() {
    let a = app();
    let (status, headers, html) =
        send(&a.state, Request::get("/").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let app_js = hallclock::web::assets::url_of("app.js").unwrap();
    assert!(html.contains(&app_js), "index links {app_js}: {html}");
    assert!(!html.contains("/assets/app.js\""), "{html}");
    assert!(headers.get(header::CONTENT_SECURITY_POLICY).is_some());
    let (status, headers, js) =
        send(&a.state, Request::get(&app_js).body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(js.contains("function post("));
    let etag = headers.get(header::ETAG).unwrap().clone();
    assert!(
        headers[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let again = Request::get(&app_js)
        .header(header::IF_NONE_MATCH, etag)
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&a.state, again).await.0, StatusCode::NOT_MODIFIED);
    let missing = Request::get("/assets/nope.js").body(Body::empty()).unwrap();
    assert_eq!(send(&a.state, missing).await.0, StatusCode::NOT_FOUND);
    drop(a.publisher);
}

#[tokio::test]
async fn a_wrong_password_is_refused() {
    let a = app();
    for body in [
        r#"{"id":"chief","password":"guess"}"#,
        r#"{"id":"nobody","password":"secret-enough"}"#,
        // An account with a key and no password cannot log in, whatever is sent.
        r#"{"id":"keyonly","password":""}"#,
    ] {
        let req = Request::post("/api/login")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap();
        let (status, headers, text) = send(&a.state, req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
        assert!(headers.get(header::SET_COOKIE).is_none());
        assert!(text.contains("unknown arbiter or wrong password"), "{text}");
    }
}

#[tokio::test]
async fn commands_need_a_session_a_csrf_token_and_this_origin() {
    let mut a = app();
    let (cookie, csrf) = login(&a.state, "chief").await;
    // No session.
    let (s, _, t) = send(&a.state, command("board-001", None, Some(&csrf), ADD_TIME)).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{t}");
    // A forged or stale cookie.
    let (s, _, _) = send(
        &a.state,
        command(
            "board-001",
            Some("hallclock_session=00ff"),
            Some(&csrf),
            ADD_TIME,
        ),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // No CSRF token, a wrong one.
    let (s, _, t) = send(
        &a.state,
        command("board-001", Some(&cookie), None, ADD_TIME),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    assert!(t.contains("no CSRF token"), "{t}");
    let (s, _, _) = send(
        &a.state,
        command("board-001", Some(&cookie), Some("bad"), ADD_TIME),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // From another site, even with both.
    let mut req = command("board-001", Some(&cookie), Some(&csrf), ADD_TIME);
    req.headers_mut()
        .insert(header::ORIGIN, "http://evil.example".parse().unwrap());
    let (s, _, t) = send(&a.state, req).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    assert!(t.contains("Origin"), "{t}");
    // None of them reached the hall.
    assert!(a.intake.try_recv().is_err());
    // A GET of the feed without a session is refused too; the public one is not.
    let (s, _, _) = send(
        &a.state,
        Request::get("/api/feed").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_command_reaches_the_intake_as_the_session_arbiter_and_gets_its_answer() {
    let mut a = app();
    let (cookie, csrf) = login(&a.state, "arb").await;
    let body = r#"{"action":"add_time","side":"white","delta_ms":60000,"reason":"t","arbiter":"someone else"}"#;
    let state = a.state.clone();
    let asked = tokio::spawn(async move {
        send(
            &state,
            command("board-002", Some(&cookie), Some(&csrf), body),
        )
        .await
    });
    let Some(Incoming::Web {
        board,
        identity,
        payload,
        reply,
    }) = a.intake.recv().await
    else {
        panic!("a web command")
    };
    assert_eq!(board.as_deref(), Some("board-002"));
    assert_eq!(
        (identity.id.as_str(), identity.name.as_str()),
        ("arb", "IA arb")
    );
    assert_eq!(identity.role, Role::Arbiter);
    let v: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert!(
        v["transaction"]
            .as_str()
            .is_some_and(|t| t.starts_with("web-"))
    );
    let response = hallclock::mqtt::payload::ResponsePayload {
        transaction: v["transaction"].as_str().unwrap_or("").into(),
        action: "add_time".into(),
        status: hallclock::mqtt::payload::ResponseStatus::Error,
        reason: Some("no game on board-002".into()),
        error: Some("no_game".into()),
        code: None,
        params: None,
        node: None,
        boards: None,
        nodes: None,
        warnings: None,
    };
    let _ = reply.send(serde_json::to_vec(&response).unwrap());
    let (s, _, t) = asked.await.unwrap();
    assert_eq!(s, StatusCode::NOT_FOUND, "{t}");
    assert!(t.contains("no game on board-002"), "{t}");
}

#[tokio::test]
async fn the_time_control_check_describes_or_says_where() {
    let a = app();
    let (s, _, t) = send(
        &a.state,
        Request::get("/api/tc?tc=40/5400%2B30:1800%2B30")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{t}");
    assert!(t.contains("1 h 30 min for 40 moves"), "{t}");
    let (s, _, t) = send(
        &a.state,
        Request::get("/api/tc?tc=40/").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(t.contains("column"), "{t}");
    // As data too, for a page in another language (issue 39).
    let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
    assert_eq!(v["error"], "bad_request", "{t}");
    assert_eq!(v["code"], "tc_expected_at_end", "{t}");
    assert_eq!(
        v["params"],
        serde_json::json!({"what": "seconds_after_slash", "column": 4, "text": "40/"}),
        "{t}"
    );
}

#[tokio::test]
async fn a_page_opening_mid_game_gets_the_boards_recent_events() {
    let a = app();
    let p = &a.publisher;
    let state_topic = "hallclock/h/board/board-001/state".to_string();
    let event_topic = "hallclock/h/board/board-001/event".to_string();
    p.retained(
        state_topic.clone(),
        br#"{"board":"board-001","seq":0,"round":null}"#.to_vec(),
    );
    p.message(
        event_topic.clone(),
        br#"{"board":"board-001","seq":1,"event":"clock_started"}"#.to_vec(),
    );
    p.retained(
        state_topic.clone(),
        br#"{"board":"board-001","seq":1,"round":1}"#.to_vec(),
    );
    p.message(
        event_topic.clone(),
        br#"{"board":"board-001","seq":2,"event":"move_made","san":"e4"}"#.to_vec(),
    );
    p.message(
        event_topic.clone(),
        br#"{"board":"board-001","seq":3,"event":"time_added"}"#.to_vec(),
    );
    p.retained(
        state_topic.clone(),
        br#"{"board":"board-001","seq":3,"round":1}"#.to_vec(),
    );
    // The history follows the feed in its own task.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (cookie, _) = login(&a.state, "view").await;
    let req = Request::get("/api/board/board-001/events")
        .header(header::COOKIE, &cookie)
        .body(Body::empty())
        .unwrap();
    let (s, _, t) = send(&a.state, req).await;
    assert_eq!(s, StatusCode::OK, "{t}");
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    let seqs: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .collect();
    assert_eq!(seqs, [1, 2, 3], "{t}");
    // The public gets the move, not the arbiter's act; an unknown board is a 404.
    let (s, _, t) = send(
        &a.state,
        Request::get("/api/public/board/board-001/events")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(t.contains("e4") && !t.contains("time_added"), "{t}");
    let (s, _, _) = send(
        &a.state,
        Request::get("/api/public/board/board-999/events")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

/// Issue 38 §9: what a browser fetches is gzip-compressed when it asks (every browser
/// does), the assets and the move lists alike; the live feed is not (a compressor would
/// hold its messages back until a block fills).
#[tokio::test]
async fn responses_are_gzipped_for_a_browser_but_the_feed_is_not() {
    let a = app();
    let app_js = hallclock::web::assets::url_of("app.js").unwrap();
    let plain = send(&a.state, Request::get(&app_js).body(Body::empty()).unwrap())
        .await
        .2;
    let gz = router(a.state.clone())
        .oneshot(
            Request::get(&app_js)
                .header(header::ACCEPT_ENCODING, "gzip, deflate, br")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .expect("the router answers");
    assert_eq!(gz.status(), StatusCode::OK);
    assert_eq!(
        gz.headers()
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok()),
        Some("gzip")
    );
    let body = to_bytes(gz.into_body(), 1 << 22).await.unwrap_or_default();
    assert!(
        body.len() * 3 < plain.len(),
        "app.js: {} bytes gzipped, {} plain",
        body.len(),
        plain.len()
    );
    assert_eq!(&body[..2], &[0x1f, 0x8b], "a gzip stream");

    let feed = router(a.state.clone())
        .oneshot(
            Request::get("/api/public/feed")
                .header(header::ACCEPT_ENCODING, "gzip")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .expect("the router answers");
    assert_eq!(feed.status(), StatusCode::OK);
    assert!(
        feed.headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream")),
        "{:?}",
        feed.headers()
    );
    assert_eq!(feed.headers().get(header::CONTENT_ENCODING), None);
    drop(a.publisher);
}
