#include "prover/interop/zkey.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include "prover/circom/circom.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::interop {
namespace {

ThreadPool& pick(ThreadPool* p) { return p ? *p : ThreadPool::global(); }

constexpr size_t kN8q = 48, kN8r = 32;
constexpr size_t kG1 = 2 * kN8q, kG2 = 4 * kN8q;
constexpr size_t kCoef = 12 + kN8r;

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

template <int N>
void limbs_le(const uint8_t* p, uint64_t* out) {
  for (int i = 0; i < N; i++) {
    out[i] = 0;
    for (int b = 0; b < 8; b++) out[i] |= uint64_t(p[8 * i + b]) << (8 * b);
  }
}

struct Section {
  uint64_t offset, size;
};

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, const std::string& name) : b_(bytes), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const { throw ZkeyError(name_ + ": " + what); }

  void read_container() {
    if (b_.size() < 12) fail("truncated: " + std::to_string(b_.size()) + " bytes, too short for a zkey header");
    if (std::memcmp(b_.data(), "zkey", 4) != 0) {
      std::string got;
      for (int i = 0; i < 4; i++) got += (b_[i] >= 32 && b_[i] < 127) ? char(b_[i]) : '?';
      fail("bad magic '" + got + "' (not a snarkjs .zkey file; expected 'zkey')");
    }
    uint32_t version = le32(b_.data() + 4);
    if (version != 1 && version != 2)
      fail("unsupported zkey version " + std::to_string(version) + " (supported: 1, 2)");
    uint32_t n = le32(b_.data() + 8);
    uint64_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
      if (b_.size() - pos < 12) fail("truncated in the header of section " + std::to_string(i) + " of " + std::to_string(n));
      uint32_t type = le32(b_.data() + pos);
      uint64_t size = le64(b_.data() + pos + 4);
      pos += 12;
      if (size > b_.size() - pos)
        fail("truncated: section " + std::to_string(type) + " declares " + std::to_string(size) + " bytes, " +
             std::to_string(b_.size() - pos) + " remain in the file");
      if (sections_.count(type)) fail("section " + std::to_string(type) + " appears twice");
      sections_[type] = Section{pos, size};
      pos += size;
    }
  }

  const uint8_t* section(uint32_t type, const char* what, uint64_t want_size, bool exact = true) {
    auto it = sections_.find(type);
    if (it == sections_.end()) fail(std::string("missing section ") + std::to_string(type) + " (" + what + ")");
    const Section& s = it->second;
    if (exact ? s.size != want_size : s.size < want_size)
      fail(std::string("section ") + std::to_string(type) + " (" + what + ") has " + std::to_string(s.size) +
           " bytes, expected " + (exact ? "" : "at least ") + std::to_string(want_size) +
           (s.size < want_size ? " (truncated?)" : ""));
    return b_.data() + s.offset;
  }
  uint64_t section_size(uint32_t type) const { return sections_.at(type).size; }

  fp_t fq(const uint8_t* p, const std::string& where) const {
    uint64_t l[6];
    limbs_le<6>(p, l);
    if (!fp_t::less_than_modulus(l)) fail(where + ": coordinate is not less than q (corrupt file?)");
    return fp_t::from_raw(l);
  }
  static bool all_zero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (p[i]) return false;
    return true;
  }
  g1_affine_t g1(const uint8_t* p, const std::string& where, bool subgroup) const {
    if (all_zero(p, kG1)) return g1_affine_t::infinity();
    g1_affine_t a = g1_affine_t::from_xy(fq(p, where), fq(p + kN8q, where));
    if (!a.is_on_curve()) fail(where + ": G1 point is not on the curve (corrupt file?)");
    if (subgroup && !a.in_subgroup()) fail(where + ": G1 point is not in the order-r subgroup");
    return a;
  }
  g2_affine_t g2(const uint8_t* p, const std::string& where, bool subgroup) const {
    if (all_zero(p, kG2)) return g2_affine_t::infinity();
    fp2_t x{fq(p, where), fq(p + kN8q, where)};
    fp2_t y{fq(p + 2 * kN8q, where), fq(p + 3 * kN8q, where)};
    g2_affine_t a = g2_affine_t::from_xy(x, y);
    if (!a.is_on_curve()) fail(where + ": G2 point is not on the curve (corrupt file?)");
    if (subgroup && !a.in_subgroup()) fail(where + ": G2 point is not in the order-r subgroup");
    return a;
  }
  template <class Pt, size_t Size, bool IsG2>
  std::vector<Pt> points(uint32_t type, const char* what, uint64_t count, ThreadPool& tp) {
    const uint8_t* base = section(type, what, count * Size);
    std::vector<Pt> out(count);
    tp.parallel_for(count, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; i++) {
        const uint8_t* p = base + i * Size;
        auto w = [&] { return std::string("section ") + std::to_string(type) + " (" + what + ") point " + std::to_string(i); };
        if constexpr (IsG2)
          out[i] = g2(p, w(), false);
        else
          out[i] = g1(p, w(), false);
      }
    });
    return out;
  }

 private:
  std::span<const uint8_t> b_;
  std::string name_;
  std::map<uint32_t, Section> sections_;
};

