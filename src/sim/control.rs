//! The simulator's script control channel: one command per line, e.g. `press 3`,
//! `move 3 e2e4`, `button 3 ok`, `unplug 3`, `garbage 3 50`, `stall 3 5s`, `drop-acks 3 on`.

use std::time::Duration;

use super::clock::{Button, Run};
use super::square::{Piece, SimMove, Square};

/// One control command for board `board` (1-based, as in `board-001`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    Press {
        board: usize,
    },
    Move {
        board: usize,
        mv: SimMove,
    },
    Lift {
        board: usize,
        square: Square,
    },
    Place {
        board: usize,
        square: Square,
        piece: Piece,
    },
    Button {
        board: usize,
        button: Button,
    },
    Unplug {
        board: usize,
    },
    Replug {
        board: usize,
    },
    Garbage {
        board: usize,
        count: usize,
    },
    Stall {
        board: usize,
        duration: Duration,
    },
    DropAcks {
        board: usize,
        on: bool,
    },
    OutOfOrder {
        board: usize,
        on: bool,
    },
    /// The clock's batteries run low (`low`) or are changed.
    Battery {
        board: usize,
        low: bool,
    },
    Show {
        board: usize,
    },
    /// The arbiter sets the clock with its buttons (a hand-set clock): the times, the
    /// increment the clock will add per move, and which side runs.
    SetClock {
        board: usize,
        left: Duration,
        right: Duration,
        increment: Duration,
        run: Run,
    },
    Help,
    /// Stop the simulator (its ports hang up, the symlinks are removed).
    Quit,
}

impl Control {
    pub fn board(&self) -> Option<usize> {
        match *self {
            Control::Press { board }
            | Control::Move { board, .. }
            | Control::Lift { board, .. }
            | Control::Place { board, .. }
            | Control::Button { board, .. }
            | Control::Unplug { board }
            | Control::Replug { board }
            | Control::Garbage { board, .. }
            | Control::Stall { board, .. }
            | Control::DropAcks { board, .. }
            | Control::OutOfOrder { board, .. }
            | Control::Battery { board, .. }
            | Control::SetClock { board, .. }
            | Control::Show { board } => Some(board),
            Control::Help | Control::Quit => None,
        }
    }
}

pub const HELP: &str = "\
commands (N = board number, 1-based):
  press N              the player whose lever is up presses it
  move N UCI           play a move on the board, e.g. move 3 e2e4, move 3 e7e8q
  lift N SQ            lift the piece on SQ, e.g. lift 3 e4
  place N SQ P         put piece P (FEN letter, lowercase = black) on SQ
  button N B           press a clock button: back, plus, run, minus, ok
  unplug N             unplug the board (the port hangs up, the symlink disappears)
  replug N             plug it back in (new pseudo-terminal, same symlink)
  garbage N COUNT      send COUNT bytes of line noise
  stall N DURATION     freeze the board for DURATION (e.g. 500ms, 5s)
  drop-acks N on|off   stop/start answering clock commands
  out-of-order N on|off  report a move's new square before the old one
  battery N low|ok     the clock's batteries run low / are changed (status bit D2)
  show N               print what the clock displays
  setclock N L R [+INC] [left|right|paused]
                       set the clock by hand, as the arbiter does with its buttons:
                       left and right times (1:30:00, 5:00, 90s), the increment it adds
                       per move, which side runs (default paused); it then runs by
                       itself and switches at the lever (e.g. setclock 2 5:00 5:00 +3 left)
  help                 this text
  quit                 stop the simulator";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad control line `{line}`: {reason}")]
pub struct ControlError {
    pub line: String,
    pub reason: String,
}

