//! The push to a lichess broadcast round (`[broadcast.lichess]`, off by default):
//! `POST {base_url}/api/broadcast/round/{id}/push` with the round's multi-game PGN, as the
//! delayed feed shows it, whenever it changes, at most once a second.
//!
//! A 5xx, a 429 or a network failure is tried again with a growing pause (1 s doubling to
//! 60 s), with whatever the feed shows by then; any other 4xx is logged once and not
//! retried (a bad token or round id does not heal by itself): the next change is pushed
//! again. lichess answers per game, `{"games":[{"tags":{…},"moves":n} | {"tags":{…},
//! "error":"…"}]}`; each is logged.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use super::{BroadcastSource, LichessSettings, Which};
use crate::intake::command::log_safe;

/// At most one push a second.
pub const DEBOUNCE: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A push that takes longer than this failed (lichess answers in well under a second).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Why the push cannot start.
#[derive(Debug, thiserror::Error)]
pub enum PushSetupError {
    #[error("broadcast.lichess.token_file: cannot read {path}: {source}")]
    Token {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("broadcast.lichess.token_file: {0} is empty")]
    EmptyToken(PathBuf),
    #[error("broadcast.lichess.base_url: {0}")]
    BadUrl(String),
    #[error("HTTPS to lichess: {0}")]
    Tls(String),
}

/// Why one push did not reach lichess.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushFailure {
    #[error("cannot connect to {0}")]
    Connect(String),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("HTTP: {0}")]
    Http(String),
    #[error("no answer within {}s", TIMEOUT.as_secs())]
    Timeout,
}

/// What lichess said of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameOutcome {
    /// `White - Black (Round)`, from the tags lichess read.
    pub game: String,
    /// Moves lichess took, or its error.
    pub result: Result<u64, GameRefusal>,
}

/// Why lichess did not take a game, in lichess's own words when it gave any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameRefusal {
    /// lichess's `error` for the game, verbatim (escaped before it reaches a log).
    #[error("{0}")]
    Said(String),
    #[error("no moves and no error in lichess's answer")]
    Silent,
}

/// The outcome of the last push attempt (for the log and the tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushReport {
    /// 2xx: lichess took the round.
    Pushed {
        round: u32,
        etag: String,
        games: Vec<GameOutcome>,
    },
    /// A 4xx other than 429: not retried.
    Refused {
        round: u32,
        status: u16,
        body: String,
    },
    /// A 5xx or 429 (`status`) or a network failure: retried after `retry_in`.
    Failed {
        round: u32,
        status: Option<u16>,
        reason: String,
        retry_in: Duration,
    },
}

/// The running push.
pub struct Push {
    pub reports: watch::Receiver<Option<PushReport>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Push {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Target {
    https: bool,
    host: String,
    port: u16,
    path: String,
    authority: String,
}

fn target(base: &str, round_id: &str) -> Result<Target, PushSetupError> {
    let (https, rest) = if let Some(r) = base.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = base.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(PushSetupError::BadUrl(format!(
            "'{base}' is not an http:// or https:// URL"
        )));
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| PushSetupError::BadUrl(format!("'{p}' in '{base}' is not a port")))?,
        ),
        None => (authority, if https { 443 } else { 80 }),
    };
    if host.is_empty() {
        return Err(PushSetupError::BadUrl(format!("'{base}' names no host")));
    }
    Ok(Target {
        https,
        host: host.to_string(),
        port,
        path: format!("{prefix}/api/broadcast/round/{round_id}/push"),
        authority: authority.to_string(),
    })
}

fn tls_connector() -> Result<tokio_rustls::TlsConnector, PushSetupError> {
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    let certs = rustls_native_certs::load_native_certs()
        .map_err(|e| PushSetupError::Tls(format!("the system's CA certificates: {e}")))?;
    for c in certs {
        // One unreadable system certificate does not stop the others.
        let _ = roots.add(c);
    }
    let config = tokio_rustls::rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// Start pushing the current round to `settings.round_id`.
pub fn spawn(source: BroadcastSource, settings: &LichessSettings) -> Result<Push, PushSetupError> {
    let token =
        std::fs::read_to_string(&settings.token_file).map_err(|source| PushSetupError::Token {
            path: settings.token_file.clone(),
            source,
        })?;
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err(PushSetupError::EmptyToken(settings.token_file.clone()));
    }
    let target = target(&settings.base_url, &settings.round_id)?;
    let tls = if target.https {
        Some(tls_connector()?)
    } else {
        None
    };
    let (tx, rx) = watch::channel(None);
    let client = Client { target, tls, token };
    let task = tokio::spawn(run(source, client, tx));
    Ok(Push { reports: rx, task })
}

struct Client {
    target: Target,
    tls: Option<tokio_rustls::TlsConnector>,
    token: String,
}

impl Client {
    async fn post(&self, body: Bytes) -> Result<(u16, Bytes), PushFailure> {
        tokio::time::timeout(TIMEOUT, self.post_now(body))
            .await
            .unwrap_or(Err(PushFailure::Timeout))
    }

