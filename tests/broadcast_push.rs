//! The push to lichess against a local stand-in for lichess (axum, in the test) that
//! records every request and answers in lichess's shape: `{"games":[{"tags":…,"moves":n}]}`.
//! The daemon runs with a simulated board and a real Mosquitto; the push is started on
//! its broadcast source as `hallclock run` starts it.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use common::{HALL, Rig, board_id};
use hallclock::broadcast::push::{self, AlertSink, PushProblem, PushReport};
use hallclock::broadcast::view::Body;
use hallclock::broadcast::{BoardRange, FeedGame, FeedWriter, LichessRound, LichessSettings};
use hallclock::link::testing::scratch_dir;
use hallclock::rules::Millis;
use serde_json::json;

#[derive(Debug, Clone)]
struct Request {
    round_id: String,
    authorization: String,
    body: String,
    at: Instant,
    /// tokio's clock when it came: under paused time, the time the test let pass.
    tokio_at: tokio::time::Instant,
}

/// What the stand-in answers to one push.
#[derive(Debug, Clone)]
enum Reply {
    /// 200 with every game taken, 401 "No such token", or anything else as a bare error.
    Status(u16),
    /// 200, every game refused with this reason (lichess's per-game error).
    GameError(&'static str),
    /// 400 as lila answers a push to a round that has a source URL.
    SourceUrl,
}

#[derive(Clone, Default)]
struct StandIn {
    requests: Arc<Mutex<Vec<Request>>>,
    /// Replies to give, in order; then 200.
    script: Arc<Mutex<Vec<Reply>>>,
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
        tokio_at: tokio::time::Instant::now(),
    });
    let reply = {
        let mut script = s.script.lock().unwrap();
        if script.is_empty() {
            Reply::Status(200)
        } else {
            script.remove(0)
        }
    };
    let tags = json!({"White": "White 1", "Black": "Black 1", "Round": "1.1"});
    match reply {
        Reply::Status(200) => {
            let games: Vec<_> = (0..games)
                .map(|_| json!({"tags": tags, "moves": body.matches("[%clk").count()}))
                .collect();
            (StatusCode::OK, json!({ "games": games }).to_string())
        }
        Reply::Status(401) => (
            StatusCode::UNAUTHORIZED,
            json!({"error": "No such token"}).to_string(),
        ),
        Reply::Status(status) => (
            StatusCode::from_u16(status).unwrap(),
            "Internal error".to_string(),
        ),
        Reply::GameError(why) => {
            let games: Vec<_> = (0..games)
                .map(|_| json!({"tags": tags, "error": why}))
                .collect();
            (StatusCode::OK, json!({ "games": games }).to_string())
        }
        Reply::SourceUrl => (
            StatusCode::BAD_REQUEST,
            json!({"error": "The relay has an upstream URL, and cannot be pushed to."}).to_string(),
        ),
    }
}

async fn stand_in(script: Vec<u16>) -> (StandIn, String) {
    stand_in_replies(script.into_iter().map(Reply::Status).collect()).await
}