/// Parses one control line. Blank lines and `#` comments give `Ok(None)`.
pub fn parse_line(line: &str) -> Result<Option<Control>, ControlError> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(None);
    }
    let bad = |reason: String| ControlError {
        line: trimmed.to_string(),
        reason,
    };
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let verb = words[0].to_ascii_lowercase();
    let want = |n: usize, usage: &str| {
        if words.len() == n {
            Ok(())
        } else {
            Err(bad(format!("usage: {usage}")))
        }
    };
    let board = || -> Result<usize, ControlError> {
        let w = words.get(1).copied().unwrap_or("");
        match w.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(bad(format!("board number (1, 2, ...) expected, got `{w}`"))),
        }
    };
    let control = match verb.as_str() {
        "help" | "?" => Control::Help,
        "quit" | "exit" => Control::Quit,
        "press" => {
            want(2, "press N")?;
            Control::Press { board: board()? }
        }
        "unplug" => {
            want(2, "unplug N")?;
            Control::Unplug { board: board()? }
        }
        "replug" => {
            want(2, "replug N")?;
            Control::Replug { board: board()? }
        }
        "show" => {
            want(2, "show N")?;
            Control::Show { board: board()? }
        }
        "move" => {
            want(3, "move N UCI (e.g. move 3 e2e4)")?;
            let mv = SimMove::parse(words[2]).ok_or_else(|| {
                bad(format!(
                    "`{}` is not a UCI move like e2e4 or e7e8q",
                    words[2]
                ))
            })?;
            Control::Move {
                board: board()?,
                mv,
            }
        }
        "lift" => {
            want(3, "lift N SQUARE (e.g. lift 3 e4)")?;
            let square = Square::parse(&words[2].to_ascii_lowercase())
                .ok_or_else(|| bad(format!("`{}` is not a square like e4", words[2])))?;
            Control::Lift {
                board: board()?,
                square,
            }
        }
        "place" => {
            want(4, "place N SQUARE PIECE (e.g. place 3 e4 Q)")?;
            let square = Square::parse(&words[2].to_ascii_lowercase())
                .ok_or_else(|| bad(format!("`{}` is not a square like e4", words[2])))?;
            let mut chars = words[3].chars();
            let piece = match (chars.next().and_then(Piece::from_fen), chars.next()) {
                (Some(piece), None) => piece,
                _ => {
                    return Err(bad(format!(
                        "`{}` is not a piece letter (PNBRQK, lowercase for black)",
                        words[3]
                    )));
                }
            };
            Control::Place {
                board: board()?,
                square,
                piece,
            }
        }
        "button" => {
            want(3, "button N back|plus|run|minus|ok")?;
            let button = Button::parse(words[2]).ok_or_else(|| {
                bad(format!(
                    "unknown button `{}` (back, plus, run, minus, ok)",
                    words[2]
                ))
            })?;
            Control::Button {
                board: board()?,
                button,
            }
        }
        "garbage" => {
            want(3, "garbage N COUNT")?;
            let count = words[2]
                .parse::<usize>()
                .map_err(|_| bad(format!("byte count expected, got `{}`", words[2])))?;
            Control::Garbage {
                board: board()?,
                count,
            }
        }
        "stall" => {
            want(3, "stall N DURATION (e.g. 500ms, 5s)")?;
            let duration = parse_duration(words[2]).ok_or_else(|| {
                bad(format!(
                    "duration like 500ms or 5s expected, got `{}`",
                    words[2]
                ))
            })?;
            Control::Stall {
                board: board()?,
                duration,
            }
        }
        "drop-acks" | "out-of-order" => {
            want(3, &format!("{verb} N on|off"))?;
            let on = match words[2].to_ascii_lowercase().as_str() {
                "on" | "true" | "1" => true,
                "off" | "false" | "0" => false,
                other => return Err(bad(format!("on or off expected, got `{other}`"))),
            };
            let board = board()?;
            if verb == "drop-acks" {
                Control::DropAcks { board, on }
            } else {
                Control::OutOfOrder { board, on }
            }
        }
        "setclock" => {
            const USAGE: &str = "setclock N LEFT RIGHT [+INC] [left|right|paused]";
            if !(4..=6).contains(&words.len()) {
                return Err(bad(format!("usage: {USAGE}")));
            }
            // A bare number is seconds here, as on the clock's own display.
            let time = |w: &str| {
                w.parse::<u64>()
                    .ok()
                    .map(|secs| crate::rules::Millis::from_secs(secs as i64))
                    .or_else(|| crate::rules::millis::parse_duration(w).ok())
                    .filter(|m| m.0 >= 0)
                    .map(|m| Duration::from_millis(m.0.unsigned_abs()))
                    .ok_or_else(|| bad(format!("`{w}` is not a time like 1:30:00, 5:00 or 90s")))
            };
            let (left, right) = (time(words[2])?, time(words[3])?);
            let mut increment = Duration::ZERO;
            let mut run = Run::Paused;
            for w in &words[4..] {
                match (w.strip_prefix('+'), w.to_ascii_lowercase().as_str()) {
                    (Some(inc), _) => increment = time(inc)?,
                    (None, "left") => run = Run::Left,
                    (None, "right") => run = Run::Right,
                    (None, "paused") => run = Run::Paused,
                    _ => return Err(bad(format!("usage: {USAGE}"))),
                }
            }
            Control::SetClock {
                board: board()?,
                left,
                right,
                increment,
                run,
            }
        }
        "battery" => {
            want(3, "battery N low|ok")?;
            let low = match words[2].to_ascii_lowercase().as_str() {
                "low" => true,
                "ok" => false,
                other => return Err(bad(format!("low or ok expected, got `{other}`"))),
            };
            Control::Battery {
                board: board()?,
                low,
            }
        }
        other => return Err(bad(format!("unknown command `{other}` (try `help`)"))),
    };
    Ok(Some(control))
}

