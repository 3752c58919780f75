// Prometheus query_range matrix → points joined per (instance, model, time) → AggregateSamples
// in (end, instance, model) order. One parser for the importer (roles from a label, one response)
// and the live puller (one response per role).
//
// The response is read as a stream of JSON events (nlohmann's SAX parser), never as a tree, and
// each kept point costs 16 bytes: a simdjson tree plus a map node per point took 29 times the
// file's size (1.8 GB for a 64 MB dump of one short series per instance).
#include "spillway/formats/prometheus.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <stdexcept>

#include "internal.hpp"

namespace spillway::formats {

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

namespace {

// (time, value) of one role of one (instance, model), in time order.
using Points = std::vector<std::pair<Micros, double>>;
constexpr std::size_t kRoles = 4;  // calls, failures, slow, p99: PromRole minus FromLabel
using Key = std::pair<std::string, std::string>;  // (instance, model)
using Cells = std::map<Key, std::array<Points, kRoles>>;

std::size_t roleIndex(PromRole r) {
  return static_cast<std::size_t>(r) - 1;
}

// Several series of one instance and role add up (counts); a quantile takes the worst.
double combine(double a, double b, bool worst) {
  return worst ? std::max(a, b) : a + b;
}

// A series' points in time order, equal times folded into one.
void fold(Points& p, bool worst) {
  if (!std::is_sorted(p.begin(), p.end(), [](auto& a, auto& b) { return a.first < b.first; }))
    std::stable_sort(p.begin(), p.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (out > 0 && p[out - 1].first == p[i].first)
      p[out - 1].second = combine(p[out - 1].second, p[i].second, worst);
    else
      p[out++] = p[i];
  }
  p.resize(out);
}

// Merges folded `add` into folded `into`.
void mergeInto(Points& into, Points&& add, bool worst) {
  if (into.empty()) {
    into = std::move(add);
    return;
  }
  Points out;
  out.reserve(into.size() + add.size());
  std::size_t i = 0, j = 0;
  while (i < into.size() || j < add.size()) {
    if (j == add.size() || (i < into.size() && into[i].first < add[j].first)) {
      out.push_back(into[i++]);
    } else if (i == into.size() || add[j].first < into[i].first) {
      out.push_back(add[j++]);
    } else {
      out.emplace_back(into[i].first, combine(into[i].second, add[j].second, worst));
      ++i, ++j;
    }
  }
  into = std::move(out);
}

// Moves `add`'s keys into `into` node by node (no second copy of a key), merging the points of
// a key both hold.
void mergeCells(Cells& into, Cells&& add) {
  while (!add.empty()) {
    auto moved = into.insert(add.extract(add.begin()));
    if (moved.inserted) continue;
    for (std::size_t r = 0; r < kRoles; ++r)
      mergeInto(moved.position->second[r], std::move(moved.node.mapped()[r]),
                r == roleIndex(PromRole::P99));
  }
}

// One pass over a response: nlohmann's SAX events, read with the few frames a query_range
// matrix has. Keys and labels count at their first occurrence (as a JSON object lookup finds
// them); anything else is skipped by depth. Good series go into `cells` (when collecting);
// bad ones are counted, and handed to `emit` when set (the second pass, see add()).
class MatrixReader {
 public:
  using json = nlohmann::json;

  MatrixReader(const FieldMap& map, const std::string& name, PromRole role, bool collect,
               const PromMatrixJoin::BadSeries* emit)
      : map_(map),
        name_(name),
        role_(role),
        collect_(collect),
        emit_(emit),
        labelNames_{map.at("series"), map.at("instance"), map.at("model")} {}

  Cells cells;  // each role's points in arrival order until finish()
  bool anyBad = false;
  std::optional<InputError> firstBad;
  std::optional<std::string> syntaxError;

  // Throws what is wrong with the response as a whole, in the order a reader looking it up
  // from the top would find it.
  void checkTop() const {
    if (!rootObject_) fail("", "expected a query_range response object");
    if (!status_.string) fail("status", "missing required field");
    if (status_.text != "success")
      fail("status", "the query failed: " +
                         (error_.string ? error_.text : std::string("(no error message)")));
    if (!data_.object) fail("data", "missing required field");
    if (resultType_.text != "matrix")
      fail("data.resultType",
           "expected \"matrix\" (a query_range result), got \"" + resultType_.text + "\"");
    if (!result_.array) fail("data.result", "expected an array");
  }

