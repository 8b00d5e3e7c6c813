#!/usr/bin/env bash
# Regenerates tests/fixtures/circom/small.r1cs and small.wtns from small.circom and input.json
# with circom2 (circom compiled to WASM, run by node) and snarkjs, both from npm, installed into
# build/npm (never committed). Needs node >= 18 and npm.
#   scripts/regen-circom-fixtures.sh            # install (if needed) and regenerate
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fix="$root/tests/fixtures/circom"
npmdir="$root/build/npm"
mkdir -p "$npmdir"
if [[ ! -x "$npmdir/node_modules/.bin/circom2" || ! -x "$npmdir/node_modules/.bin/snarkjs" ]]; then
  (cd "$npmdir" && { [[ -f package.json ]] || npm init -y >/dev/null; } && npm install --no-audit --no-fund circom2 snarkjs)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# --prime bls12381: the circuit's field is BLS12-381's scalar field Fr, the only one cuzk accepts.
"$npmdir/node_modules/.bin/circom2" "$fix/small.circom" --r1cs --wasm --prime bls12381 -o "$work"
"$npmdir/node_modules/.bin/snarkjs" wtns calculate "$work/small_js/small.wasm" "$fix/input.json" "$work/small.wtns"
"$npmdir/node_modules/.bin/snarkjs" wtns check "$work/small.r1cs" "$work/small.wtns"
cp "$work/small.r1cs" "$work/small.wtns" "$fix/"
echo "regenerated $fix/small.r1cs and $fix/small.wtns"
