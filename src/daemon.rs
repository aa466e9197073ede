//! `hallclock run`: the configuration turned into the hall's settings, logging, signals.

use std::time::Duration;

use crate::config::Config;
use crate::hall::{self, BoardSettings, GameDefaults, HallError, HallSettings};
use crate::link::LinkConfig;
use crate::mqtt::MqttSettings;

/// The hall's settings from a validated configuration.
pub fn settings(config: &Config) -> HallSettings {
    let d = &config.defaults;
    let mut link = LinkConfig::new("");
    link.silence_timeout = Duration::from_millis(config.link.liveness_timeout_ms);
    link.ack_timeout = Duration::from_millis(config.link.ack_timeout_ms);
    link.max_resends = config.link.max_resends;
    link.reopen_backoff_max = Duration::from_millis(config.link.reopen_backoff_max_ms);
    HallSettings {
        hall: config.hall.id.clone(),
        boards: config
            .boards
            .iter()
            .map(|b| BoardSettings {
                id: b.id.clone(),
                port: b.port.clone(),
                white: b.white,
            })
            .collect(),
        defaults: GameDefaults {
            time_control: d.time_control.clone(),
            default_time: d.default_time,
            flag_mode: d.flag_mode,
            both_absent: d.both_absent,
            clock: d.clock,
            discrepancy_margin: d.discrepancy_margin,
        },
        link,
        mqtt: MqttSettings {
            host: config.broker.host.clone(),
            port: config.broker.port,
            client_id: config.client_id(),
            username: config.broker.username.clone(),
            password: config.broker.password.clone(),
            tls: config.broker.tls,
            tls_ca: config.broker.ca_file.clone(),
            keep_alive: Duration::from_secs(u64::from(config.broker.keep_alive_secs)),
            max_queued: config.broker.max_queued,
        },
        state_dir: config.hall.state_dir.clone(),
        sync_window: Duration::from_millis(20),
        segment_size: 16 << 20,
    }
}

/// Log to stderr, human-readable, at the configured level.
pub fn init_logging(level: &str) {
    let level = match level {
        "error" => tracing::Level::ERROR,
        "warn" => tracing::Level::WARN,
        "debug" => tracing::Level::DEBUG,
        "trace" => tracing::Level::TRACE,
        _ => tracing::Level::INFO,
    };
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// Run until SIGTERM or SIGINT; then publish `offline` and stop. The clocks are left
/// running as they are: the hardware keeps time while the daemon is away.
pub async fn run(config: Config) -> Result<(), HallError> {
    let settings = settings(&config);
    tracing::info!(
        hall = %settings.hall,
        boards = settings.boards.len(),
        broker = %format!("{}:{}", settings.mqtt.host, settings.mqtt.port),
        "hallclock starting"
    );
    let running = hall::start(settings)?;
    wait_for_stop().await;
    tracing::info!("stopping");
    running.stop().await;
    Ok(())
}

async fn wait_for_stop() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
