"""``compare`` at large n (issue 27): the t and delta-method intervals from ``SWITCH_N`` pairs, checked
against scipy / statsmodels and against the bootstrap they replace; below the switch, the bootstrap
exactly as before.  Not timed: speed lives in ``bench/bench_compare.py``."""

import json
import math
import random
from fractions import Fraction

import pytest
from conftest import need, run_cli

from rageval_min import _stats as st
from rageval_min import compare
from rageval_min._contract import accumulator_class, params_digest
from rageval_min.compare.large_n import SWITCH_N

N = SWITCH_N  # the first n that gets the large-n intervals


def _writer(family):
    return f"{family} score {params_digest(accumulator_class(family, 'score')().params)}"


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _ir_rows(n, shift, seed=0):
    rng = random.Random(seed)
    noise = random.Random(seed + 99 + int(shift * 1000))
    writer = _writer("ir")
    rows = []
    for i in range(n):
        ap = min(1.0, max(0.0, rng.betavariate(2, 3) + shift * noise.random() * 2))
        hit = 1 if rng.random() < 0.6 + (shift if noise.random() < 0.5 else 0) else 0
        rel = rng.randrange(1, 10)
        rows.append(
            {
                "qid": f"q{i:06d}",
                "in_run": hit,
                "NumRet": 100,
                "NumRel": rel,
                "NumRelRet": rel,
                "first_rel_rank": 1,
                "judged_pos": rel,
                "all_negative": 0,
                "runid": "t",
                "AP": ap,
                "RR": 1.0 / rng.randrange(1, 20),
                "P@10": noise.randrange(11) / 10,
                "R@100": ap,
                "nDCG@10": ap,
                "_rageval_min": writer,
            }
        )
    return rows


def _grounding_rows(n, p_correct, seed=0, answer_rate=0.9):
    rng = random.Random(seed)
    writer = _writer("grounding")
    rows = []
    for i in range(n):
        answerable = 1 if rng.random() < 0.8 else 0
        answered = 1 if rng.random() < answer_rate else 0
        correct = 1 if answerable and answered and rng.random() < p_correct else 0
        rows.append(
            {
                "qid": f"g{i:06d}",
                "answerable": answerable,
                "unanswerable": 1 - answerable,
                "answered": answered,
                "refused": 1 - answered,
                "correct": correct,
                "citation_hit": correct,
                "under_refusal": 1 if answered and not answerable else 0,
                "over_refusal": 1 if answerable and not answered else 0,
                "recall@k": (1 if rng.random() < 0.1 + p_correct else 0) if answerable else None,
                "_rageval_min": writer,
            }
        )
    return rows


def _compare(tmp_path, base, cand, *extra):
    b, c = _write(tmp_path / "base.jsonl", base), _write(tmp_path / "cand.jsonl", cand)
    r = run_cli(["compare", "--baseline", b, "--candidate", c, *extra])
    assert r.code in (0, 1), r.err
    return json.loads(r.out), r


# --------------------------------------------------------------------------- the statistics


def test_student_t_ppf_matches_scipy():
    stats = need("scipy.stats", "dev", "the test extra: pip install scipy")
    for dof in (1, 2, 3, 7, 30, 999, N - 1, 10**5, 10**6):
        for q in (0.6, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.025, 0.005):
            got, ref = st.student_t_ppf(q, dof), stats.t.ppf(q, dof)
            assert abs(got - ref) <= 1e-10 * abs(ref), (dof, q, got, ref)
    assert math.isnan(st.student_t_ppf(0.0, 5)) and math.isnan(st.student_t_ppf(0.5, 0))


def test_t_interval_matches_scipy_t_interval():
    stats = need("scipy.stats", "dev", "the test extra: pip install scipy")
    rng = random.Random(8)
    for n in (2, 3, 40, N, 3 * N):
        for alpha in (0.05, 0.01, 0.2):
            d = [
                rng.choice((-1.0, 0.0, 0.0, 1.0)) if n > 100 and n % 2 == 0 else rng.gauss(0.01, 0.3) for _ in range(n)
            ]
            mean = math.fsum(d) / n
            sem = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1) / n)
            lo, hi = stats.t.interval(1 - alpha, n - 1, loc=mean, scale=sem)
            glo, ghi = st.t_interval(d, alpha=alpha)
            half = hi - mean
            assert abs(glo - lo) <= 1e-9 * half and abs(ghi - hi) <= 1e-9 * half, (n, alpha)
    assert st.t_interval([], alpha=0.05) == (None, None)
    assert st.t_interval([0.25], alpha=0.05) == (0.25, 0.25)
    assert st.t_interval([0.5] * 9, alpha=0.05) == (0.5, 0.5)


