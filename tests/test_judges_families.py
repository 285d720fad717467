"""Judged metrics of the families that exist, end to end through `judge run`:
family prompts -> loopback chat-completions server (scripted judge) -> family scorer,
then the same from the replay cache with no server: identical files and scores.

The expected numbers are worked out by hand from the inputs and the scripted judge's rule.
"""

import functools
import json
import os
import re

import pytest
from conftest import ROOT, run_cli
from judge_server import ChatServer
from judged_helpers import _family_judge, _judge_args, _judge_live_then_replay, _live_then_replay, _score, scripted

RGB = os.path.join(ROOT, "gold_samples", "rgb")
P_EN1 = os.path.join(RGB, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def test_rgb_rejection_rate_judged_live_and_replayed(server, tmp_path):
    src = os.path.join(RGB, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
    labelled = str(tmp_path / "labelled.jsonl")
    assert run_cli(["rgb", "label", "--input", src, "--judge", "reject", "--output", labelled]).code == 0
    live, replay, asked, stats = _judge_live_then_replay(server, tmp_path, labelled, "judge_prompt", "evaluation")
    assert asked == 4 and stats["failures"] == 0
    scores = []
    for f in (live, replay):
        out = _score(["rgb", "score", "--input", f, "--dataset", "en", "--noise-rate", "1.0", "--judged", "reject"])
        scores.append(out["result"])
    # predictions 0 and 1 say the documents are insufficient -> judged "not addressed";
    # labels are [-1], [0, 0], [1], [0] -> only record 2 counts in tt
    assert scores[0] == scores[1] == {"reject_rate": 0.5, "all_rate": 0.25, "tt": 1, "rejecttt": 2, "nums": 4}


def test_rgb_error_detection_judged_live_and_replayed(server, tmp_path):
    src = os.path.join(RGB, "prediction_en_fact_demo_temp0.2_noise0.0_passage5_correct0.0.json")
    with open(src, encoding="utf-8") as fh:
        preds = [json.loads(line) for line in fh if line.strip()]
    labelled = str(tmp_path / "labelled.jsonl")
    assert run_cli(["rgb", "label", "--input", src, "--judge", "fact", "--output", labelled]).code == 0
    live, replay, asked, _ = _judge_live_then_replay(server, tmp_path, labelled, "judge_prompt", "evaluation")
    with open(live, encoding="utf-8") as fh:
        judged = [json.loads(line) for line in fh]
    flagged = ["factual error" in p["prediction"].lower() for p in preds]
    assert [("Yes" in j["evaluation"]) for j in judged] == flagged
    a = _score(["rgb", "score", "--input", live, "--dataset", "en_fact", "--noise-rate", "0.0", "--judged", "fact"])
    b = _score(["rgb", "score", "--input", replay, "--dataset", "en_fact", "--noise-rate", "0.0", "--judged", "fact"])
    assert a["result"] == b["result"]
    assert a["result"]["rejecttt"] == sum(flagged) and a["result"]["nums"] == len(preds)
    assert a["result"]["reject_rate"] == sum(flagged) / len(preds)


# --------------------------------------------------------------------------- `rgb judge` / `pairwise judge`
# (the judge subcommand of each family, run through the CLI)


def test_rgb_judge_subcommand_live_equals_replay(server, tmp_path):
    run = functools.partial(_family_judge, "rgb")
    argv = ["--input", P_EN1, "--judged", "reject"]
    live, replay, cache, out, out2 = _live_then_replay(run, server, tmp_path, argv + ["--gate", "judge_failures==0"])
    rep = json.loads(out)
    assert rep["result"] == {"reject_rate": 0.5, "all_rate": 0.25, "tt": 1, "rejecttt": 2, "nums": 4}
    assert rep["signature"].endswith("|judged=reject|judge_template=builtin|judge_model=scripted")
    assert len(server.requests) == 4 and all(r["body"].keys() == {"model", "messages"} for r in server.requests)
    assert json.loads(out2) == rep
    code, out3, _ = run(argv + ["--records", replay, "--judge", "replay:" + cache, "--format", "rgb"])
    assert code == 0 and json.loads(out3) == rep["result"]


def test_rgb_judge_failed_call_is_an_error_then_resumes(server, tmp_path):
    out = str(tmp_path / "judged.jsonl")
    argv = _judge_argv(server, tmp_path, P_EN1)
    server.faults = ["400"]
    code, _, err = _family_judge("rgb", argv)
    assert code == 2 and re.search(r"1 judge call\(s\) failed", err)
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert rows[0]["evaluation"] is None and "HTTP 400" in rows[0]["judge_error"]
    code, text, err = _family_judge("rgb", argv)
    assert code == 0, err
    rep = json.loads(text)
    assert rep["result"]["rejecttt"] == 2
    assert rep["family"] == "rgb" and rep["result"]["nums"] == 4
    assert len(server.completed) == 4  # three answers came from the cache the second time


# ------------------------------------------------------------ rgb judge: checks before any call, --per-item


def _write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return str(path)


def _judge_argv(server, tmp_path, src, *extra):
    records, cache = str(tmp_path / "judged.jsonl"), str(tmp_path / "cache.jsonl")
    return ["--input", src, "--judged", "reject"] + _judge_args(server, records, cache) + list(extra)


def test_rgb_judge_mixed_noise_rates_fail_before_any_call(server, tmp_path):
    rows = [
        {"id": i, "query": "q?", "ans": "a", "prediction": "insufficient information", "noise_rate": nr}
        for i, nr in enumerate((1.0, 1.0, 0.4))
    ]
    src = _write_jsonl(tmp_path / "mixed.jsonl", rows)
    code, out, err = _family_judge("rgb", _judge_argv(server, tmp_path, src, "--dataset", "en"))
    assert code == 2 and "mixed.jsonl" in err and "different noise_rate" in err, err
    assert server.requests == [] and out == ""
    assert not (tmp_path / "judged.jsonl").exists() and not (tmp_path / "cache.jsonl").exists()


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--gate", "reject_rate >>= 0.5"], "--gate"),
        (["--gate", "fact_check_rate>=0.5"], "unknown metric"),
        (["--gate", "judge_failures==0", "--gate", "nope<1"], "unknown metric"),
        (["--noise-rate=inf"], "--noise-rate"),
        (["--noise-rate", "1.5"], "--noise-rate"),
        (["--judge-timeout", "inf"], "--judge-timeout"),
        (["--variant", "reject_casefold", "--judge-template", "/nonexistent/template.txt"], "template"),
        (["--dataset", "en", "--output", P_EN1], "same file"),
        (["--per-item", "/nonexistent/dir/items.jsonl"], "does not exist"),
    ],
)
def test_rgb_judge_bad_options_fail_before_any_call(server, tmp_path, extra, needle):
    code, out, err = _family_judge("rgb", _judge_argv(server, tmp_path, P_EN1, *extra))
    assert code == 2 and needle in err, err
    assert server.requests == [] and out == ""


