"""pairwise: our own hand-computed cases (nopt 3 and 4), crash paths, variants, extras."""

import pytest

from rageval_min import pairwise as pw
from rageval_min.errors import ScoringError

ANS = {"R": "RRRR", "X": "XX", "Y": "YYYYYY"}


def rec(cmp_index, judge, task=None, a1=None, a2=None):
    idx, a, b = cmp_index.split(";")[:3]
    if task is None:
        task = idx.split("_", 1)[1]
    return {
        "cmp_index": cmp_index,
        "question": "q",
        "answer1": ANS.get(a, a) if a1 is None else a1,
        "answer2": ANS.get(b, b) if a2 is None else a2,
        "A": a,
        "B": b,
        "reference_answer": "",
        "evaluating_guidance": "g",
        "task": task,
        "judge": judge,
    }


def nopt4_records():
    return [
        rec("p_d-general;R;X", "Choice: C\nReason: both fine"),
        rec("p_d-general;X;R", "Choice: C"),
        rec("p_d-faithfulness;R;X", "Choice: D"),
        rec("p_d-faithfulness;X;R", "Choice: D"),
        rec("q_d-general;R;X", "Choice: A"),  # R wins ...
        rec("q_d-general;X;R", "Choice: A"),  # ... X wins: (A,A) inconsistent
        rec("p_d-general;R;Y", "Choice: B"),  # orphan (partner failed), Y wins
        rec("p_d-general;Y;R", pw.FAIL_MESSAGE),
        rec("p_d-faithfulness;R;Y", "I pick A"),  # unparseable
        rec("p_d-faithfulness;Y;R", "选择：A"),  # orphan, Y wins
        rec("q_d-general;R;Y", "EM", a2="RRRR"),
        rec("q_d-general;Y;R", "EM", a1="RRRR"),
    ]


def test_nopt4_counts_consistency_and_log():
    res = pw.score(nopt4_records(), nopt=4, refm="R")
    c = res.result["counts"]
    assert dict(c) == {
        "total": 12,
        "failed": 1,
        "non_exact": 10,
        "extracted": 8,
        "extraction_rate": 0.8,
        "consistent": 6,
        "consistency_rate": 0.75,
    }
    assert pw.log_lines(c) == [
        "Total comparisons: 12. Failed to response: 1",
        "Total comparisons: 12. Non exact matches:  10",
        "Extracted 8 answers from the responses (extraction success rate 80.00%)",
        "6 out of 8 answers are consistent. (A vs. B <-> B vs. A) The consistent rate is 75.00%",
    ]
    assert [r["cmp_index"] for r in res.inconsistent_rows] == ["q_d-general;R;X", "q_d-general;X;R"]
    assert [r["extracted"] for r in res.consistent_rows] == ["C", "C", "D", "D", "B", "A"]


def test_nopt4_old_version_c_and_d():
    res = pw.score(nopt4_records(), nopt=4, refm="R")
    old = res.result["old_version"]
    cols = ["model", "Overall-lang", "EN", "d", "d-faithfulness", "d-general"]
    # X: 2 C + 2 D of 4 -> halfdraw (0 + 4/2)/4; bothgood (0 + 2)/4; faithfulness has only D
    assert old["win+halfdraw"] == {
        "columns": cols,
        "rows": [["X", 0.5, 0.5, 0.5, 0.5, 0.5], ["Y", 1.0, 1.0, 1.0, 1.0, 1.0]],
    }
    assert old["win+bothgood"] == {
        "columns": cols,
        "rows": [["X", 0.5, 0.5, 0.5, 0.0, 1.0], ["Y", 1.0, 1.0, 1.0, 1.0, 1.0]],
    }


def test_nopt4_new_version_d_is_a_loss_for_both_and_inconsistent_is_a_tie():
    res = pw.score(nopt4_records(), nopt=4, refm="R")
    new = res.result["new_version"]
    assert dict(new["with_tie"]) == {
        "faithfulness;R;X": 0.0,
        "faithfulness;R;Y": 0.0,
        "faithfulness;X;R": 0.0,
        "faithfulness;Y;R": 1.0,
        "general;R;X": 0.5,
        "general;R;Y": 0.0,
        "general;X;R": 0.5,
        "general;Y;R": 1.0,
    }
    wo = dict(new["without_tie"])
    assert wo["general;X;R"] == 0 and type(wo["general;X;R"]) is int  # tot - tie == 0
    assert wo["faithfulness;X;R"] == 0.0 and type(wo["faithfulness;X;R"]) is float
    assert wo["general;Y;R"] == 1.0


