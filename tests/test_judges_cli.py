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
    return ["judge", "run", "--input", inp, "--records", out, "--judge", server.base_url, "--judge-model", "m"] + list(
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
    r = run_cli(["judge", "run", "--input", str(inp), "--records", "x", "--judge", "http://127.0.0.1:1/v1"])
    assert r.code == 2 and "--judge-model" in r.err


def test_live_run_and_replay_give_identical_output(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 4)
    cache = str(tmp_path / "c.jsonl")
    live, replay = str(tmp_path / "live.jsonl"), str(tmp_path / "replay.jsonl")
    assert run_cli(_base(server, inp, live, "--judge-cache", cache, "--param", "temperature=0")).code == 0
    server.__exit__()  # no server any more
    r = run_subprocess(
        ["judge", "run", "--input", inp, "--records", replay, "--judge", "replay:" + cache, "--param", "temperature=0"]
    )
    assert r.code == 0, r.err
    with open(live, "rb") as a, open(replay, "rb") as b:
        assert a.read() == b.read()
    r = run_subprocess(["judge", "run", "--input", inp, "--records", replay, "--judge", "replay:" + cache])
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
            "--records",
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


# --------------------------------------------------------------------------- security and limits


def test_ctrl_c_with_concurrency_exits_130_at_once(server, tmp_path):
    import time

    inp = _prompts(tmp_path / "p.jsonl", 6)
    server.hold_after = 0  # every request is held (up to 20 s)
    argv = _base(server, inp, str(tmp_path / "a.jsonl"), "--concurrency", "3", "--judge-timeout", "60")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rageval_min"] + argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert server.wait_for(lambda s: s.held >= 3)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert elapsed < 3, elapsed
    assert b"interrupted" in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--judge-timeout", "inf"], "--judge-timeout"),
        (["--judge-timeout", "nan"], "--judge-timeout"),
        (["--judge-timeout", "0"], "--judge-timeout"),
        (["--judge-timeout", "-3"], "--judge-timeout"),
        (["--judge-timeout", "1e999"], "--judge-timeout"),
        (["--judge-timeout", "3601"], "--judge-timeout"),
        (["--concurrency", "257"], "--concurrency"),
        (["--concurrency", "0"], "--concurrency"),
        (["--judge-retries", "21"], "--judge-retries"),
        (["--judge-max-response-bytes", "10"], "--judge-max-response-bytes"),
        (["--judge-max-response-bytes", str(2**31)], "--judge-max-response-bytes"),
        (["--system", "caf\udce9"], "--system: not valid UTF-8"),
        (["--param", "stop=caf\udce9"], "--param: not valid UTF-8"),
        (["--param", 'stop="\\ud800"'], "--param: not valid UTF-8"),
        (["--param", "t=NaN"], "NaN"),
        (["--answer-field", "ans\udcff"], "--answer-field: not valid UTF-8"),
        (["--id-field", "\udcff"], "--id-field: not valid UTF-8"),
        (["--judge-api-key-env", "K\udcff"], "--judge-api-key-env: not valid UTF-8"),
    ],
)
def test_judge_option_bounds_are_usage_errors(server, tmp_path, extra, message):
    inp = _prompts(tmp_path / "p.jsonl", 1)
    r = run_cli(_base(server, inp, str(tmp_path / "a.jsonl"), *extra))
    assert r.code == 2 and message in r.err, r.err
    assert server.requests == []


def test_judge_run_checks_gates_and_paths_before_any_call(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 2)
    r = run_cli(_base(server, inp, str(tmp_path / "a.jsonl"), "--gate", "judge_cals >= 1"))
    assert r.code == 2 and "judge_cals" in r.err
    r = run_cli(_base(server, inp, inp))
    assert r.code == 2 and "same file" in r.err
    cache = str(tmp_path / "c.jsonl")
    r = run_cli(_base(server, inp, str(tmp_path / "a.jsonl"), "--judge-cache", cache, "--output", cache))
    assert r.code == 2 and "--output" in r.err and "same file" in r.err
    assert server.requests == [] and not os.path.exists(str(tmp_path / "a.jsonl"))


