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
from model.wire import loads_json, parse_events, read_text
from counterexamples.findings import AmbiguityFinding, is_finding_id
from counterexamples.outdir import OutputPlan

__all__ = ["corpus_dir", "load_corpus", "entry_of", "check_entry", "check_corpus",
           "write_corpus", "update_corpus", "CorpusUpdate", "CorpusChange", "diff_ids"]


def corpus_dir() -> str:
    """The directory of the committed corpus entries (inside the installed package)."""
    return str(resources.files("counterexamples").joinpath("corpus", "findings"))


def load_corpus(directory: Optional[str] = None) -> list[dict]:
    """Every corpus entry (``<id>.json``), sorted by file name. Raises ValueError naming a file
    that is not an entry: not strict JSON (:func:`model.wire.loads_json`), not an object with
    ``id``, ``events`` and ``classes``, or an ``id`` that is not an ambiguity finding id
    (:func:`counterexamples.findings.is_finding_id`) or not the file's name."""
    directory = directory or corpus_dir()
    entries = []
    if not os.path.isdir(directory):
        return entries
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory, name)
        try:
            entry = loads_json(read_text(path, listed=True))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(entry, dict) or not {"id", "events", "classes"} <= set(entry):
            raise ValueError(f"{path}: not a corpus entry (needs id, events, classes)")
        if not is_finding_id(entry["id"], AmbiguityFinding.KIND) or \
                name != f"{entry['id']}.json":
            raise ValueError(f"{path}: not a corpus entry (its id {json.dumps(entry['id'])[:80]} "
                             "is not an ambiguity finding id naming the file)")
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


def write_corpus(finding_jsons: Iterable[Mapping], directory: Optional[str] = None,
                 allow_empty: bool = False) -> list[str]:
    """Replace the corpus's entries with those of ``finding_jsons`` (ambiguity findings,
    :class:`~counterexamples.findings.AmbiguityFinding`, or their JSON documents); returns the
    paths written (``<directory>/<id>.json``, one per distinct id, in the order given).

    Every entry is built and checked before anything is touched; the new corpus is then
    written into a staging directory beside ``directory`` and swapped in whole
    (:class:`counterexamples.outdir.OutputPlan`): an error, an interrupt or a full disk leaves
    the corpus exactly as it was. Files of the directory that are not entries (not
    ``*.json``) are kept; a symbolic link among the entries is replaced, never followed.

    Args:
        allow_empty: write an empty corpus when no finding is given (refused otherwise, since
            an empty corpus checks nothing).

    Raises:
        ValueError: no finding given (without ``allow_empty``); a finding that is not an
            ambiguity finding with an id of the finding scheme
            (:func:`counterexamples.findings.is_finding_id`: an id names its file, so nothing
            else may), events and verdicts (naming it); ``directory`` a symbolic link or not a
            directory. The corpus is then unchanged.
        OSError: the corpus cannot be written (it is then unchanged too).
    """
    entries: dict[str, dict] = {}
    for finding in finding_jsons:
        fid = finding.get("id", "?") if isinstance(finding, Mapping) else "?"
        if not isinstance(finding, AmbiguityFinding) and not (
                isinstance(finding, Mapping) and finding.get("kind") == AmbiguityFinding.KIND):
            raise ValueError(f"{fid}: not an ambiguity finding")
        if not is_finding_id(fid, AmbiguityFinding.KIND):
            raise ValueError(f"{json.dumps(fid)[:120]}: not an ambiguity finding id "
                             "(AMB-<knob>-<8 hex digits>); the corpus is left as it was")
        try:
            entries[fid] = entry_of(finding)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{fid}: not a finding as 'run' writes it "
                             f"({type(exc).__name__}: {exc})") from None
    if not entries and not allow_empty:
        raise ValueError("no ambiguity finding to write; the corpus is left as it was")
    directory = directory or corpus_dir()
    if os.path.islink(directory) or (os.path.lexists(directory) and
                                     not os.path.isdir(directory)):
        raise ValueError(f"{directory}: not a directory (a symbolic link is not followed)")
    old = frozenset(n for n in os.listdir(directory) if n.endswith(".json")) \
        if os.path.isdir(directory) else frozenset()
    plan = OutputPlan(directory, "", replaced=old, earlier=bool(old))
    with plan.staged() as staging:
        for fid, entry in entries.items():
            with open(os.path.join(staging, f"{fid}.json"), "x", encoding="utf-8") as fh:
                json.dump(entry, fh, indent=1, ensure_ascii=False, sort_keys=True)
                fh.write("\n")
    return [os.path.join(directory, f"{fid}.json") for fid in entries]


@dataclass
class CorpusUpdate:
    """What :func:`update_corpus` changed, by entry id (each list sorted).

    Attributes:
        written: the paths written (as :func:`write_corpus` returns them).
        added: ids the corpus did not hold before; dropped: ids it no longer holds.
        changed: ids it holds still, whose entry (trace, knob or verdict classes) is not the
            one it held (an entry that could not be read before counts as changed).
        kept: how many ids it holds still with the same entry.
    """

    written: list
    added: list
    dropped: list
    changed: list
    kept: int

    def lines(self) -> list[str]:
        """One line per change, ``<id>: added|dropped|changed (...)``, as ``corpus check``
        lists its changes: added, then dropped, then changed, each in id order."""
        return ([f"{i}: added" for i in self.added] + [f"{i}: dropped" for i in self.dropped]
                + [f"{i}: changed (its trace or verdict classes differ from the entry it "
                   "replaces)" for i in self.changed])

    def to_json(self) -> dict:
        """``{"entries", "added", "dropped", "changed", "kept"}`` (``entries``: how many the
        corpus now holds)."""
        return {"entries": len(self.written), "added": self.added, "dropped": self.dropped,
                "changed": self.changed, "kept": self.kept}


def _entries_by_id(directory: str) -> dict[str, Optional[str]]:
    """``{id: the entry's canonical JSON text, or None when it cannot be read}`` for every
    ``<id>.json`` of ``directory`` (empty when there is none); never raises for a bad entry,
    which is what an update may be replacing."""
    found: dict[str, Optional[str]] = {}
    if not os.path.isdir(directory):
        return found
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            text = read_text(os.path.join(directory, name), listed=True)
            found[name[:-5]] = json.dumps(loads_json(text), sort_keys=True)
        except ValueError:  # TraceFormatError (unreadable, a link, a pipe) or not JSON
            found[name[:-5]] = None
    return found


def update_corpus(finding_jsons: Iterable[Mapping], directory: Optional[str] = None,
                  allow_empty: bool = False) -> CorpusUpdate:
    """:func:`write_corpus`, and what it changed: the ids added, dropped and changed, compared
    by entry with what the corpus held before (``activity-check corpus update`` lists them).

    Raises:
        ValueError, OSError: as :func:`write_corpus` (the corpus is then unchanged).
    """
    directory = directory or corpus_dir()
    before = _entries_by_id(directory)
    written = write_corpus(finding_jsons, directory, allow_empty)
    after = _entries_by_id(directory)
    both = before.keys() & after.keys()
    changed = sorted(i for i in both if before[i] is None or before[i] != after[i])
    return CorpusUpdate(written, sorted(after.keys() - before.keys()),
                        sorted(before.keys() - after.keys()), changed, len(both) - len(changed))


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
