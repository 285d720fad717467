"""MT-RAG metric functions against the conformance vectors (tests/data/mtrag/README.md)."""

import gzip
import json
import math
import os

import pytest

from rageval_min import mtrag
from rageval_min.errors import ScoringError

DATA = os.path.join(os.path.dirname(__file__), "data", "mtrag")


def _jsonl(name):
    path = os.path.join(DATA, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _same(got, want):
    """Exact equality including int-vs-float (0 is not 0.0)."""
    return type(got) is type(want) and got == want


EDGE = _jsonl("edge_cases.jsonl")
TEXT_CASES = [c for c in EDGE if "prediction" in c]
RB_CASES = [c for c in EDGE if "RB_agg" in c]


def test_edge_case_counts():
    assert len(EDGE) == 23 and len(TEXT_CASES) == 16 and len(RB_CASES) == 7


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c["case"] for c in TEXT_CASES])
def test_edge_text_case(case):
    pred, other = case["prediction"], case["target_or_passage"]
    assert _same(mtrag.recall(pred, other), case["Recall"])
    assert _same(mtrag.k_prec(pred, other), case["k_prec"])
    assert _same(mtrag.rouge_l_stem_false(pred, other), case["RougeL_stemFalse"])
    assert _same(mtrag.extractiveness_rouge_l(pred, other), case["Extractiveness_RougeL"])
    assert _same(mtrag.length(pred), case["Length"])


@pytest.mark.parametrize("case", RB_CASES, ids=[c["case"] for c in RB_CASES])
def test_edge_rb_agg(case):
    got = mtrag.rb_agg(case["BertscoreR0"], case["RougeL0"], case["BertKPrec"])
    assert _same(got.value, case["RB_agg"])
    assert got.note is None


def test_responses10_golden():
    golden = _jsonl("responses10_algorithmic.jsonl")
    records = _jsonl("responses-10.jsonl")  # contains bare NaN tokens; json accepts them
    assert len(golden) == len(records) == 10
    for rec, want in zip(records, golden):
        assert rec["task_id"] == want["task_id"]
        out = mtrag.score_record(rec)
        m = out.record["metrics"]
        w = want["metrics"]
        expected_keys = ["Recall", "RougeL_stemFalse"]
        if want["n_contexts"]:
            expected_keys.append("Extractiveness_RougeL")
        expected_keys.append("Length")
        assert list(m) == expected_keys  # config.yaml order, passage key absent without contexts
        for key in ("Recall", "RougeL_stemFalse", "Length"):
            assert len(m[key]) == want["n_targets"]
            assert all(_same(g, e) for g, e in zip(m[key], w[key])), key
        got_ext = m.get("Extractiveness_RougeL", [])
        assert len(got_ext) == want["n_contexts"] == len(w["Extractiveness_RougeL"])
        assert all(_same(g, e) for g, e in zip(got_ext, w["Extractiveness_RougeL"]))
        passages = [c["text"] for c in rec["contexts"]]
        kp = [mtrag.k_prec(rec["predictions"][0]["text"], p) for p in passages]
        assert all(_same(g, e) for g, e in zip(kp, w["_k_prec_unused_by_config"]))
        assert "RB_agg" not in m  # no BERTScore available
        assert out.diagnostics == []


SUBSET = _jsonl("subset_flat.trimmed.jsonl.gz")


def test_subset_size():
    assert len(SUBSET) == 477


def test_subset_rougel_all_rows():
    for row in SUBSET:
        got = mtrag.rouge_l_stem_false(row["prediction"], row["target"])
        assert _same(got, row["derived_RougeL_recomputed"]), row["task_id"]
        assert abs(got - row["RougeL"]) <= 1e-12, row["task_id"]


def _kprec_list(stored):
    # analytics files store max(BertKPrec), 0.0 when there were no passages (= absent)
    return None if stored == 0 else [stored]


