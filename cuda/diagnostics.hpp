// GPU work of known duration, for checking what the harness measures (a plain C++ header, so
// that g++-compiled tests can call it).
//
// sleep_phase(name, ns) opens the phase `name` (instr::Phase, under the caller's current phase)
// and runs one kernel that spins on the GPU's global nanosecond timer until `ns` have passed
// since the kernel began; the phase's GPU time comes from CUDA events around it, exactly as the
// proving stage's phases (cuda/gpu_phase.cuh). So the phase's gpu_ns should be `ns` plus the
// launch and event overhead, whatever the host is doing meanwhile: the GPU test checks that
// under a CPU load on every core.
#pragma once
#include <cstdint>

namespace cuzk::cuda {

// Throws CudaError on a CUDA failure (no device: call require_device() first).
void sleep_phase(const char* name, uint64_t ns);

}  // namespace cuzk::cuda
