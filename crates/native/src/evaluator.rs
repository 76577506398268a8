//! The native [`Evaluator`] and [`NativeBackend`], the network backend over it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xq_nn::checkpoint::{self, Sidecar};
use xq_nn::encode::{EncoderConfig, PackedPlane};
use xq_nn::policy::POLICY_SIZE;
use xq_nn::{
    EvalError, EvalInput, Evaluation, Evaluator, RawEvaluator, RawOutputs, evaluate_packed,
    packed_positions,
};

use crate::error::NativeError;
use crate::net::{NativeNet, Scratch};
use crate::weights::Tensors;

/// Loads the network a checkpoint names: a sidecar `.json`, a checkpoint directory or a
/// run directory (their newest checkpoint), with its EMA weights (`ema`) or its live
/// ones. Returns the network and the resolved sidecar's path.
///
/// # Errors
/// The sidecar's problems ([`NativeError::Checkpoint`]: another encoding or policy
/// index, no checkpoint), an unreadable weights file, or weights that do not fit the
/// architecture the sidecar names.
pub fn load_net(path: &Path, ema: bool) -> Result<(NativeNet, PathBuf), NativeError> {
    let sidecar_path = checkpoint::resolve(path)?;
    let sidecar = Sidecar::read(&sidecar_path)?;
    let weights = sidecar.weights_path(&sidecar_path, ema);
    let net = NativeNet::from_tensors(&sidecar.net, Tensors::read(&weights)?)?;
    Ok((net, weights))
}

/// Policy and value logits of a part of a batch, or why it failed.
type Logits = Result<(Vec<f32>, Vec<f32>), NativeError>;

/// An [`Evaluator`] over a [`NativeNet`]. With `threads` > 1 a batch is cut into
/// consecutive parts, one a thread, evaluated at once and joined in order; each part is
/// a whole forward pass, so the threads meet once a batch, not once a layer.
///
/// The threads are a pool of their own, started at the first split batch and kept: the
/// GEMM kernels keep an L2-sized packing buffer per thread (`gemm`'s thread-local
/// slab), and a thread started per batch paid for a fresh one every call. On the Intel
/// Xeon that made two threads slower than one (3×32, batch 24: 3,348 positions/s
/// against 5,130 on one thread, `examples/native_speed` with two native threads).
#[derive(Debug)]
pub struct NativeEvaluator {
    net: Arc<NativeNet>,
    encoder: EncoderConfig,
    threads: usize,
    pool: Option<rayon::ThreadPool>,
    scratch: Vec<Scratch>,
    /// Packed inputs: `evaluate`'s encoding, or the parts `forward_packed` joins.
    packed: Vec<PackedPlane>,
    /// The last batch's logits, which [`RawOutputs`] borrow.
    policy: Vec<f32>,
    value: Vec<f32>,
    name: String,
}

impl NativeEvaluator {
    /// An evaluator over `net` on `threads` threads (0 means 1); `name` describes it in logs.
    pub fn new(net: Arc<NativeNet>, threads: usize, name: String) -> NativeEvaluator {
        let threads = threads.max(1);
        NativeEvaluator {
            encoder: net.config().encoder(),
            net,
            threads,
            pool: None,
            scratch: vec![Scratch::default(); threads],
            packed: Vec::new(),
            policy: Vec::new(),
            value: Vec::new(),
            name,
        }
    }

    /// Loads a checkpoint (see [`load_net`]) with its EMA weights.
    pub fn load(path: &Path, threads: usize) -> Result<NativeEvaluator, NativeError> {
        let (net, weights) = load_net(path, true)?;
        let name = format!(
            "native({}, cpu, {} threads)",
            weights.display(),
            threads.max(1)
        );
        Ok(NativeEvaluator::new(Arc::new(net), threads, name))
    }

    /// The network.
    pub fn net(&self) -> &NativeNet {
        &self.net
    }

    /// The encoder configuration inputs are built with.
    pub fn encoder(&self) -> EncoderConfig {
        self.encoder
    }

