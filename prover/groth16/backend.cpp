#include "prover/groth16/backend.hpp"

#include <map>
#include <mutex>

#include "prover/groth16/setup.hpp"

namespace cuzk::groth16 {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(ThreadPool* pool) : pool_(pool) {}
  std::string name() const override { return "cpu"; }
  std::vector<Proof> prove_batch(const ProvingKey& pk, std::span<const Witness> ws,
                                 std::span<const Randomness> rs) override {
    if (ws.size() != rs.size())
      throw std::invalid_argument("prove_batch: " + std::to_string(ws.size()) + " witnesses but " +
                                  std::to_string(rs.size()) + " randomness pairs");
    std::vector<Proof> out;
    out.reserve(ws.size());
    for (size_t i = 0; i < ws.size(); ++i) out.push_back(prove_cpu(pk, ws[i], rs[i], pool_));
    return out;
  }

 private:
  ThreadPool* pool_;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, BackendFactory> factories{{"cpu", [] { return make_cpu_backend(); }}};
  std::map<std::string, std::pair<DeviceBackendFactory, DeviceCounter>> device_factories;
  std::map<std::string, HostQueries> held_host_queries;
  std::map<std::string, FixedBaseFactory> fixed_base;
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(ThreadPool* pool) { return std::make_unique<CpuBackend>(pool); }

void register_backend(const std::string& name, BackendFactory factory) {
  std::lock_guard lk(registry().mu);
  registry().factories[name] = std::move(factory);
}

std::vector<std::string> backend_names() {
  std::lock_guard lk(registry().mu);
  std::vector<std::string> out;
  for (auto& [k, v] : registry().factories) out.push_back(k);
  return out;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  BackendFactory f;
  {
    std::lock_guard lk(registry().mu);
    auto it = registry().factories.find(name);
    if (it == registry().factories.end()) {
      std::string known;
      for (auto& [k, v] : registry().factories) known += (known.empty() ? "" : ", ") + k;
      if (name == "cuda")
        throw BackendUnavailable("backend 'cuda' is not built into this binary (nvcc was not found at configure "
                                 "time, or CUZK_CUDA=OFF); backends here: " + known);
      throw std::invalid_argument("unknown backend '" + name + "' (backends here: " + known + ")");
    }
    f = it->second;
  }
  return f();
}

void register_device_backend(const std::string& name, DeviceBackendFactory factory, DeviceCounter count,
                             HostQueries held) {
  std::lock_guard lk(registry().mu);
  registry().device_factories[name] = {std::move(factory), std::move(count)};
  registry().held_host_queries[name] = held;
}

HostQueries backend_held_host_queries(const std::string& name) {
  std::lock_guard lk(registry().mu);
  auto it = registry().held_host_queries.find(name);
  return it == registry().held_host_queries.end() ? HostQueries{} : it->second;
}

unsigned backend_device_count(const std::string& name) {
  DeviceCounter count;
  {
    std::lock_guard lk(registry().mu);
    auto it = registry().device_factories.find(name);
    if (it == registry().device_factories.end()) return 1;
    count = it->second.second;
  }
  return count();
}

std::unique_ptr<Backend> make_backend_on(const std::string& name, unsigned device) {
  DeviceBackendFactory f;
  {
    std::lock_guard lk(registry().mu);
    auto it = registry().device_factories.find(name);
    if (it != registry().device_factories.end()) f = it->second.first;
  }
  if (f) return f(device);
  if (device != 0)
    throw std::invalid_argument("backend '" + name + "' has one device (index 0), not device " + std::to_string(device));
  return make_backend(name);
}

void register_fixed_base_device(const std::string& backend, FixedBaseFactory factory) {
  std::lock_guard lk(registry().mu);
  registry().fixed_base[backend] = std::move(factory);
}

std::unique_ptr<FixedBaseDevice> make_fixed_base_device(const std::string& backend) {
  FixedBaseFactory f;
  {
    std::lock_guard lk(registry().mu);
    auto it = registry().fixed_base.find(backend);
    if (it == registry().fixed_base.end()) return nullptr;
    f = it->second;
  }
  return f();
}

}  // namespace cuzk::groth16
