"""The conformance matrix: every peer against the same traces, side by side.

``activity-check peer matrix`` runs each peer (a real consumer behind an adapter,
:mod:`counterexamples.peers`) through the committed corpus, the probes and a seeded search
(the traces of :func:`counterexamples.peers.search.search_peer` without a time budget, generated once,
so the same seed gives the same matrix), and puts the results in one table:

* per knob (:data:`model.readings.KNOBS`), the option each peer behaves as, inferred over all of
  its traces (:func:`knob_cells`);
* per peer, its divergences (the peer agrees with no reading): the clauses, where it parts from
  the model, and a link to the shrunk finding written beside the matrix;
* the peers' versions (what each adapter says it drives).

The built-in peers are listed in :data:`MATRIX_PEERS` (shortcuts for ``--adapter``); a peer
whose toolchain or packages are missing is left out with the reason (:func:`peer_ready`).
:func:`render_markdown` and :func:`render_html` render the matrix's JSON document
(:meth:`Matrix.to_json`), so a saved ``matrix.json`` renders the same.

Layering: uses :mod:`counterexamples.peers` and ``model``; the CLI
(:mod:`activity_check.cmd_matrix`) only wires it.
"""
from __future__ import annotations

import html
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from counterexamples.peers.adapter import (PEERS_DIR, AdapterProcess, AdapterSpec, PeerError,
                                           resolve_adapter)
from counterexamples.peers.check import PeerReport, check_peer
from counterexamples.peers.generate import JS_PROBES, PROBES, generated_traces
from model.readings import DRAFT, KNOBS

__all__ = ["CataloguePeer", "MATRIX_PEERS", "peer_ready", "peer_version", "resolve_matrix_adapter",
           "default_adapters", "PeerColumn", "Matrix", "build_matrix", "knob_cells",
           "render_markdown", "render_html", "write_matrix", "MATRIX_FILES", "SEARCH_DEFAULTS"]

SEARCH_DEFAULTS = {"stateful": 100, "bfs_depth": 3, "max_findings": 12}
"""The search each peer gets by default: 100 Hypothesis stateful traces, every state of a
breadth-first search of depth 3, at most 12 shrunk findings (one per kind of divergence)."""

MATRIX_FILES = ("matrix.json", "matrix.md", "matrix.html")
"""The files ``peer matrix --out DIR`` writes (with ``findings/<id>.json|.jsonl``)."""


@dataclass(frozen=True)
class CataloguePeer:
    """A built-in peer of the matrix.

    Attributes:
        shortcut: what ``--adapter`` accepts (``ag-ui-client@0.0.59:pipeline``).
        name: the adapter's name in finding ids (``PEER-<name>-<hash>``).
        folder: its folder under ``peers/``.
        toolchain: ``"node"`` or ``"python"``.
        package: the package that must be installed (a folder of ``node_modules``, or a Python
            distribution name).
        args: the adapter's arguments after the program (the script first, relative to
            ``folder``).
        about: what it drives, in a few words.
    """

    shortcut: str
    name: str
    folder: str
    toolchain: str
    package: str
    args: tuple[str, ...]
    about: str


def _client(version: str, mode: str) -> CataloguePeer:
    folder = "ag-ui-client" if version == "1.0.0" else f"ag-ui-client-{version}"
    shortcut = f"ag-ui-client:{mode}" if version == "1.0.0" else f"ag-ui-client@{version}:{mode}"
    name = f"ag-ui-client-{mode}" if version == "1.0.0" else \
        f"ag-ui-client-{version.replace('.', '-')}-{mode}"
    what = "its event reducer alone" if mode == "reducer" else "the full agent pipeline"
    return CataloguePeer(shortcut, name, folder, "node", "@ag-ui/client",
                         ("adapter.mjs", "--mode", mode), f"@ag-ui/client {version}, {what}")


