#include "session.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "spillway/input_error.hpp"
#include "spillway/policy_yaml.hpp"

namespace spillway::console {
namespace {

constexpr int kVersion = 1;

// The line of the first occurrence of "key" in the text: where a field's error points.
long lineOf(const QByteArray& text, const QString& key) {
  const qsizetype at = text.indexOf(("\"" + key + "\"").toUtf8());
  return at < 0 ? 0 : static_cast<long>(text.left(at).count('\n')) + 1;
}

struct Reader {
  const QByteArray& text;
  const QString& path;
  const QJsonObject& o;

  [[noreturn]] void fail(const QString& key, const std::string& what) const {
    throw InputError(path.toStdString(), lineOf(text, key), key.toStdString(), what);
  }
  QString string(const QString& key, bool required) const {
    const QJsonValue v = o.value(key);
    if (v.isUndefined() && !required) return {};
    if (!v.isString()) fail(key, required && v.isUndefined() ? "missing" : "expected a string");
    return v.toString();
  }
  double number(const QString& key, double fallback) const {
    const QJsonValue v = o.value(key);
    if (v.isUndefined()) return fallback;
    if (!v.isDouble()) fail(key, "expected a number");
    return v.toDouble();
  }
  // A policy's YAML, checked to parse (its own errors name the session's field).
  std::string policy(const QString& key, bool required) const {
    const QString yaml = string(key, required);
    if (yaml.isNull()) return {};
    try {
      parsePolicy(yaml.toStdString(), path.toStdString() + ":" + key.toStdString());
    } catch (const std::exception& e) {
      fail(key, e.what());
    }
    return yaml.toStdString();
  }
};

void readView(const Reader& r, Session& s) {
  s.cursor = r.number("cursor_s", 0);
  const QJsonValue zoom = r.o.value("zoom_s");
  if (!zoom.isUndefined()) {
    const QJsonArray a = zoom.toArray();
    if (!zoom.isArray() || a.size() != 2 || !a[0].isDouble() || !a[1].isDouble() ||
        a[0].toDouble() >= a[1].toDouble())
      r.fail("zoom_s", "expected [from, to] in seconds, from < to");
    s.zoom = std::make_pair(a[0].toDouble(), a[1].toDouble());
  }
  s.focus = r.string("focus", false);
  const double seeds = r.number("seeds", 1);
  if (seeds < 1 || seeds > 20 || seeds != static_cast<int>(seeds))
    r.fail("seeds", "expected a whole number from 1 to 20");
  s.seeds = static_cast<int>(seeds);
  const QJsonValue targets = r.o.value("targets");
  if (!targets.isUndefined() && !targets.isObject()) r.fail("targets", "expected an object");
  const QJsonObject t = targets.toObject();
  for (auto it = t.begin(); it != t.end(); ++it) {
    if (!it.value().isDouble() || it.value().toDouble() < 0)
      r.fail("targets", "'" + it.key().toStdString() + "': expected a number ≥ 0");
    s.targets[it.key().toStdString()] = it.value().toDouble();
  }
}

}  // namespace

QByteArray writeSession(const Session& s) {
  QJsonObject o;
  o["spillway_session"] = kVersion;
  if (!s.incident.isEmpty()) {
    o["library"] = s.library;
    o["incident"] = s.incident;
  } else {
    o["scenario"] = s.scenario;
  }
  o["policy"] = QString::fromStdString(s.policy);
  o["loaded_policy"] = QString::fromStdString(s.loaded);
  o["policy_source"] = s.policySource;
  if (s.reference) o["reference_policy"] = QString::fromStdString(*s.reference);
  o["cursor_s"] = s.cursor;
  if (s.zoom) o["zoom_s"] = QJsonArray{s.zoom->first, s.zoom->second};
  if (!s.focus.isEmpty()) o["focus"] = s.focus;
  QJsonObject targets;
  for (const auto& [key, bound] : s.targets) targets[QString::fromStdString(key)] = bound;
  o["targets"] = targets;
  o["seeds"] = s.seeds;
  return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

Session parseSession(const QByteArray& text, const QString& path) {
  QJsonParseError err{};
  const QJsonDocument doc = QJsonDocument::fromJson(text, &err);
  if (err.error != QJsonParseError::NoError)
    throw InputError(path.toStdString(), static_cast<long>(text.left(err.offset).count('\n')) + 1,
                     "", "not a session (JSON: " + err.errorString().toStdString() + ")");
  if (!doc.isObject())
    throw InputError(path.toStdString(), 1, "", "not a session (expected a JSON object)");
  const QJsonObject o = doc.object();
  const Reader r{text, path, o};
  if (r.number("spillway_session", 0) != kVersion)
    r.fail("spillway_session", "expected version " + std::to_string(kVersion));
  Session s;
  s.scenario = r.string("scenario", false);
  s.incident = r.string("incident", false);
  s.library = r.string("library", !s.incident.isEmpty());
  if (s.scenario.isEmpty() == s.incident.isEmpty())
    r.fail("scenario", "expected either a scenario or a library incident");
  s.policy = r.policy("policy", true);
  s.loaded = r.policy("loaded_policy", true);
  s.policySource = r.string("policy_source", false);
  if (o.contains("reference_policy")) s.reference = r.policy("reference_policy", true);
  readView(r, s);
  return s;
}

Session readSession(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    throw InputError(path.toStdString(), 0, "", f.errorString().toStdString());
  if (f.size() > kMaxSessionBytes)
    throw InputError(
        path.toStdString(), 0, "",
        "larger than a session can be (" + std::to_string(kMaxSessionBytes >> 20) + " MiB)");
  return parseSession(f.read(kMaxSessionBytes + 1), path);
}

}  // namespace spillway::console
