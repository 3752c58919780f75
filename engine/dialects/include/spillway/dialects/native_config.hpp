#pragma once
// Reading other gateways' configuration files in their own key names and units. Built on
// YamlReader (JSON is read as YAML flow style), so every error is `file:line: field: what`.
// Internal to the dialects.
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_limits.hpp"
#include "spillway/yaml_reader.hpp"

namespace spillway::dialects {

// Targets spell one key several ways (Spring relaxed binding: failureRateThreshold,
// failure-rate-threshold; proto JSON: consecutive_5xx, consecutive5xx, base_ejection_time,
// baseEjectionTime). The canonical form drops '-' and '_' and upper-cases the letter after
// them; otherwise case matters (JavaScript and Java keys are case-sensitive).
inline std::string canonicalKey(std::string_view k) {
  std::string s;
  bool up = false;
  for (char c : k) {
    if (c == '-' || c == '_') {
      up = !s.empty();
      continue;
    }
    s += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return s;
}

// Unit a bare number is read in, when the target allows bare numbers for a duration.
enum class BareUnit : std::uint8_t { None, Millis, Seconds };

class NativeReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  // The value of `key` (in any spelling) in `map`, or an undefined node (false in a test;
  // a default-constructed YAML::Node is a defined null and would read as present).
  static YAML::Node get(const YAML::Node& map, std::string_view key) {
    if (!map || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const std::string want = canonicalKey(key);
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && canonicalKey(it->first.Scalar()) == want) return it->second;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // Unknown keys are errors (as in Spillway's own files), except `known` ones the target
  // accepts but the emulation does not model: those are listed in `ignored` for the report.
  void checkNative(const YAML::Node& map, const std::string& path,
                   std::initializer_list<std::string_view> emulated,
                   std::initializer_list<std::string_view> known = {},
                   std::vector<std::string>* ignored = nullptr) const {
    if (!map.IsMap()) fail(map.Mark(), path, "expected a mapping of keys");
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = keyOf(it->first, path);
      const std::string c = canonicalKey(k);
      if (!seen.insert(c).second) fail(it->first.Mark(), join(path, k), "duplicate key");
      bool ok = false;
      for (auto a : emulated) ok = ok || canonicalKey(a) == c;
      if (ok) continue;
      for (auto a : known) ok = ok || canonicalKey(a) == c;
      if (ok) {
        if (ignored) ignored->push_back(join(path, k));
        continue;
      }
      std::string list;
      for (auto a : emulated) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(it->first.Mark(), join(path, k), "unknown key (emulated: " + list + ")");
    }
  }

  // Names (instances, configs) are keys of their own map: each at most once, as written.
  void uniqueKeys(const YAML::Node& map, const std::string& path) const {
    if (!map || !map.IsMap()) return;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = keyOf(it->first, path);
      if (!seen.insert(k).second) fail(it->first.Mark(), join(path, k), "duplicate key");
    }
  }

  // A number; proto wrappers written as {value: N} are unwrapped.
  double num(const YAML::Node& n, const std::string& key, double lo, double hi) const {
    if (n.IsMap()) {
      const YAML::Node v = get(n, "value");
      if (!v) fail(n.Mark(), key, "expected a number or {value: N}");
      return num(v, key, lo, hi);
    }
    return number(n, key, lo, hi, false, false);
  }
  long whole(const YAML::Node& n, const std::string& key, long lo, long hi) const {
    if (n.IsMap()) {
      const YAML::Node v = get(n, "value");
      if (!v) fail(n.Mark(), key, "expected a whole number or {value: N}");
      return whole(v, key, lo, hi);
    }
    return static_cast<long>(count(n, key, lo, hi));
  }

  // Durations as the target writes them: "10s", "500ms", "1.5s", "5m", "1h", "2d", ISO-8601
  // "PT10S" (Spring), proto {seconds, nanos}, or a bare number in `bare` units.
  Micros dur(const YAML::Node& n, const std::string& key, BareUnit bare, Micros lo = 0) const {
    Micros v = 0;
    if (n.IsMap()) {
      const double s = get(n, "seconds") ? num(get(n, "seconds"), key + ".seconds", 0, 1e12) : 0;
      const double ns = get(n, "nanos") ? num(get(n, "nanos"), key + ".nanos", 0, 1e9) : 0;
      v = static_cast<Micros>(s * 1e6 + ns / 1e3);
    } else {
      const std::string s = scalar(n, key);
      const auto parsed = parseNativeDuration(s, bare);
      if (!parsed)
        fail(n.Mark(), key, "expected a duration (e.g. 500ms, 10s, 5m), got '" + s + "'");
      v = *parsed;
    }
    if (v < lo) fail(n.Mark(), key, "must be at least " + formatDuration(lo));
    return v;
  }

  static std::optional<Micros> parseNativeDuration(std::string_view s, BareUnit bare) {
    if (s.empty()) return std::nullopt;
    if (s.size() > 2 && (s[0] == 'P' || s[0] == 'p') && (s[1] == 'T' || s[1] == 't'))
      return parseIso(s.substr(2));
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double v = 0;
    try {
      v = std::stod(std::string(s.substr(0, i)));
    } catch (...) {
      return std::nullopt;
    }
    const std::string_view unit = s.substr(i);
    double mul = 0;
    if (unit.empty()) {
      if (bare == BareUnit::None) return std::nullopt;
      mul = bare == BareUnit::Millis ? 1e3 : 1e6;
    } else if (unit == "ns") {
      mul = 1e-3;
    } else if (unit == "us") {
      mul = 1;
    } else if (unit == "ms") {
      mul = 1e3;
    } else if (unit == "s") {
      mul = 1e6;
    } else if (unit == "m") {
      mul = 60e6;
    } else if (unit == "h") {
      mul = 3600e6;
    } else if (unit == "d") {
      mul = 86400e6;
    } else {
      return std::nullopt;
    }
    return static_cast<Micros>(std::llround(v * mul));
  }

 private:
  // "1H2M3.5S" after the "PT".
  static std::optional<Micros> parseIso(std::string_view s) {
    double total = 0;
    std::size_t i = 0;
    bool any = false;
    while (i < s.size()) {
      std::size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      if (j == i || j == s.size()) return std::nullopt;
      const double v = std::stod(std::string(s.substr(i, j - i)));
      switch (std::toupper(static_cast<unsigned char>(s[j]))) {
        case 'H':
          total += v * 3600e6;
          break;
        case 'M':
          total += v * 60e6;
          break;
        case 'S':
          total += v * 1e6;
          break;
        default:
          return std::nullopt;
      }
      any = true;
      i = j + 1;
    }
    if (!any) return std::nullopt;
    return static_cast<Micros>(std::llround(total));
  }
};

// Reads a whole document; syntax errors carry the line.
inline YAML::Node loadNative(std::string_view text, const std::string& source) {
  checkInputSize(text, source, input_limits::kNativeConfig, "gateway config file");
  return loadYamlText(text, source);
}

// The same for a stream of manifests (`---` between them): every document, in order.
inline std::vector<YamlDocument> loadNativeDocuments(std::string_view text,
                                                     const std::string& source) {
  checkInputSize(text, source, input_limits::kNativeConfig, "gateway config file");
  return loadYamlDocuments(text, source);
}

}  // namespace spillway::dialects