def test_subset_rb_agg_from_stored_components():
    checked = 0
    for row in SUBSET:
        got = mtrag.rb_agg(row["Bert-Rec"], row["RougeL"], _kprec_list(row["Bert-KPrec"])).value
        want = row["derived_rb_agg_unconditioned_from_stored"]
        assert _same(got, want), row["task_id"]
        # rows not forced by conditioning carry the raw RB_agg (stored before truncation)
        forced = row["conditional_idk"] == 0 or row["answerability"][0] in ("UNANSWERABLE", "CONVERSATIONAL")
        if not forced:
            assert abs(got - row["rb_agg"]) <= 1e-12, row["task_id"]
            checked += 1
    assert checked == 445


def test_subset_conditioning_rule():
    """conditional_idk = correctness of the IDK decision; recover the implied idk_eval and
    check that conditioning the raw values gives the shipped conditioned ones."""
    for row in SUBSET:
        a = row["answerability"][0]
        unans = a in ("UNANSWERABLE", "CONVERSATIONAL")
        # correct decision: IDK=yes on unanswerable, not yes on answerable
        idk = (1 if row["conditional_idk"] == 1 else 0) if unans else (0 if row["conditional_idk"] == 1 else 1)
        raw = mtrag.rb_agg(row["Bert-Rec"], row["RougeL"], _kprec_list(row["Bert-KPrec"])).value
        got = mtrag.condition_idk(raw, a, idk, paper_idk=True)
        assert abs(got - row["rb_agg"]) <= 1e-12, row["task_id"]
        for key in ("rb_llm", "rl_f"):
            if unans or row["conditional_idk"] == 0:
                expect = 1 if (unans and row["conditional_idk"] == 1) else 0
                assert mtrag.condition_idk(0.123, a, idk, paper_idk=True) == expect
                assert row[key] == expect, (row["task_id"], key)


INSPECTOR = _jsonl("inspectorraget_flat.jsonl.gz")


def test_inspectorraget_rows():
    assert len(INSPECTOR) == 400
    n_recall = n_rouge = 0
    for row in INSPECTOR:
        pred, target = row["prediction"], row["target"]
        assert len(row["passages"]) == 1
        ext = mtrag.extractiveness_rouge_l(pred, row["passages"][0])
        assert _same(ext, row["derived_Extractiveness"])
        assert abs(ext - row["Extractiveness"]) <= 1e-12, row["task_id"]
        assert _same(mtrag.length(pred), row["Length"])
        rec = mtrag.recall(pred, target)
        assert _same(rec, row["derived_Recall"])
        rl = mtrag.rouge_l_stem_false(pred, target)
        assert _same(rl, row["derived_RougeL"])
        if row["recall_consistent"]:
            assert abs(rec - row["Recall"]) <= 1e-12, row["task_id"]
            n_recall += 1
        if row["rougeL_consistent"]:
            assert abs(rl - row["RougeL"]) <= 1e-12, row["task_id"]
            n_rouge += 1
    assert (n_recall, n_rouge) == (281, 277)


# ---------------------------------------------------------------------------
# RB_agg variants and crash paths
# ---------------------------------------------------------------------------


def test_rb_agg_unguarded_variant():
    assert _same(mtrag.rb_agg(0.3, 0.0, [0.4], unguarded=True).value, 0.0)
    assert _same(mtrag.rb_agg(0.3, 0.25, None, unguarded=True).value, 0.0)
    two = mtrag.rb_agg(0.3, 0.0, None, unguarded=True)  # reference: ZeroDivisionError
    assert _same(two.value, 0.0) and "ZeroDivisionError" in two.note
    normal = mtrag.rb_agg(0.3, 0.25, [0.1, 0.4], unguarded=True)
    assert normal == mtrag.rb_agg(0.3, 0.25, [0.1, 0.4])


def test_rb_agg_negative_denominator_zero():
    # R*L + R*K + L*K == 0 with non-zero components (negative R): null + note
    # R = -0.25 (bertscore -1.5), L = 0.5, K = 0.5 -> -0.125 - 0.125 + 0.25 = 0
    got = mtrag.rb_agg(-1.5, 0.5, [0.0])
    assert got.value is None and "ZeroDivisionError" in got.note


