#include "spillway/dialects/istio.hpp"

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {

// The DestinationRule named `select` (metadata.name or spec.host) among the manifests, or the
// first one; every document was read (a later one's syntax error is still an error).
YamlDocument chooseRule(const std::string& source, const std::vector<YamlDocument>& docs,
                        std::string_view select) {
  const NativeReader r(source);
  if (docs.empty()) r.fail(YAML::Mark(), "", "no DestinationRule: the file is empty");
  if (select.empty()) return docs.front();
  for (const YamlDocument& d : docs) {
    const YAML::Node spec = NativeReader::get(d.node, "spec");
    for (const YAML::Node& n : {NativeReader::get(NativeReader::get(d.node, "metadata"), "name"),
                                NativeReader::get(spec, "host")})
      if (n && n.IsScalar() && n.Scalar() == select) return d;
  }
  r.fail(docs.front().node.Mark(), "metadata.name",
         "no DestinationRule named '" + std::string(select) + "' (by metadata.name or spec.host)");
}

}  // namespace

EnvoyOutlierConfig parseIstioConfig(std::string_view text, const std::string& source,
                                    std::string_view select) {
  const YamlDocument doc = chooseRule(source, loadNativeDocuments(text, source), select);
  const NativeReader r(source, doc.firstLine);  // its lines, counted in the whole file
  const YAML::Node& root = doc.node;
  if (!root.IsMap()) r.fail(root.Mark(), "", "expected a mapping of keys");
  YAML::Node od;
  std::string path;
  if (const YAML::Node tp = NativeReader::get(NativeReader::get(root, "spec"), "trafficPolicy")) {
    od = NativeReader::get(tp, "outlierDetection");
    path = "spec.trafficPolicy.outlierDetection";
  } else if (const YAML::Node tp2 = NativeReader::get(root, "trafficPolicy")) {
    od = NativeReader::get(tp2, "outlierDetection");
    path = "trafficPolicy.outlierDetection";
  } else if (const YAML::Node o = NativeReader::get(root, "outlierDetection")) {
    od = o;
    path = "outlierDetection";
  } else {
    od = root;
  }
  if (!od) r.fail(root.Mark(), path, "no outlierDetection");

  EnvoyOutlierConfig c;
  r.checkNative(od, path,
                {"consecutive5xxErrors", "consecutiveGatewayErrors", "interval", "baseEjectionTime",
                 "maxEjectionPercent", "minHealthPercent"},
                {"splitExternalLocalOriginErrors", "consecutiveLocalOriginFailures",
                 "outlierDetectionHttpErrorCodes", "consecutiveErrors"},
                &c.ignoredKeys);
  auto k = [&](const char* f) { return NativeReader::join(path, f); };
  // What pilot sets whenever outlierDetection is present.
  c.enforcingSuccessRate = 0;
  c.enforcingFailurePercentage = 0;
  c.healthyPanicThreshold = 0;  // minHealthPercent defaults to 0: panic mode off
  c.maxEjectionTime = -1;       // not exposed: Envoy's default
  c.maxEjectionTimeJitter = 0;
  if (auto n = NativeReader::get(od, "consecutive5xxErrors")) {
    c.consecutive5xx =
        static_cast<std::uint32_t>(r.whole(n, k("consecutive5xxErrors"), 0, 4294967295L));
    c.enforcingConsecutive5xx = c.consecutive5xx > 0 ? 100 : 0;
  }
  if (auto n = NativeReader::get(od, "consecutiveGatewayErrors")) {
    c.consecutiveGatewayFailure =
        static_cast<std::uint32_t>(r.whole(n, k("consecutiveGatewayErrors"), 0, 4294967295L));
    c.enforcingConsecutiveGatewayFailure = c.consecutiveGatewayFailure > 0 ? 100 : 0;
  }
  if (auto n = NativeReader::get(od, "interval"))
    c.interval = r.dur(n, k("interval"), BareUnit::None, 1000);
  if (auto n = NativeReader::get(od, "baseEjectionTime"))
    c.baseEjectionTime = r.dur(n, k("baseEjectionTime"), BareUnit::None, 1000);
  if (auto n = NativeReader::get(od, "maxEjectionPercent")) {
    const auto v = static_cast<std::uint32_t>(r.whole(n, k("maxEjectionPercent"), 0, 100));
    if (v > 0) c.maxEjectionPercent = v;
  }
  if (auto n = NativeReader::get(od, "minHealthPercent"))
    c.healthyPanicThreshold = static_cast<double>(r.whole(n, k("minHealthPercent"), 0, 100));
  return c;
}

}  // namespace spillway::dialects
