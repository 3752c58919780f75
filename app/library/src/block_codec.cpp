#include "spillway/library/block_codec.hpp"

#include <algorithm>

#include "varint.hpp"

namespace spillway::library {

namespace {

using detail::ColumnWriter;
using detail::Cursor;
using detail::putVar;
using detail::unzig;

// Format 1: twelve columns; format 2: a thirteenth, ttfb.
constexpr unsigned char kVersion = 1, kVersionTtfb = 2;
constexpr int kColumns = 12;

}  // namespace

void BlockColumns::clear() {
  for (auto* v : {&ts, &latency, &tokensIn, &tokensOut, &ttfb}) v->clear();
  status.clear();
  outcome.clear();
  critical.clear();
  for (auto* v : {&instance, &model, &tenant, &route, &session}) v->clear();
}

void BlockColumns::reserve(std::size_t n) {
  for (auto* v : {&ts, &latency, &tokensIn, &tokensOut, &ttfb}) v->reserve(n);
  status.reserve(n);
  outcome.reserve(n);
  critical.reserve(n);
  for (auto* v : {&instance, &model, &tenant, &route, &session}) v->reserve(n);
}

void encodeBlock(const BlockColumns& b, std::string& out) {
  const std::size_t n = b.size();
  const bool withTtfb = std::any_of(b.ttfb.begin(), b.ttfb.end(), [](Micros t) { return t >= 0; });
  out.push_back(static_cast<char>(withTtfb ? kVersionTtfb : kVersion));
  putVar(out, n);
  ColumnWriter w{out, {}};
  w.col.reserve(n * 4);
  w.deltas(b.ts);
  w.zigs(b.latency);
  w.vars(b.status);
  w.bytes(b.outcome.data(), n);
  w.bytes(b.critical.data(), n);
  for (const auto* v : {&b.instance, &b.model, &b.tenant, &b.route, &b.session}) w.vars(*v);
  // Token counts and ttfb: -1 (unknown) stored as 0.
  for (const auto* v : {&b.tokensIn, &b.tokensOut}) {
    for (auto x : *v) putVar(w.col, static_cast<std::uint64_t>(x + 1));
    w.end();
  }
  if (withTtfb) {
    for (Micros x : b.ttfb) putVar(w.col, static_cast<std::uint64_t>(x + 1));
    w.end();
  }
}

bool decodeBlock(const unsigned char* data, std::size_t size, BlockColumns& b) {
  b.clear();
  Cursor c{data, data + size};
  if (size < 2 || (*c.p != kVersion && *c.p != kVersionTtfb)) return false;
  const int columns = *c.p++ == kVersionTtfb ? kColumns + 1 : kColumns;
  const std::uint64_t n = c.var();
  // Every call takes at least one byte (outcome), so a count past the size is damage, not a
  // reason to reserve gigabytes.
  if (!c.ok || n > (1u << 24) || n > size) return false;
  b.reserve(n);
  for (int k = 0; k < columns; ++k) {
    const std::uint64_t len = c.var();
    if (!c.ok || len > static_cast<std::uint64_t>(c.end - c.p)) return false;
    Cursor col{c.p, c.p + len};
    c.p += len;
    switch (k) {
      case 0: {
        Micros prev = 0;
        for (std::uint64_t i = 0; i < n; ++i) b.ts.push_back(prev += unzig(col.var()));
        break;
      }
      case 1:
        for (std::uint64_t i = 0; i < n; ++i) b.latency.push_back(unzig(col.var()));
        break;
      case 2:
        for (std::uint64_t i = 0; i < n; ++i)
          b.status.push_back(static_cast<std::uint16_t>(col.var()));
        break;
      case 3:
      case 4: {
        if (len != n) return false;
        auto& v = k == 3 ? b.outcome : b.critical;
        v.assign(col.p, col.p + n);
        col.p += n;
        break;
      }
      case 5:
      case 6:
      case 7:
      case 8:
      case 9: {
        std::vector<std::uint32_t>* cols[] = {&b.instance, &b.model, &b.tenant, &b.route,
                                              &b.session};
        auto& v = *cols[k - 5];
        for (std::uint64_t i = 0; i < n; ++i) v.push_back(static_cast<std::uint32_t>(col.var()));
        break;
      }
      default: {  // tokens in, tokens out, ttfb
        auto& v = k == 10 ? b.tokensIn : k == 11 ? b.tokensOut : b.ttfb;
        for (std::uint64_t i = 0; i < n; ++i) v.push_back(static_cast<std::int64_t>(col.var()) - 1);
      }
    }
    if (!col.ok || col.p != col.end) return false;
  }
  if (columns == kColumns) b.ttfb.assign(n, -1);
  for (auto o : b.outcome)
    if (o > 3) return false;
  return c.p == c.end;
}

}  // namespace spillway::library
