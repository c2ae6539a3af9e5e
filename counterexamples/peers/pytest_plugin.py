"""pytest plugin: run activity-check's corpus against your own consumer, from your own test suite.

Installed with activity-check (entry point ``pytest11``: ``activity_check``). It is inert until a
test asks for its fixtures, and those skip unless ``--activity-peer`` names an adapter.

Options:

* ``--activity-peer CMD``: the adapter's command line (any program speaking the adapter protocol of
  docs/peers.md), or a shortcut (``model[:READING]``, ``ag-ui-client:reducer``,
  ``ag-ui-client:pipeline``);
* ``--activity-peer-traces PATH`` (repeatable): trace files or directories to use instead of the
  committed corpus;
* ``--activity-peer-timeout S``: seconds one answer may take (default 10);
* ``--activity-peer-accept reading|draft``: pass a trace when the peer agrees with some reading of
  the draft (default), or only when it agrees with the literal ``draft`` reading.

Fixtures:

* ``activity_trace``: parametrised over the corpus (one test per trace, with the trace id as test
  id): a :class:`counterexamples.peers.traces.PeerTrace`;
* ``activity_peer``: session-scoped; one long-lived adapter process for the whole run. Its
  :meth:`PeerChecker.check` sends a trace, classifies the answer and fails the test with the
  trace, the peer's verdict and the nearest reading's when the peer diverges (or, with
  ``--activity-peer-accept draft``, agrees only with another reading), or when the adapter fails.

* ``activity_lint``: for producer (agent) teams, no option needed:
  :func:`counterexamples.lint.pytest_helper.assert_conformant`, which lints a stream (wire dicts, typed
  events, or the stream's text) and fails the test with every producer violation listed::

      def test_my_agent_stream(activity_lint):
          activity_lint(my_agent.run_and_collect_events())

Either write the two-line test yourself::

    def test_activity_corpus(activity_trace, activity_peer):
        activity_peer.check(activity_trace)

or run the bundled one: ``pytest --pyargs counterexamples.peers.suite --activity-peer "CMD"``.
"""
from __future__ import annotations

import json
from typing import Optional

import pytest

__all__ = ["PeerChecker", "activity_peer", "activity_lint", "pytest_addoption",
           "pytest_generate_tests"]


def pytest_addoption(parser) -> None:
    """Register the ``--activity-peer*`` options."""
    group = parser.getgroup("activity-check", "activity-check: the AG-UI activity corpus against "
                                              "a consumer")
    group.addoption("--activity-peer", metavar="CMD", default=None,
                    help="adapter command line (JSON lines on stdin/stdout) of the consumer to "
                         "check, or model[:READING] / ag-ui-client:reducer / "
                         "ag-ui-client:pipeline")
    group.addoption("--activity-peer-traces", metavar="PATH", action="append", default=None,
                    help="trace files or directories instead of the committed corpus "
                         "(repeatable)")
    group.addoption("--activity-peer-timeout", metavar="S", type=float, default=None,
                    help="seconds one answer may take (default 10)")
    group.addoption("--activity-peer-accept", choices=("reading", "draft"), default="reading",
                    help="pass when the peer agrees with some reading (default) or only with "
                         "draft")


def _traces(config) -> list:
    from counterexamples.peers.traces import corpus_traces, load_traces
    from model.wire import TraceFormatError
    paths = config.getoption("activity_peer_traces")
    try:
        return load_traces(paths) if paths else corpus_traces()
    except (TraceFormatError, ValueError) as exc:
        raise pytest.UsageError(f"--activity-peer-traces: {exc}") from None


def pytest_generate_tests(metafunc) -> None:
    """Parametrise ``activity_trace`` over the corpus (or ``--activity-peer-traces``)."""
    if "activity_trace" in metafunc.fixturenames:
        traces = _traces(metafunc.config)
        metafunc.parametrize("activity_trace", traces, ids=[t.id for t in traces])


class PeerChecker:
    """Checks traces on one adapter process (see the module docstring).

    Attributes:
        adapter: the :class:`counterexamples.peers.adapter.AdapterProcess`.
        accept: ``"reading"`` or ``"draft"``.
    """

    def __init__(self, adapter, accept: str = "reading"):
        self.adapter = adapter
        self.accept = accept

    def check(self, trace) -> "object":
        """Send ``trace`` (a :class:`~counterexamples.peers.traces.PeerTrace`), classify the answer and
        return the :class:`~counterexamples.peers.classify.Classification`.

        Raises:
            AssertionError: the adapter failed on the trace, the peer agrees with no reading, or
                (accept ``draft``) it agrees only with readings other than draft; the message
                holds the trace as JSON lines and both verdicts.
        """
        __tracebackhide__ = True
        from counterexamples.peers.classify import classify
        reply = self.adapter.request(trace.wire, trace.state, trace.id)
        result = classify(trace.events, reply, trace.state)
        if result.kind == "error":
            raise AssertionError(f"{trace.id}: the adapter gave no usable answer: {result.error}")
        if result.kind == "divergence" or (self.accept == "draft" and result.kind != "draft"):
            raise AssertionError(_explain(trace, reply.response, result, self.adapter.spec.label))
        return result


def _explain(trace, response: dict, result, adapter_label: str) -> str:
    """The failure message: what happened, both verdicts, the trace, how to replay it."""
    from counterexamples.peers.divergence import describe_verdict
    first = result.leaves[0][1].to_json(detail=False) if result.leaves else {}
    if result.kind == "divergence":
        head = (f"{trace.id}: the peer agrees with no reading of the draft; it differs from the "
                f"nearest reading ({result.nearest}) in: {', '.join(result.aspects)}")
    else:
        head = (f"{trace.id}: the peer agrees only with other readings than draft "
                f"({'; '.join(result.readings[:4])}); it differs from draft in: "
                f"{', '.join(result.aspects)}")
    lines = [head, f"  model (draft): {describe_verdict(first)}",
             f"  peer:          {describe_verdict(response)}", "  trace (AG-UI JSON lines):"]
    lines += ["    " + json.dumps(e, ensure_ascii=False, separators=(",", ":"))
              for e in trace.wire]
    if trace.state is not None:
        lines.append(f"  initial agent state: {json.dumps(trace.state)}")
    lines.append(f"  replay: activity-check peer check --adapter {json.dumps(adapter_label)} "
                 "<this trace saved as .jsonl>")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def activity_peer(request):
    """A :class:`PeerChecker` on one adapter process for the whole session; skips the test when
    no ``--activity-peer`` is given."""
    from counterexamples.peers.adapter import DEFAULT_TIMEOUT, AdapterProcess, PeerError, resolve_adapter
    command: Optional[str] = request.config.getoption("activity_peer")
    if not command:
        pytest.skip("no adapter named: pass --activity-peer CMD to check your consumer on "
                    "activity-check's traces")
    try:
        spec = resolve_adapter(command)
    except PeerError as exc:
        raise pytest.UsageError(str(exc)) from None
    timeout = request.config.getoption("activity_peer_timeout") or DEFAULT_TIMEOUT
    adapter = AdapterProcess(spec, timeout=timeout)
    try:
        yield PeerChecker(adapter, request.config.getoption("activity_peer_accept"))
    finally:
        adapter.close()


@pytest.fixture
def activity_lint():
    """The producer-side check (issue 22): ``activity_lint(events, reading=None,
    fail_on="error")`` raises ``AssertionError`` listing every violation at or above
    ``fail_on`` (see :func:`counterexamples.lint.pytest_helper.assert_conformant`)."""
    from counterexamples.lint.pytest_helper import assert_conformant
    return assert_conformant
