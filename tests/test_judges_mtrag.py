"""`mtrag judge` (rageval_min/mtrag/judge.py): IDK, underspecified, RB_llm and RL_F through a
scripted judge on a loopback server, then from the replay cache; then `mtrag condition`."""

import functools
import json
import os
import re

import pytest
from conftest import ROOT, run_cli
from judge_server import ChatServer
from judged_helpers import _family_judge, _judge_args, _live_then_replay

from rageval_min.mtrag import judge as jm

TASKS = os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl")


def _block(prompt, start, end):
    return prompt.rsplit(start, 1)[1].split(end, 1)[0].strip()


def scripted(prompt, body):
    if prompt.rstrip().endswith("[Output]"):  # idk
        resp = _block(prompt, "[Response]\n", "\n[Output]").lower()
        if "do not have" in resp or "sorry" in resp:
            return "Yes"
        return "partial" if "not say" in resp else "no, it answers"
    if "[The Start of Assistant's Answer]" in prompt:  # rb_llm
        ans = _block(prompt, "[The Start of Assistant's Answer]", "[The End of Assistant's Answer]")
        return "Fine. Rating: [[8]]" if len(ans) > 230 else "Weak. Rating: [[4]]"
    if "Break the answer below" in prompt:  # statements
        ans = prompt.rsplit("Answer:\n", 1)[1].strip()
        parts = [p.strip() for p in re.split(r"(?<=\.)\s+", ans) if p.strip()]
        return "```json\n" + json.dumps({"statements": parts}) + "\n```"
    if "Decide whether the statement" in prompt:  # verdict
        context = _block(prompt, "Context:\n", "\nStatement:").lower()
        statement = prompt.rsplit("Statement:\n", 1)[1].strip()
        word = re.findall(r"[A-Za-z]{4,}", statement)
        ok = bool(word) and word[0].lower() in context
        return json.dumps({"reason": "scripted", "verdict": 1 if ok else 0})
    if "ambiguous or underspecified" in prompt:
        return '{"decision": "no", "explanation": "scripted"}'
    raise AssertionError("unexpected prompt: " + prompt[:80])


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


_run = functools.partial(_family_judge, "mtrag")


def _expected(tasks):
    """The scripted judge's verdicts, worked out from the inputs without the code under test."""
    exp = []
    for t in tasks:
        pred = t["predictions"][0]["text"]
        low = pred.lower()
        idk = 1 if ("do not have" in low or "sorry" in low) else (0.5 if "not say" in low else 0)
        rb = 0.8 if len(pred.strip()) > 230 else 0.4
        context = "\n".join(c["text"] for c in t["contexts"]).lower()
        parts = [p.strip() for p in re.split(r"(?<=\.)\s+", pred.strip()) if p.strip()]
        oks = []
        for p in parts:
            w = re.findall(r"[A-Za-z]{4,}", p)
            oks.append(1 if (w and w[0].lower() in context) else 0)
        exp.append((idk, rb, sum(oks) / len(oks) if oks else None))
    return exp


