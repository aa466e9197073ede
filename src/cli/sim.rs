//! `hallclock sim`: simulated DGT boards on pseudo-terminals, driven by control lines on
//! standard input and, optionally, on a Unix socket (one reply line per command).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::sim::{ClockKind, Control, Sim, SimConfig, control};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ClockArg {
    Dgt3000,
    Xl,
    None,
}

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// Number of simulated boards.
    #[arg(long, default_value_t = 1)]
    pub boards: usize,
    /// Folder for the stable symlinks `board-001`, ...
    #[arg(long)]
    pub dir: PathBuf,
    /// The clock attached to every board.
    #[arg(long, value_enum, default_value = "dgt3000")]
    pub clock: ClockArg,
    /// Delay before the clock acknowledges a command (e.g. 150ms, 1s).
    #[arg(long, default_value = "150ms", value_parser = parse_duration)]
    pub ack_delay: Duration,
    /// One board scan; field updates leave on scan boundaries.
    #[arg(long, default_value = "200ms", value_parser = parse_duration)]
    pub scan: Duration,
    /// Each scan boundary moves by up to this much either way (at most half a scan).
    #[arg(long, default_value = "30ms", value_parser = parse_duration)]
    pub scan_jitter: Duration,
    /// Board n gets serial number BASE + n.
    #[arg(long, default_value_t = 10000)]
    pub serial_base: u32,
    /// The clock is not in computer mode (DGT3000 mode 25): SETNRUN is refused. With
    /// `--hand-set` the same: a clock the arbiters set with its buttons (the control
    /// line `setclock`), for boards a daemon only observes.
    #[arg(long, alias = "hand-set")]
    pub manual_mode: bool,
    /// The boards are set up turned round (white's pieces on fields 0..15).
    #[arg(long)]
    pub rotated: bool,
    /// Also accept control lines on this Unix socket.
    #[arg(long)]
    pub control_socket: Option<PathBuf>,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    control::parse_duration(s)
        .ok_or_else(|| format!("duration like 150ms or 1s expected, got `{s}`"))
}

pub fn run(args: SimArgs) -> ExitCode {
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hallclock sim: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hallclock sim: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: SimArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = SimConfig::new(args.boards, &args.dir);
    config.clock = match args.clock {
        ClockArg::Dgt3000 => ClockKind::Dgt3000,
        ClockArg::Xl => ClockKind::Xl,
        ClockArg::None => ClockKind::None,
    };
    config.ack_delay = args.ack_delay;
    config.scan_interval = args.scan;
    config.scan_jitter = args.scan_jitter;
    config.serial_base = args.serial_base;
    config.computer_mode = !args.manual_mode;
    config.rotated = args.rotated;
    let sim = Arc::new(Sim::start(config).await?);
    for b in sim.boards() {
        println!(
            "board {} serial {} at {}",
            b.number(),
            b.serial(),
            b.path().display()
        );
    }
    println!("ready; type `help` for commands");

    // `quit` on any control channel, SIGINT or SIGTERM stops the simulator.
    let (quit_tx, mut quit_rx) = tokio::sync::mpsc::channel::<()>(1);

    if let Some(sock) = args.control_socket.clone() {
        let _ = std::fs::remove_file(&sock);
        let listener = tokio::net::UnixListener::bind(&sock)
            .map_err(|e| format!("cannot listen on {}: {e}", sock.display()))?;
        let sim = sim.clone();
        let quit_tx = quit_tx.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let sim = sim.clone();
                let quit_tx = quit_tx.clone();
                tokio::spawn(async move {
                    let (r, mut w) = stream.into_split();
                    let mut lines = BufReader::new(r).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let reply = match handle_line(&sim, &line).await {
                            Reply::Nothing => continue,
                            Reply::Text(t) => t,
                            Reply::Quit => {
                                let _ = quit_tx.send(()).await;
                                "bye".to_string()
                            }
                        };
                        if w.write_all(format!("{reply}\n").as_bytes()).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
    }

    // Standard input is read on its own thread (tokio's `io-std` is not enabled; a
    // blocking read of a terminal is what it would do anyway). End of input does not stop
    // the simulator: a background `hallclock sim &` has no input at all.
    let (line_tx, mut line_rx) = tokio::sync::mpsc::channel::<String>(16);
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if line_tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let mut stdin_open = true;
    loop {
        tokio::select! {
            line = line_rx.recv(), if stdin_open => match line {
                Some(line) => match handle_line(&sim, &line).await {
                    Reply::Nothing => {}
                    Reply::Text(t) if t.starts_with("error: ") => eprintln!("{t}"),
                    Reply::Text(t) => println!("{t}"),
                    Reply::Quit => break,
                },
                None => stdin_open = false,
            },
            _ = quit_rx.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
        }
    }
    if let Some(sock) = &args.control_socket {
        let _ = std::fs::remove_file(sock);
    }
    Ok(())
}

enum Reply {
    Nothing,
    Text(String),
    Quit,
}

async fn handle_line(sim: &Sim, line: &str) -> Reply {
    match control::parse_line(line) {
        Ok(None) => Reply::Nothing,
        Ok(Some(Control::Quit)) => Reply::Quit,
        Ok(Some(c)) => Reply::Text(match sim.apply(&c).await {
            Ok(reply) => reply,
            Err(e) => format!("error: `{}`: {e}", line.trim()),
        }),
        Err(e) => Reply::Text(format!("error: {e}")),
    }
}
