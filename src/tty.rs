//! A non-blocking file descriptor (a tty or a pseudo-terminal side) as a tokio byte stream:
//! the plumbing the link (real ports) and the simulator (pseudo-terminals) share, so neither
//! borrows the other's side.
//!
//! Reads go through epoll (`AsyncFd`), not a blocking thread pool, so a lever frame reaches
//! the link as soon as the kernel has it (the latency budget is well under a millisecond).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, Flock, OFlag, fcntl};
use nix::sys::termios::{self, BaudRate, ControlFlags, FlushArg, SetArg};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What an [`FdStream`] owns: a plain descriptor, or one that holds an exclusive `flock`
/// (released when dropped).
#[derive(Debug)]
pub enum OwnedTty {
    Plain(OwnedFd),
    Locked(Flock<OwnedFd>),
}

impl AsRawFd for OwnedTty {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            OwnedTty::Plain(fd) => fd.as_raw_fd(),
            OwnedTty::Locked(fd) => fd.as_raw_fd(),
        }
    }
}

impl AsFd for OwnedTty {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            OwnedTty::Plain(fd) => fd.as_fd(),
            OwnedTty::Locked(fd) => fd.as_fd(),
        }
    }
}

/// A byte stream over a non-blocking descriptor.
///
/// A hung-up tty (USB unplug, pseudo-terminal master closed) reads as `Ok(0)` or fails
/// with EIO / ENXIO; [`is_unplug`] tells those apart from other errors.
#[derive(Debug)]
pub struct FdStream {
    fd: AsyncFd<OwnedTty>,
}

impl FdStream {
    /// Wraps `fd`, switching it to non-blocking mode. Must run inside a tokio runtime.
    pub fn new(fd: OwnedTty) -> io::Result<Self> {
        let flags = fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        // SAFETY: `OwnedTty` owns the descriptor and only closes it when dropped, which
        // happens with the `AsyncFd`; `as_raw_fd` always returns that same descriptor.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)?;
        Ok(FdStream { fd })
    }

    pub fn get_ref(&self) -> &OwnedTty {
        self.fd.get_ref()
    }
}

/// True when the error means the device went away (USB unplug, pty master closed).
pub fn is_unplug(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::EIO | Errno::ENXIO | Errno::ENODEV)
    )
}

impl AsyncRead for FdStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|inner| {
                nix::unistd::read(inner.get_ref().as_raw_fd(), unfilled).map_err(io::Error::from)
            }) {
                Ok(Ok(n)) => {
                    // A short read emptied the tty's queue: clear the readiness now rather
                    // than learn it from one more read(2) failing with EAGAIN (as tokio's
                    // own sockets do). Bytes arriving later raise a new epoll edge, and
                    // tokio keeps a readiness newer than this guard's. At 5000 boards that
                    // is 5000 fewer system calls a second.
                    if n > 0 && n < unfilled.len() {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for FdStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            match guard.try_io(|inner| {
                nix::unistd::write(inner.get_ref().as_fd(), buf).map_err(io::Error::from)
            }) {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Bytes handed to write(2) are in the kernel's tty queue; there is nothing to flush.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Raw mode, 9600 8N1, receiver on, modem lines ignored (CLOCAL: no DTR/RTS/DCD games):
/// the DGT line settings, for a real port and for a pseudo-terminal's slave alike.
pub fn configure(fd: &OwnedFd) -> Result<(), Errno> {
    let mut t = termios::tcgetattr(fd)?;
    termios::cfmakeraw(&mut t);
    t.control_flags &= !(ControlFlags::CSIZE
        | ControlFlags::PARENB
        | ControlFlags::CSTOPB
        | ControlFlags::CRTSCTS);
    t.control_flags |= ControlFlags::CS8 | ControlFlags::CREAD | ControlFlags::CLOCAL;
    t.input_flags &= !(termios::InputFlags::IXON | termios::InputFlags::IXOFF);
    // A read returns whatever has arrived; epoll decides when to read.
    t.control_chars[termios::SpecialCharacterIndices::VMIN as usize] = 1;
    t.control_chars[termios::SpecialCharacterIndices::VTIME as usize] = 0;
    termios::cfsetspeed(&mut t, BaudRate::B9600)?;
    termios::tcsetattr(fd, SetArg::TCSANOW, &t)?;
    termios::tcflush(fd, FlushArg::TCIFLUSH)?;
    Ok(())
}
