//! CUDA streams and graphs, which tch 0.26 does not expose, through the small C++ shim
//! in `cuda/shim.cpp` (issue #46, items 4-5).
//!
//! - A [`Stream`] of libtorch's pool becomes the calling thread's current stream while
//!   a [`StreamGuard`] lives: every tch operation of that thread then runs on it. So
//!   each evaluation server and the trainer keep their kernels and their blocking copies
//!   to themselves instead of queueing behind each other on the default stream.
//! - A [`Graph`] records the kernels one closure launches and replays them with one
//!   launch: a network call of about 40 small kernels then costs the host one. Its
//!   tensors (inputs and outputs) are fixed: a caller copies into the inputs and reads
//!   the outputs after [`Graph::replay`].
//!
//! The shim is compiled (build.rs) when libtorch has CUDA (`libtorch_cuda.so`) and the
//! CUDA runtime headers are found (`scripts/setup` installs them into `.venv`); then
//! [`built`] is true. Without it, or without a device, every constructor returns
//! [`TrainError::Cuda`] and the evaluator runs eagerly on the default stream.

use crate::error::TrainError;

/// Whether this binary has the shim.
pub const fn built() -> bool {
    cfg!(xq_cuda_shim)
}

#[cfg(xq_cuda_shim)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};

    unsafe extern "C" {
        pub fn xq_cuda_free_message(message: *mut c_char);
        pub fn xq_cuda_device_count(out: *mut c_int) -> *mut c_char;
        pub fn xq_cuda_stream_new(device: c_int, out: *mut *mut c_void) -> *mut c_char;
        pub fn xq_cuda_stream_current(device: c_int, out: *mut *mut c_void) -> *mut c_char;
        pub fn xq_cuda_stream_free(stream: *mut c_void);
        pub fn xq_cuda_stream_set_current(stream: *mut c_void) -> *mut c_char;
        pub fn xq_cuda_graph_new(out: *mut *mut c_void) -> *mut c_char;
        pub fn xq_cuda_graph_free(graph: *mut c_void);
        pub fn xq_cuda_graph_capture_begin(graph: *mut c_void) -> *mut c_char;
        pub fn xq_cuda_graph_capture_end(graph: *mut c_void) -> *mut c_char;
        pub fn xq_cuda_graph_replay(graph: *mut c_void) -> *mut c_char;
    }

    /// The shim's answer as a result: null is success, anything else its message.
    pub fn check(message: *mut c_char) -> Result<(), String> {
        if message.is_null() {
            return Ok(());
        }
        // SAFETY: a non-null answer is a NUL-terminated string from strdup, freed once.
        let text = unsafe { std::ffi::CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned();
        unsafe { xq_cuda_free_message(message) };
        Err(text)
    }
}

#[cfg(xq_cuda_shim)]
fn call(what: &str, message: *mut std::ffi::c_char) -> Result<(), TrainError> {
    ffi::check(message).map_err(|e| TrainError::Cuda(format!("{what}: {e}")))
}

#[cfg(not(xq_cuda_shim))]
fn not_built() -> TrainError {
    TrainError::Cuda(
        "CUDA streams and graphs are not built into this binary (libtorch without CUDA, \
         or no CUDA runtime headers when it was built: run scripts/setup)"
            .into(),
    )
}

/// CUDA devices libtorch sees, through the shim (an error without it).
pub fn device_count() -> Result<usize, TrainError> {
    #[cfg(xq_cuda_shim)]
    {
        let mut n = 0;
        // SAFETY: `n` outlives the call, which writes it only on success.
        call("device count", unsafe { ffi::xq_cuda_device_count(&mut n) })?;
        Ok(n.max(0) as usize)
    }
    #[cfg(not(xq_cuda_shim))]
    Err(not_built())
}

/// A CUDA stream: one of libtorch's pool, or a thread's current stream.
#[derive(Debug)]
pub struct Stream {
    #[cfg_attr(not(xq_cuda_shim), allow(dead_code))]
    raw: *mut std::ffi::c_void,
    device: usize,
}

// SAFETY: the handle is a heap copy of a `c10::cuda::CUDAStream` (a device index and a
// stream id), which is a value any thread may use.
unsafe impl Send for Stream {}

impl Stream {
    /// A stream of libtorch's pool on `device` (a CUDA device index).
    pub fn new(device: usize) -> Result<Stream, TrainError> {
        #[cfg(xq_cuda_shim)]
        return Stream::from_shim("stream", ffi::xq_cuda_stream_new, device);
        #[cfg(not(xq_cuda_shim))]
        {
            let _ = device;
            Err(not_built())
        }
    }

    /// The calling thread's current stream on `device`.
    fn current(device: usize) -> Result<Stream, TrainError> {
        #[cfg(xq_cuda_shim)]
        return Stream::from_shim("current stream", ffi::xq_cuda_stream_current, device);
        #[cfg(not(xq_cuda_shim))]
        {
            let _ = device;
            Err(not_built())
        }
    }

