#include "prover/engine/params_cache.hpp"

#include <chrono>

#include "prover/groth16/params_file.hpp"

namespace cuzk::engine {

ParamsCache::Key ParamsCache::get(const std::string& path, bool* waited) {
  std::shared_future<Key> fut;
  std::promise<Key> mine;
  bool load_here = false;
  {
    std::lock_guard lk(mu_);
    auto it = entries_.find(path);
    if (it == entries_.end()) {
      fut = mine.get_future().share();
      entries_.emplace(path, fut);
      load_here = true;
    } else {
      fut = it->second;
    }
  }
  if (waited) *waited = load_here || fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  if (load_here) {
    try {
      mine.set_value(std::make_shared<const groth16::ProvingKey>(groth16::load_params(path)));
    } catch (...) {
      // Forget the failure (a later request retries), but give it to everyone already waiting.
      {
        std::lock_guard lk(mu_);
        entries_.erase(path);
      }
      mine.set_exception(std::current_exception());
    }
  }
  return fut.get();
}

bool ParamsCache::resident(const std::string& path) const {
  std::lock_guard lk(mu_);
  auto it = entries_.find(path);
  return it != entries_.end() && it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::vector<std::string> ParamsCache::paths() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& [path, fut] : entries_) out.push_back(path);
  return out;
}

bool ParamsCache::evict(const std::string& path) {
  std::lock_guard lk(mu_);
  return entries_.erase(path) > 0;
}

}  // namespace cuzk::engine
