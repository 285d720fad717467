"""Retrieval quality exactly as NIST trec_eval computes it: nDCG, AP, RR, P/R@k, success, R-prec, bpref.

References: ``usnistgov/trec_eval@d95ca64`` (v9.0.8, the C code pytrec_eval
embeds) and ``usnistgov/trec_eval@f425365`` (10.0), chosen with
``trec_eval=``.  MT-RAG's retrieval scorer, built on these measures, is
``rageval-min mtrag retrieval`` (:mod:`rageval_min.mtrag.retrieval`).  The
package is split by step:

* :mod:`.formats` -- TREC runs and qrels, BEIR TSV, JSON, JSON Lines;
* :mod:`.trec_eval` -- ranking, tie-breaking and the measures of one topic;
* :mod:`.scoring` -- item rows, the accumulator and :func:`score_file`;
* :mod:`.trec_text` -- the ``trec_eval -q`` text (``--format trec_eval``);
* :mod:`.cli`, :mod:`.charts` -- the command and its HTML section.

Every rule, quirk and deliberate difference is in ``docs/ir.md``.
"""

from typing import Iterable, Sequence, Tuple

from .._signature import make_signature
from ..errors import ScoringError
from .formats import QRELS_FORMATS, RUN_FORMATS
from .scoring import DEFAULT_MEASURES, MISSING, IrAccumulator, score_file, score_item, score_topics
from .trec_eval import VERSIONS, Measure, parse_measures
from .trec_text import format_trec_eval

__all__ = [
    "DEFAULT_MEASURES",
    "FAMILY",
    "IrAccumulator",
    "MISSING",
    "Measure",
    "QRELS_FORMATS",
    "REFERENCE",
    "REFERENCES",
    "REPORT_FORMATS",
    "RUN_FORMATS",
    "VARIANTS",
    "VERSIONS",
    "check_variants",
    "format_trec_eval",
    "parse_measures",
    "score_file",
    "score_item",
    "score_topics",
    "signature",
]

FAMILY = "ir"
REFERENCE = "usnistgov/trec_eval@d95ca64"
#: trec_eval version -> reference; and the mtrag retrieval step's reference.
REFERENCES = {
    "9.0.8": "usnistgov/trec_eval@d95ca64",
    "10.0": "usnistgov/trec_eval@f425365",
    "mtrag retrieval": "IBM/mt-rag-benchmark@cc5b1d4",
}
#: No opt-in variants: the trec_eval version, missing-topic rule and duplicates rule are parameters.
VARIANTS: Tuple[str, ...] = ()


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; the ir family has none, so any name is an error.

    >>> check_variants([])
    ()
    """
    names = tuple(sorted(set(variants)))
    if names:
        raise ScoringError(f"unknown ir variant(s): {', '.join(names)}; the ir family has no variants")
    return names


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature; ``trec_eval=10.0`` among ``params`` names the 10.0 reference.

    >>> signature(params=[("trec_eval", "9.0.8"), ("missing", "skip")])
    'rageval_min:0.1.0|family=ir|ref=usnistgov/trec_eval@d95ca64|variants=none|trec_eval=9.0.8|missing=skip'
    """
    version = dict(params).get("trec_eval", "9.0.8")
    ref = REFERENCES.get(str(version), REFERENCE)
    return make_signature(FAMILY, ref, check_variants(variants), params)


#: The reference's own output format, for the CLI and ``merge``.
REPORT_FORMATS = {"trec_eval": format_trec_eval}
