// "Nothing lost, nothing crashes" (docs/reliability.md), the CLI's side: outputs never replace inputs or
// existing files by surprise, device nodes stay devices, bad input is exit 2 with one
// `cuzk-bench: error:` line naming the file or value (NaN and infinities too, a JSON field of the
// wrong type, a --cmake-arg however cmake would read it), a stdout that cannot be written is an
// error, and the first-use flows agree.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "harness/measure/output_file.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::run_bench;
using cuzk::test::SynthSpec;
using cuzk::test::TempDir;

namespace {

std::string src(const std::string& rel) { return std::string(CUZK_SOURCE_DIR) + "/" + rel; }
const std::string kZkey = src("tests/fixtures/snarkjs/small.zkey");
const std::string kWtns = src("tests/fixtures/circom/small.wtns");
const std::string kR1cs = src("tests/fixtures/circom/small.r1cs");

// One line on stderr, "cuzk-bench: error: ...", mentioning `needle`.
void check_one_error_line(const cuzk::test::RunResult& r, const std::string& needle) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("cuzk-bench: error: ", 0) == 0);
  CHECK(cuzk::test::lines_of(r.err).size() == 1);
  CHECK(r.err.find(needle) != std::string::npos);
}

// a.jsonl and b.jsonl (two synthetic runs) and t.toml (a 5% threshold) in `d`.
void write_gate_inputs(const TempDir& d) {
  SynthSpec a, b;
  b.seed = 2;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.05\n");
}

bool is_char_device(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

std::string circom_prove(const std::string& extra) {
  return "prove --zkey '" + kZkey + "' --wtns '" + kWtns + "' --seed 1 " + extra;
}

}  // namespace

TEST_CASE("output files: atomic, never over a device, never a folder", "[cli]") {
  TempDir d;
  cuzk::write_output_file(d.file("a.txt"), "one");
  cuzk::write_output_file(d.file("a.txt"), "two");
  CHECK(cuzk::test::slurp(d.file("a.txt")) == "two");
  CHECK(d.entries().size() == 1);  // no temporary left
  CHECK_THROWS_AS(cuzk::write_output_file(d.path(), "x"), cuzk::FileError);
  CHECK_THROWS_AS(cuzk::write_output_file(d.file("no/such/dir/x"), "x"), cuzk::FileError);
  if (is_char_device("/dev/full")) {
    CHECK_THROWS_WITH(cuzk::write_output_file("/dev/full", "x"), Catch::Matchers::Contains("No space left on device"));
    CHECK(is_char_device("/dev/full"));
  }
  SECTION("several outputs: a failure replaces none") {
    cuzk::test::spit(d.file("p.json"), "old");
    if (is_char_device("/dev/full")) {
      cuzk::OutputFiles out;
      out.add(d.file("p.json"), "new");
      out.add("/dev/full", "vk");
      CHECK_THROWS_AS(out.commit(), cuzk::FileError);
      CHECK(cuzk::test::slurp(d.file("p.json")) == "old");
    }
  }
  SECTION("appended log lines: whole, and a full disk is an error") {
    cuzk::append_output_line(d.file("log.jsonl"), R"({"a":1})");
    cuzk::append_output_line(d.file("log.jsonl"), R"({"a":2})");
    CHECK(cuzk::test::slurp(d.file("log.jsonl")) == "{\"a\":1}\n{\"a\":2}\n");
    CHECK_THROWS_WITH(cuzk::append_output_line(d.path(), "x"), Catch::Matchers::Contains("Is a directory"));
    if (is_char_device("/dev/full"))
      CHECK_THROWS_WITH(cuzk::append_output_line("/dev/full", "x"), Catch::Matchers::Contains("No space left on device"));
  }
  CHECK(cuzk::same_file(d.file("a.txt"), d.path() + "/./a.txt"));
  CHECK(cuzk::same_file(d.file("new.txt"), d.path() + "/x/../new.txt"));
  CHECK_FALSE(cuzk::same_file(d.file("a.txt"), d.file("b.txt")));
  CHECK_THROWS_WITH(cuzk::check_input_file(d.path()), Catch::Matchers::Contains("is a directory"));
  CHECK_THROWS_WITH(cuzk::check_input_file(d.file("nope")), Catch::Matchers::Contains("No such file"));
}

