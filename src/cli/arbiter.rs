//! `hallclock arbiter add|list|remove|reset`: the arbiters' accounts (docs/OPERATIONS.md).
//! A new key is printed once, and written to `--key-file` when given; the file keeps it
//! for the daemon (HMAC needs the key itself), readable by root only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::auth::{Arbiters, ArbitersError, Key, Role};

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
    /// A new key for an account (the old one stops working); prints it once.
    Reset {
        id: String,
        #[command(flatten)]
        file: FileArgs,
        /// Also write the key to this file (mode 0600).
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
pub struct FileArgs {
    /// The arbiters file (`[security] arbiters` of the configuration).
    #[arg(long, default_value = crate::auth::DEFAULT_ARBITERS)]
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

pub fn run(cmd: ArbiterCmd) -> ExitCode {
    let r = match cmd {
        ArbiterCmd::Add {
            id,
            name,
            role,
            boards,
            file,
            key_file,
        } => open(&file.file, true).and_then(|mut a| {
            let key = a.add(&id, &name, role, boards)?;
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
        ArbiterCmd::Reset { id, file, key_file } => open(&file.file, false).and_then(|mut a| {
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
