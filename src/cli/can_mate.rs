//! `hallclock rules can-mate --fen FEN --side white|black`: the 6.9 verdict as one JSON object.
//!
//! Exit 0 with the verdict (`can_mate`, `cannot_mate` or `unknown`); exit 2 with a message on
//! stderr when the FEN or the side is malformed, as clap does for its own usage errors.

use std::process::ExitCode;

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::{Color, EnPassantMode};

use crate::rules::dead_position::{MateVerdict, can_mate};
use crate::rules::fen::parse_position;

#[derive(Debug, clap::Args)]
pub struct CanMateArgs {
    /// The position, as FEN (trailing fields may be left out: `8/8/8/8/8/4k3/8/4K1N1 w`).
    #[arg(long)]
    pub fen: String,
    /// The side whose mating chances are asked about (the intended winner: the opponent of
    /// the player whose flag fell).
    #[arg(long, value_enum)]
    pub side: Side,
}

/// The intended winner, as written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Side {
    #[value(alias = "w")]
    White,
    #[value(alias = "b")]
    Black,
}

impl From<Side> for Color {
    fn from(side: Side) -> Color {
        match side {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

/// Same as clap's exit code for a usage error, so scripts see one code for "bad input".
const EXIT_BAD_INPUT: u8 = 2;

pub fn run(args: CanMateArgs) -> ExitCode {
    let pos = match parse_position(&args.fen) {
        Ok(pos) => pos,
        Err(e) => {
            eprintln!(
                "hallclock rules can-mate: invalid --fen {:?}: {e}",
                args.fen
            );
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let winner = Color::from(args.side);
    let verdict = can_mate(&pos, winner);
    let report = Report {
        verdict: &verdict,
        side: winner.fold_wb("white", "black"),
        fen: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
    };
    match serde_json::to_string(&report) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hallclock rules can-mate: cannot write the verdict: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    verdict: &'a MateVerdict,
    side: &'static str,
    /// The position as understood, so the record shows what was judged.
    fen: String,
}
