//! TRF files as programs write them in the wild (issue 22): FIDE id 0, lines that are not
//! records, codes nobody documents, team records, `X`, CR/CRLF/LF, a BOM, UTF-8 names,
//! and an `XXR` of more rounds than played. What a pairing program skips is skipped with a
//! warning naming the line, and kept byte for byte on write-back.

use hallclock_trf::{Encoding, ResultCode, Trf, TrfErrorKind, TrfWarning};

/// A `001` record laid out by the columns of FIDE's TRF document (character columns).
fn player(rank: u32, name: &str, id: &str, points: &str, rounds: &[(u32, char, char)]) -> String {
    let mut s =
        format!("001 {rank:>4} m    {name:<33} 2000 NED {id:>11} 2000/01/01 {points:>4} {rank:>4}");
    for (opp, colour, result) in rounds {
        s.push_str(&format!("  {opp:>4} {colour} {result}"));
    }
    s
}

/// Two players who met in round 1 (1 won with White), paired again in round 2.
fn two_players() -> Vec<String> {
    vec![
        player(
            1,
            "Alpha, Aaron",
            "1000001",
            "1.0",
            &[(2, 'w', '1'), (2, 'b', ' ')],
        ),
        player(
            2,
            "Bravo, Berta",
            "1000002",
            "0.0",
            &[(1, 'b', '0'), (1, 'w', ' ')],
        ),
    ]
}

fn file(lines: &[&str], players: &[String], ending: &str) -> String {
    let mut all: Vec<String> = vec!["012 Wild Open".into()];
    all.extend(lines.iter().map(|l| l.to_string()));
    all.extend(players.iter().cloned());
    let mut text = all.join(ending);
    text.push_str(ending);
    text
}

