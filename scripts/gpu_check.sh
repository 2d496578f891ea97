#!/bin/bash
# dmlc's Vulkan runtime on a lent GPU machine (the `device` tool), from the
# bundle scripts/gpu_bundle.sh packs: `dmlc devices`, an example, the
# conformance sweep (plain and split), the Vulkan unit tests, the device
# conformance suite (plain, then split and windowed while time is left;
# each with the Khronos validation layer) and bench_vulkan. Logs go to
# $OUT: log.txt (each step's tail), devices.txt, bench_vulkan.txt and
# tests.txt (every test's whole output). LIMIT (seconds, default 420)
# bounds the whole: a step that could not end within it is skipped.
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
for f in $D/sys/*; do
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
step() { # name file timeout env... command
  local name=$1 file=$2 t=$3
  shift 3
  if [ $(($(date +%s) - t0 + t)) -gt "$LIMIT" ]; then
    stamp "$name: skipped (time)"
    return
  fi
  stamp "$name"
  local s tmp rc
  s=$(date +%s)
  tmp=$(mktemp)
  timeout "$t" env "$@" >"$tmp" 2>&1
  rc=$?
  { echo "==== $name: rc $rc"; cat "$tmp"; } >>"$OUT/$file"
  tail -n 6 "$tmp"
  rm -f "$tmp"
  echo "== $name: rc $rc in $(($(date +%s) - s)) s"
}
cd "$R" || exit 1
step example tests.txt 60 $B/dmlc run examples/hardmax.dmlir --device=vulkan
step conformance tests.txt 150 DMLC_TEST_DEVICE=vulkan $VAL CK_DEFAULT_TIMEOUT=600 $B/test_conformance
step bench_vulkan bench_vulkan.txt 150 $B/bench_vulkan ${BENCH:-}
step test_device tests.txt 120 DMLC_TEST_DEVICE=vulkan CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
step test_vulkan tests.txt 100 CK_DEFAULT_TIMEOUT=120 $VAL $SYNC $B/test_vulkan
step conformance_split tests.txt 170 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_FORCE_SPLIT=1 $VAL \
  CK_DEFAULT_TIMEOUT=600 $B/test_conformance
step device_split tests.txt 150 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_FORCE_SPLIT=1 \
  DMLC_VULKAN_PORTABLE=1 CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
step device_windows tests.txt 150 DMLC_TEST_DEVICE=vulkan DMLC_VULKAN_STORAGE_RANGE=1024 \
  CK_DEFAULT_TIMEOUT=300 $VAL $SYNC $B/test_device
stamp end
