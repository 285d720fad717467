"""Pipeline step: the ``--backend`` choice (built-in engine, rapidfuzz's LCS, the official package)."""

from __future__ import annotations

from ..errors import ScoringError
from .rouge_scorer import score, score_multi, validate_rouge_types
from .scoring import Score
from .tokenizers import _check_tokenizer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

    from .rouge_scorer import LcsFn

__all__ = ["BACKENDS", "lcs_backend", "make_scorer", "rapidfuzz_lcs"]

#: ``--backend`` names: the built-in engine, rapidfuzz's LCS (``fast`` extra), the official package.
BACKENDS = ("stdlib", "rapidfuzz", "rouge-score")

if TYPE_CHECKING:
    #: ``(targets, prediction) -> {type: Score}``: one record's scores (best over several targets).
    ScoreFn = Callable[[List[str], str], Dict[str, Score]]


def rapidfuzz_lcs() -> Tuple[LcsFn, str]:
    """The ``fast`` extra's exact LCS function and its signature name (``rapidfuzz-<version>``).

    Raises :class:`ScoringError` with the pip command when rapidfuzz is missing.
    """
    from .._extras import load_extra

    mod = load_extra("fast")
    mod.check_backend()
    return mod.lcs_length, "rapidfuzz-" + mod.rapidfuzz_version()


def lcs_backend(backend: str) -> Tuple[Optional[LcsFn], str]:
    """The LCS function of ``--backend`` (None: the built-in one) and its signature label.

    The label is the backend's name, except ``rapidfuzz-<version>`` for rapidfuzz.
    """
    if backend == "rapidfuzz":
        return rapidfuzz_lcs()
    return None, backend


def make_scorer(
    rouge_types: Sequence[str],
    *,
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    backend: str = "stdlib",
) -> Tuple[ScoreFn, str]:
    """The scoring function of one backend (see :data:`BACKENDS`) and its signature label.

    ``rouge-score`` runs the official package through the ``rouge`` extra
    (reference tokenizer only); ``rapidfuzz`` is the built-in engine with the
    ``fast`` extra's LCS length for rougeL.  One target is scored with
    :func:`score`, several with :func:`score_multi`.
    """
    names = validate_rouge_types(rouge_types)
    _check_tokenizer(tokenizer)
    if backend not in BACKENDS:
        raise ScoringError(f"unknown backend {backend!r} (expected one of: {', '.join(BACKENDS)})", field="backend")
    if backend == "rouge-score":
        if tokenizer != "reference":
            raise ScoringError("the rouge-score backend has no unicode tokenizer", field="backend")
        from .._extras import load_extra

        official: ScoreFn = load_extra("rouge").make_scorer(names, use_stemmer=use_stemmer)
        return official, backend
    lcs, label = lcs_backend(backend)

    def builtin(targets: List[str], prediction: str) -> Dict[str, Score]:
        if len(targets) == 1:
            return score(
                targets[0], prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
            )
        return score_multi(
            targets, prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
        )

    return builtin, label
