#pragma once
// CSV with a header row (RFC 4180 quoting, quoted fields may span lines) and a mapping from
// canonical fields (ts, instance, latency_ms, status, outcome, model, tenant, route, session,
// critical, tokens_in, tokens_out) to column names; each defaults to the field's own name.
#include <string>
#include <string_view>
#include <vector>

namespace spillway::formats {

// Splits one CSV record into unescaped cells. False when a quote is left open (the record
// continues on the next line) or a quoted cell is followed by something other than ','.
bool splitCsvRecord(std::string_view line, std::vector<std::string>& cells, bool& unterminated);

}  // namespace spillway::formats