def test_rb_agg_negative_component_not_guarded():
    got = mtrag.rb_agg(-1.2, 0.5, [0.5]).value
    R, L, K = (-1.2 + 1) / 2, 0.5, 0.75
    assert got == 3 * R * L * K / ((R * L) + (R * K) + (L * K)) and got < 0


def test_rb_agg_empty_kprec_list_noted():
    got = mtrag.rb_agg(0.3, 0.25, [])
    assert _same(got.value, 0) and "empty" in got.note


def _task(**kw):
    rec = {
        "task_id": "c1::1",
        "contexts": [{"text": "The Cardinals play in Glendale."}],
        "targets": [{"text": "They play in Glendale."}],
        "predictions": [{"text": "The Cardinals play in Glendale, Arizona."}],
        "answerability": ["ANSWERABLE"],
    }
    rec.update(kw)
    return rec


def test_score_record_rb_agg_from_input_bertscore():
    rec = _task(metrics={"BertscoreR": [0.5], "BertKPrec": [0.2, None]})
    out = mtrag.score_record(rec)
    m = out.record["metrics"]
    assert list(m) == [
        "BertscoreR",
        "BertKPrec",
        "Recall",
        "RougeL_stemFalse",
        "Extractiveness_RougeL",
        "Length",
        "RB_agg",
    ]
    want = mtrag.rb_agg(0.5, m["RougeL_stemFalse"][0], [0.2, None]).value
    assert m["RB_agg"] == [want] and isinstance(want, float)
    assert out.diagnostics == []
    assert "metrics" in rec and rec["metrics"] == {"BertscoreR": [0.5], "BertKPrec": [0.2, None]}


def test_score_record_with_scorer_hook():
    calls = []

    def scorer(pred, ref):
        calls.append(ref)
        return (0.25, 0.5)

    out = mtrag.score_record(_task(), bertscore=scorer)
    m = out.record["metrics"]
    assert list(m) == list(mtrag.ALGORITHMIC_METRICS)
    assert m["BertscoreP"] == [0.25] and m["BertscoreR"] == [0.5] and m["BertKPrec"] == [0.25]
    assert calls == ["They play in Glendale.", "The Cardinals play in Glendale."]
    assert m["RB_agg"] == [mtrag.rb_agg(0.5, m["RougeL_stemFalse"][0], [0.25]).value]


def test_score_record_appends_to_existing_metrics():
    rec = _task(metrics={"Recall": [0.1], "RougeL_stemFalse": [0.2], "BertscoreR": [0.5]})
    out = mtrag.score_record(rec)
    m = out.record["metrics"]
    assert m["Recall"][0] == 0.1 and len(m["Recall"]) == 2
    # RB_agg reads the stale first entries, as the reference
    assert m["RB_agg"] == [mtrag.rb_agg(0.5, 0.2, None).value] == [0]
    assert any("appended" in d and "c1::1" in d for d in out.diagnostics)


def test_score_record_no_targets_and_no_contexts():
    # issue #18.6: the reference creates a metric's list inside its loop over targets (passages),
    # so with targets == [] no per-target key is written at all (and no RB_agg)
    out = mtrag.score_record(_task(targets=[], contexts=[], metrics={"BertscoreR": []}))
    m = out.record["metrics"]
    assert m == {"BertscoreR": []}
    assert out.diagnostics == []


def test_score_record_no_targets_keeps_passage_keys_and_order():
    def scorer(pred, ref):
        return (0.25, 0.5)

    out = mtrag.score_record(_task(targets=[]), bertscore=scorer)
    assert list(out.record["metrics"]) == ["BertKPrec", "Extractiveness_RougeL"]
    # existing per-target lists are left alone (nothing to append), without the "appended" diagnostic
    out = mtrag.score_record(_task(targets=[], contexts=[], metrics={"Recall": [0.5]}))
    assert out.record["metrics"] == {"Recall": [0.5]} and out.diagnostics == []
    rows = mtrag.algorithmic_item(_task(targets=[]))
    assert rows["Recall"] is None and rows["non_numeric"] == [] and rows["Extractiveness_RougeL"] == 1


def test_score_record_missing_contexts_diagnostic():
    rec = _task()
    del rec["contexts"]
    out = mtrag.score_record(rec)
    assert "Extractiveness_RougeL" not in out.record["metrics"]
    assert out.diagnostics == ["task_id=c1::1: 'contexts' missing, treated as []"]


