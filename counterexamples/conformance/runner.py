"""Running AG-UI conformance fixtures against a consumer and judging every ``expect`` key.

A consumer is observed through the adapter protocol's answer (``counterexamples/peers``, README
"Adapter protocol", grown by the optional members ``events``, ``request`` and ``observes``, see
docs/conformance.md): the reference model in-process (:func:`model_answers`, any reading or a zoo
mutant) or any adapter process (:func:`adapter_answers`). :func:`judge` evaluates a fixture's
keys on one answer with the corpus README's semantics (paraphrased):

* ``messages``, ``state`` and ``request`` are subset matches: an object is compared on the keys
  the fixture names, an array on its exact length and each element; numbers as JSON (``1`` equals
  ``1.0``), ``true`` never equals ``1``;
* ``warnings``: each string a substring of some warning's text (code, detail, message);
* ``eventTypes``, ``eventTypesAbsent``, ``eventPaths`` (``"<index>.<dotted path>"``),
  ``eventAbsentPaths``, ``runError``: on the events delivered to the application;
* ``requestAbsentPaths``: dotted paths absent from the sent RunAgentInput.

A key the answer cannot show (no ``events``, ``warnings: null``, no ``request``, ``state`` null
without ``observes``) is ``not-observable``: skipped, never passed. ``--lane`` applies a lane's
``expectOverrides``; ``third_party`` applies the README's three relaxations instead (SHOULD-level
``warnings``/``noWarnings``: every ``noWarnings``, and every ``warnings`` but one that asserts
only MUST-level codes, :func:`must_level_warnings`; the ``era-*`` fixtures' translation results;
the admitted-gap fixtures) and uses no lane's override.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from counterexamples.conformance.fixtures import EXPECT_KEYS, Fixture

__all__ = ["PASS", "FAIL", "UNOBSERVABLE", "RELAXED", "KeyResult", "FixtureResult",
           "subset_match", "judge", "relaxed_keys", "must_level_warnings", "is_admitted_gap",
           "model_answers", "adapter_answers", "run_fixtures", "summary", "result_lines",
           "to_junit", "corpus_cell"]

PASS, FAIL, UNOBSERVABLE, RELAXED = "pass", "fail", "not-observable", "relaxed"
"""The status of one key."""

_NOT_OBSERVABLE = "not observable by this adapter"


@dataclass(frozen=True)
class KeyResult:
    """One ``expect`` key judged.

    Attributes:
        key: the key (``messages``, ``eventPaths`` ...).
        status: :data:`PASS`, :data:`FAIL`, :data:`UNOBSERVABLE` or :data:`RELAXED`.
        expected: what the fixture asks (JSON).
        actual: what the consumer showed (JSON; None when not observable).
        note: where a match failed (``messages.0.content.found``) or why it was skipped.
    """

    key: str
    status: str
    expected: Any = None
    actual: Any = None
    note: str = ""

    def to_json(self) -> dict:
        return {"key": self.key, "status": self.status, "expected": self.expected,
                "actual": self.actual, "note": self.note}


@dataclass(frozen=True)
class FixtureResult:
    """One fixture run.

    Attributes:
        name, path: the fixture's.
        status: ``passed`` (no key failed; keys not observable are listed, not passed),
            ``failed``, ``error`` (the adapter gave no usable answer) or ``relaxed`` (the whole
            fixture set aside by ``third_party``).
        keys: every key judged, in the README's order.
        error: the adapter's failure (status ``error``), or why the fixture was set aside.
    """

    name: str
    path: str
    status: str
    keys: tuple[KeyResult, ...] = ()
    error: str = ""

    @property
    def failed_keys(self) -> list[KeyResult]:
        return [k for k in self.keys if k.status == FAIL]

    def to_json(self) -> dict:
        return {"fixture": self.name, "path": self.path, "status": self.status,
                "keys": [k.to_json() for k in self.keys], "error": self.error}


# --- matching -----------------------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (``1 == 1.0``), booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def subset_match(expected: Any, actual: Any, where: str = "") -> Optional[str]:
    """None when ``actual`` matches ``expected`` as a subset (objects on the expected keys,
    arrays on exact length and each element, scalars by :func:`_same`); else the dotted place of
    the first difference and what differs."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where or '(value)'}: expected an object"
        for key, value in expected.items():
            place = f"{where}.{key}" if where else key
            if key not in actual:
                return f"{place}: missing"
            problem = subset_match(value, actual[key], place)
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where or '(value)'}: expected an array"
        if len(expected) != len(actual):
            return f"{where or '(value)'}: {len(actual)} items, expected {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = subset_match(e, a, f"{where}.{i}" if where else str(i))
            if problem:
                return problem
        return None
    return None if _same(expected, actual) else f"{where or '(value)'}: differs"


