#include "tests/fuzz/entry_points.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/analysis/gbench.hpp"
#include "harness/analysis/matrix.hpp"
#include "harness/measure/results.hpp"
#include "harness/suite/suite.hpp"
#include "prover/circom/circom.hpp"
#include "prover/ec/serialize.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/interop/snarkjs_json.hpp"
#include "prover/interop/zkey.hpp"

namespace cuzk::fuzz {
namespace {

std::string text(Bytes d) { return std::string(reinterpret_cast<const char*>(d.data()), d.size()); }

// Runs `f`, swallowing only the reader's error type E.
template <class E, class F>
void expect(F&& f) {
  try {
    f();
  } catch (const E&) {
  }
}

// The parameter reader maps a file: the bytes go to an anonymous memory file, read through
// its /proc/self/fd path, so the reader runs unchanged (open, fstat, mmap).
class MemFile {
 public:
  explicit MemFile(Bytes d) : fd_(::memfd_create("cuzk-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    for (size_t done = 0; done < d.size();) {
      ssize_t k = ::write(fd_, d.data() + done, d.size() - done);
      if (k <= 0) throw std::runtime_error(std::string("write to memfd: ") + std::strerror(errno));
      done += size_t(k);
    }
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

template <class Affine, class Encode>
void roundtrip(Bytes d, decode_error (*decode)(const uint8_t*, size_t, Affine&, bool), Encode encode) {
  Affine p;
  if (decode(d.data(), d.size(), p, true) != decode_error::ok) return;
  std::vector<uint8_t> again(d.size());
  encode(p, again.data());
  if (std::memcmp(again.data(), d.data(), d.size()) != 0)
    throw std::logic_error("a decoded point encodes to other bytes (the decoder accepted a non-canonical encoding)");
}

}  // namespace

void parse_r1cs(Bytes d) {
  expect<circom::FormatError>([&] {
    circom::CircomCircuit c(circom::parse_r1cs(d, "fuzz.r1cs"));
    (void)c.size_hint();
  });
}
void parse_wtns(Bytes d) {
  expect<circom::FormatError>([&] { (void)circom::parse_wtns(d, "fuzz.wtns"); });
}
void parse_zkey(Bytes d) {
  expect<interop::ZkeyError>([&] { (void)interop::parse_zkey(d, "fuzz.zkey"); });
}
void parse_params(Bytes d) {
  MemFile f(d);
  expect<groth16::ParamsError>([&] { (void)groth16::load_params(f.path()); });
}
void parse_proof_json(Bytes d) {
  expect<interop::JsonError>([&] { (void)interop::proof_from_json(text(d), "proof.json"); });
}
void parse_public_json(Bytes d) {
  expect<interop::JsonError>([&] { (void)interop::public_from_json(text(d), "public.json"); });
}
void parse_vk_json(Bytes d) {
  expect<interop::JsonError>([&] { (void)interop::vk_from_json(text(d), "verification_key.json"); });
}
void parse_results(Bytes d) {
  expect<ResultsError>([&] { (void)cuzk::parse_results(text(d), "fuzz.jsonl"); });
}
void parse_suite(Bytes d) {
  expect<suite::SuiteError>([&] { (void)suite::parse_suite_text(text(d), "fuzz.toml"); });
}
void parse_gate(Bytes d) {
  expect<GateError>([&] { (void)parse_thresholds(text(d), "fuzz.toml"); });
}
void parse_gbench(Bytes d) {
  const std::string t = text(d);
  try {
    const nlohmann::json doc = parse_gbench_json(t);
    if (auto b = doc.is_object() ? doc.find("benchmarks") : doc.end(); b != doc.end() && b->is_array())
      for (const auto& entry : *b) (void)gbench_entry_problem(entry);
  } catch (const nlohmann::json::exception&) {
  } catch (const GbenchError&) {
  }
  // Then what `compare` makes of the same bytes: its tables of a Google Benchmark document (or,
  // for anything else, the results reader), where every problem must be a CompareError.
  expect<CompareError>([&] { (void)compare_detail::load_side_text("fuzz.json", t, CompareOptions{}); });
}
void parse_manifest(Bytes d) {
  expect<matrix::MatrixError>([&] { (void)matrix::parse_manifest(text(d), "manifest.json"); });
}

// A header declaring no counter and one sample of case "c" (phase proof/prove/msm_h), the lines
// a gpu_counters line follows in a real file.
constexpr const char* kGpuCountersPrefix =
    R"({"schema":"cuzk.results","version":1,"type":"header","tool":{"name":"cuzk-bench","version":"0.1.0"},)"
    R"("provenance":{"source_hash":"0","flags":{}},"machine":{},"counters":{"requested":[],"available":[],"unavailable":{}},)"
    R"("command_line":["fuzz"],"suite":"s"})"
    "\n"
    R"({"schema":"cuzk.results","version":1,"type":"sample","suite":"s","case":"c","parameters":{},"variant":"v",)"
    R"("repetition":0,"warmup":false,"phases":{"proof/prove/msm_h":{"wall_ns":5,"count":1,"gpu_ns":null,"counters":{}}}})"
    "\n";

void parse_gpu_counters(Bytes d) {
  std::string t = kGpuCountersPrefix + text(d);
  if (t.back() != '\n') t.push_back('\n');  // one line or more, whatever the input's last byte
  expect<ResultsError>([&] { (void)cuzk::parse_results(t, "fuzz.jsonl"); });
  expect<CompareError>([&] { (void)compare_detail::load_side_text("fuzz.jsonl", t, CompareOptions{}); });
}

void parse_g1(Bytes d) {
  roundtrip<g1_affine_t>(d, &g1_decode, [&](const g1_affine_t& p, uint8_t* out) {
    d.size() == g1_compressed_size ? g1_to_compressed(p, out) : g1_to_uncompressed(p, out);
  });
}
void parse_g2(Bytes d) {
  roundtrip<g2_affine_t>(d, &g2_decode, [&](const g2_affine_t& p, uint8_t* out) {
    d.size() == g2_compressed_size ? g2_to_compressed(p, out) : g2_to_uncompressed(p, out);
  });
}

std::span<const Target> targets() {
  static constexpr Target kTargets[] = {
      {"r1cs", parse_r1cs},       {"wtns", parse_wtns},           {"zkey", parse_zkey},
      {"params", parse_params},   {"proof_json", parse_proof_json}, {"public_json", parse_public_json},
      {"vk_json", parse_vk_json}, {"results", parse_results},     {"suite", parse_suite},
      {"gate", parse_gate},       {"gbench", parse_gbench},       {"g1", parse_g1},
      {"g2", parse_g2},           {"manifest", parse_manifest},   {"gpu_counters", parse_gpu_counters},
  };
  return kTargets;
}

}  // namespace cuzk::fuzz
