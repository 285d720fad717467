"""Benchmark: the optional C speedups (issue #27), on and off, against rouge-score-rs and the JSON floor.

Not a test.  Run from the project root after building the extension in place
(``python setup.py build_ext --inplace``)::

    python bench/bench_speedups.py                 # the three targets (a few minutes)
    python bench/bench_speedups.py --rounds 15     # more interleaved rounds of the whole-process runs
    python bench/bench_speedups.py --old DIR       # also DIR/rageval_min (e.g. the commit before), with DIR's own build
    python bench/bench_speedups.py --instructions  # targets 1 and 3 in instructions (valgrind, ~2 minutes)
    python bench/bench_speedups.py --only rouge    # one target: rouge (1), rougeL (2) or mtrag (3)

Three measurements, each side by side in one run, with the speedups (the default) and
without them (``RAGEVAL_MIN_PURE=1`` in a child process; in this process the loader's
decision is swapped for the pure path):

1. ``python -m rageval_min rouge --input PAIRS.jsonl --rouge-types rouge1,rouge2,rougeL,rougeLsum``
   as a whole process on 1,000 generated pairs of 150-300 words (``bench_rouge.py
   --all-types``'s pairs and its rouge-score-rs script).  The engines take turns, the order
   flipping every round; each round gives one ratio to rouge-score-rs, in wall time and in
   CPU time of the child (user + system, from ``getrusage``).  Target: median at most 0.5x.
2. rougeL per pair in this process at 100, 200 and 300 words (``bench_rouge.best_times``:
   the best pass of several, the scorers taking turns).  Target: below 1x rouge-score-rs at
   every length.
3. ``mtrag.algorithmic_file`` in CPU seconds of this process against the JSON floor
   (``json.loads`` + ``json.dumps`` + ``write`` of every line), on ``bench_mtrag_speed.py``'s
   generated records, interleaved: each run right after the floor on the same file, each
   repeat one ratio.  Target: at most 2x the floor (median).  Also the same records
   written another way (``ensure_ascii=False``, compact separators: the lines are then not in
   ``json.dumps`` form), against the floor on that file.

``--instructions`` counts the machine instructions of each whole process of target 1 under
``valgrind --tool=callgrind`` instead, and of target 3 per record (500 records, the floor, with
and without the speedups): counts do not depend on the load of the machine.  They
are a proxy for time, not time (Python's start-up, which reads and maps many files, costs
more time per instruction than the Rust scorer's loops).

Every run checks that the outputs are identical: the whole-process outputs byte for byte
(with each other and with rouge-score-rs's), the in-process scores, and the MT-RAG output
files.  The machine may be shared: the medians and ratios of interleaved runs are what to
read, not single times.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench_mtrag_speed  # noqa: E402
import bench_rouge  # noqa: E402

from rageval_min import _speedups_loader, mtrag, rouge  # noqa: E402

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
TARGET_WHOLE, TARGET_ROUGEL, TARGET_MTRAG = 0.5, 1.0, 2.0


def _child(cmd: List[str], out_path: str, env: Dict[str, str], cwd: str) -> Tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=out, check=True, cwd=cwd, env=env)
        wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


Run = Tuple[List[str], Dict[str, str], str]


def _runs(tmp: str, n_pairs: int, seed: int, old: Optional[str]) -> Dict[str, Run]:
    """The whole-process commands of target 1 on a file of generated pairs written to ``tmp``."""
    pairs = bench_rouge.make_mixed_pairs(n_pairs, 150, 300, seed)
    base = dict(os.environ)
    base.pop("RAGEVAL_MIN_PURE", None)
    base.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up as installed: with cached bytecode
    types = ",".join(TYPES)
    data = os.path.join(tmp, "pairs.jsonl")
    with open(data, "w", encoding="utf-8") as fh:
        for i, (t, p) in enumerate(pairs):
            fh.write(json.dumps({"id": i, "prediction": p, "reference": t}) + "\n")
    script = os.path.join(tmp, "rs_score.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(bench_rouge.RS_SCRIPT)
    ours = [sys.executable, "-m", "rageval_min", "rouge", "--input", data, "--rouge-types", types]
    runs = {
        "rs-rs": ([sys.executable, script, data, types], base, ROOT),
        "speedups": (ours, base, ROOT),
        "pure": (ours, dict(base, RAGEVAL_MIN_PURE="1"), ROOT),
    }
    if old:
        runs["old"] = (ours, dict(base, PYTHONPATH=os.path.abspath(old)), os.path.abspath(old))
    return runs


def instructions(n_pairs: int, seed: int) -> int:
    """Target 1 in instructions: each whole process once under callgrind, outputs compared."""
    import re

    counts: Dict[str, int] = {}
    outs: Dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (cmd, env, cwd) in _runs(tmp, n_pairs, seed, None).items():
            _child(cmd, os.path.join(tmp, "warm.out"), env, cwd)  # bytecode caches
            vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.devnull] + cmd
            proc = subprocess.run(vg, capture_output=True, cwd=cwd, env=env, check=True)
            counts[name] = int(re.findall(r"Collected : (\d+)", proc.stderr.decode())[-1])
            outs[name] = proc.stdout
    print(f"\n## 1. in instructions (callgrind), {n_pairs} pairs of 150-300 words, whole process")
    for name in ("speedups", "pure"):
        same = "identical to rouge-score-rs" if outs[name] == outs["rs-rs"] else "DIFFERENT"
        print(f"{name:>9}: {counts[name]:,} instructions, {counts[name] / counts['rs-rs']:.2f}x rs-rs  {same}")
    print(f"{'rs-rs':>9}: {counts['rs-rs']:,} instructions")
    return 0


# The child of mtrag_instructions: a warm-up pass over one record (imports, caches), then the
# measured pass (argv: "floor" | "speedups" | "pure" | "none", the records, the output folder).
_MTRAG_CHILD = """
import os, sys
sys.path[:0] = [ROOT, os.path.join(ROOT, "bench")]
import bench_mtrag_speed
from rageval_min import mtrag
mode, path, tmp = sys.argv[1:4]
one = os.path.join(tmp, "one.jsonl")
mtrag.algorithmic_file(one, os.path.join(tmp, "warm.jsonl"))
bench_mtrag_speed._floor(one, os.path.join(tmp, "warm2.jsonl"))
if mode == "floor":
    bench_mtrag_speed._floor(path, os.path.join(tmp, "floor.jsonl"))
