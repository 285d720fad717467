"""Long-form factuality: SAFE F1@K, FActScore, VeriScore and correlations.

Reference implementations (see ``specs/factuality.md``):

* SAFE / LongFact, ``google-deepmind/long-form-factuality@9d27158``:
  ``eval/metric_utils.py`` (F1@K, ``round_to_sigfigs``), the label counting of the
  SAFE rater, ``eval/run_eval.py`` (per-prompt ``f1_<flag>`` and the
  ``side{n}_avg_*`` / ``side{n}_std_*`` aggregation) and
  ``eval/correlation_vs_factscore.py`` (the SAFE-vs-human study);
* FActScore, ``shmsw25/FActScore@f28272d`` (``FactScorer.get_score``);
* VeriScore, ``Yixiao-Song/VeriScore@7dd3352`` (per-domain K and F1@K).

Everything here is a pure function over already parsed data; the CLI lives in
``_cmd_factuality.py``.  numpy's float64 ``mean``/``std`` are emulated bit for
bit (pairwise summation, see :func:`np_sum`), scipy's ``spearmanr`` bit for bit,
``pearsonr`` and both p-values within the spec's 1e-12 tolerance, using only
the standard library.

Reference quirks kept on purpose (all in the spec):

* ``calculate_metrics`` returns the **int** ``0`` when nothing is supported, and
  recall is the int ``1`` when S >= K (``min(1, S/K)`` keeps its first argument
  on ties), so F1 can be the float ``1.0`` or the int ``0``;
* the check order is K <= 0, then negative counts, then S == 0;
* the per-prompt key carries the *raw* ``--max_claim`` flag (``f1_-1`` means K=100);
* a side is skipped entirely when ``per_prompt_data[0]`` has no eval data;
* means are over per-response F1 values, standard deviations are population ones.
"""

import copy
import json
import math
import random
import re
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ._signature import make_signature
from ._stats import np_mean, np_std, np_sum, pairwise_sum
from .errors import ScoringError

__all__ = [
    "DEFAULT_MAX_CLAIMS",
    "REF_SAFE",
    "REF_FACTSCORE",
    "REF_VERISCORE",
    "VARIANTS",
    "SUPPORTED_LABEL",
    "NOT_SUPPORTED_LABEL",
    "IRRELEVANT_LABEL",
    "F1AtK",
    "calculate_metrics",
    "f1_at_k",
    "round_to_sigfigs",
    "count_labels",
    "np_sum",
    "np_mean",
    "np_std",
    "SafeEvalResult",
    "run_eval_aggregate",
    "dumps_reference",
    "length_penalty",
    "FactScoreResult",
    "factscore",
    "labeled_decisions",
    "human_label_counts",
    "veriscore_k",
    "veriscore_f1",
    "VeriScoreRow",
    "VeriScoreResult",
    "veriscore",
    "CorrelationResult",
    "pearson",
    "spearman",
    "betainc",
    "StudyResult",
    "study_metrics_human",
    "study_metrics_safe",
    "correlation_study",
    "select_k",
    "BootstrapCI",
    "bootstrap_mean_ci",
    "signature",
]

Number = Union[int, float]

DEFAULT_MAX_CLAIMS = 100
"""SAFE's code default for K (``metric_utils.DEFAULT_MAX_CLAIMS``); neither paper value."""

REF_SAFE = "google-deepmind/long-form-factuality@9d27158"
REF_FACTSCORE = "shmsw25/FActScore@f28272d"
REF_VERISCORE = "Yixiao-Song/VeriScore@7dd3352"

VARIANTS = (
    "f1_key_effective_k",
    "aggregate_all_rated",
    "factscore_excl_ir",
    "veriscore_py312_sum",
    "pearson_fsum",
)
"""The opt-in variants of this family (names fixed by the spec)."""

SUPPORTED_LABEL = "Supported"
NOT_SUPPORTED_LABEL = "Not Supported"
IRRELEVANT_LABEL = "Irrelevant"


def _check_variants(variants: Iterable[str], allowed: Sequence[str]) -> List[str]:
    names = sorted(set(variants))
    for name in names:
        if name not in allowed:
            raise ScoringError(
                f"unknown variant {name!r} (choose from {', '.join(allowed)})",
                field="variant",
            )
    return names


