//! Who may command the hall: the arbiters' accounts, the signature every command carries,
//! and the roles. The hall's intake calls [`Gate::admit`] before a command is parsed into
//! an action, so any door (MQTT today, a web session later) hands the same proven
//! [`Identity`] to the same path. docs/SECURITY.md explains the scheme.
//!
//! A signed command is an envelope `{"arbiter": ID, "payload": TEXT, "sig": HEX}`: `TEXT`
//! is the command JSON exactly as signed, `HEX` the HMAC-SHA256 of `TOPIC "\n" TEXT` with
//! the arbiter's key. The bytes are checked as they arrived, never re-serialised, and the
//! topic is part of them, so a command signed for one board cannot act on another.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::intake::refusal::Refusal;
use crate::rules::Millis;

use super::secrets::{DUMMY_HASH, PBKDF2};
pub use super::secrets::{
    Key, KeyError, KeyFileError, PBKDF2_ITERATIONS, PasswordError, PasswordHash, check_password,
};

/// Where `[security] arbiters` points by default.
pub const DEFAULT_ARBITERS: &str = "/etc/hallclock/arbiters.toml";

/// How far a command's `ts` may be from the hall's clock by default.
pub const DEFAULT_WINDOW: Millis = Millis(30_000);

/// What an account may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, hall-wide (start_round, pause all, seal_all, …).
    Chief,
    /// Board commands on the boards of the account's `boards` (all when absent).
    Arbiter,
    /// Reads and asks for replays; commands nothing.
    Viewer,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Chief => "chief",
            Role::Arbiter => "arbiter",
            Role::Viewer => "viewer",
        }
    }
}

/// A role's name that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a role; expected chief, arbiter or viewer")]
pub struct NotARole(pub String);

impl std::str::FromStr for Role {
    type Err = NotARole;
    fn from_str(s: &str) -> Result<Role, NotARole> {
        match s {
            "chief" => Ok(Role::Chief),
            "arbiter" => Ok(Role::Arbiter),
            "viewer" => Ok(Role::Viewer),
            _ => Err(NotARole(s.to_string())),
        }
    }
}

/// One arbiter's account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// What signs: `[a-z0-9-]+`, as board ids.
    pub id: String,
    /// What the journal and the events record ("IA Schmid").
    pub name: String,
    pub role: Role,
    /// For `arbiter`: the boards it may command; an entry ending in `*` is a section (every
    /// board whose id starts with what precedes it). `None`: every board.
    pub boards: Option<Vec<String>>,
    pub key: Key,
    /// For logging in to the dashboard; `None`: this account signs only (no login).
    pub password: Option<PasswordHash>,
}

/// Whether a board list (`None`: all) covers `board`.
fn covers(boards: &Option<Vec<String>>, board: &str) -> bool {
    {
        match boards {
            None => true,
            Some(list) => list.iter().any(|b| match b.strip_suffix('*') {
                Some(prefix) => board.starts_with(prefix),
                None => b == board,
            }),
        }
    }
}

fn scope(boards: &Option<Vec<String>>) -> String {
    match boards {
        None => "every board".into(),
        Some(list) => list.join(", "),
    }
}

/// The arbiters file as written on disk.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    #[serde(default, rename = "arbiter")]
    arbiters: Vec<AccountForm>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountForm {
    id: String,
    name: String,
    role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    boards: Option<Vec<String>>,
    /// Hex. HMAC needs the key itself on the server, so it cannot be stored hashed: the
    /// file is root's alone (0600), see docs/SECURITY.md.
    key: String,
    /// The dashboard password, hashed ([`PasswordHash`]); absent: no login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password: Option<String>,
}

/// Problems with the arbiters file.
#[derive(Debug, thiserror::Error)]
pub enum ArbitersError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: arbiter[{index}] ({id}): {message}")]
    Account {
        path: PathBuf,
        index: usize,
        id: String,
        message: String,
    },
    #[error(
        "{path} is open to others (mode {mode:04o}): it holds the arbiters' keys; chmod 600 it (or 640 with the daemon's group)"
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no arbiter '{0}' in the file")]
    NoSuchArbiter(String),
    #[error("arbiter '{0}' already exists (use reset for a new key)")]
    Exists(String),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("{0}")]
    Invalid(String),
}

/// Every account of the hall.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arbiters {
    accounts: BTreeMap<String, Account>,
}

