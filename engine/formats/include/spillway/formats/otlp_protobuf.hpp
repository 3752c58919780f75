#pragma once
// A hand-written decoder for the subset of OTLP protobuf the receiver needs (docs/live.md says
// why not libprotobuf): ExportTraceServiceRequest → ResourceSpans → ScopeSpans → Span (name,
// kind, start/end fixed64, attributes, status) and the resource's attributes. Every varint and
// length is bounds-checked against the buffer, nesting is fixed by the schema (arrays and
// kvlists are skipped, never descended into), strings must be UTF-8 as proto3 requires.
// Malformed input is an error message, never an exception, a crash or a read past the end.
// No Qt: the fuzzers build it alone.
#include <string>
#include <string_view>

#include "spillway/formats/otlp.hpp"

namespace spillway::formats {

// Decodes one ExportTraceServiceRequest and maps each span (formats::spanToCall), appending
// to `out`. False when the message is malformed (`error` says where and why; `out` may hold
// part of it and must be discarded): the receiver answers 400.
bool decodeOtlpProtobuf(std::string_view body, formats::OtlpBatch& out, std::string& error);

// The protobuf ExportTraceServiceResponse: empty on full success, else partial_success
// {rejected_spans, error_message}.
std::string encodeOtlpProtobufResponse(std::uint64_t rejectedSpans, std::string_view message);
// google.rpc.Status {code, message}: the body of an OTLP/HTTP error answer.
std::string encodeRpcStatusProtobuf(int code, std::string_view message);

}  // namespace spillway::formats
