"""mtrag.retrieval against pytrec_eval driven the way IBM mt-rag-benchmark's run_retrieval_eval.py drives it."""

import argparse
import csv
import io
import json
import os
import random

import pytest
from conftest import DATA, need

from rageval_min._cli_common import CliIO
from rageval_min.errors import ScoringError
from rageval_min.mtrag.retrieval import COLLECTION_DIRS, register_retrieval, retrieval_file, run_retrieval

QRELS = {c: os.path.join(DATA, "ir", "mtrag", f"{d}.tsv") for c, d in COLLECTION_DIRS.items()}
QARGS = [f"{c}={p}" for c, p in QRELS.items()]


def _tsv(path):
    rows = list(csv.reader(open(path, encoding="utf-8", newline=""), delimiter="\t"))[1:]
    out = {}
    for q, d, g in rows:
        out.setdefault(q, {})[d] = int(g)
    return out


def predictions(seed):
    rng = random.Random(seed)
    lines = []
    for collection, path in QRELS.items():
        qrels = _tsv(path)
        corpus = sorted({d for docs in qrels.values() for d in docs})
        for task in sorted(qrels):
            docs = rng.sample(corpus, min(len(corpus), rng.randint(0, 8)))
            scores = [rng.choice([1.0, 2.0, 3, round(rng.uniform(0, 30), 4)]) for _ in docs]
            ctx = [{"document_id": d, "score": s, "text": "..."} for d, s in zip(docs, scores)]
            if rng.random() < 0.1:
                ctx.append({"document_id": task, "score": 99.0})  # dropped: ignore_identical_ids
            if ctx and rng.random() < 0.1:
                ctx.append({"document_id": ctx[0]["document_id"], "score": 0.5})  # the last score wins
            lines.append({"task_id": task, "Collection": collection, "contexts": ctx})
        lines.append({"task_id": f"unjudged-{collection}", "Collection": collection, "contexts": []})
    lines.append(dict(lines[0], contexts=[]))  # a task repeated: the last line wins
    rng.shuffle(lines)
    return lines


def reference_way(lines, pytrec_eval):
    results, collections = {}, {}
    for item in lines:
        results[item["task_id"]] = {c["document_id"]: c["score"] for c in item.get("contexts", [])}
        collections[item["task_id"]] = item["Collection"]
    table, per_task = [], {}
    for name in sorted(set(collections.values())):
        qrels = _tsv(QRELS[name])
        preds = {q: results[q] for q, c in collections.items() if c == name}
        for q, rels in preds.items():
            for pid in list(rels):
                if q == pid:
                    rels.pop(pid)
        scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1,3,5", "recall.1,3,5"}).evaluate(preds)
        per_task.update(scores)
        entry = {"nDCG": [], "Recall": []}
        for k in (1, 3, 5):
            nd = rc = 0.0
            for q in scores:
                nd += scores[q][f"ndcg_cut_{k}"]
                rc += scores[q][f"recall_{k}"]
            entry["nDCG"].append(round(nd / len(scores), 5))
            entry["Recall"].append(round(rc / len(scores), 5))
        table.append({**entry, "collection": name, "count": len(preds)})
    total = sum(e["count"] for e in table)
    weighted = {
        key: [sum(e[key][i] * e["count"] for e in table) / total for i in range(3)] for key in ("nDCG", "Recall")
    }
    return {"collections": table, "all": {**weighted, "collection": "all", "count": total}}, per_task


@pytest.mark.parametrize("seed", range(6))
def test_matches_the_reference_driven_by_pytrec_eval(seed, tmp_path):
    pytrec_eval = need("pytrec_eval", "ir")
    lines = predictions(seed)
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    rows = []
    report = retrieval_file(str(path), qrels=QARGS, on_item=rows.append)
    expected, per_task = reference_way(lines, pytrec_eval)
    assert report.result == expected
    for row in rows:
        if row["judged"]:
            want = per_task[row["task_id"]]
            assert [row[f"nDCG@{k}"] for k in (1, 3, 5)] == [want[f"ndcg_cut_{k}"] for k in (1, 3, 5)]
            assert [row[f"R@{k}"] for k in (1, 3, 5)] == [want[f"recall_{k}"] for k in (1, 3, 5)]
        else:
            assert row["task_id"].startswith("unjudged-")
    assert "ref=IBM/mt-rag-benchmark@cc5b1d4" in report.signature


def test_handler_and_errors(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"task_id": "t", "Collection": "nope", "contexts": []}) + "\n", encoding="utf-8")
    with pytest.raises(ScoringError, match="has no qrels"):
        retrieval_file(str(path), qrels=QARGS)
    path.write_text("".join(json.dumps(x) + "\n" for x in predictions(0)), encoding="utf-8")
    parser = argparse.ArgumentParser()
    register_retrieval(parser.add_subparsers(dest="cmd"))
    qdir = tmp_path / "tasks"
    for collection, folder in COLLECTION_DIRS.items():
        (qdir / folder / "qrels").mkdir(parents=True)
        (qdir / folder / "qrels" / "dev.tsv").write_text(open(QRELS[collection]).read(), encoding="utf-8")
    args = parser.parse_args(["retrieval", "--input", str(path), "--qrels-dir", str(qdir), "--gate", "R@5>=0"])
    out, err = io.StringIO(), io.StringIO()
    assert run_retrieval(args, CliIO(out, err)) == 0, err.getvalue()
    assert json.loads(out.getvalue())["result"] == retrieval_file(str(path), qrels=QARGS).result
