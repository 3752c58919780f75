// Live recordings (app/library): calls and aggregate samples recorded continuously by a
// LiveRecorder, cut into incidents that replay exactly like the file they came from; retention
// by records, age and bytes with a bounded file; incremental enforcement; a cut while a
// recorder writes; a recorder SIGKILLed between and inside commits; bad cuts; the block codec.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "library_testing.hpp"
#include "spillway/library/live_recorder.hpp"
#include "spillway/library/recording_block.hpp"
#include "spillway/library/time_text.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using namespace spillway::library;
using namespace spillway::testing;

namespace {

constexpr Micros kT0 = 1764480000000000;

RecorderOptions keepAll() {
  RecorderOptions o;
  o.retention.maxAge = 0;
  return o;
}

// The library file plus its WAL: what the disk holds.
std::uint64_t diskBytes(const std::string& db, bool wal = true) {
  std::uint64_t n = 0;
  for (const std::string& f : {db, db + "-wal"}) {
    if (!wal && f != db) continue;
    std::error_code ec;
    const auto sz = std::filesystem::file_size(f, ec);
    if (!ec) n += sz;
  }
  return n;
}

void recordFile(LiveRecorder& rec, const std::string& path) {
  auto r = JsonlReader::openFile(path, false);
  CallRecord c;
  while (r->next(c)) rec.append(c);
}

// The file's calls that start in [from, to), as canonical JSONL: what a cut must hold.
std::string sliceOf(const std::string& path, Micros from, Micros to, std::size_t* n = nullptr) {
  auto r = JsonlReader::openFile(path, false);
  std::string out;
  CallRecord c;
  std::size_t k = 0;
  while (r->next(c))
    if (c.ts >= from && c.ts < to) {
      formats::appendCallJson(out, c);
      ++k;
    }
  if (n) *n = k;
  return out;
}

std::pair<Micros, Micros> spanOf(const std::string& path) {
  auto r = JsonlReader::openFile(path, false);
  CallRecord c;
  Micros lo = kForever, hi = kNever;
  while (r->next(c)) {
    lo = std::min(lo, c.ts);
    hi = std::max(hi, c.ts);
  }
  return {lo, hi};
}

Policy policyFile(const std::string& path) {
  return parsePolicy(slurp(path), path);
}

std::string integrity(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  std::string out = sqlite3_step(st) == SQLITE_ROW
                        ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                        : "no answer";
  sqlite3_finalize(st);
  return out;
}

// Per-second samples of two instances over `seconds`; gpu-2 fails 18 of 20 calls in [20, 40) s.
struct Sample {
  std::string instance;
  Micros end;
  std::uint32_t calls, failures;
  std::int64_t slow;
};
std::vector<Sample> sampleRows(int n) {
  std::vector<Sample> out;
  for (int t = 1; t <= n; ++t)
    for (const char* inst : {"gpu-1", "gpu-2"}) {
      const bool bad = std::string(inst) == "gpu-2" && t > 20 && t <= 40;
      out.push_back(
          {inst, kT0 + t * kMicrosPerSecond, 20, bad ? 18u : 0u, t % 7 == 0 ? -1 : t % 3});
    }
  return out;
}
formats::AggregateSample asSample(const Sample& s) {
  formats::AggregateSample a;
  a.instance = s.instance;
  a.model = "chat-72b";
  a.end = s.end;
  a.step = kMicrosPerSecond;
  a.calls = s.calls;
  a.failures = s.failures;
  a.slow = s.slow;
  return a;
}

// Samples from memory, those that start in [from, to): the reference a cut is replayed against.
class SampleVector final : public formats::RecordSource {
 public:
  SampleVector(std::vector<Sample> rows, Micros from, Micros to)
      : RecordSource("samples", false), rows_(std::move(rows)), from_(from), to_(to) {}
  bool aggregates() const override { return true; }
  bool next(CallRecord&) override { return false; }
  bool nextAggregate(formats::AggregateSample& s) override {
    while (at_ < rows_.size()) {
      const Sample& r = rows_[at_++];
      if (r.end - kMicrosPerSecond < from_ || r.end - kMicrosPerSecond >= to_) continue;
      s = asSample(r);
      return true;
    }
    return false;
  }

 private:
  std::vector<Sample> rows_;
  Micros from_, to_;
  std::size_t at_ = 0;
};

// Empty when a decoded block is safe to read; else what is wrong with it.
QString blockDefect(const RecordingBlock& b) {
  const std::size_t n = b.size(), strings = b.strings.size();
  auto ids = [&](const std::vector<std::uint32_t>& v, const char* name, bool required) {
    if (v.size() != n) return QString("%1: %2 ids for %3 rows").arg(name).arg(v.size()).arg(n);
    for (std::size_t i = 0; i < n; ++i)
      if (v[i] > strings || (required && v[i] == 0))
        return QString("%1[%2]: string id %3 of %4").arg(name).arg(i).arg(v[i]).arg(strings);
    return QString();
  };
  auto length = [n](std::size_t size, const char* name) {
    return size == n ? QString() : QString("%1: %2 values for %3 rows").arg(name).arg(size).arg(n);
  };
  QStringList defects;
  if (b.kind == RecordKind::Calls) {
    const BlockColumns& c = b.calls;
    defects << length(c.latency.size(), "latency") << length(c.status.size(), "status")
            << length(c.outcome.size(), "outcome") << length(c.critical.size(), "critical")
            << length(c.tokensIn.size(), "tokens_in") << length(c.tokensOut.size(), "tokens_out")
            << length(c.ttfb.size(), "ttfb") << ids(c.instance, "instance", true)
            << ids(c.model, "model", false) << ids(c.tenant, "tenant", false)
            << ids(c.route, "route", false) << ids(c.session, "session", false);
  } else if (b.kind == RecordKind::Samples) {
    const SampleColumns& c = b.samples;
    defects << length(c.end.size(), "end") << length(c.step.size(), "step")
            << length(c.calls.size(), "calls") << length(c.failures.size(), "failures")
            << length(c.slow.size(), "slow") << ids(c.instance, "instance", false)
            << ids(c.model, "model", false);
  } else {
    defects << QString("kind %1").arg(static_cast<int>(b.kind));
  }
  defects.removeAll(QString());
  return defects.join("; ");
}

}  // namespace

