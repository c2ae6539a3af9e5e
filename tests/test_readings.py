"""Readings as the user names them (model.readings.parse_reading): presets, overrides, errors."""
import pytest

from model.readings import DRAFT, KNOB_BY_ID, PRESETS, ReadingError, knob_of, parse_reading


@pytest.mark.parametrize("spec", ["Q1=ignore", "q1=ignore", "q1=IGNORE", " Q1 = Ignore "])
def test_knob_ids_and_options_in_any_case(spec):
    assert parse_reading(spec) == DRAFT.with_(Q1="ignore")


@pytest.mark.parametrize("spec", ["Q4-opener=first", "q4-opener=first", "q4-OPENER=FIRST",
                                  " Q4-OPENER = First "])
def test_hyphenated_knob_ids_in_any_case_as_plain_ones(spec):
    """A hyphenated knob id is matched without case as ``q1`` is (``q4-OPENER`` was an
    unknown knob: only the id as written and its upper case were tried)."""
    assert parse_reading(spec) == DRAFT.with_(**{"Q4-opener": "first"})
    assert parse_reading(spec.replace("4-opener", "6-ms").replace("4-OPENER", "6-MS")
                         .replace("first", "merge").replace("FIRST", "MERGE")
                         .replace("First", "Merge")).q6_ms == "merge"
    with pytest.raises(ReadingError, match="Q4-opener is given twice"):
        parse_reading(f"Q4-opener=current,{spec}")


def test_knob_of_matches_ids_without_case_and_nothing_else():
    assert knob_of("q4-OPENER") is KNOB_BY_ID["Q4-opener"] is knob_of("Q4-opener")
    assert knob_of("x1") is KNOB_BY_ID["X1"] and knob_of("q6-Ms").id == "Q6-ms"
    assert knob_of("Q4opener") is None and knob_of("Q4-opener ") is None


@pytest.mark.parametrize("spec", ["STRICT", "Strict,Q7=SKIP"])
def test_presets_in_any_case(spec):
    reading = parse_reading(spec)
    assert reading.q3 == PRESETS["strict"].q3 == "fatal"
    assert reading.q7 == ("skip" if "Q7" in spec else "fatal")


@pytest.mark.parametrize("spec, message", [
    ("Q1=maybe", "unknown option 'maybe' for Q1; options: merge, ignore"),
    ("Q99=x", "unknown knob 'Q99'"),
    ("Q1=ignore,q1=merge", "Q1 is given twice"),
    ("Q1=ignore,strict", "only the first item may name a preset"),
    ("", "empty reading"),
])
def test_errors_name_the_fault(spec, message):
    with pytest.raises(ReadingError, match=message.replace("(", r"\(")):
        parse_reading(spec)


@pytest.mark.parametrize("knob_id, options, producer_only", [
    ("Q12", ("stream", "owner", "run"), True),
    ("Q14", ("decline", "adopt"), False),
    ("Q15", ("live", "closed"), False),
    ("Q17", ("as-received", "strip-echo"), True),
    ("Q23", ("continue", "run-scoped"), False),
])
def test_issue_19_knobs_are_declared_with_clauses_and_peers(knob_id, options, producer_only):
    from model.clauses import registry
    from model.producer import PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS
    from model.readings import KNOB_BY_ID
    knob = KNOB_BY_ID[knob_id]
    assert knob.option_names == options and getattr(DRAFT, knob.attr) == options[0]
    assert all(c in registry() for c in knob.clauses)
    assert all(option in options for _, option in knob.peers)
    recorded = dict(knob.peers)  # model/data/peer_options.json: observable options only
    if producer_only:  # no consumer shows a producer-side knob
        assert recorded == {}
    else:
        assert recorded["@ag-ui/client 1.0.0 reducer"] == options[0]
    assert (knob_id in PRODUCER_ONLY_KNOBS) is producer_only
    assert (knob_id in PRODUCER_KNOBS) is producer_only
    assert parse_reading(f"{knob_id}={options[-1]}") == DRAFT.with_(**{knob_id: options[-1]})


# --- faithful and deviation options (issue 39 item 4) -------------------------------------------

DEVIATIONS = {("Q8", "keep"): "STA-MS-SELF-REVOKE", ("Q8", "by-type"): "STA-MS-SELF-REVOKE",
              ("Q18", "schema"): "ACT-SNAP-REPLACE-FALSE",
              ("Q20", "skip-patch"): "SNP-UNKNOWN-OP", ("Q20", "fatal"): "SNP-UNKNOWN-OP"}
"""Every option the draft pages' text rules out (reviewed knob by knob against the pages and
the notes): Q8's two against the self-revoking sentence of the state page, Q18's schema reading
against the activity page's 'content and activityType', Q20's two against the snapshots page's
unknown-op rule (the element dropped, the run survives)."""

PAGE_WORDS = {"STA": "state page", "ACT": "activity page", "SNP": "snapshots pattern page"}


def test_every_option_is_marked_and_only_those_the_text_rules_out_are_deviations():
    from model.clauses import get as clause_of
    from model.readings import KNOBS
    marks = {(k.id, o): k.deviation(o) for k in KNOBS for o in k.option_names}
    assert {key: c for key, c in marks.items() if c} == DEVIATIONS
    for k in KNOBS:
        assert k.mark(k.draft) == "faithful"  # the draft's own option never goes against it
        for o in k.option_names:
            assert k.mark(o) == ("deviation" if (k.id, o) in DEVIATIONS else "faithful")
            reason = k.deviation_reason(o)
            if (k.id, o) not in DEVIATIONS:
                assert reason is None
                continue
            clause = clause_of(DEVIATIONS[(k.id, o)])
            assert DEVIATIONS[(k.id, o)] in k.clauses  # a clause the question sits between
            # one line, citing page and section in our words
            assert "\n" not in reason and len(reason) <= 140, reason
            assert reason.startswith(PAGE_WORDS[clause.page] + ", " + clause.section + ": ")