  // ---- nlohmann SAX interface
  bool null() { return scalar(Kind::Other, {}, 0); }
  bool boolean(bool) { return scalar(Kind::Other, {}, 0); }
  bool number_integer(json::number_integer_t v) {
    return scalar(Kind::Number, {}, static_cast<double>(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar(Kind::Number, {}, static_cast<double>(v));
  }
  bool number_float(json::number_float_t v, const std::string&) {
    return scalar(Kind::Number, {}, v);
  }
  bool string(std::string& v) { return scalar(Kind::String, v, 0); }
  bool binary(json::binary_t&) { return scalar(Kind::Other, {}, 0); }
  bool key(std::string& k) {
    if (skip_ == 0) key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) { return open(Kind::Object); }
  bool start_array(std::size_t) { return open(Kind::Array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 4: ...": the tag is
    // nlohmann's, not the reader's business.
    const std::string_view what = e.what();
    const std::size_t tag = what.starts_with("[json.exception") ? what.find("] ") : what.npos;
    syntaxError = std::string(tag == what.npos ? what : what.substr(tag + 2));
    return false;
  }

 private:
  enum class Kind { Object, Array, String, Number, Other };
  // The frames a matrix response nests; everything else is skipped.
  enum class Frame { Top, Data, Result, Series, Metric, Values, Pair };
  // What the value about to be read is, from where it stands.
  enum class Slot {
    Root,
    Status,
    Error,
    Data,
    ResultType,
    Result,
    Series,
    Metric,
    Values,
    Label,
    Pair,
    PairItem,
    Ignore
  };
  // A top-level field at its first occurrence.
  struct Field {
    bool seen = false, string = false, object = false, array = false;
    std::string text;
  };
  // The labels a series is read by (the role, the instance, the model), at their first
  // occurrence; the others are skipped unread.
  enum LabelIndex { kSeriesLabel, kInstanceLabel, kModelLabel, kLabels };
  struct Series {
    bool object = false;
    Field metric, values;
    std::array<bool, kLabels> labelSeen{};
    std::array<std::string, kLabels> labels;
    std::size_t index = 0, pairs = 0;
    std::optional<std::pair<std::string, std::string>> error;  // the first bad point
    Points points;
  };
  struct Pair {
    std::size_t items = 0;
    bool bad = false;
    double ts = 0;
    std::string value;
  };

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(name_, 1, field, what);
  }

  Slot slot() {
    if (frames_.empty()) return Slot::Root;
    const auto first = [&](Field& f, Slot s) { return f.seen ? Slot::Ignore : s; };
    switch (frames_.back()) {
      case Frame::Top:
        if (key_ == "status") return first(status_, Slot::Status);
        if (key_ == "error") return first(error_, Slot::Error);
        if (key_ == "data") return first(data_, Slot::Data);
        return Slot::Ignore;
      case Frame::Data:
        if (key_ == "resultType") return first(resultType_, Slot::ResultType);
        if (key_ == "result") return first(result_, Slot::Result);
        return Slot::Ignore;
      case Frame::Result:
        return Slot::Series;
      case Frame::Series:
        if (key_ == "metric") return first(series_.metric, Slot::Metric);
        if (key_ == "values") return first(series_.values, Slot::Values);
        return Slot::Ignore;
      case Frame::Metric:
        labelHits_ = 0;
        for (int i = 0; i < kLabels; ++i)
          if (!series_.labelSeen[i] && key_ == labelNames_[i]) labelHits_ |= 1u << i;
        return labelHits_ ? Slot::Label : Slot::Ignore;
      case Frame::Values:
        return Slot::Pair;
      case Frame::Pair:
        return Slot::PairItem;
    }
    return Slot::Ignore;
  }

  // A field at its first occurrence, of kind `k`.
  static void note(Field& f, Kind k, const std::string& text) {
    f.seen = true;
    f.string = k == Kind::String;
    f.object = k == Kind::Object;
    f.array = k == Kind::Array;
    if (f.string) f.text = text;
  }

  // Takes the value of slot `s`; true when it opens a frame.
  bool take(Slot s, Kind k, const std::string& text, double number) {
    switch (s) {
      case Slot::Root:
        rootObject_ = k == Kind::Object;
        return push(rootObject_, Frame::Top);
      case Slot::Status:
        note(status_, k, text);
        return false;
      case Slot::Error:
        note(error_, k, text);
        return false;
      case Slot::Data:
        note(data_, k, text);
        return push(data_.object, Frame::Data);
      case Slot::ResultType:
        note(resultType_, k, text);
        return false;
      case Slot::Result:
        note(result_, k, text);
        return push(result_.array, Frame::Result);
      case Slot::Series:
        series_ = Series{};
        series_.points.swap(scratch_);
        series_.points.clear();
        series_.object = k == Kind::Object;
        series_.index = seriesCount_++;
        if (series_.object) return push(true, Frame::Series);
        endSeries();  // not an object: bad as it stands
        return false;
      case Slot::Metric:
        note(series_.metric, k, text);
        return push(series_.metric.object, Frame::Metric);
      case Slot::Values:
        note(series_.values, k, text);
        return push(series_.values.array, Frame::Values);
      case Slot::Label:
        for (int i = 0; i < kLabels; ++i)
          if (labelHits_ & (1u << i)) {
            series_.labelSeen[i] = true;
            if (k == Kind::String) series_.labels[i] = text;  // else it reads as missing
          }
        return false;
      case Slot::Pair:
        pair_ = Pair{};
        pair_.bad = k != Kind::Array;
        if (!pair_.bad) return push(true, Frame::Pair);
        endPair();
        return false;
      case Slot::PairItem:
        if (pair_.items == 0 && k == Kind::Number)
          pair_.ts = number;
        else if (pair_.items == 1 && k == Kind::String)
          pair_.value = text;
        else
          pair_.bad = true;
        ++pair_.items;
        return false;
      case Slot::Ignore:
        return false;
    }
    return false;
  }

  bool push(bool yes, Frame f) {
    if (yes) frames_.push_back(f);
    return yes;
  }

  bool scalar(Kind k, const std::string& text, double number) {
    if (skip_ == 0) take(slot(), k, text, number);
    return true;
  }
  bool open(Kind k) {
    if (skip_ > 0 || !take(slot(), k, {}, 0)) ++skip_;
    return true;
  }
  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f == Frame::Series) endSeries();
    if (f == Frame::Pair) endPair();
    return true;
  }

