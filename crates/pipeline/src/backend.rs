//! The process's network backend, chosen once: the native CPU backend or libtorch, and
//! the precision, as `XQZ_BACKEND` and `XQZ_PRECISION` say ([`xq_nn::BackendChoice`],
//! [`xq_nn::Precision`]). This crate links both, so it is where the choice is made for
//! the processes that train (`xqz-torch`) and for self-play; every network is then
//! loaded through [`xq_nn::NetworkBackend::load`] with [`xq_nn::LoadOptions`].
//!
//! **`auto` measures.** With `XQZ_BACKEND=auto` (the default) and a CUDA device,
//! networks run on libtorch (f16 unless `XQZ_PRECISION` says otherwise). Without one,
//! which backend is fastest depends on the CPU (matrixmultiply's AVX2 kernels against
//! MKL's AVX-512 ones; bf16 in hardware or not), on the network and on the batch size
//! and threads (docs/BENCHMARKS.md), so no rule of thumb picks it: the first load of a
//! network of each shape, with each batch size and thread count, loads it as every
//! candidate — native f32, libtorch f32 and, where the CPU has AVX512-BF16 or AMX-BF16
//! ([`xq_nn::cpu_has_bf16`]) and `XQZ_PRECISION` allows it, libtorch bf16 — times a
//! few calls of each on fixed batches built from the start position, full, half and
//! quarter full (self-play's batches run short), after warm-up calls ([`measure`]),
//! and keeps the fastest ([`xq_nn::choose_fastest`], a near tie
//! keeping native, then f32). The decision is cached for the process, so later loads
//! (each newly accepted network) cost nothing more; [`ProcessBackend::decisions`] lists
//! the decisions and their measurements, and [`xq_nn::NetworkBackend::inference`] names
//! what a load used (the `backend` of `selfplay` events).

use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use xq_core::{Move, Position};
use xq_nn::backend::LoadError;
use xq_nn::checkpoint::{NetConfig, Sidecar};
use xq_nn::{
    BACKEND_ENV, BackendChoice, BadBackendChoice, BadPrecision, CHOICE_MARGIN, EvalInput,
    Evaluator, Inference, InferenceBackend, LoadOptions, Measured, NetworkBackend, PRECISION_ENV,
    Precision,
};

/// Why the process's backend settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// `XQZ_BACKEND` names no backend.
    #[error(transparent)]
    Backend(#[from] BadBackendChoice),
    /// `XQZ_PRECISION` names no precision.
    #[error(transparent)]
    Precision(#[from] BadPrecision),
    /// A precision the native backend does not have (it computes in f32 only).
    #[error(
        "{BACKEND_ENV}=native computes in f32 only, not {0}: set {PRECISION_ENV}=f32 or auto, \
         or {BACKEND_ENV}=torch or auto"
    )]
    NativePrecision(Precision),
    /// The automatic choice had no candidate to measure.
    #[error("{BACKEND_ENV}=auto: no backend to measure")]
    NoCandidate,
}

/// The backend and precision `XQZ_BACKEND` and `XQZ_PRECISION` (their values, `None`
/// when unset) choose, checked together.
///
/// # Errors
/// A value that names nothing, or native with a precision other than f32.
pub fn settings(
    backend: Option<&str>,
    precision: Option<&str>,
) -> Result<(BackendChoice, Precision), BackendError> {
    let choice: BackendChoice = backend.unwrap_or_default().parse()?;
    let precision: Precision = precision.unwrap_or_default().parse()?;
    check_native(choice, precision)?;
    Ok((choice, precision))
}

/// Native with a precision other than f32 is an error.
fn check_native(choice: BackendChoice, precision: Precision) -> Result<(), BackendError> {
    match (choice, precision) {
        (BackendChoice::Native, Precision::Bf16 | Precision::F16) => {
            Err(BackendError::NativePrecision(precision))
        }
        _ => Ok(()),
    }
}

