// Build provenance embedded in every cuzk binary (see cmake/provenance_gen.cmake).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cuzk {

struct Provenance {
  const char* source_hash;     // SHA-256 over the manifest of prover/ cuda/ harness/ daemon/ cmake/ sources
  int source_files;            // files covered by the hash
  const char* git_commit;      // HEAD at build time, or "unknown"
  const char* git_dirty;       // "true" / "false" / "unknown" (tracked files modified)
  const char* flags;           // "CUZK_PINNED_HOST=OFF,CUZK_SMALLVEC=ON,..."
  const char* preset;          // CMake preset name, "" when configured by hand
  const char* build_type;
  const char* compiler;
  const char* compiler_version;
  const char* nvcc_version;    // "" when built without CUDA
  const char* cuda_archs;      // "" when built without CUDA
  const char* build_dir;
  const char* source_dir;
};

const Provenance& build_provenance();

// The variant flags as a map: {"CUZK_SMALLVEC": "ON", ...}.
std::map<std::string, std::string> provenance_flags(const Provenance& p);

// Every field of build_provenance() as JSON: `info --json` prints it, every results header holds it.
nlohmann::json provenance_json();

}  // namespace cuzk
