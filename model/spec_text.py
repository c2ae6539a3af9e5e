"""Spec wording checks: the normative sentences of a spec page, matched to the clause registry.

Three jobs, each a pure function of the files it is given (the spec pages are read at run time;
nothing of their text is stored here):

* :func:`extract` / :func:`sentences`: split one spec page (the MDX-ish markdown copies under
  ``shared/spec/draft/`` and ``shared/spec/1.0/``) into :class:`Sentence` values with page key,
  section path, BCP 14 key word and line number.
* :func:`coverage`: match the sentences of one or more pages to :func:`model.clauses.registry`
  and report sentences with no entry, entries whose sentence is gone, and keyword changes.
* :func:`diff`: the sentence-level differences between two versions of one page, each mapped to
  clause ids and to what depends on those clauses (properties, knobs, consumer step branches).

Sources: BCP 14 (RFC 2119 + RFC 8174) for the key words and "all capitals only"; the page-key
table and the reading of key words at the top of ``shared/spec/notes.md``; notes part (c) for
what differs between the draft and 1.0 copies (link prefixes, the draft banner, the description
suffix), which :func:`diff` normalises away.

Page format handled (the copies' own layout): a first ``Source: ...`` line and an HTML comment
``<!-- provenance ... -->`` (skipped), YAML frontmatter between ``---`` lines (skipped), ``import``
/ ``export`` lines (skipped), JSX tags on lines of their own (``<DraftBanner />``, ``<Note>``,
``<Card ...>``: the tag lines are skipped, the prose inside a container is kept), fenced code
blocks including ``mermaid`` (skipped), ``#``-headings (the section path), paragraphs, list items
(one block each), block quotes, and pipe tables (each body row one block, cells joined by ``;``).

Limitations (documented, tested where it matters): sentence splitting is a heuristic (split after
``.``, ``!`` or ``?`` followed by white space and a capital letter, a digit, a quote, a bracket or
inline code; never after ``e.g.``, ``i.e.``, ``etc.``, ``vs.``, ``cf.``; never inside inline code);
matching to clauses is by word overlap with our own paraphrases, so it can miss or mis-assign a
sentence whose wording shares few words with the paraphrase (see :func:`coverage`).
"""
from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

__all__ = [
    "Sentence", "extract", "sentences", "PAGE_KEYS", "page_key", "page_keys_from_notes",
    "KEYWORD_ORDER", "NORMATIVE", "keyword_class", "same_keyword",
    "ClauseMatch", "KeywordChange", "CoverageReport", "coverage", "match_sentences",
    "Change", "DiffReport", "diff", "dependents_of",
]

# --- page keys ----------------------------------------------------------------------------------

PAGE_KEYS: dict[str, str] = {
    "activity.md": "ACT",
    "snapshots.md": "SNP",
    "state.md": "STA",
    "subagents.md": "SUB",
    "metadata.md": "MET",
    "processing.md": "PRC",
    "run-input.md": "RIN",
    "event-model.md": "EVM",
    "events-index.md": "EVX",
    "lifecycle.md": "LIF",
    "versioning.md": "VER",
    "spec-index.md": "IDX",
    "schema-activity.md": "SCH",
    "messages.md": "SCH",
}
"""``{file name: page key}``: the table at the top of ``shared/spec/notes.md`` (the same file names
are used for the 1.0 copies). :func:`page_keys_from_notes` reads the table itself; the tests check
the two agree."""


def _clause_list(clauses) -> list:
    """The clauses to match against: the given ones, or the whole registry."""
    if clauses is None:
        from model.clauses import registry
        return list(registry().values())
    return list(clauses)


def page_key(path: str | os.PathLike) -> Optional[str]:
    """The notes' page key for a spec file, from its base name (``.../activity.md`` -> ``"ACT"``);
    None for a file the table does not name (its sentences then match no clause)."""
    return PAGE_KEYS.get(os.path.basename(os.fspath(path)))


def page_keys_from_notes(notes_path: str | os.PathLike) -> dict[str, str]:
    """Parse the ``| key | file | page |`` table of ``notes.md`` into ``{file name: key}``.

    A cell may name several files separated by commas (``schema-activity.md, messages.md``).
    Raises OSError when the file cannot be read; returns ``{}`` when it holds no such table.
    """
    out: dict[str, str] = {}
    with open(notes_path, encoding="utf-8") as fh:
        for line in fh:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not re.fullmatch(r"[A-Z]{3}", cells[0]):
                continue
            for name in cells[1].split(","):
                name = name.strip()
                if name.endswith(".md"):
                    out[name] = cells[0]
    return out


# --- key words ----------------------------------------------------------------------------------

KEYWORD_ORDER: tuple[str, ...] = (
    "MUST NOT", "SHALL NOT", "SHOULD NOT", "NOT RECOMMENDED", "MUST", "SHALL", "REQUIRED",
    "SHOULD", "RECOMMENDED", "MAY", "OPTIONAL")
"""BCP 14 key words, strongest first. Only all-capital occurrences count (RFC 8174)."""

NORMATIVE = "normative"
"""The keyword given to a sentence without a BCP 14 key word that the page itself calls normative
(the word ``normative`` in lower case, not negated: not ``non-normative``, not ``not normative``)."""

_KEYWORD_RE = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(k.replace(" ", r"\s+")
                                                        for k in KEYWORD_ORDER)
                         + r")(?![A-Za-z0-9_])")
_NORMATIVE_RE = re.compile(r"(?<![A-Za-z0-9_-])normative(?![A-Za-z0-9_])")
_NEGATED_NORMATIVE_RE = re.compile(r"\b(?:not|never)\s+normative\b")