// Counting sort of (row, col, value) triples into CSR, keeping the file order within a row.
struct Triple {
  uint32_t row, col;
  fr_t v;
};
r1cs::CsrMatrix to_csr(const std::vector<Triple>& t, uint64_t rows) {
  r1cs::CsrMatrix m;
  m.row_ptr.assign(rows + 1, 0);
  for (const Triple& e : t) m.row_ptr[e.row + 1]++;
  for (uint64_t i = 0; i < rows; i++) m.row_ptr[i + 1] += m.row_ptr[i];
  m.col.resize(t.size());
  m.coeff.resize(t.size());
  std::vector<uint64_t> fill(m.row_ptr.begin(), m.row_ptr.end() - 1);
  for (const Triple& e : t) {
    uint64_t k = fill[e.row]++;
    m.col[k] = e.col;
    m.coeff[k] = e.v;
  }
  return m;
}

std::string fr_key(const fr_t& v) {
  uint64_t c[4];
  v.to_canonical(c);
  return std::string(reinterpret_cast<const char*>(c), sizeof c);
}

// snarkjs (ffjavascript) numbers its domain with its own roots of unity: w[s] = nqr^t for the
// smallest quadratic non-residue nqr (5 for BLS12-381's r; t = (r-1)/2^32), w[k] = w[k+1]^2,
// and the coset shift of groth16_prove is w[log n + 1]. Ours derive from 7^t. Both primitive
// 2n-th roots generate the same cyclic group: snarkjs's = ours^k for an odd k, found here by a
// 2-adic discrete logarithm (Pohlig-Hellman in a group of order 2^m, m = log n + 1).
uint64_t snarkjs_root_exponent(uint64_t domain) {
  int m = 1;
  while ((uint64_t(1) << (m - 1)) < domain) m++;  // 2^m = 2n
  fr_t nqr = fr_t::from_u64(2);
  while (nqr.legendre() != -1) nqr += fr_t::one();
  constexpr int S = fr_t::two_adicity();
  constexpr limbs_t<4> T = detail::shr_any(detail::sub_small(fr_t::modulus(), 1), S);
  fr_t theirs = nqr.pow(T.v, 4);
  for (int i = S; i > m; i--) theirs = theirs.sqr();  // primitive 2^m-th root (snarkjs's inc)
  const fr_t ours = fr_t::root_of_unity(m);
  const fr_t ours_inv = ours.inv();
  uint64_t k = 0;
  for (int b = 0; b < m; b++) {
    fr_t x = theirs * ours_inv.pow(k);  // order divides 2^(m-b)
    for (int i = 0; i < m - 1 - b; i++) x = x.sqr();
    if (!x.is_one()) k |= uint64_t(1) << b;  // x == -1
  }
  if (ours.pow(k) != theirs) throw std::logic_error("zkey: snarkjs's root of unity is not a power of ours");
  return k;
}

}  // namespace

