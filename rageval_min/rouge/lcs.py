"""Pipeline step: the bit-parallel LCS kernel behind rougeL and rougeLsum.

It stands in for the O(m*n) table of google-research/google-research@61ce9f0:rouge/rouge_scorer.py
(``_lcs_table``, and ``lcs_ind`` / ``_backtrack_norec`` for :func:`lcs_indices`) and gives the
same lengths and the same chosen LCS.  :func:`lcs_lengths` also serves MT-RAG (one response
against each passage).
"""

from __future__ import annotations

from itertools import compress, count

from .._speedups_loader import kernels

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, Hashable, Iterable, List, Sequence

__all__ = ["lcs_indices", "lcs_length", "lcs_lengths"]


def _popcount_py39(x: int) -> int:
    return bin(x).count("1")


# int.bit_count exists from Python 3.10 on; looked up by name so the core stays 3.9-clean.
_popcount: Callable[[int], int] = getattr(int, "bit_count", _popcount_py39)


_POW2: List[int] = [1]  # _POW2[i] == 1 << i, grown on demand (see _pow2)
_POW2_MAX = 4096


def _pow2(n: int) -> Iterable[int]:
    """``1 << i`` for ``i`` in ``range(n)``: the cached list (grown up to 4096 items),
    or, beyond that, a generator (a list of n powers would take O(n**2) bits)."""
    if n <= len(_POW2):
        return _POW2
    if n > _POW2_MAX:
        return (1 << i for i in range(n))
    _POW2.extend(1 << i for i in range(len(_POW2), n))
    return _POW2


