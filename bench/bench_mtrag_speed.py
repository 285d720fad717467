"""Speed of ``rageval-min mtrag algorithmic`` against the cost of just reading and writing the JSON (issue #16).

Three measurements, all in one run, on records generated here (seeded) to look like
MT-RAG task records: a response and a reference of about 180 ROUGE tokens each, five
passages of 120-300 words (part of the response copied from them, as RAG answers are), a
three-turn conversation with metadata, and the benchmark's enrichment fields.

1. **The JSON floor** and **algorithmic on one core**, in CPU seconds of this process
   (``time.process_time``), interleaved ``--repeats`` times on the same file of
   ``--cpu-records`` records: the floor is ``json.loads`` + ``json.dumps`` + ``write`` of
   every line; ``algorithmic`` is :func:`rageval_min.mtrag.algorithmic_file` (the serial
   engine, what ``--jobs 1`` runs).  The ratio of the medians is the issue's "x the JSON
   floor" (target: at most 3x).
2. **--jobs 1 against --jobs 2**: the wall time of the CLI (``python -m rageval_min mtrag
   algorithmic --input ... --records ... --output ...``) on ``--records`` records (default
   100k), in fresh processes, interleaved (target: ``--jobs 2`` at least 1.7x faster).
3. **Peak memory per process** of those runs: ``VmHWM`` of the main process and of each
   worker, read from ``/proc`` while they run (target: under 100 MB each).

Usage::

    python bench/bench_mtrag_speed.py                      # all three, 100k records for the jobs run
    python bench/bench_mtrag_speed.py --records 20000      # a quicker jobs run
    python bench/bench_mtrag_speed.py --skip-jobs          # only the CPU ratio
    python bench/bench_mtrag_speed.py --old DIR            # also time another checkout's algorithmic_file

``--old DIR`` puts ``DIR`` (a folder holding a ``rageval_min`` package, e.g. from
``git archive <commit> rageval_min | tar -x -C DIR``) first on the path of a child
process and measures its ``algorithmic_file`` on the same records, for before/after
numbers.  The results also go to ``bench/results/mtrag_speed.json`` (ignored by git).
"""

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

_VOCAB = (
    "the of and to in a is was for on that with as by at from it an be this are which or has had "
    "season team game play cardinals arizona stadium week football league court appeal law library "
    "research argument brief record decision judge justice party notice transcript forecast average "
    "weather method seasonal index data series change pattern year month market stock price fund "
    "bond interest rate tax income account bank loan credit card policy insurance claim coverage "
    "premium deductible benefit employee employer contract agreement service customer support "
    "software update version release feature install configure server cloud network security "
    "password user access permission file folder document report table chart value number total "
    "first second third last next previous during after before between within without about over "
    "under also however therefore because although while when where who what how why can could "
    "should would may might must will shall do does did not no yes more most less least many much "
    "2017 2018 2019 2020 32 14 3.5 100 U.S. don't it's well-known e-mail COVID-19 café naïve"
).split()
_WEIGHTS = [1.0 / (i + 1) ** 0.9 for i in range(len(_VOCAB))]


def _words(rng: random.Random, n: int) -> List[str]:
    return rng.choices(_VOCAB, weights=_WEIGHTS, k=n)


def _sentences(words: List[str], rng: random.Random) -> str:
    out, i = [], 0
    while i < len(words):
        k = rng.randint(8, 22)
        chunk = words[i : i + k]
        punct = rng.choice([".", ".", ".", "?", "!"])
        sent = " ".join(chunk)
        if rng.random() < 0.3:
            cut = rng.randint(1, max(1, len(chunk) - 1))
            sent = " ".join(chunk[:cut]) + ", " + " ".join(chunk[cut:])
        out.append(sent[:1].upper() + sent[1:] + punct)
        i += k
    return " ".join(out)


