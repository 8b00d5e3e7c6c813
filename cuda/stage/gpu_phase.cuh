// A phase scope (instr::Phase) whose GPU work is bracketed by CUDA events on one stream: the
// phase's GPU time (gpu_ns in the results) is the time between the two events, reported through
// instr::report_gpu_time when the scope closes. Used by the proving stage (backend.cu).
#pragma once
#include <exception>

#include "cuda/util/cuda_check.cuh"
#include "cuda/util/gpu_timer.cuh"
#include "prover/instr/phase.hpp"

namespace cuzk::cuda {

// A phase whose GPU work is bracketed by CUDA events on the stream.
class GpuPhase {
 public:
  GpuPhase(const char* name, cudaStream_t s) : phase_(name), s_(s) { timer_.start(s); }
  // Records the stop event and waits for the GPU before the host scope closes, so that the
  // phase's wall time covers its GPU work.
  ~GpuPhase() noexcept(false) {
    if (std::uncaught_exceptions()) return;
    timer_.stop(s_);
    instr::report_gpu_time(phase_.path(), timer_.elapsed_ns());
  }

 private:
  instr::Phase phase_;
  cudaStream_t s_;
  GpuTimer timer_;
};

}  // namespace cuzk::cuda
