"""Issue #26 through every judge command: --samples with pass rules (live then replay, byte-identical),
usage and cost of both answer shapes, budgets that stop before the call that would exceed them (and
resume, also after a SIGKILL), and --require-calibration.  All against the loopback server."""

import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import Counter

import pytest
from conftest import ROOT, run_cli
from judge_server import ChatServer
from judged_helpers import _family_judge, _judge_args, _pairwise_table, scripted
from test_judges_factuality import RECORDS as FACT_RECORDS
from test_judges_factuality import scripted as fact_scripted
from test_judges_mtrag import TASKS
from test_judges_mtrag import scripted as mtrag_scripted

from rageval_min.errors import ScoringError
from rageval_min.judges import JudgeCache
from rageval_min.judges.cache import cache_key, sample_key
from rageval_min.judges.sampled import decide
from rageval_min.judges.sampling import parse_pass_rule

RGB_EN1 = os.path.join(ROOT, "gold_samples", "rgb", "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")


def _swap(text, a, b):
    """``text`` with ``a`` and ``b`` exchanged."""
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def _flip(answer):
    """An answer of the scripted judges with its verdict turned over (every family's wording)."""
    for a, b in (
        ("not addressed", "is addressed"),
        ("Choice: A", "Choice: B"),
        ("[Not Foo]", "[Foo]"),
        ("[Not Supported]", "[Supported.]"),
        ('"verdict": 1', '"verdict": 0'),
        ("[[8]]", "[[4]]"),
    ):
        if a in answer or b in answer:
            return _swap(answer, a, b) if a != "not addressed" else _swap(answer, "is not addressed", "is addressed")
    if answer == "Yes":
        return "no, it answers"
    if answer.startswith("no, it answers") or answer == "partial":
        return "Yes"
    return answer + " (second thoughts)"


class Varying:
    """A scripted judge whose answer ``which`` (0, 1, 2) of every three to a prompt turns the verdict over."""

    def __init__(self, base, which=1):
        self.base = base
        self.which = which
        self.seen = Counter()
        self.lock = threading.Lock()

    def __call__(self, prompt, body):
        with self.lock:
            k = self.seen[prompt]
            self.seen[prompt] += 1
        answer = self.base(prompt, body)
        return _flip(answer) if k % 3 == self.which else answer


def _judge_run(argv):
    r = run_cli(["judge", "run"] + argv)
    return r.code, r.out, r.err


def _prompts(path, n):
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "prompt": f"prompt number {i}"}) + "\n")
    return str(path)


def _fact_input(tmp_path):
    inp = tmp_path / "responses.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in FACT_RECORDS), encoding="utf-8")
    return str(inp)


def _family_argv(family, tmp_path):
    """(run, argv, base judge) of each judge command, with the inputs its own tests use."""
    if family == "rgb":
        return functools.partial(_family_judge, "rgb"), ["--input", RGB_EN1, "--judged", "reject"], scripted
    if family == "pairwise":
        return (
            functools.partial(_family_judge, "pairwise"),
            ["--input", _pairwise_table(tmp_path), "--refm", "ref"],
            scripted,
        )
    if family == "mtrag":
        return functools.partial(_family_judge, "mtrag"), ["--input", TASKS], mtrag_scripted
    if family == "factuality":
        return functools.partial(_family_judge, "factuality"), ["--input", _fact_input(tmp_path)], fact_scripted
    inp = _prompts(tmp_path / "p.jsonl", 4)
    return _judge_run, ["--input", inp], lambda prompt, body: "yes" if prompt.endswith(("0", "2")) else "no"


SAMPLING = ["judge_samples", "judge_self_consistency", "judge_flip_rate", "judge_undetermined"]
USAGE = ["judge_prompt_tokens", "judge_completion_tokens", "judge_cached_tokens", "judge_usage_missing"]


def _gates(names):
    """``--gate NAME>=0`` for each name, so the JSON report shows its value."""
    return [a for n in names for a in ("--gate", f"{n}>=0")]


def _metrics(out):
    """The values of the gated metrics of a JSON report."""
    return {g["name"]: g["value"] for g in json.loads(out)["gates"]}


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


FAMILIES = ["rgb", "pairwise", "mtrag", "factuality", "judge"]


