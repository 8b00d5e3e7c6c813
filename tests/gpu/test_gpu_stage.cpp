// The CUDA backend's proving stage: proofs against the CPU's in both schedules, staged uploads,
// CUDA errors, and device faults mid-proof.
// Run on the GPU machine (skipped elsewhere, see gpu_main.cpp); every random input comes from a
// fresh seed printed with each case, so a failure can be replayed.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "cuda/testing/entry_points.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/circom/circom.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/engine/fault.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/interop/zkey.hpp"
#include "prover/msm/msm.hpp"
#include "prover/synth/synth.hpp"
#include "prover/util/thread_pool.hpp"
#include "gpu_test_util.hpp"

namespace {

struct PorepFixture {
  std::vector<circuits::PorepCircuit> circuits;
  groth16::ProvingKey pk;
  std::vector<r1cs::ProvingAssignment<>> pas;
  PorepFixture(const circuits::PorepParams& P, uint32_t partitions) {
    for (uint32_t i = 0; i < partitions; ++i) circuits.push_back(circuits::PorepCircuit::generate(P, 11 + i));
    pk = groth16::generate_keys(synth::record_matrices(circuits[0]), 5);
    pas = synth::synthesize_partitions(circuits);
  }
  std::vector<groth16::Witness> witnesses() const {
    std::vector<groth16::Witness> ws;
    for (auto& pa : pas) ws.push_back({pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()});
    return ws;
  }
};

// 3 partitions with a labeling layer (SHA-256 bits: 0/1 scalars, and Poseidon field elements),
// r and s from a fresh seed, and the CPU backend's proofs to compare with.
struct PorepBatch {
  PorepFixture f{{2, 1, 1, 4}, 3};
  uint64_t seed = fresh_seed();
  std::vector<groth16::Witness> ws = f.witnesses();
  std::vector<groth16::Randomness> rs;
  std::vector<groth16::Proof> cpu;
  PorepBatch() {
    for (size_t i = 0; i < ws.size(); ++i) rs.push_back(groth16::Randomness::from_seed(seed + i));
    cpu = groth16::make_cpu_backend()->prove_batch(f.pk, ws, rs);
  }
};

}  // namespace

TEST_CASE("GPU proofs of the PoRep-shaped circuit verify, equal the CPU's, and pinning changes nothing") {
  PorepBatch batch;
  INFO("r, s seed " << batch.seed);
  const auto& [f, seed, ws, rs, cpu] = batch;
  auto pageable = cuda::make_cuda_backend({})->prove_batch(f.pk, ws, rs);
  auto pinned = cuda::make_cuda_backend({.pin_abc = true})->prove_batch(f.pk, ws, rs);
  // The assignment's MSMs at another window width (the benchmarks' zc axis) give the same proofs.
  auto narrow = cuda::make_cuda_backend({.assignment_window_bits = 5})->prove_batch(f.pk, ws, rs);
  auto bits12 = cuda::make_cuda_backend({.assignment_window_bits = 12})->prove_batch(f.pk, ws, rs);
  // msm_h at windows wider and narrower than its rule's (the benchmarks' hc axis), in the
  // overlapped schedule too.
  auto h_wide = cuda::make_cuda_backend({.h_window_bits = 20})->prove_batch(f.pk, ws, rs);
  auto h_narrow = cuda::make_cuda_backend({.overlap = true, .h_window_bits = 5})->prove_batch(f.pk, ws, rs);
  // Each assignment MSM sorting its own digits, as before the shared sort.
  auto own_sort = cuda::make_cuda_backend({.share_digits = false})->prove_batch(f.pk, ws, rs);
  // Every digit sorted, zeros included, as before zero digits were left out.
  auto all_digits = cuda::make_cuda_backend({.skip_zero_digits = false})->prove_batch(f.pk, ws, rs);
  REQUIRE(cpu.size() == ws.size());
  for (size_t i = 0; i < ws.size(); ++i) {
    INFO("partition " << i);
    CHECK(groth16::verify(f.pk.vk, pageable[i], f.circuits[i].public_inputs()));
    CHECK(pageable[i] == cpu[i]);
    CHECK(pinned[i] == pageable[i]);
    CHECK(narrow[i] == pageable[i]);
    CHECK(own_sort[i] == pageable[i]);
    CHECK(all_digits[i] == pageable[i]);
    CHECK(bits12[i] == pageable[i]);
    CHECK(h_wide[i] == pageable[i]);
    CHECK(h_narrow[i] == pageable[i]);
  }
  for (unsigned bad : {1u, 21u}) {
    INFO("window bits " << bad);
    CHECK_THROWS_AS(cuda::make_cuda_backend({.assignment_window_bits = bad}), std::invalid_argument);
    CHECK_THROWS_AS(cuda::make_cuda_backend({.h_window_bits = bad}), std::invalid_argument);
  }
  for (const cuda::StagedUploadOptions& bad : {cuda::StagedUploadOptions{.threads = 257}, cuda::StagedUploadOptions{.buffer_bytes = (size_t(1) << 30) + 1},
                                   cuda::StagedUploadOptions{.buffers = 65}})
    CHECK_THROWS_AS(cuda::make_cuda_backend({.staged_upload = bad}), std::invalid_argument);
  // The backend from the registry (the build's pinning choice) agrees too. Every CUDA backend
  // here runs msm_b_g2 where this build puts it (CUZK_GPU_G2): the phases say which path ran.
  cuda::register_backend();
  PhaseLog log;
  instr::set_sink(&log);
  auto reg = groth16::make_backend("cuda")->prove_batch(f.pk, ws, rs);
  instr::set_sink(nullptr);
  CHECK(reg == cpu);
  const bool g2_on_gpu = cuda::msm_b_g2_on_gpu();
  INFO("msm_b_g2 ran " << (g2_on_gpu ? "on the GPU (CUZK_GPU_G2=ON)" : "on CPU threads (CUZK_GPU_G2=OFF)"));
  CHECK(g2_on_gpu == bool(CUZK_GPU_G2));  // the library and this test were built with one flag
  CHECK(log.opened["msm_b_g2"] == ws.size());
  CHECK(log.gpu["msm_b_g1"] == ws.size());
  CHECK(log.gpu["msm_b_g2"] == (g2_on_gpu ? ws.size() : 0));  // GPU time only from the device
}

