"""Long-form factuality: SAFE F1@K, FActScore, VeriScore and correlations.

Reference implementations (user documentation: ``docs/factuality.md``):

* SAFE / LongFact, ``google-deepmind/long-form-factuality@9d27158``:
  ``eval/metric_utils.py`` (F1@K, ``round_to_sigfigs``), the label counting of the
  SAFE rater, ``eval/run_eval.py`` (per-prompt ``f1_<flag>`` and the
  ``side{n}_avg_*`` / ``side{n}_std_*`` aggregation) and
  ``eval/correlation_vs_factscore.py`` (the SAFE-vs-human study);
* FActScore, ``shmsw25/FActScore@f28272d`` (``FactScorer.get_score``);
* VeriScore, ``Yixiao-Song/VeriScore@7dd3352`` (per-domain K and F1@K).

The family follows the contract of ``docs/adding-a-family.md``: per scoring
command (``f1k``, ``safe``, ``factscore``, ``veriscore``, ``correlate``) an item
scorer (``<command>_item``), a registered accumulator with exact merges and a
file-level function (``<command>_file``); the CLI lives in ``factuality/cli.py``.
The per-item work goes through :func:`~rageval_min._parallel.accumulate_items`
(``--jobs``, ``--engine dask``; every output byte-identical), the file-level
functions end with :func:`~rageval_min._contract.finish` (``--emit-partial``),
and :data:`REPORT_FORMATS` renders the family's own formats (``jsonl``,
``safe``) for the CLI and ``rageval-min merge``.
Accumulators keep, in input order, the values that numpy's pairwise sums,
Python's sequential sums, ranks and the bootstrap need (their state grows with
the input: 8 bytes per scored line for ``f1k``), and integer counts otherwise.

numpy's float64 ``mean``/``std`` are emulated bit for bit (pairwise summation,
see :func:`np_sum`), scipy's ``spearmanr`` bit for bit, ``pearsonr`` and both
p-values within a 1e-12 tolerance (Pearson: see :func:`pearson_tolerance`),
using only the standard library.

Reference quirks kept on purpose:

* ``calculate_metrics`` returns the **int** ``0`` when nothing is supported, and
  recall is the int ``1`` when S >= K (``min(1, S/K)`` keeps its first argument
  on ties), so F1 can be the float ``1.0`` or the int ``0``;
* the check order is K <= 0, then negative counts, then S == 0;
* the per-prompt key carries the *raw* ``--max_claim`` flag (``f1_-1`` means K=100);
* ``run_eval`` summarises every side rated in ``per_prompt_data[0]``, whatever
  the ``--eval_side`` flags and side names say, and leaves a side that prompt 0
  lacks untouched (``eval/run_eval.py``; variant ``sides_by_flags`` is the earlier
  flag-based choice);
* means are over per-response F1 values, standard deviations are population ones.
"""

