"""RGB on a large synthetic prediction file: time and peak memory (not a unit test).

Generates --n prediction records (en or zh, mixed hits, misses, rejections and
factual-error flags) and --n dataset instances, then runs ``rgb score`` (also
with ``--per-item``), ``rgb label`` and ``rgb mix`` through the CLI, each in its
own subprocess, printing wall time, records per second and the peak RSS of that
subprocess (``score --jobs N`` too, checking its bytes against one process);
then checks that the item rows, accumulated in 8 parts and merged through JSON
states, give the one-pass report (``rgb.score_file``).
Scoring and labelling stream the file, so peak memory should not grow with --n
(only the diagnostics of skipped records are kept).

    python bench/bench_rgb.py --n 200000 --dataset zh_fact
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PREDICTIONS = [
    "The answer is Varenholm, as the documents say. " * 3,
    "I can not answer the question because of the insufficient information in documents.",
    "There are factual errors in the provided documents. The correct answer is 1932.",
    "答案是 白鹭 队，文档中有说明。",
    "文档信息不足，因此我无法基于提供的文档回答该问题。",
]


def generate(directory: str, n: int, dataset: str) -> tuple:
    pred = os.path.join(directory, f"prediction_{dataset}_bench_temp0.2_noise0.4_passage5_correct0.0.json")
    data = os.path.join(directory, "data.jsonl")
    with open(pred, "w", encoding="utf-8") as fh:
        for i in range(n):
            ans = ["Varenholm", ["1932", "一九三二"]] if i % 2 else "白鹭队"
            fh.write(
                json.dumps(
                    {
                        "id": i,
                        "query": f"question {i}",
                        "ans": ans,
                        "prediction": _PREDICTIONS[i % len(_PREDICTIONS)],
                        "noise_rate": 0.4,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    with open(data, "w", encoding="utf-8") as fh:
        for i in range(n):
            rec = {
                "id": i,
                "query": f"question {i}",
                "answer": "a",
                "positive": [f"positive passage {j} of {i}" for j in range(6)],
                "positive_wrong": [f"counterfactual passage {j} of {i}" for j in range(6)],
                "negative": [f"negative passage {j} of {i}" for j in range(8)],
            }
            fh.write(json.dumps(rec) + "\n")
    return pred, data


def _run(argv: list, n: int, label: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rageval_min"] + argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak = f"{peak_kb / 1024:.0f} MB" if peak_kb > before else f"<= {before / 1024:.0f} MB"
    print(f"{label:6s} exit {proc.returncode}  wall {wall:6.2f} s  {n / wall:9.0f} records/s  peak RSS {peak}")
    if proc.returncode not in (0, 1):
        print("stderr:", proc.stderr.strip()[:500])
    return proc.stdout


def _merge_check(pred: str, items: str) -> None:
    """The --per-item rows, accumulated in 8 parts merged through JSON states, give the one-pass report."""
    sys.path.insert(0, ROOT)
    from rageval_min import rgb
    from rageval_min._contract import accumulator_from_state

    with open(items, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    t0 = time.perf_counter()
    one = rgb.score_file(pred)
    ds, nr = rgb.resolve_dataset(pred), rgb.resolve_noise_rate(pred)
    size = max(1, -(-len(rows) // 8))
    merged = None
    for start in range(0, len(rows), size):
        acc = rgb.ScoreAccumulator(dataset=ds, noise_rate=nr)
        for row in rows[start : start + size]:
            acc.add(row)
        acc = accumulator_from_state(json.loads(json.dumps(acc.to_state())))
        merged = acc if merged is None else merged.merge(acc)
    same = merged is not None and merged.finalize().result == one.result
    print(
        f"merge  8 parts through JSON states: {'identical' if same else 'DIFFERENT'} ({time.perf_counter() - t0:.2f} s)"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--dataset", default="zh_fact")
    ap.add_argument("--jobs", default="2,4", help="also time rgb score --jobs N for these N (comma-separated)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        pred, data = generate(d, args.n, args.dataset)
        size = os.path.getsize(pred) / 2**20
        print(f"{args.n} records, dataset {args.dataset}, prediction file {size:.0f} MB")
        _run(["rgb", "score", "--input", pred, "--format", "rgb"], args.n, "score")
        items = os.path.join(d, "items.jsonl")
        one = _run(["rgb", "score", "--input", pred, "--format", "rgb", "--per-item", items], args.n, "items")
        _merge_check(pred, items)
        for jobs in [j for j in args.jobs.split(",") if j]:
            again = os.path.join(d, f"items{jobs}.jsonl")
            out = _run(
                ["rgb", "score", "--input", pred, "--format", "rgb", "--per-item", again, "--jobs", jobs],
                args.n,
                f"jobs {jobs}",
            )
            with open(items, "rb") as a, open(again, "rb") as b:
                same = out == one and a.read() == b.read()
            print(f"       --jobs {jobs}: report and item rows {'identical' if same else 'DIFFERENT'} to one process")
        _run(["rgb", "label", "--input", pred, "--output", os.path.join(d, "labelled.jsonl")], args.n, "label")
        _run(
            [
                "rgb",
                "mix",
                "--input",
                data,
                "--dataset",
                args.dataset,
                "--noise-rate",
                "0.4",
                "--correct-rate",
                "0.2",
                "--passage-num",
                "5",
                "--output",
                os.path.join(d, "mixed.jsonl"),
            ],
            args.n,
            "mix",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
