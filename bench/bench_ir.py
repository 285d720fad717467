"""``rageval-min ir`` against pytrec_eval and ranx on one synthetic run (whole processes; not a unit test).

Writes a TREC run of ``--topics`` x ``--docs`` lines (default 10,000 x 1,000 = 10 M lines, sorted by
topic, scores with many ties) and qrels with ``--judged`` graded judgments per topic, then runs,
each in a fresh process, ``--repeat`` times, alternating:

* ``rageval-min ir --run RUN --qrels QRELS`` (default measures nDCG@10, AP, RR, R@100, P@10);
* a Python script that reads the same two files into dicts and calls ``pytrec_eval`` with the same
  measures, then averages them (what BEIR-style code does);
* a script that loads them with ``ranx`` (``Qrels.from_file``/``Run.from_file``) and calls
  ``ranx.evaluate`` (numba JIT compilation included: it is part of a run).

It prints the median wall time and the peak resident set size (``ru_maxrss`` of the child) of each,
and the ratios against pytrec_eval measured in this run.  The ir numbers are also checked against
pytrec_eval's (they must be equal).

    python bench/bench_ir.py                       # the full 10 M-line run
    python bench/bench_ir.py --topics 1000 --repeat 1
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PYTREC = r"""
import json, sys, pytrec_eval
run, qrels = {}, {}
with open(sys.argv[1]) as fh:
    for line in fh:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
with open(sys.argv[2]) as fh:
    for line in fh:
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
names = {"ndcg_cut_10": "nDCG@10", "map": "AP", "recip_rank": "RR", "recall_100": "R@100", "P_10": "P@10"}
per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}).evaluate(run)
out = {}
for key, name in names.items():
    total = 0.0
    for q in sorted(per):
        total += per[q][key]
    out[name] = total / len(per)
print(json.dumps(out))
"""

RANX = r"""
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[2], kind="trec")
run = Run.from_file(sys.argv[1], kind="trec")
print(json.dumps(evaluate(qrels, run, ["ndcg@10", "map", "mrr", "recall@100", "precision@10"])))
"""


def write_inputs(folder: str, topics: int, docs: int, judged: int) -> tuple:
    rng = random.Random(0)
    run, qrels = os.path.join(folder, "run.txt"), os.path.join(folder, "qrels.txt")
    with open(run, "w") as fr, open(qrels, "w") as fq:
        for t in range(topics):
            qid = f"q{t}"
            scores = sorted((round(rng.uniform(0, 50), 1) for _ in range(docs)), reverse=True)
            fr.write("".join(f"{qid} Q0 doc{t % 97}_{i} {i + 1} {s} bench\n" for i, s in enumerate(scores)))
            pool = rng.sample(range(docs * 2), judged)  # half of the judged documents are retrieved
            fq.write("".join(f"{qid} 0 doc{t % 97}_{i} {rng.choice((0, 0, 1, 2, 3))}\n" for i in pool))
    return run, qrels


def run_child(argv: list) -> tuple:
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": ROOT}
    )
    out, err = proc.communicate()
    _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, proc.returncode, None)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {err.decode()[-500:]}")
    return seconds, out.decode()


def peak_rss_mib(argv: list) -> float:
    """Peak RSS of one more run of ``argv`` (ru_maxrss of the waited-for child, KiB on Linux)."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": ROOT}
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=1_000)
    ap.add_argument("--judged", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx (its first run compiles with numba)")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        run, qrels = write_inputs(tmp, args.topics, args.docs, args.judged)
        mib = os.path.getsize(run) / 2**20
        print(f"run: {args.topics} topics x {args.docs} docs = {args.topics * args.docs:,} lines ({mib:.0f} MiB)")
        tools = {
            "rageval-min ir": [py, "-m", "rageval_min", "ir", "--run", run, "--qrels", qrels],
            "pytrec_eval script": [py, "-c", PYTREC, run, qrels],
        }
        if not args.no_ranx:
            tools["ranx script"] = [py, "-c", RANX, run, qrels]
        times = {name: [] for name in tools}
        outputs = {}
        for _ in range(args.repeat):
            for name, argv in tools.items():
                seconds, out = run_child(argv)
                times[name].append(seconds)
                outputs[name] = out
        ours = json.loads(outputs["rageval-min ir"])["result"]["measures"]
        theirs = json.loads(outputs["pytrec_eval script"])
        same = all(ours[k] == theirs[k] for k in theirs)
        base = statistics.median(times["pytrec_eval script"])
        rows = {}
        for name, argv in tools.items():
            med = statistics.median(times[name])
            rows[name] = {
                "median_s": round(med, 2),
                "ratio_vs_pytrec_eval": round(med / base, 2),
                "peak_rss_mib": round(peak_rss_mib(argv), 1),
            }
            print(
                f"{name:20s} median {med:7.2f} s  x{med / base:5.2f} of pytrec_eval  "
                f"peak RSS {rows[name]['peak_rss_mib']:7.1f} MiB"
            )
        print(f"ir means equal pytrec_eval's: {same}")
        print(json.dumps({"lines": args.topics * args.docs, "repeat": args.repeat, "tools": rows, "equal": same}))


if __name__ == "__main__":
    main()
