#include "harness/cli/prove_circom.hpp"

#include <fmt/core.h>

#include <chrono>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "prover/circom/circom.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/interop/snarkjs_json.hpp"
#include "prover/interop/zkey.hpp"

namespace cuzk::cli {

void check_circom_paths(const CircomProveOptions& o, const std::vector<NamedPath>& more_outputs) {
  if (o.zkey.empty()) throw Error("--zkey is required for circom inputs");
  if (o.wtns.empty()) throw Error("--wtns is required with --zkey");
  if (o.proof_out.empty()) throw Error("--proof FILE is required with --zkey (where proof.json goes)");
  if (o.public_out.empty()) throw Error("--public FILE is required with --zkey (where public.json goes)");
  check_input_file(o.zkey, "--zkey");
  check_input_file(o.wtns, "--wtns");
  if (!o.r1cs.empty()) check_input_file(o.r1cs, "--r1cs");
  std::vector<NamedPath> outputs = {{"--proof", o.proof_out}, {"--public", o.public_out}, {"--vk", o.vk_out}};
  outputs.insert(outputs.end(), more_outputs.begin(), more_outputs.end());
  check_distinct({{"--zkey", o.zkey}, {"--wtns", o.wtns}, {"--r1cs", o.r1cs}}, outputs);
  check_output_file(o.proof_out, "--proof", o.force);
  check_output_file(o.public_out, "--public", o.force);
  if (!o.vk_out.empty()) check_output_file(o.vk_out, "--vk", o.force);
}

namespace {
// A key whose delta is the point at infinity cannot make a proof that verifies (C is divided by
// delta's discrete log, which would be 0); say so rather than blame the witness afterwards.
void check_key_usable(const interop::ZkeyCircuit& z, const std::string& path) {
  if (z.pk.vk.delta_g1.is_infinity() || z.pk.vk.delta_g2.is_infinity())
    throw Error(fmt::format("{}: the key is unusable: delta is the point at infinity (a broken or forged .zkey)", path));
  if (z.pk.vk.gamma_g2.is_infinity())
    throw Error(fmt::format("{}: the key is unusable: gamma is the point at infinity (a broken or forged .zkey)", path));
}
}  // namespace

int run_prove_circom(const CircomProveOptions& o) {
  check_circom_paths(o, {});
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  double t_load = 0, t_synth = 0, t_prove = 0, t_verify = 0, t_write = 0;
  auto since = [](clock::time_point a) { return std::chrono::duration<double>(clock::now() - a).count(); };
  groth16::Proof proof;
  std::unique_ptr<groth16::Backend> backend = groth16::make_backend(o.backend);
  std::vector<fr_t> publics;
  interop::ZkeyCircuit z;
  bool ok = false;
  try {
    instr::Phase ph_proof("proof");
    {
      instr::Phase ph("srs_load");
      auto t = clock::now();
      z = interop::read_zkey(o.zkey);
      check_key_usable(z, o.zkey);
      t_load = since(t);
    }
    std::vector<fr_t> wires;
    interop::Abc abc;
    {
      instr::Phase ph("synth");
      auto t = clock::now();
      wires = circom::read_wtns(o.wtns);
      if (!o.r1cs.empty()) {
        circom::R1csFile r1cs = circom::read_r1cs(o.r1cs);
        interop::check_r1cs_matches(z, r1cs, o.zkey, o.r1cs);
        if (wires.size() != r1cs.n_wires)
          throw Error(fmt::format("{}: the witness has {} values, {} has {} wires (witness of another circuit?)", o.wtns,
                                  wires.size(), o.r1cs, r1cs.n_wires));
        int64_t bad = interop::first_unsatisfied(r1cs, wires, o.r1cs);
        if (bad >= 0)
          throw Error(fmt::format("{}: the witness does not satisfy constraint {} of {}: refusing to prove", o.wtns, bad,
                                  o.r1cs));
      }
      abc = interop::compute_abc(z, wires, o.wtns);
      t_synth = since(t);
    }
    groth16::Randomness rs = o.seed ? groth16::Randomness::from_seed(*o.seed) : groth16::Randomness::secure();
    {
      instr::Phase ph("prove");
      auto t = clock::now();
      proof = backend->prove(z.pk, interop::make_witness(z, wires, abc), rs);
      t_prove = since(t);
    }
    publics.assign(wires.begin() + 1, wires.begin() + 1 + z.n_public);
    {
      instr::Phase ph("verify");
      auto t = clock::now();
      ok = groth16::verify(z.pk.vk, proof, publics);
      t_verify = since(t);
    }
    {
      instr::Phase ph("write");
      auto t = clock::now();
      // All or nothing: a failure writing one output leaves none of them replaced.
      OutputFiles out;
      out.add(o.proof_out, interop::proof_to_json(proof));
      out.add(o.public_out, interop::public_to_json(publics));
      if (!o.vk_out.empty()) out.add(o.vk_out, interop::vk_to_json(z.pk.vk));
      out.commit();
      t_write = since(t);
    }
  } catch (const interop::ZkeyError& e) {
    throw Error(e.what());
  } catch (const circom::FormatError& e) {
    throw Error(e.what());
  } catch (const interop::JsonError& e) {
    throw Error(e.what());
  } catch (const FileError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw Error(fmt::format("{} / {}: {}", o.zkey, o.wtns, e.what()));
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const Error*>(&e)) throw;
    throw Error(e.what());
  }
  double secs = since(t0);
  if (!ok) {
    fmt::print(stderr,
               "cuzk-bench: the proof written to {} does NOT verify: the witness {} does not satisfy the circuit "
               "(pass --r1cs to name the violated constraint)\n",
               o.proof_out, o.wtns);
    return kExitFailure;
  }
  if (!o.quiet)
    fmt::print("proved {} ({} constraints + {} input rows, domain 2^{}, {} wires, {} public) in {:.3f} s: {} {}{}{}\n",
               o.zkey, z.pk.num_constraints - z.n_public - 1, z.n_public + 1, __builtin_ctzll(z.pk.domain_size),
               z.n_vars, z.n_public, secs, o.proof_out, o.public_out, o.vk_out.empty() ? "" : " ", o.vk_out);
  if (!o.quiet)
    fmt::print("  srs_load {:.3f} s, synth (wtns, a/b/c) {:.3f} s, prove {:.3f} s, verify {:.3f} s, write {:.3f} s\n", t_load,
               t_synth, t_prove, t_verify, t_write);
  return kExitOk;
}

}  // namespace cuzk::cli