@pytest.mark.parametrize("family", FAMILIES)
def test_samples_live_then_replay_identical_and_majority_keeps_the_verdicts(family, tmp_path):
    run, argv, base = _family_argv(family, tmp_path)
    one = tmp_path / "one"
    one.mkdir()
    with ChatServer(answer=base) as server:  # one sample: today's run
        code, out1, err = run(argv + _judge_args(server, str(one / "rec.jsonl"), str(one / "cache.jsonl")))
        assert code == 0, err
        single_calls = len(server.requests)
    cache, live, replay = (str(tmp_path / n) for n in ("cache.jsonl", "live.jsonl", "replay.jsonl"))
    sampled = ["--samples", "3", "--pass-rule", "majority"] + _gates(SAMPLING)
    with ChatServer(answer=Varying(base)) as server:
        code, out, err = run(argv + sampled + _judge_args(server, live, cache))
        assert code == 0, err
        asked = len(server.requests)
        identity = "openai-chat@" + server.base_url
    code, out2, err2 = run(argv + sampled + ["--records", replay, "--judge", "replay:" + cache])
    assert code == 0, err2
    assert _read(live) == _read(replay)  # byte-identical records and report (mtrag's names its records file)
    assert out.replace(identity, "replay") == out2.replace(replay, live)  # judge run's signature names the judge
    rep = json.loads(out)
    m = _metrics(out)
    assert m["judge_samples"] == 3 and m["judge_undetermined"] == 0
    assert m["judge_flip_rate"] == 0.0  # sample 0 is the script's own verdict, which the majority keeps
    assert m["judge_self_consistency"] < 1.0  # every second sample disagreed where the flip changes the vote
    if family != "judge":  # (the generic command stores the answer; the families the verdict)
        assert _read(live) == _read(str(one / "rec.jsonl"))  # the majority gives the one-sample records
    assert json.loads(out1.replace(str(one / "rec.jsonl"), live))["result"] == rep["result"] or family == "judge"
    assert rep["pass"] is True
    assert single_calls < asked <= 3 * single_calls
    keys = [json.loads(line)["key"] for line in open(cache, encoding="utf-8")]
    assert len(keys) == len(set(keys)) == asked  # each sample cached under its own key


def test_sample_zero_keeps_todays_key_and_sampling_resumes_from_an_old_cache(tmp_path):
    assert sample_key("j", "m", {"t": 0}, "p", 0) == cache_key("j", "m", {"t": 0}, "p")
    assert len({sample_key("j", "m", {}, "p", s) for s in range(4)}) == 4
    inp = _prompts(tmp_path / "p.jsonl", 3)
    cache = str(tmp_path / "c.jsonl")
    with ChatServer() as server:
        server.usage = None  # an old cache: no usage, no sample field
        argv = ["--input", inp] + _judge_args(server, str(tmp_path / "a.jsonl"), cache)
        assert _judge_run(argv)[0] == 0
        old = [json.loads(line) for line in open(cache, encoding="utf-8")]
        assert all(set(e) == {"key", "judge", "model", "params", "prompt_sha256", "answer"} for e in old)
        code, out, err = _judge_run(argv + ["--samples", "3", "--format", "text"])
        assert code == 0, err
        assert re.search(r"judge_cache_hits +3\n", out) and re.search(r"judge_calls +6\n", out), out
        assert re.search(r"judge_samples +3\n", out) and len(server.requests) == 9
    lines = [json.loads(line) for line in open(cache, encoding="utf-8")]
    assert sorted(Counter(e.get("sample", 0) for e in lines).items()) == [(0, 3), (1, 3), (2, 3)]
    assert "judge_prompt_tokens" not in out  # no answer reported usage: no usage metrics
    assert _judge_run(["--input", inp, "--records", str(tmp_path / "r.jsonl"), "--judge", "replay:" + cache])[0] == 0


