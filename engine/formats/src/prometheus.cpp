// Prometheus query_range matrix → points joined per (instance, model, time) → AggregateSamples
// sorted by (end, instance). One parser for the importer (roles from a label, one response) and
// the live puller (one response per role).
#include "spillway/formats/prometheus.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "internal.hpp"

namespace spillway::formats {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string_view promRoleName(PromRole r) {
  switch (r) {
    case PromRole::FromLabel:
      return "series";
    case PromRole::Calls:
      return "calls";
    case PromRole::Failures:
      return "failures";
    case PromRole::Slow:
      return "slow";
    case PromRole::P99:
      return "p99";
  }
  return "series";
}

constexpr double kMaxPerStep = 4e9;

struct PromMatrixJoin::Impl {
  struct Cell {
    double calls = -1, failures = -1, slow = -1, p99 = -1;
  };
  FieldMap map;
  simdjson::dom::parser parser;
  // (instance, model) → time → values.
  std::map<std::pair<std::string, std::string>, std::map<Micros, Cell>> cells;

  [[noreturn]] static void fail(const std::string& name, const std::string& field,
                                const std::string& what) {
    throw InputError(name, 1, field, what);
  }

  void readSeries(element series, const std::string& name, const std::string& at, PromRole role) {
    object so, metric;
    if (series.get_object().get(so) || so["metric"].get_object().get(metric))
      fail(name, at, "expected {\"metric\": {...}, \"values\": [...]}");
    auto label = [&](const char* field) -> std::string {
      std::string_view v;
      if (metric[map.at(field)].get_string().get(v)) return {};
      return std::string(v);
    };
    if (role == PromRole::FromLabel) {
      const std::string r = label("series");
      if (r == map.at("calls"))
        role = PromRole::Calls;
      else if (r == map.at("failures"))
        role = PromRole::Failures;
      else if (r == map.at("slow"))
        role = PromRole::Slow;
      else
        fail(name, at + ".metric." + map.at("series"),
             "expected '" + map.at("calls") + "', '" + map.at("failures") + "' or '" +
                 map.at("slow") + "', got '" + r + "' (see --map series=LABEL)");
    }
    double Cell::*slot = role == PromRole::Calls      ? &Cell::calls
                         : role == PromRole::Failures ? &Cell::failures
                         : role == PromRole::Slow     ? &Cell::slow
                                                      : &Cell::p99;
    const std::string instance = label("instance");
    if (instance.empty())
      fail(name, at + ".metric." + map.at("instance"), "missing label (see --map instance=LABEL)");
    array values;
    if (so["values"].get_array().get(values)) fail(name, at + ".values", "expected an array");
    // Checked whole before anything is kept: a bad series leaves no half of itself behind.
    std::vector<std::pair<Micros, double>> points;
    std::size_t j = 0;
    for (element pair : values) {
      const std::string vat = at + ".values[" + std::to_string(j++) + "]";
      array p;
      double ts = 0;
      std::string_view v;
      if (pair.get_array().get(p) || p.size() != 2 || p.at(0).get_double().get(ts) ||
          p.at(1).get_string().get(v) || !std::isfinite(ts) || std::fabs(ts) > 9e12)
        fail(name, vat, "expected [<unix seconds>, \"<value>\"]");
      auto x = detail::parseNumber(v);
      if (!x) {
        if (v == "NaN" || v == "+Inf" || v == "-Inf") continue;  // no data at this step
        fail(name, vat, "expected a number, got '" + std::string(v) + "'");
      }
      // Counts per step and a p99 in ms: never negative (-1 is how a cell says "no series"),
      // and a step's count fits the engine's 32-bit counters.
      if (*x < 0 || *x > kMaxPerStep)
        fail(name, vat,
             "expected a value from 0 to 4e9 (a count per step, or a p99 in ms), got '" +
                 std::string(v) + "'");
      const auto at = instantFromMillis(ts * 1e3);
      if (!at) fail(name, vat, std::string("timestamp out of range: not ") + kInstantRange);
      points.emplace_back(*at, *x);
    }
    auto& byTime = cells[{instance, label("model")}];
    for (const auto& [t, x] : points) {
      double& c = byTime[t].*slot;
      // Several series of one instance add up (counts); a quantile takes the worst.
      if (slot == &Cell::p99)
        c = std::max(c, x);
      else
        c = (c < 0 ? 0 : c) + x;
    }
  }
};

PromMatrixJoin::PromMatrixJoin(const FieldMap& userMap) : d_(std::make_unique<Impl>()) {
  d_->map = detail::effectiveMap(Format::Prometheus, userMap);
}

PromMatrixJoin::~PromMatrixJoin() = default;

const FieldMap& PromMatrixJoin::map() const {
  return d_->map;
}

bool PromMatrixJoin::empty() const {
  return d_->cells.empty();
}

void PromMatrixJoin::add(std::string_view body, const std::string& name, PromRole role,
                         const BadSeries& badSeries) {
  element root;
  if (auto e = d_->parser.parse(body.data(), body.size()).get(root))
    Impl::fail(name, "", std::string("invalid JSON: ") + simdjson::error_message(e));
  object top;
  if (root.get_object().get(top)) Impl::fail(name, "", "expected a query_range response object");
  std::string_view status;
  if (top["status"].get_string().get(status)) Impl::fail(name, "status", "missing required field");
  if (status != "success") {
    std::string_view err;
    if (top["error"].get_string().get(err)) err = "(no error message)";
    Impl::fail(name, "status", "the query failed: " + std::string(err));
  }
  object data;
  if (top["data"].get_object().get(data)) Impl::fail(name, "data", "missing required field");
  std::string_view type;
  if (data["resultType"].get_string().get(type) || type != "matrix")
    Impl::fail(name, "data.resultType",
               "expected \"matrix\" (a query_range result), got \"" + std::string(type) + "\"");
  array result;
  if (data["result"].get_array().get(result)) Impl::fail(name, "data.result", "expected an array");
  std::size_t i = 0;
  for (element series : result) {
    const std::string at = "data.result[" + std::to_string(i++) + "]";
    if (!badSeries) {
      d_->readSeries(series, name, at, role);
      continue;
    }
    try {
      d_->readSeries(series, name, at, role);
    } catch (const InputError& e) {
      badSeries(e);
    }
  }
  d_->parser = simdjson::dom::parser{};  // the document is read: its tree is not kept
}

std::vector<PromPoint> PromMatrixJoin::take(Micros knownStep) {
  std::vector<PromPoint> out;
  for (auto& [key, byTime] : d_->cells) {
    const std::size_t first = out.size();
    Micros prev = kNever, prevStep = 0;
    for (auto& [t, c] : byTime) {
      const Micros step = knownStep ? knownStep : prev == kNever ? prevStep : t - prev;
      prev = t;
      prevStep = step;
      out.push_back(PromPoint{t, step, key.first, key.second, c.calls, c.failures, c.slow, c.p99});
    }
    // The first step of a series is only known from the second timestamp.
    if (out.size() > first + 1 && out[first].step == 0) out[first].step = out[first + 1].step;
  }
  d_->cells.clear();
  std::stable_sort(out.begin(), out.end(), [](const PromPoint& a, const PromPoint& b) {
    return a.end != b.end ? a.end < b.end : a.instance < b.instance;
  });
  return out;
}

namespace detail {
namespace {

class PromSource final : public RecordSource {
 public:
  PromSource(std::string name, std::string text, const ImportOptions& opt)
      : RecordSource(std::move(name), opt.skipBadLines), join_(opt.map) {
    load(text);
  }
  bool aggregates() const override { return true; }
  bool next(CallRecord&) override { return false; }
  bool nextAggregate(AggregateSample& s) override {
    if (cur_ >= out_.size()) return false;
    const Out& o = out_[cur_++];
    s = AggregateSample{};
    s.end = o.end;
    s.step = o.step;
    s.instance = o.instance;
    s.model = o.model;
    s.calls = o.calls;
    s.failures = o.failures;
    s.slow = o.slow;
    s.line = 1;
    return true;
  }

