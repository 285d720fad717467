"""The gold-sample cases that ``rageval-min demo`` runs (gold_samples/<family>/cases.json), run by the suite."""

import json
import os

import pytest
from conftest import ROOT

from rageval_min import _demo
from rageval_min.cli import main
from rageval_min.registry import COMMANDS

SAMPLES = os.path.join(ROOT, "gold_samples")
CASES = [(c.name, case) for c in COMMANDS for case in _demo.load_cases(SAMPLES, c.name)]


@pytest.mark.parametrize("family,case", CASES, ids=[f"{f}:{c.get('name', '')}" for f, c in CASES])
def test_gold_sample_case(family, case):
    res = _demo.run_case(SAMPLES, family, case, main)
    assert res.ok, res.detail


def test_comparer_detects_a_difference(tmp_path):
    fam = tmp_path / "grounding"
    fam.mkdir()
    for name in ("gold.jsonl", "trace.jsonl"):
        (fam / name).write_bytes(open(os.path.join(SAMPLES, "grounding", name), "rb").read())
    expected = json.loads(open(os.path.join(SAMPLES, "grounding", "expected_wfgy.json")).read())
    expected["precision"] = 0.5
    (fam / "expected_wfgy.json").write_text(json.dumps(expected, indent=2) + "\n")
    case = _demo.load_cases(SAMPLES, "grounding")[0]
    for kind in ("exact", "json"):
        res = _demo.run_case(str(tmp_path), "grounding", dict(case, compare=kind), main)
        assert not res.ok and "differs" in res.detail


def test_close_comparison_tolerance():
    f = _demo.COMPARISONS["json_close"]
    assert f('{"a": 1.0000000000001}', '{"a": 1.0}', {"rel_tol": 1e-12})
    assert not f('{"a": 1.001}', '{"a": 1.0}', {"rel_tol": 1e-12})
    assert not f('{"a": 1.0, "b": 2}', '{"a": 1.0}', {})


def test_every_family_has_gold_sample_cases():
    for family in [c.name for c in COMMANDS if c.family or c.package]:
        assert _demo.load_cases(SAMPLES, family), family


def test_demo_with_no_or_missing_cases_is_never_green(tmp_path):
    """An empty or wrong --samples folder, or one without some family's cases, is exit 2, never a pass."""
    from conftest import run_cli

    r = run_cli(["demo", "--samples", str(tmp_path)])
    assert r.code == 2 and "no gold-sample case at all" in r.err and r.err.count("\n") == 1
    import shutil

    shutil.copytree(os.path.join(SAMPLES, "rouge"), tmp_path / "rouge")
    r = run_cli(["demo", "--samples", str(tmp_path)])
    assert r.code == 2 and "no gold-sample case for grounding, rgb" in r.err
    assert "== rouge (" in r.out and "ok  " in r.out


def test_demo_says_how_many_cases_ran_and_rejects_malformed_cases(tmp_path):
    from conftest import run_cli

    r = run_cli(["demo"])
    assert r.code == 0 and "== grounding (" in r.out
    assert r.out.rstrip().endswith(f"({len(CASES)} cases in {len({f for f, _ in CASES})} commands)")
    (tmp_path / "grounding").mkdir()
    (tmp_path / "grounding" / "cases.json").write_text('[{"argv": ["grounding"]}]', encoding="utf-8")
    r = run_cli(["demo", "--samples", str(tmp_path)])
    assert r.code == 2 and "cases.json: expected a list of cases" in r.err and r.err.count("\n") == 1
    (tmp_path / "grounding" / "cases.json").write_text("[{", encoding="utf-8")
    r = run_cli(["demo", "--samples", str(tmp_path)])
    assert r.code == 2 and "cannot read the cases" in r.err
