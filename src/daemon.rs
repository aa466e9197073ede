//! `hallclock run`: the configuration turned into the hall's settings, logging, signals.

use std::time::Duration;

use crate::config::Config;
use crate::hall::{self, BoardSettings, HallError, HallSettings};
use crate::link::LinkConfig;
use crate::mqtt::MqttSettings;
use crate::mqtt::client::BrokerState;

/// The hall's settings from a validated configuration: the ids become [`Id`]s here, the
/// edge where the configuration's text enters the hall (validation has already said
/// why an id is bad, so the `Err` is for a configuration that skipped it).
///
/// [`Id`]: crate::id::Id
pub fn settings(config: &Config) -> Result<HallSettings, crate::id::BadId> {
    let mut link = LinkConfig::new("");
    link.silence_timeout = Duration::from_millis(config.link.liveness_timeout_ms);
    link.ack_timeout = Duration::from_millis(config.link.ack_timeout_ms);
    link.max_resends = config.link.max_resends;
    link.reopen_backoff_max = Duration::from_millis(config.link.reopen_backoff_max_ms);
    let boards = config
        .boards
        .iter()
        .zip(crate::config::board_numbers(&config.boards))
        .map(|(b, number)| {
            Ok(BoardSettings {
                id: crate::id::Id::parse(&b.id)?,
                port: b.port.clone(),
                white: b.white,
                number,
                mode: b.mode.unwrap_or(config.defaults.mode),
            })
        })
        .collect::<Result<_, crate::id::BadId>>()?;
    Ok(HallSettings {
        hall: crate::id::Id::parse(&config.hall.id)?,
        node: crate::id::Id::parse(&config.hall.node)?,
        boards,
        defaults: config.defaults.clone(),
        link,
        mqtt: MqttSettings {
            host: config.broker.host.clone(),
            port: config.broker.port,
            client_id: config.client_id(),
            username: config.broker.username.clone(),
            password: config.broker.password.clone(),
            tls: config.broker.tls,
            tls_ca: config.broker.ca_file.clone(),
            client_cert: config
                .broker
                .client_cert
                .clone()
                .zip(config.broker.client_key.clone()),
            keep_alive: Duration::from_secs(u64::from(config.broker.keep_alive_secs)),
            max_queued: config.broker.max_queued,
        },
        state_dir: config.hall.state_dir.clone(),
        sync_window: Duration::from_millis(config.hall.sync_window_ms),
        segment_size: 16 << 20,
        heartbeat: heartbeat(),
        security: config.security().unwrap_or_else(|e| {
            // Fail closed: no account, so every command is refused and says why.
            tracing::error!(
                "{e}: every command will be refused; add accounts with `hallclock arbiter add`"
            );
            crate::intake::auth::Security::Signed {
                arbiters: crate::intake::auth::Arbiters::default(),
                window: crate::intake::auth::DEFAULT_WINDOW,
            }
        }),
        broadcast: config.broadcast.clone(),
        clock_texts: crate::hall::board::clock_texts::ClockTexts::of(&config.web.language),
    })
}

/// Who may log in to the dashboard: the hall's arbiters (those with a password). With
/// `commands = "open"` the hall holds no accounts, so the file is read for the dashboard
/// alone, when there is one.
pub fn web_arbiters(
    config: &Config,
    security: &crate::intake::auth::Security,
) -> crate::intake::auth::Arbiters {
    match security {
        crate::intake::auth::Security::Signed { arbiters, .. } => arbiters.clone(),
        crate::intake::auth::Security::Open => {
            crate::intake::auth::Arbiters::load(&config.security.arbiters).unwrap_or_default()
        }
    }
}

