//! The arbiters' dashboard, served by the daemon (docs/DASHBOARD.md): axum on the daemon's
//! runtime, compiled-in assets, the live feed over SSE (the MQTT payloads, from the same
//! publisher), login sessions, and command POSTs through the hall's one intake.

pub mod assets;
pub mod commands;
pub mod error;
pub mod feed;
pub use crate::i18n;
pub mod limiter;
pub mod seal_read;
pub mod session;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::routing::{get, post};
use tokio::sync::mpsc;

use crate::hall::RunningHall;
use crate::intake::Incoming;
use crate::mqtt::feed::LocalFeed;
use crate::mqtt::{Publisher, Topics};
use crate::timebase::Timebase;

use crate::intake::auth::Arbiters;

/// A page as served: (html, etag).
type Page = (String, String);

/// `[web]`: where the dashboard listens.
#[derive(Debug, Clone)]
pub struct WebSettings {
    pub listen: SocketAddr,
    /// Mark the cookie `Secure` on every response (it is anyway on requests a proxy
    /// forwarded as `https`).
    pub secure_cookies: bool,
}

struct Inner {
    hall: String,
    /// This node's name (`None` for a dashboard without a hall): the page tells its own
    /// boards from the other nodes' by it.
    node: Option<String>,
    feed: LocalFeed,
    intake: mpsc::Sender<Incoming>,
    sessions: session::Sessions,
    arbiters: Arc<Arbiters>,
    history: feed::History,
    secure_cookies: bool,
    /// The hall's broadcast feed (`/broadcast/…`, docs/BROADCAST.md), when there is one.
    broadcast: Option<crate::broadcast::BroadcastSource>,
    /// Failed logins per client and per account (`limiter.rs`); in memory, so a restart
    /// clears every lockout.
    limiter: Mutex<limiter::LoginLimiter>,
    /// The limiter's clock and the alerts' `since`.
    timebase: Timebase,
    /// Where the `auth_failures` alert goes: the hall's publisher (MQTT and this feed).
    /// None for a dashboard without a hall (tests of the router): logged only.
    alerts: Option<(Publisher, Topics, String)>,
    /// Bumped at every lockout alert, so the timer that clears it clears only its own.
    alert_generation: std::sync::atomic::AtomicU64,
    /// `web.trusted_proxy`: requests from this address are counted under the client
    /// their `X-Forwarded-For` names. Set once, before serving.
    trusted_proxy: OnceLock<IpAddr>,
    /// The page's languages (`web::i18n`): the shipped ones unless the daemon set the
    /// operator's before serving.
    languages: OnceLock<i18n::Languages>,
    /// The page as served per (language, hall screen or not), built on first use:
    /// (html, etag).
    pages: Mutex<std::collections::HashMap<(String, bool), Arc<Page>>>,
}

