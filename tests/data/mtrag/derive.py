"""Rebuild the derived test files in this folder from the project's conformance data.

Usage: python tests/data/mtrag/derive.py /path/to/shared/conformance/mtrag

Not run by the tests.  Trims fields the tests do not read and gzips (mtime 0, so the
output is byte-stable) to keep the repository small.  Values are copied unchanged.
"""

import gzip
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_gz(name, lines):
    path = os.path.join(HERE, name)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            for line in lines:
                gz.write(line.encode("utf-8") + b"\n")


def main(src):
    for name in ("golden/edge_cases.jsonl", "golden/responses10_algorithmic.jsonl"):
        shutil.copyfile(os.path.join(src, name), os.path.join(HERE, os.path.basename(name)))
    shutil.copyfile(
        os.path.join(src, "upstream/scripts_evaluation_sample_data_responses-10.jsonl"),
        os.path.join(HERE, "responses-10.jsonl"),
    )
    # 477-row human-evaluation subset: drop passages and the conversation.
    with open(os.path.join(src, "flat/subset_flat.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    write_gz(
        "subset_flat.trimmed.jsonl.gz",
        (json.dumps({k: v for k, v in r.items() if k not in ("passages", "input")}) for r in rows),
    )
    # 400 InspectorRAGet rows: unchanged fields, gzipped.
    with open(os.path.join(src, "flat/inspectorraget_flat.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    write_gz("inspectorraget_flat.jsonl.gz", (json.dumps(r) for r in rows))
    # Analytics file for Table 6: keep only what summarize reads.
    name = "upstream/mtrag-human_evaluations_reference_subset_with_human_evaluations.json"
    with open(os.path.join(src, name), encoding="utf-8") as f:
        data = json.load(f)
    keep = ("RougeL", "Bert-Rec", "Bert-KPrec", "conditional_idk", "rb_agg", "rb_llm", "rl_f")
    trimmed = {
        "name": data["name"],
        "models": data["models"],
        "metrics": [m for m in data["metrics"] if m["name"] in keep],
        "tasks": [{"task_id": t["task_id"], "Answerability": t["Answerability"]} for t in data["tasks"]],
        "evaluations": [
            {
                "task_id": e["task_id"],
                "model_id": e["model_id"],
                "annotations": {k: v for k, v in e["annotations"].items() if k in keep},
            }
            for e in data["evaluations"]
        ],
    }
    with open(os.path.join(HERE, "human_eval_subset.analytics.json"), "w", encoding="utf-8") as f:
        json.dump(trimmed, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
