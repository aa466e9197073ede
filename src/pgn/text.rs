//! A game as a PGN value, and that value as text.

use std::fmt::Write as _;

use crate::rules::Millis;
use crate::rules::color::Color;

use super::tags::{clock, escape_tag};

/// Lines of the movetext are at most this long (the PGN export format's 80 columns).
const COLUMNS: usize = 80;

/// One move: its SAN, the mover's official clock after it, what it cost, and comments
/// (cleaned text, no braces) about what happened after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnMove {
    pub san: String,
    /// `[%clk]`: the mover's remaining time after the move, increment included.
    pub clk: Millis,
    /// `[%emt]`: the main time the move cost.
    pub emt: Millis,
    pub comments: Vec<String>,
}

/// A game ready to be written: tags in order (values unescaped), the comments before the
/// first move, the moves from the starting position, and the termination marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub intro: Vec<String>,
    /// The move number and side to move of the starting position.
    pub start_fullmove: u32,
    pub start_turn: Color,
    pub moves: Vec<PgnMove>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub marker: String,
}

impl PgnGame {
    /// A tag's value, if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The game in PGN export format, ending with a newline.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(256 + self.moves.len() * 48);
        self.render_into(&mut out);
        out
    }

    /// As [`render`](Self::render), appended to `out`.
    pub fn render_into(&self, out: &mut String) {
        for (name, value) in &self.tags {
            let _ = writeln!(out, "[{name} \"{}\"]", escape_tag(value));
        }
        out.push('\n');
        let mut w = Wrapper { out, line: 0 };
        for c in &self.intro {
            w.comment(&[c.as_str()]);
        }
        let mut number = self.start_fullmove;
        let mut turn = self.start_turn;
        // Black's number is repeated at the start and after a comment; every move has
        // its clock comment, so that is after every White move too.
        let mut after_comment = true;
        for m in &self.moves {
            match turn {
                Color::White => w.token(&format!("{number}.")),
                Color::Black if after_comment => w.token(&format!("{number}...")),
                Color::Black => {}
            }
            w.token(&m.san);
            let clk = format!("[%clk {}]", clock(m.clk));
            let emt = format!("[%emt {}]", clock(m.emt));
            w.comment(&[clk.as_str(), emt.as_str()]);
            for c in &m.comments {
                w.comment(&[c.as_str()]);
            }
            after_comment = true;
            if turn == Color::Black {
                number = number.saturating_add(1);
            }
            turn = turn.other();
        }
        w.token(&self.marker);
        w.out.push('\n');
    }
}

/// A round's games, one after another, in the order given (board order is the caller's:
/// see [`super::board_number`]).
pub fn round(games: &[PgnGame]) -> String {
    let mut out = String::with_capacity(games.len() * 4096);
    for (i, g) in games.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        g.render_into(&mut out);
    }
    out
}

/// Writes tokens separated by spaces, breaking lines before a token that would pass
/// column 80 (a token longer than a line gets a line of its own).
struct Wrapper<'a> {
    out: &'a mut String,
    line: usize,
}

impl Wrapper<'_> {
    fn token(&mut self, t: &str) {
        let len = t.chars().count();
        if self.line > 0 {
            if self.line + 1 + len > COLUMNS {
                self.out.push('\n');
                self.line = 0;
            } else {
                self.out.push(' ');
                self.line += 1;
            }
        }
        self.out.push_str(t);
        self.line += len;
    }

    /// `{ part part }`, on the current line if it fits, else on the next; a comment
    /// longer than a line is wrapped between words (never inside a `[%…]` command, which
    /// is one part).
    fn comment(&mut self, parts: &[&str]) {
        let whole: usize = 4 + parts.iter().map(|p| p.chars().count() + 1).sum::<usize>() - 1;
        if whole <= COLUMNS {
            let mut s = String::with_capacity(whole);
            s.push_str("{ ");
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                s.push_str(p);
            }
            s.push_str(" }");
            self.token(&s);
            return;
        }
        self.token("{");
        for p in parts {
            for word in p.split(' ').filter(|w| !w.is_empty()) {
                self.token(word);
            }
        }
        self.token("}");
    }
}
