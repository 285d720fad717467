"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/sub_eval.py: scoring judged comparisons.

Reference: ``open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/`` (``sub_eval.py``
builds the comparisons and scores them with ``analyze_util.py``; ``calculate_winrate_new.py``
gives the paper's new win rates).  The steps live next to this module, one per
reference file: ``construct_util.py`` (comparisons), ``prompts.py`` (judge
prompts), ``analyze_util.py`` (extraction, preprocessing, old-version tables),
``util.py`` (swap consistency, lengths), ``calculate_winrate_new.py`` (new
win rates), ``extras.py`` (opt-in extras), ``items.py`` (item rows); the judge
run of ``pairwise judge`` is in ``judge.py``.  This module puts them together:
:func:`score` parses each judged row, pairs it with its swapped partner
``idx;Y;X`` and computes the reference's two result families (``old_version``
tables and ``new_version`` rates) plus answer-length statistics.

Where the reference crashes, :func:`score` returns the spec's defined value and
a diagnostic (judge text that pandas would read as NaN, no consistent or no
inconsistent rows, refm without consistent rows, no non-EM rows) or raises
:class:`~rageval_min.errors.ScoringError` naming the ``cmp_index``
(malformed ``cmp_index``, too many API failures).

The family contract (``docs/adding-a-family.md``): :func:`score_item` turns one
judged comparison into an item row; :class:`PairwiseAccumulator` turns item
rows into the report.  Its state keeps the rows themselves, in input order,
because every aggregate needs whole columns: the partner look-up (the last
prediction of a ``cmp_index`` wins), first-appearance model order, the float32
tables over the consistent rows and numpy's pairwise sums of the lengths.  The
state therefore grows with the input (ten fields per row); merging parts
concatenates their rows, which is exact.  :func:`score_file` is the file-level
entry point (``pairwise score``); :func:`score` works on records in memory.
"""

import functools
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._parallel import accumulate_items
from .._signature import make_signature
from .._state_schema import Count, Fields, Integer, Items, Maybe, OneOf, Row, Schema, Text
from ..errors import ScoringError
from ..report import Report
from ._common import (
    EXTRAS,
    FAMILY,
    LENGTH_UNITS,
    REFERENCE,
    VARIANTS,
    _check_lengths,
    _check_nopt,
    _metric_of,
    _Row,
    _row_of,
    check_extras,
    check_variants,
)
from .analyze_util import (
    Partition,
    check_failures,
    count_summary,
    old_version_tables,
    pair_both_orders,
    row_diagnostics,
)
from .calculate_winrate_new import new_version_rates
from .construct_util import Comparison, read_table
from .extras import add_extras
from .items import _item, candidate_outcomes, check_record_columns
from .metrics import JUDGE_INPUTS, JUDGE_METRICS, SCORE_INPUTS, SCORE_METRICS
from .prompts import template_id
from .util import length_stats

__all__ = [
    "PairwiseAccumulator",
    "PairwiseJudgeAccumulator",
    "PairwiseResult",
    "REPORT_FORMATS",
    "consistency_partitions",
    "guess_refm",
    "possible_metric_names",
    "read_records",
    "score",
    "score_file",
    "score_record_file",
    "signature",
    "signature_params",
    "table_metrics",
]


def guess_refm(pairs: Iterable[Tuple[str, str]]) -> str:
    """The one model present in every ``(A, B)`` pair (the reference model when ``--refm`` is not given)."""
    common: Optional[Set[str]] = None
    for a, b in pairs:
        pair = {a, b}
        common = pair if common is None else common & pair
    if common and len(common) == 1:
        return next(iter(common))
    raise ScoringError(
        "cannot infer the reference model (no single model is in every comparison); pass --refm", field="refm"
    )


def table_metrics(
    counts: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any], lstats: Sequence[Sequence[Any]]
) -> "OrderedDict[str, Any]":
    """The gateable metrics: counts, ``TABLE;model;column``, ``RATES;key``, ``length_mean;model``/``length_std``."""
    metrics: "OrderedDict[str, Any]" = OrderedDict()
    for k, v in counts.items():
        if v is not None:
            metrics[k] = v
    for name, table in old.items():
        cols = table["columns"]
        for row in table["rows"]:
            for c, v in zip(cols[1:], row[1:]):
                metrics[f"{name};{row[0]};{c}"] = v
    for name, rates in new.items():
        for k, v in rates.items():
            metrics[f"{name};{k}"] = v
    for m, mean, std in lstats:
        metrics[f"length_mean;{m}"] = mean
        metrics[f"length_std;{m}"] = std
    return metrics


# --------------------------------------------------------------------------- the contract


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature; ``params`` come from :func:`signature_params`.

    >>> signature(params=signature_params(nopt=2, refm="ref"))
    'rageval_min:0.1.0|family=pairwise|ref=open-compass/DevBench@bb593c1|variants=none|nopt=2|refm=ref|\
lengths=chars|judge_template=builtin|extras=none'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


def signature_params(
    *,
    nopt: int,
    refm: str,
    lengths: str = "chars",
    judge_template: str = "builtin",
    extras: Sequence[str] = (),
    judge_model: Optional[str] = None,
) -> List[Tuple[str, object]]:
    """The signature parameters in the family's order; ``judge_model`` only for judged runs."""
    params: List[Tuple[str, object]] = [
        ("nopt", nopt),
        ("refm", refm),
        ("lengths", lengths),
        ("judge_template", judge_template),
        ("extras", ",".join(check_extras(extras)) or "none"),
    ]
    if judge_model is not None:
        params.append(("judge_model", judge_model))
    return params


