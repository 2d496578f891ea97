#!/usr/bin/env bash
# bench_cpu of two builds of dmlc in one run: an older revision against the
# working tree, interleaved workload by workload and round by round (the
# order of the two sides alternating), so that the machine's drift falls on
# both alike. Prints, per workload, each side's median over the rounds of
# bench_cpu's median call time, and new / old.
#
#   bash bench/compare_builds.sh REV [ROUNDS] [bench_cpu options...]
#
# REV is any git revision (built Release in a temporary worktree); ROUNDS
# defaults to 7. DMLC_BENCH_BUILD picks the working tree's build directory
# (default: build-bench); DMLC_COMPARE_ONLY="ID ..." limits it to those
# workloads. Not a test: run it by hand on an idle machine.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 REV [ROUNDS] [bench_cpu options...]" >&2
  exit 2
fi
rev=$1
shift
rounds=7
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  rounds=$1
  shift
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DMLC_BENCH_BUILD:-$root/build-bench}
old=$(mktemp -d)
results=$(mktemp)
tsv=$(mktemp)
cleanup() {
  git -C "$root" worktree remove --force "$old/src" >/dev/null 2>&1 || true
  rm -rf "$old" "$results" "$tsv"
}
trap cleanup EXIT

git -C "$root" worktree add --detach "$old/src" "$rev" >/dev/null 2>&1
# The shared specs sit beside the checkout (../shared), as CI has them.
if [ -d "$root/../shared" ] && [ ! -e "$old/shared" ]; then
  ln -s "$root/../shared" "$old/shared"
fi
echo "building $rev ($(git -C "$root" rev-parse --short "$rev")) and the working tree (Release)" >&2
cmake -S "$old/src" -B "$old/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$old/build" -j"$(nproc)" --target bench_cpu >/dev/null
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_cpu >/dev/null

ids=$(sed -n 's/^ *{"\([a-z0-9_]*\)", WORK_.*/\1/p' "$root/bench/bench_common.c")
# DMLC_COMPARE_ONLY="ID ...": those workloads alone (ids as --only takes them)
if [ -n "${DMLC_COMPARE_ONLY:-}" ]; then
  ids=$DMLC_COMPARE_ONLY
fi
for ((r = 1; r <= rounds; r++)); do
  for id in $ids; do
    if ((r % 2)); then sides="old new"; else sides="new old"; fi
    for side in $sides; do
      bin=$build/bin/bench_cpu
      [ "$side" = old ] && bin=$old/build/bin/bench_cpu
      "$bin" --only "$id" --tsv "$tsv" "$@" >/dev/null 2>&1
      awk -v side="$side" -v id="$id" -F'\t' 'NR > 1 && $1 == id { print side "\t" id "\t" $2 "\t" $3 }' \
        "$tsv" >>"$results"
    done
  done
  echo "round $r of $rounds done" >&2
done

echo "bench_cpu, $rev (old) against the working tree (new): $rounds interleaved rounds, $(nproc) cores"
echo
echo "| workload | old | new | new / old |"
echo "|---|---:|---:|---:|"
for id in $ids; do
  name=$(awk -F'\t' -v id="$id" '$2 == id { print $3; exit }' "$results")
  [ -n "$name" ] || continue
  med() { awk -F'\t' -v s="$1" -v id="$id" '$1 == s && $2 == id { print $4 }' "$results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
  o=$(med old)
  n=$(med new)
  awk -v name="$name" -v o="$o" -v n="$n" \
    'function t(s) { return s < 1e-3 ? sprintf("%.1f us", s * 1e6) : sprintf("%.3f ms", s * 1e3) }
     BEGIN { printf "| %s | %s | %s | %.3f |\n", name, t(o), t(n), n / o }'
done
