"""pairwise on the scale-out engine: --jobs, --emit-partial + merge of shards, and Dask.

tests/test_engine.py runs the contract cases with --jobs, but its shard test only splits
``.jsonl`` inputs by lines.  The judge record is the reference's TSV: a header and quoted cells
that span lines (the judge texts), so it is split here by CSV rows, every shard keeping the
header.  ``pairwise judge`` builds its comparisons model by model, so its shards are groups of
``--model`` (the rows of one pass are the shards' rows concatenated).
"""

import csv
import io
import json
import os

import pytest
from conftest import DATA, ROOT, need, run_cli, shards

from rageval_min import pairwise

G = os.path.join(ROOT, "gold_samples", "pairwise")
RECORD = os.path.join(G, "record_fakejudge_2.tsv")
SCORES = [
    ["--nopt", "2", "--refm", "ref", "--extra", "unparseable_share"],
    ["--nopt", "2", "--variant", "orphans_excluded", "--variant", "macro_average"]
    + ["--extra", "unparseable_share", "--extra", "per_model_consistency", "--extra", "conservative_win_rate"],
]
JUDGE = ["pairwise", "judge", "--input", os.path.join(G, "synthetic_meta.xlsx"), "--refm", "ref"]
JUDGE_OPTS = ["--judge-column", "fakejudge", "--extra", "unparseable_share"]
JUDGE_OPTS += ["--judge", "replay:" + os.path.join(G, "judge_cache.jsonl")]
MODELS = ["m1", "m2", "m3", "ref"]


def _models(models):
    return [w for m in models for w in ("--model", m)]


def _rows(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh, delimiter="\t"))


