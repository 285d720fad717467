"""Benchmark: rageval_min ROUGE against rouge-score 0.1.2 and rouge-score-rs.

Not a test.  Run from the project root::

    python bench/bench_rouge.py            # full run (about a minute)
    python bench/bench_rouge.py --quick    # fewer pairs and lengths
    python bench/bench_rouge.py --instructions   # the target in instruction counts (valgrind)
    python bench/bench_rouge.py --all-types      # issue 16: all four types, whole process
    python bench/bench_rouge.py --targets        # issue 16: both targets and the MET / NOT MET table

Texts are generated deterministically from the unigram distribution of the
MT-RAG conformance texts (``tests/data/rouge/mtrag_unigrams.tsv``), with some
punctuation and capitals; a prediction keeps about 60% of its reference's
words in order and replaces or inserts the rest (the measured word overlap of
real MT-RAG prediction/target pairs is about 64%).  Every implementation scores
the same pairs in the same process; each timing is the best of several passes
(the machine may be shared).  Results are printed to stdout; the script also
checks that every implementation returned the same F-measures.

Two rageval_min engines are timed: ``stdlib`` (the core's bit-parallel LCS over
Python integers, what ``pip install rageval-min`` and a vendored folder give)
and ``rapidfuzz`` (the same scores with rougeL's LCS length computed by the
``fast`` extra, ``rouge --backend rapidfuzz``).  The speed target of issue 4
(rougeL >= 100x rouge-score on 100-300-token texts, <= 3x rouge-score-rs) is
printed as a verdict for each.

``--instructions`` measures the speed-target table a second way: each scorer
runs in its own process under ``valgrind --tool=callgrind``, which counts the
machine instructions of one steady pass over the pairs (the difference of a
run with and one without that pass; both runs import, build the pairs and do a
warm-up pass first).  Counts do not depend on what else the machine is doing,
so the verdict is repeatable where wall-clock ratios on a shared machine move
by a third or more from run to run.  They are a proxy for time, not time: an
instruction that waits for memory costs more than one that does not.  It takes
about 8 minutes on 2 cores.

Issue 16 adds two targets, each measured against rouge-score-rs in the same run:

* ``--all-types``: ``python -m rageval_min rouge --input PAIRS.jsonl --rouge-types
  rouge1,rouge2,rougeL,rougeLsum`` as a whole process on 1000 pairs of 150-300 words
  (``--pairs``), against a script doing the same with rouge-score-rs (read the JSONL,
  ``RougeScorer.score`` per record, one JSON line out; :data:`RS_SCRIPT`).  The runs are
  interleaved (the order alternates every round, ``--rounds``, default 7); each round gives one
  ratio, and the median, min and max are printed, with a check that both outputs are
  byte-identical.  Target: median at most 2x.
* rougeL with ``--backend rapidfuzz`` in process at 100-300 words (the speed-target table
  above, ``rapidfuzz/rs-rs`` column).  Target: at most 2x at every length.

``--targets`` runs both and prints the table; the full run prints it at the end.

Missing competitors (``pip install rouge-score rouge-score-rs rapidfuzz``) are
reported and skipped.
"""

import argparse
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rageval_min import rouge  # noqa: E402
from rageval_min.rouge.tokenizers import _tokens  # noqa: E402

Pair = Tuple[str, str]
Scorer = Callable[[str, str], object]


def load_unigrams() -> Tuple[List[str], List[int]]:
    words: List[str] = []
    cum: List[int] = []
    total = 0
    path = os.path.join(ROOT, "tests", "data", "rouge", "mtrag_unigrams.tsv")
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            w, n = line.rstrip("\n").split("\t")
            total += int(n)
            words.append(w)
            cum.append(total)
    return words, cum