  const std::string& label(LabelIndex i) const { return series_.labels[i]; }

  void endPair() {
    const std::size_t j = series_.pairs++;
    if (series_.error) return;
    auto bad = [&](std::string what) {
      series_.error.emplace(".values[" + std::to_string(j) + "]", std::move(what));
    };
    if (pair_.bad || pair_.items != 2 || !std::isfinite(pair_.ts) || std::fabs(pair_.ts) > 9e12)
      return bad("expected [<unix seconds>, \"<value>\"]");
    const auto x = detail::parseNumber(pair_.value);
    if (!x) {
      if (pair_.value == "NaN" || pair_.value == "+Inf" || pair_.value == "-Inf")
        return;  // no data at this step
      return bad("expected a number, got '" + pair_.value + "'");
    }
    // Counts per step and a p99 in ms: never negative (-1 is how a cell says "no series"),
    // and a step's count fits the engine's 32-bit counters.
    if (*x < 0 || *x > kMaxPerStep)
      return bad("expected a value from 0 to 4e9 (a count per step, or a p99 in ms), got '" +
                 pair_.value + "'");
    const auto at = instantFromMillis(pair_.ts * 1e3);
    if (!at) return bad(std::string("timestamp out of range: not ") + kInstantRange);
    if (collect_) series_.points.emplace_back(*at, *x);
  }

  // The series' verdict, in the order a reader looking it up would find its faults.
  std::optional<InputError> seriesError(PromRole& role) const {
    const std::string at = "data.result[" + std::to_string(series_.index) + "]";
    auto error = [&](const std::string& field, const std::string& what) {
      return std::optional<InputError>(InputError(name_, 1, field, what));
    };
    if (!series_.object || !series_.metric.object)
      return error(at, "expected {\"metric\": {...}, \"values\": [...]}");
    role = role_;
    if (role == PromRole::FromLabel) {
      const std::string& r = label(kSeriesLabel);
      if (r == map_.at("calls"))
        role = PromRole::Calls;
      else if (r == map_.at("failures"))
        role = PromRole::Failures;
      else if (r == map_.at("slow"))
        role = PromRole::Slow;
      else
        return error(at + ".metric." + map_.at("series"),
                     "expected '" + map_.at("calls") + "', '" + map_.at("failures") + "' or '" +
                         map_.at("slow") + "', got '" + r + "' (see --map series=LABEL)");
    }
    if (label(kInstanceLabel).empty())
      return error(at + ".metric." + map_.at("instance"),
                   "missing label (see --map instance=LABEL)");
    if (!series_.values.array) return error(at + ".values", "expected an array");
    if (series_.error) return error(at + series_.error->first, series_.error->second);
    return std::nullopt;
  }

