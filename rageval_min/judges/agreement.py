"""Mirrors scikit-learn, statsmodels and fast-krippendorff (commits below): agreement between raters.

Raw agreement, base rates, the confusion matrix, Cohen's kappa (unweighted,
linear, quadratic), Fleiss' and Randolph's kappa and Krippendorff's alpha
(nominal, ordinal, interval, ratio; missing values allowed), with a seeded
bootstrap interval for each.

Each coefficient reproduces its reference to the last bit, by performing the same
float64 operations in the same order (the order of numpy's reductions is
emulated with :mod:`rageval_min._stats`):

* :func:`cohen_kappa`: scikit-learn's ``cohen_kappa_score``
  (scikit-learn/scikit-learn@1.9.1:sklearn/metrics/_classification.py);
* :func:`fleiss_kappa`: statsmodels' ``fleiss_kappa`` with ``method="fleiss"`` and
  ``"randolph"`` (statsmodels/statsmodels@v0.15.0:statsmodels/stats/inter_rater.py);
* :func:`krippendorff_alpha`: the ``krippendorff`` package's ``alpha``
  (pln-fing-udelar/fast-krippendorff@0.9.0:krippendorff/krippendorff.py).

The tests compare them with ``==`` on a seeded random corpus and on the example
of Krippendorff's "Computing Krippendorff's Alpha-Reliability" (2011).

Labels are strings or numbers (a boolean counts as the integer 0 or 1, see
:func:`normalize_label`); ``None`` is a missing rating.  Where a reference
returns NaN or raises (a coefficient with a zero denominator, a single value in
the domain), these functions return ``None``: JSON has no NaN.
"""

import math
import random
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .._numbers import as_float
from .._stats import np_mean, np_sum, pairwise_sum, percentile
from ..errors import ScoringError

__all__ = [
    "LEVELS",
    "WEIGHTS",
    "Label",
    "base_rates",
    "bootstrap_intervals",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_kappa",
    "fleiss_table",
    "krippendorff_alpha",
    "label_domain",
    "normalize_label",
    "raw_agreement",
]

Label = Union[str, int, float]
Number = Union[int, float]

#: Krippendorff's levels of measurement.
LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: The weightings of Cohen's kappa (``None`` is unweighted).
WEIGHTS = (None, "linear", "quadratic")


# --------------------------------------------------------------------------- labels


