#include "prover/interop/snarkjs_json.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"
#include "prover/pairing/pairing.hpp"

namespace cuzk::interop {
namespace {

using json = nlohmann::ordered_json;

// ---- export helpers ----
json g1_json(const g1_affine_t& p) {
  if (p.is_infinity()) return json::array({"0", "1", "0"});
  return json::array({p.x.to_decimal(), p.y.to_decimal(), "1"});
}
json fp2_json(const fp2_t& a) { return json::array({a.c0.to_decimal(), a.c1.to_decimal()}); }
json g2_json(const g2_affine_t& p) {
  if (p.is_infinity()) return json::array({fp2_json(fp2_t::zero()), fp2_json(fp2_t::one()), fp2_json(fp2_t::zero())});
  return json::array({fp2_json(p.x), fp2_json(p.y), fp2_json(fp2_t::one())});
}
json fp6_json(const fp6_t& a) { return json::array({fp2_json(a.c0), fp2_json(a.c1), fp2_json(a.c2)}); }
json gt_json(const fp12_t& f) { return json::array({fp6_json(f.c0), fp6_json(f.c1)}); }

// ---- import helpers: every error names the file and the field path ----
class Doc {
 public:
  Doc(const std::string& text, const std::string& name) : name_(name) {
    if (size_t depth = limits::json_nesting_depth(text); depth > limits::kMaxJsonDepth)
      throw JsonError(name_ + ": JSON nested " + std::to_string(depth) + " levels deep, over the limit of " +
                      std::to_string(limits::kMaxJsonDepth));
    try {
      root_ = json::parse(text);
    } catch (const json::parse_error& e) {
      // e.byte is the 1-based offset of the error; report line:column too.
      size_t off = e.byte ? e.byte - 1 : 0, line = 1, col = 1;
      for (size_t i = 0; i < off && i < text.size(); i++) {
        if (text[i] == '\n') {
          line++;
          col = 1;
        } else {
          col++;
        }
      }
      throw JsonError(name_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": malformed JSON: " +
                      std::string(e.what()));
    } catch (const json::out_of_range& e) {  // a number beyond a double's range, such as 1e400
      throw JsonError(name_ + ": malformed JSON: " + std::string(e.what()));
    }
  }
  const json& root() const { return root_; }
  [[noreturn]] void fail(const std::string& field, const std::string& what,
                         JsonError::Kind kind = JsonError::kMalformed) const {
    throw JsonError(name_ + ": " + (field.empty() ? "" : field + ": ") + what, kind);
  }
  const json& member(const json& obj, const std::string& field, const std::string& key) const {
    if (!obj.is_object()) fail(field, "expected a JSON object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(field.empty() ? key : field + "." + key, "missing");
    return *it;
  }
  const json& element(const json& arr, const std::string& field, size_t i) const {
    if (!arr.is_array()) fail(field, "expected an array");
    if (i >= arr.size()) fail(field, "expected at least " + std::to_string(i + 1) + " elements, found " + std::to_string(arr.size()));
    return arr[i];
  }
  void expect_size(const json& arr, const std::string& field, size_t lo, size_t hi) const {
    if (!arr.is_array()) fail(field, "expected an array");
    if (arr.size() < lo || arr.size() > hi)
      fail(field, "expected " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                      " elements, found " + std::to_string(arr.size()));
  }
  // A decimal string (or a non-negative JSON integer) below the field's modulus.
  template <class F>
  F number(const json& v, const std::string& field) const {
    std::string s;
    if (v.is_string()) {
      s = v.get<std::string>();
    } else if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0)) {
      s = std::to_string(v.get<uint64_t>());
    } else {
      fail(field, "expected a decimal string, found " + std::string(v.type_name()) + " " + v.dump());
    }
    try {
      return F::from_decimal(s);
    } catch (const std::invalid_argument& e) {
      fail(field, std::string(e.what()));
    }
  }
  fp2_t fp2(const json& v, const std::string& field) const {
    expect_size(v, field, 2, 2);
    return fp2_t{number<fp_t>(v[0], field + "[0]"), number<fp_t>(v[1], field + "[1]")};
  }
  // Projective triple (or pair) -> affine; `point_kind` for points that are well-formed numbers
  // but not group elements.
  g1_affine_t g1(const json& v, const std::string& field, JsonError::Kind point_kind) const {
    expect_size(v, field, 2, 3);
    fp_t x = number<fp_t>(v[0], field + "[0]"), y = number<fp_t>(v[1], field + "[1]");
    fp_t z = v.size() == 3 ? number<fp_t>(v[2], field + "[2]") : fp_t::one();
    g1_affine_t p;
    if (z.is_zero())
      p = g1_affine_t::infinity();
    else if (z.is_one())
      p = g1_affine_t::from_xy(x, y);
    else
      p = g1_jacobian_t{x, y, z}.to_affine();
    if (!p.is_on_curve()) fail(field, "G1 point is not on the curve", point_kind);
    if (!p.in_subgroup()) fail(field, "G1 point is not in the order-r subgroup", point_kind);
    return p;
  }
  g2_affine_t g2(const json& v, const std::string& field, JsonError::Kind point_kind) const {
    expect_size(v, field, 2, 3);
    fp2_t x = fp2(v[0], field + "[0]"), y = fp2(v[1], field + "[1]");
    fp2_t z = v.size() == 3 ? fp2(v[2], field + "[2]") : fp2_t::one();
    g2_affine_t p;
    if (z.is_zero())
      p = g2_affine_t::infinity();
    else if (z.is_one())
      p = g2_affine_t::from_xy(x, y);
    else
      p = g2_jacobian_t{x, y, z}.to_affine();
    if (!p.is_on_curve()) fail(field, "G2 point is not on the curve", point_kind);
    if (!p.in_subgroup()) fail(field, "G2 point is not in the order-r subgroup", point_kind);
    return p;
  }
  // "protocol" / "curve" fields: required to name Groth16 over BLS12-381 when present.
  void check_tag(const json& obj, const char* key, const char* want, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(key, std::string("missing (expected \"") + want + "\")");
      return;
    }
    if (!it->is_string()) fail(key, "expected a string");
    std::string got = it->get<std::string>();
    if (got != want) fail(key, "is \"" + got + "\", expected \"" + want + "\"");
  }