TEST_CASE("staged uploads copy every byte: empty, one byte, buffer edges, many turns of the ring, page-locked") {
  std::mt19937_64 g(fresh_seed());
  constexpr size_t kBuf = 4096;
  // Both fills; per thread, more threads than pieces (len <= kBuf), pieces spread over several
  // threads' rings, and rings that turn many times (3 MiB: 768 pieces).
  for (cuda::Fill fill : {cuda::Fill::split, cuda::Fill::per_thread})
    for (unsigned threads : {2u, 5u})
      for (size_t len : {size_t(0), size_t(1), kBuf - 1, kBuf, kBuf + 1, 10 * kBuf + 3, size_t(3) << 20}) {
        INFO("fill " << (fill == cuda::Fill::split ? "split" : "per_thread") << ", threads " << threads << ", bytes " << len);
        std::vector<uint8_t> src(len);
        for (auto& b : src) b = uint8_t(g());
        for (unsigned buffers : {2u, 3u})
          CHECK(cuda::staged_round_trip(src, {.fill = fill, .threads = threads, .buffer_bytes = kBuf, .buffers = buffers}) == src);
      }
  std::vector<uint8_t> src(10 * kBuf + 3);
  for (auto& b : src) b = uint8_t(g());
  cuda::HostPin pin(src.data(), src.size());
  CHECK(cuda::staged_round_trip(src, {.buffer_bytes = kBuf}) == src);
}

