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
        return (
            "Choice: B\nReason:\n1. scripted"
            if ("good" in r2 and "good" not in r1)
            else "Choice: A\nReason:\n1. scripted"
        )
    if "factual errors" in prompt and "identified the factual errors" in prompt:  # rgb fact
        ans = _answer_part(prompt).lower()
        return (
            "Yes, the model has identified the factual errors."
            if "factual error" in ans
            else "NO, the model failed to notice any factual errors."
        )
    ans = _answer_part(prompt).lower()  # rgb reject
    return (
        "The question is not addressed by the documents."
        if ("insufficient" in ans or "can not answer" in ans)
        else "The question is addressed by the documents."
    )


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def _judge_live_then_replay(server, tmp_path, inp, prompt_field, answer_field):
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    r = run_cli(
        [
            "judge",
            "run",
            "--input",
            inp,
            "--output",
            live,
            "--prompt-field",
            prompt_field,
            "--answer-field",
            answer_field,
            "--judge",
            server.base_url,
            "--judge-model",
            "scripted",
            "--judge-cache",
            cache,
            "--concurrency",
            "2",
        ]
    )
    assert r.code == 0, r.err
    asked = len(server.requests)
    server.__exit__()
    r2 = run_cli(
        [
            "judge",
            "run",
            "--input",
            inp,
            "--output",
            replay,
            "--prompt-field",
            prompt_field,
            "--answer-field",
            answer_field,
            "--judge",
            "replay:" + cache,
        ]
    )
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
        ("p1", "Design the API.", "plain api", "good api"),  # m1 wins in both orders
        ("p2", "Design the schema.", "plain schema", "other schema"),  # judge always says A: inconsistent
        ("p3", "Design the UI.", "same ui", "same ui"),  # exact match: never sent
    ]
    with open(table, "w", encoding="utf-8") as fh:
        for idx, q, ref, m1 in rows:
            fh.write(
                json.dumps(
                    {
                        "index": idx,
                        "question": q,
                        "evaluating_guidance": "- Be complete.",
                        "task": "api_design-general",
                        "reference_answer": "",
                        "answer-ref": ref,
                        "answer-m1": m1,
                    }
                )
                + "\n"
            )
    prompts = str(tmp_path / "prompts.jsonl")
    assert run_cli(["pairwise", "prompts", "--input", str(table), "--refm", "ref", "--output", prompts]).code == 0
    live, replay, asked, stats = _judge_live_then_replay(server, tmp_path, prompts, "prompt", "judge")
    assert asked == 4 and stats["skipped"] == 2 and stats["calls"] == 4
    results = [
        _score(["pairwise", "score", "--record", f, "--nopt", "2", "--refm", "ref", "--judge-column", "judge"])[
            "result"
        ]
        for f in (live, replay)
    ]
    assert results[0] == results[1]
    counts = results[0]["counts"]
    assert (counts["total"], counts["non_exact"], counts["extracted"], counts["consistent"]) == (6, 4, 4, 2)
    assert counts["failed"] == 0 and counts["consistency_rate"] == 0.5


# --------------------------------------------------------------------------- `rgb judge` / `pairwise judge`
# (rageval_min/_judge_families.py; registered here on a bare parser, as the families' register() will)


def _family_judge(family, argv):
    import argparse
    import io

    from rageval_min import _judge_families as jf
    from rageval_min._cli_common import CliIO

    parser = argparse.ArgumentParser(prog=f"rageval-min {family}")
    sub = parser.add_subparsers()
    (jf.register_rgb_judge if family == "rgb" else jf.register_pairwise_judge)(sub)
    args = parser.parse_args(["judge"] + argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, CliIO(out, err))
    return code, out.getvalue(), err.getvalue()


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
            "--output",
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
            "--output",
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
        ["--input", src, "--judged", "reject", "--output", replay, "--judge", "replay:" + cache, "--format", "rgb"],
    )
    assert code == 0 and json.loads(out3) == rep["result"]


