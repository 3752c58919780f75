#include "spillway/live/shadow.hpp"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "spillway/input_error.hpp"
#include "spillway/outcome.hpp"

namespace spillway::live {
namespace {

constexpr std::size_t kMaxErrors = 20;

Policy metricsOnly(Policy p) {
  p.breaker.mode = BreakerMode::MetricsOnly;
  return p;
}

// In % as every rate and trip line on screen is ("error rate 80.0 % > 50.0 %").
std::string rateText(const char* what, double rate, double threshold) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.1f %% > %.1f %%", what, rate * 100, threshold * 100);
  return buf;
}

}  // namespace

std::string otherRefusals(const ShadowOptions& opt) {
  std::string s =
      "its instance or model name is over " + std::to_string(opt.maxNameBytes) + " bytes";
  if (opt.wallClock)
    s += ", or they end over " + formatDuration(opt.maxAhead) + " after this host's clock";
  return s;
}

std::string clockTime(Micros t) {
  const std::time_t s = static_cast<std::time_t>(t / kMicrosPerSecond);
  std::tm tm{};
  localtime_r(&s, &tm);
  char buf[32];  // with its zone: a verdict read later, or by someone elsewhere, is unambiguous
  std::strftime(buf, sizeof buf, "%H:%M:%S %Z", &tm);
  return buf;
}

// One tracked instance. With an instance bound each has an engine of its own, so evicting it
// frees its breaker (the engine has no removal); the per-instance random stream depends on the
// seed and the name only, so verdicts are the same as in one shared engine. Its events are
// forwarded under the monitor's id for it.
struct ShadowMonitor::Tracked final : EventSink {
  ShadowMonitor* owner = nullptr;
  InstanceId id = 0;            // the monitor's id (reused after an eviction)
  std::unique_ptr<Engine> own;  // bounded mode
  Engine* engine = nullptr;     // own.get(), or the shared engine
  InstanceId local = 0;         // the id inside `engine`
  std::string name;             // after aliases
  Micros lastSeen = kNever;     // the monitor's data time when it last had data
  std::uint64_t reserved = 0;   // calls admitted by reserve() and not yet recorded
  Micros firstWouldOpen = kNever;
  double reportedP99 = -1;
  std::list<Tracked*>::iterator lru;

  void onEvent(const Event& e) override {
    Event forwarded = e;
    forwarded.instance = id;
    owner->onEvent(forwarded);
  }
  Breaker& breaker() { return engine->breaker(local); }
};

ShadowMonitor::ShadowMonitor(Policy policy, ShadowOptions opt)
    : opt_(std::move(opt)),
      policy_(std::make_shared<const Policy>(metricsOnly(std::move(policy)))) {
  if (opt_.sharedEngine) {
    shared_ = std::make_unique<Engine>(policy_, opt_.seed, static_cast<EventSink*>(this));
    shared_->keepWindowHistograms(opt_.keepWindowHistograms);
  }
}

ShadowMonitor::~ShadowMonitor() = default;

Engine& ShadowMonitor::engine() {
  if (!shared_) throw std::logic_error("ShadowMonitor::engine(): only with sharedEngine");
  return *shared_;
}

std::string_view ShadowMonitor::engineName(std::string_view instance) const {
  if (auto it = opt_.aliases.find(instance); it != opt_.aliases.end()) return it->second;
  return instance;
}

void ShadowMonitor::touch(Tracked& t, Micros time) {
  if (time > last_) last_ = time;
  t.lastSeen = last_;  // the newest data time: monotonic, so the LRU list stays sorted by it
  lru_.splice(lru_.end(), lru_, t.lru);
}