  void endSeries() {
    PromRole role = role_;
    if (auto e = seriesError(role)) {
      anyBad = true;
      if (!firstBad) firstBad = *e;
      if (emit_) (*emit_)(*e);
    } else if (collect_) {
      // Appended as they came (series after series, points in file order); finish() sorts and
      // folds each list once, as many series of one instance would each cost a merge.
      Points& into = cells[{label(kInstanceLabel), label(kModelLabel)}][roleIndex(role)];
      into.insert(into.end(), series_.points.begin(), series_.points.end());
    }
    scratch_.swap(series_.points);  // its room kept for the next series
  }

 public:
  // Each role's points in time order, equal times folded (in arrival order: the sums are those
  // of adding series after series), without spare room.
  void finish() {
    for (auto& [key, roles] : cells)
      for (std::size_t r = 0; r < kRoles; ++r) {
        fold(roles[r], r == roleIndex(PromRole::P99));
        roles[r].shrink_to_fit();
      }
  }

 private:
  const FieldMap& map_;
  const std::string& name_;
  PromRole role_;
  bool collect_;
  const PromMatrixJoin::BadSeries* emit_;
  std::array<std::string, kLabels> labelNames_;
  unsigned labelHits_ = 0;  // the labels the key just read names (bit i: LabelIndex i)
  std::vector<Frame> frames_;
  std::uint64_t skip_ = 0;  // depth inside a skipped value
  std::string key_;
  bool rootObject_ = false;
  Field status_, error_, data_, resultType_, result_;
  Series series_;
  Pair pair_;
  Points scratch_;
  std::size_t seriesCount_ = 0;
};

}  // namespace

// The joined points go out in (end, instance, model) order: a k-way merge over the keys, each
// walking its roles' points in time order.
struct PromMatrixJoin::Impl {
  FieldMap map;
  Cells cells;
  struct Cursor {
    const Key* key = nullptr;
    const std::array<Points, kRoles>* roles = nullptr;
    std::array<std::size_t, kRoles> at{};
    std::size_t rank = 0;  // the key's place in (instance, model) order
    Micros prev = kNever, prevStep = 0;
    Micros next() const {
      Micros t = kForever;
      for (std::size_t r = 0; r < kRoles; ++r)
        if (at[r] < (*roles)[r].size()) t = std::min(t, (*roles)[r][at[r]].first);
      return t;
    }
  };
  struct Later {
    bool operator()(const std::pair<Micros, Cursor*>& a,
                    const std::pair<Micros, Cursor*>& b) const {
      return a.first != b.first ? a.first > b.first : a.second->rank > b.second->rank;
    }
  };
  std::vector<Cursor> cursors;
  std::priority_queue<std::pair<Micros, Cursor*>, std::vector<std::pair<Micros, Cursor*>>, Later>
      heap;
  bool merging = false;

  void startMerge() {
    heap = {};
    cursors.clear();
    cursors.reserve(cells.size());
    for (const auto& [key, roles] : cells) {
      Cursor c;
      c.key = &key;
      c.roles = &roles;
      c.rank = cursors.size();
      cursors.push_back(c);
    }
    for (Cursor& c : cursors)
      if (const Micros t = c.next(); t != kForever) heap.emplace(t, &c);
    merging = true;
  }

