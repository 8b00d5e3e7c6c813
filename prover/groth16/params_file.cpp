#include "prover/groth16/params_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "prover/interop/input_file.hpp"

namespace cuzk::groth16 {
namespace {

constexpr char kMagic[8] = {'C', 'U', 'Z', 'K', 'P', 'A', 'R', 'M'};
constexpr size_t kHeaderBytes = 144;

struct Header {
  char magic[8];
  uint32_t version, convention;
  uint64_t num_inputs, num_aux, num_constraints, domain_size, seed;
  uint64_t n_ic, n_a, n_b_g1, n_b_g2, n_h, n_l;
  uint32_t g1_bytes, g2_bytes;
  uint64_t payload_bytes, payload_checksum, header_checksum, reserved;
};
static_assert(sizeof(Header) == kHeaderBytes, "parameter header layout");
static_assert(sizeof(g1_affine_t) % 8 == 0 && sizeof(g2_affine_t) % 8 == 0, "point layout must keep 8-byte alignment");

uint64_t header_hash(const Header& h) { return params_checksum(&h, offsetof(Header, header_checksum)); }

template <class T>
void put_point(std::vector<uint8_t>& out, const T& p) {
  T clean;
  std::memset(static_cast<void*>(&clean), 0, sizeof clean);  // zero padding, so files are byte-identical
  clean.x = p.x;
  clean.y = p.y;
  clean.inf = p.inf;
  const auto* b = reinterpret_cast<const uint8_t*>(&clean);
  out.insert(out.end(), b, b + sizeof clean);
}

struct Mapping {
  void* addr = nullptr;
  size_t len = 0;
  ~Mapping() {
    if (addr) munmap(addr, len);
  }
};

std::string sys_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// a * b + c, or false when it does not fit in 64 bits.
bool mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out) && !__builtin_add_overflow(out, c, &out);
}

// Everything the header promises, checked before any byte of the payload is touched: the
// counts and their sizes without overflow, the file length, and a domain the prover can use.
// Returns the payload size. (The payload checksum is checked by the caller, on the mapping.)
uint64_t validate_header(const Header& h, uint64_t file_size, const std::string& path) {
  if (std::memcmp(h.magic, kMagic, 8) != 0) throw ParamsError(path + ": not a cuzk parameter file (bad magic)");
  if (h.version != kParamsVersion)
    throw ParamsError(path + ": parameter file version " + std::to_string(h.version) + ", this build reads version " +
                      std::to_string(kParamsVersion) + " (regenerate with `cuzk-bench srs generate`)");
  if (h.header_checksum != header_hash(h)) throw ParamsError(path + ": corrupt parameter file (header checksum mismatch)");
  if (h.g1_bytes != sizeof(g1_affine_t) || h.g2_bytes != sizeof(g2_affine_t))
    throw ParamsError(path + ": parameter file written with a different point layout (G1 " + std::to_string(h.g1_bytes) +
                      " bytes, this build uses " + std::to_string(sizeof(g1_affine_t)) + ")");
  if (h.convention > 1) throw ParamsError(path + ": unknown H convention " + std::to_string(h.convention));
  const uint64_t max_domain = uint64_t(1) << kMaxParamsDomainLog;
  if (h.domain_size == 0 || !std::has_single_bit(h.domain_size) || h.domain_size > max_domain)
    throw ParamsError(path + ": corrupt parameter file (domain size " + std::to_string(h.domain_size) +
                      " is not a power of two in [1, 2^" + std::to_string(kMaxParamsDomainLog) + "])");
  // bellman's H has n - 1 coefficients (deg H <= n - 2), snarkjs's n (HConvention).
  const uint64_t want_h = h.convention == uint32_t(HConvention::kBellman) ? h.domain_size - 1 : h.domain_size;
  if (h.n_h != want_h || h.num_constraints > h.domain_size)
    throw ParamsError(path + ": corrupt parameter file (" + std::to_string(h.num_constraints) + " constraints and " +
                      std::to_string(h.n_h) + " H points do not fit a domain of " + std::to_string(h.domain_size) + ")");
  // the verifying key holds three G1 points (alpha, beta, delta) and three G2 (beta, gamma, delta)
  uint64_t g1n = 3, g2n = 3, payload = 0;
  bool ok = !__builtin_add_overflow(g2n, h.n_b_g2, &g2n);
  for (uint64_t n : {h.n_ic, h.n_a, h.n_b_g1, h.n_h, h.n_l}) ok = ok && !__builtin_add_overflow(g1n, n, &g1n);
  ok = ok && mul_add(g1n, h.g1_bytes, 0, payload) && mul_add(g2n, h.g2_bytes, payload, payload);
  if (!ok || h.payload_bytes != payload)
    throw ParamsError(path + ": corrupt parameter file (payload size disagrees with the point counts)");
  if (file_size < kHeaderBytes || file_size - kHeaderBytes != h.payload_bytes)
    throw ParamsError(path + ": truncated parameter file (" + std::to_string(file_size) + " bytes, expected " +
                      (h.payload_bytes <= UINT64_MAX - kHeaderBytes ? std::to_string(kHeaderBytes + h.payload_bytes)
                                                                    : std::string("more than 2^64")) +
                      ")");
  return payload;
}

}  // namespace

