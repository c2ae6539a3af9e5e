"""Peer throughput: traces per second through the @ag-ui/client adapter, process start included.

Takes the committed corpus (findings and field cases) and, to reach ``--traces`` (default 200),
the first traces of the breadth-first search (:func:`counterexamples.peers.generate.generated_traces`), then
for each mode of the Node adapter (``reducer``, ``pipeline``): starts the adapter process, sends
every trace in batches, classifies every answer against every reading of the model, and stops the
process; the clock runs from before the start to after the last classification. Also times the
reference-model adapter the same way, as a yardstick. Target (issue 6): at least 100 traces
through @ag-ui/client within 15 s, process start included.

Usage: python benchmarks/peer.py [--traces N] [--json]
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

from counterexamples.peers.adapter import AdapterProcess, node_peer_ready, resolve_adapter
from counterexamples.peers.classify import classify
from counterexamples.peers.traces import corpus_traces
from counterexamples.peers.generate import generated_traces

TARGET_TRACES = 100
TARGET_SECONDS = 15.0


def bench_traces(n: int) -> list:
    """The corpus, then breadth-first traces, ``n`` in all (deterministic)."""
    traces = corpus_traces()
    if len(traces) < n:
        generated, _ = generated_traces(seed=0, stateful=0, bfs_depth=3)
        traces += [t for t in generated if t.source == "bfs"][:n - len(traces)]
    return traces[:n]


def measure(adapter: str, traces: list, batch: int = 64) -> dict:
    """Start ``adapter``, run and classify ``traces``, stop it. Figures: traces, seconds (start
    included), traces/s, seconds to the first answer, classes, adapter starts."""
    t0 = time.perf_counter()
    spec = resolve_adapter(adapter)
    counts = {"draft": 0, "reading": 0, "divergence": 0, "error": 0}
    first = None
    with AdapterProcess(spec) as process:
        for i in range(0, len(traces), batch):
            chunk = traces[i:i + batch]
            replies = process.request_many([(t.wire, t.state, t.id) for t in chunk])
            if first is None:
                first = time.perf_counter() - t0
            for t, r in zip(chunk, replies):
                counts[classify(t.events, r, t.state).kind] += 1
        starts = process.starts
    seconds = time.perf_counter() - t0
    return {"adapter": adapter, "traces": len(traces), "seconds": round(seconds, 3),
            "tracesPerSecond": round(len(traces) / seconds, 1),
            "firstBatchSeconds": round(first or 0.0, 3), "classes": counts, "starts": starts,
            # None: too few traces to judge the target (--traces below it)
            "meetsTarget": None if len(traces) < TARGET_TRACES else seconds <= TARGET_SECONDS}


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=200,
                        help="traces per adapter (default 200)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.traces < 1:
        parser.error("--traces must be at least 1")
    reason = node_peer_ready()
    traces = bench_traces(args.traces)
    results = [measure("model", traces)]
    if reason is None:
        results += [measure("ag-ui-client:reducer", traces),
                    measure("ag-ui-client:pipeline", traces)]
    node = None
    if reason is None:
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    out = {"benchmark": "peer", "python": platform.python_version(), "node": node,
           "target": f"at least {TARGET_TRACES} traces through @ag-ui/client within "
                     f"{TARGET_SECONDS:g} s, process start included",
           "skipped": reason, "results": results}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"peer benchmark: {len(traces)} traces per adapter (corpus + breadth-first), "
          f"Python {out['python']}, Node {node or '-'}")
    if reason:
        print(f"@ag-ui/client not measured: {reason}")
    for r in results:
        mark = "" if r["adapter"] == "model" else \
            f"  [target not judged: fewer than {TARGET_TRACES} traces]" \
            if r["meetsTarget"] is None else \
            ("  [target met]" if r["meetsTarget"] else "  [target MISSED]")
        print(f"  {r['adapter']:24} {r['traces']:5d} traces in {r['seconds']:7.3f} s "
              f"({r['tracesPerSecond']:8.1f}/s; first batch {r['firstBatchSeconds']:.3f} s) "
              f"classes {r['classes']}{mark}")
    print(f"target: {out['target']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
