"""ROUGE exactly as Google's ``rouge-score`` 0.1.2 computes it, stdlib only.

The public face of the rouge family: every name below is importable as
``rageval_min.rouge.NAME``.
"""

from __future__ import annotations

from .accumulator import (
    LINE_KEY,
    REPORT_FORMATS,
    RougeAccumulator,
    check_record,
    metric_names,
    reference_json,
    score_file,
    score_item,
)
from .backends import BACKENDS, lcs_backend, make_scorer, rapidfuzz_lcs
from .lcs import lcs_indices, lcs_length, lcs_lengths
from .rouge_scorer import (
    FAMILY,
    REFERENCE,
    ROUGE_REF,
    STEMMER_ID,
    VARIANTS,
    check_variants,
    rouge_l_counts,
    rouge_l_many,
    rouge_l_texts,
    rouge_variants,
    score,
    score_multi,
    score_tokens,
    signature,
    signature_params,
    validate_rouge_types,
)
from .scoring import Score
from .tokenizers import TOKENIZERS, UNICODE_VARIANT, porter_stem, tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .rouge_scorer import LcsFn
else:

    def __getattr__(name: str) -> object:
        """``LcsFn``, a type alias, made when it is asked for: typing is not imported at start-up."""
        if name == "LcsFn":
            from typing import Callable, Hashable, Sequence

            return Callable[[Sequence[Hashable], Sequence[Hashable]], int]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BACKENDS",
    "FAMILY",
    "LINE_KEY",
    "LcsFn",
    "REFERENCE",
    "REPORT_FORMATS",
    "ROUGE_REF",
    "RougeAccumulator",
    "STEMMER_ID",
    "Score",
    "TOKENIZERS",
    "UNICODE_VARIANT",
    "VARIANTS",
    "check_record",
    "check_variants",
    "lcs_backend",
    "lcs_indices",
    "lcs_length",
    "lcs_lengths",
    "make_scorer",
    "metric_names",
    "porter_stem",
    "rapidfuzz_lcs",
    "reference_json",
    "rouge_l_counts",
    "rouge_l_many",
    "rouge_l_texts",
    "rouge_variants",
    "score",
    "score_file",
    "score_item",
    "score_multi",
    "score_tokens",
    "signature",
    "signature_params",
    "tokenize",
    "validate_rouge_types",
]
