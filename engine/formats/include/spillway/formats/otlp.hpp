#pragma once
// OTLP/JSON traces (ExportTraceServiceRequest: resourceSpans → scopeSpans → spans), one request
// per file or one per line (the Collector's file exporter). GenAI client spans become calls
// (OpenTelemetry GenAI semantic conventions); other spans are ignored. The span → call mapping
// is a separate pure function so a live OTLP receiver can reuse it on decoded spans.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spillway/telemetry.hpp"

namespace spillway::formats {

// An AnyValue reduced to what the mapping reads (arrays, kvlists and bytes → monostate).
using OtlpValue = std::variant<std::monostate, std::string, bool, std::int64_t, double>;

struct OtlpAttribute {
  std::string key;
  OtlpValue value;
};

struct OtlpSpan {
  std::string name;
  int kind = 0;  // 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer
  std::uint64_t startNs = 0, endNs = 0;
  int statusCode = 0;  // 0 unset, 1 ok, 2 error
  std::vector<OtlpAttribute> attributes;
  const std::vector<OtlpAttribute>* resource = nullptr;  // the enclosing resource's attributes
};

// A call that owns its strings (CallRecord only views them).
struct SpanCall {
  Micros ts = 0, latency = 0;
  int status = 0;
  Outcome outcome = Outcome::Ok;
  bool hasOutcome = false;
  std::string instance, model, tenant, session;
  std::int64_t tokensIn = -1, tokensOut = -1;
  CallRecord view() const;
};

enum class SpanResult { Call, NotACall, Invalid };

// GenAI span → call. A span is a call when it has gen_ai.request.model, gen_ai.operation.name,
// gen_ai.provider.name or (deprecated) gen_ai.system.
//   instance  server.address[:server.port], else gen_ai.provider.name (else Invalid)
//   model     gen_ai.request.model, else gen_ai.response.model
//   ts, latency  startTimeUnixNano, endTimeUnixNano - startTimeUnixNano
//   status    http.response.status_code; else a numeric error.type ("503"); else 0 when the
//             span failed (error.type set or status ERROR), else 200
//   outcome   error.type containing "timeout" → timeout; status 0 → error; else ok
//   tokens    gen_ai.usage.input_tokens / output_tokens
//   tenant    the resource's service.name (the calling system); session gen_ai.conversation.id
// On Invalid, `field` names the attribute or span field and `error` says what is wrong.
SpanResult spanToCall(const OtlpSpan& span, SpanCall& out, std::string& field, std::string& error);

// Is `key` an attribute spanToCall reads? Decoders keep only those: a request's other
// attributes (prompts, tool definitions …) cost neither memory nor time.
bool otlpAttributeUsed(std::string_view key);
// The same for resource attributes (service.name).
bool otlpResourceAttributeUsed(std::string_view key);

// What one ExportTraceServiceRequest held: the calls, in request order, and what was not one.
struct OtlpBatch {
  std::vector<SpanCall> calls;
  std::uint64_t spans = 0;     // every span of the request
  std::uint64_t notCalls = 0;  // well-formed spans that are not GenAI calls
  std::uint64_t invalid = 0;   // spans that could not be read or mapped
  std::string firstError;      // "resourceSpans[0].scopeSpans[0].spans[3].server.port: …"
  void clear() { *this = OtlpBatch{}; }
};

// One OTLP/JSON ExportTraceServiceRequest body in memory (the live receiver's POST body) →
// `out` (appended). A bad span is counted in `invalid` and the rest of the request still
// counts; a body that is not a request at all throws InputError(name, 0, field, what).
void decodeOtlpJson(std::string_view body, OtlpBatch& out, const std::string& name = "otlp");

}  // namespace spillway::formats
