// The simulator's agenda (sim::EventQueue, and sim::Agenda with its calendar queue and timing
// wheel): events pop in (time, priority, insertion) order, so same-time events run by priority
// and, within one priority, first in first out — the order the simulator's determinism rests
// on. Checked on hand-made cases and against a reference (std::stable_sort by (time, priority)
// keeps insertion order among ties) on random workloads, with pushes and pops interleaved the
// way the simulator uses the queue — also while the agenda switches between calendar and
// wheel. And the instance queue (sim::BoundedFifo) against std::deque.
#include <QtTest>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "spillway/rng.hpp"
#include "spillway/sim/bounded_fifo.hpp"
#include "spillway/sim/event_queue.hpp"

using namespace spillway;
using sim::EventQueue;
using sim::SimEvent;

namespace {

// What a test pushed: `id` travels in the event's target field so a pop names its push.
struct Pushed {
  Micros time = 0;
  std::uint8_t priority = 0;
  std::uint32_t id = 0;
};

// The reference order: by (time, priority), ties in insertion order.
std::vector<std::uint32_t> referenceOrder(std::vector<Pushed> v) {
  std::stable_sort(v.begin(), v.end(), [](const Pushed& a, const Pushed& b) {
    return std::tie(a.time, a.priority) < std::tie(b.time, b.priority);
  });
  std::vector<std::uint32_t> ids;
  for (const Pushed& p : v) ids.push_back(p.id);
  return ids;
}

std::vector<std::uint32_t> drain(EventQueue& q) {
  std::vector<std::uint32_t> ids;
  while (!q.empty()) ids.push_back(q.pop().target);
  return ids;
}

}  // namespace

class TstSimEventQueue : public QObject {
  Q_OBJECT

 private slots:
  void emptyQueue();
  void handMadeOrder_data();
  void handMadeOrder();
  void fifoAmongEqualKeys_data();
  void fifoAmongEqualKeys();
  void carriesPayload();
  void randomAgainstStableSort_data();
  void randomAgainstStableSort();
  void randomInterleaved_data();
  void slotTreeAgainstScan_data();
  void slotTreeAgainstScan();
  void boundedFifoAgainstDeque_data();
  void boundedFifoAgainstDeque();
  void agendaAgainstReference_data();
  void agendaAgainstReference();
  void randomInterleaved();
};

void TstSimEventQueue::emptyQueue() {
  EventQueue q;
  QVERIFY(q.empty());
  QCOMPARE(q.size(), std::size_t{0});
  // An empty agenda has no next event: the simulator compares against kForever.
  QCOMPARE(q.nextTime(), kForever);
  q.push(5, 0, 0, 1);
  QVERIFY(!q.empty());
  QCOMPARE(q.nextTime(), Micros{5});
  q.pop();
  QVERIFY(q.empty());
  QCOMPARE(q.nextTime(), kForever);
  // The sequence counter counts every push, popped or not.
  QCOMPARE(q.pushed(), std::uint64_t{1});
}

void TstSimEventQueue::handMadeOrder_data() {
  QTest::addColumn<QList<qint64>>("times");
  QTest::addColumn<QList<int>>("priorities");
  QTest::addColumn<QList<int>>("expected");  // indices of the pushes, in pop order
  QTest::newRow("time decides first")
      << QList<qint64>{30, 10, 20} << QList<int>{0, 0, 0} << QList<int>{1, 2, 0};
  QTest::newRow("earlier time beats lower priority")
      << QList<qint64>{20, 10} << QList<int>{0, 255} << QList<int>{1, 0};
  QTest::newRow("same time: lower priority value first")
      << QList<qint64>{10, 10, 10, 10} << QList<int>{4, 0, 2, 1} << QList<int>{1, 3, 2, 0};
  QTest::newRow("same time and priority: insertion order")
      << QList<qint64>{7, 7, 7} << QList<int>{3, 3, 3} << QList<int>{0, 1, 2};
  QTest::newRow("mixed") << QList<qint64>{5, 1, 5, 1, 5} << QList<int>{1, 2, 0, 2, 1}
                         << QList<int>{1, 3, 2, 0, 4};
  // Extreme keys must not wrap: priority 255 sits in the top byte of the order word, kForever
  // is the largest time.
  QTest::newRow("extremes") << QList<qint64>{kForever, 0, kForever, 0} << QList<int>{0, 255, 255, 0}
                            << QList<int>{3, 1, 0, 2};
}

