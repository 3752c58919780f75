// Canonical telemetry (JSON Lines): timestamps, optional and unknown fields, line handling, every
// kind of bad line (file:line: field), --skip-bad-lines accounting, and lines that straddle the
// reader's 4 MiB chunks.
#include <QDateTime>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"

using namespace spillway;

namespace {

constexpr std::size_t kChunk = std::size_t(4) << 20;  // the reader's read size (telemetry.cpp)

// Expected µs since the epoch, computed by Qt's calendar code (independent of the parser).
qlonglong utcMicros(int y, int mo, int d, int h, int mi, int s, int us = 0, int offsetS = 0) {
  const QDateTime t(QDate(y, mo, d), QTime(h, mi, s), QTimeZone(offsetS));
  return t.toMSecsSinceEpoch() * 1000 + us;
}

std::string record(std::string_view ts, std::string_view instance = "i",
                   std::string_view extra = {}) {
  std::string s = "{\"ts\":" + std::string(ts) + ",\"instance\":\"" + std::string(instance) +
                  "\",\"latency_ms\":12.5,\"status\":200";
  if (!extra.empty()) s += "," + std::string(extra);
  return s + "}";
}

struct Parsed {
  std::vector<CallRecord> recs;  // views cleared: see `instances`
  std::vector<std::string> instances;
};

// Reads everything; copies the string views (valid only until the next read).
Parsed readAll(JsonlReader& r) {
  Parsed p;
  CallRecord rec;
  while (r.next(rec)) {
    p.instances.emplace_back(rec.instance);
    rec.instance = rec.model = rec.tenant = rec.route = rec.session = {};
    p.recs.push_back(rec);
  }
  return p;
}

}  // namespace

class TstTelemetry : public QObject {
  Q_OBJECT

 private slots:
  void timestamps_data();
  void timestamps();
  void optionalFields();
  void defaultsWithoutOptionalFields();
  void unknownFieldsIgnored();
  void lineHandling();
  void badLines_data();
  void badLines();
  void skipBadLinesKeepsEveryGoodRecord();
  void skippedMessagesAreCapped();
  void chunkBoundary_data();
  void chunkBoundary();
  void lineLongerThanChunk();
  void manyChunksSmallReads();
  void openFile();
};

