//! The torch-backed [`Evaluator`]: loads a checkpoint and answers batches of positions.
//!
//! One `TorchEvaluator` is owned by one thread at a time (it is `Send`, not `Sync`, as
//! tch tensors are): a multi-threaded search funnels its batches to the thread that owns
//! it. Inference runs without autograd, with batch norm in inference mode, in half
//! precision on a GPU and f32 on the CPU.

use std::path::{Path, PathBuf};

use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, EncoderConfig, encode_eval_batch};
use xq_nn::policy::{POLICY_SIZE, policy_indices_into};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::checkpoint::{self, Sidecar, read_tensors};
use crate::config::DeviceChoice;
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
    /// thread's setting). libtorch's OpenMP thread count is a per-thread setting (a
    /// thread that is not the one that called `set_num_threads` starts with one thread
    /// per core), so it is applied on the evaluating thread itself, before each forward
    /// pass. Self-play uses 1 by default: see `threads` in `xq_selfplay::SelfplayConfig`.
    pub threads: usize,
}

/// See the module documentation.
#[derive(Debug)]
pub struct TorchEvaluator {
    _vs: VarStore,
    net: Net,
    device: Device,
    kind: Kind,
    encoder: EncoderConfig,
    name: String,
    sidecar: Sidecar,
    inputs: Vec<f32>,
    indices: Vec<u16>,
    threads: usize,
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
        let device = options.device.device();
        let half = options.half.unwrap_or(device.is_cuda());
        let kind = if half { Kind::Half } else { Kind::Float };
        let mut vs = VarStore::new(device);
        let net = {
            let _guard = crate::net::init_lock();
            Net::new(&vs.root(), &sidecar.net)?
        };
        if half {
            vs.half();
        }
        checkpoint::load_into(
            &vs.variables(),
            &read_tensors(&weights_path)?,
            &weights_path,
        )?;
        vs.freeze();
        let name = format!(
            "torch({}, {}, {:?}{})",
            weights_path.display(),
            device_name(device),
            options.weights,
            if half { ", f16" } else { "" }
        );
        Ok(TorchEvaluator {
            _vs: vs,
            net,
            device,
            kind,
            encoder: sidecar.net.encoder(),
            name,
            sidecar,
            inputs: Vec::new(),
            indices: Vec::new(),
            threads: options.threads,
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

    /// Raw network outputs for `n` encoded positions (`n × planes × 10 × 9` floats):
    /// policy logits (`n × 2086`) and value logits (`n × 3`), as f32 on the host.
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
        if self.threads > 0 && tch::get_num_threads() != self.threads as i32 {
            crate::set_num_threads(self.threads);
        }
        let _guard = tch::no_grad_guard();
        let x = Tensor::f_from_slice(inputs)?.f_view([
            n as i64,
            self.encoder.planes() as i64,
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

fn device_name(d: Device) -> String {
    match d {
        Device::Cpu => "cpu".into(),
        Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}").to_lowercase(),
    }
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
    checkpoint::resolve(path.as_ref())
}

/// libtorch as the process's network backend ([`xq_nn::backend`]): loads checkpoints as
/// [`TorchEvaluator`]s with their EMA weights, on the GPU when there is one.
#[derive(Debug, Clone, Copy, Default)]
pub struct TorchBackend;

impl xq_nn::NetworkBackend for TorchBackend {
    fn load(&self, path: &Path) -> Result<Box<dyn Evaluator>, String> {
        TorchEvaluator::load(path, EvaluatorOptions::default())
            .map(|ev| Box::new(ev) as Box<dyn Evaluator>)
            .map_err(|e| e.to_string())
    }

    fn set_threads(&self, threads: usize) {
        crate::set_num_threads(threads);
    }

    fn name(&self) -> &'static str {
        "torch"
    }
}

/// Registers [`TorchBackend`] as this process's network backend (idempotent).
pub fn register_backend() {
    xq_nn::backend::register(Box::new(TorchBackend));
}