def _pair_maker(rng: random.Random) -> Callable[[int], Pair]:
    """A function ``length -> (reference, prediction)`` drawing from ``rng``."""
    words, cum = load_unigrams()

    def draw(k: int) -> List[str]:
        return rng.choices(words, cum_weights=cum, k=k)

    def render(ws: Sequence[str]) -> str:
        out: List[str] = []
        cap = True
        for w in ws:
            if out:
                out.append("\n" if cap else " ")
            out.append(w.capitalize() if cap else w)
            cap = False
            r = rng.random()
            if r < 0.05:
                out.append(".")
                cap = True
            elif r < 0.10:
                out.append(",")
        return "".join(out)

    def pair(length: int) -> Pair:
        ref = draw(length)
        pred: List[str] = []
        for w in ref:
            r = rng.random()
            if r < 0.6:
                pred.append(w)
            elif r < 0.8:
                pred.extend(draw(1))
            elif r < 0.9:
                pred.extend(draw(2))
        return render(ref), render(pred)

    return pair


def make_pairs(n_pairs: int, length: int, seed: int) -> List[Pair]:
    """``n_pairs`` pairs whose reference has ``length`` words."""
    pair = _pair_maker(random.Random(seed * 1000003 + length))
    return [pair(length) for _ in range(n_pairs)]


def make_mixed_pairs(n_pairs: int, low: int, high: int, seed: int) -> List[Pair]:
    """``n_pairs`` pairs whose reference length is drawn uniformly from ``low..high`` words."""
    rng = random.Random(seed * 7919 + low * 31 + high)
    pair = _pair_maker(rng)
    return [pair(rng.randint(low, high)) for _ in range(n_pairs)]


def best_times(
    fns: Dict[str, Scorer], pairs: List[Pair], passes: int, rounds: Optional[Dict[str, int]] = None
) -> Dict[str, float]:
    """Best per-pair time in seconds of each scorer over ``passes`` passes.

    The scorers take turns within every pass, so that a load change on a
    shared machine affects all of them alike.  ``rounds[name]`` (default 1) is
    how many times a scorer goes over ``pairs`` in one timed pass: a fast
    scorer timed once over 40 pairs right after rouge-score's long pass would
    be measured in a 2 ms window with cold caches (about 20% slower than in a
    steady run).
    """
    rounds = rounds or {}
    best = {name: float("inf") for name in fns}
    for _ in range(passes):
        for name, fn in fns.items():
            k = rounds.get(name, 1)
            t0 = time.perf_counter()
            for _ in range(k):
                for t, p in pairs:
                    fn(t, p)
            best[name] = min(best[name], (time.perf_counter() - t0) / k)
    return {name: sec / len(pairs) for name, sec in best.items()}


def _rapidfuzz_lcs() -> Optional[Callable[..., int]]:
    """The ``fast`` extra's LCS function (as ``--backend rapidfuzz`` loads it), or None."""
    from rageval_min.errors import ScoringError
    from rageval_min.rouge import rapidfuzz_lcs

    try:
        return rapidfuzz_lcs()[0]
    except ScoringError as exc:  # reported, and the column is left out
        print(f"# rapidfuzz engine unavailable: {exc}")
        return None


def make_scorer(name: str, types: List[str], stem: bool) -> Optional[Scorer]:
    """One scorer by name, importing only what it needs (None when not installed)."""
    if name == "rageval_min":

        def ours(t: str, p: str) -> object:
            return rouge.score(t, p, rouge_types=types, use_stemmer=stem)

        return ours
    if name == "rageval_min+rapidfuzz":
        fast_lcs = _rapidfuzz_lcs()
        if fast_lcs is None:
            return None

        def ours_fast(t: str, p: str) -> object:
            return rouge.score(t, p, rouge_types=types, use_stemmer=stem, lcs=fast_lcs)

        return ours_fast
    try:
        if name == "rouge-score":
            from rouge_score import rouge_scorer  # type: ignore
        else:
            from rouge_score_rs import rouge_scorer  # type: ignore
    except ImportError:
        return None
    return rouge_scorer.RougeScorer(types, use_stemmer=stem).score  # type: ignore[no-any-return]


