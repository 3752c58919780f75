#include "spillway/formats/jsonl_chunks.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "line_reader.hpp"
#include "spillway/input_limits.hpp"

namespace spillway::formats {

namespace {

constexpr std::size_t kChunk = 1 << 22;  // JsonlReader's read size (telemetry.cpp)

// A cursor over one line in the canonical shape. Every reader returns false at the first byte
// outside that shape; the line is then left to simdjson, which accepts or rejects it.
class Canonical {
 public:
  explicit Canonical(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  bool at(char c) const { return p_ < end_ && *p_ == c; }
  bool eat(char c) {
    if (!at(c)) return false;
    ++p_;
    return true;
  }
  bool atEnd() const { return p_ == end_; }

  // A string without escapes, control characters or bytes above ASCII (simdjson would check
  // their UTF-8): its contents are then its value. Eight bytes at a time while they are in
  // the line.
  bool string(std::string_view& out) {
    if (!eat('"')) return false;
    const char* s = p_;
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    while (end_ - p_ >= 8) {
      std::uint64_t x;
      std::memcpy(&x, p_, 8);
      const auto zero = [&](std::uint64_t y) { return (y - kOnes) & ~y & kHigh; };
      const std::uint64_t special = zero(x ^ (kOnes * '"')) | zero(x ^ (kOnes * '\\')) |
                                    ((x - kOnes * 0x20) & ~x & kHigh) | (x & kHigh);
      if (special) {  // the lowest flagged byte is the first special one
        p_ += __builtin_ctzll(special) / 8;
        break;
      }
      p_ += 8;
    }
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(s, static_cast<std::size_t>(p_ - s));
        ++p_;
        return true;
      }
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;
      ++p_;
    }
    return false;
  }

  // A non-negative decimal without exponent, as a double rounded as simdjson rounds it: the
  // digits M (below 2^53, so exact) over 10^f (exact for f <= 22) in one IEEE division, which
  // rounds the exact quotient to nearest, as simdjson's number parser does. `thousandths`:
  // the value times 1000 when it is an integer below 2^51 (at most three decimals), which is
  // then what llround(that double * 1000) gives: both roundings together stay within 0.37 of
  // it (tst_parallel_replay checks values around the bounds against simdjson).
  bool number(double& out, std::int64_t& thousandths) {
    std::uint64_t m = 0;
    int digits = 0, frac = 0;
    if (!integerDigits(m, digits)) return false;
    if (eat('.')) {
      const char* s = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9' && digits < 16) {
        m = m * 10 + static_cast<std::uint64_t>(*p_++ - '0');
        ++digits;
      }
      frac = static_cast<int>(p_ - s);
      if (frac == 0 || isDigit()) return false;
    }
    if (m >= (std::uint64_t{1} << 53)) return false;
    static constexpr std::uint64_t kScale[] = {1000, 100, 10, 1};
    if (frac <= 3 && m * kScale[frac] < (std::uint64_t{1} << 51)) {  // m < 2^53: no overflow
      thousandths = static_cast<std::int64_t>(m * kScale[frac]);
      return true;
    }
    thousandths = -1;
    static constexpr double kPow10[] = {1e0, 1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7, 1e8,
                                        1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16};
    out = static_cast<double>(m) / kPow10[frac];
    return true;
  }

  // A non-negative integer of at most `maxDigits` digits (no fraction).
  bool integer(std::int64_t& out, int maxDigits) {
    std::uint64_t m = 0;
    int digits = 0;
    if (!integerDigits(m, digits) || digits > maxDigits || at('.')) return false;
    out = static_cast<std::int64_t>(m);
    return true;
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }

 private:
  bool isDigit() const { return p_ < end_ && *p_ >= '0' && *p_ <= '9'; }
  // JSON's integer part: 0, or a non-zero digit and more; at most 16 digits in all.
  bool integerDigits(std::uint64_t& m, int& digits) {
    if (!isDigit()) return false;
    if (*p_ == '0') {
      ++p_;
      digits = 1;
      return !isDigit();
    }
    while (isDigit()) {
      if (++digits > 16) return false;
      m = m * 10 + static_cast<std::uint64_t>(*p_++ - '0');
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

enum Key : unsigned {
  kTs = 1,
  kInstance = 2,
  kLatency = 4,
  kStatus = 8,
  kOutcome = 16,
  kModel = 32,
  kTenant = 64,
  kRoute = 128,
  kSession = 256,
  kCritical = 512,
  kTokensIn = 1024,
  kTokensOut = 2048,
  kTtfb = 4096,
};

// `k`, of the name's length, is `name`: two overlapping words compared, no call.
template <std::size_t N>
unsigned is(const char* k, const char (&name)[N], Key key) {
  constexpr std::size_t n = N - 1;
  static_assert(n >= 2 && n <= 16);
  auto same = [&](std::size_t at, auto word) {
    decltype(word) a, b;
    std::memcpy(&a, k + at, sizeof a);
    std::memcpy(&b, name + at, sizeof b);
    return a == b;
  };
  bool eq;
  if constexpr (n >= 8)
    eq = same(0, std::uint64_t{}) & same(n - 8, std::uint64_t{});
  else if constexpr (n >= 4)
    eq = same(0, std::uint32_t{}) & same(n - 4, std::uint32_t{});
  else
    eq = same(0, std::uint16_t{}) & same(n - 2, std::uint16_t{});
  return eq ? key : 0u;
}

unsigned keyOf(std::string_view key) {
  const char* k = key.data();
  switch (key.size()) {
    case 2:
      return is(k, "ts", kTs);
    case 5:
      return is(k, "model", kModel) | is(k, "route", kRoute);
    case 6:
      return is(k, "status", kStatus) | is(k, "tenant", kTenant);
    case 7:
      return is(k, "outcome", kOutcome) | is(k, "session", kSession) | is(k, "ttfb_ms", kTtfb);
    case 8:
      return is(k, "instance", kInstance) | is(k, "critical", kCritical);
    case 9:
      return is(k, "tokens_in", kTokensIn);
    case 10:
      return is(k, "latency_ms", kLatency) | is(k, "tokens_out", kTokensOut);
  }
  return 0;
}

// Milliseconds as the simdjson path turns them into µs (telemetry.cpp).
bool millis(Canonical& c, Micros& out) {
  double ms;
  std::int64_t us;
  if (!c.number(ms, us)) return false;
  if (us >= 0) {
    out = us;
    return true;
  }
  if (ms >= 9.0e15) return false;
  out = static_cast<Micros>(std::llround(ms * 1000.0));
  return true;
}

bool canonicalValue(Canonical& c, unsigned key, CallRecord& rec) {
  std::string_view s;
  std::int64_t n;
  switch (key) {
    case kTs:
      if (c.at('"')) {
        if (!c.string(s)) return false;
        const auto t = parseInstant(s);
        if (!t) return false;
        rec.ts = *t;
        return true;
      }
      return millis(c, rec.ts) && plausibleInstant(rec.ts);  // else the full parser says why
    case kInstance:
      return c.string(rec.instance) && !rec.instance.empty();
    case kLatency:
      return millis(c, rec.latency);
    case kTtfb:
      return millis(c, rec.ttfb);
    case kStatus:
      if (!c.integer(n, 3)) return false;
      rec.status = static_cast<int>(n);
      return true;
    case kOutcome:
      if (!c.string(s) || !parseOutcome(s, rec.outcome)) return false;
      rec.hasOutcome = true;
      return true;
    case kModel:
      return c.string(rec.model);
    case kTenant:
      return c.string(rec.tenant);
    case kRoute:
      return c.string(rec.route);
    case kSession:
      return c.string(rec.session);
    case kCritical:
      if (c.literal("true"))
        rec.critical = true;
      else if (c.literal("false"))
        rec.critical = false;
      else
        return false;
      return true;
    case kTokensIn:
    case kTokensOut:
      if (!c.integer(n, 18)) return false;
      (key == kTokensIn ? rec.tokensIn : rec.tokensOut) = n;
      return true;
  }
  return false;
}

}  // namespace

bool parseCanonicalLine(std::string_view line, CallRecord& rec) {
  rec = CallRecord{};
  Canonical c(line);
  if (!c.eat('{')) return false;
  unsigned seen = 0;
  do {
    std::string_view name;
    if (!c.string(name) || !c.eat(':')) return false;
    const unsigned key = keyOf(name);
    // An unknown or repeated key is simdjson's to judge.
    if (!key || (seen & key) || !canonicalValue(c, key, rec)) return false;
    seen |= key;
  } while (c.eat(','));
  constexpr unsigned kRequired = kTs | kInstance | kLatency | kStatus;
  if (!c.eat('}') || !c.atEnd() || (seen & kRequired) != kRequired) return false;
  if (!rec.hasOutcome) rec.outcome = rec.status == 0 ? Outcome::Error : Outcome::Ok;
  return true;
}

JsonlSplitter::JsonlSplitter(JsonlReader::ReadFn read, std::size_t capacity)
    : read_(std::move(read)) {
  buf_.resize(std::clamp<std::size_t>(capacity, 4096, kChunk) + simdjson::SIMDJSON_PADDING);
}

// JsonlReader::nextLine's refill of a buffer holding only a partial line: the same limit, the
// same growth, the same read.
void JsonlSplitter::refill() {
  if (!refillPadded(buf_, end_, kChunk, read_)) eof_ = true;
}

bool JsonlSplitter::next(JsonlChunk& out) {
  out.size = 0;
  out.tooLong = false;
  out.error = nullptr;
  while (!done_) {
    if (eof_) {  // the last line, without its '\n'
      done_ = true;
      if (end_ == 0) return false;
      std::swap(out.buf, buf_);
      out.size = end_;
      return true;
    }
    if (end_ > input_limits::kLine) {
      done_ = out.tooLong = true;
      return true;
    }
    const std::size_t before = end_;
    try {
      refill();
    } catch (...) {
      done_ = true;
      out.error = std::current_exception();
      return true;
    }
    const void* nl =
        before == end_ ? nullptr : ::memrchr(buf_.data() + before, '\n', end_ - before);
    if (!nl) continue;
    // The first line began before this read (at the front of the buffer) and may have passed
    // the limit within it; the lines after it are shorter than one read.
    const auto* first =
        static_cast<const char*>(::memchr(buf_.data() + before, '\n', end_ - before));
    if (static_cast<std::size_t>(first - buf_.data()) > input_limits::kLine) {
      done_ = out.tooLong = true;
      return true;
    }
    // Whole lines go out in this buffer; the partial line moves to a buffer of the same size,
    // as JsonlReader moves it to the front of its own.
    const auto whole = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data()) + 1;
    std::swap(out.buf, buf_);
    out.size = whole;
    if (buf_.size() != out.buf.size()) buf_.resize(out.buf.size());
    end_ -= whole;
    std::memcpy(buf_.data(), out.buf.data() + whole, end_);
    return true;
  }
  return false;
}

std::size_t lineBoundary(const JsonlChunk& chunk, std::size_t at) {
  if (at >= chunk.size) return chunk.size;
  const void* nl = std::memchr(chunk.buf.data() + at, '\n', chunk.size - at);
  return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - chunk.buf.data()) + 1
            : chunk.size;
}