MATRIX_PEERS: tuple[CataloguePeer, ...] = (
    _client("1.0.0", "reducer"), _client("1.0.0", "pipeline"),
    _client("0.0.59", "reducer"), _client("0.0.59", "pipeline"),
    CataloguePeer("assistant-ui", "assistant-ui-react-ag-ui", "assistant-ui-react-ag-ui", "node",
                  "@assistant-ui/react-ag-ui", ("adapter.mjs",),
                  "@assistant-ui/react-ag-ui, its thread runtime core over @ag-ui/client"),
    CataloguePeer("tanstack-ai", "tanstack-ai", "tanstack-ai", "node", "@tanstack/ai",
                  ("adapter.mjs",), "@tanstack/ai, its StreamProcessor"),
    CataloguePeer("copilotkitnext-core", "copilotkitnext-core", "copilotkitnext-core", "node",
                  "@copilotkitnext/core", ("adapter.mjs",),
                  "@copilotkitnext/core, CopilotKitCore.runAgent over SSE from a local runtime"),
    CataloguePeer("copilotkit", "copilotkit-react-core", "copilotkit-react-core", "node",
                  "@copilotkit/react-core", ("adapter.mjs",),
                  "CopilotKit 1.74 (@copilotkit/react-core), its core over SSE from a local "
                  "runtime"),
    CataloguePeer("ag-ui-protocol", "ag-ui-protocol", "ag-ui-protocol", "python",
                  "ag-ui-protocol", ("adapter.py",),
                  "ag-ui-protocol (Python), its event models as the wire layer"),
)
"""The built-in peers, in the matrix's column order: both @ag-ui/client versions (two modes
each), @assistant-ui/react-ag-ui, @tanstack/ai, CopilotKit 2's @copilotkitnext/core and
CopilotKit 1.74's @copilotkit/react-core (both over SSE), the Python ag-ui-protocol models."""

_BY_SHORTCUT = {p.shortcut: p for p in MATRIX_PEERS}


def peer_ready(peer: CataloguePeer) -> Optional[str]:
    """None when ``peer`` can run here; otherwise why not (no ``node``, the adapter's folder or
    packages missing: ``make peers`` installs the Node ones)."""
    base = os.path.join(PEERS_DIR, peer.folder)
    script = os.path.join(base, peer.args[0])
    if peer.toolchain == "node" and shutil.which("node") is None:
        return "Node.js is not installed (no 'node' on PATH)"
    if not os.path.isfile(script):
        return f"{script} is missing (the adapters live in the source checkout)"
    if peer.toolchain == "node":
        if not os.path.isdir(os.path.join(base, "node_modules", *peer.package.split("/"))):
            return (f"the Node packages are not installed in {base} (run 'make peers', or "
                    "'npm ci' in that folder)")
        return None
    from importlib.metadata import PackageNotFoundError, version
    try:
        version(peer.package)
    except PackageNotFoundError:
        return (f"the Python package {peer.package} is not installed (pip install -r "
                f"{os.path.join(base, 'requirements.txt')})")
    return None


def peer_version(peer: CataloguePeer) -> str:
    """The installed version of ``peer``'s package (its ``node_modules`` package.json, or the
    Python distribution's metadata); ``""`` when it cannot be read (not installed)."""
    if peer.toolchain == "node":
        path = os.path.join(PEERS_DIR, peer.folder, "node_modules", *peer.package.split("/"),
                            "package.json")
        try:
            with open(path, encoding="utf-8") as fh:
                version = json.loads(fh.read(1 << 20)).get("version")
        except (OSError, ValueError):
            return ""
        return version if isinstance(version, str) else ""
    from importlib.metadata import PackageNotFoundError, version as dist_version
    try:
        return dist_version(peer.package)
    except PackageNotFoundError:
        return ""


def _spec(peer: CataloguePeer) -> AdapterSpec:
    base = os.path.join(PEERS_DIR, peer.folder)
    program = "node" if peer.toolchain == "node" else sys.executable
    argv = (program, os.path.join(base, peer.args[0]), *peer.args[1:])
    # the Python adapter runs from the checkout, so that it imports this checkout's model
    cwd = base if peer.toolchain == "node" else os.path.dirname(PEERS_DIR)
    return AdapterSpec(peer.name, argv, peer.shortcut, cwd)


