//! A small real hall's journal for the recovery tests: four boards of one round, played
//! in interleaved steps as a hall writes them (mates, a resignation, a draw, a game still
//! running), with commands' answers between them.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hallclock::rules::game::{ArbiterResult, Event, Game, Input, Setup};
use hallclock::rules::time_control::parse;
use hallclock::rules::{Color, Millis};
use hallclock::store::{JournalSettings, Record, open_after};

pub const T0: Millis = Millis(1_800_000_000_000);

pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hallclock-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

pub fn board(n: usize) -> String {
    format!("board-{n:03}")
}

/// What each board does, one input per step (`None`: nothing this step).
fn script(n: usize) -> Vec<Input> {
    let mv = |m: &str| Input::Move { mv: m.into() };
    let press = || Input::Press {
        side: None,
        mv: None,
    };
    let result = |r: ArbiterResult| Input::SetResult {
        result: r,
        arbiter: "IA Ada".into(),
        reason: "arbiter".into(),
    };
    let moves = |ms: &[&str]| -> Vec<Input> {
        ms.iter().flat_map(|m| [mv(m), press()]).collect::<Vec<_>>()
    };
    match n {
        // Fool's mate: the mate ends the game (no press after it).
        1 => {
            let mut s = moves(&["f2f3", "e7e5", "g2g4"]);
            s.push(mv("d8h4"));
            s
        }
        2 => {
            let mut s = moves(&["e2e4", "e7e5", "g1f3"]);
            s.push(result(ArbiterResult::Resignation { side: Color::Black }));
            s
        }
        3 => moves(&["d2d4", "d7d5", "c2c4"]),
        _ => {
            let mut s = moves(&["c2c4", "c7c5"]);
            s.push(result(ArbiterResult::AgreedDraw));
            s
        }
    }
}

fn answered(k: usize) -> Record {
    Record::Answered {
        arbiter: "IA Ada".into(),
        transaction: format!("t-{k}"),
        digest: format!("{k:064x}"),
        topic: "hallclock/hall/board/board-001/set".into(),
        response: serde_json::json!({"status": "ok", "transaction": format!("t-{k}")}),
    }
}

/// The hall's records in journal order.
pub fn hall_records(boards: usize) -> Vec<Record> {
    let mut records = Vec::new();
    let mut games = Vec::new();
    for n in 1..=boards {
        let setup = Setup::new(
            &format!("White {n}"),
            &format!("Black {n}"),
            parse("90+30").expect("tc"),
            T0,
        );
        games.push(Game::new(setup.clone()).expect("setup"));
        records.push(Record::GameCreated {
            board: board(n),
            game: n as u64,
            round: Some(1),
            fide: (None, None),
            setup: Box::new(setup),
        });
    }
    let mut seqs = vec![0u64; boards];
    let mut emit = |n: usize, game: &mut Game, events: Vec<Event>, records: &mut Vec<Record>| {
        for e in events {
            game.evolve(&e);
            seqs[n - 1] += 1;
            records.push(Record::Event {
                board: board(n),
                seq: seqs[n - 1],
                game: n as u64,
                event: e,
            });
        }
    };
    for (i, g) in games.iter_mut().enumerate() {
        let started = g.poll(T0);
        emit(i + 1, g, started, &mut records);
    }
    let scripts: Vec<Vec<Input>> = (1..=boards).map(script).collect();
    let steps = scripts.iter().map(Vec::len).max().unwrap_or(0);
    for step in 0..steps {
        for (i, g) in games.iter_mut().enumerate() {
            let Some(input) = scripts[i].get(step) else {
                continue;
            };
            let now = T0 + Millis(((step * boards + i + 1) * 1000) as i64);
            let events = g.decide(input, now).expect("a legal input");
            emit(i + 1, g, events, &mut records);
        }
        if step % 3 == 1 {
            records.push(answered(step));
        }
    }
    // The reply to the last command (the resignation), after every game's last event.
    records.push(answered(steps));
    records
}

/// Write `records` one append at a time (as a quiet hall does) into small segments.
pub fn write_journal(state: &Path, records: &[Record], segment_size: u64) -> JournalSettings {
    let mut s = JournalSettings::new(state);
    s.segment_size = segment_size;
    let (mut j, _) = open_after(s.clone()).expect("open");
    for r in records {
        j.write(std::slice::from_ref(r)).expect("write");
    }
    s
}

/// Every board's result as the records fold (None: still running).
pub fn results(records: &[Record]) -> BTreeMap<String, Option<String>> {
    let folded = hallclock::store::fold(records.iter().cloned());
    folded
        .holders
        .iter()
        .map(|(b, id)| {
            let r = folded.games[id]
                .game
                .as_ref()
                .and_then(|g| g.result())
                .map(|r| format!("{:?}", r.score));
            (b.clone(), r)
        })
        .collect()
}

/// Copy a state directory's journal (files only).
pub fn copy_journal(from: &Path, to: &Path) {
    let (src, dst) = (from.join("journal"), to.join("journal"));
    std::fs::create_dir_all(&dst).expect("dir");
    for e in std::fs::read_dir(&src).expect("journal").flatten() {
        std::fs::copy(e.path(), dst.join(e.file_name())).expect("copy");
    }
}
