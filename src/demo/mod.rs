//! `hallclock demo`: a whole hall in one process with nothing to set up — an MQTT broker
//! (embedded, or the one given), simulated boards on pseudo-terminals, the daemon driving
//! them exactly as in production, an arbiter starting rounds over MQTT, simulated players,
//! and a live table fed only by an MQTT subscription.
//!
//! Each part talks to the others only the way it would in a real hall: players touch the
//! simulated boards, the daemon reads the serial ports, the arbiter and the table use the
//! MQTT API. So whatever the demo shows, the production paths did.

pub mod bridged;
#[cfg(feature = "embedded-broker")]
pub mod broker;
pub mod names;
pub mod player;
mod seats;
pub mod table;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::{BoardConfig, Config, HallConfig};
use crate::hall::{self, HallError};
use crate::rules::Millis;
use crate::rules::placement::Side;
use crate::rules::time_control::{Bonus, TimeControl};
use crate::sim::{Sim, SimConfig, SimError};

use seats::Players;
use table::Table;

/// The demo daemon's node (`hallclock/<hall>/node/demo/…`).
pub const DEMO_NODE: &str = "demo";

/// The demo's hall id unless told otherwise: topics `hallclock/demo/…`.
pub const HALL: &str = "demo";

/// What `hallclock demo` was asked for.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The hall id: topics `hallclock/<hall>/…`, client id `hallclock-<hall>`. Two demos
    /// on one broker need two ids.
    pub hall: String,
    pub boards: usize,
    /// An external broker; `None` starts the embedded one.
    pub broker: Option<(String, u16)>,
    pub time_control: TimeControl,
    /// Divides the players' think times (2 = twice as fast).
    pub speed: f64,
    /// Stop after this many rounds; `None` plays round after round.
    pub rounds: Option<u32>,
    /// The same seed gives the same players, names and choices.
    pub seed: u64,
    /// Where the boards' symlinks and the daemon's log go.
    pub dir: PathBuf,
    /// Redraw a table (a terminal) or print a line per change (a pipe or a file).
    pub live_table: bool,
    /// How many daemons (nodes) share the hall, each with its part of the boards; over
    /// Mosquittos bridged to a central one when `mosquitto` is installed (issue 23).
    pub nodes: usize,
    /// Boards 1..=observe are observed (issue 24): their clocks are set by hand by the
    /// demo's arbiter at each round's start, the daemon only reads them.
    pub observe: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(
        "this hallclock was built without the embedded broker (cargo feature `embedded-broker`): pass --broker HOST:PORT"
    )]
    NoEmbeddedBroker,
    #[cfg(feature = "embedded-broker")]
    #[error(transparent)]
    Broker(broker::BrokerError),
    #[error("the simulated boards: {0}")]
    Sim(#[from] SimError),
    #[error("the daemon: {0}")]
    Hall(#[from] HallError),
    #[error("the demo's arbiter: {0}")]
    Signer(#[from] SignerError),
    #[error("the demo's configuration is not valid: {0}")]
    Config(String),
    #[error("no answer from the MQTT broker at {0} within 10 s (is it running?)")]
    Unreachable(String),
    #[error("the daemon refused round {round}: {reason}")]
    Refused { round: u32, reason: String },
    #[error("the bridged Mosquittos: {0}")]
    Bridged(#[from] bridged::BridgedError),
    #[error("cannot create {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The control's starting time and increment, for the players' sense of time.
fn initial_and_increment(tc: &TimeControl) -> (Duration, Duration) {
    match tc.periods() {
        Ok([first, ..]) => {
            let bonus = match first.bonus {
                Bonus::Increment(s) | Bonus::Delay(s) => s,
                Bonus::None => 0,
            };
            (
                Duration::from_secs(u64::from(first.secs)),
                Duration::from_secs(u64::from(bonus)),
            )
        }
        _ => (Duration::from_secs(180), Duration::ZERO),
    }
}

/// The demo's clock: one monotonic timebase anchored to UTC once per process, as the
/// daemon's is. The count of moves compares the players' instants with the daemon's;
/// the wall clock can be slewed by NTP by tens of milliseconds over a long run, the
/// monotonic clock both run on cannot (their anchors differ by a millisecond or so).
fn now_ms() -> Millis {
    static CLOCK: std::sync::OnceLock<crate::timebase::Timebase> = std::sync::OnceLock::new();
    CLOCK.get_or_init(crate::timebase::Timebase::start).now()
}

pub fn board_id(n: usize) -> String {
    format!("board-{n:03}")
}

/// The daemon's configuration, as a hall's file would give it; turned into settings by
/// the same `daemon::settings` that `hallclock run` uses.
fn hall_config(opts: &DemoOptions, host: &str, port: u16, sim: &Sim, node: &DemoNode) -> Config {
    let mut config = Config {
        hall: HallConfig {
            id: opts.hall.clone(),
            // Its name says what it is, whatever the machine is called.
            node: node.name.clone(),
            state_dir: node.state_dir.clone(),
            ..HallConfig::default()
        },
        ..Config::default()
    };
    config.broker.host = host.to_string();
    config.broker.port = port;
    // The dashboard on this machine only: the demo's arbiter password is printed.
    config.web.listen = "127.0.0.1:8080".into();
    config.defaults.time_control = opts.time_control.clone();
    // The broadcast's `Event` and the `/public` heading: a name, not `?`.
    config.broadcast.tags.event = Some("hallclock demo".into());
    config.boards = sim
        .boards()
        .iter()
        .filter(|b| node.boards.contains(&b.number()))
        .map(|b| BoardConfig {
            id: board_id(b.number()),
            port: b.path().to_path_buf(),
            white: Side::Left,
            number: None,
            mode: (b.number() <= opts.observe).then_some(crate::config::BoardMode::Observe),
        })
        .collect();
    config
}

/// One daemon of the demo's hall: its name, its journal's folder, its boards' numbers.
struct DemoNode {
    name: String,
    state_dir: PathBuf,
    boards: std::ops::RangeInclusive<usize>,
}

/// The demo's nodes: one (`demo`, the whole hall), or `demo-1`… each with a run of the
/// boards in order.
fn demo_nodes(opts: &DemoOptions) -> Vec<DemoNode> {
    let n = opts.nodes.clamp(1, opts.boards.max(1));
    if n == 1 {
        return vec![DemoNode {
            name: DEMO_NODE.into(),
            state_dir: opts.dir.clone(),
            boards: 1..=opts.boards,
        }];
    }
    (0..n)
        .map(|i| {
            let name = format!("{DEMO_NODE}-{}", i + 1);
            DemoNode {
                state_dir: opts.dir.join(&name),
                name,
                boards: (opts.boards * i / n + 1)..=(opts.boards * (i + 1) / n),
            }
        })
        .collect()
}

/// Stdout, written to without failing the demo: a closed pipe only stops the output.
struct Screen {
    live: bool,
    drawn: bool,
}

impl Screen {
    fn print(&mut self, lines: &[String]) {
        let mut out = std::io::stdout().lock();
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    }

    /// One MQTT message into the table; without a terminal, its lines go out at once,
    /// stamped with the time of day.
    fn feed(&mut self, table: &mut Table, topic: &str, payload: &[u8]) {
        let now = now_ms();
        let lines = table.apply(topic, payload, now);
        if !self.live {
            let stamp = clock_of_day(now);
            let lines: Vec<String> = lines.iter().map(|l| format!("{stamp} {l}")).collect();
            self.print(&lines);
        }
    }

    /// Home the cursor and overwrite: no flicker, and whatever is below stays tidy.
    fn draw(&mut self, header: &[String], table: &Table, now: Millis) {
        let mut text = String::new();
        text.push_str(if self.drawn {
            "\x1b[H"
        } else {
            "\x1b[2J\x1b[H"
        });
        self.drawn = true;
        let clock = clock_of_day(now);
        let mut lines: Vec<String> = header.to_vec();
        lines.push(format!(
            "daemon {}   round {}   {clock} UTC",
            table.status(),
            table.round().map_or("-".to_string(), |r| r.to_string())
        ));
        lines.push(String::new());
        lines.extend(table.render(now));
        lines.push(String::new());
        lines.push(table.news.clone());
        for l in lines {
            text.push_str(&l);
            text.push_str("\x1b[K\n");
        }
        text.push_str("\x1b[J");
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

fn clock_of_day(now: Millis) -> String {
    let s = now.0.rem_euclid(86_400_000) / 1000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// What the console client receives: topic and payload, in order.
type Inbox = mpsc::UnboundedReceiver<(String, Vec<u8>)>;

/// The arbiter's and the table's MQTT client.
fn console(host: &str, port: u16, hall: &str) -> (AsyncClient, Inbox, JoinHandle<()>) {
    let mut opts = MqttOptions::new(
        format!("hallclock-demo-console-{}", std::process::id()),
        host,
        port,
    );
    opts.set_keep_alive(Duration::from_secs(5));
    opts.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut eventloop) = AsyncClient::new(opts, 256);
    let filter = format!("hallclock/{hall}/#");
    let (tx, rx) = mpsc::unbounded_channel();
    let sub = client.clone();
    let task = tokio::spawn(async move {
        loop {
            match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    let _ = sub.subscribe(filter.clone(), QoS::AtLeastOnce).await;
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    if tx.send((p.topic.clone(), p.payload.to_vec())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                // The broker is away: rumqttc reconnects on the next poll.
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    });
    (client, rx, task)
}

/// The command the demo prints for watching its MQTT traffic. No client id (`-i`):
/// mosquitto_sub then connects with an empty one and a clean session, which Mosquitto
/// and the embedded broker accept.
pub fn watch_command(host: &str, port: u16) -> String {
    format!("mosquitto_sub -h {host} -p {port} -t 'hallclock/#' -v")
}

/// Why the demo's arbiter could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SignerError {
    #[error(transparent)]
    Arbiters(#[from] crate::intake::auth::ArbitersError),
    #[error("cannot write the arbiter's key to {path}: {source}")]
    KeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The demo's arbiter: an account in the demo's own arbiters file, and its key.
struct Signer {
    id: &'static str,
    key: crate::intake::auth::Key,
    /// The key as `hallclock arbiter add --key-file` writes it, so that a user (or a
    /// test) can send the demo's hall commands with `hallclock command`.
    key_file: PathBuf,
    /// The dashboard password, printed with the dashboard's address.
    password: String,
}

impl Signer {
    fn create(dir: &std::path::Path) -> Result<Signer, SignerError> {
        let mut arbiters = crate::intake::auth::Arbiters::default();
        let id = "demo-chief";
        let key = arbiters.add(id, "Demo Arbiter", crate::intake::auth::Role::Chief, None)?;
        let password = crate::web::session::token()[..12].to_string();
        arbiters.set_password(id, &password)?;
        arbiters.save(&dir.join("arbiters.toml"))?;
        let key_file = dir.join(format!("{id}.key"));
        write_secret(&key_file, &key.to_hex()).map_err(|source| SignerError::KeyFile {
            path: key_file.clone(),
            source,
        })?;
        Ok(Signer {
            id,
            key,
            key_file,
            password,
        })
    }

    /// A command as published: signed, with the time it was signed.
    fn sign(&self, topic: &str, command: Value) -> Vec<u8> {
        crate::intake::auth::sign_now(self.id, &self.key, topic, command, now_ms())
    }
}

/// A secret into a file only its owner reads (mode 0600 from its creation on), replacing
/// the last run's.
fn write_secret(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")
}

/// The demo's arbiter at work: who signs, and the MQTT client it publishes with.
struct Arbiter<'a> {
    signer: &'a Signer,
    client: &'a AsyncClient,
    /// Begins every transaction of this run: the daemon answers a transaction it has
    /// seen with its first reply, and a demo run again on the same directory must not
    /// be taken for the last one.
    run: String,
}

/// A `start_round` the demo's arbiter sent and the daemon has not answered yet: until
/// then no other automatic round is sent.
struct OwnStart {
    number: u32,
    transaction: String,
}

/// Wait for SIGINT or SIGTERM.
async fn stop_signal() {
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

/// Run the demo until a signal, or until the requested rounds are over.
pub async fn run(opts: DemoOptions) -> Result<(), DemoError> {
    let boards_dir = opts.dir.join("boards");
    std::fs::create_dir_all(&boards_dir).map_err(|source| DemoError::Dir {
        path: boards_dir.clone(),
        source,
    })?;
    let nodes = demo_nodes(&opts);
    let broker = start_broker(&opts, &nodes)?;
    let (host, port) = (broker.host.clone(), broker.port);
    let sim = Sim::start(SimConfig::new(opts.boards, &boards_dir)).await?;
    // The demo runs signed, as a hall does: one chief arbiter, made for this run.
    let signer = Signer::create(&opts.dir)?;
    let (daemons, config, arbiters) = start_nodes(&opts, &nodes, &broker, &sim)?;
    let Some(running) = daemons.first() else {
        return Err(DemoError::Config("no node".into()));
    };
    let (client, mut inbox, console_task) = console(&host, port, &opts.hall);
    let mut web = crate::daemon::start_web(&config, running, arbiters.clone()).await;
    if web.is_none() {
        // 8080 taken (another demo?): any free port will do.
        let mut other = config.clone();
        other.web.listen = "127.0.0.1:0".into();
        web = crate::daemon::start_web(&other, running, arbiters).await;
    }
    let header = header(&opts, &nodes, &broker, web.as_ref(), &signer);
    let mut screen = Screen {
        live: opts.live_table,
        drawn: false,
    };
    if !screen.live {
        screen.print(&header);
    }

    let address = format!("{host}:{port}");
    let arbiter = Arbiter {
        signer: &signer,
        client: &client,
        run: format!("demo-{:08x}", rand::random::<u32>()),
    };
    let result = play(
        &opts,
        &sim,
        &arbiter,
        &mut inbox,
        &mut screen,
        &header,
        &address,
    )
    .await;

    // Stop in the order a hall would: the daemons say `offline`, then the boards go.
    for d in daemons {
        d.stop().await;
    }
    drop(broker);
    let _ = client.disconnect().await;
    console_task.abort();
    drop(sim);
    if screen.live && screen.drawn {
        screen.print(&[String::new()]);
    }
    screen.print(&[format!(
        "demo stopped; the daemon's log is {}",
        opts.dir.join("hallclock.log").display()
    )]);
    result
}

/// The demo's broker: where the console and the nodes connect, and what it is.
struct DemoBroker {
    host: String,
    port: u16,
    /// In words, for the header.
    which: String,
    /// Each node's own Mosquitto bridged to the central one (stopped when dropped).
    bridges: Option<bridged::Bridged>,
}

impl DemoBroker {
    /// The port node `i` connects to: its own bridged Mosquitto, else the one broker.
    fn port_of(&self, i: usize) -> u16 {
        self.bridges
            .as_ref()
            .and_then(|b| b.locals.get(i).copied())
            .unwrap_or(self.port)
    }
}

/// Several nodes: each its own Mosquitto bridged to a central one when there is a
/// Mosquitto; else every node on the one broker. The console is on the central one.
fn start_broker(opts: &DemoOptions, nodes: &[DemoNode]) -> Result<DemoBroker, DemoError> {
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let local = "127.0.0.1".to_string();
    Ok(match &opts.broker {
        Some((host, port)) => DemoBroker {
            host: host.clone(),
            port: *port,
            which: "external broker".into(),
            bridges: None,
        },
        None if nodes.len() > 1 && bridged::mosquitto_installed() => {
            let b = bridged::start(&opts.hall, &names, &opts.dir)?;
            DemoBroker {
                host: local,
                port: b.central,
                which: format!("{} Mosquittos bridged to a central one", nodes.len()),
                bridges: Some(b),
            }
        }
        None => DemoBroker {
            host: local,
            port: embedded_broker()?,
            which: "embedded broker".into(),
            bridges: None,
        },
    })
}

/// Every node's daemon, started; the first node's configuration and arbiters, for the
/// dashboard.
fn start_nodes(
    opts: &DemoOptions,
    nodes: &[DemoNode],
    broker: &DemoBroker,
    sim: &Sim,
) -> Result<
    (
        Vec<hall::RunningHall>,
        Config,
        crate::intake::auth::Arbiters,
    ),
    DemoError,
> {
    let mut daemons = Vec::new();
    let mut first: Option<(Config, crate::intake::auth::Arbiters)> = None;
    for (i, node) in nodes.iter().enumerate() {
        let node_port = broker.port_of(i);
        let mut config = hall_config(opts, &broker.host, node_port, sim, node);
        config.security.arbiters = opts.dir.join("arbiters.toml");
        let problems: Vec<String> = config
            .validate()
            .into_iter()
            .filter(|p| p.is_error())
            .map(|p| format!("{}: {}", p.key, p.message))
            .collect();
        if !problems.is_empty() {
            return Err(DemoError::Config(problems.join("; ")));
        }
        let settings = crate::daemon::settings(&config).map_err(hall::HallError::from)?;
        let arbiters = crate::daemon::web_arbiters(&config, &settings.security);
        tracing::info!(node = %node.name, boards = node.boards.clone().count(), broker = %format!("{}:{node_port}", broker.host), "demo starting");
        daemons.push(hall::start(settings)?);
        if first.is_none() {
            first = Some((config, arbiters));
        }
    }
    match first {
        Some((config, arbiters)) => Ok((daemons, config, arbiters)),
        None => Err(DemoError::Config("no node".into())),
    }
}

/// What the demo prints first: where everything is and how to log in.
fn header(
    opts: &DemoOptions,
    nodes: &[DemoNode],
    broker: &DemoBroker,
    web: Option<&crate::web::RunningWeb>,
    signer: &Signer,
) -> Vec<String> {
    let (host, port) = (&broker.host, broker.port);
    let dashboard = match web {
        Some(w) => format!(
            "dashboard: http://{}/login   log in as '{}', password '{}'   (hall screens: http://{}/public)",
            w.addr, signer.id, signer.password, w.addr
        ),
        None => "dashboard: not started (see the daemon log)".into(),
    };
    // The URL a lichess broadcast polls (docs/BROADCAST.md): the current round, board order.
    let broadcast = match web {
        Some(w) => format!(
            "broadcast PGN: http://{}/broadcast/current/games.pgn   (one game: …/current/game-1.pgn)",
            w.addr
        ),
        None => "broadcast PGN: not served (no web server)".into(),
    };
    let split = if nodes.len() > 1 {
        let parts: Vec<String> = nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {}–{}",
                    n.name,
                    board_id(*n.boards.start()),
                    board_id(*n.boards.end())
                )
            })
            .collect();
        format!(" on {} nodes ({})", nodes.len(), parts.join(", "))
    } else {
        String::new()
    };
    let mut header = vec![
        format!(
            "hallclock demo: {} simulated boards{split}, hall '{}', {}, {} on {host}:{port}",
            opts.boards, opts.hall, opts.time_control, broker.which
        ),
        dashboard,
        broadcast,
        format!("watch the MQTT traffic:  {}", watch_command(host, port)),
        format!(
            "arbiter's key: {}   (hallclock command --hall {} --broker {host}:{port} --arbiter {} --key-file …)",
            signer.key_file.display(),
            opts.hall,
            signer.id
        ),
        format!(
            "daemon log: {}   stop: Ctrl-C",
            opts.dir.join("hallclock.log").display()
        ),
    ];
    if opts.observe > 0 {
        header.push(format!(
            "boards 1 to {} are hand-set (observe mode): the arbiter sets their clocks, the daemon only reads them",
            opts.observe.min(opts.boards)
        ));
    }
    header
}

#[cfg(feature = "embedded-broker")]
fn embedded_broker() -> Result<u16, DemoError> {
    broker::start().map(|b| b.port).map_err(DemoError::Broker)
}

#[cfg(not(feature = "embedded-broker"))]
fn embedded_broker() -> Result<u16, DemoError> {
    Err(DemoError::NoEmbeddedBroker)
}

/// The demo's main loop: wait for the daemon, then rounds until told to stop. Any round
/// started on the hall is played, the demo's own or an arbiter's; once the round in play
/// is over the demo starts the next one, numbered after the highest round seen.
async fn play(
    opts: &DemoOptions,
    sim: &Sim,
    arbiter: &Arbiter<'_>,
    inbox: &mut Inbox,
    screen: &mut Screen,
    header: &[String],
    address: &str,
) -> Result<(), DemoError> {
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut table = Table::new(&opts.hall);
    let mut players = Players::new(opts);
    let stop = stop_signal();
    tokio::pin!(stop);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let pause = Duration::from_secs_f64((10.0 / opts.speed).clamp(2.0, 10.0));
    let ready_by = tokio::time::Instant::now() + Duration::from_secs(10);
    // The first round starts once the daemon is online with every board (or after 10 s
    // with those that are); later ones a pause after the round in play is over.
    let mut next_round_at: Option<tokio::time::Instant> = None;
    let mut own: Option<OwnStart> = None;
    let mut seen_round: Option<u32> = None;
    let mut rounds_over = 0usize;
    let result = loop {
        let wake = next_round_at.unwrap_or_else(|| tokio::time::Instant::now() + pause * 100);
        tokio::select! {
            () = &mut stop => break Ok(()),
            msg = inbox.recv() => {
                let Some((topic, payload)) = msg else { break Ok(()) };
                screen.feed(&mut table, &topic, &payload);
                if let Some(o) = &own {
                    match answer(&opts.hall, o, &topic, &payload) {
                        Answer::None => {}
                        Answer::Accepted => own = None,
                        // Another round took the boards first (an arbiter's, sent as
                        // ours was): it is followed, and ours comes after it.
                        Answer::Busy(reason) => {
                            table.news = format!("round {} not started: {reason}", o.number);
                            if !screen.live {
                                let line = format!("{} {}", clock_of_day(now_ms()), table.news);
                                screen.print(&[line]);
                            }
                            own = None;
                        }
                        Answer::Refused(reason) => {
                            break Err(DemoError::Refused { round: o.number, reason });
                        }
                    }
                }
                if table.round() != seen_round {
                    // A round started, whoever started it: an automatic one waits for
                    // it to be over.
                    seen_round = table.round();
                    next_round_at = None;
                }
                players.follow(&table, sim);
                while rounds_over < table.finished_rounds.len() {
                    players.round_over(table.finished_rounds[rounds_over], sim);
                    rounds_over += 1;
                }
                if opts.rounds.is_some_and(|n| rounds_over >= n as usize) {
                    // Let the last states reach the screen, then stop.
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    while let Ok((topic, payload)) = inbox.try_recv() {
                        screen.feed(&mut table, &topic, &payload);
                    }
                    break Ok(());
                }
                if next_round_at.is_none() && own.is_none() {
                    next_round_at = when_next(&table, opts.boards, pause);
                }
            }
            () = tokio::time::sleep_until(wake), if next_round_at.is_some() => {
                next_round_at = None;
                let number = table.highest_round() + 1;
                own = Some(start_round(opts, sim, arbiter, number, &mut rng).await);
            }
            _ = tick.tick() => {
                if table.round().is_none() && own.is_none() && next_round_at.is_none()
                    && tokio::time::Instant::now() > ready_by
                {
                    if table.status() != "online" {
                        break Err(DemoError::Unreachable(address.to_string()));
                    }
                    // Some board is slow to answer: start anyway, it joins when it can.
                    next_round_at = Some(tokio::time::Instant::now());
                }
                players.rule_on_pending_flags(arbiter).await;
                if screen.live {
                    screen.draw(header, &table, now_ms());
                }
            }
        }
    };
    players.stop();
    result?;
    if screen.live {
        screen.draw(header, &table, now_ms());
    }
    // Let the last moves' events arrive, then count: every move made must be published.
    tokio::time::sleep(Duration::from_secs(1)).await;
    while let Ok((topic, payload)) = inbox.try_recv() {
        screen.feed(&mut table, &topic, &payload);
    }
    let made = player::MOVES_MADE
        .lock()
        .map(|m| m.clone())
        .unwrap_or_else(|e| e.into_inner().clone());
    let count = count_moves(&made, &table);
    for game in &count.odd_games {
        println!("{game}");
    }
    println!("{}", count.line());
    Ok(())
}

/// When the demo's next round is due, if one is: the first once the daemon is ready,
/// later ones a pause after the round in play (anyone's) is over.
fn when_next(table: &Table, boards: usize, pause: Duration) -> Option<tokio::time::Instant> {
    let now = tokio::time::Instant::now();
    match table.round() {
        None if daemon_ready(table, boards) => Some(now),
        None => None,
        Some(r) if table.finished_rounds.contains(&r) => Some(now + pause),
        Some(_) => None,
    }
}

/// Moves made against moves published, game by game.
#[derive(Debug, Default, PartialEq)]
pub struct MoveCount {
    /// Moves completed (pressed, or ending the game) before their game ended.
    pub made: u64,
    pub published: u64,
    /// Completed moves of a game that has fewer `move_made` events than them.
    pub lost: u64,
    /// Moves not completed before their game ended: made or pressed after the flag fell
    /// (the clock the player saw had not flagged yet), pressed on a clock that already
    /// showed 0:00 (its reckoning ahead of the official time), or never pressed. They are not
    /// part of the game (6.7a: a move is complete at the press), and the daemon rightly
    /// refuses them.
    pub after_end: u64,
    /// The last move of a game, pressed by the player just before the flag by the
    /// player's clock, whose press the daemon refused as after the flag (the lever frame
    /// arrived after the flag's instant): the daemon keeps the official time, so the move
    /// is not the game's. Only within `AT_THE_FLAG` of the flag, and only with the refusal
    /// seen on MQTT (a `stray_press` alert "the game is over").
    pub at_the_flag: u64,
    /// Each game whose completed moves and `move_made` events differ, in words: which
    /// game, by how many, and how its last move stood to its end, so that a count that is
    /// off names the game to look up in the journal.
    pub odd_games: Vec<String>,
}

/// How far before the flag's instant a press may have been made and still reach the
/// daemon after it (the lever frame's trip: the pseudo-terminal, the link task, a loaded
/// machine).
pub const AT_THE_FLAG: Millis = Millis(100);

impl MoveCount {
    pub fn line(&self) -> String {
        format!(
            "moves made by the players: {} (and {} not completed before their game ended, {} pressed as the flag fell and refused as after it), move_made published: {}, lost: {}",
            self.made, self.after_end, self.at_the_flag, self.published, self.lost
        )
    }
}

/// Count, for each game (board and round), the moves its players completed before the
/// game's end as published (the first `flag_fell` or `game_ended`) and the `move_made`
/// events it has.
pub fn count_moves(made: &[player::MadeMove], table: &Table) -> MoveCount {
    let mut count = MoveCount::default();
    // Per game: moves completed before the end, and when the last of them was.
    let mut per_game: std::collections::BTreeMap<(String, u32), (u64, Millis)> = Default::default();
    for m in made {
        let end = table.game_end(&m.board, m.round);
        // A move that ended the game on the board is complete as it is made; the daemon
        // may see a dead position the player did not and refuse the press after it.
        let by_move =
            end.is_some_and(|end| m.made_at < end && table.ended_by_move(&m.board, m.round));
        let completed = if by_move {
            Some(m.made_at)
        } else {
            m.completed_at
        };
        match completed {
            Some(at) if end.is_none_or(|end| at < end) => {
                let g = per_game.entry((m.board.clone(), m.round)).or_default();
                g.0 += 1;
                g.1 = g.1.max(at);
            }
            _ => count.after_end += 1,
        }
    }
    for ((board, round), (mut n, last)) in per_game {
        let published = table.published_in(&board, round);
        let end = table.game_end(&board, round);
        let flag_race = end.is_some_and(|end| end - last <= AT_THE_FLAG)
            && table.press_after_end(&board, round);
        if n > published && flag_race {
            n -= 1;
            count.at_the_flag += 1;
        }
        count.made += n;
        count.lost += n.saturating_sub(published);
        if n != published {
            let before_end = match end {
                Some(end) => format!(
                    "its last completed {} ms before the end ({})",
                    (end - last).0,
                    table.ended_how(&board, round)
                ),
                None => "no end seen".to_string(),
            };
            let refused = if table.press_after_end(&board, round) {
                "a press refused as after the end"
            } else {
                "no press refused"
            };
            count.odd_games.push(format!(
                "{board} round {round}: {n} moves completed, {published} move_made; {before_end}; {refused}"
            ));
        }
    }
    count.published = table.moves_published;
    count
}

fn daemon_ready(table: &Table, boards: usize) -> bool {
    table.status() == "online" && table.online_boards() >= boards
}

/// What the daemon answered to the demo's own `start_round`.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Not its response.
    None,
    Accepted,
    /// Refused because a board was busy: another round (an arbiter's) got there first.
    Busy(String),
    /// Refused for any other reason: that ends the demo, with the reason.
    Refused(String),
}

fn answer(hall: &str, own: &OwnStart, topic: &str, payload: &[u8]) -> Answer {
    if topic != format!("hallclock/{hall}/response") {
        return Answer::None;
    }
    let v: Value = serde_json::from_slice(payload).unwrap_or(Value::Null);
    if v["transaction"] != own.transaction.as_str() {
        return Answer::None;
    }
    if v["status"] == "ok" {
        return Answer::Accepted;
    }
    let reason = v["reason"]
        .as_str()
        .unwrap_or("no reason given")
        .to_string();
    match v["error"].as_str() {
        Some("board_busy") => Answer::Busy(reason),
        _ => Answer::Refused(reason),
    }
}

/// The observed boards' clocks, set by the demo's arbiter with the clock's buttons as the
/// round's control says (the increment credited before move 1, as the daemon reckons it)
/// and started at the round's start: the daemon sends them nothing.
fn set_clocks_by_hand(opts: &DemoOptions, sim: &Sim, start_in: Duration) {
    let (initial, increment) = initial_and_increment(&opts.time_control);
    let increment = match opts.time_control.periods() {
        Ok([first, ..]) if matches!(first.bonus, Bonus::Increment(_)) => increment,
        _ => Duration::ZERO,
    };
    let time = initial + increment;
    for b in sim.boards().iter().filter(|b| b.number() <= opts.observe) {
        b.set_clock(time, time, increment, crate::sim::Run::Paused);
        let board = b.clone();
        tokio::spawn(async move {
            tokio::time::sleep(start_in).await;
            board.set_clock(time, time, increment, crate::sim::Run::Left);
        });
    }
}

/// Set up the pieces and publish `start_round` like an arbiter; the players sit down
/// when the boards' states show the round's games, as they do for anyone's round.
async fn start_round(
    opts: &DemoOptions,
    sim: &Sim,
    arbiter: &Arbiter<'_>,
    number: u32,
    rng: &mut StdRng,
) -> OwnStart {
    for b in sim.boards() {
        player::prepare_board(b, crate::sim::Side::Left, &shakmaty::Board::new());
    }
    // The boards report the new position on their next scans.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let names = names::players(opts.boards * 2, rng);
    let pairings: Vec<Value> = (1..=opts.boards)
        .map(|n| {
            json!({
                "board": board_id(n),
                "white": names[2 * (n - 1)],
                "black": names[2 * (n - 1) + 1],
            })
        })
        .collect();
    let transaction = format!("{}-round-{number}-{}", arbiter.run, rng.r#gen::<u32>());
    // A moment to see the boards scheduled before the clocks start.
    let start_in = Duration::from_millis(2000);
    set_clocks_by_hand(opts, sim, start_in);
    let command = json!({
        "transaction": transaction,
        "action": "start_round",
        "round": number,
        "start": now_ms().0 + 2000,
        "time_control": opts.time_control.to_string(),
        "pairings": pairings,
    });
    let topic = format!("hallclock/{}/set", opts.hall);
    let signed = arbiter.signer.sign(&topic, command);
    if let Err(e) = arbiter
        .client
        .publish(topic, QoS::AtLeastOnce, false, signed)
        .await
    {
        tracing::warn!("cannot publish start_round: {e}");
    }
    OwnStart {
        number,
        transaction,
    }
}
