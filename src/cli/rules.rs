//! `hallclock rules run` and `hallclock rules can-mate`.

use std::io::{BufRead, Read, Write};
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

/// Where the script comes from. A file is read twice, line by line (checked whole, then
/// run), so memory stays bounded however long it is; standard input is held in memory.
enum Source {
    File(std::path::PathBuf),
    Stdin(Vec<u8>),
}

impl Source {
    /// Feed every line to `each`, stopping at its first error.
    fn for_each_line<E>(
        &self,
        mut each: impl FnMut(usize, &[u8]) -> Result<(), E>,
    ) -> Result<Result<(), E>, std::io::Error> {
        match self {
            Source::Stdin(bytes) => Ok(script::lines(bytes).try_for_each(|(n, l)| each(n, l))),
            Source::File(path) => {
                let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
                let mut buf = Vec::new();
                let mut n = 0;
                loop {
                    buf.clear();
                    if reader.read_until(b'\n', &mut buf)? == 0 {
                        return Ok(Ok(()));
                    }
                    n += 1;
                    let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                    if let Err(e) = each(n, line) {
                        return Ok(Err(e));
                    }
                }
            }
        }
    }
}

/// Why a run stopped early.
enum Stop {
    Script(script::ScriptError),
    /// Standard output closed (e.g. `| head`): not an error worth a message.
    Closed,
}

fn run_script(path: &str, text: bool) -> ExitCode {
    let (name, source) = if path == "-" {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
            eprintln!("hallclock rules run: cannot read standard input: {e}");
            return ExitCode::from(2);
        }
        ("<stdin>".to_string(), Source::Stdin(bytes))
    } else {
        (path.to_string(), Source::File(path.into()))
    };
    let cannot_read = |e: std::io::Error| {
        eprintln!("hallclock rules run: cannot read {name}: {e}");
        ExitCode::from(2)
    };
    // First the whole script is checked, so a malformed one prints one error and nothing
    // else; then it runs, each output line written as it is produced.
    let mut parser = script::Parser::new();
    let mut first = None;
    match source.for_each_line(|n, l| {
        let steps = parser.line(n, l)?;
        if first.is_none() {
            first = steps.first().map(|s| s.at);
        }
        Ok::<(), script::ScriptError>(())
    }) {
        Err(e) => return cannot_read(e),
        Ok(Err(e)) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
        Ok(Ok(())) => {}
    }
    let (setup, date) = match parser.finish() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut runner = match script::Runner::new(&setup, first) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let closed = std::cell::Cell::new(false);
    let mut write = |o: script::Output| {
        if closed.get() {
            return;
        }
        let line = if text {
            o.to_text(date)
        } else {
            o.to_json(date).to_string()
        };
        closed.set(writeln!(stdout, "{line}").is_err());
    };
    let mut parser = script::Parser::new();
    let ran = source.for_each_line(|n, l| {
        for step in parser.line(n, l).map_err(Stop::Script)? {
            runner.step(&step, &mut write);
        }
        if closed.get() {
            Err(Stop::Closed)
        } else {
            Ok(())
        }
    });
    match ran {
        Err(e) => return cannot_read(e),
        // The file changed between the two readings.
        Ok(Err(Stop::Script(e))) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
        Ok(Err(Stop::Closed)) => return ExitCode::SUCCESS,
        Ok(Ok(())) => {}
    }
    runner.finish(&mut write);
    // A closed pipe (e.g. `| head`) is not an error worth a message.
    let _ = stdout.flush();
    ExitCode::SUCCESS
}
