#!/usr/bin/env bash
# The outputs a refactoring must not change, written to OUT_DIR: every seed's --compare JSON and
# --out directory, the sample's replay transitions and report (default policy and one with
# model and instance overrides), dialect replays through export --validate, a sweep CSV (grid
# and random), calibrate's policy, every export dialect's text, import-config round trips.
# Compare two trees with `diff -r`. Usage: tools/golden/run.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cli="$bin/spillway-cli"
cd "$out"  # the outputs name files relative to it, so two trees compare equal
export HOME="$out/.home" XDG_DATA_HOME="$out/.home/data"
mkdir -p "$XDG_DATA_HOME"
trace="$root/resources/traces/seed000-sample.jsonl"
faults="$root/resources/traces/seed000-sample.faults.jsonl"
overrides="$here/overrides.yaml"

for n in 0 1 2 3; do
  s=seed-00$n
  "$cli" simulate "$s" --compare --json >"$out/simulate-$s-compare.json"
  "$cli" simulate "$s" --out "simulate-$s" >"$out/simulate-$s.txt"
done
"$cli" simulate seed-001 --modes off,limits,breaker+degrade,all >"$out/simulate-seed-001-modes.txt"

for p in default overrides; do
  pol=$([ $p = default ] && echo "$root/resources/policies/default.yaml" || echo "$overrides")
  "$cli" replay --trace "$trace" --faults "$faults" --policy "$pol" \
    --out "replay-$p-transitions.jsonl" --report "replay-$p-report.json" \
    >"$out/replay-$p.txt"
done

for t in resilience4j envoy istio sentinel haproxy nginx litellm; do
  for p in default overrides; do
    pol=$([ $p = default ] && echo "$root/resources/policies/default.yaml" || echo "$overrides")
    "$cli" export --target "$t" --policy "$pol" --validate sample --json \
      >"$out/export-$t-$p.json" || true
    "$cli" export --target "$t" --policy "$pol" --out "export-$t-$p.conf" \
      >"$out/export-$t-$p.txt" || true
  done
done
for t in resilience4j envoy sentinel; do
  for p in default overrides; do
    "$cli" import-config --from "$t" "export-$t-$p.conf" >"$out/import-$t-$p.yaml" 2>&1 || true
  done
done

"$cli" sweep --trace "$trace" --param trip.slow_rate=0.2:0.6:0.2 --param trip.sustain=2s,5s \
  --threads 2 --csv sweep-grid.csv >"$out/sweep-grid.txt"
"$cli" sweep --trace "$trace" --param trip.error_rate=0.1:0.6:0.1 --param open.duration=5s:60s:5s \
  --random 8 --seed 7 --threads 2 --csv sweep-random.csv >"$out/sweep-random.txt"
"$cli" calibrate --trace "$trace" --param trip.slow_rate=0.2:0.6:0.1 --target 'fp<=0.05,ttd<=30s' \
  --threads 2 --out calibrate.yaml >"$out/calibrate.txt" || true
"$cli" knee seed-000 >"$out/knee-seed-000.txt" || true
"$cli" drill "$root/resources/drills/tenant-burst.yaml" >"$out/drill-tenant-burst.txt" || true
rm -rf "$out/.home"
echo "golden outputs in $out: $(find "$out" -type f | wc -l) files"
