// A JSONL trace read and parsed on other threads (parallel_jsonl.hpp) gives what one thread
// gives: the same records with the same line numbers, the same first bad line (file:line:
// field) after the same records, the same skipped lines, and a replay of it writes the same
// transitions byte for byte. Chunks are made small (4 KiB buffers) so records straddle chunk
// boundaries everywhere; the traces mix canonical lines (the direct parse) with lines only
// simdjson reads (spaces, escapes, unknown fields, RFC 3339 times, exponents, non-ASCII),
// blank lines and CRLF. The direct parse is checked against simdjson line by line.
#include <QTest>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "spillway/event_format.hpp"
#include "spillway/formats/jsonl_chunks.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/parallel_jsonl.hpp"
#include "spillway/replay.hpp"
#include "tiny_policy.hpp"

using namespace spillway;
using spillway::test::tinyPolicy;

namespace {

constexpr std::size_t kPadding = 64;  // simdjson::SIMDJSON_PADDING
constexpr std::size_t kSmall = 4096;  // the smallest first buffer a reader takes

// A record with its own copies of the strings (a source's views last until its next read).
struct Copy {
  CallRecord rec;
  std::string instance, model, tenant, route, session;
};

Copy copyOf(const CallRecord& r) {
  Copy c{r,
         std::string(r.instance),
         std::string(r.model),
         std::string(r.tenant),
         std::string(r.route),
         std::string(r.session)};
  c.rec.instance = c.rec.model = c.rec.tenant = c.rec.route = c.rec.session = {};
  return c;
}

QString differs(const Copy& a, const Copy& b) {
  const CallRecord &x = a.rec, &y = b.rec;
  if (x.ts != y.ts || x.latency != y.latency || x.status != y.status || x.outcome != y.outcome ||
      x.hasOutcome != y.hasOutcome || x.critical != y.critical || x.tokensIn != y.tokensIn ||
      x.tokensOut != y.tokensOut || x.line != y.line)
    return QStringLiteral("values of line %1 / %2: ts %3 / %4, latency %5 / %6, status %7 / %8")
        .arg(x.line)
        .arg(y.line)
        .arg(x.ts)
        .arg(y.ts)
        .arg(x.latency)
        .arg(y.latency)
        .arg(x.status)
        .arg(y.status);
  if (a.instance != b.instance || a.model != b.model || a.tenant != b.tenant ||
      a.route != b.route || a.session != b.session)
    return QStringLiteral("strings of line %1: '%2' / '%3'")
        .arg(x.line)
        .arg(QString::fromStdString(a.instance), QString::fromStdString(b.instance));
  return {};
}

// Everything a source gave: its records, then the error that stopped it (if any) and what it
// skipped.
struct Read {
  std::vector<Copy> recs;
  std::string error;
  std::uint64_t skipped = 0;
  std::vector<std::string> messages;
};

template <class Source>
Read readAll(Source& s) {
  Read r;
  CallRecord rec;
  try {
    while (s.next(rec)) r.recs.push_back(copyOf(rec));
  } catch (const InputError& e) {
    r.error = e.what();
  }
  r.skipped = s.skipped();
  r.messages = s.skippedMessages();
  return r;
}

QString compare(const Read& a, const Read& b) {
  for (std::size_t i = 0; i < std::min(a.recs.size(), b.recs.size()); ++i)
    if (const QString d = differs(a.recs[i], b.recs[i]); !d.isEmpty())
      return QStringLiteral("record %1: %2").arg(i).arg(d);
  if (a.recs.size() != b.recs.size())
    return QStringLiteral("%1 records / %2").arg(a.recs.size()).arg(b.recs.size());
  if (a.error != b.error)
    return QStringLiteral("error '%1' / '%2'")
        .arg(QString::fromStdString(a.error), QString::fromStdString(b.error));
  if (a.skipped != b.skipped || a.messages != b.messages)
    return QStringLiteral("skipped %1 / %2").arg(a.skipped).arg(b.skipped);
  return {};
}

JsonlReader::ReadFn memoryReader(const std::string& text) {
  auto pos = std::make_shared<std::size_t>(0);
  return [&text, pos](char* dst, std::size_t n) {
    const std::size_t k = std::min(n, text.size() - *pos);
    std::memcpy(dst, text.data() + *pos, k);
    *pos += k;
    return k;
  };
}

// The one-thread reader and the parallel source over the same text and first buffer size.
Read serialRead(const std::string& text, bool skip, std::size_t capacity = kSmall) {
  JsonlReader r("t.jsonl", memoryReader(text), skip, capacity);
  return readAll(r);
}

Read parallelRead(const std::string& text, bool skip, unsigned threads,
                  std::size_t capacity = kSmall, std::size_t piece = 1000) {
  auto s = jsonlParallelFromReader("t.jsonl", memoryReader(text), skip,
                                   ParallelJsonlOptions{threads, capacity, piece, 2});
  return readAll(*s);
}

// Milliseconds with `decimals` decimals.
std::string millisText(std::uint64_t thousandths, int decimals) {
  std::string s = std::to_string(thousandths / 1000);
  if (decimals > 0) {
    char frac[4];
    std::snprintf(frac, sizeof frac, "%03u", static_cast<unsigned>(thousandths % 1000));
    s += "." + std::string(frac, static_cast<std::size_t>(std::min(decimals, 3)));
    for (int d = 3; d < decimals; ++d) s += char('0' + d % 10);
  }
  return s;
}

// Canonical lines as tracegen writes them, and now and then one only simdjson reads.
class TraceWriter {
 public:
  explicit TraceWriter(std::uint64_t seed) : rng_(seed) {}

