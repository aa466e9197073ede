//! What an accepted board command asks of its board: an input for the rules core, or one
//! of the few acts the board actor does itself (the clock turned round, a sealed move
//! into custody, an envelope opened from it). Pure: the wire's vocabulary stops here.

use crate::alert::AlertKind;
use crate::rules::Color;
use crate::rules::game::Input;

use super::command::{BoardAction, Command};
use super::refusal::Refusal;

/// A board command, as the board actor acts on it.
#[derive(Debug, Clone, PartialEq)]
pub enum BoardAct {
    /// For the rules (`Game::decide`).
    Rules(Input),
    /// 6.4: the clock was turned round; the placement changes, not the game.
    SwapSides { arbiter: String },
    /// I.1.1 (I.9.3 with `counter`): a sealed move; the board draws its nonce and keeps
    /// both in custody before the rules see the commitment.
    Seal {
        side: Option<Color>,
        text: String,
        counter: bool,
    },
    /// I.7: open the envelope from the board's custody.
    OpenEnvelope { arbiter: String },
    /// Control or observe the board's clock; refused while a game is unfinished.
    SetMode {
        mode: crate::mode::BoardMode,
        arbiter: String,
    },
}

/// The act of `command` on `board`. `replace_clock` onto another board is the hall's
/// (it moves the game), never a board's: refused here as internal.
pub fn board_act(command: Command<BoardAction>, board: &str) -> Result<BoardAct, Refusal> {
    let Command {
        arbiter,
        reason,
        action,
        ..
    } = command;
    let input = match action {
        BoardAction::SwapSides {} => return Ok(BoardAct::SwapSides { arbiter }),
        BoardAction::SetMode { mode } => return Ok(BoardAct::SetMode { mode, arbiter }),
        BoardAction::ReplaceClock { to: Some(_), .. } => {
            return Err(Refusal::Internal {
                reason: "replace_clock to another board is handled by the hall".into(),
            });
        }
        BoardAction::ReplaceClock {
            to: None,
            white_ms,
            black_ms,
        } => Input::ReplaceClock {
            device: board.to_string(),
            white: white_ms,
            black: black_ms,
            arbiter,
            reason,
        },
        BoardAction::Pause {} => Input::Pause { arbiter, reason },
        BoardAction::Resume {} => Input::Resume { arbiter },
        BoardAction::Present { side } => Input::Present { side, arbiter },
        BoardAction::SetTime { side, remaining_ms } => Input::SetTime {
            side,
            remaining: remaining_ms,
            arbiter,
            reason,
        },
        BoardAction::AddTime { side, delta_ms } => Input::AddTime {
            side,
            delta: delta_ms,
            arbiter,
            reason,
        },
        BoardAction::SetMoves {
            side,
            moves,
            period,
        } => Input::SetMoves {
            side,
            moves,
            period,
            arbiter,
            reason,
        },
        BoardAction::SetResult { result, side } => Input::SetResult {
            result: result.to_result(side).map_err(Refusal::BadResult)?,
            arbiter,
            reason,
        },
        BoardAction::ConfirmFlag {} => Input::ConfirmFlag { arbiter },
        BoardAction::SetPosition { fen } => Input::SetPosition {
            fen,
            arbiter,
            reason,
        },
        BoardAction::SetSessionEnd { end } => Input::SetSessionEnd {
            end: end.map(|e| e.0),
            arbiter,
        },
        BoardAction::SetAdjournmentRules { rules } => Input::SetAdjournmentRules { rules, arbiter },
        BoardAction::Adjourn { resumption, .. } => Input::Adjourn {
            arbiter,
            resumption: resumption.map(|r| r.to_core()),
        },
        BoardAction::ScheduleResumption { resumption, .. } => Input::ScheduleResumption {
            resumption: resumption.to_core(),
            arbiter,
        },
        BoardAction::Seal { side, mv } => {
            return Ok(BoardAct::Seal {
                side,
                text: mv.0,
                counter: false,
            });
        }
        BoardAction::CounterSeal { mv } => {
            return Ok(BoardAct::Seal {
                side: None,
                text: mv.0,
                counter: true,
            });
        }
        BoardAction::OpenEnvelope {} => return Ok(BoardAct::OpenEnvelope { arbiter }),
        BoardAction::CommitSeal {} => Input::CommitSeal {
            arbiter: Some(arbiter),
        },
        BoardAction::VerifyEnvelope {} => Input::VerifyEnvelope { arbiter },
        BoardAction::DrawOffer { side } => Input::DrawOffer { side, arbiter },
        BoardAction::DrawReply { accept } => Input::DrawReply { accept, arbiter },
        BoardAction::EnvelopeLost {} => Input::EnvelopeLost { arbiter, reason },
        BoardAction::CorrectTime { side, remaining_ms } => Input::CorrectTime {
            side,
            remaining: remaining_ms,
            arbiter,
            reason,
        },
        BoardAction::AcknowledgeAlert { alert } => {
            if alert != AlertKind::ClockDiscrepancy {
                return Err(Refusal::BadValue(format!(
                    "only a clock_discrepancy alert is acknowledged; a {} alert clears when its cause does",
                    serde_json::to_value(alert)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                )));
            }
            Input::AcknowledgeDiscrepancy { arbiter }
        }
    };
    Ok(BoardAct::Rules(input))
}