def _write_tsv(path, rows):
    buf = io.StringIO()
    csv.writer(buf, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def test_the_tsv_rewritten_row_by_row_is_the_same_file(tmp_path):
    """The shard writer below reproduces the reference's quoting exactly (so a shard is a true part)."""
    copy = tmp_path / "copy.tsv"
    _write_tsv(copy, _rows(RECORD))
    with open(RECORD, "rb") as fh:
        assert copy.read_bytes() == fh.read()


@pytest.mark.parametrize(
    "opts,splits",
    [(SCORES[0], (1, 2, 7)), (SCORES[1], (1, 2)), (SCORES[1] + ["--refm", "ref"], (7,))],
    ids=["refm", "inferred-refm-variants", "variants-7"],
)
def test_shards_of_the_record_merge_to_one_pass(opts, splits, tmp_path):
    """Without --refm each shard must name the reference model alone (7 shards: give --refm)."""
    whole = run_cli(["pairwise", "score", "--record", RECORD] + opts + ["--format", "json"])
    assert whole.code == 0, whole.err
    header, *rows = _rows(RECORD)
    for n in splits:
        states = []
        for k, shard in enumerate(shards(rows, n)):
            part = tmp_path / f"part{n}-{k}.tsv"
            _write_tsv(part, [header] + shard)
            state = tmp_path / f"state{n}-{k}.json"
            r = run_cli(["pairwise", "score", "--record", str(part)] + opts + ["--emit-partial", str(state)])
            assert r.code == 0, r.err
            states.append(str(state))
        merged = run_cli(["merge"] + states + ["--format", "json"])
        assert (merged.code, merged.out) == (whole.code, whole.out), f"{n} shards: {merged.err}"


def test_judge_jobs_give_the_same_bytes_and_use_the_pool(engines, tmp_path):
    outs = {}
    for jobs in ("1", "2", "4"):
        rec, items = tmp_path / f"{jobs}.records.jsonl", tmp_path / f"{jobs}.items.jsonl"
        argv = JUDGE + _models(MODELS) + JUDGE_OPTS + ["--records", str(rec), "--per-item", str(items)]
        r = run_cli(argv + ["--jobs", jobs, "--format", "json"])
        assert r.code == 0, r.err
        outs[jobs] = (r.out, rec.read_bytes(), items.read_bytes())
        if jobs != "1":
            assert engines[-1].name == "processes" and engines[-1].chunks_run > 0
    assert outs["1"] == outs["2"] == outs["4"]
    expected = json.load(open(os.path.join(G, "expected_score_result.json"), encoding="utf-8"))
    assert json.loads(outs["2"][0])["result"] == expected


def test_judge_shards_by_model_merge_to_one_pass(tmp_path):
    whole = run_cli(JUDGE + _models(MODELS) + JUDGE_OPTS + ["--records", str(tmp_path / "w.jsonl")])
    assert whole.code == 0, whole.err
    for groups in ([MODELS], [["m1"], ["m2", "m3"], ["ref"]], [[m] for m in MODELS]):
        states = []
        for k, group in enumerate(groups):
            state = tmp_path / f"s{len(groups)}-{k}.json"
            argv = JUDGE + _models(group) + JUDGE_OPTS + ["--records", str(tmp_path / f"r{k}.jsonl")]
            r = run_cli(argv + ["--emit-partial", str(state)])
            assert r.code == 0, r.err
            states.append(str(state))
        merged = run_cli(["merge"] + states)
        assert merged.code == 0, merged.err
        got, want = json.loads(merged.out), json.loads(whole.out)
        assert got["result"] == want["result"] and got["signature"] == want["signature"], groups


def _big_record(tmp_path, n=300):
    """Six hundred judged rows (three engine chunks): both orders of n comparisons with two models."""
    rows = [list(pairwise.RECORD_COLUMNS) + ["judge"]]
    for i in range(n):
        model = "m1" if i % 2 else "m2"
        for a, b in (("ref", model), (model, "ref")):
            choice = "AB"[(i * 7 + (a == "ref")) % 2] if i % 11 else "C"
            judge = "" if i % 37 == 3 else f"Choice: {choice}\nReason: {i}"
            rows.append(
                [f"q{i}-general;{a};{b}", "question", "x" * (i % 13), "y" * (i % 7), a, b, "", "", "t-general", judge]
            )
    path = tmp_path / "record_big_2.tsv"
    _write_tsv(path, rows)
    return path, rows


def test_jobs_on_many_rows_and_the_same_error(engines, tmp_path):
    path, rows = _big_record(tmp_path)
    outs = {}
    for jobs in ("1", "3"):
        items = tmp_path / f"{jobs}.jsonl"
        r = run_cli(
            ["pairwise", "score", "--record", str(path), "--nopt", "2", "--per-item", str(items), "--jobs", jobs]
        )
        assert r.code == 0, r.err
        outs[jobs] = (r.out, items.read_bytes())
    assert engines[-1].chunks_run >= 3
    assert outs["1"] == outs["3"]
    rows[400][0] = "no-separators"
    _write_tsv(path, rows)
    errs = [run_cli(["pairwise", "score", "--record", str(path), "--nopt", "2", "--jobs", j]) for j in ("1", "3")]
    assert errs[0].code == errs[1].code == 2 and errs[0].err == errs[1].err
    assert "cmp_index=no-separators" in errs[0].err


def test_token_lengths_in_worker_processes(engines):
    need("bpe_openai", "tokens", "pip install 'rageval-min[tokens]'")
    d = os.path.join(DATA, "pairwise", "output")
    run = sorted(os.listdir(d))[0]
    record = next(os.path.join(d, run, f) for f in os.listdir(os.path.join(d, run)) if f.startswith("record_"))
    argv = ["pairwise", "score", "--record", record, "--nopt", "2", "--refm", "gpt-3.5-turbo-1106"]
    argv += ["--lengths", "tokens"]
    one, two = run_cli(argv), run_cli(argv + ["--jobs", "2"])
    assert one.code == 0, one.err
    assert engines[-1].chunks_run > 0 and (two.code, two.out) == (one.code, one.out)


def test_token_length_pickles_without_its_tokenizer():
    import pickle

    length = pairwise.TokenLength()
    length._fn = len  # as if loaded
    copy = pickle.loads(pickle.dumps(length))
    assert copy._fn is None


# --------------------------------------------------------------------------- Dask


@pytest.fixture(scope="module")
def cluster():
    distributed = need("distributed", "dask", "pip install 'rageval-min[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.mark.parametrize("opts", SCORES, ids=["refm", "inferred-refm-variants"])
def test_dask_engine_gives_the_same_bytes(opts, cluster, tmp_path):
    argv = ["pairwise", "score", "--record", RECORD] + opts
    one = run_cli(argv + ["--per-item", str(tmp_path / "1.jsonl")])
    dask = run_cli(
        argv + ["--per-item", str(tmp_path / "d.jsonl"), "--engine", "dask", "--scheduler", cluster.scheduler_address]
    )
    assert (dask.code, dask.out) == (one.code, one.out), dask.err
    assert (tmp_path / "d.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()


def test_dask_engine_for_the_judge(cluster, tmp_path):
    argv = JUDGE + _models(MODELS) + JUDGE_OPTS + ["--records", str(tmp_path / "r.jsonl")]
    one = run_cli(argv)
    dask = run_cli(argv + ["--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert (dask.code, dask.out) == (one.code, one.out), dask.err


@pytest.mark.parametrize("option", ["--per-item", "--emit-partial", "--output"])
def test_judge_refuses_a_missing_output_folder_before_judging(option, tmp_path):
    records = tmp_path / "r.jsonl"
    missing = str(tmp_path / "nope" / "x.json")
    r = run_cli(JUDGE + _models(["m1"]) + JUDGE_OPTS + ["--records", str(records), option, missing])
    assert r.code == 2 and "does not exist" in r.err and not records.exists()
