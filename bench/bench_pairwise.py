"""pairwise scoring speed on a synthetic judge record (not a unit test).

Builds a dual-mode record of --indexes question indexes x --models models
against one refm (2 rows per pair, random A/B/C/D verdicts in the reference
format, a few unparseable ones), then times in-process:

* ``pairwise.score`` (item rows + the accumulator + finalize, one pass);
* the same item rows cut into ``--parts`` consecutive parts, each accumulated,
  its state sent through JSON and merged in order (the ``--jobs``/``merge``
  path); the two reports must be identical;
* ``pairwise.score`` on a pool of ``--jobs`` worker processes (the engine of
  ``pairwise score --jobs N``): same report and item rows.

    python bench/bench_pairwise.py --indexes 2000 --models 20 --parts 8
"""

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rageval_min import pairwise  # noqa: E402
from rageval_min._contract import accumulator_from_state  # noqa: E402
from rageval_min._parallel import make_engine, use_engine  # noqa: E402


def make_records(indexes: int, models: int, seed: int = 1) -> list:
    rng = random.Random(seed)
    designs = ["uml_class", "architecture_design", "UML_sequence"]
    out = []
    for m in range(models):
        model = f"model{m}"
        for i in range(indexes):
            design = designs[i % 3]
            metric = "general" if i % 2 else "faithfulness"
            idx = f"p{i // 6}_{design}-{metric}"
            for a, b in (("ref", model), (model, "ref")):
                letter = rng.choice("ABCD")
                text = f"Choice: {letter}\nReason:\n1. x" if rng.random() > 0.03 else "choice: a"
                out.append(
                    {
                        "cmp_index": f"{idx};{a};{b}",
                        "question": "q",
                        "answer1": "x" * rng.randint(10, 500),
                        "answer2": "y" * rng.randint(10, 500),
                        "A": a,
                        "B": b,
                        "reference_answer": "",
                        "evaluating_guidance": "g",
                        "task": f"{design}-{metric}",
                        "judge": text,
                    }
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--indexes", type=int, default=2000)
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--jobs", default="2,4", help="worker process counts to time (comma-separated)")
    args = ap.parse_args()
    recs = make_records(args.indexes, args.models)
    extras = list(pairwise.EXTRAS)
    t0 = time.perf_counter()
    items = []
    res = pairwise.score(recs, nopt=4, refm="ref", extras=extras, on_item=items.append)
    dt = time.perf_counter() - t0
    c = res.result["counts"]
    print(
        f"{len(recs)} rows, {args.models} models: {dt:.2f} s "
        f"({len(recs) / dt:,.0f} rows/s); consistent {c['consistent']}/{c['extracted']}"
    )
    t0 = time.perf_counter()
    size = -(-len(items) // args.parts)
    merged = None
    for start in range(0, len(items), size):
        acc = pairwise.PairwiseAccumulator(nopt=4, refm="ref", judge_column="judge", extras=extras)
        for item in items[start : start + size]:
            acc.add(item)
        part = accumulator_from_state(json.loads(json.dumps(acc.to_state())))
        merged = part if merged is None else merged.merge(part)
    assert merged is not None
    report = merged.finalize()
    dt = time.perf_counter() - t0
    same = json.dumps(report.result) == json.dumps(res.result)
    print(f"{args.parts} parts through JSON states, merged and finalized: {dt:.2f} s; identical report: {same}")
    if not same:
        raise SystemExit("the merged report differs")
    for jobs in [int(j) for j in args.jobs.split(",") if j]:
        rows: list = []
        t0 = time.perf_counter()
        with use_engine(make_engine(jobs)):
            pooled = pairwise.score(recs, nopt=4, refm="ref", extras=extras, on_item=rows.append)
        dt = time.perf_counter() - t0
        same = json.dumps(pooled.result) == json.dumps(res.result) and rows == items
        print(f"--jobs {jobs}: {dt:.2f} s ({len(recs) / dt:,.0f} rows/s); identical report and item rows: {same}")
        if not same:
            raise SystemExit(f"--jobs {jobs} differs")


if __name__ == "__main__":
    main()