uint64_t params_checksum(const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0x243F6A8885A308D3ull ^ bytes;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = ((h ^ w) << 29 | (h ^ w) >> 35) * 0x9E3779B97F4A7C15ull;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h ^ (h >> 31);
}

void save_params(const ProvingKey& pk, const std::string& path) {
  std::vector<uint8_t> payload;
  const auto& vk = pk.vk;
  put_point(payload, vk.alpha_g1);
  put_point(payload, vk.beta_g1);
  put_point(payload, vk.beta_g2);
  put_point(payload, vk.gamma_g2);
  put_point(payload, vk.delta_g1);
  put_point(payload, vk.delta_g2);
  for (const auto& p : vk.ic) put_point(payload, p);
  for (const auto& p : pk.a_query) put_point(payload, p);
  for (const auto& p : pk.b_g1_query) put_point(payload, p);
  for (const auto& p : pk.b_g2_query) put_point(payload, p);
  for (const auto& p : pk.h_query) put_point(payload, p);
  for (const auto& p : pk.l_query) put_point(payload, p);
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, 8);
  h.version = kParamsVersion;
  h.convention = uint32_t(pk.convention);
  h.num_inputs = pk.num_inputs;
  h.num_aux = pk.num_aux;
  h.num_constraints = pk.num_constraints;
  h.domain_size = pk.domain_size;
  h.seed = pk.seed;
  h.n_ic = vk.ic.size();
  h.n_a = pk.a_query.size();
  h.n_b_g1 = pk.b_g1_query.size();
  h.n_b_g2 = pk.b_g2_query.size();
  h.n_h = pk.h_query.size();
  h.n_l = pk.l_query.size();
  h.g1_bytes = sizeof(g1_affine_t);
  h.g2_bytes = sizeof(g2_affine_t);
  h.payload_bytes = payload.size();
  h.payload_checksum = params_checksum(payload.data(), payload.size());
  h.header_checksum = header_hash(h);

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw ParamsError(sys_error("cannot write parameters to", path));
  auto write_all = [&](const void* d, size_t n) {
    const auto* b = static_cast<const uint8_t*>(d);
    while (n > 0) {
      ssize_t k = ::write(fd, b, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        std::string msg = sys_error("cannot write parameters to", path);
        ::close(fd);
        ::unlink(tmp.c_str());
        throw ParamsError(msg);
      }
      b += k;
      n -= size_t(k);
    }
  };
  write_all(&h, sizeof h);
  write_all(payload.data(), payload.size());
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw ParamsError(sys_error("cannot write parameters to", path));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw ParamsError(sys_error("cannot move parameters into place at", path));
  }
}

