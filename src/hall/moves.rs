//! Games that change boards: 6.10's move onto another board with the arbiter's times, and
//! the games that follow their DGT boards when the cables were swapped (the clock and the
//! e-board position are on the board, not on the port).

use super::Hall;
use super::board::{Refusal, ToBoard};
use crate::intake::command::{BoardAction, Command};
use crate::rules::Millis;
use crate::rules::game::Input;

impl Hall {
    /// 6.10: the game continues on another board with the arbiter's times.
    pub(super) async fn move_game(
        &mut self,
        from: &str,
        to: &str,
        white: Option<Millis>,
        black: Option<Millis>,
        command: &Command<BoardAction>,
    ) -> Result<(), Refusal> {
        let target = match self.boards.get(to) {
            Some(e) => e.inbox.clone(),
            None => {
                return Err(match self.nodes.owner_of(to) {
                    Some((node, _)) => Refusal::TargetOnAnotherNode {
                        board: to.into(),
                        node: node.into(),
                    },
                    None => Refusal::UnknownTarget { board: to.into() },
                });
            }
        };
        let source = self
            .boards
            .get(from)
            .map(|e| e.inbox.clone())
            .ok_or_else(|| Refusal::NotABoard { board: from.into() })?;
        if from == to {
            return Err(Refusal::SameBoard);
        }
        if let Some(round) = Self::ask(&target, |reply| ToBoard::Busy { reply })
            .await
            .flatten()
        {
            return Err(Refusal::TargetBusy {
                board: to.into(),
                round,
            });
        }
        let input = Input::ReplaceClock {
            device: to.to_string(),
            white,
            black,
            arbiter: command.arbiter.clone(),
            reason: command.reason.clone(),
        };
        // The rules check the command before anything moves: a refused move changes nothing.
        let check = input.clone();
        Self::ask(&source, |reply| ToBoard::Check {
            input: check,
            reply,
        })
        .await
        .unwrap_or(Err(Refusal::BoardStopped))?;
        let slot = Self::ask(&source, |reply| ToBoard::TakeGame { reply })
            .await
            .unwrap_or(Err(Refusal::BoardStopped))?;
        let r = Self::ask(&target, |reply| ToBoard::AdoptGame {
            slot: Box::new(slot),
            from: from.to_string(),
            input: Some(input),
            reply,
        })
        .await
        .unwrap_or(Err(Refusal::BoardStopped));
        if r.is_ok()
            && let Some(round) = &mut self.round
        {
            for b in &mut round.boards {
                if b == from {
                    *b = to.to_string();
                }
            }
            self.publish_info();
        }
        r
    }

