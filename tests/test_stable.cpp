// Stable mode: the CPU placement (prover/util/cpu_placement), apply_stable_mode and the
// warm-up rule (harness/stable), and `cuzk-bench prove|run --stable`.
//
// The placement is process-wide and can be set only before the global pool exists, so every
// test that sets it runs in a child process: the test "placement ... (child process)" re-runs
// this binary with a hidden tag ([placement-child], [placement-refused]). In this process no
// placement is ever set, so the other tests do not depend on their order.
//
// CPU counts: written for any process CPU set of 2 or more. With 1 CPU the tests that need a
// split WARN and check the refusal instead.
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/stable.hpp"
#include "prover/util/cpu_placement.hpp"
#include "prover/util/thread_pool.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

namespace pl = cuzk::placement;
using cuzk::test::TempDir;

namespace {

long this_tid() { return syscall(SYS_gettid); }

std::vector<int> my_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// "0-2,5" -> {0, 1, 2, 5}: the kernel's list notation.
std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    const int a = std::stoi(part.substr(0, dash));
    const int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
    for (int c = a; c <= b; ++c) out.push_back(c);
  }
  return out;
}

// Cpus_allowed_list of one thread of this process, as the kernel reports it.
std::vector<int> proc_affinity(long tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return parse_cpu_list(line.substr(line.find(':') + 1));
  return {};
}

