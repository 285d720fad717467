"""The judge adapter layer: stdlib HTTP judge against a loopback server, runner, cache, replay, templates."""

import io
import json
import socket
import sys

import pytest
from judge_server import ChatServer, Sleeps

from rageval_min import judges
from rageval_min.errors import ScoringError
from rageval_min.judges import (
    FunctionJudge,
    HttpJudge,
    JudgeAborted,
    JudgeCache,
    JudgeStats,
    PromptTemplate,
    ReplayJudge,
    UnparseableAnswer,
    cache_key,
    judge_from_spec,
    run_judge,
)
from rageval_min.judges import options as _cli_judge


def _http(server, **kw):
    kw.setdefault("timeout", 5)
    return HttpJudge(server.base_url, "test-model", **kw)


# --------------------------------------------------------------------------- interfaces


def test_protocols_accept_plain_objects():
    j = FunctionJudge(lambda p: "yes", identity="always-yes")
    assert isinstance(j, judges.Judge)

    class Scorer:
        identity = "fake"

        def __call__(self, candidates, references):
            return judges.PRF([1.0] * len(candidates), [1.0] * len(candidates), [1.0] * len(candidates))

    assert isinstance(Scorer(), judges.EmbeddingScorer)
    res = run_judge(j, ["a", "b"])
    assert res.answers == ["yes", "yes"]
    assert res.stats == JudgeStats(calls=2, cache_hits=0, failures=0, unparseable=0)


def test_function_judge_with_params_and_type_check():
    seen = []
    j = FunctionJudge(lambda p, params: seen.append(params) or "ok", identity="f", takes_params=True)
    run_judge(j, ["x"], params={"temperature": 0})
    assert seen == [{"temperature": 0}]
    bad = FunctionJudge(lambda p: 3, identity="bad")
    res = run_judge(bad, ["x"], abort_after=0)
    assert res.stats.failures == 1 and "not str" in res.errors[0]


def test_cache_key_covers_identity_model_params_prompt():
    base = cache_key("j", "m", {"t": 0}, "p")
    assert len(base) == 64
    assert base == cache_key("j", "m", {"t": 0}, "p")
    others = {
        cache_key("j2", "m", {"t": 0}, "p"),
        cache_key("j", "m2", {"t": 0}, "p"),
        cache_key("j", "m", {"t": 1}, "p"),
        cache_key("j", "m", {"t": 0}, "p2"),
    }
    assert base not in others and len(others) == 4


def test_spec_parsing():
    assert isinstance(judge_from_spec("http://127.0.0.1:9/v1", model="m"), HttpJudge)
    assert isinstance(judge_from_spec("HTTPS://example.invalid/v1/", model="m"), HttpJudge)
    assert judge_from_spec("http://127.0.0.1:9/v1/", model="m").identity == "openai-chat@http://127.0.0.1:9/v1"
    with pytest.raises(ScoringError, match="--judge-model"):
        judge_from_spec("http://127.0.0.1:9/v1")
    with pytest.raises(ScoringError, match="unknown judge spec"):
        judge_from_spec("ftp://x")
    with pytest.raises(ScoringError, match="replay cache not found"):
        judge_from_spec("replay:/nonexistent/cache.jsonl")
    with pytest.raises(ScoringError, match="needs a program"):
        judge_from_spec("cmd:")
    with pytest.raises(ScoringError, match="different models"):
        judge_from_spec("openai:a", model="b")


# --------------------------------------------------------------------------- HTTP judge


def test_http_judge_sends_chat_completions(server):
    j = _http(server)
    res = run_judge(j, ["hello", "wörld"], params={"system": "be terse", "temperature": 0, "seed": 100})
    assert res.answers == ["answer to: hello", "answer to: wörld"]
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "system", "content": "be terse"}, {"role": "user", "content": "hello"}]
    assert body["temperature"] == 0 and body["seed"] == 100 and "system" not in body
    assert server.requests[0]["auth"] is None


