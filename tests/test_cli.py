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
    assert "== grounding (" in r.out
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


# --------------------------------------------------------------------------- the front door (issue 13)

SAMPLE = ["grounding", "--gold", "gold_samples/grounding/gold.jsonl", "--trace", "gold_samples/grounding/trace.jsonl"]


def _sample(argv):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return run_cli(SAMPLE + argv)
    finally:
        os.chdir(cwd)


def test_user_gate_alone_decides():
    # precision is 0.6667: the user's gate passes, the reference's default 0.80 does not apply
    r = _sample(["--gate", "precision>=0.5"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["pass"] is True and [g["gate"] for g in out["gates"]] == ["precision>=0.5"]
    assert out["result"]["pass"] is False  # the reference's own object is unchanged
    assert any("were not applied" in d for d in out["diagnostics"])
    assert r.err == ""


def test_reference_gates_decide_without_gate_and_say_so():
    r = _sample([])
    assert r.code == 1
    assert r.err == "gate precision>=0.80 failed: 0.6667\n"
    assert any("decided by the reference's gates" in d for d in json.loads(r.out)["diagnostics"])


@pytest.mark.parametrize(
    "extra,code",
    [
        (["--gates", "precision=0.5,chr=0.5,under=0.05,over=0.10"], 0),  # explicit --gates decide too
        (["--gates", "precision=0.80,chr=0.75,under=0.05,over=0.10"], 1),
        (["--format", "wfgy"], 1),  # the reference's output format: its gates decide
    ],
)
def test_reference_gates_also_decide_when_asked(extra, code):
    r = _sample(["--gate", "precision>=0.5"] + extra)
    assert r.code == code, r.err


@pytest.mark.parametrize("fmt", ["json", "text", "markdown", "junit", "wfgy"])
def test_failed_gate_is_one_stderr_line_in_every_format(fmt, tmp_path):
    out = tmp_path / "r.out"
    for argv in ([], ["--output", str(out)]):
        r = _sample(["--gate", "chr>=0.9", "--gates", "precision=0,chr=0,under=1,over=1", "--format", fmt] + argv)
        assert r.code == 1
        assert r.err == "gate chr>=0.9 failed: 0.6667\n"


def test_gated_value_is_in_every_written_report(tmp_path):
    targets = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "text", "markdown", "junit")}
    argv = ["--gate", "recall@k>=0.5"]
    for fmt, path in targets.items():
        argv += ["--output", f"{fmt}:{path}"]
    r = _sample(argv)
    assert r.code == 0 and r.out == ""
    for fmt, path in targets.items():
        text = path.read_text()
        assert ("recall@k>=0.5" in text or "recall@k&gt;=0.5" in text) and "0.666" in text, fmt
    assert json.loads(targets["json"].read_text())["gates"][0]["value"] == 2 / 3


@pytest.mark.parametrize("gate", ["nope>=1", "precision=0.8", "precision>=abc"])
def test_bad_gate_is_reported_before_any_work(gate, tmp_path):
    items, out = tmp_path / "items.jsonl", tmp_path / "out.json"
    r = _sample(["--gate", gate, "--per-item", str(items), "--output", str(out)])
    assert r.code == 2 and r.err.count("\n") == 1 and r.err.startswith("rageval-min: error: ")
    assert not items.exists() and not out.exists()


