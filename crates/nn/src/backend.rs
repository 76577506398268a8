//! The network backend seam: how crates that never link a tensor library get network
//! evaluators.
//!
//! A process that runs networks registers one [`NetworkBackend`] at start-up (`xqz`
//! the native one, `xqz-torch` the one [`BackendChoice`] picks, tests their own); players,
//! engines and self-play ask [`backend`] for it and load through it with
//! [`LoadOptions`], and get a clear error when the process has none. This is lc0's "backend by name" in miniature: the crates that rate, pair
//! and referee games stay free of libtorch, and so does every process that never loads
//! a network (ARCHITECTURE.md, "Which processes load libtorch").

use std::{path::Path, sync::OnceLock};

use serde::{Deserialize, Serialize};

use crate::Evaluator;

/// How a backend loads a network: the one set of options every caller passes, whatever
/// the backend (self-play, players, the UCCI engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LoadOptions {
    /// Copies of the network that evaluate parts of each batch at once on the CPU
    /// (libtorch: one network copy on a thread each; native: one thread each, sharing
    /// the weights). 0 and 1 mean one, evaluating on the calling thread. A GPU evaluator
    /// always uses one copy.
    pub workers: usize,
    /// CPU threads inside each copy (libtorch's intra-op threads; native: threads per
    /// copy). 0 leaves the backend's default (with several workers, 0 means 1).
    pub threads: usize,
    /// Where the network runs (backends that only have the CPU ignore it).
    pub device: DeviceChoice,
    /// The arithmetic the network runs in. [`Precision::Auto`] leaves it to the
    /// process (`XQZ_PRECISION`) and the backend: f16 on a CUDA device, f32 on the CPU,
    /// or with `XQZ_BACKEND=auto` whichever of f32 and bf16 measures faster. It is an
    /// option here, not a setting of one backend, so that every caller asks for it the
    /// same way and a backend that cannot honour it says so when it loads.
    pub precision: Precision,
    /// The largest batch the caller evaluates at once (self-play: `[selfplay]
    /// max_batch`); 0 when unknown. Backends ignore it; the automatic choice of backend
    /// measures at this size, because which backend is fastest depends on it.
    pub batch: usize,
}

impl LoadOptions {
    /// CPU threads a backend that splits each batch over plain threads should use:
    /// `workers × threads`, at least one.
    pub fn cpu_threads(&self) -> usize {
        self.workers.max(1) * self.threads.max(1)
    }
}

/// Which device trains or evaluates, as PyTorch names it (`auto`, `cpu`, `cuda:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DeviceChoice {
    /// The first CUDA device when the backend sees one, else the CPU.
    #[default]
    Auto,
    /// Always the CPU.
    Cpu,
    /// CUDA device `n`.
    Cuda(usize),
}

/// A device name that is none of `auto`, `cpu`, `cuda`, `gpu`, `cuda:N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("device: expected auto, cpu, cuda or cuda:N, got {0:?}")]
pub struct BadDevice(pub String);

impl std::str::FromStr for DeviceChoice {
    type Err = BadDevice;

    fn from_str(s: &str) -> Result<DeviceChoice, BadDevice> {
        match s {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| BadDevice(s.to_owned())),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceChoice::Auto => f.write_str("auto"),
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl Serialize for DeviceChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DeviceChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The environment variable that chooses the backend ([`BackendChoice`]).
pub const BACKEND_ENV: &str = "XQZ_BACKEND";

/// Which network backend a process uses, as `XQZ_BACKEND` spells it.
///
/// `auto` (the default) runs networks with libtorch where a CUDA device is present. On
/// the CPU, a process that links libtorch (`xqz-torch`) measures for each network it
/// loads which of native f32, libtorch f32 and libtorch bf16 (where the CPU has bf16
/// arithmetic, [`cpu_has_bf16`]) is fastest at the caller's batch size and threads,
/// and uses that one ([`choose_fastest`]; the measurement is in
/// `xq_pipeline::backend`); `xqz`, which has no libtorch, runs natively. `native` and
/// `torch` force one. It is an environment variable rather than a flag so that it
/// reaches every process of a run the same way: `xqz` handing a command to
/// `xqz-torch`, self-play workers, and the engines a match starts. Training always uses
/// libtorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BackendChoice {
    /// libtorch where CUDA is present; on the CPU the fastest by measurement (native
    /// in a process without libtorch).
    #[default]
    Auto,
    /// Always the native CPU backend.
    Native,
    /// Always libtorch.
    Torch,
}

/// An `XQZ_BACKEND` value that is none of `auto`, `native`, `torch`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{BACKEND_ENV}={0}: expected auto, native or torch")]
pub struct BadBackendChoice(pub String);

impl std::str::FromStr for BackendChoice {
    type Err = BadBackendChoice;

