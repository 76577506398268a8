//! `xqz notation`: plays moves from a position and writes them in Chinese, WXF or ICCS
//! notation.

use std::io::{self, Write};

use anyhow::{Context, Result};
use xq_core::{
    Color,
    notation::{self, Style},
};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Output: a numbered game score, one full move per line (`1. 炮二平五 马8进7`); when Black \
moves first the line starts `1. ...`. Move numbers start from the FEN's move number. \
With --lines, one move per line without numbers.

Chinese notation counts files from the mover's right, Red in Chinese numerals, Black in \
digits (炮二平五, 马8进7); pieces sharing a file are written 前/中/后 or 一-五 (前炮平四, \
一兵平五). WXF writes C2.5, H8+7, C+.4. See the xq_core::notation documentation.

A WXF move that starts with '-' (`-C.4`) would be read as an option: write it `C-.4`.")]
pub struct Args {
    /// Position the moves start from (default: the starting position).
    #[arg(long)]
    fen: Option<String>,
    /// The moves, in order (ICCS such as h2e2 unless --input-style says otherwise).
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Notation to write: chinese, wxf or iccs.
    #[arg(long, default_value = "chinese", value_name = "STYLE")]
    style: String,
    /// Notation the --moves are written in: iccs, chinese or wxf.
    #[arg(long, default_value = "iccs", value_name = "STYLE")]
    input_style: String,
    /// One move per line without move numbers.
    #[arg(long)]
    lines: bool,
}

pub fn run(args: Args) -> Result<()> {
    let style: Style = args.style.parse().context("invalid --style")?;
    let input: Style = args.input_style.parse().context("invalid --input-style")?;
    let start = super::parse_fen(args.fen.as_deref())?;
    let mut pos = start.clone();
    let mut written = Vec::with_capacity(args.moves.len());
    for (i, text) in args.moves.iter().enumerate() {
        let m =
            notation::parse_move(&pos, text, input).with_context(|| format!("move {}", i + 1))?;
        written.push(notation::format_move(&pos, m, style));
        pos.play_unchecked(m);
    }
    let text = if args.lines {
        written.iter().map(|s| format!("{s}\n")).collect()
    } else {
        game_score(start.turn(), start.fullmoves(), &written)
    };
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    Ok(())
}

/// Numbered full moves, one per line: `1. red black`, or `1. ... black` when Black
/// moves first.
fn game_score(first: Color, first_number: u32, moves: &[String]) -> String {
    let mut out = String::new();
    let mut number = first_number;
    let mut iter = moves.iter();
    if first == Color::Black
        && let Some(m) = iter.next()
    {
        out += &format!("{number}. ... {m}\n");
        number += 1;
    }
    let rest: Vec<&String> = iter.collect();
    for pair in rest.chunks(2) {
        match pair {
            [red, black] => out += &format!("{number}. {red} {black}\n"),
            [red] => out += &format!("{number}. {red}\n"),
            _ => {}
        }
        number += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_score_numbers_full_moves() {
        let ms: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        assert_eq!(game_score(Color::Red, 1, &ms), "1. a b\n2. c\n");
        assert_eq!(game_score(Color::Black, 7, &ms), "7. ... a\n8. b c\n");
        assert_eq!(game_score(Color::Red, 1, &[]), "");
    }
}