/// What every handler shares; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl AppState {
    /// The state for a hall: its feed and intake, and the accounts that may log in (those
    /// with a password). Starts following the feed for the boards' recent events.
    pub fn new(
        hall: &str,
        feed: LocalFeed,
        intake: mpsc::Sender<Incoming>,
        arbiters: Arc<Arbiters>,
        secure_cookies: bool,
    ) -> AppState {
        AppState::build(hall, feed, intake, arbiters, secure_cookies, None, None)
    }

    /// The hall's own clocks instead of a fresh one: `/api/me`'s `civil_ms` is then the
    /// hall's time, with a correction the chief arbiter set.
    fn with_timebase(mut self, timebase: Timebase) -> AppState {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.timebase = timebase;
        }
        self
    }

    fn build(
        hall: &str,
        feed: LocalFeed,
        intake: mpsc::Sender<Incoming>,
        arbiters: Arc<Arbiters>,
        secure_cookies: bool,
        broadcast: Option<crate::broadcast::BroadcastSource>,
        alerts: Option<(Publisher, String)>,
    ) -> AppState {
        let history = feed::History::default();
        history.follow(&feed);
        let node = alerts.as_ref().map(|(_, node)| node.clone());
        // This node's own `auth_failures` topic: each node's dashboard locks out on its own.
        let alerts = alerts.map(|(p, node)| {
            let id = crate::alert::node_alert_id(AUTH_ALERT_ID, &node);
            (p, Topics::new(hall), id)
        });
        if let Some((publisher, topics, id)) = &alerts {
            // A restart forgot every lockout: an `auth_failures` alert the broker kept from
            // this node's last run no longer stands (the hall leaves hall-wide alerts to
            // their room; another node's is that node's).
            publisher.clear_alert(topics, id);
        }
        AppState {
            inner: Arc::new(Inner {
                hall: hall.to_string(),
                node,
                feed,
                intake,
                sessions: session::Sessions::default(),
                arbiters,
                history,
                secure_cookies,
                broadcast,
                limiter: Mutex::new(limiter::LoginLimiter::default()),
                timebase: Timebase::start(),
                alerts,
                alert_generation: std::sync::atomic::AtomicU64::new(0),
                trusted_proxy: OnceLock::new(),
                languages: OnceLock::new(),
                pages: Mutex::new(std::collections::HashMap::new()),
            }),
        }
    }

    /// The state for a running hall.
    pub fn for_hall(
        hall: &str,
        running: &RunningHall,
        arbiters: Arc<Arbiters>,
        secure_cookies: bool,
    ) -> AppState {
        AppState::build(
            hall,
            running.publisher.feed().clone(),
            running.intake.clone(),
            arbiters,
            secure_cookies,
            Some(running.broadcast.clone()),
            Some((running.publisher.clone(), running.node.clone())),
        )
        .with_timebase(running.timebase)
    }

    /// Trust `X-Forwarded-For` on requests from `proxy` (`web.trusted_proxy`), before
    /// serving; a second call changes nothing.
    pub fn trust_proxy(&self, proxy: IpAddr) {
        let _ = self.inner.trusted_proxy.set(proxy);
    }

    /// Serve these languages (`[web] language` and the operator's catalogues), before
    /// serving; a second call changes nothing.
    pub fn set_languages(&self, languages: i18n::Languages) {
        let _ = self.inner.languages.set(languages);
    }

    pub fn languages(&self) -> &i18n::Languages {
        self.inner.languages.get_or_init(i18n::Languages::default)
    }

    /// The page in `lang`, rendered once per language.
    pub fn page(&self, lang: &str, screen: bool) -> Arc<Page> {
        let mut pages = self
            .inner
            .pages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pages
            .entry((lang.to_string(), screen))
            .or_insert_with(|| Arc::new(assets::render_index(self.languages(), lang, screen)))
            .clone()
    }

    pub fn trusted_proxy(&self) -> Option<IpAddr> {
        self.inner.trusted_proxy.get().copied()
    }

    /// The login limiter, under its lock (never held across an await).
    pub fn limiter(&self) -> std::sync::MutexGuard<'_, limiter::LoginLimiter> {
        self.inner
            .limiter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn timebase(&self) -> Timebase {
        self.inner.timebase
    }

    /// Raise the hall's `auth_failures` alert (retained, `board: null`), and clear it when
    /// the lockout it reports ends, unless a newer one replaced it. Without a hall, the
    /// log line the caller wrote is all there is.
    pub fn raise_auth_alert(&self, said: crate::alert::Said) {
        use std::sync::atomic::Ordering;
        let Some((publisher, topics, id)) = &self.inner.alerts else {
            return;
        };
        let alert = crate::mqtt::payload::AlertPayload::said(
            id.clone(),
            None,
            crate::alert::AlertKind::AuthFailures,
            crate::alert::Severity::Warning,
            said,
            self.inner.timebase.now(),
        );
        publisher.json_retained(topics.alert(id), &alert);
        let generation = self.inner.alert_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let inner = Arc::downgrade(&self.inner);
        let lockout =
            std::time::Duration::from_millis(u64::try_from(limiter::LOCKOUT.0).unwrap_or(u64::MAX));
        tokio::spawn(async move {
            tokio::time::sleep(lockout).await;
            // The dashboard is gone (the daemon stopped): nothing to clear.
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let Some((publisher, topics, id)) = &inner.alerts else {
                return;
            };
            if inner.alert_generation.load(Ordering::SeqCst) == generation {
                publisher.clear_alert(topics, id);
            }
        });
    }

    pub fn hall(&self) -> &str {
        &self.inner.hall
    }
    pub fn node(&self) -> Option<&str> {
        self.inner.node.as_deref()
    }
    pub fn feed(&self) -> &LocalFeed {
        &self.inner.feed
    }
    pub fn intake(&self) -> &mpsc::Sender<Incoming> {
        &self.inner.intake
    }
    pub fn sessions(&self) -> &session::Sessions {
        &self.inner.sessions
    }
    pub fn arbiters(&self) -> Arc<Arbiters> {
        self.inner.arbiters.clone()
    }
    pub fn history(&self) -> &feed::History {
        &self.inner.history
    }
    pub fn secure_cookies(&self) -> bool {
        self.inner.secure_cookies
    }
}