#: The item-row fields an accumulator keeps per row, in this order.
_STATE_FIELDS = (
    "cmp_index",
    "A",
    "B",
    "task",
    "choice",
    "exact_match",
    "api_failed",
    "judge_missing",
    "length_a",
    "length_b",
)


@register_accumulator
class PairwiseAccumulator(Accumulator):
    """``pairwise score``: the item rows, kept in input order; the report is built in :meth:`finalize`.

    The reference's aggregates need whole columns in input order (the partner
    look-up where the last prediction of a ``cmp_index`` wins, first-appearance
    model order, numpy pairwise sums of the lengths, float32 tables over the
    consistent rows), so the state is the rows themselves (ten fields each):
    it grows with the input, and merging concatenates, which is exact.

    ``judge_template`` is the template id (:func:`template_id`) and
    ``judge_model`` the judge's model name for a judged run (both only go
    into the signature); ``refm`` None is inferred at :meth:`finalize`.

    ``METRICS`` read the item rows for the candidate model: ``win`` is
    better high, ``loss`` low; ``tie`` (C or D) has no direction; the
    judge-side outcomes (``api_failed``, ``unparseable``, ``judge_missing``) are
    better low.
    """

    FAMILY = "pairwise"
    COMMAND = "score"
    #: every report and item-row metric (``DIRECTIONS`` and ``RATES`` are derived from them)
    METRICS = SCORE_METRICS
    INPUTS = SCORE_INPUTS

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "nopt": OneOf((2, 3, 4)),
                "refm": Maybe(Text(max_len=10_000)),
                "judge_column": Text(max_len=10_000),
                "variants": Items(Text(choices=VARIANTS), unique=True),
                "extras": Items(Text(choices=EXTRAS), unique=True),
                "lengths": Text(choices=LENGTH_UNITS),
                "failure_limit": Integer(lo=1),
                "judge_template": Text(max_len=10_000),
                "judge_model": Maybe(Text(max_len=10_000)),
            }
        ),
        data=Fields(
            {
                "fields": Row(tuple(OneOf((name,)) for name in _STATE_FIELDS)),
                "rows": Items(
                    Row(
                        (
                            Text(pattern=r"(?s)[^;]*;[^;]*;.*"),  # cmp_index: '{index};{model A};{model B}'
                            Text(),  # A
                            Text(),  # B
                            Text(),  # task
                            Maybe(Text(choices=("A", "B", "C", "D"))),  # choice
                            OneOf((0, 1)),  # exact_match
                            OneOf((0, 1)),  # api_failed
                            OneOf((0, 1)),  # judge_missing
                            Count(),  # length_a
                            Count(),  # length_b
                        )
                    )
                ),
            }
        ),
    )

    def __init__(
        self,
        *,
        nopt: int = 2,
        refm: Optional[str] = None,
        judge_column: str = "judge",
        variants: Sequence[str] = (),
        extras: Sequence[str] = (),
        lengths: str = "chars",
        failure_limit: int = 5,
        judge_template: str = "builtin",
        judge_model: Optional[str] = None,
    ) -> None:
        super().__init__(
            nopt=_check_nopt(nopt),
            refm=refm,
            judge_column=judge_column,
            variants=list(check_variants(variants)),
            extras=list(check_extras(extras)),
            lengths=_check_lengths(lengths),
            failure_limit=failure_limit,
            judge_template=judge_template,
            judge_model=judge_model,
        )
        self.variants = tuple(self.params["variants"])
        self.extras = tuple(self.params["extras"])
        self.rows: List[List[Any]] = []

    def add(self, item: ItemRow) -> None:
        self.rows.append([item[k] for k in _STATE_FIELDS])

    def _data(self) -> Dict[str, Any]:
        return {"fields": list(_STATE_FIELDS), "rows": [list(r) for r in self.rows]}

    def _load(self, data: Mapping[str, Any]) -> None:
        if list(data["fields"]) != list(_STATE_FIELDS):
            raise ValueError("unexpected row fields")
        self.rows = [list(r) for r in data["rows"]]
        if any(len(r) != len(_STATE_FIELDS) for r in self.rows):
            raise ValueError("a row has the wrong number of fields")

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, PairwiseAccumulator)
        self.rows.extend(list(r) for r in other.rows)

    def scoring_rows(self) -> List[_Row]:
        """The rows as the aggregation steps read them, in input order."""
        return [_row_of(pos, dict(zip(_STATE_FIELDS, r))) for pos, r in enumerate(self.rows)]

    def analyse(self) -> Tuple[str, List[_Row], Partition]:
        """``(refm, rows, partition)``: refm (given or inferred) and the consistency split."""
        rows = self.scoring_rows()
        refm = self.params["refm"]
        if refm is None:
            refm = guess_refm((r.A, r.B) for r in rows)
        return refm, rows, pair_both_orders(rows, orphans_excluded="orphans_excluded" in self.variants)

    def finalize(self) -> Report:
        report, status = self.finalize_with_consistency()
        self._last = (len(self.rows), status)
        return report

    def last_consistency(self) -> List[Optional[bool]]:
        """:meth:`consistency` as the last :meth:`finalize` found it (computed again if rows came since)."""
        last: Optional[Tuple[int, List[Optional[bool]]]] = getattr(self, "_last", None)
        if last is None or last[0] != len(self.rows):
            return self.consistency()
        return last[1]

    def finalize_with_consistency(self) -> Tuple[Report, List[Optional[bool]]]:
        """:meth:`finalize` and :meth:`consistency` from one analysis of the rows."""
        p = self.params
        refm, rows, part = self.analyse()
        diags = self.notes() + row_diagnostics(rows)
        failed = check_failures(rows, limit=p["failure_limit"], judge_column=p["judge_column"])
        counts = count_summary(len(rows), len(failed), part)
        if not part.non_em:
            diags.append("no non-EM rows: extraction rate is null and the tables are empty (the reference fails)")
        old = old_version_tables(
            part.consistent, refm=refm, float64_tables="float64_tables" in self.variants, diagnostics=diags
        )
        new = new_version_rates(
            part.consistent,
            part.inconsistent,
            refm=refm,
            macro_average="macro_average" in self.variants,
            diagnostics=diags,
        )
        lstats = length_stats(rows)
        result: "OrderedDict[str, Any]" = OrderedDict()
        result["refm"] = refm
        result["judge_column"] = p["judge_column"]
        result["nopt"] = p["nopt"]
        result["counts"] = counts
        result["old_version"] = old
        result["new_version"] = new
        result["length_stats"] = OrderedDict(
            [("unit", p["lengths"]), ("columns", ["model", "mean", "std"]), ("rows", lstats)]
        )
        metrics = table_metrics(counts, old, new, lstats)
        add_extras(result, metrics, extras=self.extras, part=part, failed=len(failed), refm=refm)
        sig = signature(
            variants=self.variants,
            params=signature_params(
                nopt=p["nopt"],
                refm=refm,
                lengths=p["lengths"],
                judge_template=p["judge_template"],
                extras=self.extras,
                judge_model=p["judge_model"],
            ),
        )
        report = Report(family=FAMILY, signature=sig, result=result, metrics=dict(metrics), diagnostics=diags)
        return report, _status(rows, part)

    def consistency(self) -> List[Optional[bool]]:
        """Per row, in input order: True consistent, False inconsistent, None not in either partition."""
        _, rows, part = self.analyse()
        return _status(rows, part)


