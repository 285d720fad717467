"""Peak memory and throughput of ``rageval-min mtrag algorithmic`` (or ``condition``) on generated records.

Shows that the algorithmic step streams: peak memory stays flat while the number of
records grows 100x.  ``--step condition`` shows the same for IDK conditioning, which reads
its input twice (the first pass gathers the column types that decide int versus float,
the second writes) and holds no record in memory.  Each size runs in a fresh child process, which reports

* ``tracemalloc`` peak of Python allocations during the run (``--tracemalloc``, slower), and
* ``ru_maxrss`` (peak resident set size of the whole process, interpreter included).

Usage::

    python bench/bench_mtrag_stream.py                       # 1k, 10k, 100k records
    python bench/bench_mtrag_stream.py --sizes 1000,100000 --tracemalloc
    python bench/bench_mtrag_stream.py --step condition

Records are synthetic (seeded ``random``): a prediction and a target of 20-60 words, two
passages of 60-120 words, and for every other record BertscoreR / BertKPrec values in
``metrics`` so that RB_agg is computed as well.  Results also go to
``bench/results/mtrag_stream.json`` (ignored by git).
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

_WORDS = (
    "the a of and to in is was for on that with as by at from it an be this are which or "
    "season team game play cardinals arizona stadium week football league court appeal law "
    "library research argument brief record decision judge justice party notice transcript "
    "forecast average weather method seasonal index data series change pattern year month "
    "market stock price fund bond interest rate tax income account bank loan credit card "
    "2017 32 14 3.5 U.S. don't well-known e-mail café naïve résumé"
).split()


def _text(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def generate(path: str, n: int, seed: int = 2025, step: str = "algorithmic") -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            if step == "condition":
                judged = {
                    "task_id": f"bench::{i}",
                    "answerability": [rng.choice(["ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED"])],
                    "metrics": {
                        "RB_agg": [rng.choice([0, rng.random()])],
                        "RB_llm": [rng.randint(1, 10) / 10],
                        "RL_F": [rng.choice([None, rng.random()])],
                        "idk_eval": [rng.choice([0, 0.5, 1, "unknown"])],
                        "underspecified_eval": [rng.choice([0, 0.5, 1])],
                    },
                }
                fh.write(json.dumps(judged) + "\n")
                continue
            rec = {
                "task_id": f"bench::{i}",
                "answerability": [rng.choice(["ANSWERABLE", "PARTIAL", "UNANSWERABLE"])],
                "contexts": [{"document_id": f"d{i}-{k}", "text": _text(rng, 60, 120)} for k in range(2)],
                "targets": [{"speaker": "agent", "text": _text(rng, 20, 60)}],
                "predictions": [{"text": _text(rng, 20, 60)}],
            }
            if i % 2:
                rec["metrics"] = {
                    "BertscoreR": [round(rng.uniform(-0.2, 0.9), 6)],
                    "BertKPrec": [round(rng.uniform(-0.2, 0.9), 6), None],
                }
            fh.write(json.dumps(rec) + "\n")


def child(input_path: str, output_path: str, use_tracemalloc: bool, step: str) -> None:
    import resource

    sys.path.insert(0, ROOT)
    from rageval_min.mtrag import algorithmic_file, condition_file

    if use_tracemalloc:
        import tracemalloc

        tracemalloc.start()
    t0 = time.perf_counter()
    run = condition_file if step == "condition" else algorithmic_file
    report = run(input_path, output_path)
    seconds = time.perf_counter() - t0
    peak = None
    if use_tracemalloc:
        import tracemalloc

        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "records": report.result["records"],
                "seconds": seconds,
                "tracemalloc_peak_bytes": peak,
                "maxrss_kib": rss_kb,
                "RB_agg_mean": report.result["means"].get(
                    "RB_agg", report.result["means"].get("RB_agg_idk_underspecified")
                ),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--tracemalloc", action="store_true", help="also measure the tracemalloc peak (slower)")
    ap.add_argument("--step", choices=("algorithmic", "condition"), default="algorithmic", help="the step to run")
    ap.add_argument("--child", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.tracemalloc, args.step)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-mtrag-") as tmp:
        for n in sizes:
            src, dst = os.path.join(tmp, f"in{n}.jsonl"), os.path.join(tmp, f"out{n}.jsonl")
            generate(src, n, step=args.step)
            cmd = [sys.executable, __file__, "--child", src, dst, "--step", args.step]
            cmd += ["--tracemalloc"] if args.tracemalloc else []
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            row = json.loads(proc.stdout)
            row["input_mib"] = os.path.getsize(src) / 2**20
            row["output_mib"] = os.path.getsize(dst) / 2**20
            rows.append(row)
            os.remove(src)
            os.remove(dst)
            peak = row["tracemalloc_peak_bytes"]
            print(
                f"{n:>8} records  {row['seconds']:8.2f} s  {n / row['seconds']:8.0f} rec/s  "
                f"input {row['input_mib']:7.1f} MiB  maxrss {row['maxrss_kib'] / 1024:6.1f} MiB"
                + (f"  tracemalloc peak {peak / 2**20:6.2f} MiB" if peak is not None else ""),
                flush=True,
            )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(
            f"records x{last['records'] / first['records']:.0f}: maxrss x{last['maxrss_kib'] / first['maxrss_kib']:.2f}"
            + (
                f", tracemalloc peak x{last['tracemalloc_peak_bytes'] / first['tracemalloc_peak_bytes']:.2f}"
                if first["tracemalloc_peak_bytes"]
                else ""
            )
        )
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    name = "mtrag_stream.json" if args.step == "algorithmic" else "mtrag_stream_condition.json"
    with open(os.path.join(ROOT, "bench", "results", name), "w", encoding="utf-8") as fh:
        json.dump({"python": sys.version.split()[0], "step": args.step, "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