async fn stand_in_replies(script: Vec<Reply>) -> (StandIn, String) {
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
        rounds: Vec::new(),
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
    let mut p = push::spawn(source, &settings("push-retry", &url), None).expect("the push starts");

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
    let mut p = push::spawn(source, &settings("push-401", &url), None).expect("the push starts");
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

/// The hall's publisher, as `hallclock run` hands it to the push for its alert.
fn alerts(rig: &Rig) -> Option<AlertSink> {
    Some(AlertSink {
        publisher: rig.hall.as_ref().expect("running").publisher.clone(),
        topics: hallclock::mqtt::Topics::new(HALL),
        node: common::NODE.to_string(),
    })
}

/// A round of `n` games (boards 1..=n, no move yet) in a feed of its own: the broadcast
/// source the daemon hands the push, without 150 simulated boards.
fn synthetic_round(name: &str, n: u32) -> FeedWriter {
    let dir = scratch_dir(name);
    let w = FeedWriter::recovered(&dir, Millis::ZERO, Default::default(), std::iter::empty());
    w.start_round(1, Some(0), Default::default())
        .expect("the round's delay is stored");
    let defaults = hallclock::config::EventDefaults::default();
    for b in 1..=n {
        let info = hallclock::pgn::GameInfo {
            round: Some(1),
            board: Some(b),
            white_fide_id: Some(1_000_000 + u64::from(b)),
            black_fide_id: Some(2_000_000 + u64::from(b)),
            ..Default::default()
        };
        w.game(
            FeedGame {
                game_id: u64::from(b),
                board: format!("board-{b:03}"),
                info,
                body: Body::Events {
                    setup: Box::new(defaults.setup(
                        &format!("White {b}"),
                        &format!("Black {b}"),
                        Millis(0),
                    )),
                    events: Vec::new(),
                },
                finished: false,
            },
            1,
        );
    }
    w
}

fn fixed_clock() -> Arc<dyn Fn() -> Millis + Send + Sync> {
    Arc::new(|| Millis(1_796_000_000_000))
}

/// Issue 22: lichess takes at most 100 games a push. A 150-game hall round with two board
/// ranges goes as two pushes, boards 1–100 to one lichess round and 101–150 to the other,
/// each the whole of its range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_150_game_round_is_pushed_as_two_lichess_rounds_of_at_most_100() {
    let (standin, url) = stand_in(vec![]).await;
    let feed = synthetic_round("push-150", 150);
    let mut s = settings("push-150", &url);
    s.round_id = String::new();
    s.rounds = vec![
        LichessRound {
            boards: Some(BoardRange::parse("1-100").unwrap()),
            round_id: "AbCd1234".into(),
        },
        LichessRound {
            boards: Some(BoardRange::parse("101-200").unwrap()),
            round_id: "EfGh5678".into(),
        },
    ];
    let p = push::spawn(feed.source(fixed_clock()), &s, None).expect("the push starts");
    let requests = standin.requests.clone();
    wait_for("two pushes", || requests.lock().unwrap().len() >= 2).await;
    let got = requests.lock().unwrap().clone();
    let first = got
        .iter()
        .find(|r| r.round_id == "AbCd1234")
        .expect("a push to AbCd1234");
    let second = got
        .iter()
        .find(|r| r.round_id == "EfGh5678")
        .expect("a push to EfGh5678");
    assert_eq!(first.body.matches("[Event ").count(), 100);
    assert_eq!(second.body.matches("[Event ").count(), 50);
    assert!(first.body.contains("[Round \"1.1\"]") && first.body.contains("[Round \"1.100\"]"));
    assert!(!first.body.contains("[Round \"1.101\"]"));
    assert!(second.body.contains("[Round \"1.101\"]") && second.body.contains("[Round \"1.150\"]"));
    // lichess matches players by FIDE id.
    assert!(first.body.contains("[WhiteFideId \"1000001\"]"));
    assert!(first.body.contains("[BlackFideId \"2000001\"]"));
    drop(p);
}

/// One lichess round given 150 games: nothing is pushed (lichess would keep the first 100
/// and drop the rest without a word), and the push says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lichess_round_given_more_than_100_games_is_not_pushed_and_says_why() {
    let (standin, url) = stand_in(vec![]).await;
    let feed = synthetic_round("push-too-many", 150);
    let mut p = push::spawn(
        feed.source(fixed_clock()),
        &settings("push-too-many", &url),
        None,
    )
    .expect("the push starts");
    let (round_id, games) = report(&mut p.reports, "too many games", |r| match r {
        PushReport::TooMany {
            round_id, games, ..
        } => Some((round_id.clone(), *games)),
        _ => None,
    })
    .await;
    assert_eq!((round_id.as_str(), games), ("AbCd1234", 150));
    let problem = PushProblem::TooMany {
        round: 1,
        round_id,
        games,
    };
    assert!(
        problem
            .to_string()
            .contains("would get 150 games of round 1, more than the 100 a push takes"),
        "{problem}"
    );
    assert!(
        standin.requests.lock().unwrap().is_empty(),
        "no truncated push"
    );
    drop(p);
}

/// A game lichess refuses is logged and stands in the hall's `broadcast_push` alert on
/// MQTT (what the dashboard shows) until a later push has it taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_lichess_refuses_is_an_alert_until_a_later_push_takes_it() {
    let (_standin, url) =
        stand_in_replies(vec![Reply::GameError("Invalid PGN: no such move")]).await;
    let mut rig = Rig::start("bcast-game-error", 1).await;
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let source = rig.hall.as_ref().unwrap().broadcast.clone();
    let mut p = push::spawn(source, &settings("push-game-error", &url), alerts(&rig))
        .expect("the push starts");
    let refused = report(&mut p.reports, "the refused game", |r| match r {
        PushReport::Pushed { games, .. } => Some(games.clone()),
        _ => None,
    })
    .await;
    assert!(refused[0].result.is_err(), "{refused:?}");
    let topic = rig.topic(&format!("alert/broadcast-push-{}", common::NODE));
    let alert = rig
        .watcher
        .wait("the broadcast_push alert", |m| {
            m.topic == topic && m.raised()
        })
        .await
        .json();
    assert_eq!(alert["kind"], "broadcast_push", "{alert}");
    assert_eq!(
        alert["id"],
        format!("broadcast-push-{}", common::NODE),
        "{alert}"
    );
    assert_eq!(alert["board"], serde_json::Value::Null, "{alert}");
    let message = alert["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "lichess round AbCd1234 refused 1 game: White 1 - Black 1 (1.1): Invalid PGN: no such move"
        ),
        "{message}"
    );
    // The next push (a move) is taken: the alert is cleared.
    play(&mut rig, "e2e4").await;
    rig.watcher
        .wait("the alert cleared", |m| m.topic == topic && m.cleared())
        .await;
    drop(p);
    rig.stop().await;
}

