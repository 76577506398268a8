//! The torch-backed [`Evaluator`]: loads a checkpoint and answers batches of positions.
//!
//! One `TorchEvaluator` is owned by one thread at a time (it is `Send`, not `Sync`, as
//! tch tensors are): a multi-threaded search funnels its batches to the thread that owns
//! it. Inference runs without autograd, with batch norm folded into the convolutions, in half
//! precision on a GPU and f32 on the CPU unless [`EvaluatorOptions::precision`] asks for
//! another.
//!
//! **Loading.** A checkpoint is loaded in f32 and folded for inference
//! ([`Net::fold`]): each batch norm goes into the convolution before it, the weights are
//! cast once to the compute kind, and the activations are channels-last ([`LAYOUT`]).
//! A call then casts nothing but its input.
//!
//! **bf16.** With [`Precision::Bf16`] the folded weights are bf16; each call converts its
//! inputs to bf16 and the outputs back to f32. The change to the numerics is bf16's
//! rounding of the activations and of the folded weights (8 bits of mantissa; oneDNN
//! accumulates in f32). On a CPU with AVX512-BF16 or AMX-BF16 this is where libtorch is
//! fastest; without them oneDNN emulates bf16 and it is slower than f32, which is why
//! `XQZ_BACKEND=auto` measures it only where the CPU has it (`xq_nn::cpu_has_bf16`).
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
use std::time::{Duration, Instant};

use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, EncoderConfig, PackedPlane, expand_into};
use xq_nn::policy::POLICY_SIZE;
use xq_nn::{
    EvalError, EvalInput, Evaluation, Evaluator, Inference, InferenceBackend, Precision,
    RawEvaluator, RawOutputs, evaluate_packed, packed_positions,
};

use crate::checkpoint::{self, Sidecar, read_tensors};
use crate::config::{DeviceChoice, device_name};
use crate::cuda::{Graph, Stream};
use crate::error::TrainError;
use crate::net::{InferenceNet, Layout, Net};

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
    /// Half precision: `None` = on a GPU only. `Some(true)` is f16 whatever precision
    /// [`TorchEvaluator::load_in`] is given, `Some(false)` rules f16 out (an f16 or
    /// `Auto` precision becomes f32).
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

/// The precision `precision` and `half` ([`EvaluatorOptions::half`]) give on a CUDA
/// device (`cuda`) or the CPU: `half` applied to `precision`, and `Auto` resolved (f16
/// on CUDA, f32 on the CPU).
pub fn resolve_precision(precision: Precision, half: Option<bool>, cuda: bool) -> Precision {
    let asked = match half {
        Some(true) => Precision::F16,
        Some(false) if matches!(precision, Precision::F16 | Precision::Auto) => Precision::F32,
        _ => precision,
    };
    match asked {
        Precision::Auto if cuda => Precision::F16,
        Precision::Auto => Precision::F32,
        explicit => explicit,
    }
}

/// The tch kind a resolved precision computes in.
pub(crate) fn compute_kind(precision: Precision) -> Kind {
    match precision {
        Precision::Auto | Precision::F32 => Kind::Float,
        Precision::Bf16 => Kind::BFloat16,
        Precision::F16 => Kind::Half,
    }
}

/// The activation layout of every loaded network ([`Layout`]): channels-last. On a
/// GPU it is the layout tensor cores read without transposing; on the CPU oneDNN's
/// convolutions run faster on it too, 1.11-1.28× NCHW in f32 and 1.36-1.70× in bf16
/// (folded in both; docs/BENCHMARKS.md, "Batch norm folded at load and channels-last").
const LAYOUT: Layout = Layout::ChannelsLast;

/// Expands packed planes ([`PackedPlane`]) on the device the tensors are on: `masks`
/// (`n × planes × 2` i64, [`PackedPlane::mask_words`]) and `values` (`n × planes` f32)
/// become the network's input (`n × planes × 10 × 9`) in `kind`, each plane its value
/// on the points of its mask. `shifts` is `0..64` as i64 on the same device (a replica
/// keeps one). This is how a GPU evaluator gets its input: 20 bytes a plane cross the
/// bus instead of 360, and the expansion is a few element-wise kernels.
pub fn expand_packed(
    masks: &Tensor,
    values: &Tensor,
    shifts: &Tensor,
    kind: Kind,
) -> Result<Tensor, tch::TchError> {
    let size = values.size();
    let [n, planes] = size[..] else {
        return Err(tch::TchError::Shape(format!(
            "packed values must be n × planes, got {size:?}"
        )));
    };
    let plane = (BOARD_RANKS * BOARD_FILES) as i64;
    // Bit k of each 64-bit word, words side by side: bit 64 + k is the high word's k.
    let bits = masks
        .f_unsqueeze(-1)?
        .f_bitwise_right_shift(shifts)?
        .f_bitwise_and(1)?
        .f_reshape([n, planes, 128])?
        .f_narrow(2, 0, plane)?
        .f_to_kind(kind)?;
    bits.f_mul(&values.f_to_kind(kind)?.f_unsqueeze(-1)?)?
        .f_reshape([n, planes, BOARD_RANKS as i64, BOARD_FILES as i64])
}

