"""``rageval-min compare``: pairing, statistics (checked against scipy and statsmodels), gates, formats."""

import json
import math
import os
import random

import pytest
from conftest import ROOT, absolute_argv, contract_cases, need, run_cli

from rageval_min import _stats as st
from rageval_min import compare

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")


#: hand-written rows say nothing of their metrics: which way is better is given on the command line
UP = ["--higher-is-better", "hit", "--higher-is-better", "score", "--higher-is-better", "x", "--higher-is-better", "f1"]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _pair_files(tmp_path, base_rows, cand_rows):
    return _write(tmp_path / "base.jsonl", base_rows), _write(tmp_path / "cand.jsonl", cand_rows)


# --------------------------------------------------------------------------- statistics vs scipy / statsmodels


def test_mcnemar_matches_statsmodels_exact():
    sm = need("statsmodels.stats.contingency_tables", "dev", "the test extra: pip install statsmodels")
    rng = random.Random(3)
    cases = [(0, 0), (0, 1), (1, 0), (5, 5), (0, 30), (30, 0)] + [
        (rng.randrange(60), rng.randrange(60)) for _ in range(200)
    ]
    for b, c in cases:
        got = st.mcnemar_exact(b, c)
        if b + c == 0:
            assert got == 1.0
            continue
        ref = sm.mcnemar([[3, b], [c, 4]], exact=True).pvalue
        assert abs(got - ref) <= 1e-12 * max(ref, 1e-300), (b, c, got, ref)


