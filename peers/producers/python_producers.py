"""activity-check producer matrix, the Python producers: pydantic-ai's AG-UI adapter and
agent-framework-ag-ui, each run offline through several scenarios, one JSON line per stream on
stdout (the form of ``produce.mjs``):
``{"producer", "version", "scenario", "about", "events": [...wire events...], "error": null|"..."}``.

Offline: pydantic-ai runs an ``Agent`` on a ``FunctionModel`` (a scripted model: no network, no
weights) whose tools hand AG-UI events back in their ``ToolReturn`` metadata, the way that
adapter lets a tool emit activity; agent-framework-ag-ui runs a ``Workflow`` of scripted
executors (no chat client) through its own AG-UI workflow runner. Each producer's own encoder
writes the SSE body, read back here. Ids a producer draws at random (uuid4) are renamed
``uuid-<n>`` and wall-clock ``timestamp`` members numbered in order, so that the same scenarios
give the same streams.

A producer whose package is not importable in this interpreter is skipped (a line on stderr):
agent-framework-ag-ui 1.7.0 asks for ag-ui-protocol < 0.2 and so lives in a venv of its own
(``.venv-producers``, the ``producers`` extra), while pydantic-ai runs in the dev venv.
counterexamples/peers/producers.py runs this script under each.

Usage: python python_producers.py [--only pydantic-ai|agent-framework-ag-ui]
"""

import asyncio
import json
import re
import sys
from importlib.metadata import PackageNotFoundError, version

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def sse_events(body: str) -> list[dict]:
    """The JSON of every ``data:`` line of an SSE body, in order."""
    return [json.loads(line[5:].strip()) for line in body.splitlines()
            if line.startswith("data:") and line[5:].strip()]


def normalise(events: list[dict]) -> list[dict]:
    """uuid4 values renamed uuid-<n> in order of appearance; timestamps numbered."""
    names: dict[str, str] = {}
    text = UUID.sub(lambda m: names.setdefault(m.group(0), f"uuid-{len(names) + 1}"),
                    json.dumps(events))
    out = json.loads(text)
    for i, e in enumerate(out):
        if "timestamp" in e:
            e["timestamp"] = i
    return out


def emit(producer: str, dist: str, scenario: str, about: str, events, error=None) -> None:
    sys.stdout.write(json.dumps({"producer": producer, "version": version(dist),
                                 "scenario": scenario, "about": about,
                                 "events": normalise(events), "error": error}) + "\n")


# --- pydantic-ai ----------------------------------------------------------------------------------

def pydantic_ai_scenarios():
    from ag_ui.core import (ActivityDeltaEvent, ActivitySnapshotEvent, RunAgentInput,
                            UserMessage)
    from pydantic_ai import Agent, ModelRetry, ToolReturn
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    def plan(mid, step, **content):
        return ActivitySnapshotEvent(message_id=mid, activity_type="PLAN",
                                     content={"step": step, **content})

    def advance(mid, step):
        return ActivityDeltaEvent(message_id=mid, activity_type="PLAN",
                                  patch=[{"op": "replace", "path": "/step", "value": step}])

    def run(tool_events, *, run_id="run-1", fail=False, retry=False, history=()):
        """One run of a scripted agent: text, a call of tool `work` (arguments in two chunks),
        the tool's result (its ToolReturn metadata: `tool_events(call)`), an answer."""
        turns = []
        calls = []

        async def stream(messages, info: AgentInfo):
            turns.append(len(messages))
            if fail and len(turns) == 1:
                yield "Starting"
                raise RuntimeError("provider down")
            if len(turns) <= (2 if retry else 1):
                yield "Working "
                yield "on it."
                yield {1: DeltaToolCall(name="work", json_args='{"task":',
                                        tool_call_id=f"call-{run_id}-{len(turns)}")}
                yield {1: DeltaToolCall(json_args='"plan"}')}
            else:
                yield "Done."

        agent = Agent(FunctionModel(stream_function=stream))

        @agent.tool_plain
        def work(task: str) -> ToolReturn:
            """Do the task."""
            calls.append(task)
            if retry and len(calls) == 1:
                raise ModelRetry("try again")
            return ToolReturn(return_value=f"{task} done", metadata=tool_events(len(calls)))

        run_input = RunAgentInput(thread_id="thread-1", run_id=run_id, state={},
                                  messages=[UserMessage(id=f"u-{run_id}", role="user",
                                                        content="go"), *history],
                                  tools=[], context=[], forwarded_props={})
        adapter = AGUIAdapter(agent=agent, run_input=run_input, accept="text/event-stream")

        async def collect() -> str:
            return "".join([c async for c in adapter.encode_stream(adapter.run_stream())])
        return sse_events(asyncio.run(collect()))

    yield ("tool-activity", "text streamed, a tool call in two chunks whose result carries an "
           "activity snapshot and a delta, then the answer",
           lambda: run(lambda n: [plan("plan-1", 1), advance("plan-1", 2)]))
    yield ("tool-retry", "the tool asks for a retry (ModelRetry) on its first call; the second "
           "call's result carries the activity",
           lambda: run(lambda n: [plan("plan-1", n)], retry=True))
    yield ("model-error", "the model fails after its first text chunk: RUN_ERROR",
           lambda: run(lambda n: [], fail=True))
    yield ("two-activities", "one tool result carrying two activities, each snapshot then delta",
           lambda: run(lambda n: [plan("plan-a", 1), plan("plan-b", 1, owner="b"),
                                  advance("plan-a", 2), advance("plan-b", 3)]))
    yield ("two-runs", "two runs on one thread: the second's tool re-sends the first run's "
           "activity as a snapshot, then a delta",
           lambda: run(lambda n: [plan("plan-1", 1)], run_id="run-1")
           + run(lambda n: [plan("plan-1", 2), advance("plan-1", 3)], run_id="run-2"))