def test_ties_undetermined_and_pass_rules_through_judge_run(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 2)
    answers = {"prompt number 0": ["yes", "no"], "prompt number 1": ["yes", "yes"]}
    seen = Counter()

    def answer(prompt, body):
        k = seen[prompt]
        seen[prompt] += 1
        return answers[prompt][k % 2]

    with ChatServer(answer=answer) as server:
        out = str(tmp_path / "a.jsonl")
        argv = ["--input", inp, "--samples", "2", "--tie", "undetermined"] + _gates(SAMPLING)
        argv += _judge_args(server, out, None)
        code, text, err = _judge_run(argv)
    assert code == 0, err
    rows = [json.loads(line) for line in open(out, encoding="utf-8")]
    assert rows[0]["answer"] is None and rows[0]["error"].startswith("undetermined: 2 samples, votes yes, no")
    assert rows[1] == {"id": "r1", "answer": "yes", "error": None}
    m = _metrics(text)
    assert (m["judge_undetermined"], m["judge_self_consistency"], m["judge_flip_rate"]) == (1, 0.5, 0.0)


def test_vote_kinds_on_hand_made_vectors():
    r = parse_pass_rule
    assert decide(["A", "B", "A"], "label", r("majority"), "fail") == "A"
    for tie in ("fail", "pass", "undetermined"):  # a tie of labels names no pass or fail: undetermined
        assert decide(["A", "B", None], "label", r("majority"), tie) is None
    assert decide([0.4, 0.8], "number", r("majority"), "fail") == 0.4
    assert decide([0.4, 0.8], "number", r("majority"), "pass") == 0.8
    assert decide([0.4, 0.8], "number", r("majority"), "undetermined") is None
    assert decide([0.4, 0.8, 0.8, None], "number", r("median"), "fail") == 0.8
    assert decide([0.4, 0.8], "number", r("mean"), "fail") == pytest.approx(0.6)
    assert decide([1, 0, 1], "bool", r("at-least:2"), "fail") is True
    assert decide([None, None], "bool", r("all"), "fail") is None
    for kind, rule in (("bool", "median"), ("bool", "mean"), ("label", "all"), ("number", "rate:0.5")):
        with pytest.raises(ScoringError, match="does not apply"):
            decide([1], kind, r(rule), "fail")


def test_rules_refused_before_any_call(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 2)
    with ChatServer() as server:
        base = ["--input", inp] + _judge_args(server, str(tmp_path / "a.jsonl"), None)
        for extra, msg in (
            (["--samples", "2", "--pass-rule", "at-least:3"], "asks more passes than --samples 2"),
            (["--samples", "2", "--pass-rule", "rate:2"], "R must be in (0, 1]"),
            (["--samples", "2", "--pass-rule", "all"], "does not apply to label votes"),
            (["--samples", "0"], "must be between 1 and 1000"),
        ):
            code, _, err = _judge_run(base + extra)
            assert code == 2 and msg in err and err.count("\n") == 1, err
        assert server.requests == []
    with ChatServer(answer=scripted) as server:
        run, argv, _ = _family_argv("rgb", tmp_path)
        code, _, err = run(
            argv + ["--samples", "3", "--pass-rule", "median"] + _judge_args(server, str(tmp_path / "r.jsonl"))
        )
        assert code == 2 and "does not apply to bool votes" in err and server.requests == []


# --------------------------------------------------------------------------- usage and cost

