#include "spillway/library/block_codec.hpp"

#include "varint.hpp"

namespace spillway::library {

namespace {

using detail::ColumnWriter;
using detail::Cursor;
using detail::putVar;
using detail::unzig;

constexpr unsigned char kVersion = 1;
constexpr int kColumns = 12;

}  // namespace

void BlockColumns::clear() {
  for (auto* v : {&ts, &latency, &tokensIn, &tokensOut}) v->clear();
  status.clear();
  outcome.clear();
  critical.clear();
  for (auto* v : {&instance, &model, &tenant, &route, &session}) v->clear();
}

void BlockColumns::reserve(std::size_t n) {
  for (auto* v : {&ts, &latency, &tokensIn, &tokensOut}) v->reserve(n);
  status.reserve(n);
  outcome.reserve(n);
  critical.reserve(n);
  for (auto* v : {&instance, &model, &tenant, &route, &session}) v->reserve(n);
}

void encodeBlock(const BlockColumns& b, std::string& out) {
  const std::size_t n = b.size();
  out.push_back(static_cast<char>(kVersion));
  putVar(out, n);
  ColumnWriter w{out, {}};
  w.col.reserve(n * 4);
  w.deltas(b.ts);
  w.zigs(b.latency);
  w.vars(b.status);
  w.bytes(b.outcome.data(), n);
  w.bytes(b.critical.data(), n);
  for (const auto* v : {&b.instance, &b.model, &b.tenant, &b.route, &b.session}) w.vars(*v);
  // Token counts: -1 (unknown) stored as 0.
  for (const auto* v : {&b.tokensIn, &b.tokensOut}) {
    for (auto x : *v) putVar(w.col, static_cast<std::uint64_t>(x + 1));
    w.end();
  }
}

bool decodeBlock(const unsigned char* data, std::size_t size, BlockColumns& b) {
  b.clear();
  Cursor c{data, data + size};
  if (size < 2 || *c.p++ != kVersion) return false;
  const std::uint64_t n = c.var();
  // Every call takes at least one byte (outcome), so a count past the size is damage, not a
  // reason to reserve gigabytes.
  if (!c.ok || n > (1u << 24) || n > size) return false;
  b.reserve(n);
  for (int k = 0; k < kColumns; ++k) {
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
      default: {
        auto& v = k == 10 ? b.tokensIn : b.tokensOut;
        for (std::uint64_t i = 0; i < n; ++i) v.push_back(static_cast<std::int64_t>(col.var()) - 1);
      }
    }
    if (!col.ok || col.p != col.end) return false;
  }
  for (auto o : b.outcome)
    if (o > 3) return false;
  return c.p == c.end;
}

}  // namespace spillway::library
