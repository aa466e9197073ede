//! The broadcast feed end to end: the daemon with simulated boards and a real Mosquitto,
//! the daemon's web site (`web::router`, which mounts `broadcast::router` on the daemon's
//! own source) served on a free port, read over HTTP; python-chess reads every PGN served.

mod common;
mod pychess;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Rig, board_id, now_ms};
use hallclock::rules::Millis;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Reply {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

/// Serve the daemon's web site (the dashboard's router, which mounts the broadcast
/// routes) on a free port, as `hallclock run` does.
async fn serve(rig: &Rig) -> u16 {
    let hall = rig.hall.as_ref().expect("running");
    let state = hallclock::web::AppState::for_hall(
        "hall",
        hall,
        std::sync::Arc::new(hallclock::intake::auth::Arbiters::default()),
        false,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, hallclock::web::router(state)).await;
    });
    port
}

/// One HTTP/1.1 GET, read to the end (`Connection: close`).
async fn get(port: u16, path: &str, if_none_match: Option<&str>) -> Reply {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let extra = if_none_match
        .map(|e| format!("If-None-Match: {e}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).expect("utf-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_string(),
    }
}

async fn play(rig: &mut Rig, n: usize, uci: &str) {
    rig.sim
        .board(n)
        .play_move(uci)
        .expect("the simulator plays the move");
    tokio::time::sleep(Duration::from_millis(60)).await;
    rig.sim.board(n).press();
}

/// Every route, ETags and 304, 404s, the per-round delay's range, and the archive of the
/// finished round; without delay the feed is the live game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broadcast_feed_serves_the_round_with_etags_and_archives_it() {
    let mut rig = Rig::start("bcast-http", 1).await;
    let port = serve(&rig).await;
    let none = get(port, "/broadcast/current/games.pgn", None).await;
    assert_eq!(none.status, 404);
    assert!(none.body.contains("no round has started"), "{}", none.body);

    let r = rig
        .start_round(1, "300+2", 0, json!({"broadcast_delay_minutes": 61}))
        .await;
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(r["error"], "out_of_range", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("broadcast_delay_minutes: 61 is out of range"),
        "{r}"
    );
    let r = rig
        .start_round(1, "300+2", 0, json!({"broadcast_delay_minutes": 0}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;

    let first = get(port, "/broadcast/round/1/games.pgn", None).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(
        first.headers["content-type"],
        "application/x-chess-pgn; charset=utf-8"
    );
    let etag = first.headers["etag"].clone();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    assert!(first.body.contains("[Round \"1.1\"]"), "{}", first.body);
    let again = get(port, "/broadcast/round/1/games.pgn", Some(&etag)).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.headers["etag"], etag);
    let current = get(port, "/broadcast/current/games.pgn", Some(&etag)).await;
    assert_eq!(current.status, 304, "the current round is round 1");

    for (path, why) in [
        ("/broadcast/round/2/games.pgn", "round 2 has no game"),
        ("/broadcast/round/1/game-7.pgn", "no game on board 7"),
        ("/broadcast/round/x/games.pgn", "not a round number"),
        ("/broadcast/round/1/moves.txt", "no file 'moves.txt'"),
    ] {
        let r = get(port, path, None).await;
        assert_eq!(r.status, 404, "{path}");
        assert!(r.body.contains(why), "{path}: {}", r.body);
    }

    // Fool's mate: the round ends with its last game.
    for mv in ["f2f3", "e7e5", "g2g4"] {
        play(&mut rig, 1, mv).await;
        rig.watcher.event(&board_id(1), "move_made").await;
    }
    rig.sim.board(1).play_move("d8h4").expect("Qh4#");
    rig.watcher.event(&board_id(1), "game_ended").await;
    let state_dir = rig.settings.state_dir.clone();
    let archive = state_dir.join("pgn/round-1.pgn");
    let mut waited = 0;
    while !archive.exists() {
        assert!(waited < 200, "no archive at {}", archive.display());
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    let ended = get(port, "/broadcast/round/1/games.pgn", Some(&etag)).await;
    assert_eq!(ended.status, 200, "the game changed: a new ETag");
    assert_ne!(ended.headers["etag"], etag);
    let games = pychess::check(&ended.body);
    assert_eq!(games.len(), 1);
    assert!(games[0].errors.is_empty(), "{:?}", games[0].errors);
    assert_eq!(games[0].moves.len(), 4);
    assert_eq!(games[0].tags["Result"], "0-1");
    assert!(games[0].moves.iter().all(|m| m.clk.is_some()));
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), ended.body);
    let one = get(port, "/broadcast/current/game-1.pgn", None).await;
    assert_eq!(one.status, 200);
    assert_eq!(one.body, ended.body, "one game: the round is that game");
    rig.stop().await;
}