    fn from_str(s: &str) -> Result<BackendChoice, BadBackendChoice> {
        match s.trim() {
            "" | "auto" => Ok(BackendChoice::Auto),
            "native" | "cpu" => Ok(BackendChoice::Native),
            "torch" | "libtorch" => Ok(BackendChoice::Torch),
            other => Err(BadBackendChoice(other.to_owned())),
        }
    }
}

impl BackendChoice {
    /// The choice in this process's environment (unset: [`BackendChoice::Auto`]).
    ///
    /// # Errors
    /// A value that names no backend.
    pub fn from_env() -> Result<BackendChoice, BadBackendChoice> {
        std::env::var(BACKEND_ENV).unwrap_or_default().parse()
    }

    /// Whether a process that cannot measure libtorch (`xqz`, which does not link it)
    /// runs networks natively rather than handing them to libtorch; `cuda` says whether
    /// a CUDA device is present, and is asked only for `auto` (asking costs time). A
    /// process that links libtorch decides `auto` on the CPU by measurement instead.
    pub fn is_native(self, cuda: impl FnOnce() -> bool) -> bool {
        match self {
            BackendChoice::Auto => !cuda(),
            BackendChoice::Native => true,
            BackendChoice::Torch => false,
        }
    }
}

/// The environment variable that chooses the precision of inference ([`Precision`]).
pub const PRECISION_ENV: &str = "XQZ_PRECISION";

/// The arithmetic a network is evaluated in, as `XQZ_PRECISION` spells it.
///
/// Training keeps its own precision (`[train] precision`); this is inference only. It
/// is an environment variable for the reason `XQZ_BACKEND` is one: it reaches every
/// process of a run, and the two engines of a paired match can differ in it alone
/// (`scripts/experiments/bf16_vs_f32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// The backend's choice: f16 on a CUDA device and f32 on the CPU, except that with
    /// `XQZ_BACKEND=auto` on the CPU the start-up measurement may pick bf16 where the
    /// CPU has it in hardware.
    #[default]
    Auto,
    /// IEEE single precision, what the network was trained to compute.
    F32,
    /// bfloat16 products (f32's exponent, 8 bits of mantissa) with f32 accumulation:
    /// libtorch only. On the CPU it is fast only with AVX512-BF16 or AMX-BF16.
    Bf16,
    /// IEEE half precision: libtorch on a CUDA device.
    F16,
}

/// An `XQZ_PRECISION` value that is none of `auto`, `f32`, `bf16`, `f16`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{PRECISION_ENV}={0}: expected auto, f32, bf16 or f16")]
pub struct BadPrecision(pub String);

impl std::str::FromStr for Precision {
    type Err = BadPrecision;

    fn from_str(s: &str) -> Result<Precision, BadPrecision> {
        match s.trim() {
            "" | "auto" => Ok(Precision::Auto),
            "f32" | "fp32" | "float32" => Ok(Precision::F32),
            "bf16" | "bfloat16" => Ok(Precision::Bf16),
            "f16" | "fp16" | "half" | "float16" => Ok(Precision::F16),
            other => Err(BadPrecision(other.to_owned())),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::Auto => "auto",
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::F16 => "f16",
        })
    }
}

impl Precision {
    /// The precision in this process's environment (unset: [`Precision::Auto`]).
    ///
    /// # Errors
    /// A value that names no precision.
    pub fn from_env() -> Result<Precision, BadPrecision> {
        std::env::var(PRECISION_ENV).unwrap_or_default().parse()
    }

