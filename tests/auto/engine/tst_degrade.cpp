// The degrade router's decisions (engine/src/degrade.cpp), as pure functions of the policy:
//  - plan(): which backups are eligible for a request (covers its tags, quality within
//    max_quality_drop of the primary, has a profile, is not the primary), in which order
//    (the explicit chain as written, else quality desc → tier asc → name asc), and what
//    happens to a context longer than a backup's window (trimmed to the window, or skipped);
//  - lastResort(): cache hit, fast-fail for non-critical traffic, static answer, nothing;
//  - the degrade lock: a locked session stays on its route until the TTL, then expires.
// Each row builds its own router, so the counters are those of a single plan().
#include <QtTest>

#include <cstdint>
#include <string>
#include <vector>

#include "spillway/degrade.hpp"
#include "spillway/policy.hpp"

using namespace spillway;

namespace {

ModelProfile profile(int tier, double quality, std::uint32_t context,
                     std::vector<std::string> tags) {
  ModelProfile p;
  p.tier = tier;
  p.quality = quality;
  p.context = context;
  p.tags = std::move(tags);
  return p;
}

// The caller's models, deliberately NOT in the automatic order (so the sort is what puts
// them in order) and with one model that has no profile.
const std::vector<std::string> kModels = {"noprof", "small",  "beta", "alpha",
                                          "mid",    "vision", "big"};

// Automatic order of the profiled models: big (0.95), vision (0.90), then three at 0.85 —
// mid (tier 2) before alpha and beta (tier 3, although "alpha" < "mid"), alpha before beta
// (same quality and tier: by name) — then small (0.70).
Policy fixture(double maxDrop, ContextOverflow overflow,
               const std::vector<std::string>& bigChain = {}) {
  Policy p;
  p.models["big"] = profile(1, 0.95, 32768, {"chat", "code", "reasoning"});
  p.models["vision"] = profile(2, 0.90, 0, {"chat", "vision"});  // context 0: unlimited
  p.models["mid"] = profile(2, 0.85, 16384, {"chat", "code"});
  p.models["alpha"] = profile(3, 0.85, 8192, {"chat"});
  p.models["beta"] = profile(3, 0.85, 8192, {"chat"});
  p.models["small"] = profile(3, 0.70, 4096, {"chat"});
  p.degrade.enabled = true;
  p.degrade.maxQualityDrop = maxDrop;
  p.degrade.contextOverflow = overflow;
  if (!bigChain.empty()) p.degrade.chains["big"] = bigChain;
  return p;
}

ModelId idOf(const std::string& name) {
  for (ModelId m = 0; m < kModels.size(); ++m)
    if (kModels[m] == name) return m;
  qFatal("unknown model %s", name.c_str());
  return 0;
}

std::vector<std::string> toStd(const QStringList& l) {
  std::vector<std::string> v;
  for (const QString& s : l) v.push_back(s.toStdString());
  return v;
}

// "vision mid alpha@8192": the plan as text, trimmed steps with their window.
QString planText(const DegradeRouter& r, const std::vector<RouteStep>& plan) {
  QStringList parts;
  for (const RouteStep& s : plan) {
    if (s.model == RouteStep::kCache) {
      parts << QStringLiteral("cache");
      continue;
    }
    QString p = QString::fromStdString(r.modelName(s.model));
    if (s.trimmedTo) p += QStringLiteral("@%1").arg(s.trimmedTo);
    parts << p;
  }
  return parts.join(QLatin1Char(' '));
}

}  // namespace

Q_DECLARE_METATYPE(spillway::LastResort)

class TstDegrade : public QObject {
  Q_OBJECT

 private slots:
  void profilesResolved();
  void plan_data();
  void plan();
  void planClearsOutputAndRepeats();
  void slaClassPlan_data();
  void slaClassPlan();
  void slaClassCache();
  void lastResort_data();
  void lastResort();
  void lastResortNames();
  void lockExpiry_data();
  void lockExpiry();
  void lockCountsAndRelock();
  void relockSameRouteNotRenewed();
  void lockPerSession();
  void lockDisabled();
  void lockTableSwept();
};

