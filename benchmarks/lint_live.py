"""Memory of ``lint --url`` on an endless stream (target, issue 42 item 4: under 200 MB of
resident memory for a minute).

Starts a tiny AG-UI endpoint on 127.0.0.1 in a child process: every POST is answered with a
text/event-stream that never ends: RUN_STARTED, then, as fast as the socket takes them, an
ACTIVITY_SNAPSHOT of one of ``--ids`` activities followed by ACTIVITY_DELTA events that patch
it (each with a distinct value), an SSE comment every 1,000 events and, with ``--violations``,
a malformed delta every 100 events (so that the report's violations grow too). Then runs
``activity-check lint --url ... --max-seconds S --format json`` as a second child process and
samples its resident set size (``/proc/PID/status``, ``VmRSS``) every 0.2 s, printing the peak,
the last sample, the events linted (from the JSON report) and the rate. Linux only (``/proc``).

Usage: python benchmarks/lint_live.py [--seconds 60] [--ids 8] [--violations] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SERVER = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
IDS, BAD = int(sys.argv[1]), sys.argv[2] == "1"

class Endless(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        frame = lambda e: "data: " + json.dumps(e, separators=(",", ":")) + "\n\n"
        out = [frame({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})]
        n = 0
        try:
            while True:
                aid = f"act-{n % IDS}"
                if n < IDS:
                    out.append(frame({"type": "ACTIVITY_SNAPSHOT", "messageId": aid,
                                      "activityType": "PLAN", "content": {"n": 0}}))
                elif BAD and n % 100 == 0:
                    out.append(frame({"type": "ACTIVITY_DELTA", "messageId": aid,
                                      "activityType": "PLAN", "patch": [{"op": "add", "path": "/n"}]}))
                else:
                    out.append(frame({"type": "ACTIVITY_DELTA", "messageId": aid, "activityType": "PLAN",
                                      "patch": [{"op": "replace", "path": "/n", "value": n}]}))
                n += 1
                if n % 1000 == 0:
                    out.append(": keep-alive\n\n")
                if len(out) >= 200:
                    self.wfile.write("".join(out).encode())
                    self.wfile.flush()
                    out = []
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
print(server.server_address[1], flush=True)
server.serve_forever()
'''


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` in MB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long lint reads (default 60)")
    ap.add_argument("--ids", type=int, default=8, help="activities the stream cycles through")
    ap.add_argument("--violations", action="store_true", help="a malformed delta every 100 events")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.ids),
                              "1" if args.violations else "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        program = os.path.join(os.path.dirname(sys.executable), "activity-check")
        report_file = tempfile.TemporaryFile()  # not a pipe: the report may be megabytes
        lint = subprocess.Popen([program, "lint", "--url", f"http://127.0.0.1:{port}/",
                                 "--max-seconds", f"{args.seconds:g}", "--max-events",
                                 str(10**12), "--format", "json"],
                                stdout=report_file, stderr=subprocess.PIPE)
        began, peak, samples = time.monotonic(), 0.0, []
        while lint.poll() is None:
            now = rss_mb(lint.pid)
            peak = max(peak, now)
            samples.append((round(time.monotonic() - began, 1), round(now, 1)))
            time.sleep(0.2)
        took = time.monotonic() - began
        err = lint.stderr.read()
        report_file.seek(0)
        out = report_file.read()
    finally:
        server.terminate()
        server.wait(10)
    if lint.returncode not in (0, 1):
        print(f"lint failed (exit {lint.returncode}): {err.decode()[:500]}", file=sys.stderr)
        return 1
    report = json.loads(out)
    figures = {"seconds": round(took, 1), "events": report["events"],
               "eventsPerSecond": round(report["events"] / took),
               "violations": report["counts"], "listed": len(report["violations"]),
               "peakRssMB": round(peak, 1), "lastRssMB": samples[-1][1] if samples else None,
               "rssEvery10s": [mb for t, mb in samples if abs(t % 10) < 0.2 or t == samples[-1][0]],
               "notes": [n["text"] for n in report["notes"]], "targetMB": 200}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"lint --url on an endless stream for {figures['seconds']} s: {figures['events']:,} "
              f"events ({figures['eventsPerSecond']:,}/s), violations {figures['violations']} "
              f"({figures['listed']} listed); peak RSS {figures['peakRssMB']} MB (target < 200), "
              f"last {figures['lastRssMB']} MB")
        for note in figures["notes"]:
            print(f"  note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
