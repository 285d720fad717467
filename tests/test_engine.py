"""Scale-out without changing a byte: --jobs, --emit-partial + merge, and the Dask engine.

Driven by the contract cases (tests/contract_cases/<family>.json), so every scoring command of
every family is covered the same way:

* ``--jobs 1/2/4`` give the same bytes in every format, and with more than one job the per-item
  work really went through the process pool (the engine counts the chunks it ran);
* the input split into 1, 2 and 7 shards, each run with ``--emit-partial``, then ``merge``,
  gives the report of one pass over the whole input;
* the Dask engine on a real ``distributed.LocalCluster`` with worker processes gives the same
  bytes (skipped with its reason without the dask extra; required in CI).
"""

import json
import os

import pytest
from conftest import ROOT, absolute_argv, contract_cases, merge_of_shards, need, nonblank_lines, run_cli, shards

G = "gold_samples/"
CASES = contract_cases()
IDS = [c["id"] for c in CASES]

#: the options that name the single record file a command reads (the one the shard test splits)
INPUT_OPTIONS = ("--input", "--record", "--trace")


def _argv(case):
    return absolute_argv(case["argv"])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jobs_give_the_same_bytes_and_use_the_pool(case, engines, tmp_path):
    argv = _argv(case)
    outputs = {}
    for jobs in ("1", "2", "4"):
        targets = []
        for fmt in ("json", "text", "markdown", "junit"):
            path = tmp_path / f"{jobs}.{fmt}"
            targets += ["--output", f"{fmt}:{path}"]
        items = tmp_path / f"{jobs}.items.jsonl"
        code, out, err = run_cli(argv + targets + ["--per-item", str(items), "--jobs", jobs])
        assert code in (0, 1), err
        outputs[jobs] = (
            out,
            [(tmp_path / f"{jobs}.{fmt}").read_bytes() for fmt in ("json", "text", "markdown", "junit")],
            items.read_bytes(),
        )
        if jobs != "1":
            assert engines[-1].name == "processes" and engines[-1].chunks_run > 0, "the pool did no work"
    assert outputs["1"] == outputs["2"] == outputs["4"]


def _input_index(argv):
    for i, word in enumerate(argv[:-1]):
        if word in INPUT_OPTIONS and argv[i + 1].endswith(".jsonl"):
            return i + 1
    return None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_merge_of_shards_equals_one_pass(case, tmp_path):
    argv = _argv(case)
    i = _input_index(argv)
    if i is None or case["family"] == "grounding":
        pytest.skip("no single JSON Lines input to split (grounding is split by qid in test_grounding_shards)")
    if case["command"] == "summarize":
        pytest.skip("the summary names its input file; tests/test_mtrag_engine.py merges summarize shards")
    lines = nonblank_lines(argv[i])
    whole = tmp_path / "whole.json"
    code, _, err = run_cli(argv + ["--output", f"json:{whole}"])
    assert code in (0, 1), err
    one_pass = whole.read_text(encoding="utf-8")
    template = argv[:i] + ["{input}"] + argv[i + 1 :]
    for n in (1, 2, 7):
        merged = merge_of_shards(tmp_path, template, lines, n, codes=(0, 1))
        assert json.loads(merged)["result"] == json.loads(one_pass)["result"], f"{n} shards"
        assert merged == one_pass, f"{n} shards"


def test_grounding_shards_split_by_qid_merge_to_one_pass(tmp_path):
    gold = [line for line in open(os.path.join(ROOT, "tests", "data", "wfgy", "sample_gold.jsonl"))]
    trace = [line for line in open(os.path.join(ROOT, "tests", "data", "wfgy", "sample_trace.jsonl"))]
    qids = [json.loads(line)["qid"] for line in gold]
    whole = run_cli(
        [
            "grounding",
            "--gold",
            os.path.join(ROOT, "tests", "data", "wfgy", "sample_gold.jsonl"),
            "--trace",
            os.path.join(ROOT, "tests", "data", "wfgy", "sample_trace.jsonl"),
        ]
    )
    for n in (1, 2, 3):
        states = []
        for k, part in enumerate(shards(qids, n)):
            g, t, s = tmp_path / f"g{n}{k}.jsonl", tmp_path / f"t{n}{k}.jsonl", tmp_path / f"s{n}{k}.json"
            g.write_text("".join(line for line in gold if json.loads(line)["qid"] in part))
            t.write_text("".join(line for line in trace if (json.loads(line).get("qid") or "") in part))
            r = run_cli(["grounding", "--gold", str(g), "--trace", str(t), "--emit-partial", str(s)])
            assert r.code in (0, 1), r.err
            states.append(str(s))
        merged = run_cli(["merge"] + states)
        assert merged.out == whole.out and merged.code == whole.code


