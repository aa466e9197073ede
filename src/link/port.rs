//! Opening a DGT board's serial port by its stable path, 9600 8N1, raw.
//!
//! The port is opened directly with termios (nix) rather than through serialport: that
//! keeps the exact errno for the user-facing message, and it never touches DTR/RTS, which
//! pseudo-terminals refuse (DESIGN.md §8) and which DGT boards do not use
//! (dgt-protocol.md §1: "No use of handshaking"). Any [`FdStream`]-like
//! `AsyncRead + AsyncWrite` can stand in for a port, so the backend can change.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;

use crate::tty::{FdStream, OwnedTty};

/// Why a port could not be opened. Every message names the path.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path}: no such serial port (is the board plugged in, and is the path right?)")]
    Missing { path: PathBuf },
    #[error(
        "{path}: permission denied (the daemon's user needs the `dialout` group or a udev rule for this port)"
    )]
    PermissionDenied { path: PathBuf },
    #[error("{path}: port busy (another program has it open; close it or pick another port)")]
    Busy { path: PathBuf },
    #[error("{path}: not a serial port")]
    NotATty { path: PathBuf },
    #[error("{path}: cannot open the serial port: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl OpenError {
    /// True when retrying later may help (the device is absent or being replugged).
    pub fn is_absent(&self) -> bool {
        matches!(self, OpenError::Missing { .. })
    }

    fn from_errno(path: &Path, errno: Errno) -> Self {
        let path = path.to_path_buf();
        match errno {
            // ENXIO/ENODEV/EIO: the device node (or the pty behind a symlink) is gone.
            Errno::ENOENT | Errno::ENXIO | Errno::ENODEV | Errno::EIO => {
                OpenError::Missing { path }
            }
            Errno::EACCES | Errno::EPERM => OpenError::PermissionDenied { path },
            Errno::EBUSY | Errno::EWOULDBLOCK => OpenError::Busy { path },
            Errno::ENOTTY => OpenError::NotATty { path },
            other => OpenError::Io {
                path,
                source: io::Error::from(other),
            },
        }
    }
}

nix::ioctl_none_bad!(tiocexcl, nix::libc::TIOCEXCL);

/// Opens `path` as a DGT serial port: raw 9600 8N1, no flow control, exclusive, input
/// flushed (stale bytes from before the open would otherwise look like replies).
pub fn open(path: &Path) -> Result<FdStream, OpenError> {
    let raw = nix::fcntl::open(
        path,
        OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| OpenError::from_errno(path, e))?;
    // SAFETY: `raw` was just returned by open(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // flock keeps out cooperating openers even when we run as root (TIOCEXCL does not).
    let fd = Flock::lock(fd, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| OpenError::from_errno(path, e))?;
    // SAFETY: TIOCEXCL takes no argument; `fd` is a valid open descriptor.
    if let Err(e) = unsafe { tiocexcl(fd.as_raw_fd()) } {
        return Err(OpenError::from_errno(path, e));
    }
    crate::tty::configure(&fd).map_err(|e| OpenError::from_errno(path, e))?;
    FdStream::new(OwnedTty::Locked(fd)).map_err(|source| OpenError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// How long ago the device node behind `fd` appeared (its ctime: a USB serial node is
/// made, and given its owner, when the board is plugged in), or `None` if that cannot be
/// told (a clock set back since).
pub fn age(fd: &impl AsRawFd, now: SystemTime) -> Option<Duration> {
    let st = nix::sys::stat::fstat(fd.as_raw_fd()).ok()?;
    let secs = u64::try_from(st.st_ctime).ok()?;
    let nanos = u32::try_from(st.st_ctime_nsec).ok()?;
    let appeared = UNIX_EPOCH.checked_add(Duration::new(secs, nanos))?;
    now.duration_since(appeared).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_open_error_names_the_path_and_what_to_do() {
        let p = Path::new("/dev/serial/by-id/usb-DGT_DGT_Chessboard-if00");
        let msg = |e| OpenError::from_errno(p, e).to_string();
        assert_eq!(
            msg(Errno::EACCES),
            "/dev/serial/by-id/usb-DGT_DGT_Chessboard-if00: permission denied (the daemon's user needs the `dialout` group or a udev rule for this port)"
        );
        assert!(msg(Errno::ENOENT).ends_with(
            "-if00: no such serial port (is the board plugged in, and is the path right?)"
        ));
        assert!(msg(Errno::EBUSY).contains("-if00: port busy"));
        assert!(msg(Errno::EWOULDBLOCK).contains("-if00: port busy"));
        assert!(msg(Errno::ENOTTY).ends_with("-if00: not a serial port"));
        assert!(msg(Errno::ENXIO).contains("no such serial port"));
        assert!(
            msg(Errno::EINVAL)
                .starts_with("/dev/serial/by-id/usb-DGT_DGT_Chessboard-if00: cannot open")
        );
    }
}
