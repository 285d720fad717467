"""``rageval-min rgb mix|label|score|judge|report``: round trip, formats, gates, errors, demo."""

import json
import os
import shutil

import pytest
from conftest import RGB_FACT_KEYS, ROOT, item_rows, run_cli, run_subprocess

GOLD = os.path.join(ROOT, "gold_samples", "rgb")
PRED_EN04 = os.path.join(GOLD, "prediction_en_demo_temp0.2_noise0.4_passage5_correct0.0.json")
PRED_FACT = os.path.join(GOLD, "prediction_en_fact_demo_temp0.2_noise0.0_passage5_correct0.0.json")
#: the options gold_samples/rgb/expected_mix_en.jsonl was made with (from data_en.jsonl)
MIX_EN_OPTIONS = ["--dataset", "en", "--noise-rate", "0.4", "--passage-num", "3"]
PREDS = sorted(
    os.path.join(GOLD, f) for f in os.listdir(GOLD) if f.startswith("prediction_") and f.endswith("0.0.json")
)


def _write(path, recs):
    with open(path, "w", encoding="utf-8") as fh:
        for r in recs:
            fh.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")
    return str(path)


def _jsonl(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


# ----------------------------------------------------------------- round trip


@pytest.mark.parametrize("dataset,src", [("en", "data_en.jsonl"), ("zh_fact", "data_zh_fact.jsonl")])
def test_round_trip_mix_label_score(tmp_path, dataset, src):
    mixed = tmp_path / "mixed.jsonl"
    r = run_cli(
        [
            "rgb",
            "mix",
            "--input",
            os.path.join(GOLD, src),
            "--dataset",
            dataset,
            "--noise-rate",
            "0.2",
            "--passage-num",
            "4",
            "--correct-rate",
            "0.4",
            "--output",
            str(mixed),
        ]
    )
    assert r.code == 0, r.err
    inst = _jsonl(mixed.read_text(encoding="utf-8"))
    assert [list(x) for x in inst] == [["id", "query", "answer", "docs"]] * len(inst)
    # a toy "model": answer with the first passage, with spaces (zh removes U+0020 from it)
    preds = []
    for x in inst:
        text = x["docs"][0].replace("。", " 。") if dataset.startswith("zh") else x["docs"][0]
        preds.append({"id": x["id"], "query": x["query"], "ans": x["answer"], "prediction": text, "noise_rate": 0.2})
    pred_path = _write(tmp_path / "preds.jsonl", preds)
    labelled = tmp_path / "labelled.jsonl"
    r = run_cli(["rgb", "label", "--input", pred_path, "--dataset", dataset, "--output", str(labelled)])
    assert r.code == 0, r.err
    assert "family=rgb" in r.err
    recs = _jsonl(labelled.read_text(encoding="utf-8"))
    assert len(recs) == len(preds)
    for rec, p in zip(recs, preds):
        assert rec["label"] == _expected_label(p["prediction"], p["ans"], dataset)
        if dataset.startswith("zh"):
            assert " " not in rec["prediction"]
    direct = run_cli(["rgb", "score", "--input", pred_path, "--dataset", dataset])
    via_labels = run_cli(["rgb", "score", "--input", str(labelled), "--dataset", dataset, "--use-labels"])
    assert direct.code == via_labels.code == 0
    a, b = json.loads(direct.out), json.loads(via_labels.out)
    assert a["result"] == b["result"]
    assert a["result"]["noise_rate"] == 0.2 and a["result"]["nums"] == len(preds)
    assert "use_labels=true" in b["signature"] and "use_labels=false" in a["signature"]


def _expected_label(pred, ans, dataset):
    # an independent, minimal restatement of the rule for these toy cases (no rejections)
    p = pred.replace(" ", "") if "zh" in dataset else pred
    p = p.lower()
    items = ans if isinstance(ans, list) else [ans]
    return [int(any(a.lower() in p for a in x)) if isinstance(x, list) else int(x.lower() in p) for x in items]


# ----------------------------------------------------------------- score output


@pytest.mark.parametrize("pred", PREDS, ids=[os.path.basename(p) for p in PREDS])
def test_format_rgb_matches_reference_result_file(tmp_path, pred):
    expected_path = pred[: -len(".json")] + "_result.json"
    with open(expected_path, encoding="utf-8") as fh:
        expected = fh.read()
    r = run_cli(["rgb", "score", "--input", pred, "--format", "rgb"])
    assert r.code == 0 and r.out == expected + "\n"
    out = tmp_path / "x_result.json"
    assert run_cli(["rgb", "score", "--input", pred, "--format", "rgb", "--output", str(out)]).code == 0
    assert out.read_bytes() == expected.encode("utf-8")  # byte-identical, no trailing newline


def test_json_envelope_and_key_order():
    r = run_cli(["rgb", "score", "--input", PRED_FACT])
    out = json.loads(r.out)
    assert list(out["result"]) == RGB_FACT_KEYS
    assert (
        out["signature"].startswith("rageval_min:")
        and "|family=rgb|ref=chen700564/RGB@65ec39e|variants=none|" in out["signature"]
    )
    assert "dataset=en_fact" in out["signature"] and "noise_rate=0.0" in out["signature"]


@pytest.mark.parametrize(
    "gate,code",
    [("all_rate>=0.8", 1), ("all_rate>=0.4", 0), ("tt==2", 0), ("nums<5", 1), ("noise_rate==0.4", 0)],
)
@pytest.mark.parametrize("fmt", ["json", "text", "markdown", "junit", "rgb"])
def test_gates_on_every_numeric_output(gate, code, fmt):
    r = run_cli(["rgb", "score", "--input", PRED_EN04, "--format", fmt, "--gate", gate])
    assert r.code == code, r.err


@pytest.mark.parametrize(
    "gate,code", [("fact_check_rate>=0.5", 0), ("correct_rate>0.5", 1), ("correct_tt==1", 0), ("fact_tt>=3", 1)]
)
def test_gates_on_fact_keys(gate, code):
    assert run_cli(["rgb", "score", "--input", PRED_FACT, "--gate", gate]).code == code


def test_unknown_gate_name_is_usage_error():
    r = run_cli(["rgb", "score", "--input", PRED_EN04, "--gate", "fact_check_rate>=0.5"])
    assert r.code == 2 and "all_rate" in r.err


def test_variants_change_numbers_and_signature(tmp_path):
    p = _write(
        tmp_path / "p.jsonl",
        [
            {"id": 0, "ans": "x", "prediction": "Insufficient Information.", "noise_rate": 1.0},
            {"id": 1, "ans": "Paris", "prediction": "Paris", "noise_rate": 1.0},
        ],
    )
    base = json.loads(run_cli(["rgb", "score", "--input", p, "--dataset", "en"]).out)
    assert base["result"]["tt"] == 1
    v = json.loads(
        run_cli(
            [
                "rgb",
                "score",
                "--input",
                p,
                "--dataset",
                "en",
                "--variant",
                "reject_casefold",
                "--variant",
                "noise1_reject_only",
            ]
        ).out
    )
    assert v["result"]["tt"] == 1 and "variants=noise1_reject_only,reject_casefold" in v["signature"]
    v = json.loads(run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--variant", "reject_casefold"]).out)
    assert v["result"]["tt"] == 2


# ----------------------------------------------------------------- skipped records and crash paths


def test_skipped_record_is_named_and_kept_by_label(tmp_path):
    p = _write(
        tmp_path / "p.jsonl",
        [
            {"id": "a", "ans": 42, "prediction": "42", "noise_rate": 0.0},
            {"id": "b", "ans": "ok", "prediction": "ok", "noise_rate": 0.0},
            {"id": "c", "ans": 7, "prediction": "信息不足", "noise_rate": 0.0},  # rejection: gt never looked at
        ],
    )
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "zh"])
    out = json.loads(r.out)
    assert out["result"]["nums"] == 2 and out["result"]["tt"] == 1
    assert any("id=a" in d and "p.jsonl:1" in d and "int" in d for d in out["diagnostics"])
    r = run_cli(["rgb", "label", "--input", p, "--dataset", "zh"])
    recs = _jsonl(r.out)
    assert recs[0]["label"] is None and recs[0]["factlabel"] is None and "not a string" in recs[0]["rgb_skipped"]
    assert recs[2]["label"] == [-1]
    assert "id=a" in r.err
    lab = _write(tmp_path / "l.jsonl", recs)
    r2 = json.loads(run_cli(["rgb", "score", "--input", lab, "--dataset", "zh", "--use-labels"]).out)
    assert r2["result"] == out["result"] and any("id=a" in d for d in r2["diagnostics"])


