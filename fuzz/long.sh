#!/usr/bin/env bash
# The long runs: each harness until RUNS executions (default 10 M) or SECONDS (default 3600),
# one process at a time, over the corpus earlier runs grew. Inputs up to MAX_LEN bytes (default
# 4096: small inputs keep executions fast; CI's 20 s runs replay the seed corpora at full size).
# The per-input timeout (TIMEOUT, default 120 s) is wall-clock: a long run shares the cores with
# builds at nice 19, and a starved input is not a hang (both seen at -timeout=10 re-ran in 0.2 s).
# Prints one line per harness: executions, seconds, crashes. Usage: fuzz/long.sh [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
# Under autogroup scheduling `nice` only orders the processes of one session: give the whole
# session the run's niceness, so `nice -n 19 fuzz/long.sh` really yields to builds.
nice 2>/dev/null >/proc/self/autogroup || true
runs=${RUNS:-10000000}
secs=${SECONDS_MAX:-3600}
max_len=${MAX_LEN:-4096}
build=${FUZZ_BUILD_DIR:-build-fuzz}
# ASan records a 30-frame stack on every allocation; yaml-cpp and the importers allocate per token,
# so that bookkeeping halves the rate. Reports keep the access's stack; detection is unchanged.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(otlp_protobuf http_request csv otlp_json prometheus jsonl envoy nginx
  policy_yaml scenario_yaml)
fuzz/run.sh 1 "${names[0]}" >/dev/null  # configures and builds every harness
for name in "${names[@]}"; do
  log="$build/long_$name.log"
  start=$(date +%s)
  rc=0
  "$build/fuzz_$name" -runs="$runs" -max_total_time="$secs" -timeout="${TIMEOUT:-120}" -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
    "$build/corpus/$name" "fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  crashes=$(find "$build/artifacts" -name "$name-*" | wc -l)
  echo "fuzz_$name: ${execs:-?} executions in $(($(date +%s) - start)) s, exit $rc, $crashes artifacts"
  [ "$rc" -eq 0 ] || { tail -n 40 "$log"; exit 1; }
done