_CLASSES: dict[str, str] = {
    "MUST": "MUST", "SHALL": "MUST", "REQUIRED": "MUST",
    "MUST NOT": "MUST NOT", "SHALL NOT": "MUST NOT",
    "SHOULD": "SHOULD", "RECOMMENDED": "SHOULD",
    "SHOULD NOT": "SHOULD NOT", "NOT RECOMMENDED": "SHOULD NOT",
    "MAY": "MAY", "OPTIONAL": "MAY",
    "non-keyword": "plain", "informative": "plain", NORMATIVE: "plain", "": "plain",
}


def keyword_class(keyword: str) -> str:
    """The equivalence class of a key word, used when comparing a sentence with a clause.

    BCP 14 itself makes MUST = SHALL = REQUIRED, MUST NOT = SHALL NOT, SHOULD = RECOMMENDED,
    SHOULD NOT = NOT RECOMMENDED and MAY = OPTIONAL. The registry's ``non-keyword`` (a normative
    statement without a key word) and ``informative`` (a pointer or a definition), a sentence the
    page calls ``normative``, and a plain sentence (keyword ``""``) all fall in one class
    ``"plain"``: whether a key-word-less sentence is binding is the notes' judgement, not
    something the wording shows, so a difference there is never reported as a keyword change.

    Raises ValueError for a word that is none of these.
    """
    try:
        return _CLASSES[keyword]
    except KeyError:
        raise ValueError(f"not a BCP 14 key word or registry keyword: {keyword!r}") from None


def same_keyword(a: str, b: str) -> bool:
    """True when two key words are in the same :func:`keyword_class`."""
    return keyword_class(a) == keyword_class(b)


# --- sentences ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sentence:
    """One sentence of a spec page.

    Attributes:
        page: the page key (``"ACT"``) or, for a file the notes' table does not name, the file
            name.
        file: the file's base name (``"activity.md"``).
        section: the heading path, ``" > "``-joined, e.g. ``"Events > ACTIVITY_SNAPSHOT"``
            (markup stripped; a single top-level ``#`` title is left out); ``"(introduction)"``
            before the first heading.
        keyword: the strongest BCP 14 key word in capitals in the sentence (order of
            :data:`KEYWORD_ORDER`), else :data:`NORMATIVE` when the sentence calls itself
            normative, else ``""`` (a plain sentence).
        keywords: every key word in order of appearance, with ``"normative"`` appended when the
            sentence also calls itself normative; ``()`` for a plain sentence.
        text: the sentence as plain text: whitespace normalised, link syntax and emphasis
            stripped, inline code kept with its backticks.
        line: the 1-based line of the file on which the sentence starts.
        end_line: the line on which it ends.
    """

    page: str
    file: str
    section: str
    keyword: str
    keywords: tuple[str, ...]
    text: str
    line: int
    end_line: int

    @property
    def normative(self) -> bool:
        """True for a sentence with a key word or one the page calls normative."""
        return bool(self.keyword)

    def to_json(self) -> dict:
        return {"page": self.page, "file": self.file, "section": self.section,
                "keyword": self.keyword, "keywords": list(self.keywords), "text": self.text,
                "line": self.line, "endLine": self.end_line}


_FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_JSX_LINE_RE = re.compile(r"^\s*<\/?[A-Za-z][\w.:-]*(?:\s[^<>]*)?\/?>\s*$")
_JSX_OPEN_START_RE = re.compile(r"^\s*<[A-Za-z][\w.:-]*(?:\s[^<>]*)?$")
_JSX_NAME_RE = re.compile(r"^\s*<\/?([A-Za-z][\w.:-]*)")
_IMPORT_RE = re.compile(r"^(?:import|export)\s")
_RULE_RE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
_TABLE_RE = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEP_RE = re.compile(r"^\s*\|(?:\s*:?-{2,}:?\s*\|)+\s*$")
_QUOTE_RE = re.compile(r"^\s*>\s?")

_BANNER_CONTAINERS = ("Warning", "Info", "Note", "Tip", "Callout")

_CODE_RE = re.compile(r"(`+)(.+?)\1", re.S)
_IMAGE_RE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_REFLINK_RE = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK_RE = re.compile(r"<(https?://[^>\s]+)>")
_TAG_RE = re.compile(r"<\/?[A-Za-z][\w.:-]*(?:\s[^<>]*)?\/?>")
_BOLD_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_STAR_RE = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", re.S)
_UNDER_RE = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", re.S)
_ENTITIES = {"&nbsp;": " ", "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'"}
_PLACEHOLDER = "\x00{}\x00"
_PLACEHOLDER_RE = re.compile(r"\x00(\d+)\x00")

_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "a.k.a", "approx", "resp", "viz",
                            "no", "fig", "sec"})
_BOUNDARY_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")


def _heading_text(raw: str) -> str:
    text, codes = _protect_code(raw)
    text = _strip_markup(text)
    text = _restore_code(text, codes, backticks=False)
    return " ".join(text.split())


def _protect_code(text: str) -> tuple[str, list[str]]:
    codes: list[str] = []

    def keep(m: re.Match) -> str:
        codes.append(m.group(2))
        return _PLACEHOLDER.format(len(codes) - 1)
    return _CODE_RE.sub(keep, text), codes


