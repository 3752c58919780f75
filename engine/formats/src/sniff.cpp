#include "spillway/formats/sniff.hpp"

#include "spillway/input_limits.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <set>

namespace spillway::formats {
namespace {

bool hasAny(const std::set<std::string, std::less<>>& keys,
            std::initializer_list<std::string_view> want, std::string& found) {
  bool any = false;
  for (std::string_view k : want)
    if (keys.count(k)) {
      found += (found.empty() ? "" : ", ") + std::string(k);
      any = true;
    }
  return any;
}

std::string listKeys(const std::set<std::string, std::less<>>& keys) {
  std::string s;
  std::size_t n = 0;
  for (const auto& k : keys) {
    if (++n > 8) {
      s += ", ...";
      break;
    }
    s += (s.empty() ? "" : ", ") + k.substr(0, 40);
  }
  return s.empty() ? std::string("no keys") : "keys " + s;
}

}  // namespace

Sniffed sniffFormat(std::string_view head) {
  Sniffed out;
  // The first line with something on it.
  std::string_view line;
  std::size_t pos = 0;
  long lineNo = 0;
  while (pos < head.size()) {
    const std::size_t nl = head.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? head.size() : nl;
    ++lineNo;
    std::string_view l = head.substr(pos, end - pos);
    pos = end + 1;
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t' || l.front() == '\r'))
      l.remove_prefix(1);
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r'))
      l.remove_suffix(1);
    if (!l.empty()) {
      line = l;
      break;
    }
  }
  if (line.empty()) {
    out.why = "no line to look at";
    return out;
  }
  out.line = lineNo;
  if (line.front() == '{') {
    simdjson::dom::parser parser;
    simdjson::dom::object obj;
    const simdjson::padded_string text(line);
    if (parser.parse(text).get(obj) != simdjson::SUCCESS) {
      // Not one object per line: a document over several lines (OTLP, Prometheus).
      const bool otlp = head.find("\"resourceSpans\"") != std::string_view::npos;
      const bool prom = head.find("\"resultType\"") != std::string_view::npos;
      if (otlp != prom) {
        out.format = otlp ? Format::Otlp : Format::Prometheus;
        out.why = otlp ? "a JSON document with resourceSpans" : "a JSON document with resultType";
      } else {
        out.why = "a JSON document that is not one object per line";
      }
      return out;
    }
    std::set<std::string, std::less<>> keys;
    for (auto field : obj) keys.emplace(field.key);
    std::string otlpK, promK, nginxK, envoyK, haproxyK, jsonlK;
    const bool otlp = hasAny(keys, {"resourceSpans"}, otlpK);
    const bool prom = hasAny(keys, {"resultType"}, promK) ||
                      (keys.count("status") && keys.count("data") && !keys.count("instance") &&
                       hasAny(keys, {"data"}, promK));
    const bool nginx = hasAny(
        keys,
        {"msec", "request_time", "upstream_addr", "upstream_status", "upstream_response_time"},
        nginxK);
    const bool envoy =
        hasAny(keys, {"start_time", "upstream_host", "response_code", "response_flags"}, envoyK);
    // HAProxy's own timer names, as the export's log-format writes them.
    const bool haproxy =
        keys.count("Ta") && hasAny(keys, {"Ta", "Ti", "Th", "accept_ms"}, haproxyK);
    const bool jsonl = keys.count("instance") && keys.count("latency_ms") &&
                       hasAny(keys, {"instance", "latency_ms"}, jsonlK);
    const int n = otlp + prom + nginx + envoy + haproxy + jsonl;
    if (n != 1) {
      out.why = listKeys(keys) + (n ? " (keys of several formats)" : "");
      return out;
    }
    if (otlp) out.format = Format::Otlp, out.why = "keys " + otlpK;
    if (prom) out.format = Format::Prometheus, out.why = "keys " + promK;
    if (nginx) out.format = Format::Nginx, out.why = "keys " + nginxK;
    if (envoy) out.format = Format::Envoy, out.why = "keys " + envoyK;
    if (haproxy) out.format = Format::Haproxy, out.why = "keys " + haproxyK;
    if (jsonl) out.format = Format::Jsonl, out.why = "keys " + jsonlK;
    return out;
  }
  if (line.find(',') != std::string_view::npos) {
    // A CSV header names its columns; a canonical one among them makes it certain.
    std::set<std::string, std::less<>> cols;
    std::size_t b = 0;
    while (b <= line.size()) {
      std::size_t e = line.find(',', b);
      if (e == std::string_view::npos) e = line.size();
      std::string_view c = line.substr(b, e - b);
      while (!c.empty() && (c.front() == ' ' || c.front() == '"')) c.remove_prefix(1);
      while (!c.empty() && (c.back() == ' ' || c.back() == '"')) c.remove_suffix(1);
      cols.emplace(c);
      b = e + 1;
    }
    std::string found;
    if (hasAny(cols, {"instance", "status", "latency_ms"}, found)) {
      out.format = Format::Csv;
      out.why = "a header with " + found;
      return out;
    }
    out.why = "a comma-separated line without a canonical column (instance, status, latency_ms)";
    return out;
  }
  out.why = "a line that is neither JSON nor a CSV header";
  return out;
}

Sniffed sniffFile(const std::string& path) {
  Sniffed out;
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) {
    out.why = "not a regular file";
    return out;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    out.why = "cannot open";
    return out;
  }
  // 64 KiB, or more until the first line ends (up to a line's limit): an nginx line with a
  // long upstream list must be judged by its keys, not as a document cut short.
  std::string head;
  std::size_t want = 64 * 1024;
  for (;;) {
    const std::size_t had = head.size();
    head.resize(want);
    head.resize(had + std::fread(head.data() + had, 1, want - had, f));
    if (head.size() < want || head.find('\n') != std::string::npos || want >= input_limits::kLine)
      break;
    want = std::min(2 * want, input_limits::kLine);
  }
  std::fclose(f);
  return sniffFormat(head);
}

std::optional<Format> nonCanonicalFormat(const std::string& path) {
  const std::optional<Format> f = sniffFile(path).format;
  if (f == Format::Jsonl) return std::nullopt;
  return f;
}

}  // namespace spillway::formats
