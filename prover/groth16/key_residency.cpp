#include "prover/groth16/key_residency.hpp"

#include <memory>
#include <stdexcept>
#include <vector>

namespace cuzk::groth16 {
namespace {

struct QueryName {
  bool HostQueries::*flag;
  const char* name;
};
constexpr QueryName kQueries[] = {{&HostQueries::a, "A"},
                                  {&HostQueries::b_g1, "B (G1)"},
                                  {&HostQueries::b_g2, "B (G2)"},
                                  {&HostQueries::h, "H"},
                                  {&HostQueries::l, "L"}};

}  // namespace

std::string HostQueries::describe() const {
  std::vector<std::string> names;
  for (const auto& q : kQueries)
    if (this->*q.flag) names.push_back(q.name);
  if (names.empty()) return "no query";
  if (names.size() == std::size(kQueries)) return "every query";
  std::string out = "the ";
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out + (names.size() == 1 ? " query" : " queries");
}

ProvingKey with_residency(const ProvingKey& pk) {
  ProvingKey out = pk;
  // The token's address is the identity; its content is never read.
  if (!out.residency) out.residency = std::make_shared<const char>('k');
  return out;
}

ProvingKey keep_host_queries(const ProvingKey& pk, const HostQueries& kept) {
  if (!pk.residency)
    throw std::invalid_argument("keep_host_queries: the key carries no residency token (with_residency first)");
  ProvingKey out = pk;
  auto drop = [](auto& q, bool keep) {
    if (!keep) q = std::remove_reference_t<decltype(q)>::device_only(q.size());
  };
  drop(out.a_query, kept.a);
  drop(out.b_g1_query, kept.b_g1);
  drop(out.b_g2_query, kept.b_g2);
  drop(out.h_query, kept.h);
  drop(out.l_query, kept.l);
  return out;
}

uint64_t host_point_bytes(const ProvingKey& pk) {
  auto bytes = [](const auto& q) -> uint64_t { return q.has_points() ? q.size() * sizeof(q[0]) : 0; };
  return bytes(pk.a_query) + bytes(pk.b_g1_query) + bytes(pk.b_g2_query) + bytes(pk.h_query) + bytes(pk.l_query);
}

uint64_t host_point_bytes(uint64_t variables, uint64_t aux, uint64_t h_count, const HostQueries& kept) {
  const uint64_t g1 = sizeof(g1_affine_t), g2 = sizeof(g2_affine_t);
  return (kept.a ? variables * g1 : 0) + (kept.b_g1 ? variables * g1 : 0) + (kept.b_g2 ? variables * g2 : 0) +
         (kept.h ? h_count * g1 : 0) + (kept.l ? aux * g1 : 0);
}

HostQueries host_queries(const ProvingKey& pk) {
  return {pk.a_query.has_points(), pk.b_g1_query.has_points(), pk.b_g2_query.has_points(), pk.h_query.has_points(),
          pk.l_query.has_points()};
}

void require_host_points(const ProvingKey& pk, const HostQueries& needed, const std::string& who) {
  const HostQueries has = host_queries(pk);
  for (const auto& q : kQueries)
    if (needed.*q.flag && !(has.*q.flag))
      throw std::invalid_argument(who + " reads the key's " + q.name +
                                  " query on the host, but this copy of the key has it only on a device (its host "
                                  "points were dropped once the device held them): load or generate the key again");
}

}  // namespace cuzk::groth16
