"""Loud schema mistakes (issue #24 item 1): the declared INPUTS of each command are held against the
records, as diagnostics by default (numbers unchanged) and as exit 2 under --strict; swapped inputs are
always exit 2."""

import json
import os

from conftest import ROOT, run_cli

from rageval_min import grounding

G = os.path.join(ROOT, "gold_samples", "grounding")
GOLD, TRACE = os.path.join(G, "gold.jsonl"), os.path.join(G, "trace.jsonl")


def _lines(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _run(gold, trace, *extra):
    r = run_cli(["grounding", "--gold", gold, "--trace", trace, "--format", "json", "--gate", "precision>=0", *extra])
    return r, (json.loads(r.out) if r.out else None)


def test_swapped_inputs_are_an_error_not_a_pass():
    r, _ = _run(TRACE, GOLD)
    assert r.code == 2 and r.err.count("\n") == 1 and "are the two files swapped?" in r.err


def test_a_misspelled_field_is_named_and_strict_makes_it_exit_2(tmp_path):
    gold = [dict(r) for r in _lines(GOLD)]
    for r in gold:
        r["gold_citation"] = r.pop("gold_citations", [])
    path = _write(tmp_path / "gold.jsonl", gold)
    r, out = _run(path, TRACE)
    assert r.code == 0 and any("gold_citation: did you mean gold_citations?" in d for d in out["diagnostics"])
    assert out["result"] == grounding.score_file(path, TRACE, k=5).result  # the reference's numbers, unchanged
    strict = run_cli(["grounding", "--gold", path, "--trace", TRACE, "--gate", "precision>=0", "--strict"])
    assert strict.code == 2 and strict.err.count("\n") == 1 and "did you mean gold_citations?" in strict.err


def test_a_missing_required_field_says_what_the_reference_made_of_it(tmp_path):
    trace = _lines(TRACE)
    for r in trace[:2]:
        r.pop("answer_json", None)
    path = _write(tmp_path / "trace.jsonl", trace)
    r, out = _run(GOLD, path)
    notes = [d for d in out["diagnostics"] if "have no answer_json" in d]
    assert notes and notes[0].endswith("as the reference reads it") and f"2 of {len(trace)}" in notes[0]
    assert out["result"] == grounding.score_file(GOLD, path, k=5).result
    assert run_cli(["grounding", "--gold", GOLD, "--trace", path, "--strict"]).code == 2


def test_another_family_gets_the_same_diagnostics(tmp_path):
    rows = _lines(os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl"))
    for r in rows:
        r["idd"] = r.pop("id")
    path = _write(tmp_path / "pairs.jsonl", rows)
    r = run_cli(["rouge", "--input", path, "--summary", "--format", "json"])
    assert r.code == 0 and any("records have idd: did you mean id?" in d for d in json.loads(r.out)["diagnostics"])
    r = run_cli(["rouge", "--input", path, "--summary", "--strict"])
    assert r.code == 2 and r.err.count("\n") == 1 and "did you mean id?" in r.err
