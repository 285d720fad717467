"""rgb on the scale-out engine: --jobs, --emit-partial + merge of shards, and Dask.

tests/test_engine.py runs every contract case with --jobs, but its shard test only splits
``.jsonl`` inputs: RGB's prediction files are JSON Lines named ``.json`` (the reference's
names, which ``rgb score`` parses for the dataset and the noise rate), so they are split here,
keeping the file name.  ``rgb judge`` shards are judged through the replay cache.
"""

import json
import os

import pytest
from conftest import ROOT, need, nonblank_lines, run_cli, shards

from rageval_min import rgb

G = os.path.join(ROOT, "gold_samples", "rgb")
NOISE1 = os.path.join(G, "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
FACT = os.path.join(G, "prediction_en_fact_demo_temp0.2_noise0.0_passage5_correct0.0.json")
ZH_INT = os.path.join(G, "prediction_zh_int_demo_temp0.2_noise0.2_passage5_correct0.0.json")

#: (argv before --input, input, argv after --input): every scoring command of rgb
COMMANDS = [
    (["rgb", "score"], NOISE1, []),
    (["rgb", "score"], FACT, []),
    (["rgb", "score"], ZH_INT, ["--variant", "noise1_reject_only"]),
    (["rgb", "score"], os.path.join(G, "expected_judged_reject.jsonl"), ["--dataset", "en", "--judged", "reject"]),
    (
        ["rgb", "score"],
        os.path.join(G, "expected_judged_fact.jsonl"),
        ["--dataset", "en_fact", "--judged", "fact", "--use-labels"],
    ),
    (
        ["rgb", "judge"],
        NOISE1,
        ["--judged", "reject", "--judge", "replay:" + os.path.join(G, "judge_cache_reject.jsonl")],
    ),
    (["rgb", "judge"], FACT, ["--judged", "fact", "--judge", "replay:" + os.path.join(G, "judge_cache_fact.jsonl")]),
]
IDS = [" ".join(a[1:] + [os.path.basename(i)] + b[:4]) for a, i, b in COMMANDS]


def _argv(cmd, path):
    before, _, after = cmd
    return before + ["--input", str(path)] + after


@pytest.mark.parametrize("cmd", COMMANDS, ids=IDS)
def test_shards_of_the_prediction_file_merge_to_one_pass(cmd, tmp_path):
    whole = run_cli(_argv(cmd, cmd[1]) + ["--format", "json"])
    assert whole.code in (0, 1), whole.err
    whole_rgb = run_cli(_argv(cmd, cmd[1]) + ["--format", "rgb", "--output", f"rgb:{tmp_path / 'whole.txt'}"])
    lines = nonblank_lines(cmd[1])
    for n in (1, 2, 7):
        states = []
        for k, shard in enumerate(shards(lines, n)):
            folder = tmp_path / f"{n}-{k}"
            folder.mkdir()
            part = folder / os.path.basename(cmd[1])  # the same name: dataset and noise rate come from it
            part.write_text("".join(shard), encoding="utf-8")
            state = tmp_path / f"state{n}-{k}.json"
            r = run_cli(_argv(cmd, part) + ["--emit-partial", str(state), "--output", str(folder / "r.json")])
            assert r.code in (0, 1), r.err
            states.append(str(state))
        merged = run_cli(["merge"] + states + ["--format", "json"])
        assert merged.code == whole.code, merged.err
        assert merged.out == whole.out, f"{n} shards"
        as_rgb = run_cli(["merge"] + states + ["--output", f"rgb:{tmp_path / f'merged{n}.txt'}"])
        assert as_rgb.code == whole_rgb.code, as_rgb.err
        assert (tmp_path / f"merged{n}.txt").read_bytes() == (tmp_path / "whole.txt").read_bytes()


def test_merge_of_score_states_has_no_abilities_format(tmp_path):
    state = tmp_path / "s.json"
    assert run_cli(["rgb", "score", "--input", NOISE1, "--emit-partial", str(state)]).code == 0
    r = run_cli(["merge", str(state), "--format", "abilities"])
    assert r.code == 2 and "abilities" in r.err and "rgb report" in r.err and "Traceback" not in r.err


def _big_file(tmp_path, n=700):
    """Many records (several engine chunks), some dropped by the reference, some at noise 1 with label []."""
    recs = []
    for i in range(n):
        if i % 97 == 5:
            recs.append({"id": i, "query": "q", "prediction": "x", "ans": [3], "noise_rate": 1.0})  # dropped
        elif i % 89 == 7:
            recs.append({"id": i, "query": "q", "prediction": "yes", "ans": [], "noise_rate": 1.0})  # label []
        else:
            pred = "insufficient information" if i % 3 == 0 else ("Paris" if i % 3 == 1 else "Rome")
            recs.append({"id": i, "query": "q", "prediction": pred, "ans": ["Paris"], "noise_rate": 1.0})
    path = tmp_path / "prediction_en_big_temp0.2_noise1.0_passage5_correct0.0.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def test_jobs_keep_the_skip_notes_and_diagnostics_in_input_order(tmp_path, engines):
    path = _big_file(tmp_path)
    outs = {}
    for jobs in ("1", "3"):
        items = tmp_path / f"{jobs}.jsonl"
        r = run_cli(["rgb", "score", "--input", str(path), "--per-item", str(items), "--jobs", jobs])
        assert r.code == 0, r.err
        outs[jobs] = (r.out, items.read_bytes())
    assert engines[-1].name == "processes" and engines[-1].chunks_run >= 3
    assert outs["1"] == outs["3"]
    diags = json.loads(outs["1"][0])["diagnostics"]
    dropped = [d for d in diags if "skipped (as the reference does)" in d]
    assert len(dropped) == len([i for i in range(700) if i % 97 == 5])
    assert dropped == sorted(dropped, key=lambda d: int(d.split(":")[1]))  # file:line: in input order


def test_errors_are_the_same_with_jobs(tmp_path):
    """A bad judge output before a malformed record is the error, as in one lazy pass; after it, the problems."""
    base = {"query": "q", "prediction": "p", "ans": ["a"], "label": [1], "judge_template": "builtin"}
    recs = [dict(base, id=i, evaluation="The question is addressed") for i in range(600)]
    recs[450]["evaluation"] = 3
    recs[520].pop("label")
    recs[520].pop("prediction")
    path = tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    argv = ["rgb", "score", "--input", str(path), "--dataset", "en", "--noise-rate", "1", "--judged", "reject"]
    argv += ["--use-labels"]
    errs = {jobs: run_cli(argv + ["--jobs", jobs]) for jobs in ("1", "2")}
    assert errs["1"].code == errs["2"].code == 2
    assert errs["1"].err == errs["2"].err
    assert ":451:" in errs["1"].err and "'evaluation' is not a string" in errs["1"].err
    recs[450]["evaluation"] = "fine"
    recs[100].pop("label")
    recs[100].pop("prediction")
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    errs = {jobs: run_cli(argv + ["--jobs", jobs]) for jobs in ("1", "2")}
    assert errs["1"].err == errs["2"].err and errs["1"].code == 2
    assert ":101:" in errs["1"].err and "(and 1 more problem)" in errs["1"].err and "no 'prediction'" in errs["1"].err


def test_library_score_file_runs_serially_and_emits_nothing():
    report = rgb.score_file(NOISE1)
    assert report.result == json.loads(run_cli(["rgb", "score", "--input", NOISE1]).out)["result"]


# --------------------------------------------------------------------------- Dask


@pytest.fixture(scope="module")
def cluster():
    distributed = need("distributed", "dask", "pip install 'rageval-min[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.mark.parametrize("cmd", COMMANDS, ids=IDS)
def test_dask_engine_gives_the_same_bytes(cmd, cluster, tmp_path):
    argv = _argv(cmd, cmd[1])
    one = run_cli(argv + ["--per-item", str(tmp_path / "1.jsonl")])
    dask = run_cli(
        argv + ["--per-item", str(tmp_path / "d.jsonl"), "--engine", "dask", "--scheduler", cluster.scheduler_address]
    )
    assert (dask.code, dask.out) == (one.code, one.out), dask.err
    assert (tmp_path / "d.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()
    plain = run_cli(argv + ["--engine", "dask", "--scheduler", cluster.scheduler_address])  # states merged on Dask
    assert (plain.code, plain.out) == (one.code, one.out), plain.err


def test_dask_engine_on_many_records(cluster, tmp_path):
    path = _big_file(tmp_path)
    one = run_cli(["rgb", "score", "--input", str(path)])
    dask = run_cli(["rgb", "score", "--input", str(path), "--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert (dask.code, dask.out) == (one.code, one.out), dask.err


def test_judge_refuses_a_missing_partial_folder_before_judging(tmp_path):
    records = tmp_path / "r.jsonl"
    cmd = COMMANDS[5]
    r = run_cli(_argv(cmd, cmd[1]) + ["--records", str(records), "--emit-partial", str(tmp_path / "no" / "s.json")])
    assert r.code == 2 and "does not exist" in r.err and not records.exists()
