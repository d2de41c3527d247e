"""Benchmark: 20 phones on SSE, time from ``POST /api/events`` to every phone having the new state.

Starts ``cardtable serve`` as a separate process (so its resident memory is
the server's alone), opens N ``/api/stream`` connections from threads of this
process, then repeatedly POSTs an event and measures, for each POST, the time
from sending it until the last of the N clients has received the snapshot
holding it.  Prints the figures; targets: <= 100 ms for all 20, < 150 MB RSS.

    python bench/bench_sse.py [--clients 20] [--rounds 40]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = "1357"


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Client(threading.Thread):
    """One phone: reads the stream and records when each log length first arrives."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("GET", "/api/stream")
        self.resp = self.conn.getresponse()
        self.seen: dict[int, float] = {}
        self.cond = threading.Condition()

    def run(self):
        try:
            for raw in self.resp:
                if raw.startswith(b"data: "):
                    now = time.perf_counter()
                    length = json.loads(raw[6:])["state"].get("log_length", 0)
                    with self.cond:
                        self.seen.setdefault(length, now)
                        self.cond.notify_all()
        except Exception:
            pass

    def wait_for(self, length: int, timeout: float = 10) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: length in self.seen, timeout):
                raise TimeoutError(f"a client never got log length {length}")
            return self.seen[length]


def post(port: int, event: dict) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/api/events", json.dumps(event), {"Content-Type": "application/json", "X-Table-Pin": PIN})
    body = json.loads(conn.getresponse().read())
    conn.close()
    return body


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen([sys.executable, "-m", "cardtable", "serve", "--db", f"{folder}/bench.sqlite",
                                 "--port", "0", "--pin", PIN], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        port = int(line.split()[4].rstrip("/").rsplit(":", 1)[1])
        try:
            rss_idle = rss_mb(proc.pid)
            post(port, {"event": "new_game", "game": "big-two", "players": ["Ann", "Bo", "Cy", "Dee"],
                        "dealer": 0, "options": {"hand_size": 13, "end_at": 1000}})
            clients = [Client(port) for _ in range(args.clients)]
            for c in clients:
                c.start()
            for c in clients:
                c.wait_for(1)                       # everyone has the whole state first
            # alternate a play and its undo: a real event and a real re-judging every round
            latencies, length = [], 1
            for i in range(args.rounds):
                event = {"event": "play", "seat": 1, "cards": ["3C"]} if i % 2 == 0 else {"event": "undo"}
                t0 = time.perf_counter()
                verdict = post(port, event)
                assert verdict["ok"], verdict
                length += 1
                last = max(c.wait_for(length) for c in clients)
                latencies.append((last - t0) * 1000)
            rss_busy = rss_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
    latencies.sort()
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    print(f"SSE fan-out, {args.clients} clients on loopback, {args.rounds} events (play/undo alternating)")
    print(f"  POST -> all {args.clients} clients have the new state: median {statistics.median(latencies):.1f} ms, "
          f"p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms   (target <= 100 ms)")
    print(f"  server resident memory: {rss_idle:.1f} MB idle, {rss_busy:.1f} MB with {args.clients} streams "
          f"(target < 150 MB)")
    ok = latencies[-1] <= 100 and rss_busy < 150
    print("  targets met" if ok else "  TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
