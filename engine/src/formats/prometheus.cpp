// Prometheus query_range matrix → AggregateSamples sorted by (end, instance).
#include "spillway/formats/prometheus.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "internal.hpp"

namespace spillway::formats::detail {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

struct Cell {
  double calls = -1, failures = -1, slow = -1;
  long line = 1;
};

class PromSource final : public RecordSource {
 public:
  PromSource(std::string name, std::string text, const ImportOptions& opt)
      : RecordSource(std::move(name), opt.skipBadLines),
        map_(effectiveMap(Format::Prometheus, opt.map)) {
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
    s.line = o.line;
    return true;
  }

 private:
  struct Out {
    Micros end, step;
    std::string instance, model;
    std::uint32_t calls, failures;
    std::int64_t slow;
    long line;
  };

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(source_, 1, field, what);
  }

  void load(const std::string& text) {
    element root;
    if (auto e = parser_.parse(text).get(root))
      fail("", std::string("invalid JSON: ") + simdjson::error_message(e));
    object top;
    if (root.get_object().get(top)) fail("", "expected a query_range response object");
    std::string_view status;
    if (top["status"].get_string().get(status)) fail("status", "missing required field");
    if (status != "success") {
      std::string_view err;
      if (top["error"].get_string().get(err)) err = "(no error message)";
      fail("status", "the query failed: " + std::string(err));
    }
    object data;
    if (top["data"].get_object().get(data)) fail("data", "missing required field");
    std::string_view type;
    if (data["resultType"].get_string().get(type) || type != "matrix")
      fail("data.resultType",
           "expected \"matrix\" (a query_range result), got \"" + std::string(type) + "\"");
    array result;
    if (data["result"].get_array().get(result)) fail("data.result", "expected an array");

    // (instance, model) → time → counts; then steps from consecutive timestamps.
    std::map<std::pair<std::string, std::string>, std::map<Micros, Cell>> cells;
    std::size_t i = 0;
    for (element series : result) {
      const std::string at = "data.result[" + std::to_string(i++) + "]";
      try {
        readSeries(series, at, cells);
      } catch (const InputError& e) {
        reject(e);
      }
    }
    for (auto& [key, byTime] : cells) {
      Micros prev = kNever, prevStep = 0;
      for (auto& [t, c] : byTime) {
        const Micros step = prev == kNever ? prevStep : t - prev;
        prev = t;
        prevStep = step;
        if (c.calls < 0) {
          reject(InputError(source_, c.line, map_.at("calls"),
                            "no calls series for instance '" + key.first + "' at " +
                                std::to_string(static_cast<double>(t) / 1e6)));
          continue;
        }
        auto count = [](double v) {
          return static_cast<std::uint32_t>(std::min(std::llround(std::max(v, 0.0)), 4000000000LL));
        };
        Out o{t,
              step,
              key.first,
              key.second,
              count(c.calls),
              c.failures < 0 ? 0 : count(c.failures),
              c.slow < 0 ? -1 : static_cast<std::int64_t>(count(c.slow)),
              c.line};
        out_.push_back(std::move(o));
      }
    }
    // The first step of a series is only known from the second timestamp.
    for (std::size_t k = 0; k + 1 < out_.size(); ++k)
      if (out_[k].step == 0 && out_[k + 1].instance == out_[k].instance &&
          out_[k + 1].model == out_[k].model)
        out_[k].step = out_[k + 1].step;
    std::stable_sort(out_.begin(), out_.end(), [](const Out& a, const Out& b) {
      return a.end != b.end ? a.end < b.end : a.instance < b.instance;
    });
  }

  void readSeries(element series, const std::string& at,
                  std::map<std::pair<std::string, std::string>, std::map<Micros, Cell>>& cells) {
    object so, metric;
    if (series.get_object().get(so) || so["metric"].get_object().get(metric))
      fail(at, "expected {\"metric\": {...}, \"values\": [...]}");
    auto label = [&](const char* field) -> std::string {
      std::string_view v;
      if (metric[map_.at(field)].get_string().get(v)) return {};
      return std::string(v);
    };
    const std::string role = label("series");
    double Cell::*slot = nullptr;
    if (role == map_.at("calls"))
      slot = &Cell::calls;
    else if (role == map_.at("failures"))
      slot = &Cell::failures;
    else if (role == map_.at("slow"))
      slot = &Cell::slow;
    else
      fail(at + ".metric." + map_.at("series"),
           "expected '" + map_.at("calls") + "', '" + map_.at("failures") + "' or '" +
               map_.at("slow") + "', got '" + role + "' (see --map series=LABEL)");
    const std::string instance = label("instance");
    if (instance.empty())
      fail(at + ".metric." + map_.at("instance"), "missing label (see --map instance=LABEL)");
    auto& byTime = cells[{instance, label("model")}];
    array values;
    if (so["values"].get_array().get(values)) fail(at + ".values", "expected an array");
    std::size_t j = 0;
    for (element pair : values) {
      const std::string vat = at + ".values[" + std::to_string(j++) + "]";
      array p;
      double ts = 0;
      std::string_view v;
      if (pair.get_array().get(p) || p.size() != 2 || p.at(0).get_double().get(ts) ||
          p.at(1).get_string().get(v))
        fail(vat, "expected [<unix seconds>, \"<value>\"]");
      auto x = parseNumber(v);
      if (!x) {
        if (v == "NaN" || v == "+Inf" || v == "-Inf") continue;  // no data at this step
        fail(vat, "expected a number, got '" + std::string(v) + "'");
      }
      const Micros t = static_cast<Micros>(std::llround(ts * 1e6));
      Cell& c = byTime[t];
      c.*slot = (c.*slot < 0 ? 0 : c.*slot) + *x;
    }
  }

  FieldMap map_;
  simdjson::dom::parser parser_;
  std::vector<Out> out_;
  std::size_t cur_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> makePrometheus(std::string name, std::string text,
                                             const ImportOptions& opt) {
  return std::make_unique<PromSource>(std::move(name), std::move(text), opt);
}

}  // namespace spillway::formats::detail
