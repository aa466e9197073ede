//! The journal survives torn writes and corruption: start-up recovers every record before
//! the damage, reports what it dropped, and appends after the last good record.

use std::path::{Path, PathBuf};

use hallclock::rules::Millis;
use hallclock::rules::game::{Event, Game, Input, Setup};
use hallclock::rules::time_control::parse;
use hallclock::store::record::read_dir;
use hallclock::store::recover;
use hallclock::store::{JournalSettings, Record, open_after};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hallclock-{}-jr-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

const T0: Millis = Millis(1_800_000_000_000);

/// A real game's records: created, started, some presses.
fn game_records(presses: usize) -> Vec<Record> {
    let setup = Setup::new("W", "B", parse("300+2").expect("tc"), T0);
    let mut game = Game::new(setup.clone()).expect("setup");
    let mut records = vec![Record::GameCreated {
        board: "board-001".into(),
        game: 1,
        round: Some(1),
        fide: (None, None),
        setup: Box::new(setup),
    }];
    let mut seq = 0;
    let mut push = |game: &mut Game, events: Vec<Event>, records: &mut Vec<Record>| {
        for e in events {
            game.evolve(&e);
            seq += 1;
            records.push(Record::Event {
                board: "board-001".into(),
                seq,
                game: 1,
                event: e,
            });
        }
    };
    let started = game.poll(T0);
    push(&mut game, started, &mut records);
    for i in 0..presses {
        let now = T0 + Millis(1000 * (i as i64 + 1));
        let events = game
            .decide(
                &Input::Press {
                    side: None,
                    mv: None,
                },
                now,
            )
            .expect("press");
        push(&mut game, events, &mut records);
    }
    records
}

fn write_journal(dir: &Path, records: &[Record], segment_size: u64) -> JournalSettings {
    let mut s = JournalSettings::new(dir);
    s.segment_size = segment_size;
    let (mut j, _) = open_after(s.clone()).expect("open");
    for r in records {
        j.write(std::slice::from_ref(r)).expect("write");
    }
    s
}

#[test]
fn truncated_at_every_byte_of_the_last_record_recovers_to_the_last_good_record() {
    let records = game_records(6);
    let n = records.len();
    let base = scratch("trunc-base");
    let settings = write_journal(&base, &records, 1 << 14);
    let scan = read_dir(&settings.dir).expect("read");
    assert_eq!(scan.records.len(), n);
    let (seg, last_start) = {
        let (_, seg, off) = &scan.records[n - 1];
        (seg.clone(), *off)
    };
    let end = scan.end.as_ref().map(|(_, e)| *e).expect("end");
    let original = std::fs::read(&seg).expect("segment");
    for cut in last_start..end {
        for mode in ["zeroed", "shortened"] {
            let dir = scratch(&format!("trunc-{cut}-{mode}"));
            let jdir = dir.join("journal");
            std::fs::create_dir_all(&jdir).expect("dir");
            let mut bytes = original.clone();
            match mode {
                // A torn write into the preallocated segment: the rest stays zero.
                "zeroed" => bytes[cut as usize..end as usize].fill(0),
                // A file cut short (e.g. copied from a failing card).
                _ => bytes.truncate(cut as usize),
            }
            let name = seg.file_name().expect("name");
            std::fs::write(jdir.join(name), &bytes).expect("write copy");
            let r = recover(&jdir).expect("recover");
            assert_eq!(r.records, n - 1, "cut at {cut} ({mode})");
            if cut == last_start {
                assert!(r.damage.is_none(), "a clean cut is just an earlier end");
            } else {
                let d = r.damage.as_ref().expect("damage reported");
                assert_eq!(d.offset, last_start, "cut at {cut} ({mode})");
                assert!(d.dropped_bytes > 0);
            }
            // Appending continues right after the last good record.
            let mut s = JournalSettings::new(&dir);
            s.segment_size = 1 << 14;
            let (mut j, _) = open_after(s).expect("reopen");
            j.write(std::slice::from_ref(&records[n - 1]))
                .expect("append");
            let again = recover(&jdir).expect("recover again");
            assert_eq!(again.records, n, "cut at {cut} ({mode})");
            assert!(
                again.damage.is_none(),
                "cut at {cut} ({mode}): {:?}",
                again.damage
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn corruption_in_the_middle_keeps_everything_before_it_and_reports_the_rest() {
    let records = game_records(30);
    let dir = scratch("corrupt");
    // Small segments, so the damage is in an early segment and later ones are dropped.
    let settings = write_journal(&dir, &records, 1500);
    let scan = read_dir(&settings.dir).expect("read");
    assert!(scan.segments.len() >= 3, "{} segments", scan.segments.len());
    let (_, seg, off) = scan.records[10].clone();
    let mut bytes = std::fs::read(&seg).expect("segment");
    bytes[off as usize + 12] ^= 0x55; // a byte inside the payload: the CRC catches it
    std::fs::write(&seg, &bytes).expect("corrupt");
    let r = recover(&settings.dir).expect("recover");
    assert_eq!(r.records, 10);
    let d = r.damage.expect("damage");
    assert_eq!(d.offset, off);
    assert!(d.reason.contains("CRC"), "{}", d.reason);
    assert!(d.dropped_bytes > 0);
    // Reopening sets the damaged segments aside and appends after record 10.
    let (mut j, _) = open_after(settings.clone()).expect("reopen");
    j.write(&records[10..12]).expect("append");
    let again = read_dir(&settings.dir).expect("read again");
    assert_eq!(again.records.len(), 12);
    assert!(again.damage.is_none());
    let damaged = std::fs::read_dir(&settings.dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".damaged"))
        .count();
    assert!(damaged >= 1, "later segments kept aside for support");
}

#[test]
fn replay_rebuilds_the_game_exactly() {
    let records = game_records(12);
    let dir = scratch("replay");
    let settings = write_journal(&dir, &records, 1 << 20);
    let r = recover(&settings.dir).expect("recover");
    let g = r.games.get("board-001").expect("game");
    // The same game, folded directly.
    let mut direct = match &records[0] {
        Record::GameCreated { setup, .. } => Game::new((**setup).clone()).expect("setup"),
        _ => panic!("first record creates the game"),
    };
    for rec in &records[1..] {
        if let Record::Event { event, .. } = rec {
            direct.evolve(event);
        }
    }
    assert_eq!(g.game, direct);
    assert_eq!(r.seqs.get("board-001"), Some(&((records.len() - 1) as u64)));
}

#[test]
fn journal_cli_dump_and_verify() {
    let records = game_records(3);
    let dir = scratch("cli");
    let settings = write_journal(&dir, &records, 1 << 20);
    let bin = env!("CARGO_BIN_EXE_hallclock");
    let out = std::process::Command::new(bin)
        .args(["journal", "dump", "--state-dir"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), records.len());
    assert_eq!(lines[0]["record"], "game_created");
    assert_eq!(lines[1]["event"]["event"], "clock_started");
    let out = std::process::Command::new(bin)
        .args(["journal", "verify", "--state-dir"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("ok\n"));
    // Damage makes verify fail and say where.
    let scan = read_dir(&settings.dir).expect("read");
    let (_, seg, off) = scan.records[2].clone();
    let mut bytes = std::fs::read(&seg).expect("seg");
    bytes[off as usize + 9] ^= 1;
    std::fs::write(&seg, &bytes).expect("corrupt");
    let out = std::process::Command::new(bin)
        .args(["journal", "verify", "--state-dir"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DAMAGED at") && text.contains("CRC"),
        "{text}"
    );
}