// The overlapped schedule (CUZK_GPU_OVERLAP; here set per backend): an upload thread on a copy
// stream, the assignment first, a, b, c while its MSMs run, the next circuit's assignment into a
// second buffer. Same r and s: the same proofs as the CPU backend's, pinned or not, for a
// batch (the two z buffers in turn, a, b, c reused) and for one circuit.
TEST_CASE("the overlapped proving stage's proofs equal the CPU's; its phases and errors") {
  PorepBatch batch;
  INFO("r, s seed " << batch.seed);
  const auto& [f, seed, ws, rs, cpu] = batch;
  // Pageable inputs staged in pieces of 4 KiB too, both fills (StageOptions::upload), so that a
  // circuit's arrays cross several staging buffers and threads.
  // The last case's MSMs sum their buckets in equal chunks (StageOptions::equal_chunks).
  struct Case {
    bool pin;
    cuda::StagedUploadOptions upload;
    bool equal = false;
  };
  for (const Case& c : {Case{false, {}}, Case{true, {}}, Case{false, {.fill = cuda::Fill::split, .threads = 3, .buffer_bytes = 4096}},
                        Case{false, {.fill = cuda::Fill::per_thread, .threads = 3, .buffer_bytes = 4096}},
                        Case{false, {}, true}}) {
    const bool pin = c.pin;
    INFO("pin_abc " << pin << ", staging " << (c.upload.fill == cuda::Fill::split ? "split" : "per_thread") << " in "
                    << c.upload.buffer_bytes << " bytes (0: the default), equal chunks " << c.equal);
    auto be = cuda::make_cuda_backend({.pin_abc = pin, .overlap = true, .equal_chunks = c.equal, .staged_upload = c.upload});
    PhaseLog log;
    instr::set_sink(&log);
    auto got = be->prove_batch(f.pk, ws, rs);
    instr::set_sink(nullptr);
    CHECK(got == cpu);
    // h2d: the assignment (with the key, the first time) and a, b, c, each timed on the copy
    // stream and reported once per circuit; pin_abc opened for each array and the unpinning.
    CHECK(log.gpu["h2d"] == ws.size());
    CHECK(log.opened["h2d"] == 4 * ws.size());
    CHECK(log.opened["srs"] == 1);
    CHECK(log.opened["pin_abc"] == (pin ? 4 * ws.size() : 0));
    for (const char* ph : {"ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1"}) {
      INFO(ph);
      CHECK(log.gpu[ph] == ws.size());
    }
    CHECK(log.gpu["digits"] == ws.size());  // msm_l/digits: the assignment sorted once per circuit
    // The key stays resident; one circuit alone proves the same.
    for (size_t i = 0; i < ws.size(); ++i)
      CHECK(be->prove_batch(f.pk, std::span(ws).subspan(i, 1), std::span(rs).subspan(i, 1))[0] == cpu[i]);
  }
  // Errors on either thread: in h2d (the upload thread) and in msm_l (the compute thread, while
  // the upload thread still copies a, b, c or the next assignment). The error reaches the
  // caller as it was thrown, and the next job proves.
  const FaultReset reset;
  auto be = cuda::make_cuda_backend({.overlap = true});
  fault::set_for_testing("cuda_error_at:h2d");
  try {
    be->prove_batch(f.pk, ws, rs);
    FAIL("the injected CUDA error in h2d did not fail the job");
  } catch (const cuda::CudaError& e) {
    CHECK(std::string(e.what()).find("CUDA error in h2d") != std::string::npos);
  }
  fault::set_for_testing("cuda_oom_at:msm_l");
  CHECK_THROWS_AS(be->prove_batch(f.pk, ws, rs), cuda::DeviceOutOfMemory);
  fault::set_for_testing("");
  CHECK(be->prove_batch(f.pk, ws, rs) == cpu);
}

