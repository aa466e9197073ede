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
/// free port. Between this probe and rumqttd's own bind another program (another demo
/// started at the same moment) can take the port; `start` then finds that the broker
/// answering there is not its own and tries again on another port.
fn pick_port(avoid_1883: bool) -> std::io::Result<u16> {
    let any = |port| TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    match (avoid_1883, any(1883)) {
        (false, Ok(l)) => Ok(l.local_addr()?.port()),
        _ => Ok(any(0)?.local_addr()?.port()),
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

/// Why the embedded broker did not start.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("no free local port for the broker: {0}")]
    NoPort(std::io::Error),
    #[error("the embedded MQTT broker refused its own link: {0}")]
    Link(Box<rumqttd::local::LinkError>),
    #[error("cannot start the broker's thread: {0}")]
    Thread(std::io::Error),
    #[error("the MQTT broker on 127.0.0.1:{port} did not answer: {source}")]
    NoAnswer { port: u16, source: std::io::Error },
    #[error("127.0.0.1:{0} is another program's MQTT broker, not the embedded one")]
    NotOurs(u16),
    #[error("the embedded MQTT broker did not come up on 127.0.0.1:{0}")]
    NotUp(u16),
}

/// Start the broker and wait until it accepts connections — its own connections: a
/// listener that lost the port to another broker fails inside rumqttd's thread, and
/// connecting to the port would then reach the other broker, whose hall would mix with
/// ours (two demos started together did exactly that, each losing moves to the other).
pub fn start() -> Result<EmbeddedBroker, BrokerError> {
    let mut attempt = 0;
    loop {
        let port = pick_port(attempt > 0).map_err(BrokerError::NoPort)?;
        match start_on(port) {
            Ok(broker) => return Ok(broker),
            Err(e) if attempt == 2 => return Err(e),
            Err(_) => attempt += 1,
        }
    }
}

fn start_on(port: u16) -> Result<EmbeddedBroker, BrokerError> {
    let mut broker = Broker::new(config(port));
    // A link inside the router, subscribed to a topic only this process knows: a publish
    // to it over TCP comes back here only if the port is this broker's.
    let (mut probe_tx, mut probe_rx) = broker
        .link("hallclock-demo-probe")
        .map_err(|e| BrokerError::Link(Box::new(e)))?;
    let topic = format!("hallclock-demo-probe/{}/{port}", std::process::id());
    probe_tx
        .subscribe(topic.clone())
        .map_err(|e| BrokerError::Link(Box::new(e)))?;
    std::thread::Builder::new()
        .name("mqtt-broker".into())
        .spawn(move || {
            // Returns only when every listener has failed (e.g. the port was taken).
            if let Err(e) = broker.start() {
                tracing::error!("embedded MQTT broker: {e}");
            }
        })
        .map_err(BrokerError::Thread)?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    while Instant::now() < deadline {
        if let Ok(stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            publish_once(stream, &topic)
                .map_err(|source| BrokerError::NoAnswer { port, source })?;
            return match seen(&mut probe_rx, Instant::now() + Duration::from_secs(3)) {
                true => {
                    // The link lives as long as the broker (the process): the router is
                    // never left writing to a link that went away.
                    std::mem::forget((probe_tx, probe_rx));
                    Ok(EmbeddedBroker { port })
                }
                false => Err(BrokerError::NotOurs(port)),
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(BrokerError::NotUp(port))
}

/// One MQTT 3.1.1 session by hand: CONNECT, wait for CONNACK, PUBLISH (QoS 0) an empty
/// payload to `topic`, DISCONNECT. Enough to tell whose broker listens on a port without
/// a client library's event loop.
fn publish_once(mut stream: TcpStream, topic: &str) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind, Read, Write};
    let client_id = b"hallclock-demo-probe-tcp";
    let mut connect = vec![0x10, (12 + client_id.len()) as u8];
    connect.extend_from_slice(&[0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 10]);
    connect.extend_from_slice(&[0, client_id.len() as u8]);
    connect.extend_from_slice(client_id);
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(&connect)?;
    let mut connack = [0u8; 4];
    stream.read_exact(&mut connack)?;
    if connack[0] != 0x20 || connack[3] != 0 {
        return Err(Error::new(ErrorKind::InvalidData, "no CONNACK"));
    }
    let topic = topic.as_bytes();
    let length = u8::try_from(2 + topic.len())
        .map_err(|_| Error::new(ErrorKind::InvalidInput, "probe topic too long"))?;
    let mut publish = vec![0x30, length, 0, topic.len() as u8];
    publish.extend_from_slice(topic);
    stream.write_all(&publish)?;
    stream.write_all(&[0xE0, 0])?;
    Ok(())
}

/// Whether the probe's publish reached the link before `deadline`.
fn seen(rx: &mut rumqttd::local::LinkRx, deadline: Instant) -> bool {
    loop {
        match rx.recv_deadline(deadline) {
            Ok(Some(rumqttd::Notification::Forward(_))) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
}
