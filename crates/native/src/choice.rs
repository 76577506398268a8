//! Which network backend a process uses: the `XQZ_BACKEND` environment variable.
//!
//! `auto` (the default) runs networks natively on the CPU and with libtorch where a
//! CUDA device is present; `native` and `torch` force one. It is an environment
//! variable rather than a flag so that it reaches every process of a run the same way:
//! `xqz` handing a command to `xqz-torch`, self-play workers, and the engines a match
//! starts. Training always uses libtorch.

use std::path::Path;

/// The environment variable that chooses the backend.
pub const BACKEND_ENV: &str = "XQZ_BACKEND";

/// A backend choice, as `XQZ_BACKEND` spells it.
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
}