OPENAI_USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 8,
    "total_tokens": 128,
    "prompt_tokens_details": {"cached_tokens": 100},
}
ANTHROPIC_USAGE = {
    "input_tokens": 20,
    "output_tokens": 8,
    "cache_read_input_tokens": 100,
    "cache_creation_input_tokens": 5,
}
PRICES = {"models": {"scripted": {"prompt": 1.5, "completion": "6", "cached": 0.75, "cache_write": 1.875}}}


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_usage_and_cost_of_both_shapes_end_to_end_and_replayed(shape, tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 3)
    table = tmp_path / "prices.json"
    table.write_text(json.dumps(PRICES), encoding="utf-8")
    cache = str(tmp_path / "c.jsonl")
    usage = OPENAI_USAGE if shape == "openai" else ANTHROPIC_USAGE
    with ChatServer() as server:
        server.usage = lambda prompt, body: None if prompt.endswith("2") else usage  # the third answer has none
        argv = ["--input", inp, "--price-table", str(table)] + _gates(USAGE + ["judge_cost"])
        code, out, err = _judge_run(argv + _judge_args(server, str(tmp_path / "a.jsonl"), cache))
    assert code == 0 and err == "", err
    stored = [json.loads(line).get("usage") for line in open(cache, encoding="utf-8")]
    assert sorted(stored, key=lambda u: u is None) == [usage, usage, None]  # as the server sent it
    m = _metrics(out)
    if shape == "openai":  # 20 uncached + 100 cached + 8 completion per answer
        want_prompt, cost = 240, 2 * (20 * 1.5 + 100 * 0.75 + 8 * 6)
    else:  # 20 uncached + 100 cache reads + 5 cache writes + 8 completion
        want_prompt, cost = 250, 2 * (20 * 1.5 + 100 * 0.75 + 5 * 1.875 + 8 * 6)
    assert (m["judge_prompt_tokens"], m["judge_completion_tokens"], m["judge_cached_tokens"]) == (want_prompt, 16, 200)
    assert m["judge_usage_missing"] == 1 and m["judge_cost"] == cost / 1_000_000
    # replayed: what the answers cost when they were made, and said so
    code, out2, err2 = _judge_run(argv + ["--records", str(tmp_path / "b.jsonl"), "--judge", "replay:" + cache])
    assert code == 0 and _metrics(out2) == m
    assert err2 == (
        "rageval-min: note: judge usage: 3 of 3 answer(s) came from the cache or a replay; "
        "their tokens (and cost) are what they cost when they were made\n"
    )


def test_usage_through_a_family_and_gate_on_cost(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"models": {"scripted": {"prompt": 1, "completion": 2}}}), encoding="utf-8")
    run, argv, base = _family_argv("rgb", tmp_path)
    with ChatServer(answer=base) as server:
        server.usage = {"prompt_tokens": 10, "completion_tokens": 2}
        extra = ["--price-table", str(table), "--gate", "judge_cost<=0.00001"] + _gates(USAGE)
        code, out, err = run(argv + extra + _judge_args(server, str(tmp_path / "r.jsonl")))
    m = _metrics(out)
    assert (m["judge_prompt_tokens"], m["judge_completion_tokens"], m["judge_cost"]) == (40, 8, 56 / 1_000_000)
    assert code == 1  # 0.000056 > 0.00001: the cost gate fails


def test_price_table_problems_are_usage_errors(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 1)
    with ChatServer() as server:
        base = ["--input", inp] + _judge_args(server, str(tmp_path / "a.jsonl"), None)
        other = tmp_path / "other.json"
        other.write_text('{"models": {"x": {"prompt": 1}}}', encoding="utf-8")
        code, _, err = _judge_run(base + ["--price-table", str(other)])
        assert code == 2 and "has no model 'scripted'" in err
        code, _, err = _judge_run(base + ["--budget-usd", "1"])
        assert code == 2 and "--budget-usd needs --price-table" in err
        toml = tmp_path / "prices.toml"
        toml.write_text('[models.scripted]\nprompt = 1.5\ncompletion = "6"\n', encoding="utf-8")
        code, out, err = _judge_run(base + ["--price-table", str(toml), "--format", "text"])
        if sys.version_info >= (3, 11):
            assert code == 0 and "judge_cost" in out and " 7.5e-06\n" in out, out
        else:
            assert code == 2 and "needs Python 3.11" in err
        assert len(server.requests) == (1 if sys.version_info >= (3, 11) else 0)
    code, _, err = _judge_run(
        ["--input", inp, "--records", str(tmp_path / "b.jsonl"), "--judge", 'cmd:python -c "print(1)"']
        + ["--budget-tokens", "10"]
    )
    assert code == 2 and "needs a judge that reports token usage" in err


# --------------------------------------------------------------------------- budgets


def _cache_entries(path):
    return JudgeCache.read_entries(path) if os.path.exists(path) else []