def competitors(types: List[str], stem: bool) -> Dict[str, Optional[Scorer]]:
    """Every scorer by name (None when not installed)."""
    names = ("rageval_min", "rageval_min+rapidfuzz", "rouge-score", "rouge-score-rs")
    return {name: make_scorer(name, types, stem) for name in names}


def check_same(scorers: Dict[str, Optional[Scorer]], pairs: List[Pair], types: List[str]) -> str:
    ref = [rouge.score(t, p, rouge_types=types) for t, p in pairs]
    bad = []
    for name, fn in scorers.items():
        if fn is None or name == "rageval_min":
            continue
        for (t, p), mine in zip(pairs, ref):
            other = fn(t, p)
            if any(tuple(other[k]) != tuple(mine[k]) for k in types):  # type: ignore[index]
                bad.append(name)
                break
    return "identical scores" if not bad else "MISMATCH with " + ", ".join(bad)


def fmt_us(sec: Optional[float]) -> str:
    return "-" if sec is None else f"{sec * 1e6:10.1f}"


ENGINES = ("rageval_min", "rageval_min+rapidfuzz")
SHORT = {"rageval_min": "stdlib", "rageval_min+rapidfuzz": "rapidfuzz"}
TARGET_REF, TARGET_RS = 100.0, 3.0  # issue 4: >= 100x rouge-score, <= 3x rouge-score-rs


