//! `xqz bench targets`: the target-quality benchmark ([`xq_pipeline::targets`]).
//!
//! ```text
//! xqz bench targets --net RUN_OR_CHECKPOINT [--json FILE]      # measure a network
//! xqz bench targets --make-oracle                              # (re)make the oracle file
//! ```
//!
//! The oracle file (`tests/data/targets/oracle.jsonl`) was made by
//! `xqz bench targets --make-oracle --count 500 --depth 10` (see
//! docs/lab/2026-12-05-target-quality.md): COUNT positions of the master games'
//! held-out split (`[train.pretrain]` of the first `--configs` file, split as
//! pre-training splits it) and COUNT of the self-play games in `--selfplay-pgn`, drawn
//! in a fixed order from `--sample-seed`, each judged by Fairy-Stockfish at `--depth`
//! with one thread and MultiPV over every legal move. It resumes: positions already in
//! the file are kept.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use xq_nn::{Evaluator, LoadOptions, UniformEvaluator};
use xq_pipeline::{
    config::RunConfig,
    targets::{self, oracle},
};

#[derive(clap::Args, Debug)]
pub struct TargetsArgs {
    /// The oracle file (JSON lines).
    #[arg(long, default_value = "tests/data/targets/oracle.jsonl")]
    oracle: PathBuf,
    /// The network to measure: a checkpoint sidecar (.json), a checkpoint or model
    /// directory, or a run directory (its newest checkpoint).
    #[arg(long, value_name = "PATH", required_unless_present_any = ["uniform", "make_oracle"])]
    net: Option<PathBuf>,
    /// Measure the uniform evaluator instead of a network.
    #[arg(long, conflicts_with = "net")]
    uniform: bool,
    /// Run configs whose `[selfplay]` searches are measured (each at its full-search
    /// visits, Gumbel and PUCT); the first one's `[train.pretrain]` names the master
    /// games for --make-oracle.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "configs/quickstart.toml,configs/cpu-2h.toml"
    )]
    configs: Vec<PathBuf>,
    /// The leaf quiescence weight of the "with quiescence" arms (the other arms use 0).
    #[arg(long, default_value_t = 0.75)]
    quiescence: f32,
    /// Seeds of the searches; the difference between the first two is the noise floor.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    seeds: Vec<u64>,
    /// Threads (each with its own copy of the network).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Only the first N positions of each set (a quick look).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Also write the report as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Make (or extend) the oracle file instead of measuring.
    #[arg(long)]
    make_oracle: bool,
    /// --make-oracle: the self-play games (PGN) the self-play positions come from.
    #[arg(long, default_value = "tests/data/targets/selfplay.pgn")]
    selfplay_pgn: PathBuf,
    /// --make-oracle: positions of each set.
    #[arg(long, default_value_t = 500)]
    count: usize,
    /// --make-oracle: Fairy-Stockfish's fixed depth.
    #[arg(long, default_value_t = 10)]
    depth: u32,
    /// --make-oracle: the order positions are drawn in.
    #[arg(long, default_value_t = 20261205)]
    sample_seed: u64,
    /// --make-oracle: the Fairy-Stockfish binary.
    #[arg(long, default_value = xq_eval::spec::FAIRY_STOCKFISH)]
    fsf: PathBuf,
}

pub fn bench_targets(a: &TargetsArgs) -> Result<()> {
    ensure!(!a.configs.is_empty(), "--configs names no config");
    let configs = a
        .configs
        .iter()
        .map(|p| RunConfig::load(p).with_context(|| format!("cannot load {}", p.display())))
        .collect::<Result<Vec<_>>>()?;
    if a.make_oracle {
        return make_oracle(a, &configs[0]);
    }
    let mut entries = oracle::load_oracle(&a.oracle)?;
    if let Some(n) = a.limit {
        oracle::first_of_each_set(&mut entries, n);
    }
    let selfplay: Vec<_> = configs.iter().map(|c| c.selfplay.clone()).collect();
    let arms = targets::shipped_arms(&selfplay, a.quiescence)?;
    let backend = xq_pipeline::backend::network_backend()?;
    let options = LoadOptions {
        workers: 1,
        threads: 1,
        ..LoadOptions::default()
    };
    let (name, factory): (String, Box<targets::EvaluatorFactory<'_>>) = match &a.net {
        Some(net) if !a.uniform => {
            let resolved = xq_nn::checkpoint::resolve(net)
                .with_context(|| format!("no network at {}", net.display()))?;
            let path = resolved.clone();
            (
                resolved.display().to_string(),
                Box::new(move || -> Result<Box<dyn Evaluator>> {
                    backend
                        .load(&path, &options)
                        .with_context(|| format!("cannot load {}", path.display()))
                }),
            )
        }
        _ => (
            "uniform".to_string(),
            Box::new(|| -> Result<Box<dyn Evaluator>> { Ok(Box::new(UniformEvaluator)) }),
        ),
    };
    eprintln!(
        "measuring {} positions, {} searches of each ({}) on {} threads",
        entries.len(),
        arms.len() * a.seeds.len(),
        arms.iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        a.threads
    );
    let report = targets::run(
        &entries,
        &arms,
        &a.seeds,
        a.threads,
        &*factory,
        &name,
        &|line: &str| eprintln!("{line}"),
    )?;
    print!("{}", targets::table(&report));
    if let Some(path) = &a.json {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        xq_run::write_atomic(
            path,
            (serde_json::to_string_pretty(&report)? + "\n").as_bytes(),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn make_oracle(a: &TargetsArgs, config: &RunConfig) -> Result<()> {
    let mut log = |l: &str| eprintln!("{l}");
    let pools = oracle::pools_of(config, &a.selfplay_pgn, a.sample_seed, &mut log)?;
    oracle::make_oracle(&pools, a.count, &a.fsf, a.depth, &a.oracle, &mut log)
}
