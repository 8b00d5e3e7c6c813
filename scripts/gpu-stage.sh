#!/usr/bin/env bash
# The proving stage's measurements on the GPU machine (docs/cuda-backend.md), in steps
# that each fit one device call:
#
#   scripts/gpu-stage.sh OUT_DIR build        configure and build the presets all (every flag,
#                                             CUZK_GPU_G2 and CUZK_GPU_OVERLAP among them) and
#                                             baseline (none): test_gpu, bench_gpu, cuzk-bench
#   scripts/gpu-stage.sh OUT_DIR tests        ctest -L gpu in both builds
#   scripts/gpu-stage.sh OUT_DIR bench REGEX  bench_gpu of build/all, --benchmark_filter=REGEX,
#                                             JSON into OUT_DIR/bench.json
#   scripts/gpu-stage.sh OUT_DIR nsys         the stage suite's gpu-2e24 case (build/all) under
#                                             Nsight Systems (scripts/nsys-capture.sh)
#   scripts/gpu-stage.sh OUT_DIR ntt PRESET   the NTT and H tests of build/PRESET and its NTT
#                                             benchmarks (orders and pass plans), JSON into
#                                             OUT_DIR/ntt-PRESET.json
#   scripts/gpu-stage.sh OUT_DIR trace REGEX NAME
#                                             bench_gpu of build/all, --benchmark_filter=REGEX,
#                                             under Nsight Systems (CUDA and NVTX): OUT_DIR/NAME
#                                             .nsys-rep, .sqlite, and .stats.txt (the NVTX
#                                             ranges and kernels, summed)
#
# Logs land in OUT_DIR. Needs the Debian packages of docs/gpu-machine.md in .device/. Exit
# status: that of the failed step.
set -uo pipefail
out=${1:?usage: scripts/gpu-stage.sh OUT_DIR build|tests|bench REGEX|nsys|ntt PRESET|trace REGEX NAME}
step=${2:-}
mkdir -p "$out"
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX

case $step in
  build)
    # The G2 kernels (build/all's msm.cu) take one core for most of the build; baseline builds
    # beside them.
    pids=()
    for p in all baseline; do
      (cmake --preset "$p" && cmake --build "build/$p" -j8 --target test_gpu bench_gpu cuzk-bench) >"$out/build-$p.log" 2>&1 &
      pids+=($!)
    done
    rc=0
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    grep -n 'warning:' "$out"/build-*.log | head -20
    [[ $rc == 0 ]] || { tail -30 "$out"/build-*.log; exit 1; } ;;
  tests)
    rc=0
    for p in all baseline; do
      (cd "build/$p" && ctest -L gpu --output-on-failure) >"$out/tests-$p.txt" 2>&1 || { rc=1; tail -40 "$out/tests-$p.txt"; }
      grep -h "test cases\|Passed\|Failed" "$out/tests-$p.txt" | tail -3
    done
    exit $rc ;;
  bench)
    filter=${3:?bench: the --benchmark_filter regex}
    build/all/suites/bench_gpu --benchmark_filter="$filter" --benchmark_out="$out/bench.json" \
      --benchmark_out_format=json >"$out/bench.txt" 2>"$out/bench.err" || { tail -20 "$out/bench.err"; exit 1; } ;;
  nsys)
    CUZK_PRESET=all scripts/nsys-capture.sh --suite stage --case gpu-2e24 --backend cuda --out "$out/nsys" \
      >"$out/nsys.txt" 2>&1 || { tail -30 "$out/nsys.txt"; exit 1; } ;;
  ntt)
    preset=${3:?ntt: the preset whose build to use}
    build/$preset/tests/test_gpu "GPU NTT*,GPU H*" >"$out/ntt-tests-$preset.txt" 2>&1 \
      || { tail -40 "$out/ntt-tests-$preset.txt"; exit 1; }
    tail -2 "$out/ntt-tests-$preset.txt"
    build/$preset/suites/bench_gpu --benchmark_filter='BM_gpu_ntt' --benchmark_out="$out/ntt-$preset.json" \
      --benchmark_out_format=json >"$out/ntt-$preset.txt" 2>"$out/ntt-$preset.err" \
      || { tail -20 "$out/ntt-$preset.err"; exit 1; }
    grep '^BM_' "$out/ntt-$preset.txt" | awk '{print $1, $2}' ;;
  trace)
    filter=${3:?trace: the --benchmark_filter regex}
    name=${4:?trace: a name for its files}
    nsys=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)  # docs/gpu-machine.md
    [[ -x $nsys ]] || { echo "trace: no nsys under /opt/nvidia/nsight-compute"; exit 2; }
    "$nsys" profile --trace=cuda,nvtx --force-overwrite=true -o "$out/$name" \
      build/all/suites/bench_gpu --benchmark_filter="$filter" >"$out/$name.txt" 2>&1 || { tail -20 "$out/$name.txt"; exit 1; }
    # Google Benchmark exits 0 when the filter matches nothing; an empty trace is a failed step.
    grep -q '^BM_' "$out/$name.txt" || { echo "trace: no benchmark matches '$filter'"; tail -5 "$out/$name.txt"; exit 1; }
    "$nsys" export --type sqlite --force-overwrite=true -o "$out/$name.sqlite" "$out/$name.nsys-rep" >/dev/null &&
      "$nsys" stats --report nvtx_sum --report cuda_gpu_kern_sum "$out/$name.sqlite" >"$out/$name.stats.txt" 2>&1 ||
      { tail -20 "$out/$name.stats.txt"; exit 1; }
    grep '^BM_' "$out/$name.txt" | cut -c1-160 ;;
  *) echo "unknown step '$step'"; exit 2 ;;
esac
echo "== done $(date -u +%T)"
