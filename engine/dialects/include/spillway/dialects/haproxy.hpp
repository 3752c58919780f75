#pragma once
// HAProxy server health (src/check.c): passive `observe layer4|layer7` counts consecutive
// errors; at `error-limit` the `on-error` action runs (fastinter, fail-check, sudden-death,
// mark-down; every one forces fastinter) and the counter restarts. Active checks every
// inter / fastinter (transitional health) / downinter (fully down); `rise` successes mark a
// server UP, `fall` failures DOWN (health counter 0 … rise+fall-1; a server starts at `rise`,
// "up, but will fall down at first failure"). After coming back UP, `slowstart` ramps the
// admitted share linearly to 100 %. A check at time t reads the server's recorded health at t
// when the replay has health observations for it (recordHealth); without them it reads the
// last recorded call outcome at or before t (observe) — once HAProxy has marked a server down
// it gets no calls, so that approximation keeps a recovered server down (docs/dialects.md).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct HaproxyServer {
  enum class Observe : std::uint8_t { None, Layer4, Layer7 };
  enum class OnError : std::uint8_t { Fastinter, FailCheck, SuddenDeath, MarkDown };
  bool check = false;
  Micros inter = millis(2000);
  Micros fastinter = 0;  // 0: inter
  Micros downinter = 0;  // 0: inter
  std::uint32_t rise = 2, fall = 3;
  Observe observe = Observe::None;
  std::uint32_t errorLimit = 10;
  OnError onError = OnError::FailCheck;
  Micros slowstart = 0;
};

struct HaproxyConfig {
  HaproxyServer defaults;                        // default-server (defaults, then the backend)
  std::map<std::string, HaproxyServer> servers;  // `server NAME ...` lines, by name
  std::vector<std::string> order;                // the same names in configuration order
  std::vector<std::string> ignoredKeys;
};

// haproxy.cfg text; `backend` picks the backend/listen section (empty: the first).
HaproxyConfig parseHaproxyConfig(std::string_view text, const std::string& source,
                                 std::string_view backend = {});

class HaproxyDialect final : public DialectCluster {
 public:
  HaproxyDialect(HaproxyConfig cfg, std::uint64_t seed, EventSink* sink);
  ~HaproxyDialect() override;
  DialectKind kind() const override { return DialectKind::Haproxy; }
  void observe(InstanceId id, Micros at, bool good) override;
  void recordHealth(std::string_view instance, Micros at, bool healthy) override;
  void setStartedAt(Micros at) override;
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  bool judgesAtHeaders() const override { return true; }
  const HaproxyConfig& config() const { return cfg_; }
  std::uint32_t health(InstanceId id) const;
  Micros nextCheck(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Server;
  void checkResult(InstanceId id, bool ok, Micros at, Reason downReason);
  Micros interval(InstanceId id) const;
  bool checkPasses(InstanceId id, Micros at) const;
  Micros firstCheck(InstanceId id) const;

  const HaproxyConfig cfg_;
  std::vector<Server> m_;
  // Recorded health per server name, sorted by time once the replay starts.
  std::map<std::string, std::vector<std::pair<Micros, bool>>, std::less<>> health_;
  bool healthSorted_ = false;
  Micros startedAt_ = kNever;
};

}  // namespace spillway::dialects