ZkeyCircuit parse_zkey(std::span<const uint8_t> bytes, const std::string& name, ThreadPool* pool) {
  ThreadPool& tp = pick(pool);
  Parser P(bytes, name);
  P.read_container();

  const uint8_t* h1 = P.section(1, "protocol header", 4);
  uint32_t protocol = le32(h1);
  if (protocol != 1)
    P.fail("protocol " + std::to_string(protocol) + " is not Groth16 (1)" +
           (protocol == 2 ? ": a PLONK key" : protocol == 10 ? ": an FFLONK key" : ""));

  // Groth16 header: sizes first, then the curve check, then the fixed-size remainder.
  const uint8_t* h = P.section(2, "Groth16 header", 4, false);
  uint64_t h_size = P.section_size(2);
  uint32_t n8q = le32(h);
  if (n8q != kN8q)
    P.fail("curve: base field element size n8q = " + std::to_string(n8q) +
           " bytes, expected 48 (BLS12-381); this key is for another curve (bn128 has n8q = 32)");
  const uint64_t want_h = 4 + kN8q + 4 + kN8r + 12 + 3 * kG1 + 3 * kG2;
  if (h_size < 4 + kN8q + 4) P.fail("section 2 (Groth16 header) truncated");
  uint64_t q[6];
  limbs_le<6>(h + 4, q);
  constexpr limbs_t<6> Q = fp_t::modulus();
  if (!std::equal(q, q + 6, Q.v)) P.fail("curve: the base field prime q is not BLS12-381's (wrong curve)");
  uint32_t n8r = le32(h + 4 + kN8q);
  if (n8r != kN8r) P.fail("curve: scalar field element size n8r = " + std::to_string(n8r) + ", expected 32");
  if (h_size != want_h)
    P.fail("section 2 (Groth16 header) has " + std::to_string(h_size) + " bytes, expected " + std::to_string(want_h));
  uint64_t r[4];
  limbs_le<4>(h + 8 + kN8q, r);
  constexpr limbs_t<4> R = fr_t::modulus();
  if (!std::equal(r, r + 4, R.v)) P.fail("curve: the scalar field prime r is not BLS12-381's (wrong curve)");
  const uint8_t* p = h + 8 + kN8q + kN8r;
  ZkeyCircuit z;
  z.n_vars = le32(p);
  z.n_public = le32(p + 4);
  uint64_t domain = le32(p + 8);
  p += 12;
  if (z.n_vars < z.n_public + 1)
    P.fail("header: nVars = " + std::to_string(z.n_vars) + " is smaller than nPublic + 1 = " + std::to_string(z.n_public + 1));
  if (domain < 2 || (domain & (domain - 1)) != 0 || domain > (uint64_t(1) << 28))
    P.fail("header: domainSize = " + std::to_string(domain) + " is not a power of two in [2, 2^28]");
  // The H section holds one point per domain element: checked now, so that the domain (and
  // every row number below it, which sizes the coefficient matrices) is backed by the file's
  // bytes before anything is allocated by it.
  P.section(9, "H: one G1 point per domain element", domain * kG1);

  groth16::ProvingKey& pk = z.pk;
  groth16::VerifyingKey& vk = pk.vk;
  vk.alpha_g1 = P.g1(p, "header alpha_1", true);
  vk.beta_g1 = P.g1(p + kG1, "header beta_1", true);
  vk.beta_g2 = P.g2(p + 2 * kG1, "header beta_2", true);
  vk.gamma_g2 = P.g2(p + 2 * kG1 + kG2, "header gamma_2", true);
  vk.delta_g1 = P.g1(p + 2 * kG1 + 2 * kG2, "header delta_1", true);
  vk.delta_g2 = P.g2(p + 3 * kG1 + 2 * kG2, "header delta_2", true);

  // IC, with subgroup checks (few points, and they define what the verifier accepts).
  {
    const uint8_t* ic = P.section(3, "IC", (z.n_public + 1) * kG1);
    std::vector<g1_affine_t> v(z.n_public + 1);
    for (uint64_t i = 0; i <= z.n_public; i++) v[i] = P.g1(ic + i * kG1, "section 3 (IC) point " + std::to_string(i), true);
    vk.ic = std::move(v);
  }

  // Coefficients (section 4).
  {
    const uint8_t* c = P.section(4, "coefficients", 4, false);
    uint64_t count = le32(c);
    P.section(4, "coefficients", 4 + count * kCoef);
    std::vector<Triple> ta, tb;
    uint32_t rows = 0;
    for (uint64_t i = 0; i < count; i++) {
      const uint8_t* e = c + 4 + i * kCoef;
      uint32_t matrix = le32(e), row = le32(e + 4), sig = le32(e + 8);
      auto where = [&] { return "section 4 (coefficients) entry " + std::to_string(i) + ": "; };
      if (matrix > 1) P.fail(where() + "matrix " + std::to_string(matrix) + " (expected 0 = A or 1 = B)");
      if (row >= domain)
        P.fail(where() + "constraint " + std::to_string(row) + " is outside the domain (" + std::to_string(domain) + ")");
      if (sig >= z.n_vars) P.fail(where() + "signal " + std::to_string(sig) + " >= nVars " + std::to_string(z.n_vars));
      uint64_t l[4];
      limbs_le<4>(e + 12, l);
      if (!fr_t::less_than_modulus(l)) P.fail(where() + "value is not less than r");
      // bytes = v R^2 mod r: read as Montgomery limbs they stand for v R; its canonical
      // integer, v R, is the Montgomery representation of v.
      uint64_t canon[4];
      fr_t::from_raw(l).to_canonical(canon);
      (matrix == 0 ? ta : tb).push_back(Triple{row, sig, fr_t::from_raw(canon)});
      rows = std::max(rows, row + 1);
    }
    z.A = to_csr(ta, rows);
    z.B = to_csr(tb, rows);
    pk.num_constraints = rows;
  }

  pk.convention = groth16::HConvention::kSnarkjs;
  pk.num_inputs = z.n_public + 1;
  pk.num_aux = z.n_vars - z.n_public - 1;
  pk.domain_size = domain;
  pk.a_query = P.points<g1_affine_t, kG1, false>(5, "A", z.n_vars, tp);
  pk.b_g1_query = P.points<g1_affine_t, kG1, false>(6, "B1", z.n_vars, tp);
  pk.b_g2_query = P.points<g2_affine_t, kG2, true>(7, "B2", z.n_vars, tp);
  pk.l_query = P.points<g1_affine_t, kG1, false>(8, "C", pk.num_aux, tp);
  // Reorder the H points to our evaluation order: snarkjs's point j belongs to the evaluation at
  // inc'^(2j+1) = inc^(k(2j+1)), which our compute_h puts at index i with 2i+1 = k(2j+1) mod 2n.
  z.root_exponent = snarkjs_root_exponent(domain);
  {
    std::vector<g1_affine_t> hf = P.points<g1_affine_t, kG1, false>(9, "H", domain, tp);
    std::vector<g1_affine_t> h(domain);
    const uint64_t mask2n = 2 * domain - 1, k = z.root_exponent;
    tp.parallel_for(domain, [&](size_t lo, size_t hi) {
      for (size_t j = lo; j < hi; j++) {
        uint64_t e = uint64_t((unsigned __int128)k * (2 * j + 1) & mask2n);
        h[(e - 1) / 2] = hf[j];
      }
    });
    pk.h_query = std::move(h);
  }
  pk.seed = 0;
  pk.origin = "zkey:" + name;
  return z;
}

