// CUDA streams and graphs for xq-train (src/cuda.rs), which tch 0.26 does not expose.
//
// Every function returns NULL on success or a message (strdup'ed; the caller frees it
// with xq_cuda_free_message), so no C++ exception crosses into Rust. The handles are
// heap copies of c10's stream and ATen's graph objects.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <cstring>
#include <exception>

using c10::cuda::CUDAStream;

namespace {
template <typename F>
char* guarded(F&& f) {
  try {
    f();
    return nullptr;
  } catch (const std::exception& e) {
    return strdup(e.what());
  } catch (...) {
    return strdup("unknown C++ exception");
  }
}
}  // namespace

extern "C" {

void xq_cuda_free_message(char* message) { free(message); }

char* xq_cuda_device_count(int* out) {
  return guarded([&] { *out = static_cast<int>(c10::cuda::device_count()); });
}

char* xq_cuda_stream_new(int device, void** out) {
  return guarded([&] {
    *out = new CUDAStream(c10::cuda::getStreamFromPool(
        false, static_cast<c10::DeviceIndex>(device)));
  });
}

char* xq_cuda_stream_current(int device, void** out) {
  return guarded([&] {
    *out = new CUDAStream(
        c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)));
  });
}

void xq_cuda_stream_free(void* stream) { delete static_cast<CUDAStream*>(stream); }

char* xq_cuda_stream_set_current(void* stream) {
  return guarded([&] { c10::cuda::setCurrentCUDAStream(*static_cast<CUDAStream*>(stream)); });
}

char* xq_cuda_stream_synchronize(void* stream) {
  return guarded([&] { static_cast<CUDAStream*>(stream)->synchronize(); });
}

char* xq_cuda_graph_new(void** out) {
  return guarded([&] { *out = new at::cuda::CUDAGraph(); });
}

void xq_cuda_graph_free(void* graph) { delete static_cast<at::cuda::CUDAGraph*>(graph); }

// Thread-local capture: other threads (other servers, the trainer) may keep using CUDA
// while one thread captures.
char* xq_cuda_graph_capture_begin(void* graph) {
  return guarded([&] {
    static_cast<at::cuda::CUDAGraph*>(graph)->capture_begin(
        {0, 0}, cudaStreamCaptureModeThreadLocal);
  });
}

char* xq_cuda_graph_capture_end(void* graph) {
  return guarded([&] { static_cast<at::cuda::CUDAGraph*>(graph)->capture_end(); });
}

char* xq_cuda_graph_replay(void* graph) {
  return guarded([&] { static_cast<at::cuda::CUDAGraph*>(graph)->replay(); });
}

}  // extern "C"