/// What the automatic choice measures on the CPU, in order of preference (native
/// first: no libtorch threads, and what `xqz` runs; bf16 last: the only one that
/// changes the numerics): native and libtorch f32 for `Auto` and `F32`, plus libtorch
/// bf16 for `Auto` where the CPU has bf16 in hardware (`cpu_bf16`); an explicit bf16 or
/// f16 has libtorch as its one candidate.
pub fn candidates(precision: Precision, cpu_bf16: bool) -> Vec<Inference> {
    let torch = |precision| Inference {
        backend: InferenceBackend::Torch,
        precision,
    };
    match precision {
        Precision::Auto if cpu_bf16 => vec![
            Inference::NATIVE_F32,
            Inference::TORCH_F32,
            Inference::TORCH_BF16,
        ],
        Precision::Auto | Precision::F32 => vec![Inference::NATIVE_F32, Inference::TORCH_F32],
        explicit => vec![torch(explicit)],
    }
}

/// Loads `path` as `inference` says (native, or libtorch in its precision), with the
/// rest of `options` as given: how the automatic choice loads each candidate, and what
/// `xqz bench` uses to load a backend by name.
///
/// # Errors
/// The backend's error; native asked for another precision than f32.
pub fn load_as(
    path: &Path,
    options: &LoadOptions,
    inference: Inference,
) -> Result<Box<dyn Evaluator>, LoadError> {
    match inference.backend {
        InferenceBackend::Native => {
            check_native(BackendChoice::Native, inference.precision).map_err(LoadError::new)?;
            xq_native::NativeBackend.load(path, options)
        }
        InferenceBackend::Torch | InferenceBackend::TorchCuda => {
            let options = LoadOptions {
                precision: inference.precision,
                ..*options
            };
            xq_train::TorchBackend.load(path, &options)
        }
    }
}

/// The batch the automatic choice measures at when the caller does not say
/// ([`LoadOptions::batch`] 0): the network players' default batch of leaves
/// (`xq_eval`'s `NetSettings::batch`).
pub const DEFAULT_MEASURE_BATCH: usize = 16;

/// How long the timed calls of the automatic choice run, all candidates together,
/// before it stops (it times at least [`MIN_ROUNDS`] calls of each, at most
/// [`MAX_ROUNDS`]): a few hundred milliseconds, once per network shape and process.
pub const MEASURE_BUDGET: Duration = Duration::from_millis(300);

/// The fewest timed calls of each candidate (the median of three resists one
/// descheduled call).
pub const MIN_ROUNDS: usize = 3;

/// The most timed calls of each candidate (small networks reach it within the budget).
pub const MAX_ROUNDS: usize = 9;

/// One decision of the automatic choice: for which network and load, what was measured
/// and what was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub net: NetConfig,
    /// The batch measured at ([`LoadOptions::batch`], or [`DEFAULT_MEASURE_BATCH`]).
    pub batch: usize,
    pub workers: usize,
    pub threads: usize,
    /// Positions/s of each candidate through `Evaluator::evaluate`, the median of its
    /// timed calls (0 for one that could not be loaded or failed).
    pub measured: Vec<Measured>,
    pub chosen: Inference,
}

impl std::fmt::Display for Decision {
    /// `torch-bf16 for 3x32 at batches 24/12/6 (2 copies of 1 thread): native-f32 2337,
    /// torch-f32 3170, torch-bf16 3809 positions/s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rates: Vec<String> = self
            .measured
            .iter()
            .map(|m| format!("{} {:.0}", m.inference, m.positions_per_second))
            .collect();
        let threads = match self.threads {
            0 => "the default threads".to_owned(),
            1 => "1 thread".to_owned(),
            n => format!("{n} threads"),
        };
        write!(
            f,
            "{} for {}x{} at batches {} ({} copies of {threads}): {} positions/s",
            self.chosen,
            self.net.blocks,
            self.net.channels,
            measured_sizes(self.batch)
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("/"),
            self.workers.max(1),
            rates.join(", ")
        )
    }
}

/// What the automatic choice keys its decisions by: the network's shape and how it is
/// loaded, and what was measured.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    net: NetConfig,
    batch: usize,
    workers: usize,
    threads: usize,
    candidates: Vec<Inference>,
}