  bool next(PromPoint& out, Micros knownStep) {
    if (!merging) startMerge();
    if (heap.empty()) {
      merging = false;
      std::vector<Cursor>().swap(cursors);
      cells.clear();
      return false;
    }
    const auto [t, c] = heap.top();
    heap.pop();
    double v[kRoles];
    for (std::size_t r = 0; r < kRoles; ++r) {
      const Points& p = (*c->roles)[r];
      const bool here = c->at[r] < p.size() && p[c->at[r]].first == t;
      v[r] = here ? p[c->at[r]++].second : -1;
    }
    const Micros following = c->next();
    Micros step = knownStep ? knownStep : c->prev == kNever ? c->prevStep : t - c->prev;
    // The first step of a series is only known from the second timestamp.
    if (!knownStep && c->prev == kNever && following != kForever) step = following - t;
    c->prev = t;
    c->prevStep = step;
    if (following != kForever) heap.emplace(following, c);
    out.end = t;
    out.step = step;
    out.instance.assign(c->key->first);
    out.model.assign(c->key->second);
    out.calls = v[roleIndex(PromRole::Calls)];
    out.failures = v[roleIndex(PromRole::Failures)];
    out.slow = v[roleIndex(PromRole::Slow)];
    out.p99 = v[roleIndex(PromRole::P99)];
    return true;
  }
};

PromMatrixJoin::PromMatrixJoin(const FieldMap& userMap) : d_(std::make_unique<Impl>()) {
  d_->map = detail::effectiveMap(Format::Prometheus, userMap);
}

PromMatrixJoin::~PromMatrixJoin() = default;

const FieldMap& PromMatrixJoin::map() const {
  return d_->map;
}

// Pass one keeps the good series and counts the bad; the response as a whole is judged at its
// end (its "status" may come last). Only then are bad series reported, in order, by a second
// pass: reporting them as they came would report series of a response that then turns out
// not to be one.
void PromMatrixJoin::add(std::string_view body, const std::string& name, PromRole role,
                         const BadSeries& badSeries) {
  // Points added under a merge half taken would go out of order or be lost.
  if (d_->merging) throw std::logic_error("PromMatrixJoin::add while its points are being taken");
  // nlohmann's reader takes a NUL byte for the end of its input: what follows one would be
  // dropped unread. JSON text has no place for one.
  if (const auto nul = body.find('\0'); nul != body.npos)
    throw InputError(name, 1, "", "invalid JSON: a NUL byte at offset " + std::to_string(nul));
  MatrixReader pass(d_->map, name, role, true, nullptr);
  nlohmann::json::sax_parse(body.begin(), body.end(), &pass);
  if (pass.syntaxError) throw InputError(name, 1, "", "invalid JSON: " + *pass.syntaxError);
  pass.checkTop();
  if (pass.anyBad) {
    if (!badSeries) throw *pass.firstBad;
    MatrixReader report(d_->map, name, role, false, &badSeries);
    nlohmann::json::sax_parse(body.begin(), body.end(), &report);
  }
  pass.finish();
  mergeCells(d_->cells, std::move(pass.cells));
}

bool PromMatrixJoin::next(PromPoint& out, Micros knownStep) {
  return d_->next(out, knownStep);
}

std::vector<PromPoint> PromMatrixJoin::take(Micros knownStep) {
  std::vector<PromPoint> out;
  PromPoint p;
  while (next(p, knownStep)) out.push_back(p);
  return out;
}

namespace detail {
namespace {

class PromSource final : public RecordSource {
 public:
  PromSource(std::string name, const std::string& text, const ImportOptions& opt)
      : RecordSource(std::move(name), opt.skipBadLines), join_(opt.map) {
    join_.add(text, source_, PromRole::FromLabel, [this](const InputError& e) { reject(e); });
  }
  bool aggregates() const override { return true; }
  bool next(CallRecord&) override { return false; }
  // The joined points one at a time (views into `p_`, valid until the next read).
  bool nextAggregate(AggregateSample& s) override {
    while (join_.next(p_)) {
      if (!valid()) continue;
      // (Several series of an instance add up: their sum may pass one series' bound.)
      auto count = [](double v) {
        return static_cast<std::uint32_t>(std::llround(std::min(v, kMaxPerStep)));
      };
      s = AggregateSample{};
      s.end = p_.end;
      s.step = p_.step;
      s.instance = p_.instance;
      s.model = p_.model;
      s.calls = count(p_.calls);
      s.failures = p_.failures < 0 ? 0 : count(p_.failures);
      s.slow = p_.slow < 0 ? -1 : static_cast<std::int64_t>(count(p_.slow));
      s.line = 1;
      return true;
    }
    return false;
  }

 private:
  // A sample needs its calls, and holds no more failures or slow calls than calls.
  bool valid() {
    const FieldMap& map = join_.map();
    const std::string at = std::to_string(static_cast<double>(p_.end) / 1e6);
    if (p_.calls < 0) {
      reject(InputError(source_, 1, map.at("calls"),
                        "no calls series for instance '" + p_.instance + "' at " + at));
      return false;
    }
    if (p_.failures > p_.calls || p_.slow > p_.calls) {
      const bool fails = p_.failures > p_.calls;
      reject(InputError(source_, 1, map.at(fails ? "failures" : "slow"),
                        std::string(fails ? "failures" : "slow calls") + " (" +
                            std::to_string(std::llround(fails ? p_.failures : p_.slow)) +
                            ") over the calls (" + std::to_string(std::llround(p_.calls)) +
                            ") of instance '" + p_.instance + "' at " + at));
      return false;
    }
    return true;
  }

  PromMatrixJoin join_;
  PromPoint p_;
};

}  // namespace

std::unique_ptr<RecordSource> makePrometheus(std::string name, std::string text,
                                             const ImportOptions& opt) {
  return std::make_unique<PromSource>(std::move(name), text, opt);  // `text` ends here
}

}  // namespace detail
}  // namespace spillway::formats
