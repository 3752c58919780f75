#pragma once
// One grammar for bounds on KPIs, shared by `calibrate --target`, `export --require` and the
// console's dialogs: "fp<=0.03, ttd<=30s, mttr<2m, opens>=1". A term is NAME OP VALUE with OP
// one of <=, <, >=, >; the value is read by the metric's kind (a share as 0.03 or 3 %, a
// duration with its unit, a rate per hour, a whole count, a plain number). Each caller brings
// its vocabulary: the metrics it knows, their kinds and the bounds they take.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spillway {

enum class KpiKind : std::uint8_t {
  Share,     // 0 … 1, or a percentage: 0.03, 3%
  Duration,  // with a unit: 30s, 1500ms, 2m (µs)
  PerHour,   // 0.5 or 0.5/h
  Count,     // a whole number
  Number,    // any number ≥ 0
};
enum class KpiOp : std::uint8_t { Le, Lt, Ge, Gt };

struct KpiMetric {
  std::string_view name;
  int id;  // the caller's enum value
  KpiKind kind;
  bool upperBound = true;  // takes <= / <
  bool lowerBound = true;  // takes >= / >
};

struct KpiTerm {
  int id = 0;
  KpiOp op = KpiOp::Le;
  double value = 0;  // a share, µs, per hour, a count or a number, by the metric's kind
  std::string text;  // the term as written
};

struct KpiGrammar {
  std::span<const KpiMetric> metrics;
  bool strictOps = true;  // false: only <= and >= (calibration's "at most" / "at least")
};

// Parses a comma list; a trailing comma is allowed, an empty term in between is not. Throws
// InputError(source, 0, term, what) naming the bad term; an empty list is no error (the caller
// decides whether it needs a term).
std::vector<KpiTerm> parseKpiTerms(std::string_view text, const std::string& source,
                                   const KpiGrammar& grammar);

// Whether `actual` satisfies the term's bound.
bool satisfies(double actual, KpiOp op, double bound);

}  // namespace spillway
