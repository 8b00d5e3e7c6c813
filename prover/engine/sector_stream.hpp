// One sector streamed partition by partition under a host-memory budget (docs/engine.md,
// "Sector streaming"): the Engine holds a whole sector's partitions at once, which at real size
// (10 partitions of ~130M constraints, 15+ GiB each) does not fit a host; here each partition
// is generated, synthesized, proved and freed on its own.
//
//   synthesis threads:  witness k, synth k  ->  ready[k]  ->  device thread k mod G: prove k, free k
//
// - Synthesis of partition k+1 (CPU) overlaps the proving of partition k (a backend per device).
// - Up to `synth_threads` partitions are synthesized at once (taking partitions in index order),
//   at most the resident limit: memory, not cores, bounds them at real size. Each partition's
//   challenges are synthesized on `partition_threads` threads (prover/synth/sliced.hpp; with 1,
//   the serial synthesis of the build's policy), by default the cores shared among them.
// - At most `max_resident` synthesized partitions are held at once (from the start of their
//   synthesis until their proof is done), with max_resident = floor(budget / bytes of one
//   partition); a budget below one partition is refused before any work (SectorBudgetError).
// - Partition k is proved by device assign_partitions(P, G)[k] = k mod G (a pure function):
//   synthesis runs in index order, so with equal proving times this is also the order in which
//   devices free up.
// - Parameters come from a ParamsCache: loaded once, resident for every later sector.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/circuits/porep.hpp"
#include "prover/engine/engine.hpp"
#include "prover/engine/params_cache.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/key_residency.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk::engine {

// A budget that cannot hold even one synthesized partition.
class SectorBudgetError : public EngineError {
 public:
  using EngineError::EngineError;
};

// A named sector shape: P partitions of one PoRep-shaped circuit.
struct SectorShape {
  std::string name;
  circuits::PorepParams circuit;
  uint32_t partitions = 1;
  std::string description;
};
// The named shapes ("32g", "2e20x10", "2e12x3"), in order.
const std::vector<SectorShape>& sector_shapes();
// The shape called `name`; throws std::invalid_argument listing the known names.
const SectorShape& sector_shape(const std::string& name);

// Bytes one synthesized partition holds (a, b, c: one field element per constraint each, plus
// the assignment: inputs + aux); the per-partition term of estimate_job_bytes.
uint64_t estimate_partition_bytes(const r1cs::ShapeCounts& shape);
// Bytes of the resident proving key of a circuit of this shape (circuits::groth16_key_bytes).
uint64_t estimate_key_bytes(const r1cs::ShapeCounts& shape);
// The share of those the host keeps once devices hold the key and the host keeps only the
// queries `kept` names (prover/groth16/key_residency.hpp): estimate_key_bytes less the points
// of the others.
uint64_t estimate_key_host_bytes(const r1cs::ShapeCounts& shape, const groth16::HostQueries& kept);

// Partitions resident at once under `budget_bytes` (capped at `partitions`); throws
// SectorBudgetError naming the budget and the one-partition estimate in GiB when it is 0.
uint32_t max_resident_partitions(uint64_t budget_bytes, uint64_t partition_bytes, uint32_t partitions);

// Which device proves which partition: result[k] = k mod devices (devices >= 1, else
// std::invalid_argument).
std::vector<uint32_t> assign_partitions(uint32_t partitions, uint32_t devices);
// The device count to use: `requested` (0 = all present) checked against `present`; throws
// std::invalid_argument for requested > present (naming both and the backend). `present` >= 1.
uint32_t choose_device_count(std::optional<uint32_t> requested, uint32_t present, const std::string& backend);
// Partitions synthesized at once: `requested` when set (>= 1, else std::invalid_argument), else
// kSynthAtOnce, or with threads per partition given, the cores divided among them (so
// `--partition-threads 1` synthesizes one partition per core); never more than the resident
// limit or the partitions.
uint32_t choose_synth_threads(std::optional<uint32_t> requested, uint32_t max_resident, uint32_t partitions,
                              unsigned cores, std::optional<uint32_t> partition_threads = std::nullopt);
// Two partitions at once, each sliced over half the cores: the first proof can start after one
// partition's synthesis, and a slice pool of 8 threads was faster than one of 16 on the GPU
// machine's 16 cores (docs/engine.md, "Sliced synthesis").
inline constexpr uint32_t kSynthAtOnce = 2;
// Threads synthesizing one partition: `requested` when set (>= 1, else std::invalid_argument),
// else the cores shared among the partitions synthesized at once (at least 1).
uint32_t choose_partition_threads(std::optional<uint32_t> requested, uint32_t synth_threads, unsigned cores);

