// Proving which binary is which: a variant's binary is refused unless the provenance embedded in
// it (`info --json`) matches what was asked for (preset, flags) and the sources it is measured
// against (the source hash); the git state of a tree, as manifests record it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/cli/variant_builds.hpp"

namespace cuzk::cli {

// The source hash of a tree, computed by the same script that embeds it in binaries.
std::string tree_hash(const std::string& source_dir);
// The provenance object of a binary (`<bin> info --json`); throws Error when unreadable.
nlohmann::json binary_provenance(const std::string& bin);
// Refuses (throws Error) a binary whose provenance does not match the preset asked for (when
// given: its preset name and flags) or the tree's source hash. `given`: the user named the
// binary (the advice differs). `resumed`: `hash` is that of the sources a matrix being resumed
// ran its binaries from (its manifest's), not the tree's, and the messages say so.
void check_binary(const std::string& label, const std::string& bin, const std::optional<PresetInfo>& preset,
                  const std::string& hash, bool given, bool resumed = false);

// Uncommitted changes to tracked files of the git tree at `dir` ("" when clean or not a git tree).
std::string git_dirty(const std::string& dir);
// `git rev-parse HEAD` at `dir`, "" when not a git tree.
std::string git_head(const std::string& dir);

}  // namespace cuzk::cli