void TstSimEventQueue::handMadeOrder() {
  QFETCH(QList<qint64>, times);
  QFETCH(QList<int>, priorities);
  QFETCH(QList<int>, expected);
  EventQueue q;
  for (int i = 0; i < times.size(); ++i)
    q.push(times[i], static_cast<std::uint8_t>(priorities[i]), 0, static_cast<std::uint32_t>(i));
  QCOMPARE(q.size(), static_cast<std::size_t>(times.size()));
  QList<int> got;
  while (!q.empty()) {
    const Micros next = q.nextTime();
    const SimEvent e = q.pop();
    QCOMPARE(e.time, next);  // nextTime() is the time of what pop() returns
    got.push_back(static_cast<int>(e.target));
  }
  QCOMPARE(got, expected);
}

void TstSimEventQueue::fifoAmongEqualKeys_data() {
  QTest::addColumn<int>("count");
  // Sizes around the 4-ary heap's level boundaries (1, 5, 21, 85, 341 nodes).
  for (int n : {2, 4, 5, 6, 21, 22, 85, 86, 341, 1000}) QTest::addRow("%d events", n) << n;
}

void TstSimEventQueue::fifoAmongEqualKeys() {
  QFETCH(int, count);
  EventQueue q;
  for (int i = 0; i < count; ++i) q.push(42, 3, 0, static_cast<std::uint32_t>(i));
  const std::vector<std::uint32_t> got = drain(q);
  std::vector<std::uint32_t> want(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) want[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);
  QVERIFY(got == want);
}

void TstSimEventQueue::carriesPayload() {
  EventQueue q;
  q.push(100, 2, 7, 11, 13);
  q.push(50, 9, 8, 12);
  SimEvent a = q.pop();
  QCOMPARE(a.time, Micros{50});
  QCOMPARE(a.kind, 8u);
  QCOMPARE(a.target, 12u);
  QCOMPARE(a.gen, 0u);  // the default generation
  SimEvent b = q.pop();
  QCOMPARE(b.time, Micros{100});
  QCOMPARE(b.kind, 7u);
  QCOMPARE(b.target, 11u);
  QCOMPARE(b.gen, 13u);
  // The priority is kept in the top byte of the order word (documented layout).
  QCOMPARE(static_cast<int>(b.order >> 56), 2);
}

void TstSimEventQueue::randomAgainstStableSort_data() {
  QTest::addColumn<quint64>("seed");
  QTest::addColumn<int>("count");
  QTest::addColumn<int>("timeRange");  // few distinct times force many ties
  QTest::addColumn<int>("priorities");
  QTest::newRow("many ties") << quint64{1} << 5000 << 20 << 5;
  QTest::newRow("one time, all priorities") << quint64{2} << 3000 << 1 << 256;
  QTest::newRow("spread times") << quint64{3} << 20000 << 1000000 << 5;
  QTest::newRow("one priority") << quint64{4} << 4000 << 50 << 1;
}

void TstSimEventQueue::randomAgainstStableSort() {
  QFETCH(quint64, seed);
  QFETCH(int, count);
  QFETCH(int, timeRange);
  QFETCH(int, priorities);
  Rng rng(seed);
  EventQueue q;
  std::vector<Pushed> pushed;
  for (int i = 0; i < count; ++i) {
    Pushed p;
    p.time = static_cast<Micros>(rng.next() % static_cast<std::uint64_t>(timeRange));
    p.priority = static_cast<std::uint8_t>(rng.next() % static_cast<std::uint64_t>(priorities));
    p.id = static_cast<std::uint32_t>(i);
    pushed.push_back(p);
    q.push(p.time, p.priority, 0, p.id);
  }
  QCOMPARE(q.size(), static_cast<std::size_t>(count));
  QVERIFY(drain(q) == referenceOrder(pushed));
}

void TstSimEventQueue::randomInterleaved_data() {
  QTest::addColumn<quint64>("seed");
  QTest::addColumn<int>("operations");
  QTest::addColumn<int>("horizon");  // how far ahead of "now" new events are scheduled
  QTest::newRow("short horizon, many ties") << quint64{11} << 30000 << 3;
  QTest::newRow("long horizon") << quint64{12} << 30000 << 100000;
  QTest::newRow("same-time scheduling") << quint64{13} << 20000 << 0;
}