def resolve_matrix_adapter(text: str) -> AdapterSpec:
    """``--adapter`` for the matrix: a shortcut of :data:`MATRIX_PEERS`, else anything
    :func:`counterexamples.peers.adapter.resolve_adapter` accepts (``model[:READING]``, a command line).

    Raises:
        PeerError: a built-in peer that cannot run here (with the reason), or what
            ``resolve_adapter`` raises.
    """
    peer = _BY_SHORTCUT.get((text or "").strip())
    if peer is None:
        return resolve_adapter(text)
    reason = peer_ready(peer)
    if reason:
        raise PeerError(f"--adapter {peer.shortcut}: {reason}")
    return _spec(peer)


def default_adapters() -> tuple[list[str], list[tuple[str, str]]]:
    """The built-in peers that can run here, and ``(shortcut, reason)`` for those that cannot."""
    ready, skipped = [], []
    for peer in MATRIX_PEERS:
        reason = peer_ready(peer)
        if reason:
            skipped.append((peer.shortcut, reason))
        else:
            ready.append(peer.shortcut)
    return ready, skipped


# --- running ------------------------------------------------------------------------------------

@dataclass
class PeerColumn:
    """One peer's column: its adapter, the report of its search, and what it calls itself.

    Attributes:
        spec: the adapter; report: its :class:`counterexamples.peers.check.PeerReport` over the
            matrix's traces; conformance: ``{corpus name: cell}`` of its runs through the
            conformance corpora (:func:`counterexamples.conformance.runner.corpus_cell`).
    """

    spec: AdapterSpec
    report: PeerReport
    conformance: dict = field(default_factory=dict)

    @property
    def version(self) -> str:
        """What the peer calls itself (its answers' ``peer``: packages and versions)."""
        return self.report.peer or self.spec.label