impl Arbiters {
    pub fn accounts(&self) -> impl Iterator<Item = &Account> {
        self.accounts.values()
    }

    pub fn get(&self, id: &str) -> Option<&Account> {
        self.accounts.get(id)
    }

    /// Read and check the file: it must be readable by its owner only.
    pub fn load(path: &Path) -> Result<Arbiters, ArbitersError> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(|source| ArbitersError::Read {
            path: path.into(),
            source,
        })?;
        let mode = meta.permissions().mode() & 0o777;
        // The daemon's group may read it (root:hallclock 0640); nobody else may.
        if mode & 0o027 != 0 {
            return Err(ArbitersError::Exposed {
                path: path.into(),
                mode,
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ArbitersError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(&text).map_err(|e| match e {
            ArbitersError::Parse { message, .. } => ArbitersError::Parse {
                path: path.into(),
                message,
            },
            ArbitersError::Account {
                index, id, message, ..
            } => ArbitersError::Account {
                path: path.into(),
                index,
                id,
                message,
            },
            other => other,
        })
    }

    /// The file's text; errors name the account by index and id.
    pub fn parse(text: &str) -> Result<Arbiters, ArbitersError> {
        let form: FileForm = toml::from_str(text).map_err(|e| ArbitersError::Parse {
            path: PathBuf::new(),
            message: e.message().to_string(),
        })?;
        let mut out = Arbiters::default();
        let mut names = BTreeMap::new();
        for (index, a) in form.arbiters.into_iter().enumerate() {
            let bad = |message: String| ArbitersError::Account {
                path: PathBuf::new(),
                index,
                id: a.id.clone(),
                message,
            };
            if !crate::id::valid(&a.id) {
                return Err(bad("id: use lowercase letters, digits and '-'".into()));
            }
            if a.name.trim().is_empty() || a.name.chars().any(char::is_control) {
                return Err(bad(
                    "name: not blank, and no control characters (it reaches logs)".into(),
                ));
            }
            let key = Key::from_hex(&a.key).map_err(|e| bad(format!("key: {e}")))?;
            let password = match &a.password {
                None => None,
                Some(text) => Some(PasswordHash::parse(text).ok_or_else(|| {
                    bad(format!("password: not a '{PBKDF2}$ITERATIONS$SALT$HASH' hash (set one with `hallclock arbiter reset {} --password`)", a.id))
                })?),
            };
            if let Some(first) = names.insert(a.name.clone(), a.id.clone()) {
                return Err(bad(format!(
                    "name: '{}' is also the name of '{first}'; the journal must tell them apart",
                    a.name
                )));
            }
            if a.boards.is_some() && a.role != Role::Arbiter {
                return Err(bad(format!(
                    "boards: only the arbiter role has a board list (a {} has none)",
                    a.role.name()
                )));
            }
            let account = Account {
                id: a.id.clone(),
                name: a.name,
                role: a.role,
                boards: a.boards,
                key,
                password,
            };
            if out.accounts.insert(a.id.clone(), account).is_some() {
                return Err(bad("id: appears twice".into()));
            }
        }
        Ok(out)
    }

    /// The file's text.
    pub fn to_toml(&self) -> String {
        let form = FileForm {
            arbiters: self
                .accounts
                .values()
                .map(|a| AccountForm {
                    id: a.id.clone(),
                    name: a.name.clone(),
                    role: a.role,
                    boards: a.boards.clone(),
                    key: a.key.to_hex(),
                    password: a.password.as_ref().map(PasswordHash::to_text),
                })
                .collect(),
        };
        let body = toml::to_string(&form).unwrap_or_default();
        format!(
            "# hallclock arbiters: managed by `hallclock arbiter add|list|remove|reset`.\n# The keys are secrets: this file must stay root's alone (mode 0600).\n\n{body}"
        )
    }

    /// Write the file atomically, mode 0600 from its creation on. A file replaced keeps
    /// its owner, group and mode (root:hallclock 0640 lets the daemon's user read it).
    pub fn save(&self, path: &Path) -> Result<(), ArbitersError> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
        let werr = |source| ArbitersError::Write {
            path: path.into(),
            source,
        };
        let tmp = path.with_extension("toml.new");
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(werr)?;
        if let Ok(old) = std::fs::metadata(path) {
            std::os::unix::fs::fchown(&f, Some(old.uid()), Some(old.gid())).map_err(werr)?;
            let mode = (old.permissions().mode() & 0o640) | 0o600;
            f.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(werr)?;
        }
        f.write_all(self.to_toml().as_bytes()).map_err(werr)?;
        f.sync_all().map_err(werr)?;
        std::fs::rename(&tmp, path).map_err(werr)?;
        Ok(())
    }

    /// A new account with a fresh key; returns the key (shown once).
    pub fn add(
        &mut self,
        id: &str,
        name: &str,
        role: Role,
        boards: Option<Vec<String>>,
    ) -> Result<Key, ArbitersError> {
        if self.accounts.contains_key(id) {
            return Err(ArbitersError::Exists(id.into()));
        }
        let key = Key::generate();
        let mut next = self.clone();
        next.accounts.insert(
            id.into(),
            Account {
                id: id.into(),
                name: name.into(),
                role,
                boards,
                key: key.clone(),
                password: None,
            },
        );
        // The same checks as loading, so nothing written fails to load.
        *self = Self::parse(&next.to_toml()).map_err(|e| match e {
            ArbitersError::Account { message, .. } => ArbitersError::Invalid(message),
            other => other,
        })?;
        Ok(key)
    }

    pub fn remove(&mut self, id: &str) -> Result<Account, ArbitersError> {
        self.accounts
            .remove(id)
            .ok_or_else(|| ArbitersError::NoSuchArbiter(id.into()))
    }

    /// A new key for `id`; the old one stops working when the daemon reloads.
    pub fn reset(&mut self, id: &str) -> Result<Key, ArbitersError> {
        let account = self
            .accounts
            .get_mut(id)
            .ok_or_else(|| ArbitersError::NoSuchArbiter(id.into()))?;
        account.key = Key::generate();
        Ok(account.key.clone())
    }

    /// Set (or replace) `id`'s dashboard password; the key is left as it is.
    pub fn set_password(&mut self, id: &str, password: &str) -> Result<(), ArbitersError> {
        self.set_password_with(id, password, PBKDF2_ITERATIONS)
    }

    /// [`Arbiters::set_password`] with fewer iterations: for tests, whose debug builds
    /// would spend seconds on each login otherwise.
    pub fn set_password_with(
        &mut self,
        id: &str,
        password: &str,
        iterations: u32,
    ) -> Result<(), ArbitersError> {
        check_password(password)?;
        let account = self
            .accounts
            .get_mut(id)
            .ok_or_else(|| ArbitersError::NoSuchArbiter(id.into()))?;
        account.password = Some(PasswordHash::new(password, iterations));
        Ok(())
    }

    /// The identity whose password this is. Slow on purpose (a password hash): call it
    /// off the I/O threads. An unknown id costs as much as a wrong password, so the time
    /// does not tell which ids exist.
    pub fn login(&self, id: &str, password: &str) -> Option<Identity> {
        match self.accounts.get(id) {
            Some(a) => match &a.password {
                Some(h) if h.verify(password) => Some(Identity::of(a)),
                _ => None,
            },
            None => {
                let _ = DUMMY_HASH.verify(password);
                None
            }
        }
    }
}

/// How the hall takes commands (`[security] commands`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Security {
    /// Every command signed by an account of `arbiters`, `ts` within `window`.
    Signed { arbiters: Arbiters, window: Millis },
    /// A lab: anyone who can publish commands, as whoever they claim to be.
    Open,
}

