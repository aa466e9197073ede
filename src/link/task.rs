//! The async driver of one link: open the port, run a [`Session`] over it, and reopen
//! with backoff when it closes. It owns no protocol logic.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{Decoder, Encoder};

use crate::dgt::{BoardState, HostCodec};

use super::event::{ClockCommandError, LinkCommand, LinkEvent, Offline};
use super::port;
use super::session::{LinkConfig, Session, SessionEnd, settle_left};
use crate::tty::is_unplug;

/// The daemon's end of a running link.
#[derive(Debug)]
pub struct LinkHandle {
    pub commands: mpsc::Sender<LinkCommand>,
    pub events: mpsc::Receiver<LinkEvent>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Starts the link task for one port. It runs until `commands` is dropped or the event
/// receiver is closed.
pub fn spawn(config: LinkConfig) -> LinkHandle {
    let (cmd_tx, cmd_rx) = mpsc::channel(64);
    let (ev_tx, ev_rx) = mpsc::channel(1024);
    let task = tokio::spawn(run(config, cmd_rx, ev_tx));
    LinkHandle {
        commands: cmd_tx,
        events: ev_rx,
        task,
    }
}

/// How a session loop finished.
enum Exit {
    /// The daemon is gone: stop the task.
    Shutdown,
    Ended(SessionEnd),
}

/// Runs one link until the daemon drops its ends of the channels.
pub async fn run(
    cfg: LinkConfig,
    mut commands: mpsc::Receiver<LinkCommand>,
    events: mpsc::Sender<LinkEvent>,
) {
    let mut backoff = cfg.reopen_backoff_min;
    // The last problem reported, so a board that stays missing is reported once.
    let mut last_problem: Option<String> = None;
    // The game outlives sessions: a replugged board continues it.
    let mut board = BoardState::new();
    loop {
        let stream = match port::open(&cfg.path) {
            Ok(s) => s,
            Err(e) => {
                let text = e.to_string();
                if last_problem.as_deref() != Some(&text) {
                    last_problem = Some(text);
                    if events.send(LinkEvent::Error(e.into())).await.is_err() {
                        return;
                    }
                }
                if wait_offline(&cfg, backoff, &mut commands, &events).await {
                    return;
                }
                backoff = (backoff * 2).min(cfg.reopen_backoff_max);
                continue;
            }
        };
        match run_session(&cfg, stream, &mut commands, &events, &mut board).await {
            Exit::Shutdown => return,
            Exit::Ended(SessionEnd::Offline(why)) => {
                last_problem = None;
                backoff = cfg.reopen_backoff_min;
                if events.send(LinkEvent::Offline(why)).await.is_err() {
                    return;
                }
            }
            Exit::Ended(SessionEnd::Failed(error)) => {
                let text = error.to_string();
                if last_problem.as_deref() != Some(&text) {
                    last_problem = Some(text);
                    if events.send(LinkEvent::Error(error)).await.is_err() {
                        return;
                    }
                }
                backoff = (backoff * 2).min(cfg.reopen_backoff_max);
            }
        }
        if wait_offline(&cfg, backoff, &mut commands, &events).await {
            return;
        }
    }
}

/// Sleeps `delay` while refusing commands (the board is offline). True = shut down.
async fn wait_offline(
    cfg: &LinkConfig,
    delay: Duration,
    commands: &mut mpsc::Receiver<LinkCommand>,
    events: &mpsc::Sender<LinkEvent>,
) -> bool {
    let until = tokio::time::Instant::now() + delay;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(until) => return false,
            cmd = commands.recv() => match cmd {
                None => return true,
                Some(c) => {
                    let e = ClockCommandError::Offline { path: cfg.path.clone(), command: c.name() };
                    if events.send(LinkEvent::CommandFailed(e)).await.is_err() {
                        return true;
                    }
                }
            },
        }
    }
}

