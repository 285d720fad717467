"""ir: the command -- exit codes, input formats, streaming, shards merged, the gold samples' cross-checks."""

import json
import os

import pytest
from conftest import ROOT, need, run_cli

from rageval_min.ir import score_file

G = os.path.join(ROOT, "gold_samples", "ir")
RUN, QRELS = os.path.join(G, "run.txt"), os.path.join(G, "qrels.txt")
ALL = ["P@5", "R@10", "AP", "AP@5", "nDCG", "nDCG@3", "RR", "Success@2", "Rprec", "Bpref", "NumRel", "NumRet"]


def result(*argv):
    r = run_cli(["ir", *argv])
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_ragas_gold_sample_equals_pytrec_eval():
    pytrec_eval = need("pytrec_eval", "ir")
    recs = [json.loads(line) for line in open(os.path.join(G, "ragas.jsonl"), encoding="utf-8")]
    qrels = {r["id"]: {d: 1 for d in r["reference_context_ids"]} for r in recs}
    run = {
        r["id"]: {d: float(len(r["retrieved_context_ids"]) - i) for i, d in enumerate(r["retrieved_context_ids"], 1)}
        for r in recs
    }
    got = result("--run", os.path.join(G, "ragas.jsonl"), "--measure", "ndcg_cut.3", "--measure", "map")
    per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3", "map"}).evaluate(run)
    for ours, theirs in (("nDCG@3", "ndcg_cut_3"), ("AP", "map")):
        total = 0.0
        for qid in sorted(per):
            total += per[qid][theirs]
        assert got["result"]["measures"][ours] == total / len(per)


@pytest.mark.parametrize(
    "run_text,qrels_text,message",
    [
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n", "q1 0 d1 1\n", "run:2: document 'd1' is retrieved twice"),
        (
            "q1 Q0 d1 1 2.0 r\n",
            "q1 0 d1 1\nq1 0 d1 0\n",
            "qrels:2: document 'd1' is judged twice in topic 'q1' (first on",
        ),
        ("q1 Q0 d1 1 2.0\n", "q1 0 d1 1\n", "run:1: malformed run line"),
        ("q1 Q0 d1 1 nan r\n", "q1 0 d1 1\n", "run:1: score: not a finite number"),
        ("q1 Q0 d1 1 abc r\n", "q1 0 d1 1\n", "run:1: score: not a finite number"),
        ("", "q1 0 d1 1\n", "run: holds no run lines"),
        ("q1 Q0 d1 1 1 r\n", "", "qrels: holds no judgments"),
        ("q1 Q0 d1 1 1 r\n", "q2 0 d1 1\n", "no topic is both in the run and in the qrels"),
        ("q1 Q0 d1 1 1 r\n", "q1 0 d1 x\n", "qrels:1: rel: must be an integer grade"),
    ],
)
def test_bad_inputs_exit_2_in_one_line(tmp_path, run_text, qrels_text, message):
    run = write(tmp_path, "run", run_text)
    qrels = write(tmp_path, "qrels", qrels_text)
    out = tmp_path / "out.json"
    r = run_cli(["ir", "--run", run, "--qrels", qrels, "--output", str(out), "--per-item", str(tmp_path / "i")])
    assert r.code == 2 and r.err.count("\n") == 1 and message in r.err, r.err
    assert not out.exists() and not (tmp_path / "i").exists()


def test_bad_options_exit_2():
    for extra in (["--measure", "ndcg@x"], ["--measure", "MRR"], ["--relevance-level", "-1"], ["--gate", "AP@3>=1"]):
        r = run_cli(["ir", "--run", RUN, "--qrels", QRELS, *extra])
        assert r.code == 2 and r.err.count("\n") == 1, (extra, r.err)