void TstDegrade::profilesResolved() {
  DegradeRouter r(fixture(0.3, ContextOverflow::Trim), kModels);
  QVERIFY(r.enabled());
  QCOMPARE(r.modelCount(), kModels.size());
  for (ModelId m = 0; m < kModels.size(); ++m) QCOMPARE(r.modelName(m), kModels[m]);
  // A model of the caller without a profile can be a primary but is never a backup.
  QVERIFY(r.profile(idOf("noprof")) == nullptr);
  QVERIFY(r.profile(idOf("mid")) != nullptr);
  QCOMPARE(r.profile(idOf("mid"))->context, 16384u);
  // Tags map to stable bits; an unknown tag gets its own bit (so nothing covers it).
  const TagMask chat = r.tagMask({"chat"}), code = r.tagMask({"code"});
  QVERIFY(chat != 0 && code != 0 && chat != code);
  QCOMPARE(r.tagMask({"chat", "code"}), chat | code);
  QCOMPARE(r.tagMask({"code", "chat"}), chat | code);
  const TagMask audio = r.tagMask({"audio"});
  QCOMPARE(audio & (chat | code | r.tagMask({"reasoning", "vision"})), TagMask{0});
  QCOMPARE(r.tagMask({}), TagMask{0});
}

void TstDegrade::plan_data() {
  QTest::addColumn<QString>("primary");
  QTest::addColumn<QStringList>("tags");
  QTest::addColumn<quint32>("context");
  QTest::addColumn<double>("maxDrop");
  QTest::addColumn<bool>("skip");          // context_overflow: skip (else trim)
  QTest::addColumn<QStringList>("chain");  // explicit chain for "big"; empty = automatic
  QTest::addColumn<QString>("expected");   // backups in order; name@N = trimmed to N
  QTest::addColumn<int>("ineligible");     // chain members refused (tags, quality, profile)
  QTest::addColumn<int>("trimmed");
  QTest::addColumn<int>("skipped");
  const QStringList chat{"chat"}, none;

  // --- Eligibility and automatic order.
  QTest::newRow("auto order: quality, tier, name") << "big" << chat << 1000u << 0.3 << false << none
                                                   << "vision mid alpha beta small" << 0 << 0 << 0;
  QTest::newRow("tags not covered: chat+code") << "big" << QStringList{"chat", "code"} << 1000u
                                               << 0.3 << false << none << "mid" << 4 << 0 << 0;
  QTest::newRow("tag only the primary covers")
      << "big" << QStringList{"reasoning"} << 1000u << 0.3 << false << none << "" << 5 << 0 << 0;
  QTest::newRow("tag nobody covers") << "big" << QStringList{"chat", "audio"} << 1000u << 0.3
                                     << false << none << "" << 5 << 0 << 0;
  QTest::newRow("no tags needed") << "big" << none << 1000u << 0.3 << false << none
                                  << "vision mid alpha beta small" << 0 << 0 << 0;
  // Floor = primary quality − max drop; a backup exactly at the floor is eligible.
  QTest::newRow("quality drop beyond max (0.1)")
      << "big" << chat << 1000u << 0.1 << false << none << "vision mid alpha beta" << 1 << 0 << 0;
  QTest::newRow("quality drop exactly at max (0.25)")
      << "big" << chat << 1000u << 0.25 << false << none << "vision mid alpha beta small" << 0 << 0
      << 0;
  QTest::newRow("quality drop just beyond max (0.24)")
      << "big" << chat << 1000u << 0.24 << false << none << "vision mid alpha beta" << 1 << 0 << 0;
  QTest::newRow("max drop 0: only as good or better")
      << "big" << chat << 1000u << 0.0 << false << none << "" << 5 << 0 << 0;
  // Without a profile for the primary, quality cannot be compared: tags alone decide.
  QTest::newRow("primary without profile") << "noprof" << chat << 1000u << 0.0 << false << none
                                           << "big vision mid alpha beta small" << 0 << 0 << 0;
  // The primary is never its own backup; a better model may back up a weaker one.
  QTest::newRow("primary itself excluded") << "mid" << chat << 1000u << 0.2 << false << none
                                           << "big vision alpha beta small" << 0 << 0 << 0;

  // --- Explicit chains: their order, not the automatic one; same eligibility rules.
  QTest::newRow("explicit chain order kept")
      << "big" << chat << 1000u << 0.3 << false << QStringList{"small", "mid"} << "small mid" << 0
      << 0 << 0;
  QTest::newRow("explicit chain: ineligible dropped")
      << "big" << QStringList{"chat", "code"} << 1000u << 0.3 << false
      << QStringList{"alpha", "mid", "small"} << "mid" << 2 << 0 << 0;
  QTest::newRow("explicit chain: no profile, no backup")
      << "big" << chat << 1000u << 0.3 << false << QStringList{"noprof", "mid"} << "mid" << 1 << 0
      << 0;
  QTest::newRow("explicit chain: quality floor applies")
      << "big" << chat << 1000u << 0.1 << false << QStringList{"small", "alpha"} << "alpha" << 1
      << 0 << 0;
  QTest::newRow("explicit chain naming the primary")
      << "big" << chat << 1000u << 0.3 << false << QStringList{"big", "mid"} << "mid" << 0 << 0
      << 0;
  QTest::newRow("explicit chain naming an unknown model")
      << "big" << chat << 1000u << 0.3 << false << QStringList{"ghost", "mid"} << "mid" << 0 << 0
      << 0;
  // A chain for "big" does not change the automatic order of another primary.
  QTest::newRow("other primary keeps auto order")
      << "mid" << chat << 1000u << 0.2 << false << QStringList{"small"}
      << "big vision alpha beta small" << 0 << 0 << 0;

  // --- Context windows: a context equal to the window fits; one token more is trimmed to
  // the window (trim) or the model is skipped (skip). Window 0 = unlimited.
  QTest::newRow("context fits every window") << "big" << chat << 4096u << 0.3 << false << none
                                             << "vision mid alpha beta small" << 0 << 0 << 0;
  QTest::newRow("context one over the smallest")
      << "big" << chat << 4097u << 0.3 << false << none << "vision mid alpha beta small@4096" << 0
      << 1 << 0;
  QTest::newRow("context over: trim")
      << "big" << chat << 10000u << 0.3 << false << none
      << "vision mid alpha@8192 beta@8192 small@4096" << 0 << 3 << 0;
  QTest::newRow("context over: skip")
      << "big" << chat << 10000u << 0.3 << true << none << "vision mid" << 0 << 0 << 3;
  QTest::newRow("huge context: trim")
      << "big" << chat << 1000000u << 0.3 << false << none
      << "vision mid@16384 alpha@8192 beta@8192 small@4096" << 0 << 4 << 0;
  QTest::newRow("huge context: skip, unlimited window only")
      << "big" << chat << 1000000u << 0.3 << true << none << "vision" << 0 << 0 << 4;
  // Ineligible models are refused before their window is looked at.
  QTest::newRow("skip counts only eligible") << "big" << QStringList{"chat", "code"} << 10000u
                                             << 0.3 << true << none << "mid" << 4 << 0 << 0;
}

