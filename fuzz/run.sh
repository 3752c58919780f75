#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (their own CMake project, fuzz/CMakeLists.txt) and
# runs each for SECONDS (default 20) over its seed corpus. New inputs go to the build tree;
# fuzz/corpus/ is only read. Exits non-zero on the first crash, leak or timeout, with the
# reproducer in BUILD/artifacts/. Usage: fuzz/run.sh [SECONDS] [NAME...]. A long run (≥ 10 M
# executions of one harness): fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(otlp_protobuf otlp_json jsonl prometheus nginx envoy haproxy csv policy_yaml scenario_yaml
  http_request)
build=${FUZZ_BUILD_DIR:-build-fuzz}
cxx=${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j "$(nproc)"
mkdir -p "$build/artifacts"
for name in "${names[@]}"; do
  mkdir -p "$build/corpus/$name"
  log="$build/fuzz_$name.log"
  echo "fuzz_$name: ${secs}s"
  if ! "$build/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len=262144 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
      "$build/corpus/$name" "fuzz/corpus/$name" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz_$name FAILED (log: $log)" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|^#[0-9]+.*DONE" "$log" | sed 's/^/  /'
done
