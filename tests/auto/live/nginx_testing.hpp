#pragma once
// The Debian nginx as a test peer: a config around an upstream (foreground, temp prefix,
// loopback only, a JSON access log the importer reads, warnings in the error log) and
// starting it until it accepts.
#include <QByteArray>
#include <QHostAddress>
#include <QProcess>
#include <QString>
#include <QTcpSocket>
#include <QTest>

#include <unistd.h>

#include "live_testing.hpp"

namespace nginx_testing {

inline constexpr const char* kNginx = "/usr/sbin/nginx";

// nginx in front of an upstream: foreground, temp prefix under `dir`, loopback only, a JSON
// access log (dir/access.log); `upstreamBlock` is http-level text defining upstream `name`,
// `location` adds directives to the proxying location.
inline QByteArray nginxConfAround(const QString& dir, quint16 port, const QByteArray& upstreamBlock,
                                  const QByteArray& name, const QByteArray& location) {
  const QByteArray d = dir.toUtf8();
  QByteArray conf;
  if (::geteuid() == 0) conf += "user root;\n";  // CI runs as root; workers must reach TMPDIR
  conf += "worker_processes 1;\npid " + d + "/nginx.pid;\nerror_log " + d +
          "/error.log warn;\nevents { worker_connections 256; }\nhttp {\n"
          "  client_body_temp_path " +
          d + "/client_body;\n  proxy_temp_path " + d + "/proxy;\n  fastcgi_temp_path " + d +
          "/fastcgi;\n  uwsgi_temp_path " + d + "/uwsgi;\n  scgi_temp_path " + d +
          "/scgi;\n"
          "  log_format drill escape=json '{\"msec\":\"$msec\",\"upstream_addr\":"
          "\"$upstream_addr\",\"upstream_status\":\"$upstream_status\","
          "\"upstream_response_time\":\"$upstream_response_time\",\"request_time\":"
          "\"$request_time\",\"status\":\"$status\",\"drill\":\"$http_x_drill\"}';\n"
          "  access_log " +
          d + "/access.log drill;\n" + upstreamBlock +
          "  server {\n    listen 127.0.0.1:" + QByteArray::number(port) +
          ";\n"
          "    location / {\n      proxy_pass http://" +
          name +
          ";\n"
          "      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n" +
          location + "    }\n  }\n}\n";
  return conf;
}

// Starts nginx on dir/nginx.conf and waits until it accepts on `port`; empty, or why not.
inline QByteArray startNginx(QProcess& nginx, const QString& dir, quint16 port) {
  nginx.setProcessChannelMode(QProcess::MergedChannels);
  nginx.start(kNginx, {"-p", dir + "/", "-c", dir + "/nginx.conf", "-e", dir + "/error.log", "-g",
                       "daemon off;"});
  if (!nginx.waitForStarted(5000)) return nginx.errorString().toUtf8();
  const bool up = QTest::qWaitFor(
      [&] {
        if (nginx.state() == QProcess::NotRunning) return true;
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, port);
        return s.waitForConnected(100);
      },
      10000);
  if (up && nginx.state() == QProcess::Running) return {};
  return "nginx did not come up: " + nginx.readAll() + live_testing::readFile(dir + "/error.log");
}

}  // namespace nginx_testing
