"""``rageval-min mtrag`` subcommands: streaming output, gates, Table 6, crash paths."""

import json
import os
import sys

import pytest
from conftest import DATA, ROOT, run_cli, run_subprocess

MT = os.path.join(DATA, "mtrag")
RESPONSES = os.path.join(MT, "responses-10.jsonl")
ANALYTICS = os.path.join(MT, "human_eval_subset.analytics.json")
SUMMARIZE_REFERENCE = ["mtrag", "summarize", "--input", ANALYTICS, "--setting", "Reference"]
GOLD = os.path.join(ROOT, "gold_samples", "mtrag")


def _lines(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _write(path, records):
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return str(path)


def test_algorithmic_matches_golden(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out)])
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["result"]["records"] == 10
    golden = _lines(os.path.join(MT, "responses10_algorithmic.jsonl"))
    records = _lines(str(out))
    inputs = _lines(RESPONSES)
    for rec, want, src in zip(records, golden, inputs):
        assert list(rec)[:-1] == list(src) and list(rec)[-1] == "metrics"  # record written back, metrics last
        for key in ("Recall", "RougeL_stemFalse", "Length"):
            assert [(type(v), v) for v in rec["metrics"][key]] == [(type(v), v) for v in want["metrics"][key]]
        assert rec["metrics"].get("Extractiveness_RougeL", []) == want["metrics"]["Extractiveness_RougeL"]
    # NaN tokens of the input are written back as NaN (json.dump, as the reference)
    assert "NaN" in out.read_text(encoding="utf-8")
    means = report["result"]["means"]
    assert means["Length"] == sum(g["metrics"]["Length"][0] for g in golden) / 10


def test_algorithmic_gates_and_report_file(tmp_path):
    out, rep = tmp_path / "out.jsonl", tmp_path / "report.json"
    base = ["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out), "--output", str(rep)]
    r = run_cli(base + ["--gate", "Recall>=0.5"])
    assert r.code == 0 and r.out == ""
    assert json.loads(rep.read_text())["gates"][0]["passed"] is True
    r = run_cli(base + ["--gate", "RougeL_stemFalse>0.9"])
    assert r.code == 1
    r = run_cli(base + ["--gate", "RB_agg>0.1"])  # no BERTScore in these records
    assert r.code == 2 and "unknown metric 'RB_agg'" in r.err


def test_algorithmic_bad_records_leave_no_output(tmp_path):
    good = _lines(RESPONSES)[0]
    bad = dict(good, task_id="bad::1", predictions=[])
    src = _write(tmp_path / "in.jsonl", [good, bad, "[1, 2]", "{not json"])
    out = tmp_path / "out.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", src, "--records", str(out)])
    assert r.code == 2
    assert "task_id=bad::1" in r.err and "predictions" in r.err
    assert not out.exists()
    assert os.listdir(tmp_path) == ["in.jsonl"]  # temp file removed


def test_algorithmic_same_input_output_refused(tmp_path):
    src = _write(tmp_path / "in.jsonl", _lines(RESPONSES)[:1])
    r = run_cli(["mtrag", "algorithmic", "--input", src, "--records", src])
    assert r.code == 2 and "--records" in r.err and "names the same file as input" in r.err


def test_algorithmic_variant_in_signature(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out), "--variant", "rb_agg_unguarded"])
    assert r.code == 0
    assert "variants=rb_agg_unguarded" in json.loads(r.out)["signature"]
    r = run_cli(["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out), "--variant", "nope"])
    assert r.code == 2


def test_algorithmic_rb_agg_from_input_and_diagnostics(tmp_path):
    recs = _lines(RESPONSES)[:2]
    recs[1]["metrics"] = {"BertscoreR": [0.4], "BertKPrec": [0.1, 0.2, None]}
    del recs[0]["contexts"]
    src = _write(tmp_path / "in.jsonl", recs)
    out = tmp_path / "out.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", src, "--records", str(out)])
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["diagnostics"] == ["task_id=dd6b6ffd177f2b311abe676261279d2f::1: 'contexts' missing, treated as []"]
    rec = _lines(str(out))[1]
    assert isinstance(rec["metrics"]["RB_agg"][0], float)
    assert report["result"]["means"]["RB_agg"] == rec["metrics"]["RB_agg"][0]


