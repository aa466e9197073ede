//! The push to lichess broadcast rounds (`[broadcast.lichess]`, off by default), following
//! lichess's own broadcaster: `POST {base_url}/api/broadcast/round/{id}/push` with every
//! game of the lichess round in one multi-game PGN, as the delayed feed shows it, at most
//! once a second when anything changed, and again every [`FORCE_EVERY`] regardless (a push
//! is idempotent: lichess keeps the games it has and takes what is new).
//!
//! A lichess push takes at most [`MAX_GAMES`] games (lichess reads the first 100 and drops
//! the rest without a word), so a larger hall round is split by board ranges between
//! several lichess rounds (`rounds`); a lichess round that would get more is not pushed and
//! says so (log and the `broadcast_push` alert), never a silently truncated push.
//!
//! A 5xx, a 429 or a network failure is tried again with a growing pause (1 s doubling to
//! 60 s), with whatever the feed shows by then; any other 4xx is logged and not retried
//! before the round changes or the next forced push (a bad token or round id does not
//! heal by itself). lichess answers per game, `{"games":[{"tags":{…},"moves":n} |
//! {"tags":{…},"error":"…"}]}`; each is logged, and the games it refused stand in the
//! hall's `broadcast_push` alert until a later push has them taken. A round with a source
//! URL refuses every push ("The relay has an upstream URL, and cannot be pushed to.", as
//! a 400 or as the one entry of `games`): told apart, with what to do about it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use super::{BoardRange, BroadcastSource, FeedGame, LichessSettings, Which};
use crate::alert::{AlertKind, Severity};
use crate::intake::command::log_safe;
use crate::mqtt::Topics;
use crate::mqtt::client::Publisher;
use crate::mqtt::payload::AlertPayload;

/// At most one push a second.
pub const DEBOUNCE: Duration = Duration::from_secs(1);
/// A push even when nothing changed, as lichess's broadcaster forces one every minute: a
/// game lichess lost or a round reset on its side is filled again within a minute.
pub const FORCE_EVERY: Duration = Duration::from_secs(60);
/// The most games lichess takes in one push (raised to 100 in July 2025).
pub const MAX_GAMES: usize = 100;
/// The hall-level alert's base id: node `<node>` raises `alert/broadcast-push-<node>` (`board: null`).
pub const ALERT_ID: &str = "broadcast-push";
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
    /// 2xx: lichess took the push (each game's outcome in `games`).
    Pushed {
        round: u32,
        round_id: String,
        etag: String,
        games: Vec<GameOutcome>,
    },
    /// A 4xx other than 429, or a round with a source URL: not retried before a change or
    /// the next forced push.
    Refused {
        round: u32,
        round_id: String,
        status: u16,
        body: String,
        problem: PushProblem,
    },
    /// A 5xx or 429 (`status`) or a network failure: retried after `retry_in`.
    Failed {
        round: u32,
        round_id: String,
        status: Option<u16>,
        reason: String,
        retry_in: Duration,
    },
    /// The games of one lichess round are more than a push takes: nothing pushed there.
    TooMany {
        round: u32,
        round_id: String,
        games: usize,
    },
}

/// What the operator must know of the push: each stands in the `broadcast_push` alert
/// (and the log) until it is over.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushProblem {
    #[error(
        "lichess round {round_id} has a source URL; a round fed by push must have none — remove it in the round's settings on lichess"
    )]
    SourceUrl { round_id: String },
    /// `games`: each refused game (`White - Black (Round)`) and lichess's reason, escaped.
    #[error("lichess round {round_id} refused {}: {}", plural(games.len()), list(games))]
    GamesRefused {
        round_id: String,
        games: Vec<(String, String)>,
    },
    #[error(
        "lichess round {round_id} would get {games} games of round {round}, more than the {MAX_GAMES} a push takes: none pushed; split the boards between lichess rounds ([broadcast.lichess] rounds)"
    )]
    TooMany {
        round: u32,
        round_id: String,
        games: usize,
    },
    #[error(
        "round {round}: board(s) {boards} are in none of [broadcast.lichess] rounds' ranges: not pushed"
    )]
    Unplaced { round: u32, boards: String },
    #[error(
        "lichess refused the push to round {round_id} ({status}; check broadcast.lichess round ids and the token's study:write scope): {body}"
    )]
    Refused {
        round_id: String,
        status: u16,
        body: String,
    },
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 game".into()
    } else {
        format!("{n} games")
    }
}