def test_score_record_bertscore_r_fallback_to_recall():
    rec = _task(metrics={"BertscoreR": [None], "BertKPrec": [0.6]})
    out = mtrag.score_record(rec)
    m = out.record["metrics"]
    r0 = m["Recall"][0]
    R, L, K = r0, m["RougeL_stemFalse"][0], (0.6 + 1) / 2
    assert m["RB_agg"] == [3 * R * L * K / ((R * L) + (R * K) + (L * K))]
    assert any("bare except" in d for d in out.diagnostics)


@pytest.mark.parametrize(
    "predictions,field",
    [
        (None, "predictions"),
        ([], "predictions"),
        ([{"x": 1}], "predictions[0].text"),
        ([{"text": 3}], "predictions[0].text"),
    ],
)
def test_score_record_bad_predictions(predictions, field):
    rec = _task(predictions=predictions)
    if predictions is None:
        del rec["predictions"]
    with pytest.raises(ScoringError) as err:
        mtrag.score_record(rec)
    assert "c1::1" in str(err.value) and field in str(err.value)


def test_score_record_bad_targets():
    with pytest.raises(ScoringError) as err:
        mtrag.score_record(_task(targets=[{"text": None}]))
    assert "targets[0].text" in str(err.value)
    with pytest.raises(ScoringError):
        mtrag.score_record(_task(targets="nope"))


def test_unknown_variant():
    with pytest.raises(ScoringError):
        mtrag.score_record(_task(), variants=["nope"])


def test_task_id_int_becomes_str():
    out = mtrag.score_record(_task(task_id=7))
    assert out.record["task_id"] == "7"


# ---------------------------------------------------------------------------
# Parsers and conditioning
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,want",
    [
        ("yes", 1),
        ("Yes, the response...", 1),
        ("  NO.", 0),
        ("no", 0),
        ("partial", 0.5),
        ("Partially", 0.5),
        ("maybe", 0.5),
        ("yesno", 0.5),
        ("\n\tyes", 1),
        ('"yes"', "unknown"),
        ("*yes*", "unknown"),
        ("1", "unknown"),
        ("[yes]", "unknown"),
        ("", "unknown"),
        ("   ", "unknown"),
        (None, None),
        (5, None),
        ("éyes", "unknown"),
    ],
)
def test_first_token_idk(text, want):
    assert _same(mtrag.first_token_idk(text), want)


@pytest.mark.parametrize(
    "text,want",
    [
        ("Rating: [[7]]", 0.7),
        ("Rating: 7", 0.7),
        ("[[10]]", 1.0),
        ("Rating: [[11]]", 0.5),
        ("Rating: [[0]]", 0.5),
        ("nothing here", 0.5),
        ("Rating: [[8.5]]", 0.85),
        ("Overall Rating: 6.5", 0.65),
        ("Score: 9/10", 0.9),
        ("For example: Rating: [[2]]\nRating: [[9]]", 0.9),
        ("FOR EXAMPLE: [[3]]", 0.5),
        ("Rating: [[8]] but 6 out of 10", 0.6),  # last matching pattern wins
        ("[Rating]\n4", 0.4),  # pattern 9 only
        ("[Rating]\n4 then Rating: [[9]]", 0.9),  # pattern 11 matches after 9
        ("[3] Rating: [[9]]", 0.9),  # pattern 5 (float form) comes later than 4
        ("Rating: [[-3]]", 0.5),
    ],
)
def test_extract_rating(text, want):
    assert mtrag.extract_rating(text) == want


def test_extract_rating_not_string():
    with pytest.raises(ScoringError):
        mtrag.extract_rating(None)


def test_median_rating():
    assert mtrag.median_rating([0.8, 0.9]) == 0.8500000000000001
    assert mtrag.median_rating([0.3, 0.9, 0.5]) == 0.5
    with pytest.raises(ScoringError):
        mtrag.median_rating([])