    /// `self`, or `fallback` where `self` leaves the choice open: how a caller's
    /// [`LoadOptions::precision`] meets the process's `XQZ_PRECISION` (the caller's
    /// explicit choice wins).
    pub fn or(self, fallback: Precision) -> Precision {
        match self {
            Precision::Auto => fallback,
            explicit => explicit,
        }
    }
}

/// Which backend runs a network, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InferenceBackend {
    /// xq-native on the CPU.
    Native,
    /// libtorch on the CPU.
    Torch,
    /// libtorch on a CUDA device.
    TorchCuda,
}

/// The backend and precision a network actually runs with: what `selfplay` events
/// (`backend`) and `xqz bench` name, as `native-f32`, `torch-f32`, `torch-bf16`,
/// `torch-cuda-f16`. Its precision is never [`Precision::Auto`] when a backend reports
/// it: it is what was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inference {
    pub backend: InferenceBackend,
    pub precision: Precision,
}

impl Inference {
    /// The native backend (f32, the only precision it has).
    pub const NATIVE_F32: Inference = Inference {
        backend: InferenceBackend::Native,
        precision: Precision::F32,
    };
    /// libtorch on the CPU in f32.
    pub const TORCH_F32: Inference = Inference {
        backend: InferenceBackend::Torch,
        precision: Precision::F32,
    };
    /// libtorch on the CPU in bf16.
    pub const TORCH_BF16: Inference = Inference {
        backend: InferenceBackend::Torch,
        precision: Precision::Bf16,
    };
}

impl std::fmt::Display for Inference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backend = match self.backend {
            InferenceBackend::Native => "native",
            InferenceBackend::Torch => "torch",
            InferenceBackend::TorchCuda => "torch-cuda",
        };
        write!(f, "{backend}-{}", self.precision)
    }
}

/// A name that is not `native-f32`, `torch-f32`, `torch-bf16`, `torch-f16`,
/// `torch-cuda-f32`, `torch-cuda-bf16` or `torch-cuda-f16` (or `native`, `torch`,
/// `torch-cuda`, which mean their f32 and f16 forms).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("backend {0:?}: expected native-f32, torch-f32, torch-bf16 or torch-cuda-{{f32,bf16,f16}}")]
pub struct BadInference(pub String);

impl std::str::FromStr for Inference {
    type Err = BadInference;

    fn from_str(s: &str) -> Result<Inference, BadInference> {
        let bad = || BadInference(s.to_owned());
        let (backend, precision) = match s.trim() {
            "native" => ("native", "f32"),
            "torch" => ("torch", "f32"),
            "torch-cuda" => ("torch-cuda", "f16"),
            other => other.rsplit_once('-').ok_or_else(bad)?,
        };
        let backend = match backend {
            "native" => InferenceBackend::Native,
            "torch" => InferenceBackend::Torch,
            "torch-cuda" => InferenceBackend::TorchCuda,
            _ => return Err(bad()),
        };
        let precision = match precision.parse() {
            Ok(Precision::Auto) | Err(_) => return Err(bad()),
            Ok(p) => p,
        };
        if backend == InferenceBackend::Native && precision != Precision::F32 {
            return Err(bad());
        }
        Ok(Inference { backend, precision })
    }
}

/// One candidate of the automatic choice and its measured speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub inference: Inference,
    /// Positions per second through `Evaluator::evaluate` at the caller's batch size;
    /// 0 or not finite for a candidate that could not be loaded or failed.
    pub positions_per_second: f64,
}

/// How much faster than a preferred candidate another must measure to be chosen over
/// it: 5%, above the spread of repeated start-up measurements, so that a near tie keeps
/// the preferred one (native, then f32) rather than flipping with the noise.
pub const CHOICE_MARGIN: f64 = 0.05;

