"""Generation of the traces ``peer search`` feeds a peer: the hand-written probes (:data:`PROBES`),
the stateful and breadth-first traces (:func:`generated_traces`, :func:`generation_parts`)."""
from __future__ import annotations

import json
import re
import time
from typing import Optional, Sequence

from model.events import Event
from model.producer import Vocabulary
from model.wire import dump_jsonl
from counterexamples.peers.traces import PeerTrace, corpus_traces


def _probe_events() -> dict[str, tuple[str, list[dict]]]:
    run = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
    text = [{"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_END", "messageId": "msg-1"}]

    def snap(mid: str, content: Optional[dict] = None, **more) -> dict:
        return {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "PLAN",
                "content": {"n": 0} if content is None else content, **more}

    def delta(mid: str, patch: Optional[list] = None, **more) -> dict:
        return {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": "PLAN",
                "patch": [{"op": "replace", "path": "/n", "value": 1}] if patch is None else patch,
                **more}

    end = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
    started = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1", "name": "helper"}
    finished = {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}
    tool = {"type": "TOOL_CALL_START", "toolCallId": "tc-1", "toolCallName": "search"}
    step = {"type": "STEP_STARTED", "stepName": "plan"}
    dropped = {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "act-2", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]}
    return {**_knob_and_branch_probes(run, text, snap, delta, end, started, finished, tool, step,
                                      dropped),
            **_surface_probes(run, snap, delta)}


