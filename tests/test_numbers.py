"""Regression tests of issue #23 (items 1 and 4): the inputs and options the fuzz target
(tests/test_fuzz.py) found to crash, each now exit 2 with one line naming file, line and field,
and no output left behind.  The readers themselves are tested by their doctests
(rageval_min/_numbers.py)."""

import json
import os

import pytest
from conftest import ROOT, run_cli

from rageval_min import _numbers
from rageval_min.errors import ScoringError

G = os.path.join(ROOT, "gold_samples")
HUGE = "9" * 401


def _replace_line(src, dst, index, old, new):
    with open(src, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert old in lines[index], lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(dst)


def _one_line_error(r, *parts):
    assert r.code == 2, (r.code, r.err)
    lines = r.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rageval-min: error: "), r.err
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


COMPARE = ["--key", "qid", "--higher-is-better", "correct", "--higher-is-better", "f1"]


@pytest.mark.parametrize(
    "value,problem",
    [(HUGE, "an integer of 401 digits is beyond the float range"), ("1e400", "expected a finite number, got inf")]
    + [("1e308", "beyond the supported magnitude")],
)
def test_compare_values_beyond_range(tmp_path, value, problem):
    base = _replace_line(
        os.path.join(G, "compare", "baseline.jsonl"), tmp_path / "b.jsonl", 3, '"f1": 0.456', f'"f1": {value}'
    )
    out = tmp_path / "r.json"
    cand = os.path.join(G, "compare", "candidate.jsonl")
    r = run_cli(["compare", "--baseline", base, "--candidate", cand, *COMPARE, "--output", f"json:{out}"])
    _one_line_error(r, "b.jsonl:4: f1: ", problem)
    assert not out.exists()


def test_compare_family_on_rows_it_did_not_write():
    b, c = (os.path.join(G, "compare", n) for n in ("baseline.jsonl", "candidate.jsonl"))
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--key", "qid", "--family", "grounding"] + COMPARE[2:])
    _one_line_error(r, "baseline.jsonl:1: not a grounding score item row")


def test_compare_family_rows_missing_a_declared_measure(tmp_path):
    """ir item rows without one of the measures the accumulator averages: exit 2 naming file and field
    (was a KeyError in the accumulator's finalize, exit 3)."""
    rows_path = tmp_path / "a.jsonl"
    r = run_cli(
        ["ir", "--run", os.path.join(G, "ir", "run.txt"), "--qrels", os.path.join(G, "ir", "qrels.txt")]
        + ["--per-item", str(rows_path)]
    )
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in rows_path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        del row["P@10"]
    b = tmp_path / "b.jsonl"
    b.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    _one_line_error(run_cli(["compare", "--baseline", str(b), "--candidate", str(b)]), "b.jsonl: P@10: not ir score")


def test_correlate_integer_beyond_float_range(tmp_path):
    path = _replace_line(os.path.join(G, "factuality", "pairs.jsonl"), tmp_path / "p.jsonl", 1, "[40,", f"[{HUGE},")
    r = run_cli(["factuality", "correlate", "--input", path, "--strict"])
    assert r.code in (0, 2) and "internal error" not in r.err, r.err
    if r.code == 2:
        _one_line_error(r, "p.jsonl")


def test_correlate_lines_are_strict_json(tmp_path):
    path = _replace_line(
        os.path.join(G, "factuality", "pairs.jsonl"), tmp_path / "p.jsonl", 0, '"id": "ties both"', '"id": 1e400'
    )
    r = run_cli(["factuality", "correlate", "--input", path])
    assert r.code == 0, r.err
    first = json.loads(r.out.splitlines()[0], parse_constant=pytest.fail)
    assert first["id"] is None


def test_f1k_huge_max_claims_is_a_usage_error():
    r = run_cli(
        ["factuality", "f1k", "--input", os.path.join(G, "factuality", "counts.jsonl"), "--max-claims", "9" * 5000]
    )
    _one_line_error(r, "--max-claims")


def test_mtrag_summarize_value_beyond_float_range(tmp_path):
    src = os.path.join(G, "mtrag", "expected_conditioned.jsonl")
    path = _replace_line(src, tmp_path / "c.jsonl", 0, '"Recall":[0.2]', f'"Recall":[{HUGE}]')
    r = run_cli(["mtrag", "summarize", "--input", path, "--setting", "demo"])
    _one_line_error(r, "c.jsonl:1: metrics.Recall: an integer of 401 digits")


def test_deep_nesting_is_an_input_error(tmp_path):
    src = os.path.join(G, "mtrag", "judged.jsonl")
    deep = "[" * 900 + "]" * 900
    path = _replace_line(src, tmp_path / "j.jsonl", 0, '"metrics": {', f'"deep": {deep}, "metrics": {{')
    r = run_cli(["mtrag", "condition", "--input", path, "--records", str(tmp_path / "out.jsonl")])
    _one_line_error(r, "j.jsonl:1: JSON nested more than 200 levels deep")
    assert not (tmp_path / "out.jsonl").exists()


def test_mtrag_retrieval_qrels_not_utf8(tmp_path):
    qrels = tmp_path / "q.tsv"
    qrels.write_bytes(b"query-id\tcorpus-id\tscore\nq1\td1\t1\n\xff\xfe\n")
    preds = tmp_path / "p.jsonl"
    row = {"task_id": "q1", "Collection": "c", "contexts": [{"document_id": "d1", "score": 1.0}]}
    preds.write_text(json.dumps(row) + "\n", encoding="utf-8")
    r = run_cli(["mtrag", "retrieval", "--input", str(preds), "--qrels", f"c={qrels}"])
    _one_line_error(r, "q.tsv", "not UTF-8")


def test_agreement_labels(tmp_path):
    judge = os.path.join(G, "judge", "agreement_judge.jsonl")
    human = _replace_line(os.path.join(G, "judge", "agreement_human.jsonl"), tmp_path / "h.jsonl", 1, '"no"', HUGE)
    r = run_cli(["judge", "agreement", "--judge", judge, "--human", human])
    _one_line_error(r, "h.jsonl:2: ", "an integer of 401 digits")
    human = _replace_line(
        os.path.join(G, "judge", "agreement_human.jsonl"), tmp_path / "h2.jsonl", 1, '"no"', '"maybe"'
    )
    r = run_cli(["judge", "agreement", "--judge", judge, "--human", human, "--labels", "no,partial,yes"])
    _one_line_error(r, "h2.jsonl:2: id='r02': label 'maybe' is not in the given label order")
    r = run_cli(["judge", "agreement", "--judge", judge, "--human", human, "--min-n", HUGE])
    _one_line_error(r, "--min-n: an integer of more than 30 digits is not supported, got a number of 401 digits")


def test_rgb_mix_passage_num_is_bounded():
    r = run_cli(
        ["rgb", "mix", "--input", os.path.join(G, "rgb", "data_en.jsonl"), "--dataset", "en", "--passage-num", HUGE]
    )
    _one_line_error(r, "--passage-num: expected a number of passages <= 1000000, got a number of 401 digits")


def test_a_judge_cache_note_before_an_error_is_one_line(tmp_path):
    """A replay cache whose last line was cut short prints a note; a prompt it has no answer for is
    then an input error: one line, the note folded into it."""
    cache = tmp_path / "cache.jsonl"
    cache.write_text(
        open(os.path.join(G, "judge", "cache.jsonl"), encoding="utf-8").read() + '{"key": "x', encoding="utf-8"
    )
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"id": "n", "prompt": "a prompt nobody answered"}) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    argv = ["judge", "run", "--input", str(prompts), "--records", str(answers), "--judge", f"replay:{cache}"]
    line = _one_line_error(run_cli(argv + ["--param", "temperature=0"]), "cache.jsonl", "no cached answer")
    assert "(note: judge cache " in line and "unfinished last line" in line
    assert not answers.exists()


