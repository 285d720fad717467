"""``rageval-min rouge``: in-process and as a subprocess."""

import json
import os

from conftest import ROOT, need, run_cli, run_subprocess, run_without_package

PAIRS = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
EXPECTED = os.path.join(ROOT, "gold_samples", "rouge", "expected.jsonl")


def _expected() -> str:
    with open(EXPECTED, encoding="utf-8") as fh:
        return fh.read()


def test_jsonl_output_matches_gold() -> None:
    r = run_cli(["rouge", "--input", PAIRS])
    assert (r.code, r.err) == (0, "")
    assert r.out == _expected()
    first = json.loads(r.out.splitlines()[3])  # empty prediction: int zeros for L/Lsum
    assert first["rougeL"] == {"precision": 0, "recall": 0, "fmeasure": 0}
    assert "0.0" in json.dumps(first["rouge1"])


def test_types_stemmer_and_output_file(tmp_path) -> None:
    out = tmp_path / "o.jsonl"
    r = run_cli(["rouge", "--input", PAIRS, "--rouge-types", "rougeL, rouge3", "--use-stemmer", "--output", str(out)])
    assert (r.code, r.out, r.err) == (0, "", "")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 6 and all(list(x) == ["rougeL", "rouge3"] for x in lines)


def test_summary_and_gates() -> None:
    r = run_cli(["rouge", "--input", PAIRS, "--summary", "--gate", "rougeL.fmeasure>=0.4", "--gate", "records==6"])
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["family"] == "rouge" and doc["result"]["records"] == 6
    assert "variants=none" in doc["signature"] and "stem=false" in doc["signature"]
    rows = [json.loads(x) for x in _expected().splitlines()]
    mean = sum(x["rougeL"]["fmeasure"] for x in rows) / 6
    assert doc["result"]["mean"]["rougeL"]["fmeasure"] == mean
    r = run_cli(["rouge", "--input", PAIRS, "--summary", "--format", "text", "--gate", "rougeL.fmeasure>=0.5"])
    assert r.code == 1 and "FAIL" in r.out
    r = run_cli(["rouge", "--input", PAIRS, "--summary", "--gate", "rougeX.fmeasure>=0.5"])
    assert r.code == 2 and "rougeX.fmeasure" in r.err


def test_gate_without_summary_reports_on_stderr() -> None:
    r = run_cli(["rouge", "--input", PAIRS, "--gate", "rouge1.fmeasure>=0.9"])
    assert r.code == 1 and r.out == _expected()
    assert r.err == "gate rouge1.fmeasure>=0.9 failed: 0.5461\n"  # one line per failed gate, none for passing ones
    r = run_cli(["rouge", "--input", PAIRS, "--gate", "rouge1.fmeasure>=0.5"])
    assert (r.code, r.out, r.err) == (0, _expected(), "")


def test_unicode_variant_in_signature() -> None:
    for extra in (["--tokenizer", "unicode"], ["--variant", "unicode_tokens"]):
        r = run_cli(["rouge", "--input", PAIRS, "--summary"] + extra)
        assert r.code == 0
        assert "variants=unicode_tokens" in json.loads(r.out)["signature"]


def test_input_errors(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"prediction": 3, "reference": "x"}\n'
        '{"prediction": "a"}\n'
        '{"prediction": "a", "references": []}\n'
        '{"prediction": "a", "reference": "b", "references": ["c"]}\n'
        "[1]\n"
    )
    out = tmp_path / "out.jsonl"
    r = run_cli(["rouge", "--input", str(bad), "--output", str(out)])
    assert r.code == 2
    assert f"{bad}:1: prediction: expected a string, got int" in r.err
    assert not out.exists()  # no partial output
    for argv, msg in [
        (["--rouge-types", "rouge0"], "rougen requires positive n"),
        (["--rouge-types", "rouge10"], "invalid rouge type"),
        (["--rouge-types", ","], "no rouge type"),
        (["--format", "text"], "--format applies to --summary"),
    ]:
        r = run_cli(["rouge", "--input", PAIRS] + argv)
        assert r.code == 2 and msg in r.err, (argv, r.err)
    r = run_cli(["rouge", "--input", str(tmp_path / "missing.jsonl")])
    assert r.code == 2 and "Traceback" not in r.err


def test_backend_rouge_score_agrees() -> None:
    need("rouge_score", "rouge")
    r = run_cli(["rouge", "--input", PAIRS, "--backend", "rouge-score"])
    assert (r.code, r.out) == (0, _expected())
    r = run_cli(["rouge", "--input", PAIRS, "--backend", "rouge-score", "--summary", "--use-stemmer"])
    s = run_cli(["rouge", "--input", PAIRS, "--summary", "--use-stemmer"])
    a, b = json.loads(r.out), json.loads(s.out)
    assert a["result"] == b["result"] and "backend=rouge-score" in a["signature"]


def test_backend_missing_package_names_the_install(tmp_path) -> None:
    r = run_without_package("rouge_score", ["rouge", "--input", PAIRS, "--backend", "rouge-score"], tmp_path)
    assert r.code == 2
    assert "pip install 'rageval-min[rouge]'" in r.err and "Traceback" not in r.err


def test_subprocess_exit_codes() -> None:
    r = run_subprocess(["rouge", "--input", PAIRS])
    assert (r.code, r.out) == (0, _expected())
    r = run_subprocess(["rouge", "--input", PAIRS, "--summary", "--gate", "rouge2.fmeasure>0.9"])
    assert r.code == 1
    r = run_subprocess(["rouge", "--input", PAIRS, "--rouge-types", "bogus"])
    assert r.code == 2 and r.err.startswith("rageval-min: error:")


def test_demo_cases_reproduce_the_gold_files() -> None:
    # what the old hand-written demo() checked: the per-pair output and the summary of the gold pairs
    from rageval_min import _demo
    from rageval_min.cli import main

    results = _demo.run_family(os.path.join(ROOT, "gold_samples"), "rouge", main)
    assert [r.ok for r in results] == [True, True], [r.detail for r in results]
    r = run_cli(["rouge", "--input", PAIRS, "--summary"])
    with open(os.path.join(ROOT, "gold_samples", "rouge", "expected_summary.json"), encoding="utf-8") as fh:
        assert json.dumps(json.loads(r.out)["result"]) == json.dumps(json.load(fh))  # floats and key order exact
