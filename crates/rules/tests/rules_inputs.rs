//! What the shell reads of the core besides the events: `Input::name` (a script's
//! rejection names the input it refused, `hallclock rules run`) and
//! `Game::last_event_at` (the board actor places a press reconstructed from a clock's
//! reading no earlier than it).

use hallclock_rules::game::{Game, Input, Setup};
use hallclock_rules::time_control::parse;
use hallclock_rules::{Color, Millis};

#[test]
fn input_names_are_the_tags_scripts_write() {
    let arbiter = || "Arbiter".to_string();
    let inputs = [
        Input::Present {
            side: Color::White,
            arbiter: arbiter(),
        },
        Input::Move { mv: "e2e4".into() },
        Input::Press {
            side: None,
            mv: None,
        },
        Input::PlayerPause { side: None },
        Input::Pause {
            arbiter: arbiter(),
            reason: "a dispute".into(),
        },
        Input::Resume { arbiter: arbiter() },
        Input::AddTime {
            side: Color::Black,
            delta: Millis(120_000),
            arbiter: arbiter(),
            reason: "6.13".into(),
        },
        Input::ConfirmFlag { arbiter: arbiter() },
        Input::ClockReading {
            white: Millis(1_000),
            black: Millis(2_000),
        },
    ];
    for input in inputs {
        let json = serde_json::to_value(&input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(json["input"], input.name(), "{json}");
    }
}

#[test]
fn last_event_at_is_the_instant_of_the_latest_event() {
    let t0 = Millis(1_700_000_000_000);
    let mut game = Game::new(Setup::new("White", "Black", parse("300").unwrap(), t0)).unwrap();
    fn apply(game: &mut Game, input: Input, now: Millis) {
        for e in game.poll(now) {
            game.evolve(&e);
        }
        let events = game.decide(&input, now).unwrap_or_else(|r| panic!("{r}"));
        for e in &events {
            game.evolve(e);
        }
    }
    for side in [Color::White, Color::Black] {
        let present = Input::Present {
            side,
            arbiter: "IA".into(),
        };
        apply(&mut game, present, t0 - Millis(10));
    }
    assert_eq!(game.last_event_at(), t0 - Millis(10));
    let press = Input::Press {
        side: None,
        mv: None,
    };
    apply(&mut game, press, t0 + Millis(7_000));
    assert_eq!(game.last_event_at(), t0 + Millis(7_000));
}
