"""The rouge family contract: item rows (``--per-item``), the accumulator and ``score_file``."""

import json
import os

import pytest
from conftest import ROOT, item_rows, need, run_cli

from rageval_min import rouge
from rageval_min._contract import accumulator_from_state
from rageval_min.errors import ScoringError
from rageval_min.report.render_json import render_json

PAIRS = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
EXPECTED = os.path.join(ROOT, "gold_samples", "rouge", "expected.jsonl")
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
IDS = ["basic", "multi-sentence", "multi-reference", "empty-prediction", "non-ascii", "punctuation-numbers"]


def _lines(path) -> list:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(x) for x in fh.read().splitlines()]


def _flat(nested: dict) -> dict:
    return {f"{t}.{k}": v for t, s in nested.items() for k, v in s.items()}


@pytest.mark.parametrize("summary", [False, True])
def test_per_item_rows_in_input_order_with_ids(tmp_path, summary) -> None:
    items = tmp_path / "items.jsonl"
    argv = ["rouge", "--input", PAIRS, "--per-item", str(items)] + (["--summary"] if summary else [])
    r = run_cli(argv)
    assert (r.code, r.err) == (0, "")
    plain = run_cli(["rouge", "--input", PAIRS] + (["--summary"] if summary else []))
    assert r.out == plain.out  # --per-item changes nothing else
    text = items.read_text(encoding="utf-8")
    rows = item_rows(text)
    assert [row["id"] for row in rows] == IDS
    for row, nested in zip(rows, _lines(EXPECTED)):
        assert list(row) == ["id"] + [f"{t}.{k}" for t in TYPES for k in ("precision", "recall", "fmeasure")]
        assert {k: v for k, v in row.items() if k != "id"} == _flat(nested)
        assert rouge.reference_json(row, TYPES) == nested
    # the int zeros of rougeL/rougeLsum on an empty prediction survive (as in rouge-score)
    assert '"rougeL.precision": 0, ' in text.splitlines()[3]


def test_per_item_rows_without_id_carry_the_line_number(tmp_path) -> None:
    src = tmp_path / "p.jsonl"
    src.write_text(
        '{"prediction": "a b", "reference": "a c"}\n\n{"id": 7, "prediction": "x", "reference": "x"}\n'
        '{"prediction": "q", "references": ["q r", "q"]}\n'
    )
    items = tmp_path / "items.jsonl"
    r = run_cli(["rouge", "--input", str(src), "--rouge-types", "rouge1", "--per-item", str(items)])
    assert r.code == 0, r.err
    rows = item_rows(items.read_text())
    assert [next(iter(row.items())) for row in rows] == [(rouge.LINE_KEY, 1), ("id", 7), ("line", 4)]
    assert rows[2]["rouge1.fmeasure"] == 1.0  # the best reference


def test_score_file_is_the_cli(tmp_path) -> None:
    seen = []
    report = rouge.score_file(PAIRS, rouge_types=TYPES, on_item=seen.append)
    r = run_cli(["rouge", "--input", PAIRS, "--summary"])
    assert render_json(report, ()) == r.out
    assert [row["id"] for row in seen] == IDS
    assert report.metrics["records"] == 6 and set(report.metrics) == set(rouge.metric_names(TYPES))
    # score_item gives the same rows
    with open(PAIRS, encoding="utf-8") as fh:
        records = [json.loads(x) for x in fh]
    assert [rouge.score_item(rec, rouge_types=TYPES) for rec in records] == seen


@pytest.mark.parametrize("stem", [False, True])
def test_score_file_backends_agree(stem) -> None:
    base = rouge.score_file(PAIRS, rouge_types=TYPES, use_stemmer=stem)
    for backend, module, extra in (("rapidfuzz", "rapidfuzz", "fast"), ("rouge-score", "rouge_score", "rouge")):
        need(module, extra)
        rows = []
        rep = rouge.score_file(PAIRS, rouge_types=TYPES, use_stemmer=stem, backend=backend, on_item=rows.append)
        assert json.dumps(rep.result) == json.dumps(base.result)
        assert "|backend=" + ("rouge-score" if backend == "rouge-score" else "rapidfuzz-") in rep.signature
        assert len(rows) == 6
    with pytest.raises(ScoringError, match="unknown backend"):
        rouge.score_file(PAIRS, rouge_types=TYPES, backend="nope")


