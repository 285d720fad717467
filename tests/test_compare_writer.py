"""compare finds out by itself who wrote two --per-item files (issue #22): the family, command, key and
each metric's declared direction; it refuses files of different commands or options, and a metric whose
direction nobody declared is an error, never a silent "higher is better"."""

import json
import os

from conftest import ROOT, need, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
PAIRS = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")


def _grounding_rows(tmp_path, name, *extra):
    path = tmp_path / name
    r = run_cli(["grounding", "--gold", GOLD, "--trace", TRACE, "--per-item", str(path), "--gate", "chr>=0", *extra])
    assert r.code == 0, r.err
    return path


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_rows_name_their_writer_and_compare_needs_no_family_or_key(tmp_path):
    base = _grounding_rows(tmp_path, "base.jsonl")
    rows = _lines(base)
    assert {r["_rageval_min"].rsplit(" ", 1)[0] for r in rows} == {"grounding score"}
    for r in rows:  # the candidate ships an answer to every unanswerable question
        if r["unanswerable"]:
            r.update(under_refusal=1, answered=1, refused=0)
    cand = _write(tmp_path / "cand.jsonl", rows)
    r = run_cli(["compare", "--baseline", str(base), "--candidate", cand, "--resamples", "50", "--min-n", "1"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    metrics = out["result"]["metrics"]
    assert out["result"]["key"] == "qid"
    assert metrics["under_refusal"]["direction"] == "lower"
    assert metrics["under_refusal"]["regressed"] == 2 and metrics["under_refusal"]["improved"] == 0
    assert metrics["answered"]["direction"] == "neither" and "regressed" not in metrics["answered"]
    assert metrics["answered"]["verdict"] in ("changed", "no significant change")
    assert metrics["aggregate.precision"]["direction"] == "higher"  # the declared direction of an aggregate
    assert "of=grounding:score" in out["signature"]


def test_files_of_different_commands_are_refused(tmp_path):
    base = _grounding_rows(tmp_path, "base.jsonl")
    other = tmp_path / "rouge.jsonl"
    assert run_cli(["rouge", "--input", PAIRS, "--per-item", str(other)]).code == 0
    r = run_cli(["compare", "--baseline", str(base), "--candidate", str(other)])
    assert r.code == 2 and r.err.count("\n") == 1
    assert "written by different commands: grounding score" in r.err and "rouge score" in r.err


def test_files_of_different_options_are_refused(tmp_path):
    base = _grounding_rows(tmp_path, "base.jsonl")
    cand = _grounding_rows(tmp_path, "cand.jsonl", "--k", "1")
    r = run_cli(["compare", "--baseline", str(base), "--candidate", str(cand)])
    assert r.code == 2 and "with different options" in r.err and r.err.count("\n") == 1


def test_non_default_options_compare_without_aggregates_unless_given(tmp_path):
    base = _grounding_rows(tmp_path, "base.jsonl", "--k", "1")
    r = run_cli(["compare", "--baseline", str(base), "--candidate", str(base), "--resamples", "20"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert not [m for m in out["result"]["metrics"] if m.startswith("aggregate.")]
    assert any("aggregates not computed" in d for d in out["diagnostics"])
    wrong = run_cli(["compare", "--baseline", str(base), "--candidate", str(base), "--param", "k=2"])
    assert wrong.code == 2 and "--param values are not the options" in wrong.err


def test_a_file_mixing_writers_and_a_one_sided_writer_are_refused(tmp_path):
    base = _grounding_rows(tmp_path, "base.jsonl")
    rows = _lines(base)
    rows[-1]["_rageval_min"] = "grounding score 000000000000"
    mixed = _write(tmp_path / "mixed.jsonl", rows)
    r = run_cli(["compare", "--baseline", str(base), "--candidate", mixed])
    assert r.code == 2 and f"mixed.jsonl:{len(rows)}: _rageval_min: rows of another writer" in r.err
    bare = _write(tmp_path / "bare.jsonl", [{k: v for k, v in row.items() if k != "_rageval_min"} for row in rows])
    r = run_cli(["compare", "--baseline", str(base), "--candidate", bare])
    assert r.code == 2 and "only one file says which command wrote it" in r.err


def test_unknown_direction_is_an_error_never_higher_is_better(tmp_path):
    base = _write(tmp_path / "b.jsonl", [{"id": i, "latency": i * 1.0} for i in range(12)])
    cand = _write(tmp_path / "c.jsonl", [{"id": i, "latency": i * 2.0} for i in range(12)])
    r = run_cli(["compare", "--baseline", base, "--candidate", cand, "--key", "id"])
    assert r.code == 2 and r.err.count("\n") == 1
    assert "no known direction for latency" in r.err and "--lower-is-better" in r.err
    r = run_cli(["compare", "--baseline", base, "--candidate", cand, "--key", "id", "--lower-is-better", "latency"])
    assert r.code == 0 and json.loads(r.out)["result"]["metrics"]["latency"]["verdict"] == "regressed"
    r = run_cli(["compare", "--baseline", base, "--candidate", cand, "--key", "id", "--neither", "latency"])
    assert json.loads(r.out)["result"]["metrics"]["latency"]["verdict"] == "changed"
    assert run_cli(["compare", "--baseline", base, "--candidate", cand]).code == 2  # no key, nothing says one


def test_per_item_files_load_one_record_per_row_in_pandas(tmp_path):
    pd = need("pandas", "dev", "pandas comes with statsmodels")
    path = _grounding_rows(tmp_path, "rows.jsonl")
    frame = pd.read_json(path, lines=True)
    assert len(frame) == len(_lines(path)) and list(frame.columns)[0] == "qid"
    assert frame["_rageval_min"].nunique() == 1
