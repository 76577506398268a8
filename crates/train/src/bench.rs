//! Throughput benchmarks (not tests): trainer samples/s against an equivalent PyTorch loop
//! run by the Python interpreter the caller names (one whose torch is the libtorch
//! xq-train links, so both sides run the same kernels), and torch-evaluator
//! positions/s at several batch sizes.
//!
//! The PyTorch reference (`benches/train_reference.py`, embedded here) builds the same
//! network, loss, optimiser, clipping, EMA update and per-step statistics, in float32, on
//! synthetic batches of the same shape, with the same intra-op thread count, on the same
//! device (each step's batch copied from host memory to it on both sides). Both sides
//! time `steps` steps after `warmup_steps` untimed ones, in the same process run.
//!
//! Entry points: `cargo bench -p xq-train` (benches/train.rs), and these functions for
//! `xqz bench`. Where the project's Python is (`$XQZ_PYTHON`, the `.venv`) is theirs to
//! decide, not this library's.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_core::Position;
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, PackedPlane};
use xq_nn::encode_packed_batch;
use xq_nn::policy::POLICY_SIZE;
use xq_nn::{EvalInput, Evaluator};

use crate::batch::OwnedBatch;
use crate::checkpoint::{self, Sidecar, read_tensors};
use crate::config::{
    DeviceChoice, NetConfig, OptimizerConfig, Precision, TrainConfig, device_name,
};
use crate::error::TrainError;
use crate::evaluator::{EvaluatorOptions, StageClock, TorchEvaluator, compute_kind};
use crate::net::{Net, policy_gather_table};
use crate::trainer::Trainer;

/// The PyTorch reference loop.
pub const TRAIN_REFERENCE_PY: &str = include_str!("../benches/train_reference.py");

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainBenchOptions {
    pub net: NetConfig,
    pub batch_size: usize,
    /// Timed steps.
    pub steps: usize,
    /// Untimed steps first (allocator and kernel warm-up).
    pub warmup_steps: usize,
    /// Intra-op threads for both sides (0 = all cores as libtorch counts them).
    pub threads: usize,
    pub optimizer: OptimizerConfig,
    pub device: DeviceChoice,
    /// Distinct synthetic batches cycled through.
    pub distinct_batches: usize,
    pub seed: u64,
    /// Alternating Rust/Python rounds; each side reports its best round, which damps
    /// the noise of a shared machine.
    pub rounds: usize,
}

impl Default for TrainBenchOptions {
    fn default() -> Self {
        TrainBenchOptions {
            net: NetConfig::small(),
            batch_size: 256,
            steps: 20,
            warmup_steps: 3,
            threads: 0,
            optimizer: OptimizerConfig::default(),
            device: DeviceChoice::Cpu,
            distinct_batches: 4,
            seed: 1,
            rounds: 2,
        }
    }
}

impl TrainBenchOptions {
    fn train_config(&self) -> TrainConfig {
        TrainConfig {
            net: self.net.clone(),
            optimizer: self.optimizer.clone(),
            device: self.device,
            precision: Precision::F32,
            threads: self.threads,
            seed: self.seed,
            log_every: 0,
            checkpoint_every: 0,
            warmup_steps: 0,
            ..TrainConfig::default()
        }
    }

    fn threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            tch::get_num_threads().max(1) as usize
        }
    }
}

/// One side's measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub samples_per_sec: f64,
    pub steps: usize,
    pub seconds: f64,
    pub final_loss: f64,
    /// Where it ran: `cpu` or `cuda:N` (the PyTorch reference reports its own).
    pub device: String,
}

/// Rust trainer vs PyTorch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainComparison {
    pub options: TrainBenchOptions,
    pub rust: Throughput,
    pub python: Throughput,
    /// `rust / python` samples per second (≥ 1: the Rust trainer is at least as fast).
    pub ratio: f64,
}

