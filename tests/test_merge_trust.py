"""merge treats partial states as untrusted input (issue #23 item 2, first part): a state changed after it
was written is refused, the same state given twice is refused, and states without the digest (written
before it existed) still merge."""

import json
import os

from conftest import ROOT, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")


def _state(tmp_path, name):
    path = tmp_path / name
    r = run_cli(["grounding", "--gold", GOLD, "--trace", TRACE, "--emit-partial", str(path), "--gate", "chr>=0"])
    assert r.code == 0, r.err
    return path


def test_the_same_state_twice_is_refused_but_equal_shards_merge(tmp_path):
    a, b = _state(tmp_path, "a.json"), _state(tmp_path, "b.json")
    r = run_cli(["merge", str(a), str(a)])
    assert r.code == 2 and r.err.count("\n") == 1 and "the same shard as" in r.err and "a.json" in r.err
    copy = tmp_path / "copy.json"
    copy.write_text(a.read_text(encoding="utf-8"), encoding="utf-8")
    assert run_cli(["merge", str(a), str(copy)]).code == 2
    # two shards that happen to hold equal items are two writes: they merge
    assert run_cli(["merge", str(a), str(b), "--format", "json"]).code in (0, 1)


def test_a_changed_state_is_refused(tmp_path):
    a = _state(tmp_path, "a.json")
    state = json.loads(a.read_text(encoding="utf-8"))
    assert set(state) >= {"written", "digest"} and list(state)[-1] == "digest"
    state["data"]["counts"]["correct"] -= 1  # still a possible state: only the digest tells
    a.write_text(json.dumps(state), encoding="utf-8")
    r = run_cli(["merge", str(a)])
    assert r.code == 2 and r.err.count("\n") == 1 and "digest does not match" in r.err


def test_states_without_a_digest_still_merge(tmp_path):
    a = _state(tmp_path, "a.json")
    state = json.loads(a.read_text(encoding="utf-8"))
    del state["written"], state["digest"]
    a.write_text(json.dumps(state), encoding="utf-8")
    one = run_cli(["grounding", "--gold", GOLD, "--trace", TRACE, "--format", "json"])
    merged = run_cli(["merge", str(a), "--format", "json"])
    assert merged.code == one.code and merged.out == one.out
