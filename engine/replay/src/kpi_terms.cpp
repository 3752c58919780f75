#include "spillway/kpi_terms.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include "spillway/input_error.hpp"
#include "spillway/time.hpp"

namespace spillway {
namespace {

std::string_view trim(std::string_view s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// A number followed by `suffix` (or nothing); nullopt when anything else follows.
std::optional<double> number(std::string_view s, std::string_view suffix) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  const std::string_view rest = trim(s.substr(static_cast<std::size_t>(end - s.data())));
  if (!rest.empty() && rest != suffix) return std::nullopt;
  return v;
}

std::string names(std::span<const KpiMetric> metrics) {
  std::string out;
  for (const KpiMetric& m : metrics) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

KpiTerm parseTerm(std::string_view term, const std::string& source, const KpiGrammar& g) {
  KpiTerm t;
  t.text = std::string(term);
  auto fail = [&](const std::string& what) { throw InputError(source, 0, t.text, what); };
  const std::size_t at = term.find_first_of("<>");
  const bool orEqual = at != std::string_view::npos && at + 1 < term.size() && term[at + 1] == '=';
  if (at == std::string_view::npos || (!g.strictOps && !orEqual))
    fail(g.strictOps ? "expected METRIC<=VALUE (or <, >=, >)"
                     : "expected METRIC<=VALUE or METRIC>=VALUE");
  const bool upper = term[at] == '<';
  t.op = upper ? (orEqual ? KpiOp::Le : KpiOp::Lt) : (orEqual ? KpiOp::Ge : KpiOp::Gt);
  const std::string_view name = trim(term.substr(0, at));
  const std::string_view value = trim(term.substr(at + (orEqual ? 2 : 1)));
  const KpiMetric* m = nullptr;
  for (const KpiMetric& k : g.metrics)
    if (k.name == name) m = &k;
  if (!m) fail("unknown metric '" + std::string(name) + "' (expected " + names(g.metrics) + ")");
  t.id = m->id;
  if (upper ? !m->upperBound : !m->lowerBound)
    fail(std::string(m->name) + (upper ? " takes >=" : " takes <="));
  if (value.empty()) fail("not a value: the value is missing");
  // "not a value" when it does not read as one, "out of range" when it reads but cannot be.
  const auto check = [&](std::optional<double> v, bool inRange, const char* expected) {
    if (!v) fail("not a value: '" + std::string(value) + "' (expected " + expected + ")");
    if (!inRange) fail("out of range: '" + std::string(value) + "' (expected " + expected + ")");
    return *v;
  };
  std::optional<double> v;
  switch (m->kind) {
    case KpiKind::Share:
      if ((v = number(value, "%")) && value.back() == '%') *v /= 100;
      v = check(v, v && *v >= 0 && *v <= 1, "a share between 0 and 1, such as 0.03 or 3%");
      break;
    case KpiKind::Duration:
      if (const auto d = parseDuration(value)) v = static_cast<double>(*d);
      v = check(v, v && *v >= 0, "a duration with a unit: 30s, 1500ms, 2m");
      break;
    case KpiKind::PerHour:
      v = number(value, "/h");
      v = check(v, v && *v >= 0, "a rate per hour: 0.5 or 0.5/h");
      break;
    case KpiKind::Count:
      v = number(value, "");
      v = check(v, v && *v >= 0 && *v == std::floor(*v), "a whole number, 0 or more");
      break;
    case KpiKind::Number:
      v = number(value, "");
      v = check(v, v && *v >= 0, "a number, 0 or more");
      break;
  }
  t.value = *v;
  return t;
}

}  // namespace

std::vector<KpiTerm> parseKpiTerms(std::string_view text, const std::string& source,
                                   const KpiGrammar& grammar) {
  std::vector<KpiTerm> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view term = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (term.empty()) {
      if (comma == text.size()) break;  // the end, or a trailing comma
      throw InputError(source, 0, "", "empty term (expected e.g. fp<=0.03,ttd<=30s)");
    }
    out.push_back(parseTerm(term, source, grammar));
  }
  return out;
}

bool satisfies(double actual, KpiOp op, double bound) {
  switch (op) {
    case KpiOp::Le:
      return actual <= bound;
    case KpiOp::Lt:
      return actual < bound;
    case KpiOp::Ge:
      return actual >= bound;
    case KpiOp::Gt:
      return actual > bound;
  }
  return false;
}

}  // namespace spillway