def test_all_skipped_gives_null_and_failing_gate(tmp_path):
    p = _write(tmp_path / "p.jsonl", [{"id": 1, "ans": None, "prediction": "x", "noise_rate": 0.0}])
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en_fact", "--gate", "all_rate>=0"])
    assert r.code == 1
    out = json.loads(r.out)
    assert out["result"] == {
        "all_rate": None,
        "noise_rate": 0.0,
        "tt": 0,
        "nums": 0,
        "fact_check_rate": None,
        "correct_rate": 0,
        "fact_tt": 0,
        "correct_tt": 0,
    }
    assert "no scorable records: all_rate is null" in out["diagnostics"]
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--format", "rgb"])
    assert r.code == 0 and '"all_rate": null' in r.out and "no scorable records" in r.err


def test_noise1_empty_label_diagnostic(tmp_path):
    p = _write(
        tmp_path / "p.jsonl", [{"id": 9, "ans": [], "prediction": "x"}, {"id": 10, "ans": "x", "prediction": "x"}]
    )
    out = json.loads(run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--noise-rate", "1"]).out)
    assert out["result"]["tt"] == 1 and out["result"]["noise_rate"] == 1.0
    assert any("id=9" in d for d in out["diagnostics"])


def test_mix_skips_negative_positive_count_with_diagnostic(tmp_path):
    src = os.path.join(GOLD, "data_zh_fact.jsonl")
    r = run_cli(
        [
            "rgb",
            "mix",
            "--input",
            src,
            "--dataset",
            "zh_fact",
            "--noise-rate",
            "0.8",
            "--passage-num",
            "5",
            "--correct-rate",
            "0.4",
        ]
    )
    assert r.code == 0 and r.out == ""
    assert r.err.count("negative positive count at passage_num 5") == 3 and "id=2" in r.err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["rgb"], "SUBCOMMAND"),
        (["rgb", "score", "--input", PRED_EN04, "--factchecking"], "--factchecking is not offered"),
        (["rgb", "mix", "--input", PRED_EN04, "--dataset", "en", "--factchecking", "True"], "--factchecking"),
        (
            ["rgb", "mix", "--input", os.path.join(GOLD, "data_en.jsonl"), "--dataset", "en", "--noise-rate", "1.5"],
            "--noise-rate",
        ),
        (
            ["rgb", "mix", "--input", os.path.join(GOLD, "data_en.jsonl"), "--dataset", "en", "--passage-num", "-1"],
            "--passage-num",
        ),
        (["rgb", "score", "--input", PRED_EN04, "--variant", "nope"], "invalid choice"),
        (["rgb", "score", "--input", os.path.join(GOLD, "data_en.jsonl")], "--dataset is required"),
        (["rgb", "label", "--input", PRED_EN04, "--judge-template", PRED_EN04], "needs --judge"),
        (["rgb", "score", "--input", os.path.join(GOLD, "missing.jsonl"), "--dataset", "en"], "cannot open"),
    ],
)
def test_usage_errors_exit_2(argv, needle):
    r = run_cli(argv)
    assert r.code == 2 and needle in r.err, r.err
    assert "Traceback" not in r.err


