"""`rageval-min judge run`: in-process, as a subprocess, kill-and-resume, replay."""

import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT, run_cli, run_subprocess
from judge_server import ChatServer


@pytest.fixture
def server():
    with ChatServer() as s:
        yield s


def _prompts(path, n, start=0):
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(start, start + n):
            fh.write(json.dumps({"id": f"r{i}", "prompt": f"prompt number {i}"}) + "\n")
    return str(path)


def _rows(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _base(server, inp, out, *extra):
    return ["judge", "run", "--input", inp, "--output", out, "--judge", server.base_url, "--judge-model", "m"] + list(
        extra
    )


def test_judge_run_writes_answers_and_gateable_stats(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 3)
    out = str(tmp_path / "a.jsonl")
    r = run_cli(
        _base(
            server,
            inp,
            out,
            "--param",
            "temperature=0",
            "--param",
            'stop=["\\n"]',
            "--system",
            "sys",
            "--gate",
            "judge_calls >= 3",
        )
    )
    assert r.code == 0, r.err
    assert _rows(out) == [{"id": f"r{i}", "answer": f"answer to: prompt number {i}", "error": None} for i in range(3)]
    report = json.loads(r.out)
    assert report["family"] == "judge"
    assert report["result"] == {
        "records": 3,
        "skipped": 0,
        "calls": 3,
        "cache_hits": 0,
        "failures": 0,
        "unparseable": 0,
    }
    assert (
        "judge_model=m" in report["signature"]
        and 'params={"stop":["\\n"],"system":"sys","temperature":0}' in report["signature"]
    )
    body = server.requests[0]["body"]
    assert (
        body["temperature"] == 0
        and body["stop"] == ["\n"]
        and body["messages"][0] == {"role": "system", "content": "sys"}
    )
    assert r.err == ""  # no progress line when stderr is not a terminal
    r2 = run_cli(_base(server, inp, out, "--gate", "judge_cache_hits >= 1", "--format", "text"))
    assert r2.code == 1 and "FAIL" in r2.out


def test_judge_run_failed_call_exits_1_with_error_rows(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 2)
    out = str(tmp_path / "a.jsonl")
    server.prompt_faults = {"prompt number 1": ["400"]}
    r = run_cli(_base(server, inp, out))
    assert r.code == 1
    rows = _rows(out)
    assert rows[0]["error"] is None and rows[1]["answer"] is None and "HTTP 400" in rows[1]["error"]
    assert json.loads(r.out)["result"]["failures"] == 1


def test_judge_run_abort_is_a_usage_error_and_writes_no_output(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 6)
    out = tmp_path / "a.jsonl"
    server.faults = ["500"] * 20
    r = run_cli(_base(server, inp, str(out), "--judge-retries", "0", "--judge-abort-after", "2"))
    assert r.code == 2 and "aborted after 2 consecutive failed calls" in r.err
    assert not out.exists()
    assert len(server.requests) == 2


def test_judge_run_template_renders_record_fields(server, tmp_path):
    inp = tmp_path / "p.jsonl"
    inp.write_text(json.dumps({"id": 1, "question": "Q1", "meta": {"a": 1}}) + "\n", encoding="utf-8")
    tmpl = tmp_path / "t.txt"
    tmpl.write_text('Question: {question}\nMeta: {meta}\nAnswer as {"x": 1}', encoding="utf-8")
    out = str(tmp_path / "a.jsonl")
    r = run_cli(_base(server, str(inp), out, "--judge-template", str(tmpl)))
    assert r.code == 0, r.err
    assert server.requests[0]["prompt"] == 'Question: Q1\nMeta: {"a": 1}\nAnswer as {"x": 1}'
    import hashlib

    assert "judge_template=" + hashlib.sha256(tmpl.read_bytes()).hexdigest()[:12] in json.loads(r.out)["signature"]
    inp.write_text(json.dumps({"id": 1}) + "\n" + json.dumps({"id": 2, "question": "q"}) + "\n", encoding="utf-8")
    r = run_cli(_base(server, str(inp), out, "--judge-template", str(tmpl)))
    assert r.code == 2 and "p.jsonl:1: meta,question: missing template field" in r.err


def test_judge_run_input_errors(server, tmp_path):
    inp = tmp_path / "p.jsonl"
    inp.write_text('{"id": 1, "prompt": 3}\n{"id": 2}\n', encoding="utf-8")
    r = run_cli(_base(server, str(inp), str(tmp_path / "a.jsonl")))
    assert r.code == 2 and "p.jsonl:1: prompt: not a string (int)" in r.err and "1 more problem" in r.err
    r = run_cli(["judge"])
    assert r.code == 2 and "choose a subcommand" in r.err
    r = run_cli(_base(server, str(inp), str(tmp_path / "a.jsonl"), "--param", "oops"))
    assert r.code == 2 and "KEY=VALUE" in r.err
    r = run_cli(["judge", "run", "--input", str(inp), "--output", "x", "--judge", "http://127.0.0.1:1/v1"])
    assert r.code == 2 and "--judge-model" in r.err


def test_live_run_and_replay_give_identical_output(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 4)
    cache = str(tmp_path / "c.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    assert run_cli(_base(server, inp, live, "--judge-cache", cache, "--param", "temperature=0")).code == 0
    server.__exit__()  # no server any more
    r = run_subprocess(
        ["judge", "run", "--input", inp, "--output", replay, "--judge", "replay:" + cache, "--param", "temperature=0"]
    )
    assert r.code == 0, r.err
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    r = run_subprocess(["judge", "run", "--input", inp, "--output", replay, "--judge", "replay:" + cache])
    assert r.code == 2 and "replay: no cached answer" in r.err


@pytest.mark.parametrize("concurrency", [1, 3])
def test_kill_and_resume_no_duplicate_or_lost_calls(server, tmp_path, concurrency):
    n, first = 12, 5
    inp = _prompts(tmp_path / "p.jsonl", n)
    cache = tmp_path / "c.jsonl"
    out = str(tmp_path / "a.jsonl")
    server.hold_after = first  # answer `first` prompts, then hold every request
    argv = _base(
        server, inp, out, "--judge-cache", str(cache), "--concurrency", str(concurrency), "--judge-retries", "0"
    )
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rageval_min"] + argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert server.wait_for(lambda s: s.held >= concurrency and len(s.completed) == first), (
            len(server.completed),
            server.held,
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    server.hold_after = None
    server.release.set()
    assert not os.path.exists(out)
    assert len(cache.read_text(encoding="utf-8").splitlines()) == first
    with open(cache, "a", encoding="utf-8") as fh:  # as if the kill had hit a write
        fh.write('{"key": "0000", "judge": "openai-chat@x", "ans')

    r = run_subprocess(argv)
    assert r.code == 0, r.err
    stats = json.loads(r.out)["result"]
    assert stats == {
        "records": n,
        "skipped": 0,
        "calls": n - first,
        "cache_hits": first,
        "failures": 0,
        "unparseable": 0,
    }
    # every prompt was answered exactly once by the server across both runs, and none is lost
    assert Counter(server.completed) == Counter(f"prompt number {i}" for i in range(n))
    assert [row["answer"] for row in _rows(out)] == [f"answer to: prompt number {i}" for i in range(n)]
    lines = cache.read_text(encoding="utf-8").splitlines()
    assert len(lines) == n and all(json.loads(line)["answer"] for line in lines)


def test_vendored_core_names_the_pip_command_for_openai(tmp_path):
    shutil.copytree(
        os.path.join(ROOT, "rageval_min"), tmp_path / "rageval_min", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "p.jsonl").write_text('{"prompt": "x"}\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "rageval_min",
            "judge",
            "run",
            "--input",
            "p.jsonl",
            "--output",
            "a.jsonl",
            "--judge",
            "openai:gpt-4o-mini",
        ],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "rageval-min: error: the optional package rageval_min_extras is not installed; "
        "install it with: pip install 'rageval-min[openai]'"
    )
