"""Judged metrics of the families that exist, end to end through `judge run`:
family prompts -> loopback chat-completions server (scripted judge) -> family scorer,
then the same from the replay cache with no server: identical files and scores.

The expected numbers are worked out by hand from the inputs and the scripted judge's rule.
"""

import json
import os
import re

import pytest
from conftest import ROOT, run_cli
from judge_server import ChatServer
from judged_helpers import _family_judge, _judge_live_then_replay, _score, scripted

RGB = os.path.join(ROOT, "gold_samples", "rgb")


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
# (rageval_min/_judge_families.py; registered here on a bare parser, as the families' register() will)


def test_rgb_judge_subcommand_live_equals_replay(server, tmp_path):
    src = os.path.join(RGB, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    code, out, err = _family_judge(
        "rgb",
        [
            "--input",
            src,
            "--judged",
            "reject",
            "--records",
            live,
            "--judge",
            server.base_url,
            "--judge-model",
            "scripted",
            "--judge-cache",
            cache,
            "--gate",
            "judge_failures==0",
        ],
    )
    assert code == 0, err
    rep = json.loads(out)
    assert rep["result"] == {"reject_rate": 0.5, "all_rate": 0.25, "tt": 1, "rejecttt": 2, "nums": 4}
    assert rep["signature"].endswith("|judged=reject|judge_template=builtin|judge_model=scripted")
    assert len(server.requests) == 4 and all(r["body"].keys() == {"model", "messages"} for r in server.requests)
    server.__exit__()
    code, out2, err = _family_judge(
        "rgb",
        [
            "--input",
            src,
            "--judged",
            "reject",
            "--records",
            replay,
            "--judge",
            "replay:" + cache,
            "--gate",
            "judge_failures==0",
        ],
    )
    assert code == 0, err
    assert json.loads(out2) == rep
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    code, out3, _ = _family_judge(
        "rgb",
        ["--input", src, "--judged", "reject", "--records", replay, "--judge", "replay:" + cache, "--format", "rgb"],
    )
    assert code == 0 and json.loads(out3) == rep["result"]


def test_rgb_judge_failed_call_is_an_error_then_resumes(server, tmp_path):

    src = os.path.join(RGB, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
    cache, out = str(tmp_path / "cache.jsonl"), str(tmp_path / "judged.jsonl")
    argv = [
        "--input",
        src,
        "--judged",
        "reject",
        "--records",
        out,
        "--judge",
        server.base_url,
        "--judge-model",
        "scripted",
        "--judge-cache",
        cache,
    ]
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
