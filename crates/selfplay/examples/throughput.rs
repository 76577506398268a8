//! Self-play throughput with the uniform (or seeded random) evaluator:
//! `cargo run --release -p xq-selfplay --example throughput -- [GAMES] [THREADS] [PARALLEL] [uniform|random]`.
//!
//! It measures the worker's own cost (search, batching, cache, writing nothing): with
//! a real network the evaluator's share of wall time rises accordingly.

use xq_nn::{Evaluator, RandomEvaluator, UniformEvaluator};
use xq_selfplay::SelfplayConfig;
use xq_selfplay::bench::{report, selfplay_throughput};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let games = arg(0, 64);
    let mut config = SelfplayConfig {
        search_threads: arg(1, 2) as usize,
        parallel_games: arg(2, 64) as usize,
        max_plies: 200,
        ..SelfplayConfig::default()
    };
    config.search.playout_cap.full_visits = 200;
    config.search.playout_cap.cheap_visits = 50;
    let evaluator: Box<dyn Evaluator> = match args.get(3).map(String::as_str) {
        Some("random") => Box::new(RandomEvaluator::new(1)),
        _ => Box::new(UniformEvaluator),
    };
    let name = evaluator.name();
    match selfplay_throughput(&config, evaluator, games, 1) {
        Ok(s) => println!(
            "{name}, {} search threads, {} games at once, visits 200/50: {}",
            config.search_threads,
            config.parallel_games,
            report(&s)
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
