//! One async task per serial port: open by a stable path, handshake, liveness, clock
//! commands with ACK and resend, unplug detection and reopening.
//!
//! The daemon starts a link with [`spawn`] and a [`LinkConfig`]; it receives
//! [`LinkEvent`]s (online with the board's identity, clock readings, lever changes,
//! buttons, board updates, offline, errors) and sends [`LinkCommand`]s (set-and-run,
//! text, beep). States and policies are described in `docs/LINK.md`.
//!
//! ```no_run
//! # async fn demo() {
//! use hallclock::link::{self, LinkCommand, LinkConfig, LinkEvent, RunSide};
//! use std::time::Duration;
//! let mut link = link::spawn(LinkConfig::new("/dev/serial/by-id/usb-DGT_DGT_Chessboard-if00"));
//! while let Some(event) = link.events.recv().await {
//!     if let LinkEvent::Online(id) = &event {
//!         println!("board {} online", id.serial);
//!         let _ = link.commands.send(LinkCommand::SetAndRun {
//!             left: Duration::from_secs(5400), right: Duration::from_secs(5400), run: RunSide::Left,
//!         }).await;
//!     }
//! }
//! # }
//! ```

pub mod event;
pub mod port;
pub mod session;
mod task;
pub mod testing;

pub use event::{
    BoardIdentity, ClockCommandError, ClockInfo, ClockModel, LinkCommand, LinkError, LinkEvent,
    Offline, RunSide,
};
pub use port::OpenError;
pub use session::{LinkConfig, Session, SessionEnd};
pub use task::{LinkHandle, run, spawn};
