//! A finished round's PGN archive (`<state_dir>/pgn/round-N.pgn`) is the round's record:
//! it is rewritten when a round's games change after the end (a result the arbiter
//! corrects), but never replaced by a text that has fewer moves in a game, lacks a game,
//! or gives a game another result without the arbiter's correction in it (issue 36: a
//! damaged journal replayed four mated games as forfeits and overwrote the archive). Such
//! a text is written beside it as `round-N.pgn.conflict-<k>` and the old one is kept.

use std::path::{Path, PathBuf};

/// What the PGN text of the archive says of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Archived {
    /// White and Black as tagged, and which of the games with those names it is.
    key: (String, String, usize),
    moves: usize,
    result: String,
    /// How often the text says the arbiter corrected the result (`pgn::build`'s note).
    corrections: usize,
}

/// The note the PGN writer puts in a game whose result the arbiter overruled.
const CORRECTED: &str = "The arbiter corrected the result.";

fn tag_value(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let (name, rest) = inner.split_once(' ')?;
    Some((name, rest.trim().strip_prefix('"')?.strip_suffix('"')?))
}

/// The moves of a movetext: every token but move numbers, results and comments.
fn count_moves(movetext: &str) -> usize {
    let mut depth = 0usize;
    let mut plain = String::with_capacity(movetext.len());
    for c in movetext.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split_whitespace()
        .filter(|t| {
            let number = t.trim_end_matches('.').chars().all(|c| c.is_ascii_digit());
            let result = matches!(*t, "1-0" | "0-1" | "1/2-1/2" | "*");
            !(number || result || t.starts_with('$'))
        })
        .count()
}

/// The games of a multi-game PGN text as the broadcast writes it.
fn games(text: &str) -> Vec<Archived> {
    struct Open {
        white: String,
        black: String,
        result: String,
        movetext: String,
    }
    let mut done: Vec<Open> = Vec::new();
    let mut current: Option<Open> = None;
    let mut in_moves = false;
    for line in text.lines() {
        if let Some((name, value)) = tag_value(line.trim()) {
            if in_moves || current.is_none() {
                done.extend(current.take());
                current = Some(Open {
                    white: String::new(),
                    black: String::new(),
                    result: "*".into(),
                    movetext: String::new(),
                });
                in_moves = false;
            }
            if let Some(g) = &mut current {
                match name {
                    "White" => g.white = value.to_string(),
                    "Black" => g.black = value.to_string(),
                    "Result" => g.result = value.to_string(),
                    _ => {}
                }
            }
        } else if let Some(g) = &mut current
            && !line.trim().is_empty()
        {
            in_moves = true;
            g.movetext.push_str(line);
            g.movetext.push('\n');
        }
    }
    done.extend(current);
    let mut seen: std::collections::BTreeMap<(String, String), usize> = Default::default();
    done.into_iter()
        .map(|g| {
            let n = seen.entry((g.white.clone(), g.black.clone())).or_insert(0);
            *n += 1;
            Archived {
                key: (g.white, g.black, *n),
                moves: count_moves(&g.movetext),
                result: g.result,
                corrections: g.movetext.matches(CORRECTED).count(),
            }
        })
        .collect()
}