elif mode != "none":
    mtrag.algorithmic_file(path, os.path.join(tmp, mode + ".jsonl"))
"""


def mtrag_instructions(n_records: int) -> Dict[str, float]:
    """Target 3 in instructions per record: each pass once under callgrind, minus the same
    process without the pass (``PYTHONHASHSEED=0``: the counts repeat exactly)."""
    import re

    counts: Dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.jsonl")
        bench_mtrag_speed.generate(path, n_records)
        with open(path, encoding="utf-8") as fh, open(os.path.join(tmp, "one.jsonl"), "w", encoding="utf-8") as one:
            one.write(fh.readline())
        script = os.path.join(tmp, "child.py")
        with open(script, "w", encoding="utf-8") as fh:
            fh.write(f"ROOT = {ROOT!r}\n" + _MTRAG_CHILD)
        env = dict(os.environ, PYTHONHASHSEED="0")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for mode in ("none", "none", "floor", "speedups", "pure"):  # the first run writes bytecode caches
            child_env = dict(env, RAGEVAL_MIN_PURE="1") if mode == "pure" else env
            vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.devnull, sys.executable, script]
            proc = subprocess.run(vg + [mode, path, tmp], capture_output=True, env=child_env, check=True)
            counts[mode] = int(re.findall(r"Collected : (\d+)", proc.stderr.decode())[-1])
        with open(os.path.join(tmp, "speedups.jsonl"), "rb") as a, open(os.path.join(tmp, "pure.jsonl"), "rb") as b:
            same = a.read() == b.read()
    per = {mode: (counts[mode] - counts["none"]) / n_records for mode in ("floor", "speedups", "pure")}
    print(f"\n## 3. in instructions (callgrind), mtrag algorithmic, {n_records} records, per record")
    print(f"    floor: {per['floor'] / 1e6:.3f} M")
    for mode in ("speedups", "pure"):
        print(f"{mode:>9}: {per[mode] / 1e6:.3f} M, {per[mode] / per['floor']:.2f}x the floor")
    print(f"outputs identical with and without the speedups: {same}")
    return per


def whole_process(n_pairs: int, rounds: int, seed: int, old: Optional[str]) -> Dict[str, Dict[str, List[float]]]:
    """Target 1: ``{engine: {"wall": [ratio per round], "cpu": [...], "wall_s": [...]}}``."""
    types = ",".join(TYPES)
    with tempfile.TemporaryDirectory() as tmp:
        runs = _runs(tmp, n_pairs, seed, old)
        outs = {name: os.path.join(tmp, name + ".out") for name in runs}
        for name, (cmd, env, cwd) in runs.items():  # warm-up: bytecode caches, page cache
            _child(cmd, outs[name], env, cwd)
        wall: Dict[str, List[float]] = {name: [] for name in runs}
        cpu: Dict[str, List[float]] = {name: [] for name in runs}
        names = list(runs)
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                cmd, env, cwd = runs[name]
                w, c = _child(cmd, outs[name], env, cwd)
                wall[name].append(w)
                cpu[name].append(c)
        same = {}
        with open(outs["rs-rs"], "rb") as fh:
            want = fh.read()
        for name in names[1:]:
            with open(outs[name], "rb") as fh:
                same[name] = fh.read() == want
    print(f"\n## 1. rouge {types}, whole process: {n_pairs} pairs of 150-300 words, {rounds} interleaved rounds")
    print(
        f"{'engine':>9} {'wall s':>7} {'CPU s':>7} {'wall / rs-rs':>13} {'(min-max)':>12} {'CPU / rs-rs':>12}  output"
    )
    print(f"{'rs-rs':>9} {statistics.median(wall['rs-rs']):7.3f} {statistics.median(cpu['rs-rs']):7.3f}")
    result: Dict[str, Dict[str, List[float]]] = {}
    for name in names[1:]:
        rw = [a / b for a, b in zip(wall[name], wall["rs-rs"])]
        rc = [a / b for a, b in zip(cpu[name], cpu["rs-rs"])]
        result[name] = {"wall": rw, "cpu": rc, "wall_s": wall[name]}
        print(
            f"{name:>9} {statistics.median(wall[name]):7.3f} {statistics.median(cpu[name]):7.3f} "
            f"{statistics.median(rw):12.2f}x {min(rw):5.2f}-{max(rw):.2f}x {statistics.median(rc):11.2f}x  "
            f"{'identical to rouge-score-rs' if same[name] else 'DIFFERENT'}"
        )
    return result


def rouge_l_in_process(n_pairs: int, passes: int, seed: int) -> Dict[str, List[float]]:
    """Target 2: ``{"speedups": [time / rs-rs per length], "pure": [...]}``."""
    from rouge_score_rs import rouge_scorer  # type: ignore

    rs = rouge_scorer.RougeScorer(["rougeL"]).score
    fast = _speedups_loader.kernels()

    def with_kernels(mod: Any) -> Any:
        def run(t: str, p: str) -> object:
            _speedups_loader._kernels = mod
            return rouge.score(t, p, rouge_types=["rougeL"])

        return run

    print(f"\n## 2. rougeL per pair, in process ({n_pairs} pairs per length, best of {passes} passes)")
    print(f"{'words':>6} {'speedups us':>12} {'pure us':>8} {'rs-rs us':>9} {'speedups/rs-rs':>15} {'pure/rs-rs':>11}")
    out: Dict[str, List[float]] = {"speedups": [], "pure": []}
    try:
        for length in (100, 200, 300):
            pairs = bench_rouge.make_pairs(n_pairs, length, seed)
            for t, p in pairs[:50]:
                a, b, c = with_kernels(fast)(t, p)["rougeL"], with_kernels(None)(t, p)["rougeL"], rs(t, p)["rougeL"]
                assert tuple(a) == tuple(b) == tuple(c), (t, p)
            times = bench_rouge.best_times(
                {"speedups": with_kernels(fast), "pure": with_kernels(None), "rs": rs}, pairs, passes
            )
            for k in out:
                out[k].append(times[k] / times["rs"])
            print(
                f"{length:6d} {times['speedups'] * 1e6:12.1f} {times['pure'] * 1e6:8.1f} {times['rs'] * 1e6:9.1f} "
                f"{out['speedups'][-1]:14.2f}x {out['pure'][-1]:10.2f}x"
            )
    finally:
        _speedups_loader._kernels = fast
    return out


def mtrag_floor(n_records: int, repeats: int) -> Dict[str, List[float]]:
    """Target 3: ``{"speedups": [algorithmic / floor per repeat], "pure": [...]}``, CPU time."""
    fast = _speedups_loader.kernels()
    out: Dict[str, List[float]] = {"speedups": [], "pure": [], "other": []}
    cpu: Dict[str, List[float]] = {"speedups": [], "pure": [], "other": []}
    floors: Dict[str, List[float]] = {"speedups": [], "pure": [], "other": []}  # measured just before each run
    with tempfile.TemporaryDirectory() as tmp:
        path, other = os.path.join(tmp, "records.jsonl"), os.path.join(tmp, "other.jsonl")
        bench_mtrag_speed.generate(path, n_records)
        with open(path, encoding="utf-8") as fh, open(other, "w", encoding="utf-8") as w:
            for line in fh:  # the same records written another way: no ASCII escapes, compact
                w.write(json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")) + "\n")
        runs = [("speedups", fast, path), ("pure", None, path), ("other", fast, other)]
        try:
            for r in range(repeats):
                for name, mod, records in runs if r % 2 == 0 else runs[::-1]:
                    # the floor on the same file right before the run: the ratio of two neighbours
                    # in time, which a shared machine's drifting speed affects least
                    floors[name].append(bench_mtrag_speed._floor(records, os.path.join(tmp, "floor.jsonl")))
                    _speedups_loader._kernels = mod
                    t0 = time.process_time()
                    mtrag.algorithmic_file(records, os.path.join(tmp, name + ".out.jsonl"))
                    cpu[name].append(time.process_time() - t0)
        finally:
            _speedups_loader._kernels = fast
        outputs = []
        for name in ("speedups", "pure", "other"):
            with open(os.path.join(tmp, name + ".out.jsonl"), "rb") as fh:
                outputs.append(fh.read())
    floor = statistics.median(floors["speedups"])
    print(f"\n## 3. mtrag algorithmic, one core, CPU time: {n_records} records, {repeats} interleaved repeats")
    print(f"JSON floor: {floor * 1e6 / n_records:.0f} us/record")
    for name in ("speedups", "pure", "other"):
        out[name] = [a / f for a, f in zip(cpu[name], floors[name])]
        med = statistics.median(cpu[name])
        label = "speedups, lines written another way (ensure_ascii=False, compact)" if name == "other" else name
        print(
            f"{label:>9}: {med * 1e6 / n_records:.0f} us/record, {statistics.median(out[name]):.2f}x the floor "
            f"(median of the per-repeat ratios; {min(out[name]):.2f}-{max(out[name]):.2f}x)"
        )
    same = len(set(outputs)) == 1
    print(f"outputs identical with and without the speedups, whichever way the lines were written: {same}")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=1000, help="pairs of the whole-process runs (default 1000)")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds of the whole-process runs (default 9)")
    ap.add_argument("--passes", type=int, default=9, help="passes of the in-process rougeL timing (default 9)")
    ap.add_argument("--records", type=int, default=2000, help="MT-RAG records (default 2000)")
    ap.add_argument("--repeats", type=int, default=9, help="interleaved repeats of the MT-RAG timing (default 9)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--old", metavar="DIR", help="also time DIR/rageval_min as a whole process (with DIR's in-place build, if any)"
    )
    ap.add_argument("--instructions", action="store_true", help="target 1 in instruction counts (valgrind)")
    ap.add_argument(
        "--only", choices=("rouge", "rougeL", "mtrag"), help="run one target: 1 (rouge), 2 (rougeL) or 3 (mtrag)"
    )
    args = ap.parse_args(argv)
    fast = _speedups_loader.kernels()
    if fast is None:
        print("the C speedups are not built (python setup.py build_ext --inplace) or RAGEVAL_MIN_PURE=1 is set")
        return 2
    print(f"# bench_speedups  python {platform.python_version()}  {platform.machine()}  {os.cpu_count()} CPUs")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.instructions:
        instructions(args.pairs, args.seed)
        mtrag_instructions(500)
        return 0
    if args.only == "rouge":
        whole_process(args.pairs, args.rounds, args.seed, args.old)
        return 0
    if args.only == "rougeL":
        rouge_l_in_process(200, args.passes, args.seed)
        return 0
    if args.only == "mtrag":
        mtrag_floor(args.records, args.repeats)
        return 0
    whole = whole_process(args.pairs, args.rounds, args.seed, args.old)
    rl = rouge_l_in_process(200, args.passes, args.seed)
    mt = mtrag_floor(args.records, args.repeats)
    w = statistics.median(whole["speedups"]["wall"])
    wc = statistics.median(whole["speedups"]["cpu"])
    m = statistics.median(mt["speedups"])  # the median of the per-repeat ratios
    print(f"\n## issue 27 targets, with the speedups (load average after: {os.getloadavg()[0]:.2f})")
    rows = [
        ("rouge 1+2+L+Lsum, whole process, vs rs-rs (wall)", w <= TARGET_WHOLE, f"{w:.2f}x (CPU {wc:.2f}x)", "0.5x"),
        (
            "rougeL per pair at 100/200/300 words, vs rs-rs",
            max(rl["speedups"]) < TARGET_ROUGEL,
            " / ".join(f"{x:.2f}x" for x in rl["speedups"]),
            "< 1x",
        ),
        ("mtrag algorithmic, one core, vs the JSON floor", m <= TARGET_MTRAG, f"{m:.2f}x", "2x"),
    ]
    for name, ok, value, need in rows:
        print(f"{'MET' if ok else 'NOT MET':8} {name}: {value} (need {need})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