def test_retries_429_and_500_with_exponential_backoff(server):
    server.faults = ["429", "500", "503"]
    sleeps = Sleeps()
    res = run_judge(_http(server), ["q"], retries=3, sleep=sleeps, backoff=0.5)
    assert res.answers == ["answer to: q"]
    assert sleeps.calls == [0.5, 1.0, 2.0]
    assert len(server.requests) == 4
    assert res.stats == JudgeStats(1, 0, 0, 0)


def test_retry_after_header_wins_when_larger(server):
    server.faults = [("429", 7)]
    sleeps = Sleeps()
    run_judge(_http(server), ["q"], sleep=sleeps, backoff=1.0)
    assert sleeps.calls == [7.0]


def test_retries_exhausted_is_a_failure_and_not_cached(server, tmp_path):
    server.prompt_faults = {"bad": ["500", "500", "500"]}
    cache = JudgeCache(str(tmp_path / "c.jsonl"))
    res = run_judge(_http(server), ["good", "bad"], cache=cache, retries=2, sleep=Sleeps())
    assert res.answers == ["answer to: good", None]
    assert "HTTP 500" in res.errors[1] and res.errors[0] is None
    assert res.stats == JudgeStats(calls=2, cache_hits=0, failures=1, unparseable=0)
    cache.close()
    entries = JudgeCache.read_entries(str(tmp_path / "c.jsonl"))
    assert [e["answer"] for e in entries] == ["answer to: good"]
    # the failed prompt is asked again on the next run, the good one comes from the cache
    cache2 = JudgeCache(str(tmp_path / "c.jsonl"))
    res2 = run_judge(_http(server), ["good", "bad"], cache=cache2, sleep=Sleeps())
    assert res2.answers == ["answer to: good", "answer to: bad"]
    assert res2.stats == JudgeStats(calls=1, cache_hits=1, failures=0, unparseable=0)


def test_client_errors_are_not_retried(server):
    server.faults = ["400"]
    sleeps = Sleeps()
    res = run_judge(_http(server), ["q"], sleep=sleeps)
    assert sleeps.calls == [] and len(server.requests) == 1
    assert res.stats.failures == 1 and "HTTP 400" in res.errors[0]


def test_malformed_json_and_missing_content_fail_without_retry(server):
    server.faults = ["malformed", "nocontent"]
    res = run_judge(_http(server), ["a", "b"], sleep=Sleeps(), abort_after=0)
    assert res.answers == [None, None]
    assert "malformed JSON" in res.errors[0]
    assert "choices[0].message.content" in res.errors[1]
    assert len(server.requests) == 2


def test_timeout_is_retried(server):
    server.faults = [("slow", 1.0)]
    sleeps = Sleeps()
    res = run_judge(_http(server, timeout=0.2), ["q"], sleep=sleeps)
    assert res.answers == ["answer to: q"]
    assert len(sleeps.calls) == 1 and len(server.requests) == 2


def test_cut_off_body_is_retried(server):
    server.faults = ["truncated"]
    sleeps = Sleeps()
    res = run_judge(_http(server), ["q"], sleep=sleeps)
    assert res.answers == ["answer to: q"] and len(sleeps.calls) == 1 and len(server.requests) == 2


def test_bad_urls_are_usage_errors():
    with pytest.raises(ScoringError, match="not an http"):
        HttpJudge("http://", "m")
    with pytest.raises(ScoringError, match="no credentials"):
        HttpJudge("http://user:pw@127.0.0.1:9/v1", "m")


def test_unreachable_server_is_a_retryable_failure():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    res = run_judge(HttpJudge(f"http://127.0.0.1:{port}/v1", "m", timeout=2), ["q"], retries=2, sleep=sleeps)
    assert res.stats.failures == 1 and len(sleeps.calls) == 2
    assert "cannot reach" in res.errors[0] or "connection" in res.errors[0]