def run_table(
    title: str,
    types: List[str],
    stem: bool,
    lengths: List[int],
    n_pairs: int,
    passes: int,
    ref_max_len: int,
    seed: int,
    ref_pairs: int = 20,
    ref_passes: int = 2,
    verdict: bool = False,
) -> Dict[str, List[float]]:
    """Print one table; return ``{engine: [time / rouge-score-rs time, per length]}``."""
    scorers = competitors(types, stem)
    engines = [e for e in ENGINES if scorers.get(e) is not None]
    print(f"\n## {title}: types={','.join(types)} stem={stem}")
    head = f"{'words':>6} {'tokens':>7}"
    for e in engines:
        head += f" {SHORT[e] + ' us':>13}"
    head += f" {'rouge-score us':>15} {'rs-rs us':>10} {'ref/rs-rs':>10}"
    for e in engines:
        head += f" {'ref/' + SHORT[e]:>15} {SHORT[e] + '/rs-rs':>16}"
    print(head + "  check")
    rows = []
    for length in lengths:
        pairs = make_pairs(n_pairs, length, seed)
        ntok = sum(len(rouge.tokenize(t)) + len(rouge.tokenize(p)) for t, p in pairs) / (2 * len(pairs))
        fast = {k: v for k, v in scorers.items() if v is not None and k != "rouge-score"}
        times = best_times(fast, pairs, passes)  # type: ignore[arg-type]
        rs_t = times.get("rouge-score-rs")
        ref_fn = scorers["rouge-score"]
        ref_t: Optional[float] = None
        ref_ratio: Dict[str, float] = {}
        sub_t: Dict[str, float] = {}
        if ref_fn is not None and length <= ref_max_len:
            # rouge-score is slow, so it runs on the first ref_pairs pairs only; the engines are
            # timed again on exactly those pairs, in the same passes, for the ratio.
            sub = {e: scorers[e] for e in engines}
            if rs_t is not None:
                sub["rouge-score-rs"] = scorers["rouge-score-rs"]
            sub["rouge-score"] = ref_fn
            fast_rounds = {name: 10 for name in sub if name != "rouge-score"}
            sub_t = best_times(sub, pairs[:ref_pairs], ref_passes, fast_rounds)  # type: ignore[arg-type]
            ref_t = sub_t["rouge-score"]
            ref_ratio = {e: ref_t / sub_t[e] for e in engines}
        check = check_same(scorers, pairs[:20], types)
        line = f"{length:6d} {ntok:7.0f}"
        for e in engines:
            line += f" {fmt_us(times[e]):>13}"
        line += f" {fmt_us(ref_t):>15} {fmt_us(rs_t)}"
        # The compiled reference point: the ratio any engine within 3x of rouge-score-rs can reach.
        rs_sub = sub_t.get("rouge-score-rs") if ref_t else None
        line += f" {ref_t / rs_sub:9.0f}x" if ref_t and rs_sub else f" {'-':>10}"
        for e in engines:
            line += f" {ref_ratio[e]:14.0f}x" if ref_t else f" {'-':>15}"
            line += f" {times[e] / rs_t:15.2f}x" if rs_t else f" {'-':>16}"
        print(line + "  " + check)
        rows.append((length, {e: times[e] for e in engines}, ref_t, rs_t, ref_ratio))
    if len(rows) > 1:
        print("growth relative to the shortest length (x longer text -> x time):")
        l0, t0, f0, s0, _ = rows[0]
        for length, t, f, s, _ in rows[1:]:
            parts = [f"  {length / l0:4.0f}x longer:"]
            parts += [f"{SHORT[e]} {t[e] / t0[e]:5.1f}x" for e in engines]
            if f is not None and f0 is not None:
                parts.append(f"rouge-score {f / f0:6.1f}x")
            if s is not None and s0 is not None:
                parts.append(f"rouge-score-rs {s / s0:5.1f}x")
            print(" ".join(parts[:1]) + " " + ", ".join(parts[1:]))
    if verdict:
        for e in engines:
            vs_ref = [r[e] for _, _, _, _, r in rows if r]
            vs_rs = [t[e] / s for _, t, _, s, _ in rows if s]
            if not vs_ref or not vs_rs:
                print(f"target ({SHORT[e]}): cannot tell (rouge-score or rouge-score-rs missing)")
                continue
            met = min(vs_ref) >= TARGET_REF and max(vs_rs) <= TARGET_RS
            print(
                f"target ({SHORT[e]}): {'MET' if met else 'NOT MET'}: at least {min(vs_ref):.0f}x rouge-score "
                f"(need {TARGET_REF:.0f}x), at most {max(vs_rs):.2f}x rouge-score-rs (need {TARGET_RS:.0f}x)"
            )
    return {e: [t[e] / s for _, t, _, s, _ in rows if s] for e in engines}


# ------------------------------------------------------------ issue 16: whole process

ALL_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
TARGET16 = 2.0  # issue 16: <= 2x rouge-score-rs

# The rouge-score-rs side of the whole-process comparison: what the CLI does without --summary
# (read JSONL, score each record, write one rouge-score-shaped JSON line), with rouge-score-rs.
RS_SCRIPT = """\
import json, sys
from rouge_score_rs import rouge_scorer
score = rouge_scorer.RougeScorer(sys.argv[2].split(","), use_stemmer=False).score
write = sys.stdout.write
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        rec = json.loads(line)
        s = score(rec["reference"], rec["prediction"])
        row = {k: {"precision": v.precision, "recall": v.recall, "fmeasure": v.fmeasure} for k, v in s.items()}
        write(json.dumps(row, ensure_ascii=False) + "\\n")
"""


def _timed(cmd: List[str], out_path: str) -> float:
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=out, check=True, cwd=ROOT)
        return time.perf_counter() - t0


