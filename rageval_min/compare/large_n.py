"""Pipeline step: the intervals of ``compare`` at large n, where 10,000 bootstrap resamples cost too much.

The paired bootstrap of :mod:`rageval_min.compare.paired` draws ``resamples x
n`` ids: 1e9 draws at n = 100,000, and for a family aggregate (``aggregate.NAME``)
each resample also runs the family's accumulator over ``n`` rows twice.  From
:data:`SWITCH_N` pairs up (``interval="auto"``, the default) or at any n
(``interval="t"``) the intervals are instead:

* the mean difference of a per-item metric: Student's t interval
  ``mean(d) -+ t_{n-1, 1-alpha/2} s(d) / sqrt(n)`` (:func:`rageval_min._stats.t_interval`),
  which the percentile bootstrap of a mean approximates at this n (central
  limit theorem);
* a family aggregate that is a ratio of sums of item fields (a ``rate`` with a
  declared numerator and denominator, ``R = sum y / sum x``, or the mean of a
  per-item field over the rows where it is not null): the delta method
  (linearisation of the ratio estimator), paired:
  ``z_i = (y_ci - R_c x_ci) / mean(x_c) - (y_bi - R_b x_bi) / mean(x_b)``,
  ``delta -+ t_{n-1, 1-alpha/2} s(z) / sqrt(n)``.  The ratio is recomputed from
  the rows and must equal the accumulator's value (1e-9 relative) on both
  sides, else the aggregate gets no interval and a diagnostic says so
  (``interval="bootstrap"`` still computes the bootstrap).

Below :data:`SWITCH_N` nothing changes: the bootstrap, bit for bit.  The
accuracy at and above the switch (difference from the bootstrap interval) is
measured by ``tests/test_compare_large_n.py`` and documented in
``docs/performance.md``.
"""

import math
from typing import Any, List, Optional, Sequence, Tuple

from .. import _stats
from .._metrics import Metric, find_metric
from .columns import MISSING, Columns

__all__ = ["INTERVALS", "SWITCH_N", "aggregate_note", "delta_method_interval", "ratio_fields", "uses_t"]

#: ``auto``: the bootstrap below :data:`SWITCH_N` pairs, the t / delta-method interval from there
INTERVALS = ("auto", "bootstrap", "t")
#: the number of pairs from which ``interval="auto"`` uses the t / delta-method intervals
SWITCH_N = 5_000
_VERIFY = 1e-9


def uses_t(interval: str, n: int) -> bool:
    """Whether a metric over ``n`` pairs gets the t / delta-method interval.

    >>> uses_t("auto", 4999), uses_t("auto", 5000), uses_t("bootstrap", 10**6), uses_t("t", 3)
    (False, True, False, True)
    """
    return interval == "t" or (interval == "auto" and n >= SWITCH_N)


def ratio_fields(metrics: Sequence[Metric], name: str) -> Optional[Tuple[str, Optional[str]]]:
    """``(numerator field, denominator field or None)`` when aggregate ``name`` is a ratio of item fields.

    A ``rate`` with a declared numerator, or a per-item ``mean`` (the field
    itself, averaged over the rows where it is not null).

    >>> ratio_fields([Metric("p", "higher", "rate", "m", numerator="c", denominator="a")], "p")
    ('c', 'a')
    >>> ratio_fields([Metric("AP", "higher", "mean", "m", per_item=True)], "AP")
    ('AP', None)
    """
    m = find_metric(metrics, name)
    if m is None:
        return None
    if m.kind == "rate" and m.numerator:
        return m.numerator, m.denominator or None
    if m.kind == "mean" and m.per_item:
        return name, None
    return None


def _numbers(raw: Sequence[Any]) -> Tuple[List[float], List[float]]:
    """The values as floats (0 where null or absent), and 1.0 where there is a value, 0.0 where not."""
    if set(map(type, raw)) <= {int, float, bool}:
        return list(map(float, raw)), [1.0] * len(raw)
    y = [0.0 if v is None or v is MISSING else float(v) for v in raw]
    return y, [0.0 if v is None or v is MISSING else 1.0 for v in raw]


def _linearised(
    cols: Columns, rows: Sequence[int], fields: Tuple[str, Optional[str]], value: float
) -> Optional[List[float]]:
    """The influence values ``(y_i - R x_i) / mean(x)`` of one side, or None when the ratio is not ``value``."""
    num, den = fields
    try:
        y, x = _numbers(cols.values(num, rows))
        if den is not None:
            x = _numbers(cols.values(den, rows))[0]
    except (TypeError, ValueError):  # a field that is not numeric: not this formula
        return None
    sx = math.fsum(x)
    if sx == 0.0 or not all(map(math.isfinite, y)):
        return None
    ratio = math.fsum(y) / sx
    if abs(ratio - value) > _VERIFY * max(1.0, abs(value)):
        return None
    xbar = sx / len(x)
    return [(yi - ratio * xi) / xbar for yi, xi in zip(y, x)]


def delta_method_interval(
    sides: Tuple[Tuple[Columns, Sequence[int], float], Tuple[Columns, Sequence[int], float]],
    fields: Tuple[str, Optional[str]],
    *,
    alpha: float,
) -> Optional[Tuple[float, float]]:
    """The paired delta-method t interval of ``candidate - baseline`` for a ratio aggregate.

    ``sides`` is ``((columns, rows, accumulator value), ...)`` for the
    baseline then the candidate (the same ids, in the same order).  None when
    the ratio of ``fields`` does not reproduce an accumulator value.
    """
    (bcols, brows, bval), (ccols, crows, cval) = sides
    zb = _linearised(bcols, brows, fields, bval)
    zc = _linearised(ccols, crows, fields, cval)
    if zb is None or zc is None:
        return None
    z = [c - b for b, c in zip(zb, zc)]
    lo, hi = _stats.t_interval(z, alpha=alpha)
    if lo is None or hi is None:
        return None
    mean_z = math.fsum(z) / len(z)  # ~0: the linearised values are centred on each side
    delta = cval - bval
    return delta + (lo - mean_z), delta + (hi - mean_z)


def aggregate_note(names: Sequence[str], n: int) -> str:
    """The diagnostic for aggregates left without an interval at large n."""
    return (
        f"no interval for {', '.join(names)} at n={n} (from {SWITCH_N} pairs the bootstrap of the "
        "accumulator is replaced by the delta method, which needs a declared ratio of item fields); "
        "--interval bootstrap computes the bootstrap (slow at this n)"
    )