def _restore_code(text: str, codes: Sequence[str], backticks: bool = True) -> str:
    def put(m: re.Match) -> str:
        inner = " ".join(codes[int(m.group(1))].split()) if "\n" in codes[int(m.group(1))] \
            else codes[int(m.group(1))].strip()
        return f"`{inner}`" if backticks else inner
    return _PLACEHOLDER_RE.sub(put, text)


def _strip_markup(text: str) -> str:
    """Links to their text, emphasis to plain text, inline tags and entities removed. Newlines are
    kept (line numbers are counted on the result); inline code must already be protected."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = _IMAGE_RE.sub(r"\1", text)
    text = _LINK_RE.sub(r"\1", text)
    text = _REFLINK_RE.sub(r"\1", text)
    text = _AUTOLINK_RE.sub(r"\1", text)
    text = _TAG_RE.sub("", text)
    for _ in range(2):  # nested emphasis, e.g. bold inside italics
        text = _BOLD_RE.sub(r"\2", text)
        text = _STAR_RE.sub(r"\1", text)
        text = _UNDER_RE.sub(r"\1", text)
    for k, v in _ENTITIES.items():
        text = text.replace(k, v)
    text = text.replace("\\", "")  # markdown escapes
    return text


def _split(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of a cleaned block (inline code already protected)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        nxt = text[m.end():m.end() + 1]
        if not nxt or not (nxt.isupper() or nxt.isdigit() or nxt in "\"'(\u201c\u2018[\x00"):
            continue
        if text[m.start()] == ".":
            before = text[start:m.start()].rsplit(None, 1)
            word = before[-1].lstrip("(\"'[").lower() if before else ""
            if word in _ABBREVIATIONS:
                continue
        spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _keywords(plain: str) -> tuple[str, ...]:
    found = [" ".join(m.group(1).split()) for m in _KEYWORD_RE.finditer(plain)]
    if _NORMATIVE_RE.search(plain) and not _NEGATED_NORMATIVE_RE.search(plain):
        found.append(NORMATIVE)
    return tuple(found)


def _strongest(keywords: Sequence[str]) -> str:
    bcp = [k for k in keywords if k != NORMATIVE]
    if bcp:
        return min(bcp, key=KEYWORD_ORDER.index)
    return NORMATIVE if NORMATIVE in keywords else ""


@dataclass
class _Block:
    section: str
    lines: list[tuple[int, str]] = field(default_factory=list)


def _blocks(page_lines: Sequence[str]) -> list[_Block]:
    """The prose blocks of a page (paragraphs, list items, table rows), with their section."""
    lines = list(page_lines)
    n = len(lines)
    i = 0
    # Provenance header: a first "Source:" line, then HTML comments and blank lines.
    if i < n and lines[i].startswith("Source:"):
        i += 1
    # Frontmatter: the first non-blank line after the header (comments aside) is '---'.
    j = i
    in_comment = False
    while j < n:
        s = lines[j].strip()
        if in_comment:
            in_comment = "-->" not in s
        elif s.startswith("<!--"):
            in_comment = "-->" not in s[4:]
        elif s:
            break
        j += 1
    if j < n and lines[j].strip() == "---":
        k = j + 1
        while k < n and lines[k].strip() != "---":
            k += 1
        if k < n:
            for m in range(j, k + 1):
                lines[m] = ""
    h1 = sum(1 for ln in lines if re.match(r"^#\s", ln))
    stack: list[tuple[int, str]] = []
    blocks: list[_Block] = []
    current: Optional[_Block] = None
    fence: Optional[str] = None
    in_comment = False
    in_tag = False
    container: list[str] = []  # open JSX containers
    banner_depth: Optional[int] = None
    seen_heading = False
    seen_prose = False

    def section() -> str:
        return " > ".join(t for _, t in stack) or "(introduction)"

    def flush() -> None:
        nonlocal current
        if current is not None and current.lines:
            blocks.append(current)
        current = None

    while i < n:
        raw = lines[i]
        lineno = i + 1
        i += 1
        s = raw.strip()
        if fence is not None:
            if s.startswith(fence) and s.strip(fence[0]) == "":
                fence = None
            continue
        if in_comment:
            if "-->" in raw:
                in_comment = False
            continue
        if in_tag:
            if ">" in raw:
                in_tag = False
            continue
        m = _FENCE_RE.match(raw)
        if m:
            flush()
            fence = m.group(1)
            continue
        if s.startswith("<!--"):
            flush()
            in_comment = "-->" not in s[4:]
            continue
        if not s or _RULE_RE.match(raw):
            flush()
            continue
        m = _HEADING_RE.match(raw)
        if m:
            flush()
            level = len(m.group(1))
            seen_heading = True
            if level == 1 and h1 == 1:
                continue
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _heading_text(m.group(2))))
            continue
        if _IMPORT_RE.match(raw):
            flush()
            continue
        if _JSX_LINE_RE.match(raw):
            flush()
            name = _JSX_NAME_RE.match(raw).group(1)
            closing = s.startswith("</")
            self_closing = s.endswith("/>")
            if closing:
                if container and container[-1] == name:
                    container.pop()
                if banner_depth is not None and len(container) < banner_depth:
                    banner_depth = None
            elif not self_closing:
                container.append(name)
                # The rendered form of the draft banner: a call-out container before any heading
                # and any prose. Its text is skipped (notes (c): the banner is not a difference).
                if (not seen_heading and not seen_prose and banner_depth is None
                        and name in _BANNER_CONTAINERS):
                    banner_depth = len(container)
            continue
        if _JSX_OPEN_START_RE.match(raw) and not _LIST_RE.match(raw):
            flush()  # a tag whose attributes run over several lines
            in_tag = True
            continue
        if banner_depth is not None:
            continue
        seen_prose = True
        if _TABLE_RE.match(raw):
            flush()
            if _TABLE_SEP_RE.match(raw):
                continue
            if i < n and _TABLE_SEP_RE.match(lines[i]):
                continue  # a header row: column labels, not prose
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", s.strip("|"))]
            blocks.append(_Block(section(), [(lineno, "; ".join(c for c in cells if c))]))
            continue
        m = _LIST_RE.match(raw)
        if m:
            flush()
            current = _Block(section(), [(lineno, m.group(2))])
            continue
        text = _QUOTE_RE.sub("", raw, count=1) if _QUOTE_RE.match(raw) else raw
        if current is None:
            current = _Block(section(), [])
        current.lines.append((lineno, text.strip()))
    flush()
    return blocks


def _read(path: str | os.PathLike) -> list[str]:
    """The lines of a spec page, read bounded (:func:`model.wire.read_text`; TraceFormatError
    naming the file when it is unreadable, too large or not UTF-8)."""
    from model.wire import read_text
    return read_text(os.fspath(path)).splitlines()


def sentences(path: str | os.PathLike, page: Optional[str] = None) -> list[Sentence]:
    """Every prose sentence of a spec page, normative or plain, in page order.

    Args:
        path: a spec page (``.md``).
        page: the page key to record; default :func:`page_key` of the file name, or the file name
            when the notes' table does not name it.

    Returns:
        The sentences; see :class:`Sentence` for the fields and the module docstring for what is
        skipped.

    Raises:
        OSError: the file cannot be read (FileNotFoundError when it is missing).
        UnicodeDecodeError: the file is not UTF-8.
    """
    name = os.path.basename(os.fspath(path))
    key = page or page_key(path) or name
    out: list[Sentence] = []
    for block in _blocks(_read(path)):
        first = block.lines[0][0]
        joined = "\n".join(text for _, text in block.lines)
        protected, codes = _protect_code(joined)
        cleaned = _strip_markup(protected)
        for a, b in _split(cleaned):
            piece = cleaned[a:b]
            lead = len(piece) - len(piece.lstrip())
            start_line = first + cleaned[:a + lead].count("\n")
            end_line = first + cleaned[:b].rstrip().count("\n")
            plain = " ".join(_PLACEHOLDER_RE.sub(" ", piece).split())
            if not re.search(r"[A-Za-z]", _restore_code(piece, codes)):
                continue
            kws = _keywords(plain)
            text = " ".join(_restore_code(piece, codes).split())
            out.append(Sentence(key, name, block.section, _strongest(kws), kws, text,
                                start_line, max(start_line, end_line)))
    return out


def extract(path: str | os.PathLike, page: Optional[str] = None) -> list[Sentence]:
    """The normative sentences of a spec page: those with a BCP 14 key word in capitals, and those
    the page itself calls normative (keyword ``"normative"``). Same arguments and errors as
    :func:`sentences`, of which this is the normative subset."""
    return [s for s in sentences(path, page) if s.normative]


# --- matching sentences to clauses --------------------------------------------------------------

_STOPWORDS = frozenset("""
a an the and or but nor of to in on at by for with from as into onto than then that this these
those it its it's is are was were be been being do does did done has have had having not no so
such if when whether while which who whom whose what where how any all each every either neither
one ones own same other another there their them they we our you your he she his her i me my
can could will would shall should may might must also only just even still already yet too very
more most much many some few both about above after again against before below between during
over under until up down out off once here why own s t per via upon within without rather
""".split())

_MATCH_THRESHOLD = 0.22
"""Least score at which a sentence's best clause (or a clause's best sentence) counts as a match.
The threshold alone does not separate right from wrong pairs (on the activity page several wrong
pairs score 0.4 to 0.5); the best-of rule of :func:`match_sentences` does that, and the threshold
only leaves unmatched the sentences that resemble no clause. The weakest right match on the
activity page scores 0.25."""

_KEYWORD_BONUS = 0.15
_MISSING_KEYWORD_PENALTY = 0.1
_OTHER_SECTION_FACTOR = 0.6
_ADOPT_BY_CLAUSE_RANK = 3


_SYNONYMS: dict[str, str] = {
    # Our paraphrases avoid the page's words on purpose; these pairs of plain words are the ones
    # that then stand for the same idea often enough to matter (stemmed forms, see _stem).
    "ignor": "skip", "held": "exist", "hold": "exist", "bind": "normativ",
    "remov": "strip", "omit": "absent", "refus": "reject", "failur": "fail",
    "owner": "attribution", "ownership": "attribution", "tag": "attribution",
}


def _stem(word: str) -> str:
    """A crude suffix stripper (plural, past, gerund, adverb, final e), undoubling a final
    consonant left by ``-ed``/``-ing`` (skipped -> skip), then :data:`_SYNONYMS`."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""),
                         ("ly", ""), ("e", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] \
                    and word[-1] not in "aeiousl":
                word = word[:-1]
            break
    return _SYNONYMS.get(word, word)