def test_nopt4_lengths_count_every_row_in_first_appearance_order():
    res = pw.score(nopt4_records(), nopt=4, refm="R")
    ls = res.result["length_stats"]
    assert ls["unit"] == "chars" and ls["columns"] == ["model", "mean", "std"]
    rows = {m: (mean, std) for m, mean, std in ls["rows"]}
    assert [r[0] for r in ls["rows"]] == ["R", "X", "Y"]
    assert rows["R"] == (4.0, 0.0) and rows["X"] == (2.0, 0.0)
    assert rows["Y"][0] == 32 / 6  # four 6-char answers and two EM rows with 4 chars
    assert rows["Y"][1] == pytest.approx((8 / 9) ** 0.5, abs=1e-15)


def test_nopt4_extras():
    res = pw.score(
        nopt4_records(),
        nopt=4,
        refm="R",
        extras=["conservative_win_rate", "per_model_consistency", "unparseable_share"],
    )
    r = res.result
    assert list(r)[-3:] == ["conservative_win_rate", "per_model_consistency", "unparseable_share"]
    # X has three complete pairs: (C,C) tie, (D,D) tie, disagreement tie; Y has none
    assert r["conservative_win_rate"] == {
        "X": {"win": 0, "loss": 0, "tie": 3, "win_rate": 0.0, "win_rate_adjusted": 0.5}
    }
    assert r["per_model_consistency"] == {
        "X": {"consistent": 4, "extracted": 6, "consistency_rate": 4 / 6},
        "Y": {"consistent": 2, "extracted": 2, "consistency_rate": 1.0},
    }
    assert r["unparseable_share"] == {"unparseable": 1, "answered": 9, "share": 1 / 9}
    m = res.metrics
    assert m["unparseable_share"] == 1 / 9
    assert m["consistency_rate;X"] == 4 / 6
    assert m["conservative_win_rate_adjusted;X"] == 0.5
    assert "extras=conservative_win_rate,per_model_consistency,unparseable_share" in res.signature


def nopt3_records():
    return [
        rec("a_d-general;R;X", "Choice: C"),
        rec("a_d-general;X;R", "Choice: C"),
        rec("b_d-general;R;X", "Choice: B"),
        rec("b_d-general;X;R", "Choice: A"),
        rec("c_d-general;R;X", "Choice: A"),
        rec("c_d-general;X;R", "Choice: C"),
        rec("e_d-general;R;X", "Choice: D"),
        rec("e_d-general;X;R", "Choice: D"),
    ]


def test_nopt3_tie_is_a_full_win_in_bothgood_and_d_is_accepted():
    res = pw.score(nopt3_records(), nopt=3, refm="R")
    assert res.result["counts"]["consistent"] == 6
    six = pw.f32(0.6667)  # (2 + 4/2)/6 and (2 + 2)/6, float32-rounded
    assert res.result["old_version"]["win+halfdraw"]["rows"] == [["X", six, six, six, six]]
    assert res.result["old_version"]["win+bothgood"]["rows"] == [["X", six, six, six, six]]
    assert dict(res.result["new_version"]["with_tie"]) == {"general;R;X": 0.25, "general;X;R": 0.5}
    assert dict(res.result["new_version"]["without_tie"]) == {"general;R;X": 0.0, "general;X;R": 0.5}


def test_nopt3_letters_by_nopt_drops_d():
    res = pw.score(nopt3_records(), nopt=3, refm="R", variants=["letters_by_nopt"])
    assert res.result["counts"]["extracted"] == 6
    assert res.result["old_version"]["win+halfdraw"]["rows"] == [["X", 0.75, 0.75, 0.75, 0.75]]
    assert res.result["old_version"]["win+bothgood"]["rows"] == [["X", 1.0, 1.0, 1.0, 1.0]]
    assert "variants=letters_by_nopt" in res.signature