def _status(rows: Sequence[_Row], part: Partition) -> List[Optional[bool]]:
    status: List[Optional[bool]] = [None] * len(rows)
    for r, s in zip(part.extracted, part.status):
        status[r.pos] = s
    return status


@register_accumulator
class PairwiseJudgeAccumulator(PairwiseAccumulator):
    """``pairwise judge``: the same item rows and report; ``judge_model`` is in its params."""

    COMMAND = "judge"
    #: the score metrics and the judge runner's statistics
    METRICS = JUDGE_METRICS
    INPUTS = JUDGE_INPUTS


#: Output formats of a pairwise report besides the common ones (none: the reference's files are
#: written by ``pairwise score --output-dir``), for the CLI and ``merge``.
REPORT_FORMATS: Dict[str, Callable[[Report, Any], str]] = {}


# --------------------------------------------------------------------------- file level


class PairwiseResult(NamedTuple):
    """What :func:`score` returns: the report's parts, the consistency partitions, the report."""

    signature: str
    result: Dict[str, Any]
    metrics: "OrderedDict[str, Any]"
    diagnostics: List[str]
    consistent_rows: List[Mapping[str, Any]]
    inconsistent_rows: List[Mapping[str, Any]]
    report: Report


def _numbered_item(
    numbered: Tuple[int, Mapping[str, Any]],
    *,
    judge_column: str,
    nopt: int,
    refm: Optional[str],
    variants: Sequence[str],
    length: Optional[Callable[[str], int]],
    path: Optional[str],
) -> ItemRow:
    """The item row of ``(row number, record)``: the per-item work (module-level, so workers can run it)."""
    row, record = numbered
    return _item(
        record,
        judge_column=judge_column,
        nopt=nopt,
        refm=refm,
        variants=variants,
        length=length,
        row=row,
        path=path,
    )


