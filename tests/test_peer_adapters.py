"""The adapters of issue 23 (``peers/``): the @ag-ui/client warning table and its capture in both
versions, @assistant-ui/react-ag-ui and @tanstack/ai driven headless, the Python ag-ui-protocol
models as a wire layer, and the pinned lock files. Node tests skip, saying why, when Node or a
folder's packages are missing (``make peers`` installs them)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from counterexamples.peers.matrix import MATRIX_PEERS, peer_ready, resolve_matrix_adapter
from counterexamples.peers.adapter import PEERS_DIR, AdapterProcess
from counterexamples.peers.traces import PeerTrace
from counterexamples.peers.classify import classify
from model.codes import CODES, WARNING
from wirekit import RS, delta, snap

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(PEERS_DIR)
TABLE = json.loads((PEERS / "ag-ui-client" / "warnings.json").read_text())
BY_SHORTCUT = {p.shortcut: p for p in MATRIX_PEERS}


def ready(shortcut: str):
    """Skip unless the built-in peer ``shortcut`` can run here."""
    reason = peer_ready(BY_SHORTCUT[shortcut])
    return pytest.mark.skipif(reason is not None, reason=f"{shortcut}: {reason}")


def answers(shortcut: str, traces: list[list[dict]], state=None) -> list[dict]:
    """The adapter's answers to ``traces`` (each must be a well-formed answer)."""
    with AdapterProcess(resolve_matrix_adapter(shortcut)) as adapter:
        replies = adapter.request_many([(t, state, f"t{i}") for i, t in enumerate(traces)])
    assert all(r.ok for r in replies), [r.error for r in replies]
    return [r.response for r in replies]


# --- the warning table --------------------------------------------------------------------------

def test_warning_table_names_our_warning_codes_and_compiles():
    entries = TABLE["entries"]
    assert len(entries) == 10
    for e in entries:
        code = e.get("code")
        assert code is None or WARNING in CODES[code].kinds, e
        assert e.get("method", "warn") in ("warn", "error", "log", "info", "debug"), e
        assert e.get("messageId") in ("id", "event", None), e
        python = re.compile(e["pattern"].replace("(?<", "(?P<"), re.S)  # the same syntax here
        assert ("id" in python.groupindex) == (e.get("messageId") == "id"), e
    # a line that is not a warning is the failure's companion, and only that one
    assert [e["pattern"] for e in entries if e.get("code") is None] == ["^Agent execution failed:"]


def test_warning_table_is_documented():
    """Every entry is a row of the table in docs/peers.md (pattern as written, code, messageId)."""
    doc = (ROOT / "docs" / "peers.md").read_text()
    section = doc.split("\n## Warnings of @ag-ui/client", 1)[1].split("\n## ", 1)[0]
    for e in TABLE["entries"]:
        row = next((line for line in section.splitlines()
                    if f"`{e['pattern'].replace('|', chr(92) + '|')}`" in line), None)
        assert row is not None, e["pattern"]
        assert (e.get("code") or "not a warning") in row
        assert f"{e.get('messageId')}" in row if e.get("messageId") else "-" in row


