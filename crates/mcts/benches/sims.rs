//! Search speed: simulations per second on one core with the uniform evaluator, which
//! measures the search's own cost (selection, move generation, rules verdicts, backup,
//! leaf requests) with a network that costs next to nothing.
//!
//! `cargo bench -p xq-mcts` — plain timing, the median of 7 repetitions per case. The
//! rate is per core: simulations over this thread's CPU time (Linux
//! `/proc/thread-self/schedstat`, nanoseconds), so other processes on a shared machine
//! do not skew it; wall-clock rate is printed next to it.
//!
//! Two budgets: 800 visits is a self-play search (the tree, ~35k nodes, stays in
//! cache); 20,000 visits is an engine search whose ~900k-node tree (uniform priors
//! expand every child) does not, so it measures memory latency too.

use std::time::Instant;

use xq_core::{Game, Position};
use xq_mcts::{RootAlgorithm, Search, SearchParams};
use xq_nn::UniformEvaluator;

const REPEATS: usize = 7;

fn main() {
    let positions = [
        ("startpos", Position::startpos()),
        (
            "middlegame",
            Position::from_fen(
                "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1CN3NC1/9/R1BAKAB1R w - - 0 1",
            )
            .expect("valid FEN"),
        ),
    ];
    // (visits per search, searches per repetition)
    let budgets = [(800u32, 50usize), (20_000, 1)];
    for (visits, searches) in budgets {
        for algorithm in [RootAlgorithm::Puct, RootAlgorithm::Gumbel] {
            for batch in [1usize, 16] {
                for (name, pos) in &positions {
                    if algorithm == RootAlgorithm::Gumbel && (visits > 800 || *name != "startpos") {
                        continue;
                    }
                    let params = SearchParams {
                        algorithm,
                        batch_size: batch,
                        early_stop: false,
                        ..SearchParams::default()
                    };
                    let (rate, wall) = measure(params, pos, visits, searches);
                    println!(
                        "mcts {:<6} {visits:>5} visits  batch {batch:>2}  {name:<10}  {rate:>8.0} sims/s per core \
                         ({wall:>8.0} wall), median of {REPEATS}",
                        format!("{algorithm:?}").to_lowercase(),
                    );
                }
            }
        }
    }
}

/// Median simulations per second (per core, and wall clock) over `REPEATS` rounds of
/// `searches` searches of `visits` visits each.
fn measure(params: SearchParams, pos: &Position, visits: u32, searches: usize) -> (f64, f64) {
    // One search object, as a self-play game keeps one: the warm-up run grows the
    // arena, later runs reuse its memory (set_game drops the tree, not the capacity),
    // the steady state of self-play.
    let game = Game::new(pos.clone());
    let mut search = Search::new(params, &game, 1).expect("valid params");
    search
        .run(&mut UniformEvaluator, visits)
        .expect("search runs");
    let mut rates = Vec::with_capacity(REPEATS);
    let mut wall_rates = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let mut playouts = 0u64;
        let cpu = cpu_time();
        let t = Instant::now();
        for _ in 0..searches {
            search.set_game(&game);
            let r = search
                .run(&mut UniformEvaluator, visits)
                .expect("search runs");
            playouts += r.playouts as u64;
            std::hint::black_box(&r);
        }
        let wall = t.elapsed().as_secs_f64();
        let busy = match (cpu, cpu_time()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => wall,
        };
        rates.push(playouts as f64 / busy);
        wall_rates.push(playouts as f64 / wall);
    }
    rates.sort_by(f64::total_cmp);
    wall_rates.sort_by(f64::total_cmp);
    (rates[REPEATS / 2], wall_rates[REPEATS / 2])
}

/// CPU time of this thread in seconds (Linux); `None` elsewhere.
fn cpu_time() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}
