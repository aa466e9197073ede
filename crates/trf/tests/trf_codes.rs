//! The TRF16 result codes beyond 1 = 0 + -: `W`/`D`/`L` (a game of less than one move, not
//! rated), `H` half-point bye, `F` full-point bye, `U` pairing-allocated bye and `Z`
//! zero-point bye, read from and written to the per-round columns. The file
//! (tests/data/codes.trf) uses every one of them, some in lower case.

use std::path::Path;

use hallclock_trf::{ResultCode, Trf};

fn codes_file() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codes.trf");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(bytes: &[u8]) -> Trf {
    Trf::read(bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn result(trf: &Trf, rank: u32, round: usize) -> Option<ResultCode> {
    trf.player(rank)
        .and_then(|p| p.round(round))
        .and_then(|e| e.result)
}

#[test]
fn unrated_games_and_byes_are_read_from_the_round_columns() {
    use ResultCode::*;
    let trf = read(&codes_file());
    let expected: [(u32, [Option<ResultCode>; 3]); 6] = [
        (1, [Some(WinUnrated), Some(Draw), None]),
        (2, [Some(DrawUnrated), Some(Draw), Some(DrawUnrated)]),
        (3, [Some(PairingBye), Some(LossUnrated), None]),
        (4, [Some(LossUnrated), Some(WinUnrated), Some(HalfPointBye)]),
        (
            5,
            [Some(DrawUnrated), Some(HalfPointBye), Some(ZeroPointBye)],
        ),
        (
            6,
            [Some(ZeroPointBye), Some(FullPointBye), Some(DrawUnrated)],
        ),
    ];
    for (rank, codes) in expected {
        for (i, code) in codes.into_iter().enumerate() {
            assert_eq!(
                result(&trf, rank, i + 1),
                code,
                "player {rank} round {}",
                i + 1
            );
        }
    }
    // A bye has no opponent and no colour; an unrated game has both.
    let five = trf.player(5).expect("player 5");
    assert_eq!(
        (five.rounds[1].opponent, five.rounds[1].colour),
        (None, None)
    );
    let one = trf.player(1).expect("player 1");
    assert_eq!(one.rounds[0].opponent, Some(4));
    // FIDE's default scoring of the codes gives the file's points column.
    for p in &trf.players {
        let sum: u32 = p
            .rounds
            .iter()
            .filter_map(|e| e.result)
            .map(ResultCode::default_points)
            .sum();
        assert_eq!(Some(sum), p.points, "player {}", p.rank);
    }
}

#[test]
fn a_file_with_every_code_round_trips_byte_for_byte() {
    let bytes = codes_file();
    let trf = read(&bytes);
    assert!(trf.write() == bytes, "write(read(f)) != f");
}

#[test]
fn unrated_codes_are_written_into_the_round_column_with_the_points() {
    let bytes = codes_file();
    let mut trf = read(&bytes);
    // Round 3, 1 (White) against 3: White wins before the first move was completed.
    trf.set_results(&[
        (1, 3, ResultCode::WinUnrated),
        (3, 3, ResultCode::LossUnrated),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let written = String::from_utf8(trf.write()).expect("UTF-8 as read");
    let line = |rank: u32| -> String {
        written
            .lines()
            .find(|l| l.starts_with("001") && l[4..8].trim() == rank.to_string())
            .unwrap_or_else(|| panic!("player {rank}"))
            .to_string()
    };
    let chars = |l: String| l.chars().collect::<Vec<char>>();
    // Round 3's result is column 119; the points are columns 81–84.
    let one = chars(line(1));
    assert_eq!(one[118], 'W');
    assert_eq!(one[80..84].iter().collect::<String>(), " 2.5");
    let three = chars(line(3));
    assert_eq!(three[118], 'L');
    assert_eq!(three[80..84].iter().collect::<String>(), " 1.0");
    let again = read(written.as_bytes());
    assert_eq!(result(&again, 1, 3), Some(ResultCode::WinUnrated));
    assert_eq!(result(&again, 3, 3), Some(ResultCode::LossUnrated));
    // Nothing else changed.
    let before = String::from_utf8(bytes).expect("UTF-8");
    let changed: Vec<usize> = before
        .lines()
        .zip(written.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(changed.len(), 2, "lines changed: {changed:?}");
}

/// The file with player `rank`'s round `round` result column set to `code`.
fn with_result(rank: u32, round: usize, code: &str) -> String {
    let text = String::from_utf8(codes_file()).expect("UTF-8");
    let column = 99 + 10 * (round - 1);
    text.lines()
        .map(|l| {
            if l.starts_with("001") && l[4..8].trim() == rank.to_string() {
                let mut cs: Vec<char> = l.chars().collect();
                cs.resize(cs.len().max(column), ' ');
                cs[column - 1] = code.chars().next().unwrap_or(' ');
                cs.into_iter().collect()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn error_of(text: &str) -> String {
    match Trf::read(text.as_bytes()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unrated_codes_and_byes_that_do_not_fit_are_named_by_line_and_column() {
    // Line 12 is player 1, line 14 player 3.
    assert_eq!(
        error_of(&with_result(1, 1, "L")),
        "line 12, column 99 (result): round 1: the pairing with 4 (line 15) disagrees: the two results do not go together"
    );
    // An unrated win against a rated loss is not one game either.
    assert_eq!(
        error_of(&with_result(1, 1, "1")),
        "line 12, column 99 (result): round 1: the pairing with 4 (line 15) disagrees: the two results do not go together"
    );
    assert_eq!(
        error_of(&with_result(2, 1, "H")),
        "line 13, columns 92–99 (round): a bye code (H F U Z) with an opponent"
    );
    assert_eq!(
        error_of(&with_result(3, 1, "W")),
        "line 14, columns 92–99 (round): a game result without an opponent"
    );
}
