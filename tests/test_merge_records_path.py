"""The ``--records`` file a shard wrote is not part of the merge identity (issue #23 item 2).

mtrag's algorithmic, condition and judge steps keep the ``--records`` path in their parameters (the
report names it as ``output``).  Shards that wrote different record files merge: the numbers are
those of one pass over the whole input, and ``output`` lists the shards' files in shard order.
Any other parameter that differs still refuses the merge.
"""

import json
import os

import pytest
from conftest import ROOT, nonblank_lines, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "mtrag")

STEPS = {
    "algorithmic": (["mtrag", "algorithmic"], "tasks.jsonl"),
    "condition": (["mtrag", "condition"], "judged.jsonl"),
    "judge": (
        ["mtrag", "judge", "--steps", "idk,rl_f", "--judge", "replay:" + os.path.join(GOLD, "judge_cache.jsonl")],
        "tasks.jsonl",
    ),
}


def _shard_states(tmp_path, head, lines, extra=()):
    states, records = [], []
    for k, part in enumerate((lines[:1], lines[1:])):
        shard = tmp_path / f"shard{k}.jsonl"
        shard.write_text("".join(part), encoding="utf-8")
        rec, state = tmp_path / f"records{k}.jsonl", tmp_path / f"state{k}.json"
        argv = head + ["--input", str(shard), "--records", str(rec), "--emit-partial", str(state)]
        r = run_cli(argv + list(extra if k else ()))
        assert r.code == 0, r.err
        states.append(str(state))
        records.append(str(rec))
    return states, records


@pytest.mark.parametrize("step", sorted(STEPS))
def test_shards_with_different_records_files_merge(step, tmp_path):
    head, name = STEPS[step]
    path = os.path.join(GOLD, name)
    lines = nonblank_lines(path)
    states, records = _shard_states(tmp_path, head, lines)
    merged = run_cli(["merge"] + states + ["--format", "json"])
    assert merged.code == 0, merged.err
    whole = run_cli(head + ["--input", path, "--records", str(tmp_path / "all.jsonl"), "--format", "json"])
    assert whole.code == 0, whole.err
    got, want = json.loads(merged.out), json.loads(whole.out)
    assert got["result"].pop("output") == records
    assert want["result"].pop("output") == str(tmp_path / "all.jsonl")
    assert got == want


def test_shards_with_the_same_records_file_keep_its_name(tmp_path):
    head, name = STEPS["algorithmic"]
    lines = nonblank_lines(os.path.join(GOLD, name))
    states = []
    for k, part in enumerate((lines[:1], lines[1:])):
        shard = tmp_path / f"shard{k}.jsonl"
        shard.write_text("".join(part), encoding="utf-8")
        state = tmp_path / f"state{k}.json"
        argv = ["--input", str(shard), "--records", "-", "--emit-partial", str(state), "--output", str(tmp_path / "r")]
        r = run_cli(head + argv)
        assert r.code == 0, r.err
        states.append(str(state))
    merged = run_cli(["merge"] + states + ["--format", "json"])
    assert merged.code == 0 and json.loads(merged.out)["result"]["output"] == "-"


def test_other_options_still_refuse_the_merge(tmp_path):
    head, name = STEPS["condition"]
    lines = nonblank_lines(os.path.join(GOLD, name))
    states, _ = _shard_states(tmp_path, head, lines, extra=("--full-precision",))
    r = run_cli(["merge"] + states)
    assert r.code == 2 and r.err.count("\n") == 1 and "different options" in r.err
    assert "records" not in r.err.split("different options")[1]