@dataclass
class Matrix:
    """Every peer's column, and how they were searched.

    Attributes:
        columns: one per peer, in the order given. skipped: ``(shortcut, reason)`` for the
            built-in peers that could not run. seed, stateful, bfs_depth: the search.
            corpora: ``{name: {"fixtures": n, "thirdParty": bool}}``, the conformance corpora
            every peer was run through (empty: none).
    """

    columns: list[PeerColumn]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seed: int = 0
    stateful: int = SEARCH_DEFAULTS["stateful"]
    bfs_depth: int = SEARCH_DEFAULTS["bfs_depth"]
    corpora: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The matrix as JSON (no timings: the same seed and peers give the same text):
        ``{"tool", "command", "seed", "search", "peers": [{"adapter", "name", "version",
        "counts", "compared", "generated"}], "skipped": [{"adapter", "reason"}], "knobs":
        [{"knob", "question", "draft", "cells": {name: cell}}], "divergences": {name: [...]},
        "jsProbes": {name: {probe id: {"class", "differs"}}}}`` (``jsProbes``: each peer's result
        on :data:`counterexamples.peers.generate.JS_PROBES`)
        (a cell: :func:`knob_cells`; a divergence: the report's members plus ``file``, the
        finding's path relative to the matrix)."""
        peers = [{"adapter": c.spec.label, "name": c.spec.name, "version": c.version,
                  "counts": c.report.counts(), "compared": c.report.compared,
                  "generated": c.report.generated, "joint": _joint(c.report)}
                 for c in self.columns]
        cells = {c.spec.name: knob_cells(c.report) for c in self.columns}
        draft = DRAFT.as_dict()
        knobs = [{"knob": k.id, "question": k.question, "draft": draft[k.id],
                  "cells": {name: cells[name][k.id] for name in cells}} for k in KNOBS]
        divergences = {}
        for c in self.columns:
            summary = c.report.to_json()["divergences"]
            divergences[c.spec.name] = [dict(d, file=f"findings/{d['id']}.json")
                                        for d in summary]
        js_probes = {c.spec.name: {r.trace.id: {"class": r.classification.kind,
                                                "differs": list(r.classification.aspects)}
                                   for r in c.report.results if r.trace.id in JS_PROBES}
                     for c in self.columns}
        doc = {"tool": "activity-check", "command": "peer matrix", "seed": self.seed,
               "search": {"stateful": self.stateful, "bfsDepth": self.bfs_depth,
                          "budget": None},
               "peers": peers,
               "skipped": [{"adapter": a, "reason": r} for a, r in self.skipped],
               "knobs": knobs, "divergences": divergences, "jsProbes": js_probes}
        if self.corpora:
            doc["conformance"] = {"corpora": self.corpora,
                                  "cells": {c.spec.name: c.conformance for c in self.columns}}
        return doc


def _joint(report: PeerReport) -> dict:
    """What the joint inference of the peer's reading rested on
    (:func:`counterexamples.peers.classify.joint_readings`): ``{"taken": traces that constrained it,
    "conflicts": traces set aside (no reading consistent with those before gives the peer's
    verdict on them)}``."""
    joint = report.joint
    return {"taken": joint.taken, "conflicts": list(joint.conflicts)}


def knob_cells(report: PeerReport) -> dict[str, dict]:
    """``{knob id: {"status", "behavesAs", "options", "evidence"}}`` for one peer: the option it
    behaves as per knob, inferred jointly over all of its traces (the report's
    :func:`counterexamples.peers.classify.knob_table`, whose options are those some reading consistent
    with every trace taken has; ``status`` as in :class:`counterexamples.peers.classify.KnobBehaviour`;
    ``evidence``: how many traces separate the knob's options, or narrowed them)."""
    return {k.knob: {"status": k.status, "behavesAs": k.behaves_as, "options": list(k.options),
                     "evidence": len(k.evidence)} for k in report.knobs}


def build_matrix(adapters: Sequence[str], seed: int = 0,
                 stateful: int = SEARCH_DEFAULTS["stateful"],
                 bfs_depth: int = SEARCH_DEFAULTS["bfs_depth"],
                 max_findings: int = SEARCH_DEFAULTS["max_findings"], timeout: float = 10.0,
                 skipped: Sequence[tuple[str, str]] = (),
                 progress: Optional[Callable[[str], None]] = None,
                 corpora: Optional[dict] = None) -> Matrix:
    """Search every adapter (the corpus and probes, then ``stateful`` Hypothesis traces and a
    breadth-first search of ``bfs_depth``, seeded, no time budget: the traces ``peer search
    --budget inf`` feeds, :func:`counterexamples.peers.generate.generated_traces`, generated once and put
    to every peer, each checked and its divergences shrunk as ``peer search`` does) and gather
    the columns.

    Args:
        adapters: ``--adapter`` values (:func:`resolve_matrix_adapter`), in column order.
        skipped: built-in peers left out, with the reason (shown in the matrix).
        progress: called with each adapter's label before it is searched.
        corpora: ``{name: (fixtures, third_party)}``: conformance corpora
            (:mod:`counterexamples.conformance`) each peer is also run through (the official
            one with the third-party relaxations, the generated one as is), a column group
            each in the rendered matrix.

    Raises:
        PeerError: an adapter that cannot be resolved or started; ValueError: two adapters
            with the same name (their finding ids would collide).
    """
    specs = [resolve_matrix_adapter(a) for a in adapters]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"--adapter: two adapters are named {', '.join(twice)} (finding ids "
                         "would collide); give each once")
    # the traces of `peer search --seed N --budget inf`, generated once for every peer
    traces, counts = generated_traces(seed, stateful=stateful, bfs_depth=bfs_depth)
    columns = []
    for spec in specs:
        if progress:
            progress(spec.label)
        with AdapterProcess(spec, timeout=timeout) as adapter:
            report = check_peer(adapter, traces, shrink=True, max_findings=max_findings)
        report.generated = dict(counts)
        columns.append(PeerColumn(spec, report, _conformance(spec, corpora or {}, timeout)))
    shown = {name: {"fixtures": len(fx), "thirdParty": third}
             for name, (fx, third) in (corpora or {}).items()}
    return Matrix(columns, list(skipped), seed, stateful, bfs_depth, shown)


def _conformance(spec: AdapterSpec, corpora: dict, timeout: float) -> dict:
    """``{corpus name: cell}``: the peer run through each conformance corpus."""
    from counterexamples.conformance.runner import adapter_answers, corpus_cell, run_fixtures
    out = {}
    for name, (fixtures, third_party) in corpora.items():
        answers = adapter_answers(fixtures, spec, timeout)
        out[name] = corpus_cell(run_fixtures(fixtures, answers, None, third_party))
    return out


