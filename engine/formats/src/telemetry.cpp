#include "spillway/telemetry.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "line_reader.hpp"
#include "spillway/formats/jsonl_chunks.hpp"
#include "spillway/input_limits.hpp"

namespace spillway {

namespace {

constexpr std::size_t kChunk = 1 << 22;  // 4 MiB reads

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// The on-demand parser only checks the values it is asked for; a skipped (unknown) field's
// value would go unchecked, so `"x":tru` would pass. Walk it to validate it.
simdjson::error_code validateValue(simdjson::ondemand::value v) {
  using namespace simdjson;
  ondemand::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case ondemand::json_type::array: {
      ondemand::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto item : a) {
        ondemand::value x;
        if (auto e = std::move(item).get(x)) return e;
        if (auto e = validateValue(x)) return e;
      }
      return SUCCESS;
    }
    case ondemand::json_type::object: {
      ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto item : o) {
        ondemand::field f;
        if (auto e = std::move(item).get(f)) return e;
        std::string_view k;
        if (auto e = f.unescaped_key().get(k)) return e;
        if (auto e = validateValue(f.value())) return e;
      }
      return SUCCESS;
    }
    case ondemand::json_type::number: {
      ondemand::number n;
      return v.get_number().get(n);
    }
    case ondemand::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case ondemand::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case ondemand::json_type::null: {
      bool isNull = false;
      if (auto e = v.is_null().get(isNull)) return e;
      return isNull ? SUCCESS : N_ATOM_ERROR;
    }
  }
  return INCORRECT_TYPE;
}

}  // namespace

std::optional<Micros> parseRfc3339(std::string_view s) {
  int y, mo, d, h, mi, sec;
  if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
      !digits(s, 17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kMonthDays[mo - 1] + (mo == 2 && leap)) return std::nullopt;  // no February 30th
  std::size_t i = 19;
  Micros frac = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    Micros scale = 100000;
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      frac += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  Micros offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!digits(s, i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !digits(s, i + 4, 2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset = (oh * 3600LL + om * 60LL) * kMicrosPerSecond * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return std::nullopt;  // RFC 3339 requires a zone
  }
  if (i != s.size()) return std::nullopt;
  const std::int64_t days = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const Micros t = ((days * 86400 + h * 3600LL + mi * 60LL + sec) * kMicrosPerSecond) + frac;
  return t - offset;
}

std::optional<Micros> instantFromNumber(double units, double microsPerUnit) {
  // Checked before the conversion (llround past int64 is undefined), against the end of the
  // range, which a double holds exactly (kLastInstant it does not).
  constexpr double kEnd = static_cast<double>(kLastInstant / 1000 + 1) * 1000.0;
  const double us = units * microsPerUnit;
  if (!(us >= 0 && us < kEnd)) return std::nullopt;  // NaN too
  return std::min(static_cast<Micros>(std::llround(us)), kLastInstant);
}

std::optional<Micros> parseInstant(std::string_view rfc3339) {
  const auto t = parseRfc3339(rfc3339);
  if (!t || !plausibleInstant(*t)) return std::nullopt;
  return t;
}

struct JsonlReader::Impl {
  formats::JsonlLineParser parser;
};

JsonlReader::JsonlReader(std::string sourceName, ReadFn read, bool skipBadLines,
                         std::size_t capacity)
    : impl_(std::make_unique<Impl>()),
      source_(std::move(sourceName)),
      read_(std::move(read)),
      skipBad_(skipBadLines) {
  buf_.resize(std::clamp<std::size_t>(capacity, 4096, kChunk) + simdjson::SIMDJSON_PADDING);
}

JsonlReader::~JsonlReader() {
  if (file_) std::fclose(file_);
}

std::unique_ptr<JsonlReader> JsonlReader::openFile(const std::string& path, bool skipBadLines) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  auto r = std::make_unique<JsonlReader>(path, fileReader(f, path), skipBadLines);
  if (f != stdin) r->file_ = f;
  return r;
}

JsonlReader::ReadFn JsonlReader::fileReader(std::FILE* f, std::string path) {
  return [f, path = std::move(path)](char* dst, std::size_t n) {
    const std::size_t got = std::fread(dst, 1, n, f);
    if (got == 0 && std::ferror(f))
      throw InputError(path, 0, "", std::string("cannot read: ") + std::strerror(errno));
    return got;
  };
}

JsonlReader::ReadFn JsonlReader::memoryReader(std::string_view data) {
  auto pos = std::make_shared<std::size_t>(0);
  return [data, pos](char* dst, std::size_t n) {
    const std::size_t k = std::min(n, data.size() - *pos);
    std::memcpy(dst, data.data() + *pos, k);
    *pos += k;
    return k;
  };
}