def _knob_and_branch_probes(run, text, snap, delta, end, started, finished, tool, step,
                            dropped) -> dict[str, tuple[str, list[dict]]]:
    """The probes of the knobs and of issue 20's branches, codes and producer violations."""
    return {
        "probe-Q3": ("replace:false attributed to another subagent than the owner",
                     [run, snap("act-1", subagentRunId="sub-1"),
                      snap("act-1", replace=False, subagentRunId="sub-2", metadata={"k": 1})]),
        "probe-Q4": ("a delta tagged with another subagent than the opener",
                     [run, snap("act-1", subagentRunId="sub-1"), delta("act-1",
                                                                      subagentRunId="sub-2")]),
        "probe-Q4-opener": ("a delta tagged with the first owner after a replacing snapshot "
                            "re-minted the owner to the parent",
                            [run, snap("act-1", subagentRunId="sub-1"), snap("act-1"),
                             delta("act-1", subagentRunId="sub-1")]),
        "probe-Q7": ("a delta whose result is an array",
                     [run, snap("act-1"), delta("act-1", [{"op": "replace", "path": "",
                                                           "value": [1]}])]),
        "probe-Q9-replace": ("ACTIVITY_SNAPSHOT (replace absent) on a text message's id",
                             [run, *text, snap("msg-1")]),
        "probe-Q9-replace-false": ("ACTIVITY_SNAPSHOT with replace:false on a text message's id",
                                   [run, *text, snap("msg-1", replace=False)]),
        "probe-Q10": ("a snapshot for an activity a MESSAGES_SNAPSHOT dropped",
                      [run, snap("act-1"), dropped, snap("act-1", {"n": 5})]),
        "probe-Q20": ("an unrecognised op before an applying one: dropping the op applies the "
                      "rest, skipping the patch applies nothing (the corpus's shortest Q20 "
                      "witness tells these two apart by a warning only)",
                      [run, snap("act-1"), delta("act-1", [{"op": "increment", "path": "/n"},
                                                           {"op": "replace", "path": "/n",
                                                            "value": 1}])]),
        "probe-Q21-metadata": ("metadata sent as null", [run, snap("act-1", metadata=None)]),
        "probe-Q21-owner": ("subagentRunId sent as null",
                            [run, snap("act-1", subagentRunId=None)]),
        # issue 20: every branch, knob option, code and producer violation a consumer can meet
        "probe-delta-not-activity": ("ACTIVITY_DELTA aimed at a text message's id",
                                     [run, *text, delta("msg-1")]),
        "probe-Q15": ("an untagged delta on an activity whose owning subagent has finished",
                      [run, started, snap("act-1", subagentRunId="sub-1"), finished,
                       delta("act-1")]),
        "probe-Q12": ("a delta from the parent on a subagent's activity, and one in a second "
                      "run on the first run's activity",
                      [run, started, snap("act-1", subagentRunId="sub-1"), delta("act-1"),
                       finished, {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
                       dict(run, runId="r2"), delta("act-1")]),
        "probe-Q17": ("RUN_STARTED echoing an input that holds an activity message",
                      [dict(run, input={"threadId": "t1", "runId": "r1", "state": {},
                                        "messages": [{"id": "act-9", "role": "activity",
                                                      "activityType": "PLAN",
                                                      "content": {"n": 0}}],
                                        "tools": [], "context": [], "forwardedProps": {}}),
                       snap("act-1")]),
        "probe-malformed-text": ("TEXT_MESSAGE_START whose messageId is a number",
                                 [run, {"type": "TEXT_MESSAGE_START", "messageId": 5,
                                        "role": "assistant"}]),
        "probe-tool-args-missing": ("TOOL_CALL_ARGS for a tool call never started",
                                    [run, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-9",
                                           "delta": "{}"}]),
        "probe-tool-twice": ("a tool call started twice, then continued under another owner",
                             [run, started, tool, tool,
                              {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}",
                               "subagentRunId": "sub-1"}]),
        "probe-subagent-twice": ("SUBAGENT_STARTED twice for one invocation",
                                 [run, started, started]),
        "probe-step-twice": ("a step started twice", [run, step, step]),
        "probe-step-owner": ("a step finished under another owner than the one that started it",
                             [run, started, step, dict(step, type="STEP_FINISHED",
                                                       subagentRunId="sub-1")]),
        "probe-step-not-open": ("STEP_FINISHED for a step never started",
                                [run, dict(step, type="STEP_FINISHED")]),
        "probe-subagent-reused": ("SUBAGENT_STARTED again for a finished invocation",
                                  [run, started, finished, started]),
        "probe-tag-after-finished": ("an ACTIVITY_SNAPSHOT tagged with a finished invocation",
                                     [run, started, finished,
                                      snap("act-1", subagentRunId="sub-1")]),
        "probe-X1": ("TEXT_MESSAGE_START again for a message a MESSAGES_SNAPSHOT dropped while "
                     "it was streaming",
                     [run, text[0], {"type": "MESSAGES_SNAPSHOT", "messages": []}, text[0]]),
        "probe-remove-root": ("a delta removing the whole content (remove at the root "
                              "pointer), which leaves no object",
                              [run, snap("act-1"), delta("act-1", [{"op": "remove",
                                                                    "path": ""}])]),
        "probe-Q14": ("a replace:false snapshot after a delta that did not apply",
                      [run, snap("act-1"), delta("act-1", [{"op": "remove", "path": "/gone"}]),
                       snap("act-1", {"n": 2}, replace=False)]),
        "probe-unknown-event": ("an event of an undescribed type",
                                [run, {"type": "ACTIVITY_PROGRESS", "messageId": "act-1"}]),
        "probe-undescribed-member": ("an ACTIVITY_SNAPSHOT with a member the schema does not "
                                     "describe", [run, snap("act-1", extra=1)]),
        "probe-before-start": ("an ACTIVITY_SNAPSHOT before RUN_STARTED", [snap("act-1")]),
        "probe-after-close": ("an ACTIVITY_SNAPSHOT after RUN_FINISHED",
                              [run, end, snap("act-1")]),
        "probe-run-twice": ("RUN_STARTED while the run is active", [run, dict(run, runId="r2")]),
        "probe-run-error": ("RUN_ERROR, then an event",
                            [run, snap("act-1"), {"type": "RUN_ERROR", "message": "boom"},
                             delta("act-1")]),
        "probe-text-owner": ("a text message continued under another owner than its start",
                             [run, started, dict(text[0], subagentRunId="sub-1"),
                              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-1",
                               "delta": "x", "subagentRunId": "sub-2"}]),
        "probe-null-replace": ("replace sent as null", [run, snap("act-1", replace=None)]),
        "probe-malformed-patch": ("a patch operation without a path",
                                  [run, snap("act-1"), delta("act-1", [{"op": "remove"}])]),
        "probe-announced-after-use": ("a subagent's tag used before its SUBAGENT_STARTED",
                                      [run, snap("act-1", subagentRunId="sub-1"), started]),
        "probe-finish-with-open": ("RUN_FINISHED with a text message still open",
                                   [run, text[0], end]),
        "probe-parent-not-announced": ("SUBAGENT_STARTED naming a parent never announced",
                                       [run, dict(started, parentSubagentRunId="sub-9")]),
        "probe-step-open-at-finish": ("RUN_FINISHED with a step still open",
                                      [run, step, {"type": "RUN_FINISHED", "threadId": "t1",
                                                   "runId": "r1"}]),
    }