def _accumulate(
    acc: PairwiseAccumulator,
    records: Sequence[Mapping[str, Any]],
    *,
    lines: Optional[Sequence[int]],
    path: Optional[str],
    length: Optional[Callable[[str], int]],
    on_item: Optional[Callable[[ItemRow], None]],
) -> List[ItemRow]:
    """Score ``records`` on the current engine into ``acc``; returns the item rows (input order).

    With refm inferred, the item rows' ``model``/``win``/``tie``/``loss`` need every
    row first: the rows reach ``on_item`` after the inference (the accumulator's
    state does not hold those fields, so it takes each row as it comes).
    """
    p = acc.params
    fn = functools.partial(
        _numbered_item,
        judge_column=p["judge_column"],
        nopt=p["nopt"],
        refm=p["refm"],
        variants=acc.variants,
        length=length,
        path=path,
    )
    numbered = ((pos + 1 if lines is None else lines[pos], rec) for pos, rec in enumerate(records))
    items: List[ItemRow] = []
    deferred = p["refm"] is None
    keep = items.append

    def keep_and_pass(item: ItemRow) -> None:
        items.append(item)
        if on_item is not None:
            on_item(item)

    accumulate_items(acc, fn, numbered, on_item=keep if deferred else keep_and_pass)
    if deferred:
        inferred = guess_refm((it["A"], it["B"]) for it in items)
        for it in items:
            it.update(candidate_outcomes(it["A"], it["B"], it["choice"], inferred))
            if on_item is not None:
                on_item(it)
    return items