void TstTelemetry::timestamps_data() {
  QTest::addColumn<QByteArray>("ts");  // the JSON value of "ts"
  QTest::addColumn<qlonglong>("micros");
  // 2025-11-30T06:25:56.123Z.
  const qlonglong base = utcMicros(2025, 11, 30, 6, 25, 56) + 123'000;
  QTest::newRow("epoch ms") << QByteArray("1764483956123") << qlonglong(1764483956123000);
  QTest::newRow("epoch ms fractional")
      << QByteArray("1764483956123.456") << qlonglong(1764483956123456);
  QTest::newRow("epoch ms half") << QByteArray("1764483956123.5") << qlonglong(1764483956123500);
  QTest::newRow("epoch ms exponent") << QByteArray("1.5e12") << qlonglong(1500000000000000);
  QTest::newRow("rfc3339 Z") << QByteArray("\"2025-11-30T06:25:56.123Z\"") << base;
  QTest::newRow("rfc3339 +08:00") << QByteArray("\"2025-11-30T14:25:56.123+08:00\"") << base;
  QTest::newRow("rfc3339 -05:30 µs")
      << QByteArray("\"2025-11-30T00:55:56.123456-05:30\"") << base + 456;
  QTest::newRow("rfc3339 no fraction") << QByteArray("\"2025-11-30T06:25:56Z\"") << base - 123'000;
  QTest::newRow("rfc3339 ns truncated")
      << QByteArray("\"2025-11-30T06:25:56.123456789Z\"") << base + 456;
  QTest::newRow("rfc3339 lower case") << QByteArray("\"2025-11-30t06:25:56.123z\"") << base;
  QTest::newRow("rfc3339 +08:00 across midnight")
      << QByteArray("\"2025-12-01T02:00:00+08:00\"") << utcMicros(2025, 11, 30, 18, 0, 0);
  QTest::newRow("rfc3339 leap day") << QByteArray("\"2024-02-29T23:59:59.999999Z\"")
                                    << utcMicros(2024, 2, 29, 23, 59, 59, 999'999);
  QTest::newRow("rfc3339 leap day 2000")
      << QByteArray("\"2000-02-29T12:00:00Z\"") << utcMicros(2000, 2, 29, 12, 0, 0);
  QTest::newRow("rfc3339 +23:59") << QByteArray("\"2025-12-01T06:24:56.123+23:59\"") << base;
  // The range's ends (earlier or later: badLines).
  QTest::newRow("epoch 0") << QByteArray("0") << qlonglong(0);
  QTest::newRow("rfc3339 epoch") << QByteArray("\"1970-01-01T00:00:00Z\"") << qlonglong(0);
  // (×1000 is exact in a double for a multiple of 4 ms this large)
  QTest::newRow("late ms of 9999")
      << QByteArray("253402300799996") << qlonglong(253402300799996000);
  QTest::newRow("rfc3339 last µs of 9999")
      << QByteArray("\"9999-12-31T23:59:59.999999Z\"") << qlonglong(253402300799999999);
}

void TstTelemetry::timestamps() {
  QFETCH(QByteArray, ts);
  QFETCH(qlonglong, micros);
  // The Qt-derived expectations agree with the epoch-ms rows.
  QCOMPARE(utcMicros(2025, 11, 30, 6, 25, 56) + 123'000, qlonglong(1764483956123000));
  const std::string text = record(ts.toStdString()) + "\n";
  auto r = JsonlReader::fromMemory("ts.jsonl", text, false);
  CallRecord rec;
  QVERIFY(r->next(rec));
  QCOMPARE(rec.ts, Micros(micros));
  QCOMPARE(rec.latency, Micros(12'500));
  QCOMPARE(rec.end(), Micros(micros) + 12'500);
  QVERIFY(!r->next(rec));
}

void TstTelemetry::optionalFields() {
  const std::string text =
      R"({"ts":1000,"instance":"chat-72b-3","model":"chat-72b","latency_ms":0.0015,"status":0,)"
      R"("outcome":"reset","tenant":"cs-bot","route":"/v1/chat","session":"s-9",)"
      R"("critical":true,"tokens_in":1200,"tokens_out":0,"ttfb_ms":0.75})"
      "\n"
      R"({"critical":false,"status":504,"latency_ms":30000,"instance":"x","ts":2000,"outcome":"timeout"})"
      "\n";
  auto r = JsonlReader::fromMemory("opt.jsonl", text, false);
  CallRecord rec;
  QVERIFY(r->next(rec));
  QCOMPARE(rec.ts, Micros(1'000'000));
  QCOMPARE(rec.instance, std::string_view("chat-72b-3"));
  QCOMPARE(rec.model, std::string_view("chat-72b"));
  QCOMPARE(rec.latency, Micros(2));  // 1.5 µs rounds to 2
  QCOMPARE(rec.status, 0);
  QVERIFY(rec.hasOutcome);
  QCOMPARE(rec.outcome, Outcome::Reset);
  QCOMPARE(rec.tenant, std::string_view("cs-bot"));
  QCOMPARE(rec.route, std::string_view("/v1/chat"));
  QCOMPARE(rec.session, std::string_view("s-9"));
  QCOMPARE(rec.critical, std::optional<bool>(true));
  QCOMPARE(rec.tokensIn, std::int64_t(1200));
  QCOMPARE(rec.tokensOut, std::int64_t(0));
  QCOMPARE(rec.ttfb, Micros(750));
  QCOMPARE(rec.line, 1L);

  QVERIFY(r->next(rec));  // field order does not matter
  QCOMPARE(rec.ts, Micros(2'000'000));
  QCOMPARE(rec.instance, std::string_view("x"));
  QCOMPARE(rec.latency, Micros(30'000'000));
  QCOMPARE(rec.status, 504);
  QCOMPARE(rec.outcome, Outcome::Timeout);
  QCOMPARE(rec.critical, std::optional<bool>(false));
  QVERIFY(rec.model.empty());
  QCOMPARE(rec.tokensIn, std::int64_t(-1));
  QCOMPARE(rec.ttfb, Micros(-1));
  QCOMPARE(rec.line, 2L);
  QVERIFY(!r->next(rec));
}

void TstTelemetry::defaultsWithoutOptionalFields() {
  // Without `outcome`: error when there was no response (status 0), ok otherwise.
  const std::string text = R"({"ts":1,"instance":"a","latency_ms":5,"status":0})"
                           "\n"
                           R"({"ts":2,"instance":"a","latency_ms":5,"status":503})"
                           "\n";
  auto r = JsonlReader::fromMemory("d.jsonl", text, false);
  CallRecord rec;
  QVERIFY(r->next(rec));
  QVERIFY(!rec.hasOutcome);
  QCOMPARE(rec.outcome, Outcome::Error);
  QVERIFY(!rec.critical.has_value());
  QCOMPARE(rec.tokensIn, std::int64_t(-1));
  QCOMPARE(rec.tokensOut, std::int64_t(-1));
  QVERIFY(rec.tenant.empty() && rec.route.empty() && rec.session.empty() && rec.model.empty());
  QVERIFY(r->next(rec));
  QVERIFY(!rec.hasOutcome);
  QCOMPARE(rec.outcome, Outcome::Ok);  // the status, not the outcome, says it failed
  QCOMPARE(rec.status, 503);
}

void TstTelemetry::unknownFieldsIgnored() {
  const std::string text =
      R"({"trace_id":"abc","ts":1000,"nested":{"a":[1,2,{"b":null}],"c":"\"}"},)"
      R"("instance":"a\"b\u00e9","latency_ms":1,"status":200,"weird key \\":-1.5e3,"flag":false})"
      "\n";
  auto r = JsonlReader::fromMemory("u.jsonl", text, false);
  CallRecord rec;
  QVERIFY(r->next(rec));
  QCOMPARE(rec.ts, Micros(1'000'000));
  QCOMPARE(rec.instance, std::string_view("a\"b\xc3\xa9"));  // unescaped
  QCOMPARE(rec.status, 200);
  QVERIFY(!r->next(rec));
}

void TstTelemetry::lineHandling() {
  // Line numbers count every physical line, blank ones included.
  const std::string text = "\n"                            // 1 blank
                           + record("1", "a") + "\r\n"     // 2 CRLF
                           + "   \t \n"                    // 3 whitespace only
                           + "\r\n"                        // 4 blank CRLF
                           + record("2", "b") + "\n"       // 5
                           + record("3", "c") + " \t\r\n"  // 6 trailing whitespace
                           + "\n"                          // 7
                           + record("4", "d");             // 8 no final newline
  auto r = JsonlReader::fromMemory("lines.jsonl", text, false);
  const Parsed p = readAll(*r);
  QCOMPARE(p.recs.size(), std::size_t(4));
  const long lines[] = {2, 5, 6, 8};
  const char* names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    QCOMPARE(p.recs[i].line, lines[i]);
    QCOMPARE(p.instances[i], std::string(names[i]));
    QCOMPARE(p.recs[i].ts, Micros(i + 1) * 1000);
  }
  QCOMPARE(r->skipped(), std::uint64_t(0));
  QCOMPARE(r->line(), 8L);

  // Empty input and only blank lines: no records, no error.
  auto empty = JsonlReader::fromMemory("e.jsonl", "", false);
  CallRecord rec;
  QVERIFY(!empty->next(rec));
  auto blank = JsonlReader::fromMemory("b.jsonl", "\n\r\n  \n", false);
  QVERIFY(!blank->next(rec));
}