def test_float64_tables_variant_on_a_rounding_tie():
    recs = [rec("o0_d-general;R;X", "Choice: C")] + [rec(f"o{i}_d-general;R;X", "Choice: A") for i in range(1, 80)]
    default = pw.score(recs, nopt=3, refm="R").result["old_version"]["win+halfdraw"]["rows"][0]
    f64 = pw.score(recs, nopt=3, refm="R", variants=["float64_tables"]).result["old_version"]["win+halfdraw"]["rows"][0]
    assert default[1] == pw.f32(0.0062)
    assert f64[1] == 0.0063


def test_orphans_excluded_variant():
    recs = nopt4_records()
    res = pw.score(recs, nopt=4, refm="R", variants=["orphans_excluded"])
    c = res.result["counts"]
    assert (c["consistent"], c["consistency_rate"]) == (4, 4 / 6)
    assert res.result["old_version"]["win+halfdraw"]["rows"] == [["X", 0.5, 0.5, 0.5, 0.5, 0.5]]
    assert "general;Y;R" not in res.result["new_version"]["with_tie"]


def test_choice_lenient_variant():
    recs = [rec("a_d-general;R;X", "choice: **b**"), rec("a_d-general;X;R", "Choice:A")]
    assert pw.score(recs, nopt=2, refm="R").result["counts"]["extracted"] == 0
    res = pw.score(recs, nopt=2, refm="R", variants=["choice_lenient"])
    assert res.result["counts"]["extracted"] == 2
    assert res.result["old_version"]["win+halfdraw"]["rows"] == [["X", 1.0, 1.0, 1.0, 1.0]]


def test_macro_average_variant():
    # project a: X wins 2 of 2; project b: X loses 1 of 1 (orphan) -> micro 2/3, macro 1/2
    recs = [
        rec("a_d-general;R;X", "Choice: B"),
        rec("a_d-general;X;R", "Choice: A"),
        rec("b_d-general;R;X", "Choice: A"),
        rec("c_d-general;R;X", "Choice: A"),
        rec("c_d-general;X;R", "Choice: A"),
    ]
    micro = pw.score(recs, nopt=2, refm="R").result["new_version"]["with_tie"]
    macro = pw.score(recs, nopt=2, refm="R", variants=["macro_average"]).result["new_version"]["with_tie"]
    # c is inconsistent: 2 ties in each direction
    assert micro["general;X;R"] == (2 + 0.5 * 2) / 5
    assert macro["general;X;R"] == (1.0 + 0.0 + 0.5) / 3


def test_strict_ids_and_extra_semicolons():
    recs = [rec("a;b_d-general;R;X", "Choice: A", task="d-general")]
    recs[0]["A"], recs[0]["B"] = "R", "X"
    res = pw.score(recs, nopt=2, refm="R")
    assert any("cmp_index=a;b_d-general;R;X" in d and "more than 3" in d for d in res.diagnostics)
    with pytest.raises(ScoringError, match=r"cmp_index=a;b_d-general;R;X.*strict_ids"):
        pw.score(recs, nopt=2, refm="R", variants=["strict_ids"])


# --------------------------------------------------------------------------- crash paths


def test_malformed_cmp_index_names_it():
    with pytest.raises(ScoringError, match=r"cmp_index=broken-general: cmp_index"):
        pw.score([dict(rec("x_d-general;R;X", "Choice: A"), cmp_index="broken-general")], nopt=2, refm="R")


def test_too_many_failures_lists_cmp_indexes():
    recs = [rec(f"i{k}_d-general;R;X", pw.FAIL_MESSAGE) for k in range(5)]
    with pytest.raises(ScoringError) as err:
        pw.score(recs, nopt=2, refm="R")
    assert "5 judge calls failed" in str(err.value) and "i4_d-general;R;X" in str(err.value)
    res = pw.score(recs, nopt=2, refm="R", failure_cnt=6)
    assert res.result["counts"]["failed"] == 5


