// Small helpers shared by the harness tests: temporary folders, files, running cuzk-bench.
#pragma once
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cuzk::test {

// Sanitizer builds (preset sanitize: -O0, ASan's shadow memory) prove 10-30 times slower and
// fault in pages of their own. Tests whose bounds are times, timeouts or fault counts of an
// optimized build scale them by kSlowdown or relax them under kSanitized, and say so; what
// they check stays the same.
#ifdef CUZK_TEST_SANITIZED
inline constexpr bool kSanitized = true;
inline constexpr int kSlowdown = 10;
#else
inline constexpr bool kSanitized = false;
inline constexpr int kSlowdown = 1;
#endif

// A fresh folder under $TMPDIR (or /tmp), removed with its files at scope exit.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/cuzk-test-XXXXXX";
    std::vector<char> b(tmpl.begin(), tmpl.end());
    b.push_back('\0');
    if (!mkdtemp(b.data())) std::abort();
    path_ = b.data();
  }
  ~TempDir() {
    std::error_code ec;  // best effort: a test's leftovers must not fail the test
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
      closedir(d);
    }
    return out;
  }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

inline bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

// A suite of one tiny PoRep case ("tiny": 1 partition, 1 challenge, depth 4) with `reps`
// repetitions and no warm-up: 100000 keeps a run measuring until it is stopped.
inline std::string tiny_porep_suite(const std::string& name, int reps) {
  return "name = \"" + name + "\"\n[defaults]\nreps = " + std::to_string(reps) +
         "\nwarmup = 0\n[[case]]\nname = \"tiny\"\nkind = \"porep\"\npartitions = 1\nchallenges = 1\ndepth = 4\n";
}

// The load average over the last minute per core (/proc/loadavg), NaN where unreadable. Above 1
// the machine is oversubscribed: a test that judges timings says so instead of failing on it
// (docs/testing.md, "Tests that judge statistics").
inline double load_per_core() {
  std::ifstream f("/proc/loadavg");
  double one = NAN;
  if (!(f >> one)) return NAN;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return one / static_cast<double>(cores > 0 ? cores : 1);
}

inline std::string bench() {
  const char* b = std::getenv("CUZK_BENCH");
  return b ? b : std::string(CUZK_BUILD_DIR) + "/harness/cuzk-bench";
}

struct RunResult {
  int code = -1;
  std::string out, err;
};

// Runs cuzk-bench with `args` (already shell-quoted) in `dir`, capturing stdout and stderr.
// `env` is prepended to the command, e.g. "CUZK_COUNTERS=x".
inline RunResult run_bench(const std::string& args, const std::string& dir, const std::string& env = "") {
  static TempDir capture;  // outside `dir`, so tests can check what a command left in `dir`
  const std::string o = capture.file("stdout"), e = capture.file("stderr");
  std::string cmd = "cd '" + dir + "' && " + env + " '" + bench() + "' " + args + " >'" + o + "' 2>'" + e + "'";
  int st = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  r.out = slurp(o);
  r.err = slurp(e);
  unlink(o.c_str());
  unlink(e.c_str());
  return r;
}

// `cuzk-bench` caches generated parameters in results/local/params relative to its working
// directory: link that folder in `d` to one cache under the build tree, shared by test runs.
// Returns false when the link could not be made.
inline bool share_params_cache(const TempDir& d) {
  const std::string cache = std::string(CUZK_BUILD_DIR) + "/test-cache/params";
  std::string cmd = "mkdir -p '" + cache + "' '" + d.file("results/local") + "' && ln -s '" + cache + "' '" +
                    d.file("results/local/params") + "'";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace cuzk::test
