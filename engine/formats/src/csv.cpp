// CSV → CallRecord, columns chosen by the header and the field map.
#include "spillway/formats/csv.hpp"

#include <array>
#include <cmath>

#include "internal.hpp"
#include "spillway/input_limits.hpp"

namespace spillway::formats {

bool splitCsvRecord(std::string_view line, std::vector<std::string>& cells, bool& unterminated) {
  cells.clear();
  unterminated = false;
  std::size_t i = 0;
  for (;;) {
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) {
          unterminated = true;
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell.push_back(line[i++]);
      }
      if (i < line.size() && line[i] != ',') return false;
    } else {
      const std::size_t comma = line.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
      cell.assign(line.substr(i, end - i));
      i = end;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) return true;
    ++i;                     // the ','
    if (i == line.size()) {  // a trailing ',' is an empty last cell
      cells.emplace_back();
      return true;
    }
  }
}

namespace detail {
namespace {

enum Col {
  kTs,
  kInstance,
  kLatency,
  kStatus,
  kOutcome,
  kModel,
  kTenant,
  kRoute,
  kSession,
  kCritical,
  kTokensIn,
  kTokensOut,
  kTtfb,
  kCols
};
constexpr std::array<const char*, kCols> kFields = {
    "ts",    "instance", "latency_ms", "status",    "outcome",    "model",  "tenant",
    "route", "session",  "critical",   "tokens_in", "tokens_out", "ttfb_ms"};

// Where a record's text leaves the quoting, fed piece by piece, as splitCsvRecord reads it: a
// '"' opens a quoted field only at a cell's start, "" inside one is a quote, and a '"' after a
// closing quote or inside an unquoted cell is literal text (splitCsvRecord rejects the first).
class QuoteScan {
 public:
  void feed(std::string_view text) {
    for (char c : text) {
      switch (state_) {
        case kCellStart:
          state_ = c == '"' ? kQuoted : c == ',' ? kCellStart : kUnquoted;
          break;
        case kUnquoted:
          if (c == ',') state_ = kCellStart;
          break;
        case kQuoted:
          if (c == '"') state_ = kQuoteSeen;
          break;
        case kQuoteSeen:
          state_ = c == '"' ? kQuoted : c == ',' ? kCellStart : kUnquoted;
          break;
      }
    }
  }
  bool quoted() const { return state_ == kQuoted; }

 private:
  enum State { kCellStart, kUnquoted, kQuoted, kQuoteSeen } state_ = kCellStart;
};

class CsvSource final : public RecordSource {
 public:
  CsvSource(std::unique_ptr<LineReader> r, const ImportOptions& opt)
      : RecordSource(r->name(), opt.skipBadLines),
        r_(std::move(r)),
        map_(effectiveMap(Format::Csv, opt.map)) {
    index_.fill(-1);
  }

  bool next(CallRecord& rec) override {
    while (readRecord()) {
      if (!headerDone_) {
        header();  // a bad header is never skippable: nothing after it can be read
        continue;
      }
      try {
        if (parse(rec)) return true;
      } catch (const InputError& e) {
        reject(e);
      }
    }
    if (!headerDone_) throw InputError(source_, 0, "", "empty file: expected a header row");
    return false;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(source_, startLine_, field, what);
  }

  // Reads one logical record (joining lines while a quote is open) into cells_. Whether a
  // quote is still open is followed over each new line only (QuoteScan), and the record is
  // split once, when whole: a quoted field over many lines costs linear time, not a re-split
  // of everything so far per line. A record is at most one line's limit long.
  bool readRecord() {
    std::string_view line;
    for (;;) {
      if (!r_->next(line)) return false;
      if (!line.empty()) break;  // blank lines are skipped
    }
    startLine_ = r_->lineNo();
    joined_.assign(line);
    QuoteScan scan;
    scan.feed(line);
    bool open = scan.quoted();
    while (open) {
      if (!r_->next(line)) break;
      if (joined_.size() + 1 + line.size() > input_limits::kLine)
        return skipRecord("a quoted field runs over " + formatByteLimit(input_limits::kLine) +
                          " of lines (an unterminated quote?)");
      joined_.append("\n").append(line);
      scan.feed("\n");
      scan.feed(line);
      open = scan.quoted();
    }
    if (!open && splitCsvRecord(joined_, cells_, open)) return true;
    return skipRecord(open ? "unterminated quoted field" : "text after a closing quote", !open);
  }

  // A record that cannot be read: fatal in the header, else rejected (skipped with
  // --skip-bad-lines); `more`: the input goes on after it.
  bool skipRecord(const std::string& what, bool more = true) {
    if (!headerDone_) fail("", what);
    try {
      fail("", what);
    } catch (const InputError& e) {
      reject(e);
    }
    return more && readRecord();
  }