@pytest.mark.parametrize(
    "text,want",
    [
        ('{"decision": "yes", "explanation": "..."}', 1),
        ('Sure: {"decision": "no"} trailing', 0),
        ('```json\n{"decision": "yes", "explanation": "a \\q b"}\n```', 1),
        # issue #18.3 / spec 11: the decision is lower-cased
        ('{"decision": "Yes"}', 1),
        ('{"decision": "NO"}', 0),
        ('```json\n{"decision": "YES"}\n```', 1),
        # a ```json anywhere means only the fenced pattern is tried: no closing fence, no match, no brace fallback
        ('```json\n{"decision": "yes"}', 0.5),
        ('see ```json below {"decision": "yes"}', 0.5),
        # group 1 of \{\s*(.*?)\s*\} is '{"decision": "yes"'; "{" is not prepended again, "}" is appended
        ('{{"decision": "yes"}}', 1),
        ('{ "decision" : "no" }', 0),
        ('{"decision": 1}', 0.5),  # not a string: .lower() raises
        ('```json\n["decision", "yes"]\n```', 0.5),  # "{" prepended: invalid JSON
        ('{"decision": "maybe"}', 0.5),
        ('{"decision": "yes", "explanation": {"nested": 1}}', 0.5),  # first } ends the object
        ("no braces", 0.5),
        (None, 0.5),
        ('{"explanation": "x"}', 0.5),
    ],
)
def test_parse_underspecified(text, want):
    assert _same(mtrag.parse_underspecified(text), want)


@pytest.mark.parametrize(
    "a,idk,want",
    [
        ("UNANSWERABLE", 1, 1),
        ("CONVERSATIONAL", 1, 1),
        ("UNANSWERABLE", 0, 0),
        ("UNANSWERABLE", 0.5, 0),
        ("UNANSWERABLE", "unknown", 0.7),
        ("UNANSWERABLE", None, 0.7),
        ("ANSWERABLE", 1, 0),
        ("PARTIAL", 1, 0),
        (None, 1, 0),
        ("ANSWERABLE", 0, 0.7),
        ("PARTIAL", 0.5, 0.7),
        ("ANSWERABLE", "unknown", 0.7),
        ("UNANSWERABLE", 1.0, 1),
    ],
)
def test_condition_idk_rules(a, idk, want):
    assert _same(mtrag.condition_idk(0.7, a, idk), want)
    assert _same(mtrag.condition_idk(0.7, a, idk, paper_idk=True), want)


def test_condition_idk_underspecified():
    assert mtrag.condition_idk(0.7, "UNDERSPECIFIED", 1, underspecified=1) == 1
    assert mtrag.condition_idk(0.7, "UNDERSPECIFIED", 1, underspecified=0.5) == 0
    assert mtrag.condition_idk(0.7, "UNDERSPECIFIED", 0, underspecified=0) == 0
    # paper rules: UNDERSPECIFIED is just another answerable label
    assert mtrag.condition_idk(0.7, "UNDERSPECIFIED", 0, paper_idk=True) == 0.7
    assert mtrag.condition_idk(0.7, "UNDERSPECIFIED", 1, paper_idk=True) == 0


def test_condition_record_keys_and_errors():
    rec = {
        "task_id": "t",
        "answerability": ["UNANSWERABLE"],
        "metrics": {"RB_agg": [0.3], "RL_F": [None], "idk_eval": [1]},
    }
    out = mtrag.condition_record(rec)
    m = out.record["metrics"]
    assert m["RL_F_idk_underspecified"] == [1] and m["RB_agg_idk_underspecified"] == [1]
    assert "RB_llm_idk_underspecified" not in m
    assert out.diagnostics == ["task_id=t: metric RB_llm missing; not conditioned"]
    paper = mtrag.condition_record(rec, variants=["paper_idk"]).record["metrics"]
    assert paper["RB_agg_idk"] == [1] and "RB_agg_idk_underspecified" not in paper
    with pytest.raises(ScoringError) as err:
        mtrag.condition_record({"task_id": "t", "metrics": {"RB_agg": [0.3]}})
    assert "metrics.idk_eval" in str(err.value)
    with pytest.raises(ScoringError) as err:
        mtrag.condition_record({"task_id": "u", "answerability": ["UNDERSPECIFIED"], "metrics": {"idk_eval": [0]}})
    assert "underspecified_eval" in str(err.value)