impl PushProblem {
    /// The problem as data (docs/MQTT-API.md, "Message codes"); lichess's own words (a
    /// refused game's reason, a refusal's body) stay as lichess wrote them.
    pub fn said(&self) -> crate::alert::Said {
        use crate::alert::Said;
        use serde_json::json;
        let message = self.to_string();
        match self {
            PushProblem::SourceUrl { round_id } => Said::new(
                "broadcast_push.source_url",
                json!({ "round_id": round_id }),
                message,
            ),
            PushProblem::GamesRefused { round_id, games } => Said::new(
                "broadcast_push.games_refused",
                json!({ "round_id": round_id, "count": games.len(), "games": list(games) }),
                message,
            ),
            PushProblem::TooMany {
                round,
                round_id,
                games,
            } => Said::new(
                "broadcast_push.too_many",
                json!({ "round": round, "round_id": round_id, "games": games, "max": MAX_GAMES }),
                message,
            ),
            PushProblem::Unplaced { round, boards } => Said::new(
                "broadcast_push.unplaced",
                json!({ "round": round, "boards": boards }),
                message,
            ),
            PushProblem::Refused {
                round_id,
                status,
                body,
            } => Said::new(
                "broadcast_push.refused",
                json!({ "round_id": round_id, "status": status, "body": body }),
                message,
            ),
        }
    }
}

/// The `broadcast_push` alert for every problem at once: one said as itself, several
/// counted, their English joined.
fn problems_said(problems: &[&PushProblem]) -> Option<crate::alert::Said> {
    match problems {
        [] => None,
        [one] => Some(one.said()),
        many => {
            let text = many
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" — ");
            Some(crate::alert::Said::new(
                "broadcast_push.several",
                serde_json::json!({ "count": many.len(), "text": text }),
                text,
            ))
        }
    }
}

fn list(games: &[(String, String)]) -> String {
    games
        .iter()
        .map(|(g, why)| format!("{g}: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// lichess's words for a round with a source URL ("The relay has an upstream URL, and
/// cannot be pushed to."), and the words a later lila may use.
pub fn is_source_url_refusal(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    (t.contains("upstream") || t.contains("source url") || t.contains("source is"))
        && (t.contains("push") || t.contains("url"))
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
    /// The base URL's path, without a trailing `/`.
    prefix: String,
    authority: String,
}

impl Target {
    fn path(&self, round_id: &str) -> String {
        format!("{}/api/broadcast/round/{round_id}/push", self.prefix)
    }
}

fn target(base: &str) -> Result<Target, PushSetupError> {
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
        prefix: prefix.to_string(),
        authority: authority.to_string(),
    })
}

/// A hall round's games split between lichess rounds.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// Each lichess round's games (in `targets` order), in board order.
    pub parts: Vec<Vec<Arc<FeedGame>>>,
    /// The board ids of games no range takes.
    pub unplaced: Vec<String>,
}

/// Which games go to which lichess round: a game goes to the first range holding its board
/// number (ranges do not overlap: the configuration is checked); `None` takes every game.
pub fn split(games: &[Arc<FeedGame>], ranges: &[Option<BoardRange>]) -> Split {
    let mut out = Split {
        parts: vec![Vec::new(); ranges.len()],
        unplaced: Vec::new(),
    };
    for g in games {
        let home = ranges.iter().position(|r| match (r, g.info.board) {
            (None, _) => true,
            (Some(r), Some(b)) => r.contains(b),
            (Some(_), None) => false,
        });
        match home {
            Some(i) => out.parts[i].push(g.clone()),
            None => out.unplaced.push(g.board.clone()),
        }
    }
    out
}

/// When one lichess round is due a push (sans I/O, so it is tested without a clock): the
/// text changed since it was last given to lichess, or [`FORCE_EVERY`] has passed.
#[derive(Debug, Default, Clone)]
pub struct Schedule {
    given: Option<(String, std::time::Instant)>,
}

impl Schedule {
    /// Whether `key` (the hall round and the text's ETag) is to be pushed at `now`.
    pub fn due(&self, key: &str, now: std::time::Instant) -> bool {
        match &self.given {
            None => true,
            Some((k, at)) => k != key || now.saturating_duration_since(*at) >= FORCE_EVERY,
        }
    }

    /// lichess answered `key` at `now` (took it, or refused it for good).
    pub fn given(&mut self, key: String, now: std::time::Instant) {
        self.given = Some((key, now));
    }