def test_wilson_matches_statsmodels():
    prop = need("statsmodels.stats.proportion", "dev", "the test extra: pip install statsmodels")
    rng = random.Random(4)
    cases = [(0, 1), (1, 1), (0, 10), (10, 10), (1, 2)] + [(k, n) for n in (3, 17, 250) for k in (0, 1, n // 2, n)]
    cases += [(rng.randrange(n + 1), n) for n in (rng.randrange(1, 900) for _ in range(100))]
    for k, n in cases:
        for alpha in (0.05, 0.1, 0.01):
            lo, hi = prop.proportion_confint(k, n, alpha=alpha, method="wilson")
            glo, ghi = st.wilson_interval(k, n, alpha)
            assert abs(glo - lo) <= 1e-12 and abs(ghi - hi) <= 1e-12, (k, n, alpha)
    assert st.wilson_interval(0, 0) == (None, None)


def test_paired_t_matches_scipy_including_edge_cases():
    stats = need("scipy.stats", "dev", "the test extra: pip install scipy")
    rng = random.Random(5)
    for _ in range(200):
        n = rng.randrange(2, 300)
        base = [rng.gauss(0.5, 0.2) for _ in range(n)]
        cand = [b + rng.gauss(0.01, 0.1) for b in base]
        ref = stats.ttest_rel(cand, base).pvalue
        got = st.paired_t([c - b for b, c in zip(base, cand)])
        assert abs(got - ref) <= 1e-9 * ref, (n, got, ref)
    assert st.paired_t([0.25]) is None  # n = 1: scipy gives NaN
    assert st.paired_t([0.0, 0.0, 0.0]) is None  # all ties: 0 / 0, NaN in scipy
    assert st.paired_t([0.5, 0.5, 0.5]) == 0.0  # zero variance, non-zero mean: scipy's p is 0
    with pytest.warns(RuntimeWarning):
        assert stats.ttest_rel([1.5, 2.5, 3.5], [1.0, 2.0, 3.0]).pvalue == 0.0


def test_bootstrap_and_randomization_are_seeded_and_sane():
    d = [1.0, 0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, 1.0] * 3
    a = st.bootstrap_delta_interval(d, resamples=2000, seed=7, alpha=0.05)
    assert a == st.bootstrap_delta_interval(d, resamples=2000, seed=7, alpha=0.05)
    assert a != st.bootstrap_delta_interval(d, resamples=2000, seed=8, alpha=0.05)
    assert a[0] < sum(d) / len(d) < a[1]
    p = st.sign_flip_test(d, resamples=2000, seed=1)
    assert 1 / 2001 <= p < 0.01  # a clearly positive shift
    assert st.sign_flip_test([0.0] * 10, resamples=99, seed=0) == 1.0  # every flip is as extreme as 0
    # p = (1 + #extreme) / (1 + R) is never 0
    assert st.sign_flip_test([5.0] * 40, resamples=500, seed=0) == pytest.approx(1 / 501 + 2 / 501, abs=2 / 501)


# --------------------------------------------------------------------------- the command


def _binary_rows(n, flips_down, flips_up, key="id"):
    base = [{key: f"q{i}", "hit": 1 if i % 2 == 0 else 0, "score": i / n} for i in range(n)]
    cand = [dict(r) for r in base]
    down = [r for r in cand if r["hit"] == 1][:flips_down]
    up = [r for r in cand if r["hit"] == 0][:flips_up]
    for r in down:
        r["hit"] = 0
    for r in up:
        r["hit"] = 1
    return base, cand


def test_binary_metric_object_and_key_order(tmp_path):
    base, cand = _binary_rows(40, flips_down=8, flips_up=1)
    b, c = _pair_files(tmp_path, base, cand)
    r = run_cli(
        ["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--metric", "hit", "--resamples", "500"]
    )
    assert r.code == 0, r.err
    m = json.loads(r.out)["result"]["metrics"]["hit"]
    assert list(m)[:10] == [
        "kind",
        "direction",
        "n",
        "baseline",
        "candidate",
        "delta",
        "ci_low",
        "ci_high",
        "p_value",
        "test",
    ]
    assert list(m)[10:14] == ["improved", "regressed", "baseline_ci", "candidate_ci"]
    assert (m["kind"], m["direction"], m["n"], m["test"]) == ("binary", "higher", 40, "mcnemar_exact")
    assert (m["improved"], m["regressed"]) == (1, 8)
    assert m["p_value"] == st.mcnemar_exact(1, 8)
    assert m["delta"] == pytest.approx(-7 / 40)
    assert m["ci_low"] < m["delta"] < m["ci_high"]


def test_fail_on_regression_names_each_regressed_metric(tmp_path):
    base, cand = _binary_rows(60, flips_down=15, flips_up=0)
    for r in cand:
        r["score"] -= 0.2
    b, c = _pair_files(tmp_path, base, cand)
    argv = ["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--resamples", "300"]
    assert run_cli(argv).code == 0  # without the flag, a regression alone does not fail
    r = run_cli(argv + ["--fail-on-regression"])
    assert r.code == 1
    assert sorted(r.err.splitlines()) == sorted(
        [
            f"gate no-regression:hit failed: {st.mcnemar_exact(0, 15):.4g}".replace("e-0", "e-0"),
            "gate no-regression:score failed: 0",
        ]
    ) or {line.split(" failed")[0] for line in r.err.splitlines()} == {
        "gate no-regression:hit",
        "gate no-regression:score",
    }


def test_lower_is_better_flips_the_verdict(tmp_path):
    base, cand = _binary_rows(60, flips_down=15, flips_up=0)
    b, c = _pair_files(tmp_path, base, cand)
    argv = ["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--metric", "hit", "--resamples", "300"]
    r = run_cli(argv + ["--lower-is-better", "hit", "--fail-on-regression"])
    assert r.code == 0, r.err
    m = json.loads(r.out)["result"]["metrics"]["hit"]
    assert (m["direction"], m["improved"], m["regressed"], m["verdict"]) == ("lower", 15, 0, "improved")


def test_insufficient_data_fails_significance_gates(tmp_path):
    base, cand = _binary_rows(6, flips_down=1, flips_up=0)
    b, c = _pair_files(tmp_path, base, cand)
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--gate", "hit.p_value>=0.05"])
    assert r.code == 1 and r.err == "gate hit.p_value>=0.05 failed: insufficient data\n"
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--gate", "hit.delta>=-0.5"])
    assert r.code == 0, r.err  # a delta gate does not need significance
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--fail-on-regression"])
    assert r.code == 1 and "insufficient data" in r.err


def test_pairing_reports_one_sided_ids_and_refuses_duplicates(tmp_path):
    base = [{"id": i, "x": 1} for i in range(30)]
    cand = [{"id": i, "x": 1} for i in range(5, 40)]
    b, c = _pair_files(tmp_path, base, cand)
    out = json.loads(run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP]).out)
    assert (out["result"]["paired"], out["result"]["only_baseline"], out["result"]["only_candidate"]) == (25, 5, 10)
    assert any("only in the candidate: 30, 31" in d for d in out["diagnostics"])
    dup = _write(tmp_path / "dup.jsonl", [{"id": 1, "x": 1}, {"id": 2, "x": 0}, {"id": 1, "x": 0}])
    r = run_cli(["compare", "--baseline", dup, "--candidate", c, "--key", "id", *UP])
    assert r.code == 2 and "dup.jsonl:3: id: duplicate id 1 (first at line 1)" in r.err