def test_condition_gold_and_rounding(tmp_path):
    out = tmp_path / "c.jsonl"
    r = run_cli(["mtrag", "condition", "--input", os.path.join(GOLD, "judged.jsonl"), "--records", str(out)])
    assert r.code == 0, r.err
    with open(os.path.join(GOLD, "expected_conditioned.jsonl"), encoding="utf-8") as fh:
        assert out.read_text(encoding="utf-8") == fh.read()
    rec = _lines(str(out))[1]
    assert rec["metrics"]["RB_llm"] == [0.85]  # 0.8500000000000001 rounded like pandas
    r = run_cli(
        [
            "mtrag",
            "condition",
            "--input",
            os.path.join(GOLD, "judged.jsonl"),
            "--records",
            str(out),
            "--full-precision",
            "--variant",
            "paper_idk",
            "--metric",
            "RB_llm",
        ]
    )
    assert r.code == 0
    rec = _lines(str(out))[1]
    assert rec["metrics"]["RB_llm_idk"] == [0.8500000000000001]
    assert "RB_agg_idk" not in rec["metrics"]
    report = json.loads(r.out)
    assert "variants=paper_idk" in report["signature"] and "float_digits=none" in report["signature"]


def test_condition_missing_idk_is_input_error(tmp_path):
    src = _write(tmp_path / "in.jsonl", [{"task_id": "x", "metrics": {"RB_agg": [0.5]}}])
    r = run_cli(["mtrag", "condition", "--input", src, "--records", str(tmp_path / "o.jsonl")])
    assert r.code == 2 and "task_id=x" in r.err and "metrics.idk_eval" in r.err


def test_table6_reproduces_exactly():
    r = run_cli(SUMMARIZE_REFERENCE + ["--metric", "rl_f", "--metric", "rb_llm", "--metric", "rb_agg"])
    assert r.code == 0, r.err
    report = json.loads(r.out)
    models = report["result"]["settings"][0]["models"]
    table6 = {  # paper Table 6: RL_F / RB_llm / RB_alg over the 135 answerable tasks
        "reference": (0.86, 0.97, 0.87),
        "gpt-4o": (0.80, 0.80, 0.46),
        "llama-3.1-405b-instruct": (0.78, 0.78, 0.49),
    }
    for model, want in table6.items():
        ans = models[model]["Answerable"]
        assert [ans[m]["n"] for m in ("rl_f", "rb_llm", "rb_agg")] == [135, 135, 135]
        assert tuple(round(ans[m]["mean"], 2) for m in ("rl_f", "rb_llm", "rb_agg")) == want
    # the spec's 4-decimal values
    assert round(models["reference"]["Answerable"]["rb_agg"]["mean"], 4) == 0.8713
    assert round(models["gpt-4o"]["Answerable"]["rl_f"]["mean"], 4) == 0.8016
    # answerable + partial does not match the paper (0.84 / 0.96 / 0.86 for the reference)
    assert list(models["reference"]) == ["Answerable", "Partial", "Unanswerable", "Conversational", "all"]


def test_summarize_gates_on_any_mean():
    assert run_cli(SUMMARIZE_REFERENCE + ["--gate", "Reference/gpt-4o/Answerable/rb_agg>=0.46"]).code == 0
    assert run_cli(SUMMARIZE_REFERENCE + ["--gate", "Reference/gpt-4o/all/RougeL>0.99"]).code == 1
    r = run_cli(SUMMARIZE_REFERENCE + ["--gate", "nope>1"])
    assert r.code == 2 and "Reference/reference/Answerable/rb_agg" in r.err


