// Whether this machine has a GPU the backend can use (a plain C++ header: no CUDA types), so that
// g++-compiled code (the CLI, tests) can probe for one and say why not.
#pragma once
#include <cstddef>
#include <string>

namespace cuzk::cuda {

struct DeviceInfo {
  bool available = false;
  std::string reason;       // why not, when unavailable (no device, no driver, driver too old)
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  size_t total_bytes = 0, free_bytes = 0;
  int runtime_version = 0, driver_version = 0;
};

// Probes device 0 (or $CUDA_VISIBLE_DEVICES' first); never throws.
DeviceInfo probe_device();

// Throws groth16::BackendUnavailable with the probe's reason when there is no usable GPU.
void require_device();

// CUDA devices visible to this process (cudaGetDeviceCount); 0 without a driver or a device.
// Never throws.
unsigned device_count();

}  // namespace cuzk::cuda
