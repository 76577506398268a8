//! Positions/s of the native CPU backend (xq-native) against libtorch f32, one thread
//! each, in the same run, at batch 1-64 for the 3×32, 4×48 and 10×128 networks, and the
//! share of the core's FMA peak (measured here by a microbenchmark) that each reaches.
//!
//! `source scripts/env.sh && cargo run --release -p xq-train --example native_speed
//! [SECONDS] [THREADS]` (SECONDS per measurement, split over three alternating rounds
//! whose best counts; default 1. THREADS, default 1: the native backend splits each
//! batch over that many threads, as self-play's evaluator copies do, while libtorch
//! keeps one, so the ratio then compares THREADS cores with one). Both take packed
//! inputs, encoded before the clock starts; libtorch's time includes expanding them
//! into its f32 input, the native backend's first layer reads them as they are. The
//! table goes to docs/BENCHMARKS.md.

use std::time::Instant;

use xq_core::Position;
use xq_native::NativeEvaluator;
use xq_nn::EvalInput;
use xq_nn::encode::{PLANE_SIZE, PackedPlane};
use xq_nn::encode_packed_batch;
use xq_train::bench::scratch_evaluator;
use xq_train::{DeviceChoice, EvaluatorOptions, NetConfig, TorchEvaluator};

/// Alternating measurement rounds per side; the best of each is reported.
const ROUNDS: usize = 3;

/// Positions of seeded random games with their histories.
fn histories(count: usize) -> Vec<Vec<Position>> {
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    (0..count)
        .map(|_| {
            let mut game = vec![Position::startpos()];
            for _ in 0..next() % 80 {
                let pos = game.last().expect("a game has a position");
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mut p = pos.clone();
                p.play(moves[next() % moves.len()]).expect("legal");
                game.push(p);
            }
            game
        })
        .collect()
}

/// Multiply-adds of one position if every layer were dense.
fn macs(cfg: &NetConfig) -> f64 {
    let (c, p) = (cfg.channels as f64, PLANE_SIZE as f64);
    let conv3 = |cin: f64, cout: f64| cin * cout * 9.0 * p;
    conv3(cfg.input_planes() as f64, c)
        + 2.0 * cfg.blocks as f64 * conv3(c, c)
        + conv3(c, c)
        + 50.0 * c * p
        + cfg.value_channels as f64 * c * p
        + cfg.value_channels as f64 * p * cfg.value_hidden as f64
}

/// Positions/s of `f` evaluating `n` positions a call, over about `seconds`.
fn rate(n: usize, seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    let mut calls = 0usize;
    while start.elapsed().as_secs_f64() < seconds {
        f();
        calls += 1;
    }
    (calls * n) as f64 / start.elapsed().as_secs_f64()
}

/// Single-core f32 FMA peak in GFLOP/s and the instruction set it was measured with:
/// twelve independent chains of FMAs, 16-wide with AVX-512 where the CPU has it (the
/// `gemm` kernels the native backend uses pick it at run time), 8-wide with AVX2.
#[cfg(target_arch = "x86_64")]
fn fma_peak() -> Option<(f64, &'static str)> {
    use std::arch::x86_64::*;
    #[target_feature(enable = "avx2,fma")]
    fn run_avx2(iters: usize) -> f32 {
        let mut acc = [_mm256_set1_ps(0.0); 12];
        let a = _mm256_set1_ps(0.999_999);
        let b = _mm256_set1_ps(1e-7);
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let mut out = [0.0f32; 8];
        let mut sum = _mm256_set1_ps(0.0);
        for x in acc {
            sum = _mm256_add_ps(sum, x);
        }
        // SAFETY: `out` holds 8 floats.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), sum) };
        out.iter().sum()
    }
    #[target_feature(enable = "avx512f")]
    fn run_avx512(iters: usize) -> f32 {
        let mut acc = [_mm512_set1_ps(0.0); 12];
        let a = _mm512_set1_ps(0.999_999);
        let b = _mm512_set1_ps(1e-7);
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        let mut sum = _mm512_set1_ps(0.0);
        for x in acc {
            sum = _mm512_add_ps(sum, x);
        }
        _mm512_reduce_add_ps(sum)
    }
    type Kernel = unsafe fn(usize) -> f32;
    let (width, set, run): (usize, &str, Kernel) = if is_x86_feature_detected!("avx512f") {
        (16, "AVX-512", run_avx512)
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        (8, "AVX2", run_avx2)
    } else {
        return None;
    };
    let iters = 50_000_000;
    let mut best = 0.0f64;
    for _ in 0..3 {
        let start = Instant::now();
        // SAFETY: the CPU has the instruction set of `run` (checked above).
        let r = unsafe { run(iters) };
        let secs = start.elapsed().as_secs_f64();
        std::hint::black_box(r);
        best = best.max((iters * 12 * 2 * width) as f64 / secs / 1e9);
    }
    Some((best, set))
}

