#include "spillway/live/listen_address.hpp"

#include <QString>

#include "spillway/input_error.hpp"

namespace spillway::live {

ListenAddress parseListenAddress(const std::string& text, bool allowRemote,
                                 const std::string& option, const std::string& howToAllow) {
  std::string host = "127.0.0.1", port = text;
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
  }
  bool ok = false;
  const uint n = QString::fromStdString(port).toUInt(&ok);
  if (!ok || n > 65535) throw InputError(option, 0, "", "expected [HOST:]PORT, got '" + text + "'");
  QHostAddress addr;
  if (host == "localhost") host = "127.0.0.1";
  if (!addr.setAddress(QString::fromStdString(host)))
    throw InputError(option, 0, "", "expected an IP address, got '" + host + "'");
  if (!addr.isLoopback() && !allowRemote)
    throw InputError(option, 0, "",
                     host + " is not a loopback address; " + howToAllow +
                         " (plain HTTP: put it behind TLS and set a bearer token)");
  return {addr, static_cast<quint16>(n)};
}

}  // namespace spillway::live