 private:
  std::string name_;
  json root_;
};

}  // namespace

std::string proof_to_json(const groth16::Proof& proof) {
  json j;
  j["pi_a"] = g1_json(proof.a);
  j["pi_b"] = g2_json(proof.b);
  j["pi_c"] = g1_json(proof.c);
  j["protocol"] = "groth16";
  j["curve"] = "bls12381";
  return j.dump(1) + "\n";
}

std::string public_to_json(std::span<const fr_t> public_inputs) {
  json j = json::array();
  for (const fr_t& x : public_inputs) j.push_back(x.to_decimal());
  return j.dump(1) + "\n";
}

std::string gt_to_json(const fp12_t& f) { return gt_json(f).dump(); }

std::string vk_to_json(const groth16::VerifyingKey& vk) {
  if (vk.ic.empty()) throw std::invalid_argument("vk_to_json: the verifying key has no IC points");
  json j;
  j["protocol"] = "groth16";
  j["curve"] = "bls12381";
  j["nPublic"] = vk.ic.size() - 1;
  j["vk_alpha_1"] = g1_json(vk.alpha_g1);
  j["vk_beta_2"] = g2_json(vk.beta_g2);
  j["vk_gamma_2"] = g2_json(vk.gamma_g2);
  j["vk_delta_2"] = g2_json(vk.delta_g2);
  j["vk_alphabeta_12"] = gt_json(pairing(vk.alpha_g1, vk.beta_g2));
  json ic = json::array();
  for (const g1_affine_t& p : vk.ic) ic.push_back(g1_json(p));
  j["IC"] = ic;
  return j.dump(1) + "\n";
}

groth16::Proof proof_from_json(const std::string& text, const std::string& name) {
  Doc d(text, name);
  const json& r = d.root();
  if (!r.is_object()) d.fail("", "expected a JSON object with pi_a, pi_b, pi_c");
  d.check_tag(r, "protocol", "groth16", false);
  d.check_tag(r, "curve", "bls12381", false);
  groth16::Proof p;
  p.a = d.g1(d.member(r, "", "pi_a"), "pi_a", JsonError::kInvalidPoint);
  p.b = d.g2(d.member(r, "", "pi_b"), "pi_b", JsonError::kInvalidPoint);
  p.c = d.g1(d.member(r, "", "pi_c"), "pi_c", JsonError::kInvalidPoint);
  return p;
}