def test_budget_tokens_stops_before_the_call_that_would_exceed_it_then_resumes(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 5)
    cache, out = str(tmp_path / "c.jsonl"), str(tmp_path / "a.jsonl")
    with ChatServer() as server:
        server.usage = {"prompt_tokens": 10, "completion_tokens": 2}  # 12 tokens a call
        argv = ["--input", inp] + _judge_args(server, out, cache)
        code, text, err = _judge_run(argv + ["--budget-tokens", "30"])
        assert code == 2 and text == "" and not os.path.exists(out)
        assert err.count("\n") == 1 and "judge budget --budget-tokens 30 reached: 24 tokens spent by 2 call(s)" in err
        assert "3 prompt(s) not asked" in err and "rerun with a larger budget" in err
        assert len(server.requests) == 2 and len(_cache_entries(cache)) == 2
        code, text, err = _judge_run(argv + ["--budget-tokens", "60"] + _gates(USAGE))  # 24 cached + 36
        assert code == 0, err
        rep = json.loads(text)
        assert rep["result"]["cache_hits"] == 2 and rep["result"]["calls"] == 3 and len(server.requests) == 5
        assert _metrics(text)["judge_prompt_tokens"] == 50  # every answer used, cached ones included
        assert "2 of 5 answer(s) came from the cache" in err


def test_budget_zero_makes_no_call_and_an_answer_without_usage_stops_a_budgeted_run(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 3)
    cache = str(tmp_path / "c.jsonl")
    with ChatServer() as server:
        argv = ["--input", inp] + _judge_args(server, str(tmp_path / "a.jsonl"), cache)
        code, _, err = _judge_run(argv + ["--budget-tokens", "0"])
        assert code == 2 and "--budget-tokens 0 reached: 0 tokens spent by 0 call(s)" in err and not server.requests
        server.usage = None
        code, _, err = _judge_run(argv + ["--budget-tokens", "100"])
        assert code == 2 and "the judge answered without usage, so it cannot be kept" in err
        assert len(server.requests) == 1 and len(_cache_entries(cache)) == 1  # the answer is kept


def test_budget_usd_and_a_family_command(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"models": {"scripted": {"prompt": 1, "completion": 2}}}), encoding="utf-8")
    run, argv, base = _family_argv("rgb", tmp_path)
    cache = str(tmp_path / "c.jsonl")
    with ChatServer(answer=base) as server:
        server.usage = {"prompt_tokens": 10, "completion_tokens": 2}  # $0.000014 a call
        extra = ["--price-table", str(table)]
        code, _, err = run(
            argv + extra + ["--budget-usd", "0.00003"] + _judge_args(server, str(tmp_path / "r.jsonl"), cache)
        )
        assert code == 2 and "judge budget --budget-usd 0.00003 reached: $0.000028 spent by 2 call(s)" in err
        assert len(server.requests) == 2
        code, out, err = run(
            argv + extra + ["--budget-usd", "1"] + _judge_args(server, str(tmp_path / "r.jsonl"), cache)
        )
        assert code == 0, err
        assert len(server.requests) == 4 and json.loads(out)["result"]["nums"] == 4


def test_budget_is_never_exceeded_with_concurrency(tmp_path):
    inp = _prompts(tmp_path / "p.jsonl", 12)
    with ChatServer() as server:
        server.usage = {"prompt_tokens": 10, "completion_tokens": 2}
        argv = ["--input", inp, "--concurrency", "4", "--budget-tokens", "50"]
        code, _, err = _judge_run(argv + _judge_args(server, str(tmp_path / "a.jsonl"), str(tmp_path / "c.jsonl")))
        assert code == 2 and "--budget-tokens 50 reached: 48 tokens spent by 4 call(s)" in err, err
        assert len(server.requests) == 4  # 4 x 12 = 48 <= 50; a fifth would make 60


def test_budget_run_killed_between_calls_leaves_a_valid_cache_and_resumes(tmp_path):
    n, first = 6, 3
    inp = _prompts(tmp_path / "p.jsonl", n)
    cache, out = str(tmp_path / "c.jsonl"), str(tmp_path / "a.jsonl")
    with ChatServer() as server:
        server.usage = {"prompt_tokens": 10, "completion_tokens": 2}
        server.hold_after = first  # answer three calls, then hold the fourth until the process is killed
        argv = ["judge", "run", "--input", inp, "--budget-tokens", "1000", "--judge-retries", "0"]
        argv += _judge_args(server, out, cache)
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen(
            [sys.executable, "-m", "rageval_min"] + argv,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.wait_for(lambda s: s.held >= 1 and len(s.completed) == first)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=20)
        assert proc.returncode == -signal.SIGKILL and not os.path.exists(out)
        entries = _cache_entries(cache)  # every line whole and readable
        assert len(entries) == first and all(e["usage"] == server.usage for e in entries)
        server.hold_after = None
        server.release.set()
        code, text, err = run_cli(argv + _gates(USAGE))
        assert code == 0, err
        rep = json.loads(text)
        assert rep["result"]["cache_hits"] == first and rep["result"]["calls"] == n - first
        assert len(server.completed) == n  # no answered call asked twice
        assert _metrics(text)["judge_prompt_tokens"] == 10 * n