ShadowMonitor::Tracked* ShadowMonitor::track(std::string_view name, std::string_view model,
                                             Micros t) {
  if (name.size() > opt_.maxNameBytes || model.size() > opt_.maxNameBytes) {
    ++bound_.namesTooLong;
    return nullptr;
  }
  if (opt_.wallClock && t > opt_.wallClock() + opt_.maxAhead) {
    ++bound_.fromTheFuture;
    return nullptr;
  }
  if (auto it = byName_.find(name); it != byName_.end()) {
    touch(*it->second, t);
    return it->second.get();
  }
  // Full: make room by evicting the idle (never with a shared engine: its instances stay, so
  // the bound is a hard cap there and a new name is refused for good).
  if (opt_.maxInstances && byName_.size() >= opt_.maxInstances) {
    if (t > last_) last_ = t;  // a refused call still moves data time on
    evictIdle();
    if (byName_.size() >= opt_.maxInstances) {
      ++bound_.instancesRejected;
      return nullptr;
    }
  }
  auto tr = std::make_unique<Tracked>();
  tr->owner = this;
  tr->name = std::string(name);
  if (!freeIds_.empty()) {
    tr->id = freeIds_.back();
    freeIds_.pop_back();
    byId_[tr->id] = tr.get();
  } else {
    tr->id = static_cast<InstanceId>(byId_.size());
    byId_.push_back(tr.get());
  }
  if (shared_) {
    tr->engine = shared_.get();
  } else {
    tr->own = std::make_unique<Engine>(policy_, opt_.seed, tr.get());
    tr->own->keepWindowHistograms(opt_.keepWindowHistograms);
    tr->engine = tr->own.get();
  }
  tr->local = tr->engine->addInstance(name, model);
  // Shared: nothing is evicted, so the monitor's ids and the engine's are the same dense ids
  // (the engine reports events under its own, which the live timeline reads).
  assert(!shared_ || tr->local == tr->id);
  // A per-instance override may set another mode: shadow mode never blocks, whatever it says.
  if (tr->breaker().state() != BreakerState::MetricsOnly)
    tr->breaker().force(BreakerState::MetricsOnly, t);
  tr->lru = lru_.insert(lru_.end(), tr.get());
  Tracked* raw = tr.get();
  byName_.emplace(raw->name, std::move(tr));
  bound_.tracked = byName_.size();
  bound_.highWater = std::max(bound_.highWater, bound_.tracked);
  touch(*raw, t);
  return raw;
}

void ShadowMonitor::evict(Tracked& t) {
  lru_.erase(t.lru);
  byId_[t.id] = nullptr;
  freeIds_.push_back(t.id);
  ++bound_.evicted;
  byName_.erase(byName_.find(std::string_view(t.name)));  // destroys t
  bound_.tracked = byName_.size();
}

void ShadowMonitor::evictIdle() {
  // Only with engines of their own: the shared engine cannot drop a breaker.
  if (shared_ || opt_.idleHorizon <= 0 || last_ == kNever) return;
  // Oldest first; an instance with reserved calls waits for them (they were acknowledged).
  for (auto it = lru_.begin(); it != lru_.end();) {
    Tracked& t = **it++;
    if (last_ - t.lastSeen <= opt_.idleHorizon) break;
    if (!t.reserved) evict(t);
  }
}

bool ShadowMonitor::reserve(std::string_view instance, std::string_view model, Micros t) {
  Tracked* tr = track(engineName(instance), model, t);
  if (!tr) {
    ++bound_.callsRejected;
    return false;
  }
  ++tr->reserved;
  return true;
}

void ShadowMonitor::addLine(std::string_view line) {
  ++lines_;
  pending_.emplace_back(line);
  if (pending_.size() >= 4096) flush();  // bounded memory whatever the caller does
}

void ShadowMonitor::flush() {
  // One importer source per batch. A bad line throws out of the source: it is reported with
  // its line number in the whole stream, and parsing resumes after it.
  std::size_t from = 0;
  formats::ImportOptions io;
  io.map = opt_.map;
  while (from < pending_.size()) {
    std::string text;
    for (std::size_t i = from; i < pending_.size(); ++i) text.append(pending_[i]).append("\n");
    std::unique_ptr<formats::RecordSource> src;
    try {
      src = formats::sourceFromMemory(opt_.format, opt_.sourceName, text, io);
      CallRecord rec;
      while (src->next(rec)) process(rec, false);
      ignored_ += src->ignored();
      break;
    } catch (const InputError& e) {
      if (src) ignored_ += src->ignored();
      ++badLines_;
      const long rel = e.line() > 0 ? e.line() : 1;  // 1-based in this batch
      if (errors_.size() < kMaxErrors)
        errors_.push_back(InputError(opt_.sourceName, static_cast<long>(lineBase_ + from) + rel,
                                     e.field(), e.detail())
                              .what());
      from += static_cast<std::size_t>(rel);
    }
  }
  lineBase_ += pending_.size();
  pending_.clear();
  evictIdle();  // the idle are dropped even when no new instance asks for room
}

