"""mtrag on the scale-out engine (issue #16): what tests/test_engine.py cannot check generically.

* ``summarize`` shards: the report names each input file, so the merge of line shards of
  one file names the first shard where one pass names the whole file; everything else is
  byte-identical (checked here with the path put back);
* ``judge``: ``--jobs`` gives the same bytes, and judged shards merge into the one-pass report;
* bad records: the same error message (first problem, count) with any ``--jobs``, and nothing written;
* the Dask engine on a real ``LocalCluster`` for every mtrag contract case (tests/test_engine.py
  runs Dask only on the cases whose id ends in ``-default``, ``score`` or ``rouge``).
"""

import io
import json
import os

import pytest
from conftest import ROOT, merge_of_shards, need, nonblank_lines, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "mtrag")
TASKS = os.path.join(GOLD, "tasks.jsonl")
CACHE = os.path.join(GOLD, "judge_cache.jsonl")
CONDITIONED = os.path.join(GOLD, "expected_conditioned.jsonl")


def test_summarize_shards_merge_to_one_pass_but_for_the_input_name(tmp_path):
    argv = ["mtrag", "summarize", "--input", "{input}", "--setting", "demo"]
    whole = tmp_path / "whole.json"
    code, _, err = run_cli(["mtrag", "summarize", "--input", CONDITIONED, "--setting", "demo", "--output", str(whole)])
    assert code == 0, err
    for n in (1, 2, 7):
        merged = merge_of_shards(tmp_path, argv, nonblank_lines(CONDITIONED), n)
        first_shard = str(tmp_path / f"shard{n}-0.jsonl")
        assert json.loads(merged)["result"]["settings"][0]["input"] == first_shard
        assert merged.replace(json.dumps(first_shard), json.dumps(CONDITIONED)) == whole.read_text(encoding="utf-8")


def _judge_argv(records="-"):
    return ["mtrag", "judge", "--input", TASKS, "--steps", "underspecified,idk,rl_f,rb_llm"] + [
        "--judge",
        "replay:" + CACHE,
        "--records",
        records,
    ]


def test_judge_jobs_same_bytes_and_shards_merge(tmp_path):
    outputs = []
    for jobs in ("1", "2"):
        rep, items = tmp_path / f"r{jobs}.json", tmp_path / f"i{jobs}.jsonl"
        code, out, err = run_cli(_judge_argv() + ["--output", str(rep), "--per-item", str(items), "--jobs", jobs])
        assert code == 0, err
        outputs.append((out, rep.read_bytes(), items.read_bytes()))
    assert outputs[0] == outputs[1]
    with open(os.path.join(GOLD, "expected_judged.jsonl"), encoding="utf-8") as fh:
        assert outputs[0][0] == fh.read()
    whole = json.loads(outputs[0][1])
    for n in (2, 3):
        argv = _judge_argv(str(tmp_path / "judged.jsonl"))
        argv[argv.index(TASKS)] = "{input}"
        merged = merge_of_shards(tmp_path, argv, nonblank_lines(TASKS), n)
        got = json.loads(merged)
        # the judge's call statistics describe each run (a replay cache: 0 calls), the rest is the one pass
        assert got["result"] == dict(whole["result"], output=str(tmp_path / "judged.jsonl"))
        assert got["signature"] == whole["signature"]


def test_bad_records_same_error_for_any_jobs(tmp_path):
    good = nonblank_lines(TASKS)
    lines = good * 200 + ['{"task_id": "b1", "predictions": []}\n', "[1]\n"] + good * 200 + ['{"task_id": "b2"}\n']
    src = tmp_path / "in.jsonl"
    src.write_text("".join(lines), encoding="utf-8")
    errors = set()
    for jobs in ("1", "2", "4"):
        out = tmp_path / "o.jsonl"
        code, _, err = run_cli(["mtrag", "algorithmic", "--input", str(src), "--records", str(out), "--jobs", jobs])
        assert code == 2 and not out.exists()
        errors.add(err)
    assert len(errors) == 1
    (err,) = errors
    assert "task_id=b1" in err and "(and 2 more problems)" in err


# --------------------------------------------------------------------------- Dask

