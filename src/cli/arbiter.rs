//! `hallclock arbiter add|list|remove|reset`: the arbiters' accounts (docs/OPERATIONS.md).
//! A new key is printed once, and written to `--key-file` when given; the file keeps it
//! for the daemon (HMAC needs the key itself), readable by root only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::intake::auth::{Arbiters, ArbitersError, Key, Role};

#[derive(Debug, clap::Subcommand)]
pub enum ArbiterCmd {
    /// A new account; prints its key once.
    Add {
        /// The id that signs: lowercase letters, digits and '-'.
        id: String,
        /// The name the journal records ("IA Schmid").
        #[arg(long)]
        name: String,
        /// chief (everything, hall-wide), arbiter (board commands), viewer (reads only).
        #[arg(long, default_value = "arbiter")]
        role: Role,
        /// For an arbiter: the boards it may command, comma-separated; `board-0*` is a
        /// section (every board whose id starts so). Default: every board.
        #[arg(long, value_delimiter = ',')]
        boards: Option<Vec<String>>,
        #[command(flatten)]
        file: FileArgs,
        /// Also write the key to this file (mode 0600), for `hallclock command --key-file`.
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// Also set a dashboard password: asked on the terminal, or read as one line from
        /// standard input (never on the command line).
        #[arg(long)]
        password: bool,
    },
    /// Every account: id, role, boards, name (never the keys).
    List {
        #[command(flatten)]
        file: FileArgs,
    },
    /// Delete an account.
    Remove {
        id: String,
        #[command(flatten)]
        file: FileArgs,
    },
    /// A new key for an account (the old one stops working); prints it once. With
    /// `--password`: a new dashboard password instead, the key unchanged.
    Reset {
        id: String,
        #[command(flatten)]
        file: FileArgs,
        /// Also write the key to this file (mode 0600).
        #[arg(long, conflicts_with = "password")]
        key_file: Option<PathBuf>,
        /// Set the dashboard password (asked on the terminal, or one line of standard
        /// input) and keep the key.
        #[arg(long)]
        password: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct FileArgs {
    /// The arbiters file (`[security] arbiters` of the configuration).
    #[arg(long, default_value = crate::intake::auth::DEFAULT_ARBITERS)]
    pub file: PathBuf,
}

/// The file, or none yet (a first `add` creates it).
fn open(path: &Path, may_be_new: bool) -> Result<Arbiters, ArbitersError> {
    match Arbiters::load(path) {
        Err(ArbitersError::Read { source, .. })
            if may_be_new && source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(Arbiters::default())
        }
        other => other,
    }
}

fn write_key(path: &Path, key: &Key) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    writeln!(f, "{}", key.to_hex()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn shown(id: &str, key: &Key, key_file: Option<&Path>) -> Result<(), String> {
    if let Some(p) = key_file {
        write_key(p, key)?;
    }
    println!("{}", key.to_hex());
    eprintln!(
        "the key of '{id}' (shown once; give it to the arbiter's tool, e.g. `hallclock command --arbiter {id} --key-file FILE`){}",
        key_file
            .map(|p| format!("; also written to {}", p.display()))
            .unwrap_or_default()
    );
    eprintln!("the daemon reads the arbiters file when it starts: restart it to apply");
    Ok(())
}

/// A password from the terminal (not echoed, asked twice) or one line of standard input
/// (scripts: `printf '%s\n' "$PW" | hallclock arbiter reset ID --password`).
fn read_password(id: &str) -> Result<String, ArbitersError> {
    use std::io::{BufRead, IsTerminal};
    let stdin = std::io::stdin();
    let line = |prompt: &str| -> Result<String, ArbitersError> {
        let tty = stdin.is_terminal();
        if tty {
            eprint!("{prompt}");
        }
        let mut text = String::new();
        let read = {
            let _quiet = tty.then(Quiet::new).flatten();
            stdin.lock().read_line(&mut text)
        };
        if tty {
            eprintln!();
        }
        read.map_err(|e| ArbitersError::Invalid(format!("cannot read the password: {e}")))?;
        Ok(text.trim_end_matches(['\r', '\n']).to_string())
    };
    let first = line(&format!("dashboard password for '{id}': "))?;
    if stdin.is_terminal() && line("again: ")? != first {
        return Err(ArbitersError::Invalid("the two passwords differ".into()));
    }
    crate::intake::auth::check_password(&first)?;
    Ok(first)
}

/// The terminal's echo off while a password is typed, back on when dropped.
struct Quiet(nix::sys::termios::Termios);

impl Quiet {
    fn new() -> Option<Quiet> {
        use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
        let stdin = std::io::stdin();
        let old = tcgetattr(&stdin).ok()?;
        let mut quiet = old.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        tcsetattr(&stdin, SetArg::TCSANOW, &quiet).ok()?;
        Some(Quiet(old))
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        let _ = nix::sys::termios::tcsetattr(
            std::io::stdin(),
            nix::sys::termios::SetArg::TCSANOW,
            &self.0,
        );
    }
}

pub fn run(cmd: ArbiterCmd) -> ExitCode {
    let r = match cmd {
        ArbiterCmd::Add {
            id,
            name,
            role,
            boards,
            file,
            key_file,
            password,
        } => open(&file.file, true).and_then(|mut a| {
            let key = a.add(&id, &name, role, boards)?;
            if password {
                a.set_password(&id, &read_password(&id)?)?;
            }
            a.save(&file.file)?;
            shown(&id, &key, key_file.as_deref()).map_err(ArbitersError::Invalid)
        }),
        ArbiterCmd::List { file } => open(&file.file, false).map(|a| {
            for acc in a.accounts() {
                let boards = match &acc.boards {
                    Some(b) => b.join(","),
                    None if acc.role == Role::Arbiter => "*".into(),
                    None => "-".into(),
                };
                println!("{}\t{}\t{}\t{}", acc.id, acc.role.name(), boards, acc.name);
            }
        }),
        ArbiterCmd::Remove { id, file } => open(&file.file, false).and_then(|mut a| {
            a.remove(&id)?;
            a.save(&file.file)?;
            eprintln!("'{id}' removed; restart the daemon to apply");
            Ok(())
        }),
        ArbiterCmd::Reset {
            id,
            file,
            password: true,
            ..
        } => open(&file.file, false).and_then(|mut a| {
            if a.get(&id).is_none() {
                return Err(ArbitersError::NoSuchArbiter(id));
            }
            a.set_password(&id, &read_password(&id)?)?;
            a.save(&file.file)?;
            eprintln!("the dashboard password of '{id}' is set; restart the daemon to apply");
            Ok(())
        }),
        ArbiterCmd::Reset {
            id, file, key_file, ..
        } => open(&file.file, false).and_then(|mut a| {
            let key = a.reset(&id)?;
            a.save(&file.file)?;
            shown(&id, &key, key_file.as_deref()).map_err(ArbitersError::Invalid)
        }),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hallclock arbiter: {e}");
            ExitCode::FAILURE
        }
    }
}
