#pragma once
// A sweep cut into shards for a batch engine (Slurm array tasks, Kubernetes Indexed Jobs;
// docs/scale-out.md): shard I of N evaluates the candidates whose index is I modulo N, in the
// one-machine order, and writes their raw scores with the sweep's identity; merge checks that
// the shards are one sweep, all there and none twice, and rebuilds the one-machine result.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/sweep.hpp"

namespace spillway::cli {

struct Shard {
  std::uint32_t index = 0, count = 1;
  bool holds(std::size_t candidate) const { return candidate % count == index; }
};

// "I/N" with 0 <= I < N <= 100000. Throws InputError naming `source`.
Shard parseShard(std::string_view text, const std::string& source);

// What makes two shards parts of one sweep: every input that can change a score or the
// candidate list, each as a SHA-256 (hex), and the Spillway version that computed them.
struct SweepIdentity {
  std::string version;
  std::string space;      // the base policy, the spec (mode, samples, seed, ranges)
  std::string bench;      // the incidents' calls and faults, or the scenario and its seeds
  std::string judgement;  // the replay seed and the SLO
  std::size_t candidates = 0;
  bool operator==(const SweepIdentity&) const = default;
};

std::string sha256Hex(std::string_view bytes);
std::string incidentsDigest(const std::vector<IncidentTrace>& incidents);

// A short name of one sweep (16 hex digits of its identity's SHA-256): the key its shards are
// kept under in a library.
std::string sweepKey(const SweepIdentity& id);

// Shard rows as JSON Lines: a header (identity, shard), one line per candidate of the shard
// (index, swept values, raw score), a trailer with the row count. Written to FILE.part and
// renamed, so a task killed half-way leaves no shard and a re-run replaces, never doubles.
void writeShardRows(const std::string& path, const SweepIdentity& id, Shard shard,
                    const std::vector<std::size_t>& indices, const SweepResult& rows);
// The same rows as text (what a library keeps).
std::string shardRowsText(const SweepIdentity& id, Shard shard,
                          const std::vector<std::size_t>& indices, const SweepResult& rows);

// The shards' candidates in one-machine order, their scores and the Pareto front over all of
// them. Throws InputError naming the file and what is wrong: another sweep (which input
// differs), a shard missing (by number) or given twice, a file cut short.
SweepResult mergeShardRows(const std::vector<std::string>& paths);
// The same over rows kept as text: (name in errors, rows) per shard.
SweepResult mergeShardTexts(const std::vector<std::pair<std::string, std::string>>& shards);

// A bash script that submits the sweep to Slurm as an array job of `shards` tasks (one
// `sweep --shard` each, `sweepArgs` passed through) and a merge job that runs once all of them
// succeeded, printing with `mergeArgs` (--top, --csv, --json); rows and logs in $SPILLWAY_ROWS
// (default ./spillway-sweep-rows). Arguments are shell-quoted.
std::string slurmScript(std::uint32_t shards, const std::vector<std::string>& sweepArgs,
                        const std::vector<std::string>& mergeArgs);

}  // namespace spillway::cli