def score(
    records: Sequence[Mapping[str, Any]],
    *,
    nopt: int = 2,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    length_unit: str = "chars",
    failure_cnt: int = 5,
    judge_template: Optional[str] = None,
    judge_model: Optional[str] = None,
    command: str = "score",
    notes: Sequence[str] = (),
    lines: Optional[Sequence[int]] = None,
    path: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> PairwiseResult:
    """Score judge records (the reference's ``record_{judge}_{nopt}.tsv`` rows).

    ``records`` hold the 9 comparison columns and a judge column (raw judge
    text, ``EM``, or the API fail message); a row with ``exact_match`` true and
    no judge text is taken as ``EM``.  ``refm`` defaults to the one model
    present in every comparison; ``judge_column`` to the only extra column.
    ``on_item`` gets each item row (:func:`score_item`) in input order;
    ``notes`` are diagnostics that come first (e.g. from building the
    comparisons); ``lines``/``path`` locate a bad record in errors.  The item
    rows are computed on the current engine (``--jobs``, ``--engine dask``;
    ``length`` must then be picklable, e.g. :class:`TokenLength`), the report
    is the same for any engine.

    Result keys, in order: ``refm``, ``judge_column``, ``nopt``, ``counts``
    (``total`` N incl. EM, ``failed`` F, ``non_exact`` M, ``extracted`` S,
    ``extraction_rate`` S/M, ``consistent`` C, ``consistency_rate`` C/T with T
    the extracted rows), ``old_version``, ``new_version``, ``length_stats``,
    then the requested ``extras``: ``conservative_win_rate`` (FastChat rule per
    complete swapped pair), ``per_model_consistency``, ``unparseable_share``
    (rows the judge answered but whose choice could not be read, over the
    non-EM rows that are not API failures).

    Raises :class:`ScoringError` when ``failed >= failure_cnt`` (the reference
    exits), naming the failed ``cmp_index`` values, or for a malformed
    ``cmp_index``.
    """
    variants = check_variants(variants)
    extras = check_extras(extras)
    nopt = _check_nopt(nopt)
    jcol = check_record_columns(records, judge_column=judge_column)
    cls = PairwiseJudgeAccumulator if command == "judge" else PairwiseAccumulator
    acc = cls(
        nopt=nopt,
        refm=refm,
        judge_column=jcol,
        variants=variants,
        extras=extras,
        lengths=length_unit,
        failure_limit=failure_cnt,
        judge_template=template_id(judge_template),
        judge_model=judge_model,
    )
    for text in notes:
        acc.note(text)
    items = _accumulate(acc, records, lines=lines, path=path, length=length, on_item=on_item)
    report = finish(acc)
    consistent, inconsistent = consistency_partitions(records, items, acc.last_consistency())
    return PairwiseResult(
        report.signature,
        report.result,
        OrderedDict(report.metrics),
        list(report.diagnostics),
        consistent,
        inconsistent,
        report,
    )


def consistency_partitions(
    records: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]], status: Sequence[Optional[bool]]
) -> Tuple[List[Mapping[str, Any]], List[Mapping[str, Any]]]:
    """The reference's ``consistent_cmp.tsv`` and ``inconsistent_cmp.tsv`` rows.

    Each is the record with every column of the record file plus
    ``extracted`` (the item's choice), in input order; ``status`` is
    :meth:`PairwiseAccumulator.consistency`.
    """
    columns: List[str] = list(dict.fromkeys(k for rec in records for k in rec))  # first-seen order, linear
    out: Dict[bool, List[Mapping[str, Any]]] = {True: [], False: []}
    for rec, it, s in zip(records, items, status):
        if s is not None:
            row: "OrderedDict[str, Any]" = OrderedDict((k, rec.get(k)) for k in columns)
            row["extracted"] = it["choice"]
            out[s].append(row)
    return out[True], out[False]


