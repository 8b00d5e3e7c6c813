// What the harness measures on the GPU: phase GPU time against a known sleep kernel, and the
// CUPTI counters per range.
// Run on the GPU machine (skipped elsewhere, see gpu_main.cpp); every random input comes from a
// fresh seed printed with each case, so a failure can be replayed.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#if CUZK_HAVE_GPU_COUNTERS
#include "cuda/profiling/gpu_counters.hpp"
#endif
#if CUZK_HAVE_GPU_ACTIVITY
#include <chrono>

#include "cuda/profiling/gpu_activity_cupti.hpp"
#include "harness/measure/gpu_activity.hpp"
#include "prover/instr/phase.hpp"
#endif
#include "cuda/testing/entry_points.hpp"
#include "cuda/profiling/diagnostics.hpp"
#include "harness/measure/recorder.hpp"
#include "gpu_test_util.hpp"

// GPU time (gpu_ns, CUDA events) is the metric compare judges GPU phases by: it must measure the
// GPU's work, not the host's. A kernel that spins for a known time on the GPU's own clock is
// timed while every core runs a CPU load, so the timing thread has to wait for a core.
TEST_CASE("gpu_ns of a phase whose GPU work is a known sleep kernel is within 5% of it under a CPU load") {
  constexpr uint64_t kSleepNs = 20'000'000;  // long next to the events' microseconds of overhead
  constexpr int kReps = 10;
  cuzk::RecorderOptions ro;
  ro.nvtx = false;
  cuzk::Recorder rec(ro);
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    load.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  // One untimed launch first: CUDA loads a kernel's module at its first launch (lazy loading),
  // between the events, which is a first-launch cost (--stable loads eagerly), not GPU work.
  cuda::sleep_phase("sleep", 1000);
  std::vector<double> gpu, wall;
  rec.install();
  for (int i = 0; i < kReps; ++i) {
    rec.take_sample();
    cuda::sleep_phase("sleep", kSleepNs);
    cuzk::Sample s = rec.take_sample();
    REQUIRE(s.phases.count("sleep"));
    REQUIRE(s.phases["sleep"].gpu_ns.has_value());
    gpu.push_back(double(*s.phases["sleep"].gpu_ns));
    wall.push_back(double(s.phases["sleep"].wall_ns));
  }
  rec.uninstall();
  stop = true;
  for (auto& t : load) t.join();
  for (int i = 0; i < kReps; ++i) {
    INFO("repetition " << i << ": gpu_ns " << gpu[i] << ", wall_ns " << wall[i] << " for a " << kSleepNs << " ns kernel");
    CHECK(gpu[i] >= 0.95 * kSleepNs);
    CHECK(gpu[i] <= 1.05 * kSleepNs);
  }
}

