//! The journal survives torn writes and corruption: start-up recovers every intact record,
//! before the damage and after it, reports each damaged span exactly, changes nothing
//! already written, and appends where new records cannot be confused with old bytes.

use std::path::{Path, PathBuf};

use hallclock::rules::Millis;
use hallclock::rules::game::{Event, Game, Input, Setup};
use hallclock::rules::time_control::parse;
use hallclock::store::read_dir;
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
            let span = if cut == last_start {
                assert!(r.damage.is_none(), "a clean cut is just an earlier end");
                None
            } else {
                let d = r.damage.as_ref().expect("damage reported");
                assert_eq!(d.spans.len(), 1, "cut at {cut} ({mode})");
                let s = d.spans[0].clone();
                assert_eq!(s.start, last_start, "cut at {cut} ({mode})");
                assert!(s.end > s.start && s.cut && s.tail, "{s:?}");
                Some(s)
            };
            // Appending continues after the last good record, in a new segment when the
            // torn bytes are there (they are left as they are).
            let mut s = JournalSettings::new(&dir);
            s.segment_size = 1 << 14;
            let (mut j, _) = open_after(s).expect("reopen");
            j.write(std::slice::from_ref(&records[n - 1]))
                .expect("append");
            let again = recover(&jdir).expect("recover again");
            assert_eq!(again.records, n, "cut at {cut} ({mode})");
            // The same torn bytes are found again, now followed by the new segment.
            let found = again.damage.as_ref().map(|d| {
                let s = &d.spans[0];
                (s.segment.clone(), s.start, s.end, s.tail)
            });
            let expected = span.map(|s| (s.segment, s.start, s.end, false));
            assert_eq!(found, expected, "cut at {cut} ({mode})");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn corruption_in_the_middle_costs_one_record_and_is_reported_exactly() {
    let records = game_records(30);
    let dir = scratch("corrupt");
    // Small segments, so the damage is in an early segment and later ones follow it.
    let settings = write_journal(&dir, &records, 1500);
    let scan = read_dir(&settings.dir).expect("read");
    assert!(scan.segments.len() >= 3, "{} segments", scan.segments.len());
    let (_, seg, off) = scan.records[10].clone();
    let mut bytes = std::fs::read(&seg).expect("segment");
    bytes[off as usize + 12] ^= 0x55; // a byte inside the payload: the CRC catches it
    std::fs::write(&seg, &bytes).expect("corrupt");
    let r = recover(&settings.dir).expect("recover");
    assert_eq!(
        r.records,
        records.len() - 1,
        "only the damaged record is lost"
    );
    let d = r.damage.expect("damage");
    assert_eq!(d.spans.len(), 1);
    assert_eq!(d.spans[0].start, off);
    assert!(d.spans[0].reason.contains("CRC"), "{}", d.spans[0].reason);
    assert!(!d.spans[0].tail && !d.spans[0].cut);
    let lost = &d.spans[0].lost;
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].board, "board-001");
    assert_eq!(lost[0].seqs, Some((10, 10)), "record 10 is the 10th event");
    // Reopening changes no segment and appends after the last record.
    let (mut j, _) = open_after(settings.clone()).expect("reopen");
    j.write(&records[10..12]).expect("append");
    let again = read_dir(&settings.dir).expect("read again");
    assert_eq!(again.records.len(), records.len() + 1);
    assert_eq!(again.damage.map(|d| d.spans.len()), Some(1));
    let damaged = std::fs::read_dir(&settings.dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".damaged"))
        .count();
    assert_eq!(damaged, 0, "no segment is set aside");
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
        text.contains("DAMAGED: the journal has a damaged span in segment-000001.log bytes")
            && text.contains("CRC")
            && text.contains("board-001's event 2 is lost"),
        "{text}"
    );
}

mod journal_hall;

/// Where record `i` of the journal in `dir` starts, and its segment.
fn record_at(dir: &Path, i: usize) -> (PathBuf, u64) {
    let scan = read_dir(dir).expect("read");
    let (_, seg, off) = scan.records[i].clone();
    (seg, off)
}

fn flip(seg: &Path, at: u64) {
    let mut bytes = std::fs::read(seg).expect("segment");
    bytes[at as usize] ^= 0x20;
    std::fs::write(seg, &bytes).expect("flipped");
}