def _tokens(text: str) -> frozenset[str]:
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", text.replace("_", " "))
    return frozenset(_stem(w.lower()) for w in words
                     if w.lower() not in _STOPWORDS and len(w) > 1)


def _section_names(section: str) -> set[str]:
    """A registry section (``"Error Handling; SUB Termination"``, ``"X (assumption, ...)"``)
    or a sentence's path (``"Events > ACTIVITY_SNAPSHOT"``) as a set of comparable names."""
    names: set[str] = set()
    for part in re.split(r"\s*(?:;|>)\s*", section):
        part = part.strip()
        if part.startswith("(") and part.endswith(")"):
            names.add(part.lower())
            continue
        part = re.sub(r"\s*\(.*\)\s*$", "", part).strip("` ")
        part = re.sub(r"^[A-Z]{3}\s+", "", part)  # "SUB Termination": another page's section
        if part:
            names.add(part.lower().replace("\u2026", "").rstrip(". "))
    return names


def _section_match(clause_section: str, sentence_section: str) -> bool:
    clause_names = _section_names(clause_section)
    path = _section_names(sentence_section)
    for c in clause_names:
        for p in path:
            if c == p or (len(c) > 8 and (p.startswith(c) or c.startswith(p))):
                return True
    return False


def _clause_tokens(clause) -> frozenset[str]:
    words = clause.summary + " " + " ".join(clause.id.split("-")[1:])
    return _tokens(words)


