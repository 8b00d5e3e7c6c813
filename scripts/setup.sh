#!/usr/bin/env bash
# Installs every system dependency of cuzk from Debian's packages.
# Idempotent: when everything is present it prints nothing and exits 0.
set -euo pipefail

PKGS=(
  cmake ninja-build g++ git pkg-config
  lld  # the linker of every build where found: a quarter of GNU ld's time per binary
  libbenchmark-dev catch2 libfmt-dev libpapi-dev papi-tools
  nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libboost-dev libeigen3-dev
  python3 python3-matplotlib python3-scipy
  valgrind  # callgrind for --counters sim, and valgrind/callgrind.h for its client requests
  clang-14 libclang-rt-14-dev  # libFuzzer + sanitizers for the fuzz preset (scripts/fuzz.sh)
  libsqlite3-dev libpq-dev  # the results history's stores (docs/history.md)
  postgresql  # a server the history's tests start in a temporary folder, on a unix socket
  chromium  # headless, renders the history dashboard in its test
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc  # cuzkd, the proving daemon
)
# node/npm are used only by interoperability tests (snarkjs, circom2, @noble/curves);
# they are installed from Debian when the machine has no node of its own.
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# An install stopped half-way (a killed apt, a machine image taken mid-install) leaves
# packages unpacked but not configured, and apt refuses to do anything until they are.
if [ -n "$(dpkg --audit 2>/dev/null)" ]; then
  echo "setup.sh: finishing an interrupted package install (dpkg --configure -a)"
  $SUDO dpkg --configure -a >/dev/null
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done"