def read_records(path: str) -> Tuple[List[int], List[Dict[str, Any]]]:
    """The rows of a judge record file and their line (or sheet row) numbers; see :func:`read_table`."""
    pairs = read_table(path)
    return [n for n, _ in pairs], [r for _, r in pairs]


def score_record_file(
    path: str,
    *,
    nopt: int,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    lengths: str = "chars",
    failure_limit: int = 5,
    judge_template: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> PairwiseResult:
    """:func:`score` on a record file (``.tsv``, ``.csv``, ``.jsonl``, ``.json``, ``.xlsx``); errors name it."""
    lines, records = read_records(path)
    if not records:
        raise ScoringError("holds no records", path=path)
    try:
        return score(
            records,
            nopt=nopt,
            refm=refm,
            judge_column=judge_column,
            variants=variants,
            extras=extras,
            length=length,
            length_unit=lengths,
            failure_cnt=failure_limit,
            judge_template=judge_template,
            lines=lines,
            path=path,
            on_item=on_item,
        )
    except ScoringError as exc:
        if exc.path is None:
            raise ScoringError(exc.msg, path=path, field=exc.field, record=exc.record) from None
        raise


def score_file(
    path: str,
    *,
    nopt: int,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    lengths: str = "chars",
    failure_limit: int = 5,
    judge_template: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``pairwise score`` command: score a judge record file into a Report.

    ``length`` counts an answer (default ``len``; ``lengths`` names its unit
    for the result and the signature, e.g. ``"tokens"`` with the tokens
    extra's cl100k counter); ``judge_template`` is the template text the
    prompts were built with (its id goes into the signature).  ``on_item``
    receives each item row (:func:`score_item`) in input order.
    """
    return score_record_file(
        path,
        nopt=nopt,
        refm=refm,
        judge_column=judge_column,
        variants=variants,
        extras=extras,
        length=length,
        lengths=lengths,
        failure_limit=failure_limit,
        judge_template=judge_template,
        on_item=on_item,
    ).report


def possible_metric_names(comparisons: Sequence[Comparison], *, refm: str, extras: Sequence[str] = ()) -> List[str]:
    """Every gateable name a report on judged ``comparisons`` can have.

    A superset: which models, tasks and rate keys the report holds depends on
    the judge's answers (only consistent rows enter the old tables), but no
    name outside this list can appear, so a ``--gate`` naming one is an error
    before any judge call.
    """
    extras = check_extras(extras)
    names = ["total", "failed", "non_exact", "extracted", "extraction_rate", "consistent", "consistency_rate"]
    models: List[str] = []
    tasks: Set[str] = set()
    keys: Set[str] = set()
    for c in comparisons:
        for m in (c.A, c.B):
            if m not in models:
                models.append(m)
        for piece in (c.task or "").split(", "):
            if piece:
                tasks.add(piece)
        metric = _metric_of(c.cmp_index.split(";")[0])
        keys.update(k for k in (f"{metric};{c.A};{c.B}", f"{metric};{c.B};{c.A}") if refm in k)
    columns = ["Overall-lang", "EN"] + sorted({t.split("-")[0] for t in tasks}) + sorted(tasks)
    others = sorted(m for m in models if m != refm)
    names += [f"{table};{m};{col}" for table in ("win+halfdraw", "win+bothgood") for m in others for col in columns]
    names += [f"{rates};{k}" for rates in ("with_tie", "without_tie") for k in sorted(keys)]
    for m in models:
        names += [f"length_mean;{m}", f"length_std;{m}"]
    if "conservative_win_rate" in extras:
        names += [f"conservative_{k};{m}" for m in others for k in ("win_rate", "win_rate_adjusted")]
    if "per_model_consistency" in extras:
        names += [f"consistency_rate;{m}" for m in others]
    if "unparseable_share" in extras:
        names.append("unparseable_share")
    return names