ProvingKey load_params(const std::string& path) {
  // Mapping a device (/dev/zero maps) or a /proc file would not be the file's bytes.
  const InputFile in(path, throw_as<ParamsError>);
  const size_t size = size_t(in.size());
  if (size < kHeaderBytes)
    throw ParamsError(path + ": truncated parameter file (" + std::to_string(size) + " bytes, the header alone is " +
                      std::to_string(kHeaderBytes) + ")");
  auto map = std::make_shared<Mapping>();
  map->len = size;
  map->addr = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, in.fd(), 0);
  if (map->addr == MAP_FAILED) {
    map->addr = nullptr;
    throw ParamsError(sys_error("cannot map parameter file", path));
  }
  const auto* base = static_cast<const uint8_t*>(map->addr);
  Header h;
  std::memcpy(&h, base, sizeof h);
  validate_header(h, size, path);
  const uint8_t* payload = base + kHeaderBytes;
  if (params_checksum(payload, h.payload_bytes) != h.payload_checksum)
    throw ParamsError(path + ": corrupt parameter file (payload checksum mismatch)");
  // An infinity flag other than 0/1 cannot be a valid bool; the checksum makes this unlikely,
  // but reading such a byte as bool would be undefined behaviour.
  ProvingKey pk;
  size_t off = 0;
  auto g1 = [&](uint64_t n) {
    auto* p = reinterpret_cast<const g1_affine_t*>(payload + off);
    for (uint64_t i = 0; i < n; ++i)
      if (payload[off + i * sizeof(g1_affine_t) + offsetof(g1_affine_t, inf)] > 1)
        throw ParamsError(path + ": corrupt parameter file (bad point flag)");
    off += n * sizeof(g1_affine_t);
    return PointArray<g1_affine_t>::view(map, p, n);
  };
  auto g2 = [&](uint64_t n) {
    auto* p = reinterpret_cast<const g2_affine_t*>(payload + off);
    for (uint64_t i = 0; i < n; ++i)
      if (payload[off + i * sizeof(g2_affine_t) + offsetof(g2_affine_t, inf)] > 1)
        throw ParamsError(path + ": corrupt parameter file (bad point flag)");
    off += n * sizeof(g2_affine_t);
    return PointArray<g2_affine_t>::view(map, p, n);
  };
  pk.vk.alpha_g1 = g1(1)[0];
  pk.vk.beta_g1 = g1(1)[0];
  pk.vk.beta_g2 = g2(1)[0];
  pk.vk.gamma_g2 = g2(1)[0];
  pk.vk.delta_g1 = g1(1)[0];
  pk.vk.delta_g2 = g2(1)[0];
  pk.vk.ic = g1(h.n_ic);
  pk.a_query = g1(h.n_a);
  pk.b_g1_query = g1(h.n_b_g1);
  pk.b_g2_query = g2(h.n_b_g2);
  pk.h_query = g1(h.n_h);
  pk.l_query = g1(h.n_l);
  pk.convention = HConvention(h.convention);
  pk.num_inputs = h.num_inputs;
  pk.num_aux = h.num_aux;
  pk.num_constraints = h.num_constraints;
  pk.domain_size = h.domain_size;
  pk.seed = h.seed;
  pk.origin = "file:" + path;
  if (pk.a_query.size() != pk.num_inputs + pk.num_aux || pk.vk.ic.size() != pk.num_inputs ||
      pk.l_query.size() != pk.num_aux)
    throw ParamsError(path + ": corrupt parameter file (query lengths disagree with the circuit shape)");
  return pk;
}

void check_params_shape(const ProvingKey& pk, uint64_t ni, uint64_t na, uint64_t nc, const std::string& what) {
  if (pk.num_inputs != ni || pk.num_aux != na || pk.num_constraints != nc)
    throw ParamsError("parameters (" + pk.origin + ") are for a circuit with " + std::to_string(pk.num_inputs) +
                      " inputs, " + std::to_string(pk.num_aux) + " auxiliaries and " +
                      std::to_string(pk.num_constraints) + " constraints, but " + what + " has " + std::to_string(ni) +
                      ", " + std::to_string(na) + " and " + std::to_string(nc));
}

}  // namespace cuzk::groth16
