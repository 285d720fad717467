"""Cold start of a subcommand against ``python -c "import json"`` (issue 16 target: at most 2x).

Usage::

    python bench/bench_startup.py            # 30 interleaved runs of each, median ratio
    python bench/bench_startup.py --runs 60

Both commands run with the same interpreter and flags, the package taken from this checkout
(PYTHONPATH), so an installer's import hooks do not count.  Wall time per process start is
measured with ``time.perf_counter`` around ``subprocess.run``; the two commands alternate, so a
change in the machine's load hits both.  Prints the medians, the spread, the ratio and a verdict.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLD = os.path.join(ROOT, "gold_samples", "grounding")


def _time(argv, env):
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=ROOT)
    floor = [sys.executable, "-c", "import json"]
    commands = {
        "grounding": [
            sys.executable,
            "-m",
            "rageval_min",
            "grounding",
            "--gold",
            os.path.join(GOLD, "gold.jsonl"),
            "--trace",
            os.path.join(GOLD, "trace.jsonl"),
            "--format",
            "wfgy",
        ],
        "--help": [sys.executable, "-m", "rageval_min", "--help"],
    }
    for _ in range(3):  # warm the file cache
        _time(floor, env)
        for argv in commands.values():
            _time(argv, env)
    times = {name: [] for name in ["import json"] + list(commands)}
    for _ in range(args.runs):
        times["import json"].append(_time(floor, env))
        for name, argv in commands.items():
            times[name].append(_time(argv, env))
    base = statistics.median(times["import json"])
    print(f"python {sys.version.split()[0]}, {args.runs} interleaved runs, medians in ms (min-max)")
    for name, ts in times.items():
        print(f"  {name:<12} {1000 * statistics.median(ts):7.1f}  ({1000 * min(ts):.1f}-{1000 * max(ts):.1f})")
    ok = True
    for name in commands:
        ratio = statistics.median(times[name]) / base
        verdict = "MET" if ratio <= 2.0 else "NOT MET"
        ok = ok and ratio <= 2.0
        print(f"  {name} / import json = {ratio:.2f}x  (target <= 2x: {verdict})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