// SLA classes (seed 001, 3.1): a class's `degrade_to` replaces the chain (the cache where it
// is listed), its quality drop replaces the policy's; without a list the chain is kept and
// only the drop changes; the primary itself is never a step.
void TstDegrade::slaClassPlan_data() {
  QTest::addColumn<QString>("cls");
  QTest::addColumn<QString>("expected");
  QTest::newRow("no class: the policy's chain, drop 0.3") << ""
                                                          << "vision mid alpha beta small";
  QTest::newRow("core: its list, drop 0.05 keeps vision only") << "core"
                                                               << "vision cache";
  QTest::newRow("important: its list in its order") << "important"
                                                    << "alpha cache mid";
  QTest::newRow("fallback: the cache alone") << "fallback"
                                             << "cache";
  QTest::newRow("strict: no list, drop 0.1") << "strict"
                                             << "vision mid alpha beta";
  QTest::newRow("tight: no list, drop 0.06") << "tight"
                                             << "vision";
  QTest::newRow("self: the primary in the list is skipped") << "self"
                                                            << "small";
}

static Policy classFixture() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  auto cls = [&](const char* name, double drop, std::vector<std::string> to) {
    SlaClass k;
    k.availability = 0.99;
    k.latency = millis(800);
    k.maxQualityDrop = drop;
    k.degradeTo = std::move(to);
    p.slaClasses[name] = std::move(k);
  };
  cls("core", 0.05, {"vision", "cache", "small"});
  cls("important", -1, {"alpha", "cache", "mid"});
  cls("fallback", -1, {"cache"});
  cls("strict", 0.1, {});
  cls("tight", 0.06, {});
  cls("self", -1, {"big", "small"});
  return p;
}