def signature(ref: str, variants: Iterable[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The family's reproducibility signature (``family=factuality``)."""
    return make_signature("factuality", ref, variants, params)


# ---------------------------------------------------------------------------
# A. F1@K and round_to_sigfigs (eval/metric_utils.py)
# ---------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def calculate_metrics(supported: Number, not_supported: Number, max_claims: Number = DEFAULT_MAX_CLAIMS) -> Number:
    """SAFE's F1@K, bit for bit (``eval/metric_utils.calculate_metrics``).

    Checks, in this order: ``max_claims <= 0`` -> error ``max_claims must be
    positive.``; a negative count -> ``Cannot have negative numbers of claims.``;
    ``supported == 0`` -> the **int** ``0``.  Then ``p = S/(S+N)``,
    ``r = min(1, S/K)`` (int ``1`` when S >= K) and ``F1 = ((2*p)*r)/(p+r)``.
    Irrelevant facts take part in neither term; K has no upper clamp.  Errors
    are raised as :class:`ScoringError` (a ``ValueError``, like the reference).

    >>> calculate_metrics(10, 8)
    0.16949152542372883
    >>> calculate_metrics(0, 5, 64)
    0
    >>> calculate_metrics(70, 6, 100)
    0.7954545454545453
    >>> calculate_metrics(64, 0, 64)
    1.0
    """
    if max_claims <= 0:
        raise ScoringError("max_claims must be positive.")
    if supported < 0 or not_supported < 0:
        raise ScoringError("Cannot have negative numbers of claims.")
    if supported == 0:
        return 0
    precision = float(supported / (supported + not_supported))
    recall = min(1, float(supported / max_claims))
    return 2 * precision * recall / (precision + recall)


class F1AtK(NamedTuple):
    """Per-response SAFE metrics.

    ``precision`` is ``S/(S+N)`` (None when S + N == 0, where the paper leaves it
    undefined); ``recall_at_k`` is ``min(1, S/K)`` (int ``1`` when S >= K);
    ``f1_at_k`` is exactly :func:`calculate_metrics`.
    """

    precision: Optional[float]
    recall_at_k: Number
    f1_at_k: Number


def f1_at_k(supported: Number, not_supported: Number, *, max_claims: Number = DEFAULT_MAX_CLAIMS) -> F1AtK:
    """Precision, recall@K and F1@K of one response (same checks as
    :func:`calculate_metrics`).

    >>> f1_at_k(12, 2, max_claims=64)
    F1AtK(precision=0.8571428571428571, recall_at_k=0.1875, f1_at_k=0.30769230769230765)
    >>> f1_at_k(0, 0)
    F1AtK(precision=None, recall_at_k=0.0, f1_at_k=0)
    """
    f1 = calculate_metrics(supported, not_supported, max_claims)
    total = supported + not_supported
    precision = float(supported / total) if total != 0 else None
    recall = min(1, float(supported / max_claims))
    return F1AtK(precision, recall, f1)


def round_to_sigfigs(num: Number, num_sigfigs: int, *, diagnostics: Optional[List[str]] = None) -> Number:
    """SAFE's ``round_to_sigfigs`` (used to print p-values).

    ``num == 0`` or ``num_sigfigs <= 0`` gives the int ``0`` (checked first, so
    even for nan); nan is returned unchanged; otherwise
    ``round(num, sigfigs - floor(log10|num|) - 1)`` with Python's half-even
    ``round`` (an int stays an int).  Where the reference raises OverflowError
    (``±inf``, or ``DBL_MAX`` with few digits) ``num`` is returned unchanged and
    a message is appended to ``diagnostics``.

    >>> round_to_sigfigs(12345.6789, 3)
    12300.0
    >>> round_to_sigfigs(9999, 1)
    10000
    >>> round_to_sigfigs(float('inf'), 3)
    inf
    """
    if num == 0 or num_sigfigs <= 0:
        return 0
    if math.isnan(num):
        return num
    try:
        return round(num, num_sigfigs - int(math.floor(math.log10(abs(num)))) - 1)
    except (OverflowError, ValueError) as exc:
        if diagnostics is not None:
            diagnostics.append(f"round_to_sigfigs({num!r}, {num_sigfigs}): {exc}; value kept unrounded")
        return num


# ---------------------------------------------------------------------------
# B. Label counting
# ---------------------------------------------------------------------------


def count_labels(checked_statements: Sequence[Any], *, diagnostics: Optional[List[str]] = None) -> Dict[str, int]:
    """Count SAFE annotations like the rater does.

    The three canonical keys are always present, in the order Supported,
    Irrelevant, Not Supported.  Items that are not objects, or whose
    ``annotation`` is empty, are skipped; matching is case-insensitive; an
    unknown annotation is counted under its raw text (and reported in
    ``diagnostics``).

    >>> count_labels([{"annotation": "supported"}, None, {"annotation": ""},
    ...               {"annotation": "Not Supported"}, {"annotation": "Maybe"}])
    {'Supported': 1, 'Irrelevant': 0, 'Not Supported': 1, 'Maybe': 1}
    """
    counts: Dict[str, int] = {SUPPORTED_LABEL: 0, IRRELEVANT_LABEL: 0, NOT_SUPPORTED_LABEL: 0}
    for index, item in enumerate(checked_statements):
        if not isinstance(item, Mapping):
            continue
        annotation = item.get("annotation")
        if not annotation:
            continue
        if not isinstance(annotation, str):  # the reference would crash on .lower()
            if diagnostics is not None:
                diagnostics.append(f"checked_statements[{index}]: annotation {annotation!r} is not a string; skipped")
            continue
        for label in (SUPPORTED_LABEL, IRRELEVANT_LABEL, NOT_SUPPORTED_LABEL):
            if annotation.lower() == label.lower():
                counts[label] += 1
                break
        else:
            counts[annotation] = counts.get(annotation, 0) + 1
            if diagnostics is not None:
                diagnostics.append(f"checked_statements[{index}]: unknown annotation {annotation!r} counted as is")
    return counts


# ---------------------------------------------------------------------------
# D. numpy float64 sum / mean / std emulation
# ---------------------------------------------------------------------------


def _seq_mean(values: Sequence[Number]) -> float:
    # Python <= 3.11 ``sum(list) / len(list)``: left-to-right, starting at int 0
    total: Number = 0
    for v in values:
        total = total + v
    return total / len(values)


def _py312_sum(values: Sequence[Number]) -> Number:
    # CPython >= 3.12 ``sum()`` over ints and floats: exact int prefix; the
    # first float is added plainly; later floats use Neumaier compensation,
    # later ints are added plainly; the compensation is added at the end.
    i_total: Number = 0
    k = 0
    n = len(values)
    while k < n and type(values[k]) is int:
        i_total += values[k]
        k += 1
    if k == n:
        return i_total
    if type(values[k]) is not float:
        total: Number = i_total
        for v in values[k:]:
            total = total + v
        return total
    f_total = i_total + values[k]
    comp = 0.0
    for v in values[k + 1 :]:
        if type(v) is float:
            t = f_total + v
            if abs(f_total) >= abs(v):
                comp += (f_total - t) + v
            else:
                comp += (v - t) + f_total
            f_total = t
        else:
            f_total += float(v)
    if comp and math.isfinite(comp):
        f_total += comp
    return f_total


# ---------------------------------------------------------------------------
# C. run_eval aggregation
# ---------------------------------------------------------------------------


class SafeEvalResult(NamedTuple):
    """Result of :func:`run_eval_aggregate`.

    ``result`` is a new experiment dict with the per-prompt ``f1_<key>`` and the
    ``side{n}_avg_*``/``side{n}_std_*`` keys added exactly where ``run_eval`` puts
    them (serialise with :func:`dumps_reference`).  ``added`` holds the added
    top-level keys in order, ``per_prompt_f1`` the F1 per prompt and rated side
    (None for a prompt without eval data), ``f1_key`` the per-prompt key name
    and ``max_claims`` the K actually used.
    """

    result: Dict[str, Any]
    added: Dict[str, float]
    per_prompt_f1: Dict[str, List[Optional[Number]]]
    rated_sides: List[str]
    f1_key: str
    max_claims: int
    diagnostics: List[str]


_UNRATED_METHODS = ("none", "placeholder")
_LABELS = (SUPPORTED_LABEL, IRRELEVANT_LABEL, NOT_SUPPORTED_LABEL)


def run_eval_aggregate(
    result: Mapping[str, Any],
    *,
    max_claim: int = -1,
    eval_side1: bool = True,
    eval_side2: bool = True,
    variants: Iterable[str] = (),
) -> SafeEvalResult:
    """Reproduce ``eval/run_eval.py``'s ``add_aggregation`` + ``print_results``.

    Rated sides: side n iff its flag is true and ``result['side_n']`` is not
    ``'none'``/``'placeholder'`` (exact, case-sensitive).  For every prompt of a
    rated side whose ``side{n}_posthoc_eval_data`` has the three label keys,
    ``f1_<max_claim>`` = :func:`calculate_metrics` with K = ``max_claim`` when it
    is > 0, else the default 100 -- the key keeps the raw flag (``f1_-1``)
    unless the variant ``f1_key_effective_k`` is on.  Prompts without eval data
    (a failed rating) are ignored.  Then, per rated side, the numeric keys of
    prompt 0's eval data (in order) are averaged with numpy's pairwise mean and
    population std into ``side{n}_avg_<metric>`` / ``side{n}_std_<metric>``.
    When prompt 0 has no eval data the whole side is skipped (quirk, reported in
    ``diagnostics``) unless ``aggregate_all_rated`` is on.  The label keys are
    only checked to apply the rater logic that already happened; SAFE itself
    (the LLM rating) is not run here.

    The input is not modified.  Raises :class:`ScoringError` naming the prompt
    index where the reference would crash (a metric missing from a rated
    prompt, a non-numeric value, negative counts).
    """
    names = _check_variants(variants, VARIANTS)
    diagnostics: List[str] = []
    if not isinstance(result, Mapping):
        raise ScoringError("the experiment result must be a JSON object")
    out: Dict[str, Any] = copy.deepcopy(dict(result))
    prompts = out.get("per_prompt_data")
    if not isinstance(prompts, list):
        raise ScoringError("missing or non-list top-level key", field="per_prompt_data")
    rated: List[str] = []
    for n, flag in ((1, eval_side1), (2, eval_side2)):
        key = f"side_{n}"
        if key not in out:
            raise ScoringError("missing top-level key", field=key)
        if flag and out[key] not in _UNRATED_METHODS:
            rated.append(f"side{n}")
        elif flag:
            diagnostics.append(f"{key} is {out[key]!r}: not rated")
    effective_k = max_claim if max_claim > 0 else DEFAULT_MAX_CLAIMS
    key_value = effective_k if "f1_key_effective_k" in names else max_claim
    f1_key = f"f1_{key_value}"
    per_prompt_f1: Dict[str, List[Optional[Number]]] = {}
    added: Dict[str, float] = {}

    for side in rated:
        eval_key = f"{side}_posthoc_eval_data"
        f1s: List[Optional[Number]] = []
        for index, prompt in enumerate(prompts):
            if not isinstance(prompt, Mapping):
                raise ScoringError("prompt is not an object", record=f"prompt {index}")
            data = prompt.get(eval_key)
            if eval_key not in prompt:
                f1s.append(None)
                diagnostics.append(f"prompt {index}: no {eval_key} (rating failed or not run)")
                continue
            if not isinstance(data, dict):
                raise ScoringError("eval data is not an object", record=f"prompt {index}", field=eval_key)
            if all(label in data for label in _LABELS):
                s, ns = data[SUPPORTED_LABEL], data[NOT_SUPPORTED_LABEL]
                for field, value in ((SUPPORTED_LABEL, s), (NOT_SUPPORTED_LABEL, ns)):
                    if not _is_number(value):
                        raise ScoringError(
                            f"expected a number, got {value!r}",
                            record=f"prompt {index}",
                            field=f"{eval_key}.{field}",
                        )
                try:
                    f1 = calculate_metrics(s, ns, effective_k)
                except ScoringError as exc:
                    raise ScoringError(exc.msg, record=f"prompt {index}", field=eval_key) from None
                data[f1_key] = f1
                f1s.append(f1)
            else:
                f1s.append(None)
                diagnostics.append(f"prompt {index}: {eval_key} lacks a label count; no {f1_key}")
        per_prompt_f1[side] = f1s

    for side in rated:
        eval_key = f"{side}_posthoc_eval_data"
        first: Optional[Mapping[str, Any]] = None
        if prompts and eval_key in prompts[0]:
            first = prompts[0][eval_key]
        elif "aggregate_all_rated" in names:
            for prompt in prompts:
                if eval_key in prompt:
                    first = prompt[eval_key]
                    break
        if first is None:
            if not prompts:
                diagnostics.append(f"{side}: per_prompt_data is empty; side not aggregated")
            elif "aggregate_all_rated" in names:
                diagnostics.append(f"{side}: no prompt has {eval_key}; side not aggregated")
            else:
                diagnostics.append(f"{side}: prompt 0 has no {eval_key}, so the reference skips the whole side")
            continue
        metrics = [k for k, v in first.items() if isinstance(v, (int, float))]
        for metric in metrics:
            values: List[Number] = []
            for index, prompt in enumerate(prompts):
                if eval_key not in prompt:
                    continue
                data = prompt[eval_key]
                if metric not in data:
                    raise ScoringError(
                        f"metric {metric!r} of prompt 0 is missing here",
                        record=f"prompt {index}",
                        field=eval_key,
                    )
                value = data[metric]
                if not isinstance(value, (int, float)):
                    raise ScoringError(
                        f"expected a number, got {value!r}",
                        record=f"prompt {index}",
                        field=f"{eval_key}.{metric}",
                    )
                values.append(value)
            avg = np_mean(values)
            std = np_std(values)
            out[f"{side}_avg_{metric}"] = avg
            out[f"{side}_std_{metric}"] = std
            added[f"{side}_avg_{metric}"] = avg
            added[f"{side}_std_{metric}"] = std
    return SafeEvalResult(out, added, per_prompt_f1, rated, f1_key, effective_k, diagnostics)


def dumps_reference(result: Any) -> str:
    """The exact text ``json.dump(result, f)`` writes (defaults: no indent,
    ASCII escapes, ``NaN`` for nan, no trailing newline)."""
    return json.dumps(result)


# ---------------------------------------------------------------------------
# H. FActScore
# ---------------------------------------------------------------------------


def length_penalty(num_facts: int, gamma: Number) -> float:
    """FActScore's length penalty: ``1.0`` if ``num_facts > gamma`` (strict) else
    ``exp(1 - gamma/num_facts)``.  Uses ``math.exp``; numpy's SIMD ``exp`` on
    AVX-512 CPUs can differ by 1 ulp.

    >>> length_penalty(10, 10)
    1.0
    >>> length_penalty(11, 10)
    1.0
    """
    if num_facts > gamma:
        return 1.0
    return math.exp(1 - gamma / num_facts)


class FactScoreResult(NamedTuple):
    """``FactScorer.get_score`` outputs (without the per-fact decisions).

    ``init_score`` is None when gamma is falsy (the reference omits the key).
    ``per_response_score`` has one entry per responding response, after the
    penalty.  ``respond_ratio`` counts responses whose facts are not None.
    """

    score: float
    init_score: Optional[float]
    respond_ratio: float
    num_facts_per_response: float
    per_response_score: List[float]
    num_responses: int
    num_responding: int
    diagnostics: List[str]


def factscore(
    decisions: Sequence[Optional[Sequence[bool]]],
    *,
    gamma: Optional[Number] = 10,
    ids: Optional[Sequence[str]] = None,
) -> FactScoreResult:
    """FActScore from per-fact support decisions (None = abstained / no facts).

    Per response: ``score = #supported / #facts`` (numpy mean of bools); when
    ``gamma`` is truthy the unpenalised score goes to ``init_score`` and the
    score is multiplied by :func:`length_penalty`.  Then ``score`` and
    ``init_score`` are numpy means over responding responses,
    ``respond_ratio`` the mean of ``facts is not None`` over all responses and
    ``num_facts_per_response`` the mean fact count over responding ones.  If
    nobody responds the means are nan, as in the reference.

    Crash path: an explicitly empty fact list with gamma set (reference:
    ZeroDivisionError) is treated as abstained, with a diagnostic.  With gamma
    falsy the reference gives that response a nan score (kept, diagnosed).

    >>> r = factscore([[True, False], None, [True] * 12], gamma=10)
    >>> round(r.score, 6), r.init_score, round(r.respond_ratio, 6), r.num_facts_per_response
    (0.504579, 0.75, 0.666667, 7.0)
    """
    diagnostics: List[str] = []
    scores: List[float] = []
    init_scores: List[float] = []
    responded: List[bool] = []
    lengths: List[int] = []
    for index, facts in enumerate(decisions):
        name = ids[index] if ids is not None else f"response {index}"
        if facts is not None and len(facts) == 0:
            if gamma:
                diagnostics.append(f"{name}: empty fact list treated as abstained (reference: ZeroDivisionError)")
                facts = None
            else:
                diagnostics.append(f"{name}: empty fact list gives a nan score (as the reference)")
        if facts is None:
            responded.append(False)
            continue
        responded.append(True)
        lengths.append(len(facts))
        score = np_mean([bool(d) for d in facts])
        if gamma:
            init_scores.append(score)
            score = length_penalty(len(facts), gamma) * score
        scores.append(score)
    return FactScoreResult(
        score=np_mean(scores),
        init_score=np_mean(init_scores) if gamma else None,
        respond_ratio=np_mean(responded),
        num_facts_per_response=np_mean(lengths),
        per_response_score=scores,
        num_responses=len(responded),
        num_responding=len(scores),
        diagnostics=diagnostics,
    )


_HUMAN_LABELS = ("S", "NS", "IR")


def human_label_counts(record: Mapping[str, Any], *, where: str = "") -> Optional[Dict[str, int]]:
    """Count the human labels of one FActScore labelled line (SAFE's loader).

    Returns None when ``annotations`` is missing, null or empty, or when no
    label is found; otherwise ``{"S", "IR", "NS"}`` counts.  Sentences whose
    ``human-atomic-facts`` is null or empty are skipped; any other label is an
    error (the reference asserts).
    """
    annotations = record.get("annotations")
    if not annotations:
        return None
    if not isinstance(annotations, list):
        raise ScoringError("annotations is not a list", record=where or None, field="annotations")
    counts = {"S": 0, "IR": 0, "NS": 0}
    for s_index, sentence in enumerate(annotations):
        if not isinstance(sentence, Mapping):
            raise ScoringError("sentence is not an object", record=where or None, field=f"annotations[{s_index}]")
        facts = sentence.get("human-atomic-facts")
        if not facts:
            continue
        for f_index, fact in enumerate(facts):
            label = fact.get("label") if isinstance(fact, Mapping) else None
            if label not in _HUMAN_LABELS:
                raise ScoringError(
                    f"label must be S, NS or IR, got {label!r}",
                    record=where or None,
                    field=f"annotations[{s_index}].human-atomic-facts[{f_index}].label",
                )
            counts[label] += 1
    if sum(counts.values()) == 0:
        return None
    return counts


def labeled_decisions(record: Mapping[str, Any], *, exclude_ir: bool = False, where: str = "") -> Optional[List[bool]]:
    """Per-fact decisions of one labelled response, for :func:`factscore`.

    Two formats: FActScore's labelled data (``annotations`` ->
    ``human-atomic-facts[*].label``; null annotations or zero labels give None =
    abstained) and a simple ``{"labels": [...]}`` with ``S``/``NS``/``IR`` (or
    booleans; ``null`` = abstained).  ``S`` -> True, ``NS``/``IR`` -> False
    (FActScore = S/(S+NS+IR)); ``exclude_ir`` (variant ``factscore_excl_ir``)
    drops IR facts instead (S/(S+NS)).
    """
    if "labels" in record:
        labels = record["labels"]
        if labels is None:
            return None
        if not isinstance(labels, list):
            raise ScoringError("labels must be a list or null", record=where or None, field="labels")
        out: List[bool] = []
        for index, label in enumerate(labels):
            if isinstance(label, bool):
                out.append(label)
            elif label == "S":
                out.append(True)
            elif label == "NS":
                out.append(False)
            elif label == "IR":
                if not exclude_ir:
                    out.append(False)
            else:
                raise ScoringError(
                    f"label must be S, NS, IR or a boolean, got {label!r}",
                    record=where or None,
                    field=f"labels[{index}]",
                )
        return out
    if "annotations" not in record:
        raise ScoringError("expected 'labels' or FActScore 'annotations'", record=where or None)
    counts_check = human_label_counts(record, where=where)
    if counts_check is None:
        return None
    out = []
    for sentence in record["annotations"]:
        for fact in sentence.get("human-atomic-facts") or ():
            label = fact["label"]
            if label == "S":
                out.append(True)
            elif label == "NS" or not exclude_ir:
                out.append(False)
    return out


# ---------------------------------------------------------------------------
# I. VeriScore
# ---------------------------------------------------------------------------


def veriscore_k(total_claims: Sequence[int], *, domain: str = "") -> Tuple[int, int]:
    """VeriScore's per-domain ``(K_median, K_max)``: the **upper** median
    ``sorted(v)[len(v) // 2]`` (no averaging) and the maximum.

    >>> veriscore_k([3, 9, 4, 7])
    (7, 9)
    """
    if not total_claims:
        raise ScoringError("no responses to compute K from", record=f"domain {domain!r}")
    ordered = sorted(total_claims)
    return ordered[len(ordered) // 2], ordered[-1]


def veriscore_f1(
    supported: Number,
    total_claims: Number,
    k: Number,
    *,
    diagnostics: Optional[List[str]] = None,
    where: str = "",
) -> Number:
    """VeriScore's per-response F1@K: ``P = S/total``, ``R = min(S/K, 1)``,
    ``2PR/(P+R)`` if ``R > 0`` else int ``0``.  ``total == 0`` (reference:
    ZeroDivisionError) gives int ``0`` with a diagnostic; ``K <= 0`` is an error.

    >>> veriscore_f1(12, 14, 20)
    0.7058823529411764
    >>> veriscore_f1(0, 5, 20)
    0
    """
    if total_claims == 0:
        if diagnostics is not None:
            diagnostics.append(f"{where or 'response'}: total_claims is 0; F1 set to 0")
        return 0
    if k <= 0:
        raise ScoringError(f"K is {k!r}; it must be positive", record=where or None)
    prec = supported / total_claims
    rec = min(supported / k, 1)
    if rec > 0:
        return 2 * prec * rec / (prec + rec)
    return 0


class VeriScoreRow(NamedTuple):
    """One (model, domain) line: mean F1@K_median (the VeriScore) and F1@K_max."""

    model: str
    domain: str
    n: int
    k_median: int
    k_max: int
    veriscore: float
    f1_at_k_max: float


class VeriScoreResult(NamedTuple):
    domains: Dict[str, Tuple[int, int]]
    rows: List[VeriScoreRow]
    diagnostics: List[str]


def veriscore(records: Sequence[Mapping[str, Any]], *, variants: Iterable[str] = ()) -> VeriScoreResult:
    """VeriScore per model and domain from ``{model?, domain, supported,
    total_claims, abstained?}`` records (already validated).

    K is computed per domain over every model's non-abstained responses; means
    are Python's ``sum(list) / len(list)`` written out as a left-to-right sum
    (Python <= 3.11 bits on every version) unless ``veriscore_py312_sum`` asks
    for the compensated sum of Python >= 3.12.  Rows are ordered by first
    appearance of (model, domain).
    """
    names = _check_variants(variants, VARIANTS)
    diagnostics: List[str] = []
    pools: Dict[str, List[int]] = {}
    groups: Dict[Tuple[str, str], List[Mapping[str, Any]]] = {}
    for rec in records:
        if rec.get("abstained"):
            continue
        domain = str(rec["domain"])
        model = str(rec.get("model", ""))
        pools.setdefault(domain, []).append(rec["total_claims"])
        groups.setdefault((model, domain), []).append(rec)
    domains = {d: veriscore_k(v, domain=d) for d, v in pools.items()}

    def mean(values: List[Number]) -> float:
        if "veriscore_py312_sum" in names:
            return _py312_sum(values) / len(values)
        return _seq_mean(values)

    rows = []
    for (model, domain), recs in groups.items():
        k_med, k_max = domains[domain]
        if k_med <= 0 and any(r["total_claims"] != 0 for r in recs):
            # the reference divides by K: ZeroDivisionError
            raise ScoringError(
                "K_median is 0 (most responses have no claims); F1@K is undefined",
                record=f"domain {domain!r}",
            )
        f_med = [
            veriscore_f1(
                r["supported"],
                r["total_claims"],
                k_med,
                diagnostics=diagnostics,
                where=str(r.get("id", f"{model}/{domain}")),
            )
            for r in recs
        ]
        f_max = [veriscore_f1(r["supported"], r["total_claims"], k_max) for r in recs]
        rows.append(VeriScoreRow(model, domain, len(recs), k_med, k_max, mean(f_med), mean(f_max)))
    return VeriScoreResult(domains, rows, diagnostics)


# ---------------------------------------------------------------------------
# E. Correlations (scipy 1.12 pearsonr / spearmanr) in the stdlib
# ---------------------------------------------------------------------------


class CorrelationResult(NamedTuple):
    """A correlation coefficient and its two-sided p-value (nan when undefined)."""

    statistic: float
    pvalue: float


_NAN_RESULT = CorrelationResult(math.nan, math.nan)


_STIRLING = (
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360360.0,
    1.0 / 156.0,
    -3617.0 / 122400.0,
)
_LARGE = 10.0


def _stirling_corr(z: float) -> float:
    # lgamma(z) - ((z - 0.5) ln z - z + 0.5 ln(2 pi)), for z >= 10
    inv = 1.0 / z
    inv2 = inv * inv
    total = 0.0
    for coef in reversed(_STIRLING):
        total = total * inv2 + coef
    return total * inv


def _log_front(a: float, b: float, x: float) -> float:
    """``log(x**a * (1-x)**b / B(a, b))``.

    With large a and/or b the big ``lgamma`` terms cancel; writing them in
    Stirling form and combining the logarithms first keeps the absolute error
    near ``a * 1e-16`` instead of ``lgamma(a + b) * 1e-16``.
    """
    c = a + b
    if a >= _LARGE and b >= _LARGE:
        return (
            a * math.log(x * c / a)
            + b * math.log((1.0 - x) * c / b)
            + 0.5 * math.log(a * b / c)
            - 0.5 * math.log(2.0 * math.pi)
            + _stirling_corr(c)
            - _stirling_corr(a)
            - _stirling_corr(b)
        )
    if a >= _LARGE or b >= _LARGE:
        big, small = (a, b) if a >= _LARGE else (b, a)
        x_big, x_small = (x, 1.0 - x) if a >= _LARGE else (1.0 - x, x)
        # lgamma(c) - lgamma(big) in Stirling form, then combine with big*ln(x_big)
        return (
            big * math.log(x_big * c / big)
            - 0.5 * math.log1p(small / big)
            + small * math.log(x_small * c)
            - small
            - math.lgamma(small)
            + _stirling_corr(c)
            - _stirling_corr(big)
        )
    return a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(c))


def _betacf(a: float, b: float, x: float) -> float:
    # continued fraction of the incomplete beta, modified Lentz
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 100000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta ``I_x(a, b)``: modified Lentz continued
    fraction with a Stirling/``lgamma`` prefactor (see ``_log_front``); a few
    1e-14 relative in the tails used for the p-values.

    >>> round(betainc(2.0, 3.0, 0.4), 12)
    0.5248
    """
    if math.isnan(x) or math.isnan(a) or math.isnan(b) or a <= 0 or b <= 0:
        return math.nan
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = _log_front(a, b, x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _as_floats(values: Sequence[Any], name: str) -> List[float]:
    out = []
    for index, v in enumerate(values):
        if not _is_number(v):
            raise ScoringError(f"expected a number, got {v!r}", field=f"{name}[{index}]")
        out.append(float(v))
    return out


def _check_pair(x: Sequence[Number], y: Sequence[Number]) -> Tuple[List[float], List[float]]:
    xf, yf = _as_floats(x, "x"), _as_floats(y, "y")
    if len(xf) != len(yf):
        raise ScoringError(f"x has {len(xf)} values but y has {len(yf)}")
    return xf, yf


def _sign(v: float) -> float:
    return 1.0 if v > 0 else (-1.0 if v < 0 else (0.0 if v == 0 else math.nan))


def pearson(x: Sequence[Number], y: Sequence[Number], *, variants: Iterable[str] = ()) -> CorrelationResult:
    """scipy 1.12 ``pearsonr(x, y)`` (two-sided), within 1e-12.

    n < 2 gives nan/nan (scipy raises); a constant column gives nan/nan;
    n == 2 gives ``±1.0`` (nan with a nan input) with p = 1.0; otherwise a nan
    input gives nan/nan.  Otherwise the numpy-pairwise
    means are subtracted and ``r = dot(xm/|xm|, ym/|ym|)`` clipped to [-1, 1]
    with correctly-rounded-ish (``fsum``) norm and dot; the BLAS kernels of the
    reference are CPU dependent, hence the tolerance.  ``p = 2 I_{(1-|r|)/2}(a,
    a)`` with ``a = n/2 - 1``.  Variant ``pearson_fsum`` uses fsum means.
    """
    names = _check_variants(variants, VARIANTS)
    xf, yf = _check_pair(x, y)
    n = len(xf)
    if n < 2:
        return _NAN_RESULT
    if all(v == xf[0] for v in xf) or all(v == yf[0] for v in yf):
        return _NAN_RESULT
    if n == 2:  # scipy returns p = 1.0 here even when r is nan
        return CorrelationResult(_sign(xf[1] - xf[0]) * _sign(yf[1] - yf[0]), 1.0)
    if any(math.isnan(v) for v in xf) or any(math.isnan(v) for v in yf):
        return _NAN_RESULT
    if "pearson_fsum" in names:
        xmean, ymean = math.fsum(xf) / n, math.fsum(yf) / n
        xm = [v - xmean for v in xf]
        ym = [v - ymean for v in yf]
        r = math.fsum(a * b for a, b in zip(xm, ym)) / math.sqrt(
            math.fsum(a * a for a in xm) * math.fsum(b * b for b in ym)
        )
    else:
        xmean, ymean = np_mean(xf), np_mean(yf)
        xm = [v - xmean for v in xf]
        ym = [v - ymean for v in yf]
        nx = math.sqrt(math.fsum(a * a for a in xm))
        ny = math.sqrt(math.fsum(b * b for b in ym))
        r = math.fsum((a / nx) * (b / ny) for a, b in zip(xm, ym))
    r = max(min(r, 1.0), -1.0)
    ab = n / 2 - 1
    # scipy evaluates beta(a, a, loc=-1, scale=2).sf(|r|): the standardised
    # point (|r| + 1) / 2 is rounded first (so |r| = 1 - 2**-53 gives p = 0.0)
    p = 2 * betainc(ab, ab, 1.0 - (abs(r) + 1.0) / 2.0)
    return CorrelationResult(r, p)


def _rankdata(values: Sequence[float]) -> List[float]:
    # scipy.stats.rankdata(method='average'): ties get the mean 1-based rank
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    n = len(values)
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + 1 + j + 1) / 2.0
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    return ranks


def spearman(x: Sequence[Number], y: Sequence[Number]) -> CorrelationResult:
    """scipy 1.12 ``spearmanr(x, y)`` (two-sided), bit for bit for the statistic.

    Average ranks, centred on ``(n+1)/2``; the products are exact, summed with
    ``fsum``; ``c = S * (1.0/(n-1))``, then ``(c_xy / sd_y) / sd_x`` clipped.
    n <= 1, a constant column or any nan -> nan/nan.  ``p`` from Student's t
    with ``dof = n - 2`` as ``I_{dof/(dof+t^2)}(dof/2, 1/2)``; n == 2 gives
    ``±0.9999999999999999`` with p nan (dof 0).
    """
    xf, yf = _check_pair(x, y)
    n = len(xf)
    if n <= 1:
        return _NAN_RESULT
    if any(math.isnan(v) for v in xf) or any(math.isnan(v) for v in yf):
        return _NAN_RESULT
    if all(v == xf[0] for v in xf) or all(v == yf[0] for v in yf):
        return _NAN_RESULT
    rx, ry = _rankdata(xf), _rankdata(yf)
    centre = (n + 1) / 2.0
    cx = [v - centre for v in rx]
    cy = [v - centre for v in ry]
    inv = 1.0 / (n - 1)
    sxx = math.fsum(a * a for a in cx) * inv
    syy = math.fsum(b * b for b in cy) * inv
    sxy = math.fsum(a * b for a, b in zip(cx, cy)) * inv
    rs = (sxy / math.sqrt(syy)) / math.sqrt(sxx)
    rs = max(min(rs, 1.0), -1.0)
    dof = n - 2
    if dof <= 0:
        return CorrelationResult(rs, math.nan)
    denom = (rs + 1.0) * (1.0 - rs)
    if denom == 0.0:
        return CorrelationResult(rs, 0.0)
    t = rs * math.sqrt(max(dof / denom, 0.0))
    z = dof / (dof + t * t)
    return CorrelationResult(rs, betainc(dof / 2.0, 0.5, z))


class StudyResult(NamedTuple):
    """One metric of the SAFE-vs-human study: pairs used and both correlations."""

    metric: str
    n: int
    pearson: CorrelationResult
    spearman: CorrelationResult


def study_metrics_human(counts: Mapping[str, int]) -> Dict[str, Number]:
    """FActScore-side metric dict of the study from ``{"S", "IR", "NS"}`` counts:
    ``supported``, ``irrelevant``, ``not_supported``, ``num_claims`` (= S+IR+NS,
    IR included) and ``f1_100`` (always the default K).

    >>> study_metrics_human({"S": 7, "IR": 9, "NS": 19})["f1_100"]
    0.1111111111111111
    """
    s, ir, ns = counts["S"], counts["IR"], counts["NS"]
    return {
        "supported": s,
        "irrelevant": ir,
        "not_supported": ns,
        "num_claims": s + ir + ns,
        "f1_100": calculate_metrics(s, ns),
    }


_SAFE_KEYS = (
    ("supported", ("supported", SUPPORTED_LABEL)),
    ("irrelevant", ("irrelevant", IRRELEVANT_LABEL)),
    ("not_supported", ("not_supported", NOT_SUPPORTED_LABEL)),
    ("num_claims", ("num_claims",)),
)


def study_metrics_safe(record: Mapping[str, Any], *, where: str = "") -> Dict[str, Number]:
    """SAFE-side metric dict of the study from a SAFE result (``Supported``,
    ``Not Supported``, ``Irrelevant``, ``num_claims``) or the same names in
    snake case; absent keys stay absent (``identify_facts`` only gives
    ``num_claims``).  ``f1_100`` is added when S and NS are both present.
    """
    out: Dict[str, Number] = {}
    for name, keys in _SAFE_KEYS:
        for key in keys:
            if key in record and record[key] is not None:
                value = record[key]
                if not _is_number(value):
                    raise ScoringError(f"expected a number, got {value!r}", record=where or None, field=key)
                out[name] = value
                break
    if "supported" in out and "not_supported" in out:
        try:
            out["f1_100"] = calculate_metrics(out["supported"], out["not_supported"])
        except ScoringError as exc:
            raise ScoringError(exc.msg, record=where or None) from None
    return out


def correlation_study(
    factscore_side: Sequence[Mapping[str, Number]],
    safe_side: Sequence[Mapping[str, Number]],
    *,
    variants: Iterable[str] = (),
) -> List[StudyResult]:
    """``eval/correlation_vs_factscore.compute_correlation``.

    For each metric name present in both sides (sorted here; the reference
    iterates a set), build the two columns with -1 for a missing value, drop
    every index where either side is -1 (a genuine -1 is dropped too), and
    correlate FActScore first.  With <= 1 pair left the result is nan/nan.
    """
    if len(factscore_side) != len(safe_side):
        raise ScoringError(f"{len(factscore_side)} human responses but {len(safe_side)} SAFE responses")
    metric_names: Set[str] = set()
    for d in factscore_side:
        metric_names |= set(d)
    safe_names: Set[str] = set()
    for d in safe_side:
        safe_names |= set(d)
    results = []
    for metric in sorted(metric_names & safe_names):
        xs: List[Number] = []
        ys: List[Number] = []
        for fd, sd in zip(factscore_side, safe_side):
            a = fd.get(metric, -1)
            b = sd.get(metric, -1)
            if a == -1 or b == -1:
                continue
            xs.append(a)
            ys.append(b)
        if len(xs) <= 1:
            results.append(StudyResult(metric, len(xs), _NAN_RESULT, _NAN_RESULT))
            continue
        results.append(StudyResult(metric, len(xs), pearson(xs, ys, variants=variants), spearman(xs, ys)))
    return results


# ---------------------------------------------------------------------------
# K selection and bootstrap
# ---------------------------------------------------------------------------

_K_RULE = re.compile(r"^p(\d{1,3})$")


def select_k(relevant_counts: Sequence[Number], rule: str) -> int:
    """Choose K from per-response relevant-fact counts (S + NS).

    ``median`` is the **upper** median ``sorted(v)[n // 2]`` (VeriScore's
    convention; the paper's K=64 was "the median number of relevant facts"
    without saying which), ``max`` the maximum, ``pNN`` the nearest-rank
    percentile ``sorted(v)[max(ceil(NN/100 * n), 1) - 1]``.  The result must be
    a positive integer.

    >>> select_k([10, 64, 3, 70], "median"), select_k([10, 64, 3, 70], "max")
    (64, 70)
    >>> select_k([10, 64, 3, 70], "p25")
    3
    """
    if not relevant_counts:
        raise ScoringError("no responses to choose K from", field="max_claims")
    ordered = sorted(relevant_counts)
    n = len(ordered)
    if rule == "median":
        k = ordered[n // 2]
    elif rule == "max":
        k = ordered[-1]
    else:
        match = _K_RULE.match(rule)
        if not match or int(match.group(1)) > 100:
            raise ScoringError(
                f"K rule must be an integer, median, max or pNN (0..100), got {rule!r}",
                field="max_claims",
            )
        pct = int(match.group(1))
        k = ordered[max(int(math.ceil(pct * n / 100.0)), 1) - 1]
    if k != int(k) or k <= 0:
        raise ScoringError(f"rule {rule!r} gives K = {k!r}; K must be a positive integer", field="max_claims")
    return int(k)


class BootstrapCI(NamedTuple):
    """Percentile bootstrap interval for a mean (pairwise-summed resample means)."""

    mean: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int


def bootstrap_mean_ci(
    values: Sequence[Number],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    """Seeded percentile bootstrap CI for the mean.

    ``random.Random(seed)`` draws ``n_resamples`` resamples of size n with
    replacement (``Random.choices``); the bounds are the nearest-rank quantiles
    ``floor(alpha/2 * B)`` and ``ceil((1 - alpha/2) * B) - 1`` of the sorted
    resample means.  Deterministic for a given seed on every Python >= 3.2.
    Empty input gives nan bounds.
    """
    if n_resamples < 1:
        raise ScoringError("must be >= 1", field="bootstrap")
    if not 0.0 < confidence < 1.0:
        raise ScoringError("must be between 0 and 1", field="confidence")
    n = len(values)
    mean = np_mean(values)
    if n == 0:
        return BootstrapCI(mean, math.nan, math.nan, confidence, n_resamples, seed)
    rng = random.Random(seed)
    floats = [float(v) for v in values]
    means = []
    for _ in range(n_resamples):
        means.append(pairwise_sum(rng.choices(floats, k=n), 0, n) / n)
    means.sort()
    alpha = 1.0 - confidence
    lo = int(math.floor(alpha / 2.0 * n_resamples))
    hi = min(int(math.ceil((1.0 - alpha / 2.0) * n_resamples)) - 1, n_resamples - 1)
    return BootstrapCI(mean, means[lo], means[max(hi, lo)], confidence, n_resamples, seed)