bool ShadowMonitor::process(const CallRecord& rec, bool reserved) {
  ++records_;
  const Micros end = rec.end();
  Tracked* tr = track(engineName(rec.instance), rec.model, end);
  if (!tr) {  // only unreserved calls: a reserved instance is kept until its calls are in
    ++bound_.callsRejected;
    return false;
  }
  if (reserved && tr->reserved) --tr->reserved;
  Engine& eng = *tr->engine;
  // The outcome is what the log knows, at the call's end; there is nothing to admit.
  const Decision d = eng.admit(tr->local, end);
  const Breaker& b = eng.breaker(tr->local);
  const bool slow = rec.latency > b.slowThreshold();  // the threshold record() applies
  eng.record(tr->local, d, end, rec.latency, rec.status, rec.outcome);
  if (onRecorded)
    onRecorded(RecordedCall{
        tr->id, &rec, tr->name,
        classify(b.config().classify, rec.status, rec.outcome) == Verdict::Failure, slow});
  return true;
}

void ShadowMonitor::addAggregate(const formats::AggregateSample& s, double p99Ms) {
  ++aggregates_;
  records_ += s.calls;
  Tracked* tr = track(engineName(s.instance), s.model, s.end);
  if (!tr) {
    ++bound_.samplesRejected;
    return;
  }
  tr->engine->recordAggregate(tr->local, s.end, s.calls, s.failures, s.slow);
  if (p99Ms >= 0) tr->reportedP99 = p99Ms;
  if (onAggregated) onAggregated(tr->id, s);
}

void ShadowMonitor::onEvent(const Event& e) {
  if (onEngineEvent) onEngineEvent(e);
  if (e.kind != EventKind::WouldOpen) return;
  Tracked* tr = e.instance < byId_.size() ? byId_[e.instance] : nullptr;
  if (!tr) return;  // cannot happen: events come from tracked instances
  const TripConfig& trip = tr->breaker().config().trip;
  WouldOpenVerdict v;
  v.event = e;
  v.instance = tr->name;
  v.errorThreshold = trip.errorRate;
  v.slowThreshold = trip.slowRate;
  std::string why;
  if (e.reason == Reason::ErrorRate || e.reason == Reason::ErrorAndSlow)
    why = rateText("error rate", e.errorRate, trip.errorRate);
  if (e.reason == Reason::SlowRate || e.reason == Reason::ErrorAndSlow) {
    if (!why.empty()) why += " and ";
    why += rateText("slow rate", e.slowRate, trip.slowRate);
  }
  char held[32];
  std::snprintf(held, sizeof held, " for %.3g s", static_cast<double>(e.sustained) / 1e6);
  v.text = clockTime(e.ts) + " " + v.instance + " would open (" + why + held + ")";
  if (tr->firstWouldOpen == kNever) tr->firstWouldOpen = e.ts;
  if (verdicts_.size() < kMaxKeptVerdicts) verdicts_.push_back(v);
  if (onWouldOpen) onWouldOpen(v);
}

std::vector<InstanceSummary> ShadowMonitor::summary() const {
  std::vector<InstanceSummary> out;
  for (Tracked* tr : byId_) {
    if (!tr) continue;
    const Breaker& b = tr->breaker();
    const BreakerSnapshot s = b.snapshot(last_ == kNever ? 0 : last_);
    InstanceSummary r;
    r.instance = tr->name;
    r.calls = s.counters.recorded;
    r.failures = s.counters.failures;
    r.slow = s.counters.slow;
    r.wouldOpens = s.counters.wouldOpens;
    r.errorRate = s.errorRate;
    r.slowRate = s.slowRate;
    r.p99Ms = s.p99 / 1e3;
    r.slowThresholdUs = s.slowThreshold;
    r.firstWouldOpen = tr->firstWouldOpen;
    r.reportedP99Ms = tr->reportedP99;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace spillway::live