#if CUZK_HAVE_GPU_COUNTERS
TEST_CASE("GPU counters per range (CUPTI Range Profiler): known DRAM bytes, compute-bound SM throughput, idle, bad names") {
  namespace gc = cuzk::cuda::gpu_counters;
  constexpr size_t kBytes = size_t(512) << 20;  // 8.5x the H200's L2: the reads come from DRAM
  cuda::ReadBuffer buf(kBytes);
  const std::vector<std::string> metrics = {"dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                            "pcie__read_bytes.sum", "nvlrx__bytes.sum"};
  gc::RangeProfiler prof(metrics);
  INFO("chip " << prof.chip() << ", " << prof.passes() << " passes");
  std::string unavailable;
  for (const auto& st : prof.status()) {
    INFO(st.name << ": " << (st.available ? "available" : st.reason));
    CHECK((st.available || !st.reason.empty()));
    if (!st.available) unavailable = st.name;
  }
  size_t runs = 0;
  prof.collect([&] {
    ++runs;
    prof.push("read");
    buf.read_once();
    prof.pop();
    prof.push("compute");
    cuda::compute_bound(20000);
    prof.pop();
    prof.push("idle");
    prof.pop();
  });
  CHECK(runs == prof.passes());
  auto r = prof.results();
  REQUIRE(r.count("read"));
  REQUIRE(r.count("compute"));
  REQUIRE(r.count("idle"));
  const auto dram = r["read"]["dram__bytes_read.sum"];
  REQUIRE(dram.has_value());
  INFO("DRAM read bytes " << *dram << " for a " << kBytes << "-byte read");
  CHECK(*dram >= 0.9 * kBytes);
  CHECK(*dram <= 1.1 * kBytes);
  const auto sm = r["compute"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"];
  REQUIRE(sm.has_value());
  // Measured 58.8% (docs/counters.md) and 48.8% (2026-12-03, the GPU shared with other work):
  // the check is that a compute-bound kernel reads as busy, far from the idle range's 0.
  CHECK(*sm > 25);
  const auto idle = r["idle"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"];
  CHECK((!idle.has_value() || *idle < 1));
  // A metric that cannot be collected here is null in every range, with its reason above.
  if (!unavailable.empty()) CHECK_FALSE(r["read"][unavailable].has_value());
  // An unknown name is an error before any work.
  CHECK_THROWS_AS(gc::RangeProfiler({"nonsense__metric.sum"}), gc::GpuCounterError);
}
#endif  // CUZK_HAVE_GPU_COUNTERS

#if CUZK_HAVE_GPU_ACTIVITY
// GPU time without gaps (--gpu-activity): the kernel time of a phase is its kernels' own length,
// whatever the host did around them, and what the host did inside the phase shows as idle.
TEST_CASE("gpu_kernel_ns of a 2 ms spin kernel is within 3% of it; a host sleep inside the phase is idle") {
  constexpr uint64_t kSpinNs = 2'000'000;
  constexpr uint64_t kHostSleepNs = 5'000'000;
  constexpr int kReps = 5;
  cuzk::RecorderOptions ro;
  ro.nvtx = false;
  ro.enlist_global_pool = false;
  cuzk::Recorder rec(ro);
  auto collector = cuzk::cuda::gpu_activity::make_cupti_collector();
  // A second collector in the same process is refused (CUPTI's callbacks are process-wide).
  CHECK_THROWS_AS(cuzk::cuda::gpu_activity::make_cupti_collector(), cuzk::cuda::gpu_activity::GpuActivityError);
  cuda::sleep_phase("warm", 1000);  // the module loads at the first launch: outside the samples
  rec.install();
  for (int i = 0; i < kReps; ++i) {
    collector->attach();
    rec.take_sample();
    {
      cuzk::instr::Phase outer("outer");
      std::this_thread::sleep_for(std::chrono::nanoseconds(kHostSleepNs));
      cuda::sleep_phase("spin", kSpinNs);
    }
    cuzk::Sample s = rec.take_sample();
    collector->detach();
    const std::string warning = cuzk::apply_gpu_activity(s, collector->take());
    INFO("repetition " << i << ": " << warning);
    REQUIRE(warning.empty());
    REQUIRE(s.phases.count("outer/spin"));
    REQUIRE(s.phases.count("outer"));
    const cuzk::PhaseRecord& spin = s.phases.at("outer/spin");
    const cuzk::PhaseRecord& outer = s.phases.at("outer");
    REQUIRE(spin.gpu_kernel_ns.has_value());
    REQUIRE(outer.gpu_kernel_ns.has_value());
    INFO("spin: kernel " << *spin.gpu_kernel_ns << " ns, idle " << *spin.gpu_idle_ns << " ns, gpu_ns "
                         << spin.gpu_ns.value_or(0) << "; outer: idle " << *outer.gpu_idle_ns << " ns");
    CHECK(double(*spin.gpu_kernel_ns) >= 0.97 * kSpinNs);
    CHECK(double(*spin.gpu_kernel_ns) <= 1.03 * kSpinNs);
    CHECK(*spin.gpu_copy_ns == 0);
    CHECK(*spin.gpu_idle_ns < kSpinNs / 2);  // launch and event overhead only
    // The parent counts the child's kernel, and the host's sleep before the launch as idle.
    CHECK(*outer.gpu_kernel_ns == *spin.gpu_kernel_ns);
    CHECK(*outer.gpu_idle_ns >= kHostSleepNs);
  }
  rec.uninstall();
}
#endif
