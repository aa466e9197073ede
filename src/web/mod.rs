//! The arbiters' dashboard, served by the daemon (docs/DASHBOARD.md): axum on the daemon's
//! runtime, compiled-in assets, the live feed over SSE (the MQTT payloads, from the same
//! publisher), login sessions, and command POSTs through the hall's one intake.

pub mod assets;
pub mod commands;
pub mod error;
pub mod feed;
pub mod limiter;
pub mod session;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use tokio::sync::mpsc;

use crate::hall::RunningHall;
use crate::intake::Incoming;
use crate::mqtt::feed::LocalFeed;

use crate::intake::auth::Arbiters;

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
    feed: LocalFeed,
    intake: mpsc::Sender<Incoming>,
    sessions: session::Sessions,
    arbiters: Arc<Arbiters>,
    history: feed::History,
    secure_cookies: bool,
    /// The hall's broadcast feed (`/broadcast/…`, docs/BROADCAST.md), when there is one.
    broadcast: Option<crate::broadcast::BroadcastSource>,
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
        AppState::build(hall, feed, intake, arbiters, secure_cookies, None)
    }

    fn build(
        hall: &str,
        feed: LocalFeed,
        intake: mpsc::Sender<Incoming>,
        arbiters: Arc<Arbiters>,
        secure_cookies: bool,
        broadcast: Option<crate::broadcast::BroadcastSource>,
    ) -> AppState {
        let history = feed::History::default();
        history.follow(&feed);
        AppState {
            inner: Arc::new(Inner {
                hall: hall.to_string(),
                feed,
                intake,
                sessions: session::Sessions::default(),
                arbiters,
                history,
                secure_cookies,
                broadcast,
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
        )
    }

    pub fn hall(&self) -> &str {
        &self.inner.hall
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

/// The whole site. The only constructor: the daemon, the demo and the tests all use it.
pub fn router(state: AppState) -> Router {
    let pages = Router::new()
        .route("/", get(assets::index))
        .route("/login", get(assets::index))
        .route("/round", get(assets::index))
        .route("/alerts", get(assets::index))
        .route("/public", get(assets::index))
        .route("/board/{board}", get(assets::index))
        .route("/assets/{file}", get(assets::asset));
    let api = Router::new()
        .route("/api/login", post(commands::login))
        .route("/api/logout", post(commands::logout))
        .route("/api/me", get(commands::me))
        .route("/api/tc", get(commands::tc_check))
        .route("/api/trf/preview", post(commands::trf_preview))
        .route("/api/feed", get(feed::arbiters))
        .route("/api/public/feed", get(feed::public))
        .route("/api/board/{board}/events", get(feed::history))
        .route("/api/boards/events", get(feed::all_history))
        .route("/api/public/boards/events", get(feed::public_all_history))
        .route(
            "/api/public/board/{board}/events",
            get(feed::public_history),
        )
        .route("/api/board/{board}/command", post(commands::board))
        .route("/api/hall/command", post(commands::hall));
    let broadcast = state.inner.broadcast.clone();
    let site = pages
        .merge(api)
        // A 1000-board start_round with names and FIDE ids is well under this.
        .layer(axum::extract::DefaultBodyLimit::max(1 << 20))
        .with_state(state);
    // The broadcast feed: public like /public, read-only, with its own state.
    match broadcast {
        Some(source) => site.merge(crate::broadcast::router(source)),
        None => site,
    }
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
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
        {
            tracing::error!("web server: {e}");
        }
    });
    tracing::info!(%addr, "dashboard listening");
    Ok(RunningWeb { addr, task })
}
