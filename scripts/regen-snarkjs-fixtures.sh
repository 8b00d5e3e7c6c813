#!/usr/bin/env bash
# Regenerates tests/fixtures/snarkjs/ from the circom fixture (tests/fixtures/circom/small.r1cs and
# small.wtns, a colleague's fixture) with snarkjs from npm (version pinned in
# tests/interop/snarkjs/package.json), installed into build/snarkjs-npm (never committed):
#   small.zkey               Groth16 proving key for small.r1cs (BLS12-381), one beacon contribution
#   verification_key.json    snarkjs zkey export verificationkey
#   proof.json, public.json  snarkjs groth16 prove small.zkey small.wtns (verified before copying)
# The powers of tau (2^4, enough for the 8-point domain of small.r1cs) are made here too and not
# kept. Every random choice is a beacon with a fixed hash, so the keys are reproducible (the
# proof is not: snarkjs draws r and s at random). NOT a trusted setup: test keys only.
#   scripts/regen-snarkjs-fixtures.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
circom_fix="$root/tests/fixtures/circom"
fix="$root/tests/fixtures/snarkjs"
npmdir="$root/build/snarkjs-npm"
mkdir -p "$npmdir" "$fix"
if ! cmp -s "$root/tests/interop/snarkjs/package.json" "$npmdir/package.json" || [[ ! -x "$npmdir/node_modules/.bin/snarkjs" ]]; then
  cp "$root/tests/interop/snarkjs/package.json" "$npmdir/package.json"
  (cd "$npmdir" && npm install --no-audit --no-fund)
fi
snarkjs="$npmdir/node_modules/.bin/snarkjs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
beacon1=8a3c6d1e0f2b4a5968778695a4b3c2d1e0f1a2b3c4d5e6f708192a3b4c5d6e7f
beacon2=1f2e3d4c5b6a79880f1e2d3c4b5a69788796a5b4c3d2e1f0e1d2c3b4a5968778
"$snarkjs" powersoftau new bls12381 4 "$work/pot_0.ptau"
"$snarkjs" powersoftau beacon "$work/pot_0.ptau" "$work/pot_1.ptau" "$beacon1" 10 -n="cuzk fixture"
"$snarkjs" powersoftau prepare phase2 "$work/pot_1.ptau" "$work/pot_final.ptau"
"$snarkjs" groth16 setup "$circom_fix/small.r1cs" "$work/pot_final.ptau" "$work/small_0.zkey"
"$snarkjs" zkey beacon "$work/small_0.zkey" "$work/small.zkey" "$beacon2" 10 -n="cuzk fixture"
"$snarkjs" zkey verify "$circom_fix/small.r1cs" "$work/pot_final.ptau" "$work/small.zkey"
"$snarkjs" zkey export verificationkey "$work/small.zkey" "$work/verification_key.json"
"$snarkjs" groth16 prove "$work/small.zkey" "$circom_fix/small.wtns" "$work/proof.json" "$work/public.json"
"$snarkjs" groth16 verify "$work/verification_key.json" "$work/public.json" "$work/proof.json"
cp "$work/small.zkey" "$work/verification_key.json" "$work/proof.json" "$work/public.json" "$fix/"
echo "regenerated $fix: small.zkey verification_key.json proof.json public.json"
