//! GPU smoke check for a machine with CUDA (the project's device runs):
//! `cargo run --release -p xq-train --example device_check`.
//!
//! 1. libtorch sees CUDA (else exit 2: the rpath/--no-as-needed linking lost libtorch_cuda).
//! 2. bf16 training of a 10×128 network on the GPU lowers the loss on a fixed batch.
//! 3. The checkpoint loads into a half-precision GPU evaluator and an f32 CPU evaluator,
//!    which agree on policy and WDL within half-precision tolerance.
//! 4. Prints trainer samples/s (bf16 and f32) and evaluator positions/s by batch size.
//!
//! Exit status 0 when every check passes, 1 when one fails.

use std::time::Instant;

use xq_core::Position;
use xq_nn::{EvalInput, Evaluator};
use xq_train::bench::evaluator_throughput;
use xq_train::{
    DeviceChoice, EvaluatorOptions, NetConfig, OwnedBatch, Precision, TorchEvaluator, TrainConfig,
    Trainer,
};

fn fail(msg: &str) -> ! {
    eprintln!("FAIL: {msg}");
    std::process::exit(1);
}

fn main() {
    if !xq_train::cuda_available() {
        eprintln!("FAIL: libtorch sees no CUDA device");
        std::process::exit(2);
    }
    println!("cuda: {} device(s)", tch::Cuda::device_count());
    let dir = std::env::temp_dir().join(format!("xq-train-device-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let net = NetConfig::medium();
    for precision in [Precision::Bf16, Precision::F32] {
        let run = dir.join(format!("{precision:?}"));
        let cfg = TrainConfig {
            net: net.clone(),
            device: DeviceChoice::Cuda(0),
            precision,
            lr: 0.02,
            warmup_steps: 5,
            log_every: 0,
            ..TrainConfig::default()
        };
        let mut t = Trainer::new(&run, cfg.clone()).unwrap_or_else(|e| fail(&e.to_string()));
        let batch = OwnedBatch::synthetic(512, cfg.net.input_planes(), 1);
        let first = t
            .step(&batch.view())
            .unwrap_or_else(|e| fail(&e.to_string()));
        for _ in 0..4 {
            t.step(&batch.view())
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        let t0 = Instant::now();
        let mut last = first;
        let steps = 30;
        for _ in 0..steps {
            last = t
                .step(&batch.view())
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        let rate = (steps * 512) as f64 / t0.elapsed().as_secs_f64();
        println!(
            "train {precision:?} 10x128 batch 512: {rate:.0} samples/s, loss {:.3} -> {:.3}",
            first.total_loss, last.total_loss
        );
        if last.total_loss >= first.total_loss {
            fail("loss did not fall on a fixed batch");
        }
        t.save_checkpoint().unwrap_or_else(|e| fail(&e.to_string()));
    }

    let run = dir.join("Bf16");
    let load = |device, half| {
        TorchEvaluator::load(
            &run,
            EvaluatorOptions {
                device,
                half: Some(half),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| fail(&e.to_string()))
    };
    let mut gpu = load(DeviceChoice::Cuda(0), true);
    let mut cpu = load(DeviceChoice::Cpu, false);
    let pos = Position::startpos();
    let moves = pos.legal_moves().to_vec();
    let history = [pos];
    let input = [EvalInput {
        history: &history,
        moves: &moves,
    }];
    let a = gpu
        .evaluate(&input)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let b = cpu
        .evaluate(&input)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let max_diff = a[0]
        .policy
        .iter()
        .zip(&b[0].policy)
        .chain(a[0].wdl.iter().zip(&b[0].wdl))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    println!("gpu f16 vs cpu f32 evaluator: max |diff| = {max_diff:.5}");
    if max_diff > 0.02 {
        fail("half-precision GPU evaluator disagrees with the f32 CPU evaluator");
    }
    match evaluator_throughput(
        &net,
        EvaluatorOptions {
            device: DeviceChoice::Cuda(0),
            ..Default::default()
        },
        &[1, 16, 64, 256, 1024],
        1.0,
    ) {
        Ok(rows) => {
            for r in rows {
                println!(
                    "evaluator cuda 10x128 batch {:>4}: {:>9.0} positions/s",
                    r.batch_size, r.positions_per_sec
                );
            }
        }
        Err(e) => fail(&e.to_string()),
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("device check: ok");
}
