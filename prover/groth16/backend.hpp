// Proving-stage backends: the CPU reference (always built) and the CUDA backend (cuda/, linked
// where nvcc was found). A backend turns the synthesized witnesses of a batch of circuits that
// share one proving key into proofs, opening the phases of the architecture document under the
// caller's open phase (ntt_h, msm_*, assemble; the CUDA backend adds pin_abc and h2d).
//
// Backends are looked up by name ("cpu", "cuda"). The CUDA library registers itself when the
// binary calls cuzk::cuda::register_backend() (a static library's self-registering objects
// would be dropped by the linker); make_backend() then reports a missing GPU or driver as a
// BackendUnavailable with the reason.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/groth16/key_residency.hpp"
#include "prover/groth16/keys.hpp"
#include "prover/groth16/prover.hpp"

namespace cuzk::groth16 {

class FixedBaseDevice;  // prover/groth16/setup.hpp

// The backend exists in this build but cannot run here (no GPU, no driver), or is not built.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Proofs for ws[i] with randomness rs[i] (same lengths), all under `pk`.
  virtual std::vector<Proof> prove_batch(const ProvingKey& pk, std::span<const Witness> ws,
                                         std::span<const Randomness> rs) = 0;
  // One circuit (a batch of one).
  Proof prove(const ProvingKey& pk, const Witness& w, const Randomness& r) {
    return prove_batch(pk, std::span<const Witness>(&w, 1), std::span<const Randomness>(&r, 1)).at(0);
  }
  // Drops whatever the backend keeps resident for `pk` (device copies of the key's points).
  virtual void release(const ProvingKey& /*pk*/) {}
  // Uploads `pk`'s points to the device now, as its first proof would, and keeps them there
  // (under pk.identity()); returns the queries proving still reads on the host
  // (prover/groth16/key_residency.hpp). A backend without a device holds nothing and reads
  // every query (the default).
  virtual HostQueries hold_key(const ProvingKey& /*pk*/) { return {}; }
  // Bytes in use on the backend's device now, by every process (what nvidia-smi shows as used);
  // nullopt for a backend without a device of its own (the CPU).
  virtual std::optional<uint64_t> device_used_bytes() { return std::nullopt; }
};

// Factory: throws BackendUnavailable with the reason when the backend cannot run here.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

void register_backend(const std::string& name, BackendFactory factory);
// Backends registered in this binary ("cpu" always).
std::vector<std::string> backend_names();
// Throws std::invalid_argument for a name no backend has, BackendUnavailable when it cannot run.
std::unique_ptr<Backend> make_backend(const std::string& name);

std::unique_ptr<Backend> make_cpu_backend(ThreadPool* pool = nullptr);

// Backends with several devices (one instance per device; the CUDA backend registers one):
// a factory per device index and the count of usable devices here. A backend without one has
// exactly one device, index 0 ("cpu": the whole host).
using DeviceBackendFactory = std::function<std::unique_ptr<Backend>(unsigned device)>;
using DeviceCounter = std::function<unsigned()>;
// `held`: the queries its instances still read on the host once they hold a key (what their
// hold_key returns), known before any instance exists so that a plan can count them.
void register_device_backend(const std::string& name, DeviceBackendFactory factory, DeviceCounter count,
                             HostQueries held = {});
// Devices `name` can use here: the registered counter's answer, else 1.
unsigned backend_device_count(const std::string& name);
// The queries a backend of `name` reads on the host once it holds a key: as registered, else
// every query (a backend without devices, such as the CPU, holds nothing).
HostQueries backend_held_host_queries(const std::string& name);
// The backend on device `device`: make_backend(name) for device 0 of a backend without a
// device factory; std::invalid_argument for another index of such a backend.
std::unique_ptr<Backend> make_backend_on(const std::string& name, unsigned device);

// The device a backend offers parameter generation for its fixed-base multiplications
// (groth16::generate_keys' KeygenOptions::device); the CUDA library registers one for "cuda".
using FixedBaseFactory = std::function<std::unique_ptr<FixedBaseDevice>()>;
void register_fixed_base_device(const std::string& backend, FixedBaseFactory factory);
// The device of `backend`, or nullptr where it registered none (the CPU). Throws
// BackendUnavailable when it cannot run here.
std::unique_ptr<FixedBaseDevice> make_fixed_base_device(const std::string& backend);

}  // namespace cuzk::groth16