void JsonlBatch::clear() {
  records.clear();
  bad.clear();
  lines = 0;
  strings.clear();
}

namespace {

// One copy of each instance name per chunk: every record of an instance points to its first
// occurrence, so the replayer knows a name it has seen by its address (Replayer::instanceOf).
// Past half full (a chunk of a very large fleet) names are left where they are.
class Interner {
 public:
  std::string_view intern(std::string_view s) {
    if (count_ >= slots_.size() / 2) return s;
    for (std::size_t i = hash(s);; i = (i + 1) & (slots_.size() - 1)) {
      std::string_view& slot = slots_[i];
      if (slot.data() == nullptr) {
        ++count_;
        return slot = s;
      }
      if (slot == s) return slot;
    }
  }

 private:
  static std::size_t hash(std::string_view s) {
    std::uint64_t a = 0, b = 0;
    if (s.size() >= 8) {
      std::memcpy(&a, s.data(), 8);
      std::memcpy(&b, s.data() + s.size() - 8, 8);
    } else {
      std::memcpy(&a, s.data(), s.size());
    }
    const std::uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ s.size();
    return static_cast<std::size_t>((h * 0xD6E8FEB86659FD93ull) >> 52);  // 4096 slots
  }

  std::vector<std::string_view> slots_ = std::vector<std::string_view>(4096);
  std::size_t count_ = 0;
};

// A view into the parser's own memory is copied into the batch; one into the chunk stays.
void keep(std::string_view& s, const JsonlChunk& chunk, JsonlBatch& out) {
  if (s.empty() || (s.data() >= chunk.buf.data() && s.data() < chunk.buf.data() + chunk.size))
    return;
  s = out.strings.emplace_back(s);
}

}  // namespace

void parseJsonlChunk(JsonlLineParser& parser, const JsonlChunk& chunk, std::size_t from,
                     std::size_t to, bool skipBadLines, JsonlBatch& out) {
  out.clear();
  const char* p = chunk.buf.data() + from;
  const char* const end = chunk.buf.data() + to;
  const char* const bufEnd = chunk.buf.data() + chunk.buf.size();
  std::string field, err;
  CallRecord rec;
  Interner names;
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    const char* lineEnd = nl ? static_cast<const char*>(nl) : end;
    std::string_view line(p, static_cast<std::size_t>(lineEnd - p));
    p = lineEnd + (nl ? 1 : 0);
    ++out.lines;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    field.clear();
    err.clear();
    if (parser.parse(line, static_cast<std::size_t>(bufEnd - line.data()), rec, field, err)) {
      rec.line = out.lines;
      for (std::string_view* s : {&rec.instance, &rec.model, &rec.tenant, &rec.route, &rec.session})
        keep(*s, chunk, out);
      rec.instance = names.intern(rec.instance);
      out.records.push_back(rec);
      continue;
    }
    out.bad.push_back({out.lines, field, err});
    if (!skipBadLines) return;
  }
}

}  // namespace spillway::formats
