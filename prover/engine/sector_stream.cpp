#include "prover/engine/sector_stream.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <variant>

#include "prover/circuits/porep_shape.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/instr/phase.hpp"
#include "prover/synth/sliced.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk::engine {
namespace {

uint64_t now_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

double gib(uint64_t bytes) { return double(bytes) / double(uint64_t(1) << 30); }

uint64_t next_pow2(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

using Assignment = r1cs::ProvingAssignment<r1cs::DefaultPolicy>;

// A synthesized partition: serially (one thread, the build's synthesis policy) or sliced.
struct Synthesized {
  explicit Synthesized(std::variant<Assignment, synth::SlicedAssignment> a) : assignment(std::move(a)) {}
  std::variant<Assignment, synth::SlicedAssignment> assignment;
  groth16::Witness witness() const {
    return std::visit([](const auto& a) { return groth16::witness_of(a); }, assignment);
  }
};

}  // namespace

// ------------------------------------------------------------------------------------------
// Shapes, estimates, the plan and the assignment: pure functions.

const std::vector<SectorShape>& sector_shapes() {
  // 32g: Filecoin's 32 GiB sector has 10 partitions; its layers (11), parents (6 base + 8
  // expander) and tree depth (30) are kept, and the challenges per partition raised to 33 so a
  // partition comes nearest to ~130M constraints while its domain stays 2^27 (34 would pass
  // 134.9M; docs/engine.md gives the numbers).
  static const std::vector<SectorShape> shapes = {
      {"32g", circuits::PorepParams{33, 11, 14, 30}, 10,
       "a 32 GiB PoRep sector: 10 partitions of 130,953,556 constraints (2^27 domain)"},
      // The 32g structure with fewer challenges per partition: the same layers, parents and depth
      // (so the same work per challenge) at sizes whose parameters fit a GPU of 80 GB.
      {"32g-c16", circuits::PorepParams{16, 11, 14, 30}, 10,
       "the 32g structure with 16 challenges: 10 partitions of 63,492,949 constraints (2^26 domain)"},
      {"32g-c4", circuits::PorepParams{4, 11, 14, 30}, 10,
       "the 32g structure with 4 challenges: 10 partitions of 15,873,697 constraints (2^24 domain)"},
      {"2e20x10", circuits::PorepParams{3, 1, 1, 6}, 10,
       "10 partitions of 1,000,351 constraints (2^20 domain): the 32g structure at a size a host can run"},
      {"2e12x3", circuits::PorepParams{1, 0, 0, 2}, 3,
       "3 partitions of 2,777 constraints (2^12 domain, Poseidon only): tests and a first run"},
  };
  return shapes;
}

const SectorShape& sector_shape(const std::string& name) {
  std::string known;
  for (const auto& s : sector_shapes()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw std::invalid_argument(fmt::format("unknown sector shape '{}' (known: {})", name, known));
}

uint64_t estimate_partition_bytes(const r1cs::ShapeCounts& s) {
  return (3 * s.constraints + s.inputs + s.aux) * sizeof(fr_t);
}

uint64_t estimate_key_bytes(const r1cs::ShapeCounts& s) { return circuits::groth16_key_bytes(s); }

uint64_t estimate_key_host_bytes(const r1cs::ShapeCounts& s, const groth16::HostQueries& kept) {
  const uint64_t dropped = groth16::host_point_bytes(s.inputs + s.aux, s.aux, next_pow2(s.constraints), kept.others());
  return estimate_key_bytes(s) - std::min(dropped, estimate_key_bytes(s));
}

uint32_t max_resident_partitions(uint64_t budget_bytes, uint64_t partition_bytes, uint32_t partitions) {
  const uint64_t n = partition_bytes == 0 ? partitions : budget_bytes / partition_bytes;
  if (n == 0)
    throw SectorBudgetError(fmt::format(
        "the memory budget of {:.2f} GiB cannot hold one synthesized partition (about {:.2f} GiB: a, b, c and the "
        "assignment); raise the budget to at least {:.2f} GiB",
        gib(budget_bytes), gib(partition_bytes), gib(partition_bytes)));
  return uint32_t(std::min<uint64_t>(n, partitions));
}

std::vector<uint32_t> assign_partitions(uint32_t partitions, uint32_t devices) {
  if (devices == 0) throw std::invalid_argument("assign_partitions: no device");
  std::vector<uint32_t> out(partitions);
  for (uint32_t k = 0; k < partitions; ++k) out[k] = k % devices;
  return out;
}

uint32_t choose_device_count(std::optional<uint32_t> requested, uint32_t present, const std::string& backend) {
  if (!requested) return present;
  if (*requested == 0) throw std::invalid_argument("--gpus must be at least 1 (got 0)");
  if (*requested > present)
    throw std::invalid_argument(
        fmt::format("--gpus {}: backend '{}' has {} device(s) here", *requested, backend, present));
  return *requested;
}

uint32_t choose_synth_threads(std::optional<uint32_t> requested, uint32_t max_resident, uint32_t partitions,
                              unsigned cores, std::optional<uint32_t> partition_threads) {
  if (requested && *requested == 0) throw std::invalid_argument("--synth-threads must be at least 1 (got 0)");
  if (partition_threads && *partition_threads == 0)
    throw std::invalid_argument("--partition-threads must be at least 1 (got 0)");
  const uint32_t want = requested            ? *requested
                        : partition_threads ? std::max(1u, cores / *partition_threads)
                                            : kSynthAtOnce;
  return std::max<uint32_t>(1, std::min({want, max_resident, partitions}));
}

uint32_t choose_partition_threads(std::optional<uint32_t> requested, uint32_t synth_threads, unsigned cores) {
  if (requested && *requested == 0) throw std::invalid_argument("--partition-threads must be at least 1 (got 0)");
  if (requested) return *requested;
  return std::max<uint32_t>(1, cores / std::max<uint32_t>(1, synth_threads));
}

SectorPlan plan_sector(const circuits::PorepParams& circuit, uint32_t partitions, uint64_t budget_bytes,
                       uint32_t devices, std::optional<uint32_t> synth_threads,
                       std::optional<uint32_t> partition_threads) {
  if (partitions == 0) throw std::invalid_argument("a sector needs at least one partition");
  SectorPlan p;
  p.circuit = circuit;
  p.partitions = partitions;
  p.shape = circuits::porep_shape_by_parts(circuit);
  p.domain = next_pow2(p.shape.constraints);
  p.partition_bytes = estimate_partition_bytes(p.shape);
  p.key_bytes = estimate_key_bytes(p.shape);
  p.key_host_bytes = p.key_bytes;
  p.budget_bytes = budget_bytes;
  p.devices = devices;
  p.assignment = assign_partitions(partitions, devices);
  if (budget_bytes == 0) {
    p.max_resident = partitions;
  } else {
    try {
      p.max_resident = max_resident_partitions(budget_bytes, p.partition_bytes, partitions);
    } catch (const SectorBudgetError&) {
      p.max_resident = 0;
    }
  }
  p.synth_threads = choose_synth_threads(synth_threads, p.max_resident, partitions, std::thread::hardware_concurrency(),
                                         partition_threads);
  p.partition_threads = choose_partition_threads(partition_threads, p.synth_threads, std::thread::hardware_concurrency());
  return p;
}

std::string SectorPlan::describe() const {
  std::ostringstream o;
  unsigned log_domain = 0;
  while ((uint64_t(1) << log_domain) < domain) ++log_domain;
  o << fmt::format("circuit          porep {}\n", circuit.to_string());
  o << fmt::format("partitions       {}\n", partitions);
  o << fmt::format("constraints      {} per partition (domain 2^{})\n", shape.constraints, log_domain);
  o << fmt::format("variables        {} per partition (inputs {}, aux {})\n", shape.inputs + shape.aux, shape.inputs,
                   shape.aux);
  o << fmt::format("partition bytes  {} ({:.2f} GiB: a, b, c and the assignment)\n", partition_bytes,
                   gib(partition_bytes));
  o << fmt::format("sector bytes     {} ({:.2f} GiB if every partition were resident)\n", partition_bytes * partitions,
                   gib(partition_bytes * partitions));
  if (key_host == groth16::HostQueries{})
    o << fmt::format("parameters       {:.2f} GiB resident{} (estimate; not counted in the budget)\n", gib(key_bytes),
                     key_in_memory ? ", generated in memory for the run" : "");
  else if (key_host == groth16::HostQueries::none())
    o << fmt::format("parameters       {:.2f} GiB, generated in memory and held on the device(s); the host keeps none "
                     "of them (estimate)\n",
                     gib(key_bytes));
  else
    o << fmt::format("parameters       {:.2f} GiB, generated in memory and held on the device(s); the host keeps {}: "
                     "{:.2f} GiB (estimate; not counted in the budget)\n",
                     gib(key_bytes), key_host.describe(), gib(key_host_bytes));
  if (budget_bytes == 0)
    o << "memory budget    unlimited\n";
  else
    o << fmt::format("memory budget    {:.2f} GiB{}\n", gib(budget_bytes),
                     budget_note.empty() ? "" : " (" + budget_note + ")");
  if (max_resident == 0)
    o << "resident         0: the budget cannot hold one partition\n";
  else
    o << fmt::format("resident         at most {} partition(s) at once ({:.2f} GiB)\n", max_resident,
                     gib(partition_bytes * max_resident));
  if (partition_threads == 1)
    o << fmt::format("synthesis        {} partition(s) at once (one thread each)\n", synth_threads);
  else
    o << fmt::format("synthesis        {} partition(s) at once, {} threads each (its challenges in parallel)\n",
                     synth_threads, partition_threads);
  o << fmt::format("devices          {}\n", devices);
  std::string a;
  for (uint32_t k = 0; k < assignment.size(); ++k) a += fmt::format("{}{}->{}", k ? " " : "", k, assignment[k]);
  o << fmt::format("assignment       {} (partition->device: k mod {})\n", a, devices);
  return o.str();
}

HostRss read_host_rss() {
  HostRss r;
  std::ifstream f("/proc/self/status");
  std::string line;
  auto kb = [](const std::string& l) {
    try {
      return uint64_t(std::stoull(l.substr(l.find(':') + 1))) * 1024;
    } catch (...) {
      return uint64_t(0);
    }
  };
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) r.rss = kb(line);
    if (line.rfind("VmHWM:", 0) == 0) r.hwm = kb(line);
  }
  return r;
}

