// The engine's parameter cache: each parameters file is loaded (memory-mapped and validated by
// groth16::load_params) once and stays resident for every later job that names it.
//
// Concurrent requests for the same file share one load: the first caller loads, the others
// wait for it. A failed load is not kept, so a corrected file can be loaded by a later request.
#pragma once
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "prover/groth16/keys.hpp"

namespace cuzk::engine {

class ParamsCache {
 public:
  using Key = std::shared_ptr<const groth16::ProvingKey>;

  // The resident key of `path`, loading it when absent. `waited` (optional) is set to true
  // when the key was not resident at the call (this call loaded it, or waited for another
  // caller's load): the time of the call is then the job's srs_load. Throws
  // groth16::ParamsError for a missing or malformed file.
  Key get(const std::string& path, bool* waited = nullptr);
  bool resident(const std::string& path) const;
  // The paths loaded (or loading), sorted.
  std::vector<std::string> paths() const;
  // Drops the cache's reference to `path` (jobs that hold the key keep it until they end);
  // false when it was not cached.
  bool evict(const std::string& path);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_future<Key>> entries_;
};

}  // namespace cuzk::engine