  std::string line(std::uint64_t i) {
    const std::string inst = "inst-" + std::to_string(pick(7));
    const bool failing = inst == "inst-3" && i % 4 != 0;  // trips its breaker
    std::string ts = millisText(1764480000000000ull + i * 997, 3);
    const std::string lat = millisText(failing ? 50000 : 200000 + pick(900000), int(pick(4)));
    const int status = failing ? 503 : (pick(50) == 0 ? 0 : 200);
    std::string l = "{\"ts\":" + ts + ",\"instance\":\"" + inst + "\"";
    if (pick(3)) l += ",\"model\":\"m-" + std::to_string(pick(2)) + "\"";
    l += ",\"latency_ms\":" + lat + ",\"status\":" + std::to_string(status);
    if (pick(2)) l += std::string(",\"outcome\":\"") + (status == 200 ? "ok" : "error") + "\"";
    if (pick(2)) l += ",\"tenant\":\"t" + std::to_string(pick(3)) + "\"";
    if (pick(4) == 0) l += ",\"route\":\"/v1/chat\",\"session\":\"s-" + std::to_string(i) + "\"";
    if (pick(3) == 0) l += std::string(",\"critical\":") + (pick(2) ? "true" : "false");
    if (pick(3) == 0)
      l += ",\"tokens_in\":" + std::to_string(pick(4000)) +
           ",\"tokens_out\":" + std::to_string(pick(900));
    if (pick(3) == 0) l += ",\"ttfb_ms\":" + millisText(pick(200000), int(pick(4)));
    return unusual(l + "}", inst);
  }

  // A canonical line made into one the direct parse leaves to simdjson, now and then.
  std::string unusual(std::string l, const std::string& inst) {
    switch (pick(40)) {
      case 0:
        return replace(l, "\"instance\":", "\"instance\" : ");
      case 1:
        return replace(l, "\"" + inst + "\"", "\"inst-\\u003" + inst.substr(5) + "\"");
      case 2:
        return l.substr(0, l.size() - 1) + ",\"extra\":[1,{\"a\":null},\"x\"]}";
      case 3:
        return replace(l, "\"ts\":", "\"ts\":\"2025-11-30T05:20:00.5Z\",\"x\":");
      case 4:
        return replace(l, "\"latency_ms\":", "\"latency_ms\":1.5e2,\"y\":");
      case 5:
        return replace(l, "\"" + inst + "\"", "\"inst-\xc3\xa9\"");
      case 6:
        return "  " + l + " \t";
      default:
        return l;
    }
  }

  // A bad line of one of several kinds.
  std::string bad() {
    static const char* kBad[] = {
        R"({"ts":1,)",
        "[]",
        R"({"ts":1,"instance":"a","latency_ms":1,"status":1000})",
        R"({"instance":"a","latency_ms":1,"status":200})",
        R"({"ts":1,"instance":"a","latency_ms":1,"status":200}x)",
        R"({"ts":1,"instance":"","latency_ms":1,"status":200})",
        R"({"ts":1,"instance":"a","latency_ms":-1,"status":200})",
        "{\"ts\":1,\"instance\":\"\xff\",\"latency_ms\":1,\"status\":200}",
    };
    return kBad[pick(std::size(kBad))];
  }