// As in the simulator: pop the next event, then schedule new ones at or after its time. The
// reference is the set of pending events keyed by (time, priority, push number).
void TstSimEventQueue::randomInterleaved() {
  QFETCH(quint64, seed);
  QFETCH(int, operations);
  QFETCH(int, horizon);
  Rng rng(seed);
  EventQueue q;
  std::map<std::tuple<Micros, int, std::uint32_t>, std::uint32_t> pending;
  std::uint32_t next = 0;
  Micros now = 0;
  auto push = [&](Micros t) {
    const int prio = static_cast<int>(rng.next() % 5);
    q.push(t, static_cast<std::uint8_t>(prio), 0, next);
    pending.emplace(std::make_tuple(t, prio, next), next);
    ++next;
  };
  for (int i = 0; i < 16; ++i) push(0);
  Micros lastTime = kNever;
  for (int op = 0; op < operations && !pending.empty(); ++op) {
    const std::uint32_t want = pending.begin()->second;
    const Micros wantTime = std::get<0>(pending.begin()->first);
    pending.erase(pending.begin());
    QCOMPARE(q.size(), pending.size() + 1);
    const SimEvent e = q.pop();
    QCOMPARE(e.target, want);
    QCOMPARE(e.time, wantTime);
    QVERIFY(e.time >= lastTime);  // simulated time never runs backwards
    lastTime = now = e.time;
    // 0..3 follow-ups (mean 1.5): the queue size wanders instead of growing without bound.
    const int follow = static_cast<int>(rng.next() % 4);
    for (int k = 0; k < follow; ++k)
      push(now + (horizon
                      ? static_cast<Micros>(rng.next() % static_cast<std::uint64_t>(horizon + 1))
                      : 0));
  }
  QVERIFY(next > static_cast<std::uint32_t>(operations / 2));  // the workload really ran
  QCOMPARE(q.size(), pending.size());
}

void TstSimEventQueue::agendaAgainstReference_data() {
  QTest::addColumn<quint64>("seed");
  QTest::addColumn<int>("wheelAt");  // 0 = the wheel from the start
  QTest::addColumn<int>("heapAt");
  QTest::addColumn<qint64>("horizon");  // µs ahead of "now"
  QTest::addColumn<bool>("mustSwitch");
  // Grains are 1.024 ms; level 0 spans 262 ms, level 1 67 s, level 2 4.8 h, level 3 51 days.
  QTest::newRow("wheel, ties within a grain") << quint64{21} << 0 << 0 << qint64{500} << false;
  QTest::newRow("wheel, one second") << quint64{22} << 0 << 0 << qint64{1000000} << false;
  QTest::newRow("wheel, hours") << quint64{23} << 0 << 0 << qint64{20000000000} << false;
  QTest::newRow("wheel, past 51 days (far heap)")
      << quint64{24} << 0 << 0 << qint64{10000000000000} << false;
  // The calendar alone (the wheel never starts): 16.384 ms grains, 4096 buckets = 67 s, a far
  // heap beyond.
  constexpr int kNever = 1 << 30;
  QTest::newRow("calendar, ties within a grain")
      << quint64{31} << kNever << 0 << qint64{5000} << false;
  QTest::newRow("calendar, one second") << quint64{32} << kNever << 0 << qint64{1000000} << false;
  QTest::newRow("calendar, past one turn (far heap)")
      << quint64{33} << kNever << 0 << qint64{200000000} << false;
  QTest::newRow("calendar, hours") << quint64{34} << kNever << 0 << qint64{20000000000} << false;
  QTest::newRow("switching, one second") << quint64{25} << 64 << 16 << qint64{1000000} << true;
  QTest::newRow("switching, hours") << quint64{26} << 64 << 16 << qint64{20000000000} << true;
  QTest::newRow("defaults") << quint64{27} << 4096 << 1024 << qint64{3000000} << true;
}