async fn run_session(
    cfg: &LinkConfig,
    stream: crate::tty::FdStream,
    commands: &mut mpsc::Receiver<LinkCommand>,
    events: &mpsc::Sender<LinkEvent>,
    board: &mut BoardState,
) -> Exit {
    let mut session_cfg = cfg.clone();
    let age = port::age(stream.get_ref(), std::time::SystemTime::now());
    session_cfg.settle = settle_left(cfg.settle, age);
    // Boxed: the session (800 bytes) lives as long as the port is open, inside the link's
    // future, which then keeps room for it while the port is closed too.
    let mut session = Box::new(Session::new(
        session_cfg,
        std::mem::take(board),
        Instant::now(),
    ));
    let exit = drive(&mut session, cfg, stream, commands, events).await;
    *board = (*session).into_board();
    exit
}

/// Any byte stream will do (a tty here; the backend can change, DESIGN.md §8).
async fn drive<S: AsyncRead + AsyncWrite + Unpin>(
    session: &mut Session,
    cfg: &LinkConfig,
    mut stream: S,
    commands: &mut mpsc::Receiver<LinkCommand>,
    events: &mpsc::Sender<LinkEvent>,
) -> Exit {
    let mut codec = HostCodec::new();
    let mut rx = BytesMut::with_capacity(1024);
    let mut tx = BytesMut::with_capacity(64);
    let path = cfg.path.clone();
    let offline = |why: Offline| Exit::Ended(SessionEnd::Offline(why));
    let io_end = |e: std::io::Error| {
        if is_unplug(&e) {
            offline(Offline::Unplugged { path: path.clone() })
        } else {
            offline(Offline::Io {
                path: path.clone(),
                message: e.to_string(),
            })
        }
    };
    // One timer for the session's deadlines, moved only when the deadline comes earlier.
    // Why: every clock frame pushes the silence deadline later, and a new timer per frame
    // (5000 boards: 5000 timer-wheel insertions and removals a second, under the time
    // driver's lock) cost more than the frame itself. A later deadline is taken when the
    // timer fires: the session's `handle_timeout` at an earlier instant finds nothing due.
    let mut armed = session.next_deadline();
    let sleep = tokio::time::sleep_until(armed.into());
    tokio::pin!(sleep);
    loop {
        while let Some(cmd) = session.poll_transmit() {
            if let Err(e) = codec.encode(cmd, &mut tx) {
                // Commands are built in range; should one not be, say so and go on.
                let e = ClockCommandError::Unencodable {
                    path: cfg.path.clone(),
                    reason: e.to_string(),
                };
                if events.send(LinkEvent::CommandFailed(e)).await.is_err() {
                    return Exit::Shutdown;
                }
            }
        }
        if !tx.is_empty() {
            match tokio::time::timeout(cfg.write_timeout, stream.write_all(&tx)).await {
                Ok(Ok(())) => tx.clear(),
                Ok(Err(e)) => return io_end(e),
                Err(_) => {
                    return offline(Offline::WriteStalled {
                        path: cfg.path.clone(),
                        waited: cfg.write_timeout,
                    });
                }
            }
        }
        while let Some(ev) = session.poll_event() {
            if events.send(ev).await.is_err() {
                return Exit::Shutdown;
            }
        }
        if let Some(end) = session.end() {
            return Exit::Ended(end);
        }
        let deadline = session.next_deadline();
        if deadline < armed {
            armed = deadline;
            sleep.as_mut().reset(armed.into());
        }
        tokio::select! {
            biased;
            read = stream.read_buf(&mut rx) => match read {
                // Ok(0): the tty hung up (USB unplug on some drivers, §8).
                Ok(0) => return offline(Offline::Unplugged { path: cfg.path.clone() }),
                Ok(_) => {
                    let now = Instant::now();
                    loop {
                        match codec.decode(&mut rx) {
                            Ok(Some(msg)) => session.handle_message(msg, now),
                            Ok(None) => break,
                            Err(e) => return offline(Offline::Io { path: cfg.path.clone(), message: e.to_string() }),
                        }
                    }
                }
                Err(e) => return io_end(e),
            },
            cmd = commands.recv() => match cmd {
                Some(c) => session.handle_command(c, Instant::now()),
                None => return Exit::Shutdown,
            },
            () = &mut sleep => {
                session.handle_timeout(Instant::now());
                armed = session.next_deadline();
                sleep.as_mut().reset(armed.into());
            }
        }
    }
}
