"""Factuality kernels: wall time of the stdlib emulations (not a unit test).

Times the numpy-pairwise mean/std emulation, Spearman/Pearson with p-values,
the bootstrap CI and the f1k command on generated data (also with ``--jobs 4``).

    python bench/bench_factuality.py --n 100000
"""

import argparse
import io
import json
import os
import random
import sys
import tempfile
import time
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rageval_min import factuality as F  # noqa: E402
from rageval_min.cli import main  # noqa: E402


def timed(label: str, func) -> None:
    start = time.perf_counter()
    func()
    print(f"{label:45s} {time.perf_counter() - start:8.3f} s")


def run(n: int, boot: int) -> None:
    rng = random.Random(0)
    values = [rng.random() for _ in range(n)]
    ints = [rng.randint(0, 200) for _ in range(n)]
    ys = [v + rng.random() for v in ints]
    timed(f"np_mean + np_std, n={n}", lambda: (F.np_mean(values), F.np_std(values)))
    timed(f"spearman (+p), n={n}", lambda: F.spearman(ints, ys))
    timed(f"pearson (+p), n={n}", lambda: F.pearson(ints, ys))
    small = values[:1000]
    timed(f"bootstrap CI, n=1000, B={boot}", lambda: F.bootstrap_mean_ci(small, n_resamples=boot))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "counts.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(n):
                fh.write(json.dumps({"supported": ints[i], "not_supported": i % 7}) + "\n")
        out = io.StringIO()
        timed(
            f"factuality f1k CLI (JSONL: no bootstrap), {n} lines",
            lambda: main(["factuality", "f1k", "--input", path, "--bootstrap", "200"], stdout=out, stderr=out),
        )
        timed(
            f"factuality f1k CLI (JSON report), {n} lines, B=200",
            lambda: main(
                ["factuality", "f1k", "--input", path, "--bootstrap", "200", "--format", "json"], stdout=out, stderr=out
            ),
        )
        # --jobs: the same bytes; per-line F1@K is cheap, so the pool mostly shows its overhead here
        texts = {}
        for jobs in ("1", "4"):
            buf = io.StringIO()
            timed(
                f"factuality f1k CLI (JSONL), {n} lines, --jobs {jobs}",
                lambda: main(["factuality", "f1k", "--input", path, "--jobs", jobs], stdout=buf, stderr=buf),
            )
            texts[jobs] = buf.getvalue()
        print(f"{'--jobs 1 and --jobs 4 give the same bytes':45s} {texts['1'] == texts['4']}")
        tracemalloc.start()
        F.f1k_file(path, bootstrap=0, on_item=lambda row: None)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        label = f"f1k_file peak memory, {n} lines"
        print(f"{label:45s} {peak / 2**20:8.1f} MiB (state: three float arrays, no lines)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--boot", type=int, default=1000)
    args = parser.parse_args()
    run(args.n, args.boot)
