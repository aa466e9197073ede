//! `hallclock rules run` and `hallclock rules can-mate`.

use std::io::{Read, Write};
use std::process::ExitCode;

use crate::script;

#[derive(Debug, clap::Subcommand)]
pub enum RulesCmd {
    /// Drive a JSON-lines script of timed inputs through the rules core and print every
    /// event, rejection and the final state (docs/RULES-SCRIPT.md).
    Run {
        /// Script file, or `-` for standard input.
        script: String,
        /// Output readable text lines instead of JSON lines.
        #[arg(long)]
        text: bool,
    },
    /// The 6.9 verdict: can SIDE still checkmate in this position by any series of legal moves?
    CanMate(super::can_mate::CanMateArgs),
}

pub fn run(cmd: RulesCmd) -> ExitCode {
    match cmd {
        RulesCmd::Run { script, text } => run_script(&script, text),
        RulesCmd::CanMate(args) => super::can_mate::run(args),
    }
}

fn run_script(path: &str, text: bool) -> ExitCode {
    let (name, source) = if path == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            eprintln!("hallclock rules run: cannot read standard input: {e}");
            return ExitCode::from(2);
        }
        ("<stdin>".to_string(), s)
    } else {
        match std::fs::read_to_string(path) {
            Ok(s) => (path.to_string(), s),
            Err(e) => {
                eprintln!("hallclock rules run: cannot read {path}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let parsed = script::parse(&source).and_then(|s| script::run(&s).map(|out| (s, out)));
    let (script, outputs) = match parsed {
        Ok(ok) => ok,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout().lock();
    for o in &outputs {
        let line = if text {
            o.to_text(script.date)
        } else {
            o.to_json(script.date).to_string()
        };
        if writeln!(stdout, "{line}").is_err() {
            // A closed pipe (e.g. `| head`) is not an error worth a message.
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}