def _score(sentence: Sentence, stoks: frozenset[str], clause, ctoks: frozenset[str],
           keywords: bool = True) -> float:
    """Match score of a sentence and a clause (see :func:`match_sentences`); without the key
    word bonus and penalty when ``keywords`` is False."""
    if not stoks or not ctoks:
        return 0.0
    common = len(stoks & ctoks)
    score = common / math.sqrt(len(stoks) * len(ctoks))
    if not _section_match(clause.section, sentence.section):
        score *= _OTHER_SECTION_FACTOR
    classes = {keyword_class(k) for k in sentence.keywords}
    ck = keyword_class(clause.keyword)
    if keywords and ck != "plain":
        if ck in classes:
            score += _KEYWORD_BONUS
        else:
            score -= _MISSING_KEYWORD_PENALTY
    return round(score, 4)


@dataclass(frozen=True)
class ClauseMatch:
    """A sentence and a clause taken to state the same rule.

    Attributes:
        sentence: the sentence.
        clause_id: the registry id.
        score: the match score (word overlap of sentence and paraphrase, with a bonus when the
            clause's key word is in the sentence and a penalty when it is not).
        by: ``"sentence"`` when the clause is the sentence's best, ``"clause"`` when the sentence
            is the clause's best (a sentence stating several rules matches each of them this
            way), ``"both"`` when both hold.
    """

    sentence: Sentence
    clause_id: str
    score: float
    by: str

    def to_json(self) -> dict:
        return {"clause": self.clause_id, "score": self.score, "by": self.by,
                "sentence": self.sentence.to_json()}


def match_sentences(items: Sequence[Sentence], clauses: Optional[Iterable] = None
                    ) -> list[ClauseMatch]:
    """Match sentences to clauses of the same page.

    A sentence matches its best-scoring clause of the same page when that score reaches the
    threshold; a clause also matches its best-scoring sentence (threshold likewise) when the
    clause is among that sentence's three best, so a sentence carrying two rules (a SHOULD and a
    MUST NOT) matches both clauses. Scores: set-cosine word overlap of the sentence with the
    clause's paraphrase and id words (stop words dropped, crude stemming), times 0.6 when the
    clause's section is not on the sentence's heading path, +0.15 when the clause's key word
    class occurs in the sentence, -0.1 when the clause has a key word the sentence lacks.

    Args:
        items: sentences (any pages).
        clauses: clauses to match against; default the whole registry.

    Returns:
        Matches, in sentence order, then by descending score.
    """
    if clauses is None:
        from model.clauses import registry
        clauses = registry().values()
    by_page: dict[str, list] = {}
    for c in clauses:
        by_page.setdefault(c.page, []).append(c)
    ctoks = {c.id: _clause_tokens(c) for cs in by_page.values() for c in cs}
    scores: dict[tuple[int, str], float] = {}
    ranked: dict[int, list[tuple[float, str]]] = {}
    for i, s in enumerate(items):
        stoks = _tokens(s.text)
        row = []
        for c in by_page.get(s.page, ()):
            sc = _score(s, stoks, c, ctoks[c.id])
            scores[(i, c.id)] = sc
            row.append((sc, c.id))
        row.sort(key=lambda t: (-t[0], t[1]))
        ranked[i] = row
    chosen: dict[tuple[int, str], set[str]] = {}
    for i, row in ranked.items():
        if row and row[0][0] >= _MATCH_THRESHOLD:
            chosen.setdefault((i, row[0][1]), set()).add("sentence")
    for c in (c for cs in by_page.values() for c in cs):
        best: Optional[tuple[float, int]] = None
        for i, s in enumerate(items):
            if s.page != c.page:
                continue
            sc = scores[(i, c.id)]
            if best is None or sc > best[0]:
                best = (sc, i)
        if best is None or best[0] < _MATCH_THRESHOLD:
            continue
        top = [cid for _, cid in ranked[best[1]][:_ADOPT_BY_CLAUSE_RANK]]
        if c.id in top:
            chosen.setdefault((best[1], c.id), set()).add("clause")
    out = []
    for (i, cid), how in chosen.items():
        by = "both" if len(how) == 2 else next(iter(how))
        out.append(ClauseMatch(items[i], cid, scores[(i, cid)], by))
    out.sort(key=lambda m: (items.index(m.sentence), -m.score, m.clause_id))
    return out


