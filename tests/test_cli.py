"""The CLI contract: formats, gates, exit codes, atomic output, demo, subprocess runs."""

import json
import os
import xml.etree.ElementTree as ET

import pytest
from conftest import DATA, ROOT, run_cli, run_subprocess

GOLD = os.path.join(DATA, "wfgy", "sample_gold.jsonl")
TRACE = os.path.join(DATA, "wfgy", "sample_trace.jsonl")
BASE = ["grounding", "--gold", GOLD, "--trace", TRACE]


def test_json_envelope_key_order_and_signature():
    r = run_cli(BASE)
    assert r.code == 0
    out = json.loads(r.out)
    assert list(out) == ["family", "signature", "result", "gates", "pass", "diagnostics"]
    assert out["signature"] == "rageval_min:0.1.0|family=grounding|ref=onestardao/WFGY@25aaa9d|variants=none|k=5"
    assert [g["gate"] for g in out["gates"]] == [
        "precision>=0.80",
        "chr>=0.75",
        "under_refusal<=0.05",
        "over_refusal<=0.10",
    ]
    assert out["pass"] is True


@pytest.mark.parametrize("fmt", ["json", "text", "markdown", "junit", "wfgy"])
@pytest.mark.parametrize(
    "gate,code", [("precision>=0.9", 0), ("precision>1", 1), ("recall@k<1", 1), ("answered==2", 0)]
)
def test_gates_decide_exit_code_in_every_format(fmt, gate, code):
    r = run_cli(BASE + ["--format", fmt, "--gate", gate])
    assert r.code == code, r.err
    assert r.out


def test_unknown_gate_name_lists_valid_names():
    r = run_cli(BASE + ["--gate", "recall>=0.5"])
    assert r.code == 2
    assert "unknown metric 'recall'" in r.err
    assert "recall@k" in r.err and "under_refusal" in r.err


@pytest.mark.parametrize("gate", ["precision", "precision=>0.5", "precision>=abc", "precision>=nan"])
def test_malformed_gate_is_usage_error(gate):
    r = run_cli(BASE + ["--gate", gate])
    assert r.code == 2 and "--gate" in r.err


def test_junit_has_one_testcase_per_gate_and_failures():
    r = run_cli(
        BASE + ["--format", "junit", "--gate", "precision>1", "--gates", "precision=1.1,chr=0.75,under=0.05,over=0.1"]
    )
    assert r.code == 1
    root = ET.fromstring(r.out)
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == [
        "precision>=1.1",
        "chr>=0.75",
        "under_refusal<=0.05",
        "over_refusal<=0.1",
        "precision>1",
    ]
    assert cases[0].find("failure") is not None
    assert cases[1].find("skipped") is not None  # the reference short-circuits after a failure
    assert root.find("testsuite").get("failures") == "2"


def test_text_and_markdown_show_status():
    r = run_cli(BASE + ["--format", "text", "--gate", "chr>=0.99"])
    assert "result: PASS" in r.out and "chr>=0.99" in r.out
    r = run_cli(BASE + ["--format", "markdown", "--gate", "chr>1"])
    assert r.code == 1 and "FAIL" in r.out.splitlines()[0] and "| `chr>1` |" in r.out