/// The process's network backend: `XQZ_BACKEND` and `XQZ_PRECISION`, checked, and for
/// `auto` on the CPU the measured decisions (see the module documentation).
#[derive(Debug)]
pub struct ProcessBackend {
    choice: BackendChoice,
    precision: Precision,
    /// For `auto`: whether libtorch sees a CUDA device (asked once, at start).
    cuda: bool,
    /// Whether the CPU has bf16 in hardware (read once, at start).
    cpu_bf16: bool,
    decisions: Mutex<Vec<(Key, Decision)>>,
    /// The inference of the latest load with each set of options.
    latest: Mutex<Vec<(LoadOptions, Inference)>>,
    /// Held while measuring, so that two loads at once neither measure the same shape
    /// twice nor time each other.
    measuring: Mutex<()>,
}

impl ProcessBackend {
    /// A backend for `choice` and `precision` on a machine with (`cuda`) or without a
    /// CUDA device and with (`cpu_bf16`) or without bf16 in the CPU.
    ///
    /// # Errors
    /// Native with a precision other than f32.
    pub fn new(
        choice: BackendChoice,
        precision: Precision,
        cuda: bool,
        cpu_bf16: bool,
    ) -> Result<ProcessBackend, BackendError> {
        check_native(choice, precision)?;
        Ok(ProcessBackend {
            choice,
            precision,
            cuda,
            cpu_bf16,
            decisions: Mutex::new(Vec::new()),
            latest: Mutex::new(Vec::new()),
            measuring: Mutex::new(()),
        })
    }

    /// The backend this process's environment asks for (`cuda` asked of libtorch only
    /// for `auto`).
    ///
    /// # Errors
    /// As [`settings`].
    pub fn from_env() -> Result<ProcessBackend, BackendError> {
        let var = |name| std::env::var(name).ok();
        let (choice, precision) =
            settings(var(BACKEND_ENV).as_deref(), var(PRECISION_ENV).as_deref())?;
        let cuda = choice == BackendChoice::Auto && xq_train::cuda_available();
        ProcessBackend::new(choice, precision, cuda, xq_nn::cpu_has_bf16())
    }

    /// The decisions of the automatic choice so far, oldest first.
    pub fn decisions(&self) -> Vec<Decision> {
        lock(&self.decisions)
            .iter()
            .map(|(_, d)| d.clone())
            .collect()
    }

    /// The precision a load with `options` asks for: the caller's, else the process's.
    fn precision(&self, options: &LoadOptions) -> Precision {
        options.precision.or(self.precision)
    }

    /// Whether this backend chooses by measurement for `options`.
    fn measures(&self, options: &LoadOptions) -> bool {
        self.choice == BackendChoice::Auto && !self.uses_cuda(options)
    }

    /// Whether networks loaded with `options` go to libtorch on a CUDA device.
    fn uses_cuda(&self, options: &LoadOptions) -> bool {
        self.choice != BackendChoice::Native
            && match options.device {
                xq_nn::DeviceChoice::Auto => self.cuda,
                xq_nn::DeviceChoice::Cpu => false,
                xq_nn::DeviceChoice::Cuda(_) => true,
            }
    }

    /// The automatic choice's load: the cached decision for this network and load,
    /// or a measurement of every candidate, keeping the fastest one loaded.
    fn load_measured(
        &self,
        path: &Path,
        options: &LoadOptions,
        candidates: Vec<Inference>,
    ) -> Result<(Box<dyn Evaluator>, Inference), LoadError> {
        if let [only] = candidates[..] {
            return Ok((load_as(path, options, only)?, only));
        }
        let sidecar_path = xq_nn::checkpoint::resolve(path).map_err(LoadError::new)?;
        let net = Sidecar::read(&sidecar_path).map_err(LoadError::new)?.net;
        let key = Key {
            net,
            batch: measure_batch(options),
            workers: options.workers,
            threads: options.threads,
            candidates,
        };
        let _measuring = lock(&self.measuring);
        if let Some(chosen) = self.decided(&key) {
            return Ok((load_as(path, options, chosen)?, chosen));
        }
        let Measurement {
            chosen,
            evaluator,
            measured,
        } = measure(path, options, &key.candidates, key.batch)?;
        lock(&self.decisions).push((
            key.clone(),
            Decision {
                net: key.net,
                batch: key.batch,
                workers: key.workers,
                threads: key.threads,
                measured,
                chosen,
            },
        ));
        Ok((evaluator, chosen))
    }