# --- coverage -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class KeywordChange:
    """A clause whose key word is in none of its matched sentences.

    Attributes:
        clause_id: the registry id.
        clause_keyword: the registry's key word.
        sentence: the sentence of the page with the best word overlap (key words aside) above
            the match threshold that carries any key word (else the best matched one); its
            ``keywords`` are what the page says now.
    """

    clause_id: str
    clause_keyword: str
    sentence: Sentence

    def to_json(self) -> dict:
        return {"clause": self.clause_id, "clauseKeyword": self.clause_keyword,
                "sentenceKeyword": self.sentence.keyword,
                "sentenceKeywords": list(self.sentence.keywords),
                "sentence": self.sentence.to_json()}


@dataclass(frozen=True)
class CoverageReport:
    """What :func:`coverage` found.

    Attributes:
        files: the files read, as given.
        pages: the page keys those files stand for (sorted; file names for unknown files).
        sentences: every prose sentence of those files.
        matches: sentence-clause matches (:func:`match_sentences`).
        unmatched: normative sentences that match no clause (a rule with no registry entry).
        gone: ids of registry clauses of the given pages that no sentence matches (an entry
            whose sentence is gone, or reworded beyond recognition).
        keyword_changes: matched clauses whose key word class occurs in none of their sentences.
        unstated: ids of the given pages' entries that record an assumption where the page is
            silent (section ``... assumption ...``); they match no sentence by design and are not
            counted as gone.
    """

    files: tuple[str, ...]
    pages: tuple[str, ...]
    sentences: tuple[Sentence, ...]
    matches: tuple[ClauseMatch, ...]
    unmatched: tuple[Sentence, ...]
    gone: tuple[str, ...]
    keyword_changes: tuple[KeywordChange, ...]
    unstated: tuple[str, ...] = ()

    @property
    def normative(self) -> tuple[Sentence, ...]:
        """The normative sentences (key word or self-declared)."""
        return tuple(s for s in self.sentences if s.normative)

    @property
    def matched_share(self) -> float:
        """Share of normative sentences that match at least one clause (1.0 when there are none)."""
        norm = self.normative
        return 1.0 if not norm else 1 - len(self.unmatched) / len(norm)

    def clauses_of(self, sentence: Sentence) -> tuple[str, ...]:
        """The clause ids a sentence matches, best first."""
        return tuple(m.clause_id for m in self.matches if m.sentence == sentence)

    def to_json(self) -> dict:
        return {
            "files": list(self.files), "pages": list(self.pages),
            "sentences": len(self.sentences), "normativeSentences": len(self.normative),
            "matchedShare": round(self.matched_share, 4),
            "matches": [m.to_json() for m in self.matches],
            "unmatched": [s.to_json() for s in self.unmatched],
            "gone": list(self.gone),
            "unstated": list(self.unstated),
            "keywordChanges": [k.to_json() for k in self.keyword_changes],
        }


def coverage(paths: Sequence[str | os.PathLike], clauses: Optional[Iterable] = None
             ) -> CoverageReport:
    """Match the sentences of spec pages to the clause registry.

    Pages are identified by file name (:data:`PAGE_KEYS`), so draft and 1.0 copies of a page
    both stand for its key. Clauses of a key count as "gone" only when none of the given files
    of that key has a matching sentence (SCH is two files; pass both to judge SCH fully).

    Args:
        paths: spec pages.
        clauses: the clauses to match; default :func:`model.clauses.registry`.

    Returns:
        A :class:`CoverageReport`.

    Raises:
        OSError, UnicodeDecodeError: as :func:`sentences`.
    """
    clauses = _clause_list(clauses)
    items: list[Sentence] = []
    for p in paths:
        items.extend(sentences(p))
    pages = tuple(sorted({s.page for s in items} | {page_key(p) or os.path.basename(os.fspath(p))
                                                    for p in paths}))
    matches = match_sentences(items, clauses)
    matched_sentences = {id(m.sentence) for m in matches}
    unmatched = tuple(s for s in items if s.normative and id(s) not in matched_sentences)
    matched_clauses = {m.clause_id for m in matches}
    missing = [c for c in clauses if c.page in pages and c.id not in matched_clauses]
    gone = tuple(c.id for c in missing if not _is_assumption(c))
    unstated = tuple(c.id for c in missing if _is_assumption(c))
    changes = []
    by_id = {c.id: c for c in clauses}
    for cid in dict.fromkeys(m.clause_id for m in matches):
        clause = by_id[cid]
        ck = keyword_class(clause.keyword)
        if ck == "plain":
            continue
        mine = [m for m in matches if m.clause_id == cid]
        if any(ck in {keyword_class(k) for k in m.sentence.keywords} for m in mine):
            continue
        # Say what the page now has in the clause's place: the sentence with the best word
        # overlap (key words left out of the score) above the threshold that carries a key word (a reworded sentence may have lost its match to a
        # neighbour), else the best matched one.
        ctoks = _clause_tokens(clause)
        near = [(_score(s, _tokens(s.text), clause, ctoks, keywords=False), s) for s in items
                if s.page == clause.page and s.keywords]
        near = [(sc, s) for sc, s in near if sc >= _MATCH_THRESHOLD]
        if near:
            sentence = max(near, key=lambda t: t[0])[1]
        else:
            sentence = max(mine, key=lambda m: m.score).sentence
        changes.append(KeywordChange(cid, clause.keyword, sentence))
    return CoverageReport(tuple(os.fspath(p) for p in paths), pages, tuple(items),
                          tuple(matches), unmatched, gone, tuple(changes), unstated)


def _is_assumption(clause) -> bool:
    """A registry entry recording what the page leaves unstated (its section says
    ``assumption``): it has no sentence to find."""
    return "assumption" in clause.section.lower()


# --- diff ---------------------------------------------------------------------------------------