// Main-lane and arrival-lane events interleaved as in the simulator; the pending set first
// grows (1.5 follow-ups per pop), then drains (0.5), so the agenda crosses its thresholds both
// ways.
void TstSimEventQueue::agendaAgainstReference() {
  QFETCH(quint64, seed);
  QFETCH(int, wheelAt);
  QFETCH(int, heapAt);
  QFETCH(qint64, horizon);
  QFETCH(bool, mustSwitch);
  Rng rng(seed);
  sim::Agenda agenda(static_cast<std::size_t>(wheelAt), static_cast<std::size_t>(heapAt));
  std::map<std::tuple<Micros, int, std::uint32_t>, std::uint32_t> pending;
  std::uint32_t next = 0;  // event ids, carried in `gen`
  // Arrivals as in the simulator: one pending per client (11 clients: the slots grow past a
  // power of two). A popped arrival's client may schedule its next one first thing (the agenda
  // then reuses its slot), or later, or never.
  constexpr std::uint32_t kClients = 11;
  std::vector<bool> clientBusy(kClients, false);
  auto pushEvent = [&](Micros t, std::int64_t client) {
    const int prio = static_cast<int>(rng.next() % 5);
    if (client >= 0) {
      const auto c = static_cast<std::uint32_t>(client);
      agenda.pushArrival(t, static_cast<std::uint8_t>(prio), 1, c, next);  // kind 1: arrival
      clientBusy[c] = true;
    } else {
      agenda.push(t, static_cast<std::uint8_t>(prio), 0, next, next);
    }
    pending.emplace(std::make_tuple(t, prio, next), next);
    ++next;
  };
  auto push = [&](Micros t) {
    std::int64_t client = -1;
    if (rng.next() % 3 == 0) {
      const auto c = static_cast<std::uint32_t>(rng.next() % kClients);
      if (!clientBusy[c]) client = c;
    }
    pushEvent(t, client);
  };
  for (int i = 0; i < 32; ++i) push(static_cast<Micros>(rng.next() % 1000));
  const int grow = wheelAt > 0 && wheelAt < 100000 ? 3 * wheelAt + 2000 : 6000;
  bool sawWheel = agenda.wheelMode(), sawHeapAfterWheel = false;
  Micros now = 0;
  int arrivalsPopped = 0;
  for (int op = 0; !pending.empty(); ++op) {
    const auto [key, want] = *pending.begin();
    pending.erase(pending.begin());
    SimEvent e;
    const sim::Agenda::Lane lane = agenda.popDue(kForever, e);
    QVERIFY(lane != sim::Agenda::kNoEvent);
    QCOMPARE(lane == sim::Agenda::kArrivalLane,
             e.kind == 1);  // arrivals, and only they, ride there
    QCOMPARE(e.gen, want);
    QCOMPARE(e.time, std::get<0>(key));
    QCOMPARE(agenda.size(), pending.size());
    now = e.time;
    sawHeapAfterWheel = sawHeapAfterWheel || (sawWheel && !agenda.wheelMode());
    sawWheel = sawWheel || agenda.wheelMode();
    if (e.kind == 1) {
      QVERIFY(clientBusy[e.target]);
      ++arrivalsPopped;
      clientBusy[e.target] = false;
      if (rng.next() % 4 != 0 && op < grow)  // the client's next arrival, first thing
        pushEvent(now + static_cast<Micros>(rng.next() % 2000), e.target);
    }
    const int follow = static_cast<int>(rng.next() % (op < grow ? 4 : 2));
    for (int k = 0; k < follow; ++k) {
      // Mostly spread over the horizon; some at "now" (same-grain ties).
      const bool same = rng.next() % 4 == 0;
      push(now +
           (same ? 0 : static_cast<Micros>(rng.next() % static_cast<std::uint64_t>(horizon))));
    }
  }
  QVERIFY(arrivalsPopped > 80);  // the arrival lane really ran (its slots reused, cleared)
  QVERIFY(agenda.empty());
  QVERIFY(next > 3000u);  // the workload really ran
  SimEvent none;
  QCOMPARE(agenda.popDue(kForever, none), sim::Agenda::kNoEvent);
  if (mustSwitch) {
    QVERIFY2(sawWheel, "the pending set never grew past the wheel's threshold");
    QVERIFY2(sawHeapAfterWheel, "the agenda never went back to the heap");
  } else if (wheelAt == 0) {
    QVERIFY(agenda.wheelMode());
  } else {
    QVERIFY(!sawWheel);  // the calendar rows ran on the calendar alone
  }
}