def write_matrix(directory: str, matrix: Matrix, doc: Optional[dict] = None) -> list[str]:
    """Write ``matrix.json``, ``matrix.md``, ``matrix.html`` and every divergence finding
    (``findings/<id>.json|.jsonl``, :func:`counterexamples.findings.write_finding`) into
    ``directory``; returns the paths written, relative to it. ``doc``: ``matrix.to_json()`` when
    the caller has it already (not changed: the files' list goes into a copy)."""
    from counterexamples.findings import write_finding
    written = []
    findings = os.path.join(directory, "findings")
    os.makedirs(findings, exist_ok=True)
    for c in matrix.columns:
        for f in c.report.findings.values():
            written += [os.path.relpath(p, directory) for p in write_finding(f, findings)]
    doc = {**(matrix.to_json() if doc is None else doc), "files": sorted(written)}
    for name, text in (("matrix.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n"),
                       ("matrix.md", render_markdown(doc)), ("matrix.html", render_html(doc))):
        with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return [*MATRIX_FILES, *sorted(written)]


# --- rendering ----------------------------------------------------------------------------------

def cell_text(cell: dict, knob: Optional[str] = None) -> str:
    """A knob cell in words: the option (given the ``knob`` id, an option that is a deviation,
    :attr:`model.readings.Knob.deviations`, says so: the peer is not conformant there);
    ``a / b`` when several fit; ``inconsistent`` when none fits every separating trace; ``-``
    without evidence."""
    if cell["status"] == "determined":
        from model.readings import deviation_note
        return cell["behavesAs"] + (deviation_note(knob, cell["behavesAs"]) if knob else "")
    if cell["status"] == "undetermined":
        return " / ".join(cell["options"])
    if cell["status"] == "inconsistent":
        return "inconsistent"
    return "-"


def _set_aside(peer: dict) -> str:
    joint = peer.get("joint")
    return "-" if joint is None else str(len(joint["conflicts"]))


def _md(text: str) -> str:
    """Text for a Markdown table cell (pipes and line breaks escaped)."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _divergence_notes(d: dict) -> str:
    """What a divergence's clauses cell adds: that the peer stopped reading the stream, and the
    model's own rules outside the draft it rests on."""
    out = ""
    if d.get("divergenceKind") == "stopped-reading":
        out += f"; the peer stopped reading at event {d.get('stoppedAt')} (later events had no " \
               "effect)"
    elif d.get("divergenceKind") == "ignored-event":
        out += f"; the peer ignored event {d.get('divergesAt')} (its answer the same without it)"
    if d.get("outsideDraft"):
        out += "; rests on the model's own rules outside the draft: " + \
            ", ".join(d["outsideDraft"])
    return out


