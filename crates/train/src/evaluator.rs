//! The torch-backed [`Evaluator`]: loads a checkpoint and answers batches of positions.
//!
//! One `TorchEvaluator` is owned by one thread at a time (it is `Send`, not `Sync`, as
//! tch tensors are): a multi-threaded search funnels its batches to the thread that owns
//! it. Inference runs without autograd, with batch norm in inference mode, in half
//! precision on a GPU and f32 on the CPU.
//!
//! On the CPU an evaluator can hold several copies of the network
//! ([`EvaluatorOptions::workers`]): each batch is cut into one part per copy, and the
//! parts are evaluated at once, each on a thread of its own with its own intra-op
//! threads (lc0's and KataGo's several backend threads, on cores instead of GPUs). This
//! uses every core without libtorch's intra-op parallelism, whose OpenMP threads meet
//! at a barrier after every layer: when another process deschedules one of them, each
//! layer waits for it (docs/BENCHMARKS.md, "Self-play on a shared machine"). Parts meet
//! once per batch, so a descheduled copy delays one batch by its own share of the work.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, EncoderConfig, encode_eval_batch};
use xq_nn::policy::{POLICY_SIZE, policy_indices_into};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::checkpoint::{self, Sidecar, read_tensors};
use crate::config::{DeviceChoice, device_name};
use crate::error::TrainError;
use crate::net::Net;

/// Which weights of a training checkpoint to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightsChoice {
    /// The exponential moving average (smoother; what evaluation and export use).
    #[default]
    Ema,
    /// The live optimiser weights.
    Live,
}

/// How to load a [`TorchEvaluator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvaluatorOptions {
    pub device: DeviceChoice,
    pub weights: WeightsChoice,
    /// Half precision: `None` = on a GPU only.
    pub half: Option<bool>,
    /// libtorch intra-op CPU threads of the thread that evaluates (0 = leave that
    /// thread's setting; with several `workers`, 0 means 1). libtorch's OpenMP thread count is a per-thread setting (a
    /// thread that is not the one that called `set_num_threads` starts with one thread
    /// per core), so it is applied on the evaluating thread itself, before each forward
    /// pass. Self-play uses 1 by default: see `threads` in `xq_selfplay::SelfplayConfig`.
    pub threads: usize,
    /// Copies of the network that evaluate parts of each batch at once, on the CPU
    /// (see the module documentation); 0 and 1 mean one copy, evaluating on the
    /// calling thread. Each copy runs `threads` intra-op threads (at least one). A GPU
    /// evaluator always uses one copy.
    pub workers: usize,
}

/// One copy of the network, with what a forward pass needs.
#[derive(Debug)]
struct Replica {
    _vs: VarStore,
    net: Net,
    device: Device,
    kind: Kind,
    planes: usize,
    threads: usize,
}

impl Replica {
    fn load(
        sidecar: &Sidecar,
        weights: &Path,
        saved: &HashMap<String, Tensor>,
        device: Device,
        half: bool,
        threads: usize,
    ) -> Result<Replica, TrainError> {
        let mut vs = VarStore::new(device);
        let net = {
            let _guard = crate::net::init_lock();
            Net::new(&vs.root(), &sidecar.net)?
        };
        if half {
            vs.half();
        }
        checkpoint::load_into(&vs.variables(), saved, weights)?;
        vs.freeze();
        Ok(Replica {
            _vs: vs,
            net,
            device,
            kind: if half { Kind::Half } else { Kind::Float },
            planes: sidecar.net.encoder().planes(),
            threads,
        })
    }

    /// Policy and value logits of `n` encoded positions (checked by the caller).
    fn forward(&self, inputs: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        if self.threads > 0 && tch::get_num_threads() != self.threads as i32 {
            crate::set_num_threads(self.threads);
        }
        let _guard = tch::no_grad_guard();
        let x = Tensor::f_from_slice(inputs)?.f_view([
            n as i64,
            self.planes as i64,
            BOARD_RANKS as i64,
            BOARD_FILES as i64,
        ])?;
        let x = x.f_to_device(self.device)?;
        let (p, v) = self.net.forward(&x, false, self.kind)?;
        let p = Vec::<f32>::try_from(&p.f_to_device(Device::Cpu)?.f_reshape([-1])?)?;
        let v = Vec::<f32>::try_from(&v.f_to_device(Device::Cpu)?.f_reshape([-1])?)?;
        Ok((p, v))
    }
}

/// The outputs of one part of a batch, or why it failed.
type PartResult = Result<(Vec<f32>, Vec<f32>), String>;

