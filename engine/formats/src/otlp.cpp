// OTLP/JSON traces → GenAI calls. One decoder reads a request (simdjson DOM); the file source
// runs it per file or per line and sorts the file's calls by start time (stable), since
// exporters batch spans in completion order; the live receiver runs it per POST body.
#include "spillway/formats/otlp.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <iterator>

#include "internal.hpp"

namespace spillway::formats {

CallRecord SpanCall::view() const {
  CallRecord r;
  r.ts = ts;
  r.latency = latency;
  r.status = status;
  r.outcome = outcome;
  r.hasOutcome = hasOutcome;
  r.instance = instance;
  r.model = model;
  r.tenant = tenant;
  r.session = session;
  r.tokensIn = tokensIn;
  r.tokensOut = tokensOut;
  return r;
}

namespace {

const OtlpValue* find(const std::vector<OtlpAttribute>* attrs, std::string_view key) {
  if (!attrs) return nullptr;
  for (const auto& a : *attrs)
    if (a.key == key) return &a.value;
  return nullptr;
}
const std::string* str(const OtlpValue* v) {
  return v ? std::get_if<std::string>(v) : nullptr;
}
// An integer attribute: intValue, or a whole doubleValue, or a numeric string.
std::optional<std::int64_t> integer(const OtlpValue* v) {
  if (!v) return std::nullopt;
  if (auto i = std::get_if<std::int64_t>(v)) return *i;
  if (auto d = std::get_if<double>(v); d && std::floor(*d) == *d && std::abs(*d) < 9e15)
    return static_cast<std::int64_t>(*d);
  if (auto s = std::get_if<std::string>(v)) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), n);
    if (ec == std::errc() && end == s->data() + s->size()) return n;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// Exactly the keys spanToCall looks up, in the order of `Key`.
constexpr std::string_view kUsed[] = {"gen_ai.request.model",
                                      "gen_ai.response.model",
                                      "gen_ai.provider.name",
                                      "gen_ai.system",
                                      "gen_ai.operation.name",
                                      "server.address",
                                      "server.port",
                                      "error.type",
                                      "http.response.status_code",
                                      "gen_ai.usage.input_tokens",
                                      "gen_ai.usage.output_tokens",
                                      "gen_ai.conversation.id"};
enum Key {
  RequestModel,
  ResponseModel,
  ProviderName,
  System,
  OperationName,
  ServerAddress,
  ServerPort,
  ErrorType,
  HttpStatus,
  InputTokens,
  OutputTokens,
  ConversationId,
  kKeys
};
static_assert(std::size(kUsed) == kKeys);

int keyIndex(std::string_view key) {
  for (int k = 0; k < kKeys; ++k)
    if (kUsed[k] == key) return k;
  return -1;
}

// A span's attributes by key, found in one pass; the first of a repeated key counts.
struct Attributes {
  const OtlpValue* at[kKeys] = {};
  explicit Attributes(const std::vector<OtlpAttribute>& attrs) {
    for (const OtlpAttribute& a : attrs)
      if (const int k = keyIndex(a.key); k >= 0 && !at[k]) at[k] = &a.value;
  }
  const OtlpValue* operator[](Key k) const { return at[k]; }
};

}  // namespace

bool otlpAttributeUsed(std::string_view key) {
  return keyIndex(key) >= 0;
}

bool otlpResourceAttributeUsed(std::string_view key) {
  return key == "service.name";
}

