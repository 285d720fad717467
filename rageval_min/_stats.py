"""numpy-compatible float64 summation, mean and standard deviation in the stdlib.

Several references aggregate with ``np.mean`` / ``np.std``, whose results differ
in the last bits from Python's ``sum``: numpy adds float64 arrays with a
pairwise kernel (blocks of at most 128 elements, each summed with 8
interleaved accumulators, then halves added recursively), and casts int64
arrays to float64 in 8192-element buffers that are summed one after another.
These functions reproduce that order of additions exactly, so the results are
bit-identical to numpy's on the same platform-independent kernel.
"""

import math
from typing import Optional, Sequence, Union

__all__ = ["np_mean", "np_std", "np_sum", "pairwise_sum"]

Number = Union[int, float]


def pairwise_sum(a: Sequence[Number], lo: int, n: int) -> float:
    # numpy's pairwise summation kernel (block 128, 8-way unrolled).
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo : lo + 8]
        i = 8
        stop = n - n % 8
        while i < stop:
            j = lo + i
            r0 += a[j]
            r1 += a[j + 1]
            r2 += a[j + 2]
            r3 += a[j + 3]
            r4 += a[j + 4]
            r5 += a[j + 5]
            r6 += a[j + 6]
            r7 += a[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for k in range(lo + stop, lo + n):
            res += a[k]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(a, lo, n2) + pairwise_sum(a, lo + n2, n - n2)


def np_sum(values: Sequence[Number], *, buffered: Optional[bool] = None) -> float:
    """``np.sum`` of a float64 or int64 array, bit for bit.

    The reduction starts from 0.0.  A float64 array is summed in one pairwise
    call; an int64 array is cast to float64 in 8192-element buffers, each
    pairwise-summed and added in turn (``buffered``; by default when every
    value is an int).

    >>> np_sum([0.1] * 10), sum([0.1] * 10)
    (1.0, 0.9999999999999999)
    """
    if buffered is None:
        buffered = all(isinstance(v, int) for v in values)
    a = [float(v) for v in values]
    if not buffered:
        return 0.0 + pairwise_sum(a, 0, len(a))
    total = 0.0
    for start in range(0, len(a), 8192):
        total += pairwise_sum(a, start, min(8192, len(a) - start))
    return total


def np_mean(values: Sequence[Number]) -> float:
    """``np.mean``: ``np_sum / n`` (NaN for an empty list, as numpy)."""
    if not values:
        return math.nan
    return np_sum(values) / len(values)


def np_std(values: Sequence[Number]) -> float:
    """``np.std`` with ``ddof=0`` (population), numpy's two-pass algorithm.

    >>> np_std([1, 2, 3, 4])
    1.118033988749895
    """
    if not values:
        return math.nan
    m = np_mean(values)
    sq = [(float(v) - m) * (float(v) - m) for v in values]
    return math.sqrt(np_sum(sq, buffered=False) / len(values))