def test_summarize_human_metrics_left_out_and_text_format():
    r = run_cli(["mtrag", "summarize", "--input", ANALYTICS, "--format", "text"])
    assert r.code == 0
    assert "human_eval_subset.analytics" in r.out and "conditional_idk" in r.out
    assert "naturalness" not in r.out


def test_summarize_jsonl_and_two_settings(tmp_path):
    conditioned = os.path.join(GOLD, "expected_conditioned.jsonl")
    r = run_cli(
        [
            "mtrag",
            "summarize",
            "--input",
            conditioned,
            "--input",
            ANALYTICS,
            "--setting",
            "demo",
            "--setting",
            "Reference",
            "--metric",
            "RB_agg_idk_underspecified",
            "--metric",
            "rb_agg",
        ]
    )
    assert r.code == 0, r.err
    settings = json.loads(r.out)["result"]["settings"]
    assert [s["setting"] for s in settings] == ["demo", "Reference"]
    assert settings[0]["format"] == "jsonl" and settings[1]["format"] == "analytics"
    demo = settings[0]["models"]["demo-model"]
    assert demo["all"]["RB_agg_idk_underspecified"]["n"] == 5
    r = run_cli(["mtrag", "summarize", "--input", conditioned, "--setting", "a", "--setting", "b"])
    assert r.code == 2
    r = run_cli(["mtrag", "summarize", "--input", conditioned, "--metric", "missing_metric"])
    assert r.code == 2 and "missing_metric" in r.err


def test_summarize_schema2_results(tmp_path):
    data = {
        "tasks": [{"task_id": "t1", "answerability": "ANSWERABLE"}, {"task_id": "t2", "answerability": "UNANSWERABLE"}],
        "results": [
            {
                "task_id": "t1",
                "model_id": "m",
                "scores": {
                    "Recall": {"system": {"value": 0.5}},
                    "answerability_accuracy": {"system": {"value": "True Positive"}},
                },
            },
            {"task_id": "t2", "model_id": "m", "scores": {"Recall": {"system": {"value": 0.25}}}},
        ],
    }
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    r = run_cli(["mtrag", "summarize", "--input", str(path)])
    assert r.code == 0, r.err
    models = json.loads(r.out)["result"]["settings"][0]["models"]
    assert models["m"]["all"]["Recall"]["mean"] == 0.375
    assert "answerability_accuracy" not in models["m"]["all"]


def test_summarize_bad_analytics(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"tasks": [], "evaluations": [{"task_id": "zz", "model_id": "m", "annotations": {}}]}))
    r = run_cli(["mtrag", "summarize", "--input", str(path)])
    assert r.code == 2 and "zz" in r.err
    path.write_text("[1, 2]")
    assert run_cli(["mtrag", "summarize", "--input", str(path)]).code == 2
    path.write_text("{")
    assert run_cli(["mtrag", "summarize", "--input", str(path)]).code == 2


def test_mtrag_without_step_is_usage():
    r = run_cli(["mtrag"])
    assert r.code == 2


