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
adds the markup escaping of its terminal library on top (:mod:`activity_check.cli`). The folds
measure text in terminal columns with rich's :func:`rich.cells.cell_len` (a wide character, CJK
or an emoji, takes two), imported when a fold is made, so that a folded line fits the columns
the console counts.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

__all__ = ["visible", "CUT_NOTE", "DEFAULT_LIMIT", "TEXT_WIDTH", "QUOTE_LIMIT", "quoted",
           "NAME_LIMIT", "named", "schema_message",
           "columns", "fold_spans", "fold_words", "fold_line", "text_table", "narrowed"]

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


QUOTE_LIMIT = 80
"""The longest value :func:`quoted` quotes whole, in characters."""


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``value`` quoted for an error message, as ``repr`` quotes it, an over-long one cut inside
    its quotes: ``quoted("a" * 500, 4) == "'aaaa…'"``. The value is cut, not the message, so
    that what the message says after it (the options, what is wrong) stays whole. A value that
    is not a string is written as ``repr`` writes it, cut after ``limit`` characters with
    ``…``."""
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + "…"
    if len(value) <= limit:
        return repr(value)
    text = repr(value[:limit])
    return text[:-1] + "…" + text[-1]


NAME_LIMIT = 200
"""The longest command line or URL :func:`named` writes as it is, in characters."""


def named(value: str, limit: int = NAME_LIMIT) -> str:
    """A command line or URL the user gave, as an error message names it before saying what is
    wrong with it: as it is (``--adapter: nosuchcmd: command not found``), or, over ``limit``
    characters, quoted and cut inside its quotes (:func:`quoted`), so that the explanation after
    it stays whole; the error line as a whole was cut at ``activity_check.cli.ERROR_LIMIT``
    characters, losing it."""
    return value if len(value) <= limit else quoted(value, limit)


def schema_message(error) -> str:
    """A JSON Schema violation's message (a ``jsonschema`` ``ValidationError``) with every
    over-long value it quotes (the instance, or a member name of it) cut inside its quotes
    (:func:`quoted`), so that what the message says of the value (``is too long``, ``does not
    match ...``, ``was unexpected``) stays whole; cutting the message itself lost it. A value
    that is not a string and that the message starts with is written as JSON (``null is not of
    type 'string'``, not Python's ``None``), cut after :data:`QUOTE_LIMIT` characters."""
    message = error.message
    instance = error.instance
    if not isinstance(instance, str) and message.startswith(repr(instance)):
        # the value as the JSON it came from (null, [1], {"a": true}), not as Python writes it
        import json
        written = json.dumps(instance, ensure_ascii=False, default=str)
        if len(written) > QUOTE_LIMIT:
            written = written[:QUOTE_LIMIT] + " ..."
        return written + message[len(repr(instance)):]
    values = [instance] + (list(instance) if isinstance(instance, dict) else [])
    for value in values:
        text = repr(value)
        if len(text) > QUOTE_LIMIT + 2:
            message = message.replace(text, quoted(value))
    return message


TEXT_WIDTH = 120
"""The widest a text table or listing the tool prints is (columns) without ``--wide``: long
cells fold at word boundaries, and id columns never break
(:func:`activity_check.cli.id_column`)."""


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (rich's :func:`rich.cells.cell_len`): a wide
    character (CJK, most emoji) counts two, a combining mark none; ``len`` counts characters."""
    from rich.cells import cell_len
    return cell_len(text)


_BREAKS = "\t\n\x0b\x0c\r "
"""The characters a fold may break at (textwrap's whitespace): ASCII spaces and controls only,
so that a no-break space or an ideographic space stays inside its word."""

_TOKEN = re.compile(f"[{_BREAKS}]+|[^{_BREAKS}]+")


def fold_spans(text: str, width: int, first: int = 0, indent: int = 0) -> list[tuple[int, int]]:
    """Where ``text`` folds into lines of at most ``width`` columns (:func:`columns`), broken
    at whitespace only: ``(start, end)`` of each line in ``text``, so that a caller holding a
    styled copy of the text can cut it at the same places. The first line has ``first``
    columns taken before it, the others ``indent``. A word (an id, a path, a clause list
    without spaces) is never broken: a line holding one wider than its room holds that word
    alone and is as wide as it. Whitespace where a line breaks is dropped; whitespace before
    the first word of the text is kept, as :mod:`textwrap` keeps it. Empty for a text of
    whitespace only."""
    tokens = [(m.start(), m.end(), m.group()[0] in _BREAKS) for m in _TOKEN.finditer(text)]
    sizes = [columns(text[a:b]) for a, b, _ in tokens]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        if spans and tokens[i][2]:  # a later line starts at a word
            i += 1
            continue
        room = width - (indent if spans else first)
        used, j = 0, i
        while j < len(tokens) and (used + sizes[j] <= room or j == i):
            used += sizes[j]
            j += 1
        end = j
        while end > i and tokens[end - 1][2]:  # no whitespace at the end of a line
            end -= 1
        if end > i:
            spans.append((tokens[i][0], tokens[end - 1][1]))
        i = j
    return spans


def fold_words(text: str, width: Optional[int] = TEXT_WIDTH, indent: str = "",
         first: str = "", keep: Sequence[str] = ()) -> list[str]:
    """``text`` as lines of at most ``width`` columns, broken at spaces only
    (:func:`fold_spans`: measured in terminal columns, a wide character counting two): a word
    (an id, a path, a clause list without spaces) is never broken, so a line holding one
    wider than ``width`` is as wide as that word. ``keep``: phrases never broken at their own
    spaces either, wherever they occur (a count and its label, ``"0 out of scope"``), each
    folded as one word. ``first`` starts the first line, ``indent`` the others; tabs are
    expanded and other whitespace written as spaces, as :mod:`textwrap` does. ``width`` None:
    one line, unfolded. Never empty (``[first]`` for an empty text)."""
    if width is None:
        return [first + text]
    text = text.expandtabs().translate({ord(c): " " for c in _BREAKS})
    spans = fold_spans(_glued(text, keep), width, columns(first), columns(indent))
    return [(indent if k else first) + text[a:b] for k, (a, b) in enumerate(spans)] or [first]


def _glued(text: str, keep: Sequence[str]) -> str:
    """``text`` with the spaces inside each occurrence of a phrase of ``keep`` made no-break
    spaces (one column, as a space; no break point for :func:`fold_spans`): as long as
    ``text``, so that the spans measured on it cut ``text`` itself, whose spaces are printed."""
    if not keep:
        return text
    chars = list(text)
    for phrase in keep:
        at = text.find(phrase) if phrase else -1
        while at >= 0:
            for i in range(at, at + len(phrase)):
                if chars[i] == " ":
                    chars[i] = "\u00a0"
            at = text.find(phrase, at + len(phrase))
    return "".join(chars)


def fold_line(text: str, width: Optional[int] = TEXT_WIDTH, indent: str = "  ",
              keep: Sequence[str] = ()) -> str:
    """:func:`fold_words` joined with newlines (later lines indented by ``indent``; ``keep``:
    phrases never broken): a long printed line as a paragraph within ``width`` columns."""
    return "\n".join(fold_words(text, width, indent, keep=keep))


def text_table(rows: Sequence[Sequence[str]], width: Optional[int] = TEXT_WIDTH,
               gap: str = "  ") -> list[str]:
    """Plain aligned columns (``rows[0]`` the header), as lines of at most ``width`` columns:
    while the table is wider, the widest column that can still narrow is folded at spaces
    (:func:`fold_words`; a column never narrows below its longest word, so no id breaks and a
    table whose words alone are wider stays wider). A cell folded over several lines continues
    on the following lines of its row, the other cells blank there. ``width`` None (``--wide``):
    every cell on one line, the full table. Widths are terminal columns (:func:`columns`), so
    that a cell of wide characters stays aligned. Trailing spaces are stripped."""
    if not rows:
        return []
    n = max(len(r) for r in rows)
    cells = [[str(c) for c in r] + [""] * (n - len(r)) for r in rows]
    widths = [max(columns(r[i]) for r in cells) for i in range(n)]
    if width is not None:
        floor = [max([columns(w) for r in cells for w in r[i].split()] + [1]) for i in range(n)]
        widths = narrowed(widths, floor, width - len(gap) * (n - 1))
        widths = [max(columns(line) for r in cells for line in fold_words(r[i], widths[i]))
                  for i in range(n)]
    out = []
    for r in cells:
        parts = [fold_words(c, widths[i] if width is not None else None) for i, c in enumerate(r)]
        for k in range(max(len(p) for p in parts)):
            line = gap.join(_pad(p[k] if k < len(p) else "", widths[i])
                            for i, p in enumerate(parts))
            out.append(line.rstrip())
    return out


def narrowed(widths: Sequence[int], floor: Sequence[int], room: int) -> list[int]:
    """Column widths (terminal columns) that fit ``room`` where they can: while their sum is
    over it, the widest column still wider than its ``floor`` (its longest word, so that no id
    breaks) narrows by one, the leftmost first among equals. Stops at the floors, however wide
    they are together."""
    widths = list(widths)
    while sum(widths) > room:
        narrowable = [i for i in range(len(widths)) if widths[i] > floor[i]]
        if not narrowable:
            break
        widths[max(narrowable, key=lambda j: (widths[j], -j))] -= 1
    return widths


def _pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (``str.ljust`` counts characters)."""
    return text + " " * max(width - columns(text), 0)
