#!/usr/bin/env python3
"""Drill: flood `spillway-cli listen --otlp` with spans of N distinct instance names
(server.address) on 127.0.0.1 and report the receiver's peak RSS and what the instance bound
did. Issue 17: unbounded, each distinct name cost ~22 KiB (4.4 GiB at 200,000 names).

  tools/drills/otlp_instance_flood.py build/bin/spillway-cli 200000            # default bound
  tools/drills/otlp_instance_flood.py build/bin/spillway-cli 20000 --max-instances 1000000
"""
import http.client
import json
import signal
import socket
import subprocess
import sys
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


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cli, names, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([cli, "listen", "--otlp", "127.0.0.1:%d" % port, "--json"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while b"OTLP/HTTP on" not in proc.stderr.readline():
            if proc.poll() is not None:
                sys.exit("listen did not start")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        rejected, batch, t0 = 0, 1000, 1_764_480_000_000_000_000
        for first in range(0, names, batch):
            conn.request("POST", "/v1/traces", spans(first, min(batch, names - first), t0),
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            body = json.loads(r.read() or b"{}")
            assert r.status == 200, (r.status, body)
            rejected += int(body.get("partialSuccess", {}).get("rejectedSpans", 0))
        rss = peak_rss_kib(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
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


if __name__ == "__main__":
    main()
