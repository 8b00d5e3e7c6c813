// GPU work of known duration, for checking what the harness measures (a plain C++ header, so
// that g++-compiled tests can call it).
//
// sleep_phase(name, ns) opens the phase `name` (instr::Phase, under the caller's current phase)
// and runs one kernel that spins on the GPU's global nanosecond timer until `ns` have passed
// since the kernel began; the phase's GPU time comes from CUDA events around it, exactly as the
// proving stage's phases (cuda/stage/gpu_phase.cuh). So the phase's gpu_ns should be `ns` plus the
// launch and event overhead, whatever the host is doing meanwhile: the GPU test checks that
// under a CPU load on every core.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cuzk::cuda {

// Throws CudaError on a CUDA failure (no device: call require_device() first).
void sleep_phase(const char* name, uint64_t ns);

// A filled device buffer whose read_once() launches one kernel that reads every byte exactly
// once (16-byte loads, grid-stride) and writes nothing but a 4-byte flag that is never set: the
// GPU-counter test's known DRAM traffic. Larger than the L2 (60 MB on the H200), so the reads
// come from DRAM.
class ReadBuffer {
 public:
  explicit ReadBuffer(size_t bytes);  // a multiple of 16
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;
  void read_once();  // returns after the kernel finished
  size_t bytes() const { return bytes_; }

 private:
  void* buf_ = nullptr;
  unsigned* flag_ = nullptr;
  size_t bytes_ = 0;
};

// One kernel of dependent FMA chains on every SM, no memory traffic: compute-bound by
// construction. Returns after it finished.
void compute_bound(int iterations);

}  // namespace cuzk::cuda