/// A lichess round with a source URL refuses every push: the operator is told that, and
/// what to do, in the log and the alert, not a generic refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lichess_round_with_a_source_url_is_named_as_such() {
    let (standin, url) = stand_in_replies(vec![Reply::SourceUrl, Reply::SourceUrl]).await;
    let mut rig = Rig::start("bcast-source-url", 1).await;
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let source = rig.hall.as_ref().unwrap().broadcast.clone();
    let mut p = push::spawn(source, &settings("push-source-url", &url), alerts(&rig))
        .expect("the push starts");
    let (status, problem) = report(&mut p.reports, "the refusal", |r| match r {
        PushReport::Refused {
            status, problem, ..
        } => Some((*status, problem.clone())),
        _ => None,
    })
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        problem,
        PushProblem::SourceUrl {
            round_id: "AbCd1234".into()
        }
    );
    let topic = rig.topic(&format!("alert/broadcast-push-{}", common::NODE));
    let alert = rig
        .watcher
        .wait("the broadcast_push alert", |m| {
            m.topic == topic && m.raised()
        })
        .await
        .json();
    assert_eq!(
        alert["message"],
        "lichess round AbCd1234 has a source URL; a round fed by push must have none — remove it in the round's settings on lichess",
        "{alert}"
    );
    assert_eq!(
        standin.requests.lock().unwrap().len(),
        1,
        "not retried at once"
    );
    drop(p);
    rig.stop().await;
}

/// Issue 22: lichess's broadcaster pushes the round again every minute even when nothing
/// changed (a game lichess lost or a round reset on its side is filled again), and so does
/// the push: an unchanged round goes again after `push::FORCE_EVERY`, not before, and again
/// a minute later. Under tokio's paused time, so the minutes pass without being waited
/// for (the stand-in answers over loopback in the same runtime, the round's feed has a
/// fixed clock).
#[tokio::test(start_paused = true)]
async fn an_unchanged_round_is_pushed_again_after_the_forced_interval() {
    let (standin, url) = stand_in(vec![]).await;
    let feed = synthetic_round("push-forced", 2);
    let mut p = push::spawn(
        feed.source(fixed_clock()),
        &settings("push-forced", &url),
        None,
    )
    .expect("the push starts");
    report(&mut p.reports, "the first push", |r| {
        matches!(r, PushReport::Pushed { .. }).then_some(())
    })
    .await;
    let requests = standin.requests.clone();
    let got = || requests.lock().unwrap().clone();
    assert_eq!(got().len(), 1, "{:?}", got());
    let first = got()[0].tokio_at;
    // Nothing changes: nothing is pushed for most of a minute (a push a second would be 57).
    tokio::time::sleep_until(first + push::FORCE_EVERY - Duration::from_millis(1500)).await;
    assert_eq!(got().len(), 1, "pushed again before the minute");
    for n in [2, 3] {
        let deadline = first + (push::FORCE_EVERY + push::DEBOUNCE * 2) * (n - 1);
        while got().len() < n as usize {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no forced push {n} by {:?}",
                deadline - first
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let all = got();
        let (before, this) = (&all[n as usize - 2], &all[n as usize - 1]);
        assert_eq!(this.body, before.body, "the same round again");
        assert_eq!(this.round_id, "AbCd1234");
        let gap = this.tokio_at - before.tokio_at;
        assert!(
            gap >= push::FORCE_EVERY && gap <= push::FORCE_EVERY + push::DEBOUNCE * 2,
            "push {n} came {gap:?} after the one before"
        );
    }
    match p.reports.borrow().as_ref() {
        Some(PushReport::Pushed { games, .. }) => assert_eq!(games.len(), 2, "{games:?}"),
        other => panic!("the forced push was not taken: {other:?}"),
    }
    drop(p);
}
