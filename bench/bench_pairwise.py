"""pairwise scoring speed on a synthetic judge record (not a unit test).

Builds a dual-mode record of --indexes question indexes x --models models
against one refm (2 rows per pair, random A/B/C/D verdicts in the reference
format, a few unparseable ones), then times ``pairwise.score`` in-process.

    python bench/bench_pairwise.py --indexes 2000 --models 20
"""

import argparse
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rageval_min import pairwise  # noqa: E402


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
    args = ap.parse_args()
    recs = make_records(args.indexes, args.models)
    t0 = time.perf_counter()
    res = pairwise.score(recs, nopt=4, refm="ref", extras=list(pairwise.EXTRAS))
    dt = time.perf_counter() - t0
    c = res.result["counts"]
    print(
        f"{len(recs)} rows, {args.models} models: {dt:.2f} s "
        f"({len(recs) / dt:,.0f} rows/s); consistent {c['consistent']}/{c['extracted']}"
    )


if __name__ == "__main__":
    main()