def test_deviation_note_and_basis_name_the_option_and_its_clause():
    from model.readings import basis_of, deviation_note, deviations_of
    assert deviation_note("Q20", "skip-patch") == \
        " (deviation, against SNP-UNKNOWN-OP: not conformant)"
    assert deviation_note("Q20", "drop-op") == deviation_note("Q1", "ignore") == ""
    assert deviation_note("nope", "x") == ""
    assert deviations_of({"Q18": "schema", "Q1": "ignore"}) == \
        ["Q18=schema (against ACT-SNAP-REPLACE-FALSE)"]
    assert basis_of([{"Q20": "fatal"}]) == "deviation: Q20=fatal (against SNP-UNKNOWN-OP)"
    assert basis_of([{"Q20": "drop-op"}, {"Q20": "fatal"}]) == \
        "draft (the other side a deviation: Q20=fatal (against SNP-UNKNOWN-OP))"
    assert basis_of([{"X1": "preserve"}]) == "outside the draft: X1 (the model's own question)"


def test_peer_check_counts_a_peer_matching_only_through_a_deviation_as_not_conformant(capsys):
    """``peer check`` of a consumer that takes Q20=skip-patch: the trace it matches only so is
    counted apart, not conformant, and its row and the knob table name the option."""
    import json
    from activity_check.cli import main
    assert main(["peer", "check", "--adapter", "model:Q20=skip-patch", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"traces": 37, "draft": 36, "reading": 1, "deviation": 1,
                             "divergence": 0, "error": 0}
    row = next(t for t in doc["traces"] if t["class"] == "reading")
    assert row["deviation"] == "Q20=skip-patch (against SNP-UNKNOWN-OP)"
    assert main(["peer", "check", "--adapter", "model:Q20=skip-patch", "--wide"]) == 0
    out = capsys.readouterr().out
    assert "1 with another reading (1 of them only through a deviation: not conformant)" in out
    assert "skip-patch (deviation, against SNP-UNKNOWN-OP: not conformant)" in out
    assert "deviation: only through Q20=skip-patch (against SNP-UNKNOWN-OP)" in out


def test_peer_check_says_when_a_match_rests_on_the_model_s_own_question(capsys):
    """A consumer taking X1=preserve matches the model only through X1, a question of the
    model's own outside the draft: the trace rows say so (JSON ``outsideDraft`` and the text),
    and it is not counted as a deviation."""
    import json
    from activity_check.cli import main
    assert main(["peer", "check", "--adapter", "model:X1=preserve", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["reading"] == 2 and doc["counts"]["deviation"] == 0
    rows = [t for t in doc["traces"] if t["class"] == "reading"]
    assert [(t["id"], t["outsideDraft"]) for t in rows] == [
        (t["id"], "X1 (the model's own question)") for t in rows]
    assert {t["id"] for t in rows} == {"FC-34"} | {t["id"] for t in rows
                                                   if t["id"].startswith("AMB-X1-")}
    assert main(["peer", "check", "--adapter", "model:X1=preserve", "--wide"]) == 0
    assert "outside the draft, X1 (the model's own question): X1=preserve" in \
        capsys.readouterr().out


def test_an_unknown_reading_is_quoted_as_typed(tmp_path, capsys):
    """``--reading QQQQ`` is named as typed, ``'QQQQ'`` (it was lower-cased, ``'qqqq'``, for
    the preset look-up), an over-long one cut inside its quotes; a later preset as well."""
    with pytest.raises(ReadingError) as caught:
        parse_reading("QQQQ")
    assert str(caught.value) == ("unknown reading 'QQQQ'; presets: draft, lenient, strict; or "
                                 "KNOB=OPTION pairs such as Q1=ignore,Q7=fatal")
    with pytest.raises(ReadingError) as caught:
        parse_reading("Q" * 3000)
    assert str(caught.value).startswith(f"unknown reading '{'Q' * 80}…'; presets: ")
    with pytest.raises(ReadingError) as caught:
        parse_reading("draft,Strict")
    assert str(caught.value) == "only the first item may name a preset; 'Strict' comes later"
    from activity_check.cli import main
    assert main(["export", str(tmp_path / "missing.json"), "--format", "itf",
                 "--reading", "QqQq"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("activity-check: error: --reading: unknown reading 'QqQq'; presets: ")
    assert err.count("\n") == 1


def test_a_knob_gloss_is_its_question_whole_up_to_the_question_mark():
    """Table cells show :attr:`Knob.gloss`: Q19's question runs past its first ' (' and must not
    be cut there; the argument after the question mark is left out."""
    from model.readings import KNOB_BY_ID, KNOBS
    q19 = KNOB_BY_ID["Q19"].gloss
    assert q19.endswith("send it nowhere?") and "catch-all row (whose examples" in q19
    assert KNOB_BY_ID["Q12"].gloss.endswith("(ACT-DELTA-BASELINE)?")
    assert KNOB_BY_ID["Q1"].gloss == KNOB_BY_ID["Q1"].question
    for knob in KNOBS:
        assert knob.gloss.endswith("?") and knob.question.startswith(knob.gloss), knob.id
