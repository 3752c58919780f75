#!/bin/bash
# Interleaved rounds of Google Benchmark binaries on a noisy host: every round runs each binary
# once, so a slow minute slows all of them alike. Prints, per benchmark and binary, the fastest
# and the median ns of the rounds.
#   bench/interleave.sh ROUNDS FILTER BINARY...
# e.g. bench/interleave.sh 16 'BM_Closed_AdmitRecord|RoundRobin' /tmp/bench_breaker-before \
#        build-release/bin/bench_breaker
set -euo pipefail
rounds=$1 filter=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
  for b in "$@"; do
    "$b" --benchmark_filter="$filter" --benchmark_min_time=0.1 2>/dev/null |
      awk -v b="$b" '/^BM_/ {print $1, b, $2}' >>"$out"
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
rounds = collections.defaultdict(list)
for line in open(sys.argv[1]):
    bm, binary, ns = line.split()
    rounds[(bm, binary)].append(float(ns))
for (bm, binary), v in sorted(rounds.items(), key=lambda kv: kv[0][0]):  # stable: binaries in order
    print(f"{bm:48s} {binary:40s} fastest {min(v):6.1f}  median {statistics.median(v):6.1f}  ({len(v)} rounds)")
PY