_MISSING = object()


def _resolve(value: Any, parts: Sequence[str]) -> Any:
    """The value at the dotted ``parts`` (array items by decimal index), or ``_MISSING``."""
    for part in parts:
        if isinstance(value, dict):
            if part not in value:
                return _MISSING
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


# --- the relaxations ----------------------------------------------------------------------------

_SHOULD_KEYS = frozenset({"warnings", "noWarnings"})


def is_admitted_gap(fixture: Fixture) -> bool:
    """True for a fixture that pins behaviour the spec contradicts: its description says
    ``ADMITTED GAP`` (the corpus README's convention for ``unknown-enum-value-role-fatal``)."""
    return "ADMITTED GAP" in fixture.doc.get("description", "")


def must_level_warnings(expected: Any) -> bool:
    """Whether a ``warnings`` value asserts only warnings a MUST clause requires: a non-empty
    list of activity-check codes each of MUST level in :data:`model.codes.REQUIRED_WARNINGS`
    (SNP-SURFACE-FAILURE). Free text (the official corpus's substrings, the first-party
    clients' words) and SHOULD-level codes are SHOULD-level, as the corpus README counts them."""
    from model.codes import REQUIRED_WARNINGS
    return isinstance(expected, list) and bool(expected) and all(
        isinstance(s, str) and REQUIRED_WARNINGS.get(s, ("", ""))[1] == "MUST"
        for s in expected)


def relaxed_keys(fixture: Fixture, expect: dict) -> dict[str, str]:
    """``{key: why}`` for the keys the third-party relaxations set aside: the SHOULD-level
    warning keys on every fixture (``noWarnings`` always; ``warnings`` unless
    :func:`must_level_warnings`), and on an ``era-*`` fixture every key beside the outcome and
    its reason (a translation the spec permits, not requires)."""
    out = {k: "SHOULD-level warning (third-party relaxation)" for k in expect
           if k in _SHOULD_KEYS and not (k == "warnings" and must_level_warnings(expect[k]))}
    if fixture.name.startswith("era-"):
        for k in expect:
            if k not in ("outcome", "errorContains", "runError") and k not in out:
                out[k] = "era translation the spec only permits (third-party relaxation)"
    return out


# --- judging ------------------------------------------------------------------------------------

def _warning_text(w: Any) -> str:
    if isinstance(w, dict):
        return " ".join(str(w[k]) for k in ("code", "detail", "message", "text", "clause")
                        if w.get(k) is not None)
    return str(w)


def _error_text(fatal: Any) -> Optional[str]:
    if not isinstance(fatal, dict):
        return None
    parts = [str(fatal[k]) for k in ("message", "code", "detail", "clause", "messageId")
             if fatal.get(k) is not None]
    return " ".join(parts) if parts else None