/// The batch a GPU replica runs for `n` positions: `n` rounded up to a bucket (powers
/// of two to 32, then multiples of 32 to 512, then of 128), the rows beyond `n` all-zero
/// planes whose outputs are dropped. Self-play's batch size changes from call to call,
/// and every new input shape costs cuDNN a new plan (with autotuning on, a timed search
/// of algorithms) on the calling thread; buckets bound the shapes to a few dozen, the
/// first step to CUDA graphs, which need fixed shapes (issue #46, item 5).
pub fn padded_batch(n: usize) -> usize {
    match n {
        0..=32 => n.next_power_of_two(),
        33..=512 => n.div_ceil(32) * 32,
        _ => n.div_ceil(128) * 128,
    }
}

/// `t`'s elements, read where they lie. `t` must be a contiguous f32 tensor in host
/// memory (what [`Replica::forward`] returns); anything else is an error, not a misread.
fn host_f32(t: &Tensor) -> Result<&[f32], TrainError> {
    if t.kind() != Kind::Float || t.device() != Device::Cpu || !t.is_contiguous() {
        return Err(TrainError::BadBatch(format!(
            "outputs must be contiguous f32 on the host, got {:?} on {:?}",
            t.kind(),
            t.device()
        )));
    }
    let len = t.numel();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: a contiguous f32 CPU tensor holds `numel` f32s at `data_ptr`, and the
    // slice borrows `t`, which keeps the storage alive and (being `&`) unchanged.
    Ok(unsafe { std::slice::from_raw_parts(t.data_ptr() as *const f32, len) })
}

/// `t`'s elements as a mutable slice of `T` (checked: `t` is a contiguous host tensor of
/// `kind` holding `len` elements).
fn host_mut<T>(t: &mut Tensor, kind: Kind, len: usize) -> Result<&mut [T], TrainError> {
    if t.kind() != kind || t.device() != Device::Cpu || !t.is_contiguous() || t.numel() < len {
        return Err(TrainError::BadBatch(format!(
            "a staging buffer is not {len} contiguous {kind:?} on the host"
        )));
    }
    // SAFETY: checked above; `&mut Tensor` means nothing else reads it meanwhile.
    Ok(unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut T, len) })
}

/// Where a replica's time goes, summed over calls: `copy_in` is the input's way to the
/// network (packed planes into page-locked memory, the copy to the device and the
/// expansion there; on the CPU the expansion into the kept input), `forward` the
/// network, `copy_out` the logits' way back to host memory. Kept only when asked (the
/// device is synchronised after each stage, which a plain call does not do), for
/// `bench::evaluator_stages`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StageClock {
    pub copy_in: Duration,
    pub forward: Duration,
    pub copy_out: Duration,
}

/// Adds the time since `*since` to `stage` once the device has finished its queued work,
/// and restarts `*since`; nothing without a clock.
fn lap(
    clock: &mut Option<&mut StageClock>,
    device: Device,
    since: &mut Instant,
    stage: fn(&mut StageClock) -> &mut Duration,
) {
    if let Some(c) = clock {
        if let Device::Cuda(i) = device {
            tch::Cuda::synchronize(i as i64);
        }
        *stage(c) += since.elapsed();
        *since = Instant::now();
    }
}

/// The host buffers of a GPU replica, in page-locked memory so that the copies to and
/// from the device need no staging copy of the driver's: the packed input's masks and
/// values, and the f32 logits the device copies back, which the caller reads in place.
/// Grown to the next power of two when a batch does not fit.
#[derive(Debug)]
struct Pinned {
    capacity: usize,
    masks: Tensor,
    values: Tensor,
    policy: Tensor,
    value: Tensor,
}

impl Pinned {
    fn new(capacity: usize, planes: usize, device: Device) -> Result<Pinned, tch::TchError> {
        let host =
            |size: &[i64], kind| Tensor::f_empty(size, (kind, Device::Cpu))?.f_pin_memory(device);
        let (cap, planes) = (capacity as i64, planes as i64);
        Ok(Pinned {
            capacity,
            masks: host(&[cap, planes, 2], Kind::Int64)?,
            values: host(&[cap, planes], Kind::Float)?,
            policy: host(&[cap, POLICY_SIZE as i64], Kind::Float)?,
            value: host(&[cap, 3], Kind::Float)?,
        })
    }
}

/// One copy of the network, with what a forward pass needs.
#[derive(Debug)]
struct Replica {
    net: InferenceNet,
    device: Device,
    planes: usize,
    threads: usize,
    /// `0..64` on the device, for [`expand_packed`].
    shifts: Tensor,
    /// On the CPU: the f32 input, expanded straight from the packed planes (no zeroed
    /// staging copy). Grown to the next power of two as needed.
    input: Option<Tensor>,
    /// On a GPU: the page-locked host buffers.
    pinned: Option<Pinned>,
    /// On a GPU, when the binary has the CUDA shim: this copy's own stream, which its
    /// calls run on, so that several servers' calls overlap (issue #46, item 4).
    stream: Option<Stream>,
    /// On a GPU: the captured graph of each padded batch size ([`Captured`]).
    graphs: HashMap<usize, Captured>,
    /// Why calls run eagerly instead of replaying graphs (no shim, no stream,
    /// `XQZ_CUDA_GRAPHS=0`, or a capture that failed); `None` while graphs are used.
    eager: Option<String>,
}