    /// When the forced push of what was given last falls due.
    pub fn forced_at(&self) -> Option<std::time::Instant> {
        self.given.as_ref().map(|(_, at)| *at + FORCE_EVERY)
    }
}

/// The loop's "now" for the [`Schedule`]: tokio's clock, the same as the loop's sleeps (it
/// is the system's monotonic clock, except under tokio's paused time, where the test of
/// the forced push lets a minute pass without waiting for it).
fn schedule_now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// Where the `broadcast_push` alert goes: the hall's publisher (MQTT and the dashboard's
/// feed). None: logged only.
#[derive(Clone)]
pub struct AlertSink {
    pub publisher: Publisher,
    pub topics: Topics,
    /// This node (`[hall] node`): the alert is `broadcast-push-<node>`, its own topic.
    pub node: String,
}

impl AlertSink {
    /// This node's `broadcast_push` alert id.
    pub fn id(&self) -> String {
        crate::alert::node_alert_id(ALERT_ID, &self.node)
    }
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

/// Start pushing the current round to the lichess rounds of `settings`; `alerts` is where
/// the `broadcast_push` alert goes.
pub fn spawn(
    source: BroadcastSource,
    settings: &LichessSettings,
    alerts: Option<AlertSink>,
) -> Result<Push, PushSetupError> {
    let token =
        std::fs::read_to_string(&settings.token_file).map_err(|source| PushSetupError::Token {
            path: settings.token_file.clone(),
            source,
        })?;
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err(PushSetupError::EmptyToken(settings.token_file.clone()));
    }
    let target = target(&settings.base_url)?;
    let tls = if target.https {
        Some(tls_connector()?)
    } else {
        None
    };
    if let Some(a) = &alerts {
        // A problem the last run left standing is this run's to find again.
        a.publisher.clear_alert(&a.topics, &a.id());
    }
    let (tx, rx) = watch::channel(None);
    let client = Client { target, tls, token };
    let rounds = settings
        .targets()
        .into_iter()
        .map(|r| Lane {
            boards: r.boards,
            round_id: r.round_id,
            schedule: Schedule::default(),
            problem: None,
        })
        .collect();
    let task = tokio::spawn(run(source, client, rounds, alerts, tx));
    Ok(Push { reports: rx, task })
}

/// One lichess round the hall round goes to, and what its last push left.
struct Lane {
    boards: Option<BoardRange>,
    round_id: String,
    schedule: Schedule,
    /// What stands against it (refused games, a source URL, too many games).
    problem: Option<PushProblem>,
}

struct Client {
    target: Target,
    tls: Option<tokio_rustls::TlsConnector>,
    token: String,
}

impl Client {
    async fn post(&self, round_id: &str, body: Bytes) -> Result<(u16, Bytes), PushFailure> {
        tokio::time::timeout(TIMEOUT, self.post_now(round_id, body))
            .await
            .unwrap_or(Err(PushFailure::Timeout))
    }

