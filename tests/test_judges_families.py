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

RGB = os.path.join(ROOT, "gold_samples", "rgb")


def _answer_part(prompt):
    return prompt.rsplit("Answer:", 1)[1].rsplit("Verdict:", 1)[0]


def scripted(prompt, body):
    """A stand-in judge that follows each family's builtin prompt."""
    if "Response 1:" in prompt:  # pairwise: prefer the response that says "good"; else slot A
        r1 = re.search(r"Response 1:\n<<<\n(.*?)\n>>>", prompt, re.S).group(1)
        r2 = re.search(r"Response 2:\n<<<\n(.*?)\n>>>", prompt, re.S).group(1)
        return "Choice: B\nReason:\n1. scripted" if ("good" in r2 and "good" not in r1) else "Choice: A\nReason:\n1. scripted"
    if "factual errors" in prompt and "identified the factual errors" in prompt:  # rgb fact
        ans = _answer_part(prompt).lower()
        return ("Yes, the model has identified the factual errors." if "factual error" in ans
                else "NO, the model failed to notice any factual errors.")
    ans = _answer_part(prompt).lower()  # rgb reject
    return ("The question is not addressed by the documents." if ("insufficient" in ans or "can not answer" in ans)
            else "The question is addressed by the documents.")


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def _judge_live_then_replay(server, tmp_path, inp, prompt_field, answer_field):
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    r = run_cli(["judge", "run", "--input", inp, "--output", live, "--prompt-field", prompt_field,
                 "--answer-field", answer_field, "--judge", server.base_url, "--judge-model", "scripted",
                 "--judge-cache", cache, "--concurrency", "2"])
    assert r.code == 0, r.err
    asked = len(server.requests)
    server.__exit__()
    r2 = run_cli(["judge", "run", "--input", inp, "--output", replay, "--prompt-field", prompt_field,
                  "--answer-field", answer_field, "--judge", "replay:" + cache])
    assert r2.code == 0, r2.err
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    return live, replay, asked, json.loads(r.out)["result"]


def _score(argv):
    r = run_cli(argv)
    assert r.code == 0, r.err
    return json.loads(r.out)


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


def test_pairwise_win_rates_judged_live_and_replayed(server, tmp_path):
    table = tmp_path / "table.jsonl"
    rows = [
        ("p1", "Design the API.", "plain api", "good api"),        # m1 wins in both orders
        ("p2", "Design the schema.", "plain schema", "other schema"),  # judge always says A: inconsistent
        ("p3", "Design the UI.", "same ui", "same ui"),            # exact match: never sent
    ]
    with open(table, "w", encoding="utf-8") as fh:
        for idx, q, ref, m1 in rows:
            fh.write(json.dumps({"index": idx, "question": q, "evaluating_guidance": "- Be complete.",
                                 "task": "api_design-general", "reference_answer": "",
                                 "answer-ref": ref, "answer-m1": m1}) + "\n")
    prompts = str(tmp_path / "prompts.jsonl")
    assert run_cli(["pairwise", "prompts", "--input", str(table), "--refm", "ref", "--output", prompts]).code == 0
    live, replay, asked, stats = _judge_live_then_replay(server, tmp_path, prompts, "prompt", "judge")
    assert asked == 4 and stats["skipped"] == 2 and stats["calls"] == 4
    results = [
        _score(["pairwise", "score", "--record", f, "--nopt", "2", "--refm", "ref", "--judge-column", "judge"])["result"]
        for f in (live, replay)
    ]
    assert results[0] == results[1]
    counts = results[0]["counts"]
    assert (counts["total"], counts["non_exact"], counts["extracted"], counts["consistent"]) == (6, 4, 4, 2)
    assert counts["failed"] == 0 and counts["consistency_rate"] == 0.5