std::vector<int> without(std::vector<int> v, int x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
  return v;
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

struct ThreadView {
  long tid = 0;
  std::vector<int> mask, proc;
};

ThreadView view_of_this_thread() { return {this_tid(), my_affinity(), proc_affinity(this_tid())}; }

// Runs one task on each of the pool's workers at once (each waits until all have arrived, so
// no worker takes two) and returns what each saw; fewer than size()-1 views mean a worker
// never came.
std::vector<ThreadView> view_workers(cuzk::ThreadPool& pool) {
  const size_t n = pool.size() - 1;
  std::atomic<size_t> arrived{0};
  std::mutex mu;
  std::vector<ThreadView> views;
  std::vector<std::future<void>> done;
  for (size_t i = 0; i < n; ++i)
    done.push_back(pool.submit([&] {
      arrived.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (arrived.load() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ThreadView v = view_of_this_thread();
      std::lock_guard<std::mutex> lk(mu);
      views.push_back(v);
    }));
  for (auto& f : done) f.get();
  return views;
}

std::vector<uint64_t> ns(std::initializer_list<uint64_t> v) { return v; }

cuzk::WarmupOutcome drive(const cuzk::WarmupPlan& plan, const std::vector<uint64_t>& seq) {
  cuzk::Warmups w(plan);
  size_t i = 0;
  while (w.more()) {
    REQUIRE(i < seq.size());  // the rule asked for more warm-ups than the sequence has
    w.add(seq[i++]);
  }
  return w.outcome();
}

cuzk::WarmupPlan auto_plan(int cap) {
  cuzk::WarmupPlan p;
  p.mode = cuzk::WarmupMode::kUntilSettled;
  p.cap = cap;
  return p;
}

}  // namespace

// ---------------------------------------------------------------- the split and cpu lists

TEST_CASE("default_split gives the driver the highest CPU and the workers the rest") {
  std::vector<int> sixteen;
  for (int c = 0; c < 16; ++c) sixteen.push_back(c);
  pl::Placement p = pl::default_split(sixteen);
  CHECK(p.driver_cpus == std::vector<int>{15});
  CHECK(p.worker_cpus == without(sixteen, 15));

  p = pl::default_split({7, 2, 5, 2});  // unordered, repeated: a set
  CHECK(p.driver_cpus == std::vector<int>{7});
  CHECK(p.worker_cpus == std::vector<int>{2, 5});

  p = pl::default_split({0, 1});
  CHECK(p.driver_cpus == std::vector<int>{1});
  CHECK(p.worker_cpus == std::vector<int>{0});
}

TEST_CASE("default_split refuses a set of fewer than 2 CPUs: no core can be kept free") {
  REQUIRE_THROWS_WITH(pl::default_split({3}), Catch::Matchers::Contains("no core can be kept free") &&
                                                  Catch::Matchers::Contains("1 CPU (3)"));
  REQUIRE_THROWS_WITH(pl::default_split({}), Catch::Matchers::Contains("no core can be kept free"));
}

TEST_CASE("the default split of this process's CPU set") {
  const std::vector<int> allowed = pl::allowed_cpus();
  REQUIRE(!allowed.empty());
  CHECK(allowed == sorted(proc_affinity(this_tid())));  // what the kernel reports for this thread
  if (allowed.size() < 2) {
    WARN("this process may run on 1 CPU (" << pl::cpu_list(allowed) << "): checking the refusal instead of a split");
    CHECK_THROWS_WITH(pl::default_split(allowed), Catch::Matchers::Contains("no core can be kept free"));
    return;
  }
  const pl::Placement p = pl::default_split(allowed);
  CHECK(p.driver_cpus == std::vector<int>{allowed.back()});
  CHECK(p.worker_cpus == without(allowed, allowed.back()));
}

TEST_CASE("cpu_list writes the kernel's list notation") {
  CHECK(pl::cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(pl::cpu_list({15}) == "15");
  CHECK(pl::cpu_list({3, 1, 2}) == "1-3");
  CHECK(pl::cpu_list({}).empty());
}

TEST_CASE("set refuses malformed placements and leaves none installed") {
  CHECK_THROWS_AS(pl::set({{}, {0}}), std::invalid_argument);
  CHECK_THROWS_AS(pl::set({{1}, {}}), std::invalid_argument);
  CHECK_THROWS_WITH(pl::set({{1}, {0, 1}}), Catch::Matchers::Contains("CPU 1 is in both"));
  CHECK_THROWS_WITH(pl::set({{-1}, {0}}), Catch::Matchers::Contains("out of range"));
  CHECK_THROWS_WITH(pl::set({{CPU_SETSIZE}, {0}}), Catch::Matchers::Contains("out of range"));
  CHECK(!pl::current().has_value());
}

TEST_CASE("without a placement the pin functions leave the thread's CPUs alone") {
  REQUIRE(!pl::current().has_value());
  const std::vector<int> before = my_affinity();
  pl::pin_current_thread_to_workers();
  pl::pin_current_thread_to_driver();
  pl::pin_current_thread_to_all();
  CHECK(my_affinity() == before);
  cuzk::ThreadPool pool(3);  // and pool workers keep the process's CPUs
  for (const ThreadView& v : view_workers(pool)) CHECK(v.mask == before);
}

// ---------------------------------------------------------------- placement, in a child process

// Hidden: run by the test below in a fresh process. Reads CUDA_MODULE_LOADING and CUZK_THREADS
// as the parent set them.
TEST_CASE("child: apply_stable_mode places the GPU-driving thread and the pool", "[.][placement-child]") {
  const char* env_loading = std::getenv("CUDA_MODULE_LOADING");
  const std::string user_loading = env_loading ? env_loading : "";
  const std::vector<int> allowed = pl::allowed_cpus();
  if (allowed.size() < 2) {
    WARN("this process may run on 1 CPU: checking that --stable is refused");
    CHECK_THROWS_WITH(cuzk::apply_stable_mode(), Catch::Matchers::Contains("no core can be kept free"));
    std::printf("placement-child: refused on 1 CPU\n");
    return;
  }
  const cuzk::StableMode mode = cuzk::apply_stable_mode();
  const std::vector<int> driver{allowed.back()}, workers = without(allowed, allowed.back());

  // (a) the placement and the module loading it reports
  REQUIRE(pl::current().has_value());
  CHECK(pl::current()->driver_cpus == driver);
  CHECK(pl::current()->worker_cpus == workers);
  CHECK(mode.placement == *pl::current());
  if (user_loading.empty()) {
    CHECK(mode.cuda_module_loading == "EAGER");
    CHECK(!mode.module_loading_set_by_user);
  } else {
    CHECK(mode.cuda_module_loading == user_loading);
    CHECK(mode.module_loading_set_by_user);
  }
  CHECK(std::string(std::getenv("CUDA_MODULE_LOADING")) == mode.cuda_module_loading);

  // the main (GPU-driving) thread is on the driver CPU only
  const ThreadView main_view = view_of_this_thread();
  CHECK(main_view.mask == driver);
  CHECK(main_view.proc == driver);

  // the global pool: sized to the worker set (capped by CUZK_THREADS), every worker on it
  cuzk::ThreadPool& pool = cuzk::ThreadPool::global();
  unsigned want = unsigned(workers.size());
  if (const char* t = std::getenv("CUZK_THREADS")) want = std::min(want, unsigned(std::stoi(t)));
  CHECK(pool.size() == want);
  CHECK(mode.pool_threads == want);
  const std::vector<ThreadView> views = view_workers(pool);
  CHECK(views.size() == pool.size() - 1);
  if (views.empty()) WARN("the global pool has no worker thread here (worker set of 1 CPU or CUZK_THREADS=1)");
  for (const ThreadView& v : views) {
    INFO("worker thread " << v.tid);
    CHECK(v.tid != main_view.tid);
    CHECK(v.mask == workers);
    CHECK(v.proc == workers);
    CHECK(std::find(v.mask.begin(), v.mask.end(), driver[0]) == v.mask.end());
  }

  // any pool made now places its workers too (this covers worker threads on 2 CPUs as well)
  {
    cuzk::ThreadPool local(3);
    const std::vector<ThreadView> lv = view_workers(local);
    CHECK(lv.size() == 2);
    for (const ThreadView& v : lv) {
      CHECK(v.mask == workers);
      CHECK(v.proc == workers);
    }
  }

  // a thread started by the driver inherits the driver CPU until it pins itself (the CUDA
  // backend's G2 thread does so), and pin_current_thread_to_all widens a thread to both sets
  ThreadView inherited, pinned, widened;
  std::thread([&] {
    inherited = view_of_this_thread();
    pl::pin_current_thread_to_workers();
    pinned = view_of_this_thread();
    pl::pin_current_thread_to_all();
    widened = view_of_this_thread();
  }).join();
  CHECK(inherited.mask == driver);
  CHECK(pinned.mask == workers);
  CHECK(pinned.proc == workers);
  CHECK(widened.mask == allowed);

  // the record for the header
  const nlohmann::json d = cuzk::describe(mode);
  CHECK(d["stable"] == true);
  CHECK(d["cuda_module_loading"] == mode.cuda_module_loading);
  CHECK(d["module_loading_set_by"] == (user_loading.empty() ? "cuzk" : "user"));
  CHECK(d["driver_cpus"].get<std::vector<int>>() == driver);
  CHECK(d["worker_cpus"].get<std::vector<int>>() == workers);
  CHECK(d["pool_threads"] == want);
  CHECK(d["gpu_clocks"] == "read, never changed");

  // too late: the global pool exists
  CHECK_THROWS_AS(pl::set(mode.placement), std::logic_error);
  CHECK_THROWS_AS(cuzk::apply_stable_mode(), std::logic_error);
  std::printf("placement-child: checked %zu global and 2 local worker threads\n", views.size());
}

TEST_CASE("child: a refused pinning is an error naming the CPUs, also from a pool", "[.][placement-refused]") {
  const std::vector<int> allowed = pl::allowed_cpus();
  const int absent = CPU_SETSIZE - 1;
  if (std::find(allowed.begin(), allowed.end(), absent) != allowed.end()) {
    WARN("CPU " << absent << " is allowed here: no CPU to be refused");
    return;
  }
  pl::set({{allowed.back()}, {absent}});
  CHECK_THROWS_WITH(pl::pin_current_thread_to_workers(), Catch::Matchers::Contains(std::to_string(absent)));
  try {
    pl::pin_current_thread_to_workers();
  } catch (const std::system_error& e) {
    CHECK(e.code().value() == EINVAL);
  }
  // a worker that cannot place itself makes the constructor throw (not std::terminate)
  CHECK_THROWS_AS(cuzk::ThreadPool(3), std::system_error);
  std::printf("placement-child: refusal checked\n");
}

TEST_CASE("placement and apply_stable_mode (child process)") {
  const std::string exe = self_exe();
  REQUIRE(!exe.empty());
  struct Run {
    std::string env, tag, marker;
  };
  const std::vector<Run> runs = {
      {"env -u CUZK_THREADS -u CUDA_MODULE_LOADING", "[placement-child]", "placement-child: "},
      {"env CUZK_THREADS=1 CUDA_MODULE_LOADING=LAZY", "[placement-child]", "placement-child: "},
      {"env", "[placement-refused]", "placement-child: "},
  };
  for (const Run& r : runs) {
    const auto res = cuzk::testing::run_command(r.env + " '" + exe + "' '" + r.tag + "'");
    INFO(r.env << " " << r.tag << ":\n" << res.output);
    CHECK(res.status == 0);
    CHECK(res.output.find(r.marker) != std::string::npos);  // the hidden case did run
  }
}

// ---------------------------------------------------------------- the warm-up rule

TEST_CASE("warm-ups settle when the last 3 proof times span at most 2% of their median") {
  // settles at the 3rd: span 10 of median 1005 (1.0%)
  cuzk::WarmupOutcome o = drive(auto_plan(20), ns({1000, 1010, 1005, 999, 999}));
  CHECK(o.mode == cuzk::WarmupMode::kUntilSettled);
  CHECK(o.done == 3);
  CHECK(o.converged);
  CHECK(o.spread == Approx(10.0 / 1005));

  // a slow first warm-up (parameter load, cold caches) keeps it going until it leaves the window
  o = drive(auto_plan(20), ns({5000, 1000, 1010, 1005, 999}));
  CHECK(o.done == 4);
  CHECK(o.converged);

  // exactly 2% settles, just above does not
  o = drive(auto_plan(20), ns({980, 1000, 1000}));
  CHECK(o.done == 3);
  CHECK(o.converged);
  o = drive(auto_plan(4), ns({979, 1000, 1000, 979}));
  CHECK(o.done == 4);
  CHECK(!o.converged);
}

TEST_CASE("warm-ups that never settle stop at the cap, not converged") {
  std::vector<uint64_t> seq;
  for (int i = 0; i < 40; ++i) seq.push_back(i % 2 ? 1100 : 1000);
  cuzk::WarmupOutcome o = drive(auto_plan(20), seq);
  CHECK(o.done == 20);
  CHECK(!o.converged);
  CHECK(o.spread == Approx(100.0 / 1100));  // window 1100, 1000, 1100 -> span 100, median 1100
  o = drive(auto_plan(3), seq);
  CHECK(o.done == 3);
  CHECK(!o.converged);
}

TEST_CASE("a fixed warm-up count runs exactly that many, whatever the times") {
  cuzk::WarmupPlan fixed;
  fixed.count = 2;
  cuzk::WarmupOutcome o = drive(fixed, ns({1000, 1000, 1000}));
  CHECK(o.mode == cuzk::WarmupMode::kFixed);
  CHECK(o.done == 2);
  fixed.count = 0;
  CHECK(drive(fixed, {}).done == 0);
  const nlohmann::json d = cuzk::describe(o, fixed);
  CHECK(d == nlohmann::json{{"mode", "fixed"}, {"done", 2}});
}

TEST_CASE("the recorded warm-up outcome of auto") {
  const cuzk::WarmupPlan plan = auto_plan(7);
  const nlohmann::json d = cuzk::describe(drive(plan, ns({1000, 1000, 1000})), plan);
  CHECK(d["mode"] == "auto");
  CHECK(d["done"] == 3);
  CHECK(d["converged"] == true);
  CHECK(d["cap"] == 7);
  CHECK(d["criterion"] == cuzk::warmup_criterion());
  CHECK(cuzk::warmup_criterion().find("last 3 warm-ups") != std::string::npos);
  CHECK(cuzk::warmup_criterion().find("2%") != std::string::npos);
}

TEST_CASE("--warmup, --warmup-cap and --stable resolve to a plan or a clear error") {
  using cuzk::resolve_warmup;
  using S = std::optional<std::string>;
  using I = std::optional<int>;
  CHECK(!resolve_warmup(std::nullopt, std::nullopt, false).has_value());  // the command's default
  auto p = resolve_warmup(S("5"), std::nullopt, false);
  REQUIRE(p);
  CHECK(!p->until_settled());
  CHECK(p->count == 5);
  p = resolve_warmup(S("0"), std::nullopt, true);  // a count wins over --stable's default
  REQUIRE(p);
  CHECK(!p->until_settled());
  CHECK(p->count == 0);
  p = resolve_warmup(S("auto"), std::nullopt, false);
  REQUIRE(p);
  CHECK(p->until_settled());
  CHECK(p->cap == cuzk::kDefaultWarmupCap);
  p = resolve_warmup(std::nullopt, I(7), true);  // auto is --stable's default
  REQUIRE(p);
  CHECK(p->until_settled());
  CHECK(p->cap == 7);

  CHECK_THROWS_WITH(resolve_warmup(S("fast"), std::nullopt, false),
                    "--warmup must be a number >= 0 or 'auto' (got \"fast\")");
  for (const char* bad : {"-1", "", "3x", "1e3", "99999999999"})
    CHECK_THROWS_WITH(resolve_warmup(S(bad), std::nullopt, false),
                      Catch::Matchers::Contains("--warmup must be a number >= 0 or 'auto'"));
  CHECK_THROWS_WITH(resolve_warmup(S("auto"), I(2), false), Catch::Matchers::Contains("--warmup-cap must be at least 3"));
  CHECK_THROWS_WITH(resolve_warmup(S("4"), I(10), false), Catch::Matchers::Contains("applies to --warmup auto"));
  CHECK_THROWS_WITH(resolve_warmup(std::nullopt, I(10), false), Catch::Matchers::Contains("needs --warmup auto"));
}

// ---------------------------------------------------------------- the CLI

TEST_CASE("cuzk-bench prove --stable records the placement and the warm-up outcome") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  // --warmup-cap 3: the fewest the rule needs, so the test takes 4 small proofs
  auto r = cuzk::test::run_bench("prove --stable --reps 1 --warmup-cap 3 --counters '' --out s.jsonl", d.path(),
                                 "env -u CUDA_MODULE_LOADING -u CUZK_THREADS");
  INFO(r.out << r.err);
  const std::vector<int> allowed = pl::allowed_cpus();
  if (allowed.size() < 2) {
    WARN("this process may run on 1 CPU: checking that --stable is refused");
    CHECK(r.code == 2);
    CHECK(r.err.find("no core can be kept free") != std::string::npos);
    return;
  }
  REQUIRE(r.code == 0);
  CHECK(r.err.find("stable mode: GPU-driving thread on CPU " + std::to_string(allowed.back())) != std::string::npos);
  const cuzk::ResultsFile f = cuzk::read_results(d.file("s.jsonl"));

  REQUIRE(f.header.value.contains("stable"));
  const nlohmann::json& st = f.header.value["stable"];
  CHECK(st["stable"] == true);
  CHECK(st["cuda_module_loading"] == "EAGER");
  CHECK(st["module_loading_set_by"] == "cuzk");
  CHECK(st["driver_cpus"].get<std::vector<int>>() == std::vector<int>{allowed.back()});
  CHECK(st["worker_cpus"].get<std::vector<int>>() == without(allowed, allowed.back()));
  CHECK(st["pool_threads"] == allowed.size() - 1);
  CHECK(st["gpu_clocks"] == "read, never changed");

  REQUIRE(f.summary.has_value());
  REQUIRE(f.summary->value.contains("warmup"));
  const nlohmann::json& w = f.summary->value["warmup"];
  CHECK(w["mode"] == "auto");
  CHECK(w["done"] == 3);
  CHECK(w["converged"].is_boolean());
  CHECK(w["criterion"] == cuzk::warmup_criterion());
  if (!w["converged"].get<bool>()) CHECK(r.err.find("did not settle within the cap of 3") != std::string::npos);

  int warm = 0, measured = 0;
  for (const auto& s : f.samples) (s.value["warmup"].get<bool>() ? warm : measured)++;
  CHECK(warm == 3);
  CHECK(measured == 1);
}

TEST_CASE("cuzk-bench run --stable --warmup auto warms the porep case up until settled") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  cuzk::test::spit(d.file("s.toml"), R"(name = "s"
[[case]]
name = "tiny"
kind = "porep"
partitions = 1
challenges = 1
depth = 4
)");
  auto r = cuzk::test::run_bench("run --suite ./s.toml --stable --warmup auto --warmup-cap 3 --reps 1 --counters '' "
                                 "--out out.jsonl",
                                 d.path(), "env -u CUDA_MODULE_LOADING CUZK_THREADS=1");
  INFO(r.out << r.err);
  if (pl::allowed_cpus().size() < 2) {
    WARN("this process may run on 1 CPU: checking that --stable is refused");
    CHECK(r.code == 2);
    return;
  }
  REQUIRE(r.code == 0);
  CHECK(r.err.find("warm-up 1 (auto, at most 3)") != std::string::npos);
  const cuzk::ResultsFile f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.header.value.contains("stable"));
  CHECK(f.header.value["stable"]["pool_threads"] == 1);  // CUZK_THREADS caps within the worker set
  REQUIRE(f.summary.has_value());
  const nlohmann::json& w = f.summary->value.at("warmup");
  CHECK(w["mode"] == "auto");
  CHECK(w["cases"]["tiny"]["done"] == 3);
  CHECK(w["converged"] == w["cases"]["tiny"]["converged"]);
}

