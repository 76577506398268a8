//! Move notation: ICCS coordinates, Chinese file notation (中文纵线记谱) and WXF.
//!
//! A move's text in the Chinese and WXF notations depends on the position: files are
//! counted from the mover's right, and pieces of one kind that share a file are told
//! apart by their place in that file. So every function here takes the [`Position`]
//! the move is played in.
//!
//! ```
//! use xq_core::{Position, notation::{self, Style}};
//! let pos = Position::startpos();
//! let m = pos.parse_iccs("h2e2").unwrap();
//! assert_eq!(notation::to_chinese(&pos, m), "炮二平五");
//! assert_eq!(notation::to_wxf(&pos, m), "C2.5");
//! assert_eq!(notation::parse_move(&pos, "炮二平五", Style::Chinese).unwrap(), m);
//! ```
//!
//! # Common ground
//!
//! * Files are numbered 1-9 from the mover's own right (CXA rules 1.1): Red writes
//!   Chinese numerals (file `i` is 一), Black writes digits (file `a` is 1). WXF uses
//!   digits for both sides.
//! * A move is piece, origin, direction, value. The directions are 进/`+` (towards the
//!   opponent), 退/`-` (back) and 平/`.` (along the rank). After 平 the value is the
//!   destination file. After 进/退 it is the number of ranks moved for the pieces that
//!   move straight (general, chariot, cannon, soldier) and the destination file for
//!   the horse, elephant and advisor.
//! * "Front" means nearer the opponent, from the mover's point of view.
//!
//! # Pieces sharing a file
//!
//! The chariot, horse and cannon (two of each) and the soldiers (five) can stand
//! several to a file. The conventions implemented, and their sources:
//!
//! | on the file | Chinese | WXF |
//! |---|---|---|
//! | 2 | 前炮 / 后炮 (no file) | `C+` / `C-` |
//! | 3 soldiers | 前兵 / 中兵 / 后兵 | `P+` / `P3` (the file: "neither front nor rear") / `P-` |
//! | 4 soldiers | 一兵 二兵 三兵 四兵, from the front | `++` `P+` `P-` `--` |
//! | 5 soldiers | 一兵 … 五兵 | `++` `P+` `P3` `P-` `--` |
//! | 2+ soldiers on each of two files | 一兵 … 五兵 numbered across both files: files in the mover's order (right to left), then front to back on each | the file, then `+`, the file again (middle of three) or `-`: `3+`, `33`, `3-`, `7+`, `7-` |
//!
//! The Chinese forms are those of the CXA rules (第7条 7.5: 前/中/后 instead of the
//! file, e.g. 前马退四) extended for four or five soldiers and for two stacked files as
//! the computer standard 《中国象棋电脑应用规范（二）：着法表示》 (xqbase.com,
//! 2006) does: ordinals 一…五 replace 前/中/后, and are written in Chinese numerals for
//! Black too (一卒平5), since they count pieces, not files. The WXF forms are those of
//! the WXF's "Official Xiangqi Piece Names and Notation" (wxf.org), which puts the
//! marker after the letter (`C+.4`, `R--1`).
//!
//! Advisors and elephants are always written with their file, even when two share it
//! (仕六进五, `A6+5`): on a shared file one can only advance and the other only
//! retreat, so the direction tells them apart (xqbase; WXF usage likewise).
//!
//! # What the parsers accept
//!
//! Parsing is lenient where that cannot change the meaning:
//!
//! * Chinese: the piece names of either colour and their variants (帥/帅/將/将,
//!   仕/士, 相/象, 馬/马/傌, 車/车/俥, 炮/砲/包, 兵/卒), 進 for 进 and 後 for 后,
//!   Chinese numerals, fullwidth digits (１…９) and ASCII digits for either side;
//!   the traditional form that keeps the file after a marker (前兵九平八) and its
//!   short form without the piece (前九平八, a soldier); a plain file form for a piece
//!   in a stack when the direction and value pick out one move.
//! * WXF: letters in either case, `E` or `B` for the elephant, `H` or `N` for the
//!   horse; `.` or `=` for a sideways move; the marker before the letter as well as
//!   after it (`+C.4` = `C+.4`); `++`/`--` for the front and rear soldier of any stack.
//! * The Fairy-Stockfish style index-and-file soldier forms (`14+1`) are not accepted:
//!   `33` would mean "the middle soldier on file 3" in WXF but "the third soldier on
//!   file 3" there.
//!
//! Parsing never panics. Text that names no legal move, or more than one, is an error
//! naming the problem.