def _position_masks(seq: Sequence[Hashable]) -> Dict[Hashable, int]:
    """``{symbol: bitmask of its positions in seq}`` (bit i = position i)."""
    masks: Dict[Hashable, int] = {}
    for sym, bit in zip(seq, _pow2(len(seq))):
        if sym in masks:
            masks[sym] |= bit
        else:
            masks[sym] = bit
    return masks


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of a longest common subsequence of ``a`` and ``b``.

    Bit-parallel (Allison-Dix / Hyyrö): the DP column over the longer sequence
    is held as one Python integer ``v`` whose bit ``i`` is 0 exactly where the
    LCS length grows from row ``i`` to row ``i+1``; each symbol of the shorter
    sequence updates it with ``u = v & mask[symbol]; v = (v + u) | (v - u)``.
    Symbols absent from the longer sequence leave ``v`` unchanged and are
    skipped.  Cost: O(n) big-integer operations of m/64 words each, with O(m)
    memory, instead of the reference's O(m*n) table.  (Bits carried above bit
    m-1 never flow back down, so ``v`` is only masked at the end.)

    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    >>> lcs_length([], ["x"])
    0
    """
    if len(a) < len(b):
        a, b = b, a
    n = len(a)
    if not len(b):
        return 0
    c = kernels()  # the C kernel, when built (the same length)
    if c is not None:
        return c.lcs_lengths(a, (b,))[0]  # type: ignore[no-any-return]
    return _lcs_on_masks(_position_masks(a), n, b)


def _lcs_on_masks(masks: Dict[Hashable, int], rows: int, seq: Iterable[Hashable]) -> int:
    """:func:`lcs_length` of ``seq`` and the sequence of ``rows`` whose position masks are ``masks``.

    Rows that no symbol of ``seq`` matches (rougeLsum's guard rows, see
    :func:`_layout`) only ever get a carry through them and stay 1, so they
    add nothing to the count of 0 bits, which is the LCS length.
    """
    full = (1 << rows) - 1
    v = full
    get = masks.get
    for sym in seq:
        m = get(sym)
        if m is not None:
            u = v & m
            v = (v + u) | (v - u)
    return rows - _popcount(v & full)


def lcs_lengths(seq: Sequence[Hashable], others: Iterable[Sequence[Hashable]]) -> List[int]:
    """``[lcs_length(seq, other) for other in others]``, building the masks of ``seq`` once.

    The LCS length is symmetric, so ``seq`` can hold the masks whatever the
    lengths: scoring one text against several (MT-RAG's response against each
    passage) then costs one pass over each other sequence.

    >>> lcs_lengths("ABCBDAB", ["BDCABA", "", "BB"])
    [4, 0, 2]
    """
    n = len(seq)
    if not n:
        return [0 for _ in others]
    c = kernels()  # the C kernel, when built (the same lengths)
    if c is not None:
        return c.lcs_lengths(seq, others)  # type: ignore[no-any-return]
    masks = _position_masks(seq)
    return [_lcs_on_masks(masks, n, other) for other in others]


def _lcs_walk(masks: Dict[Hashable, int], n_ref: int, can: Sequence[Hashable]) -> List[int]:
    """Indices into the reference sequence of the LCS the reference's backtrack picks.

    ``masks`` are the position masks of the reference sequence (length
    ``n_ref``).  The reference (``_backtrack_norec``) walks its DP table ``t``
    from ``(len(ref), len(can))``: on equal tokens it takes the diagonal and
    records ``i-1``; otherwise it moves left when ``t[i][j-1] > t[i-1][j]`` and
    up otherwise (ties go up).  Neighbouring cells differ by at most 1 and
    ``t[i][j]`` is their maximum there, so "left" happens exactly when
    ``t[i-1][j] < t[i][j]``, i.e. when bit ``i-1`` of the bit-parallel column
    ``j`` is 0.  Within one column the walk therefore goes up to the first row
    index ``k`` (from ``i-1`` down) where either the tokens are equal
    (diagonal: record ``k``) or the column has a 0 bit (move left from row
    ``k+1``); that ``k`` is the highest set bit of
    ``(match_mask | ~column) & (2**i - 1)``, the match taking precedence.
    A column whose token does not occur in the reference equals the previous
    column and has no match, so a run of them is crossed in one step.  Only
    the columns of shared tokens are computed and stored.
    """
    get = masks.get
    # masks (never 0) of the shared tokens of `can`, and their 1-based columns
    col_m: List[int] = list(filter(None, map(get, can)))
    out: List[int] = []
    if not col_m:
        return out
    col_j: List[int] = list(compress(count(1), map(get, can)))
    v = (1 << n_ref) - 1
    cols: List[int] = []
    append = cols.append
    for m in col_m:
        u = v & m
        v = (v + u) | (v - u)
        append(v)
    i = n_ref
    j = len(can)
    idx = len(cols) - 1
    while i > 0 and j > 0:
        below = (1 << i) - 1
        if idx >= 0 and col_j[idx] == j:
            hit = col_m[idx] & below
            zero = ~cols[idx] & below
            idx -= 1
            k_hit = hit.bit_length() - 1
            k_zero = zero.bit_length() - 1
            if k_hit >= 0 and k_hit >= k_zero:
                out.append(k_hit)
                i = k_hit
            elif k_zero >= 0:
                i = k_zero + 1
            else:
                break
            j -= 1
        else:
            # a column without a match: the vector of the last shared column before it
            if idx < 0:
                break  # all ones: the walk goes up to row 0
            k_zero = (~cols[idx] & below).bit_length() - 1
            if k_zero < 0:
                break
            i = k_zero + 1
            j = col_j[idx]  # the following unmatched columns only move left
    out.reverse()
    return out


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> List[int]:
    """Sorted indices into ``ref`` of one LCS, chosen as the reference does.

    Identical to ``rouge_score.rouge_scorer.lcs_ind(ref, can)`` (see
    :func:`_lcs_walk` for why the bit-parallel walk takes the same path).

    >>> lcs_indices(["a", "b", "c", "b"], ["b", "a", "b"])
    [0, 3]
    """
    if not ref or not can:
        return []
    c = kernels()  # the C walk, when built (the same indices)
    if c is not None:
        return c.lcs_indices(ref, can)  # type: ignore[no-any-return]
    return _lcs_walk(_position_masks(ref), len(ref), can)