// What a sector run will do, computed from the shape by arithmetic (no synthesis): printable
// before any work, at sizes that do not fit this machine.
struct SectorPlan {
  circuits::PorepParams circuit;
  uint32_t partitions = 0;
  r1cs::ShapeCounts shape;
  uint64_t domain = 0;           // NTT domain: the next power of two >= constraints
  uint64_t partition_bytes = 0;  // estimate_partition_bytes
  uint64_t key_bytes = 0;        // the resident parameters (not counted in the budget)
  // The queries the host keeps of them (every one unless devices hold the key: set by the
  // caller, with key_host_bytes = estimate_key_host_bytes(shape, key_host)).
  groth16::HostQueries key_host;
  uint64_t key_host_bytes = 0;
  bool key_in_memory = false;  // the key is generated for the run, not read from a file (set by the caller)
  uint64_t budget_bytes = 0;
  uint32_t max_resident = 0;  // 0 when the budget cannot hold one partition
  uint32_t devices = 1;
  uint32_t synth_threads = 1;        // choose_synth_threads (1 when nothing can be resident)
  uint32_t partition_threads = 1;    // choose_partition_threads
  std::vector<uint32_t> assignment;  // assign_partitions(partitions, devices)
  std::string budget_note;           // where the budget came from (printed beside it), or 
  // Multi-line description (partitions, constraints, bytes, resident, devices, assignment).
  std::string describe() const;
};
// Never throws for a small budget (max_resident is then 0); throws std::invalid_argument for
// an invalid circuit, 0 partitions/devices or 0 synthesis threads.
SectorPlan plan_sector(const circuits::PorepParams& circuit, uint32_t partitions, uint64_t budget_bytes,
                       uint32_t devices, std::optional<uint32_t> synth_threads = std::nullopt,
                       std::optional<uint32_t> partition_threads = std::nullopt);

struct SectorJob {
  std::string id = "sector";
  circuits::PorepParams circuit;
  uint32_t partitions = 1;
  uint64_t circuit_seed = 42;       // partition k's witness from circuit_seed + k
  std::optional<uint64_t> rs_seed;  // partition k uses Randomness::from_seed(rs_seed + k); absent: secure
  std::string params_path;
  // Keys already in memory, used instead of params_path when set (parameters generated for a
  // run whose file would not fit the disk).
  std::shared_ptr<const groth16::ProvingKey> key;
  uint32_t synth_threads = 1;      // partitions synthesized at once (capped at the resident limit)
  uint32_t partition_threads = 1;  // threads synthesizing one partition (1: serial synthesis)
};

// Host steady-clock nanoseconds (since its epoch).
struct PartitionRecord {
  uint32_t index = 0;
  uint32_t device = 0;
  uint64_t witness_begin = 0, synth_begin = 0, synth_end = 0, prove_begin = 0, prove_end = 0;
  uint32_t resident = 0;   // synthesized partitions held when this one was freed after its proof (itself included)
  uint64_t rss_bytes = 0;  // the process's VmRSS once it was freed (0 where /proc is not readable)
  std::optional<uint64_t> device_used_bytes;  // the device's memory in use when its proof ended (Backend::device_used_bytes)
  uint64_t synth_ns() const { return synth_end - synth_begin; }
  uint64_t prove_ns() const { return prove_end - prove_begin; }
};

struct SectorResult {
  std::vector<groth16::Proof> proofs;            // one per partition, in index order
  std::vector<std::vector<fr_t>> public_inputs;  // per partition (to verify)
  std::vector<PartitionRecord> partitions;       // in index order
  std::shared_ptr<const groth16::ProvingKey> pk;
  uint32_t max_resident = 0;    // the budget's limit
  uint32_t synth_threads = 0;   // partitions synthesized at once (the job's, capped)
  uint32_t partition_threads = 0;  // threads synthesizing one partition (the job's)
  uint32_t peak_resident = 0;   // the most partitions held at once
  uint64_t peak_rss_bytes = 0;  // VmHWM after the run (peak since process start; 0 if unreadable)
  uint64_t partition_bytes = 0;
  uint64_t begin = 0, end = 0;
  // The most of the partitions' device_used_bytes; nullopt when none recorded one.
  std::optional<uint64_t> peak_device_used_bytes() const;
};

// VmRSS and VmHWM of this process from /proc/self/status, in bytes; 0 when unreadable.
struct HostRss {
  uint64_t rss = 0, hwm = 0;
};
HostRss read_host_rss();

class SectorStream {
 public:
  // One backend per device, device i = backends[i] (at least one; none null); `budget_bytes`
  // bounds the synthesized partitions held (0 = unlimited). Throws std::invalid_argument.
  SectorStream(std::vector<std::unique_ptr<groth16::Backend>> backends, uint64_t budget_bytes);
  ~SectorStream();
  SectorStream(const SectorStream&) = delete;
  SectorStream& operator=(const SectorStream&) = delete;

  // Called once per partition after its proof, once its memory is freed, from the releaser
  // thread (in the order the proofs ended).
  using OnPartition = std::function<void(const PartitionRecord&, uint32_t partitions)>;
  // Proves every partition of `job`. Checks first, before any work: the budget against one
  // partition (SectorBudgetError), the parameters file (groth16::ParamsError, also for a key of
  // another shape). The first failure of a stage stops the others and is rethrown here. Phases:
  // "synth/partition_<k>" and "prove/partition_<k>" under the caller's open phase.
  SectorResult prove(const SectorJob& job, const OnPartition& on_partition = {});

  // What hold_key did.
  struct HeldKey {
    std::shared_ptr<const groth16::ProvingKey> key;  // the copy to prove with (SectorJob::key)
    groth16::HostQueries host;                       // the queries that copy keeps on the host
    uint64_t dropped_bytes = 0;                      // host point bytes it no longer references
    uint64_t upload_ns = 0;                          // the devices' uploads (at once, a thread each)
  };
  // Uploads `key` to every device now (Backend::hold_key, a thread a device) and returns a copy
  // keeping on the host only the queries some backend still reads there. Once the caller drops its other references
  // to `key`, the others' points are freed: a key generated in memory leaves most of its bytes
  // to partitions (docs/engine.md, "Keys held on the device"). With a backend that holds
  // nothing (the CPU), the copy keeps every query. A device failure is rethrown.
  HeldKey hold_key(std::shared_ptr<const groth16::ProvingKey> key);

  uint32_t devices() const;
  ParamsCache& params();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::engine