def test_subprocess_exit_codes(tmp_path):
    out = tmp_path / "o.jsonl"
    r = run_subprocess(["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out), "--gate", "Recall>0.99"])
    assert r.code == 1 and out.exists()
    gated = ["--format", "markdown", "--gate", "Reference/reference/Answerable/rb_agg>=0.87"]
    r = run_subprocess(["mtrag", "summarize", "--input", ANALYTICS] + gated)
    assert r.code == 2  # setting label defaults to the file name
    r = run_subprocess(SUMMARIZE_REFERENCE + gated)
    assert r.code == 0 and "PASS" in r.out
    r = run_subprocess(["mtrag", "condition", "--input", str(tmp_path / "missing.jsonl"), "--records", str(out)])
    assert r.code == 2 and "Traceback" not in r.err


def test_demo_cases():
    """The gold-sample cases (gold_samples/mtrag/cases.json, what `rageval-min demo` runs) reproduce."""
    from rageval_min import _demo
    from rageval_min.cli import main

    root = os.path.join(ROOT, "gold_samples")
    cases = _demo.load_cases(root, "mtrag")
    assert [c["argv"][1] for c in cases] == ["algorithmic", "judge", "condition", "summarize"]
    for case in cases:
        res = _demo.run_case(root, "mtrag", case, main)
        assert res.ok, res.detail
    summary = [c for c in cases if c["argv"][1] == "summarize"][0]
    assert "RB_agg_idk_underspecified" in summary["argv"]


# ---------------------------------------------------------------------------
# Paths, --records, --per-item, nothing written on bad input (issues #12, #14)
# ---------------------------------------------------------------------------

JUDGED = os.path.join(GOLD, "judged.jsonl")
TASKS = os.path.join(GOLD, "tasks.jsonl")


def test_report_naming_the_records_file_or_an_input_is_refused(tmp_path):
    out = tmp_path / "o.jsonl"
    for step, src in (("algorithmic", TASKS), ("condition", JUDGED)):
        r = run_cli(["mtrag", step, "--input", src, "--records", str(out), "--output", str(out)])
        assert r.code == 2 and "names the same file as --output" in r.err, r.err
        assert not out.exists()
        copy = _write(tmp_path / "in.jsonl", _lines(src))
        before = open(copy, "rb").read()
        r = run_cli(["mtrag", step, "--input", copy, "--records", str(out), "--output", copy])
        assert r.code == 2 and "--output" in r.err and "names the same file as input" in r.err, r.err
        assert open(copy, "rb").read() == before and not out.exists()
        link = tmp_path / "link.jsonl"
        os.symlink(copy, link)
        r = run_cli(["mtrag", step, "--input", copy, "--records", str(link)])
        assert r.code == 2 and "--records" in r.err and "names the same file as input" in r.err
        assert open(copy, "rb").read() == before
        os.remove(link)
        os.remove(copy)
    assert os.listdir(tmp_path) == []


def test_output_is_always_the_report(tmp_path):
    """Issue #13: one meaning per option. The old form (--output OUT.jsonl, --report PATH) is gone."""
    out = tmp_path / "o.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", TASKS, "--output", str(out)])
    assert r.code == 2 and "--records" in r.err and not out.exists()
    r = run_cli(["mtrag", "algorithmic", "--input", TASKS, "--records", str(out), "--report", str(out)])
    assert r.code == 2 and "--report" in r.err
    r = run_cli(["mtrag", "condition", "--input", JUDGED, "--records", str(out), "--output", f"json:{tmp_path}/r.json"])
    assert r.code == 0 and r.out == "" and json.loads((tmp_path / "r.json").read_text())["family"] == "mtrag"
    for step in ("algorithmic", "condition", "judge"):
        help_text = run_cli(["mtrag", step, "--help"]).out
        assert "--records PATH" in help_text and "[FORMAT:]PATH" in help_text and "--report" not in help_text


def test_condition_leaves_nothing_on_bad_input(tmp_path):
    out, items = tmp_path / "o.jsonl", tmp_path / "items.jsonl"
    base = ["mtrag", "condition", "--records", str(out), "--per-item", str(items)]
    # a gate on a metric the report will not have: exit 2 and no records file (issue #14 item 6)
    src = _write(
        tmp_path / "in.jsonl", [{"task_id": "x", "answerability": ["ANSWERABLE"], "metrics": {"idk_eval": [0]}}]
    )
    r = run_cli(base + ["--input", src, "--gate", "RB_agg_idk_underspecified>0"])
    assert r.code == 2 and "unknown metric" in r.err
    # a bad record after good ones
    src = _write(tmp_path / "in.jsonl", _lines(JUDGED) + [{"task_id": "bad", "metrics": {"RB_agg": [0.5]}}])
    r = run_cli(base + ["--input", src])
    assert r.code == 2 and "task_id=bad" in r.err
    # no valid record at all
    for text in ("\n\n", '"x"\n[1]\n'):
        (tmp_path / "in.jsonl").write_text(text)
        r = run_cli(base + ["--input", src])
        assert r.code == 2
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_summarize_unknown_gate_leaves_no_per_item_file(tmp_path):
    items = tmp_path / "items.jsonl"
    conditioned = os.path.join(GOLD, "expected_conditioned.jsonl")
    r = run_cli(["mtrag", "summarize", "--input", conditioned, "--per-item", str(items), "--gate", "nope>1"])
    assert r.code == 2 and "unknown metric" in r.err
    assert os.listdir(tmp_path) == []