    /// The stream one of the shim's stream functions makes for `device`.
    #[cfg(xq_cuda_shim)]
    fn from_shim(
        what: &str,
        make: unsafe extern "C" fn(
            std::ffi::c_int,
            *mut *mut std::ffi::c_void,
        ) -> *mut std::ffi::c_char,
        device: usize,
    ) -> Result<Stream, TrainError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `make` is one of the shim's stream functions; it writes `raw` only on
        // success.
        call(what, unsafe { make(device as i32, &mut raw) })?;
        Ok(Stream { raw, device })
    }

    /// The device it belongs to.
    pub fn device(&self) -> usize {
        self.device
    }

    fn make_current(&self) -> Result<(), TrainError> {
        #[cfg(xq_cuda_shim)]
        {
            // SAFETY: `raw` is a live stream handle.
            call("set stream", unsafe {
                ffi::xq_cuda_stream_set_current(self.raw)
            })
        }
        #[cfg(not(xq_cuda_shim))]
        Err(not_built())
    }

    /// Makes this stream the calling thread's current one on its device until the guard
    /// is dropped, which restores the stream that was current.
    pub fn enter(&self) -> Result<StreamGuard, TrainError> {
        let previous = Stream::current(self.device)?;
        self.make_current()?;
        Ok(StreamGuard { previous })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        #[cfg(xq_cuda_shim)]
        // SAFETY: `raw` came from the shim and is freed once.
        unsafe {
            ffi::xq_cuda_stream_free(self.raw)
        };
    }
}

/// Restores the thread's previous stream when dropped ([`Stream::enter`]).
#[derive(Debug)]
pub struct StreamGuard {
    previous: Stream,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        // Restoring a stream that existed a moment ago cannot fail short of a broken
        // driver, which the next operation reports.
        let _ = self.previous.make_current();
    }
}

/// A captured CUDA graph ([`Graph::capture`]).
#[derive(Debug)]
pub struct Graph {
    #[cfg_attr(not(xq_cuda_shim), allow(dead_code))]
    raw: *mut std::ffi::c_void,
}

// SAFETY: an `at::cuda::CUDAGraph` is used by one thread at a time (the owner of the
// evaluator that holds it); nothing in it is tied to the thread that captured it.
unsafe impl Send for Graph {}

impl Graph {
    /// Captures the kernels `launch` queues on the calling thread's current stream, which
    /// must not be the default one (enter a [`Stream`] first), and returns the graph with
    /// what `launch` returned: tensors allocated during the capture live in the graph's
    /// own memory and are rewritten by every [`replay`](Self::replay). Capturing runs
    /// nothing: replay once for the first results. `launch` must not synchronise with
    /// the host (no copies to host memory, no `.item()`); a failure ends the capture.
    pub fn capture<T>(
        launch: impl FnOnce() -> Result<T, TrainError>,
    ) -> Result<(Graph, T), TrainError> {
        #[cfg(xq_cuda_shim)]
        {
            let mut raw = std::ptr::null_mut();
            // SAFETY: `raw` is written only on success.
            call("graph", unsafe { ffi::xq_cuda_graph_new(&mut raw) })?;
            let graph = Graph { raw };
            // SAFETY: `raw` is a live graph handle (so are the calls below).
            call("capture", unsafe {
                ffi::xq_cuda_graph_capture_begin(graph.raw)
            })?;
            let out = launch();
            let end = call("capture", unsafe {
                ffi::xq_cuda_graph_capture_end(graph.raw)
            });
            let out = out?;
            end?;
            Ok((graph, out))
        }
        #[cfg(not(xq_cuda_shim))]
        {
            let _ = launch;
            Err(not_built())
        }
    }

    /// Launches the captured kernels again on the current stream.
    pub fn replay(&self) -> Result<(), TrainError> {
        #[cfg(xq_cuda_shim)]
        {
            // SAFETY: `raw` is a live graph handle.
            call("replay", unsafe { ffi::xq_cuda_graph_replay(self.raw) })
        }
        #[cfg(not(xq_cuda_shim))]
        Err(not_built())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        #[cfg(xq_cuda_shim)]
        // SAFETY: `raw` came from the shim and is freed once.
        unsafe {
            ffi::xq_cuda_graph_free(self.raw)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a CUDA device (the project machines and CI), the shim answers every
    /// request with an error, not a crash: this is its C++ exception boundary at work.
    #[test]
    fn without_a_device_streams_and_graphs_are_errors() {
        if tch::Cuda::is_available() {
            return;
        }
        if built() {
            assert_eq!(device_count().unwrap(), 0);
        } else {
            assert!(device_count().is_err());
        }
        let e = Stream::new(0).unwrap_err().to_string();
        assert!(e.starts_with("CUDA"), "{e}");
        let e = Graph::capture(|| Ok(())).unwrap_err().to_string();
        assert!(e.starts_with("CUDA"), "{e}");
    }
}
