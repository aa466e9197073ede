//! `hallclock ports`: candidate serial ports with their stable names and, where a DGT
//! board answers, its serial number — to help write the `[[boards]]` section.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dgt::{DgtMessage, codec::decode_all};

#[derive(Debug, clap::Args)]
pub struct PortsArgs {
    /// Do not talk to the ports (only list them).
    #[arg(long)]
    pub no_probe: bool,
    /// Also look in this folder (e.g. the simulator's), besides /dev/serial and /dev/dgt.
    #[arg(long)]
    pub scan: Vec<PathBuf>,
    /// How long to wait for a board's answer.
    #[arg(long, default_value_t = 1500)]
    pub timeout_ms: u64,
}

#[derive(Debug, Default)]
struct Port {
    names: Vec<PathBuf>,
}

fn list(dir: &Path, out: &mut BTreeMap<PathBuf, Port>, recurse: bool) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if recurse && p.is_dir() && !p.is_symlink() {
            list(&p, out, false);
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(&p) {
            out.entry(real).or_default().names.push(p);
        }
    }
}

fn candidates(extra: &[PathBuf]) -> BTreeMap<PathBuf, Port> {
    let mut out = BTreeMap::new();
    for d in ["/dev/serial/by-id", "/dev/serial/by-path"] {
        list(Path::new(d), &mut out, false);
    }
    list(Path::new("/dev/dgt"), &mut out, true);
    for d in extra {
        list(d, &mut out, false);
    }
    if let Ok(rd) = std::fs::read_dir("/dev") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("ttyACM")
                || name.starts_with("ttyUSB")
                || name.starts_with("rfcomm")
            {
                out.entry(e.path()).or_default();
            }
        }
    }
    out
}

/// Ask for the serial number (`45`) and version (`4d`), as the link's handshake does.
async fn probe(path: &Path, timeout: Duration) -> String {
    let mut port = match crate::link::port::open(path) {
        Ok(p) => p,
        Err(e) => return format!("cannot open: {e}"),
    };
    // Boards need a moment after an open (dgt-protocol.md §1).
    tokio::time::sleep(Duration::from_millis(300)).await;
    if port.write_all(&[0x40, 0x45, 0x4d]).await.is_err() {
        return "write failed".into();
    }
    let mut bytes = Vec::new();
    let mut buf = [0u8; 256];
    let end = tokio::time::Instant::now() + timeout;
    let (mut serial, mut version) = (None, None);
    while serial.is_none() || version.is_none() {
        match tokio::time::timeout_at(end, port.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => bytes.extend_from_slice(&buf[..n]),
            _ => break,
        }
        for m in decode_all(&bytes) {
            match m {
                DgtMessage::SerialNumber { serial: s } => serial = Some(s),
                DgtMessage::Version { major, minor } => version = Some((major, minor)),
                _ => {}
            }
        }
    }
    match (serial, version) {
        (Some(s), Some((a, b))) => format!("DGT board, serial {s}, firmware {a}.{b}"),
        (Some(s), None) => format!("DGT board, serial {s}"),
        _ => "no DGT answer".into(),
    }
}

pub fn run(args: PortsArgs) -> ExitCode {
    let ports = candidates(&args.scan);
    if ports.is_empty() {
        println!("no serial ports found (is a board plugged in? see docs/OPERATIONS.md)");
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hallclock ports: {e}");
            return ExitCode::FAILURE;
        }
    };
    let timeout = Duration::from_millis(args.timeout_ms);
    for (n, (device, port)) in ports.iter().enumerate() {
        let answer = if args.no_probe {
            String::new()
        } else {
            runtime.block_on(probe(device, timeout))
        };
        println!("{}  {answer}", device.display());
        for name in &port.names {
            println!("    {}", name.display());
        }
        // The stable name to put in the configuration: a udev or by-id/by-path name.
        let stable = port
            .names
            .iter()
            .find(|p| p.starts_with("/dev/dgt/by-path"))
            .or_else(|| {
                port.names
                    .iter()
                    .find(|p| p.starts_with("/dev/serial/by-path"))
            })
            .or_else(|| port.names.first())
            .unwrap_or(device);
        println!(
            "    [[boards]]\n    id = \"board-{:03}\"\n    port = \"{}\"",
            n + 1,
            stable.display()
        );
    }
    ExitCode::SUCCESS
}
