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
        if let Some(moves) = random_balanced_plies(&mut engine, &start, plies, &mut rng) {
            out.push(Opening {
                name: format!("random-{seed}-{}", out.len()),
                start,
                moves,
            });
        }
    }
    out
}

/// `plies` random moves from `pos` after which the side to move can move and the
/// alpha-beta engine at depth 2 scores the position within ±80; `None` if this draw
/// is not.
fn random_balanced_plies(
    engine: &mut AlphaBeta,
    pos: &Position,
    plies: usize,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<Move>> {
    let mut pos = pos.clone();
    let mut moves = Vec::with_capacity(plies);
    for _ in 0..plies {
        let legal = pos.legal_moves();
        let m = *legal.get(rng.random_range(0..legal.len().max(1)))?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    let balanced = pos.has_legal_move() && {
        let r = engine.search(&pos, &[], AbLimits::depth(2));
        r.score.abs() <= 80
    };
    balanced.then_some(moves)
}

/// Random plies a reused opening is deepened by (see [`nth`]).
const DEEPEN_PLIES: usize = 2;

/// The opening of pair `i` of a match on `suite`: `suite[i]` while the suite lasts,
/// then the suite again with each line deepened by two random plies that the alpha-beta
/// engine at depth 2 still scores within ±80 (drawn from `seed` and `i`; the plain line
/// if 64 draws find none).
///
/// Deterministic players (the networks at a fixed visit count, alpha-beta at a fixed
/// depth) replay the same pair of games from the same opening: a match of 50 games on
/// the 15 built-in lines would count 10 pairs twice and report an interval that is too
/// narrow. Deepened lines give the pairs their own starts (nearly always: two draws
/// can meet, and a line with no balanced deepening is replayed plain).
///
/// # Panics
/// If `suite` is empty; matches and tournaments refuse an empty suite before play.
pub fn nth(suite: &[Opening], i: usize, seed: u64) -> Opening {
    let base = &suite[i % suite.len()];
    if i < suite.len() {
        return base.clone();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(i as u64);
    let mut engine = AlphaBeta::new(1);
    let from = base.position();
    (0..64)
        .find_map(|_| random_balanced_plies(&mut engine, &from, DEEPEN_PLIES, &mut rng))
        .map_or_else(
            || base.clone(),
            |extra| {
                let names: Vec<String> = extra.iter().map(Move::to_string).collect();
                Opening {
                    name: format!("{}+{}", base.name, names.join("+")),
                    start: base.start.clone(),
                    moves: base.moves.iter().copied().chain(extra).collect(),
                }
            },
        )
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
    fn pairs_past_the_suite_get_distinct_balanced_deepened_lines() {
        let suite = builtin();
        let n = suite.len();
        let openings: Vec<Opening> = (0..4 * n).map(|i| nth(&suite, i, 7)).collect();
        assert_eq!(openings[..n], suite[..], "the suite first, unchanged");
        let starts: std::collections::HashSet<_> =
            openings.iter().map(|o| o.position().hash()).collect();
        assert_eq!(starts.len(), openings.len(), "every pair starts elsewhere");
        let mut engine = AlphaBeta::new(1);
        for (i, o) in openings.iter().enumerate().skip(n) {
            let base = &suite[i % n];
            assert_eq!(o.moves[..base.moves.len()], base.moves[..], "{}", o.name);
            assert_eq!(o.moves.len(), base.moves.len() + DEEPEN_PLIES, "{}", o.name);
            let r = engine.search(&o.position(), &[], AbLimits::depth(2));
            assert!(r.score.abs() <= 80, "{} scores {}", o.name, r.score);
        }
        assert_eq!(
            nth(&suite, 3 * n + 1, 7),
            openings[3 * n + 1],
            "deterministic"
        );
        assert_ne!(nth(&suite, 3 * n + 1, 8).moves, openings[3 * n + 1].moves);
    }

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
