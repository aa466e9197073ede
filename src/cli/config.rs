//! `hallclock check-config` and `hallclock print-config`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::config::{Config, DEFAULT_PATH, ENV_PREFIX, ENV_SEPARATOR, EXIT_CONFIG, Problem};

#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// The configuration file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = DEFAULT_PATH)]
    pub config: PathBuf,
}

/// Print every problem, then a summary line; exit 0 when there is no error (warnings are
/// allowed), 78 (`EX_CONFIG`) otherwise.
pub fn check(args: ConfigArgs) -> ExitCode {
    let file = args.config.display();
    let overrides = env_overrides();
    let with_env = match overrides {
        0 => String::new(),
        1 => " (with 1 environment override)".to_string(),
        n => format!(" (with {n} environment overrides)"),
    };
    match Config::load(Some(&args.config)) {
        Ok((config, warnings)) => {
            print_problems(&warnings);
            let boards = match config.boards.len() {
                1 => "1 board".to_string(),
                n => format!("{n} boards"),
            };
            println!(
                "{file}{with_env}: valid, {}; hall '{}', {boards}",
                count(warnings.len(), "warning"),
                config.hall.id
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            print_problems(&e.problems);
            println!(
                "{file}{with_env}: invalid, {}, {}",
                count(e.errors().count(), "error"),
                count(e.warnings().count(), "warning")
            );
            ExitCode::from(EXIT_CONFIG)
        }
    }
}

/// The effective configuration as TOML on stdout, the password masked; problems on
/// stderr. Nothing on stdout when the configuration is invalid.
pub fn print(args: ConfigArgs) -> ExitCode {
    match load(&args.config) {
        Ok(config) => {
            print!("{}", config.effective_toml(true));
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// For commands that need a configuration (`hallclock run`): the configuration, with
/// its warnings printed on stderr; or every problem and a summary on stderr and the
/// exit code to return (78).
pub fn load(path: &Path) -> Result<Config, ExitCode> {
    match Config::load(Some(path)) {
        Ok((config, warnings)) => {
            for w in &warnings {
                eprintln!("{w}");
            }
            Ok(config)
        }
        Err(e) => {
            eprintln!("{e}");
            eprintln!(
                "{}: invalid, {} (see hallclock check-config)",
                path.display(),
                count(e.errors().count(), "error")
            );
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

fn print_problems(problems: &[Problem]) {
    for p in problems {
        println!("{p}");
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn env_overrides() -> usize {
    let prefix = format!("{ENV_PREFIX}{ENV_SEPARATOR}");
    std::env::vars_os()
        .filter(|(name, _)| {
            name.to_str()
                .and_then(|n| n.get(..prefix.len()))
                .is_some_and(|p| p.eq_ignore_ascii_case(&prefix))
        })
        .count()
}