def make_record(rng: random.Random, i: int) -> Dict[str, Any]:
    """One synthetic MT-RAG task record (about 180-token response and reference, 5 passages)."""
    passages_words = [_words(rng, rng.randint(120, 300)) for _ in range(5)]
    response: List[str] = []
    while len(response) < 160:  # ~1/2 copied spans from the passages, the rest free text
        if rng.random() < 0.5:
            src = rng.choice(passages_words)
            start = rng.randrange(0, len(src) - 12)
            response.extend(src[start : start + rng.randint(4, 12)])
        else:
            response.extend(_words(rng, rng.randint(3, 10)))
    reference = list(response)
    for _ in range(60):  # the reference shares most of the response's words, in a perturbed order
        j = rng.randrange(len(reference))
        reference[j] = rng.choice(_VOCAB)
    conv = f"{rng.getrandbits(128):032x}"
    turns = []
    for t in range(3):
        speaker = "user" if t % 2 == 0 else "agent"
        turns.append(
            {
                "speaker": speaker,
                "text": _sentences(_words(rng, rng.randint(8, 40) if speaker == "user" else 60), rng),
                "metadata": {"author_type": "human", "author_id": f"g{t}", "created_at": 1724708469 + t},
            }
        )
    label = rng.choice(["ANSWERABLE", "ANSWERABLE", "PARTIAL", "UNANSWERABLE"])
    return {
        "conversation_id": conv,
        "task_id": f"{conv}::{i % 9 + 1}",
        "task_type": "rag",
        "turn": i % 9 + 1,
        "collection": "mt-rag-clapnq-elser-512-100-20240503",
        "dataset": "MT-RAG Authors (Internal)",
        "contexts": [
            {
                "document_id": f"{rng.getrandbits(32)}_{rng.randint(0, 9999)}-{rng.randint(0, 9999)}-0-1374",
                "source": "",
                "score": round(rng.uniform(10, 30), 4),
                "text": _sentences(words, rng),
                "title": " ".join(_words(rng, 4)).title(),
            }
            for words in passages_words
        ],
        "input": turns,
        "targets": [
            {
                "speaker": "agent",
                "text": _sentences(reference, rng),
                "metadata": {"author_type": "model", "author_id": "mixtral-8x7b-instruct-v01"},
            }
        ],
        "Question Type": [rng.choice(["Factoid", "Summarization", "Explanation"])],
        "answerability": [label],
        "Multi-Turn": ["Follow-up"],
        "predictions": [{"text": _sentences(response, rng)}],
    }


def generate(path: str, n: int, seed: int = 16) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps(make_record(rng, i)) + "\n")


def _floor(path: str, out: str) -> float:
    """CPU seconds of json.loads + json.dumps + write for every line of ``path``."""
    t0 = time.process_time()
    with open(path, encoding="utf-8") as fh, open(out, "w", encoding="utf-8") as w:
        write = w.write
        for line in fh:
            write(json.dumps(json.loads(line)) + "\n")
    return time.process_time() - t0


def _tokens_floor(path: str, out: str) -> float:
    """CPU seconds of the JSON floor plus splitting each text into the tokens its metrics are
    defined on, once, and nothing else: no counting, no LCS, no metric.

    Per record: the reference-tokenizer ROUGE tokens (``rouge.tokenize``: one C-level
    ``bytes.translate`` and ``split``) of the response, of the target and of each passage
    after the extractiveness cleaning, the cleaning itself (response and passages), and the
    SQuAD-normalised words of the response and the target (Recall).  An exact
    implementation on the stdlib has to split every one of these texts into its tokens at
    least once on these records (no passage here is a substring of its response, where
    extractiveness could skip the tokens), and these are the cheapest splits the stdlib
    offers (a few C calls per text), so this ratio to the floor bounds what the stdlib core
    can reach before it computes anything.
    """
    from rageval_min import rouge
    from rageval_min.mtrag import run_algorithmic as mtrag

    tokenize, clean, words = rouge.tokenize, mtrag.clean_for_extractiveness, mtrag._answer_tokens
    t0 = time.process_time()
    with open(path, encoding="utf-8") as fh, open(out, "w", encoding="utf-8") as w:
        write = w.write
        for line in fh:
            record = json.loads(line)
            response = record["predictions"][0]["text"]
            target = record["targets"][0]["text"]
            tokenize(response)
            tokenize(target)
            words(response)
            words(target)
            tokenize(clean(response))
            for ctx in record["contexts"]:
                tokenize(clean(ctx["text"]))
            write(json.dumps(record) + "\n")
    return time.process_time() - t0


def _algorithmic(path: str, out: str, backend: str) -> float:
    from rageval_min import rouge
    from rageval_min.mtrag import run_algorithmic as mtrag

    lcs, label = rouge.lcs_backend(backend)
    t0 = time.process_time()
    mtrag.algorithmic_file(path, out, lcs=lcs, backend=label)
    return time.process_time() - t0


