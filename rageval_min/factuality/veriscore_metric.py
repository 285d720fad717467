"""Mirrors Yixiao-Song/VeriScore@7dd3352: per-domain K (upper median, max) and per-response F1@K.

``factuality veriscore`` reads per-response counts ``{model?, domain,
supported, total_claims, abstained?}``, computes K per domain over every
model's non-abstained responses and averages F1@K per (model, domain) with
Python's ``sum(list) / len(list)`` of Python <= 3.11 (:func:`_seq_mean`);
variant ``veriscore_py312_sum`` uses the compensated sum of Python >= 3.12
(:func:`_py312_sum`).
"""

import functools
import math
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
)

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._io import iter_records
from .._metrics import Input, InputField, Metric
from .._parallel import accumulate_items
from .._state_schema import Count, Either, Fields, Flag, Items, OneOf, Row, Schema, Text
from .._state_schema import Number as FiniteNumber
from ..errors import ScoringError
from ..report import Report
from ._common import (
    COMMAND_VARIANTS,
    FAMILY,
    VARIANTS,
    Number,
    _check_variants,
    _no_valid,
    _shard,
    check_variants,
    parse_number,
    record_name,
    signature,
)


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
        field = "supported" if s < 0 else "total_claims"
        raise ScoringError(f"counts must not be negative, got {s} and {total}", record=where or None, field=field)
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
    METRICS = (
        Metric("supported", "neither", "count", "supported claims of the response (F1@K needs the domain's K)", True),
        Metric("total_claims", "neither", "count", "claims of the response", True),
        Metric("abstained", "neither", "outcome", "1 when the response abstained (left out of K and F1)", True),
        Metric(
            "veriscore",
            "higher",
            "mean",
            "VeriScore: mean F1@K_median (only when there is one model and domain)",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "f1_at_k_max", "higher", "mean", "mean F1@K_max (only when there is one model and domain)", lo=0.0, hi=1.0
        ),
        Metric(
            "veriscore.{tag}",
            "higher",
            "mean",
            "VeriScore of a (model, domain): mean F1@K_median; tag is model.domain, or domain without a model",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "f1_at_k_max.{tag}", "higher", "mean", "mean F1@K_max of a (model, domain), tagged as above", lo=0.0, hi=1.0
        ),
    )
    INPUTS = (
        Input(
            "--input",
            "per-response claim counts",
            "id",
            (
                InputField("id", ("string", "integer"), False, "named by path:line"),
                InputField("model", ("string",), False, "model_name, else the empty model"),
                InputField("model_name", ("string",), False, "the empty model"),
                InputField("domain", ("string",), True, "prompt_source, else an input error"),
                InputField("prompt_source", ("string",), False, "an input error when domain is missing too"),
                InputField("supported", ("number", "string"), True, "an input error (0 for an abstained response)"),
                InputField("total_claims", ("number", "string"), True, "an input error (0 for an abstained response)"),
                InputField("abstained", ("boolean", "null"), False, "false"),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields({"variants": Items(Text(choices=COMMAND_VARIANTS["veriscore"]), unique=True)}),
        data=Fields(
            {
                "n": Count(),
                "groups": Items(
                    Row(
                        (
                            Text(),  # model
                            Text(),  # domain
                            Items(
                                Row(
                                    (
                                        Either((Text(), FiniteNumber(), Flag(), OneOf((None,)))),
                                        FiniteNumber(lo=0),
                                        FiniteNumber(lo=0),
                                    )
                                ),
                                min_len=1,  # a group exists because a response of it was scored
                            ),  # [id, supported, total_claims]
                        )
                    )
                ),
            }
        ),
    )

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