// ------------------------------------------------------------------------------------------

struct SectorStream::Impl {
  std::vector<std::unique_ptr<groth16::Backend>> backends;
  uint64_t budget = 0;
  ParamsCache cache;
};

SectorStream::SectorStream(std::vector<std::unique_ptr<groth16::Backend>> backends, uint64_t budget_bytes)
    : impl_(std::make_unique<Impl>()) {
  if (backends.empty()) throw std::invalid_argument("sector stream: no backend");
  for (const auto& b : backends)
    if (!b) throw std::invalid_argument("sector stream: a null backend");
  impl_->backends = std::move(backends);
  impl_->budget = budget_bytes;
}

SectorStream::~SectorStream() = default;

uint32_t SectorStream::devices() const { return uint32_t(impl_->backends.size()); }

SectorStream::HeldKey SectorStream::hold_key(std::shared_ptr<const groth16::ProvingKey> key) {
  if (!key) throw std::invalid_argument("sector stream: no key to hold");
  HeldKey held;
  held.host = groth16::HostQueries::none();
  auto marked = std::make_shared<const groth16::ProvingKey>(groth16::with_residency(*key));
  key.reset();  // from here only `marked` (and the caller's copies) reference the points
  const uint64_t t0 = now_ns();
  // One thread a device: each upload goes over its own link.
  const size_t G = impl_->backends.size();
  std::vector<groth16::HostQueries> kept(G);
  std::vector<std::exception_ptr> errors(G);
  {
    std::vector<std::jthread> uploads;
    for (size_t d = 0; d < G; ++d) {
      auto upload = [&, d] {
        try {
          kept[d] = impl_->backends[d]->hold_key(*marked);
        } catch (...) {
          errors[d] = std::current_exception();
        }
      };
      if (G == 1)
        upload();
      else
        uploads.emplace_back(upload);
    }
  }
  for (size_t d = 0; d < G; ++d) {
    if (errors[d]) std::rethrow_exception(errors[d]);
    held.host = held.host | kept[d];
  }
  held.upload_ns = now_ns() - t0;
  const uint64_t before = groth16::host_point_bytes(*marked);
  if (held.host == groth16::HostQueries{}) {
    held.key = std::move(marked);
  } else {
    held.key = std::make_shared<const groth16::ProvingKey>(groth16::keep_host_queries(*marked, held.host));
    held.dropped_bytes = before - groth16::host_point_bytes(*held.key);
  }
  return held;
}
ParamsCache& SectorStream::params() { return impl_->cache; }