@pytest.mark.parametrize(
    "line, why",
    [
        ('{"key": "k", "answer": "a", "n": ' + "1" * 5000 + "}", "cannot read this JSON value"),
        ('{"key": "k", "answer": "a", "params": {"t": 1e999}}', "overflows a float"),
        ('{"key": "k", "answer": "\\ud800"}', "lone UTF-16 surrogate"),
        ("[" * 200000 + "]" * 200000, "nested too deeply"),
    ],
)
def test_unsafe_replay_cache_exits_2_naming_the_line(tmp_path, line, why):
    inp = _prompts(tmp_path / "p.jsonl", 1)
    cache = tmp_path / "c.jsonl"
    cache.write_text('{"key": "k0", "answer": "a"}\n' + line + "\n", encoding="utf-8")
    argv = ["judge", "run", "--input", inp, "--records", str(tmp_path / "a.jsonl"), "--judge", "replay:" + str(cache)]
    r = run_cli(argv)
    assert r.code == 2 and "c.jsonl:2:" in r.err and why in r.err, r.err
    r = run_cli(argv[:-2] + ["--judge", "cmd:true", "--judge-cache", str(cache)])
    assert r.code == 2 and "c.jsonl:2:" in r.err and why in r.err, r.err


@pytest.mark.parametrize(
    "record, why",
    [
        ('{"id": 1, "prompt": "p", "n": ' + "1" * 5000 + "}", "4300"),
        ('{"id": 1, "prompt": "p", "x": 1e999}', "overflows a float"),
        ('{"id": 1, "prompt": "\\ud800"}', "surrogate"),
        ('{"id": 1, "prompt": "p", "x": ' + "[" * 200000 + "]" * 200000 + "}", "nested too deeply"),
    ],
)
def test_judge_run_unsafe_input_fields_exit_2(server, tmp_path, record, why):
    inp = tmp_path / "p.jsonl"
    inp.write_text('{"id": 0, "prompt": "fine"}\n' + record + "\n", encoding="utf-8")
    r = run_cli(_base(server, str(inp), str(tmp_path / "a.jsonl"), "--answer-field", "ans"))
    assert r.code == 2 and "p.jsonl:2" in r.err and why in r.err, r.err
    assert server.requests == []


def test_damaged_cache_is_recovered_with_a_note(server, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 2)
    cache = tmp_path / "c.jsonl"
    out = str(tmp_path / "a.jsonl")
    assert run_cli(_base(server, inp, out, "--judge-cache", str(cache))).code == 0
    good = cache.read_bytes()
    cache.write_bytes(b"\xef\xbb\xbf" + good + b"\x00" * 300 + b"\n")
    r = run_cli(_base(server, inp, out, "--judge-cache", str(cache)))
    assert r.code == 0, r.err
    assert json.loads(r.out)["result"]["cache_hits"] == 2 and len(server.requests) == 2
    assert "byte-order mark" in r.err and "skipped 1 line(s) of NUL bytes" in r.err and str(cache) in r.err


def test_pass_env_option_reaches_cmd_judges(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_MIN_JUDGE_API_KEY", "k-secret")
    inp = _prompts(tmp_path / "p.jsonl", 1)
    code = "import os; print(os.environ.get('RAGEVAL_MIN_JUDGE_API_KEY', 'none'), end='')"
    spec = "cmd:" + " ".join([sys.executable, "-c", '"' + code + '"'])
    out = str(tmp_path / "a.jsonl")
    base = ["judge", "run", "--input", inp, "--records", out, "--judge", spec]
    assert run_cli(base).code == 0 and _rows(out)[0]["answer"] == "none"
    assert run_cli(base + ["--judge-pass-env"]).code == 0 and _rows(out)[0]["answer"] == "k-secret"


def test_an_api_key_echoed_in_an_answer_never_reaches_the_answers_or_the_cache(tmp_path, monkeypatch):
    """A real loopback server answering 200 with the bearer key in its text (issue #23 item 6)."""
    key = "sk-test-echoed-0123456789"
    monkeypatch.setenv("RAGEVAL_MIN_JUDGE_API_KEY", key)
    inp = _prompts(tmp_path / "p.jsonl", 2)
    out, cache = str(tmp_path / "a.jsonl"), str(tmp_path / "cache.jsonl")
    with ChatServer(answer=lambda prompt, body: f"yes; your key is {key}, Bearer {key}") as echo:
        r = run_cli(_base(echo, inp, out, "--judge-cache", cache))
    assert r.code == 0, r.err
    for path in (out, cache):
        text = open(path, encoding="utf-8").read()
        assert key not in text and "[REDACTED]" in text, path