def test_concurrency_keeps_input_order(server):
    server.rendezvous = 3  # the first three requests are in flight together, whatever the load
    server.faults = [("slow", 0.3), ("slow", 0.1)]
    prompts = [f"p{i}" for i in range(8)]
    res = run_judge(_http(server), prompts, concurrency=3)
    assert res.answers == [f"answer to: p{i}" for i in range(8)]
    assert server.max_in_flight == 3
    assert res.stats.calls == 8


def test_duplicate_prompts_are_asked_once(server):
    res = run_judge(_http(server), ["a", "b", "a", "a"])
    assert res.answers == ["answer to: a", "answer to: b", "answer to: a", "answer to: a"]
    assert len(server.requests) == 2
    assert res.stats == JudgeStats(calls=2, cache_hits=2, failures=0, unparseable=0)


def test_abort_after_consecutive_failures(server, tmp_path):
    server.prompt_faults = {f"p{i}": ["500"] * 10 for i in range(2, 10)}
    cache = JudgeCache(str(tmp_path / "c.jsonl"))
    with pytest.raises(JudgeAborted, match="3 consecutive failed calls") as info:
        run_judge(_http(server), [f"p{i}" for i in range(10)], cache=cache, retries=1, abort_after=3, sleep=Sleeps())
    assert info.value.stats.failures == 3
    assert len(server.requests) == 2 + 3 * 2  # p0, p1, then p2..p4 twice each; p5.. never asked
    assert len(JudgeCache.read_entries(str(tmp_path / "c.jsonl"))) == 2
    assert isinstance(info.value, ScoringError)


def test_api_key_from_environment_never_leaks(server, tmp_path, monkeypatch):
    secret = "sk-test-SECRET-4242"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    j = judge_from_spec(server.base_url, model="m", api_key_env="MY_JUDGE_KEY")
    server.prompt_faults = {"denied": ["401"]}
    cache = JudgeCache(str(tmp_path / "c.jsonl"))
    res = run_judge(j, ["ok", "denied"], cache=cache, sleep=Sleeps())
    cache.close()
    assert server.requests[0]["auth"] == "Bearer " + secret
    assert secret not in repr(j) and secret not in j.identity
    assert secret not in (tmp_path / "c.jsonl").read_text(encoding="utf-8")
    assert all(secret not in (e or "") for e in res.errors) and "HTTP 401" in res.errors[1]
    # the default variable name
    monkeypatch.setenv(judges.DEFAULT_API_KEY_ENV, "sk-default")
    run_judge(judge_from_spec(server.base_url, model="m"), ["x"])
    assert server.requests[-1]["auth"] == "Bearer sk-default"


# --------------------------------------------------------------------------- parse / progress


def test_parse_and_unparseable_counts(server):
    def parse(text):
        word = text.split()[-1]
        if word == "yes":
            return 1
        raise UnparseableAnswer("unknown")

    j = FunctionJudge(lambda p: "the answer is " + p, identity="echo")
    res = run_judge(j, ["yes", "maybe", "yes"], parse=parse)
    assert res.parsed == [1, "unknown", 1]
    assert res.stats.unparseable == 1 and res.stats.as_metrics()["judge_unparseable"] == 1


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal():
    j = FunctionJudge(lambda p: p, identity="echo")
    tty, plain = FakeTTY(), io.StringIO()
    run_judge(j, ["a", "b"], progress=tty)
    run_judge(j, ["a", "b"], progress=plain)
    assert plain.getvalue() == ""
    assert "\rjudge: 2/2 calls=2" in tty.getvalue() and tty.getvalue().endswith("\n")
    dup = FakeTTY()
    run_judge(j, ["a", "b", "a", "a"], progress=dup)
    assert dup.getvalue().rstrip("\n").split("\r")[-1] == "judge: 4/4 calls=2 cache_hits=2 failures=0"