ZkeyCircuit read_zkey(const std::string& path, ThreadPool* pool) {
  InputFile in(path, throw_as<ZkeyError>);
  const std::vector<uint8_t> bytes = in.read_bytes();
  return parse_zkey(bytes, path, pool);
}

Abc compute_abc(const ZkeyCircuit& z, std::span<const fr_t> wires, const std::string& wtns_name, ThreadPool* pool) {
  if (wires.size() != z.n_vars)
    throw ZkeyError(wtns_name + ": witness has " + std::to_string(wires.size()) + " values, the zkey's circuit has " +
                    std::to_string(z.n_vars) + " wires (witness of another circuit?)");
  if (!wires[0].is_one()) throw ZkeyError(wtns_name + ": witness value 0 must be the constant 1");
  ThreadPool& tp = pick(pool);
  const uint64_t rows = z.pk.num_constraints, n = z.pk.domain_size, k = z.root_exponent;
  Abc out;
  out.a.assign(n, fr_t::zero());
  out.b.assign(n, fr_t::zero());
  out.c.assign(n, fr_t::zero());
  // snarkjs's row c sits at its w'^c = w^(k c): our index k c mod n.
  tp.parallel_for(rows, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) {
      uint64_t at = uint64_t((unsigned __int128)k * i & (n - 1));
      out.a[at] = r1cs::R1csMatrices::row_value(z.A, i, wires.data());
      out.b[at] = r1cs::R1csMatrices::row_value(z.B, i, wires.data());
      out.c[at] = out.a[at] * out.b[at];
    }
  });
  return out;
}

groth16::Witness make_witness(const ZkeyCircuit& z, std::span<const fr_t> wires, const Abc& abc) {
  groth16::Witness w;
  w.a = abc.a;
  w.b = abc.b;
  w.c = abc.c;
  w.input = wires.subspan(0, z.n_public + 1);
  w.aux = wires.subspan(z.n_public + 1);
  return w;
}

