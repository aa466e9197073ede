//! Who is logged in: the accounts seam, in-memory sessions, and the `Arbiter` extractor
//! that every handler acting for someone takes (so none can run for a stranger).
//!
//! The accounts come through [`Accounts`]; the arbiter-accounts work (issue 11) provides
//! the hall's arbiters file, and until it is merged [`FileAccounts`] reads a small TOML
//! file of its own (docs/DASHBOARD.md).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::AppState;
use super::error::WebError;

/// The session cookie's name.
pub const COOKIE: &str = "hallclock_session";
/// The header every POST carries the session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// A session unused this long is forgotten.
const IDLE: Duration = Duration::from_secs(12 * 3600);

/// What an arbiter may do (issue 11): `chief` everything, hall-wide; `arbiter` the boards
/// listed (or all); `viewer` reads and asks for replays, commands nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Chief,
    Arbiter,
    Viewer,
}

/// A proven arbiter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// For `arbiter`: the boards this arbiter may command; empty = every board.
    pub boards: Vec<String>,
}

impl Identity {
    /// Whether this identity may send `action` to `board` (`None`: the hall). Checked by
    /// the server for every command; the page only hides what this refuses.
    pub fn may(&self, board: Option<&str>, action: &str) -> Result<(), WebError> {
        if board.is_none() && action == "replay" {
            return Ok(());
        }
        match (self.role, board) {
            (Role::Chief, _) => Ok(()),
            (Role::Viewer, _) => Err(WebError::Forbidden(format!(
                "'{}' is a viewer: viewers read and ask for replays, they command nothing",
                self.id
            ))),
            (Role::Arbiter, None) => Err(WebError::Forbidden(format!(
                "hall-wide {action} needs the chief role; '{}' is an arbiter",
                self.id
            ))),
            (Role::Arbiter, Some(b)) => {
                if self.boards.is_empty() || self.boards.iter().any(|x| x == b) {
                    Ok(())
                } else {
                    Err(WebError::Forbidden(format!(
                        "'{}' may command {} only, not {b}",
                        self.id,
                        self.boards.join(", ")
                    )))
                }
            }
        }
    }
}

/// The seam to the arbiter accounts: a password check, nothing else.
pub trait Accounts: Send + Sync + 'static {
    /// The identity when `password` is right for `id`. May be slow (a password hash): the
    /// caller runs it off the I/O threads.
    fn verify(&self, id: &str, password: &str) -> Option<Identity>;
}

/// One account as stored: the password only as a salted PBKDF2-HMAC-SHA256 hash.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    pub id: String,
    pub name: String,
    pub role: Role,
    #[serde(default)]
    pub boards: Vec<String>,
    /// `pbkdf2-sha256$<iterations>$<salt hex>$<hash hex>` (see [`hash_password`]).
    pub password: String,
}

/// Accounts held in memory (read from a file, or made by the demo and the tests).
#[derive(Debug, Clone, Default)]
pub struct FileAccounts {
    accounts: Vec<Account>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountsFile {
    #[serde(default)]
    arbiter: Vec<Account>,
}

/// Why an accounts file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: arbiter '{id}': {message}")]
    Account {
        path: String,
        id: String,
        message: String,
    },
}

impl FileAccounts {
    pub fn new(accounts: Vec<Account>) -> FileAccounts {
        FileAccounts { accounts }
    }

    /// Read `[[arbiter]]` tables (id, name, role, boards, password hash).
    pub fn load(path: &Path) -> Result<FileAccounts, AccountsError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AccountsError::Read {
            path: shown.clone(),
            source,
        })?;
        let file: AccountsFile = toml::from_str(&text).map_err(|e| AccountsError::Parse {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        for a in &file.arbiter {
            if parse_hash(&a.password).is_none() {
                return Err(AccountsError::Account {
                    path: shown.clone(),
                    id: a.id.clone(),
                    message: "password is not a 'pbkdf2-sha256$ITERATIONS$SALT$HASH' hash (make one with `hallclock web-password`)".into(),
                });
            }
        }
        Ok(FileAccounts {
            accounts: file.arbiter,
        })
    }
}

impl Accounts for FileAccounts {
    fn verify(&self, id: &str, password: &str) -> Option<Identity> {
        let account = self.accounts.iter().find(|a| a.id == id)?;
        let (iterations, salt, hash) = parse_hash(&account.password)?;
        let got = pbkdf2(password.as_bytes(), &salt, iterations);
        constant_time_eq(&got, &hash).then(|| Identity {
            id: account.id.clone(),
            name: account.name.clone(),
            role: account.role,
            boards: account.boards.clone(),
        })
    }
}

/// The iterations [`hash_password`] uses by default.
pub const ITERATIONS: u32 = 100_000;

/// A stored form of `password`: `pbkdf2-sha256$<iterations>$<salt hex>$<hash hex>`.
pub fn hash_password(password: &str, iterations: u32) -> String {
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let hash = pbkdf2(password.as_bytes(), &salt, iterations.max(1));
    format!(
        "pbkdf2-sha256${}${}${}",
        iterations.max(1),
        hex(&salt),
        hex(&hash)
    )
}