/// Who sent a command, proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub id: String,
    pub name: String,
    pub role: Role,
    boards: Option<Vec<String>>,
}

impl Identity {
    pub fn of(a: &Account) -> Identity {
        Identity {
            id: a.id.clone(),
            name: a.name.clone(),
            role: a.role,
            boards: a.boards.clone(),
        }
    }

    /// For an arbiter, the boards it may command (`None`: every board).
    pub fn boards(&self) -> Option<&[String]> {
        self.boards.as_deref()
    }

    /// A command for `board`.
    pub fn may_command_board(&self, board: &str) -> Result<(), Refusal> {
        match self.role {
            Role::Chief => Ok(()),
            Role::Viewer => Err(Refusal::ViewerCommand {
                arbiter: self.id.clone(),
            }),
            Role::Arbiter if covers(&self.boards, board) => Ok(()),
            Role::Arbiter => Err(Refusal::OutOfScope {
                arbiter: self.id.clone(),
                scope: scope(&self.boards),
                board: board.into(),
            }),
        }
    }

    /// A hall command: reads (`replay`) for everyone, the rest for the chief.
    pub fn may_command_hall(&self, action: &'static str, reads: bool) -> Result<(), Refusal> {
        match self.role {
            Role::Chief => Ok(()),
            _ if reads => Ok(()),
            Role::Viewer => Err(Refusal::ViewerCommand {
                arbiter: self.id.clone(),
            }),
            Role::Arbiter => Err(Refusal::ChiefOnly {
                action,
                arbiter: self.id.clone(),
            }),
        }
    }
}

