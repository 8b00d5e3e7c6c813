#!/usr/bin/env bash
# The noise study of docs/noise.md on the GPU machine, in steps that each fit one device call:
#
#   scripts/gpu-noise-study.sh OUT_DIR build      configure and build (carried .device packages)
#   scripts/gpu-noise-study.sh OUT_DIR check      GPU test cases of the GPU-time metric
#   scripts/gpu-noise-study.sh OUT_DIR noise      `noise` of the default GPU prove: plain, --stable, and the
#                                                 spare-core variant (CUZK_GPU_SPARE_CORE) without --stable
#   scripts/gpu-noise-study.sh OUT_DIR nsys       gpu_ns against Nsight Systems (scripts/nsys-gpu-time.py)
#   scripts/gpu-noise-study.sh OUT_DIR nsys_medium  the same check on e2e/gpu-medium (larger MSMs), --stable
#   scripts/gpu-noise-study.sh OUT_DIR nsys_kernel  gpu_kernel_ns of a --gpu-activity run against the kernels
#                                                 and memsets Nsight Systems saw in a capture without it
#   scripts/gpu-noise-study.sh OUT_DIR calibrate  the targets of docs/calibration.md (--stable, blocks)
#   scripts/gpu-noise-study.sh OUT_DIR calibrate_kernel  the same, the GPU phases judged by their kernel
#                                                 time without gaps (--gpu-activity, docs/counters.md)
#   scripts/gpu-noise-study.sh OUT_DIR stage_kernel  the 2^24 stage, --stable --gpu-activity, 10 repetitions
#                                                 in one process (the kernel time's spread within it)
#   scripts/gpu-noise-study.sh OUT_DIR ab         A/B of default against spare-core (gpu-medium, blocks)
#
# Steps may be chained: `... OUT_DIR build check noise`. Logs and results land in OUT_DIR; the
# build in build/default. Needs the Debian packages of docs/gpu-machine.md in .device/ (toml++,
# and libdw1/libelf1 for nsys). Exit status: that of the first failed step.
set -uo pipefail
out=${1:?usage: scripts/gpu-noise-study.sh OUT_DIR STEP...}
shift
mkdir -p "$out"
source scripts/device-deps.sh
bench=$PWD/build/default/harness/cuzk-bench
nsys=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
gpu_phases=proof,proof/prove/ntt_h,proof/prove/msm_h,proof/prove/msm_l,proof/prove/msm_a,proof/prove/msm_b_g1