def test_output_is_written_atomically(tmp_path):
    target = tmp_path / "report.json"
    r = run_cli(BASE + ["--output", str(target)])
    assert r.code == 0 and r.out == ""
    assert json.loads(target.read_text())["pass"] is True
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_bad_input_leaves_existing_output_untouched(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("previous run\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"qid": "A0001"}\n{"qid": \n')
    r = run_cli(["grounding", "--gold", str(bad), "--trace", TRACE, "--output", str(target)])
    assert r.code == 2 and "bad.jsonl:2:" in r.err
    assert target.read_text() == "previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "report.json"]


def test_output_into_missing_directory(tmp_path):
    r = run_cli(BASE + ["--output", str(tmp_path / "nope" / "r.json")])
    assert r.code == 2 and "directory does not exist" in r.err


def test_missing_file_and_directory_inputs(tmp_path):
    r = run_cli(["grounding", "--gold", str(tmp_path / "missing.jsonl"), "--trace", TRACE])
    assert r.code == 2 and "missing.jsonl: cannot open" in r.err
    r = run_cli(["grounding", "--gold", str(tmp_path), "--trace", TRACE])
    assert r.code == 2 and "is a directory" in r.err


def test_usage_errors():
    assert run_cli([]).code == 2
    r = run_cli(["grounding", "--gold", GOLD])
    assert r.code == 2 and "--trace" in r.err
    r = run_cli(["nosuchcommand"])
    assert r.code == 2 and "invalid choice" in r.err


def test_help_and_version_exit_zero():
    r = run_cli(["--help"])
    assert r.code == 0 and "grounding" in r.out
    r = run_cli(["--version"])
    assert r.code == 0 and r.out.startswith("rageval-min ")


def test_internal_error_is_one_line_exit_3(monkeypatch):
    from rageval_min import grounding

    def boom(*a, **k):
        raise RuntimeError("synthetic bug")

    monkeypatch.setattr(grounding, "score_file", boom)
    r = run_cli(BASE)
    assert r.code == 3
    assert r.err.strip() == (
        "rageval-min: internal error: RuntimeError: synthetic bug "
        "(this is a bug; set RAGEVAL_MIN_TRACEBACK=1 for details)"
    )


def test_demo_runs_every_family():
    r = run_cli(["demo"])
    assert r.code == 0, r.out + r.err
    assert "== grounding ==" in r.out
    assert "all families reproduce their expected outputs" in r.out


def test_demo_detects_a_wrong_expected_output(tmp_path):
    import shutil

    samples = tmp_path / "gold_samples"
    shutil.copytree(os.path.join(ROOT, "gold_samples"), samples)
    exp = samples / "grounding" / "expected_wfgy.json"
    exp.write_text(exp.read_text().replace('"answered": 3', '"answered": 4'))
    r = run_cli(["demo", "--samples", str(samples)])
    # not 1 (a failed gate): a demo that does not reproduce its samples is an error
    assert r.code == 2 and "FAIL  grounding" in r.out
    assert r.err.count("\n") == 1 and "demo: 1 case(s)" in r.err


def test_subprocess_exit_codes(tmp_path):
    ok = run_subprocess(BASE + ["--format", "wfgy"])
    assert ok.code == 0, ok.err
    with open(os.path.join(DATA, "wfgy", "sample_expected_output.json"), encoding="utf-8") as fh:
        assert ok.out == fh.read()
    failed = run_subprocess(BASE + ["--gate", "precision>1"])
    assert failed.code == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe not utf8\n")
    err = run_subprocess(["grounding", "--gold", str(bad), "--trace", TRACE])
    assert err.code == 2
    assert err.err.strip().startswith("rageval-min: error: ") and "not valid UTF-8" in err.err
    assert "Traceback" not in err.err
    quick = run_subprocess(
        ["grounding", "--gold", "gold_samples/grounding/gold.jsonl", "--trace", "gold_samples/grounding/trace.jsonl"]
    )
    assert quick.code == 1  # the README quickstart: precision 0.6667 fails the default 0.80 gate


def test_subprocess_internal_error_has_no_traceback(tmp_path):
    # A module that breaks a core function, loaded before the CLI runs.
    (tmp_path / "sitecustomize.py").write_text(
        "import rageval_min.grounding as g\ndef boom(*a, **k):\n    raise ZeroDivisionError('x')\ng.score_file = boom\n"
    )
    env = {"PYTHONPATH": str(tmp_path) + os.pathsep + ROOT}
    r = run_subprocess(BASE, env=env)
    assert r.code == 3 and "Traceback" not in r.err and "internal error: ZeroDivisionError" in r.err