def run_whole_process(n_pairs: int, low: int, high: int, rounds: int, seed: int) -> Dict[str, List[float]]:
    """Issue 16, first target: ``rageval-min rouge`` with all four types, whole process.

    ``python -m rageval_min rouge --input PAIRS.jsonl --rouge-types rouge1,rouge2,rougeL,rougeLsum``
    against :data:`RS_SCRIPT` (the same JSONL in, the same JSON lines out) with rouge-score-rs.
    The runs are interleaved (the order alternates every round) and each round gives one ratio;
    the median, min and max ratios are printed.  Returns ``{engine: [ratio per round]}``.
    """
    import json
    import statistics
    import tempfile

    try:
        import rouge_score_rs  # type: ignore  # noqa: F401
    except ImportError:
        print("\n## whole process: rouge-score-rs NOT INSTALLED, skipped")
        return {}
    pairs = make_mixed_pairs(n_pairs, low, high, seed)
    ntok = sum(len(rouge.tokenize(t)) + len(rouge.tokenize(p)) for t, p in pairs) / (2 * len(pairs))
    types = ",".join(ALL_TYPES)
    engines = {"stdlib": []}  # type: Dict[str, List[str]]
    if _rapidfuzz_lcs() is not None:
        engines["rapidfuzz"] = ["--backend", "rapidfuzz"]
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "pairs.jsonl")
        with open(data, "w", encoding="utf-8") as fh:
            for i, (t, p) in enumerate(pairs):
                fh.write(json.dumps({"id": i, "prediction": p, "reference": t}) + "\n")
        script = os.path.join(tmp, "rs_score.py")
        with open(script, "w", encoding="utf-8") as fh:
            fh.write(RS_SCRIPT)
        cmds = {"rs-rs": [sys.executable, script, data, types]}
        for e, extra in engines.items():
            cmds[e] = [sys.executable, "-m", "rageval_min", "rouge", "--input", data, "--rouge-types", types] + extra
        outs = {name: os.path.join(tmp, name + ".out") for name in cmds}
        times: Dict[str, List[float]] = {name: [] for name in cmds}
        names = list(cmds)
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                times[name].append(_timed(cmds[name], outs[name]))
        with open(outs["rs-rs"], "rb") as fh:
            want = fh.read()
        same = {}
        for e in engines:
            with open(outs[e], "rb") as fh:
                same[e] = fh.read() == want
    print(
        f"\n## rouge, all four types ({types}), whole process: {n_pairs} pairs of {low}-{high} words "
        f"(mean {ntok:.0f} tokens), {rounds} interleaved rounds"
    )
    print(f"{'engine':>10} {'median s':>9} {'rs-rs s':>8} {'ratio median':>13} {'min':>6} {'max':>6}  output")
    rs_med = statistics.median(times["rs-rs"])
    ratios: Dict[str, List[float]] = {}
    for e in engines:
        rr = [a / b for a, b in zip(times[e], times["rs-rs"])]
        ratios[e] = rr
        print(
            f"{e:>10} {statistics.median(times[e]):9.3f} {rs_med:8.3f} {statistics.median(rr):12.2f}x "
            f"{min(rr):5.2f}x {max(rr):5.2f}x  {'identical to rouge-score-rs' if same[e] else 'DIFFERENT'}"
        )
    return ratios


def run_rapidfuzz_bound(lengths: List[int], n_pairs: int, passes: int, seed: int) -> None:
    """What ``--backend rapidfuzz`` rougeL cannot go below: tokenizing both texts (the stdlib's
    one ``bytes.translate`` and ``split`` each) and rapidfuzz's ``LCSseq.similarity`` on the
    fresh token lists, with no exactness check and no Score, against rouge-score-rs."""
    try:
        from rapidfuzz.distance import LCSseq  # type: ignore
        from rouge_score_rs import rouge_scorer as rs_scorer  # type: ignore
    except ImportError:
        print("\n## rapidfuzz lower bound: rapidfuzz or rouge-score-rs NOT INSTALLED, skipped")
        return
    fast_lcs = _rapidfuzz_lcs()
    if fast_lcs is None:
        return
    sim = LCSseq.similarity
    tokens = _tokens  # what score() tokenizes with (ASCII bytes tokens)
    rs_score = rs_scorer.RougeScorer(["rougeL"]).score

    def bound(t: str, p: str) -> object:
        return sim(tokens(t, False, "reference"), tokens(p, False, "reference"))

    def ours(t: str, p: str) -> object:
        return rouge.score(t, p, rouge_types=["rougeL"], lcs=fast_lcs)

    print("\n## rougeL --backend rapidfuzz: the floor of this design (tokenize + rapidfuzz, no exactness check)")
    print(f"{'words':>6} {'rs-rs us':>9} {'bound/rs-rs':>12} {'rapidfuzz/rs-rs':>16}")
    for length in lengths:
        pairs = make_pairs(n_pairs, length, seed)
        t = best_times({"rs": rs_score, "bound": bound, "ours": ours}, pairs, passes)
        print(f"{length:6d} {t['rs'] * 1e6:9.1f} {t['bound'] / t['rs']:11.2f}x {t['ours'] / t['rs']:15.2f}x")