void TstDegrade::slaClassPlan() {
  QFETCH(QString, cls);
  QFETCH(QString, expected);
  DegradeRouter r(classFixture(), kModels);
  const int k = cls.isEmpty() ? -1 : r.slaClass(cls.toStdString());
  QVERIFY(cls.isEmpty() || k >= 0);
  std::vector<RouteStep> out;
  const TagMask chat = r.tagMask({"chat"});
  r.plan(idOf("big"), chat, 1000, out, k);
  QCOMPARE(planText(r, out), expected);
  // Twice: the per-class cache of eligible backups gives the same plan.
  r.plan(idOf("big"), chat, 1000, out, k);
  QCOMPARE(planText(r, out), expected);
}

// Where the cache may still come after the plan: anywhere without a class list, never after a
// list (it said where the cache goes); and whether the class may use it at all.
void TstDegrade::slaClassCache() {
  DegradeRouter r(classFixture(), kModels);
  QCOMPARE(r.slaClass("nope"), -1);
  QVERIFY(r.cacheAfterPlan(-1));
  QVERIFY(r.cacheAllowed(-1));
  QVERIFY(r.cacheAfterPlan(r.slaClass("strict")));
  QVERIFY(!r.cacheAfterPlan(r.slaClass("core")));
  QVERIFY(r.cacheAllowed(r.slaClass("core")));
  QVERIFY(!r.cacheAllowed(r.slaClass("self")));  // a list without the cache excludes it
}

void TstDegrade::plan() {
  QFETCH(QString, primary);
  QFETCH(QStringList, tags);
  QFETCH(quint32, context);
  QFETCH(double, maxDrop);
  QFETCH(bool, skip);
  QFETCH(QStringList, chain);
  QFETCH(QString, expected);
  QFETCH(int, ineligible);
  QFETCH(int, trimmed);
  QFETCH(int, skipped);

  DegradeRouter r(
      fixture(maxDrop, skip ? ContextOverflow::Skip : ContextOverflow::Trim, toStd(chain)),
      kModels);
  const TagMask mask = r.tagMask(toStd(tags));
  std::vector<RouteStep> out;
  r.plan(idOf(primary.toStdString()), mask, context, out);
  QCOMPARE(planText(r, out), expected);
  for (const RouteStep& s : out) QVERIFY(s.model != idOf(primary.toStdString()));
  const DegradeCounters& c = r.counters();
  QCOMPARE(c.planned, std::uint64_t{1});
  QCOMPARE(c.ineligible, std::uint64_t(ineligible));
  QCOMPARE(c.trimmed, std::uint64_t(trimmed));
  QCOMPARE(c.skippedForContext, std::uint64_t(skipped));
}

