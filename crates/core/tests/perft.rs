//! Perft against published and cross-checked counts.
//!
//! `bench49.tsv` holds 49 positions with counts that Pikafish, Fairy-Stockfish,
//! ElephantEye and `chessai` agree on; `varied.perft` holds further positions with
//! counts from Fairy-Stockfish (see `tests/data/README.md`). A node limit keeps the
//! suite inside CI time; the test profile is optimised (opt-level 2) so the start position at depth 5 runs too.

use std::path::PathBuf;

use xq_core::{Position, perft::perft};

fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name);
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
                assert_eq!(perft(&pos, d as u32 + 1), want, "#{idx} {fen} depth {}", d + 1);
                checked += 1;
            }
        }
    }
    assert!(checked >= 49 * 3, "only {checked} counts checked");
}

#[test]
fn start_position_depth_4() {
    assert_eq!(perft(&Position::startpos(), 4), 3_290_240);
}

#[test]
fn start_position_depth_5() {
    assert_eq!(perft(&Position::startpos(), 5), 133_312_995);
}