def test_rgb_judge_failed_call_is_an_error_then_resumes(server, tmp_path):
    from rageval_min.errors import ScoringError

    src = os.path.join(RGB, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
    cache, out = str(tmp_path / "cache.jsonl"), str(tmp_path / "judged.jsonl")
    argv = [
        "--input",
        src,
        "--judged",
        "reject",
        "--output",
        out,
        "--judge",
        server.base_url,
        "--judge-model",
        "scripted",
        "--judge-cache",
        cache,
    ]
    server.faults = ["400"]
    with pytest.raises(ScoringError, match=r"1 judge call\(s\) failed"):
        _family_judge("rgb", argv)
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert rows[0]["evaluation"] is None and "HTTP 400" in rows[0]["judge_error"]
    code, text, err = _family_judge("rgb", argv)
    assert code == 0, err
    rep = json.loads(text)
    assert rep["result"]["rejecttt"] == 2
    assert rep["family"] == "rgb" and rep["result"]["nums"] == 4
    assert len(server.completed) == 4  # three answers came from the cache the second time


def _pairwise_table(tmp_path):
    table = tmp_path / "table.jsonl"
    with open(table, "w", encoding="utf-8") as fh:
        for idx, ref, m1 in (
            ("p1", "plain api", "good api"),
            ("p2", "plain schema", "other schema"),
            ("p3", "same ui", "same ui"),
        ):
            fh.write(
                json.dumps(
                    {
                        "index": idx,
                        "question": "Design it.",
                        "evaluating_guidance": "- Be complete.",
                        "task": "api_design-general",
                        "reference_answer": "",
                        "answer-ref": ref,
                        "answer-m1": m1,
                    }
                )
                + "\n"
            )
    return str(table)


def test_pairwise_judge_subcommand_live_equals_replay(server, tmp_path):
    table = _pairwise_table(tmp_path)
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    code, out, err = _family_judge(
        "pairwise",
        [
            "--input",
            table,
            "--refm",
            "ref",
            "--output",
            live,
            "--judge",
            server.base_url,
            "--judge-model",
            "scripted",
            "--judge-cache",
            cache,
            "--concurrency",
            "2",
        ],
    )
    assert code == 0, err
    rep = json.loads(out)
    counts = rep["result"]["counts"]
    assert (counts["total"], counts["non_exact"], counts["extracted"], counts["consistent"]) == (6, 4, 4, 2)
    assert len(server.requests) == 4
    assert all(r["body"]["temperature"] == 0 and r["body"]["max_tokens"] == 1024 for r in server.requests)
    server.__exit__()
    code, out2, err = _family_judge(
        "pairwise", ["--input", table, "--refm", "ref", "--output", replay, "--judge", "replay:" + cache]
    )
    assert code == 0, err
    assert json.loads(out2) == rep
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    with open(live, encoding="utf-8") as fh:
        judged = [json.loads(line)["judge"] for line in fh]
    assert judged[4:] == ["EM", "EM"] and [j[:9] for j in judged[:2]] == ["Choice: B", "Choice: A"]


def test_pairwise_judge_failed_call_is_the_reference_fail_message(server, tmp_path):
    table = _pairwise_table(tmp_path)
    out = str(tmp_path / "judged.jsonl")
    server.faults = ["400"]  # the first comparison (p1;ref;m1) fails
    original = server.answer
    server.answer = lambda prompt, body: "Choice:B (no space)" if "schema" in prompt else original(prompt, body)
    argv = ["--input", table, "--refm", "ref", "--output", out, "--judge", server.base_url, "--judge-model", "scripted"]
    code, text, err = _family_judge("pairwise", argv)
    assert code == 0, err
    rep = json.loads(text)
    assert rep["result"]["counts"]["failed"] == 1
    assert rep["result"]["counts"]["extracted"] == 1  # p1 swapped only: p1 normal failed, both p2 unparseable
    assert rep["gates"] == [] and rep["pass"] is True
    with open(out, encoding="utf-8") as fh:
        assert json.loads(fh.readline())["judge"] == "Failed to obtain answer via API."
    code, text, err = _family_judge("pairwise", argv + ["--format", "text", "--gate", "judge_unparseable==0"])
    assert code == 1 and "judge_unparseable==0" in text
