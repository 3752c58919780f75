#include "spillway/view/live_timeline.hpp"

#include <algorithm>
#include <cmath>

#include "per_second.hpp"

namespace spillway::view {
namespace {

using detail::floorSecond;
using detail::kNaN;
using detail::kSecond;

// A copy's p99: the open second's latencies keep coming.
double p99Of(std::vector<float> v) {
  return detail::p99(v);
}

}  // namespace

LiveTimeline::LiveTimeline(const Engine& engine, LiveTimelineOptions opt)
    : engine_(engine), opt_(opt) {
  opt_.span = std::max(opt_.span, 2 * kSecond);
  opt_.lateness = std::clamp(opt_.lateness, Micros{0}, opt_.span);
}

Micros LiveTimeline::tickEnd(std::size_t i) const {
  return origin_ + (first_ + static_cast<std::int64_t>(i) + 1) * kSecond;
}

void LiveTimeline::advanceTo(Micros t) {
  if (origin_ == kNever) {
    origin_ = floorSecond(t);
    first_ = 0;
  }
  if (newest_ == kNever || t > newest_) newest_ = t;
  const std::int64_t want = (floorSecond(t) - origin_) / kSecond;  // second index holding t
  std::int64_t last = first_ + static_cast<std::int64_t>(ticks_.size()) - 1;
  if (ticks_.empty()) {
    first_ = want;
    last = want - 1;
  }
  if (want <= last) return;
  // A jump far ahead (a source that was idle, a clock step) starts over instead of opening
  // an hour of empty seconds.
  const std::int64_t keep = opt_.span / kSecond;
  if (want - last > keep) {
    ticks_.clear();
    first_ = want - keep + 1;
    last = first_ - 1;
  }
  for (std::int64_t k = last + 1; k <= want; ++k) ticks_.emplace_back();
  // The seconds that are over now: their window rates as the engine has them at their end.
  for (std::size_t i = ticks_.size() - 1; i-- > 0;) {
    Tick& tick = ticks_[i];
    if (tick.sampled) break;
    tick.sampled = true;
    tick.cells.resize(engine_.size());
    for (InstanceId id = 0; id < engine_.size(); ++id) {
      const BreakerSnapshot s = engine_.breaker(id).snapshot(tickEnd(i));
      Cell& c = tick.cells[id];
      c.errorRate = s.errorRate;
      c.slowRate = s.slowRate;
      c.baselineMs = s.baselineLearned ? s.baselineP99 / 1e3 : 0;
    }
  }
  // Seal what is older than `lateness`: its p99 is final, its latencies are freed.
  for (std::size_t i = 0; i < ticks_.size(); ++i) {
    Tick& tick = ticks_[i];
    if (tick.sealed) continue;
    if (tickEnd(i) + opt_.lateness > newest_) break;
    for (Cell& c : tick.cells) {
      c.p99Ms = p99Of(std::move(c.latencyMs));
      c.latencyMs = {};
    }
    tick.sealed = true;
  }
  while (static_cast<std::int64_t>(ticks_.size()) > keep) {
    ticks_.pop_front();
    ++first_;
  }
  const Micros start = origin_ + first_ * kSecond;
  std::size_t drop = 0;
  while (drop < events_.size() && events_[drop].ts < start) ++drop;
  if (drop > 0) {
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(drop));
    why_.erase(why_.begin(), why_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

LiveTimeline::Cell* LiveTimeline::cell(InstanceId id, Micros at, bool anyRetained) {
  if (origin_ == kNever || ticks_.empty()) return nullptr;
  const std::int64_t k = (floorSecond(at) - origin_) / kSecond - first_;
  if (k < 0 || k >= static_cast<std::int64_t>(ticks_.size())) return nullptr;
  Tick& tick = ticks_[static_cast<std::size_t>(k)];
  if (!anyRetained && tick.sealed) return nullptr;
  if (tick.cells.size() <= id) tick.cells.resize(id + 1);
  return &tick.cells[id];
}

void LiveTimeline::onCall(InstanceId id, Micros end, Micros latency, bool failure, bool slow) {
  ++calls_;
  advanceTo(end);
  Cell* c = cell(id, end, false);
  if (!c) {
    ++late_;
    return;
  }
  c->calls += 1;
  c->failures += failure;
  c->slow += slow;
  c->latencyMs.push_back(static_cast<float>(static_cast<double>(latency) / 1e3));
}

void LiveTimeline::onAggregate(InstanceId id, Micros end, Micros step, std::uint32_t calls,
                               std::uint32_t failures, std::int64_t slow) {
  calls_ += calls;
  // A metrics sample covers a whole step that ended just now: spread it over its seconds
  // (those still retained), as the replay timeline does.
  const Micros from = end - std::max(step, kSecond);
  if (origin_ == kNever) advanceTo(from);  // the first sample's step is on the axis too
  advanceTo(end - 1);
  const std::int64_t k0 = (floorSecond(from) - origin_) / kSecond;
  const std::int64_t k1 = (floorSecond(end - 1) - origin_) / kSecond;
  const double share = 1.0 / static_cast<double>(k1 - k0 + 1);
  for (std::int64_t k = k0; k <= k1; ++k) {
    Cell* c = cell(id, origin_ + k * kSecond, true);
    if (!c) continue;
    c->calls += calls * share;
    c->failures += failures * share;
    c->slow += static_cast<double>(std::max<std::int64_t>(0, slow)) * share;
  }
}

void LiveTimeline::onEvent(const Event& e, std::string why) {
  advanceTo(e.ts);
  events_.push_back(e);
  why_.push_back(std::move(why));
}

RunTimeline LiveTimeline::snapshot() const {
  const std::size_t n = ticks_.size();
  if (n == 0) return RunTimeline::fromInstances({}, kSecond, 0);
  const Micros start = first_ * kSecond;  // on the timeline's axis (t = 0 at origin)
  const Micros end = start + static_cast<Micros>(n) * kSecond;
  std::vector<Event> shifted;
  shifted.reserve(events_.size());
  for (Event e : events_) {
    e.ts -= origin_;
    shifted.push_back(e);
  }
  std::vector<InstanceTimeline> out(engine_.size());
  for (InstanceId id = 0; id < engine_.size(); ++id) {
    InstanceTimeline& it = out[id];
    it.name = engine_.name(id);
    it.model = engine_.model(id);
    for (auto* v : {&it.t, &it.calls, &it.failures, &it.slow, &it.p99Ms, &it.throughput,
                    &it.errorRate, &it.slowRate, &it.baselineP99Ms})
      v->resize(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      it.t[k] = static_cast<double>(start + static_cast<Micros>(k + 1) * kSecond) / 1e6;
      const Tick& tick = ticks_[k];
      if (id >= tick.cells.size()) {
        it.p99Ms[k] = kNaN;
        continue;
      }
      const Cell& c = tick.cells[id];
      it.calls[k] = c.calls;
      it.failures[k] = c.failures;
      it.slow[k] = c.slow;
      it.throughput[k] = c.calls;  // shadow mode blocks nothing; per second
      it.p99Ms[k] = tick.sealed ? c.p99Ms : p99Of(c.latencyMs);
      it.errorRate[k] = c.errorRate;
      it.slowRate[k] = c.slowRate;
      it.baselineP99Ms[k] = c.baselineMs;
    }
    // The open second: answers per second over its elapsed part (a partial second's count
    // would read as a drop), and the window as it is now.
    const double elapsed =
        static_cast<double>(newest_ - (tickEnd(n - 1) - kSecond)) / static_cast<double>(kSecond);
    if (elapsed > 0.05) it.throughput[n - 1] = it.calls[n - 1] / std::min(1.0, elapsed);
    const BreakerSnapshot s = engine_.breaker(id).snapshot(newest_);
    it.errorRate[n - 1] = s.errorRate;
    it.slowRate[n - 1] = s.slowRate;
    it.baselineP99Ms[n - 1] = s.baselineLearned ? s.baselineP99 / 1e3 : 0;
    for (auto* v : {&it.rejected, &it.queueFull, &it.overflow, &it.busy, &it.queued,
                    &it.blockedJudged, &it.blockedWouldSucceed})
      v->assign(n, 0);
    // Shadow mode: the breakers only watch; transitions appear only if a policy forces one.
    std::vector<StateBand> bands = bandsFromEvents(shifted, id, BreakerState::MetricsOnly, end);
    for (const StateBand& b : bands)
      if (b.end > start) it.bands.push_back({std::max(b.start, start), b.end, b.state, b.ramping});
    for (std::size_t i = 0; i < shifted.size(); ++i)
      if (shifted[i].instance == id && shifted[i].kind == EventKind::WouldOpen)
        it.markers.push_back({shifted[i].ts, Marker::Kind::WouldOpen,
                              why_[i].empty() ? std::string("would open") : why_[i]});
  }
  return RunTimeline::fromInstances(std::move(out), kSecond, end, start);
}

}  // namespace spillway::view
