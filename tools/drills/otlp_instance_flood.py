#!/usr/bin/env python3
"""Drill: flood an OTLP/HTTP receiver on 127.0.0.1 with spans of N distinct instance names
(server.address) and report its process's peak RSS and what the instance bound did. Issue 17:
unbounded, each distinct name cost ~22 KiB (4.4 GiB at 200,000 names).

  # spillway-cli listen --otlp (started here; options after N go to listen)
  tools/drills/otlp_instance_flood.py build/bin/spillway-cli 200000            # default bound
  tools/drills/otlp_instance_flood.py build/bin/spillway-cli 20000 --max-instances 1000000

  # the console's Live mode, offscreen (started here; options after N go to spillway)
  tools/drills/otlp_instance_flood.py --console build/bin/spillway 200000
  tools/drills/otlp_instance_flood.py --console build/bin/spillway 20000 \\
      --live-max-instances 1000000

  # a receiver that is already listening (PID: its process, for the RSS; optional)
  tools/drills/otlp_instance_flood.py --port 4318 [--pid PID] 200000
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


def spans(first, count, t0_ns):
    out = []
    for i in range(first, first + count):
        addr = "10.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256)
        start = t0_ns + i * 1_000_000
        out.append({
            "traceId": "0102030405060708090a0b0c0d0e0f10", "spanId": "0102030405060708",
            "name": "chat", "kind": 3, "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 50_000_000),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.request.model", "value": {"stringValue": "chat-72b"}},
                {"key": "server.address", "value": {"stringValue": addr}},
                {"key": "server.port", "value": {"intValue": str(8000 + i // 16777216)}}]})
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": out}]}]})


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            sys.exit("the receiver exited before listening (status %d)" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("nothing listens on 127.0.0.1:%d" % port)


def flood(port, names):
    """Posts the names 1000 to a request; returns (spans rejected, spans acknowledged)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    rejected, batch, t0 = 0, 1000, 1_764_480_000_000_000_000
    for first in range(0, names, batch):
        conn.request("POST", "/v1/traces", spans(first, min(batch, names - first), t0),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        body = json.loads(r.read() or b"{}")
        assert r.status == 200, (r.status, body)
        rejected += int(body.get("partialSuccess", {}).get("rejectedSpans", 0))
    conn.close()
    return rejected, names - rejected


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.communicate()


def run_listen(cli, names, extra):
    port = free_port()
    proc = subprocess.Popen([cli, "listen", "--otlp", "127.0.0.1:%d" % port, "--json"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while b"OTLP/HTTP on" not in proc.stderr.readline():
            if proc.poll() is not None:
                sys.exit("listen did not start")
        rejected, _ = flood(port, names)
        rss = status_kib(proc.pid, "VmHWM")
        out, _ = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    summary = json.loads(out.decode().strip().splitlines()[-1])
    b = summary["instance_bound"]
    print("%d distinct instances: peak RSS %.1f MiB; %d tracked (bound %d), %d spans rejected "
          "in partialSuccess, %d calls recorded"
          % (names, rss / 1024, b["tracked"], b["max_instances"], rejected,
             summary["otlp"]["calls"]))


def run_console(console, names, extra):
    # Offscreen, with settings and data in a scratch directory (the user's are left alone).
    port = free_port()
    scratch = tempfile.mkdtemp(prefix="spillway-flood-")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=scratch,
               XDG_DATA_HOME=scratch, XDG_RUNTIME_DIR=scratch)
    proc = subprocess.Popen([console, "--live-otlp", "127.0.0.1:%d" % port] + extra, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(port, proc)
        idle = status_kib(proc.pid, "VmRSS")
        began = time.monotonic()
        rejected, acked = flood(port, names)
        took = time.monotonic() - began
        time.sleep(3)  # the last snapshots drawn (four a second) count too
        rss, now = status_kib(proc.pid, "VmHWM"), status_kib(proc.pid, "VmRSS")
        _, err = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print("console Live mode, %d distinct instances in %.1f s: peak RSS %.1f MiB (%.1f MiB "
          "before the flood, %.1f MiB after it); %d spans acknowledged, %d rejected in "
          "partialSuccess" % (names, took, rss / 1024, idle / 1024, now / 1024, acked, rejected))
    if proc.returncode not in (0, -signal.SIGTERM):
        sys.exit("the console exited with %d: %s" % (proc.returncode, err.decode()[-2000:]))


def run_port(port, pid, names):
    wait_listening(port, None, 5)
    rejected, acked = flood(port, names)
    rss = " peak RSS %.1f MiB;" % (status_kib(pid, "VmHWM") / 1024) if pid else ""
    print("%d distinct instances:%s %d spans acknowledged, %d rejected in partialSuccess"
          % (names, rss, acked, rejected))


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--console":
        run_console(args[1], int(args[2]), args[3:])
    elif len(args) >= 3 and args[0] == "--port":
        port, rest, pid = int(args[1]), args[2:], 0
        if len(rest) >= 3 and rest[0] == "--pid":
            pid, rest = int(rest[1]), rest[2:]
        if len(rest) != 1:
            sys.exit(__doc__)
        run_port(port, pid, int(rest[0]))
    elif len(args) >= 2 and not args[0].startswith("-"):
        run_listen(args[0], int(args[1]), args[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
