"""Z3 bounded model checking of the ownership-and-replace fragment of the Activity draft.

The fragment: after one RUN_STARTED, any sequence of ACTIVITY_SNAPSHOT (id, type, content literal,
``replace`` absent/true/false, attribution), ACTIVITY_DELTA (id, type, attribution, patch outcome:
applies / does not apply / leaves a non-object), TEXT_MESSAGE_START (a non-activity message on an
id) and MESSAGES_SNAPSHOT (per id: absent, an assistant message, or an activity with type, owner
and content literal, in a chosen order), over a finite :class:`~properties.smt.world.World`.
Content is an abstract version identity. What the encoding tracks: which messages exist, their
role and position, activity type, owner and first owner, content version, whether each id was
ever held, open text messages, whether the consumer halted; on the producer side, which
activities it created (and whether by a snapshot, clauses ACT-DELTA-BASELINE N18 /
SNP-BASELINE N37), their owner, opener and type, and the texts it streamed.

Both sides are constraints: the producer's obligations (ACT-ATTR-AGREE N12, ACT-DELTA-BASELINE
N18, SNP-BASELINE N37, SUB-OWNER-AGREE N60, ACT-DELTA-OBJECT N22, EVM-ID-UNIQUE N80,
LIF-RESTATE-SNAPSHOT N99) decide which traces are conformant; the consumer's step decides what
it holds. The consumer is parameterised by the reading: every knob it consults on these events
(:data:`~properties.smt.encoding.FRAGMENT_KNOBS`: Q2, Q3, Q4, Q4-opener, Q5, Q7, Q8, Q9, Q10,
Q11, Q13, X1) is either fixed or left to the solver. Outside the fragment
(:data:`~properties.smt.encoding.OUTSIDE_KNOBS`): Q1, Q6, Q6-ms (metadata), Q20 (unknown patch
ops), Q21 (null members); run boundaries, subagent lifecycle events, tool calls, state events.

Modules: :mod:`.world` (the world, abstract events, their realisation as wire events),
:mod:`.encoding` (the Z3 unrolling), :mod:`.checks` (situations, rules, shapes, properties, each
with a Z3 and an executable predicate), :mod:`.replay` (decoding, lock-step replay, executable
enumeration of the same alphabet), :mod:`.queries` (the five queries).
"""
from properties.smt.encoding import FRAGMENT_KNOBS, OUTSIDE_KNOBS
from properties.smt.queries import (Answer, Witness, bounded_proof, consistency, distinguishing,
                                    knob_pairs, reachability, vacuity)
from properties.smt.replay import CrossCheckError
from properties.smt.world import DEFAULT_WORLD, SMALL_WORLD, World

__all__ = ["Answer", "Witness", "reachability", "vacuity", "consistency", "distinguishing",
           "bounded_proof", "knob_pairs", "CrossCheckError", "World", "DEFAULT_WORLD",
           "SMALL_WORLD", "FRAGMENT_KNOBS", "OUTSIDE_KNOBS"]