def normalize_label(value: Any) -> Optional[Label]:
    """A rating as a label: ``None`` stays missing, a boolean becomes 0 or 1.

    Strings and finite numbers are kept as they are (``1`` and ``1.0`` are the
    same label, as in numpy).  Anything else (a list, an object, NaN) raises
    :class:`TypeError` for the caller to report with its location.

    >>> normalize_label(True), normalize_label("yes"), normalize_label(None), normalize_label(0.5)
    (1, 'yes', None, 0.5)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        try:
            if math.isfinite(as_float(value)):
                return value
        except ScoringError as exc:  # an integer beyond the float range
            raise TypeError(exc.msg) from None
    raise TypeError(f"a label must be a string, a number or a boolean, got {type(value).__name__}")


def label_domain(values: Sequence[Optional[Label]], order: Optional[Sequence[Label]] = None) -> List[Label]:
    """The sorted distinct labels of ``values`` (missing ones left out), or ``order`` when given.

    Sorting follows numpy's ``np.unique``: numbers by value, strings by code
    point.  A mix of strings and numbers cannot be sorted (scikit-learn refuses
    it too) and raises :class:`ValueError`, unless ``order`` is given; with
    ``order``, a label outside it raises :class:`ValueError`.

    >>> label_domain([3, 1, None, 1.0, 2])
    [1, 2, 3]
    >>> label_domain(["b", "a"], order=["b", "a", "c"])
    ['b', 'a', 'c']
    """
    seen: Dict[Label, Label] = {}
    for v in values:
        if v is not None and v not in seen:
            seen[v] = v
    if order is not None:
        known = set(order)
        for v in seen:
            if v not in known:
                raise ValueError(f"label {v!r} is not in the given label order")
        return list(order)
    kinds = {isinstance(v, str) for v in seen}
    if len(kinds) > 1:
        raise ValueError("the labels mix strings and numbers; give the label order")
    return sorted(seen.values())  # type: ignore[type-var]


# --------------------------------------------------------------------------- two raters


def _pairs(a: Sequence[Optional[Label]], b: Sequence[Optional[Label]]) -> List[Tuple[Label, Label]]:
    if len(a) != len(b):
        raise ValueError(f"the two raters have {len(a)} and {len(b)} ratings")
    return [(x, y) for x, y in zip(a, b) if x is not None and y is not None]


def raw_agreement(a: Sequence[Optional[Label]], b: Sequence[Optional[Label]]) -> Optional[float]:
    """Share of items on which both raters give the same label: ``#equal / n``.

    Items where either rating is missing are left out; ``None`` when no item
    has both.  One division, so it equals scikit-learn's ``accuracy_score``.

    >>> raw_agreement(["y", "n", "y", None], ["y", "y", "y", "n"])
    0.6666666666666666
    """
    pairs = _pairs(a, b)
    if not pairs:
        return None
    return sum(1 for x, y in pairs if x == y) / len(pairs)


def base_rates(values: Sequence[Optional[Label]], domain: Sequence[Label]) -> Dict[Label, Optional[float]]:
    """The share of each label of ``domain`` among the non-missing ``values``: ``count / n``.

    Every rate is ``None`` when no value is present.

    >>> base_rates(["y", "n", "y", None], ["n", "y"])
    {'n': 0.3333333333333333, 'y': 0.6666666666666666}
    """
    present = [v for v in values if v is not None]
    counts = {label: 0 for label in domain}
    for v in present:
        counts[v] += 1
    return {label: (c / len(present) if present else None) for label, c in counts.items()}


def confusion_matrix(
    a: Sequence[Optional[Label]], b: Sequence[Optional[Label]], domain: Sequence[Label]
) -> List[List[int]]:
    """Counts ``C[i][j]`` of items rated ``domain[i]`` by the first rater and ``domain[j]`` by the second.

    Items with a missing rating are left out (scikit-learn's ``confusion_matrix``
    with ``labels=domain``).

    >>> confusion_matrix([0, 1, 1, None], [0, 0, 1, 1], [0, 1])
    [[1, 0], [1, 1]]
    """
    index = {label: i for i, label in enumerate(domain)}
    k = len(domain)
    c = [[0] * k for _ in range(k)]
    for x, y in _pairs(a, b):
        c[index[x]][index[y]] += 1
    return c


def _kappa_weight(i: int, j: int, weights: Optional[str]) -> float:
    if weights is None:
        return 0.0 if i == j else 1.0
    if weights == "linear":
        return float(abs(j - i))
    return float((j - i) ** 2)


def cohen_kappa(
    a: Sequence[Optional[Label]],
    b: Sequence[Optional[Label]],
    *,
    weights: Optional[str] = None,
    domain: Optional[Sequence[Label]] = None,
) -> Optional[float]:
    """Cohen's kappa of two raters, as scikit-learn's ``cohen_kappa_score(a, b, labels=domain, weights=weights)``.

    With ``C`` the confusion matrix over ``domain`` (default: the sorted labels
    of both raters), ``s0`` its column sums, ``s1`` its row sums and
    ``n = sum(s0)``::

        E[i][j] = s0[i] * s1[j] / n                  (outer product, then one division)
        w[i][j] = [i != j] | |i - j| | (i - j)**2    (unweighted | linear | quadratic)
        kappa   = 1 - sum(w * C) / sum(w * E)

    Both sums run over the matrix in row-major order with numpy's pairwise
    summation; ``sum(w * C)`` is a sum of integers and therefore exact.
    Weights use the *positions* of the labels in ``domain``, not their
    values.  Items with a missing rating are left out.  ``None`` (scikit-learn:
    NaN with a warning) when no item is rated by both or ``sum(w * E)`` is 0
    (e.g. both raters use one and the same label throughout).

    >>> cohen_kappa(["neg", "pos", "neg", "neu", "pos"], ["neg", "pos", "neg", "neu", "neg"])
    0.6875
    >>> cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2], weights="quadratic")
    0.8
    >>> cohen_kappa(["y", "y"], ["y", "y"]) is None
    True
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    pairs = _pairs(a, b)
    if not pairs:
        return None
    labels = label_domain([x for p in pairs for x in p]) if domain is None else list(domain)
    c = confusion_matrix([x for x, _ in pairs], [y for _, y in pairs], labels)
    k = len(labels)
    s0 = [float(sum(c[i][j] for i in range(k))) for j in range(k)]
    s1 = [float(sum(row)) for row in c]
    n = float(sum(sum(row) for row in c))
    weighted_expected = []
    observed = 0.0
    for i in range(k):
        for j in range(k):
            w = _kappa_weight(i, j, weights)
            weighted_expected.append(w * (s0[i] * s1[j] / n))
            observed += w * c[i][j]
    denominator = np_sum(weighted_expected, buffered=False)
    if denominator == 0:
        return None
    return 1 - observed / denominator


# --------------------------------------------------------------------------- many raters: Fleiss


