#include "prover/circom/circom.hpp"

#include <cstring>
#include <map>

#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk::circom {
namespace {

constexpr uint32_t kR1csVersion = 1;
constexpr uint32_t kWtnsVersion = 2;
constexpr uint32_t kFrBytes = 32;

std::string hex_le(const uint8_t* p, size_t n) {
  static const char* x = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = n; i-- > 0;) {
    s += x[p[i] >> 4];
    s += x[p[i] & 15];
  }
  return s;
}

// Bounds-checked little-endian reader over [pos, end).
class Reader {
 public:
  Reader(std::span<const uint8_t> b, std::string name, std::string what, size_t begin, size_t end)
      : b_(b), name_(std::move(name)), what_(std::move(what)), pos_(begin), end_(end) {}
  [[noreturn]] void fail(const std::string& msg) const { throw FormatError(name_ + ": " + msg); }
  void need(size_t n) const {
    if (end_ - pos_ < n)
      fail("truncated " + what_ + ": need " + std::to_string(n) + " more bytes at offset " + std::to_string(pos_) +
           ", only " + std::to_string(end_ - pos_) + " left");
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= uint32_t(b_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t lo = u32();
    return lo | uint64_t(u32()) << 32;
  }
  const uint8_t* bytes(size_t n) {
    need(n);
    const uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  fr_t fr(const std::string& where) {
    const uint8_t* p = bytes(kFrBytes);
    fr_t out;
    if (!fr_t::from_bytes_le(p, out)) fail(where + ": value " + hex_le(p, kFrBytes) + " is not below the field prime r");
    return out;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return end_ - pos_; }

 private:
  std::span<const uint8_t> b_;
  std::string name_, what_;
  size_t pos_, end_;
};

struct Section {
  size_t begin, size;
};

// Magic, version, section table. Duplicated section types: the first wins (like snarkjs).
std::map<uint32_t, Section> read_container(std::span<const uint8_t> b, const std::string& name, const char* magic,
                                           uint32_t min_version, uint32_t max_version) {
  Reader r(b, name, "file header", 0, b.size());
  if (b.size() < 4 || std::memcmp(b.data(), magic, 4) != 0) {
    std::string got = b.size() >= 4 ? std::string(reinterpret_cast<const char*>(b.data()), 4) : std::string("(short file)");
    for (char& ch : got)
      if (ch < 32 || ch > 126) ch = '?';
    r.fail(std::string("wrong magic '") + got + "': not a ." + magic + " file (expected '" + magic + "')");
  }
  r.bytes(4);
  uint32_t version = r.u32();
  if (version < min_version || version > max_version)
    r.fail("unsupported ." + std::string(magic) + " version " + std::to_string(version) + " (supported: " +
           std::to_string(min_version) + (max_version != min_version ? ".." + std::to_string(max_version) : "") + ")");
  uint32_t n = r.u32();
  std::map<uint32_t, Section> out;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t type = r.u32();
    uint64_t size = r.u64();
    if (size > r.left())
      r.fail("truncated section " + std::to_string(type) + ": declares " + std::to_string(size) + " bytes at offset " +
             std::to_string(r.pos()) + ", the file has " + std::to_string(r.left()) + " left");
    out.emplace(type, Section{r.pos(), size_t(size)});
    r.bytes(size_t(size));
  }
  return out;
}

void check_prime(Reader& r, const char* kind) {
  uint32_t n8 = r.u32();
  if (n8 != kFrBytes)
    r.fail(std::string(kind) + " field size is " + std::to_string(n8) + " bytes; cuzk accepts only BLS12-381's Fr (" +
           std::to_string(kFrBytes) + " bytes): compile with circom --prime bls12381");
  const uint8_t* p = r.bytes(kFrBytes);
  uint8_t want[kFrBytes];
  const limbs_t<4> m = fr_t::modulus();
  for (int i = 0; i < 32; i++) want[i] = uint8_t(m.v[i / 8] >> (8 * (i % 8)));
  if (std::memcmp(p, want, kFrBytes) != 0)
    r.fail(std::string(kind) + " prime is " + hex_le(p, kFrBytes) + ", not BLS12-381's Fr r = " +
           hex_le(want, kFrBytes) + ": compile with circom --prime bls12381");
}

std::vector<uint8_t> slurp(const std::string& path) {
  InputFile in(path, throw_as<FormatError>);
  return in.read_bytes();
}

const Section& section(const std::map<uint32_t, Section>& s, uint32_t type, const std::string& name, const char* what) {
  auto it = s.find(type);
  if (it == s.end()) throw FormatError(name + ": missing section " + std::to_string(type) + " (" + what + ")");
  return it->second;
}

}  // namespace

