// Chrome trace-event JSON (the format Perfetto and chrome://tracing open) from a results file.
//
// Each sample becomes one trace process (pid = the sample's index + 1, named after its case,
// repetition and variant), each OS thread of a sample one trace thread (tid), and each span
// one complete event (ph "X", name = phase path, ts and dur in microseconds from the sample's
// start). The event's args carry the phase's aggregate record (wall_ns, count, gpu_ns, the GPU
// activity times where collected, counters) for the sample. Samples written without spans
// contribute no events.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "harness/measure/results.hpp"

namespace cuzk {

struct TraceStats {
  size_t events = 0;
  size_t counter_events = 0;  // pairs of counter-track points (one per counter per occurrence)
  size_t samples_with_spans = 0;
  size_t samples_without_spans = 0;
};

// Throws ResultsError when no sample has spans (nothing to show).
nlohmann::json make_trace(const ResultsFile& results, TraceStats* stats = nullptr);

}  // namespace cuzk