def _surface_probes(run, snap, delta) -> dict[str, tuple[str, list[dict]]]:
    """Probes of the wire surface a consumer's own JSON handling decides, which the generated
    traces (built from the model's canonical values: sorted members, integral floats as
    integers) cannot carry, or carry rarely: references kept between deltas, array slots at the
    length, operation members RFC 6902 does not define, numbers written ``1.0``, member order,
    escapes, empty and non-BMP keys, precision, depth and size; member names JavaScript objects
    treat specially (``__proto__``, ``constructor``, ``prototype``) in content, metadata and
    patches; and every reference a text or tool event makes to a message, aimed at an activity
    (issue 42)."""
    deep: dict = {"leaf": 1}
    for _ in range(64):
        deep = {"d": deep}
    return {
        "probe-copy-then-write": (
            "a copy written under in the same patch and in later deltas, then its source "
            "written: a copy is a value of its own (RFC 6902 4.5), never a reference",
            [run, snap("act-1", {"a": {"b": [1]}}),
             delta("act-1", [{"op": "copy", "from": "/a", "path": "/c"},
                             {"op": "add", "path": "/c/x", "value": 1}]),
             delta("act-1", [{"op": "add", "path": "/c/b/-", "value": 2}]),
             delta("act-1", [{"op": "replace", "path": "/a/b/0", "value": 3}])]),
        "probe-snapshot-not-shared": (
            "a delta after a snapshot whose content repeats the earlier one's: a consumer that "
            "patches the event's own object in place, or shares it between messages, shows it",
            [run, snap("act-1", {"a": {"b": 1}}), snap("act-2", {"a": {"b": 1}}),
             delta("act-1", [{"op": "add", "path": "/a/c", "value": 2}]),
             snap("act-1", {"a": {"b": 1}}, replace=False),
             delta("act-2", [{"op": "remove", "path": "/a/b"}])]),
        "probe-index-at-length": (
            "replace, remove and test at the index equal to the array's length (out of range: "
            "each patch fails), then an add there (an append)",
            [run, snap("act-1", {"list": [1, 2, 3]}),
             delta("act-1", [{"op": "replace", "path": "/list/3", "value": 9}]),
             delta("act-1", [{"op": "remove", "path": "/list/3"}]),
             delta("act-1", [{"op": "test", "path": "/list/3", "value": None}]),
             delta("act-1", [{"op": "move", "from": "/list/3", "path": "/m"}]),
             delta("act-1", [{"op": "add", "path": "/list/3", "value": 4}])]),
        "probe-open-member": (
            "operations carrying members RFC 6902 does not define (legal: SNP-OPEN-OPS)",
            [run, snap("act-1"),
             delta("act-1", [{"op": "replace", "path": "/n", "value": 1, "comment": "why"},
                             {"op": "add", "path": "/o", "value": 2, "x-trace": {"id": 7}}])]),
        "probe-number-forms": (
            "test of 1 written 1.0 and of an object written in another member order, both "
            "equal in JSON (RFC 6902 4.6), then writes that depend on them",
            [run, snap("act-1", {"n": 1, "o": {"a": 1, "b": [1.5, 2]}}),
             delta("act-1", [{"op": "test", "path": "/n", "value": 1.0},
                             {"op": "test", "path": "/o", "value": {"b": [1.5, 2.0], "a": 1}},
                             {"op": "replace", "path": "/n", "value": 2}])]),
        "probe-escaped-keys": (
            "keys that need escapes and that unescaping in the wrong order confuses (~01 is the "
            "key ~1, not /), the empty key nested, a key outside the BMP",
            [run, snap("act-1", {"~1": 1, "/": 2, "": {"": 3}, "😀": 4, "a~b/c": 5}),
             delta("act-1", [{"op": "replace", "path": "/~01", "value": 9},
                             {"op": "replace", "path": "//", "value": 8},
                             {"op": "replace", "path": "/😀", "value": 7},
                             {"op": "move", "from": "/a~0b~1c", "path": "/~1"}])]),
        "probe-float-precision": (
            "floats at the edge of double precision kept exactly",
            [run, snap("act-1", {"p": 0.30000000000000004, "tiny": 5e-324}),
             delta("act-1", [{"op": "test", "path": "/p", "value": 0.30000000000000004},
                             {"op": "add", "path": "/q", "value": 4503599627370495.5}])]),
        "probe-deep-content": (
            "content nested 65 objects deep with a 20,000-character string, then a delta at "
            "the bottom",
            [run, snap("act-1", {"deep": deep, "long": "x" * 20000}),
             delta("act-1", [{"op": "replace", "path": "/deep" + "/d" * 64 + "/leaf",
                              "value": 2}])]),
        "probe-special-keys-content": (
            "content whose members are named __proto__, constructor and prototype (plain "
            "members in JSON; a JavaScript object built by assignment or spread loses or "
            "mangles them), then a delta writing under each",
            [run, snap("act-1", {"__proto__": {"x": 1}, "constructor": {"prototype": {"y": 2}},
                                 "prototype": 0}),
             delta("act-1", [{"op": "add", "path": "/__proto__/z", "value": {"constructor": 3}},
                             {"op": "replace", "path": "/constructor/prototype/y", "value": 4},
                             {"op": "test", "path": "/prototype", "value": 0}])]),
        "probe-special-keys-patch": (
            "a delta adding members named __proto__ and constructor to content that has none "
            "(an add creates them, RFC 6902 4.1), and a value holding them",
            [run, snap("act-1"),
             delta("act-1", [{"op": "add", "path": "/__proto__", "value": {"polluted": True}},
                             {"op": "add", "path": "/constructor",
                              "value": {"prototype": {"__proto__": 1}}}])]),
        "probe-special-keys-missing": (
            "a test and a remove of members named constructor and prototype that content does "
            "not hold (both fail: an inherited property is no member)",
            [run, snap("act-1"),
             delta("act-1", [{"op": "test", "path": "/constructor", "value": None}]),
             delta("act-1", [{"op": "remove", "path": "/prototype"}])]),
        "probe-special-keys-metadata": (
            "metadata keys __proto__ and constructor, merged key by key by a later delta",
            [run, snap("act-1", metadata={"__proto__": {"k": 1}, "constructor": "c"}),
             delta("act-1", [], metadata={"__proto__": {"j": 2}, "prototype": True})]),
        "probe-ref-parent-activity": (
            "a tool call whose parentMessageId names an activity",
            [run, snap("act-1"), {"type": "TOOL_CALL_START", "toolCallId": "tc-1",
                                  "toolCallName": "search", "parentMessageId": "act-1"},
             {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}"},
             {"type": "TOOL_CALL_END", "toolCallId": "tc-1"}]),
        "probe-ref-toolcall-activity": (
            "a tool call whose toolCallId is an activity's id, continued and answered",
            [run, snap("act-1"), {"type": "TOOL_CALL_START", "toolCallId": "act-1",
                                  "toolCallName": "search"},
             {"type": "TOOL_CALL_ARGS", "toolCallId": "act-1", "delta": "{}"},
             {"type": "TOOL_CALL_END", "toolCallId": "act-1"},
             {"type": "TOOL_CALL_RESULT", "messageId": "res-1", "toolCallId": "act-1",
              "content": "ok"}]),
        "probe-ref-result-activity": (
            "a tool result whose messageId is an activity's id",
            [run, snap("act-1"), {"type": "TOOL_CALL_START", "toolCallId": "tc-1",
                                  "toolCallName": "search"},
             {"type": "TOOL_CALL_END", "toolCallId": "tc-1"},
             {"type": "TOOL_CALL_RESULT", "messageId": "act-1", "toolCallId": "tc-1",
              "content": "ok"}]),
        "probe-ref-text-activity": (
            "a whole text message streamed on an activity's id",
            [run, snap("act-1"),
             {"type": "TEXT_MESSAGE_START", "messageId": "act-1", "role": "assistant"},
             {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act-1", "delta": "hi"},
             {"type": "TEXT_MESSAGE_END", "messageId": "act-1"}]),
        "probe-metadata-nested-null": (
            "metadata merged key by key (never recursively) with nulls as values",
            [run, snap("act-1", metadata={"k": {"a": 1}, "j": None}),
             delta("act-1", [], metadata={"k": {"b": None}}),
             snap("act-1", {"n": 2}, metadata={"j": {"x": None}})]),
    }


JS_PROBES: tuple[str, ...] = (
    "probe-special-keys-content", "probe-special-keys-patch", "probe-special-keys-missing",
    "probe-special-keys-metadata", "probe-ref-parent-activity", "probe-ref-toolcall-activity",
    "probe-ref-result-activity", "probe-ref-text-activity")
"""The probes of what JavaScript consumers get wrong (issue 42): member names objects treat
specially, and references aimed at an activity; the matrix shows each peer's result on them."""

PROBES: dict[str, str] = {k: v[0] for k, v in _probe_events().items()}
"""Hand-written probe traces (id -> what it does): one or two per knob whose options the
generators rarely separate (a reaction to a producer violation, or a case that needs a context).
:func:`probe_traces` gives them; ``peer search`` feeds them with the generated traces."""


def probe_traces() -> list[PeerTrace]:
    """The :data:`PROBES` as traces (source ``probe``)."""
    return [PeerTrace.of(k, wire, None, "probe") for k, (_, wire) in _probe_events().items()]


class _OutOfTime(Exception):
    """Raised inside the Hypothesis test to stop generating at the deadline."""


def generated_traces(seed: int = 0, stateful: int = 200, bfs_depth: int = 3,
                     max_events: int = 8, deadline: Optional[float] = None,
                     vocabulary: Optional[Vocabulary] = None,
                     bfs_vocabulary: Optional[Vocabulary] = None
                     ) -> tuple[list[PeerTrace], dict]:
    """The traces ``peer search`` feeds a peer, deterministic for a seed.

    * corpus: the committed corpus (:func:`corpus_traces`), which holds a witness for every
      knob the ambiguity search splits, and the hand-written :data:`PROBES`;
    * stateful: ``stateful`` traces from the Hypothesis producer strategies
      (:func:`properties.strategies.adversarial_traces`: half conformant, half mixed with
      labelled non-conformant events), seeded;
    * bfs: the shortest trace to every state the breadth-first search
      (:func:`properties.search.explore.explore`, adversarial moves included) reaches within
      ``bfs_depth`` events over its small vocabulary.

    ``vocabulary`` replaces the stateful traces' producer vocabulary (default
    :data:`model.producer.DEFAULT_VOCABULARY`), ``bfs_vocabulary`` the breadth-first search's
    (default :data:`properties.search.explore.EXPLORE_VOCABULARY`). Hypothesis draws inside
    :func:`properties.strategies.fixed_constants`, so the traces do not depend on what the
    process imported.

    Duplicates are dropped (first kept). Returns ``(traces, {"corpus": n, "probe": n,
    "stateful": n, "bfs": n})``; with a ``deadline`` (:func:`time.monotonic`), generation stops
    there and the counts also hold ``"stopped": True`` when it did.
    """
    out: list[PeerTrace] = []
    counts: dict = {}
    for part, counts in generation_parts(seed, stateful, bfs_depth, max_events, deadline,
                                         vocabulary, bfs_vocabulary):
        out += part
    return out, counts


def generation_parts(seed: int = 0, stateful: int = 200, bfs_depth: int = 3,
                     max_events: int = 8, deadline: Optional[float] = None,
                     vocabulary: Optional[Vocabulary] = None,
                     bfs_vocabulary: Optional[Vocabulary] = None):
    """:func:`generated_traces` part by part: yields ``(new traces, counts so far)`` after the
    corpus and probes, after the stateful traces and after the breadth-first ones, so that a
    search can feed each part before generating the next (and stop between parts)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hseed, settings
    from model.producer import DEFAULT_VOCABULARY
    from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
    from properties.search.report import trace_to
    from properties.strategies import adversarial_traces, fixed_constants

    out: list[PeerTrace] = corpus_traces()
    probes = probe_traces()
    counts = {"corpus": len(out), "probe": len(probes), "stateful": 0, "bfs": 0}
    out += probes
    seen: set[str] = {dump_jsonl(t.events) for t in out if t.state is None}
    yield out, dict(counts)
    out = []

    def add(events: Sequence[Event], kind: str) -> None:
        if not events:
            return
        text = dump_jsonl(events)
        if text in seen:
            return
        seen.add(text)
        counts[kind] += 1
        out.append(PeerTrace.of(f"{kind}-{counts[kind]}", [_wire_for(e) for e in events], None,
                                kind))

    def late() -> bool:
        return deadline is not None and time.monotonic() > deadline

    for rate, share in ((0.0, stateful // 2), (0.25, stateful - stateful // 2)):
        if share <= 0 or late():
            continue
        drawn: list = []

        @hseed(seed)
        @settings(max_examples=share, database=None, deadline=None, derandomize=False,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck),
                  verbosity=Verbosity.quiet)
        @given(adversarial_traces(vocabulary=vocabulary or DEFAULT_VOCABULARY,
                                  max_events=max_events, adversarial_rate=rate))
        def draw(pair):
            if late():
                raise _OutOfTime
            drawn.append(pair[0])

        try:
            with fixed_constants():
                draw()
        except _OutOfTime:
            pass
        for events in drawn:
            add(events, "stateful")
    if late():
        counts["stopped"] = True
    yield out, dict(counts)
    out = []
    if bfs_depth > 0 and not late():
        report = explore(ExploreOptions(depth=bfs_depth,
                                        vocabulary=bfs_vocabulary or EXPLORE_VOCABULARY,
                                        properties=(), check_readings=False, adversarial=True))
        for node in range(1, len(report.nodes)):
            if late():
                break
            add(trace_to(report, node), "bfs")
    if late():
        counts["stopped"] = True
    yield out, dict(counts)


def _wire_for(event: Event) -> dict:
    """The wire form of a generated event, with the undescribed top-level members its
    ``notices`` record put back (their values are lost when the event is built; ``true`` stands
    in), so that the peer is sent what the producer meant to send. The trace is parsed back from
    this wire form, so peer and model always see the same events."""
    wire = event.to_wire()
    for path in event.notices:
        role = _UNKNOWN_ROLE.fullmatch(path)
        if role:  # a text opened with a role the draft does not define: send that role
            wire["role"] = json.loads(role.group(1))
            continue
        name = path[2:] if path.startswith("$.") else ""
        if name and not any(c in name for c in ".[] ()") and name not in wire:
            wire[name] = True
    return wire


_UNKNOWN_ROLE = re.compile(r'\$\.role \(role ("(?:[^"\\]|\\.)*") unrecognised\)')
"""The notice :func:`model.wire.parse_event` records for a TEXT_MESSAGE_START whose role the
draft does not define (the role as JSON text in group 1)."""
