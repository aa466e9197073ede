//! What a connection to the broker needs: the settings, the options rumqttc is given,
//! what went wrong said so that an operator knows what to fix, and the CLI's one-off read
//! of the retained topics. The long-lived connection itself is `client`.

use std::path::PathBuf;
use std::time::Duration;

use rumqttc::{Event, MqttOptions, Packet, QoS, TlsConfiguration, Transport};

/// How to reach the broker.
#[derive(Debug, Clone)]
pub struct MqttSettings {
    pub host: String,
    pub port: u16,
    pub client_id: String,
    pub username: Option<String>,
    pub password: Option<String>,
    /// TLS to the broker.
    pub tls: bool,
    /// CA certificate(s) (PEM) for TLS; `None` = the system's trusted roots.
    pub tls_ca: Option<PathBuf>,
    /// Mutual TLS: the daemon's certificate chain and its private key (PEM).
    pub client_cert: Option<(PathBuf, PathBuf)>,
    pub keep_alive: Duration,
    /// Events kept while the broker is unreachable; beyond it the oldest are dropped
    /// (retained states are never dropped: only the newest per topic is kept anyway).
    pub max_queued: usize,
}

/// Errors that stop the MQTT task from starting at all.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    #[error("broker TLS CA file {path}: {source}")]
    Ca {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("broker TLS client certificate or key {path}: {source}")]
    ClientCert {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the MQTT connection's thread could not be started: {0}")]
    Thread(std::io::Error),
}

/// What went wrong with a connection attempt, said so that an operator knows what to fix.
pub(super) fn trouble(e: &rumqttc::ConnectionError) -> String {
    use rumqttc::{ConnectReturnCode, ConnectionError};
    match e {
        ConnectionError::ConnectionRefused(
            code @ (ConnectReturnCode::BadUserNamePassword | ConnectReturnCode::NotAuthorized),
        ) => format!(
            "the broker refused the credentials ({code:?}): check broker.username and broker.password"
        ),
        ConnectionError::ConnectionRefused(code) => {
            format!("the broker refused the connection ({code:?})")
        }
        ConnectionError::Tls(t) => format!(
            "TLS failed ({t}): check broker.tls, broker.ca_file, broker.client_cert and that the port is the broker's TLS listener"
        ),
        // The broker's alert after the handshake (it wanted our certificate) comes in an
        // I/O error: it is a TLS failure all the same.
        ConnectionError::Io(io)
            if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some()) =>
        {
            format!(
                "TLS failed ({io}): check broker.ca_file, broker.client_cert and broker.client_key, and that the broker accepts this certificate"
            )
        }
        ConnectionError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "unreachable: nothing listens there (connection refused)".into()
        }
        ConnectionError::Io(io) => format!("unreachable ({io})"),
        ConnectionError::NetworkTimeout => "unreachable (no answer: timed out)".into(),
        other => other.to_string(),
    }
}

/// The connection options `settings` ask for: the broker, credentials, TLS, keep-alive and
/// packet sizes (the daemon adds its last will and in-flight window).
pub(super) fn options(settings: &MqttSettings) -> Result<MqttOptions, MqttError> {
    let mut opts = MqttOptions::new(&settings.client_id, &settings.host, settings.port);
    // Incoming: rumqttc drops the connection on a packet over its limit, and a retained one
    // comes back at every resubscription (46 reconnections in 10 s, issue 11). So the limit
    // is MQTT's own largest packet: nothing a broker can deliver disconnects us; what is too
    // large is answered `too_large`. The broker's `max_packet_size` (packaging/mosquitto)
    // keeps such packets out of the hall's network in the first place.
    // Outgoing: `info` for 1000 boards is ~100 KB.
    opts.set_max_packet_size(MQTT_MAX_REMAINING_LENGTH, 4 << 20);
    // 0 disables keep-alive; rumqttc refuses values under a second otherwise.
    opts.set_keep_alive(if settings.keep_alive.is_zero() {
        Duration::ZERO
    } else {
        settings.keep_alive.max(Duration::from_secs(1))
    });
    if let (Some(user), Some(pass)) = (&settings.username, &settings.password) {
        opts.set_credentials(user, pass);
    }
    if settings.tls {
        // Debian's bundle of the system's trusted roots, when no CA file is named.
        let path = settings
            .tls_ca
            .clone()
            .unwrap_or_else(|| PathBuf::from("/etc/ssl/certs/ca-certificates.crt"));
        let ca = std::fs::read(&path).map_err(|source| MqttError::Ca {
            path: path.clone(),
            source,
        })?;
        let client_auth = match &settings.client_cert {
            Some((cert, key)) => {
                let read = |path: &PathBuf| {
                    std::fs::read(path).map_err(|source| MqttError::ClientCert {
                        path: path.clone(),
                        source,
                    })
                };
                Some((read(cert)?, read(key)?))
            }
            None => None,
        };
        opts.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth,
        }));
    }
    Ok(opts)
}

/// MQTT 3.1.1 (2.2.3): the largest remaining length a packet can have.
const MQTT_MAX_REMAINING_LENGTH: usize = 268_435_455;

/// The retained messages the broker holds under `filter`, read once by a short-lived
/// client of `settings` (the CLI's view of the whole hall): everything that arrives until
/// nothing more has come for `QUIET` after the subscription was granted.
pub async fn read_retained(
    settings: &MqttSettings,
    filter: &str,
) -> Result<Vec<(String, Vec<u8>)>, ReadError> {
    const QUIET: Duration = Duration::from_millis(700);
    const LIMIT: Duration = Duration::from_secs(10);
    let mut opts = options(settings).map_err(ReadError::Settings)?;
    opts.set_clean_session(true);
    let (client, mut events) = rumqttc::AsyncClient::new(opts, 16);
    let deadline = tokio::time::Instant::now() + LIMIT;
    let mut out = Vec::new();
    let mut granted = false;
    loop {
        let wait = if granted {
            QUIET.min(deadline.saturating_duration_since(tokio::time::Instant::now()))
        } else {
            deadline.saturating_duration_since(tokio::time::Instant::now())
        };
        let event = match tokio::time::timeout(wait, events.poll()).await {
            Err(_) if granted => break,
            Err(_) => return Err(ReadError::Timeout(LIMIT)),
            Ok(e) => e,
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                client
                    .subscribe(filter, QoS::AtLeastOnce)
                    .await
                    .map_err(|e| ReadError::Broker(e.to_string()))?;
            }
            Ok(Event::Incoming(Packet::SubAck(_))) => granted = true,
            Ok(Event::Incoming(Packet::Publish(p))) if p.retain => {
                out.push((p.topic.clone(), p.payload.to_vec()));
            }
            Ok(_) => {}
            Err(e) => return Err(ReadError::Broker(trouble(&e))),
        }
    }
    let _ = client.try_disconnect();
    Ok(out)
}

/// Why [`read_retained`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Settings(MqttError),
    #[error("the broker: {0}")]
    Broker(String),
    #[error("no answer from the broker within {0:?}")]
    Timeout(Duration),
}