#[cfg(not(target_arch = "x86_64"))]
fn fma_peak() -> Option<(f64, &'static str)> {
    None
}

/// The `i`th command-line argument, parsed, if given.
fn arg<T: std::str::FromStr>(i: usize) -> Result<Option<T>, T::Err> {
    std::env::args().nth(i).map(|s| s.parse()).transpose()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: f64 = arg(1)?.unwrap_or(1.0);
    let threads: usize = arg(2)?.unwrap_or(1);
    let peak = fma_peak();
    match peak {
        Some((p, set)) => println!("FMA peak, one core: {p:.1} GFLOP/s ({set}, 12 chains)"),
        None => println!("FMA peak: no AVX2/FMA on this CPU"),
    }
    println!("native backend on {threads} thread(s), libtorch on 1");
    let games = histories(64);
    let moves: Vec<Vec<_>> = games
        .iter()
        .map(|g| g.last().expect("a position").legal_moves().to_vec())
        .collect();
    let nets = [
        (
            "3x32",
            NetConfig {
                blocks: 3,
                channels: 32,
                ..NetConfig::small()
            },
        ),
        ("4x48", NetConfig::small()),
        ("10x128", NetConfig::medium()),
    ];
    println!(
        "| net | batch | libtorch pos/s | native pos/s | native/libtorch | libtorch % peak | native % peak |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (label, cfg) in nets {
        let dir =
            std::env::temp_dir().join(format!("xq-native-speed-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let options = EvaluatorOptions {
            device: DeviceChoice::Cpu,
            threads: 1,
            ..EvaluatorOptions::default()
        };
        let mut torch: TorchEvaluator = scratch_evaluator(&dir, &cfg, options)?;
        let mut native = NativeEvaluator::load(&dir, threads)?;
        let flops = 2.0 * macs(&cfg);
        for n in [1usize, 8, 16, 32, 64] {
            let batch: Vec<EvalInput<'_>> = games[..n]
                .iter()
                .zip(&moves)
                .map(|(g, m)| EvalInput {
                    history: g,
                    moves: m,
                })
                .collect();
            let encoder = cfg.encoder();
            let mut inputs = vec![PackedPlane::ZERO; n * encoder.planes()];
            encode_packed_batch(&batch, &encoder, &mut inputs)?;
            // Alternating rounds, each side's best: a shared machine's noise hits both.
            let (mut t, mut nat) = (0.0f64, 0.0f64);
            for _ in 0..ROUNDS {
                t = t.max(rate(n, seconds / ROUNDS as f64, || {
                    torch.forward_raw(&inputs, n).expect("torch forward");
                }));
                nat = nat.max(rate(n, seconds / ROUNDS as f64, || {
                    native.forward_raw(&inputs, n).expect("native forward");
                }));
            }
            let share = |r: f64| {
                peak.map_or("-".to_owned(), |(p, _)| {
                    format!("{:.0}%", 100.0 * r * flops / 1e9 / p)
                })
            };
            println!(
                "| {label} | {n} | {t:.0} | {nat:.0} | {:.2}× | {} | {} |",
                nat / t,
                share(t),
                share(nat)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
