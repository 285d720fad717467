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


def _judge_args(server, records, cache=None, model="scripted"):
    """`--records RECORDS`, a live judge on the loopback `server` and, when given, `--judge-cache CACHE`."""
    argv = ["--records", records, "--judge", server.base_url, "--judge-model", model]
    return argv + (["--judge-cache", cache] if cache else [])


def _live_then_replay(run, server, tmp_path, argv, *live_extra):
    """`run(argv)` -> (code, out, err) live against `server` with a cache (plus `live_extra`), then with the
    server stopped from `replay:` that cache: both succeed and write identical records.
    Returns the paths (live, replay, cache) and the two reports (out, replay_out)."""
    cache = str(tmp_path / "cache.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    code, out, err = run(argv + _judge_args(server, live, cache) + list(live_extra))
    assert code == 0, err
    server.__exit__()
    code, replay_out, err = run(argv + ["--records", replay, "--judge", "replay:" + cache])
    assert code == 0, err
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    return live, replay, cache, out, replay_out


def _judge_run(argv):
    r = run_cli(["judge", "run"] + argv)
    return r.code, r.out, r.err


def _judge_live_then_replay(server, tmp_path, inp, prompt_field, answer_field):
    argv = ["--input", inp, "--prompt-field", prompt_field, "--answer-field", answer_field]
    live, replay, _, out, _ = _live_then_replay(_judge_run, server, tmp_path, argv, "--concurrency", "2")
    return live, replay, len(server.requests), json.loads(out)["result"]


def _score(argv):
    r = run_cli(argv)
    assert r.code == 0, r.err
    return json.loads(r.out)


def _family_judge(family, argv):
    r = run_cli([family, "judge"] + argv)
    return r.code, r.out, r.err


PAIRWISE_ROWS = (
    ("p1", "Design it.", "plain api", "good api"),
    ("p2", "Design it.", "plain schema", "other schema"),
    ("p3", "Design it.", "same ui", "same ui"),
)


def _pairwise_table(tmp_path, rows=PAIRWISE_ROWS):
    """A pairwise table of (index, question, answer-ref, answer-m1) rows."""
    table = tmp_path / "table.jsonl"
    with open(table, "w", encoding="utf-8") as fh:
        for idx, question, ref, m1 in rows:
            fh.write(
                json.dumps(
                    {
                        "index": idx,
                        "question": question,
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