# --- agent-framework-ag-ui --------------------------------------------------------------------------

def agent_framework_scenarios():
    from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler
    from agent_framework_ag_ui import AgentFrameworkWorkflow

    class First(Executor):
        """The start executor: takes the conversation, passes the last text on."""

        @handler
        async def take(self, messages: list[Message], ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(f"{messages[-1].text if messages else ''}>{self.id}")

    class Step(Executor):
        """A scripted executor: passes its text on (or fails, when told to)."""

        def __init__(self, id: str, fail: bool = False):
            super().__init__(id=id)
            self.fail = fail

        @handler
        async def take(self, text: str, ctx: WorkflowContext[str, str]) -> None:
            if self.fail:
                raise RuntimeError(f"{self.id} failed")
            await ctx.send_message(f"{text}>{self.id}")

    class Last(Executor):
        @handler
        async def take(self, text: str, ctx: WorkflowContext[None, str]) -> None:
            await ctx.yield_output(f"{text}>{self.id}")

    def workflow(*names, fail_at=None):
        steps = ([First(id=names[0])] + [Step(n, fail=(n == fail_at)) for n in names[1:-1]]
                 + [Last(id=names[-1])])
        builder = WorkflowBuilder(start_executor=steps[0])
        for a, b in zip(steps, steps[1:]):
            builder = builder.add_edge(a, b)
        return builder.build()

    def run(build, runs=("run-1",)):
        events = []
        for run_id in runs:
            wf = AgentFrameworkWorkflow(workflow=build())

            async def collect():
                out = []
                async for e in wf.run({"thread_id": "thread-1", "run_id": run_id,
                                       "messages": [{"id": f"u-{run_id}", "role": "user",
                                                     "content": "go"}]}):
                    out.append(e.model_dump(mode="json", by_alias=True, exclude_none=True))
                return out
            events += asyncio.run(collect())
        return events

    yield ("two-executors", "a workflow of two scripted executors (no model): each executor as "
           "an activity", lambda: run(lambda: workflow("plan", "write")))
    yield ("three-executors", "three executors in a row: several activities",
           lambda: run(lambda: workflow("fetch", "plan", "write")))
    yield ("executor-fails", "the second executor raises: the run fails",
           lambda: run(lambda: workflow("plan", "check", "write", fail_at="check")))
    yield ("two-runs", "the same workflow run twice on one thread",
           lambda: run(lambda: workflow("plan", "write"), runs=("run-1", "run-2")))


PRODUCERS = (("pydantic-ai", "pydantic-ai-slim", "pydantic_ai.ui.ag_ui", pydantic_ai_scenarios),
             ("agent-framework-ag-ui", "agent-framework-ag-ui", "agent_framework_ag_ui",
              agent_framework_scenarios))


def main(argv: list[str]) -> int:
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    for name, dist, module, scenarios in PRODUCERS:
        if only and only != name:
            continue
        try:
            version(dist)
            __import__(module)
        except (PackageNotFoundError, ImportError) as exc:
            sys.stderr.write(f"{name}: not installed here ({exc}); skipped\n")
            continue
        for scenario, about, produce in scenarios():
            error = None
            try:
                events = produce()
            except Exception as exc:  # the producer failing is a result of the scenario
                events, error = [], f"{type(exc).__name__}: {exc}"
            emit(name, dist, scenario, about, events, error)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
