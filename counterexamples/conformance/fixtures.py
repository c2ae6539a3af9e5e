"""Reading AG-UI conformance fixtures: the format's JSON Schema (:func:`schema`, read from
``counterexamples/schemas/ag-ui-fixture.schema.json``), the corpus gate's rules a schema cannot
state (:func:`gate_problems`), a folder's ``MANIFEST.txt`` checked both ways, and the
:class:`Fixture` record.

The format and the gate are those the corpus README describes
(``shared/data/ag-ui-conformance/draft/README.md``: "Adding a fixture", ``expect``,
``expectOverrides``, "The corpus gate"); paraphrased here, not copied. Every read is bounded
(:data:`MAX_FIXTURE_BYTES`, :data:`MAX_FIXTURES`) and every problem is a
:class:`FixtureError`, one line naming the file and, where there is one, the key.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Optional, Sequence

from model.text import quoted, schema_message
from model.wire import TraceFormatError, loads_json, read_bytes, undecodable_at

__all__ = ["SCHEMA_PATH", "MAX_FIXTURE_BYTES", "MAX_FIXTURES", "MANIFEST",
           "EXPECT_KEYS", "FixtureError", "Fixture", "schema", "schema_problems",
           "gate_problems", "fixture_from_json", "read_fixture", "load_fixtures",
           "manifest_problems", "official_corpus"]

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "schemas", "ag-ui-fixture.schema.json")
"""The JSON Schema (draft 2020-12) of one fixture file."""

MAX_FIXTURE_BYTES = 4 * 1024 * 1024
"""The largest fixture file read (bytes); a larger one is refused, not read."""

MAX_FIXTURES = 10_000
"""The most fixtures one run reads (files named and found in folders together)."""

MANIFEST = "MANIFEST.txt"
"""A corpus folder's listing: one ``NAME.json`` a line, ``#`` comments and blank lines ignored."""

EXPECT_KEYS = ("outcome", "errorContains", "runError", "eventTypes", "eventTypesAbsent",
               "eventPaths", "eventAbsentPaths", "warnings", "noWarnings", "messageCount",
               "messages", "state", "request", "requestAbsentPaths")
"""Every key of ``expect``, in the README's order (an override adds ``intentional``)."""


class FixtureError(ValueError):
    """A fixture or corpus that cannot be used: one line, naming the file and key (exit 2)."""


@dataclass(frozen=True)
class Fixture:
    """One fixture, as read.

    Attributes:
        name: its ``name`` (equal to the file name without ``.json``).
        path: the file it was read from (``"<memory>"`` for one built in memory).
        doc: the whole document (JSON values).
    """

    name: str
    path: str
    doc: dict = field(compare=False)

    @property
    def stream(self) -> list:
        return self.doc["stream"]

    @property
    def expect(self) -> dict:
        return self.doc["expect"]

    @property
    def overrides(self) -> dict:
        return self.doc.get("expectOverrides", {})

    def lane_expect(self, lane: Optional[str]) -> dict:
        """``expect`` with lane ``lane``'s override applied (its keys replace those of
        ``expect``; ``intentional`` is not a key to check); ``expect`` for None or a lane
        without an override."""
        out = dict(self.expect)
        if lane is not None and lane in self.overrides:
            out.update({k: v for k, v in self.overrides[lane].items() if k != "intentional"})
        return out


@lru_cache(maxsize=1)
def schema() -> dict:
    """The fixture schema (read once from :data:`SCHEMA_PATH`)."""
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _where(path: Sequence) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def schema_problems(doc: Any) -> list[str]:
    """What the schema refuses in ``doc``, each ``key path: message`` (empty when valid), in a
    fixed order (by path)."""
    import jsonschema
    validator = jsonschema.Draft202012Validator(schema())
    out = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.path]):
        message = schema_message(error)  # a long value cut inside its quotes, not the message
        if error.validator == "additionalProperties":
            message = message.replace("Additional properties are not allowed",
                                      "unknown key(s) refused")
        out.append(f"{_where(error.path)}: {message}")
    return out


def _effective(expect: dict) -> list[str]:
    """The keys of a lane's resolved expect that assert something beside ``outcome`` (an empty
    list or object asserts nothing, the README's trap)."""
    out = []
    for key, value in expect.items():
        if key in ("outcome", "intentional"):
            continue
        if key == "noWarnings" and value is not True:
            continue
        if isinstance(value, (list, dict)) and not value and key not in ("messages",):
            continue
        out.append(key)
    return out


def gate_problems(doc: dict, file_name: Optional[str] = None) -> list[str]:
    """The corpus gate's rules beyond the schema, for a schema-valid ``doc``: the name equals
    the file name; on every lane (the base and each override) a key that asserts something
    beside ``outcome``; a lane whose ``outcome`` is ``failed`` says which failure
    (``errorContains`` or ``runError``). Each problem one line, naming the lane."""
    out = []
    if file_name is not None and doc.get("name") + ".json" != os.path.basename(file_name):
        out.append(f"name: {quoted(doc.get('name'))} is not the file name "
                   f"{quoted(os.path.basename(file_name))}")
    lanes: list[tuple[str, dict]] = [("expect", dict(doc["expect"]))]
    for lane, override in sorted(doc.get("expectOverrides", {}).items()):
        merged = dict(doc["expect"])
        merged.update({k: v for k, v in override.items() if k != "intentional"})
        lanes.append((f"expectOverrides.{lane}", merged))
    for where, expect in lanes:
        if not _effective(expect):
            out.append(f"{where}: asserts nothing beside outcome")
        if expect.get("outcome") == "failed" and not (expect.get("errorContains")
                                                      or expect.get("runError")):
            out.append(f"{where}: outcome failed without errorContains or runError")
    return out