  void header() {
    for (int c = 0; c < kCols; ++c) {
      const std::string& want = map_.at(kFields[c]);
      for (std::size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i] != want) continue;
        // Two columns of one name: which one holds the field is anybody's guess.
        if (index_[c] >= 0) fail(kFields[c], "column '" + want + "' appears twice in the header");
        index_[c] = static_cast<int>(i);
      }
    }
    for (int c : {kTs, kInstance, kLatency, kStatus})
      if (index_[c] < 0)
        fail(kFields[c], "no column '" + map_.at(kFields[c]) + "' in the header (use --map " +
                             kFields[c] + "=COLUMN)");
    columns_ = cells_.size();
    headerDone_ = true;
  }

  std::string_view cell(int c) const {
    const int i = index_[c];
    if (i < 0 || static_cast<std::size_t>(i) >= cells_.size()) return {};
    return cells_[static_cast<std::size_t>(i)];
  }
  const std::string& col(int c) const { return map_.at(kFields[c]); }
  // A duration column in ms, as µs.
  Micros millis(int c) const {
    const auto ms = parseNumber(cell(c));
    if (!ms || *ms < 0 || *ms >= 9.0e12)
      fail(col(c), "expected milliseconds >= 0, got '" + std::string(cell(c)) + "'");
    return static_cast<Micros>(std::llround(*ms * 1000.0));
  }

  // A name cell: valid UTF-8, as a JSON importer's strings are, so that what is imported can
  // be written out (library export, canonical JSONL) and read back.
  std::string_view text(int c) const {
    const std::string_view v = cell(c);
    if (!isText(v)) fail(col(c), "not valid UTF-8");
    return v;
  }

  bool parse(CallRecord& rec) {
    rec = CallRecord{};
    if (cells_.size() < 2 && cells_[0].find_first_not_of(" \t") == std::string::npos) return false;
    // A row of another width is misaligned (an unquoted comma in a name, a column lost): its
    // cells cannot be trusted to sit under their headers.
    if (cells_.size() != columns_)
      fail("", std::to_string(cells_.size()) + " cells where the header has " +
                   std::to_string(columns_));
    const auto ts = parseTime(cell(kTs), 1e3);
    if (!ts)
      fail(col(kTs), "expected epoch milliseconds or an RFC 3339 time " +
                         std::string(kInstantRange) + ", got '" + std::string(cell(kTs)) + "'");
    rec.ts = *ts;
    rec.instance = text(kInstance);
    if (rec.instance.empty()) fail(col(kInstance), "must not be empty");
    rec.latency = millis(kLatency);
    if (!cell(kTtfb).empty()) rec.ttfb = millis(kTtfb);
    const auto st = parseHttpStatus(cell(kStatus));
    if (!st)
      fail(col(kStatus), "expected an HTTP status, got '" + std::string(cell(kStatus)) + "'");
    rec.status = *st;
    if (auto o = cell(kOutcome); !o.empty()) {
      if (!parseOutcome(o, rec.outcome))
        fail(col(kOutcome), "expected ok, error, timeout or reset, got '" + std::string(o) + "'");
      rec.hasOutcome = true;
    } else {
      rec.outcome = rec.status == 0 ? Outcome::Error : Outcome::Ok;
    }
    rec.model = text(kModel);
    rec.tenant = text(kTenant);
    rec.route = text(kRoute);
    rec.session = text(kSession);
    if (auto c = cell(kCritical); !c.empty()) {
      if (c == "true" || c == "1")
        rec.critical = true;
      else if (c == "false" || c == "0")
        rec.critical = false;
      else
        fail(col(kCritical), "expected true or false, got '" + std::string(c) + "'");
    }
    for (int c : {kTokensIn, kTokensOut}) {
      if (auto t = cell(c); !t.empty()) {
        auto n = parseNumber(t);
        if (!n || *n < 0 || std::floor(*n) != *n || *n > 9.0e15)
          fail(col(c), "expected a non-negative integer, got '" + std::string(t) + "'");
        (c == kTokensIn ? rec.tokensIn : rec.tokensOut) = static_cast<std::int64_t>(*n);
      }
    }
    rec.line = startLine_;
    return true;
  }

  std::unique_ptr<LineReader> r_;
  FieldMap map_;
  std::array<int, kCols> index_;
  bool headerDone_ = false;
  std::size_t columns_ = 0;  // the header's cells
  long startLine_ = 0;
  std::string joined_;
  std::vector<std::string> cells_;
};

}  // namespace

std::unique_ptr<RecordSource> makeCsv(std::unique_ptr<LineReader> r, const ImportOptions& opt) {
  return std::make_unique<CsvSource>(std::move(r), opt);
}

}  // namespace detail
}  // namespace spillway::formats