@pytest.mark.parametrize(
    "rows,needle",
    [
        ([{"id": 1, "query": "q?", "ans": "a", "prediction": "a"}, {"id": 2, "ans": "a", "prediction": "b"}], "query"),
        ([{"id": 1, "query": "q?", "ans": "a", "prediction": "a"}, {"id": 2, "query": "q?", "ans": "a"}], "prediction"),
        ([{"id": 1, "query": "q?", "ans": "a", "prediction": "a"}, "{broken"], "bad.jsonl:2"),
    ],
)
def test_rgb_judge_bad_record_anywhere_fails_before_any_call(server, tmp_path, rows, needle):
    src = _write_jsonl(tmp_path / "bad.jsonl", rows)
    code, _, err = _family_judge("rgb", _judge_argv(server, tmp_path, src, "--dataset", "en", "--noise-rate", "0"))
    assert code == 2 and needle in err and "bad.jsonl" in err, err
    assert server.requests == []


def test_rgb_judge_template_without_placeholder_fails_before_any_call(server, tmp_path):
    tpl = tmp_path / "t.txt"
    tpl.write_text("no placeholders", encoding="utf-8")
    code, _, err = _family_judge("rgb", _judge_argv(server, tmp_path, P_EN1, "--judge-template", str(tpl)))
    assert code == 2 and "{QUESTION}" in err
    assert server.requests == []


def test_rgb_judge_per_item_and_report_outputs(server, tmp_path):
    items, report = tmp_path / "items.jsonl", tmp_path / "report.json"
    argv = _judge_argv(server, tmp_path, P_EN1, "--per-item", str(items), "--output", str(report))
    code, out, err = _family_judge("rgb", argv)
    assert code == 0 and out == "", err
    rep = json.loads(report.read_text(encoding="utf-8"))
    assert rep["result"] == {"reject_rate": 0.5, "all_rate": 0.25, "tt": 1, "rejecttt": 2, "nums": 4}
    assert rep["signature"].endswith("|judged=reject|judge_template=builtin|judge_model=scripted")
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [0, 1, 2, 3]
    assert [(r["reject_rate"], r["correct"], r["all_rate"]) for r in rows] == [
        (1, 0, 0),
        (1, 0, 0),
        (0, 1, 1),
        (0, 0, 0),
    ]
    assert all(r["correct_rate"] is None and r["judge_template"] == "builtin" for r in rows)
    assert len(server.requests) == 4