    fn decided(&self, key: &Key) -> Option<Inference> {
        lock(&self.decisions)
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, d)| d.chosen)
    }
}

/// A lock that a panic elsewhere does not poison for good (the data are plain lists).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The batch the automatic choice measures at for `options`.
fn measure_batch(options: &LoadOptions) -> usize {
    match options.batch {
        0 => DEFAULT_MEASURE_BATCH,
        n => n,
    }
}

/// `batch` positions from the start: the start position and the positions after each
/// of its legal first moves, in turn (a fixed, legal, varied batch), with their legal
/// moves.
fn start_batch(batch: usize) -> Vec<(Vec<Position>, Vec<Move>)> {
    let start = Position::startpos();
    let first = start.legal_moves();
    (0..batch)
        .map(|i| {
            let mut history = vec![start.clone()];
            if i > 0 && !first.is_empty() {
                let mut next = start.clone();
                next.play_unchecked(first[(i - 1) % first.len()]);
                history.push(next);
            }
            let moves = history
                .last()
                .map_or_else(Vec::new, |p| p.legal_moves().to_vec());
            (history, moves)
        })
        .collect()
}

/// The batch sizes the automatic choice times for a caller's `batch`: the full batch,
/// a half and a quarter (each once; `[1]` for 1). Self-play's calls are not all full: a
/// sync-mode generation ends with its last games alone, and the README job's calls held
/// 11.5-12.8 positions on average at a batch of 24, where a backend with a high fixed
/// cost a call loses (docs/BENCHMARKS.md, "Batch norm folded at load and
/// channels-last").
fn measured_sizes(batch: usize) -> Vec<usize> {
    let mut sizes = vec![batch, batch.div_ceil(2), batch.div_ceil(4)];
    sizes.dedup();
    sizes
}

/// A loaded candidate and how long its timed calls took, for each of the
/// [`measured_sizes`].
type Candidate = (Inference, Box<dyn Evaluator>, Vec<Vec<f64>>);

/// What [`measure`] found: the chosen candidate, loaded, and every candidate's speed.
pub struct Measurement {
    pub chosen: Inference,
    pub evaluator: Box<dyn Evaluator>,
    pub measured: Vec<Measured>,
}

impl std::fmt::Debug for Measurement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measurement")
            .field("chosen", &self.chosen)
            .field("measured", &self.measured)
            .finish_non_exhaustive()
    }
}

