"""The committed corpus: minimal traces of every finding the default run produces, with the verdict
each class of readings gives on them, replayed by the test suite.

``corpus/findings/<id>.json`` holds one entry: the finding id, kind and knob, its trace (wire
events) and its expected verdict classes (``readings``: the assignments as text; ``verdict``: the
verdict without free-text details). :func:`check_corpus` replays every entry on the model and
reports each change: a class whose verdict moved, a class that appeared or vanished. A change in the
model, or in a wording the model encodes, thus shows up as a corpus diff, never silently.
``activity-check corpus update OUT`` rewrites the corpus from a run's output.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Mapping, Optional

from model.readings import describe_assignment
from model.verdict import partition
from model.wire import parse_events
from counterexamples.findings import AmbiguityFinding

__all__ = ["corpus_dir", "load_corpus", "entry_of", "check_entry", "check_corpus",
           "write_corpus", "CorpusChange", "diff_ids"]


def corpus_dir() -> str:
    """The directory of the committed corpus entries (inside the installed package)."""
    return str(resources.files("counterexamples").joinpath("corpus", "findings"))


def load_corpus(directory: Optional[str] = None) -> list[dict]:
    """Every corpus entry, sorted by id. Raises ValueError naming a file that is not an entry."""
    directory = directory or corpus_dir()
    entries = []
    if not os.path.isdir(directory):
        return entries
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory, name)
        with open(path, encoding="utf-8") as fh:
            try:
                entry = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(entry, dict) or not {"id", "events", "classes"} <= set(entry):
            raise ValueError(f"{path}: not a corpus entry (needs id, events, classes)")
        entries.append(entry)
    return entries


def _classes(events) -> list[dict]:
    return [{"readings": [describe_assignment(a) for a in c.assignments],
             "verdict": c.verdict.to_json(detail=False)} for c in partition(events)]


def entry_of(finding_json: Mapping) -> dict:
    """A corpus entry from an ambiguity finding or its JSON (see
    :class:`counterexamples.findings.AmbiguityFinding`):
    id, kind, knob, events, and the verdict classes recomputed from the trace."""
    events = parse_events(finding_json["events"])
    return {"id": finding_json["id"], "kind": finding_json.get("kind", "ambiguity"),
            "knob": finding_json.get("knob"), "events": finding_json["events"],
            "classes": _classes(events)}


@dataclass
class CorpusChange:
    """One difference between a corpus entry and what the model now says."""

    id: str
    what: str

    def __str__(self) -> str:
        return f"{self.id}: {self.what}"


def check_entry(entry: dict) -> list[CorpusChange]:
    """Replay one entry; the changes (empty when the model still gives the recorded verdicts)."""
    now = {tuple(c["readings"]): c["verdict"] for c in _classes(parse_events(entry["events"]))}
    then = {tuple(c["readings"]): c["verdict"] for c in entry["classes"]}
    changes = []
    for readings, verdict in then.items():
        label = "; ".join(readings)
        if readings not in now:
            changes.append(CorpusChange(entry["id"], f"class [{label}] no longer exists"))
        elif now[readings] != verdict:
            changes.append(CorpusChange(entry["id"], f"verdict of class [{label}] changed: "
                                        f"was {json.dumps(verdict, sort_keys=True)}, now "
                                        f"{json.dumps(now[readings], sort_keys=True)}"))
    for readings in now.keys() - then.keys():
        changes.append(CorpusChange(entry["id"], f"new class [{'; '.join(readings)}]"))
    return changes


def check_corpus(directory: Optional[str] = None) -> list[CorpusChange]:
    """Replay the whole corpus; every change found."""
    return [change for entry in load_corpus(directory) for change in check_entry(entry)]


def write_corpus(finding_jsons: Iterable[Mapping], directory: Optional[str] = None) -> list[str]:
    """Replace the corpus's entries with those of ``finding_jsons`` (ambiguity findings,
    :class:`~counterexamples.findings.AmbiguityFinding`, or their JSON documents); returns the
    paths written.

    Every entry is built before anything is touched, and the new files are written beside the
    old ones before the old ``*.json`` entry files are removed, so a bad finding leaves the
    corpus as it was.

    Raises:
        ValueError: no finding given, or a finding that is not an ambiguity finding with an
            id, events and verdicts (naming it); the corpus is then unchanged.
    """
    entries = []
    for finding in finding_jsons:
        if not isinstance(finding, AmbiguityFinding) and not (
                isinstance(finding, Mapping) and finding.get("kind") == AmbiguityFinding.KIND):
            raise ValueError(f"{finding.get('id', '?') if isinstance(finding, Mapping) else '?'}: "
                             "not an ambiguity finding")
        try:
            entries.append(entry_of(finding))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{finding.get('id', '?')}: not a finding as 'run' writes it "
                             f"({type(exc).__name__}: {exc})") from None
    if not entries:
        raise ValueError("no ambiguity finding to write; the corpus is left as it was")
    directory = directory or corpus_dir()
    os.makedirs(directory, exist_ok=True)
    old = [n for n in os.listdir(directory) if n.endswith(".json")]
    staged = []
    for entry in entries:
        path = os.path.join(directory, f"{entry['id']}.json")
        with open(path + ".new", "w", encoding="utf-8") as fh:
            json.dump(entry, fh, indent=1, ensure_ascii=False, sort_keys=True)
            fh.write("\n")
        staged.append(path)
    for name in old:
        os.remove(os.path.join(directory, name))
    for path in staged:
        os.replace(path + ".new", path)
    return staged


def diff_ids(found: Iterable[str], directory: Optional[str] = None) -> dict:
    """``{"new": [...], "vanished": [...], "kept": n, "rewitnessed": [...]}``: finding ids of a
    run against the corpus. ``rewitnessed`` names the findings (an id without its hash, e.g.
    ``AMB-Q1``) that are both new and vanished: the same question, found with another witness
    trace (another vocabulary, depth or seed can give one)."""
    found = set(found)
    known = {e["id"] for e in load_corpus(directory)}
    new, vanished = sorted(found - known), sorted(known - found)
    stem = lambda fid: fid.rsplit("-", 1)[0]  # noqa: E731 - the id without its trace hash
    return {"new": new, "vanished": vanished, "kept": len(found & known),
            "rewitnessed": sorted({stem(i) for i in new} & {stem(i) for i in vanished})}
