// GPU time without gaps: the collector of GPU activity through CUPTI's Activity API (a plain C++
// header, so that g++-compiled code can use it). docs/counters.md, "GPU time without gaps".
//
// While attached it is the phase sink (wrapping the harness's Recorder): each phase opening
// pushes an external correlation id (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) on the opening
// thread and pops it at close, so that every runtime API call made inside the phase, and so the
// kernels, copies and memsets it launched, carry the innermost opening's id. Records arrive in
// buffers that CUPTI fills on its own; detach() flushes them, outside the timed region, and
// take() hands over the batch for prover/instr/gpu_activity.hpp's attribution.
#pragma once
#include <memory>
#include <stdexcept>

#include "prover/instr/gpu_activity.hpp"

namespace cuzk::cuda::gpu_activity {

class GpuActivityError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Registers CUPTI's buffer callbacks and enables the kernel, memcpy, memset, runtime API and
// external correlation records, for the life of the collector: one per process at a time.
// Throws GpuActivityError (CUPTI's reason) when that fails, or when a collector exists already.
std::shared_ptr<instr::gpu_activity::Collector> make_cupti_collector();

}  // namespace cuzk::cuda::gpu_activity