_OLD_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from rageval_min import mtrag
assert mtrag.__file__.startswith(sys.argv[1]), mtrag.__file__
t0 = time.process_time()
mtrag.algorithmic_file(sys.argv[2], sys.argv[3])
print(time.process_time() - t0)
"""


def _old_algorithmic(old: str, path: str, out: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", _OLD_CHILD, os.path.abspath(old), path, out],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(proc.stdout.strip().splitlines()[-1])


def _children(pid: int) -> List[int]:
    out: List[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(p) for p in fh.read().split())
    except OSError:
        pass
    return out


def _hwm_kb(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_s(pid: int) -> Optional[float]:
    """utime + stime of ``pid`` in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def _loadavg() -> str:
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def _cli_run(path: str, jobs: int, tmp: str, backend: str) -> Dict[str, Any]:
    """Wall seconds of the CLI with ``--jobs``, and per process (main, each worker) its peak RSS
    (VmHWM) and CPU seconds, read from /proc while it runs."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-m", "rageval_min", "mtrag", "algorithmic", "--input", path]
    argv += ["--records", os.path.join(tmp, f"out{jobs}.jsonl"), "--output", os.path.join(tmp, f"rep{jobs}.json")]
    argv += ["--jobs", str(jobs), "--backend", backend]
    peaks: Dict[int, int] = {}
    cpu: Dict[int, float] = {}
    t0 = time.perf_counter()
    load = _loadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            todo = [proc.pid]
            while todo:
                pid = todo.pop()
                kb = _hwm_kb(pid)
                if kb is not None:
                    peaks[pid] = max(peaks.get(pid, 0), kb)
                seconds = _cpu_s(pid)
                if seconds is not None:
                    cpu[pid] = max(cpu.get(pid, 0.0), seconds)
                todo.extend(_children(pid))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"--jobs {jobs} failed: {err.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    main_mb = peaks.get(proc.pid, 0) / 1024
    workers = sorted((kb / 1024 for pid, kb in peaks.items() if pid != proc.pid), reverse=True)
    main_cpu = cpu.get(proc.pid, 0.0)
    return {
        "wall_s": wall,
        "cpu_s": total_cpu,
        "main_cpu_s": main_cpu,
        "workers_cpu_s": max(0.0, total_cpu - main_cpu),
        "main_peak_mb": main_mb,
        "worker_peak_mb": workers,
        "loadavg_before": load,
    }


def _fmt_ratio(values: List[float]) -> str:
    return f"{statistics.median(values):.2f}x (min {min(values):.2f}, max {max(values):.2f})"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu-records", type=int, default=2000, help="records of the CPU comparison (default 2000)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved repeats of the CPU comparison (default 5)")
    ap.add_argument("--records", type=int, default=100_000, help="records of the --jobs run (default 100000)")
    ap.add_argument("--job-repeats", type=int, default=2, help="interleaved repeats of the --jobs runs (default 2)")
    ap.add_argument("--skip-jobs", action="store_true", help="only the CPU comparison")
    ap.add_argument("--backend", choices=("stdlib", "rapidfuzz"), default="stdlib")
    ap.add_argument("--old", metavar="DIR", help="also time DIR/rageval_min's algorithmic_file (before/after)")
    args = ap.parse_args(argv)

    results: Dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu": _cpu_name(),
            "cpus": os.cpu_count(),
        },
        "backend": args.backend,
    }
    print(f"python {platform.python_version()} on {platform.platform()}, {_cpu_name()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        small = os.path.join(tmp, "small.jsonl")
        generate(small, args.cpu_records)
        size = os.path.getsize(small)
        print(f"{args.cpu_records} records, {size / args.cpu_records / 1024:.1f} KiB each on average")
        floors, algos, olds, token_floors = [], [], [], []
        for _ in range(args.repeats):
            floors.append(_floor(small, os.path.join(tmp, "floor.jsonl")))
            token_floors.append(_tokens_floor(small, os.path.join(tmp, "tokens.jsonl")))
            algos.append(_algorithmic(small, os.path.join(tmp, "algo.jsonl"), args.backend))
            if args.old:
                olds.append(_old_algorithmic(args.old, small, os.path.join(tmp, "old.jsonl")))
        ratios = [a / f for a, f in zip(algos, floors)]
        n = args.cpu_records
        floor_med, algo_med = statistics.median(floors), statistics.median(algos)
        ratio = algo_med / floor_med
        print(
            f"JSON floor (loads+dumps+write): {n / floor_med:,.0f} records/CPU-s ({floor_med * 1e6 / n:.0f} us/record)"
        )
        print(f"mtrag algorithmic, 1 job:       {n / algo_med:,.0f} records/CPU-s ({algo_med * 1e6 / n:.0f} us/record)")
        print(f"ratio to the floor: {_fmt_ratio(ratios)} (ratio of the medians {ratio:.2f}x)")
        tok_med = statistics.median(token_floors)
        print(
            f"lower bound, floor + tokens:    {n / tok_med:,.0f} records/CPU-s ({tok_med * 1e6 / n:.0f} us/record), "
            f"{_fmt_ratio([t / f for t, f in zip(token_floors, floors)])} the floor: reading, writing and "
            "splitting each text into its metrics' tokens once, nothing else"
        )
        results.update(
            records_cpu=n,
            floor_cpu_s=floors,
            algorithmic_cpu_s=algos,
            ratio_median=ratio,
            ratios=ratios,
            tokens_floor_cpu_s=token_floors,
            tokens_floor_ratio=tok_med / floor_med,
        )
        if olds:
            old_med = statistics.median(olds)
            print(
                f"--old algorithmic_file:        {n / old_med:,.0f} records/CPU-s "
                f"({old_med / floor_med:.2f}x the floor; this checkout is {old_med / algo_med:.2f}x faster)"
            )
            results.update(old_cpu_s=olds, old_ratio=old_med / floor_med)
        targets = [("algorithmic <= 3x the JSON floor (1 core)", ratio <= 3.0, f"{ratio:.2f}x")]

        if not args.skip_jobs:
            big = os.path.join(tmp, "big.jsonl")
            generate(big, args.records, seed=17)
            os.remove(small)
            print(f"--jobs 1 vs --jobs 2 on {args.records:,} records ({os.path.getsize(big) / 2**20:.0f} MiB)")
            runs: Dict[int, List[Dict[str, Any]]] = {1: [], 2: []}
            for _ in range(args.job_repeats):
                for jobs in (1, 2):
                    run = _cli_run(big, jobs, tmp, args.backend)
                    runs[jobs].append(run)
                    workers = ", ".join(f"{mb:.0f}" for mb in run["worker_peak_mb"]) or "none"
                    print(
                        f"  --jobs {jobs}: {run['wall_s']:.1f} s wall, {args.records / run['wall_s']:,.0f} records/s; "
                        f"CPU s main {run['main_cpu_s']:.1f}, workers {run['workers_cpu_s']:.1f}; "
                        f"peak RSS main {run['main_peak_mb']:.0f} MB, workers {workers} MB "
                        f"(load average before: {run['loadavg_before']})"
                    )
            with open(os.path.join(tmp, "out1.jsonl"), "rb") as a, open(os.path.join(tmp, "out2.jsonl"), "rb") as b:
                same = a.read() == b.read()
            w1 = statistics.median(r["wall_s"] for r in runs[1])
            w2 = statistics.median(r["wall_s"] for r in runs[2])
            speedup = w1 / w2
            peak = max(
                [r["main_peak_mb"] for rs in runs.values() for r in rs]
                + [mb for rs in runs.values() for r in rs for mb in r["worker_peak_mb"]]
            )
            c1 = statistics.median(r["cpu_s"] for r in runs[1])
            m2 = statistics.median(r["main_cpu_s"] for r in runs[2])
            c2 = statistics.median(r["cpu_s"] for r in runs[2])
            bound = c1 / max(m2, c2 / 2)
            print(f"--jobs 2 is {speedup:.2f}x faster than --jobs 1 (median wall); records identical: {same}")
            print(
                f"CPU-bound speedup on two otherwise idle cores: {bound:.2f}x "
                f"(--jobs 1 {c1:.1f} CPU s; --jobs 2 {c2:.1f} CPU s of which the main process {m2:.1f})"
            )
            results.update(cpu_bound_speedup=bound)
            print(f"largest peak RSS of any process: {peak:.0f} MB")
            results.update(records_jobs=args.records, jobs_runs=runs, speedup=speedup, peak_mb=peak, same=same)
            targets.append(("--jobs 2 >= 1.7x faster than --jobs 1 (100k records)", speedup >= 1.7, f"{speedup:.2f}x"))
            targets.append(("peak RSS < 100 MB per process", peak < 100, f"{peak:.0f} MB"))
    print()
    for name, ok, value in targets:
        print(f"{'MET' if ok else 'NOT MET':8} {name}: {value}")
    results["targets"] = [{"target": t, "met": ok, "value": v} for t, ok, v in targets]
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "mtrag_speed.json"), "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2)
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
