//! `cargo bench -p xq-train`: trainer samples/s against the PyTorch reference (same
//! network, batch, optimiser, float32, threads) and evaluator positions/s at batch sizes
//! 1, 16, 64, 256. Settings from the environment:
//! `XQZ_BENCH_NET` (small | medium | large, default small), `XQZ_BENCH_BATCH` (256),
//! `XQZ_BENCH_STEPS` (20), `XQZ_BENCH_THREADS` (0 = libtorch default),
//! `XQZ_BENCH_DEVICE` (cpu | cuda | auto, default cpu), `XQZ_PYTHON` (the PyTorch
//! reference's interpreter; default the workspace's `.venv/bin/python`).

use std::path::PathBuf;

use xq_train::bench::{self, TrainBenchOptions};
use xq_train::{DeviceChoice, NetConfig};

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    match std::env::var(key) {
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("{key}={v:?} is not valid; using the default");
            default
        }),
        Err(_) => default,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing useful: only
    // run the (slow) measurement when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let net_name: String = env_or("XQZ_BENCH_NET", "small".to_string());
    let Some(net) = NetConfig::preset(&net_name) else {
        eprintln!("XQZ_BENCH_NET={net_name:?}: expected small, medium or large");
        std::process::exit(2);
    };
    let device: DeviceChoice = env_or("XQZ_BENCH_DEVICE", DeviceChoice::Cpu);
    let opts = TrainBenchOptions {
        net: net.clone(),
        batch_size: env_or("XQZ_BENCH_BATCH", 256),
        steps: env_or("XQZ_BENCH_STEPS", 20),
        threads: env_or("XQZ_BENCH_THREADS", 0),
        device,
        ..TrainBenchOptions::default()
    };
    let python = std::env::var_os("XQZ_PYTHON").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../.venv/bin/python"
            ))
        },
        PathBuf::from,
    );
    println!(
        "train: net {}x{} batch {} steps {} device {device}",
        net.blocks, net.channels, opts.batch_size, opts.steps
    );
    match bench::compare_train(&python, &opts) {
        Ok(c) => println!(
            "train: rust {:.0} samples/s, pytorch {:.0} samples/s, ratio {:.2}x",
            c.rust.samples_per_sec, c.python.samples_per_sec, c.ratio
        ),
        Err(e) => {
            eprintln!("train benchmark failed: {e}");
            std::process::exit(1);
        }
    }
    match bench::evaluator_throughput(
        &net,
        xq_train::EvaluatorOptions {
            device,
            ..Default::default()
        },
        &[1, 16, 64, 256],
        2.0,
    ) {
        Ok(rows) => {
            for r in rows {
                println!(
                    "evaluator: batch {:>3}: {:>8.0} positions/s",
                    r.batch_size, r.positions_per_sec
                );
            }
        }
        Err(e) => {
            eprintln!("evaluator benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}
