// scripts/nsys-capture.sh: the error paths that run on any machine. Without nsys the script
// stops before running anything, exits 2 and says where it looked (docs/nsys.md); the capture
// itself needs Nsight Systems and is exercised on the GPU machine.
#include <filesystem>

#include "catch.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

using cuzk::testing::run_command;

namespace {
const std::string kScript = std::string(CUZK_SOURCE_DIR) + "/scripts/nsys-capture.sh";
}

TEST_CASE("nsys-capture: an NSYS that does not exist is 'not found', exit 2, nothing run", "[nsys]") {
  cuzk::test::TempDir d;
  // An empty environment with a PATH that has nothing in it: bash builtins only.
  auto r = run_command("env -i PATH=" + d.file("no-bin") + " NSYS=" + d.file("no-such-nsys") + " /bin/bash '" + kScript +
                       "' --suite quick --case porep-tiny --out '" + d.file("out") + "'");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("nsys-capture: error: nsys not found: NSYS=" + d.file("no-such-nsys") +
                      " is not an executable file") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("out")));
}

TEST_CASE("nsys-capture: without NSYS the message lists every place it looked", "[nsys]") {
  // Only meaningful where no nsys is installed in the usual folders (true on the development
  // machine; the GPU machine has one in /opt/nvidia/nsight-compute).
  auto probe = run_command("for f in /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys "
                           "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys; do [ -x \"$f\" ] && exit 0; done; exit 1");
  if (probe.status == 0) {
    WARN("an nsys is installed in a usual folder here; skipping the not-found listing check");
    return;
  }
  cuzk::test::TempDir d;
  auto r = run_command("env -i PATH=" + d.file("no-bin") + " /bin/bash '" + kScript +
                       "' --suite quick --case porep-tiny --out '" + d.file("out") + "'");
  INFO(r.output);
  CHECK(r.status == 2);
  for (const char* where : {"nsys not found; looked in: $NSYS (unset)", "the PATH (", "/usr/local/cuda/bin",
                            "/opt/nvidia/nsight-systems/*/bin", "/opt/nvidia/nsight-compute/*/host/target-linux-x64"})
    CHECK(r.output.find(where) != std::string::npos);
}

TEST_CASE("nsys-capture: bad arguments are one error and exit 2", "[nsys]") {
  auto r = run_command("/bin/bash '" + kScript + "' --suite quick");
  CHECK(r.status == 2);
  CHECK(r.output.find("--case CASE is required") != std::string::npos);
  r = run_command("/bin/bash '" + kScript + "' --suite quick --case c --bogus");
  CHECK(r.status == 2);
  CHECK(r.output.find("unknown argument '--bogus'") != std::string::npos);
  r = run_command("/bin/bash '" + kScript + "' --suite quick --case c --warmup x");
  CHECK(r.status == 2);
  CHECK(r.output.find("--warmup 'x': expected a count of warm-up proofs") != std::string::npos);
  r = run_command("/bin/bash '" + kScript + "' --suite quick --case c --reps 0");
  CHECK(r.status == 2);
  CHECK(r.output.find("--reps '0': expected a count of measured proofs") != std::string::npos);
}

namespace {

// A stand-in for nsys that does what the script relies on: `profile ... -o BASE prog args`
// runs prog and writes BASE.nsys-rep (or only BASE.qdstrm with FAKE_NSYS_NO_IMPORT, as the
// GPU machine's nsys does without libdw); `export ... -o FILE` writes FILE; `stats` prints a
// table. Every call is appended to $FAKE_NSYS_LOG.
const char* kFakeNsys = R"(#!/bin/sh
echo "$*" >> "$FAKE_NSYS_LOG"
cmd=$1; shift
out=""
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    --type) shift 2 ;;
    --*) shift ;;
    *) break ;;
  esac
