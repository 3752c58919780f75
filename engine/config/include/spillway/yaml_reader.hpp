#pragma once
// Shared YAML reading helpers for Spillway's input files. Only sources that parse YAML include
// this (it pulls in yaml-cpp).
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/policy.hpp"
#include "spillway/time.hpp"

namespace spillway {

// Reads one YAML document (policy, scenario); remembers the file name for messages, so every
// error reads `file:line: key: what is wrong`. Unknown and duplicate keys are errors.
class YamlReader {
 public:
  // `firstLine`: the line of the file where the document read starts (0-based), for a
  // document cut from a stream of several (its nodes' marks count from its own start).
  explicit YamlReader(std::string source, int firstLine = 0)
      : source_(std::move(source)), firstLine_(firstLine) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& key,
                         const std::string& what) const {
    throw InputError(source_, mark.is_null() ? 0 : firstLine_ + mark.line + 1, key, what);
  }

  // A required key of `map` (at `path`), or an error at the map.
  YAML::Node need(const YAML::Node& map, const std::string& k, const std::string& path) const {
    const YAML::Node v = map[k];
    if (!v) fail(map.Mark(), join(path, k), "required key is missing");
    return v;
  }

  void requireMap(const YAML::Node& n, const std::string& key) const {
    if (!n.IsMap()) fail(n.Mark(), key, "expected a mapping of keys");
  }

  // Unknown keys are errors: a typo must not silently fall back to a default.
  void checkKeys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<std::string_view> allowed) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = keyOf(it->first, path);
      // yaml-cpp keeps the first of two equal keys; a second one is a mistake, say so.
      if (!seen.insert(k).second) fail(it->first.Mark(), join(path, k), "duplicate key");
      bool ok = false;
      for (auto a : allowed) ok = ok || a == k;
      if (!ok) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(it->first.Mark(), join(path, k), "unknown key (expected one of: " + list + ")");
      }
    }
  }

  // The name of a mapping key. YAML allows a list or a mapping as a key (`? [a]`); no Spillway
  // file uses one, so it is a named error here rather than a YAML::TypedBadConversion later.
  std::string keyOf(const YAML::Node& key, const std::string& path) const {
    if (key.IsScalar()) return text(key, path);
    YAML::Emitter e;
    e << YAML::Flow << key;
    std::string shown = e.good() ? std::string(e.c_str()) : std::string("?");
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    fail(key.Mark(), join(path, shown),
         std::string("a key must be a plain name, not ") + kindOf(key) + " (`? ...` complex key)");
  }

  // "a list", "a mapping", "nothing", "a value": for messages.
  static const char* kindOf(const YAML::Node& n) {
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a mapping";
    if (n.IsNull() || !n.IsDefined()) return "nothing";
    return "a value";
  }

  // Where key `k` is written in `map` (for checks that involve several keys), or where the
  // map starts when the key is absent.
  static YAML::Mark keyMark(const YAML::Node& map, const std::string& k) {
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == k) return it->first.Mark();
    return map.Mark();
  }

  static std::string join(const std::string& path, const std::string& k) {
    return path.empty() ? k : path + "." + k;
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n.Mark(), key, "expected a single value");
    return text(n, key);
  }

  // A scalar as text: valid UTF-8. Names are written back (policyToYaml, exports), and bytes
  // that are not text do not survive the trip.
  std::string text(const YAML::Node& n, const std::string& key) const {
    const std::string& s = n.Scalar();
    if (!isText(s)) fail(n.Mark(), key, "not text: invalid UTF-8");
    return s;
  }

  double number(const YAML::Node& n, const std::string& key, double lo, double hi, bool loOpen,
                bool hiOpen = false) const {
    const std::string s = scalar(n, key);
    double v;
    if (!YAML::convert<double>::decode(n, v) || !std::isfinite(v))
      fail(n.Mark(), key, "expected a number, got '" + s + "'");
    const bool below = loOpen ? v <= lo : v < lo;
    const bool above = hiOpen ? v >= hi : v > hi;
    if (below || above) {
      std::ostringstream os;
      os << "must be in " << (loOpen ? "(" : "[") << lo << ", " << hi << (hiOpen ? ")" : "]")
         << ", got " << s;
      fail(n.Mark(), key, os.str());
    }
    return v;
  }

  std::uint32_t count(const YAML::Node& n, const std::string& key, long lo, long hi) const {
    const std::string s = scalar(n, key);
    long v;
    if (!YAML::convert<long>::decode(n, v))
      fail(n.Mark(), key, "expected a whole number, got '" + s + "'");
    if (v < lo || v > hi)
      fail(n.Mark(), key,
           "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
    return static_cast<std::uint32_t>(v);
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string s = scalar(n, key);
    bool v;
    if (!YAML::convert<bool>::decode(n, v))
      fail(n.Mark(), key, "expected true or false, got '" + s + "'");
    return v;
  }

  // Durations must carry a unit. `allowOff` accepts "off" / 0 as 0.
  Micros duration(const YAML::Node& n, const std::string& key, Micros lo, bool allowOff = false,
                  bool loOpen = false) const {
    const std::string s = scalar(n, key);
    if (allowOff && s == "off") return 0;
    if (s == "0") {  // zero needs no unit, but must be allowed
      if (lo <= 0 && !loOpen) return 0;
      fail(n.Mark(), key,
           std::string("must be ") + (loOpen ? "greater than " : "at least ") + formatDuration(lo) +
               ", got 0");
    }
    const auto d = parseDuration(s);
    if (!d)
      fail(n.Mark(), key, "expected a duration with a unit (e.g. 800ms, 10s, 5m), got '" + s + "'");
    if (loOpen ? *d <= lo : *d < lo)
      fail(n.Mark(), key,
           std::string("must be ") + (loOpen ? "greater than " : "at least ") + formatDuration(lo) +
               ", got " + s);
    return *d;
  }

  template <typename E>
  E choice(const YAML::Node& n, const std::string& key,
           std::initializer_list<std::pair<std::string_view, E>> options) const {
    const std::string s = scalar(n, key);
    std::string list;
    for (const auto& [name, value] : options) {
      if (name == s) return value;
      list += (list.empty() ? "" : ", ") + std::string(name);
    }
    fail(n.Mark(), key, "expected one of " + list + ", got '" + s + "'");
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  int firstLine_ = 0;
};

// Parses text to a node; YAML syntax errors become InputError with the line. One document: a
// second one (after ---) is an error.
YAML::Node loadYamlText(std::string_view text, const std::string& source);
// One document of a stream that may hold several (Kubernetes manifests): its node, and the line
// of the file (0-based) where its text starts — a YamlReader's `firstLine` for its errors.
struct YamlDocument {
  YAML::Node node;
  int firstLine = 0;
};
// Every document of such a stream that holds something, in order.
std::vector<YamlDocument> loadYamlDocuments(std::string_view text, const std::string& source);

// Parses a policy document already loaded as a node (e.g. inline in a scenario file); line
// numbers in errors are those of the enclosing file.
Policy parsePolicyNode(const YAML::Node& root, const std::string& source);

}  // namespace spillway
