"""``assert_conformant``: lint a producer's stream from a producer team's own pytest suite.

    from counterexamples.lint.pytest_helper import assert_conformant

    def test_my_agent_stream():
        events = list(my_agent.run(...))          # wire dicts, or the SSE body as text
        assert_conformant(events)                  # every producer reading of the draft
        assert_conformant(events, reading="Q2=parent")

It fails with every violation listed (clause, keyword, event index, JSON pointer, what was seen),
one a line, as ``activity-check lint`` prints them.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

from counterexamples.lint.linter import LintReport, lint_stream, lint_wire
from model.readings import Reading, parse_reading

__all__ = ["assert_conformant"]


def assert_conformant(events: Union[str, bytes, Iterable[Any]],
                      reading: Union[None, str, Reading] = None,
                      fail_on: str = "error") -> LintReport:
    """Lint ``events`` and fail the test when a violation reaches ``fail_on``.

    Args:
        events: wire event dicts (or typed :class:`model.events.Event` values) in order, or the
            stream as text or bytes: a JSON array, JSON lines or a text/event-stream body (what
            an SSE endpoint answered; ``ag_ui.encoder.EventEncoder`` output joined).
        reading: None (every producer reading judges; a violation only some readings make
            fails too), a :class:`~model.readings.Reading` or its text (``"Q2=parent"``).
        fail_on: ``"error"`` (default: MUST-level violations), ``"warning"`` (SHOULD-level too)
            or ``"never"``.

    Returns:
        The :class:`~counterexamples.lint.linter.LintReport`, when the stream passes.

    Raises:
        AssertionError: listing the violations (and the stream's notes) when it fails.
        ValueError: for an unknown reading or threshold; ``model.wire.TraceFormatError`` for
            text that is no stream at all.
    """
    __tracebackhide__ = True
    from counterexamples.lint.formats import render
    from counterexamples.lint.inputs import parse_stream_text
    chosen: Optional[Reading] = parse_reading(reading) if isinstance(reading, str) else reading
    if isinstance(events, (str, bytes)):
        text = events.decode("utf-8") if isinstance(events, bytes) else events
        found = parse_stream_text(text, "<events>")
        report = lint_stream(found.entries, chosen, found.source, found.input_format,
                             found.notes)
    else:
        report = lint_wire(events, chosen, "<events>")
    if report.fails(fail_on):
        raise AssertionError("the stream is not conformant (activity-check lint):\n" +
                             render(report, "pretty", fail_on))
    return report