def test_same_seed_same_bytes_and_randomization(tmp_path):
    rng = random.Random(0)
    base = [{"id": i, "f1": rng.random()} for i in range(50)]
    cand = [{"id": r["id"], "f1": r["f1"] + rng.gauss(0.02, 0.05)} for r in base]
    b, c = _pair_files(tmp_path, base, cand)
    argv = [
        "compare",
        "--baseline",
        b,
        "--candidate",
        c,
        "--key",
        "id",
        *UP,
        "--test",
        "randomization",
        "--resamples",
        "999",
    ]
    first, second = run_cli(argv + ["--seed", "3"]), run_cli(argv + ["--seed", "3"])
    assert first.out == second.out
    m = json.loads(first.out)["result"]["metrics"]["f1"]
    assert m["test"] == "randomization" and m["kind"] == "continuous"
    assert m["p_value"] * 1000 == pytest.approx(round(m["p_value"] * 1000))  # (1 + k) / 1000


def test_family_aggregates_and_directions_on_grounding(tmp_path):
    base = tmp_path / "base.jsonl"
    assert run_cli(["grounding", "--gold", GOLD, "--trace", TRACE, "--per-item", str(base)]).code == 1
    rows = [json.loads(line) for line in base.read_text().splitlines()]
    for r in rows:
        if r["qid"] == "g1":
            r["correct"] = 0  # the candidate loses one correct answer
    cand = _write(tmp_path / "cand.jsonl", rows)
    r = run_cli(
        [
            "compare",
            "--baseline",
            str(base),
            "--candidate",
            cand,
            "--key",
            "qid",
            "--family",
            "grounding",
            "--resamples",
            "200",
            "--min-n",
            "1",
        ]
    )
    assert r.code == 0, r.err
    out = json.loads(r.out)
    metrics = out["result"]["metrics"]
    assert metrics["aggregate.precision"]["baseline"] == 2 / 3
    assert metrics["aggregate.precision"]["candidate"] == 1 / 3
    assert metrics["aggregate.precision"]["delta"] == pytest.approx(-1 / 3)
    assert metrics["under_refusal"]["direction"] == "lower" and metrics["correct"]["direction"] == "higher"
    assert "aggregate.answered" not in metrics  # counts are sums of item rows
    assert out["result"]["regressions"][0] == {"key": "g1", "metric": "correct", "baseline": 1, "candidate": 0}