def test_answerability_alias():
    rec = {"Answerability": ["UNANSWERABLE"]}
    assert mtrag.answerability_of(rec) is None
    assert mtrag.answerability_of(rec, alias=True) == "UNANSWERABLE"
    assert mtrag.answerability_of({"answerability": []}) is None
    rec = {"task_id": "t", "Answerability": ["UNANSWERABLE"], "metrics": {"RB_agg": [0.3], "idk_eval": [1]}}
    assert mtrag.condition_record(rec, metrics=["RB_agg"]).record["metrics"]["RB_agg_idk_underspecified"] == [0]
    got = mtrag.condition_record(rec, metrics=["RB_agg"], variants=["answerability_alias"])
    assert got.record["metrics"]["RB_agg_idk_underspecified"] == [1]


def test_round_floats_like_pandas():
    assert mtrag.round_floats([0.9999997615814201, 1e-12, 0.8500000000000001, 3, True]) == [
        0.9999997616,
        0.0,
        0.85,
        3,
        True,
    ]
    assert mtrag.round_floats({"a": float("nan")}) == {"a": None}


def test_summary_table6_from_flat_rows():
    acc = mtrag.SummaryAccumulator()
    for row in SUBSET:
        group = mtrag.answerability_group(row["answerability"][0])
        acc.add(
            "Reference", row["model_id"], group, {"RL_F": row["rl_f"], "RB_llm": row["rb_llm"], "RB_agg": row["rb_agg"]}
        )
    res = acc.result()["Reference"]
    table6 = {
        "reference": (0.86, 0.97, 0.87),
        "gpt-4o": (0.80, 0.80, 0.46),
        "llama-3.1-405b-instruct": (0.78, 0.78, 0.49),
    }
    for model, want in table6.items():
        ans = res[model]["Answerable"]
        assert ans["RL_F"].n == 135
        got = tuple(round(ans[k].mean, 2) for k in ("RL_F", "RB_llm", "RB_agg"))
        assert got == want, model
    # all excludes Conversational (2 tasks): 157 rows per model
    assert res["reference"]["all"]["RB_agg"].n == 157
    assert res["reference"]["Conversational"]["RB_agg"].n == 2


def test_unicode_tokens_variant_changes_rougel():
    rec = _task(predictions=[{"text": "café naïve"}], targets=[{"text": "café naïve"}], contexts=[])
    ref = mtrag.score_record(rec).record["metrics"]["RougeL_stemFalse"]
    uni = mtrag.score_record(rec, variants=["unicode_tokens"]).record["metrics"]["RougeL_stemFalse"]
    assert ref == [1.0] and uni == [1.0]
    rec = _task(predictions=[{"text": "北京 首都"}], targets=[{"text": "北京"}], contexts=[])
    assert mtrag.score_record(rec).record["metrics"]["RougeL_stemFalse"] == [0]
    uni = mtrag.score_record(rec, variants=["unicode_tokens"]).record["metrics"]["RougeL_stemFalse"][0]
    assert isinstance(uni, float) and uni > 0


def test_signature_names_variants():
    sig = mtrag.signature(variants=["paper_idk"], params=[("x", 1)])
    assert "family=mtrag" in sig and "ref=IBM/mt-rag-benchmark@cc5b1d4" in sig and "variants=paper_idk" in sig


def test_nan_free_means():
    acc = mtrag.SummaryAccumulator()
    acc.add("s", "m", "Answerable", {"RL_F": None})
    acc.add("s", "m", "Answerable", {"RL_F": 0.5})
    acc.add("s", "m", "Answerable", {"RL_F": float("nan")})
    g = acc.result()["s"]["m"]["Answerable"]["RL_F"]
    assert g == mtrag.GroupMean(1, 0.5, 2)
    assert not math.isnan(g.mean)