SectorResult SectorStream::prove(const SectorJob& job, const OnPartition& on_partition) {
  // ---- checks before any work
  if (job.partitions == 0) throw EngineError(fmt::format("sector {}: no partitions", job.id));
  if (std::string err = job.circuit.validate(); !err.empty())
    throw EngineError(fmt::format("sector {}: {}", job.id, err));
  if (job.params_path.empty() && !job.key) throw EngineError(fmt::format("sector {}: no parameters file", job.id));
  const uint32_t P = job.partitions, G = devices();
  const r1cs::ShapeCounts shape = circuits::porep_shape_by_parts(job.circuit);
  SectorResult res;
  res.partition_bytes = estimate_partition_bytes(shape);
  res.max_resident = impl_->budget == 0 ? P : max_resident_partitions(impl_->budget, res.partition_bytes, P);
  const std::vector<uint32_t> assignment = assign_partitions(P, G);

  const std::string parent = instr::current_path();
  res.begin = now_ns();
  {
    instr::Phase srs("srs_load", parent);
    res.pk = job.key ? job.key : impl_->cache.get(job.params_path);
    groth16::check_params_shape(*res.pk, shape.inputs, shape.aux, shape.constraints,
                                "the circuit " + job.circuit.to_string() + " of sector " + job.id);
  }
  const groth16::ProvingKey& pk = *res.pk;

  res.proofs.resize(P);
  res.public_inputs.resize(P);
  res.partitions.resize(P);
  for (uint32_t k = 0; k < P; ++k) {
    res.partitions[k].index = k;
    res.partitions[k].device = assignment[k];
  }

  // Everything below mu: the synthesized partitions waiting for their device, the count held,
  // and the first failure (which stops every thread at its next wait).
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::unique_ptr<Synthesized>> slots(P);
  uint32_t resident = 0;
  std::exception_ptr error;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard lk(mu);
      if (!error) error = e;
    }
    cv.notify_all();
  };

  // Synthesis threads take the partitions in index order, each when the budget has room; the
  // lowest partition not yet proved is always synthesized or being synthesized, so the device
  // threads (which prove in index order) always make progress.
  res.synth_threads = choose_synth_threads(std::max(job.synth_threads, 1u), res.max_resident, P, 1);
  res.partition_threads = std::max(job.partition_threads, 1u);
  uint32_t next = 0;
  auto synthesize = [&] {
    try {
      for (;;) {
        uint32_t k;
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return error || next >= P || resident < res.max_resident; });
          if (error || next >= P) return;
          k = next++;
          res.peak_resident = std::max(res.peak_resident, ++resident);
        }
        PartitionRecord& rec = res.partitions[k];
        rec.witness_begin = now_ns();
        // Witness generation is the input (C2's vanilla proof): made here, per partition, so
        // that no more than the resident partitions exist at once.
        const circuits::PorepCircuit circuit = circuits::PorepCircuit::generate(job.circuit, job.circuit_seed + k);
        res.public_inputs[k] = circuit.public_inputs();
        std::unique_ptr<Synthesized> a;
        rec.synth_begin = now_ns();
        {
          instr::Phase s("synth", parent);
          instr::Phase part("partition_" + std::to_string(k), instr::current_path());
          if (res.partition_threads == 1)
            a = std::make_unique<Synthesized>(synth::prove_assignment<r1cs::DefaultPolicy>(circuit));
          else
            a = std::make_unique<Synthesized>(
                synth::prove_assignment_sliced<r1cs::DefaultPolicy>(circuit, shape, res.partition_threads));
        }
        rec.synth_end = now_ns();
        {
          std::lock_guard lk(mu);
          slots[k] = std::move(a);
        }
        cv.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };

  // Proved partitions are freed by the releaser thread, in the order their proofs ended, so the
  // device thread goes on to its next proof instead of unmapping gigabytes of arrays (docs/engine.md,
  // "Sector streaming"). A partition leaves the budget once freed.
  std::deque<std::pair<uint32_t, std::unique_ptr<Synthesized>>> to_free;
  uint32_t released = 0;
  auto release = [&] {
    try {
      for (;;) {
        std::pair<uint32_t, std::unique_ptr<Synthesized>> item;
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return error || !to_free.empty() || released == P; });
          if (error || to_free.empty()) return;
          item = std::move(to_free.front());
          to_free.pop_front();
        }
        item.second.reset();
        PartitionRecord& rec = res.partitions[item.first];
        {
          std::lock_guard lk(mu);
          rec.resident = resident--;
          ++released;
        }
        cv.notify_all();
        rec.rss_bytes = read_host_rss().rss;
        if (on_partition) on_partition(rec, P);  // one releaser thread: the calls are serialized
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };

  std::vector<std::thread> provers;
  // Joins every started thread however this scope ends (a thread the system refuses to start
  // stops the others through `fail`).
  std::vector<std::thread> synths, releasers;
  struct Joiner {
    std::vector<std::thread>& synths;
    std::vector<std::thread>& provers;
    std::vector<std::thread>& releasers;
    ~Joiner() {
      for (auto* ts : {&synths, &provers, &releasers})
        for (auto& t : *ts)
          if (t.joinable()) t.join();
    }
  } joiner{synths, provers, releasers};
  try {
    releasers.emplace_back(release);
  } catch (...) {
    fail(std::current_exception());
  }
  for (uint32_t i = 0; i < res.synth_threads; ++i) {
    try {
      synths.emplace_back(synthesize);
    } catch (...) {
      fail(std::current_exception());
      break;
    }
  }
  for (uint32_t d = 0; d < G; ++d) {
    try {
      provers.emplace_back([&, d] {
        try {
          for (uint32_t k = d; k < P; k += G) {
            std::unique_ptr<Synthesized> a;
            {
              std::unique_lock lk(mu);
              cv.wait(lk, [&] { return error || slots[k]; });
              if (error) return;
              a = std::move(slots[k]);
            }
            PartitionRecord& rec = res.partitions[k];
            const groth16::Randomness r =
                job.rs_seed ? groth16::Randomness::from_seed(*job.rs_seed + k) : groth16::Randomness::secure();
            rec.prove_begin = now_ns();
            {
              instr::Phase p("prove", parent);
              instr::Phase part("partition_" + std::to_string(k), instr::current_path());
              res.proofs[k] = impl_->backends[d]->prove(pk, a->witness(), r);
            }
            rec.prove_end = now_ns();
            rec.device_used_bytes = impl_->backends[d]->device_used_bytes();
            {
              std::lock_guard lk(mu);
              to_free.push_back({k, std::move(a)});
            }
            cv.notify_all();
          }
        } catch (...) {
          fail(std::current_exception());
        }
      });
    } catch (...) {
      fail(std::current_exception());
      break;
    }
  }
  for (auto& t : synths) t.join();
  for (auto& t : provers) t.join();
  for (auto& t : releasers) t.join();
  if (error) std::rethrow_exception(error);
  res.end = now_ns();
  res.peak_rss_bytes = read_host_rss().hwm;
  return res;
}

std::optional<uint64_t> SectorResult::peak_device_used_bytes() const {
  std::optional<uint64_t> peak;
  for (const auto& p : partitions)
    if (p.device_used_bytes) peak = std::max(peak.value_or(0), *p.device_used_bytes);
  return peak;
}

}  // namespace cuzk::engine