void TstSimEventQueue::slotTreeAgainstScan_data() {
  QTest::addColumn<int>("slotCount");
  QTest::newRow("one") << 1;
  QTest::newRow("two") << 2;
  QTest::newRow("eleven: grows past powers of two") << 11;
  QTest::newRow("a hundred") << 100;
}

// The arrival lane's winner tree: after every set or clear, its top is the earliest pending
// event by (time, priority, sequence), found by scanning every slot. Slots are used in a random
// order, so the tree grows while some slots are pending and others were cleared.
void TstSimEventQueue::slotTreeAgainstScan() {
  QFETCH(int, slotCount);
  const auto n = static_cast<std::uint32_t>(slotCount);
  sim::SlotTree tree;
  std::map<std::uint32_t, SimEvent> ref;
  Rng rng(static_cast<std::uint64_t>(slotCount) + 17);
  std::uint64_t seq = 0;
  for (int op = 0; op < 20000; ++op) {
    const auto slot = static_cast<std::uint32_t>(rng.next() % n);
    if (rng.next() % 3 != 0) {
      // Few distinct times: ties are decided by priority, then sequence.
      const SimEvent e{static_cast<Micros>(rng.next() % 50),
                       sim::EventQueue::order(static_cast<std::uint8_t>(rng.next() % 3), seq++),
                       0,
                       slot,
                       0,
                       0};
      tree.set(slot, e);
      ref[slot] = e;
    } else {
      tree.clear(slot);
      ref.erase(slot);
    }
    QCOMPARE(tree.size(), ref.size());
    QCOMPARE(tree.occupied(slot), ref.count(slot) == 1);
    if (ref.empty()) continue;
    auto best = ref.begin();
    for (auto it = ref.begin(); it != ref.end(); ++it)
      if (sim::EventQueue::before(it->second, best->second)) best = it;
    QCOMPARE(tree.topSlot(), best->first);
    QCOMPARE(tree.top().order, best->second.order);
  }
}

void TstSimEventQueue::boundedFifoAgainstDeque_data() {
  QTest::addColumn<int>("bound");
  QTest::newRow("no places") << 0;
  QTest::newRow("one place") << 1;
  QTest::newRow("below the first buffer") << 10;
  QTest::newRow("a power of two") << 64;
  QTest::newRow("grows several times, odd bound") << 1000;
}

// The instance queue: FIFO order, the bound, and a buffer that grows only with the contents
// (wrapped around when it grows), against std::deque.
void TstSimEventQueue::boundedFifoAgainstDeque() {
  QFETCH(int, bound);
  const auto cap = static_cast<std::size_t>(bound);
  sim::BoundedFifo<std::uint32_t> q(cap);
  std::deque<std::uint32_t> ref;
  Rng rng(static_cast<std::uint64_t>(bound) + 3);
  std::uint32_t next = 0;
  std::size_t peak = 0;
  for (int op = 0; op < 20000; ++op) {
    // Mostly filling for the first half, mostly draining after: the queue wraps and grows.
    const bool fill = rng.uniform() < (op < 10000 ? 0.7 : 0.3);
    if (fill) {
      QCOMPARE(q.full(), ref.size() >= cap);
      if (q.full()) continue;
      q.push(next);
      ref.push_back(next++);
    } else if (!ref.empty()) {
      QCOMPARE(q.pop(), ref.front());
      ref.pop_front();
    }
    QCOMPARE(q.size(), ref.size());
    if (!ref.empty()) {
      const std::size_t i = static_cast<std::size_t>(rng.next() % ref.size());
      QCOMPARE(q.at(i), ref[i]);
    }
    peak = std::max(peak, ref.size());
  }
  QCOMPARE(peak, cap);  // the bound was reached: the workload really filled the queue
  QVERIFY(q.allocated() >= cap);
  QVERIFY(q.allocated() <= std::max<std::size_t>(16, std::bit_ceil(std::max<std::size_t>(cap, 1))));
  // Memory follows the contents: a queue of ten million places that holds three allocates 16.
  sim::BoundedFifo<std::uint32_t> big(10'000'000);
  for (std::uint32_t k = 0; k < 3; ++k) big.push(k);
  QCOMPARE(big.allocated(), std::size_t{16});
}

QTEST_GUILESS_MAIN(TstSimEventQueue)
#include "tst_sim_event_queue.moc"
