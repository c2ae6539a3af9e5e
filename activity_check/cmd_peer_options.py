"""``activity-check peer options``: the option each peer of the conformance matrix takes on each
knob, computed, and checked against the recorded ones.

``peer options [--adapter ID]... [--check] [--out FILE] [--json] [--depth N]``:

* without ``--check``: the knobs' separating traces are computed by the engines (to ``--depth``)
  and run through each peer (default: every built-in peer that can run here,
  :data:`counterexamples.peers.matrix.MATRIX_PEERS`; the others are named on stderr, not run);
  the document (``model/data/peer_options.json``'s form) is printed as text, or as JSON with
  ``--json``, and written to ``--out FILE`` (a new file, or an earlier peer options document,
  replaced whole);
* ``--check``: the recorded separating traces of ``model/data/peer_options.json`` are run
  through the live peers and their options compared with the recorded ones: exit 1 with the
  differences, one a line, when a peer no longer matches (another version, another option).

All the work is in :mod:`counterexamples.peers.options`; this module only wires it to the
command line (hooked into ``peer`` by :mod:`activity_check.cmd_peer`).
"""
from __future__ import annotations

import json
import math
import os

from activity_check.cli import (UsageError, console, dump, finite_float, positive_int, shown,
                                write_new_output)

__all__ = ["add_options", "cmd_peer_options"]


def add_options(actions) -> None:
    """Add the ``options`` subaction to ``peer``'s subparsers (``actions``)."""
    p = actions.add_parser(
        "options", help="the option each matrix peer takes on each knob, from the knobs' "
                        "separating traces; --check compares with the recorded ones")
    p.add_argument("--adapter", action="append", metavar="ID", default=None,
                   help="a built-in peer's shortcut (repeatable; default: every built-in peer "
                        "that can run here): ag-ui-client:reducer, ag-ui-client:pipeline, "
                        "ag-ui-client@0.0.59:reducer, ag-ui-client@0.0.59:pipeline, "
                        "assistant-ui, tanstack-ai, copilotkitnext-core, copilotkit, "
                        "ag-ui-protocol")
    p.add_argument("--check", action="store_true",
                   help="run the recorded separating traces through the live peers and exit 1, "
                        "with the differences, when one no longer takes the recorded options")
    p.add_argument("--out", metavar="FILE",
                   help="write the document here (a new file, or an earlier peer options "
                        "document, replaced): model/data/peer_options.json records it")
    p.add_argument("--json", action="store_true", help="print the document as JSON")
    p.add_argument("--depth", type=positive_int, default=None,
                   help="the bound of the conformant pair searches that find the separating "
                        "traces (default 4; the lifecycle search goes 2 further); not with "
                        "--check, which replays the recorded traces")
    p.add_argument("--timeout", type=finite_float, default=10.0,
                   help="seconds one answer may take (default 10)")
    p.set_defaults(func=cmd_peer_options)


def _peers(args, err) -> list:
    """The matrix peers to run: ``--adapter``'s (UsageError for an unknown one or one that
    cannot run here, with the reason), else every one that can run (the others named on
    ``err``)."""
    from counterexamples.peers.matrix import MATRIX_PEERS, peer_ready
    from model.text import named
    by_shortcut = {p.shortcut: p for p in MATRIX_PEERS}
    if args.adapter:
        chosen = []
        for text in args.adapter:
            peer = by_shortcut.get(text.strip())
            if peer is None:
                raise UsageError(f"--adapter {named(text)}: not a built-in peer of the matrix; "
                                 "one of " + ", ".join(by_shortcut))
            reason = peer_ready(peer)
            if reason:
                raise UsageError(f"--adapter {peer.shortcut}: {reason}")
            if peer not in chosen:
                chosen.append(peer)
        return chosen
    chosen = []
    for peer in MATRIX_PEERS:
        reason = peer_ready(peer)
        if reason:
            err.print(f"not run: {shown(peer.shortcut)}: {shown(reason)}")
        else:
            chosen.append(peer)
    if not chosen:
        raise UsageError("no peer of the matrix can run here (make peers installs the Node ones)")
    return chosen