def fleiss_table(items: Sequence[Sequence[Optional[Label]]], domain: Sequence[Label]) -> List[List[int]]:
    """Per item, how many raters chose each label of ``domain`` (statsmodels' ``aggregate_raters``
    with ``n_cat=len(domain)`` on the label positions); missing ratings are not counted.

    >>> fleiss_table([["a", "b", "a"], ["b", None, "b"]], ["a", "b"])
    [[2, 1], [0, 2]]
    """
    index = {label: i for i, label in enumerate(domain)}
    table = []
    for ratings in items:
        row = [0] * len(domain)
        for v in ratings:
            if v is not None:
                row[index[v]] += 1
        table.append(row)
    return table


def fleiss_kappa(table: Sequence[Sequence[int]], method: str = "fleiss") -> Optional[float]:
    """Fleiss' kappa (``method="fleiss"``) or Randolph's free-marginal kappa (``"randolph"``)
    of a subjects x categories count table, as statsmodels' ``fleiss_kappa``.

    With ``N`` subjects, ``m`` ratings per subject (every row must sum to the
    same ``m``), ``T`` the total and ``q`` the number of categories (columns)::

        p_j   = sum_i t[i][j] / T
        P_i   = (sum_j t[i][j]**2 - m) / (m * (m - 1))
        P     = mean(P_i)                              (numpy's pairwise sum / N)
        P_e   = sum_j p_j**2   (fleiss)   or   1 / q   (randolph)
        kappa = (P - P_e) / (1 - P_e)

    ``None`` when there is no subject, ``m < 2`` or ``P_e == 1`` (statsmodels:
    NaN or a division by zero).  Rows of unequal sums raise :class:`ValueError`
    (statsmodels asserts).

    >>> fleiss_kappa([[2, 1], [0, 3], [3, 0]])
    0.5499999999999998
    >>> fleiss_kappa([[2, 1], [0, 3], [3, 0]], "randolph")
    0.5555555555555554
    """
    if method not in ("fleiss", "randolph"):
        raise ValueError(f"method must be 'fleiss' or 'randolph', got {method!r}")
    if not table or not table[0]:
        return None
    sums = [sum(row) for row in table]
    m = max(sums)
    if any(s != m for s in sums):
        raise ValueError("every subject needs the same number of ratings")
    if m < 2:
        return None
    total = float(sum(sums))
    q = len(table[0])
    p_cat = [sum(row[j] for row in table) / total for j in range(q)]
    mf = float(m)
    p_rat = [(float(sum(x * x for x in row)) - mf) / (mf * (mf - 1.0)) for row in table]
    p_mean = np_mean(p_rat)
    p_exp = np_sum([p * p for p in p_cat], buffered=False) if method == "fleiss" else 1 / q
    if p_exp == 1:
        return None
    return (p_mean - p_exp) / (1 - p_exp)


# --------------------------------------------------------------------------- many raters: Krippendorff


def _value_counts(units: Sequence[Sequence[Optional[Label]]], domain: Sequence[Label]) -> List[List[int]]:
    return fleiss_table(units, domain)


def _coincidences(counts: Sequence[Sequence[int]], v: int) -> List[float]:
    """The coincidence matrix ``o`` (row-major), summed over units in order as numpy's axis-0 sum."""
    o = [0.0] * (v * v)
    for row in counts:
        divisor = max(sum(row), 2) - 1
        for i in range(v):
            ci = row[i]
            for j in range(v):
                unnormalized = ci * row[j] - (row[j] if i == j else 0)
                o[i * v + j] += unnormalized / divisor
    return o


def _ordinal_distance(i: int, j: int, n_v: Sequence[float]) -> float:
    lo, hi = min(i, j), max(i, j)
    # numpy's add.reduceat over n_v[lo..hi]: the first element, plus the pairwise sum of the rest
    between = n_v[lo] + pairwise_sum(n_v, lo + 1, hi - lo)
    x = between - (n_v[lo] + n_v[hi]) / 2
    return x * x


def _metric_distance(x: Label, y: Label, level: str) -> float:
    if level == "nominal":
        return 0.0 if x == y else 1.0
    if isinstance(x, int) and isinstance(y, int):
        diff: Number = x - y
        total: Number = x + y
    else:
        diff = float(x) - float(y)
        total = float(x) + float(y)
    if level == "interval":
        d = float(diff)
        return d * d
    if total == 0:
        return 0.0
    r = diff / total
    return r * r


def _distances(domain: Sequence[Label], level: str, n_v: Sequence[float]) -> List[float]:
    v = len(domain)
    if level == "ordinal":
        return [_ordinal_distance(i, j, n_v) for i in range(v) for j in range(v)]
    return [_metric_distance(domain[i], domain[j], level) for i in range(v) for j in range(v)]


