//! WXF notation: `C2.5`, `H8+7`, `R+.3`, `C--1`, `++.4`, `3+.4`.
//!
//! See the [module documentation](super) for the conventions.

use super::{
    Dir, Motion, NotationError, Stack, column, file_of_own, motion_of, own_file, select, stacks,
    uses_markers,
};
use crate::{Move, Piece, Position, Role, Square};

/// Front (`+`) or rear (`-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    Front,
    Rear,
}

/// How the notation names the moving piece (the first two characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// `C2`: the piece on this file; for three or five soldiers on it, the middle one.
    File(u8),
    /// `C+`, `C-` (also written `+C`, `-C`): front or rear of a stack of two or three;
    /// the second from the front or rear of four or five.
    Marker(Sign),
    /// `++`, `--`: the foremost or rearmost soldier of a stack of four or five.
    Extreme(Sign),
    /// `3+`, `3-`: front or rear soldier on this file, when two files hold stacks.
    OnFile(Sign, u8),
    /// `33`: the middle soldier of three on this file, when two files hold stacks.
    MiddleOnFile(u8),
}

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

fn sign_char(s: Sign) -> char {
    match s {
        Sign::Front => '+',
        Sign::Rear => '-',
    }
}

/// How the piece on `from` is named in a move.
fn describe(pos: &Position, piece: Piece, from: Square) -> Origin {
    let file = own_file(piece.color, from);
    let col = column(pos, piece, from.file());
    if !uses_markers(piece.role) || col.len() < 2 {
        return Origin::File(file);
    }
    let idx = col.iter().position(|&s| s == from).unwrap_or(0);
    let last = col.len() - 1;
    if piece.role == Role::Soldier && stacks(pos, piece).len() >= 2 {
        // Two stacked files: the file first, then the place on it. Five soldiers
        // allow at most three on a file here.
        return match idx {
            0 => Origin::OnFile(Sign::Front, file),
            i if i == last => Origin::OnFile(Sign::Rear, file),
            _ => Origin::MiddleOnFile(file),
        };
    }
    match (col.len(), idx) {
        (2 | 3, 0) => Origin::Marker(Sign::Front),
        (2 | 3, i) if i == last => Origin::Marker(Sign::Rear),
        (4 | 5, 0) => Origin::Extreme(Sign::Front),
        (4 | 5, i) if i == last => Origin::Extreme(Sign::Rear),
        (4 | 5, 1) => Origin::Marker(Sign::Front),
        (4 | 5, i) if i + 1 == last => Origin::Marker(Sign::Rear),
        // The middle of three or five.
        _ => Origin::File(file),
    }
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
    let l = letter(piece.role);
    match describe(pos, piece, m.from()) {
        Origin::File(n) => {
            s.push(l);
            s.push(digit(n));
        }
        Origin::Marker(sign) => {
            s.push(l);
            s.push(sign_char(sign));
        }
        Origin::Extreme(sign) => {
            s.push(sign_char(sign));
            s.push(sign_char(sign));
        }
        Origin::OnFile(sign, n) => {
            s.push(digit(n));
            s.push(sign_char(sign));
        }
        Origin::MiddleOnFile(n) => {
            s.push(digit(n));
            s.push(digit(n));
        }
    }
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

fn sign_of(c: char) -> Option<Sign> {
    match c {
        '+' => Some(Sign::Front),
        '-' => Some(Sign::Rear),
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
            Origin::Extreme(sign_of(a).unwrap_or(Sign::Front)),
        ),
        ('+' | '-', l) if l.is_ascii_alphabetic() => {
            let role = role_of(l).ok_or_else(|| NotationError::UnknownPiece {
                text: text.to_owned(),
                found: l,
            })?;
            (role, Origin::Marker(sign_of(a).unwrap_or(Sign::Front)))
        }
        (l, second) if l.is_ascii_alphabetic() => {
            let role = role_of(l).ok_or_else(|| NotationError::UnknownPiece {
                text: text.to_owned(),
                found: l,
            })?;
            let origin = match (file_digit(second), sign_of(second)) {
                (Some(n), _) => Origin::File(n),
                (_, Some(sign)) => Origin::Marker(sign),
                _ => return Err(malformed("the second character must be a file 1-9, + or -")),
            };
            (role, origin)
        }
        (d, second) if file_digit(d).is_some() => {
            let n = file_digit(d).unwrap_or(1);
            let origin = match (file_digit(second), sign_of(second)) {
                (Some(m), _) if m == n => Origin::MiddleOnFile(n),
                (Some(_), _) => {
                    return Err(malformed(
                        "a middle soldier is named by its file twice, e.g. 33.4",
                    ));
                }
                (_, Some(sign)) => Origin::OnFile(sign, n),
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

/// The points the origin can denote; the motion then picks among them.
fn resolve(
    pos: &Position,
    text: &str,
    piece: Piece,
    origin: Origin,
) -> Result<Stack, NotationError> {
    let no_place = || NotationError::NoSuchStackPlace {
        text: text.to_owned(),
        piece,
    };
    let file_column = |n: u8| -> Result<Stack, NotationError> {
        let col = file_of_own(piece.color, n)
            .map(|f| column(pos, piece, f))
            .unwrap_or_default();
        if col.is_empty() {
            Err(NotationError::NoPieceOnFile {
                text: text.to_owned(),
                piece,
                file: n,
            })
        } else {
            Ok(col)
        }
    };
    let one = |sq: Option<&Square>| -> Result<Stack, NotationError> {
        sq.map(|&s| [s].into_iter().collect()).ok_or_else(no_place)
    };
    match origin {
        Origin::File(n) => {
            let col = file_column(n)?;
            // On a file of three or five, the file alone names the middle piece.
            if uses_markers(piece.role) && col.len() % 2 == 1 && col.len() >= 3 {
                one(col.get(col.len() / 2))
            } else {
                Ok(col)
            }
        }
        Origin::Marker(sign) | Origin::Extreme(sign) => {
            let all = stacks(pos, piece);
            if all.is_empty() {
                return Err(NotationError::NotStacked {
                    text: text.to_owned(),
                    piece,
                });
            }
            let extreme = matches!(origin, Origin::Extreme(_));
            let out: Stack = all
                .iter()
                .filter_map(|(_, s)| {
                    // `C+` is the second piece of a stack of four or five.
                    let inner = usize::from(!extreme && s.len() >= 4);
                    match sign {
                        Sign::Front => s.get(inner),
                        Sign::Rear => s.len().checked_sub(1 + inner).and_then(|i| s.get(i)),
                    }
                    .copied()
                })
                .collect();
            if out.is_empty() {
                Err(no_place())
            } else {
                Ok(out)
            }
        }
        Origin::OnFile(sign, n) => {
            let col = file_column(n)?;
            if col.len() < 2 {
                return Err(no_place());
            }
            one(match sign {
                Sign::Front => col.first(),
                Sign::Rear => col.last(),
            })
        }
        Origin::MiddleOnFile(n) => {
            let col = file_column(n)?;
            if col.len() % 2 == 1 && col.len() >= 3 {
                one(col.get(col.len() / 2))
            } else {
                Err(no_place())
            }
        }
    }
}
