#!/bin/bash
# dmlc's Vulkan runtime on a lent GPU machine (the `device` tool), from the
# bundle scripts/gpu_bundle.sh packs: `dmlc devices`, an example, the
# conformance sweep (plain and split), the Vulkan unit tests and the device
# conformance suite (plain, split and windowed), all at once and each with
# the Khronos validation layer, then bench_vulkan alone. Logs go to $OUT:
# log.txt (each step's tail), devices.txt, bench_vulkan.txt and tests.txt
# (every test's whole output). The tests stop at 300 s each; bench_vulkan
# runs only if it can end (150 s) within LIMIT (seconds, default 420).
#   run: bash scripts/gpu_check.sh     carry: [".dev", ".gl"]     timeout_s: 460
# LOCAL=1 runs it here (not unpacking .gl over /); BENCH=--quick shortens
# bench_vulkan.
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/gpu_check}
LIMIT=${LIMIT:-420}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
t0=$(date +%s)
stamp() { echo "== $(($(date +%s) - t0)) s: $*"; }
stamp start
if [ -z "${LOCAL:-}" ]; then
  for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
# the tests' DMLC_SOURCE_DIR, where the build here had its tree
[ -e /work/main ] || { mkdir -p /work && ln -s "$R" /work/main; }
D=/tmp/dmlc_gpu
rm -rf $D && mkdir -p $D && tar -xJf "$R/.dev/bundle.tar.xz" -C $D || exit 1
for f in "$D"/sys/*; do
  n=$(basename "$f")
  if ldconfig -p | grep -q "^[[:space:]]*$n "; then rm "$f"; else echo "carried: $n"; fi
done
export LD_LIBRARY_PATH=$D/lib:$D/sys
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
  ! ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export VK_LAYER_PATH=$D/layer
B=$D/bin
nvidia-smi 2>/dev/null
echo "cores: $(nproc)"
stamp "dmlc devices"
$B/dmlc devices | tee "$OUT/devices.txt"
VAL="VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation"
SYNC="VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
# Each test runs in the background (the machine has cores to spare: the
# reference evaluator and the validation layer are CPU work), with its own
# time limit; bench_vulkan runs alone once they are done.
TESTS=/tmp/dmlc_gpu_tests
mkdir -p "$TESTS"
test_bg() { # name timeout env... command
  local name=$1 t=$2
  shift 2
  (
    s=$(date +%s)
    timeout "$t" env "$@" >"$TESTS/$name.log" 2>&1
    echo "$? $(($(date +%s) - s))" >"$TESTS/$name.rc"
  ) &
  PIDS+=($!)
}
PIDS=()
cd "$R" || exit 1
# test_device opens Vulkan once in its own process before it forks its
# cases (for lavapipe's sake); on a GPU's driver the cases open it alone.
export DMLC_TEST_PIN_VULKAN=0
stamp "tests, in parallel"
test_bg example 60 $B/dmlc run examples/hardmax.dmlir --device=vulkan
test_bg conformance 300 DMLC_TEST_DEVICE=vulkan $VAL CK_DEFAULT_TIMEOUT=600 $B/test_conformance
test_bg conformance_split 300 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_FORCE_SPLIT=1 $VAL \
  CK_DEFAULT_TIMEOUT=600 $B/test_conformance
test_bg test_device 300 DMLC_TEST_DEVICE=vulkan CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
test_bg test_vulkan 300 CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_vulkan
test_bg device_split 300 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_FORCE_SPLIT=1 \
  DMLC_VULKAN_PORTABLE=1 CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
test_bg device_windows 300 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_STORAGE_RANGE=1024 \
  CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
wait "${PIDS[@]}" # not a bare wait: that also waits for the log's tee
for name in example conformance conformance_split test_device test_vulkan device_split \
  device_windows; do
  read -r rc secs <"$TESTS/$name.rc"
  { echo "==== $name: rc $rc in $secs s"; cat "$TESTS/$name.log"; } >>"$OUT/tests.txt"
  echo "== $name: rc $rc in $secs s"
  tail -n 4 "$TESTS/$name.log"
done
rm -rf "$TESTS"
if [ $(($(date +%s) - t0 + 150)) -le "$LIMIT" ]; then
  stamp bench_vulkan
  # shellcheck disable=SC2086 # BENCH: none, or options, split
  timeout 150 $B/bench_vulkan ${BENCH:-} >"$OUT/bench_vulkan.txt" 2>&1
  echo "== bench_vulkan: rc $?"
else
  stamp "bench_vulkan: skipped (time)"
fi
stamp end
