#include "spillway/library/recording_block.hpp"

#include <algorithm>

#include "varint.hpp"

namespace spillway::library {

namespace {

using detail::ColumnWriter;
using detail::Cursor;
using detail::putVar;
using detail::unzig;

constexpr int kSampleColumns = 7;

}  // namespace

void SampleColumns::clear() {
  instance.clear();
  model.clear();
  end.clear();
  step.clear();
  calls.clear();
  failures.clear();
  slow.clear();
}

void RecordingBlockBuilder::span(Micros start, Micros end) {
  if (size() == 0) {
    tMin_ = start;
    tMax_ = end;
  } else {
    tMin_ = std::min(tMin_, start);
    tMax_ = std::max(tMax_, end);
  }
}

void RecordingBlockBuilder::add(const CallRecord& r) {
  span(r.ts, std::max(r.ts, r.end()));
  // The instance is never absent; an empty name still gets a slot so the column stays 1-based.
  std::uint32_t inst = strings_.intern(r.instance);
  if (inst == 0) {
    if (emptyInstance_ == 0) emptyInstance_ = strings_.append({}, false);
    inst = emptyInstance_;
  }
  calls_.push(r, inst, [this](std::string_view s) { return strings_.intern(s); });
}

void RecordingBlockBuilder::add(const formats::AggregateSample& s) {
  span(s.end - s.step, s.end);
  SampleColumns& c = samples_;
  c.instance.push_back(strings_.intern(s.instance));
  c.model.push_back(strings_.intern(s.model));
  c.end.push_back(s.end);
  c.step.push_back(s.step);
  c.calls.push_back(s.calls);
  c.failures.push_back(s.failures);
  c.slow.push_back(s.slow);
}

void RecordingBlockBuilder::encodeTo(std::string& out) {
  out.push_back(static_cast<char>(kind_));
  putVar(out, strings_.size());
  for (const std::string& s : strings_.strings()) {
    putVar(out, s.size());
    out.append(s);
  }
  if (kind_ == RecordKind::Calls) {
    encodeBlock(calls_, out);
    calls_.clear();
  } else {
    const SampleColumns& c = samples_;
    putVar(out, c.size());
    ColumnWriter w{out, {}};
    w.vars(c.instance);
    w.vars(c.model);
    w.deltas(c.end);
    w.zigs(c.step);
    w.vars(c.calls);
    w.vars(c.failures);
    w.zigs(c.slow);
    samples_.clear();
  }
  strings_.clear();
  emptyInstance_ = 0;
}

void RecordingBlock::call(std::size_t i, CallRecord& rec) const {
  const BlockColumns& c = calls;
  rec = CallRecord{};
  rec.ts = c.ts[i];
  rec.latency = c.latency[i];
  rec.status = c.status[i];
  rec.outcome = static_cast<Outcome>(c.outcome[i]);
  rec.hasOutcome = true;
  rec.instance = str(c.instance[i]);
  rec.model = str(c.model[i]);
  rec.tenant = str(c.tenant[i]);
  rec.route = str(c.route[i]);
  rec.session = str(c.session[i]);
  if (c.critical[i]) rec.critical = c.critical[i] == 2;
  rec.tokensIn = c.tokensIn[i];
  rec.tokensOut = c.tokensOut[i];
  rec.ttfb = c.ttfb[i];
}

void RecordingBlock::sample(std::size_t i, formats::AggregateSample& s) const {
  const SampleColumns& c = samples;
  s = formats::AggregateSample{};
  s.instance = str(c.instance[i]);
  s.model = str(c.model[i]);
  s.end = c.end[i];
  s.step = c.step[i];
  s.calls = c.calls[i];
  s.failures = c.failures[i];
  s.slow = c.slow[i];
}

bool decodeRecordingBlock(const unsigned char* data, std::size_t size, RecordingBlock& b) {
  b.strings.clear();
  b.calls.clear();
  b.samples.clear();
  Cursor c{data, data + size};
  if (size < 2 || *c.p > 1) return false;
  b.kind = static_cast<RecordKind>(*c.p++);
  const std::uint64_t nStrings = c.var();
  if (!c.ok || nStrings > c.left()) return false;  // each string takes at least its length byte
  b.strings.reserve(nStrings);
  for (std::uint64_t i = 0; i < nStrings; ++i) {
    const std::uint64_t len = c.var();
    if (!c.ok || len > c.left()) return false;
    b.strings.emplace_back(reinterpret_cast<const char*>(c.p), len);
    c.p += len;
  }
  auto idOk = [&](std::uint32_t id) { return id <= nStrings; };
  if (b.kind == RecordKind::Calls) {
    if (!decodeBlock(c.p, c.left(), b.calls)) return false;
    for (auto x : b.calls.instance)
      if (x == 0 || !idOk(x)) return false;
    for (const auto* v : {&b.calls.model, &b.calls.tenant, &b.calls.route, &b.calls.session})
      for (auto x : *v)
        if (!idOk(x)) return false;
    return true;
  }
  const std::uint64_t n = c.var();
  if (!c.ok || n > (1u << 24) || n > c.left()) return false;  // ≥ 1 byte a sample per column
  SampleColumns& s = b.samples;
  for (int k = 0; k < kSampleColumns; ++k) {
    const std::uint64_t len = c.var();
    if (!c.ok || len > c.left()) return false;
    Cursor col{c.p, c.p + len};
    c.p += len;
    Micros prev = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t v = col.var();
      switch (k) {
        case 0:
        case 1:
          if (v > nStrings) return false;
          (k == 0 ? s.instance : s.model).push_back(static_cast<std::uint32_t>(v));
          break;
        case 2:
          s.end.push_back(prev += unzig(v));
          break;
        case 3:
          s.step.push_back(unzig(v));
          break;
        case 4:
        case 5:
          (k == 4 ? s.calls : s.failures).push_back(static_cast<std::uint32_t>(v));
          break;
        default:
          s.slow.push_back(unzig(v));
      }
    }
    if (!col.ok || col.p != col.end) return false;
  }
  return c.p == c.end;
}

}  // namespace spillway::library
