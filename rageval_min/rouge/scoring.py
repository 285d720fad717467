"""Mirrors google-research/google-research@61ce9f0:rouge/scoring.py: ``Score`` and ``fmeasure``.

(The reference's ``BootstrapAggregator`` is not mirrored: the ``rouge`` command reports plain
means, see :mod:`rageval_min.rouge.accumulator`.)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Union
else:
    from .._namedtuple import NamedTuple

__all__ = ["Score"]

if TYPE_CHECKING:
    Number = Union[int, float]


class Score(NamedTuple):
    """One ROUGE result.  ``int`` zeros where the reference returns them."""

    precision: Number
    recall: Number
    fmeasure: Number


def _fmeasure(precision: Number, recall: Number) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


_ZERO = Score(0, 0, 0)
_new_score = tuple.__new__  # Score(p, r, f) without the Python-level __new__
