#include "harness/suite/sector_job.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "harness/suite/porep_job.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/util/process_limits.hpp"

namespace cuzk {
namespace {

double sector_gib(uint64_t bytes) { return double(bytes) / double(uint64_t(1) << 30); }

nlohmann::json opt_json(const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

uint64_t default_sector_budget(uint64_t key_bytes) {
  const std::optional<uint64_t> room = limits::memory_headroom(limits::read_memory_limits());
  if (!room) return 0;
  // At least one byte: 0 would mean unlimited; a budget this small is refused with its numbers.
  if (*room <= key_bytes) return 1;
  return std::max<uint64_t>((*room - key_bytes) / 4 * 3, 1);
}

uint64_t parse_budget_gib(const std::string& text, const std::string& flag) {
  double v = 0;
  size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v <= 0 || v > 1e9)
    throw std::invalid_argument(fmt::format("{} '{}': expected a positive number of GiB (e.g. 64 or 0.5)", flag, text));
  return uint64_t(v * double(uint64_t(1) << 30));
}

engine::SectorPlan sector_job_plan(const SectorJobSpec& spec) {
  const engine::SectorShape& shape = engine::sector_shape(spec.shape);
  const uint32_t present = groth16::backend_device_count(spec.backend);
  if (present == 0) throw std::invalid_argument(fmt::format("backend '{}' has no device here", spec.backend));
  const uint32_t devices = engine::choose_device_count(spec.gpus, present, spec.backend);
  const r1cs::ShapeCounts counts = circuits::porep_shape_by_parts(shape.circuit);
  // A key generated in memory is held on the devices, and the host keeps only what their
  // backend reads there; a key from a file is mapped, its pages the kernel's to reclaim.
  const bool in_memory = sector_params_in_memory(shape.circuit, engine::estimate_key_bytes(counts), spec);
  const groth16::HostQueries host = in_memory ? groth16::backend_held_host_queries(spec.backend) : groth16::HostQueries{};
  const uint64_t key = engine::estimate_key_host_bytes(counts, host);
  const uint64_t budget = spec.budget_bytes ? *spec.budget_bytes : default_sector_budget(key);
  engine::SectorPlan plan = engine::plan_sector(shape.circuit, shape.partitions, budget, devices, spec.synth_threads,
                                                    spec.partition_threads);
  plan.key_host = host;
  plan.key_host_bytes = key;
  plan.key_in_memory = in_memory;
  if (!spec.budget_bytes && budget != 0) {
    const uint64_t room = limits::memory_headroom(limits::read_memory_limits()).value_or(0);
    plan.budget_note = fmt::format(
        "default: 3/4 of what this process may use, {:.2f} GiB, once the {:.2f} GiB the host keeps of the parameters "
        "are taken off{}",
        sector_gib(room), sector_gib(key), room <= key ? ": nothing is left" : "");
  }
  return plan;
}

namespace {
bool params_missing(const circuits::PorepParams& circuit, const SectorJobSpec& spec) {
  return spec.params_file.empty() && !std::filesystem::exists(porep_params_cache_path(circuit, spec.params_seed));
}
}  // namespace

bool sector_params_missing(const engine::SectorPlan& plan, const SectorJobSpec& spec) {
  return (spec.params_in_memory && spec.params_file.empty()) || params_missing(plan.circuit, spec);
}

bool sector_params_in_memory(const circuits::PorepParams& circuit, uint64_t key_bytes, const SectorJobSpec& spec) {
  if (spec.params_in_memory && spec.params_file.empty()) return true;
  if (!params_missing(circuit, spec)) return false;
  const std::string cache = porep_params_cache_path(circuit, spec.params_seed);
  std::error_code ec;
  const auto space = std::filesystem::space(std::filesystem::path(cache).parent_path(), ec);
  const uint64_t margin = uint64_t(1) << 30;
  return !ec && space.available < key_bytes + margin;
}

void check_sector_job(const engine::SectorPlan& plan, bool generating, const std::string& who) {
  // The parameters and the resident partitions (at least one) at once; generating the
  // parameters first needs the key generation's evaluations beside the key
  // (circuits::groth16_prove_bytes counts them). Checked before the budget: a default budget
  // too small for one partition usually means the parameters alone take what there is.
  uint64_t need = plan.key_host_bytes + uint64_t(std::max<uint32_t>(plan.max_resident, 1)) * plan.partition_bytes;
  if (generating) need = std::max(need, circuits::groth16_prove_bytes(plan.shape, 1));
  const std::string what =
      fmt::format("{}: {} partition(s) of {} ({} constraints each, {} resident at once)", who, plan.partitions,
                  plan.circuit.to_string(), plan.shape.constraints, std::max<uint32_t>(plan.max_resident, 1));
  if (std::string err = limits::check_memory_request(need, what, limits::read_memory_limits()); !err.empty())
    throw std::invalid_argument(err);
  if (plan.budget_bytes != 0)
    (void)engine::max_resident_partitions(plan.budget_bytes, plan.partition_bytes, plan.partitions);
}

nlohmann::json sector_json(const engine::SectorPlan& plan, const engine::SectorResult& r) {
  nlohmann::json parts = nlohmann::json::array();
  auto rel = [&](uint64_t t) { return t >= r.begin ? t - r.begin : 0; };
  for (const auto& p : r.partitions)
    parts.push_back({{"index", p.index},
                     {"gpu_index", p.device},
                     {"witness_begin_ns", rel(p.witness_begin)},
                     {"synth_begin_ns", rel(p.synth_begin)},
                     {"synth_end_ns", rel(p.synth_end)},
                     {"prove_begin_ns", rel(p.prove_begin)},
                     {"prove_end_ns", rel(p.prove_end)},
                     {"resident", p.resident},
                     {"rss_bytes", p.rss_bytes},
                     {"gpu_used_bytes", opt_json(p.device_used_bytes)}});
  return {{"partitions", parts},
          {"partition_bytes", r.partition_bytes},
          {"budget_bytes", plan.budget_bytes},
          {"key_bytes", plan.key_bytes},
          {"key_host_bytes", plan.key_host_bytes},
          {"max_resident", r.max_resident},
          {"synth_threads", r.synth_threads},
          {"partition_threads", r.partition_threads},
          {"peak_resident", r.peak_resident},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"peak_gpu_used_bytes", opt_json(r.peak_device_used_bytes())},
          {"devices", plan.devices},
          {"wall_ns", r.end - r.begin}};
}

SectorJobResult run_sector_job(Session& session, const SectorJobSpec& spec, const engine::SectorPlan& plan) {
  // The backends first: a missing GPU is reported before parameters are generated.
  std::vector<std::unique_ptr<groth16::Backend>> backends;
  for (uint32_t d = 0; d < plan.devices; ++d) backends.push_back(groth16::make_backend_on(spec.backend, d));
  engine::SectorStream stream(std::move(backends), plan.budget_bytes);
  // Parameters: the given file, the cache, or generated into the cache; generated in memory
  // only (not cached) when the file would not fit the cache's free disk space, and then held on
  // the devices, the host keeping only the queries their backend reads there (the plan's
  // budget counted on it).
  std::shared_ptr<const groth16::ProvingKey> key;
  std::string params_path;
  // The plan's decision, not a second look at the disk: its budget counted on it.
  if (plan.key_in_memory) {
    fmt::print(stderr,
               "[{}] {}: generating the parameters (about {:.1f} GiB) in memory for this run, not cached ({})\n",
               spec.suite, spec.case_name, sector_gib(plan.key_bytes),
               spec.params_in_memory ? "--params-in-memory"
                                     : "the file would not fit the free disk space beside " +
                                           porep_params_cache_path(plan.circuit, spec.params_seed));
    engine::SectorStream::HeldKey held = stream.hold_key(std::make_shared<const groth16::ProvingKey>(
        generate_porep_keys_reported(plan.circuit, spec.circuit_seed, spec.params_seed, spec.backend, spec.suite,
                                     spec.case_name)));
    if (held.dropped_bytes > 0)
      fmt::print(stderr, "[{}] {}: the parameters are held on {} device(s), uploaded in {:.1f} s; the host keeps {} "
                 "and has freed {:.1f} GiB\n",
                 spec.suite, spec.case_name, stream.devices(), double(held.upload_ns) / 1e9,
                 held.host == groth16::HostQueries::none()
                     ? std::string("none of them")
                     : fmt::format("{} ({:.1f} GiB)", held.host.describe(), sector_gib(groth16::host_point_bytes(*held.key))),
                 sector_gib(held.dropped_bytes));
    key = std::move(held.key);
  } else {
    params_path = ensure_porep_params(plan.circuit, spec.circuit_seed, spec.params_seed, spec.params_file, spec.suite,
                                      spec.case_name, spec.backend);
  }
  engine::SectorJob job;
  job.id = spec.case_name;
  job.circuit = plan.circuit;
  job.partitions = plan.partitions;
  job.circuit_seed = spec.circuit_seed;
  job.rs_seed = spec.rs_seed;
  job.params_path = params_path;
  job.key = key;
  job.synth_threads = plan.synth_threads;
  job.partition_threads = plan.partition_threads;

  const nlohmann::json recorded = {{"sector", spec.shape},
                                   {"partitions", plan.partitions},
                                   {"challenges", plan.circuit.challenges},
                                   {"layers", plan.circuit.layers},
                                   {"parents", plan.circuit.parents},
                                   {"depth", plan.circuit.depth},
                                   {"constraints", plan.shape.constraints},
                                   // A default budget follows the machine's free memory at
                                   // the run: recorded as "default" so that runs under it
                                   // compare (the bytes are in the sector object).
                                   {"budget_bytes", spec.budget_bytes ? nlohmann::json(*spec.budget_bytes)
                                                                      : nlohmann::json("default")},
                                   {"gpus", plan.devices},
                                   {"backend", spec.backend},
                                   {"rs_seed", spec.rs_seed ? nlohmann::json(*spec.rs_seed) : nlohmann::json("secure")},
                                   {"circuit_seed", spec.circuit_seed},
                                   {"params_seed", spec.params_seed}};
  // The assignment is fixed before the run (k mod devices), so each partition's proving phase
  // can name its device in the record.
  std::map<std::string, uint32_t> gpu_index;
  for (uint32_t k = 0; k < plan.partitions; ++k)
    gpu_index["proof/prove/partition_" + std::to_string(k)] = plan.assignment[k];

  auto progress = [&](const engine::PartitionRecord& p, uint32_t n) {
    fmt::print(stderr, "partition {}/{}: synth {:.1f} s, prove {:.1f} s, resident {}, rss {:.1f} GiB, gpu {}{}\n",
               p.index + 1, n, double(p.synth_ns()) / 1e9, double(p.prove_ns()) / 1e9, p.resident,
               sector_gib(p.rss_bytes), p.device,
               p.device_used_bytes ? fmt::format(" ({:.1f} GiB in use)", sector_gib(*p.device_used_bytes)) : "");
  };
  SectorJobResult result;
  const int total = spec.warmups + spec.reps;
  for (int i = 0; i < total; ++i) {
    const bool warm = i < spec.warmups;
    if (spec.on_rep) spec.on_rep(i, warm);
    SampleInfo info{.suite = spec.suite,
                    .case_name = spec.case_name,
                    .parameters = recorded,
                    .repetition = warm ? i : i - spec.warmups,
                    .warm = warm,
                    .gpu_index = gpu_index};
    engine::SectorResult r;
    // The "sector" object is known only once the sector is proved, before the line is written.
    const nlohmann::json saved = session.sample_fields();
    try {
      session.measure(info, [&] {
        {
          instr::Phase proof("proof");
          r = stream.prove(job, progress);
        }
        nlohmann::json fields = saved.is_object() ? saved : nlohmann::json::object();
        fields["sector"] = sector_json(plan, r);
        session.set_sample_fields(std::move(fields));
      });
    } catch (...) {
      session.set_sample_fields(saved);
      throw;
    }
    session.set_sample_fields(saved);
    // Verification checks the proofs; it is not part of the timed sector.
    for (uint32_t k = 0; k < plan.partitions; ++k)
      if (!groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k])) {
        fmt::print(stderr, "cuzk-bench: error: {}: the proof of partition {} ({} {}) does not verify\n", spec.case_name,
                   k, warm ? "warm-up" : "repetition", warm ? i : i - spec.warmups);
        result.all_verified = false;
      }
    result.last = std::move(r);
  }
  if (spec.on_rep) spec.on_rep(total, false);
  return result;
}

}  // namespace cuzk
