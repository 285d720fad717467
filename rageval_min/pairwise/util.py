"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/util.py: consistency and lengths.

Functions: ``find_inconsistent``, ``length_statistics_inferin``.

Swap consistency (:func:`find_consistency`): each row is paired with its
swapped partner ``idx;Y;X``; the last prediction of a duplicate ``cmp_index``
wins for the partner look-up, and a row whose partner is absent (partner
unparseable, failed, random mode) is *consistent* (an "orphan") and counts as
one decisive vote.

Answer lengths (:func:`length_stats`): numpy's pairwise mean and population
std per model, in characters by default or in cl100k tokens as the reference
counts them (:class:`TokenLength`, through the ``tokens`` extra).
"""

from collections import OrderedDict
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .._stats import np_mean, np_std
from ..errors import ScoringError
from ._common import _Row

__all__ = ["TokenLength", "find_consistency", "length_stats", "load_token_length"]


_CONSISTENT_PAIRS = frozenset([("A", "B"), ("B", "A"), ("C", "C"), ("D", "D")])


# --------------------------------------------------------------------------- consistency


def find_consistency(rows: Sequence[Tuple[str, str]], *, orphans_excluded: bool = False) -> List[Optional[bool]]:
    """Swap-consistency of ``(cmp_index, choice)`` rows (extracted, non-EM rows).

    Reference rule: ``pred`` maps cmp_index to its choice (last one wins); the
    partner of ``idx;X;Y`` is ``idx;Y;X``.  Without a partner a row is
    consistent (``orphans_excluded``: ``None``, i.e. neither).  Otherwise it
    is consistent iff the pair of letters is (A,B), (B,A), (C,C) or (D,D).

    >>> find_consistency([("q;r;m", "A"), ("q;m;r", "B"), ("p;r;m", "A"), ("p;m;r", "A"),
    ...                   ("o;r;m", "C")])
    [True, True, False, False, True]
    """
    pred: Dict[str, str] = {}
    for k, o in rows:
        pred[k] = o
    out: List[Optional[bool]] = []
    for k, o in rows:
        parts = k.split(";")
        if len(parts) < 3:
            raise ScoringError(
                "cmp_index must look like '{index};{model A};{model B}'", record=f"cmp_index={k}", field="cmp_index"
            )
        kct = f"{parts[0]};{parts[2]};{parts[1]}"
        if kct not in pred:
            out.append(None if orphans_excluded else True)
        else:
            out.append((pred[k], pred[kct]) in _CONSISTENT_PAIRS)
    return out


# --------------------------------------------------------------------------- lengths


class TokenLength:
    """The number of cl100k_base tokens of a text, through the ``tokens`` extra; picklable.

    The tokenizer is loaded on first use in each process (a pickled copy sent to a
    worker loads it there), so ``--lengths tokens`` runs on any engine.  Call
    :meth:`load` first to fail early when the extra is missing.
    """

    def __init__(self) -> None:
        self._fn: Optional[Callable[[str], int]] = None

    def load(self) -> Callable[[str], int]:
        """The extra's counter (a :class:`ScoringError` with the pip command when it is missing)."""
        if self._fn is None:
            from .._extras import load_extra

            self._fn = load_extra("tokens").cl100k_length()
        return self._fn

    def __call__(self, text: str) -> int:
        return self.load()(text)

    def __getstate__(self) -> Dict[str, Any]:
        return {}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self._fn = None


def length_stats(rows: Sequence[_Row]) -> List[List[Any]]:
    """``[[model, mean, std], ...]`` of answer lengths over every record row.

    Each row adds its ``length_a`` to model A and ``length_b`` to model B
    (EM, failed and unparseable rows included; a missing answer is ``"nan"``).
    Mean and population std follow numpy's pairwise summation.  Model order is
    first appearance, A before B.  Lengths are characters by default; the
    reference counts tiktoken cl100k tokens.
    """
    lens: "OrderedDict[str, List[int]]" = OrderedDict()
    for r in rows:
        lens.setdefault(r.A, []).append(r.len1)
        lens.setdefault(r.B, []).append(r.len2)
    return [[m, np_mean(v), np_std(v)] for m, v in lens.items()]


def load_token_length() -> Callable[[str], int]:
    """The cl100k_base length of the ``tokens`` extra, loaded now (picklable, for worker processes)."""
    length = TokenLength()
    length.load()
    return length