/// A network call captured as a CUDA graph for one padded batch size: the device
/// tensors it reads (the packed input) and writes (the f32 logits). A call copies its
/// input into `masks` and `values`, replays, and copies the logits out.
#[derive(Debug)]
struct Captured {
    graph: Graph,
    masks: Tensor,
    values: Tensor,
    policy: Tensor,
    value: Tensor,
}

impl Replica {
    fn load(
        sidecar: &Sidecar,
        weights: &Path,
        saved: &HashMap<String, Tensor>,
        device: Device,
        kind: Kind,
        threads: usize,
    ) -> Result<Replica, TrainError> {
        let vs = VarStore::new(device);
        let net = {
            let _guard = crate::net::init_lock();
            Net::new(&vs.root(), &sidecar.net)?
        };
        checkpoint::load_into(&vs.variables(), saved, weights)?;
        let net = net.fold(kind, LAYOUT)?;
        let (stream, eager) = match device {
            Device::Cuda(index) => {
                // The weights were written on the default stream; the copy's own stream
                // does not wait for it.
                tch::Cuda::synchronize(index as i64);
                match Stream::new(index) {
                    Ok(stream) => {
                        let off = std::env::var("XQZ_CUDA_GRAPHS").is_ok_and(|v| v == "0");
                        (Some(stream), off.then(|| "XQZ_CUDA_GRAPHS=0".to_string()))
                    }
                    Err(e) => (None, Some(e.to_string())),
                }
            }
            _ => (None, Some("not on a GPU".into())),
        };
        Ok(Replica {
            net,
            stream,
            graphs: HashMap::new(),
            eager,
            device,
            planes: sidecar.net.encoder().planes(),
            threads,
            shifts: Tensor::f_arange(64, (Kind::Int64, device))?,
            input: None,
            pinned: None,
        })
    }

    /// Policy logits (`n × 2086`) and value logits (`n × 3`) of the `n` packed positions
    /// of `parts` (checked by the caller), as contiguous f32 tensors in host memory: on
    /// the CPU the network's own outputs, on a GPU views of the page-locked buffers,
    /// valid until the next call. `clock`, when given, receives the stages' times.
    fn forward(
        &mut self,
        parts: &[&[PackedPlane]],
        n: usize,
        mut clock: Option<&mut StageClock>,
    ) -> Result<(Tensor, Tensor), TrainError> {
        if self.threads > 0 && tch::get_num_threads() != self.threads as i32 {
            crate::set_num_threads(self.threads);
        }
        let _guard = tch::no_grad_guard();
        let _stream = self.stream.as_ref().map(Stream::enter).transpose()?;
        let mut since = Instant::now();
        let (p, v) = if self.device.is_cuda() {
            let rows = self.fill_pinned(parts, n)?;
            let graph = if self.graphed(rows) {
                self.graphs.get(&rows)
            } else {
                None
            };
            match graph {
                Some(slot) => {
                    let buffers = self.pinned.as_ref().expect("filled above");
                    let r = rows as i64;
                    // tch's copy into an existing tensor blocks until it is done; it
                    // waits on this copy's own stream, which is idle between calls.
                    let (mut masks, mut values) =
                        (slot.masks.shallow_clone(), slot.values.shallow_clone());
                    masks.f_copy_(&buffers.masks.f_narrow(0, 0, r)?)?;
                    values.f_copy_(&buffers.values.f_narrow(0, 0, r)?)?;
                    lap(&mut clock, self.device, &mut since, |c| &mut c.copy_in);
                    slot.graph.replay()?;
                    (slot.policy.shallow_clone(), slot.value.shallow_clone())
                }
                None => {
                    let x = self.upload(rows)?;
                    lap(&mut clock, self.device, &mut since, |c| &mut c.copy_in);
                    self.net.forward(&x)?
                }
            }
        } else {
            let x = self.expand_on_host(parts, n)?;
            lap(&mut clock, self.device, &mut since, |c| &mut c.copy_in);
            self.net.forward(&x)?
        };
        lap(&mut clock, self.device, &mut since, |c| &mut c.forward);
        let out = match &mut self.pinned {
            Some(buffers) if self.device.is_cuda() => {
                // Blocking copies of the real rows (not the padding): when they return,
                // the device is done with this call's inputs too, so the next call may
                // overwrite them.
                let n = n as i64;
                let mut policy = buffers.policy.f_narrow(0, 0, n)?;
                policy.f_copy_(&p.f_narrow(0, 0, n)?)?;
                let mut value = buffers.value.f_narrow(0, 0, n)?;
                value.f_copy_(&v.f_narrow(0, 0, n)?)?;
                (policy, value)
            }
            _ => (p.f_contiguous()?, v.f_contiguous()?),
        };
        lap(&mut clock, self.device, &mut since, |c| &mut c.copy_out);
        Ok(out)
    }