/// A command let in: who sent it (`None` with `commands = "open"`) and the command's
/// own bytes (the envelope's `payload`).
#[derive(Debug)]
pub struct Admitted {
    pub identity: Option<Identity>,
    pub command: Vec<u8>,
}

/// A refusal at the gate, with the transaction when it could be read (for the response).
#[derive(Debug)]
pub struct Turned {
    pub transaction: String,
    pub action: String,
    pub refusal: Refusal,
}

/// The transaction and action of a command's JSON, when readable (echoed in refusals).
fn ids_of(v: &Value) -> (String, String) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    (s("transaction"), s("action"))
}

impl Security {
    /// Check who sent `raw` on `topic` at `now`: the signature, the account, the time.
    /// Roles are checked once the command is parsed (they depend on the action).
    pub fn admit(&self, topic: &str, raw: &[u8], now: Millis) -> Result<Admitted, Turned> {
        let (arbiters, window) = match self {
            Security::Open => {
                return Ok(Admitted {
                    identity: None,
                    command: raw.to_vec(),
                });
            }
            Security::Signed { arbiters, window } => (arbiters, *window),
        };
        let turn = |ids: (String, String), refusal| Turned {
            transaction: ids.0,
            action: ids.1,
            refusal,
        };
        let outer: Value = serde_json::from_slice(raw).map_err(|e| {
            turn(
                (String::new(), String::new()),
                Refusal::BadCommand(format!("not JSON: {e}")),
            )
        })?;
        let field = |k: &str| outer.get(k).and_then(Value::as_str);
        let (Some(id), Some(payload), Some(sig)) =
            (field("arbiter"), field("payload"), field("sig"))
        else {
            let missing: Vec<&str> = ["arbiter", "payload", "sig"]
                .into_iter()
                .filter(|k| field(k).is_none())
                .collect();
            return Err(turn(
                ids_of(&outer),
                Refusal::Unsigned {
                    missing: format!("; no string \"{}\"", missing.join("\", \"")),
                },
            ));
        };
        if let Some(extra) = outer.as_object().and_then(|o| {
            o.keys()
                .find(|k| !["arbiter", "payload", "sig"].contains(&k.as_str()))
        }) {
            return Err(turn(
                (String::new(), String::new()),
                Refusal::BadSignedField {
                    field: "envelope",
                    problem: format!(
                        "unknown field \"{extra}\": the command goes inside \"payload\""
                    ),
                },
            ));
        }
        let inner: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
        let ids = ids_of(&inner);
        let Some(account) = arbiters.get(id) else {
            return Err(turn(
                ids,
                Refusal::UnknownArbiter {
                    arbiter: id.to_string(),
                },
            ));
        };
        if !account.key.verify(topic, payload.as_bytes(), sig) {
            return Err(turn(
                ids,
                Refusal::BadSignature {
                    arbiter: id.to_string(),
                },
            ));
        }
        let ts = match inner.get("ts") {
            Some(Value::Number(n)) if n.as_i64().is_some() => Millis(n.as_i64().unwrap_or(0)),
            Some(other) => {
                return Err(turn(
                    ids,
                    Refusal::BadSignedField {
                        field: "ts",
                        problem: format!("{other} is not an integer (ms since the Unix epoch)"),
                    },
                ));
            }
            None => {
                return Err(turn(
                    ids,
                    Refusal::BadSignedField {
                        field: "ts",
                        problem: "missing: a signed command says when it was signed (ms since the Unix epoch)".into(),
                    },
                ));
            }
        };
        let off = ts.0.saturating_sub(now.0);
        if off.saturating_abs() > window.0 {
            return Err(turn(
                ids,
                Refusal::Expired {
                    ts,
                    hall: now,
                    window_ms: window.0,
                },
            ));
        }
        Ok(Admitted {
            identity: Some(Identity::of(account)),
            command: payload.as_bytes().to_vec(),
        })
    }
}