/// Start the dashboard of `[web]` for a running hall, with the accounts that may log in.
/// A dashboard that cannot start is logged and the hall runs on without it: the clocks
/// matter more.
pub async fn start_web(
    config: &Config,
    running: &hall::RunningHall,
    arbiters: crate::intake::auth::Arbiters,
) -> Option<crate::web::RunningWeb> {
    let w = &config.web;
    if !w.enabled {
        return None;
    }
    let Ok(listen) = w.listen.parse() else {
        tracing::error!(listen = %w.listen, "web.listen is not address:port; no dashboard");
        return None;
    };
    if arbiters.accounts().all(|a| a.password.is_none()) {
        tracing::warn!(
            "no arbiter has a dashboard password: nobody can log in (`hallclock arbiter reset ID --password`); /public works"
        );
    }
    let settings = crate::web::WebSettings {
        listen,
        secure_cookies: w.secure_cookies,
    };
    let state =
        crate::web::AppState::for_hall(&config.hall.id, running, arbiters.into(), w.secure_cookies);
    let screens = Some(w.language.as_str()).filter(|l| !l.is_empty());
    let (languages, errors) = crate::i18n::Languages::load(&w.languages_dir, screens);
    for e in errors {
        // check-config says it too; the page is served without the file.
        tracing::error!("web.languages_dir: {e}; left out");
    }
    state.set_languages(languages);
    if !w.trusted_proxy.is_empty() {
        match w.trusted_proxy.parse() {
            Ok(proxy) => state.trust_proxy(proxy),
            // check-config refuses it; a daemon started anyway trusts no header.
            Err(_) => tracing::error!(
                trusted_proxy = %w.trusted_proxy.escape_debug(),
                "web.trusted_proxy is not an IP address; X-Forwarded-For is not trusted"
            ),
        }
    }
    match crate::web::start(&settings, state).await {
        Ok(web) => Some(web),
        Err(e) => {
            tracing::error!("dashboard not started: {e}");
            None
        }
    }
}

/// Once a second, or twice per systemd watchdog period when that is shorter.
fn heartbeat() -> Duration {
    let mut usec = 0;
    let second = Duration::from_secs(1);
    if sd_notify::watchdog_enabled(false, &mut usec) && usec > 0 {
        second
            .min(Duration::from_micros(usec / 2))
            .max(Duration::from_millis(50))
    } else {
        second
    }
}

/// Under systemd (stderr connected to the journal) log into the journal with priorities,
/// so `journalctl -p warning` shows what an operator must see; otherwise human-readable
/// lines on stderr.
pub fn init_logging(level: &str) {
    let level = match level {
        "error" => tracing::Level::ERROR,
        "warn" => tracing::Level::WARN,
        "debug" => tracing::Level::DEBUG,
        "trace" => tracing::Level::TRACE,
        _ => tracing::Level::INFO,
    };
    if systemd_journal_logger::connected_to_journal()
        && let Ok(journal) = systemd_journal_logger::JournalLog::new()
        && journal
            .with_syslog_identifier("hallclock".into())
            .install()
            .is_ok()
    {
        // tracing's "log" feature forwards events to the `log` logger when no tracing
        // subscriber is installed; the level filter is `log`'s.
        log::set_max_level(match level {
            tracing::Level::ERROR => log::LevelFilter::Error,
            tracing::Level::WARN => log::LevelFilter::Warn,
            tracing::Level::INFO => log::LevelFilter::Info,
            tracing::Level::DEBUG => log::LevelFilter::Debug,
            tracing::Level::TRACE => log::LevelFilter::Trace,
        });
        return;
    }
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// Run until SIGTERM or SIGINT; SIGHUP reloads what can change live. Tells systemd when
/// it is ready (journal replayed, broker attempted, links started), what it is doing
/// (STATUS), and that it makes progress (WATCHDOG, only from the hall's heartbeat, which
/// needs the coordinator and every board actor to answer).
pub async fn run(config: Config, path: std::path::PathBuf) -> Result<(), HallError> {
    let settings = settings(&config)?;
    tracing::info!(
        hall = %settings.hall,
        boards = settings.boards.len(),
        broker = %format!("{}:{}", settings.mqtt.host, settings.mqtt.port),
        "hallclock starting"
    );
    let arbiters = web_arbiters(&config, &settings.security);
    let settings_hall = settings.hall.to_string();
    let running = hall::start(settings)?;
    let web = start_web(&config, &running, arbiters).await;
    // Off by default; a push that cannot start (no token) does not stop the clocks.
    let _push = config.broadcast.lichess.as_ref().and_then(|l| {
        let alerts = crate::broadcast::push::AlertSink {
            publisher: running.publisher.clone(),
            topics: crate::mqtt::Topics::new(&settings_hall),
            node: running.node.clone(),
        };
        match crate::broadcast::push::spawn(running.broadcast.clone(), l, Some(alerts)) {
            Ok(p) => {
                let rounds: Vec<String> = l
                    .targets()
                    .iter()
                    .map(|r| match r.boards {
                        Some(b) => format!("boards {b} to {}", r.round_id),
                        None => r.round_id.clone(),
                    })
                    .collect();
                tracing::info!(rounds = %rounds.join(", "), "pushing the broadcast to lichess");
                Some(p)
            }
            Err(e) => {
                tracing::error!("no push to lichess: {e}");
                None
            }
        }
    });
    // READY only after the broker was tried (a refusal is fine: the hall still runs).
    let _ = tokio::time::timeout(Duration::from_secs(10), running.publisher.first_attempt()).await;
    let mut broker = running.publisher.broker_state();
    let mut last_health = String::from("starting");
    let line = status_line(&broker.borrow_and_update(), &last_health);
    notify(&[
        sd_notify::NotifyState::Ready,
        sd_notify::NotifyState::Status(&line),
    ]);
    match &*broker.borrow() {
        BrokerState::Trouble(why) => {
            tracing::warn!("ready, but without the MQTT broker: {why}");
        }
        _ => tracing::info!("ready"),
    }
    let mut health = running.health.clone();
    let mut config = config;
    use tokio::signal::unix::{SignalKind, signal};
    let (mut term, mut int, mut hup) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(t), Ok(i), Ok(h)) => (t, i, h),
        _ => {
            tracing::error!("cannot install signal handlers; stopping");
            running.stop().await;
            return Ok(());
        }
    };
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            _ = hup.recv() => {
                config = reload(&running, config, &path).await;
            }
            changed = health.changed() => {
                if changed.is_err() {
                    break;
                }
                let status = health.borrow_and_update().clone();
                if let Some(h) = status {
                    last_health = h.status;
                    let line = status_line(&broker.borrow(), &last_health);
                    notify(&[
                        sd_notify::NotifyState::Watchdog,
                        sd_notify::NotifyState::Status(&line),
                    ]);
                }
            }
            changed = broker.changed() => {
                if changed.is_err() {
                    break;
                }
                let line = status_line(&broker.borrow_and_update(), &last_health);
                notify(&[sd_notify::NotifyState::Status(&line)]);
            }
        }
    }
    tracing::info!("stopping");
    notify(&[sd_notify::NotifyState::Stopping]);
    running.stop().await;
    if let Some(web) = web {
        // The feeds ended with the hall; requests in flight get a moment to finish.
        let _ = tokio::time::timeout(Duration::from_secs(5), web.task).await;
    }
    Ok(())
}

