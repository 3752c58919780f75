#include "spillway/sim/modes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "spillway/parallel.hpp"
#include "spillway/sim/seeds.hpp"

namespace spillway::sim {
namespace {

struct ModeKpi {
  const char* name;
  const char* key;   // JSON
  const char* unit;  // "share", "s", "count", "cost"
  std::optional<double> (*get)(const RunReport&);
};

std::optional<double> secondsOf(const std::optional<Micros>& d) {
  if (!d) return std::nullopt;
  return static_cast<double>(*d) / 1e6;
}

const ModeKpi kKpis[] = {
    {"MTTR (service restoration)", "mttr_s", "s",
     [](const RunReport& r) { return secondsOf(r.meanServiceRestoration); }},
    {"SLA attainment (in-quota)", "sla_attainment_in_quota", "share",
     [](const RunReport& r) { return r.slaInQuota.value(); }},
    {"refused by tenant quota", "quota_refusals", "count",
     [](const RunReport& r) { return std::optional<double>(static_cast<double>(r.quotaRefused)); }},
    {"resource waste", "resource_waste", "share",
     [](const RunReport& r) { return r.waste.value(); }},
    {"cascade rate", "cascade_rate", "share", [](const RunReport& r) { return r.cascade.value(); }},
    {"recovery after the fault", "recovery_after_fault_s", "s",
     [](const RunReport& r) { return secondsOf(r.meanRecovery); }},
    {"availability (within SLO)", "availability", "share",
     [](const RunReport& r) { return r.availability.value(); }},
    {"core availability in faults", "core_availability_during_faults", "share",
     [](const RunReport& r) { return r.coreAvailabilityInFault.value(); }},
    {"limiter mis-kill rate", "limiter_mis_kill_rate", "share",
     [](const RunReport& r) { return r.limiterMisKill.value(); }},
    {"degrade switch rate", "degrade_switch_rate", "share",
     [](const RunReport& r) { return r.degradeSwitch.value(); }},
    {"cost per 1k requests", "cost_per_1k_requests", "cost",
     [](const RunReport& r) { return r.costPer1k; }},
    // The MTTR row is a mean over the faults the service came back from: those it never did are
    // counted here, or a mode that loses the service for good would read fast.
    {"service never back (faults)", "service_not_restored", "count",
     [](const RunReport& r) {
       return std::optional<double>(static_cast<double>(r.serviceNotRestored));
     }},
};

// Seed 001's published table (its chapter 1: MTTR, SLA attainment, resource waste by mode) and
// its 2.5 (cascade rate and recovery before → after): "before" is read as a gateway without
// the breaker (off, or limits only), "after" as all three layers.
std::optional<double> seedFigure(const std::string& scenario, const std::string& mode,
                                 const std::string& key) {
  if (scenario.rfind("seed-001", 0) != 0) return std::nullopt;
  const bool before = mode == "limits" || mode == "off";
  if (mode == "limits") {
    if (key == "mttr_s") return 4.2 * 60;
    if (key == "sla_attainment_in_quota") return 0.71;
    if (key == "resource_waste") return 0.18;
  } else if (mode == "breaker+degrade") {
    if (key == "mttr_s") return 1.3 * 60;
    if (key == "sla_attainment_in_quota") return 0.89;
    if (key == "resource_waste") return 0.09;
  } else if (mode == "all") {
    if (key == "mttr_s") return 0.4 * 60;
    if (key == "sla_attainment_in_quota") return 0.9997;
    if (key == "resource_waste") return 0.032;
  }
  if (key == "cascade_rate" && (before || mode == "all")) return before ? 0.236 : 0.031;
  if (key == "recovery_after_fault_s" && (before || mode == "all")) return before ? 42.0 : 5.8;
  return std::nullopt;
}

std::optional<SeedInterval> over(const std::vector<RunReport>& runs, const ModeKpi& k) {
  return intervalOver(runs, k.get, std::string_view(k.unit) == "share");
}

}  // namespace

std::vector<Mode> parseModes(std::string_view list) {
  std::vector<Mode> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view word = list.substr(pos, comma - pos);
    Mode m;
    if (word == "off") {
      m.options.protection = false;
    } else if (word != "all") {
      m.options.layers = Layers{false, false, false};
      std::size_t p = 0;
      while (p <= word.size()) {
        const std::size_t plus = std::min(word.find('+', p), word.size());
        const std::string_view layer = word.substr(p, plus - p);
        if (layer == "limits")
          m.options.layers.limits = true;
        else if (layer == "breaker")
          m.options.layers.breaker = true;
        else if (layer == "degrade")
          m.options.layers.degrade = true;
        else
          throw std::invalid_argument("unknown mode '" + std::string(word) +
                                      "': expected off, all, or limits, breaker, degrade joined "
                                      "by '+'");
        p = plus + 1;
      }
    }
    m.name = modeName(m.options);
    for (const Mode& seen : out)
      if (seen.name == m.name) throw std::invalid_argument("mode '" + m.name + "' listed twice");
    out.push_back(std::move(m));
    pos = comma + 1;
  }
  return out;
}