SpanResult spanToCall(const OtlpSpan& span, SpanCall& out, std::string& field, std::string& error) {
  const Attributes attrs(span.attributes);
  const auto* reqModel = attrs[RequestModel];
  const auto* provider = attrs[ProviderName];
  if (!provider) provider = attrs[System];
  if (!reqModel && !provider && !attrs[OperationName]) return SpanResult::NotACall;
  out = SpanCall{};
  auto invalid = [&](const char* f, std::string what) {
    field = f;
    error = std::move(what);
    return SpanResult::Invalid;
  };
  if (span.startNs == 0) return invalid("startTimeUnixNano", "missing or zero");
  if (span.endNs < span.startNs) return invalid("endTimeUnixNano", "is before startTimeUnixNano");
  static_assert(~std::uint64_t{0} / 1000 <= kLastInstant, "any start is a plausible instant");
  out.ts = static_cast<Micros>(span.startNs / 1000);
  out.latency = static_cast<Micros>((span.endNs - span.startNs + 500) / 1000);

  if (const std::string* addr = str(attrs[ServerAddress]); addr && !addr->empty()) {
    out.instance = *addr;
    if (const auto* p = attrs[ServerPort]) {
      auto port = integer(p);
      if (!port || *port < 0 || *port > 65535) return invalid("server.port", "expected a port");
      out.instance.append(":").append(std::to_string(*port));
    }
  } else if (const std::string* prov = str(provider); prov && !prov->empty()) {
    out.instance = *prov;
  } else {
    return invalid("server.address",
                   "missing: a call needs server.address or gen_ai.provider.name");
  }
  if (const std::string* m = str(reqModel))
    out.model = *m;
  else if (const std::string* rm = str(attrs[ResponseModel]))
    out.model = *rm;

  const std::string* errType = str(attrs[ErrorType]);
  if (const auto* sc = attrs[HttpStatus]) {
    auto s = integer(sc);
    if (!s || *s < 0 || *s > 999)
      return invalid("http.response.status_code", "expected an HTTP status");
    out.status = static_cast<int>(*s);
  } else if (errType) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(errType->data(), errType->data() + errType->size(), n);
    const bool numeric = ec == std::errc() && end == errType->data() + errType->size();
    out.status = numeric && n >= 100 && n <= 999 ? static_cast<int>(n) : 0;
  } else {
    out.status = span.statusCode == 2 ? 0 : 200;
  }
  std::string lowered;
  if (errType)
    for (char c : *errType)
      lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lowered.find("timeout") != std::string::npos) {
    out.outcome = Outcome::Timeout;
    out.hasOutcome = true;
  } else {
    out.outcome = out.status == 0 ? Outcome::Error : Outcome::Ok;
  }
  for (auto [key, dst] :
       {std::pair{InputTokens, &out.tokensIn}, std::pair{OutputTokens, &out.tokensOut}}) {
    if (const auto* v = attrs[key]) {
      auto n = integer(v);
      if (!n || *n < 0) return invalid(kUsed[key].data(), "expected a non-negative integer");
      *dst = *n;
    }
  }
  if (const std::string* svc = str(find(span.resource, "service.name"))) out.tenant = *svc;
  if (const std::string* conv = str(attrs[ConversationId])) out.session = *conv;
  return SpanResult::Call;
}

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// A JSON-path-ish location for errors: resourceSpans[0].scopeSpans[2].spans[7].
struct Path {
  std::string text;
  std::string at(const char* f) const { return text.empty() ? f : text + "." + f; }
};

// Reads one ExportTraceServiceRequest document. Structural errors throw InputError(name, line,
// field, what); a span's own errors go to onBadSpan and the rest of the request goes on.
class JsonRequestDecoder {
 public:
  std::string name;
  long line = 0;
  std::function<void(SpanCall&&)> onCall;
  std::function<void()> onNotCall;
  std::function<void(const InputError&)> onBadSpan;