@pytest.mark.parametrize(
    "metrics,field",
    [
        ({"BertscoreR": [0.5], "BertKPrec": "x"}, "metrics.BertKPrec"),
        ({"BertscoreR": [0.5], "BertKPrec": [0.1, "x"]}, "metrics.BertKPrec"),
        ({"BertscoreR": [0.5], "RougeL_stemFalse": ["x"]}, "metrics.RougeL_stemFalse[0]"),
        ({"BertscoreR": ["x"], "Recall": [None]}, "metrics.Recall[0]"),
    ],
)
def test_score_record_bad_stale_metrics(metrics, field):
    with pytest.raises(ScoringError) as err:
        mtrag.score_record(_task(metrics=metrics))
    assert "c1::1" in str(err.value) and field in str(err.value)


# ---------------------------------------------------------------------------
# Issue #18.2: int versus float is decided by the column (the file), not the record
# ---------------------------------------------------------------------------


def test_column_types_rules():
    t = mtrag.ColumnTypes()
    for v in (1, 0, 1):
        t.add("ints", v)
    for v in (1, 0.5):
        t.add("half", v)
    for v in (1, None):
        t.add("missing", v)
    for v in (1, float("nan")):
        t.add("nan", v)
    for v in (1, 0.5, "unknown", None):
        t.add("object", v)
    for v in (True, 1):
        t.add("bools", v)
    assert [t.dtype(c) for c in ("ints", "half", "missing", "nan", "object", "bools", "never")] == [
        "int",
        "float",
        "float",
        "float",
        "object",
        "object",
        "int",
    ]
    assert _same(t.cast("ints", 1), 1) and _same(t.cast("half", 1), 1.0) and _same(t.cast("missing", 0), 0.0)
    assert _same(t.cast("object", 1), 1) and t.cast("half", None) is None and t.cast("bools", True) is True
    # the summary merges exactly (a union of flags) and survives JSON
    a, b = mtrag.ColumnTypes(), mtrag.ColumnTypes()
    a.add("c", 1)
    b.add("c", 0.5)
    a.merge(mtrag.ColumnTypes.from_data(json.loads(json.dumps(b.data()))))
    assert a.dtype("c") == "float"


def _write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return str(path)


def _cond(task_id, a, idk, **metrics):
    m = dict(metrics)
    m["idk_eval"] = [idk]
    return {"task_id": task_id, "answerability": [a], "metrics": m}


def test_condition_column_typing_needs_the_whole_file(tmp_path):
    # RB_agg_idk: 1, 0 -> all ints: stays integer; RB_llm_idk: 1, 0 and a float in the LAST record ->
    # every value of the column is a float, the first record's included; RL_F_idk: 1 and a null -> floats
    records = [
        _cond("a", "UNANSWERABLE", 1, RB_agg=[0.25], RB_llm=[0.5], RL_F=[0.5]),
        _cond("b", "PARTIAL", 1, RB_agg=[0.25], RB_llm=[0.5], RL_F=[0.5]),
        _cond("c", "ANSWERABLE", 0, RB_agg=[0], RB_llm=[0.7], RL_F=[None]),
        _cond("d", "ANSWERABLE", 0, RB_agg=[0], RB_llm=[0.2]),
    ]
    src = _write_jsonl(tmp_path / "in.jsonl", records)
    out = str(tmp_path / "out.jsonl")
    rows = []
    report = mtrag.condition_file(src, out, on_item=rows.append)
    text = open(out, encoding="utf-8").read().splitlines()
    assert '"RB_agg_idk_underspecified":[1]' in text[0] and '"RB_agg_idk_underspecified":[0]' in text[1]
    assert '"RB_llm_idk_underspecified":[1.0]' in text[0] and '"RB_llm_idk_underspecified":[0.0]' in text[1]
    assert '"RL_F_idk_underspecified":[1.0]' in text[0] and '"RL_F_idk_underspecified":[0.0]' in text[1]
    assert '"RL_F_idk_underspecified":[null]' in text[2]
    assert '"RL_F_idk_underspecified"' not in text[3]  # RL_F missing: not conditioned (diagnostic)
    assert any("metric RL_F missing" in d for d in report.diagnostics)
    # the item rows are the per-record values (before the file's column typing)
    assert [r["RB_llm_idk_underspecified"] for r in rows] == [1, 0, 0.7, 0.2]
    assert _same(rows[0]["RB_llm_idk_underspecified"], 1)
    assert rows[2]["RL_F_idk_underspecified"] is None and rows[2]["non_numeric"] == ["RL_F_idk_underspecified"]
    assert rows[3]["RL_F_idk_underspecified"] is None and rows[3]["non_numeric"] == []
    assert report.result["counts"] == {
        "RL_F_idk_underspecified": 2,
        "RB_llm_idk_underspecified": 4,
        "RB_agg_idk_underspecified": 4,
    }
    # a string anywhere makes an object column: each value keeps its own type
    records[3]["metrics"]["RB_agg"] = ["n/a"]
    _write_jsonl(tmp_path / "in.jsonl", records)
    mtrag.condition_file(src, out)
    text = open(out, encoding="utf-8").read().splitlines()
    assert '"RB_agg_idk_underspecified":[1]' in text[0] and '"RB_agg_idk_underspecified":["n\\/a"]' in text[3]
    # --full-precision (digits=None): plain json.dumps, each value with its own type
    mtrag.condition_file(src, out, digits=None)
    first = json.loads(open(out, encoding="utf-8").readline())
    assert _same(first["metrics"]["RB_llm_idk_underspecified"][0], 1)


