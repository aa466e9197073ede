//! `Input::name` is the input's name where a script's rejection says which input was
//! refused (`hallclock rules run`): it must be the `input` tag the script wrote.

use hallclock_rules::game::Input;
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