std::unique_ptr<JsonlReader> JsonlReader::fromMemory(std::string name, std::string_view data,
                                                     bool skipBadLines) {
  return std::make_unique<JsonlReader>(std::move(name), memoryReader(data), skipBadLines,
                                       data.size() + 1);
}

bool JsonlReader::nextLine(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl) {
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      if (len > input_limits::kLine)
        throw formats::lineTooLong(source_, line_ + 1);  // in the last read
      line = std::string_view(start, len);
      begin_ += len + 1;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      if (end_ - begin_ > input_limits::kLine) throw formats::lineTooLong(source_, line_ + 1);
      line = std::string_view(start, end_ - begin_);  // last line without '\n'
      begin_ = end_;
      return true;
    }
    // Keep the partial line, refill behind it. A line longer than the chunk grows the buffer,
    // up to the limit of one line (a file without newlines, /dev/zero, must not take it all).
    const std::size_t keep = end_ - begin_;
    if (keep > input_limits::kLine) throw formats::lineTooLong(source_, line_ + 1);
    if (keep) std::memmove(buf_.data(), start, keep);
    begin_ = 0;
    end_ = keep;
    // A line longer than half the buffer, or a small first buffer, grows it.
    if (!formats::refillPadded(buf_, end_, kChunk, read_)) eof_ = true;
  }
}

bool JsonlReader::next(CallRecord& rec) {
  std::string_view line;
  std::string field, err;
  while (nextLine(line)) {
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Most lines start with '{': find_first_not_of stops at once (a byte loop cost 13 %).
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    field.clear();
    err.clear();
    if (parseLine(line, rec, field, err)) {
      rec.line = line_;
      return true;
    }
    InputError e(source_, line_, field, err);
    if (!skipBad_) throw e;
    ++skipped_;
    if (skippedMessages_.size() < 20) skippedMessages_.emplace_back(e.what());
  }
  return false;
}

namespace {

using simdjson::ondemand::value;

// Field readers of the simdjson path: false with `field` and `err` set on a bad value.
bool fail(std::string& field, std::string& err, std::string_view f, std::string what) {
  field = std::string(f);
  err = std::move(what);
  return false;
}

constexpr const char* kTsExpected = "expected epoch milliseconds or an RFC 3339 string";

bool readTs(value v, CallRecord& rec, std::string& field, std::string& err) {
  using namespace simdjson;
  ondemand::json_type t;
  if (v.type().get(t)) return fail(field, err, "ts", "invalid value");
  if (t == ondemand::json_type::number) {
    double ms;
    if (v.get_double().get(ms)) return fail(field, err, "ts", kTsExpected);
    const auto t = instantFromMillis(ms);
    if (!t)
      return fail(field, err, "ts",
                  std::string("out of range: epoch milliseconds ") + kInstantRange);
    rec.ts = *t;
    return true;
  }
  if (t != ondemand::json_type::string) return fail(field, err, "ts", kTsExpected);
  std::string_view s;
  if (v.get_string().get(s)) return fail(field, err, "ts", "invalid string");
  auto parsed = parseRfc3339(s);
  if (!parsed) return fail(field, err, "ts", "not an RFC 3339 timestamp: '" + std::string(s) + "'");
  if (!plausibleInstant(*parsed))
    return fail(field, err, "ts", "out of range: '" + std::string(s) + "' is not " + kInstantRange);
  rec.ts = *parsed;
  return true;
}

// A duration in ms (latency_ms, ttfb_ms) into `out` in µs.
bool readMillis(value v, std::string_view key, Micros& out, std::string& field, std::string& err) {
  double ms;
  if (v.get_double().get(ms) || !std::isfinite(ms))
    return fail(field, err, key, "expected a number");
  if (ms < 0) return fail(field, err, key, "must not be negative");
  // The µs value must fit in int64.
  if (ms >= 9.0e15) return fail(field, err, key, "out of range");
  out = static_cast<Micros>(std::llround(ms * 1000.0));
  return true;
}

bool readStatus(value v, CallRecord& rec, std::string& field, std::string& err) {
  std::int64_t s;
  if (v.get_int64().get(s)) return fail(field, err, "status", "expected an integer HTTP status");
  if (s < 0 || s > 999) return fail(field, err, "status", "must be in [0, 999]");
  rec.status = static_cast<int>(s);
  return true;
}

// Which of the required fields a line had.
struct Required {
  bool ts = false, instance = false, latency = false, status = false;
};

// One field of a line: a known field read into `rec`, an unknown one validated.
bool readField(std::string_view key, value v, CallRecord& rec, Required& has, std::string& field,
               std::string& err) {
  auto wantString = [&](std::string_view& out) {
    if (v.get_string().get(out)) return fail(field, err, key, "expected a string");
    return true;
  };
  if (key == "ts") return (has.ts = readTs(v, rec, field, err));
  if (key == "latency_ms") return (has.latency = readMillis(v, key, rec.latency, field, err));
  if (key == "ttfb_ms") return readMillis(v, key, rec.ttfb, field, err);
  if (key == "status") return (has.status = readStatus(v, rec, field, err));
  if (key == "instance") {
    if (!wantString(rec.instance)) return false;
    if (rec.instance.empty()) return fail(field, err, "instance", "must not be empty");
    return (has.instance = true);
  }
  if (key == "outcome") {
    std::string_view s;
    if (!wantString(s)) return false;
    if (!parseOutcome(s, rec.outcome))
      return fail(field, err, "outcome",
                  "expected ok, error, timeout or reset, got '" + std::string(s) + "'");
    return (rec.hasOutcome = true);
  }
  if (key == "model") return wantString(rec.model);
  if (key == "tenant") return wantString(rec.tenant);
  if (key == "route") return wantString(rec.route);
  if (key == "session") return wantString(rec.session);
  if (key == "critical") {
    bool b;
    if (v.get_bool().get(b)) return fail(field, err, "critical", "expected true or false");
    rec.critical = b;
    return true;
  }
  if (key == "tokens_in" || key == "tokens_out") {
    std::int64_t n;
    if (v.get_int64().get(n) || n < 0)
      return fail(field, err, key, "expected a non-negative integer");
    (key == "tokens_in" ? rec.tokensIn : rec.tokensOut) = n;
    return true;
  }
  if (auto e = validateValue(v))  // unknown fields are ignored, but must be JSON
    return fail(field, err, "", std::string("invalid JSON: ") + simdjson::error_message(e));
  return true;
}

}  // namespace