  // `n` lines; blank and whitespace-only lines, CRLF endings, one long line now and then,
  // bad lines at about `badEvery` (0: none); no '\n' after the last line.
  std::string trace(std::uint64_t n, std::uint64_t badEvery) {
    std::string t;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (badEvery && pick(badEvery) == 0)
        t += bad();
      else if (pick(60) == 0)
        t += pick(2) ? "" : " \t ";
      else if (pick(400) == 0)
        t += padded(line(i), 5000 + pick(20000));
      else
        t += line(i);
      if (i + 1 < n) t += pick(10) == 0 ? "\r\n" : "\n";
    }
    return t;
  }

  std::uint64_t pick(std::uint64_t n) { return rng_() % n; }

 private:
  // The line with an unknown field of `n` bytes first: longer than a small first buffer.
  static std::string padded(std::string l, std::size_t n) {
    return l.insert(l.find('{') + 1, "\"pad\":\"" + std::string(n, 'p') + "\",");
  }

  static std::string replace(std::string s, const std::string& from, const std::string& to) {
    const std::size_t at = s.find(from);
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  }
  std::mt19937_64 rng_;
};

// A replay of `source` as `spillway-cli replay --out` runs it: the transitions written, then
// the error that stopped it, the records fed and the calls blocked.
std::string replayOf(formats::RecordSource& source) {
  std::FILE* f = std::tmpfile();
  std::string out;
  {
    JsonlEventWriter writer(f);
    Replayer replayer(tinyPolicy(), ReplayOptions{}, &writer);
    writer.setEngine(&replayer.engine());
    CallRecord rec;
    try {
      while (source.next(rec)) replayer.feed(rec);
      replayer.finish();
    } catch (const InputError& e) {
      out = std::string("error: ") + e.what() + "\n";
    }
    out += "fed " + std::to_string(replayer.fed()) + ", late " + std::to_string(replayer.late()) +
           ", blocked " + std::to_string(replayer.engine().totals().rejected) + "\n";
  }
  std::fflush(f);
  std::rewind(f);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

}  // namespace

class TstParallelReplay : public QObject {
  Q_OBJECT

 private slots:
  void directParseAgreesWithSimdjson();
  void numbersAroundTheBounds();
  void sameAsOneThread_data();
  void sameAsOneThread();
  void lineOverTheLimit();
  void readErrorAfterRecords();
  void replayWritesTheSameBytes_data();
  void replayWritesTheSameBytes();
  void badLineDeepInTheFile();
  void fromMemory();
};

namespace {

// Parses `line` both ways (with padding behind it, as a reader's buffer has); returns what
// differs, or empty. `direct` counts lines the direct parse took.
QString parseBothWays(formats::JsonlLineParser& parser, const std::string& line, int& direct) {
  std::vector<char> buf(line.begin(), line.end());
  buf.resize(line.size() + kPadding, '\0');
  const std::string_view view(buf.data(), line.size());
  CallRecord a, b;
  std::string fa, ea, fb, eb;
  const bool okA = parser.parse(view, buf.size(), a, fa, ea);
  const Copy ca = copyOf(a);
  const bool okB = parser.parseGeneral(view, buf.size(), b, fb, eb);
  const Copy cb = copyOf(b);
  CallRecord c;
  if (formats::parseCanonicalLine(view, c)) {
    ++direct;
    if (!okB) return "direct parse accepted a line simdjson rejects";
    if (const QString d = differs(copyOf(c), cb); !d.isEmpty()) return "direct parse: " + d;
  }
  if (okA != okB || fa != fb || ea != eb)
    return QStringLiteral("ok %1 / %2, '%3: %4' / '%5: %6'")
        .arg(okA)
        .arg(okB)
        .arg(QString::fromStdString(fa), QString::fromStdString(ea), QString::fromStdString(fb),
             QString::fromStdString(eb));
  return okA ? differs(ca, cb) : QString();
}

}  // namespace

void TstParallelReplay::directParseAgreesWithSimdjson() {
  // Generated lines, and each one damaged: a byte dropped, replaced or added.
  TraceWriter w(11);
  formats::JsonlLineParser parser;
  const std::string bytes = "\"\\{},:09.-+eEx \x01\xc3tfn";
  int direct = 0, lines = 0;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    const std::string l = i % 5 ? w.line(i) : w.bad();
    std::vector<std::string> variants{l};
    for (int k = 0; k < 6; ++k) {
      std::string m = l;
      const std::size_t at = w.pick(m.size());
      const char b = bytes[w.pick(bytes.size())];
      if (k % 3 == 0)
        m.erase(at, 1);
      else if (k % 3 == 1)
        m[at] = b;
      else
        m.insert(at, 1, b);
      variants.push_back(m);
    }
    for (const std::string& v : variants) {
      ++lines;
      const QString d = parseBothWays(parser, v, direct);
      QVERIFY2(d.isEmpty(), qPrintable(QString::fromStdString(v) + ": " + d));
    }
  }
  // Both paths were taken often.
  QVERIFY2(direct > lines / 10, qPrintable(QString::number(direct)));
  QVERIFY2(direct < lines / 2, qPrintable(QString::number(direct)));
}

