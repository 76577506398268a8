//! Perft speed, single-threaded: the starting position at depth 5 and the 49 positions
//! of `tests/data/bench49.tsv` at depth 4 (about 97 M leaves together).
//!
//! A plain `harness = false` benchmark (no framework dependency): each measurement is
//! repeated `XQZ_BENCH_REPEATS` times (default 5) and the median, minimum and maximum
//! nodes/second are printed. Every run also checks the node counts against the
//! reference table, so a fast wrong generator cannot report a figure. The comparison
//! with Fairy-Stockfish lives in `xqz bench perft`; see `docs/BENCHMARKS.md`.

use std::{hint::black_box, path::Path, time::Instant};

use xq_core::{Position, perft::perft};

const START_DEPTH: u32 = 5;
const START_NODES: u64 = 133_312_995;
const SET_DEPTH: usize = 4;

fn repeats() -> usize {
    std::env::var("XQZ_BENCH_REPEATS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5)
}

/// The 49 positions with their depth-[`SET_DEPTH`] counts.
fn bench49() -> Vec<(Position, u64)> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/bench49.tsv"
    ));
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let pos = Position::from_fen(cols[1]).unwrap_or_else(|e| panic!("{line}: {e}"));
            (pos, cols[1 + SET_DEPTH].parse().expect("a node count"))
        })
        .collect()
}

/// Runs `f` (which returns its node count) `n` times; prints and returns the median
/// nodes/second.
fn measure(name: &str, n: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut rates = Vec::with_capacity(n);
    let mut nodes = 0;
    for _ in 0..n {
        let start = Instant::now();
        nodes = black_box(f());
        rates.push(nodes as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    println!(
        "{name:<28} {nodes:>12} nodes  median {:>6.1} Mnps  (min {:.1}, max {:.1}, {n} runs)",
        median / 1e6,
        rates[0] / 1e6,
        rates[rates.len() - 1] / 1e6,
    );
    median
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench` absent; keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = if quick { 1 } else { repeats() };
    let start = Position::startpos();
    if quick {
        assert_eq!(perft(&start, 3), 79_666);
        println!("perft bench: smoke run only (use cargo bench)");
        return;
    }
    measure(&format!("startpos depth {START_DEPTH}"), n, || {
        let nodes = perft(black_box(&start), START_DEPTH);
        assert_eq!(nodes, START_NODES);
        nodes
    });
    let set = bench49();
    let total: u64 = set.iter().map(|(_, n)| n).sum();
    measure(&format!("bench49 depth {SET_DEPTH}"), n, || {
        let nodes: u64 = set
            .iter()
            .map(|(pos, want)| {
                let got = perft(black_box(pos), SET_DEPTH as u32);
                assert_eq!(got, *want, "{pos:?}");
                got
            })
            .sum();
        assert_eq!(nodes, total);
        nodes
    });
}
