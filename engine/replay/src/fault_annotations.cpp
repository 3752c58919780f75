#include "spillway/fault_annotations.hpp"

#include <nlohmann/json.hpp>

#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

namespace {

// Calls `each(object, lineNo)` for every non-blank line, which must be one JSON object.
template <typename Each>
void forEachObject(std::string_view text, const std::string& source, Each each) {
  long lineNo = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(source, lineNo, "", std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object()) throw InputError(source, lineNo, "", "expected a JSON object per line");
    each(j, lineNo);
  }
}

Micros timeField(const nlohmann::json& j, const char* key, const std::string& source, long lineNo) {
  if (!j.contains(key)) throw InputError(source, lineNo, key, "missing required field");
  const auto& v = j[key];
  std::optional<Micros> t;
  if (v.is_number()) t = instantFromMillis(v.get<double>());
  if (v.is_string()) t = parseInstant(v.get<std::string>());
  if (t) return *t;
  throw InputError(
      source, lineNo, key,
      std::string("expected epoch milliseconds or an RFC 3339 string ") + kInstantRange);
}

std::string instanceField(const nlohmann::json& j, const std::string& source, long lineNo) {
  if (!j.contains("instance") || !j["instance"].is_string())
    throw InputError(source, lineNo, "instance", "missing or not a string");
  return j["instance"].get<std::string>();
}

bool boolField(const nlohmann::json& j, const char* key, const std::string& source, long lineNo) {
  if (!j[key].is_boolean()) throw InputError(source, lineNo, key, "expected true or false");
  return j[key].get<bool>();
}

}  // namespace

std::vector<NamedFault> parseFaultAnnotations(std::string_view text, const std::string& source) {
  std::vector<NamedFault> out;
  forEachObject(text, source, [&](const nlohmann::json& j, long lineNo) {
    NamedFault f;
    f.instance = instanceField(j, source, lineNo);
    f.start = timeField(j, "start", source, lineNo);
    f.end = timeField(j, "end", source, lineNo);
    if (f.end < f.start) throw InputError(source, lineNo, "end", "is before start");
    if (j.contains("kind") && j["kind"].is_string()) f.kind = j["kind"].get<std::string>();
    if (j.contains("benign")) f.benign = boolField(j, "benign", source, lineNo);
    out.push_back(std::move(f));
  });
  return out;
}

std::vector<HealthObservation> parseHealthObservations(std::string_view text,
                                                       const std::string& source) {
  std::vector<HealthObservation> out;
  forEachObject(text, source, [&](const nlohmann::json& j, long lineNo) {
    HealthObservation h;
    h.instance = instanceField(j, source, lineNo);
    h.at = timeField(j, "ts", source, lineNo);
    if (!j.contains("healthy"))
      throw InputError(source, lineNo, "healthy", "missing required field");
    h.healthy = boolField(j, "healthy", source, lineNo);
    out.push_back(std::move(h));
  });
  return out;
}

}  // namespace spillway