TEST_CASE("zkey-setup: --out needs --force to replace a file, and never replaces its input", "[cli]") {
  TempDir d;
  cuzk::test::spit(d.file("k.zkey"), "precious");
  check_one_error_line(run_bench("zkey-setup --r1cs '" + kR1cs + "' --out k.zkey", d.path()), "k.zkey exists");
  CHECK(cuzk::test::slurp(d.file("k.zkey")) == "precious");
  CHECK(run_bench("zkey-setup --r1cs '" + kR1cs + "' --out k.zkey --force", d.path()).code == 0);
  CHECK(cuzk::test::slurp(d.file("k.zkey")) != "precious");
  cuzk::test::spit(d.file("c.r1cs"), cuzk::test::slurp(kR1cs));
  check_one_error_line(run_bench("zkey-setup --r1cs c.r1cs --out ./c.r1cs --force", d.path()), "same file");
  check_one_error_line(run_bench("zkey-setup --r1cs c.r1cs --out no/such/dir/k.zkey", d.path()), "no/such/dir");
  check_one_error_line(run_bench("zkey-setup --r1cs . --out x.zkey", d.path()), "is a directory");
  if (is_char_device("/dev/full")) {
    auto r = run_bench("zkey-setup --r1cs c.r1cs --out /dev/full", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(is_char_device("/dev/full"));
  }
}

TEST_CASE("trace: refuses to write over its input", "[cli]") {
  TempDir d;
  SynthSpec s;
  cuzk::test::write_synth(d.file("q.jsonl"), s);
  const std::string before = cuzk::test::slurp(d.file("q.jsonl"));
  check_one_error_line(run_bench("trace q.jsonl -o q.jsonl", d.path()), "replace the input");
  check_one_error_line(run_bench("trace q.jsonl -o ./q.jsonl", d.path()), "replace the input");
  CHECK(cuzk::test::slurp(d.file("q.jsonl")) == before);
  check_one_error_line(run_bench("trace .", d.path()), "is a directory");
}

TEST_CASE("prove (circom): outputs are refused before any file is opened", "[cli][circom]") {
  TempDir d;
  cuzk::test::spit(d.file("proof.json"), "old proof");
  SECTION("an existing --proof needs --force, and nothing is left in results/local") {
    check_one_error_line(run_bench(circom_prove("--proof proof.json --public public.json"), d.path()),
                         "proof.json exists");
    CHECK(cuzk::test::slurp(d.file("proof.json")) == "old proof");
    CHECK_FALSE(cuzk::test::exists(d.file("results")));
    auto r = run_bench(circom_prove("--proof proof.json --public public.json --force"), d.path());
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(cuzk::test::slurp(d.file("proof.json")).find("pi_a") != std::string::npos);
  }
  SECTION("--proof and --public the same file") {
    check_one_error_line(run_bench(circom_prove("--proof p.json --public ./p.json"), d.path()), "same file");
    CHECK_FALSE(cuzk::test::exists(d.file("p.json")));
  }
  SECTION("an output over an input") {
    cuzk::test::spit(d.file("w.wtns"), cuzk::test::slurp(kWtns));
    auto r = run_bench("prove --zkey '" + kZkey + "' --wtns w.wtns --proof w.wtns --public pub.json --force", d.path());
    check_one_error_line(r, "replace the input");
  }
  SECTION("a failure writing --vk leaves --proof and --public unwritten") {
    if (!is_char_device("/dev/full")) return;
    auto r = run_bench(circom_prove("--proof p.json --public pub.json --vk /dev/full"), d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK_FALSE(cuzk::test::exists(d.file("p.json")));
    CHECK_FALSE(cuzk::test::exists(d.file("pub.json")));
    CHECK(is_char_device("/dev/full"));
  }
  SECTION("a folder as input") {
    check_one_error_line(run_bench("prove --zkey . --wtns '" + kWtns + "' --proof p.json --public q.json", d.path()),
                         "is a directory");
    CHECK_FALSE(cuzk::test::exists(d.file("results")));
  }
}

TEST_CASE("bad numbers are exit 2 with one line", "[cli]") {
  TempDir d;
  write_gate_inputs(d);
  check_one_error_line(run_bench("gate --baseline a.jsonl --candidate b.jsonl --thresholds t.toml --resamples -5", d.path()),
                       "--resamples");
  check_one_error_line(run_bench("compare a.jsonl b.jsonl --threshold nan", d.path()), "--threshold");
  check_one_error_line(run_bench("compare a.jsonl b.jsonl --alpha nan", d.path()), "--alpha");
  check_one_error_line(run_bench("compare a.jsonl b.jsonl --max-other-load inf", d.path()), "--max-other-load");
  check_one_error_line(run_bench("prove --seed -1", d.path()), "--seed");
  check_one_error_line(run_bench("prove --reps -1", d.path()), "--reps");
  auto power = run_bench("calibrate --power 150", d.path());
  check_one_error_line(power, "(0, 100)");
  check_one_error_line(run_bench("compare a.jsonl", d.path()), "B");  // a CLI11 parse error: one line too
  check_one_error_line(run_bench("calibrate --out-dir /proc/no-such-folder", d.path()), "--out-dir");
}

TEST_CASE("a folder or a missing file as input names the path", "[cli]") {
  TempDir d;
  SynthSpec a;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  check_one_error_line(run_bench("compare . a.jsonl", d.path()), "is a directory");
  {
    // The gate fails closed with its own verdict: "error", the reason on a "gate error" line.
    auto g = run_bench("gate --baseline a.jsonl --candidate . --thresholds a.jsonl", d.path());
    INFO(g.out << g.err);
    CHECK(g.code == 2);
    CHECK(g.err.find("cuzk-bench: gate error: --candidate . is a directory") != std::string::npos);
  }
  check_one_error_line(run_bench("verify --vk . --proof a.jsonl --public a.jsonl", d.path()), "is a directory");
  check_one_error_line(run_bench("srs inspect .", d.path()), "is a directory");
}

TEST_CASE("compare: nothing in common is exit 2; the r/s seed is not part of a case", "[cli]") {
  TempDir d;
  SynthSpec a, b, c;
  a.parameters = {{"size", 8}, {"rs_seed", 7}};
  b.seed = 2;
  b.parameters = {{"size", 8}, {"rs_seed", "secure"}};
  c.seed = 3;
  c.parameters = {{"size", 16}};
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  cuzk::test::write_synth(d.file("c.jsonl"), c);
  auto same = run_bench("compare a.jsonl b.jsonl --json", d.path());
  INFO(same.err);
  REQUIRE(same.code == 0);
  CHECK(nlohmann::json::parse(same.out)["rows"].size() >= 4);
  check_one_error_line(run_bench("compare a.jsonl c.jsonl", d.path()), "no case in common");
}

TEST_CASE("gate: an unwritable --json-out is exit 2 before any verdict is printed", "[cli]") {
  TempDir d;
  write_gate_inputs(d);
  auto r = run_bench("gate --baseline a.jsonl --candidate b.jsonl --thresholds t.toml --json-out no/dir/v.json", d.path());
  check_one_error_line(r, "no/dir/v.json");
  CHECK(r.out.find("PASS") == std::string::npos);
  check_one_error_line(
      run_bench("gate --baseline a.jsonl --candidate b.jsonl --thresholds t.toml --markdown-out t.toml", d.path()),
      "replace the input");
}

TEST_CASE("verify -q prints nothing on stdout", "[cli][circom]") {
  const std::string fx = src("tests/fixtures/snarkjs/");
  auto ok = run_bench("verify -q --vk " + fx + "verification_key.json --proof " + fx + "proof.json --public " + fx +
                          "public.json",
                      ".");
  CHECK(ok.code == 0);
  CHECK(ok.out.empty());
  TempDir d;
  // The fixture's public signals with the first one changed: well formed, wrong.
  nlohmann::json pub = nlohmann::json::parse(cuzk::test::slurp(fx + "public.json"));
  pub[0] = pub[0] == "12345" ? "12346" : "12345";
  cuzk::test::spit(d.file("pub.json"), pub.dump());
  auto bad = run_bench("verify -q --vk " + fx + "verification_key.json --proof " + fx + "proof.json --public pub.json",
                       d.path());
  INFO(bad.out << bad.err);
  CHECK(bad.code == 1);
  CHECK(bad.out.empty());
}

TEST_CASE("one default circuit: circuit --describe, prove and srs generate agree", "[cli]") {
  TempDir d;
  auto dflt = run_bench("circuit --describe --json", d.path());
  auto prove_default = run_bench("circuit --describe --json --challenges 2 --layers 0 --parents 0 --depth 8", d.path());
  REQUIRE(dflt.code == 0);
  CHECK(nlohmann::json::parse(dflt.out)["constraints"] == nlohmann::json::parse(prove_default.out)["constraints"]);
  auto help = run_bench("srs generate --help", d.path());
  CHECK(help.out.find("--params-seed") != std::string::npos);
  check_one_error_line(run_bench("srs generate --params-seed -1 -o x.params", d.path()), "--params-seed");
}

namespace {
// The fixture .zkey with delta (G1 and G2) set to the point at infinity (all-zero bytes), in
// section 2 (the Groth16 header: n8q q n8r r nVars nPublic domainSize alpha1 beta1 beta2 gamma2
// delta1 delta2).
std::string zkey_with_infinite_delta() {
  std::string z = cuzk::test::slurp(kZkey);
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, z.data() + at, 4);
    return v;
  };
  size_t at = 12;  // "zkey", version, section count
  const uint32_t sections = u32(8);
  for (uint32_t i = 0; i < sections && at + 12 <= z.size(); ++i) {
    const uint32_t type = u32(at);
    uint64_t size = 0;
    std::memcpy(&size, z.data() + at + 4, 8);
    const size_t body = at + 12;
    if (type == 2) {
      const uint32_t n8q = u32(body);
      const uint32_t n8r = u32(body + 4 + n8q);
      const size_t points = body + 4 + n8q + 4 + n8r + 12;
      const size_t delta1 = points + 2 * n8q + 2 * n8q + 4 * n8q + 4 * n8q;
      std::fill(z.begin() + delta1, z.begin() + delta1 + 6 * n8q, '\0');  // delta1 and delta2
      return z;
    }
    at = body + size;
  }
  return {};
}
}  // namespace