    async fn post_now(&self, round_id: &str, body: Bytes) -> Result<(u16, Bytes), PushFailure> {
        let t = &self.target;
        let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port))
            .await
            .map_err(|e| PushFailure::Connect(format!("{}: {e}", t.authority)))?;
        let request = hyper::Request::post(t.path(round_id))
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
    mut lanes: Vec<Lane>,
    alerts: Option<AlertSink>,
    reports: watch::Sender<Option<PushReport>>,
) {
    let mut backoff = Duration::from_secs(1);
    let mut last_attempt: Option<tokio::time::Instant> = None;
    // The alert's message as last published (None: no alert standing).
    let mut alerted: Option<String> = None;
    let ranges: Vec<Option<BoardRange>> = lanes.iter().map(|l| l.boards).collect();
    loop {
        // A change, or a second passing: a delayed feed changes with time alone, and the
        // forced push comes with time alone.
        tokio::select! {
            alive = source.changed() => if !alive { return },
            _ = tokio::time::sleep(DEBOUNCE) => {}
        }
        if let Some(at) = last_attempt {
            tokio::time::sleep_until(at + DEBOUNCE).await;
        }
        let Ok(now) = source.round_at(Which::Current) else {
            continue;
        };
        let round = now.number;
        let split = split(&now.games, &ranges);
        let unplaced = (!split.unplaced.is_empty()).then(|| PushProblem::Unplaced {
            round,
            boards: split.unplaced.join(", "),
        });
        let mut retry = None;
        for (lane, games) in lanes.iter_mut().zip(split.parts) {
            if games.is_empty() {
                // This hall round has nothing for that lichess round.
                lane.problem = None;
                continue;
            }
            if games.len() > MAX_GAMES {
                let problem = PushProblem::TooMany {
                    round,
                    round_id: lane.round_id.clone(),
                    games: games.len(),
                };
                if lane.problem.as_ref() != Some(&problem) {
                    tracing::error!(round, "{problem}");
                    reports.send_replace(Some(PushReport::TooMany {
                        round,
                        round_id: lane.round_id.clone(),
                        games: games.len(),
                    }));
                }
                lane.problem = Some(problem);
                continue;
            }
            let rendered = source.render_games(&games, now.cut);
            let key = format!("{round} {}", rendered.etag);
            if !lane.schedule.due(&key, schedule_now()) {
                continue;
            }
            last_attempt = Some(tokio::time::Instant::now());
            let report = push_one(&client, lane, round, key, rendered.body, &mut backoff).await;
            if let PushReport::Failed { retry_in, .. } = &report {
                retry = Some(retry.map_or(*retry_in, |r: Duration| r.max(*retry_in)));
            }
            reports.send_replace(Some(report));
        }
        let problems: Vec<&PushProblem> = unplaced
            .iter()
            .chain(lanes.iter().filter_map(|l| l.problem.as_ref()))
            .collect();
        let said = problems_said(&problems);
        let message = said.as_ref().map(|s| s.message.clone());
        if message != alerted {
            alert(alerts.as_ref(), said, source.now());
            if message.is_none() {
                tracing::info!(round, "every game is pushed to lichess again");
            } else if let Some(u) = &unplaced {
                tracing::error!(round, "{u}");
            }
            alerted = message;
        }
        if let Some(pause) = retry {
            tokio::time::sleep(pause).await;
        }
    }
}

/// Push one lichess round's games and read lichess's answer; `lane` learns what stands.
async fn push_one(
    client: &Client,
    lane: &mut Lane,
    round: u32,
    key: String,
    body: Bytes,
    backoff: &mut Duration,
) -> PushReport {
    let round_id = lane.round_id.clone();
    let etag = key.rsplit(' ').next().unwrap_or_default().to_string();
    match client.post(&round_id, body).await {
        Ok((status, body)) if (200..300).contains(&status) => {
            *backoff = Duration::from_secs(1);
            lane.schedule.given(key, schedule_now());
            let games = outcomes(&body);
            tracing::info!(round, round_id = %round_id, games = games.len(), "pushed to lichess");
            let mut refused = Vec::new();
            let mut source_url = false;
            for g in &games {
                match &g.result {
                    Ok(moves) => {
                        tracing::debug!(game = %log_safe(&g.game), moves, "lichess took the game")
                    }
                    Err(e) => {
                        let why = log_safe(&e.to_string());
                        source_url |= is_source_url_refusal(&why);
                        tracing::warn!(round_id = %round_id, game = %log_safe(&g.game), "lichess refused the game: {why}");
                        refused.push((log_safe(&g.game), why));
                    }
                }
            }
            lane.problem = if source_url {
                let p = PushProblem::SourceUrl {
                    round_id: round_id.clone(),
                };
                tracing::error!(round, "{p}");
                Some(p)
            } else if refused.is_empty() {
                None
            } else {
                Some(PushProblem::GamesRefused {
                    round_id: round_id.clone(),
                    games: refused,
                })
            };
            PushReport::Pushed {
                round,
                round_id,
                etag,
                games,
            }
        }
        Ok((status, body)) if status == 429 || status >= 500 => {
            let reason = excerpt(&body);
            tracing::warn!(
                round,
                round_id = %round_id,
                status,
                "lichess push failed, retrying in {}s: {reason}",
                backoff.as_secs()
            );
            failed(round, round_id, Some(status), reason, backoff)
        }
        Ok((status, body)) => {
            lane.schedule.given(key, schedule_now());
            let body = excerpt(&body);
            let problem = if is_source_url_refusal(&body) {
                PushProblem::SourceUrl {
                    round_id: round_id.clone(),
                }
            } else {
                PushProblem::Refused {
                    round_id: round_id.clone(),
                    status,
                    body: body.clone(),
                }
            };
            tracing::error!(round, "{problem}");
            lane.problem = Some(problem.clone());
            PushReport::Refused {
                round,
                round_id,
                status,
                body,
                problem,
            }
        }
        Err(e) => {
            tracing::warn!(
                round,
                round_id = %round_id,
                "lichess push failed, retrying in {}s: {e}",
                backoff.as_secs()
            );
            failed(round, round_id, None, e.to_string(), backoff)
        }
    }
}