@pytest.mark.parametrize("text", ["", "NA", "nan", "NULL", None])
def test_na_judge_text_is_unparseable_with_diagnostic(text):
    recs = [rec("a_d-general;R;X", text), rec("a_d-general;X;R", "Choice: A")]
    res = pw.score(recs, nopt=2, refm="R", extras=["unparseable_share"])
    c = res.result["counts"]
    assert (c["total"], c["failed"], c["non_exact"], c["extracted"]) == (2, 0, 2, 1)
    assert any("cmp_index=a_d-general;R;X" in d and "TypeError" in d for d in res.diagnostics)
    assert res.result["unparseable_share"]["unparseable"] == 1


def test_no_consistent_rows_and_refm_absent():
    recs = [rec("a_d-general;R;X", "Choice: A"), rec("a_d-general;X;R", "Choice: A")]
    res = pw.score(recs, nopt=2, refm="R")
    assert res.result["old_version"]["win+halfdraw"]["rows"] == []
    assert any("reference model has no consistent rows" in d for d in res.diagnostics)
    assert any("no consistent rows" in d and "new version" in d for d in res.diagnostics)
    # only the inconsistent partition: both sides get ties
    assert dict(res.result["new_version"]["with_tie"]) == {"general;R;X": 0.5, "general;X;R": 0.5}


def test_all_em_gives_null_rates_and_empty_tables():
    recs = [rec("a_d-general;R;X", "EM"), rec("a_d-general;X;R", "EM")]
    res = pw.score(recs, nopt=2, refm="R")
    c = res.result["counts"]
    assert c["extraction_rate"] is None and c["consistency_rate"] is None
    assert "extraction_rate" not in res.metrics
    assert pw.log_lines(c)[2] == "Extracted 0 answers from the responses (extraction success rate nan%)"
    assert res.result["new_version"] == {"with_tie": {}, "without_tie": {}}
    assert any("no non-EM rows" in d for d in res.diagnostics)


def test_exact_match_flag_without_judge_text_counts_as_em():
    r1 = dict(rec("a_d-general;R;X", None), exact_match=True)
    r2 = dict(rec("a_d-general;X;R", None), exact_match=True)
    res = pw.score([r1, r2, rec("b_d-general;R;X", "Choice: B")], nopt=2, refm="R")
    assert res.result["counts"]["non_exact"] == 1
    assert not any("TypeError" in d for d in res.diagnostics)


def test_missing_task_counts_only_in_overall():
    r = rec("a_d-general;R;X", "Choice: B", task="")
    res = pw.score([r, rec("b_d-general;R;X", "Choice: A")], nopt=2, refm="R")
    assert res.result["old_version"]["win+halfdraw"] == {
        "columns": ["model", "Overall-lang", "EN", "d", "d-general"],
        "rows": [["X", 0.5, 0.5, 0.0, 0.0]],
    }
    assert any("no task" in d for d in res.diagnostics)


def test_substring_task_filter_quirk():
    recs = [
        rec("p_a-general;R;X", "Choice: B", task="a-general"),
        rec("p_aa-general;R;X", "Choice: A", task="aa-general"),
    ]
    rows = pw.score(recs, nopt=2, refm="R").result["old_version"]["win+halfdraw"]
    cols = rows["columns"]
    assert cols == ["model", "Overall-lang", "EN", "a", "aa", "a-general", "aa-general"]
    got = dict(zip(cols[1:], rows["rows"][0][1:]))
    assert got["a-general"] == 0.5  # 'a-general' is inside 'aa-general'
    assert got["a"] == 0.5 and got["aa"] == 0.0


def test_duplicate_cmp_index_last_prediction_wins():
    recs = [
        rec("a_d-general;R;X", "Choice: A"),
        rec("a_d-general;R;X", "Choice: B"),
        rec("a_d-general;X;R", "Choice: A"),
    ]
    res = pw.score(recs, nopt=2, refm="R")
    # pred[a;R;X] = B; partner A -> (B,A) consistent for all three rows
    assert res.result["counts"]["consistent"] == 3


