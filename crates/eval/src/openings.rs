//! Opening suites for matches: every opening is played twice with colours reversed, so
//! an unbalanced opening favours neither player.
//!
//! Sources: a built-in suite of common opening lines, random balanced openings
//! (seeded random plies kept only if the built-in alpha-beta engine at depth 2 scores
//! them within ±80), or a user file with one opening a line: a FEN, ICCS moves from the
//! starting position (`h2e2 h9g7`), or `FEN | moves`. `#` starts a comment.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Move, Position};

use crate::alphabeta::{AbLimits, AlphaBeta};

/// A start position and moves played from it before the players take over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub name: String,
    pub start: Position,
    pub moves: Vec<Move>,
}

impl Opening {
    /// The position the players start from.
    pub fn position(&self) -> Position {
        let mut p = self.start.clone();
        for &m in &self.moves {
            p.play_unchecked(m);
        }
        p
    }
}

/// A line that is not an opening.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}:{line}: {message}")]
pub struct OpeningError {
    pub source_name: String,
    pub line: usize,
    pub message: String,
}

/// The built-in suite: common first moves and replies, named as players know them.
const BUILTIN: &[(&str, &str)] = &[
    (
        "中炮对屏风马 (central cannon v screen horses)",
        "h2e2 h9g7 h0g2 b9c7",
    ),
    ("中炮过河车对屏风马", "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 h0h6"),
    ("五七炮对屏风马", "h2e2 h9g7 h0g2 b9c7 b2c2"),
    ("中炮对反宫马", "h2e2 h9g7 h0g2 b7d7"),
    ("顺炮 (same-direction cannons)", "h2e2 h7e7"),
    ("列炮 (opposite cannons)", "h2e2 b7e7"),
    ("中炮对单提马", "h2e2 b9a7"),
    ("中炮对左三步虎", "h2e2 b9c7 h0g2 b7b3"),
    ("仙人指路 (pawn opening)", "c3c4"),
    ("仙人指路对卒底炮", "c3c4 h7c7"),
    ("仙人指路对飞象", "c3c4 g9e7"),
    ("飞相局 (elephant opening)", "c0e2"),
    ("飞相对左中炮", "c0e2 b7e7"),
    ("起马局 (horse opening)", "b0c2"),
    ("过宫炮 (palace-corner cannon)", "h2d2"),
    ("士角炮", "b2d2"),
];

fn parse_moves(start: &Position, text: &str) -> Result<Vec<Move>, String> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for (i, word) in text.split_whitespace().enumerate() {
        let m = pos
            .parse_iccs(word)
            .map_err(|e| format!("move {} ({word}): {e}", i + 1))?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok(moves)
}

/// The built-in suite.
pub fn builtin() -> Vec<Opening> {
    BUILTIN
        .iter()
        .map(|&(name, line)| {
            let start = Position::startpos();
            let moves = parse_moves(&start, line).expect("built-in openings are legal");
            Opening {
                name: name.to_owned(),
                start,
                moves,
            }
        })
        .collect()
}

/// Parses an opening file (see the module docs).
///
/// # Errors
/// The first bad line, with its number and what is wrong.
pub fn parse_file(source_name: &str, text: &str) -> Result<Vec<Opening>, OpeningError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| OpeningError {
            source_name: source_name.to_owned(),
            line: i + 1,
            message,
        };
        let (fen, moves) = match line.split_once('|') {
            Some((f, m)) => (Some(f.trim()), m.trim()),
            None if line.contains('/') => (Some(line), ""),
            None => (None, line),
        };
        let start = match fen {
            Some(f) => Position::from_fen(f).map_err(|e| err(e.to_string()))?,
            None => Position::startpos(),
        };
        let moves = parse_moves(&start, moves).map_err(err)?;
        out.push(Opening {
            name: format!("{source_name}:{}", i + 1),
            start,
            moves,
        });
    }
    if out.is_empty() {
        return Err(OpeningError {
            source_name: source_name.to_owned(),
            line: 0,
            message: "no openings in file".into(),
        });
    }
    Ok(out)
}

/// `count` random openings of `plies` plies, each judged balanced by the alpha-beta
/// engine at depth 2 (|score| ≤ 80). Deterministic for a seed.
pub fn random_balanced(count: usize, plies: usize, seed: u64) -> Vec<Opening> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut engine = AlphaBeta::new(1);
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 200 {
        tries += 1;
        let start = Position::startpos();
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for _ in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(m);
            moves.push(m);
        }
        if moves.len() < plies || !pos.has_legal_move() {
            continue;
        }
        let r = engine.search(&pos, &[], AbLimits::depth(2));
        if r.score.abs() <= 80 {
            out.push(Opening {
                name: format!("random-{seed}-{}", out.len()),
                start,
                moves,
            });
        }
    }
    out
}

/// The openings a `--openings`/`openings =` setting names: `builtin`, `start` (the
/// starting position only), `random:PLIES` (64 balanced random lines of 1-40 plies,
/// from `seed`) or the path of an openings file. One parser for matches, gating and
/// rating.
///
/// # Errors
/// A malformed `random:` count, an unreadable file or a bad line in it.
pub fn from_spec(spec: &str, seed: u64) -> Result<Vec<Opening>, OpeningError> {
    let err = |message: String| OpeningError {
        source_name: spec.to_owned(),
        line: 0,
        message,
    };
    Ok(match spec {
        "builtin" => builtin(),
        "start" => vec![Opening {
            name: "start".into(),
            start: Position::startpos(),
            moves: Vec::new(),
        }],
        t if t.starts_with("random:") => {
            let plies: usize = t["random:".len()..]
                .parse()
                .map_err(|_| err("expected random:PLIES".into()))?;
            if !(1..=40).contains(&plies) {
                return Err(err("plies must be 1-40".into()));
            }
            random_balanced(64, plies, seed)
        }
        path => {
            let body = std::fs::read_to_string(path)
                .map_err(|e| err(format!("cannot read openings file: {e}")))?;
            parse_file(path, &body)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lines_are_legal_and_distinct() {
        let suite = builtin();
        assert_eq!(suite.len(), BUILTIN.len());
        let mut fens: Vec<String> = suite.iter().map(|o| o.position().fen()).collect();
        fens.sort();
        fens.dedup();
        assert_eq!(fens.len(), suite.len());
    }

    #[test]
    fn file_accepts_fen_moves_and_both() {
        let text = "# comment\nh2e2 h9g7\n\n4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1\nrnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w | c3c4\n";
        let o = parse_file("ops.txt", text).unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o[0].moves.len(), 2);
        assert_eq!(o[1].moves.len(), 0);
        assert_eq!(o[2].moves.len(), 1);
    }

    #[test]
    fn file_errors_name_line_and_problem() {
        let e = parse_file("ops.txt", "h2e2\nh2e2 a0a5\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("ops.txt:2: move 2 (a0a5)"), "{e}");
        let e = parse_file("ops.txt", "9/9 w\n").unwrap_err();
        assert!(e.to_string().contains("ops.txt:1"), "{e}");
        assert!(parse_file("empty.txt", "# nothing\n").is_err());
    }

    #[test]
    fn random_openings_are_repeatable_and_balanced() {
        let a = random_balanced(4, 6, 11);
        let b = random_balanced(4, 6, 11);
        assert_eq!(a, b);
        assert_eq!(a.len(), 4);
        assert!(a.iter().all(|o| o.moves.len() == 6));
    }
}