class TstRecorder : public QObject {
  Q_OBJECT
 private slots:
  // Record a trace, cut [from, to) out of it: the incident is byte for byte the file's calls in
  // that range (export), and replays exactly like them (transitions and counters).
  void cutReplaysLikeTheFile_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("policy");
    QTest::addColumn<double>("fromShare");  // of the trace's span
    QTest::addColumn<double>("toShare");    // 1 = "end"
    QTest::addColumn<int>("commitMs");      // data time between commits
    QTest::addColumn<bool>("events");       // the replay must see transitions
    const QString tiny = QStringLiteral(TEST_DATA_DIR "/tiny.jsonl");
    const QString tinyPolicy = QStringLiteral(TEST_DATA_DIR "/tiny-policy.yaml");
    const QString seed = QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl");
    const QString def = QStringLiteral(SPILLWAY_RESOURCES_DIR "/policies/default.yaml");
    QTest::newRow("tiny, whole") << tiny << tinyPolicy << 0.0 << 1.0 << 1000 << true;
    QTest::newRow("tiny, a block per call") << tiny << tinyPolicy << 0.0 << 1.0 << 1 << true;
    QTest::newRow("tiny, second half") << tiny << tinyPolicy << 0.5 << 1.0 << 1000 << false;
    QTest::newRow("seed-000 sample, whole") << seed << def << 0.0 << 1.0 << 1000 << true;
    QTest::newRow("seed-000 sample, middle") << seed << def << 0.3 << 0.7 << 1000 << false;
    QTest::newRow("seed-000 sample, 50 ms commits") << seed << def << 0.1 << 0.9 << 50 << false;
    const QString ttfb = QStringLiteral(TEST_DATA_DIR "/ttfb.jsonl");  // some calls with ttfb_ms
    QTest::newRow("ttfb on some calls, a block per 500 ms")
        << ttfb << tinyPolicy << 0.0 << 1.0 << 500 << false;
    QTest::newRow("ttfb on some calls, second half")
        << ttfb << tinyPolicy << 0.5 << 1.0 << 1000 << false;
    QTest::newRow("synthetic 60 k, whole") << "synthetic" << def << 0.0 << 1.0 << 1000 << false;
    QTest::newRow("synthetic 60 k, inside blocks")
        << "synthetic" << def << 0.123 << 0.456 << 1000 << false;
  }
  void cutReplaysLikeTheFile() {
    QFETCH(QString, file);
    QFETCH(QString, policy);
    QFETCH(double, fromShare);
    QFETCH(double, toShare);
    QFETCH(int, commitMs);
    QFETCH(bool, events);
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString(), db = d + "/lib.db";
    std::string path = file.toStdString();
    if (file == "synthetic") {
      path = d + "/synthetic.jsonl";
      spit(path, synthetic(60000));
    }
    RecorderOptions o = keepAll();
    o.commitEvery = commitMs * kMicrosPerMilli;
    {
      LiveRecorder rec(db, "live", o);
      recordFile(rec, path);
      rec.close();
      QCOMPARE(rec.stats().pending, std::uint64_t(0));
    }
    const auto [lo, hi] = spanOf(path);
    const Micros from = lo + static_cast<Micros>(fromShare * static_cast<double>(hi - lo));
    const Micros to =
        toShare >= 1.0 ? hi + 1 : lo + static_cast<Micros>(toShare * static_cast<double>(hi - lo));
    std::size_t n = 0;
    const std::string expected = sliceOf(path, from, to, &n);
    QVERIFY(n > 0);
    spit(d + "/expected.jsonl", expected);

    Library lib(db);
    const CutResult c = lib.cutRecording("live", from, to, "cut");
    QCOMPARE(c.kind, std::string("calls"));
    QCOMPARE(c.records, std::uint64_t(n));
    QVERIFY(!c.clipped);
    QCOMPARE(lib.requireIncident("cut").records, std::uint64_t(n));
    QCOMPARE(exportOf(lib, "cut", d), expected);

    const Policy pol = policyFile(policy.toStdString());
    auto fromFile = formats::openSource(formats::Format::Jsonl, d + "/expected.jsonl", {});
    const ReplayResult a = replay(*fromFile, pol);
    auto fromCut = lib.open("cut");
    const ReplayResult b = replay(*fromCut, pol);
    if (events) QVERIFY(!a.events.empty());
    QCOMPARE(QString::fromStdString(b.events), QString::fromStdString(a.events));
    QCOMPARE(QString::fromStdString(b.counters), QString::fromStdString(a.counters));
  }

  // A long run under each kind of bound: the newest data is kept, the oldest dropped in whole
  // blocks, what is kept has no hole, and the file stops growing once the bound is reached
  // (freed pages are reused).
  void retentionKeepsTheNewest_data() {
    QTest::addColumn<int>("calls");
    QTest::addColumn<int>("gapUs");
    QTest::addColumn<int>("maxAgeMs");
    QTest::addColumn<int>("maxRecords");
    QTest::addColumn<int>("maxBytes");
    QTest::newRow("2 M calls at 100 k/s, keep 200 k calls") << 2000000 << 10 << 0 << 200000 << 0;
    QTest::newRow("1 M calls at 10 k/s, keep 10 s") << 1000000 << 100 << 10000 << 0 << 0;
    QTest::newRow("1 M calls at 100 k/s, keep 2 MB") << 1000000 << 10 << 0 << 0 << 2000000;
  }
  void retentionKeepsTheNewest() {
    QFETCH(int, calls);
    QFETCH(int, gapUs);
    QFETCH(int, maxAgeMs);
    QFETCH(int, maxRecords);
    QFETCH(int, maxBytes);
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    RecorderOptions o;
    o.retention.maxAge = maxAgeMs * kMicrosPerMilli;
    o.retention.maxRecords = static_cast<std::uint64_t>(maxRecords);
    o.retention.maxBytes = static_cast<std::uint64_t>(maxBytes);
    const auto n = static_cast<std::size_t>(calls);
    std::uint64_t sizeAt30 = 0, sizeMax = 0;
    LiveRecorder rec(db, "live", o);
    CallRecord r;
    std::string inst, tenant;
    Micros lastEnd = kNever;
    for (std::size_t i = 0; i < n; ++i) {
      syntheticCall(i, r, inst, tenant, gapUs);
      rec.append(r);
      lastEnd = std::max(lastEnd, r.end());
      if (i % (n / 20) == 0 && i >= n * 3 / 10) {
        const std::uint64_t s = diskBytes(db);
        if (sizeAt30 == 0) sizeAt30 = s;
        sizeMax = std::max(sizeMax, s);
      }
    }
    rec.close();
    const RecordingInfo info = rec.info();
    const std::uint64_t sizeEnd = diskBytes(db);
    qInfo(
        "retained %llu calls in %llu blocks (%llu bytes), dropped %llu; disk (db + WAL) "
        "%.1f MB at 30 %% of the run, max %.1f MB, end %.1f MB (WAL %.1f MB)",
        static_cast<unsigned long long>(info.calls), static_cast<unsigned long long>(info.blocks),
        static_cast<unsigned long long>(info.bytes), static_cast<unsigned long long>(info.dropped),
        static_cast<double>(sizeAt30) / 1e6, static_cast<double>(sizeMax) / 1e6,
        static_cast<double>(sizeEnd) / 1e6,
        static_cast<double>(sizeEnd - diskBytes(db, false)) / 1e6);
    QCOMPARE(info.recorded, std::uint64_t(n));
    QCOMPARE(info.calls + info.dropped, std::uint64_t(n));
    QCOMPARE(rec.stats().droppedRecords, info.dropped);
    QVERIFY(info.dropped > 0);
    const Micros lastTs = kT0 + static_cast<Micros>(n - 1) * gapUs;
    QCOMPARE(info.tEnd, lastEnd);
    if (maxRecords > 0) {
      QVERIFY(info.calls <= std::uint64_t(maxRecords));
      QVERIFY(info.calls > std::uint64_t(maxRecords) - kBlockCalls);
    }
    if (maxAgeMs > 0) {  // whole blocks: up to one block's span older than the bound stays
      const Micros kept = info.tEnd - info.tStart;
      QVERIFY2(kept >= maxAgeMs * kMicrosPerMilli - millis(1), qPrintable(QString::number(kept)));
      QVERIFY2(kept <= maxAgeMs * kMicrosPerMilli + static_cast<Micros>(kBlockCalls) * gapUs +
                           2 * kMicrosPerSecond,
               qPrintable(QString::number(kept)));
    }
    if (maxBytes > 0) {
      QVERIFY(info.bytes <= std::uint64_t(maxBytes));
      QVERIFY(info.bytes > std::uint64_t(maxBytes) * 9 / 10);
    }
    // What is kept is the newest calls, contiguous: no hole, the last call present.
    Library lib(db);
    auto all = lib.openRecording("live", RecordKind::Calls, kNever + 1, kForever);
    CallRecord c;
    Micros first = 0, prev = 0;
    std::uint64_t k = 0;
    while (all->next(c)) {
      if (k == 0)
        first = c.ts;
      else
        QCOMPARE(c.ts - prev, Micros(gapUs));
      prev = c.ts;
      ++k;
    }
    QCOMPARE(k, info.calls);
    QCOMPARE(prev, lastTs);
    QCOMPARE(first, info.tStart);
    QVERIFY(first > kT0);
    // Bounded file: from 30 % of the run on (the bound was reached long before), it does not
    // grow by more than a commit's worth of pages.
    QVERIFY2(sizeEnd <= sizeAt30 + sizeAt30 / 4 + (4u << 20),
             qPrintable(QStringLiteral("%1 -> %2").arg(sizeAt30).arg(sizeEnd)));
    QVERIFY2(sizeMax <= sizeAt30 + sizeAt30 / 4 + (4u << 20),
             qPrintable(QStringLiteral("%1 -> %2").arg(sizeAt30).arg(sizeMax)));
    QCOMPARE(QString::fromStdString(integrity(lib.handle())), QStringLiteral("ok"));
  }

  // A bound lowered on a full recording drains over several commits, at most the budget each.
  void retentionIsIncremental() {
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    CallRecord r;
    std::string inst, tenant;
    constexpr std::size_t kCalls = 200000;
    {
      LiveRecorder rec(db, "live", keepAll());
      for (std::size_t i = 0; i < kCalls; ++i) {
        syntheticCall(i, r, inst, tenant, 100);
        rec.append(r);
      }
    }
    RecorderOptions o;
    o.retention.maxAge = 0;
    o.retention.maxRecords = 20000;
    o.dropBudget = 4;
    LiveRecorder rec(db, "live", o);
    syntheticCall(kCalls, r, inst, tenant, 100);
    rec.append(r);
    QVERIFY(rec.flush());
    QCOMPARE(rec.stats().droppedBlocks, std::uint64_t(4));
    QCOMPARE(rec.enforceRetention(10), std::uint64_t(10));
    QCOMPARE(rec.stats().droppedBlocks, std::uint64_t(14));
    rec.enforceRetention(1000000);
    const RecordingInfo info = rec.info();
    QVERIFY(info.calls <= 20000 + 1);
    QVERIFY(info.calls > 20000 - kBlockCalls);
    QCOMPARE(info.calls + info.dropped, std::uint64_t(kCalls + 1));
    QCOMPARE(rec.enforceRetention(1000), std::uint64_t(0));
  }

  // Aggregate samples are recorded and cut like calls; a recording with both kinds gives calls
  // unless samples are asked for, and says the other kind was left out.
  void aggregatesRecordedAndCut_data() {
    QTest::addColumn<bool>("withCalls");
    QTest::addColumn<QString>("kind");
    QTest::newRow("samples only") << false << "";
    QTest::newRow("samples and calls, samples asked for") << true << "aggregates";
    QTest::newRow("samples and calls, default") << true << "";
  }
  void aggregatesRecordedAndCut() {
    QFETCH(bool, withCalls);
    QFETCH(QString, kind);
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString(), db = d + "/lib.db";
    const std::vector<Sample> rows = sampleRows(60);
    {
      LiveRecorder rec(db, "live", keepAll());
      CallRecord r;
      std::string inst, tenant;
      std::size_t call = 0;
      for (const Sample& s : rows) {
        rec.append(asSample(s));
        // Calls in between, up to the sample's end (1 call / 10 ms).
        while (withCalls && kT0 + static_cast<Micros>(call) * 10000 < s.end) {
          syntheticCall(call++, r, inst, tenant, 10000);
          rec.append(r);
        }
      }
      QCOMPARE(rec.stats().samples, std::uint64_t(rows.size()));
    }
    Library lib(db);
    const RecordingInfo info = lib.requireRecording("live");
    QCOMPARE(info.samples, std::uint64_t(rows.size()));
    QCOMPARE(info.calls, withCalls ? std::uint64_t(6000) : std::uint64_t(0));
    const Micros from = kT0 + seconds(10), to = kT0 + seconds(50);
    const CutResult c = lib.cutRecording("live", from, to, "cut", kind.toStdString());
    if (withCalls && kind.isEmpty()) {
      QCOMPARE(c.kind, std::string("calls"));
      QCOMPARE(c.records, std::uint64_t(4000));
      QVERIFY(c.otherKindInRange);
      return;
    }
    QCOMPARE(c.kind, std::string("aggregates"));
    QCOMPARE(c.otherKindInRange, withCalls);
    QCOMPARE(c.records, std::uint64_t(2 * 40));  // samples ending in (10 s, 50 s]
    QCOMPARE(lib.requireIncident("cut").kind, std::string("aggregates"));
    const Policy pol = policyFile(TEST_DATA_DIR "/tiny-policy.yaml");
    SampleVector ref(rows, from, to);
    const ReplayResult a = replay(ref, pol);
    auto fromCut = lib.open("cut");
    const ReplayResult b = replay(*fromCut, pol);
    QVERIFY(!a.events.empty());  // gpu-2's failures trip its breaker
    QCOMPARE(QString::fromStdString(b.events), QString::fromStdString(a.events));
    QCOMPARE(QString::fromStdString(b.counters), QString::fromStdString(a.counters));
  }

  // Annotations of the recording that overlap the range follow the cut, unclipped.
  void annotationsFollowTheCut() {
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    {
      LiveRecorder rec(db, "live", keepAll());
      CallRecord r;
      std::string inst, tenant;
      for (std::size_t i = 0; i < 60000; ++i) {
        syntheticCall(i, r, inst, tenant, 1000);  // 60 s
        rec.append(r);
      }
    }
    Library lib(db);
    lib.annotateRecording("live", {"gpu-3", kT0 + seconds(5), kT0 + seconds(25), "errors"});
    lib.annotateRecording("live", {"gpu-4", kT0 + seconds(40), kT0 + seconds(45), "outage"});
    lib.annotateRecording("live", {"gpu-5", kT0 + seconds(50), kT0 + seconds(55), "hang"});
    QVERIFY_THROWS_EXCEPTION(InputError, lib.annotateRecording("nope", {"x", 0, 1, ""}));
    const CutResult c = lib.cutRecording("live", kT0 + seconds(20), kT0 + seconds(41), "cut");
    QCOMPARE(c.annotations, std::uint64_t(2));
    const auto a = lib.annotations("cut");
    QCOMPARE(a.size(), std::size_t(2));
    QCOMPARE(a[0].instance, std::string("gpu-3"));
    QCOMPARE(a[0].start, kT0 + seconds(5));
    QCOMPARE(a[0].end, kT0 + seconds(25));
    QCOMPARE(a[1].kind, std::string("outage"));
    QCOMPARE(a[1].origin, std::string("operator"));
  }

  // A cut on another connection while a recorder writes on its thread: every cut holds exactly
  // its range, the recorder loses nothing (it buffers while the cut holds the write lock).
  void cutWhileRecording() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString(), db = d + "/lib.db";
    constexpr std::size_t kCalls = 1500000;  // 15 s at 100 k calls/s
    constexpr Micros kGap = 10;
    RecorderOptions o = keepAll();
    o.busyWaitMs = 5;
    { LiveRecorder create(db, "live", o); }
    std::atomic<bool> done{false};
    RecorderStats stats;
    std::string writerError;
    std::thread writer([&] {
      try {
        LiveRecorder rec(db, "live", o);
        CallRecord r;
        std::string inst, tenant;
        for (std::size_t i = 0; i < kCalls; ++i) {
          syntheticCall(i, r, inst, tenant, kGap);
          rec.append(r);
          // Paced, so that the cuts overlap the writing on a loaded machine too.
          if (i % 5000 == 4999) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        rec.close();
        stats = rec.stats();
      } catch (const std::exception& e) {
        writerError = e.what();
      }
      done = true;
    });
    Library cutter(db);
    int cuts = 0, whileWriting = 0;
    std::string failure;
    // Windows of 3 s (300 k calls) take longer to copy than the recorder takes to reach its next
    // commit point (1 s of data), so commits meet a held write lock.
    for (int k = 0; k < 4 && failure.empty(); ++k) {
      const Micros from = kT0 + millis(3500 * k), to = from + seconds(3);
      // Wait until the recorder committed the range: the calls come in order, so the first
      // (to - from) / gap + 1 of them after `from`'s index hold all of it.
      const auto needed = static_cast<std::uint64_t>((to - kT0) / kGap) + 1;
      while (!done && cutter.requireRecording("live").recorded < needed)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const bool writing = !done;
      try {
        const CutResult c = cutter.cutRecording("live", from, to, "cut-" + std::to_string(k));
        if (c.records != 300000)
          failure = "cut " + std::to_string(k) + ": " + std::to_string(c.records) + " records";
      } catch (const std::exception& e) {
        failure = e.what();
      }
      ++cuts;
      whileWriting += writing && !done;
    }
    writer.join();
    QVERIFY2(failure.empty(), failure.c_str());
    QVERIFY2(writerError.empty(), writerError.c_str());
    qInfo("%d cuts, %d while the recorder wrote; the recorder found the library busy %llu times",
          cuts, whileWriting, static_cast<unsigned long long>(stats.busy));
    QVERIFY(whileWriting > 0);
    QCOMPARE(stats.committed, std::uint64_t(kCalls));
    const RecordingInfo info = cutter.requireRecording("live");
    QCOMPARE(info.calls, std::uint64_t(kCalls));
    QCOMPARE(info.recorded, std::uint64_t(kCalls));
    // One cut, call for call: calls 350 000 .. 649 999 of the synthetic trace.
    std::string expected;
    CallRecord r;
    std::string inst, tenant;
    for (std::size_t i = 350000; i < 650000; ++i) {
      syntheticCall(i, r, inst, tenant, kGap);
      formats::appendCallJson(expected, r);
    }
    QVERIFY(exportOf(cutter, "cut-1", d) == expected);
  }

  // While another connection holds the write lock (a long cut, an import), the recorder keeps
  // taking records: a commit waits busyWaitMs and buffers on; past maxPendingRecords it waits
  // stallTimeoutMs and throws, keeping everything; once the lock is free one flush commits all.
  void busyLibraryBuffers() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString(), db = d + "/lib.db";
    RecorderOptions o = keepAll();
    o.commitRecords = 1000;
    o.maxPendingRecords = 5000;
    o.busyWaitMs = 1;
    o.stallTimeoutMs = 200;
    LiveRecorder rec(db, "live", o);
    Library other(db);
    QCOMPARE(sqlite3_exec(other.handle(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    CallRecord r;
    std::string inst, tenant;
    for (std::size_t i = 0; i < 4999; ++i) {
      syntheticCall(i, r, inst, tenant);
      rec.append(r);
    }
    QCOMPARE(rec.stats().busy, std::uint64_t(4));
    QCOMPARE(rec.stats().committed, std::uint64_t(0));
    QCOMPARE(rec.stats().pending, std::uint64_t(4999));
    QVERIFY(!rec.flush());
    syntheticCall(4999, r, inst, tenant);
    try {
      rec.append(r);
      QFAIL("no backpressure");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromUtf8(e.what()),
               QString::fromStdString(db) +
                   ": recording: 'live': the library stayed busy for 200 ms with 5000 records "
                   "buffered (a long cut or import?); nothing was dropped");
    }
    QCOMPARE(rec.stats().pending, std::uint64_t(5000));
    QCOMPARE(sqlite3_exec(other.handle(), "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    QVERIFY(rec.flush());
    QCOMPARE(rec.stats().committed, std::uint64_t(5000));
    QCOMPARE(rec.stats().pending, std::uint64_t(0));
    other.cutRecording("live", kT0, kForever - 1, "all");
    QCOMPARE(exportOf(other, "all", d), synthetic(5000));
  }

  // A recorder killed (SIGKILL) between commits or inside one: the library opens, is intact,
  // and holds exactly what was committed before the kill; only the buffer is lost.
  void killedRecorderLosesOnlyTheBuffer_data() {
    QTest::addColumn<bool>("insideCommit");
    QTest::newRow("between commits") << false;
    QTest::newRow("inside a commit") << true;
  }
  void killedRecorderLosesOnlyTheBuffer() {
    QFETCH(bool, insideCommit);
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString(), db = d + "/lib.db";
    constexpr Micros kGap = 100;              // 10 k calls/s
    constexpr std::size_t kAppended = 35000;  // 3.5 commits of 1 s
    { Library create(db); }
    int fds[2];
    QCOMPARE(pipe(fds), 0);
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      struct Hook {
        int fd;
        bool armed = false;
        std::uint64_t committed = 0;
      } hook{fds[1]};
      try {
        LiveRecorder rec(db, "live", keepAll());
        sqlite3_update_hook(
            rec.library().handle(),
            [](void* p, int op, const char*, const char* table, sqlite3_int64) {
              auto* h = static_cast<Hook*>(p);
              if (!h->armed || op != SQLITE_INSERT || std::string(table) != "rec_blocks") return;
              (void)!write(h->fd, &h->committed, sizeof h->committed);  // mid-transaction
              pause();
            },
            &hook);
        CallRecord r;
        std::string inst, tenant;
        for (std::size_t i = 0;; ++i) {
          syntheticCall(i, r, inst, tenant, kGap);
          rec.append(r);
          if (insideCommit && rec.stats().commits == 3) {
            hook.committed = rec.stats().committed;
            hook.armed = true;  // the 4th commit stops at its first block
          }
          if (!insideCommit && i + 1 == kAppended) {
            const std::uint64_t c = rec.stats().committed;
            (void)!write(fds[1], &c, sizeof c);
            pause();
          }
        }
      } catch (...) {
      }
      _exit(0);
    }
    close(fds[1]);
    std::uint64_t committed = 0;
    QCOMPARE(read(fds[0], &committed, sizeof committed), ssize_t(sizeof committed));
    QCOMPARE(kill(child, SIGKILL), 0);
    int status = 0;
    waitpid(child, &status, 0);
    QVERIFY(WIFSIGNALED(status));
    close(fds[0]);

    QVERIFY(committed >= 30000);
    if (!insideCommit) QVERIFY(kAppended - committed <= 10001);  // one commit interval
    Library lib(db);
    QCOMPARE(QString::fromStdString(integrity(lib.handle())), QStringLiteral("ok"));
    const RecordingInfo info = lib.requireRecording("live");
    QCOMPARE(info.recorded, committed);
    QCOMPARE(info.calls, committed);
    lib.cutRecording("live", kT0, kForever - 1, "all");
    QCOMPARE(exportOf(lib, "all", d), synthetic(committed, kGap));
    // The recording goes on where it stopped.
    {
      LiveRecorder rec(db, "live", keepAll());
      CallRecord r;
      std::string inst, tenant;
      syntheticCall(committed, r, inst, tenant, kGap);
      rec.append(r);
    }
    QCOMPARE(lib.requireRecording("live").calls, committed + 1);
  }

  void badCutsAreRefused_data() {
    QTest::addColumn<QString>("recording");
    QTest::addColumn<double>("from");  // seconds after the first call
    QTest::addColumn<double>("to");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");  // %F %T: the range; %S %E: the retained span
    QTest::newRow("no such recording") << "nope" << 0.0 << 5.0 << "x"
                                       << ""
                                       << "recording: no recording 'nope'";
    QTest::newRow("existing incident") << "live" << 0.0 << 5.0 << "taken"
                                       << ""
                                       << "name: incident 'taken' already exists";
    QTest::newRow("no name") << "live" << 0.0 << 5.0 << ""
                             << ""
                             << "name: the new incident needs a name";
    QTest::newRow("bad kind") << "live" << 0.0 << 5.0 << "x"
                              << "spans"
                              << "kind: expected calls or aggregates, not 'spans'";
    QTest::newRow("from = to") << "live" << 5.0 << 5.0 << "x"
                               << ""
                               << "range: from (%F) must be before to (%T)";
    QTest::newRow("from after to") << "live" << 6.0 << 5.0 << "x"
                                   << ""
                                   << "range: from (%F) must be before to (%T)";
    QTest::newRow("before the data")
        << "live" << -60.0 << -30.0 << "x"
        << ""
        << "range: [%F, %T) is outside the data recording 'live' retains (%S .. %E)";
    QTest::newRow("after the data")
        << "live" << 100.0 << 200.0 << "x"
        << ""
        << "range: [%F, %T) is outside the data recording 'live' retains (%S .. %E)";
    QTest::newRow("a gap in the data")
        << "live" << 12.0 << 18.0 << "x"
        << ""
        << "range: no calls or aggregate samples of recording 'live' start in [%F, %T)";
    QTest::newRow("no samples there")
        << "live" << 0.0 << 5.0 << "x"
        << "aggregates"
        << "range: no aggregate samples of recording 'live' start in [%F, %T)";
    QTest::newRow("nothing recorded yet")
        << "empty" << 0.0 << 5.0 << "x"
        << ""
        << "range: recording 'empty' holds no data yet (nothing recorded, or all of it dropped "
           "by retention)";
  }
  void badCutsAreRefused() {
    QFETCH(QString, recording);
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    {
      // Two bursts: [0, 10) s and [20, 30) s, a call every 10 ms.
      LiveRecorder rec(db, "live", keepAll());
      CallRecord r;
      std::string inst, tenant;
      for (std::size_t i = 0; i < 1000; ++i) {
        syntheticCall(i, r, inst, tenant, 10000);
        rec.append(r);
      }
      for (std::size_t i = 0; i < 1000; ++i) {
        syntheticCall(i, r, inst, tenant, 10000, kT0 + seconds(20));
        rec.append(r);
      }
      LiveRecorder empty(db, "empty", keepAll());
    }
    Library lib(db);
    lib.importFile(TEST_DATA_DIR "/tiny.jsonl", formats::Format::Jsonl, {}, "taken");
    const RecordingInfo live = lib.requireRecording("live");
    const Micros f = kT0 + static_cast<Micros>(from * 1e6), t = kT0 + static_cast<Micros>(to * 1e6);
    message.replace("%F", QString::fromStdString(formatUtc(f)))
        .replace("%T", QString::fromStdString(formatUtc(t)))
        .replace("%S", QString::fromStdString(formatUtc(live.tStart)))
        .replace("%E", QString::fromStdString(formatUtc(live.tEnd)));
    try {
      lib.cutRecording(recording.toStdString(), f, t, name.toStdString(), kind.toStdString());
      QFAIL("cut");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromUtf8(e.what()), QString::fromStdString(db) + ": " + message);
    }
    QCOMPARE(lib.incidents().size(), std::size_t(1));  // nothing left behind
    QCOMPARE(lib.requireRecording("live").calls, std::uint64_t(2000));
  }

  void badOptionsAreRefused() {
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    RecorderOptions o;
    o.commitEvery = 0;
    try {
      LiveRecorder rec(db, "live", o);
      QFAIL("opened");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromUtf8(e.what()),
               QString::fromStdString(db) + ": commit_every: must be positive");
    }
    QVERIFY_THROWS_EXCEPTION(InputError, LiveRecorder(db, "", {}));
  }

  // The recording block codec: every field survives, and damaged bytes are refused, not read.
  void blockRoundTripAndDamage() {
    RecordingBlockBuilder b(RecordKind::Calls);
    CallRecord r;
    std::string inst, tenant;
    for (std::size_t i = 0; i < 100; ++i) {
      syntheticCall(i, r, inst, tenant);
      if (i == 7) r.instance = {};
      if (i == 8) r.critical = true;
      if (i == 9) r.session = "s-9";
      r.outcome = i == 10 ? Outcome::Timeout : Outcome::Ok;
      b.add(r);
    }
    std::string bytes;
    b.encodeTo(bytes);
    QCOMPARE(b.size(), std::size_t(0));
    RecordingBlock out;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    QVERIFY(decodeRecordingBlock(p, bytes.size(), out));
    QCOMPARE(out.size(), std::size_t(100));
    std::string a, c;
    for (std::size_t i = 0; i < 100; ++i) {
      syntheticCall(i, r, inst, tenant);
      if (i == 7) r.instance = {};
      if (i == 8) r.critical = true;
      if (i == 9) r.session = "s-9";
      r.outcome = i == 10 ? Outcome::Timeout : Outcome::Ok;
      r.hasOutcome = true;
      formats::appendCallJson(a, r);
      CallRecord back;
      out.call(i, back);
      formats::appendCallJson(c, back);
    }
    QCOMPARE(QString::fromStdString(c), QString::fromStdString(a));
    for (std::size_t n = 0; n < bytes.size(); ++n)
      QVERIFY2(!decodeRecordingBlock(p, n, out), qPrintable(QString::number(n)));
    // Every byte damaged in turn: the block is refused, or what it decodes to is safe to read
    // (columns of one length, every string id inside the table, an instance on every call).
    std::size_t refused = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      if (!decodeRecordingBlock(reinterpret_cast<const unsigned char*>(bad.data()), bad.size(),
                                out)) {
        ++refused;
        continue;
      }
      const QString why = blockDefect(out);
      QVERIFY2(why.isEmpty(), qPrintable(QString("byte %1 of %2 damaged: accepted, but %3")
                                             .arg(i)
                                             .arg(bytes.size())
                                             .arg(why)));
      CallRecord back;
      for (std::size_t k = 0; k < out.size(); ++k) out.call(k, back);
    }
    QVERIFY2(refused > 0, "no damaged byte was refused");
    // The kind byte and the string count are always checked.
    for (const std::size_t at : {std::size_t(0), std::size_t(1)}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(0xff);
      QVERIFY2(!decodeRecordingBlock(reinterpret_cast<const unsigned char*>(bad.data()), bad.size(),
                                     out),
               qPrintable(QString::number(at)));
    }
  }

  // A damaged block in a library: reading the recording gives every call, or stops with an
  // error that names the file and what is wrong; never another exception, never garbage.
  void damagedRecordingIsANamedError() {
    QTemporaryDir dir;
    const std::string db = dir.path().toStdString() + "/lib.db";
    CallRecord r;
    std::string inst, tenant;
    constexpr std::size_t kCalls = 40;
    {
      LiveRecorder rec(db, "live", keepAll());
      for (std::size_t i = 0; i < kCalls; ++i) {
        syntheticCall(i, r, inst, tenant);
        rec.append(r);
      }
    }
    Library lib(db);
    auto blob = [&lib](const char* sql, std::string* in, const std::string* out) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(lib.handle(), sql, -1, &st, nullptr) != SQLITE_OK) return false;
      if (out) sqlite3_bind_blob(st, 1, out->data(), static_cast<int>(out->size()), nullptr);
      const int rc = sqlite3_step(st);
      if (in && rc == SQLITE_ROW)
        in->assign(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                   static_cast<std::size_t>(sqlite3_column_bytes(st, 0)));
      sqlite3_finalize(st);
      return in ? rc == SQLITE_ROW : rc == SQLITE_DONE;
    };
    std::string good;
    QVERIFY(blob("SELECT data FROM rec_blocks", &good, nullptr));
    QVERIFY(good.size() > 20);
    const QRegularExpression named("^" + QRegularExpression::escape(QString::fromStdString(db)) +
                                   ": the library is damaged: a recording block cannot be read$");
    std::size_t errors = 0, whole = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      QVERIFY(blob("UPDATE rec_blocks SET data = ?1", nullptr, &bad));
      std::size_t n = 0;
      try {
        auto all = lib.openRecording("live", RecordKind::Calls, kNever + 1, kForever);
        CallRecord c;
        while (all->next(c)) {
          QVERIFY2(!c.instance.empty(), qPrintable(QString::number(i)));
          ++n;
        }
        ++whole;
      } catch (const InputError& e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(named.match(what).hasMatch(), qPrintable(QString("byte %1: %2").arg(i).arg(what)));
        ++errors;
      } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("byte %1: not an InputError: %2").arg(i).arg(e.what())));
      }
      QVERIFY2(n <= std::size_t(1) << 24, qPrintable(QString::number(n)));
    }
    QCOMPARE(errors + whole, good.size());
    QVERIFY2(errors > 0, "no damaged byte was reported");
    QVERIFY(blob("UPDATE rec_blocks SET data = ?1", nullptr, &good));
    auto all = lib.openRecording("live", RecordKind::Calls, kNever + 1, kForever);
    std::size_t n = 0;
    for (CallRecord c; all->next(c);) ++n;
    QCOMPARE(n, kCalls);  // the same reader over the undamaged block reads every call
  }

  void timePoints_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("relative");
    QTest::addColumn<qint64>("expected");  // -1: refused
    const qint64 end = kT0 + seconds(3600);
    QTest::newRow("epoch ms") << "1764480000000" << false << qint64(kT0);
    QTest::newRow("RFC 3339") << "2025-11-30T05:20:00Z" << false << qint64(kT0);
    QTest::newRow("minus 15 minutes") << "-15m" << true << end - seconds(900);
    QTest::newRow("minus 1.5 s") << "-1.5s" << true << end - millis(1500);
    QTest::newRow("end") << "end" << true << end + 1;
    QTest::newRow("relative without a recording") << "-15m" << false << qint64(-1);
    QTest::newRow("garbage") << "yesterday" << true << qint64(-1);
    QTest::newRow("empty") << "" << true << qint64(-1);
    // Instants from 1970 to the end of 9999 only: -1e15 was 31,700 years before the epoch.
    QTest::newRow("epoch ms before 1970") << "-1e15" << false << qint64(-1);
    QTest::newRow("epoch ms past 9999") << "1e300" << false << qint64(-1);
    QTest::newRow("RFC 3339 before 1970") << "1969-07-20T20:17:40Z" << false << qint64(-1);
  }
  void timePoints() {
    QFETCH(QString, text);
    QFETCH(bool, relative);
    QFETCH(qint64, expected);
    const auto t = parseTimePoint(
        text.toStdString(), relative ? std::optional<Micros>(kT0 + seconds(3600)) : std::nullopt);
    if (expected < 0) {
      QVERIFY(!t);
      return;
    }
    QVERIFY(t);
    QCOMPARE(qint64(*t), expected);
    QCOMPARE(formatUtc(kT0), std::string("2025-11-30T05:20:00.000Z"));
  }
};

QTEST_GUILESS_MAIN(TstRecorder)
#include "tst_recorder.moc"
