//! The field readers and the whole-file checks, each named by line and column: the
//! refusals a malformed record of a code we read still gets, and the writer's limits.

use hallclock_trf::round::Order;
use hallclock_trf::{ResultCode, Trf, TrfErrorKind, TrfWarning};

/// A `001` record by the columns of FIDE's TRF document.
fn player(rank: &str, sex: char, points: &str, rounds: &[(&str, char, char)]) -> String {
    let name = format!("Player {}", rank.trim());
    let mut s = format!(
        "001 {rank:>4} {sex}    {name:<33} 2000 NED     1000001 2000/01/01 {points:>4}    1"
    );
    for (opp, colour, result) in rounds {
        s.push_str(&format!("  {opp:>4} {colour} {result}"));
    }
    s
}

fn pair() -> [String; 2] {
    [
        player("1", 'm', "1.0", &[("2", 'w', '1'), ("2", 'b', ' ')]),
        player("2", 'w', "0.0", &[("1", 'b', '0'), ("1", 'w', ' ')]),
    ]
}

/// Line 1 is `012`, then `tags`, then the players.
fn file(tags: &[&str], players: &[String]) -> String {
    let mut lines = vec!["012 Fields Open".to_string()];
    lines.extend(tags.iter().map(|t| t.to_string()));
    lines.extend(players.iter().cloned());
    lines.join("\n") + "\n"
}

