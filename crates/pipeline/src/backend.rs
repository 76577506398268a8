//! The process's network backend, chosen once: the native CPU backend or libtorch, as
//! `XQZ_BACKEND` says ([`xq_nn::BackendChoice`]; `auto`: native unless libtorch sees a
//! CUDA device). This crate links both, so it is where the choice is made for the
//! processes that train (`xqz-torch`) and for self-play; every network is then loaded
//! through [`xq_nn::NetworkBackend::load`] with [`xq_nn::LoadOptions`].

use xq_nn::{BackendChoice, BadBackendChoice, NetworkBackend};

/// The registered backend, registering the one `XQZ_BACKEND` chooses when the process
/// has none yet (a process that registered its own, a test, keeps it). Training uses
/// libtorch whatever it says.
///
/// # Errors
/// An `XQZ_BACKEND` value that names no backend.
pub fn network_backend() -> Result<&'static dyn NetworkBackend, BadBackendChoice> {
    if let Ok(backend) = xq_nn::backend::backend() {
        return Ok(backend);
    }
    let native = BackendChoice::from_env()?.is_native(xq_train::cuda_available);
    Ok(xq_nn::backend::get_or_register(|| {
        if native {
            Box::new(xq_native::NativeBackend)
        } else {
            Box::new(xq_train::TorchBackend)
        }
    }))
}
