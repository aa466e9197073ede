//! Running a checked script through the pure rules core, as the daemon would (time-driven
//! events polled up to each line's instant), keeping the sealed moves a shell keeps.

use super::output::Output;
use super::{Script, ScriptError, Step, err, script_nonce};
use serde_json::Value;

use crate::rules::Color;
use crate::rules::Millis;
use crate::rules::game::{Event, Game, Input, Rejection, Setup, describe_result};

/// What a shell keeps of each sealed move: the text and nonce behind a commitment.
/// (The daemon keeps them encrypted at rest; a script keeps them in memory.)
#[derive(Default)]
struct Secrets(Vec<(String, String, String)>);

impl Secrets {
    fn keep(&mut self, input: &Input, events: &[Event], line: usize) {
        let (mv, nonce) = match input {
            Input::Seal { mv, nonce, .. } | Input::CounterSeal { mv, nonce } => {
                (mv.clone(), nonce.clone())
            }
            // Sealed from the board (see `seal_board_move`).
            Input::Move { mv } | Input::Press { mv: Some(mv), .. } => {
                (mv.clone(), script_nonce(line))
            }
            _ => return,
        };
        for e in events {
            let commitment = match e {
                Event::Sealed { commitment, .. } => commitment,
                Event::CounterSealed { envelope, .. } => &envelope.commitment,
                _ => continue,
            };
            self.0.push((commitment.clone(), mv.clone(), nonce.clone()));
        }
    }

    /// `open_envelope` without a move and nonce: give back the ones kept for the
    /// envelope waiting to be opened.
    fn fill(&self, game: &Game, input: &Input, now: Millis) -> Input {
        if let Input::OpenEnvelope { mv, nonce, arbiter } = input
            && mv.is_empty()
            && nonce.is_empty()
            && let Some(adj) = game.view(now).adjournment
            && let Some(envelope) = adj.envelopes.last()
            && let Some((_, mv, nonce)) = self.0.iter().find(|(c, ..)| *c == envelope.commitment)
        {
            return Input::OpenEnvelope {
                mv: mv.clone(),
                nonce: nonce.clone(),
                arbiter: arbiter.clone(),
            };
        }
        input.clone()
    }
}

/// I.1.1: seal a move made on the board after the order; a press with it also stops the
/// clock, which commits it.
fn seal_board_move(
    game: &Game,
    input: &Input,
    side: Color,
    mv: String,
    line: usize,
    now: Millis,
) -> Result<Vec<Event>, Rejection> {
    let seal = Input::Seal {
        side: Some(side),
        mv,
        nonce: script_nonce(line),
        on_board: true,
    };
    let mut events = game.decide(&seal, now)?;
    if matches!(input, Input::Press { .. }) {
        let mut draft = game.clone();
        for e in &events {
            draft.evolve(e);
        }
        events.extend(draft.decide(&Input::CommitSeal { arbiter: None }, now)?);
    }
    Ok(events)
}

/// Drive a checked script through the core, as the daemon would: time-driven events are
/// polled up to each line's instant before its input is decided.
pub fn run(script: &Script) -> Result<Vec<Output>, ScriptError> {
    let mut out = Vec::new();
    let first = script.steps.first().map(|s| s.at);
    let mut runner = Runner::new(&script.setup, first)?;
    for step in &script.steps {
        runner.step(step, &mut |o| out.push(o));
    }
    runner.finish(&mut |o| out.push(o));
    Ok(out)
}

/// A script being run step by step: each output is handed on as it is produced, so a
/// long script needs no more memory than a short one.
pub struct Runner {
    game: Game,
    secrets: Secrets,
    now: Millis,
    last_line: usize,
}

impl Runner {
    /// `first`: the instant of the first step, if any (a script without steps still
    /// shows what its start time did).
    pub fn new(setup: &Setup, first: Option<Millis>) -> Result<Runner, ScriptError> {
        let game = Game::new(setup.clone()).map_err(|e| err(1, format!("setup: {e}")))?;
        Ok(Runner {
            game,
            secrets: Secrets::default(),
            now: first.unwrap_or(setup.start),
            last_line: 1,
        })
    }

    pub fn step(&mut self, step: &Step, out: &mut dyn FnMut(Output)) {
        let game = &mut self.game;
        self.now = step.at;
        self.last_line = step.line;
        let now = self.now;
        for event in game.poll(now) {
            game.evolve(&event);
            out(Output::Event {
                line: step.line,
                event,
            });
        }
        let Some(input) = &step.input else { return };
        let input = self.secrets.fill(game, input, now);
        let decided = match game.decide(&input, now) {
            // I.1.1: a move made on the board after the order to seal is the sealed move.
            // The daemon seals it with a random nonce; the script with its stand-in.
            Err(Rejection::MoveIsTheSealedMove { side, mv }) => {
                seal_board_move(game, &input, side, mv, step.line, now)
            }
            other => other,
        };
        match decided {
            Ok(events) => {
                self.secrets.keep(&input, &events, step.line);
                for event in events {
                    game.evolve(&event);
                    out(Output::Event {
                        line: step.line,
                        event,
                    });
                }
            }
            Err(rejection) => out(Output::Rejected {
                line: step.line,
                at: now,
                input: input.name(),
                reason: rejection.to_string(),
                kind: serde_json::to_value(&rejection).unwrap_or(Value::Null),
            }),
        }
    }

    /// What time did after the last step, and the final state.
    pub fn finish(mut self, out: &mut dyn FnMut(Output)) {
        let now = self.now;
        for event in self.game.poll(now) {
            self.game.evolve(&event);
            out(Output::Event {
                line: self.last_line,
                event,
            });
        }
        let view = serde_json::to_value(self.game.view(now)).unwrap_or(Value::Null);
        let summary = match self.game.result() {
            Some(r) => describe_result(r),
            None => "no result".to_string(),
        };
        out(Output::Final { view, summary });
    }
}