R1csFile parse_r1cs(std::span<const uint8_t> bytes, const std::string& name) {
  auto secs = read_container(bytes, name, "r1cs", kR1csVersion, kR1csVersion);
  const Section& hs = section(secs, 1, name, "header");
  Reader h(bytes, name, "header section", hs.begin, hs.begin + hs.size);
  check_prime(h, "r1cs");
  R1csFile f;
  f.n_wires = h.u32();
  f.n_pub_out = h.u32();
  f.n_pub_in = h.u32();
  f.n_prv_in = h.u32();
  f.n_labels = h.u64();
  uint32_t m = h.u32();
  if (f.n_wires == 0) h.fail("header declares 0 wires (wire 0 is the constant 1)");
  // Summed in 64 bits: three u32 counts near 2^32 must not wrap into a small total.
  const uint64_t n_inputs = uint64_t(f.n_pub_out) + f.n_pub_in + f.n_prv_in;
  if (n_inputs >= f.n_wires)
    h.fail("header declares " + std::to_string(uint64_t(f.n_pub_out) + f.n_pub_in) + " public and " +
           std::to_string(f.n_prv_in) + " private inputs but only " + std::to_string(f.n_wires) + " wires");
  // Wires cost memory at synthesis even when no constraint names them: a stated maximum.
  if (f.n_wires > limits::max_constraints()) h.fail(limits::over_max_constraints("header: nWires", f.n_wires));
  if (m > limits::max_constraints()) h.fail(limits::over_max_constraints("header: mConstraints", m));
  // circom writes the wire-to-label map with one u64 per wire: when present it must agree.
  if (auto it = secs.find(3); it != secs.end() && it->second.size != uint64_t(f.n_wires) * 8)
    h.fail("wire-to-label section has " + std::to_string(it->second.size) + " bytes, but " + std::to_string(f.n_wires) +
           " wires need " + std::to_string(uint64_t(f.n_wires) * 8));

  const Section& cs = section(secs, 2, name, "constraints");
  Reader r(bytes, name, "constraints section", cs.begin, cs.begin + cs.size);
  // Each constraint holds at least its three term counts: refuse counts the section cannot
  // hold before allocating for them.
  if (uint64_t(m) * 12 > cs.size)
    r.fail("header declares " + std::to_string(m) + " constraints (at least " + std::to_string(uint64_t(m) * 12) +
           " bytes), the constraints section has " + std::to_string(cs.size));
  f.constraints.resize(m);
  static const char* kMat[3] = {"A", "B", "C"};
  for (uint32_t i = 0; i < m; i++) {
    Constraint& k = f.constraints[i];
    std::vector<WireTerm>* mats[3] = {&k.a, &k.b, &k.c};
    for (int j = 0; j < 3; j++) {
      uint32_t n = r.u32();
      if (uint64_t(n) * (4 + kFrBytes) > r.left())
        r.fail("truncated constraints section: constraint " + std::to_string(i) + " matrix " + kMat[j] + " declares " +
               std::to_string(n) + " terms, only " + std::to_string(r.left()) + " bytes left");
      mats[j]->reserve(n);
      for (uint32_t t = 0; t < n; t++) {
        uint32_t wire = r.u32();
        std::string where = "constraint " + std::to_string(i) + " matrix " + kMat[j] + " term " + std::to_string(t);
        if (wire >= f.n_wires)
          r.fail(where + ": wire " + std::to_string(wire) + " is out of range (the header declares " +
                 std::to_string(f.n_wires) + " wires)");
        mats[j]->push_back(WireTerm{wire, r.fr(where)});
      }
    }
  }
  return f;
}

R1csFile read_r1cs(const std::string& path) {
  std::vector<uint8_t> b = slurp(path);
  return parse_r1cs(b, path);
}

std::vector<fr_t> parse_wtns(std::span<const uint8_t> bytes, const std::string& name) {
  auto secs = read_container(bytes, name, "wtns", 1, kWtnsVersion);
  const Section& hs = section(secs, 1, name, "header");
  Reader h(bytes, name, "header section", hs.begin, hs.begin + hs.size);
  check_prime(h, "wtns");
  uint32_t n = h.u32();
  if (n > limits::max_constraints()) h.fail(limits::over_max_constraints("header: witness values", n));
  const Section& ds = section(secs, 2, name, "witness values");
  Reader r(bytes, name, "witness section", ds.begin, ds.begin + ds.size);
  if (uint64_t(n) * kFrBytes > ds.size)
    r.fail("truncated witness section: header declares " + std::to_string(n) + " values (" +
           std::to_string(uint64_t(n) * kFrBytes) + " bytes), the section has " + std::to_string(ds.size));
  std::vector<fr_t> w;
  w.reserve(n);
  for (uint32_t i = 0; i < n; i++) w.push_back(r.fr("witness value " + std::to_string(i)));
  return w;
}

std::vector<fr_t> read_wtns(const std::string& path) {
  std::vector<uint8_t> b = slurp(path);
  return parse_wtns(b, path);
}

CircomCircuit::CircomCircuit(R1csFile r1cs, std::vector<fr_t> witness) : r1cs_(std::move(r1cs)), witness_(std::move(witness)) {
  if (!witness_.empty()) {
    if (witness_.size() != r1cs_.n_wires)
      throw FormatError("witness has " + std::to_string(witness_.size()) + " values but the circuit has " +
                        std::to_string(r1cs_.n_wires) + " wires (witness from a different circuit?)");
    if (witness_[0] != fr_t::one()) throw FormatError("witness value 0 (the constant wire) is not 1");
  }
}

r1cs::SizeHint CircomCircuit::size_hint() const {
  return r1cs::SizeHint{r1cs_.constraints.size() + r1cs_.num_public() + 1, uint64_t(r1cs_.num_public()) + 1,
                        uint64_t(r1cs_.n_wires) - r1cs_.num_public() - 1};
}

}  // namespace cuzk::circom