def test_refm_and_judge_column_inference_and_errors():
    res = pw.score(nopt4_records(), nopt=4)
    assert res.result["refm"] == "R" and res.result["judge_column"] == "judge"
    with pytest.raises(ScoringError, match="--refm"):  # R and X are both in every row
        pw.score(nopt3_records(), nopt=3)
    two = [dict(r, other="x") for r in nopt3_records()]
    with pytest.raises(ScoringError, match="judge, other"):
        pw.score(two, nopt=3, refm="R")
    assert pw.score(two, nopt=3, refm="R", judge_column="judge").result["counts"]["extracted"] == 8
    with pytest.raises(ScoringError, match="no judge column 'nope'"):
        pw.score(two, nopt=3, refm="R", judge_column="nope")
    with pytest.raises(ScoringError, match="unknown variant"):
        pw.score(nopt3_records(), nopt=3, variants=["nope"])


# --------------------------------------------------------------------------- item rows and named steps

BINARY = ("exact_match", "api_failed", "judge_missing")


def test_score_item_rows_are_flat_with_0_1_ints():
    rows = [pw.score_item(r, judge_column="judge", nopt=4, refm="R") for r in nopt4_records()]
    assert all(list(r) == list(pw.ITEM_FIELDS) for r in rows)
    for r in rows:
        assert all(type(r[k]) is int and r[k] in (0, 1) for k in BINARY)
        for k in ("win", "tie", "loss", "parsed", "unparseable"):
            assert r[k] is None or (type(r[k]) is int and r[k] in (0, 1))
    got = [
        (r["choice"], r["win"], r["tie"], r["loss"], r["api_failed"], r["parsed"], r["unparseable"], r["exact_match"])
        for r in rows
    ]
    assert got == [
        ("C", 0, 1, 0, 0, 1, 0, 0),
        ("C", 0, 1, 0, 0, 1, 0, 0),
        ("D", 0, 1, 0, 0, 1, 0, 0),
        ("D", 0, 1, 0, 0, 1, 0, 0),
        ("A", 0, 0, 1, 0, 1, 0, 0),  # R;X, A: refm wins
        ("A", 1, 0, 0, 0, 1, 0, 0),  # X;R, A: X wins
        ("B", 1, 0, 0, 0, 1, 0, 0),
        (None, None, None, None, 1, 0, None, 0),  # API failure: not an unparseable answer
        (None, None, None, None, 0, 0, 1, 0),  # "I pick A"
        ("A", 1, 0, 0, 0, 1, 0, 0),  # 选择：A
        (None, None, None, None, 0, None, None, 1),  # EM: never judged
        (None, None, None, None, 0, None, None, 1),
    ]
    # the means of parsed and unparseable are the reported rates
    res = pw.score(nopt4_records(), nopt=4, refm="R", extras=["unparseable_share"])
    parsed = [r["parsed"] for r in rows if r["parsed"] is not None]
    unparseable = [r["unparseable"] for r in rows if r["unparseable"] is not None]
    assert sum(parsed) / len(parsed) == res.metrics["extraction_rate"]
    assert sum(unparseable) / len(unparseable) == res.metrics["unparseable_share"]
    assert rows[0]["model"] == "X" and rows[0]["metric"] == "general" and rows[0]["task"] == "d-general"
    assert (rows[6]["length_a"], rows[6]["length_b"]) == (4, 6)


def test_score_item_judge_missing_and_refm_unknown():
    row = pw.score_item(rec("a_d-general;R;X", "NA"), judge_column="judge", refm=None)
    assert row["judge_missing"] == 1 and row["unparseable"] == 1 and row["model"] is None and row["win"] is None
    assert pw.candidate_outcomes("R", "R", "A", "R") == {"model": None, "win": None, "tie": None, "loss": None}
    with pytest.raises(ScoringError, match="row 1: cmp_index"):
        pw.score_item(dict(rec("a_d-general;R;X", "x"), cmp_index=None), judge_column="judge")
    with pytest.raises(ScoringError, match="unknown variant"):
        pw.score_item(rec("a_d-general;R;X", "x"), judge_column="judge", variants=["nope"])


def test_score_on_item_gets_every_row_in_input_order():
    seen = []
    res = pw.score(nopt4_records(), nopt=4, refm="R", on_item=seen.append)
    assert [r["cmp_index"] for r in seen] == [r["cmp_index"] for r in nopt4_records()]
    acc = pw.PairwiseAccumulator(nopt=4, refm="R", judge_column="judge")
    for r in seen:
        acc.add(r)
    assert acc.finalize() == res.report


