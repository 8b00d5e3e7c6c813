#!/usr/bin/env bash
# A streamed sector on the GPU machine (docs/engine.md, "Sector streaming"), in steps that each
# fit one device call; a real-size sector runs longer than one call, so it runs in the
# background and `wait` follows it:
#
#   scripts/gpu-sector.sh OUT_DIR build PRESET        configure and build PRESET: cuzk-bench, test_gpu
#   scripts/gpu-sector.sh OUT_DIR start PRESET SHAPE [ARGS...]
#                                                     prove --sector SHAPE --backend cuda with
#                                                     build/PRESET in the background (ARGS passed on,
#                                                     e.g. --gpus 2 or --gpu-activity); the GPU's and
#                                                     the host's memory every 5 s beside it
#   scripts/gpu-sector.sh OUT_DIR wait SECONDS        wait at most SECONDS for the sector to end,
#                                                     then print its progress and, once ended, its
#                                                     closing line and exit status
#
# Parameters are generated on the GPU the first time (cached in results/local/params/, or kept
# in memory where the file would not fit the disk: 32g's 75 GiB). Files in OUT_DIR:
# sector-SHAPE.{txt,err,jsonl}, monitor.txt, build-PRESET.log. Needs the Debian packages of
# docs/gpu-machine.md in .device/. Exit status: that of the failed step; `wait` exits 3 while the
# sector still runs. CUZK_BACKEND=cpu tries the steps on a machine without a GPU.
set -uo pipefail
backend=${CUZK_BACKEND:-cuda}
out=${1:?usage: scripts/gpu-sector.sh OUT_DIR build PRESET|start PRESET SHAPE [ARGS...]|wait SECONDS}
step=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX

case $step in
  build)
    preset=${3:?build: the preset}
    (cmake --preset "$preset" && cmake --build "build/$preset" -j"$(nproc)" --target cuzk-bench test_gpu) \
      >"$out/build-$preset.log" 2>&1 || { tail -30 "$out/build-$preset.log"; exit 1; }
    echo "build/$preset: $(grep -c 'warning:' "$out/build-$preset.log") compiler warning(s)" ;;
  start)
    preset=${3:?start: the preset}
    shape=${4:?start: the sector shape (cuzk-bench prove --help lists them)}
    shift 4
    bench=build/$preset/harness/cuzk-bench
    [[ -x $bench ]] || { echo "gpu-sector.sh: $bench is not built (step build $preset first)" >&2; exit 2; }
    "$bench" prove --sector "$shape" --backend "$backend" --plan "$@" >"$out/plan-$shape.txt" 2>&1 ||
      { cat "$out/plan-$shape.txt"; exit 1; }
    echo "$shape" >"$out/current"
    rm -f "$out/status"
    setsid nohup bash -c '
      out=$1; shift
      ( while true; do
          echo "$(date +%H:%M:%S) gpu $(nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader | tr "\n" " ")host used $(free -g | awk "/Mem:/{print \$3}") GiB"
          sleep 5
        done ) >>"$out/monitor.txt" 2>&1 &
      mon=$!
      "$@"; echo $? >"$out/status"
      kill $mon' _ "$out" "$bench" prove --sector "$shape" --backend "$backend" --out "$out/sector-$shape.jsonl" "$@" \
      >"$out/sector-$shape.txt" 2>"$out/sector-$shape.err" </dev/null &
    echo "started: $bench prove --sector $shape --backend $backend $*; follow with: scripts/gpu-sector.sh $out wait 540" ;;
  wait)
    secs=${3:?wait: the most seconds to wait}
    shape=$(cat "$out/current" 2>/dev/null) || { echo "gpu-sector.sh: no sector started in $out" >&2; exit 2; }
    for ((i = 0; i < secs; i += 5)); do [[ -f $out/status ]] && break; sleep 5; done
    tail -15 "$out/sector-$shape.err"
    tail -2 "$out/monitor.txt"
    if [[ -f $out/status ]]; then
      grep -h '^proved\|^results' "$out/sector-$shape.txt"
      exit "$(cat "$out/status")"
    fi
    echo "still running"
    exit 3 ;;
  *)
    echo "gpu-sector.sh: unknown step '$step' (build, start or wait)" >&2
    exit 2 ;;
esac