def test_mcnemar_above_the_integer_sum_matches_statsmodels_and_the_exact_sum():
    sm = need("statsmodels.stats.contingency_tables", "dev", "the test extra: pip install statsmodels")
    big = st.MCNEMAR_SUM_MAX
    for b, c in ((big // 2, big // 2 + 1), (big, 400), (20_500, 21_300), (30_000, 31_000), (60_000, 59_000)):
        assert b + c > big
        got = st.mcnemar_exact(b, c)
        ref = sm.mcnemar([[3, b], [c, 4]], exact=True).pvalue
        assert abs(got - ref) <= 1e-10 * max(ref, 1e-300), (b, c, got, ref)
    # the exact integer tail (what mcnemar_exact sums below the threshold) at one case above it
    b, c = 10_400, 10_000
    n, k = b + c, min(b, c)
    tail, term = 1, 1
    for i in range(1, k + 1):
        term = term * (n - i + 1) // i
        tail += term
    exact = float(Fraction(2 * tail, 1 << n))
    assert abs(st.mcnemar_exact(b, c) - exact) <= 1e-11 * exact
    assert st.mcnemar_exact(big // 2, big // 2) == 1.0  # at the threshold: still the integer sum


# --------------------------------------------------------------------------- the command, around the switch


def test_below_the_switch_auto_is_the_bootstrap_exactly(tmp_path):
    """n = SWITCH_N - 1: ``--interval auto`` gives the bytes of ``--interval bootstrap``, the
    bootstrap of ``_stats.bootstrap_delta_interval``, and the signature has no ``interval``."""
    base, cand = _ir_rows(N - 1, 0.0), _ir_rows(N - 1, 0.02)
    out, auto = _compare(tmp_path, base, cand, "--resamples", "40", "--metric", "AP", "--metric", "in_run")
    _, boot = _compare(
        tmp_path, base, cand, "--resamples", "40", "--metric", "AP", "--metric", "in_run", "--interval", "bootstrap"
    )
    assert auto.out == boot.out
    assert "interval" not in out["signature"]
    ap = out["result"]["metrics"]["AP"]
    assert "interval" not in ap
    d = [float(c["AP"]) - float(b["AP"]) for b, c in zip(base, cand)]
    assert (ap["ci_low"], ap["ci_high"]) == st.bootstrap_delta_interval(d, resamples=40, seed=0, alpha=0.05)
    agg = out["result"]["metrics"]["aggregate.AP"]
    assert agg["test"] == "bootstrap" and agg["ci_low"] is not None


def test_from_the_switch_the_t_interval_is_scipys_and_named(tmp_path):
    stats = need("scipy.stats", "dev", "the test extra: pip install scipy")
    base, cand = _ir_rows(N, 0.0), _ir_rows(N, 0.02)
    out, _ = _compare(tmp_path, base, cand, "--metric", "AP", "--metric", "in_run", "--metric", "P@10")
    assert out["signature"].endswith("|of=ir:score|interval=t")
    for name in ("AP", "in_run", "P@10"):
        m = out["result"]["metrics"][name]
        assert m["interval"] == "t" and m["n"] == N
        d = [float(c[name]) - float(b[name]) for b, c in zip(base, cand)]
        mean = math.fsum(d) / N
        sem = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (N - 1) / N)
        lo, hi = stats.t.interval(0.95, N - 1, loc=mean, scale=sem)
        assert abs(m["ci_low"] - lo) <= 1e-9 * sem and abs(m["ci_high"] - hi) <= 1e-9 * sem, name
    assert out["result"]["metrics"]["in_run"]["test"] == "mcnemar_exact"
    ref = stats.ttest_rel([c["AP"] for c in cand], [b["AP"] for b in base]).pvalue
    assert abs(out["result"]["metrics"]["AP"]["p_value"] - ref) <= 1e-9 * ref


def _bootstrap_np(np, xb, yb, xc, yc, resamples, seed):
    """Paired percentile bootstrap of sum(yc)/sum(xc) - sum(yb)/sum(xb), in numpy (chunks of 500)."""
    rng = np.random.default_rng(seed)
    n = len(xb)
    draws = []
    for start in range(0, resamples, 500):
        idx = rng.integers(0, n, size=(min(500, resamples - start), n))
        draws.append(yc[idx].sum(1) / xc[idx].sum(1) - yb[idx].sum(1) / xb[idx].sum(1))
    return np.percentile(np.concatenate(draws), [2.5, 97.5])


@pytest.mark.parametrize("n", [N, 2 * N])
def test_delta_method_aggregates_against_numpy_and_the_bootstrap(tmp_path, n):
    """aggregate.precision = correct / answered and aggregate.recall@k (a mean over non-null rows):
    the delta-method interval equals an independent numpy + scipy computation, and differs from a
    5,000-resample numpy bootstrap by at most 8% of its half-width (measured: 1.5-4.7%) at and above the switch."""
    np = need("numpy", "dev", "the test extra: pip install numpy")
    stats = need("scipy.stats", "dev", "the test extra: pip install scipy")
    base, cand = _grounding_rows(n, 0.60, seed=1), _grounding_rows(n, 0.62, seed=1)
    out, _ = _compare(tmp_path, base, cand)
    metrics = out["result"]["metrics"]
    tq = stats.t.ppf(0.975, n - 1)
    for name, num, den in (("precision", "correct", "answered"), ("recall@k", "recall@k", None)):
        m = metrics[f"aggregate.{name}"]
        assert m["test"] == "delta_method" and m["n"] == n

        def side(rows):
            y = np.array([r[num] or 0 for r in rows], dtype=float)
            x = np.array([r[den] for r in rows] if den else [r[num] is not None for r in rows], dtype=float)
            return x, y

        (xb, yb), (xc, yc) = side(base), side(cand)
        rb, rc = yb.sum() / xb.sum(), yc.sum() / xc.sum()
        z = (yc - rc * xc) / xc.mean() - (yb - rb * xb) / xb.mean()
        half = tq * z.std(ddof=1) / math.sqrt(n)
        assert m["delta"] == pytest.approx(rc - rb, rel=1e-12, abs=1e-15)
        assert abs(m["ci_low"] - (m["delta"] - half)) <= 1e-9 * half, name
        assert abs(m["ci_high"] - (m["delta"] + half)) <= 1e-9 * half, name
        lo, hi = _bootstrap_np(np, xb, yb, xc, yc, 5_000, seed=5)
        gap = max(abs(m["ci_low"] - lo), abs(m["ci_high"] - hi)) / half
        print(f"{name} n={n}: largest endpoint gap {gap:.4f} of the half-width")
        assert gap <= 0.08, (name, n, gap)


def test_an_aggregate_without_a_linearisation_gets_no_interval_and_a_note(tmp_path):
    """precision is 1.0 when nothing was answered (not the ratio of the rows): no interval, said so."""
    base = _grounding_rows(N, 0.6, seed=2, answer_rate=0.0)
    cand = _grounding_rows(N, 0.6, seed=2)
    out, _ = _compare(tmp_path, base, cand)
    m = out["result"]["metrics"]["aggregate.precision"]
    assert m["test"] == "delta_method" and (m["ci_low"], m["ci_high"]) == (None, None)
    assert m["verdict"] == "no significant change"
    assert any("no interval for aggregate.precision, aggregate.chr at n=5000" in d for d in out["diagnostics"])
    assert out["result"]["metrics"]["aggregate.recall@k"]["ci_low"] is not None


def test_interval_option_forces_either_method_and_rejects_others(tmp_path):
    base, cand = _ir_rows(50, 0.0), _ir_rows(50, 0.05)
    out, _ = _compare(tmp_path, base, cand, "--interval", "t", "--metric", "AP")
    assert out["result"]["metrics"]["AP"]["interval"] == "t" and out["signature"].endswith("interval=t")
    assert out["result"]["metrics"]["aggregate.AP"]["test"] == "delta_method"
    b, c = str(tmp_path / "base.jsonl"), str(tmp_path / "cand.jsonl")
    r = run_cli(["compare", "--baseline", b, "--candidate", c, "--interval", "normal"])
    assert r.code == 2
    with pytest.raises(Exception, match="--interval must be one of auto, bootstrap, t"):
        compare.CompareOptions(interval="normal").checked()
