"""ir: the trec_eval / pytrec_eval conformance vectors (tests/data/ir), at full precision and byte for byte."""

import json
import os

import pytest
from conftest import DATA

from rageval_min.errors import ScoringError
from rageval_min.ir import format_trec_eval, parse_measures, score_file

CASES = [json.loads(line) for line in open(os.path.join(DATA, "ir", "ir_cases.jsonl"), encoding="utf-8")]
IDS = [c["id"] for c in CASES]

#: The measures whose rows the vectors hold, and those pytrec_eval returned (its default cut-offs).
TEXT_MEASURES = [
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P.5,10", "recall.5,10",
    "ndcg", "ndcg_cut.5,10", "map_cut.10", "success.1,5",
]  # fmt: skip
CUTS = "5,10,15,20,30,100,200,500,1000"
PYTREC_MEASURES = [
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "ndcg",
    f"P.{CUTS}", f"recall.{CUTS}", f"ndcg_cut.{CUTS}", f"map_cut.{CUTS}", "success.1,5,10",
]  # fmt: skip
SETTINGS = {
    "trec_eval_9.0.8": ("9.0.8", "skip"),
    "trec_eval_10.0": ("10.0", "skip"),
    "trec_eval_10.0_c": ("10.0", "zero"),
}


def write_case(case, tmp_path):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in case["qrels"]), encoding="utf-8")
    run.write_text("".join(f"{q} Q0 {d} {k} {s!r} tag\n" for q, d, k, s in case["run"]), encoding="utf-8")
    return str(qrels), str(run)


def _text(rows):
    return "".join(f"{m:<22}\t{q}\t{v}\n" for m, q, v in rows)


def _strip_header(text):
    return "".join(line for line in text.splitlines(True) if not line.startswith(("runid ", "num_q ")))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pytrec_eval_values_at_full_precision(case, tmp_path):
    expected = case["pytrec_eval_0.5.11"]
    qrels, run = write_case(case, tmp_path)
    if "error" in expected:  # pytrec_eval crashed: a topic whose judgments are all negative
        report = score_file(run, qrels, measures=PYTREC_MEASURES, topics=True)
        assert any("only negative" in d for d in report.diagnostics)
        return
    if not expected:  # no topic in common, or an empty file: an input error here
        with pytest.raises(ScoringError):
            score_file(run, qrels, measures=PYTREC_MEASURES)
        return
    if case["id"] == "duplicate_run_doc":  # pytrec_eval's dict keeps the last; trec_eval refuses
        with pytest.raises(ScoringError, match="retrieved twice"):
            score_file(run, qrels, measures=PYTREC_MEASURES)
        return
    report = score_file(run, qrels, measures=PYTREC_MEASURES, topics=True)
    got = {t["qid"]: t for t in report.result["topics"]}
    assert set(got) == set(expected)
    names = {m.trec_name: m.name for m in parse_measures(PYTREC_MEASURES)}
    for qid, values in expected.items():
        for trec_name, value in values.items():
            if trec_name in names:
                assert got[qid][names[trec_name]] == value, (qid, trec_name)
        assert len([n for n in values if n in names]) == len(names)


def _expect_error_or_prefix(case, key, version, missing, qrels, run):
    out = case[key]
    if out["exit"] == 2 or (out["exit"] == 7):  # empty file / no topic in common
        with pytest.raises(ScoringError):
            score_file(run, qrels, measures=TEXT_MEASURES, trec_eval=version, missing=missing)
        return
    assert out["exit"] == 4, out
    if "duplicate docs" in out["stderr"]:
        with pytest.raises(ScoringError, match="retrieved twice"):
            score_file(run, qrels, measures=TEXT_MEASURES, trec_eval=version, missing=missing)
        return
    # 10.0 without -c stops at a qrels topic absent from the run; trec_eval stops at an all-negative
    # topic: what it printed before stopping is the beginning of our output.
    if not out["rows"] and not set(q for q, *_ in case["qrels"]) & set(q for q, *_ in case["run"]):
        with pytest.raises(ScoringError, match="no topic is both"):
            score_file(run, qrels, measures=TEXT_MEASURES, trec_eval=version, missing=missing)
        return
    report = score_file(run, qrels, measures=TEXT_MEASURES, trec_eval=version, missing=missing, topics=True)
    assert _strip_header(format_trec_eval(report)).startswith(_text(out["rows"]))
    if "Can't calculate" in out["stderr"]:
        assert any("only negative" in d for d in report.diagnostics)
    else:
        assert "not found in qrels" in out["stderr"]


@pytest.mark.parametrize("key", list(SETTINGS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_trec_eval_text_byte_for_byte(case, key, tmp_path):
    version, missing = SETTINGS[key]
    qrels, run = write_case(case, tmp_path)
    if case[key]["exit"] != 0:
        _expect_error_or_prefix(case, key, version, missing, qrels, run)
        return
    report = score_file(run, qrels, measures=TEXT_MEASURES, trec_eval=version, missing=missing, topics=True)
    text = format_trec_eval(report)
    assert _strip_header(text) == _text(case[key]["rows"])
    lines = text.splitlines()
    assert "runid                 \tall\ttag" in lines
    assert f"num_q                 \tall\t{report.result['num_q']}" in lines


def test_float32_tie_depends_on_the_version(tmp_path):
    case = next(c for c in CASES if c["id"] == "float32_tie")
    qrels, run = write_case(case, tmp_path)
    old = score_file(run, qrels, measures=["RR"], trec_eval="9.0.8").metrics["RR"]
    new = score_file(run, qrels, measures=["RR"], trec_eval="10.0").metrics["RR"]
    assert (old, new) == (0.5, 1.0)
