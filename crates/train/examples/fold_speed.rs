//! Network forward passes/s of libtorch on the CPU, one thread, in the same run: the
//! network as trained (`Net::forward` in inference mode: a batch norm after every
//! convolution, the weights cast to the compute kind by each call in bf16) against the
//! network folded for inference (`Net::fold`: batch norm folded into the convolutions,
//! weights cast once) in NCHW and in channels-last, in f32 and in bf16, for the 3×32,
//! 4×48 and 10×128 networks at batch 16-64 (issue #46, item 5). It is the measurement
//! behind the layout `TorchEvaluator` uses (`evaluator::LAYOUT`).
//!
//! `source scripts/env.sh && cargo run --release -p xq-train --example fold_speed
//! [SECONDS]` (SECONDS per cell, split over three alternating rounds whose best counts;
//! default 1). Inputs are random 0/1 planes already in a tensor; the batch norms'
//! scales, shifts and statistics are random. The table goes to docs/BENCHMARKS.md.

use std::time::Instant;

use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_train::NetConfig;
use xq_train::net::{Layout, Net, randomise_for_comparison};

const ROUNDS: usize = 3;

fn net(blocks: usize, channels: usize) -> (VarStore, Net, NetConfig) {
    let cfg = NetConfig {
        blocks,
        channels,
        ..NetConfig::default()
    };
    tch::manual_seed(1);
    let vs = VarStore::new(Device::Cpu);
    let net = Net::new(&vs.root(), &cfg).expect("network");
    randomise_for_comparison(&vs).expect("random statistics");
    (vs, net, cfg)
}

/// Forward passes of `batch` positions per second, the best of the rounds.
fn rate(seconds: f64, mut call: impl FnMut()) -> f64 {
    call();
    let mut best = 0f64;
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        let mut calls = 0u32;
        while calls == 0 || t0.elapsed().as_secs_f64() < seconds / ROUNDS as f64 {
            call();
            calls += 1;
        }
        best = best.max(f64::from(calls) / t0.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SECONDS is a number"))
        .unwrap_or(1.0);
    tch::set_num_threads(1);
    let _guard = tch::no_grad_guard();
    println!(
        "positions/s, one thread | net | batch | kind | as trained | folded NCHW | folded channels-last | NCHW / trained | channels-last / trained"
    );
    for (blocks, channels) in [(3, 32), (4, 48), (10, 128)] {
        let (_vs, net, cfg) = net(blocks, channels);
        for batch in [16i64, 32, 64] {
            let x = Tensor::rand(
                [batch, cfg.input_planes() as i64, 10, 9],
                (Kind::Float, Device::Cpu),
            )
            .ge(0.8)
            .to_kind(Kind::Float);
            for (kind, name) in [(Kind::Float, "f32"), (Kind::BFloat16, "bf16")] {
                let nchw = net.fold(kind, Layout::Nchw).expect("fold");
                let cl = net.fold(kind, Layout::ChannelsLast).expect("fold");
                let mut trained = 0.0;
                let mut folded = 0.0;
                let mut last = 0.0;
                // Alternate the three so that a slow moment of the machine hits all.
                for _ in 0..2 {
                    trained = f64::max(
                        trained,
                        rate(seconds / 2.0, || {
                            let _ = net.forward(&x, false, kind).expect("forward");
                        }),
                    );
                    folded = f64::max(
                        folded,
                        rate(seconds / 2.0, || {
                            let _ = nchw.forward(&x).expect("forward");
                        }),
                    );
                    last = f64::max(
                        last,
                        rate(seconds / 2.0, || {
                            let _ = cl.forward(&x).expect("forward");
                        }),
                    );
                }
                let b = batch as f64;
                println!(
                    "{blocks}x{channels} | {batch:>3} | {name:>4} | {:>7.0} | {:>7.0} | {:>7.0} | {:.2}x | {:.2}x",
                    trained * b,
                    folded * b,
                    last * b,
                    folded / trained,
                    last / trained
                );
            }
        }
    }
}