def _judge_key(key: str, expected: Any, answer: dict) -> KeyResult:
    fatal = answer.get("fatal")
    events = answer.get("events")
    warnings = answer.get("warnings")
    request = answer.get("request")

    def result(ok: bool, actual: Any, note: str = "") -> KeyResult:
        return KeyResult(key, PASS if ok else FAIL, expected, actual, "" if ok else note)

    def unseen(what: str) -> KeyResult:
        return KeyResult(key, UNOBSERVABLE, expected, None, f"{_NOT_OBSERVABLE} ({what})")

    if key == "outcome":
        actual = "completed" if fatal is None else "failed"
        return result(actual == expected, actual)
    if key == "errorContains":
        if fatal is None:
            return result(False, None, "the consumer did not fail the run")
        text = _error_text(fatal)
        if text is None:
            return unseen("the failure carries no text")
        return result(expected in text, text, "substring not in the error")
    if key == "messageCount":
        return result(len(answer["messages"]) == expected, len(answer["messages"]))
    if key == "messages":
        problem = subset_match(expected, answer["messages"], "messages")
        return result(problem is None, answer["messages"], problem or "")
    if key == "state":
        observed = "state" in (answer.get("observes") or [])
        if "state" not in answer or (answer["state"] is None and not observed):
            return unseen("no 'state' in the answer")
        problem = subset_match(expected, answer["state"], "state")
        return result(problem is None, answer["state"], problem or "")
    if key in ("warnings", "noWarnings"):
        if warnings is None:
            return unseen("'warnings' is null")
        texts = [_warning_text(w) for w in warnings]
        if key == "noWarnings":
            ok = (not texts) if expected else True
            return result(ok, texts, "warnings were emitted")
        missing = [s for s in expected if not any(s in t for t in texts)]
        return result(not missing, texts, f"no warning contains {missing[0]!r}" if missing
                      else "")
    if key in ("request", "requestAbsentPaths"):
        if request is None:
            return unseen("no 'request' in the answer")
        if key == "request":
            problem = subset_match(expected, request, "request")
            return result(problem is None, request, problem or "")
        present = [p for p in expected if _resolve(request, p.split(".")) is not _MISSING]
        return result(not present, request, f"{present[0]} is present" if present else "")
    # the event keys
    if events is None:
        return unseen("no 'events' in the answer")
    types = [e.get("type") for e in events]
    if key == "eventTypes":
        return result(_same(list(expected), types), types)
    if key == "eventTypesAbsent":
        present = [t for t in expected if t in types]
        return result(not present, types, f"{present[0]} was delivered" if present else "")
    if key == "eventPaths":
        shown = {}
        for path, want in expected.items():
            head, _, rest = path.partition(".")
            got = _resolve(events, [head] + (rest.split(".") if rest else []))
            shown[path] = None if got is _MISSING else got
            if got is _MISSING:
                return result(False, shown, f"{path}: missing")
            if not _same(want, got):
                return result(False, shown, f"{path}: differs")
        return result(True, shown)
    if key == "eventAbsentPaths":
        present = [p for p in expected
                   if _resolve(events, p.split(".")) is not _MISSING]
        return result(not present, types, f"{present[0]} is present" if present else "")
    if key == "runError":
        errors = [e for e in events if e.get("type") == "RUN_ERROR"]
        texts = [str(e.get("message", "")) for e in errors]
        if expected is True:
            return result(bool(errors), texts, "no RUN_ERROR was delivered")
        if expected is False:
            return result(not errors, texts, "a RUN_ERROR was delivered")
        return result(any(expected in t for t in texts), texts,
                      "no delivered RUN_ERROR message contains it")
    raise ValueError(f"unknown expect key {key!r}")  # the schema refuses it first


def judge(fixture: Fixture, answer: dict, lane: Optional[str] = None,
          third_party: bool = False) -> FixtureResult:
    """Every key of ``fixture``'s expect (``lane``'s override applied, or the relaxations of
    ``third_party``) judged on one adapter answer (``{"messages", "fatal", ...}``, or
    ``{"error"}`` / ``{"kind", "error"}`` for an adapter failure).

    Returns:
        A :class:`FixtureResult`; status ``passed`` when no key failed.
    """
    if "messages" not in answer:
        return FixtureResult(fixture.name, fixture.path, "error",
                             error=str(answer.get("error", "no answer")))
    if third_party and is_admitted_gap(fixture):
        return FixtureResult(fixture.name, fixture.path, RELAXED,
                             error="admitted gap: asserts behaviour the spec contradicts "
                                   "(third-party relaxation)")
    expect = fixture.expect if third_party else fixture.lane_expect(lane)
    relaxed = relaxed_keys(fixture, expect) if third_party else {}
    keys = []
    for key in EXPECT_KEYS:
        if key not in expect:
            continue
        if key in relaxed:
            keys.append(KeyResult(key, RELAXED, expect[key], None, relaxed[key]))
            continue
        keys.append(_judge_key(key, expect[key], answer))
    failed = any(k.status == FAIL for k in keys)
    return FixtureResult(fixture.name, fixture.path, "failed" if failed else "passed",
                         tuple(keys))