def test_condition_bad_record_writes_nothing(tmp_path):
    src = _write_jsonl(tmp_path / "in.jsonl", [_cond("a", "ANSWERABLE", 0, RB_agg=[0.5]), {"task_id": "b"}])
    out = tmp_path / "out.jsonl"
    with pytest.raises(ScoringError) as err:
        mtrag.condition_file(src, str(out))
    assert "task_id=b" in str(err.value) and not out.exists()


def test_exact_mean_merges_exactly():
    import random

    rng = random.Random(7)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-8, 8) for _ in range(500)]
    whole = mtrag.ExactMean()
    for v in values:
        whole.add(v)
    for cut in (1, 17, 250, 499):
        a, b = mtrag.ExactMean(), mtrag.ExactMean()
        for v in values[:cut]:
            a.add(v)
        for v in values[cut:]:
            b.add(v)
        a.merge(mtrag.ExactMean.from_data(json.loads(json.dumps(b.data()))))
        assert a.mean == whole.mean == math.fsum(values) / len(values)


def test_judge_steps_run_in_pipeline_order():
    from rageval_min.judges import FunctionJudge, JudgeRunner
    from rageval_min.mtrag import judge as jm

    asked = []

    def answer(prompt):
        if "ambiguous or underspecified" in prompt:
            asked.append("underspecified")
            return '{"decision": "Yes"}'
        if prompt.rstrip().endswith("[Output]"):
            asked.append("idk")
            return "no"
        asked.append("rb_llm")
        return "Rating: [[7]]"

    rec = {
        "task_id": "t",
        "input": [{"speaker": "user", "text": "q?"}],
        "predictions": [{"text": "an answer"}],
        "targets": [{"text": "the answer"}],
        "contexts": [],
    }
    runner = JudgeRunner(FunctionJudge(answer, identity="f"))
    jm.judge_records([rec], runner, steps=["rb_llm", "idk", "underspecified"])
    assert asked == ["underspecified", "idk", "rb_llm"]
    assert list(rec["metrics"]) == ["underspecified_eval", "idk_eval", "RB_llm"]
    assert rec["metrics"]["underspecified_eval"] == [1]  # "Yes" lower-cased


def test_summarize_item_matches_the_file_rows(tmp_path):
    path = os.path.join(os.path.dirname(DATA), "..", "..", "gold_samples", "mtrag", "expected_conditioned.jsonl")
    path = os.path.normpath(path)
    rows = []
    mtrag.summarize_files([path], settings=["demo"], on_item=rows.append)
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    assert rows == [mtrag.summarize_item(r, setting="demo", input=path) for r in records]
    with pytest.raises(ScoringError, match="reserved"):
        mtrag.summarize_row("t", {"group": 1}, source=0, setting="s", input="-", format="jsonl", model="m", group="g")