def render_markdown(doc: dict) -> str:
    """The matrix document (:meth:`Matrix.to_json`) as Markdown: the peers and their versions,
    the knob table (the draft's option first; a cell in bold does not admit it), and each peer's
    divergences with links to the findings."""
    peers = doc["peers"]
    out = [f"# Conformance matrix (seed {doc['seed']}, {doc['search']['stateful']} stateful "
           f"traces, BFS depth {doc['search']['bfsDepth']})", "", "## Peers", "",
           "| peer | adapter | version | traces | draft | reading | of which deviation | "
           "divergence | error | set aside |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in peers:
        n = p["counts"]
        out.append(f"| {_md(p['name'])} | `{_md(p['adapter'])}` | {_md(p['version'])} | "
                   f"{n['traces']} | {n['draft']} | {n['reading']} | {n.get('deviation', 0)} | "
                   f"{n['divergence']} | {n['error']} | {_set_aside(p)} |")
    for s in doc.get("skipped", []):
        out.append(f"| {_md(s['adapter'])} | - | not run: {_md(s['reason'])} | | | | | | | |")
    out += ["", "*of which deviation*: traces the peer matches only through a deviation (an "
            "option the pages' text rules out, named in the knob table): not conformant. "
            "*set aside*: traces the joint inference left out (no reading consistent with "
            "the traces before gives the peer's verdict there)."]
    out += ["", "## Which option each peer behaves as", "",
            "`-`: no trace separates the options; `a / b`: several fit; **bold**: the draft's "
            "option does not fit.", "",
            "| knob | draft | " + " | ".join(_md(p["name"]) for p in peers) + " |",
            "| --- | --- | " + " | ".join("---" for _ in peers) + " |"]
    for k in doc["knobs"]:
        row = []
        for p in peers:
            c = k["cells"][p["name"]]
            text = _md(cell_text(c, k["knob"]))
            row.append(f"**{text}**" if c["status"] != "no-evidence" and
                       k["draft"] not in c["options"] else text)
        out.append(f"| {k['knob']} | {_md(k['draft'])} | " + " | ".join(row) + " |")
    js = doc.get("jsProbes") or {}
    if any(js.values()):
        out += ["", "## Special keys and references to an activity", "",
                "Each peer's result on the probes of what JavaScript consumers get wrong "
                "(`draft`, `reading`, or `divergence: ` what differs from the nearest reading).",
                "", "| probe | " + " | ".join(_md(p["name"]) for p in peers) + " |",
                "| --- | " + " | ".join("---" for _ in peers) + " |"]
        for probe in JS_PROBES:
            cells = []
            for p in peers:
                r = js.get(p["name"], {}).get(probe)
                cells.append("-" if r is None else _md(r["class"] + (
                    ": " + ", ".join(r["differs"]) if r["class"] == "divergence" else "")))
            out.append(f"| {probe}: {_md(PROBES[probe])} | " + " | ".join(cells) + " |")
    out += _conformance_markdown(doc)
    out += ["", "## Divergences (the peer agrees with no reading)", ""]
    for p in peers:
        divs = doc["divergences"].get(p["name"], [])
        out.append(f"### {_md(p['name'])}: {len(divs)}")
        out.append("")
        for d in divs:
            out.append(f"- [{d['id']}]({d['file']}){'' if d['shrunk'] else ' (not shrunk)'}: "
                       f"from {_md(d['source'])}, at event {d['divergesAt']} "
                       f"({_md(d['event'])}), model branch `{d['branch']}`, differs in "
                       f"{_md(', '.join(d['aspects']))} from {_md(d['nearest'])}; clauses "
                       f"{', '.join(d['clauses'])}{_divergence_notes(d)}")
        out.append("")
    return "\n".join(out)


def _conformance_markdown(doc: dict) -> list[str]:
    """The conformance corpora's column groups (none when the matrix ran none): per peer and
    corpus, fixtures passed / failed / error / set aside and the keys it could not show."""
    conf = doc.get("conformance")
    if not conf:
        return []
    names = list(conf["corpora"])
    head = " | ".join(f"{_md(n)}: passed | failed | error | set aside" for n in names)
    out = ["", "## Conformance corpora", "",
           "; ".join(f"{_md(n)}: {c['fixtures']} fixtures"
                     + (" (third-party relaxations)" if c["thirdParty"] else "")
                     for n, c in conf["corpora"].items()) + ".", "",
           f"| peer | {head} | keys not observable |",
           "| --- | " + " | ".join("--- | --- | --- | ---" for _ in names) + " | --- |"]
    for p in doc["peers"]:
        cells = conf["cells"].get(p["name"], {})
        row, unseen = [], set()
        for n in names:
            c = cells.get(n, {"summary": {}, "notObservable": []})
            s = c["summary"]
            row.append(" | ".join(str(s.get(k, "-")) for k in ("passed", "failed", "error",
                                                                "relaxed")))
            unseen.update(c["notObservable"])
        out.append(f"| {_md(p['name'])} | " + " | ".join(row) + " | "
                   + (_md(", ".join(sorted(unseen))) or "-") + " |")
    for p in doc["peers"]:
        for n in names:
            failed = conf["cells"].get(p["name"], {}).get(n, {}).get("failed", [])
            if failed:
                out.append(f"\n{_md(p['name'])} fails {len(failed)} of {_md(n)}: "
                           + ", ".join(f"`{f}`" for f in failed))
    return out


def _conformance_html(doc: dict) -> str:
    """The conformance corpora's column groups as an HTML table (``id="conformance"``), or
    '' when the matrix ran none."""
    e = html.escape
    conf = doc.get("conformance")
    if not conf:
        return ""
    names = list(conf["corpora"])
    parts = ['<h2>Conformance corpora</h2><table id="conformance"><thead><tr><th rowspan="2">'
             "peer</th>"
             + "".join(f'<th colspan="4">{e(n)} ({conf["corpora"][n]["fixtures"]} fixtures'
                       f'{", third-party" if conf["corpora"][n]["thirdParty"] else ""})</th>'
                       for n in names)
             + '<th rowspan="2">keys not observable</th></tr><tr>'
             + "".join("<th>passed</th><th>failed</th><th>error</th><th>set aside</th>"
                       for _ in names) + "</tr></thead><tbody>"]
    for p in doc["peers"]:
        cells = conf["cells"].get(p["name"], {})
        row, unseen = [f"<tr><td>{e(p['name'])}</td>"], set()
        for n in names:
            c = cells.get(n, {"summary": {}, "failed": [], "notObservable": []})
            s = c["summary"]
            failed = ", ".join(c.get("failed", []))
            row.append("".join(f'<td title="{e(failed) if k == "failed" else ""}">'
                               f'{s.get(k, "-")}</td>'
                               for k in ("passed", "failed", "error", "relaxed")))
            unseen.update(c["notObservable"])
        row.append(f"<td>{e(', '.join(sorted(unseen))) or '-'}</td></tr>")
        parts.append("".join(row))
    parts.append("</tbody></table>")
    return "\n".join(parts)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #c8c8cc; padding: 0.3em 0.55em; text-align: left; vertical-align: top; }
th { background: #f0f0f3; position: sticky; top: 0; }
td.same { background: #eef7ee; } td.other { background: #fde9d9; font-weight: 600; }
td.none { color: #8e8e93; } td.split { background: #fff6d5; } td.bad { background: #f8d0d0; }
td.knob { font-weight: 600; white-space: nowrap; } code { font-size: 0.95em; }
td.question { max-width: 26em; } td.clauses { max-width: 30em; font-size: 0.92em; }
table.div { margin-bottom: 1em; } .legend span { padding: 0.1em 0.5em; margin-right: 0.6em; }
"""


def _first_sentence(text: str) -> str:
    """A knob's question up to its question mark (the rest is the explanation, kept in the
    cell's title)."""
    head, mark, _ = text.partition("?")
    return head + mark if mark else text


def _breakable(text: str) -> str:
    """``text`` escaped, with a line-break opportunity after each ``@``, ``:`` and ``/`` (a
    long header; a peer's name breaks at its hyphens by itself)."""
    out = html.escape(text)
    for c in "@:/":
        out = out.replace(c, c + "<wbr>")
    return out


def _cell_class(cell: dict, draft: str) -> str:
    if cell["status"] == "no-evidence":
        return "none"
    if cell["status"] == "inconsistent":
        return "bad"
    if cell["status"] == "undetermined":
        return "split"
    return "same" if cell["behavesAs"] == draft else "other"


def render_html(doc: dict) -> str:
    """The matrix document as one self-contained HTML page (no script, no external file): the
    peers table (``id="peers"``), the knob table (``id="knobs"``: a row per knob, a column per
    peer, headed by the peer's name as in the Markdown and the peers table, each cell classed ``same``/``other``/``split``/``bad``/``none`` against the draft) and
    the divergences, each linking its finding file. Every value is escaped."""
    e = html.escape
    peers = doc["peers"]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>activity-check conformance matrix</title>", f"<style>{_CSS}</style>",
             "</head><body>",
             f"<h1>Conformance matrix</h1><p>seed {doc['seed']}, "
             f"{doc['search']['stateful']} stateful traces, BFS depth "
             f"{doc['search']['bfsDepth']}, no time budget: the committed corpus, the probes "
             "and the search, per peer.</p>",
             '<h2>Peers</h2><table id="peers"><thead><tr><th>peer</th><th>adapter</th>'
             "<th>version</th><th>traces</th><th>draft</th><th>reading</th>"
             '<th title="reading traces the peer matches only through a deviation: not '
             'conformant">of which deviation</th><th>divergence</th>'
             '<th>error</th><th title="traces the joint inference set aside">set aside</th>'
             "</tr></thead><tbody>"]
    for p in peers:
        n = p["counts"]
        parts.append(f"<tr><td>{e(p['name'])}</td><td><code>{e(p['adapter'])}</code></td>"
                     f"<td>{e(p['version'])}</td><td>{n['traces']}</td><td>{n['draft']}</td>"
                     f"<td>{n['reading']}</td><td>{n.get('deviation', 0)}</td>"
                     f"<td>{n['divergence']}</td><td>{n['error']}</td>"
                     f"<td>{_set_aside(p)}</td></tr>")
    for s in doc.get("skipped", []):
        parts.append(f'<tr class="skipped"><td>{e(s["adapter"])}</td><td>-</td>'
                     f'<td colspan="8">not run: {e(s["reason"])}</td></tr>')
    parts.append("</tbody></table>")
    parts.append('<h2>Which option each peer behaves as</h2><p class="legend">'
                 '<span class="same" style="background:#eef7ee">the draft\'s option</span>'
                 '<span style="background:#fde9d9">another option</span>'
                 '<span style="background:#fff6d5">several fit</span>'
                 '<span style="background:#f8d0d0">inconsistent</span>'
                 '<span style="color:#8e8e93">- no evidence</span></p>')
    parts.append('<table id="knobs"><thead><tr><th>knob</th><th>question</th><th>draft</th>'
                 + "".join(f'<th data-peer="{e(p["name"])}" '
                           f'title="{e(p["adapter"])}: {e(p["version"])}">'
                           f'{_breakable(p["name"])}</th>' for p in peers)
                 + "</tr></thead><tbody>")
    for k in doc["knobs"]:
        row = [f'<tr data-knob="{e(k["knob"])}"><td class="knob">{e(k["knob"])}</td>'
               f'<td class="question" title="{e(k["question"])}">{e(_first_sentence(k["question"]))}'
               f'</td><td>{e(k["draft"])}</td>']
        for p in peers:
            c = k["cells"][p["name"]]
            title = f'{c["evidence"]} separating trace(s)'
            row.append(f'<td class="{_cell_class(c, k["draft"])}" title="{e(title)}">'
                       f"{e(cell_text(c, k['knob']))}</td>")
        parts.append("".join(row) + "</tr>")
    parts.append("</tbody></table>")
    conformance = _conformance_html(doc)
    if conformance:
        parts.append(conformance)
    parts.append('<h2>Divergences (the peer agrees with no reading)</h2><div id="divergences">')
    for p in peers:
        divs = doc["divergences"].get(p["name"], [])
        parts.append(f'<h3 data-peer="{e(p["name"])}">{e(p["name"])}: {len(divs)}</h3>')
        if divs:
            parts.append(f'<table class="div" data-peer="{e(p["name"])}"><thead><tr>'
                         "<th>finding</th><th>from</th><th>at event</th><th>model branch</th>"
                         "<th>differs in (from the nearest reading)</th><th>clauses</th>"
                         "</tr></thead><tbody>")
            for d in divs:
                parts.append(
                    f'<tr><td><a href="{e(d["file"])}">{e(d["id"])}</a>'
                    f'{"" if d["shrunk"] else " (not shrunk)"}</td><td>{e(d["source"])}</td>'
                    f'<td>{d["divergesAt"]}: {e(d["event"])}</td>'
                    f'<td><code>{e(d["branch"])}</code></td>'
                    f'<td>{e(", ".join(d["aspects"]))}; nearest: {e(d["nearest"])}</td>'
                    f'<td class="clauses">{e(", ".join(d["clauses"]) + _divergence_notes(d))}'
                    '</td></tr>')
            parts.append("</tbody></table>")
    parts.append("</div></body></html>")
    return "\n".join(parts) + "\n"