/// A hall command's part for one board, as an arbiter's command to it (the hall's
/// transaction and reason).
pub fn for_board<A>(hall: &Command<A>, action: BoardAction) -> Command<BoardAction> {
    Command {
        transaction: hall.transaction.clone(),
        arbiter: hall.arbiter.clone(),
        reason: hall.reason.clone(),
        action,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::command::parse;
    use crate::rules::Millis;

    fn act(json: &str) -> Result<BoardAct, Refusal> {
        let c = parse::<BoardAction>(json.as_bytes()).expect("a valid command");
        board_act(c, "b1")
    }

    #[test]
    fn rule_6_10_a_time_correction_is_the_rules_input_with_its_arbiter_and_reason() {
        assert_eq!(
            act(
                r#"{"transaction":"t","arbiter":"IA","action":"add_time","side":"black","delta_ms":30000,"reason":"7.5.5"}"#
            ),
            Ok(BoardAct::Rules(Input::AddTime {
                side: Color::Black,
                delta: Millis(30_000),
                arbiter: "IA".into(),
                reason: "7.5.5".into(),
            }))
        );
        assert_eq!(
            act(r#"{"transaction":"t","arbiter":"IA","action":"replace_clock","white_ms":60000}"#),
            Ok(BoardAct::Rules(Input::ReplaceClock {
                device: "b1".into(),
                white: Some(Millis(60_000)),
                black: None,
                arbiter: "IA".into(),
                reason: String::new(),
            }))
        );
    }

    #[test]
    fn the_board_keeps_seals_swaps_and_openings_to_itself() {
        assert_eq!(
            act(r#"{"transaction":"t","arbiter":"IA","action":"swap_sides"}"#),
            Ok(BoardAct::SwapSides {
                arbiter: "IA".into()
            })
        );
        assert_eq!(
            act(r#"{"transaction":"t","arbiter":"IA","action":"seal","side":"white","mv":"Nf3"}"#),
            Ok(BoardAct::Seal {
                side: Some(Color::White),
                text: "Nf3".into(),
                counter: false
            })
        );
        assert_eq!(
            act(r#"{"transaction":"t","arbiter":"IA","action":"counter_seal","mv":"e5"}"#),
            Ok(BoardAct::Seal {
                side: None,
                text: "e5".into(),
                counter: true
            })
        );
        assert_eq!(
            act(r#"{"transaction":"t","arbiter":"IA","action":"open_envelope"}"#),
            Ok(BoardAct::OpenEnvelope {
                arbiter: "IA".into()
            })
        );
    }

    #[test]
    fn only_a_clock_discrepancy_is_acknowledged_and_a_resignation_needs_its_side() {
        assert_eq!(
            act(
                r#"{"transaction":"t","arbiter":"IA","action":"acknowledge_alert","alert":"clock_discrepancy"}"#
            ),
            Ok(BoardAct::Rules(Input::AcknowledgeDiscrepancy {
                arbiter: "IA".into()
            }))
        );
        let e = act(
            r#"{"transaction":"t","arbiter":"IA","action":"acknowledge_alert","alert":"offline"}"#,
        )
        .unwrap_err();
        assert_eq!(e.code(), "bad_value");
        assert!(e.to_string().contains("a offline alert"), "{e}");
        let e = act(
            r#"{"transaction":"t","arbiter":"IA","action":"set_result","result":"resignation"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("needs \"side\""), "{e}");
        let e = act(r#"{"transaction":"t","arbiter":"IA","action":"replace_clock","to":"b2"}"#)
            .unwrap_err();
        assert_eq!(e.code(), "internal");
    }
}