TEST_CASE("prove (circom): a key whose delta is the point at infinity is called unusable", "[cli][circom]") {
  TempDir d;
  const std::string z = zkey_with_infinite_delta();
  REQUIRE(!z.empty());
  cuzk::test::spit(d.file("bad.zkey"), z);
  auto r = run_bench("prove --zkey bad.zkey --wtns '" + kWtns + "' --proof p.json --public q.json", d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("delta is the point at infinity") != std::string::npos);
  CHECK(r.err.find("witness") == std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("p.json")));
}

namespace {

// Bounds every cuzk-bench below: a command that went on with a bad value fails its test.
const std::string kBounded = "timeout 30";

std::string quick_suite() { return src("suites/quick.toml"); }

// A source tree of nothing but CMakePresets.json: ab reads its presets, and a build in it fails
// at once (no CMakeLists.txt).
void write_presets_tree(const std::string& dir, const std::string& presets) {
  REQUIRE(std::system(("mkdir -p '" + dir + "'").c_str()) == 0);
  cuzk::test::spit(dir + "/CMakePresets.json", presets);
}

const std::string kPresets = R"({"version": 3, "configurePresets": [
  {"name": "baseline", "binaryDir": "${sourceDir}/build/baseline", "cacheVariables": {"CUZK_PINNED_HOST": "OFF"}},
  {"name": "pinned", "inherits": "baseline", "binaryDir": "${sourceDir}/build/pinned", "cacheVariables": {"CUZK_PINNED_HOST": "ON"}}]})";