/// When the move just played can show: its press and its move both in (the press comes
/// first, the move is attached after it).
async fn shown_from(rig: &mut Rig) -> i64 {
    let p = rig.watcher.event(&board_id(1), "pressed").await;
    let m = rig.watcher.event(&board_id(1), "move_made").await;
    let at = |e: &serde_json::Value| e["at"].as_i64().expect("an event's instant");
    at(&p).max(at(&m))
}

/// The moves shown, from python-chess.
fn shown_moves(body: &str) -> usize {
    let games = pychess::check(body);
    assert_eq!(games.len(), 1, "{body}");
    assert!(games[0].errors.is_empty(), "{:?}\n{body}", games[0].errors);
    assert!(games[0].moves.iter().all(|m| m.clk.is_some()), "{body}");
    games[0].moves.len()
}

/// Poll the delayed feed until it shows `want` moves, checking at every poll that it
/// shows no move younger than the delay and every move older than it.
async fn poll_delayed(port: u16, made: &[i64], delay: i64, want: usize) {
    let deadline = now_ms() + delay + 30_000;
    loop {
        let before = now_ms();
        let r = get(port, "/broadcast/current/games.pgn", None).await;
        let after = now_ms();
        assert_eq!(r.status, 200, "{}", r.body);
        let n = shown_moves(&r.body);
        // The daemon's clock is anchored to the same UTC within a millisecond or so.
        let slack = 50;
        let due = made
            .iter()
            .filter(|t| **t + delay + slack <= before)
            .count();
        let allowed = made.iter().filter(|t| **t + delay <= after + slack).count();
        assert!(
            n <= allowed,
            "{n} moves shown, only {allowed} are {delay} ms old\n{}",
            r.body
        );
        assert!(n >= due, "{n} moves shown, {due} are older than the delay");
        if n >= want {
            return;
        }
        assert!(
            now_ms() < deadline,
            "the delayed feed never showed {want} moves"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Issue 13: with D = 10 s the feed never shows a move younger than 10 s, before and
/// after a daemon restart; the round's delay survives the restart even when the event's
/// delay has changed meanwhile (it was stored when the round started).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_feed_never_shows_a_move_younger_than_the_delay_across_a_restart() {
    let delay = 10_000;
    let mut rig = Rig::start_custom("bcast-delay", 1, Default::default(), |s| {
        s.broadcast.delay = Millis(delay);
    })
    .await;
    let r = rig.start_round(1, "300+2", 0, json!({})).await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let port = serve(&rig).await;
    let mut made = Vec::new();
    for mv in ["e2e4", "e7e5"] {
        play(&mut rig, 1, mv).await;
        made.push(shown_from(&mut rig).await);
    }
    let r = get(port, "/broadcast/current/games.pgn", None).await;
    assert_eq!(
        shown_moves(&r.body),
        0,
        "nothing younger than 10 s:\n{}",
        r.body
    );
    assert!(r.body.contains("[White \"White 1\"]"), "{}", r.body);

    // The event's delay is changed meanwhile: round 1 keeps the one it started with.
    rig.settings.broadcast.delay = Millis::ZERO;
    rig.restart_daemon().await;
    let port = serve(&rig).await;
    // Restarted within the delay: the moves are neither shown early nor lost.
    assert!(
        now_ms() < made[0] + delay,
        "the restart took longer than the delay"
    );
    poll_delayed(port, &made, delay, 2).await;
    rig.stop().await;
}

/// The round's `Event` and `Site` at a cut of the live feed, and the PGN itself.
fn round_pgn(rig: &Rig, round: u32) -> String {
    let source = &rig.hall.as_ref().expect("running").broadcast;
    let r = source
        .round(hallclock::broadcast::Which::Round(round))
        .expect("the round is in the feed");
    String::from_utf8(r.body.to_vec()).expect("utf-8")
}

/// Issue 22: `Event` and `Site` are real: a TRF's tournament name (012) and place (022),
/// `start_round`'s own (round 3 its site, round 4 its event), else the configuration's
/// (round 3's event, round 4's site); FIDE ids from the TRF are tagged; and a round keeps
/// its tags across a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_and_site_come_from_the_trf_the_round_or_the_configuration() {
    let mut rig = Rig::start_custom("bcast-tags", 5, Default::default(), |s| {
        s.broadcast.tags.event = Some("Config Open".into());
        s.broadcast.tags.site = Some("Config City".into());
    })
    .await;
    let trf = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trf/fide-trf26.trf"),
    )
    .expect("test file");
    let r = rig
        .hall_command(json!({"action": "start_round", "round": 2, "trf": trf,
            "start": now_ms(), "only_our_boards": true}))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(1), "clock_started").await;
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 3, "start": now_ms(),
            "site": "Hall B",
            "pairings": [{"board": board_id(4), "white": "White 4", "black": "Black 4"}]}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(4), "clock_started").await;
    // Round 4 names its own event and no site: its Site is the configuration's.
    let r = rig
        .hall_command(
            json!({"action": "start_round", "round": 4, "start": now_ms(),
            "event": "Hall B Rapid",
            "pairings": [{"board": board_id(5), "white": "White 5", "black": "Black 5"}]}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    rig.watcher.event(&board_id(5), "clock_started").await;

    let from_trf = round_pgn(&rig, 2);
    assert!(
        from_trf.contains("[Event \"Hallclock Autumn Open 2026\"]"),
        "{from_trf}"
    );
    assert!(from_trf.contains("[Site \"Leiden\"]"), "{from_trf}");
    assert!(
        from_trf.contains("[WhiteFideId \"600200002\"]"),
        "{from_trf}"
    );
    let own = round_pgn(&rig, 3);
    assert!(own.contains("[Event \"Config Open\"]"), "{own}");
    assert!(own.contains("[Site \"Hall B\"]"), "{own}");
    let own_event = round_pgn(&rig, 4);
    assert!(
        own_event.contains("[Event \"Hall B Rapid\"]"),
        "{own_event}"
    );
    assert!(own_event.contains("[Site \"Config City\"]"), "{own_event}");

    // The event's tags change meanwhile: the rounds keep those they started with.
    rig.settings.broadcast.tags.event = Some("Renamed".into());
    rig.restart_daemon().await;
    assert_eq!(round_pgn(&rig, 2), from_trf, "round 2 after the restart");
    assert_eq!(round_pgn(&rig, 3), own, "round 3 after the restart");
    assert_eq!(round_pgn(&rig, 4), own_event, "round 4 after the restart");
    // `hallclock pgn` names the games as the broadcast did (the tags stored at the round's
    // start), and its options override them.
    let pgn = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hallclock"))
            .args(["pgn", "--round", "2", "--state-dir"])
            .arg(&rig.settings.state_dir)
            .args(extra)
            .output()
            .expect("hallclock pgn runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let journal = pgn(&[]);
    assert!(
        journal.contains("[Event \"Hallclock Autumn Open 2026\"]")
            && journal.contains("[Site \"Leiden\"]"),
        "{journal}"
    );
    let given = pgn(&["--event", "Given"]);
    assert!(
        given.contains("[Event \"Given\"]") && given.contains("[Site \"Leiden\"]"),
        "{given}"
    );
    rig.stop().await;
}

/// Issue 22: the feed lets go of rounds older than the current and the previous one; an
/// evicted round asked for again is read from the journal and served byte for byte as
/// before, with the same ETag (also after a restart).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_round_is_served_again_from_the_journal_byte_for_byte() {
    let mut rig = Rig::start_custom("bcast-evict", 1, Default::default(), |s| {
        s.broadcast.tags.event = Some("Evict Open".into());
    })
    .await;
    let port = serve(&rig).await;
    let b1 = board_id(1);
    let mut before = None;
    for round in 1..=3u32 {
        let r = rig
            .hall_command(
                json!({"action": "start_round", "round": round, "start": now_ms(),
                "pairings": [{"board": b1, "white": format!("White {round}"),
                    "black": format!("Black {round}"), "white_fide_id": 1503014}]}),
            )
            .await;
        assert_eq!(r["status"], "ok", "round {round}: {r}");
        rig.watcher.event(&b1, "clock_started").await;
        if round == 1 {
            play(&mut rig, 1, "e2e4").await;
            rig.watcher.event(&b1, "move_made").await;
        }
        if round < 3 {
            let r = rig
                .board_command(
                    &b1,
                    json!({"action": "set_result", "result": "1-0", "reason": "arbiter"}),
                )
                .await;
            assert_eq!(r["status"], "ok", "{r}");
            rig.watcher.event(&b1, "game_ended").await;
        }
        if round == 2 {
            // Round 1 as served while it was still in memory.
            before = Some(get(port, "/broadcast/round/1/games.pgn", None).await);
        }
    }
    let before = before.expect("served before the eviction");
    assert_eq!(before.status, 200, "{}", before.body);
    let source = rig.hall.as_ref().expect("running").broadcast.clone();
    assert!(source.is_evicted(1), "round 1 is older than rounds 3 and 2");
    assert!(!source.is_evicted(2) && !source.is_evicted(3));
    let archived = std::fs::read_to_string(rig.settings.state_dir.join("pgn/round-1.pgn"))
        .expect("round 1 was archived");
    let again = get(port, "/broadcast/round/1/games.pgn", None).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body, before.body, "the same text, from the journal");
    assert_eq!(again.headers["etag"], before.headers["etag"]);
    assert_eq!(again.body, archived);
    assert!(
        again.body.contains("[Event \"Evict Open\"]"),
        "{}",
        again.body
    );
    assert!(again.body.contains("1. e4"), "{}", again.body);
    let one = get(port, "/broadcast/round/1/game-1.pgn", None).await;
    assert_eq!(one.body, archived);
    let etag = again.headers["etag"].clone();
    let cached = get(port, "/broadcast/round/1/games.pgn", Some(&etag)).await;
    assert_eq!(cached.status, 304, "the same ETag as before");
    rig.stop().await;
}