def test_markdown_is_a_pr_table(tmp_path):
    base, cand = _binary_rows(40, flips_down=8, flips_up=1)
    b, c = _pair_files(tmp_path, base, cand)
    r = run_cli(
        ["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP, "--format", "markdown", "--resamples", "200"]
    )
    lines = r.out.splitlines()
    assert "| metric | baseline | candidate | delta [interval] | p | verdict |" in lines
    assert any(line.startswith("| hit | 0.5 | 0.325 | -0.175 [") and line.endswith("| regressed |") for line in lines)
    assert "Largest per-item regressions:" in lines


def test_two_line_ci_recipe(tmp_path):
    """The README's recipe: score main and the PR with --per-item, then compare --fail-on-regression."""
    base, cand = tmp_path / "main.jsonl", tmp_path / "pr.jsonl"
    for out in (base, cand):
        run_cli(["grounding", "--gold", GOLD, "--trace", TRACE, "--per-item", str(out), "--gate", "precision>=0"])
    r = run_cli(
        [
            "compare",
            "--baseline",
            str(base),
            "--candidate",
            str(cand),
            "--key",
            "qid",
            "--fail-on-regression",
            "--min-n",
            "1",
            "--resamples",
            "100",
        ]
    )
    assert r.code == 0, r.err
    assert all(m["delta"] == 0 for m in json.loads(r.out)["result"]["metrics"].values())


def test_bad_options_exit_2(tmp_path):
    b, c = _pair_files(tmp_path, [{"id": 1, "x": 1}], [{"id": 1, "x": 0}])
    for extra in (["--alpha", "1.5"], ["--resamples", "0"], ["--metric", "nope"], ["--test", "z"]):
        r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "id", *UP] + extra)
        assert r.code == 2 and r.err.count("\n") == 1, extra
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "missing"])
    assert r.code == 2 and "base.jsonl:1: missing" in r.err


def test_api_compare_files(tmp_path):
    b, c = _pair_files(tmp_path, [{"id": 1, "x": 0.5}, {"id": 2, "x": 1.5}], [{"id": 1, "x": 1.0}, {"id": 2, "x": 2.5}])
    rep = compare.compare_files(b, c, key="id", resamples=50, direction_overrides={"x": "higher"})
    assert rep.metrics["x.delta"] == 0.75 and math.isfinite(rep.result["metrics"]["x"]["p_value"])


@pytest.mark.parametrize("case", contract_cases(), ids=lambda c: c["id"])
def test_compare_reads_every_family_item_rows(case, tmp_path):
    """The per-item output of every scoring command compares (itself against itself: every delta 0),
    with the family's directions and its aggregates recomputed through its accumulator."""
    argv = absolute_argv(case["argv"])
    items = tmp_path / "items.jsonl"
    r = run_cli(argv + ["--per-item", str(items), "--output", str(tmp_path / "r.json")])
    assert r.code in (0, 1), r.err
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    key = next(iter(rows[0]))
    if len({json.dumps(row[key]) for row in rows}) != len(rows):
        pytest.skip(f"the natural key {key!r} repeats in this sample (several runs in one file)")
    argv = ["compare", "--baseline", str(items), "--candidate", str(items), "--key", key, "--resamples", "20"]
    argv += ["--family", f"{case['family']}:{case['command']}"]
    for name, value in case["params"].items():
        argv += ["--param", f"{name}={json.dumps(value)}"]
    r = run_cli(argv + ["--min-n", "1", "--fail-on-regression"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["result"]["paired"] == len(rows)
    assert out["result"]["metrics"], "nothing was compared"
    for name, m in out["result"]["metrics"].items():
        assert m["delta"] in (0, None), name


def test_compare_options_object_equals_the_keywords(tmp_path):
    """compare_rows' keywords and one CompareOptions give the same report; checked() rejects bad options."""
    base, cand = _pair_files(
        tmp_path,
        [{"id": i, "ok": i % 2, "score": i / 10} for i in range(12)],
        [{"id": i, "ok": (i + 1) % 2, "score": i / 9} for i in range(12)],
    )
    b, c = compare.read_item_rows(base, "id"), compare.read_item_rows(cand, "id")
    kw = dict(test="randomization", resamples=50, seed=3, lower_is_better=["score"], fail_on_regression=True)
    kw["direction_overrides"] = {"ok": "higher"}
    by_kw = compare.compare_rows(b, c, key="id", **kw)
    by_opts = compare.compare_with_options(b, c, "id", compare.CompareOptions(**kw))
    assert by_kw == by_opts
    from rageval_min.errors import ScoringError

    with pytest.raises(ScoringError, match="--resamples must be between 1 and"):
        compare.CompareOptions(resamples=0).checked()
