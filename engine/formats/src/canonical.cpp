#include "spillway/formats/canonical.hpp"

#include <charconv>

namespace spillway::formats {

void appendMillis(std::string& out, Micros us) {
  if (us < 0) {
    out.push_back('-');
    us = -us;  // kNever is never written: times are validated on the way in
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, us / 1000);
  out.append(buf, end);
  int frac = static_cast<int>(us % 1000);
  if (frac) {
    char f[4] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10), 0};
    int n = 3;
    while (f[n - 1] == '0') --n;
    out.push_back('.');
    out.append(f, static_cast<std::size_t>(n));
  }
}

void appendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (c < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

namespace {
void appendInt(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}
}  // namespace

void appendCallJson(std::string& out, const CallRecord& r) {
  out.append("{\"ts\":");
  appendMillis(out, r.ts);
  out.append(",\"instance\":");
  appendJsonString(out, r.instance);
  if (!r.model.empty()) {
    out.append(",\"model\":");
    appendJsonString(out, r.model);
  }
  out.append(",\"latency_ms\":");
  appendMillis(out, r.latency);
  out.append(",\"status\":");
  appendInt(out, r.status);
  out.append(",\"outcome\":\"").append(outcomeName(r.outcome)).append("\"");
  for (auto [key, v] : {std::pair{",\"tenant\":", r.tenant}, std::pair{",\"route\":", r.route},
                        std::pair{",\"session\":", r.session}}) {
    if (v.empty()) continue;
    out.append(key);
    appendJsonString(out, v);
  }
  if (r.critical) out.append(*r.critical ? ",\"critical\":true" : ",\"critical\":false");
  if (r.tokensIn >= 0) {
    out.append(",\"tokens_in\":");
    appendInt(out, r.tokensIn);
  }
  if (r.tokensOut >= 0) {
    out.append(",\"tokens_out\":");
    appendInt(out, r.tokensOut);
  }
  if (r.ttfb >= 0) {
    out.append(",\"ttfb_ms\":");
    appendMillis(out, r.ttfb);
  }
  out.append("}\n");
}

void appendSampleJson(std::string& out, const AggregateSample& s) {
  out.append("{\"end\":");
  appendMillis(out, s.end);
  out.append(",\"step_ms\":");
  appendMillis(out, s.step);
  out.append(",\"instance\":");
  appendJsonString(out, s.instance);
  if (!s.model.empty()) {
    out.append(",\"model\":");
    appendJsonString(out, s.model);
  }
  out.append(",\"calls\":");
  appendInt(out, s.calls);
  out.append(",\"failures\":");
  appendInt(out, s.failures);
  if (s.slow >= 0) {
    out.append(",\"slow\":");
    appendInt(out, s.slow);
  }
  out.append("}\n");
}

}  // namespace spillway::formats