// The proving stage at the size of a real PoRep partition (2^27 constraints, about 130M). A
// proof at that size cannot be checked against a setup: the setup of a 2^27 domain (2^27 fixed-
// base multiplications per query) takes far longer than a test, and the small real circuits
// have keys of their own small domain. So the key is the bench-only one of the stage benchmark
// (random points repeated from a table of 2^20; prover/circuits/synthetic_partition.hpp), and
// what is checked instead:
//  - A and B exactly: with point i = T[i mod 2^20], sum_i z_i P_i = sum_j T[j] (sum_{i = j mod
//    2^20} z_i), a 2^20-point MSM on the CPU over the folded assignment; so A = alpha + that sum
//    (A query) + r delta, and B likewise in G2 (msm_a and msm_b_g2 at full size, on the device
//    or, without CUZK_GPU_G2, on CPU threads);
//  - C: the serial and the overlapped schedules give the same proof (msm_h, msm_l and msm_b_g1
//    enter only C; H at 2^27 rests on the NTT test above, the MSM on the tests of every size).
TEST_CASE("the proving stage at 2^27: A and B equal sums over the repeated table; both schedules agree", "[large]") {
  constexpr unsigned kLog = 27, kTable = 20;
  std::unique_ptr<circuits::SyntheticPartition> part;
  try {
    part = circuits::make_synthetic_partition(kLog, kTable);
  } catch (const std::bad_alloc&) {
    WARN("not run: the 2^27 partition does not fit this host's memory");
    return;
  }
  const groth16::ProvingKey& pk = part->pk;
  const groth16::Witness w = part->witness();
  const size_t n = size_t(1) << kLog, t = size_t(1) << kTable;
  REQUIRE(pk.num_inputs + pk.num_aux == n);
  // The assignment folded onto the table.
  std::vector<fr_t> folded(t);
  ThreadPool::global().parallel_for(t, [&](size_t b, size_t e) {
    for (size_t j = b; j < e; ++j) {
      fr_t acc = fr_t::zero();
      for (size_t i = j; i < n; i += t) acc += i < w.input.size() ? w.input[i] : w.aux[i - w.input.size()];
      folded[j] = acc;
    }
  });
  const auto rs = groth16::Randomness::from_seed(fresh_seed());
  const auto& vk = pk.vk;
  const g1_affine_t want_a =
      (msm_g1(std::span(pk.a_query.data(), t), folded) + vk.alpha_g1 + vk.delta_g1.to_jacobian().mul(rs.r)).to_affine();
  const g2_affine_t want_b =
      (msm_g2(std::span(pk.b_g2_query.data(), t), folded) + vk.beta_g2 + vk.delta_g2.to_jacobian().mul(rs.s)).to_affine();
  std::optional<groth16::Proof> serial;
  // The serial and overlapped schedules, and the overlapped one with every MSM's bucket sums in
  // equal chunks across buckets (StageOptions::equal_chunks).
  for (auto [overlap, equal] : {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    INFO("overlapped " << overlap << ", equal chunks " << equal);
    groth16::Proof p;
    try {
      p = cuda::make_cuda_backend({.overlap = overlap, .equal_chunks = equal})->prove(pk, w, rs);  // one resident key at a time
    } catch (const cuda::DeviceOutOfMemory& e) {
      WARN("not run: the 2^27 proving stage does not fit this device: " << e.what());
      return;
    }
    CHECK(p.a == want_a);
    CHECK(p.b == want_b);
    if (serial) CHECK(p == *serial);
    serial = p;
  }
}

TEST_CASE("a GPU proof of the circom fixture verifies and equals the CPU's") {
  const std::string dir = std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/";
  auto z = interop::read_zkey(dir + "snarkjs/small.zkey");
  auto wires = circom::read_wtns(dir + "circom/small.wtns");
  auto abc = interop::compute_abc(z, wires, "small.wtns");
  auto w = interop::make_witness(z, wires, abc);
  const auto rs = groth16::Randomness::from_seed(fresh_seed());
  auto gpu = cuda::make_cuda_backend({})->prove(z.pk, w, rs);
  auto cpu = groth16::prove_cpu(z.pk, w, rs);
  std::vector<fr_t> publics(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  CHECK(groth16::verify(z.pk.vk, gpu, publics));
  CHECK(gpu == cpu);
}

TEST_CASE("CUDA errors are exceptions naming what was needed") {
  // Mismatched lengths (no points, three scalars) are refused before anything is uploaded.
  std::vector<g1_affine_t> none;
  std::vector<fr_t> sc(3, fr_t::one());
  CHECK_THROWS_AS(cuda::msm_g1(none, sc), std::invalid_argument);
  // An allocation larger than the device reports DeviceOutOfMemory with what and the sizes.
  const cuda::DeviceInfo d = cuda::probe_device();
  try {
    cuda::try_device_alloc(d.total_bytes + (size_t(1) << 30), "the test's oversized buffer");
    FAIL("an allocation over the device's " << d.total_bytes << " bytes succeeded");
  } catch (const cuda::DeviceOutOfMemory& e) {
    const std::string msg = e.what();
    CHECK(msg.find("device out of memory") != std::string::npos);
    CHECK(msg.find("the test's oversized buffer") != std::string::npos);
    CHECK(msg.find("free of") != std::string::npos);
  }
  // The device is usable afterwards.
  std::vector<fr_t> one(1, fr_t::one());
  CHECK(cuda::fr_mul(one, one)[0] == fr_t::one());
}

// Fault injection on the device (docs/reliability.md): a job that runs out of device memory or
// hits a CUDA error mid-stage fails with the reason, gives back every device buffer it held,
// and the same backend proves the next job. Run alone: `test_gpu "[faults]"`.
TEST_CASE("a key held on the device proves without its host points, in both schedules, until released") {
  PorepBatch batch;
  INFO("r, s seed " << batch.seed);
  const auto& [f, seed, ws, rs, cpu] = batch;
  for (bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    auto be = cuda::make_cuda_backend({.overlap = overlap});
    const groth16::ProvingKey marked = groth16::with_residency(f.pk);
    const groth16::HostQueries host = be->hold_key(marked);
    // Only the G2 query stays on the host, and only where msm_b_g2 runs on CPU threads.
    CHECK(host == groth16::HostQueries{false, false, !cuda::msm_b_g2_on_gpu(), false, false});
    const groth16::ProvingKey dropped = groth16::keep_host_queries(marked, host);
    CHECK_FALSE(dropped.h_query.has_points());
    CHECK(be->prove_batch(dropped, ws, rs) == cpu);
    // Once the device lets the key go, the copy without points cannot be uploaded again: a
    // clear error, no crash.
    be->release(dropped);
    CHECK_THROWS_WITH(be->prove_batch(dropped, ws, rs), Catch::Matchers::Contains("upload of the key") &&
                                                           Catch::Matchers::Contains("load or generate the key again"));
    CHECK(be->prove_batch(f.pk, ws, rs) == cpu);  // the whole key still proves
  }
}

TEST_CASE("a device fault mid-proof fails the job, frees device memory, and the next job proves", "[faults]") {
  // A circuit whose key and a/b/c take tens of MiB on the device, so that a leak would show
  // beyond cudaMemGetInfo's granularity (2 MiB pages).
  circuits::PorepParams P{1, 0, 0, 8};
  while (circuits::PorepCircuit::shape(P).constraints < (1u << 16) && P.challenges < 64) P.challenges *= 2;
  PorepFixture f(P, 1);
  auto ws = f.witnesses();
  const std::vector<groth16::Randomness> rs{groth16::Randomness::from_seed(fresh_seed())};
  constexpr size_t kSlack = size_t(4) << 20;
  const FaultReset reset;

  auto be = cuda::make_cuda_backend(cuda::build_stage_options());
  const size_t free0 = cuda::probe_device().free_bytes;

  // A CUDA error in ntt_h: the key and a/b/c are on the device by then.
  fault::set_for_testing("cuda_error_at:ntt_h");
  try {
    be->prove_batch(f.pk, ws, rs);
    FAIL("the injected CUDA error did not fail the job");
  } catch (const cuda::CudaError& e) {
    CHECK(std::string(e.what()).find("CUDA error in ntt_h") != std::string::npos);
    CHECK(std::string(e.what()).find("injected") != std::string::npos);
  }
  const size_t free1 = cuda::probe_device().free_bytes;
  CHECK(free1 + kSlack >= free0);

  // The next job on the same backend proves and verifies; its buffers stay resident.
  auto ok = be->prove_batch(f.pk, ws, rs);
  REQUIRE(ok.size() == 1);
  CHECK(groth16::verify(f.pk.vk, ok[0], f.circuits[0].public_inputs()));
  const size_t free2 = cuda::probe_device().free_bytes;
  INFO("free: fresh " << free0 << ", after the error " << free1 << ", after a proof " << free2);
  REQUIRE(free2 + 4 * kSlack < free0);  // the job's footprint is visible: a leak could be seen

  // Out of device memory in msm_h, and with CUZK_GPU_G2 in msm_b_g2 (a GPU phase then, whose G2
  // query and MSM buffers shared with the G1 MSMs must go too): DeviceOutOfMemory, everything is
  // given back again, and the next job proves.
  std::vector<std::string> oom_at = {"msm_h"};
  if (cuda::msm_b_g2_on_gpu()) oom_at.push_back("msm_b_g2");
  for (const std::string& phase : oom_at) {
    INFO("out of memory in " << phase);
    fault::set_for_testing("cuda_oom_at:" + phase);
    CHECK_THROWS_AS(be->prove_batch(f.pk, ws, rs), cuda::DeviceOutOfMemory);
    const size_t free3 = cuda::probe_device().free_bytes;
    INFO("after the out-of-memory " << free3);
    CHECK(free3 + kSlack >= free0);
    fault::set_for_testing("");
    auto again = be->prove_batch(f.pk, ws, rs);
    CHECK(again == ok);  // same r, s: the same proof
  }
}

// The engine (through `cuzk-bench engine --backend cuda`) reports the failed job and serves the
// others.
TEST_CASE("cuzk-bench engine on the GPU keeps serving after an injected out-of-memory", "[faults]") {
  const char* bench = std::getenv("CUZK_BENCH");
  if (!bench || !*bench) {
    WARN("CUZK_BENCH is not set (ctest sets it): not run");
    return;
  }
  char tmpl[] = "/tmp/cuzk-gpu-fault-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string cmd = "cd '" + dir + "' && CUZK_INJECT_FAULT=cuda_oom_at:msm_h '" + bench +
                          "' engine --backend cuda --jobs 3 --partitions 1 --challenges 1 --depth 4 --counters '' "
                          "--out e.jsonl >out.txt 2>err.txt";
  const int st = std::system(cmd.c_str());
  auto slurp = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string out = slurp("out.txt"), err = slurp("err.txt"), results = slurp("e.jsonl");
  INFO(out << err);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 1);
  CHECK(out.find("1 JOB(S) FAILED") != std::string::npos);
  CHECK(err.find("device out of memory in msm_h") != std::string::npos);
  size_t samples = 0;
  for (size_t p = results.find("\"type\":\"sample\""); p != std::string::npos; p = results.find("\"type\":\"sample\"", p + 1))
    ++samples;
  CHECK(samples == 2);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // best effort: a leftover temporary folder fails nothing
}