mod chinese;
mod origin;
mod wxf;

use std::{fmt, str::FromStr};

pub use chinese::{parse_chinese, to_chinese};
pub use wxf::{parse_wxf, to_wxf};

use crate::{Color, File, IllegalMoveError, Move, Piece, PlayError, Position, Role, Square};

/// The notations [`format_move`] writes and [`parse_move`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Style {
    /// ICCS coordinates as UCCI writes them: `h2e2`.
    #[default]
    Iccs,
    /// Chinese file notation: `炮二平五`, `马8进7`.
    Chinese,
    /// WXF notation: `C2.5`, `H8+7`.
    Wxf,
}

impl Style {
    pub const ALL: [Style; 3] = [Style::Iccs, Style::Chinese, Style::Wxf];

    /// The lower-case name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Style::Iccs => "iccs",
            Style::Chinese => "chinese",
            Style::Wxf => "wxf",
        }
    }
}

impl fmt::Display for Style {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A notation name that is not `iccs`, `chinese` or `wxf`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown notation style {0:?} (expected iccs, chinese or wxf)")]
pub struct ParseStyleError(pub String);

impl FromStr for Style {
    type Err = ParseStyleError;

    /// Reads `iccs`, `chinese` (also `cn`, `zh`) or `wxf`, in any case.
    fn from_str(s: &str) -> Result<Style, ParseStyleError> {
        match s.to_ascii_lowercase().as_str() {
            "iccs" => Ok(Style::Iccs),
            "chinese" | "cn" | "zh" => Ok(Style::Chinese),
            "wxf" => Ok(Style::Wxf),
            _ => Err(ParseStyleError(s.to_owned())),
        }
    }
}

/// Why a move text was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("empty move text")]
    Empty,
    #[error("{text:?}: unknown piece {found:?}")]
    UnknownPiece { text: String, found: char },
    #[error("{text:?}: {reason}")]
    Malformed { text: String, reason: &'static str },
    #[error("{text:?}: no {} on {}'s file {file}", piece_name(*.piece), .piece.color.name())]
    NoPieceOnFile {
        text: String,
        piece: Piece,
        file: u8,
    },
    #[error("{text:?}: no file holds two or more {}s, so there is no front, middle or rear one", piece_name(*.piece))]
    NotStacked { text: String, piece: Piece },
    #[error("{text:?}: the stacks of {}s here have no piece in that place", piece_name(*.piece))]
    NoSuchStackPlace { text: String, piece: Piece },
    #[error("{text:?}: the {} named cannot move that way", piece_name(*.piece))]
    Impossible { text: String, piece: Piece },
    #[error(
        "{text:?}: the move {m} is illegal (it leaves the general attacked or facing the other general)"
    )]
    Illegal { text: String, m: Move },
    #[error("{text:?} is ambiguous: it fits {}", join_moves(.candidates))]
    Ambiguous { text: String, candidates: Vec<Move> },
    #[error(transparent)]
    Iccs(#[from] PlayError),
}

fn join_moves(ms: &[Move]) -> String {
    ms.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// "red cannon", for messages.
fn piece_name(p: Piece) -> String {
    let role = match p.role {
        Role::General => "general",
        Role::Advisor => "advisor",
        Role::Elephant => "elephant",
        Role::Horse => "horse",
        Role::Chariot => "chariot",
        Role::Cannon => "cannon",
        Role::Soldier => "soldier",
    };
    format!("{} {role}", p.color.name())
}

/// Writes the move `m` of the piece on `m.from()` in `style`.
///
/// The move is described as the piece standing on its origin would make it, from
/// that piece's side; it should be legal in `pos` for the text to parse back. A move
/// from an empty point has no piece to name and is written in ICCS in every style.
pub fn format_move(pos: &Position, m: Move, style: Style) -> String {
    match style {
        Style::Iccs => m.to_string(),
        Style::Chinese => to_chinese(pos, m),
        Style::Wxf => to_wxf(pos, m),
    }
}

/// Reads a move of the side to move in `style` and checks that it is legal.
///
/// # Errors
/// A [`NotationError`] naming the problem: bad syntax, an unknown piece, no such piece
/// on the file, a move the piece cannot make, an illegal move, or text that fits more
/// than one legal move.
pub fn parse_move(pos: &Position, text: &str, style: Style) -> Result<Move, NotationError> {
    match style {
        Style::Iccs => {
            let t = text.trim();
            if t.is_empty() {
                return Err(NotationError::Empty);
            }
            Ok(pos.parse_iccs(t)?)
        }
        Style::Chinese => parse_chinese(pos, text),
        Style::Wxf => parse_wxf(pos, text),
    }
}

/// Writes a sequence of moves from `pos` in `style`, playing each in turn.
///
/// # Errors
/// The first move that is not legal where it is played.
pub fn format_line(
    pos: &Position,
    moves: &[Move],
    style: Style,
) -> Result<Vec<String>, IllegalMoveError> {
    let mut pos = pos.clone();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        if !pos.is_legal(m) {
            return Err(IllegalMoveError { m, fen: pos.fen() });
        }
        out.push(format_move(&pos, m, style));
        pos.play_unchecked(m);
    }
    Ok(out)
}