/// The automatic choice from measured speeds: of `measured`, in order of preference
/// (the caller lists native f32 first, then libtorch f32, then bf16, which alone
/// changes the numerics), the first whose speed is within `margin` of the fastest
/// (at least `fastest / (1 + margin)`). `None` when no candidate has a positive,
/// finite speed. A pure function, so the decision is tested without timing anything.
pub fn choose_fastest(measured: &[Measured], margin: f64) -> Option<Inference> {
    let ok = |m: &&Measured| m.positions_per_second.is_finite() && m.positions_per_second > 0.0;
    let fastest = measured
        .iter()
        .filter(ok)
        .map(|m| m.positions_per_second)
        .fold(f64::NAN, f64::max);
    let floor = fastest / (1.0 + margin.max(0.0));
    measured
        .iter()
        .filter(ok)
        .find(|m| m.positions_per_second >= floor)
        .map(|m| m.inference)
}

/// Whether the CPU has bf16 arithmetic in hardware (AVX512-BF16 or AMX-BF16), which
/// is what makes libtorch's bf16 (oneDNN) faster than f32 rather than slower. Read
/// from the flags of `/proc/cpuinfo` ([`cpuinfo_has_bf16`]); false where there is none
/// (other systems, other architectures), so that bf16 is then never measured.
pub fn cpu_has_bf16() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|text| cpuinfo_has_bf16(&text))
}

/// Whether the `flags` lines of a `/proc/cpuinfo` text name `avx512_bf16` or
/// `amx_bf16` (Linux's names for the CPUID bits).
pub fn cpuinfo_has_bf16(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(key, _)| key.trim() == "flags")
        .any(|(_, flags)| {
            flags
                .split_whitespace()
                .any(|f| f == "avx512_bf16" || f == "amx_bf16")
        })
}

/// Whether this machine shows an NVIDIA GPU to its driver, judged without loading a
/// GPU library (what `auto` asks in a process that has no libtorch to ask).
pub fn cuda_device_present() -> bool {
    Path::new("/dev/nvidiactl").exists() || Path::new("/proc/driver/nvidia/version").exists()
}

/// Loads networks: implemented by xq-native and xq-train, and by tests with stand-ins.
pub trait NetworkBackend: Send + Sync {
    /// Loads the network at `path` (a checkpoint sidecar, a model directory or a run
    /// directory, as the backend documents) for evaluation, as `options` say.
    ///
    /// # Errors
    /// The backend's own error (naming the file and what is wrong with it), typed.
    fn load(&self, path: &Path, options: &LoadOptions) -> Result<Box<dyn Evaluator>, LoadError>;

    /// The device a network loaded with `options` runs on, as events name it (`cpu`,
    /// `cuda:0`).
    fn device_name(&self, options: &LoadOptions) -> String;

    /// A short name for logs and errors ("torch", "native").
    fn name(&self) -> &'static str;

    /// The backend and precision networks loaded with `options` run with: for a backend
    /// that decides when it loads (`XQZ_BACKEND=auto` measures), the decision of its
    /// latest load with these options. `None` when it cannot say (the default, for
    /// stand-ins), or before a deciding backend has loaded anything.
    fn inference(&self, options: &LoadOptions) -> Option<Inference> {
        let _ = options;
        None
    }
}

static BACKEND: OnceLock<Box<dyn NetworkBackend>> = OnceLock::new();

/// Registers the process's network backend. The first registration wins; a second one
/// returns `false` and changes nothing (tests in one process may race to register).
pub fn register(backend: Box<dyn NetworkBackend>) -> bool {
    BACKEND.set(backend).is_ok()
}

/// The registered backend, registering the one `make` builds when there is none yet.
pub fn get_or_register(
    make: impl FnOnce() -> Box<dyn NetworkBackend>,
) -> &'static dyn NetworkBackend {
    BACKEND.get_or_init(make).as_ref()
}

/// The registered backend.
///
/// # Errors
/// [`NoBackend`] when this process registered none.
pub fn backend() -> Result<&'static dyn NetworkBackend, NoBackend> {
    BACKEND.get().map(|b| b.as_ref()).ok_or(NoBackend)
}

/// A backend could not load a network. It carries the backend's own typed error
/// (`xq_native::NativeError`, `xq_train::TrainError`) for callers to downcast, and
/// displays as it does.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct LoadError(pub Box<dyn std::error::Error + Send + Sync>);

