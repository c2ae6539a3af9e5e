"""The branches of the consumer step, each declared once with the clause ids it implements.

A *branch* is one way :func:`model.consumer.step` can go on an event. Its id (``family.what``,
e.g. ``"delta.non-object"``) is written at the code that takes it: every
:class:`~model.consumer.StepResult` and :class:`~model.consumer.Decision` names the branch the step
returned on, and every :class:`~model.consumer.Warning` and :class:`~model.consumer.Fatal` names
the branch that surfaced it (and cites that branch's first clause). Coverage
(:mod:`model.clauses`), spec diffs (:mod:`model.spec_text`), findings, the peer report and the Z3
encoding name branches by these ids.

Where a branch is taken (:attr:`Branch.where`):

* ``"step"``: a step can return on it (it is then the ``branch`` of the step's result);
* ``"notice"``: it only surfaces warnings ahead of the step's own branch, on any event: the wire
  layer's stripped members (``member.strip``) and, under reading Q21=shim, a null member shimmed
  to absent (``malformed.null-shim``: the shimmed event then steps as its shim, and the step's
  branch is the shim's);
* ``"run-input"``: taken by :func:`model.consumer.run_input`, not by a step.

A step names the branch on which its event's outcome was decided (the last decision that changed
what the event does); warnings surfaced on the way keep their own branch. So a delta whose unknown
ops are dropped (Q20=drop-op) names the branch its remaining patch takes, with the drops' warnings
from ``delta.unknown-op``, and a delta accepted despite its tag (Q4=accept) names its patch's
branch. A step that fails the run names the branch of its fatal; a step that accepts an event
without interpreting it (a passthrough event, or a text message or tool call that simply goes on)
names ``passthrough.accept``; a halted consumer names ``lifecycle.halted``. Each branch's summary
says what it covers.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Branch", "BRANCH_LIST", "BRANCH_BY_ID", "BRANCHES", "STEP_BRANCHES", "WHERE"]

WHERE = ("step", "notice", "run-input")
"""The places a branch can be taken (see the module docstring)."""


@dataclass(frozen=True)
class Branch:
    """One branch of the consumer step.

    Attributes:
        id: ``family.what``, e.g. ``"delta.patch-failed"``.
        clauses: the clause ids it implements; its warnings and fatals cite the first.
        summary: what the step does there, in words (paraphrase; the clauses hold the draft).
        where: one of :data:`WHERE`.
    """

    id: str
    clauses: tuple[str, ...]
    summary: str
    where: str = "step"


BRANCH_LIST: tuple[Branch, ...] = (
    Branch("malformed.fatal",
           ("PRC-MALFORMED-FATAL", "ACT-MALFORMED-FATAL", "SNP-MALFORMED-OP",
            "SCH-ACTIVITY-SNAPSHOT", "SCH-ACTIVITY-DELTA", "SCH-JSON-PATCH", "SCH-JSON-POINTER",
            "SCH-MESSAGES-SNAPSHOT", "SCH-ACTIVITY-MESSAGE", "SCH-MESSAGE-UNION", "MET-NOT-NULL",
            "SCH-REPLACE"),
           "a described field holds an invalid value: the run fails (its fatal cites the "
           "event's own schema clause)"),
    Branch("malformed.null-shim", ("EVM-ABSENT-NOT-NULL", "SUB-ABSENT-PARENT"),
           "an optional member sent as null is treated as absent (Q21=shim); the event then "
           "steps as its shim, whose branch the step names", "notice"),
    Branch("unrecognised.drop", ("PRC-DROP-STRIP", "PRC-UNKNOWN-NOT-FATAL", "PRC-NO-PRIVATE-TYPES"),
           "an event of an undescribed type is dropped with a warning"),
    Branch("member.strip",
           ("PRC-DROP-STRIP", "PRC-STRIP-POSITION", "PRC-KEEP-OPEN", "SNP-OPEN-OPS",
            "MET-KEEP-UNKNOWN", "EVM-KEEP-NULL-IN-OPEN"),
           "unknown members of closed objects were stripped at the wire: one warning each, "
           "ahead of the step's own", "notice"),
    Branch("passthrough.accept",
           ("EVX-ACCEPT-FAMILIES", "EVM-SUPPORT-PATTERNS", "EVM-NO-RAWEVENT", "EVM-ARRIVAL-ORDER"),
           "a described event is accepted: one the model does not interpret, or a text message "
           "or tool call that opens, goes on or ends on its target"),
    Branch("lifecycle.not-started", ("LIF-STREAM-START",),
           "an event before the first RUN_STARTED: the run fails"),
    Branch("lifecycle.after-close", ("LIF-AFTER-CLOSE",),
           "an event after the run closed (or a second RUN_ERROR): the run fails"),
    Branch("lifecycle.one-active", ("LIF-ONE-ACTIVE",),
           "RUN_STARTED while a run is active: the run fails"),
    Branch("lifecycle.open-at-finish", ("LIF-CLOSE-BEFORE-FINISH", "LIF-STEP-CLOSE-BEFORE-FINISH",
                                        "LIF-STEP-REJECT"),
           "RUN_FINISHED with text messages, tool calls, steps or subagents still open: the run "
           "fails"),
    Branch("lifecycle.run-error",
           ("LIF-RUN-ERROR-FAILED", "LIF-FAILED-KEEPS", "SUB-RUN-ERROR-ABANDON",
            "LIF-RUN-ERROR-SURFACE"),
           "RUN_ERROR: the run is failed, what it delivered is kept, open entities are dropped"),
    Branch("lifecycle.run-boundary", ("LIF-RUN-SCOPED", "LIF-RESTATE-SNAPSHOT"),
           "RUN_STARTED opens a run, RUN_FINISHED closes it; open tracking is run-scoped"),
    Branch("lifecycle.halted", (),
           "the consumer failed the run at an earlier event: it ignores every later one (the "
           "model's own convention: a rejected stream is dead)"),
    Branch("snapshot.create",
           ("ACT-SNAP-CREATE", "ACT-PER-MESSAGE", "ACT-TYPE-OPEN", "ACT-ROLE",
            "ACT-SNAP-REPLACE-FALSE", "SUB-ACCEPT-UNANNOUNCED", "EVM-ARRIVAL-ORDER",
            "EVM-OPAQUE-ID"),
           "ACTIVITY_SNAPSHOT for an id not held: the activity is appended"),
    Branch("snapshot.seen-not-held", ("ACT-SNAP-CREATE",),
           "ACTIVITY_SNAPSHOT for an id held before and dropped since (Q10=seen): not created "
           "again, with a warning"),
    Branch("snapshot.replace",
           ("ACT-SNAP-REPLACE", "ACT-SNAP-REPLACE-DEFAULT", "ACT-SNAP-NO-MERGE", "SNP-REPLACE",
            "SNP-SPENT", "SNP-ADOPT-NEXT", "ACT-REPAIR", "ACT-ATTR-REMINT",
            "ACT-SNAP-KEEP-METADATA", "MET-ACTIVITY-TARGET", "MET-MERGE", "MET-NO-RECURSE"),
           "replacing ACTIVITY_SNAPSHOT on a held activity: content and type replaced, owner "
           "re-minted, metadata merged (moved to the end under Q11=move)"),
    Branch("snapshot.replace-false",
           ("ACT-SNAP-REPLACE-FALSE", "ACT-ATTR-KEEP", "SNP-SPENT", "ACT-SNAP-NO-MERGE"),
           "replace:false ACTIVITY_SNAPSHOT on a held activity whose owner it agrees with: "
           "content, type and owner stand (metadata merged under Q1=merge)"),
    Branch("snapshot.resync", ("SNP-ADOPT-NEXT", "SNP-RESYNC", "SNP-SPENT", "ACT-REPAIR",
                               "ACT-ATTR-KEEP", "MET-MERGE"),
           "replace:false ACTIVITY_SNAPSHOT on a held activity one of whose deltas was skipped "
           "since its last snapshot, under Q14=adopt: content and type adopted, owner stands, "
           "metadata merged"),
    Branch("snapshot.owner-disagrees", ("ACT-ATTR-TOLERATE", "ACT-ATTR-AGREE", "ACT-ATTR-KEEP"),
           "replace:false ACTIVITY_SNAPSHOT attributed to another owner: Q3 decides (fail, "
           "skip, warn or keep silently)"),
    Branch("snapshot.not-activity", ("ACT-SNAP-CREATE", "EVM-ID-UNIQUE"),
           "ACTIVITY_SNAPSHOT naming a held non-activity message: Q9 decides (fail, skip or "
           "replace it)"),
    Branch("delta.missing",
           ("ACT-DELTA-MISSING", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING-NOFAIL",
            "ACT-TOLERATED"),
           "ACTIVITY_DELTA for an id not held: skipped with a warning"),
    Branch("delta.not-activity",
           ("ACT-DELTA-MISSING", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING-NOFAIL"),
           "ACTIVITY_DELTA naming a non-activity message: skipped with a warning"),
    Branch("delta.owner-ended", ("SUB-ENDED-ACTIVITY", "SUB-NO-REUSE-FINISHED", "ACT-TOLERATED"),
           "ACTIVITY_DELTA on an activity whose owning invocation ended in this run "
           "(SUBAGENT_FINISHED or SUBAGENT_ERROR), under Q15=closed: skipped with a warning"),
    Branch("delta.earlier-run", ("ACT-RUN-BASELINE", "SNP-SHOULD-SNAPSHOT", "ACT-TOLERATED"),
           "ACTIVITY_DELTA on an activity of an earlier run that no snapshot of this run has "
           "restated, under Q23=run-scoped: skipped with a warning"),
    Branch("delta.apply",
           ("ACT-DELTA-APPLY", "ACT-DELTA-RETYPE", "SNP-CURRENT-VALUE", "SNP-ATOMIC",
            "MET-ACTIVITY-TARGET", "MET-MERGE", "MET-NO-RECURSE", "SUB-ACCEPT-UNTAGGED",
            "SUB-INTERLEAVE", "EVM-KEEP-NULL-IN-OPEN"),
           "ACTIVITY_DELTA whose patch applies and leaves an object: content patched, type "
           "taken, metadata merged"),
    Branch("delta.owner-mismatch", ("SUB-REJECT-MISMATCH", "SUB-OWNER-AGREE"),
           "ACTIVITY_DELTA attributed to another than the activity's opener: Q4 decides (fail "
           "or skip; accepted, the delta goes on to its patch)"),
    Branch("delta.unknown-op", ("SNP-UNKNOWN-OP", "PRC-STRIP-POSITION"),
           "a patch (activity or state) holding an op RFC 6902 does not define, under Q20=fatal "
           "(the run fails); under Q20=drop-op its warnings come ahead of the patch's branch"),
    Branch("delta.patch-failed",
           ("SNP-SURFACE-FAILURE", "SNP-NO-PARTIAL", "SNP-KEEP-PRIOR", "SNP-TEST-FAIL",
            "ACT-DELTA-PATCHFAIL", "ACT-TOLERATED", "SNP-ATOMIC"),
           "ACTIVITY_DELTA whose patch does not apply (or holds an unknown op under "
           "Q20=patch-fails, or leaves a non-object under Q7=skip): content kept with a warning, "
           "or the run fails under Q13=fatal"),
    Branch("delta.non-object", ("ACT-DELTA-OBJECT-DETECT", "ACT-DELTA-OBJECT"),
           "ACTIVITY_DELTA whose patch applies but leaves a non-object where an object was: the "
           "run fails (Q7=fatal) or the result is taken (Q7=apply); under Q7=skip the patch "
           "counts as failed (delta.patch-failed)"),
    Branch("messages-snapshot.reconcile",
           ("STA-MS-COMPLETE", "STA-MS-IN-PLACE", "STA-MS-APPEND", "STA-MS-DROP-EXCEPT",
            "STA-MS-SELF-REVOKE", "STA-MS-OWNERSHIP", "ACT-MSGSNAP", "MET-NO-TARGET",
            "LIF-RESTATE-SNAPSHOT"),
           "MESSAGES_SNAPSHOT: listed messages replaced in place or appended, unlisted ones "
           "kept or dropped by role (Q8 for activities)"),
    Branch("messages-snapshot.in-flight", ("MS-IN-FLIGHT",),
           "MESSAGES_SNAPSHOT that leaves out a text message still being streamed: X1 decides "
           "whether it survives (the rest reconciles as above)"),
    Branch("run-input.strip", ("ACT-STRIP-RUNINPUT", "RIN-STRIP-ACTIVITY", "SCH-RUN-INPUT-MESSAGES"),
           "the next run input carries every held message but the activity ones", "run-input"),
    Branch("state.snapshot", ("SNP-REPLACE",), "STATE_SNAPSHOT replaces the agent state"),
    Branch("state.delta",
           ("SNP-ATOMIC", "SNP-CURRENT-VALUE", "STA-PATCHFAIL", "SNP-NO-PARTIAL",
            "SNP-KEEP-PRIOR"),
           "STATE_DELTA: the patch applies atomically, or the state stands with a warning"),
    Branch("text.target-activity", ("TXT-TARGET-ACTIVITY",),
           "a text message or tool call aimed at an activity message's id: skipped with a "
           "warning"),
    Branch("text.target-missing", ("TXT-TARGET-MISSING",),
           "a text continuation or tool call update with no target, or a start or tool result "
           "on an id already held: skipped with a warning"),
    Branch("text.owner-mismatch", ("SUB-REJECT-MISMATCH", "SUB-ACCEPT-UNTAGGED"),
           "a text continuation attributed to another owner than its message's: the run fails"),
    Branch("subagent.track", ("SUB-ACCEPT-UNANNOUNCED", "SUB-INTERLEAVE"),
           "SUBAGENT_STARTED, _FINISHED or _ERROR: the set of active subagents is tracked"),
    Branch("step.track", ("SUB-STEP-PER-OWNER", "LIF-STEP-OVERLAP", "LIF-RUN-SCOPED"),
           "STEP_STARTED opens a step of its owner, STEP_FINISHED closes that owner's step of the "
           "same name (steps may overlap; they are run-scoped)"),
    Branch("step.unbalanced",
           ("LIF-STEP-REJECT", "LIF-STEP-OPEN-ONCE", "LIF-STEP-FINISH-OPENED", "SUB-STEP-PER-OWNER"),
           "STEP_STARTED for a step its owner has open, or STEP_FINISHED for one its owner has "
           "not open: the run fails"),
    Branch("text.still-open", ("MS-IN-FLIGHT-OPEN", "MS-IN-FLIGHT", "LIF-RUN-SCOPED"),
           "TEXT_MESSAGE_START for an id whose message a MESSAGES_SNAPSHOT dropped while its "
           "stream stays open (X1=drop-open): the run fails"),
)
"""Every branch, in the order coverage lists them."""

BRANCH_BY_ID: dict[str, Branch] = {b.id: b for b in BRANCH_LIST}

BRANCHES: dict[str, tuple[str, ...]] = {b.id: b.clauses for b in BRANCH_LIST}
"""Branch id -> the clause ids it implements (warnings and fatals cite the first)."""

STEP_BRANCHES: frozenset[str] = frozenset(b.id for b in BRANCH_LIST if b.where == "step")
"""The branches a step can return on (the values a step result's ``branch`` takes)."""


def _check() -> None:
    """The table is well formed: ids unique and of the form ``family.what``, each ``where``
    known (:mod:`model.codes` checks that a branch surfacing a code cites a clause)."""
    if len(BRANCH_BY_ID) != len(BRANCH_LIST):
        raise AssertionError("a branch id is declared twice")
    for b in BRANCH_LIST:
        family, _, what = b.id.partition(".")
        if not family or not what or b.where not in WHERE:
            raise AssertionError(f"branch {b.id!r}: malformed id or unknown place {b.where!r}")


_check()
