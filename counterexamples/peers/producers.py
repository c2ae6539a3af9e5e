"""The producer matrix: real AG-UI producers, driven offline, each stream linted.

The consumer matrix (:mod:`counterexamples.peers.matrix`) puts real consumers against the model;
this is its other half. Real producers that emit activity events are run through scripted
scenarios with no network and no model (``peers/producers/``: ``produce.mjs`` for the Node
middlewares, ``mastra/produce-mastra.mjs`` for ``@ag-ui/mastra``, ``python_producers.py`` for
the Python integrations, each writing one JSON line per stream), and every stream is judged as ``activity-check lint`` judges it, under every producer
reading (:func:`counterexamples.lint.linter.lint_wire`), with the open questions it still depends
on (:func:`counterexamples.lint.exposure.exposure`).

A violation lint reports is listed as the producer's fault only after it was checked by hand
against the spec pages: ``peers/producers/checked.json`` holds those checks
(``{"checks": [{"producer", "scenario", "clause", "eventIndex", "fault", "how"}]}``, ``fault``:
``producer`` (the producer's fault), ``scenario`` (our script's doing), ``lint`` (a false alarm of
ours)); a violation without a check is shown as *not yet checked*.

:func:`build_producer_matrix` gives the JSON document (schema ``activity-check/producers/1``,
``counterexamples/schemas/producers.schema.json``); :func:`render_producers_markdown` its page;
:func:`write_producer_matrix` writes ``producers.json``, ``producers.md`` and each stream as
``producers/<producer>--<scenario>.jsonl`` beside the consumer matrix.

Layering: uses ``model`` and :mod:`counterexamples.lint`; the CLI (:mod:`activity_check.cmd_producers`)
only wires it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from counterexamples.lint.exposure import exposure
from counterexamples.lint.linter import lint_wire
from counterexamples.peers.adapter import PEERS_DIR
from model.wire import parse_event

__all__ = ["PRODUCER_SCRIPTS", "ProducerScript", "ProducerStream", "script_ready",
           "run_producer_scripts", "judge_stream", "build_producer_matrix",
           "render_producers_markdown", "write_producer_matrix", "PRODUCERS_SCHEMA",
           "PRODUCER_FILES", "load_checks"]

PRODUCERS_SCHEMA = "activity-check/producers/1"
"""The ``schema`` of ``producers.json``."""

PRODUCER_FILES = ("producers.json", "producers.md")
"""What :func:`write_producer_matrix` writes (with ``producers/<stream>.jsonl``)."""

FOLDER = os.path.join(PEERS_DIR, "producers")
CHECKS_PATH = os.path.join(FOLDER, "checked.json")
MAX_OUTPUT = 64 * 1024 * 1024
"""Bound on what one producer script may write (bytes): more is refused, not read."""


@dataclass(frozen=True)
class ProducerScript:
    """One script of ``peers/producers/``: ``name`` (shown when it cannot run), ``argv`` (the
    program and its arguments, the script relative to ``peers/producers``), ``toolchain``
    (``node`` or ``python``), ``needs`` (a path under the checkout that must exist: the
    installed packages or the venv)."""

    name: str
    argv: tuple[str, ...]
    toolchain: str
    needs: str


_ROOT = os.path.dirname(PEERS_DIR)
PRODUCER_SCRIPTS: tuple[ProducerScript, ...] = (
    ProducerScript("Node producers (@ag-ui/a2ui-middleware, @ag-ui/mcp-apps-middleware)",
                   ("node", "produce.mjs"), "node",
                   os.path.join(FOLDER, "node_modules", "@ag-ui", "a2ui-middleware")),
    ProducerScript("@ag-ui/mastra (a replayed Mastra agent)",
                   ("node", os.path.join("mastra", "produce-mastra.mjs")), "node",
                   os.path.join(FOLDER, "mastra", "node_modules", "@ag-ui", "mastra")),
    ProducerScript("pydantic-ai (the dev venv)", (sys.executable, "python_producers.py",
                                                  "--only", "pydantic-ai"), "python", ""),
    ProducerScript("agent-framework-ag-ui (.venv-producers, the producers extra)",
                   (os.path.join(_ROOT, ".venv-producers", "bin", "python"),
                    "python_producers.py", "--only", "agent-framework-ag-ui"), "python",
                   os.path.join(_ROOT, ".venv-producers", "bin", "python")),
)
"""The scripts the producer matrix runs, in page order."""


def script_ready(script: ProducerScript) -> Optional[str]:
    """None when ``script`` can run here; otherwise why not (no ``node``, packages or venv
    missing: ``make peers`` and ``make producers-venv`` install them)."""
    if script.toolchain == "node" and shutil.which("node") is None:
        return "Node.js is not installed (no 'node' on PATH)"
    if script.needs and not os.path.exists(script.needs):
        how = "make peers" if script.toolchain == "node" else "make producers-venv"
        return f"{os.path.relpath(script.needs, _ROOT)} is missing (run '{how}')"
    return None


@dataclass(frozen=True)
class ProducerStream:
    """One stream a producer wrote: ``producer`` and ``version`` (the package), ``scenario``
    (its name) and ``about`` (what the script does), ``events`` (wire dicts), ``error`` (the
    producer failing outright, or None)."""

    producer: str
    version: str
    scenario: str
    about: str
    events: tuple
    error: Optional[str] = None


def _parse_lines(text: str, source: str) -> list[ProducerStream]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(ProducerStream(str(d["producer"]), str(d["version"]), str(d["scenario"]),
                                      str(d.get("about", "")), tuple(d["events"]),
                                      d.get("error")))
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(f"{source}: line {n} is not a stream line ({exc})") from None
    return out


def run_producer_scripts(scripts: Sequence[ProducerScript] = PRODUCER_SCRIPTS,
                         timeout: float = 300.0,
                         progress: Optional[Callable[[str], None]] = None
                         ) -> tuple[list[ProducerStream], list[tuple[str, str]]]:
    """Run every script that can run here; returns its streams, in order, and ``(script,
    reason)`` for those that could not run or failed (exit status, last stderr line).

    Each script runs in ``peers/producers`` with ``timeout`` seconds; its stdout is read up to
    :data:`MAX_OUTPUT` bytes."""
    streams, skipped = [], []
    for script in scripts:
        reason = script_ready(script)
        if reason:
            skipped.append((script.name, reason))
            continue
        if progress:
            progress(script.name)
        try:
            done = subprocess.run(script.argv, cwd=FOLDER, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            skipped.append((script.name, f"no end within {timeout:g} s"))
            continue
        except OSError as exc:
            skipped.append((script.name, f"cannot start: {exc}"))
            continue
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        if done.returncode != 0:
            skipped.append((script.name, f"exit status {done.returncode}: "
                                         f"{err[-1] if err else 'no message'}"))
            continue
        if len(done.stdout) > MAX_OUTPUT:
            skipped.append((script.name, f"wrote more than {MAX_OUTPUT} bytes"))
            continue
        found = _parse_lines(done.stdout.decode("utf-8", "replace"), script.name)
        if not found:
            skipped.append((script.name, f"no stream written: {err[-1] if err else 'no message'}"))
        streams += found
    return streams, skipped


def load_checks(path: str = CHECKS_PATH) -> dict[tuple, dict]:
    """The hand checks, keyed ``(producer, scenario, clause, eventIndex)`` (see the module's
    docstring); {} when the file is absent."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    return {(c["producer"], c["scenario"], c["clause"], c["eventIndex"]): c
            for c in doc["checks"]}