def test_no_valid_record_is_an_input_error(tmp_path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    with pytest.raises(ScoringError, match="no records"):
        rouge.score_file(str(empty), rouge_types=TYPES)
    out, items = tmp_path / "out.jsonl", tmp_path / "items.jsonl"
    for extra in ([], ["--summary"]):
        r = run_cli(["rouge", "--input", str(empty), "--output", str(out), "--per-item", str(items)] + extra)
        assert r.code == 2 and "no records" in r.err
        assert not out.exists() and not items.exists()


def test_a_bad_record_leaves_no_item_file(tmp_path) -> None:
    src = tmp_path / "p.jsonl"
    src.write_text('{"prediction": "a", "reference": "a"}\n{"prediction": "a"}\n')
    items = tmp_path / "items.jsonl"
    r = run_cli(["rouge", "--input", str(src), "--summary", "--per-item", str(items)])
    assert r.code == 2 and f"{src}:2: reference: missing" in r.err
    assert not items.exists()


def test_gates_fail_one_line_each_and_are_checked_first(tmp_path) -> None:
    gates = ["--gate", "rouge1.fmeasure>=0.9", "--gate", "records>=3", "--gate", "rougeL.recall>0.5"]
    for extra in ([], ["--summary"]):
        r = run_cli(["rouge", "--input", PAIRS] + extra + gates)
        assert r.code == 1
        assert r.err == "gate rouge1.fmeasure>=0.9 failed: 0.5461\ngate rougeL.recall>0.5 failed: 0.4405\n"
    items, out = tmp_path / "items.jsonl", tmp_path / "o.jsonl"
    r = run_cli(
        ["rouge", "--input", PAIRS, "--rouge-types", "rouge1", "--gate", "rougeL.fmeasure>=0.1"]
        + ["--per-item", str(items), "--output", str(out)]
    )
    assert r.code == 2 and "rougeL.fmeasure" in r.err
    assert not items.exists() and not out.exists()
    r = run_cli(["rouge", "--input", PAIRS, "--per-item", PAIRS])
    assert r.code == 2 and "same file" in r.err


def test_accumulator_merges_exactly() -> None:
    rows = []
    rouge.score_file(PAIRS, rouge_types=TYPES, on_item=rows.append)
    acc = rouge.RougeAccumulator(rouge_types=TYPES)
    for row in rows:
        acc.add(row)
    one = render_json(acc.finalize(), ())
    # a constant-memory accumulator (what score_file uses) may be the first part, not a later one
    head = rouge.RougeAccumulator(rouge_types=TYPES, keep_values=False)
    tail = rouge.RougeAccumulator(rouge_types=TYPES)
    for row in rows[:2]:
        head.add(row)
    for row in rows[2:]:
        tail.add(row)
    head = accumulator_from_state(json.loads(json.dumps(head.to_state())))
    assert head.values is None
    assert render_json(head.merge(tail).finalize(), ()) == one
    with pytest.raises(ScoringError, match="first part"):
        rouge.RougeAccumulator(rouge_types=TYPES).merge(rouge.RougeAccumulator(rouge_types=TYPES, keep_values=False))
    with pytest.raises(ScoringError, match="different options"):
        acc.merge(rouge.RougeAccumulator(rouge_types=TYPES, use_stemmer=True))
    with pytest.raises(ScoringError, match="no records"):
        rouge.RougeAccumulator(rouge_types=TYPES).finalize()


def test_directions_and_metric_names() -> None:
    cls = rouge.RougeAccumulator
    assert set(cls.DIRECTIONS.values()) == {"higher"}
    names = cls.metric_names(rouge_types=["rougeLsum", "rouge9"])
    assert names[0] == "records" and all(n in cls.DIRECTIONS for n in names[1:])
    assert rouge.check_variants(["unicode_tokens"]) == ("unicode_tokens",)


def test_a_repeated_type_counts_once() -> None:
    # (before the contract refactor, --summary summed a repeated type twice: means above 1)
    once = rouge.score_file(PAIRS, rouge_types=["rouge1"])
    twice = rouge.score_file(PAIRS, rouge_types=["rouge1", "rouge1"])
    assert twice.result == once.result and twice.metrics == once.metrics
    assert "|types=rouge1,rouge1|" in twice.signature  # the signature still records the types as given


# --------------------------------------------------------------- declarations


def test_rouge_declarations_derive_the_old_tables():
    """METRICS gives exactly the DIRECTIONS table the accumulator spelled out before (no RATES)."""
    types = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]
    old = {f"{t}.{part}": "higher" for t in types for part in ("precision", "recall", "fmeasure")}
    assert rouge.RougeAccumulator.DIRECTIONS == old
    assert rouge.RougeAccumulator.RATES == {}


def test_rouge_declarations_cover_the_gold_sample_report():
    from rageval_min import _metrics

    acc = rouge.RougeAccumulator
    _metrics.check_declarations(acc.METRICS, acc.INPUTS)
    pairs = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
    metrics = rouge.score_file(pairs, rouge_types=["rouge1", "rouge2", "rougeL", "rougeLsum"]).metrics
    assert metrics and all(_metrics.find_metric(acc.METRICS, k) is not None for k in metrics), metrics
    assert _metrics.find_metric(acc.METRICS, "rougeL.fmeasure").direction == "higher"
    assert _metrics.find_metric(acc.METRICS, "records").direction == "neither"
