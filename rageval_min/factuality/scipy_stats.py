"""Mirrors scipy 1.12 ``scipy.stats.pearsonr`` / ``spearmanr`` (two-sided) in the standard library.

Used by the SAFE-vs-human study (``correlation``) as ``eval/correlation_vs_factscore.py``
of ``google-deepmind/long-form-factuality@9d27158`` calls them.  numpy's float64
``mean`` is emulated bit for bit (pairwise summation, see
:func:`~rageval_min._stats.np_sum`), ``spearmanr`` bit for bit, ``pearsonr``
and both p-values within a 1e-12 tolerance (Pearson: see
:func:`pearson_tolerance`).
"""

import math
from typing import (
    Any,
    Iterable,
    List,
    NamedTuple,
    Sequence,
    Tuple,
)

from .._numbers import as_float
from .._stats import betainc, betainc_complement, np_mean, rankdata
from ..errors import ScoringError
from ._common import (
    VARIANTS,
    Number,
    _check_variants,
    _is_number,
)


class CorrelationResult(NamedTuple):
    """A correlation coefficient and its two-sided p-value (nan when undefined)."""

    statistic: float
    pvalue: float


_NAN_RESULT = CorrelationResult(math.nan, math.nan)


def _as_floats(values: Sequence[Any], name: str) -> List[float]:
    out = []
    for index, v in enumerate(values):
        if not _is_number(v):
            raise ScoringError(f"expected a number, got {v!r}", field=f"{name}[{index}]")
        out.append(as_float(v, field=f"{name}[{index}]"))  # 401 digits: an input error
    return out


def _check_pair(x: Sequence[Number], y: Sequence[Number]) -> Tuple[List[float], List[float]]:
    xf, yf = _as_floats(x, "x"), _as_floats(y, "y")
    if len(xf) != len(yf):
        raise ScoringError(f"x has {len(xf)} values but y has {len(yf)}")
    return xf, yf


def _sign(v: float) -> float:
    return 1.0 if v > 0 else (-1.0 if v < 0 else (0.0 if v == 0 else math.nan))


def pearson(x: Sequence[Number], y: Sequence[Number], *, variants: Iterable[str] = ()) -> CorrelationResult:
    """scipy 1.12 ``pearsonr(x, y)`` (two-sided), within 1e-12.

    n < 2 gives nan/nan (scipy raises); a constant column gives nan/nan;
    n == 2 gives ``±1.0`` (nan with a nan input) with p = 1.0; otherwise a nan
    input gives nan/nan.  Otherwise the numpy-pairwise
    means are subtracted and ``r = dot(xm/|xm|, ym/|ym|)`` clipped to [-1, 1]
    with correctly-rounded-ish (``fsum``) norm and dot; the BLAS kernels of the
    reference are CPU dependent, hence the tolerance.  ``p = 2 I_{(1-|r|)/2}(a,
    a)`` with ``a = n/2 - 1``.  Variant ``pearson_fsum`` uses fsum means.
    """
    names = _check_variants(variants, VARIANTS)
    xf, yf = _check_pair(x, y)
    n = len(xf)
    if n < 2:
        return _NAN_RESULT
    if all(v == xf[0] for v in xf) or all(v == yf[0] for v in yf):
        return _NAN_RESULT
    if n == 2:  # scipy returns p = 1.0 here even when r is nan
        return CorrelationResult(_sign(xf[1] - xf[0]) * _sign(yf[1] - yf[0]), 1.0)
    if any(math.isnan(v) for v in xf) or any(math.isnan(v) for v in yf):
        return _NAN_RESULT
    if "pearson_fsum" in names:
        xmean, ymean = math.fsum(xf) / n, math.fsum(yf) / n
        xm = [v - xmean for v in xf]
        ym = [v - ymean for v in yf]
        r = math.fsum(a * b for a, b in zip(xm, ym)) / math.sqrt(
            math.fsum(a * a for a in xm) * math.fsum(b * b for b in ym)
        )
    else:
        xmean, ymean = np_mean(xf), np_mean(yf)
        xm = [v - xmean for v in xf]
        ym = [v - ymean for v in yf]
        nx = math.sqrt(math.fsum(a * a for a in xm))
        ny = math.sqrt(math.fsum(b * b for b in ym))
        r = math.fsum((a / nx) * (b / ny) for a, b in zip(xm, ym))
    r = max(min(r, 1.0), -1.0)
    ab = n / 2 - 1
    # scipy evaluates beta(a, a, loc=-1, scale=2).sf(|r|): the standardised
    # point (|r| + 1) / 2 is rounded first (so |r| = 1 - 2**-53 gives p = 0.0)
    p = 2 * betainc(ab, ab, 1.0 - (abs(r) + 1.0) / 2.0)
    return CorrelationResult(r, p)


