"""``--intervals``: Wilson intervals for count ratios, bootstrap for means, beside the result (never in it)."""

import json
import os

from conftest import ROOT, need, run_cli

G = os.path.join(ROOT, "gold_samples", "grounding")
ROUGE = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
BASE = ["grounding", "--gold", os.path.join(G, "gold.jsonl"), "--trace", os.path.join(G, "trace.jsonl")]


def test_intervals_sit_beside_an_unchanged_result():
    plain = json.loads(run_cli(BASE).out)
    with_iv = json.loads(run_cli(BASE + ["--intervals"]).out)
    assert plain["result"] == with_iv["result"] and "intervals" not in plain
    assert list(with_iv)[:4] == ["family", "signature", "result", "intervals"]


def test_grounding_rates_get_wilson_intervals_of_their_counts():
    prop = need("statsmodels.stats.proportion", "dev", "the test extra: pip install statsmodels")
    iv = json.loads(run_cli(BASE + ["--intervals"]).out)["intervals"]
    assert set(iv) == {"precision", "chr", "under_refusal", "over_refusal", "recall@k"}
    lo, hi = prop.proportion_confint(2, 3, alpha=0.05, method="wilson")  # precision = 2 correct / 3 answered
    assert iv["precision"]["method"] == "wilson" and iv["precision"]["n"] == 3
    assert abs(iv["precision"]["low"] - lo) < 1e-12 and abs(iv["precision"]["high"] - hi) < 1e-12
    lo, hi = prop.proportion_confint(0, 2, alpha=0.05, method="wilson")  # under-refusal: 0 of 2 unanswerable
    assert abs(iv["under_refusal"]["high"] - hi) < 1e-12 and iv["under_refusal"]["n"] == 2


def test_means_get_seeded_bootstrap_intervals():
    argv = ["rouge", "--input", ROUGE, "--summary", "--intervals"]
    first, second = run_cli(argv), run_cli(argv)
    assert first.code == 0, first.err
    assert first.out == second.out  # seeded: the same bytes
    out = json.loads(first.out)
    iv = out["intervals"]
    assert set(iv) == {
        f"{t}.{m}" for t in ("rouge1", "rouge2", "rougeL", "rougeLsum") for m in ("precision", "recall", "fmeasure")
    }
    for name, v in iv.items():
        rtype, measure = name.split(".")
        mean = out["result"]["mean"][rtype][measure]
        assert v["method"] == "bootstrap" and v["resamples"] == 2000 and v["n"] == 6
        assert v["low"] <= mean <= v["high"]
