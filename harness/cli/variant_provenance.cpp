// Which binary is which: source hashes, binary provenance and git state (variant_provenance.hpp).
#include "harness/cli/variant_provenance.hpp"

#include <fmt/core.h>

#include <filesystem>

#include "harness/cli/commands.hpp"
#include "harness/measure/process.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string tree_hash(const std::string& source_dir) {
  const std::string script = source_dir + "/cmake/provenance_gen.cmake";
  if (!fs::exists(script)) throw Error(fmt::format("{}: missing (is --source-dir a cuzk tree?)", script));
  auto r = run_capture("cmake -DSRC_DIR=" + shell_quote(source_dir) + " -DPRINT_HASH=1 -P " + shell_quote(script));
  r.out = trimmed(r.out);
  if (r.code != 0 || r.out.size() != 64)
    throw Error(fmt::format("cannot compute the source hash of {} (cmake exited {})", source_dir, r.code));
  return r.out;
}

json binary_provenance(const std::string& bin) {
  if (!fs::exists(bin)) throw Error(fmt::format("{}: no such binary (build it, or drop --no-build)", bin));
  auto r = run_capture(shell_quote(bin) + " info --json", true);
  if (r.code != 0) throw Error(fmt::format("{} info --json failed (exit {})", bin, r.code));
  try {
    return json::parse(r.out).at("provenance");
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} info --json: unreadable provenance ({})", bin, e.what()));
  }
}

void check_binary(const std::string& label, const std::string& bin, const std::optional<PresetInfo>& pi,
                  const std::string& hash, bool given, bool resumed) {
  json p = binary_provenance(bin);
  const std::string built = p.value("source_hash", "");
  if (built != hash && resumed)
    throw Error(fmt::format("{} is stale: built from sources {}, the matrix ran binaries of sources {}; a resumed matrix "
                            "runs the binaries it started with (rebuild them from its commit, or start a new matrix)",
                            bin, built, hash));
  if (built != hash)
    throw Error(fmt::format("{} is stale: built from sources {}, the tree is now {}; {}", bin, built, hash,
                            given ? "rebuild it" : "rebuild or drop --no-build"));
  if (!pi) return;
  const std::string bp = p.value("preset", "");
  auto want = pi->vars.find("CUZK_PRESET_NAME");
  if (want != pi->vars.end() && bp != want->second)
    throw Error(fmt::format("{} ({}) was built by preset '{}', not '{}' as asked", bin, label, bp, want->second));
  json flags = p.value("flags", json::object());
  for (auto& [k, v] : flags.items()) {
    auto it = pi->vars.find(k);
    if (it == pi->vars.end() || !v.is_string()) continue;
    if (k == "CUZK_CUDA" || k == "CUZK_PAPI") continue;  // AUTO resolves per machine
    if (v.get<std::string>() != it->second)
      throw Error(fmt::format("{} ({}) has {}={}, but preset '{}' sets {}={}", bin, label, k, v.get<std::string>(),
                              pi->name, k, it->second));
  }
}

std::string git_dirty(const std::string& dir) {
  auto r = run_capture("git -C " + shell_quote(dir) + " status --porcelain --untracked-files=no", true);
  if (r.code != 0) return "";
  return trimmed(r.out);
}

std::string git_head(const std::string& dir) {
  auto r = run_capture("git -C " + shell_quote(dir) + " rev-parse HEAD", true);
  return r.code == 0 ? trimmed(r.out) : "";
}

}  // namespace cuzk::cli
