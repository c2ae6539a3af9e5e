"""model.text's folds (fold_words, fold_spans, text_table, phrases kept whole) and the command
line's id columns: widths are terminal columns; an over-long value in an error is cut inside its
quotes (named, schema_message)."""
import json
import textwrap

from rich.cells import cell_len

from model.text import columns, fold_spans, fold_words, text_table


def test_fold_words_counts_columns_not_characters():
    """Ten 3-character CJK words are 6 columns each: within 20 columns three fit on a line
    (20 columns), not five (20 characters, 34 columns)."""
    text = " ".join(["日本語"] * 10)
    lines = fold_words(text, 20, indent="  ")
    assert lines == ["日本語 日本語 日本語", "  日本語 日本語", "  日本語 日本語",
                     "  日本語 日本語", "  日本語"]
    assert max(cell_len(line) for line in lines) == 20
    assert columns("日本語") == 6 and columns("🙂") == 2 and columns("abc") == 3


def test_fold_words_never_breaks_a_word_and_matches_textwrap_on_ascii():
    ids = "ACT-DELTA-BASELINE STA-MS-SELF-REVOKE P30-activity-delta-baseline"
    assert fold_words(ids, 10, indent="  ") == ["ACT-DELTA-BASELINE", "  STA-MS-SELF-REVOKE",
                                                  "  P30-activity-delta-baseline"]
    text = "  FAIL a-very-long-fixture-name\tits key: expected 1, actual 2 (where it was read)"
    for width in (1, 8, 20, 33, 80):
        assert fold_words(text, width, "    ", "> ") == textwrap.wrap(
            text, width=width, initial_indent="> ", subsequent_indent="    ",
            break_long_words=False, break_on_hyphens=False)
    assert fold_words("", 10, first="x") == ["x"] and fold_words("abc", None) == ["abc"]


def test_fold_spans_give_the_cut_places_in_the_text():
    text = "  head 日本語日本語 tail"
    assert fold_spans(text, 12, 0, 4) == [(0, 6), (7, 13), (14, 18)]
    assert fold_spans("   ", 5) == []


def test_text_table_aligns_wide_cells_by_columns():
    rows = [["id", "name"], ["日本", "x"], ["ab", "y"]]
    lines = text_table(rows)
    assert lines == ["id    name", "日本  x", "ab    y"]
    # the second column starts at column 6 on every row (ljust would put x at column 8)
    assert [cell_len(line[:line.index(c)]) for line, c in zip(lines, "nxy")] == [6, 6, 6]


def test_quoted_cuts_a_value_inside_its_quotes():
    from model.text import QUOTE_LIMIT, quoted
    assert quoted("Q2") == "'Q2'" and quoted("it's") == '"it\'s"'
    assert quoted("a" * 500, 4) == "'aaaa…'"
    assert quoted("a" * QUOTE_LIMIT) == repr("a" * QUOTE_LIMIT)
    assert quoted("\x1b" * 10, 2) == "'\\x1b\\x1b…'"  # escaped as repr escapes it
    assert quoted(list(range(100)), 10) == "[0, 1, 2, …"


def test_named_and_schema_message_cut_the_value_not_the_explanation():
    """An over-long command line, URL or schema-quoted value is cut inside its quotes, and what
    is said of it after stays whole (a whole-line cut lost it)."""
    import jsonschema
    import pytest
    from model.text import named, schema_message
    assert named("nosuchcmd") == "nosuchcmd" and named("a" * 200) == "a" * 200
    assert named("a" * 3000) == "'" + "a" * 200 + "…'"
    error = next(jsonschema.Draft202012Validator({"maxLength": 3}).iter_errors("b" * 3000))
    assert schema_message(error) == f"'{'b' * 80}…' is too long"
    error = next(jsonschema.Draft202012Validator({"type": "integer"}).iter_errors("short"))
    assert schema_message(error) == error.message == "'short' is not of type 'integer'"
    # a value that is not a string, as the JSON it came from, not as Python writes it
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    messages = [schema_message(next(jsonschema.Draft202012Validator(schema).iter_errors(v)))
                for v in ({"a": None}, ["a"], {"a": True}, {"a": [1] * 100})]
    assert messages[:3] == ["null is not of type 'string'", '["a"] is not of type \'object\'',
                            "true is not of type 'string'"]
    assert messages[3] == json.dumps([1] * 100)[:80] + " ... is not of type 'string'"
    from properties.search.checkpoint import findings_from_json
    with pytest.raises(ValueError) as caught:  # cut at 200 characters: 'was unexpected' lost
        findings_from_json({"format": 4, "findings": [], "z" * 3000: 1})
    assert str(caught.value) == ("the document: Additional properties are not allowed "
                                 f"('{'z' * 80}…' was unexpected)")


def test_fold_keeps_phrases_whole():
    """``keep``: a count and its label are never folded apart (``… 0 out of`` / ``scope``),
    at any width; the spaces printed are plain spaces; without ``keep`` they were."""
    from model.text import fold_line
    items = ["12 passed", "3 argued", "0 out of scope", "1 unargued"]
    text = "the model against its scope (judged as a third-party client): " + ", ".join(items)
    assert fold_line(text, 92) == ("the model against its scope (judged as a third-party "
                                   "client): 12 passed, 3 argued, 0 out of\n  scope, 1 unargued")
    for width in range(16, len(text) + 2):
        lines = fold_line(text, width, keep=items).split("\n")
        words = " ".join(line.strip() for line in lines)
        assert words == text and "\u00a0" not in words
        for item in items:
            assert any(item in line for line in lines), (width, item, lines)
    assert fold_line(text, 92, keep=items) == (
        "the model against its scope (judged as a third-party client): 12 passed, 3 argued,\n"
        "  0 out of scope, 1 unargued")
    # a kept phrase wider than the line stands whole on a line of its own, as a long word does
    assert fold_words("a b " + "c " * 10 + "d", 8, keep=["c " * 9 + "c"]) == \
        ["a b", "c " * 9 + "c", "d"]


def test_id_columns_are_as_wide_as_their_ids_in_terminal_columns():
    """cli.id_column and id_list_column size a rich column by terminal columns (cell_len): an
    id of wide characters (10 characters, 17 columns) is printed whole on one line, where a
    column sized by ``len`` cut it (``日本語日本 …``) or broke it across lines."""
    from rich.console import Console
    from rich.table import Table
    from activity_check.cli import id_column, id_list_column
    wide, listed = "日本語日本語-一-x", "語語語語語語語語語"
    table = Table()
    id_column(table, "id", [wide, "b"])
    id_list_column(table, "refs", [f"{listed} x", "y"])
    table.add_column("text")
    table.add_row(wide, f"{listed} x", "word " * 30)
    assert [c.min_width for c in table.columns[:1]] == [cell_len(wide)] == [17]
    assert table.columns[1].width == cell_len(listed) == 18
    console = Console(width=60, record=True, color_system=None)
    console.print(table)
    lines = console.export_text().splitlines()
    assert any(wide in line and listed in line for line in lines), "\n".join(lines)
    assert max(cell_len(line) for line in lines) <= 60
