// Backend selection: the registry (groth16::make_backend) and the CLI's --backend handling,
// checked before any work runs. On a machine with a usable GPU the CUDA path is exercised for
// real; elsewhere its refusal and the --allow-cpu-fallback path are.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/synth/synth.hpp"
#include "test_util.hpp"

using namespace cuzk;
using cuzk::test::run_bench;
using cuzk::test::TempDir;

TEST_CASE("the backend registry: cpu always, unknown names refused, batch shapes checked") {
  auto names = groth16::backend_names();
  CHECK(std::find(names.begin(), names.end(), "cpu") != names.end());
  CHECK_THROWS_AS(groth16::make_backend("nope"), std::invalid_argument);

  circuits::PorepParams P{1, 0, 0, 2};
  auto c = circuits::PorepCircuit::generate(P, 3);
  auto pk = groth16::generate_keys(synth::record_matrices(c), 4);
  auto pa = synth::prove_assignment(c);
  groth16::Witness w{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
  auto rs = groth16::Randomness::from_seed(9);
  auto cpu = groth16::make_backend("cpu");
  CHECK(cpu->prove(pk, w, rs) == groth16::prove_cpu(pk, w, rs));
  std::vector<groth16::Witness> ws{w, w};
  std::vector<groth16::Randomness> one{rs};
  CHECK_THROWS_AS(cpu->prove_batch(pk, ws, one), std::invalid_argument);
}

TEST_CASE("--backend is checked before anything runs") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto info = run_bench("info --json", d.path());
  REQUIRE(info.code == 0);
  const auto j = nlohmann::json::parse(info.out);
  const bool gpu = j.at("cuda_backend_usable").get<bool>();
  bool cpu_listed = false;
  for (auto& b : j.at("backends")) cpu_listed |= b.at("name") == "cpu" && b.at("usable") == true;
  CHECK(cpu_listed);

  const std::string small = "prove --partitions 1 --challenges 1 --layers 0 --parents 0 --depth 2 --seed 1 ";
  auto bad = run_bench(small + "--backend gpu --out bad.jsonl", d.path());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown backend 'gpu'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d.file("bad.jsonl")));
  auto bad_run = run_bench("run --suite quick --quick --backend gpu --out bad2.jsonl", d.path());
  CHECK(bad_run.code == 2);
  CHECK_FALSE(std::filesystem::exists(d.file("bad2.jsonl")));

  if (gpu) {
    auto r = run_bench(small + "--backend cuda --out cuda.jsonl", d.path());
    CHECK(r.code == 0);
    CHECK(r.out.find("every proof verified") != std::string::npos);
  } else {
    auto r = run_bench(small + "--backend cuda --out cuda.jsonl", d.path());
    CHECK(r.code == 1);
    CHECK(r.err.find("backend 'cuda'") != std::string::npos);
    CHECK(r.err.find("--allow-cpu-fallback") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(d.file("cuda.jsonl")));
    auto f = run_bench(small + "--backend cuda --allow-cpu-fallback --out fb.jsonl", d.path());
    CHECK(f.code == 0);
    CHECK(f.err.find("using the cpu backend") != std::string::npos);
    CHECK(cuzk::test::slurp(d.file("fb.jsonl")).find("\"backend\":\"cpu\"") != std::string::npos);
  }
}
