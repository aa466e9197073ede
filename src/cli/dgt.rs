//! `hallclock dgt decode`: DGT board → host bytes in, one JSON line per message out.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::ExitCode;

use base64::Engine as _;
use bytes::BytesMut;
use tokio_util::codec::Decoder as _;

use crate::dgt::{BoardState, HostCodec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// The bytes as they came from the serial port.
    Raw,
    /// One base64 string per line (the format of the reference captures); the lines are
    /// concatenated into one stream, so a message may span lines.
    Base64Lines,
}

#[derive(Debug, clap::Subcommand)]
pub enum DgtCmd {
    /// Decode DGT board->host bytes into one JSON line per message.
    Decode {
        /// Input file, or `-` / nothing for standard input.
        file: Option<String>,
        /// How the input is written.
        #[arg(long, value_enum, default_value = "raw")]
        input: InputFormat,
        /// Also print the all-zero BWTIME dummies the decoder normally drops (§5.2).
        #[arg(long)]
        keep_null_clock: bool,
        /// Print the game instead: the board events (start, moves, corrections,
        /// take-backs, irregularities) that the field updates amount to.
        #[arg(long)]
        moves: bool,
    },
}

/// Why `dgt decode` stopped, with where.
#[derive(Debug, thiserror::Error)]
enum DecodeCliError {
    #[error("cannot open {path}: {source}")]
    Open { path: String, source: io::Error },
    #[error("reading input: {0}")]
    Read(io::Error),
    #[error("line {line}: not base64: {source}")]
    Base64 {
        line: usize,
        source: base64::DecodeError,
    },
    #[error("writing output: {0}")]
    Write(io::Error),
    #[error("serialising message: {0}")]
    Json(serde_json::Error),
}

pub fn run(cmd: DgtCmd) -> ExitCode {
    match cmd {
        DgtCmd::Decode {
            file,
            input,
            keep_null_clock,
            moves,
        } => match decode(file.as_deref(), input, keep_null_clock, moves) {
            Ok(()) => ExitCode::SUCCESS,
            // `hallclock dgt decode … | head` is normal use, not a failure.
            Err(DecodeCliError::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("hallclock dgt decode: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn decode(
    file: Option<&str>,
    input: InputFormat,
    keep_null: bool,
    moves: bool,
) -> Result<(), DecodeCliError> {
    let reader: Box<dyn Read> = match file {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(path) => Box::new(File::open(path).map_err(|source| DecodeCliError::Open {
            path: path.to_owned(),
            source,
        })?),
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut codec = HostCodec::new().keep_null_clock(keep_null);
    let mut buf = BytesMut::new();
    let mut game = moves.then(BoardState::new);
    let mut emit = |codec: &mut HostCodec, buf: &mut BytesMut, eof: bool| {
        loop {
            let next = if eof {
                codec.decode_eof(buf)
            } else {
                codec.decode(buf)
            };
            match next {
                Ok(Some(m)) => match game.as_mut() {
                    Some(game) => {
                        for ev in game.on_message(&m) {
                            print_json(&mut out, &ev)?;
                        }
                    }
                    None => print_json(&mut out, &m)?,
                },
                // The host codec only fails on I/O, which it never does here.
                Ok(None) | Err(_) => break,
            }
        }
        // Flush per chunk so a live serial pipe shows messages as they arrive.
        out.flush().map_err(DecodeCliError::Write)
    };
    match input {
        InputFormat::Raw => {
            let mut reader = reader;
            let mut chunk = [0u8; 8192];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(DecodeCliError::Read(e)),
                };
                buf.extend_from_slice(&chunk[..n]);
                emit(&mut codec, &mut buf, false)?;
            }
        }
        InputFormat::Base64Lines => {
            for (i, line) in BufReader::new(reader).lines().enumerate() {
                let line = line.map_err(DecodeCliError::Read)?;
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(line)
                    .map_err(|source| DecodeCliError::Base64 {
                        line: i + 1,
                        source,
                    })?;
                buf.extend_from_slice(&bytes);
                emit(&mut codec, &mut buf, false)?;
            }
        }
    }
    emit(&mut codec, &mut buf, true)?;
    let s = codec.stats();
    if s.skipped_bytes > 0 || s.null_clock > 0 {
        eprintln!(
            "hallclock dgt decode: {} messages, {} garbage bytes skipped, {} null clock frames dropped",
            s.messages, s.skipped_bytes, s.null_clock
        );
    }
    Ok(())
}

fn print_json(out: &mut impl Write, m: &impl serde::Serialize) -> Result<(), DecodeCliError> {
    serde_json::to_writer(&mut *out, m).map_err(DecodeCliError::Json)?;
    out.write_all(b"\n").map_err(DecodeCliError::Write)
}