    /// Raw outputs of `n` packed positions: policy logits (`n × 2086`) and value logits
    /// (`n × 3`), split over the evaluator's threads.
    ///
    /// # Errors
    /// [`NativeError::BadBatch`] for inputs of the wrong length; [`NativeError::Thread`]
    /// when the threads cannot start or a part panics.
    pub fn forward_raw(
        &mut self,
        inputs: &[PackedPlane],
        n: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), NativeError> {
        let len = self.net.input_len();
        if inputs.len() != n * len {
            return Err(NativeError::BadBatch(format!(
                "{} packed planes for {n} positions of {len} planes each",
                inputs.len()
            )));
        }
        let parts = self.threads.min(n).max(1);
        if parts == 1 {
            return self.net.forward(inputs, n, &mut self.scratch[0]);
        }
        if self.pool.is_none() {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(self.threads)
                .thread_name(|i| format!("native-eval-{i}"))
                .build()
                .map_err(|e| NativeError::Thread(format!("cannot start: {e}")))?;
            self.pool = Some(pool);
        }
        let pool = self.pool.as_ref().expect("started above");
        let per = n.div_ceil(parts);
        let net = &self.net;
        // One slot per part actually cut (fewer than `parts` when `per` rounds up).
        let mut results: Vec<Option<Logits>> = (0..n.div_ceil(per)).map(|_| None).collect();
        pool.scope(|s| {
            let jobs = inputs
                .chunks(per * len)
                .zip(self.scratch.iter_mut())
                .zip(results.iter_mut());
            for ((chunk, sc), slot) in jobs {
                s.spawn(move |_| {
                    let k = chunk.len() / len;
                    let run = std::panic::AssertUnwindSafe(|| net.forward(chunk, k, sc));
                    *slot =
                        Some(std::panic::catch_unwind(run).unwrap_or_else(|_| {
                            Err(NativeError::Thread("a part panicked".into()))
                        }));
                });
            }
        });
        let mut policy = Vec::with_capacity(n * POLICY_SIZE);
        let mut value = Vec::with_capacity(n * 3);
        for r in results {
            let (p, v) =
                r.unwrap_or_else(|| Err(NativeError::Thread("a part did not run".into())))?;
            policy.extend_from_slice(&p);
            value.extend_from_slice(&v);
        }
        Ok((policy, value))
    }
}

impl RawEvaluator for NativeEvaluator {
    fn encoder(&self) -> EncoderConfig {
        self.encoder
    }

    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError> {
        let n = packed_positions(parts, self.encoder.planes())?;
        // One part (the common case, and `evaluate`'s) is read where it lies; several
        // are joined, 2.6 kB a position, next to a forward pass of 100 µs or more.
        let (policy, value) = if let [part] = parts {
            self.forward_raw(part, n)
        } else {
            let mut packed = std::mem::take(&mut self.packed);
            packed.clear();
            parts.iter().for_each(|p| packed.extend_from_slice(p));
            let r = self.forward_raw(&packed, n);
            self.packed = packed;
            r
        }
        .map_err(|e| EvalError::Backend(e.to_string()))?;
        self.policy = policy;
        self.value = value;
        Ok(RawOutputs {
            policy: &self.policy,
            value: &self.value,
        })
    }
}

impl Evaluator for NativeEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut packed = std::mem::take(&mut self.packed);
        let r = evaluate_packed(self, batch, &mut packed);
        self.packed = packed;
        r
    }

    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        Some(self)
    }

    /// The same network (shared, it is immutable) with buffers and threads of its own.
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        Some(Ok(Box::new(NativeEvaluator::new(
            self.net.clone(),
            self.threads,
            self.name.clone(),
        ))))
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// The native CPU backend ([`xq_nn::backend`]): loads checkpoints as
/// [`NativeEvaluator`]s with their EMA weights, splitting each batch over
/// [`LoadOptions::cpu_threads`](xq_nn::LoadOptions::cpu_threads) threads (one per
/// worker copy libtorch would run). It has the CPU only: the device asked for is ignored.
#[derive(Debug, Default, Clone, Copy)]
pub struct NativeBackend;

impl xq_nn::NetworkBackend for NativeBackend {
    fn load(
        &self,
        path: &Path,
        options: &xq_nn::LoadOptions,
    ) -> Result<Box<dyn Evaluator>, xq_nn::backend::LoadError> {
        NativeEvaluator::load(path, options.cpu_threads())
            .map(|ev| Box::new(ev) as Box<dyn Evaluator>)
            .map_err(xq_nn::backend::LoadError::new)
    }

    fn device_name(&self, _: &xq_nn::LoadOptions) -> String {
        "cpu".to_owned()
    }

    fn name(&self) -> &'static str {
        "native"
    }
}

/// Registers [`NativeBackend`] as this process's network backend (the first
/// registration wins; returns whether this one did).
pub fn register_backend() -> bool {
    xq_nn::backend::register(Box::new(NativeBackend))
}