step_build_default() {
  cmake --preset default -DCMAKE_PREFIX_PATH="$DEPS_PREFIX" >>"$out/build.log" 2>&1 &&
    cmake --build build/default -j16 --target cuzk-bench >>"$out/build.log" 2>&1
}
step_build() {
  local p
  for p in spare-core default; do
    cmake --preset $p -DCMAKE_PREFIX_PATH="$DEPS_PREFIX" >>"$out/build.log" 2>&1 || return 1
  done
  cmake --build build/default -j16 --target cuzk-bench test_gpu >>"$out/build.log" 2>&1 &&
    cmake --build build/spare-core -j16 --target cuzk-bench >>"$out/build.log" 2>&1
}
step_check() {
  build/default/tests/test_gpu "*known sleep kernel*" "*PoRep-shaped*" >"$out/check.log" 2>&1
}
step_noise() {
  local mode
  for mode in plain stable spare; do
    "$bench" noise --processes 10 --reps 10 --workload prove --workload-arg=--backend --workload-arg=cuda \
      $([[ $mode == stable ]] && echo --stable) $([[ $mode == spare ]] && echo --bench build/spare-core/harness/cuzk-bench) \
      --out-dir "$out/noise-$mode" >"$out/noise-$mode.txt" 2>&1 || return 1
  done
}
step_nsys() {
  [[ -n $nsys ]] || { echo "no nsys" >"$out/nsys.txt"; return 1; }
  local mode
  for mode in plain stable; do
    rm -f "$out/nsys-$mode".*
    "$nsys" profile --trace=cuda,nvtx -o "$out/nsys-$mode" "$bench" prove --backend cuda --reps 6 --warmup 2 \
      $([[ $mode == stable ]] && echo --stable) --out "$out/nsys-$mode.jsonl" >"$out/nsys-$mode.log" 2>&1 &&
      "$nsys" export --type sqlite -o "$out/nsys-$mode.sqlite" "$out/nsys-$mode.nsys-rep" >>"$out/nsys-$mode.log" 2>&1 &&
      python3 scripts/nsys-gpu-time.py --sqlite "$out/nsys-$mode.sqlite" --results "$out/nsys-$mode.jsonl" \
        >"$out/nsys-$mode.txt" 2>&1
    rm -f "$out/nsys-$mode.sqlite" "$out/nsys-$mode.nsys-rep" "$out/nsys-$mode".qdstrm
  done
}
step_nsys_medium() {
  [[ -n $nsys ]] || { echo "no nsys" >"$out/nsys_medium.txt"; return 1; }
  rm -f "$out/nsys-medium".*
  "$nsys" profile --trace=cuda,nvtx -o "$out/nsys-medium" "$bench" run --suite e2e --case gpu-medium --backend cuda \
    --reps 4 --warmup 1 --stable --out "$out/nsys-medium.jsonl" >"$out/nsys_medium.log" 2>&1 &&
    "$nsys" export --type sqlite -o "$out/nsys-medium.sqlite" "$out/nsys-medium.nsys-rep" >>"$out/nsys_medium.log" 2>&1 &&
    python3 scripts/nsys-gpu-time.py --sqlite "$out/nsys-medium.sqlite" --results "$out/nsys-medium.jsonl" \
      >"$out/nsys_medium.txt" 2>&1
  local rc=$?
  rm -f "$out/nsys-medium.sqlite" "$out/nsys-medium.nsys-rep" "$out/nsys-medium".qdstrm
  return $rc
}
step_nsys_kernel() {
  [[ -n $nsys ]] || { echo "no nsys" >"$out/nsys_kernel.txt"; return 1; }
  rm -f "$out/nsys-kernel".*
  "$bench" prove --backend cuda --stable --gpu-activity --reps 10 --out "$out/nsys-kernel-activity.jsonl" \
    >"$out/nsys_kernel.log" 2>&1 &&
    "$nsys" profile --trace=cuda,nvtx -o "$out/nsys-kernel" "$bench" prove --backend cuda --stable --reps 10 \
      --out "$out/nsys-kernel.jsonl" >>"$out/nsys_kernel.log" 2>&1 &&
    "$nsys" export --type sqlite -o "$out/nsys-kernel.sqlite" "$out/nsys-kernel.nsys-rep" >>"$out/nsys_kernel.log" 2>&1 &&
    python3 scripts/nsys-gpu-time.py --sqlite "$out/nsys-kernel.sqlite" --results "$out/nsys-kernel.jsonl" \
      --kernel-results "$out/nsys-kernel-activity.jsonl" >"$out/nsys_kernel.txt" 2>&1
  local rc=$?
  rm -f "$out/nsys-kernel.sqlite" "$out/nsys-kernel.nsys-rep" "$out/nsys-kernel".qdstrm
  return $rc
}
# calibrate NAME [WORKLOAD-ARG...]: the calibration into $out/NAME and $out/NAME.txt.
calibrate() {
  local name=$1 extra=() a
  shift
  for a in "$@"; do extra+=("--workload-arg=$a"); done
  "$bench" calibrate --workload prove --stable --reps 5 --runs 10 --trials 40 --pool-a 30 --pool-b 15 \
    --slowdowns 0.5,1,2 --noise-threshold "${THRESH:-0.5}" --target-effect 1 --phase "$gpu_phases" \
    --workload-arg=--backend --workload-arg=cuda "${extra[@]}" --out-dir "$out/$name" >"$out/$name.txt" 2>&1
}
step_calibrate() { calibrate calibrate; }
step_calibrate_kernel() { calibrate calibrate_kernel --gpu-activity; }
step_stage_kernel() {
  "$bench" run --suite stage --case gpu-2e24 --backend cuda --stable --gpu-activity --reps 10 \
    --out "$out/stage-kernel.jsonl" >"$out/stage_kernel.txt" 2>&1
}
step_ab() {
  "$bench" ab --a default --b spare-core --suite e2e --case gpu-medium --backend cuda --rounds 6 --reps 3 \
    --no-build --out-dir "$out/ab" >"$out/ab.txt" 2>&1
}
for s in "$@"; do
  echo "== $s $(date -u +%T)"
  "step_$s" || { echo "step $s failed (see $out)"; tail -20 "$out/$s"*.txt "$out/$s"*.log 2>/dev/null; exit 1; }
done
echo "== done $(date -u +%T)"
