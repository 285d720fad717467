"""Paired-comparison statistics for ``compare`` (stdlib only; to be folded into :mod:`rageval_min._stats`)."""

import math
import random
from fractions import Fraction
from itertools import compress
from statistics import NormalDist
from typing import Optional, Sequence, Tuple

from ._stats import betainc

__all__ = [
    "bootstrap_delta_interval",
    "mcnemar_exact",
    "paired_t",
    "percentile",
    "sign_flip_test",
    "student_t_sf2",
    "wilson_interval",
]


# --------------------------------------------------------------------------- paired comparisons (``compare``)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``.

    ``p = min(1, 2 * P[X <= min(b, c)])`` with ``X ~ Binomial(b + c, 1/2)``, and
    ``p = 1`` when ``b + c == 0``.  The tail is summed exactly in integers and
    rounded once, so it equals statsmodels' ``mcnemar(exact=True)`` to the last
    bits.

    >>> mcnemar_exact(0, 0), mcnemar_exact(3, 3)
    (1.0, 1.0)
    >>> round(mcnemar_exact(1, 9), 10)
    0.021484375
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be >= 0")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    term = 1
    tail = 1
    for i in range(1, k + 1):
        term = term * (n - i + 1) // i
        tail += term
    return min(1.0, float(Fraction(2 * tail, 1 << n)))


def wilson_interval(count: int, nobs: int, alpha: float = 0.05) -> Tuple[Optional[float], Optional[float]]:
    """Wilson score interval of ``count / nobs`` at level ``1 - alpha``.

    The formula of statsmodels' ``proportion_confint(method="wilson")``::

        z = Phi^-1(1 - alpha / 2);  q = count / nobs;  d = 1 + z^2 / nobs
        centre = (q + z^2 / (2 nobs)) / d
        half   = z * sqrt(q (1 - q) / nobs + z^2 / (4 nobs^2)) / d

    ``(None, None)`` when ``nobs == 0``.

    >>> lo, hi = wilson_interval(8, 10)
    >>> round(lo, 6), round(hi, 6)
    (0.490162, 0.943318)
    """
    if nobs <= 0:
        return None, None
    z = NormalDist().inv_cdf(1 - alpha / 2)
    q = count / nobs
    z2 = z * z
    denom = 1 + z2 / nobs
    centre = (q + z2 / (2 * nobs)) / denom
    half = z * math.sqrt(q * (1.0 - q) / nobs + z2 / (4.0 * nobs**2)) / denom
    return centre - half, centre + half


def student_t_sf2(t: float, dof: float) -> float:
    """Two-sided tail probability ``P[|T| >= |t|]`` of Student's t with ``dof`` degrees of freedom.

    ``I_x(dof / 2, 1 / 2)`` with ``x = dof / (dof + t^2)``, the regularized
    incomplete beta function of :func:`betainc`.

    >>> round(student_t_sf2(2.0, 10), 12)
    0.073388034771
    """
    if math.isnan(t) or dof <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0
    x = dof / (dof + t * t)
    return min(1.0, betainc(dof / 2.0, 0.5, x))


def paired_t(d: Sequence[float]) -> Optional[float]:
    """Two-sided p-value of the paired t-test on the differences ``d`` (as ``scipy.stats.ttest_rel``).

    ``t = mean(d) / sqrt(var(d, ddof=1) / n)``, ``n - 1`` degrees of freedom.
    None where scipy gives NaN: fewer than two pairs, or every difference
    equal to zero (0 / 0).  Every difference equal but not zero gives p = 0.

    >>> round(paired_t([1.0, 2.0, 3.0, 4.0]), 10)
    0.0304662917
    >>> paired_t([0.0, 0.0]) is None, paired_t([1.0]) is None
    (True, True)
    """
    n = len(d)
    if n < 2:
        return None
    mean = math.fsum(d) / n
    var = math.fsum((x - mean) ** 2 for x in d) / (n - 1)
    if var == 0.0:
        return None if mean == 0.0 else 0.0
    t = mean / math.sqrt(var / n)
    return student_t_sf2(t, n - 1)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) with linear interpolation between order statistics (numpy's default).

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    """
    n = len(sorted_values)
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def bootstrap_delta_interval(
    d: Sequence[float], *, resamples: int, seed: int, alpha: float
) -> Tuple[Optional[float], Optional[float]]:
    """Paired bootstrap percentile interval of ``mean(d)`` at level ``1 - alpha``.

    Each resample draws ``n`` differences with replacement through
    ``random.Random(seed).choices``; the interval is the ``alpha / 2`` and
    ``1 - alpha / 2`` quantiles of the resampled means (linear interpolation).
    The same seed gives the same interval, bit for bit.

    >>> bootstrap_delta_interval([1.0, 1.0, 1.0], resamples=50, seed=0, alpha=0.05)
    (1.0, 1.0)
    """
    n = len(d)
    if n == 0:
        return None, None
    rng = random.Random(seed)
    values = list(d)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return percentile(means, alpha / 2), percentile(means, 1 - alpha / 2)


def sign_flip_test(d: Sequence[float], *, resamples: int, seed: int) -> Optional[float]:
    """Two-sided approximate randomization test of ``mean(d) == 0`` by seeded sign flips.

    Each resample flips the sign of every difference with probability 1/2 (one
    ``getrandbits(n)`` per resample); ``p = (1 + #extreme) / (1 + resamples)``
    where a resample is extreme when ``|sum(s_i d_i)| >= |sum(d_i)|`` (within a
    relative 1e-12, so that ties of exactly representable sums count).
    None for an empty input.

    >>> sign_flip_test([0.0, 0.0, 0.0], resamples=99, seed=0)
    1.0
    """
    n = len(d)
    if n == 0:
        return None
    rng = random.Random(seed)
    values = [float(x) for x in d]
    total = math.fsum(values)
    observed = abs(total)
    threshold = observed - 1e-12 * max(1.0, observed)
    to_bits = bytes.maketrans(b"01", b"\x00\x01")
    extreme = 0
    for _ in range(resamples):
        mask = format(rng.getrandbits(n), f"0{n}b").encode().translate(to_bits)
        plus = math.fsum(compress(values, mask))
        if abs(2.0 * plus - total) >= threshold:
            extreme += 1
    return (1 + extreme) / (1 + resamples)
