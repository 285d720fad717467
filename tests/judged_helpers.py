"""Helpers shared by the judged-family tests (a scripted judge that follows each family's builtin prompt)."""

import json
import re

from conftest import run_cli


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


def _judge_live_then_replay(server, tmp_path, inp, prompt_field, answer_field):
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    r = run_cli(
        [
            "judge",
            "run",
            "--input",
            inp,
            "--records",
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
            "--records",
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


def _family_judge(family, argv):
    r = run_cli([family, "judge"] + argv)
    return r.code, r.out, r.err


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