void check_r1cs_matches(const ZkeyCircuit& z, const circom::R1csFile& r1cs, const std::string& zkey_name,
                        const std::string& r1cs_name) {
  auto fail = [&](const std::string& what) {
    throw ZkeyError(r1cs_name + ": does not match " + zkey_name + ": " + what);
  };
  if (r1cs.n_wires != z.n_vars)
    fail("the r1cs has " + std::to_string(r1cs.n_wires) + " wires, the zkey " + std::to_string(z.n_vars));
  if (r1cs.num_public() != z.n_public)
    fail("the r1cs has " + std::to_string(r1cs.num_public()) + " public signals, the zkey " + std::to_string(z.n_public));
  const uint64_t nc = r1cs.constraints.size();
  if (nc + z.n_public + 1 != z.pk.num_constraints)
    fail("the r1cs has " + std::to_string(nc) + " constraints, the zkey's coefficients cover " +
         std::to_string(z.pk.num_constraints) + " rows (expected constraints + public signals + 1)");
  using Terms = std::vector<std::pair<uint32_t, std::string>>;
  auto row_terms = [](const r1cs::CsrMatrix& m, uint64_t row) {
    Terms t;
    for (uint64_t k = m.row_ptr[row]; k < m.row_ptr[row + 1]; k++) t.emplace_back(m.col[k], fr_key(m.coeff[k]));
    std::sort(t.begin(), t.end());
    return t;
  };
  auto lc_terms = [](const std::vector<circom::WireTerm>& lc) {
    Terms t;
    for (const auto& w : lc) t.emplace_back(w.wire, fr_key(w.coeff));
    std::sort(t.begin(), t.end());
    return t;
  };
  for (uint64_t i = 0; i < nc; i++) {
    if (row_terms(z.A, i) != lc_terms(r1cs.constraints[i].a)) fail("constraint " + std::to_string(i) + ": A differs");
    if (row_terms(z.B, i) != lc_terms(r1cs.constraints[i].b)) fail("constraint " + std::to_string(i) + ": B differs");
  }
  for (uint64_t s = 0; s <= z.n_public; s++) {
    Terms want{{uint32_t(s), fr_key(fr_t::one())}};
    if (row_terms(z.A, nc + s) != want || !row_terms(z.B, nc + s).empty())
      fail("row " + std::to_string(nc + s) + " is not the input-consistency row of signal " + std::to_string(s));
  }
}

int64_t first_unsatisfied(const circom::R1csFile& r1cs, std::span<const fr_t> wires, const std::string& r1cs_name,
                          ThreadPool* pool) {
  if (wires.size() != r1cs.n_wires)
    throw ZkeyError(r1cs_name + ": the witness has " + std::to_string(wires.size()) + " values, the r1cs " +
                    std::to_string(r1cs.n_wires) + " wires");
  ThreadPool& tp = pick(pool);
  std::atomic<int64_t> first{-1};
  const auto& cs = r1cs.constraints;
  auto eval = [&](const std::vector<circom::WireTerm>& lc) {
    fr_t acc = fr_t::zero();
    for (const auto& t : lc) acc += t.coeff * wires[t.wire];
    return acc;
  };
  tp.parallel_for(cs.size(), [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) {
      for (const auto* lc : {&cs[i].a, &cs[i].b, &cs[i].c})
        for (const auto& t : *lc)
          if (t.wire >= wires.size())
            throw ZkeyError(r1cs_name + ": constraint " + std::to_string(i) + " names wire " + std::to_string(t.wire) +
                            " beyond the " + std::to_string(wires.size()) + " wires");
      if (eval(cs[i].a) * eval(cs[i].b) != eval(cs[i].c)) {
        int64_t cur = first.load();
        while ((cur < 0 || int64_t(i) < cur) && !first.compare_exchange_weak(cur, int64_t(i))) {
        }
        return;
      }
    }
  });
  return first.load();
}

}  // namespace cuzk::interop

// ---------------------------------------------------------------------------------------------
// setup_zkey: seeded test keys in snarkjs's format.