def test_bad_input_names_file_line_field(tmp_path):
    p = _write(tmp_path / "p.jsonl", ['{"id": 1, "ans": "a", "prediction": "a"}', "{not json", "[1, 2]"])
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--noise-rate", "0"])
    assert r.code == 2 and "p.jsonl:2" in r.err
    p = _write(tmp_path / "q.jsonl", [{"id": 1, "ans": "a"}, {"id": 2, "prediction": "a"}])
    r = run_cli(["rgb", "label", "--input", p, "--dataset", "en"])
    assert r.code == 2 and "q.jsonl:1: id=1: prediction" in r.err
    p = _write(tmp_path / "s.jsonl", [{"id": 4, "label": [1, 5], "factlabel": 0}])
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--noise-rate", "0", "--use-labels"])
    assert r.code == 2 and "s.jsonl:1: id=4: label" in r.err
    p = _write(tmp_path / "t.jsonl", [{"id": 4, "label": [1]}])
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en_fact", "--noise-rate", "0", "--use-labels"])
    assert r.code == 2 and "factlabel" in r.err
    p = _write(
        tmp_path / "u.jsonl",
        [
            {"id": 1, "ans": "a", "prediction": "a", "noise_rate": 0.2},
            {"id": 2, "ans": "a", "prediction": "a", "noise_rate": 0.4},
        ],
    )
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en"])
    assert r.code == 2 and "--noise-rate" in r.err