def test_scoring_error_from_judge_stops_the_run():
    def boom(p):
        raise ScoringError("configuration problem")

    with pytest.raises(ScoringError, match="configuration problem"):
        run_judge(FunctionJudge(boom, identity="boom"), ["a", "b", "c"], concurrency=2)


# --------------------------------------------------------------------------- cache


def _entry(key, answer):
    return json.dumps({"key": key, "judge": "j", "model": "m", "params": {}, "prompt_sha256": "x", "answer": answer})


def test_cache_skips_truncated_last_line_and_cuts_it_before_appending(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(_entry("k1", "a1") + "\n" + _entry("k2", "a2") + "\n" + '{"key": "k3", "ans', encoding="utf-8")
    cache = JudgeCache(str(path))
    assert len(cache) == 2 and cache.get("k2") == "a2" and cache.get("k3") is None
    cache.put("k3", {"judge": "j", "model": "m", "params": {}, "prompt_sha256": "x", "answer": "a3"})
    cache.put("k3", {"judge": "j", "model": "m", "params": {}, "prompt_sha256": "x", "answer": "again"})
    cache.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["answer"] for line in lines] == ["a1", "a2", "a3"]
    assert list(json.loads(lines[2]))[0] == "key"


def test_cache_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(_entry("k1", "a1"), encoding="utf-8")
    cache = JudgeCache(str(path))
    cache.put("k2", {"answer": "a2"})
    cache.close()
    assert [json.loads(x)["key"] for x in path.read_text(encoding="utf-8").splitlines()] == ["k1", "k2"]


