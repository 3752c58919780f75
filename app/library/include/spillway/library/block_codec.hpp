#pragma once
// Records are stored in blocks of up to kBlockCalls calls, column by column, each column packed
// on its own (LEB128 varints; start times as zigzag deltas, so a block of calls in time order
// costs ~2 bytes per timestamp). One SQLite row per block keeps the import to a few thousand
// inserts per million calls and replay to one sequential scan (docs/library.md).
#include <cstdint>
#include <string>
#include <vector>

#include "spillway/telemetry.hpp"

namespace spillway::library {

inline constexpr std::size_t kBlockCalls = 4096;

// String columns hold dictionary indices: 0 = absent, otherwise 1 + index into the incident's
// string table. `instance` indexes the incident's instance table.
struct BlockColumns {
  std::vector<Micros> ts, latency;
  std::vector<std::uint16_t> status;
  std::vector<std::uint8_t> outcome;
  std::vector<std::uint8_t> critical;  // 0 absent, 1 false, 2 true
  std::vector<std::uint32_t> instance, model, tenant, route, session;
  std::vector<std::int64_t> tokensIn, tokensOut;  // -1 absent
  std::vector<Micros> ttfb;                       // -1 absent

  std::size_t size() const { return ts.size(); }
  void clear();
  void reserve(std::size_t n);
  // Appends one call: `instanceId` for its instance, `str(view)` the dictionary id of each
  // other string column.
  template <class Str>
  void push(const CallRecord& r, std::uint32_t instanceId, Str&& str) {
    ts.push_back(r.ts);
    latency.push_back(r.latency);
    status.push_back(static_cast<std::uint16_t>(r.status));
    outcome.push_back(static_cast<std::uint8_t>(r.outcome));
    critical.push_back(r.critical ? (*r.critical ? 2 : 1) : 0);
    instance.push_back(instanceId);
    model.push_back(str(r.model));
    tenant.push_back(str(r.tenant));
    route.push_back(str(r.route));
    session.push_back(str(r.session));
    tokensIn.push_back(r.tokensIn);
    tokensOut.push_back(r.tokensOut);
    ttfb.push_back(r.ttfb);
  }
};

// Appends the encoded block to `out`: format 1 (twelve columns) when no call has a ttfb, so a
// library of calls without one is what it was; format 2 adds the ttfb column.
void encodeBlock(const BlockColumns& b, std::string& out);
// False when the bytes are not a well-formed block (a damaged library); `b` is then unusable.
bool decodeBlock(const unsigned char* data, std::size_t size, BlockColumns& b);

}  // namespace spillway::library
