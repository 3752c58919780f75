#!/usr/bin/env bash
# Byte-for-byte: builds spillway-cli at REV (default HEAD) in a scratch worktree, runs
# tools/golden/run.sh with its binary and with BIN_DIR's (default build/bin), and diffs the two
# trees. Exit 0 when every output is identical. Usage: tools/golden/compare.sh [REV] [BIN_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-HEAD}
bin=${2:-build/bin}
scratch=$(mktemp -d)
trap 'git worktree remove --force "$scratch/src" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git worktree add --detach "$scratch/src" "$rev" >/dev/null
cmake -S "$scratch/src" -B "$scratch/build" -G Ninja -DSPILLWAY_BUILD_TESTS=OFF \
  -DSPILLWAY_BUILD_BENCH=OFF >/dev/null
cmake --build "$scratch/build" --target spillway-cli >/dev/null
tools/golden/run.sh "$scratch/build/bin" "$scratch/before"
tools/golden/run.sh "$bin" "$scratch/after"
if diff -r "$scratch/before" "$scratch/after"; then
  echo "identical: $(find "$scratch/after" -type f | wc -l) outputs of $rev and $bin"
else
  echo "outputs of $rev and $bin differ (above)" >&2
  exit 1
fi