std::vector<fr_t> public_from_json(const std::string& text, const std::string& name) {
  Doc d(text, name);
  const json& r = d.root();
  if (!r.is_array()) d.fail("", "expected a JSON array of decimal strings (the public signals)");
  std::vector<fr_t> out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); i++) {
    std::string field = std::to_string(i);  // "[i]", built without operator+ (GCC 12 -Wrestrict false positive)
    field.insert(field.begin(), '[');
    field.push_back(']');
    out.push_back(d.number<fr_t>(r[i], field));
  }
  return out;
}

groth16::VerifyingKey vk_from_json(const std::string& text, const std::string& name) {
  Doc d(text, name);
  const json& r = d.root();
  if (!r.is_object()) d.fail("", "expected a JSON object (a snarkjs verification key)");
  d.check_tag(r, "protocol", "groth16", true);
  d.check_tag(r, "curve", "bls12381", true);
  groth16::VerifyingKey vk;
  const auto bad = JsonError::kMalformed;
  vk.alpha_g1 = d.g1(d.member(r, "", "vk_alpha_1"), "vk_alpha_1", bad);
  vk.beta_g2 = d.g2(d.member(r, "", "vk_beta_2"), "vk_beta_2", bad);
  vk.gamma_g2 = d.g2(d.member(r, "", "vk_gamma_2"), "vk_gamma_2", bad);
  vk.delta_g2 = d.g2(d.member(r, "", "vk_delta_2"), "vk_delta_2", bad);
  // Not in snarkjs's JSON (its verifier needs neither): beta_g1 and delta_g1 stay at infinity.
  vk.beta_g1 = g1_affine_t::infinity();
  vk.delta_g1 = g1_affine_t::infinity();
  const json& ic = d.member(r, "", "IC");
  if (!ic.is_array() || ic.empty()) d.fail("IC", "expected a non-empty array of G1 points");
  // The count first: decoding a point costs a subgroup check, so a key with a huge IC list
  // that disagrees with nPublic is refused before any of that work.
  if (auto it = r.find("nPublic"); it != r.end()) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0))
      d.fail("nPublic", "expected a non-negative integer");
    if (it->get<uint64_t>() != ic.size() - 1)
      d.fail("nPublic", "is " + std::to_string(it->get<uint64_t>()) + " but IC has " + std::to_string(ic.size()) +
                            " points (expected nPublic + 1)");
  }
  std::vector<g1_affine_t> pts;
  pts.reserve(ic.size());
  for (size_t i = 0; i < ic.size(); i++) pts.push_back(d.g1(ic[i], "IC[" + std::to_string(i) + "]", bad));
  if (auto it = r.find("vk_alphabeta_12"); it != r.end()) {
    json want = gt_json(pairing(vk.alpha_g1, vk.beta_g2));
    // compare as numbers: parse each leaf (tolerates leading zeros / numeric leaves)
    bool ok = it->is_array() && it->size() == 2;
    for (size_t a = 0; ok && a < 2; a++) {
      const json& six = (*it)[a];
      ok = six.is_array() && six.size() == 3;
      for (size_t b = 0; ok && b < 3; b++) {
        const json& two = six[b];
        ok = two.is_array() && two.size() == 2;
        for (size_t c = 0; ok && c < 2; c++) {
          std::string f = "vk_alphabeta_12[" + std::to_string(a) + "][" + std::to_string(b) + "][" + std::to_string(c) + "]";
          ok = d.number<fp_t>(two[c], f) == fp_t::from_decimal(want[a][b][c].get<std::string>());
        }
      }
    }
    if (!ok) d.fail("vk_alphabeta_12", "is not e(vk_alpha_1, vk_beta_2) (inconsistent verification key)");
  }
  vk.ic = std::move(pts);
  return vk;
}

std::string read_text_file(const std::string& path) {
  InputFile in(path, throw_as<JsonError>);
  return in.read_all(limits::kMaxJsonDocumentBytes, "a snarkjs JSON file");
}

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const char* what, int err) {
    throw std::runtime_error(path + ": " + what + " failed: " + std::strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open", errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t k = ::write(fd, content.data() + done, content.size() - done);
    if (k < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("write", e);
    }
    done += size_t(k);
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("fsync", e);
  }
  if (::close(fd) != 0) fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail("rename", e);
  }
}

groth16::Proof read_proof_json(const std::string& path) { return proof_from_json(read_text_file(path), path); }
std::vector<fr_t> read_public_json(const std::string& path) { return public_from_json(read_text_file(path), path); }
groth16::VerifyingKey read_vk_json(const std::string& path) { return vk_from_json(read_text_file(path), path); }

}  // namespace cuzk::interop