import copy
import functools
import json
import math
import os
import random
import re
from array import array
from typing import (
    Any,
    Callable,
    ClassVar,
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

from .._contract import Accumulator, ItemRow, finish, partial_requested, register_accumulator
from .._io import iter_records, read_json
from .._parallel import accumulate_items
from .._signature import make_signature
from .._stats import betainc, betainc_complement, np_mean, np_std, np_sum, pairwise_sum, rankdata
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report, overall_pass

__all__ = [
    "COMMAND_VARIANTS",
    "CORRELATE_MODES",
    "CorrelateAccumulator",
    "F1kAccumulator",
    "JUDGE_COUNTS",
    "JudgeAccumulator",
    "FAMILY",
    "FactScoreAccumulator",
    "MAX_BOOTSTRAP",
    "REFERENCE",
    "REFERENCES",
    "REPORT_FORMATS",
    "SafeAccumulator",
    "VeriScoreAccumulator",
    "check_bootstrap",
    "check_variants",
    "correlate_file",
    "correlate_item",
    "correlate_table_file",
    "f1k_file",
    "f1k_item",
    "f1k_output_line",
    "gate_trailer",
    "record_name",
    "factscore_file",
    "factscore_item",
    "k_rule_param",
    "labeled_files",
    "parse_max_claims",
    "parse_number",
    "pearson_tolerance",
    "safe_evaluate",
    "safe_file",
    "safe_items",
    "study_file",
    "veriscore_file",
    "veriscore_item",
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

FAMILY = "factuality"
REF_SAFE = "google-deepmind/long-form-factuality@9d27158"
REF_FACTSCORE = "shmsw25/FActScore@f28272d"
REF_VERISCORE = "Yixiao-Song/VeriScore@7dd3352"
REFERENCE = REF_SAFE
"""The family's main reference (SAFE); :data:`REFERENCES` gives each command's."""

REFERENCES: Dict[str, str] = {
    "f1k": REF_SAFE,
    "safe": REF_SAFE,
    "factscore": REF_FACTSCORE,
    "veriscore": REF_VERISCORE,
    "correlate": REF_SAFE,
    "judge": REF_SAFE,
}
"""Command -> the upstream ``owner/repo@commit`` it mirrors."""

VARIANTS = (
    "aggregate_all_rated",
    "f1_key_effective_k",
    "factscore_excl_ir",
    "pearson_fsum",
    "sides_by_flags",
    "veriscore_py312_sum",
)
"""The opt-in variants of this family (each changes numbers and is recorded in the signature)."""

COMMAND_VARIANTS: Dict[str, Tuple[str, ...]] = {
    "f1k": (),
    "safe": ("aggregate_all_rated", "f1_key_effective_k", "sides_by_flags"),
    "factscore": ("factscore_excl_ir",),
    "veriscore": ("veriscore_py312_sum",),
    "correlate": ("pearson_fsum",),
    "judge": (),
}
"""Command -> the variants that apply to it."""

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


def check_variants(variants: Iterable[str], command: Optional[str] = None) -> Tuple[str, ...]:
    """Sorted, de-duplicated variant names; an unknown one (for ``command``, when given) is a ScoringError.

    >>> check_variants(["pearson_fsum", "pearson_fsum"], "correlate")
    ('pearson_fsum',)
    """
    allowed = VARIANTS if command is None else COMMAND_VARIANTS.get(command, ())
    return tuple(_check_variants(variants, allowed))


def signature(
    *, variants: Iterable[str] = (), params: Sequence[Tuple[str, object]] = (), command: Optional[str] = None
) -> str:
    """The family's reproducibility signature (``family=factuality``, ``ref=`` the command's reference)."""
    ref = REFERENCES.get(command, REFERENCE) if command else REFERENCE
    return make_signature(FAMILY, ref, check_variants(variants, command), params)


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
    report: Optional[Report] = None


_UNRATED_METHODS = ("none", "placeholder")
_LABELS = (SUPPORTED_LABEL, IRRELEVANT_LABEL, NOT_SUPPORTED_LABEL)


def _selected_sides(
    out: Mapping[str, Any],
    prompts: List[Any],
    names: Sequence[str],
    eval_side1: bool,
    eval_side2: bool,
    diagnostics: List[str],
) -> List[str]:
    """The sides ``run_eval`` aggregates (see :func:`run_eval_aggregate`)."""
    sides: List[str] = []
    if "sides_by_flags" in names:
        for n, flag in ((1, eval_side1), (2, eval_side2)):
            key = f"side_{n}"
            if key not in out:
                raise ScoringError("missing top-level key", field=key)
            if flag and out[key] not in _UNRATED_METHODS:
                sides.append(f"side{n}")
            elif flag:
                diagnostics.append(f"{key} is {out[key]!r}: not rated")
        return sides
    for n, flag in ((1, eval_side1), (2, eval_side2)):
        side = f"side{n}"
        eval_key = f"{side}_posthoc_eval_data"
        if f"side_{n}" not in out:  # run_eval reads both method names before rating
            raise ScoringError("missing top-level key", field=f"side_{n}")
        if not flag:
            diagnostics.append(
                f"--no-eval-side{n} ignored: run_eval aggregates every side rated in prompt 0 "
                "(variant sides_by_flags honours the flag)"
            )
        if prompts and isinstance(prompts[0], Mapping) and eval_key in prompts[0]:
            sides.append(side)
        elif "aggregate_all_rated" in names and any(isinstance(p, Mapping) and eval_key in p for p in prompts):
            sides.append(side)
        elif any(isinstance(p, Mapping) and eval_key in p for p in prompts):
            diagnostics.append(f"{side}: prompt 0 has no {eval_key}, so the reference leaves the whole side untouched")
    return sides


class _SafePlan(NamedTuple):
    """What the main process fixes before the prompts are scored (see :func:`_safe_plan`)."""

    document: Dict[str, Any]
    prompts: List[Dict[str, Any]]
    sides: List[str]
    f1_key: str
    effective_k: int
    first_metrics: List[List[str]]


def _safe_side(
    index: int, side: str, data: Any, *, f1_key: str, effective_k: int
) -> Tuple[Dict[str, Any], Optional[Number], bool, Optional[str]]:
    """One rated side of one prompt: ``(eval data with f1_<key>, F1, key written, diagnostic)``."""
    eval_key = f"{side}_posthoc_eval_data"
    if not isinstance(data, dict):
        raise ScoringError("eval data is not an object", record=f"prompt {index}", field=eval_key)
    data = dict(data)
    if not all(label in data for label in _LABELS):
        return data, None, False, f"prompt {index}: {eval_key} lacks a label count; no {f1_key}"
    s, ns = data[SUPPORTED_LABEL], data[NOT_SUPPORTED_LABEL]
    for field, value in ((SUPPORTED_LABEL, s), (NOT_SUPPORTED_LABEL, ns)):
        if not _is_number(value):
            raise ScoringError(
                f"expected a number, got {value!r}", record=f"prompt {index}", field=f"{eval_key}.{field}"
            )
    try:
        f1 = calculate_metrics(s, ns, effective_k)
    except ScoringError as exc:
        raise ScoringError(exc.msg, record=f"prompt {index}", field=eval_key) from None
    data[f1_key] = f1
    return data, f1, True, None


def _safe_plan(
    result: Mapping[str, Any],
    *,
    max_claim: int,
    eval_side1: bool,
    eval_side2: bool,
    names: Sequence[str],
    diagnostics: List[str],
) -> _SafePlan:
    """Validate the document, choose the sides and K, and fix each side's metric list (prompt 0's)."""
    if not isinstance(result, Mapping):
        raise ScoringError("the experiment result must be a JSON object")
    out: Dict[str, Any] = copy.deepcopy(dict(result))
    prompts = out.get("per_prompt_data")
    if not isinstance(prompts, list):
        raise ScoringError("missing or non-list top-level key", field="per_prompt_data")
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, Mapping):
            raise ScoringError("prompt is not an object", record=f"prompt {index}")
    sides = _selected_sides(out, prompts, names, eval_side1, eval_side2, diagnostics)
    effective_k = max_claim if max_claim > 0 else DEFAULT_MAX_CLAIMS
    key_value = effective_k if "f1_key_effective_k" in names else max_claim
    f1_key = f"f1_{key_value}"
    first_metrics: List[List[str]] = []
    for side in sides:
        eval_key = f"{side}_posthoc_eval_data"
        first = next((i for i, prompt in enumerate(prompts) if eval_key in prompt), None)
        metrics: List[str] = []
        if first is not None and (first == 0 or "aggregate_all_rated" in names):
            try:
                data = _safe_side(first, side, prompts[first][eval_key], f1_key=f1_key, effective_k=effective_k)[0]
            except ScoringError:
                pass  # raised again, in order, when that prompt is scored
            else:
                metrics = [k for k, v in data.items() if isinstance(v, (int, float))]
        first_metrics.append(metrics)
    return _SafePlan(out, prompts, sides, f1_key, effective_k, first_metrics)


def _safe_prompt(
    numbered: Tuple[int, List[Tuple[bool, Any]]],
    *,
    sides: Sequence[str],
    f1_key: str,
    effective_k: int,
    first_metrics: Sequence[Sequence[str]],
) -> Tuple[Optional[ItemRow], Dict[str, Any]]:
    """The per-item work of ``safe`` (picklable): one prompt's row, and what the main process needs.

    ``numbered`` is ``(prompt index, [(present, eval data) per side])``.  The
    extra is ``{"f1": {side: F1 written}, "diags": [[...] per side]}``, or
    ``{"error": (side position, ScoringError)}`` (the row is then None): the
    main process raises the error of the first side, first prompt, as
    ``run_eval`` would meet it.
    """
    index, datas = numbered
    row: ItemRow = {"prompt": index}
    written: Dict[str, Any] = {}
    diags: List[List[str]] = []
    for pos, side in enumerate(sides):
        eval_key = f"{side}_posthoc_eval_data"
        mine: List[str] = []
        diags.append(mine)
        present, raw = datas[pos]
        if not present:
            row[side] = 0
            row[f"{side}_f1"] = None
            mine.append(f"prompt {index}: no {eval_key} (rating failed or not run)")
            continue
        try:
            data, f1, wrote, diag = _safe_side(index, side, raw, f1_key=f1_key, effective_k=effective_k)
            for metric in first_metrics[pos]:
                if metric not in data:
                    raise ScoringError(
                        f"metric {metric!r} of prompt 0 is missing here", record=f"prompt {index}", field=eval_key
                    )
                value = data[metric]
                if not isinstance(value, (int, float)):
                    raise ScoringError(
                        f"expected a number, got {value!r}", record=f"prompt {index}", field=f"{eval_key}.{metric}"
                    )
        except ScoringError as exc:
            return None, {"error": (pos, exc)}
        if diag is not None:
            mine.append(diag)
        if wrote:
            written[side] = f1
        row[side] = 1
        row[f"{side}_f1"] = f1
        for k, v in data.items():
            if isinstance(v, (int, float)):
                row[f"{side}.{k}"] = v
    return row, {"f1": written, "diags": diags}


class _UntilError:
    """Adds rows to ``acc`` until the first error is seen (then only that error matters)."""

    def __init__(self, acc: Accumulator, errors: List[Any]) -> None:
        self.acc = acc
        self.errors = errors

    def add(self, row: ItemRow) -> None:
        if not self.errors:
            self.acc.add(row)


def _safe_rows(
    plan: _SafePlan,
    acc: Optional[Accumulator],
    diagnostics: List[str],
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> List[ItemRow]:
    """Score every prompt of ``plan`` (through the engine when ``acc`` is given, else here).

    Writes ``f1_<key>`` into the plan's document, appends the per-prompt
    diagnostics side by side (as ``run_eval``'s loops meet them) and raises the
    first error in that order.  Returns the rows when ``acc`` is None.
    """
    rows: List[ItemRow] = []
    per_side: List[List[str]] = [[] for _ in plan.sides]
    errors: List[Tuple[int, int, ScoringError]] = []
    where = [f"{side}_posthoc_eval_data" for side in plan.sides]

    def records() -> Iterable[Tuple[int, List[Tuple[bool, Any]]]]:
        for index, prompt in enumerate(plan.prompts):
            yield index, [(key in prompt, prompt.get(key)) for key in where]

    position = iter(range(len(plan.prompts)))

    def on_result(extra: Dict[str, Any]) -> None:
        index = next(position)
        if "error" in extra:
            pos, exc = extra["error"]
            errors.append((pos, index, exc))
            return
        for side, f1 in extra["f1"].items():
            plan.prompts[index][f"{side}_posthoc_eval_data"][plan.f1_key] = f1
        for pos, texts in enumerate(extra["diags"]):
            per_side[pos].extend(texts)

    fn = functools.partial(
        _safe_prompt,
        sides=plan.sides,
        f1_key=plan.f1_key,
        effective_k=plan.effective_k,
        first_metrics=plan.first_metrics,
    )
    if acc is None:
        for record in records():
            row, extra = fn(record)
            on_result(extra)
            if row is not None:
                rows.append(row)
    else:
        accumulate_items(_UntilError(acc, errors), fn, records(), on_item=on_item, on_result=on_result)
    if errors:
        raise min(errors, key=lambda e: (e[0], e[1]))[2]
    for texts in per_side:
        diagnostics.extend(texts)
    return rows


def safe_items(
    result: Mapping[str, Any],
    *,
    max_claim: int = -1,
    eval_side1: bool = True,
    eval_side2: bool = True,
    variants: Iterable[str] = (),
    diagnostics: Optional[List[str]] = None,
) -> Tuple[Dict[str, Any], List[ItemRow], str, int]:
    """The item rows of ``factuality safe`` (one per prompt) and the output document.

    Returns ``(document, rows, f1_key, K)``: the document is a deep copy of
    ``result`` with ``f1_<key>`` written into the eval data of the aggregated
    sides (the ``side{n}_avg_*`` keys are added by :func:`run_eval_aggregate`).
    A row is ``{"prompt": i, "<side>": 0|1, "<side>_f1": F1 or None,
    "<side>.<metric>": value, ...}`` for each selected side, the metrics being
    the eval data's numeric values in dict order.
    """
    names = check_variants(variants, "safe")
    diags: List[str] = diagnostics if diagnostics is not None else []
    plan = _safe_plan(
        result, max_claim=max_claim, eval_side1=eval_side1, eval_side2=eval_side2, names=names, diagnostics=diags
    )
    rows = _safe_rows(plan, None, diags)
    return plan.document, rows, plan.f1_key, plan.effective_k


def run_eval_aggregate(
    result: Mapping[str, Any],
    *,
    max_claim: int = -1,
    eval_side1: bool = True,
    eval_side2: bool = True,
    variants: Iterable[str] = (),
    max_claim_text: Optional[str] = None,
    k_rule: Optional[str] = None,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    with_ci: bool = True,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> SafeEvalResult:
    """Reproduce ``eval/run_eval.py``'s ``add_aggregation`` + ``print_results``.

    Sides (``eval/run_eval.py@9d27158``, run unmodified): ``print_results`` summarises every side whose
    ``side{n}_posthoc_eval_data`` is present in ``per_prompt_data[0]``; it looks
    at neither the ``--eval_side`` flags nor the side names (``none`` /
    ``placeholder``), and a side that prompt 0 lacks is left untouched (no
    ``f1_<key>`` anywhere).  Variant ``sides_by_flags`` (the project's earlier
    behaviour): side n iff its flag is true and ``result['side_n']`` is not
    ``'none'``/``'placeholder'``, with ``f1_<key>`` written into every rated
    prompt even when prompt 0 lacks the eval data (then the side is not
    aggregated).  Variant ``aggregate_all_rated``: a side rated in any prompt is
    aggregated, its metrics taken from the first rated prompt.

    For every prompt of a selected side whose eval data has the three label
    keys, ``f1_<max_claim>`` = :func:`calculate_metrics` with K = ``max_claim``
    when it is > 0, else the default 100 -- the key keeps the raw flag
    (``f1_-1``) unless the variant ``f1_key_effective_k`` is on.  Prompts
    without eval data (a failed rating) are ignored.  Then, per side, the
    numeric keys of prompt 0's eval data (in order) are averaged with numpy's
    pairwise mean and population std into ``side{n}_avg_<metric>`` /
    ``side{n}_std_<metric>``.

    The input is not modified.  Raises :class:`ScoringError` naming the prompt
    index where the reference would crash (a metric missing from a rated
    prompt, a non-numeric value, negative counts).  ``report`` is the
    accumulator's report over the item rows (see :class:`SafeAccumulator`).
    """
    names = check_variants(variants, "safe")
    diagnostics: List[str] = []
    plan = _safe_plan(
        result, max_claim=max_claim, eval_side1=eval_side1, eval_side2=eval_side2, names=names, diagnostics=diagnostics
    )
    out, f1_key, effective_k = plan.document, plan.f1_key, plan.effective_k
    acc = SafeAccumulator(
        max_claim=max_claim,
        max_claim_text=str(max_claim) if max_claim_text is None else max_claim_text,
        k_rule=k_rule,
        eval_side1=eval_side1,
        eval_side2=eval_side2,
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
        variants=list(names),
    )
    acc.with_ci = with_ci
    _safe_rows(plan, acc, diagnostics, on_item)
    for text in diagnostics:
        acc.note(text)
    report = finish(acc)
    added = acc.aggregates()
    out.update(added)
    per_prompt_f1 = {side: list(acc.f1s[side]) for side in acc.sides}
    return SafeEvalResult(
        out, added, per_prompt_f1, list(acc.sides), f1_key, effective_k, list(report.diagnostics), report
    )


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
    rows = _veriscore_rows(
        ((model, domain, recs) for (model, domain), recs in groups.items()),
        domains,
        names,
        diagnostics,
        counts=("supported", "total_claims"),
        where=lambda model, domain, r: str(r.get("id", f"{model}/{domain}")),
    )
    return VeriScoreResult(domains, rows, diagnostics)


def _veriscore_rows(
    groups: Iterable[Sequence[Any]],
    domains: Mapping[str, Tuple[int, int]],
    names: Sequence[str],
    diagnostics: List[str],
    *,
    counts: Tuple[Any, Any],
    where: Callable[[str, str, Any], str],
) -> List[VeriScoreRow]:
    """The VeriScore row of each ``(model, domain, responses)`` group, K taken from ``domains``.

    A response is read as ``response[s]`` and ``response[total]`` for ``(s, total) = counts``
    (a record's keys, or the accumulator's ``[id, supported, total_claims]`` positions);
    ``where(model, domain, response)`` names it in a diagnostic.
    """
    s, total = counts

    def mean(values: List[Number]) -> float:
        if "veriscore_py312_sum" in names:
            return _py312_sum(values) / len(values)
        return _seq_mean(values)

    rows = []
    for model, domain, responses in groups:
        k_med, k_max = domains[domain]
        if k_med <= 0 and any(r[total] != 0 for r in responses):
            # the reference divides by K: ZeroDivisionError
            raise ScoringError(
                "K_median is 0 (most responses have no claims); F1@K is undefined",
                record=f"domain {domain!r}",
            )
        f_med = [
            veriscore_f1(r[s], r[total], k_med, diagnostics=diagnostics, where=where(model, domain, r))
            for r in responses
        ]
        f_max = [veriscore_f1(r[s], r[total], k_max) for r in responses]
        rows.append(VeriScoreRow(model, domain, len(responses), k_med, k_max, mean(f_med), mean(f_max)))
    return rows


# ---------------------------------------------------------------------------
# E. Correlations (scipy 1.12 pearsonr / spearmanr) in the stdlib
# ---------------------------------------------------------------------------


class CorrelationResult(NamedTuple):
    """A correlation coefficient and its two-sided p-value (nan when undefined)."""

    statistic: float
    pvalue: float


_NAN_RESULT = CorrelationResult(math.nan, math.nan)


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


def spearman(x: Sequence[Number], y: Sequence[Number]) -> CorrelationResult:
    """scipy 1.12 ``spearmanr(x, y)`` (two-sided), bit for bit for the statistic.

    Average ranks, centred on ``(n+1)/2``; the products are exact, summed with
    ``fsum``; ``c = S * (1.0/(n-1))``, then ``(c_xy / sd_y) / sd_x`` clipped.
    n <= 1, a constant column or any nan -> nan/nan.  ``p`` from Student's t
    with ``dof = n - 2`` as ``I_{dof/(dof+t^2)}(dof/2, 1/2)``, with ``1 - dof/(dof+t^2)``
    computed as ``t^2/(dof+t^2)`` (no cancellation; 1e-12 relative for any n); n == 2 gives
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
    rx, ry = rankdata(xf), rankdata(yf)
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
    t2 = t * t
    z = dof / (dof + t2)
    # 1 - z directly as t^2 / (dof + t^2): for many pairs and a small rho, z is
    # within a few ulp of 1 and the subtraction would lose every digit of it.
    return CorrelationResult(rs, betainc_complement(dof / 2.0, 0.5, z, t2 / (dof + t2)))


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


# ---------------------------------------------------------------------------
# The family contract: item rows, accumulators, file-level functions
# ---------------------------------------------------------------------------

_INT_RE = re.compile(r"^[+-]?\d+$")


def _nan_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _clean(value: Any) -> Any:
    """nan/inf -> None, recursively (JSON envelopes and per-line outputs)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def parse_number(value: Any, field: str) -> Number:
    """A finite JSON number, or a numeric CSV/TSV cell; raises ValueError naming ``field``.

    >>> parse_number("12", "supported"), parse_number(2.5, "x")
    (12, 2.5)
    """
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{field}: expected a number, got {json.dumps(value)}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{field}: expected a finite number, got {value!r}")
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed: Number = int(text) if _INT_RE.match(text) else float(text)
        except ValueError:
            raise ValueError(f"{field}: expected a number, got {value!r}") from None
        if isinstance(parsed, float) and not math.isfinite(parsed):
            raise ValueError(f"{field}: expected a finite number, got {value!r}")
        return parsed
    raise ValueError(f"{field}: expected a number, got {type(value).__name__}")


def parse_max_claims(text: Union[str, int], field: str = "max_claims") -> Tuple[Optional[int], str]:
    """A ``--max-claims`` value: ``(K, "fixed")`` for an integer, ``(None, rule)`` for median, max, pNN.

    >>> parse_max_claims("64"), parse_max_claims("p25")
    ((64, 'fixed'), (None, 'p25'))
    """
    raw = str(text).strip()
    if _INT_RE.match(raw):
        return int(raw), "fixed"
    if raw in ("median", "max") or re.match(r"^p\d{1,3}$", raw):
        select_k([1], raw)  # validates pNN <= 100
        return None, raw
    raise ScoringError(f"--max-claims {raw!r}: expected an integer, median, max or pNN", field=field)


def k_rule_param(rule: str) -> str:
    """The signature value of a K rule (``fixed``, ``upper_median_of_S+NS``, ...)."""
    if rule == "median":
        return "upper_median_of_S+NS"
    if rule == "max":
        return "max_of_S+NS"
    if rule.startswith("p"):
        return f"nearest_rank_{rule}_of_S+NS"
    return rule


#: Upper bound of ``--bootstrap`` (resamples); the cost is B times the number of responses.
MAX_BOOTSTRAP = 1_000_000


def check_bootstrap(bootstrap: Any, confidence: Any, seed: Any) -> None:
    """Bounds of the bootstrap options (a ScoringError, exit 2, otherwise)."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise ScoringError(
            f"--bootstrap must be an integer from 0 (disabled) to {MAX_BOOTSTRAP}, got {bootstrap!r}", field="bootstrap"
        )
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ScoringError(f"--confidence must be a number between 0 and 1, got {confidence!r}", field="confidence")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScoringError(f"--seed must be an integer, got {seed!r}", field="seed")


def _boot_params(bootstrap: int, confidence: float, seed: int) -> List[Tuple[str, object]]:
    return [("bootstrap", bootstrap), ("confidence", confidence), ("seed", seed)]


def _ci(values: Sequence[Number], bootstrap: int, confidence: float, seed: int, with_ci: bool) -> BootstrapCI:
    if bootstrap == 0 or not with_ci:  # disabled, or its result is neither written nor gated
        return BootstrapCI(np_mean(values), math.nan, math.nan, confidence, bootstrap, seed)
    return bootstrap_mean_ci(values, n_resamples=bootstrap, confidence=confidence, seed=seed)


def _ci_dict(ci: BootstrapCI) -> Dict[str, Any]:
    return {"confidence": ci.confidence, "low": ci.low, "high": ci.high, "n_resamples": ci.n_resamples, "seed": ci.seed}


def _no_valid(path: Optional[str], what: str) -> ScoringError:
    return ScoringError(f"no valid record: {what}", path=path)


# --- f1k -------------------------------------------------------------------------


def f1k_item(record: Mapping[str, Any], *, line: int, max_claims: int) -> ItemRow:
    """One ``factuality f1k`` item row: ``{"line", "id"?, "precision", "recall_at_k", "f1_at_k", "max_claims"}``.

    A line that cannot be scored gives ``{"line", "id"?, "error"}`` instead (the
    reference's ValueError message, or what is wrong with a field).  A per-line
    ``max_claims`` overrides ``max_claims`` (null: SAFE's default 100).

    >>> f1k_item({"supported": 10, "not_supported": 8}, line=1, max_claims=100)["f1_at_k"]
    0.16949152542372883
    """
    out: ItemRow = {"line": line}
    if "id" in record:
        out["id"] = record["id"]
    try:
        s = parse_number(record.get("supported"), "supported")
        n = parse_number(record.get("not_supported"), "not_supported")
        k: Number = max_claims
        if "max_claims" in record:
            raw_k = record["max_claims"]
            # null (or an empty CSV cell) means SAFE's default K
            k = DEFAULT_MAX_CLAIMS if raw_k is None or raw_k == "" else parse_number(raw_k, "max_claims")
    except ValueError as exc:
        out["error"] = str(exc)
        return out
    try:
        res = f1_at_k(s, n, max_claims=k)
    except ScoringError as exc:
        out["error"] = exc.msg
        return out
    out.update(precision=res.precision, recall_at_k=res.recall_at_k, f1_at_k=res.f1_at_k, max_claims=k)
    return out


def f1k_output_line(row: ItemRow) -> Dict[str, Any]:
    """The ``jsonl`` output line of an f1k item row (the row without ``line``; nan/inf -> null)."""
    out: Dict[str, Any] = _clean({k: v for k, v in row.items() if k != "line"})
    return out


def _f1k_record(numbered: Tuple[int, Mapping[str, Any]], *, max_claims: int, lines: bool) -> Any:
    """The per-item work of ``f1k`` (picklable): the row, and its output line when asked."""
    lineno, rec = numbered
    row = f1k_item(rec, line=lineno, max_claims=max_claims)
    if not lines:
        return row
    return row, json.dumps(f1k_output_line(row), ensure_ascii=False) + "\n"


def record_name(path: str, line: int, ident: Any = None) -> str:
    """How a diagnostic names a record: by its id when it has one, else by ``path:line``.

    An id names the record the same way in a shard and in the whole file, so a
    report merged from shards (``rageval-min merge``) says what one pass says.

    >>> record_name("a.jsonl", 3, "r7"), record_name("a.jsonl", 3)
    ("id='r7'", 'a.jsonl:3')
    """
    return f"{path}:{line}" if ident is None else f"id={ident!r}"


def _noting(acc: Accumulator, path: str, on_item: Optional[Callable[[ItemRow], None]]) -> Callable[[ItemRow], None]:
    """An ``on_item`` that notes an error row (``{"line", "id"?, "error"}``) before passing it on."""

    def on_row(row: ItemRow) -> None:
        if "error" in row:
            acc.note(f"{record_name(path, row['line'], row.get('id'))}: {row['error']}")
        if on_item is not None:
            on_item(row)

    return on_row


@register_accumulator
class F1kAccumulator(Accumulator):
    """``factuality f1k``: mean/std of F1@K, mean precision and recall, bootstrap CI of the mean F1.

    numpy's pairwise mean and the bootstrap need the values in input order, so
    the state keeps three float arrays (8 bytes per scored line; int ``0`` /
    ``1`` are summed as ``0.0`` / ``1.0``, which numpy does too) -- not the
    lines themselves.
    """

    FAMILY = FAMILY
    COMMAND = "f1k"
    DIRECTIONS = {"f1_at_k": "higher", "precision": "higher", "recall_at_k": "higher"}

    def __init__(
        self,
        *,
        max_claims: int = DEFAULT_MAX_CLAIMS,
        k_rule: str = "fixed",
        bootstrap: int = 1000,
        confidence: float = 0.95,
        seed: int = 0,
    ) -> None:
        super().__init__(max_claims=max_claims, k_rule=k_rule, bootstrap=bootstrap, confidence=confidence, seed=seed)
        self.with_ci = True
        self.n_lines = 0
        self.f1 = array("d")
        self.precision = array("d")
        self.recall = array("d")

    @classmethod
    def metric_names(cls, **options: Any) -> List[str]:
        return [
            "max_claims",
            "n_lines",
            "n_scored",
            "n_errors",
            "f1_mean",
            "f1_std",
            "f1_mean_ci_low",
            "f1_mean_ci_high",
            "precision_mean",
            "recall_mean",
        ]

    def add(self, item: ItemRow) -> None:
        self.n_lines += 1
        if "error" in item:
            return
        self.f1.append(float(item["f1_at_k"]))
        self.recall.append(float(item["recall_at_k"]))
        if item.get("precision") is not None:
            self.precision.append(float(item["precision"]))

    def _data(self) -> Dict[str, Any]:
        return {
            "n_lines": self.n_lines,
            "f1": list(self.f1),
            "precision": list(self.precision),
            "recall": list(self.recall),
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n_lines = int(data["n_lines"])
        self.f1 = array("d", data["f1"])
        self.precision = array("d", data["precision"])
        self.recall = array("d", data["recall"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, F1kAccumulator)
        self.n_lines += other.n_lines
        self.f1.extend(other.f1)
        self.precision.extend(other.precision)
        self.recall.extend(other.recall)

    def finalize(self) -> Report:
        p = self.params
        f1s = self.f1
        ci = _ci(f1s, p["bootstrap"], p["confidence"], p["seed"], self.with_ci)
        summary: Dict[str, Any] = {
            "max_claims": p["max_claims"],
            "k_rule": p["k_rule"],
            "n_lines": self.n_lines,
            "n_scored": len(f1s),
            "n_errors": self.n_lines - len(f1s),
            "f1_mean": np_mean(f1s),
            "f1_std": np_std(f1s),
            "f1_mean_ci_low": ci.low,
            "f1_mean_ci_high": ci.high,
            "precision_mean": np_mean(self.precision),
            "recall_mean": np_mean(self.recall),
        }
        result = dict(_clean(summary))
        result["bootstrap"] = _clean(_ci_dict(ci))
        metrics = {k: _nan_none(v) for k, v in summary.items() if k != "k_rule"}
        sig = signature(
            command="f1k",
            params=[("K", p["max_claims"]), ("k_rule", k_rule_param(p["k_rule"]))]
            + _boot_params(p["bootstrap"], p["confidence"], p["seed"]),
        )
        return Report(FAMILY, sig, result, metrics, self.notes())


def _shard(allow_empty: Optional[bool]) -> bool:
    return partial_requested() if allow_empty is None else allow_empty


def f1k_file(
    path: str,
    *,
    max_claims: Union[int, str] = DEFAULT_MAX_CLAIMS,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    with_ci: bool = True,
    on_item: Optional[Callable[[ItemRow], None]] = None,
    on_line: Optional[Callable[[str], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``factuality f1k`` over a counts file (JSONL, JSON, CSV or TSV), streaming.

    ``max_claims`` is K or a rule over the lines' S+NS (``median``, ``max``,
    ``pNN``; then the file is read twice: once for K, once to score).  A line
    that cannot be scored is an error row, reported and skipped; a file with no
    scorable line is an input error.  ``with_ci=False`` skips the bootstrap
    (the interval is then null) when nobody reads it.  ``on_line`` receives the
    ``jsonl`` output line of every input line, in input order (the text
    :func:`f1k_output_line` gives, serialised, with its newline).  The lines are
    scored by :func:`~rageval_min._parallel.accumulate_items` (``--jobs``, Dask).

    ``allow_empty`` is for a shard of a larger input whose state is merged later
    (``--emit-partial``): a shard may hold no scorable line although the whole
    input does, so it is not refused; its own report then has null means.  The
    default (None) is True exactly when the command writes a partial state
    (:func:`~rageval_min._contract.partial_requested`).
    """
    check_bootstrap(bootstrap, confidence, seed)
    fixed_k, rule = parse_max_claims(max_claims)
    if fixed_k is None:
        pool: List[Number] = []
        for _, rec in iter_records(path):
            try:
                s = parse_number(rec.get("supported"), "supported")
                n = parse_number(rec.get("not_supported"), "not_supported")
            except ValueError:
                continue
            if s >= 0 and n >= 0:
                pool.append(s + n)
        try:
            flag_k = select_k(pool, rule)
        except ScoringError as exc:
            raise ScoringError(exc.msg, path=path, field="max_claims") from None
    else:
        flag_k = fixed_k
    acc = F1kAccumulator(max_claims=flag_k, k_rule=rule, bootstrap=bootstrap, confidence=confidence, seed=seed)
    acc.with_ci = with_ci
    accumulate_items(
        acc,
        functools.partial(_f1k_record, max_claims=flag_k, lines=on_line is not None),
        iter_records(path),
        on_item=_noting(acc, path, on_item),
        on_result=on_line,
    )
    if not acc.f1 and not _shard(allow_empty):
        raise _no_valid(path, f"none of the {acc.n_lines} line(s) could be scored")
    return finish(acc)


# --- safe ------------------------------------------------------------------------


@register_accumulator
class SafeAccumulator(Accumulator):
    """``factuality safe``: run_eval's per-side mean/std of prompt 0's numeric metrics, plus a CI.

    Item rows come from :func:`safe_items` (one per prompt, in order).  numpy's
    pairwise mean/std need the values in prompt order, so the state keeps them
    (one list per side and metric) with the per-prompt F1 values.
    """

    FAMILY = FAMILY
    COMMAND = "safe"
    DIRECTIONS = {"side1_f1": "higher", "side2_f1": "higher"}

    def __init__(
        self,
        *,
        max_claim: int = -1,
        max_claim_text: str = "-1",
        k_rule: Optional[str] = None,
        eval_side1: bool = True,
        eval_side2: bool = True,
        bootstrap: int = 1000,
        confidence: float = 0.95,
        seed: int = 0,
        variants: Sequence[str] = (),
    ) -> None:
        names = list(check_variants(variants, "safe"))
        super().__init__(
            max_claim=max_claim,
            max_claim_text=max_claim_text,
            k_rule=k_rule,
            eval_side1=eval_side1,
            eval_side2=eval_side2,
            bootstrap=bootstrap,
            confidence=confidence,
            seed=seed,
            variants=names,
        )
        self.with_ci = True
        self.n = 0
        self.sides: List[str] = []
        self.first: Dict[str, Optional[int]] = {}
        self.metrics: Dict[str, List[str]] = {}
        self.values: Dict[str, Dict[str, List[Number]]] = {}
        self.rated: Dict[str, int] = {}
        self.f1s: Dict[str, List[Optional[Number]]] = {}

    def _f1_key(self) -> str:
        k = self.params["max_claim"]
        effective = k if k > 0 else DEFAULT_MAX_CLAIMS
        return f"f1_{effective if 'f1_key_effective_k' in self.params['variants'] else k}"

    def add(self, item: ItemRow) -> None:
        if self.n == 0:
            self.sides = [s for s in ("side1", "side2") if s in item]
            for side in self.sides:
                self.first[side] = None
                self.metrics[side] = []
                self.values[side] = {}
                self.rated[side] = 0
                self.f1s[side] = []
        self.n += 1
        for side in self.sides:
            self.f1s[side].append(item.get(f"{side}_f1"))
            if not item.get(side):
                continue
            if self.first[side] is None:
                self.first[side] = int(item["prompt"])
                prefix = f"{side}."
                self.metrics[side] = [k[len(prefix) :] for k in item if k.startswith(prefix)]
            self.rated[side] = self.rated.get(side, 0) + 1
            # every metric of every rated prompt, in order: whether this side is aggregated (prompt 0
            # rated) and which metrics count (prompt 0's) is known only when the parts are merged
            for key, value in item.items():
                if key.startswith(f"{side}."):
                    self.values[side].setdefault(key[len(side) + 1 :], []).append(value)

    def _data(self) -> Dict[str, Any]:
        return {
            "n": self.n,
            "sides": self.sides,
            "first": self.first,
            "metrics": self.metrics,
            "rated": self.rated,
            "values": self.values,
            "f1s": self.f1s,
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n = int(data["n"])
        self.sides = list(data["sides"])
        self.first = dict(data["first"])
        self.metrics = {k: list(v) for k, v in data["metrics"].items()}
        self.rated = {k: int(v) for k, v in data["rated"].items()}
        self.values = {k: {m: list(x) for m, x in v.items()} for k, v in data["values"].items()}
        self.f1s = {k: list(v) for k, v in data["f1s"].items()}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, SafeAccumulator)
        if other.n == 0:
            return
        if self.n == 0:
            self._load(json.loads(json.dumps(other._data())))
            return
        self.n += other.n
        for side in self.sides:
            self.f1s[side].extend(other.f1s.get(side, []))
            if other.first.get(side) is None:
                continue
            if self.first[side] is None:
                self.first[side] = other.first[side]
                self.metrics[side] = list(other.metrics.get(side, []))
            self.rated[side] = self.rated.get(side, 0) + other.rated.get(side, 0)
            for metric, values in other.values.get(side, {}).items():
                self.values[side].setdefault(metric, []).extend(values)

    def _aggregated(self) -> List[str]:
        all_rated = "aggregate_all_rated" in self.params["variants"]
        return [s for s in self.sides if self.first[s] == 0 or (all_rated and self.first[s] is not None)]

    def aggregates(self) -> Dict[str, float]:
        """The ``side{n}_avg_<metric>`` / ``side{n}_std_<metric>`` values run_eval adds, in order."""
        added: Dict[str, float] = {}
        for side in self._aggregated():
            for metric in self.metrics[side]:
                values = self.values[side].get(metric, [])
                if len(values) != self.rated.get(side, 0):  # run_eval: a KeyError
                    raise ScoringError(f"metric {metric!r} of prompt {self.first[side]} is missing in a rated prompt")
                added[f"{side}_avg_{metric}"] = np_mean(values)
                added[f"{side}_std_{metric}"] = np_std(values)
        return added

    def finalize(self) -> Report:
        p = self.params
        added = self.aggregates()
        metrics: Dict[str, Any] = {k: _nan_none(v) for k, v in added.items()}
        notes = self.notes()
        for side in self.sides:
            if side not in self._aggregated() and self.n:
                eval_key = f"{side}_posthoc_eval_data"
                if self.first[side] is None:
                    notes.append(f"{side}: no prompt has {eval_key}; side not aggregated")
                else:
                    notes.append(f"{side}: prompt 0 has no {eval_key}, so the reference skips the whole side")
        if not self.n:
            notes.append("per_prompt_data is empty; nothing aggregated")
        boots: Dict[str, Any] = {}
        aggregated = [s for s in self._aggregated() if any(k.startswith(f"{s}_avg_") for k in added)]
        for side in aggregated:
            f1s = [v for v in self.f1s[side] if v is not None]
            ci = _ci(f1s, p["bootstrap"], p["confidence"], p["seed"], self.with_ci)
            boots[side] = _ci_dict(ci)
            metrics[f"{side}_f1_mean_ci_low"] = _nan_none(ci.low)
            metrics[f"{side}_f1_mean_ci_high"] = _nan_none(ci.high)
            if len(aggregated) == 1:
                metrics["f1_mean"] = _nan_none(ci.mean)
                metrics["f1_mean_ci_low"] = metrics[f"{side}_f1_mean_ci_low"]
                metrics["f1_mean_ci_high"] = metrics[f"{side}_f1_mean_ci_high"]
        k = p["max_claim"]
        summary = {
            "max_claim": p["max_claim_text"] if p["k_rule"] is None else p["k_rule"],
            "max_claims": k if k > 0 else DEFAULT_MAX_CLAIMS,
            "f1_key": self._f1_key(),
            "rated_sides": list(self.sides),
            "aggregates": _clean(added),
            "per_prompt_f1": {side: list(self.f1s[side]) for side in self.sides},
            "bootstrap": _clean(boots),
        }
        params: List[Tuple[str, object]] = [("max_claim", k), ("K", summary["max_claims"])]
        if p["k_rule"] is not None:
            params.append(("k_rule", k_rule_param(p["k_rule"])))
        if "sides_by_flags" in p["variants"]:
            params += [("eval_side1", p["eval_side1"]), ("eval_side2", p["eval_side2"])]
        params += _boot_params(p["bootstrap"], p["confidence"], p["seed"])
        sig = signature(command="safe", variants=p["variants"], params=params)
        return Report(FAMILY, sig, summary, metrics, notes)


def _relevant_counts(doc: Mapping[str, Any], sides: Sequence[str]) -> List[Number]:
    pool: List[Number] = []
    prompts = doc.get("per_prompt_data")
    if not isinstance(prompts, list):
        return pool
    for side in sides:
        for prompt in prompts:
            data = prompt.get(f"{side}_posthoc_eval_data") if isinstance(prompt, dict) else None
            if isinstance(data, dict):
                s, ns = data.get(SUPPORTED_LABEL), data.get(NOT_SUPPORTED_LABEL)
                if isinstance(s, (int, float)) and isinstance(ns, (int, float)) and _is_number(s) and _is_number(ns):
                    pool.append(s + ns)
    return pool


def safe_evaluate(
    path: str,
    *,
    max_claim: Union[int, str] = -1,
    eval_side1: bool = True,
    eval_side2: bool = True,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    variants: Iterable[str] = (),
    with_ci: bool = True,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> SafeEvalResult:
    """``factuality safe`` on an experiment-result JSON file: the report and run_eval's output document.

    ``max_claim`` is run_eval's ``--max_claim`` (an integer; -1: K = 100 with
    key ``f1_-1``) or a rule (``median``, ``max``, ``pNN``) over the S+NS of
    the aggregated sides' rated prompts.  A file whose prompts carry no rating
    at all is an input error.
    """
    check_bootstrap(bootstrap, confidence, seed)
    names = check_variants(variants, "safe")
    fixed_k, rule = parse_max_claims(max_claim, "max_claim")
    data = read_json(path)
    if not isinstance(data, dict):
        raise ScoringError("expected a JSON object (an experiment result)", path=path)
    prompts = data.get("per_prompt_data")
    if isinstance(prompts, list) and not any(
        isinstance(p, dict) and any(f"side{n}_posthoc_eval_data" in p for n in (1, 2)) for p in prompts
    ):
        raise _no_valid(path, "no prompt of per_prompt_data has side1/side2_posthoc_eval_data")
    if fixed_k is None:
        probe: List[str] = []
        try:
            sides = _selected_sides(
                data, prompts if isinstance(prompts, list) else [], names, eval_side1, eval_side2, probe
            )
            k_value = select_k(_relevant_counts(data, sides), rule)
        except ScoringError as exc:
            raise ScoringError(exc.msg, path=path, field=exc.field or "max_claim") from None
    else:
        k_value = fixed_k
    try:
        return run_eval_aggregate(
            data,
            max_claim=k_value,
            eval_side1=eval_side1,
            eval_side2=eval_side2,
            variants=names,
            max_claim_text=str(max_claim).strip(),
            k_rule=None if fixed_k is not None else rule,
            bootstrap=bootstrap,
            confidence=confidence,
            seed=seed,
            with_ci=with_ci,
            on_item=on_item,
        )
    except ScoringError as exc:
        raise ScoringError(exc.msg, path=path, record=exc.record, field=exc.field) from None


def safe_file(
    path: str,
    *,
    max_claim: Union[int, str] = -1,
    eval_side1: bool = True,
    eval_side2: bool = True,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    variants: Iterable[str] = (),
    with_ci: bool = True,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``factuality safe``'s report (the options of :func:`safe_evaluate`, which also gives run_eval's output)."""
    res = safe_evaluate(
        path,
        max_claim=max_claim,
        eval_side1=eval_side1,
        eval_side2=eval_side2,
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
        variants=variants,
        with_ci=with_ci,
        on_item=on_item,
    )
    assert res.report is not None
    return res.report


# --- factscore -------------------------------------------------------------------


def factscore_item(
    record: Mapping[str, Any], *, gamma: Optional[Number] = 10, exclude_ir: bool = False, line: int = 0, where: str = ""
) -> ItemRow:
    """One FActScore item row: ``{"line", "id"?, "responded", "num_facts", "init_score", "score"}``.

    ``responded`` is 0 for an abstained response (no facts; also an explicitly
    empty fact list when gamma is set, see :func:`factscore`); ``score`` is the
    penalised score (``init_score`` the unpenalised one, None without gamma).
    An empty fact list without gamma responds with a nan (null) score, as the
    reference.
    """
    return _factscore_row(record, labeled_decisions(record, exclude_ir=exclude_ir, where=where), gamma=gamma, line=line)


def _factscore_row(
    record: Mapping[str, Any], facts: Optional[List[bool]], *, gamma: Optional[Number], line: int
) -> ItemRow:
    """:func:`factscore_item` from the record's :func:`labeled_decisions` (``facts``)."""
    row: ItemRow = {"line": line}
    label = record.get("id", record.get("topic"))
    if label is not None:
        row["id"] = label
    if facts is not None and len(facts) == 0 and gamma:
        facts = None
    if facts is None:
        row.update(responded=0, num_facts=None, init_score=None, score=None)
        return row
    score = np_mean([bool(d) for d in facts])
    init = None
    if gamma:
        init = score
        score = length_penalty(len(facts), gamma) * score
    row.update(responded=1, num_facts=len(facts), init_score=_nan_none(init), score=_nan_none(score))
    return row


@register_accumulator
class FactScoreAccumulator(Accumulator):
    """``factuality factscore``: FactScorer.get_score's means, respond ratio and a bootstrap CI.

    numpy's pairwise means need the per-response scores in input order (kept);
    the respond ratio and facts per response are exact integer counts.
    """

    FAMILY = FAMILY
    COMMAND = "factscore"
    DIRECTIONS = {"score": "higher", "init_score": "higher"}

    def __init__(
        self,
        *,
        gamma: Number = 10,
        bootstrap: int = 1000,
        confidence: float = 0.95,
        seed: int = 0,
        variants: Sequence[str] = (),
    ) -> None:
        names = list(check_variants(variants, "factscore"))
        super().__init__(gamma=gamma, bootstrap=bootstrap, confidence=confidence, seed=seed, variants=names)
        self.with_ci = True
        self.n = 0
        self.facts = 0
        self.scores: List[float] = []
        self.init_scores: List[float] = []

    @classmethod
    def metric_names(cls, *, gamma: Number = 10, **options: Any) -> List[str]:
        names = ["score", "respond_ratio", "num_facts_per_response"]
        if gamma:
            names.append("init_score")
        return names + ["num_responses", "num_responding", "score_ci_low", "score_ci_high"]

    def add(self, item: ItemRow) -> None:
        self.n += 1
        if not item.get("responded"):
            return
        self.facts += int(item["num_facts"])
        score = item.get("score")
        self.scores.append(math.nan if score is None else float(score))
        if self.params["gamma"]:
            init = item.get("init_score")
            self.init_scores.append(math.nan if init is None else float(init))

    def _data(self) -> Dict[str, Any]:
        return {
            "n": self.n,
            "facts": self.facts,
            "scores": [_float_state(v) for v in self.scores],
            "init_scores": [_float_state(v) for v in self.init_scores],
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n = int(data["n"])
        self.facts = int(data["facts"])
        self.scores = [_float_load(v) for v in data["scores"]]
        self.init_scores = [_float_load(v) for v in data["init_scores"]]

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, FactScoreAccumulator)
        self.n += other.n
        self.facts += other.facts
        self.scores.extend(other.scores)
        self.init_scores.extend(other.init_scores)

    def finalize(self) -> Report:
        p = self.params
        gamma = p["gamma"]
        responding = len(self.scores)
        # np.mean of a bool list / an int list: exact integer sums, then one division
        respond_ratio = responding / self.n if self.n else math.nan
        facts_mean = self.facts / responding if responding else math.nan
        ci = _ci(self.scores, p["bootstrap"], p["confidence"], p["seed"], self.with_ci)
        summary: Dict[str, Any] = {
            "score": np_mean(self.scores),
            "respond_ratio": respond_ratio,
            "num_facts_per_response": facts_mean,
        }
        if gamma:
            summary["init_score"] = np_mean(self.init_scores)
        summary["num_responses"] = self.n
        summary["num_responding"] = responding
        summary["score_ci_low"] = ci.low
        summary["score_ci_high"] = ci.high
        metrics = {k: _nan_none(v) for k, v in summary.items()}
        result = dict(_clean(summary))
        result["bootstrap"] = _clean(_ci_dict(ci))
        labels = "S/(S+NS)" if "factscore_excl_ir" in p["variants"] else "S/(S+NS+IR)"
        sig = signature(
            command="factscore",
            variants=p["variants"],
            params=[("gamma", gamma), ("score", labels)] + _boot_params(p["bootstrap"], p["confidence"], p["seed"]),
        )
        return Report(FAMILY, sig, result, metrics, self.notes())


def _float_state(v: float) -> Any:
    return None if math.isnan(v) else v


def _float_load(v: Any) -> float:
    return math.nan if v is None else float(v)


def factscore_file(
    path: str,
    *,
    gamma: Number = 10,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    variants: Iterable[str] = (),
    with_ci: bool = True,
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``factuality factscore`` over a labelled file (FActScore's format or ``{"labels": [...]}``).

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts a file without a labelled response.
    """
    check_bootstrap(bootstrap, confidence, seed)
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not math.isfinite(gamma) or gamma < 0:
        raise ScoringError(f"--gamma must be a finite number >= 0, got {gamma!r}", field="gamma")
    names = check_variants(variants, "factscore")
    exclude_ir = "factscore_excl_ir" in names
    acc = FactScoreAccumulator(gamma=gamma, bootstrap=bootstrap, confidence=confidence, seed=seed, variants=names)
    acc.with_ci = with_ci
    accumulate_items(
        acc,
        functools.partial(_factscore_record, gamma=gamma, exclude_ir=exclude_ir, path=path),
        iter_records(path),
        on_item=on_item,
        on_result=acc.note,
    )
    if acc.n == 0 and not _shard(allow_empty):
        raise _no_valid(path, "the file holds no labelled response")
    return finish(acc)


def _factscore_record(
    numbered: Tuple[int, Mapping[str, Any]], *, gamma: Number, exclude_ir: bool, path: str
) -> Tuple[ItemRow, Optional[str]]:
    """The per-item work of ``factscore`` (picklable): the row and its diagnostic (None: none)."""
    lineno, rec = numbered
    facts = labeled_decisions(rec, exclude_ir=exclude_ir, where=f"{path}:{lineno}")
    row = _factscore_row(rec, facts, gamma=gamma, line=lineno)
    note = None
    if facts is not None and len(facts) == 0:
        name = record_name(path, lineno, row.get("id"))
        if gamma:
            note = f"{name}: empty fact list treated as abstained (reference: ZeroDivisionError)"
        else:
            note = f"{name}: empty fact list gives a nan score (as the reference)"
    return row, note


# --- veriscore -------------------------------------------------------------------


def veriscore_item(record: Mapping[str, Any], *, where: str = "") -> ItemRow:
    """One VeriScore item row: ``{"id", "model", "domain", "supported", "total_claims", "abstained"}``.

    F1@K needs the domain's K, known only at the end, so the row holds the
    counts.  ``domain`` falls back to ``prompt_source``, ``model`` to
    ``model_name``; an abstained response may omit its counts.
    """
    domain = record.get("domain", record.get("prompt_source"))
    if domain is None:
        raise ScoringError("missing 'domain' (or 'prompt_source')", record=where or None)
    abstained = record.get("abstained", False)
    if abstained not in (True, False, None):
        raise ScoringError("expected true or false", record=where or None, field="abstained")
    try:
        s = parse_number(record.get("supported"), "supported")
        total = parse_number(record.get("total_claims"), "total_claims")
    except ValueError as exc:
        if not abstained:
            raise ScoringError(str(exc), record=where or None) from None
        s, total = 0, 0
    if s < 0 or total < 0:
        raise ScoringError(f"counts must not be negative, got {s} and {total}", record=where or None)
    return {
        "id": record.get("id", where),
        "model": str(record.get("model", record.get("model_name", ""))),
        "domain": str(domain),
        "supported": s,
        "total_claims": total,
        "abstained": 1 if abstained else 0,
    }


@register_accumulator
class VeriScoreAccumulator(Accumulator):
    """``factuality veriscore``: per-domain K over every model, then per (model, domain) mean F1@K.

    K needs every response's claim count, and the sequential (or Python 3.12)
    sum needs the F1 values in input order, so the state keeps each
    non-abstained response's ``[id, supported, total_claims]`` per (model, domain).
    """

    FAMILY = FAMILY
    COMMAND = "veriscore"
    DIRECTIONS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, *, variants: Sequence[str] = ()) -> None:
        super().__init__(variants=list(check_variants(variants, "veriscore")))
        self.n = 0
        self.groups: List[List[Any]] = []  # [model, domain, [[id, s, total], ...]]
        self._index: Dict[Tuple[str, str], int] = {}

    def add(self, item: ItemRow) -> None:
        self.n += 1
        if item.get("abstained"):
            return
        self._group(item["model"], item["domain"]).append([item["id"], item["supported"], item["total_claims"]])

    def _group(self, model: str, domain: str) -> List[Any]:
        key = (model, domain)
        if key not in self._index:
            self._index[key] = len(self.groups)
            self.groups.append([model, domain, []])
        entries: List[Any] = self.groups[self._index[key]][2]
        return entries

    def _data(self) -> Dict[str, Any]:
        return {"n": self.n, "groups": self.groups}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n = int(data["n"])
        self.groups = []
        self._index = {}
        for model, domain, entries in data["groups"]:
            self._group(model, domain).extend(entries)

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, VeriScoreAccumulator)
        self.n += other.n
        for model, domain, entries in other.groups:
            self._group(model, domain).extend(entries)

    def finalize(self) -> Report:
        names = self.params["variants"]
        diagnostics: List[str] = []
        pools: Dict[str, List[int]] = {}
        # K pools in input order per domain are not needed (sorted), but the
        # domain order of the result is the first appearance of each domain
        for model, domain, entries in self.groups:
            pools.setdefault(domain, []).extend(e[2] for e in entries)
        domains = {d: veriscore_k(v, domain=d) for d, v in pools.items()}
        rows = _veriscore_rows(
            self.groups, domains, names, diagnostics, counts=(1, 2), where=lambda model, domain, e: str(e[0])
        )
        metrics: Dict[str, Any] = {}
        for row in rows:
            tag = ".".join(p for p in (row.model, row.domain) if p)
            metrics[f"veriscore.{tag}"] = row.veriscore
            metrics[f"f1_at_k_max.{tag}"] = row.f1_at_k_max
        if len(rows) == 1:
            metrics["veriscore"] = rows[0].veriscore
            metrics["f1_at_k_max"] = rows[0].f1_at_k_max
        result = {
            "domains": {d: {"k_median": k[0], "k_max": k[1]} for d, k in domains.items()},
            "scores": [row._asdict() for row in rows],
        }
        sum_rule = "py312_compensated" if "veriscore_py312_sum" in names else "sequential"
        sig = signature(command="veriscore", variants=names, params=[("K", "upper_median,max"), ("mean", sum_rule)])
        return Report(FAMILY, sig, result, metrics, self.notes() + diagnostics)


def veriscore_file(
    path: str,
    *,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``factuality veriscore`` over per-response counts ``{model?, domain, supported, total_claims, abstained?}``.

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts a file in which every response abstained.
    """
    acc = VeriScoreAccumulator(variants=list(check_variants(variants, "veriscore")))
    accumulate_items(
        acc, functools.partial(_veriscore_record, path=path), iter_records(path), on_item=on_item, on_result=acc.note
    )
    if acc.n == 0 and not _shard(allow_empty):
        raise _no_valid(path, "the file holds no response")
    if not acc.groups and not _shard(allow_empty):
        raise _no_valid(path, "every response abstained")
    return finish(acc)


def _veriscore_record(numbered: Tuple[int, Mapping[str, Any]], *, path: str) -> Tuple[ItemRow, Optional[str]]:
    """The per-item work of ``veriscore`` (picklable): the row and its diagnostic (None: none)."""
    lineno, rec = numbered
    try:
        row = veriscore_item(rec, where=f"{path}:{lineno}")
    except ScoringError as exc:
        raise ScoringError(exc.msg, path=path, line=lineno, field=exc.field) from None
    note = None
    if row["supported"] > row["total_claims"]:
        note = (
            f"{record_name(path, lineno, rec.get('id'))}: supported {row['supported']} > total_claims "
            f"{row['total_claims']} (precision > 1; kept as the reference would)"
        )
    return row, note


# --- correlate ---------------------------------------------------------------------

CORRELATE_MODES = ("pairs", "table", "study")


def _corr_dict(res: CorrelationResult) -> Dict[str, Any]:
    return {"statistic": _clean(res.statistic), "pvalue": _clean(res.pvalue)}


def correlate_item(record: Mapping[str, Any], *, line: int, variants: Iterable[str] = ()) -> ItemRow:
    """One ``correlate`` pairs-mode item row: ``{"line", "id"?, "pearson", "pearson_pvalue", "spearman",
    "spearman_pvalue"}`` (null where undefined), or ``{"line", "id"?, "error"}``."""
    row: ItemRow = {"line": line}
    if "id" in record:
        row["id"] = record["id"]
    x, y = record.get("x"), record.get("y")
    if not isinstance(x, list) or not isinstance(y, list):
        row["error"] = "x and y must be lists of numbers"
        return row
    try:
        p, s = pearson(x, y, variants=variants), spearman(x, y)
    except ScoringError as exc:
        row["error"] = str(exc)
        return row
    row.update(
        pearson=_clean(p.statistic),
        pearson_pvalue=_clean(p.pvalue),
        spearman=_clean(s.statistic),
        spearman_pvalue=_clean(s.pvalue),
    )
    return row


def _row_line(row: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if "id" in row:
        out["id"] = row["id"]
    if "error" in row:
        out["error"] = row["error"]
        return out
    out["pearson"] = {"statistic": row["pearson"], "pvalue": row["pearson_pvalue"]}
    out["spearman"] = {"statistic": row["spearman"], "pvalue": row["spearman_pvalue"]}
    return out


@register_accumulator
class CorrelateAccumulator(Accumulator):
    """``factuality correlate``: Pearson and Spearman with p-values, in three modes.

    ``pairs``: one correlation per input line (the item row holds it; the state
    keeps the output lines).  ``table``: the item rows are ``{"line", "x",
    "y"}`` and the state keeps the pairs (ranks and numpy means need all of
    them).  ``study``: one row per labelled response, ``human.<metric>`` and
    ``safe.<metric>`` values; the state keeps them.
    """

    FAMILY = FAMILY
    COMMAND = "correlate"
    DIRECTIONS = {"pearson": "higher", "spearman": "higher"}

    def __init__(self, *, mode: str = "pairs", variants: Sequence[str] = ()) -> None:
        if mode not in CORRELATE_MODES:
            raise ScoringError(f"unknown correlate mode {mode!r}")
        super().__init__(mode=mode, variants=list(check_variants(variants, "correlate")))
        self.rows: List[Dict[str, Any]] = []

    def add(self, item: ItemRow) -> None:
        mode = self.params["mode"]
        if mode == "pairs":
            self.rows.append(_row_line(item))
        elif mode == "table":
            self.rows.append({"x": item["x"], "y": item["y"]})
        else:
            self.rows.append({k: v for k, v in item.items() if k.startswith(("human.", "safe."))})

    def _data(self) -> Dict[str, Any]:
        return {"rows": self.rows}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.rows = list(data["rows"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, CorrelateAccumulator)
        self.rows.extend(other.rows)

    def finalize(self) -> Report:
        mode = self.params["mode"]
        variants = self.params["variants"]
        if mode == "study":
            return self._study()
        if mode == "table":
            xs = [r["x"] for r in self.rows]
            ys = [r["y"] for r in self.rows]
            p, s = pearson(xs, ys, variants=variants), spearman(xs, ys)
            lines = [{"pearson": _corr_dict(p), "spearman": _corr_dict(s)}]
        else:
            lines = list(self.rows)
        metrics: Dict[str, Any] = {"n_lines": len(lines), "n_errors": sum(1 for d in lines if "error" in d)}
        if len(lines) == 1 and "error" not in lines[0]:
            for name in ("pearson", "spearman"):
                metrics[name] = lines[0][name]["statistic"]
                metrics[f"{name}_pvalue"] = lines[0][name]["pvalue"]
        sig = signature(command="correlate", variants=variants, params=[("mode", mode), ("alternative", "two-sided")])
        return Report(FAMILY, sig, {"lines": lines}, metrics, self.notes())

    def _study(self) -> Report:
        human = [{k[6:]: v for k, v in r.items() if k.startswith("human.")} for r in self.rows]
        safe = [{k[5:]: v for k, v in r.items() if k.startswith("safe.")} for r in self.rows]
        results = correlation_study(human, safe, variants=self.params["variants"])
        lines = []
        metrics: Dict[str, Any] = {"n_responses": len(human)}
        for r in results:
            lines.append(
                {"metric": r.metric, "n": r.n, "pearson": _corr_dict(r.pearson), "spearman": _corr_dict(r.spearman)}
            )
            for name, res in (("pearson", r.pearson), ("spearman", r.spearman)):
                metrics[f"{name}.{r.metric}"] = _nan_none(res.statistic)
                metrics[f"{name}_pvalue.{r.metric}"] = _nan_none(res.pvalue)
            metrics[f"n.{r.metric}"] = r.n
        display = {
            r.metric: {
                "pearson": [round(r.pearson.statistic, 3), round_to_sigfigs(r.pearson.pvalue, 3)],
                "spearman": [round(r.spearman.statistic, 3), round_to_sigfigs(r.spearman.pvalue, 3)],
            }
            for r in results
        }
        notes = self.notes()
        missing = sum(1 for d in safe if not d)
        if missing:
            notes.append(f"{missing} of {len(human)} labelled responses have no SAFE line (dropped per metric)")
        result = {"n_responses": len(human), "lines": lines, "display": _clean(display)}
        sig = signature(
            command="correlate",
            variants=self.params["variants"],
            params=[("mode", "study"), ("order", "sorted_files"), ("alternative", "two-sided")],
        )
        return Report(FAMILY, sig, result, metrics, notes)


def correlate_file(
    path: str,
    *,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``correlate`` pairs mode: one ``{x: [...], y: [...]}`` per line; a bad line is an error line.

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts a file without a valid pair.
    """
    names = check_variants(variants, "correlate")
    acc = CorrelateAccumulator(mode="pairs", variants=names)
    accumulate_items(
        acc,
        functools.partial(_correlate_record, variants=names),
        iter_records(path),
        on_item=_noting(acc, path, on_item),
    )
    if all("error" in row for row in acc.rows) and not _shard(allow_empty):
        raise _no_valid(path, f"none of the {len(acc.rows)} line(s) holds a valid x/y pair")
    return finish(acc)


def _correlate_record(numbered: Tuple[int, Mapping[str, Any]], *, variants: Sequence[str]) -> ItemRow:
    """The per-item work of ``correlate`` pairs mode (picklable)."""
    lineno, rec = numbered
    return correlate_item(rec, line=lineno, variants=variants)


def _table_record(numbered: Tuple[int, Mapping[str, Any]], *, x: str, y: str, path: str) -> ItemRow:
    """The item row of one table row (picklable): ``{"line", "x", "y"}``."""
    lineno, rec = numbered
    values = []
    for col in (x, y):
        if col not in rec:
            raise ScoringError(f"no column {col!r}", path=path, line=lineno)
        try:
            values.append(parse_number(rec[col], col))
        except ValueError as exc:
            raise ScoringError(str(exc), path=path, line=lineno) from None
    return {"line": lineno, "x": values[0], "y": values[1]}


def _study_record(joined: Tuple[Tuple[str, int, str], Mapping[str, Any], Mapping[str, Any]]) -> ItemRow:
    """The study item row of one labelled response and its SAFE metrics (picklable)."""
    (model, line, topic), human, safe = joined
    row: ItemRow = {"model": model, "line": line, "topic": topic}
    row.update({f"human.{k}": v for k, v in human.items()})
    row.update({f"safe.{k}": v for k, v in safe.items()})
    return row


def correlate_table_file(
    path: str,
    *,
    x: str,
    y: str,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``correlate`` table mode: columns ``x`` and ``y`` of a JSONL/JSON/CSV/TSV table (x first).

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts an empty table.
    """
    names = check_variants(variants, "correlate")
    acc = CorrelateAccumulator(mode="table", variants=names)
    accumulate_items(acc, functools.partial(_table_record, x=x, y=y, path=path), iter_records(path), on_item=on_item)
    if not acc.rows and not _shard(allow_empty):
        raise _no_valid(path, "the table has no row")
    return finish(acc)


def labeled_files(paths: Sequence[str]) -> List[str]:
    """FActScore labelled files: each path, or the ``*.jsonl`` files without ``_`` of a folder (sorted)."""
    files: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl") and "_" not in n)
            if not names:
                raise ScoringError("no *.jsonl labelled files (without '_') here", path=path)
            files.extend(os.path.join(path, n) for n in names)
        else:
            files.append(path)
    return files


def study_file(
    labeled: Sequence[str],
    safe_path: str,
    *,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The SAFE-vs-human study (``correlate --labeled ... --safe ...``).

    The item rows are the labelled responses (sorted files, then line order):
    ``{"model", "line", "topic", "human.<metric>"..., "safe.<metric>"...}``.
    The SAFE file is indexed first (by ``model_name`` and ``line`` or ``topic``).
    """
    names = check_variants(variants, "correlate")
    keys: List[Tuple[str, int, str]] = []
    human: List[Dict[str, Any]] = []
    for path in labeled_files(labeled):
        model = os.path.basename(path).split(".")[0]
        for lineno, rec in iter_records(path):
            counts = human_label_counts(rec, where=f"{path}:{lineno}")
            if counts is None:
                continue
            keys.append((model, lineno - 1, str(rec.get("topic", ""))))
            human.append(study_metrics_human(counts))
    if not human:
        raise _no_valid(", ".join(labeled), "no labelled response with human labels")
    by_line = {(m, line): i for i, (m, line, _) in enumerate(keys)}
    by_topic: Dict[Tuple[str, str], int] = {}
    for i, (m, _, topic) in enumerate(keys):
        by_topic.setdefault((m, topic), i)
    safe: List[Dict[str, Any]] = [{} for _ in human]
    for lineno, rec in iter_records(safe_path):
        where = f"{safe_path}:{lineno}"
        model = str(rec.get("model_name"))
        if "line" in rec:
            idx = by_line.get((model, rec["line"]))
        elif "topic" in rec:
            idx = by_topic.get((model, rec["topic"]))
        else:
            raise ScoringError("needs model_name and line (0-based) or topic", path=safe_path, line=lineno)
        if idx is None:
            raise ScoringError(
                f"no labelled response for model_name={model!r} "
                f"{'line' if 'line' in rec else 'topic'}={rec.get('line', rec.get('topic'))!r}",
                path=safe_path,
                line=lineno,
            )
        safe[idx] = study_metrics_safe(rec, where=where)
    acc = CorrelateAccumulator(mode="study", variants=names)
    accumulate_items(acc, _study_record, zip(keys, human, safe), on_item=on_item)
    return finish(acc)


# --- judge ------------------------------------------------------------------------

JUDGE_COUNTS = ("supported", "not_supported", "irrelevant", "num_claims", "dropped")
"""The per-response label counts of ``factuality judge`` (summed in its report)."""
_COUNTS = JUDGE_COUNTS


@register_accumulator
class JudgeAccumulator(Accumulator):
    """``factuality judge``'s report: response and error counts and the summed label counts.

    Item rows are the judged lines without their ``facts``:
    ``{"id", "supported", "not_supported", "irrelevant", "num_claims", "dropped"}``
    or ``{"id", "error"}``; the state is integer sums (exact merges).
    """

    FAMILY = FAMILY
    COMMAND = "judge"
    DIRECTIONS = {"supported": "higher", "not_supported": "lower", "dropped": "lower"}

    def __init__(self, *, judge_model: str = "none", judge_template: str = "builtin", records: str = "") -> None:
        super().__init__(judge_model=judge_model, judge_template=judge_template, records=records)
        self.responses = 0
        self.errors = 0
        self.totals = {k: 0 for k in _COUNTS}

    def add(self, item: ItemRow) -> None:
        self.responses += 1
        if "error" in item:
            self.errors += 1
            return
        for k in _COUNTS:
            self.totals[k] += int(item[k])

    def _data(self) -> Dict[str, Any]:
        return {"responses": self.responses, "errors": self.errors, "totals": self.totals}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.responses = int(data["responses"])
        self.errors = int(data["errors"])
        self.totals = {k: int(data["totals"][k]) for k in _COUNTS}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, JudgeAccumulator)
        self.responses += other.responses
        self.errors += other.errors
        for k in _COUNTS:
            self.totals[k] += other.totals[k]

    def finalize(self) -> Report:
        p = self.params
        result: Dict[str, Any] = {"responses": self.responses, "errors": self.errors, "output": p["records"]}
        result.update(self.totals)
        sig = signature(
            command="judge",
            params=[
                ("step", "judge"),
                ("search", "passages"),
                ("judge_template", p["judge_template"]),
                ("judge_model", p["judge_model"]),
            ],
        )
        metrics: Dict[str, Any] = {k: v for k, v in result.items() if isinstance(v, int)}
        return Report(FAMILY, sig, result, metrics, self.notes())


# --- Pearson tolerance -------------------------------------------------------------


def pearson_tolerance(r: float, n: int) -> Tuple[float, float]:
    """How far :func:`pearson` can be from scipy's ``pearsonr``: ``(abs_tol_r, rel_tol_p)``.

    scipy's ``r`` is a BLAS ``ddot`` of the normalised deviations, whose
    summation order (and FMA use) depends on the CPU, so it cannot be
    reproduced in the standard library; this module's ``r`` is the correctly
    rounded (``fsum``) dot of the same normalised terms.  Both are within the
    classical dot-product bound of the exact value, ``n * 2**-53`` absolute
    (the terms' magnitudes sum to at most 1), so ``|r - r_scipy| <= (n + 4) *
    2**-53`` everywhere, including near ``r = 0`` (an absolute, not relative,
    bound).  The p-value ``2 I_{(1-|r|)/2}(a, a)`` (``a = n/2 - 1``) amplifies
    that error near ``|r| = 1``: ``d log p / d|r| <= max(a, 1) * 2 / (1 - |r|)``,
    so the relative p tolerance is ``1e-12 + 2 * max(a, 1) * abs_tol_r / (1 - |r|)``
    (infinite at ``|r| = 1``).

    >>> pearson_tolerance(0.5, 10)[0] == 14 * 2.0 ** -53
    True
    """
    abs_r = (n + 4) * 2.0**-53
    a = max(n / 2.0 - 1.0, 1.0)
    gap = 1.0 - abs(r)
    rel_p = math.inf if gap <= 0 else 1e-12 + 2.0 * a * abs_r / gap
    return abs_r, rel_p


# --- reference formats (used by the CLI and by ``rageval-min merge``) -----------------------


def gate_trailer(outcomes: Sequence[GateOutcome], passed: bool) -> str:
    """The last line of a gated ``jsonl`` output: ``{"gates": [...], "pass": ...}``.

    The gate objects are those of the JSON report, so a gated run never
    decides on a value its output does not show.
    """
    gates = [
        {
            "gate": o.text,
            "name": o.name,
            "op": o.op,
            "threshold": o.threshold,
            "value": None if isinstance(o.value, float) and not math.isfinite(o.value) else o.value,
            "passed": o.passed,
        }
        for o in outcomes
    ]
    return json.dumps({"gates": gates, "pass": passed}, ensure_ascii=False) + "\n"


def render_jsonl(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """``--format jsonl`` of a report holding its lines (``correlate``), plus the gate line when gated.

    ``f1k`` writes its lines while it scores and keeps only the values its
    summary needs, so its report (and a merge of its states) has no lines: a
    ScoringError says so.
    """
    if "lines" not in report.result:
        raise ScoringError(
            "--format jsonl: this report has no per-line results (f1k writes its lines while it scores; "
            "`merge` writes its report as json, text, markdown, junit or html)"
        )
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in report.result["lines"])
    if outcomes:
        text += gate_trailer(outcomes, overall_pass(report, outcomes))
    return text


def render_safe(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """``--format safe`` needs run_eval's output document, which only ``factuality safe`` has (a ScoringError).

    ``factuality safe`` renders it from :func:`safe_evaluate`'s ``result``; a
    report rebuilt from partial states (``merge``) does not carry the document.
    """
    raise ScoringError(
        "--format safe is the document run_eval writes, which only `factuality safe` on the experiment "
        "file can produce; `merge` writes its report as json, text, markdown, junit or html"
    )


REPORT_FORMATS = {"jsonl": render_jsonl, "safe": render_safe}
"""The family's own report formats (format -> ``(report, gate outcomes) -> text``)."""