def _check_out(path: str) -> None:
    """Refuse (UsageError) an ``--out FILE`` that exists and is not an earlier peer options
    document (a link included), before any peer is run."""
    if not os.path.lexists(path):
        return
    try:
        if os.path.islink(path):
            raise ValueError
        with open(path, encoding="utf-8") as fh:
            previous = json.loads(fh.read(4_000_001))
        if not isinstance(previous, dict) or previous.get("command") != "peer options":
            raise ValueError
    except (OSError, ValueError, UnicodeDecodeError):
        raise UsageError(f"--out {path}: exists and is not an earlier peer options document; "
                         "not overwritten") from None


def _write(path: str, text: str) -> None:
    """``--out FILE``: a new file, or an earlier peer options document replaced whole (through
    a temporary file beside it); anything else there is refused (UsageError)."""
    _check_out(path)
    if not os.path.lexists(path):
        write_new_output(path, text)
        return
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"--out {path}: cannot write the file: {exc.strerror or exc}") from None


def render_text(doc: dict) -> str:
    """The document in a few lines a peer: its name and adapter, the options it takes, the
    knobs not observable (the reasons are in ``--json``)."""
    t = doc["traces"]
    out = [f"separating traces: {len(t['items'])} (conformant pair searches to depth "
           f"{t['depth']}, lifecycle to {t['lifecycleDepth']}, form B to {t['violatingDepth']})"]
    for peer in doc["peers"]:
        taken = [f"{k}={e['option']}" for k, e in peer["knobs"].items() if "option" in e]
        hidden = [k for k, e in peer["knobs"].items() if "option" not in e]
        out += ["", f"{peer['name']} (--adapter {peer['adapter']}; reports "
                    f"{peer['reports'] or '-'})",
                "  takes: " + (", ".join(taken) or "nothing observable"),
                "  not observable: " + (", ".join(hidden) or "none")]
    return "\n".join(out) + "\n"


def cmd_peer_options(args) -> int:
    """Run ``peer options`` (see the module docstring): 0 when it ran (and, with ``--check``,
    every peer matches the record), 1 with ``--check`` when some peer does not (the differences
    on stdout), UsageError (exit 2) for an unusable option, peer or ``--out``."""
    from counterexamples.peers.adapter import PeerError
    from counterexamples.peers.options import (DEFAULT_DEPTH, differences, options_document,
                                               separating_traces)
    if math.isnan(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.check and args.depth is not None:
        raise UsageError("--depth computes new traces; --check replays the recorded ones")
    depth = DEFAULT_DEPTH if args.depth is None else args.depth
    if depth < 2:
        raise UsageError("--depth must be at least 2 (no activity event fits after RUN_STARTED)")
    if args.out:
        _check_out(args.out)
    err = console(stderr=True)
    peers = _peers(args, err)
    recorded = None
    if args.check:
        from model.peer_options import PEER_OPTIONS_FILE, PeerOptionsError, load_peer_options
        from model.readings import KNOBS
        try:
            recorded = load_peer_options(PEER_OPTIONS_FILE,
                                         {k.id: k.option_names for k in KNOBS})
        except PeerOptionsError as exc:
            raise UsageError(str(exc)) from None
        traces = recorded["traces"]
    else:
        err.print(f"computing the separating traces (depth {depth}) ...")
        traces = separating_traces(depth)
    try:
        doc = options_document(peers, traces, args.timeout,
                               progress=lambda s: err.print(f"running {shown(s)} ..."))
    except PeerError as exc:
        raise UsageError(str(exc)) from None
    if args.out:
        _write(args.out, dump(doc) + "\n")
        err.print(f"written to {shown(args.out)}")
    diffs = None if recorded is None else differences(recorded, doc)
    if args.json:
        print(dump(doc if diffs is None else {**doc, "differences": diffs}))
    elif diffs is None:
        print(render_text(doc), end="")
    else:
        for line in diffs:
            print(line)
        print(f"{len(doc['peers'])} peer(s) checked against the record: "
              + (f"{len(diffs)} difference(s)" if diffs else "they match"))
    return 1 if diffs else 0
