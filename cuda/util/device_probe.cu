#include "cuda/util/device_probe.hpp"

#include <cuda_runtime.h>

#include <string>

#include "prover/groth16/backend.hpp"

namespace cuzk::cuda {

DeviceInfo probe_device() {
  DeviceInfo d;
  cudaRuntimeGetVersion(&d.runtime_version);
  cudaError_t e = cudaDriverGetVersion(&d.driver_version);
  if (e != cudaSuccess || d.driver_version == 0) {
    d.reason = "no NVIDIA driver found (libcuda could not be loaded)";
    return d;
  }
  int n = 0;
  e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    d.reason = std::string("no usable GPU: cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    return d;
  }
  if (n == 0) {
    d.reason = "no GPU found (cudaGetDeviceCount returned 0)";
    return d;
  }
  cudaDeviceProp p{};
  e = cudaGetDeviceProperties(&p, 0);
  if (e != cudaSuccess) {
    d.reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return d;
  }
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  // The kernels are built for sm_90 only (CMAKE_CUDA_ARCHITECTURES); an older GPU cannot run them.
  if (p.major < 9) {
    d.reason = std::string("GPU ") + p.name + " has compute capability " + std::to_string(p.major) + "." +
               std::to_string(p.minor) + "; this build's kernels need 9.0 (sm_90)";
    return d;
  }
  e = cudaMemGetInfo(&d.free_bytes, &d.total_bytes);
  if (e != cudaSuccess) {
    d.reason = std::string("cudaMemGetInfo: ") + cudaGetErrorString(e);
    return d;
  }
  d.available = true;
  return d;
}

void require_device() {
  DeviceInfo d = probe_device();
  if (!d.available) throw groth16::BackendUnavailable("backend 'cuda' cannot run here: " + d.reason);
}

unsigned device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n < 0 ? 0u : unsigned(n);
}

}  // namespace cuzk::cuda
