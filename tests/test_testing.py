"""rageval_min.testing.assert_gates: the pytest helper for embedding tools."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from rageval_min.errors import ScoringError
from rageval_min.report import Report
from rageval_min.testing import assert_gates

REPORT = Report(
    "grounding",
    "sig",
    {"precision": 0.6667},
    {"precision": 2 / 3, "chr": 0.75, "answered": 3, "over_refusal": None, "nan": float("nan")},
)


def test_passing_gates_return_none():
    assert assert_gates(REPORT, "precision>=0.6", "chr >= 0.75", "answered==3", "chr<0.8") is None


def test_failure_lists_each_failed_gate_with_value_and_threshold():
    with pytest.raises(AssertionError) as info:
        assert_gates(REPORT, "precision>=0.8", "chr>=0.75", "answered>3")
    msg = str(info.value)
    assert msg.splitlines() == [
        "2 of 3 gates failed (grounding):",
        "  precision>=0.8: precision = 0.6667 (exactly 0.6666666666666666), required >= 0.8",
        "  answered>3: answered = 3, required > 3",
    ]


def test_unrounded_values_are_compared():
    # the rounded 0.6667 would pass; the metric 2/3 does not
    with pytest.raises(AssertionError):
        assert_gates(REPORT, "precision>=0.66667")


def test_undefined_and_nan_values_fail():
    with pytest.raises(AssertionError) as info:
        assert_gates(REPORT, "over_refusal<=0.1", "nan>=0")
    assert "over_refusal = undefined (None), required <= 0.1" in str(info.value)
    assert "nan = nan, required >= 0" in str(info.value)


def test_plain_mapping_is_accepted():
    assert_gates({"f1": 0.5}, "f1>=0.5")
    with pytest.raises(AssertionError, match=r"^1 of 1 gate failed:"):
        assert_gates({"f1": 0.5}, "f1>0.5")


def test_mistakes_in_the_gate_are_errors_not_failures():
    with pytest.raises(ScoringError, match="unknown metric 'recall'"):
        assert_gates(REPORT, "recall>=0.5")
    with pytest.raises(ScoringError, match="expected NAME OP VALUE"):
        assert_gates(REPORT, "precision=0.5")
    with pytest.raises(ValueError):
        assert_gates(REPORT)
    with pytest.raises(TypeError):
        assert_gates(42, "x>1")


def test_on_a_real_family_report():
    from rageval_min import grounding

    gold = os.path.join(ROOT, "gold_samples", "grounding")
    fn = getattr(grounding, "score_file", None)
    if fn is None:
        pytest.skip("grounding.score_file is not available")
    try:
        report = fn(os.path.join(gold, "gold.jsonl"), os.path.join(gold, "trace.jsonl"))
    except TypeError as exc:  # the family's keyword names may move while families are converted
        pytest.skip(f"grounding.score_file signature changed: {exc}")
    assert_gates(report, "answered==3")
    with pytest.raises(AssertionError, match=r"precision>=0.8: precision = 0.6667 \(exactly 0.6666666666666666\)"):
        assert_gates(report, "precision>=0.8")


def test_importing_does_not_import_pytest():
    code = "import sys, rageval_min.testing; print('pytest' in sys.modules, '_pytest' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "False False", out.stderr
