#include "spillway/fault_annotations.hpp"

#include <nlohmann/json.hpp>

#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

std::vector<NamedFault> parseFaultAnnotations(std::string_view text, const std::string& source) {
  std::vector<NamedFault> out;
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
    auto time = [&](const char* key) -> Micros {
      if (!j.contains(key)) throw InputError(source, lineNo, key, "missing required field");
      const auto& v = j[key];
      if (v.is_number()) return static_cast<Micros>(v.get<double>() * 1000.0);
      if (v.is_string())
        if (auto t = parseRfc3339(v.get<std::string>())) return *t;
      throw InputError(source, lineNo, key, "expected epoch milliseconds or an RFC 3339 string");
    };
    if (!j.contains("instance") || !j["instance"].is_string())
      throw InputError(source, lineNo, "instance", "missing or not a string");
    NamedFault f;
    f.instance = j["instance"].get<std::string>();
    f.start = time("start");
    f.end = time("end");
    if (f.end < f.start) throw InputError(source, lineNo, "end", "is before start");
    if (j.contains("kind") && j["kind"].is_string()) f.kind = j["kind"].get<std::string>();
    if (j.contains("benign")) {
      if (!j["benign"].is_boolean())
        throw InputError(source, lineNo, "benign", "expected true or false");
      f.benign = j["benign"].get<bool>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace spillway