/// Raise the hall's `broadcast_push` alert with `message`, or clear it (`None`).
fn alert(sink: Option<&AlertSink>, said: Option<crate::alert::Said>, now: crate::rules::Millis) {
    let Some(sink) = sink else { return };
    let topic = sink.topics.alert(&sink.id());
    match said {
        None => sink.publisher.clear_alert(&sink.topics, &sink.id()),
        Some(said) => sink.publisher.json_retained(
            topic,
            &AlertPayload::said(
                sink.id(),
                None,
                AlertKind::BroadcastPush,
                Severity::Warning,
                said,
                now,
            ),
        ),
    }
}

fn failed(
    round: u32,
    round_id: String,
    status: Option<u16>,
    reason: String,
    backoff: &mut Duration,
) -> PushReport {
    let retry_in = *backoff;
    *backoff = (*backoff * 2).min(BACKOFF_MAX);
    PushReport::Failed {
        round,
        round_id,
        status,
        reason,
        retry_in,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn push_problems_are_said_as_data_one_by_one_or_counted() {
        let refused = PushProblem::GamesRefused {
            round_id: "AbCd1234".into(),
            games: vec![("A - B (3.5)".into(), "Invalid PGN".into())],
        };
        let too_many = PushProblem::TooMany {
            round: 3,
            round_id: "AbCd1234".into(),
            games: 120,
        };
        let one = problems_said(&[&refused]).map(|s| (s.code, s.listed(), s.message));
        assert_eq!(
            one,
            Some((
                "broadcast_push.games_refused",
                true,
                "lichess round AbCd1234 refused 1 game: A - B (3.5): Invalid PGN".to_string()
            ))
        );
        let each = [
            PushProblem::SourceUrl {
                round_id: "r".into(),
            },
            too_many.clone(),
            PushProblem::Unplaced {
                round: 3,
                boards: "9".into(),
            },
            PushProblem::Refused {
                round_id: "r".into(),
                status: 401,
                body: "no".into(),
            },
        ];
        for p in &each {
            let said = p.said();
            assert!(said.listed(), "{said:?}");
            assert_eq!(said.message, p.to_string());
        }
        let several = problems_said(&[&refused, &too_many]);
        assert_eq!(
            several
                .as_ref()
                .map(|s| (s.code, s.params["count"].clone())),
            Some(("broadcast_push.several", serde_json::json!(2)))
        );
        assert!(problems_said(&[]).is_none());
    }

    /// The forced push: the same text is not pushed again within a minute, and is at the
    /// minute; a change is pushed at once.
    #[test]
    fn the_same_text_is_pushed_again_after_sixty_seconds_and_a_change_at_once() {
        let t0 = Instant::now();
        let mut s = Schedule::default();
        assert!(s.due("1 a", t0), "never pushed");
        s.given("1 a".into(), t0);
        assert!(!s.due("1 a", t0 + Duration::from_secs(1)));
        assert!(!s.due("1 a", t0 + FORCE_EVERY - Duration::from_millis(1)));
        assert!(s.due("1 a", t0 + FORCE_EVERY), "forced at 60 s");
        assert!(s.due("1 b", t0 + Duration::from_secs(1)), "a change");
        assert_eq!(s.forced_at(), Some(t0 + FORCE_EVERY));
    }

    #[test]
    fn lichess_s_source_url_refusal_is_recognised() {
        assert!(is_source_url_refusal(
            "The relay has an upstream URL, and cannot be pushed to."
        ));
        assert!(is_source_url_refusal(
            r#"{"error":"The relay has an upstream URL, and cannot be pushed to."}"#
        ));
        assert!(!is_source_url_refusal("No such token"));
        assert!(!is_source_url_refusal("Invalid PGN: no moves"));
    }

    #[test]
    fn board_ranges_read_and_compare() {
        let r = BoardRange::parse("101-200").expect("a range");
        assert_eq!((r.first, r.last, r.len()), (101, 200, 100));
        assert_eq!(
            BoardRange::parse("7").map(|r| r.to_string()),
            Ok("7".into())
        );
        assert!(r.overlaps(&BoardRange::parse("200-300").expect("a range")));
        assert!(!r.overlaps(&BoardRange::parse("1-100").expect("a range")));
        for bad in ["", "a-3", "0-5", "9-2", "1-", "-4", "1-2-3"] {
            assert!(BoardRange::parse(bad).is_err(), "{bad}");
        }
    }
}