/// Issue 36: a finished round, one byte flipped early in the journal. Everything but the
/// record the byte is in comes back: the mates, the resignation and the draw stay
/// decided; nothing is zeroed or set aside, and appending after it loses nothing either.
#[test]
fn a_flipped_byte_mid_journal_loses_only_the_record_it_hit() {
    let records = journal_hall::hall_records(4);
    let state = scratch("flip-mid");
    let settings = journal_hall::write_journal(&state, &records, 2048);
    let before = read_dir(&settings.dir).expect("read");
    assert!(
        before.segments.len() >= 3,
        "{} segments",
        before.segments.len()
    );
    // Record 6: an event of the first steps, in the first segment.
    let (seg, off) = record_at(&settings.dir, 6);
    flip(&seg, off + 20);
    let r = recover(&settings.dir).expect("recover");
    assert_eq!(
        r.records,
        records.len() - 1,
        "only the flipped record is lost"
    );
    let mut expected: Vec<Record> = records.clone();
    expected.remove(6);
    assert_eq!(
        journal_hall::results(&expected),
        journal_hall::results(&records),
        "the lost record decides no game"
    );
    let got: Vec<Record> = read_dir(&settings.dir)
        .expect("read")
        .records
        .into_iter()
        .map(|(r, _, _)| r)
        .collect();
    assert_eq!(got, expected);
    let finished = r
        .games
        .values()
        .filter(|g| g.game.result().is_some())
        .count();
    assert_eq!(finished, 3, "the three decided games stay decided");
    // Opening for appends destroys nothing: no segment renamed, no byte changed.
    let bytes_before: Vec<Vec<u8>> = before
        .segments
        .iter()
        .map(|s| std::fs::read(s).expect("segment"))
        .collect();
    let (mut j, _) = open_after(settings.clone()).expect("reopen");
    j.write(std::slice::from_ref(&records[1])).expect("append");
    for (s, was) in before.segments.iter().zip(&bytes_before) {
        let now = std::fs::read(s).expect("segment still there, under its name");
        // Every byte written before (the flipped one too) is still there, unchanged.
        let changed = was
            .iter()
            .enumerate()
            .filter(|(i, b)| **b != 0 && now.get(*i) != Some(*b))
            .count();
        assert_eq!(changed, 0, "{}", s.display());
    }
    let again = read_dir(&settings.dir).expect("read again");
    assert_eq!(
        again.records.len(),
        records.len(),
        "n - 1 and the appended one"
    );
}

/// Issue 36: a damaged last record (acknowledged, published) must not give its `seq` to
/// the next event after a restart: dashboards drop an event whose seq they have seen.
/// Whichever byte of it is flipped (its board's name, its seq's digits, its header).
#[test]
fn a_damaged_last_record_does_not_give_its_seq_to_another_event() {
    let records = game_records(6);
    let n = records.len();
    let state = scratch("flip-last");
    let settings = write_journal(&state, &records, 1 << 14);
    let (seg, off) = record_at(&settings.dir, n - 1);
    let last = match &records[n - 1] {
        Record::Event { seq, .. } => *seq,
        _ => panic!("the last record is an event"),
    };
    let original = std::fs::read(&seg).expect("segment");
    let len = u32::from_le_bytes([
        original[off as usize],
        original[off as usize + 1],
        original[off as usize + 2],
        original[off as usize + 3],
    ]) as u64;
    for at in off..off + 8 + len {
        for mask in [0x20u8, 0x01, 0xff] {
            let mut bytes = original.clone();
            bytes[at as usize] ^= mask;
            std::fs::write(&seg, &bytes).expect("flipped");
            let r = recover(&settings.dir).expect("recover");
            assert!(
                r.seqs.get("board-001").copied().unwrap_or(0) >= last,
                "byte {} ^ {mask:#x}: seq {last} was published: the next event must come after it ({:?})",
                at - off,
                r.seqs
            );
        }
    }
}