// --- Geometry shared by the Chinese and WXF notations ---------------------------------

/// The file of `sq` numbered 1-9 from `c`'s right.
fn own_file(c: Color, sq: Square) -> u8 {
    let f = sq.file().index() as u8;
    match c {
        Color::Red => 9 - f,
        Color::Black => f + 1,
    }
}

/// The file that `c` calls `n` (1-9).
fn file_of_own(c: Color, n: u8) -> Option<File> {
    if !(1..=9).contains(&n) {
        return None;
    }
    File::try_new(match c {
        Color::Red => 9 - i32::from(n),
        Color::Black => i32::from(n) - 1,
    })
}

/// Whether the role moves along lines, so that 进/退 count ranks.
fn moves_straight(role: Role) -> bool {
    matches!(
        role,
        Role::General | Role::Chariot | Role::Cannon | Role::Soldier
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Forward,
    Backward,
    Sideways,
}

/// Direction and value of a move as the notations write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Motion {
    dir: Dir,
    /// Ranks moved (straight movers going forward or back) or destination file (1-9).
    value: u8,
}

/// The motion of `m` made by a piece of role `role` and colour `c`.
fn motion_of(c: Color, role: Role, m: Move) -> Motion {
    let (from, to) = (m.from(), m.to());
    let up = to.rank().index() as i32 - from.rank().index() as i32;
    let advance = match c {
        Color::Red => up,
        Color::Black => -up,
    };
    let dir = match advance.signum() {
        1 => Dir::Forward,
        -1 => Dir::Backward,
        _ => Dir::Sideways,
    };
    let value = if dir != Dir::Sideways && moves_straight(role) && from.file() == to.file() {
        advance.unsigned_abs() as u8
    } else {
        own_file(c, to)
    };
    Motion { dir, value }
}

/// The one legal move of `piece` from one of `origins` with `motion`, or the error
/// that says why there is none or several.
fn select(
    pos: &Position,
    text: &str,
    piece: Piece,
    origins: &[Square],
    motion: Motion,
) -> Result<Move, NotationError> {
    let fits =
        |m: &Move| origins.contains(&m.from()) && motion_of(piece.color, piece.role, *m) == motion;
    let found: Vec<Move> = pos.legal_moves().into_iter().filter(fits).collect();
    match found.as_slice() {
        [m] => Ok(*m),
        [] => match pos.pseudo_legal_moves().into_iter().find(fits) {
            Some(m) => Err(NotationError::Illegal {
                text: text.to_owned(),
                m,
            }),
            None => Err(NotationError::Impossible {
                text: text.to_owned(),
                piece,
            }),
        },
        _ => Err(NotationError::Ambiguous {
            text: text.to_owned(),
            candidates: found,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rank;

    #[test]
    fn own_files_count_from_each_sides_right() {
        let i0: Square = "i0".parse().unwrap();
        let a9: Square = "a9".parse().unwrap();
        assert_eq!(own_file(Color::Red, i0), 1);
        assert_eq!(own_file(Color::Black, i0), 9);
        assert_eq!(own_file(Color::Black, a9), 1);
        for n in 1..=9 {
            for c in Color::ALL {
                let f = file_of_own(c, n).unwrap();
                assert_eq!(own_file(c, Square::from_coords(f, Rank::new(0))), n);
            }
        }
        assert_eq!(file_of_own(Color::Red, 0), None);
        assert_eq!(file_of_own(Color::Black, 10), None);
    }

    #[test]
    fn style_names_round_trip() {
        for s in Style::ALL {
            assert_eq!(s.name().parse::<Style>(), Ok(s));
        }
        assert!("pgn".parse::<Style>().is_err());
    }
}
