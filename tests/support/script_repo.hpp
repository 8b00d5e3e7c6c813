// A throwaway git repository for the tests of the scripts that build revisions of the project
// (gate-merge.sh, ci-perf.sh, history-backfill.sh): the repository in a temporary folder, a
// folder of stand-ins (a stub cmake, a stub binary) put first on PATH, and the log the stubs
// append to, which the tests read to see what the script ran.
#pragma once
#include <filesystem>
#include <string>

#include "catch.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

namespace cuzk::test {

// How often `needle` occurs in `text`.
inline int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

class ScriptRepo {
 public:
  TempDir d;
  const std::string root = d.file("repo");
  const std::string log = d.file("stub.log");

  // The repository (not yet `git init`), with `scripts` copied from the source tree.
  explicit ScriptRepo(std::initializer_list<const char*> scripts) {
    std::filesystem::create_directories(root + "/scripts");
    std::filesystem::create_directories(d.file("bin"));
    for (const char* s : scripts)
      std::filesystem::copy_file(std::string(CUZK_SOURCE_DIR) + "/scripts/" + s, root + "/scripts/" + s);
  }

  // Writes a file of the repository, creating its folders.
  void write(const std::string& path, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + path).parent_path());
    spit(root + "/" + path, text);
  }

  // An executable stand-in: bin/<name> (found first on PATH by run()) or, with on_path false,
  // <name> beside bin/ (a binary the stub cmake installs).
  std::string stub(const std::string& name, const std::string& text, bool on_path = true) const {
    const std::string p = on_path ? d.file("bin/" + name) : d.file(name);
    spit(p, text);
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p;
  }

  // A shell command in the repository with a git identity; the test stops if it fails.
  void sh(const std::string& cmd) const {
    auto r = testing::run_command("cd '" + root + "' && export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t " +
                                  "GIT_COMMITTER_EMAIL=t@t && " + cmd);
    INFO(r.output);
    REQUIRE(r.status == 0);
  }

  std::string sha(const std::string& rev) const {
    return testing::run_command("git -C '" + root + "' rev-parse " + rev).output.substr(0, 40);
  }

  // Runs `cmd` in the repository with the stand-ins first on PATH and STUB_LOG set; `env` adds
  // more variables ("A=1 B=2").
  testing::CommandResult run(const std::string& cmd, const std::string& env = "") const {
    return testing::run_command("cd '" + root + "' && env PATH='" + d.file("bin") + "':\"$PATH\" STUB_LOG='" + log + "' " +
                                env + " " + cmd);
  }

  // How often the stubs logged `needle`.
  int count(const std::string& needle) const { return occurrences(slurp(log), needle); }

  // Only the main worktree is left registered.
  bool worktrees_clean() const {
    auto r = testing::run_command("cd '" + root + "' && git worktree list --porcelain | grep -c '^worktree '");
    return r.output.find('1') == 0;
  }
};

}  // namespace cuzk::test
