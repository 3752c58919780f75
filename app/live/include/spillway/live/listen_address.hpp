#pragma once
// "4318", "127.0.0.1:4318", "[::1]:4318", "localhost:4318" → an address and a port for a
// live listener (the OTLP receiver, the metrics endpoint). Anything but loopback needs an
// explicit allowRemote: these listeners speak plain HTTP.
#include <QHostAddress>

#include <string>

namespace spillway::live {

struct ListenAddress {
  QHostAddress address = QHostAddress::LocalHost;
  quint16 port = 0;
};

// Throws InputError(option, 0, "", what is wrong); `howToAllow` ends the message for an
// address that is not loopback ("add --otlp-allow-remote to listen there").
ListenAddress parseListenAddress(const std::string& text, bool allowRemote,
                                 const std::string& option,
                                 const std::string& howToAllow =
                                     "allow remote listening "
                                     "explicitly to listen there");

}  // namespace spillway::live