/// Times the Rust trainer (in a scratch run directory that is removed afterwards).
pub fn rust_train_throughput(opts: &TrainBenchOptions) -> Result<Throughput, TrainError> {
    let dir = std::env::temp_dir().join(format!("xq-train-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = opts.train_config();
    let planes = cfg.net.input_planes();
    let batches: Vec<OwnedBatch> = (0..opts.distinct_batches.max(1))
        .map(|i| OwnedBatch::synthetic(opts.batch_size, planes, opts.seed + i as u64))
        .collect();
    let result = (|| {
        let mut t = Trainer::new(&dir, cfg)?;
        for s in 0..opts.warmup_steps {
            t.step(&batches[s % batches.len()].view())?;
        }
        let t0 = Instant::now();
        let mut last = 0.0;
        for s in 0..opts.steps {
            last = t
                .step(&batches[(opts.warmup_steps + s) % batches.len()].view())?
                .total_loss;
        }
        let seconds = t0.elapsed().as_secs_f64();
        Ok(Throughput {
            samples_per_sec: (opts.steps * opts.batch_size) as f64 / seconds,
            steps: opts.steps,
            seconds,
            final_loss: last,
            device: device_name(t.device()),
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Times the PyTorch reference with the interpreter `python`.
pub fn python_train_throughput(
    python: &Path,
    opts: &TrainBenchOptions,
) -> Result<Throughput, TrainError> {
    let dir = std::env::temp_dir().join(format!("xq-train-bench-py-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| TrainError::io(&dir, e))?;
    let script = dir.join("train_reference.py");
    std::fs::write(&script, TRAIN_REFERENCE_PY).map_err(|e| TrainError::io(&script, e))?;
    let (shapes, gather) = policy_gather_table();
    let mut optimizer =
        serde_json::to_value(&opts.optimizer).map_err(|source| TrainError::Json {
            path: script.clone(),
            source,
        })?;
    if let Some(o) = optimizer.as_object_mut() {
        o.entry("nesterov")
            .or_insert(serde_json::Value::Bool(false));
    }
    let defaults = TrainConfig::default();
    let device = device_name(crate::config::tch_device(opts.device));
    let spec = serde_json::json!({
        "device": device,
        "planes": opts.net.input_planes(),
        "blocks": opts.net.blocks,
        "channels": opts.net.channels,
        "global_pool": opts.net.global_pool,
        "value_channels": opts.net.value_channels,
        "value_hidden": opts.net.value_hidden,
        "policy_shapes": shapes.len(),
        "policy_size": POLICY_SIZE,
        "gather": gather,
        "batch_size": opts.batch_size,
        "steps": opts.steps,
        "warmup_steps": opts.warmup_steps,
        "distinct_batches": opts.distinct_batches.max(1),
        "threads": opts.threads(),
        "seed": opts.seed,
        "optimizer": optimizer,
        "lr": defaults.lr,
        "grad_clip": defaults.grad_clip,
        "ema_decay": defaults.ema_decay,
        "value_loss_weight": defaults.value_loss_weight,
    });
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).map_err(|e| TrainError::io(&spec_path, e))?;
    let out = Command::new(python)
        .arg(&script)
        .arg(&spec_path)
        .output()
        .map_err(|e| TrainError::io(python, e))?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        return Err(TrainError::Bench(format!(
            "PyTorch reference ({}) failed: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let measured: Throughput = serde_json::from_str(line).map_err(|source| TrainError::Json {
        path: python.to_path_buf(),
        source,
    })?;
    // A reference on another device than the Rust side's compares nothing (a CPU
    // reference against a GPU trainer once read as a 57x speed-up).
    if measured.device != device {
        return Err(TrainError::Bench(format!(
            "the PyTorch reference ({}) ran on {}, the Rust trainer on {device}",
            python.display(),
            measured.device
        )));
    }
    Ok(measured)
}

/// Runs both sides `opts.rounds` times, alternating (Rust, Python, Rust, …), and
/// compares the best round of each.
pub fn compare_train(
    python: &Path,
    opts: &TrainBenchOptions,
) -> Result<TrainComparison, TrainError> {
    let faster = |a: Throughput, b: Throughput| {
        if a.samples_per_sec >= b.samples_per_sec {
            a
        } else {
            b
        }
    };
    let mut rust = rust_train_throughput(opts)?;
    let mut py = python_train_throughput(python, opts)?;
    for _ in 1..opts.rounds {
        rust = faster(rust, rust_train_throughput(opts)?);
        py = faster(py, python_train_throughput(python, opts)?);
    }
    Ok(TrainComparison {
        options: opts.clone(),
        ratio: rust.samples_per_sec / py.samples_per_sec,
        rust,
        python: py,
    })
}

/// Evaluator speed at one batch size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalThroughput {
    pub batch_size: usize,
    pub positions_per_sec: f64,
    pub batches: usize,
}

/// A randomly initialised `net`, saved as a checkpoint in `dir` and loaded back as an
/// evaluator with `options` (device, threads, copies): the network of the speed
/// benchmarks.
///
/// # Errors
/// If the checkpoint cannot be written or read.
pub fn scratch_evaluator(
    dir: &Path,
    net: &NetConfig,
    options: EvaluatorOptions,
) -> Result<TorchEvaluator, TrainError> {
    let cfg = TrainConfig {
        net: net.clone(),
        device: options.device,
        log_every: 0,
        ..TrainConfig::default()
    };
    let mut t = Trainer::new(dir, cfg)?;
    t.save_checkpoint()?;
    drop(t);
    TorchEvaluator::load(dir, options)
}

/// Positions/s of a [`TorchEvaluator`] (randomly initialised `net`, saved as a checkpoint
/// to a scratch directory, loaded with `options`) at each batch size, on positions from
/// seeded random games. Each size runs for about `seconds_per_size` after one untimed
/// batch.
pub fn evaluator_throughput(
    net: &NetConfig,
    options: EvaluatorOptions,
    batch_sizes: &[usize],
    seconds_per_size: f64,
) -> Result<Vec<EvalThroughput>, TrainError> {
    let dir = std::env::temp_dir().join(format!("xq-train-bench-eval-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = (|| {
        let mut ev = scratch_evaluator(&dir, net, options)?;
        let max = batch_sizes.iter().copied().max().unwrap_or(1);
        let positions = BenchPositions::new(max, net.history);
        let inputs = positions.inputs();
        let mut out = Vec::new();
        for &bs in batch_sizes {
            let batch = &inputs[..bs.min(inputs.len())];
            ev.evaluate(batch)
                .map_err(|e| TrainError::BadBatch(e.to_string()))?;
            let t0 = Instant::now();
            let mut batches = 0;
            while batches == 0 || t0.elapsed().as_secs_f64() < seconds_per_size {
                ev.evaluate(batch)
                    .map_err(|e| TrainError::BadBatch(e.to_string()))?;
                batches += 1;
            }
            let secs = t0.elapsed().as_secs_f64();
            out.push(EvalThroughput {
                batch_size: batch.len(),
                positions_per_sec: (batches * batch.len()) as f64 / secs,
                batches,
            });
        }
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Where a torch evaluator's call goes, at one batch size (milliseconds per call, means
/// over the timed calls; the device is synchronised after each stage, so the stages add
/// up to a little more than an unsynchronised call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalStages {
    pub batch_size: usize,
    pub calls: usize,
    /// Packing the positions ([`xq_nn::encode_packed_batch`]): the search
    /// threads' share in self-play.
    pub encode_ms: f64,
    /// See [`StageClock`]: the server's share in self-play.
    pub copy_in_ms: f64,
    pub forward_ms: f64,
    pub copy_out_ms: f64,
    /// The legal-move gather and softmax of every position: the search threads' share.
    pub gather_ms: f64,
    /// Positions/s of the whole packed call, stages summed.
    pub positions_per_sec: f64,
    /// Positions/s of the same work on the path before issue #46 ([`Unfolded`]: f32
    /// planes encoded, copied into a new tensor and moved as they are, the network with
    /// its batch norms in NCHW, logits copied back into new vectors, the gather on the
    /// same thread), timed in the same run.
    pub unpacked_positions_per_sec: f64,
    /// The largest difference between the two paths' logits on the batch, over
    /// `1 + max |logit|` (f32 on the CPU: about 1e-6; f16 and bf16: up to about 1e-2).
    pub logit_diff: f64,
    /// Why the packed path's calls ran eagerly ([`TorchEvaluator::eager_reason`]);
    /// `None` when they replayed captured CUDA graphs.
    pub eager: Option<String>,
}

/// [`EvalStages`] of a [`TorchEvaluator`] (randomly initialised `net`, one copy, loaded
/// with `options`) at each batch size, on positions from seeded random games; each size
/// runs the packed path and then the unpacked one for about `seconds_per_size` each,
/// after one untimed call of each.
///
/// # Errors
/// If the network cannot be built or a call fails.
pub fn evaluator_stages(
    net: &NetConfig,
    options: EvaluatorOptions,
    batch_sizes: &[usize],
    seconds_per_size: f64,
) -> Result<Vec<EvalStages>, TrainError> {
    let dir = std::env::temp_dir().join(format!("xq-train-bench-stages-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = (|| {
        let options = EvaluatorOptions {
            workers: 1,
            ..options
        };
        let mut ev = scratch_evaluator(&dir, net, options)?;
        let reference = Unfolded::load(&dir, &ev, options)?;
        let encoder = ev.encoder();
        let max = batch_sizes.iter().copied().max().unwrap_or(1);
        let positions = BenchPositions::new(max, net.history);
        let inputs = positions.inputs();
        let bad = |e: xq_nn::EvalError| TrainError::BadBatch(e.to_string());
        let mut packed = Vec::new();
        let mut planes = Vec::new();
        let mut out = Vec::new();
        for &bs in batch_sizes {
            let batch = &inputs[..bs.min(inputs.len())];
            let n = batch.len();
            packed.resize(n * encoder.planes(), PackedPlane::ZERO);
            planes.resize(n * encoder.input_len(), 0.0);
            let mut clock = StageClock::default();
            let (mut encode, mut gather) = (0.0, 0.0);
            let mut calls = 0;
            let mut warm = true;
            let t0 = Instant::now();
            while warm || calls == 0 || t0.elapsed().as_secs_f64() < seconds_per_size {
                if warm {
                    clock = StageClock::default();
                }
                let t = Instant::now();
                encode_packed_batch(batch, &encoder, &mut packed)
                    .map_err(|e| TrainError::BadBatch(e.to_string()))?;
                let e = t.elapsed().as_secs_f64();
                let raw = ev.forward_timed(&packed, n, &mut clock)?;
                let t = Instant::now();
                for (i, input) in batch.iter().enumerate() {
                    raw.evaluation(i, input).map_err(bad)?;
                }
                let g = t.elapsed().as_secs_f64();
                if !warm {
                    (encode, gather, calls) = (encode + e, gather + g, calls + 1);
                }
                warm = false;
            }
            let per_call = |secs: f64| 1e3 * secs / calls as f64;
            let total =
                encode + gather + (clock.copy_in + clock.forward + clock.copy_out).as_secs_f64();
            // The unpacked reference: one untimed call, then as long again.
            let unpacked = |planes: &mut Vec<f32>| -> Result<(), TrainError> {
                xq_nn::encode_eval_batch(batch, &encoder, planes)
                    .map_err(|e| TrainError::BadBatch(e.to_string()))?;
                let (p, v) = reference.forward(planes, n)?;
                for (i, input) in batch.iter().enumerate() {
                    xq_nn::evaluation_from_logits(
                        &p[i * POLICY_SIZE..(i + 1) * POLICY_SIZE],
                        [v[i * 3], v[i * 3 + 1], v[i * 3 + 2]],
                        input.moves,
                        input.position().map_err(bad)?.turn(),
                    )
                    .map_err(bad)?;
                }
                Ok(())
            };
            unpacked(&mut planes)?;
            let t0 = Instant::now();
            let mut unpacked_calls = 0;
            while unpacked_calls == 0 || t0.elapsed().as_secs_f64() < seconds_per_size {
                unpacked(&mut planes)?;
                unpacked_calls += 1;
            }
            let unpacked_secs = t0.elapsed().as_secs_f64();
            // The two paths' logits on this batch, the check that a GPU's captured
            // graphs, folded batch norms and layout compute what the network does.
            let (p, v) = reference.forward(&planes, n)?;
            let raw = ev.forward_timed(&packed, n, &mut StageClock::default())?;
            let scale = 1.0 + p.iter().chain(&v).fold(0f32, |m, x| m.max(x.abs()));
            let diff = raw
                .policy
                .iter()
                .zip(&p)
                .chain(raw.value.iter().zip(&v))
                .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            out.push(EvalStages {
                batch_size: n,
                calls,
                encode_ms: per_call(encode),
                copy_in_ms: per_call(clock.copy_in.as_secs_f64()),
                forward_ms: per_call(clock.forward.as_secs_f64()),
                copy_out_ms: per_call(clock.copy_out.as_secs_f64()),
                gather_ms: per_call(gather),
                positions_per_sec: (calls * n) as f64 / total,
                unpacked_positions_per_sec: (unpacked_calls * n) as f64 / unpacked_secs,
                logit_diff: f64::from(diff / scale),
                eager: ev.eager_reason().map(str::to_string),
            });
        }
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The evaluation path before issue #46, the reference [`evaluator_stages`] measures
/// against in the same run: f32 planes copied into a new tensor and moved to the device
/// as they are, the network unfolded (a batch norm after every convolution) in NCHW,
/// its weights in the compute kind but batch norm's, as loading did then (`vs.half()`
/// for f16; the convolutions and linear layers cast for bf16), and the logits copied
/// back into new vectors.
struct Unfolded {
    _vs: VarStore,
    net: Net,
    device: Device,
    kind: Kind,
}

impl Unfolded {
    /// The network of the checkpoint `ev` was loaded from (in `dir`), on its device and
    /// in its precision.
    fn load(
        dir: &Path,
        ev: &TorchEvaluator,
        options: EvaluatorOptions,
    ) -> Result<Unfolded, TrainError> {
        let sidecar_path = checkpoint::resolve(dir)?;
        let sidecar = Sidecar::read(&sidecar_path)?;
        let weights = sidecar_path.parent().unwrap_or(dir).join(&sidecar.ema);
        let device = crate::config::tch_device(options.device);
        let kind = compute_kind(ev.inference().precision);
        let mut vs = VarStore::new(device);
        let net = {
            let _guard = crate::net::init_lock();
            Net::new(&vs.root(), &sidecar.net)?
        };
        if kind == Kind::Half {
            vs.half();
        }
        checkpoint::load_into(&vs.variables(), &read_tensors(&weights)?, &weights)?;
        if kind == Kind::BFloat16 {
            let _guard = tch::no_grad_guard();
            for (name, mut var) in vs.variables() {
                if !name.split('.').any(|part| part.starts_with("bn")) {
                    var.f_set_data(&var.f_to_kind(Kind::BFloat16)?)?;
                }
            }
        }
        vs.freeze();
        Ok(Unfolded {
            _vs: vs,
            net,
            device,
            kind,
        })
    }

    fn forward(&self, inputs: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        let _guard = tch::no_grad_guard();
        let planes = inputs.len() / n / (BOARD_RANKS * BOARD_FILES);
        let x = Tensor::f_from_slice(inputs)?
            .f_view([
                n as i64,
                planes as i64,
                BOARD_RANKS as i64,
                BOARD_FILES as i64,
            ])?
            .f_to_device(self.device)?;
        let (p, v) = self.net.forward(&x, false, self.kind)?;
        let host = |t: Tensor| -> Result<Vec<f32>, TrainError> {
            Ok(Vec::<f32>::try_from(
                &t.f_to_device(Device::Cpu)?
                    .f_to_kind(Kind::Float)?
                    .f_reshape([-1])?,
            )?)
        };
        Ok((host(p)?, host(v)?))
    }
}

/// The positions the evaluator benchmarks feed: [`random_histories`] (seed 7) with their
/// legal moves.
struct BenchPositions {
    games: Vec<Vec<Position>>,
    moves: Vec<Vec<xq_core::Move>>,
}

impl BenchPositions {
    fn new(n: usize, history: usize) -> BenchPositions {
        let games = random_histories(n, history, 7);
        let moves = games
            .iter()
            .map(|h| {
                h.last()
                    .map(|p| p.legal_moves().to_vec())
                    .unwrap_or_default()
            })
            .collect();
        BenchPositions { games, moves }
    }

    fn inputs(&self) -> Vec<EvalInput<'_>> {
        self.games
            .iter()
            .zip(&self.moves)
            .map(|(h, m)| EvalInput {
                history: h,
                moves: m,
            })
            .collect()
    }
}

/// `n` position histories (up to `history` long) from seeded random games: varied,
/// legal, mid-game positions without needing any game records.
fn random_histories(n: usize, history: usize, seed: u64) -> Vec<Vec<Position>> {
    let mut rng = xq_core::hash::SplitMix64::new(seed);
    let mut next = move || rng.next_u64() as usize;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::startpos();
        let mut line = vec![pos.clone()];
        let plies = 10 + next() % 60;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[next() % moves.len()]);
            line.push(pos.clone());
        }
        if pos.has_legal_move() {
            let keep = line.len().saturating_sub(history.max(1));
            out.push(line.split_off(keep));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_histories_end_in_playable_positions() {
        let h = random_histories(5, 3, 1);
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|line| (1..=3).contains(&line.len())));
        assert!(h.iter().all(|line| line.last().unwrap().has_legal_move()));
        assert_eq!(h, random_histories(5, 3, 1));
    }
}
