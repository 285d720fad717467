"""Mirrors IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/judge_wrapper.py: IDK conditioning and pandas column types.

The ``condition`` step (the reference pipeline's last stage): its record function, item rows and
accumulator; its file-level function is :func:`rageval_min.mtrag.files.condition_file`.

Int-versus-float rule of the reference kept here, because it reaches the JSON output (the
per-value rules of the algorithmic step are :mod:`rageval_min.mtrag.run_algorithmic`'s):

* per **column**, for ``idk_eval``, ``underspecified_eval`` and the conditioned metrics: the
  reference builds each as a pandas column before writing the file, so one float (0.5) or
  missing value anywhere in the file turns every ``1``/``0`` of that metric into
  ``1.0``/``0.0``; only an all-integer column keeps integers, and a column holding a string
  (``"unknown"``) keeps each value's own type (:class:`ColumnTypes`).  ``condition_file``
  streams: it reads the input twice, the first pass filling the small, mergeable type
  summary (and validating every record, so a bad input writes nothing), the second writing;
  no record is held in memory.  ``mtrag judge`` holds its records anyway (the judge calls
  are batched) and types its columns from them.
"""

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .._contract import ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._state_schema import Count, Fields, Integer, Items, Maybe, Schema, Table, Text
from ..errors import ScoringError
from ..report import Report
from ._common import (
    ANSWERABILITY_FIELDS,
    CONDITIONED_METRICS,
    FAMILY,
    MODEL_FIELD,
    OUTPUT_STATE,
    RECORDS_METRIC,
    STEP_VARIANTS,
    TASK_ID_FIELD,
    ExactMean,
    RecordResult,
    _check_variants,
    _MeansAccumulator,
    _metric_row,
    _record_id,
    answerability_of,
    check_variants,
    exact_mean_state,
)

__all__ = [
    "ColumnTypes",
    "ConditionAccumulator",
    "condition_idk",
    "condition_item",
    "condition_record",
    "conditioned_key",
    "round_floats",
]

_NOT_ANSWERABLE = ("UNANSWERABLE", "CONVERSATIONAL")


def condition_idk(
    value: Any,
    answerability: Optional[str],
    idk: Any,
    *,
    underspecified: Any = None,
    paper_idk: bool = False,
) -> Any:
    """IDK-conditioned value of one metric (``get_idk_underspec_score`` / ``get_idk_score``).

    With ``A = answerability`` and ``I = idk`` (``idk_eval[0]``), the first rule that
    matches applies:

    0. (default only; skipped by ``paper_idk``) ``A == "UNDERSPECIFIED"``: ``1`` if
       ``underspecified == 1`` else ``0``;
    1. ``A`` in {UNANSWERABLE, CONVERSATIONAL} and ``I == 1``: ``1``;
    2. ``A`` in {UNANSWERABLE, CONVERSATIONAL} and ``I`` in {0, 0.5}: ``0``;
    3. ``I == 1``: ``0`` (full IDK on ANSWERABLE, PARTIAL, None or anything else);
    4. otherwise the raw ``value``.  Quirk kept: an UNANSWERABLE row whose judge output
       parsed to ``"unknown"`` or ``None`` keeps its raw value.

    >>> condition_idk(0.4, "UNANSWERABLE", 1), condition_idk(0.4, "UNANSWERABLE", 0.5)
    (1, 0)
    >>> condition_idk(0.4, "PARTIAL", 1), condition_idk(0.4, "ANSWERABLE", 0.5)
    (0, 0.4)
    >>> condition_idk(0.4, "UNANSWERABLE", "unknown")
    0.4
    >>> condition_idk(0.4, "UNDERSPECIFIED", 0, underspecified=1)
    1
    """
    if not paper_idk and answerability == "UNDERSPECIFIED":
        return 1 if underspecified == 1 else 0
    if answerability in _NOT_ANSWERABLE:
        if _eq(idk, 1):
            return 1
        if _eq(idk, 0) or _eq(idk, 0.5):
            return 0
    if _eq(idk, 1):
        return 0
    return value


def _eq(a: Any, b: Any) -> bool:
    # Python ``==`` as in the reference, but never raising on odd types.
    try:
        return bool(a == b)
    except Exception:
        return False


def conditioned_key(metric: str, *, paper_idk: bool = False) -> str:
    """Output key of a conditioned metric.

    >>> conditioned_key("RB_agg"), conditioned_key("RB_agg", paper_idk=True)
    ('RB_agg_idk_underspecified', 'RB_agg_idk')
    """
    return metric + ("_idk" if paper_idk else "_idk_underspecified")