fn parse_hash(s: &str) -> Option<(u32, Vec<u8>, Vec<u8>)> {
    let mut parts = s.split('$');
    if parts.next()? != "pbkdf2-sha256" {
        return None;
    }
    let iterations: u32 = parts.next()?.parse().ok().filter(|n| *n > 0)?;
    let salt = unhex(parts.next()?)?;
    let hash = unhex(parts.next()?)?;
    (parts.next().is_none() && hash.len() == 32).then_some((iterations, salt, hash))
}

/// PBKDF2-HMAC-SHA256 with one 32-byte block (RFC 8018 §5.2).
fn pbkdf2(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let Ok(mac) = Hmac::<Sha256>::new_from_slice(password) else {
        return [0; 32];
    };
    let mut first = mac.clone();
    first.update(salt);
    first.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = first.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        let mut m = mac.clone();
        m.update(&u);
        u = m.finalize().into_bytes().into();
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A random token for a cookie or a CSRF header.
pub fn token() -> String {
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex(&b)
}

#[derive(Debug, Clone)]
struct Session {
    identity: Identity,
    csrf: String,
    last_seen: Instant,
}

/// Server-side sessions, in memory: a restart logs everyone out, and a logout or an
/// expiry revokes at once.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    inner: Arc<Mutex<HashMap<String, Session>>>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new session: (cookie token, CSRF token).
    pub fn create(&self, identity: Identity) -> (String, String) {
        let (id, csrf) = (token(), token());
        let mut map = self.lock();
        let now = Instant::now();
        map.retain(|_, s| now.duration_since(s.last_seen) < IDLE);
        map.insert(
            id.clone(),
            Session {
                identity,
                csrf: csrf.clone(),
                last_seen: now,
            },
        );
        (id, csrf)
    }

    fn get(&self, id: &str) -> Option<Session> {
        let mut map = self.lock();
        let s = map.get_mut(id)?;
        let now = Instant::now();
        if now.duration_since(s.last_seen) >= IDLE {
            map.remove(id);
            return None;
        }
        s.last_seen = now;
        Some(s.clone())
    }

    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }
}

/// The session cookie's value in a request.
pub fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

/// A request that changes something must come from this site: the `Origin` (sent by
/// every browser on a POST) names the host the request went to, and the fetch metadata,
/// when present, does not say cross-site.
pub fn same_origin(headers: &HeaderMap) -> Result<(), WebError> {
    if headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "cross-site")
    {
        return Err(WebError::Csrf(
            "refused: the request came from another site",
        ));
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        // Not a browser (a script with the cookie and the token): the token decides.
        return Ok(());
    };
    let host = headers
        .get("x-forwarded-host")
        .or_else(|| headers.get(header::HOST))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, h)| h)
        .unwrap_or("");
    if host.is_empty() || origin_host != host {
        return Err(WebError::Csrf(
            "refused: the Origin header is not this site (cross-site request)",
        ));
    }
    Ok(())
}

/// A logged-in arbiter. Taking one refuses strangers (401); on anything but GET/HEAD it
/// also checks the CSRF token and the origin (403).
#[derive(Debug, Clone)]
pub struct Arbiter {
    pub identity: Identity,
    pub csrf: String,
    pub session: String,
}

impl FromRequestParts<AppState> for Arbiter {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, WebError> {
        let id = cookie(&parts.headers).ok_or(WebError::Unauthenticated)?;
        let session = state.sessions().get(&id).ok_or(WebError::Unauthenticated)?;
        if parts.method != Method::GET && parts.method != Method::HEAD {
            same_origin(&parts.headers)?;
            let sent = parts
                .headers
                .get(CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
                .ok_or(WebError::Csrf(
                    "refused: no CSRF token (header x-csrf-token)",
                ))?;
            if !constant_time_eq(sent.as_bytes(), session.csrf.as_bytes()) {
                return Err(WebError::Csrf("refused: wrong CSRF token"));
            }
        }
        Ok(Arbiter {
            identity: session.identity,
            csrf: session.csrf,
            session: id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pbkdf2_matches_rfc_7914_vector() {
        // RFC 7914 §11: PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1, first 32 bytes.
        assert_eq!(
            hex(&pbkdf2(b"passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn a_stored_hash_verifies_only_its_password() {
        let accounts = FileAccounts::new(vec![Account {
            id: "ia".into(),
            name: "IA Test".into(),
            role: Role::Chief,
            boards: vec![],
            password: hash_password("right", 10),
        }]);
        assert_eq!(
            accounts.verify("ia", "right").map(|i| i.name),
            Some("IA Test".into())
        );
        assert!(accounts.verify("ia", "wrong").is_none());
        assert!(accounts.verify("nobody", "right").is_none());
    }

    #[test]
    fn roles_decide_what_may_be_sent() {
        let who = |role, boards: &[&str]| Identity {
            id: "x".into(),
            name: "X".into(),
            role,
            boards: boards.iter().map(|s| s.to_string()).collect(),
        };
        assert!(who(Role::Chief, &[]).may(None, "start_round").is_ok());
        assert!(who(Role::Arbiter, &[]).may(None, "start_round").is_err());
        assert!(who(Role::Arbiter, &[]).may(Some("b1"), "add_time").is_ok());
        assert!(
            who(Role::Arbiter, &["b2"])
                .may(Some("b1"), "add_time")
                .is_err()
        );
        assert!(who(Role::Viewer, &[]).may(Some("b1"), "pause").is_err());
        assert!(who(Role::Viewer, &[]).may(None, "replay").is_ok());
    }
}