_SIMILAR = 0.6
"""Least difflib ratio at which an old and a new sentence of the same section are one sentence
changed rather than one removed and one added."""

_VERSION_LINK_RE = re.compile(r"/spec/(?:draft|\d+(?:\.\d+)*)/")


def _comparable(text: str) -> str:
    """Text as compared by :func:`diff`: version prefixes of spec links written the same
    (``/spec/draft/`` = ``/spec/1.0/``), white space normalised. Link syntax is already gone."""
    return " ".join(_VERSION_LINK_RE.sub("/spec/*/", text).split())


def _keyword_classes(s: Sentence) -> tuple[str, ...]:
    return tuple(sorted({keyword_class(k) for k in s.keywords if k != NORMATIVE}
                        | ({NORMATIVE} if NORMATIVE in s.keywords else set())))


@dataclass(frozen=True)
class Change:
    """One sentence-level difference between two versions of a page.

    Attributes:
        kind: ``"added"``, ``"removed"``, ``"changed"`` (same section, similar text) or
            ``"moved"`` (same text, another section).
        old: the old sentence (None when added).
        new: the new sentence (None when removed).
        similarity: difflib ratio of the two texts (0 for added or removed).
        keyword_change: for a changed or moved sentence, ``(old keywords, new keywords)`` when
            their key word classes differ (MUST -> SHOULD; a key word added to or dropped from
            the sentence), else None (always None for added and removed sentences: their
            ``keywords`` say what came or went).
        normative: True when either side is normative or maps to a clause.
        clauses: clause ids the sentence maps to: the old version's mapping for a changed,
            moved or removed sentence (the new version's when the old maps to none), the new
            version's for an added one.
        dependents: ``{kind: names}`` of what depends on those clauses: ``"property"`` (from the
            caller's table), ``"knob"`` (:data:`model.readings.KNOBS`), ``"branch"``
            (:data:`model.consumer.BRANCHES`).
    """

    kind: str
    old: Optional[Sentence]
    new: Optional[Sentence]
    similarity: float
    keyword_change: Optional[tuple[tuple[str, ...], tuple[str, ...]]]
    normative: bool
    clauses: tuple[str, ...]
    dependents: Mapping[str, tuple[str, ...]]

    @property
    def section(self) -> str:
        return (self.new or self.old).section  # type: ignore[union-attr]

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "old": self.old.to_json() if self.old else None,
            "new": self.new.to_json() if self.new else None,
            "similarity": round(self.similarity, 4),
            "keywordChange": ({"old": list(self.keyword_change[0]),
                               "new": list(self.keyword_change[1])}
                              if self.keyword_change else None),
            "normative": self.normative, "clauses": list(self.clauses),
            "dependents": {k: list(v) for k, v in self.dependents.items()},
        }


@dataclass(frozen=True)
class DiffReport:
    """What :func:`diff` found.

    Attributes:
        old_file, new_file: the files, as given.
        page: the page key of the new file (of the old one when the new has none).
        changes: every difference, in page order of the new version (removals where the old
            sentence stood).
        unchanged: how many sentences are the same in both.
    """

    old_file: str
    new_file: str
    page: str
    changes: tuple[Change, ...]
    unchanged: int

    @property
    def normative_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.normative)

    @property
    def keyword_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.keyword_change)

    def of_kind(self, kind: str) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind == kind)

    @property
    def affected_clauses(self) -> tuple[str, ...]:
        """Clause ids of the normative changes, first seen first."""
        return tuple(dict.fromkeys(cid for c in self.normative_changes for cid in c.clauses))

    def knobs(self) -> list[dict]:
        """The knobs that read the clauses the normative changes touch (issue 41), in knob
        order: ``{"knob", "question", "clauses" (those touched), "options" ([{"option",
        "does"}], the draft's first), "recommended"}``, so that an author who edits a sentence
        sees which behaviour it decides and can run ``resolve --pin KNOB=OPTION`` on the option
        the new wording picks."""
        from model.readings import KNOBS
        touched = set(self.affected_clauses)
        out = []
        for knob in KNOBS:
            mine = [c for c in knob.clauses if c in touched]
            if mine:
                out.append({"knob": knob.id, "question": knob.question, "clauses": mine,
                            "options": [{"option": o, "does": d} for o, d in knob.options],
                            "recommended": knob.recommended["option"]})
        return out

    def to_json(self) -> dict:
        return {"old": self.old_file, "new": self.new_file, "page": self.page,
                "unchanged": self.unchanged,
                "normativeDifference": bool(self.normative_changes),
                "counts": {k: len(self.of_kind(k))
                           for k in ("added", "removed", "changed", "moved")},
                "keywordChanges": len(self.keyword_changes),
                "affectedClauses": list(self.affected_clauses),
                "knobs": self.knobs(),
                "changes": [c.to_json() for c in self.changes]}


def dependents_of(clause_ids: Iterable[str],
                  properties: Optional[Mapping[str, Iterable[str]]] = None
                  ) -> dict[str, tuple[str, ...]]:
    """What depends on some clauses: ``{"property": ..., "knob": ..., "branch": ...}`` (kinds
    with no dependent left out).

    Args:
        clause_ids: clause ids.
        properties: ``{property id: clause ids}`` (the CLI passes
            ``properties.catalogue.coverage_table()``; ``model`` does not import ``properties``).
    """
    from model.consumer import BRANCHES
    from model.readings import KNOBS
    ids = set(clause_ids)
    out: dict[str, tuple[str, ...]] = {}
    tables = (("property", dict(properties or {})),
              ("knob", {k.id: k.clauses for k in KNOBS}),
              ("branch", dict(BRANCHES)))
    for kind, table in tables:
        names = tuple(name for name, cids in table.items() if ids & set(cids))
        if names:
            out[kind] = names
    return out


