// The real tools accept what the exporters write: `haproxy -c` on the HAProxy backends and
// `nginx -t` on the nginx upstreams, each wrapped into a minimal full configuration. A missing
// binary fails the test under CI=true and skips it (with the reason) elsewhere (SPW_REQUIRE_PEER):
// .ci/install-deps installs both.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

#include "require_peer.hpp"
#include "spillway/export/export.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using namespace spillway::exporter;

namespace {

const char* kPolicy = R"(version: 1
name: tools-test
breaker:
  open: {duration: 15s, max_duration: 2m}
overrides:
  models:
    chat-8b:
      trip: {error_rate: 0.3}
  instances:
    chat-72b-3:
      half_open: {success_streak: 10}
)";

// Sub-second open periods: nginx reads fail_timeout in whole seconds and refuses "ms".
const char* kSubSecond = R"(version: 1
name: sub-second
breaker:
  open: {duration: 1400ms}
overrides:
  models:
    chat-8b:
      open: {duration: 500ms}
)";

std::string readFile(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::pair<QString, Policy>> policies() {
  return {{"default", parsePolicy(readFile(SPILLWAY_DEFAULT_POLICY), "default.yaml")},
          {"overrides", parsePolicy(kPolicy, "tools.yaml")},
          {"sub-second", parsePolicy(kSubSecond, "sub.yaml")}};
}

ExportContext context() {
  ExportContext c;
  c.instances = {{"chat-72b-0", "chat-72b"}, {"chat-72b-3", "chat-72b"}, {"chat-8b-0", "chat-8b"}};
  return c;
}

QString tool(const char* name) {
  QString p = QStandardPaths::findExecutable(name);
  if (p.isEmpty()) p = QStandardPaths::findExecutable(name, {"/usr/sbin", "/usr/local/sbin"});
  return p;
}

struct Out {
  int code;
  QString text;
};
Out runTool(const QString& program, const QStringList& args) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(program, args);
  if (!p.waitForFinished(30000)) return {-1, "timed out"};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
          QString::fromUtf8(p.readAll())};
}

void write(const QString& path, const std::string& text) {
  std::ofstream f(path.toStdString());
  f << text;
}

}  // namespace

class TstExportTools : public QObject {
  Q_OBJECT

 private slots:
  void haproxyAcceptsTheBackends() {
    const QString haproxy = tool("haproxy");
    SPW_REQUIRE_PEER(!haproxy.isEmpty(),
                     "haproxy not installed (Debian package `haproxy`, see .ci/install-deps)");
    QTemporaryDir dir;
    for (const bool withCtx : {false, true})
      for (const auto& [name, policy] : policies()) {
        const ExportResult x =
            exportPolicy(policy, DialectKind::Haproxy, withCtx ? context() : ExportContext{});
        const std::string first =
            withCtx ? "chat-72b" : (name == "default" ? "default" : "chat-8b");
        const std::string cfg =
            "global\n    log stdout format raw local0\n"
            "defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n"
            "    timeout server 30s\n"
            "frontend fe\n    bind 127.0.0.1:18081\n    default_backend " +
            first + "\n" + x.text;
        const QString file = dir.filePath(name + (withCtx ? "-ctx" : "") + ".cfg");
        write(file, cfg);
        const Out o = runTool(haproxy, {"-c", "-f", file});
        QVERIFY2(o.code == 0, qPrintable(o.text + "\n" + QString::fromStdString(cfg)));
        QVERIFY2(!o.text.contains("WARNING") && !o.text.contains("ALERT"),
                 qPrintable(o.text + "\n" + QString::fromStdString(cfg)));
      }
  }

  void nginxAcceptsTheUpstreams() {
    const QString nginx = tool("nginx");
    SPW_REQUIRE_PEER(
        !nginx.isEmpty(),
        "nginx not installed (Debian package `nginx-light` or `nginx`, see .ci/install-deps)");
    QTemporaryDir dir;
    QDir(dir.path()).mkpath("logs");
    for (const bool withCtx : {false, true})
      for (const auto& [name, policy] : policies()) {
        const ExportResult x =
            exportPolicy(policy, DialectKind::Nginx, withCtx ? context() : ExportContext{});
        const QString frag = dir.filePath(name + (withCtx ? "-ctx" : "") + ".upstreams.conf");
        write(frag, x.text);
        const std::string first =
            withCtx ? "chat-72b" : (name == "default" ? "default" : "chat-8b");
        const std::string cfg =
            "error_log stderr;\npid " + dir.filePath("nginx.pid").toStdString() +
            ";\nevents {}\nhttp {\n    access_log off;\n    include " + frag.toStdString() +
            ";\n    server {\n        listen 127.0.0.1:18080;\n        location / { proxy_pass "
            "http://" +
            first + "; }\n    }\n}\n";
        const QString file = dir.filePath(name + (withCtx ? "-ctx" : "") + ".nginx.conf");
        write(file, cfg);
        const Out o = runTool(nginx, {"-t", "-q", "-c", file, "-p", dir.path() + "/"});
        QVERIFY2(o.code == 0, qPrintable(o.text + "\n" + QString::fromStdString(x.text)));
      }
  }
};

QTEST_GUILESS_MAIN(TstExportTools)
#include "tst_export_tools.moc"