/// Loads `path` as each of `candidates`, warms each up with one call of each of the
/// [`measured_sizes`], then times calls of all of them in turn (so that a change of the
/// machine's load falls on all alike), one of each size a round, on a [`start_batch`] of
/// `batch` and its first half and quarter, for at least [`MIN_ROUNDS`] and at most
/// [`MAX_ROUNDS`] rounds, stopping once [`MEASURE_BUDGET`] is spent. A candidate's
/// speed is the positions of one call of each size over the sum of their median times.
/// Returns the chosen candidate loaded, and what each measured (0 for one that failed
/// to load or run).
///
/// # Errors
/// When no candidate could be loaded and run: the first one's error.
pub fn measure(
    path: &Path,
    options: &LoadOptions,
    candidates: &[Inference],
    batch: usize,
) -> Result<Measurement, LoadError> {
    let positions = start_batch(batch.max(1));
    let inputs: Vec<EvalInput<'_>> = positions
        .iter()
        .map(|(history, moves)| EvalInput { history, moves })
        .collect();
    let sizes = measured_sizes(inputs.len());
    let mut first_error = None;
    let mut loaded: Vec<Candidate> = Vec::new();
    for &inference in candidates {
        let warm = load_as(path, options, inference).and_then(|mut ev| {
            for &n in &sizes {
                ev.evaluate(&inputs[..n]).map_err(LoadError::new)?;
            }
            Ok((inference, ev, vec![Vec::new(); sizes.len()]))
        });
        match warm {
            Ok(c) => loaded.push(c),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let start = Instant::now();
    for round in 0..MAX_ROUNDS {
        if round >= MIN_ROUNDS && start.elapsed() >= MEASURE_BUDGET {
            break;
        }
        loaded.retain_mut(|(_, ev, times)| {
            sizes.iter().zip(times.iter_mut()).all(|(&n, times)| {
                let t = Instant::now();
                let ok = ev.evaluate(&inputs[..n]).is_ok();
                times.push(t.elapsed().as_secs_f64());
                ok
            })
        });
    }
    // Positions over time with one call of each size: the rate of a stream of calls
    // that is a third full, a third half full and a third a quarter full.
    let positions: usize = sizes.iter().sum();
    let measured: Vec<Measured> = candidates
        .iter()
        .map(|&inference| Measured {
            inference,
            positions_per_second: loaded
                .iter()
                .find(|(i, _, _)| *i == inference)
                .map_or(0.0, |(_, _, times)| {
                    positions as f64 / times.iter().map(|t| median(t)).sum::<f64>()
                }),
        })
        .collect();
    let chosen = xq_nn::choose_fastest(&measured, CHOICE_MARGIN);
    match chosen.and_then(|c| loaded.into_iter().find(|(i, _, _)| *i == c)) {
        Some((chosen, evaluator, _)) => Ok(Measurement {
            chosen,
            evaluator,
            measured,
        }),
        None => Err(first_error.unwrap_or_else(|| LoadError::new(BackendError::NoCandidate))),
    }
}

/// The middle value (the mean of the two middle ones for an even count); NaN for none.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl NetworkBackend for ProcessBackend {
    fn load(&self, path: &Path, options: &LoadOptions) -> Result<Box<dyn Evaluator>, LoadError> {
        let precision = self.precision(options);
        let (evaluator, inference) = match self.choice {
            BackendChoice::Native => {
                check_native(BackendChoice::Native, precision).map_err(LoadError::new)?;
                (
                    xq_native::NativeBackend.load(path, options)?,
                    Inference::NATIVE_F32,
                )
            }
            _ if self.measures(options) => {
                self.load_measured(path, options, candidates(precision, self.cpu_bf16))?
            }
            _ => {
                let options = LoadOptions {
                    precision,
                    ..*options
                };
                let evaluator = xq_train::TorchBackend.load(path, &options)?;
                let inference = xq_train::TorchBackend.inference(&options);
                (evaluator, inference.unwrap_or(Inference::TORCH_F32))
            }
        };
        let mut latest = lock(&self.latest);
        latest.retain(|(o, _)| o != options);
        latest.push((*options, inference));
        Ok(evaluator)
    }

    fn device_name(&self, options: &LoadOptions) -> String {
        if self.uses_cuda(options) {
            xq_train::TorchBackend.device_name(options)
        } else {
            "cpu".to_owned()
        }
    }

    fn name(&self) -> &'static str {
        match self.choice {
            BackendChoice::Auto => "auto",
            BackendChoice::Native => "native",
            BackendChoice::Torch => "torch",
        }
    }

    fn inference(&self, options: &LoadOptions) -> Option<Inference> {
        if let Some((_, i)) = lock(&self.latest).iter().find(|(o, _)| o == options) {
            return Some(*i);
        }
        let precision = self.precision(options);
        match self.choice {
            BackendChoice::Native => Some(Inference::NATIVE_F32),
            _ if self.measures(options) => match candidates(precision, self.cpu_bf16)[..] {
                [only] => Some(only),
                _ => None,
            },
            _ => xq_train::TorchBackend.inference(&LoadOptions {
                precision,
                ..*options
            }),
        }
    }
}

/// [`ProcessBackend`] registered as the process's backend: the registry owns a box,
/// and this one leads back to the process's one instance.
struct Registered(&'static ProcessBackend);

impl NetworkBackend for Registered {
    fn load(&self, path: &Path, options: &LoadOptions) -> Result<Box<dyn Evaluator>, LoadError> {
        self.0.load(path, options)
    }
    fn device_name(&self, options: &LoadOptions) -> String {
        self.0.device_name(options)
    }
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn inference(&self, options: &LoadOptions) -> Option<Inference> {
        self.0.inference(options)
    }
}

static PROCESS: OnceLock<ProcessBackend> = OnceLock::new();

/// The [`ProcessBackend`] [`network_backend`] registered, if it did (a process that
/// registered its own, a test, has none): for `xqz bench` to show the decisions.
pub fn process_backend() -> Option<&'static ProcessBackend> {
    PROCESS.get()
}

