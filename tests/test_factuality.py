"""Conformance and crash-path tests of rageval_min.factuality (pure functions).

Every expected value comes from the reference vectors in tests/data/factuality/
(see its README); nothing here needs numpy or scipy.
"""

import hashlib
import json
import math
import os
import re
import sys

import pytest
from conftest import need

from rageval_min import factuality as F
from rageval_min.errors import ScoringError

DATA = os.path.join(os.path.dirname(__file__), "data", "factuality")


def _rows(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _dec(obj):
    if obj.get("type") == "int":
        return obj["value"]
    h = obj["hex"]
    return float(h) if h in ("nan", "inf", "-inf") else float.fromhex(h)


def _same(a, b):
    """Exact: same type (int vs float), same bits, nan == nan."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(b):
            return math.isnan(a)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def _rel_close(a, b, tol=1e-12):
    if math.isnan(b):
        return math.isnan(a)
    if a == b:
        return True
    return abs(a - b) <= tol * max(abs(b), 0.0) or abs(a - b) <= tol * 1e-300


def test_data_sha256_matches_readme():
    with open(os.path.join(DATA, "README.md"), encoding="utf-8") as fh:
        listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", fh.read(), re.M)
    assert len(listed) == 14
    for digest, name in listed:
        with open(os.path.join(DATA, name), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest, name


# --- A. F1@K ---------------------------------------------------------------

F1_ROWS = _rows("f1_at_k.jsonl")


def test_f1_vectors_count():
    assert len(F1_ROWS) == 1457
    assert sum("error" in r for r in F1_ROWS) == 4


@pytest.mark.parametrize("row", F1_ROWS, ids=lambda r: f"{r['supported']}-{r['not_supported']}-{r['max_claims']}")
def test_calculate_metrics_vector(row):
    args = [row["supported"], row["not_supported"]]
    if row["max_claims"] is not None:
        args.append(row["max_claims"])
    if "error" in row:
        with pytest.raises(ScoringError) as info:
            F.calculate_metrics(*args)
        assert isinstance(info.value, ValueError)
        assert row["error"] == "ValueError: " + str(info.value)
    else:
        assert _same(F.calculate_metrics(*args), _dec(row["result"]))


def test_f1_upstream_unit_cases():
    assert F.calculate_metrics(10, 8, 100) == 0.16949152542372883
    assert F.calculate_metrics(70, 6, 100) == 0.7954545454545453
    assert F.calculate_metrics(2.5, 1.5, 64) == 0.07352941176470588
    assert type(F.calculate_metrics(0.0, 3)) is int
    with pytest.raises(ScoringError, match="max_claims must be positive"):
        F.calculate_metrics(0, -1, 0)  # K check comes first
    with pytest.raises(ScoringError, match="negative"):
        F.calculate_metrics(0, -1)  # before the S == 0 shortcut


def test_f1_at_k_parts():
    r = F.f1_at_k(200, 10, max_claims=64)
    assert type(r.recall_at_k) is int and r.recall_at_k == 1
    assert r.f1_at_k == F.calculate_metrics(200, 10, 64)
    assert r.precision == 200 / 210
    z = F.f1_at_k(0, 0)
    assert z.precision is None and z.f1_at_k == 0 and type(z.f1_at_k) is int
    assert F.f1_at_k(0, 4).precision == 0.0


# --- round_to_sigfigs ---------------------------------------------------------

RS_ROWS = _rows("round_to_sigfigs.jsonl")


def test_round_to_sigfigs_vectors():
    assert len(RS_ROWS) == 288
    overflow_rows = 0
    for row in RS_ROWS:
        num = _dec(row["num"])
        diags = []
        got = F.round_to_sigfigs(num, row["num_sigfigs"], diagnostics=diags)
        if "error" in row:
            overflow_rows += 1
            assert row["error"].startswith("OverflowError")
            assert _same(got, num) and len(diags) == 1  # crash path: unchanged + diagnostic
        else:
            assert _same(got, _dec(row["result"])), row
            assert diags == []
    assert overflow_rows > 0


# --- B. labels ---------------------------------------------------------------


def test_count_labels_order_and_skips():
    diags = []
    got = F.count_labels(
        [
            {"annotation": "NOT SUPPORTED"},
            "x",
            None,
            {"annotation": None},
            {"annotation": "Irrelevant"},
            {"annotation": "weird"},
            {"annotation": "weird"},
        ],
        diagnostics=diags,
    )
    assert list(got.items()) == [("Supported", 0), ("Irrelevant", 1), ("Not Supported", 1), ("weird", 2)]
    assert len(diags) == 2
    assert list(F.count_labels([])) == ["Supported", "Irrelevant", "Not Supported"]
    diags = []
    assert F.count_labels([{"annotation": 7}], diagnostics=diags)["Supported"] == 0
    assert "not a string" in diags[0]


# --- D. numpy mean / std ---------------------------------------------------------


def test_mean_std_vectors_exact():
    rows = _rows("mean_std.jsonl")
    assert len(rows) == 25
    for row in rows:
        assert _same(F.np_mean(row["values"]), _dec(row["np_mean"])), row["name"]
        assert _same(F.np_std(row["values"]), _dec(row["np_std"])), row["name"]


def test_mean_std_not_fsum_or_builtin_sum():
    # the emulation must differ from the naive alternatives on some vector
    rows = _rows("mean_std.jsonl")
    differs = [r for r in rows if math.fsum(r["values"]) / len(r["values"]) != F.np_mean(r["values"])]
    assert differs


def test_np_mean_empty_and_int_buffers():
    assert math.isnan(F.np_mean([])) and math.isnan(F.np_std([]))
    ints = list(range(20000))
    # int64 input is summed in 8192-element buffers; exact here either way
    assert F.np_sum(ints) == float(sum(ints))
    assert F.np_mean([True, False, True, True]) == 0.75


# --- C. run_eval ------------------------------------------------------------------


def _fixture():
    with open(os.path.join(DATA, "run_eval_fixture.input.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("k", [64, 178])
def test_run_eval_byte_for_byte(k):
    with open(os.path.join(DATA, f"run_eval_fixture.expected.max_claim_{k}.json"), encoding="utf-8") as fh:
        expected = json.load(fh)
    inp = _fixture()
    before = json.dumps(inp)
    res = F.run_eval_aggregate(inp, max_claim=k)
    assert json.dumps(inp) == before  # input untouched
    assert F.dumps_reference(res.result) == expected["output_json_text"]
    assert list(res.added.items()) == list(expected["added_top_level"].items())
    got = res.per_prompt_f1["side2"]
    assert len(got) == len(expected["per_prompt_f1"])
    for a, b in zip(got, expected["per_prompt_f1"]):
        assert a is None if b is None else _same(a, b)
    assert res.rated_sides == ["side2"] and res.f1_key == f"f1_{k}"
    assert any("prompt 6" in d for d in res.diagnostics)


def test_run_eval_default_flag_key_and_variant():
    res = F.run_eval_aggregate(_fixture())
    assert res.f1_key == "f1_-1" and res.max_claims == 100
    assert "side2_avg_f1_-1" in res.added
    first = res.result["per_prompt_data"][0]["side2_posthoc_eval_data"]
    assert first["f1_-1"] == F.calculate_metrics(70, 6)
    res0 = F.run_eval_aggregate(_fixture(), max_claim=0)
    assert res0.f1_key == "f1_0" and res0.max_claims == 100
    eff = F.run_eval_aggregate(_fixture(), variants=["f1_key_effective_k"])
    assert eff.f1_key == "f1_100"
    assert eff.added["side2_avg_f1_100"] == res.added["side2_avg_f1_-1"]


def test_run_eval_first_prompt_failed_skips_side():
    inp = _fixture()
    prompts = inp["per_prompt_data"]
    prompts.insert(0, prompts.pop())  # the failed prompt first
    res = F.run_eval_aggregate(inp, max_claim=64)
    assert res.added == {}
    # spec section 12: the reference leaves a side that prompt 0 lacks untouched (no f1 key anywhere)
    assert any("leaves the whole side untouched" in d for d in res.diagnostics)
    assert "f1_64" not in res.result["per_prompt_data"][1]["side2_posthoc_eval_data"]
    assert res.result == inp
    # variant sides_by_flags: the earlier behaviour (the per-prompt F1 keys are still written)
    old = F.run_eval_aggregate(inp, max_claim=64, variants=["sides_by_flags"])
    assert old.added == {}
    assert any("skips the whole side" in d for d in old.diagnostics)
    assert "f1_64" in old.result["per_prompt_data"][1]["side2_posthoc_eval_data"]
    allr = F.run_eval_aggregate(inp, max_claim=64, variants=["aggregate_all_rated"])
    ref = F.run_eval_aggregate(_fixture(), max_claim=64)
    assert allr.added == ref.added


def test_run_eval_sides_and_errors():
    inp = _fixture()
    flags = ["sides_by_flags"]
    assert F.run_eval_aggregate(inp, eval_side2=False, variants=flags).added == {}
    # spec section 12: print_results ignores the flags and the side names
    ref = F.run_eval_aggregate(_fixture(), max_claim=64)
    assert F.run_eval_aggregate(inp, max_claim=64, eval_side2=False).added == ref.added
    inp["side_2"] = "none"
    assert F.run_eval_aggregate(inp, variants=flags).rated_sides == []
    assert F.run_eval_aggregate(inp).rated_sides == ["side2"]
    # a side named placeholder whose ratings are in the file is aggregated too
    inp = _fixture()
    for prompt in inp["per_prompt_data"]:
        if "side2_posthoc_eval_data" in prompt:
            prompt["side1_posthoc_eval_data"] = dict(prompt["side2_posthoc_eval_data"])
    both = F.run_eval_aggregate(inp, max_claim=64)
    assert both.rated_sides == ["side1", "side2"]
    assert both.added["side1_avg_f1_64"] == both.added["side2_avg_f1_64"] == ref.added["side2_avg_f1_64"]
    assert F.run_eval_aggregate(inp, max_claim=64, variants=flags).rated_sides == ["side2"]
    inp = _fixture()
    del inp["per_prompt_data"][3]["side2_posthoc_eval_data"]["Irrelevant"]
    with pytest.raises(ScoringError, match="prompt 3.*Irrelevant"):
        F.run_eval_aggregate(inp, max_claim=64)
    inp = _fixture()
    inp["per_prompt_data"][2]["side2_posthoc_eval_data"]["Not Supported"] = -1
    with pytest.raises(ScoringError, match="prompt 2.*negative"):
        F.run_eval_aggregate(inp, max_claim=64)
    inp = _fixture()
    del inp["side_1"]
    with pytest.raises(ScoringError, match="side_1"):
        F.run_eval_aggregate(inp)
    with pytest.raises(ScoringError, match="unknown variant"):
        F.run_eval_aggregate(_fixture(), variants=["nope"])


def test_run_eval_nan_written_as_python_does():
    inp = {
        "side_1": "placeholder",
        "side_2": "x",
        "per_prompt_data": [
            {"side2_posthoc_eval_data": {"Supported": 1, "Irrelevant": 0, "Not Supported": 0, "score": float("nan")}}
        ],
    }
    text = F.dumps_reference(F.run_eval_aggregate(inp).result)
    assert '"side2_avg_score": NaN' in text


# --- H. FActScore --------------------------------------------------------------


def test_length_penalty_vectors_math_exp():
    rows = _rows("factscore_length_penalty.jsonl")
    assert len(rows) == 65
    for row in rows:
        assert F.length_penalty(row["num_facts"], row["gamma"]) == float.fromhex(row["math_exp"]["hex"])
        # numpy's AVX-512 exp differs by at most 1 ulp
        np_exp = float.fromhex(row["np_exp"]["hex"])
        assert abs(F.length_penalty(row["num_facts"], row["gamma"]) - np_exp) <= math.ulp(np_exp)


def test_factscore_aggregate_vectors():
    rows = _rows("factscore_aggregate.jsonl")
    assert len(rows) == 15
    for row in rows:
        res = F.factscore(row["decisions"], gamma=row["gamma"])
        for key in ("score", "respond_ratio", "num_facts_per_response"):
            assert getattr(res, key) == float.fromhex(row[key]["hex"]), (row["name"], key)
        if "init_score" in row:
            assert res.init_score == float.fromhex(row["init_score"]["hex"])
        else:
            assert res.init_score is None and not row["gamma"]
        expected = [float.fromhex(x["hex"]) for x in row["per_response_score"]]
        assert len(expected) == len(res.per_response_score)
        for a, b in zip(res.per_response_score, expected):
            # vectors used numpy's AVX-512 exp (1 ulp off); the product then is <= 2 ulp off
            assert abs(a - b) <= 2 * math.ulp(b)


def _labeled(name):
    return _rows(name + ".jsonl")


def test_labeled_decisions_match_aggregate_vectors():
    rows = _rows("factscore_aggregate.jsonl")
    for model, row in zip(("ChatGPT", "InstructGPT", "PerplexityAI"), rows[0:12:4]):
        assert row["name"].startswith(model)
        decisions = [F.labeled_decisions(r) for r in _labeled(model)]
        assert decisions == row["decisions"]


def test_human_factscore_chatgpt_58_3():
    per_model = {}
    for model in ("ChatGPT", "InstructGPT", "PerplexityAI"):
        decisions = [F.labeled_decisions(r) for r in _labeled(model)]
        res = F.factscore(decisions, gamma=0)
        per_model[model] = res
    chat = per_model["ChatGPT"]
    assert chat.num_responding == 157
    assert "%.1f" % (100 * chat.score) == "58.3"
    assert round(100 * chat.score, 2) == 58.30
    assert round(100 * per_model["InstructGPT"].score, 2) == 42.81
    assert round(100 * per_model["PerplexityAI"].score, 2) == 80.38
    excl = F.factscore([F.labeled_decisions(r, exclude_ir=True) for r in _labeled("ChatGPT")], gamma=0)
    assert excl.score > chat.score


def test_factscore_simple_labels_format_and_crash_paths():
    recs = [{"labels": ["S", "NS", "IR", "S"]}, {"labels": None}, {"labels": [True, False]}]
    decisions = [F.labeled_decisions(r) for r in recs]
    assert decisions == [[True, False, False, True], None, [True, False]]
    assert F.labeled_decisions(recs[0], exclude_ir=True) == [True, False, True]
    with pytest.raises(ScoringError, match="labels\\[1\\]"):
        F.labeled_decisions({"labels": ["S", "X"]}, where="in.jsonl:3")
    with pytest.raises(ScoringError, match="expected 'labels'"):
        F.labeled_decisions({"foo": 1})
    # explicitly empty list with gamma: treated as abstained (reference ZeroDivisionError)
    res = F.factscore([[True], []], gamma=10)
    assert res.num_responding == 1 and res.respond_ratio == 0.5 and len(res.diagnostics) == 1
    # without gamma the reference gives a nan score (kept)
    res0 = F.factscore([[True], []], gamma=0)
    assert math.isnan(res0.score) and res0.respond_ratio == 1.0
    allnone = F.factscore([None, None])
    assert math.isnan(allnone.score) and allnone.respond_ratio == 0.0


def test_human_per_response_vectors():
    rows = _rows("factscore_human_per_response.jsonl")
    assert len(rows) == 496
    by_model = {m: _labeled(m) for m in ("ChatGPT", "InstructGPT", "PerplexityAI")}
    for row in rows:
        rec = by_model[row["model_name"]][row["line"]]
        counts = F.human_label_counts(rec)
        assert counts == {"S": row["S"], "IR": row["IR"], "NS": row["NS"]}
        assert rec["topic"] == row["topic"]
        assert sum(len(s.get("model-atomic-facts") or []) for s in rec["annotations"]) == row["model_atomic_facts"]
        mets = F.study_metrics_human(counts)
        assert mets["num_claims"] == row["num_claims"]
        assert _same(mets["f1_100"], _dec(row["f1_100_default"]))
        for k in (1, 48, 64, 84, 178):
            assert _same(F.calculate_metrics(row["S"], row["NS"], k), _dec(row[f"f1_{k}"]))
    total = [sum(r[k] for r in rows) for k in ("S", "NS", "IR")]
    assert total == [10106, 4419, 1515]


def test_human_label_counts_bad_label():
    rec = {"annotations": [{"human-atomic-facts": [{"text": "a", "label": "Q"}]}]}
    with pytest.raises(ScoringError, match="label must be"):
        F.human_label_counts(rec, where="x.jsonl:1")
    assert F.human_label_counts({"annotations": None}) is None
    assert F.human_label_counts({"annotations": [{"human-atomic-facts": None}]}) is None


# --- E. correlations -----------------------------------------------------------

CORR_ROWS = _rows("correlations.jsonl")


@pytest.mark.parametrize("row", CORR_ROWS, ids=lambda r: r["name"])
def test_correlation_vectors(row):
    p = F.pearson(row["x"], row["y"])
    s = F.spearman(row["x"], row["y"])
    assert _same(s.statistic, _dec(row["spearman"]["statistic"]))  # bit-exact
    assert _rel_close(s.pvalue, _dec(row["spearman"]["pvalue"]))
    ep = _dec(row["pearson"]["statistic"])
    assert _rel_close(p.statistic, ep) or abs(p.statistic - ep) <= 1e-12
    assert _rel_close(p.pvalue, _dec(row["pearson"]["pvalue"]))
    f = F.pearson(row["x"], row["y"], variants=["pearson_fsum"])
    assert math.isnan(ep) if math.isnan(f.statistic) else abs(f.statistic - ep) <= 1e-12


def test_correlation_edge_cases():
    assert all(math.isnan(v) for v in F.pearson([1], [2]))
    assert all(math.isnan(v) for v in F.spearman([], []))
    assert all(math.isnan(v) for v in F.spearman([1, float("nan"), 3], [1, 2, 3]))
    assert F.pearson([1, 2], [5, 7]) == (1.0, 1.0)
    assert F.pearson([2, 1], [5, 7]) == (-1.0, 1.0)
    nan2 = F.pearson([1, float("nan")], [5, 7])
    assert math.isnan(nan2.statistic) and nan2.pvalue == 1.0
    assert all(math.isnan(v) for v in F.pearson([1, 2, float("nan")], [5, 7, 8]))
    s = F.spearman([1, 2], [5, 7])
    assert s.statistic == 0.9999999999999999 and math.isnan(s.pvalue)
    with pytest.raises(ScoringError, match="x has 2 values but y has 3"):
        F.pearson([1, 2], [1, 2, 3])
    with pytest.raises(ScoringError, match=r"y\[1\]"):
        F.spearman([1, 2], [1, "a"])


def test_betainc_symmetry():
    for a, b, x in ((2.0, 3.0, 0.3), (10.0, 0.5, 0.9), (0.5, 0.5, 0.2)):
        assert abs(F.betainc(a, b, x) + F.betainc(b, a, 1 - x) - 1.0) < 1e-14


def test_study_path_reproduces_vectors():
    """SAFE-vs-human study: FActScore side from the labelled files (sorted file
    names, SAFE's loader), SAFE side from a per-response output."""
    human, safe_nc, safe_ir = [], [], []
    per_resp = _rows("factscore_human_per_response.jsonl")
    i = 0
    for model in ("ChatGPT", "InstructGPT", "PerplexityAI"):
        for rec in _labeled(model):
            counts = F.human_label_counts(rec)
            if counts is None:
                continue
            human.append(F.study_metrics_human(counts))
            safe_nc.append(F.study_metrics_safe({"num_claims": per_resp[i]["model_atomic_facts"]}))
            safe_ir.append(F.study_metrics_safe({"not_supported": per_resp[i]["IR"]}))
            i += 1
    assert len(human) == 496
    (nc,) = F.correlation_study(human, safe_nc)
    row = CORR_ROWS[0]
    assert nc.metric == "num_claims" and nc.n == 496
    assert _same(nc.spearman.statistic, _dec(row["spearman"]["statistic"]))
    assert _rel_close(nc.pearson.pvalue, _dec(row["pearson"]["pvalue"]))
    (ns,) = F.correlation_study(human, safe_ir)
    row = CORR_ROWS[1]
    assert ns.metric == "not_supported"
    assert _same(ns.spearman.statistic, _dec(row["spearman"]["statistic"]))
    assert abs(ns.pearson.statistic - _dec(row["pearson"]["statistic"])) <= 1e-12
    # SAFE == human gives perfect correlations on every metric
    full = F.correlation_study(human, [dict(h) for h in human])
    assert [r.metric for r in full] == ["f1_100", "irrelevant", "not_supported", "num_claims", "supported"]
    assert all(abs(r.spearman.statistic - 1.0) <= 4e-16 and r.n == 496 for r in full)


def test_study_minus_one_quirk_and_small_n():
    human = [{"a": 1, "b": 1}, {"a": -1, "b": 2}, {"a": 3, "b": 3}]
    safe = [{"a": 1}, {"a": 2}, {"a": 3, "c": 0}]
    (res,) = F.correlation_study(human, safe)
    assert res.metric == "a" and res.n == 2  # the genuine -1 is dropped
    (one,) = F.correlation_study([{"a": 1}, {"a": 2}], [{"a": 1}, {}])
    assert one.n == 1 and math.isnan(one.pearson.statistic)
    with pytest.raises(ScoringError):
        F.correlation_study([{}], [])
    with pytest.raises(ScoringError, match="negative"):
        F.study_metrics_safe({"Supported": -1, "Not Supported": 2}, where="r7")


# --- I. VeriScore ------------------------------------------------------------------


def test_veriscore_k_and_f1():
    assert F.veriscore_k([5, 1, 4, 2]) == (4, 5)  # upper median, no averaging
    with pytest.raises(ScoringError, match="domain 'bio'"):
        F.veriscore_k([], domain="bio")
    assert F.veriscore_f1(10, 10, 10) == 1.0 and type(F.veriscore_f1(10, 10, 10)) is float
    diags = []
    assert F.veriscore_f1(0, 0, 5, diagnostics=diags) == 0 and len(diags) == 1
    # min(S/K, 1) with S > K
    assert F.veriscore_f1(30, 40, 20) == 2 * 0.75 * 1 / (0.75 + 1)


def test_veriscore_aggregate_sequential_sum():
    from rageval_min.factuality import veriscore_metric as F

    recs = [{"model": "m", "domain": "d", "supported": 1, "total_claims": 10}] * 10
    recs = recs + [{"model": "m", "domain": "d", "supported": 0, "total_claims": 10, "abstained": True}]
    res = F.veriscore(recs)
    (row,) = res.rows
    assert (row.k_median, row.k_max, row.n) == (10, 10, 10)
    f1 = F.veriscore_f1(1, 10, 10)
    seq = 0
    for _ in range(10):
        seq += f1
    assert row.veriscore == seq / 10
    comp = F.veriscore(recs, variants=["veriscore_py312_sum"]).rows[0]
    assert comp.veriscore == math.fsum([f1] * 10) / 10
    assert F._py312_sum([0.1] * 10) == 1.0 and F._seq_mean([0.1] * 10) * 10 != 1.0


# --- K selection and bootstrap ------------------------------------------------------


def test_select_k_rules():
    data = [3, 10, 64, 70, 178]
    assert F.select_k(data, "median") == 64
    assert F.select_k(data, "max") == 178
    assert F.select_k(data, "p0") == 3 and F.select_k(data, "p100") == 178
    assert F.select_k(data, "p75") == 70
    for bad in ("p101", "mean", "p-5"):
        with pytest.raises(ScoringError):
            F.select_k(data, bad)
    with pytest.raises(ScoringError, match="positive"):
        F.select_k([0, 0, 0], "median")


def test_bootstrap_seeded_and_bounds():
    values = [F.calculate_metrics(s, 3, 20) for s in range(30)]
    a = F.bootstrap_mean_ci(values, seed=7, n_resamples=200)
    b = F.bootstrap_mean_ci(values, seed=7, n_resamples=200)
    c = F.bootstrap_mean_ci(values, seed=8, n_resamples=200)
    assert a == b and a != c
    assert a.low <= a.mean <= a.high and a.mean == F.np_mean(values)
    assert math.isnan(F.bootstrap_mean_ci([]).low)
    with pytest.raises(ScoringError):
        F.bootstrap_mean_ci(values, confidence=1.5)


def test_py312_sum_emulation():
    from rageval_min.factuality import veriscore_metric as F

    # values pinned from CPython 3.12.1's sum(); on >= 3.12 also compared live
    cases = [
        ([0.587154173805699, 1, -0.06055801956794993], 1.5265961542377493),
        ([0.1] * 10, 1.0),
        ([0, 0, 0.30769230769230765, 0, 0.958904109589041, 1.0], 2.266596417281349),
    ]
    for values, expected in cases:
        assert F._py312_sum(values) == expected
    assert F._py312_sum([]) == 0 and type(F._py312_sum([1, 2])) is int
    if sys.version_info >= (3, 12):
        import random

        rng = random.Random(1)
        for _ in range(500):
            vals = [
                rng.choice([0, 1, rng.random(), -rng.random(), 1e-20 * rng.random()]) for _ in range(rng.randint(0, 40))
            ]
            assert F._py312_sum(vals) == sum(vals)


# --- the family contract ------------------------------------------------------------


def test_contract_names_and_per_command_variants():
    assert F.FAMILY == "factuality" and F.REFERENCE == F.REF_SAFE
    assert F.REFERENCES["factscore"] == F.REF_FACTSCORE and F.REFERENCES["veriscore"] == F.REF_VERISCORE
    assert set(F.VARIANTS) == {v for vs in F.COMMAND_VARIANTS.values() for v in vs}
    assert F.check_variants(["pearson_fsum", "pearson_fsum"]) == ("pearson_fsum",)
    assert F.check_variants(["pearson_fsum"], command="correlate") == ("pearson_fsum",)
    with pytest.raises(ScoringError, match="unknown variant"):
        F.check_variants(["pearson_fsum"], command="safe")
    sig = F.signature(command="veriscore", variants=["veriscore_py312_sum"], params=[("K", 3)])
    assert sig.endswith("|family=factuality|ref=Yixiao-Song/VeriScore@7dd3352|variants=veriscore_py312_sum|K=3")
    assert "|ref=google-deepmind/long-form-factuality@9d27158|" in F.signature()


def _merged(acc_cls, params, rows, cuts):
    from rageval_min._contract import accumulator_from_state

    parts, start = [], 0
    for end in list(cuts) + [len(rows)]:
        acc = acc_cls(**params)
        for row in rows[start:end]:
            acc.add(row)
        parts.append(accumulator_from_state(json.loads(json.dumps(acc.to_state()))))
        start = end
    merged = parts[0]
    for p in parts[1:]:
        merged.merge(p)
    return merged.finalize()


def _one(acc_cls, params, rows):
    acc = acc_cls(**params)
    for row in rows:
        acc.add(row)
    return acc.finalize()


def test_correlate_table_and_study_merge_exactly():
    rows = [{"line": i + 1, "x": (i * 7) % 13, "y": (i * 5) % 11 + 0.5} for i in range(40)]
    one = _one(F.CorrelateAccumulator, {"mode": "table"}, rows)
    assert _merged(F.CorrelateAccumulator, {"mode": "table"}, rows, [3, 17, 17, 30]) == one
    assert (
        one.result["lines"][0]["spearman"]["statistic"] == F.spearman([r["x"] for r in rows], [r["y"] for r in rows])[0]
    )
    per = _rows("factscore_human_per_response.jsonl")
    study = []
    for p in per:
        row = {"model": p["model_name"], "line": p["line"], "topic": p["topic"]}
        row.update({f"human.{k}": v for k, v in F.study_metrics_human(p).items()})
        row["safe.num_claims"] = p["model_atomic_facts"]
        study.append(row)
    one = _one(F.CorrelateAccumulator, {"mode": "study"}, study)
    assert _merged(F.CorrelateAccumulator, {"mode": "study"}, study, [100, 250]) == one
    vec = _rows("correlations.jsonl")[0]
    (line,) = one.result["lines"]
    assert line["n"] == 496 and line["spearman"]["statistic"] == float.fromhex(vec["spearman"]["statistic"]["hex"])


def test_safe_and_judge_accumulators_merge_exactly():
    inp = _fixture()
    for variants in ([], ["sides_by_flags"], ["aggregate_all_rated"]):
        _, rows, _, _ = F.safe_items(inp, max_claim=64, variants=variants)
        params = {"max_claim": 64, "max_claim_text": "64", "variants": variants}
        one = _one(F.SafeAccumulator, params, rows)
        for cuts in ([0], [1], [3, 5], [6]):
            assert _merged(F.SafeAccumulator, params, rows, cuts) == one
    rows = [
        {"id": 1, "supported": 3, "not_supported": 1, "irrelevant": 0, "num_claims": 4, "dropped": 0},
        {"id": 2, "error": "judge call failed"},
        {"id": 3, "supported": 0, "not_supported": 2, "irrelevant": 1, "num_claims": 4, "dropped": 1},
    ]
    params = {"judge_model": "m", "judge_template": "builtin", "records": "out.jsonl"}
    one = _one(F.JudgeAccumulator, params, rows)
    assert one.result == {
        "responses": 3,
        "errors": 1,
        "output": "out.jsonl",
        "supported": 3,
        "not_supported": 3,
        "irrelevant": 1,
        "num_claims": 8,
        "dropped": 1,
    }
    assert one.signature.endswith("|step=judge|search=passages|judge_template=builtin|judge_model=m")
    assert _merged(F.JudgeAccumulator, params, rows, [1]) == one


# --- issue #18 (5), (7): p-value precision --------------------------------------------


def _scipy():
    return need("scipy.stats", "dev", "the test extra: pip install scipy")


def test_spearman_pvalue_large_n_small_rho_against_scipy():
    stats = _scipy()
    import random

    rng = random.Random(5)
    for n in (1000, 5000, 20000):
        for spread in (20.0, 60.0):
            x = [rng.random() for _ in range(n)]
            y = [v + rng.random() * spread for v in x]
            ours, ref = F.spearman(x, y), stats.spearmanr(x, y)
            assert ours.statistic == ref.statistic
            assert abs(ours.statistic) < 0.1
            assert abs(ours.pvalue - ref.pvalue) <= 1e-12 * ref.pvalue, (n, ours, ref)


def test_spearman_pvalue_complement_is_not_cancelled():
    # 1 - z as t^2/(dof+t^2): z = dof/(dof+t^2) is within an ulp or two of 1 here
    special = need("scipy.special", "dev", "the test extra: pip install scipy")
    from rageval_min._stats import betainc, betainc_complement

    for dof, t in ((10**6, 3e-4), (5 * 10**4, 2e-3), (2000, 0.05)):
        t2 = t * t
        z = dof / (dof + t2)
        ref = 2.0 * float(special.stdtr(dof, -t))
        p = betainc_complement(dof / 2.0, 0.5, z, t2 / (dof + t2))
        assert abs(p - ref) <= 1e-12 * ref, (dof, t, p, ref)
    # the subtraction 1 - z (what betainc does) loses digits on the first case
    dof, t = 10**6, 3e-4
    z = dof / (dof + t * t)
    ref = 2.0 * float(special.stdtr(dof, -t))
    assert abs(betainc(dof / 2.0, 0.5, z) - ref) > 1e-12 * ref


def test_pearson_tolerance_near_one_and_zero():
    stats = _scipy()
    cases = [([15, 11, 14, 33], [15, 12, 14, 29])]
    for v in _rows("correlations.jsonl"):
        if v["pearson"]["statistic"].get("hex") not in (None, "nan") and len(v["x"]) > 2:
            cases.append((v["x"], v["y"]))
    import random

    rng = random.Random(3)
    for n in (10, 200):  # r near 0
        x = [rng.random() for _ in range(n)]
        cases.append((x, [rng.random() for _ in range(n)]))
    for x, y in cases:
        ours, ref = F.pearson(x, y), stats.pearsonr(x, y)
        abs_r, rel_p = F.pearson_tolerance(ours.statistic, len(x))
        assert abs(ours.statistic - float(ref.statistic)) <= abs_r
        assert abs(ours.pvalue - float(ref.pvalue)) <= rel_p * float(ref.pvalue)
    # the case: r one ulp or two from scipy's, p within the r-dependent bound (not 1e-12)
    r = F.pearson([15, 11, 14, 33], [15, 12, 14, 29])
    abs_r, rel_p = F.pearson_tolerance(r.statistic, 4)
    assert rel_p > 1e-12 and abs_r == 8 * 2.0**-53


# --- metric and input declarations ----------------------------------------------------

#: The literal DIRECTIONS tables the accumulators carried before they declared METRICS.
_OLD_DIRECTIONS = {
    "f1k": {"f1_at_k": "higher", "precision": "higher", "recall_at_k": "higher"},
    "safe": {"side1_f1": "higher", "side2_f1": "higher"},
    "factscore": {"score": "higher", "init_score": "higher"},
    "veriscore": {},
    "correlate": {"pearson": "higher", "spearman": "higher"},
    "judge": {"supported": "higher", "not_supported": "lower", "dropped": "lower"},
}
_ACCUMULATORS = (
    F.F1kAccumulator,
    F.SafeAccumulator,
    F.FactScoreAccumulator,
    F.VeriScoreAccumulator,
    F.CorrelateAccumulator,
    F.JudgeAccumulator,
)


def test_declarations_are_well_formed_and_give_the_old_tables():
    from rageval_min import _metrics

    assert sorted(a.COMMAND for a in _ACCUMULATORS) == sorted(_OLD_DIRECTIONS)
    for acc in _ACCUMULATORS:
        _metrics.check_declarations(acc.METRICS, acc.INPUTS)
        assert acc.INPUTS and all(inp.fields for inp in acc.INPUTS), acc.COMMAND
        assert dict(acc.DIRECTIONS) == _OLD_DIRECTIONS[acc.COMMAND], acc.COMMAND
        assert dict(acc.RATES) == {}, acc.COMMAND  # no accumulator had a RATES table
    bad = F.F1kAccumulator.METRICS + (F.F1kAccumulator.METRICS[0],)
    with pytest.raises(ValueError, match="twice"):
        _metrics.check_declarations(bad)


def _gold_reports(tmp_path):
    """(accumulator, report, item rows) of every command, run on the gold samples (study: on FActScore's labels)."""
    gold = os.path.join(os.path.dirname(__file__), os.pardir, "gold_samples", "factuality")
    runs = [
        (F.F1kAccumulator, lambda on: F.f1k_file(os.path.join(gold, "counts.jsonl"), max_claims=64, on_item=on)),
        (F.SafeAccumulator, lambda on: F.safe_file(os.path.join(gold, "safe_results.json"), max_claim=64, on_item=on)),
        (F.SafeAccumulator, lambda on: F.safe_file(os.path.join(DATA, "run_eval_fixture.input.json"), on_item=on)),
        (F.FactScoreAccumulator, lambda on: F.factscore_file(os.path.join(gold, "labels.jsonl"), on_item=on)),
        (F.FactScoreAccumulator, lambda on: F.factscore_file(os.path.join(gold, "labels.jsonl"), gamma=0, on_item=on)),
        (F.VeriScoreAccumulator, lambda on: F.veriscore_file(os.path.join(gold, "veriscore.jsonl"), on_item=on)),
        (F.CorrelateAccumulator, lambda on: F.correlate_file(os.path.join(gold, "pairs.jsonl"), on_item=on)),
    ]
    table = tmp_path / "table.jsonl"
    table.write_text("".join(json.dumps({"a": i, "b": (i * 7) % 5}) + "\n" for i in range(9)), encoding="utf-8")
    runs.append((F.CorrelateAccumulator, lambda on: F.correlate_table_file(str(table), x="a", y="b", on_item=on)))
    one_domain = tmp_path / "one.jsonl"
    one_domain.write_text(
        "".join(json.dumps({"domain": "bio", "supported": s, "total_claims": 9}) + "\n" for s in (3, 5, 9)),
        encoding="utf-8",
    )
    runs.append((F.VeriScoreAccumulator, lambda on: F.veriscore_file(str(one_domain), on_item=on)))
    safe = tmp_path / "safe.jsonl"
    per = _rows("factscore_human_per_response.jsonl")
    safe_lines = [
        {"model_name": p["model_name"], "line": p["line"], "supported": p["S"], "not_supported": p["NS"]} for p in per
    ]
    safe.write_text("".join(json.dumps(x) + "\n" for x in safe_lines), encoding="utf-8")
    labeled = [os.path.join(DATA, n) for n in ("ChatGPT.jsonl", "InstructGPT.jsonl", "PerplexityAI.jsonl")]
    runs.append((F.CorrelateAccumulator, lambda on: F.study_file(labeled, str(safe), on_item=on)))
    for acc, run in runs:
        rows = []
        yield acc, run(rows.append), rows


def test_every_emitted_metric_is_declared(tmp_path):
    from rageval_min._metrics import find_metric
    from rageval_min.judges import JudgeStats

    seen = set()
    for acc, report, rows in _gold_reports(tmp_path):
        assert report.metrics and rows, acc.COMMAND
        for name in report.metrics:
            assert find_metric(acc.METRICS, name) is not None, (acc.COMMAND, name)
        for row in rows:
            for name, value in row.items():
                if name in ("line", "prompt") or isinstance(value, (str, bool)):
                    continue  # the key of the row, and its labels (id, model, domain, topic, error)
                m = find_metric(acc.METRICS, name)
                assert m is not None and m.per_item, (acc.COMMAND, name)
        seen.add(acc.COMMAND)
    judge = F.JudgeAccumulator(records="out.jsonl")
    row = {"id": "r1", "supported": 3, "not_supported": 1, "irrelevant": 2, "num_claims": 6, "dropped": 0}
    judge.add(row)
    judge.add({"id": "r2", "error": "judge call failed"})
    names = list(judge.finalize().metrics) + list(JudgeStats().as_metrics())
    for name in names + [k for k in row if k != "id"]:
        assert find_metric(F.JudgeAccumulator.METRICS, name) is not None, name
    assert seen == set(_OLD_DIRECTIONS) - {"judge"}