fn read(text: &str) -> Trf {
    Trf::read(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn fide_id_zero_or_blank_is_no_id() {
    let mut players = two_players();
    players[0] = players[0].replacen("    1000001 ", "          0 ", 1);
    players[1] = players[1].replacen("    1000002 ", "            ", 1);
    let trf = read(&file(&[], &players, "\n"));
    assert_eq!(trf.player(1).and_then(|p| p.fide_id), None);
    assert_eq!(trf.player(2).and_then(|p| p.fide_id), None);
    // Still a number field: text there is a malformed record.
    let mut players = two_players();
    players[0] = players[0].replacen("    1000001 ", "    10000x1 ", 1);
    let e = Trf::read(file(&[], &players, "\n").as_bytes()).expect_err("not a number");
    assert_eq!(
        e.to_string(),
        "line 2, columns 58–68 (FIDE id): '10000x1' is not a number"
    );
}

#[test]
fn place_zero_is_no_rank() {
    let mut players = two_players();
    players[0] = players[0].replacen(" 1.0    1", " 1.0    0", 1);
    let trf = read(&file(&[], &players, "\n"));
    assert_eq!(trf.player(1).and_then(|p| p.place), None);
    assert_eq!(trf.player(2).and_then(|p| p.place), Some(2));
}

#[test]
fn blank_and_whitespace_lines_are_skipped_silently() {
    let text = file(&["", "     ", "\t", "\u{1a}"], &two_players(), "\r\n");
    let trf = read(&text);
    assert_eq!(trf.warnings, vec![]);
    assert_eq!(trf.players.len(), 2);
    assert_eq!(trf.write(), text.as_bytes());
}

#[test]
fn column_rulers_and_notes_are_skipped_with_a_warning_naming_the_line() {
    let ruler = "1234567890123456789012345678901234567890123456789012345678901234567890";
    let tens = "         1         2         3         4         5         6";
    let text = file(
        &[ruler, tens, "Exported by a program", "xxr 5", "12"],
        &two_players(),
        "\n",
    );
    let trf = read(&text);
    let lines: Vec<(usize, &str)> = trf
        .warnings
        .iter()
        .map(|w| match w {
            TrfWarning::NotARecord { line, text } => (*line, text.as_str()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            (2, ruler),
            (3, tens),
            (4, "Exported by a program"),
            (5, "xxr 5"),
            (6, "12")
        ]
    );
    assert_eq!(trf.warnings[0].line(), 2);
    assert_eq!(
        trf.warnings[2].to_string(),
        "line 4: not a TRF record, skipped (kept as it is): 'Exported by a program'"
    );
    // Long lines are cut and control characters escaped.
    assert_eq!(
        trf.warnings[0].to_string(),
        format!(
            "line 2: not a TRF record, skipped (kept as it is): '{}…'",
            &ruler[..60]
        )
    );
    let trf = read(&file(&["\u{1b}[2J clear"], &two_players(), "\n"));
    assert!(
        trf.warnings[0].to_string().contains("'\\u{1b}[2J clear'"),
        "{}",
        trf.warnings[0]
    );
    assert_eq!(
        trf.write(),
        file(&["\u{1b}[2J clear"], &two_players(), "\n").as_bytes()
    );
    assert_eq!(read(&text).write(), text.as_bytes());
}

#[test]
fn unknown_codes_are_skipped_with_a_warning_and_kept_byte_for_byte() {
    let text = file(
        &[
            "ZZQ a program's own record",
            "777 1 2 3",
            "DDD SSSS sTTT NNNN",
            "ABC",
        ],
        &two_players(),
        "\r\n",
    );
    let trf = read(&text);
    assert_eq!(
        trf.warnings,
        vec![
            TrfWarning::UnknownRecord {
                line: 2,
                code: "ZZQ".into()
            },
            TrfWarning::UnknownRecord {
                line: 3,
                code: "777".into()
            },
            TrfWarning::UnknownRecord {
                line: 4,
                code: "DDD".into()
            },
            TrfWarning::UnknownRecord {
                line: 5,
                code: "ABC".into()
            },
        ]
    );
    assert_eq!(
        trf.warnings[1].to_string(),
        "line 3: unknown record code '777', skipped (kept as it is)"
    );
    // Written back with a result: every other line as it was.
    let mut trf = trf;
    trf.set_results(&[(1, 2, ResultCode::Draw), (2, 2, ResultCode::Draw)])
        .expect("fits");
    let written = String::from_utf8(trf.write()).expect("utf-8");
    let before: Vec<&str> = text.split("\r\n").collect();
    let after: Vec<&str> = written.split("\r\n").collect();
    assert_eq!(before.len(), after.len());
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        if i + 1 < 6 {
            assert_eq!(b, a, "line {}", i + 1);
        }
    }
    assert_ne!(before[5], after[5]);
}

#[test]
fn documented_records_are_kept_silently() {
    let national =
        "GER    1 m    Alpha, Aaron                      1980 NRW     1234567 2000/01/01";
    let text = file(
        &[
            "XXR 9",
            "XXC white1 rank",
            "XXA    1  1.0  1.0",
            "XXP 1 2",
            "XXS WW=1.0 BW=1.0",
            "240 H 003    1",
            "250       1.0 001 002 0001 0002",
            "260 001 002    1    2",
            "299 W      1.0  001    1",
            "### a comment",
            "###4567890",
            national,
        ],
        &two_players(),
        "\n",
    );
    let trf = read(&text);
    assert_eq!(trf.warnings, vec![]);
    assert_eq!(trf.team_records, 0);
    assert_eq!(trf.write(), text.as_bytes());
}

#[test]
fn team_records_are_counted_and_kept() {
    let t310 = format!(
        "310 {:>3} {:<32} {:<5} {:>6} {:>6} {:>6} {:>3}  {:>4} {:>4}",
        1, "Rooks United", "ROOKS", 2568, "2.0", "1.0", 1, 1, 2
    );
    let t013 = format!("013 {:<32}{:>4} {:>4}", "Rooks United", 1, 2);
    let text = file(
        &[
            &t310,
            &t013,
            "300 002   1   2    2    1",
            "320  2.0  2.0 000 001",
            "330 +- 004 023 047",
            "801   1 Rooks",
            "802   1 ROOKS      2.0    1.0    2 w  1.0",
        ],
        &two_players(),
        "\r",
    );
    let trf = read(&text);
    assert_eq!(trf.team_records, 7);
    assert_eq!(trf.warnings, vec![]);
    assert_eq!(trf.write(), text.as_bytes());
}

#[test]
fn a_malformed_record_of_a_code_we_read_is_still_refused() {
    let mut players = two_players();
    players[1] = players[1].replacen("2000 NED", "20x0 NED", 1);
    let e = Trf::read(file(&["1234567890"], &players, "\n").as_bytes()).expect_err("bad");
    assert_eq!(
        e.to_string(),
        "line 4, columns 49–52 (FIDE rating): '20x0' is not a number"
    );
    let e = Trf::read(file(&["142 five"], &two_players(), "\n").as_bytes()).expect_err("bad");
    assert_eq!(e.position.line, 2);
    // Lines that are all skipped are not a file.
    let e = Trf::read(b"Exported by a program\n1234567890\n").expect_err("no records");
    assert!(matches!(e.kind, TrfErrorKind::NotATrf { .. }), "{e}");
}

#[test]
fn x_is_read_and_written() {
    let players = vec![
        player(
            1,
            "Alpha, Aaron",
            "",
            "1.5",
            &[(2, 'w', '1'), (2, 'b', 'X')],
        ),
        player(
            2,
            "Bravo, Berta",
            "",
            "0.5",
            &[(1, 'b', '0'), (1, 'w', 'x')],
        ),
    ];
    let text = file(&[], &players, "\n");
    let mut trf = read(&text);
    let code = |trf: &Trf, rank: u32| trf.player(rank).and_then(|p| p.round(2)?.result);
    assert_eq!(code(&trf, 1), Some(ResultCode::Unknown));
    assert_eq!(code(&trf, 2), Some(ResultCode::Unknown));
    // The adjourned game ends: X (½ by default) becomes the result.
    trf.set_results(&[(1, 2, ResultCode::Win), (2, 2, ResultCode::Loss)])
        .expect("fits");
    let again = read(&String::from_utf8(trf.write()).expect("utf-8"));
    assert_eq!(code(&again, 1), Some(ResultCode::Win));
    assert_eq!(again.player(1).and_then(|p| p.points), Some(20));
    assert_eq!(again.player(2).and_then(|p| p.points), Some(0));
    // And a game still unfinished is written as X.
    let mut trf = read(&file(&[], &two_players(), "\n"));
    trf.set_results(&[(1, 2, ResultCode::Unknown), (2, 2, ResultCode::Unknown)])
        .expect("fits");
    let written = String::from_utf8(trf.write()).expect("utf-8");
    let line: Vec<char> = written.lines().nth(1).expect("player 1").chars().collect();
    assert_eq!(line[108], 'X');
    assert_eq!(code(&read(&written), 2), Some(ResultCode::Unknown));
}

#[test]
fn every_line_ending_round_trips_and_results_keep_it() {
    for ending in ["\r", "\r\n", "\n"] {
        let text = file(&["022 Haarlem", "ZZQ kept"], &two_players(), ending);
        let mut trf = read(&text);
        assert_eq!(trf.players.len(), 2, "{ending:?}");
        assert_eq!(trf.tag("022"), Some("Haarlem"), "{ending:?}");
        assert_eq!(trf.write(), text.as_bytes(), "{ending:?}");
        trf.set_results(&[(1, 2, ResultCode::Draw), (2, 2, ResultCode::Draw)])
            .expect("fits");
        let written = String::from_utf8(trf.write()).expect("utf-8");
        assert_eq!(written.matches(ending).count(), 5, "{ending:?}");
        assert!(written.contains(&format!("ZZQ kept{ending}")), "{ending:?}");
    }
}

#[test]
fn a_bom_is_read_past_and_written_back() {
    let text = format!("\u{feff}{}", file(&[], &two_players(), "\r\n"));
    let trf = read(&text);
    assert_eq!(trf.encoding, Encoding::Utf8 { bom: true });
    assert_eq!(trf.name(), Some("Wild Open"));
    assert_eq!(trf.warnings, vec![]);
    assert_eq!(trf.write(), text.as_bytes());
}

#[test]
fn columns_count_characters_in_utf8_names() {
    // Two-, three- and four-byte characters in names: the rating and the rounds stay put.
    let players = vec![
        player(
            1,
            "Ødegård, Pål",
            "0",
            "1.0",
            &[(2, 'w', '1'), (2, 'b', ' ')],
        ),
        player(
            2,
            "Ōta, 健二 𝔄",
            "0",
            "0.0",
            &[(1, 'b', '0'), (1, 'w', ' ')],
        ),
    ];
    let mut trf = read(&file(&[], &players, "\n"));
    let p = trf.player(2).expect("2");
    assert_eq!(p.name.as_deref(), Some("Ōta, 健二 𝔄"));
    assert_eq!((p.rating, p.fide_id, p.points), (Some(2000), None, Some(0)));
    trf.set_results(&[(1, 2, ResultCode::Loss), (2, 2, ResultCode::Win)])
        .expect("fits");
    let written = String::from_utf8(trf.write()).expect("utf-8");
    let line: Vec<char> = written.lines().nth(2).expect("player 2").chars().collect();
    assert_eq!(line[108], '1');
    assert_eq!(line[80..84].iter().collect::<String>(), " 1.0");
    assert_eq!(read(&written).player(2).and_then(|p| p.points), Some(10));
}

#[test]
fn an_xxr_of_more_rounds_than_played_is_fine() {
    let text = file(&["142 9", "XXR 9"], &two_players(), "\n");
    let trf = read(&text);
    assert_eq!(trf.rounds(), 2);
    assert_eq!(trf.tag("142"), Some("9"));
    let plan = trf
        .round_plan(2, hallclock_trf::round::Order::Fide)
        .expect("round 2");
    assert_eq!(plan.boards.len(), 1);
    assert!(
        trf.round_plan(3, hallclock_trf::round::Order::Fide)
            .is_err()
    );
}

#[test]
fn a_file_with_its_own_scoring_keeps_its_points() {
    for scoring in ["162 W 3.0", "BBW  3.0", "XXS WW=3.0"] {
        let mut trf = read(&file(&[scoring], &two_players(), "\n"));
        trf.set_results(&[(1, 2, ResultCode::Win), (2, 2, ResultCode::Loss)])
            .expect("fits");
        let again = read(&String::from_utf8(trf.write()).expect("utf-8"));
        assert_eq!(
            again.player(1).and_then(|p| p.points),
            Some(10),
            "{scoring}"
        );
    }
    // Without, FIDE's default scoring: 1 + 1.
    let mut trf = read(&file(&["XXR 2"], &two_players(), "\n"));
    trf.set_results(&[(1, 2, ResultCode::Win), (2, 2, ResultCode::Loss)])
        .expect("fits");
    let again = read(&String::from_utf8(trf.write()).expect("utf-8"));
    assert_eq!(again.player(1).and_then(|p| p.points), Some(20));
}

#[test]
fn a_windows_file_reads_as_windows_1252_and_writes_back_every_byte() {
    // Ž and ž are at 0x8E and 0x9E in Windows-1252, control characters in ISO 8859-1.
    let mut bytes = file(&[], &two_players(), "\r\n").into_bytes();
    let at = bytes.windows(5).position(|w| w == b"Alpha").expect("name");
    bytes[at..at + 5].copy_from_slice(b"\x8ei\x9eek");
    // The five bytes Windows-1252 leaves undefined, in a comment line.
    bytes.extend_from_slice(b"### \x81\x8d\x8f\x90\x9d \xe9\x80\r\n");
    let trf = Trf::read(&bytes).expect("reads");
    assert_eq!(trf.encoding, Encoding::Windows1252);
    let p = trf.player(1).expect("1");
    assert_eq!(p.name.as_deref(), Some("Žižek, Aaron"));
    assert_eq!(p.rating, Some(2000));
    assert_eq!(trf.write(), bytes);
    let mut trf = trf;
    trf.set_results(&[(1, 2, ResultCode::Draw), (2, 2, ResultCode::Draw)])
        .expect("fits");
    let written = trf.write();
    assert_eq!(&written[at..at + 5], b"\x8ei\x9eek");
    assert!(written.ends_with(b"### \x81\x8d\x8f\x90\x9d \xe9\x80\r\n"));
}

#[test]
fn every_code_reads_from_its_character_and_shows_as_it() {
    use ResultCode::*;
    for code in [
        Win,
        Draw,
        Loss,
        ForfeitWin,
        ForfeitLoss,
        WinUnrated,
        DrawUnrated,
        LossUnrated,
        HalfPointBye,
        FullPointBye,
        PairingBye,
        ZeroPointBye,
        Unknown,
    ] {
        let c = code.as_char();
        assert_eq!(ResultCode::from_char(c), Some(code), "{c}");
        assert_eq!(code.to_string(), c.to_string());
    }
    assert_eq!(ResultCode::from_char('?'), None);
}

#[test]
fn a_forfeit_entered_before_the_round_is_a_board_nobody_plays() {
    let players = vec![
        player(
            1,
            "Alpha, Aaron",
            "",
            "2.0",
            &[(2, 'w', '1'), (2, 'b', '+')],
        ),
        player(
            2,
            "Bravo, Berta",
            "",
            "0.0",
            &[(1, 'b', '0'), (1, 'w', '-')],
        ),
    ];
    let trf = read(&file(&[], &players, "\n"));
    let p = trf.player(2).expect("2");
    assert_eq!(
        p.round(2).and_then(|e| e.result),
        Some(ResultCode::ForfeitLoss)
    );
    let plan = trf
        .round_plan(2, hallclock_trf::round::Order::Fide)
        .expect("round 2");
    assert_eq!(plan.boards.len(), 1);
    assert!(plan.boards[0].is_forfeit());
    assert!(!plan.boards[0].to_play());
    assert_eq!(plan.boards[0].black_result, Some(ResultCode::ForfeitWin));
}