// plan() writes a fresh list (no leftovers from the caller's vector) and is a pure function
// of its inputs: the same request planned twice gives the same list, counters add up.
void TstDegrade::planClearsOutputAndRepeats() {
  DegradeRouter r(fixture(0.3, ContextOverflow::Trim), kModels);
  std::vector<RouteStep> out{{idOf("big"), 1}, {idOf("big"), 2}};
  const TagMask chat = r.tagMask({"chat"});
  r.plan(idOf("big"), chat, 10000, out);
  const QString first = planText(r, out);
  QCOMPARE(first, QStringLiteral("vision mid alpha@8192 beta@8192 small@4096"));
  r.plan(idOf("big"), chat, 10000, out);
  QCOMPARE(planText(r, out), first);
  QCOMPARE(r.counters().planned, std::uint64_t{2});
  QCOMPARE(r.counters().trimmed, std::uint64_t{6});
}

void TstDegrade::lastResort_data() {
  QTest::addColumn<bool>("cache");     // degrade.cache.enabled
  QTest::addColumn<bool>("fastFail");  // degrade.fast_fail_non_critical
  QTest::addColumn<bool>("staticOn");  // degrade.static_answer
  QTest::addColumn<bool>("critical");  // the request is core traffic
  QTest::addColumn<bool>("hit");       // a fresh cached answer exists
  QTest::addColumn<LastResort>("expected");
  // A cache hit wins whenever the cache is on, for any traffic.
  QTest::newRow("cache hit, critical") << true << true << true << true << true << LastResort::Cache;
  QTest::newRow("cache hit, non-critical")
      << true << true << true << false << true << LastResort::Cache;
  QTest::newRow("cache hit, static off")
      << true << false << false << true << true << LastResort::Cache;
  // A hit does not count when the cache is off.
  QTest::newRow("cache off, hit ignored")
      << false << true << true << true << true << LastResort::Static;
  // All tiers down, no cached answer: critical gets the static answer, non-critical fails
  // fast (never a hard switch to an unsuitable model).
  QTest::newRow("miss, critical → static")
      << true << true << true << true << false << LastResort::Static;
  QTest::newRow("miss, non-critical → fast-fail")
      << true << true << true << false << false << LastResort::FastFail;
  QTest::newRow("non-critical, fast-fail off → static")
      << true << false << true << false << false << LastResort::Static;
  // No static answer configured: nothing left.
  QTest::newRow("critical, static off → no backup")
      << true << true << false << true << false << LastResort::NoBackup;
  QTest::newRow("non-critical, fast-fail and static off → no backup")
      << false << false << false << false << false << LastResort::NoBackup;
  // Fast-fail is for non-critical traffic only, also when static is off.
  QTest::newRow("non-critical, static off → fast-fail")
      << false << true << false << false << false << LastResort::FastFail;
}

void TstDegrade::lastResort() {
  QFETCH(bool, cache);
  QFETCH(bool, fastFail);
  QFETCH(bool, staticOn);
  QFETCH(bool, critical);
  QFETCH(bool, hit);
  QFETCH(LastResort, expected);
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.cache = cache;
  p.degrade.fastFailNonCritical = fastFail;
  p.degrade.staticAnswer = staticOn;
  const DegradeRouter r(p, kModels);
  const LastResort got = r.lastResort(critical, hit);
  QVERIFY2(got == expected, qPrintable(QStringLiteral("got %1, expected %2")
                                           .arg(QLatin1String(lastResortName(got)))
                                           .arg(QLatin1String(lastResortName(expected)))));
}

void TstDegrade::lastResortNames() {
  QCOMPARE(lastResortName(LastResort::Cache), std::string_view("cache"));
  QCOMPARE(lastResortName(LastResort::FastFail), std::string_view("fast_fail"));
  QCOMPARE(lastResortName(LastResort::Static), std::string_view("static"));
  QCOMPARE(lastResortName(LastResort::NoBackup), std::string_view("no_backup"));
}