# --------------------------------------------------------------------------- --require-calibration


def _calibration(tmp_path, spec, model, gate="kappa>=0.6"):
    s = os.path.join(ROOT, "gold_samples", "judge")
    path = str(tmp_path / f"cal-{re.sub(r'[^a-z0-9]', '', spec + model + gate)}.json")
    r = run_cli(
        [
            "judge",
            "agreement",
            "--judge",
            os.path.join(s, "agreement_judge.jsonl"),
            "--human",
            os.path.join(s, "agreement_human.jsonl"),
        ]
        + ["--level", "ordinal", "--labels", "no,partial,yes", "--gate", gate, "--emit-calibration", path]
        + ["--judge-spec", spec, "--judge-model", model]
    )
    assert os.path.exists(path), r.err
    return path


@pytest.mark.parametrize("family", FAMILIES)
def test_require_calibration_on_judge_commands(family, tmp_path):
    run, argv, base = _family_argv(family, tmp_path)
    model = "scripted"
    with ChatServer(answer=base) as server:
        ok = _calibration(tmp_path, server.base_url, model)
        other = _calibration(tmp_path, server.base_url, "another-model")
        failing = _calibration(tmp_path, server.base_url, model, gate="kappa>=0.99")
        live = argv + _judge_args(server, str(tmp_path / "r.jsonl"), model=model)
        code, _, err = run(live + ["--require-calibration", other])
        assert code == 2 and err.count("\n") == 1 and "the calibration is for model 'another-model'" in err
        code, _, err = run(live + ["--require-calibration", failing])
        assert code == 2 and err.count("\n") == 1 and "did not pass its gates" in err
        assert server.requests == []  # refused before any call
        code, _, err = run(live + ["--require-calibration", ok])
        assert code == 0, err


def test_the_gold_sampled_cache_of_docs_judges_md(tmp_path):
    """The offline example of docs/judges.md, "Repeated sampling, token usage, cost and budgets"."""
    s = os.path.join(ROOT, "gold_samples", "judge")
    base = ["--input", os.path.join(s, "prompts.jsonl"), "--param", "temperature=0"]
    base += ["--judge", "replay:" + os.path.join(s, "sampled_cache.jsonl")]
    out = str(tmp_path / "answers.jsonl")
    argv = base + ["--records", out, "--samples", "3", "--price-table", os.path.join(s, "prices.json")]
    code, text, err = _judge_run(argv + _gates(SAMPLING + USAGE + ["judge_cost"]))
    assert code == 0, err
    assert _metrics(text) == {
        "judge_failures": 0,
        "judge_samples": 3,
        "judge_self_consistency": 0.75,
        "judge_flip_rate": 0.0,
        "judge_undetermined": 0,
        "judge_prompt_tokens": 249,
        "judge_completion_tokens": 9,
        "judge_cached_tokens": 96,
        "judge_usage_missing": 0,
        "judge_cost": (153 * 0.15 + 96 * 0.075 + 9 * 0.6) / 1_000_000,
    }
    with open(os.path.join(s, "expected_answers.jsonl"), "rb") as fh:
        assert _read(out) == fh.read()  # the majority of three samples is the one-sample demo's answers
    code, text, err = _judge_run(base + ["--records", out, "--samples", "2", "--tie", "undetermined"])
    assert code == 0 and json.loads(text)["diagnostics"] == [
        "q3: undetermined: 2 samples, votes partial, no (majority, --tie undetermined)"
    ]


