"""Mirrors google-deepmind/long-form-factuality@9d27158:eval/metric_utils.py: F1@K and ``round_to_sigfigs``.

``factuality f1k`` applies :func:`calculate_metrics` to every line of a counts
file (one item row per line, see :func:`f1k_item`); its report is
:class:`~rageval_min.factuality.accumulators.F1kAccumulator`'s.

Reference quirks kept on purpose:

* ``calculate_metrics`` returns the **int** ``0`` when nothing is supported, and
  recall is the int ``1`` when S >= K (``min(1, S/K)`` keeps its first argument
  on ties), so F1 can be the float ``1.0`` or the int ``0``;
* the check order is K <= 0, then negative counts, then S == 0;
* K has no upper clamp, and irrelevant facts take part in neither term.
"""

import functools
import json
import math
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    Union,
)

from .._contract import ItemRow, finish
from .._io import iter_records
from .._parallel import accumulate_items
from ..errors import ScoringError
from ..report import Report
from ._common import (
    DEFAULT_MAX_CLAIMS,
    Number,
    _clean,
    _no_valid,
    _noting,
    _shard,
    parse_number,
)
from .accumulators import F1kAccumulator
from .bootstrap import check_bootstrap, parse_max_claims, select_k


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