/// A signed envelope of `command` (JSON text) for `topic`, as clients send it.
pub fn envelope(arbiter: &str, key: &Key, topic: &str, command: &str) -> Vec<u8> {
    serde_json::json!({
        "arbiter": arbiter,
        "payload": command,
        "sig": key.sign(topic, command.as_bytes()),
    })
    .to_string()
    .into_bytes()
}

/// `command` with `ts` (now) added, then signed: what a client does before publishing.
pub fn sign_now(arbiter: &str, key: &Key, topic: &str, mut command: Value, now: Millis) -> Vec<u8> {
    if let Value::Object(o) = &mut command {
        o.insert("ts".into(), Value::from(now.0));
    }
    envelope(arbiter, key, topic, &command.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hall(window: i64) -> (Security, Key) {
        let mut a = Arbiters::default();
        let key = a.add("schmid", "IA Schmid", Role::Chief, None).unwrap();
        (
            Security::Signed {
                arbiters: a,
                window: Millis(window),
            },
            key,
        )
    }

    #[test]
    fn admit_checks_signature_and_time() {
        let (sec, key) = hall(30_000);
        let topic = "hallclock/h/board/b1/set";
        let cmd = serde_json::json!({"transaction": "t1", "action": "pause"});
        let raw = sign_now("schmid", &key, topic, cmd.clone(), Millis(1_000_000));
        let ok = sec.admit(topic, &raw, Millis(1_010_000)).unwrap();
        assert_eq!(ok.identity.unwrap().name, "IA Schmid");
        let e = sec.admit(topic, &raw, Millis(1_040_001)).unwrap_err();
        assert_eq!(e.refusal.code(), "expired");
        let e = sec
            .admit("hallclock/h/board/b2/set", &raw, Millis(1_000_000))
            .unwrap_err();
        assert_eq!(e.refusal.code(), "unauthenticated");
        assert_eq!(e.transaction, "t1");
        let e = sec
            .admit(topic, cmd.to_string().as_bytes(), Millis(1_000_000))
            .unwrap_err();
        assert!(matches!(e.refusal, Refusal::Unsigned { .. }), "{e:?}");
    }

    #[test]
    fn a_password_logs_in_only_its_account_and_survives_the_file() {
        let mut a = Arbiters::default();
        a.add("ia-1", "IA One", Role::Arbiter, None).unwrap();
        a.add("v", "Viewer", Role::Viewer, None).unwrap();
        assert!(a.login("ia-1", "right horse").is_none(), "no password yet");
        a.set_password("ia-1", "right horse").unwrap();
        assert!(a.set_password("v", "short").is_err());
        assert!(a.set_password("nobody", "long enough").is_err());
        let a = Arbiters::parse(&a.to_toml()).unwrap();
        assert_eq!(
            a.login("ia-1", "right horse").map(|i| i.name),
            Some("IA One".into())
        );
        assert!(a.login("ia-1", "wrong horse").is_none());
        assert!(a.login("v", "right horse").is_none());
        assert!(a.login("nobody", "right horse").is_none());
        let e = Arbiters::parse(
            "[[arbiter]]\nid = \"x\"\nname = \"n\"\nrole = \"chief\"\nkey = \"00112233445566778899aabbccddeeff\"\npassword = \"plain\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("arbiter[0] (x): password"), "{e}");
    }

    #[test]
    fn the_file_round_trips_and_says_what_is_wrong() {
        let mut a = Arbiters::default();
        a.add(
            "ia-1",
            "IA One",
            Role::Arbiter,
            Some(vec!["board-0*".into()]),
        )
        .unwrap();
        a.add("v", "Viewer", Role::Viewer, None).unwrap();
        assert_eq!(Arbiters::parse(&a.to_toml()).unwrap(), a);
        let e = a.add("w", "Viewer", Role::Viewer, None).unwrap_err();
        assert!(e.to_string().contains("also the name of 'v'"), "{e}");
        let e = Arbiters::parse(
            "[[arbiter]]\nid = \"X\"\nname = \"n\"\nrole = \"chief\"\nkey = \"00\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("arbiter[0] (X): id"), "{e}");
        let id = Identity::of(a.get("ia-1").unwrap());
        assert!(id.may_command_board("board-007").is_ok());
        assert!(id.may_command_board("board-107").is_err());
        assert_eq!(
            id.may_command_hall("pause", false).unwrap_err().code(),
            "forbidden"
        );
    }
}