def print_targets(whole: Dict[str, List[float]], rougeL: Dict[str, List[float]]) -> None:
    """The issue-16 target table (MET / NOT MET), from ratios measured in this run."""
    import statistics

    print(f"\n## issue 16 speed targets (python {platform.python_version()}, {os.cpu_count()} cores)")
    print(f"{'target':<62} {'measured':>22} {'need':>6}  verdict")
    rows = []
    if "stdlib" in whole:
        rr = whole["stdlib"]
        rows.append(
            (
                "rouge 1+2+L+Lsum, whole process, 1000 pairs, vs rs-rs",
                statistics.median(rr),
                f"{statistics.median(rr):.2f}x ({min(rr):.2f}-{max(rr):.2f})",
            )
        )
    if "rageval_min+rapidfuzz" in rougeL:
        rr = rougeL["rageval_min+rapidfuzz"]
        rows.append(
            ("rougeL --backend rapidfuzz, in process, 100-300 words, vs rs-rs", max(rr), f"at most {max(rr):.2f}x")
        )
    if not rows:
        print("cannot tell (rouge-score-rs missing)")
    for name, value, text in rows:
        print(f"{name:<62} {text:>22} {TARGET16:5.0f}x  {'MET' if value <= TARGET16 else 'NOT MET'}")


IC_ENGINES = ("rageval_min", "rageval_min+rapidfuzz", "rouge-score-rs", "rouge-score")
_COLLECTED = re.compile(r"Collected : (\d+)")


def ic_worker(engine: str, lengths: List[int], counted: int, n_pairs: int, seed: int, types: List[str]) -> int:
    """Child process of --instructions: a warm-up pass over the pairs of every length,
    then one more pass over those of length ``counted`` (none when it is 0)."""
    fn = make_scorer(engine, types, False)
    if fn is None:
        return 3
    by_length = {length: make_pairs(n_pairs, length, seed) for length in lengths}
    for length in lengths + ([counted] if counted else []):
        for t, p in by_length[length]:
            fn(t, p)
    return 0