struct formats::JsonlLineParser::Impl {
  simdjson::ondemand::parser parser;
};

formats::JsonlLineParser::JsonlLineParser() : impl_(std::make_unique<Impl>()) {}
formats::JsonlLineParser::~JsonlLineParser() = default;

bool formats::JsonlLineParser::parse(std::string_view line, std::size_t capacity, CallRecord& rec,
                                     std::string& field, std::string& err) {
  return parseCanonicalLine(line, rec) || parseGeneral(line, capacity, rec, field, err);
}

bool formats::JsonlLineParser::parseGeneral(std::string_view line, std::size_t capacity,
                                            CallRecord& rec, std::string& field, std::string& err) {
  using namespace simdjson;
  rec = CallRecord{};
  ondemand::document doc;
  if (auto e =
          impl_->parser.iterate(padded_string_view(line.data(), line.size(), capacity)).get(doc)) {
    err = std::string("invalid JSON: ") + error_message(e);
    return false;
  }
  ondemand::object obj;
  if (auto e = doc.get_object().get(obj)) {
    // A truncated or unbalanced line is broken JSON, not a non-object.
    err = e == INCORRECT_TYPE ? std::string("expected a JSON object per line")
                              : std::string("invalid JSON: ") + error_message(e);
    return false;
  }
  Required has;
  for (auto fieldResult : obj) {
    ondemand::field f;
    if (auto e = std::move(fieldResult).get(f)) {
      err = std::string("invalid JSON: ") + error_message(e);
      return false;
    }
    std::string_view key;
    if (f.unescaped_key().get(key)) {
      err = "invalid JSON: bad key";
      return false;
    }
    if (!readField(key, f.value(), rec, has, field, err)) return false;
  }
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) {  // succeeds only when something follows
    err = "trailing content after the JSON object";
    return false;
  }
  field = !has.ts         ? "ts"
          : !has.instance ? "instance"
          : !has.latency  ? "latency_ms"
          : !has.status   ? "status"
                          : "";
  if (!field.empty()) {
    err = "missing required field";
    return false;
  }
  if (!rec.hasOutcome) rec.outcome = rec.status == 0 ? Outcome::Error : Outcome::Ok;
  return true;
}

bool JsonlReader::parseLine(std::string_view line, CallRecord& rec, std::string& field,
                            std::string& err) {
  // The buffer holds at least SIMDJSON_PADDING readable bytes after any line.
  const std::size_t capacity = static_cast<std::size_t>(buf_.data() + buf_.size() - line.data());
  return impl_->parser.parse(line, capacity, rec, field, err);
}

}  // namespace spillway
