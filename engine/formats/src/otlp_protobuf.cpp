// OTLP protobuf, decoded by hand against opentelemetry-proto's trace.proto, common.proto and
// resource.proto (field numbers below). Nothing here recurses: each message type has its own
// function and arrays / kvlists are skipped as opaque bytes, so nesting depth is the schema's
// (request → resource spans → scope spans → span → key-value → any-value), whatever the input.
#include "spillway/formats/otlp_protobuf.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace spillway::formats {
namespace {

enum Wire : int { kVarint = 0, kI64 = 1, kLen = 2, kI32 = 5 };

// A view of one message's bytes; every read checks against `end` first.
struct Reader {
  const unsigned char* p = nullptr;
  const unsigned char* end = nullptr;
  bool done() const { return p == end; }
  std::size_t left() const { return static_cast<std::size_t>(end - p); }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(end - p)};
  }
};

// Proto3 strings must be UTF-8 (protobuf's own parsers reject the message otherwise), and the
// kept strings end up in JSON output: overlongs, surrogates and > U+10FFFF are refused.
bool validUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (end - p >= 8) {  // ASCII, the usual case, eight bytes at a time
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if (!(w & 0x8080808080808080ULL)) {
        p += 8;
        continue;
      }
    }
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
}

// An AnyValue as read, its string a view of the request: stored into an attribute once,
// reusing the attribute's own string when it holds one.
struct Scalar {
  enum Kind { None, Text, Bool, Int, Real } kind = None;
  std::string_view text;
  bool flag = false;
  std::int64_t integer = 0;
  double real = 0;

  void store(formats::OtlpValue& to) const {
    switch (kind) {
      case None:
        to = std::monostate{};
        break;
      case Text:
        if (auto* s = std::get_if<std::string>(&to))
          s->assign(text);
        else
          to.emplace<std::string>(text);
        break;
      case Bool:
        to = flag;
        break;
      case Int:
        to = integer;
        break;
      case Real:
        to = real;
        break;
    }
  }
};

// One request's bytes → calls. The hot paths (one-byte varints, tags and lengths, ASCII
// strings) are inline; error text and the path of the span being read ("resourceSpans[0].
// scopeSpans[1].spans[7]") are built only when something is wrong. The span, its attributes and
// their strings are reused from span to span, so a well-formed span allocates nothing but its
// call's own long strings.
class Decoder {
 public:
  explicit Decoder(formats::OtlpBatch& out) : out_(out) {}

