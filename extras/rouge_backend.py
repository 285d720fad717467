"""ROUGE through Google's official ``rouge-score`` package (``--backend rouge-score``).

The stdlib engine in :mod:`rageval_min.rouge` reproduces rouge-score 0.1.2 bit for
bit; this adapter runs the real package instead, for cross-checks.  It needs
``pip install 'rageval-min[rouge]'`` (rouge-score, which brings nltk, numpy and
absl-py) and fails with exactly that command when the package is missing.
"""

from typing import Any, Callable, Dict, List, Sequence

from rageval_min.errors import ScoringError
from rageval_min.rouge import Score, validate_rouge_types

__all__ = ["INSTALL_HINT", "make_scorer"]

INSTALL_HINT = "pip install 'rageval-min[rouge]'"


def _import() -> Any:
    try:
        from rouge_score import rouge_scorer  # type: ignore
    except ImportError as exc:
        raise ScoringError(
            f"the rouge-score backend needs the rouge-score package ({exc}); install it with: {INSTALL_HINT}"
        ) from None
    return rouge_scorer


def make_scorer(
    rouge_types: Sequence[str], *, use_stemmer: bool = False
) -> Callable[[List[str], str], Dict[str, Score]]:
    """A function ``(targets, prediction) -> {type: Score}`` backed by rouge-score.

    One target is scored with ``RougeScorer.score``; several with
    ``RougeScorer.score_multi`` (max F-measure, first max wins).  Scores are
    returned as :class:`rageval_min.rouge.Score` with the package's own values
    (ints where it returns ints).
    """
    names = validate_rouge_types(rouge_types)
    scorer = _import().RougeScorer(names, use_stemmer=use_stemmer)

    def score(targets: List[str], prediction: str) -> Dict[str, Score]:
        if not targets:
            raise ScoringError("no reference to score against", field="references")
        if len(targets) == 1:
            raw = scorer.score(targets[0], prediction)
        else:
            raw = scorer.score_multi(targets, prediction)
        return {k: Score(v.precision, v.recall, v.fmeasure) for k, v in raw.items()}

    return score
