// GPU benchmarks (current figures: docs/cuda-backend.md#current-figures): G1 MSM from pinned and pageable host
// memory, the G2 MSM on the device beside the CPU's on the same input, the device NTT, and the
// proving stage of one synthetic partition with the CUDA backend (pinned and pageable) and, at a
// size both can do, the CPU backend in the same run.
//
// The synthetic partition (prover/circuits/synthetic_partition.hpp, shared with the suites'
// "stage" kind): a key of random points (not from a setup: proofs are not checked here,
// tests/gpu/ checks them) and a witness whose a, b, c are random and whose assignment has the
// value mix of the PoRep-shaped circuit with one labeling layer (measured on first use: the
// shares of 0, 1 and other values), since the MSMs' cost depends on it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/testing/entry_points.hpp"
#include "cuda/msm/msm.cuh"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/instr/phase.hpp"
#include "prover/msm/msm.hpp"

using namespace cuzk;

namespace {

using Clock = std::chrono::steady_clock;

using circuits::random_scalars;

// The witness's value mix on MSM scalars: 51.6% zero, 47.0% one, the rest as they were (one
// huge bucket, as msm_b_g1 and msm_b_g2 see it).
void to_witness_mix(std::vector<fr_t>& sc) {
  std::mt19937_64 g(9);
  for (auto& x : sc) {
    const auto r = g() % 1000;
    if (r < 516) x = fr_t::zero();
    else if (r < 986) x = fr_t::one();
  }
}

// One point set per group and size for the MSM benchmarks, made once (the library's generator,
// prover/circuits/synthetic_partition.hpp: the same points as before it moved there).
template <class Affine>
const std::vector<Affine>& cached_points(size_t n, std::vector<Affine> (*make)(size_t, uint64_t), uint64_t seed) {
  static std::map<size_t, std::vector<Affine>> cache;
  auto& pts = cache[n];
  if (pts.empty()) pts = make(n, seed);
  return pts;
}
// Above 2^24 the G1 points are the 2^24 set repeated (point i = set[i mod 2^24], materialized):
// generating 2^26 distinct points would cost minutes, and with random scalars a point's copies
// share a bucket about once per 2^15 digits, so the MSM's work is that of distinct points.
constexpr unsigned kG1DistinctLog = 24;
std::vector<g1_affine_t> repeated_g1_points(size_t n, uint64_t seed);
const std::vector<g1_affine_t>& g1_points(size_t n) {
  return cached_points(n, n > (size_t(1) << kG1DistinctLog) ? &repeated_g1_points : &circuits::random_g1_points, 1);
}
std::vector<g1_affine_t> repeated_g1_points(size_t n, uint64_t) {
  return circuits::repeat_points(g1_points(size_t(1) << kG1DistinctLog), n);
}
const std::vector<g2_affine_t>& g2_points(size_t n) { return cached_points(n, &circuits::random_g2_points, 4); }

// Field products per second (a chain of 256 products in each of 2^20 threads).
void BM_gpu_field_mul(benchmark::State& st) {
  const bool fp = st.range(0) != 0;
  double rate = 0;
  for (auto _ : st) {
    rate = cuda::field_mul_throughput(fp);
    st.SetIterationTime(double((size_t(1) << 20) * 256) / rate);
  }
  st.counters["Gmul_per_s"] = rate / 1e9;
}
BENCHMARK(BM_gpu_field_mul)->Arg(1)->Arg(0)->ArgName("fp")->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_gpu_msm_g1(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  const bool pinned = st.range(1) != 0;
  std::span<const g1_affine_t> pts(g1_points(n).data(), n);
  std::vector<fr_t> sc = random_scalars(n, 2);
  std::unique_ptr<cuda::HostPin> pin_p, pin_s;
  if (pinned) {
    pin_p = std::make_unique<cuda::HostPin>(pts.data(), pts.size_bytes());
    pin_s = std::make_unique<cuda::HostPin>(sc.data(), sc.size() * sizeof(fr_t));
  }
  cuda::DeviceMsmG1 msm;
  msm.upload(pts, sc);  // warm-up, as in BM_gpu_msm_g1_overlap
  benchmark::DoNotOptimize(msm.run());
  double up = 0, run = 0;
  for (auto _ : st) {
    auto t0 = Clock::now();
    msm.upload(pts, sc);
    benchmark::DoNotOptimize(msm.run());
    st.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
    up += msm.last_upload_ms();
    run += msm.last_run_gpu_ms();
  }
  st.counters["upload_ms"] = up / double(st.iterations());
  st.counters["msm_gpu_ms"] = run / double(st.iterations());
  st.counters["pinned"] = pinned;
}
BENCHMARK(BM_gpu_msm_g1)->ArgsProduct({{20, 22, 24}, {1, 0}})->ArgNames({"log_n", "pinned"})->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(5);

// The pinned upload overlapped with the MSM (DeviceMsmG1::upload_and_run): the input goes up in
// slices, each slice's scalars then its points, while the GPU sorts and sums the slices already
// there. Time = first copy to result. slices 0: the default count for the size; slices grow
// threefold (cuda/testing/entry_points.cu). Every MSM benchmark runs once untimed first: the first MSM in a
// process also loads the kernels (CUDA loads modules lazily), and a new DeviceMsmG1 grows its
// buffers.
// eq: the bucket sums in equal chunks across buckets or per bucket (DeviceMsmG1::set_equal_chunks;
// unset: its rule, equal chunks where buckets hold 128 digits or fewer).
void msm_g1_overlap(benchmark::State& st, size_t n, unsigned slices, bool pinned, unsigned c = 0,
                    std::optional<bool> eq = std::nullopt) {
  std::span<const g1_affine_t> pts(g1_points(n).data(), n);
  std::vector<fr_t> sc = random_scalars(n, 2);
  std::unique_ptr<cuda::HostPin> pin_p, pin_s;
  if (pinned) {
    pin_p = std::make_unique<cuda::HostPin>(pts.data(), pts.size_bytes());
    pin_s = std::make_unique<cuda::HostPin>(sc.data(), sc.size() * sizeof(fr_t));
  }
  cuda::DeviceMsmG1 msm;
  msm.set_equal_chunks(eq);
  benchmark::DoNotOptimize(msm.upload_and_run(pts, sc, c, slices));
  double run = 0;
  for (auto _ : st) {
    auto t0 = Clock::now();
    benchmark::DoNotOptimize(msm.upload_and_run(pts, sc, c, slices));
    st.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
    run += msm.last_run_gpu_ms();
  }
  st.counters["total_gpu_ms"] = run / double(st.iterations());
  st.counters["distinct_log"] = std::min<double>(double(st.range(0)), kG1DistinctLog);
}
void BM_gpu_msm_g1_overlap(benchmark::State& st) { msm_g1_overlap(st, size_t(1) << st.range(0), unsigned(st.range(1)), true); }
// The same across window bits c, the cut by the rule, which each slice's plan applies to its own
// digits (2 slices, n/4 and 3n/4: at 2^24 equal chunks in both from 18 bits, in the first only
// at 16; at 2^26 in both at 20 bits, in the first only at 19): the G1 target's measure at 2^24
// from the former rule's 16 bits to the rule's 20, and at 2^26 the former widths (16, 19) and the
// rule's (20).
void BM_gpu_msm_g1_overlap_window(benchmark::State& st) {
  msm_g1_overlap(st, size_t(1) << st.range(0), 0, true, unsigned(st.range(1)));
}
BENCHMARK(BM_gpu_msm_g1_overlap_window)->ArgsProduct({{24}, {16, 18, 19, 20}})->ArgsProduct({{26}, {16, 19, 20}})
    ->ArgNames({"log_n", "c"})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
// The same with the bucket sums in equal chunks across buckets (eq 1) or each bucket's run in
// chunks of its own (eq 0, the former only cut), either way whatever the rule says, in
// one process: the G1 target's measure at 2^24, where wider windows leave buckets of 32-128
// points whose last chunks are short, and at 2^26.
void BM_gpu_msm_g1_overlap_equal(benchmark::State& st) {
  msm_g1_overlap(st, size_t(1) << st.range(0), 0, true, unsigned(st.range(1)), st.range(2) != 0);
}
BENCHMARK(BM_gpu_msm_g1_overlap_equal)->ArgsProduct({{24}, {16, 18, 20}, {0, 1}})->ArgsProduct({{26}, {19, 20}, {0, 1}})
    ->ArgNames({"log_n", "c", "eq"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
// 2^26 (compared with sppark: docs/cuda-backend.md#current-figures): points repeated from the 2^24 set (see
// g1_points), pinned as at 2^24.
BENCHMARK(BM_gpu_msm_g1_overlap)->ArgsProduct({{20, 22, 24}, {0, 1, 2, 3}})->ArgsProduct({{24}, {4, 5}})
    ->ArgsProduct({{26}, {0}})
    ->ArgNames({"log_n", "slices"})->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(5);

// The same from pageable host memory (BM_gpu_msm_g1's pinned:0 input): the slices go up through
// the uploader's pinned staging buffers (cuda/stage/staged_upload.cuh), filled by host threads while the
// GPU sums the slices already there, instead of the driver's pageable copies before the MSM.
void BM_gpu_msm_g1_staged(benchmark::State& st) { msm_g1_overlap(st, size_t(1) << st.range(0), unsigned(st.range(1)), false); }
BENCHMARK(BM_gpu_msm_g1_staged)->ArgsProduct({{20, 22, 24, 26}, {0}})->ArgsProduct({{24}, {1, 3}})
    ->ArgNames({"log_n", "slices"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

// The staging of pageable memory (cuda/stage/staged_upload.cuh) alone: 1 GiB, GB/s.
void staged_upload(benchmark::State& st, const cuda::StagedUploadOptions& staging) {
  double gbps = 0;
  for (auto _ : st) {
    const double g = cuda::staged_upload_gbps(size_t(1) << 30, staging);
    st.SetIterationTime(double(size_t(1) << 30) / (g * 1e9));
    gbps += g;
  }
  st.counters["GBps"] = gbps / double(st.iterations());
}
// All threads (0: StagedUploader::default_threads()) filling each of 4 pinned buffers of
// buffer_mib in turn (Fill::split, the stage's former way).
void BM_staged_upload(benchmark::State& st) {
  staged_upload(st, {.fill = cuda::Fill::split, .threads = unsigned(st.range(0)), .buffer_bytes = size_t(st.range(1)) << 20, .buffers = 4});
}
BENCHMARK(BM_staged_upload)->ArgsProduct({{0, 2, 4, 8, 12}, {16}})->ArgsProduct({{8}, {4, 64}})
    ->ArgNames({"threads", "buffer_mib"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
// Each thread filling 2 buffers of its own of buffer_mib (Fill::per_thread, the default).
void BM_staged_upload_per_thread(benchmark::State& st) {
  staged_upload(st, {.fill = cuda::Fill::per_thread, .threads = unsigned(st.range(0)), .buffer_bytes = size_t(st.range(1)) << 20, .buffers = 2});
}
BENCHMARK(BM_staged_upload_per_thread)->ArgsProduct({{4, 8, 12, 15}, {2, 4, 8}})
    ->ArgNames({"threads", "buffer_mib"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// The G1 MSM of 2^log_n points on resident data, GPU time: window bits c (0: the rule), on random
// scalars (mix 0) or the witness mix of msm_l, msm_a and msm_b_g1 (mix 1: most scalars 0 or 1,
// one huge bucket), with points per chunk `chunk` (0: the default) and the bucket sums in equal
// chunks across buckets or not (eq), the later rounds cut to fill the GPU or not (fill), the zero
// digits left out of the sort (skip_zero, as in the assignment's MSMs) or not.
void msm_g1_resident(benchmark::State& st, unsigned log_n, unsigned c, bool mix, uint32_t chunk, bool eq,
                     bool fill = true, bool skip_zero = false) {
  const size_t n = size_t(1) << log_n;
  std::span<const g1_affine_t> pts(g1_points(n).data(), n);
  std::vector<fr_t> sc = random_scalars(n, 2);
  if (mix) to_witness_mix(sc);
  cuda::DeviceMsmG1 msm;
  if (chunk) msm.set_chunk(chunk);
  msm.set_equal_chunks(eq);
  msm.set_fill_later_rounds(fill);
  msm.set_skip_zero_digits(skip_zero);
  msm.upload(pts, sc);
  benchmark::DoNotOptimize(msm.run(c));  // warm-up
  for (auto _ : st) {
    benchmark::DoNotOptimize(msm.run(c));
    st.SetIterationTime(msm.last_run_gpu_ms() / 1e3);
  }
}

// Points per thread in the bucket sums (MsmG1::set_chunk).
void BM_gpu_msm_chunk(benchmark::State& st) {
  msm_g1_resident(st, unsigned(st.range(0)), 0, st.range(2) != 0, uint32_t(st.range(1)), false);
}
BENCHMARK(BM_gpu_msm_chunk)->ArgsProduct({{24}, {16, 32, 64, 128, 256}, {0, 1}})->ArgNames({"log_n", "chunk", "mix"})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// The later rounds of the bucket sums cut to fill the GPU (fill 1, the default) or in chunks of
// 32 (fill 0, the former way), in one process: on the witness mix (mix 1) as the assignment's
// MSMs run it (cut per bucket, zero digits left out, 12 bits: the sparse rule's width for a
// PoRep partition at 2^24), where bucket 1 of window 0 holds about half the points, and on random
// scalars by the rule (mix 0).
void BM_gpu_msm_later_rounds(benchmark::State& st) {
  const bool mix = st.range(1) != 0;
  msm_g1_resident(st, unsigned(st.range(0)), mix ? 12 : 0, mix, 0, !mix, st.range(2) != 0, mix);
}
BENCHMARK(BM_gpu_msm_later_rounds)->ArgsProduct({{24}, {1, 0}, {0, 1}})->ArgNames({"log_n", "mix", "fill"})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

// Window width sweep.
void BM_gpu_msm_window(benchmark::State& st) {
  msm_g1_resident(st, unsigned(st.range(0)), unsigned(st.range(1)), st.range(2) != 0, 0, false);
}
BENCHMARK(BM_gpu_msm_window)->ArgsProduct({{20}, {10, 11, 12, 13, 14, 16}, {0}})
    ->ArgsProduct({{24}, {14, 15, 16, 17, 18, 19, 20}, {0}})->ArgsProduct({{24}, {10, 11, 12, 13, 14, 15, 16}, {1}})
    ->ArgNames({"log_n", "c", "mix"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// Equal chunks across buckets (eq 1, MsmG1::set_equal_chunks) against each bucket's run in
// chunks of its own (eq 0), across window bits and points per chunk (0: the cut's default, 32 a
// run or 64 equal).
void BM_gpu_msm_equal_chunks(benchmark::State& st) {
  msm_g1_resident(st, unsigned(st.range(0)), unsigned(st.range(1)), st.range(2) != 0, uint32_t(st.range(4)),
                  st.range(3) != 0);
}
// The sizes around 2^24 say where the width rule could take equal chunks at wider windows (points
// per bucket 32-128, where equal chunks paid at 2^24).
BENCHMARK(BM_gpu_msm_equal_chunks)->ArgsProduct({{24}, {16, 17, 18, 19, 20}, {0}, {0, 1}, {0}})
    ->ArgsProduct({{24}, {16, 20}, {0}, {1}, {32, 128}})->ArgsProduct({{24}, {12, 16}, {1}, {0, 1}, {0}})
    ->ArgsProduct({{22}, {14, 16, 17, 18}, {0}, {0, 1}, {0}})->ArgsProduct({{23}, {15, 16, 18, 19, 20}, {0}, {0, 1}, {0}})
    ->ArgsProduct({{25}, {16, 18, 19, 20}, {0}, {0, 1}, {0}})->ArgsProduct({{26}, {19, 20}, {0}, {0, 1}, {0}})
    ->ArgNames({"log_n", "c", "mix", "eq", "chunk"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// The G2 MSM on the device (msm_b_g2 of the CUZK_GPU_G2 variant) on resident data: the upload
// is outside the timed part (upload_ms beside it), the time is the GPU's (CUDA events), as
// msm_gpu_ms of BM_gpu_msm_g1. mix 0: random scalars; mix 1: the witness mix (most 0 or 1), the
// input msm_b_g2 has. c 0: the default window (gpu_msm_window_bits, G1's rule); the sweep at
// 2^24 says whether G2 wants a rule of its own. BM_cpu_msm_g2 runs the CPU's G2 MSM (the default
// variant's msm_b_g2) on the same points and scalars.
#if CUZK_GPU_G2  // the G2 device MSM exists only in the builds with the flag (cuda/msm/msm.cu)
void BM_gpu_msm_g2(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  const unsigned c = unsigned(st.range(2));
  const std::vector<g2_affine_t>& pts = g2_points(n);
  std::vector<fr_t> sc = random_scalars(n, 2);
  if (st.range(1)) to_witness_mix(sc);
  cuda::DeviceMsmG2 msm;
  msm.upload(pts, sc);
  benchmark::DoNotOptimize(msm.run(c));  // warm-up: module loading, buffer growth
  double run = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(msm.run(c));
    st.SetIterationTime(msm.last_run_gpu_ms() / 1e3);
    run += msm.last_run_gpu_ms();
  }
  st.counters["msm_gpu_ms"] = run / double(st.iterations());
  st.counters["upload_ms"] = msm.last_upload_ms();
}
BENCHMARK(BM_gpu_msm_g2)->ArgsProduct({{20, 22, 24}, {0, 1}, {0}})->ArgsProduct({{24}, {0, 1}, {13, 14, 15, 16, 17}})
    ->ArgsProduct({{24}, {1}, {10, 11, 12}})
    ->ArgNames({"log_n", "mix", "c"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
#endif

// The CPU's G2 MSM (every core) on BM_gpu_msm_g2's points and scalars: wall time.
void BM_cpu_msm_g2(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  const std::vector<g2_affine_t>& pts = g2_points(n);
  std::vector<fr_t> sc = random_scalars(n, 2);
  if (st.range(1)) to_witness_mix(sc);
  for (auto _ : st) benchmark::DoNotOptimize(msm_g2(pts, sc));
}
BENCHMARK(BM_cpu_msm_g2)->ArgsProduct({{20, 22, 24}, {0, 1}})->ArgNames({"log_n", "mix"})
    ->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

// Forward NTT on resident data, GPU time of one transform after one untimed; order 0: natural
// in and out (the last pass stores bit-reversed), 1: natural in and bit-reversed out (the DIF
// passes alone, as the H computation uses them). early 1: each pass launched while the one before
// it ends (NttPlan::early_launch, the default), 0: plain launches.
void BM_gpu_ntt_forward(benchmark::State& st) {
  const unsigned log_n = unsigned(st.range(0));
  const auto order = cuda::DeviceNtt::Order(st.range(1));
  cuda::NttPlan plan;
  plan.early_launch = st.range(2) != 0;
  cuda::DeviceNtt ntt(log_n, plan);
  ntt.upload(random_scalars(size_t(1) << log_n, 3));
  ntt.forward(order);
  for (auto _ : st) {
    ntt.forward(order);
    st.SetIterationTime(ntt.last_gpu_ms() / 1e3);
  }
}
BENCHMARK(BM_gpu_ntt_forward)->ArgsProduct({{20, 21, 22, 24, 26, 27}, {0, 1}, {1, 0}})->ArgNames({"log_n", "order", "early"})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

// The pass plans (cuda/ntt/ntt_plan.hpp): tiles of 2^10 or 2^11 elements, up to 8..10 stages per
// pass (11 was never the best with lazy values), 2..4 blocks of 256 threads per
// SM, natural order (the default rule is in cuda/ntt/ntt_params.hpp).
void BM_gpu_ntt_plan(benchmark::State& st) {
  const unsigned log_n = unsigned(st.range(0));
  const cuda::NttPlan plan{unsigned(st.range(1)), unsigned(st.range(2)), unsigned(st.range(3))};
  if (plan.max_stages > plan.tile_log) {
    st.SkipWithError("the tile cannot hold that many stages");
    return;
  }
  cuda::DeviceNtt ntt(log_n, plan);
  ntt.upload(random_scalars(size_t(1) << log_n, 3));
  ntt.forward();
  for (auto _ : st) {
    ntt.forward();
    st.SetIterationTime(ntt.last_gpu_ms() / 1e3);
  }
}
BENCHMARK(BM_gpu_ntt_plan)->ArgsProduct({{20, 22, 24, 26}, {10, 11}, {8, 9, 10}, {2, 3, 4}})
    ->ArgNames({"log_n", "tile_log", "max_stages", "occupancy"})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

// ---- the proving stage ----

// Per-phase wall and GPU time of the backend's scopes (the harness's Recorder does this for
// cuzk-bench; a benchmark needs only the sums).
class PhaseTotals : public instr::PhaseSink {
 public:
  struct Open {
    std::string path;
    Clock::time_point t0;
  };
  void* begin(const std::string& path) override { return new Open{path, Clock::now()}; }
  void end(void* token) override {
    auto* o = static_cast<Open*>(token);
    std::lock_guard lk(mu_);
    wall_[leaf(o->path)] += std::chrono::duration<double, std::milli>(Clock::now() - o->t0).count();
    delete o;
  }
  void gpu_time(const std::string& path, uint64_t ns) override {
    std::lock_guard lk(mu_);
    gpu_[leaf(path)] += double(ns) / 1e6;
  }
  std::map<std::string, double> wall_, gpu_;

 private:
  static std::string leaf(const std::string& p) { return p.substr(p.find('/') == std::string::npos ? 0 : p.find('/') + 1); }
  std::mutex mu_;
};

// The synthetic partition of 2^log_n constraints (prover/circuits/synthetic_partition.hpp; table_log
// 0: distinct points), made on first use and kept for the benchmarks that follow. The value mix
// it applies is printed on stderr once.
const circuits::SyntheticPartition& synthetic(unsigned log_n, unsigned table_log = 0) {
  static std::map<std::pair<unsigned, unsigned>, std::unique_ptr<circuits::SyntheticPartition>> cache;
  auto& slot = cache[{log_n, table_log}];
  if (slot) return *slot;
  static const bool mix_printed = [] {
    std::fprintf(stderr, "%s\n", circuits::describe_porep_value_mix().c_str());
    return true;
  }();
  (void)mix_printed;
  slot = circuits::make_synthetic_partition(log_n, table_log);
  return *slot;
}

void report_phases(benchmark::State& st, const PhaseTotals& t) {
  const double it = double(st.iterations());
  for (auto& [k, v] : t.wall_) st.counters[k + "_ms"] = v / it;
  for (auto& [k, v] : t.gpu_) st.counters[k + "_gpu_ms"] = v / it;
}

// zc: the window bits of the assignment's MSMs (StageOptions::assignment_window_bits; 0: the
// sparse rule, whose choice the counter assignment_bits reports).
// share: the assignment's digits sorted once for its MSMs (StageOptions::share_digits).
// upload: the staging of pageable inputs (StageOptions::upload).
// skip_zero: only non-zero digits sorted (StageOptions::skip_zero_digits).
// hc: the window bits of msm_h (StageOptions::h_window_bits; 0: the rule for full-width
// scalars, whose choice the counter h_bits reports).
// eq: every MSM's bucket sums in equal chunks across buckets or per bucket (StageOptions::equal_chunks;
// unset: the rule, equal chunks for msm_h at 2^23-2^26).
void prove_stage_cuda(benchmark::State& st, unsigned log_n, bool pinned, unsigned table_log, bool overlap,
                      unsigned zc = 0, bool share = true, cuda::StagedUploadOptions upload = {}, bool skip_zero = true,
                      unsigned hc = 0, std::optional<bool> eq = std::nullopt, bool fill = true) {
  const circuits::SyntheticPartition& s = synthetic(log_n, table_log);
  auto backend = cuda::make_cuda_backend({.pin_abc = pinned,
                                          .overlap = overlap,
                                          .assignment_window_bits = zc,
                                          .h_window_bits = hc,
                                          .share_digits = share,
                                          .skip_zero_digits = skip_zero,
                                          .equal_chunks = eq,
                                          .fill_later_rounds = fill,
                                          .staged_upload = upload});
  auto w = s.witness();
  st.counters["assignment_bits"] = zc ? zc : cuda::default_assignment_window_bits(w);
  st.counters["h_bits"] = hc ? hc : cuda::gpu_msm_window_bits(s.pk.h_query.size(), eq.value_or(true));
  auto rs = groth16::Randomness::from_seed(1);
  backend->prove(s.pk, w, rs);  // uploads the key's points (resident afterwards), warms up
  PhaseTotals totals;
  instr::set_sink(&totals);
  for (auto _ : st) {
    instr::Phase p("prove");
    benchmark::DoNotOptimize(backend->prove(s.pk, w, rs));
  }
  instr::set_sink(nullptr);
  report_phases(st, totals);
}
// BM_prove_stage_cuda: the serial schedule; BM_prove_stage_cuda_overlap: the overlapped one
// (CUZK_GPU_OVERLAP, cuda/stage/backend.cu), set per backend here so that both run in one binary.
void BM_prove_stage_cuda(benchmark::State& st) { prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, false); }
BENCHMARK(BM_prove_stage_cuda)->ArgsProduct({{20, 24}, {1, 0}})->ArgNames({"log_n", "pinned"})
    ->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
void BM_prove_stage_cuda_overlap(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, unsigned(st.range(2)));
}
BENCHMARK(BM_prove_stage_cuda_overlap)->ArgsProduct({{20, 24}, {1, 0}, {0}})
    ->ArgsProduct({{24}, {0}, {10, 11, 12, 13, 14, 16}})
    ->ArgNames({"log_n", "pinned", "zc"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// The same with every digit sorted, zeros included (skip_zero_digits off, the former way):
// zc 16 and share on is the stage as it was.
void BM_prove_stage_cuda_overlap_all_digits(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, unsigned(st.range(2)), true, {}, false);
}
BENCHMARK(BM_prove_stage_cuda_overlap_all_digits)->ArgsProduct({{24}, {0}, {0, 12, 16}})
    ->ArgNames({"log_n", "pinned", "zc"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// msm_h's window width (hc), the rest as by default: wider windows than the rule's 16 at 2^24
// mean fewer windows (13 at 20 bits), so fewer point additions, against more buckets to reduce
// (measured slower at 2^24 and faster at 2^26 and 2^27 for cuts per bucket, hence that rule's
// 19-20 bits there: docs/cuda-backend.md#msm-window-rule).
void BM_prove_stage_cuda_overlap_h_window(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, 0, true, {}, true, unsigned(st.range(2)));
}
BENCHMARK(BM_prove_stage_cuda_overlap_h_window)->ArgsProduct({{24}, {0}, {16, 18, 19, 20}})
    ->ArgNames({"log_n", "pinned", "hc"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// Every MSM's bucket sums in equal chunks across buckets (eq 1) or not (eq 0: the former stage,
// with msm_h's rule for cuts per bucket, 16 bits at 2^24), at
// msm_h's rule (hc 0) and at 20 bits, in one process; the rule's cut is BM_prove_stage_cuda_overlap.
void BM_prove_stage_cuda_overlap_equal(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, 0, true, {}, true, unsigned(st.range(2)),
                   st.range(3) != 0);
}
BENCHMARK(BM_prove_stage_cuda_overlap_equal)->ArgsProduct({{24}, {0}, {0, 20}, {0, 1}})
    ->ArgNames({"log_n", "pinned", "hc", "eq"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// The later rounds of every MSM's bucket sums cut to fill the GPU (fill 1, the default) or in
// chunks of the first round's size (fill 0, the former way), in one process.
void BM_prove_stage_cuda_overlap_later_rounds(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, 0, true, {}, true, 0, std::nullopt,
                   st.range(2) != 0);
}
BENCHMARK(BM_prove_stage_cuda_overlap_later_rounds)->ArgsProduct({{24}, {0}, {0, 1}})
    ->ArgNames({"log_n", "pinned", "fill"})->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
// The same with each assignment MSM sorting its own digits (share_digits off): the A/B of the
// shared sort, in one binary.
void BM_prove_stage_cuda_overlap_own_sort(benchmark::State& st) {
  prove_stage_cuda(st, unsigned(st.range(0)), st.range(1) != 0, 0, true, unsigned(st.range(2)), false);
}
BENCHMARK(BM_prove_stage_cuda_overlap_own_sort)->ArgsProduct({{24}, {0}, {0, 12}})
    ->ArgNames({"log_n", "pinned", "zc"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// The overlapped pageable stage with `threads` staging threads, each filling buffers of its own
// (split 0, the default) or all filling one buffer at a time (split 1, the former way):
// the upload of the assignment is what the compute stream waits for first.
void BM_prove_stage_cuda_overlap_staging(benchmark::State& st) {
  const cuda::Fill fill = st.range(3) ? cuda::Fill::split : cuda::Fill::per_thread;
  prove_stage_cuda(st, unsigned(st.range(0)), false, 0, true, unsigned(st.range(1)), true,
                   {.fill = fill, .threads = unsigned(st.range(2))});
}
BENCHMARK(BM_prove_stage_cuda_overlap_staging)->ArgsProduct({{24}, {0, 12}, {8, 12}, {0, 1}})
    ->ArgNames({"log_n", "zc", "threads", "split"})->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
// One real-size PoRep partition (2^27 constraints) with a bench-only key whose points repeat a
// table of 2^20 (the name says table:20): host memory holds 14.0 GB of G1 and 26.8 GB of G2
// points either way (104 and 200 bytes a point), but 2^27 distinct points take minutes of core
// time to generate (about 40 s more on 16 cores), and the MSMs' work does not depend on which
// points repeat (the scalars are random). Registered apart so that the 2^20 and 2^24 cases keep
// their names (distinct points, no table argument).
// The overlapped pageable case, the fastest at 2^24, also across the assignment's window bits (zc,
// as at 2^24), with every digit sorted (_all_digits), and across msm_h's window bits (hc; 16 is
// the rule's width for cuts per bucket up to 2^25, and the former width at every size).
// 2^25 and 2^26 use the same repeated table, for the window sweeps between 2^24 and 2^27.
// eq:1 (equal chunks across buckets in every MSM) at 2^25-2^27, by msm_h's rule and at hc 16; the
// rest with the cut by the rule.
[[maybe_unused]] const bool kStageLargeRegistered = [] {
  auto add = [](unsigned log_n, int overlap, int pinned, unsigned zc, bool skip_zero, unsigned hc = 0, bool eq = false) {
    const std::string base = overlap ? "BM_prove_stage_cuda_overlap" : "BM_prove_stage_cuda";
    benchmark::RegisterBenchmark((base + (skip_zero ? "" : "_all_digits") + "/log_n:" + std::to_string(log_n) +
                                  "/pinned:" + std::to_string(pinned) + "/table:20" +
                                  (zc ? "/zc:" + std::to_string(zc) : std::string()) +
                                  (hc ? "/hc:" + std::to_string(hc) : std::string()) + (eq ? "/eq:1" : ""))
                                     .c_str(),
                                 [log_n, pinned, overlap, zc, skip_zero, hc, eq](benchmark::State& st) {
                                   prove_stage_cuda(st, log_n, pinned != 0, 20, overlap != 0, zc, true, {}, skip_zero,
                                                    hc, eq ? std::optional<bool>(true) : std::nullopt);
                                 })
        ->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
  };
  for (int overlap : {0, 1})
    for (int pinned : {1, 0}) add(27, overlap, pinned, 0, true);
  for (unsigned log_n : {25u, 26u, 27u}) {
    if (log_n < 27) add(log_n, 1, 0, 0, true);
    for (unsigned zc : {12u, 13u, 14u, 15u, 16u}) add(log_n, 1, 0, zc, true);
    add(log_n, 1, 0, 16, false);
    for (unsigned hc : {16u, 18u, 19u, 20u}) add(log_n, 1, 0, 0, true, hc);
    for (unsigned hc : {0u, 16u}) add(log_n, 1, 0, 0, true, hc, true);
  }
  return true;
}();

// The same proof on both backends in one run: ratio = CPU time / GPU time.
void BM_prove_stage_cpu_vs_cuda(benchmark::State& st) {
  const unsigned log_n = unsigned(st.range(0));
  const circuits::SyntheticPartition& s = synthetic(log_n);
  auto gpu = cuda::make_cuda_backend({});
  auto cpu = groth16::make_cpu_backend();
  auto w = s.witness();
  auto rs = groth16::Randomness::from_seed(1);
  gpu->prove(s.pk, w, rs);
  double tc = 0, tg = 0;
  bool same = true;
  for (auto _ : st) {
    auto t0 = Clock::now();
    auto pc = cpu->prove(s.pk, w, rs);
    auto t1 = Clock::now();
    auto pg = gpu->prove(s.pk, w, rs);
    auto t2 = Clock::now();
    same &= pc == pg;
    tc += std::chrono::duration<double, std::milli>(t1 - t0).count();
    tg += std::chrono::duration<double, std::milli>(t2 - t1).count();
  }
  st.counters["cpu_ms"] = tc / double(st.iterations());
  st.counters["cuda_ms"] = tg / double(st.iterations());
  st.counters["cpu_over_cuda"] = tc / tg;
  st.counters["same_proof"] = same;
  if (!same) st.SkipWithError("the CPU and CUDA proofs differ");
}
BENCHMARK(BM_prove_stage_cpu_vs_cuda)->Arg(18)->Arg(20)->ArgName("log_n")->Unit(benchmark::kMillisecond)
    ->Iterations(2)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  const cuda::DeviceInfo d = cuda::probe_device();
  if (!d.available) {
    std::fprintf(stderr, "bench_gpu: no usable GPU: %s\n", d.reason.c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
