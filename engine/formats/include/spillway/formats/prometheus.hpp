#pragma once
// Prometheus HTTP API query_range results ({"status":"success","data":{"resultType":"matrix",
// "result":[{"metric":{...},"values":[[<unix s>,"<value>"],...]}]}}) as per-interval aggregate
// samples: calls, failures and slow calls per instance per step.
//
// Each series plays one role, read from a label (field `series`, default `__name__`) whose
// value is the role's name (fields `calls`, `failures`, `slow`; defaults "calls", "failures",
// "slow"); the instance comes from label `instance` and the model from label `model`. Values
// are counts over the step ending at the timestamp (`increase(x[STEP])`), e.g.
//   label_replace(sum by (instance) (increase(llm_requests_total[15s])), "__name__", "calls", "",
//   "") or label_replace(sum by (instance) (increase(llm_requests_total{code=~"5.."}[15s])), ...)
// A sample without a calls series is an error; failures default to 0, slow to unknown (-1).
//
// The importer (Format::Prometheus) reads one response whose series carry their role. The live
// puller (app/live, `listen --prometheus`) asks one PromQL expression per role and joins the
// answers with the same parser: PromMatrixJoin below.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"

namespace spillway::formats {

// What the series of a response count. FromLabel: each series names its role in the `series`
// label (the importer). The others: every series of the response plays that role (one PromQL
// expression per role). P99 is for display only; it never reaches the engine.
enum class PromRole { FromLabel, Calls, Failures, Slow, P99 };

// "series", "calls", "failures", "slow", "p99".
std::string_view promRoleName(PromRole r);

// One (instance, model) over (end - step, end]. A role without a point at `end` is -1 (NaN and
// ±Inf points count as none: Prometheus writes them for "no data").
struct PromPoint {
  Micros end = 0;
  Micros step = 0;
  std::string instance, model;
  double calls = -1, failures = -1, slow = -1, p99 = -1;
};

// Joins query_range responses per (instance, model, time). Labels are those of the effective
// Format::Prometheus field map (docs/formats.md): `instance`, `model`, and for FromLabel the
// `series` label with the role values.
class PromMatrixJoin {
 public:
  explicit PromMatrixJoin(const FieldMap& userMap = {});
  ~PromMatrixJoin();
  PromMatrixJoin(const PromMatrixJoin&) = delete;
  PromMatrixJoin& operator=(const PromMatrixJoin&) = delete;

  // A bad series (unknown role, no instance label, a malformed point): where it is reported.
  // Unset, it is thrown; set, the series is skipped after the call.
  using BadSeries = std::function<void(const InputError&)>;

  // Parses one response body. Anything that is not a query_range matrix response, and a
  // "status":"error" response, throws InputError(name, 1, field, what) before any series is
  // kept: `status: the query failed: <Prometheus's error>`. Bad series are reported only once
  // the response as a whole is known to be one. Memory: 16 bytes a kept point.
  void add(std::string_view body, const std::string& name, PromRole role,
           const BadSeries& badSeries = {});

  // Every joined point, sorted by (end, instance, model); then empty again. The step is
  // `knownStep` when non-zero, else the distance to the previous timestamp of the (instance,
  // model) over all its roles (the first takes the second's; a lone point has step 0).
  std::vector<PromPoint> take(Micros knownStep = 0);
  // take()'s points one at a time, without building them all (an import's millions): false
  // when none is left, the join then empty again. add() before that throws std::logic_error.
  bool next(PromPoint& out, Micros knownStep = 0);
  const FieldMap& map() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace spillway::formats