// cuzk-bench `args` with its stdout the write end of a pipe whose read end is already closed.
cuzk::test::RunResult run_into_closed_pipe(const std::vector<std::string>& args, const std::string& err) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  close(p[0]);
  const std::string bench = cuzk::test::bench();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    alarm(30);
    std::vector<char*> argv{const_cast<char*>("cuzk-bench")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bench.c_str(), argv.data());
    _exit(127);
  }
  close(p[1]);
  int st = 0;
  waitpid(pid, &st, 0);
  cuzk::test::RunResult r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  r.err = cuzk::test::slurp(err);
  return r;
}

}  // namespace

TEST_CASE("every number option takes only finite values in its range", "[cli]") {
  TempDir d;
  const std::string bisect = "bisect --good x --bad y --suite quick --case c --phase proof ";
  struct Bad {
    std::string args, flag;
  };
  for (const Bad& b : {Bad{"run --suite quick --list --run-timeout nan", "--run-timeout"},
                       Bad{"run --suite quick --list --run-timeout inf", "--run-timeout"},
                       Bad{"run --suite quick --list --run-timeout -1", "--run-timeout"},
                       Bad{"ab --a x --b y --suite quick --run-timeout inf", "--run-timeout"},
                       Bad{"matrix --variants x,y --suite quick --run-timeout nan", "--run-timeout"},
                       Bad{"matrix --variants x,y --suite quick --level nan", "--level"},
                       Bad{"matrix --variants x,y --suite quick --level 1", "--level"},
                       Bad{bisect + "--threshold inf", "--threshold"},
                       Bad{bisect + "--threshold -5", "--threshold"},
                       Bad{"calibrate --target-effect inf", "--target-effect"},
                       Bad{"calibrate --noise-threshold inf", "--noise-threshold"},
                       Bad{"calibrate --slowdowns 1,nan", "--slowdowns"}}) {
    INFO(b.args);
    check_one_error_line(run_bench(b.args, d.path(), kBounded), b.flag);
  }
}