void TstParallelReplay::numbersAroundTheBounds() {
  // The direct parse turns milliseconds into µs without simdjson's double when the value has
  // at most 3 decimals and is below 2^51 µs; around that bound, at 2^53 digits and beyond,
  // with 0 to 6 decimals, it must give simdjson's values (or leave the line to it).
  formats::JsonlLineParser parser;
  std::mt19937_64 rng(3);
  int direct = 0;
  const std::uint64_t bounds[] = {0,          1000,       1ull << 40,          1ull << 50,
                                  1ull << 51, 1ull << 53, 9000000000000000ull, 1764480000000000ull};
  for (const std::uint64_t bound : bounds)
    for (int k = 0; k < 3000; ++k) {
      const std::uint64_t near = bound + rng() % 4096 - std::min<std::uint64_t>(bound, 2048);
      const std::uint64_t far = rng() % (bound + 1);
      for (const std::uint64_t v : {near, far}) {
        const std::string ms = millisText(v, int(rng() % 7));
        const std::string line = "{\"ts\":" + ms + ",\"instance\":\"a\",\"latency_ms\":" + ms +
                                 ",\"status\":200,\"tokens_in\":" + std::to_string(v) + "}";
        const QString d = parseBothWays(parser, line, direct);
        QVERIFY2(d.isEmpty(), qPrintable(QString::fromStdString(line) + ": " + d));
      }
    }
  QVERIFY(direct > 10000);
}

void TstParallelReplay::sameAsOneThread_data() {
  // capacity: the first buffer; piece: what a chunk is parsed in (one piece when larger).
  QTest::addColumn<std::uint64_t>("seed");
  QTest::addColumn<std::size_t>("capacity");
  QTest::addColumn<std::size_t>("piece");
  QTest::addColumn<unsigned>("threads");
  QTest::addColumn<std::uint64_t>("badEvery");
  QTest::addColumn<bool>("skip");
  const std::size_t whole = std::size_t(1) << 20, k64 = 65536;
  QTest::newRow("clean, 4 KiB chunks, 2 threads")
      << std::uint64_t(1) << kSmall << whole << 2u << std::uint64_t(0) << false;
  QTest::newRow("clean, odd 4099 bytes, 3 threads")
      << std::uint64_t(2) << std::size_t(4099) << whole << 3u << std::uint64_t(0) << false;
  QTest::newRow("clean, 64 KiB chunks in 1 KB pieces")
      << std::uint64_t(3) << k64 << std::size_t(1000) << 2u << std::uint64_t(0) << false;
  QTest::newRow("clean, 64 KiB chunks in 16 pieces at most, 3 threads")
      << std::uint64_t(4) << k64 << std::size_t(10) << 3u << std::uint64_t(0) << false;
  QTest::newRow("bad lines, stop at the first")
      << std::uint64_t(5) << kSmall << whole << 2u << std::uint64_t(700) << false;
  QTest::newRow("bad lines in pieces, stop at the first")
      << std::uint64_t(6) << k64 << std::size_t(700) << 2u << std::uint64_t(900) << false;
  QTest::newRow("bad lines skipped")
      << std::uint64_t(7) << kSmall << whole << 2u << std::uint64_t(50) << true;
  QTest::newRow("bad lines skipped, pieces, 3 threads")
      << std::uint64_t(8) << std::size_t(5000) << std::size_t(300) << 3u << std::uint64_t(9)
      << true;
}

void TstParallelReplay::sameAsOneThread() {
  QFETCH(std::uint64_t, seed);
  QFETCH(std::size_t, capacity);
  QFETCH(std::size_t, piece);
  QFETCH(unsigned, threads);
  QFETCH(std::uint64_t, badEvery);
  QFETCH(bool, skip);
  const std::string text = TraceWriter(seed).trace(20000, badEvery);
  const Read one = serialRead(text, skip, capacity);
  const Read many = parallelRead(text, skip, threads, capacity, piece);
  QVERIFY2(one.recs.size() > (badEvery && !skip ? 0u : 15000u),
           qPrintable(QString::number(one.recs.size())));
  QCOMPARE(one.error.empty(), skip || badEvery == 0);
  if (skip) QVERIFY(one.skipped > 0);
  const QString d = compare(one, many);
  QVERIFY2(d.isEmpty(), qPrintable(d));
}

