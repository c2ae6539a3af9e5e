"""Hypothesis stateful machines: a producer playing against a consumer, properties as invariants.

:class:`TraceRunner` steps one consumer over a trace and checks every property of the catalogue
on each transition (it is the shared engine: the machines, the zoo benchmark and the tests drive
it). On top of it, :func:`consumer_machine` builds a ``RuleBasedStateMachine``:

1. conformant producer vs a consumer under one reading (``adversarial=False``);
2. adversarial producer (conformant moves mixed with labelled non-conformant ones) vs a consumer:
   the consumer's own duties hold whatever the producer does;
3. :class:`AllReadingsMachine`: one trace under all readings at once, recording ambiguities;
4. any consumer with the step signature (``consumer=`` a :class:`model.consumers.Consumer`): used by
   the zoo now, by real SDKs later.

:func:`run_machine` runs a machine class with a seed and an example budget, and reports whether a
property failed, which, after how many examples and seconds, and the (Hypothesis-shrunk) witness.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, seed as hseed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from model.consumer import ConsumerState, initial_state
from model.events import Event
from model.producer import DEFAULT_VOCABULARY, Belief, Vocabulary, advance, violations
from model.readings import DRAFT, Reading
from model.verdict import step_record
from model.verdict import splits_of
from properties.catalogue import (PROPERTIES, PROPERTY_BY_ID, Property, PropertyViolation,
                                  Transition, check_transition)
from properties.strategies import fixed_constants, grouped_moves, pick, random_surface_event
from model.consumers import REFERENCE, Consumer

__all__ = ["TraceRunner", "consumer_machine", "RANDOM_SHARE", "AllReadingsMachine",
           "MachineResult", "run_machine", "check_trace_properties", "search_with_machine"]


class TraceRunner:
    """Steps ``consumer`` over events one at a time (each step recorded by
    :func:`model.verdict.step_record`, the one-event form of the trace fold, with the producer
    monitor's violations), tracking the producer's belief, and checks ``properties`` on every
    transition.

    Raises :class:`PropertyViolation` from :meth:`send` on the first property that fails (an
    exception escaping the consumer's step is property ``P00-no-exception``).
    """

    def __init__(self, consumer: Consumer = REFERENCE, reading: Reading = DRAFT,
                 properties: Sequence[Property] = PROPERTIES,
                 start: Optional[ConsumerState] = None):
        self.consumer, self.reading, self.properties = consumer, reading, tuple(properties)
        self.state = start if start is not None else initial_state()
        self.belief = Belief()
        self.events: list[Event] = []
        self.conformant = True

    def _restep(self, state: ConsumerState, event: Event):
        result = self.consumer.step(state, event, self.reading)
        return result.state, result.warnings, result.fatal

    def send(self, event: Event) -> Transition:
        """Step one event; returns the checked :class:`Transition`."""
        index = len(self.events)
        self.events.append(event)
        before = self.state
        try:
            record = step_record(index, before, event, self.reading, self.consumer.step,
                                 self.belief)
            run_input = tuple(self.consumer.run_input(record.after))
        except Exception as exc:  # noqa: BLE001 - any escape is the finding
            raise PropertyViolation(PROPERTY_BY_ID["P00-no-exception"],
                                    f"{type(exc).__name__}: {exc}", index) from exc
        self.conformant = self.conformant and not record.violations
        belief_after = advance(self.belief, event)
        t = Transition(index, before, event, record.after, record.warnings, record.fatal,
                       self.reading, run_input, self.belief, belief_after, self.conformant,
                       self._restep)
        self.state, self.belief = record.after, belief_after
        found = check_transition(t, self.properties)
        if found is not None:
            raise PropertyViolation(found[0], found[1], index)
        return t


def check_trace_properties(events: Sequence[Event], consumer: Consumer = REFERENCE,
                           reading: Reading = DRAFT, properties: Sequence[Property] = PROPERTIES
                           ) -> Optional[PropertyViolation]:
    """Run a whole trace through :class:`TraceRunner`; the first violation, or None."""
    runner = TraceRunner(consumer, reading, properties)
    try:
        for event in events:
            runner.send(event)
    except PropertyViolation as violation:
        return violation
    return None


RANDOM_SHARE = 4
"""The machines' default random share: while a run is active, one conformant event in this many
is drawn from the random surface (:func:`properties.strategies.random_surface_event`); 0 draws
none (see :func:`consumer_machine`)."""


@dataclass
class _Stats:
    """Bookkeeping shared by every instance of one machine class during one run."""

    instances: int = 0
    started: float = field(default_factory=time.monotonic)
    first_failure_instance: Optional[int] = None
    first_failure_seconds: Optional[float] = None
    last_violation: Optional[PropertyViolation] = None
    last_events: tuple = ()
    steps: int = 0
    random_steps: int = 0


def consumer_machine(consumer: Consumer = REFERENCE, reading: Reading = DRAFT,
                     adversarial: bool = False, vocabulary: Vocabulary = DEFAULT_VOCABULARY,
                     properties: Sequence[Property] = PROPERTIES,
                     random_share: int = RANDOM_SHARE) -> type:
    """A RuleBasedStateMachine class: a producer sends events to ``consumer`` under ``reading``;
    every property is checked on every step. With ``adversarial`` one event in four is a
    labelled non-conformant move (:func:`model.producer.adversarial_moves` and the surface's,
    :func:`properties.surface.surface_adversarial`: wrong-typed members, events aimed at
    another role's id...); the others are conformant. Of the conformant ones, while a run is
    active, one in ``random_share`` (default :data:`RANDOM_SHARE`; 0: none, the vocabulary's
    and the named surface's moves only) is drawn with Hypothesis-drawn JSON values
    (:func:`properties.strategies.random_surface_event`: drawn contents and metadata, patches
    of one to four operations each drawn against the document the operations before it left,
    array indices at the edges, writes under a copy) and sent when the producer monitor finds
    it conformant (:func:`model.producer.violations`; else a vocabulary move is drawn). The
    random draw never takes the adversarial slot: what it would draw there (malformed wires,
    role-aimed events) the surface's adversarial moves already draw, and a fatal event early
    in an example wastes the rest of it (``benchmarks/mutants.py --random-share``, figures in
    ``benchmarks/README.md``). The shares are nominal: Hypothesis draws the 0 of a bounded
    integer more often than uniformly. The class carries a ``stats`` record filled while
    Hypothesis runs it (``steps``, and ``random_steps`` of them drawn from the random surface).

    Raises:
        ValueError: ``random_share`` is negative.
    """
    if random_share < 0:
        raise ValueError(f"random_share must be 0 (off) or a positive integer, not {random_share}")
    stats = _Stats()

    class ConsumerMachine(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            stats.instances += 1
            self.runner = TraceRunner(consumer, reading, properties)

        @rule(data=st.data())
        def send(self, data):
            event = None
            if adversarial and data.draw(st.integers(0, 3), label="adversarial") == 0:
                bad = grouped_moves(self.runner.belief, vocabulary, reading, adversarial=True)
                if bad:
                    event = pick(data.draw, bad)[0]
            elif random_share:
                event = _random_event(data, self.runner.belief, vocabulary, reading,
                                      random_share)
                stats.random_steps += event is not None
            if event is None:
                options = grouped_moves(self.runner.belief, vocabulary, reading)
                if not options:
                    return
                event = pick(data.draw, options)
            stats.steps += 1
            try:
                self.runner.send(event)
            except PropertyViolation as violation:
                if stats.first_failure_instance is None:
                    stats.first_failure_instance = stats.instances
                    stats.first_failure_seconds = time.monotonic() - stats.started
                stats.last_violation = violation
                stats.last_events = tuple(self.runner.events)
                raise

    ConsumerMachine.__name__ = f"{'Adversarial' if adversarial else 'Conformant'}Machine"
    ConsumerMachine.stats = stats
    ConsumerMachine.consumer = consumer
    return ConsumerMachine


def _random_event(data, belief: Belief, vocabulary: Vocabulary, reading: Reading,
                  share: int) -> Optional[Event]:
    """One time in ``share`` while the run is active, an event of
    :func:`properties.strategies.random_surface_event` when the producer monitor finds it
    conformant; else None (the caller draws a vocabulary or surface move)."""
    if belief.run != "active" or data.draw(st.integers(0, share - 1), label="random") != 0:
        return None
    event = data.draw(random_surface_event(belief, vocabulary))
    return None if violations(belief, event, reading) else event


class AllReadingsMachine(RuleBasedStateMachine):
    """Machine 3: a conformant trace grows one move at a time; after each move the trace is run
    under every reading at once and each knob that splits it is recorded in ``found``
    (``{knob id: shortest trace}``, a class attribute filled across examples). Never fails."""

    found: dict = {}
    vocabulary: Vocabulary = DEFAULT_VOCABULARY

    def __init__(self):
        super().__init__()
        self.belief = Belief()
        self.events: list[Event] = []

    @rule(data=st.data())
    def send(self, data):
        options = grouped_moves(self.belief, self.vocabulary, DRAFT)
        if not options:
            return
        event = pick(data.draw, options)
        self.events.append(event)
        self.belief = advance(self.belief, event)
        for knob in splits_of(self.events):
            best = type(self).found.get(knob)
            if best is None or len(self.events) < len(best):
                type(self).found[knob] = tuple(self.events)


@fixed_constants()  # the same seed draws the same traces whatever was imported
def search_with_machine(seed: int = 0, max_examples: int = 200, max_steps: int = 10,
                        vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> dict:
    """Run :class:`AllReadingsMachine` (machine 3) with a seed; returns ``{knob id: trace}``, the
    shortest trace per knob that splits."""
    machine = type("AllReadings", (AllReadingsMachine,), {"found": {}, "vocabulary": vocabulary})
    run_state_machine_as_test(hseed(seed)(machine), settings=settings(
        max_examples=max_examples, stateful_step_count=max_steps, deadline=None, database=None,
        phases=[Phase.generate], verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck)))
    return dict(machine.found)


@dataclass
class MachineResult:
    """Outcome of :func:`run_machine`.

    Attributes:
        caught: a property failed.
        property: the failed property's id (or None).
        clauses: its clauses.
        witness: the shrunk failing trace (events), empty when nothing failed.
        examples_until_caught: machine runs (examples) up to and including the first failure.
        seconds_until_caught: wall time to the first failure.
        seconds: total wall time (search and shrinking).
        examples: machine runs in all; steps: events sent in all; random_steps: those of them
            drawn from the random surface (see :func:`consumer_machine`).
        message: the violation text.
        violation: the :class:`PropertyViolation` itself (None when nothing failed).
    """

    caught: bool
    property: Optional[str] = None
    clauses: tuple = ()
    witness: tuple = ()
    examples_until_caught: Optional[int] = None
    seconds_until_caught: Optional[float] = None
    seconds: float = 0.0
    examples: int = 0
    steps: int = 0
    random_steps: int = 0
    message: str = ""
    violation: Optional[PropertyViolation] = None


@fixed_constants()  # the same seed draws the same traces whatever was imported
def run_machine(machine: type, seed: int = 0, max_examples: int = 500, max_steps: int = 12,
                shrink: bool = True) -> MachineResult:
    """Run a machine class from :func:`consumer_machine` with a seed and budget.

    Returns:
        A :class:`MachineResult`; a property failure is data, not an exception.
    """
    stats = machine.stats
    stats.__init__()
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    configured = hseed(seed)(machine)
    started = time.monotonic()
    try:
        run_state_machine_as_test(configured, settings=settings(
            max_examples=max_examples, stateful_step_count=max_steps, deadline=None,
            database=None, phases=phases, verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck), report_multiple_bugs=False))
    except Exception:  # noqa: BLE001 - a property failure is reported below, anything else re-raised
        violation = stats.last_violation
        if violation is None:
            raise
        return MachineResult(
            True, violation.property.id, violation.property.clauses, stats.last_events,
            stats.first_failure_instance, stats.first_failure_seconds,
            time.monotonic() - started, stats.instances, stats.steps, stats.random_steps,
            str(violation), violation)
    return MachineResult(False, seconds=time.monotonic() - started, examples=stats.instances,
                         steps=stats.steps, random_steps=stats.random_steps)
