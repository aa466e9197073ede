//! Pseudo-terminals standing in for USB serial ports, reachable at stable symlinks.
//!
//! The simulator holds the master side and also keeps one descriptor of the slave open:
//! on Linux a master reads EIO while no slave descriptor is open, and the daemon is free to
//! close and reopen its side. Dropping a [`Pty`] closes both, so the daemon's descriptor
//! hangs up (EIO), which is what a USB unplug looks like.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use crate::tty::{FdStream, OwnedTty};

#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    #[error("cannot create a pseudo-terminal: {0}")]
    Open(#[source] io::Error),
    #[error("cannot place the symlink {link} -> {target}: {source}")]
    Symlink {
        link: PathBuf,
        target: PathBuf,
        source: io::Error,
    },
}

/// One pseudo-terminal pair; the daemon opens [`Pty::slave_path`] (through the symlink).
#[derive(Debug)]
pub struct Pty {
    pub master: FdStream,
    /// Held only so the master does not read EIO while the daemon has the port closed.
    _slave: OwnedFd,
    pub slave_path: PathBuf,
}

impl Pty {
    /// Opens a new pair, slave in raw mode (no echo, no line discipline) so bytes written
    /// before the daemon opens the port are not echoed back to the board side.
    pub fn open() -> Result<Pty, PtyError> {
        let pair = nix::pty::openpty(None, None).map_err(|e| PtyError::Open(e.into()))?;
        crate::tty::configure(&pair.slave).map_err(|e| PtyError::Open(e.into()))?;
        let slave_path = nix::unistd::ttyname(&pair.slave).map_err(|e| PtyError::Open(e.into()))?;
        let master = FdStream::new(OwnedTty::Plain(pair.master)).map_err(PtyError::Open)?;
        Ok(Pty {
            master,
            _slave: pair.slave,
            slave_path,
        })
    }
}

/// Points `link` at `target`, replacing any existing link atomically (rename over it), so
/// a daemon polling the path never sees a half-made link.
pub fn place_symlink(target: &Path, link: &Path) -> Result<(), PtyError> {
    let err = |source| PtyError::Symlink {
        link: link.to_path_buf(),
        target: target.to_path_buf(),
        source,
    };
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).map_err(err)?;
    std::fs::rename(&tmp, link).map_err(err)
}

/// Removes the symlink, as udev removes `/dev/serial/by-id/...` when a board is unplugged.
pub fn remove_symlink(link: &Path) {
    let _ = std::fs::remove_file(link);
}
