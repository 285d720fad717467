"""Mirrors google-deepmind/long-form-factuality@9d27158:eval/run_eval.py: ``f1_<flag>``, ``side{n}_avg/std_*``.

``factuality safe`` reproduces ``add_aggregation`` + ``print_results`` of
``eval/run_eval.py`` on an experiment result that already holds SAFE ratings,
and :func:`count_labels` the label counting of the SAFE rater.  The prompts go
through :func:`~rageval_min._parallel.accumulate_items` (``--jobs``, Dask; every
output byte-identical); the report is
:class:`~rageval_min.factuality.accumulators.SafeAccumulator`'s.

Reference quirks kept on purpose:

* the per-prompt key carries the *raw* ``--max_claim`` flag (``f1_-1`` means K=100);
* ``run_eval`` summarises every side rated in ``per_prompt_data[0]``, whatever
  the ``--eval_side`` flags and side names say, and leaves a side that prompt 0
  lacks untouched (variant ``sides_by_flags`` is the earlier flag-based choice);
* means are numpy's pairwise float64 means of prompt 0's numeric metrics,
  standard deviations are population ones.
"""

import copy
import functools
import json
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._contract import Accumulator, ItemRow, finish
from .._io import read_json
from .._parallel import accumulate_items
from ..errors import ScoringError
from ..report import Report
from ._common import (
    DEFAULT_MAX_CLAIMS,
    IRRELEVANT_LABEL,
    NOT_SUPPORTED_LABEL,
    SUPPORTED_LABEL,
    Number,
    _is_number,
    _no_valid,
    check_variants,
)
from .accumulators import SafeAccumulator
from .bootstrap import check_bootstrap, parse_max_claims, select_k
from .metric_utils import calculate_metrics


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
    if not acc.sides:  # what run_eval does with such a file: it writes it through unchanged
        diagnostics.append(
            "no side has posthoc eval data: the file is written through unchanged and no metric is "
            "computed, as the reference's run_eval does"
        )
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
    at all is written through unchanged, as the reference does, with a
    diagnostic (with a K rule it is an input error: there is nothing to pick K from).
    """
    check_bootstrap(bootstrap, confidence, seed)
    names = check_variants(variants, "safe")
    fixed_k, rule = parse_max_claims(max_claim, "max_claim")
    data = read_json(path)
    if not isinstance(data, dict):
        raise ScoringError("expected a JSON object (an experiment result)", path=path)
    prompts = data.get("per_prompt_data")
    unrated = isinstance(prompts, list) and not any(
        isinstance(p, dict) and any(f"side{n}_posthoc_eval_data" in p for n in (1, 2)) for p in prompts
    )
    if unrated and fixed_k is None:  # a K rule needs ratings (run_eval itself has no rules)
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
        res = run_eval_aggregate(
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
    return res


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
