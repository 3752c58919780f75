#pragma once
// How sweeps, calibrations and comparisons are shown: the table (Pareto front first), CSV and
// JSON of every candidate's scores. One renderer for `sweep` and `sweep merge`, so a merged
// sweep prints the one-machine bytes.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "spillway/sweep.hpp"
#include "sweep_shard.hpp"

namespace spillway::cli {

// How the result is reported. Only the options the mode registered are read: asking the
// parser about any other one warns on stderr.
struct SweepOutput {
  bool json = false;
  std::size_t top = 20;            // sweep: rows to print
  std::optional<std::string> csv;  // sweep: every candidate's scores
  std::optional<std::string> out;  // calibrate: the chosen policy
  std::optional<Shard> shard;      // sweep: this shard only, its rows to `rows`
  std::string rows;
};

std::optional<double> pct(std::optional<double> share);
// "n/a" without a value; else the value with `decimals` and `unit`.
std::string num(std::optional<double> v, int decimals, const char* unit);
nlohmann::json scoreJson(const SweepScore& s);
void printSweep(const SweepResult& r, const SweepOutput& o);

}  // namespace spillway::cli