def diff(old_path: str | os.PathLike, new_path: str | os.PathLike,
         properties: Optional[Mapping[str, Iterable[str]]] = None,
         clauses: Optional[Iterable] = None) -> DiffReport:
    """The sentence-level differences between two versions of a spec page, mapped to clauses.

    Both files are read with :func:`sentences` (so the provenance header, frontmatter, imports,
    the draft banner, code and diagrams never differ) and compared on :func:`_comparable` text
    (so ``/spec/draft/`` and ``/spec/1.0/`` link targets do not differ either; link targets are
    dropped with the link syntax anyway). Pairing: identical (section, text) in order first
    (difflib on the sequences), then identical text in another section ("moved"), then, within
    one section, the most similar remaining pair with difflib ratio >= 0.6 ("changed"), best
    first; what is left is "removed" or "added". Each change is mapped to clauses by
    :func:`match_sentences` run over the whole version it comes from, and to what depends on
    them (:func:`dependents_of`).

    Args:
        old_path, new_path: the two versions (their file names decide the page key; pass two
            copies with the page's own file name, e.g. ``draft/activity.md`` and
            ``1.0/activity.md``).
        properties: ``{property id: clause ids}`` for the dependents.
        clauses: the clauses to map to; default the registry.

    Returns:
        A :class:`DiffReport`.

    Raises:
        OSError, UnicodeDecodeError: as :func:`sentences`.
    """
    clauses = _clause_list(clauses)
    key = page_key(new_path) or page_key(old_path)
    old = sentences(old_path, key)
    new = sentences(new_path, key)
    old_map = _clause_map(old, clauses)
    new_map = _clause_map(new, clauses)
    okeys = [(s.section, _comparable(s.text)) for s in old]
    nkeys = [(s.section, _comparable(s.text)) for s in new]
    pairs: dict[int, int] = {}  # new index -> old index
    sm = difflib.SequenceMatcher(a=okeys, b=nkeys, autojunk=False)
    for block in sm.get_matching_blocks():
        for k in range(block.size):
            pairs[block.b + k] = block.a + k
    unchanged = len(pairs)
    kinds: dict[int, str] = {}
    free_old = [i for i in range(len(old)) if i not in set(pairs.values())]
    free_new = [j for j in range(len(new)) if j not in pairs]
    for j in list(free_new):
        for i in free_old:
            if okeys[i][1] == nkeys[j][1]:
                pairs[j] = i
                kinds[j] = "moved"
                free_old.remove(i)
                free_new.remove(j)
                break
    candidates = []
    for j in free_new:
        for i in free_old:
            if old[i].section != new[j].section:
                continue
            ratio = difflib.SequenceMatcher(a=okeys[i][1], b=nkeys[j][1],
                                            autojunk=False).ratio()
            if ratio >= _SIMILAR:
                candidates.append((ratio, i, j))
    taken_old: set[int] = set()
    for ratio, i, j in sorted(candidates, key=lambda t: (-t[0], t[1], t[2])):
        if i in taken_old or j in pairs:
            continue
        pairs[j] = i
        kinds[j] = "changed"
        taken_old.add(i)
    changes: list[tuple[tuple[int, int], Change]] = []
    for j, kind in kinds.items():
        i = pairs[j]
        o, n = old[i], new[j]
        ratio = difflib.SequenceMatcher(a=okeys[i][1], b=nkeys[j][1], autojunk=False).ratio()
        kw = ((o.keywords, n.keywords) if _keyword_classes(o) != _keyword_classes(n) else None)
        # The old version's mapping: in the new one, a clause whose sentence went elsewhere
        # drifts to its next-best sentence. The new mapping only when the old had none.
        cids = old_map.get(i, ()) or new_map.get(j, ())
        changes.append(((j, 0), _change(kind, o, n, ratio, kw, cids, properties)))
    used_old = set(pairs.values())
    for i, o in enumerate(old):
        if i in used_old:
            continue
        cids = old_map.get(i, ())
        kw = None
        # place a removal just after the new sentence paired with the old one before it
        anchor = max((j for j, oi in pairs.items() if oi < i), default=-1)
        changes.append(((anchor, 1), _change("removed", o, None, 0.0, kw, cids, properties)))
    for j, n in enumerate(new):
        if j in pairs:
            continue
        cids = new_map.get(j, ())
        kw = None
        changes.append(((j, 0), _change("added", None, n, 0.0, kw, cids, properties)))
    changes.sort(key=lambda t: t[0])
    return DiffReport(os.fspath(old_path), os.fspath(new_path),
                      key or os.path.basename(os.fspath(new_path)),
                      tuple(c for _, c in changes), unchanged)


def _clause_map(items: list[Sentence], clauses: list) -> dict[int, tuple[str, ...]]:
    index = {id(s): i for i, s in enumerate(items)}
    out: dict[int, list[str]] = {}
    for m in match_sentences(items, clauses):
        out.setdefault(index[id(m.sentence)], []).append(m.clause_id)
    return {i: tuple(v) for i, v in out.items()}


def _change(kind: str, old: Optional[Sentence], new: Optional[Sentence], ratio: float,
            kw, cids: tuple[str, ...], properties) -> Change:
    normative = bool(cids) or any(s is not None and s.normative for s in (old, new))
    return Change(kind, old, new, ratio, kw, normative, cids, dependents_of(cids, properties))
