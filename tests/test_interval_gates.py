"""--intervals shows in text and Markdown, and every interval bound is gateable (issue #24 item 6),
for every scoring command of every family."""

import json

import pytest
from conftest import absolute_argv, contract_cases, run_cli

CASES = contract_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_every_interval_bound_is_gateable(case, tmp_path):
    argv = absolute_argv(case["argv"])
    out = tmp_path / "r.json"
    r = run_cli(argv + ["--intervals", "--output", f"json:{out}"])
    assert r.code in (0, 1), r.err
    intervals = json.loads(out.read_text(encoding="utf-8")).get("intervals") or {}
    usable = [n for n, iv in intervals.items() if iv.get("low") is not None]
    if not usable:
        pytest.skip("no metric of this sample has an interval")
    name = usable[0]
    low = intervals[name]["low"]
    ok = run_cli(argv + ["--gate", f"{name}.ci_low>={low}", "--output", str(tmp_path / "a.json")])
    bad = run_cli(argv + ["--gate", f"{name}.ci_low>{low}", "--output", str(tmp_path / "b.json")])
    assert ok.code in (0,), ok.err
    assert bad.code == 1 and f"gate {name}.ci_low>{low} failed" in bad.err
    text = tmp_path / "r.txt"
    assert run_cli(argv + ["--intervals", "--output", f"text:{text}"]).code in (0, 1)
    shown = text.read_text(encoding="utf-8")
    row = next(line for line in shown.splitlines() if line.split(" ", 1)[0] == name)
    assert "interval (" in shown and row.rstrip().endswith("]"), row


def test_a_bound_of_an_unknown_metric_is_a_usage_error(tmp_path):
    argv = absolute_argv(CASES[0]["argv"])
    r = run_cli(argv + ["--gate", "nonexistent.ci_low>=0.5"])
    assert r.code == 2 and r.err.count("\n") == 1
