#!/usr/bin/env python3
"""The plain queueing network of bench_sim's BM_PlainQueue20x8, in SimPy.

Poisson arrivals from one client; 20 instances with 8 slots each and a FIFO queue per instance;
the gateway sends each request to the instance with the fewest outstanding requests (in service
+ queued), ties broken round robin from a rotating start, as Spillway's least-outstanding
routing does; lognormal service time (mean 1 s, sigma 0.5); no faults, retries, timeouts or
errors. Arrivals stop at --duration; the run ends when the last request is served.

Prints the wall-clock throughput (original requests per wall second, the number bench_sim's
items_per_second is compared with) and the statistics that check the two models against each
other: utilization, mean wait for a slot, mean queue length, response-time quantiles.

Works with SimPy 3/4 (`import simpy`) and with SimPy 2 (`import SimPy`, Debian's
python3-simpy 2.3.1). --api picks one when both are installed. See README.md.
"""
import argparse
import math
import os
import random
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", type=int, default=20)
    p.add_argument("--slots", type=int, default=8)
    p.add_argument("--mean-service", type=float, default=1.0, help="seconds (default 1)")
    p.add_argument("--sigma", type=float, default=0.5, help="sigma of log(service) (default 0.5)")
    p.add_argument("--util", type=float, default=0.70,
                   help="offered load / capacity (default 0.70: 112 req/s for 20 x 8 x 1 s)")
    p.add_argument("--duration", type=float, default=3600.0,
                   help="simulated seconds of arrivals (default 3600)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--api", choices=["auto", "3", "2"], default="auto",
                   help="SimPy API: 3 = simpy 3/4, 2 = SimPy 2.x (default: whichever imports)")
    return p.parse_args()


class Model:
    """Parameters, routing and statistics shared by both SimPy front ends."""

    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.rate = a.util * a.instances * a.slots / a.mean_service
        # Lognormal by its median: mean = median * exp(sigma^2 / 2).
        self.mu = math.log(a.mean_service) - a.sigma * a.sigma / 2
        self.outstanding = [0] * a.instances
        self.rr = 0
        self.started = 0
        self.waits = 0.0
        self.waited = 0
        self.busy_time = 0.0  # slot-seconds of service started before the end of arrivals
        self.responses = []

    def interarrival(self):
        return self.rng.expovariate(self.rate)

    def service(self):
        return self.rng.lognormvariate(self.mu, self.a.sigma)

    def pick(self):
        n = self.a.instances
        start = self.rr % n
        self.rr += 1
        out = self.outstanding
        best, best_out = start, out[start]
        for k in range(1, n):
            idx = (start + k) % n
            if out[idx] < best_out:
                best, best_out = idx, out[idx]
        return best

    def done(self, wait, response):
        self.waits += wait
        if wait > 0:
            self.waited += 1
        self.responses.append(response)


def run_simpy3(m):
    import simpy

    env = simpy.Environment()
    res = [simpy.Resource(env, capacity=m.a.slots) for _ in range(m.a.instances)]
    duration = m.a.duration

    def call(k):
        m.outstanding[k] += 1
        t0 = env.now
        with res[k].request() as req:
            yield req
            start = env.now
            s = m.service()
            if start < duration:
                m.busy_time += min(s, duration - start)
            yield env.timeout(s)
        m.outstanding[k] -= 1
        m.done(start - t0, env.now - t0)

    def source():
        while True:
            yield env.timeout(m.interarrival())
            if env.now >= duration:
                return
            m.started += 1
            env.process(call(m.pick()))

    env.process(source())
    env.run()
    version = getattr(simpy, "__version__", None)
    # simpy 4 reads its version from the installed package's metadata; a source tree on
    # PYTHONPATH next to Debian's SimPy 2 would report 2.x.
    if not version or version.startswith("2."):
        version = "3/4 (version not recorded)"
    return f"simpy {version} from {os.path.dirname(simpy.__file__)}"


def run_simpy2(m):
    import SimPy
    from SimPy.Simulation import Process, Resource, Simulation, hold, release, request

    sim = Simulation()
    res = [Resource(capacity=m.a.slots, sim=sim) for _ in range(m.a.instances)]
    duration = m.a.duration

    class Call(Process):
        def run(self, k):
            m.outstanding[k] += 1
            t0 = sim.now()
            yield request, self, res[k]
            start = sim.now()
            s = m.service()
            if start < duration:
                m.busy_time += min(s, duration - start)
            yield hold, self, s
            yield release, self, res[k]
            m.outstanding[k] -= 1
            m.done(start - t0, sim.now() - t0)

    class Source(Process):
        def run(self):
            while True:
                yield hold, self, m.interarrival()
                if sim.now() >= duration:
                    return
                m.started += 1
                c = Call(sim=sim)
                sim.activate(c, c.run(m.pick()))

    src = Source(sim=sim)
    sim.activate(src, src.run())
    sim.simulate(until=float("inf"))
    return "SimPy " + getattr(SimPy, "__version__", "2.x")


def quantile(sorted_values, q):
    """Nearest rank, as Spillway's histograms (without their 0.8 % binning)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


def main():
    a = parse_args()
    m = Model(a)
    runner = None
    if a.api in ("auto", "3"):
        try:
            import simpy  # noqa: F401

            runner = run_simpy3
        except ImportError:
            if a.api == "3":
                sys.exit("simpy 3/4 is not installed (import simpy failed)")
    if runner is None:
        try:
            import SimPy  # noqa: F401

            runner = run_simpy2
        except ImportError:
            sys.exit("no SimPy: apt-get install python3-simpy (then run with /usr/bin/python3), "
                     "or pip install simpy")

    t0 = time.perf_counter()
    version = runner(m)
    wall = time.perf_counter() - t0

    resp = sorted(m.responses)
    n = len(resp)
    capacity = a.instances * a.slots
    mean_wait = m.waits / n if n else 0.0
    print(f"{version}, Python {sys.version.split()[0]}")
    print(f"model: {a.instances} x {a.slots} slots, lognormal service mean {a.mean_service} s "
          f"sigma {a.sigma}, arrival rate {m.rate:.1f}/s, {a.duration:.0f} s of arrivals, "
          f"seed {a.seed}")
    print(f"requests:        {m.started} started, {n} served")
    print(f"wall time:       {wall:.3f} s")
    print(f"requests/s:      {m.started / wall:,.0f}  (of wall time)")
    print(f"arrival rate:    {m.started / a.duration:.3f} /s (measured)")
    print(f"utilization:     {m.busy_time / (capacity * a.duration):.4f}")
    print(f"mean wait:       {mean_wait * 1e3:.4f} ms  (share that waited: {m.waited / max(n, 1):.5f})")
    print(f"mean queued:     {mean_wait * m.started / a.duration:.4f}  (Little: rate x mean wait)")
    print(f"response p50:    {quantile(resp, 0.50) * 1e3:.1f} ms")
    print(f"response p99:    {quantile(resp, 0.99) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
