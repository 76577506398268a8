//! Perft against published and cross-checked counts.
//!
//! `bench49.tsv` holds 49 positions with counts that Pikafish, Fairy-Stockfish,
//! ElephantEye and `chessai` agree on; `varied.perft` holds further positions with
//! counts from Fairy-Stockfish (see `tests/data/README.md`). A node limit keeps the
//! suite inside CI time; the test profile is optimised (opt-level 2) so the start position at depth 5 runs too.

use std::path::PathBuf;

use xq_core::{Position, perft::perft};

fn data(name: &str) -> String {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Larger counts are skipped to keep CI short.
const NODE_LIMIT: u64 = 12_000_000;

#[test]
fn bench49_positions_match_reference_counts() {
    let text = data("bench49.tsv");
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (idx, fen) = (cols[0], cols[1]);
        let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("#{idx} {fen}: {e}"));
        for (d, want) in cols[2..].iter().enumerate() {
            let want: u64 = want.parse().unwrap();
            if want <= NODE_LIMIT {
                assert_eq!(
                    perft(&pos, d as u32 + 1),
                    want,
                    "#{idx} {fen} depth {}",
                    d + 1
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 49 * 3, "only {checked} counts checked");
}

/// One `epd` block of a `.perft` file (see `tests/data/README.md`).
struct PerftCase {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

/// Parses the shakmaty-style `id` / `epd` / `perft <depth> <nodes>` format; `#` starts a
/// comment line and blank lines separate cases.
fn parse_perft_file(text: &str) -> Vec<PerftCase> {
    let mut cases: Vec<PerftCase> = Vec::new();
    let mut id = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "" | "#" => {}
            _ if word.starts_with('#') => {}
            "id" => id = rest.to_string(),
            "epd" => cases.push(PerftCase {
                id: std::mem::take(&mut id),
                fen: rest.to_string(),
                counts: Vec::new(),
            }),
            "perft" => {
                let (d, nodes) = rest
                    .split_once(' ')
                    .unwrap_or_else(|| panic!("line {}: bad perft line {line:?}", n + 1));
                let case = cases
                    .last_mut()
                    .unwrap_or_else(|| panic!("line {}: perft before any epd", n + 1));
                case.counts
                    .push((d.parse().unwrap(), nodes.parse().unwrap()));
            }
            _ => panic!("line {}: unknown keyword {word:?}", n + 1),
        }
    }
    cases
}

#[test]
fn varied_positions_match_fairy_stockfish_counts() {
    let cases = parse_perft_file(&data("varied.perft"));
    assert!(cases.len() >= 100, "only {} positions", cases.len());
    let (mut no_moves, mut in_check, mut black) = (0, 0, 0);
    for case in &cases {
        let pos = Position::from_fen(&case.fen)
            .unwrap_or_else(|e| panic!("{} {}: {e}", case.id, case.fen));
        assert_eq!(pos.fen(), case.fen, "{}: FEN does not round-trip", case.id);
        assert!(!case.counts.is_empty(), "{}: no counts", case.id);
        for &(depth, want) in &case.counts {
            if want <= NODE_LIMIT {
                assert_eq!(
                    perft(&pos, depth),
                    want,
                    "{} {} depth {depth}",
                    case.id,
                    case.fen
                );
            }
        }
        no_moves += usize::from(!pos.has_legal_move());
        in_check += usize::from(pos.is_check());
        black += usize::from(pos.turn() == xq_core::Color::Black);
    }
    // The file must keep covering the cases it was made for.
    assert!(
        no_moves >= 10,
        "only {no_moves} positions without a legal move"
    );
    assert!(in_check >= 15, "only {in_check} positions in check");
    assert!(black >= 30, "only {black} positions with black to move");
}

#[test]
fn start_position_depth_4() {
    assert_eq!(perft(&Position::startpos(), 4), 3_290_240);
}

#[test]
fn start_position_depth_5() {
    assert_eq!(perft(&Position::startpos(), 5), 133_312_995);
}