void TstTelemetry::badLines_data() {
  QTest::addColumn<QByteArray>("line");
  QTest::addColumn<QString>("field");
  QTest::addColumn<QString>("detail");  // expected start of the message; empty: any

  const auto rec = [](std::string_view ts, std::string_view extra = {}) {
    return QByteArray::fromStdString(record(ts, "i", extra));
  };
  const QString invalid = "invalid JSON";
  const QString notObject = "expected a JSON object per line";
  const QString missing = "missing required field";
  const QString tsNumber = "expected epoch milliseconds or an RFC 3339 string";
  const QString tsText = "not an RFC 3339 timestamp";

  QTest::newRow("invalid JSON") << QByteArray(R"({"ts":1,"instance":"a",)") << "" << invalid;
  QTest::newRow("truncated") << QByteArray(R"({"ts":1,"instance":"a","latency_ms":1)") << ""
                             << invalid;
  QTest::newRow("missing comma") << QByteArray(R"({"ts":1 "instance":"a"})") << "" << invalid;
  QTest::newRow("bad atom in unknown field") << rec("1", R"("extra":tru)") << "" << invalid;
  QTest::newRow("bad atom nested in unknown field")
      << rec("1", R"("extra":{"a":[1,nul]})") << "" << invalid;
  QTest::newRow("bad number in unknown field") << rec("1", R"("extra":01)") << "" << invalid;
  QTest::newRow("bad escape in unknown field") << rec("1", R"("extra":"\q")") << "" << invalid;
  QTest::newRow("array") << QByteArray("[1,2]") << "" << notObject;
  QTest::newRow("number") << QByteArray("42") << "" << notObject;
  QTest::newRow("string") << QByteArray(R"("text")") << "" << notObject;
  QTest::newRow("null") << QByteArray("null") << "" << notObject;
  QTest::newRow("missing ts") << QByteArray(R"({"instance":"a","latency_ms":1,"status":200})")
                              << "ts" << missing;
  QTest::newRow("missing instance")
      << QByteArray(R"({"ts":1,"latency_ms":1,"status":200})") << "instance" << missing;
  QTest::newRow("missing latency")
      << QByteArray(R"({"ts":1,"instance":"a","status":200})") << "latency_ms" << missing;
  QTest::newRow("missing status") << QByteArray(R"({"ts":1,"instance":"a","latency_ms":1})")
                                  << "status" << missing;
  QTest::newRow("empty object") << QByteArray("{}") << "ts" << missing;
  QTest::newRow("ts bool") << rec("true") << "ts" << tsNumber;
  QTest::newRow("ts null") << rec("null") << "ts" << tsNumber;
  QTest::newRow("ts words") << rec(R"("yesterday")") << "ts"
                            << "not an RFC 3339 timestamp";
  QTest::newRow("ts ms as string") << rec(R"("1764483956123")") << "ts" << tsText;
  QTest::newRow("ts without zone") << rec(R"("2025-11-30T06:25:56.123")") << "ts" << tsText;
  QTest::newRow("ts offset without colon")
      << rec(R"("2025-11-30T06:25:56+0800")") << "ts" << tsText;
  QTest::newRow("ts month 13") << rec(R"("2026-13-01T00:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts February 30") << rec(R"("2025-02-30T00:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts February 29, common year")
      << rec(R"("2023-02-29T00:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts February 29, 1900") << rec(R"("1900-02-29T00:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts April 31") << rec(R"("2025-04-31T00:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts hour 24") << rec(R"("2025-11-30T24:00:00Z")") << "ts" << tsText;
  QTest::newRow("ts offset hour 24") << rec(R"("2025-11-30T06:25:56+24:00")") << "ts" << tsText;
  QTest::newRow("ts offset minute 60") << rec(R"("2025-11-30T06:25:56+08:60")") << "ts" << tsText;
  // Instants from 1970 to the end of 9999 (kpis need a time line an SRE can read; anything
  // else is a unit mistake or damage).
  const QString tsRange = "out of range: epoch milliseconds from 1970-01-01 to 9999-12-31";
  QTest::newRow("ts out of range") << rec("1e300") << "ts" << tsRange;
  QTest::newRow("ts before 1970") << rec("-1e15") << "ts" << tsRange;
  QTest::newRow("ts -1 ms") << rec("-1") << "ts" << tsRange;
  QTest::newRow("ts year 10000 (ms)") << rec("253402300800000") << "ts" << tsRange;
  QTest::newRow("ts year 10000, fraction") << rec("253402300800000.5") << "ts" << tsRange;
  QTest::newRow("ts RFC 3339 before 1970")
      << rec(R"("1969-12-31T23:59:59Z")") << "ts"
      << "out of range: '1969-12-31T23:59:59Z' is not from 1970-01-01 to 9999-12-31";
  QTest::newRow("ts RFC 3339 offset before 1970") << rec(R"("1970-01-01T00:00:00+00:01")") << "ts"
                                                  << "out of range: ";
  QTest::newRow("ts trailing text") << rec(R"("2025-11-30T06:25:56Zx")") << "ts" << tsText;
  QTest::newRow("instance number")
      << QByteArray(R"({"ts":1,"instance":5,"latency_ms":1,"status":200})") << "instance"
      << "expected a string";
  QTest::newRow("instance empty") << QByteArray(
                                         R"({"ts":1,"instance":"","latency_ms":1,"status":200})")
                                  << "instance"
                                  << "must not be empty";
  QTest::newRow("latency string")
      << QByteArray(R"({"ts":1,"instance":"a","latency_ms":"12","status":200})") << "latency_ms"
      << "expected a number";
  QTest::newRow("negative latency")
      << QByteArray(R"({"ts":1,"instance":"a","latency_ms":-0.5,"status":200})") << "latency_ms"
      << "must not be negative";
  QTest::newRow("latency out of range")
      << QByteArray(R"({"ts":1,"instance":"a","latency_ms":1e300,"status":200})") << "latency_ms"
      << "out of range";
  QTest::newRow("status string") << QByteArray(
                                        R"({"ts":1,"instance":"a","latency_ms":1,"status":"200"})")
                                 << "status"
                                 << "expected an integer HTTP status";
  QTest::newRow("status fractional")
      << QByteArray(R"({"ts":1,"instance":"a","latency_ms":1,"status":200.5})") << "status"
      << "expected an integer HTTP status";
  QTest::newRow("status 1000") << QByteArray(
                                      R"({"ts":1,"instance":"a","latency_ms":1,"status":1000})")
                               << "status"
                               << "must be in [0, 999]";
  QTest::newRow("status -1") << QByteArray(R"({"ts":1,"instance":"a","latency_ms":1,"status":-1})")
                             << "status"
                             << "must be in [0, 999]";
  QTest::newRow("bad outcome") << rec("1", R"("outcome":"fine")") << "outcome"
                               << "expected ok, error, timeout or reset";
  QTest::newRow("outcome number") << rec("1", R"("outcome":1)") << "outcome"
                                  << "expected a string";
  QTest::newRow("model number") << rec("1", R"("model":3)") << "model"
                                << "expected a string";
  QTest::newRow("critical string") << rec("1", R"("critical":"yes")") << "critical"
                                   << "expected true or false";
  QTest::newRow("tokens negative") << rec("1", R"("tokens_in":-1)") << "tokens_in"
                                   << "expected a non-negative integer";
  QTest::newRow("tokens fractional") << rec("1", R"("tokens_out":1.5)") << "tokens_out"
                                     << "expected a non-negative integer";
  QTest::newRow("ttfb negative") << rec("1", R"("ttfb_ms":-1)") << "ttfb_ms"
                                 << "must not be negative";
  QTest::newRow("ttfb string") << rec("1", R"("ttfb_ms":"5")") << "ttfb_ms"
                               << "expected a number";
  QTest::newRow("trailing object") << QByteArray(rec("1") + "{}") << ""
                                   << "trailing content after the JSON object";
  QTest::newRow("trailing brace") << QByteArray(rec("1") + "}") << ""
                                  << "trailing content after the JSON object";
  QTest::newRow("trailing word") << QByteArray(rec("1") + " x") << ""
                                 << "invalid JSON";
  QTest::newRow("trailing number") << QByteArray(rec("1") + " 5") << ""
                                   << "invalid JSON";
}

void TstTelemetry::badLines() {
  QFETCH(QByteArray, line);
  QFETCH(QString, field);
  QFETCH(QString, detail);
  // Good record on line 1, blank line 2, the bad line on 3, a good record on 4.
  const std::string text =
      record("1", "first") + "\n\n" + line.toStdString() + "\n" + record("2", "after") + "\n";

  {
    auto r = JsonlReader::fromMemory("bad.jsonl", text, false);
    CallRecord rec;
    QVERIFY(r->next(rec));
    QCOMPARE(rec.line, 1L);
    try {
      r->next(rec);
      QFAIL("a bad line was accepted");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("bad.jsonl"));
      QCOMPARE(e.line(), 3L);
      QCOMPARE(QString::fromStdString(e.field()), field);
      const QString what = QString::fromStdString(e.what());
      const QString prefix =
          QStringLiteral("bad.jsonl:3: ") + (field.isEmpty() ? QString() : field + ": ");
      QVERIFY2(what.startsWith(prefix), qPrintable(what));
      if (!detail.isEmpty())
        QVERIFY2(QString::fromStdString(e.detail()).startsWith(detail), qPrintable(what));
    }
  }
  {
    // Skipping: the line is counted, its message kept, and both neighbours come through.
    auto r = JsonlReader::fromMemory("bad.jsonl", text, true);
    const Parsed p = readAll(*r);
    QCOMPARE(p.recs.size(), std::size_t(2));
    QCOMPARE(p.instances[0], std::string("first"));
    QCOMPARE(p.instances[1], std::string("after"));
    QCOMPARE(p.recs[1].line, 4L);
    QCOMPARE(p.recs[1].ts, Micros(2000));
    QCOMPARE(r->skipped(), std::uint64_t(1));
    QCOMPARE(r->skippedMessages().size(), std::size_t(1));
    QVERIFY(QString::fromStdString(r->skippedMessages()[0]).startsWith("bad.jsonl:3: "));
  }
}

void TstTelemetry::skipBadLinesKeepsEveryGoodRecord() {
  // 300 lines; every line whose number is divisible by 3 or 7 is bad in a different way.
  const char* bad[] = {R"({"ts":1,)", "[]", R"({"ts":1,"instance":"a","latency_ms":-1,"status":1})",
                       R"({"instance":"a","latency_ms":1,"status":1})",
                       R"({"ts":1,"instance":"a","latency_ms":1,"status":1}x)"};
  std::string text;
  std::vector<long> goodLines;
  std::uint64_t badCount = 0;
  for (long line = 1; line <= 300; ++line) {
    if (line % 3 == 0 || line % 7 == 0) {
      text += bad[badCount++ % 5];
    } else {
      text += record(std::to_string(line), "i-" + std::to_string(line));
      goodLines.push_back(line);
    }
    text += line % 2 ? "\n" : "\r\n";
  }
  auto r = JsonlReader::fromMemory("mixed.jsonl", text, true);
  const Parsed p = readAll(*r);
  QCOMPARE(p.recs.size(), goodLines.size());
  for (std::size_t i = 0; i < goodLines.size(); ++i) {
    QCOMPARE(p.recs[i].line, goodLines[i]);
    QCOMPARE(p.recs[i].ts, Micros(goodLines[i]) * 1000);
    QCOMPARE(p.instances[i], "i-" + std::to_string(goodLines[i]));
  }
  QCOMPARE(r->skipped(), badCount);
  QCOMPARE(p.recs.size() + badCount, std::size_t(300));  // nothing lost, nothing invented
  QVERIFY(QString::fromStdString(r->skippedMessages().front()).startsWith("mixed.jsonl:3: "));
  QVERIFY(QString::fromStdString(r->skippedMessages()[1]).startsWith("mixed.jsonl:6: "));
  QVERIFY(QString::fromStdString(r->skippedMessages()[2]).startsWith("mixed.jsonl:7: "));
}

void TstTelemetry::skippedMessagesAreCapped() {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "not json\n";
  text += record("5") + "\n";
  auto r = JsonlReader::fromMemory("junk.jsonl", text, true);
  const Parsed p = readAll(*r);
  QCOMPARE(p.recs.size(), std::size_t(1));
  QCOMPARE(p.recs[0].line, 26L);
  QCOMPARE(r->skipped(), std::uint64_t(25));
  QCOMPARE(r->skippedMessages().size(), std::size_t(20));  // the first 20 (docs/telemetry.md)
  QVERIFY(QString::fromStdString(r->skippedMessages().back()).startsWith("junk.jsonl:20: "));
}

void TstTelemetry::chunkBoundary_data() {
  // The first read fills exactly kChunk bytes. A target line starts `k` bytes before that
  // boundary, so the boundary falls at every interesting place in it.
  QTest::addColumn<int>("k");
  QTest::addColumn<bool>("crlf");
  const int len = int(record("42", "target-instance").size());
  QTest::newRow("line starts at the boundary") << 0 << false;
  QTest::newRow("first byte before") << 1 << false;
  QTest::newRow("split in the middle") << len / 2 << false;
  QTest::newRow("last byte after") << len - 1 << false;
  QTest::newRow("newline after the boundary") << len << false;
  QTest::newRow("newline is the last byte") << len + 1 << false;
  QTest::newRow("CR and LF split") << len + 1 << true;
  QTest::newRow("CRLF after the boundary") << len << true;
  QTest::newRow("LF is the last byte (CRLF)") << len + 2 << true;
}

void TstTelemetry::chunkBoundary() {
  QFETCH(int, k);
  QFETCH(bool, crlf);
  const std::string target = record("42", "target-instance");
  const std::size_t start = kChunk - std::size_t(k);

  // Fillers: valid records padded through an unknown field, ~1000 bytes each, the last one
  // sized so that the target starts exactly at `start`.
  std::string text;
  text.reserve(kChunk + 4096);
  long fillers = 0;
  auto filler = [&](std::size_t total) {  // total line length including '\n'
    std::string l = record(std::to_string(fillers + 1000), "f", R"("pad":")");
    const std::size_t pad = total - l.size() - 2;  // + closing quote + newline
    l.insert(l.size() - 1, std::string(pad, 'x') + "\"");
    text += l + "\n";
    ++fillers;
  };
  while (start - text.size() >= 2000) filler(1000);
  filler(start - text.size());
  QCOMPARE(text.size(), start);
  text += target + (crlf ? "\r\n" : "\n");
  text += record("43", "next") + "\n";
  QVERIFY(text.size() > kChunk);

  auto r = JsonlReader::fromMemory("big.jsonl", text, false);
  const Parsed p = readAll(*r);
  QCOMPARE(long(p.recs.size()), fillers + 2);
  for (long i = 0; i < fillers; ++i) {
    QCOMPARE(p.recs[i].ts, Micros(i + 1000) * 1000);
    QCOMPARE(p.recs[i].line, i + 1);
  }
  const CallRecord& t = p.recs[fillers];
  QCOMPARE(p.instances[fillers], std::string("target-instance"));
  QCOMPARE(t.ts, Micros(42'000));
  QCOMPARE(t.latency, Micros(12'500));
  QCOMPARE(t.status, 200);
  QCOMPARE(t.line, fillers + 1);
  QCOMPARE(p.instances[fillers + 1], std::string("next"));
  QCOMPARE(p.recs[fillers + 1].line, fillers + 2);
}

void TstTelemetry::lineLongerThanChunk() {
  // A 5 MiB and a 7.5 MiB line (the buffer must grow, twice; the limit is 8 MiB) between
  // ordinary lines.
  std::string text = record("1", "a") + "\n";
  text += record("2", "huge", "\"pad\":\"" + std::string(5 << 20, 'y') + "\"") + "\n";
  text += record("3", "b") + "\n";
  text += record("4", "huger", "\"pad\":[\"" + std::string(15 << 19, 'z') + "\"]") + "\n";
  text += record("5", "c");
  auto r = JsonlReader::fromMemory("long.jsonl", text, false);
  const Parsed p = readAll(*r);
  QCOMPARE(p.recs.size(), std::size_t(5));
  const char* names[] = {"a", "huge", "b", "huger", "c"};
  for (int i = 0; i < 5; ++i) {
    QCOMPARE(p.instances[i], std::string(names[i]));
    QCOMPARE(p.recs[i].ts, Micros(i + 1) * 1000);
    QCOMPARE(p.recs[i].line, long(i + 1));
  }
  // A small first buffer (in-memory inputs start at their own size) grows the same way: a
  // 20 KiB line in a reader that starts at 4 KiB.
  const std::string small = record("1", "a") + "\n" +
                            record("2", "wide", "\"pad\":\"" + std::string(20 << 10, 'w') + "\"") +
                            "\n" + record("3", "b") + "\n";
  std::size_t at = 0;
  JsonlReader tiny(
      "small.jsonl",
      [&](char* dst, std::size_t n) {
        const std::size_t k = std::min(n, small.size() - at);
        std::memcpy(dst, small.data() + at, k);
        at += k;
        return k;
      },
      false, 4096);
  const Parsed q = readAll(tiny);
  QCOMPARE(q.recs.size(), std::size_t(3));
  QCOMPARE(q.instances[1], std::string("wide"));
  QCOMPARE(q.recs[2].line, long(3));
}

void TstTelemetry::manyChunksSmallReads() {
  // > 4 MiB of lines of varying length, read through a source that hands out odd-sized
  // pieces (as a pipe does): every record arrives, in order, with its values.
  std::string text;
  long n = 0;
  while (text.size() < kChunk + kChunk / 2) {
    ++n;
    const std::string pad(std::size_t(n * 7919 % 97), 'p');
    text += R"({"ts":)" + std::to_string(n) + R"(.5,"instance":"inst-)" + std::to_string(n % 13) +
            R"(","latency_ms":)" + std::to_string(n % 1000) + R"(,"status":)" +
            std::to_string(200 + n % 300) + R"(,"pad":")" + pad + "\"}" + (n % 5 ? "\n" : "\r\n");
  }
  for (const std::size_t piece : {std::size_t(4093), std::size_t(1) << 20}) {
    std::size_t pos = 0;
    std::size_t call = 0;
    JsonlReader r(
        "pieces.jsonl",
        [&](char* dst, std::size_t want) {
          const std::size_t k = std::min({want, text.size() - pos, piece - (call++ % 7)});
          std::memcpy(dst, text.data() + pos, k);
          pos += k;
          return k;
        },
        false);
    CallRecord rec;
    long i = 0;
    while (r.next(rec)) {
      ++i;
      QCOMPARE(rec.line, i);
      QCOMPARE(rec.ts, Micros(i) * 1000 + 500);
      QCOMPARE(rec.instance, std::string_view("inst-" + std::to_string(i % 13)));
      QCOMPARE(rec.latency, Micros(i % 1000) * 1000);
      QCOMPARE(rec.status, int(200 + i % 300));
    }
    QCOMPARE(i, n);
  }
}

void TstTelemetry::openFile() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("trace.jsonl");
  std::string text;
  long n = 0;
  while (text.size() < kChunk + 1000) text += record(std::to_string(++n), "f") + "\n";
  text += "oops\n";
  {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(text.data(), qint64(text.size())), qint64(text.size()));
  }
  auto r = JsonlReader::openFile(path.toStdString(), false);
  QCOMPARE(r->source(), path.toStdString());
  CallRecord rec;
  long got = 0;
  try {
    while (r->next(rec)) ++got;
    QFAIL("the bad last line was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.line(), n + 1);
    QCOMPARE(e.file(), path.toStdString());
  }
  QCOMPARE(got, n);

  try {
    JsonlReader::openFile(dir.filePath("missing.jsonl").toStdString(), false);
    QFAIL("opened a missing file");
  } catch (const InputError& e) {
    QCOMPARE(e.line(), 0L);
    QVERIFY(QString(e.what()).startsWith(dir.filePath("missing.jsonl") + ": "));
  }

  // A directory opens (on POSIX) but cannot be read: an error, not an empty trace.
  try {
    auto d = JsonlReader::openFile(dir.path().toStdString(), true);
    d->next(rec);
    QFAIL("read a directory as an empty trace");
  } catch (const InputError& e) {
    QCOMPARE(e.file(), dir.path().toStdString());
    QVERIFY(QString(e.what()).startsWith(dir.path() + ": "));
  }
}

QTEST_GUILESS_MAIN(TstTelemetry)
#include "tst_telemetry.moc"