with open(os.path.join(ROOT, "tests", "contract_cases", "mtrag.json"), encoding="utf-8") as _fh:
    CASES = json.load(_fh)


@pytest.fixture(scope="module")
def cluster():
    distributed = need("distributed", "dask", "pip install 'rageval-min[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dask_engine_gives_the_same_bytes(case, cluster, tmp_path):
    argv = [a.replace("gold_samples/", os.path.join(ROOT, "gold_samples") + "/") for a in case["argv"]]
    got = []
    for engine in ([], ["--engine", "dask", "--scheduler", cluster.scheduler_address]):
        rep, items = tmp_path / "r.json", tmp_path / "i.jsonl"
        code, out, err = run_cli(argv + ["--output", str(rep), "--per-item", str(items)] + engine)
        assert code == 0, err
        got.append((out, rep.read_bytes(), items.read_bytes()))
    assert got[0] == got[1]


# --------------------------------------------------------------------------- deferred parsing

# The mtrag file functions hand the workers each line unparsed (``iter_jsonl(deferred=True)``)
# and put the parse errors back where the reader reports them (``_io.DeferredProblems``).  Checked
# here against the reader that parses every line itself, on files mixing good records, lines
# that are not JSON, records with bad content, bad bytes, blank lines and a truncated last line.

_BAD_LINES = [
    b'{"task_id": "b1", "predictions": []}\n',  # a record the scorer rejects
    b"[1]\n",  # JSON, not an object
    b'{"task_id": \n',  # not JSON
    b'{"q": "\\ud800"}\n',  # a lone surrogate (the reader's problem, with a field)
    b'{"a": 1\xff}\n',  # not UTF-8
    b"   \n",  # blank
    b"1" * 5000 + b"\n",  # an integer longer than Python converts
]


def _eager_numbered(path):
    from rageval_min._io import iter_jsonl
    from rageval_min.errors import ScoringError

    try:
        yield from iter_jsonl(path)
    except ScoringError as exc:
        yield 0, exc


def _outcome(call):
    """What a user sees of one call: the report or the error, and what was written and handed out."""
    from rageval_min.errors import ScoringError
    from rageval_min.report.render_json import render_json

    out, rows = io.StringIO(), []
    try:
        got = ("ok", render_json(call(out, rows.append), []))
    except ScoringError as exc:
        got = ("error", (str(exc), exc.problems, exc.count))
    return got, out.getvalue(), rows


@pytest.mark.parametrize("seed", range(40))
def test_deferred_parsing_reports_as_the_parsing_reader(seed, tmp_path, monkeypatch):
    import random

    from rageval_min._parallel import ProcessEngine, use_engine
    from rageval_min.mtrag import files as mtrag

    rng = random.Random(seed)
    good = [line.encode("utf-8") for line in nonblank_lines(TASKS)]
    n_bad = rng.choice([0, 1, 2, 5, 30, 60])
    lines = [rng.choice(good) for _ in range(rng.randint(1, 40))]
    for _ in range(n_bad):
        lines.insert(rng.randint(0, len(lines)), rng.choice(_BAD_LINES))
    if seed % 5 == 1:  # many lines that are not JSON, then the reader's own problems past the limit
        lines[1:1] = [b"{\n"] * rng.randint(20, 49) + [b"\xff\n"] * rng.randint(1, 40)
    if rng.random() < 0.3:
        lines.append(b'{"task_id": "cut", "predictions"')  # a truncated last line
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(lines))
    conditioned = tmp_path / "cond.jsonl"
    conditioned.write_bytes(b"".join(lines).replace(b'"task_id"', b'"metrics": {}, "task_id"'))

    def runs():
        return [
            _outcome(lambda out, rows: mtrag.algorithmic_file(str(src), out, on_item=rows)),
            _outcome(lambda out, rows: mtrag.condition_file(str(conditioned), out, on_item=rows)),
            _outcome(lambda out, rows: mtrag.summarize_files([str(conditioned)], on_item=rows)),
        ]

    deferred = runs()
    if seed % 4 == 0:
        with use_engine(ProcessEngine(2)):
            assert runs() == deferred
    monkeypatch.setattr(mtrag, "deferred_jsonl", _eager_numbered)
    assert runs() == deferred