def test_output_is_atomic_on_error(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("old", encoding="utf-8")
    p = _write(tmp_path / "p.jsonl", [{"id": 1, "ans": "a"}])
    assert run_cli(["rgb", "label", "--input", p, "--dataset", "en", "--output", str(out)]).code == 2
    assert out.read_text(encoding="utf-8") == "old"


# ----------------------------------------------------------------- judges


def test_judge_prompts_and_judged_scores(tmp_path):
    p = _write(
        tmp_path / "p.jsonl",
        [
            {
                "id": 0,
                "query": "Who won?",
                "ans": "Herons",
                "prediction": "insufficient information",
                "noise_rate": 1.0,
            },
            {"id": 1, "query": "Who won?", "ans": "Herons", "prediction": "The Herons.", "noise_rate": 1.0},
        ],
    )
    r = run_cli(["rgb", "label", "--input", p, "--dataset", "en", "--judge", "reject"])
    assert r.code == 0 and "judge=reject|judge_template=builtin" in r.err
    recs = _jsonl(r.out)
    assert "Question: Who won?\nAnswer: The Herons." in recs[1]["judge_prompt"]
    recs[0]["evaluation"] = "The question is not addressed by the documents."
    recs[1]["evaluation"] = "The question is addressed by the documents."
    lab = _write(tmp_path / "l.jsonl", recs)
    out = json.loads(
        run_cli(["rgb", "score", "--input", lab, "--dataset", "en", "--use-labels", "--judged", "reject"]).out
    )
    assert out["result"] == {"reject_rate": 0.5, "all_rate": 0.5, "tt": 1, "rejecttt": 1, "nums": 2}
    assert "judged=reject|judge_template=builtin" in out["signature"]
    tpl = tmp_path / "t.txt"
    tpl.write_text("R: {ANSWER}\n{note}", encoding="utf-8")
    r = run_cli(["rgb", "label", "--input", p, "--dataset", "en_fact", "--judge", "fact", "--judge-template", str(tpl)])
    recs = _jsonl(r.out)
    assert recs[1]["judge_prompt"] == "R: The Herons.\n{note}" and recs[1]["judge_template"] != "builtin"
    recs[0]["evaluation"], recs[1]["evaluation"] = "NO", "Yes, it has identified them"
    lab = _write(tmp_path / "f.jsonl", recs)
    out = json.loads(
        run_cli(
            [
                "rgb",
                "score",
                "--input",
                lab,
                "--dataset",
                "en_fact",
                "--use-labels",
                "--judged",
                "fact",
                "--gate",
                "reject_rate>=0.5",
            ]
        ).out
    )
    assert out["result"] == {
        "reject_rate": 0.5,
        "all_rate": 0.5,
        "correct_rate": 1.0,
        "tt": 1,
        "rejecttt": 1,
        "correct_tt": 1,
        "nums": 2,
        "noise_rate": 1.0,
    }
    assert f"judge_template={recs[1]['judge_template']}" in out["signature"]
    tpl.write_text("no placeholders", encoding="utf-8")
    r = run_cli(["rgb", "label", "--input", p, "--dataset", "en", "--judge", "reject", "--judge-template", str(tpl)])
    assert r.code == 2 and "{QUESTION}" in r.err
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--judged", "reject"])
    assert r.code == 2 and "evaluation" in r.err


# ----------------------------------------------------------------- report


def test_report_all_four_abilities_per_model(tmp_path):
    for f in PREDS:
        shutil.copy(f, tmp_path / os.path.basename(f))
        shutil.copy(f, tmp_path / os.path.basename(f).replace("_demo_", "_other-model_"))
    files = sorted(str(p) for p in tmp_path.iterdir())
    r = run_cli(["rgb", "report", "--input"] + files)
    assert r.code == 0, r.err
    for needle in (
        "noise robustness",
        "negative rejection",
        "information integration",
        "counterfactual: error detection rate",
        "counterfactual: error correction rate",
        "other-model",
        "demo",
    ):
        assert needle in r.out
    r = run_cli(["rgb", "report", "--format", "json", "--input"] + files)
    out = json.loads(r.out)
    with open(os.path.join(GOLD, "expected_abilities.json"), encoding="utf-8") as fh:
        expected = json.load(fh)["demo"]
    assert out["result"]["abilities"]["demo"] == expected == out["result"]["abilities"]["other-model"]
    assert len(out["result"]["runs"]) == 10
    r = run_cli(
        ["rgb", "report", "--input"]
        + files
        + [
            "--gate",
            "demo/en/noise1.0_passage5_correct0.0/all_rate>=0.5",
            "--gate",
            "other-model/zh_int/noise0.2_passage5_correct0.0/all_rate>0.7",
        ]
    )
    assert r.code == 1 and "FAIL" in r.out
    md = run_cli(["rgb", "report", "--format", "markdown", "--input"] + files)
    assert md.code == 0 and "| demo | en | negative rejection | noise 1.0 | 0.5000 |" in md.out


def test_report_keeps_temperatures_apart(tmp_path):
    for t in ("0.2", "0.7"):
        shutil.copy(PRED_EN04, tmp_path / os.path.basename(PRED_EN04).replace("temp0.2", "temp" + t))
    out = json.loads(
        run_cli(["rgb", "report", "--format", "json", "--input"] + sorted(str(p) for p in tmp_path.iterdir())).out
    )
    assert sorted(out["result"]["abilities"]) == ["demo@temp0.2", "demo@temp0.7"]


def test_report_errors(tmp_path):
    r = run_cli(["rgb", "report", "--input", PRED_EN04, PRED_EN04])
    assert r.code == 2 and "same run" in r.err
    res = PRED_EN04[: -len(".json")] + "_result.json"
    r = run_cli(["rgb", "report", "--input", res])
    assert r.code == 2 and "not score or judge files" in r.err
    r = run_cli(["rgb", "report", "--input", os.path.join(GOLD, "data_en.jsonl")])
    assert r.code == 2 and "file name" in r.err


def test_demo_cases_cover_every_subcommand_and_pass():
    from rageval_min import _demo
    from rageval_min.cli import main

    cases = _demo.load_cases(os.path.join(ROOT, "gold_samples"), "rgb")
    assert {c["argv"][1] for c in cases} == {"mix", "label", "score", "judge", "report"}
    results = _demo.run_family(os.path.join(ROOT, "gold_samples"), "rgb", main)
    assert results and all(r.ok for r in results), [r.detail for r in results if not r.ok]
    assert any("matches expected_mix_en.jsonl" in r.detail for r in results)
    assert any("information_integration" in r.shown for r in results)


# ----------------------------------------------------------------- real processes


def test_subprocess_exit_codes(tmp_path):
    ok = run_subprocess(["rgb", "score", "--input", PRED_EN04, "--gate", "all_rate>=0.4", "--format", "rgb"])
    assert ok.code == 0 and json.loads(ok.out)["all_rate"] == 0.4
    fail = run_subprocess(["rgb", "score", "--input", PRED_EN04, "--gate", "all_rate>=0.8"])
    assert fail.code == 1
    bad = _write(tmp_path / "bad.jsonl", ["{oops"])
    err = run_subprocess(["rgb", "score", "--input", bad, "--dataset", "zh", "--noise-rate", "0"])
    assert err.code == 2 and "bad.jsonl:1" in err.err and "Traceback" not in err.err
    mixed = run_subprocess(["rgb", "mix", "--input", os.path.join(GOLD, "data_en.jsonl")] + MIX_EN_OPTIONS)
    with open(os.path.join(GOLD, "expected_mix_en.jsonl"), encoding="utf-8") as fh:
        assert mixed.code == 0 and mixed.out == fh.read()


@pytest.mark.parametrize(
    "name,old,new",
    [
        ("expected_mix_en.jsonl", "Lantern boats", "Lantern ships"),
        ("prediction_zh_demo_temp0.2_noise0.0_passage5_correct0.0_result.json", '"tt": 1', '"tt": 2'),
        ("expected_abilities.json", "0.6666666666666666", "0.6666666666666667"),
        ("expected_judge_reject_result.json", '"rejecttt": 2', '"rejecttt": 3'),
    ],
)
def test_demo_detects_a_wrong_expected_output(tmp_path, name, old, new):
    from rageval_min.registry import COMMANDS

    samples = tmp_path / "gold_samples"
    shutil.copytree(os.path.join(ROOT, "gold_samples", "rgb"), samples / "rgb")
    # the other families get one trivial passing case, so only rgb's samples are under test here
    version = run_cli(["--version"]).out
    for fam in (c.name for c in COMMANDS):
        if fam != "rgb":
            (samples / fam).mkdir()
            (samples / fam / "version.txt").write_text(version, encoding="utf-8")
            (samples / fam / "cases.json").write_text(
                json.dumps([{"name": "version", "argv": ["--version"], "expected": "version.txt"}]), encoding="utf-8"
            )
    r = run_cli(["demo", "--samples", str(samples)])
    assert r.code == 0, r.out + r.err
    exp = samples / "rgb" / name
    text = exp.read_text(encoding="utf-8")
    assert old in text
    exp.write_text(text.replace(old, new), encoding="utf-8")
    r = run_cli(["demo", "--samples", str(samples)])
    assert r.code == 2 and "FAIL" in r.out and name in r.out


def test_vendored_core_folder_runs_rgb(tmp_path):
    import subprocess
    import sys

    shutil.copytree(
        os.path.join(ROOT, "rageval_min"), tmp_path / "rageval_min", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(os.path.join(GOLD, "data_en.jsonl"), tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "rageval_min", "rgb", "mix", "--input", "data_en.jsonl"] + MIX_EN_OPTIONS,
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
    )
    with open(os.path.join(GOLD, "expected_mix_en.jsonl"), encoding="utf-8") as fh:
        assert proc.returncode == 0 and proc.stdout == fh.read(), proc.stderr


# ----------------------------------------------------------------- contract: --per-item, option checks


def test_score_per_item_rows_in_input_order(tmp_path):
    items = tmp_path / "items.jsonl"
    r = run_cli(["rgb", "score", "--input", PRED_FACT, "--per-item", str(items)])
    assert r.code == 0, r.err
    rows = item_rows(items.read_text(encoding="utf-8"))
    with open(PRED_FACT, encoding="utf-8") as fh:
        ids = [json.loads(line)["id"] for line in fh if line.strip()]
    assert [row["id"] for row in rows] == ids
    assert list(rows[0]) == [
        "id",
        "label",
        "correct",
        "rejected",
        "all_rate",
        "fact_check_rate",
        "correct_rate",
        "skipped",
    ]
    for row in rows:
        for key in ("correct", "rejected", "all_rate", "fact_check_rate"):
            assert type(row[key]) is int and row[key] in (0, 1)
        assert row["correct_rate"] is None if not row["fact_check_rate"] else row["correct_rate"] in (0, 1)
    res = json.loads(r.out)["result"]
    assert sum(row["all_rate"] for row in rows) == res["tt"] and len(rows) == res["nums"]
    assert sum(row["fact_check_rate"] for row in rows) == res["fact_tt"]
    assert sum(row["correct_rate"] or 0 for row in rows) == res["correct_tt"]


def test_score_per_item_noise1_and_skipped_rows(tmp_path):
    p = _write(
        tmp_path / "p.jsonl",
        [
            {"id": "a", "ans": 42, "prediction": "42"},  # dropped as the reference does
            {"id": "b", "ans": "x", "prediction": "insufficient information"},
            {"id": "c", "ans": "Paris", "prediction": "Paris"},
            {"id": "d", "ans": "Paris", "prediction": "Rome"},
        ],
    )
    items = tmp_path / "items.jsonl"
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en", "--noise-rate", "1", "--per-item", str(items)])
    assert r.code == 0, r.err
    rows = _jsonl(items.read_text(encoding="utf-8"))
    assert [(x["id"], x["rejected"], x["correct"], x["all_rate"]) for x in rows] == [
        ("a", None, None, None),
        ("b", 1, 0, 1),
        ("c", 0, 1, 1),
        ("d", 0, 0, 0),
    ]
    assert "not a string" in rows[0]["skipped"] and rows[1]["fact_check_rate"] is None
    assert json.loads(r.out)["result"] == {"all_rate": 2 / 3, "noise_rate": 1.0, "tt": 2, "nums": 3}


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-0.1", "1.5"])
def test_score_noise_rate_outside_0_1_is_exit_2(value, tmp_path):
    items = tmp_path / "items.jsonl"
    r = run_cli(["rgb", "score", "--input", PRED_EN04, f"--noise-rate={value}", "--per-item", str(items)])
    assert r.code == 2 and "--noise-rate" in r.err and "[0, 1]" in r.err, r.err
    assert r.out == "" and not items.exists()


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_mix_non_finite_rates_are_exit_2(value):
    src = os.path.join(GOLD, "data_en.jsonl")
    for opt in ("--noise-rate", "--correct-rate"):
        r = run_cli(["rgb", "mix", "--input", src, "--dataset", "en", f"{opt}={value}"])
        assert r.code == 2 and opt in r.err, r.err


def test_record_noise_rate_outside_0_1_names_the_file(tmp_path):
    p = _write(tmp_path / "p.jsonl", [{"id": 1, "ans": "a", "prediction": "a", "noise_rate": 2.0}])
    r = run_cli(["rgb", "score", "--input", p, "--dataset", "en"])
    assert r.code == 2 and "p.jsonl" in r.err and "[0, 1]" in r.err


def test_score_gate_is_checked_before_reading(tmp_path):
    missing = str(tmp_path / "missing.jsonl")
    r = run_cli(
        ["rgb", "score", "--input", missing, "--dataset", "en", "--noise-rate", "0", "--gate", "all_rate >>= 1"]
    )
    assert r.code == 2 and "--gate" in r.err and "cannot open" not in r.err
    r = run_cli(["rgb", "score", "--input", missing, "--dataset", "en", "--noise-rate", "0", "--gate", "nope>=1"])
    assert r.code == 2 and "unknown metric" in r.err and "cannot open" not in r.err


def test_output_naming_the_input_is_refused(tmp_path):
    p = _write(tmp_path / "p.jsonl", [{"id": 1, "ans": "a", "prediction": "a"}])
    before = open(p, encoding="utf-8").read()
    for cmd in (["score", "--noise-rate", "0"], ["label"]):
        r = run_cli(["rgb"] + cmd + ["--input", p, "--dataset", "en", "--output", p])
        assert r.code == 2 and "same file" in r.err
    assert open(p, encoding="utf-8").read() == before


def test_report_format_abilities_is_the_expected_file():
    r = run_cli(["rgb", "report", "--format", "abilities", "--input"] + PREDS)
    with open(os.path.join(GOLD, "expected_abilities.json"), encoding="utf-8") as fh:
        assert r.code == 0 and r.out == fh.read()
    r = run_cli(["rgb", "report", "--input"] + PREDS + ["--gate", "demo/en/noise9_passage5_correct0.0/all_rate>=0"])
    assert r.code == 2 and "unknown metric" in r.err
