#include "spillway/replay_truth.hpp"

#include <algorithm>

#include "spillway/input_error.hpp"
#include "spillway/policy.hpp"

namespace spillway {

bool ReplayGroundTruth::wouldSucceed(int status, Outcome outcome, Micros latency,
                                     Micros slo) const {
  static const ClassifyConfig reference;
  return spillway::classify(reference, status, outcome) != Verdict::Failure && latency <= slo;
}

Micros ReplayTruthOptions::sloFor(std::string_view tenant) const {
  for (const auto& [name, slo] : tenantSlo)
    if (name == tenant) return slo;
  return slo;
}

void parseSloSpec(std::string_view text, const std::string& source, ReplayTruthOptions& out) {
  ReplayTruthOptions o = out;
  o.tenantSlo.clear();
  bool any = false, defaultGiven = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view part = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    const std::string_view name = eq == std::string_view::npos ? "" : part.substr(0, eq);
    const auto d = parseDuration(eq == std::string_view::npos ? part : part.substr(eq + 1));
    if (!d || *d <= 0 || (eq != std::string_view::npos && name.empty()))
      throw InputError(source, 0, std::string(part),
                       "expected a duration > 0 (5s) or TENANT=DURATION (code-assist=3s)");
    // Named twice, one of the two SLOs would be used unseen (the first by a tenant's lookup).
    const bool twice = name.empty() ? defaultGiven
                                    : std::any_of(o.tenantSlo.begin(), o.tenantSlo.end(),
                                                  [&](const auto& t) { return t.first == name; });
    if (twice)
      throw InputError(source, 0, std::string(part),
                       name.empty() ? "a second default SLO (give one)"
                                    : "tenant '" + std::string(name) + "' given twice");
    if (name.empty()) {
      o.slo = *d;
      defaultGiven = true;
    } else {
      o.tenantSlo.emplace_back(std::string(name), *d);
    }
    any = true;
  }
  if (!any) throw InputError(source, 0, "", "no SLO given");
  out = std::move(o);
}

void ReplayGroundTruth::closeRun(InstanceId id, PerInstance& p,
                                 std::vector<TruthFault>& out) const {
  const Run& r = p.run;
  if (r.start != kNever && r.calls >= options_.minCalls) {
    const Micros end = r.lastBad + kMicrosPerSecond;
    if (end - r.start >= options_.rules.minFault) out.push_back({id, r.start, end});
  }
  p.run = Run{};
}

// Folds the current slice into the run. A good slice (calls, not bad) ends the run once the
// last bad slice is a window (rules.minFault) behind: a fault whose latency hovers around the
// SLO stays one fault instead of many fragments.
void ReplayGroundTruth::foldSlice(InstanceId id, PerInstance& p,
                                  std::vector<TruthFault>& out) const {
  if (p.calls == 0) return;
  const bool bad = static_cast<double>(p.bad) >= options_.badShare * p.calls;
  if (bad) {
    if (p.run.start == kNever) p.run.start = p.slice;
    p.run.lastBad = p.slice;
    p.run.calls += p.calls;
  } else if (p.run.start != kNever && p.slice - p.run.lastBad >= options_.rules.minFault) {
    closeRun(id, p, out);
  }
  p.calls = p.bad = 0;
}

void ReplayGroundTruth::onCall(InstanceId id, Micros ts, bool succeeded) {
  if (id >= inst_.size()) inst_.resize(static_cast<std::size_t>(id) + 1);
  PerInstance& p = inst_[id];
  const Micros slice = ts - ts % kMicrosPerSecond;
  if (p.slice == kNever) p.slice = slice;
  if (slice > p.slice) {
    foldSlice(id, p, p.faults);
    p.slice = slice;
  }
  ++p.calls;
  p.bad += !succeeded;
}

void ReplayGroundTruth::onBlock(InstanceId id, Micros ts, bool wouldSucceed, std::uint32_t step) {
  blocks_.push_back({ts, id, wouldSucceed, step});
}

void ReplayGroundTruth::adoptOthers(const ReplayGroundTruth& from,
                                    const std::vector<std::uint8_t>& mine) {
  inst_ = from.inst_;
  std::vector<Block> merged;
  merged.reserve(blocks_.size() + from.blocks_.size());
  auto a = blocks_.begin();
  auto b = from.blocks_.begin();
  auto skip = [&] {
    while (a != blocks_.end() && !mine[a->id]) ++a;
    while (b != from.blocks_.end() && mine[b->id]) ++b;
  };
  for (skip(); a != blocks_.end() || b != from.blocks_.end(); skip()) {
    if (b == from.blocks_.end() || (a != blocks_.end() && a->step < b->step))
      merged.push_back(*a++);
    else
      merged.push_back(*b++);
  }
  blocks_ = std::move(merged);
}

std::vector<TruthFault> ReplayGroundTruth::recordedFaults() const {
  std::vector<TruthFault> out;
  for (InstanceId id = 0; id < inst_.size(); ++id) {
    PerInstance p = inst_[id];
    out.insert(out.end(), p.faults.begin(), p.faults.end());
    foldSlice(id, p, out);
    closeRun(id, p, out);
  }
  return out;
}

BlockClassifier ReplayGroundTruth::classify(const std::vector<TruthFault>& faults,
                                            const std::vector<Event>& events, Micros period,
                                            std::vector<PeriodTally>* byPeriod) const {
  BlockClassifier c(options_.rules);
  for (const TruthFault& f : faults) c.addFault(f.instance, f.start, f.end);
  std::vector<Block> blocks = blocks_;
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block& a, const Block& b) { return a.ts < b.ts; });
  // Episodes change at events; a block sees every event up to its own time.
  std::size_t e = 0;
  for (const Block& b : blocks) {
    for (; e < events.size() && events[e].ts <= b.ts; ++e) c.onEvent(events[e]);
    if (byPeriod && period > 0) {
      const Micros start = b.ts - b.ts % period;
      if (byPeriod->empty() || byPeriod->back().start != start) byPeriod->push_back({start, {}});
      BlockTally& t = byPeriod->back().blocks;
      const int k = static_cast<int>(c.classify(b.id, b.ts));
      ++t.blocks[k];
      t.wouldSucceed[k] += b.wouldSucceed;
    }
    c.noteBlock(b.id, b.ts, b.wouldSucceed);
  }
  for (; e < events.size(); ++e) c.onEvent(events[e]);
  return c;
}

}  // namespace spillway