def round_floats(value: Any, digits: int = 10) -> Any:
    """Round every float in a JSON value to ``digits`` decimals, as pandas
    ``to_json(double_precision=10)`` does when the reference rewrites its file; NaN and
    infinities become ``None`` (pandas writes ``null``).  Ints and bools are untouched.

    >>> round_floats({"m": [0.9999997615814201, 1e-12, 2, float("nan")]})
    {'m': [0.9999997616, 0.0, 2, None]}
    """
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, digits)
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [round_floats(v, digits) for v in value]
    return value


def condition_record(
    record: Dict[str, Any],
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    record_id: Optional[str] = None,
) -> RecordResult:
    """IDK conditioning of one record (the reference's last pipeline stage).

    For each name in ``metrics`` that the record has, writes
    ``<name>_idk_underspecified`` (or ``<name>_idk`` with ``paper_idk``) as ``[x]`` using
    :func:`condition_idk` on ``metrics[name][0]``, ``answerability[0]``,
    ``metrics.idk_eval[0]`` and ``metrics.underspecified_eval[0]``.  An existing
    conditioned key is overwritten.  A requested metric that the record lacks is skipped
    with a diagnostic.  Missing ``idk_eval`` raises :class:`ScoringError` (the reference
    raises KeyError); with the default rules, an UNDERSPECIFIED row without
    ``underspecified_eval`` also raises.
    """
    variants = _check_variants(variants)
    paper = "paper_idk" in variants
    rid = record_id or _record_id(record, "record")
    diagnostics: List[str] = []
    old = record.get("metrics")
    if not isinstance(old, dict):
        raise ScoringError("missing 'metrics' object", record=rid, field="metrics")
    answerability = answerability_of(record, alias="answerability_alias" in variants)

    def first(name: str, required: bool) -> Any:
        value = old.get(name)
        if isinstance(value, list) and value:
            return value[0]
        if required:
            raise ScoringError("missing or empty", record=rid, field=f"metrics.{name}")
        return None

    idk = first("idk_eval", True)
    underspecified = None
    if not paper and answerability == "UNDERSPECIFIED":
        underspecified = first("underspecified_eval", True)
    new = dict(old)
    for name in metrics:
        value = old.get(name)
        if not isinstance(value, list) or not value:
            diagnostics.append(f"{rid}: metric {name} missing; not conditioned")
            continue
        new[conditioned_key(name, paper_idk=paper)] = [
            condition_idk(value[0], answerability, idk, underspecified=underspecified, paper_idk=paper)
        ]
    out = dict(record)
    out["metrics"] = new
    return RecordResult(out, diagnostics)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "missing" if value != value else "float"
    if value is None:
        return "missing"
    return "object"


class ColumnTypes:
    """What kinds of value each column holds, and so its pandas dtype when the reference writes it.

    The reference builds ``idk_eval``, ``underspecified_eval`` and the
    conditioned metrics as DataFrame columns before putting each value into the
    record's ``metrics``; pandas gives the column one dtype (spec 11):

    * every value an int: ``int64``, the integers are written as integers;
    * ints with a float or a missing value (None, NaN): ``float64``, so every
      ``1``/``0`` is written ``1.0``/``0.0`` and a missing value ``null``;
    * a string (``"unknown"``) or another object anywhere: ``object``, every
      value keeps its own type (bools mixed with anything else too).

    The summary is a few flags per column, so it merges exactly (the union of
    the flags) and needs no record in memory: a streaming writer makes one pass
    to fill it and a second to write.

    >>> t = ColumnTypes()
    >>> for v in (1, 0, 0.5):
    ...     t.add("idk_eval", v)
    >>> t.add("x", 1); t.add("x", "unknown")
    >>> t.dtype("idk_eval"), t.cast("idk_eval", 1), t.dtype("x"), t.cast("x", 1)
    ('float', 1.0, 'object', 1)
    """

    def __init__(self) -> None:
        self.seen: Dict[str, List[str]] = {}

    def add(self, column: str, value: Any) -> None:
        kinds = self.seen.setdefault(column, [])
        kind = _kind(value)
        if kind not in kinds:
            kinds.append(kind)

    def merge(self, other: "ColumnTypes") -> None:
        for column, kinds in other.seen.items():
            mine = self.seen.setdefault(column, [])
            for kind in kinds:
                if kind not in mine:
                    mine.append(kind)

    def data(self) -> Dict[str, List[str]]:
        return {column: sorted(kinds) for column, kinds in self.seen.items()}

    @classmethod
    def from_data(cls, data: Mapping[str, Sequence[str]]) -> "ColumnTypes":
        out = cls()
        out.seen = {str(c): [str(k) for k in kinds] for c, kinds in data.items()}
        return out

    def dtype(self, column: str) -> str:
        """``int``, ``float``, ``bool`` or ``object`` (``int`` for a column never seen)."""
        kinds = set(self.seen.get(column, ()))
        if "object" in kinds:
            return "object"
        if "bool" in kinds:
            return "bool" if kinds == {"bool"} else "object"
        if kinds & {"float", "missing"}:
            return "float"
        return "int"

    def cast(self, column: str, value: Any) -> Any:
        """``value`` as the column's dtype writes it (an int in a float column becomes a float)."""
        if isinstance(value, int) and not isinstance(value, bool) and self.dtype(column) == "float":
            return float(value)
        return value


