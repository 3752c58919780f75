#pragma once
// nginx OSS passive health (ngx_http_upstream_round_robin.c): a peer is skipped while
// fails >= max_fails and now - checked <= fail_timeout (whole seconds, ngx_time()); a failure
// sets fails++, accessed = checked = now; selecting a peer whose fail_timeout has passed sets
// checked = now, and a success with accessed < checked resets fails. The only server of an
// upstream is never marked down (no accounting at all). max_fails=0 disables accounting.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct NginxServer {
  std::uint32_t maxFails = 1;
  Micros failTimeout = seconds(10);
};

struct NginxConfig {
  NginxServer defaults;                        // the upstream's first server's parameters
  std::map<std::string, NginxServer> servers;  // by address, when it names an instance
  // Statuses that count as unsuccessful: proxy_next_upstream's http_* list (error, timeout
  // and invalid_header always count). Default: none of the http_* codes.
  std::vector<int> nextUpstreamStatuses;
  std::vector<std::string> ignoredKeys;
};

// nginx.conf text: `upstream NAME { server ADDR max_fails=N fail_timeout=T ...; }` and an
// optional `proxy_next_upstream ...;`. `upstream` picks the block; empty: the first.
NginxConfig parseNginxConfig(std::string_view text, const std::string& source,
                             std::string_view upstream = {});

class NginxDialect final : public DialectCluster {
 public:
  NginxDialect(NginxConfig cfg, std::uint64_t seed, EventSink* sink);
  ~NginxDialect() override;
  DialectKind kind() const override { return DialectKind::Nginx; }
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  const NginxConfig& config() const { return cfg_; }
  std::uint32_t fails(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Peer;
  bool unsuccessful(int status, Outcome outcome) const;
  bool down(InstanceId id, std::int64_t nowSec) const;

  const NginxConfig cfg_;
  std::vector<Peer> m_;
};

}  // namespace spillway::dialects