TEST_CASE("bisect --build-cmd '' is refused, not taken for the preset build", "[cli]") {
  TempDir d;
  for (const char* cmd : {"''", "'   '"})
    check_one_error_line(run_bench(std::string("bisect --good x --bad y --suite quick --case c --phase proof --build-cmd ") + cmd,
                                   d.path(), kBounded),
                         "--build-cmd");
  CHECK_FALSE(cuzk::test::exists(d.file("results")));
}

TEST_CASE("standard output that cannot be written is an error, not exit 0", "[cli]") {
  TempDir d;
  if (is_char_device("/dev/full")) {
    const auto r = cuzk::testing::run_command("{ '" + cuzk::test::bench() + "' circuit --describe >/dev/full; }");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output == "cuzk-bench: error: cannot write standard output: No space left on device\n");
  }
  // SIGPIPE does not kill it silently: the write fails with EPIPE, reported on stderr.
  const auto p = run_into_closed_pipe({"circuit", "--describe"}, d.file("err"));
  INFO(p.err);
  CHECK(p.code == 2);
  CHECK(p.err == "cuzk-bench: error: cannot write standard output: Broken pipe\n");
}

TEST_CASE("a JSON input field of the wrong type is exit 2 with the error prefix", "[cli]") {
  TempDir d;
  write_presets_tree(d.file("tree"), R"({"version": 3, "configurePresets": [{"name": "baseline", "binaryDir": 5}]})");
  auto r = run_bench("ab --a baseline --b baseline --source-dir tree --suite '" + quick_suite() + "' --out-dir ab",
                     d.path(), kBounded);
  check_one_error_line(r, "type must be string");
  CHECK_FALSE(cuzk::test::exists(d.file("ab")));
}

TEST_CASE("--cmake-arg is read as cmake reads it before the preset check", "[cli]") {
  TempDir d;
  write_presets_tree(d.file("tree"), kPresets);
  const std::string ab =
      "ab --a baseline --b pinned --source-dir tree --suite '" + quick_suite() + "' --rounds 1 --out-dir ab ";
  for (const std::string& spelled : {std::string("--cmake-arg=-D --cmake-arg=CUZK_PINNED_HOST=ON"),
                                     std::string("'--cmake-arg=-D CUZK_PINNED_HOST=ON'"),
                                     std::string("'--cmake-arg=-D\"CUZK_PINNED_HOST\"=ON'"),
                                     std::string("--cmake-arg=-DCUZK_PINNED_HOST:BOOL=ON")}) {
    INFO(spelled);
    check_one_error_line(run_bench(ab + spelled, d.path(), kBounded), "preset 'baseline' sets CUZK_PINNED_HOST itself");
  }
  check_one_error_line(run_bench(ab + "--cmake-arg=-D", d.path(), kBounded), "the last one");
  // -D and NAME=VALUE as two arguments pass the check: the (empty) tree's configure fails next.
  auto ok = run_bench(ab + "--cmake-arg=-D --cmake-arg=CUZK_CUDA=OFF", d.path(), kBounded);
  INFO(ok.err);
  CHECK(ok.code == 1);
  CHECK(ok.err.find("configuring baseline failed") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("ab")));
}