def test_usage_of_a_repeated_prompt_is_counted_once_live_warm_and_replayed(tmp_path):
    inp = tmp_path / "p.jsonl"
    inp.write_text("".join(json.dumps({"id": i, "prompt": "same"}) + "\n" for i in range(3)), encoding="utf-8")
    cache = str(tmp_path / "c.jsonl")
    seen = []
    with ChatServer() as server:
        server.usage = {"prompt_tokens": 7, "completion_tokens": 1}
        for n in range(2):  # cold, then every answer from the cache
            argv = ["--input", str(inp)] + _gates(USAGE) + _judge_args(server, str(tmp_path / f"{n}.jsonl"), cache)
            code, out, err = _judge_run(argv)
            seen.append(_metrics(out)["judge_prompt_tokens"])
    argv = ["--input", str(inp), "--records", str(tmp_path / "r.jsonl"), "--judge", "replay:" + cache]
    seen.append(_metrics(_judge_run(argv + _gates(USAGE))[1])["judge_prompt_tokens"])
    assert seen == [7, 7, 7]


def test_require_calibration_checks_the_template_hash(tmp_path):
    s = os.path.join(ROOT, "gold_samples", "judge")
    tpl = tmp_path / "t.txt"
    tpl.write_text("Judge this: {prompt}", encoding="utf-8")
    inp = _prompts(tmp_path / "p.jsonl", 2)
    with ChatServer() as server:
        cal = str(tmp_path / "cal.json")
        run_cli(
            ["judge", "agreement", "--judge", os.path.join(s, "agreement_judge.jsonl")]
            + ["--human", os.path.join(s, "agreement_human.jsonl"), "--level", "ordinal", "--labels", "no,partial,yes"]
            + ["--gate", "kappa>=0.6", "--emit-calibration", cal, "--judge-spec", server.base_url]
            + ["--judge-model", "scripted", "--judge-template", str(tpl)]
        )
        argv = ["--input", inp, "--require-calibration", cal] + _judge_args(server, str(tmp_path / "a.jsonl"))
        code, _, err = _judge_run(argv)
        assert code == 2 and "the calibration is for template_hash" in err and "not 'builtin'" in err
        code, _, err = _judge_run(argv + ["--judge-template", str(tpl)])
        assert code == 0, err
        assert server.requests[0]["prompt"] == "Judge this: prompt number 0"


def test_the_sampling_example_of_docs_judges_md_runs(tmp_path):
    import shlex

    with open(os.path.join(ROOT, "docs", "judges.md"), encoding="utf-8") as fh:
        section = fh.read().split("## Repeated sampling, token usage, cost and budgets", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [c for c in block.replace("\\\n", " ").splitlines() if c.startswith("rageval-min ")]
    assert len(commands) == 4
    outs = []
    for command in commands:
        command = command.replace("$S", os.path.join(ROOT, "gold_samples", "judge"))
        for name in ("answers.jsonl", "answers2.jsonl", "answers3.jsonl", "calibration.json"):
            command = command.replace(" " + name, " " + str(tmp_path / name))
        r = run_cli(shlex.split(command)[1:])
        assert r.code == 0, (command, r.err)
        outs.append(r.out)
    for line in ("judge_self_consistency>=0.7  0.75", "judge_cost<=0.0001           3.555e-05"):
        assert line in outs[0], outs[0]


@pytest.mark.parametrize("family", ["rgb", "pairwise"])
def test_the_stored_answer_is_the_first_sample_that_voted_the_verdict(family, tmp_path):
    """Sample 0 is the odd one out: the family stores sample 1's answer, so it scores the majority's verdict."""
    run, argv, base = _family_argv(family, tmp_path)
    one, three = str(tmp_path / "one.jsonl"), str(tmp_path / "three.jsonl")
    with ChatServer(answer=base) as server:
        assert run(argv + _judge_args(server, one))[0] == 0
    with ChatServer(answer=Varying(base, which=0)) as server:
        code, out, err = run(argv + ["--samples", "3"] + _gates(SAMPLING) + _judge_args(server, three))
    assert code == 0, err
    assert _read(one) == _read(three)
    m = _metrics(out)
    assert m["judge_flip_rate"] == 1.0 and m["judge_self_consistency"] == 0.0  # every first sample was outvoted