/// The registered backend, registering the one `XQZ_BACKEND` and `XQZ_PRECISION`
/// choose when the process has none yet (a process that registered its own, a test,
/// keeps it). Training uses libtorch whatever they say.
///
/// # Errors
/// A value of either that names nothing, or native with a precision other than f32.
pub fn network_backend() -> Result<&'static dyn NetworkBackend, BackendError> {
    if let Ok(backend) = xq_nn::backend::backend() {
        return Ok(backend);
    }
    let process = match PROCESS.get() {
        Some(p) => p,
        None => {
            let made = ProcessBackend::from_env()?;
            PROCESS.get_or_init(|| made)
        }
    };
    Ok(xq_nn::backend::get_or_register(|| {
        Box::new(Registered(process))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_check_both_variables_and_their_combination() {
        assert_eq!(
            settings(None, None),
            Ok((BackendChoice::Auto, Precision::Auto))
        );
        assert_eq!(
            settings(Some("torch"), Some("bf16")),
            Ok((BackendChoice::Torch, Precision::Bf16))
        );
        assert_eq!(
            settings(Some("native"), Some("f32")),
            Ok((BackendChoice::Native, Precision::F32))
        );
        let err = settings(Some("auto"), Some("bf61")).unwrap_err();
        assert_eq!(err, BackendError::Precision(BadPrecision("bf61".into())));
        assert!(err.to_string().contains("XQZ_PRECISION=bf61"), "{err}");
        let err = settings(Some("tourch"), None).unwrap_err();
        assert!(err.to_string().contains("XQZ_BACKEND=tourch"), "{err}");
        let err = settings(Some("native"), Some("bf16")).unwrap_err();
        assert_eq!(err, BackendError::NativePrecision(Precision::Bf16));
        assert!(err.to_string().contains("f32 only, not bf16"), "{err}");
        assert!(ProcessBackend::new(BackendChoice::Native, Precision::F16, false, true).is_err());
    }

    #[test]
    fn candidates_follow_the_precision_and_the_cpu() {
        let (n, t, b) = (
            Inference::NATIVE_F32,
            Inference::TORCH_F32,
            Inference::TORCH_BF16,
        );
        assert_eq!(candidates(Precision::Auto, true), [n, t, b]);
        // Without bf16 in hardware, oneDNN emulates it: not measured.
        assert_eq!(candidates(Precision::Auto, false), [n, t]);
        assert_eq!(candidates(Precision::F32, true), [n, t]);
        assert_eq!(candidates(Precision::Bf16, false), [b]);
        assert_eq!(
            candidates(Precision::F16, true),
            [Inference {
                backend: InferenceBackend::Torch,
                precision: Precision::F16
            }]
        );
    }

    #[test]
    fn the_measurement_batch_is_fixed_legal_and_of_the_callers_size() {
        let batch = start_batch(50);
        assert_eq!(batch.len(), 50);
        assert_eq!(batch[0].0, [Position::startpos()]);
        assert_eq!(batch[1].0.len(), 2);
        // 44 first moves, then round again.
        assert_eq!(batch[1].0, batch[45].0);
        assert_ne!(batch[1].0, batch[2].0);
        assert!(
            batch
                .iter()
                .all(|(h, m)| m[..] == h.last().unwrap().legal_moves()[..])
        );
        assert_eq!(batch, start_batch(50));
        let opts = |batch| LoadOptions {
            batch,
            ..LoadOptions::default()
        };
        assert_eq!(measure_batch(&opts(0)), DEFAULT_MEASURE_BATCH);
        assert_eq!(measure_batch(&opts(24)), 24);
    }

    #[test]
    fn the_choice_times_full_half_and_quarter_batches() {
        assert_eq!(measured_sizes(24), [24, 12, 6]);
        assert_eq!(measured_sizes(5), [5, 3, 2]);
        assert_eq!(measured_sizes(2), [2, 1]);
        assert_eq!(measured_sizes(1), [1]);
    }

    #[test]
    fn explicit_choices_name_their_inference_without_loading() {
        let cpu = LoadOptions {
            device: xq_nn::DeviceChoice::Cpu,
            ..LoadOptions::default()
        };
        let of = |choice, precision, cpu_bf16| {
            ProcessBackend::new(choice, precision, false, cpu_bf16)
                .unwrap()
                .inference(&cpu)
        };
        use BackendChoice::{Auto, Native, Torch};
        assert_eq!(
            of(Native, Precision::Auto, true),
            Some(Inference::NATIVE_F32)
        );
        assert_eq!(of(Torch, Precision::Auto, true), Some(Inference::TORCH_F32));
        assert_eq!(
            of(Torch, Precision::Bf16, false),
            Some(Inference::TORCH_BF16)
        );
        assert_eq!(
            of(Auto, Precision::Bf16, false),
            Some(Inference::TORCH_BF16)
        );
        // Auto decides when it loads: nothing to name before.
        assert_eq!(of(Auto, Precision::Auto, true), None);
        // The caller's precision wins over the process's.
        let backend = ProcessBackend::new(Torch, Precision::Bf16, false, true).unwrap();
        let f32 = LoadOptions {
            precision: Precision::F32,
            ..cpu
        };
        assert_eq!(backend.inference(&f32), Some(Inference::TORCH_F32));
        // A native process refuses a caller's bf16 when it loads.
        let native = ProcessBackend::new(Native, Precision::Auto, false, true).unwrap();
        let bf16 = LoadOptions {
            precision: Precision::Bf16,
            ..cpu
        };
        let err = native.load(Path::new("/nonexistent"), &bf16).err().unwrap();
        assert!(err.to_string().contains("f32 only, not bf16"), "{err}");
    }

    #[test]
    fn auto_measures_each_candidate_once_per_network_and_load_and_names_its_choice() {
        let dir = std::env::temp_dir().join(format!("xq-pipeline-auto-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let net = NetConfig {
            blocks: 1,
            channels: 8,
            ..NetConfig::small()
        };
        let options = xq_train::EvaluatorOptions {
            device: xq_nn::DeviceChoice::Cpu,
            threads: 1,
            ..xq_train::EvaluatorOptions::default()
        };
        drop(xq_train::bench::scratch_evaluator(&dir, &net, options).unwrap());
        let backend =
            ProcessBackend::new(BackendChoice::Auto, Precision::Auto, false, true).unwrap();
        let load = LoadOptions {
            device: xq_nn::DeviceChoice::Cpu,
            threads: 1,
            batch: 4,
            ..LoadOptions::default()
        };
        assert_eq!(backend.inference(&load), None);
        let mut ev = backend.load(&dir, &load).unwrap();
        let decisions = backend.decisions();
        assert_eq!(decisions.len(), 1);
        let d = &decisions[0];
        assert_eq!((d.batch, d.threads, &d.net), (4, 1, &net));
        let measured: Vec<Inference> = d.measured.iter().map(|m| m.inference).collect();
        assert_eq!(measured, candidates(Precision::Auto, true));
        assert!(
            d.measured.iter().all(|m| m.positions_per_second > 0.0),
            "{d}"
        );
        assert_eq!(
            xq_nn::choose_fastest(&d.measured, CHOICE_MARGIN),
            Some(d.chosen)
        );
        assert_eq!(backend.inference(&load), Some(d.chosen));
        let batch = start_batch(3);
        let inputs: Vec<EvalInput<'_>> = batch
            .iter()
            .map(|(history, moves)| EvalInput { history, moves })
            .collect();
        assert_eq!(ev.evaluate(&inputs).unwrap().len(), 3);
        // The same network and load again: the cached decision, no new measurement.
        backend.load(&dir, &load).unwrap();
        assert_eq!(backend.decisions().len(), 1);
        // Another batch size is measured anew.
        let other = LoadOptions { batch: 8, ..load };
        backend.load(&dir, &other).unwrap();
        assert_eq!(backend.decisions().len(), 2);
        assert_eq!(backend.decisions()[1].batch, 8);
        // A network that does not exist is an error, not a panic.
        assert!(backend.load(&dir.join("missing"), &load).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