def test_gates_decide_the_exit_code():
    assert run_cli(["ir", "--run", RUN, "--qrels", QRELS, "--gate", "nDCG@10>=0.5"]).code == 0
    r = run_cli(["ir", "--run", RUN, "--qrels", QRELS, "--gate", "AP>=0.9"])
    assert r.code == 1 and "gate AP>=0.9 failed: 0.5083" in r.err


def test_duplicates_first_keeps_the_first(tmp_path):
    dup = write(tmp_path, "run", open(RUN).read().replace("q2 Q0 C 4 1.0", "q2 Q0 B 4 9.0 bm25\nq2 Q0 C 4 1.0"))
    base = result("--run", RUN, "--qrels", QRELS, "--measure", "AP")["result"]
    assert result("--run", dup, "--qrels", QRELS, "--measure", "AP", "--duplicates", "first")["result"] == base


def test_comments_and_hash_docnos_as_trec_eval_10_reads_them(tmp_path):
    text = "# a comment line\n" + open(RUN).read().replace("q2 Q0 C", "   # indented comment\nq2 Q0 C")
    run = write(tmp_path, "run", text)
    assert result("--run", run, "--qrels", QRELS)["result"] == result("--run", RUN, "--qrels", QRELS)["result"]


def test_ungrouped_run_gives_the_same_numbers(tmp_path):
    lines = open(RUN).read().splitlines(True)
    run = write(tmp_path, "run", "".join(lines[::2] + lines[1::2]))
    got = result("--run", run, "--qrels", QRELS, *sum((["--measure", m] for m in ALL), []))
    want = result("--run", RUN, "--qrels", QRELS, *sum((["--measure", m] for m in ALL), []))
    assert got["result"] == want["result"]
    assert any("not grouped by topic" in d for d in got["diagnostics"])


def test_other_formats_equal_the_trec_files(tmp_path):
    tsv = "query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, _, d, g in (line.split() for line in open(QRELS))
    )
    run_json: dict = {}
    for q, _, d, _, s, _ in (line.split() for line in open(RUN)):
        run_json.setdefault(q, {})[d] = float(s)
    qrels_json: dict = {}
    for q, _, d, g in (line.split() for line in open(QRELS)):
        qrels_json.setdefault(q, {})[d] = int(g)
    a = write(tmp_path, "q.tsv", tsv)
    b = write(tmp_path, "r.json", json.dumps(run_json))
    c = write(tmp_path, "q.json", json.dumps(qrels_json))
    measures = sum((["--measure", m] for m in ALL), [])
    want = result("--run", RUN, "--qrels", QRELS, *measures)["result"]["measures"]
    assert result("--run", b, "--qrels", a, *measures)["result"]["measures"] == want
    assert result("--run", b, "--qrels", c, *measures)["result"]["measures"] == want


def test_grounding_trace_and_mtrag_contexts(tmp_path):
    trace = write(
        tmp_path,
        "trace.jsonl",
        '{"qid": "a", "retrieved_ids": ["d3", "d1", "d2"]}\n{"q_id": "b", "retrieved_ids": ["d9"]}\n',
    )
    gold = write(tmp_path, "gold.jsonl", '{"qid": "a", "gold_citations": ["d1"]}\n{"qid": "b", "gold_citations": []}\n')
    got = result("--run", trace, "--qrels", gold, "--measure", "RR", "--measure", "NumRel")["result"]
    assert got["measures"] == {"NumRel": 1, "RR": 0.5} and got["num_q"] == 1  # b judges nothing: ignored
    mt = write(
        tmp_path,
        "mt.jsonl",
        '{"task_id": "a", "contexts": [{"document_id": "d1", "score": 1.0}, {"document_id": "d3", "score": 5.0}]}\n',
    )
    assert result("--run", mt, "--qrels", gold, "--measure", "RR")["result"]["measures"] == {"RR": 0.5}