ModeRuns runModes(const Scenario& scenario, std::vector<Mode> modes, std::uint32_t seeds,
                  unsigned threads) {
  std::vector<Scenario> scs(seeds, scenario);
  for (std::uint32_t i = 0; i < seeds; ++i) scs[i].seed = scenario.seed + i;
  ModeRuns out;
  out.modes = std::move(modes);
  out.runs.assign(out.modes.size(), std::vector<RunReport>(seeds));
  forEachJob(out.modes.size() * seeds, threads, [&](std::size_t job) {
    const std::size_t m = job / seeds, s = job % seeds;
    out.runs[m][s] = simulate(scs[s], out.modes[m].options);
  });
  return out;
}

std::vector<ModesRow> modesRows(const ModeRuns& runs, const Scenario& sc) {
  std::vector<ModesRow> rows;
  for (const ModeKpi& k : kKpis) {
    ModesRow row;
    row.kpi = k.name;
    for (std::size_t m = 0; m < runs.modes.size(); ++m) {
      row.cells.push_back(formatInterval(over(runs.runs[m], k), k.unit));
      const auto f = seedFigure(sc.name, runs.modes[m].name, k.key);
      row.seedFigures.push_back(f ? formatKpi(*f, k.unit) : "");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string modesTable(const ModeRuns& runs, const Scenario& sc) {
  std::ostringstream os;
  const std::size_t n = runs.runs.empty() ? 0 : runs.runs[0].size();
  os << "Scenario " << sc.name << ", seeds " << sc.seed << " … " << sc.seed + n - 1 << " (" << n
     << "), by mode" << (n > 1 ? ": mean [95 % interval]" : "") << "\n\n";
  const int w = n > 1 ? 28 : 16;
  char buf[512];
  auto line = [&](const std::string& first, const std::vector<std::string>& cells) {
    std::snprintf(buf, sizeof buf, "  %-28s", first.c_str());
    std::string out = buf;
    for (const std::string& c : cells) {
      std::snprintf(buf, sizeof buf, " %-*s", w, c.c_str());
      out += buf;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << '\n';
  };
  std::vector<std::string> names;
  for (const Mode& m : runs.modes) names.push_back(m.name);
  line("KPI", names);
  bool anySeed = false;
  for (const ModesRow& r : modesRows(runs, sc)) {
    line(r.kpi, r.cells);
    const bool seeded = std::any_of(r.seedFigures.begin(), r.seedFigures.end(),
                                    [](const std::string& f) { return !f.empty(); });
    if (seeded) line("  seed figure", r.seedFigures);
    anySeed = anySeed || seeded;
  }
  os << "\n(MTTR: fault onset -> the callers' availability back; SLA attainment: within SLO over "
        "originals\n not refused by their own tenant quota; resource waste: slot time held by "
        "calls whose answer\n nobody took or came after the SLO; cascade rate: faults that spread "
        "(docs/kpis.md).";
  if (anySeed) os << "\n Seed figures: the seed document's published table for each mode.";
  os << ")\n";
  return os.str();
}

std::string modesJson(const ModeRuns& runs, const Scenario& sc, int indent) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["first_seed"] = sc.seed;
  j["seeds"] = runs.runs.empty() ? 0 : runs.runs[0].size();
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (std::size_t m = 0; m < runs.modes.size(); ++m) {
    nlohmann::ordered_json o;
    o["mode"] = runs.modes[m].name;
    for (const ModeKpi& k : kKpis) {
      const auto i = over(runs.runs[m], k);
      nlohmann::ordered_json v =
          i ? nlohmann::ordered_json{{"mean", i->mean}, {"lo", i->lo}, {"hi", i->hi}, {"n", i->n}}
            : nlohmann::ordered_json(nullptr);
      if (const auto f = seedFigure(sc.name, runs.modes[m].name, k.key)) {
        if (v.is_null()) v = nlohmann::ordered_json::object();
        v["seed_figure"] = *f;
      }
      o[k.key] = v;
    }
    modes.push_back(o);
  }
  j["modes"] = modes;
  return j.dump(indent);
}

}  // namespace spillway::sim