TEST_CASE("--stable is refused with the reason when the process has 1 CPU") {
  if (cuzk::testing::run_command("taskset -c 0 true").status != 0) {
    WARN("taskset cannot restrict a process to CPU 0 here: not checked");
    return;
  }
  TempDir d;
  auto r = cuzk::test::run_bench("prove --stable --reps 1 --out s.jsonl", d.path(), "taskset -c 0");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("cuzk-bench: error: --stable: ") != std::string::npos);
  CHECK(r.err.find("1 CPU (0), so no core can be kept free") != std::string::npos);
  CHECK(r.err.find("drop --stable") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("s.jsonl")));  // refused before the results file opened
}

TEST_CASE("bad --warmup values are exit 2 with one clear line") {
  TempDir d;
  struct Bad {
    std::string args, message;
  };
  const std::vector<Bad> bad = {
      {"prove --warmup fast", "cuzk-bench: error: --warmup must be a number >= 0 or 'auto' (got \"fast\")"},
      {"prove --warmup -2", "--warmup must be a number >= 0 or 'auto' (got \"-2\")"},
      {"prove --warmup auto --warmup-cap 1", "--warmup-cap must be at least 3"},
      {"prove --warmup 2 --warmup-cap 5", "--warmup-cap applies to --warmup auto"},
      {"run --suite quick --warmup fast", "--warmup must be a number >= 0 or 'auto' (got \"fast\")"},
      {"run --suite quick --warmup-cap 5", "--warmup-cap needs --warmup auto"},
  };
  for (const Bad& b : bad) {
    auto r = cuzk::test::run_bench(b.args, d.path());
    INFO(b.args << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
  }
  CHECK(d.entries().empty());  // nothing ran
}
