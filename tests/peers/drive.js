// Drives the real opossum / cockatiel over call sequences with a fake clock and prints each
// breaker's state transitions, for tests/auto/export/tst_peers_node.cpp, which runs Spillway's
// emulations (docs/dialects.md) over the same sequences and compares.
//
// stdin: [{"lib": "opossum"|"cockatiel", "options": {...}, "calls": [{"t": ms, "latency": ms,
//          "fail": bool}, ...]}, ...]   (calls sorted by t)
// stdout: [[{"t": ms, "state": "OPEN"|"HALF_OPEN"|"CLOSED"}, ...], ...]
//
// Time: the fake clock starts at 0. Before a call at t, every timer due at or before t fires
// (fake-timer order: by time, then creation); the call then starts at t and its action settles
// at t + latency. The run ends when the last call has settled.
'use strict';
const FakeTimers = require('@sinonjs/fake-timers');

async function runCase(c) {
  const clock = FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
  const log = [];
  const note = (state) => log.push({ t: clock.now, state });
  try {
    const action = (latency, fail) =>
      new Promise((resolve, reject) =>
        setTimeout(() => (fail ? reject(new Error('boom')) : resolve('ok')), latency));
    let fire;
    const make = () => {
      if (c.lib === 'opossum') {
        const CircuitBreaker = require('opossum');
        const b = new CircuitBreaker(action, c.options);
        b.on('open', () => note('OPEN'));
        b.on('halfOpen', () => note('HALF_OPEN'));
        b.on('close', () => note('CLOSED'));
        fire = (lat, fail) => b.fire(lat, fail);
        return () => b.shutdown();
      }
      const ck = require('cockatiel');
      const o = c.options;
      let breaker;
      if (o.breaker.ConsecutiveBreaker !== undefined)
        breaker = new ck.ConsecutiveBreaker(o.breaker.ConsecutiveBreaker);
      else if (o.breaker.CountBreaker !== undefined)
        breaker = new ck.CountBreaker(o.breaker.CountBreaker);
      else breaker = new ck.SamplingBreaker(o.breaker.SamplingBreaker);
      const p = ck.circuitBreaker(ck.handleAll, { halfOpenAfter: o.halfOpenAfter, breaker });
      const names = { [ck.CircuitState.Closed]: 'CLOSED', [ck.CircuitState.Open]: 'OPEN',
                      [ck.CircuitState.HalfOpen]: 'HALF_OPEN', [ck.CircuitState.Isolated]: 'FORCED_OPEN' };
      p.onStateChange((s) => note(names[s]));
      fire = (lat, fail) => p.execute(() => action(lat, fail));
      return () => {};
    };
    let stop = null;
    let end = 0;
    const pending = [];
    for (const call of c.calls) {
      await clock.tickAsync(call.t - clock.now);
      if (!stop) stop = make();  // the breaker is created at the first call (as the emulation)
      pending.push(fire(call.latency, call.fail).catch(() => {}));
      end = Math.max(end, call.t + call.latency);
    }
    // Let every call settle (cockatiel waiters re-run after a half-open verdict).
    while (clock.now < end) await clock.tickAsync(Math.min(end - clock.now, 1));
    await clock.tickAsync(0);
    if (stop) stop();
  } finally {
    clock.uninstall();
  }
  return log;
}

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const cases = JSON.parse(input);
  const out = [];
  for (const c of cases) out.push(await runCase(c));
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(2);
});
