"""The consumer contract that the search engines and the zoo's mutants share.

A :class:`Consumer` is anything with the step signature ``step(state, event, reading) ->
StepResult`` over :class:`model.consumer.ConsumerState`, plus ``run_input(state)``. The reference
model is :data:`REFERENCE`; the wrong consumers are in :mod:`properties.zoo`; real SDKs come in
through adapters (:mod:`counterexamples.peers`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from model.consumer import ConsumerState, StepResult, run_input, step
from model.events import Event
from model.readings import DRAFT, Reading

__all__ = ["Consumer", "REFERENCE", "StepFn"]

StepFn = Callable[[ConsumerState, Event, Reading], StepResult]


@dataclass(frozen=True)
class Consumer:
    """A consumer under test.

    Attributes:
        name: short name.
        step: the step function (same signature and state type as :func:`model.consumer.step`).
        run_input: what the consumer sends next, ``run_input(state) -> list of wire messages``.
        clause: for a mutant, the clause its mistake breaks.
        description: the mistake, in words.
        case: the field case the mistake comes from, if any.
        reading: the reading the consumer claims to implement and is checked under.
        features: for a mutant written for the draft's wider surface (issue 20), the coverage
            items its mistake targets: items of :func:`properties.coverage.universe` (surface
            features such as ``op:add:dash:integer`` or ``malformed:ACTIVITY_SNAPSHOT.replace:
            string``, step branches such as ``step.unbalanced``, knob options such as
            ``X1=drop-open``); empty for the others.
    """

    name: str
    step: StepFn
    run_input: Callable[[ConsumerState], list] = run_input
    clause: str = ""
    description: str = ""
    case: str = ""
    reading: Reading = DRAFT
    features: tuple[str, ...] = ()


REFERENCE = Consumer("reference", step, run_input, description="the model itself")
