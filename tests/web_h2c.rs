//! The dashboard over HTTP/2 without TLS (h2c, prior knowledge), as the clients that
//! speak it to a backend do (a proxy with h2c upstreams such as Caddy's `h2c://`, `curl
//! --http2-prior-knowledge`; not nginx, whose `proxy_pass` speaks HTTP/1.1 to the daemon
//! and HTTP/2 only to browsers, docs/DASHBOARD.md): many live feeds and a command share
//! one connection, and the command is answered while every feed stays open. Over
//! HTTP/1.1 a browser holds six connections per host, and a seventh feed (or a command
//! behind six) waits.

mod common;
mod webcommon;

use std::time::Duration;

use bytes::Bytes;
use common::HALL;
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};

const FEEDS: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_feeds_and_a_login_share_one_h2c_connection() {
    let detached = webcommon::detached(HALL);
    let state = detached.state.clone();
    let web = webcommon::serve(state).await;
    let tcp = tokio::net::TcpStream::connect(web.addr)
        .await
        .expect("the dashboard listens");
    // Prior knowledge: the client starts with HTTP/2's preface, no upgrade.
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("the dashboard speaks h2c");
    tokio::spawn(conn);

    // Ten public feeds, all open at once on the one connection: each answers 200 with an
    // event stream and its first frame (the snapshot), and stays open.
    let mut feeds = Vec::new();
    for n in 0..FEEDS {
        let mut s = sender.clone();
        let req = Request::get("/api/public/feed")
            .header("host", web.addr.to_string())
            .body(Full::new(Bytes::new()))
            .expect("a request");
        let res = tokio::time::timeout(Duration::from_secs(10), s.send_request(req))
            .await
            .unwrap_or_else(|_| panic!("feed {n}: no answer in 10 s"))
            .unwrap_or_else(|e| panic!("feed {n}: {e}"));
        assert_eq!(res.version(), Version::HTTP_2, "feed {n}");
        assert_eq!(res.status(), 200, "feed {n}");
        assert_eq!(
            res.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream"),
            "feed {n}"
        );
        let mut body = res.into_body();
        let first = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .unwrap_or_else(|_| panic!("feed {n}: no first frame in 10 s"));
        assert!(
            first.is_some_and(|f| f.is_ok()),
            "feed {n}: its stream ended at once"
        );
        feeds.push(body);
    }

    // A login on the same connection, with every feed still open: answered at once.
    let mut s = sender.clone();
    let req = Request::post("/api/login")
        .header("host", web.addr.to_string())
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            json!({"id": "chief", "password": webcommon::PASSWORD}).to_string(),
        )))
        .expect("a request");
    let res = tokio::time::timeout(Duration::from_secs(10), s.send_request(req))
        .await
        .expect("the login is answered beside ten open feeds")
        .expect("an answer");
    assert_eq!(res.version(), Version::HTTP_2);
    assert_eq!(res.status(), 200);
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    let body = res.into_body().collect().await.expect("a body").to_bytes();
    let me: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(me["csrf"].is_string(), "{me}");
    // The feeds are still open and live: a board's new state reaches every one of them.
    detached.publisher.retained(
        format!("hallclock/{HALL}/board/board-001/state"),
        json!({"board": "board-001", "seq": 1, "phase": "idle"})
            .to_string()
            .into_bytes(),
    );
    for (n, f) in feeds.iter_mut().enumerate() {
        assert!(!f.is_end_stream(), "feed {n} ended");
        let mut seen = String::new();
        while !seen.contains("board-001") {
            let frame = tokio::time::timeout(Duration::from_secs(10), f.frame())
                .await
                .unwrap_or_else(|_| panic!("feed {n}: the new state did not come in 10 s"))
                .unwrap_or_else(|| panic!("feed {n} ended"))
                .unwrap_or_else(|e| panic!("feed {n}: {e}"));
            if let Ok(data) = frame.into_data() {
                seen.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }
}