/// The `auth_failures` alert's base id: node `<node>` raises `alert/auth-failures-<node>`,
/// one per node (its dashboard's lockouts), the latest lockout's.
pub const AUTH_ALERT_ID: &str = "auth-failures";

/// The whole site. The only constructor: the daemon, the demo and the tests all use it.
pub fn router(state: AppState) -> Router {
    let pages = Router::new()
        .route("/", get(assets::index))
        .route("/login", get(assets::index))
        .route("/round", get(assets::index))
        .route("/alerts", get(assets::index))
        .route("/public", get(assets::index))
        .route("/public/players", get(assets::index))
        .route("/public/results", get(assets::index))
        .route("/public/clock", get(assets::index))
        .route("/board/{board}", get(assets::index))
        .route("/assets/{file}", get(assets::asset))
        .route("/favicon.ico", get(assets::favicon));
    let api = Router::new()
        .route("/api/login", post(commands::login))
        .route("/api/logout", post(commands::logout))
        .route("/api/me", get(commands::me))
        .route("/api/language", post(commands::language))
        .route("/api/tc", get(commands::tc_check))
        .route("/api/trf/preview", post(commands::trf_preview))
        .route("/api/seal/read", post(seal_read::read))
        .route("/api/feed", get(feed::arbiters))
        .route("/api/public/feed", get(feed::public))
        .route("/api/public/time", get(public_time))
        .route("/api/board/{board}/events", get(feed::history))
        .route("/api/boards/events", get(feed::all_history))
        .route("/api/public/boards/events", get(feed::public_all_history))
        .route(
            "/api/public/board/{board}/events",
            get(feed::public_history),
        )
        .route("/api/board/{board}/command", post(commands::board))
        .route("/api/hall/command", post(commands::hall))
        .route("/api/hall/time", post(commands::hall_time));
    let broadcast = state.inner.broadcast.clone();
    let site = pages
        .merge(api)
        // A 1000-board start_round with names and FIDE ids is well under this.
        .layer(axum::extract::DefaultBodyLimit::max(1 << 20))
        // gzip for whoever asks for it (every browser): the move lists and the assets are
        // text and shrink five- to tenfold; the feed (text/event-stream) is left as it is,
        // since a compressor would hold its messages back.
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(state);
    // The broadcast feed: public like /public, read-only, with its own state.
    match broadcast {
        Some(source) => site.merge(crate::broadcast::router(source)),
        None => site,
    }
}

/// `GET /api/public/time`: the hall's civil clock, for a hall screen's countdown and the
/// end of an announcement (a screen has no login, so no `/api/me`).
async fn public_time(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "civil_ms": state.timebase().civil().0 }))
}

/// A running web server.
pub struct RunningWeb {
    pub addr: SocketAddr,
    pub task: tokio::task::JoinHandle<()>,
}

/// Errors that stop the dashboard from starting (the hall runs on without it).
#[derive(Debug, thiserror::Error)]
pub enum WebStartError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Listen and serve until the daemon stops (the feed's stop signal ends the open feeds
/// first, so shutdown never waits on a dashboard left open).
pub async fn start(settings: &WebSettings, state: AppState) -> Result<RunningWeb, WebStartError> {
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|source| WebStartError::Bind {
            addr: settings.listen,
            source,
        })?;
    let addr = listener.local_addr().unwrap_or(settings.listen);
    let mut closed = state.feed().closed();
    let app = router(state);
    let task = tokio::spawn(async move {
        let stop = async move {
            let _ = closed.wait_for(|c| *c).await;
        };
        // With the peer's address (`ConnectInfo`): the login limiter counts by client.
        if let Err(e) = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(stop)
        .await
        {
            tracing::error!("web server: {e}");
        }
    });
    tracing::info!(%addr, "dashboard listening");
    Ok(RunningWeb { addr, task })
}