void TstDegrade::lockExpiry_data() {
  QTest::addColumn<qint64>("ttl");
  QTest::addColumn<qint64>("query");  // when locked() is asked, relative to the lock
  QTest::addColumn<bool>("held");
  // The lock holds on [t, t + ttl): at t + ttl it has expired.
  for (qint64 ttl : {millis(1), seconds(5), seconds(300)}) {
    const QString t = QString::number(ttl / 1000.0) + QStringLiteral(" ms");
    QTest::addRow("ttl %s, at lock", qPrintable(t)) << ttl << qint64{0} << true;
    QTest::addRow("ttl %s, 1 us before expiry", qPrintable(t)) << ttl << ttl - 1 << true;
    QTest::addRow("ttl %s, at expiry", qPrintable(t)) << ttl << ttl << false;
    QTest::addRow("ttl %s, after expiry", qPrintable(t)) << ttl << ttl + seconds(1) << false;
  }
}

void TstDegrade::lockExpiry() {
  QFETCH(qint64, ttl);
  QFETCH(qint64, query);
  QFETCH(bool, held);
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lockTtl = ttl;
  DegradeRouter r(p, kModels);
  const Micros t0 = seconds(1000);
  const std::uint64_t session = 0x8f2a;
  r.lock(session, static_cast<std::int32_t>(idOf("mid")), t0);
  QCOMPARE(r.lockedSessions(), std::size_t{1});
  QCOMPARE(r.counters().locksTaken, std::uint64_t{1});
  const DegradeLock* l = r.locked(session, t0 + query);
  QCOMPARE(l != nullptr, held);
  if (held) {
    QCOMPARE(l->route, static_cast<std::int32_t>(idOf("mid")));
    QCOMPARE(l->until, t0 + ttl);
    QCOMPARE(r.counters().lockHits, std::uint64_t{1});
    QCOMPARE(r.counters().lockExpired, std::uint64_t{0});
    QCOMPARE(r.lockedSessions(), std::size_t{1});
  } else {
    // An expired lock is dropped when found, counted as expired, not as a hit; asking
    // again finds nothing and counts nothing.
    QCOMPARE(r.counters().lockHits, std::uint64_t{0});
    QCOMPARE(r.counters().lockExpired, std::uint64_t{1});
    QCOMPARE(r.lockedSessions(), std::size_t{0});
    QVERIFY(r.locked(session, t0 + query) == nullptr);
    QCOMPARE(r.counters().lockExpired, std::uint64_t{1});
  }
}

// Every lookup of a live lock is a hit; locking again moves the route and restarts the TTL;
// release() ends it at once.
void TstDegrade::lockCountsAndRelock() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lockTtl = seconds(10);
  DegradeRouter r(p, kModels);
  const std::uint64_t s = 42;
  QVERIFY(r.locked(s, 0) == nullptr);  // never locked: no hit
  QCOMPARE(r.counters().lockHits, std::uint64_t{0});
  r.lock(s, static_cast<std::int32_t>(idOf("mid")), seconds(1));
  for (int k = 0; k < 7; ++k) QVERIFY(r.locked(s, seconds(1) + seconds(k)) != nullptr);
  QCOMPARE(r.counters().lockHits, std::uint64_t{7});
  // Re-lock at 8 s to the static answer: the route changes, the TTL restarts from 8 s, so
  // the lock outlives its first expiry (11 s) and ends at 18 s.
  r.lock(s, DegradeLock::kStatic, seconds(8));
  QCOMPARE(r.counters().locksTaken, std::uint64_t{2});
  QCOMPARE(r.lockedSessions(), std::size_t{1});
  const DegradeLock* l = r.locked(s, seconds(12));
  QVERIFY(l != nullptr);
  QCOMPARE(l->route, DegradeLock::kStatic);
  QCOMPARE(l->until, seconds(18));
  QVERIFY(r.locked(s, seconds(18)) == nullptr);
  // release() is immediate.
  r.lock(s, DegradeLock::kCache, seconds(20));
  r.release(s);
  QVERIFY(r.locked(s, seconds(20)) == nullptr);
  QCOMPARE(r.lockedSessions(), std::size_t{0});
}