def krippendorff_alpha(
    units: Sequence[Sequence[Optional[Label]]],
    level: str = "interval",
    domain: Optional[Sequence[Label]] = None,
) -> Optional[float]:
    """Krippendorff's alpha of ``units`` (one list of ratings per unit, ``None`` = missing), as the
    ``krippendorff`` package's ``alpha(reliability_data, value_domain=domain, level_of_measurement=level)``
    with the raters as the rows of ``reliability_data``.

    With ``c[u][k]`` the number of ratings of value ``k`` in unit ``u`` and
    ``m_u = max(sum_k c[u][k], 2)``::

        o[k][l] = sum_u (c[u][k] c[u][l] - [k == l] c[u][l]) / (m_u - 1)    (units in order)
        n_k     = sum_l o[l][k]
        e[k][l] = (n_k n_l - [k == l] n_k) / (sum_k n_k - 1)
        alpha   = 1 - sum(o * d) / sum(e * d)            (row-major, numpy's pairwise sum)

    The distance ``d[k][l]`` is: nominal ``[k != l]``; interval ``(v_k - v_l)**2``;
    ratio ``((v_k - v_l) / (v_k + v_l))**2`` (0 where ``v_k + v_l == 0``);
    ordinal ``(sum(n_g for g from k to l) - (n_k + n_l) / 2)**2``, the sum in the
    order of numpy's ``add.reduceat``.  Units with fewer than two ratings add
    nothing.  ``domain`` defaults to the sorted distinct ratings; interval,
    ratio (and ordinal without a ``domain``) need numbers.

    ``None`` where the package raises or divides by zero: fewer than two values
    in the domain, no unit with two ratings, or ``sum(e * d) == 0``.

    >>> round(krippendorff_alpha([[1, 1], [2, 2], [3, 2]], "nominal"), 6)
    0.545455
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    values = [x for unit in units for x in unit]
    dom = label_domain(values, domain)
    if level != "nominal" and any(isinstance(x, str) for x in dom) and (level != "ordinal" or domain is None):
        raise ValueError(
            f"the {level} level needs numeric labels" + (" or a label order" if level == "ordinal" else "")
        )
    v = len(dom)
    counts = _value_counts(units, dom)
    if v <= 1 or all(sum(row) <= 1 for row in counts):
        return None
    o = _coincidences(counts, v)
    n_v = [0.0] * v
    for i in range(v):
        for j in range(v):
            n_v[j] += o[i * v + j]
    total = np_sum(n_v, buffered=False) - 1
    e = [(n_v[i] * n_v[j] - (n_v[i] if i == j else 0.0)) / total for i in range(v) for j in range(v)]
    d = _distances(dom, level, n_v)
    denominator = np_sum([x * y for x, y in zip(e, d)], buffered=False)
    if denominator == 0:
        return None
    return 1 - np_sum([x * y for x, y in zip(o, d)], buffered=False) / denominator


# --------------------------------------------------------------------------- bootstrap


def bootstrap_intervals(
    n: int,
    statistics: Callable[[Sequence[int]], Mapping[str, Optional[float]]],
    *,
    resamples: int,
    seed: int,
    alpha: float = 0.05,
) -> Dict[str, Tuple[Optional[float], Optional[float]]]:
    """Seeded percentile bootstrap intervals of several statistics of the same ``n`` items.

    Each of the ``resamples`` draws picks ``n`` item positions with
    replacement through ``random.Random(seed).choices(range(n), k=n)`` and
    calls ``statistics(positions)``, which returns a value per name (all
    statistics see the same draws).  A name's interval is the ``alpha / 2``
    and ``1 - alpha / 2`` quantiles (linear interpolation, numpy's default) of
    its defined draws; a draw where it is undefined (``None``) is left out,
    and the interval is ``(None, None)`` when no draw is defined or ``n == 0``.
    The same seed gives the same intervals, bit for bit.

    >>> data = [1.0, 2.0, 3.0, 4.0]
    >>> bootstrap_intervals(4, lambda p: {"max": max(data[i] for i in p)}, resamples=200, seed=0)
    {'max': (2.0, 4.0)}
    """
    if n == 0:
        return {name: (None, None) for name in statistics([])}
    rng = random.Random(seed)
    positions = range(n)
    draws: Dict[str, List[float]] = {}
    for _ in range(resamples):
        for name, value in statistics(rng.choices(positions, k=n)).items():
            bucket = draws.setdefault(name, [])
            if value is not None:
                bucket.append(value)
    out: Dict[str, Tuple[Optional[float], Optional[float]]] = {}
    for name, values in draws.items():
        values.sort()
        out[name] = (percentile(values, alpha / 2), percentile(values, 1 - alpha / 2)) if values else (None, None)
    return out


def check_level(level: str) -> str:
    """``level`` when it is one of :data:`LEVELS`, else a :class:`ScoringError` naming them."""
    if level not in LEVELS:
        raise ScoringError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    return level
