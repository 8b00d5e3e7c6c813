// Limits of the machine (docs/reliability.md, "Limits of the machine"): a thread pool the system
// will not start is an error naming the pool's size, never a hang; CUZK_THREADS beyond the
// process limits is refused before any work, naming the limit; a sector whose estimated memory
// exceeds what the process may use is refused with the estimate; `circuit --describe` answers
// for sizes whose circuit could never be built, with the counts of the shape pass.
//
// RLIMIT_NPROC is not enforced for root: as root, the up-front thread check is tested with
// readings given to it (check_thread_request) and, where setpriv can switch to an unprivileged
// user, end to end; the pool's failure is provoked with RLIMIT_AS, which binds root too.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "catch.hpp"
#include "refusal.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/util/process_limits.hpp"
#include "prover/util/thread_pool.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
namespace lim = cuzk::limits;

using cuzk::test::check_refused;

namespace {

// A hang fails the test instead of stalling it.
const std::string kBounded = "timeout 20";

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }


std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

uint64_t vm_size() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

bool command_exists(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

TEST_CASE("the thread check names the limit, the request and the largest pool that fits") {
  lim::ThreadLimits l;
  l.nproc = 60;
  l.uid = 1000;
  l.user_tasks = 30;
  const std::string err = lim::check_thread_request(64, "CUZK_THREADS=64", l);
  INFO(err);
  CHECK(has(err, "CUZK_THREADS=64 asks for a pool of 64 threads"));
  CHECK(has(err, "may start only 30"));
  CHECK(has(err, "ulimit -u 60 with 30 tasks of uid 1000 running"));
  CHECK(has(err, "set CUZK_THREADS=23 or less"));  // 22 workers + 8 spare = 30
  CHECK(lim::check_thread_request(23, "CUZK_THREADS=23", l).empty());
  l.nproc_enforced = false;  // root: the kernel does not apply RLIMIT_NPROC
  CHECK(lim::check_thread_request(64, "CUZK_THREADS=64", l).empty());
  l.pids_max = 20;
  l.pids_current = 15;
  l.pids_file = "/sys/fs/cgroup/x/pids.max";
  const std::string pids = lim::check_thread_request(4, "CUZK_THREADS=4", l);
  CHECK(has(pids, "pids.max 20 (/sys/fs/cgroup/x/pids.max) with 15 in use"));
  CHECK(has(pids, "raise the limit"));  // 5 tasks left: not even the harness's own threads fit
  CHECK(lim::check_thread_request(64, "x", lim::ThreadLimits{}).empty());  // no limit at all
}

TEST_CASE("the memory check prints the estimate and the limit it exceeds") {
  lim::MemoryLimits l;
  l.address_space = uint64_t(2) << 30;
  l.vm_size = uint64_t(512) << 20;
  const std::string err = lim::check_memory_request(uint64_t(10) << 30, "prove: 2 partition(s)", l);
  INFO(err);
  CHECK(has(err, "prove: 2 partition(s) needs about 10.0 GiB"));
  CHECK(has(err, "may use: 1.5 GiB"));
  CHECK(has(err, "ulimit -v 2.0 GiB with 512.0 MiB in use"));
  CHECK(lim::check_memory_request(uint64_t(1) << 30, "x", l).empty());
  l.mem_available = uint64_t(256) << 20;
  CHECK(has(lim::check_memory_request(uint64_t(1) << 30, "x", l), "MemAvailable 256.0 MiB"));
}

TEST_CASE("a cgroup's inactive page cache is read from memory.stat, v2 and v1 names") {
  t::TempDir d;
  t::spit(d.file("memory.stat"), "anon 4096\nfile 8192\ninactive_anon 0\ninactive_file 7000\nactive_file 1192\n");
  CHECK(lim::memory_stat_field(d.file("memory.stat"), "inactive_file") == 7000u);
  CHECK(lim::memory_stat_field(d.file("memory.stat"), "active_file") == 1192u);
  CHECK_FALSE(lim::memory_stat_field(d.file("memory.stat"), "total_inactive_file"));
  t::spit(d.file("v1.stat"), "cache 100\ntotal_inactive_file 3000\n");
  CHECK(lim::memory_stat_field(d.file("v1.stat"), "total_inactive_file") == 3000u);
  CHECK_FALSE(lim::memory_stat_field(d.file("missing.stat"), "inactive_file"));
}

TEST_CASE("a cgroup's clean page cache, active and inactive, counts as reclaimable; dirty pages do not") {
  t::TempDir d;
  // A parameters file read since it was written sits on the active list: it is reclaimable too.
  t::spit(d.file("v2.stat"), "anon 4096\nfile 9000\ninactive_file 7000\nactive_file 2000\nfile_dirty 500\n"
                             "file_writeback 100\nshmem 300\n");
  CHECK(lim::reclaimable_file_bytes(d.file("v2.stat"), false) == 8400u);
  t::spit(d.file("v1.stat"), "cache 100\ntotal_inactive_file 3000\ntotal_active_file 1000\ntotal_dirty 200\n"
                             "inactive_file 1\nactive_file 1\n");
  CHECK(lim::reclaimable_file_bytes(d.file("v1.stat"), true) == 3800u);
  // More unclean pages than the lists hold (counters read at different moments): none, not a wrap.
  t::spit(d.file("odd.stat"), "inactive_file 10\nactive_file 0\nfile_dirty 50\n");
  CHECK(lim::reclaimable_file_bytes(d.file("odd.stat"), false) == 0u);
  CHECK(lim::reclaimable_file_bytes(d.file("missing.stat"), false) == 0u);
}

// Hidden: run by the test below in a fresh process, whose address space it limits so that only a
// few thread stacks fit. Prints what the pool's construction did.
TEST_CASE("child: a pool the system refuses", "[.][pool-child]") {
  alarm(15);  // the old pool hung here: SIGALRM ends the child and the parent sees no marker
  const rlimit r{vm_size() + (uint64_t(96) << 20), vm_size() + (uint64_t(96) << 20)};
  REQUIRE(setrlimit(RLIMIT_AS, &r) == 0);
  try {
    cuzk::ThreadPool pool(64);
    std::printf("pool-child: started %u threads\n", pool.size());
  } catch (const std::system_error& e) {
    std::printf("pool-child: refused: %s\n", e.what());
  }
  std::fflush(stdout);
}

TEST_CASE("a thread pool the system will not start is an error naming its size, never a hang") {
  const std::string exe = self_exe();
  REQUIRE(!exe.empty());
  // 16 MiB stacks: a few workers start in the child's address space (and wait for work), 63 do not.
  const auto res = cuzk::testing::run_command("ulimit -s 16384 && timeout 30 '" + exe + "' '[pool-child]'");
  INFO(res.output);
  CHECK(res.status == 0);
  CHECK(has(res.output, "pool-child: refused: cannot start worker thread"));
  CHECK(has(res.output, "of a 64-thread pool"));
  CHECK(has(res.output, "Resource temporarily unavailable"));
}

TEST_CASE("prove with more threads than the system starts: one error line, not a hang", "[cli]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  // As root too: RLIMIT_AS binds every user, and 256 MiB stacks exhaust 3 GB after a few threads.
  auto r = t::run_bench("prove --reps 1 --out r.jsonl", d.path(),
                        "ulimit -s 262144 && ulimit -v 3000000 && CUZK_THREADS=64 " + kBounded);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  // The pool starts with the first parallel work, after a progress line perhaps: the error is last.
  const auto lines = t::lines_of(r.err);
  REQUIRE(!lines.empty());
  CHECK(lines.back().rfind("cuzk-bench: error: cannot start worker thread ", 0) == 0);
  CHECK(has(lines.back(), "of a 64-thread pool"));
  CHECK(has(lines.back(), "Resource temporarily unavailable"));
  CHECK_FALSE(t::exists(d.file("r.jsonl")));  // failed before its first sample: no file
}

TEST_CASE("CUZK_THREADS beyond ulimit -u is refused before any work", "[cli]") {
  t::TempDir d;
  check_refused(t::run_bench("prove", d.path(), "CUZK_THREADS=lots"), "CUZK_THREADS=\"lots\" is not a thread count");
  if (!command_exists("prlimit")) {
    WARN("no prlimit here: the up-front check is covered by the readings test above");
    return;
  }
  std::string prefix;
  if (geteuid() == 0) {
    // Root is exempt from RLIMIT_NPROC: run as an unprivileged user, where the kernel applies it.
    if (!command_exists("setpriv")) {
      WARN("running as root without setpriv: the up-front check is covered by the readings test above");
      return;
    }
    REQUIRE(chmod(d.path().c_str(), 0777) == 0);
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  auto r = t::run_bench("prove --reps 1 --out r.jsonl", d.path(),
                        kBounded + " " + prefix + "prlimit --nproc=24 env CUZK_THREADS=64");
  if (r.err.find("setpriv:") != std::string::npos) {
    WARN("setpriv cannot switch users here (" << r.err << "): the readings test above covers the check");
    return;
  }
  check_refused(r, "CUZK_THREADS=64 asks for a pool of 64 threads");
  CHECK(has(r.err, "ulimit -u 24 with "));
  CHECK_FALSE(t::exists(d.file("r.jsonl")));
}

TEST_CASE("a sector larger than the process may allocate is refused with the estimate", "[cli]") {
  t::TempDir d;
  const std::string big = "--challenges 64 --layers 2 --parents 6 --depth 10 --partitions 2";
  t::spit(d.file("big.toml"),
          "name = \"big\"\n[[case]]\nname = \"big\"\nkind = \"porep\"\npartitions = 2\nchallenges = 64\n"
          "layers = 2\nparents = 6\ndepth = 10\n");
  for (const std::string& cmd : {"prove " + big + " --out r.jsonl", "engine " + big + " --jobs 1 --out r.jsonl",
                                 std::string("srs generate --challenges 64 --layers 2 --parents 6 --depth 10 -o p.params"),
                                 std::string("run --suite big.toml --out r.jsonl")}) {
    INFO(cmd);
    auto r = t::run_bench(cmd, d.path(), "ulimit -v 2000000 && " + kBounded);
    check_refused(r, "GiB (an estimate from the circuit's shape), more than this process may use");
    CHECK(has(r.err, "ulimit -v"));
    CHECK(has(r.err, "challenges=64 layers=2 parents=6 depth=10"));
  }
  CHECK_FALSE(t::exists(d.file("r.jsonl")));
  CHECK_FALSE(t::exists(d.file("p.params")));
  CHECK_FALSE(t::exists(d.file("results/local/params")));  // no parameters were generated
}

TEST_CASE("the shape by arithmetic equals the shape pass", "[shape]") {
  using cuzk::circuits::PorepParams;
  for (uint32_t depth : {2u, 5u})
    for (uint32_t parents : {0u, 2u})
      for (uint32_t layers : {0u, 1u, 4u, 9u})
        for (uint32_t challenges : {1u, 3u}) {
          const PorepParams p{challenges, layers, parents, depth};
          INFO(p.to_string());
          const auto want = cuzk::circuits::PorepCircuit::shape(p);
          const auto got = cuzk::circuits::porep_shape_by_parts(p);
          CHECK(got.constraints == want.constraints);
          CHECK(got.inputs == want.inputs);
          CHECK(got.aux == want.aux);
          CHECK(got.nnz_a == want.nnz_a);
          CHECK(got.nnz_b == want.nnz_b);
          CHECK(got.nnz_c == want.nnz_c);
        }
}

TEST_CASE("circuit --describe answers at once for a circuit too large to build", "[cli]") {
  t::TempDir d;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = t::run_bench("circuit --describe --json --challenges 65536 --layers 11 --parents 14 --depth 30", d.path(),
                        kBounded);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // 11 labels of ceil((73 + 32 * 14) / 64) = 9 compressions per challenge alone: beyond 10^11.
  CHECK(j["constraints"].get<uint64_t>() > uint64_t(65536) * 11 * 9 * 25000);
  CHECK(j["inputs"].get<uint64_t>() == 1 + 2 + 65536);  // one, comm_d, comm_r, the challenge indices
  CHECK(secs < 20);
}