def test_named_steps_on_the_nopt4_rows():
    acc = pw.PairwiseAccumulator(nopt=4, refm="R", judge_column="judge")
    for r in nopt4_records():
        acc.add(pw.score_item(r, judge_column="judge", nopt=4, refm="R"))
    rows = acc.scoring_rows()
    assert pw.row_diagnostics(rows) == []
    assert pw.check_failures(rows, limit=5, judge_column="judge") == ["p_d-general;Y;R"]
    with pytest.raises(ScoringError, match="1 judge calls failed"):
        pw.check_failures(rows, limit=1, judge_column="judge")
    part = pw.pair_both_orders(rows)
    assert (len(part.non_em), len(part.extracted), len(part.consistent), len(part.inconsistent)) == (10, 8, 6, 2)
    assert pw.count_summary(len(rows), 1, part) == pw.score(nopt4_records(), nopt=4, refm="R").result["counts"]
    assert acc.consistency() == [True, True, True, True, False, False, True, None, None, True, None, None]
    assert pw.guess_refm((r.A, r.B) for r in rows) == "R"


def test_row_diagnostics_order_and_missing_task():
    rows = [
        pw.score_item(rec("a;b_d-general;R;X", "", task="d-general"), judge_column="judge"),
        pw.score_item(rec("c_d-general;R;X", "Choice: A", task=""), judge_column="judge"),
    ]
    acc = pw.PairwiseAccumulator(refm="R")
    for r in rows:
        acc.add(r)
    d = pw.row_diagnostics(acc.scoring_rows())
    assert len(d) == 3 and "more than 3" in d[0] and "NA token" in d[1] and d[2].startswith("1 row(s) have no task")


def test_notes_come_first_and_merge_is_exact():
    import json

    from rageval_min._contract import accumulator_from_state

    items = [pw.score_item(r, judge_column="judge", nopt=4, refm="R") for r in nopt4_records()]
    one = pw.PairwiseAccumulator(nopt=4, refm="R", extras=list(pw.EXTRAS))
    one.note("built from a table")
    for it in items:
        one.add(it)
    a = pw.PairwiseAccumulator(nopt=4, refm="R", extras=list(pw.EXTRAS))
    a.note("built from a table")
    b = pw.PairwiseAccumulator(nopt=4, refm="R", extras=list(pw.EXTRAS))
    for it in items[:5]:
        a.add(it)
    for it in items[5:]:
        b.add(it)
    merged = accumulator_from_state(json.loads(json.dumps(a.to_state())))
    merged.merge(accumulator_from_state(json.loads(json.dumps(b.to_state()))))
    assert merged.finalize() == one.finalize()
    assert one.finalize().diagnostics[0] == "built from a table"


def test_signature_composes_every_parameter():
    sig = pw.signature(
        variants=["strict_ids"],
        params=pw.signature_params(nopt=3, refm="R", lengths="tokens", extras=["unparseable_share"], judge_model="j"),
    )
    assert sig.endswith(
        "|variants=strict_ids|nopt=3|refm=R|lengths=tokens|judge_template=builtin|extras=unparseable_share|judge_model=j"
    )
    assert pw.check_variants(["strict_ids", "float64_tables", "strict_ids"]) == ("float64_tables", "strict_ids")
    with pytest.raises(ScoringError, match="unknown extra"):
        pw.check_extras(["nope"])
    with pytest.raises(ScoringError, match="nopt"):
        pw.PairwiseAccumulator(nopt=5)


def test_possible_metric_names_cover_the_report():
    rows = [
        {
            "index": f"p{i}_d-general",
            "question": "q",
            "evaluating_guidance": "g",
            "task": "d-general",
            "answer-R": "RRRR",
            "answer-X": "XX" * i,
        }
        for i in (1, 2)
    ]
    comps = pw.build_comparisons(rows, refm="R")
    names = pw.possible_metric_names(comps, refm="R", extras=list(pw.EXTRAS))
    recs = [dict(c.as_record(), judge="Choice: A") for c in comps]
    res = pw.score(recs, nopt=2, refm="R", extras=list(pw.EXTRAS))
    assert set(res.metrics) <= set(names)
    assert "win+halfdraw;X;d-general" in names and "with_tie;general;X;R" in names and "unparseable_share" in names