def _valgrind(args: List[str]) -> Optional[int]:
    """Instructions of one worker run under callgrind (None: its scorer is not installed)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += [os.path.abspath(__file__), "--ic-worker"] + args
    env = dict(os.environ, PYTHONHASHSEED="0")  # the same dict layouts in every run
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode == 3:
        return None
    found = _COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"valgrind run failed ({' '.join(args)}): {proc.stderr[-500:]}")
    return int(found.group(1))


def count_instructions(
    lengths: List[int],
    n_pairs: int,
    seed: int,
    engines: Sequence[str] = IC_ENGINES,
    types: Sequence[str] = ("rougeL",),
) -> Dict[Tuple[str, int], Optional[float]]:
    """Instructions per pair of one steady pass, by (engine, length); None if not installed.

    Each count is the difference between a worker run with one extra pass over
    that length's pairs and one without; the runs go two at a time.
    """
    spec = ",".join(map(str, lengths))
    jobs = [(e, c) for e in engines for c in [0] + lengths]

    def one(job: Tuple[str, int]) -> Optional[int]:
        return _valgrind([job[0], spec, str(job[1]), str(n_pairs), str(seed), ",".join(types)])

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(jobs, pool.map(one, jobs)))
    out: Dict[Tuple[str, int], Optional[float]] = {}
    for e in engines:
        base = counts[(e, 0)]
        for length in lengths:
            total = counts[(e, length)]
            out[(e, length)] = None if base is None or total is None else (total - base) / n_pairs
    return out


def run_instructions(lengths: List[int], n_pairs: int, seed: int) -> int:
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind on PATH (Debian: apt-get install valgrind)")
        return 2
    print(f"\n## rougeL (speed target) in instructions per pair: {n_pairs} pairs, one steady pass")
    heads = ["stdlib", "rapidfuzz", "rs-rs", "rouge-score"]
    print(f"{'words':>6}" + "".join(f" {h + ' Ir':>15}" for h in heads)
          + f" {'ref/stdlib':>11} {'stdlib/rs-rs':>13} {'ref/rapidfuzz':>14} {'rapidfuzz/rs-rs':>16}")  # fmt: skip
    vs_ref: Dict[str, List[float]] = {e: [] for e in ENGINES}  # rouge-score / engine
    vs_rs: Dict[str, List[float]] = {e: [] for e in ENGINES}  # engine / rouge-score-rs
    counts = count_instructions(lengths, n_pairs, seed)
    for length in lengths:
        ic = {e: counts[(e, length)] for e in IC_ENGINES}
        line = f"{length:6d}" + "".join(f" {ic[e]:15,.0f}" if ic[e] is not None else f" {'-':>15}" for e in IC_ENGINES)
        ref, rs = ic["rouge-score"], ic["rouge-score-rs"]
        for e, w1, w2 in zip(ENGINES, (11, 14), (13, 16)):
            mine = ic[e]
            if mine is None or ref is None or rs is None:
                line += f" {'-':>{w1}} {'-':>{w2}}"
                continue
            line += f" {ref / mine:{w1 - 1}.0f}x {mine / rs:{w2 - 1}.2f}x"
            vs_ref[e].append(ref / mine)
            vs_rs[e].append(mine / rs)
        print(line)
    for e in ENGINES:
        if len(vs_ref[e]) < len(lengths):
            print(f"target ({SHORT[e]}, instructions): cannot tell (an implementation is missing)")
            continue
        low, high = min(vs_ref[e]), max(vs_rs[e])
        met = low >= TARGET_REF and high <= TARGET_RS
        print(
            f"target ({SHORT[e]}, instructions): {'MET' if met else 'NOT MET'}: at least {low:.0f}x "
            f"rouge-score (need {TARGET_REF:.0f}x), at most {high:.2f}x rouge-score-rs (need {TARGET_RS:.0f}x)"
        )
    return 0


def run_instructions_all_types(lengths: List[int], n_pairs: int, seed: int) -> int:
    """``--instructions --all-types``: all four types in process, ours against rouge-score-rs, in instructions.

    The in-process part of the whole-process target (about 2 minutes on 2 cores).
    """
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind on PATH (Debian: apt-get install valgrind)")
        return 2
    print(f"\n## {','.join(ALL_TYPES)} in instructions per pair: {n_pairs} pairs, one steady pass")
    engines = ("rageval_min", "rouge-score-rs")
    counts = count_instructions(lengths, n_pairs, seed, engines, ALL_TYPES)
    print(f"{'words':>6} {'stdlib Ir':>15} {'rs-rs Ir':>15} {'stdlib/rs-rs':>13}")
    for length in lengths:
        mine, rs = counts[("rageval_min", length)], counts[("rouge-score-rs", length)]
        if mine is None or rs is None:
            print(f"{length:6d} cannot tell (rouge-score-rs missing)")
            continue
        print(f"{length:6d} {mine:15,.0f} {rs:15,.0f} {mine / rs:12.2f}x")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs and lengths")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target-only", action="store_true", help="only the speed-target table")
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="the speed-target table in instruction counts, under valgrind (about 8 minutes)",
    )
    ap.add_argument("--ic-pairs", type=int, default=20, help="pairs per length for --instructions")
    ap.add_argument("--ic-worker", nargs=6, help=argparse.SUPPRESS)
    ap.add_argument(
        "--all-types",
        action="store_true",
        help="issue 16: rouge with rouge1,rouge2,rougeL,rougeLsum, whole process, against rouge-score-rs",
    )
    ap.add_argument(
        "--targets", action="store_true", help="issue 16: both speed targets (whole process and rapidfuzz rougeL)"
    )
    ap.add_argument(
        "--rapidfuzz-bound",
        action="store_true",
        help="only the floor of --backend rapidfuzz rougeL (tokenize + rapidfuzz, no exactness check)",
    )
    ap.add_argument("--pairs", type=int, default=1000, help="pairs for --all-types (default 1000)")
    ap.add_argument("--rounds", type=int, default=0, help="interleaved rounds for --all-types (default 7, quick 3)")
    args = ap.parse_args(argv)
    if args.ic_worker:
        engine, spec, counted, n, seed, types = args.ic_worker
        return ic_worker(engine, [int(x) for x in spec.split(",")], int(counted), int(n), int(seed), types.split(","))
    n_pairs = 60 if args.quick else 200
    passes = 5 if args.quick else 9
    print(f"# bench_rouge  python {platform.python_version()}  {platform.machine()}")
    versions = []
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("rouge-score", "rouge-score-rs", "rapidfuzz", "nltk"):
        try:
            versions.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            versions.append(f"{dist} NOT INSTALLED")
    print("# " + ", ".join(versions))
    if args.instructions and args.all_types:
        return run_instructions_all_types([150, 300], args.ic_pairs, args.seed)
    if args.instructions:
        return run_instructions([100, 200, 300], args.ic_pairs, args.seed)
    rounds = args.rounds or (3 if args.quick else 7)
    if args.rapidfuzz_bound:
        run_rapidfuzz_bound([100, 200, 300], n_pairs, passes, args.seed)
        return 0
    if args.all_types:
        print_targets(run_whole_process(args.pairs, 150, 300, rounds, args.seed), {})
        return 0
    print(
        f"# {n_pairs} pairs per length, best of {passes} passes; rouge-score on the first 40 pairs, best of 5"
        " (first 20, best of 2, in the other tables), ratios to it from the same pairs and passes"
        " (the faster scorers go over those pairs 10 times per pass)"
    )
    rougeL = run_table(
        "rougeL (speed target)",
        ["rougeL"],
        False,
        [100, 200, 300],
        n_pairs,
        passes,
        10**9,
        args.seed,
        ref_pairs=40,
        ref_passes=5,
        verdict=True,
    )
    if args.target_only:
        return 0
    if args.targets:
        run_rapidfuzz_bound([100, 200, 300], n_pairs, passes, args.seed)
        print_targets(run_whole_process(args.pairs, 150, 300, rounds, args.seed), rougeL)
        return 0
    lengths = [100, 200, 400, 800] if args.quick else [100, 200, 400, 800, 1600, 3200]
    run_table("rougeL growth", ["rougeL"], False, lengths, n_pairs // 2, passes, 800, args.seed)
    if not args.quick:
        run_table("rougeL with stemmer", ["rougeL"], True, [200], n_pairs, passes, 10**9, args.seed)
        run_table(
            "all common types",
            ["rouge1", "rouge2", "rougeL", "rougeLsum"],
            False,
            [200],
            n_pairs,
            passes,
            10**9,
            args.seed,
        )
    print_targets(run_whole_process(args.pairs, 150, 300, rounds, args.seed), rougeL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
