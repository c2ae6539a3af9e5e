"""An agent-framework integration driven offline and linted (issue 22, item 4): pydantic-ai's
AG-UI adapter (``pydantic-ai-slim[ag-ui]``, pinned in the dev extra) running an agent on a
``FunctionModel`` (a scripted model: no network, no weights) that thinks, streams text, calls a
tool with its arguments in two chunks, answers after the tool's result, and, in a second run,
fails. The adapter's own SSE encoder writes the body; lint reads it back, and the draft consumer
replays it."""
from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pydantic_ai.ui.ag_ui",
                    reason="pydantic-ai-slim[ag-ui] (the dev extra) is not installed")

from ag_ui.core import RunAgentInput, UserMessage  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel  # noqa: E402
from pydantic_ai.ui.ag_ui import AGUIAdapter  # noqa: E402

from counterexamples.lint.linter import lint_stream  # noqa: E402
from counterexamples.lint.inputs import parse_stream_text  # noqa: E402
from counterexamples.lint.pytest_helper import assert_conformant  # noqa: E402
from model.readings import DRAFT  # noqa: E402
from model.verdict import evaluate  # noqa: E402
from model.wire import parse_event  # noqa: E402


def _agent_body(fail: bool) -> str:
    """The SSE body pydantic-ai's AG-UI adapter answers for one run of a scripted agent."""
    turns = []

    async def stream(messages, info: AgentInfo):
        turns.append(len(messages))
        if fail:
            raise RuntimeError("provider down")
        if len(turns) == 1:
            yield {0: DeltaThinkingPart(content="the weather is needed")}
            yield "Let me "
            yield "look."
            yield {1: DeltaToolCall(name="lookup", json_args='{"city":', tool_call_id="call-1")}
            yield {1: DeltaToolCall(json_args='"Oslo"}')}
        else:
            yield "Sunny in Oslo."

    agent = Agent(FunctionModel(stream_function=stream))

    @agent.tool_plain
    def lookup(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    run_input = RunAgentInput(thread_id="thread-1", run_id="run-2" if fail else "run-1", state={},
                              messages=[UserMessage(id="u1", role="user", content="weather?")],
                              tools=[], context=[], forwarded_props={})
    adapter = AGUIAdapter(agent=agent, run_input=run_input, accept="text/event-stream")

    async def collect() -> str:
        return "".join([chunk async for chunk in adapter.encode_stream(adapter.run_stream())])
    return asyncio.run(collect())


@pytest.fixture(scope="module")
def body() -> str:
    return _agent_body(False) + _agent_body(True)


def test_what_the_adapter_emits(body):
    found = parse_stream_text(body, "pydantic-ai.sse")
    assert found.input_format == "sse" and found.notes == ()
    types = [e.value["type"] for e in found.entries]
    assert types == [
        "RUN_STARTED",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
        "RUN_STARTED", "RUN_ERROR"]
    values = [e.value for e in found.entries]
    start = values[10]
    assert (start["toolCallId"], start["toolCallName"]) == ("call-1", "lookup")
    assert start["parentMessageId"] == values[6]["messageId"]      # the text that holds the call
    assert "".join(v["delta"] for v in values[11:13]) == '{"city":"Oslo"}'
    assert values[14]["content"] == "sunny in Oslo"
    assert values[0]["protocolVersion"] == "1.0"
    assert values[20]["message"] == "provider down"


def test_lint_finds_the_adapters_stream_conformant(body):
    found = parse_stream_text(body, "pydantic-ai.sse")
    report = lint_stream(found.entries, None, found.source, found.input_format, found.notes)
    assert report.events == 21
    assert [(v.clause, v.event_index) for v in report.violations] == []
    assert report.conformant and len(report.conformant_under()) == len(report.readings)
    assert_conformant(body)


def test_the_draft_consumer_replays_it(body):
    events = [parse_event(e.value) for e in parse_stream_text(body, "pydantic-ai.sse").entries]
    first = evaluate(events[:19], DRAFT)
    assert first.fatal is None and first.warnings == () and first.state.run == "finished"
    whole = evaluate(events, DRAFT)
    assert whole.fatal is None and whole.state.run == "errored"