def test_merge_refuses_states_of_different_options(tmp_path):
    g = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
    t = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_cli(["grounding", "--gold", g, "--trace", t, "--emit-partial", str(a)])
    run_cli(["grounding", "--gold", g, "--trace", t, "--k", "3", "--emit-partial", str(b)])
    r = run_cli(["merge", str(a), str(b)])
    assert r.code == 2 and "different options" in r.err
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a state"}')
    r = run_cli(["merge", str(bad)])
    assert r.code == 2 and "bad.json" in r.err and "not a rageval-min partial state" in r.err


def test_jobs_option_is_checked():
    g = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
    for bad in ("0", "x", "100000"):
        r = run_cli(["grounding", "--gold", g, "--trace", g, "--jobs", bad])
        assert r.code == 2 and "--jobs" in r.err


# --------------------------------------------------------------------------- Dask


@pytest.fixture(scope="module")
def cluster():
    distributed = need("distributed", "dask", "pip install 'rageval-min[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


DASK_CASES = [c for c in CASES if c["id"] in {"grounding"} or c["id"].endswith(("-default", "score", "rouge"))]


@pytest.mark.parametrize("case", DASK_CASES or CASES[:1], ids=lambda c: c["id"])
def test_dask_engine_on_a_local_cluster_gives_the_same_bytes(case, cluster):
    argv = _argv(case)
    code1, out1, _ = run_cli(argv)
    code2, out2, err = run_cli(argv + ["--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert (code2, out2) == (code1, out1), err


def test_score_bag_merges_partition_states_in_order(cluster):
    import functools

    db = need("dask.bag", "dask", "pip install 'rageval-min[dask]'")
    distributed = need("distributed", "dask", "pip install 'rageval-min[dask]'")
    from rageval_min import rouge
    from rageval_min._extras import load_extra

    path = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
    records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    opts = {"rouge_types": ["rouge1", "rougeL"], "use_stemmer": False, "tokenizer": "reference"}
    one = rouge.score_file(path, backend="stdlib", **opts)
    bag = db.from_sequence(records, npartitions=3)
    with distributed.Client(cluster):
        got = load_extra("dask").score_bag(
            bag,
            functools.partial(rouge.score_item, lcs=None, **opts),
            rouge.RougeAccumulator(backend="stdlib", **opts),
        )
    assert json.dumps(got.result) == json.dumps(one.result) and got.signature == one.signature


def test_the_spark_recipe_in_the_docs_merges_to_one_pass(monkeypatch):
    """docs/scale.md's Spark recipe, run with a stand-in for the two Spark calls it makes
    (textFile split into ordered partitions, mapPartitions + collect): the merged report is one pass's."""
    import re
    import types

    from rageval_min import rouge

    text = open(os.path.join(ROOT, "docs", "scale.md"), encoding="utf-8").read()
    code = re.search(r"## Spark.*?```python\n(.*?)```", text, re.S).group(1)

    class Partitions:
        def __init__(self, parts):
            self.parts = parts

        def mapPartitions(self, fn):  # noqa: N802 - Spark's name
            return Partitions([list(fn(iter(p))) for p in self.parts])

        def collect(self):
            return [x for p in self.parts for x in p]

    def text_file(path):
        lines = open(path, encoding="utf-8").read().splitlines()
        return Partitions([lines[:2], lines[2:5], lines[5:]])

    spark = types.SimpleNamespace(sparkContext=types.SimpleNamespace(textFile=text_file))
    monkeypatch.chdir(os.path.join(ROOT, "gold_samples", "rouge"))
    scope = {"spark": spark}
    exec(compile(code, "docs/scale.md", "exec"), scope)
    one = rouge.score_file("pairs.jsonl", rouge_types=["rougeL"], use_stemmer=False, tokenizer="reference")
    assert json.dumps(scope["report"].result) == json.dumps(one.result)