/// systemd's STATUS: broker trouble first (`systemctl status` shows one line), then the
/// hall's heartbeat line.
fn status_line(broker: &BrokerState, hall: &str) -> String {
    match broker {
        BrokerState::Trouble(why) => format!("MQTT broker: {why}; {hall}"),
        BrokerState::Connecting => format!("connecting to the MQTT broker; {hall}"),
        BrokerState::Connected => hall.to_string(),
    }
}

fn notify(state: &[sd_notify::NotifyState]) {
    // Not under systemd (no NOTIFY_SOCKET): nothing to do.
    let _ = sd_notify::notify(false, state);
}

/// SIGHUP: re-read the file; apply boards added or removed and new event defaults; say
/// what else changed and needs a restart.
async fn reload(running: &hall::RunningHall, old: Config, path: &std::path::Path) -> Config {
    notify(&[sd_notify::NotifyState::Reloading]);
    let new = match Config::load(Some(path)) {
        Ok((c, warnings)) => {
            for w in warnings {
                tracing::warn!("reload: {w}");
            }
            c
        }
        Err(e) => {
            tracing::error!("reload refused, the configuration is invalid; nothing changed:\n{e}");
            notify(&[sd_notify::NotifyState::Ready]);
            return old;
        }
    };
    let s = match settings(&new) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("reload refused; nothing changed: {e}");
            notify(&[sd_notify::NotifyState::Ready]);
            return old;
        }
    };
    for line in running.reload(s.boards.clone(), s.defaults.clone()).await {
        tracing::info!("reload: {line}");
    }
    let mut needs_restart = Vec::new();
    if new.hall != old.hall {
        needs_restart.push("[hall]");
    }
    if new.broker != old.broker {
        needs_restart.push("[broker]");
    }
    if new.link != old.link {
        needs_restart.push("[link]");
    }
    if new.log != old.log {
        needs_restart.push("[log]");
    }
    if new.web != old.web {
        needs_restart.push("[web]");
    }
    if !needs_restart.is_empty() {
        tracing::warn!(
            "reload: changes to {} need a restart (systemctl restart hallclock); not applied",
            needs_restart.join(", ")
        );
    }
    notify(&[sd_notify::NotifyState::Ready]);
    // Keep what runs: the sections that need a restart stay as they were.
    Config {
        hall: old.hall,
        broker: old.broker,
        link: old.link,
        log: old.log,
        web: old.web,
        ..new
    }
}