  void decode(std::string_view doc) {
    element root;
    if (auto e = parser_.parse(doc.data(), doc.size()).get(root))
      fail("", std::string("invalid JSON: ") + simdjson::error_message(e));
    object req;
    if (root.get_object().get(req)) fail("", "expected an ExportTraceServiceRequest object");
    auto rsAll = req.at_key("resourceSpans");
    if (rsAll.error()) return;  // an empty request
    array rsArr;
    if (rsAll.value_unsafe().get_array().get(rsArr)) fail("resourceSpans", "expected an array");
    std::size_t ri = 0;
    for (element rs : rsArr) {
      const std::string rsPath = "resourceSpans[" + std::to_string(ri++) + "]";
      object rso;
      if (rs.get_object().get(rso)) fail(rsPath, "expected an object");
      std::vector<OtlpAttribute> resource;
      if (auto r = rso.at_key("resource"); !r.error()) {
        object ro;
        if (r.value_unsafe().get_object().get(ro)) fail(rsPath + ".resource", "expected an object");
        resource = attributes(ro, rsPath + ".resource.attributes", otlpResourceAttributeUsed);
      }
      auto ss = rso.at_key("scopeSpans");
      const char* ssName = "scopeSpans";
      if (ss.error()) {  // pre-1.0 exporters
        ss = rso.at_key("instrumentationLibrarySpans");
        ssName = "instrumentationLibrarySpans";
      }
      if (ss.error()) continue;
      array ssArr;
      if (ss.value_unsafe().get_array().get(ssArr))
        fail(rsPath + "." + ssName, "expected an array");
      std::size_t si = 0;
      for (element scope : ssArr) {
        const std::string sPath = rsPath + "." + ssName + "[" + std::to_string(si++) + "]";
        object so;
        if (scope.get_object().get(so)) fail(sPath, "expected an object");
        auto spans = so.at_key("spans");
        if (spans.error()) continue;
        array spArr;
        if (spans.value_unsafe().get_array().get(spArr))
          fail(sPath + ".spans", "expected an array");
        std::size_t k = 0;
        for (element sp : spArr) {
          const std::string spPath = sPath + ".spans[" + std::to_string(k++) + "]";
          try {
            decodeSpan(sp, spPath, resource);
          } catch (const InputError& e) {
            onBadSpan(e);  // one bad span does not lose the rest of the request
          }
        }
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(name, line, field, what);
  }

  static std::optional<std::uint64_t> u64(element e) {
    if (e.is_uint64()) return e.get_uint64().value_unsafe();
    if (e.is_int64() && e.get_int64().value_unsafe() >= 0)
      return static_cast<std::uint64_t>(e.get_int64().value_unsafe());
    std::string_view s;
    if (!e.get_string().get(s)) {
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (ec == std::errc() && end == s.data() + s.size()) return n;
    }
    return std::nullopt;
  }

  OtlpValue anyValue(element v, const std::string& where) const {
    object o;
    if (v.get_object().get(o)) fail(where, "expected an AnyValue object");
    for (auto [k, x] : o) {
      if (k == "stringValue") {
        std::string_view s;
        if (x.get_string().get(s)) fail(where, "stringValue: expected a string");
        return std::string(s);
      }
      if (k == "boolValue") {
        bool b;
        if (x.get_bool().get(b)) fail(where, "boolValue: expected true or false");
        return b;
      }
      if (k == "intValue") {  // int64 as a decimal string (or, leniently, a number)
        std::int64_t n = 0;
        std::string_view s;
        if (!x.get_int64().get(n)) return n;
        if (!x.get_string().get(s)) {
          auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
          if (ec == std::errc() && end == s.data() + s.size()) return n;
        }
        fail(where, "intValue: expected an integer");
      }
      if (k == "doubleValue") {
        double d;
        if (x.get_double().get(d)) fail(where, "doubleValue: expected a number");
        return d;
      }
    }
    return std::monostate{};
  }

  // The attributes `used` keeps; the others are only checked for their {"key": …} shape.
  std::vector<OtlpAttribute> attributes(object parent, const std::string& where,
                                        bool (*used)(std::string_view)) const {
    std::vector<OtlpAttribute> out;
    auto a = parent.at_key("attributes");
    if (a.error()) return out;
    array arr;
    if (a.value_unsafe().get_array().get(arr)) fail(where, "expected an array");
    std::size_t i = 0;
    for (element kv : arr) {
      const std::size_t idx = i++;
      object o;
      std::string_view key;
      if (kv.get_object().get(o) || o["key"].get_string().get(key))
        fail(where + "[" + std::to_string(idx) + "]",
             "expected {\"key\": ..., \"value\": AnyValue}");
      if (!used(key)) continue;
      auto v = o.at_key("value");
      out.push_back(
          {std::string(key),
           v.error() ? OtlpValue{}
                     : anyValue(v.value_unsafe(), where + "[" + std::to_string(idx) + "].value")});
    }
    return out;
  }

  void decodeSpan(element sp, const std::string& at, const std::vector<OtlpAttribute>& resource) {
    object o;
    if (sp.get_object().get(o)) fail(at, "expected a span object");
    OtlpSpan span;
    span.resource = &resource;
    std::string_view spanName;
    if (!o["name"].get_string().get(spanName)) span.name = spanName;
    for (auto [f, dst] : {std::pair{"startTimeUnixNano", &span.startNs},
                          std::pair{"endTimeUnixNano", &span.endNs}}) {
      auto v = o.at_key(f);
      if (v.error()) fail(Path{at}.at(f), "missing required field");
      auto n = u64(v.value_unsafe());
      if (!n) fail(Path{at}.at(f), "expected nanoseconds since the epoch (a decimal string)");
      *dst = *n;
    }
    if (auto k = o.at_key("kind"); !k.error() && k.value_unsafe().is_int64())
      span.kind = static_cast<int>(k.value_unsafe().get_int64().value_unsafe());
    if (auto st = o.at_key("status"); !st.error()) {
      object so;
      if (!st.value_unsafe().get_object().get(so)) {
        if (auto c = so.at_key("code"); !c.error() && c.value_unsafe().is_int64())
          span.statusCode = static_cast<int>(c.value_unsafe().get_int64().value_unsafe());
      }
    }
    span.attributes = attributes(o, Path{at}.at("attributes"), otlpAttributeUsed);
    SpanCall call;
    std::string field, err;
    switch (spanToCall(span, call, field, err)) {
      case SpanResult::NotACall:
        onNotCall();
        return;
      case SpanResult::Invalid:
        fail(Path{at}.at(field.c_str()), err);
      case SpanResult::Call:
        onCall(std::move(call));
        return;
    }
  }

  simdjson::dom::parser parser_;
};

}  // namespace

void decodeOtlpJson(std::string_view body, OtlpBatch& out, const std::string& name) {
  // One parser per thread: its buffers are reused from request to request.
  thread_local JsonRequestDecoder dec;
  dec.name = name;
  dec.line = 0;
  dec.onCall = [&out](SpanCall&& c) {
    ++out.spans;
    out.calls.push_back(std::move(c));
  };
  dec.onNotCall = [&out] {
    ++out.spans;
    ++out.notCalls;
  };
  dec.onBadSpan = [&out](const InputError& e) {
    ++out.spans;
    ++out.invalid;
    if (out.firstError.empty())
      out.firstError = e.field().empty() ? e.detail() : e.field() + ": " + e.detail();
  };
  dec.decode(body);
}

namespace detail {
namespace {

class OtlpSource final : public RecordSource {
 public:
  OtlpSource(std::string name, std::string text, const ImportOptions& opt)
      : RecordSource(std::move(name), opt.skipBadLines), text_(std::move(text)) {
    load();
  }
  bool next(CallRecord& rec) override {
    if (cur_ >= calls_.size()) return false;
    rec = calls_[cur_].first.view();
    rec.line = calls_[cur_].second;
    ++cur_;
    return true;
  }

