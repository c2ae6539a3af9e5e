"""Field cases: real traces rebuilt from public bug reports, replayed against the model.

Each case (``corpus/field-cases.jsonl``) carries its trace, its sources and the expected outcome
with a ``basis``. :func:`check_case` decides:

* basis ``draft`` / ``draft+assumption``: the verdict under ``draft`` must match every expected
  member (messages, warnings by code/messageId/atEvent, fatal by code/atEvent, agent state, next
  run input, checkpoints, run completion); where a case lets the consumer choose
  (``consumerMayChoose``), draft must give one of the choices and every choice must be given by
  some reading; a ``producerViolation`` must be flagged by the producer monitor;
* basis ``outside-draft`` / ``draft-gap``: each candidate outcome must be produced by some reading
  (and a single expected outcome must be one of the readings' verdicts).

Where the model departs from a case on purpose, :data:`ARGUED` says why and which member is left
out of the comparison.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

from model.json_values import freeze
from model.producer import check_trace
from model.verdict import Verdict, evaluate, partition, trace_states
from model.wire import loads_json, parse_events, read_text

__all__ = ["FieldCase", "CaseResult", "load_cases", "check_case", "check_all", "ARGUED",
           "CORPUS_FILE"]

CORPUS_FILE = "field-cases.jsonl"

ARGUED: dict[str, tuple[str, str]] = {
    "FC-17": ("toolCalls.function.arguments",
              "The case expects a tool call that received no TOOL_CALL_ARGS to carry arguments "
              "'{}'. No page in the reference copies says a consumer invents an empty JSON object "
              "for absent argument text; the model keeps the concatenated TOOL_CALL_ARGS deltas "
              "(the empty string). The activity part of the case (app-tc1 is its own message, "
              "at its own arrival position) agrees, and tool calls are outside the activity draft."),
}
"""Case id -> (member left out of the comparison, why the model departs from the case)."""


@dataclass(frozen=True)
class FieldCase:
    """One field case: ``id``, ``title``, ``sources``, ``events`` (wire), ``expected``, and the
    optional ``initial_state`` (agent state before the first event)."""

    id: str
    title: str
    sources: tuple[str, ...]
    events: tuple[dict, ...]
    expected: dict
    initial_state: Any = None
    raw: dict = field(default_factory=dict, compare=False)


@dataclass
class CaseResult:
    """Outcome of checking a case: ``status`` is ``"agrees"``, ``"argued"`` (agrees once the
    argued member is left out), ``"covered"`` (every candidate produced by some reading) or
    ``"differs"``; ``problems`` lists what did not match; ``readings`` maps candidate names to
    the readings that produce them."""

    id: str
    basis: str
    status: str
    problems: list[str] = field(default_factory=list)
    readings: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {"id": self.id, "basis": self.basis, "status": self.status,
               "problems": self.problems, "readings": self.readings}
        if self.status == "argued":
            out["argued"] = ARGUED[self.id][1]
        return out


def load_cases(path: Optional[str] = None) -> list[FieldCase]:
    """Read the field cases (default: the bundled corpus). Raises ValueError naming the line of a
    line that is not a JSON object with ``id`` and ``events``."""
    if path is None:
        text = resources.files("counterexamples").joinpath("corpus", CORPUS_FILE).read_text(
            encoding="utf-8")
        path = CORPUS_FILE
    else:
        text = read_text(path)  # bounded (model.wire.INPUT_LIMITS); TraceFormatError, a ValueError
    cases = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = loads_json(line)  # strict, depth-bounded
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(obj, dict) or "id" not in obj or not isinstance(obj.get("events"), list):
            raise ValueError(f"{path}:{lineno}: a case needs 'id' and an 'events' array")
        cases.append(FieldCase(obj["id"], obj.get("title", ""),
                               tuple(obj.get("sources") or [obj.get("source", "")]),
                               tuple(obj["events"]), obj.get("expected", {}),
                               obj.get("initialState"), obj))
    return cases


def _strip_arguments(messages: list) -> list:
    out = []
    for m in messages:
        m = json.loads(json.dumps(m))
        for call in m.get("toolCalls", []) or []:
            call.get("function", {}).pop("arguments", None)
        out.append(m)
    return out


def _project_warnings(ws: list) -> list:
    return [{"code": w.get("code"), "messageId": w.get("messageId"), "atEvent": w.get("atEvent")}
            for w in ws]


def _compare(expected: dict, verdict: Verdict, states, argued: Optional[str]) -> list[str]:
    """Members of ``expected`` the verdict does not match (empty: all match)."""
    got = verdict.to_json(detail=False)
    problems = []

    def same(a, b) -> bool:
        return freeze(a) == freeze(b)

    def msgs(x):
        return _strip_arguments(x) if argued == "toolCalls.function.arguments" else x

    if "messages" in expected and not same(msgs(expected["messages"]), msgs(got["messages"])):
        problems.append(f"messages: expected {json.dumps(expected['messages'])}, "
                        f"got {json.dumps(got['messages'])}")
    if "warnings" in expected and not same(_project_warnings(expected["warnings"]),
                                           _project_warnings(got["warnings"])):
        problems.append(f"warnings: expected {json.dumps(_project_warnings(expected['warnings']))},"
                        f" got {json.dumps(_project_warnings(got['warnings']))}")
    if "fatal" in expected:
        exp, have = expected["fatal"], got["fatal"]
        if exp is None and have is not None:
            problems.append(f"fatal: expected none, got {have['code']} at {have['atEvent']}")
        elif exp is not None and (have is None or (have["code"], have["atEvent"]) !=
                                  (exp.get("code"), exp.get("atEvent"))):
            problems.append(f"fatal: expected {exp}, got {have}")
    if "state" in expected and not same(expected["state"], got["state"]):
        problems.append(f"state: expected {expected['state']}, got {got['state']}")
    if "nextRunInputMessages" in expected and not same(msgs(expected["nextRunInputMessages"]),
                                                       msgs(got["runInput"])):
        problems.append("nextRunInputMessages differ")
    if expected.get("runCompleted") is True and got["run"] != "finished":
        problems.append(f"runCompleted: the run ended {got['run']}")
    for cp in expected.get("checkpoints", []):
        at = cp["afterEvent"]
        st = states[at] if at < len(states) else None
        if st is None:
            problems.append(f"checkpoint {at}: no such event")
            continue
        snap = st.to_json()
        if "messages" in cp and not same(msgs(cp["messages"]), msgs(snap["messages"])):
            problems.append(f"checkpoint after event {at}: messages differ: "
                            f"{json.dumps(snap['messages'])}")
        if "state" in cp and not same(cp["state"], snap["state"]):
            problems.append(f"checkpoint after event {at}: state {snap['state']}")
    return problems


def check_case(case: FieldCase) -> CaseResult:
    """Replay one case on the model and judge it (see the module docstring)."""
    from model.consumer import initial_state
    events = parse_events(case.events)
    start = initial_state(case.initial_state)
    expected = case.expected
    basis = expected.get("basis", "draft")
    argued = ARGUED.get(case.id, (None, ""))[0]
    result = CaseResult(case.id, basis, "agrees")
    classes = partition(events, start)

    def readings_giving(outcome: dict) -> list[str]:
        names = []
        for c in classes:
            if not _compare(outcome, c.verdict, trace_states(events, c.representative, start),
                            argued):
                names.extend(_names(c.assignments))
        return names

    if basis in ("draft", "draft+assumption"):
        verdict = evaluate(events, start=start)
        problems = _compare(expected, verdict, trace_states(events, start=start), argued)
        choices = expected.get("consumerMayChoose", {})
        if choices:
            draft_matches = []
            for name, outcome in choices.items():
                givers = readings_giving(outcome)
                result.readings[name] = givers
                if not givers:
                    problems.append(f"choice {name!r} is given by no reading")
                if not _compare(outcome, verdict, trace_states(events, start=start), argued):
                    draft_matches.append(name)
            if not draft_matches:
                problems.append("draft gives none of the consumer's choices")
        violation = expected.get("producerViolation")
        if violation:
            flagged = {v.clause for _, v in check_trace(events)}
            if violation not in flagged:
                problems.append(f"producer monitor does not flag {violation} (flags {sorted(flagged)})")
        result.problems = problems
        if problems:
            result.status = "differs"
        elif argued:
            result.status = "argued"
    else:
        candidates = expected.get("candidates") or {}
        if not candidates:
            candidates = {"expected": {k: v for k, v in expected.items()
                                       if k in ("messages", "warnings", "fatal", "state")}}
        for name, outcome in candidates.items():
            outcome = {**{k: v for k, v in expected.items() if k in ("fatal", "warnings")},
                       **outcome}
            givers = readings_giving(outcome)
            result.readings[name] = givers
            if not givers:
                result.problems.append(f"candidate {name!r} is given by no reading")
        result.status = "differs" if result.problems else "covered"
    return result


def _names(assignments: list[dict]) -> list[str]:
    from model.readings import describe_assignment
    return [describe_assignment(a) for a in assignments]


def check_all(path: Optional[str] = None) -> list[CaseResult]:
    """Check every field case (default: the bundled corpus)."""
    return [check_case(c) for c in load_cases(path)]