def test_algorithmic_unknown_gate_leaves_no_records(tmp_path):
    out = tmp_path / "o.jsonl"
    r = run_cli(["mtrag", "algorithmic", "--input", RESPONSES, "--records", str(out), "--gate", "RB_agg>0.1"])
    assert r.code == 2 and "unknown metric 'RB_agg'" in r.err
    assert os.listdir(tmp_path) == []


def test_records_option_makes_output_the_report(tmp_path):
    recs, rep_json, rep_md = tmp_path / "r.jsonl", tmp_path / "rep.json", tmp_path / "rep.md"
    r = run_cli(
        ["mtrag", "algorithmic", "--input", TASKS, "--records", str(recs), "--output", str(rep_json)]
        + ["--output", f"markdown:{rep_md}"]
    )
    assert r.code == 0 and r.out == "", r.err
    with open(os.path.join(GOLD, "expected_algorithmic.jsonl"), encoding="utf-8") as fh:
        assert recs.read_text(encoding="utf-8") == fh.read()
    assert json.loads(rep_json.read_text())["result"]["output"] == str(recs)
    assert "mtrag" in rep_md.read_text()
    # records on stdout
    r = run_cli(["mtrag", "condition", "--input", JUDGED, "--records", "-", "--output", str(rep_json)])
    assert r.code == 0
    with open(os.path.join(GOLD, "expected_conditioned.jsonl"), encoding="utf-8") as fh:
        assert r.out == fh.read()
    assert json.loads(rep_json.read_text())["result"]["output"] == "-"
    r = run_cli(["mtrag", "condition", "--input", JUDGED, "--records", "-"])
    assert r.code == 2 and "give the report a file" in r.err and r.out == ""
    r = run_cli(["mtrag", "condition", "--input", JUDGED, "--records", "-", "--output", "-"])
    assert r.code == 2 and "give the report a file" in r.err and r.out == ""
    r = run_cli(["mtrag", "condition", "--input", JUDGED, "--records", str(recs), "--output", str(recs)])
    assert r.code == 2 and "names the same file" in r.err
    r = run_cli(["mtrag", "condition", "--input", JUDGED])
    assert r.code == 2 and "--records" in r.err


@pytest.mark.parametrize(
    "argv,n",
    [
        (["mtrag", "algorithmic", "--input", TASKS, "--records", "{tmp}/o.jsonl"], 3),
        (["mtrag", "condition", "--input", JUDGED, "--records", "{tmp}/o.jsonl"], 6),
        (["mtrag", "summarize", "--input", os.path.join(GOLD, "expected_conditioned.jsonl")], 6),
        (
            ["mtrag", "judge", "--input", TASKS, "--steps", "idk,underspecified,rb_llm,rl_f"]
            + ["--judge", "replay:" + os.path.join(GOLD, "judge_cache.jsonl"), "--records", "{tmp}/o.jsonl"],
            3,
        ),
    ],
    ids=["algorithmic", "condition", "summarize", "judge"],
)
def test_per_item_rows(tmp_path, argv, n):
    from rageval_min._contract import accumulator_class

    items = tmp_path / "items.jsonl"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    r = run_cli(argv + ["--per-item", str(items)])
    assert r.code == 0, r.err
    rows = _lines(str(items))
    assert len(rows) == n and all(list(row)[0] == "task_id" for row in rows)
    report = json.loads(r.out)
    # one pass of the command's accumulator over the rows gives the CLI's result (judge: as the CLI built it)
    if argv[1] == "judge":
        assert [list(row)[1:5] for row in rows][0] == ["idk_eval", "underspecified_eval", "RB_llm", "RL_F"]
        acc = accumulator_class("mtrag", "judge")(
            output=argv[-1], steps=["idk", "underspecified", "rb_llm", "rl_f"], judge_model="scripted"
        )
        for row in rows:
            acc.add(row)
        assert acc.finalize().result == report["result"]
        assert acc.finalize().signature == report["signature"]


