//! Who is logged in: in-memory sessions over the hall's arbiter accounts (`auth`: the
//! password hash sits next to the signing key), and the `Arbiter` extractor that every
//! handler acting for someone takes (so none can run for a stranger). What an identity
//! may do is decided by the hall's intake, as for a signed MQTT command.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts};
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
    /// The language this arbiter chose on the page (`POST /api/language`); `None`: the
    /// browser's.
    language: Option<String>,
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
                language: None,
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

    /// The language session `id` chose, if it is a live session that chose one.
    pub fn language(&self, id: &str) -> Option<String> {
        self.get(id)?.language
    }

    /// Keep `language` as session `id`'s choice (`None`: back to the browser's).
    pub fn set_language(&self, id: &str, language: Option<String>) {
        if let Some(s) = self.lock().get_mut(id) {
            s.language = language;
        }
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

/// The TCP peer's address, when the server was started with `ConnectInfo` (as
/// `web::start` does); a router driven without a socket (tests) has none.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub Option<SocketAddr>);

impl<S: Send + Sync> FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0),
        ))
    }
}

/// Who a login comes from, for the limiter and the log: the TCP peer, unless the peer is
/// the configured reverse proxy (`web.trusted_proxy`), whose `X-Forwarded-For` then names
/// the client: its last entry, the address the proxy itself saw (entries before it are
/// whatever the client sent). A header that does not parse as an address leaves the
/// proxy's own. Without a peer (no socket), the unspecified address.
pub fn client_address(
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    trusted_proxy: Option<IpAddr>,
) -> IpAddr {
    let Some(peer) = peer.map(|p| p.ip()) else {
        return IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    };
    if trusted_proxy != Some(peer) {
        return peer;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .next_back()
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.rsplit(',').next())
        .and_then(|last| last.trim().parse::<IpAddr>().ok())
        .unwrap_or(peer)
}

/// A logged-in arbiter. Taking one refuses strangers (401); on anything but GET/HEAD it
/// also checks the CSRF token and the origin (403).
#[derive(Debug, Clone)]
pub struct Arbiter {
    pub identity: Identity,
    pub csrf: String,
    pub session: String,
    /// The language the arbiter chose on the page, if any.
    pub language: Option<String>,
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
            language: session.language,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn xff(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.append("x-forwarded-for", v);
            }
        }
        h
    }

    fn addr(s: &str) -> Option<SocketAddr> {
        s.parse().ok()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::V4(Ipv4Addr::BROADCAST))
    }

    #[test]
    fn the_client_is_the_peer_when_no_proxy_is_trusted() {
        let h = xff(&["192.0.2.1"]);
        assert_eq!(
            client_address(addr("10.0.0.7:5000"), &h, None),
            ip("10.0.0.7")
        );
        // Another peer than the trusted proxy: its header is its own claim.
        let proxy = Some(ip("127.0.0.1"));
        assert_eq!(
            client_address(addr("10.0.0.7:5000"), &h, proxy),
            ip("10.0.0.7")
        );
    }

    #[test]
    fn the_trusted_proxy_names_the_client_in_the_last_forwarded_for_entry() {
        let proxy = Some(ip("127.0.0.1"));
        let peer = addr("127.0.0.1:40000");
        // What the client sent comes first; what the proxy saw is last.
        let h = xff(&["6.6.6.6, 7.7.7.7", "192.0.2.1,  198.51.100.2 "]);
        assert_eq!(client_address(peer, &h, proxy), ip("198.51.100.2"));
        // No header, or one that is not an address: the proxy itself.
        assert_eq!(
            client_address(peer, &HeaderMap::new(), proxy),
            ip("127.0.0.1")
        );
        let h = xff(&["1.2.3.4, not-an-address"]);
        assert_eq!(client_address(peer, &h, proxy), ip("127.0.0.1"));
    }

    #[test]
    fn without_a_socket_the_client_is_unspecified() {
        assert_eq!(
            client_address(None, &xff(&["192.0.2.1"]), Some(ip("127.0.0.1"))),
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        );
    }
}
