"""Grounding on a large trace file: time and peak memory (not a unit test).

Generates a gold file of --gold-n records and a trace file of about --size-mb
megabytes (mostly traces whose qid is not in gold, plus one bad line at the end
when --bad-tail is given), scores them through the CLI in a subprocess and
prints wall time, exit code, stderr and peak RSS.  The trace file is streamed
and only traces for gold qids are kept, so peak memory should not grow with
--size-mb.

    python bench/bench_grounding_large.py --size-mb 1024
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


def generate(directory: str, gold_n: int, size_mb: int, bad_tail: bool) -> tuple:
    gold = os.path.join(directory, "gold.jsonl")
    trace = os.path.join(directory, "trace.jsonl")
    with open(gold, "w", encoding="utf-8") as fh:
        for i in range(gold_n):
            fh.write(
                json.dumps(
                    {
                        "qid": f"q{i}",
                        "answerable": i % 4 != 0,
                        "gold_claim_substr": ["alpha beta"],
                        "gold_citations": [f"d{i}"],
                    }
                )
                + "\n"
            )
    target = size_mb * 1024 * 1024
    pad = "lorem ipsum " * 40
    written = 0
    i = 0
    with open(trace, "w", encoding="utf-8") as fh:
        while written < target:
            qid = f"q{i}" if i < gold_n else f"x{i}"
            line = (
                json.dumps(
                    {
                        "qid": qid,
                        "retrieved_ids": [f"d{i}", "z"],
                        "answer_json": {"claim": f"alpha beta {pad}", "citations": [f"d{i}"]},
                    }
                )
                + "\n"
            )
            fh.write(line)
            written += len(line)
            i += 1
        if bad_tail:
            fh.write('{"qid": "broken"\n')
    return gold, trace, i


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--gold-n", type=int, default=10000)
    ap.add_argument("--bad-tail", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        gold, trace, n = generate(d, args.gold_n, args.size_mb, args.bad_tail)
        env = dict(os.environ, PYTHONPATH=ROOT)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "rageval_min", "grounding", "--gold", gold, "--trace", trace, "--format", "text"],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"trace: {args.size_mb} MB, {n} lines; gold: {args.gold_n} records")
    print(
        f"exit code {proc.returncode}, wall {wall:.1f} s, {args.size_mb / wall:.0f} MB/s, "
        f"peak RSS {peak_kb / 1024:.0f} MB"
    )
    if proc.stderr:
        print("stderr:", proc.stderr.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