def test_judge_merges_exactly(tmp_path):
    """The contract check for `mtrag judge` (its case needs a replay cache path, so it lives here)."""
    from rageval_min._contract import accumulator_class, accumulator_from_state

    items = tmp_path / "items.jsonl"
    r = run_cli(
        ["mtrag", "judge", "--input", TASKS, "--steps", "underspecified,idk,rl_f,rb_llm", "--records", "-"]
        + ["--judge", "replay:" + os.path.join(GOLD, "judge_cache.jsonl"), "--per-item", str(items)]
        + ["--output", str(tmp_path / "rep.json")]
    )
    assert r.code == 0, r.err
    rows = _lines(str(items))
    params = {"output": "-", "steps": ["underspecified", "idk", "rl_f", "rb_llm"], "judge_model": "scripted"}
    cls = accumulator_class("mtrag", "judge")
    one = cls(**params)
    for row in rows:
        one.add(row)
    printed = json.loads((tmp_path / "rep.json").read_text())
    assert printed["result"] == one.finalize().result and printed["signature"] == one.finalize().signature
    for cut in range(len(rows) + 1):
        a, b = cls(**params), cls(**params)
        for row in rows[:cut]:
            a.add(row)
        for row in rows[cut:]:
            b.add(row)
        a = accumulator_from_state(json.loads(json.dumps(a.to_state())))
        a.merge(accumulator_from_state(json.loads(json.dumps(b.to_state()))))
        assert json.dumps(a.finalize()._asdict()) == json.dumps(one.finalize()._asdict())


_IDK_CMD = (
    "cmd:" + sys.executable + " -c \"import sys; t = sys.stdin.read(); print('Yes' if 'do not have' in t else 'no')\""
)


def test_judge_columns_typed_by_the_file(tmp_path):
    # idk_eval all integers: the column stays integer
    out = tmp_path / "o.jsonl"
    r = run_cli(["mtrag", "judge", "--input", TASKS, "--steps", "idk", "--judge", _IDK_CMD, "--records", str(out)])
    assert r.code == 0, r.err
    assert [row["metrics"]["idk_eval"] for row in _lines(str(out))] == [[1], [0], [0]]
    assert '"idk_eval": [1]' in out.read_text()
    # the recorded judge gave idk 1, 0, 0.5 and underspecified 1, 0, 0.5: both columns are floats
    with open(os.path.join(GOLD, "expected_judged.jsonl"), encoding="utf-8") as fh:
        text = fh.read()
    assert '"idk_eval": [1.0]' in text and '"underspecified_eval": [0.0]' in text


def test_judge_checks_the_whole_input_before_any_call(server, tmp_path):
    tasks = _lines(TASKS)
    tasks[2]["targets"] = []  # RB_llm needs targets[0]
    src = _write(tmp_path / "in.jsonl", tasks)
    out = tmp_path / "o.jsonl"
    base = ["mtrag", "judge", "--input", src, "--judge", server.base_url, "--judge-model", "m", "--records", str(out)]
    r = run_cli(base + ["--steps", "idk,rb_llm"])
    assert r.code == 2 and "targets" in r.err and ":3:" in r.err, r.err
    r = run_cli(base + ["--steps", "idk", "--gate", "nope>1"])
    assert r.code == 2 and "unknown metric" in r.err
    r = run_cli(base + ["--steps", "idk", "--output", src])
    assert r.code == 2
    assert server.requests == [] and not out.exists()


