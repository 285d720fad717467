"""Grounding gate: answered precision, citation hit rate, refusals and recall@k.

The public face of the grounding family: every name below is importable as
``rageval_min.grounding.NAME``.
"""

from .score_eval import (
    DEFAULT_GATES,
    FAMILY,
    REFERENCE,
    REFUSAL,
    REPORT_FORMATS,
    VARIANTS,
    GroundingAccumulator,
    GroundingScores,
    check_variants,
    citation_hit,
    contains_substr,
    evaluate_reference_gates,
    format_wfgy,
    is_refusal,
    parse_reference_gates,
    reference_output,
    score,
    score_file,
    score_files,
    score_item,
    signature,
)

__all__ = [
    "DEFAULT_GATES",
    "FAMILY",
    "GroundingAccumulator",
    "GroundingScores",
    "REFERENCE",
    "REFUSAL",
    "REPORT_FORMATS",
    "VARIANTS",
    "check_variants",
    "citation_hit",
    "contains_substr",
    "evaluate_reference_gates",
    "format_wfgy",
    "is_refusal",
    "parse_reference_gates",
    "reference_output",
    "score",
    "score_file",
    "score_files",
    "score_item",
    "signature",
]