/// `500ms`, `5s`, `1.5s`, `2m`, `0:05`: the house notation (`rules::millis`), never
/// negative; upper case still read, as this parser always did.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let ms = crate::rules::millis::parse_duration(&s.trim().to_ascii_lowercase()).ok()?;
    u64::try_from(ms.as_i64()).ok().map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_the_house_notation_and_never_negative() {
        let ms = Duration::from_millis;
        assert_eq!(parse_duration("500ms"), Some(ms(500)));
        assert_eq!(parse_duration("1.5s"), Some(ms(1500)));
        assert_eq!(parse_duration("2M"), Some(ms(120_000)));
        assert_eq!(parse_duration(" 0:05 "), Some(ms(5000)));
        for bad in ["", "500", "-1s", "1.5ms", "five s"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn good_lines_parse() {
        assert_eq!(parse_line("press 3"), Ok(Some(Control::Press { board: 3 })));
        assert_eq!(
            parse_line("move 3 e2e4"),
            Ok(Some(Control::Move {
                board: 3,
                mv: SimMove::parse("e2e4").unwrap()
            }))
        );
        assert_eq!(
            parse_line("stall 2 500ms"),
            Ok(Some(Control::Stall {
                board: 2,
                duration: Duration::from_millis(500)
            }))
        );
        assert_eq!(
            parse_line("drop-acks 1 on"),
            Ok(Some(Control::DropAcks { board: 1, on: true }))
        );
        assert_eq!(
            parse_line("battery 2 low"),
            Ok(Some(Control::Battery {
                board: 2,
                low: true
            }))
        );
        assert_eq!(
            parse_line("battery 2 OK"),
            Ok(Some(Control::Battery {
                board: 2,
                low: false
            }))
        );
        assert_eq!(
            parse_line("setclock 2 5:00 4:30 +3 left"),
            Ok(Some(Control::SetClock {
                board: 2,
                left: Duration::from_secs(300),
                right: Duration::from_secs(270),
                increment: Duration::from_secs(3),
                run: Run::Left,
            }))
        );
        assert_eq!(
            parse_line("setclock 2 1:30:00 1:30:00"),
            Ok(Some(Control::SetClock {
                board: 2,
                left: Duration::from_secs(5400),
                right: Duration::from_secs(5400),
                increment: Duration::ZERO,
                run: Run::Paused,
            }))
        );
        assert!(parse_line("setclock 2 5:00").is_err());
        assert!(parse_line("setclock 2 5:00 5:00 sideways").is_err());
        assert_eq!(parse_line("  # comment"), Ok(None));
    }

    #[test]
    fn bad_lines_name_the_line_and_the_reason() {
        let e = parse_line("press x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad control line `press x`: board number (1, 2, ...) expected, got `x`"
        );
        let e = parse_line("move 1 e9e4").unwrap_err();
        assert!(e.to_string().contains("`move 1 e9e4`"), "{e}");
        let e = parse_line("jump 1").unwrap_err();
        assert!(e.to_string().contains("unknown command `jump`"), "{e}");
        assert!(parse_line("garbage 1").is_err());
        assert!(parse_line("stall 1 5x").is_err());
        let e = parse_line("battery 1 empty").unwrap_err();
        assert!(e.to_string().contains("low or ok expected"), "{e}");
    }
}