W_PATCH = [RS, snap(), delta(patch=[{"op": "remove", "path": "/missing"}])]
W_TEXT = [RS, snap(), {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act-1", "delta": "x"}]
W_MEMBER = [RS, snap(**{"x-vendor-hint": True})]
W_OP = [RS, snap(), delta(patch=[{"op": "increment", "path": "/n"}])]
W_UNMAPPED = [RS, {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r-1", "delta": "x"}]


def _w(code, at, mid="act-1"):
    return [{"code": code, "messageId": mid, "atEvent": at}]


# What each version and mode prints, read through the table (None: the run fails there).
WARNINGS = {
    "ag-ui-client:reducer": [_w("ACTIVITY_PATCH_FAILED", 2), _w("TEXT_TARGET_IS_ACTIVITY", 2),
                             [], _w("ACTIVITY_PATCH_FAILED", 2)],
    "ag-ui-client:pipeline": [_w("ACTIVITY_PATCH_FAILED", 2), None,
                              _w("UNKNOWN_MEMBER_STRIPPED", 1),
                              _w("UNKNOWN_PATCH_OP_DROPPED", 2)],
    "ag-ui-client@0.0.59:reducer": [_w("ACTIVITY_PATCH_FAILED", 2),
                                    _w("TEXT_TARGET_IS_ACTIVITY", 2), [],
                                    _w("ACTIVITY_PATCH_FAILED", 2)],
    # 0.0.x has no enforcement: the undescribed member passes silently, the unknown op fails
    # the patch
    "ag-ui-client@0.0.59:pipeline": [_w("ACTIVITY_PATCH_FAILED", 2), None, [],
                                     _w("ACTIVITY_PATCH_FAILED", 2)],
}


@pytest.mark.parametrize("shortcut", sorted(WARNINGS))
def test_ag_ui_client_console_warnings_are_read_as_our_codes(shortcut):
    if peer_ready(BY_SHORTCUT[shortcut]):
        pytest.skip(f"{shortcut}: {peer_ready(BY_SHORTCUT[shortcut])}")
    got = answers(shortcut, [W_PATCH, W_TEXT, W_MEMBER, W_OP, W_UNMAPPED])
    for answer, expected in zip(got, WARNINGS[shortcut]):
        if expected is None:  # the 1.x pipeline's verifier fails the run on the text event
            assert answer["fatal"]["atEvent"] == 2 and answer["warnings"] == []
            continue
        # each warning also carries the console line as printed (detail: shown, not compared)
        assert all(isinstance(w.pop("detail"), str) for w in answer["warnings"] or [])
        assert (answer["warnings"], answer["warningsComplete"]) == (expected, True)
    # a line the table does not know leaves warnings partial: not compared, kept in the log
    unmapped = got[-1]
    if unmapped["fatal"] is None:  # the reducers (and 0.0.x's pipeline) print it
        assert unmapped["warnings"] is None and unmapped["warningsComplete"] is False
        assert unmapped["warningsUnmapped"] == [
            "warn: REASONING_MESSAGE_CONTENT: No message found with ID 'r-1'"]
        assert unmapped["log"] == [
            "warn @1: REASONING_MESSAGE_CONTENT: No message found with ID 'r-1'"]
    else:  # 1.x's pipeline: the verifier refuses the orphan reasoning content
        assert shortcut == "ag-ui-client:pipeline" and unmapped["fatal"]["atEvent"] == 1


@ready("ag-ui-client:reducer")
def test_compared_warnings_make_a_silent_skip_a_divergence():
    """FC-23's delta for an id never seen: the reducer skips it silently where the draft asks
    for a warning (ACTIVITY_DELTA_TARGET_MISSING): comparable now, so a divergence in warnings
    alone; a partial answer is compared without its warnings."""
    fc23 = [RS, delta("act_1", "web_search", [{"op": "replace", "path": "/status",
                                                "value": "done"}])]
    with AdapterProcess(resolve_matrix_adapter("ag-ui-client:reducer")) as adapter:
        trace = PeerTrace.of("fc23", fc23)
        c = classify(trace.events, adapter.request(trace.wire, None, "fc23"))
        assert (c.kind, c.aspects) == ("divergence", ["warnings"])
        orphan = PeerTrace.of("orphan", W_UNMAPPED)
        reply = adapter.request(orphan.wire, None, "orphan")
        assert reply.response["warnings"] is None
        assert classify(orphan.events, reply).kind == "draft"


# --- @assistant-ui/react-ag-ui and @tanstack/ai ------------------------------------------------

TEXT = [{"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"}]
RF = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
ACTIVITY = [snap(), delta(patch=[{"op": "replace", "path": "/n", "value": 1}])]


@ready("assistant-ui")
def test_assistant_ui_runtime_core_keeps_text_and_drops_a_generic_activity():
    text_and_activity, no_run = answers("assistant-ui", [[RS, *TEXT, *ACTIVITY, RF],
                                                         [snap()]])
    assert text_and_activity["peer"] == ("@assistant-ui/react-ag-ui@0.0.57+@ag-ui/client@0.0.58 "
                                         "(runtime core)")
    # only its own activity types (mcp-apps, a2ui-surface) become message parts
    assert text_and_activity["messages"] == [{"id": "m1", "role": "assistant", "content": "hi"}]
    assert text_and_activity["runInput"] == text_and_activity["messages"]
    assert text_and_activity["fatal"] is None and text_and_activity["warnings"] is None
    # @ag-ui/client's verifier underneath: the first event must be RUN_STARTED
    assert no_run["fatal"]["atEvent"] == 0 and "RUN_STARTED" in no_run["fatal"]["detail"]


@ready("assistant-ui")
def test_assistant_ui_answers_the_events_its_application_sees_and_the_request_it_built():
    from counterexamples.conformance.fixtures import fixture_from_json
    from counterexamples.conformance.runner import adapter_answers
    doc = {"name": "aui-x", "area": "activity", "description": "d", "specPage": "/spec/draft",
           "kill": "k", "input": {"messages": [
               {"id": "u1", "role": "user", "content": "go"},
               {"id": "a0", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]},
           "stream": [RS, *TEXT, {"type": "FUTURE_EVENT"}, RF],
           "expect": {"outcome": "completed", "messageCount": 2}}
    fx = fixture_from_json(doc)
    answer = adapter_answers([fx], resolve_matrix_adapter("assistant-ui"))[0]
    # @ag-ui/client 0.0.58 underneath drops the undescribed type before any subscriber
    assert [e["type"] for e in answer["events"]] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED"]
    # the run input its runtime built from the seeded thread: the activity is not sent
    assert answer["request"]["messages"] == [{"id": "u1", "role": "user", "content": "go"}]
    assert answer["request"]["runId"] == "generated-run"
    assert answer["messages"] == [{"id": "u1", "role": "user", "content": "go"},
                                  {"id": "m1", "role": "assistant", "content": "hi"}]


@ready("tanstack-ai")
def test_tanstack_stream_processor_ignores_activity_events():
    text_and_activity, activity_only = answers("tanstack-ai", [[RS, *TEXT, *ACTIVITY, RF],
                                                               [RS, *ACTIVITY]])
    assert text_and_activity["peer"] == "@tanstack/ai@0.58.0 (StreamProcessor)"
    # the wall-clock stamp is removed, nothing else of the package's wire form
    assert text_and_activity["messages"] == [{"id": "m1", "role": "assistant", "content": "hi"}]
    assert activity_only["messages"] == [] and activity_only["fatal"] is None
    assert activity_only["state"] is None  # the processor keeps no agent state
    # the package exposes no delivered events and builds no RunAgentInput (docs/peers.md)
    assert "events" not in activity_only and "request" not in activity_only


# --- CopilotKit: @copilotkitnext/core 1.54.1 and @copilotkit/react-core 1.74.0, over SSE -------

@ready("copilotkitnext-core")
def test_copilotkitnext_core_reads_the_trace_over_sse_and_fails_no_patch():
    text_and_activity, unopened = answers("copilotkitnext-core", [[RS, *TEXT, *ACTIVITY, RF],
                                                                  [RS, TEXT[1]]])
    assert text_and_activity["peer"] == ("@copilotkitnext/core@1.54.1+@ag-ui/client@0.0.48 "
                                         "(runAgent over SSE)")
    # the activity is created but its delta never applies: the bundled client has no applyPatch
    assert text_and_activity["messages"] == [
        {"id": "m1", "role": "assistant", "content": "hi"},
        {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]
    assert any("applyPatch is not a function" in line for line in text_and_activity["log"])
    # the next run's request body, as the runtime received it: activity stripped
    assert text_and_activity["runInput"] == [{"id": "m1", "role": "assistant", "content": "hi"}]
    assert text_and_activity["fatal"] is None and text_and_activity["warnings"] is None
    # the verifier fails the run on content for a message never started, at that event
    assert unopened["fatal"]["atEvent"] == 1 and "TEXT_MESSAGE_START" in unopened["fatal"]["detail"]


@ready("copilotkit")
def test_copilotkit_react_core_applies_the_delta():
    (text_and_activity,) = answers("copilotkit", [[RS, *TEXT, *ACTIVITY, RF]])
    assert text_and_activity["peer"] == ("@copilotkit/react-core@1.74.0+@ag-ui/client@0.0.59 "
                                         "(CopilotKitCoreReact over SSE)")
    assert text_and_activity["messages"][1] == {"id": "act-1", "role": "activity",
                                                "activityType": "PLAN", "content": {"n": 1}}
    assert text_and_activity["fatal"] is None


# --- ag-ui-protocol (Python) --------------------------------------------------------------------

def test_ag_ui_protocol_models_accept_reject_and_coerce():
    coerced, null_metadata, unnamed, unknown_op = answers("ag-ui-protocol", [
        [RS, snap(), snap(content={"n": 1}, replace="false")],
        [RS, snap(metadata=None)],
        [RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}],
        [RS, snap(), delta(patch=[{"op": "increment", "path": "/n"}])]])
    assert coerced["peer"] == "ag-ui-protocol@1.0.0 (event models as the wire layer)"
    # "false" becomes false: the snapshot leaves the activity alone (the draft: malformed, fatal)
    assert coerced["messages"][0]["content"] == {"n": 0} and coerced["fatal"] is None
    # metadata: null is dropped, so nothing is shimmed or refused
    assert null_metadata["messages"] == [
        {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]
    assert null_metadata["fatal"] is None and null_metadata["warnings"] == []
    # a SUBAGENT_STARTED without name and an op RFC 6902 does not define are refused
    assert unnamed["fatal"] == {"atEvent": 1, "reason": "rejected by the event models",
                                "detail": "SUBAGENT_STARTED.name: Field required"}
    assert unknown_op["fatal"]["atEvent"] == 2
    assert unknown_op["fatal"]["detail"].startswith("ACTIVITY_DELTA.patch.0")
    assert unknown_op["messages"][0]["content"] == {"n": 0}


# --- pinned packages ----------------------------------------------------------------------------

NODE_FOLDERS = sorted(str(p.parent.relative_to(PEERS)) for p in
                      [*PEERS.glob("*/package.json"), *PEERS.glob("producers/*/package.json")])


def test_every_node_adapter_is_pinned_by_a_lock_file_and_installed_by_make():
    assert NODE_FOLDERS == ["ag-ui-client", "ag-ui-client-0.0.59", "assistant-ui-react-ag-ui",
                            "copilotkit-react-core", "copilotkitnext-core", "producers",
                            "producers/mastra", "tanstack-ai"]
    makefile = (ROOT / "Makefile").read_text()
    dirs = re.search(r"^PEER_DIRS := (.*)$", makefile, re.M).group(1).split()
    assert sorted(d.replace("$(PEER_DIR)", "peers/ag-ui-client") for d in dirs) == [
        f"peers/{f}" for f in NODE_FOLDERS]
    for folder in NODE_FOLDERS:
        package = json.loads((PEERS / folder / "package.json").read_text())
        lock = json.loads((PEERS / folder / "package-lock.json").read_text())
        assert lock["lockfileVersion"] == 3
        assert lock["packages"][""]["dependencies"] == package["dependencies"]
        for name, version in package["dependencies"].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), (folder, name, version)  # exact
            assert lock["packages"][f"node_modules/{name}"]["version"] == version
            assert lock["packages"][f"node_modules/{name}"]["integrity"].startswith("sha512-")
    pins = (PEERS / "ag-ui-protocol" / "requirements.txt").read_text()
    assert "ag-ui-protocol==1.0.0" in pins.splitlines()
    assert '"ag-ui-protocol==1.0.0"' in (ROOT / "pyproject.toml").read_text()
