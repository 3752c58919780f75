#include "sweep_render.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"

namespace spillway::cli {
namespace {

void printTable(const SweepResult& r, std::size_t top) {
  // Front first, then by TTD and FP rate: the candidates worth a look on top.
  std::vector<std::size_t> order(r.candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (r.pareto[a] != r.pareto[b]) return static_cast<bool>(r.pareto[a]);
    const double ta = r.scores[a].meanTtdSeconds().value_or(0);
    const double tb = r.scores[b].meanTtdSeconds().value_or(0);
    if (ta != tb) return ta < tb;
    return r.scores[a].fpRate() < r.scores[b].fpRate();
  });
  std::size_t front = 0;
  for (bool f : r.pareto) front += f;
  std::printf("%zu candidates, %zu on the Pareto front (误伤, TTD, availability, missed)\n\n",
              r.candidates.size(), front);
  std::printf("%-5s %-6s", "#", "front");
  if (!r.candidates.empty())
    for (const auto& [k, v] : r.candidates.front().values) std::printf(" %16s", k.c_str());
  // Simulated candidates (--scenario) also show the seeds' system figures.
  const bool sim = !r.scores.empty() && r.scores.front().simulated;
  std::printf(" %8s %8s %8s %9s %9s %8s %7s%s\n", "误伤", "f.trip/h", "collat", "TTD", "MTTR",
              "avail", "missed", sim ? "  mis-kill    waste  cost/1k" : "");
  for (std::size_t n = 0; n < order.size() && n < top; ++n) {
    const std::size_t i = order[n];
    const SweepScore& s = r.scores[i];
    std::printf("%-5zu %-6s", i, r.pareto[i] ? "*" : "");
    for (const auto& [k, v] : r.candidates[i].values) std::printf(" %16.4g", v);
    std::printf(" %8s %8s %8s %9s %9s %8s %7u", num(pct(s.fpRateOrNa()), 2, "%").c_str(),
                num(s.falseTripsPerHour(), 2, "").c_str(),
                num(pct(s.blocks.collateralShare()), 1, "%").c_str(),
                num(s.meanTtdSeconds(), 1, "s").c_str(), num(s.meanMttrSeconds(), 1, "s").c_str(),
                num(s.availability() * 100, 2, "%").c_str(), s.faults - s.detected);
    if (sim)
      std::printf(" %9s %8s %8s", num(pct(s.misKillRate()), 1, "%").c_str(),
                  num(pct(s.wasteShare()), 1, "%").c_str(), num(s.costPer1k(), 2, "").c_str());
    std::printf("\n");
  }
  if (order.size() > top) std::printf("… %zu more (--top N, --csv FILE)\n", order.size() - top);
}

void writeCsv(const SweepResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path, 0, "", "cannot write");
  out << "candidate,pareto";
  if (!r.candidates.empty())
    for (const auto& [k, v] : r.candidates.front().values) out << ',' << k;
  const bool sim = !r.scores.empty() && r.scores.front().simulated;
  out << ",fp_rate,false_trips_per_h,collateral_share,ttd_mean_s,mttr_mean_s,availability,faults,"
         "missed,rejected";
  out << (sim ? ",limiter_mis_kill_rate,resource_waste,cost_per_1k_requests\n" : "\n");
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const SweepScore& s = r.scores[i];
    out << i << ',' << (r.pareto[i] ? 1 : 0);
    for (const auto& [k, v] : r.candidates[i].values) out << ',' << v;
    // A rate over nothing is an empty cell (n/a), as the table prints it, never 0.
    auto cell = [&](const std::optional<double>& v) {
      out << ',';
      if (v) out << *v;
    };
    cell(s.fpRateOrNa());
    cell(s.falseTripsPerHour());
    cell(s.blocks.collateralShare());
    out << ',';
    if (s.meanTtdSeconds()) out << *s.meanTtdSeconds();
    out << ',';
    if (s.meanMttrSeconds()) out << *s.meanMttrSeconds();
    out << ',' << s.availability() << ',' << s.faults << ',' << s.faults - s.detected << ','
        << s.rejected;
    if (sim) {
      out << ',';
      if (s.misKillRate()) out << *s.misKillRate();
      out << ',';
      if (s.wasteShare()) out << *s.wasteShare();
      out << ',';
      if (s.costPer1k()) out << *s.costPer1k();
    }
    out << '\n';
  }
  // A full disk shows only when the buffer is written out: a CSV cut short is not a success.
  out.close();
  if (!out) throw InputError(path, 0, "", "cannot write (the disk is full?)");
}

nlohmann::json sweepJson(const SweepResult& r) {
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    nlohmann::json c = scoreJson(r.scores[i]);
    for (const auto& [k, v] : r.candidates[i].values) c["params"][k] = v;
    c["pareto"] = static_cast<bool>(r.pareto[i]);
    j.push_back(c);
  }
  return j;
}

}  // namespace

std::optional<double> pct(std::optional<double> share) {
  if (!share) return std::nullopt;
  return *share * 100;
}

std::string num(std::optional<double> v, int decimals, const char* unit) {
  if (!v) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, *v, unit);
  return buf;
}

nlohmann::json scoreJson(const SweepScore& s) {
  nlohmann::json j;
  j["fp_rate"] = s.fpRateOrNa() ? nlohmann::json(*s.fpRateOrNa()) : nlohmann::json(nullptr);
  putBlockFigures(j, s.blocks, s.falseTripsPerHour());
  j["ttd_mean_s"] = s.meanTtdSeconds() ? nlohmann::json(*s.meanTtdSeconds()) : nlohmann::json();
  j["mttr_mean_s"] = s.meanMttrSeconds() ? nlohmann::json(*s.meanMttrSeconds()) : nlohmann::json();
  j["availability"] = s.availability();
  j["faults"] = s.faults;
  j["missed"] = s.faults - s.detected;
  j["rejected"] = s.rejected;
  j["blocked_would_succeed"] = s.blockedWouldSucceed;
  j["records"] = s.records;
  if (s.simulated) {
    auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    j["limiter_mis_kill_rate"] = opt(s.misKillRate());
    j["resource_waste"] = opt(s.wasteShare());
    j["cost_per_1k_requests"] = opt(s.costPer1k());
  }
  return j;
}

void printSweep(const SweepResult& r, const SweepOutput& o) {
  if (o.csv) writeCsv(r, *o.csv);
  if (o.json)
    std::printf("%s\n", sweepJson(r).dump(2).c_str());
  else
    printTable(r, o.top);
}

}  // namespace spillway::cli