    async fn post_now(&self, body: Bytes) -> Result<(u16, Bytes), PushFailure> {
        let t = &self.target;
        let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port))
            .await
            .map_err(|e| PushFailure::Connect(format!("{}: {e}", t.authority)))?;
        let request = hyper::Request::post(&t.path)
            .header(hyper::header::HOST, &t.authority)
            .header(
                hyper::header::AUTHORIZATION,
                format!("Bearer {}", self.token),
            )
            .header(hyper::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .header(
                hyper::header::USER_AGENT,
                concat!("hallclock/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(body))
            .map_err(|e| PushFailure::Http(e.to_string()))?;
        match &self.tls {
            None => send(TokioIo::new(tcp), request).await,
            Some(tls) => {
                let name = tokio_rustls::rustls::pki_types::ServerName::try_from(t.host.clone())
                    .map_err(|e| PushFailure::Tls(e.to_string()))?;
                let stream = tls
                    .connect(name, tcp)
                    .await
                    .map_err(|e| PushFailure::Tls(e.to_string()))?;
                send(TokioIo::new(stream), request).await
            }
        }
    }
}

async fn send<I>(io: I, request: hyper::Request<Full<Bytes>>) -> Result<(u16, Bytes), PushFailure>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| PushFailure::Http(e.to_string()))?;
    let conn = tokio::spawn(conn);
    let result = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| PushFailure::Http(e.to_string()))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| PushFailure::Http(e.to_string()))?
            .to_bytes();
        Ok((status, body))
    }
    .await;
    conn.abort();
    result
}

/// lichess's per-game answer; anything else is kept as text.
fn outcomes(body: &[u8]) -> Vec<GameOutcome> {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let Some(games) = v.get("games").and_then(|g| g.as_array()) else {
        return Vec::new();
    };
    games
        .iter()
        .map(|g| {
            let tag = |k: &str| {
                g.get("tags")
                    .and_then(|t| t.get(k))
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_string()
            };
            let game = format!("{} - {} ({})", tag("White"), tag("Black"), tag("Round"));
            let result = match (g.get("error"), g.get("moves")) {
                (Some(e), _) => Err(GameRefusal::Said(
                    e.as_str().map_or_else(|| e.to_string(), String::from),
                )),
                (None, Some(m)) => Ok(m.as_u64().unwrap_or(0)),
                (None, None) => Err(GameRefusal::Silent),
            };
            GameOutcome { game, result }
        })
        .collect()
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
    log_safe(&text)
}

async fn run(
    mut source: BroadcastSource,
    client: Client,
    reports: watch::Sender<Option<PushReport>>,
) {
    // The body last given to lichess (or refused by it): not sent again.
    let mut done: Option<String> = None;
    let mut backoff = Duration::from_secs(1);
    let mut last_attempt: Option<tokio::time::Instant> = None;
    loop {
        // A change, or a second passing: a delayed feed changes with time alone.
        tokio::select! {
            alive = source.changed() => if !alive { return },
            _ = tokio::time::sleep(DEBOUNCE) => {}
        }
        if let Some(at) = last_attempt {
            tokio::time::sleep_until(at + DEBOUNCE).await;
        }
        let Some((round, _)) = source.current() else {
            continue;
        };
        let Ok(rendered) = source.round(Which::Current) else {
            continue;
        };
        if done.as_deref() == Some(rendered.etag.as_str()) {
            continue;
        }
        last_attempt = Some(tokio::time::Instant::now());
        let report = match client.post(rendered.body.clone()).await {
            Ok((status, body)) if (200..300).contains(&status) => {
                backoff = Duration::from_secs(1);
                done = Some(rendered.etag.clone());
                let games = outcomes(&body);
                tracing::info!(round, games = games.len(), "pushed to lichess");
                for g in &games {
                    match &g.result {
                        Ok(moves) => {
                            tracing::info!(game = %log_safe(&g.game), moves, "lichess took the game")
                        }
                        Err(e) => {
                            tracing::warn!(game = %log_safe(&g.game), "lichess refused the game: {}", log_safe(&e.to_string()))
                        }
                    }
                }
                PushReport::Pushed {
                    round,
                    etag: rendered.etag,
                    games,
                }
            }
            Ok((status, body)) if status == 429 || status >= 500 => {
                let reason = excerpt(&body);
                tracing::warn!(
                    round,
                    status,
                    "lichess push failed, retrying in {}s: {reason}",
                    backoff.as_secs()
                );
                failed(round, Some(status), reason, &mut backoff)
            }
            Ok((status, body)) => {
                done = Some(rendered.etag);
                let body = excerpt(&body);
                tracing::error!(
                    round,
                    status,
                    "lichess refused the push (not retried; check broadcast.lichess round_id and the token's study:write scope): {body}"
                );
                PushReport::Refused {
                    round,
                    status,
                    body,
                }
            }
            Err(e) => {
                tracing::warn!(
                    round,
                    "lichess push failed, retrying in {}s: {e}",
                    backoff.as_secs()
                );
                failed(round, None, e.to_string(), &mut backoff)
            }
        };
        let retry = match &report {
            PushReport::Failed { retry_in, .. } => Some(*retry_in),
            _ => None,
        };
        reports.send_replace(Some(report));
        if let Some(pause) = retry {
            tokio::time::sleep(pause).await;
        }
    }
}

fn failed(round: u32, status: Option<u16>, reason: String, backoff: &mut Duration) -> PushReport {
    let retry_in = *backoff;
    *backoff = (*backoff * 2).min(BACKOFF_MAX);
    PushReport::Failed {
        round,
        status,
        reason,
        retry_in,
    }
}