# --------------------------------------------------------------- declarations


def test_mtrag_declarations_derive_the_old_tables():
    """Each accumulator's METRICS gives exactly the DIRECTIONS table it spelled out before (no RATES)."""
    from rageval_min import mtrag

    higher = "higher"
    assert mtrag.AlgorithmicAccumulator.DIRECTIONS == {
        "Recall": higher,
        "RougeL_stemFalse": higher,
        "BertscoreP": higher,
        "BertscoreR": higher,
        "BertKPrec": higher,
        "RB_agg": higher,
    }
    assert mtrag.ConditionAccumulator.DIRECTIONS == {
        "RL_F_idk_underspecified": higher,
        "RB_llm_idk_underspecified": higher,
        "RB_agg_idk_underspecified": higher,
        "RL_F_idk": higher,
        "RB_llm_idk": higher,
        "RB_agg_idk": higher,
    }
    assert mtrag.JudgeAccumulator.DIRECTIONS == {"RB_llm": higher, "RL_F": higher}
    # summarize's item rows carry the records' metrics: each with its own step's direction (before the
    # declarations the table was empty and compare took every one as higher-is-better)
    summarized = mtrag.SummarizeAccumulator.DIRECTIONS
    assert summarized["Recall"] == summarized["RL_F_idk"] == summarized["RB_agg"] == higher
    assert "Length" not in summarized and "idk_eval" not in summarized and "source" not in summarized
    for acc in (
        mtrag.AlgorithmicAccumulator,
        mtrag.ConditionAccumulator,
        mtrag.JudgeAccumulator,
        mtrag.SummarizeAccumulator,
    ):
        assert acc.RATES == {}


def test_mtrag_declarations_cover_the_gold_sample_reports(tmp_path):
    import io

    from rageval_min import _metrics, judges, mtrag
    from rageval_min.mtrag import judge as mtrag_judge

    gold = os.path.join(ROOT, "gold_samples", "mtrag")
    tasks = os.path.join(gold, "tasks.jsonl")
    judged = str(tmp_path / "judged.jsonl")
    runner = judges.JudgeRunner(
        judges.judge_from_spec("replay:" + os.path.join(gold, "judge_cache.jsonl")),
        options=judges.RunnerOptions(progress=io.StringIO()),
    )
    try:
        judge_report = mtrag_judge.run_judge_step(
            tasks, judged, runner=runner, steps=["underspecified", "idk", "rl_f", "rb_llm"]
        )
    finally:
        runner.close()
    reports = {
        mtrag.AlgorithmicAccumulator: mtrag.algorithmic_file(tasks, str(tmp_path / "a.jsonl")),
        mtrag.JudgeAccumulator: judge_report,
        mtrag.ConditionAccumulator: mtrag.condition_file(judged, str(tmp_path / "c.jsonl")),
        mtrag.SummarizeAccumulator: mtrag.summarize_files(
            [os.path.join(gold, "expected_conditioned.jsonl")], settings=["demo"]
        ),
    }
    for acc, report in reports.items():
        _metrics.check_declarations(acc.METRICS, acc.INPUTS)
        assert report.metrics, acc
        missing = [k for k in report.metrics if _metrics.find_metric(acc.METRICS, k) is None]
        assert not missing, (acc.COMMAND, missing)
    assert "judge_failures" in judge_report.metrics and "idk_eval" in judge_report.metrics
    assert _metrics.find_metric(mtrag.JudgeAccumulator.METRICS, "idk_eval").direction == "neither"
    assert _metrics.find_metric(mtrag.AlgorithmicAccumulator.METRICS, "Length").direction == "neither"