  bool request(Reader r) {
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 1 && w == kLen) {  // repeated ResourceSpans resource_spans = 1
        Reader sub;
        if (!len(r, sub)) return false;
        at_[0] = resourceIndex_++;
        depth_ = 1;
        if (!resourceSpans(sub)) return false;
        depth_ = 0;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  // Where the reader is: resourceSpans[i], .scopeSpans[j], .spans[k], as deep as depth_.
  std::string path() const {
    static constexpr const char* kLevel[] = {"resourceSpans[", ".scopeSpans[", ".spans["};
    std::string p;
    for (int d = 0; d < depth_; ++d) p.append(kLevel[d]).append(std::to_string(at_[d])).append("]");
    return p;
  }

  [[gnu::noinline, gnu::cold]] bool fail(const std::string& what) {
    if (error_.empty()) error_ = depth_ == 0 ? what : path() + ": " + what;
    return false;
  }

  bool varint(Reader& r, std::uint64_t& v) {
    if (r.p != r.end && *r.p < 0x80) {
      v = *r.p++;
      return true;
    }
    return varintLong(r, v);
  }

  [[gnu::noinline]] bool varintLong(Reader& r, std::uint64_t& v) {
    v = 0;
    for (int i = 0; i < 10; ++i) {
      if (r.done()) return fail("truncated varint");
      const unsigned char b = *r.p++;
      if (i == 9 && b > 1) return fail("varint longer than 64 bits");
      v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
      if (!(b & 0x80)) return true;
    }
    return fail("varint longer than 10 bytes");
  }

  bool tag(Reader& r, std::uint32_t& field, int& wire) {
    std::uint64_t t;
    if (!varint(r, t)) return false;
    field = static_cast<std::uint32_t>(t >> 3);
    wire = static_cast<int>(t & 7);
    if (field == 0 || (t >> 3) > 0x1FFFFFFF) return fail("invalid field number");
    if (wire != kVarint && wire != kI64 && wire != kLen && wire != kI32)
      return badWire(field, wire);
    return true;
  }

  [[gnu::noinline, gnu::cold]] bool badWire(std::uint32_t field, int wire) {
    return fail("unsupported wire type " + std::to_string(wire) + " (field " +
                std::to_string(field) + ")");
  }

  bool len(Reader& r, Reader& sub) {
    std::uint64_t n;
    if (!varint(r, n)) return false;
    if (n > r.left()) return pastTheEnd(n, r.left());
    sub = Reader{r.p, r.p + n};
    r.p += n;
    return true;
  }

  [[gnu::noinline, gnu::cold]] bool pastTheEnd(std::uint64_t n, std::size_t left) {
    return fail("length " + std::to_string(n) + " runs past the end of the message (" +
                std::to_string(left) + " bytes left)");
  }

  bool fixed64(Reader& r, std::uint64_t& v) {
    if (r.left() < 8) return fail("truncated fixed64");
    v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | r.p[i];  // little-endian on the wire
    r.p += 8;
    return true;
  }

  bool skip(Reader& r, int wire) {
    std::uint64_t v;
    Reader sub;
    switch (wire) {
      case kVarint:
        return varint(r, v);
      case kI64:
        if (r.left() < 8) return fail("truncated fixed64");
        r.p += 8;
        return true;
      case kLen:
        return len(r, sub);
      case kI32:
        if (r.left() < 4) return fail("truncated fixed32");
        r.p += 4;
        return true;
      default:
        return fail("unsupported wire type");
    }
  }

  bool string(Reader& r, std::string_view& s, const char* what) {
    Reader sub;
    if (!len(r, sub)) return false;
    s = sub.view();
    if (!validUtf8(s)) return fail(std::string(what) + ": invalid UTF-8");
    return true;
  }

  // ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2;
  //                 (deprecated) repeated InstrumentationLibrarySpans … = 1000 }.
  // The resource may come after the spans on the wire: scopes are decoded in a second pass.
  bool resourceSpans(Reader r) {
    std::vector<formats::OtlpAttribute> resource;
    scopes_.clear();
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 1 && w == kLen) {
        Reader sub;
        if (!len(r, sub) || !resourceMsg(sub, resource)) return false;
      } else if ((f == 2 || f == 1000) && w == kLen) {
        Reader sub;
        if (!len(r, sub)) return false;
        scopes_.push_back(sub);
      } else if (!skip(r, w)) {
        return false;
      }
    }
    for (std::size_t i = 0; i < scopes_.size(); ++i) {  // scopeSpans never touches scopes_
      at_[1] = i;
      depth_ = 2;
      if (!scopeSpans(scopes_[i], resource)) return false;
    }
    depth_ = 1;
    return true;
  }

  // Resource { repeated KeyValue attributes = 1; … }
  bool resourceMsg(Reader r, std::vector<formats::OtlpAttribute>& attrs) {
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 1 && w == kLen) {
        Reader sub;
        std::size_t kept = attrs.size();
        if (!len(r, sub) || !keyValue(sub, attrs, kept, formats::otlpResourceAttributeUsed))
          return false;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    return true;
  }

  // ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3 }
  bool scopeSpans(Reader r, const std::vector<formats::OtlpAttribute>& resource) {
    std::size_t k = 0;
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 2 && w == kLen) {
        Reader sub;
        if (!len(r, sub)) return false;
        at_[2] = k++;
        depth_ = 3;
        if (!span(sub, resource)) return false;
        depth_ = 2;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    return true;
  }

  // The reused span, emptied. Its attributes stay, to be overwritten in place (their strings
  // keep their buffers) and cut to the count this span keeps before it is mapped.
  formats::OtlpSpan& freshSpan() {
    span_.name.clear();
    span_.kind = 0;
    span_.startNs = span_.endNs = 0;
    span_.statusCode = 0;
    return span_;
  }

  // Span { bytes trace_id = 1; bytes span_id = 2; string name = 5; SpanKind kind = 6;
  //        fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  //        repeated KeyValue attributes = 9; Status status = 15; … }
  // A field with an unexpected wire type is skipped as unknown, as protobuf's parsers do.
  bool span(Reader r, const std::vector<formats::OtlpAttribute>& resource) {
    formats::OtlpSpan& s = freshSpan();
    s.resource = &resource;
    std::size_t kept = 0;
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      std::uint64_t v = 0;
      std::string_view str;
      Reader sub;
      if ((f == 1 || f == 2) && w == kLen) {  // ids: bytes, bounds-checked, not needed
        if (!len(r, sub)) return false;
      } else if (f == 5 && w == kLen) {
        if (!string(r, str, "name")) return false;
        s.name.assign(str);
      } else if (f == 6 && w == kVarint) {
        if (!varint(r, v)) return false;
        s.kind = static_cast<int>(static_cast<std::int32_t>(v));
      } else if (f == 7 && w == kI64) {
        if (!fixed64(r, s.startNs)) return false;
      } else if (f == 8 && w == kI64) {
        if (!fixed64(r, s.endNs)) return false;
      } else if (f == 9 && w == kLen) {
        if (!len(r, sub) || !keyValue(sub, s.attributes, kept, formats::otlpAttributeUsed))
          return false;
      } else if (f == 15 && w == kLen) {
        if (!len(r, sub) || !status(sub, s.statusCode)) return false;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    s.attributes.resize(kept);
    ++out_.spans;
    // proto3 has no presence for fixed64: an absent time is 0, which spanToCall refuses.
    formats::SpanCall& call = out_.calls.emplace_back();
    const formats::SpanResult result = formats::spanToCall(s, call, field_, err_);
    if (result == formats::SpanResult::Call) return true;
    out_.calls.pop_back();
    if (result == formats::SpanResult::NotACall) {
      ++out_.notCalls;
    } else {
      ++out_.invalid;
      if (out_.firstError.empty()) out_.firstError = path() + "." + field_ + ": " + err_;
    }
    return true;
  }

  // Status { string message = 2; StatusCode code = 3; }
  bool status(Reader r, int& code) {
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 3 && w == kVarint) {
        std::uint64_t v;
        if (!varint(r, v)) return false;
        code = static_cast<int>(static_cast<std::int32_t>(v));
      } else if (!skip(r, w)) {
        return false;
      }
    }
    return true;
  }

  // KeyValue { string key = 1; AnyValue value = 2; }: kept only when `used(key)`, as
  // attrs[kept++] (overwritten in place when the vector already holds one there). The value may
  // precede the key on the wire, so it is decoded after the loop.
  bool keyValue(Reader r, std::vector<formats::OtlpAttribute>& attrs, std::size_t& kept,
                bool (*used)(std::string_view)) {
    std::string_view key;
    Reader value{nullptr, nullptr};
    bool haveValue = false;
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      if (f == 1 && w == kLen) {
        if (!string(r, key, "attribute key")) return false;
      } else if (f == 2 && w == kLen) {
        if (!len(r, value)) return false;
        haveValue = true;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    if (!used(key)) return true;
    Scalar v;
    if (haveValue && !anyValue(value, v)) return false;
    if (kept == attrs.size()) attrs.emplace_back();
    formats::OtlpAttribute& a = attrs[kept++];
    a.key.assign(key);
    v.store(a.value);
    return true;
  }

  // AnyValue { oneof { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
  //   double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6;
  //   bytes bytes_value = 7; } }: the last member on the wire wins, as for any oneof.
  bool anyValue(Reader r, Scalar& out) {
    while (!r.done()) {
      std::uint32_t f;
      int w;
      if (!tag(r, f, w)) return false;
      std::uint64_t v = 0;
      if (f == 1 && w == kLen) {
        if (!string(r, out.text, "stringValue")) return false;
        out.kind = Scalar::Text;
      } else if (f == 2 && w == kVarint) {
        if (!varint(r, v)) return false;
        out.kind = Scalar::Bool;
        out.flag = v != 0;
      } else if (f == 3 && w == kVarint) {
        if (!varint(r, v)) return false;
        out.kind = Scalar::Int;
        out.integer = static_cast<std::int64_t>(v);  // two's complement, as int64 is encoded
      } else if (f == 4 && w == kI64) {
        if (!fixed64(r, v)) return false;
        out.kind = Scalar::Real;
        std::memcpy(&out.real, &v, sizeof out.real);
      } else if ((f == 5 || f == 6 || f == 7) && w == kLen) {
        Reader sub;  // arrays, kvlists and bytes: not read by the mapping
        if (!len(r, sub)) return false;
        out.kind = Scalar::None;
      } else if (!skip(r, w)) {
        return false;
      }
    }
    return true;
  }

  formats::OtlpBatch& out_;
  std::string error_;
  int depth_ = 0;                  // how much of at_ names where the reader is
  std::size_t at_[3] = {0, 0, 0};  // resource spans, scope spans, span index
  std::size_t resourceIndex_ = 0;
  std::vector<Reader> scopes_;
  formats::OtlpSpan span_;
  std::string field_, err_;
};

void putVarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void putString(std::string& out, std::uint32_t field, std::string_view s) {
  putVarint(out, (static_cast<std::uint64_t>(field) << 3) | kLen);
  putVarint(out, s.size());
  out.append(s);
}

}  // namespace

bool decodeOtlpProtobuf(std::string_view body, formats::OtlpBatch& out, std::string& error) {
  const auto* p = reinterpret_cast<const unsigned char*>(body.data());
  Decoder d(out);
  if (d.request(Reader{p, p + body.size()})) return true;
  error = d.error();
  return false;
}

std::string encodeOtlpProtobufResponse(std::uint64_t rejectedSpans, std::string_view message) {
  if (rejectedSpans == 0 && message.empty()) return {};
  std::string partial;
  if (rejectedSpans) {
    putVarint(partial, (1u << 3) | kVarint);
    putVarint(partial, rejectedSpans);
  }
  if (!message.empty()) putString(partial, 2, message);
  std::string out;
  putString(out, 1, partial);
  return out;
}

std::string encodeRpcStatusProtobuf(int code, std::string_view message) {
  std::string out;
  if (code) {
    putVarint(out, (1u << 3) | kVarint);
    putVarint(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(code)));
  }
  if (!message.empty()) putString(out, 2, message);
  return out;
}

}  // namespace spillway::formats