# --- observing consumers --------------------------------------------------------------------------

def model_answers(fixtures: Sequence[Fixture], reading=None, consumer=None) -> list[dict]:
    """The reference model's answers (or a zoo mutant's, ``consumer``), in-process, one per
    fixture, as :func:`counterexamples.peers.model_adapter.answer` gives them; a mutant that
    raises gets ``{"error": "crash: ..."}`` for that fixture (judged ``error``, a failure)."""
    from counterexamples.peers.model_adapter import answer
    from model.readings import DRAFT
    out = []
    for i, f in enumerate(fixtures):
        request = {"id": i, "events": f.stream}
        if "input" in f.doc:
            request["input"] = f.doc["input"]
        try:
            out.append(answer(request, reading or DRAFT, consumer))
        except Exception as exc:  # a zoo mutant may crash (crashes-on-empty-patch): no answer
            if consumer is None:
                raise
            out.append({"id": i, "error": f"crash: {type(exc).__name__}: {exc}"})
    return out


def adapter_answers(fixtures: Sequence[Fixture], spec, timeout: float = 10.0) -> list[dict]:
    """The answers of the adapter ``spec`` (:class:`counterexamples.peers.adapter.AdapterSpec`),
    one per fixture; an adapter failure (refused, crash, timeout, garbage, bad answer) becomes
    ``{"error": "<kind>: <why>"}`` for that fixture. Raises PeerError when the adapter cannot
    be started."""
    from counterexamples.peers.adapter import AdapterProcess
    items = [(f.stream, None, f.name, {k: f.doc[k] for k in ("input", "client") if k in f.doc})
             for f in fixtures]
    with AdapterProcess(spec, timeout=timeout) as proc:
        replies = proc.request_many(items)
    return [r.response if r.ok else {"error": f"{r.kind}: {r.error}"} for r in replies]


def run_fixtures(fixtures: Sequence[Fixture], answers: Sequence[dict], lane: Optional[str] = None,
                 third_party: bool = False) -> list[FixtureResult]:
    """Judge each fixture on its answer (same order)."""
    return [judge(f, a, lane, third_party) for f, a in zip(fixtures, answers)]


def summary(results: Iterable[FixtureResult]) -> dict[str, int]:
    """``{"fixtures", "passed", "failed", "error", "relaxed", "keysNotObservable"}``."""
    results = list(results)
    return {"fixtures": len(results),
            "passed": sum(r.status == "passed" for r in results),
            "failed": sum(r.status == "failed" for r in results),
            "error": sum(r.status == "error" for r in results),
            "relaxed": sum(r.status == RELAXED for r in results),
            "keysNotObservable": sum(k.status == UNOBSERVABLE for r in results for k in r.keys)}


# --- reports --------------------------------------------------------------------------------------