    /// A DGT board known by its serial number answered on `board`'s port. If it used to be
    /// on another port, the cables were swapped: the games follow the boards (the clock and
    /// the e-board position are on the board, not on the port).
    pub(super) async fn on_identity(&mut self, board: String, serial: String) {
        self.check_identity(&board, serial).await;
        let Some(e) = self.boards.get(&board) else {
            return;
        };
        // A test hook (tests/outage.rs): the board hears that its identity is checked
        // later, so that a command or a press reaches it in between, as they may under
        // load: `game` holds it until the board has a game, a number of ms for so long.
        // Said loudly: a hall never sets it.
        if let Ok(hold) = std::env::var("HALLCLOCK_TEST_IDENTITY_HOLD") {
            tracing::warn!(board = %board, %hold, "HALLCLOCK_TEST_IDENTITY_HOLD: the identity check is held back (a test hook)");
            let inbox = e.inbox.clone();
            tokio::spawn(async move {
                if let Ok(ms) = hold.parse::<u64>() {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                } else {
                    while Self::ask(&inbox, |reply| ToBoard::Busy { reply })
                        .await
                        .is_some_and(|busy| busy.is_none())
                    {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
                let _ = inbox.send(ToBoard::IdentityChecked).await;
            });
            return;
        }
        let _ = e.inbox.send(ToBoard::IdentityChecked).await;
    }

    async fn check_identity(&mut self, board: &str, serial: String) {
        let board = board.to_string();
        let before = self.seen_on.get(&serial).cloned();
        let Some(other) = before.filter(|b| *b != board && self.boards.contains_key(b)) else {
            self.seen_on.insert(serial, board);
            return;
        };
        // The board that was on this port, if any, now answers on the other port.
        let displaced = self
            .seen_on
            .iter()
            .find(|(s, b)| **b == board && **s != serial)
            .map(|(s, _)| s.clone());
        let (Some(here), Some(there)) = (
            self.boards.get(&board).map(|e| e.inbox.clone()),
            self.boards.get(&other).map(|e| e.inbox.clone()),
        ) else {
            return;
        };
        let game_there = Self::ask(&there, |reply| ToBoard::TakeGame { reply })
            .await
            .and_then(Result::ok);
        let game_here = Self::ask(&here, |reply| ToBoard::TakeGame { reply })
            .await
            .and_then(Result::ok);
        let mut moved = Vec::new();
        if let Some(slot) = game_there {
            let r = Self::ask(&here, |reply| ToBoard::AdoptGame {
                slot: Box::new(slot),
                from: other.clone(),
                input: None,
                reply,
            })
            .await;
            if matches!(r, Some(Ok(()))) {
                moved.push((other.clone(), board.clone()));
            }
        }
        if let Some(slot) = game_here {
            let r = Self::ask(&there, |reply| ToBoard::AdoptGame {
                slot: Box::new(slot),
                from: board.clone(),
                input: None,
                reply,
            })
            .await;
            if matches!(r, Some(Ok(()))) {
                moved.push((board.clone(), other.clone()));
            }
        }
        self.seen_on.insert(serial.clone(), board.clone());
        if let Some(d) = displaced {
            self.seen_on.insert(d, other.clone());
        }
        if let Some(round) = &mut self.round {
            for b in &mut round.boards {
                if *b == board {
                    *b = other.clone();
                } else if *b == other {
                    *b = board.clone();
                }
            }
        }
        let said = moved_said(&serial, &board, &other, &moved);
        tracing::warn!("{}", said.message);
        let alert = crate::mqtt::payload::AlertPayload::said(
            format!("{board}-board-moved"),
            Some(board.clone()),
            crate::mqtt::payload::AlertKind::BoardMoved,
            crate::mqtt::payload::Severity::Warning,
            said,
            self.timebase.now(),
        );
        self.publisher
            .json_retained(self.topics.alert(&alert.id), &alert);
        self.publish_info();
    }
}

/// The `board_moved` alert as data: the DGT board `serial` was on `other`'s port and now
/// answers on `board`'s; `moved` are the games that followed it (from, to).
fn moved_said(
    serial: &str,
    board: &str,
    other: &str,
    moved: &[(String, String)],
) -> crate::alert::Said {
    use serde_json::json;
    let what = if moved.is_empty() {
        "no game had to move".to_string()
    } else {
        moved
            .iter()
            .map(|(from, to)| format!("the game of {from} followed its board to {to}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let message = format!(
        "DGT board {serial} (was on {other}'s port) now answers on {board}'s port: {what}; check the cables"
    );
    let base = json!({ "serial": serial, "board": board, "other": other });
    match moved {
        [] => crate::alert::Said::new("board_moved.no_game", base, message),
        [(from, to)] => {
            let mut params = base;
            params["game_from"] = json!(from);
            params["game_to"] = json!(to);
            crate::alert::Said::new("board_moved.one_game", params, message)
        }
        _ => crate::alert::Said::new("board_moved.games_swapped", base, message),
    }
}

#[cfg(test)]
mod tests {
    use super::moved_said;

    #[test]
    fn a_board_on_another_port_is_said_as_data_with_the_games_that_followed_it() {
        let none = moved_said("10001", "board-002", "board-001", &[]);
        assert_eq!(none.code, "board_moved.no_game");
        assert!(none.listed(), "{none:?}");
        let one = moved_said(
            "10001",
            "board-002",
            "board-001",
            &[("board-001".into(), "board-002".into())],
        );
        assert_eq!(one.code, "board_moved.one_game");
        assert!(one.listed(), "{one:?}");
        assert_eq!(
            one.message,
            "DGT board 10001 (was on board-001's port) now answers on board-002's port: the game of board-001 followed its board to board-002; check the cables"
        );
        let both = moved_said(
            "10001",
            "board-002",
            "board-001",
            &[
                ("board-001".into(), "board-002".into()),
                ("board-002".into(), "board-001".into()),
            ],
        );
        assert_eq!(both.code, "board_moved.games_swapped");
        assert!(
            both.message
                .contains("; the game of board-002 followed its board to board-001; check")
        );
    }
}