def test_all_negative_topic_scores_zero_with_a_diagnostic(tmp_path):
    run = write(tmp_path, "run", "q1 Q0 d1 1 1 r\nq2 Q0 d1 1 1 r\n")
    qrels = write(tmp_path, "qrels", "q1 0 d1 -1\nq2 0 d1 1\n")
    got = result("--run", run, "--qrels", qrels, "--measure", "AP", "--measure", "nDCG")
    assert got["result"]["measures"] == {"AP": 0.5, "nDCG": 0.5}
    assert any("only negative" in d and "'q1'" in d for d in got["diagnostics"])


def test_missing_topics_skip_or_zero():
    skip = result("--run", RUN, "--qrels", QRELS, "--measure", "AP")
    zero = result("--run", RUN, "--qrels", QRELS, "--measure", "AP", "--missing", "zero")
    assert (skip["result"]["num_q"], zero["result"]["num_q"]) == (3, 4)
    assert zero["result"]["measures"]["AP"] == skip["result"]["measures"]["AP"] * 3 / 4
    assert any("'q4'" in d for d in skip["diagnostics"]) and any("'q5'" in d for d in skip["diagnostics"])


def test_per_item_rows_hold_the_integer_pieces(tmp_path):
    items = tmp_path / "items.jsonl"
    run_cli(["ir", "--run", RUN, "--qrels", QRELS, "--per-item", str(items)])
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    assert [r["qid"] for r in rows] == ["q1", "q2", "q3"]
    assert rows[0]["NumRel"] == 4 and rows[0]["NumRelRet"] == 3 and rows[0]["first_rel_rank"] == 2


@pytest.mark.parametrize("fmt", ["json", "trec_eval"])
def test_shards_by_topic_merge_to_one_pass(tmp_path, fmt):
    lines = open(RUN).read().splitlines(True)
    topics = [lines[0:6], lines[6:10], lines[10:]]
    whole = run_cli(["ir", "--run", RUN, "--qrels", QRELS, "--format", fmt])
    states = []
    for k, part in enumerate(topics):
        path = write(tmp_path, f"s{k}", "".join(part))
        state = str(tmp_path / f"state{k}.json")
        r = run_cli(["ir", "--run", path, "--qrels", QRELS, "--format", fmt, "--emit-partial", state])
        assert r.code == 0, r.err
        states.append(state)
    merged = run_cli(["merge", *states, "--format", fmt])
    assert merged.code == 0, merged.err
    if fmt == "json":  # the diagnostics name what each shard missed; the numbers are one pass's
        assert json.loads(merged.out)["result"] == json.loads(whole.out)["result"]
    else:
        assert merged.out == whole.out == open(os.path.join(G, "expected_trec_eval.txt")).read()


def test_library_call_matches_the_cli():
    report = score_file(RUN, QRELS)
    assert report.result == result("--run", RUN, "--qrels", QRELS)["result"]


def test_docs_examples_run(monkeypatch):
    """Every command in docs/ir.md runs on the gold samples and exits as its comment says."""
    import re
    import shlex

    monkeypatch.chdir(ROOT)
    text = open(os.path.join(ROOT, "docs", "ir.md"), encoding="utf-8").read()
    commands = [
        line for block in re.findall(r"```sh\n(.*?)```", text, re.S) for line in block.splitlines() if line.strip()
    ]
    assert len(commands) >= 5
    for line in commands:
        command, _, comment = line.partition("  # ")
        words = shlex.split(command)
        assert words[0] == "rageval-min"
        r = run_cli(words[1:])
        assert r.code == (1 if comment.strip() == "exit 1" else 0), (line, r.err)


def test_html_has_the_means_and_the_per_topic_distributions():
    r = run_cli(["ir", "--run", RUN, "--qrels", QRELS, "--format", "html", "--gate", "nDCG@10>=0.45"])
    assert r.code == 0, r.err
    assert r.out.count("<svg") == 1 + 5  # the means, then one distribution per default measure
    assert "nDCG@10 per topic (3 topics)" in r.out and "nDCG@10&gt;=0.45" in r.out