def condition_row(conditioned: Mapping[str, Any], keys: Sequence[str], *, alias: bool = False) -> ItemRow:
    """The item row of a record that :func:`condition_record` has conditioned (``keys``: its conditioned keys)."""
    metrics = conditioned["metrics"]
    values = {k: metrics[k][0] for k in keys if isinstance(metrics.get(k), list) and metrics[k]}
    return _metric_row(conditioned, values, keys, alias=alias)


def condition_item(
    record: Dict[str, Any],
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    digits: Optional[int] = 10,
) -> ItemRow:
    """The ``condition`` item row of one evaluated record (the value each record gets, before
    the file's column typing; see :class:`ColumnTypes`).

    >>> condition_item({"task_id": "t", "answerability": ["UNANSWERABLE"],
    ...                 "metrics": {"RB_agg": [0.4], "idk_eval": [1]}}, metrics=["RB_agg"])
    {'task_id': 't', 'RB_agg_idk_underspecified': 1, 'group': 'Unanswerable', 'model': None, 'non_numeric': []}
    """
    variants = check_variants(variants)
    if digits is not None:
        record = round_floats(record, digits)
    out = condition_record(record, metrics=metrics, variants=variants)
    keys = [conditioned_key(m, paper_idk="paper_idk" in variants) for m in metrics]
    return condition_row(out.record, keys, alias="answerability_alias" in variants)


@register_accumulator
class ConditionAccumulator(_MeansAccumulator):
    """``mtrag condition``: the exact mean of each conditioned metric over the records."""

    FAMILY = FAMILY
    COMMAND = "condition"
    METRICS = (
        (RECORDS_METRIC,)
        + tuple(
            Metric(
                conditioned_key(m, paper_idk=paper),
                "higher",
                "mean",
                f"{m}, IDK-conditioned ({'paper_idk' if paper else 'with underspecified'} rules)",
                per_item=True,
                # RB_agg has no range: negative BERTScore components are not guarded (as upstream)
                lo=None if m == "RB_agg" else 0.0,
                hi=None if m == "RB_agg" else 1.0,
            )
            for paper in (False, True)
            for m in CONDITIONED_METRICS
        )
        + (
            Metric(
                "{metric}_idk_underspecified",
                "higher",
                "mean",
                "another --metric, IDK-conditioned (item rows carry it; declared higher as conditioning is for scores)",
            ),
            Metric("{metric}_idk", "higher", "mean", "another --metric, IDK-conditioned (paper_idk rules)"),
        )
    )
    INPUTS = (
        Input(
            "--input",
            "evaluated records with metrics.idk_eval",
            "task_id",
            (
                TASK_ID_FIELD,
                InputField("metrics", ("object",), True, "an input error"),
                InputField("metrics.idk_eval", ("array",), True, "an input error (reference: KeyError)"),
                InputField(
                    "metrics.underspecified_eval",
                    ("array",),
                    False,
                    "an input error on an UNDERSPECIFIED record (default rules)",
                ),
                InputField("metrics.{metric}", ("array",), False, "not conditioned, with a diagnostic"),
            )
            + ANSWERABILITY_FIELDS
            + (MODEL_FIELD,),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "output": OUTPUT_STATE,
                "metrics": Items(Text(choices=CONDITIONED_METRICS), unique=True),
                "variants": Items(Text(choices=STEP_VARIANTS["condition"]), unique=True),
                "digits": Maybe(Integer(lo=0, hi=17)),
            }
        ),
        data=Fields(
            {
                "records": Count(),
                # one mean per metric, named as conditioned_key names it
                "means": Table(
                    exact_mean_state("data.records"),
                    key_pattern="(%s)_idk(_underspecified)?" % "|".join(CONDITIONED_METRICS),
                    max_len=len(CONDITIONED_METRICS),
                ),
            }
        ),
    )

    def __init__(
        self,
        *,
        output: Optional[str] = None,
        metrics: Sequence[str] = CONDITIONED_METRICS,
        variants: Sequence[str] = (),
        digits: Optional[int] = 10,
    ) -> None:
        variants = check_variants(variants)
        super().__init__(output=output, metrics=list(metrics), variants=list(variants), digits=digits)
        self.keys = [conditioned_key(m, paper_idk="paper_idk" in variants) for m in metrics]
        self.records = 0
        self.means = {key: ExactMean() for key in self.keys}

    def finalize(self) -> Report:
        params = [
            ("step", "condition"),
            ("metrics", ",".join(self.params["metrics"])),
            ("float_digits", self.params["digits"]),
        ]
        return self._means_final(params)
