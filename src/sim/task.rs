//! The async shell of one simulated board: moves bytes between its pseudo-terminal and
//! the [`SimBoard`](super::SimBoard) core, and sleeps until the core's next deadline.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};

use super::pty::{self, Pty};
use super::{Op, Shared, lock};

pub(super) struct BoardTask {
    pub path: PathBuf,
    pub pty: Option<Pty>,
    pub shared: Arc<Mutex<Shared>>,
    pub wake: Arc<Notify>,
    pub ops: mpsc::UnboundedReceiver<Op>,
}

/// How long a write may wait for the daemon to drain the port. A real UART does not wait
/// at all: when nobody reads, bytes are lost, and so they are here.
const WRITE_PATIENCE: Duration = Duration::from_millis(200);

pub(super) async fn run(mut t: BoardTask) {
    let mut buf = [0u8; 256];
    loop {
        let (out, deadline) = {
            let mut s = lock(&t.shared);
            let now = Instant::now();
            s.board.poll(now);
            (s.board.take_output(), s.board.next_deadline(now))
        };
        if !out.is_empty()
            && let Some(pty) = t.pty.as_mut()
        {
            let started = Instant::now();
            let written = tokio::time::timeout(WRITE_PATIENCE, pty.master.write_all(&out)).await;
            if matches!(written, Ok(Ok(()))) && out.contains(&super::wire::MSG_BWTIME) {
                lock(&t.shared).last_bwtime_write = Some(started);
            }
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            read = async {
                match t.pty.as_mut() {
                    Some(p) => p.master.read(&mut buf).await,
                    None => std::future::pending().await,
                }
            } => match read {
                Ok(n) if n > 0 => lock(&t.shared).board.handle_bytes(&buf[..n], Instant::now()),
                // The simulator holds a slave descriptor, so the master never hangs up by
                // itself; a failure here is unexpected: behave as if unplugged.
                _ => unplug(&mut t),
            },
            _ = t.wake.notified() => {}
            op = t.ops.recv() => match op {
                Some(Op::Unplug(done)) => {
                    unplug(&mut t);
                    let _ = done.send(());
                }
                Some(Op::Replug(done)) => {
                    let _ = done.send(replug(&mut t));
                }
                None => return,
            },
            _ = sleep => {}
        }
    }
}

fn unplug(t: &mut BoardTask) {
    // Symlink first: a daemon reacting to the hang-up must not reopen the old pty.
    pty::remove_symlink(&t.path);
    t.pty = None;
    let mut s = lock(&t.shared);
    s.plugged = false;
    s.board.power_cycle();
}

fn replug(t: &mut BoardTask) -> Result<(), pty::PtyError> {
    if t.pty.is_some() {
        return Ok(());
    }
    let new = Pty::open()?;
    pty::place_symlink(&new.slave_path, &t.path)?;
    t.pty = Some(new);
    let mut s = lock(&t.shared);
    s.plugged = true;
    s.board.power_cycle();
    Ok(())
}