 private:
  void load() {
    // One request per file, or one per line (JSON Lines): decided by whether the first
    // non-blank line is a whole JSON document on its own.
    std::vector<std::pair<std::string_view, long>> docs;
    std::size_t pos = 0;
    long lineNo = 0;
    bool perLine = false, decided = false;
    while (pos < text_.size()) {
      std::size_t nl = text_.find('\n', pos);
      if (nl == std::string::npos) nl = text_.size();
      std::string_view line(text_.data() + pos, nl - pos);
      pos = nl + 1;
      ++lineNo;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (!decided) {
        decided = true;
        simdjson::padded_string p(line);
        simdjson::dom::parser probe;
        simdjson::dom::element e;
        perLine = !probe.parse(p).get(e) && e.is_object();
        if (!perLine) {
          docs.emplace_back(std::string_view(text_), lineNo);
          break;
        }
      }
      docs.emplace_back(line, lineNo);
    }
    JsonRequestDecoder dec;
    dec.name = source_;
    dec.onCall = [this, &dec](SpanCall&& c) { calls_.emplace_back(std::move(c), dec.line); };
    dec.onNotCall = [this] { ++ignored_; };
    dec.onBadSpan = [this](const InputError& e) { reject(e); };
    for (auto [doc, ln] : docs) {
      dec.line = ln;
      try {
        dec.decode(doc);
      } catch (const InputError& e) {
        reject(e);
      }
    }
    std::stable_sort(calls_.begin(), calls_.end(),
                     [](const auto& a, const auto& b) { return a.first.ts < b.first.ts; });
  }

  std::string text_;
  std::vector<std::pair<SpanCall, long>> calls_;
  std::size_t cur_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> makeOtlp(std::string name, std::string text,
                                       const ImportOptions& opt) {
  return std::make_unique<OtlpSource>(std::move(name), std::move(text), opt);
}

}  // namespace detail
}  // namespace spillway::formats