def spearman(x: Sequence[Number], y: Sequence[Number]) -> CorrelationResult:
    """scipy 1.12 ``spearmanr(x, y)`` (two-sided), bit for bit for the statistic.

    Average ranks, centred on ``(n+1)/2``; the products are exact, summed with
    ``fsum``; ``c = S * (1.0/(n-1))``, then ``(c_xy / sd_y) / sd_x`` clipped.
    n <= 1, a constant column or any nan -> nan/nan.  ``p`` from Student's t
    with ``dof = n - 2`` as ``I_{dof/(dof+t^2)}(dof/2, 1/2)``, with ``1 - dof/(dof+t^2)``
    computed as ``t^2/(dof+t^2)`` (no cancellation; 1e-12 relative for any n); n == 2 gives
    ``±0.9999999999999999`` with p nan (dof 0).
    """
    xf, yf = _check_pair(x, y)
    n = len(xf)
    if n <= 1:
        return _NAN_RESULT
    if any(math.isnan(v) for v in xf) or any(math.isnan(v) for v in yf):
        return _NAN_RESULT
    if all(v == xf[0] for v in xf) or all(v == yf[0] for v in yf):
        return _NAN_RESULT
    rx, ry = rankdata(xf), rankdata(yf)
    centre = (n + 1) / 2.0
    cx = [v - centre for v in rx]
    cy = [v - centre for v in ry]
    inv = 1.0 / (n - 1)
    sxx = math.fsum(a * a for a in cx) * inv
    syy = math.fsum(b * b for b in cy) * inv
    sxy = math.fsum(a * b for a, b in zip(cx, cy)) * inv
    rs = (sxy / math.sqrt(syy)) / math.sqrt(sxx)
    rs = max(min(rs, 1.0), -1.0)
    dof = n - 2
    if dof <= 0:
        return CorrelationResult(rs, math.nan)
    denom = (rs + 1.0) * (1.0 - rs)
    if denom == 0.0:
        return CorrelationResult(rs, 0.0)
    t = rs * math.sqrt(max(dof / denom, 0.0))
    t2 = t * t
    z = dof / (dof + t2)
    # 1 - z directly as t^2 / (dof + t^2): for many pairs and a small rho, z is
    # within a few ulp of 1 and the subtraction would lose every digit of it.
    return CorrelationResult(rs, betainc_complement(dof / 2.0, 0.5, z, t2 / (dof + t2)))


def pearson_tolerance(r: float, n: int) -> Tuple[float, float]:
    """How far :func:`pearson` can be from scipy's ``pearsonr``: ``(abs_tol_r, rel_tol_p)``.

    scipy's ``r`` is a BLAS ``ddot`` of the normalised deviations, whose
    summation order (and FMA use) depends on the CPU, so it cannot be
    reproduced in the standard library; this module's ``r`` is the correctly
    rounded (``fsum``) dot of the same normalised terms.  Both are within the
    classical dot-product bound of the exact value, ``n * 2**-53`` absolute
    (the terms' magnitudes sum to at most 1), so ``|r - r_scipy| <= (n + 4) *
    2**-53`` everywhere, including near ``r = 0`` (an absolute, not relative,
    bound).  The p-value ``2 I_{(1-|r|)/2}(a, a)`` (``a = n/2 - 1``) amplifies
    that error near ``|r| = 1``: ``d log p / d|r| <= max(a, 1) * 2 / (1 - |r|)``,
    so the relative p tolerance is ``1e-12 + 2 * max(a, 1) * abs_tol_r / (1 - |r|)``
    (infinite at ``|r| = 1``).

    >>> pearson_tolerance(0.5, 10)[0] == 14 * 2.0 ** -53
    True
    """
    abs_r = (n + 4) * 2.0**-53
    a = max(n / 2.0 - 1.0, 1.0)
    gap = 1.0 - abs(r)
    rel_p = math.inf if gap <= 0 else 1e-12 + 2.0 * a * abs_r / gap
    return abs_r, rel_p