fn error_of(text: &str) -> String {
    match Trf::read(text.as_bytes()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn read(text: &str) -> Trf {
    Trf::read(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn tags_we_check_name_the_columns_of_their_value() {
    assert_eq!(
        error_of(&file(&["142 five"], &pair())),
        "line 2, columns 5–8 (number of rounds): 'five' is not a number"
    );
    // Spaces between the code and the value move the columns.
    assert_eq!(
        error_of(&file(&["142   five"], &pair())),
        "line 2, columns 7–10 (number of rounds): 'five' is not a number"
    );
    assert_eq!(
        error_of(&file(&["222   40/6000+30:"], &pair())),
        "line 2, column 18 (encoded time control): '40/6000+30:' is not an encoded time control (e.g. 40/6000+30:900+30 or W300-B240): expected a period after ':'"
    );
    // A blank tag says nothing; a good one is read.
    let trf = read(&file(&["222 5400+30", "142 ", "222"], &pair()));
    let tc = trf.time_control().expect("tag 222");
    assert_eq!(tc.white.to_string(), "5400+30");
}

#[test]
fn fields_out_of_their_set_are_refused() {
    let [mut one, two] = pair();
    one.replace_range(4..8, "   0");
    assert_eq!(
        error_of(&file(&[], &[one, two.clone()])),
        "line 2, columns 5–8 (starting rank): '0' is out of range (1 to 9999)"
    );
    let [one, _] = pair();
    let one = one.replacen("001    1 m", "001    1 x", 1);
    assert_eq!(
        error_of(&file(&[], &[one, two])),
        "line 2, column 10 (sex): 'x' is not one of m, w"
    );
}

#[test]
fn a_round_block_that_contradicts_itself_is_refused() {
    let two = player("2", 'w', "0.0", &[("1", 'b', '0')]);
    let no_colour = player("1", 'm', "1.0", &[("2", ' ', '1')]);
    assert_eq!(
        error_of(&file(&[], &[no_colour, two.clone()])),
        "line 2, columns 92–99 (round): a paired round needs the colour w or b"
    );
    // Both halves say White.
    let one_white = player("1", 'm', "1.0", &[("2", 'w', '1')]);
    let two_white = player("2", 'w', "0.0", &[("1", 'w', '0')]);
    assert_eq!(
        error_of(&file(&[], &[one_white, two_white])),
        "line 2, column 97 (colour): round 1: the pairing with 2 (line 3) disagrees: both players have the same colour"
    );
    // `-` on one side only: the two lines disagree on whether the game was played.
    let dash = player("1", 'm', "1.0", &[("2", '-', '1')]);
    assert_eq!(
        error_of(&file(&[], &[dash, two.clone()])),
        "line 2, column 97 (colour): round 1: the pairing with 2 (line 3) disagrees: one line gives a colour and the other '-' (not played)"
    );
    let colour_alone = player("1", 'm', "1.0", &[("0000", 'w', '1')]);
    assert_eq!(
        error_of(&file(&[], &[colour_alone, two.clone()])),
        "line 2, columns 92–99 (round): a colour without an opponent (0000 is a bye)"
    );
    // A forfeit and a draw without an opponent are what programs write for a forfeit
    // entered before the pairing and an arbiter's half point (TRF26's `0000 - +`).
    let lone = player("3", 'm', "1.0", &[("0000", '-', '+')]);
    let half = player("4", 'm', "0.5", &[("0000", '-', '=')]);
    let one = player("1", 'm', "1.0", &[("2", 'w', '1')]);
    let trf = read(&file(&[], &[one, two, lone, half]));
    assert_eq!(
        trf.player(3).and_then(|p| p.round(1)?.result),
        Some(ResultCode::ForfeitWin)
    );
    assert_eq!(
        trf.player(4).and_then(|p| p.round(1)?.result),
        Some(ResultCode::Draw)
    );
}

#[test]
fn points_that_do_not_fit_their_four_columns_are_refused_not_cut() {
    let players = [
        player("1", 'm', "99.5", &[("2", 'w', '1'), ("2", 'b', ' ')]),
        player("2", 'w', "9.5", &[("1", 'b', '0'), ("1", 'w', ' ')]),
    ];
    let mut trf = read(&file(&[], &players));
    let e = trf
        .set_results(&[(1, 2, ResultCode::Win), (2, 2, ResultCode::Loss)])
        .expect_err("100.5 does not fit");
    assert_eq!(
        e.to_string(),
        "line 2, columns 81–84 (points): '100.5' does not fit (values are never truncated)"
    );
    // Nothing was applied.
    assert_eq!(trf.player(1).and_then(|p| p.round(2)?.result), None);
    // 9.5 + 1 is 10.5: four characters, it fits.
    trf.set_results(&[(1, 2, ResultCode::Loss), (2, 2, ResultCode::Win)])
        .expect("fits");
    assert_eq!(trf.player(2).and_then(|p| p.points), Some(105));
    // The value in memory follows the file.
    assert_eq!(
        trf.player(2).and_then(|p| p.round(2)?.result),
        Some(ResultCode::Win)
    );
}

#[test]
fn warnings_quote_the_line_with_its_letters_and_escape_control_characters() {
    let trf = read(&file(&["Café notes\u{7}"], &pair()));
    assert_eq!(
        trf.warnings,
        vec![TrfWarning::NotARecord {
            line: 2,
            text: "Café notes\u{7}".into()
        }]
    );
    assert_eq!(
        trf.warnings[0].to_string(),
        "line 2: not a TRF record, skipped (kept as it is): 'Café notes\\u{7}'"
    );
}

#[test]
fn a_forfeit_pairing_is_read_from_both_halves() {
    let players = [
        player("1", 'm', "1.0", &[("2", 'w', '+')]),
        player("2", 'w', "0.0", &[("2", 'b', '-')]),
    ];
    // Player 2 names itself: refused.
    let e = Trf::read(file(&[], &players).as_bytes()).expect_err("plays itself");
    assert!(matches!(e.kind, TrfErrorKind::PlaysItself), "{e}");
    let players = [
        player("1", 'm', "1.0", &[("2", 'w', '+')]),
        player("2", 'w', "0.0", &[("1", 'b', '-')]),
    ];
    let trf = read(&file(&[], &players));
    let plan = trf.round_plan(1, Order::Fide).expect("round 1");
    assert!(plan.boards[0].is_forfeit());
}

/// FIDE's own example file, and older programs, write a forfeit between two named players
/// with the colour `-`: read with a warning naming each line, the round kept as not played
/// on a board, and every other round of both players kept.
#[test]
fn a_paired_round_with_the_colour_dash_is_read_as_not_played_with_a_warning() {
    let one = player(
        "1",
        'm',
        "2.0",
        &[("2", '-', '+'), ("3", 'w', '1'), ("2", 'b', ' ')],
    );
    let two = player(
        "2",
        'w',
        "0.0",
        &[("1", '-', '-'), ("4", 'b', '0'), ("1", 'w', ' ')],
    );
    let three = player("3", 'm', "0.0", &[("4", 'w', '='), ("1", 'b', '0')]);
    let four = player("4", 'w', "1.5", &[("3", 'b', '='), ("2", 'w', '1')]);
    let trf = read(&file(&[], &[one, two, three, four]));
    assert_eq!(
        trf.warnings,
        vec![
            TrfWarning::PairedWithoutColour {
                line: 2,
                round: 1,
                opponent: 2
            },
            TrfWarning::PairedWithoutColour {
                line: 3,
                round: 1,
                opponent: 1
            },
        ]
    );
    assert_eq!(
        trf.warnings[0].to_string(),
        "line 2: round 1 is paired with player 2 with the colour '-' (as older programs write a forfeit): read as a game not played on a board, its result kept"
    );
    let p1 = trf.player(1).expect("player 1");
    assert_eq!(p1.rounds.len(), 3, "every other round kept");
    assert_eq!(p1.rounds[0].result, Some(ResultCode::ForfeitWin));
    assert_eq!(p1.rounds[0].colour, None);
    // Round 1: the game not played is on no board; both players are listed with their
    // codes, as byes are. Round 3 is paired as usual.
    let r1 = trf.round_plan(1, Order::Fide).expect("round 1");
    assert_eq!(r1.boards.len(), 1, "{r1:?}");
    let listed: Vec<_> = r1.byes.iter().map(|b| (b.player, b.code)).collect();
    assert_eq!(
        listed,
        vec![
            (1, Some(ResultCode::ForfeitWin)),
            (2, Some(ResultCode::ForfeitLoss))
        ]
    );
    let r3 = trf.round_plan(3, Order::Fide).expect("round 3");
    assert_eq!(r3.boards.len(), 1);
    // Written back byte for byte.
    assert_eq!(
        trf.write(),
        file(
            &[],
            &[
                player(
                    "1",
                    'm',
                    "2.0",
                    &[("2", '-', '+'), ("3", 'w', '1'), ("2", 'b', ' ')]
                ),
                player(
                    "2",
                    'w',
                    "0.0",
                    &[("1", '-', '-'), ("4", 'b', '0'), ("1", 'w', ' ')]
                ),
                player("3", 'm', "0.0", &[("4", 'w', '='), ("1", 'b', '0')]),
                player("4", 'w', "1.5", &[("3", 'b', '='), ("2", 'w', '1')]),
            ]
        )
        .into_bytes()
    );
}