def _short(value: Any, limit: int = 200, spaced: bool = False) -> str:
    """``value`` as compact JSON cut to ``limit`` characters (``...`` marks a cut);
    ``spaced``: with a space after each comma and colon, so that a folded line can break
    there."""
    import json
    text = json.dumps(value, ensure_ascii=False,
                      separators=(", ", ": ") if spaced else (",", ":"))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def result_lines(result: FixtureResult, width: Optional[int] = None) -> list[str]:
    """Plain text lines of one result: ``PASS name`` / ``FAIL name`` / ``ERROR name: why`` /
    ``RELAXED name: why``, then one line per failed key (``  key: expected X, actual Y
    (where)``) and one per key not observable. ``width`` (columns; None: one line each, as
    JUnit holds them): each line folded at spaces within it, later lines of a key indented,
    values as JSON with spaces after commas and colons so that they fold too. The status and
    the fixture's name always share the first line, so that a ``grep FAIL`` finds the name (a
    name wider than ``width`` makes that line as wide as it needs); on the lines after the
    first of each, a word wider than ``width`` (an adapter's answer or stderr line, quoted in an
    ``ERROR``'s reason; a long string in a value, already cut at 200 characters) is cut to fit."""
    from model.text import fold_words
    head = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", RELAXED: "RELAXED"}[
        result.status]
    spaced = width is not None
    # the status starts the first line and the name follows it there, however long (a name
    # is one word): a fold never leaves the status on a line of its own, apart from the name
    lines = [(f"{result.name}" + (f": {result.error}" if result.error else ""), "    ",
              f"{head} ")]
    for k in result.keys:
        if k.status == FAIL:
            lines.append((f"  {k.key}: expected {_short(k.expected, spaced=spaced)}, actual "
                          f"{_short(k.actual, spaced=spaced)}"
                          + (f" ({k.note})" if k.note else ""), "      ", ""))
        elif k.status == UNOBSERVABLE:
            lines.append((f"  {k.key}: skipped, {k.note}", "      ", ""))
    if width is None:
        return [first + text for text, _, first in lines]
    out = []
    for text, indent, first in lines:
        folded = fold_words(text, width, indent, first)
        # the adapter's own words (a quoted answer line, its last stderr line) and the values
        # (cut already) may hold a word wider than the line: data, so cut to fit
        folded[1:] = [piece for line in folded[1:] for piece in _cut(line, width, indent)]
        out.extend(folded)
    return out


def _cut(line: str, width: int, indent: str) -> list[str]:
    """A folded continuation ``line`` (``indent`` then text) as pieces of at most ``width``
    terminal columns, each starting with ``indent``; ``[line]`` when it fits."""
    from model.text import columns
    if columns(line) <= width:
        return [line]
    room = max(width - columns(indent), 1)
    pieces, current, used = [], "", 0
    for ch in line[len(indent):]:
        size = columns(ch)
        if current and used + size > room:
            pieces.append(indent + current)
            current, used = "", 0
        current += ch
        used += size
    return pieces + [indent + current]


def to_junit(results: Sequence[FixtureResult], suite: str) -> str:
    """JUnit XML: one ``testcase`` per fixture (classname ``ag-ui-conformance.<area>`` is not
    known here, so the suite name), a ``failure`` per failed fixture listing its keys, an
    ``error`` for an adapter failure, ``skipped`` for a fixture set aside. Always XML: a
    character XML 1.0 forbids, from an adapter's answer, is written as a visible escape."""
    import xml.etree.ElementTree as ET
    root = ET.Element("testsuites", name="activity-check conformance")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)))
    counts = summary(results)
    for r in results:
        case = ET.SubElement(ts, "testcase", classname="ag-ui-conformance", name=r.name)
        lines = result_lines(r)
        if r.status == "failed":
            ET.SubElement(case, "failure", message=", ".join(k.key for k in r.failed_keys)
                          ).text = "\n".join(lines[1:])
        elif r.status == "error":
            ET.SubElement(case, "error", message=r.error[:300])
        elif r.status == RELAXED:
            ET.SubElement(case, "skipped", message=r.error)
        elif len(lines) > 1:
            ET.SubElement(case, "system-out").text = "\n".join(lines[1:])
    for node in (root, ts):
        node.set("failures", str(counts["failed"]))
        node.set("errors", str(counts["error"]))
    ts.set("skipped", str(counts["relaxed"]))
    root.set("tests", str(len(results)))
    # what the adapter answered (ids, texts) reaches the failure text: every character XML 1.0
    # forbids is written as a visible escape, as lint's JUnit does, so the report stays XML
    from counterexamples.lint.formats import _xml_safe
    _xml_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def corpus_cell(results: Sequence[FixtureResult]) -> dict:
    """One peer's results over one corpus, as the conformance matrix shows them:
    ``{"summary": summary(...), "failed": [fixture names], "error": [fixture names],
    "notObservable": [keys skipped anywhere, sorted]}``."""
    results = list(results)
    return {"summary": summary(results),
            "failed": [r.name for r in results if r.status == "failed"],
            "error": [r.name for r in results if r.status == "error"],
            "notObservable": sorted({k.key for r in results for k in r.keys
                                     if k.status == UNOBSERVABLE})}