/// Issue 36: after a damaged span in the middle, event numbering continues above every
/// seq in the journal, including those after the span.
#[test]
fn after_a_damaged_span_numbering_continues_above_every_seq() {
    let records = journal_hall::hall_records(4);
    let state = scratch("flip-seqs");
    let settings = journal_hall::write_journal(&state, &records, 2048);
    let (seg, off) = record_at(&settings.dir, 8);
    flip(&seg, off + 3);
    let r = recover(&settings.dir).expect("recover");
    for n in 1..=4 {
        let b = journal_hall::board(n);
        let max = records
            .iter()
            .filter_map(|r| match r {
                Record::Event { board, seq, .. } if *board == b => Some(*seq),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        assert_eq!(r.seqs.get(&b).copied().unwrap_or(0), max, "{b}");
    }
}

/// The framed bytes of `records[from..to]` in the journal of `dir` are overwritten with
/// `fill` (a sector gone bad), and the segment is written back.
fn spoil(dir: &Path, from: usize, to: usize, fill: u8) -> (PathBuf, u64, u64) {
    let (seg, start) = record_at(dir, from);
    let scan = read_dir(dir).expect("read");
    let end = match scan.records.get(to) {
        Some((_, s, off)) if *s == seg => *off,
        _ => panic!("records {from}..{to} must be in one segment, with one after them"),
    };
    let mut bytes = std::fs::read(&seg).expect("segment");
    bytes[start as usize..end as usize].fill(fill);
    std::fs::write(&seg, &bytes).expect("spoiled");
    (seg, start, end)
}

fn index_of(records: &[Record], f: impl Fn(&Record) -> bool) -> usize {
    records.iter().position(f).expect("such a record")
}

fn ended(board: &str) -> impl Fn(&Record) -> bool + '_ {
    move |r| matches!(r, Record::Event { board: b, event: Event::GameEnded { .. }, .. } if b == board)
}

/// Issue 36: a game whose result record survives a damaged span stays decided with that
/// result, though events before it are lost; the span says exactly which.
#[test]
fn a_game_whose_result_survives_the_damage_stays_decided() {
    let records = journal_hall::hall_records(4);
    let state = scratch("result-survives");
    let settings = journal_hall::write_journal(&state, &records, 1 << 16);
    // board-001's events 2..=3 (its first move and press), whatever lies between them.
    let first = index_of(
        &records,
        |r| matches!(r, Record::Event { board, seq: 2, .. } if board == "board-001"),
    );
    let after = index_of(
        &records,
        |r| matches!(r, Record::Event { board, seq: 4, .. } if board == "board-001"),
    );
    let (seg, start, end) = spoil(&settings.dir, first, after, 0xee);
    let r = recover(&settings.dir).expect("recover");
    let g = &r.games["board-001"];
    assert!(g.game.result().is_some(), "the mate survived: decided");
    assert!(!g.damaged, "a decided game is not held");
    let d = r.damage.as_ref().expect("damage");
    assert_eq!(d.spans.len(), 1);
    let s = &d.spans[0];
    assert_eq!((s.segment.clone(), s.start, s.end), (seg, start, end));
    let b1 = s
        .lost
        .iter()
        .find(|l| l.board == "board-001")
        .expect("board-001 lost");
    assert_eq!(b1.seqs, Some((2, 3)));
    let words = d.words();
    assert!(
        words.starts_with("the journal has a damaged span in segment-000001.log bytes ")
            && words.contains("board-001's events 2–3")
            && words.ends_with("; every other record was recovered"),
        "{words}"
    );
}

/// Issue 36: a game whose later events (its result among them) are lost with nothing of
/// it after the damage is not resumed as if nothing happened: it is recovered as far as
/// the records go and held for the arbiter. An arbiter's act on it after the damage
/// settles it (the hold is not repeated at every start).
#[test]
fn a_game_that_lost_its_last_events_is_held_until_an_arbiter_acts() {
    let records = journal_hall::hall_records(4);
    let state = scratch("held");
    let settings = journal_hall::write_journal(&state, &records, 1 << 16);
    // board-002's resignation (its last event), spoiled with the answer after it.
    let resigned = index_of(&records, ended("board-002"));
    assert!(resigned + 1 < records.len(), "records follow it");
    spoil(&settings.dir, resigned, resigned + 1, 0);
    let r = recover(&settings.dir).expect("recover");
    let g = &r.games["board-002"];
    assert!(g.game.result().is_none(), "its result is lost");
    assert!(g.damaged, "held: the journal cannot say how it stands");
    assert!(!r.games["board-001"].damaged && !r.games["board-004"].damaged);
    // The arbiter acts on it: the next start does not hold it again.
    let (mut j, scan) = open_after(settings.clone()).expect("reopen");
    let seq = scan.last_seq("board-002") + 1;
    j.write(&[Record::Event {
        board: "board-002".into(),
        seq,
        game: 2,
        event: Event::Paused {
            at: journal_hall::T0 + Millis(3_600_000),
            arbiter: "IA Ada".into(),
            reason: "journal damaged".into(),
        },
    }])
    .expect("append");
    let again = recover(&settings.dir).expect("recover again");
    assert!(!again.games["board-002"].damaged, "settled by the arbiter");
    assert_eq!(
        again.damage.map(|d| d.spans.len()),
        Some(1),
        "the span is still reported"
    );
}

/// Issue 36: `hallclock journal verify` reports a board whose seqs have a gap or a repeat,
/// and a game whose instants run backwards, with the board and the seqs.
#[test]
fn verify_reports_seq_gaps_repeats_and_instants_running_backwards() {
    let mut records = game_records(4);
    let bin = env!("CARGO_BIN_EXE_hallclock");
    let verify = |dir: &Path| {
        let out = std::process::Command::new(bin)
            .args(["journal", "verify", "--state-dir"])
            .arg(dir)
            .output()
            .expect("runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // A gap: seq 3 is missing; a repeat: seq 2 again at the end.
    let n = records.len();
    if let Record::Event { seq, .. } = &mut records[3] {
        *seq = 4;
    }
    for r in &mut records[4..n] {
        if let Record::Event { seq, .. } = r {
            *seq += 1;
        }
    }
    let mut again = records[2].clone();
    if let Record::Event { event, .. } = &mut again {
        // Also before the last event's instant.
        *event = Event::Paused {
            at: T0,
            arbiter: "IA Ada".into(),
            reason: "x".into(),
        };
    }
    records.push(again);
    let dir = scratch("verify-order");
    write_journal(&dir, &records, 1 << 20);
    let (code, text) = verify(&dir);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("order: board-001: seq 4 follows seq 2"),
        "{text}"
    );
    assert!(text.contains("3 is missing"), "{text}");
    assert!(
        text.contains("order: board-001: seq 2 comes after seq"),
        "{text}"
    );
    assert!(text.contains("its instants run backwards"), "{text}");
    assert!(!text.contains("DAMAGED"), "the framing is whole: {text}");
}

/// Issue 36: segments an earlier version set aside (`*.damaged`) are not replayed, but
/// they are reported and no seq in them is used again.
#[test]
fn segments_set_aside_by_an_earlier_version_still_count_for_numbering() {
    let records = game_records(6);
    let state = scratch("set-aside");
    let settings = write_journal(&state, &records[..4], 1 << 14);
    // What the old recovery renamed away: the rest of the game, in its own segment.
    let aside = scratch("set-aside-old");
    write_journal(&aside, &records[4..], 1 << 14);
    std::fs::copy(
        aside.join("journal/segment-000001.log"),
        settings.dir.join("segment-000002.log.damaged"),
    )
    .expect("set aside");
    let r = recover(&settings.dir).expect("recover");
    assert_eq!(r.records, 4, "a set-aside segment is not replayed");
    let top = match records.last() {
        Some(Record::Event { seq, .. }) => *seq,
        _ => panic!("the last record is an event"),
    };
    assert_eq!(
        r.seqs.get("board-001"),
        Some(&top),
        "its seqs are not reused"
    );
    let d = r.damage.expect("reported");
    assert_eq!(d.set_aside.len(), 1);
    assert!(
        d.words()
            .contains("segment-000002.log.damaged was set aside by an earlier version"),
        "{}",
        d.words()
    );
    // Appends go to a segment of their own, not over the set-aside one's number's file.
    let (mut j, _) = open_after(settings.clone()).expect("reopen");
    j.write(std::slice::from_ref(&records[4])).expect("append");
    assert_eq!(read_dir(&settings.dir).expect("read").records.len(), 5);
}