namespace cuzk::interop {
namespace {

class Writer {
 public:
  void u32(uint32_t v) {
    for (int i = 0; i < 4; i++) b.push_back(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  void limbs(const uint64_t* l, int n) {
    for (int i = 0; i < n; i++)
      for (int k = 0; k < 8; k++) b.push_back(uint8_t(l[i] >> (8 * k)));
  }
  void fq(const fp_t& x) { limbs(x.l, 6); }  // Montgomery form, as snarkjs stores it
  void g1(const g1_affine_t& p) {
    if (p.is_infinity()) {
      b.insert(b.end(), kG1, 0);
      return;
    }
    fq(p.x);
    fq(p.y);
  }
  void g2(const g2_affine_t& p) {
    if (p.is_infinity()) {
      b.insert(b.end(), kG2, 0);
      return;
    }
    fq(p.x.c0);
    fq(p.x.c1);
    fq(p.y.c0);
    fq(p.y.c1);
  }
  size_t begin_section(uint32_t type) {
    u32(type);
    size_t at = b.size();
    u64(0);
    return at;
  }
  void end_section(size_t at) {
    uint64_t size = b.size() - at - 8;
    for (int i = 0; i < 8; i++) b[at + i] = uint8_t(size >> (8 * i));
  }
  std::vector<uint8_t> b;
};

}  // namespace

std::vector<uint8_t> setup_zkey(const circom::R1csFile& r1cs, uint64_t seed, ThreadPool* pool) {
  ThreadPool& tp = pick(pool);
  const uint64_t m = r1cs.constraints.size(), n_pub = r1cs.num_public(), n_vars = r1cs.n_wires;
  if (n_vars < n_pub + 1) throw ZkeyError("setup_zkey: the r1cs has fewer wires than public signals + 1");
  const uint64_t rows = m + n_pub + 1;
  uint64_t n = 2;
  while (n < rows) n *= 2;
  if (n > (uint64_t(1) << 28)) throw ZkeyError("setup_zkey: the circuit needs a domain above 2^28");
  const groth16::ToxicWaste tw = groth16::ToxicWaste::from_seed(seed);

  // snarkjs's roots: its primitive 2n-th root rho' = ours^k; its n-th root omega' = rho'^2.
  int log2n = 1;
  while ((uint64_t(1) << log2n) < 2 * n) log2n++;
  const uint64_t k = snarkjs_root_exponent(n);
  const fr_t rho = fr_t::root_of_unity(log2n).pow(k), omega = rho.sqr();

  // Lagrange basis of the n-point domain at tau: L_c = omega^c (tau^n - 1) / (n (tau - omega^c)).
  // Its values, and those of the 2n-point domain at the odd points for H, with one inversion pass.
  auto lagrange = [&](const fr_t& first, const fr_t& step, uint64_t count, uint64_t size) {
    fr_t zt = tw.tau.pow(size) - fr_t::one();
    fr_t size_fr = fr_t::from_u64(size);
    std::vector<fr_t> x(count), den(count), out(count);
    fr_t cur = first;
    for (uint64_t i = 0; i < count; i++) {
      x[i] = cur;
      den[i] = size_fr * (tw.tau - cur);
      cur *= step;
    }
    // batch inversion (Montgomery's trick) per chunk
    tp.parallel_for(count, [&](size_t lo, size_t hi) {
      std::vector<fr_t> pre(hi - lo);
      fr_t acc = fr_t::one();
      for (size_t i = lo; i < hi; i++) {
        pre[i - lo] = acc;
        acc *= den[i];
      }
      fr_t inv = acc.inv();
      for (size_t i = hi; i-- > lo;) {
        fr_t d = inv * pre[i - lo];
        inv *= den[i];
        out[i] = x[i] * zt * d;
      }
    });
    return out;
  };
  std::vector<fr_t> L = lagrange(fr_t::one(), omega, n, n);
  std::vector<fr_t> Lh = lagrange(rho, omega, n, 2 * n);  // rho^(2j+1), j < n

  // u, v, w at tau for every wire.
  std::vector<fr_t> u(n_vars, fr_t::zero()), v(n_vars, fr_t::zero()), w(n_vars, fr_t::zero());
  for (uint64_t c = 0; c < m; c++) {
    const circom::Constraint& k3 = r1cs.constraints[c];
    for (const auto& t : k3.a) u.at(t.wire) += t.coeff * L[c];
    for (const auto& t : k3.b) v.at(t.wire) += t.coeff * L[c];
    for (const auto& t : k3.c) w.at(t.wire) += t.coeff * L[c];
  }
  for (uint64_t s = 0; s <= n_pub; s++) u[s] += L[m + s];
  const fr_t gamma_inv = tw.gamma.inv(), delta_inv = tw.delta.inv();
  std::vector<fr_t> ic_s(n_pub + 1), c_s(n_vars - n_pub - 1), h_s(n);
  for (uint64_t s = 0; s < n_vars; s++) {
    fr_t k_s = tw.beta * u[s] + tw.alpha * v[s] + w[s];
    if (s <= n_pub)
      ic_s[s] = k_s * gamma_inv;
    else
      c_s[s - n_pub - 1] = k_s * delta_inv;
  }
  for (uint64_t j = 0; j < n; j++) h_s[j] = Lh[j] * delta_inv;

  const g1_affine_t& g1 = g1_generator();
  const g2_affine_t& g2 = g2_generator();
  auto one_g1 = [&](const fr_t& x) { return g1.to_jacobian().mul(x).to_affine(); };
  auto one_g2 = [&](const fr_t& x) { return g2.to_jacobian().mul(x).to_affine(); };
  std::vector<g1_affine_t> pa = groth16::fixed_base_g1(g1, u, &tp);
  std::vector<g1_affine_t> pb1 = groth16::fixed_base_g1(g1, v, &tp);
  std::vector<g2_affine_t> pb2 = groth16::fixed_base_g2(g2, v, &tp);
  std::vector<g1_affine_t> pic = groth16::fixed_base_g1(g1, ic_s, &tp);
  std::vector<g1_affine_t> pc = groth16::fixed_base_g1(g1, c_s, &tp);
  std::vector<g1_affine_t> ph = groth16::fixed_base_g1(g1, h_s, &tp);

  Writer W;
  W.b.insert(W.b.end(), {'z', 'k', 'e', 'y'});
  W.u32(1);   // version
  W.u32(10);  // sections
  size_t s = W.begin_section(1);
  W.u32(1);  // Groth16
  W.end_section(s);
  s = W.begin_section(2);
  W.u32(kN8q);
  W.limbs(fp_t::modulus().v, 6);
  W.u32(kN8r);
  W.limbs(fr_t::modulus().v, 4);
  W.u32(uint32_t(n_vars));
  W.u32(uint32_t(n_pub));
  W.u32(uint32_t(n));
  W.g1(one_g1(tw.alpha));
  W.g1(one_g1(tw.beta));
  W.g2(one_g2(tw.beta));
  W.g2(one_g2(tw.gamma));
  W.g1(one_g1(tw.delta));
  W.g2(one_g2(tw.delta));
  W.end_section(s);
  s = W.begin_section(3);
  for (const auto& p : pic) W.g1(p);
  W.end_section(s);
  // coefficients: v R^2 mod r, i.e. the Montgomery limbs of v R (R mod r = fr_params::r()).
  const fr_t r_mod = fr_t::from_canonical(fr_params::r().v);
  s = W.begin_section(4);
  size_t count_at = W.b.size();
  W.u32(0);
  uint32_t count = 0;
  auto coef = [&](uint32_t matrix, uint64_t row, uint32_t sig, const fr_t& val) {
    W.u32(matrix);
    W.u32(uint32_t(row));
    W.u32(sig);
    fr_t x = val * r_mod;
    W.limbs(x.l, 4);
    count++;
  };
  for (uint64_t c = 0; c < m; c++) {
    for (const auto& t : r1cs.constraints[c].a) coef(0, c, t.wire, t.coeff);
    for (const auto& t : r1cs.constraints[c].b) coef(1, c, t.wire, t.coeff);
  }
  for (uint64_t sg = 0; sg <= n_pub; sg++) coef(0, m + sg, uint32_t(sg), fr_t::one());
  for (int i = 0; i < 4; i++) W.b[count_at + i] = uint8_t(count >> (8 * i));
  W.end_section(s);
  s = W.begin_section(5);
  for (const auto& p : pa) W.g1(p);
  W.end_section(s);
  s = W.begin_section(6);
  for (const auto& p : pb1) W.g1(p);
  W.end_section(s);
  s = W.begin_section(7);
  for (const auto& p : pb2) W.g2(p);
  W.end_section(s);
  s = W.begin_section(8);
  for (const auto& p : pc) W.g1(p);
  W.end_section(s);
  s = W.begin_section(9);
  for (const auto& p : ph) W.g1(p);
  W.end_section(s);
  s = W.begin_section(10);  // MPC parameters: csHash (zeros), no contributions
  W.b.insert(W.b.end(), 64, 0);
  W.u32(0);
  W.end_section(s);
  return std::move(W.b);
}

}  // namespace cuzk::interop