    /// The CPU input: the packed planes expanded into the kept f32 tensor.
    fn expand_on_host(&mut self, parts: &[&[PackedPlane]], n: usize) -> Result<Tensor, TrainError> {
        let per = self.planes * BOARD_RANKS * BOARD_FILES;
        if self.input.as_ref().is_none_or(|t| t.numel() < n * per) {
            let cap = n.next_power_of_two() as i64;
            let size = [
                cap,
                self.planes as i64,
                BOARD_RANKS as i64,
                BOARD_FILES as i64,
            ];
            self.input = Some(Tensor::f_empty(size, (Kind::Float, Device::Cpu))?);
        }
        let input = self.input.as_mut().expect("allocated above");
        let dst = host_mut::<f32>(input, Kind::Float, n * per)?;
        let mut at = 0;
        for part in parts {
            let len = part.len() / self.planes * per;
            expand_into(part, &mut dst[at..at + len])
                .map_err(|e| TrainError::BadBatch(e.to_string()))?;
            at += len;
        }
        Ok(input.f_narrow(0, 0, n as i64)?)
    }

    /// Writes the packed planes of `parts` (`n` positions) into the page-locked input
    /// buffers, zeroing the padding up to the bucket size, which it returns.
    fn fill_pinned(&mut self, parts: &[&[PackedPlane]], n: usize) -> Result<usize, TrainError> {
        let rows = padded_batch(n);
        if self.pinned.as_ref().is_none_or(|b| b.capacity < rows) {
            self.pinned = Some(Pinned::new(
                rows.next_power_of_two(),
                self.planes,
                self.device,
            )?);
        }
        let buffers = self.pinned.as_mut().expect("allocated above");
        let (used, all) = (n * self.planes, rows * self.planes);
        {
            let masks = host_mut::<i64>(&mut buffers.masks, Kind::Int64, all * 2)?;
            for (k, plane) in parts.iter().flat_map(|p| p.iter()).enumerate() {
                masks[2 * k..2 * k + 2].copy_from_slice(&plane.mask_words());
            }
            masks[used * 2..].fill(0);
        }
        {
            let values = host_mut::<f32>(&mut buffers.values, Kind::Float, all)?;
            for (k, plane) in parts.iter().flat_map(|p| p.iter()).enumerate() {
                values[k] = plane.value;
            }
            values[used..].fill(0.0);
        }
        Ok(rows)
    }

    /// The eager GPU input: the first `rows` of the page-locked buffers copied to the
    /// device without blocking and expanded there. The logits come back as f32 into the
    /// page-locked buffers ([`Replica::forward`]).
    ///
    /// *Why f32 logits rather than the network's f16?* The host thread, not the bus, is
    /// what limits a GPU evaluator (docs/BENCHMARKS.md, "GPU"): converting f16 on the
    /// host would read and write every logit once more, while the device converts them
    /// for free and the bus carries 8 kB a position, about a third of a microsecond.
    fn upload(&self, rows: usize) -> Result<Tensor, TrainError> {
        let buffers = self.pinned.as_ref().expect("filled by fill_pinned");
        let n = rows as i64;
        // The previous call's blocking copies back returned only once the device had
        // finished with its inputs, so nothing still reads the buffers just written.
        let masks =
            buffers
                .masks
                .f_narrow(0, 0, n)?
                .f_to_device_(self.device, Kind::Int64, true, false)?;
        let values = buffers.values.f_narrow(0, 0, n)?.f_to_device_(
            self.device,
            Kind::Float,
            true,
            false,
        )?;
        Ok(expand_packed(
            &masks,
            &values,
            &self.shifts,
            self.net.kind(),
        )?)
    }

    /// Whether batches padded to `rows` replay a captured graph, capturing it on first
    /// use (after two eager calls on the same shape, so that cuDNN's autotuning happens
    /// outside the capture); false when this copy runs eagerly. A capture that fails
    /// switches the copy to eager calls for good ([`TorchEvaluator::eager_reason`] says why).
    fn graphed(&mut self, rows: usize) -> bool {
        if self.eager.is_some() {
            return false;
        }
        if !self.graphs.contains_key(&rows) {
            match self.capture(rows) {
                Ok(slot) => {
                    self.graphs.insert(rows, slot);
                }
                Err(e) => {
                    self.graphs.clear();
                    self.eager = Some(e.to_string());
                    return false;
                }
            }
        }
        true
    }

