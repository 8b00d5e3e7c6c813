// Proving keys held on devices (docs/engine.md, "Keys held on the device"): once every device
// that proves with a key holds its points, the host needs only the queries some backend still
// reads there (the G2 query, where msm_b_g2 runs on CPU threads). Dropping the others frees
// most of a key generated in memory: at the 32g shape, 50 of its 75 GiB, room for partitions.
//
//   key -> with_residency(key) -> every backend's hold_key -> keep_host_queries(held, kept)
//
// The token with_residency sets is the key's identity on the devices (ProvingKey::identity), so
// the copy without host points is proved with the device copies of the one that had them.
#pragma once
#include <cstdint>
#include <string>

#include "prover/groth16/keys.hpp"

namespace cuzk::groth16 {

// The queries of a proving key a backend reads from host memory while proving.
struct HostQueries {
  bool a = true, b_g1 = true, b_g2 = true, h = true, l = true;
  static constexpr HostQueries none() { return {false, false, false, false, false}; }
  // The queries this set does not name.
  constexpr HostQueries others() const { return {!a, !b_g1, !b_g2, !h, !l}; }
  // Both sets together: what the host keeps for several backends.
  HostQueries operator|(const HostQueries& o) const {
    return {a || o.a, b_g1 || o.b_g1, b_g2 || o.b_g2, h || o.h, l || o.l};
  }
  bool operator==(const HostQueries&) const = default;
  // The names of the queries kept ("the G2 query", "every query", "no query").
  std::string describe() const;
};

// A copy of `pk` sharing its points, with a fresh residency token (the one it has, if any).
ProvingKey with_residency(const ProvingKey& pk);
// A copy of `pk` (which must carry a residency token, else std::invalid_argument) keeping the
// points of the queries `kept` names; the others keep their counts, their points no longer
// referenced by the copy.
ProvingKey keep_host_queries(const ProvingKey& pk, const HostQueries& kept);
// The queries whose points `pk` has on the host (those only a device holds are left out).
HostQueries host_queries(const ProvingKey& pk);
// Bytes of the points `pk` has on the host (queries only a device holds count 0).
uint64_t host_point_bytes(const ProvingKey& pk);
// Bytes of the queries `kept` names for a key of these counts (h_count: the H query's points).
uint64_t host_point_bytes(uint64_t variables, uint64_t aux, uint64_t h_count, const HostQueries& kept);
// Throws std::invalid_argument naming `who` and the first query of `needed` whose points only a
// device holds: a backend that reads them on the host cannot prove with this copy of the key.
void require_host_points(const ProvingKey& pk, const HostQueries& needed, const std::string& who);

}  // namespace cuzk::groth16
