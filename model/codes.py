"""The warning and fatal codes the consumer surfaces, each declared once.

Each code is a module constant whose value is its wire text (``ACTIVITY_PATCH_FAILED ==
"ACTIVITY_PATCH_FAILED"``), declared with the kinds it comes as (a :class:`~model.consumer.Warning`,
a :class:`~model.consumer.Fatal`, or both) and the branches (:mod:`model.branches`) that surface
it. Code outside the model compares a warning's or fatal's ``code`` with these constants, never
with a literal.

The module checks at import that the table is consistent with the branch table: every branch a
code names is declared and cites a clause (the warning or fatal cites its first), and every
constant of the module is a declared, exported code spelled as its value. The consumer imports
each code it surfaces from here, so a code it surfaces is declared or the model does not import;
that each comes from exactly the branches declared for it, as the kinds declared, and that every
declared (code, kind, branch) is surfaced somewhere, is tested over the exploration
(``tests/test_branches.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from model.branches import BRANCH_BY_ID

__all__ = ["Code", "CODES", "CODE_LIST", "WARNING", "FATAL", "REQUIRED_WARNINGS",
           "ACTIVITY_CONTENT_NOT_OBJECT", "ACTIVITY_DELTA_TARGET_MISSING",
           "ACTIVITY_DELTA_TARGET_NOT_ACTIVITY", "ACTIVITY_ID_SEEN_BEFORE",
           "ACTIVITY_OWNER_MISMATCH", "ACTIVITY_PATCH_FAILED", "ACTIVITY_TARGET_NOT_ACTIVITY",
           "EVENT_AFTER_RUN_CLOSED", "MALFORMED_ACTIVITY_EVENT", "MALFORMED_EVENT",
           "NULL_MEMBER_SHIMMED", "RUN_ALREADY_ACTIVE", "RUN_FINISHED_WITH_OPEN",
           "STATE_PATCH_FAILED", "STREAM_NOT_STARTED", "TEXT_MESSAGE_ID_REUSED",
           "TEXT_OWNER_MISMATCH", "TEXT_TARGET_IS_ACTIVITY", "TEXT_TARGET_MISSING",
           "TOOL_CALL_TARGET_MISSING", "UNKNOWN_EVENT_DROPPED", "UNKNOWN_MEMBER_STRIPPED",
           "UNKNOWN_PATCH_OP", "UNKNOWN_PATCH_OP_DROPPED", "STEP_ALREADY_OPEN", "STEP_NOT_OPEN",
           "TEXT_MESSAGE_STILL_OPEN", "ACTIVITY_OWNER_ENDED", "ACTIVITY_DELTA_NO_RUN_BASELINE"]

WARNING, FATAL = "warning", "fatal"
"""The kinds a code comes as."""


@dataclass(frozen=True)
class Code:
    """One code.

    Attributes:
        code: the wire text, e.g. ``"ACTIVITY_PATCH_FAILED"``.
        kinds: ``(WARNING,)``, ``(FATAL,)`` or ``(WARNING, FATAL)`` (a reading decides which).
        branches: the branch ids whose warnings or fatals carry it.
    """

    code: str
    kinds: tuple[str, ...]
    branches: tuple[str, ...]


_DECLARED: list[Code] = []


def _code(code: str, kinds: tuple[str, ...], *branches: str) -> str:
    """Declare a code (its kinds, the branches that surface it); returns its wire text."""
    _DECLARED.append(Code(code, kinds, branches))
    return code


_W, _F, _WF = (WARNING,), (FATAL,), (WARNING, FATAL)

# Malformed and unrecognised input (the wire boundary).
MALFORMED_ACTIVITY_EVENT = _code("MALFORMED_ACTIVITY_EVENT", _F, "malformed.fatal")
MALFORMED_EVENT = _code("MALFORMED_EVENT", _F, "malformed.fatal")
NULL_MEMBER_SHIMMED = _code("NULL_MEMBER_SHIMMED", _W, "malformed.null-shim")
UNKNOWN_EVENT_DROPPED = _code("UNKNOWN_EVENT_DROPPED", _W, "unrecognised.drop")
UNKNOWN_MEMBER_STRIPPED = _code("UNKNOWN_MEMBER_STRIPPED", _W, "member.strip")
# Run lifecycle.
STREAM_NOT_STARTED = _code("STREAM_NOT_STARTED", _F, "lifecycle.not-started")
EVENT_AFTER_RUN_CLOSED = _code("EVENT_AFTER_RUN_CLOSED", _F, "lifecycle.after-close")
RUN_ALREADY_ACTIVE = _code("RUN_ALREADY_ACTIVE", _F, "lifecycle.one-active")
RUN_FINISHED_WITH_OPEN = _code("RUN_FINISHED_WITH_OPEN", _F, "lifecycle.open-at-finish")
# ACTIVITY_SNAPSHOT.
ACTIVITY_ID_SEEN_BEFORE = _code("ACTIVITY_ID_SEEN_BEFORE", _W, "snapshot.seen-not-held")
ACTIVITY_TARGET_NOT_ACTIVITY = _code("ACTIVITY_TARGET_NOT_ACTIVITY", _WF, "snapshot.not-activity")
ACTIVITY_OWNER_MISMATCH = _code("ACTIVITY_OWNER_MISMATCH", _WF, "snapshot.owner-disagrees",
                                "delta.owner-mismatch")
# ACTIVITY_DELTA (and STATE_DELTA's unknown ops).
ACTIVITY_DELTA_TARGET_MISSING = _code("ACTIVITY_DELTA_TARGET_MISSING", _W, "delta.missing")
ACTIVITY_DELTA_TARGET_NOT_ACTIVITY = _code("ACTIVITY_DELTA_TARGET_NOT_ACTIVITY", _W,
                                           "delta.not-activity")
UNKNOWN_PATCH_OP = _code("UNKNOWN_PATCH_OP", _F, "delta.unknown-op")
UNKNOWN_PATCH_OP_DROPPED = _code("UNKNOWN_PATCH_OP_DROPPED", _W, "delta.unknown-op")
ACTIVITY_CONTENT_NOT_OBJECT = _code("ACTIVITY_CONTENT_NOT_OBJECT", _F, "delta.non-object")
ACTIVITY_PATCH_FAILED = _code("ACTIVITY_PATCH_FAILED", _WF, "delta.patch-failed")
ACTIVITY_OWNER_ENDED = _code("ACTIVITY_OWNER_ENDED", _W, "delta.owner-ended")
ACTIVITY_DELTA_NO_RUN_BASELINE = _code("ACTIVITY_DELTA_NO_RUN_BASELINE", _W, "delta.earlier-run")
# Agent state.
STATE_PATCH_FAILED = _code("STATE_PATCH_FAILED", _W, "state.delta")
# Text messages and tool calls.
TEXT_TARGET_IS_ACTIVITY = _code("TEXT_TARGET_IS_ACTIVITY", _W, "text.target-activity")
TEXT_TARGET_MISSING = _code("TEXT_TARGET_MISSING", _W, "text.target-missing")
TEXT_MESSAGE_ID_REUSED = _code("TEXT_MESSAGE_ID_REUSED", _W, "text.target-missing")
TOOL_CALL_TARGET_MISSING = _code("TOOL_CALL_TARGET_MISSING", _W, "text.target-missing")
TEXT_OWNER_MISMATCH = _code("TEXT_OWNER_MISMATCH", _F, "text.owner-mismatch")
TEXT_MESSAGE_STILL_OPEN = _code("TEXT_MESSAGE_STILL_OPEN", _F, "text.still-open")
# Steps.
STEP_ALREADY_OPEN = _code("STEP_ALREADY_OPEN", _F, "step.unbalanced")
STEP_NOT_OPEN = _code("STEP_NOT_OPEN", _F, "step.unbalanced")

CODE_LIST: tuple[Code, ...] = tuple(_DECLARED)
"""Every code, in declaration order."""

CODES: dict[str, Code] = {c.code: c for c in CODE_LIST}
"""Code -> its :class:`Code` record."""


REQUIRED_WARNINGS: dict[str, tuple[str, str]] = {
    ACTIVITY_PATCH_FAILED: ("SNP-SURFACE-FAILURE", "MUST"),
    STATE_PATCH_FAILED: ("SNP-SURFACE-FAILURE", "MUST"),
    ACTIVITY_DELTA_TARGET_MISSING: ("ACT-DELTA-MISSING-WARN", "SHOULD"),
    ACTIVITY_DELTA_TARGET_NOT_ACTIVITY: ("ACT-DELTA-MISSING-WARN", "SHOULD"),
    UNKNOWN_EVENT_DROPPED: ("PRC-DROP-STRIP", "SHOULD"),
    UNKNOWN_MEMBER_STRIPPED: ("PRC-DROP-STRIP", "SHOULD"),
}
"""The warning codes a keyword clause asks the consumer for: ``{code: (clause id, level)}``,
``level`` the clause's normative level for the warning itself: ``"MUST"`` where the warning is
the duty (SNP-SURFACE-FAILURE: a valid patch that cannot apply is reported), ``"SHOULD"`` where
it is advised (ACT-DELTA-MISSING-WARN; PRC-DROP-STRIP's MUST is on the dropping and stripping,
the warning only 'ideally'). Other warnings are the model's own choice under a non-keyword
statement and are never required. The conformance fixtures assert these codes
(``expect.warnings``) and ``--third-party`` sets aside the SHOULD-level ones."""


def _check() -> None:
    """Codes unique, kinds known, every named branch declared and citing a clause, and every
    upper-case constant of this module a declared code equal to its own name."""
    if len(CODES) != len(CODE_LIST):
        raise AssertionError("a code is declared twice")
    for c in CODE_LIST:
        if not c.kinds or not set(c.kinds) <= {WARNING, FATAL} or not c.branches:
            raise AssertionError(f"code {c.code}: kinds {c.kinds} or branches {c.branches}")
        for b in c.branches:
            if b not in BRANCH_BY_ID or not BRANCH_BY_ID[b].clauses:
                raise AssertionError(f"code {c.code}: branch {b!r} is not declared or cites no "
                                     "clause")
    constants = {name: value for name, value in globals().items()
                 if name.isupper() and isinstance(value, str) and name not in ("WARNING", "FATAL")}
    if constants != {c.code: c.code for c in CODE_LIST} or not set(CODES) <= set(__all__):
        raise AssertionError("a code constant is not declared or not exported, or a declared "
                             "code has no constant of its own name")


_check()
