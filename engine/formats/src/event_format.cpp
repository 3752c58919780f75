#include "spillway/event_format.hpp"

#include <cstdio>

namespace spillway {

namespace {

void appendMs(std::string& s, Micros us) {
  char buf[48];
  if (us % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(us / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(us) / 1000.0);
  s += buf;
}

void appendJsonString(std::string& s, std::string_view v) {
  s += '"';
  for (char c : v) {
    switch (c) {
      case '"':
        s += "\\\"";
        break;
      case '\\':
        s += "\\\\";
        break;
      case '\n':
        s += "\\n";
        break;
      case '\r':
        s += "\\r";
        break;
      case '\t':
        s += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          s += buf;
        } else {
          s += c;
        }
    }
  }
  s += '"';
}

}  // namespace

std::string formatEventJson(const Event& e, std::string_view instance, std::string_view model) {
  std::string s;
  s.reserve(256);
  s += "{\"ts\":";
  appendMs(s, e.ts);
  s += ",\"instance\":";
  appendJsonString(s, instance);
  if (!model.empty()) {
    s += ",\"model\":";
    appendJsonString(s, model);
  }
  s += ",\"event\":\"";
  s += eventKindName(e.kind);
  s += "\",\"from\":\"";
  s += stateName(e.from);
  s += "\",\"to\":\"";
  s += stateName(e.to);
  s += "\",\"reason\":\"";
  s += reasonName(e.reason);
  char buf[160];
  std::snprintf(buf, sizeof buf, "\",\"error_rate\":%.4f,\"slow_rate\":%.4f,\"calls\":%u",
                e.errorRate, e.slowRate, e.calls);
  s += buf;
  if (e.openFor > 0) {
    s += ",\"open_for_ms\":";
    appendMs(s, e.openFor);
  }
  if (e.sustained > 0) {
    s += ",\"sustained_ms\":";
    appendMs(s, e.sustained);
  }
  s += "}";
  return s;
}

void JsonlEventWriter::setEngine(const Engine* e) {
  if (!e) return setNames({});
  setNames([e](InstanceId id) {
    return std::pair<std::string_view, std::string_view>(e->name(id), e->model(id));
  });
}

void JsonlEventWriter::onEvent(const Event& e) {
  if (!out_ || !names_) return;
  const auto [name, model] = names_(e.instance);
  const std::string line = formatEventJson(e, name, model);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
}

std::string describeEvent(const Event& e, double errorThreshold, double slowThreshold) {
  char buf[256];
  switch (e.reason) {
    case Reason::ErrorRate:
    case Reason::SlowRate:
    case Reason::ErrorAndSlow:
    case Reason::RampRelapse: {
      const bool slow = e.reason == Reason::SlowRate;
      const double v = slow ? e.slowRate : e.errorRate;
      const double th = slow ? slowThreshold : errorThreshold;
      std::snprintf(buf, sizeof buf, "%s %.2f > %.2f (%u calls)%s%s",
                    slow ? "slow rate" : "error rate", v, th, e.calls,
                    e.sustained > 0 ? ", held " : "",
                    e.sustained > 0 ? formatDuration(e.sustained).c_str() : "");
      return buf;
    }
    default:
      return std::string(reasonName(e.reason));
  }
}

}  // namespace spillway