void TstParallelReplay::lineOverTheLimit() {
  // 300 records, then a line longer than the limit for one line: the error names its line
  // after every record before it, as one thread does.
  TraceWriter w(7);
  std::string text = w.trace(300, 0) + "\n";
  text += "{\"pad\":\"" + std::string(2 * input_limits::kLine, 'x') + "\"}\n" + w.line(1);
  const Read one = serialRead(text, true, std::size_t(1) << 22);
  QVERIFY2(one.error.find("t.jsonl:301: line longer than") == 0, qPrintable(one.error.c_str()));
  const QString d = compare(one, parallelRead(text, true, 2, std::size_t(1) << 22, 100000));
  QVERIFY2(d.isEmpty(), qPrintable(d));
}

void TstParallelReplay::readErrorAfterRecords() {
  // The trace cannot be read past 100 KiB: the records before come through, then the error.
  const std::string text = TraceWriter(8).trace(2000, 0);
  auto failing = [&text] {
    auto pos = std::make_shared<std::size_t>(0);
    return [&text, pos](char* dst, std::size_t n) -> std::size_t {
      if (*pos >= 100 << 10) throw InputError("t.jsonl", 0, "", "cannot read: I/O error");
      const std::size_t k = std::min(n, text.size() - *pos);
      std::memcpy(dst, text.data() + *pos, k);
      *pos += k;
      return k;
    };
  };
  JsonlReader r("t.jsonl", failing(), false, kSmall);
  const Read one = readAll(r);
  QCOMPARE(one.error, std::string("t.jsonl: cannot read: I/O error"));
  QVERIFY(one.recs.size() > 300);
  auto s = jsonlParallelFromReader("t.jsonl", failing(), false, {2, kSmall, 1000, 2});
  const QString d = compare(one, readAll(*s));
  QVERIFY2(d.isEmpty(), qPrintable(d));
}

void TstParallelReplay::replayWritesTheSameBytes_data() {
  QTest::addColumn<std::uint64_t>("badEvery");
  QTest::addColumn<bool>("skip");
  QTest::newRow("clean") << std::uint64_t(0) << false;
  QTest::newRow("bad lines skipped") << std::uint64_t(40) << true;
}

void TstParallelReplay::replayWritesTheSameBytes() {
  QFETCH(std::uint64_t, badEvery);
  QFETCH(bool, skip);
  const std::string text = TraceWriter(21).trace(30000, badEvery);
  auto serial = jsonlParallelFromReader("t.jsonl", memoryReader(text), skip, {1, kSmall});
  const std::string one = replayOf(*serial);
  QVERIFY2(one.find("\"to\":\"OPEN\"") != std::string::npos, one.c_str());  // it did trip
  QVERIFY2(one.find("error:") == std::string::npos, one.c_str());
  for (const unsigned threads : {2u, 3u}) {
    auto parallel =
        jsonlParallelFromReader("t.jsonl", memoryReader(text), skip, {threads, kSmall, 3});
    QCOMPARE(replayOf(*parallel), one);
  }
}

void TstParallelReplay::badLineDeepInTheFile() {
  // 50,000 lines, line 43,210 bad: the same message, after the same records and transitions.
  TraceWriter w(5);
  std::string text;
  for (std::uint64_t i = 1; i <= 50000; ++i)
    text +=
        (i == 43210 ? R"({"ts":1,"instance":"a","latency_ms":1,"status":1000})" : w.line(i)) + "\n";
  auto serial = jsonlParallelFromReader("deep.jsonl", memoryReader(text), false, {1, kSmall});
  const std::string one = replayOf(*serial);
  QVERIFY2(one.find("error: deep.jsonl:43210: status: must be in [0, 999]\nfed 43209,") !=
               std::string::npos,
           one.c_str());
  auto parallel = jsonlParallelFromReader("deep.jsonl", memoryReader(text), false,
                                          {2, std::size_t(65536), 3000, 2});
  QCOMPARE(replayOf(*parallel), one);
}

void TstParallelReplay::fromMemory() {
  // A trace in memory, read with the default 4 MiB buffers: several chunks, the same records.
  const std::string text = TraceWriter(9).trace(60000, 0);
  QVERIFY(text.size() > (std::size_t(8) << 20));
  auto one = jsonlParallelFromMemory("m.jsonl", text, false, {1});
  auto two = jsonlParallelFromMemory("m.jsonl", text, false, {2});
  const QString d = compare(readAll(*one), readAll(*two));
  QVERIFY2(d.isEmpty(), qPrintable(d));
}

QTEST_GUILESS_MAIN(TstParallelReplay)
#include "tst_parallel_replay.moc"
