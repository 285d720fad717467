"""``rageval-min compare`` on large per-item files: wall time, CPU time and peak RSS (not a unit test).

Generates a baseline and a candidate per-item file of ``--n`` paired rows in
the shape ``ir score --per-item`` writes (binary ``in_run`` / ``all_negative``,
integer counts, continuous ``AP``, ``RR``, ``P@10``, ``R@100``, ``nDCG@10``;
the provenance field of the default options, so the aggregates
``aggregate.NAME`` are compared too) or ``grounding --per-item`` (binary
outcomes and rates with a numerator and a denominator), then times the whole
process ``rageval-min compare --baseline B --candidate C`` with the default
settings, each size in its own subprocess: wall time, the child's CPU time
(user + system) and its peak RSS (that child's ``rusage``, from ``os.wait4``).

    python bench/bench_compare.py                          # ir and grounding shapes at 1k, 10k, 100k rows
    python bench/bench_compare.py --sizes 100000 --shape ir --rounds 3
    python bench/bench_compare.py --sizes 1000,5000 --interval bootstrap   # the bootstrap for the curve

``--interval`` passes ``--interval`` to compare (default: not passed, i.e.
``auto``).  Each run's stdout is checked to be a compare report of ``n``
paired rows; ``--keep DIR`` keeps the generated files.

``--accuracy`` (needs numpy) measures instead how far the large-n intervals are
from the bootstrap they replace, on seeded data, at the switch and above: the
largest endpoint difference between the t interval (``_stats.t_interval``) and
a 10,000-resample percentile bootstrap, in units of the t interval's
half-width, for a skewed continuous difference and a 0/1 metric; the same for
the delta-method interval of a ratio (correct / answered), at 5k, 20k and 50k
pairs; and the coverage of both at the switch (5k) over 1,000 seeded
replications (the true value known).

    python bench/bench_compare.py --accuracy
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _writer(family: str, command: str) -> str:
    from rageval_min._contract import accumulator_class, params_digest

    return f"{family} {command} {params_digest(accumulator_class(family, command)().params)}"


def _ir_row(qid: str, rng: random.Random, shift: float, writer: str) -> dict:
    rel = rng.randrange(1, 12)
    ret = 100
    relret = min(rel, max(0, int(rel * min(1.0, rng.random() + shift))))
    first = rng.randrange(1, 30) if relret else None
    ap = min(1.0, max(0.0, rng.betavariate(2, 3) + shift)) if relret else 0.0
    rr = 1.0 / first if first else 0.0
    p10 = round(min(1.0, relret / 10 * rng.random() * 2), 1)
    return {
        "qid": qid,
        "in_run": 1 if rng.random() > 0.01 else 0,
        "NumRet": ret,
        "NumRel": rel,
        "NumRelRet": relret,
        "first_rel_rank": first,
        "judged_pos": rel,
        "all_negative": 0,
        "runid": "bench",
        "AP": ap,
        "RR": rr,
        "P@10": p10,
        "R@100": relret / rel,
        "nDCG@10": min(1.0, max(0.0, ap + rng.gauss(0.05, 0.05))),
        "_rageval_min": writer,
    }


def _grounding_row(qid: str, rng: random.Random, shift: float, writer: str) -> dict:
    answerable = 1 if rng.random() < 0.8 else 0
    answered = 1 if rng.random() < (0.9 if answerable else 0.2) else 0
    correct = 1 if answerable and answered and rng.random() < 0.6 + shift else 0
    hit = 1 if answered and (correct or rng.random() < 0.3) else 0
    return {
        "qid": qid,
        "answerable": answerable,
        "unanswerable": 1 - answerable,
        "answered": answered,
        "refused": 1 - answered,
        "correct": correct,
        "citation_hit": hit,
        "under_refusal": 1 if answered and not answerable else 0,
        "over_refusal": 1 if answerable and not answered else 0,
        "recall@k": (1 if rng.random() < 0.7 + shift else 0) if answerable else None,
        "_rageval_min": writer,
    }


SHAPES = {"ir": (_ir_row, ("ir", "score")), "grounding": (_grounding_row, ("grounding", "score"))}


def generate(directory: str, shape: str, n: int, seed: int = 0) -> tuple:
    """Baseline and candidate files of ``n`` rows; the candidate is a slightly shifted run."""
    make, (family, command) = SHAPES[shape]
    writer = _writer(family, command)
    paths = []
    for side, shift in (("base", 0.0), ("cand", 0.01)):
        rng = random.Random(seed)  # the same items on both sides, then a per-side perturbation
        noise = random.Random(seed + 1 + int(shift * 100))
        path = os.path.join(directory, f"{shape}_{n}_{side}.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(n):
                state = rng.random()
                row_rng = random.Random(state if noise.random() < 0.7 else noise.random())
                fh.write(json.dumps(make(f"q{i:07d}", row_rng, shift, writer)) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def run_compare(base: str, cand: str, extra: list) -> tuple:
    """One whole-process compare: (wall s, CPU s, peak RSS MB, exit code, stdout) of that child alone.

    ``os.wait4`` gives the child's own resource usage (``getrusage(RUSAGE_CHILDREN)`` would give
    the largest child so far)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    argv = [sys.executable, "-m", "rageval_min", "compare", "--baseline", base, "--candidate", cand] + extra
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8"), err.read().decode("utf-8")
    if code not in (0, 1):
        raise SystemExit(f"compare exited {code}: {stderr.strip()[:500]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, stdout


def _np_bootstrap(np, arrays, stat, resamples, rng):
    n = len(arrays[0])
    out = []
    for start in range(0, resamples, 100):
        idx = rng.integers(0, n, size=(min(100, resamples - start), n))
        out.append(stat(*[a[idx] for a in arrays]))
    return np.percentile(np.concatenate(out), [2.5, 97.5])


def _ratio_sample(np, rng, n, p_b, p_c):
    answered = (rng.random(n) < 0.85).astype(float)
    shared = rng.random(n)
    yb = answered * (shared < p_b)
    yc = answered * (np.where(rng.random(n) < 0.8, shared, rng.random(n)) < p_c)
    return answered, yb, yc


def accuracy(sizes: list) -> None:
    """Endpoint gaps to the bootstrap and coverage of the t and delta-method intervals (seeded)."""
    import numpy as np

    from rageval_min import _stats
    from rageval_min.compare.columns import Columns
    from rageval_min.compare.large_n import delta_method_interval

    rng = np.random.default_rng(27)
    print("endpoint gap to a 10,000-resample percentile bootstrap, in t half-widths (seeded data)")
    for n in sizes:
        cont = rng.gamma(0.5, 0.2, n) - rng.gamma(0.5, 0.19, n)  # skewed differences
        binary = (rng.random(n) < 0.08).astype(float) - (rng.random(n) < 0.06).astype(float)
        gaps = []
        for d in (cont, binary):
            lo, hi = _stats.t_interval(d.tolist(), alpha=0.05)
            blo, bhi = _np_bootstrap(np, [d], lambda x: x.mean(1), 10_000, rng)
            gaps.append(max(abs(lo - blo), abs(hi - bhi)) / ((hi - lo) / 2))
        x, yb, yc = _ratio_sample(np, rng, n, 0.60, 0.62)
        lo, hi = _ratio_interval(Columns, delta_method_interval, x, yb, yc)
        blo, bhi = _np_bootstrap(np, [x, yb, yc], lambda a, b, c: (c.sum(1) - b.sum(1)) / a.sum(1), 10_000, rng)
        gaps.append(max(abs(lo - blo), abs(hi - bhi)) / ((hi - lo) / 2))
        print(f"  n={n:6d}  mean diff, continuous {gaps[0]:.3f}  mean diff, 0/1 {gaps[1]:.3f}  ratio {gaps[2]:.3f}")
    reps = 1000
    print(f"coverage of the 95% intervals over {reps} seeded replications")
    for n in sizes[:1]:
        hit_t = hit_r = 0
        true_mean = 0.5 * 0.2 - 0.5 * 0.19
        for _ in range(reps):
            d = rng.gamma(0.5, 0.2, n) - rng.gamma(0.5, 0.19, n)
            lo, hi = _stats.t_interval(d.tolist(), alpha=0.05)
            hit_t += lo <= true_mean <= hi
            x, yb, yc = _ratio_sample(np, rng, n, 0.60, 0.62)
            lo, hi = _ratio_interval(Columns, delta_method_interval, x, yb, yc)
            hit_r += lo <= 0.02 <= hi
        print(f"  n={n:6d}  t interval {hit_t / reps:.3f}  delta method {hit_r / reps:.3f}")


def _ratio_interval(Columns, delta_method_interval, x, yb, yc) -> tuple:
    sides = []
    for y in (yb, yc):
        cols = Columns()
        for i, (xi, yi) in enumerate(zip(x.tolist(), y.tolist())):
            cols.append(i, {"answered": xi, "correct": yi}, i + 1)
        sides.append((cols, range(len(x)), float(y.sum() / x.sum())))
    got = delta_method_interval((sides[0], sides[1]), ("correct", "answered"), alpha=0.05)
    assert got is not None
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--shape", choices=["ir", "grounding", "both"], default="both")
    ap.add_argument("--rounds", type=int, default=1, help="runs per size (each line printed)")
    ap.add_argument("--interval", help="passed to compare --interval (default: not passed)")
    ap.add_argument("--keep", metavar="DIR", help="write the generated files here and keep them")
    ap.add_argument("--accuracy", action="store_true", help="the accuracy of the large-n intervals (numpy)")
    args = ap.parse_args()
    if args.accuracy:
        accuracy([5_000, 20_000, 50_000])
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = ["ir", "grounding"] if args.shape == "both" else [args.shape]
    extra = ["--interval", args.interval] if args.interval else []
    tmp = None if args.keep else tempfile.TemporaryDirectory()
    directory = args.keep or tmp.name  # type: ignore[union-attr]
    os.makedirs(directory, exist_ok=True)
    print(f"python {sys.version.split()[0]}, compare {' '.join(extra) or '(default settings)'}")
    for shape in shapes:
        for n in sorted(sizes):
            base, cand = generate(directory, shape, n)
            for _ in range(args.rounds):
                wall, cpu, peak, code, out = run_compare(base, cand, extra)
                report = json.loads(out)
                assert report["result"]["paired"] == n, report["result"]["paired"]
                metrics = report["result"]["metrics"]
                sig = report["signature"].split("|")
                how = [p for p in sig if p.startswith("interval=")] or ["interval=bootstrap"]
                print(
                    f"{shape:9s} n={n:7d}  exit {code}  wall {wall:7.2f} s  cpu {cpu:7.2f} s  "
                    f"peak RSS {peak:4.0f} MB  {len(metrics)} metrics  {how[0]}",
                    flush=True,
                )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