def test_no_output_is_left_when_a_gate_names_no_metric(tmp_path):
    """veriscore's metric names come from the data, so a gate is checked after scoring: the item rows
    and the partial state already written are not committed (one run's outputs are one unit)."""
    items, state, report = (tmp_path / n for n in ("i.jsonl", "s.json", "r.json"))
    argv = ["factuality", "veriscore", "--input", os.path.join(G, "factuality", "veriscore.jsonl")]
    argv += ["--per-item", str(items), "--emit-partial", str(state), "--output", f"json:{report}", "--gate", "nope>=0"]
    _one_line_error(run_cli(argv), "nope")
    assert sorted(os.listdir(tmp_path)) == []
    r = run_cli(argv[:-2])
    assert r.code == 0 and items.exists() and state.exists() and report.exists(), r.err


def test_readers_name_the_location():
    with pytest.raises(ScoringError, match=r"^x.jsonl:3: n: expected a count"):
        _numbers.count(True, path="x.jsonl", line=3, field="n")
    assert _numbers.as_float(-(10**300)) == -1e300
    assert _numbers.option_float(0, 1)("1") == 1.0


def test_ir_grade_beyond_a_c_long(tmp_path):
    """trec_eval reads a grade as a C long: a longer one is an input error, not an overflow later."""
    qrels = tmp_path / "q.txt"
    qrels.write_text(f"1 0 d1 {HUGE}\n", encoding="utf-8")
    r = run_cli(["ir", "--run", os.path.join(G, "ir", "run.txt"), "--qrels", str(qrels)])
    _one_line_error(r, "q.txt:1: rel: must be an integer grade, got a number of 401 characters")


def test_mtrag_condition_value_beyond_float_range(tmp_path):
    src = os.path.join(G, "mtrag", "judged.jsonl")
    path = _replace_line(src, tmp_path / "j.jsonl", 1, '"RB_agg": [0.5601683920412059]', f'"RB_agg": [{HUGE}]')
    r = run_cli(["mtrag", "condition", "--input", path, "--records", str(tmp_path / "out.jsonl")])
    _one_line_error(r, "j.jsonl:2: ", "an integer of 401 digits is beyond the float range")
    assert not (tmp_path / "out.jsonl").exists()


def test_mtrag_algorithmic_metric_beyond_float_range(tmp_path):
    src = os.path.join(G, "mtrag", "tasks.jsonl")
    with open(src, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    rows[1].setdefault("metrics", {})["BertscoreR"] = [10**400]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run_cli(["mtrag", "algorithmic", "--input", str(path), "--records", str(tmp_path / "out.jsonl")])
    _one_line_error(r, "t.jsonl:2: ", "metrics.BertscoreR: an integer of 401 digits")
    assert not (tmp_path / "out.jsonl").exists()


def test_compare_writer_field_of_another_type(tmp_path):
    rows = [{"qid": f"q{i}", "x": i % 2} for i in range(3)]
    rows[1]["_rageval_min"] = {"a": 1}  # line 1 (read to know the writer) has none
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run_cli(["compare", "--baseline", str(path), "--candidate", str(path), "--key", "qid", "--neither", "x"])
    _one_line_error(r, "b.jsonl:2: _rageval_min: must be a string, got dict")