def test_mtrag_judge_live_then_replay_then_condition(server, tmp_path):
    with open(TASKS, encoding="utf-8") as fh:
        tasks = [json.loads(line.replace("NaN", "null")) for line in fh]
    live, replay, _, out, out2 = _live_then_replay(_run, server, tmp_path, ["--input", TASKS], "--concurrency", "2")
    rep = json.loads(out)
    with open(live, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    got = [(r["metrics"]["idk_eval"][0], r["metrics"]["RB_llm"][0], r["metrics"]["RL_F"][0]) for r in rows]
    assert got == _expected(tasks)
    assert len(set(got)) == 3  # the three records are judged differently
    assert rep["result"]["steps"] == ["idk", "rb_llm", "rl_f"]
    assert rep["signature"].endswith("|step=judge|steps=idk+rb_llm+rl_f|judge_template=builtin|judge_model=scripted")
    idk_req = [r for r in server.requests if r["prompt"].rstrip().endswith("[Output]")]
    assert idk_req[0]["body"]["messages"][0]["role"] == "system"
    assert {k: idk_req[0]["body"][k] for k in ("temperature", "top_p", "max_tokens", "seed")} == {
        "temperature": 0.0,
        "top_p": 1,
        "max_tokens": 400,
        "seed": 100,
    }
    rb_req = [r for r in server.requests if "[The Start of Assistant's Answer]" in r["prompt"]]
    assert rb_req[0]["prompt"].startswith("\n[Instruction]") and rb_req[0]["prompt"].endswith("\n")
    calls = json.loads(out)
    n_requests = len(server.requests)
    replayed = json.loads(out2)
    assert replayed["result"].pop("output") == replay and calls["result"].pop("output") == live
    assert replayed == calls
    assert json.loads(out2)["result"]["records"] == 3 and n_requests >= 9

    # then the reference's next stage, unchanged
    cond = str(tmp_path / "cond.jsonl")
    r = run_cli(["mtrag", "condition", "--input", live, "--records", cond])
    assert r.code == 0, r.err
    with open(cond, encoding="utf-8") as fh:
        conditioned = [json.loads(line) for line in fh]
    assert all("RB_llm_idk_underspecified" in c["metrics"] for c in conditioned)


def test_mtrag_judge_steps_templates_and_failures(server, tmp_path):
    tmpl = tmp_path / "idk.txt"
    tmpl.write_text("Custom IDK.\n[Response]\n{response}\n[Output]\n", encoding="utf-8")
    out = str(tmp_path / "out.jsonl")
    server.faults = ["400"]  # the first idk call fails and is not guessed
    argv = ["--input", TASKS, "--steps", "idk,underspecified", "--judge-template", f"idk={tmpl}"]
    code, text, err = _run(argv + _judge_args(server, out))
    assert code == 0, err
    rep = json.loads(text)
    import hashlib

    sha = hashlib.sha256(tmpl.read_bytes()).hexdigest()[:12]
    assert f"judge_template=idk:{sha},underspecified:builtin" in rep["signature"]
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    # the steps run in the reference pipeline's order (underspecified, then idk), so the first call,
    # which fails, is the first record's underspecified one; its value is null, never guessed
    assert rows[0]["metrics"]["underspecified_eval"] == [None]
    assert [r["metrics"]["underspecified_eval"] for r in rows[1:]] == [[0.0], [0.0]]  # a float column: null in it
    assert all(r["metrics"]["idk_eval"] != [None] for r in rows)
    assert list(rows[0]["metrics"])[-2:] == ["underspecified_eval", "idk_eval"]
    assert any("underspecified_eval: judge call failed" in d for d in rep["diagnostics"])
    assert "RB_llm" not in rows[1]["metrics"] or rows[1]["metrics"]["RB_llm"] != [None]
    n_requests = len(server.requests)
    code, text, err = _run(["--input", TASKS, "--steps", "idk,bogus"] + _judge_args(server, out, model="m"))
    assert code == 2 and "unknown step" in err and len(server.requests) == n_requests


def test_mtrag_parsers_and_conversation_split():
    from rageval_min.judges import UnparseableAnswer

    assert jm.parse_idk("  Yes, it does") == 1
    with pytest.raises(UnparseableAnswer) as info:
        jm.parse_idk('"yes"')
    assert info.value.fallback == "unknown"
    assert jm.parse_rating("Rating: [[7]]") == 0.7
    with pytest.raises(UnparseableAnswer) as info:
        jm.parse_rating("no number")
    assert info.value.fallback == 0.5
    assert jm.parse_statements('{"statements": ["a.", " ", "b."]}') == ["a.", "b."]
    assert jm.parse_verdict('{"verdict": 1}') == 1 and jm.parse_verdict("verdict: 0") == 0
    with pytest.raises(UnparseableAnswer):
        jm.parse_verdict("maybe")
    # spec 13: multi-user conversation -> previous is every line but the last physical line
    assert jm.split_conversation("user: a\nagent: b\nuser: c\ncontinued") == ("user: a\nagent: b\nuser: c", "c")
