"""Text from traces, findings, vocabularies and adapter answers, made safe to show on a terminal.

Every string that reaches us from outside (a message id, an activity type, a file name, an
adapter's error line) is data. On a terminal a few characters are not shown but obeyed: ESC
starts an escape sequence (clear the screen, set the title, a hyperlink), BEL rings, CR and
backspace overwrite what was printed, and the C1 controls and the bidirectional overrides
reorder or hide text. :func:`visible` writes each of those as a Python-style escape
(``\\x1b``, ``\\n``, ``\\u202e``) so that the reader sees it, and cuts a long value to a bound
with a note of what was left out, so that a 100 MB content object costs a table row, not the
terminal. JSON output never goes through here: it is printed whole, as written.

This module is pure (no terminal library) so that every layer may import it; the command line
adds the markup escaping of its terminal library on top (:mod:`activity_check.cli`).
"""
from __future__ import annotations

import re
from typing import Optional

__all__ = ["visible", "CUT_NOTE", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 400
"""The longest value :func:`visible` shows whole by default, in characters."""

CUT_NOTE = "... ({n:,} more characters)"
"""What replaces the rest of a value cut at the limit (``n``: the characters left out)."""

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ufeff]")
"""The characters a terminal obeys or hides rather than shows: C0 controls (newline and tab
included: a value stays on its line), DEL, C1 controls, the bidirectional marks, embeddings,
overrides and isolates, the line and paragraph separators and the byte-order mark."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: object, limit: Optional[int] = DEFAULT_LIMIT) -> str:
    """``value`` as text a terminal shows as it is: ``str(value)`` with every character of
    :data:`_HIDDEN` written as an escape (``"\\x1b"``, ``"\\n"``, ``"\\u202e"``; a backslash
    already in the text is left alone, so the result is for reading, not for parsing back), and
    cut after ``limit`` characters of the original with :data:`CUT_NOTE` (None: never cut).

    Only the part kept is scanned, so the cost is bounded by ``limit`` whatever the size of the
    value (``str()`` of a non-string is computed whole).

    Examples: ``visible("a\\x1b[2Jb") == "a\\\\x1b[2Jb"``; ``visible("x" * 500, 10)`` is ten
    ``x`` followed by ``"... (490 more characters)"``.
    """
    text = value if isinstance(value, str) else str(value)
    cut = ""
    if limit is not None and len(text) > limit:
        cut = CUT_NOTE.format(n=len(text) - limit)
        text = text[:limit]
    return _HIDDEN.sub(_escape, text) + cut


TEXT_WIDTH = 120
"""The widest a text table or listing the tool prints is (columns) without ``--wide``: long
cells fold at word boundaries, and id columns never break
(:func:`activity_check.cli.id_column`)."""
