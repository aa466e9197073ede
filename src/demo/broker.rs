//! The demo's own MQTT broker (rumqttd), so that `hallclock demo` needs nothing installed.
//! Production halls use Mosquitto; this one listens on localhost only, keeps nothing on
//! disk and serves no console or metrics.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rumqttd::{Broker, Config, ConnectionSettings, RouterConfig, ServerSettings};

/// The port the broker listens on. It runs on its own threads until the process ends:
/// rumqttd 0.19 has no way to stop it, and nothing outlives the demo's process.
#[derive(Debug)]
pub struct EmbeddedBroker {
    pub port: u16,
}

/// 1883 when it is free, so the usual `mosquitto_sub` works unchanged; otherwise any
/// free port. (Between this probe and rumqttd's own bind another program could take the
/// port; `start` then reports that the broker did not come up.)
fn pick_port() -> std::io::Result<u16> {
    let any = |port| TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    match any(1883) {
        Ok(l) => Ok(l.local_addr()?.port()),
        Err(_) => Ok(any(0)?.local_addr()?.port()),
    }
}

fn config(port: u16) -> Config {
    let connections = ConnectionSettings {
        connection_timeout_ms: 60_000,
        // A state is about 1 KiB; the hall's info grows with the boards.
        max_payload_size: 256 * 1024,
        max_inflight_count: 500,
        auth: None,
        external_auth: None,
        dynamic_filters: true,
    };
    let server = ServerSettings {
        name: "demo".into(),
        listen: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)),
        tls: None,
        next_connection_delay_ms: 1,
        connections,
    };
    Config {
        id: 0,
        router: RouterConfig {
            max_connections: 100,
            max_outgoing_packet_count: 200,
            // The router keeps each topic's recent publishes in memory segments; a few
            // MiB are plenty for a hall and bound the memory of a demo left running.
            max_segment_size: 1024 * 1024,
            max_segment_count: 4,
            custom_segment: None,
            initialized_filters: None,
            shared_subscriptions_strategy: Default::default(),
        },
        v4: Some(HashMap::from([("1".to_string(), server)])),
        ..Config::default()
    }
}

/// Start the broker and wait until it accepts connections.
pub fn start() -> Result<EmbeddedBroker, String> {
    let port = pick_port().map_err(|e| format!("no free local port for the broker: {e}"))?;
    let mut broker = Broker::new(config(port));
    std::thread::Builder::new()
        .name("mqtt-broker".into())
        .spawn(move || {
            // Returns only when every listener has failed (e.g. the port was taken).
            if let Err(e) = broker.start() {
                tracing::error!("embedded MQTT broker: {e}");
            }
        })
        .map_err(|e| format!("cannot start the broker's thread: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(EmbeddedBroker { port });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "the embedded MQTT broker did not come up on 127.0.0.1:{port}"
    ))
}