def fixture_from_json(doc: Any, path: str = "<memory>", file_name: Optional[str] = None
                      ) -> Fixture:
    """A :class:`Fixture` from its document, checked by the schema and the gate.

    Raises:
        FixtureError: ``PATH: KEY: what is wrong`` for the first problem found.
    """
    problems = schema_problems(doc)
    if not problems:
        problems = gate_problems(doc, file_name)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise FixtureError(f"{path}: {problems[0]}{more}")
    return Fixture(doc["name"], path, doc)


def _read_text(path: str, listed: bool = True) -> str:
    """The text of ``path``, read with :func:`model.wire.read_bytes` (bounded; ``listed``: a
    name from a folder's listing, so a symbolic link, a named pipe or a device is refused
    without being opened for reading, never waited on)."""
    try:
        data = read_bytes(path, listed=listed, max_bytes=MAX_FIXTURE_BYTES)
    except TraceFormatError as exc:
        reason = exc.reason
        if reason.startswith("larger than"):
            reason = f"larger than {MAX_FIXTURE_BYTES} bytes; not read"
        raise FixtureError(f"{path}: {reason}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:  # located as a JSON error is: its line
        line, _ = undecodable_at(data, exc)
        raise FixtureError(f"{path}: line {line}: not UTF-8 (byte {exc.start})") from None


def read_fixture(path: str, listed: bool = False) -> Fixture:
    """Read, parse (strict JSON: no duplicate member, NaN or too deep nesting) and check one
    fixture file (``listed``: found in a folder, so read only from a regular file). Raises
    :class:`FixtureError` (one line, naming the file, line and key)."""
    text = _read_text(path, listed)
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        raise FixtureError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except ValueError as exc:
        raise FixtureError(f"{path}: not valid JSON: {exc}") from None
    return fixture_from_json(doc, path, path)


def _manifest_names(folder: str) -> Optional[list[str]]:
    """The names ``folder/MANIFEST.txt`` lists, or None when there is none."""
    path = os.path.join(folder, MANIFEST)
    if not os.path.isfile(path):
        return None
    text = _read_text(path)
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def manifest_problems(folder: str, files: Iterable[str]) -> list[str]:
    """The MANIFEST checked both ways against the ``.json`` files found: a listed file missing,
    a file not listed, a name listed twice. Empty when the folder has no MANIFEST."""
    listed = _manifest_names(folder)
    if listed is None:
        return []
    found = set(files)
    out = []
    seen: set = set()
    for name in listed:
        if name in seen:
            out.append(f"{os.path.join(folder, MANIFEST)}: {name} is listed twice")
        seen.add(name)
        if name not in found:
            out.append(f"{os.path.join(folder, MANIFEST)}: lists {name}, which is not there")
    for name in sorted(found - seen):
        out.append(f"{os.path.join(folder, MANIFEST)}: does not list {name}")
    return out


def _folder_files(folder: str) -> list[str]:
    """The fixture files of a folder: its ``*.json``, or those of its ``streams/`` when it has
    one (the corpus's own layout: ``draft/streams/``), sorted; the MANIFEST checked."""
    streams = os.path.join(folder, "streams")
    if os.path.isdir(streams) and not any(n.endswith(".json") for n in os.listdir(folder)):
        folder = streams
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError as exc:
        raise FixtureError(f"{folder}: cannot list the folder: {exc.strerror or exc}") from None
    problems = manifest_problems(folder, names)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise FixtureError(problems[0] + more)
    if not names:
        raise FixtureError(f"{folder}: no fixture (.json) files")
    return [os.path.join(folder, n) for n in names]


def load_fixtures(paths: Sequence[str]) -> list[Fixture]:
    """The fixtures of ``paths`` (files, or folders of ``NAME.json`` with an optional MANIFEST),
    in the order given, each folder's sorted by name. Raises :class:`FixtureError` for a path
    that does not exist, a bad fixture or MANIFEST, two fixtures with one name, or more than
    :data:`MAX_FIXTURES`."""
    files: list[tuple[str, bool]] = []
    for path in paths:
        if os.path.isdir(path):
            files.extend((f, True) for f in _folder_files(path))
        elif os.path.lexists(path):
            files.append((path, False))  # named by the user: read_bytes never waits on a pipe
        else:
            raise FixtureError(f"{path}: no such file or folder")
        if len(files) > MAX_FIXTURES:
            raise FixtureError(f"{path}: more than {MAX_FIXTURES} fixtures; not read")
    out: list[Fixture] = []
    names: dict[str, str] = {}
    for f, listed in files:
        fixture = read_fixture(f, listed)
        if fixture.name in names:
            raise FixtureError(f"{f}: fixture {fixture.name} is also {names[fixture.name]}")
        names[fixture.name] = f
        out.append(fixture)
    return out


CORPUS_ENV = "ACTIVITY_CHECK_CONFORMANCE"
"""An environment variable naming the official corpus folder (overrides the search)."""


def official_corpus() -> Optional[str]:
    """The official draft corpus's folder: :data:`CORPUS_ENV` when set, else the first
    ``shared/data/ag-ui-conformance/draft`` found beside this checkout or a folder above it (the
    project keeps the field's data out of the repository); None when there is none."""
    if os.environ.get(CORPUS_ENV):
        return os.environ[CORPUS_ENV]
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for _ in range(4):
        here = os.path.dirname(here)
        candidate = os.path.join(here, "shared", "data", "ag-ui-conformance", "draft")
        if os.path.isdir(candidate):
            return candidate
    return None