    fn capture(&self, rows: usize) -> Result<Captured, TrainError> {
        let (r, planes) = (rows as i64, self.planes as i64);
        let mut masks = Tensor::f_zeros([r, planes, 2], (Kind::Int64, self.device))?;
        let mut values = Tensor::f_zeros([r, planes], (Kind::Float, self.device))?;
        let buffers = self.pinned.as_ref().expect("filled by fill_pinned");
        masks.f_copy_(&buffers.masks.f_narrow(0, 0, r)?)?;
        values.f_copy_(&buffers.values.f_narrow(0, 0, r)?)?;
        let kind = self.net.kind();
        for _ in 0..2 {
            let _ = self
                .net
                .forward(&expand_packed(&masks, &values, &self.shifts, kind)?)?;
        }
        let (graph, (policy, value)) = Graph::capture(|| {
            Ok(self
                .net
                .forward(&expand_packed(&masks, &values, &self.shifts, kind)?)?)
        })?;
        Ok(Captured {
            graph,
            masks,
            values,
            policy,
            value,
        })
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
    jobs: Option<SyncSender<(Vec<PackedPlane>, usize)>>,
    results: Receiver<PartResult>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    fn spawn(mut replica: Replica, index: usize) -> Result<Worker, TrainError> {
        let (jobs, job_rx) = sync_channel::<(Vec<PackedPlane>, usize)>(1);
        let (result_tx, results) = sync_channel::<PartResult>(1);
        let thread = std::thread::Builder::new()
            .name(format!("torch-eval-{index}"))
            .spawn(move || {
                while let Ok((inputs, n)) = job_rx.recv() {
                    // A panic inside libtorch becomes this part's error, so the caller
                    // hears why; the copy then stops.
                    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        let (p, v) = replica.forward(&[&inputs], n, None)?;
                        Ok::<_, TrainError>((host_f32(&p)?.to_vec(), host_f32(&v)?.to_vec()))
                    }));
                    let (r, panicked) = match r {
                        Ok(r) => (r.map_err(|e| e.to_string()), false),
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

/// The last batch's logits, which [`RawOutputs`] borrow: one copy's own output tensors
/// (read in place), or the joined parts of several copies.
#[derive(Debug)]
enum Held {
    Tensors(Tensor, Tensor),
    Joined(Vec<f32>, Vec<f32>),
}

impl Held {
    fn outputs(&self) -> Result<RawOutputs<'_>, TrainError> {
        Ok(match self {
            Held::Tensors(p, v) => RawOutputs {
                policy: host_f32(p)?,
                value: host_f32(v)?,
            },
            Held::Joined(p, v) => RawOutputs {
                policy: p,
                value: v,
            },
        })
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
    /// Packed inputs: `evaluate`'s encoding, or a split batch's joined parts.
    packed: Vec<PackedPlane>,
    held: Held,
    inference: Inference,
    /// What it was loaded from and how, for [`Evaluator::fork`].
    origin: (PathBuf, EvaluatorOptions, Precision),
}

impl TorchEvaluator {
    /// Loads a checkpoint: a sidecar `.json`, a checkpoint directory or a run directory
    /// (their newest checkpoint). Refuses a checkpoint of another encoding version or
    /// policy index with an error saying so. Its precision is f16 on a GPU and f32 on
    /// the CPU ([`EvaluatorOptions::half`] may say otherwise); [`load_in`](Self::load_in)
    /// chooses another.
    pub fn load(
        path: impl AsRef<Path>,
        options: EvaluatorOptions,
    ) -> Result<TorchEvaluator, TrainError> {
        TorchEvaluator::load_in(path, options, Precision::Auto)
    }

    /// [`load`](Self::load) in `precision` ([`Precision::Auto`]: f16 on a GPU, f32 on
    /// the CPU; see the module documentation for bf16). It is an argument rather than a
    /// field of [`EvaluatorOptions`] so that callers that spell out every option keep
    /// compiling; [`TorchBackend`] passes `xq_nn::LoadOptions::precision` here.
    pub fn load_in(
        path: impl AsRef<Path>,
        options: EvaluatorOptions,
        precision: Precision,
    ) -> Result<TorchEvaluator, TrainError> {
        let requested = precision;
        let sidecar_path = checkpoint::resolve(path.as_ref())?;
        let sidecar = Sidecar::read(&sidecar_path)?;
        let file = match options.weights {
            WeightsChoice::Ema => &sidecar.ema,
            WeightsChoice::Live => &sidecar.weights,
        };
        let weights_path = sidecar_path.parent().unwrap_or(Path::new(".")).join(file);
        let device = crate::config::tch_device(options.device);
        let precision = resolve_precision(precision, options.half, device.is_cuda());
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
        let kind = compute_kind(precision);
        if device.is_cuda() {
            // cuDNN times its algorithms once per input shape and keeps the fastest;
            // `padded_batch` keeps the shapes few.
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let load = || Replica::load(&sidecar, &weights_path, &saved, device, kind, threads);
        let replica = load()?;
        let workers = (1..copies)
            .map(|i| Worker::spawn(load()?, i))
            .collect::<Result<Vec<_>, _>>()?;
        let name = format!(
            "torch({}, {}, {:?}{})",
            weights_path.display(),
            device_name(device),
            options.weights,
            match precision {
                Precision::F32 | Precision::Auto => "",
                Precision::Bf16 => ", bf16",
                Precision::F16 => ", f16",
            }
        );
        Ok(TorchEvaluator {
            replica,
            workers,
            encoder: sidecar.net.encoder(),
            name,
            sidecar,
            packed: Vec::new(),
            held: Held::Joined(Vec::new(), Vec::new()),
            origin: (sidecar_path.clone(), options, requested),
            inference: Inference {
                backend: if device.is_cuda() {
                    InferenceBackend::TorchCuda
                } else {
                    InferenceBackend::Torch
                },
                precision,
            },
        })
    }

    /// The backend and precision this evaluator runs with (`torch-f32`, `torch-bf16`,
    /// `torch-cuda-f16`, …).
    pub fn inference(&self) -> Inference {
        self.inference
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

    /// Why the first copy's calls run eagerly rather than replaying captured CUDA graphs
    /// (on the CPU: "not on a GPU"); `None` while it replays them. A capture is tried at
    /// each padded batch size's first call, so this can change after a call.
    pub fn eager_reason(&self) -> Option<&str> {
        self.replica.eager.as_deref()
    }

    /// Raw network outputs for `n` packed positions (`n × planes` [`PackedPlane`]s):
    /// policy logits (`n × 2086`) and value logits (`n × 3`), copied out as f32 (for
    /// tests and benchmarks; self-play reads them in place through [`RawEvaluator`]).
    pub fn forward_raw(
        &mut self,
        inputs: &[PackedPlane],
        n: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        if n == 0 || inputs.len() != n * self.encoder.planes() {
            return Err(TrainError::BadBatch(format!(
                "{} packed planes for {n} positions of {} planes each",
                inputs.len(),
                self.encoder.planes()
            )));
        }
        self.run(&[inputs], n)?;
        let out = self.held.outputs()?;
        Ok((out.policy.to_vec(), out.value.to_vec()))
    }

    /// [`forward_raw`](Self::forward_raw) on the first copy alone, with its stages
    /// timed into `clock` (see [`StageClock`]); the outputs are borrowed, as self-play
    /// reads them.
    pub(crate) fn forward_timed(
        &mut self,
        inputs: &[PackedPlane],
        n: usize,
        clock: &mut StageClock,
    ) -> Result<RawOutputs<'_>, TrainError> {
        let (p, v) = self.replica.forward(&[inputs], n, Some(clock))?;
        self.held = Held::Tensors(p, v);
        self.held.outputs()
    }

    /// Evaluates the `n` positions of `parts` into `self.held`. With several copies of
    /// the network the positions are cut into consecutive parts of equal size (the last
    /// may be smaller), one a copy, and the outputs joined in order.
    fn run(&mut self, parts: &[&[PackedPlane]], n: usize) -> Result<(), TrainError> {
        if self.workers.is_empty() || n == 1 {
            let (p, v) = self.replica.forward(parts, n, None)?;
            self.held = Held::Tensors(p, v);
            return Ok(());
        }
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        parts.iter().for_each(|p| packed.extend_from_slice(p));
        let r = self.run_split(&packed, n);
        self.packed = packed;
        self.held = r?;
        Ok(())
    }

    fn run_split(&mut self, inputs: &[PackedPlane], n: usize) -> Result<Held, TrainError> {
        let per = n.div_ceil(self.workers().min(n));
        let len = self.encoder.planes();
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
        let mine = self
            .replica
            .forward(&[&inputs[..per * len]], per, None)
            .and_then(|(p, v)| Ok((host_f32(&p)?.to_vec(), host_f32(&v)?.to_vec())));
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
        Ok(Held::Joined(p, v))
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

impl RawEvaluator for TorchEvaluator {
    fn encoder(&self) -> EncoderConfig {
        self.encoder
    }

    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError> {
        let n = packed_positions(parts, self.encoder.planes())?;
        if n == 0 {
            return Ok(RawOutputs {
                policy: &[],
                value: &[],
            });
        }
        self.run(parts, n)
            .map_err(|e| EvalError::Backend(e.to_string()))?;
        self.held
            .outputs()
            .map_err(|e| EvalError::Backend(e.to_string()))
    }
}

impl Evaluator for TorchEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut packed = std::mem::take(&mut self.packed);
        let r = evaluate_packed(self, batch, &mut packed);
        self.packed = packed;
        r
    }

    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        Some(self)
    }

    /// The same checkpoint loaded again, with the same options: another copy of the
    /// weights with its own buffers.
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        let (path, options, precision) = &self.origin;
        Some(
            TorchEvaluator::load_in(path, *options, *precision)
                .map(|ev| Box::new(ev) as Box<dyn Evaluator>)
                .map_err(|e| EvalError::Backend(format!("cannot copy {}: {e}", self.name))),
        )
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
    /// The seam's options, with the EMA weights (`precision` `Auto`: the one the
    /// device implies).
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
        TorchEvaluator::load_in(path, options.into(), options.precision)
            .map(|ev| Box::new(ev) as Box<dyn Evaluator>)
            .map_err(xq_nn::backend::LoadError::new)
    }

    fn device_name(&self, options: &xq_nn::LoadOptions) -> String {
        device_name(crate::config::tch_device(options.device))
    }

    fn name(&self) -> &'static str {
        "torch"
    }

    fn inference(&self, options: &xq_nn::LoadOptions) -> Option<Inference> {
        let cuda = crate::config::tch_device(options.device).is_cuda();
        Some(Inference {
            backend: if cuda {
                InferenceBackend::TorchCuda
            } else {
                InferenceBackend::Torch
            },
            precision: resolve_precision(options.precision, None, cuda),
        })
    }
}

/// Registers [`TorchBackend`] as this process's network backend (idempotent).
pub fn register_backend() {
    xq_nn::backend::register(Box::new(TorchBackend));
}

#[cfg(test)]
mod tests {
    //! bf16 inference against f32 on random networks.
    //!
    //! **Tolerance.** bf16 keeps 8 bits of mantissa: every activation and weight is
    //! rounded by up to 2⁻⁹ ≈ 0.2% of itself (a product by up to 0.4%), and oneDNN
    //! accumulates in f32, so each layer adds an error of about 0.4% of its output's
    //! scale and the errors of independent layers add like a random walk: √(2·blocks+3)
    //! layers' worth, 1.2-1.6% for the two nets here. Logits may therefore differ by at
    //! most 3% of `1 + max |logit|` of the batch (twice that; measured 1.1-1.5%, printed
    //! by the test). A probability of a softmax moves by at most half the largest change
    //! of its logits (the slope `p(1-p)` is at most ¼, over a spread of twice the
    //! largest change), so the policy and WDL probabilities may differ by half the logit
    //! bound. Random networks have larger logits than trained ones (max |value logit|
    //! 7.7 here), which is why the bound scales with them. A wrong conversion (batch
    //! norm on another layer's statistics, weights left unloaded) moves logits by their
    //! own size and fails by an order of magnitude; bf16 not running at all fails the
    //! check that the outputs differ from f32's.

    use std::path::Path;

    use tch::{Device, Kind, Tensor};
    use xq_core::Position;
    use xq_nn::{EvalInput, Evaluator, Inference, NetworkBackend, Precision};

    use super::*;
    use crate::checkpoint::write_random;
    use crate::config::NetConfig;

    /// Positions of seeded random games, each with its history.
    fn histories(count: usize, seed: u64) -> Vec<Vec<Position>> {
        let mut rng = xq_core::hash::SplitMix64::new(seed);
        let mut out = Vec::new();
        while out.len() < count {
            let mut game = vec![Position::startpos()];
            for _ in 0..rng.next_u64() % 50 {
                let pos = game.last().unwrap();
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mut p = pos.clone();
                p.play(moves[(rng.next_u64() % moves.len() as u64) as usize])
                    .unwrap();
                game.push(p);
            }
            if game.last().unwrap().has_legal_move() {
                out.push(game);
            }
        }
        out
    }

    fn max_abs(x: &[f32]) -> f32 {
        x.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
    }

    fn load(dir: &Path, precision: Precision, workers: usize) -> TorchEvaluator {
        TorchEvaluator::load_in(
            dir,
            EvaluatorOptions {
                device: DeviceChoice::Cpu,
                threads: 1,
                workers,
                ..EvaluatorOptions::default()
            },
            precision,
        )
        .unwrap()
    }

    #[test]
    fn bf16_outputs_are_close_to_f32_ones_on_random_networks() {
        let root = std::env::temp_dir().join(format!("xq-train-bf16-{}", std::process::id()));
        let nets = [
            (
                "3x32 quickstart",
                NetConfig {
                    blocks: 3,
                    channels: 32,
                    ..NetConfig::small()
                },
            ),
            (
                "6x24 h2 pooled",
                NetConfig {
                    blocks: 6,
                    channels: 24,
                    history: 2,
                    global_pool: true,
                    value_channels: 3,
                    value_hidden: 20,
                },
            ),
        ];
        let games = histories(13, 3);
        let moves: Vec<Vec<_>> = games
            .iter()
            .map(|g| g.last().unwrap().legal_moves().to_vec())
            .collect();
        let batch: Vec<EvalInput<'_>> = games
            .iter()
            .zip(&moves)
            .map(|(g, m)| EvalInput {
                history: g,
                moves: m,
            })
            .collect();
        for (i, (label, cfg)) in nets.iter().enumerate() {
            let dir = root.join(format!("net{i}"));
            write_random(&dir, cfg, 40 + i as i64).unwrap();
            let mut f32 = load(&dir, Precision::F32, 1);
            // Two copies: the bf16 conversion happens in every copy of the network.
            let mut bf16 = load(&dir, Precision::Bf16, 2);
            assert_eq!(f32.inference(), Inference::TORCH_F32);
            assert_eq!(bf16.inference(), Inference::TORCH_BF16);
            assert!(bf16.name().contains("bf16"), "{}", bf16.name());
            let encoder = cfg.encoder();
            let mut inputs = vec![PackedPlane::ZERO; batch.len() * encoder.planes()];
            xq_nn::encode_packed_batch(&batch, &encoder, &mut inputs).unwrap();
            let (fp, fv) = f32.forward_raw(&inputs, batch.len()).unwrap();
            let (bp, bv) = bf16.forward_raw(&inputs, batch.len()).unwrap();
            assert!(
                fp != bp && fv != bv,
                "{label}: bf16 gave f32's logits bit for bit"
            );
            let (dp, dv) = (max_diff(&fp, &bp), max_diff(&fv, &bv));
            let (sp, sv) = (0.03 * (1.0 + max_abs(&fp)), 0.03 * (1.0 + max_abs(&fv)));
            eprintln!(
                "{label}: bf16 against f32: policy logits max |Δ| {dp:.2e} (bound {sp:.2e}), \
                 value logits {dv:.2e} (bound {sv:.2e})"
            );
            assert!(dp <= sp, "{label}: policy logits differ by {dp} > {sp}");
            assert!(dv <= sv, "{label}: value logits differ by {dv} > {sv}");
            // Through the Evaluator contract: probabilities within half the logit bound.
            let a = f32.evaluate(&batch).unwrap();
            let b = bf16.evaluate(&batch).unwrap();
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                let sum: f32 = y.policy.iter().sum();
                assert!(
                    (sum - 1.0).abs() < 1e-4,
                    "{label}, {k}: policy sums to {sum}"
                );
                let (pp, pv) = (max_diff(&x.policy, &y.policy), max_diff(&x.wdl, &y.wdl));
                assert!(pp <= sp / 2.0, "{label}, {k}: policy moved {pp}");
                assert!(pv <= sv / 2.0, "{label}, {k}: wdl moved {pv}");
            }
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn precision_resolves_on_the_device_and_half_keeps_its_old_meaning() {
        use Precision::{Auto, Bf16, F16, F32};
        for (precision, half, cuda, want) in [
            (Auto, None, false, F32),
            (Auto, None, true, F16),
            (Bf16, None, false, Bf16),
            (Bf16, None, true, Bf16),
            (F32, None, true, F32),
            (Auto, Some(true), false, F16),
            (Auto, Some(false), true, F32),
            (F16, Some(false), true, F32),
            (Bf16, Some(false), true, Bf16),
        ] {
            assert_eq!(
                resolve_precision(precision, half, cuda),
                want,
                "{precision} with half {half:?}, cuda {cuda}"
            );
        }
    }

    #[test]
    fn the_backend_names_the_precision_a_load_would_use() {
        let options = |precision| xq_nn::LoadOptions {
            device: xq_nn::DeviceChoice::Cpu,
            precision,
            ..xq_nn::LoadOptions::default()
        };
        assert_eq!(
            TorchBackend.inference(&options(Precision::Auto)),
            Some(Inference::TORCH_F32)
        );
        assert_eq!(
            TorchBackend.inference(&options(Precision::Bf16)),
            Some(Inference::TORCH_BF16)
        );
    }

    /// The GPU's input expansion, run on the CPU: bit for bit the host's.
    #[test]
    fn packed_planes_expand_on_a_device_as_on_the_host() {
        let encoder = xq_nn::EncoderConfig { history: 3 };
        let games = histories(9, 3);
        let mut packed = vec![PackedPlane::ZERO; games.len() * encoder.planes()];
        for (g, chunk) in games.iter().zip(packed.chunks_exact_mut(encoder.planes())) {
            xq_nn::encode_packed_into(g, &encoder, chunk).unwrap();
        }
        // A plane with bit 63 set (the low word's sign) and one with bit 89.
        packed[0] = PackedPlane {
            mask: (1 << 63) | (1 << 89) | 5,
            value: 0.5,
        };
        let mut want = vec![f32::NAN; packed.len() * 90];
        expand_into(&packed, &mut want).unwrap();
        let n = games.len() as i64;
        let planes = encoder.planes() as i64;
        let words: Vec<i64> = packed.iter().flat_map(|p| p.mask_words()).collect();
        let values: Vec<f32> = packed.iter().map(|p| p.value).collect();
        let masks = Tensor::from_slice(&words).view([n, planes, 2]);
        let values = Tensor::from_slice(&values).view([n, planes]);
        let shifts = Tensor::arange(64, (Kind::Int64, Device::Cpu));
        let x = expand_packed(&masks, &values, &shifts, Kind::Float).unwrap();
        assert_eq!(x.size(), [n, planes, 10, 9]);
        let got = Vec::<f32>::try_from(x.reshape([-1])).unwrap();
        assert_eq!(got, want);
        assert!(expand_packed(&masks, &values.view([-1]), &shifts, Kind::Float).is_err());
    }

    /// Self-play's server hands the network several requests' slices as they are: the
    /// outputs are those of the joined batch, on one copy and on two.
    #[test]
    fn packed_parts_evaluate_as_one_batch() {
        let root = std::env::temp_dir().join(format!("xq-packed-parts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let cfg = NetConfig {
            history: 2,
            ..NetConfig::small()
        };
        write_random(&root, &cfg, 9).unwrap();
        let encoder = cfg.encoder();
        let games = histories(7, 2);
        let mut packed = vec![PackedPlane::ZERO; games.len() * encoder.planes()];
        for (g, chunk) in games.iter().zip(packed.chunks_exact_mut(encoder.planes())) {
            xq_nn::encode_packed_into(g, &encoder, chunk).unwrap();
        }
        for copies in [1, 2] {
            let mut ev = load(&root, Precision::F32, copies);
            let (p, v) = ev.forward_raw(&packed, games.len()).unwrap();
            let cut = 3 * encoder.planes();
            let parts: [&[PackedPlane]; 3] = [&packed[..cut], &[], &packed[cut..]];
            let out = ev.forward_packed(&parts).unwrap();
            assert_eq!(out.len(), games.len());
            assert_eq!((out.policy, out.value), (&p[..], &v[..]), "{copies} copies");
            let bad: [&[PackedPlane]; 1] = [&packed[1..]];
            assert!(matches!(
                ev.forward_packed(&bad),
                Err(EvalError::BadInput(_))
            ));
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn padded_batches_cover_the_batch_with_few_shapes() {
        for n in 1..=2048 {
            let p = padded_batch(n);
            assert!(p >= n && p < 2 * n.max(16) + 128, "{n} → {p}");
            assert_eq!(padded_batch(p), p, "{n} → {p} is not a bucket");
        }
        let shapes: std::collections::BTreeSet<usize> = (1..=1024).map(padded_batch).collect();
        assert_eq!(shapes.len(), 6 + 15 + 4, "{shapes:?}");
        assert_eq!(
            [padded_batch(200), padded_batch(256), padded_batch(257)],
            [224, 256, 288]
        );
    }
}
