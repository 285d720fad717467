"""`factuality judge` (library: factuality/judge.py; CLI: factuality/cli.py): search-free SAFE through a
scripted judge on a loopback server and from the replay cache, feeding `factuality f1k`."""

import argparse
import io
import json
import re

import pytest
from conftest import item_rows, run_cli
from judge_server import ChatServer
from judged_helpers import _live_then_replay

from rageval_min._cli_common import CliIO
from rageval_min.factuality import cli as cf
from rageval_min.factuality import judge as jf


def scripted(prompt, body):
    if prompt.startswith("List the separate facts"):
        sentence = prompt.rsplit("Sentence: ", 1)[1].strip()
        parts = [p.strip() for p in sentence.split(", ")]
        parts[-1] = parts[-1].rstrip(".")  # the parser adds the final period back
        return "Here they are:\n" + "\n".join("- " + p for p in parts)
    if prompt.startswith("Rewrite the fact"):
        fact = prompt.rsplit("Fact: ", 1)[1].strip()
        if fact.startswith("it "):
            return "The pronoun is the bridge.\n```\nThe Halden bridge " + fact[3:] + "\n```"
        return "Nothing to change, and no code block."
    if "[Foo]" in prompt:
        fact = prompt.rsplit("Fact: ", 1)[1].strip().lower()
        if "weather" in fact:
            return "Off topic. [Not Foo]"
        return "Hmm [maybe]" if "maybe" in fact else "On topic. [Foo]"
    if prompt.startswith("Decide whether the statement"):
        knowledge = prompt.split("Knowledge:\n", 1)[1].split("\n\nStatement:", 1)[0]
        fact = prompt.rsplit("Statement: ", 1)[1].strip()
        if "unclear" in fact:
            return "I cannot tell. [Unsure]"
        nums = re.findall(r"\d+", fact)
        return "[Supported.]" if nums and all(n in knowledge for n in nums) else "So: [Not Supported]"
    raise AssertionError(prompt[:60])


RECORDS = [
    {
        "id": "r1",
        "prompt": "Tell me about the Halden bridge.",
        "response": "The Halden bridge opened in 1931, it spans 310 metres. The weather was cold.",
        "passages": ["The Halden bridge opened in 1931.", "It is 290 metres long."],
    },
    {"id": "r2", "prompt": "When?", "response": "Maybe it is unclear when 1931 happened.", "passages": "1931."},
]


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def _run(argv):
    parser = argparse.ArgumentParser(prog="rageval-min factuality")
    sub = parser.add_subparsers()
    cf.register_judge(sub)
    args = parser.parse_args(["judge"] + argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, CliIO(out, err))
    return code, out.getvalue(), err.getvalue()


def test_search_free_safe_live_replay_and_f1k(server, tmp_path):
    inp = tmp_path / "responses.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    live, _, _, out, _ = _live_then_replay(
        _run, server, tmp_path, ["--input", str(inp)], "--concurrency", "2", "--gate", "judge_unparseable==5"
    )
    rep = json.loads(out)
    with open(live, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    # r1: "opened in 1931" supported, "it spans 310 metres" (revised) not supported, weather irrelevant
    counts = [{k: r[k] for k in ("supported", "not_supported", "irrelevant", "num_claims", "dropped")} for r in rows]
    assert counts == [
        {"supported": 1, "not_supported": 1, "irrelevant": 1, "num_claims": 3, "dropped": 0},
        {"supported": 0, "not_supported": 0, "irrelevant": 0, "num_claims": 1, "dropped": 1},
    ]
    facts = rows[0]["facts"]
    assert [f["atomic_fact"] for f in facts] == [
        "The Halden bridge opened in 1931",
        "it spans 310 metres.",
        "The weather was cold.",
    ]
    assert facts[1]["self_contained_atomic_fact"] == "The Halden bridge spans 310 metres."
    assert facts[0]["self_contained_atomic_fact"] == facts[0]["atomic_fact"]  # no code block: kept
    # unparseable: revisions without a code block (r1's two facts that need none, r2's fact),
    # r2's relevance and r2's rating
    assert rep["gates"][0]["value"] == 5 and rep["pass"] is True
    assert "search=passages" in rep["signature"] and rep["signature"].endswith("|judge_model=scripted")
    r = run_cli(["factuality", "f1k", "--input", live, "--max-claims", "2", "--format", "jsonl", "--bootstrap", "0"])
    assert r.code == 0, r.err
    f1 = [json.loads(line) for line in r.out.splitlines()]
    assert f1[0]["f1_at_k"] == 0.5 and f1[1]["f1_at_k"] == 0


def test_failed_call_makes_an_error_line(server, tmp_path):
    inp = tmp_path / "responses.jsonl"
    inp.write_text(json.dumps(RECORDS[1]) + "\n", encoding="utf-8")
    out = str(tmp_path / "out.jsonl")
    server.faults = ["400"]
    code, text, err = _run(["--input", str(inp), "--records", out, "--judge", server.base_url, "--judge-model", "m"])
    assert code == 0, err
    with open(out, encoding="utf-8") as fh:
        row = json.loads(fh.readline())
    assert set(row) == {"id", "error"} and "HTTP 400" in row["error"]
    assert json.loads(text)["result"]["errors"] == 1


def test_parsers():
    from rageval_min.judges import UnparseableAnswer

    assert jf.parse_facts("x\n- a\n- b") == ["a", "b."]
    assert jf.parse_facts("* a.\n* b.") == ["a.", "b."]
    assert jf.parse_facts("none") == []
    assert jf.parse_rating("[Supported.]") == "Supported"
    with pytest.raises(UnparseableAnswer):
        jf.parse_rating("[supported]")  # exact, case-sensitive
    with pytest.raises(UnparseableAnswer) as info:
        jf.parse_relevance("[Relevant]")
    assert info.value.fallback is True
    assert jf.parse_relevance("[Not Foo] and [Foo]") is False


def test_records_and_report_options_and_merge(server, tmp_path):
    inp = tmp_path / "responses.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    judged, report, items, state = (str(tmp_path / n) for n in ("j.jsonl", "r.json", "i.jsonl", "s.json"))
    base = ["factuality", "judge", "--input", str(inp), "--judge", server.base_url, "--judge-model", "scripted"]
    # a gate on no metric is refused before any judge call
    r = run_cli(base + ["--records", judged, "--gate", "nope>=1"])
    assert r.code == 2 and "nope" in r.err and server.requests == []
    r = run_cli(
        base + ["--records", judged, "--output", f"json:{report}", "--per-item", items, "--emit-partial", state]
    )
    assert r.code == 0, r.err
    rep = json.loads(open(report, encoding="utf-8").read())
    assert rep["result"]["output"] == judged and rep["result"]["responses"] == 2
    with open(items, encoding="utf-8") as fh:
        rows = item_rows(fh.read())
    with open(judged, encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    assert rows == [{k: v for k, v in line.items() if k != "facts"} for line in lines]
    merged = run_cli(["merge", state, "--format", "json"])
    assert merged.code == 0 and json.loads(merged.out)["result"] == rep["result"]
    # the judged file is --records; --output is the report
    r = run_cli(base + ["--output", judged])
    assert r.code == 2 and "--records" in r.err