def test_cache_corrupt_middle_line_is_an_error(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(_entry("k1", "a1") + "\nnot json\n" + _entry("k2", "a2") + "\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"c\.jsonl:2: not a judge cache entry"):
        JudgeCache(str(path))


def test_unwritable_cache_stops_the_run_cleanly(tmp_path):
    path = tmp_path / "c.jsonl"
    cache = JudgeCache(str(path))
    path.mkdir()  # now the cache path is a directory: opening it for append fails
    with pytest.raises(ScoringError, match="cannot write judge cache"):
        run_judge(FunctionJudge(lambda p: p, identity="e"), ["a", "b"], cache=cache, concurrency=2)


def test_cache_directory_must_exist(tmp_path):
    with pytest.raises(ScoringError, match="directory does not exist"):
        JudgeCache(str(tmp_path / "nope" / "c.jsonl"))


def test_cache_concurrent_writes_are_whole_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    cache = JudgeCache(str(path))
    j = FunctionJudge(lambda p: p * 50, identity="long")
    run_judge(j, [f"prompt-{i}" for i in range(40)], cache=cache, concurrency=4)
    cache.close()
    entries = JudgeCache.read_entries(str(path))
    assert len(entries) == 40 and len({e["key"] for e in entries}) == 40


# --------------------------------------------------------------------------- replay


def test_replay_matches_live_run_without_network(server, tmp_path, monkeypatch):
    path = str(tmp_path / "c.jsonl")
    prompts = ["alpha", "beta", "alpha", "gamma"]
    params = {"temperature": 0, "system": "s"}
    cache = JudgeCache(path)
    live = run_judge(_http(server), prompts, params=params, cache=cache)
    cache.close()

    def no_network(*a, **k):
        raise AssertionError("replay touched the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    replay = judge_from_spec("replay:" + path)
    assert replay.model == "test-model"
    res = run_judge(replay, prompts, params=params, cache=JudgeCache(path))
    assert res.answers == live.answers
    assert res.stats.calls == 3 and res.stats.failures == 0
    assert len(JudgeCache.read_entries(path)) == 3  # replay never writes
    # a prompt or a parameter set that is not in the cache is an error, never a default
    with pytest.raises(ScoringError, match="replay: no cached answer"):
        run_judge(replay, ["delta"], params=params)
    with pytest.raises(ScoringError, match="replay: no cached answer"):
        run_judge(replay, ["alpha"], params={"temperature": 1, "system": "s"})
    with pytest.raises(ScoringError, match="for model 'other'"):
        run_judge(ReplayJudge(path, model="other"), ["alpha"], params=params)
    assert run_judge(ReplayJudge(path, model="test-model"), ["alpha"], params=params).answers == ["answer to: alpha"]


def test_replay_ambiguous_models_need_a_model(tmp_path):
    path = str(tmp_path / "c.jsonl")
    cache = JudgeCache(path)
    run_judge(FunctionJudge(lambda p: "A", identity="x", model="m1"), ["q"], cache=cache)
    run_judge(FunctionJudge(lambda p: "B", identity="x", model="m2"), ["q"], cache=cache)
    cache.close()
    with pytest.raises(ScoringError, match="--judge-model"):
        run_judge(ReplayJudge(path), ["q"])
    assert ReplayJudge(path).model == ""
    assert run_judge(ReplayJudge(path, model="m2"), ["q"]).answers == ["B"]


# --------------------------------------------------------------------------- cmd judge


def _py_cmd(code):
    import shlex

    return "cmd:" + " ".join(shlex.quote(a) for a in [sys.executable, "-c", code])


def test_cmd_judge_stdin_stdout_and_env():
    code = (
        "import sys, os, json; p = sys.stdin.read(); "
        "print(p.upper() + '|' + os.environ['RAGEVAL_MIN_JUDGE_MODEL'] + '|' "
        "+ str(json.loads(os.environ['RAGEVAL_MIN_JUDGE_PARAMS'])['temperature']), end='')"
    )
    j = judge_from_spec(_py_cmd(code), model="mini")
    res = run_judge(j, ["héllo"], params={"temperature": 0})
    assert res.answers == ["HÉLLO|mini|0"]


def test_cmd_judge_exit_75_is_retried_other_codes_fail(tmp_path):
    flag = tmp_path / "flag"
    code = (
        f"import sys, os; f = {str(flag)!r}\n"
        "if not os.path.exists(f):\n    open(f, 'w').close(); sys.exit(75)\n"
        "print('ok', end='')"
    )
    sleeps = Sleeps()
    assert run_judge(judge_from_spec(_py_cmd(code)), ["q"], sleep=sleeps).answers == ["ok"]
    assert len(sleeps.calls) == 1
    res = run_judge(
        judge_from_spec(_py_cmd("import sys; sys.stderr.write('bad model'); sys.exit(3)")), ["q"], sleep=sleeps
    )
    assert res.stats.failures == 1 and "status 3: bad model" in res.errors[0] and len(sleeps.calls) == 1


def test_cmd_judge_missing_program_is_a_usage_error():
    with pytest.raises(ScoringError, match="cannot run judge command"):
        run_judge(judge_from_spec("cmd:/nonexistent/judge-program"), ["q"])


# --------------------------------------------------------------------------- templates


def test_template_placeholders_and_braces(tmp_path):
    t = PromptTemplate('Say {{x}} for {question}; reply as {"label": "yes"} {answer}', ["question", "answer"])
    assert t.render(question="Q", answer="A") == 'Say {x} for Q; reply as {"label": "yes"} A'
    with pytest.raises(ScoringError, match=r"unknown placeholder\(s\) \{questoin\}"):
        PromptTemplate("{questoin}", ["question"])
    f = tmp_path / "t.txt"
    f.write_bytes("Q={question}\n".encode("utf-8"))
    tf = PromptTemplate.from_file(str(f), ["question"], step="idk")
    import hashlib

    assert tf.signature_value == hashlib.sha256(b"Q={question}\n").hexdigest()[:12]
    assert judges.template_signature({"idk": tf}) == tf.signature_value
    assert judges.template_signature({"idk": tf, "rb": t}) == f"idk:{tf.signature_value},rb:builtin"
    assert judges.template_signature({"idk": t}) == "builtin"


def test_templates_from_args_and_runner_template(tmp_path):
    f = tmp_path / "idk.txt"
    f.write_text("I={inquiry}", encoding="utf-8")
    assert judges.templates_from_args([f"idk={f}"], ["idk", "rb_llm"]) == {"idk": str(f)}
    with pytest.raises(ScoringError, match="name the step"):
        judges.templates_from_args([str(f)], ["idk", "rb_llm"])
    with pytest.raises(ScoringError, match="unknown step 'idx'"):
        judges.templates_from_args(["idx=foo.txt"], ["idk", "rb_llm"])
    runner = judges.JudgeRunner(FunctionJudge(lambda p: p, identity="e"), templates={"idk": str(f)})
    builtin = PromptTemplate("builtin {inquiry}", ["inquiry"])
    assert runner.template("idk", builtin).render(inquiry="x") == "I=x"
    assert runner.template("rb_llm", builtin) is builtin


def test_runner_accumulates_stats_across_steps():
    runner = judges.JudgeRunner(FunctionJudge(lambda p: p, identity="e", model="mini"))
    runner.run(["a", "b"])
    runner.run(["c", "c"])
    assert runner.stats == JudgeStats(calls=3, cache_hits=1, failures=0, unparseable=0)
    t = PromptTemplate("{x}", ["x"])
    assert runner.signature_params({"idk": t}) == [("judge_model", "mini"), ("judge_template", "builtin")]


def test_runner_options_reach_every_run():
    """One RunnerOptions carries retries, backoff and sleep from JudgeRunner down to each call."""
    calls = []

    def flaky(prompt):
        calls.append(prompt)
        if len(calls) < 3:
            raise judges.JudgeError("busy", retryable=True)
        return "ok"

    waits = []
    opts = judges.RunnerOptions(retries=2, backoff=0.25, max_backoff=0.3, sleep=waits.append)
    runner = judges.JudgeRunner(FunctionJudge(flaky, identity="flaky"), options=opts)
    assert runner.options is opts and runner.retries == 2 and runner.concurrency == 1
    assert runner.run(["q"]).answers == ["ok"]
    assert waits == [0.25, 0.3]  # backoff * 2**attempt, capped at max_backoff
    same = judges.run_judge(FunctionJudge(lambda p: p, identity="e"), ["a", "b"], concurrency=2)
    via = judges.run_with_options(FunctionJudge(lambda p: p, identity="e"), ["a", "b"], opts._replace(concurrency=2))
    assert same == via
    with pytest.raises(ScoringError, match="--concurrency must be between 1 and 256"):
        judges.JudgeRunner(FunctionJudge(lambda p: p, identity="e"), options=judges.RunnerOptions(0)).run(["a"])


def test_add_judge_options_and_judge_from_args(server, tmp_path):
    import argparse

    p = argparse.ArgumentParser()
    _cli_judge.add_judge_options(p)
    args = p.parse_args(
        [
            "--judge",
            server.base_url,
            "--judge-model",
            "m",
            "--judge-cache",
            str(tmp_path / "c.jsonl"),
            "--concurrency",
            "2",
            "--judge-timeout",
            "3",
            "--judge-retries",
            "1",
        ]
    )
    runner = _cli_judge.judge_from_args(args, stderr=io.StringIO())
    assert runner.concurrency == 2 and runner.retries == 1 and runner.judge.timeout == 3.0
    assert runner.options == _cli_judge.runner_options_from_args(args, stderr=runner.options.progress)
    assert runner.run(["q"]).answers == ["answer to: q"]
    runner.close()
    assert len(JudgeCache.read_entries(str(tmp_path / "c.jsonl"))) == 1


# --------------------------------------------------------------------------- security and limits


def test_redirect_is_a_failed_call_and_the_key_never_leaves_the_origin(server, tmp_path, monkeypatch):
    secret = "sk-redirect-SECRET-7777"
    monkeypatch.setenv(judges.DEFAULT_API_KEY_ENV, secret)
    with ChatServer() as other:
        statuses = [301, 302, 303, 307, 308]
        server.faults = [("redirect", st, other.base_url + "/chat/completions") for st in statuses]
        cache = JudgeCache(str(tmp_path / "c.jsonl"))
        sleeps = Sleeps()
        prompts = [f"q{st}" for st in statuses]
        res = run_judge(judge_from_spec(server.base_url, model="m"), prompts, cache=cache, sleep=sleeps, abort_after=0)
        cache.close()
        assert other.requests == []  # nothing reached the second server: no request, no key
    assert res.answers == [None] * 5 and res.stats.failures == 5
    assert sleeps.calls == [] and len(server.requests) == 5  # not retried
    for st, err in zip(statuses, res.errors):
        assert f"HTTP {st} redirect" in err and "not followed" in err and secret not in err
    assert not (tmp_path / "c.jsonl").exists() or (tmp_path / "c.jsonl").read_text(encoding="utf-8") == ""


@pytest.mark.parametrize("with_length", [True, False])
def test_oversized_response_is_a_failed_call(server, with_length):
    server.faults = [("big", 3 * 1024 * 1024, with_length)]
    sleeps = Sleeps()
    j = HttpJudge(server.base_url, "m", timeout=10, max_response_bytes=64 * 1024)
    res = run_judge(j, ["q", "next"], sleep=sleeps, abort_after=0)
    assert res.answers[0] is None and "larger than 65536 bytes" in res.errors[0]
    assert res.answers[1] == "answer to: next" and sleeps.calls == []
    assert HttpJudge(server.base_url, "m").max_response_bytes == judges.DEFAULT_MAX_RESPONSE_BYTES == 8 * 1024 * 1024


def test_timeout_is_a_total_deadline_per_call(server):
    import time

    server.faults = [("trickle", 0.05)]  # about 20 s for the whole reply, one byte at a time
    start = time.monotonic()
    res = run_judge(_http(server, timeout=0.5), ["q"], retries=0)
    assert time.monotonic() - start < 3
    assert res.answers == [None] and "timed out after 0.5s" in res.errors[0]


@pytest.mark.parametrize(
    "line, why",
    [
        ('{"key": "k", "answer": "a", "n": ' + "1" * 5000 + "}", "cannot read this JSON value"),
        ('{"key": "k", "answer": "a", "params": {"t": 1e999}}', "overflows a float"),
        ('{"key": "k", "answer": "a", "params": {"t": NaN}}', "NaN is not a JSON number"),
        ('{"key": "k", "answer": "\\ud800"}', "lone UTF-16 surrogate"),
        ("[" * 200000 + "]" * 200000, "nested too deeply"),
    ],
)
def test_cache_with_unsafe_json_is_an_input_error(tmp_path, line, why):
    path = tmp_path / "c.jsonl"
    path.write_text(_entry("k1", "a1") + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"c\.jsonl:2: .*" + why):
        JudgeCache(str(path))
    with pytest.raises(ScoringError, match=r"c\.jsonl:2: .*" + why):
        ReplayJudge(str(path))


def test_cache_recovers_bom_and_nul_blocks_and_says_so(tmp_path):
    path = tmp_path / "c.jsonl"
    data = (
        b"\xef\xbb\xbf"
        + _entry("k1", "a1").encode()
        + b"\n"
        + b"\x00" * 4096
        + b"\n"
        + b"\x00" * 10
        + _entry("k2", "a2").encode()
        + b"\n"
        + b'{"key": "k9", "ans\x00\x00\x00\n'
        + _entry("k3", "a3").encode()
        + b"\n"
        + b"\x00" * 512
    )
    path.write_bytes(data)
    cache = JudgeCache(str(path))
    assert [cache.get(k) for k in ("k1", "k2", "k3", "k9")] == ["a1", "a2", "a3", None]
    notes = " | ".join(cache.notes)
    assert "byte-order mark" in notes and "skipped 2 line(s) of NUL bytes" in notes
    assert "skipped 1 line(s) damaged by NUL bytes" in notes
    cache.put("k4", {"answer": "a4"})
    cache.close()
    again = JudgeCache(str(path))
    assert again.get("k4") == "a4" and again.get("k1") == "a1" and len(again) == 4


def test_server_text_in_errors_is_redacted_and_capped(server, monkeypatch):
    secret = "sk-echo-SECRET-31337"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    j = judge_from_spec(server.base_url, model="m", api_key_env="MY_JUDGE_KEY")
    server.faults = ["echo_auth"]
    res = run_judge(j, ["q"], sleep=Sleeps())
    assert res.errors[0] is not None and "HTTP 401" in res.errors[0]
    assert secret not in res.errors[0] and 'Bearer [REDACTED]"' in res.errors[0]
    assert judges.redact("x" * 2000).startswith("x" * judges.MAX_COPIED_TEXT)
    assert len(judges.redact("x" * 2000)) <= judges.MAX_COPIED_TEXT + 10


def test_cmd_judge_gets_no_api_keys_unless_asked(monkeypatch):
    monkeypatch.setenv(judges.DEFAULT_API_KEY_ENV, "k-default")
    monkeypatch.setenv("OPENAI_API_KEY", "k-openai")
    monkeypatch.setenv("MY_JUDGE_KEY", "k-mine")
    monkeypatch.setenv("UNRELATED_VAR", "kept")
    code = (
        "import os; names = ['RAGEVAL_MIN_JUDGE_API_KEY', 'OPENAI_API_KEY', 'MY_JUDGE_KEY', 'UNRELATED_VAR']; "
        "print(','.join(os.environ.get(n, '-') for n in names), end='')"
    )
    plain = judge_from_spec(_py_cmd(code), api_key_env="MY_JUDGE_KEY")
    assert run_judge(plain, ["q"]).answers == ["-,-,-,kept"]
    passing = judge_from_spec(_py_cmd(code), api_key_env="MY_JUDGE_KEY", pass_env=True)
    assert run_judge(passing, ["q"]).answers == ["k-default,k-openai,k-mine,kept"]
    # a program that prints a key to stderr does not get it into the error message
    leak = judge_from_spec(
        _py_cmd("import os, sys; sys.stderr.write('key=' + os.environ['OPENAI_API_KEY']); sys.exit(2)"), pass_env=True
    )
    res = run_judge(leak, ["q"])
    assert "k-openai" not in res.errors[0] and "key=[REDACTED]" in res.errors[0]


def test_runner_bounds_and_timeout_bounds():
    j = FunctionJudge(lambda p: p, identity="e")
    with pytest.raises(ScoringError, match="--concurrency"):
        run_judge(j, ["a"], concurrency=judges.MAX_CONCURRENCY + 1)
    with pytest.raises(ScoringError, match="--judge-retries"):
        run_judge(j, ["a"], retries=judges.MAX_RETRIES + 1)
    for size in (judges.MIN_MAX_RESPONSE_BYTES - 1, judges.MAX_MAX_RESPONSE_BYTES + 1):
        with pytest.raises(ScoringError, match="--judge-max-response-bytes"):
            HttpJudge("http://127.0.0.1:9/v1", "m", max_response_bytes=size)
    for bad in (float("inf"), float("nan"), 0, -1, judges.MAX_TIMEOUT + 1):
        with pytest.raises(ScoringError, match="--judge-timeout"):
            HttpJudge("http://127.0.0.1:9/v1", "m", timeout=bad)
        with pytest.raises(ScoringError, match="--judge-timeout"):
            judge_from_spec("cmd:true", timeout=bad)
