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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
}

impl LoadOptions {
    /// CPU threads a backend that splits each batch over plain threads should use:
    /// `workers × threads`, at least one.
    pub fn cpu_threads(&self) -> usize {
        self.workers.max(1) * self.threads.max(1)
    }
}

/// Which device trains or evaluates, as PyTorch names it (`auto`, `cpu`, `cuda:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
/// `auto` (the default) runs networks natively on the CPU and with libtorch where a
/// CUDA device is present; `native` and `torch` force one. It is an environment
/// variable rather than a flag so that it reaches every process of a run the same way:
/// `xqz` handing a command to `xqz-torch`, self-play workers, and the engines a match
/// starts. Training always uses libtorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Native on the CPU, libtorch where CUDA is present.
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

    /// Whether networks run natively; `cuda` says whether a CUDA device is present,
    /// and is asked only for `auto` (asking libtorch costs time).
    pub fn is_native(self, cuda: impl FnOnce() -> bool) -> bool {
        match self {
            BackendChoice::Auto => !cuda(),
            BackendChoice::Native => true,
            BackendChoice::Torch => false,
        }
    }
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
    fn without_a_registration_there_is_no_backend() {
        // Unit tests of this crate never register one.
        assert_eq!(backend().err(), Some(NoBackend));
    }
}
