//! Who is logged in: in-memory sessions over the hall's arbiter accounts (`auth`: the
//! password hash sits next to the signing key), and the `Arbiter` extractor that every
//! handler acting for someone takes (so none can run for a stranger). What an identity
//! may do is decided by the hall's intake, as for a signed MQTT command.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use rand::RngCore;

use crate::intake::auth::Identity;

use super::AppState;
use super::error::WebError;

/// The session cookie's name.
pub const COOKIE: &str = "hallclock_session";
/// The header every POST carries the session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// A session unused this long is forgotten.
const IDLE: Duration = Duration::from_secs(12 * 3600);

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random token for a cookie or a CSRF header.
pub fn token() -> String {
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex(&b)
}

#[derive(Debug, Clone)]
struct Login {
    identity: Identity,
    csrf: String,
    last_seen: Instant,
}

/// Server-side sessions, in memory: a restart logs everyone out, and a logout or an
/// expiry revokes at once.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    inner: Arc<Mutex<HashMap<String, Login>>>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Login>> {
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
            Login {
                identity,
                csrf: csrf.clone(),
                last_seen: now,
            },
        );
        (id, csrf)
    }

    fn get(&self, id: &str) -> Option<Login> {
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