done
case $cmd in
  profile)
    "$@"; rc=$?
    if [ -n "$FAKE_NSYS_NO_IMPORT" ]; then : > "$out.qdstrm"; else echo trace > "$out.nsys-rep"; fi
    exit $rc ;;
  export) echo db > "$out" ;;
  stats) echo " Time (%)  Total Time (ns)  Instances  Range"; echo "    100.0             7          1  :micro" ;;
esac
)";

const char* kMicroSuite = R"(name = "m"
[[case]]
name = "fr-add"
kind = "micro"
group = "arithmetic"
filter = "^BM_fr_add$"
min_time_ms = 5
)";

struct Fake {
  cuzk::test::TempDir d;
  Fake() {
    cuzk::test::spit(d.file("nsys"), kFakeNsys);
    cuzk::test::spit(d.file("m.toml"), kMicroSuite);
    std::filesystem::permissions(d.file("nsys"), std::filesystem::perms::owner_all);
  }
  cuzk::testing::CommandResult capture(const std::string& args, const std::string& env = "") {
    return run_command("cd '" + d.path() + "' && " + env + " NSYS='" + d.file("nsys") + "' FAKE_NSYS_LOG='" +
                       d.file("log") + "' CUZK_BENCH='" + cuzk::test::bench() + "' /bin/bash '" + kScript + "' " + args);
  }
};

}  // namespace

TEST_CASE("nsys-capture: one case under nsys leaves trace, sqlite, NVTX summary and results side by side", "[nsys]") {
  Fake f;
  auto r = f.capture("--suite ./m.toml --case fr-add --out out");  // a suite file: named after its base name
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string base = f.d.file("out/m-fr-add");
  for (const char* ext : {".nsys-rep", ".sqlite", ".nvtx_sum.txt", ".jsonl"}) {
    INFO(ext);
    CHECK(cuzk::test::exists(base + ext));
    CHECK(r.output.find(base + ext) != std::string::npos);  // printed where it is
  }
  CHECK(r.output.find(":micro") != std::string::npos);  // the NVTX summary is shown
  const std::string log = cuzk::test::slurp(f.d.file("log"));
  CHECK(log.find("profile --trace=cuda,nvtx --force-overwrite=true -o " + base + " " + cuzk::test::bench() +
                 " run --suite ./m.toml --case fr-add --backend cpu --reps 1 --warmup 0") != std::string::npos);
  CHECK(log.find("export --type sqlite --force-overwrite=true -o " + base + ".sqlite " + base + ".nsys-rep") !=
        std::string::npos);
  CHECK(log.find("stats --report nvtx_sum " + base + ".sqlite") != std::string::npos);
  // A warm proof after a cold one (the GPU backend's first proof also uploads the key).
  r = f.capture("--suite ./m.toml --case fr-add --out out2 --warmup 1 --reps 2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(cuzk::test::slurp(f.d.file("log")).find("--case fr-add --backend cpu --reps 2 --warmup 1") != std::string::npos);
}

TEST_CASE("nsys-capture: an importer that leaves only a .qdstrm is named, with the libdw recipe", "[nsys]") {
  Fake f;
  auto r = f.capture("--suite m.toml --case fr-add --out out", "FAKE_NSYS_NO_IMPORT=1");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find(".qdstrm but no .nsys-rep: its importer failed") != std::string::npos);
  CHECK(r.output.find("libdw") != std::string::npos);
  CHECK(r.output.find("docs/gpu-machine.md") != std::string::npos);
}

TEST_CASE("nsys-capture: an unknown case or a missing cuzk-bench stops before nsys runs", "[nsys]") {
  Fake f;
  auto r = f.capture("--suite m.toml --case nope --out out");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--case nope: suite 'm' has no such case") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(f.d.file("log")));  // nsys never ran
  r = run_command("cd '" + f.d.path() + "' && NSYS='" + f.d.file("nsys") + "' CUZK_BENCH=/no/such/cuzk-bench /bin/bash '" +
                  kScript + "' --suite m.toml --case fr-add");
  CHECK(r.status == 2);
  CHECK(r.output.find("cuzk-bench not built: no executable at /no/such/cuzk-bench") != std::string::npos);
}