@pytest.mark.parametrize("option", ["--output", "--per-item"])
@pytest.mark.parametrize("how", ["same", "relative", "symlink"])
def test_output_naming_an_input_is_refused_and_the_input_kept(option, how, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(open(os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl"), "rb").read())
    before = gold.read_bytes()
    target = str(gold)
    cwd = os.getcwd()
    if how == "relative":
        os.chdir(tmp_path)
        target = "./gold.jsonl"
    elif how == "symlink":
        os.symlink(gold, tmp_path / "link.jsonl")
        target = str(tmp_path / "link.jsonl")
    try:
        trace = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
        r = run_cli(["grounding", "--gold", str(gold), "--trace", trace, option, target])
    finally:
        os.chdir(cwd)
    assert r.code == 2 and "names the same file as input" in r.err and r.err.count("\n") == 1
    assert gold.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(tmp_path):
    out = str(tmp_path / "x.json")
    r = _sample(["--output", out, "--per-item", out])
    assert r.code == 2 and "same file" in r.err and not os.path.exists(out)


def test_errors_have_one_prefix():
    r = run_cli(["grounding", "--gold", "/nonexistent/g.jsonl", "--trace", "/nonexistent/t.jsonl"])
    assert r.code == 2 and r.err.count("rageval-min") == 1 and r.err.startswith("rageval-min: error: ")
    r = run_cli(["grounding", "--bogus"])
    assert r.code == 2 and r.err.count("rageval-min") == 1, r.err


def _python(code: str):
    """``python -c code`` in a fresh process on the checkout (what the start-up tests look at)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)


def _modules_after(argv) -> set:
    """The modules a fresh process has imported once ``main(argv)`` returned."""
    code = (
        "import io, sys\n"
        "from rageval_min.cli import main\n"
        f"main({argv!r}, stdout=io.StringIO(), stderr=io.StringIO())\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    return set(_python(code).stdout.split())


@pytest.mark.parametrize(
    "argv,allowed",
    [
        (["--help"], set()),
        (SAMPLE, {"grounding"}),
    ],
)
def test_a_command_imports_only_its_own_family(argv, allowed):
    """Start-up cost: the heavy stdlib modules and the other families are not imported."""
    mods = _modules_after(argv)
    from rageval_min.registry import COMMANDS

    families = {c.package for c in COMMANDS if c.package}
    loaded = {m.split(".")[1] for m in mods if m.startswith("rageval_min.")}
    assert loaded & families == allowed
    assert not {m for m in mods if m.startswith("rageval_min.") and m.endswith((".charts", ".judge"))}
    for heavy in ("urllib.request", "http.client", "ssl", "email", "xml.sax", "tempfile", "csv"):
        assert heavy not in mods, heavy


def test_the_rouge_console_command_starts_without_what_it_does_not_use(tmp_path):
    """Start-up cost of ``python -m rageval_min rouge``: modules the run does not need stay
    unimported: shutil (argparse asks it the terminal's width, only for help text), difflib
    (did-you-mean hints), signal.py's enums (the handlers go through _signal), unicodedata (the
    unicode tokenizer), the state-schema classes (partial states) and typing (the modules on
    this path import it for the type checker only: a tenth of the start-up)."""
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"id": 1, "prediction": "a b c", "reference": "a b d"}) + "\n", encoding="utf-8")
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write(' '.join(sorted(sys.modules))))\n"
        f"sys.argv = ['rageval_min', 'rouge', '--input', {str(path)!r}]\n"
        "runpy.run_module('rageval_min', run_name='__main__', alter_sys=True)\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rouge1"]["precision"] == 2 / 3
    mods = set(proc.stderr.split())
    assert "rageval_min.rouge.cli" in mods and "argparse" in mods
    for name in ("shutil", "difflib", "signal", "unicodedata", "rageval_min._state_schema", "typing"):
        assert name not in mods, name


def test_help_lists_the_declared_metrics():
    """--help of a command shows what each of its metrics is, from the accumulator's METRICS."""
    r = run_cli(["grounding", "--help"])
    assert r.code == 0
    tail = r.out[r.out.index("metrics (direction") :]
    assert "under_refusal  lower    rate" in tail and "answered       neither  count" in tail
    assert "metrics (direction" not in run_cli(["grounding", "--gold", "x"]).err


def test_scoring_steps_do_not_load_the_judge_transports():
    """mtrag algorithmic (and every scoring step) parses its options without the HTTP/cmd judge stack."""
    mods = _modules_after(["mtrag", "algorithmic", "--help"])
    assert "rageval_min.mtrag.run_algorithmic" in mods
    for heavy in ("http.client", "ssl", "subprocess", "rageval_min.judges.http", "rageval_min.judges.command"):
        assert heavy not in mods, heavy