def judge_stream(stream: ProducerStream, checks: Optional[dict] = None) -> dict:
    """One row of the producer matrix: ``{"producer", "version", "scenario", "about", "events",
    "error", "verdict", "violations", "exposure", "file"}``. ``verdict``: ``conformant``,
    ``conformant with warnings``, ``not conformant`` or ``producer failed`` (no stream); each
    violation is lint's (:meth:`counterexamples.lint.linter.LintViolation.to_json`) with
    ``check`` (the hand check's ``fault`` and ``how``, or None: not yet checked); ``exposure`` the
    questions (knob ids) the stream leaves open for consumers."""
    checks = load_checks() if checks is None else checks
    report = lint_wire(list(stream.events), source=f"{stream.producer} {stream.scenario}")
    violations = []
    for v in report.violations:
        item = v.to_json()
        c = checks.get((stream.producer, stream.scenario, v.clause, v.event_index))
        item["check"] = None if c is None else {"fault": c["fault"], "how": c["how"]}
        violations.append(item)
    if stream.error and not stream.events:
        verdict = "producer failed"
    elif not report.conformant:
        verdict = "not conformant"
    else:
        verdict = "conformant with warnings" if report.count("warning") else "conformant"
    open_questions = exposure([parse_event(e) for e in stream.events if isinstance(e, dict)])
    return {"producer": stream.producer, "version": stream.version, "scenario": stream.scenario,
            "about": stream.about, "events": len(stream.events), "error": stream.error,
            "verdict": verdict, "violations": violations,
            "exposure": [e.knob for e in open_questions.exposures],
            "file": f"producers/{_slug(stream.producer)}--{_slug(stream.scenario)}.jsonl"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def build_producer_matrix(streams: Sequence[ProducerStream],
                          skipped: Sequence[tuple[str, str]] = (),
                          checks: Optional[dict] = None) -> dict:
    """The producer matrix as JSON: ``{"tool", "schema", "producers": [{"producer", "version",
    "streams"}], "streams": [row...], "skipped": [{"script", "reason"}], "counts"}`` (a row:
    :func:`judge_stream`). No timings: the same scripts give the same document."""
    checks = load_checks() if checks is None else checks
    rows = [judge_stream(s, checks) for s in streams]
    producers: dict[tuple[str, str], int] = {}
    for r in rows:
        producers[(r["producer"], r["version"])] = producers.get((r["producer"], r["version"]), 0) + 1
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return {"tool": "activity-check", "schema": PRODUCERS_SCHEMA,
            "producers": [{"producer": p, "version": v, "streams": n}
                          for (p, v), n in producers.items()],
            "streams": rows, "skipped": [{"script": a, "reason": b} for a, b in skipped],
            "counts": dict(sorted(counts.items()))}


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_producers_markdown(doc: dict) -> str:
    """The producer matrix's page (Markdown) from its JSON document."""
    lines = ["# Producer matrix", "",
             f"{len(doc['streams'])} streams from {len(doc['producers'])} producers, each linted "
             "under every producer reading (`activity-check lint`), with the open questions "
             "consumers still read two ways on it (`lint --exposure`).", "",
             "| producer | version | streams |", "| --- | --- | --- |"]
    lines += [f"| {_md(p['producer'])} | {_md(p['version'])} | {p['streams']} |"
              for p in doc["producers"]]
    lines += ["", "| producer | scenario | events | verdict | violations | open questions |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in doc["streams"]:
        found = "; ".join(f"{v['clause']} @{v['eventIndex']}" for v in r["violations"]) or "-"
        lines.append(f"| {_md(r['producer'])} | [{_md(r['scenario'])}]({r['file']}) | "
                     f"{r['events']} | {r['verdict']} | {_md(found)} | "
                     f"{', '.join(r['exposure']) or '-'} |")
    listed = [(r, v) for r in doc["streams"] for v in r["violations"]]
    lines += ["", "## Violations", ""]
    if not listed:
        lines.append("None: every stream is conformant under every producer reading.")
    for r, v in listed:
        check = v["check"]
        who = ("not yet checked by hand" if check is None else
               {"producer": "the producer's fault", "scenario": "our scenario's doing",
                "lint": "a false alarm of lint"}.get(check["fault"], check["fault"]))
        lines.append(f"- **{_md(r['producer'])}**, {_md(r['scenario'])}, event "
                     f"{v['eventIndex']} {_md(v['eventType'] or '')}: {v['clause']} "
                     f"({v['severity']}) {_md(v['detail'])} - {who}"
                     + (f": {_md(check['how'])}" if check else ""))
    for r in doc["streams"]:
        if r["error"]:
            lines.append(f"- {_md(r['producer'])} {_md(r['scenario'])}: the producer failed: "
                         f"{_md(r['error'])}")
    lines += ["", "## Scenarios", ""]
    lines += [f"- {_md(r['producer'])} **{_md(r['scenario'])}**: {_md(r['about'])}"
              for r in doc["streams"]]
    if doc["skipped"]:
        lines += ["", "## Not run here", ""]
        lines += [f"- {_md(s['script'])}: {_md(s['reason'])}" for s in doc["skipped"]]
    return "\n".join(lines) + "\n"


def write_producer_matrix(directory: str, doc: dict, streams: Sequence[ProducerStream]
                          ) -> list[str]:
    """Write ``producers.json``, ``producers.md`` and every stream (``producers/<producer>--
    <scenario>.jsonl``, one wire event a line) into ``directory`` (made when missing); returns
    the paths written, relative to it."""
    written = []
    folder = os.path.join(directory, "producers")
    os.makedirs(folder, exist_ok=True)
    for s, row in zip(streams, doc["streams"]):
        path = os.path.join(directory, row["file"])
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in s.events)
        written.append(row["file"])
    for name, text in (("producers.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n"),
                       ("producers.md", render_producers_markdown(doc))):
        with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(name)
    return written
