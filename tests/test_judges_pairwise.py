"""Pairwise judged win rates end to end (split from test_judges_families.py; same scripted judge)."""

import functools
import json

import pytest
from conftest import run_cli
from judge_server import ChatServer
from judged_helpers import (
    _family_judge,
    _judge_args,
    _judge_live_then_replay,
    _live_then_replay,
    _pairwise_table,
    _score,
    scripted,
)


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def test_pairwise_win_rates_judged_live_and_replayed(server, tmp_path):
    table = _pairwise_table(
        tmp_path,
        [
            ("p1", "Design the API.", "plain api", "good api"),  # m1 wins in both orders
            ("p2", "Design the schema.", "plain schema", "other schema"),  # judge always says A: inconsistent
            ("p3", "Design the UI.", "same ui", "same ui"),  # exact match: never sent
        ],
    )
    prompts = str(tmp_path / "prompts.jsonl")
    assert run_cli(["pairwise", "prompts", "--input", table, "--refm", "ref", "--output", prompts]).code == 0
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


def test_pairwise_judge_subcommand_live_equals_replay(server, tmp_path):
    table = _pairwise_table(tmp_path)
    run = functools.partial(_family_judge, "pairwise")
    argv = ["--input", table, "--refm", "ref"]
    live, _, _, out, out2 = _live_then_replay(run, server, tmp_path, argv, "--concurrency", "2")
    rep = json.loads(out)
    counts = rep["result"]["counts"]
    assert (counts["total"], counts["non_exact"], counts["extracted"], counts["consistent"]) == (6, 4, 4, 2)
    assert len(server.requests) == 4
    assert all(r["body"]["temperature"] == 0 and r["body"]["max_tokens"] == 1024 for r in server.requests)
    assert json.loads(out2) == rep
    with open(live, encoding="utf-8") as fh:
        judged = [json.loads(line)["judge"] for line in fh]
    assert judged[4:] == ["EM", "EM"] and [j[:9] for j in judged[:2]] == ["Choice: B", "Choice: A"]


def test_pairwise_judge_failed_call_is_the_reference_fail_message(server, tmp_path):
    table = _pairwise_table(tmp_path)
    out = str(tmp_path / "judged.jsonl")
    server.faults = ["400"]  # the first comparison (p1;ref;m1) fails
    original = server.answer
    server.answer = lambda prompt, body: "Choice:B (no space)" if "schema" in prompt else original(prompt, body)
    argv = _judge_argv(server, table, tmp_path)
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


def _judge_argv(server, table, tmp_path, *extra):
    return ["--input", table, "--refm", "ref"] + _judge_args(server, str(tmp_path / "judged.jsonl")) + list(extra)


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--gate", "consistency_rate>>1"], "--gate"),  # malformed
        (["--gate", "no_such_metric>=1"], "unknown metric"),
        (["--gate", "win+halfdraw;m9;Overall-lang>=0.5"], "unknown metric"),  # m9 is not in the table
        (["--gate", "with_tie;general;m1;ref>=0.5"], "unknown metric"),  # metric of index p1 is 'p1'
        (["--gate", "unparseable_share>=0"], "unknown metric"),  # only with --extra unparseable_share
        (["--failure-limit", "0"], "--failure-limit"),
        (["--model", "m9"], "answer-m9"),
        (["--variant", "strict_ids", "--refm", "r;x"], "answer-r;x"),
        (["--judge-template", "/nonexistent/template.txt"], "template"),
    ],
)
def test_pairwise_judge_sends_nothing_when_an_option_or_gate_is_bad(server, tmp_path, extra, message):
    table = _pairwise_table(tmp_path)
    code, out, err = _family_judge("pairwise", _judge_argv(server, table, tmp_path, *extra))
    assert code == 2 and message in err and out == "", err
    assert server.requests == []
    assert not (tmp_path / "judged.jsonl").exists()


def test_pairwise_judge_sends_nothing_when_the_table_is_invalid(server, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"index": "p1", "evaluating_guidance": "g", "answer-ref": "a", "answer-m1": "b"}) + "\n")
    code, _, err = _family_judge("pairwise", _judge_argv(server, str(bad), tmp_path))
    assert code == 2 and "'question'" in err and str(bad) in err
    missing_q = tmp_path / "noq.jsonl"
    missing_q.write_text(
        json.dumps({"index": "p1", "question": None, "evaluating_guidance": "g", "answer-ref": "a", "answer-m1": "b"})
        + "\n"
    )
    code, _, err = _family_judge("pairwise", _judge_argv(server, str(missing_q), tmp_path))
    assert code == 2 and "index=p1" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = _family_judge("pairwise", _judge_argv(server, str(empty), tmp_path))
    assert code == 2
    code, _, err = _family_judge("pairwise", _judge_argv(server, str(bad), tmp_path, "--records", str(bad)))
    assert code == 2 and "same file" in err
    assert server.requests == []


def test_pairwise_judge_gate_on_a_known_name_runs(server, tmp_path):
    table = _pairwise_table(tmp_path)
    argv = _judge_argv(server, table, tmp_path, "--gate", "with_tie;p1;m1;ref>=0.5", "--gate", "judge_calls==4")
    code, out, err = _family_judge("pairwise", argv)
    assert code == 0, err
    assert len(server.requests) == 4


def test_pairwise_judge_per_item_rows_and_signature(server, tmp_path):
    table = _pairwise_table(tmp_path)
    items = tmp_path / "items.jsonl"
    report = tmp_path / "report.json"
    argv = _judge_argv(server, table, tmp_path, "--per-item", str(items), "--output", str(report))
    code, out, err = _family_judge("pairwise", argv)
    assert code == 0 and out == "", err
    rep = json.loads(report.read_text())
    assert rep["signature"].endswith("|judge_template=builtin|extras=none|judge_model=scripted")
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    judged = [json.loads(line) for line in (tmp_path / "judged.jsonl").read_text().splitlines()]
    assert [r["cmp_index"] for r in rows] == [j["cmp_index"] for j in judged]
    assert [(r["model"], r["choice"], r["win"], r["loss"], r["exact_match"]) for r in rows] == [
        ("m1", "B", 1, 0, 0),  # p1;ref;m1: m1 ("good api") in slot B wins
        ("m1", "A", 1, 0, 0),  # p1;m1;ref
        ("m1", "A", 0, 1, 0),  # p2: the judge always says A
        ("m1", "A", 1, 0, 0),
        ("m1", None, None, None, 1),  # p3: exact match, never sent
        ("m1", None, None, None, 1),
    ]
    from rageval_min._contract import accumulator_class

    acc = accumulator_class("pairwise", "judge")(nopt=2, refm="ref", judge_column="judge", judge_model="scripted")
    for r in rows:
        acc.add(r)
    assert json.dumps(acc.finalize().result) == json.dumps(rep["result"])