 private:
  struct Out {
    Micros end, step;
    std::string instance, model;
    std::uint32_t calls, failures;
    std::int64_t slow;
  };

  void load(const std::string& text) {
    join_.add(text, source_, PromRole::FromLabel, [this](const InputError& e) { reject(e); });
    const FieldMap& map = join_.map();
    for (PromPoint& p : join_.take()) {
      if (p.calls < 0) {
        reject(InputError(source_, 1, map.at("calls"),
                          "no calls series for instance '" + p.instance + "' at " +
                              std::to_string(static_cast<double>(p.end) / 1e6)));
        continue;
      }
      if (p.failures > p.calls || p.slow > p.calls) {
        const bool fails = p.failures > p.calls;
        reject(InputError(source_, 1, map.at(fails ? "failures" : "slow"),
                          std::string(fails ? "failures" : "slow calls") + " (" +
                              std::to_string(std::llround(fails ? p.failures : p.slow)) +
                              ") over the calls (" + std::to_string(std::llround(p.calls)) +
                              ") of instance '" + p.instance + "' at " +
                              std::to_string(static_cast<double>(p.end) / 1e6)));
        continue;
      }
      // (Several series of an instance add up: their sum may pass one series' bound.)
      auto count = [](double v) {
        return static_cast<std::uint32_t>(std::llround(std::min(v, kMaxPerStep)));
      };
      out_.push_back(Out{p.end, p.step, std::move(p.instance), std::move(p.model), count(p.calls),
                         p.failures < 0 ? 0 : count(p.failures),
                         p.slow < 0 ? -1 : static_cast<std::int64_t>(count(p.slow))});
    }
  }

  PromMatrixJoin join_;
  std::vector<Out> out_;
  std::size_t cur_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> makePrometheus(std::string name, std::string text,
                                             const ImportOptions& opt) {
  return std::make_unique<PromSource>(std::move(name), std::move(text), opt);
}

}  // namespace detail
}  // namespace spillway::formats
