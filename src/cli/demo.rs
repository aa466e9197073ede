//! `hallclock demo`: a simulated hall with a live table (see `crate::demo`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::demo::{self, DemoError, DemoOptions};
use crate::rules::time_control::{self, TimeControl};

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// The hall id: MQTT topics `hallclock/<HALL>/…` (two demos on one broker need two).
    #[arg(long, default_value = demo::HALL, value_parser = parse_hall)]
    pub hall: String,
    /// Number of simulated boards.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub boards: u16,
    /// Run the hall as this many daemons (hall servers, "nodes"), each with its part of
    /// the boards: each behind its own Mosquitto bridged to a central one when
    /// `mosquitto` is installed, else all on the one broker. One dashboard shows them all.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub nodes: u16,
    /// Use this MQTT broker instead of the embedded one (e.g. 127.0.0.1:1883).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_broker)]
    pub broker: Option<(String, u16)>,
    /// The time control of every game (e.g. 180+2, 300, 40/5400+30:1800+30).
    #[arg(long, default_value = "180+2", value_parser = parse_tc)]
    pub tc: TimeControl,
    /// How much faster than humans the players think (2 = twice as fast).
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// Stop after this many rounds (default: a new round after each one, until Ctrl-C).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// Seed for the players' names, temperaments and moves (default: from the time).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Folder for the boards' symlinks and the daemon's log (default: a new one under
    /// the system's temp folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Make the first N boards hand-set (observe mode): the demo's arbiter sets their
    /// clocks with the clock's buttons at each round's start, the daemon only reads them.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub observe: u16,
}

fn parse_broker(s: &str) -> Result<(String, u16), String> {
    let (host, port) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("`{s}`: expected HOST:PORT, e.g. 127.0.0.1:1883"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("`{port}` is not a port number (1-65535)"))?;
    if host.is_empty() || port == 0 {
        return Err(format!("`{s}`: expected HOST:PORT, e.g. 127.0.0.1:1883"));
    }
    // [::1]:1883 names an IPv6 host in brackets; the MQTT client wants it bare.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((host.to_string(), port))
}

fn parse_hall(s: &str) -> Result<String, String> {
    if crate::id::valid(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "`{s}` is not a valid id: use lowercase letters, digits and '-'"
        ))
    }
}

fn parse_tc(s: &str) -> Result<TimeControl, String> {
    let tc = time_control::parse(s).map_err(|e| e.to_string())?;
    tc.periods()
        .map_err(|why| format!("`{s}`: {why}; the demo needs a clock, e.g. 180+2"))?;
    Ok(tc)
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.1..=100.0).contains(&f) => Ok(f),
        _ => Err(format!("`{s}`: expected a number from 0.1 to 100")),
    }
}

/// The daemon logs to a file: the terminal belongs to the table.
fn init_logging(file: &std::path::Path) -> Result<(), std::io::Error> {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let log = std::fs::File::create(file)?;
    let filter = Targets::new()
        .with_default(LevelFilter::WARN)
        .with_target("hallclock", LevelFilter::INFO)
        // The embedded broker logs every connection and every disconnection as an error;
        // a broker that fails to listen is reported by the demo itself.
        .with_target("rumqttd", LevelFilter::OFF);
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(log)),
        )
        .with(filter)
        .try_init();
    Ok(())
}

pub fn run(args: DemoArgs) -> ExitCode {
    let dir = args.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("hallclock-demo-{}", std::process::id()))
    });
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("hallclock demo: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    if let Err(e) = init_logging(&dir.join("hallclock.log")) {
        eprintln!(
            "hallclock demo: cannot write the log in {}: {e}",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let opts = DemoOptions {
        hall: args.hall,
        boards: usize::from(args.boards),
        broker: args.broker,
        time_control: args.tc,
        speed: args.speed,
        rounds: args.rounds,
        seed,
        dir,
        live_table: std::io::stdout().is_terminal(),
        nodes: usize::from(args.nodes),
        observe: usize::from(args.observe),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hallclock demo: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let r = runtime.block_on(demo::run(opts));
    // The players' and the broker's threads end with the process.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ DemoError::NoEmbeddedBroker) => {
            eprintln!("hallclock demo: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("hallclock demo: {e}");
            ExitCode::FAILURE
        }
    }
}