impl LoadError {
    /// Wraps a backend's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> LoadError {
        LoadError(Box::new(error))
    }
}

/// The process has no network backend: it was built or started without libtorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this process has no network backend (networks run under `xqz-torch`)")]
pub struct NoBackend;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_native_without_cuda_and_torch_with_it() {
        assert!(BackendChoice::Auto.is_native(|| false));
        assert!(!BackendChoice::Auto.is_native(|| true));
        let unasked = || -> bool { panic!("only auto asks for CUDA") };
        assert!(BackendChoice::Native.is_native(unasked));
        assert!(!BackendChoice::Torch.is_native(unasked));
    }

    #[test]
    fn choices_parse_by_name_and_a_typo_is_an_error_naming_the_variable() {
        assert_eq!("".parse(), Ok(BackendChoice::Auto));
        assert_eq!("native".parse(), Ok(BackendChoice::Native));
        assert_eq!("torch".parse(), Ok(BackendChoice::Torch));
        let err = "nativ".parse::<BackendChoice>().unwrap_err();
        assert!(err.to_string().contains("XQZ_BACKEND=nativ"), "{err}");
    }

    #[test]
    fn devices_parse_and_print_as_pytorch_names_them() {
        for (text, device) in [
            ("auto", DeviceChoice::Auto),
            ("cpu", DeviceChoice::Cpu),
            ("cuda:2", DeviceChoice::Cuda(2)),
        ] {
            assert_eq!(text.parse(), Ok(device));
            assert_eq!(device.to_string(), text);
        }
        assert_eq!("gpu".parse(), Ok(DeviceChoice::Cuda(0)));
        let err = "tpu".parse::<DeviceChoice>().unwrap_err();
        assert!(err.to_string().contains("\"tpu\""), "{err}");
    }

    #[test]
    fn cpu_threads_multiply_workers_and_threads_and_are_at_least_one() {
        let of = |workers, threads| LoadOptions {
            workers,
            threads,
            ..LoadOptions::default()
        };
        assert_eq!(of(0, 0).cpu_threads(), 1);
        assert_eq!(of(4, 0).cpu_threads(), 4);
        assert_eq!(of(0, 3).cpu_threads(), 3);
        assert_eq!(of(2, 3).cpu_threads(), 6);
    }

    #[test]
    fn precisions_parse_by_name_and_a_typo_is_an_error_naming_the_variable_and_value() {
        assert_eq!("".parse(), Ok(Precision::Auto));
        assert_eq!("auto".parse(), Ok(Precision::Auto));
        assert_eq!(" f32 ".parse(), Ok(Precision::F32));
        assert_eq!("bf16".parse(), Ok(Precision::Bf16));
        assert_eq!("bfloat16".parse(), Ok(Precision::Bf16));
        assert_eq!("f16".parse(), Ok(Precision::F16));
        for p in [
            Precision::Auto,
            Precision::F32,
            Precision::Bf16,
            Precision::F16,
        ] {
            assert_eq!(p.to_string().parse(), Ok(p));
        }
        for bad in ["bf32", "F32", "int8", "fp8"] {
            let err = bad.parse::<Precision>().unwrap_err();
            assert_eq!(err, BadPrecision(bad.to_owned()));
            let text = err.to_string();
            assert!(text.contains(&format!("XQZ_PRECISION={bad}")), "{text}");
            assert!(text.contains("expected auto, f32, bf16 or f16"), "{text}");
        }
    }

    #[test]
    fn an_explicit_precision_wins_over_the_fallback() {
        assert_eq!(Precision::Auto.or(Precision::Bf16), Precision::Bf16);
        assert_eq!(Precision::F32.or(Precision::Bf16), Precision::F32);
        assert_eq!(Precision::Bf16.or(Precision::Auto), Precision::Bf16);
    }

    #[test]
    fn inferences_print_and_parse_as_events_and_benchmarks_name_them() {
        let cuda_f16 = Inference {
            backend: InferenceBackend::TorchCuda,
            precision: Precision::F16,
        };
        for (text, inference) in [
            ("native-f32", Inference::NATIVE_F32),
            ("torch-f32", Inference::TORCH_F32),
            ("torch-bf16", Inference::TORCH_BF16),
            ("torch-cuda-f16", cuda_f16),
        ] {
            assert_eq!(inference.to_string(), text);
            assert_eq!(text.parse(), Ok(inference));
        }
        assert_eq!("native".parse(), Ok(Inference::NATIVE_F32));
        assert_eq!("torch".parse(), Ok(Inference::TORCH_F32));
        assert_eq!("torch-cuda".parse(), Ok(cuda_f16));
        for bad in [
            "native-bf16",
            "torch-auto",
            "torch-int8",
            "tpu-f32",
            "bf16",
            "",
        ] {
            assert_eq!(bad.parse::<Inference>(), Err(BadInference(bad.to_owned())));
        }
    }

    fn measured(rates: &[(Inference, f64)]) -> Vec<Measured> {
        rates
            .iter()
            .map(|&(inference, positions_per_second)| Measured {
                inference,
                positions_per_second,
            })
            .collect()
    }

    #[test]
    fn the_choice_is_the_fastest_unless_a_preferred_one_is_within_the_margin() {
        let (n, t, b) = (
            Inference::NATIVE_F32,
            Inference::TORCH_F32,
            Inference::TORCH_BF16,
        );
        let choose = |rates: &[(Inference, f64)]| choose_fastest(&measured(rates), CHOICE_MARGIN);
        // The figures for 3x32 at batch 16 (libtorch 1.08x native): libtorch.
        assert_eq!(choose(&[(n, 4830.0), (t, 5238.0)]), Some(t));
        // bf16 clearly fastest: bf16.
        assert_eq!(choose(&[(n, 141.0), (t, 274.0), (b, 850.0)]), Some(b));
        // Native fastest: native.
        assert_eq!(choose(&[(n, 500.0), (t, 400.0), (b, 450.0)]), Some(n));
        // A near tie (within 5%) keeps the preferred candidate, native, then f32.
        assert_eq!(choose(&[(n, 1000.0), (t, 1040.0), (b, 1049.0)]), Some(n));
        assert_eq!(choose(&[(n, 900.0), (t, 1000.0), (b, 1040.0)]), Some(t));
        // Just beyond the margin: the faster one.
        assert_eq!(choose(&[(n, 1000.0), (t, 1051.0)]), Some(t));
        // Candidates that failed (0, NaN, infinite) are never chosen.
        assert_eq!(choose(&[(n, 0.0), (t, f64::NAN), (b, 3.0)]), Some(b));
        assert_eq!(choose(&[(n, f64::INFINITY), (t, 2.0)]), Some(t));
        assert_eq!(choose(&[(n, 0.0), (t, f64::NAN)]), None);
        assert_eq!(choose(&[]), None);
        // Without a margin the strictly fastest wins.
        assert_eq!(
            choose_fastest(&measured(&[(n, 1000.0), (t, 1001.0)]), 0.0),
            Some(t)
        );
    }

    #[test]
    fn bf16_hardware_is_read_from_the_cpuinfo_flags_lines() {
        let cpu = |flags: &str| {
            format!("processor\t: 0\nmodel name\t: x avx512_bf16 in a name\nflags\t\t: {flags}\n\n")
        };
        assert!(cpuinfo_has_bf16(&cpu(
            "fpu sse avx512f avx512_bf16 avx512_fp16"
        )));
        assert!(cpuinfo_has_bf16(&cpu("fpu amx_bf16 amx_tile")));
        // AVX-512 without BF16, an AVX2 machine, a name that mentions it: no.
        assert!(!cpuinfo_has_bf16(&cpu(
            "fpu sse avx512f avx512bw avx512_vnni"
        )));
        assert!(!cpuinfo_has_bf16(&cpu("fpu avx2 fma")));
        assert!(!cpuinfo_has_bf16(&cpu("fpu xavx512_bf16")));
        assert!(!cpuinfo_has_bf16(""));
    }

    #[test]
    fn without_a_registration_there_is_no_backend() {
        // Unit tests of this crate never register one.
        assert_eq!(backend().err(), Some(NoBackend));
    }
}