/// Why `new` must not replace the archive `old`, in words; `None` when it may.
pub fn conflict(old: &str, new: &str) -> Option<String> {
    let new_games = games(new);
    let mut why = Vec::new();
    for o in games(old) {
        let (white, black, _) = &o.key;
        let name = format!("{white} - {black}");
        let Some(n) = new_games.iter().find(|n| n.key == o.key) else {
            why.push(format!("lacks {name}"));
            continue;
        };
        if n.moves < o.moves {
            why.push(format!(
                "has {} move(s) of {name} where the archive has {}",
                n.moves, o.moves
            ));
        }
        let corrected = n.corrections > o.corrections;
        if n.result != o.result && o.result != "*" && !corrected {
            why.push(format!(
                "gives {name} {} where the archive has {} (no correction by the arbiter)",
                n.result, o.result
            ));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// What [`write`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// The archive is the new text (or already was).
    Archived,
    /// The archive was kept; the new text is at this path, for the reason given.
    Beside(PathBuf, String),
}

/// Write a round's archive at `path`, unless that would lose what the archive there has:
/// then the new text goes beside it (`…conflict-<k>`, the first free `k`, or the one that
/// already holds the same text) and the archive stays.
pub fn write(path: &Path, body: &str) -> std::io::Result<Written> {
    let old = match std::fs::read_to_string(path) {
        Ok(old) => old,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if old == body {
        return Ok(Written::Archived);
    }
    let Some(why) = conflict(&old, body) else {
        super::write_atomically(path, body.as_bytes())?;
        return Ok(Written::Archived);
    };
    let mut k = 1u32;
    let beside = loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".conflict-{k}"));
        let candidate = PathBuf::from(name);
        match std::fs::read_to_string(&candidate) {
            // The same text set aside before (the round is archived again at every change).
            Ok(same) if same == body => return Ok(Written::Beside(candidate, why)),
            Ok(_) => k += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break candidate,
            Err(e) => return Err(e),
        }
    };
    super::write_atomically(&beside, body.as_bytes())?;
    Ok(Written::Beside(beside, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(white: &str, moves: &str, result: &str) -> String {
        format!(
            "[Event \"Open\"]\n[Round \"1\"]\n[White \"{white}\"]\n[Black \"B {white}\"]\n[Result \"{result}\"]\n\n{moves} {result}\n"
        )
    }

    const MATE: &str = "1. f3 {[%clk 1:30:00] [%emt 0:00:01]} 1... e5 {[%clk 1:30:00]}\n2. g4 {[%clk 1:30:00]} 2... Qh4# {[%clk 1:30:00]}";

    fn round(games: &[String]) -> String {
        games.join("\n")
    }

    #[test]
    fn moves_and_results_are_read_from_the_text() {
        let g = games(&round(&[game("A", MATE, "0-1"), game("C", "", "1-0")]));
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].moves, g[0].result.as_str()), (4, "0-1"));
        assert_eq!((g[1].moves, g[1].result.as_str()), (0, "1-0"));
    }

    /// Issue 36: the mates replaced by forfeits from move 0.
    #[test]
    fn fewer_moves_or_another_result_is_a_conflict() {
        let old = round(&[game("A", MATE, "0-1")]);
        let forfeit = round(&[game("A", "", "1-0")]);
        let why = conflict(&old, &forfeit).expect("a conflict");
        assert!(
            why.contains("has 0 move(s) of A - B A where the archive has 4"),
            "{why}"
        );
        assert!(
            why.contains("gives A - B A 1-0 where the archive has 0-1"),
            "{why}"
        );
        assert!(conflict(&old, "").expect("lacks").contains("lacks A - B A"));
    }

    #[test]
    fn more_moves_a_first_result_or_an_arbiters_correction_may_replace_it() {
        let adjourned = round(&[game("A", "1. f3 {[%clk 1:30:00]}", "*")]);
        let done = round(&[game("A", MATE, "0-1")]);
        assert_eq!(conflict(&adjourned, &done), None);
        let corrected = round(&[game("A", &format!("{MATE} {{{CORRECTED}}}"), "1/2-1/2")]);
        assert_eq!(conflict(&done, &corrected), None);
    }

    #[test]
    fn the_archive_is_kept_and_the_new_text_written_beside_it() {
        let dir = std::env::temp_dir().join(format!("hallclock-{}-archive", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("round-1.pgn");
        let old = round(&[game("A", MATE, "0-1")]);
        assert_eq!(write(&path, &old).ok(), Some(Written::Archived));
        let forfeit = round(&[game("A", "", "1-0")]);
        let beside = dir.join("round-1.pgn.conflict-1");
        match write(&path, &forfeit) {
            Ok(Written::Beside(p, _)) => assert_eq!(p, beside),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&path).ok(), Some(old.clone()));
        assert_eq!(std::fs::read_to_string(&beside).ok(), Some(forfeit.clone()));
        // The same text again: no second copy; another one: the next number.
        assert!(matches!(write(&path, &forfeit), Ok(Written::Beside(p, _)) if p == beside));
        let other = round(&[game("A", "1. f3 {x}", "1-0")]);
        assert!(
            matches!(write(&path, &other), Ok(Written::Beside(p, _)) if p == dir.join("round-1.pgn.conflict-2"))
        );
        // A text with more moves replaces it.
        let longer = round(&[game("A", &format!("{MATE} 3. a3"), "0-1")]);
        assert_eq!(write(&path, &longer).ok(), Some(Written::Archived));
        assert_eq!(std::fs::read_to_string(&path).ok(), Some(longer));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
