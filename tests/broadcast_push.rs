//! The push to lichess against a local stand-in for lichess (axum, in the test) that
//! records every request and answers in lichess's shape: `{"games":[{"tags":…,"moves":n}]}`.
//! The daemon runs with a simulated board and a real Mosquitto; the push is started on
//! its broadcast source as `hallclock run` starts it.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use common::{Rig, board_id};
use hallclock::broadcast::LichessSettings;
use hallclock::broadcast::push::{self, PushReport};
use hallclock::link::testing::scratch_dir;
use serde_json::json;

#[derive(Debug, Clone)]
struct Request {
    round_id: String,
    authorization: String,
    body: String,
    at: Instant,
}

#[derive(Clone, Default)]
struct StandIn {
    requests: Arc<Mutex<Vec<Request>>>,
    /// Statuses to answer, in order; then 200.
    script: Arc<Mutex<Vec<u16>>>,
}

async fn push_endpoint(
    State(s): State<StandIn>,
    Path(round_id): Path<String>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, String) {
    let games = body.matches("[Event ").count();
    s.requests.lock().unwrap().push(Request {
        round_id,
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        body: body.clone(),
        at: Instant::now(),
    });
    let status = {
        let mut script = s.script.lock().unwrap();
        if script.is_empty() {
            200
        } else {
            script.remove(0)
        }
    };
    let answer = match status {
        200 => {
            let games: Vec<_> = (0..games)
                .map(|_| json!({"tags": {"White": "White 1", "Black": "Black 1", "Round": "1.1"}, "moves": body.matches("[%clk").count()}))
                .collect();
            json!({ "games": games }).to_string()
        }
        401 => json!({"error": "No such token"}).to_string(),
        _ => "Internal error".to_string(),
    };
    (StatusCode::from_u16(status).unwrap(), answer)
}

async fn stand_in(script: Vec<u16>) -> (StandIn, String) {
    let s = StandIn {
        script: Arc::new(Mutex::new(script)),
        ..StandIn::default()
    };
    let app = axum::Router::new()
        .route(
            "/api/broadcast/round/{id}/push",
            axum::routing::post(push_endpoint),
        )
        .with_state(s.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (s, url)
}

fn settings(name: &str, url: &str) -> LichessSettings {
    let dir = scratch_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("lichess.token");
    std::fs::write(&token_file, "lip_secret\n").unwrap();
    LichessSettings {
        base_url: url.to_string(),
        round_id: "AbCd1234".into(),
        token_file,
    }
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ok() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The first report `pick` accepts, within 30 s.
async fn report<T>(
    reports: &mut tokio::sync::watch::Receiver<Option<PushReport>>,
    what: &str,
    mut pick: impl FnMut(&PushReport) -> Option<T>,
) -> T {
    let wait = async {
        loop {
            if let Some(t) = reports.borrow_and_update().as_ref().and_then(&mut pick) {
                return t;
            }
            reports.changed().await.expect("the push runs");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("waited 30 s for {what}; last: {:?}", reports.borrow()))
}

async fn play(rig: &mut Rig, uci: &str) {
    rig.sim
        .board(1)
        .play_move(uci)
        .expect("the simulator plays the move");
    tokio::time::sleep(Duration::from_millis(60)).await;
    rig.sim.board(1).press();
    rig.watcher.event(&board_id(1), "pressed").await;
    rig.watcher.event(&board_id(1), "move_made").await;
}

/// A 500 is retried with the same round, the token goes as a Bearer, lichess's per-game
/// answer is reported, and changes closer than a second apart make at most one push a
/// second, the last one carrying every move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_retries_after_a_500_and_debounces_to_one_a_second() {
    let (standin, url) = stand_in(vec![500]).await;
    let mut rig = Rig::start("bcast-push", 1).await;
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let source = rig.hall.as_ref().unwrap().broadcast.clone();
    let mut p = push::spawn(source, &settings("push-retry", &url)).expect("the push starts");

    let requests = standin.requests.clone();
    wait_for("the retry", || requests.lock().unwrap().len() >= 2).await;
    {
        let got = requests.lock().unwrap();
        assert_eq!(got[0].body, got[1].body, "the same round again");
        assert_eq!(got[0].round_id, "AbCd1234");
        assert_eq!(got[0].authorization, "Bearer lip_secret");
        assert!(got[0].body.contains("[Round \"1.1\"]"), "{}", got[0].body);
    }
    let pushed = report(&mut p.reports, "a push taken", |r| match r {
        PushReport::Pushed { games, .. } => Some(games.clone()),
        _ => None,
    })
    .await;
    assert_eq!(pushed.len(), 1);
    assert_eq!(pushed[0].result, Ok(0));

    for mv in ["e2e4", "e7e5", "g1f3"] {
        play(&mut rig, mv).await;
    }
    wait_for("the last move pushed", || {
        requests
            .lock()
            .unwrap()
            .last()
            .is_some_and(|r| r.body.contains("2. Nf3"))
    })
    .await;
    let got = requests.lock().unwrap().clone();
    for pair in got.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(950),
            "two pushes {gap:?} apart"
        );
    }
    drop(p);
    rig.stop().await;
}

/// A 401 is not retried (the token does not heal by itself); the next change is pushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_refused_with_401_is_not_retried() {
    let (standin, url) = stand_in(vec![401, 401]).await;
    let mut rig = Rig::start("bcast-401", 1).await;
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let source = rig.hall.as_ref().unwrap().broadcast.clone();
    let mut p = push::spawn(source, &settings("push-401", &url)).expect("the push starts");
    let (status, body) = report(&mut p.reports, "the refusal", |r| match r {
        PushReport::Refused { status, body, .. } => Some((*status, body.clone())),
        _ => None,
    })
    .await;
    assert_eq!(status, 401);
    assert!(body.contains("No such token"), "{body}");
    // Three debounce periods: a retry would have come by now.
    tokio::time::sleep(push::DEBOUNCE * 3).await;
    assert_eq!(
        standin.requests.lock().unwrap().len(),
        1,
        "a 401 is not retried"
    );
    play(&mut rig, "e2e4").await;
    let requests = standin.requests.clone();
    wait_for("the change pushed", || {
        requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.body.contains("1. e4"))
    })
    .await;
    drop(p);
    rig.stop().await;
}