// A session that keeps degrading onto the route it is locked to must still get back to the
// primary one TTL after it was first degraded: the same route does not renew a live lock.
void TstDegrade::relockSameRouteNotRenewed() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lockTtl = seconds(10);
  DegradeRouter r(p, kModels);
  const std::uint64_t s = 9;
  r.lock(s, DegradeLock::kStatic, 0);
  for (Micros t = seconds(1); t < seconds(10); t += seconds(1)) r.lock(s, DegradeLock::kStatic, t);
  QCOMPARE(r.counters().locksTaken, std::uint64_t{1});
  QCOMPARE(r.locked(s, seconds(9))->until, seconds(10));
  QVERIFY(r.locked(s, seconds(10)) == nullptr);
  // Once expired, the same route locks again, for a fresh TTL.
  r.lock(s, DegradeLock::kStatic, seconds(11));
  QCOMPARE(r.counters().locksTaken, std::uint64_t{2});
  QCOMPARE(r.locked(s, seconds(11))->until, seconds(21));
  // Another route does take a new lock at once.
  r.lock(s, static_cast<std::int32_t>(idOf("mid")), seconds(12));
  QCOMPARE(r.counters().locksTaken, std::uint64_t{3});
  QCOMPARE(r.locked(s, seconds(12))->until, seconds(22));
}

// Locks are per session: one session's lock neither covers nor ends another's.
void TstDegrade::lockPerSession() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lockTtl = seconds(10);
  DegradeRouter r(p, kModels);
  r.lock(1, static_cast<std::int32_t>(idOf("mid")), 0);
  r.lock(2, static_cast<std::int32_t>(idOf("small")), seconds(5));
  QVERIFY(r.locked(3, seconds(1)) == nullptr);
  QCOMPARE(r.locked(1, seconds(6))->route, static_cast<std::int32_t>(idOf("mid")));
  QCOMPARE(r.locked(2, seconds(6))->route, static_cast<std::int32_t>(idOf("small")));
  QVERIFY(r.locked(1, seconds(10)) == nullptr);  // session 1 expires at 10 s ...
  QVERIFY(r.locked(2, seconds(10)) != nullptr);  // ... session 2 only at 15 s
  QCOMPARE(r.counters().lockHits, std::uint64_t{3});
}

// degrade.lock.enabled: false — nothing is ever locked, nothing counted.
void TstDegrade::lockDisabled() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lock = false;
  DegradeRouter r(p, kModels);
  r.lock(7, static_cast<std::int32_t>(idOf("mid")), 0);
  QCOMPARE(r.lockedSessions(), std::size_t{0});
  QVERIFY(r.locked(7, 1) == nullptr);
  QCOMPARE(r.counters().locksTaken, std::uint64_t{0});
  QCOMPARE(r.counters().lockHits, std::uint64_t{0});
}

// Sessions that never come back must not keep their locks for ever: taking a lock sweeps
// the expired ones once per TTL, so the table holds at most the sessions locked within the
// last two TTLs.
void TstDegrade::lockTableSwept() {
  Policy p = fixture(0.3, ContextOverflow::Trim);
  p.degrade.lockTtl = seconds(10);
  DegradeRouter r(p, kModels);
  std::uint64_t session = 0;
  std::size_t maxSize = 0;
  // 100 new sessions per second for 60 s, none ever looked up again.
  for (Micros t = 0; t < seconds(60); t += millis(10)) {
    r.lock(++session, static_cast<std::int32_t>(idOf("mid")), t);
    maxSize = std::max(maxSize, r.lockedSessions());
  }
  QCOMPARE(r.counters().locksTaken, session);
  // 2 TTLs × 100/s = 2000 at most (sweeps happen every TTL, each keeps the live TTL's worth).
  QVERIFY2(maxSize <= 2000, qPrintable(QStringLiteral("table grew to %1").arg(maxSize)));
  QVERIFY(r.lockedSessions() <= 2000);
  // The first sweep is at 10 s: at 10 s − 10 ms nothing has been swept yet.
  QVERIFY(maxSize >= 1000);
}

QTEST_GUILESS_MAIN(TstDegrade)
#include "tst_degrade.moc"
