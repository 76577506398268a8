//! WXF notation: `C2.5`, `H8+7`, `R+.3`, `C--1`, `++.4`, `3+.4`.
//!
//! See the [module documentation](super) for the conventions.

use super::{
    Dir, Motion, NotationError, motion_of,
    origin::{End, Origin, Place, Standing, resolve, standing},
    select,
};
use crate::{Move, Piece, Position, Role, Square};

fn letter(role: Role) -> char {
    match role {
        Role::General => 'K',
        Role::Advisor => 'A',
        Role::Elephant => 'E',
        Role::Horse => 'H',
        Role::Chariot => 'R',
        Role::Cannon => 'C',
        Role::Soldier => 'P',
    }
}

/// `K A E H R C P`, and `B`/`N` for the elephant and horse, in either case.
fn role_of(c: char) -> Option<Role> {
    Some(match c.to_ascii_uppercase() {
        'K' => Role::General,
        'A' => Role::Advisor,
        'E' | 'B' => Role::Elephant,
        'H' | 'N' => Role::Horse,
        'R' => Role::Chariot,
        'C' => Role::Cannon,
        'P' => Role::Soldier,
        _ => return None,
    })
}

fn digit(n: u8) -> char {
    char::from_digit(u32::from(n), 10).unwrap_or('?')
}

fn sign_char(end: End) -> char {
    match end {
        End::Front => '+',
        End::Rear => '-',
    }
}

/// Writes the name of the piece on `from` (two characters): `C2` by its file; `C+`/`C-`
/// in a stack of two or three, and the file for its middle piece; `++`, `C+`, `C5`,
/// `C-`, `--` in a stack of four or five; when soldiers are stacked on two files, the
/// file then `+`, `-` or the file again for the middle one (`3+`, `33`, `3-`).
fn push_origin(s: &mut String, pos: &Position, piece: Piece, from: Square) {
    let l = letter(piece.role);
    let (first, second) = match standing(pos, piece, from) {
        Standing::Alone { file } => (l, digit(file)),
        Standing::Stacked {
            file,
            len,
            depth,
            across: Some(_),
        } => {
            // Five soldiers allow at most three on a file here.
            let mark = match depth {
                0 => sign_char(End::Front),
                d if d + 1 == len => sign_char(End::Rear),
                _ => digit(file),
            };
            (digit(file), mark)
        }
        Standing::Stacked {
            file, len, depth, ..
        } => {
            let last = len - 1;
            match (len, depth) {
                (2 | 3, 0) => (l, sign_char(End::Front)),
                (2 | 3, d) if d == last => (l, sign_char(End::Rear)),
                (4 | 5, 0) => ('+', '+'),
                (4 | 5, d) if d == last => ('-', '-'),
                (4 | 5, 1) => (l, sign_char(End::Front)),
                (4 | 5, d) if d + 1 == last => (l, sign_char(End::Rear)),
                // The middle of three or five.
                _ => (l, digit(file)),
            }
        }
    };
    s.push(first);
    s.push(second);
}

/// Writes `m` in WXF notation, e.g. `C2.5`, `H8+7` or `C+.4`.
///
/// The move is named from the side of the piece on `m.from()`; a move from an empty
/// point is written in ICCS, as there is no piece to name.
pub fn to_wxf(pos: &Position, m: Move) -> String {
    let Some(piece) = pos.piece_at(m.from()) else {
        return m.to_string();
    };
    let mut s = String::with_capacity(4);
    push_origin(&mut s, pos, piece, m.from());
    let motion = motion_of(piece.color, piece.role, m);
    s.push(match motion.dir {
        Dir::Forward => '+',
        Dir::Backward => '-',
        Dir::Sideways => '.',
    });
    s.push(digit(motion.value));
    s
}

fn file_digit(c: char) -> Option<u8> {
    match c {
        '1'..='9' => Some(c as u8 - b'0'),
        _ => None,
    }
}

fn sign_of(c: char) -> Option<End> {
    match c {
        '+' => Some(End::Front),
        '-' => Some(End::Rear),
        _ => None,
    }
}

/// Reads a move of the side to move in WXF notation and checks it is legal.
///
/// Accepts `C2.5`, `H8+7`, `R+.3`, `+R.3`, `C--1`, `++.4`, `3+.4`, `33.4`, with the
/// variants listed in the [module documentation](super). Whitespace is ignored.
///
/// # Errors
/// A [`NotationError`] naming the problem.
pub fn parse_wxf(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let malformed = |reason| NotationError::Malformed {
        text: text.to_owned(),
        reason,
    };
    let mut chars = [' '; 4];
    let mut len = 0;
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        if len == 4 {
            return Err(malformed(
                "too long: a WXF move has four characters, e.g. C2.5",
            ));
        }
        chars[len] = c;
        len += 1;
    }
    if len == 0 {
        return Err(NotationError::Empty);
    }
    if len < 4 {
        return Err(malformed(
            "too short: a WXF move has four characters, e.g. C2.5",
        ));
    }
    let [a, b, op, v] = chars;
    let (role, origin) = match (a, b) {
        ('+' | '-', '+' | '-') if a == b => (
            Role::Soldier,
            Origin::Stacked(Place::End(sign_of(a).unwrap_or(End::Front))),
        ),
        ('+' | '-', l) if l.is_ascii_alphabetic() => {
            let role = role_of(l).ok_or_else(|| NotationError::UnknownPiece {
                text: text.to_owned(),
                found: l,
            })?;
            (
                role,
                Origin::Stacked(Place::Inner(sign_of(a).unwrap_or(End::Front))),
            )
        }
        (l, second) if l.is_ascii_alphabetic() => {
            let role = role_of(l).ok_or_else(|| NotationError::UnknownPiece {
                text: text.to_owned(),
                found: l,
            })?;
            let origin = match (file_digit(second), sign_of(second)) {
                (Some(n), _) => Origin::FileOrMiddle(n),
                (_, Some(end)) => Origin::Stacked(Place::Inner(end)),
                _ => return Err(malformed("the second character must be a file 1-9, + or -")),
            };
            (role, origin)
        }
        (d, second) if file_digit(d).is_some() => {
            let n = file_digit(d).unwrap_or(1);
            let origin = match (file_digit(second), sign_of(second)) {
                (Some(m), _) if m == n => Origin::OnFile(Place::Middle, n),
                (Some(_), _) => {
                    return Err(malformed(
                        "a middle soldier is named by its file twice, e.g. 33.4",
                    ));
                }
                (_, Some(end)) => Origin::OnFile(Place::End(end), n),
                _ => {
                    return Err(malformed(
                        "after a file number expected +, - or the file again",
                    ));
                }
            };
            (Role::Soldier, origin)
        }
        (c, _) if !c.is_ascii() => {
            return Err(NotationError::UnknownPiece {
                text: text.to_owned(),
                found: c,
            });
        }
        _ => {
            return Err(malformed(
                "expected a piece letter K A E H R C P, a stack marker (C+, ++) or a file (3+)",
            ));
        }
    };
    let dir = match op {
        '+' => Dir::Forward,
        '-' => Dir::Backward,
        '.' | '=' => Dir::Sideways,
        _ => {
            return Err(malformed(
                "the third character must be + (forward), - (back) or . (across)",
            ));
        }
    };
    let value =
        file_digit(v).ok_or_else(|| malformed("the fourth character must be a number 1-9"))?;
    let piece = Piece::new(pos.turn(), role);
    let origins = resolve(pos, text, piece, origin)?;
    select(pos, text, piece, &origins, Motion { dir, value })
}
