"""Pairwise judged win rates end to end (split from test_judges_families.py; same scripted judge)."""

import json

import pytest
from conftest import run_cli
from judge_server import ChatServer
from judged_helpers import _family_judge, _judge_live_then_replay, _pairwise_table, _score, scripted


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


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
            "--records",
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
        "pairwise", ["--input", table, "--refm", "ref", "--records", replay, "--judge", "replay:" + cache]
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
    argv = [
        "--input",
        table,
        "--refm",
        "ref",
        "--records",
        out,
        "--judge",
        server.base_url,
        "--judge-model",
        "scripted",
    ]
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