/// A [`Replica`] on a thread of its own, evaluating the parts of batches it is sent.
/// Dropping it ends the thread and waits for it.
#[derive(Debug)]
struct Worker {
    /// Its copy's number (the calling thread's copy is 0), for messages.
    index: usize,
    jobs: Option<SyncSender<(Vec<f32>, usize)>>,
    results: Receiver<PartResult>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    fn spawn(replica: Replica, index: usize) -> Result<Worker, TrainError> {
        let (jobs, job_rx) = sync_channel::<(Vec<f32>, usize)>(1);
        let (result_tx, results) = sync_channel::<PartResult>(1);
        let thread = std::thread::Builder::new()
            .name(format!("torch-eval-{index}"))
            .spawn(move || {
                while let Ok((inputs, n)) = job_rx.recv() {
                    // A panic inside libtorch becomes this part's error, so the caller
                    // hears why; the copy then stops.
                    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        replica.forward(&inputs, n).map_err(|e| e.to_string())
                    }));
                    let (r, panicked) = match r {
                        Ok(r) => (r, false),
                        Err(panic) => (Err(format!("panicked: {}", panic_message(&*panic))), true),
                    };
                    if result_tx.send(r).is_err() || panicked {
                        break;
                    }
                }
            })
            .map_err(|e| TrainError::EvalThread(format!("copy {index} cannot start: {e}")))?;
        Ok(Worker {
            index,
            jobs: Some(jobs),
            results,
            thread: Some(thread),
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub struct TorchEvaluator {
    replica: Replica,
    /// The other copies of the network (empty with one copy).
    workers: Vec<Worker>,
    encoder: EncoderConfig,
    name: String,
    sidecar: Sidecar,
    inputs: Vec<f32>,
    indices: Vec<u16>,
}

impl TorchEvaluator {
    /// Loads a checkpoint: a sidecar `.json`, a checkpoint directory or a run directory
    /// (their newest checkpoint). Refuses a checkpoint of another encoding version or
    /// policy index with an error saying so.
    pub fn load(
        path: impl AsRef<Path>,
        options: EvaluatorOptions,
    ) -> Result<TorchEvaluator, TrainError> {
        let sidecar_path = checkpoint::resolve(path.as_ref())?;
        let sidecar = Sidecar::read(&sidecar_path)?;
        let file = match options.weights {
            WeightsChoice::Ema => &sidecar.ema,
            WeightsChoice::Live => &sidecar.weights,
        };
        let weights_path = sidecar_path.parent().unwrap_or(Path::new(".")).join(file);
        let device = crate::config::tch_device(options.device);
        let half = options.half.unwrap_or(device.is_cuda());
        let copies = if device.is_cuda() {
            1
        } else {
            options.workers.max(1)
        };
        // Several copies on the cores: each runs its own intra-op threads, one unless
        // told otherwise (libtorch's default, one per core, in every copy would
        // oversubscribe the cores).
        let threads = if copies > 1 {
            options.threads.max(1)
        } else {
            options.threads
        };
        let saved = read_tensors(&weights_path)?;
        let load = || Replica::load(&sidecar, &weights_path, &saved, device, half, threads);
        let replica = load()?;
        let workers = (1..copies)
            .map(|i| Worker::spawn(load()?, i))
            .collect::<Result<Vec<_>, _>>()?;
        let name = format!(
            "torch({}, {}, {:?}{})",
            weights_path.display(),
            device_name(device),
            options.weights,
            if half { ", f16" } else { "" }
        );
        Ok(TorchEvaluator {
            replica,
            workers,
            encoder: sidecar.net.encoder(),
            name,
            sidecar,
            inputs: Vec::new(),
            indices: Vec::new(),
        })
    }

    /// The loaded checkpoint's sidecar (architecture, step, …).
    pub fn sidecar(&self) -> &Sidecar {
        &self.sidecar
    }

    /// The encoder configuration inputs are built with.
    pub fn encoder(&self) -> EncoderConfig {
        self.encoder
    }

    /// Copies of the network that evaluate a batch's parts at once (1: no split).
    pub fn workers(&self) -> usize {
        self.workers.len() + 1
    }

    /// Raw network outputs for `n` encoded positions (`n × planes × 10 × 9` floats):
    /// policy logits (`n × 2086`) and value logits (`n × 3`), as f32 on the host. With
    /// several copies of the network the positions are cut into consecutive parts of
    /// equal size (the last may be smaller), one a copy, and the outputs joined in order.
    pub fn forward_raw(
        &self,
        inputs: &[f32],
        n: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        if n == 0 || inputs.len() != n * self.encoder.input_len() {
            return Err(TrainError::BadBatch(format!(
                "{} input floats for {n} positions of {} floats each",
                inputs.len(),
                self.encoder.input_len()
            )));
        }
        let per = n.div_ceil(self.workers().min(n));
        let len = self.encoder.input_len();
        // Parts 1.. go to the workers; part 0 is evaluated here meanwhile.
        let mut sent = 0;
        let mut stopped = None;
        for (worker, lo) in self.workers.iter().zip((per..n).step_by(per)) {
            let hi = (lo + per).min(n);
            let job = (inputs[lo * len..hi * len].to_vec(), hi - lo);
            if let Some(jobs) = &worker.jobs
                && jobs.send(job).is_ok()
            {
                sent += 1;
            } else {
                stopped = Some(worker.index);
                break;
            }
        }
        let mine = self.replica.forward(&inputs[..per * len], per);
        // Every sent part is collected, even after a failure, so that no stale result
        // is left for the next batch.
        let mut parts = Vec::with_capacity(sent);
        for worker in &self.workers[..sent] {
            parts.push(
                worker
                    .results
                    .recv()
                    .map_err(|_| "has stopped".to_owned())
                    .and_then(|r| r)
                    .map_err(|e| format!("copy {}: {e}", worker.index)),
            );
        }
        let (mut p, mut v) = mine?;
        if let Some(i) = stopped {
            return Err(TrainError::EvalThread(format!(
                "copy {i} has stopped (an earlier batch says why)"
            )));
        }
        for part in parts {
            let (pp, vv) = part.map_err(TrainError::EvalThread)?;
            p.extend_from_slice(&pp);
            v.extend_from_slice(&vv);
        }
        Ok((p, v))
    }
}

/// The text of a panic's payload (a `&str` or `String`), or a placeholder.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Softmax of `xs` in place (max-subtracted; an empty slice stays empty).
fn softmax(xs: &mut [f32]) {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in xs.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in xs.iter_mut() {
        *x /= sum;
    }
}

impl Evaluator for TorchEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let n = batch.len();
        self.inputs.resize(n * self.encoder.input_len(), 0.0);
        encode_eval_batch(batch, &self.encoder, &mut self.inputs)
            .map_err(|e| EvalError::BadInput(e.to_string()))?;
        let (p, v) = self
            .forward_raw(&self.inputs, n)
            .map_err(|e| EvalError::Backend(e.to_string()))?;
        let mut out = Vec::with_capacity(n);
        for (i, input) in batch.iter().enumerate() {
            let turn = input.position()?.turn();
            policy_indices_into(input.moves, turn, &mut self.indices).map_err(|m| {
                EvalError::BadInput(format!("move {m} has no policy index (not a legal move)"))
            })?;
            let row = &p[i * POLICY_SIZE..(i + 1) * POLICY_SIZE];
            let mut policy: Vec<f32> = self.indices.iter().map(|&k| row[k as usize]).collect();
            softmax(&mut policy);
            let mut wdl = [v[i * 3], v[i * 3 + 1], v[i * 3 + 2]];
            softmax(&mut wdl);
            out.push(Evaluation { policy, wdl });
        }
        Ok(out)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// Where [`TorchEvaluator::load`] would load from: the resolved sidecar path.
pub fn resolve_checkpoint(path: impl AsRef<Path>) -> Result<PathBuf, TrainError> {
    Ok(checkpoint::resolve(path.as_ref())?)
}

/// libtorch as the process's network backend ([`xq_nn::backend`]): loads checkpoints as
/// [`TorchEvaluator`]s with their EMA weights, on the GPU when there is one.
#[derive(Debug, Clone, Copy, Default)]
pub struct TorchBackend;

impl From<&xq_nn::LoadOptions> for EvaluatorOptions {
    /// The seam's options, with the EMA weights and the precision the device implies.
    fn from(options: &xq_nn::LoadOptions) -> EvaluatorOptions {
        EvaluatorOptions {
            device: options.device,
            threads: options.threads,
            workers: options.workers,
            ..EvaluatorOptions::default()
        }
    }
}

impl xq_nn::NetworkBackend for TorchBackend {
    fn load(
        &self,
        path: &Path,
        options: &xq_nn::LoadOptions,
    ) -> Result<Box<dyn Evaluator>, xq_nn::backend::LoadError> {
        TorchEvaluator::load(path, options.into())
            .map(|ev| Box::new(ev) as Box<dyn Evaluator>)
            .map_err(xq_nn::backend::LoadError::new)
    }

    fn device_name(&self, options: &xq_nn::LoadOptions) -> String {
        device_name(crate::config::tch_device(options.device))
    }

    fn name(&self) -> &'static str {
        "torch"
    }
}

/// Registers [`TorchBackend`] as this process's network backend (idempotent).
pub fn register_backend() {
    xq_nn::backend::register(Box::new(TorchBackend));
}
